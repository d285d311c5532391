"""Rotations in 3D: every parameterization of the Kindr cheat sheet, in NumPy.

Conventions (``docs/conventions.md``):

* rotation matrices are active, ``v_world = R v_body``;
* quaternions are Hamilton quaternions stored **scalar first** ``[w, x, y, z]``.
  Every function that reads a quaternion as a rotation **normalizes** it first,
  so a non-unit quaternion is read as its direction; one of norm below 1e-12
  (e.g. zero) raises ValueError.  ``quat_multiply`` and ``quat_conjugate`` are
  the plain algebraic operations and do not normalize;
* ``matrix_to_quat`` returns ``w >= 0`` (for a half turn, ``w = 0``, the
  first non-zero vector component is made positive);
* a rotation vector ``phi`` is ``angle * axis``; ``so3_log`` and every
  conversion to a rotation vector return the angle in ``[0, pi]``, the same
  for ``q`` and ``-q``;
* Euler ZYX is ``[z, y, x]`` with ``R = Rz(z) Ry(y) Rx(x)``, Euler XYZ is
  ``[x, y, z]`` with ``R = Rx(x) Ry(y) Rz(z)``; the middle angle comes back in
  ``[-pi/2, pi/2]``, and at gimbal lock the last angle is set to 0;
* angular velocities are "world" (``skew(w) = dR/dt R^T``) or "body"
  (``skew(w) = R^T dR/dt``); ``angular_velocity_matrix`` / ``rate_matrix`` map
  them to and from the rates of quaternions, rotation vectors, Euler ZYX/XYZ
  angles and angle-axis coordinates ``[angle, ax, ay, az]``.

Every function broadcasts over leading (batch) dimensions and raises
ValueError naming the argument on wrong shapes or non-finite input.
"""
from math import factorial

import numpy as np

from ._checks import as_array, as_rotation, batch_shape, finite_results, short_repr

__all__ = [
    "skew", "unskew",
    "quat_multiply", "quat_conjugate", "quat_normalize", "quat_left_matrix", "quat_right_matrix",
    "quat_to_matrix", "matrix_to_quat", "so3_exp", "so3_log", "rotvec_to_quat", "quat_to_rotvec",
    "angle_axis_to_matrix", "matrix_to_angle_axis", "angle_axis_to_quat", "quat_to_angle_axis",
    "euler_zyx_to_matrix", "matrix_to_euler_zyx", "euler_xyz_to_matrix", "matrix_to_euler_xyz",
    "euler_zyx_to_quat", "quat_to_euler_zyx", "euler_xyz_to_quat", "quat_to_euler_xyz",
    "ROTATION_KINDS", "convert",
    "box_plus", "box_minus", "quat_box_plus", "quat_box_minus", "slerp",
    "integrate_rotation", "angular_velocity_from_difference",
    "so3_left_jacobian", "so3_left_jacobian_inverse", "so3_right_jacobian", "so3_right_jacobian_inverse",
    "angular_velocity_matrix", "rate_matrix", "angular_velocity_from_rates", "rates_from_angular_velocity",
]

# Below this angle the trigonometric coefficients use their Taylor series (the
# closed forms are 0/0 at 0); the first neglected term is below 1e-20.
_SMALL_ANGLE = 1e-3
# |cos(middle Euler angle)| below this is gimbal lock (and |sin(angle/2)| below it
# the singularity of the angle-axis rates).
_GIMBAL_LOCK = 1e-9
# (t - sin t)/t³ and the coefficient of Γ⁻¹ cancel in closed form (relative error
# ~ 6 eps / t², 1e-9 just above 1e-3): below this angle they are summed as even
# power series instead, whose first neglected term is below 1e-18 at 0.5.
_SERIES_ANGLE = 0.5
_C_SERIES = [(-1) ** k / factorial(2 * k + 3) for k in range(9)]  # (t - sin t)/t³
# (1 - (t/2) cot(t/2))/t² = sum |B_2n| t^(2n-2) / (2n)!  (Bernoulli numbers)
_D_SERIES = [1 / 12, 1 / 720, 1 / 30240, 1 / 1209600, 1 / 47900160, 691 / 1307674368000,
             1 / 74724249600, 3617 / 10670622842880000]


def _even_series(coefficients, t2):
    """``sum c_k t^(2k)`` by Horner's rule in ``t2 = t²``."""
    out = np.zeros_like(t2)
    for c in reversed(coefficients):
        out = out * t2 + c
    return out


# ------------------------------------------------------------------------------------------
# Argument checks
# ------------------------------------------------------------------------------------------
def _vec3(x, name):
    return as_array(x, name, (3,))


_matrix = as_rotation  # (R, name): a (..., 3, 3) rotation matrix, or ValueError


def _quat_norm(q):
    """``|q|`` (..., 1), scaled by the largest component so that the squares
    neither overflow (|q| ~ 1e200) nor underflow."""
    big = np.max(np.abs(q), axis=-1, keepdims=True)
    safe = np.where(big > 0.0, big, 1.0)
    return big * np.linalg.norm(q / safe, axis=-1, keepdims=True)


