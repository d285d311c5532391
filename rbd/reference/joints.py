"""Joint semantics: the one place that knows what each joint kind means.

The kinds and their coordinates are described in ``rbd.model``.  Every
function here works on ONE joint's coordinates with any leading batch
dimensions, ``qj`` of shape ``(..., nq_j)`` and ``vj`` of shape ``(..., nv_j)``.

The motion subspace ``S`` of every kind is constant in the child body frame;
it is stored as the ``(nv_j, 6)`` array whose rows are the motion vectors
``S e_k``, so ``S vj`` is ``vj @ S`` and ``S^T f`` is ``f @ S.T``.

``JointTable`` gathers the per-model constants the algorithms need (slices,
subspaces, ancestors, subtrees); ``joint_table(model)`` builds it once per model
and caches it on the model.
"""
import numpy as np

from .. import rotations, spatial
from ..model import JOINT_DIMENSIONS, JointKind

# Rotations about a unit basis vector: the index of that vector.
_BASIS_AXIS = {JointKind.REVOLUTE_X: 0, JointKind.REVOLUTE_Y: 1, JointKind.REVOLUTE_Z: 2}

# What each configuration coordinate is, for random sampling without limits.
ANGLE, LENGTH, QUATERNION = "angle", "length", "quaternion"
COORDINATE_ROLES = {
    JointKind.REVOLUTE_X: (ANGLE,),
    JointKind.REVOLUTE_Y: (ANGLE,),
    JointKind.REVOLUTE_Z: (ANGLE,),
    JointKind.REVOLUTE: (ANGLE,),
    JointKind.PRISMATIC: (LENGTH,),
    JointKind.SPHERICAL: (QUATERNION,) * 4,
    JointKind.PLANAR: (LENGTH, LENGTH, ANGLE),
    JointKind.FREE: (LENGTH,) * 3 + (QUATERNION,) * 4,
}

#: Where the unit quaternion starts in the joint's coordinates.
QUATERNION_OFFSET = {JointKind.SPHERICAL: 0, JointKind.FREE: 3}


# ------------------------------------------------------------------------------------------
# Placement and motion subspace
# ------------------------------------------------------------------------------------------
def _set_basis_rotation(out, i, angle):
    """Write the rotation by ``angle`` about basis vector ``i`` into out[..., :3, :3]."""
    j, k = (i + 1) % 3, (i + 2) % 3
    c, s = np.cos(angle), np.sin(angle)
    out[..., i, i] = 1.0
    out[..., j, j] = c
    out[..., k, k] = c
    out[..., k, j] = s
    out[..., j, k] = -s


def transform(kind, axis, qj):
    """The joint transform M_J(q_j), joint-input-from-child-body, shape (..., 4, 4).

    Quaternions are used as given; ``rotations.quat_to_matrix`` decides how a
    non-unit one is read.
    """
    out = np.zeros(qj.shape[:-1] + (4, 4))
    out[..., 3, 3] = 1.0
    if kind in _BASIS_AXIS:
        _set_basis_rotation(out, _BASIS_AXIS[kind], qj[..., 0])
    elif kind == JointKind.REVOLUTE:
        out[..., :3, :3] = rotations.so3_exp(qj * axis)
    elif kind == JointKind.PRISMATIC:
        out[..., 0, 0] = out[..., 1, 1] = out[..., 2, 2] = 1.0
        out[..., :3, 3] = qj * axis
    elif kind == JointKind.SPHERICAL:
        out[..., :3, :3] = rotations.quat_to_matrix(qj)
    elif kind == JointKind.PLANAR:
        _set_basis_rotation(out, 2, qj[..., 2])
        out[..., 0, 3] = qj[..., 0]
        out[..., 1, 3] = qj[..., 1]
    elif kind == JointKind.FREE:
        out[..., :3, :3] = rotations.quat_to_matrix(qj[..., 3:7])
        out[..., :3, 3] = qj[..., :3]
    else:
        raise ValueError("unknown joint kind %r" % (kind,))
    return out


