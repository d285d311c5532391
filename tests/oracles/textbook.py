"""Textbook formulas written out for the tests (no rbd code): the independent side
of the hand-derived checks.

The first part holds rotation and pose formulas; the second a dense, deliberately
slow rigid-body dynamics oracle (6x6 matrices, Featherstone's RBDA adapted to
rbd's linear-first ordering) that reads only a Model's plain data arrays, never
``rbd.spatial``, ``rbd.reference`` or ``rbd_c``: ``tests/test_textbook.py``
checks both backends against it."""
import numpy as np


def skew(w):
    """[w]x, the matrix of the cross product with w."""
    w = np.asarray(w, dtype=float)
    return np.array([[0.0, -w[2], w[1]], [w[2], 0.0, -w[0]], [-w[1], w[0], 0.0]])


def Rx(a):
    c, s = np.cos(a), np.sin(a)
    return np.array([[1.0, 0.0, 0.0], [0.0, c, -s], [0.0, s, c]])


def Ry(a):
    c, s = np.cos(a), np.sin(a)
    return np.array([[c, 0.0, s], [0.0, 1.0, 0.0], [-s, 0.0, c]])


def Rz(a):
    c, s = np.cos(a), np.sin(a)
    return np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])


def pose(R=np.eye(3), p=(0.0, 0.0, 0.0)):
    """The 4x4 homogeneous transform [[R, p], [0, 1]]."""
    M = np.eye(4)
    M[:3, :3] = R
    M[:3, 3] = p
    return M


# ==========================================================================================
# A dense textbook rigid-body dynamics oracle (Featherstone's RBDA, chapters 2-7), written
# with plain 6x6 matrices and read from nothing but the Model's plain data.  Spatial
# vectors are linear first, motions [v; w] and forces [f; n], as in rbd's API.  Every
# function takes one sample (no batching) and favours obviousness over speed.
# ==========================================================================================
# Joint kind codes, as documented in rbd/model.py (spelled out: no rbd import).
REVOLUTE_X, REVOLUTE_Y, REVOLUTE_Z, REVOLUTE, PRISMATIC, SPHERICAL, PLANAR, FREE = range(8)
NQ = {REVOLUTE_X: 1, REVOLUTE_Y: 1, REVOLUTE_Z: 1, REVOLUTE: 1, PRISMATIC: 1, SPHERICAL: 4, PLANAR: 3, FREE: 7}
NV = {REVOLUTE_X: 1, REVOLUTE_Y: 1, REVOLUTE_Z: 1, REVOLUTE: 1, PRISMATIC: 1, SPHERICAL: 3, PLANAR: 3, FREE: 6}


def rodrigues(axis, angle):
    """The rotation by ``angle`` about the unit ``axis``: I + sin K + (1 - cos) K^2."""
    K = skew(axis)
    return np.eye(3) + np.sin(angle) * K + (1.0 - np.cos(angle)) * K @ K


def quat_matrix(q):
    """The rotation of the unit Hamilton quaternion [w, x, y, z]."""
    w, x, y, z = q
    return np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
                      [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
                      [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)]])


def inv_pose(M):
    R, p = M[:3, :3], M[:3, 3]
    return pose(R.T, -R.T @ p)


def Xmotion(M):
    """The 6x6 matrix taking a motion [v; w] in frame b to frame a, for M = aMb:
    w_a = R w_b, v_a = R v_b + p x (R w_b)."""
    R, p = M[:3, :3], M[:3, 3]
    X = np.zeros((6, 6))
    X[:3, :3] = R
    X[:3, 3:] = skew(p) @ R
    X[3:, 3:] = R
    return X


def Xforce(M):
    """The 6x6 matrix taking a force [f; n] in frame b to frame a: Xmotion(M)^-T."""
    return np.linalg.inv(Xmotion(M)).T


def crm(m):
    """Motion cross product m x . for m = [v; w]."""
    X = np.zeros((6, 6))
    X[:3, :3] = X[3:, 3:] = skew(m[3:])
    X[:3, 3:] = skew(m[:3])
    return X


def crf(m):
    """Force cross product m x* . = -crm(m)^T."""
    return -crm(m).T


