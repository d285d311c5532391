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

from .._checks import model_arrays, singular_tolerance
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

    dq, dv, M = [0.0] * (nv * nv), [0.0] * (nv * nv), [0.0] * (nv * nv)
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
                dq[r * nv + c], dv[r * nv + c], M[r * nv + c] = sc.dot(o, Pq), sc.dot(o, Pv), sc.dot(o, G1)
            Pq = sc.add(Pq, sc.force_cross(s, F))
            j = body.parent
            while j >= 0:
                for r, (o, u_j, w_j, d_j) in enumerate(zip(columns[j], du[j], dw[j], dd[j]), bodies[j].v0):
                    dq[r * nv + c], dv[r * nv + c] = sc.dot(o, Pq), sc.dot(o, Pv)
                    M[r * nv + c] = M[c * nv + r] = sc.dot(o, G1)
                    dq[c * nv + r] = sc.dot(G2, u_j) + sc.dot(G1, w_j)
                    dv[c * nv + r] = sc.dot(G2, o) + sc.dot(G1, d_j)
                j = bodies[j].parent
        if body.parent >= 0:
            parent = body.parent
            composite[parent] = sc.add_all(composite[parent], Yc)
            variation[parent] = sc.add_all(variation[parent], Sym)
            momentum[parent] = sc.add(momentum[parent], h)
            forces[parent] = sc.add(forces[parent], F)
    add_armature(M, bodies, nv)
    return dq + dv + M


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
    """The nv x nv components of M^-1, row-major.

    The articulated-body algorithm run on every unit joint force at once (v = 0,
    no gravity), in world axes so that the columns need no transforms:
    1. Backward: the articulated inertias IA_i (as in ``aba``), U = IA_i S,
       D = S^T U; for each column c of the subtree of i, with P_i[c] the force the
       children pass to i,  Minv[i, c] = D^-1 (e_c - S^T P_i[c]),
       P_parent[c] += P_i[c] + U Minv[i, c].
    2. Forward, for the columns c >= i only (the upper triangle; the lower is its
       mirror, so the result is exactly symmetric), with A_i[c] the acceleration:
       Minv[i, c] -= D^-1 U^T A_parent[c],  A_i[c] = A_parent[c] + S Minv[i, c]."""
    n = len(bodies)
    placements, _, _ = sc.kinematics(bodies, q, None, trig)
    world = sc.world_placements(bodies, placements, centered=True)
    articulated = [sc.sym6_from_inertia(body.inertia) for body in bodies]
    Minv = [0.0] * (nv * nv)
    subtree_end = [body.v0 + body.nv for body in bodies]  # one past the subtree's last column
    for i in range(n - 1, -1, -1):
        if bodies[i].parent >= 0:
            parent = bodies[i].parent
            subtree_end[parent] = max(subtree_end[parent], subtree_end[i])
    zero = (0.0,) * 6
    passed = [{} for _ in range(n)]  # P_i: column -> world force
    factors = [None] * n
    for i in range(n - 1, -1, -1):
        body = bodies[i]
        U, L, W, inv_d = joint_factors(articulated[i], body, tol[i], i)
        Rw, pw = world[i]
        Uw = [sc.act_force(Rw, pw, u) for u in U]
        Sw = [sc.act_motion(Rw, pw, s) for s in body.motions]
        factors[i] = L, inv_d, Uw, Sw
        P = passed[i]
        to_parent = passed[body.parent] if body.parent >= 0 else None
        for c in range(body.v0, subtree_end[i]):
            f = P.get(c, zero)
            x = solve_joint(L, inv_d, [(1.0 if body.v0 + r == c else 0.0) - sc.dot(s, f) for r, s in enumerate(Sw)])
            for r, xr in enumerate(x):
                Minv[(body.v0 + r) * nv + c] = xr
            if to_parent is not None:
                for u, xr in zip(Uw, x):
                    f = sc.add(f, tuple(xr * uk for uk in u))
                to_parent[c] = sc.add(to_parent.get(c, zero), f)
        if body.parent >= 0:
            R, p = placements[i]
            Ia = sc.sym6_subtract_outer(articulated[i], W, inv_d)
            articulated[body.parent] = sc.add_all(articulated[body.parent], sc.sym6_act(R, p, Ia))

    accelerations = [None] * n  # A_i: list over the columns c >= v0
    for i, body in enumerate(bodies):
        L, inv_d, Uw, Sw = factors[i]
        A_parent = accelerations[body.parent] if body.parent >= 0 else None
        A = []
        for c in range(body.v0, nv):
            rows = [Minv[(body.v0 + r) * nv + c] for r in range(body.nv)]
            if A_parent is not None:
                acc = A_parent[c - bodies[body.parent].v0]
                t = solve_joint(L, inv_d, [sc.dot(u, acc) for u in Uw])
                rows = [x - y for x, y in zip(rows, t)]
            else:
                acc = zero
            for r, x in enumerate(rows):
                Minv[(body.v0 + r) * nv + c] = x
                acc = sc.add(acc, tuple(x * sk for sk in Sw[r]))
            A.append(acc)
        accelerations[i] = A
    for r in range(nv):  # the lower triangle mirrors the upper
        for c in range(r):
            Minv[r * nv + c] = Minv[c * nv + r]
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
    return -(Minv @ dtau_dq), -(Minv @ dtau_dv), Minv
