"""The dumbest obviously-correct rigid-body algorithms: dense 6x6 matrices, written
from the textbook (Featherstone's RBDA, with motions linear-first [v; w] as rbd's),
sharing no code with rbd.  They read only a Model's plain data.

Both of rbd's backends are tuned engines; this is the oracle beside them (in the
spirit of bottleneck's ``slow/``): slow, short, and easy to check by eye.
"""
import numpy as np
import scipy.linalg

from rbd import JointKind  # only to name the integer codes stored in model.joint_kinds


def skew(w):
    return np.array([[0.0, -w[2], w[1]], [w[2], 0.0, -w[0]], [-w[1], w[0], 0.0]])


def motion_transform(M):
    """6x6 X with X m_b = the motion m_b (given in frame b) in frame a, for M = aMb."""
    R, p = M[:3, :3], M[:3, 3]
    X = np.zeros((6, 6))
    X[:3, :3] = R
    X[:3, 3:] = skew(p) @ R
    X[3:, 3:] = R
    return X


def crm(m):
    """The 6x6 matrix of m x (motion cross product), linear first."""
    X = np.zeros((6, 6))
    X[:3, :3] = skew(m[3:])
    X[:3, 3:] = skew(m[:3])
    X[3:, 3:] = skew(m[3:])
    return X


def crf(m):
    return -crm(m).T


def spatial_inertia(Y):
    """6x6 inertia at the body origin from [m, h, Ixx, Ixy, Ixz, Iyy, Iyz, Izz] (h = m c)."""
    m, h = Y[0], Y[1:4]
    I = np.array([[Y[4], Y[5], Y[6]], [Y[5], Y[7], Y[8]], [Y[6], Y[8], Y[9]]])
    return np.block([[m * np.eye(3), -skew(h)], [skew(h), I]])


def quat_matrix(q):
    w, x, y, z = np.asarray(q) / np.linalg.norm(q)
    return np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
                     [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
                     [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)]])


def rotation(axis, angle):
    return scipy.linalg.expm(skew(np.asarray(axis) * angle))


def joint(model, i, qj):
    """(joint transform 4x4, motion subspace S 6 x nv_i in the body frame) of body i."""
    kind, axis = JointKind(int(model.joint_kinds[i])), model.joint_axes[i]
    M, S = np.eye(4), None
    if kind in (JointKind.REVOLUTE_X, JointKind.REVOLUTE_Y, JointKind.REVOLUTE_Z, JointKind.REVOLUTE):
        if kind != JointKind.REVOLUTE:
            axis = np.eye(3)[kind - JointKind.REVOLUTE_X]
        M[:3, :3] = rotation(axis, qj[0])
        S = np.concatenate([np.zeros(3), axis])[:, None]
    elif kind == JointKind.PRISMATIC:
        M[:3, 3] = axis * qj[0]
        S = np.concatenate([axis, np.zeros(3)])[:, None]
    elif kind == JointKind.SPHERICAL:
        M[:3, :3] = quat_matrix(qj)
        S = np.eye(6)[:, 3:]
    elif kind == JointKind.PLANAR:
        M[:3, :3] = rotation([0, 0, 1], qj[2])
        M[:2, 3] = qj[:2]
        S = np.eye(6)[:, [0, 1, 5]]
    elif kind == JointKind.FREE:
        M[:3, :3] = quat_matrix(qj[3:])
        M[:3, 3] = qj[:3]
        S = np.eye(6)
    return M, S


def kinematics(model, q):
    """Per body: parent_from_body placement, world placement, S, and its v slice."""
    out = []
    for i in range(model.nbodies):
        qi = q[model.q_idx[i]:model.q_idx[i] + model.joint_nq[i]]
        Mj, S = joint(model, i, qi)
        parent_from_body = model.joint_placements[i] @ Mj
        p = model.parents[i]
        world = parent_from_body if p < 0 else out[p][1] @ parent_from_body
        out.append((parent_from_body, world, S, slice(model.v_idx[i], model.v_idx[i] + model.joint_nv[i])))
    return out


def forward_kinematics(model, q):
    return np.array([world for _, world, _, _ in kinematics(model, q)]).reshape(-1, 4, 4)


def velocities(model, q, v, a, gravity):
    """Body twists and spatial accelerations in body frames (the RNEA forward pass)."""
    bodies = kinematics(model, q)
    twists, accs = [], []
    for i, (P, _, S, sl) in enumerate(bodies):
        X = motion_transform(np.linalg.inv(P))  # body <- parent
        p = model.parents[i]
        vp = np.zeros(6) if p < 0 else twists[p]
        ap = np.concatenate([-gravity, np.zeros(3)]) if p < 0 else accs[p]
        vi = X @ vp + S @ v[sl]
        twists.append(vi)
        accs.append(X @ ap + S @ a[sl] + crm(vi) @ S @ v[sl])
    return bodies, twists, accs


