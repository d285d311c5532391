"""Contacts, impacts, kinematic Hessians and the torque regressor.

Oracles: Pinocchio's constraintDynamics / impulseDynamics (Solo12 with four point feet,
Talos with two flat soles), computeJointTorqueRegressor and the joint kinematic
Hessians on example-robot-data; on random trees with every joint kind, both backends:
the contact constraints through frame_acceleration, the equations of motion and of
the impact, energy through a plastic impact, H @ v = frame_jacobian_time_derivative and
H by central differences, Y @ pi = rnea, regularized solutions converging."""
import numpy as np
import pytest

import rbd
from conftest import HAVE_COMPILED
from models import random_model, contacts_on

from oracles.pinocchio_adapter import constraint_models, load_pair, pin, robot_urdf_path


def tree_and_state(seed=0, floating=True):
    model = random_model(seed, nlinks=12, floating_base=floating, nframes=3)
    rng = np.random.default_rng([seed, 5])
    q = rbd.random_configuration(model, rng)
    return model, q, rng.normal(size=model.nv), rng.normal(size=model.nv), rng.normal(size=model.nv)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_constrained_dynamics_identities(seed, backend):
    model, q, v, _, tau = tree_and_state(seed)
    contacts = contacts_on(model, q)
    fext = np.random.default_rng(seed).normal(size=(model.nbodies, 6))
    qdd, forces = rbd.constrained_dynamics(model, q, v, tau, contacts, fext)
    J = rbd.contact_jacobian(model, q, contacts)
    assert J.shape == (12, model.nv) and forces.shape == (12,) and np.linalg.matrix_rank(J) == 12
    M, h = rbd.crba(model, q), rbd.rnea(model, q, v, np.zeros(model.nv), fext)
    np.testing.assert_allclose(M @ qdd + h, tau + J.T @ forces, atol=1e-9)
    point, flat, local_point = contacts
    np.testing.assert_allclose(rbd.frame_acceleration(model, q, v, qdd, point.frame, "local_world_aligned")[:3], 0,
                               atol=1e-9)
    np.testing.assert_allclose(rbd.frame_acceleration(model, q, v, qdd, flat.frame, "local"), 0, atol=1e-9)
    np.testing.assert_allclose(rbd.frame_acceleration(model, q, v, qdd, local_point.frame, "local_world_aligned")[:3],
                               0, atol=1e-9)
    # the rows are the frame Jacobians in the contacts' axes
    R = rbd.frame_placement(model, q, local_point.frame)[:3, :3]
    np.testing.assert_allclose(J[9:], R.T @ rbd.frame_jacobian(model, q, local_point.frame, "local_world_aligned")[:3],
                               atol=1e-12)
    # damped solutions converge to the exact one
    errors = [np.abs(rbd.constrained_dynamics(model, q, v, tau, contacts, fext, regularization=r)[0] - qdd).max()
              for r in (1e-4, 1e-6, 1e-8)]
    scale = max(1.0, np.abs(qdd).max())
    assert errors[0] > 10 * errors[1] > 100 * errors[2] and errors[2] < 1e-3 * scale, errors  # O(regularization)


def test_many_contacts_on_free_bodies(backend):
    """Forty point contacts: 120 rows, so the compiled Cholesky of the contact system runs in
    several panels (64 columns each). Each contact is on its own free body (3 independent
    rows). Oracles: the equations of motion (crba, rnea, contact_jacobian) and the
    contact points' accelerations; LAPACK's solve of the dense KKT system."""
    b = rbd.ModelBuilder("forty")
    b.add_link("ground")
    rng = np.random.default_rng(11)
    for i in range(40):
        b.add_link("body%d" % i, mass=0.5 + rng.random(), com=0.05 * rng.normal(size=3),
                   inertia=np.diag(0.01 + 0.01 * rng.random(3)))
        b.add_joint("free%d" % i, "floating", "ground", "body%d" % i)
        origin = np.eye(4)
        origin[:3, 3] = 0.1 * rng.normal(size=3)
        b.add_frame("tip%d" % i, "body%d" % i, origin)
    model = b.build()
    q = rbd.random_configuration(model, rng)
    v, tau = rng.normal(size=(2, model.nv))
    contacts = [rbd.Contact("tip%d" % i) for i in range(40)]
    qdd, forces = rbd.constrained_dynamics(model, q, v, tau, contacts)
    J = rbd.contact_jacobian(model, q, contacts)
    M, h = rbd.crba(model, q), rbd.rnea(model, q, v, np.zeros(model.nv))
    np.testing.assert_allclose(M @ qdd + h, tau + J.T @ forces, atol=1e-9)
    held = [rbd.frame_acceleration(model, q, v, qdd, c.frame, "local_world_aligned")[:3] for c in contacts]
    np.testing.assert_allclose(held, 0, atol=1e-9)
    drift = np.concatenate([rbd.frame_acceleration(model, q, v, np.zeros(model.nv), c.frame,
                                                   "local_world_aligned")[:3] for c in contacts])
    kkt = np.block([[M, -J.T], [J, np.zeros((120, 120))]])
    x = np.linalg.solve(kkt, np.concatenate([tau - h, -drift]))
    np.testing.assert_allclose(x[:model.nv], qdd, atol=1e-9)
    np.testing.assert_allclose(x[model.nv:], forces, atol=1e-8 * max(1.0, np.abs(forces).max()))


