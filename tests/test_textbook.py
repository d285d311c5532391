"""Both backends against a dense textbook oracle (``tests/oracles/textbook.py``).

The oracle is rigid-body dynamics as a textbook writes it: 6x6 spatial
transforms, explicit motion subspaces, Featherstone's RNEA, CRBA and ABA, and
Jacobians column by column, reading only the model's plain data arrays.  It
shares no code with ``rbd.reference`` (a tuned engine on scalar components) or
``rbd_c``, so agreement to rounding is evidence for both.  The random trees of
``tests/models.py`` go through every joint kind (revolute about x, y, z and a
random axis, prismatic, spherical, planar, free flyer in the middle of the
tree), with a fixed or a floating base, and every frame, world-fixed ones
included.

The oracle is itself checked, without rbd's algorithms, by identities (ABA
inverts RNEA, CRBA equals RNEA's columns and the sum of J^T Y J, the kinetic
energy is v^T M v / 2), finite differences along its own configuration
integrator (frame velocity, Jacobian time derivative, frame acceleration, com
Jacobian, gravity from the potential energy) and closed forms (a pendulum, a
body in free fall).
"""
import functools

import numpy as np
import pytest

import rbd
from models import REFERENCES, random_model
from oracles import textbook as tb

# (seed, floating_base) of the random trees: every joint kind in each.
CASES = [(0, True), (1, False), (2, True), (7, False)]
CASE_IDS = ["tree%d-%s" % (seed, "floating" if fb else "fixed") for seed, fb in CASES]
TOL = 1e-10       # relative to the size of the expected value (rounding only)
H = 1e-5          # central-difference step of the oracle's self-checks
FD_TOL = 1e-7     # their relative tolerance: O(H^2) truncation and O(eps / H) rounding


@functools.lru_cache(maxsize=None)
def _model(seed, floating_base):
    return random_model(seed, floating_base=floating_base)


def _state(seed, model):
    """A random (q, v, a, tau, fext): unit quaternions drawn and normalized here."""
    rng = np.random.default_rng(1000 + seed)
    q = rng.normal(size=model.nq)
    for i in range(model.nbodies):
        kind = int(model.joint_kinds[i])
        if kind in (tb.SPHERICAL, tb.FREE):
            k = model.q_idx[i] + (3 if kind == tb.FREE else 0)
            q[k:k + 4] /= np.linalg.norm(q[k:k + 4])
    return (q, rng.normal(size=model.nv), rng.normal(size=model.nv),
            rng.normal(scale=5.0, size=model.nv), rng.normal(scale=2.0, size=(model.nbodies, 6)))


def _close(actual, expected, what):
    expected = np.asarray(expected, dtype=float)
    scale = max(1.0, float(np.abs(expected).max())) if expected.size else 1.0
    np.testing.assert_allclose(actual, expected, rtol=TOL, atol=TOL * scale, err_msg=what)


@pytest.mark.parametrize("seed, floating_base", CASES, ids=CASE_IDS)
def test_dynamics_match_textbook(backend, seed, floating_base):
    model = _model(seed, floating_base)
    q, v, a, tau, fext = _state(seed, model)
    _close(rbd.forward_kinematics(model, q), tb.forward_kinematics(model, q), "forward_kinematics")
    _close(rbd.rnea(model, q, v, a), tb.rnea(model, q, v, a), "rnea")
    _close(rbd.rnea(model, q, v, a, fext=fext), tb.rnea(model, q, v, a, fext), "rnea with fext")
    _close(rbd.gravity(model, q), tb.gravity(model, q), "gravity")
    _close(rbd.nonlinear_effects(model, q, v), tb.nonlinear_effects(model, q, v), "nonlinear_effects")
    _close(rbd.crba(model, q), tb.crba(model, q), "crba")
    _close(rbd.aba(model, q, v, tau), tb.aba(model, q, v, tau), "aba")
    _close(rbd.aba(model, q, v, tau, fext=fext), tb.aba(model, q, v, tau, fext), "aba with fext")
    _close(rbd.center_of_mass(model, q), tb.center_of_mass(model, q), "center_of_mass")
    _close(rbd.com_jacobian(model, q), tb.com_jacobian(model, q), "com_jacobian")
    _close(rbd.kinetic_energy(model, q, v), tb.kinetic_energy(model, q, v), "kinetic_energy")
    _close(rbd.potential_energy(model, q), tb.potential_energy(model, q), "potential_energy")
    _close(rbd.centroidal_momentum(model, q, v), tb.centroidal_momentum(model, q, v), "centroidal_momentum")


