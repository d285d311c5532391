"""rbd against physical identities and finite differences, on both backends.

Nothing here is compared with another implementation: every check is an
identity the algorithms must satisfy together (the mass matrix from RNEA,
ABA inverting RNEA, the skew symmetry of Ṁ − 2C, energy balance along a
simulated motion, momentum conservation) or a finite difference of a simpler
quantity (Jacobians from placements, Jacobian derivatives from Jacobians,
accelerations from velocities, the center-of-mass Jacobian from the center of
mass, gravity from the potential energy).  Each test runs on the NumPy and the
Cython backend (the ``backend`` fixture switches ``rbd``) and on the sample
robots and random trees that go through every joint kind.

Finite differences move along the configuration manifold, ``q(t) = q ⊕ t d``
with ``rbd.integrate``; along it the joint velocity is exactly ``d`` at every
t, so central differences with step h are accurate to O(h²) + O(ε/h).  With
h = 1e-6 that is ~1e-9 for the quantities here (of order 1), and the
tolerances below (1e-7 to 1e-6 relative) are some hundred times that: far
below the O(1) error of a wrong sign, frame or reference.

Many of the finite differences evaluate all their perturbed configurations in
one batched call (that keeps the NumPy backend fast); that batches equal the
per-sample results is checked on its own at the end of the file.
"""
import numpy as np
import pytest

import rbd
from rbd import reference as ref
from rbd.model import JointKind

from models import (REFERENCES, algorithm_calls, random_model, m_inverse_slack, aba_slack, aba_derivatives_slack,
                    contacts_on)


H = 1e-6          # central-difference step
FD_TOL = 1e-7     # relative tolerance of first derivatives by central differences
ID_TOL = 1e-10    # relative tolerance of exact identities (rounding only)

MODEL_IDS = ["arm7", "quadruped", "tree-floating", "tree-fixed"]
_MODELS = {}


def get_model(name):
    if name not in _MODELS:
        if name == "tree-floating":
            _MODELS[name] = random_model(0, nlinks=12, floating_base=True)
        elif name == "tree-fixed":
            _MODELS[name] = random_model(1, nlinks=12, floating_base=False)
        else:
            _MODELS[name] = rbd.sample_model(name)
    return _MODELS[name]


@pytest.fixture(scope="module", params=MODEL_IDS)
def model(request):
    return get_model(request.param)


# ------------------------------------------------------------------------------------------
# Helpers
# ------------------------------------------------------------------------------------------
def state(model, seed, batch=()):
    """A seeded random (q, v, a, tau, fext), the same on both backends."""
    rng = np.random.default_rng([seed, model.nv, model.nbodies])
    n = int(np.prod(batch)) if batch else 1
    q = np.stack([ref.random_configuration(model, rng) for _ in range(n)]).reshape(batch + (model.nq,))
    v = rng.normal(size=batch + (model.nv,))
    a = rng.normal(size=batch + (model.nv,))
    tau = rng.normal(scale=5.0, size=batch + (model.nv,))
    fext = rng.normal(scale=2.0, size=batch + (model.nbodies, 6))
    return q, v, a, tau, fext


def close(actual, expected, tol, what=""):
    """``actual`` equals ``expected`` to ``tol`` relative to the size of ``expected`` (at least 1)."""
    expected = np.asarray(expected, dtype=float)
    actual = np.asarray(actual, dtype=float)
    assert actual.shape == expected.shape, (what, actual.shape, expected.shape)
    scale = max(1.0, float(np.abs(expected).max(initial=0.0)))
    np.testing.assert_allclose(actual, expected, rtol=0, atol=tol * scale, err_msg=what)


def along(model, q, directions, h=H):
    """q ⊕ (+h d) and q ⊕ (-h d) for each row d of ``directions`` (k, nv): two (k, nq) batches."""
    directions = np.atleast_2d(directions)
    qs = np.broadcast_to(q, (directions.shape[0], model.nq)).copy()
    return rbd.integrate(model, qs, h * directions), rbd.integrate(model, qs, -h * directions)


def vee(S):
    """The vector of the skew-symmetric part of S (..., 3, 3)."""
    A = 0.5 * (S - np.swapaxes(S, -1, -2))
    return np.stack([A[..., 2, 1], A[..., 0, 2], A[..., 1, 0]], axis=-1)


def placement_rates(M, M_plus, M_minus, h):
    """The frame twist in each reference from the central difference of its placement.

    local: (M⁻¹ Ṁ)^∨; world: (Ṁ M⁻¹)^∨; local_world_aligned: [ṗ; ω_world]."""
    dM = (M_plus - M_minus) / (2.0 * h)
    R, p = M[:3, :3], M[:3, 3]
    dR, dp = dM[..., :3, :3], dM[..., :3, 3]
    w_local = vee(np.matmul(R.T, dR))
    w_world = vee(np.matmul(dR, R.T))
    return {
        "local": np.concatenate([dp @ R, w_local], axis=-1),                      # [Rᵀ ṗ; ω_local]
        "world": np.concatenate([dp - np.cross(w_world, p), w_world], axis=-1),   # [ṗ − ω × p; ω]
        "local_world_aligned": np.concatenate([dp, w_world], axis=-1),
    }


