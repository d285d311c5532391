# cython: language_level=3
"""Compiled derivatives of the dynamics: RNEA and ABA derivatives, the inverse mass matrix.

The formulas are those of ``rbd.reference.derivatives`` (its docstring derives
them), evaluated in world axes: a world quantity of a subtree moves with the
perturbation's world column s directly, composites are plain sums, and the walks
up a body's ancestors are dot products with their world columns, no transforms.
"""
cimport cython
from libc.string cimport memset, memcpy

from rbd_c._kernels cimport act_force, motion_cross, force_cross, inertia_apply, inertia_act
from rbd_c._model cimport CModel, Call, CompiledModel, prepare_call, run, Algorithm, algorithm
from rbd_c._model import size
from rbd_c._joints cimport joint_placement
from rbd_c._passes cimport add6, sub6, dot6, child_placement, world_column
from rbd_c._articulated cimport sym6_from_inertia, sym6_act_add, joint_articulated, articulated_reduce
from rbd_c._dynamics cimport k_aba, ABA_PER_BODY


# ==========================================================================================
# RNEA derivatives
# ==========================================================================================
cdef enum:
    # Per body: world placement, twist, acceleration (gravity included), then the
    # subtree composites: inertia Yc (10), B's symmetric part in inertia form (0, g, N)
    # (10), momentum (6) and force (6).
    RD_OM = 0
    RD_OV = 16
    RD_OA = 22
    RD_YC = 28
    RD_SYM = 38
    RD_K = 48
    RD_F = 54
    RD_PER_BODY = 60
    # Per dof: its world column s and u, w, d (see the reference).
    RD_S = 0
    RD_U = 6
    RD_W = 12
    RD_D = 18
    RD_PER_DOF = 24


cdef inline void velocity_variation(const double* Y, const double* V, double* out) noexcept nogil:
    """(V x*) Y - Y (V x) for a 10-number inertia Y = (m, h, I) and a twist V = [v; w]:
    [[0, -[g]x], [[g]x, N]] with g = m v + w x h and N = [w]x I - I [w]x - ([v]x [h]x +
    [h]x [v]x), stored like an inertia (0, g, N) so that inertia_apply applies it."""
    cdef double mass = Y[0], h0 = Y[1], h1 = Y[2], h2 = Y[3]
    cdef double v0 = V[0], v1 = V[1], v2 = V[2], w0 = V[3], w1 = V[4], w2 = V[5]
    cdef double xx = Y[4], xy = Y[5], xz = Y[6], yy = Y[7], yz = Y[8], zz = Y[9]
    cdef double a00, a01, a02, a10, a11, a12, a20, a21, a22, vh
    out[0] = 0.0
    out[1] = mass * v0 + w1 * h2 - w2 * h1
    out[2] = mass * v1 + w2 * h0 - w0 * h2
    out[3] = mass * v2 + w0 * h1 - w1 * h0
    # A = [w]x I (columns of I crossed); [w]x I - I [w]x = A + A^T
    a00 = w1 * xz - w2 * xy; a01 = w1 * yz - w2 * yy; a02 = w1 * zz - w2 * yz
    a10 = w2 * xx - w0 * xz; a11 = w2 * xy - w0 * yz; a12 = w2 * xz - w0 * zz
    a20 = w0 * xy - w1 * xx; a21 = w0 * yy - w1 * xy; a22 = w0 * yz - w1 * xz
    # [v]x [h]x + [h]x [v]x = h v^T + v h^T - 2 (v . h) 1
    vh = v0 * h0 + v1 * h1 + v2 * h2
    out[4] = 2.0 * a00 - (2.0 * h0 * v0 - 2.0 * vh)
    out[5] = a01 + a10 - (h0 * v1 + v0 * h1)
    out[6] = a02 + a20 - (h0 * v2 + v0 * h2)
    out[7] = 2.0 * a11 - (2.0 * h1 * v1 - 2.0 * vh)
    out[8] = a12 + a21 - (h1 * v2 + v1 * h2)
    out[9] = 2.0 * a22 - (2.0 * h2 * v2 - 2.0 * vh)


