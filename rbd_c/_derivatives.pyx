# cython: language_level=3
"""Compiled derivatives of the dynamics: RNEA and ABA derivatives, the inverse mass matrix.

The formulas are those of ``rbd.reference.derivatives`` (its docstring derives
them), evaluated in world axes: a world quantity of a subtree moves with the
perturbation's world column s directly, composites are plain sums, and the walks
up a body's ancestors are dot products with their world columns, no transforms.
"""
cimport cython
from libc.string cimport memset, memcpy

from rbd_c._kernels cimport act_force, motion_cross, force_cross, inertia_apply, inertia_act, velocity_variation
from rbd_c._model cimport CModel, Call, CompiledModel, prepare_call, run_args, Algorithm, algorithm, add_armature
from rbd_c._model import size
from rbd_c._joints cimport loop_placement, SINCOS_BLOCK
from rbd_c._passes cimport add6, sub6, dot6, child_placement, world_column, gravity_acceleration
from rbd_c._articulated cimport (sym6_from_inertia, sym6_matvec, sym6_rank1_sub_add, spd_inverse,
                                 articulated_reduce)
from rbd_c._dynamics cimport crba_world_terms, CRBA_PER_BODY, CRBA_OM, CRBA_YC
from rbd_c._passes cimport world_placements, center_root
from rbd_c._factor cimport rbd_ltdl_inverse, ltdl_solve, articulated_ltdl, LTDL_PER_BODY
from rbd_c._model cimport block_kernel_t, kernel_t, set_block, LANES, need_ancestors
from rbd_c._lanes cimport (rbd_lanes_model, rbd_lanes_set, rbd_lanes_best, lanes_model, lanes_tables, lanes_set,
                           lanes_placements, lanes_state, rbd_lanes_scatter, one_by_one)


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


cdef void _rd_forward(const Call* c, const double* q, const double* v, const double* a, const double* fext,
                     double* work) noexcept nogil:
    """The forward pass of the RNEA derivatives: each body's fields (RD_OM to RD_SYM: the
    subtree composites start as the body's own) and each dof's s, u, w, d.  a = NULL:
    no joint accelerations (the bias; see _rd_accelerate)."""
    cdef const CModel* m = c.m
    cdef int nb = m.nb, i, p, col, r, ic
    cdef double* dofs = work + RD_PER_BODY * nb
    cdef double* B
    cdef double* P
    cdef double* s
    cdef double Xl[16]
    cdef double ref[3]
    cdef double vJ[6]
    cdef double aJ[6]
    cdef double t[6]
    cdef double zero[6]
    cdef double a0[6]
    cdef double vp[6]
    memset(zero, 0, 6 * sizeof(double))
    gravity_acceleration(c, a0)
    cdef double sn[SINCOS_BLOCK]
    cdef double cs[SINCOS_BLOCK]
    for i in range(nb):
        B = work + RD_PER_BODY * i
        p = m.parents[i]
        P = work + RD_PER_BODY * p if p >= 0 else NULL
        loop_placement(m, i, q, sn, cs, Xl)
        if p < 0:
            center_root(i, Xl, ref)
        child_placement(P + RD_OM if p >= 0 else NULL, Xl, B + RD_OM)
        memset(vJ, 0, 6 * sizeof(double))
        memset(aJ, 0, 6 * sizeof(double))
        for col in range(m.nvj[i]):
            ic = m.v_idx[i] + col
            s = dofs + RD_PER_DOF * ic
            world_column(m, i, col, B + RD_OM, s + RD_S)
            for r in range(6):
                vJ[r] += s[RD_S + r] * v[ic]
            if a != NULL:
                for r in range(6):
                    aJ[r] += s[RD_S + r] * a[ic]
        memcpy(vp, P + RD_OV if p >= 0 else zero, 6 * sizeof(double))
        for r in range(6):
            B[RD_OV + r] = vp[r] + vJ[r]
        motion_cross(vp, vJ, t)  # v x vJ (= vp x vJ, without the rounding of vp + vJ)
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


cdef void _rd_backward(const CModel* m, double* work, double* dq, double* dv, double* M) noexcept nogil:
    """The backward pass of the RNEA derivatives, after _rd_forward: the composites
    (summed in place of the bodies') and each column against its body's ancestors.
    M = NULL: no mass matrix."""
    cdef int nb = m.nb, nv = m.nv, i, p, col, r, j, jc, ic
    cdef double* dofs = work + RD_PER_BODY * nb
    cdef double* B
    cdef double* P
    cdef double* s
    cdef double* o
    cdef double t[6]
    cdef double x[6]
    cdef double G1[6]
    cdef double G2[6]
    cdef double Pv[6]
    cdef double Pq[6]
    memset(dq, 0, nv * nv * sizeof(double))
    memset(dv, 0, nv * nv * sizeof(double))
    if M != NULL:
        memset(M, 0, nv * nv * sizeof(double))
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
                if M != NULL:
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
                    if M != NULL:
                        M[jc * nv + ic] = M[ic * nv + jc] = dot6(o + RD_S, G1)
                    dq[ic * nv + jc] = dot6(G2, o + RD_U) + dot6(G1, o + RD_W)
                    dv[ic * nv + jc] = dot6(G2, o + RD_S) + dot6(G1, o + RD_D)
                j = m.parents[j]
        p = m.parents[i]
        if p >= 0:
            P = work + RD_PER_BODY * p
            for r in range(RD_YC, RD_PER_BODY):  # Yc, B's symmetric part, momentum, force
                P[r] += B[r]
    if M != NULL:
        add_armature(m, M)


cdef int k_rnea_derivatives(const Call* c, const double** ins, double** outs, double* work) noexcept nogil:
    """dtau/dq, dtau/dv and M = dtau/da in one forward and one backward pass."""
    _rd_forward(c, ins[0], ins[1], ins[2], ins[3], work)
    _rd_backward(c.m, work, outs[0], outs[1], outs[2])
    return 0