def with_gravity(model, gravity):
    """``model`` with another gravity (the original is left as it is)."""
    before = model.gravity.copy()
    m = model.replace(gravity=gravity)
    np.testing.assert_array_equal(model.gravity, before)
    return m


def body_frames(model):
    return list(model.body_names)


def tangent_bracket(model, x, y):
    """The Lie bracket [x, y] of two tangent vectors (..., nv), joint by joint: the
    commutator on se(3) (free flyer), so(3) (spherical) and se(2) (planar); zero on
    the vector joints.  Computed as 6-vector commutators [ω×v' − ω'×v; ω×ω']."""
    out = np.zeros(np.broadcast_shapes(x.shape, y.shape))
    for i, kind in enumerate(model.joint_kinds):
        s = slice(int(model.v_idx[i]), int(model.v_idx[i] + model.joint_nv[i]))
        if kind == JointKind.FREE:
            idx = [0, 1, 2, 3, 4, 5]
        elif kind == JointKind.SPHERICAL:
            idx = [3, 4, 5]
        elif kind == JointKind.PLANAR:
            idx = [0, 1, 5]
        else:
            continue
        X = np.zeros(x.shape[:-1] + (6,))
        Y = np.zeros(y.shape[:-1] + (6,))
        X[..., idx] = x[..., s]
        Y[..., idx] = y[..., s]
        lin = np.cross(X[..., 3:], Y[..., :3]) - np.cross(Y[..., 3:], X[..., :3])
        ang = np.cross(X[..., 3:], Y[..., 3:])
        out[..., s] = np.concatenate([lin, ang], axis=-1)[..., idx]
    return out


def same_configuration(model, q1, q2, tol, what=""):
    """q1 and q2 are the same configuration: equal coordinates, quaternions up to sign."""
    q1, q2 = np.asarray(q1, float), q2.copy()
    for start in model.quaternion_q_idx:
        s = slice(int(start), int(start) + 4)
        flip = np.sum(q1[..., s] * q2[..., s], axis=-1) < 0
        q2[..., s] = np.where(flip[..., None], -q2[..., s], q2[..., s])
    close(q1, q2, tol, what)


# ------------------------------------------------------------------------------------------
# Mass matrix and inverse / forward dynamics
# ------------------------------------------------------------------------------------------
def test_mass_matrix_symmetric_positive_definite(model, backend):
    for seed in range(3):
        q = state(model, seed)[0]
        M = rbd.crba(model, q)
        assert M.shape == (model.nv, model.nv)
        np.testing.assert_array_equal(M, M.T)
        np.linalg.cholesky(M)  # raises LinAlgError unless positive definite
        assert np.linalg.eigvalsh(M).min() > 0.0


def test_mass_matrix_columns_are_rnea_of_unit_accelerations(model, backend):
    q = state(model, 1)[0]
    M = rbd.crba(model, q)
    eye = np.eye(model.nv)
    qs = np.broadcast_to(q, (model.nv, model.nq)).copy()
    zero = np.zeros((model.nv, model.nv))
    # Without gravity RNEA(q, 0, e_i) is column i itself, and RNEA(q, 0, 0) vanishes.
    free = with_gravity(model, np.zeros(3))
    bias = rbd.rnea(free, q, np.zeros(model.nv), np.zeros(model.nv))
    np.testing.assert_allclose(bias, 0.0, rtol=0, atol=1e-14)
    close(rbd.rnea(free, qs, zero, eye) - bias, M.T, ID_TOL, "zero gravity")
    # With gravity the bias is g(q); the difference is still the column.
    g = rbd.rnea(model, q, np.zeros(model.nv), np.zeros(model.nv))
    assert np.abs(g).max() > 1e-3
    close(rbd.rnea(model, qs, zero, eye) - g, M.T, ID_TOL, "with gravity")


def test_rnea_decomposes_into_mass_matrix_and_bias(model, backend):
    for seed in range(3):
        q, v, a, _, _ = state(model, seed)
        zero = np.zeros(model.nv)
        nle = rbd.nonlinear_effects(model, q, v)
        g = rbd.gravity(model, q)
        close(nle, rbd.rnea(model, q, v, zero), ID_TOL, "nle = rnea(q, v, 0)")
        close(g, rbd.rnea(model, q, zero, zero), ID_TOL, "g = rnea(q, 0, 0)")
        close(rbd.coriolis_matrix(model, q, v) @ v + g, nle, ID_TOL, "C v + g = nle")
        close(rbd.crba(model, q) @ a + nle, rbd.rnea(model, q, v, a), ID_TOL, "M a + nle = rnea")
        # nle − g is quadratic in v: doubling v quadruples it.
        close(rbd.nonlinear_effects(model, q, 2.0 * v) - g, 4.0 * (nle - g), ID_TOL, "quadratic in v")


