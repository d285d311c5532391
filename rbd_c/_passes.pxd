# cython: language_level=3
"""Forward passes shared by the kinematics and dynamics kernels (inline, nogil)."""
from libc.string cimport memcpy, memset

from rbd_c._kernels cimport se3_compose, act_motion, inv_act_motion, motion_cross
from rbd_c._model cimport CModel, Call
from rbd_c._joints cimport loop_placement, block_sincos, placement_sc, SINCOS_BLOCK, joint_motion, joint_motion_add, joint_column, basis_axis

cdef extern from "_fast.h":
    # dst[0..3] += src[0..3] in one 4-wide store (a child adding into its parent's numbers)
    void add4 "rbd_add4"(double* dst, const double* src) noexcept nogil


cdef inline void gravity_acceleration(const Call* c, double* a0) noexcept nogil:
    """The world's spatial acceleration that stands for gravity: [-g; 0] (a forward pass
    started from it gives each body's acceleration with gravity's effect included)."""
    a0[0] = -c.g[0]; a0[1] = -c.g[1]; a0[2] = -c.g[2]
    a0[3] = 0.0; a0[4] = 0.0; a0[5] = 0.0


cdef inline void shift_to_point(const double* p, const double* w, double* out) noexcept nogil:
    """A world motion w = [v; w] (origin at the world origin) seen at the point p:
    [v + w x p; w]."""
    out[0] = w[0] + w[4] * p[2] - w[5] * p[1]
    out[1] = w[1] + w[5] * p[0] - w[3] * p[2]
    out[2] = w[2] + w[3] * p[1] - w[4] * p[0]
    out[3] = w[3]; out[4] = w[4]; out[5] = w[5]


cdef inline void shift_to_frame(const double* oMf, const double* w, double* out) noexcept nogil:
    """shift_to_point the origin of the world_from_frame placement oMf."""
    cdef double p[3]
    p[0] = oMf[3]; p[1] = oMf[7]; p[2] = oMf[11]
    shift_to_point(p, w, out)


cdef inline void add6(double* x, const double* y) noexcept nogil:
    x[0] += y[0]; x[1] += y[1]; x[2] += y[2]; x[3] += y[3]; x[4] += y[4]; x[5] += y[5]


cdef inline void sub6(double* x, const double* y) noexcept nogil:
    x[0] -= y[0]; x[1] -= y[1]; x[2] -= y[2]; x[3] -= y[3]; x[4] -= y[4]; x[5] -= y[5]


cdef inline double dot6(const double* x, const double* y) noexcept nogil:
    return x[0] * y[0] + x[1] * y[1] + x[2] * y[2] + x[3] * y[3] + x[4] * y[4] + x[5] * y[5]


cdef inline void set_bottom_row(double* M) noexcept nogil:
    M[12] = 0.0; M[13] = 0.0; M[14] = 0.0; M[15] = 1.0


# One step of a forward pass, from a body's parent to the body: the parent's quantity is
# NULL at a root (the world: identity placement, zero twist).
cdef inline void child_placement(const double* oM_parent, const double* X, double* oM) noexcept nogil:
    """World placement oM = oM_parent X of a body from its parent_from_body X, bottom row set."""
    if oM_parent != NULL:
        se3_compose(oM_parent, X, oM)
    else:
        memcpy(oM, X, 12 * sizeof(double))
    set_bottom_row(oM)


cdef inline void child_twist(const CModel* m, int i, const double* X, const double* v, const double* V_parent,
                             double* vJ, double* V) noexcept nogil:
    """Body-frame twist V = Ad_X^-1 V_parent + vJ of body i, with vJ = S_i v_i its joint's
    twist (kept for the caller's velocity-product terms) and X its parent_from_body."""
    joint_motion(m, i, v + m.v_idx[i], vJ)
    if V_parent != NULL:
        inv_act_motion(X, V_parent, V)
        add6(V, vJ)
    else:
        memcpy(V, vJ, 6 * sizeof(double))


cdef inline void center_root(int i, double* X, double* ref) noexcept nogil:
    """Move the origin of the world-axes sums to the first body's: X is root body i's
    placement, ref the first body's translation (set when i == 0), taken off X's.  At the
    world origin, CRBA's inertias (m |p|^2) and the columns (p x w) grow with the robot's
    distance from it and cancel in the results (M^-1 lost 4 digits 10 km away); the
    results these kernels return do not depend on the origin."""
    if i == 0:
        ref[0] = X[3]; ref[1] = X[7]; ref[2] = X[11]
    X[3] -= ref[0]; X[7] -= ref[1]; X[11] -= ref[2]


cdef inline void world_placements(const CModel* m, const double* q, double* oM, bint centered) noexcept nogil:
    """World_from_body placements (4x4, bottom row set) of every body; ``centered``: with
    the origin moved to the first body's (center_root), for sums in world axes, not for
    output."""
    cdef int i, p
    cdef double Xl[16]
    cdef double ref[3]
    cdef double sn[SINCOS_BLOCK]
    cdef double cs[SINCOS_BLOCK]
    for i in range(m.nb):
        p = m.parents[i]
        loop_placement(m, i, q, sn, cs, Xl)
        if centered and p < 0:
            center_root(i, Xl, ref)
        child_placement(oM + 16 * p if p >= 0 else NULL, Xl, oM + 16 * i)


