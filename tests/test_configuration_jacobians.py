"""integrate_jacobians and difference_jacobians, on both backends.

Their oracles: central finite differences through ``integrate`` and ``difference``
(on random trees with every joint kind, at rotation angles near 0, around the
series switch and near pi), Pinocchio's ``dIntegrate`` / ``dDifference`` (on
example-robot-data robots, fixed and floating, and on a chain of a spherical, a
planar and a free joint, the kinds those robots lack), and exact identities
between the two.  Then batches and bad input.
"""
import numpy as np
import pytest

import rbd
from rbd import JointKind

from conftest import HAVE_COMPILED
from models import random_model

H = 1e-6           # central-difference step
FD_TOL = 1e-7      # relative tolerance of the finite differences
ID_TOL = 1e-12     # relative tolerance of exact identities (rounding only)
PIN_TOL = 1e-9     # relative tolerance against Pinocchio

# Rotation angles of every joint on a rotation group: 0 and its series, the switch
# between series and closed forms (0.5), and up to (not across) pi, where the
# logarithm of ``difference`` jumps.
ANGLES = (0.0, 1e-9, 1e-4, 0.4999, 0.5001, 2.0, np.pi - 1e-3)


def close(ours, expected, tol, what=""):
    scale = max(1.0, float(np.abs(expected).max(initial=0.0)))
    np.testing.assert_allclose(ours, expected, rtol=0, atol=tol * scale, err_msg=what)


@pytest.fixture(scope="module", params=["floating", "fixed"])
def model(request):
    return random_model(5, nlinks=14, floating_base=request.param == "floating")


def with_angles(model, v, angle, rng):
    """v with the rotation of every spherical, planar and free joint set to ``angle``
    about a random axis (the other coordinates kept)."""
    v = v.copy()
    for kind, start in zip(model.joint_kinds, model.v_idx):
        if kind == JointKind.PLANAR:
            v[start + 2] = angle * rng.choice([-1.0, 1.0])
        elif kind in (JointKind.SPHERICAL, JointKind.FREE):
            k = start + (3 if kind == JointKind.FREE else 0)
            axis = rng.normal(size=3)
            v[k:k + 3] = angle * axis / np.linalg.norm(axis)
    return v


def numeric_jacobian(f, nv):
    """(nv, nv): column i is the central difference of f(h e_i) (f returns a velocity)."""
    columns = []
    for i in range(nv):
        e = np.zeros(nv)
        e[i] = H
        columns.append((f(e) - f(-e)) / (2.0 * H))
    return np.stack(columns, axis=-1)


# ------------------------------------------------------------------------------------------
# Finite differences through integrate and difference
# ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("angle", ANGLES + (5.0,))
def test_integrate_jacobians_by_finite_differences(model, backend, angle):
    rng = np.random.default_rng(1)
    q = rbd.random_configuration(model, rng)
    v = with_angles(model, rng.normal(size=model.nv), angle, rng)
    d_dq, d_dv = rbd.integrate_jacobians(model, q, v)
    end = rbd.integrate(model, q, v)
    # the motion from q ⊕ v, read in its tangent space
    moved = lambda q1: rbd.difference(model, end, q1)  # noqa: E731
    close(d_dq, numeric_jacobian(lambda e: moved(rbd.integrate(model, rbd.integrate(model, q, e), v)), model.nv),
          FD_TOL, "d_dq")
    close(d_dv, numeric_jacobian(lambda e: moved(rbd.integrate(model, q, v + e)), model.nv), FD_TOL, "d_dv")


