# cython: language_level=3
"""Every joint kind of the compiled backend, in one place (with its C half, _joints.h).

A kind is one row of ``rbd_joint_table`` (_joints.h: its coordinates: nq, nv, where its
unit quaternion starts, and the unit columns of its motion subspace S when S
is a selection of them) plus one branch in each function: how the joint
places its body (``rbd_joint_placement`` in _joints.h, so that every pass inlines
it), how its motion subspace acts on joint
velocities and forces (``joint_motion``, ``joint_motion_add``, ``joint_force``,
``joint_column``), and how its coordinates live on their manifold
(``joint_neutral``, ``joint_integrate``, ``joint_difference``,
``joint_normalize``, and the tangent-space Jacobians of integrate and difference:
``joint_integrate_jacobians``, ``joint_difference_jacobians``).  The Python side
holds the same table (``rbd.model.JOINT_KINDS``), and a test checks that the two agree.

Kinds are validated when a model is compiled (``0 <= kind < K_COUNT``); the
branches name every kind explicitly, and the last ``else`` only fills
NaN (the driver then refuses the non-finite result): no kind silently runs as
another.  Every joint kind's S is constant in the body frame, so no joint has a
bias acceleration.  Adding a kind: a code and a row in _joints.h, a branch in each
function, the same row in ``rbd.model.JOINT_KINDS``.
"""
cimport cython
from libc.math cimport sin, cos, sqrt, fabs, atan2, NAN

from rbd_c._model cimport CModel
from rbd_c._kernels cimport RBD_SERIES_ANGLE, exp_coefficients, exp_terms, se3_exp, left_jacobian_inverse_apply, adjoint_matrix

cdef extern from "_joints.h":
    # The kinds' codes and table (one row per kind: nq, nv, where the unit quaternion
    # starts in the joint's q (-1: none), the axis (0, 1, 2) of a revolute joint about a
    # basis vector (-1: other), the unit columns of S (-1: S uses the joint's axis)).
    cdef enum:
        K_REV_X "RBD_REVOLUTE_X"
        K_REV_Y "RBD_REVOLUTE_Y"
        K_REV_Z "RBD_REVOLUTE_Z"
        K_REV "RBD_REVOLUTE"
        K_PRISM "RBD_PRISMATIC"
        K_SPH "RBD_SPHERICAL"
        K_PLANAR "RBD_PLANAR"
        K_FREE "RBD_FREE"
        K_COUNT "RBD_KIND_COUNT"
    ctypedef struct rbd_joint_kind_row:
        int nq
        int nv
        int quaternion
        int basis
        int cols[6]
    const rbd_joint_kind_row* rbd_joint_table
    # unit quaternions [w, x, y, z]: the largest |component|; q / |q| without overflow
    # (zeros for a zero q); the rotation matrix (3x3 row-major) of q normalised
    double quat_largest "rbd_quat_largest"(const double* q) noexcept nogil
    void quat_unit "rbd_quat_unit"(const double* q, double* out) noexcept nogil
    void quat_to_rot "rbd_quat_to_rot"(const double* q, double* R) noexcept nogil
    # out = parent_from_body of body i = joint_placements[i] @ joint_transform(q_i), 4x4;
    # always inlined (a macro over rbd_joint_placement)
    void joint_placement "RBD_BODY_PLACEMENT"(const CModel* m, int i, const double* qj, double* out) noexcept nogil
    # the same inside a loop over every body i = 0, 1, ..., nb - 1 in order, from the whole
    # q: the revolute joints' sines and cosines are evaluated a block of SINCOS_BLOCK bodies
    # at a time, vectorised, into the loop's S and C (SINCOS_BLOCK doubles each)
    cdef enum:
        SINCOS_BLOCK "RBD_SINCOS_BLOCK"
    void loop_placement "RBD_LOOP_PLACEMENT"(const CModel* m, int i, const double* q, double* S, double* C,
                                             double* out) noexcept nogil
    # the sines and cosines of q[idx[0]], ..., q[idx[SINCOS_BLOCK - 1]] at once (vectorised), and
    # a body's placement with its angle's given (read by the revolute kinds only)
    void block_sincos "rbd_block_sincos"(const int* idx, const double* q, double* S, double* C) noexcept nogil
    void placement_sc "RBD_PLACEMENT_SC"(const CModel* m, int i, const double* qj, const double* S,
                                         const double* C, double* out) noexcept nogil