def _unit_quat_and_norm(q, name):
    q = as_array(q, name, (4,))
    norm = _quat_norm(q)
    if np.any(norm < 1e-12):
        raise ValueError("%s must be a non-zero quaternion [w, x, y, z] (got norm %.3g)" % (name, norm.min()))
    return q / norm, norm


def _unit_quat(q, name):
    return _unit_quat_and_norm(q, name)[0]


def _scalar(x, name):
    return as_array(x, name, ())


def _same_batch(*named):
    """Raise ValueError naming the arguments if their batch dimensions do not
    broadcast; ``named`` is ``(name, array, number of trailing dims), ...``."""
    batch_shape(named)


# ------------------------------------------------------------------------------------------
# Skew-symmetric matrices
# ------------------------------------------------------------------------------------------
def skew(w):
    """The matrix ``[w]x`` with ``[w]x u = w x u``."""
    return _skew(_vec3(w, "w"))


def _skew(w):
    S = np.zeros(w.shape[:-1] + (3, 3))
    x, y, z = w[..., 0], w[..., 1], w[..., 2]
    S[..., 0, 1], S[..., 0, 2] = -z, y
    S[..., 1, 0], S[..., 1, 2] = z, -x
    S[..., 2, 0], S[..., 2, 1] = -y, x
    return S


def unskew(S):
    """The vector of the skew-symmetric part of ``S`` (inverse of ``skew``)."""
    S = as_array(S, "S", (3, 3))
    return 0.5 * np.stack([S[..., 2, 1] - S[..., 1, 2],
                           S[..., 0, 2] - S[..., 2, 0],
                           S[..., 1, 0] - S[..., 0, 1]], axis=-1)


# ------------------------------------------------------------------------------------------
# Quaternion algebra
# ------------------------------------------------------------------------------------------
def _multiply(p, q):
    pw, pv = p[..., :1], p[..., 1:]
    qw, qv = q[..., :1], q[..., 1:]
    w = pw * qw - np.sum(pv * qv, axis=-1, keepdims=True)
    return np.concatenate([w, pw * qv + qw * pv + np.cross(pv, qv)], axis=-1)


def _conjugate(q):
    return q * np.array([1.0, -1.0, -1.0, -1.0])


def quat_multiply(p, q):
    """The Hamilton product ``p ⊗ q`` (not normalized)."""
    p, q = as_array(p, "p", (4,)), as_array(q, "q", (4,))
    _same_batch(("p", p, 1), ("q", q, 1))
    return _multiply(p, q)


def quat_conjugate(q):
    """``[w, -x, -y, -z]`` (the inverse of a unit quaternion)."""
    return _conjugate(as_array(q, "q", (4,)))


def quat_normalize(q):
    """``q / |q|``; ValueError for a (near) zero quaternion."""
    return _unit_quat(q, "q")


def quat_left_matrix(q):
    """The 4x4 matrix ``Q(q)`` with ``q ⊗ p = Q(q) p``."""
    w, x, y, z = np.moveaxis(as_array(q, "q", (4,)), -1, 0)
    return np.stack([np.stack([w, -x, -y, -z], -1),
                     np.stack([x, w, -z, y], -1),
                     np.stack([y, z, w, -x], -1),
                     np.stack([z, -y, x, w], -1)], axis=-2)


def quat_right_matrix(p):
    """The 4x4 matrix ``Q̄(p)`` with ``q ⊗ p = Q̄(p) q``."""
    w, x, y, z = np.moveaxis(as_array(p, "p", (4,)), -1, 0)
    return np.stack([np.stack([w, -x, -y, -z], -1),
                     np.stack([x, w, z, -y], -1),
                     np.stack([y, -z, w, x], -1),
                     np.stack([z, y, -x, w], -1)], axis=-2)


# ------------------------------------------------------------------------------------------
# Quaternion <-> matrix <-> rotation vector
# ------------------------------------------------------------------------------------------
def _quat_to_matrix(q):
    w, x, y, z = np.moveaxis(q, -1, 0)
    R = np.empty(q.shape[:-1] + (3, 3))
    R[..., 0, 0] = 1.0 - 2.0 * (y * y + z * z)
    R[..., 0, 1] = 2.0 * (x * y - w * z)
    R[..., 0, 2] = 2.0 * (x * z + w * y)
    R[..., 1, 0] = 2.0 * (x * y + w * z)
    R[..., 1, 1] = 1.0 - 2.0 * (x * x + z * z)
    R[..., 1, 2] = 2.0 * (y * z - w * x)
    R[..., 2, 0] = 2.0 * (x * z - w * y)
    R[..., 2, 1] = 2.0 * (y * z + w * x)
    R[..., 2, 2] = 1.0 - 2.0 * (x * x + y * y)
    return R


def quat_to_matrix(q):
    """The rotation matrix of ``q`` (normalized first)."""
    return _quat_to_matrix(_unit_quat(q, "q"))


