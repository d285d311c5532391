"""Spatial algebra (rbd.spatial and its compiled mirror in rbd_c).

Every test that takes ``spatial_impl`` runs on both backends.  The oracles are
independent of the library: the dense textbook 6x6 matrices of the Pinocchio
SE(3) cheat sheet written out here, rotations built here from quaternions,
``scipy.linalg.expm``, group identities, and rigid bodies made of point masses
whose momentum, kinetic energy and inertia are plain sums.
"""
import importlib

import numpy as np
import pytest
import scipy.linalg
from scipy.spatial.transform import Rotation
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

import rbd.spatial

from conftest import HAVE_COMPILED
from oracles.textbook import Xmotion, skew

TOL = dict(rtol=1e-10, atol=1e-10)
PROPERTY = settings(max_examples=40, deadline=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture])


# ------------------------------------------------------------------------------------------
# Independent helpers (no rbd code)
# ------------------------------------------------------------------------------------------
def quat_to_matrix(q):
    """Rotation matrix of a (not necessarily unit) Hamilton quaternion [w, x, y, z]."""
    w, x, y, z = np.asarray(q, dtype=float) / np.linalg.norm(q)
    return np.array([
        [1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
        [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
        [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)],
    ])


def transform(R, p):
    M = np.eye(4)
    M[:3, :3] = R
    M[:3, 3] = p
    return M


X_motion = Xmotion  # textbook Ad_M = [[R, [p]x R], [0, R]]


def X_motion_inverse(M):
    """Textbook Ad_M^{-1} = [[R^T, -R^T [p]x], [0, R^T]]."""
    R, p = M[:3, :3], M[:3, 3]
    X = np.zeros((6, 6))
    X[:3, :3] = R.T
    X[:3, 3:] = -R.T @ skew(p)
    X[3:, 3:] = R.T
    return X


def X_force(M):
    """Textbook Ad_M^{-T} = [[R, 0], [[p]x R, R]]."""
    R, p = M[:3, :3], M[:3, 3]
    X = np.zeros((6, 6))
    X[:3, :3] = R
    X[3:, :3] = skew(p) @ R
    X[3:, 3:] = R
    return X


def ad_dense(m):
    """Textbook ad_m = [[[w]x, [v]x], [0, [w]x]]."""
    A = np.zeros((6, 6))
    A[:3, :3] = skew(m[3:])
    A[:3, 3:] = skew(m[:3])
    A[3:, 3:] = skew(m[3:])
    return A


def inertia_dense(mass, com, I_com):
    """Textbook [[m 1, m [c]x^T], [m [c]x, I_c + m [c]x [c]x^T]]."""
    C = skew(com)
    Y = np.zeros((6, 6))
    Y[:3, :3] = mass * np.eye(3)
    Y[:3, 3:] = mass * C.T
    Y[3:, :3] = mass * C
    Y[3:, 3:] = I_com + mass * C @ C.T
    return Y


def twist_matrix(xi):
    """The 4x4 element of se(3) of the twist [v; w]."""
    T = np.zeros((4, 4))
    T[:3, :3] = skew(xi[3:])
    T[:3, 3] = xi[:3]
    return T


class PointCloud:
    """A rigid body made of point masses (body coordinates): every quantity by direct sums."""

    def __init__(self, masses, points):
        self.masses = np.asarray(masses, dtype=float)
        self.points = np.asarray(points, dtype=float)

    @property
    def mass(self):
        return self.masses.sum()

    @property
    def com(self):
        return (self.masses[:, None] * self.points).sum(0) / self.mass

    def inertia_about(self, origin):
        I = np.zeros((3, 3))
        for mu, r in zip(self.masses, self.points - origin):
            I += mu * (r @ r * np.eye(3) - np.outer(r, r))
        return I

    def inertia10(self):
        """[m, sum mu r, I about the origin: xx, xy, xz, yy, yz, zz]."""
        I = self.inertia_about(np.zeros(3))
        h = (self.masses[:, None] * self.points).sum(0)
        return np.concatenate([[self.mass], h, I[np.triu_indices(3)]])

    def moved(self, M):
        return PointCloud(self.masses, self.points @ M[:3, :3].T + M[:3, 3])

    def point_velocities(self, twist):
        return twist[:3] + np.cross(twist[3:], self.points)

    def momentum(self, twist):
        """[sum mu v_i; sum r_i x mu v_i] about the origin."""
        mv = self.masses[:, None] * self.point_velocities(twist)
        return np.concatenate([mv.sum(0), np.cross(self.points, mv).sum(0)])

    def kinetic_energy(self, twist):
        vel = self.point_velocities(twist)
        return 0.5 * np.sum(self.masses * np.sum(vel * vel, axis=1))


# ------------------------------------------------------------------------------------------
# Strategies and random samples
# ------------------------------------------------------------------------------------------
unit = st.floats(-1.0, 1.0, allow_nan=False, allow_infinity=False)
quaternions = st.tuples(unit, unit, unit, unit).filter(lambda q: sum(x * x for x in q) > 1e-2)
vec3 = arrays(np.float64, 3, elements=st.floats(-2.0, 2.0, allow_nan=False))
vec6 = arrays(np.float64, 6, elements=st.floats(-3.0, 3.0, allow_nan=False))
transforms = st.builds(lambda q, p: transform(quat_to_matrix(q), p), quaternions, vec3)
clouds = st.builds(
    PointCloud,
    arrays(np.float64, 5, elements=st.floats(0.1, 2.0)),
    arrays(np.float64, (5, 3), elements=st.floats(-1.0, 1.0, allow_nan=False)),
)
inertias = clouds.map(lambda c: c.inertia10())


def random_transforms(rng, shape):
    q = rng.normal(size=tuple(shape) + (4,))
    out = np.zeros(tuple(shape) + (4, 4))
    for idx in np.ndindex(*shape):
        out[idx] = transform(quat_to_matrix(q[idx]), rng.normal(size=3))
    return out


def random_inertias(rng, shape):
    out = np.zeros(tuple(shape) + (10,))
    for idx in np.ndindex(*shape):
        out[idx] = PointCloud(rng.uniform(0.1, 2.0, 4), rng.normal(size=(4, 3))).inertia10()
    return out


def random_spd(rng, shape):
    A = rng.normal(size=tuple(shape) + (3, 3))
    return A @ np.swapaxes(A, -1, -2) + 0.1 * np.eye(3)


# Every public function: its arguments as (name, per-sample shape); a kind per argument
# tells how to draw a valid sample.
SIGNATURES = {
    "se3_exp": [("twist", (6,))],
    "se3_log": [("M", (4, 4))],
    "se3_inverse": [("M", (4, 4))],
    "se3_compose": [("A", (4, 4)), ("B", (4, 4))],
    "se3_act_point": [("M", (4, 4)), ("p", (3,))],
    "act_motion": [("M", (4, 4)), ("m", (6,))],
    "inv_act_motion": [("M", (4, 4)), ("m", (6,))],
    "act_force": [("M", (4, 4)), ("f", (6,))],
    "inv_act_force": [("M", (4, 4)), ("f", (6,))],
    "motion_cross": [("m1", (6,)), ("m2", (6,))],
    "force_cross": [("m", (6,)), ("f", (6,))],
    "adjoint": [("M", (4, 4))],
    "ad_matrix": [("m", (6,))],
    "ad_star_matrix": [("m", (6,))],
    "inertia_matrix": [("mass", ()), ("com", (3,)), ("I", (3, 3))],
    "inertia10_from_mass_com": [("mass", ()), ("com", (3,)), ("I_com", (3, 3))],
    "inertia10_to_mass_com": [("Y10", (10,))],
    "inertia10_to_matrix": [("Y10", (10,))],
    "inertia_apply": [("Y10", (10,)), ("m", (6,))],
    "inertia_cross_term": [("Y10", (10,)), ("m", (6,))],
    "inertia_act": [("M", (4, 4)), ("Y10", (10,))],
    "inertia_inv_act": [("M", (4, 4)), ("Y10", (10,))],
}


def random_argument(rng, name, shape):
    if name in ("M", "A", "B"):
        return random_transforms(rng, shape)
    if name == "Y10":
        return random_inertias(rng, shape)
    if name == "mass":
        return rng.uniform(0.5, 2.0, size=shape)
    if name in ("I", "I_com"):
        return random_spd(rng, shape)
    size = {"twist": 6, "p": 3, "m": 6, "m1": 6, "m2": 6, "f": 6, "com": 3}[name]
    return rng.normal(size=tuple(shape) + (size,))


def as_tuple(result):
    return result if isinstance(result, tuple) else (result,)


def test_signatures_cover_the_public_names(spatial_impl):
    # rbd_c re-exports the __all__ of its _spatial module
    module = spatial_impl if spatial_impl is rbd.spatial else importlib.import_module("rbd_c._spatial")
    assert sorted(SIGNATURES) == sorted(module.__all__)
    for name in SIGNATURES:
        assert callable(getattr(spatial_impl, name))


# ------------------------------------------------------------------------------------------
# Group identities (property based)
# ------------------------------------------------------------------------------------------
@PROPERTY
@given(M=transforms, m=vec6)
def test_act_then_inv_act_is_identity(spatial_impl, M, m):
    S = spatial_impl
    np.testing.assert_allclose(S.inv_act_motion(M, S.act_motion(M, m)), m, **TOL)
    np.testing.assert_allclose(S.act_motion(M, S.inv_act_motion(M, m)), m, **TOL)
    np.testing.assert_allclose(S.inv_act_force(M, S.act_force(M, m)), m, **TOL)
    np.testing.assert_allclose(S.act_force(M, S.inv_act_force(M, m)), m, **TOL)
    # and the action of M^{-1} is the inverse action of M
    np.testing.assert_allclose(S.act_motion(S.se3_inverse(M), m), S.inv_act_motion(M, m), **TOL)
    np.testing.assert_allclose(S.act_force(S.se3_inverse(M), m), S.inv_act_force(M, m), **TOL)


@PROPERTY
@given(A=transforms, B=transforms, m=vec6, p=vec3)
def test_compose_is_consistent_with_act(spatial_impl, A, B, m, p):
    S = spatial_impl
    AB = S.se3_compose(A, B)
    np.testing.assert_allclose(AB, A @ B, **TOL)
    np.testing.assert_allclose(S.act_motion(AB, m), S.act_motion(A, S.act_motion(B, m)), **TOL)
    np.testing.assert_allclose(S.act_force(AB, m), S.act_force(A, S.act_force(B, m)), **TOL)
    np.testing.assert_allclose(S.inv_act_motion(AB, m), S.inv_act_motion(B, S.inv_act_motion(A, m)), **TOL)
    np.testing.assert_allclose(S.se3_act_point(AB, p), S.se3_act_point(A, S.se3_act_point(B, p)), **TOL)
    np.testing.assert_allclose(S.se3_compose(AB, S.se3_inverse(B)), A, **TOL)


def test_compose_reads_the_bottom_rows_as_exactly_0001(spatial_impl):
    """Transforms are accepted with their bottom row within 1e-6 of [0 0 0 1]; the product
    is that of the rigid transforms, as if the bottom rows were exact (the compiled
    compose combines rows of B and must not take B's last row as it is given)."""
    from scipy.spatial.transform import Rotation
    A, B = np.eye(4), np.eye(4)
    A[:3, :3] = Rotation.from_rotvec([0.3, -1.2, 0.7]).as_matrix()
    A[:3, 3] = [1.0, -2.0, 30.0]
    B[:3, :3] = Rotation.from_rotvec([-0.5, 0.4, 2.0]).as_matrix()
    B[:3, 3] = [0.5, 4.0, -1.5]
    expected = A @ B
    A[3] = [4e-7, -3e-7, 2e-7, 1.0 + 6e-7]
    B[3] = [-5e-7, 1e-7, 3e-7, 1.0 - 8e-7]
    np.testing.assert_allclose(spatial_impl.se3_compose(A, B), expected, rtol=0, atol=1e-14)


@PROPERTY
@given(M=transforms, f=vec6, v=vec6)
def test_power_is_invariant(spatial_impl, M, f, v):
    S = spatial_impl
    power = f @ v
    np.testing.assert_allclose(S.act_force(M, f) @ S.act_motion(M, v), power, **TOL)
    np.testing.assert_allclose(S.inv_act_force(M, f) @ S.inv_act_motion(M, v), power, **TOL)


@PROPERTY
@given(m=vec6, f=vec6, v=vec6)
def test_ad_star_is_minus_ad_transpose(spatial_impl, m, f, v):
    S = spatial_impl
    np.testing.assert_allclose(S.force_cross(m, f) @ v, -(f @ S.motion_cross(m, v)), **TOL)
    np.testing.assert_allclose(S.motion_cross(m, m), np.zeros(6), atol=1e-12)
    np.testing.assert_allclose(S.motion_cross(m, v), -S.motion_cross(v, m), **TOL)


@PROPERTY
@given(M=transforms, m1=vec6, m2=vec6)
def test_adjoint_conjugates_ad(spatial_impl, M, m1, m2):
    """Ad_M ad_m Ad_M^{-1} = ad_{Ad_M m}, for the matrices and for the operators."""
    S = spatial_impl
    X = X_motion(M)
    np.testing.assert_allclose(X @ ad_dense(m1) @ X_motion_inverse(M), ad_dense(S.act_motion(M, m1)), **TOL)
    np.testing.assert_allclose(S.act_motion(M, S.motion_cross(m1, S.inv_act_motion(M, m2))),
                               S.motion_cross(S.act_motion(M, m1), m2), **TOL)
    np.testing.assert_allclose(S.act_force(M, S.force_cross(m1, S.inv_act_force(M, m2))),
                               S.force_cross(S.act_motion(M, m1), m2), **TOL)


@PROPERTY
@given(M=transforms, Y=inertias, m=vec6)
def test_inertia_transform_is_consistent(spatial_impl, M, Y, m):
    S = spatial_impl
    Ya = S.inertia_act(M, Y)
    np.testing.assert_allclose(S.act_force(M, S.inertia_apply(Y, m)),
                               S.inertia_apply(Ya, S.act_motion(M, m)), **TOL)
    np.testing.assert_allclose(S.inertia_inv_act(M, Ya), Y, **TOL)
    np.testing.assert_allclose(S.inertia_act(M, S.inertia_inv_act(M, Y)), Y, **TOL)
    np.testing.assert_allclose(S.inertia_inv_act(M, Y), S.inertia_act(S.se3_inverse(M), Y), **TOL)


@PROPERTY
@given(A=transforms, B=transforms, Y=inertias)
def test_inertia_act_composes(spatial_impl, A, B, Y):
    S = spatial_impl
    np.testing.assert_allclose(S.inertia_act(S.se3_compose(A, B), Y),
                               S.inertia_act(A, S.inertia_act(B, Y)), **TOL)


@PROPERTY
@given(Y=inertias, m=vec6)
def test_inertia_cross_term_is_force_cross_of_momentum(spatial_impl, Y, m):
    S = spatial_impl
    np.testing.assert_allclose(S.inertia_cross_term(Y, m), S.force_cross(m, S.inertia_apply(Y, m)), **TOL)
    # m x* (Y m) does no work along m (kinetic energy is conserved by the gyroscopic term)
    np.testing.assert_allclose(S.inertia_cross_term(Y, m) @ m, 0.0, atol=1e-9)


# ------------------------------------------------------------------------------------------
# Exponential and logarithm
# ------------------------------------------------------------------------------------------
# 0, tiny, around the switch to Taylor series (1e-3) and above it where a careless
# 1 - cos(t) loses digits, around 2 pi / 3 (where the logarithm changes method), near pi.
ANGLES = [0.0, 1e-14, 1e-9, 1e-6, 1e-3 - 1e-12, 1e-3 + 1e-12, 1.5e-3, 3e-3, 1e-2, 0.1, 1.0, 2.0,
          2.0943951, 2.5, np.pi - 1e-3, np.pi - 1e-6, np.pi - 1e-9, np.pi - 1e-12]


def _twist(angle, rng):
    axis = rng.normal(size=3)
    axis /= np.linalg.norm(axis)
    return np.concatenate([rng.normal(size=3), angle * axis])


@pytest.mark.parametrize("angle", ANGLES)
def test_exp_log_round_trip_at_special_angles(spatial_impl, angle, rng):
    """exp and log to a few ulps of |twist| (expm is the oracle), at every angle."""
    S = spatial_impl
    for _ in range(20):
        xi = _twist(angle, rng) * np.array([3, 3, 3, 1, 1, 1])
        tol = 4e-15 * (1.0 + np.linalg.norm(xi))
        expected = scipy.linalg.expm(twist_matrix(xi))
        np.testing.assert_allclose(S.se3_exp(xi), expected, rtol=0, atol=tol)
        np.testing.assert_allclose(S.se3_log(expected), xi, rtol=0, atol=tol)
        np.testing.assert_allclose(S.se3_exp(S.se3_log(S.se3_exp(xi))), S.se3_exp(xi), rtol=0, atol=tol)


# Integer directions with integer lengths: (a, b, c) 2^k has the exact norm n 2^k, so the
# rotation angle of these twists is exactly the float the oracle below uses (at 1e20 rad one
# ulp of the angle is 16384 rad: an angle off by one rounding would be another rotation).
PYTHAGOREAN = [((3, 4, 12), 13), ((2, 3, 6), 7), ((1, 4, 8), 9), ((2, 6, 9), 11)]


def screw_motion(v, w_direction, n, scale):
    """exp of the twist [v; w], w = w_direction * scale with |w_direction| = n, by Chasles'
    theorem: a turn by t = n scale about the axis u through p = u x v / t (R built by
    Rodrigues' formula about the unit u) and a slide of (u . v) u along it:
    translation = (u . v) u + (1 - R) p."""
    u = np.asarray(w_direction, float) / n
    t = n * scale
    K = skew(u)
    R = np.cos(t) * np.eye(3) + np.sin(t) * K + (1.0 - np.cos(t)) * np.outer(u, u)
    p = np.cross(u, v) / t
    return R, (u @ v) * u + (np.eye(3) - R) @ p


@pytest.mark.parametrize("exponent", [2, 10, 30, 66, 200, 332, 498])
def test_exp_of_a_twist_of_many_turns_keeps_its_digits(spatial_impl, exponent, rng):
    """exp of twists turning 2^k rad (up to 1e150) with a slide v as large as the turn: the
    screw motion built here from the unit axis.  The translation of a large turn is small
    (at most |u . v| + 2 |v| / t).  A v exactly across a coordinate axis has an exact
    answer to the last digit; in general the slide along the axis, u . v, carries the
    rounding of v itself (eps |v|).  The closed forms in w = t u cancelled: v - (t - sin t)/t v
    kept 1e4 of rounding at 1e20 rad (exact: sin t), and returned v itself at 1e150."""
    S = spatial_impl
    scale = 2.0 ** exponent
    cases = [(np.roll([scale, 0.0, 0.0], i) * sign, 1, np.roll([0.0, scale, 0.0], i + j), 0.0)
             for i in range(3) for j in range(2) for sign in (1.0, -1.0)]
    for direction, n in PYTHAGOREAN:
        w_direction = np.asarray(direction, float)[rng.permutation(3)] * rng.choice([-1.0, 1.0], size=3)
        for v in (rng.normal(size=3), np.cross(w_direction, rng.normal(size=3)), w_direction):
            cases.append((w_direction * scale, n, v / np.linalg.norm(v) * n * scale, 4e-16))
    for w, n, v, rounding in cases:
        R, t = screw_motion(v, w / scale, n, scale)
        M = S.se3_exp(np.concatenate([v, w]))
        np.testing.assert_allclose(M[:3, :3], R, rtol=0, atol=1e-14)
        tol = 1e-14 * (1.0 + np.linalg.norm(t)) + rounding * np.linalg.norm(v)
        np.testing.assert_allclose(M[:3, 3], t, rtol=0, atol=tol, err_msg=str((w, v)))
        np.testing.assert_array_equal(M[3], [0.0, 0.0, 0.0, 1.0])


def test_log_at_exactly_pi(spatial_impl, rng):
    """At pi the rotation vector is +- pi axis: either is a logarithm."""
    S = spatial_impl
    for axis in [np.eye(3)[0], np.eye(3)[1], np.eye(3)[2], np.ones(3) / np.sqrt(3), rng.normal(size=3)]:
        axis = axis / np.linalg.norm(axis)
        R = 2.0 * np.outer(axis, axis) - np.eye(3)  # the rotation by pi, built directly
        M = transform(R, rng.normal(size=3))
        xi = S.se3_log(M)
        np.testing.assert_allclose(np.linalg.norm(xi[3:]), np.pi, rtol=1e-14)
        np.testing.assert_allclose(abs(xi[3:] @ axis), np.pi, rtol=1e-14)
        np.testing.assert_allclose(S.se3_exp(xi), M, rtol=0, atol=1e-13)
        np.testing.assert_allclose(scipy.linalg.expm(twist_matrix(xi)), M, rtol=0, atol=1e-13)


@PROPERTY
@given(xi=vec6)
def test_exp_matches_expm_and_log_inverts_it(spatial_impl, xi):
    S = spatial_impl
    M = S.se3_exp(xi)
    np.testing.assert_allclose(M, scipy.linalg.expm(twist_matrix(xi)), rtol=0, atol=1e-11)
    log = S.se3_log(M)
    assert np.linalg.norm(log[3:]) <= np.pi + 1e-12
    np.testing.assert_allclose(S.se3_exp(log), M, rtol=0, atol=1e-11)
    theta = np.linalg.norm(xi[3:])
    if theta < np.pi - 1e-3:  # the logarithm is unique there
        np.testing.assert_allclose(log, xi, rtol=0, atol=1e-10)


@PROPERTY
@given(M=transforms)
def test_log_then_exp_is_identity(spatial_impl, M):
    S = spatial_impl
    np.testing.assert_allclose(S.se3_exp(S.se3_log(M)), M, rtol=0, atol=1e-12)
    np.testing.assert_allclose(scipy.linalg.expm(twist_matrix(S.se3_log(M))), M, rtol=0, atol=1e-12)


# ------------------------------------------------------------------------------------------
# Minimal formulas against the dense textbook matrices
# ------------------------------------------------------------------------------------------
@PROPERTY
@given(M=transforms, m=vec6, p=vec3)
def test_transforms_match_dense_formulas(spatial_impl, M, m, p):
    S = spatial_impl
    np.testing.assert_allclose(S.adjoint(M), X_motion(M), **TOL)
    np.testing.assert_allclose(S.act_motion(M, m), X_motion(M) @ m, **TOL)
    np.testing.assert_allclose(S.inv_act_motion(M, m), X_motion_inverse(M) @ m, **TOL)
    np.testing.assert_allclose(S.inv_act_motion(M, m), np.linalg.solve(X_motion(M), m), **TOL)
    np.testing.assert_allclose(S.act_force(M, m), X_force(M) @ m, **TOL)
    np.testing.assert_allclose(S.act_force(M, m), np.linalg.inv(X_motion(M)).T @ m, **TOL)
    np.testing.assert_allclose(S.inv_act_force(M, m), X_motion(M).T @ m, **TOL)
    np.testing.assert_allclose(S.se3_inverse(M), np.linalg.inv(M), **TOL)
    np.testing.assert_allclose(S.se3_act_point(M, p), (M @ np.append(p, 1.0))[:3], **TOL)


@PROPERTY
@given(m=vec6, x=vec6)
def test_cross_products_match_dense_formulas(spatial_impl, m, x):
    S = spatial_impl
    ad = ad_dense(m)
    np.testing.assert_allclose(S.ad_matrix(m), ad, **TOL)
    np.testing.assert_allclose(S.ad_star_matrix(m), -ad.T, **TOL)
    np.testing.assert_allclose(S.motion_cross(m, x), ad @ x, **TOL)
    np.testing.assert_allclose(S.force_cross(m, x), -ad.T @ x, **TOL)
    # the 4x4 twist matrices: [m^, x^] is the twist matrix of m x x
    np.testing.assert_allclose(twist_matrix(S.motion_cross(m, x)),
                               twist_matrix(m) @ twist_matrix(x) - twist_matrix(x) @ twist_matrix(m), **TOL)


@PROPERTY
@given(M=transforms, cloud=clouds, m=vec6)
def test_inertia_operations_match_dense_formulas(spatial_impl, M, cloud, m):
    S = spatial_impl
    Yd = inertia_dense(cloud.mass, cloud.com, cloud.inertia_about(cloud.com))
    Y10 = cloud.inertia10()
    np.testing.assert_allclose(S.inertia10_to_matrix(Y10), Yd, **TOL)
    np.testing.assert_allclose(S.inertia_apply(Y10, m), Yd @ m, **TOL)
    np.testing.assert_allclose(S.inertia_cross_term(Y10, m), -ad_dense(m).T @ Yd @ m, **TOL)
    np.testing.assert_allclose(S.inertia10_to_matrix(S.inertia_act(M, Y10)),
                               X_force(M) @ Yd @ X_motion_inverse(M), **TOL)
    np.testing.assert_allclose(S.inertia10_to_matrix(S.inertia_inv_act(M, Y10)),
                               X_motion(M).T @ Yd @ X_motion(M), **TOL)


@PROPERTY
@given(mass=st.floats(0.0, 5.0), com=vec3, A=arrays(np.float64, (3, 3), elements=st.floats(-1, 1)))
def test_inertia_matrix_matches_textbook(spatial_impl, mass, com, A):
    S = spatial_impl
    I_com = A @ A.T
    expected = inertia_dense(mass, com, I_com)
    np.testing.assert_allclose(S.inertia_matrix(mass, com, I_com), expected, **TOL)
    Y10 = S.inertia10_from_mass_com(mass, com, I_com)
    np.testing.assert_allclose(S.inertia10_to_matrix(Y10), expected, **TOL)
    m2, c2, I2 = S.inertia10_to_mass_com(Y10)
    assert np.shape(m2) == () and c2.shape == (3,) and I2.shape == (3, 3)
    np.testing.assert_allclose(m2, mass, **TOL)
    np.testing.assert_allclose(I2, I_com, **TOL)
    if mass > 1e-3:
        np.testing.assert_allclose(c2, com, **TOL)
    elif mass == 0.0:
        np.testing.assert_array_equal(c2, np.zeros(3))


def test_inertia_uses_the_symmetric_part_and_rejects_asymmetry(spatial_impl, rng):
    S = spatial_impl
    I = random_spd(rng, ())
    E = rng.normal(size=(3, 3))
    E = 1e-10 * (E - E.T)  # within the accepted round-off: the symmetric part is used
    com = rng.normal(size=3)
    np.testing.assert_allclose(S.inertia10_from_mass_com(1.5, com, I + E),
                               S.inertia10_from_mass_com(1.5, com, I), rtol=0, atol=1e-14)
    np.testing.assert_allclose(S.inertia_matrix(1.5, com, I + E), S.inertia_matrix(1.5, com, I),
                               rtol=0, atol=1e-14)
    with pytest.raises(ValueError, match="^I_com must be symmetric"):
        S.inertia10_from_mass_com(1.5, com, I + 1e5 * E)
    with pytest.raises(ValueError, match="^I must be symmetric"):
        S.inertia_matrix(1.5, com, np.stack([I, I + 1e5 * E]))


# ------------------------------------------------------------------------------------------
# Rigid bodies made of point masses
# ------------------------------------------------------------------------------------------
@PROPERTY
@given(cloud=clouds, twist=vec6, M=transforms)
def test_point_mass_body(spatial_impl, cloud, twist, M):
    S = spatial_impl
    I_com = cloud.inertia_about(cloud.com)
    Y10 = S.inertia10_from_mass_com(cloud.mass, cloud.com, I_com)
    # the 10 numbers are the sums [sum mu, sum mu r, sum mu (|r|^2 1 - r r^T)]
    np.testing.assert_allclose(Y10, cloud.inertia10(), **TOL)
    mass, com, I_back = S.inertia10_to_mass_com(cloud.inertia10())
    np.testing.assert_allclose(mass, cloud.mass, **TOL)
    np.testing.assert_allclose(com, cloud.com, **TOL)
    np.testing.assert_allclose(I_back, I_com, **TOL)
    # momentum and kinetic energy
    np.testing.assert_allclose(S.inertia_apply(Y10, twist), cloud.momentum(twist), **TOL)
    Y = S.inertia_matrix(cloud.mass, cloud.com, I_com)
    np.testing.assert_allclose(0.5 * twist @ Y @ twist, cloud.kinetic_energy(twist), **TOL)
    np.testing.assert_allclose(0.5 * twist @ S.inertia_apply(Y10, twist), cloud.kinetic_energy(twist), **TOL)
    # moving the body by M (points r -> R r + t) moves its inertia by inertia_act
    moved = cloud.moved(M)
    np.testing.assert_allclose(S.inertia_act(M, Y10), moved.inertia10(), **TOL)
    np.testing.assert_allclose(S.inertia_inv_act(M, moved.inertia10()), Y10, **TOL)


def test_inertias_add(spatial_impl, rng):
    """The inertia of two bodies is the sum of their 10 numbers (same frame)."""
    S = spatial_impl
    a = PointCloud(rng.uniform(0.1, 2, 3), rng.normal(size=(3, 3)))
    b = PointCloud(rng.uniform(0.1, 2, 4), rng.normal(size=(4, 3)))
    both = PointCloud(np.concatenate([a.masses, b.masses]), np.vstack([a.points, b.points]))
    total = S.inertia10_from_mass_com(both.mass, both.com, both.inertia_about(both.com))
    np.testing.assert_allclose(total, a.inertia10() + b.inertia10(), **TOL)


# ------------------------------------------------------------------------------------------
# Batches and broadcasting
# ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("fname", sorted(SIGNATURES))
def test_batch_equals_per_sample(spatial_impl, fname, rng):
    f = getattr(spatial_impl, fname)
    args = [random_argument(rng, name, (4, 3)) for name, _ in SIGNATURES[fname]]
    batched = as_tuple(f(*args))
    for idx in np.ndindex(4, 3):
        single = as_tuple(f(*[a[idx] for a in args]))
        assert len(single) == len(batched)
        for b, s in zip(batched, single):
            assert b.shape[:2] == (4, 3) and b.shape[2:] == np.shape(s)
            np.testing.assert_allclose(b[idx], s, rtol=0, atol=1e-13)


@pytest.mark.parametrize("fname, single", [(f, i) for f, sig in sorted(SIGNATURES.items())
                                           if len(sig) > 1 for i in range(len(sig))])
def test_one_argument_broadcasts_against_a_batch(spatial_impl, fname, single, rng):
    """One argument a single item, the others a (4, 3) batch; and (4, 1) against (3,)."""
    sig = SIGNATURES[fname]
    f = getattr(spatial_impl, fname)
    args = [random_argument(rng, name, () if i == single else (4, 3)) for i, (name, _) in enumerate(sig)]
    batched = as_tuple(f(*args))
    for idx in np.ndindex(4, 3):
        single_args = [a if i == single else a[idx] for i, a in enumerate(args)]
        for b, s in zip(batched, as_tuple(f(*single_args))):
            assert b.shape[:2] == (4, 3)
            np.testing.assert_allclose(b[idx], s, rtol=0, atol=1e-13)
    # (4, 1) against (3,): the batch is (4, 3)
    args = [random_argument(rng, name, (3,) if i == single else (4, 1)) for i, (name, _) in enumerate(sig)]
    batched = as_tuple(f(*args))
    for i, j in np.ndindex(4, 3):
        per = [a[j] if k == single else a[i, 0] for k, a in enumerate(args)]
        for b, s in zip(batched, as_tuple(f(*per))):
            assert b.shape[:2] == (4, 3)
            np.testing.assert_allclose(b[i, j], s, rtol=0, atol=1e-13)


def test_empty_batch(spatial_impl):
    S = spatial_impl
    assert S.act_motion(np.zeros((0, 4, 4)), np.zeros(6)).shape == (0, 6)
    assert S.se3_exp(np.zeros((2, 0, 6))).shape == (2, 0, 4, 4)


@pytest.mark.skipif(not HAVE_COMPILED, reason="rbd_c is not built")
@pytest.mark.parametrize("fname", sorted(SIGNATURES))
def test_backends_agree(fname, rng):
    import rbd_c
    args = [random_argument(rng, name, (5, 2)) for name, _ in SIGNATURES[fname]]
    ref = as_tuple(getattr(rbd.spatial, fname)(*args))
    fast = as_tuple(getattr(rbd_c, fname)(*args))
    assert len(ref) == len(fast)
    for r, c in zip(ref, fast):
        assert r.shape == c.shape and r.dtype == c.dtype == np.float64
        np.testing.assert_allclose(c, r, rtol=1e-12, atol=1e-12)
    # single samples too (no batch dimension)
    ref = as_tuple(getattr(rbd.spatial, fname)(*[a[1, 1] for a in args]))
    fast = as_tuple(getattr(rbd_c, fname)(*[a[1, 1] for a in args]))
    for r, c in zip(ref, fast):
        assert np.shape(r) == np.shape(c)
        np.testing.assert_allclose(c, r, rtol=1e-12, atol=1e-12)


@pytest.mark.skipif(not HAVE_COMPILED, reason="rbd_c is not built")
def test_backends_take_the_same_log_of_an_exact_half_turn(rng):
    """A half turn written as the symmetric R = 2 a a^T - I (or as the quaternion (0, a)) has
    two logarithms, +-pi a: both backends take the one whose first non-zero component is
    positive, as Pinocchio's log6 does (the compiled one kept its largest column's sign, or
    the quaternion's, the other one for some axes)."""
    import rbd_c
    axes = [[-0.1, 0.2, 0.97], [0.0, -1.0, 1.0], [0.0, 0.0, -1.0], [-1.0, 0.0, 0.0], [0.3, -0.4, -0.2]]
    for axis in [np.array(a) / np.linalg.norm(a) for a in axes] + list(rng.normal(size=(20, 3))):
        axis = axis / np.linalg.norm(axis)
        M = transform(2.0 * np.outer(axis, axis) - np.eye(3), rng.normal(size=3))
        assert np.array_equal(M[:3, :3], M[:3, :3].T)  # (what makes this test: no skew part at all)
        ours, reference = rbd_c.se3_log(M), rbd.spatial.se3_log(M)
        w = reference[3:]
        assert w[np.flatnonzero(w)[0]] > 0.0
        np.testing.assert_allclose(ours, reference, rtol=0, atol=1e-13)
    # the free joint's difference from the identity to a half turn's quaternion (w = 0 exactly)
    model = rbd.sample_model("quadruped")
    start = rbd.reference.neutral(model)
    for axis in axes[1:]:
        end = start.copy()
        end[3:7] = np.concatenate([[0.0], np.array(axis) / np.linalg.norm(axis)])
        np.testing.assert_allclose(rbd_c.difference(model, start, end), rbd.reference.difference(model, start, end),
                                   rtol=0, atol=1e-15)


# ------------------------------------------------------------------------------------------
# Inputs: untouched, read-only, non-contiguous, wrong
# ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("fname", sorted(SIGNATURES))
def test_inputs_are_untouched_and_layout_does_not_matter(spatial_impl, fname, rng):
    f = getattr(spatial_impl, fname)
    args = [random_argument(rng, name, (3,)) for name, _ in SIGNATURES[fname]]
    copies = [a.copy() for a in args]
    expected = as_tuple(f(*copies))
    for a, c in zip(args, copies):
        np.testing.assert_array_equal(a, c)
    readonly = [a.copy() for a in args]
    for a in readonly:
        a.flags.writeable = False
    # Fortran-ordered copies and views with a batch stride (every other sample)
    fortran = [np.asfortranarray(a) for a in args]
    strided = [np.repeat(a, 2, axis=0)[::2] for a in args]
    listed = [a.tolist() for a in args]
    for variant in (readonly, fortran, strided, listed):
        for r, e in zip(as_tuple(f(*variant)), expected):
            np.testing.assert_array_equal(r, e)


def _valid_single(name, rng):
    return random_argument(rng, name, ())


def _bad_values(name, shape):
    """(bad value, expected exception) for an argument of per-sample shape ``shape``."""
    good = np.ones(shape)
    cases = []
    if shape:
        wrong = np.ones(shape[:-1] + (shape[-1] + 1,))
        cases += [(wrong, ValueError), (np.ones(shape[:-1]), ValueError), (np.ones(7), ValueError)]
    nan = good.copy()
    nan.flat[0] = np.nan
    inf = good.copy()
    inf.flat[-1] = np.inf
    cases += [(nan, ValueError), (inf, ValueError), ("not a number", TypeError),
              ({"a": 1}, TypeError), ([[1.0, 2.0], [3.0]], TypeError)]
    return cases


_BAD_CASES = [(fname, i, bad, exc)
              for fname, sig in sorted(SIGNATURES.items())
              for i, (name, shape) in enumerate(sig)
              for bad, exc in _bad_values(name, shape)]


@pytest.mark.parametrize("fname, position, bad, exc", _BAD_CASES,
                         ids=["%s-%d-%d" % (c[0], c[1], k) for k, c in enumerate(_BAD_CASES)])
def test_bad_input_raises_naming_the_argument(spatial_impl, fname, position, bad, exc, rng):
    sig = SIGNATURES[fname]
    args = [_valid_single(name, rng) for name, _ in sig]
    args[position] = bad
    with pytest.raises(exc, match="^%s " % sig[position][0]):
        getattr(spatial_impl, fname)(*args)


@pytest.mark.parametrize("fname", sorted(f for f in SIGNATURES if len(SIGNATURES[f]) > 1))
def test_mismatched_batches_raise(spatial_impl, fname, rng):
    sig = SIGNATURES[fname]
    args = [random_argument(rng, name, (2,) if i == 0 else (3,)) for i, (name, _) in enumerate(sig)]
    with pytest.raises(ValueError, match="batch dimensions do not match.*%s.*%s" % (sig[0][0], sig[1][0])):
        getattr(spatial_impl, fname)(*args)


def test_an_inertia_without_a_center_of_mass_raises(spatial_impl):
    """A negative mass, or m c without m: no (mass, com, I_com) (the com was set to 0 and the
    first moment dropped); a massless inertia without first moment has com 0."""
    with pytest.raises(ValueError, match="^Y10 holds a negative mass"):
        spatial_impl.inertia10_to_mass_com([-1.0, 0, 0, 0, 1, 0, 1, 0, 0, 1])
    with pytest.raises(ValueError, match="^Y10 holds a first moment of mass"):
        spatial_impl.inertia10_to_mass_com([[1.0, 0, 0, 0, 1, 0, 1, 0, 0, 1], [0.0, 0.1, 0, 0, 1, 0, 1, 0, 0, 1]])
    mass, com, I = spatial_impl.inertia10_to_mass_com([0.0, 0, 0, 0, 1, 0, 2, 0, 0, 3])
    assert mass == 0.0 and np.array_equal(com, np.zeros(3))


@pytest.mark.parametrize("angle", [1e-4, 5e-4, 9.99e-4, 1.001e-3])
def test_log_is_exact_about_its_small_angle_threshold(spatial_impl, angle):
    """The series below 1e-3 rad: the compiled log dropped its t^4 term (1.5e-14 relative)."""
    axis = np.array([0.36, -0.48, 0.8])
    M = np.eye(4)
    M[:3, :3] = Rotation.from_rotvec(angle * axis).as_matrix()
    M[:3, 3] = [0.3, -0.2, 0.1]
    xi = spatial_impl.se3_log(M)
    assert np.abs(xi[3:] - angle * axis).max() <= 4e-16 * angle
    np.testing.assert_allclose(spatial_impl.se3_exp(xi), M, rtol=0, atol=4e-16)


@pytest.mark.parametrize("fname", ["inertia_matrix", "inertia10_from_mass_com"])
def test_negative_mass_raises(spatial_impl, fname):
    with pytest.raises(ValueError, match="^mass must be non-negative"):
        getattr(spatial_impl, fname)(-1.0, np.zeros(3), np.eye(3))
    with pytest.raises(ValueError, match="^mass must be non-negative"):
        getattr(spatial_impl, fname)([1.0, -1.0], np.zeros(3), np.eye(3))


# ------------------------------------------------------------------------------------------
# The fast path of the compiled wrappers (float64 C-contiguous ndarrays, equal or
# single-item batches) against the general path (everything else): same results, same
# errors.  On the NumPy backend the same checks hold trivially.
# ------------------------------------------------------------------------------------------
# The functions whose arguments all have a per-sample shape (the others validate in Python).
FAST = sorted(f for f, sig in SIGNATURES.items() if all(shape for _, shape in sig))


def _error(f, args):
    """(type, message) of the error f(*args) raises."""
    with pytest.raises(Exception) as info:
        f(*args)
    return info.type, str(info.value)


def _same_error(spatial_impl, fname, args):
    """spatial_impl raises exactly the error of the reference (rbd.spatial)."""
    expected = _error(getattr(rbd.spatial, fname), args)
    assert _error(getattr(spatial_impl, fname), args) == expected
    return expected


def _assert_same(spatial_impl, actual, expected):
    """Bit for bit on the compiled backend (one kernel on the same doubles); NumPy's own
    loops may take other routes for other layouts (e.g. unaligned data), so a few ulps there."""
    if spatial_impl is rbd.spatial:
        np.testing.assert_allclose(actual, expected, rtol=1e-14, atol=1e-14)
    else:
        np.testing.assert_array_equal(actual, expected)


def _float32_exact(a):
    """``a`` rounded to float32 values (so a float32 copy holds the very same numbers)."""
    return a.astype(np.float32).astype(np.float64)


def _unaligned(a):
    """A float64 copy of ``a`` whose storage is not 8-byte aligned."""
    raw = np.zeros(a.nbytes + 1, dtype=np.uint8)
    out = np.frombuffer(raw.data, dtype=np.float64, count=a.size, offset=1).reshape(a.shape)
    out[...] = a
    assert not out.flags.aligned
    return out


_LAYOUTS = {
    "list": lambda a: a.tolist(),
    "float32": lambda a: a.astype(np.float32),
    "fortran": np.asfortranarray,
    "strided": lambda a: np.repeat(a, 2, axis=0)[::2],
    "reversed": lambda a: a[::-1].copy()[::-1],
    "big-endian": lambda a: a.astype(">f8"),
    "unaligned": _unaligned,
    "subclass": lambda a: a.view(type("Sub", (np.ndarray,), {})),
}


@pytest.mark.parametrize("layout", sorted(_LAYOUTS))
@pytest.mark.parametrize("fname", FAST)
def test_fast_and_general_paths_agree(spatial_impl, fname, layout, rng):
    f = getattr(spatial_impl, fname)
    args = [_float32_exact(random_argument(rng, name, (5,))) for name, _ in SIGNATURES[fname]]
    fast = as_tuple(f(*args))
    for position in range(len(args)):  # one argument at a time, then all of them
        variant = list(args)
        variant[position] = _LAYOUTS[layout](args[position])
        for r, e in zip(as_tuple(f(*variant)), fast):
            assert r.dtype == np.float64 and r.flags.c_contiguous
            _assert_same(spatial_impl, r, e)
    for r, e in zip(as_tuple(f(*[_LAYOUTS[layout](a) for a in args])), fast):
        _assert_same(spatial_impl, r, e)


@pytest.mark.parametrize("fname", sorted(f for f in FAST if len(SIGNATURES[f]) == 2))
def test_fast_single_item_equals_broadcast_single_item(spatial_impl, fname, rng):
    """A single item without batch dimensions (fast, read with a step of 0) against the
    same item with batch dimensions of ones (general path, broadcast)."""
    f = getattr(spatial_impl, fname)
    for single in range(2):
        args = [random_argument(rng, name, () if i == single else (4, 3))
                for i, (name, _) in enumerate(SIGNATURES[fname])]
        fast = f(*args)
        assert fast.shape[:2] == (4, 3)
        for ones in [(1,), (1, 1)]:
            variant = list(args)
            variant[single] = args[single].reshape(ones + args[single].shape)
            _assert_same(spatial_impl, f(*variant), fast)
        # equal batches on both sides (fast) give the same numbers too
        variant = list(args)
        variant[single] = np.ascontiguousarray(np.broadcast_to(args[single], (4, 3) + args[single].shape))
        _assert_same(spatial_impl, f(*variant), fast)
        # (4, 1) against (3,): broadcast on the general path
        variant = [a[:, :1] if i != single else np.repeat(a[None], 3, axis=0)
                   for i, a in enumerate(args)]
        out = f(*variant)
        assert out.shape[:2] == (4, 3)
        _assert_same(spatial_impl, out[:, 0], fast[:, 0])


@pytest.mark.parametrize("value", [np.nan, np.inf, -np.inf])
@pytest.mark.parametrize("fname", FAST)
def test_fast_path_non_finite_raises_the_reference_error(spatial_impl, fname, value, rng):
    sig = SIGNATURES[fname]
    for position, (name, shape) in enumerate(sig):
        for batch, where in [((), 0), ((), -1), ((7,), -1), ((2, 3), 0)]:
            args = [random_argument(rng, n, batch) for n, _ in sig]
            args[position].reshape(-1)[where] = value  # last: the unread bottom row of a transform
            kind, message = _same_error(spatial_impl, fname, args)
            assert kind is ValueError and message.startswith("%s must contain only finite" % name)
        # a bad single item against a batch, and next to an empty batch
        for other in [(5,), (0,)]:
            args = [random_argument(rng, n, () if i == position else other) for i, (n, _) in enumerate(sig)]
            args[position].reshape(-1)[0] = value
            assert _same_error(spatial_impl, fname, args)[1].startswith(name + " ")
    # both arguments bad: the first is named; a bad value and mismatched batches: the value
    if len(sig) == 2:
        args = [random_argument(rng, n, (3,)) for n, _ in sig]
        for a in args:
            a.reshape(-1)[-1] = value
        assert _same_error(spatial_impl, fname, args)[1].startswith(sig[0][0] + " ")
        args = [random_argument(rng, n, (2,) if i else (3,)) for i, (n, _) in enumerate(sig)]
        args[1].reshape(-1)[0] = value
        assert _same_error(spatial_impl, fname, args)[1].startswith(sig[1][0] + " ")


@pytest.mark.parametrize("fname", FAST)
def test_fast_path_shape_errors_are_the_reference_errors(spatial_impl, fname, rng):
    sig = SIGNATURES[fname]
    for position, (name, shape) in enumerate(sig):
        for bad in [shape[:-1] + (shape[-1] + 1,), shape[:-1], (7,), (shape[-1], 3), ()]:
            if bad[len(bad) - len(shape):] == shape:
                continue
            args = [random_argument(rng, n, (2,)) for n, _ in sig]
            args[position] = np.ones((2,) + bad) if bad else np.float64(1.0)
            kind, message = _same_error(spatial_impl, fname, args)
            assert kind is ValueError and message.startswith("%s must have shape" % name)
    if len(sig) == 2:
        for bx, by in [((2,), (3,)), ((2, 3), (2,)), ((3,), (3, 2)), ((1, 2), (2, 1, 3)), ((0,), (2,))]:
            args = [random_argument(rng, n, b) for (n, _), b in zip(sig, (bx, by))]
            kind, message = _same_error(spatial_impl, fname, args)
            assert kind is ValueError and message.startswith("batch dimensions do not match")


@pytest.mark.parametrize("fname", FAST)
def test_fast_path_leaves_inputs_alone(spatial_impl, fname, rng):
    f = getattr(spatial_impl, fname)
    for batches in [[()] * 3, [(4,)] * 3, [(), (4,), ()], [(4,), (), ()]]:
        args = [random_argument(rng, name, b) for (name, _), b in zip(SIGNATURES[fname], batches)]
        copies = [a.copy() for a in args]
        for r in as_tuple(f(*args)):
            assert not any(np.shares_memory(r, a) for a in args)
        for a, c in zip(args, copies):
            np.testing.assert_array_equal(a, c)
    if len(args) == 2 and SIGNATURES[fname][0][1] == SIGNATURES[fname][1][1]:
        a = random_argument(rng, SIGNATURES[fname][0][0], (3,))
        copy = a.copy()
        expected = f(copy, copy.copy())
        _assert_same(spatial_impl, f(a, a), expected)  # the same array on both sides
        np.testing.assert_array_equal(a, copy)


@pytest.mark.parametrize("fname", FAST)
def test_fast_path_zero_size_batches(spatial_impl, fname, rng):
    f = getattr(spatial_impl, fname)
    ref = getattr(rbd.spatial, fname)
    sig = SIGNATURES[fname]
    cases = [[(0,)] * len(sig), [(2, 0)] * len(sig)]
    if len(sig) == 2:
        cases += [[(0,), ()], [(), (0,)], [(0,), (1,)], [(2, 0), (0,)], [(0, 3), (3,)]]
    for batches in cases:
        # (4, 4) arguments are transforms: the identity (zeros are no rigid transform)
        args = [np.zeros(b + shape) if shape != (4, 4) else np.broadcast_to(np.eye(4), b + shape).copy()
                for (_, shape), b in zip(sig, batches)]
        for r, e in zip(as_tuple(f(*args)), as_tuple(ref(*args))):
            assert r.shape == e.shape and r.size == 0 and r.dtype == np.float64


@pytest.mark.parametrize("bad", ["scaled", "reflected", "sheared"])
def test_se3_log_rejects_transforms_without_a_rotation(spatial_impl, bad):
    """The log of a matrix that is no rigid transform would be meaningless: both backends refuse it."""
    M = np.eye(4)
    M[:3, 3] = [0.1, 0.2, 0.3]
    if bad == "scaled":
        M[:3, :3] *= 1.5
    elif bad == "reflected":
        M[2, 2] = -1.0
    else:
        M[0, 1] = 0.3
    with pytest.raises(ValueError, match="M must be a rigid transform"):
        spatial_impl.se3_log(M)
    with pytest.raises(ValueError, match="M must be a rigid transform"):
        spatial_impl.se3_log(np.stack([np.eye(4), M]))
