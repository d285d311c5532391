"""Every joint kind of the NumPy backend, in one place (as ``rbd_c/_joints.pxd`` for
the compiled one): how each kind places its body and how its motion subspace acts
(on scalar components, for the algorithms), and its configuration space: neutral,
integrate (exp map), difference (log map), normalize, and the tangent-space
Jacobians of integrate and difference.

The kinds and their coordinates are the table ``rbd.model.JOINT_KINDS``.  The
configuration functions work on ONE joint's coordinates with any leading batch
dimensions, ``qj`` of shape ``(..., nq_j)`` and ``vj`` of shape ``(..., nv_j)``;
the component functions on a ``Body`` of ``_components`` and whole vectors.

``JointTable`` gathers the per-model constants the configuration functions
need (coordinate slices, which joints are on a manifold); ``joint_table(model)``
builds it once per model and caches it on the model.
"""
from math import factorial

import numpy as np

from .. import rotations, spatial
from . import _components as sc  # spatial algebra on scalar components
from ..model import ANGLE, JOINT_DIMENSIONS, JOINT_KINDS, LENGTH, QUATERNION, JointKind  # noqa: F401


# What each configuration coordinate is, and where quaternions start: from the kind table.
COORDINATE_ROLES = {kind: spec.roles for kind, spec in JOINT_KINDS.items()}
QUATERNION_OFFSET = {kind: spec.quaternion for kind, spec in JOINT_KINDS.items() if spec.quaternion >= 0}


# ------------------------------------------------------------------------------------------
# Configuration space of one joint
# ------------------------------------------------------------------------------------------
# The formulas call the unchecked kernels of rbd.rotations and rbd.spatial (the underscore
# names): the public functions would check every intermediate value again, and the
# algorithms check their inputs and results whole.
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
    return _unit(rotations._multiply(quat, rotations._rotvec_to_quat(w)))


def _translation_step(twist):
    """The translation of exp(twist), J_l(ω) v: the body-frame step of a free or planar joint."""
    return np.matmul(rotations._left_jacobian(twist[..., 3:]), twist[..., :3, None])[..., 0]


def _planar_step(vx, vy, w):
    """The body-frame translation (tx, ty) of the SE(2) exponential of (vx, vy, w):
    [[a, -b], [b, a]] (vx, vy) with a = sin(w)/w, b = (1 - cos w)/w = 2 sin^2(w/2)/w, in a
    form that keeps its digits at any turn (the 3-D left Jacobian's I + c S^2 cancels at
    large w: 0.16 off at w = 1e15)."""
    small = np.abs(w) < 1e-8
    safe = np.where(small, 1.0, w)
    a = np.where(small, 1.0 - w * w / 6.0, np.sin(w) / safe)
    b = np.where(small, 0.5 * w, 2.0 * np.sin(0.5 * w) ** 2 / safe)
    return a * vx - b * vy, b * vx + a * vy


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
        step = _translation_step(vj)
        out = np.empty(np.broadcast_shapes(qj.shape, vj.shape[:-1] + (7,)))
        R0 = rotations._quat_to_matrix(_unit(qj[..., 3:7]))
        out[..., :3] = qj[..., :3] + np.matmul(R0, step[..., None])[..., 0]
        out[..., 3:7] = _quat_times_exp(qj[..., 3:7], vj[..., 3:])
        return out
    if kind == JointKind.PLANAR:
        tx, ty = _planar_step(vj[..., 0], vj[..., 1], vj[..., 2])
        dx, dy = _planar_translation(qj[..., 2], tx, ty)
        return np.stack([qj[..., 0] + dx, qj[..., 1] + dy, qj[..., 2] + vj[..., 2]], axis=-1)
    if kind in _VECTOR_KINDS:
        return qj + vj
    raise ValueError("joint kind %r has no integrate formula" % (kind,))


