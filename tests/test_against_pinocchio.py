"""rbd against Pinocchio on real robots (the independent oracle).

Each robot of ``oracles.pinocchio_adapter.ROBOTS`` is loaded from the same
example-robot-data URDF by both libraries; every algorithm of rbd's public API
is compared, on both backends, with Pinocchio on seeded random states, to
1e-10 relative (absolute 1e-10 times the size of Pinocchio's answer, at least
1e-10).  The layout conversions (joint order, [cos, sin] continuous joints,
quaternion order, per-joint external forces) live in the adapter, not in rbd.
"""
import numpy as np
import pytest

pin = pytest.importorskip("pinocchio")

import rbd  # noqa: E402

from oracles.pinocchio_adapter import ROBOTS, PinocchioOracle  # noqa: E402

TOL = 1e-10
N_STATES = 3
REFERENCES = ("local", "world", "local_world_aligned")


# ------------------------------------------------------------------------------------------
# Fixtures and helpers
# ------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def oracle(pair):
    return PinocchioOracle(pair)


def assert_close(ours, theirs, what):
    """``ours`` equals Pinocchio's ``theirs`` to 1e-10 relative to the size of theirs."""
    theirs = np.asarray(theirs, dtype=float)
    ours = np.asarray(ours)
    scale = max(1.0, float(np.abs(theirs).max(initial=0.0)))
    np.testing.assert_allclose(ours, theirs, rtol=TOL, atol=TOL * scale, strict=True, err_msg=what)


def states(pair, count=N_STATES, seed=0):
    """Seeded random states: (q, v, a, tau, fext) in rbd's layout."""
    model = pair.model
    # A different stream per robot, the same on every run.
    rng = np.random.default_rng([seed, sum(map(ord, pair.name))])
    out = []
    for _ in range(count):
        q = np.asarray(rbd.random_configuration(model, rng), dtype=float)
        v = rng.normal(size=model.nv)
        a = rng.normal(size=model.nv)
        tau = rng.normal(scale=10.0, size=model.nv)
        fext = rng.normal(scale=5.0, size=(model.nbodies, 6))
        out.append((q, v, a, tau, fext))
    return out


def label(pair, k, *extra):
    return " / ".join([pair.name, "state %d" % k] + [str(e) for e in extra])


# ------------------------------------------------------------------------------------------
# The two models describe the same robot
# ------------------------------------------------------------------------------------------
def test_same_robot_in_both(pair):
    model, pm = pair.model, pair.pin_model
    assert model.nbodies == pm.njoints - 1
    assert model.nv == pm.nv
    assert sorted(model.joint_names) == sorted(list(pm.names)[1:])
    pin_mass = sum(pm.inertias[j].mass for j in range(1, pm.njoints))
    assert model.total_mass == pytest.approx(pin_mass, rel=1e-12)
    for body in range(model.nbodies):
        assert model.parents[body] < body
        parent = model.parents[body]
        pin_parent = pm.parents[pair.pin_joint_id(body)]
        assert pin_parent == (0 if parent < 0 else pair.pin_joint_id(parent)), model.joint_names[body]
    if ROBOTS[pair.name].floating_base:
        assert model.joint_names[0] == "root_joint" and pm.names[1] == "root_joint"
        assert model.joint_kinds[0] == rbd.JointKind.FREE
        assert pm.joints[1].shortname() == "JointModelFreeFlyer"


def test_default_gravity_is_the_same(pair):
    expected = np.array([0.0, 0.0, -9.81])
    np.testing.assert_array_equal(pair.model.gravity, expected)
    np.testing.assert_array_equal(pair.pin_model.gravity.linear, expected)
    np.testing.assert_array_equal(pair.pin_model.gravity.angular, np.zeros(3))


