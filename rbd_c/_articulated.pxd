# cython: language_level=3
"""Symmetric 6x6 kernels for the articulated-body algorithm.

An articulated inertia is a symmetric 6x6 matrix (linear-first) stored as its
21 upper-triangle entries, row by row: (0,0) (0,1) .. (0,5) (1,1) .. (5,5).
``SYM6[6*i + j]`` is the packed index of entry (i, j) for any i, j.
Small dense blocks (U: 6 x k, D: k x k) are column-major / row-major as noted.
"""
from libc.math cimport sqrt
from libc.string cimport memcpy

from rbd_c._model cimport CModel
from rbd_c._joints cimport joint_column, joint_force, unit_column

cdef extern from *:
    """
    static const int rbd_sym6[36] = {
         0,  1,  2,  3,  4,  5,
         1,  6,  7,  8,  9, 10,
         2,  7, 11, 12, 13, 14,
         3,  8, 12, 15, 16, 17,
         4,  9, 13, 16, 18, 19,
         5, 10, 14, 17, 19, 20};
    """
    const int rbd_sym6[36]


cdef extern from "_sym6.h":  # (shared with the C kernels of _factor.pxd)
    void sym6_from_inertia "rbd_sym6_from_inertia" (const double* Y, double* S) noexcept nogil
    # S = the 6x6 matrix of the 10-number inertia Y = [m, h, Ixx, Ixy, Ixz, Iyy, Iyz, Izz]
    void sym6_matvec "rbd_sym6_matvec" (const double* S, const double* x, double* out) noexcept nogil  # out = S x
    void sym6_rank1_sub "rbd_sym6_rank1_sub" (double* S, const double* u, double alpha) noexcept nogil
    # S -= alpha u u^T
    void sym6_rank1_sub_add "rbd_sym6_rank1_sub_add" (double* P, const double* S, const double* u,
                                                      double alpha) noexcept nogil
    # P += S - alpha u u^T


cdef inline void sym6_matvec_add(const double* S, const double* x, double* out) noexcept nogil:
    """out += S x."""
    out[0] += S[0] * x[0] + S[1] * x[1] + S[2] * x[2] + S[3] * x[3] + S[4] * x[4] + S[5] * x[5]
    out[1] += S[1] * x[0] + S[6] * x[1] + S[7] * x[2] + S[8] * x[3] + S[9] * x[4] + S[10] * x[5]
    out[2] += S[2] * x[0] + S[7] * x[1] + S[11] * x[2] + S[12] * x[3] + S[13] * x[4] + S[14] * x[5]
    out[3] += S[3] * x[0] + S[8] * x[1] + S[12] * x[2] + S[15] * x[3] + S[16] * x[4] + S[17] * x[5]
    out[4] += S[4] * x[0] + S[9] * x[1] + S[13] * x[2] + S[16] * x[3] + S[18] * x[4] + S[19] * x[5]
    out[5] += S[5] * x[0] + S[10] * x[1] + S[14] * x[2] + S[17] * x[3] + S[19] * x[4] + S[20] * x[5]


cdef inline void sym6_col(const double* S, int k, double* out) noexcept nogil:
    """out = column k of S."""
    cdef int r
    for r in range(6):
        out[r] = S[rbd_sym6[6 * r + k]]


cdef inline void sym6_sub_products(double* S, const double* W, const double* U, int k) noexcept nogil:
    """S -= W U^T for 6 x k column-major W, U whose product is symmetric (W = U D^-1)."""
    cdef int i, j, l, n = 0
    cdef double acc
    for i in range(6):
        for j in range(i, 6):
            acc = 0.0
            for l in range(k):
                acc += W[6 * l + i] * U[6 * l + j]
            S[n] -= acc
            n += 1


cdef inline void _rot_sym3(const double* R, const double* X, double* out) noexcept nogil:
    """out = R X R^T for symmetric X given as the 6 numbers [xx, xy, xz, yy, yz, zz]."""
    cdef double T[9]
    cdef int i
    for i in range(3):
        T[3 * i + 0] = R[4 * i] * X[0] + R[4 * i + 1] * X[1] + R[4 * i + 2] * X[2]
        T[3 * i + 1] = R[4 * i] * X[1] + R[4 * i + 1] * X[3] + R[4 * i + 2] * X[4]
        T[3 * i + 2] = R[4 * i] * X[2] + R[4 * i + 1] * X[4] + R[4 * i + 2] * X[5]
    out[0] = T[0] * R[0] + T[1] * R[1] + T[2] * R[2]
    out[1] = T[0] * R[4] + T[1] * R[5] + T[2] * R[6]
    out[2] = T[0] * R[8] + T[1] * R[9] + T[2] * R[10]
    out[3] = T[3] * R[4] + T[4] * R[5] + T[5] * R[6]
    out[4] = T[3] * R[8] + T[4] * R[9] + T[5] * R[10]
    out[5] = T[6] * R[8] + T[7] * R[9] + T[8] * R[10]


