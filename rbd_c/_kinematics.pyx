# cython: language_level=3
"""Compiled kinematics: placements, frame velocities/accelerations and their partial
derivatives, frame Jacobians and their time derivatives, center of mass and its Jacobian.

Frame quantities only walk the chain root .. the frame's body (or place every body,
when the chain is most of the tree).  Jacobian columns are built in world coordinates
(Ad_{world_from_body} S) and then expressed in the requested reference: "world" as is,
"local" with inv_act_motion(world_from_frame, .), "local_world_aligned" by moving the
origin to the frame's origin (v + w x p); the frame Jacobian's columns of revolute joints
about a basis axis go straight into the reference, up to four at a time (_columns.h).
"""
cimport cython
from libc.string cimport memset, memcpy

from rbd_c._kernels cimport act_motion, inv_act_motion, motion_cross, rotate6, se3_compose, se3_inverse
from rbd_c._model cimport (prepare_mass_call, CModel, Call, CompiledModel, kernel_t, prepare_call, run_args, resolve_frame,
                           Algorithm, algorithm,
                           resolve_reference, REF_LOCAL, REF_WORLD, REF_LWA)
from rbd_c._passes cimport (world_placements, chain_pass, child_placement, world_column, add4, add6, sub6,
                            first_moment, moved_moment, shift_to_frame)
from rbd_c._joints cimport joint_placement, unit_column, basis_axis
from rbd_c._model import size


cdef inline void _frame_world(const Call* c, const double* oMb, double* oMf) noexcept nogil:
    """world_from_frame from world_from_body (oMb unused when the frame is on the world)."""
    child_placement(oMb if c.body >= 0 else NULL, c.m.frame_offsets + 16 * c.frame, oMf)


cdef inline void _from_world(int ref, const double* oMf, const double* w, double* out) noexcept nogil:
    """A world motion (origin at the world origin) expressed in the reference ref for the
    frame at the world_from_frame placement oMf."""
    if ref == REF_WORLD:
        memcpy(out, w, 6 * sizeof(double))
    elif ref == REF_LOCAL:
        inv_act_motion(oMf, w, out)
    else:
        shift_to_frame(oMf, w, out)


cdef inline void _put_column(double* J, int ncols, int col, const double* x) noexcept nogil:
    """Column col of the row-major (6, ncols) matrix J = x."""
    cdef int r
    for r in range(6):
        J[r * ncols + col] = x[r]


cdef inline int m_depth(const Call* c) noexcept nogil:
    return c.m.depth[c.body]


# Scratch of the frame kernels, per link of the frame's chain (d links): world
# placements, twists, accelerations; then the chain's body indices (one int in a double
# per link of the longest chain), after 64 spare doubles.
cdef enum:
    FRAME_OM = 0        # 16 per link
    FRAME_V = 16        # 6 per link
    FRAME_A = 22        # 6 per link
    FRAME_CHAIN = 28    # (x max_depth, + 64): the chain's body indices
    FRAME_PER_LINK = 29

FRAME_SCRATCH = size(64, depth=FRAME_PER_LINK)


cdef inline int* _chain(const CModel* m, double* work) noexcept nogil:
    """Where the frame kernels keep the chain's body indices in their scratch."""
    return <int*>(work + FRAME_CHAIN * m.max_depth + 64)


cdef inline object _run_frame(object model, object frame, object reference, Algorithm alg, object out, object q,
                       object v=None, object a=None):
    """The driver call shared by the frame quantities in a reference (they walk one
    chain, so their scratch and work scale with its length)."""
    cdef Call call
    cdef CompiledModel cm = prepare_call(&call, model)
    resolve_frame(&call, cm, model, frame)
    resolve_reference(&call, reference)
    return run_args(model, cm, &call, alg, out, q, v, a)


# ---- placements ----------------------------------------------------------------------------
cdef int k_fk(const Call* c, const double** ins, double** outs, double* work) noexcept nogil:
    cdef double* out = outs[0]
    world_placements(c.m, ins[0], out, False)
    return 0


def forward_kinematics(model, q, *, out=None):
    """World placement (4x4) of every body frame (compiled)."""
    cdef Call call
    cdef CompiledModel cm = prepare_call(&call, model)
    return run_args(model, cm, &call, FORWARD_KINEMATICS, out, q)


cdef int k_frame_placements(const Call* c, const double** ins, double** outs, double* work) noexcept nogil:
    cdef const CModel* m = c.m
    cdef int f, b
    world_placements(m, ins[0], work, False)
    for f in range(m.nframes):
        b = m.frame_parents[f]
        child_placement(work + 16 * b if b >= 0 else NULL, m.frame_offsets + 16 * f, outs[0] + 16 * f)
    return 0