def _matrix_to_quat(R):
    # Shepperd's method: divide by the largest of |w|, |x|, |y|, |z| (never small).
    r = lambda i, j: R[..., i, j]  # noqa: E731
    diag = np.stack([r(0, 0) + r(1, 1) + r(2, 2), r(0, 0), r(1, 1), r(2, 2)], axis=-1)
    big = np.argmax(diag, axis=-1)
    four_sq = np.stack([1.0 + diag[..., 0],
                        1.0 + 2.0 * diag[..., 1] - diag[..., 0],
                        1.0 + 2.0 * diag[..., 2] - diag[..., 0],
                        1.0 + 2.0 * diag[..., 3] - diag[..., 0]], axis=-1)   # 4 * (w², x², y², z²)
    s = np.sqrt(np.maximum(np.take_along_axis(four_sq, big[..., None], -1)[..., 0], 1e-300))  # 2 |largest|
    candidates = np.stack([
        np.stack([s * s, r(2, 1) - r(1, 2), r(0, 2) - r(2, 0), r(1, 0) - r(0, 1)], -1),
        np.stack([r(2, 1) - r(1, 2), s * s, r(0, 1) + r(1, 0), r(0, 2) + r(2, 0)], -1),
        np.stack([r(0, 2) - r(2, 0), r(0, 1) + r(1, 0), s * s, r(1, 2) + r(2, 1)], -1),
        np.stack([r(1, 0) - r(0, 1), r(0, 2) + r(2, 0), r(1, 2) + r(2, 1), s * s], -1),
    ], axis=-2)  # row k: 4 * (largest) * q, when component k is the largest
    q = np.take_along_axis(candidates, big[..., None, None], -2)[..., 0, :]
    return _canonical(q / np.linalg.norm(q, axis=-1, keepdims=True))


def _canonical(q):
    """The one of ``q``, ``-q`` with ``w > 0``; when ``w == 0`` (a half turn),
    the one whose first non-zero vector component is positive, so that q and
    -q always give the same result."""
    first = np.take_along_axis(q[..., 1:], np.argmax(q[..., 1:] != 0.0, axis=-1)[..., None], -1)
    flip = (q[..., :1] < 0.0) | ((q[..., :1] == 0.0) & (first < 0.0))
    return np.where(flip, -q, q)


def matrix_to_quat(R):
    """The unit quaternion of ``R``, with ``w >= 0``."""
    return _matrix_to_quat(_matrix(R, "R"))


def _exp_terms(phi):
    """``(t, x, k)``: ``t = |φ|`` and the terms of ``exp([φ]x) = 1 + k1 [x]x + k2 [x]x²`` and of
    its left Jacobian ``Γ(φ) = k0 1 + k3 [x]x + k4 x xᵀ`` about an axis ``x`` (``k`` stacked last).

    Below _SERIES_ANGLE, ``x = φ`` and ``k = (a, a, b, b, c)`` with ``a = sin t/t``,
    ``b = (1 - cos t)/t²`` and ``c = (t - sin t)/t³`` (Taylor series near 0).  Above,
    ``x = φ/t`` and no power of t meets its inverse: in the φ form, ``t - sin t`` loses every
    digit of sin t at t = 1e20 and t³ overflows from 1e103, while
    ``k = (sin t/t, sin t, 1 - cos t, (1 - cos t)/t, 1 - sin t/t)`` stays exact for every finite φ."""
    theta = np.linalg.norm(phi, axis=-1)
    near = theta < _SERIES_ANGLE
    t = np.where(near, 1.0, theta)  # the axis' scale
    x = phi / t[..., None]
    t2 = np.where(near, theta * theta, 0.0)
    small = theta < _SMALL_ANGLE
    s = np.where(small, 1.0, theta)  # (theta wherever the closed forms are used: far from 0 too)
    sin, half_sin = np.sin(s), np.sin(0.5 * s)
    half_sinc = half_sin / (0.5 * s)  # (1 - cos t)/t² = half_sinc²/2: no cancellation
    a = np.where(small, 1.0 - t2 / 6.0 * (1.0 - t2 / 20.0), sin / s)
    b = np.where(small, 0.5 - t2 / 24.0 * (1.0 - t2 / 30.0), 0.5 * half_sinc * half_sinc)
    one_minus_cos = 2.0 * half_sin * half_sin
    k = np.stack([a, np.where(near, a, sin), np.where(near, b, one_minus_cos),
                  np.where(near, b, one_minus_cos / t), np.where(near, _even_series(_C_SERIES, t2), 1.0 - a)],
                 axis=-1)
    return theta, x, k


def _so3_exp(phi):
    _, x, k = _exp_terms(phi)
    S = skew(x)
    return np.eye(3) + k[..., 1, None, None] * S + k[..., 2, None, None] * (S @ S)


def so3_exp(w):
    """The rotation matrix ``exp([w]x)`` of a rotation vector ``w`` (Rodrigues)."""
    return _so3_exp(_vec3(w, "w"))


def _rotvec_to_quat(phi):
    theta = np.linalg.norm(phi, axis=-1, keepdims=True)
    t2 = theta * theta
    small = theta < _SMALL_ANGLE
    safe = np.where(small, 1.0, theta)
    half_sinc = np.where(small, 0.5 - t2 / 48.0 * (1.0 - t2 / 80.0), np.sin(0.5 * safe) / safe)
    return np.concatenate([np.cos(0.5 * theta), half_sinc * phi], axis=-1)