def test_external_forces_enter_through_body_jacobians(model, backend):
    """A body wrench f_i (body frame) does virtual work J_iᵀ f_i: rnea(fext) = rnea − Σ J_iᵀ f_i."""
    for seed in range(2):
        q, v, a, tau, fext = state(model, seed)
        generalized = sum(rbd.frame_jacobian(model, q, name, reference="local").T @ fext[i]
                          for i, name in enumerate(body_frames(model)))
        assert np.abs(generalized).max() > 1e-3
        close(rbd.rnea(model, q, v, a, fext=fext), rbd.rnea(model, q, v, a) - generalized, ID_TOL, "rnea")
        M = rbd.crba(model, q)
        expected = np.linalg.solve(M, tau + generalized - rbd.nonlinear_effects(model, q, v))
        close(rbd.aba(model, q, v, tau, fext=fext), expected, 1e-8, "aba")


def test_aba_inverts_rnea(model, backend):
    for seed in range(3):
        q, v, a, tau, fext = state(model, seed)
        close(rbd.aba(model, q, v, rbd.rnea(model, q, v, a, fext=fext), fext=fext), a, 1e-8, "with fext")
        close(rbd.aba(model, q, v, rbd.rnea(model, q, v, a)), a, 1e-8, "without fext")
        close(rbd.rnea(model, q, v, rbd.aba(model, q, v, tau)), tau, 1e-8, "rnea(aba)")


def test_mass_matrix_derivative_and_coriolis(model, backend):
    """Ṁ (central differences of crba along q ⊕ t v) makes Ṁ − 2C skew-symmetric.

    (Cᵀ would pass this too; C v + g = nle above tells C from Cᵀ.)"""
    for seed in range(2):
        q, v, _, _, _ = state(model, seed)
        q_plus, q_minus = along(model, q, v)
        M_pm = rbd.crba(model, np.concatenate([q_plus, q_minus]))
        M_dot = (M_pm[0] - M_pm[1]) / (2 * H)
        C = rbd.coriolis_matrix(model, q, v)
        N = M_dot - 2.0 * C
        scale = max(1.0, np.abs(M_dot).max())
        assert np.abs(N).max() > 1e-3 * scale  # C is not just Ṁ / 2 (nor is the test empty)
        np.testing.assert_allclose(N + N.T, 0.0, rtol=0, atol=FD_TOL * scale)


# ------------------------------------------------------------------------------------------
# Energies
# ------------------------------------------------------------------------------------------
def test_kinetic_energy_is_quadratic_form_of_mass_matrix(model, backend):
    for seed in range(3):
        q, v, _, _, _ = state(model, seed)
        T = rbd.kinetic_energy(model, q, v)
        assert T > 0.0
        close(T, 0.5 * v @ rbd.crba(model, q) @ v, ID_TOL)


def test_potential_energy(model, backend):
    """U = −m g·c, and its derivative along q ⊕ t e_k is the gravity torque g_k(q)."""
    for seed in range(2):
        q = state(model, seed)[0]
        U = rbd.potential_energy(model, q)
        close(U, -model.total_mass * model.gravity @ rbd.center_of_mass(model, q), ID_TOL, "U = -m g.c")
        q_plus, q_minus = along(model, q, np.eye(model.nv))
        dU = (rbd.potential_energy(model, q_plus) - rbd.potential_energy(model, q_minus)) / (2 * H)
        g = rbd.gravity(model, q)
        assert np.abs(g).max() > 1e-2
        close(g, dU, FD_TOL, "g = dU/dq")
        # and the potential energy follows the gravity vector
        flipped = with_gravity(model, -2.0 * model.gravity)
        close(rbd.potential_energy(flipped, q), -2.0 * U, ID_TOL, "U linear in gravity")


# ------------------------------------------------------------------------------------------
# Frames
# ------------------------------------------------------------------------------------------
def frames_of(model):
    """Every frame, alternately by index and by name."""
    return [k if k % 2 else name for k, name in enumerate(model.frame_names)]


def test_frame_jacobian_against_placement_differences(model, backend):
    q = state(model, 3)[0]
    q_plus, q_minus = along(model, q, np.eye(model.nv))
    for frame in frames_of(model):
        M = rbd.frame_placement(model, q, frame)
        rates = placement_rates(M, rbd.frame_placement(model, q_plus, frame),
                                rbd.frame_placement(model, q_minus, frame), H)
        for reference in REFERENCES:
            J = rbd.frame_jacobian(model, q, frame, reference=reference)
            close(J, rates[reference].T, FD_TOL, "%s %s" % (frame, reference))


