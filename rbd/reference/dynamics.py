"""Dynamics: RNEA, CRBA, ABA, the Coriolis matrix, energies and momentum.

Gravity enters every algorithm as an acceleration -g of the world (the root's
parent), so it needs no term of its own.  External wrenches ``fext`` are
given per body in its own frame and oppose the inertial forces.  All passes
loop over joints in Python and work on whole batches at each joint.

Every algorithm is written on scalar components (``_components``: Python
floats for one sample, rows of a batch block otherwise).
"""
import numpy as np

from .._checks import model_arrays
from . import _components
from .coriolis import coriolis
from .forward_dynamics import forward_dynamics
from .inverse_dynamics import inverse_dynamics
from .kinematics import check_mass, subtree_first_moments
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
    return inverse_dynamics(model, q, None, None, None, zero=("v", "a"))


def nonlinear_effects(model, q, v):
    """C(q, v) v + g(q) = rnea(q, v, 0), shape (..., nv)."""
    return inverse_dynamics(model, q, v, None, None, zero=("a",))


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


def _potential_energy_passes(bodies, gravity, q, trig):
    placements, _, _ = _components.kinematics(bodies, q, None, trig)
    _, h = subtree_first_moments(bodies, placements)
    return [-(h[0] * gravity[0] + h[1] * gravity[1] + h[2] * gravity[2])]


def potential_energy(model, q):
    """U = -sum_i m_i g . c_i = -g . h (...,), h the model's world first moment of
    mass from the backward pass of ``kinematics.subtree_first_moments``
    (Pinocchio's computePotentialEnergy; zero at the world origin)."""
    batch, arrays = model_arrays(model, q=q)
    bodies = _components.constants(model)
    gravity = model.gravity.tolist()
    return _scalar(_components.evaluate(lambda *args: _potential_energy_passes(bodies, gravity, *args),
                                        batch, arrays, ()))


def _centroidal_momentum_passes(bodies, mass, q, v, trig):
    """Forward: the body twists.  Backward: each subtree's momentum (about its root's
    origin, in its axes) and first moment of mass, moved to the parent with X_i*;
    the roots' sum is the momentum about the world origin, [p; L_0], and the
    center of mass c = h / m.  About c: [p; L_0 - c x p]."""
    placements, twists, _ = _components.kinematics(bodies, q, v, trig)
    moments, h = subtree_first_moments(bodies, placements)
    momenta = [_components.inertia_apply(body.inertia, twist) for body, twist in zip(bodies, twists)]
    total = (0.0,) * 6
    for i in range(len(bodies) - 1, -1, -1):  # children (higher indices) are complete first
        parent = bodies[i].parent
        moved = _components.act_force(*placements[i], momenta[i])
        if parent < 0:
            total = _components.add(total, moved)
        else:
            momenta[parent] = _components.add(momenta[parent], moved)
    p0, p1, p2, n0, n1, n2 = total
    c0, c1, c2 = h[0] / mass, h[1] / mass, h[2] / mass
    return [p0, p1, p2, n0 - (c1 * p2 - c2 * p1), n1 - (c2 * p0 - c0 * p2), n2 - (c0 * p1 - c1 * p0)]


def centroidal_momentum(model, q, v):
    """[linear; angular about the center of mass] momentum, world axes, (..., 6)
    (on scalar components)."""
    mass = check_mass(model)
    batch, arrays = model_arrays(model, q=q, v=v)
    bodies = _components.constants(model)
    return _components.evaluate(lambda *args: _centroidal_momentum_passes(bodies, mass, *args),
                                batch, arrays, (6,))