# ---------------------------------------------------------------------------------------
# Unit quaternions [w, x, y, z] (and _joints.h)
# ---------------------------------------------------------------------------------------
cdef inline void _quat_mul(const double* a, const double* b, double* out) noexcept nogil:
    cdef double w = a[0] * b[0] - a[1] * b[1] - a[2] * b[2] - a[3] * b[3]
    cdef double x = a[0] * b[1] + a[1] * b[0] + a[2] * b[3] - a[3] * b[2]
    cdef double y = a[0] * b[2] - a[1] * b[3] + a[2] * b[0] + a[3] * b[1]
    cdef double z = a[0] * b[3] + a[1] * b[2] - a[2] * b[1] + a[3] * b[0]
    out[0] = w; out[1] = x; out[2] = y; out[3] = z


@cython.cdivision(True)
cdef inline void _quat_exp(const double* w, double* out) noexcept nogil:
    """Unit quaternion of the rotation vector w."""
    cdef double t2 = w[0] * w[0] + w[1] * w[1] + w[2] * w[2]
    cdef double t = sqrt(t2), k
    if t < 1e-4:
        k = 0.5 - t2 / 48.0
    else:
        k = sin(0.5 * t) / t
    out[0] = cos(0.5 * t)
    out[1] = k * w[0]; out[2] = k * w[1]; out[3] = k * w[2]


@cython.cdivision(True)
cdef inline void _quat_log(const double* q, double* out) noexcept nogil:
    """Rotation vector (angle in [0, pi]) of the unit quaternion q: of q and -q the one with
    w > 0, at w == 0 (a half turn) the one whose first non-zero component is positive, as
    the NumPy backend (rotations._canonical)."""
    cdef double w = q[0], x = q[1], y = q[2], z = q[3], n, k
    if w < 0.0 or (w == 0.0 and (x < 0.0 or (x == 0.0 and (y < 0.0 or (y == 0.0 and z < 0.0))))):
        w = -w; x = -x; y = -y; z = -z
    n = sqrt(x * x + y * y + z * z)
    if n < 1e-8:
        k = 2.0 / w * (1.0 - n * n / (3.0 * w * w)) if w > 0.0 else 0.0
    else:
        k = 2.0 * atan2(n, w) / n
    out[0] = k * x; out[1] = k * y; out[2] = k * z


cdef inline void _quat_conj(const double* q, double* out) noexcept nogil:
    out[0] = q[0]; out[1] = -q[1]; out[2] = -q[2]; out[3] = -q[3]


# ---------------------------------------------------------------------------------------
# SE(3) / SE(2) left Jacobians
# ---------------------------------------------------------------------------------------
cdef inline void _se2_V(double phi, double* a, double* b) noexcept nogil:
    """V(phi) = [[a, -b], [b, a]] with a = sin(phi)/phi, b = (1 - cos(phi))/phi (the
    SE(3) exponential's coefficients, so both share one small-angle series)."""
    exp_coefficients(fabs(phi), a, b)
    b[0] = b[0] * phi


cdef inline void _coupling_coefficients(double theta, const double* k, double* q) noexcept nogil:
    """The coefficients q of Barfoot's coupling block about exp_terms' axis x (k its terms):
    Q = X/2 + q0 (PX + XP) + q1 PXP + q2 (PPX + XPP - 3 PXP) + q3 (PXPP + PPXP), P = [x]x.
    About x = w they are c, c, c2 = (t^2 + 2 cos t - 2) / (2 t^4) and
    c3 = (2 t - 3 sin t + t cos t) / (2 t^5), summed below RBD_SERIES_ANGLE as the even
    series c2 = sum p_k, c3 = sum (k + 1) p_k / (2k + 5), p_k = (-t^2)^k / (2k + 4)! (the
    closed forms cancel; rbd.reference sums the same series); about the unit axis, c t,
    c t^2, c2 t^2 = 1/2 - (1 - cos t)/t^2 and c3 t^3 = (2 + cos t - 3 sin t / t) / (2t)."""
    cdef double t2 = theta * theta, p = 1.0 / 24.0
    cdef int j
    if theta < RBD_SERIES_ANGLE:
        q[0] = k[4]; q[1] = k[4]
        q[2] = 0.0
        q[3] = 0.0
        for j in range(9):
            q[2] += p
            q[3] += (j + 1) * p / (2 * j + 5)
            p *= -t2 / ((2 * j + 5) * (2 * j + 6))
    else:
        q[0] = k[4] / theta; q[1] = k[4]
        q[2] = 0.5 - k[3] / theta
        q[3] = (2.0 + cos(theta) - 3.0 * k[0]) / (2.0 * theta)