def rotvec_to_quat(phi):
    """The unit quaternion ``[cos(θ/2), sin(θ/2) axis]`` of a rotation vector."""
    return _rotvec_to_quat(_vec3(phi, "phi"))


def _quat_to_rotvec(q):
    q = _canonical(q)  # q and -q: the same rotation; w >= 0 takes the short angle
    w, v = q[..., :1], q[..., 1:]
    s = np.linalg.norm(v, axis=-1, keepdims=True)  # sin(θ/2)
    # θ / s = 2 atan2(s, w) / s has no cancellation for any s > 0 (a truncated
    # series here would cost ~s⁴ relative); its limit at s = 0 is 2 (w = 1).
    positive = s > 0.0
    ratio = np.where(positive, 2.0 * np.arctan2(s, w) / np.where(positive, s, 1.0), 2.0)
    return ratio * v


def quat_to_rotvec(q):
    """The rotation vector of ``q`` (normalized first), angle in ``[0, pi]``."""
    return _quat_to_rotvec(_unit_quat(q, "q"))


def so3_log(R):
    """The rotation vector of ``R``, angle in ``[0, pi]``."""
    return _quat_to_rotvec(_matrix_to_quat(_matrix(R, "R")))


# ------------------------------------------------------------------------------------------
# Angle-axis
# ------------------------------------------------------------------------------------------
def _angle_axis(angle, axis, axis_name="axis"):
    angle = _scalar(angle, "angle")
    axis = _vec3(axis, "axis")
    _same_batch(("angle", angle, 0), ("axis", axis, 1))
    norm = np.linalg.norm(axis, axis=-1, keepdims=True)
    if np.any(norm < 1e-12):
        raise ValueError("%s must be a non-zero 3-vector" % axis_name)
    return angle[..., None] * (axis / norm)


def _split_angle_axis(phi):
    """(angle, unit axis) of rotation vectors: the norm is taken of phi divided by its
    largest component, so a tiny angle (whose squares underflow) still gets a unit axis."""
    scale = np.max(np.abs(phi), axis=-1)
    unit = phi / np.where(scale > 0.0, scale, 1.0)[..., None]
    length = np.linalg.norm(unit, axis=-1)  # in [1, sqrt(3)] when phi is not zero
    angle = scale * length
    axis = np.where(scale[..., None] > 0.0, unit / np.where(scale > 0.0, length, 1.0)[..., None],
                    np.array([1.0, 0.0, 0.0]))
    return angle, axis


def angle_axis_to_matrix(angle, axis):
    """The rotation by ``angle`` about ``axis`` (normalized first)."""
    return _so3_exp(_angle_axis(angle, axis))


def matrix_to_angle_axis(R):
    """``(angle, axis)`` of ``R``: angle in ``[0, pi]``, axis ``[1, 0, 0]`` at angle 0."""
    return _split_angle_axis(so3_log(R))


def angle_axis_to_quat(angle, axis):
    return _rotvec_to_quat(_angle_axis(angle, axis))


def quat_to_angle_axis(q):
    """``(angle, axis)`` of ``q``: angle in ``[0, pi]``, axis ``[1, 0, 0]`` at angle 0."""
    return _split_angle_axis(quat_to_rotvec(q))


# ------------------------------------------------------------------------------------------
# Euler angles
# ------------------------------------------------------------------------------------------
_ZYX, _XYZ = (2, 1, 0), (0, 1, 2)  # the rotation axes, in the order of the product


def _basis_rotation(i, angle):
    """The rotation by ``angle`` about basis vector ``i``, shape (..., 3, 3)."""
    j, k = (i + 1) % 3, (i + 2) % 3
    c, s = np.cos(angle), np.sin(angle)
    R = np.zeros(np.shape(angle) + (3, 3))
    R[..., i, i] = 1.0
    R[..., j, j], R[..., k, k] = c, c
    R[..., k, j], R[..., j, k] = s, -s
    return R


def _euler_partial_products(angles, axes):
    """``R_a(α1)``, ``R_a(α1) R_b(α2)`` and the full product, for the sequence ``axes``."""
    R1 = _basis_rotation(axes[0], angles[..., 0])
    R12 = R1 @ _basis_rotation(axes[1], angles[..., 1])
    return R1, R12, R12 @ _basis_rotation(axes[2], angles[..., 2])


def euler_zyx_to_matrix(zyx):
    """``Rz(z) Ry(y) Rx(x)`` for ``zyx = [z, y, x]``."""
    return _euler_partial_products(_vec3(zyx, "zyx"), _ZYX)[2]


def euler_xyz_to_matrix(xyz):
    """``Rx(x) Ry(y) Rz(z)`` for ``xyz = [x, y, z]``."""
    return _euler_partial_products(_vec3(xyz, "xyz"), _XYZ)[2]


