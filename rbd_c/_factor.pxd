# cython: language_level=3
"""M = L^T D L along the tree, in C: the factor (no fill-in: each dof's row of L is
nonzero only at its ancestors' dofs; articulated_ltdl, at the end), M^-1 through it and
solves with it, walking each dof's chain of ancestors.  Used by inverse_mass_matrix (its
factored form), the ABA derivatives and the contact dynamics.

``RBD_FAST`` (_fast.h) compiles a function for x86-64-v3 (AVX2 with FMA) and for the
baseline, chosen when the module loads (FMA may change the last bits between the two)."""
from rbd_c._model cimport CModel

cdef enum:
    LTDL_PER_BODY = 21  # articulated_ltdl's scratch: one packed articulated inertia per body

cdef extern from "_fast.h":  # RBD_FAST
    pass

cdef extern from *:
    """
    #include "_sym6.h"

    /* articulated_ltdl's factor (see there), with the model's arrays spelled out.  The
       symmetric 6x6 IA is packed as its 21 upper entries row by row (rbd_sym6).  Packed
       (dinv not NULL): D^-1 into dinv and row d of L into Z from ancestors_start[d], one
       number per ancestor, the farthest first (articulated_ltdl_packed). */
    RBD_ALWAYS_INLINE int rbd_articulated_ltdl_in(
            int nb, int nv, const int* parents, const int* v_idx, const int* nvj, const int* ancestors,
            const int* ancestors_start, const double* armature, const double* tol, const double* Y, int y_stride,
            const double* J, int j_stride, double* restrict IA, double* restrict Z, double* restrict dinv) {
        for (int i = 0; i < nb; i++)  /* each body's own inertia [m, h, I] as a 6x6 */
            rbd_sym6_from_inertia(Y + (long)y_stride * i, IA + 21 * i);
        for (int i = nb - 1; i >= 0; i--) {
            double* restrict S = IA + 21 * i;
            for (int d = v_idx[i] + nvj[i] - 1; d >= v_idx[i]; d--) {
                const double* s = J + (long)j_stride * d;
                double U[6];
                rbd_sym6_matvec(S, s, U);
                double pivot = s[0] * U[0] + s[1] * U[1] + s[2] * U[2] + s[3] * U[3] + s[4] * U[4] + s[5] * U[5];
                if (armature != NULL) pivot += armature[d];
                if (!(pivot > tol[i])) return 1 + d;
                const double inverse = 1.0 / pivot;
                double* zd = Z + (long)d * nv;
                if (dinv != NULL)
                    dinv[d] = inverse;
                else
                    zd[d] = inverse;
                for (int t = ancestors_start[d]; t < ancestors_start[d + 1]; t++) {
                    const double* sa = J + (long)j_stride * ancestors[t];
                    const double l = (sa[0] * U[0] + sa[1] * U[1] + sa[2] * U[2] + sa[3] * U[3] + sa[4] * U[4]
                                      + sa[5] * U[5]) * inverse;
                    if (dinv != NULL)  /* (ancestors: the nearest first) */
                        Z[ancestors_start[d] + ancestors_start[d + 1] - 1 - t] = l;
                    else
                        zd[ancestors[t]] = l;
                }
                if (d > v_idx[i] || parents[i] < 0)
                    rbd_sym6_rank1_sub(S, U, inverse);  /* IA -= U U^T / D */
                else  /* the body's last dof: the parent's IA += IA - U U^T / D */
                    rbd_sym6_rank1_sub_add(IA + 21 * parents[i], S, U, inverse);
            }
        }
        return 0;
    }

    /* (one copy for each form, with no test of dinv per number) */
    RBD_FAST
    static int rbd_articulated_ltdl(int nb, int nv, const int* parents, const int* v_idx, const int* nvj,
                                    const int* ancestors, const int* ancestors_start, const double* armature,
                                    const double* tol, const double* Y, int y_stride, const double* J, int j_stride,
                                    double* IA, double* Z, double* dinv) {
        if (dinv != NULL)
            return rbd_articulated_ltdl_in(nb, nv, parents, v_idx, nvj, ancestors, ancestors_start, armature, tol, Y,
                                           y_stride, J, j_stride, IA, Z, dinv);
        return rbd_articulated_ltdl_in(nb, nv, parents, v_idx, nvj, ancestors, ancestors_start, armature, tol, Y,
                                       y_stride, J, j_stride, IA, Z, NULL);
    }

    /* sum_j lrow[j] x[anc[j] stride] over a dof's n ancestors, in two sums (even and odd
       ancestors): one chain of dependent FMAs was 15% of Talos's inverse (the diagonal,
       which the next row waits for) */
    static inline double rbd_ancestors_dot(int n, const double* lrow, const int* anc, const double* x,
                                           long stride) {
        double even = 0.0, odd = 0.0;
        int j = 0;
        for (; j + 1 < n; j += 2) {
            even += lrow[j] * x[anc[j] * stride];
            odd += lrow[j + 1] * x[anc[j + 1] * stride];
        }
        if (j < n) even += lrow[j] * x[anc[j] * stride];
        return even + odd;
    }

    #if defined(__GNUC__) || defined(__clang__)
    /* zk[i0..i0+4W-1] = -sum_j lrow[j] Z[anc[j]][i0..], subtracted from +0 (an empty sum
       is +0), W 4-wide sums in registers */
    static inline __attribute__((always_inline)) void rbd_row_combination(
            const int W, int n, const double* lrow, const int* anc, const double* Z, int nv, int i0, double* zk) {
        rbd_v4 acc[8] = {{0.0}};
        for (int j = 0; j < n; j++) {
            const double* zj = Z + (long)anc[j] * nv + i0;
            for (int w = 0; w < W; w++)
                acc[w] -= lrow[j] * rbd_load4(zj + 4 * w);
        }
        memcpy(zk + i0, acc, W * sizeof acc[0]);
    }
    #endif

    /* Z = M^-1 from the factor of articulated_ltdl, in place, row by row from the top: Z L^T =
       L^-1 D^-1 is lower triangular with diagonal D^-1, so for i < k, Z[k, i] = -sum
       over the ancestors j of k of L[k, j] Z[j, i] (rows already known, read whole),
       and Z[k, k] = D_k^-1 - sum_j L[k, j] Z[k, j].  Each row is mirrored into its
       column when finished: later rows read it there.  lrow: nv doubles. */
    RBD_FAST
    static void rbd_ltdl_inverse(double* Z, int nv, const int* ancestors, const int* ancestors_start,
                                 double* lrow) {
        for (int k = 0; k < nv; k++) {
            double* zk = Z + (long)k * nv;
            const int* anc = ancestors + ancestors_start[k];
            const int n = ancestors_start[k + 1] - ancestors_start[k];
            for (int j = 0; j < n; j++) lrow[j] = zk[anc[j]];  /* L's row k, before Z's row k replaces it */
            /* zk[i] = -sum_j lrow[j] Z[anc[j]][i], i < k: up to 32 columns at a time, summed
               in registers over all the ancestors (one independent sum per 4 columns, so
               that the FMAs' latency overlaps) and written once */
            int i0 = 0;
    #if defined(__GNUC__) || defined(__clang__)
            while (i0 + 4 <= k) {
                const int w = (k - i0) / 4 < 8 ? (k - i0) / 4 : 8;
                switch (w) {
                case 8: rbd_row_combination(8, n, lrow, anc, Z, nv, i0, zk); break;
                case 7: rbd_row_combination(7, n, lrow, anc, Z, nv, i0, zk); break;
                case 6: rbd_row_combination(6, n, lrow, anc, Z, nv, i0, zk); break;
                case 5: rbd_row_combination(5, n, lrow, anc, Z, nv, i0, zk); break;
                case 4: rbd_row_combination(4, n, lrow, anc, Z, nv, i0, zk); break;
                case 3: rbd_row_combination(3, n, lrow, anc, Z, nv, i0, zk); break;
                case 2: rbd_row_combination(2, n, lrow, anc, Z, nv, i0, zk); break;
                default: rbd_row_combination(1, n, lrow, anc, Z, nv, i0, zk); break;
                }
                i0 += 4 * w;
            }
    #endif
            for (; i0 < k; i0++)  /* the last columns, a number at a time */
                zk[i0] = 0.0 - rbd_ancestors_dot(n, lrow, anc, Z + i0, nv);
            zk[k] -= rbd_ancestors_dot(n, lrow, anc, zk, 1);  /* the diagonal: D^-1 - L[k] Z[k] */
            for (int i = 0; i < k; i++) Z[(long)i * nv + k] = zk[i];
        }
    }
    """
    void rbd_ltdl_inverse(double* Z, int nv, const int* ancestors, const int* ancestors_start,
                          double* lrow) noexcept nogil
    int rbd_articulated_ltdl(int nb, int nv, const int* parents, const int* v_idx, const int* nvj,
                             const int* ancestors, const int* ancestors_start, const double* armature,
                             const double* tol, const double* Y, int y_stride, const double* J, int j_stride,
                             double* IA, double* Z, double* dinv) noexcept nogil