@pytest.mark.parametrize("restitution", [0.0, 0.5])
def test_impulse_dynamics_identities(restitution, backend):
    model, q, v, _, _ = tree_and_state(3)
    contacts = contacts_on(model, q)
    v_after, impulses = rbd.impulse_dynamics(model, q, v, contacts, restitution=restitution)
    J, M = rbd.contact_jacobian(model, q, contacts), rbd.crba(model, q)
    np.testing.assert_allclose(M @ (v_after - v), J.T @ impulses, atol=1e-9)
    np.testing.assert_allclose(J @ v_after, -restitution * (J @ v), atol=1e-9)
    if restitution == 0.0:
        assert rbd.kinetic_energy(model, q, v_after) <= rbd.kinetic_energy(model, q, v) + 1e-12


def test_redundant_contacts_need_regularization(backend):
    model, q, v, _, tau = tree_and_state(4)
    tool = model.joint_frame(model.nbodies - 1)
    twice = [rbd.Contact(tool, 6), rbd.Contact(tool, 3)]
    name = model.frame_names[tool]  # contacts given by index are named in the error
    with pytest.raises(ValueError, match="'%s', '%s' is rank-deficient.*give a regularization > 0" % (name, name)):
        rbd.constrained_dynamics(model, q, v, tau, twice)
    qdd, _ = rbd.constrained_dynamics(model, q, v, tau, twice, regularization=1e-8)
    assert np.all(np.isfinite(qdd))
    # a regularization given but too small to lift the pivots is not told to be > 0
    with pytest.raises(ValueError, match="rank-deficient.*regularization=1e-16 is too small.*give a larger one"):
        rbd.constrained_dynamics(model, q, v, tau, twice, regularization=1e-16)


def test_a_rank_deficient_contact_set_says_why_it_cannot_be_independent(backend):
    """A contact on a frame no joint moves, or with more rows than the dofs moving its frame,
    is rank-deficient at every pose: the error says which (the pose is not to blame)."""
    model = rbd.sample_model("arm7")
    q, z = rbd.neutral(model), np.zeros(model.nv)
    with pytest.raises(ValueError, match="fixed to the world, which no joint moves: 'base_link'"):
        rbd.constrained_dynamics(model, q, z, z, [rbd.Contact("base_link", 3)])
    second = model.link_frame_names[2]  # moved by the first two joints only
    with pytest.raises(ValueError, match="more rows than the dofs that move their frames: '%s' \\(6 rows, 2 dofs\\)"
                       % second):
        rbd.impulse_dynamics(model, q, z, [rbd.Contact(second, 6)])
    with pytest.raises(ValueError, match="9 rows, more than the model's 7 dofs, at any pose"):
        rbd.constrained_dynamics(model, q, z, z, [rbd.Contact("tool0", 6), rbd.Contact("link3")])