def frame_placements(model, q, *, out=None):
    """World placement (4x4) of every frame, link and joint frames (compiled)."""
    cdef Call call
    cdef CompiledModel cm = prepare_call(&call, model)
    return run_args(model, cm, &call, FRAME_PLACEMENTS, out, q)


cdef inline bint _whole_pass(const CModel* m, int body) noexcept nogil:
    """Whether a frame kernel places every body (world_placements) rather than walk the
    chain to ``body`` (chain_pass, which first finds the chain by its parents): when the
    chain is most of the tree (a manipulator's tool), and the scratch holds every body;
    the frame Jacobian then finds the chain by the subtrees' runs of indices, so the
    bodies must be depth first."""
    return m.depth_first and 2 * m.depth[body] >= m.nb and 16 * m.nb <= 64 + FRAME_PER_LINK * m.max_depth


cdef int k_frame_placement(const Call* c, const double** ins, double** outs, double* work) noexcept nogil:
    cdef double* out = outs[0]
    cdef int d = 0
    if c.body >= 0 and _whole_pass(c.m, c.body):
        world_placements(c.m, ins[0], work, False)
        _frame_world(c, work + 16 * c.body, out)
        return 0
    if c.body >= 0:
        d = chain_pass(c.m, c.body, ins[0], NULL, NULL, _chain(c.m, work), work, NULL, NULL)
    _frame_world(c, work + FRAME_OM * d + 16 * (d - 1), out)
    return 0


def frame_placement(model, q, frame, *, out=None):
    """World placement (4x4) of a frame (compiled)."""
    cdef Call call
    cdef CompiledModel cm = prepare_call(&call, model)
    resolve_frame(&call, cm, model, frame)
    return run_args(model, cm, &call, FRAME_PLACEMENT, out, q)


# ---- frame velocity / acceleration -----------------------------------------------------------
cdef inline void _express(const Call* c, const double* oMb, const double* x_body, double* out) noexcept nogil:
    """A body-frame motion (twist or spatial acceleration) of the frame's body, expressed
    for the frame in the call's reference."""
    cdef double oMf[16]
    cdef double t[6]
    if c.ref == REF_WORLD:
        act_motion(oMb, x_body, out)
    else:
        inv_act_motion(c.m.frame_offsets + 16 * c.frame, x_body, t)
        if c.ref == REF_LOCAL:
            memcpy(out, t, 6 * sizeof(double))
        else:
            _frame_world(c, oMb, oMf)
            rotate6(oMf, t, out)


cdef int k_frame_velocity(const Call* c, const double** ins, double** outs, double* work) noexcept nogil:
    cdef double* out = outs[0]
    cdef int d
    if c.body < 0:
        memset(out, 0, 6 * sizeof(double))
        return 0
    d = m_depth(c)
    cdef double* oM = work + FRAME_OM * d
    cdef double* V = work + FRAME_V * d
    chain_pass(c.m, c.body, ins[0], ins[1], NULL, _chain(c.m, work), oM, V, NULL)
    _express(c, oM + 16 * (d - 1), V + 6 * (d - 1), out)
    return 0


def frame_velocity(model, q, v, frame, reference="local", *, out=None):
    """Twist of a frame in the given reference (compiled)."""
    return _run_frame(model, frame, reference, FRAME_VELOCITY, out, q, v)


cdef int k_frame_acceleration(const Call* c, const double** ins, double** outs, double* work) noexcept nogil:
    cdef double* out = outs[0]
    cdef int d
    cdef double vf[6]
    cdef double t[6]
    cdef double oMf[16]
    if c.body < 0:
        memset(out, 0, 6 * sizeof(double))
        return 0
    d = m_depth(c)
    cdef double* oM = work + FRAME_OM * d
    cdef double* V = work + FRAME_V * d
    cdef double* A = work + FRAME_A * d
    chain_pass(c.m, c.body, ins[0], ins[1], ins[2], _chain(c.m, work), oM, V, A)
    _express(c, oM + 16 * (d - 1), A + 6 * (d - 1), out)
    if c.ref == REF_LWA:
        # d/dt of the mixed twist [R v; R w]: R (a_lin + w x v) for the linear part
        # (the angular part gains R (w x w) = 0).
        inv_act_motion(c.m.frame_offsets + 16 * c.frame, V + 6 * (d - 1), vf)
        t[0] = vf[4] * vf[2] - vf[5] * vf[1]
        t[1] = vf[5] * vf[0] - vf[3] * vf[2]
        t[2] = vf[3] * vf[1] - vf[4] * vf[0]
        _frame_world(c, oM + 16 * (d - 1), oMf)
        out[0] += oMf[0] * t[0] + oMf[1] * t[1] + oMf[2] * t[2]
        out[1] += oMf[4] * t[0] + oMf[5] * t[1] + oMf[6] * t[2]
        out[2] += oMf[8] * t[0] + oMf[9] * t[1] + oMf[10] * t[2]
    return 0


