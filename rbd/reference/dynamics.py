"""Dynamics: RNEA, CRBA, ABA, the Coriolis matrix, energies and momentum.

Gravity enters every algorithm as an acceleration -g of the world (the root's
parent), so it needs no term of its own.  External wrenches ``fext`` are
given per body in its own frame and oppose the inertial forces.  All passes
loop over joints in Python and work on whole batches at each joint.

Every algorithm is written on scalar components (``_components``: Python
floats for one sample, rows of a batch block otherwise).
"""
import math

import numpy as np

from .._checks import model_arrays, singular_joint_error, singular_tolerance
from . import _components as sc  # spatial algebra on scalar components
from . import joints
from .kinematics import check_mass, subtree_first_moments


# ------------------------------------------------------------------------------------------
# RNEA passes (on scalar components)
# ------------------------------------------------------------------------------------------
# Motions go down the tree with the inverse action of each parent-from-child
# transform, forces come back up with its force action; the velocity-product
# force is the cheap ``v x* (Y v)``.
def _rnea_passes(bodies, gravity, q, v, a, fext, trig):
    """tau as a list of components; v, a, fext may be None (zero).

    Forward: body accelerations a_i = X_i^-1 a_parent + S a_j + v_i x (S v_j)
    (the world's acceleration is -g) and forces f_i = Y_i a_i + v_i x* (Y_i v_i) - fext_i.
    Backward: tau_i = S^T f_i, f_parent += X_i* f_i."""
    n = len(bodies)
    placements, twists, joint_twists = sc.kinematics(bodies, q, v, trig)
    accs, forces = [None] * n, [None] * n
    world_acc = (-gravity[0], -gravity[1], -gravity[2], 0.0, 0.0, 0.0)
    for i, body in enumerate(bodies):
        R, p = placements[i]
        parent = body.parent
        parent_acc = world_acc if parent < 0 else accs[parent]
        acc = sc.inv_act_motion(R, p, parent_acc)
        if a is not None:
            acc = joints.add_joint_motion(acc, body, a)
        if v is not None:
            acc = sc.add(acc, sc.motion_cross(twists[i], joint_twists[i]))  # S is constant in the body frame
            f = sc.add(sc.inertia_apply(body.inertia, acc), sc.bias_force(body.inertia, twists[i]))
        else:
            f = sc.inertia_apply(body.inertia, acc)
        accs[i] = acc
        forces[i] = f if fext is None else sc.sub(f, fext[i])
    tau = [None] * n
    for i in range(n - 1, -1, -1):
        body = bodies[i]
        tau[i] = joints.joint_force(body, forces[i])
        if a is not None and any(body.armature):
            tau[i] = [t + r * a[body.v0 + k] for k, (t, r) in enumerate(zip(tau[i], body.armature))]
        if body.parent >= 0:
            R, p = placements[i]
            forces[body.parent] = sc.add(forces[body.parent], sc.act_force(R, p, forces[i]))
    return [x for joint in tau for x in joint]


def inverse_dynamics(model, q, v, a, fext, zero=()):
    """tau (..., nv) for arrays to validate; fext, and the names in ``zero``
    (``"v"``, ``"a"``), may be None for zero."""
    batch, arrays = model_arrays(model, optional=("fext",) + tuple(zero), q=q, v=v, a=a, fext=fext)
    bodies = sc.constants(model)
    gravity = model.gravity.tolist()
    return sc.evaluate(lambda *args: _rnea_passes(bodies, gravity, *args), batch, arrays, (model.nv,))


