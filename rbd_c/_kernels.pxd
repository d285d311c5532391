# cython: language_level=3
"""Spatial-algebra kernels on raw ``double*`` storage, shared by every rbd_c module.

Storage layouts (fixed; the algorithm modules and the model arrays rely on them):

* TRANSFORM: the 4x4 homogeneous matrix aMb itself, ROW-MAJOR, 16 doubles:
  ``R[i][j] = M[4*i + j]``, ``t[i] = M[4*i + 3]`` (p_a = R p_b + t).  This is the
  layout of the public API and of the model arrays, so user and model arrays
  reach the kernels without repacking.  The bottom row is WRITTEN (0 0 0 1) by
  the kernels that produce a transform but NEVER READ.
* MOTION (twist, acceleration) and FORCE (wrench): 6 doubles, linear first,
  ``[v; w]`` and ``[f; tau]``.
* INERTIA: 10 doubles ``[m, hx, hy, hz, Ixx, Ixy, Ixz, Iyy, Iyz, Izz]``; h = m c
  is the first moment of mass and I the rotational inertia about the FRAME
  ORIGIN, in frame axes.  Its 6x6 matrix is ``[[m 1, -[h]x], [[h]x, I]]``.
* A symmetric 3x3 ("sym3") is the 6 numbers ``[xx, xy, xz, yy, yz, zz]``.

Every kernel reads all its inputs into local doubles before it writes, so
``out`` MAY ALIAS any input (e.g. ``act_force(X, f, f)``).  No kernel allocates,
touches Python objects or raises; all are ``inline noexcept nogil``.

Kernels
    rotate3(M, x, out)                out = R x
    rotate3_t(M, x, out)              out = R^T x
    rotate6(M, x, out)                out = [R x_lin; R x_ang]
    sym3_rotate(M, S, out)            out = R S R^T          (sym3)
    sym3_rotate_t(M, S, out)          out = R^T S R          (sym3)
    se3_compose(A, B, out)            out = A B
    se3_inverse(M, out)               out = M^-1
    se3_act_point(M, p, out)          out = R p + t
    se3_exp(twist, out)               out = exp(twist^)
    se3_log(M, out)                   out = log(M)^v, angle in [0, pi]
    so3_log(M, out)                   rotation vector of R, angle in [0, pi]
    act_motion(M, m, out)             Ad_M m
    inv_act_motion(M, m, out)         Ad_M^-1 m
    act_force(M, f, out)              Ad_M^-T f
    inv_act_force(M, f, out)          Ad_M^T f
    motion_cross(m1, m2, out)         m1 x m2 (ad_m1 m2)
    force_cross(m, f, out)            m x* f (= -ad_m^T f)
    inertia_apply(Y, m, out)          Y m
    inertia_cross_term(Y, m, out)     m x* (Y m)
    inertia_act(M, Y, out)            the inertia Y given in b, expressed in a (M = aMb)
    inertia_inv_act(M, Y, out)        the inverse of inertia_act
    inertia_add(acc, Y)               acc += Y
    inertia_from_mass_com(mass, com, Ic, out)   Ic: 3x3 row-major, about the com
    inertia_to_mass_com(Y, out)       out = [mass, com(3), I_com (9, row-major)]
    Dense 6x6 row-major matrices (for the Python wrappers, not for algorithms):
    adjoint_matrix(M, out), ad_matrix(m, out), ad_star_matrix(m, out), inertia_matrix(Y, out)
Input check
    any_nonfinite(x, n)               whether any of the n doubles is NaN or infinite
Dense rows
    dot_rows(a, b, n)                 sum of a[k] b[k], k < n, in four independent sums
Batch outputs
    stream_copy(dst, src, n)          dst = src, non-temporal stores (SSE2); stream_fence() after
"""
from libc.math cimport sin, cos, sqrt, atan2
from libc.stdint cimport uint64_t
from libc.string cimport memcpy

# Below this rotation angle the trigonometric coefficients are evaluated by
# their Taylor series (the closed forms are 0/0 at 0); the first neglected term
# is below 1e-21.  Below RBD_SERIES_ANGLE, (t - sin t)/t^3 and its kin are summed as
# series (their closed forms cancel); above, exp_terms expands about the unit axis.
cdef extern from *:
    """
    #define RBD_SMALL_ANGLE 1e-3
    #define RBD_SERIES_ANGLE 0.5
    """
    const double RBD_SMALL_ANGLE
    const double RBD_SERIES_ANGLE


# ------------------------------------------------------------------------------------------
# 3-vectors and rotations
# ------------------------------------------------------------------------------------------
cdef inline void rotate3(const double* M, const double* x, double* out) noexcept nogil:
    """out = R x (R the rotation block of the transform M)."""
    cdef double x0 = x[0], x1 = x[1], x2 = x[2]
    out[0] = M[0] * x0 + M[1] * x1 + M[2] * x2
    out[1] = M[4] * x0 + M[5] * x1 + M[6] * x2
    out[2] = M[8] * x0 + M[9] * x1 + M[10] * x2


cdef inline void rotate6(const double* M, const double* x, double* out) noexcept nogil:
    """out = [R x_lin; R x_ang]: a motion or force rotated, its origin kept."""
    cdef int r
    for r in range(3):
        out[r] = M[4 * r] * x[0] + M[4 * r + 1] * x[1] + M[4 * r + 2] * x[2]
        out[3 + r] = M[4 * r] * x[3] + M[4 * r + 1] * x[4] + M[4 * r + 2] * x[5]


cdef inline void rotate3_t(const double* M, const double* x, double* out) noexcept nogil:
    """out = R^T x."""
    cdef double x0 = x[0], x1 = x[1], x2 = x[2]
    out[0] = M[0] * x0 + M[4] * x1 + M[8] * x2
    out[1] = M[1] * x0 + M[5] * x1 + M[9] * x2
    out[2] = M[2] * x0 + M[6] * x1 + M[10] * x2


