"""Joint configuration spaces: neutral, integrate (exp map), difference (log
map) and normalize for each joint kind.

The kinds and their coordinates are described in ``rbd.model``; each joint's
placement and motion subspace, which the algorithms use, are in
``_components``.  Every function here works on ONE joint's coordinates with
any leading batch dimensions, ``qj`` of shape ``(..., nq_j)`` and ``vj`` of
shape ``(..., nv_j)``.

``JointTable`` gathers the per-model constants the configuration functions
need (coordinate slices, which joints are on a manifold); ``joint_table(model)``
builds it once per model and caches it on the model.
"""
import numpy as np

from .. import rotations, spatial
from ..model import ANGLE, JOINT_DIMENSIONS, JOINT_KINDS, LENGTH, QUATERNION, JointKind  # noqa: F401


# What each configuration coordinate is, and where quaternions start: from the kind table.
COORDINATE_ROLES = {kind: spec.roles for kind, spec in JOINT_KINDS.items()}
QUATERNION_OFFSET = {kind: spec.quaternion for kind, spec in JOINT_KINDS.items() if spec.quaternion >= 0}


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


# Kinds whose coordinates form a vector space: q (+) v = q + v.
_VECTOR_KINDS = (JointKind.REVOLUTE_X, JointKind.REVOLUTE_Y, JointKind.REVOLUTE_Z, JointKind.REVOLUTE,
                 JointKind.PRISMATIC)


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
    if kind in _VECTOR_KINDS:
        return qj + vj
    raise ValueError("joint kind %r has no integrate formula" % (kind,))


def _pose(kind, qj):
    """The (..., 4, 4) joint transform of a free-flyer or planar joint."""
    out = np.zeros(qj.shape[:-1] + (4, 4))
    out[..., 3, 3] = 1.0
    if kind == JointKind.FREE:
        out[..., :3, :3] = rotations.quat_to_matrix(qj[..., 3:7])
        out[..., :3, 3] = qj[..., :3]
    else:  # planar: rotation about z by the heading, translation in the plane
        c, s = np.cos(qj[..., 2]), np.sin(qj[..., 2])
        out[..., 0, 0] = out[..., 1, 1] = c
        out[..., 1, 0], out[..., 0, 1] = s, -s
        out[..., 2, 2] = 1.0
        out[..., 0, 3], out[..., 1, 3] = qj[..., 0], qj[..., 1]
    return out


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
        M0 = _pose(kind, _normalized(kind, q0j))
        M1 = _pose(kind, _normalized(kind, q1j))
        twist = spatial.se3_log(spatial.se3_compose(spatial.se3_inverse(M0), M1))
        return twist if kind == JointKind.FREE else twist[..., [0, 1, 5]]
    if kind in _VECTOR_KINDS:
        return q1j - q0j
    raise ValueError("joint kind %r has no difference formula" % (kind,))


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
        self.nbodies, self.nq, self.nv = model.nbodies, model.nq, model.nv
        self.kinds = [JointKind(int(k)) for k in model.joint_kinds]
        self.q_slices = [slice(int(s), int(s + n)) for s, n in zip(model.q_idx, model.joint_nq)]
        self.v_slices = [slice(int(s), int(s + n)) for s, n in zip(model.v_idx, model.joint_nv)]
        # Joints whose q and v are plain vectors (revolute, prismatic), handled all at once.
        vector = [i for i, k in enumerate(self.kinds) if k not in _MANIFOLD_KINDS]
        self.vector_q = np.array([self.q_slices[i].start for i in vector], dtype=np.intp)
        self.vector_v = np.array([self.v_slices[i].start for i in vector], dtype=np.intp)
        self.manifold_bodies = [i for i, k in enumerate(self.kinds) if k in _MANIFOLD_KINDS]
        for arr in (self.vector_q, self.vector_v):
            arr.setflags(write=False)


_MANIFOLD_KINDS = (JointKind.SPHERICAL, JointKind.PLANAR, JointKind.FREE)


def joint_table(model):
    """The ``JointTable`` of ``model``, built on first use and kept on the model
    (its arrays are read-only, so the table never goes stale)."""
    table = model._cache.joint_table
    if table is None:
        table = model._cache.joint_table = JointTable(model)
    return table