def frame_acceleration(model, q, v, a, frame, reference="local", *, out=None):
    """Spatial acceleration of a frame: the derivative of its twist in the given reference (compiled)."""
    return _run_frame(model, frame, reference, FRAME_ACCELERATION, out, q, v, a)


# ---- frame Jacobian and its time derivative ----------------------------------------------------
cdef inline void _unit_columns(const Call* c, int i, const double* oMi, const double* oMf, double* J) noexcept nogil:
    """_body_columns of a joint whose columns are unit motions e_k (free, spherical, planar:
    several columns each).  With X the placement that carries the body's motions into the
    call's reference (Ad_X e_k is column k of Ad_X), a linear column is [r; 0] and an
    angular one [p x r; r], r the column of X's rotation and p its translation: X once,
    then a cross product a column, where through the world each column took two full
    motion transforms."""
    cdef const CModel* m = c.m
    cdef int col, k, a
    cdef double X[16]
    cdef double fMo[16]
    cdef double t[6]
    if c.ref == REF_LOCAL:  # frame_from_body
        se3_inverse(oMf, fMo)
        se3_compose(fMo, oMi, X)
    else:  # world axes, about the world's origin or (local_world_aligned) the frame's
        memcpy(X, oMi, 12 * sizeof(double))
        if c.ref == REF_LWA:
            X[3] -= oMf[3]; X[7] -= oMf[7]; X[11] -= oMf[11]
    for col in range(m.nvj[i]):
        k = unit_column(m.kinds[i], col)
        a = k % 3
        if k < 3:
            t[0] = X[a]; t[1] = X[4 + a]; t[2] = X[8 + a]
            t[3] = 0.0; t[4] = 0.0; t[5] = 0.0
        else:
            t[3] = X[a]; t[4] = X[4 + a]; t[5] = X[8 + a]
            t[0] = X[7] * t[5] - X[11] * t[4]
            t[1] = X[11] * t[3] - X[3] * t[5]
            t[2] = X[3] * t[4] - X[7] * t[3]
        _put_column(J, m.nv, m.v_idx[i] + col, t)


cdef inline void _body_columns(const Call* c, int i, const double* oMi, const double* oMf, double* J) noexcept nogil:
    """Body i's columns of the frame Jacobian J (6, nv), in the call's reference, from the
    body's and the frame's world placements."""
    cdef int col
    cdef double w[6]
    cdef double t[6]
    if c.m.nvj[i] > 1:
        _unit_columns(c, i, oMi, oMf, J)
        return
    for col in range(c.m.nvj[i]):
        world_column(c.m, i, col, oMi, w)
        _from_world(c.ref, oMf, w, t)
        _put_column(J, c.m.nv, c.m.v_idx[i] + col, t)


cdef extern from "_columns.h":
    void revolute_columns "rbd_revolute_columns"(int n, const double* const* oM, const int* a, const double* A,
                                                 const double* o, double* J, int nv, int col) noexcept nogil


cdef struct PendingColumns:
    # revolute columns (joints about a basis axis) waiting to be written together: columns
    # first_col, first_col + 1, ...
    int n
    int first_col
    const double* oM[4]
    int axis[4]


cdef inline void _write_pending(PendingColumns* g, const double* A, const double* o, double* J,
                                int nv) noexcept nogil:
    """Write the pending columns (rbd_revolute_columns)."""
    cdef const double* P[4]
    cdef int axes[4]
    cdef int k, j
    if g.n == 0:
        return
    for k in range(4):
        j = k if k < g.n else g.n - 1  # (lanes past n repeat the last one)
        P[k] = g.oM[j]
        axes[k] = g.axis[j]
    revolute_columns(g.n, P, axes, A, o, J, nv, g.first_col)
    g.n = 0