def test_pinocchio_free_flyer_velocity_is_the_body_twist(pair):
    """The premise of comparing floating-base velocities as they are: Pinocchio's
    free-flyer v[:6] is the base twist in the base frame, linear first, as rbd's."""
    if not ROBOTS[pair.name].floating_base:
        pytest.skip("fixed base")
    pm, pd = pair.pin_model, pair.pin_data
    root = pm.getJointId("root_joint")
    assert pm.joints[root].idx_v == 0 and pm.joints[root].idx_q == 0
    for k, (q, v, _, _, _) in enumerate(states(pair)):
        q_pin, v_pin = pair.q_to_pin(q), pair.v_to_pin(v)
        pin.forwardKinematics(pm, pd, q_pin, v_pin)
        np.testing.assert_allclose(pd.v[root].linear, v_pin[:3], rtol=0, atol=1e-14)
        np.testing.assert_allclose(pd.v[root].angular, v_pin[3:6], rtol=0, atol=1e-14)
        # Differentiate the base motion q(t) = q (+) t v numerically.
        h = 1e-6
        before = pin.integrate(pm, q_pin, -h * v_pin)
        after = pin.integrate(pm, q_pin, h * v_pin)
        world_from_base = pin.XYZQUATToSE3(q_pin[:7])
        rot = world_from_base.rotation
        p_dot = (after[:3] - before[:3]) / (2 * h)
        np.testing.assert_allclose(p_dot, rot @ v_pin[:3], rtol=0, atol=1e-7, err_msg=label(pair, k, "p_dot"))
        rot_before = pin.XYZQUATToSE3(before[:7]).rotation
        rot_after = pin.XYZQUATToSE3(after[:7]).rotation
        omega_body = pin.log3(rot_before.T @ rot_after) / (2 * h)
        np.testing.assert_allclose(omega_body, v_pin[3:6], rtol=0, atol=1e-7, err_msg=label(pair, k, "omega"))
        # ... and rbd's base frame sees the same twist.
        assert_close(rbd.frame_velocity(pair.model, q, v, pair.model.body_names[0], reference="local"),
                     v[:6], label(pair, k, "rbd base twist"))


# ------------------------------------------------------------------------------------------
# Configuration space
# ------------------------------------------------------------------------------------------
def test_neutral(pair, oracle, backend):
    q0 = rbd.neutral(pair.model)
    assert q0.shape == (pair.model.nq,)
    assert pair.configuration_error(q0, oracle.neutral()) <= TOL


def test_integrate(pair, oracle, backend):
    for k, (q, v, _, _, _) in enumerate(states(pair)):
        ours = rbd.integrate(pair.model, q, v)
        assert ours.shape == (pair.model.nq,)
        err = pair.configuration_error(ours, oracle.integrate(q, v))
        assert err <= TOL * max(1.0, np.abs(q).max(), np.abs(v).max()), (label(pair, k), err)


def test_difference(pair, oracle, backend):
    pairs_of_states = states(pair, count=2 * N_STATES, seed=1)
    continuous = pair.continuous_v_mask()
    for k in range(N_STATES):
        q0, q1 = pairs_of_states[2 * k][0], pairs_of_states[2 * k + 1][0]
        ours = rbd.difference(pair.model, q0, q1)
        theirs = oracle.difference(q0, q1)
        assert ours.shape == theirs.shape
        # Pinocchio wraps continuous angles to (-pi, pi]; rbd's one angle per
        # continuous joint may differ from it by whole turns, the same motion.
        gap = ours - theirs
        gap[continuous] = (gap[continuous] + np.pi) % (2 * np.pi) - np.pi
        assert_close(theirs + gap, theirs, label(pair, k))


# ------------------------------------------------------------------------------------------
# Kinematics
# ------------------------------------------------------------------------------------------
def test_forward_kinematics(pair, oracle, backend):
    for k, (q, _, _, _, _) in enumerate(states(pair)):
        ours = rbd.forward_kinematics(pair.model, q)
        theirs = oracle.forward_kinematics(q)
        for body, name in enumerate(pair.model.joint_names):
            assert_close(ours[body], theirs[body], label(pair, k, name))
        assert ours.shape == theirs.shape


def test_frame_placement(pair, oracle, backend):
    for k, (q, _, _, _, _) in enumerate(states(pair)):
        for frame in pair.model.frame_names:  # every link
            assert_close(rbd.frame_placement(pair.model, q, frame), oracle.frame_placement(q, frame),
                         label(pair, k, frame))


@pytest.mark.parametrize("reference", REFERENCES)
def test_frame_velocity(pair, oracle, backend, reference):
    for k, (q, v, _, _, _) in enumerate(states(pair)):
        for frame in pair.frames:
            assert_close(rbd.frame_velocity(pair.model, q, v, frame, reference=reference),
                         oracle.frame_velocity(q, v, frame, reference), label(pair, k, frame, reference))


@pytest.mark.parametrize("reference", REFERENCES)
def test_frame_acceleration(pair, oracle, backend, reference):
    for k, (q, v, a, _, _) in enumerate(states(pair)):
        for frame in pair.frames:
            assert_close(rbd.frame_acceleration(pair.model, q, v, a, frame, reference=reference),
                         oracle.frame_acceleration(q, v, a, frame, reference), label(pair, k, frame, reference))