def rotate6(R):
    """blockdiag(R, R): change of axes without change of origin."""
    X = np.zeros((6, 6))
    X[:3, :3] = X[3:, 3:] = R
    return X


def spatial_inertia(row):
    """The 6x6 inertia of the 10 stored numbers [m, h, Ixx, Ixy, Ixz, Iyy, Iyz, Izz]
    (h = m c and I about the body origin, body axes): momentum [m v - h x w; h x v + I w]."""
    m, h = row[0], np.asarray(row[1:4])
    Ixx, Ixy, Ixz, Iyy, Iyz, Izz = row[4:10]
    I = np.array([[Ixx, Ixy, Ixz], [Ixy, Iyy, Iyz], [Ixz, Iyz, Izz]])
    Y = np.zeros((6, 6))
    Y[:3, :3] = m * np.eye(3)
    Y[:3, 3:] = -skew(h)
    Y[3:, :3] = skew(h)
    Y[3:, 3:] = I
    return Y


def joint(model, i, q):
    """(parent_from_body pose, motion subspace S (6 x nv_j)) of body i at q."""
    kind = int(model.joint_kinds[i])
    qj = np.asarray(q[model.q_idx[i]:model.q_idx[i] + NQ[kind]], dtype=float)
    S = np.zeros((6, NV[kind]))
    if kind in (REVOLUTE_X, REVOLUTE_Y, REVOLUTE_Z, REVOLUTE):
        axis = np.eye(3)[kind] if kind != REVOLUTE else model.joint_axes[i]
        J = pose(rodrigues(axis, qj[0]))
        S[3:, 0] = axis
    elif kind == PRISMATIC:
        J = pose(p=qj[0] * model.joint_axes[i])
        S[:3, 0] = model.joint_axes[i]
    elif kind == SPHERICAL:
        J = pose(quat_matrix(qj))
        S[3:, :] = np.eye(3)
    elif kind == PLANAR:  # [x, y, theta]; body twist [vx, vy, wz]
        J = pose(Rz(qj[2]), (qj[0], qj[1], 0.0))
        S[0, 0] = S[1, 1] = S[5, 2] = 1.0
    elif kind == FREE:  # [x, y, z, qw, qx, qy, qz]; body twist [v; w]
        J = pose(quat_matrix(qj[3:7]), qj[:3])
        S = np.eye(6)
    else:
        raise ValueError("unknown joint kind %d" % kind)
    return model.joint_placements[i] @ J, S


def dofs(model, i):
    """The slice of body i's joint velocity coordinates in v."""
    return slice(model.v_idx[i], model.v_idx[i] + NV[int(model.joint_kinds[i])])


def armature(model):
    return np.asarray(getattr(model, "armature", np.zeros(model.nv)), dtype=float)


def tree(model, q):
    """Per body: (parent_from_body pose, S, Xup = motion transform parent -> body)."""
    out = []
    for i in range(model.nbodies):
        M, S = joint(model, i, q)
        out.append((M, S, Xmotion(inv_pose(M))))
    return out


def forward_kinematics(model, q):
    """World placement (4x4) of every body: world_from_parent @ parent_from_body."""
    world = []
    for i, (M, _, _) in enumerate(tree(model, q)):
        p = model.parents[i]
        world.append(M if p < 0 else world[p] @ M)
    return np.array(world).reshape(-1, 4, 4)


def body_motions(model, q, v, a, gravity=False):
    """Body twists and spatial accelerations, each in its body frame (RBDA 5.1); with
    ``gravity`` the world is given the acceleration -g (gravity as a fictitious force)."""
    a0 = np.zeros(6)
    if gravity:
        a0[:3] = -np.asarray(model.gravity)
    V, A = [], []
    for i, (M, S, Xup) in enumerate(tree(model, q)):
        p = model.parents[i]
        vp, ap = (np.zeros(6), a0) if p < 0 else (V[p], A[p])
        vJ = S @ v[dofs(model, i)]
        V.append(Xup @ vp + vJ)
        A.append(Xup @ ap + S @ a[dofs(model, i)] + crm(V[i]) @ vJ)
    return V, A


