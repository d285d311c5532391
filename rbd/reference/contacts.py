"""The contact dynamics, the contact Jacobian, the kinematic Hessian and the joint-torque
regressor of the NumPy backend: ``rbd.contacts``' compositions run on this backend's
algorithms (``rbd.reference``)."""
import sys

from .. import contacts as _composition
from .dynamics import mass_solve

# When the contact solves take M^-1 B as ABA solves of B's k columns (``mass_solve``: O(nv k)
# per sample) rather than through M^-1 (O(nv^2), but its passes vectorized over nv columns):
# measured (NumPy backend, one core) on the Panda, the quadruped, Talos and generated chains
# and trees of 40-400 dofs, k = 4-37, one sample and batches of 16 and 256:
SOLVES_MIN_DOFS = 300  # one sample: M^-1 is faster below (1.4-2.4x at 100-200 dofs; solves 0.7-0.85x at 400)
SOLVES_MAX_COLUMNS = 1.0 / 3.0  # k per dof: with more columns, M^-1 is faster (1.1-2.4x at k ~ nv / 2)


def _here():
    return sys.modules["rbd.reference"]


def contact_jacobian(model, q, contacts):
    return _composition.contact_jacobian_on(_here(), model, q, contacts)


def inverse_mass_times(model, q, B):
    """M^-1 B (..., nv, k) for the contact solves (``rbd.contacts._solve_contacts``): by ABA
    solves where they cost less, else through ``inverse_mass_matrix`` (always for a model
    with mimic joints: its coupled G^T M G has no ABA)."""
    nv, k = model.nv, B.shape[-1]
    batched = B.ndim > 2
    if getattr(model, "_full", None) is None and k <= SOLVES_MAX_COLUMNS * nv and (batched or nv >= SOLVES_MIN_DOFS):
        return mass_solve(model, q, B)
    return _here().inverse_mass_matrix(model, q) @ B


def constrained_dynamics(model, q, v, tau, contacts, fext=None, regularization=0.0):
    return _composition.constrained_dynamics_on(_here(), model, q, v, tau, contacts, fext, regularization)


def impulse_dynamics(model, q, v, contacts, restitution=0.0, regularization=0.0):
    return _composition.impulse_dynamics_on(_here(), model, q, v, contacts, restitution, regularization)


def kinematic_hessian(model, q, frame, reference="local"):
    return _composition.kinematic_hessian_on(_here(), model, q, frame, reference)


def joint_torque_regressor(model, q, v, a):
    return _composition.joint_torque_regressor_on(_here(), model, q, v, a)