def test_frame_velocity_against_placement_differences(model, backend):
    """frame_velocity = J v, and = the placement's rate along q ⊕ t v."""
    q, v, _, _, _ = state(model, 4)
    q_plus, q_minus = along(model, q, v)
    for frame in frames_of(model):
        M = rbd.frame_placement(model, q, frame)
        rates = placement_rates(M, rbd.frame_placement(model, q_plus[0], frame),
                                rbd.frame_placement(model, q_minus[0], frame), H)
        for reference in REFERENCES:
            V = rbd.frame_velocity(model, q, v, frame, reference=reference)
            close(V, rates[reference], FD_TOL, "%s %s FD" % (frame, reference))
            close(V, rbd.frame_jacobian(model, q, frame, reference=reference) @ v, ID_TOL,
                  "%s %s J v" % (frame, reference))


def test_references_are_related_by_the_frame_placement(model, backend):
    """world = Ad_M local; local_world_aligned = R local (both parts rotated)."""
    q, v, _, _, _ = state(model, 5)
    for frame in frames_of(model):
        M = rbd.frame_placement(model, q, frame)
        R, p = M[:3, :3], M[:3, 3]
        local = rbd.frame_velocity(model, q, v, frame, reference="local")
        lwa = rbd.frame_velocity(model, q, v, frame, reference="local_world_aligned")
        world = rbd.frame_velocity(model, q, v, frame, reference="world")
        close(lwa, np.concatenate([R @ local[:3], R @ local[3:]]), ID_TOL, "lwa")
        close(world, np.concatenate([lwa[:3] + np.cross(p, lwa[3:]), lwa[3:]]), ID_TOL, "world")


def test_frame_jacobian_time_derivative_against_differences(model, backend):
    for seed in range(2):
        q, v, _, _, _ = state(model, 6 + seed)
        q_plus, q_minus = along(model, q, v)
        q_pm = np.concatenate([q_plus, q_minus])
        for frame in frames_of(model):
            for reference in REFERENCES:
                J_pm = rbd.frame_jacobian(model, q_pm, frame, reference=reference)
                dJ = rbd.frame_jacobian_time_derivative(model, q, v, frame, reference=reference)
                close(dJ, (J_pm[0] - J_pm[1]) / (2 * H), FD_TOL, "%s %s" % (frame, reference))


def test_frame_acceleration_is_derivative_of_frame_velocity(model, backend):
    """frame_acceleration is d/dt frame_velocity in the same reference (so J a + J̇ v);
    in local_world_aligned its linear part is the classical p̈ of the frame origin.

    The motion q(t) = q ⊕ (t v + t² a / 2) has joint velocity v + t a + O(t²), the
    O(t²) even in t, so the central difference of frame_velocity(q(t), v + t a)
    is the acceleration to O(h²)."""
    for seed in range(2):
        q, v, a, _, _ = state(model, 8 + seed)
        steps = np.stack([H * v + 0.5 * H * H * a, -H * v + 0.5 * H * H * a])
        q_pm = rbd.integrate(model, np.stack([q, q]), steps)
        v_pm = np.stack([v + H * a, v - H * a])
        # second differences of the frame origin, with a larger step
        h2 = 1e-4
        q_2 = rbd.integrate(model, np.stack([q, q]), np.stack([h2 * v + 0.5 * h2 * h2 * a,
                                                               -h2 * v + 0.5 * h2 * h2 * a]))
        for frame in frames_of(model):
            for reference in REFERENCES:
                acc = rbd.frame_acceleration(model, q, v, a, frame, reference=reference)
                V_pm = rbd.frame_velocity(model, q_pm, v_pm, frame, reference=reference)
                what = "%s %s" % (frame, reference)
                close(acc, (V_pm[0] - V_pm[1]) / (2 * H), FD_TOL, what + " FD")
                J = rbd.frame_jacobian(model, q, frame, reference=reference)
                dJ = rbd.frame_jacobian_time_derivative(model, q, v, frame, reference=reference)
                close(acc, J @ a + dJ @ v, ID_TOL, what + " J a + dJ v")
            p = rbd.frame_placement(model, np.stack([q_2[0], q, q_2[1]]), frame)[:, :3, 3]
            p_ddot = (p[0] - 2.0 * p[1] + p[2]) / (h2 * h2)
            lwa = rbd.frame_acceleration(model, q, v, a, frame, reference="local_world_aligned")
            close(lwa[:3], p_ddot, 1e-5, "%s classical p_ddot" % frame)