def motion_subspace(kind, axis):
    """S as a (nv_j, 6) array whose rows are the motion vectors of unit joint velocities."""
    nv = JOINT_DIMENSIONS[JointKind(kind)][1]
    S = np.zeros((nv, 6))
    if kind in _BASIS_AXIS:
        S[0, 3 + _BASIS_AXIS[kind]] = 1.0
    elif kind == JointKind.REVOLUTE:
        S[0, 3:] = axis
    elif kind == JointKind.PRISMATIC:
        S[0, :3] = axis
    elif kind == JointKind.SPHERICAL:
        S[:, 3:] = np.eye(3)
    elif kind == JointKind.PLANAR:  # [vx, vy, wz]
        S[0, 0] = S[1, 1] = S[2, 5] = 1.0
    elif kind == JointKind.FREE:
        S[:] = np.eye(6)
    S.setflags(write=False)
    return S


# ------------------------------------------------------------------------------------------
# Configuration space of one joint
# ------------------------------------------------------------------------------------------
def neutral(kind):
    """The neutral coordinates (nq_j,): zeros, identity quaternion."""
    q = np.zeros(JOINT_DIMENSIONS[JointKind(kind)][0])
    if kind in QUATERNION_OFFSET:
        q[QUATERNION_OFFSET[kind]] = 1.0
    return q


def _unit(quat):
    return quat / np.linalg.norm(quat, axis=-1, keepdims=True)


def _quat_times_exp(quat, w):
    """quat ⊗ exp(w): rotate by the body-frame rotation vector w, renormalised."""
    return _unit(rotations.quat_multiply(quat, rotations.rotvec_to_quat(w)))


def _planar_translation(theta, tx, ty):
    """The world-plane step (x, y) of the body-frame step (tx, ty) at heading theta."""
    c, s = np.cos(theta), np.sin(theta)
    return c * tx - s * ty, s * tx + c * ty


def integrate(kind, qj, vj):
    """q_j ⊕ v_j: the configuration reached after moving with velocity v_j for unit time.

    Spherical: q ⊗ exp(ω) (ω in the body frame); free flyer: M exp(v) on SE(3),
    planar: M exp(v) on SE(2); quaternions come out normalised."""
    if kind == JointKind.SPHERICAL:
        return _quat_times_exp(qj, vj)
    if kind == JointKind.FREE:
        step = spatial.se3_exp(vj)  # body-frame step: translation J_l(ω) v
        out = np.empty(np.broadcast_shapes(qj.shape, vj.shape[:-1] + (7,)))
        R0 = rotations.quat_to_matrix(qj[..., 3:7])
        out[..., :3] = qj[..., :3] + np.matmul(R0, step[..., :3, 3, None])[..., 0]
        out[..., 3:7] = _quat_times_exp(qj[..., 3:7], vj[..., 3:])
        return out
    if kind == JointKind.PLANAR:
        twist = np.zeros(vj.shape[:-1] + (6,))
        twist[..., 0:2] = vj[..., 0:2]
        twist[..., 5] = vj[..., 2]
        step = spatial.se3_exp(twist)
        dx, dy = _planar_translation(qj[..., 2], step[..., 0, 3], step[..., 1, 3])
        return np.stack([qj[..., 0] + dx, qj[..., 1] + dy, qj[..., 2] + vj[..., 2]], axis=-1)
    return qj + vj


def difference(kind, q0j, q1j):
    """The velocity v_j with q0_j ⊕ v_j = q1_j.

    Angles and lengths subtract.  On the rotation groups the answer is the
    logarithm of the relative motion, rotation angle in [0, pi] (for a planar
    joint the heading change is wrapped to [-pi, pi], so q0 ⊕ v = q1 up to
    whole turns of the heading)."""
    if kind == JointKind.SPHERICAL:
        rel = rotations.quat_multiply(rotations.quat_conjugate(_unit(q0j)), _unit(q1j))
        return rotations.so3_log(rotations.quat_to_matrix(rel))
    if kind in (JointKind.FREE, JointKind.PLANAR):
        M0 = transform(kind, None, _normalized(kind, q0j))
        M1 = transform(kind, None, _normalized(kind, q1j))
        twist = spatial.se3_log(spatial.se3_compose(spatial.se3_inverse(M0), M1))
        return twist if kind == JointKind.FREE else twist[..., [0, 1, 5]]
    return q1j - q0j


