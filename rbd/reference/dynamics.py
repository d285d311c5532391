"""Dynamics: RNEA, CRBA, ABA, the Coriolis matrix, energies and momentum.

Gravity enters every algorithm as an acceleration -g of the world (the root's
parent), so it needs no term of its own.  External wrenches ``fext`` are
given per body in its own frame and oppose the inertial forces.  All passes
loop over joints in Python and work on whole batches at each joint.
"""
import numpy as np

from .. import spatial
from .._checks import model_arrays
from . import joints
from .inverse_dynamics import inverse_dynamics
from .forward_dynamics import forward_dynamics
from .mass_matrix import mass_matrix
from .kinematics import (center_of_mass_of, first_moments, placements, translation,
                         velocities, world_jacobian_rows)


def _world_acceleration(model):
    """The world's fictitious acceleration [-g; 0] that carries gravity."""
    acc = np.zeros(6)
    acc[:3] = -model.gravity
    return acc


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
def _world_inertias(table, world_from_body):
    """Each body's inertia (10 numbers) about the world origin, in world axes."""
    return [spatial.inertia_act(world_from_body[i], table.inertias[i]) for i in range(table.nbodies)]


def _composite(table, per_body):
    """Sum each body's item over its subtree (items already in a common frame)."""
    out = list(per_body)
    for i in reversed(range(table.nbodies)):
        p = table.parents[i]
        if p >= 0:
            out[p] = out[p] + out[i]
    return out


def _symmetric_from_upper(M):
    """Copy the upper triangle onto the lower one: exactly symmetric."""
    M = np.triu(M)
    return M + np.swapaxes(np.triu(M, 1), -1, -2)


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
def _force_cross_matrix(h):
    """The 6x6 matrix of m -> m x* h (h fixed): its column k is force_cross(e_k, h)."""
    return np.swapaxes(spatial.force_cross(np.eye(6), h[..., None, :]), -1, -2)


def coriolis_matrix(model, q, v):
    """C(q, v) (..., nv, nv) with C v + g = nonlinear_effects and Mdot - 2C skew.

    Pinocchio's factorisation (computeCoriolisMatrix), in the world frame: per
    body, inertia Y, twist V, momentum h = Y V and
    B = ((V x*) Y - Y (V x) + (h x-bar*)) / 2, where (h x-bar*) m = m x* h, so that
    B V = V x* h.  With J_i, dJ_i = V_i x J_i the world columns of joint i and
    Yc, Bc the sums over subtrees:
        C[j, k] = J_j^T (Yc_k dJ_k + Bc_k J_k)         j ancestor of k (or k)
        C[k, j] = (Yc_k J_k)^T dJ_j + J_k^T Bc_k J_j    j strict ancestor of k.
    """
    batch, (q, v) = model_arrays(model, q=q, v=v)
    table = joints.joint_table(model)
    nb = table.nbodies
    parent_from_body, world_from_body = placements(table, q)
    twists, _ = velocities(table, parent_from_body, v)
    J = world_jacobian_rows(table, world_from_body)
    world_inertias = _world_inertias(table, world_from_body)
    dJ, B = [None] * nb, [None] * nb
    for i in range(nb):
        V = spatial.act_motion(world_from_body[i], twists[i])
        dJ[i] = spatial.motion_cross(V[..., None, :], J[i])
        Y6 = spatial.inertia10_to_matrix(world_inertias[i])
        h = spatial.inertia_apply(world_inertias[i], V)
        B[i] = 0.5 * (np.matmul(spatial.ad_star_matrix(V), Y6) - np.matmul(Y6, spatial.ad_matrix(V))
                      + _force_cross_matrix(h))
    Yc = _composite(table, world_inertias)
    Bc = _composite(table, B)
    if nb:
        J_all, dJ_all = np.concatenate(J, axis=-2), np.concatenate(dJ, axis=-2)
    C = np.zeros(batch + (table.nv, table.nv))
    for i in range(nb):
        cols = table.v_slices[i]
        support = table.support[i]
        JB = np.matmul(J[i], np.swapaxes(Bc[i], -1, -2))        # rows: Bc J_k
        F = spatial.inertia_apply(Yc[i][..., None, :], dJ[i]) + JB  # rows: Yc dJ_k + Bc J_k
        C[..., support, cols] = np.matmul(J_all[..., support, :], np.swapaxes(F, -1, -2))
        ancestors = support[:support.shape[0] - table.nv_of[i]]
        if ancestors.shape[0]:
            Ag = spatial.inertia_apply(Yc[i][..., None, :], J[i])   # rows: Yc J_k
            JtB = np.matmul(J[i], Bc[i])                           # rows: J_k^T Bc
            C[..., cols, ancestors] = (np.matmul(Ag, np.swapaxes(dJ_all[..., ancestors, :], -1, -2))
                                       + np.matmul(JtB, np.swapaxes(J_all[..., ancestors, :], -1, -2)))
    return C


# ------------------------------------------------------------------------------------------
# Energies and momentum
# ------------------------------------------------------------------------------------------
def kinetic_energy(model, q, v):
    """T = 1/2 sum_i v_i . (Y_i v_i) (...,)."""
    batch, (q, v) = model_arrays(model, q=q, v=v)
    table = joints.joint_table(model)
    parent_from_body, _ = placements(table, q, world=False)
    twists, _ = velocities(table, parent_from_body, v)
    energy = np.zeros(batch)
    for i in range(table.nbodies):
        energy = energy + np.sum(twists[i] * spatial.inertia_apply(table.inertias[i], twists[i]), axis=-1)
    return _scalar(0.5 * energy)


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