# ------------------------------------------------------------------------------------------
# Dynamics
# ------------------------------------------------------------------------------------------
def rnea(model, q, v, a, fext=None):
    """Recursive Newton-Euler (RBDA Table 5.1): tau = M a + h - sum J_i^T fext_i."""
    V, A = body_motions(model, q, v, a, gravity=True)
    T = tree(model, q)
    f = []
    for i in range(model.nbodies):
        Y = spatial_inertia(model.inertias[i])
        f.append(Y @ A[i] + crf(V[i]) @ Y @ V[i] - (0.0 if fext is None else fext[i]))
    tau = np.zeros(model.nv)
    for i in reversed(range(model.nbodies)):
        M, S, Xup = T[i]
        tau[dofs(model, i)] = S.T @ f[i]
        if model.parents[i] >= 0:
            f[model.parents[i]] = f[model.parents[i]] + Xup.T @ f[i]
    return tau + armature(model) * a


def gravity(model, q):
    return rnea(model, q, np.zeros(model.nv), np.zeros(model.nv))


def nonlinear_effects(model, q, v):
    return rnea(model, q, v, np.zeros(model.nv))


def crba(model, q):
    """Composite rigid-body algorithm (RBDA Table 6.2)."""
    T = tree(model, q)
    Ic = [spatial_inertia(model.inertias[i]) for i in range(model.nbodies)]
    for i in reversed(range(model.nbodies)):
        if model.parents[i] >= 0:
            Xup = T[i][2]
            Ic[model.parents[i]] = Ic[model.parents[i]] + Xup.T @ Ic[i] @ Xup
    H = np.diag(armature(model))
    for i in range(model.nbodies):
        S = T[i][1]
        F = Ic[i] @ S
        H[dofs(model, i), dofs(model, i)] += S.T @ F
        j = i
        while model.parents[j] >= 0:
            F = T[j][2].T @ F
            j = model.parents[j]
            H[dofs(model, j), dofs(model, i)] = T[j][1].T @ F
            H[dofs(model, i), dofs(model, j)] = H[dofs(model, j), dofs(model, i)].T
    return H


def aba(model, q, v, tau, fext=None):
    """Articulated-body algorithm (RBDA Table 7.1)."""
    T = tree(model, q)
    V, _ = body_motions(model, q, v, np.zeros(model.nv))
    n = model.nbodies
    c, IA, pA = [None] * n, [None] * n, [None] * n
    for i in range(n):
        S = T[i][1]
        c[i] = crm(V[i]) @ S @ v[dofs(model, i)]
        IA[i] = spatial_inertia(model.inertias[i])
        pA[i] = crf(V[i]) @ IA[i] @ V[i] - (0.0 if fext is None else fext[i])
    U, Dinv, u = [None] * n, [None] * n, [None] * n
    for i in reversed(range(n)):
        M, S, Xup = T[i]
        U[i] = IA[i] @ S
        Dinv[i] = np.linalg.inv(S.T @ U[i] + np.diag(armature(model)[dofs(model, i)]))
        u[i] = tau[dofs(model, i)] - S.T @ pA[i]
        p = model.parents[i]
        if p >= 0:
            Ia = IA[i] - U[i] @ Dinv[i] @ U[i].T
            pa = pA[i] + Ia @ c[i] + U[i] @ Dinv[i] @ u[i]
            IA[p] = IA[p] + Xup.T @ Ia @ Xup
            pA[p] = pA[p] + Xup.T @ pa
    qdd = np.zeros(model.nv)
    a0 = np.concatenate([-np.asarray(model.gravity), np.zeros(3)])
    A = [None] * n
    for i in range(n):
        M, S, Xup = T[i]
        p = model.parents[i]
        a_ = Xup @ (a0 if p < 0 else A[p]) + c[i]
        qdd[dofs(model, i)] = Dinv[i] @ (u[i] - U[i].T @ a_)
        A[i] = a_ + S @ qdd[dofs(model, i)]
    return qdd


def kinetic_energy(model, q, v):
    V, _ = body_motions(model, q, v, np.zeros(model.nv))
    return sum(0.5 * V[i] @ spatial_inertia(model.inertias[i]) @ V[i] for i in range(model.nbodies)) \
        + 0.5 * v @ (armature(model) * v)