# ---- batches: LANES samples per instruction (rbd_c/_lanes.h) ----------------------------
lanes_tables()
cdef int _best = rbd_lanes_best()


cdef int kb_rnea_derivatives(const Call* c, int n, const double** ins, const Py_ssize_t* size, double** outs,
                             const Py_ssize_t* osize, double* work) noexcept nogil:
    """The RNEA derivatives on a block: each lane writes its own three matrices (padded
    lanes into the scratch)."""
    cdef const CModel* m = c.m
    cdef rbd_lanes_model lm
    cdef Py_ssize_t nb = m.nb, nv = m.nv
    cdef double* X = work
    cdef double* Q = X + 12 * LANES * nb         # q (nq <= nb + nv rows)
    cdef const double* v
    cdef const double* a
    cdef const double* f
    cdef double* rest = lanes_state(n, ins, nb, nv, Q + LANES * (nb + nv), &v, &a, &f)
    cdef double* dq[LANES]
    cdef double* dv[LANES]
    cdef double* Ms[LANES]
    cdef int l
    for l in range(LANES):
        if l < n:
            dq[l] = outs[0] + l * osize[0]
            dv[l] = outs[1] + l * osize[1]
            Ms[l] = outs[2] + l * osize[2]
        else:
            dq[l] = rest
            dv[l] = rest + nv * nv
            Ms[l] = rest + 2 * nv * nv
    rest += 3 * nv * nv
    lanes_model(m, &lm)
    cdef const rbd_lanes_set* ks = lanes_set(_best)
    lanes_placements(ks, &lm, m, n, ins[0], size[0], X, Q)
    ks.rnea_derivatives(&lm, c.g, X, v, a, f, dq, dv, Ms, rest)
    return 0


# ==========================================================================================
# Inverse mass matrix
# ==========================================================================================
cdef enum:
    # Per body: the world placement and the articulated inertia in world axes (21).
    MI_OM = 0
    MI_IA = 16
    MI_PER_BODY = 37