@pytest.mark.parametrize("angle", ANGLES)
def test_difference_jacobians_by_finite_differences(model, backend, angle):
    rng = np.random.default_rng(2)
    q0 = rbd.random_configuration(model, rng)
    q1 = rbd.integrate(model, q0, with_angles(model, rng.normal(size=model.nv), angle, rng))
    d_dq0, d_dq1 = rbd.difference_jacobians(model, q0, q1)
    close(d_dq0, numeric_jacobian(lambda e: rbd.difference(model, rbd.integrate(model, q0, e), q1), model.nv),
          FD_TOL, "d_dq0")
    close(d_dq1, numeric_jacobian(lambda e: rbd.difference(model, q0, rbd.integrate(model, q1, e)), model.nv),
          FD_TOL, "d_dq1")


@pytest.mark.parametrize("angle", [1e-3, 0.5])
def test_continuous_across_the_series_switches(model, backend, angle):
    """Both backends switch from series to closed forms at these angles: the two sides meet."""
    rng = np.random.default_rng(11)
    q0 = rbd.random_configuration(model, rng)
    v = rng.normal(size=model.nv)
    below, above = (with_angles(model, v, angle * (1.0 + s * 1e-12), np.random.default_rng(12)) for s in (-1, 1))
    for f, arg in ((rbd.integrate_jacobians, lambda v: v),
                   (rbd.difference_jacobians, lambda v: rbd.integrate(model, q0, v))):
        for a, b in zip(f(model, q0, arg(below)), f(model, q0, arg(above))):
            close(a, b, 1e-11, f.__name__)


def test_jacobians_are_block_diagonal(model, backend):
    rng = np.random.default_rng(3)
    q, q1 = rbd.random_configuration(model, rng), rbd.random_configuration(model, rng)
    joint_of = np.repeat(np.arange(model.nbodies), model.joint_nv)  # the joint of each velocity coordinate
    outside = joint_of[:, None] != joint_of[None, :]
    for matrix in rbd.integrate_jacobians(model, q, rng.normal(size=model.nv)) + rbd.difference_jacobians(model, q, q1):
        assert matrix.shape == (model.nv, model.nv)
        assert not matrix[outside].any()


# ------------------------------------------------------------------------------------------
# Identities
# ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("angle", ANGLES)
def test_difference_undoes_integrate(model, backend, angle):
    """With q1 = q0 ⊕ v: d_dq1 = d_dv^-1 (v moves q1 alone), and d_dq0 = -d_dq1 d_dq
    (moving q0 and q1 = q0 ⊕ v together leaves the difference v)."""
    rng = np.random.default_rng(4)
    q0 = rbd.random_configuration(model, rng)
    v = with_angles(model, rng.normal(size=model.nv), angle, rng)
    d_dq, d_dv = rbd.integrate_jacobians(model, q0, v)
    d_dq0, d_dq1 = rbd.difference_jacobians(model, q0, rbd.integrate(model, q0, v))
    close(d_dq1 @ d_dv, np.eye(model.nv), 1e-11, "d_dq1 d_dv")
    close(d_dq0, -d_dq1 @ d_dq, 1e-11, "d_dq0")


def test_at_zero(model, backend):
    rng = np.random.default_rng(5)
    q = rbd.random_configuration(model, rng)
    eye = np.eye(model.nv)
    d_dq0, d_dq1 = rbd.difference_jacobians(model, q, q)
    close(d_dq0, -eye, ID_TOL)
    close(d_dq1, eye, ID_TOL)
    for matrix in rbd.integrate_jacobians(model, q, np.zeros(model.nv)):
        close(matrix, eye, ID_TOL)