cdef inline void _sym3_congruence(double a00, double a01, double a02, double a10, double a11, double a12,
                                  double a20, double a21, double a22, const double* S,
                                  double* out) noexcept nogil:
    """out = A S A^T for the sym3 S (6 numbers) and the 3x3 A given by its entries
    (scalars, so R and R^T are the same code without a transposed copy)."""
    cdef double sxx = S[0], sxy = S[1], sxz = S[2], syy = S[3], syz = S[4], szz = S[5]
    # T = A S, row by row
    cdef double t00 = a00 * sxx + a01 * sxy + a02 * sxz
    cdef double t01 = a00 * sxy + a01 * syy + a02 * syz
    cdef double t02 = a00 * sxz + a01 * syz + a02 * szz
    cdef double t10 = a10 * sxx + a11 * sxy + a12 * sxz
    cdef double t11 = a10 * sxy + a11 * syy + a12 * syz
    cdef double t12 = a10 * sxz + a11 * syz + a12 * szz
    cdef double t20 = a20 * sxx + a21 * sxy + a22 * sxz
    cdef double t21 = a20 * sxy + a21 * syy + a22 * syz
    cdef double t22 = a20 * sxz + a21 * syz + a22 * szz
    # (T A^T)_ij = T_i . A_j (upper triangle)
    out[0] = t00 * a00 + t01 * a01 + t02 * a02
    out[1] = t00 * a10 + t01 * a11 + t02 * a12
    out[2] = t00 * a20 + t01 * a21 + t02 * a22
    out[3] = t10 * a10 + t11 * a11 + t12 * a12
    out[4] = t10 * a20 + t11 * a21 + t12 * a22
    out[5] = t20 * a20 + t21 * a21 + t22 * a22


cdef inline void sym3_rotate(const double* M, const double* S, double* out) noexcept nogil:
    """out = R S R^T for the sym3 S (6 numbers)."""
    _sym3_congruence(M[0], M[1], M[2], M[4], M[5], M[6], M[8], M[9], M[10], S, out)


cdef inline void sym3_rotate_t(const double* M, const double* S, double* out) noexcept nogil:
    """out = R^T S R for the sym3 S (row i of R^T is column i of R)."""
    _sym3_congruence(M[0], M[4], M[8], M[1], M[5], M[9], M[2], M[6], M[10], S, out)


# ------------------------------------------------------------------------------------------
# SE(3)
# ------------------------------------------------------------------------------------------
cdef extern from "_fast.h":  # rbd_v4, RBD_FAST
    pass

cdef extern from *:
    """
    /* out = A B = [[Ra Rb, ta + Ra tb], [0, 1]] (4x4 row-major; B's bottom row is not
       read, out may be A or B): each row of out is a combination of B's rows, four numbers
       wide, plus A's translation in its last place.  That translation is A's broadcast,
       masked to the last place: as A's row times [0 0 0 1] it cost three multiplications
       by zero and a shuffle on each body's path of a forward pass. */
    #if defined(__GNUC__) || defined(__clang__)
    static inline rbd_v4 rbd_composed_row(const double* a, rbd_v4 b0, rbd_v4 b1, rbd_v4 b2) {
        const rbd_i4 last = {0, 0, 0, -1};
        const double t = a[3];
        const rbd_v4 translation = {t, t, t, t};
        return a[0] * b0 + a[1] * b1 + a[2] * b2 + (rbd_v4)((rbd_i4)translation & last);
    }
    #endif

    static inline void rbd_se3_compose(const double* A, const double* B, double* out) {
    #if defined(__GNUC__) || defined(__clang__)
        const rbd_v4 b0 = rbd_load4(B), b1 = rbd_load4(B + 4), b2 = rbd_load4(B + 8);
        const rbd_v4 r0 = rbd_composed_row(A, b0, b1, b2), r1 = rbd_composed_row(A + 4, b0, b1, b2),
                     r2 = rbd_composed_row(A + 8, b0, b1, b2);
        memcpy(out, &r0, sizeof r0);
        memcpy(out + 4, &r1, sizeof r1);
        memcpy(out + 8, &r2, sizeof r2);
    #else
        double o[12];
        for (int a = 0; a < 3; a++)
            for (int b = 0; b < 4; b++)
                o[4 * a + b] = A[4 * a] * B[b] + A[4 * a + 1] * B[4 + b] + A[4 * a + 2] * B[8 + b];
        for (int a = 0; a < 3; a++) o[4 * a + 3] += A[4 * a + 3];
        memcpy(out, o, sizeof o);
    #endif
        out[12] = 0.0; out[13] = 0.0; out[14] = 0.0; out[15] = 1.0;
    }
    """
    void se3_compose "rbd_se3_compose"(const double* A, const double* B, double* out) noexcept nogil


cdef inline void se3_inverse(const double* M, double* out) noexcept nogil:
    """out = M^-1 = [[R^T, -R^T t], [0, 1]]."""
    cdef double r00 = M[0], r01 = M[1], r02 = M[2]
    cdef double r10 = M[4], r11 = M[5], r12 = M[6]
    cdef double r20 = M[8], r21 = M[9], r22 = M[10]
    cdef double t0 = M[3], t1 = M[7], t2 = M[11]
    out[0] = r00; out[1] = r10; out[2] = r20; out[3] = -(r00 * t0 + r10 * t1 + r20 * t2)
    out[4] = r01; out[5] = r11; out[6] = r21; out[7] = -(r01 * t0 + r11 * t1 + r21 * t2)
    out[8] = r02; out[9] = r12; out[10] = r22; out[11] = -(r02 * t0 + r12 * t1 + r22 * t2)
    out[12] = 0.0; out[13] = 0.0; out[14] = 0.0; out[15] = 1.0