# ------------------------------------------------------------------------------------------
# CRBA passes (on scalar components)
# ------------------------------------------------------------------------------------------
def _crba_passes(bodies, nv, q, trig):
    """The nv x nv components of M(q), row-major.

    Composite-rigid-body algorithm in body frames (Featherstone; Pinocchio's
    crba).  Backward over the bodies, with Yc_i the composite inertia of the
    subtree of body i (10 components, body i's frame):
      F = Yc_i S_i  (the forces that the joint's unit motions need),
      carried up the support with F <- X_j* F, giving M[j, i] = S_j^T F
      for body i and each ancestor j (and M[i, j] = M[j, i]);
      Yc_parent += X_i* Yc_i X_i^-1."""
    placements, _, _ = sc.kinematics(bodies, q, None, trig)
    composite = [body.inertia for body in bodies]
    M = sc.output(nv * nv, q)
    for i in range(len(bodies) - 1, -1, -1):
        body = bodies[i]
        F = sc.sym6_columns(sc.sym6_from_inertia(composite[i]), body)
        j = i
        while True:
            ancestor = bodies[j]
            for col, f in enumerate(F):
                k = body.v0 + col
                for row, x in enumerate(joints.joint_force(ancestor, f), ancestor.v0):
                    M[row * nv + k] = M[k * nv + row] = x
            if ancestor.parent < 0:
                break
            R, p = placements[j]
            F = [sc.act_force(R, p, f) for f in F]
            j = ancestor.parent
        if body.parent >= 0:
            R, p = placements[i]
            composite[body.parent] = sc.add_all(composite[body.parent], sc.inertia_act(R, p, composite[i]))
    add_armature(M, bodies, nv)
    return M


def add_armature(M, bodies, nv, start=0):
    """M += diag(armature), on the nv x nv components of a mass matrix (from ``start`` in M)."""
    for body in bodies:
        for k, r in enumerate(body.armature, body.v0):
            if r:
                M[start + k * nv + k] = M[start + k * nv + k] + r


def mass_matrix(model, q):
    """M(q) (..., nv, nv) for a configuration to validate."""
    batch, arrays = model_arrays(model, q=q)
    bodies, nv = sc.constants(model), model.nv
    return sc.evaluate(lambda *args: _crba_passes(bodies, nv, *args), batch, arrays, (nv, nv))


# ------------------------------------------------------------------------------------------
# ABA passes (on scalar components)
# ------------------------------------------------------------------------------------------
class _Singular(Exception):
    """Raised inside the passes at the first singular joint (body index in args[0])."""


def joint_factors(articulated, body, tol, i):
    """(U, L, W, inv_d) of a body's articulated inertia IA: U = IA S, D = S^T U =
    L diag(d) L^T, W = U L^-T (so U D^-1 U^T = W diag(inv_d) W^T); _Singular(i)
    when a pivot is at most ``tol``."""
    U = sc.sym6_columns(articulated, body)
    D = [joints.joint_force(body, column) for column in U]  # S^T IA S, row by row (symmetric)
    if any(body.armature):
        D = [[x + r if k == row else x for k, x in enumerate(line)] for row, (line, r) in enumerate(zip(D, body.armature))]
    try:
        L, d = sc.ldl(D, tol)
    except sc.SingularPivot:
        raise _Singular(i) from None
    W = U if body.nv == 1 else list(zip(*[sc.forward_substitute(L, [col[r] for col in U]) for r in range(6)]))
    return U, L, W, [1.0 / x for x in d]


def evaluate_dynamics(model, passes, batch, arrays, out_shape):
    """``sc.evaluate`` of passes that may find a singular joint; the error then names the
    joint of the batch's first singular sample, as a loop over the samples would (the
    passes of a batch stop at the first joint, in their order, singular in any sample):
    the failing range is halved until one sample is left, about one more batch's work."""
    try:
        return sc.evaluate(passes, batch, arrays, out_shape)
    except _Singular as exc:
        body = exc.args[0]
    n = math.prod(batch)
    flat = [None if x is None else x.reshape((n,) + x.shape[len(batch):]) for x in arrays]
    lo, hi = 0, n  # the first singular sample is in [lo, hi); body is from a failing range whose
    while hi - lo > 1:  # singular samples are all in [lo, hi): at the end, that sample's
        mid = (lo + hi) // 2
        try:
            sc.evaluate(passes, (mid - lo,), [None if x is None else x[lo:mid] for x in flat], out_shape)
            lo = mid
        except _Singular as exc:
            hi, body = mid, exc.args[0]
        except ValueError:  # (overflow, found after the passes: none of [lo, mid) is singular)
            lo = mid
    raise singular_joint_error(model, body, flat[0][lo], np.unravel_index(lo, batch) if batch else None)


def solve_joint(L, inv_d, t):
    """D^-1 t for D = L diag(d) L^T."""
    return sc.back_substitute(L, [z * s for z, s in zip(sc.forward_substitute(L, t), inv_d)])