# ------------------------------------------------------------------------------------------
# Pinocchio
# ------------------------------------------------------------------------------------------
def test_against_pinocchio_robots(backend):
    pin = pytest.importorskip("pinocchio")
    from oracles.pinocchio_adapter import ROBOTS, load_pair
    pairs = [p for p in (load_pair(name) for name in sorted(ROBOTS)) if p is not None]
    if not pairs:
        pytest.skip("example-robot-data is not installed")
    assert {p.model.nq != p.model.nv for p in pairs} == {True, False}  # floating and fixed bases
    rng = np.random.default_rng(6)
    for pair in pairs:
        model, pm = pair.model, pair.pin_model
        for _ in range(3):
            q, q1 = rbd.random_configuration(model, rng), rbd.random_configuration(model, rng)
            v = rng.normal(size=model.nv)
            qp, q1p, vp = pair.q_to_pin(q), pair.q_to_pin(q1), pair.v_to_pin(v)
            ours = rbd.integrate_jacobians(model, q, v) + rbd.difference_jacobians(model, q, q1)
            theirs = (pin.dIntegrate(pm, qp, vp, pin.ARG0), pin.dIntegrate(pm, qp, vp, pin.ARG1),
                      pin.dDifference(pm, qp, q1p, pin.ARG0), pin.dDifference(pm, qp, q1p, pin.ARG1))
            for what, a, b in zip(("d_dq", "d_dv", "d_dq0", "d_dq1"), ours, theirs):
                close(a, pair.matrix_from_pin(b), PIN_TOL, "%s %s" % (pair.name, what))


def test_against_pinocchio_every_group_joint(backend):
    """A spherical, a planar and a free joint (Pinocchio: quaternion [x, y, z, w], planar
    [x, y, cos, sin]), angles from 0 to near pi."""
    pin = pytest.importorskip("pinocchio")
    builder = rbd.ModelBuilder("groups")
    for n in range(4):
        builder.add_link("l%d" % n, mass=1.0, inertia=0.1 * np.eye(3))
    for n, kind in enumerate(("spherical", "planar", "floating")):
        builder.add_joint("j%d" % n, kind, "l%d" % n, "l%d" % (n + 1))
    model = builder.build()
    assert [JointKind(k) for k in model.joint_kinds] == [JointKind.SPHERICAL, JointKind.PLANAR, JointKind.FREE]
    pm = pin.Model()
    for n, joint in enumerate((pin.JointModelSpherical(), pin.JointModelPlanar(), pin.JointModelFreeFlyer())):
        pm.addJoint(n, joint, pin.SE3.Identity(), "j%d" % n)

    def to_pin(q):
        s, p, f = q[0:4], q[4:7], q[7:14]
        return np.concatenate([s[[1, 2, 3, 0]], [p[0], p[1], np.cos(p[2]), np.sin(p[2])], f[[0, 1, 2, 4, 5, 6, 3]]])

    rng = np.random.default_rng(7)
    # Not below 1e-3: Pinocchio's SE(2) Jacobians lose digits there (2e-8 at 1e-9, checked
    # against the series); rbd's are checked near 0 by the tests above.
    for angle in (0.0,) + tuple(a for a in ANGLES if a >= 1e-3):
        q = rbd.random_configuration(model, rng)
        v = with_angles(model, rng.normal(size=model.nv), angle, rng)
        q1 = rbd.integrate(model, q, v)
        ours = rbd.integrate_jacobians(model, q, v) + rbd.difference_jacobians(model, q, q1)
        theirs = (pin.dIntegrate(pm, to_pin(q), v, pin.ARG0), pin.dIntegrate(pm, to_pin(q), v, pin.ARG1),
                  pin.dDifference(pm, to_pin(q), to_pin(q1), pin.ARG0),
                  pin.dDifference(pm, to_pin(q), to_pin(q1), pin.ARG1))
        for what, a, b in zip(("d_dq", "d_dv", "d_dq0", "d_dq1"), ours, theirs):
            close(a, b, PIN_TOL, "angle %g %s" % (angle, what))