cdef extern from *:
    """
    /* The column sweeps of k_inverse_mass_matrix over rows of nv numbers (P, P_parent,
       A, A_parent: 6 rows each), compiled for x86-64-v3 (AVX2 with FMA) and for the
       baseline, chosen at load time.  FMA may change the last bits between the two. */
    
    /* Backward, for a joint of k dofs over the columns of its subtree [v0, end): the
       joint's rows of M^-1 are D^-1 (E - S^T P), P_parent += P + U (those rows) when
       there is a parent, and P is cleared for the next body at this depth.  P's rows
       are w apart, P_parent's pw (each depth keeps only the columns its bodies reach);
       rows and x (k rows of scratch), nv. */
    RBD_FAST
    static void rbd_minv_backward(double* restrict P, Py_ssize_t w, double* restrict Pp, Py_ssize_t pw, int nv,
                                  int v0, int end, int k, const double* S, const double* U, const double* Dinv,
                                  double* restrict x, double* restrict rows) {
        if (k == 1 && Pp) {  /* the common case in one sweep */
            const double s0 = S[0], s1 = S[1], s2 = S[2], s3 = S[3], s4 = S[4], s5 = S[5], d = Dinv[0];
            const double u0 = U[0], u1 = U[1], u2 = U[2], u3 = U[3], u4 = U[4], u5 = U[5];
            double *P0 = P, *P1 = P + w, *P2 = P + 2 * w, *P3 = P + 3 * w, *P4 = P + 4 * w, *P5 = P + 5 * w;
            double *Q0 = Pp, *Q1 = Pp + pw, *Q2 = Pp + 2 * pw, *Q3 = Pp + 3 * pw, *Q4 = Pp + 4 * pw,
                   *Q5 = Pp + 5 * pw;
            for (int col = v0; col < end; col++) {
                double x = -d * (s0 * P0[col] + s1 * P1[col] + s2 * P2[col] + s3 * P3[col] + s4 * P4[col]
                                 + s5 * P5[col]);
                rows[col] = x;
                Q0[col] += P0[col] + u0 * x; Q1[col] += P1[col] + u1 * x; Q2[col] += P2[col] + u2 * x;
                Q3[col] += P3[col] + u3 * x; Q4[col] += P4[col] + u4 * x; Q5[col] += P5[col] + u5 * x;
                P0[col] = 0.0; P1[col] = 0.0; P2[col] = 0.0; P3[col] = 0.0; P4[col] = 0.0; P5[col] = 0.0;
            }
            /* the joint's own column: e_v0 (P is zero there: no child sees the joint's own force) */
            rows[v0] += d;
            for (int i = 0; i < 6; i++) Pp[i * pw + v0] += U[i] * d;
            for (int col = end; col < nv; col++) rows[col] = 0.0;  /* right of the subtree: the forward pass adds */
            return;
        }
        for (int r = 0; r < k; r++) {
            const double* o = S + 6 * r;
            double* xr = x + r * nv;
            for (int col = v0; col < end; col++)
                xr[col] = -(o[0] * P[col] + o[1] * P[w + col] + o[2] * P[2 * w + col] + o[3] * P[3 * w + col]
                            + o[4] * P[4 * w + col] + o[5] * P[5 * w + col]);
            xr[v0 + r] += 1.0;
        }
        for (int r = 0; r < k; r++) {
            double* o = rows + r * nv;
            const double* d = Dinv + k * r;
            for (int col = v0; col < end; col++) o[col] = d[0] * x[col];
            for (int l = 1; l < k; l++) {
                const double* xl = x + l * nv;
                for (int col = v0; col < end; col++) o[col] += d[l] * xl[col];
            }
            for (int col = end; col < nv; col++) o[col] = 0.0;  /* right of the subtree: the forward pass adds */
        }
        for (int i = 0; i < 6; i++) {
            double* Pi = P + i * w;
            if (Pp) {
                double* Qi = Pp + i * pw;
                for (int col = v0; col < end; col++) Qi[col] += Pi[col];
                for (int r = 0; r < k; r++) {
                    const double u = U[6 * r + i];
                    const double* o = rows + r * nv;
                    for (int col = v0; col < end; col++) Qi[col] += u * o[col];
                }
            }
            for (int col = v0; col < end; col++) Pi[col] = 0.0;
        }
    }

    /* Forward, for a joint of k dofs over the columns [v0, nv): its rows of M^-1 -=
       D^-1 U^T A_parent (when there is a parent) and, for a joint with children,
       A = A_parent + S (those rows).  A's rows are w apart, A_parent's pw; x: k rows
       of scratch. */
    RBD_FAST
    static void rbd_minv_forward(double* restrict A, Py_ssize_t w, const double* restrict Ap, Py_ssize_t pw,
                                 int nv, int v0, int k, const double* S, const double* U, const double* Dinv,
                                 double* restrict x, double* restrict rows, int has_children) {
        if (k == 1 && Ap) {  /* the common case in one sweep */
            const double s0 = S[0], s1 = S[1], s2 = S[2], s3 = S[3], s4 = S[4], s5 = S[5], d = Dinv[0];
            const double u0 = U[0], u1 = U[1], u2 = U[2], u3 = U[3], u4 = U[4], u5 = U[5];
            const double *B0 = Ap, *B1 = Ap + pw, *B2 = Ap + 2 * pw, *B3 = Ap + 3 * pw, *B4 = Ap + 4 * pw,
                         *B5 = Ap + 5 * pw;
            double *A0 = A, *A1 = A + w, *A2 = A + 2 * w, *A3 = A + 3 * w, *A4 = A + 4 * w, *A5 = A + 5 * w;
            if (!has_children) {
                for (int col = v0; col < nv; col++)
                    rows[col] -= d * (u0 * B0[col] + u1 * B1[col] + u2 * B2[col] + u3 * B3[col] + u4 * B4[col]
                                      + u5 * B5[col]);
                return;
            }
            for (int col = v0; col < nv; col++) {
                double y = rows[col] - d * (u0 * B0[col] + u1 * B1[col] + u2 * B2[col] + u3 * B3[col] + u4 * B4[col]
                                            + u5 * B5[col]);
                rows[col] = y;
                A0[col] = B0[col] + s0 * y; A1[col] = B1[col] + s1 * y; A2[col] = B2[col] + s2 * y;
                A3[col] = B3[col] + s3 * y; A4[col] = B4[col] + s4 * y; A5[col] = B5[col] + s5 * y;
            }
            return;
        }
        if (Ap) {
            for (int r = 0; r < k; r++) {
                const double* o = U + 6 * r;
                double* xr = x + r * nv;
                for (int col = v0; col < nv; col++)
                    xr[col] = o[0] * Ap[col] + o[1] * Ap[pw + col] + o[2] * Ap[2 * pw + col] + o[3] * Ap[3 * pw + col]
                              + o[4] * Ap[4 * pw + col] + o[5] * Ap[5 * pw + col];
            }
            for (int r = 0; r < k; r++) {
                double* o = rows + r * nv;
                for (int l = 0; l < k; l++) {
                    const double d = Dinv[k * r + l];
                    const double* xl = x + l * nv;
                    for (int col = v0; col < nv; col++) o[col] -= d * xl[col];
                }
            }
        }
        if (!has_children) return;
        for (int i = 0; i < 6; i++) {
            double* Ai = A + i * w;
            if (Ap) {
                const double* Bi = Ap + i * pw;
                for (int col = v0; col < nv; col++) Ai[col] = Bi[col];
            } else {
                for (int col = v0; col < nv; col++) Ai[col] = 0.0;
            }
            for (int r = 0; r < k; r++) {
                const double s = S[6 * r + i];
                const double* o = rows + r * nv;
                for (int col = v0; col < nv; col++) Ai[col] += s * o[col];
            }
        }
    }

    /* The lower triangle from the upper, in 8 x 8 tiles (a plain strided copy misses
       the cache on every store). */
    static void rbd_mirror_upper(double* M, int n) {
        for (int i0 = 0; i0 < n; i0 += 8)
            for (int j0 = 0; j0 <= i0; j0 += 8) {
                int i1 = i0 + 8 < n ? i0 + 8 : n;
                for (int i = i0; i < i1; i++) {
                    int j1 = j0 + 8 < i ? j0 + 8 : i;
                    for (int j = j0; j < j1; j++) M[i * n + j] = M[j * n + i];
                }
            }
    }
    """
    void rbd_minv_backward(double* P, Py_ssize_t w, double* Pp, Py_ssize_t pw, int nv, int v0, int end, int k,
                           const double* S, const double* U, const double* Dinv, double* x, double* rows) noexcept nogil
    void rbd_minv_forward(double* A, Py_ssize_t w, const double* Ap, Py_ssize_t pw, int nv, int v0, int k,
                          const double* S, const double* U, const double* Dinv, double* x, double* rows,
                          int has_children) noexcept nogil
    void rbd_mirror_upper(double* M, int n) noexcept nogil


cdef inline void _minv_level(const CModel* m, double* levels, int i, double** P, Py_ssize_t* w, double** Pp,
                             Py_ssize_t* pw) noexcept nogil:
    """Body i's 6 rows in k_minv_articulated's levels (indexed by column from its depth's
    first one on) and their width; its parent's (NULL at the root)."""
    cdef int d = m.depth[i] - 1
    w[0] = m.nv - m.level_start[d]
    P[0] = levels + m.level_at[d] - m.level_start[d]
    if m.parents[i] < 0:
        Pp[0] = NULL
        pw[0] = 0
    else:
        pw[0] = m.nv - m.level_start[d - 1]
        Pp[0] = levels + m.level_at[d - 1] - m.level_start[d - 1]


