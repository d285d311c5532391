"""Rotations (rbd.rotations): every parameterization of the Kindr cheat sheet.

The oracles are independent of the library: SciPy's ``Rotation`` and ``Slerp``
(scalar-last quaternions, converted here), ``scipy.linalg.expm`` of skew
matrices, the elementary rotations, Hamilton's rules and the cheat-sheet
formulas written out here, finite differences of rotation trajectories, and
group identities.  Hard places (angles near 0 and pi, gimbal lock, non-unit
and sign-flipped quaternions), batching and bad input are tested explicitly.
"""
import re
import warnings
import zlib

import numpy as np
import pytest
import scipy.linalg
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from scipy.spatial.transform import Rotation, Slerp

from rbd import rotations as rot
from oracles.textbook import Rx, Ry, Rz, skew

PROPERTY = settings(max_examples=60, deadline=None)
TOL = dict(rtol=1e-10, atol=1e-10)
FD_TOL = dict(rtol=1e-7, atol=1e-7)  # finite differences
PI_UP = np.pi + 4 * np.spacing(np.pi)  # pi, up to the rounding of a vector norm


# ------------------------------------------------------------------------------------------
# Independent helpers (no rbd code)
# ------------------------------------------------------------------------------------------
def vee(S):
    return np.array([S[2, 1], S[0, 2], S[1, 0]])


def hamilton(p, q):
    """p ⊗ q from Hamilton's rules i² = j² = k² = ijk = -1, term by term."""
    a1, b1, c1, d1 = p
    a2, b2, c2, d2 = q
    return np.array([a1 * a2 - b1 * b2 - c1 * c2 - d1 * d2,
                     a1 * b2 + b1 * a2 + c1 * d2 - d1 * c2,
                     a1 * c2 - b1 * d2 + c1 * a2 + d1 * b2,
                     a1 * d2 + b1 * c2 - c1 * b2 + d1 * a2])


def sp(q):
    """A SciPy rotation from a scalar-first quaternion (SciPy's default is scalar last)."""
    q = np.asarray(q, dtype=float)
    return Rotation.from_quat(np.concatenate([q[..., 1:], q[..., :1]], axis=-1))


def sp_quat(r):
    """The scalar-first quaternion of a SciPy rotation."""
    q = r.as_quat()
    return np.concatenate([q[..., 3:], q[..., :3]], axis=-1)


def rodrigues(angle, axis):
    """exp(angle [n]x) for a unit axis n, in the form with no division (exact near 0)."""
    K = skew(np.asarray(axis) / np.linalg.norm(axis))
    return np.eye(3) + np.sin(angle) * K + (1.0 - np.cos(angle)) * (K @ K)


def wrap(a):
    """Angles to [-pi, pi)."""
    return (np.asarray(a) + np.pi) % (2.0 * np.pi) - np.pi


def assert_same_angles(a, b, atol=1e-9):
    assert np.all(np.abs(wrap(np.asarray(a) - np.asarray(b))) < atol), (a, b)


def assert_same_rotation_quat(q1, q2, atol=1e-10):
    """q1 = ±q2 (both unit)."""
    q1, q2 = np.asarray(q1), np.asarray(q2)
    sign = 1.0 if np.dot(q1, q2) >= 0.0 else -1.0
    np.testing.assert_allclose(q1, sign * q2, atol=atol, rtol=0)


def assert_orthogonal(a, b, scale):
    """a ⟂ b, to rounding relative to |scale| |b| (a is part of the vector scale)."""
    s = max(np.abs(scale).max(), 1e-300)  # (rescaled: the norms of tiny vectors underflow)
    assert abs((a / s) @ b) <= 1e-12 * np.linalg.norm(scale / s) * np.linalg.norm(b)


def derivative(f, h=1e-3):
    """df/dt at t = 0 by the five-point central difference (error ~ h⁴)."""
    return (f(-2 * h) - 8 * f(-h) + 8 * f(h) - f(2 * h)) / (12 * h)


def angular_velocities(R_of_t, speed=1.0):
    """(world, body) angular velocity at t = 0: [w]x = dR/dt Rᵀ and Rᵀ dR/dt
    (the step shrinks with the speed of the coordinates along the path)."""
    R, Rdot = R_of_t(0.0), derivative(R_of_t, h=1e-3 / max(1.0, speed))
    return vee(Rdot @ R.T), vee(R.T @ Rdot)


# ------------------------------------------------------------------------------------------
# Strategies
# ------------------------------------------------------------------------------------------
unit_interval = st.floats(-1.0, 1.0, allow_subnormal=False)
quat_like = arrays(np.float64, 4, elements=unit_interval).filter(lambda q: np.linalg.norm(q) > 0.1)
unit_quats = quat_like.map(lambda q: q / np.linalg.norm(q))
vectors = arrays(np.float64, 3, elements=st.floats(-3.0, 3.0, allow_subnormal=False))
# rotation vectors with angle below pi (where the log is unique)
rotvecs = arrays(np.float64, 3, elements=st.floats(-1.8, 1.8, allow_subnormal=False)).filter(
    lambda v: np.linalg.norm(v) < np.pi - 1e-3)
axes = vectors.filter(lambda v: np.linalg.norm(v) > 1e-2)
scales = st.floats(1e-3, 1e3)
angle = st.floats(-np.pi, np.pi)
# middle Euler angle away from gimbal lock (|y| < pi/2 - 1e-3)
middle = st.floats(-np.pi / 2 + 1e-3, np.pi / 2 - 1e-3)
eulers = st.tuples(angle, middle, angle).map(np.array)


# ------------------------------------------------------------------------------------------
# Quaternion algebra
# ------------------------------------------------------------------------------------------
I1, Ii, Ij, Ik = np.eye(4)


@pytest.mark.parametrize("p, q, expected", [
    (Ii, Ij, Ik), (Ij, Ik, Ii), (Ik, Ii, Ij),          # ij = k, jk = i, ki = j
    (Ij, Ii, -Ik), (Ik, Ij, -Ii), (Ii, Ik, -Ij),       # anticommuting
    (Ii, Ii, -I1), (Ij, Ij, -I1), (Ik, Ik, -I1),       # i² = j² = k² = -1
    (hamilton(Ii, Ij), Ik, -I1),                       # ijk = -1
    (I1, Ik, Ik), (Ij, I1, Ij),
])
def test_quat_multiply_hamilton_rules(p, q, expected):
    np.testing.assert_array_equal(rot.quat_multiply(p, q), expected)


@PROPERTY
@given(quat_like, quat_like)
def test_quat_multiply_is_the_hamilton_product_and_composes_rotations(p, q):
    pq = rot.quat_multiply(p, q)
    np.testing.assert_allclose(pq, hamilton(p, q), **TOL)
    # |p ⊗ q| = |p| |q|, and as rotations p ⊗ q is "q, then p" (SciPy: sp(p) * sp(q))
    np.testing.assert_allclose(np.linalg.norm(pq), np.linalg.norm(p) * np.linalg.norm(q), **TOL)
    np.testing.assert_allclose(sp(pq).as_matrix(), (sp(p) * sp(q)).as_matrix(), **TOL)


@PROPERTY
@given(quat_like, quat_like, quat_like)
def test_quat_multiply_is_associative(p, q, r):
    np.testing.assert_allclose(rot.quat_multiply(rot.quat_multiply(p, q), r),
                               rot.quat_multiply(p, rot.quat_multiply(q, r)), **TOL)


@PROPERTY
@given(quat_like, quat_like)
def test_quat_conjugate(q, p):
    qc = rot.quat_conjugate(q)
    np.testing.assert_array_equal(qc, [q[0], -q[1], -q[2], -q[3]])
    # q ⊗ q* = |q|², (p ⊗ q)* = q* ⊗ p*, and for a unit q the inverse rotation
    np.testing.assert_allclose(hamilton(q, qc), [q @ q, 0, 0, 0], **TOL)
    np.testing.assert_allclose(rot.quat_conjugate(hamilton(p, q)), hamilton(qc, rot.quat_conjugate(p)), **TOL)
    np.testing.assert_allclose(sp(qc).as_matrix(), sp(q).as_matrix().T, **TOL)


@PROPERTY
@given(quat_like, quat_like)
def test_quaternion_matrices(q, p):
    """Q(q) p = q ⊗ p = Q̄(p) q, and Q(q), Q̄(p) commute (associativity)."""
    Q, Qbar = rot.quat_left_matrix(q), rot.quat_right_matrix(p)
    assert Q.shape == Qbar.shape == (4, 4)
    np.testing.assert_allclose(Q @ p, hamilton(q, p), **TOL)
    np.testing.assert_allclose(Qbar @ q, hamilton(q, p), **TOL)
    np.testing.assert_allclose(Q @ Qbar, Qbar @ Q, **TOL)
    # for a unit quaternion both are orthogonal
    u = q / np.linalg.norm(q)
    np.testing.assert_allclose(rot.quat_left_matrix(u).T @ rot.quat_left_matrix(u), np.eye(4), **TOL)
    np.testing.assert_allclose(rot.quat_right_matrix(u).T @ rot.quat_right_matrix(u), np.eye(4), **TOL)