def _pose(kind, qj):
    """The (..., 4, 4) joint transform of a free-flyer or planar joint."""
    out = np.zeros(qj.shape[:-1] + (4, 4))
    out[..., 3, 3] = 1.0
    if kind == JointKind.FREE:
        out[..., :3, :3] = rotations._quat_to_matrix(qj[..., 3:7])
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
        rel = rotations._multiply(rotations._conjugate(_unit(q0j)), _unit(q1j))
        return rotations._quat_to_rotvec(_unit(rel))
    if kind in (JointKind.FREE, JointKind.PLANAR):
        M0 = _pose(kind, _normalized(kind, q0j))
        M1 = _pose(kind, _normalized(kind, q1j))
        R0t = np.swapaxes(M0[..., :3, :3], -1, -2)  # M0^-1 M1 = [R0^T R1, R0^T (t1 - t0)]
        twist = spatial._se3_log(np.matmul(R0t, M1[..., :3, :3]),
                                 np.matmul(R0t, (M1[..., :3, 3] - M0[..., :3, 3])[..., None])[..., 0])
        return twist if kind == JointKind.FREE else twist[..., [0, 1, 5]]
    if kind in _VECTOR_KINDS:
        return q1j - q0j
    raise ValueError("joint kind %r has no difference formula" % (kind,))


# ------------------------------------------------------------------------------------------
# Tangent-space Jacobians of integrate and difference
# ------------------------------------------------------------------------------------------
# (theta^2 + 2 cos theta - 2) / (2 theta^4) and (2 theta - 3 sin theta + theta cos theta) / (2 theta^5),
# Barfoot's coefficients of the SE(3) Jacobian's coupling block, as even power series below
# rotations._SERIES_ANGLE (their closed forms cancel near 0); above, the block is expanded
# about the unit axis (rotations._exp_terms), with c2 t^2 = 1/2 - (1 - cos t)/t^2 and
# c3 t^3 = (2 + cos t - 3 sin t / t) / (2t).
_C2_SERIES = [(-1) ** k / factorial(2 * k + 4) for k in range(9)]
_C3_SERIES = [(-1) ** k * (k + 1) / factorial(2 * k + 5) for k in range(9)]


def _se3_left_jacobian(twist, inverse=False):
    """The left Jacobian of SE(3) (..., 6, 6) at the twist [rho; phi] (linear first), or its
    inverse: [[J, Q], [0, J]] with J the SO(3) left Jacobian of phi and Q Barfoot's coupling
    block, Q = X/2 + q0 (PX + XP) + q1 PXP + q2 (PPX + XPP - 3 PXP) + q3 (PXPP + PPXP) with
    P = [x]x about rotations._exp_terms' axis x and X = [rho]x; the inverse is
    [[J^-1, -J^-1 Q J^-1], [0, J^-1]], finite for |phi| < 2 pi.  The right Jacobian is the
    left one at -twist."""
    rho, phi = twist[..., :3], twist[..., 3:]
    theta, x, k = rotations._exp_terms(phi)
    series = theta < rotations._SERIES_ANGLE
    t = np.where(series, 1.0, theta)
    t2 = np.where(series, theta * theta, 0.0)
    q = [np.where(series, k[..., 4], k[..., 4] / t), k[..., 4],
         np.where(series, rotations._even_series(_C2_SERIES, t2), 0.5 - k[..., 3] / t),
         np.where(series, rotations._even_series(_C3_SERIES, t2), (2.0 + np.cos(t) - 3.0 * k[..., 0]) / (2.0 * t))]
    P, X = rotations._skew(x), rotations._skew(rho)
    PX, XP = P @ X, X @ P
    PXP = PX @ P
    q0, q1, q2, q3 = (c[..., None, None] for c in q)
    Q = 0.5 * X + q0 * (PX + XP) + q1 * PXP + q2 * (P @ PX + XP @ P - 3.0 * PXP) + q3 * (PXP @ P + P @ PXP)
    if inverse:
        J = rotations._left_jacobian_inverse(phi)
        Q = -J @ Q @ J
    else:
        J = rotations._left_jacobian_of_terms(x, k)
    out = np.zeros(twist.shape[:-1] + (6, 6))
    out[..., :3, :3] = out[..., 3:, 3:] = J
    out[..., :3, 3:] = Q
    return out