def test_oracle_frame_acceleration_is_jacobian_consistent(pair, oracle):
    """The oracle's acceleration is Pinocchio's own J a + dJ v in every reference
    (so the LOCAL_WORLD_ALIGNED choice in the adapter is Pinocchio's, not ours)."""
    for k, (q, v, a, _, _) in enumerate(states(pair)):
        for frame in pair.frames:
            for reference in REFERENCES:
                expected = (oracle.frame_jacobian(q, frame, reference) @ a
                            + oracle.frame_jacobian_time_derivative(q, v, frame, reference) @ v)
                assert_close(oracle.frame_acceleration(q, v, a, frame, reference), expected,
                             label(pair, k, frame, reference))


@pytest.mark.parametrize("reference", REFERENCES)
def test_frame_jacobian(pair, oracle, backend, reference):
    for k, (q, _, _, _, _) in enumerate(states(pair)):
        for frame in pair.frames:
            assert_close(rbd.frame_jacobian(pair.model, q, frame, reference=reference),
                         oracle.frame_jacobian(q, frame, reference), label(pair, k, frame, reference))


@pytest.mark.parametrize("reference", REFERENCES)
def test_frame_jacobian_time_derivative(pair, oracle, backend, reference):
    for k, (q, v, _, _, _) in enumerate(states(pair)):
        for frame in pair.frames:
            assert_close(rbd.frame_jacobian_time_derivative(pair.model, q, v, frame, reference=reference),
                         oracle.frame_jacobian_time_derivative(q, v, frame, reference),
                         label(pair, k, frame, reference))


def test_center_of_mass(pair, oracle, backend):
    for k, (q, _, _, _, _) in enumerate(states(pair)):
        assert_close(rbd.center_of_mass(pair.model, q), oracle.center_of_mass(q), label(pair, k))


def test_com_jacobian(pair, oracle, backend):
    for k, (q, _, _, _, _) in enumerate(states(pair)):
        assert_close(rbd.com_jacobian(pair.model, q), oracle.com_jacobian(q), label(pair, k))


# ------------------------------------------------------------------------------------------
# Dynamics
# ------------------------------------------------------------------------------------------
def test_rnea(pair, oracle, backend):
    for k, (q, v, a, _, _) in enumerate(states(pair)):
        assert_close(rbd.rnea(pair.model, q, v, a), oracle.rnea(q, v, a), label(pair, k))


def test_rnea_with_external_forces(pair, oracle, backend):
    for k, (q, v, a, _, fext) in enumerate(states(pair)):
        theirs = oracle.rnea(q, v, a, fext)
        assert_close(rbd.rnea(pair.model, q, v, a, fext=fext), theirs, label(pair, k))
        # The forces matter: the comparison would catch them being dropped.
        assert np.abs(theirs - oracle.rnea(q, v, a)).max() > 1e-6


def test_gravity(pair, oracle, backend):
    for k, (q, _, _, _, _) in enumerate(states(pair)):
        assert_close(rbd.gravity(pair.model, q), oracle.gravity(q), label(pair, k))


def test_nonlinear_effects(pair, oracle, backend):
    for k, (q, v, _, _, _) in enumerate(states(pair)):
        assert_close(rbd.nonlinear_effects(pair.model, q, v), oracle.nonlinear_effects(q, v), label(pair, k))


def test_crba(pair, oracle, backend):
    for k, (q, _, _, _, _) in enumerate(states(pair)):
        ours = rbd.crba(pair.model, q)
        assert_close(ours, oracle.crba(q), label(pair, k))
        np.testing.assert_array_equal(ours, ours.T)


def _entrywise(ours, theirs):
    """The largest |ours - theirs| of a mass matrix, each entry relative to its own scale
    sqrt(M_ii M_jj) (a light body's entries, not M's largest)."""
    d = np.sqrt(np.abs(np.diagonal(theirs, axis1=-2, axis2=-1)))
    return float((np.abs(ours - theirs) / (d[..., :, None] * d[..., None, :])).max())


def test_crba_entry_by_entry(pair, oracle, backend):
    """Each entry of M to 1e-13 of its own scale, single and batched (the compiled lanes):
    a gripper finger's grams far from the root keep their digits (composite inertias
    summed about one distant point lost 1e-16 (L/r)^2: 1.6e-12 on Talos)."""
    qs = np.stack([q for q, _, _, _, _ in states(pair, count=5, seed=1)])
    batch = rbd.crba(pair.model, qs)
    for k, q in enumerate(qs):
        theirs = oracle.crba(q)
        assert _entrywise(rbd.crba(pair.model, q), theirs) < 1e-13, label(pair, k)
        assert _entrywise(batch[k], theirs) < 1e-13, label(pair, k, "batched")