@pytest.mark.parametrize("seed, floating_base", CASES, ids=CASE_IDS)
def test_frames_match_textbook(backend, seed, floating_base):
    model = _model(seed, floating_base)
    q, v, a, _, _ = _state(seed, model)
    for f in range(model.nframes):
        name = model.frame_names[f]
        _close(rbd.frame_placement(model, q, name), tb.frame_placement(model, q, f), "frame_placement %s" % name)
        for ref in REFERENCES:
            what = "of frame %s, %s" % (name, ref)
            _close(rbd.frame_jacobian(model, q, f, reference=ref), tb.frame_jacobian(model, q, f, ref),
                   "frame_jacobian " + what)
            _close(rbd.frame_velocity(model, q, v, f, reference=ref), tb.frame_velocity(model, q, v, f, ref),
                   "frame_velocity " + what)
            _close(rbd.frame_acceleration(model, q, v, a, f, reference=ref),
                   tb.frame_acceleration(model, q, v, a, f, ref), "frame_acceleration " + what)
            _close(rbd.frame_jacobian_time_derivative(model, q, v, f, reference=ref),
                   tb.frame_jacobian_time_derivative(model, q, v, f, ref),
                   "frame_jacobian_time_derivative " + what)


def test_every_joint_kind_and_a_world_fixed_frame_are_covered():
    """The comparisons above would prove little on a tree missing a joint kind."""
    for seed, floating_base in CASES:
        model = _model(seed, floating_base)
        assert set(int(k) for k in model.joint_kinds) == set(range(8)), (seed, floating_base)
        free_not_root = [i for i in range(model.nbodies)
                         if model.joint_kinds[i] == tb.FREE and model.parents[i] >= 0]
        assert free_not_root, "a free flyer inside the tree"
    assert any(_model(seed, False).frame_parents.min() < 0 for seed, fb in CASES if not fb)


# ------------------------------------------------------------------------------------------
# The oracle on its own: identities, finite differences, closed forms (no rbd algorithm)
# ------------------------------------------------------------------------------------------
def _scaled_close(actual, expected, tol, what=""):
    expected = np.asarray(expected, dtype=float)
    np.testing.assert_allclose(actual, expected, rtol=tol,
                               atol=tol * max(1.0, float(np.abs(expected).max())), err_msg=what)


@pytest.mark.parametrize("seed, floating_base", CASES, ids=CASE_IDS)
def test_oracle_identities(seed, floating_base):
    model = _model(seed, floating_base)
    q, v, a, tau, fext = _state(seed, model)
    # ABA inverts RNEA, with and without external forces.
    _scaled_close(tb.aba(model, q, v, tb.rnea(model, q, v, a)), a, TOL)
    _scaled_close(tb.aba(model, q, v, tb.rnea(model, q, v, a, fext), fext), a, TOL)
    # CRBA's mass matrix: RNEA's columns, and the sum over bodies of J^T Y J (world frame).
    M = tb.crba(model, q)
    h = tb.nonlinear_effects(model, q, v)
    columns = np.array([tb.rnea(model, q, v, e) - h for e in np.eye(model.nv)]).T
    _scaled_close(M, columns, TOL)
    W = tb.forward_kinematics(model, q)
    M_sum = sum(J.T @ tb.Xforce(W[i]) @ tb.spatial_inertia(model.inertias[i]) @ tb.Xmotion(tb.inv_pose(W[i])) @ J
                for i, J in enumerate(tb.world_jacobians(model, q)))
    _scaled_close(M, M_sum, TOL)
    _scaled_close(M, M.T, TOL)
    assert np.linalg.eigvalsh(M).min() > 0
    # Kinetic energy, and RNEA's external forces enter through the bodies' Jacobians.
    _scaled_close(tb.kinetic_energy(model, q, v), 0.5 * v @ M @ v, TOL)
    JT_fext = sum(tb.frame_jacobian(model, q, f, "local").T @ fext[i]
                  for i, f in enumerate(_body_frames(model)))
    _scaled_close(tb.rnea(model, q, v, a) - tb.rnea(model, q, v, a, fext), JT_fext, TOL)
    # The frame acceleration of the recursion is J a + Jdot v in every reference.
    for f in range(model.nframes):
        for ref in REFERENCES:
            _scaled_close(tb.frame_acceleration(model, q, v, a, f, ref),
                          tb.frame_jacobian(model, q, f, ref) @ a
                          + tb.frame_jacobian_time_derivative(model, q, v, f, ref) @ v, TOL)