def test_a_rank_deficient_sample_is_named_before_an_overflowing_one(backend):
    """Velocities whose products overflow float64 and a contact set that is rank-deficient
    (in the same sample or another): the rank-deficient sample is the error, on both
    backends (the NumPy backend computed the overflowing velocity terms first)."""
    model = rbd.sample_model("arm7")
    Q = np.stack([np.full(7, 0.3), np.zeros(7)])  # sample 1: the arm straight up, its tool's 6-D rows rank 5
    V = np.stack([np.full(7, 1e155), np.ones(7)])  # sample 0: v x v overflows
    tool = [rbd.Contact("tool0", 6)]
    for order, singular in ((slice(None), 1), (slice(None, None, -1), 0)):
        with pytest.raises(ValueError, match="rank-deficient in sample %d of the batch" % singular):
            rbd.constrained_dynamics(model, Q[order], V[order], np.zeros((2, 7)), tool)
    with pytest.raises(rbd.ResultOverflow, match="in sample 0 of the batch"):  # no singular sample: the overflow
        rbd.constrained_dynamics(model, Q[:1], V[:1], np.zeros((1, 7)), tool)
    quad = rbd.sample_model("quadruped")
    twice = [rbd.Contact("FL_foot"), rbd.Contact("FL_foot")]
    with pytest.raises(ValueError, match="'FL_foot', 'FL_foot' is rank-deficient"):
        rbd.constrained_dynamics(quad, rbd.neutral(quad), np.full(quad.nv, 1e155), np.zeros(quad.nv), twice)


def test_an_exactly_singular_arm_is_refused_at_every_pose(backend):
    """The Panda straight up (joint2 = joint4 = 0: joints 1 and 3 on one axis, the elbow
    stretched): its hand's 6-D contact has rank 5 at any angle of the other joints. With the
    wrist near its own singularity (joint6 near 0) the Cholesky pivots kept the first
    elimination's rounding and passed the rank test: forces of 1e15 N that broke the
    equations of motion, on either backend. Every pose, single and batched, is now refused;
    with the elbow bent (rank 6, SVD) the same poses solve."""
    path = robot_urdf_path("panda")
    if path is None:
        pytest.skip("example-robot-data is not installed")
    with pytest.warns(UserWarning, match="mimic joints"):  # (its fingers: independent here)
        model = rbd.load_urdf(path)
    hand = [rbd.Contact("panda_hand", 6)]
    rng = np.random.default_rng(11)
    poses = [rbd.random_configuration(model, rng) for _ in range(24)]
    for joint6 in (1e-3, 1e-4, 1e-5):
        poses.append(np.array([0.1, 0.0, -0.2, 0.0, 0.2, joint6, 0.3, 0.01, 0.01]))
    Q = np.array(poses)
    Q[:, 1] = Q[:, 3] = 0.0
    v = np.full(model.nv, 0.1)
    tau = np.zeros(model.nv)
    for q in Q:
        assert np.linalg.matrix_rank(rbd.contact_jacobian(model, q, hand)) == 5
        with pytest.raises(ValueError, match="rank-deficient"):
            rbd.constrained_dynamics(model, q, v, tau, hand)
        with pytest.raises(ValueError, match="rank-deficient"):
            rbd.impulse_dynamics(model, q, v, hand)
    with pytest.raises(ValueError, match="rank-deficient"):
        rbd.constrained_dynamics(model, Q, v, tau, hand)
    with pytest.raises(ValueError, match="rank-deficient"):
        rbd.impulse_dynamics(model, Q, v, hand)
    Q[:, 3] = -1.0  # the elbow bent: rank 6
    qdd, forces = rbd.constrained_dynamics(model, Q, v, tau, hand)
    for q, a, f in zip(Q, qdd, forces):
        J = rbd.contact_jacobian(model, q, hand)
        assert np.linalg.matrix_rank(J) == 6
        M, h = rbd.crba(model, q), rbd.nonlinear_effects(model, q, v)
        np.testing.assert_allclose(M @ a + h, tau + J.T @ f, atol=1e-8 * max(1.0, np.abs(f).max()))
        np.testing.assert_allclose(rbd.frame_acceleration(model, q, v, a, "panda_hand", "local"), 0, atol=1e-8)


def test_contact_errors(backend):
    model, q, v, _, tau = tree_and_state(0)
    with pytest.raises(ValueError, match="dim"):
        rbd.Contact(0, dim=4)
    with pytest.raises(ValueError, match="reference"):
        rbd.Contact(0, reference="world")
    with pytest.raises(ValueError, match="reference must be"):  # (it equals "local", but is no str: unhashable)
        rbd.Contact(0, reference=np.array("local"))
    with pytest.raises(ValueError, match="unknown frame"):
        rbd.contact_jacobian(model, q, [rbd.Contact("nowhere")])
    with pytest.raises(ValueError, match="regularization"):
        rbd.constrained_dynamics(model, q, v, tau, contacts_on(model), regularization=-1)
    with pytest.raises(ValueError, match="finite"):
        rbd.constrained_dynamics(model, q, np.full(model.nv, np.nan), tau, contacts_on(model))