CRANE = """<robot name="crane">
 <link name="base"><inertial><mass value="1000"/><inertia ixx="1" ixy="0" ixz="0" iyy="1" iyz="0" izz="1"/></inertial></link>
 <link name="boom"><inertial><origin xyz="15 0 0"/><mass value="500"/>
  <inertia ixx="10" ixy="0" ixz="0" iyy="3000" iyz="0" izz="3000"/></inertial></link>
 <link name="wrist"><inertial><mass value="1"/><inertia ixx="1e-3" ixy="0" ixz="0" iyy="1e-3" iyz="0" izz="1e-3"/></inertial></link>
 <link name="finger"><inertial><origin xyz="0.003 0 0"/><mass value="0.01"/>
  <inertia ixx="1e-7" ixy="0" ixz="0" iyy="1e-7" iyz="0" izz="5e-8"/></inertial></link>
 <joint name="slew" type="continuous"><parent link="base"/><child link="boom"/><origin xyz="0 0 1"/><axis xyz="0 0 1"/></joint>
 <joint name="wrist" type="continuous"><parent link="boom"/><child link="wrist"/><origin xyz="30 0 0"/><axis xyz="0 1 0"/></joint>
 <joint name="finger" type="continuous"><parent link="wrist"/><child link="finger"/><origin xyz="0.02 0 0"/>
  <axis xyz="1 0 0"/></joint>
</robot>"""


def test_crba_of_a_light_body_behind_a_long_lever(backend):
    """A 10 g finger 30 m out on a crane's boom: its joint's diagonal entry is its own
    moment of inertia about the joint axis (the axis through its center of mass), 1e-7
    exactly, and every entry matches Pinocchio's crba to 1e-13 of its own scale, single
    and batched.  (Summed about the root, it came out 1.6e-8 off.)"""
    model = rbd.load_urdf(CRANE)
    pm = pin.buildModelFromXML(CRANE)
    pd = pm.createData()
    qs = np.array([[0.4, -0.9, 1.3], [1.1, 0.2, -2.0], [-2.5, 1.4, 0.3], [0.0, 0.0, 0.0], [3.0, -3.0, 2.0]])
    batch = rbd.crba(model, qs)
    for k, q in enumerate(qs):
        qp = np.concatenate([[np.cos(x), np.sin(x)] for x in q])  # continuous joints: [cos, sin]
        theirs = pin.crba(pm, pd, qp)
        theirs = np.triu(theirs) + np.triu(theirs, 1).T
        for ours in (rbd.crba(model, q), batch[k]):
            assert abs(ours[2, 2] - 1e-7) <= 1e-22
            assert _entrywise(ours, theirs) < 1e-13, k


def test_aba(pair, oracle, backend):
    for k, (q, v, _, tau, _) in enumerate(states(pair)):
        assert_close(rbd.aba(pair.model, q, v, tau), oracle.aba(q, v, tau), label(pair, k))


def test_aba_with_external_forces(pair, oracle, backend):
    for k, (q, v, _, tau, fext) in enumerate(states(pair)):
        theirs = oracle.aba(q, v, tau, fext)
        assert_close(rbd.aba(pair.model, q, v, tau, fext=fext), theirs, label(pair, k))
        assert np.abs(theirs - oracle.aba(q, v, tau)).max() > 1e-6


def test_coriolis_matrix(pair, oracle, backend):
    for k, (q, v, _, _, _) in enumerate(states(pair)):
        assert_close(rbd.coriolis_matrix(pair.model, q, v), oracle.coriolis_matrix(q, v), label(pair, k))


def test_kinetic_energy(pair, oracle, backend):
    for k, (q, v, _, _, _) in enumerate(states(pair)):
        assert_close(float(rbd.kinetic_energy(pair.model, q, v)), oracle.kinetic_energy(q, v), label(pair, k))


def test_potential_energy(pair, oracle, backend):
    for k, (q, _, _, _, _) in enumerate(states(pair)):
        assert_close(float(rbd.potential_energy(pair.model, q)), oracle.potential_energy(q), label(pair, k))


def test_centroidal_momentum(pair, oracle, backend):
    for k, (q, v, _, _, _) in enumerate(states(pair)):
        assert_close(rbd.centroidal_momentum(pair.model, q, v), oracle.centroidal_momentum(q, v), label(pair, k))