# ==========================================================================================
# Solves with M = L^T D L (L below the factor's diagonal)
# ==========================================================================================
# A dof's chain (itself and the dofs that move its body) is a few runs of consecutive
# dofs (CModel.dof_run_start), so the loops over a chain below are contiguous.
cdef inline double chain_dot(const CModel* m, int k, const double* x, const double* y) noexcept nogil:
    """The sum of x[t] y[t] over dof k's chain (0 for k = -1)."""
    cdef int s, t
    cdef double acc = 0.0
    while k >= 0:
        s = m.dof_run_start[k]
        for t in range(s, k + 1):
            acc += x[t] * y[t]
        k = m.dof_parents[s]
    return acc


cdef inline void chain_axpy(const CModel* m, int k, double a, const double* x, double* y) noexcept nogil:
    """y[t] += a x[t] over dof k's chain."""
    cdef int s, t
    while k >= 0:
        s = m.dof_run_start[k]
        for t in range(s, k + 1):
            y[t] += a * x[t]
        k = m.dof_parents[s]


cdef inline void ltdl_up(const CModel* m, const double* L, double* x) noexcept nogil:
    """x <- L^-T x: from the leaves up, each entry passes to its ancestors."""
    cdef int k
    for k in range(m.nv - 1, -1, -1):
        if x[k] != 0.0:
            chain_axpy(m, m.dof_parents[k], -x[k], L + k * m.nv, x)