cdef inline void _skew3(const double* w, double* out) noexcept nogil:
    out[0] = 0.0; out[1] = -w[2]; out[2] = w[1]
    out[3] = w[2]; out[4] = 0.0; out[5] = -w[0]
    out[6] = -w[1]; out[7] = w[0]; out[8] = 0.0


cdef inline void _mul3(const double* A, const double* B, double* out) noexcept nogil:
    """out = A B (3x3 row-major; out must not alias A or B)."""
    cdef int r, c
    for r in range(3):
        for c in range(3):
            out[3 * r + c] = A[3 * r] * B[c] + A[3 * r + 1] * B[3 + c] + A[3 * r + 2] * B[6 + c]


cdef inline void se3_left_jacobian(const double* twist, bint inverse, double* out) noexcept nogil:
    """out (6x6 row-major) = the left Jacobian of SE(3) at the twist [rho; phi] (linear
    first), or its inverse: [[J, Q], [0, J]] with J the SO(3) left Jacobian of phi and Q
    Barfoot's coupling block, both about exp_terms' axis x (P = [x]x, X = [rho]x);
    the inverse is [[J^-1, -J^-1 Q J^-1], [0, J^-1]], finite for |phi| < 2 pi.  The right
    Jacobian is the left one at -twist."""
    cdef double P[9]
    cdef double X[9]
    cdef double PX[9]
    cdef double XP[9]
    cdef double PXP[9]
    cdef double PPX[9]
    cdef double XPP[9]
    cdef double PXPP[9]
    cdef double PPXP[9]
    cdef double Q[9]
    cdef double J[9]
    cdef double e[3]
    cdef double x[3]
    cdef double k[5]
    cdef double q[4]
    cdef double theta = exp_terms(twist + 3, x, k)
    cdef int r, j
    _coupling_coefficients(theta, k, q)
    _skew3(x, P)
    _skew3(twist, X)
    _mul3(P, X, PX)
    _mul3(X, P, XP)
    _mul3(PX, P, PXP)
    _mul3(P, PX, PPX)
    _mul3(XP, P, XPP)
    _mul3(PXP, P, PXPP)
    _mul3(P, PXP, PPXP)
    for r in range(9):
        Q[r] = (0.5 * X[r] + q[0] * (PX[r] + XP[r]) + q[1] * PXP[r] + q[2] * (PPX[r] + XPP[r] - 3.0 * PXP[r])
                + q[3] * (PXPP[r] + PPXP[r]))
    if inverse:
        for j in range(3):  # column j of J^-1 = J^-1 e_j
            e[0] = 0.0; e[1] = 0.0; e[2] = 0.0
            e[j] = 1.0
            left_jacobian_inverse_apply(twist + 3, theta, e, e)
            J[j] = e[0]; J[3 + j] = e[1]; J[6 + j] = e[2]
        _mul3(J, Q, PX)
        _mul3(PX, J, Q)
        for r in range(9):
            Q[r] = -Q[r]
    else:  # J = k0 1 + k3 [x]x + k4 x x^T
        for r in range(3):
            for j in range(3):
                J[3 * r + j] = k[3] * P[3 * r + j] + k[4] * x[r] * x[j]
            J[4 * r] += k[0]
    for r in range(3):
        for j in range(3):
            out[6 * r + j] = J[3 * r + j]
            out[6 * (r + 3) + j + 3] = J[3 * r + j]
            out[6 * r + j + 3] = Q[3 * r + j]
            out[6 * (r + 3) + j] = 0.0



