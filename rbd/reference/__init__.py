"""rbd.reference: the pure-NumPy implementation of every algorithm of the API.

It needs nothing but NumPy and is what ``rbd`` runs when ``rbd_c`` is not built;
both backends are tested against independent oracles (``tests/oracles``) and
against each other.  Every
function takes leading batch dimensions on its state arguments and is
vectorized over them (Python loops run over joints, never over samples).

Modules: ``joints`` (every joint kind: placement, motion subspace, configuration
space), ``configuration``,
``kinematics`` (frames, center of mass), ``dynamics`` (the public dynamics
functions and their passes: RNEA, CRBA, ABA, Coriolis, energies, momentum),
``derivatives`` (RNEA and ABA derivatives, the inverse mass matrix), ``contacts``
(the contact dynamics, the kinematic Hessian and the regressor, ``rbd.contacts``'
compositions on these algorithms), all
on scalar components (Python floats for one sample, rows over the samples for a
batch; the shared formulas, forward pass and batch driver are in
``_components``).  The names match the compiled backend's modules
(``rbd_c/_configuration``, ``_kinematics``, ``_dynamics``, ``_joints``).
"""
from .configuration import (difference, difference_jacobians, integrate, integrate_jacobians, neutral, normalize,
                            random_configuration)
from .derivatives import aba_derivatives, inverse_mass_matrix, rnea_derivatives
from .dynamics import (aba, centroidal_momentum, centroidal_momentum_matrix,
                       centroidal_momentum_matrix_time_variation, coriolis_matrix, crba, gravity, kinetic_energy,
                       nonlinear_effects, potential_energy, rnea)
from .contacts import (constrained_dynamics, contact_jacobian, impulse_dynamics, joint_torque_regressor,
                       kinematic_hessian)
from .kinematics import (REFERENCES, center_of_mass, com_jacobian, forward_kinematics, frame_acceleration,
                         frame_acceleration_derivatives, frame_jacobian, frame_jacobian_time_derivative,
                         frame_placement, frame_placements, frame_velocity, frame_velocity_derivatives)

import inspect as _inspect

from .._names import ALGORITHMS, COMPOSED
from .. import _checks, _coupled


def _public(name, function):
    """``function`` as the public algorithm: on a model with mimic joints through
    rbd._coupled, and with ``out=`` (the result written into given arrays)."""
    import sys

    def algorithm(model, *args, out=None, **kwargs):
        if getattr(model, "_full", None) is None:
            result = function(model, *args, **kwargs)
        else:
            result = _coupled.call(sys.modules[__name__], name, model, args, kwargs)
        if out is None:
            return result
        return _checks.write_out(result, out, list(zip(_STATE_NAMES.get(name, ()), args)))
    algorithm.__name__, algorithm.__doc__, algorithm.__wrapped__ = name, function.__doc__, function
    return algorithm


#: the state arguments of each algorithm, by position after the model (for out='s overlap check)
_STATE_NAMES = {name: tuple(_inspect.signature(globals()[name]).parameters)[1:] for name in ALGORITHMS}

for _name in ALGORITHMS:
    globals()[_name] = _public(_name, globals()[_name])

__all__ = list(ALGORITHMS) + list(COMPOSED) + ["REFERENCES"]