@cython.cdivision(True)
@cython.boundscheck(False)
@cython.wraparound(False)
cdef int k_minv_articulated(const Call* c, const double** ins, double** outs, double* work) noexcept nogil:
    """M^-1 by the articulated-body algorithm on every unit joint force at once, in world
    axes (see the reference's _inverse_mass_matrix_passes).  The forces passed up (P)
    and the accelerations passed down (A) of a body are only needed while its
    subtree is being processed: one block per depth of the tree holds them, as 6
    rows of the columns from that depth's first dof on (CModel.level_start: a body
    reaches only its own and later columns, so a chain needs half of 6 nv^2), so that
    every step is a loop over contiguous columns."""
    cdef const CModel* m = c.m
    cdef const double* q = ins[0]
    cdef double* Minv = outs[0]
    cdef int nb = m.nb, nv = m.nv, i, p, k, col, r, v0, end
    cdef double* S = work + MI_PER_BODY * nb          # world motion columns, 6 per dof
    cdef double* U = S + 6 * nv                       # U = IA S in world axes, 6 per dof
    cdef double* Dinv = U + 6 * nv                    # nv_i x nv_i per body
    cdef double* rows = Dinv + m.nd2                  # k rows of nv: the sweeps' scratch
    cdef double* levels = rows + 6 * nv               # 6 rows per depth (CModel.level_at)
    cdef double* B
    cdef double* Di
    cdef double* Pi
    cdef double* Pp
    cdef Py_ssize_t w, pw
    cdef double* o
    cdef double Xl[16]
    cdef double Yw[10]
    cdef double Ia[21]
    cdef double W[36]
    cdef double D[36]
    cdef double L[36]
    memset(levels, 0, 6 * m.minv_levels * sizeof(double))
    cdef double sn[SINCOS_BLOCK]
    cdef double cs[SINCOS_BLOCK]
    for i in range(nb):  # world placements, columns and inertias: the recursion needs no transforms
        B = work + MI_PER_BODY * i
        p = m.parents[i]
        loop_placement(m, i, q, sn, cs, Xl)
        child_placement(work + MI_PER_BODY * p + MI_OM if p >= 0 else NULL, Xl, B + MI_OM)
        for r in range(m.nvj[i]):
            world_column(m, i, r, B + MI_OM, S + 6 * (m.v_idx[i] + r))
        inertia_act(B + MI_OM, m.inertias + 10 * i, Yw)
        sym6_from_inertia(Yw, B + MI_IA)

    # ---- backward: articulated inertias; the rows' subtree parts ------------------------
    for i in range(nb - 1, -1, -1):
        B = work + MI_PER_BODY * i
        p = m.parents[i]
        k = m.nvj[i]
        v0 = m.v_idx[i]
        end = m.v_idx[m.subtree_end[i]] if m.subtree_end[i] < nb else nv
        Di = Dinv + m.d2_idx[i]
        for col in range(k):  # U = IA S and D = S^T U + diag(armature), D^-1
            sym6_matvec(B + MI_IA, S + 6 * (v0 + col), U + 6 * (v0 + col))
            for r in range(k):
                D[k * r + col] = dot6(S + 6 * (v0 + r), U + 6 * (v0 + col))
            D[k * col + col] += m.armature[v0 + col]
        if k == 1:
            if not D[0] > m.singular_tol[i]:  # (NaN included)
                return 1 + i
            Di[0] = 1.0 / D[0]
        elif spd_inverse(D, k, Di, L, m.singular_tol[i]):
            return 1 + i
        _minv_level(m, levels, i, &Pi, &w, &Pp, &pw)
        rbd_minv_backward(Pi, w, Pp, pw, nv, v0, end, k, S + 6 * v0, U + 6 * v0, Di, rows, Minv + v0 * nv)
        if p >= 0:  # the parent's articulated inertia (world axes: a plain sum)
            o = work + MI_PER_BODY * p + MI_IA
            if k == 1:
                sym6_rank1_sub_add(o, B + MI_IA, U + 6 * v0, Di[0])
            else:
                articulated_reduce(B + MI_IA, U + 6 * v0, Di, k, Ia, W)
                for r in range(21):
                    o[r] += Ia[r]

    # ---- forward: the accelerations, for the upper triangle -----------------------------
    for i in range(nb):
        p = m.parents[i]
        _minv_level(m, levels, i, &Pi, &w, &Pp, &pw)  # A_i's rows, A_parent's
        rbd_minv_forward(Pi, w, Pp, pw, nv, m.v_idx[i], m.nvj[i], S + 6 * m.v_idx[i], U + 6 * m.v_idx[i],
                         Dinv + m.d2_idx[i], rows, Minv + m.v_idx[i] * nv, m.subtree_end[i] > i + 1)
    rbd_mirror_upper(Minv, nv)
    return 0


cdef int k_minv_factored(const Call* c, const double** ins, double** outs, double* work) noexcept nogil:
    """M^-1 through the factor M = L^T D L along the tree (articulated_ltdl, built from
    the articulated inertias without forming M), inverted in place in the output
    (rbd_ltdl_inverse)."""
    cdef const CModel* m = c.m
    cdef double* lrow = work + CRBA_PER_BODY * m.nb + 6 * m.nv   # after CRBA's world terms; then IA
    cdef int status
    world_placements(m, ins[0], work + CRBA_OM * m.nb, True)
    crba_world_terms(m, work)
    status = articulated_ltdl(m, work + CRBA_YC * m.nb, 10, work + CRBA_PER_BODY * m.nb, 6, lrow + m.nv, outs[0])
    if status:
        return 1 + m.dof_bodies[status - 1]
    rbd_ltdl_inverse(outs[0], m.nv, m.dof_ancestors, m.dof_ancestors_start, lrow)
    return 0


