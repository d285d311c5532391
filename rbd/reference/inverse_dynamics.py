"""RNEA written on scalar components: one code path for one sample and for a batch.

Every spatial quantity is held as a tuple of its scalar components (a rotation
as 9 numbers, row-major; a translation as 3; a motion or force as 6, linear
first).  For one sample the components are Python floats, which costs far less
than NumPy calls on 3-vectors; for a batch each component is a 1-D array over
the samples, so every formula below is one vectorized operation over the
batch.  The passes are those of the Pinocchio cheat sheet: the
parent-from-child transform of each body is stored, motions go down the tree
with its inverse action and forces come back up with its force action; the
velocity-product force is the cheap ``v x* (Y v)``.
"""
import math

import numpy as np

from .._checks import model_arrays
from ..model import JointKind

_BASIS = {JointKind.REVOLUTE_X: 0, JointKind.REVOLUTE_Y: 1, JointKind.REVOLUTE_Z: 2}
_CACHE_ATTRIBUTE = "_reference_rnea_constants"
_BLOCK = 4096  # samples per vectorized block (measured: larger blocks spill out of cache)


class _Body:
    """The constants of one body as Python floats."""

    def __init__(self, model, i):
        self.kind = JointKind(int(model.joint_kinds[i]))
        self.parent = int(model.parents[i])
        self.q0, self.v0 = int(model.q_idx[i]), int(model.v_idx[i])
        P = model.joint_placements[i]
        self.R0 = tuple(P[:3, :3].ravel().tolist())  # parent-from-joint placement
        self.p0 = tuple(P[:3, 3].tolist())
        self.axis = tuple(model.joint_axes[i].tolist())
        self.R0_axis = tuple((P[:3, :3] @ model.joint_axes[i]).tolist())
        Y = model.inertias[i].tolist()
        self.mass, self.h, self.I = Y[0], tuple(Y[1:4]), tuple(Y[4:10])
        self.basis = _BASIS.get(self.kind)


def _constants(model):
    bodies = model.__dict__.get(_CACHE_ATTRIBUTE)
    if bodies is None:
        bodies = [_Body(model, i) for i in range(model.nbodies)]
        setattr(model, _CACHE_ATTRIBUTE, bodies)
    return bodies


# ------------------------------------------------------------------------------------------
# Small formulas on component tuples
# ------------------------------------------------------------------------------------------
def _matmul(A, B):
    a0, a1, a2, a3, a4, a5, a6, a7, a8 = A
    b0, b1, b2, b3, b4, b5, b6, b7, b8 = B
    return (a0 * b0 + a1 * b3 + a2 * b6, a0 * b1 + a1 * b4 + a2 * b7, a0 * b2 + a1 * b5 + a2 * b8,
            a3 * b0 + a4 * b3 + a5 * b6, a3 * b1 + a4 * b4 + a5 * b7, a3 * b2 + a4 * b5 + a5 * b8,
            a6 * b0 + a7 * b3 + a8 * b6, a6 * b1 + a7 * b4 + a8 * b7, a6 * b2 + a7 * b5 + a8 * b8)


def _rotate(R, x, y, z):
    return (R[0] * x + R[1] * y + R[2] * z, R[3] * x + R[4] * y + R[5] * z, R[6] * x + R[7] * y + R[8] * z)


def _quat_rotation(w, x, y, z, sqrt):
    n = 1.0 / sqrt(w * w + x * x + y * y + z * z)
    w, x, y, z = w * n, x * n, y * n, z * n
    return (1.0 - 2.0 * (y * y + z * z), 2.0 * (x * y - w * z), 2.0 * (x * z + w * y),
            2.0 * (x * y + w * z), 1.0 - 2.0 * (x * x + z * z), 2.0 * (y * z - w * x),
            2.0 * (x * z - w * y), 2.0 * (y * z + w * x), 1.0 - 2.0 * (x * x + y * y))


def _basis_rotated(R0, k, c, s):
    """R0 @ (rotation by (c, s) about basis axis k): two columns of R0 mix."""
    i, j = (k + 1) % 3, (k + 2) % 3
    out = list(R0)
    for r in (0, 3, 6):
        ci, cj = R0[r + i], R0[r + j]
        out[r + i] = c * ci + s * cj
        out[r + j] = c * cj - s * ci
    return tuple(out)


def _axis_rotation(u, c, s):
    """Rodrigues: c I + s [u]x + (1 - c) u u^T for a unit axis u."""
    x, y, z = u
    t = 1.0 - c
    return (c + t * x * x, t * x * y - s * z, t * x * z + s * y,
            t * x * y + s * z, c + t * y * y, t * y * z - s * x,
            t * x * z - s * y, t * y * z + s * x, c + t * z * z)