@PROPERTY
@given(quat_like, scales)
def test_quat_normalize(q, scale):
    u = rot.quat_normalize(scale * q)
    np.testing.assert_allclose(np.linalg.norm(u), 1.0, **TOL)
    np.testing.assert_allclose(u * np.linalg.norm(q), q, **TOL)  # same direction


def test_quat_algebra_does_not_normalize():
    p, q = np.array([2.0, 0, 0, 0]), np.array([0.0, 3.0, 0, 0])
    np.testing.assert_array_equal(rot.quat_multiply(p, q), [0, 6, 0, 0])
    np.testing.assert_array_equal(rot.quat_conjugate(q), [0, -3, 0, 0])


# ------------------------------------------------------------------------------------------
# Quaternion <-> matrix <-> rotation vector <-> angle-axis
# ------------------------------------------------------------------------------------------
@PROPERTY
@given(quat_like, scales)
def test_quat_to_matrix_matches_scipy_and_normalizes(q, scale):
    R = rot.quat_to_matrix(scale * q)
    np.testing.assert_allclose(R, sp(q).as_matrix(), **TOL)
    np.testing.assert_allclose(rot.quat_to_matrix(-q), R, **TOL)  # q and -q: one rotation
    np.testing.assert_allclose(R.T @ R, np.eye(3), **TOL)
    assert np.linalg.det(R) == pytest.approx(1.0)


@PROPERTY
@given(unit_quats)
def test_matrix_to_quat_matches_scipy_with_w_nonnegative(q):
    R = sp(q).as_matrix()
    out = rot.matrix_to_quat(R)
    assert out[0] >= 0.0
    np.testing.assert_allclose(np.linalg.norm(out), 1.0, **TOL)
    assert_same_rotation_quat(out, sp_quat(Rotation.from_matrix(R)))
    assert_same_rotation_quat(out, q)
    np.testing.assert_allclose(sp(out).as_matrix(), R, **TOL)


@pytest.mark.parametrize("q", [
    [1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1],               # identity and the 180° turns
    [0, 1, 1, 0], [0, 1, -1, 1], [1e-9, 0, 0, 1], [-1e-9, 1, 0, 0],       # 180° and just off it
    [1, 1e-9, 0, 0], [-1, 0, 1e-9, 0], [0.5, 0.5, 0.5, 0.5], [-0.5, 0.5, -0.5, 0.5],
])
def test_matrix_to_quat_at_hard_places(q):
    q = np.asarray(q, dtype=float) / np.linalg.norm(q)
    out = rot.matrix_to_quat(rodrigues(*_angle_axis_of(q)))
    assert out[0] >= 0.0
    expected = q if (q[0] > 0 or (q[0] == 0 and out @ q > 0)) else -q
    np.testing.assert_allclose(out, expected, atol=1e-14, rtol=0)


def _angle_axis_of(q):
    """(angle, axis) of a unit quaternion by the textbook formula (angle in [0, 2pi])."""
    s = np.linalg.norm(q[1:])
    return 2.0 * np.arctan2(s, q[0]), (q[1:] / s if s > 0 else np.array([1.0, 0, 0]))


@PROPERTY
@given(vectors)
def test_so3_exp_matches_expm_and_scipy(phi):
    R = rot.so3_exp(phi)
    np.testing.assert_allclose(R, scipy.linalg.expm(skew(phi)), **TOL)
    np.testing.assert_allclose(R, Rotation.from_rotvec(phi).as_matrix(), **TOL)


@PROPERTY
@given(unit_quats)
def test_so3_log_matches_scipy(q):
    R = sp(q).as_matrix()
    phi = rot.so3_log(R)
    assert np.linalg.norm(phi) <= PI_UP
    np.testing.assert_allclose(scipy.linalg.expm(skew(phi)), R, **TOL)
    if np.linalg.norm(phi) < np.pi - 1e-6:  # at pi both ±phi are right
        np.testing.assert_allclose(phi, Rotation.from_matrix(R).as_rotvec(), **TOL)


@PROPERTY
@given(rotvecs)
def test_so3_log_inverts_so3_exp(phi):
    np.testing.assert_allclose(rot.so3_log(rot.so3_exp(phi)), phi, **TOL)


@PROPERTY
@given(vectors)
def test_rotvec_to_quat_matches_scipy(phi):
    q = rot.rotvec_to_quat(phi)
    theta = np.linalg.norm(phi)
    np.testing.assert_allclose(q[0], np.cos(theta / 2), **TOL)  # textbook [cos θ/2, sin θ/2 n]
    np.testing.assert_allclose(np.linalg.norm(q), 1.0, **TOL)
    assert_same_rotation_quat(q, sp_quat(Rotation.from_rotvec(phi)))


@PROPERTY
@given(quat_like, scales)
def test_quat_to_rotvec_matches_scipy(q, scale):
    phi = rot.quat_to_rotvec(scale * q)
    assert np.linalg.norm(phi) <= PI_UP
    np.testing.assert_allclose(rot.quat_to_rotvec(-q), phi, **TOL)  # q and -q: the same answer
    np.testing.assert_allclose(Rotation.from_rotvec(phi).as_matrix(), sp(q).as_matrix(), **TOL)
    if np.linalg.norm(phi) < np.pi - 1e-6:
        np.testing.assert_allclose(phi, sp(q).as_rotvec(), **TOL)


@PROPERTY
@given(rotvecs)
def test_quat_to_rotvec_inverts_rotvec_to_quat(phi):
    np.testing.assert_allclose(rot.quat_to_rotvec(rot.rotvec_to_quat(phi)), phi, **TOL)


@PROPERTY
@given(st.floats(-2 * np.pi, 2 * np.pi), axes)
def test_angle_axis_to_matrix_and_quat(theta, axis):
    n = axis / np.linalg.norm(axis)
    R = rot.angle_axis_to_matrix(theta, axis)  # the axis is normalized
    np.testing.assert_allclose(R, scipy.linalg.expm(theta * skew(n)), **TOL)
    q = rot.angle_axis_to_quat(theta, axis)
    np.testing.assert_allclose(q, np.concatenate([[np.cos(theta / 2)], np.sin(theta / 2) * n]), **TOL)


@PROPERTY
@given(unit_quats)
def test_matrix_and_quat_to_angle_axis(q):
    R = sp(q).as_matrix()
    for theta, n in (rot.matrix_to_angle_axis(R), rot.quat_to_angle_axis(q)):
        assert 0.0 <= theta <= PI_UP
        np.testing.assert_allclose(np.linalg.norm(n), 1.0, **TOL)
        np.testing.assert_allclose(rodrigues(theta, n), R, **TOL)
        np.testing.assert_allclose(theta, sp(q).magnitude(), **TOL)


@PROPERTY
@given(st.floats(1e-6, np.pi - 1e-6), axes)
def test_angle_axis_round_trip(theta, axis):
    n = axis / np.linalg.norm(axis)
    for got_theta, got_n in (rot.matrix_to_angle_axis(rot.angle_axis_to_matrix(theta, axis)),
                             rot.quat_to_angle_axis(rot.angle_axis_to_quat(theta, axis))):
        np.testing.assert_allclose(got_theta, theta, **TOL)
        np.testing.assert_allclose(got_n, n, atol=1e-9)


@pytest.mark.parametrize("tiny", [1e-150, 9.18692322e-163, 1e-200, 5e-324])
def test_a_tiny_angle_still_has_a_unit_axis(tiny):
    """The squares of such angles underflow: the axis must still be a unit vector (the
    failure hypothesis found: |axis| = 0.83 for q = [1, 9.2e-163, 9.2e-163, 9.2e-163])."""
    q = np.array([1.0, tiny, tiny, tiny])
    for theta, n in (rot.quat_to_angle_axis(q), rot.matrix_to_angle_axis(rot.quat_to_matrix(q))):
        assert abs(np.linalg.norm(n) - 1.0) < 1e-15
        np.testing.assert_allclose(n, np.full(3, 1.0 / np.sqrt(3.0)), rtol=1e-15)
        assert theta > 0.0
    if tiny > 1e-300:  # (not subnormal: the angle itself is exact to rounding too)
        np.testing.assert_allclose(rot.quat_to_angle_axis(q)[0], 2.0 * np.sqrt(3.0) * tiny, rtol=1e-15)


def test_angle_axis_at_zero_angle_has_the_x_axis():
    for theta, n in (rot.matrix_to_angle_axis(np.eye(3)), rot.quat_to_angle_axis([-2.0, 0, 0, 0])):
        assert theta == 0.0
        np.testing.assert_array_equal(n, [1.0, 0.0, 0.0])


# ------------------------------------------------------------------------------------------
# Euler angles
# ------------------------------------------------------------------------------------------
EULER = {  # name: (to_matrix, from_matrix, to_quat, from_quat, scipy sequence, elementary product)
    "zyx": (rot.euler_zyx_to_matrix, rot.matrix_to_euler_zyx, rot.euler_zyx_to_quat, rot.quat_to_euler_zyx,
            "ZYX", lambda a: Rz(a[0]) @ Ry(a[1]) @ Rx(a[2])),
    "xyz": (rot.euler_xyz_to_matrix, rot.matrix_to_euler_xyz, rot.euler_xyz_to_quat, rot.quat_to_euler_xyz,
            "XYZ", lambda a: Rx(a[0]) @ Ry(a[1]) @ Rz(a[2])),
}