cdef int k_inverse_mass_matrix(const Call* c, const double** ins, double** outs, double* work) noexcept nogil:
    """M^-1 in the form that costs this model less (CModel.minv_factored): factored
    along the tree for shallow trees, the articulated-body sweeps for deep chains."""
    if c.m.minv_factored:
        return k_minv_factored(c, ins, outs, work)
    return k_minv_articulated(c, ins, outs, work)


cdef int kb_inverse_mass_matrix(const Call* c, int n, const double** ins, const Py_ssize_t* size, double** outs,
                                const Py_ssize_t* osize, double* work) noexcept nogil:
    """M^-1 on a block: the factored form in lanes (rbd_minv_lanes); the articulated
    form, and a block where some lane's pivot is singular, one sample at a time (the
    errors are the single calls')."""
    cdef const CModel* m = c.m
    cdef rbd_lanes_model lm
    cdef Py_ssize_t nb = m.nb, nv = m.nv
    cdef double* X = work
    cdef double* Q = X + 12 * LANES * nb         # q (nq <= nb + nv rows)
    cdef double* Z = Q + LANES * (nb + nv)       # M^-1 in lanes (nv x nv rows)
    cdef double* rest = Z + LANES * nv * nv
    cdef const rbd_lanes_set* ks
    if m.minv_factored:
        lanes_model(m, &lm)
        ks = lanes_set(_best)
        lanes_placements(ks, &lm, m, n, ins[0], size[0], X, Q)
        if ks.minv(&lm, X, Z, rest) == 0:
            rbd_lanes_scatter(n, Z, nv * nv, outs[0], osize[0])
            return 0
    return one_by_one(k_inverse_mass_matrix, c, n, 1, ins, size, 1, outs, osize, work)


# ==========================================================================================
# ABA derivatives
# ==========================================================================================
cdef extern from *:
    """
    /* O = -M^-1 T for _minus_products, O[i][c] = -sum_r M^-1[i][r] T[r][c], by panels of
       RBD_NP_NC columns of T, copied once into blocks of 8 columns (Tp: each row's 8 numbers
       together, zero past the last column), and tiles of O of 4 rows i x 8 columns whose
       sums stay in registers over all r.  Every row of M^-1 is read along r (4 streams at
       a time) and a panel of T from cache: a deep tree's dense product runs from cache, not
       from memory (a column of M^-1 at a time, it did 15x slower on a 2000-body chain).
       Each sum starts from +0 (an empty one is +0, not -0). */
    #define RBD_NP_NC 32
    #define RBD_NP_BLOCKS (RBD_NP_NC / 8)

    /* One tile: rows i0..i0+nu-1 (nu <= 4) and columns c0..c0+mc-1 (mc <= 8) of O, the
       sums over the n ranges of rows [starts[g], stops[g]) of -M^-1[i][r] Tp[r][k]. */
    RBD_ALWAYS_INLINE void rbd_np_tile(const double* Minv, const double* restrict tp, int n, const int* starts,
                                       const int* stops, int nv, int i0, int nu, int c0, int mc, double* restrict O) {
        const double* m[4];
        for (int u = 0; u < 4; u++)  /* (rows past the last: a copy of it, not stored) */
            m[u] = Minv + (size_t)(u < nu ? i0 + u : i0) * nv;
        double tile[4][8];
    #if defined(__GNUC__) || defined(__clang__)
        rbd_v4 acc[4][2] = {{{0.0}}};
        for (int g = 0; g < n; g++)
            for (int r = starts[g]; r < stops[g]; r++) {
                const rbd_v4 t0 = rbd_load4(tp + 8 * r), t1 = rbd_load4(tp + 8 * r + 4);
                for (int u = 0; u < 4; u++) {
                    acc[u][0] -= m[u][r] * t0;
                    acc[u][1] -= m[u][r] * t1;
                }
            }
        memcpy(tile, acc, sizeof acc);
    #else
        for (int u = 0; u < 4; u++)
            for (int k = 0; k < 8; k++)
                tile[u][k] = 0.0;
        for (int g = 0; g < n; g++)
            for (int r = starts[g]; r < stops[g]; r++)
                for (int u = 0; u < 4; u++)
                    for (int k = 0; k < 8; k++)
                        tile[u][k] -= m[u][r] * tp[8 * r + k];
    #endif
        for (int u = 0; u < nu; u++)
            memcpy(O + (size_t)(i0 + u) * nv + c0, tile[u], mc * sizeof(double));
    }

    /* Columns p0..p0+ncols-1 (ncols <= RBD_NP_NC) of O1 = -M^-1 T1 and O2 = -M^-1 T2, from
       each block b's ranges of rows r (nranges[b] of them, at starts and stops + b * nr)
       where its columns of T may be non-zero.  Tp: room for 2 x ceil(ncols / 8) x nv x 8. */
    RBD_FAST
    static void rbd_neg_products_panel(int nv, const double* Minv, const double* T1, const double* T2, int p0,
                                       int ncols, const int* nranges, const int* starts, const int* stops, int nr,
                                       double* Tp, double* O1, double* O2) {
        const int nblocks = (ncols + 7) / 8;
        double* Tp2 = Tp + (size_t)nblocks * nv * 8;
        for (int b = 0; b < nblocks; b++)
            for (int g = 0; g < nranges[b]; g++)
                for (int r = starts[b * nr + g]; r < stops[b * nr + g]; r++)
                    for (int k = 0; k < 8; k++) {
                        const int c = 8 * b + k;
                        const size_t at = (size_t)r * nv + p0 + c;
                        Tp[((size_t)b * nv + r) * 8 + k] = c < ncols ? T1[at] : 0.0;
                        Tp2[((size_t)b * nv + r) * 8 + k] = c < ncols ? T2[at] : 0.0;
                    }
        for (int i0 = 0; i0 < nv; i0 += 4) {
            const int nu = nv - i0 < 4 ? nv - i0 : 4;
            for (int b = 0; b < nblocks; b++) {
                const int mc = ncols - 8 * b < 8 ? ncols - 8 * b : 8;
                const int* s = starts + b * nr;
                const int* e = stops + b * nr;
                rbd_np_tile(Minv, Tp + (size_t)b * nv * 8, nranges[b], s, e, nv, i0, nu, p0 + 8 * b, mc, O1);
                rbd_np_tile(Minv, Tp2 + (size_t)b * nv * 8, nranges[b], s, e, nv, i0, nu, p0 + 8 * b, mc, O2);
            }
        }
    }
    """
    enum:
        RBD_NP_NC
        RBD_NP_BLOCKS
    void rbd_neg_products_panel(int nv, const double* Minv, const double* T1, const double* T2, int p0, int ncols,
                                const int* nranges, const int* starts, const int* stops, int nr, double* Tp,
                                double* O1, double* O2) noexcept nogil