# ------------------------------------------------------------------------------------------
# Batches: rbd on (5, nq) equals Pinocchio called per sample
# ------------------------------------------------------------------------------------------
def test_batched_against_per_sample_pinocchio(pair, oracle, backend):
    batch = states(pair, count=5, seed=2)
    q, v, a, tau, fext = (np.stack(x) for x in zip(*batch))
    model = pair.model
    frame = pair.frames[-1]
    cases = {
        "forward_kinematics": (rbd.forward_kinematics(model, q), lambda i: oracle.forward_kinematics(q[i])),
        "frame_placement": (rbd.frame_placement(model, q, frame), lambda i: oracle.frame_placement(q[i], frame)),
        "frame_velocity": (rbd.frame_velocity(model, q, v, frame, reference="world"),
                           lambda i: oracle.frame_velocity(q[i], v[i], frame, "world")),
        "frame_acceleration": (rbd.frame_acceleration(model, q, v, a, frame, reference="local"),
                               lambda i: oracle.frame_acceleration(q[i], v[i], a[i], frame, "local")),
        "frame_jacobian": (rbd.frame_jacobian(model, q, frame, reference="local_world_aligned"),
                           lambda i: oracle.frame_jacobian(q[i], frame, "local_world_aligned")),
        "frame_jacobian_time_derivative": (
            rbd.frame_jacobian_time_derivative(model, q, v, frame, reference="world"),
            lambda i: oracle.frame_jacobian_time_derivative(q[i], v[i], frame, "world")),
        "center_of_mass": (rbd.center_of_mass(model, q), lambda i: oracle.center_of_mass(q[i])),
        "com_jacobian": (rbd.com_jacobian(model, q), lambda i: oracle.com_jacobian(q[i])),
        "rnea": (rbd.rnea(model, q, v, a), lambda i: oracle.rnea(q[i], v[i], a[i])),
        "rnea_fext": (rbd.rnea(model, q, v, a, fext=fext), lambda i: oracle.rnea(q[i], v[i], a[i], fext[i])),
        "gravity": (rbd.gravity(model, q), lambda i: oracle.gravity(q[i])),
        "nonlinear_effects": (rbd.nonlinear_effects(model, q, v), lambda i: oracle.nonlinear_effects(q[i], v[i])),
        "crba": (rbd.crba(model, q), lambda i: oracle.crba(q[i])),
        "aba": (rbd.aba(model, q, v, tau), lambda i: oracle.aba(q[i], v[i], tau[i])),
        "aba_fext": (rbd.aba(model, q, v, tau, fext=fext), lambda i: oracle.aba(q[i], v[i], tau[i], fext[i])),
        "coriolis_matrix": (rbd.coriolis_matrix(model, q, v), lambda i: oracle.coriolis_matrix(q[i], v[i])),
        "kinetic_energy": (rbd.kinetic_energy(model, q, v), lambda i: oracle.kinetic_energy(q[i], v[i])),
        "potential_energy": (rbd.potential_energy(model, q), lambda i: oracle.potential_energy(q[i])),
        "centroidal_momentum": (rbd.centroidal_momentum(model, q, v),
                                lambda i: oracle.centroidal_momentum(q[i], v[i])),
        "difference": (rbd.difference(model, q[:-1], q[1:]), None),
    }
    for name, (ours, theirs_of) in cases.items():
        ours = np.asarray(ours)
        if name == "difference":
            assert ours.shape == (4, model.nv), name
            continuous = pair.continuous_v_mask()
            for i in range(4):
                theirs = oracle.difference(q[i], q[i + 1])
                gap = ours[i] - theirs
                gap[continuous] = (gap[continuous] + np.pi) % (2 * np.pi) - np.pi
                assert_close(theirs + gap, theirs, label(pair, i, "batched", name))
            continue
        first = np.asarray(theirs_of(0))
        assert ours.shape == (5,) + first.shape, (name, ours.shape)
        for i in range(5):
            assert_close(ours[i], theirs_of(i), label(pair, i, "batched", name))
    integrated = rbd.integrate(model, q, v)
    assert integrated.shape == q.shape
    for i in range(5):
        err = pair.configuration_error(integrated[i], oracle.integrate(q[i], v[i]))
        assert err <= TOL * max(1.0, np.abs(q[i]).max(), np.abs(v[i]).max()), (label(pair, i, "batched integrate"), err)