cdef inline void ltdl_down(const CModel* m, const double* L, double* x) noexcept nogil:
    """x <- L^-1 x: from the root down, each entry takes from its ancestors."""
    cdef int k
    for k in range(m.nv):
        x[k] -= chain_dot(m, m.dof_parents[k], L + k * m.nv, x)


cdef inline void ltdl_solve(const CModel* m, const double* Z, double* x) noexcept nogil:
    """x <- M^-1 x through articulated_ltdl's factor Z (D^-1 on its diagonal)."""
    cdef int k
    ltdl_up(m, Z, x)
    for k in range(m.nv):
        x[k] *= Z[k * m.nv + k]
    ltdl_down(m, Z, x)


# ==========================================================================================
# The factor from the articulated-body inertias
# ==========================================================================================
cdef inline int articulated_ltdl(const CModel* m, const double* Y, int y_stride, const double* J, int j_stride,
                                 double* IA, double* Z) noexcept nogil:
    """The factor M = L^T D L along the tree (L unit lower triangular, nonzero only at
    each dof's ancestors' columns), into Z: D^-1 on the diagonal, L at each dof's
    ancestors' columns of its row, nothing else written.  It is built without forming
    M: eliminating the dofs of M from the leaves up is passing each body's articulated
    inertia on to its parent, so each dof's pivot is D = s^T IA s (+ armature) with
    U = IA s, its row of L is (s_a . U) / D at its ancestors a, and IA loses U U^T / D
    before the next dof up (the pivots are the articulated-body algorithm's D, so a
    singular model is found at the same joint as by ABA).  Y: each body's inertia (10
    numbers, y_stride apart), J: each dof's column s (6, j_stride apart), both in world
    axes (crba_world_terms); IA: LTDL_PER_BODY doubles per body.  Returns 1 + the first dof (from
    the last) whose pivot is at most the model's singular tolerance (NaN included),
    else 0."""
    return rbd_articulated_ltdl(m.nb, m.nv, m.parents, m.v_idx, m.nvj, m.dof_ancestors, m.dof_ancestors_start,
                                m.armature if m.has_armature else NULL, m.singular_tol, Y, y_stride, J, j_stride,
                                IA, Z, NULL)