def _matrix_to_euler_zyx(R):
    # x first; then z and y from R Rx(x)^T = Rz(z) Ry(y), whose entries used
    # below have unit norm: well conditioned even near gimbal lock.
    r21, r22 = R[..., 2, 1], R[..., 2, 2]
    locked = np.hypot(r21, r22) < 1e-12
    x = np.where(locked, 0.0, np.arctan2(r21, r22))
    c, s = np.cos(x), np.sin(x)
    z = np.arctan2(-(R[..., 0, 1] * c - R[..., 0, 2] * s), R[..., 1, 1] * c - R[..., 1, 2] * s)
    # cos(y) = hypot(r21, r22) >= 0 keeps y in [-pi/2, pi/2] (r21 s + r22 c, equal
    # in exact arithmetic, can come out slightly negative when x is set to 0 at the lock)
    y = np.arctan2(-R[..., 2, 0], np.hypot(r21, r22))
    return np.stack([z, y, x], axis=-1)


def _matrix_to_euler_xyz(R):
    # z first; then x and y from R Rz(z)^T = Rx(x) Ry(y).
    r00, r01 = R[..., 0, 0], R[..., 0, 1]
    locked = np.hypot(r00, r01) < 1e-12
    z = np.where(locked, 0.0, np.arctan2(-r01, r00))
    c, s = np.cos(z), np.sin(z)
    x = np.arctan2(R[..., 2, 0] * s + R[..., 2, 1] * c, R[..., 1, 0] * s + R[..., 1, 1] * c)
    y = np.arctan2(R[..., 0, 2], np.hypot(r00, r01))  # cos(y) >= 0, as in ZYX
    return np.stack([x, y, z], axis=-1)


def matrix_to_euler_zyx(R):
    """``[z, y, x]`` with ``R = Rz(z) Ry(y) Rx(x)``, ``y`` in ``[-pi/2, pi/2]``."""
    return _matrix_to_euler_zyx(_matrix(R, "R"))


def matrix_to_euler_xyz(R):
    """``[x, y, z]`` with ``R = Rx(x) Ry(y) Rz(z)``, ``y`` in ``[-pi/2, pi/2]``."""
    return _matrix_to_euler_xyz(_matrix(R, "R"))


def euler_zyx_to_quat(zyx):
    return _matrix_to_quat(euler_zyx_to_matrix(zyx))


def euler_xyz_to_quat(xyz):
    return _matrix_to_quat(euler_xyz_to_matrix(xyz))


def quat_to_euler_zyx(q):
    return _matrix_to_euler_zyx(quat_to_matrix(q))


def quat_to_euler_xyz(q):
    return _matrix_to_euler_xyz(quat_to_matrix(q))


# ------------------------------------------------------------------------------------------
# Any parameterization to any other
# ------------------------------------------------------------------------------------------
#: The parameterizations ``convert`` knows, and the shape of one rotation in each.
ROTATION_KINDS = {"matrix": (3, 3), "quat": (4,), "rotvec": (3,), "angle_axis": (4,),
                  "euler_zyx": (3,), "euler_xyz": (3,)}


def _stack_angle_axis(parts):
    angle, axis = parts
    return np.concatenate([np.asarray(angle)[..., None], axis], axis=-1)


_VALUE_AXIS = "value's axis (of [angle, ax, ay, az])"  # (convert's argument, in its errors)

# Through the rotation matrix, except where a direct formula exists (fewer roundings).
_TO_MATRIX = {
    "matrix": lambda R: _matrix(R, "value"),
    "quat": quat_to_matrix,
    "rotvec": so3_exp,
    "angle_axis": lambda x: _so3_exp(_angle_axis(x[..., 0], x[..., 1:], _VALUE_AXIS)),
    "euler_zyx": euler_zyx_to_matrix,
    "euler_xyz": euler_xyz_to_matrix,
}
_FROM_MATRIX = {
    "matrix": lambda R: R.copy(),  # (a new array, as every other conversion returns)
    "quat": matrix_to_quat,
    "rotvec": so3_log,
    "angle_axis": lambda R: _stack_angle_axis(matrix_to_angle_axis(R)),
    "euler_zyx": matrix_to_euler_zyx,
    "euler_xyz": matrix_to_euler_xyz,
}


def _short_rotvec(phi):
    """The rotation vector of the same rotation with angle in [0, pi] (phi where it is)."""
    long = np.linalg.norm(phi, axis=-1, keepdims=True) > np.pi
    return np.where(long, _quat_to_rotvec(_rotvec_to_quat(phi)), phi) if np.any(long) else phi


# (convert's outputs follow the conventions whatever the input's angle: w >= 0, angle <= pi)
_DIRECT = {
    ("quat", "rotvec"): quat_to_rotvec,
    ("rotvec", "quat"): lambda phi: _canonical(rotvec_to_quat(phi)),
    ("quat", "angle_axis"): lambda q: _stack_angle_axis(quat_to_angle_axis(q)),
    ("angle_axis", "quat"): lambda x: _canonical(_rotvec_to_quat(_angle_axis(x[..., 0], x[..., 1:], _VALUE_AXIS))),
    ("rotvec", "angle_axis"): lambda phi: _stack_angle_axis(_split_angle_axis(_short_rotvec(_vec3(phi, "value")))),
    ("angle_axis", "rotvec"): lambda x: _short_rotvec(_angle_axis(x[..., 0], x[..., 1:], _VALUE_AXIS)),
    ("euler_zyx", "quat"): euler_zyx_to_quat,
    ("euler_xyz", "quat"): euler_xyz_to_quat,
    ("quat", "euler_zyx"): quat_to_euler_zyx,
    ("quat", "euler_xyz"): quat_to_euler_xyz,
}