@pytest.mark.parametrize("order", EULER)
@PROPERTY
@given(angles=st.tuples(angle, angle, angle).map(np.array))
def test_euler_to_matrix_and_quat(order, angles):
    to_matrix, _, to_quat, _, seq, product = EULER[order]
    R = to_matrix(angles)
    np.testing.assert_allclose(R, product(angles), **TOL)
    np.testing.assert_allclose(R, Rotation.from_euler(seq, angles).as_matrix(), **TOL)  # intrinsic
    q = to_quat(angles)
    assert q[0] >= 0.0
    assert_same_rotation_quat(q, sp_quat(Rotation.from_euler(seq, angles)))


@pytest.mark.parametrize("order", EULER)
@PROPERTY
@given(q=unit_quats)
def test_matrix_and_quat_to_euler_match_scipy(order, q):
    _, from_matrix, _, from_quat, seq, product = EULER[order]
    R = sp(q).as_matrix()
    for angles in (from_matrix(R), from_quat(q), from_quat(-3.0 * q)):
        assert -np.pi <= angles[0] <= np.pi and -np.pi <= angles[2] <= np.pi
        assert -np.pi / 2 <= angles[1] <= np.pi / 2
        np.testing.assert_allclose(product(angles), R, **TOL)
        if abs(abs(angles[1]) - np.pi / 2) > 1e-3:  # (SciPy's first/third angles degrade near the lock)
            assert_same_angles(angles, Rotation.from_matrix(R).as_euler(seq))


@pytest.mark.parametrize("order", EULER)
@PROPERTY
@given(angles=eulers)
def test_euler_round_trip(order, angles):
    to_matrix, from_matrix, to_quat, from_quat, _, _ = EULER[order]
    assert_same_angles(from_matrix(to_matrix(angles)), angles, atol=1e-9)
    assert_same_angles(from_quat(to_quat(angles)), angles, atol=1e-9)


@pytest.mark.parametrize("order", EULER)
@pytest.mark.parametrize("sign", [1.0, -1.0])
@pytest.mark.parametrize("offset", [0.0, 1e-15, 1e-12, 1e-9, 1e-6])
@PROPERTY
@given(first=angle, last=angle)
def test_euler_at_and_near_gimbal_lock(order, sign, offset, first, last):
    to_matrix, from_matrix, to_quat, from_quat, seq, product = EULER[order]
    middle_angle = sign * (np.pi / 2 - offset)
    R = product([first, middle_angle, last])
    for angles in (from_matrix(R), from_quat(sp_quat(Rotation.from_matrix(R)))):
        np.testing.assert_allclose(product(angles), R, atol=1e-10)  # always reconstructs R
        np.testing.assert_allclose(angles[1], middle_angle, atol=1e-7)
        assert -np.pi / 2 <= angles[1] <= np.pi / 2
        if offset == 0.0:
            assert angles[2] == 0.0  # the documented policy at gimbal lock
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # SciPy warns about the lock
                assert_same_angles(angles, Rotation.from_matrix(R).as_euler(seq), atol=1e-7)


def test_euler_conversions_are_consistent_with_each_other():
    """ZYX angles [z, y, x] of R are the XYZ angles of Rᵀ, negated and reversed."""
    rng = np.random.default_rng(0)
    for R in Rotation.random(20, random_state=rng).as_matrix():
        zyx = rot.matrix_to_euler_zyx(R)
        np.testing.assert_allclose(rot.euler_xyz_to_matrix(-zyx[::-1]), R.T, **TOL)


# ------------------------------------------------------------------------------------------
# Hard places of exp / log: angles near 0 and near pi, q and -q
# ------------------------------------------------------------------------------------------
HARD_ANGLES = [0.0, 1e-12, 1e-9, 1e-5, 1e-3 * (1 - 1e-9), 1e-3, 1e-3 * (1 + 1e-9), 2e-3 * (1 - 1e-9), 0.1, 1.0,
               np.pi / 2, np.pi - 1e-3, np.pi - 1e-7, np.pi - 1e-12, np.pi]
HARD_AXES = [[1.0, 0, 0], [0, 0, -1.0], [1.0, -2.0, 3.0], [1e-3, 1.0, 1e-6]]


@pytest.mark.parametrize("theta", HARD_ANGLES)
@pytest.mark.parametrize("axis", HARD_AXES)
def test_exp_log_at_hard_angles(theta, axis):
    n = np.asarray(axis) / np.linalg.norm(axis)
    phi = theta * n
    R = rodrigues(theta, n)
    np.testing.assert_allclose(rot.so3_exp(phi), R, atol=1e-15, rtol=0)
    np.testing.assert_allclose(rot.so3_exp(phi), scipy.linalg.expm(skew(phi)), atol=1e-14, rtol=0)
    q = np.concatenate([[np.cos(theta / 2)], np.sin(theta / 2) * n])
    np.testing.assert_allclose(rot.rotvec_to_quat(phi), q, atol=1e-15, rtol=1e-14)  # (|phi| rounds)
    for log in (rot.so3_log(R), rot.quat_to_rotvec(q), rot.quat_to_rotvec(-q), rot.so3_log(rot.quat_to_matrix(-q))):
        if theta == np.pi:  # both ±pi n are right
            np.testing.assert_allclose(np.linalg.norm(log), np.pi, rtol=1e-15)
            np.testing.assert_allclose(np.abs(log @ n), np.pi, rtol=1e-14)
        else:  # relative accuracy, also for the tiny angles
            np.testing.assert_allclose(log, phi, rtol=1e-14, atol=1e-15 * theta)
    np.testing.assert_allclose(rot.so3_left_jacobian(phi) @ rot.so3_left_jacobian_inverse(phi), np.eye(3),
                               atol=1e-14)


@pytest.mark.parametrize("theta", [1e-9, 1e-5, 1.0, np.pi - 1e-7, np.pi + 1e-7, 2 * np.pi - 1e-5, 2 * np.pi - 1e-9])
def test_log_takes_the_short_angle(theta):
    """A rotation by theta > pi is logged as 2pi - theta about -n, from any of its representations."""
    n = np.array([2.0, -1.0, 0.5]) / np.linalg.norm([2.0, -1.0, 0.5])
    expected = theta * n if theta <= np.pi else -(2 * np.pi - theta) * n
    q = np.concatenate([[np.cos(theta / 2)], np.sin(theta / 2) * n])  # w < 0 when theta > pi
    for got in (rot.quat_to_rotvec(q), rot.quat_to_rotvec(-q), rot.so3_log(rodrigues(theta, n)),
                rot.so3_log(rot.so3_exp(theta * n))):
        np.testing.assert_allclose(got, expected, rtol=1e-8, atol=1e-14)
    assert rot.quat_to_angle_axis(q)[0] <= PI_UP


@pytest.mark.parametrize("v", [[1, 0, 0], [0, -1, 0], [0, 0, -1], [0, -1, 1], [-1, 2, -2], [3, -4, 0]])
def test_half_turns_give_one_answer_for_q_and_minus_q(v):
    """w = 0 exactly: q and -q both have w >= 0, and still give the same rotation vector."""
    q = np.concatenate([[0.0], v]) / np.linalg.norm(v)
    n = q[1:]
    for phi in (rot.quat_to_rotvec(q), rot.quat_to_rotvec(-q)):
        np.testing.assert_allclose(np.abs(phi @ n), np.pi, rtol=1e-15)
        np.testing.assert_allclose(np.cross(phi, n), 0.0, atol=1e-15)
    np.testing.assert_array_equal(rot.quat_to_rotvec(q), rot.quat_to_rotvec(-q))
    np.testing.assert_array_equal(rot.quat_box_minus(q, [1.0, 0, 0, 0]), rot.quat_box_minus(-q, [1.0, 0, 0, 0]))
    np.testing.assert_allclose(np.linalg.norm(rot.so3_log(sp(q).as_matrix())), np.pi, rtol=1e-15)


@pytest.mark.parametrize("scale", [1e-10, 1e-6, 1.0, 1e6, 1e160, 1e300])
def test_non_unit_quaternions_are_read_as_their_direction(scale):
    q = np.array([0.5, -0.1, 0.7, 0.3])
    u = q / np.linalg.norm(q)
    R = sp(u).as_matrix()
    for sign in (1.0, -1.0):
        s = sign * scale
        np.testing.assert_allclose(rot.quat_to_matrix(s * q), R, **TOL)
        np.testing.assert_allclose(rot.quat_normalize(s * q), sign * u, **TOL)
        np.testing.assert_allclose(rot.quat_to_rotvec(s * q), sp(u).as_rotvec(), **TOL)
        np.testing.assert_allclose(rot.quat_to_euler_zyx(s * q), rot.matrix_to_euler_zyx(R), **TOL)
        np.testing.assert_allclose(rot.quat_to_angle_axis(s * q)[1], rot.matrix_to_angle_axis(R)[1], **TOL)