def _group_twist(kind, vj):
    """A joint on a group (spherical, planar, free) moves in a subgroup of SE(3) whose
    Lie algebra is spanned by the unit columns of S: vj as a body twist (..., 6), and the
    indices of its rows and columns in SE(3)'s 6x6 matrices (SE(3)'s Jacobians map that
    algebra to itself, so the joint's Jacobians are those rows and columns)."""
    axes = list(JOINT_KINDS[kind].columns)
    twist = np.zeros(vj.shape[:-1] + (6,))
    twist[..., axes] = vj
    return twist, np.ix_(axes, axes)


def integrate_jacobians(kind, qj, vj):
    """(d_dq, d_dv), each (..., nv_j, nv_j): the Jacobians of q_j ⊕ v_j in the tangent space,
    (q ⊕ dq) ⊕ (v + dv) = (q ⊕ v) ⊕ (d_dq dq + d_dv dv) to first order.

    On a group (q ⊕ v = M exp(v)): d_dq = Ad(exp(-v)) (exp(v)^T for a spherical joint) and
    d_dv = J_r(v), the right Jacobian; the kinds that add have 1 and 1."""
    if kind in _MANIFOLD_KINDS:
        twist, block = _group_twist(kind, vj)
        step_back = spatial._se3_exp(-twist)
        d_dq = spatial._adjoint(step_back[..., :3, :3], step_back[..., :3, 3])
        d_dv = _se3_left_jacobian(-twist)
        return d_dq[(...,) + block], d_dv[(...,) + block]
    if kind in _VECTOR_KINDS:
        one = np.ones(np.broadcast_shapes(qj.shape[:-1], vj.shape[:-1]) + (1, 1))
        return one, one.copy()
    raise ValueError("joint kind %r has no integrate formula" % (kind,))


def difference_jacobians(kind, q0j, q1j):
    """(d_dq0, d_dq1), each (..., nv_j, nv_j): the Jacobians of v = difference(q0_j, q1_j)
    for q0 ⊕ dq0 and q1 ⊕ dq1.

    On a group (v = log(M0^-1 M1)): d_dq1 = J_r(v)^-1 and d_dq0 = -J_l(v)^-1; the kinds
    that add have -1 and 1.  At a rotation angle of pi the logarithm jumps (v and -v
    reach the same pose); these are the one-sided Jacobians at the v ``difference``
    returns, and stay finite there."""
    if kind in _MANIFOLD_KINDS:
        twist, block = _group_twist(kind, difference(kind, q0j, q1j))
        return -_se3_left_jacobian(twist, True)[(...,) + block], _se3_left_jacobian(-twist, True)[(...,) + block]
    if kind in _VECTOR_KINDS:
        one = np.ones(np.broadcast_shapes(q0j.shape[:-1], q1j.shape[:-1]) + (1, 1))
        return -one, one
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


# ------------------------------------------------------------------------------------------
# Placement and motion subspace, on scalar components (see _components)
# ------------------------------------------------------------------------------------------
def subspace(kind, spec, axis):
    """The columns of the motion subspace S in the body frame: the index k of a
    unit motion e_k, or a 6-tuple.  (S is constant in the body frame.)"""
    if spec.columns:
        return list(spec.columns)
    if kind == JointKind.REVOLUTE:
        return [(0.0, 0.0, 0.0) + axis]
    if kind == JointKind.PRISMATIC:
        return [axis + (0.0, 0.0, 0.0)]
    raise ValueError("joint kind %s has neither unit columns nor an axis column" % kind.name)


def _unknown(kind):
    """A kind without a branch here: an error, never another kind's formula."""
    return ValueError("joint kind %r has no formula in rbd.reference" % (kind,))