def rnea(model, q, v, a, fext=None):
    bodies, twists, accs = velocities(model, q, v, a, model.gravity)
    forces = []
    for i in range(model.nbodies):
        I = spatial_inertia(model.inertias[i])
        f = I @ accs[i] + crf(twists[i]) @ I @ twists[i]
        forces.append(f - (0.0 if fext is None else fext[i]))
    tau = np.zeros(model.nv)
    for i in reversed(range(model.nbodies)):
        P, _, S, sl = bodies[i]
        tau[sl] = S.T @ forces[i]
        if model.parents[i] >= 0:
            forces[model.parents[i]] = forces[model.parents[i]] + motion_transform(np.linalg.inv(P)).T @ forces[i]
    return tau


def crba(model, q):
    bodies = kinematics(model, q)
    Ic = [spatial_inertia(Y) for Y in model.inertias]
    H = np.zeros((model.nv, model.nv))
    for i in reversed(range(model.nbodies)):
        P, _, S, sl = bodies[i]
        X = motion_transform(np.linalg.inv(P))
        if model.parents[i] >= 0:
            Ic[model.parents[i]] = Ic[model.parents[i]] + X.T @ Ic[i] @ X
        F = Ic[i] @ S
        H[sl, sl] = S.T @ F
        j = i
        while model.parents[j] >= 0:
            F = motion_transform(np.linalg.inv(bodies[j][0])).T @ F
            j = model.parents[j]
            H[bodies[j][3], sl] = bodies[j][2].T @ F
            H[sl, bodies[j][3]] = H[bodies[j][3], sl].T
    return H


def aba(model, q, v, tau, fext=None):
    zero = np.zeros(model.nv)
    bodies, twists, _ = velocities(model, q, v, zero, np.zeros(3))
    n = model.nbodies
    X = [motion_transform(np.linalg.inv(P)) for P, _, _, _ in bodies]
    IA = [spatial_inertia(Y) for Y in model.inertias]
    pA = [crf(twists[i]) @ IA[i] @ twists[i] - (0.0 if fext is None else fext[i]) for i in range(n)]
    c = [crm(twists[i]) @ bodies[i][2] @ v[bodies[i][3]] for i in range(n)]
    U, Dinv, u = [None] * n, [None] * n, [None] * n
    for i in reversed(range(n)):
        S, sl = bodies[i][2], bodies[i][3]
        U[i] = IA[i] @ S
        Dinv[i] = np.linalg.inv(S.T @ U[i])
        u[i] = tau[sl] - S.T @ pA[i]
        p = model.parents[i]
        if p >= 0:
            Ia = IA[i] - U[i] @ Dinv[i] @ U[i].T
            pa = pA[i] + Ia @ c[i] + U[i] @ Dinv[i] @ u[i]
            IA[p] = IA[p] + X[i].T @ Ia @ X[i]
            pA[p] = pA[p] + X[i].T @ pa
    qdd, acc = np.zeros(model.nv), [None] * n
    for i in range(n):
        S, sl = bodies[i][2], bodies[i][3]
        p = model.parents[i]
        ap = np.concatenate([-model.gravity, np.zeros(3)]) if p < 0 else acc[p]
        a_i = X[i] @ ap + c[i]
        qdd[sl] = Dinv[i] @ (u[i] - U[i].T @ a_i)
        acc[i] = a_i + S @ qdd[sl]
    return qdd


# ------------------------------------------------------------------------------------------
# Frames
# ------------------------------------------------------------------------------------------
def _frame(model, q, frame):
    f = model.frame_id(frame)
    b = int(model.frame_parents[f])
    bodies = kinematics(model, q)
    world_from_body = np.eye(4) if b < 0 else bodies[b][1]
    return f, b, bodies, world_from_body, world_from_body @ model.frame_placements[f]


def frame_placement(model, q, frame):
    return _frame(model, q, frame)[4]


def _ancestors(model, b):
    chain = []
    while b >= 0:
        chain.append(b)
        b = int(model.parents[b])
    return chain


def _express(reference, oMf, twist_world):
    """A world twist (at the world origin, world axes) in the given reference."""
    if reference == "world":
        return twist_world
    local = np.linalg.inv(motion_transform(oMf)) @ twist_world
    if reference == "local":
        return local
    R = np.zeros((6, 6))
    R[:3, :3] = R[3:, 3:] = oMf[:3, :3]
    return R @ local  # local_world_aligned: the frame's origin, world axes


def frame_jacobian(model, q, frame, reference="local"):
    _, b, bodies, _, oMf = _frame(model, q, frame)
    J = np.zeros((6, model.nv))
    for j in _ancestors(model, b):
        _, world, S, sl = bodies[j]
        for k in range(S.shape[1]):
            J[:, sl.start + k] = _express(reference, oMf, motion_transform(world) @ S[:, k])
    return J


def frame_velocity(model, q, v, frame, reference="local"):
    return frame_jacobian(model, q, frame, reference) @ v