def test_zero_quaternion_is_rejected():
    for f in (rot.quat_to_matrix, rot.quat_to_rotvec, rot.quat_normalize, rot.quat_to_euler_xyz):
        with pytest.raises(ValueError, match=r"^q .*zero"):
            f([0.0, 0.0, 0.0, 0.0])


# ------------------------------------------------------------------------------------------
# Box-plus / box-minus, slerp, discrete integration and differentiation
# ------------------------------------------------------------------------------------------
@PROPERTY
@given(unit_quats, vectors)
def test_box_plus_definition(q, w):
    R = sp(q).as_matrix()
    expected = scipy.linalg.expm(skew(w)) @ R  # so3_exp(w) @ R
    np.testing.assert_allclose(rot.box_plus(R, w), expected, **TOL)
    np.testing.assert_allclose(sp(rot.quat_box_plus(q, w)).as_matrix(), expected, **TOL)


@PROPERTY
@given(unit_quats, unit_quats)
def test_box_minus_definition(q1, q2):
    R1, R2 = sp(q1).as_matrix(), sp(q2).as_matrix()
    w = rot.box_minus(R1, R2)
    assert np.linalg.norm(w) <= PI_UP
    np.testing.assert_allclose(scipy.linalg.expm(skew(w)), R1 @ R2.T, **TOL)  # so3_log(R1 R2ᵀ)
    np.testing.assert_allclose(rot.box_plus(R2, w), R1, **TOL)
    wq = rot.quat_box_minus(q1, q2)
    np.testing.assert_allclose(rot.quat_box_minus(-q1, 2.0 * q2), wq, **TOL)
    if np.linalg.norm(w) < np.pi - 1e-6:
        np.testing.assert_allclose(w, Rotation.from_matrix(R1 @ R2.T).as_rotvec(), **TOL)
        np.testing.assert_allclose(wq, w, **TOL)


@PROPERTY
@given(unit_quats, rotvecs)
def test_box_minus_inverts_box_plus(q, w):
    R = sp(q).as_matrix()
    np.testing.assert_allclose(rot.box_minus(rot.box_plus(R, w), R), w, **TOL)
    np.testing.assert_allclose(rot.quat_box_minus(rot.quat_box_plus(q, w), q), w, **TOL)
    np.testing.assert_allclose(rot.box_minus(R, R), np.zeros(3), atol=1e-15)


@PROPERTY
@given(unit_quats, unit_quats, st.floats(0.0, 1.0))
def test_slerp_matches_scipy(q0, q1, t):
    got = rot.slerp(q0, q1, t)
    np.testing.assert_allclose(np.linalg.norm(got), 1.0, **TOL)
    if abs(q0 @ q1) < 1e-9:  # exactly pi apart: two short arcs, either is right
        np.testing.assert_allclose([(sp(got) * sp(q0).inv()).magnitude(), (sp(q1) * sp(got).inv()).magnitude()],
                                   [t * np.pi, (1 - t) * np.pi], atol=1e-9)
        return
    expected = Slerp([0.0, 1.0], sp(np.stack([q0, q1])))([t])[0]
    np.testing.assert_allclose(sp(got).as_matrix(), expected.as_matrix(), atol=1e-9)
    # Kindr: (q1 ⊗ q0*)^t ⊗ q0, the power taken on the short arc
    rel = Rotation.from_matrix(sp(q1).as_matrix() @ sp(q0).as_matrix().T).as_rotvec()
    np.testing.assert_allclose(sp(got).as_matrix(), Rotation.from_rotvec(t * rel).as_matrix() @ sp(q0).as_matrix(),
                               atol=1e-9)


@PROPERTY
@given(unit_quats, unit_quats)
def test_slerp_takes_the_short_path_at_constant_speed(q0, q1):
    ts = np.linspace(0.0, 1.0, 11)
    path = rot.slerp(q0, q1, ts)
    if abs(q0 @ q1) > 1e-9:  # (at exactly pi apart both arcs are short)
        np.testing.assert_allclose(rot.slerp(q0, -q1, ts), path, **TOL)  # the sign of q1 does not matter
    total = (sp(q1) * sp(q0).inv()).magnitude()  # in [0, pi]: the short way
    from_start = (sp(path) * sp(q0).inv()).magnitude()
    np.testing.assert_allclose(from_start, ts * total, atol=1e-9)
    np.testing.assert_allclose(sp(path[0]).as_matrix(), sp(q0).as_matrix(), **TOL)
    np.testing.assert_allclose(sp(path[-1]).as_matrix(), sp(q1).as_matrix(), **TOL)


def test_slerp_when_q0_and_q1_are_opposite_signs_of_one_rotation():
    q = np.array([0.2, 0.3, -0.5, 0.7]) / np.linalg.norm([0.2, 0.3, -0.5, 0.7])
    for t in (0.0, 0.3, 1.0):
        np.testing.assert_allclose(sp(rot.slerp(q, -q, t)).as_matrix(), sp(q).as_matrix(), **TOL)


@pytest.mark.parametrize("frame", ["world", "body"])
@PROPERTY
@given(q=unit_quats, omega=vectors, dt=st.floats(-0.5, 0.5))
def test_integrate_rotation_is_the_exact_constant_velocity_step(frame, q, omega, dt):
    R = sp(q).as_matrix()
    step = scipy.linalg.expm(skew(omega * dt))  # the solution of dR/dt = [w]x R (world) or R [w]x (body)
    expected = step @ R if frame == "world" else R @ step
    got = rot.integrate_rotation(q, omega, dt, frame=frame)
    np.testing.assert_allclose(np.linalg.norm(got), 1.0, **TOL)
    np.testing.assert_allclose(sp(got).as_matrix(), expected, **TOL)
    # the cheat sheet: Φ_IB ⊞ (I_ω Δt), and Φ_BI ⊞ (-B_ω Δt) for the inverse
    if frame == "world":
        np.testing.assert_allclose(sp(got).as_matrix(), rot.box_plus(R, omega * dt), **TOL)
    else:
        np.testing.assert_allclose(sp(got).as_matrix().T, rot.box_plus(R.T, -omega * dt), **TOL)


@pytest.mark.parametrize("frame", ["world", "body"])
def test_integrate_rotation_composes(frame):
    """n steps of dt equal one step of n dt (constant angular velocity)."""
    q, omega = np.array([0.3, -0.1, 0.8, 0.2]), np.array([0.7, -1.3, 2.1])
    one = rot.integrate_rotation(q, omega, 1.0, frame=frame)
    many = q / np.linalg.norm(q)
    for _ in range(50):
        many = rot.integrate_rotation(many, omega, 0.02, frame=frame)
    assert_same_rotation_quat(many, one, atol=1e-12)


@pytest.mark.parametrize("frame", ["world", "body"])
@PROPERTY
@given(q0=unit_quats, omega=vectors, dt=st.floats(0.01, 1.0) | st.floats(-1.0, -0.01))
def test_angular_velocity_from_difference_inverts_integration(frame, q0, omega, dt):
    if np.linalg.norm(omega * dt) >= np.pi - 1e-6:  # beyond pi the short arc is another motion
        omega = omega * (np.pi - 1e-3) / np.linalg.norm(omega * dt)
    q1 = rot.integrate_rotation(q0, omega, dt, frame=frame)
    np.testing.assert_allclose(rot.angular_velocity_from_difference(q0, q1, dt, frame=frame), omega, **TOL)
    np.testing.assert_allclose(rot.angular_velocity_from_difference(-q0, 2 * q1, dt, frame=frame), omega, **TOL)
    # the cheat sheet: I_ω = (Φ_IB(k+1) ⊟ Φ_IB(k)) / Δt,  B_ω = -(Φ_BI(k+1) ⊟ Φ_BI(k)) / Δt
    R0, R1 = sp(q0).as_matrix(), sp(q1).as_matrix()
    expected = rot.box_minus(R1, R0) / dt if frame == "world" else -rot.box_minus(R1.T, R0.T) / dt
    np.testing.assert_allclose(omega, expected, **TOL)


@pytest.mark.parametrize("frame", ["world", "body"])
def test_angular_velocity_from_difference_matches_the_derivative(frame):
    """For a small dt the discrete differential approaches the angular velocity of a smooth motion."""
    phi = lambda t: np.array([0.3 + t, -0.2 + 0.5 * t * t, 1.0 - 2 * t])  # noqa: E731
    R_of_t = lambda t: scipy.linalg.expm(skew(phi(t)))  # noqa: E731
    w_world, w_body = angular_velocities(R_of_t)
    dt = 1e-6
    q0, q1 = sp_quat(Rotation.from_matrix(R_of_t(-dt / 2))), sp_quat(Rotation.from_matrix(R_of_t(dt / 2)))
    np.testing.assert_allclose(rot.angular_velocity_from_difference(q0, q1, dt, frame=frame),
                               w_world if frame == "world" else w_body, rtol=1e-6, atol=1e-6)