cdef inline void sym6_act_add(const double* M, const double* S, double* out) noexcept nogil:
    """out += X* S X^-1 for the transform M = parent_from_child (4x4 row-major): the
    articulated inertia S of a child expressed in its parent's frame, added to out.

    With S = [[A, B], [B^T, C]], rotate each block (A' = R A R^T, ...), then shift
    the origin by p: B'' = B' - A'[p]x, C'' = C' + [p]x B' + ([p]x B'')^T, A'' = A'.
    """
    cdef double A[6]
    cdef double C[6]
    cdef double Ar[6]
    cdef double Cr[6]
    cdef double Bm[9]
    cdef double T[9]
    cdef double Bp[9]
    cdef double Bpp[9]
    cdef double L[9]
    cdef double K[9]
    cdef double px = M[3], py = M[7], pz = M[11]
    cdef int i, j
    A[0] = S[0]; A[1] = S[1]; A[2] = S[2]; A[3] = S[6]; A[4] = S[7]; A[5] = S[11]
    C[0] = S[15]; C[1] = S[16]; C[2] = S[17]; C[3] = S[18]; C[4] = S[19]; C[5] = S[20]
    Bm[0] = S[3]; Bm[1] = S[4]; Bm[2] = S[5]
    Bm[3] = S[8]; Bm[4] = S[9]; Bm[5] = S[10]
    Bm[6] = S[12]; Bm[7] = S[13]; Bm[8] = S[14]
    _rot_sym3(M, A, Ar)
    _rot_sym3(M, C, Cr)
    # B' = R B R^T
    for i in range(3):
        for j in range(3):
            T[3 * i + j] = M[4 * i] * Bm[j] + M[4 * i + 1] * Bm[3 + j] + M[4 * i + 2] * Bm[6 + j]
    for i in range(3):
        for j in range(3):
            Bp[3 * i + j] = T[3 * i] * M[4 * j] + T[3 * i + 1] * M[4 * j + 1] + T[3 * i + 2] * M[4 * j + 2]
    # B'' = B' - A'[p]x: row r of A'[p]x is (row r of A') x p.
    cdef double a0, a1, a2
    for i in range(3):
        if i == 0:
            a0 = Ar[0]; a1 = Ar[1]; a2 = Ar[2]
        elif i == 1:
            a0 = Ar[1]; a1 = Ar[3]; a2 = Ar[4]
        else:
            a0 = Ar[2]; a1 = Ar[4]; a2 = Ar[5]
        Bpp[3 * i + 0] = Bp[3 * i + 0] - (a1 * pz - a2 * py)
        Bpp[3 * i + 1] = Bp[3 * i + 1] - (a2 * px - a0 * pz)
        Bpp[3 * i + 2] = Bp[3 * i + 2] - (a0 * py - a1 * px)
    # L = [p]x B' and K = [p]x B'' column by column.
    for j in range(3):
        L[j] = py * Bp[6 + j] - pz * Bp[3 + j]
        L[3 + j] = pz * Bp[j] - px * Bp[6 + j]
        L[6 + j] = px * Bp[3 + j] - py * Bp[j]
        K[j] = py * Bpp[6 + j] - pz * Bpp[3 + j]
        K[3 + j] = pz * Bpp[j] - px * Bpp[6 + j]
        K[6 + j] = px * Bpp[3 + j] - py * Bpp[j]
    cdef double d[21]
    d[0] = Ar[0]; d[1] = Ar[1]; d[2] = Ar[2]
    d[6] = Ar[3]; d[7] = Ar[4]
    d[11] = Ar[5]
    d[3] = Bpp[0]; d[4] = Bpp[1]; d[5] = Bpp[2]
    d[8] = Bpp[3]; d[9] = Bpp[4]; d[10] = Bpp[5]
    d[12] = Bpp[6]; d[13] = Bpp[7]; d[14] = Bpp[8]
    d[15] = Cr[0] + L[0] + K[0]
    d[16] = Cr[1] + L[1] + K[3]
    d[17] = Cr[2] + L[2] + K[6]
    d[18] = Cr[3] + L[4] + K[4]
    d[19] = Cr[4] + L[5] + K[7]
    d[20] = Cr[5] + L[8] + K[8]
    for i in range(21):  # (4-wide adds: the parent's wide loads of out wait for no partial stores)
        out[i] += d[i]