def test_body_frames_are_the_forward_kinematics(model, backend):
    q = state(model, 10)[0]
    fk = rbd.forward_kinematics(model, q)
    assert fk.shape == (model.nbodies, 4, 4)
    for i, name in enumerate(body_frames(model)):
        np.testing.assert_array_equal(rbd.frame_placement(model, q, name), fk[i])
    # every placement is a rigid transform
    R = fk[:, :3, :3]
    close(np.matmul(R, np.swapaxes(R, -1, -2)), np.broadcast_to(np.eye(3), R.shape), ID_TOL)
    close(np.linalg.det(R), np.ones(model.nbodies), ID_TOL)
    close(fk[:, 3], np.broadcast_to([0.0, 0.0, 0.0, 1.0], (model.nbodies, 4)), 0.0)


# ------------------------------------------------------------------------------------------
# Center of mass and momentum
# ------------------------------------------------------------------------------------------
def test_com_jacobian_against_differences(model, backend):
    for seed in range(2):
        q, v, _, _, _ = state(model, 11 + seed)
        q_plus, q_minus = along(model, q, np.eye(model.nv))
        Jc = rbd.com_jacobian(model, q)
        close(Jc, ((rbd.center_of_mass(model, q_plus) - rbd.center_of_mass(model, q_minus)) / (2 * H)).T,
              FD_TOL)
        # the linear momentum is the total mass times the velocity of the center of mass
        q_plus, q_minus = along(model, q, v)
        c_dot = (rbd.center_of_mass(model, q_plus[0]) - rbd.center_of_mass(model, q_minus[0])) / (2 * H)
        h = rbd.centroidal_momentum(model, q, v)
        assert h.shape == (6,)
        close(h[:3], model.total_mass * c_dot, FD_TOL, "p = m c_dot")
        close(h[:3], model.total_mass * (Jc @ v), ID_TOL, "p = m J_com v")


def test_center_of_mass_is_the_mass_weighted_body_centers(model, backend):
    """c = Σ m_i c_i / m with c_i = world_from_body_i (body center), from the model's inertias."""
    q = state(model, 13)[0]
    fk = rbd.forward_kinematics(model, q)
    masses = model.inertias[:, 0]
    local = model.inertias[:, 1:4]  # m_i c_i in body coordinates
    moments = np.einsum("bij,bj->bi", fk[:, :3, :3], local) + masses[:, None] * fk[:, :3, 3]
    close(rbd.center_of_mass(model, q), moments.sum(axis=0) / masses.sum(), ID_TOL)


@pytest.mark.parametrize("model_id", ["quadruped", "tree-floating"])
def test_centroidal_momentum_rate_is_external_wrench(model_id, backend):
    """Floating base: the only external wrenches are gravity (no moment about the
    center of mass) and the free-flyer joint's wrench, rnea(q, v, a)[:6] in the base
    frame; so ṗ = R f + m g and ḣ_G = R n + (p_base − c) × R f (finite differences of
    centroidal_momentum along q ⊕ (t v + t² a / 2) with velocity v + t a).  (With a
    fixed base the world's wrench on the roots is not available from RNEA.)"""
    model = get_model(model_id)
    assert model.joint_kinds[0] == JointKind.FREE
    for seed in range(2):
        q, v, a, _, _ = state(model, 14 + seed)
        steps = np.stack([H * v + 0.5 * H * H * a, -H * v + 0.5 * H * H * a])
        q_pm = rbd.integrate(model, np.stack([q, q]), steps)
        h_pm = rbd.centroidal_momentum(model, q_pm, np.stack([v + H * a, v - H * a]))
        rate = (h_pm[0] - h_pm[1]) / (2 * H)
        wrench = rbd.rnea(model, q, v, a)[:6]
        base = rbd.forward_kinematics(model, q)[0]
        R, p_base = base[:3, :3], base[:3, 3]
        f, n = R @ wrench[:3], R @ wrench[3:]
        c = rbd.center_of_mass(model, q)
        close(rate[:3], f + model.total_mass * model.gravity, FD_TOL, "linear")
        close(rate[3:], n + np.cross(p_base - c, f), FD_TOL, "angular")


# ------------------------------------------------------------------------------------------
# Configuration space
# ------------------------------------------------------------------------------------------
def test_difference_inverts_integrate(model, backend):
    for seed in range(3):
        q, v, _, _, _ = state(model, 16 + seed)
        small = 0.3 * v  # rotations well below pi
        close(rbd.difference(model, q, rbd.integrate(model, q, small)), small, ID_TOL, "difference(q, q + v)")
        np.testing.assert_allclose(rbd.difference(model, q, q), 0.0, rtol=0, atol=1e-14)
        same_configuration(model, rbd.integrate(model, q, np.zeros(model.nv)), q, 1e-15, "q + 0")


