"""Configuration space: neutral, random, integrate (q ⊕ v), difference (q1 ⊖ q0), normalize,
and the tangent-space Jacobians of integrate and difference.

Revolute and prismatic coordinates are plain numbers (added all at once); the
joints on a manifold (spherical, planar, free flyer) go through
``joints.integrate`` / ``joints.difference``.  Batches are handled by NumPy
across all samples at each joint.
"""
import contextlib

import math

import numpy as np

from .._checks import (MAX_BATCH_DIMS, check_finite_result, check_model, model_arrays, overflow_error,
                       short_repr)
from . import joints


@contextlib.contextmanager
def _overflow_is_an_error():
    """On validated, finite arguments an intermediate inf or NaN can only come from
    overflow: the joint formulas' own checks (which would name an internal argument)
    and NumPy's warnings give way to the overflow error."""
    try:
        with np.errstate(over="ignore", invalid="ignore"):
            yield
    except ValueError:
        raise overflow_error() from None


def neutral(model):
    """The neutral configuration (nq,): zero angles and lengths, identity quaternions."""
    check_model(model)
    table = joints.joint_table(model)
    q = np.zeros(table.nq)
    for i in table.manifold_bodies:
        q[table.q_slices[i]] = joints.neutral(table.kinds[i])
    return q


def _bad_rng(rng):
    return "rng must be a numpy.random.Generator, a non-negative seed or None, got %s" % short_repr(rng)


def random_configuration(model, rng=None, batch=None):
    """A random configuration, or a batch of them with ``batch`` (an int or a shape).

    Each coordinate is uniform between its joint limits; a coordinate without
    limits is uniform in [-pi, pi] (angles) or [-1, 1] (lengths), and one with
    a single finite limit in a range of that width starting from it.
    Quaternions are uniform over rotations, stored with w >= 0.  ``rng`` is a
    ``numpy.random.Generator``, a seed, or None (fresh entropy).  With
    ``batch=None`` the draws are: one uniform per coordinate, then four normals
    per quaternion, in joint order.
    """
    check_model(model)
    if isinstance(rng, (bool, np.bool_)):  # (default_rng would take True as the seed 1)
        raise TypeError(_bad_rng(rng))
    if not isinstance(rng, np.random.Generator):
        try:
            rng = np.random.default_rng(rng)
        except (TypeError, ValueError) as exc:
            raise type(exc)("%s (%s)" % (_bad_rng(rng), exc)) from None
    if batch is None:
        shape = ()
    else:
        shape = (batch,) if np.ndim(batch) == 0 else tuple(batch)
        if not all(isinstance(n, (int, np.integer)) and not isinstance(n, (bool, np.bool_)) for n in shape):
            raise TypeError("batch must be a non-negative int or a tuple of them, got %s" % short_repr(batch))
        if not all(n >= 0 for n in shape):
            raise ValueError("batch must be a non-negative int or a tuple of them, got %s" % short_repr(batch))
        if len(shape) > MAX_BATCH_DIMS:
            raise ValueError("batch has %d dimensions; at most %d are supported" % (len(shape), MAX_BATCH_DIMS))
        shape = tuple(int(n) for n in shape)
        if math.prod(shape) * max(model.nq, 1) > np.iinfo(np.intp).max // 8:  # (NumPy: "array is too big")
            raise ValueError("batch %s of configurations of %d coordinates is too large for memory"
                             % (short_repr(batch), model.nq))
    table = joints.joint_table(model)
    half_width = np.ones(table.nq)
    quaternion_starts = []
    for i, kind in enumerate(table.kinds):
        start = table.q_slices[i].start
        for k, role in enumerate(joints.COORDINATE_ROLES[kind]):
            if role == joints.ANGLE:
                half_width[start + k] = np.pi
        if kind in joints.QUATERNION_OFFSET:
            quaternion_starts.append(start + joints.QUATERNION_OFFSET[kind])
    lower = np.asarray(model.lower_limits, dtype=np.float64)
    upper = np.asarray(model.upper_limits, dtype=np.float64)
    has_lo, has_hi = np.isfinite(lower), np.isfinite(upper)
    lo = np.where(has_lo, lower, np.where(has_hi, upper - 2.0 * half_width, -half_width))
    hi = np.where(has_hi, upper, np.where(has_lo, lower + 2.0 * half_width, half_width))
    u = rng.random(size=shape + (table.nq,))
    with np.errstate(over="ignore"):
        span = hi - lo  # (as rng.uniform(lo, hi) draws) ...
    wide = ~np.isfinite(span)  # ... except limits so far apart (±1e308) that their span overflows
    q = np.where(wide, lo * (1.0 - u) + hi * u, lo + np.where(wide, 0.0, span) * u)
    if quaternion_starts:
        quats = rng.normal(size=shape + (len(quaternion_starts), 4))
        quats /= np.linalg.norm(quats, axis=-1, keepdims=True)
        quats *= np.where(quats[..., :1] < 0.0, -1.0, 1.0)
        for n, start in enumerate(quaternion_starts):
            q[..., start:start + 4] = quats[..., n, :]
    return q