# ------------------------------------------------------------------------------------------
# Angular velocity <-> parameter rates
# ------------------------------------------------------------------------------------------
def scipy_matrix(kind, c):
    """The rotation matrix of coordinates ``c`` of ``kind``, computed by SciPy."""
    if kind == "quat":
        return sp(c).as_matrix()  # (SciPy normalizes)
    if kind == "rotvec":
        return Rotation.from_rotvec(c).as_matrix()
    if kind == "angle_axis":
        return Rotation.from_rotvec(c[0] * c[1:] / np.linalg.norm(c[1:])).as_matrix()
    return Rotation.from_euler({"euler_zyx": "ZYX", "euler_xyz": "XYZ"}[kind], c).as_matrix()


def coordinate_speed(kind, c, cdot):
    """How fast the rotation moves along c + t cdot (for the finite-difference step)."""
    if kind == "quat":
        return np.linalg.norm(cdot) / np.linalg.norm(c)
    if kind == "angle_axis":
        return abs(cdot[0]) + np.linalg.norm(cdot[1:]) / np.linalg.norm(c[1:])
    return np.linalg.norm(cdot)


coords_by_kind = {
    "quat": quat_like.flatmap(lambda q: scales.map(lambda s: s * q)),  # non-unit too
    "rotvec": vectors,
    "angle_axis": st.tuples(st.floats(0.05, 2 * np.pi - 0.05) | st.floats(-2 * np.pi + 0.05, -0.05), axes).map(
        lambda ta: np.concatenate([[ta[0]], ta[1]])),
    "euler_zyx": eulers,
    "euler_xyz": eulers,
}
rates = arrays(np.float64, 4, elements=st.floats(-2.0, 2.0, allow_subnormal=False))
KINDS = list(coords_by_kind)


@pytest.mark.parametrize("frame", ["world", "body"])
@pytest.mark.parametrize("kind", KINDS)
@PROPERTY
@given(data=st.data())
def test_angular_velocity_from_rates_matches_finite_differences(kind, frame, data):
    """[w_world]x = dR/dt Rᵀ and [w_body]x = Rᵀ dR/dt along c(t) = c + t dc/dt."""
    c = data.draw(coords_by_kind[kind], label="coords")
    cdot = data.draw(rates, label="rates")[:c.size]
    if kind == "quat":
        cdot = cdot * np.linalg.norm(c)  # (rates in proportion to the quaternion)
    speed = coordinate_speed(kind, c, cdot)
    w_world, w_body = angular_velocities(lambda t: scipy_matrix(kind, c + t * cdot), speed)
    expected = w_world if frame == "world" else w_body
    scale = 1.0 + np.linalg.norm(expected)
    np.testing.assert_allclose(rot.angular_velocity_from_rates(kind, c, cdot, frame=frame), expected,
                               rtol=1e-7, atol=1e-7 * scale)
    E = rot.angular_velocity_matrix(kind, c, frame=frame)
    assert E.shape == (3, c.size)
    np.testing.assert_allclose(E @ cdot, expected, rtol=1e-7, atol=1e-7 * scale)


@pytest.mark.parametrize("frame", ["world", "body"])
@pytest.mark.parametrize("kind", KINDS)
@PROPERTY
@given(data=st.data())
def test_rates_from_angular_velocity_produce_that_angular_velocity(kind, frame, data):
    c = data.draw(coords_by_kind[kind], label="coords")
    omega = data.draw(vectors, label="omega")
    cdot = rot.rates_from_angular_velocity(kind, c, omega, frame=frame)
    assert cdot.shape == (c.size,)
    speed = coordinate_speed(kind, c, cdot)
    w_world, w_body = angular_velocities(lambda t: scipy_matrix(kind, c + t * cdot), speed)
    scale = 1.0 + speed
    np.testing.assert_allclose(w_world if frame == "world" else w_body, omega, rtol=1e-7, atol=1e-7 * scale)
    E, F = rot.angular_velocity_matrix(kind, c, frame=frame), rot.rate_matrix(kind, c, frame=frame)
    np.testing.assert_allclose(E @ F, np.eye(3), rtol=1e-9, atol=1e-9 * np.linalg.norm(F))
    if kind == "quat":  # the rate keeps |q| and is the textbook ½ [0, w_world] ⊗ q = ½ q ⊗ [0, w_body]
        assert_orthogonal(cdot, c, cdot)
        pure = np.concatenate([[0.0], omega])
        np.testing.assert_allclose(cdot, 0.5 * (hamilton(pure, c) if frame == "world" else hamilton(c, pure)),
                                   **TOL)
    elif kind == "angle_axis":  # the axis rate keeps |axis|
        assert_orthogonal(cdot[1:], c[1:], cdot)
    else:
        np.testing.assert_allclose(F @ E, np.eye(3), rtol=1e-9, atol=1e-9 * np.linalg.norm(F))


@PROPERTY
@given(zyx=eulers)
def test_euler_zyx_rate_maps_match_the_cheat_sheet(zyx):
    """Kindr's printed matrices for Euler ZYX (Appendix I)."""
    z, y, x = zyx
    sz, cz, sy, cy, sx, cx = np.sin(z), np.cos(z), np.sin(y), np.cos(y), np.sin(x), np.cos(x)
    E_world = np.array([[0, -sz, cy * cz], [0, cz, cy * sz], [1, 0, -sy]])
    E_body = np.array([[-sy, 0, 1], [cy * sx, cx, 0], [cx * cy, -sx, 0]])
    F_world = np.array([[cz * sy / cy, sy * sz / cy, 1], [-sz, cz, 0], [cz / cy, sz / cy, 0]])
    F_body = np.array([[0, sx / cy, cx / cy], [0, cx, -sx], [1, sx * sy / cy, cx * sy / cy]])
    tol = dict(rtol=1e-9, atol=1e-9 / cy)
    np.testing.assert_allclose(rot.angular_velocity_matrix("euler_zyx", zyx, "world"), E_world, **TOL)
    np.testing.assert_allclose(rot.angular_velocity_matrix("euler_zyx", zyx, "body"), E_body, **TOL)
    np.testing.assert_allclose(rot.rate_matrix("euler_zyx", zyx, "world"), F_world, **tol)
    np.testing.assert_allclose(rot.rate_matrix("euler_zyx", zyx, "body"), F_body, **tol)


@PROPERTY
@given(phi=vectors.filter(lambda v: np.linalg.norm(v) > 0.1))  # (the printed formulas cancel badly near 0)
def test_rotvec_rate_maps_match_the_cheat_sheet(phi):
    """Γ(φ) and the printed inverse (the body versions flip the sign of the odd term)."""
    t = np.linalg.norm(phi)
    S = skew(phi)
    a, b = (1 - np.cos(t)) / t ** 2, (t - np.sin(t)) / t ** 3
    d = (1 - t / 2 * np.sin(t) / (1 - np.cos(t))) / t ** 2
    tol = dict(rtol=1e-8, atol=1e-8)
    np.testing.assert_allclose(rot.angular_velocity_matrix("rotvec", phi, "world"), np.eye(3) + a * S + b * S @ S, **tol)
    np.testing.assert_allclose(rot.angular_velocity_matrix("rotvec", phi, "body"), np.eye(3) - a * S + b * S @ S, **tol)
    np.testing.assert_allclose(rot.rate_matrix("rotvec", phi, "world"), np.eye(3) - S / 2 + d * S @ S, **tol)
    np.testing.assert_allclose(rot.rate_matrix("rotvec", phi, "body"), np.eye(3) + S / 2 + d * S @ S, **tol)


@pytest.mark.parametrize("frame", ["world", "body"])
@PROPERTY
@given(q=quat_like, omega=vectors)
def test_quaternion_rate_integrates_to_the_exact_rotation(frame, q, omega):
    """A short explicit step along q̇ agrees with integrate_rotation to second order."""
    qdot = rot.rates_from_angular_velocity("quat", q, omega, frame=frame)
    h = 1e-6
    exact = rot.integrate_rotation(q, omega, h, frame=frame)
    assert_same_rotation_quat((q + h * qdot) / np.linalg.norm(q + h * qdot), exact, atol=1e-10)


@pytest.mark.parametrize("kind", ["euler_zyx", "euler_xyz"])
@pytest.mark.parametrize("sign", [1.0, -1.0])
@pytest.mark.parametrize("frame", ["world", "body"])
def test_euler_rates_do_not_exist_at_gimbal_lock(kind, sign, frame):
    c = np.array([0.4, sign * np.pi / 2, -1.1])
    with pytest.raises(ValueError, match="^coords.*gimbal lock"):
        rot.rate_matrix(kind, c, frame)
    with pytest.raises(ValueError, match="^coords.*gimbal lock"):
        rot.rates_from_angular_velocity(kind, c, [0.1, 0.2, 0.3], frame)
    # the forward map exists there, and is rank 2
    E = rot.angular_velocity_matrix(kind, c, frame)
    assert np.linalg.matrix_rank(E, tol=1e-9) == 2
    cdot = np.array([0.3, -0.7, 0.2])
    w_world, w_body = angular_velocities(lambda t: scipy_matrix(kind, c + t * cdot))
    np.testing.assert_allclose(E @ cdot, w_world if frame == "world" else w_body, **FD_TOL)