cdef inline void se3_act_point(const double* M, const double* p, double* out) noexcept nogil:
    """out = R p + t."""
    cdef double x = p[0], y = p[1], z = p[2]
    out[0] = M[0] * x + M[1] * y + M[2] * z + M[3]
    out[1] = M[4] * x + M[5] * y + M[6] * z + M[7]
    out[2] = M[8] * x + M[9] * y + M[10] * z + M[11]


cdef inline void exp_coefficients(double theta, double* a, double* b) noexcept nogil:
    """a = sin(t)/t and b = (1 - cos t)/t^2, accurate for every t >= 0."""
    cdef double t2 = theta * theta, h
    if theta < RBD_SMALL_ANGLE:
        a[0] = 1.0 - t2 / 6.0 * (1.0 - t2 / 20.0)
        b[0] = 0.5 - t2 / 24.0 * (1.0 - t2 / 30.0)
    else:
        h = sin(0.5 * theta) / (0.5 * theta)  # (1 - cos t)/t^2 = sinc(t/2)^2 / 2: no cancellation
        a[0] = sin(theta) / theta
        b[0] = 0.5 * h * h


cdef inline double exp_terms(const double* w, double* x, double* k) noexcept nogil:
    """The terms of exp([w]x) = 1 + k1 [x]x + k2 [x]x^2 and of its left Jacobian
    J_l(w) = k0 1 + k3 [x]x + k4 x x^T about an axis x; returns t = |w|.

    Below RBD_SERIES_ANGLE, x = w and k = (a, a, b, b, c) with c = (t - sin t)/t^3 summed as
    its even series (the closed form cancels there).  Above, x = w/t and no power of t meets
    its inverse: in the w form, t - sin t loses every digit of sin t at t = 1e20 and t^3
    overflows from 1e103, while k = (sin t/t, sin t, 1 - cos t, (1 - cos t)/t, 1 - sin t/t)
    stays exact for every finite w."""
    cdef double t2 = w[0] * w[0] + w[1] * w[1] + w[2] * w[2], theta = sqrt(t2), h
    if theta < RBD_SERIES_ANGLE:
        x[0] = w[0]; x[1] = w[1]; x[2] = w[2]
        exp_coefficients(theta, k, k + 2)
        k[1] = k[0]; k[3] = k[2]
        # sum (-t^2)^j / (2j + 3)! by Horner's rule (constants: no division at run time); the
        # first term dropped is below 1e-18 at 0.5
        k[4] = (1.0 / 6.0 + t2 * (-1.0 / 120.0 + t2 * (1.0 / 5040.0 + t2 * (-1.0 / 362880.0 + t2 * (
            1.0 / 39916800.0 + t2 * (-1.0 / 6227020800.0 + t2 * (1.0 / 1307674368000.0 + t2 * (
                -1.0 / 355687428096000.0 + t2 * (1.0 / 121645100408832000.0)))))))))
    else:
        x[0] = w[0] / theta; x[1] = w[1] / theta; x[2] = w[2] / theta
        h = sin(0.5 * theta)
        k[1] = sin(theta)
        k[0] = k[1] / theta
        k[2] = 2.0 * h * h
        k[3] = k[2] / theta
        k[4] = 1.0 - k[0]
    return theta


cdef inline void _exp_rotation(double wx, double wy, double wz, double t2, double a, double b,
                               double* out) noexcept nogil:
    """The rotation block of the transform ``out`` = 1 + a [w]x + b [w]x^2, with
    [w]x^2 = w w^T - |w|^2 1 (t2 = |w|^2)."""
    out[0] = 1.0 + b * (wx * wx - t2)
    out[5] = 1.0 + b * (wy * wy - t2)
    out[10] = 1.0 + b * (wz * wz - t2)
    out[1] = b * wx * wy - a * wz
    out[4] = b * wx * wy + a * wz
    out[2] = b * wx * wz + a * wy
    out[8] = b * wx * wz - a * wy
    out[6] = b * wy * wz - a * wx
    out[9] = b * wy * wz + a * wx


cdef inline void se3_exp(const double* twist, double* out) noexcept nogil:
    """out = exp([v; w]^): R = 1 + k1 [x]x + k2 [x]x^2, t = J_l(w) v = k0 v + k3 x × v + k4 (x.v) x
    (exp_terms: no term cancels or overflows)."""
    cdef double x[3]
    cdef double k[5]
    exp_terms(twist + 3, x, k)
    cdef double v0 = twist[0], v1 = twist[1], v2 = twist[2]
    cdef double u0 = x[1] * v2 - x[2] * v1, u1 = x[2] * v0 - x[0] * v2, u2 = x[0] * v1 - x[1] * v0  # x × v
    cdef double along = k[4] * (x[0] * v0 + x[1] * v1 + x[2] * v2)  # the slide along x
    _exp_rotation(x[0], x[1], x[2], x[0] * x[0] + x[1] * x[1] + x[2] * x[2], k[1], k[2], out)
    out[3] = k[0] * v0 + k[3] * u0 + along * x[0]
    out[7] = k[0] * v1 + k[3] * u1 + along * x[1]
    out[11] = k[0] * v2 + k[3] * u2 + along * x[2]
    out[12] = 0.0; out[13] = 0.0; out[14] = 0.0; out[15] = 1.0