def test_batches_equal_per_sample(backend):
    model, _, _, _, _ = tree_and_state(1)
    rng = np.random.default_rng(9)
    q = rbd.random_configuration(model, rng, batch=3)
    v, tau = rng.normal(size=(3, model.nv)), rng.normal(size=(3, model.nv))
    contacts = contacts_on(model)
    qdd, forces = rbd.constrained_dynamics(model, q, v, tau, contacts)
    v_after, impulses = rbd.impulse_dynamics(model, q, v, contacts)
    H = rbd.kinematic_hessian(model, q, contacts[0].frame)
    for k in range(3):
        one = rbd.constrained_dynamics(model, q[k], v[k], tau[k], contacts)
        np.testing.assert_allclose(qdd[k], one[0], atol=1e-10)
        np.testing.assert_allclose(forces[k], one[1], atol=1e-10)
        np.testing.assert_allclose(v_after[k], rbd.impulse_dynamics(model, q[k], v[k], contacts)[0], atol=1e-10)
        np.testing.assert_allclose(H[k], rbd.kinematic_hessian(model, q[k], contacts[0].frame), atol=1e-12)


def test_kinematic_hessian_takes_every_batch_dimension_allowed(backend):
    """16 batch dimensions, the most any algorithm takes: the Hessian's own sweep over the
    unit velocities must not count as one more (the NumPy backend refused it)."""
    model, q, _, _, _ = tree_and_state(2)
    frame = model.link_frame_names[-1]
    Q = np.stack([q, rbd.random_configuration(model, 7)]).reshape((2,) + (1,) * 15 + (model.nq,))
    H = rbd.kinematic_hessian(model, Q, frame)
    assert H.shape == (2,) + (1,) * 15 + (6, model.nv, model.nv)
    np.testing.assert_allclose(H[1].reshape(6, model.nv, model.nv), rbd.kinematic_hessian(model, Q[1].reshape(-1), frame),
                               atol=1e-12)
    with pytest.raises(ValueError, match="17 batch dimensions"):
        rbd.kinematic_hessian(model, Q[None], frame)


@pytest.mark.parametrize("reference", ["local", "world", "local_world_aligned"])
def test_kinematic_hessian(reference, backend):
    model, q, v, _, _ = tree_and_state(2)
    frame = model.link_frame_names[-1]
    H = rbd.kinematic_hessian(model, q, frame, reference)
    assert H.shape == (6, model.nv, model.nv)
    np.testing.assert_allclose(H @ v, rbd.frame_jacobian_time_derivative(model, q, v, frame, reference), atol=1e-11)
    h = 1e-6
    fd = np.stack([(rbd.frame_jacobian(model, rbd.integrate(model, q, h * e), frame, reference)
                    - rbd.frame_jacobian(model, rbd.integrate(model, q, -h * e), frame, reference)) / (2 * h)
                   for e in np.eye(model.nv)], axis=-1)
    np.testing.assert_allclose(H, fd, atol=1e-6)


@pytest.mark.parametrize("impl", ["numpy", "cython"])
def test_a_large_kinematic_hessian_is_composed_in_chunks_of_columns(impl, monkeypatch):
    """The composition takes the unit velocities a chunk of columns at a time beyond a size
    (its intermediates stay bounded): forced here on 40 dofs in chunks of 16, a batch of 2.
    Oracle: central differences of frame_jacobian along q (+) dq."""
    if impl == "cython" and not HAVE_COMPILED:
        pytest.skip("rbd_c is not built")
    backend = rbd.reference if impl == "numpy" else __import__("rbd_c")
    model = random_model(8, nlinks=40)
    rng = np.random.default_rng(4)
    q = rbd.random_configuration(model, rng, batch=2)
    frame = model.link_frame_names[-1]
    monkeypatch.setattr(rbd.contacts, "HESSIAN_WHOLE", 0)
    monkeypatch.setattr(rbd.contacts, "HESSIAN_CHUNK", 1)
    H = rbd.contacts.kinematic_hessian_on(backend, model, q, frame, "local_world_aligned")
    assert H.shape == (2, 6, model.nv, model.nv)
    h = 1e-6
    for s in range(2):
        fd = np.stack([(rbd.frame_jacobian(model, rbd.integrate(model, q[s], h * e), frame, "local_world_aligned")
                        - rbd.frame_jacobian(model, rbd.integrate(model, q[s], -h * e), frame,
                                             "local_world_aligned")) / (2 * h)
                       for e in np.eye(model.nv)], axis=-1)
        np.testing.assert_allclose(H[s], fd, atol=1e-6)