# ---------------------------------------------------------------------------------------
# Placement and motion subspace
# ---------------------------------------------------------------------------------------

cdef inline void joint_motion_add(const CModel* m, int i, const double* vj, double* out) noexcept nogil:
    """out += S_i vj."""
    cdef int k = m.kinds[i], c
    cdef const double* u = m.axes + 3 * i
    if k == K_REV:
        out[3] += u[0] * vj[0]; out[4] += u[1] * vj[0]; out[5] += u[2] * vj[0]
    elif k == K_PRISM:
        out[0] += u[0] * vj[0]; out[1] += u[1] * vj[0]; out[2] += u[2] * vj[0]
    else:  # REVOLUTE_X/Y/Z, SPHERICAL, PLANAR, FREE: unit columns
        for c in range(rbd_joint_table[k].nv):
            out[rbd_joint_table[k].cols[c]] += vj[c]


cdef inline void joint_motion(const CModel* m, int i, const double* vj, double* out) noexcept nogil:
    """out = S_i vj (the joint twist in the body frame)."""
    cdef int r
    for r in range(6):
        out[r] = 0.0
    joint_motion_add(m, i, vj, out)


cdef inline void joint_force(const CModel* m, int i, const double* f, double* out) noexcept nogil:
    """out = S_i^T f (nv_i numbers)."""
    cdef int k = m.kinds[i], c
    cdef const double* u = m.axes + 3 * i
    if k == K_REV:
        out[0] = u[0] * f[3] + u[1] * f[4] + u[2] * f[5]
    elif k == K_PRISM:
        out[0] = u[0] * f[0] + u[1] * f[1] + u[2] * f[2]
    else:
        for c in range(rbd_joint_table[k].nv):
            out[c] = f[rbd_joint_table[k].cols[c]]


cdef inline void joint_column(const CModel* m, int i, int col, double* out) noexcept nogil:
    """out = column ``col`` of S_i (a 6-vector in the body frame)."""
    cdef int k = m.kinds[i], r
    cdef const double* u = m.axes + 3 * i
    for r in range(6):
        out[r] = 0.0
    if k == K_REV:
        out[3] = u[0]; out[4] = u[1]; out[5] = u[2]
    elif k == K_PRISM:
        out[0] = u[0]; out[1] = u[1]; out[2] = u[2]
    else:
        out[rbd_joint_table[k].cols[col]] = 1.0


cdef inline int unit_column(int kind, int col) noexcept nogil:
    """The index k of the unit motion e_k that is column col of S (-1: an axis column)."""
    return rbd_joint_table[kind].cols[col]


cdef inline int basis_axis(int kind) noexcept nogil:
    """0, 1, 2 for a revolute joint about the x, y, z axis of its frame; -1 otherwise."""
    return rbd_joint_table[kind].basis


cdef inline bint zero_quaternion(const CModel* m, const double* q) noexcept nogil:
    """True if a joint quaternion of the configuration q is (near) zero: it has no direction."""
    cdef int j, k
    cdef double u
    for j in range(m.nquat):
        k = m.quat_q[j]
        # |q| < 1e-12 (as rbd._checks), read without squaring: |q| <= 2 max |q_i|
        if quat_largest(q + k) < 5e-13:
            u = quat_largest(q + k)
            if u == 0.0 or u * sqrt((q[k] / u) ** 2 + (q[k + 1] / u) ** 2 + (q[k + 2] / u) ** 2
                                    + (q[k + 3] / u) ** 2) < 1e-12:
                return True
    return False


# ---------------------------------------------------------------------------------------
# Configuration space: each joint's coordinates on their manifold
# ---------------------------------------------------------------------------------------
cdef inline void joint_neutral(int k, double* qj) noexcept nogil:
    """The neutral coordinates: zeros, and the identity quaternion."""
    cdef int r
    for r in range(rbd_joint_table[k].nq):
        qj[r] = 0.0
    if rbd_joint_table[k].quaternion >= 0:
        qj[rbd_joint_table[k].quaternion] = 1.0