def test_integrate_inverts_difference(model, backend):
    for seed in range(3):
        q0 = state(model, 19 + seed)[0]
        q1 = state(model, 22 + seed)[0]
        d = rbd.difference(model, q0, q1)
        q_end = rbd.integrate(model, q0, d)
        # Planar headings come back up to whole turns; compare those through the placements.
        planar = [int(model.q_idx[i]) + 2 for i, k in enumerate(model.joint_kinds) if k == JointKind.PLANAR]
        turns = np.round((q_end[planar] - q1[planar]) / (2 * np.pi))
        q_end[planar] -= 2 * np.pi * turns
        same_configuration(model, q_end, q1, 1e-10, "q0 + (q1 - q0)")
        close(rbd.forward_kinematics(model, q_end), rbd.forward_kinematics(model, q1), 1e-10, "placements")
        # the difference is antisymmetric
        close(rbd.difference(model, q1, q0), -d, 1e-10, "q0 - q1")


def test_normalize(model, backend):
    q = state(model, 26)[0]
    np.testing.assert_allclose(rbd.normalize(model, q), q, rtol=0, atol=1e-15)
    rng = np.random.default_rng(0)
    scaled = q.copy()
    for start in model.quaternion_q_idx:
        scaled[start:start + 4] *= rng.uniform(0.2, 5.0)
    out = rbd.normalize(model, scaled)
    mask = np.ones(model.nq, bool)
    for start in model.quaternion_q_idx:
        close(np.linalg.norm(out[start:start + 4]), 1.0, 1e-15)
        mask[start:start + 4] = False
    np.testing.assert_array_equal(out[mask], scaled[mask])
    close(out, q, 1e-15)
    close(rbd.normalize(model, out), out, 1e-15)


def test_neutral_and_random_configuration(model, backend):
    q0 = rbd.neutral(model)
    assert q0.shape == (model.nq,)
    # at the neutral configuration every joint transform is the identity
    fk = rbd.forward_kinematics(model, q0)
    for i, p in enumerate(model.parents):
        expected = model.joint_placements[i] if p < 0 else fk[p] @ model.joint_placements[i]
        close(fk[i], expected, ID_TOL, model.joint_names[i])
    np.testing.assert_array_equal(rbd.normalize(model, q0), q0)
    q = rbd.random_configuration(model, np.random.default_rng(3))
    np.testing.assert_array_equal(q, rbd.random_configuration(model, np.random.default_rng(3)))
    close(rbd.normalize(model, q), q, 1e-14)
    lo, hi = np.isfinite(model.lower_limits), np.isfinite(model.upper_limits)
    assert np.all(q[lo] >= model.lower_limits[lo]) and np.all(q[hi] <= model.upper_limits[hi])


# ------------------------------------------------------------------------------------------
# Energy balance along a simulated motion
# ------------------------------------------------------------------------------------------
def simulate(model, q, v, torque, h, steps):
    """Integrate q̈ = aba(q, v, τ(t)) with 4th-order Runge–Kutta–Munthe-Kaas on the joint
    manifolds: q = q_n ⊕ ξ, ξ̇ = dexp⁻¹(v) ≈ v + [ξ, v]/2 + [ξ, [ξ, v]]/12 (enough for
    order 4).  Returns the states at every step, shapes (steps + 1, ...)."""
    def dexpinv(xi, w):
        b = tangent_bracket(model, xi, w)
        return w + 0.5 * b + tangent_bracket(model, xi, b) / 12.0

    qs, vs = [q], [v]
    t = 0.0
    for _ in range(steps):
        k1q, k1v = v, rbd.aba(model, q, v, torque(t))
        xi = 0.5 * h * k1q
        v2 = v + 0.5 * h * k1v
        k2q, k2v = dexpinv(xi, v2), rbd.aba(model, rbd.integrate(model, q, xi), v2, torque(t + 0.5 * h))
        xi = 0.5 * h * k2q
        v3 = v + 0.5 * h * k2v
        k3q, k3v = dexpinv(xi, v3), rbd.aba(model, rbd.integrate(model, q, xi), v3, torque(t + 0.5 * h))
        xi = h * k3q
        v4 = v + h * k3v
        k4q, k4v = dexpinv(xi, v4), rbd.aba(model, rbd.integrate(model, q, xi), v4, torque(t + h))
        q = rbd.integrate(model, q, h / 6.0 * (k1q + 2 * k2q + 2 * k3q + k4q))
        v = v + h / 6.0 * (k1v + 2 * k2v + 2 * k3v + k4v)
        t += h
        qs.append(q)
        vs.append(v)
    return np.stack(qs), np.stack(vs)