def _aba_passes(bodies, gravity, tol, q, v, tau, fext, trig):
    """The nv components of q_ddot; v and fext may be None (zero).

    Articulated-body algorithm in body frames (Featherstone; Pinocchio's aba).
    1. Forward: placements, twists v_i, the velocity-product acceleration
       c_i = v_i x (S v_j), and the bias force pA_i = v_i x* (Y_i v_i) - fext_i;
       the articulated inertia IA_i starts as Y_i (symmetric 6x6, 21 components).
    2. Backward: U = IA_i S, D = S^T U = L diag(d) L^T, u = tau_i - S^T pA_i;
       then the parent gets what the subtree passes through the joint:
       Ia = IA_i - U D^-1 U^T,  pa = pA_i + Ia c_i + U D^-1 u,
       IA_parent += X_i* Ia X_i^-1,  pA_parent += X_i* pa.
    3. Forward (the world accelerates by -g): a_i = X_i^-1 a_parent + c_i,
       q_ddot_j = D^-1 (u - U^T a_i),  a_i += S q_ddot_j.
    With W = U L^-T and z = L^-1 u, U D^-1 U^T = W diag(1/d) W^T,
    U D^-1 u = W (z / d) and D^-1 (u - U^T a) = L^-T ((z - W^T a) / d): the
    multi-DoF joints need no inverse, the 1-DoF ones (L empty) reduce to
    scalars."""
    n = len(bodies)
    placements, twists, joint_twists = sc.kinematics(bodies, q, v, trig)
    articulated, bias, coriolis = [None] * n, [None] * n, [None] * n
    for i, body in enumerate(bodies):
        articulated[i] = sc.sym6_from_inertia(body.inertia)
        bias[i] = (0.0,) * 6 if v is None else sc.bias_force(body.inertia, twists[i])
        if fext is not None:
            bias[i] = sc.sub(bias[i], fext[i])
        if v is not None:
            coriolis[i] = sc.motion_cross(twists[i], joint_twists[i])  # S is constant in the body frame

    factors = [None] * n
    for i in range(n - 1, -1, -1):
        body = bodies[i]
        U, L, W, inv_d = joint_factors(articulated[i], body, tol[i], i)
        u = [tau[body.v0 + k] - x for k, x in enumerate(joints.joint_force(body, bias[i]))]
        z = sc.forward_substitute(L, u)
        factors[i] = L, W, z, inv_d
        if body.parent >= 0:
            Ia = sc.sym6_subtract_outer(articulated[i], W, inv_d)
            pa = bias[i] if v is None else sc.add(bias[i], sc.sym6_apply(Ia, coriolis[i]))
            for w, zk, s in zip(W, z, inv_d):
                t = zk * s
                pa = (pa[0] + w[0] * t, pa[1] + w[1] * t, pa[2] + w[2] * t,
                      pa[3] + w[3] * t, pa[4] + w[4] * t, pa[5] + w[5] * t)
            R, p = placements[i]
            articulated[body.parent] = sc.add_all(articulated[body.parent], sc.sym6_act(R, p, Ia))
            bias[body.parent] = sc.add(bias[body.parent], sc.act_force(R, p, pa))

    qdd = [None] * (sum(body.nv for body in bodies))
    accs = [None] * n
    world_acc = (-gravity[0], -gravity[1], -gravity[2], 0.0, 0.0, 0.0)
    for i, body in enumerate(bodies):
        R, p = placements[i]
        acc = sc.inv_act_motion(R, p, world_acc if body.parent < 0 else accs[body.parent])
        if v is not None:
            acc = sc.add(acc, coriolis[i])
        L, W, z, inv_d = factors[i]
        y = [(zk - sc.dot(w, acc)) * s for w, zk, s in zip(W, z, inv_d)]
        qdd[body.v0:body.v0 + body.nv] = sc.back_substitute(L, y)
        accs[i] = joints.add_joint_motion(acc, body, qdd)
    return qdd


def forward_dynamics(model, q, v, tau, fext):
    """q_ddot (..., nv) for arrays to validate (fext may be None)."""
    batch, arrays = model_arrays(model, q=q, v=v, tau=tau, fext=fext)
    bodies = sc.constants(model)
    gravity = model.gravity.tolist()
    tol = singular_tolerance(model).tolist()
    return evaluate_dynamics(model, lambda *args: _aba_passes(bodies, gravity, tol, *args), batch, arrays,
                             (model.nv,))