def convert(value, source, target):
    """The rotation ``value``, given in the parameterization ``source``, in ``target``.

    Kinds (``ROTATION_KINDS``): ``"matrix"`` (3, 3), ``"quat"`` ``[w, x, y, z]``,
    ``"rotvec"`` (angle times axis), ``"angle_axis"`` ``[angle, ax, ay, az]``,
    ``"euler_zyx"`` ``[z, y, x]`` and ``"euler_xyz"`` ``[x, y, z]``; every output
    follows the module's conventions (``w >= 0``, angles in ``[0, pi]``, Euler
    middle angle in ``[-pi/2, pi/2]``).  Broadcasts over leading dimensions.
    """
    for name, kind in (("source", source), ("target", target)):
        if not isinstance(kind, str) or kind not in ROTATION_KINDS:
            raise ValueError("%s must be one of %s, got %s" % (name, ", ".join(ROTATION_KINDS), short_repr(kind)))
    value = as_array(value, "value", ROTATION_KINDS[source])
    direct = _DIRECT.get((source, target))
    if direct is not None:
        return direct(value)
    return _FROM_MATRIX[target](_TO_MATRIX[source](value))


# ------------------------------------------------------------------------------------------
# Box-plus / box-minus, interpolation, discrete integration
# ------------------------------------------------------------------------------------------
def box_plus(R, w):
    """``so3_exp(w) @ R``: ``R`` rotated by ``w`` (world axes)."""
    R, w = _matrix(R, "R"), _vec3(w, "w")
    _same_batch(("R", R, 2), ("w", w, 1))
    return _so3_exp(w) @ R


def box_minus(R1, R2):
    """``so3_log(R1 @ R2^T)``: the ``w`` with ``box_plus(R2, w) = R1``."""
    R1, R2 = _matrix(R1, "R1"), _matrix(R2, "R2")
    _same_batch(("R1", R1, 2), ("R2", R2, 2))
    return _quat_to_rotvec(_matrix_to_quat(R1 @ np.swapaxes(R2, -1, -2)))


def quat_box_plus(q, w):
    """``rotvec_to_quat(w) ⊗ q``."""
    q, w = _unit_quat(q, "q"), _vec3(w, "w")
    _same_batch(("q", q, 1), ("w", w, 1))
    return _multiply(_rotvec_to_quat(w), q)


def quat_box_minus(q1, q2):
    """``quat_to_rotvec(q1 ⊗ q2*)``: the ``w`` with ``quat_box_plus(q2, w) = ±q1``."""
    q1, q2 = _unit_quat(q1, "q1"), _unit_quat(q2, "q2")
    _same_batch(("q1", q1, 1), ("q2", q2, 1))
    return _quat_to_rotvec(_multiply(q1, _conjugate(q2)))


def slerp(q0, q1, t):
    """Spherical linear interpolation ``q0 ⊗ (q0* ⊗ q1)^t`` along the shorter arc,
    ``t`` in [0, 1] (other values extrapolate along the same great circle)."""
    q0, q1, t = _unit_quat(q0, "q0"), _unit_quat(q1, "q1"), _scalar(t, "t")
    _same_batch(("q0", q0, 1), ("q1", q1, 1), ("t", t, 0))
    relative = _quat_to_rotvec(_multiply(_conjugate(q0), q1))  # shortest arc
    return _multiply(q0, _rotvec_to_quat(t[..., None] * relative))


def _frame_argument(frame):
    if frame not in ("world", "body"):
        raise ValueError("frame must be 'world' or 'body', got %r" % (frame,))
    return frame


def integrate_rotation(q, omega, dt, frame="world"):
    """Rotate ``q`` for ``dt`` seconds at the constant angular velocity ``omega``
    (world or body axes); exact for constant ``omega``."""
    q, omega, dt = _unit_quat(q, "q"), _vec3(omega, "omega"), _scalar(dt, "dt")
    _same_batch(("q", q, 1), ("omega", omega, 1), ("dt", dt, 0))
    step = _rotvec_to_quat(omega * dt[..., None])
    out = _multiply(step, q) if _frame_argument(frame) == "world" else _multiply(q, step)
    return out / np.linalg.norm(out, axis=-1, keepdims=True)


def angular_velocity_from_difference(q0, q1, dt, frame="world"):
    """The constant angular velocity that takes ``q0`` to ``q1`` in ``dt`` (shortest arc)."""
    dt = _scalar(dt, "dt")
    if np.any(dt == 0.0):
        raise ValueError("dt must be non-zero")
    q0, q1 = _unit_quat(q0, "q0"), _unit_quat(q1, "q1")
    _same_batch(("q0", q0, 1), ("q1", q1, 1), ("dt", dt, 0))
    if _frame_argument(frame) == "world":
        relative = _multiply(q1, _conjugate(q0))
    else:
        relative = _multiply(_conjugate(q0), q1)
    return _quat_to_rotvec(relative) / dt[..., None]