@cython.cdivision(True)
cdef int k_rnea_derivatives(const Call* c, const double** ins, double** outs, double* work) noexcept nogil:
    """dtau/dq, dtau/dv and M = dtau/da in one forward and one backward pass."""
    cdef const CModel* m = c.m
    cdef const double* q = ins[0]
    cdef const double* v = ins[1]
    cdef const double* a = ins[2]
    cdef const double* fext = ins[3]
    cdef double* dq = outs[0]
    cdef double* dv = outs[1]
    cdef double* M = outs[2]
    cdef int nb = m.nb, nv = m.nv, i, p, col, r, j, jc, ic
    cdef double* dofs = work + RD_PER_BODY * nb
    cdef double* B
    cdef double* P
    cdef double* s
    cdef double* o
    cdef double Xl[16]
    cdef double oY[10]
    cdef double sym[10]
    cdef double vJ[6]
    cdef double aJ[6]
    cdef double t[6]
    cdef double x[6]
    cdef double G1[6]
    cdef double G2[6]
    cdef double Pv[6]
    cdef double Pq[6]
    cdef double zero[6]
    cdef double a0[6]
    cdef double vp[6]
    memset(zero, 0, 6 * sizeof(double))
    a0[0] = -c.g[0]; a0[1] = -c.g[1]; a0[2] = -c.g[2]; a0[3] = 0.0; a0[4] = 0.0; a0[5] = 0.0
    memset(dq, 0, nv * nv * sizeof(double))
    memset(dv, 0, nv * nv * sizeof(double))
    memset(M, 0, nv * nv * sizeof(double))

    # ---- forward: world placements, twists, accelerations, forces, u, w, d --------------
    for i in range(nb):
        B = work + RD_PER_BODY * i
        p = m.parents[i]
        P = work + RD_PER_BODY * p if p >= 0 else NULL
        joint_placement(m, i, q + m.q_idx[i], Xl)
        child_placement(P + RD_OM if p >= 0 else NULL, Xl, B + RD_OM)
        memset(vJ, 0, 6 * sizeof(double))
        memset(aJ, 0, 6 * sizeof(double))
        for col in range(m.nvj[i]):
            ic = m.v_idx[i] + col
            s = dofs + RD_PER_DOF * ic
            world_column(m, i, col, B + RD_OM, s + RD_S)
            for r in range(6):
                vJ[r] += s[RD_S + r] * v[ic]
                aJ[r] += s[RD_S + r] * a[ic]
        memcpy(vp, P + RD_OV if p >= 0 else zero, 6 * sizeof(double))
        for r in range(6):
            B[RD_OV + r] = vp[r] + vJ[r]
        motion_cross(B + RD_OV, vJ, t)
        for r in range(6):
            B[RD_OA + r] = (P[RD_OA + r] if p >= 0 else a0[r]) + aJ[r] + t[r]
        for col in range(m.nvj[i]):
            s = dofs + RD_PER_DOF * (m.v_idx[i] + col)
            motion_cross(vp, s + RD_S, s + RD_U)
            motion_cross(P + RD_OA if p >= 0 else a0, s + RD_S, s + RD_W)
            motion_cross(vp, s + RD_U, t)
            add6(s + RD_W, t)
            for r in range(6):
                t[r] = B[RD_OV + r] + vp[r]
            motion_cross(t, s + RD_S, s + RD_D)
        inertia_act(B + RD_OM, m.inertias + 10 * i, B + RD_YC)
        inertia_apply(B + RD_YC, B + RD_OV, B + RD_K)
        inertia_apply(B + RD_YC, B + RD_OA, B + RD_F)
        force_cross(B + RD_OV, B + RD_K, t)
        add6(B + RD_F, t)
        if fext != NULL:
            act_force(B + RD_OM, fext + 6 * i, t)
            sub6(B + RD_F, t)
        velocity_variation(B + RD_YC, B + RD_OV, B + RD_SYM)

    # ---- backward: composites, and each column against its body's ancestors ------------
    for i in range(nb - 1, -1, -1):
        B = work + RD_PER_BODY * i
        for col in range(m.nvj[i]):
            ic = m.v_idx[i] + col
            s = dofs + RD_PER_DOF * ic
            inertia_apply(B + RD_YC, s + RD_S, G1)                       # Yc s
            inertia_apply(B + RD_SYM, s + RD_S, t)
            force_cross(s + RD_S, B + RD_K, x)
            for r in range(6):
                G2[r] = t[r] - x[r]                                      # Bc^T s
                Pv[r] = t[r] + x[r]                                      # Bc s ...
            inertia_apply(B + RD_YC, s + RD_D, t)
            add6(Pv, t)                                                  # ... + Yc d
            inertia_apply(B + RD_SYM, s + RD_U, Pq)
            force_cross(s + RD_U, B + RD_K, t)
            add6(Pq, t)
            inertia_apply(B + RD_YC, s + RD_W, t)
            add6(Pq, t)                                                  # Bc u + Yc w
            for r in range(m.nvj[i]):                                    # the joint's own block
                jc = m.v_idx[i] + r
                o = dofs + RD_PER_DOF * jc
                dq[jc * nv + ic] = dot6(o + RD_S, Pq)
                dv[jc * nv + ic] = dot6(o + RD_S, Pv)
                M[jc * nv + ic] = dot6(o + RD_S, G1)
            force_cross(s + RD_S, B + RD_F, t)
            add6(Pq, t)                                                  # + s x* F for the ancestors
            j = m.parents[i]
            while j >= 0:
                for r in range(m.nvj[j]):
                    jc = m.v_idx[j] + r
                    o = dofs + RD_PER_DOF * jc
                    dq[jc * nv + ic] = dot6(o + RD_S, Pq)
                    dv[jc * nv + ic] = dot6(o + RD_S, Pv)
                    M[jc * nv + ic] = M[ic * nv + jc] = dot6(o + RD_S, G1)
                    dq[ic * nv + jc] = dot6(G2, o + RD_U) + dot6(G1, o + RD_W)
                    dv[ic * nv + jc] = dot6(G2, o + RD_S) + dot6(G1, o + RD_D)
                j = m.parents[j]
        p = m.parents[i]
        if p >= 0:
            P = work + RD_PER_BODY * p
            for r in range(RD_YC, RD_PER_BODY):  # Yc, B's symmetric part, momentum, force
                P[r] += B[r]
    return 0


