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
    void sym6_matvec_angular "rbd_sym6_matvec_angular" (const double* S, const double* w,
                                                        double* out) noexcept nogil  # out = S [0; w]
    void sym6_rank1_sub "rbd_sym6_rank1_sub" (double* S, const double* u, double alpha) noexcept nogil
    # S -= alpha u u^T
    void sym6_rank1_sub_add "rbd_sym6_rank1_sub_add" (double* P, const double* S, const double* u,
                                                      double alpha) noexcept nogil
    # P += S - alpha u u^T


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


cdef inline void sym6_shift_add(const double* r, const double* S, double* out) noexcept nogil:
    """out += X^T S X for X the motion transform of a pure translation: S an articulated
    inertia at a child's origin, out its parent's at the parent's origin, r the child's
    origin from the parent's, all in the same axes.  With S = [[A, B], [B^T, C]]:
    A'' = A, B'' = B - A[r]x, C'' = C + [r]x B + ([r]x B'')^T."""
    cdef double Bpp[9]
    cdef double L[9]
    cdef double K[9]
    cdef double d[21]
    cdef double px = r[0], py = r[1], pz = r[2], a0, a1, a2
    cdef int i, j
    # B'' = B - A[r]x: row i of A[r]x is (row i of A) x r.
    for i in range(3):
        if i == 0:
            a0 = S[0]; a1 = S[1]; a2 = S[2]
        elif i == 1:
            a0 = S[1]; a1 = S[6]; a2 = S[7]
        else:
            a0 = S[2]; a1 = S[7]; a2 = S[11]
        Bpp[3 * i + 0] = S[rbd_sym6[6 * i + 3]] - (a1 * pz - a2 * py)
        Bpp[3 * i + 1] = S[rbd_sym6[6 * i + 4]] - (a2 * px - a0 * pz)
        Bpp[3 * i + 2] = S[rbd_sym6[6 * i + 5]] - (a0 * py - a1 * px)
    # L = [r]x B and K = [r]x B'' column by column.
    for j in range(3):
        L[j] = py * S[rbd_sym6[15 + j]] - pz * S[rbd_sym6[9 + j]]
        L[3 + j] = pz * S[rbd_sym6[3 + j]] - px * S[rbd_sym6[15 + j]]
        L[6 + j] = px * S[rbd_sym6[9 + j]] - py * S[rbd_sym6[3 + j]]
        K[j] = py * Bpp[6 + j] - pz * Bpp[3 + j]
        K[3 + j] = pz * Bpp[j] - px * Bpp[6 + j]
        K[6 + j] = px * Bpp[3 + j] - py * Bpp[j]
    d[0] = S[0]; d[1] = S[1]; d[2] = S[2]
    d[6] = S[6]; d[7] = S[7]
    d[11] = S[11]
    d[3] = Bpp[0]; d[4] = Bpp[1]; d[5] = Bpp[2]
    d[8] = Bpp[3]; d[9] = Bpp[4]; d[10] = Bpp[5]
    d[12] = Bpp[6]; d[13] = Bpp[7]; d[14] = Bpp[8]
    d[15] = S[15] + L[0] + K[0]
    d[16] = S[16] + L[1] + K[3]
    d[17] = S[17] + L[2] + K[6]
    d[18] = S[18] + L[4] + K[4]
    d[19] = S[19] + L[5] + K[7]
    d[20] = S[20] + L[8] + K[8]
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


cdef inline void articulated_reduce(const double* IA, const double* Ui, const double* Di, int k, double* Ia,
                                    double* W) noexcept nogil:
    """What a subtree passes through its joint to the parent: Ia = IA - U D^-1 U^T, and
    W = U D^-1 (6 x k, column-major), from U = IA S and Di = (S^T U + armature)^-1."""
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
