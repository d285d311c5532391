# cython: language_level=3
"""The compiled view of a Model, joint calculations, and the batch driver.

``CModel`` is a C struct of the model's flat arrays (copied once per model
and cached on it).  The joint helpers below give, per joint kind, the
parent-from-body placement and the action of the motion subspace S and of
its transpose without forming S.  Every joint kind's S is constant in the
body frame, and except for REVOLUTE and PRISMATIC (one column [0; axis] or
[axis; 0]) it is a selection of unit columns, listed in ``SEL``.

``run`` (in _model.pyx) is the single driver every algorithm goes through:
it checks and unpacks the arguments (fast path for exact-shape float64
C-contiguous ndarrays, rbd._checks otherwise), allocates the output and
calls the algorithm's kernel once per sample, over the batch in parallel.
"""
from libc.math cimport sin, cos, sqrt, fabs

cdef enum JointCode:
    K_REV_X = 0
    K_REV_Y = 1
    K_REV_Z = 2
    K_REV = 3
    K_PRISM = 4
    K_SPH = 5
    K_PLANAR = 6
    K_FREE = 7

# Frame velocity/Jacobian reference codes.
cdef enum RefCode:
    REF_LOCAL = 0
    REF_WORLD = 1
    REF_LWA = 2

ctypedef struct CModel:
    int nb
    int nq
    int nv
    int nframes
    int nd2                 # sum of nv_i**2 (storage of per-joint nv x nv blocks)
    int max_depth
    int* parents            # (nb,)  -1: the world
    int* kinds              # (nb,)
    int* q_idx              # (nb,)
    int* v_idx              # (nb,)
    int* nqj                # (nb,)
    int* nvj                # (nb,)
    int* d2_idx             # (nb,)  start of the joint's nv x nv block
    int* subtree_end        # (nb,)  bodies i..subtree_end[i]-1 are i's subtree
    int* depth              # (nb,)  number of ancestors including itself
    double* axes            # (nb, 3)
    double* placements      # (nb, 16) parent_from_joint, row-major 4x4
    double* inertias        # (nb, 10)
    int* frame_parents      # (nframes,)
    double* frame_placements  # (nframes, 16) body_from_frame
    double total_mass
    double singular_tol     # articulated-inertia pivots at or below this are singular

# Per-call parameters handed to the kernels (read-only during the loop).
ctypedef struct Call:
    const CModel* m
    double g[3]             # gravity, world frame
    int frame               # frame index (kinematics)
    int body                # the frame's body (-1: world)
    int ref                 # RefCode
    int flag                # algorithm variant

# One sample: ins[k] points at input k of this sample (NULL when absent).  Returns 0,
# or 1 + i when body i's joint makes forward dynamics singular.
ctypedef int (*kernel_t)(const Call* c, const double** ins, double* out, double* work) noexcept nogil


cdef class CompiledModel:
    cdef CModel m
    cdef object owner       # the arrays the pointers of m point into


cdef CompiledModel compiled(object model)
cdef CompiledModel prepare_call(Call* call, object model)
cdef CompiledModel prepare_mass_call(Call* call, object model)
cdef object run(object model, CompiledModel cm, Call* call, const char* spec, tuple names, tuple values,
                int out_nd, Py_ssize_t* out_dims, kernel_t kern, Py_ssize_t work_doubles, int cost)
cdef int resolve_frame(Call* call, CompiledModel cm, object model, object frame) except -1
cdef int resolve_reference(Call* call, object reference) except -1
cdef int current_threads() noexcept nogil


# ---------------------------------------------------------------------------------------
# Unit-column selections of S for each kind (REVOLUTE / PRISMATIC use the axis instead).
# ---------------------------------------------------------------------------------------
cdef extern from *:
    """
    static const int rbd_sel[8][6] = {
        {3, 0, 0, 0, 0, 0}, {4, 0, 0, 0, 0, 0}, {5, 0, 0, 0, 0, 0}, {0, 0, 0, 0, 0, 0},
        {0, 0, 0, 0, 0, 0}, {3, 4, 5, 0, 0, 0}, {0, 1, 5, 0, 0, 0}, {0, 1, 2, 3, 4, 5}};
    """
    const int rbd_sel[8][6]


cdef inline double quat_largest(const double* q) noexcept nogil:
    """The largest |component| of the quaternion q (|q| lies between it and twice it)."""
    cdef double a = fabs(q[0]), b = fabs(q[1]), c = fabs(q[2]), d = fabs(q[3])
    if b > a:
        a = b
    if d > c:
        c = d
    return a if a > c else c


cdef inline void quat_unit(const double* q, double* out) noexcept nogil:
    """out = q / |q|, scaled by its largest component first so that no square
    overflows or underflows (a zero q gives zeros)."""
    cdef double s = quat_largest(q), n
    if s == 0.0:
        out[0] = 0.0; out[1] = 0.0; out[2] = 0.0; out[3] = 0.0
        return
    out[0] = q[0] / s; out[1] = q[1] / s; out[2] = q[2] / s; out[3] = q[3] / s
    n = sqrt(out[0] * out[0] + out[1] * out[1] + out[2] * out[2] + out[3] * out[3])
    out[0] /= n; out[1] /= n; out[2] /= n; out[3] /= n