def _body_frames(model):
    """A frame index on the origin of each body (its link frame)."""
    out = []
    for i in range(model.nbodies):
        candidates = [f for f in range(model.nframes)
                      if model.frame_parents[f] == i and np.allclose(model.frame_offsets[f], np.eye(4))]
        assert candidates, "body %d has no frame at its origin" % i
        out.append(candidates[0])
    return out


def _vee(T):
    """The twist [v; w] of a 4x4 matrix [[w]x, v; 0, 0]."""
    return np.array([T[0, 3], T[1, 3], T[2, 3], T[2, 1], T[0, 2], T[1, 0]])


@pytest.mark.parametrize("seed, floating_base", CASES[:2], ids=CASE_IDS[:2])
def test_oracle_against_finite_differences(seed, floating_base):
    """Along q(t) = q (+) (t v + t^2 a / 2), whose velocity is v + t a + O(t^2)."""
    model = _model(seed, floating_base)
    q, v, a, _, _ = _state(seed, model)
    q_at = {s: tb.integrate(model, q, s * H * v + 0.5 * H * H * a) for s in (-1, 1)}
    v_at = {s: v + s * H * a for s in (-1, 1)}
    for f in range(model.nframes):
        M0 = tb.frame_placement(model, q, f)
        dM = (tb.frame_placement(model, q_at[1], f) - tb.frame_placement(model, q_at[-1], f)) / (2 * H)
        _scaled_close(tb.frame_velocity(model, q, v, f, "local"), _vee(tb.inv_pose(M0) @ dM), FD_TOL)
        _scaled_close(tb.frame_velocity(model, q, v, f, "world"), _vee(dM @ tb.inv_pose(M0)), FD_TOL)
        _scaled_close(tb.frame_velocity(model, q, v, f, "local_world_aligned"),
                      np.concatenate([dM[:3, 3], _vee(dM @ tb.inv_pose(M0))[3:]]), FD_TOL)
        for ref in REFERENCES:
            dJ = (tb.frame_jacobian(model, q_at[1], f, ref) - tb.frame_jacobian(model, q_at[-1], f, ref)) / (2 * H)
            _scaled_close(tb.frame_jacobian_time_derivative(model, q, v, f, ref), dJ, FD_TOL, ref)
            dV = (tb.frame_velocity(model, q_at[1], v_at[1], f, ref)
                  - tb.frame_velocity(model, q_at[-1], v_at[-1], f, ref)) / (2 * H)
            _scaled_close(tb.frame_acceleration(model, q, v, a, f, ref), dV, FD_TOL, ref)
    # Center-of-mass Jacobian and gravity from the center of mass and the potential energy.
    dcom = (tb.center_of_mass(model, q_at[1]) - tb.center_of_mass(model, q_at[-1])) / (2 * H)
    _scaled_close(tb.com_jacobian(model, q) @ v, dcom, FD_TOL)
    _scaled_close(tb.centroidal_momentum(model, q, v)[:3], model.inertias[:, 0].sum() * dcom, FD_TOL)
    grad = [(tb.potential_energy(model, tb.integrate(model, q, H * e))
             - tb.potential_energy(model, tb.integrate(model, q, -H * e))) / (2 * H) for e in np.eye(model.nv)]
    _scaled_close(tb.gravity(model, q), grad, FD_TOL)