# ==========================================================================================
# Inverse mass matrix
# ==========================================================================================
cdef enum:
    # Per body: parent_from_body and world placements, articulated inertia (21).
    MI_X = 0
    MI_OM = 16
    MI_IA = 32
    MI_PER_BODY = 53
    # Per dof: U = IA S and S, both in world axes.
    MI_U = 0
    MI_S = 6
    MI_PER_DOF = 12


@cython.cdivision(True)
cdef int k_inverse_mass_matrix(const Call* c, const double** ins, double** outs, double* work) noexcept nogil:
    """M^-1 by the articulated-body algorithm on every unit joint force at once, in world
    axes (see the reference's _inverse_mass_matrix_passes).  The forces passed up (P)
    and the accelerations passed down (A) of a body are only needed while its
    subtree is being processed: one 6 x nv block per depth of the tree holds them."""
    cdef const CModel* m = c.m
    cdef const double* q = ins[0]
    cdef double* Minv = outs[0]
    cdef int nb = m.nb, nv = m.nv, i, p, k, col, r, l, v0, end, status
    cdef double* dofs = work + MI_PER_BODY * nb
    cdef double* Dinv = dofs + MI_PER_DOF * nv       # nv_i x nv_i per body
    cdef double* U = Dinv + m.nd2                     # IA S in body axes, 6 x nv
    cdef double* levels = U + 6 * nv                  # 6 x nv per depth
    cdef double* B
    cdef double* Di
    cdef double* Pi
    cdef double* Pp
    cdef double* f
    cdef double* o
    cdef double Ia[21]
    cdef double W[36]
    cdef double t[6]
    cdef double y[6]
    cdef double acc
    memset(levels, 0, 6 * nv * m.max_depth * sizeof(double))
    for i in range(nb):
        B = work + MI_PER_BODY * i
        p = m.parents[i]
        joint_placement(m, i, q + m.q_idx[i], B + MI_X)
        child_placement(work + MI_PER_BODY * p + MI_OM if p >= 0 else NULL, B + MI_X, B + MI_OM)
        sym6_from_inertia(m.inertias + 10 * i, B + MI_IA)

    # ---- backward: articulated inertias; the rows' subtree parts ------------------------
    for i in range(nb - 1, -1, -1):
        B = work + MI_PER_BODY * i
        p = m.parents[i]
        k = m.nvj[i]
        v0 = m.v_idx[i]
        end = m.v_idx[m.subtree_end[i]] if m.subtree_end[i] < nb else nv
        Di = Dinv + m.d2_idx[i]
        status = joint_articulated(m, i, B + MI_IA, U + 6 * v0, Di)
        if status:
            return status
        for col in range(k):
            o = dofs + MI_PER_DOF * (v0 + col)
            act_force(B + MI_OM, U + 6 * (v0 + col), o + MI_U)
            world_column(m, i, col, B + MI_OM, o + MI_S)
        Pi = levels + 6 * nv * (m.depth[i] - 1)
        Pp = Pi - 6 * nv
        for r in range(k):  # the columns right of the subtree start from zero
            memset(Minv + (v0 + r) * nv + end, 0, (nv - end) * sizeof(double))
        for col in range(v0, end):
            f = Pi + 6 * col
            for r in range(k):
                t[r] = (1.0 if v0 + r == col else 0.0) - dot6(dofs + MI_PER_DOF * (v0 + r) + MI_S, f)
            for r in range(k):
                acc = 0.0
                for l in range(k):
                    acc += Di[k * r + l] * t[l]
                Minv[(v0 + r) * nv + col] = y[r] = acc
            if p >= 0:
                for r in range(6):
                    acc = f[r]
                    for l in range(k):
                        acc += dofs[MI_PER_DOF * (v0 + l) + MI_U + r] * y[l]
                    Pp[6 * col + r] += acc
            memset(f, 0, 6 * sizeof(double))  # the level is free for the next body at this depth
        if p >= 0:
            articulated_reduce(B + MI_IA, U + 6 * v0, Di, k, Ia, W)
            sym6_act_add(B + MI_X, Ia, work + MI_PER_BODY * p + MI_IA)

    # ---- forward: the accelerations, for the upper triangle -----------------------------
    for i in range(nb):
        p = m.parents[i]
        k = m.nvj[i]
        v0 = m.v_idx[i]
        Di = Dinv + m.d2_idx[i]
        Pi = levels + 6 * nv * (m.depth[i] - 1)   # A_i
        Pp = Pi - 6 * nv                           # A_parent
        for col in range(v0, nv):
            f = Pi + 6 * col
            if p >= 0:
                for r in range(k):
                    t[r] = dot6(dofs + MI_PER_DOF * (v0 + r) + MI_U, Pp + 6 * col)
                for r in range(k):
                    acc = 0.0
                    for l in range(k):
                        acc += Di[k * r + l] * t[l]
                    Minv[(v0 + r) * nv + col] -= acc
                memcpy(f, Pp + 6 * col, 6 * sizeof(double))
            else:
                memset(f, 0, 6 * sizeof(double))
            for r in range(k):
                acc = Minv[(v0 + r) * nv + col]
                o = dofs + MI_PER_DOF * (v0 + r) + MI_S
                for l in range(6):
                    f[l] += o[l] * acc
    for r in range(nv):  # the lower triangle mirrors the upper
        for col in range(r):
            Minv[r * nv + col] = Minv[col * nv + r]
    return 0


