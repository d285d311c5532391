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
``derivatives`` (RNEA and ABA derivatives, the inverse mass matrix), all
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
from .kinematics import (REFERENCES, center_of_mass, com_jacobian, forward_kinematics, frame_acceleration,
                         frame_acceleration_derivatives, frame_jacobian, frame_jacobian_time_derivative,
                         frame_placement, frame_placements, frame_velocity, frame_velocity_derivatives)

from .._names import ALGORITHMS
from .. import _coupled


def _with_couplings(name, function):
    """``function``, and on a model with mimic joints the same through rbd._coupled."""
    import sys

    def algorithm(model, *args, **kwargs):
        if getattr(model, "_full", None) is None:
            return function(model, *args, **kwargs)
        return _coupled.call(sys.modules[__name__], name, model, args, kwargs)
    algorithm.__name__, algorithm.__doc__, algorithm.__wrapped__ = name, function.__doc__, function
    return algorithm


for _name in ALGORITHMS:
    globals()[_name] = _with_couplings(_name, globals()[_name])

__all__ = list(ALGORITHMS) + ["REFERENCES"]