def _pendulum(mass, length, Ixx):
    """A rod about the x axis of the world, its center of mass at (0, 0, -length)."""
    builder = rbd.ModelBuilder("pendulum")
    builder.add_link("base")
    builder.add_link("rod", mass=mass, com=(0.0, 0.0, -length), inertia=np.diag([Ixx, 0.02, 0.03]))
    builder.add_joint("hinge", "revolute", parent="base", child="rod", axis=(1.0, 0.0, 0.0))
    return builder.build()


def test_oracle_pendulum_closed_form():
    """tau = (Ixx + m l^2) qdd + m g l sin(theta); T = (Ixx + m l^2) qd^2 / 2; V = -m g l cos(theta)."""
    m, l, Ixx, g = 1.7, 0.6, 0.05, 9.81
    model = _pendulum(m, l, Ixx)
    inertia = Ixx + m * l * l
    for theta, qd, qdd in [(0.3, -1.2, 0.7), (2.5, 0.4, -2.0), (-1.1, 3.0, 0.0)]:
        q, v, a = np.array([theta]), np.array([qd]), np.array([qdd])
        tau = inertia * qdd + m * g * l * np.sin(theta)
        _scaled_close(tb.rnea(model, q, v, a), [tau], TOL)
        _scaled_close(tb.crba(model, q), [[inertia]], TOL)
        _scaled_close(tb.aba(model, q, v, np.array([tau])), a, TOL)
        _scaled_close(tb.kinetic_energy(model, q, v), 0.5 * inertia * qd * qd, TOL)
        _scaled_close(tb.potential_energy(model, q), -m * g * l * np.cos(theta), TOL)
        _scaled_close(tb.center_of_mass(model, q), [0.0, l * np.sin(theta), -l * np.cos(theta)], TOL)


def test_oracle_free_fall():
    """A free body at rest falls with the world acceleration g at every point: its local
    spatial acceleration is [R^T g; 0] whatever its pose and center of mass; with a
    wrench -m g at the center of mass (expressed in the body) it stays at rest."""
    builder = rbd.ModelBuilder("brick")
    com = np.array([0.1, -0.2, 0.3])
    builder.add_link("brick", mass=2.0, com=com, inertia=np.diag([0.1, 0.2, 0.25]))
    model = builder.build(floating_base=True)
    quat = np.array([0.8, -0.2, 0.5, 0.1]) / np.linalg.norm([0.8, -0.2, 0.5, 0.1])
    q = np.concatenate([[0.3, -1.0, 2.0], quat])
    R, g = tb.quat_matrix(quat), np.asarray(model.gravity)
    zero = np.zeros(6)
    _scaled_close(tb.aba(model, q, zero, zero), np.concatenate([R.T @ g, np.zeros(3)]), TOL)
    f_body = -2.0 * R.T @ g
    fext = np.array([np.concatenate([f_body, np.cross(com, f_body)])])
    _scaled_close(tb.aba(model, q, zero, zero, fext), zero, TOL)


def test_oracle_momentum_balance_in_flight():
    """Joint torques are internal: a floating tree with no force on its root has a centroidal
    momentum rate of [m g; 0] (along the oracle's own forward dynamics, by finite differences)."""
    model = _model(*CASES[0])
    q, v, _, tau, _ = _state(0, model)
    tau[:6] = 0.0
    qdd = tb.aba(model, q, v, tau)
    h = {s: tb.centroidal_momentum(model, tb.integrate(model, q, s * H * v + 0.5 * H * H * qdd), v + s * H * qdd)
         for s in (-1, 1)}
    mass = model.inertias[:, 0].sum()
    _scaled_close((h[1] - h[-1]) / (2 * H), np.concatenate([mass * np.asarray(model.gravity), np.zeros(3)]), FD_TOL)