cdef inline void quat_to_rot(const double* q, double* R) noexcept nogil:
    """Rotation matrix (3x3 row-major) of the quaternion [w, x, y, z], normalised first."""
    cdef double u[4]
    quat_unit(q, u)
    cdef double w = u[0], x = u[1], y = u[2], z = u[3]
    cdef double s = 2.0
    cdef double xx = s * x * x, yy = s * y * y, zz = s * z * z
    cdef double xy = s * x * y, xz = s * x * z, yz = s * y * z
    cdef double wx = s * w * x, wy = s * w * y, wz = s * w * z
    R[0] = 1.0 - yy - zz
    R[1] = xy - wz
    R[2] = xz + wy
    R[3] = xy + wz
    R[4] = 1.0 - xx - zz
    R[5] = yz - wx
    R[6] = xz - wy
    R[7] = yz + wx
    R[8] = 1.0 - xx - yy


cdef inline void place_rot(const double* P, const double* R, double* out) noexcept nogil:
    """out = P @ (R, 0): rotation block of P times the 3x3 row-major R, p copied."""
    cdef int r
    for r in range(3):
        out[4 * r + 0] = P[4 * r] * R[0] + P[4 * r + 1] * R[3] + P[4 * r + 2] * R[6]
        out[4 * r + 1] = P[4 * r] * R[1] + P[4 * r + 1] * R[4] + P[4 * r + 2] * R[7]
        out[4 * r + 2] = P[4 * r] * R[2] + P[4 * r + 1] * R[5] + P[4 * r + 2] * R[8]
        out[4 * r + 3] = P[4 * r + 3]


cdef inline void place_shift(const double* P, double x, double y, double z, double* out) noexcept nogil:
    """Add P's rotation applied to (x, y, z) to out's translation."""
    out[3] += P[0] * x + P[1] * y + P[2] * z
    out[7] += P[4] * x + P[5] * y + P[6] * z
    out[11] += P[8] * x + P[9] * y + P[10] * z


cdef inline void joint_placement(const CModel* m, int i, const double* qj, double* out) noexcept nogil:
    """out = parent_from_body of body i = joint_placements[i] @ joint_transform(q_i), 4x4."""
    cdef const double* P = m.placements + 16 * i
    cdef const double* u
    cdef double c, s, t
    cdef double R[9]
    cdef int r, k = m.kinds[i]
    out[12] = 0.0; out[13] = 0.0; out[14] = 0.0; out[15] = 1.0
    if k == K_REV_X:
        c = cos(qj[0]); s = sin(qj[0])
        for r in range(3):
            out[4 * r] = P[4 * r]
            out[4 * r + 1] = c * P[4 * r + 1] + s * P[4 * r + 2]
            out[4 * r + 2] = c * P[4 * r + 2] - s * P[4 * r + 1]
            out[4 * r + 3] = P[4 * r + 3]
    elif k == K_REV_Y:
        c = cos(qj[0]); s = sin(qj[0])
        for r in range(3):
            out[4 * r] = c * P[4 * r] - s * P[4 * r + 2]
            out[4 * r + 1] = P[4 * r + 1]
            out[4 * r + 2] = s * P[4 * r] + c * P[4 * r + 2]
            out[4 * r + 3] = P[4 * r + 3]
    elif k == K_REV_Z:
        c = cos(qj[0]); s = sin(qj[0])
        for r in range(3):
            out[4 * r] = c * P[4 * r] + s * P[4 * r + 1]
            out[4 * r + 1] = c * P[4 * r + 1] - s * P[4 * r]
            out[4 * r + 2] = P[4 * r + 2]
            out[4 * r + 3] = P[4 * r + 3]
    elif k == K_REV:
        u = m.axes + 3 * i
        c = cos(qj[0]); s = sin(qj[0]); t = 1.0 - c
        R[0] = c + t * u[0] * u[0]
        R[1] = t * u[0] * u[1] - s * u[2]
        R[2] = t * u[0] * u[2] + s * u[1]
        R[3] = t * u[0] * u[1] + s * u[2]
        R[4] = c + t * u[1] * u[1]
        R[5] = t * u[1] * u[2] - s * u[0]
        R[6] = t * u[0] * u[2] - s * u[1]
        R[7] = t * u[1] * u[2] + s * u[0]
        R[8] = c + t * u[2] * u[2]
        place_rot(P, R, out)
    elif k == K_PRISM:
        u = m.axes + 3 * i
        for r in range(12):
            out[r] = P[r]
        place_shift(P, u[0] * qj[0], u[1] * qj[0], u[2] * qj[0], out)
    elif k == K_SPH:
        quat_to_rot(qj, R)
        place_rot(P, R, out)
    elif k == K_PLANAR:
        c = cos(qj[2]); s = sin(qj[2])
        for r in range(3):
            out[4 * r] = c * P[4 * r] + s * P[4 * r + 1]
            out[4 * r + 1] = c * P[4 * r + 1] - s * P[4 * r]
            out[4 * r + 2] = P[4 * r + 2]
            out[4 * r + 3] = P[4 * r + 3]
        place_shift(P, qj[0], qj[1], 0.0, out)
    else:  # K_FREE
        quat_to_rot(qj + 3, R)
        place_rot(P, R, out)
        place_shift(P, qj[0], qj[1], qj[2], out)


