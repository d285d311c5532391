"""Derivatives of the dynamics: RNEA and ABA derivatives, and the inverse mass matrix.

Derivatives with respect to q are along a tangent perturbation q ⊕ δq.  Under
such a perturbation of joint k along one of its motion columns s, the subtree
of k moves rigidly by s; what does not move with it is the motion of k's parent.
With v_p and a_p the parent's twist and acceleration (gravity included) seen
from body k, every body i of the subtree changes, beyond the rigid motion, by

    δv_i = u = v_p x s,   δa_i = w + u x v_i,   w = a_p x s + v_p x u,

so its force f_i = Y_i a_i + v_i x* (Y_i v_i) - fext_i changes by
s x* f_i + Y_i w + B_i u, with B_i = (v_i x*) Y_i - Y_i (v_i x) + (h_i x-bar*)
((h x-bar*) m = m x* h, h_i = Y_i v_i; twice the B of the Coriolis matrix).
Summed over a subtree (composites Yc, Bc and the RNEA force F), and with
S_j^T moving rigidly too when j is in k's subtree (which cancels the s x* term):

    dtau_j/dq_k = S_j^T (Bc_k u + Yc_k w + s x* F_k)   j a strict ancestor of k,
                = S_j^T (Bc_j u + Yc_j w)              j in the subtree of k,

and the same with u -> s, w -> d = (v_k + v_p) x s for dtau/dv (no s x* F term),
u -> 0, w -> s for dtau/da = M.  Entries of j below k are dot products of the
forces G1 = Yc_j S_j, G2 = Bc_j^T S_j with k's u, w (or s, d): Carpentier &
Mansard (2018)'s O(n d) structure, one forward and one backward pass for all
three outputs (the CRBA and Coriolis matrix's pattern).

ABA derivatives follow: dqdd/dx = -M^-1 dtau/dx at a = aba(...), and dqdd/dtau
= M^-1, computed directly in O(n^2) by ``inverse_mass_matrix``.
"""

import numpy as np

from .._checks import check_finite_result, model_arrays, singular_tolerance
from . import _components as sc  # spatial algebra on scalar components
from . import joints
from .dynamics import add_armature, evaluate_dynamics, forward_dynamics, joint_factors, solve_joint


# ------------------------------------------------------------------------------------------
# RNEA derivatives
# ------------------------------------------------------------------------------------------
def _rnea_derivative_passes(bodies, gravity, nv, q, v, a, fext, trig):
    """The components of dtau/dq, dtau/dv and M = dtau/da, each nv x nv row-major.

    In world axes (as the compiled kernel): a world quantity of a subtree moves with
    the perturbation's world column s directly, composites are sums, and each entry
    is a dot product with a world column.  Forward: per body its world twist,
    acceleration (gravity included), inertia Y, momentum h = Y v, force f and
    (v x*) Y - Y (v x) (``velocity_variation``); per column s: u, w, d.  Backward,
    with the subtree composites Yc, Sym, hc, F of body k, per column s of k:
    G1 = Yc s, G2 = Bc^T s = Sym s - s x* hc, Pv = Bc s + Yc d, Pq = Bc u + Yc w
    (Bc m = Sym m + m x* hc), then Pq += s x* F for the strict ancestors."""
    n = len(bodies)
    placements, _, _ = sc.kinematics(bodies, q, None, trig)
    world = sc.world_placements(bodies, placements, centered=True)
    zero = (0.0,) * 6
    world_acc = (-gravity[0], -gravity[1], -gravity[2], 0.0, 0.0, 0.0)
    twists, accs = [None] * n, [None] * n
    columns, du, dw, dd = [None] * n, [None] * n, [None] * n, [None] * n
    composite, variation, momentum, forces = [None] * n, [None] * n, [None] * n, [None] * n
    for i, body in enumerate(bodies):
        R, p = world[i]
        S = columns[i] = joints.world_motions(body, R, p)
        v_p = zero if body.parent < 0 else twists[body.parent]
        a_p = world_acc if body.parent < 0 else accs[body.parent]
        vJ, aJ = zero, zero
        for k, s in enumerate(S, body.v0):
            vJ = sc.add(vJ, tuple(x * v[k] for x in s))
            aJ = sc.add(aJ, tuple(x * a[k] for x in s))
        twists[i] = V = sc.add(v_p, vJ)
        accs[i] = A = sc.add(sc.add(a_p, aJ), sc.motion_cross(V, vJ))
        composite[i] = Y = sc.inertia_act(R, p, body.inertia)
        momentum[i] = h = sc.inertia_apply(Y, V)
        f = sc.add(sc.inertia_apply(Y, A), sc.force_cross(V, h))
        forces[i] = f if fext is None else sc.sub(f, sc.act_force(R, p, fext[i]))
        variation[i] = sc.velocity_variation(Y, V)
        du[i] = [sc.motion_cross(v_p, s) for s in S]
        dw[i] = [sc.add(sc.motion_cross(a_p, s), sc.motion_cross(v_p, u)) for s, u in zip(S, du[i])]
        dd[i] = [sc.motion_cross(sc.add(V, v_p), s) for s in S]

    nn = nv * nv
    out = sc.output(3 * nn, q)  # dtau/dq, then dtau/dv from nn, then M from 2 nn
    for k in range(n - 1, -1, -1):
        body = bodies[k]
        Yc, Sym, h, F = composite[k], variation[k], momentum[k], forces[k]  # whole subtree of k
        for col, (s, u, w, d) in enumerate(zip(columns[k], du[k], dw[k], dd[k])):
            c = body.v0 + col
            G1 = sc.inertia_apply(Yc, s)
            t, x = sc.inertia_apply(Sym, s), sc.force_cross(s, h)
            G2 = sc.sub(t, x)
            Pv = sc.add(sc.add(t, x), sc.inertia_apply(Yc, d))
            Pq = sc.add(sc.add(sc.inertia_apply(Sym, u), sc.force_cross(u, h)), sc.inertia_apply(Yc, w))
            for r, o in enumerate(columns[k], body.v0):  # the joint's own block
                rc = r * nv + c
                out[rc], out[nn + rc], out[2 * nn + rc] = sc.dot(o, Pq), sc.dot(o, Pv), sc.dot(o, G1)
            Pq = sc.add(Pq, sc.force_cross(s, F))
            j = body.parent
            while j >= 0:
                for r, (o, u_j, w_j, d_j) in enumerate(zip(columns[j], du[j], dw[j], dd[j]), bodies[j].v0):
                    rc, cr = r * nv + c, c * nv + r
                    out[rc], out[nn + rc] = sc.dot(o, Pq), sc.dot(o, Pv)
                    out[2 * nn + rc] = out[2 * nn + cr] = sc.dot(o, G1)
                    out[cr] = sc.dot(G2, u_j) + sc.dot(G1, w_j)
                    out[nn + cr] = sc.dot(G2, o) + sc.dot(G1, d_j)
                j = bodies[j].parent
        if body.parent >= 0:
            parent = body.parent
            composite[parent] = sc.add_all(composite[parent], Yc)
            variation[parent] = sc.add_all(variation[parent], Sym)
            momentum[parent] = sc.add(momentum[parent], h)
            forces[parent] = sc.add(forces[parent], F)
    add_armature(out, bodies, nv, 2 * nn)
    return out