# ==========================================================================================
# ABA derivatives
# ==========================================================================================
cdef inline void _minus_product(const double* A, const double* B, int n, double* out) noexcept nogil:
    """out = -A B for n x n row-major matrices (rows of B read contiguously)."""
    cdef int i, r, col
    cdef double air
    cdef const double* Br
    cdef double* Oi
    for i in range(n):
        Oi = out + i * n
        for col in range(n):
            Oi[col] = 0.0
        for r in range(n):
            air = A[i * n + r]
            Br = B + r * n
            for col in range(n):
                Oi[col] -= air * Br[col]


cdef int k_aba_derivatives(const Call* c, const double** ins, double** outs, double* work) noexcept nogil:
    """qdd = aba(q, v, tau, fext); then dtau/dq, dtau/dv at (q, v, qdd), M^-1, and
    dqdd/dx = -M^-1 dtau/dx."""
    cdef const CModel* m = c.m
    cdef int nv = m.nv, status
    cdef double* qdd = work
    cdef double* dtau_dq = qdd + nv
    cdef double* dtau_dv = dtau_dq + nv * nv
    cdef double* mass = dtau_dv + nv * nv
    cdef double* rest = mass + nv * nv
    cdef const double* args[4]
    cdef double* results[3]
    results[0] = qdd
    status = k_aba(c, ins, results, rest)
    if status:
        return status
    args[0] = ins[0]; args[1] = ins[1]; args[2] = qdd; args[3] = ins[3]
    results[0] = dtau_dq; results[1] = dtau_dv; results[2] = mass
    k_rnea_derivatives(c, args, results, rest)
    status = k_inverse_mass_matrix(c, ins, outs + 2, rest)
    if status:
        return status
    _minus_product(outs[2], dtau_dq, nv, outs[0])
    _minus_product(outs[2], dtau_dv, nv, outs[1])
    return 0