def test_regressor_and_parameters(backend):
    model, q, v, a, _ = tree_and_state(5)
    Y = rbd.joint_torque_regressor(model, q, v, a)
    pi = rbd.inertial_parameters(model)
    assert Y.shape == (model.nv, 10 * model.nbodies) and pi.shape == (10 * model.nbodies,)
    np.testing.assert_allclose(Y @ pi, rbd.rnea(model, q, v, a), atol=1e-10)
    # the public order is [m, m c, Ixx, Ixy, Iyy, Ixz, Iyz, Izz]; a model from parameters
    assert pi[0] == model.inertias[0, 0] and pi[6] == model.inertias[0, 7] and pi[7] == model.inertias[0, 6]
    heavier = rbd.model_from_parameters(model, 2.0 * pi)
    np.testing.assert_allclose(rbd.rnea(heavier, q, v, a), 2.0 * rbd.rnea(model, q, v, a), atol=1e-10)
    with pytest.raises(ValueError, match="shape"):
        rbd.model_from_parameters(model, pi[:-1])


def test_parameters_of_an_inconsistent_inertia_warn_or_raise_when_strict(backend):
    """Identified parameters are often unphysical: the inertia policy applies, and strict=True
    (of model_from_parameters and Model.replace) makes it an error, not a warning."""
    model, _, _, _, _ = tree_and_state(5)
    pi = rbd.inertial_parameters(model)
    body = model.nbodies - 1
    mass = pi[10 * body]
    # about the center of mass Ixx = Iyy = 0.01 m, Izz = 1 m breaks Ixx + Iyy >= Izz; the
    # public parameters are about the body origin: add m (|c|^2 1 - c c^T) back
    c = pi[10 * body + 1:10 * body + 4] / mass
    I = np.diag([0.01, 0.01, 1.0]) * mass + mass * (c @ c * np.eye(3) - np.outer(c, c))
    pi[10 * body + 4:10 * body + 10] = I[0, 0], I[0, 1], I[1, 1], I[0, 2], I[1, 2], I[2, 2]
    name = model.body_names[body]
    with pytest.warns(UserWarning, match="inconsistent inertia.*%s" % name):
        loose = rbd.model_from_parameters(model, pi)
    np.testing.assert_allclose(rbd.inertial_parameters(loose), pi, atol=1e-12)
    with pytest.raises(ValueError, match="inconsistent inertia.*%s" % name):
        rbd.model_from_parameters(model, pi, strict=True)
    with pytest.raises(ValueError, match="inconsistent inertia.*%s" % name):
        model.replace(inertias=loose.inertias, strict=True)
    with pytest.raises(TypeError, match="strict must be True or False"):
        rbd.model_from_parameters(model, rbd.inertial_parameters(model), strict="no")
    with pytest.raises(TypeError, match="strict must be True or False"):
        model.replace(gravity=[0, 0, -1.0], strict=1)
    with pytest.raises(TypeError, match="parameters must be an array of real numbers"):
        rbd.model_from_parameters(model, rbd.inertial_parameters(model) + 1e-3j)
    with pytest.raises(ValueError, match="parameters must contain only finite"):
        rbd.model_from_parameters(model, np.full(10 * model.nbodies, np.nan))


# ------------------------------------------------------------------------------------------
# Against Pinocchio
# ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("robot, feet, dim", [("solo12", ["FL_FOOT", "FR_FOOT", "HL_FOOT", "HR_FOOT"], 3),
                                              ("talos", ["left_sole_link", "right_sole_link"], 6),
                                              ("panda", ["panda_hand_tcp"], 3)])
