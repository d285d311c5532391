"""Dynamics: RNEA, CRBA, ABA, the Coriolis matrix, energies and momentum.

Gravity enters every algorithm as an acceleration -g of the world (the root's
parent), so it needs no term of its own.  External wrenches ``fext`` are
given per body in its own frame and oppose the inertial forces.  All passes
loop over joints in Python and work on whole batches at each joint.

RNEA, CRBA, ABA, the Coriolis matrix and the kinetic energy are written on
scalar components (``_components``: Python floats for one sample, rows of a
batch block otherwise); the rest works on small arrays per body.
"""
import numpy as np

from .. import spatial
from .._checks import model_arrays
from . import _components, joints
from .coriolis import coriolis
from .forward_dynamics import forward_dynamics
from .inverse_dynamics import inverse_dynamics
from .kinematics import center_of_mass_of, first_moments, placements, translation, velocities
from .mass_matrix import mass_matrix


def _scalar(x):
    """A batch of scalars, or a Python float for a single sample."""
    return float(x) if np.ndim(x) == 0 else x


# ------------------------------------------------------------------------------------------
# Inverse dynamics
# ------------------------------------------------------------------------------------------
def rnea(model, q, v, a, fext=None):
    """Inverse dynamics: the joint forces tau (..., nv) that give accelerations a.

    ``fext`` (..., nbodies, 6): wrench [f; tau] on each body, in its frame."""
    return inverse_dynamics(model, q, v, a, fext)


def gravity(model, q):
    """Generalized gravity g(q) = rnea(q, 0, 0), shape (..., nv)."""
    return inverse_dynamics(model, q, None, None, None)


def nonlinear_effects(model, q, v):
    """C(q, v) v + g(q) = rnea(q, v, 0), shape (..., nv)."""
    return inverse_dynamics(model, q, v, None, None)


# ------------------------------------------------------------------------------------------
# Mass matrix
# ------------------------------------------------------------------------------------------
def crba(model, q):
    """The joint-space mass matrix M(q) (..., nv, nv), full and exactly symmetric
    (composite-rigid-body algorithm in body frames, on scalar components)."""
    return mass_matrix(model, q)


# ------------------------------------------------------------------------------------------
# Forward dynamics
# ------------------------------------------------------------------------------------------
def aba(model, q, v, tau, fext=None):
    """Forward dynamics: the accelerations (..., nv) under joint forces tau
    (articulated-body algorithm in body frames, on scalar components).

    ``fext`` (..., nbodies, 6): wrench [f; tau] on each body, in its frame."""
    return forward_dynamics(model, q, v, tau, fext)


# ------------------------------------------------------------------------------------------
# Coriolis matrix
# ------------------------------------------------------------------------------------------
def coriolis_matrix(model, q, v):
    """C(q, v) (..., nv, nv) with C v + g = nonlinear_effects and Mdot - 2C skew
    (Pinocchio's factorisation, in body frames, on scalar components)."""
    return coriolis(model, q, v)


# ------------------------------------------------------------------------------------------
# Energies and momentum
# ------------------------------------------------------------------------------------------
def _kinetic_energy_passes(bodies, q, v, trig):
    _, twists, _ = _components.kinematics(bodies, q, v, trig)
    energy = 0.0
    for body, twist in zip(bodies, twists):
        energy = energy + _components.dot(twist, _components.inertia_apply(body.inertia, twist))
    return [0.5 * energy]


def kinetic_energy(model, q, v):
    """T = 1/2 sum_i v_i . (Y_i v_i) (...,), from the body twists of the
    forward pass (on scalar components)."""
    batch, arrays = model_arrays(model, q=q, v=v)
    bodies = _components.constants(model)
    return _scalar(_components.evaluate(lambda *args: _kinetic_energy_passes(bodies, *args), batch, arrays, ()))


def potential_energy(model, q):
    """U = -sum_i m_i g . c_i (...,), c_i the world center of mass of body i
    (Pinocchio's computePotentialEnergy; zero at the world origin)."""
    batch, (q,) = model_arrays(model, q=q)
    table = joints.joint_table(model)
    _, world_from_body = placements(table, q)
    moment = np.zeros(batch + (3,))
    for m_c in first_moments(table, world_from_body):
        moment = moment + m_c
    return _scalar(-np.matmul(moment, model.gravity))


def centroidal_momentum(model, q, v):
    """[linear; angular about the center of mass] momentum, world axes, (..., 6)."""
    batch, (q, v) = model_arrays(model, q=q, v=v)
    table = joints.joint_table(model)
    parent_from_body, world_from_body = placements(table, q)
    twists, _ = velocities(table, parent_from_body, v)
    momentum = np.zeros(batch + (6,))  # about the world origin
    for i in range(table.nbodies):
        momentum = momentum + spatial.act_force(world_from_body[i],
                                                spatial.inertia_apply(table.inertias[i], twists[i]))
    com = center_of_mass_of(table, world_from_body, batch)
    # the same momentum about the com: moved with a pure translation to it
    return spatial.inv_act_force(translation(com), momentum)