cdef inline void joint_motion(const CModel* m, int i, const double* vj, double* out) noexcept nogil:
    """out = S_i vj (the joint twist in the body frame)."""
    cdef int k = m.kinds[i], r
    cdef const double* u
    for r in range(6):
        out[r] = 0.0
    if k <= K_REV_Z:
        out[3 + k] = vj[0]
    elif k == K_REV:
        u = m.axes + 3 * i
        out[3] = u[0] * vj[0]; out[4] = u[1] * vj[0]; out[5] = u[2] * vj[0]
    elif k == K_PRISM:
        u = m.axes + 3 * i
        out[0] = u[0] * vj[0]; out[1] = u[1] * vj[0]; out[2] = u[2] * vj[0]
    elif k == K_SPH:
        out[3] = vj[0]; out[4] = vj[1]; out[5] = vj[2]
    elif k == K_PLANAR:
        out[0] = vj[0]; out[1] = vj[1]; out[5] = vj[2]
    else:
        for r in range(6):
            out[r] = vj[r]


cdef inline void joint_motion_add(const CModel* m, int i, const double* vj, double* out) noexcept nogil:
    """out += S_i vj."""
    cdef int k = m.kinds[i], r
    cdef const double* u
    if k <= K_REV_Z:
        out[3 + k] += vj[0]
    elif k == K_REV:
        u = m.axes + 3 * i
        out[3] += u[0] * vj[0]; out[4] += u[1] * vj[0]; out[5] += u[2] * vj[0]
    elif k == K_PRISM:
        u = m.axes + 3 * i
        out[0] += u[0] * vj[0]; out[1] += u[1] * vj[0]; out[2] += u[2] * vj[0]
    elif k == K_SPH:
        out[3] += vj[0]; out[4] += vj[1]; out[5] += vj[2]
    elif k == K_PLANAR:
        out[0] += vj[0]; out[1] += vj[1]; out[5] += vj[2]
    else:
        for r in range(6):
            out[r] += vj[r]


cdef inline void joint_force(const CModel* m, int i, const double* f, double* out) noexcept nogil:
    """out = S_i^T f (nv_i numbers)."""
    cdef int k = m.kinds[i], r
    cdef const double* u
    if k <= K_REV_Z:
        out[0] = f[3 + k]
    elif k == K_REV:
        u = m.axes + 3 * i
        out[0] = u[0] * f[3] + u[1] * f[4] + u[2] * f[5]
    elif k == K_PRISM:
        u = m.axes + 3 * i
        out[0] = u[0] * f[0] + u[1] * f[1] + u[2] * f[2]
    elif k == K_SPH:
        out[0] = f[3]; out[1] = f[4]; out[2] = f[5]
    elif k == K_PLANAR:
        out[0] = f[0]; out[1] = f[1]; out[2] = f[5]
    else:
        for r in range(6):
            out[r] = f[r]


cdef inline void joint_column(const CModel* m, int i, int col, double* out) noexcept nogil:
    """out = column ``col`` of S_i (a 6-vector in the body frame)."""
    cdef int k = m.kinds[i], r
    cdef const double* u
    for r in range(6):
        out[r] = 0.0
    if k == K_REV:
        u = m.axes + 3 * i
        out[3] = u[0]; out[4] = u[1]; out[5] = u[2]
    elif k == K_PRISM:
        u = m.axes + 3 * i
        out[0] = u[0]; out[1] = u[1]; out[2] = u[2]
    else:
        out[rbd_sel[k][col]] = 1.0


cdef inline bint zero_quaternion(const CModel* m, const double* q) noexcept nogil:
    """True if a joint quaternion of the configuration q is (near) zero: it has no direction."""
    cdef int i, k
    cdef double u
    for i in range(m.nb):
        if m.kinds[i] == K_SPH or m.kinds[i] == K_FREE:
            k = m.q_idx[i] + (3 if m.kinds[i] == K_FREE else 0)
            # |q| < 1e-12 (as rbd._checks), read without squaring: |q| <= 2 max |q_i|
            if quat_largest(q + k) < 5e-13:
                u = quat_largest(q + k)
                if u == 0.0 or u * sqrt((q[k] / u) ** 2 + (q[k + 1] / u) ** 2 + (q[k + 2] / u) ** 2
                                        + (q[k + 3] / u) ** 2) < 1e-12:
                    return True
    return False