# ==========================================================================================
# The algorithms as the driver reads them, and the wrappers
# ==========================================================================================
cdef Algorithm RNEA_DERIVATIVES = algorithm(
    b"qvaf", ("q", "v", "a", "fext"), (b"vv", b"vv", b"vv"), k_rnea_derivatives,
    size(nb=RD_PER_BODY, nv=RD_PER_DOF), size(nb=150, nv_depth=40))
cdef Algorithm INVERSE_MASS_MATRIX = algorithm(
    b"q", ("q",), (b"vv",), k_inverse_mass_matrix,
    size(nb=MI_PER_BODY, nv=MI_PER_DOF + 6, nd2=1, nv_depth=6), size(nb=100, nv2=15))
# scratch: qdd, three nv x nv matrices, then the largest of the three kernels' own
cdef Algorithm ABA_DERIVATIVES = algorithm(
    b"qvvf", ("q", "v", "tau", "fext"), (b"vv", b"vv", b"vv"), k_aba_derivatives,
    size(nb=max(RD_PER_BODY, MI_PER_BODY, ABA_PER_BODY), nv=1 + max(RD_PER_DOF, MI_PER_DOF + 6, 6),
         nd2=1, nv_depth=6, nv2=3),
    size(nb=400, nv_depth=40, nv2=15))


def rnea_derivatives(model, q, v, a, fext=None):
    """(dtau_dq, dtau_dv, dtau_da): the partial derivatives of rnea (compiled)."""
    cdef Call call
    cdef CompiledModel cm = prepare_call(&call, model)
    return run(model, cm, &call, RNEA_DERIVATIVES, (q, v, a, fext))


def aba_derivatives(model, q, v, tau, fext=None):
    """(dqdd_dq, dqdd_dv, dqdd_dtau): the partial derivatives of aba (compiled)."""
    cdef Call call
    cdef CompiledModel cm = prepare_call(&call, model)
    return run(model, cm, &call, ABA_DERIVATIVES, (q, v, tau, fext))


def inverse_mass_matrix(model, q):
    """M(q)^-1, directly in O(n^2) and exactly symmetric (compiled)."""
    cdef Call call
    cdef CompiledModel cm = prepare_call(&call, model)
    return run(model, cm, &call, INVERSE_MASS_MATRIX, (q,))