@pytest.mark.parametrize("turns", [1, 2])
def test_rotvec_rates_do_not_exist_at_whole_turns(turns):
    """Γ is singular at |φ| = 2π k: no rate map there (it returned entries of 1e16)."""
    phi = 2 * np.pi * turns * np.array([0.36, -0.48, 0.8])
    for frame in ("world", "body"):
        with pytest.raises(ValueError, match="^coords: a rotation vector of angle 2 pi k"):
            rot.rate_matrix("rotvec", phi, frame)
    with pytest.raises(ValueError, match="^phi: a rotation vector of angle 2 pi k"):
        rot.so3_left_jacobian_inverse(phi)
    near = rot.so3_left_jacobian_inverse(phi * (1 - 1e-4))  # still finite, and Γ's inverse
    np.testing.assert_allclose(near @ rot.so3_left_jacobian(phi * (1 - 1e-4)), np.eye(3), atol=1e-8)


def test_angle_axis_rates_do_not_exist_at_zero_angle():
    with pytest.raises(ValueError, match="^coords"):
        rot.rate_matrix("angle_axis", [0.0, 0.0, 0.0, 1.0])
    E = rot.angular_velocity_matrix("angle_axis", [0.0, 0.0, 0.0, 2.0])
    np.testing.assert_allclose(E, [[0, 0, 0, 0], [0, 0, 0, 0], [1, 0, 0, 0]], atol=1e-15)


# ------------------------------------------------------------------------------------------
# The exponential-map Jacobian Γ
# ------------------------------------------------------------------------------------------
def gamma_by_quadrature(phi):
    """Γ(φ) = ∫₀¹ exp(s [φ]x) ds by 20-point Gauss-Legendre quadrature (SciPy's exp)."""
    nodes, weights = np.polynomial.legendre.leggauss(20)
    exps = Rotation.from_rotvec((nodes[:, None] + 1) / 2 * phi).as_matrix()
    return np.einsum("k,kij->ij", weights / 2, exps)


@PROPERTY
@given(vectors)
def test_left_jacobian_is_the_integral_of_exp(phi):
    np.testing.assert_allclose(rot.so3_left_jacobian(phi), gamma_by_quadrature(phi), **TOL)
    np.testing.assert_allclose(rot.so3_right_jacobian(phi), gamma_by_quadrature(-phi), **TOL)


@PROPERTY
@given(vectors.filter(lambda v: np.linalg.norm(v) < 2 * np.pi - 0.3))
def test_left_jacobian_times_its_inverse_is_identity(phi):
    J, Jinv = rot.so3_left_jacobian(phi), rot.so3_left_jacobian_inverse(phi)
    np.testing.assert_allclose(J @ Jinv, np.eye(3), **TOL)
    np.testing.assert_allclose(Jinv @ J, np.eye(3), **TOL)
    np.testing.assert_allclose(rot.so3_right_jacobian(phi) @ rot.so3_right_jacobian_inverse(phi), np.eye(3), **TOL)
    # Γ(φ) = exp(φ) Γ(-φ): the left Jacobian is the rotated right one
    np.testing.assert_allclose(J, scipy.linalg.expm(skew(phi)) @ rot.so3_right_jacobian(phi), **TOL)


def series(t, coefficients):
    return sum(c * t ** (2 * k) for k, c in enumerate(coefficients))


FACTORIAL = [float(np.prod(np.arange(1, n + 1))) for n in range(30)]
SIN_C = [(-1) ** k / FACTORIAL[2 * k + 1] for k in range(12)]   # sin t / t
COS_C = [(-1) ** k / FACTORIAL[2 * k + 2] for k in range(12)]   # (1 - cos t) / t²
TAN_C = [(-1) ** k / FACTORIAL[2 * k + 3] for k in range(12)]   # (t - sin t) / t³
BERNOULLI = [1 / 6, 1 / 30, 1 / 42, 1 / 30, 5 / 66, 691 / 2730, 7 / 6, 3617 / 510, 43867 / 798]  # |B_2n|
INV_C = [b / FACTORIAL[2 * n + 2] for n, b in enumerate(BERNOULLI)]  # (1 - t/2 cot(t/2)) / t²


@pytest.mark.parametrize("t", [1e-8, 1e-5, 1e-3 * (1 - 1e-9), 1e-3, 1e-3 * (1 + 1e-9), 0.01, 0.1, 0.5 * (1 - 1e-9),
                               0.5 * (1 + 1e-9), 0.7])
def test_small_angle_coefficients_to_full_relative_accuracy(t):
    """exp = I + a S + b S², Γ = I + b S + c S², Γ⁻¹ = I - S/2 + d S², with the
    coefficients from their power series; read off without the identity (the
    antisymmetric part, and the off-diagonal of the symmetric part, which is
    coefficient * φ_i φ_j), so the tiny terms are checked to (nearly) relative accuracy."""
    phi = t * np.array([0.48, -0.6, 0.64])  # unit direction, no zero component
    S, outer = skew(phi), np.outer(phi, phi)
    off = ~np.eye(3, dtype=bool)
    a, b, c, d = (series(t, k) for k in (SIN_C, COS_C, TAN_C, INV_C))
    for M, odd, even in [(rot.so3_exp(phi), a, b), (rot.so3_left_jacobian(phi), b, c),
                         (rot.so3_left_jacobian_inverse(phi), -0.5, d),
                         (rot.angular_velocity_matrix("rotvec", phi, "body"), -b, c)]:
        np.testing.assert_allclose((M - M.T) / 2, odd * S, rtol=1e-14, atol=0)
        # (each entry also holds the odd part: its rounding bounds the accuracy of the even one)
        np.testing.assert_allclose(((M + M.T) / 2)[off], even * outer[off], rtol=1e-13,
                                   atol=4 * np.finfo(float).eps * abs(odd) * t)


@PROPERTY
@given(rotvecs.filter(lambda v: np.linalg.norm(v) < np.pi - 0.05), vectors)  # (away from the log's cut)
def test_derivative_of_log_is_the_inverse_jacobian(phi, delta):
    """d/dε log(exp(ε δ) R) at 0 = Γ⁻¹(log R) δ (the cheat sheet's ∂log/∂v)."""
    R = Rotation.from_rotvec(phi).as_matrix()
    fd = derivative(lambda e: Rotation.from_matrix(scipy.linalg.expm(skew(e * delta)) @ R).as_rotvec(), h=1e-4)
    np.testing.assert_allclose(rot.so3_left_jacobian_inverse(phi) @ delta, fd, **FD_TOL)


# ------------------------------------------------------------------------------------------
# Batching: leading dimensions give the per-sample results
# ------------------------------------------------------------------------------------------
def _sample(kind, shape, rng):
    if kind == "quat":
        return rng.normal(size=shape + (4,))
    if kind == "vec":
        return rng.normal(size=shape + (3,))
    if kind == "R":
        n = int(np.prod(shape))
        return Rotation.random(max(n, 1), random_state=rng).as_matrix()[:n].reshape(shape + (3, 3))
    if kind == "scalar":
        return rng.uniform(-1.0, 1.0, size=shape)
    if kind == "angle_axis":
        return rng.normal(size=shape + (4,)) + np.array([2.0, 0, 0, 0])
    raise AssertionError(kind)