def mass_solve(model, q, B):
    """M(q)^-1 B (..., nv, k) for a validated q (..., nq) and B (..., nv, k): the ABA with
    v = 0 and no gravity on B's k columns as joint forces, the columns run as k samples
    of one batch (their components rows of k; the articulated inertias, which depend on
    q only, are computed once): O(n k) work and memory, where M^-1 is O(n^2)."""
    batch = np.broadcast_shapes(q.shape[:-1], B.shape[:-2])
    nv, k = model.nv, B.shape[-1]
    q, B = np.broadcast_to(q, batch + q.shape[-1:]), np.broadcast_to(B, batch + B.shape[-2:])
    bodies = sc.constants(model)
    tol = singular_tolerance(model).tolist()

    def passes(q, B, trig):
        tau = [np.asarray(row, dtype=float) for row in B]  # per dof, a row over the columns (and samples)
        qdd = _aba_passes(bodies, (0.0, 0.0, 0.0), tol, q, None, tau, None, trig)
        return np.stack(qdd) if qdd else np.zeros((0, k) + sc.lanes(q))
    return evaluate_dynamics(model, passes, batch, (q, B), (nv, k))


# ------------------------------------------------------------------------------------------
# The Coriolis matrix passes (on scalar components)
# ------------------------------------------------------------------------------------------
def _coriolis_passes(bodies, nv, q, v, trig):
    """The nv x nv components of C(q, v), row-major.

    Pinocchio's factorisation (computeCoriolisMatrix), in body frames.  Per
    body, with inertia Y, twist V and momentum h = Y V,
    2 B = (V x*) Y - Y (V x) + (h x-bar*), where (h x-bar*) m = m x* h: a
    symmetric part (``velocity_variation``, in an inertia's 10-component form)
    and a skew one; both move between frames like Y and h, so the composites of a
    subtree come up the tree as 10 + 10 + 6 components.  With S_k the joint's
    motion subspace and dJ_k = V_k x S_k (frame k), backward over k:
      F = Yc_k dJ_k + Bc_k S_k,  G1 = Yc_k S_k,  G2 = Bc_k^T S_k,
    carried up the support with X* (like the CRBA's columns), giving
      C[j, k] = S_j^T F                    for j = k and each ancestor j,
      C[k, j] = G1 . dJ_j + S_j^T G2       for each strict ancestor j."""
    n = len(bodies)
    placements, twists, _ = sc.kinematics(bodies, q, v, trig)
    composite = [body.inertia for body in bodies]
    symmetric = [sc.velocity_variation(body.inertia, twists[i]) for i, body in enumerate(bodies)]
    momentum = [sc.inertia_apply(body.inertia, twists[i]) for i, body in enumerate(bodies)]
    dJ = [[sc.motion_cross(twists[i], s) for s in body.motions] for i, body in enumerate(bodies)]
    C = sc.output(nv * nv, q)
    for k in range(n - 1, -1, -1):
        body = bodies[k]
        G1 = [sc.inertia_apply(composite[k], s) for s in body.motions]
        sym = [sc.inertia_apply(symmetric[k], s) for s in body.motions]
        skew = [sc.force_cross(s, momentum[k]) for s in body.motions]
        F = [tuple(x + 0.5 * (y + z) for x, y, z in zip(sc.inertia_apply(composite[k], d), a, b))
             for d, a, b in zip(dJ[k], sym, skew)]
        G2 = [tuple(0.5 * (y - z) for y, z in zip(a, b)) for a, b in zip(sym, skew)]
        j = k
        while True:
            ancestor = bodies[j]
            for col, f in enumerate(F):
                for row, x in enumerate(joints.joint_force(ancestor, f), ancestor.v0):
                    C[row * nv + body.v0 + col] = x
            if j != k:
                for row, (g1, g2) in enumerate(zip(G1, G2), body.v0):
                    for col, (d, x) in enumerate(zip(dJ[j], joints.joint_force(ancestor, g2)), ancestor.v0):
                        C[row * nv + col] = sc.dot(g1, d) + x
            if ancestor.parent < 0:
                break
            R, p = placements[j]
            F, G1, G2 = ([sc.act_force(R, p, f) for f in forces] for forces in (F, G1, G2))
            j = ancestor.parent
        if body.parent >= 0:
            R, p = placements[k]
            parent = body.parent
            composite[parent] = sc.add_all(composite[parent], sc.inertia_act(R, p, composite[k]))
            symmetric[parent] = sc.add_all(symmetric[parent], sc.inertia_act(R, p, symmetric[k]))
            momentum[parent] = sc.add(momentum[parent], sc.act_force(R, p, momentum[k]))
    return C