def placement(body, q, trig):
    """(R, p) of the parent-from-body transform at the configuration q."""
    cos, sin, sqrt = trig
    kind, R0, p0, k = body.kind, body.R0, body.p0, body.q0
    if body.basis is not None:
        t = q[k]
        return sc._basis_rotated(R0, body.basis, cos(t), sin(t)), p0
    if kind == JointKind.REVOLUTE:
        t = q[k]
        return sc._matmul(R0, sc._axis_rotation(body.axis, cos(t), sin(t))), p0
    if kind == JointKind.PRISMATIC:
        t = q[k]
        u = body.R0_axis
        return R0, (p0[0] + t * u[0], p0[1] + t * u[1], p0[2] + t * u[2])
    if kind == JointKind.SPHERICAL:
        return sc._matmul(R0, sc._quat_rotation(q[k], q[k + 1], q[k + 2], q[k + 3], sqrt)), p0
    if kind == JointKind.PLANAR:
        x, y, t = q[k], q[k + 1], q[k + 2]
        d = sc._rotate(R0, x, y, 0.0)
        return sc._basis_rotated(R0, 2, cos(t), sin(t)), (p0[0] + d[0], p0[1] + d[1], p0[2] + d[2])
    if kind != JointKind.FREE:
        raise _unknown(kind)
    d = sc._rotate(R0, q[k], q[k + 1], q[k + 2])
    R = sc._matmul(R0, sc._quat_rotation(q[k + 3], q[k + 4], q[k + 5], q[k + 6], sqrt))
    return R, (p0[0] + d[0], p0[1] + d[1], p0[2] + d[2])


def joint_motion(body, x):
    """S x_j as a 6-tuple (x: joint velocity or acceleration components, whole vector)."""
    kind, k = body.kind, body.v0
    if body.basis is not None:
        m = [0.0] * 6
        m[3 + body.basis] = x[k]
        return tuple(m)
    if kind == JointKind.REVOLUTE:
        t, u = x[k], body.axis
        return (0.0, 0.0, 0.0, t * u[0], t * u[1], t * u[2])
    if kind == JointKind.PRISMATIC:
        t, u = x[k], body.axis
        return (t * u[0], t * u[1], t * u[2], 0.0, 0.0, 0.0)
    if kind == JointKind.SPHERICAL:
        return (0.0, 0.0, 0.0, x[k], x[k + 1], x[k + 2])
    if kind == JointKind.PLANAR:
        return (x[k], x[k + 1], 0.0, 0.0, 0.0, x[k + 2])
    if kind == JointKind.FREE:
        return tuple(x[k:k + 6])
    raise _unknown(kind)


def add_joint_motion(m, body, x):
    """m + S x_j (x: joint velocity or acceleration components, whole vector)."""
    if body.basis is not None:  # the common case: one component changes
        out = list(m)
        out[3 + body.basis] = out[3 + body.basis] + x[body.v0]
        return tuple(out)
    return sc.add(m, joint_motion(body, x))


def world_motions(body, R, p):
    """The columns of Ad_X S for the body's placement X = (R, p) (in the world: the
    world-frame motions of the joint's unit velocities), as 6-tuples."""
    if body.basis is not None:  # S = e_(3+k): the column k of R, moved by p
        k = body.basis
        w0, w1, w2 = R[k], R[3 + k], R[6 + k]
        p0, p1, p2 = p
        return [(p1 * w2 - p2 * w1, p2 * w0 - p0 * w2, p0 * w1 - p1 * w0, w0, w1, w2)]
    return [sc.act_motion(R, p, s) for s in body.motions]


def joint_force(body, f):
    """S^T f: the joint's generalized forces, as a list."""
    kind = body.kind
    if body.basis is not None:
        return [f[3 + body.basis]]
    if kind == JointKind.REVOLUTE:
        u = body.axis
        return [u[0] * f[3] + u[1] * f[4] + u[2] * f[5]]
    if kind == JointKind.PRISMATIC:
        u = body.axis
        return [u[0] * f[0] + u[1] * f[1] + u[2] * f[2]]
    if kind == JointKind.SPHERICAL:
        return list(f[3:])
    if kind == JointKind.PLANAR:
        return [f[0], f[1], f[5]]
    if kind == JointKind.FREE:
        return list(f)
    raise _unknown(kind)