# ------------------------------------------------------------------------------------------
# Batches and bad input
# ------------------------------------------------------------------------------------------
def test_batches_are_per_sample(model, backend):
    rng = np.random.default_rng(8)
    Q = rbd.random_configuration(model, rng, batch=(2, 3))
    Q1 = rbd.random_configuration(model, rng, batch=(2, 3))
    V = rng.normal(size=(2, 3, model.nv))
    for name, args in (("integrate_jacobians", (Q, V)), ("difference_jacobians", (Q, Q1)),
                       ("integrate_jacobians", (Q[0, 0], V)), ("difference_jacobians", (Q[0, 0], Q1))):
        batched = getattr(rbd, name)(model, *args)
        for idx in np.ndindex(2, 3):
            single = getattr(rbd, name)(model, *(x[idx] if x.ndim > 1 else x for x in args))
            for out, one in zip(batched, single):
                assert out.shape == (2, 3, model.nv, model.nv)
                close(out[idx], one, 1e-14, "%s %s" % (name, idx))
    empty = rbd.integrate_jacobians(model, Q[:0, 0], V[:0, 0])
    assert [m.shape for m in empty] == [(0, model.nv, model.nv)] * 2


def bad_inputs(model):
    """(function name, arguments, the argument the error must name)."""
    rng = np.random.default_rng(9)
    q = rbd.random_configuration(model, rng)
    v = rng.normal(size=model.nv)
    nan_v = v.copy()
    nan_v[0] = np.nan
    zero_quaternion = q.copy()
    start = int(model.q_idx[list(model.joint_kinds).index(JointKind.SPHERICAL)])
    zero_quaternion[start:start + 4] = 0.0
    return [
        ("integrate_jacobians", (q[:-1], v), "q"),
        ("integrate_jacobians", (q, np.append(v, 0.0)), "v"),
        ("integrate_jacobians", (q, nan_v), "v"),
        ("integrate_jacobians", (zero_quaternion, v), "q"),
        ("integrate_jacobians", (q, "v"), "v"),
        ("integrate_jacobians", (q, None), "v"),
        ("integrate_jacobians", (np.stack([q, q]), np.stack([v, v, v])), "v"),
        ("difference_jacobians", (q, q[:-1]), "q1"),
        ("difference_jacobians", (q + np.inf, q), "q0"),
        ("difference_jacobians", (q, zero_quaternion), "q1"),
        ("difference_jacobians", (None, q), "q0"),
    ]


def outcome(f, *args):
    try:
        f(*args)
    except Exception as exc:  # noqa: BLE001 - the error itself is compared
        return type(exc), str(exc)
    return None


def test_bad_input_raises_the_same_error_on_both_backends(model):
    backends = [rbd.reference]
    if HAVE_COMPILED:
        import rbd_c
        backends.append(rbd_c)
    for name, args, argument in bad_inputs(model):
        errors = [outcome(getattr(impl, name), model, *args) for impl in backends]
        assert errors[0] is not None and errors[0][0] in (ValueError, TypeError), (name, argument, errors[0])
        assert argument in errors[0][1], (name, argument, errors[0])
        assert all(e == errors[0] for e in errors), (name, argument, errors)


def test_overflow_is_an_error_on_both_backends(model):
    """A finite but huge velocity overflows inside the free and planar joints' formulas:
    the overflow error, never an inf or NaN result."""
    rng = np.random.default_rng(10)
    q = rbd.random_configuration(model, rng)
    v = np.full(model.nv, 1e300)
    backends = [rbd.reference]
    if HAVE_COMPILED:
        import rbd_c
        backends.append(rbd_c)
    errors = [outcome(impl.integrate_jacobians, model, q, v) for impl in backends]
    assert errors[0] is not None and errors[0][0] is rbd.ResultOverflow and "overflow" in errors[0][1], errors[0]
    assert all(e == errors[0] for e in errors), errors