cdef inline double so3_log(const double* M, double* out) noexcept nogil:
    """out = the rotation vector of R (angle in [0, pi]); returns the angle.

    The angle is atan2(sin, cos), accurate at 0 and pi (acos is not).  Away from
    pi, w = t/sin(t) * s with s = vee(R - R^T)/2 = sin(t) axis.  Near pi, s
    vanishes: the axis comes from the symmetric part
    (R + R^T)/2 - cos(t) 1 = (1 - cos t) axis axis^T (its largest column), its
    sign from s."""
    cdef double sx = 0.5 * (M[9] - M[6])
    cdef double sy = 0.5 * (M[2] - M[8])
    cdef double sz = 0.5 * (M[4] - M[1])
    cdef double c = 0.5 * (M[0] + M[5] + M[10] - 1.0)
    cdef double s = sqrt(sx * sx + sy * sy + sz * sz)
    cdef double theta = atan2(s, c), k, ax, ay, az, bxx, byy, bzz, n, d
    if c >= -0.5:
        if theta < RBD_SMALL_ANGLE:  # t / sin t = 1 + t^2/6 + 7 t^4/360 + O(t^6): below 1e-18 dropped
            k = 1.0 + theta * theta / 6.0 * (1.0 + 7.0 * theta * theta / 60.0)
        else:
            k = theta / s
        out[0] = k * sx; out[1] = k * sy; out[2] = k * sz
        return theta
    bxx = M[0] - c
    byy = M[5] - c
    bzz = M[10] - c
    if bxx >= byy and bxx >= bzz:
        ax = bxx; ay = 0.5 * (M[1] + M[4]); az = 0.5 * (M[2] + M[8])
    elif byy >= bzz:
        ax = 0.5 * (M[1] + M[4]); ay = byy; az = 0.5 * (M[6] + M[9])
    else:
        ax = 0.5 * (M[2] + M[8]); ay = 0.5 * (M[6] + M[9]); az = bzz
    n = sqrt(ax * ax + ay * ay + az * az)  # > 0: the largest diagonal entry is >= (1 - cos t)/3
    k = theta / n
    d = ax * sx + ay * sy + az * sz
    # (d == 0: a half turn, R symmetric: w and -w are both its log; as the NumPy backend, the
    # one whose first non-zero component is positive)
    if d < 0.0 or (d == 0.0 and (ax < 0.0 or (ax == 0.0 and (ay < 0.0 or (ay == 0.0 and az < 0.0))))):
        k = -k
    out[0] = k * ax; out[1] = k * ay; out[2] = k * az
    return theta


cdef inline void left_jacobian_inverse_apply(const double* w, double theta, const double* p,
                                             double* out) noexcept nogil:
    """out = J_l(w)^-1 p = p - w x p / 2 + d w x (w x p), theta = |w| (the SE(3) log's
    translation, and the free joint's difference), d = (1 - (t/2) cot(t/2)) / t^2."""
    cdef double d, h
    if theta < RBD_SMALL_ANGLE:
        d = 1.0 / 12.0 + theta * theta * (1.0 / 720.0 + theta * theta / 30240.0)
    else:
        h = 0.5 * theta
        d = (1.0 - h * cos(h) / sin(h)) / (theta * theta)
    cdef double u0 = w[1] * p[2] - w[2] * p[1], u1 = w[2] * p[0] - w[0] * p[2], u2 = w[0] * p[1] - w[1] * p[0]
    cdef double q0 = w[1] * u2 - w[2] * u1, q1 = w[2] * u0 - w[0] * u2, q2 = w[0] * u1 - w[1] * u0
    out[0] = p[0] - 0.5 * u0 + d * q0
    out[1] = p[1] - 0.5 * u1 + d * q1
    out[2] = p[2] - 0.5 * u2 + d * q2


cdef inline void se3_log(const double* M, double* out) noexcept nogil:
    """out = [v; w] with exp([v; w]^) = M, angle in [0, pi]:
    w = log(R), v = J_l(w)^-1 t = t - w x t / 2 + d w x (w x t),
    d = (1 - (t/2) cot(t/2)) / t^2 (cot written cos/sin: accurate up to pi)."""
    cdef double w[3]
    cdef double p[3]
    cdef double theta = so3_log(M, w)
    p[0] = M[3]; p[1] = M[7]; p[2] = M[11]
    left_jacobian_inverse_apply(w, theta, p, out)
    out[3] = w[0]; out[4] = w[1]; out[5] = w[2]


# ------------------------------------------------------------------------------------------
# Motions and forces (24 multiplications per transform)
# ------------------------------------------------------------------------------------------
# A motion [v; w] and a force [f; tau] transform alike: the part that is only rotated
# (w, f) and the part that also picks up the translation (v, tau).  One formula per
# direction, in place-safe form (inputs read before outputs are written).
cdef inline void _act_pair(const double* M, const double* x, const double* y, double* out_x,
                           double* out_y) noexcept nogil:
    """out_y = R y, out_x = R x + t x (R y)."""
    cdef double x0 = x[0], x1 = x[1], x2 = x[2], y0 = y[0], y1 = y[1], y2 = y[2]
    cdef double t0 = M[3], t1 = M[7], t2 = M[11]
    cdef double a0 = M[0] * y0 + M[1] * y1 + M[2] * y2
    cdef double a1 = M[4] * y0 + M[5] * y1 + M[6] * y2
    cdef double a2 = M[8] * y0 + M[9] * y1 + M[10] * y2
    out_x[0] = M[0] * x0 + M[1] * x1 + M[2] * x2 + t1 * a2 - t2 * a1
    out_x[1] = M[4] * x0 + M[5] * x1 + M[6] * x2 + t2 * a0 - t0 * a2
    out_x[2] = M[8] * x0 + M[9] * x1 + M[10] * x2 + t0 * a1 - t1 * a0
    out_y[0] = a0; out_y[1] = a1; out_y[2] = a2


cdef inline void _inv_act_pair(const double* M, const double* x, const double* y, double* out_x,
                               double* out_y) noexcept nogil:
    """out_y = R^T y, out_x = R^T (x - t x y): the inverse of _act_pair."""
    cdef double y0 = y[0], y1 = y[1], y2 = y[2]
    cdef double t0 = M[3], t1 = M[7], t2 = M[11]
    cdef double u0 = x[0] - (t1 * y2 - t2 * y1)
    cdef double u1 = x[1] - (t2 * y0 - t0 * y2)
    cdef double u2 = x[2] - (t0 * y1 - t1 * y0)
    out_x[0] = M[0] * u0 + M[4] * u1 + M[8] * u2
    out_x[1] = M[1] * u0 + M[5] * u1 + M[9] * u2
    out_x[2] = M[2] * u0 + M[6] * u1 + M[10] * u2
    out_y[0] = M[0] * y0 + M[4] * y1 + M[8] * y2
    out_y[1] = M[1] * y0 + M[5] * y1 + M[9] * y2
    out_y[2] = M[2] * y0 + M[6] * y1 + M[10] * y2