def coriolis(model, q, v):
    """C(q, v) (..., nv, nv) for arrays to validate."""
    batch, arrays = model_arrays(model, q=q, v=v)
    bodies, nv = sc.constants(model), model.nv
    return sc.evaluate(lambda *args: _coriolis_passes(bodies, nv, *args), batch, arrays, (nv, nv))


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
    _, twists, _ = sc.kinematics(bodies, q, v, trig)
    energy = 0.0
    for body, twist in zip(bodies, twists):
        energy = energy + sc.dot(twist, sc.inertia_apply(body.inertia, twist))
        for k, r in enumerate(body.armature, body.v0):
            if r:
                energy = energy + r * v[k] * v[k]
    return [0.5 * energy]


def kinetic_energy(model, q, v):
    """T = 1/2 sum_i v_i . (Y_i v_i) (...,), from the body twists of the
    forward pass (on scalar components)."""
    batch, arrays = model_arrays(model, q=q, v=v)
    bodies = sc.constants(model)
    return _scalar(sc.evaluate(lambda *args: _kinetic_energy_passes(bodies, *args), batch, arrays, ()))


def _potential_energy_passes(bodies, gravity, q, trig):
    placements, _, _ = sc.kinematics(bodies, q, None, trig)
    _, h = subtree_first_moments(bodies, placements)
    return [-(h[0] * gravity[0] + h[1] * gravity[1] + h[2] * gravity[2])]


def potential_energy(model, q):
    """U = -sum_i m_i g . c_i = -g . h (...,), h the model's world first moment of
    mass from the backward pass of ``kinematics.subtree_first_moments``
    (Pinocchio's computePotentialEnergy; zero at the world origin)."""
    batch, arrays = model_arrays(model, q=q)
    bodies = sc.constants(model)
    gravity = model.gravity.tolist()
    return _scalar(sc.evaluate(lambda *args: _potential_energy_passes(bodies, gravity, *args),
                                        batch, arrays, ()))


def _centroidal_momentum_passes(bodies, mass, q, v, trig):
    """Forward: the body twists.  Backward: each subtree's momentum (about its root's
    origin, in its axes) and first moment of mass, moved to the parent with X_i*;
    the roots' sum is the momentum about the first body's origin o (the roots' placements
    moved to o: about the world origin, L_0 and c x p grow with the robot's distance from
    it and cancel), [p; L_o], and the center of mass c - o = h / m.  About c:
    [p; L_o - (c - o) x p]."""
    placements, twists, _ = sc.kinematics(bodies, q, v, trig)
    if placements:
        o = placements[0][1]
        placements = [(R, (p[0] - o[0], p[1] - o[1], p[2] - o[2])) if body.parent < 0 else (R, p)
                      for body, (R, p) in zip(bodies, placements)]
    moments, h = subtree_first_moments(bodies, placements)
    momenta = [sc.inertia_apply(body.inertia, twist) for body, twist in zip(bodies, twists)]
    total = (0.0,) * 6
    for i in range(len(bodies) - 1, -1, -1):  # children (higher indices) are complete first
        parent = bodies[i].parent
        moved = sc.act_force(*placements[i], momenta[i])
        if parent < 0:
            total = sc.add(total, moved)
        else:
            momenta[parent] = sc.add(momenta[parent], moved)
    p0, p1, p2, n0, n1, n2 = total
    c0, c1, c2 = h[0] / mass, h[1] / mass, h[2] / mass
    return [p0, p1, p2, n0 - (c1 * p2 - c2 * p1), n1 - (c2 * p0 - c0 * p2), n2 - (c0 * p1 - c1 * p0)]


def centroidal_momentum(model, q, v):
    """[linear; angular about the center of mass] momentum, world axes, (..., 6)
    (on scalar components)."""
    mass = check_mass(model)
    batch, arrays = model_arrays(model, q=q, v=v)
    bodies = sc.constants(model)
    return sc.evaluate(lambda *args: _centroidal_momentum_passes(bodies, mass, *args),
                                batch, arrays, (6,))