def _rnea_derivatives(model, batch, arrays):
    bodies, nv = sc.constants(model), model.nv
    gravity = model.gravity.tolist()
    return sc.evaluate(lambda *args: _rnea_derivative_passes(bodies, gravity, nv, *args), batch, arrays,
                       [(nv, nv)] * 3)


def rnea_derivatives(model, q, v, a, fext=None):
    """(dtau_dq, dtau_dv, dtau_da), each (..., nv, nv): the partial derivatives of
    ``rnea`` (q along q ⊕ δq; fext held constant in each body's frame); dtau_da
    is the mass matrix.  One forward and one backward pass for all three."""
    batch, arrays = model_arrays(model, q=q, v=v, a=a, fext=fext)
    return _rnea_derivatives(model, batch, arrays)


# ------------------------------------------------------------------------------------------
# Inverse mass matrix
# ------------------------------------------------------------------------------------------
def _inverse_mass_matrix_passes(bodies, tol, nv, q, trig):
    """M^-1 as an array (nv, nv) (and the samples' axis, in a batch).

    The articulated-body algorithm run on every unit joint force at once (v = 0,
    no gravity), in world axes so that the columns need no transforms.  A quantity
    per column is one array over a range of columns (each of its 6 components a row
    of them): the Python work is per body, the arithmetic vectorized over columns.
    1. Backward: the articulated inertias IA_i (as in ``aba``), U = IA_i S,
       D = S^T U; over the columns c of the subtree of i (a range from i's first),
       with P_i[c] the force the children pass to i,
       Minv[i, c] = D^-1 (e_c - S^T P_i[c]),  P_parent[c] += P_i[c] + U Minv[i, c].
    2. Forward, for the columns c >= i only (the upper triangle; the lower is its
       mirror, so the result is exactly symmetric), with A_i[c] the acceleration:
       Minv[i, c] -= D^-1 U^T A_parent[c],  A_i[c] = A_parent[c] + S Minv[i, c].
    Each P_i is dropped once passed on and each A_i once its last child has read it:
    on a chain only one of each is alive (they were n^2 / 2 tuples)."""
    n = len(bodies)
    lanes = sc.lanes(q)
    placements, _, _ = sc.kinematics(bodies, q, None, trig)
    world = sc.world_placements(bodies, placements, centered=True)
    articulated = [sc.sym6_from_inertia(body.inertia) for body in bodies]
    Minv = np.zeros((nv, nv) + lanes)
    subtree_end = [body.v0 + body.nv for body in bodies]  # one past the subtree's last column
    last_child = [-1] * n
    for i in range(n - 1, -1, -1):
        parent = bodies[i].parent
        if parent >= 0:
            subtree_end[parent] = max(subtree_end[parent], subtree_end[i])
            last_child[parent] = max(last_child[parent], i)
    passed = [None] * n  # P_i: (6, columns of i's subtree) + lanes
    factors = [None] * n
    for i in range(n - 1, -1, -1):
        body = bodies[i]
        U, L, W, inv_d = joint_factors(articulated[i], body, tol[i], i)
        Rw, pw = world[i]
        # (as (6, 1) + lanes arrays: one product with a (6, columns) + lanes array)
        Uw = [sc.stacked(sc.act_force(Rw, pw, u), lanes)[:, None] for u in U]
        Sw = [sc.stacked(sc.act_motion(Rw, pw, s), lanes)[:, None] for s in body.motions]
        factors[i] = L, inv_d, Uw, Sw
        v0, end = body.v0, subtree_end[i]
        P, passed[i] = passed[i], None
        if P is None:  # a leaf
            P = np.zeros((6, end - v0) + lanes)
        t = [-(s * P).sum(axis=0) for s in Sw]
        for r in range(body.nv):
            t[r][r] += 1.0  # e_c: the joint's own columns
        x = solve_joint(L, inv_d, t)
        Minv[v0:v0 + body.nv, v0:end] = x
        if body.parent >= 0:
            for u, xr in zip(Uw, x):
                P += u * xr
            parent = bodies[body.parent]
            if passed[body.parent] is None:
                passed[body.parent] = np.zeros((6, subtree_end[body.parent] - parent.v0) + lanes)
            passed[body.parent][:, v0 - parent.v0:end - parent.v0] += P
            R, p = placements[i]
            Ia = sc.sym6_subtract_outer(articulated[i], W, inv_d)
            articulated[body.parent] = sc.add_all(articulated[body.parent], sc.sym6_act(R, p, Ia))

    accelerations = [None] * n  # A_i: (6, columns >= i's first) + lanes, for i's children
    for i, body in enumerate(bodies):
        (L, inv_d, Uw, Sw), factors[i] = factors[i], None
        v0 = body.v0
        rows = Minv[v0:v0 + body.nv, v0:]
        if body.parent >= 0:
            acc = accelerations[body.parent][:, v0 - bodies[body.parent].v0:]
            if last_child[body.parent] == i:
                accelerations[body.parent] = None
            for row, y in zip(rows, solve_joint(L, inv_d, [(u * acc).sum(axis=0) for u in Uw])):
                row -= y
        if last_child[i] < 0:  # a leaf: no child reads its accelerations
            continue
        A = np.zeros((6, nv - v0) + lanes) if body.parent < 0 else acc.copy()
        for s, row in zip(Sw, rows):
            A += s * row
        accelerations[i] = A
    for r in range(nv):  # the lower triangle mirrors the upper
        Minv[r, :r] = Minv[:r, r]
    return Minv