def test_contact_dynamics_against_pinocchio(robot, feet, dim, backend):
    pair = load_pair(robot)
    if pair is None or pin is None:
        pytest.skip("needs pinocchio and example-robot-data")
    model, pm = pair.model, pair.pin_model
    data = pm.createData()
    rng = np.random.default_rng(11)
    q = rbd.random_configuration(model, rng)
    v, tau = rng.normal(size=model.nv), rng.normal(size=model.nv)
    reference = "local_world_aligned" if dim == 3 else "local"
    contacts = [rbd.Contact(f, dim, reference) for f in feet]
    models, datas = constraint_models(pm, contacts)
    pin.initConstraintDynamics(pm, data, models, datas)
    settings = pin.ProximalSettings(1e-14, 0.0, 1)
    Q, V, T = pair.q_to_pin(q), pair.v_to_pin(v), pair.v_to_pin(tau)
    qdd_pin = pair.v_from_pin(pin.constraintDynamics(pm, data, Q, V, T, models, datas, settings))
    forces_pin = np.array(data.lambda_c)
    qdd, forces = rbd.constrained_dynamics(model, q, v, tau, contacts)
    np.testing.assert_allclose(qdd, qdd_pin, rtol=0, atol=1e-9 * max(1.0, np.abs(qdd_pin).max()))
    np.testing.assert_allclose(forces, forces_pin, rtol=0, atol=1e-9 * max(1.0, np.abs(forces_pin).max()))
    # an impact at a velocity the contacts allow (J v = 0): every convention agrees
    J = rbd.contact_jacobian(model, q, contacts)
    null = np.linalg.svd(J)[2][J.shape[0]:].T
    v0 = null @ rng.normal(size=null.shape[1]) + 0.0
    v1 = rng.normal(size=model.nv)
    for velocity in (v0, v1) if dim == 3 else (v0,):
        v_pin = pair.v_from_pin(pin.impulseDynamics(pm, data, Q, pair.v_to_pin(velocity), models, datas, 0.0,
                                                    settings))
        np.testing.assert_allclose(rbd.impulse_dynamics(model, q, velocity, contacts)[0], v_pin, atol=1e-9)


@pytest.mark.parametrize("robot", ["solo12", "panda"])
def test_regressor_and_hessian_against_pinocchio(robot, backend):
    pair = load_pair(robot)
    if pair is None or pin is None:
        pytest.skip("needs pinocchio and example-robot-data")
    model, pm = pair.model, pair.pin_model
    data = pm.createData()
    rng = np.random.default_rng(12)
    q, v, a = rbd.random_configuration(model, rng), rng.normal(size=model.nv), rng.normal(size=model.nv)
    Q = pair.q_to_pin(q)
    Y_pin = pin.computeJointTorqueRegressor(pm, data, Q, pair.v_to_pin(v), pair.v_to_pin(a))
    columns = [c for name in model.joint_names for c in range(10 * (pm.getJointId(name) - 1), 10 * pm.getJointId(name))]
    Y_pin = pair.v_from_pin(np.asarray(Y_pin).T).T[:, columns]
    np.testing.assert_allclose(rbd.joint_torque_regressor(model, q, v, a), Y_pin, atol=1e-10)
    pin.computeJointJacobians(pm, data, Q)
    pin.computeJointKinematicHessians(pm, data, Q)
    joint = model.joint_names[-2]
    for reference, pin_reference in (("world", pin.WORLD), ("local", pin.LOCAL)):
        raw = np.asarray(pin.getJointKinematicHessian(pm, data, pm.getJointId(joint), pin_reference))
        # (the binding exposes Eigen's column-major tensor with row-major strides: read it back)
        H_pin = raw.ravel(order="K").reshape(raw.shape, order="F")[:, pair.v_perm][:, :, pair.v_perm]
        np.testing.assert_allclose(rbd.kinematic_hessian(model, q, model.joint_frame(joint), reference), H_pin,
                                   atol=1e-10)