BATCHED = {
    "skew": (rot.skew, ["vec"]),
    "unskew": (rot.unskew, ["R"]),
    "quat_multiply": (rot.quat_multiply, ["quat", "quat"]),
    "quat_conjugate": (rot.quat_conjugate, ["quat"]),
    "quat_normalize": (rot.quat_normalize, ["quat"]),
    "quat_left_matrix": (rot.quat_left_matrix, ["quat"]),
    "quat_right_matrix": (rot.quat_right_matrix, ["quat"]),
    "quat_to_matrix": (rot.quat_to_matrix, ["quat"]),
    "matrix_to_quat": (rot.matrix_to_quat, ["R"]),
    "so3_exp": (rot.so3_exp, ["vec"]),
    "so3_log": (rot.so3_log, ["R"]),
    "rotvec_to_quat": (rot.rotvec_to_quat, ["vec"]),
    "quat_to_rotvec": (rot.quat_to_rotvec, ["quat"]),
    "angle_axis_to_matrix": (rot.angle_axis_to_matrix, ["scalar", "vec"]),
    "matrix_to_angle_axis": (rot.matrix_to_angle_axis, ["R"]),
    "angle_axis_to_quat": (rot.angle_axis_to_quat, ["scalar", "vec"]),
    "quat_to_angle_axis": (rot.quat_to_angle_axis, ["quat"]),
    "euler_zyx_to_matrix": (rot.euler_zyx_to_matrix, ["vec"]),
    "matrix_to_euler_zyx": (rot.matrix_to_euler_zyx, ["R"]),
    "euler_xyz_to_matrix": (rot.euler_xyz_to_matrix, ["vec"]),
    "matrix_to_euler_xyz": (rot.matrix_to_euler_xyz, ["R"]),
    "euler_zyx_to_quat": (rot.euler_zyx_to_quat, ["vec"]),
    "quat_to_euler_zyx": (rot.quat_to_euler_zyx, ["quat"]),
    "euler_xyz_to_quat": (rot.euler_xyz_to_quat, ["vec"]),
    "quat_to_euler_xyz": (rot.quat_to_euler_xyz, ["quat"]),
    "box_plus": (rot.box_plus, ["R", "vec"]),
    "box_minus": (rot.box_minus, ["R", "R"]),
    "quat_box_plus": (rot.quat_box_plus, ["quat", "vec"]),
    "quat_box_minus": (rot.quat_box_minus, ["quat", "quat"]),
    "slerp": (rot.slerp, ["quat", "quat", "scalar"]),
    "integrate_rotation": (rot.integrate_rotation, ["quat", "vec", "scalar"]),
    "integrate_rotation_body": (lambda q, w, dt: rot.integrate_rotation(q, w, dt, "body"), ["quat", "vec", "scalar"]),
    "angular_velocity_from_difference": (lambda q0, q1, dt: rot.angular_velocity_from_difference(q0, q1, dt + 2.0),
                                         ["quat", "quat", "scalar"]),
    "so3_left_jacobian": (rot.so3_left_jacobian, ["vec"]),
    "so3_left_jacobian_inverse": (rot.so3_left_jacobian_inverse, ["vec"]),
    "so3_right_jacobian": (rot.so3_right_jacobian, ["vec"]),
    "so3_right_jacobian_inverse": (rot.so3_right_jacobian_inverse, ["vec"]),
}
for _kind, _n, _sample_kind in [("quat", 4, "quat"), ("rotvec", 3, "vec"), ("euler_zyx", 3, "vec"),
                                ("euler_xyz", 3, "vec"), ("angle_axis", 4, "angle_axis")]:
    for _frame in ("world", "body"):
        BATCHED["angular_velocity_matrix_%s_%s" % (_kind, _frame)] = (
            lambda c, k=_kind, f=_frame: rot.angular_velocity_matrix(k, c, f), [_sample_kind])
        BATCHED["rate_matrix_%s_%s" % (_kind, _frame)] = (
            lambda c, k=_kind, f=_frame: rot.rate_matrix(k, c, f), [_sample_kind])
        BATCHED["rates_from_angular_velocity_%s_%s" % (_kind, _frame)] = (
            lambda c, w, k=_kind, f=_frame: rot.rates_from_angular_velocity(k, c, w, f), [_sample_kind, "vec"])
        BATCHED["angular_velocity_from_rates_%s_%s" % (_kind, _frame)] = (
            lambda c, r, k=_kind, f=_frame: rot.angular_velocity_from_rates(k, c, r, f), [_sample_kind, _sample_kind])


@pytest.mark.parametrize("shape", [(4, 5), (7,), (0,)], ids=str)
@pytest.mark.parametrize("name", BATCHED)
def test_batched_equals_per_sample(name, shape):
    f, kinds = BATCHED[name]
    rng = np.random.default_rng(zlib.crc32(name.encode()))
    args = [_sample(k, shape, rng) for k in kinds]
    batched = f(*args)
    batched = batched if isinstance(batched, tuple) else (batched,)
    for index in np.ndindex(*shape):
        single = f(*[a[index] for a in args])
        single = single if isinstance(single, tuple) else (single,)
        for b, s in zip(batched, single):
            assert b[index].shape == np.shape(s)
            np.testing.assert_allclose(b[index], s, rtol=1e-13, atol=1e-13)
    assert all(b.shape[:len(shape)] == shape for b in batched)


def test_batch_dimensions_broadcast():
    """A single quaternion against a batch; a batch of times for one pair (slerp)."""
    rng = np.random.default_rng(1)
    q, p = rng.normal(size=4), rng.normal(size=(3, 2, 4))
    np.testing.assert_allclose(rot.quat_multiply(q, p), [[hamilton(q, pij) for pij in pi] for pi in p], **TOL)
    ts = np.linspace(0, 1, 5)
    np.testing.assert_allclose(rot.slerp(q, p[0, 0], ts), [rot.slerp(q, p[0, 0], t) for t in ts], **TOL)


# ------------------------------------------------------------------------------------------
# Bad input: ValueError naming the argument
# ------------------------------------------------------------------------------------------
GOOD = dict(q=np.array([1.0, 0, 0, 0]), vec=np.array([0.1, 0.2, 0.3]), R=np.eye(3))
NAN3, INF4 = np.array([0.0, np.nan, 1.0]), np.array([1.0, 0.0, np.inf, 0.0])
BAD_R = np.diag([1.0, 1.0, -1.0])  # orthogonal, det -1


@pytest.mark.parametrize("call, name", [
    (lambda: rot.skew([1.0, 2.0]), "w"),
    (lambda: rot.skew(NAN3), "w"),
    (lambda: rot.unskew(np.eye(2)), "S"),
    (lambda: rot.quat_multiply(GOOD["q"], [1.0, 2.0, 3.0]), "q"),
    (lambda: rot.quat_multiply(INF4, GOOD["q"]), "p"),
    (lambda: rot.quat_conjugate(np.ones((2, 5))), "q"),
    (lambda: rot.quat_left_matrix([1.0, 0.0, 0.0]), "q"),
    (lambda: rot.quat_right_matrix(INF4), "p"),
    (lambda: rot.quat_normalize(np.zeros(4)), "q"),
    (lambda: rot.quat_to_matrix(np.zeros((3, 4))), "q"),
    (lambda: rot.quat_to_matrix([np.nan, 0.0, 0.0, 1.0]), "q"),
    (lambda: rot.quat_to_matrix(5.0), "q"),
    (lambda: rot.matrix_to_quat(np.eye(4)), "R"),
    (lambda: rot.matrix_to_quat(BAD_R), "R"),
    (lambda: rot.matrix_to_quat(2.0 * np.eye(3)), "R"),
    (lambda: rot.matrix_to_quat(np.full((3, 3), np.inf)), "R"),
    (lambda: rot.so3_exp([0.1, 0.2, 0.3, 0.4]), "w"),
    (lambda: rot.so3_exp(NAN3), "w"),
    (lambda: rot.so3_log(np.ones((3, 3))), "R"),
    (lambda: rot.so3_log(np.eye(3)[:2]), "R"),
    (lambda: rot.rotvec_to_quat([np.inf, 0.0, 0.0]), "phi"),
    (lambda: rot.quat_to_rotvec(np.zeros(4)), "q"),
    (lambda: rot.angle_axis_to_matrix(np.nan, [1.0, 0, 0]), "angle"),
    (lambda: rot.angle_axis_to_matrix([0.1, 0.2], np.ones((3, 3))), "batch"),
    (lambda: rot.angle_axis_to_matrix(0.1, [0.0, 0, 0]), "axis"),
    (lambda: rot.angle_axis_to_quat(0.1, [1.0, 0]), "axis"),
    (lambda: rot.matrix_to_angle_axis(BAD_R), "R"),
    (lambda: rot.quat_to_angle_axis([0.0, 0, 0, 0]), "q"),
    (lambda: rot.euler_zyx_to_matrix([0.1, 0.2]), "zyx"),
    (lambda: rot.euler_xyz_to_matrix(NAN3), "xyz"),
    (lambda: rot.euler_zyx_to_quat([0.1, np.inf, 0.0]), "zyx"),
    (lambda: rot.matrix_to_euler_zyx(BAD_R), "R"),
    (lambda: rot.matrix_to_euler_xyz(np.zeros((3, 3))), "R"),
    (lambda: rot.quat_to_euler_zyx(np.zeros(4)), "q"),
    (lambda: rot.box_plus(BAD_R, GOOD["vec"]), "R"),
    (lambda: rot.box_plus(GOOD["R"], NAN3), "w"),
    (lambda: rot.box_minus(GOOD["R"], BAD_R), "R2"),
    (lambda: rot.box_minus(np.ones((3, 3)), GOOD["R"]), "R1"),
    (lambda: rot.box_plus(np.stack([np.eye(3)] * 2), np.zeros((3, 3))), "batch"),
    (lambda: rot.quat_box_plus(np.zeros(4), GOOD["vec"]), "q"),
    (lambda: rot.quat_box_minus(GOOD["q"], np.zeros(4)), "q2"),
    (lambda: rot.slerp(np.zeros(4), GOOD["q"], 0.5), "q0"),
    (lambda: rot.slerp(GOOD["q"], INF4, 0.5), "q1"),
    (lambda: rot.slerp(GOOD["q"], GOOD["q"], np.nan), "t"),
    (lambda: rot.slerp(np.ones((2, 4)), np.ones((3, 4)), 0.5), "batch"),
    (lambda: rot.integrate_rotation(GOOD["q"], [1.0, 2.0], 0.1), "omega"),
    (lambda: rot.integrate_rotation(GOOD["q"], GOOD["vec"], np.inf), "dt"),
    (lambda: rot.integrate_rotation(GOOD["q"], GOOD["vec"], 0.1, frame="local"), "frame"),
    (lambda: rot.integrate_rotation(np.zeros(4), GOOD["vec"], 0.1), "q"),
    (lambda: rot.angular_velocity_from_difference(GOOD["q"], GOOD["q"], 0.0), "dt"),
    (lambda: rot.angular_velocity_from_difference(GOOD["q"], np.zeros(4), 0.1), "q1"),
    (lambda: rot.angular_velocity_from_difference(GOOD["q"], GOOD["q"], 0.1, frame="spatial"), "frame"),
    (lambda: rot.so3_left_jacobian([np.nan, 0.0, 0.0]), "phi"),
    (lambda: rot.so3_left_jacobian_inverse(np.zeros(4)), "phi"),
    (lambda: rot.angular_velocity_matrix("rpy", GOOD["vec"]), "kind"),
    (lambda: rot.angular_velocity_matrix("quat", GOOD["vec"]), "coords"),
    (lambda: rot.angular_velocity_matrix("quat", np.zeros(4)), "coords"),
    (lambda: rot.angular_velocity_matrix("rotvec", GOOD["vec"], frame="inertial"), "frame"),
    (lambda: rot.rate_matrix("euler_zyx", NAN3), "coords"),
    (lambda: rot.rate_matrix("angle_axis", [1.0, 0.0, 0.0, 0.0]), "coords"),
    (lambda: rot.angular_velocity_from_rates("rotvec", GOOD["vec"], np.ones(4)), "rates"),
    (lambda: rot.angular_velocity_from_rates("quat", GOOD["q"], np.ones(3)), "rates"),
    (lambda: rot.angular_velocity_from_rates("quat", np.ones((2, 4)), np.ones((3, 4))), "batch"),
    (lambda: rot.rates_from_angular_velocity("rotvec", GOOD["vec"], [np.nan, 0, 0]), "omega"),
])
def test_bad_input_raises_value_error_naming_the_argument(call, name):
    if name == "batch":  # mismatched batch dimensions name every argument involved
        with pytest.raises(ValueError, match="batch dimensions"):
            call()
    else:
        with pytest.raises(ValueError, match=r"^%s\b" % re.escape(name)):
            call()