cdef inline void act_motion(const double* M, const double* m, double* out) noexcept nogil:
    """out = Ad_M m = [R v + t x (R w); R w]."""
    _act_pair(M, m, m + 3, out, out + 3)


cdef inline void inv_act_motion(const double* M, const double* m, double* out) noexcept nogil:
    """out = Ad_M^-1 m = [R^T (v - t x w); R^T w]."""
    _inv_act_pair(M, m, m + 3, out, out + 3)


cdef inline void act_force(const double* M, const double* f, double* out) noexcept nogil:
    """out = Ad_M^-T f = [R f; R tau + t x (R f)]."""
    _act_pair(M, f + 3, f, out + 3, out)


cdef inline void inv_act_force(const double* M, const double* f, double* out) noexcept nogil:
    """out = Ad_M^T f = [R^T f; R^T (tau - t x f)]."""
    _inv_act_pair(M, f + 3, f, out + 3, out)


cdef inline void motion_cross(const double* m1, const double* m2, double* out) noexcept nogil:
    """out = m1 x m2 = ad_m1 m2 = [v1 x w2 + w1 x v2; w1 x w2]."""
    cdef double v0 = m1[0], v1 = m1[1], v2 = m1[2], w0 = m1[3], w1 = m1[4], w2 = m1[5]
    cdef double x0 = m2[0], x1 = m2[1], x2 = m2[2], y0 = m2[3], y1 = m2[4], y2 = m2[5]
    out[0] = v1 * y2 - v2 * y1 + w1 * x2 - w2 * x1
    out[1] = v2 * y0 - v0 * y2 + w2 * x0 - w0 * x2
    out[2] = v0 * y1 - v1 * y0 + w0 * x1 - w1 * x0
    out[3] = w1 * y2 - w2 * y1
    out[4] = w2 * y0 - w0 * y2
    out[5] = w0 * y1 - w1 * y0


cdef inline void force_cross(const double* m, const double* f, double* out) noexcept nogil:
    """out = m x* f = -ad_m^T f = [w x f; w x tau + v x f]."""
    cdef double v0 = m[0], v1 = m[1], v2 = m[2], w0 = m[3], w1 = m[4], w2 = m[5]
    cdef double f0 = f[0], f1 = f[1], f2 = f[2], n0 = f[3], n1 = f[4], n2 = f[5]
    out[0] = w1 * f2 - w2 * f1
    out[1] = w2 * f0 - w0 * f2
    out[2] = w0 * f1 - w1 * f0
    out[3] = w1 * n2 - w2 * n1 + v1 * f2 - v2 * f1
    out[4] = w2 * n0 - w0 * n2 + v2 * f0 - v0 * f2
    out[5] = w0 * n1 - w1 * n0 + v0 * f1 - v1 * f0


# ------------------------------------------------------------------------------------------
# Inertia (10 numbers [m, h, Ixx, Ixy, Ixz, Iyy, Iyz, Izz], I about the origin)
# ------------------------------------------------------------------------------------------
cdef inline void inertia_apply(const double* Y, const double* m, double* out) noexcept nogil:
    """out = Y m = [m v - h x w; h x v + I w]."""
    cdef double v0 = m[0], v1 = m[1], v2 = m[2], w0 = m[3], w1 = m[4], w2 = m[5]
    cdef double mass = Y[0], h0 = Y[1], h1 = Y[2], h2 = Y[3]
    out[0] = mass * v0 - (h1 * w2 - h2 * w1)
    out[1] = mass * v1 - (h2 * w0 - h0 * w2)
    out[2] = mass * v2 - (h0 * w1 - h1 * w0)
    out[3] = h1 * v2 - h2 * v1 + Y[4] * w0 + Y[5] * w1 + Y[6] * w2
    out[4] = h2 * v0 - h0 * v2 + Y[5] * w0 + Y[7] * w1 + Y[8] * w2
    out[5] = h0 * v1 - h1 * v0 + Y[6] * w0 + Y[8] * w1 + Y[9] * w2


cdef inline void inertia_apply_angular(const double* Y, const double* w, double* out) noexcept nogil:
    """out = Y [0; w] = [-h x w; I w] (inertia_apply of a pure rotation)."""
    cdef double w0 = w[0], w1 = w[1], w2 = w[2], h0 = Y[1], h1 = Y[2], h2 = Y[3]
    out[0] = h2 * w1 - h1 * w2
    out[1] = h0 * w2 - h2 * w0
    out[2] = h1 * w0 - h0 * w1
    out[3] = Y[4] * w0 + Y[5] * w1 + Y[6] * w2
    out[4] = Y[5] * w0 + Y[7] * w1 + Y[8] * w2
    out[5] = Y[6] * w0 + Y[8] * w1 + Y[9] * w2


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