cdef inline void _jacobian_columns(const Call* c, PendingColumns* g, int i, const double* oMi, const double* oMf,
                                   const double* A, const double* o, double* J) noexcept nogil:
    """Body i's columns of the frame Jacobian (the chain's bodies root first): a revolute
    joint about a basis axis joins the pending columns (written four at a time, or when the
    next one is not beside them); any other joint's are written now (_body_columns)."""
    cdef int axis = basis_axis(c.m.kinds[i]), col = c.m.v_idx[i]
    if axis < 0:
        _body_columns(c, i, oMi, oMf, J)
        return
    if g.n == 4 or (g.n > 0 and col != g.first_col + g.n):
        _write_pending(g, A, o, J, c.m.nv)
    if g.n == 0:
        g.first_col = col
    g.oM[g.n] = oMi
    g.axis[g.n] = axis
    g.n += 1


cdef int k_frame_jacobian(const Call* c, const double** ins, double** outs, double* work) noexcept nogil:
    cdef double* J = outs[0]
    cdef const CModel* m = c.m
    cdef int d, l, i, r
    cdef double oMf[16]
    cdef double A[9]  # the reference's axes (R_f^T in local axes, else I) and origin
    cdef double o[3]
    cdef PendingColumns g
    memset(J, 0, 6 * m.nv * sizeof(double))
    if c.body < 0:
        return 0
    cdef bint whole = _whole_pass(m, c.body)
    cdef double* oM = work + FRAME_OM * m.max_depth
    if whole:  # every body placed
        world_placements(m, ins[0], work, False)
        _frame_world(c, work + 16 * c.body, oMf)
    else:
        d = chain_pass(m, c.body, ins[0], NULL, NULL, _chain(m, work), oM, NULL, NULL)
        _frame_world(c, oM + 16 * (d - 1), oMf)
    for r in range(3):
        A[3 * r] = 0.0; A[3 * r + 1] = 0.0; A[3 * r + 2] = 0.0
        if c.ref == REF_LOCAL:
            A[3 * r] = oMf[r]; A[3 * r + 1] = oMf[4 + r]; A[3 * r + 2] = oMf[8 + r]
        else:
            A[4 * r] = 1.0
        o[r] = 0.0 if c.ref == REF_WORLD else oMf[4 * r + 3]
    g.n = 0
    if whole:  # the chain: the bodies before the frame's whose subtree holds it
        for i in range(c.body + 1):
            if c.body < m.subtree_end[i]:
                _jacobian_columns(c, &g, i, work + 16 * i, oMf, A, o, J)
    else:
        for l in range(d):
            _jacobian_columns(c, &g, _chain(m, work)[l], oM + 16 * l, oMf, A, o, J)
    _write_pending(&g, A, o, J, m.nv)
    return 0


def frame_jacobian(model, q, frame, reference="local", *, out=None):
    """Geometric Jacobian (6, nv) of a frame in the given reference (compiled)."""
    return _run_frame(model, frame, reference, FRAME_JACOBIAN, out, q)


cdef int k_frame_jacobian_dot(const Call* c, const double** ins, double** outs, double* work) noexcept nogil:
    cdef double* dJ = outs[0]
    cdef const CModel* m = c.m
    cdef int nv = m.nv, d, l, i, col
    cdef double oMf[16]
    cdef double s[6]
    cdef double w[6]
    cdef double dw[6]
    cdef double ov[6]
    cdef double t[6]
    cdef double u[6]
    cdef double vf[6]
    cdef double pdot[3]
    memset(dJ, 0, 6 * nv * sizeof(double))
    memset(vf, 0, 6 * sizeof(double))
    pdot[0] = 0.0; pdot[1] = 0.0; pdot[2] = 0.0
    if c.body < 0:
        return 0
    d = m_depth(c)
    cdef double* oM = work + FRAME_OM * d
    cdef double* V = work + FRAME_V * d
    chain_pass(m, c.body, ins[0], ins[1], NULL, _chain(m, work), oM, V, NULL)
    _frame_world(c, oM + 16 * (d - 1), oMf)
    if c.ref == REF_LOCAL:
        inv_act_motion(m.frame_offsets + 16 * c.frame, V + 6 * (d - 1), vf)
    elif c.ref == REF_LWA:
        # velocity of the frame origin in world coordinates
        act_motion(oM + 16 * (d - 1), V + 6 * (d - 1), ov)
        shift_to_frame(oMf, ov, t)
        pdot[0] = t[0]; pdot[1] = t[1]; pdot[2] = t[2]
    for l in range(d):
        i = _chain(m, work)[l]
        act_motion(oM + 16 * l, V + 6 * l, ov)     # world twist of the joint's body
        for col in range(m.nvj[i]):
            world_column(m, i, col, oM + 16 * l, w)     # world Jacobian column
            motion_cross(ov, w, dw)                     # its time derivative
            _from_world(c.ref, oMf, dw, t)
            if c.ref == REF_LOCAL:
                # d/dt (fX0 w) = fX0 dw - v_f x (fX0 w)
                inv_act_motion(oMf, w, u)
                motion_cross(vf, u, s)
                sub6(t, s)
            elif c.ref == REF_LWA:
                # d/dt [w_v + w_w x p; w_w] = [dw_v + dw_w x p + w_w x pdot; dw_w]
                t[0] += w[4] * pdot[2] - w[5] * pdot[1]
                t[1] += w[5] * pdot[0] - w[3] * pdot[2]
                t[2] += w[3] * pdot[1] - w[4] * pdot[0]
            _put_column(dJ, nv, m.v_idx[i] + col, t)
    return 0


