# cython: language_level=3
"""M = L^T D L along the tree, in C: the factor (no fill-in: each dof's row of L is
nonzero only at its ancestors' dofs) and M^-1 through it.  Used by
inverse_mass_matrix (its factored form) and the contact dynamics.

``RBD_FAST`` (_fast.h) compiles a function for x86-64-v3 (AVX2 with FMA) and for the
baseline, chosen when the module loads (FMA may change the last bits between the two).

Then solves through the factor, walking each dof's chain of ancestors."""
from rbd_c._model cimport CModel

cdef extern from "_fast.h":  # RBD_FAST
    pass

cdef extern from *:
    """

    /* M = L^T D L in place (row-major nv x nv; only the lower triangle is read): D^-1 on
       the diagonal, L below it.  Dofs are eliminated from the last (a leaf) to the first;
       eliminating dof k changes only its ancestors' rows at their ancestors' columns,
       which are a few runs of consecutive dofs (run_start).  Returns 1 + the first dof
       whose pivot is at or below tol (NaN included), else 0. */
    RBD_FAST
    static int rbd_ltdl(double* Z, int nv, const int* parent, const int* run_start, const int* ancestors,
                        const int* ancestors_start, double tol) {
        for (int k = nv - 1; k >= 0; k--) {
            double* zk = Z + (long)k * nv;
            if (!(zk[k] > tol)) return 1 + k;
            const double inverse = 1.0 / zk[k];
            for (int t = ancestors_start[k]; t < ancestors_start[k + 1]; t++) {
                const int i = ancestors[t];
                const double a = zk[i] * inverse;
                double* zi = Z + (long)i * nv;
                for (int end = i; end >= 0; ) {
                    const int start = run_start[end], n = end + 1 - start;
                    double* restrict zi_run = zi + start;
                    const double* restrict zk_run = zk + start;
                    for (int j = 0; j < n; j++) zi_run[j] -= a * zk_run[j];  /* (a count from 0: vectorised under -fwrapv) */
                    end = parent[start];
                }
                zk[i] = a;
            }
            zk[k] = inverse;
        }
        return 0;
    }

    /* Z = M^-1 from the factor of rbd_ltdl, in place, row by row from the top: Z L^T =
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
            if (n == 0) {
                for (int i = 0; i < k; i++) zk[i] = 0.0;  /* no ancestor: no coupling with the dofs before */
            } else {
                const double* z0 = Z + (long)anc[0] * nv;
                const double l0 = lrow[0];
                #pragma GCC ivdep
                for (int i = 0; i < k; i++) zk[i] = -l0 * z0[i];
                int j = 1;
                for (; j + 1 < n; j += 2) {  /* two rows per pass: zk read and written half as often */
                    const double* za = Z + (long)anc[j] * nv;
                    const double* zb = Z + (long)anc[j + 1] * nv;
                    const double la = lrow[j], lb = lrow[j + 1];
                    #pragma GCC ivdep
                    for (int i = 0; i < k; i++) zk[i] -= la * za[i] + lb * zb[i];
                }
                for (; j < n; j++) {
                    const double* za = Z + (long)anc[j] * nv;
                    const double la = lrow[j];
                    #pragma GCC ivdep
                    for (int i = 0; i < k; i++) zk[i] -= la * za[i];
                }
            }
            double diagonal = zk[k];
            for (int j = 0; j < n; j++) diagonal -= lrow[j] * zk[anc[j]];
            zk[k] = diagonal;
            for (int i = 0; i < k; i++) Z[(long)i * nv + k] = zk[i];
        }
    }
    """
    int rbd_ltdl(double* Z, int nv, const int* parent, const int* run_start, const int* ancestors,
                 const int* ancestors_start, double tol) noexcept nogil
    void rbd_ltdl_inverse(double* Z, int nv, const int* ancestors, const int* ancestors_start,
                          double* lrow) noexcept nogil


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
    """x <- M^-1 x through rbd_ltdl's factor Z (D^-1 on its diagonal)."""
    cdef int k
    ltdl_up(m, Z, x)
    for k in range(m.nv):
        x[k] *= Z[k * m.nv + k]
    ltdl_down(m, Z, x)