# _minus_products' scratch: Tp (2 RBD_NP_NC doubles a dof), then as ints each block's
# ranges (at most nv / 2 + 1 starts and as many stops), their numbers, and a mask of rows
cdef enum:
    MINUS_PRODUCTS_PER_DOF = 2 * RBD_NP_NC + RBD_NP_BLOCKS + 1
    MINUS_PRODUCTS_CONSTANT = 2 * RBD_NP_BLOCKS + 1


cdef inline void _minus_products(const CModel* m, const double* Minv, const double* T1, const double* T2,
                                 double* O1, double* O2, double* scratch) noexcept nogil:
    """O1 = -M^-1 T1 and O2 = -M^-1 T2 for derivatives T of the torques, by panels of
    columns (rbd_neg_products_panel).  Column c of T (a dof of body b) is zero outside the
    rows of b's ancestors and subtree: each block of eight columns sums over the union of
    its columns' rows only (a superset adds exact zeros), as ranges of contiguous rows.
    scratch: MINUS_PRODUCTS_PER_DOF doubles a dof and MINUS_PRODUCTS_CONSTANT."""
    cdef int nv = m.nv, nr = nv // 2 + 1, b, j, c, c0, p0, ncols, stop, r, n
    cdef double* Tp = scratch
    cdef int* starts = <int*>(scratch + 2 * RBD_NP_NC * nv)
    cdef int* stops = starts + RBD_NP_BLOCKS * nr
    cdef int* nranges = stops + RBD_NP_BLOCKS * nr
    cdef char* rows = <char*>(nranges + RBD_NP_BLOCKS)
    p0 = 0
    while p0 < nv:
        ncols = min(RBD_NP_NC, nv - p0)
        for c0 in range(p0, p0 + ncols, 8):
            memset(rows, 0, nv)
            b = -1
            for c in range(c0, min(c0 + 8, p0 + ncols)):
                if m.dof_bodies[c] == b:
                    continue
                b = m.dof_bodies[c]
                stop = m.v_idx[m.subtree_end[b]] if m.subtree_end[b] < m.nb else nv
                memset(rows + m.v_idx[b], 1, stop - m.v_idx[b])
                j = m.parents[b]
                while j >= 0:
                    memset(rows + m.v_idx[j], 1, m.nvj[j])
                    j = m.parents[j]
            b = (c0 - p0) // 8
            n = 0
            r = 0
            while r < nv:
                if rows[r]:
                    starts[b * nr + n] = r
                    while r < nv and rows[r]:
                        r += 1
                    stops[b * nr + n] = r
                    n += 1
                else:
                    r += 1
            nranges[b] = n
        rbd_neg_products_panel(nv, Minv, T1, T2, p0, ncols, nranges, starts, stops, nr, Tp, O1, O2)
        p0 += ncols


cdef void _rd_accelerate(const CModel* m, const double* qdd, double* work, double* da) noexcept nogil:
    """After _rd_forward with no joint accelerations: add those of qdd.  Everything they
    change is linear in them: each body's acceleration grows by da_i = da_parent + S_i
    qdd_i (world axes), its force by Y_i da_i, each dof's w by da_parent x s.  da: 6 per
    body."""
    cdef int nb = m.nb, i, p, col, r, ic
    cdef double* dofs = work + RD_PER_BODY * m.nb
    cdef double* B
    cdef double* s
    cdef double t[6]
    for i in range(nb):
        B = work + RD_PER_BODY * i
        p = m.parents[i]
        if p >= 0:
            memcpy(da + 6 * i, da + 6 * p, 6 * sizeof(double))
            for col in range(m.nvj[i]):  # w = a_parent x s + ...
                s = dofs + RD_PER_DOF * (m.v_idx[i] + col)
                motion_cross(da + 6 * p, s + RD_S, t)
                add6(s + RD_W, t)
        else:
            memset(da + 6 * i, 0, 6 * sizeof(double))
        for col in range(m.nvj[i]):
            ic = m.v_idx[i] + col
            s = dofs + RD_PER_DOF * ic
            for r in range(6):
                da[6 * i + r] += s[RD_S + r] * qdd[ic]
        add6(B + RD_OA, da + 6 * i)
        inertia_apply(B + RD_YC, da + 6 * i, t)
        add6(B + RD_F, t)


cdef void _torque_residual(const CModel* m, const double* rd, const double* tau, double* F, double* out) noexcept nogil:
    """out = tau - S^T (each subtree's sum of the forward pass's body forces): tau - h after
    _rd_forward without accelerations, tau - (h + M qdd) once _rd_accelerate added qdd's.
    F: 6 per body of scratch."""
    cdef const double* dofs = rd + RD_PER_BODY * m.nb
    cdef int i, p, col, ic
    for i in range(m.nb):
        memcpy(F + 6 * i, rd + RD_PER_BODY * i + RD_F, 6 * sizeof(double))
    for i in range(m.nb - 1, -1, -1):
        for col in range(m.nvj[i]):
            ic = m.v_idx[i] + col
            out[ic] = tau[ic] - dot6(dofs + RD_PER_DOF * ic + RD_S, F + 6 * i)
        p = m.parents[i]
        if p >= 0:
            add6(F + 6 * p, F + 6 * i)


