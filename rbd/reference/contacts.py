"""The contact dynamics, the contact Jacobian, the kinematic Hessian and the joint-torque
regressor of the NumPy backend: ``rbd.contacts``' compositions run on this backend's
algorithms (``rbd.reference``)."""
import sys

from .. import contacts as _composition


def _here():
    return sys.modules["rbd.reference"]


def contact_jacobian(model, q, contacts):
    return _composition.contact_jacobian_on(_here(), model, q, contacts)


def constrained_dynamics(model, q, v, tau, contacts, fext=None, regularization=0.0):
    return _composition.constrained_dynamics_on(_here(), model, q, v, tau, contacts, fext, regularization)


def impulse_dynamics(model, q, v, contacts, restitution=0.0, regularization=0.0):
    return _composition.impulse_dynamics_on(_here(), model, q, v, contacts, restitution, regularization)


def kinematic_hessian(model, q, frame, reference="local"):
    return _composition.kinematic_hessian_on(_here(), model, q, frame, reference)


def joint_torque_regressor(model, q, v, a):
    return _composition.joint_torque_regressor_on(_here(), model, q, v, a)