cdef inline void body_velocities(const CModel* m, const double* q, const double* v, double* X,
                                 double* V) noexcept nogil:
    """Parent_from_body placements X and body-frame twists V of every body."""
    cdef int i, p
    cdef double vJ[6]
    cdef double sn[SINCOS_BLOCK]
    cdef double cs[SINCOS_BLOCK]
    for i in range(m.nb):
        p = m.parents[i]
        loop_placement(m, i, q, sn, cs, X + 16 * i)
        child_twist(m, i, X + 16 * i, v, V + 6 * p if p >= 0 else NULL, vJ, V + 6 * i)


cdef inline int chain_pass(const CModel* m, int body, const double* q, const double* v, const double* a,
                           int* chain, double* oM, double* V, double* A) noexcept nogil:
    """Walk the chain root .. body (d bodies, returned): the bodies chain[l], root first,
    their world placements oM[16 l] and, when v (a) is given, body-frame twists V[6 l]
    (accelerations A[6 l], without gravity).  The chain is found by walking up the
    parents, so the model stores no per-body list of ancestors (memory linear in bodies).
    The chain's angles' sines and cosines are taken a block at a time, vectorised."""
    cdef int d = m.depth[body], l, i, j, k
    cdef double Xl[16]
    cdef double vJ[6]
    cdef double t[6]
    cdef int idx[SINCOS_BLOCK]
    cdef double sn[SINCOS_BLOCK]
    cdef double cs[SINCOS_BLOCK]
    i = body
    for l in range(d - 1, -1, -1):
        chain[l] = i
        i = m.parents[i]
    for l in range(d):
        i = chain[l]
        k = l % SINCOS_BLOCK
        if k == 0:  # (angle_q: a body's angle's index in q, any valid index for other kinds)
            for j in range(SINCOS_BLOCK):
                idx[j] = m.angle_q[chain[l + j]] if l + j < d else 0
            block_sincos(idx, q, sn, cs)
        placement_sc(m, i, q + m.q_idx[i], sn + k, cs + k, Xl)
        child_placement(oM + 16 * (l - 1) if l > 0 else NULL, Xl, oM + 16 * l)
        if v != NULL:
            child_twist(m, i, Xl, v, V + 6 * (l - 1) if l > 0 else NULL, vJ, V + 6 * l)
            if a != NULL:
                if l > 0:
                    inv_act_motion(Xl, A + 6 * (l - 1), A + 6 * l)
                    motion_cross(V + 6 * l, vJ, t)
                    add6(A + 6 * l, t)
                else:
                    memset(A, 0, 6 * sizeof(double))
                joint_motion_add(m, i, a + m.v_idx[i], A + 6 * l)
    return d


cdef inline void moved_moment(const double* M, const double* mh, double* h) noexcept nogil:
    """First moment of mass (m c) in frame a of a mass mh[0] whose first moment in frame b
    is mh[1:4], for the placement M = aMb (4x4): m p + R h."""
    h[0] = mh[0] * M[3] + M[0] * mh[1] + M[1] * mh[2] + M[2] * mh[3]
    h[1] = mh[0] * M[7] + M[4] * mh[1] + M[5] * mh[2] + M[6] * mh[3]
    h[2] = mh[0] * M[11] + M[8] * mh[1] + M[9] * mh[2] + M[10] * mh[3]


cdef inline void first_moment(const CModel* m, int i, const double* oM, double* h) noexcept nogil:
    """World first moment of mass (m c) of body i from its world placement oM."""
    moved_moment(oM, m.inertias + 10 * i, h)


cdef inline void total_first_moment(const CModel* m, const double* oM, double* h) noexcept nogil:
    """World first moment of mass of the whole robot (total mass times its com) from the
    world placements oM of every body."""
    cdef double hi[3]
    cdef int i
    h[0] = 0.0; h[1] = 0.0; h[2] = 0.0
    for i in range(m.nb):
        first_moment(m, i, oM + 16 * i, hi)
        h[0] += hi[0]; h[1] += hi[1]; h[2] += hi[2]


cdef inline void world_column(const CModel* m, int i, int col, const double* oM, double* out) noexcept nogil:
    """out = column col of body i's motion subspace in world axes, Ad_oM S_i[:, col]
    (oM = world_from_body); a revolute joint about basis axis a reads it off oM:
    [t x r_a; r_a] with r_a that column of the rotation."""
    cdef int a = basis_axis(m.kinds[i])
    cdef double s[6]
    if a >= 0:
        out[3] = oM[a]; out[4] = oM[4 + a]; out[5] = oM[8 + a]
        out[0] = oM[7] * out[5] - oM[11] * out[4]
        out[1] = oM[11] * out[3] - oM[3] * out[5]
        out[2] = oM[3] * out[4] - oM[7] * out[3]
    else:
        joint_column(m, i, col, s)
        act_motion(oM, s, out)


cdef inline void world_columns(const CModel* m, const double* oM, double* S) noexcept nogil:
    """S: the world column of every dof (6 each), from every body's world placement oM."""
    cdef int i, col
    for i in range(m.nb):
        for col in range(m.nvj[i]):
            world_column(m, i, col, oM + 16 * i, S + 6 * (m.v_idx[i] + col))