cdef inline void inertia_cross_term(const double* Y, const double* m, double* out) noexcept nogil:
    """out = m x* (Y m) with five cross products: beta = h x w, f = m v - beta,
    n = h x v + I w; out = [w x f; w x n - v x beta]  (v x f = -v x beta)."""
    cdef double v0 = m[0], v1 = m[1], v2 = m[2], w0 = m[3], w1 = m[4], w2 = m[5]
    cdef double mass = Y[0], h0 = Y[1], h1 = Y[2], h2 = Y[3]
    cdef double b0 = h1 * w2 - h2 * w1, b1 = h2 * w0 - h0 * w2, b2 = h0 * w1 - h1 * w0
    cdef double f0 = mass * v0 - b0, f1 = mass * v1 - b1, f2 = mass * v2 - b2
    cdef double n0 = h1 * v2 - h2 * v1 + Y[4] * w0 + Y[5] * w1 + Y[6] * w2
    cdef double n1 = h2 * v0 - h0 * v2 + Y[5] * w0 + Y[7] * w1 + Y[8] * w2
    cdef double n2 = h0 * v1 - h1 * v0 + Y[6] * w0 + Y[8] * w1 + Y[9] * w2
    out[0] = w1 * f2 - w2 * f1
    out[1] = w2 * f0 - w0 * f2
    out[2] = w0 * f1 - w1 * f0
    out[3] = w1 * n2 - w2 * n1 - (v1 * b2 - v2 * b1)
    out[4] = w2 * n0 - w0 * n2 - (v2 * b0 - v0 * b2)
    out[5] = w0 * n1 - w1 * n0 - (v0 * b1 - v1 * b0)


cdef inline void _translation_term(double mass, double p0, double p1, double p2,
                                   double h0, double h1, double h2, double* out) noexcept nogil:
    """out (sym3) = m (|p|^2 1 - p p^T) + 2 (p.h) 1 - h p^T - p h^T: what the
    inertia about an origin gains when every point r of a body of mass m and
    first moment h becomes p + r (parallel axes)."""
    cdef double diag = mass * (p0 * p0 + p1 * p1 + p2 * p2) + 2.0 * (p0 * h0 + p1 * h1 + p2 * h2)
    cdef double k0 = mass * p0 + h0, k1 = mass * p1 + h1, k2 = mass * p2 + h2  # m p + h
    out[0] = diag - p0 * k0 - h0 * p0
    out[1] = -p0 * k1 - h0 * p1
    out[2] = -p0 * k2 - h0 * p2
    out[3] = diag - p1 * k1 - h1 * p1
    out[4] = -p1 * k2 - h1 * p2
    out[5] = diag - p2 * k2 - h2 * p2


cdef inline void inertia_act(const double* M, const double* Y, double* out) noexcept nogil:
    """out = the inertia Y (given in frame b) expressed in frame a, M = aMb:
    m' = m, h' = m t + R h, I' = R I R^T + translation_term(m, t, R h)."""
    cdef double mass = Y[0], t0 = M[3], t1 = M[7], t2 = M[11]
    cdef double rh[3]
    cdef double I[6]
    cdef double C[6]
    rotate3(M, Y + 1, rh)
    sym3_rotate(M, Y + 4, I)
    _translation_term(mass, t0, t1, t2, rh[0], rh[1], rh[2], C)
    out[0] = mass
    out[1] = mass * t0 + rh[0]
    out[2] = mass * t1 + rh[1]
    out[3] = mass * t2 + rh[2]
    out[4] = I[0] + C[0]; out[5] = I[1] + C[1]; out[6] = I[2] + C[2]
    out[7] = I[3] + C[3]; out[8] = I[4] + C[4]; out[9] = I[5] + C[5]


cdef inline void inertia_inv_act(const double* M, const double* Y, double* out) noexcept nogil:
    """out = the inertia Y (given in frame a) expressed in frame b, M = aMb (the
    inverse of inertia_act): with g = h - m t (first moment about b's origin,
    a's axes), h' = R^T g and I' = R^T (I - translation_term(m, t, g)) R."""
    cdef double mass = Y[0], t0 = M[3], t1 = M[7], t2 = M[11]
    cdef double g[3]
    cdef double S[6]
    cdef double C[6]
    g[0] = Y[1] - mass * t0
    g[1] = Y[2] - mass * t1
    g[2] = Y[3] - mass * t2
    _translation_term(mass, t0, t1, t2, g[0], g[1], g[2], C)
    S[0] = Y[4] - C[0]; S[1] = Y[5] - C[1]; S[2] = Y[6] - C[2]
    S[3] = Y[7] - C[3]; S[4] = Y[8] - C[4]; S[5] = Y[9] - C[5]
    out[0] = mass
    rotate3_t(M, g, out + 1)
    sym3_rotate_t(M, S, out + 4)


cdef inline void inertia_add(double* acc, const double* Y) noexcept nogil:
    """acc += Y (inertias about the same origin in the same axes add)."""
    acc[0] += Y[0]; acc[1] += Y[1]; acc[2] += Y[2]; acc[3] += Y[3]; acc[4] += Y[4]
    acc[5] += Y[5]; acc[6] += Y[6]; acc[7] += Y[7]; acc[8] += Y[8]; acc[9] += Y[9]


cdef inline void inertia_add_moved(double* acc, const double* Y, const double* d) noexcept nogil:
    """acc += Y moved by d: Y about a point P, acc about P - d in the same axes (every point
    r of Y's body, from P, is d + r from acc's point): h + m d, I + translation_term."""
    cdef double C[6]
    _translation_term(Y[0], d[0], d[1], d[2], Y[1], Y[2], Y[3], C)
    acc[0] += Y[0]
    acc[1] += Y[1] + Y[0] * d[0]; acc[2] += Y[2] + Y[0] * d[1]; acc[3] += Y[3] + Y[0] * d[2]
    acc[4] += Y[4] + C[0]; acc[5] += Y[5] + C[1]; acc[6] += Y[6] + C[2]
    acc[7] += Y[7] + C[3]; acc[8] += Y[8] + C[4]; acc[9] += Y[9] + C[5]