def frame_jacobian_time_derivative(model, q, v, frame, reference="local", *, out=None):
    """Time derivative (6, nv) of the frame Jacobian in the given reference (compiled)."""
    return _run_frame(model, frame, reference, FRAME_JACOBIAN_DOT, out, q, v)


# ---- kinematic Hessian of a frame ---------------------------------------------------------
cdef int k_kinematic_hessian(const Call* c, const double** ins, double** outs, double* work) noexcept nogil:
    """H[:, i, k] = d J[:, i] / d q_k (q along q (+) dq), J the frame Jacobian in the call's
    reference.  In world axes, with J_i the world column of dof i: perturbing dof k
    moves everything after its joint by exp(J_k dq) on the left, so dJ_i/dq_k = J_k x J_i
    when k's joint is i's or an ancestor of it, else 0.  Local axes add the frame's own
    motion, -J_k x J_i (every chain dof moves the frame): what is left is J_i x J_k for
    k after i.  local_world_aligned shifts to the frame's origin p, whose motion adds
    w_i x (v_k + w_k x p) to the linear rows."""
    cdef double* H = outs[0]
    cdef const CModel* m = c.m
    cdef int nv = m.nv, d, l, i, col, n = 0, a, b, r
    cdef double oMf[16]
    cdef double x[6]
    cdef double t[6]
    cdef double pk[6]
    memset(H, 0, 6 * nv * nv * sizeof(double))
    if c.body < 0:
        return 0
    d = m_depth(c)
    cdef double* oM = work + FRAME_OM * d
    cdef double* Jw = work + FRAME_PER_LINK * m.max_depth + 64  # (after the chain) world columns of its dofs
    cdef int* dof = <int*>(Jw + 6 * nv)                    # their dof indices
    cdef int* pos = dof + nv                               # and their joints' places on the chain
    chain_pass(m, c.body, ins[0], NULL, NULL, _chain(m, work), oM, NULL, NULL)
    _frame_world(c, oM + 16 * (d - 1), oMf)
    for l in range(d):
        i = _chain(m, work)[l]
        for col in range(m.nvj[i]):
            world_column(m, i, col, oM + 16 * l, Jw + 6 * n)
            dof[n] = m.v_idx[i] + col
            pos[n] = l
            n += 1
    for b in range(n):  # the perturbed dof k
        if c.ref == REF_LWA:  # the velocity of the frame's origin p from dof k: v_k + w_k x p
            shift_to_frame(oMf, Jw + 6 * b, pk)
        for a in range(n):  # the column i
            if c.ref == REF_LOCAL:
                if pos[b] <= pos[a]:
                    continue
                motion_cross(Jw + 6 * a, Jw + 6 * b, x)
                inv_act_motion(oMf, x, t)
            else:
                if pos[b] <= pos[a]:
                    motion_cross(Jw + 6 * b, Jw + 6 * a, x)
                else:
                    memset(x, 0, 6 * sizeof(double))
                if c.ref == REF_WORLD:
                    memcpy(t, x, 6 * sizeof(double))
                else:
                    shift_to_frame(oMf, x, t)
                    t[0] += Jw[6 * a + 4] * pk[2] - Jw[6 * a + 5] * pk[1]
                    t[1] += Jw[6 * a + 5] * pk[0] - Jw[6 * a + 3] * pk[2]
                    t[2] += Jw[6 * a + 3] * pk[1] - Jw[6 * a + 4] * pk[0]
            for r in range(6):
                H[(r * nv + dof[a]) * nv + dof[b]] = t[r]
    return 0


def kinematic_hessian(model, q, frame, reference="local", *, out=None):
    """H (6, nv, nv): H[:, i, k] = d J[:, i] / d q_k of the frame Jacobian (compiled)."""
    return _run_frame(model, frame, reference, KINEMATIC_HESSIAN, out, q)