def _centroidal_matrix_passes(bodies, mass, nv, q, v, trig):
    """The 6 x nv components of A_G (v None) or of its time derivative, row-major.

    In world axes: with Yc_i the composite inertia of body i's subtree (about the
    world origin) and S_j a world column of i's joint, the momentum about the origin
    is h_O = sum_j (Yc_i S_j) v_j, so A_O's column j is Yc_i S_j; A_G moves it to the
    centre of mass c: [f; n] -> [f; n - c x f].  Its rate: d/dt (Yc_i S_j) =
    Sym_i S_j + Yc_i (V_i x S_j), Sym_i the composite of (V x*) Y - Y (V x) (each
    world inertia's rate), and the move adds -c_dot x f with c_dot = p / mass."""
    n = len(bodies)
    placements, _, _ = sc.kinematics(bodies, q, None, trig)
    world = sc.world_placements(bodies, placements, centered=True)
    columns = [joints.world_motions(body, *world[i]) for i, body in enumerate(bodies)]
    composite = [sc.inertia_act(*world[i], body.inertia) for i, body in enumerate(bodies)]
    if v is not None:
        twists, variation = [None] * n, [None] * n
        for i, body in enumerate(bodies):
            V = (0.0,) * 6 if body.parent < 0 else twists[body.parent]
            for k, s in enumerate(columns[i], body.v0):
                V = sc.add(V, tuple(x * v[k] for x in s))
            twists[i] = V
            variation[i] = sc.velocity_variation(composite[i], V)
    total = (0.0,) * 10
    for i in range(n - 1, -1, -1):
        parent = bodies[i].parent
        if parent < 0:
            total = sc.add_all(total, composite[i])
        else:
            composite[parent] = sc.add_all(composite[parent], composite[i])
            if v is not None:
                variation[parent] = sc.add_all(variation[parent], variation[i])
    c = (total[1] / mass, total[2] / mass, total[3] / mass)

    def moved(f, extra=(0.0, 0.0, 0.0)):  # [f; n - c x f - extra]
        x0, x1, x2 = sc.cross(*c, *f[:3])
        return [f[0], f[1], f[2], f[3] - x0 - extra[0], f[4] - x1 - extra[1], f[5] - x2 - extra[2]]

    out = [0.0] * (6 * nv)
    A = [None] * nv
    for i, body in enumerate(bodies):
        for k, s in enumerate(columns[i], body.v0):
            A[k] = sc.inertia_apply(composite[i], s)
    if v is None:
        for k, a in enumerate(A):
            out[k::nv] = moved(a)
        return out
    p = [sum(a[r] * v[k] for k, a in enumerate(A)) for r in range(3)]
    c_dot = tuple(x / mass for x in p)
    for i, body in enumerate(bodies):
        for k, s in enumerate(columns[i], body.v0):
            a_dot = sc.add(sc.inertia_apply(variation[i], s), sc.inertia_apply(composite[i], sc.motion_cross(twists[i], s)))
            out[k::nv] = moved(a_dot, sc.cross(*c_dot, *A[k][:3]))
    return out


def centroidal_momentum_matrix(model, q):
    """The centroidal momentum matrix A_G (..., 6, nv): ``centroidal_momentum = A_G v``
    (linear, then angular momentum about the centre of mass, world axes; Orin's A_G,
    Pinocchio's ccrba).  Armature does not enter it."""
    mass = check_mass(model)
    batch, arrays = model_arrays(model, q=q)
    bodies, nv = sc.constants(model), model.nv
    return sc.evaluate(lambda q, trig: _centroidal_matrix_passes(bodies, mass, nv, q, None, trig),
                       batch, arrays, (6, nv))


def centroidal_momentum_matrix_time_variation(model, q, v):
    """dA_G/dt (..., 6, nv) along the motion with velocity v (Pinocchio's dccrba), so that
    the rate of the centroidal momentum is A_G a + dA_G/dt v."""
    mass = check_mass(model)
    batch, arrays = model_arrays(model, q=q, v=v)
    bodies, nv = sc.constants(model), model.nv
    return sc.evaluate(lambda *args: _centroidal_matrix_passes(bodies, mass, nv, *args), batch, arrays, (6, nv))