cdef inline void inertia_from_mass_com(double mass, const double* com, const double* Ic,
                                       double* out) noexcept nogil:
    """out = [m, m c, I_origin] from the mass, the com c and the 3x3 row-major
    inertia Ic about the com (its symmetric part):
    I_origin = Ic + m (|c|^2 1 - c c^T)."""
    cdef double c0 = com[0], c1 = com[1], c2 = com[2]
    cdef double cc = c0 * c0 + c1 * c1 + c2 * c2
    cdef double ixx = Ic[0], iyy = Ic[4], izz = Ic[8]
    cdef double ixy = 0.5 * (Ic[1] + Ic[3]), ixz = 0.5 * (Ic[2] + Ic[6]), iyz = 0.5 * (Ic[5] + Ic[7])
    out[0] = mass
    out[1] = mass * c0; out[2] = mass * c1; out[3] = mass * c2
    out[4] = ixx + mass * (cc - c0 * c0)
    out[5] = ixy - mass * c0 * c1
    out[6] = ixz - mass * c0 * c2
    out[7] = iyy + mass * (cc - c1 * c1)
    out[8] = iyz - mass * c1 * c2
    out[9] = izz + mass * (cc - c2 * c2)


cdef inline void inertia_to_mass_com(const double* Y, double* out) noexcept nogil:
    """out = [mass, com (3), I_com (3x3 row-major)]; a massless inertia has com 0:
    I_com = I_origin - (|h|^2 1 - h h^T) / m."""
    cdef double mass = Y[0], h0 = Y[1], h1 = Y[2], h2 = Y[3]
    # divide by m (never multiply by 1/m, which overflows for a subnormal mass)
    cdef double d = mass if mass > 0.0 else 1.0, keep = 1.0 if mass > 0.0 else 0.0
    cdef double hh = h0 * h0 + h1 * h1 + h2 * h2
    cdef double xx = Y[4] - keep * ((hh - h0 * h0) / d), yy = Y[7] - keep * ((hh - h1 * h1) / d)
    cdef double zz = Y[9] - keep * ((hh - h2 * h2) / d)
    cdef double xy = Y[5] + keep * (h0 * h1 / d), xz = Y[6] + keep * (h0 * h2 / d)
    cdef double yz = Y[8] + keep * (h1 * h2 / d)
    out[0] = mass
    out[1] = keep * (h0 / d); out[2] = keep * (h1 / d); out[3] = keep * (h2 / d)
    out[4] = xx; out[5] = xy; out[6] = xz
    out[7] = xy; out[8] = yy; out[9] = yz
    out[10] = xz; out[11] = yz; out[12] = zz


# ------------------------------------------------------------------------------------------
# Dense 6x6 matrices, row-major (for users and tests; algorithms use the kernels above)
# ------------------------------------------------------------------------------------------
cdef inline void _put3(double* out, int row, int col, double a00, double a01, double a02,
                       double a10, double a11, double a12, double a20, double a21,
                       double a22) noexcept nogil:
    """Write a 3x3 block at (row, col) of the 6x6 row-major ``out``."""
    cdef double* o = out + 6 * row + col
    o[0] = a00; o[1] = a01; o[2] = a02
    o[6] = a10; o[7] = a11; o[8] = a12
    o[12] = a20; o[13] = a21; o[14] = a22


cdef inline void _zero36(double* out) noexcept nogil:
    cdef int i
    for i in range(36):
        out[i] = 0.0


cdef inline void adjoint_matrix(const double* M, double* out) noexcept nogil:
    """out = Ad_M = [[R, [t]x R], [0, R]]."""
    cdef double r00 = M[0], r01 = M[1], r02 = M[2], r10 = M[4], r11 = M[5], r12 = M[6]
    cdef double r20 = M[8], r21 = M[9], r22 = M[10], t0 = M[3], t1 = M[7], t2 = M[11]
    _zero36(out)
    _put3(out, 0, 0, r00, r01, r02, r10, r11, r12, r20, r21, r22)
    _put3(out, 3, 3, r00, r01, r02, r10, r11, r12, r20, r21, r22)
    # [t]x R, column j = t x R_j
    _put3(out, 0, 3,
          t1 * r20 - t2 * r10, t1 * r21 - t2 * r11, t1 * r22 - t2 * r12,
          t2 * r00 - t0 * r20, t2 * r01 - t0 * r21, t2 * r02 - t0 * r22,
          t0 * r10 - t1 * r00, t0 * r11 - t1 * r01, t0 * r12 - t1 * r02)


cdef inline void _cross_blocks(const double* m, int v_row, int v_col, double* out) noexcept nogil:
    """out = [w]x on both diagonal blocks, [v]x in the off-diagonal block at (v_row, v_col)."""
    cdef double v0 = m[0], v1 = m[1], v2 = m[2], w0 = m[3], w1 = m[4], w2 = m[5]
    _zero36(out)
    _put3(out, 0, 0, 0.0, -w2, w1, w2, 0.0, -w0, -w1, w0, 0.0)
    _put3(out, 3, 3, 0.0, -w2, w1, w2, 0.0, -w0, -w1, w0, 0.0)
    _put3(out, v_row, v_col, 0.0, -v2, v1, v2, 0.0, -v0, -v1, v0, 0.0)


cdef inline void ad_matrix(const double* m, double* out) noexcept nogil:
    """out = ad_m = [[[w]x, [v]x], [0, [w]x]]."""
    _cross_blocks(m, 0, 3, out)


cdef inline void ad_star_matrix(const double* m, double* out) noexcept nogil:
    """out = the matrix of force_cross(m, .) = -ad_m^T = [[[w]x, 0], [[v]x, [w]x]]."""
    _cross_blocks(m, 3, 0, out)


cdef inline void inertia_matrix(const double* Y, double* out) noexcept nogil:
    """out = [[m 1, -[h]x], [[h]x, I_origin]]."""
    cdef double mass = Y[0], h0 = Y[1], h1 = Y[2], h2 = Y[3]
    cdef double ixx = Y[4], ixy = Y[5], ixz = Y[6], iyy = Y[7], iyz = Y[8], izz = Y[9]
    _zero36(out)
    _put3(out, 0, 0, mass, 0.0, 0.0, 0.0, mass, 0.0, 0.0, 0.0, mass)
    _put3(out, 0, 3, 0.0, h2, -h1, -h2, 0.0, h0, h1, -h0, 0.0)
    _put3(out, 3, 0, 0.0, -h2, h1, h2, 0.0, -h0, -h1, h0, 0.0)
    _put3(out, 3, 3, ixx, ixy, ixz, ixy, iyy, iyz, ixz, iyz, izz)