@pytest.mark.parametrize("turn", [1.0, 1e4, 1e8, 1e15, 1e17, 1e100])
def test_a_planar_step_of_many_turns_keeps_its_digits(backend, turn):
    """A planar joint's step exp(v) from the origin, w = ``turn`` radians: the step is the
    body's (vx, vy) turned by w/2 and scaled by |2 sin(w/2) / w| (a scaled rotation), and
    the two backends' independent formulas agree.  (The NumPy backend took the step through
    the 3-D left Jacobian, whose I + c S^2 cancels: 0.16 off at 1e15 rad, 1e150 instead of
    O(1) at 1e150.)"""
    b = rbd.ModelBuilder("sled")
    b.add_link("base")
    b.add_link("body", mass=1.0, inertia=np.eye(3) * 0.01)
    b.add_joint("j", "planar", parent="base", child="body")
    model = b.build()
    v = np.array([1.0, 2.0, 1.0]) * turn
    step = rbd.integrate(model, np.zeros(3), v)[:2]
    scale = abs(2.0 * np.sin(0.5 * v[2]) / v[2])
    assert abs(np.linalg.norm(step) - scale * np.linalg.norm(v[:2])) <= 1e-12 * max(1.0, np.linalg.norm(step))
    half = 0.5 * v[2]
    turned = np.array([[np.cos(half), -np.sin(half)], [np.sin(half), np.cos(half)]]) @ v[:2]
    assert abs(turned[0] * step[1] - turned[1] * step[0]) <= 1e-12 * max(1.0, np.linalg.norm(step) * np.linalg.norm(turned))
    if HAVE_COMPILED:
        import rbd_c
        np.testing.assert_allclose(rbd.reference.integrate(model, np.zeros(3), v)[:2],
                                   rbd_c.integrate(model, np.zeros(3), v)[:2], rtol=0, atol=1e-12)


@pytest.mark.parametrize("turn", [1e4, 1e20, 1e60, 1e100, 1e150])
def test_a_free_step_of_many_turns_keeps_its_digits(backend, turn):
    """A free joint's step from the origin with body velocity (v, w), v across w, |w| = turn
    rad: Chasles' screw, a pure turn about the axis through u x v / |w| (built here by
    Rodrigues' formula), moves the origin by (1 - R) (u x v) / |w|.  Its tangent Jacobians
    obey identities of the group, whatever the formulas: J_r(v) v = v, and
    J_r(v) = Ad(exp(-v)) J_l(v) with J_l(v) = J_r(-v), i.e. d_dv(v) = d_dq(v) d_dv(-v) (the
    closed forms in w lost them: c2 = (t^2 + 2 cos t - 2)/(2 t^4) is 0 from 1e77 rad)."""
    b = rbd.ModelBuilder("drone")
    b.add_link("base")
    b.add_link("body", mass=1.0, inertia=np.eye(3) * 0.01)
    b.add_joint("j", "free", parent="base", child="body")
    model = b.build()
    q = rbd.neutral(model)
    v = np.array([0.0, 2.0 * turn, 0.0, turn, 0.0, 0.0])  # u = x, v along y: exactly across
    u = np.array([1.0, 0.0, 0.0])
    R = np.cos(turn) * np.eye(3) + np.sin(turn) * np.array([[0, 0, 0], [0, 0, -1], [0, 1, 0]]) \
        + (1.0 - np.cos(turn)) * np.outer(u, u)
    expected = (np.eye(3) - R) @ (np.cross(u, v[:3]) / turn)
    np.testing.assert_allclose(rbd.integrate(model, q, v)[:3], expected, rtol=0, atol=1e-14)
    rng = np.random.default_rng(7)
    for v in (v, rng.normal(size=6) * turn):
        d_dq, d_dv = rbd.integrate_jacobians(model, q, v)
        _, d_dv_back = rbd.integrate_jacobians(model, q, -v)
        # the coupling block sums terms of size |v_lin| to a much smaller one: its rounding
        coupling = 1.0 + np.linalg.norm(v[:3])
        np.testing.assert_allclose(d_dv @ v, v, rtol=0, atol=1e-14 * coupling * (1.0 + np.linalg.norm(v)))
        np.testing.assert_allclose(d_dv, d_dq @ d_dv_back, rtol=0,
                                   atol=1e-14 * coupling * (1.0 + np.linalg.norm(d_dq, 2)))
