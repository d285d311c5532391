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
from .contacts import (constrained_dynamics, contact_jacobian, impulse_dynamics, inverse_mass_times,
                       joint_torque_regressor, kinematic_hessian)
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
        states = _STATE_NAMES.get(name, ())
        inputs = list(zip(states, args)) + [(key, value) for key, value in kwargs.items() if key in states]
        return _checks.write_out(result, out, inputs)
    algorithm.__name__ = algorithm.__qualname__ = name  # (what a TypeError about its arguments names)
    algorithm.__doc__, algorithm.__wrapped__ = function.__doc__, function
    parameters = list(_inspect.signature(function).parameters.values())
    algorithm.__signature__ = _inspect.Signature(  # the function's, with out= (as rbd_c's)
        parameters + [_inspect.Parameter("out", _inspect.Parameter.KEYWORD_ONLY, default=None)])
    return algorithm


def _out_of_memory(name, model, named, inner, detail):
    """The MemoryError of the call ``name`` on ``model`` with the arguments ``named`` ((name,
    value) pairs): Python's own is empty (a list that cannot grow) and NumPy's names an
    array, neither the call nor the model.  ``inner``: the call inside this one that ran
    out, ``detail``: what the first error said."""
    error = MemoryError("%s on a model of %s bodies and %s dofs%s ran out of memory (NumPy backend%s%s)"
                        % (name, getattr(model, "nbodies", "?"), getattr(model, "nv", "?"), _checks.batch_words(named),
                           ", in %s" % inner if inner and inner != name else "", ": " + detail if detail else ""))
    error.call, error.detail = name, detail
    return error


def _naming_memory_errors(name, function):
    """``function`` whose MemoryError says which call on which model (the one place for every
    function of this backend, as each of the compiled backend's says what it needed)."""
    names = tuple(_inspect.signature(function).parameters)[1:]

    def call(model, *args, **kwargs):
        try:
            return function(model, *args, **kwargs)
        except MemoryError as exc:  # (its words kept, not it: its traceback holds the call's memory)
            inner, detail = getattr(exc, "call", None), getattr(exc, "detail", str(exc))
        raise _out_of_memory(name, model, list(zip(names, args)) + list(kwargs.items()), inner, detail)
    call.__name__ = call.__qualname__ = name  # (as ``_public``'s)
    call.__doc__ = function.__doc__
    call.__wrapped__ = function  # (inspect.signature finds out= on _public's)
    return call


#: the state arguments of each algorithm, by position after the model (for out='s overlap check)
_STATE_NAMES = {name: tuple(_inspect.signature(globals()[name]).parameters)[1:] for name in ALGORITHMS}

for _name in ALGORITHMS:
    globals()[_name] = _naming_memory_errors(_name, _public(_name, globals()[_name]))
for _name in COMPOSED:
    globals()[_name] = _naming_memory_errors(_name, globals()[_name])

__all__ = list(ALGORITHMS) + list(COMPOSED) + ["REFERENCES"]