def integrate(model, q, v):
    """q ⊕ v: integrate the constant velocity v for unit time from q (..., nq)."""
    batch, (q, v) = model_arrays(model, q=q, v=v)
    table = joints.joint_table(model)
    out = q.copy()
    with _overflow_is_an_error():
        out[..., table.vector_q] += v[..., table.vector_v]
        for i in table.manifold_bodies:
            out[..., table.q_slices[i]] = joints.integrate(table.kinds[i], q[..., table.q_slices[i]],
                                                           v[..., table.v_slices[i]])
    return check_finite_result(out, 1)


def difference(model, q0, q1):
    """q1 ⊖ q0: the velocity v (..., nv) with q0 ⊕ v = q1."""
    batch, (q0, q1) = model_arrays(model, q0=q0, q1=q1)
    table = joints.joint_table(model)
    out = np.empty(batch + (table.nv,))
    with _overflow_is_an_error():
        out[..., table.vector_v] = q1[..., table.vector_q] - q0[..., table.vector_q]
        for i in table.manifold_bodies:
            s = table.q_slices[i]
            out[..., table.v_slices[i]] = joints.difference(table.kinds[i], q0[..., s], q1[..., s])
    return check_finite_result(out, 1)


def _block_diagonal(table, batch, vector_diagonals, joint_blocks):
    """Two (..., nv, nv) matrices that are zero but for each joint's diagonal block: the
    revolute and prismatic joints' 1x1 blocks are ``vector_diagonals`` (a pair of numbers),
    those of body i on a manifold the pair ``joint_blocks(i)``."""
    outs = (np.zeros(batch + (table.nv, table.nv)), np.zeros(batch + (table.nv, table.nv)))
    for out, diagonal in zip(outs, vector_diagonals):
        out[..., table.vector_v, table.vector_v] = diagonal
    with _overflow_is_an_error():
        for i in table.manifold_bodies:
            s = table.v_slices[i]
            for out, block in zip(outs, joint_blocks(i)):
                out[..., s, s] = block
    return tuple(check_finite_result(out, 2) for out in outs)


def integrate_jacobians(model, q, v):
    """(d_dq, d_dv), each (..., nv, nv): the Jacobians of q ⊕ v in the tangent space,
    (q ⊕ dq) ⊕ (v + dv) = (q ⊕ v) ⊕ (d_dq dq + d_dv dv) to first order.  Block
    diagonal, one block per joint (see ``joints.integrate_jacobians``)."""
    batch, (q, v) = model_arrays(model, q=q, v=v)
    table = joints.joint_table(model)
    return _block_diagonal(table, batch, (1.0, 1.0), lambda i: joints.integrate_jacobians(
        table.kinds[i], q[..., table.q_slices[i]], v[..., table.v_slices[i]]))


def difference_jacobians(model, q0, q1):
    """(d_dq0, d_dq1), each (..., nv, nv): the Jacobians of ``difference(model, q0, q1)``
    for the tangent perturbations q0 ⊕ dq0 and q1 ⊕ dq1.  Block diagonal, one block per
    joint (see ``joints.difference_jacobians``; at a rotation angle of pi they are the
    one-sided Jacobians at the velocity ``difference`` returns)."""
    batch, (q0, q1) = model_arrays(model, q0=q0, q1=q1)
    table = joints.joint_table(model)
    return _block_diagonal(table, batch, (-1.0, 1.0), lambda i: joints.difference_jacobians(
        table.kinds[i], q0[..., table.q_slices[i]], q1[..., table.q_slices[i]]))


def normalize(model, q):
    """q (..., nq) with every quaternion scaled to unit norm."""
    batch, (q,) = model_arrays(model, q=q)
    table = joints.joint_table(model)
    out = q.copy()
    for i in table.manifold_bodies:
        s = table.q_slices[i]
        out[..., s] = joints.normalize(table.kinds[i], q[..., s])
    return check_finite_result(out, 1)