def _placement(body, q, trig):
    """(R, p) of the parent-from-body transform at the configuration q."""
    cos, sin, sqrt = trig
    kind, R0, p0, k = body.kind, body.R0, body.p0, body.q0
    if body.basis is not None:
        t = q[k]
        return _basis_rotated(R0, body.basis, cos(t), sin(t)), p0
    if kind == JointKind.REVOLUTE:
        t = q[k]
        return _matmul(R0, _axis_rotation(body.axis, cos(t), sin(t))), p0
    if kind == JointKind.PRISMATIC:
        t = q[k]
        u = body.R0_axis
        return R0, (p0[0] + t * u[0], p0[1] + t * u[1], p0[2] + t * u[2])
    if kind == JointKind.SPHERICAL:
        return _matmul(R0, _quat_rotation(q[k], q[k + 1], q[k + 2], q[k + 3], sqrt)), p0
    if kind == JointKind.PLANAR:
        x, y, t = q[k], q[k + 1], q[k + 2]
        d = _rotate(R0, x, y, 0.0)
        return _basis_rotated(R0, 2, cos(t), sin(t)), (p0[0] + d[0], p0[1] + d[1], p0[2] + d[2])
    # FREE
    d = _rotate(R0, q[k], q[k + 1], q[k + 2])
    R = _matmul(R0, _quat_rotation(q[k + 3], q[k + 4], q[k + 5], q[k + 6], sqrt))
    return R, (p0[0] + d[0], p0[1] + d[1], p0[2] + d[2])


def _inv_act_motion(R, p, m):
    """X^-1 m = [R^T (v - p x w); R^T w]."""
    v0, v1, v2, w0, w1, w2 = m
    p0, p1, p2 = p
    d0, d1, d2 = v0 - (p1 * w2 - p2 * w1), v1 - (p2 * w0 - p0 * w2), v2 - (p0 * w1 - p1 * w0)
    return (R[0] * d0 + R[3] * d1 + R[6] * d2, R[1] * d0 + R[4] * d1 + R[7] * d2,
            R[2] * d0 + R[5] * d1 + R[8] * d2, R[0] * w0 + R[3] * w1 + R[6] * w2,
            R[1] * w0 + R[4] * w1 + R[7] * w2, R[2] * w0 + R[5] * w1 + R[8] * w2)


def _act_force(R, p, f):
    """X* f = [R f; R n + p x (R f)]."""
    f0, f1, f2 = _rotate(R, f[0], f[1], f[2])
    n0, n1, n2 = _rotate(R, f[3], f[4], f[5])
    p0, p1, p2 = p
    return (f0, f1, f2, n0 + p1 * f2 - p2 * f1, n1 + p2 * f0 - p0 * f2, n2 + p0 * f1 - p1 * f0)


def _joint_motion(body, x):
    """S x_j as a 6-tuple (x: joint velocity or acceleration components)."""
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
    return tuple(x[k:k + 6])


def _motion_cross(m, n):
    """m x n = [w x v' + v x w'; w x w']."""
    v0, v1, v2, w0, w1, w2 = m
    a0, a1, a2, b0, b1, b2 = n
    return (w1 * a2 - w2 * a1 + v1 * b2 - v2 * b1, w2 * a0 - w0 * a2 + v2 * b0 - v0 * b2,
            w0 * a1 - w1 * a0 + v0 * b1 - v1 * b0, w1 * b2 - w2 * b1, w2 * b0 - w0 * b2, w0 * b1 - w1 * b0)


def _inertia_apply(body, m):
    """Y m = [mass v - h x w; h x v + I w] (inertia about the body origin)."""
    v0, v1, v2, w0, w1, w2 = m
    h0, h1, h2 = body.h
    xx, xy, xz, yy, yz, zz = body.I
    mass = body.mass
    return (mass * v0 - (h1 * w2 - h2 * w1), mass * v1 - (h2 * w0 - h0 * w2), mass * v2 - (h0 * w1 - h1 * w0),
            h1 * v2 - h2 * v1 + xx * w0 + xy * w1 + xz * w2,
            h2 * v0 - h0 * v2 + xy * w0 + yy * w1 + yz * w2,
            h0 * v1 - h1 * v0 + xz * w0 + yz * w1 + zz * w2)