@cython.cdivision(True)
cdef inline void joint_integrate(int k, const double* qj, const double* vj, double* oj) noexcept nogil:
    """oj = qj (+) vj: spherical joints compose unit quaternions on the right (v is the
    body angular velocity); planar and free joints use the SE(2) and SE(3)
    exponentials on the right (v is the body twist); the others add."""
    cdef int j
    cdef double e[4]
    cdef double T[16]
    cdef double R[9]
    cdef double a, b, cs, sn, tx, ty
    if k == K_SPH:
        _quat_exp(vj, e)
        _quat_mul(qj, e, oj)
        quat_unit(oj, oj)
    elif k == K_PLANAR:
        _se2_V(vj[2], &a, &b)
        tx = a * vj[0] - b * vj[1]
        ty = b * vj[0] + a * vj[1]
        cs = cos(qj[2]); sn = sin(qj[2])
        oj[0] = qj[0] + cs * tx - sn * ty
        oj[1] = qj[1] + sn * tx + cs * ty
        oj[2] = qj[2] + vj[2]
    elif k == K_FREE:
        se3_exp(vj, T)  # the body-frame step: its translation is J_l(w) v
        quat_to_rot(qj + 3, R)
        for j in range(3):
            oj[j] = qj[j] + R[3 * j] * T[3] + R[3 * j + 1] * T[7] + R[3 * j + 2] * T[11]
        _quat_exp(vj + 3, e)
        _quat_mul(qj + 3, e, oj + 3)
        quat_unit(oj + 3, oj + 3)
    elif k == K_REV_X or k == K_REV_Y or k == K_REV_Z or k == K_REV or k == K_PRISM:
        oj[0] = qj[0] + vj[0]
    else:
        oj[0] = NAN


@cython.cdivision(True)
cdef inline void joint_difference(int k, const double* a, const double* b, double* oj) noexcept nogil:
    """oj = the velocity v_j with a (+) v_j = b."""
    cdef int j
    cdef double qa[4]
    cdef double qb[4]
    cdef double rel[4]
    cdef double d[3]
    cdef double p[3]
    cdef double R[9]
    cdef double phi, cs, sn, dx, dy, h, ct
    if k == K_SPH:
        quat_unit(a, qa)
        quat_unit(b, qb)
        _quat_conj(qa, qa)
        _quat_mul(qa, qb, rel)
        _quat_log(rel, oj)
    elif k == K_PLANAR:
        # SE(2) log of the relative pose: the angle is wrapped to (-pi, pi]
        phi = atan2(sin(b[2] - a[2]), cos(b[2] - a[2]))
        cs = cos(a[2]); sn = sin(a[2])
        dx = cs * (b[0] - a[0]) + sn * (b[1] - a[1])
        dy = -sn * (b[0] - a[0]) + cs * (b[1] - a[1])
        # V(phi)^-1 = [[h cot(h), h], [-h, h cot(h)]] with h = phi / 2
        h = 0.5 * phi
        if fabs(phi) < 1e-4:
            ct = 1.0 - h * h / 3.0
        else:
            ct = h * cos(h) / sin(h)
        oj[0] = ct * dx + h * dy
        oj[1] = -h * dx + ct * dy
        oj[2] = phi
    elif k == K_FREE:
        quat_unit(a + 3, qa)
        quat_unit(b + 3, qb)
        quat_to_rot(qa, R)
        for j in range(3):
            d[j] = b[j] - a[j]
        for j in range(3):
            p[j] = R[j] * d[0] + R[3 + j] * d[1] + R[6 + j] * d[2]   # R0^T (p1 - p0)
        _quat_conj(qa, qa)
        _quat_mul(qa, qb, rel)
        _quat_log(rel, oj + 3)
        left_jacobian_inverse_apply(oj + 3, sqrt(oj[3] * oj[3] + oj[4] * oj[4] + oj[5] * oj[5]), p, oj)
    elif k == K_REV_X or k == K_REV_Y or k == K_REV_Z or k == K_REV or k == K_PRISM:
        oj[0] = b[0] - a[0]
    else:
        oj[0] = NAN