# ------------------------------------------------------------------------------------------
# The exponential-map Jacobian Γ
# ------------------------------------------------------------------------------------------
def _left_jacobian(phi):
    _, x, k = _exp_terms(phi)
    return _left_jacobian_of_terms(x, k)


def _left_jacobian_of_terms(x, k):
    """Γ = k0 1 + k3 [x]x + k4 x xᵀ from ``_exp_terms``' axis and terms."""
    return (k[..., 0, None, None] * np.eye(3) + k[..., 3, None, None] * skew(x)
            + k[..., 4, None, None] * (x[..., :, None] * x[..., None, :]))


def _left_jacobian_inverse(phi, name="phi"):
    theta = np.linalg.norm(phi, axis=-1)
    if np.any((theta > np.pi) & (np.abs(np.sin(0.5 * theta)) < _GIMBAL_LOCK)):
        raise ValueError("%s: a rotation vector of angle 2 pi k (k >= 1) has no inverse exp-map Jacobian "
                         "(Γ is singular there): no rate for a general angular velocity" % name)
    series = theta < _SERIES_ANGLE
    half = 0.5 * np.where(series, 1.0, theta)
    # 1/θ² - cot(θ/2)/(2θ), finite up to θ = 2π (where Γ is singular)
    d = np.where(series, _even_series(_D_SERIES, theta * theta),
                 (1.0 - half * np.cos(half) / np.sin(half)) / (4.0 * half * half))
    S = skew(phi)
    return np.eye(3) - 0.5 * S + d[..., None, None] * (S @ S)


def so3_left_jacobian(phi):
    """Γ(φ): ``omega_world = Γ(φ) dφ/dt`` for ``R = so3_exp(φ)``."""
    return _left_jacobian(_vec3(phi, "phi"))


def so3_left_jacobian_inverse(phi):
    """Γ(φ)⁻¹: ``dφ/dt = Γ(φ)⁻¹ omega_world``; ValueError at ``|φ| = 2π k`` (k >= 1), where Γ is
    singular."""
    return _left_jacobian_inverse(_vec3(phi, "phi"))


def so3_right_jacobian(phi):
    """Γ(-φ): ``omega_body = Γ(-φ) dφ/dt``."""
    return _left_jacobian(-_vec3(phi, "phi"))


def so3_right_jacobian_inverse(phi):
    return _left_jacobian_inverse(-_vec3(phi, "phi"))


# ------------------------------------------------------------------------------------------
# Angular velocity <-> parameter rates
# ------------------------------------------------------------------------------------------
def _euler_angular_velocity_matrix(angles, axes, frame):
    # ω_world = α̇1 e_a + α̇2 R_a e_b + α̇3 R_a R_b e_c;  ω_body = R^T ω_world.
    R1, R12, R = _euler_partial_products(angles, axes)
    first = np.broadcast_to(np.eye(3)[:, axes[0]], R1.shape[:-1])
    E = np.stack([first, R1[..., :, axes[1]], R12[..., :, axes[2]]], axis=-1)
    return E if frame == "world" else np.swapaxes(R, -1, -2) @ E


def _quat_angular_velocity_matrix(q, norm, frame):
    # For the unit u = q/|q|: ω_world = 2 vec(u̇ ⊗ u*), ω_body = 2 vec(u* ⊗ u̇), and
    # u̇ = (q̇ - radial part)/|q|, whose radial part drops out: so E = 2 [..](u*) / |q|
    # is the angular velocity of the rotation q/|q| also for a non-unit q.
    scale = 2.0 / norm[..., None]
    if frame == "world":
        return scale * quat_right_matrix(_conjugate(q))[..., 1:, :]
    return scale * quat_left_matrix(_conjugate(q))[..., 1:, :]


def _quat_rate_matrix(q, norm, frame):
    # q̇ = ½ [0, ω] ⊗ q (world) or ½ q ⊗ [0, ω] (body) for the quaternion as given
    # (u |q|): tangent to the sphere of radius |q|, so integrating it keeps |q|.
    scale = 0.5 * norm[..., None]
    if frame == "world":
        return scale * quat_right_matrix(q)[..., :, 1:]
    return scale * quat_left_matrix(q)[..., :, 1:]


def _angle_axis_parts(coords):
    """``(angle, unit axis, |axis|)`` of angle-axis coordinates ``[angle, axis]``."""
    axis = coords[..., 1:]
    norm = np.linalg.norm(axis, axis=-1, keepdims=True)
    if np.any(norm < 1e-12):
        raise ValueError("coords: the axis of angle-axis coordinates [angle, ax, ay, az] must be non-zero")
    return coords[..., 0], axis / norm, norm