def _body_force(body, acc, twist):
    """Y a + v x* (Y v): the force the body needs (v x* f = [w x f; v x f + w x n])."""
    v0, v1, v2, w0, w1, w2 = twist
    f0, f1, f2, n0, n1, n2 = _inertia_apply(body, twist)
    a0, a1, a2, b0, b1, b2 = _inertia_apply(body, acc)
    return (a0 + w1 * f2 - w2 * f1, a1 + w2 * f0 - w0 * f2, a2 + w0 * f1 - w1 * f0,
            b0 + v1 * f2 - v2 * f1 + w1 * n2 - w2 * n1, b1 + v2 * f0 - v0 * f2 + w2 * n0 - w0 * n2,
            b2 + v0 * f1 - v1 * f0 + w0 * n1 - w1 * n0)


def _add(a, b):
    return (a[0] + b[0], a[1] + b[1], a[2] + b[2], a[3] + b[3], a[4] + b[4], a[5] + b[5])


def _add_joint_motion(m, body, x):
    """m + S x_j (x: joint velocity or acceleration components)."""
    if body.basis is not None:  # the common case: one component changes
        out = list(m)
        out[3 + body.basis] = out[3 + body.basis] + x[body.v0]
        return tuple(out)
    return _add(m, _joint_motion(body, x))


def _joint_force(body, f):
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
    return list(f)


# ------------------------------------------------------------------------------------------
# The passes
# ------------------------------------------------------------------------------------------
def _passes(bodies, gravity, q, v, a, fext, trig):
    """tau as a list of components; v, a, fext may be None (zero)."""
    n = len(bodies)
    placements, twists, accs, forces = [None] * n, [None] * n, [None] * n, [None] * n
    world_acc = (-gravity[0], -gravity[1], -gravity[2], 0.0, 0.0, 0.0) if gravity is not None else None
    for i, body in enumerate(bodies):
        R, p = placements[i] = _placement(body, q, trig)
        parent = body.parent
        parent_acc = world_acc if parent < 0 else accs[parent]
        acc = _inv_act_motion(R, p, parent_acc) if parent_acc is not None else (0.0,) * 6
        if a is not None:
            acc = _add_joint_motion(acc, body, a)
        if v is not None:
            joint_twist = _joint_motion(body, v)
            twist = joint_twist if parent < 0 else _add(_inv_act_motion(R, p, twists[parent]), joint_twist)
            twists[i] = twist
            acc = _add(acc, _motion_cross(twist, joint_twist))  # S is constant in the body frame
            f = _body_force(body, acc, twist)
        else:
            f = _inertia_apply(body, acc)
        accs[i] = acc
        if fext is not None:
            e = fext[i]
            f = (f[0] - e[0], f[1] - e[1], f[2] - e[2], f[3] - e[3], f[4] - e[4], f[5] - e[5])
        forces[i] = f
    tau = [None] * n
    for i in range(n - 1, -1, -1):
        body = bodies[i]
        tau[i] = _joint_force(body, forces[i])
        if body.parent >= 0:
            R, p = placements[i]
            forces[body.parent] = _add(forces[body.parent], _act_force(R, p, forces[i]))
    return [x for joint in tau for x in joint]


def _trig(batched):
    return (np.cos, np.sin, np.sqrt) if batched else (math.cos, math.sin, math.sqrt)


def inverse_dynamics(model, q, v, a, fext, with_gravity=True):
    """tau (..., nv) for validated arrays (v, a, fext may be None for zero)."""
    batch, (q, v, a, fext) = model_arrays(model, q=q, v=v, a=a, fext=fext)
    bodies = _constants(model)
    gravity = model.gravity.tolist() if with_gravity else None
    if batch == ():
        tau = _passes(bodies, gravity, q.tolist(), None if v is None else v.tolist(),
                      None if a is None else a.tolist(), None if fext is None else fext.tolist(), _trig(False))
        return np.array(tau, dtype=float).reshape(model.nv)
    # One row per component, samples along the row (contiguous rows: fast vector ops),
    # in blocks small enough that the rows stay in cache across the passes.
    n = int(np.prod(batch))
    widths = (model.nq, model.nv, model.nv, 6 * model.nbodies)
    flat = [None if x is None else x.reshape((n, w)) for x, w in zip((q, v, a, fext), widths)]
    out = np.empty((n, model.nv))
    for start in range(0, n, _BLOCK):
        block = slice(start, start + _BLOCK)
        rows = [None if x is None else np.ascontiguousarray(x[block].T) for x in flat]
        if rows[3] is not None:
            rows[3] = rows[3].reshape(model.nbodies, 6, -1)
        tau = _passes(bodies, gravity, *rows, _trig(True))
        for k, component in enumerate(tau):
            out[block, k] = component
    return out.reshape(batch + (model.nv,))