# ---------------------------------------------------------------------------------------
# Tangent-space Jacobians of integrate and difference
# ---------------------------------------------------------------------------------------
cdef inline bint _on_group(int k) noexcept nogil:
    return k == K_SPH or k == K_PLANAR or k == K_FREE


cdef inline void _group_twist(int k, const double* vj, double sign, double* twist) noexcept nogil:
    """twist = sign * S vj.  A joint on a group (spherical, planar, free) moves in a subgroup
    of SE(3) whose Lie algebra is spanned by the unit columns of S; SE(3)'s Jacobians map
    that algebra to itself, so the joint's Jacobians are their rows and columns at S."""
    cdef int c
    for c in range(6):
        twist[c] = 0.0
    for c in range(rbd_joint_table[k].nv):
        twist[rbd_joint_table[k].cols[c]] = sign * vj[c]


cdef inline void _group_block(int k, const double* A, double scale, double* out, int ld) noexcept nogil:
    """out (the joint's block, rows ld apart) = scale * the rows and columns of the 6x6 A
    at the unit columns of S."""
    cdef int r, c, n = rbd_joint_table[k].nv
    cdef const int* cols = rbd_joint_table[k].cols
    for r in range(n):
        for c in range(n):
            out[r * ld + c] = scale * A[6 * cols[r] + cols[c]]


cdef inline void joint_integrate_jacobians(int k, const double* vj, double* d_dq, double* d_dv,
                                           int ld) noexcept nogil:
    """The joint's blocks (rows ld apart) of the Jacobians of q (+) v:
    (q (+) dq) (+) (v + dv) = (q (+) v) (+) (d_dq dq + d_dv dv).  On a group (q (+) v = M exp(v)):
    d_dq = Ad(exp(-v)), d_dv = J_r(v); the kinds that add: 1 and 1."""
    cdef double twist[6]
    cdef double T[16]
    cdef double A[36]
    if _on_group(k):
        _group_twist(k, vj, -1.0, twist)
        se3_exp(twist, T)
        adjoint_matrix(T, A)
        _group_block(k, A, 1.0, d_dq, ld)
        se3_left_jacobian(twist, False, A)
        _group_block(k, A, 1.0, d_dv, ld)
    elif k == K_REV_X or k == K_REV_Y or k == K_REV_Z or k == K_REV or k == K_PRISM:
        d_dq[0] = 1.0
        d_dv[0] = 1.0
    else:
        d_dq[0] = NAN
        d_dv[0] = NAN


cdef inline void joint_difference_jacobians(int k, const double* a, const double* b, double* d_da,
                                            double* d_db, int ld) noexcept nogil:
    """The joint's blocks (rows ld apart) of the Jacobians of v = difference(a, b) for a (+) da
    and b (+) db.  On a group (v = log(A^-1 B)): d_da = -J_l(v)^-1, d_db = J_r(v)^-1 (at a
    rotation angle of pi, the one-sided Jacobians at the v joint_difference picks); the
    kinds that add: -1 and 1."""
    cdef double v[6]
    cdef double twist[6]
    cdef double A[36]
    if _on_group(k):
        joint_difference(k, a, b, v)
        _group_twist(k, v, 1.0, twist)
        se3_left_jacobian(twist, True, A)
        _group_block(k, A, -1.0, d_da, ld)
        _group_twist(k, v, -1.0, twist)
        se3_left_jacobian(twist, True, A)
        _group_block(k, A, 1.0, d_db, ld)
    elif k == K_REV_X or k == K_REV_Y or k == K_REV_Z or k == K_REV or k == K_PRISM:
        d_da[0] = -1.0
        d_db[0] = 1.0
    else:
        d_da[0] = NAN
        d_db[0] = NAN


cdef inline void joint_normalize(int k, const double* qj, double* oj) noexcept nogil:
    """oj = qj with its quaternion (if any) scaled to unit norm."""
    cdef int r, s = rbd_joint_table[k].quaternion
    for r in range(rbd_joint_table[k].nq):
        oj[r] = qj[r]
    if s >= 0:
        quat_unit(qj + s, oj + s)