# ---- partial derivatives of the frame velocity and acceleration ----------------------------------
cdef inline void _moving_part(int ref, const double* x, double* out) noexcept nogil:
    """The part of a motion x (reference coordinates) that the reference follows when its
    frame moves with x: all of it (local), its linear part (LWA: the axes stay), none (world)."""
    cdef int r
    for r in range(6):
        out[r] = 0.0 if ref == REF_WORLD or (ref == REF_LWA and r >= 3) else x[r]


cdef inline void _to_reference(int ref, const double* oMf, const double* oMb, double* x) noexcept nogil:
    """A body-frame motion x of the body at oMb, in place: in the reference of the frame at oMf."""
    cdef double w[6]
    act_motion(oMb, x, w)
    _from_world(ref, oMf, w, x)


cdef void _frame_derivatives(const Call* c, const double** ins, double** outs, int nout,
                             double* work) noexcept nogil:
    """outs = (dv_dq, J) with nout 2, or (dv_dq, da_dq, da_dv, J) with nout 4 (ins[2] = a).

    As the reference's ``_derivative_passes``, every motion in the reference's
    coordinates: a step of joint k along its column s (the parent of k has twist V_p,
    acceleration A_p; zero at a root) gives dV_b = s x (V_b - V_p) and
    dA_b = s x (A_b - A_p) - (s x V_p) x (V_b - V_p), less m(s) x V_b and m(s) x A_b for
    the reference's own motion m(s) (``_moving_part``); the classical LWA acceleration
    adds [dw x p_dot + w x dp_dot; 0]; da_dv = Jdot + dv_dq."""
    cdef const CModel* m = c.m
    cdef const double* a = ins[2] if nout == 4 else NULL
    cdef int nv = m.nv, d, l, i, col, jc, o, r
    cdef double oMf[16]
    cdef double zero[6]
    cdef double w[6]
    cdef double s[6]
    cdef double mv[6]
    cdef double dv[6]
    cdef double da[6]
    cdef double t[6]
    cdef double u[6]
    cdef double vref[6]
    cdef const double* Vp
    cdef const double* Ap
    for o in range(nout):
        memset(outs[o], 0, 6 * nv * sizeof(double))
    if c.body < 0:
        return
    d = m_depth(c)
    cdef double* oM = work + FRAME_OM * d
    cdef double* V = work + FRAME_V * d
    cdef double* A = work + FRAME_A * d
    cdef int* chain = _chain(m, work)
    chain_pass(m, c.body, ins[0], ins[1], a, chain, oM, V, A)
    _frame_world(c, oM + 16 * (d - 1), oMf)
    for l in range(d):  # twists (and accelerations), in place, in the reference
        _to_reference(c.ref, oMf, oM + 16 * l, V + 6 * l)
        if a != NULL:
            _to_reference(c.ref, oMf, oM + 16 * l, A + 6 * l)
    cdef const double* Vb = V + 6 * (d - 1)
    cdef const double* Ab = A + 6 * (d - 1)
    memset(zero, 0, 6 * sizeof(double))
    _moving_part(c.ref, Vb, vref)
    for l in range(d):
        i = chain[l]
        Vp = V + 6 * (l - 1) if l > 0 else zero
        Ap = A + 6 * (l - 1) if l > 0 else zero
        for col in range(m.nvj[i]):
            jc = m.v_idx[i] + col
            world_column(m, i, col, oM + 16 * l, w)
            _from_world(c.ref, oMf, w, s)
            _put_column(outs[nout - 1], nv, jc, s)
            _moving_part(c.ref, s, t)
            for r in range(6):
                mv[r] = s[r] - t[r]
                u[r] = Vb[r] - Vp[r]
            motion_cross(mv, Vb, dv)                    # dv_dq
            motion_cross(s, Vp, t)
            sub6(dv, t)
            _put_column(outs[0], nv, jc, dv)
            if a == NULL:
                continue
            motion_cross(mv, Ab, da)                    # da_dq
            motion_cross(s, Ap, t)
            sub6(da, t)
            motion_cross(s, Vp, w)
            motion_cross(w, u, t)
            sub6(da, t)
            if c.ref == REF_LWA:
                da[0] += dv[4] * Vb[2] - dv[5] * Vb[1] + Vb[4] * dv[2] - Vb[5] * dv[1]
                da[1] += dv[5] * Vb[0] - dv[3] * Vb[2] + Vb[5] * dv[0] - Vb[3] * dv[2]
                da[2] += dv[3] * Vb[1] - dv[4] * Vb[0] + Vb[3] * dv[1] - Vb[4] * dv[0]
            _put_column(outs[1], nv, jc, da)
            for r in range(6):                          # da_dv = Jdot + dv_dq
                u[r] = V[6 * l + r] - vref[r]
            motion_cross(u, s, t)
            add6(t, dv)
            _put_column(outs[2], nv, jc, t)