def inverse_mass_matrix(model, q):
    """M(q)^-1 (..., nv, nv), computed directly in O(n^2) (not by inverting ``crba``)
    and exactly symmetric."""
    batch, arrays = model_arrays(model, q=q)
    bodies, nv = sc.constants(model), model.nv
    tol = singular_tolerance(model).tolist()
    return evaluate_dynamics(model, lambda *args: _inverse_mass_matrix_passes(bodies, tol, nv, *args), batch,
                             arrays, (nv, nv))


# ------------------------------------------------------------------------------------------
# ABA derivatives
# ------------------------------------------------------------------------------------------
def aba_derivatives(model, q, v, tau, fext=None):
    """(dqdd_dq, dqdd_dv, dqdd_dtau), each (..., nv, nv): the partial derivatives of
    ``aba`` (q along q ⊕ δq; fext held constant in each body's frame).  With
    qdd = aba(...), dqdd/dx = -M^-1 dtau/dx at (q, v, qdd) and dqdd_dtau = M^-1."""
    batch, (q, v, tau, fext) = model_arrays(model, q=q, v=v, tau=tau, fext=fext)
    qdd = forward_dynamics(model, q, v, tau, fext)
    dtau_dq, dtau_dv, _ = _rnea_derivatives(model, batch, (q, v, qdd, fext))
    Minv = inverse_mass_matrix(model, q)
    if model.nv == 0:  # (matmul would loop over every empty sample, maybe 2**40 of them)
        return Minv.copy(), Minv.copy(), Minv
    with np.errstate(over="ignore", invalid="ignore"):  # (the products can overflow: checked below)
        dqdd_dq, dqdd_dv = Minv @ dtau_dq, Minv @ dtau_dv
    check_finite_result(np.stack([dqdd_dq, dqdd_dv], axis=-3), 3)  # (naming a batch's first overflowing sample)
    return np.negative(dqdd_dq, out=dqdd_dq), np.negative(dqdd_dv, out=dqdd_dv), Minv  # (no temporaries)