cdef void _times_minv(int nv, const double* Minv, const double* x, double* out) noexcept nogil:
    cdef int r, l
    cdef double acc
    for r in range(nv):
        acc = 0.0
        for l in range(nv):
            acc += Minv[r * nv + l] * x[l]
        out[r] = acc


cdef int k_aba_derivatives(const Call* c, const double** ins, double** outs, double* work) noexcept nogil:
    """One forward pass of the RNEA derivatives without joint accelerations gives the
    bias torques h and (through CRBA's composite step) M; qdd = M^-1 (tau - h) through
    M's factor, which then gives M^-1; the accelerations of qdd are added to the forward
    pass, the backward pass gives dtau/dq and dtau/dv, and dqdd/dx = -M^-1 dtau/dx.
    Deep chains take M^-1 from the articulated-body sweeps instead (see
    k_inverse_mass_matrix), and qdd = M^-1 (tau - h) with one step of refinement: the
    explicit inverse's product is not backward stable, and dqdd/dq amplifies qdd's error
    (by 1e3..1e5 on 200-body chains before the step)."""
    cdef const CModel* m = c.m
    cdef int nb = m.nb, nv = m.nv, status, r
    cdef double* rd = work                                        # _rd_forward's fields
    cdef double* dofs = rd + RD_PER_BODY * nb
    cdef double* F = dofs + RD_PER_DOF * nv                       # subtree bias forces; then da
    cdef double* qdd = F + 6 * nb
    cdef double* dtau_dq = qdd + nv
    cdef double* dtau_dv = dtau_dq + nv * nv
    cdef double* rest = dtau_dv + nv * nv                          # the factor's or M^-1's; then the products'
    cdef double* Minv = outs[2]
    _rd_forward(c, ins[0], ins[1], NULL, ins[3], rd)
    _torque_residual(m, rd, ins[2], F, qdd)  # qdd <- tau - h
    if m.minv_factored:  # (the bodies' world inertias and columns: still the forward pass's)
        status = articulated_ltdl(m, rd + RD_YC, RD_PER_BODY, dofs + RD_S, RD_PER_DOF, rest, Minv)
        if status:
            return 1 + m.dof_bodies[status - 1]
        ltdl_solve(m, Minv, qdd)
        rbd_ltdl_inverse(Minv, nv, m.dof_ancestors, m.dof_ancestors_start, rest)
        _rd_accelerate(m, qdd, rd, F)
    else:
        status = k_minv_articulated(c, ins, outs + 2, rest)
        if status:
            return status
        memcpy(rest, qdd, nv * sizeof(double))
        _times_minv(nv, Minv, rest, qdd)
        _rd_accelerate(m, qdd, rd, F)  # (linear in qdd: a second call adds the correction's share)
        _torque_residual(m, rd, ins[2], F, rest)  # tau - (h + M qdd), armature's share apart
        if m.has_armature:
            for r in range(nv):
                rest[r] -= m.armature[r] * qdd[r]
        _times_minv(nv, Minv, rest, rest + nv)
        _rd_accelerate(m, rest + nv, rd, F)
        for r in range(nv):
            qdd[r] += rest[nv + r]
    _rd_backward(m, rd, dtau_dq, dtau_dv, NULL)
    _minus_products(m, Minv, dtau_dq, dtau_dv, outs[0], outs[1], rest)
    return 0


cdef int kb_aba_derivatives(const Call* c, int n, const double** ins, const Py_ssize_t* size, double** outs,
                            const Py_ssize_t* osize, double* work) noexcept nogil:
    """The ABA derivatives on a block, from the lanes kernels: M^-1 (rbd_minv_lanes), the
    bias torques (RNEA), qdd = M^-1 (tau - h), the RNEA derivatives at qdd, then each
    lane's products dqdd/dx = -M^-1 dtau/dx (_minus_products).  Articulated-form models
    and a block with a singular lane run one sample at a time."""
    cdef const CModel* m = c.m
    if not m.minv_factored:
        return one_by_one(k_aba_derivatives, c, n, 4, ins, size, 3, outs, osize, work)
    cdef rbd_lanes_model lm
    cdef Py_ssize_t nb = m.nb, nv = m.nv, r
    cdef double* X = work
    cdef double* Q = X + 12 * LANES * nb                  # q (nq <= nb + nv rows)
    cdef const double* v
    cdef const double* tau
    cdef const double* f
    cdef double* h = lanes_state(n, ins, nb, nv, Q + LANES * (nb + nv), &v, &tau, &f)
    cdef double* qdd = h + LANES * nv
    cdef double* Z = qdd + LANES * nv                     # M^-1 in lanes
    cdef double* T = Z + LANES * nv * nv                  # each lane's dtau/dq, dtau/dv
    cdef double* rest = T + 2 * LANES * nv * nv          # the lanes kernels' rows; then the products'
    cdef double* dq[LANES]
    cdef double* dv[LANES]
    cdef int l
    cdef const rbd_lanes_set* ks
    lanes_model(m, &lm)
    ks = lanes_set(_best)
    lanes_placements(ks, &lm, m, n, ins[0], size[0], X, Q)
    if ks.minv(&lm, X, Z, rest) != 0:
        return one_by_one(k_aba_derivatives, c, n, 4, ins, size, 3, outs, osize, work)
    ks.rnea(&lm, c.g, X, v, NULL, f, h, rest)
    for r in range(nv * LANES):
        h[r] = tau[r] - h[r]
    ks.matvec(nv, Z, h, qdd)
    # one step of refinement (M^-1's product is not backward stable; dqdd/dq amplifies its
    # error): qdd += M^-1 (tau - (h + M qdd)), T's rows as scratch until the derivatives
    ks.rnea(&lm, c.g, X, v, qdd, f, T, rest)
    for r in range(nv * LANES):
        T[r] = tau[r] - T[r]
    ks.matvec(nv, Z, T, T + LANES * nv)
    for r in range(nv * LANES):
        qdd[r] += T[LANES * nv + r]
    for l in range(LANES):
        dq[l] = T + (2 * l) * nv * nv
        dv[l] = T + (2 * l + 1) * nv * nv
    ks.rnea_derivatives(&lm, c.g, X, v, qdd, f, dq, dv, NULL, rest)  # (M: not needed)
    rbd_lanes_scatter(n, Z, nv * nv, outs[2], osize[2])
    for l in range(n):
        _minus_products(m, outs[2] + l * osize[2], dq[l], dv[l], outs[0] + l * osize[0], outs[1] + l * osize[1], rest)
    return 0