cdef inline bint spd_inverse(const double* D, int k, double* out, double* L, double tol) noexcept nogil:
    """out = D^-1 for a k x k (k <= 6) symmetric positive-definite row-major D, by
    Cholesky; L is k*k scratch.  Returns True, leaving out unset, when a pivot is
    at most tol: D is singular (or not positive definite) at the model's scale."""
    cdef int i, j, l
    cdef double acc
    for i in range(k):
        for j in range(i + 1):
            acc = D[k * i + j]
            for l in range(j):
                acc -= L[k * i + l] * L[k * j + l]
            if i == j:
                if not acc > tol:  # (NaN included)
                    return True
                L[k * i + i] = sqrt(acc)
            else:
                L[k * i + j] = acc / L[k * j + j]
    # Invert L (lower triangular) in place into its upper part-free form: Linv.
    cdef double Linv[36]
    for j in range(k):
        for i in range(k):
            Linv[k * i + j] = 0.0
        Linv[k * j + j] = 1.0 / L[k * j + j]
        for i in range(j + 1, k):
            acc = 0.0
            for l in range(j, i):
                acc -= L[k * i + l] * Linv[k * l + j]
            Linv[k * i + j] = acc / L[k * i + i]
    # D^-1 = Linv^T Linv
    for i in range(k):
        for j in range(i, k):
            acc = 0.0
            for l in range(j, k):
                acc += Linv[k * l + i] * Linv[k * l + j]
            out[k * i + j] = acc
            out[k * j + i] = acc
    return False


cdef inline int joint_articulated(const CModel* m, int i, const double* IA, double* Ui, double* Di) noexcept nogil:
    """U = IA S (6 x k, column-major by dof) and Di = (S^T U + diag(armature))^-1 (k x k,
    row-major) of body i's joint, IA its articulated inertia; 1 + i when that is
    singular at the model's scale (the driver raises the singular-joint error), else 0."""
    cdef int k = m.nvj[i], kind = m.kinds[i], col, r
    cdef double s[6]
    cdef double t[6]
    cdef double D[36]
    cdef double L[36]
    for col in range(k):
        if unit_column(kind, col) < 0:  # an axis column (revolute, prismatic)
            joint_column(m, i, col, s)
            sym6_matvec(IA, s, Ui + 6 * col)
        else:
            sym6_col(IA, unit_column(kind, col), Ui + 6 * col)
    if k == 1:
        joint_force(m, i, Ui, t)
        t[0] += m.armature[m.v_idx[i]]
        if not t[0] > m.singular_tol:  # (NaN included)
            return 1 + i
        Di[0] = 1.0 / t[0]
        return 0
    for col in range(k):
        joint_force(m, i, Ui + 6 * col, t)
        for r in range(k):
            D[k * r + col] = t[r]
        D[k * col + col] += m.armature[m.v_idx[i] + col]
    if spd_inverse(D, k, Di, L, m.singular_tol):
        return 1 + i
    return 0


cdef inline void articulated_reduce(const double* IA, const double* Ui, const double* Di, int k, double* Ia,
                                    double* W) noexcept nogil:
    """What a subtree passes through its joint to the parent: Ia = IA - U D^-1 U^T, and
    W = U D^-1 (6 x k, column-major), from ``joint_articulated``'s U and Di."""
    cdef int col, r, l
    cdef double acc
    memcpy(Ia, IA, 21 * sizeof(double))
    if k == 1:
        sym6_rank1_sub(Ia, Ui, Di[0])
        for r in range(6):
            W[r] = Ui[r] * Di[0]
        return
    for col in range(k):
        for r in range(6):
            acc = 0.0
            for l in range(k):
                acc += Ui[6 * l + r] * Di[k * l + col]
            W[6 * col + r] = acc
    sym6_sub_products(Ia, W, Ui, k)