def world_first_moments(model, q):
    """Per body, m_i times its center of mass in world coordinates: m p + R h."""
    W = forward_kinematics(model, q)
    return [model.inertias[i, 0] * W[i][:3, 3] + W[i][:3, :3] @ model.inertias[i, 1:4]
            for i in range(model.nbodies)]


def potential_energy(model, q):
    """-g . sum m_i x_i (zero at the world origin)."""
    return -np.asarray(model.gravity) @ np.sum(world_first_moments(model, q), axis=0)


def center_of_mass(model, q):
    return np.sum(world_first_moments(model, q), axis=0) / model.inertias[:, 0].sum()



def centroidal_momentum(model, q, v):
    """[linear; angular about the center of mass], world axes: the bodies' momenta Y_i V_i
    summed at the world origin, then the angular part moved to the center of mass."""
    W = forward_kinematics(model, q)
    V, _ = body_motions(model, q, v, np.zeros(model.nv))
    h = sum(Xforce(W[i]) @ spatial_inertia(model.inertias[i]) @ V[i] for i in range(model.nbodies))
    return np.concatenate([h[:3], h[3:] - np.cross(center_of_mass(model, q), h[:3])])

# ------------------------------------------------------------------------------------------
# Jacobians and frames
# ------------------------------------------------------------------------------------------
def world_jacobians(model, q):
    """Per body, its 6 x nv Jacobian in world axes and origin: column block of each
    ancestor j (and of the body itself) is Xmotion(world_from_j) S_j."""
    W = forward_kinematics(model, q)
    T = tree(model, q)
    J = []
    for i in range(model.nbodies):
        Ji = np.zeros((6, model.nv))
        j = i
        while j >= 0:
            Ji[:, dofs(model, j)] = Xmotion(W[j]) @ T[j][1]
            j = model.parents[j]
        J.append(Ji)
    return J


def com_jacobian(model, q):
    """d com / dt = sum_i (m_i v_i - (m_i x_i) x w_i) / m, with [v_i; w_i] the world twists."""
    Jc = np.zeros((3, model.nv))
    moments = world_first_moments(model, q)
    for i, Ji in enumerate(world_jacobians(model, q)):
        Jc += model.inertias[i, 0] * Ji[:3] - skew(moments[i]) @ Ji[3:]
    return Jc / model.inertias[:, 0].sum()


def _frame_world(model, q, frame):
    """(world_from_frame, its body, world_from_body or None for a world-fixed frame)."""
    b = int(model.frame_parents[frame])
    if b < 0:
        return model.frame_offsets[frame], b, None
    Wb = forward_kinematics(model, q)[b]
    return Wb @ model.frame_offsets[frame], b, Wb


def frame_placement(model, q, frame):
    return _frame_world(model, q, frame)[0]


def frame_jacobian(model, q, frame, reference="local"):
    """world: the body's world Jacobian; local: moved to the frame, Xmotion(frame_from_world);
    local_world_aligned: the local one turned to world axes."""
    Wf, b, _ = _frame_world(model, q, frame)
    Jw = world_jacobians(model, q)[b] if b >= 0 else np.zeros((6, model.nv))
    Jl = Xmotion(inv_pose(Wf)) @ Jw
    return {"world": Jw, "local": Jl, "local_world_aligned": rotate6(Wf[:3, :3]) @ Jl}[reference]


def frame_velocity(model, q, v, frame, reference="local"):
    return frame_jacobian(model, q, frame, reference) @ v


def frame_acceleration(model, q, v, a, frame, reference="local"):
    """From the body acceleration of the recursion (no gravity): the time derivative
    of the frame twist in each reference.  World and local twists of a body-fixed frame
    are Xmotion(constant-or-body-carried) images of the body twist, so their derivatives
    are the images of the body acceleration (the world's d/dt Ad(wMb) V = Ad(wMb)(A + V x V)
    and V x V = 0); local_world_aligned [R v; R w] differentiates to
    [R (a_lin + w x v); R alpha] with (v, w, a_lin, alpha) local: the classical acceleration."""
    Wf, b, Wb = _frame_world(model, q, frame)
    if b < 0:
        return np.zeros(6)
    V, A = body_motions(model, q, v, a)
    Xfb = Xmotion(inv_pose(model.frame_offsets[frame]))
    Vl, Al = Xfb @ V[b], Xfb @ A[b]
    if reference == "local":
        return Al
    if reference == "world":
        return Xmotion(Wb) @ A[b]
    R = Wf[:3, :3]
    return np.concatenate([R @ (Al[:3] + np.cross(Vl[3:], Vl[:3])), R @ Al[3:]])