cdef inline int articulated_ltdl_packed(const CModel* m, const double* Y, int y_stride, const double* J,
                                        int j_stride, double* IA, double* L, double* dinv) noexcept nogil:
    """articulated_ltdl's factor packed, in memory linear in the tree's size (n x depth, not
    nv^2: the contact dynamics of a 40,000-body tree): D^-1 into dinv, each dof d's row of
    L into L from m.dof_ancestors_start[d] (need_ancestors), one number per ancestor in
    increasing order, so that each run of consecutive dofs of its chain is contiguous.
    Solves with it: packed_up, packed_down."""
    return rbd_articulated_ltdl(m.nb, m.nv, m.parents, m.v_idx, m.nvj, m.dof_ancestors, m.dof_ancestors_start,
                                m.armature if m.has_armature else NULL, m.singular_tol, Y, y_stride, J, j_stride,
                                IA, L, dinv)


cdef inline double packed_row_dot(const CModel* m, int k, const double* L, const double* x) noexcept nogil:
    """The sum over dof k's ancestors j of L[k, j] x[j] for articulated_ltdl_packed's L,
    a run of consecutive dofs of k's chain at a time (from the nearest: the row's end)."""
    cdef int t = m.dof_ancestors_start[k + 1], e = m.dof_parents[k], s, j
    cdef const double* row
    cdef double acc = 0.0
    while e >= 0:
        s = m.dof_run_start[e]
        t -= e - s + 1
        row = L + t - s  # row[j]: L[k, j] for j in s..e
        for j in range(s, e + 1):
            acc += row[j] * x[j]
        e = m.dof_parents[s]
    return acc


cdef inline void packed_row_axpy(const CModel* m, int k, int nrows, const double* L, double* X,
                                 int stride) noexcept nogil:
    """X[r, j] -= X[r, k] L[k, j] over dof k's ancestors j (as packed_row_dot), for each
    of the nrows rows r of X (stride apart), each run of the chain walked once."""
    cdef int t = m.dof_ancestors_start[k + 1], e = m.dof_parents[k], s, j, r
    cdef const double* row
    cdef double* x
    cdef double a
    while e >= 0:
        s = m.dof_run_start[e]
        t -= e - s + 1
        row = L + t - s
        for r in range(nrows):
            x = X + r * stride
            a = x[k]
            for j in range(s, e + 1):
                x[j] -= a * row[j]
        e = m.dof_parents[s]


cdef inline void packed_up(const CModel* m, const double* L, double* x) noexcept nogil:
    """x <- L^-T x for articulated_ltdl_packed's L: from the leaves up, each entry passes
    to its ancestors."""
    cdef int k
    for k in range(m.nv - 1, -1, -1):
        if x[k] != 0.0:
            packed_row_axpy(m, k, 1, L, x, 0)


cdef inline void packed_down(const CModel* m, const double* L, double* x) noexcept nogil:
    """x <- L^-1 x for articulated_ltdl_packed's L: from the root down, each entry takes
    from its ancestors."""
    cdef int k
    for k in range(m.nv):
        x[k] -= packed_row_dot(m, k, L, x)