cdef int k_frame_velocity_derivatives(const Call* c, const double** ins, double** outs,
                                      double* work) noexcept nogil:
    _frame_derivatives(c, ins, outs, 2, work)
    return 0


cdef int k_frame_acceleration_derivatives(const Call* c, const double** ins, double** outs,
                                          double* work) noexcept nogil:
    _frame_derivatives(c, ins, outs, 4, work)
    return 0


def frame_velocity_derivatives(model, q, v, frame, reference="local", *, out=None):
    """(dv_dq, dv_dv), each (6, nv): partial derivatives of frame_velocity, q along q (+) dq (compiled)."""
    return _run_frame(model, frame, reference, FRAME_VELOCITY_DERIVATIVES, out, q, v)


def frame_acceleration_derivatives(model, q, v, a, frame, reference="local", *, out=None):
    """(dv_dq, da_dq, da_dv, da_da), each (6, nv): partial derivatives of frame_velocity and
    frame_acceleration, q along q (+) dq (compiled)."""
    return _run_frame(model, frame, reference, FRAME_ACCELERATION_DERIVATIVES, out, q, v, a)


# ---- center of mass ---------------------------------------------------------------------------
@cython.cdivision(True)
cdef int k_com(const Call* c, const double** ins, double** outs, double* work) noexcept nogil:
    """The subtrees' masses and first moments (m, m c), summed from the leaves up, each in
    its body's frame, moved into the parent's with the joint's placement (a 3x3 times a
    3-vector per body, where world placements would compose 4x4s)."""
    cdef double* out = outs[0]
    cdef const CModel* m = c.m
    cdef double* H = work  # per body: subtree mass, first moment (4)
    cdef double* h
    cdef double X[16]
    cdef double w[4]
    cdef int i, p
    for i in range(m.nb):
        memcpy(H + 4 * i, m.inertias + 10 * i, 4 * sizeof(double))
    out[0] = 0.0; out[1] = 0.0; out[2] = 0.0
    for i in range(m.nb - 1, -1, -1):  # children after their parents: a subtree is complete here
        p = m.parents[i]
        h = H + 4 * i
        joint_placement(m, i, ins[0] + m.q_idx[i], X)
        w[0] = h[0]
        moved_moment(X, h, w + 1)
        if p >= 0:
            add4(H + 4 * p, w)
        else:
            out[0] += w[1]; out[1] += w[2]; out[2] += w[3]
    out[0] /= m.total_mass; out[1] /= m.total_mass; out[2] /= m.total_mass
    return 0


def center_of_mass(model, q, *, out=None):
    """Center of mass of the robot, world frame (compiled)."""
    cdef Call call
    cdef CompiledModel cm = prepare_mass_call(&call, model)
    return run_args(model, cm, &call, CENTER_OF_MASS, out, q)


# Scratch of com_jacobian: world placements (16), then subtree mass and
# first moment (4), per body.
cdef enum:
    COM_OM = 0
    COM_H = 16
    COM_PER_BODY = 20


@cython.cdivision(True)
cdef int k_com_jacobian(const Call* c, const double** ins, double** outs, double* work) noexcept nogil:
    """Column of a joint = (m_sub v + w x h_sub) / m_total, with (v, w) its world motion
    and m_sub, h_sub the mass and first moment of the subtree it moves."""
    cdef double* J = outs[0]
    cdef const CModel* m = c.m
    cdef int nb = m.nb, nv = m.nv, i, p, col, jc, r
    cdef double* oM = work + COM_OM * nb
    cdef double* H = work + COM_H * nb  # per body: subtree mass, first moment (4)
    cdef double w[6]
    cdef double inv_mass = 1.0 / m.total_mass
    world_placements(m, ins[0], oM, False)
    for i in range(nb):
        H[4 * i] = m.inertias[10 * i]
        first_moment(m, i, oM + 16 * i, H + 4 * i + 1)
    for i in range(nb - 1, -1, -1):
        p = m.parents[i]
        if p >= 0:
            add4(H + 4 * p, H + 4 * i)
    for i in range(nb):
        for col in range(m.nvj[i]):
            jc = m.v_idx[i] + col
            world_column(m, i, col, oM + 16 * i, w)
            J[jc] = (H[4 * i] * w[0] + w[4] * H[4 * i + 3] - w[5] * H[4 * i + 2]) * inv_mass
            J[nv + jc] = (H[4 * i] * w[1] + w[5] * H[4 * i + 1] - w[3] * H[4 * i + 3]) * inv_mass
            J[2 * nv + jc] = (H[4 * i] * w[2] + w[3] * H[4 * i + 2] - w[4] * H[4 * i + 1]) * inv_mass
    return 0