def frame_acceleration(model, q, v, a, frame, reference="local"):
    """The time derivative of the frame's twist in the reference."""
    f, b, _, world_from_body, oMf = _frame(model, q, frame)
    if b < 0:
        return np.zeros(6)
    _, twists, accs = velocities(model, q, v, a, np.zeros(3))
    fMb = np.linalg.inv(model.frame_placements[f])
    if reference == "local":
        return motion_transform(fMb) @ accs[b]  # a constant transform of the body's
    if reference == "world":
        return motion_transform(world_from_body) @ accs[b]  # d/dt Ad(oMb) v = Ad(oMb) (a + v x v)
    r = model.frame_placements[f][:3, 3]  # local_world_aligned: [p_ddot; w_dot], classical
    vb, wb = twists[b][:3], twists[b][3:]
    dvb, dwb = accs[b][:3], accs[b][3:]
    u = vb + np.cross(wb, r)
    R = world_from_body[:3, :3]
    return np.concatenate([R @ (dvb + np.cross(dwb, r) + np.cross(wb, u)), R @ dwb])


def integrate(model, q, v):
    """q (+) v, each joint on its own manifold (matrix exponentials: no closed forms)."""
    out = np.array(q, dtype=float)
    for i in range(model.nbodies):
        kind = JointKind(int(model.joint_kinds[i]))
        qs, vs = slice(model.q_idx[i], model.q_idx[i] + model.joint_nq[i]), slice(model.v_idx[i], model.v_idx[i] + model.joint_nv[i])
        qi, vi = q[qs], v[vs]
        if kind == JointKind.SPHERICAL:
            R = quat_matrix(qi) @ scipy.linalg.expm(skew(vi))
            out[qs] = _matrix_quat(R)
        elif kind in (JointKind.FREE, JointKind.PLANAR):
            M, S = joint(model, i, qi)
            twist = S @ vi
            hat = np.zeros((4, 4))
            hat[:3, :3], hat[:3, 3] = skew(twist[3:]), twist[:3]
            M = M @ scipy.linalg.expm(hat)
            if kind == JointKind.FREE:
                out[qs] = np.concatenate([M[:3, 3], _matrix_quat(M[:3, :3])])
            else:
                out[qs] = [M[0, 3], M[1, 3], qi[2] + vi[2]]
        else:
            out[qs] = qi + vi
    return out


def _matrix_quat(R):
    w = np.sqrt(max(0.0, 1.0 + np.trace(R))) / 2.0
    if w > 0.1:
        return np.array([w, (R[2, 1] - R[1, 2]) / (4 * w), (R[0, 2] - R[2, 0]) / (4 * w), (R[1, 0] - R[0, 1]) / (4 * w)])
    k = int(np.argmax(np.diag(R)))
    i, j = (k + 1) % 3, (k + 2) % 3
    s = np.sqrt(1.0 + R[k, k] - R[i, i] - R[j, j]) * 2.0
    quat = np.zeros(4)
    quat[0] = (R[j, i] - R[i, j]) / s
    quat[1 + k] = s / 4.0
    quat[1 + i] = (R[i, k] + R[k, i]) / s
    quat[1 + j] = (R[j, k] + R[k, j]) / s
    return quat


def frame_jacobian_time_derivative(model, q, v, frame, reference="local", h=1e-6):
    """d/dt J along q(t) = q (+) t v, by central differences (the oracle's own integrate)."""
    plus = frame_jacobian(model, integrate(model, q, h * v), frame, reference)
    minus = frame_jacobian(model, integrate(model, q, -h * v), frame, reference)
    return (plus - minus) / (2 * h)


# ------------------------------------------------------------------------------------------
# Mass distribution
# ------------------------------------------------------------------------------------------
def center_of_mass(model, q):
    bodies = kinematics(model, q)
    total = sum(Y[0] for Y in model.inertias)
    return sum(world[:3, :3] @ Y[1:4] + Y[0] * world[:3, 3] for (_, world, _, _), Y in zip(bodies, model.inertias)) / total


def com_jacobian(model, q):
    bodies = kinematics(model, q)
    total = sum(Y[0] for Y in model.inertias)
    J = np.zeros((3, model.nv))
    for i, ((_, world, _, _), Y) in enumerate(zip(bodies, model.inertias)):
        if Y[0] == 0.0:
            continue
        c = world[:3, :3] @ (Y[1:4] / Y[0]) + world[:3, 3]
        for j in _ancestors(model, i):
            _, wj, S, sl = bodies[j]
            cols = motion_transform(wj) @ S  # world twists at the world origin
            J[:, sl] += Y[0] * (cols[:3] + np.cross(cols[3:].T, c).T)
    return J / total


def kinetic_energy(model, q, v):
    _, twists, _ = velocities(model, q, v, np.zeros(model.nv), np.zeros(3))
    return sum(0.5 * t @ spatial_inertia(Y) @ t for t, Y in zip(twists, model.inertias))


def potential_energy(model, q):
    bodies = kinematics(model, q)
    return -sum(model.gravity @ (world[:3, :3] @ Y[1:4] + Y[0] * world[:3, 3])
                for (_, world, _, _), Y in zip(bodies, model.inertias))