def simpson(y, h):
    """Composite Simpson integral along axis 0 (an even number of intervals)."""
    assert (len(y) - 1) % 2 == 0
    return h / 3.0 * (y[0] + y[-1] + 4.0 * y[1:-1:2].sum(axis=0) + 2.0 * y[2:-1:2].sum(axis=0))


SIM_STEPS, SIM_H = 120, 1e-3


def test_energy_balance_along_simulated_motion(model, backend):
    """d/dt (T + U) = vᵀ τ: E(T) − E(0) = ∫ vᵀ τ dt; with τ = 0 the energy is conserved.

    Sample 0 is driven by a smooth τ(t) (zero on a free-flyer root: unactuated),
    sample 1 moves freely from the same state.  RK4 and Simpson are both O(h⁴)
    (checked: halving h divides the error by 16): with h = 1e-3 the balance holds
    to ~1e-10 of the energies and work involved, the tolerance is 1e-8."""
    q, v, _, _, _ = state(model, 27)
    rng = np.random.default_rng(5)
    # torques of the size of the joints' inertias: accelerations of some 10 per s²
    amplitude = rng.normal(scale=10.0, size=model.nv) * np.diag(ref.crba(model, q))
    phase = rng.uniform(0, 2 * np.pi, size=model.nv)
    omega = rng.uniform(5.0, 20.0, size=model.nv)
    floating = model.joint_kinds[0] == JointKind.FREE
    if floating:
        amplitude[:6] = 0.0

    def torque(t):
        return np.stack([amplitude * np.sin(omega * t + phase), np.zeros(model.nv)])

    qs, vs = simulate(model, np.stack([q, q]), np.stack([v, v]), torque, SIM_H, SIM_STEPS)
    kinetic = rbd.kinetic_energy(model, qs, vs)  # (steps + 1, 2)
    energy = kinetic + rbd.potential_energy(model, qs)
    times = SIM_H * np.arange(SIM_STEPS + 1)
    power = np.array([np.sum(vs[k] * torque(t), axis=-1) for k, t in enumerate(times)])
    work = simpson(power, SIM_H)
    scale = np.abs(energy).max() + simpson(np.abs(power), SIM_H).max()
    assert np.abs(work[0]) > 1e-3 * scale  # the torque does real work
    assert np.ptp(kinetic[:, 1]) > 1e-3 * scale  # the free motion trades kinetic for potential energy
    np.testing.assert_allclose(energy[-1] - energy[0], work, rtol=0, atol=1e-8 * scale)
    # along the whole free motion (not only at the end)
    np.testing.assert_allclose(energy[:, 1], energy[0, 1], rtol=0, atol=1e-8 * scale)
    if floating:
        # base unactuated: ṗ = m g, and gravity has no moment about the center of mass
        momentum = rbd.centroidal_momentum(model, qs, vs)
        expected = momentum[0, :, :3] + model.total_mass * model.gravity * times[:, None, None]
        close(momentum[:, :, :3], expected, 1e-8, "linear momentum")
        close(momentum[:, :, 3:], np.broadcast_to(momentum[0, :, 3:], momentum[:, :, 3:].shape), 1e-8,
              "angular momentum about the com")


# ------------------------------------------------------------------------------------------
# Batches: every function gives exactly its per-sample results
# ------------------------------------------------------------------------------------------
def _as_array(result, nbatch):
    """A result as one array: several outputs (a tuple) stacked after the batch dimensions."""
    return np.stack(result, axis=nbatch) if isinstance(result, tuple) else np.asarray(result)