def test_non_numeric_input_is_a_type_error():
    with pytest.raises(TypeError, match="^q "):
        rot.quat_to_matrix(["a", "b", "c", "d"])


# ------------------------------------------------------------------------------------------
# convert: every parameterization to every other, against SciPy
# ------------------------------------------------------------------------------------------
def _scipy_as(kind, rot):
    """The rotations ``rot`` in ``kind``, computed by SciPy (quaternions w first)."""
    if kind == "matrix":
        return rot.as_matrix()
    if kind == "quat":
        return np.roll(rot.as_quat(), 1, axis=-1)
    if kind == "rotvec":
        return rot.as_rotvec()
    if kind == "angle_axis":
        phi = rot.as_rotvec()
        angle = np.linalg.norm(phi, axis=-1)
        return np.concatenate([angle[..., None], phi / angle[..., None]], axis=-1)
    return rot.as_euler("ZYX" if kind == "euler_zyx" else "XYZ")


def _scipy_from(kind, x):
    if kind == "matrix":
        return Rotation.from_matrix(x)
    if kind == "quat":
        return Rotation.from_quat(np.roll(x, -1, axis=-1))
    if kind == "rotvec":
        return Rotation.from_rotvec(x)
    if kind == "angle_axis":
        return Rotation.from_rotvec(x[..., :1] * x[..., 1:])
    return Rotation.from_euler("ZYX" if kind == "euler_zyx" else "XYZ", x)


@pytest.mark.parametrize("target", sorted(rot.ROTATION_KINDS))
@pytest.mark.parametrize("source", sorted(rot.ROTATION_KINDS))
def test_convert_every_direction_agrees_with_scipy(source, target):
    rotations = Rotation.random(12, random_state=7)
    value = _scipy_as(source, rotations)
    got = rot.convert(value, source, target)
    assert got.shape == (12,) + rot.ROTATION_KINDS[target]
    # The answer names the same rotation (SciPy reads it back) ...
    np.testing.assert_allclose(_scipy_from(target, got).as_matrix(), rotations.as_matrix(), atol=1e-12)
    # ... in the module's conventions, and one sample equals the batch.
    if target == "quat":
        assert np.all(got[:, 0] >= 0.0)
    if target in ("euler_zyx", "euler_xyz"):
        assert np.all(np.abs(got[:, 1]) <= np.pi / 2)
    np.testing.assert_allclose(rot.convert(value[3], source, target), got[3], rtol=0, atol=1e-15)


@pytest.mark.parametrize("target", sorted(rot.ROTATION_KINDS))
@pytest.mark.parametrize("source", ["rotvec", "angle_axis"])
def test_convert_follows_the_conventions_for_angles_beyond_pi(source, target):
    """Rotation vectors and angle-axis values of any angle (4, -7, 1e6 rad): the direct routes
    give what SciPy reads as the same rotation, with w >= 0 and angles in [0, pi]."""
    axis = np.array([0.36, -0.48, 0.8])
    angles = np.array([4.0, -7.0, 2 * np.pi - 0.5, 1e6])
    value = (angles[:, None] * axis if source == "rotvec"
             else np.concatenate([angles[:, None], np.tile(axis, (4, 1))], axis=1))
    got = rot.convert(value, source, target)
    expected = Rotation.from_rotvec(angles[:, None] * axis).as_matrix()
    np.testing.assert_allclose(_scipy_from(target, got).as_matrix(), expected, atol=1e-9)  # (1e6 rad: 1e-10)
    if target == "quat":
        assert np.all(got[:, 0] >= 0.0)
    if target == "rotvec":
        assert np.all(np.linalg.norm(got, axis=1) <= np.pi)
    if target == "angle_axis":
        assert np.all((got[:, 0] >= 0.0) & (got[:, 0] <= np.pi))


def test_convert_rejects_unknown_kinds_and_bad_shapes():
    with pytest.raises(ValueError, match="source must be one of"):
        rot.convert(np.zeros(3), "euler_zxz", "quat")
    with pytest.raises(ValueError, match="target must be one of"):
        rot.convert(np.zeros(3), "rotvec", "dcm")
    with pytest.raises(ValueError, match=r"value must have shape \(\.\.\., 4\)"):
        rot.convert(np.zeros(3), "quat", "matrix")
    with pytest.raises(ValueError, match="value must contain only finite"):
        rot.convert([np.nan, 0.0, 0.0], "rotvec", "quat")
    with pytest.raises(ValueError, match=r"source must be one of .*got \['rotvec'\]"):  # (not "unhashable")
        rot.convert(np.zeros(3), ["rotvec"], "quat")
    with pytest.raises(ValueError, match=r"kind must be one of .*got \['quat'\]"):
        rot.rate_matrix(["quat"], [1.0, 0.0, 0.0, 0.0])
    with pytest.raises(ValueError, match="value's axis .* must be a non-zero 3-vector"):
        rot.convert([1.0, 0.0, 0.0, 0.0], "angle_axis", "rotvec")
    R = rot.so3_exp([0.1, 0.2, 0.3])
    same = rot.convert(R, "matrix", "matrix")
    assert same is not R and not np.shares_memory(same, R) and np.array_equal(same, R)


@pytest.mark.parametrize("exponent", [1, 12, 66, 200, 340, 500])
def test_exp_and_its_jacobian_at_many_turns(exponent):
    """At 2^k rad (up to 3e150) about an axis of exact length, exp and Γ against Rodrigues'
    forms about the unit axis u: R = cos t + sin t [u]x + (1 - cos t) u u^T and
    Γ = sin t / t + (1 - cos t)/t [u]x + (1 - sin t / t) u u^T.  (In φ = t u, Γ's
    (t - sin t)/t³ overflowed to 0 from 1e103: Γ lost its u u^T term.)"""
    direction, n = np.array([2.0, -3.0, 6.0]), 7.0  # |direction| = 7 exactly
    t = n * 2.0 ** exponent
    u = direction / n
    K = skew(u)
    R = np.cos(t) * np.eye(3) + np.sin(t) * K + (1.0 - np.cos(t)) * np.outer(u, u)
    gamma = np.sin(t) / t * np.eye(3) + (1.0 - np.cos(t)) / t * K + (1.0 - np.sin(t) / t) * np.outer(u, u)
    phi = direction * 2.0 ** exponent
    np.testing.assert_allclose(rot.so3_exp(phi), R, rtol=0, atol=1e-15)
    np.testing.assert_allclose(rot.so3_left_jacobian(phi), gamma, rtol=0, atol=1e-15)
    np.testing.assert_allclose(rot.so3_right_jacobian(phi), gamma.T, rtol=0, atol=1e-15)


def test_so3_exp_takes_its_argument_by_the_name_api_md_gives():
    """API.md: ``so3_exp(w)`` (it was named phi)."""
    np.testing.assert_allclose(rot.so3_exp(w=[0.0, 0.0, np.pi / 2]), Rz(np.pi / 2), rtol=0, atol=1e-15)