def _angle_axis_angular_velocity_matrix(coords, frame):
    # Kindr: ω = n θ̇ + sin θ ṅ ± (1 - cos θ) [n]x ṅ  (+ world, - body), with
    # ṅ = (I - n nᵀ) ȧ / |a| the rate of the unit axis n = a / |a|.
    theta, n, norm = _angle_axis_parts(coords)
    sign = 1.0 if frame == "world" else -1.0
    projector = np.eye(3) - n[..., :, None] * n[..., None, :]
    M = (np.sin(theta)[..., None, None] * projector
         + sign * (1.0 - np.cos(theta))[..., None, None] * skew(n)) / norm[..., None]
    return np.concatenate([n[..., :, None], M], axis=-1)


def _angle_axis_rate_matrix(coords, frame):
    # Kindr: θ̇ = nᵀω,  ṅ = (-½ cot(θ/2) [n]x² ∓ ½ [n]x) ω  (- world, + body);
    # the axis rate is ȧ = |a| ṅ (keeps |a|).  cot(θ/2) is infinite at θ = 0 (mod 2π).
    theta, n, norm = _angle_axis_parts(coords)
    half_sin = np.sin(0.5 * theta)
    if np.any(np.abs(half_sin) < _GIMBAL_LOCK):
        raise ValueError("coords: angle-axis coordinates at angle 0 (mod 2 pi) have no axis rate "
                         "for a general angular velocity")
    sign = 1.0 if frame == "world" else -1.0
    N = skew(n)
    cot = (np.cos(0.5 * theta) / half_sin)[..., None, None]
    axis_rate = norm[..., None] * (-0.5 * cot * (N @ N) - sign * 0.5 * N)
    return np.concatenate([n[..., None, :], axis_rate], axis=-2)


_KINDS = {"quat": 4, "rotvec": 3, "euler_zyx": 3, "euler_xyz": 3, "angle_axis": 4}


def _coords(kind, coords):
    if not isinstance(kind, str) or kind not in _KINDS:  # (a list would be unhashable: a bare TypeError)
        raise ValueError("kind must be one of %s, got %s" % (", ".join(map(repr, _KINDS)), short_repr(kind)))
    return as_array(coords, "coords", (_KINDS[kind],))


def angular_velocity_matrix(kind, coords, frame="world"):
    """The matrix ``E(coords)`` with ``omega = E @ d(coords)/dt``, shape (..., 3, n).

    ``kind`` is ``"quat"`` (n = 4), ``"rotvec"``, ``"euler_zyx"``, ``"euler_xyz"``
    or ``"angle_axis"`` (coords ``[angle, ax, ay, az]``, n = 4); ``frame`` is
    ``"world"`` or ``"body"`` (the axes of ``omega``).  A non-unit quaternion or
    axis is read as its direction: ``omega`` is that of the rotation it denotes.
    """
    coords, frame = _coords(kind, coords), _frame_argument(frame)
    if kind == "quat":
        return _quat_angular_velocity_matrix(*_unit_quat_and_norm(coords, "coords"), frame)
    if kind == "angle_axis":
        return _angle_axis_angular_velocity_matrix(coords, frame)
    if kind == "rotvec":
        return _left_jacobian(coords if frame == "world" else -coords)
    return _euler_angular_velocity_matrix(coords, _ZYX if kind == "euler_zyx" else _XYZ, frame)


def rate_matrix(kind, coords, frame="world"):
    """The matrix with ``d(coords)/dt = rate_matrix @ omega``, shape (..., n, 3).

    For quaternions (and the angle-axis axis) the rate keeps the norm as given.
    Euler angles at gimbal lock, angle-axis coordinates at angle 0 and rotation
    vectors of angle 2 pi k (k >= 1) raise ValueError: no such matrix exists there.
    """
    coords, frame = _coords(kind, coords), _frame_argument(frame)
    if kind == "quat":
        return _quat_rate_matrix(*_unit_quat_and_norm(coords, "coords"), frame)
    if kind == "angle_axis":
        return _angle_axis_rate_matrix(coords, frame)
    if kind == "rotvec":
        return _left_jacobian_inverse(coords if frame == "world" else -coords, "coords")
    if np.any(np.abs(np.cos(coords[..., 1])) < _GIMBAL_LOCK):
        raise ValueError("coords: Euler angles at gimbal lock (middle angle = ±pi/2) have no rate "
                         "for a general angular velocity")
    return np.linalg.inv(_euler_angular_velocity_matrix(coords, _ZYX if kind == "euler_zyx" else _XYZ, frame))


def angular_velocity_from_rates(kind, coords, rates, frame="world"):
    """``angular_velocity_matrix(kind, coords, frame) @ rates``."""
    E = angular_velocity_matrix(kind, coords, frame)
    rates = as_array(rates, "rates", (E.shape[-1],))
    _same_batch(("coords", E, 2), ("rates", rates, 1))
    return (E @ rates[..., None])[..., 0]


def rates_from_angular_velocity(kind, coords, omega, frame="world"):
    """``rate_matrix(kind, coords, frame) @ omega``."""
    F = rate_matrix(kind, coords, frame)
    omega = _vec3(omega, "omega")
    _same_batch(("coords", F, 2), ("omega", omega, 1))
    return (F @ omega[..., None])[..., 0]


# Every public function: an overflow is the shared error, never an inf or NaN returned.
for _name in __all__:
    if callable(globals()[_name]):
        globals()[_name] = finite_results(globals()[_name])
del _name