def com_jacobian(model, q, *, out=None):
    """Jacobian (3, nv) of the center of mass, world frame (compiled)."""
    cdef Call call
    cdef CompiledModel cm = prepare_mass_call(&call, model)
    return run_args(model, cm, &call, COM_JACOBIAN, out, q)


# ==========================================================================================
# The algorithms as the driver reads them: inputs, outputs, kernel, scratch, work
# ==========================================================================================
cdef Algorithm FORWARD_KINEMATICS = algorithm(b"q", ("q",), (b"b44",), k_fk, size(), size(nb=25))
cdef Algorithm FRAME_PLACEMENTS = algorithm(b"q", ("q",), (b"n44",), k_frame_placements, size(nb=16),
                                            size(nb=25, nv=10))
cdef Algorithm FRAME_PLACEMENT = algorithm(b"q", ("q",), (b"44",), k_frame_placement, FRAME_SCRATCH,
                                           size(depth=25))
cdef Algorithm FRAME_VELOCITY = algorithm(b"qv", ("q", "v"), (b"6",), k_frame_velocity, FRAME_SCRATCH,
                                          size(depth=30))
cdef Algorithm FRAME_ACCELERATION = algorithm(b"qvv", ("q", "v", "a"), (b"6",), k_frame_acceleration,
                                              FRAME_SCRATCH, size(depth=40))
cdef Algorithm FRAME_JACOBIAN = algorithm(b"q", ("q",), (b"6v",), k_frame_jacobian, FRAME_SCRATCH,
                                          size(nv=1, depth=40))
# scratch: the chain's, then 6 world numbers and 2 ints per dof
cdef Algorithm KINEMATIC_HESSIAN = algorithm(b"q", ("q",), (b"6vv",), k_kinematic_hessian,
                                             tuple(a + b for a, b in zip(FRAME_SCRATCH, size(nv=8))),
                                             size(nv2=6, depth=40))
cdef Algorithm FRAME_JACOBIAN_DOT = algorithm(b"qv", ("q", "v"), (b"6v",), k_frame_jacobian_dot, FRAME_SCRATCH,
                                              size(nv=1, depth=60))
cdef Algorithm FRAME_VELOCITY_DERIVATIVES = algorithm(b"qv", ("q", "v"), (b"6v", b"6v"),
                                                      k_frame_velocity_derivatives, FRAME_SCRATCH,
                                                      size(nv=2, depth=80))
cdef Algorithm FRAME_ACCELERATION_DERIVATIVES = algorithm(b"qvv", ("q", "v", "a"), (b"6v", b"6v", b"6v", b"6v"),
                                                          k_frame_acceleration_derivatives, FRAME_SCRATCH,
                                                          size(nv=4, depth=200))
cdef Algorithm CENTER_OF_MASS = algorithm(b"q", ("q",), (b"3",), k_com, size(nb=4), size(nb=15))
cdef Algorithm COM_JACOBIAN = algorithm(b"q", ("q",), (b"3v",), k_com_jacobian, size(nb=COM_PER_BODY),
                                        size(nb=40))

# the public name of each algorithm (what a model with mimic joints is run through: rbd._coupled)
FORWARD_KINEMATICS.name = "forward_kinematics"
FRAME_PLACEMENTS.name = "frame_placements"
FRAME_PLACEMENT.name = "frame_placement"
FRAME_VELOCITY.name = "frame_velocity"
FRAME_ACCELERATION.name = "frame_acceleration"
FRAME_JACOBIAN.name = "frame_jacobian"
FRAME_JACOBIAN_DOT.name = "frame_jacobian_time_derivative"
FRAME_VELOCITY_DERIVATIVES.name = "frame_velocity_derivatives"
FRAME_ACCELERATION_DERIVATIVES.name = "frame_acceleration_derivatives"
CENTER_OF_MASS.name = "center_of_mass"
COM_JACOBIAN.name = "com_jacobian"
KINEMATIC_HESSIAN.label = "kinematic_hessian"  # (composed: no out=, no mimic path)
