"""rbd_c: the compiled (Cython) backend of rbd.

It mirrors ``rbd.spatial`` and the algorithms of ``rbd.reference`` under the
same names and signatures.  Importing it raises ImportError when the extension
modules were not built, which is how ``rbd`` falls back to NumPy.
"""
import os as _os
import sys as _sys

from . import _cpu  # (ImportError here means "not built")


def _choose_build():
    """Which copy of the modules to import: "x86-64-v3" (AVX2, FMA; setup.py compiles it on
    x86-64 with gcc) when the CPU runs it and it was built, else "baseline".  RBD_CPU=baseline
    forces the baseline (the two round the last bits differently: FMA)."""
    forced = _os.environ.get("RBD_CPU", "").strip().lower()
    if forced not in ("", "auto", "baseline", "x86-64-v3"):  # (a typo must not pass silently)
        raise ValueError("RBD_CPU must be 'auto', 'baseline' or 'x86-64-v3', got %r" % forced)
    v3 = _os.path.join(_os.path.dirname(_os.path.abspath(__file__)), "_v3")
    built = _os.path.isdir(v3) and any(f.startswith("_spatial.") for f in _os.listdir(v3))
    if forced == "baseline" or not built or not _cpu.x86_64_v3():
        if forced == "x86-64-v3":
            raise RuntimeError("RBD_CPU=x86-64-v3, but %s" % (
                "this CPU does not run it" if built else "rbd_c's x86-64-v3 copy was not built"))
        return "baseline"
    __path__.insert(0, v3)  # rbd_c._dynamics etc. are found there first
    return "x86-64-v3"


#: the copy of the compiled modules in use: "x86-64-v3" or "baseline" (see _choose_build)
build = _choose_build()

from ._spatial import *  # noqa: F401,F403,E402

# The algorithms (same names and signatures as rbd.reference), and the batch thread count.
from ._model import set_num_threads, get_num_threads, have_openmp, MAX_THREADS, set_simd, release_memory  # noqa: F401,E402
from ._configuration import (  # noqa: F401,E402
    neutral, integrate, difference, normalize, integrate_jacobians, difference_jacobians,
)
from ._kinematics import (  # noqa: F401,E402
    forward_kinematics, frame_placement, frame_placements, frame_velocity, frame_acceleration, frame_jacobian,
    frame_jacobian_time_derivative, center_of_mass, com_jacobian, frame_velocity_derivatives,
    frame_acceleration_derivatives,
)
from ._dynamics import (  # noqa: F401,E402
    rnea, gravity, nonlinear_effects, crba, aba, coriolis_matrix, kinetic_energy,
    potential_energy, centroidal_momentum, centroidal_momentum_matrix,
    centroidal_momentum_matrix_time_variation, simd,
)
from ._derivatives import (  # noqa: F401,E402
    rnea_derivatives, aba_derivatives, inverse_mass_matrix,
)
from . import _contacts, _kinematics  # noqa: E402


# The contact dynamics, the contact Jacobian, the kinematic Hessian and the regressor: the
# kernels (rbd_c._contacts, _kinematics), and on a model with mimic joints rbd.contacts'
# compositions on this backend's algorithms (which take such models).
_THIS = _sys.modules[__name__]


def _composition_for(model):
    """rbd.contacts when ``model`` has mimic joints (imported on use, as above), else None."""
    if getattr(model, "_full", None) is None:
        return None
    import rbd.contacts
    return rbd.contacts


def contact_jacobian(model, q, contacts):
    composed = _composition_for(model)
    if composed:
        return composed.contact_jacobian_on(_THIS, model, q, contacts)
    return _contacts.contact_jacobian(model, q, contacts)


def constrained_dynamics(model, q, v, tau, contacts, fext=None, regularization=0.0):
    composed = _composition_for(model)
    if composed:
        return composed.constrained_dynamics_on(_THIS, model, q, v, tau, contacts, fext, regularization)
    return _contacts.constrained_dynamics(model, q, v, tau, contacts, fext, regularization)


def impulse_dynamics(model, q, v, contacts, restitution=0.0, regularization=0.0):
    composed = _composition_for(model)
    if composed:
        return composed.impulse_dynamics_on(_THIS, model, q, v, contacts, restitution, regularization)
    return _contacts.impulse_dynamics(model, q, v, contacts, restitution, regularization)


def kinematic_hessian(model, q, frame, reference="local"):
    composed = _composition_for(model)
    if composed:
        return composed.kinematic_hessian_on(_THIS, model, q, frame, reference)
    return _kinematics.kinematic_hessian(model, q, frame, reference)


def joint_torque_regressor(model, q, v, a):
    composed = _composition_for(model)
    if composed:
        return composed.joint_torque_regressor_on(_THIS, model, q, v, a)
    return _contacts.joint_torque_regressor(model, q, v, a)


def random_configuration(model, rng=None, batch=None, *, out=None):
    """The reference's sampler (sampling is NumPy's: nothing to compile)."""
    # Imported on use: rbd_c must not import rbd while it initialises (rbd would
    # then bind a half-built compiled backend).
    from rbd.reference import random_configuration as sample
    return sample(model, rng, batch, out=out)