@pytest.mark.parametrize("batch", [(3,), (2, 3)], ids=["3", "2x3"])
def test_batches_equal_per_sample_results(model, backend, batch):
    q, v, a, tau, fext = state(model, 30, batch)
    q1 = state(model, 31, batch)[0]
    frames = [model.link_frame_names[-1], model.nframes // 2, model.nframes - 1]
    for name, args, kwargs in algorithm_calls(q, v, a, tau, fext, q1, frames):
        got = _as_array(getattr(rbd, name)(model, *args, **kwargs), len(batch))
        what = "%s %s" % (name, kwargs)
        for idx in np.ndindex(*batch):
            single_args = tuple(x[idx] if isinstance(x, np.ndarray) else x for x in args)
            single_kwargs = {k: (x[idx] if isinstance(x, np.ndarray) else x) for k, x in kwargs.items()}
            single = _as_array(getattr(rbd, name)(model, *single_args, **single_kwargs), 0)
            assert got.shape == batch + single.shape, what
            # A few ulps, not bits: vectorized libm (np.cos on a batch) may round unlike scalar libm.
            scale = max(1.0, float(np.abs(single).max(initial=0.0)))
            atol = 1e-14 * scale
            if name == "inverse_mass_matrix":  # ... which M's conditioning amplifies in M^-1
                atol += m_inverse_slack(rbd.crba(model, single_args[0]), single)
            elif name == "aba":  # ... and in qdd (the batches' lanes and one sample are two forms of ABA)
                atol += aba_slack(model, single_args[0], single)
            elif name == "aba_derivatives":  # ... and in -M^-1 dtau/dx
                atol += aba_derivatives_slack(model, *single_args, single_kwargs.get("fext"), single[2])
            np.testing.assert_allclose(got[idx], single, rtol=1e-14, atol=atol,
                                       err_msg="%s sample %s" % (what, idx))


def test_results_that_do_not_depend_on_the_world_origin_stay_exact_far_from_it(backend):
    """A floating robot 10 km from the world origin (odometry, map or UTM coordinates) has
    the same mass matrix, M^-1, derivatives, contact dynamics, Coriolis and centroidal
    matrices as at the origin: they do not depend on where the world's origin is.  Sums
    taken about the world origin lose digits there (M^-1 lost four): the kernels sum
    about the first body's origin instead.  One sample and a batch (SIMD lanes)."""
    model = random_model(4, nlinks=12)
    contacts = contacts_on(model)
    rng = np.random.default_rng(8)
    q = rbd.random_configuration(model, rng, batch=9)
    v, tau = rng.normal(size=(9, model.nv)), rng.normal(size=(9, model.nv))
    far = q.copy()
    far[:, 0:3] += 1e4  # (the free flyer's translation)
    calls = {
        "crba": lambda q, v, tau: rbd.crba(model, q),
        "inverse_mass_matrix": lambda q, v, tau: rbd.inverse_mass_matrix(model, q),
        "rnea_derivatives": lambda q, v, tau: rbd.rnea_derivatives(model, q, v, tau),
        "aba_derivatives": lambda q, v, tau: rbd.aba_derivatives(model, q, v, tau),
        "constrained_dynamics": lambda q, v, tau: rbd.constrained_dynamics(model, q, v, tau, contacts),
        "impulse_dynamics": lambda q, v, tau: rbd.impulse_dynamics(model, q, v, contacts),
        "contact_jacobian": lambda q, v, tau: rbd.contact_jacobian(model, q, contacts),
        "coriolis_matrix": lambda q, v, tau: rbd.coriolis_matrix(model, q, v),
        "centroidal_momentum_matrix": lambda q, v, tau: rbd.centroidal_momentum_matrix(model, q),
        "centroidal_momentum_matrix_time_variation":
            lambda q, v, tau: rbd.centroidal_momentum_matrix_time_variation(model, q, v),
        "centroidal_momentum": lambda q, v, tau: rbd.centroidal_momentum(model, q, v),
    }

    def flat(result):
        return np.concatenate([np.ravel(x) for x in (result if isinstance(result, tuple) else (result,))])

    for name, call in calls.items():
        for pick in (0, slice(None)):  # one sample, and the batch
            here, there = (flat(call(x[pick], v[pick], tau[pick])) for x in (q, far))
            scale = max(1.0, float(np.abs(here).max()))
            assert np.abs(there - here).max() <= 1e-9 * scale, (name, pick)


@pytest.mark.parametrize("speed", [1.0, 1e5, 1e10])
def test_a_robot_in_pure_translation_has_no_velocity_products_at_any_speed(backend, speed):
    """A floating robot moving as one body in pure translation (the base's linear velocity
    only) has no Coriolis or centrifugal forces, however fast (Galilean invariance): rnea is
    gravity's, aba and the contact dynamics are those at rest, to rounding of the forces
    themselves, not of speed^2 (the NumPy backend's bias force, written v x (m v - beta),
    left eps m speed^2: 1e-4 relative at 1e10 m/s)."""
    model = rbd.sample_model("quadruped")
    rng = np.random.default_rng(4)
    q = rbd.random_configuration(model, rng)
    v = np.zeros(model.nv)
    v[:3] = speed * np.array([0.6, -0.48, 0.64])  # (the free flyer's linear velocity, base axes)
    tau = rng.normal(size=model.nv)
    g = rbd.gravity(model, q)
    np.testing.assert_allclose(rbd.rnea(model, q, v, np.zeros(model.nv)), g, rtol=0, atol=1e-12 * np.abs(g).max())
    at_rest = rbd.aba(model, q, np.zeros(model.nv), tau)
    np.testing.assert_allclose(rbd.aba(model, q, v, tau), at_rest, rtol=0, atol=1e-12 * np.abs(at_rest).max())
    feet = [rbd.Contact(f) for f in ("FL_foot", "FR_foot")]
    moving, resting = (rbd.constrained_dynamics(model, q, x, tau, feet)[0] for x in (v, np.zeros(model.nv)))
    np.testing.assert_allclose(moving, resting, rtol=0, atol=1e-12 * np.abs(resting).max())