def frame_jacobian_time_derivative(model, q, v, frame, reference="local"):
    """Analytic: a world column Xmotion(world_from_j) S_j moves with body j, so its
    derivative is Vw_j x column (Vw_j body j's twist in world axes and origin).  The local
    Jacobian is Xmotion(frame_from_world) Jw, and d/dt Xmotion(frame_from_world) =
    -crm(V_local) Xmotion(frame_from_world); local_world_aligned is blockdiag(R, R) J_local
    with dR/dt = R [w_local]x."""
    Wf, b, _ = _frame_world(model, q, frame)
    if b < 0:
        return np.zeros((6, model.nv))
    W = forward_kinematics(model, q)
    V, _ = body_motions(model, q, v, np.zeros(model.nv))
    Jw = world_jacobians(model, q)[b]
    dJw = np.zeros_like(Jw)
    j = b
    while j >= 0:
        cols = dofs(model, j)
        dJw[:, cols] = crm(Xmotion(W[j]) @ V[j]) @ Jw[:, cols]
        j = model.parents[j]
    Xfw = Xmotion(inv_pose(Wf))
    Jl = Xfw @ Jw
    Vl = Jl @ v
    dJl = -crm(Vl) @ Jl + Xfw @ dJw
    if reference == "world":
        return dJw
    if reference == "local":
        return dJl
    return rotate6(Wf[:3, :3]) @ (rotate6(skew(Vl[3:])) @ Jl + dJl)


# ------------------------------------------------------------------------------------------
# Configuration space (for finite differences along a motion in the oracle's own tests)
# ------------------------------------------------------------------------------------------
def quat_multiply(a, b):
    w1, v1, w2, v2 = a[0], np.asarray(a[1:]), b[0], np.asarray(b[1:])
    return np.concatenate([[w1 * w2 - v1 @ v2], w1 * v2 + w2 * v1 + np.cross(v1, v2)])


def quat_exp(w):
    """The unit quaternion of the rotation vector w."""
    angle = np.linalg.norm(w)
    if angle < 1e-12:
        return np.array([1.0, *(0.5 * np.asarray(w))])
    return np.concatenate([[np.cos(angle / 2)], np.sin(angle / 2) * np.asarray(w) / angle])


def se3_exp_matrix(twist, terms=40):
    """exp of the 4x4 matrix [[w]x, v; 0, 0] by its power series (small twists only)."""
    X = np.zeros((4, 4))
    X[:3, :3], X[:3, 3] = skew(twist[3:]), twist[:3]
    out, term = np.eye(4), np.eye(4)
    for k in range(1, terms):
        term = term @ X / k
        out = out + term
    return out


def integrate(model, q, v):
    """q (+) v: each joint's pose times exp of its body twist S_j v_j."""
    out = np.array(q, dtype=float)
    for i in range(model.nbodies):
        kind = int(model.joint_kinds[i])
        qs = slice(model.q_idx[i], model.q_idx[i] + NQ[kind])
        qj, vj = out[qs], v[dofs(model, i)]
        if kind == SPHERICAL:
            out[qs] = quat_multiply(qj, quat_exp(vj))
        elif kind == PLANAR:
            step = se3_exp_matrix(np.array([vj[0], vj[1], 0.0, 0.0, 0.0, vj[2]]))
            out[qs] = [*(qj[:2] + Rz(qj[2])[:2, :2] @ step[:2, 3]), qj[2] + vj[2]]
        elif kind == FREE:
            step = se3_exp_matrix(vj)
            out[qs] = [*(qj[:3] + quat_matrix(qj[3:]) @ step[:3, 3]), *quat_multiply(qj[3:], quat_exp(vj[3:]))]
        else:
            out[qs] = qj + vj
    return out