def _normalized(kind, qj):
    if kind not in QUATERNION_OFFSET:
        return qj
    k = QUATERNION_OFFSET[kind]
    out = qj.copy()
    out[..., k:k + 4] = _unit(qj[..., k:k + 4])
    return out


def normalize(kind, qj):
    """q_j with its quaternion (if any) scaled to unit norm."""
    return _normalized(kind, qj)


# ------------------------------------------------------------------------------------------
# Per-model table
# ------------------------------------------------------------------------------------------
class JointTable:
    """Constants of a model for the reference algorithms, as plain Python lists
    indexed by body (reading a list item is cheaper than slicing model arrays)."""

    def __init__(self, model):
        nb = model.nbodies
        self.nbodies, self.nq, self.nv = nb, model.nq, model.nv
        self.parents = [int(p) for p in model.parents]
        self.kinds = [JointKind(int(k)) for k in model.joint_kinds]
        self.axes = [np.array(a) for a in model.joint_axes]
        self.placements = [np.array(M) for M in model.joint_placements]
        self.inertias = [np.array(Y) for Y in model.inertias]
        self.masses = [float(Y[0]) for Y in model.inertias]
        self.total_mass = float(sum(self.masses))
        self.nv_of = [int(n) for n in model.joint_nv]
        self.q_slices = [slice(int(s), int(s + n)) for s, n in zip(model.q_idx, model.joint_nq)]
        self.v_slices = [slice(int(s), int(s + n)) for s, n in zip(model.v_idx, model.joint_nv)]
        self.subspaces = [motion_subspace(k, a) for k, a in zip(self.kinds, self.axes)]
        # center of mass of each body in its own frame (0 for a massless body)
        self.coms = [Y[1:4] / Y[0] if Y[0] > 0 else np.zeros(3) for Y in self.inertias]
        # ancestors[i]: the bodies from the root down to i, i included
        self.ancestors = []
        for i, p in enumerate(self.parents):
            self.ancestors.append((self.ancestors[p] if p >= 0 else []) + [i])
        # support[i]: the velocity indices of the ancestors' joints, i's own last
        self.support = [np.concatenate([np.arange(self.v_slices[j].start, self.v_slices[j].stop)
                                        for j in chain]).astype(np.intp)
                        for chain in self.ancestors]
        # Joints whose q and v are plain vectors (revolute, prismatic), handled all at once.
        vector = [i for i, k in enumerate(self.kinds) if k not in _MANIFOLD_KINDS]
        self.vector_q = np.array([self.q_slices[i].start for i in vector], dtype=np.intp)
        self.vector_v = np.array([self.v_slices[i].start for i in vector], dtype=np.intp)
        self.manifold_bodies = [i for i, k in enumerate(self.kinds) if k in _MANIFOLD_KINDS]
        self.frame_parents = [int(b) for b in model.frame_parents]
        self.frame_placements = [np.array(M) for M in model.frame_placements]
        for arrays in (self.axes, self.placements, self.inertias, self.coms, self.support,
                       self.frame_placements, [self.vector_q, self.vector_v]):
            for arr in arrays:
                arr.setflags(write=False)


_MANIFOLD_KINDS = (JointKind.SPHERICAL, JointKind.PLANAR, JointKind.FREE)
_CACHE_ATTRIBUTE = "_reference_joint_table"


def joint_table(model):
    """The ``JointTable`` of ``model``, built on first use and kept on the model
    (its arrays are read-only, so the table never goes stale)."""
    table = model.__dict__.get(_CACHE_ATTRIBUTE)
    if table is None:
        table = JointTable(model)
        setattr(model, _CACHE_ATTRIBUTE, table)
    return table