@pytest.mark.parametrize("seed, floating", [(2, False), (3, True)])
def test_compiled_contact_kernels_agree_with_the_numpy_composition(seed, floating):
    """rbd_c runs the contact dynamics and the regressor as kernels (M factored along the
    tree); the NumPy backend composes them from the other algorithms: the two agree on
    trees with every joint kind, every contact kind and axes, link frames with offsets,
    regularization, armature and batches."""
    pytest.importorskip("rbd_c")
    model, q, v, _, tau = tree_and_state(seed, floating)
    model = model.replace(armature=np.linspace(0.0, 0.2, model.nv))
    contacts = contacts_on(model, q) + [rbd.Contact(model.link_frame_names[-1], 6, "local_world_aligned")]
    rng = np.random.default_rng(9)
    Q = np.stack([q, rbd.random_configuration(model, rng)])
    V, T = np.stack([v, -v]), np.stack([tau, 2 * tau])
    fext = rng.normal(size=(2, model.nbodies, 6))
    results = {}
    import rbd_c  # (the backends' own modules: what rbd binds on set_backend)
    for backend, impl in (("numpy", rbd.reference), ("cython", rbd_c)):
        results[backend] = (
            impl.contact_jacobian(model, Q, contacts),
            *impl.constrained_dynamics(model, Q, V, T, contacts, fext, regularization=1e-3),
            *impl.impulse_dynamics(model, Q, V, contacts[:2], restitution=0.3),
            impl.joint_torque_regressor(model, Q, V, T),
            impl.kinematic_hessian(model, Q, contacts[0].frame, "world"),
        )
    for ours, theirs in zip(results["cython"], results["numpy"]):
        np.testing.assert_allclose(ours, theirs, rtol=1e-9, atol=1e-9 * max(1.0, np.abs(theirs).max()))


def test_contact_kernels_share_the_rank_tolerance_and_fall_back_for_mimic_joints(backend):
    if backend == "cython":
        from rbd_c._contacts import _rank_tolerance
        from rbd._checks import CONTACT_RANK_TOLERANCE
        assert _rank_tolerance() == CONTACT_RANK_TOLERANCE
    model = tree_and_state(1, True)[0]
    revolute = [n for n, k in zip(model.joint_names, model.joint_kinds)
                if rbd.model.JOINT_KINDS[rbd.JointKind(k)].nv == 1]
    coupled = rbd.couple_joints(model, [(revolute[-1], revolute[0], 0.7, 0.0)])
    contacts = [rbd.Contact(coupled.joint_frame(revolute[-1]), 3)]
    qc = rbd.random_configuration(coupled, np.random.default_rng(2))
    vc = np.random.default_rng(3).normal(size=coupled.nv)
    qdd, forces = rbd.constrained_dynamics(coupled, qc, vc, np.zeros(coupled.nv), contacts)
    acc = rbd.frame_acceleration(coupled, qc, vc, qdd, contacts[0].frame, "local_world_aligned")[:3]
    np.testing.assert_allclose(acc, 0.0, atol=1e-9)
    # the backend module's own names take the model too (rbd binds them; rbd_c composes for it)
    impl = rbd.reference if backend == "numpy" else __import__("rbd_c")
    np.testing.assert_allclose(impl.constrained_dynamics(coupled, qc, vc, np.zeros(coupled.nv), contacts)[0], qdd,
                               rtol=0, atol=1e-12)
    H = impl.kinematic_hessian(coupled, qc, contacts[0].frame, "world")
    np.testing.assert_allclose(H @ vc, rbd.frame_jacobian_time_derivative(coupled, qc, vc, contacts[0].frame, "world"),
                               atol=1e-9)


def test_contact_edge_cases(backend):
    """An empty batch, an empty contact set, and regularization / restitution values that
    are not numbers: the same outcome on both backends."""
    model = rbd.sample_model("quadruped")
    feet = [rbd.Contact(f) for f in ("FL_foot", "FR_foot", "HL_foot", "HR_foot")]
    z = np.zeros((0, model.nv))
    qdd, forces = rbd.constrained_dynamics(model, np.zeros((0, model.nq)), z, z, feet)
    assert qdd.shape == (0, model.nv) and forces.shape == (0, 12)
    q = rbd.neutral(model)
    v = np.zeros(model.nv)
    qdd, forces = rbd.constrained_dynamics(model, q, v, v, [])
    np.testing.assert_allclose(qdd, rbd.aba(model, q, v, v), atol=1e-12)  # no contact: free fall
    assert forces.shape == (0,)
    for bad in ("a", None, True):  # not numbers
        with pytest.raises(TypeError, match="regularization must be a real number"):
            rbd.constrained_dynamics(model, q, v, v, feet, regularization=bad)
        with pytest.raises(TypeError, match="restitution must be a real number"):
            rbd.impulse_dynamics(model, q, v, feet, restitution=bad)
    for bad in (float("inf"), -1e-3):
        with pytest.raises(ValueError, match="regularization must be a finite number"):
            rbd.constrained_dynamics(model, q, v, v, feet, regularization=bad)
    for bad in (1.5, float("nan")):
        with pytest.raises(ValueError, match=r"restitution must be in \[0, 1\]"):
            rbd.impulse_dynamics(model, q, v, feet, restitution=bad)