# ==========================================================================================
# The algorithms as the driver reads them, and the wrappers
# ==========================================================================================
cdef Algorithm RNEA_DERIVATIVES = algorithm(
    b"qvaf", ("q", "v", "a", "fext"), (b"vv", b"vv", b"vv"), k_rnea_derivatives,
    size(nb=RD_PER_BODY, nv=RD_PER_DOF), size(nb=150, nv_depth=40))
# a block: placements, q, v, a, fext in lanes, the padded lanes' matrices, the kernel's rows
set_block(RNEA_DERIVATIVES, kb_rnea_derivatives, size(nb=75 * LANES, nv=27 * LANES, nv2=3), stage=True)
# scratch: the larger of the two forms' (the factored one: CRBA's world terms, a row of
# L (nv), then the factor's articulated inertias)
cdef Algorithm INVERSE_MASS_MATRIX = algorithm(
    b"q", ("q",), (b"vv",), k_inverse_mass_matrix,
    size(nb=max(MI_PER_BODY, CRBA_PER_BODY + LTDL_PER_BODY), nv=18, nd2=1, levels=6), size(nb=100, nv2=15))
# a block: placements, q and M^-1 in lanes, the lanes kernel's rows (or one sample's scratch)
set_block(INVERSE_MASS_MATRIX, kb_inverse_mass_matrix,
          size(nb=56 * LANES + max(MI_PER_BODY, CRBA_PER_BODY + LTDL_PER_BODY), nv=8 * LANES + 18, nd2=1,
               levels=6, nv2=LANES))
# scratch: the RNEA derivatives' fields, the subtree forces, qdd, two nv x nv matrices,
# then the larger of the articulated M^-1's scratch and the factor's (LTDL_PER_BODY <=
# MI_PER_BODY; then the inverse's nv), and after them _minus_products' (the sum: simpler
# than the largest, and small beside the matrices)
cdef Algorithm ABA_DERIVATIVES = algorithm(
    b"qvvf", ("q", "v", "tau", "fext"), (b"vv", b"vv", b"vv"), k_aba_derivatives,
    size(constant=MINUS_PRODUCTS_CONSTANT, nb=RD_PER_BODY + 6 + MI_PER_BODY,
         nv=RD_PER_DOF + 1 + 18 + MINUS_PRODUCTS_PER_DOF, nd2=1, levels=6, nv2=2),
    size(nb=400, nv_depth=40, nv2=15))
# a block: placements, q, v, tau, fext, h, qdd and M^-1 in lanes, each lane's three
# matrices, then the lanes kernels' rows (or one sample's scratch, from the start)
set_block(ABA_DERIVATIVES, kb_aba_derivatives,
          size(constant=MINUS_PRODUCTS_CONSTANT, nb=75 * LANES + RD_PER_BODY + 6 + MI_PER_BODY,
               nv=29 * LANES + RD_PER_DOF + 1 + 18 + 2 + MINUS_PRODUCTS_PER_DOF, nd2=1, levels=6,
               nv2=4 * LANES + 6), stage=True)


def rnea_derivatives(model, q, v, a, fext=None, *, out=None):
    """(dtau_dq, dtau_dv, dtau_da): the partial derivatives of rnea (compiled)."""
    cdef Call call
    cdef CompiledModel cm = prepare_call(&call, model)
    return run_args(model, cm, &call, RNEA_DERIVATIVES, out, q, v, a, fext)


def aba_derivatives(model, q, v, tau, fext=None, *, out=None):
    """(dqdd_dq, dqdd_dv, dqdd_dtau): the partial derivatives of aba (compiled)."""
    cdef Call call
    cdef CompiledModel cm = prepare_call(&call, model)
    if cm.m.minv_factored:
        need_ancestors(cm)
    return run_args(model, cm, &call, ABA_DERIVATIVES, out, q, v, tau, fext)


def _inverse_mass_matrix_form(model):
    """Which form inverse_mass_matrix takes on this model: "factored" or "articulated"
    (for the tests, which cover both)."""
    cdef Call call
    cdef CompiledModel cm = prepare_call(&call, model)
    return "factored" if cm.m.minv_factored else "articulated"


def inverse_mass_matrix(model, q, *, out=None):
    """M(q)^-1, directly in O(n^2) and exactly symmetric (compiled)."""
    cdef Call call
    cdef CompiledModel cm = prepare_call(&call, model)
    if cm.m.minv_factored:
        need_ancestors(cm)
    return run_args(model, cm, &call, INVERSE_MASS_MATRIX, out, q)

# the public name of each algorithm (what a model with mimic joints is run through: rbd._coupled)
RNEA_DERIVATIVES.name = "rnea_derivatives"
INVERSE_MASS_MATRIX.name = "inverse_mass_matrix"
ABA_DERIVATIVES.name = "aba_derivatives"