# ------------------------------------------------------------------------------------------
# Input checks
# ------------------------------------------------------------------------------------------
cdef extern from *:
    """
    /* Whether any of the n doubles is NaN or infinite, sixteen at a time in four independent
       vectors (the driver scans every input and output: 2500 numbers per matrix on Talos).
       With AVX2: x * 0 is +-0 for a finite x and NaN otherwise, so the products' bits, or-ed
       together, hold an exponent only if some x was not finite: a multiplication from memory
       and an or per four numbers.  Without: the exponent bits are all ones, the only case
       where adding one to the exponent field carries into the sign bit (and, add and or).
       Measured on each instruction set, the first is 15-20% faster on 2500 numbers with
       AVX2 and 25% slower without; a sum of the products instead waits on each addition. */
    RBD_FAST __attribute__((unused))
    static int rbd_any_nonfinite(const double* x, Py_ssize_t n) {
        size_t j = 0;
    #if (defined(__GNUC__) || defined(__clang__)) && defined(__AVX2__)
        const rbd_v4 zero = {0.0, 0.0, 0.0, 0.0};
        rbd_i4 c0 = {0}, c1 = {0}, c2 = {0}, c3 = {0};
        long long bits;
        for (; j + 16 <= (size_t)n; j += 16) {
            c0 |= (rbd_i4)(rbd_load4(x + j) * zero);
            c1 |= (rbd_i4)(rbd_load4(x + j + 4) * zero);
            c2 |= (rbd_i4)(rbd_load4(x + j + 8) * zero);
            c3 |= (rbd_i4)(rbd_load4(x + j + 12) * zero);
        }
        for (; j + 4 <= (size_t)n; j += 4)
            c0 |= (rbd_i4)(rbd_load4(x + j) * zero);
        c0 |= c1 | c2 | c3;
        bits = c0[0] | c0[1] | c0[2] | c0[3];
        for (; j < (size_t)n; j++) {
            const double product = x[j] * 0.0;
            long long b;
            memcpy(&b, &product, sizeof b);
            bits |= b;
        }
        return (bits & 0x7FF0000000000000LL) != 0;
    #else
        const uint64_t exponent = 0x7FF0000000000000ULL, one = 0x0010000000000000ULL;
        uint64_t carry = 0;
    #if defined(__GNUC__) || defined(__clang__)
        typedef uint64_t rbd_u4 __attribute__((vector_size(32)));
        rbd_u4 c[4] = {{0}};
        for (; j + 16 <= (size_t)n; j += 16)
            for (int k = 0; k < 4; k++) {
                rbd_u4 bits;
                memcpy(&bits, x + j + 4 * k, sizeof bits);
                c[k] |= (bits & exponent) + one;
            }
        c[0] |= c[1] | c[2] | c[3];
        carry = c[0][0] | c[0][1] | c[0][2] | c[0][3];
    #endif
        for (; j < (size_t)n; j++) {
            uint64_t bits;
            memcpy(&bits, x + j, sizeof bits);
            carry |= (bits & exponent) + one;
        }
        return (int)(carry >> 63);
    #endif
    }
    """
    bint any_nonfinite "rbd_any_nonfinite" (const double* x, Py_ssize_t n) noexcept nogil


cdef extern from *:
    """
    /* The dot product of two rows in four independent sums: one running sum waits for
       each product's addition (a contact Cholesky of 3,000 rows ran at 1 GFLOP/s). */
    RBD_FAST __attribute__((unused))
    static double rbd_dot_rows(const double* a, const double* b, int n) {
        double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0;
        int k = 0;
        for (; k + 4 <= n; k += 4) {
            s0 += a[k] * b[k];
            s1 += a[k + 1] * b[k + 1];
            s2 += a[k + 2] * b[k + 2];
            s3 += a[k + 3] * b[k + 3];
        }
        for (; k < n; k++) s0 += a[k] * b[k];
        return (s0 + s1) + (s2 + s3);
    }
    """
    double dot_rows "rbd_dot_rows" (const double* a, const double* b, int n) noexcept nogil


cdef extern from *:
    """
    /* dst[0..n) = src[0..n) with non-temporal stores where the CPU has them (x86-64's
       SSE2): the lines go to memory without being read first (a store that misses the
       cache otherwise reads its line), and do not evict the cache's working set.  For a
       batch's outputs, written once and far larger than the cache.  Ordered before
       other threads' reads by rbd_stream_fence. */
    #if defined(__SSE2__)
    #include <emmintrin.h>
    #endif
    __attribute__((unused))
    static void rbd_stream_copy(double* dst, const double* src, Py_ssize_t n) {
    #if defined(__SSE2__)
        Py_ssize_t i = 0;
        if (((uintptr_t)dst & 7) == 0) {
            if (((uintptr_t)dst & 15) != 0 && n > 0) {  /* to a 16-byte boundary */
                dst[0] = src[0];
                i = 1;
            }
            for (; i + 2 <= n; i += 2)
                _mm_stream_pd(dst + i, _mm_loadu_pd(src + i));
        }
        for (; i < n; i++)
            dst[i] = src[i];
    #else
        memcpy(dst, src, (size_t)n * sizeof(double));
    #endif
    }
    __attribute__((unused))
    static void rbd_stream_fence(void) {
    #if defined(__SSE2__)
        _mm_sfence();
    #endif
    }
    """
    void stream_copy "rbd_stream_copy" (double* dst, const double* src, Py_ssize_t n) noexcept nogil
    void stream_fence "rbd_stream_fence" () noexcept nogil
