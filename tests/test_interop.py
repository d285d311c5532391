"""rbd.interop against the peers themselves: Pinocchio and MuJoCo compute, rbd converts.

* ``from_pinocchio(pin.buildModelFromUrdf(f))`` against ``rbd.load_urdf(f)`` on the
  example-robot-data robots (fixed and floating base, Talos included): the dynamics of the
  two rbd models through the two layouts, and their joints, frames, limits and damping;
  hand-built Pinocchio models with every joint type rbd takes, against Pinocchio.
* ``load_mjcf``/``from_mujoco`` on MJCF models written here (several joints in one body,
  anchors away from the body origin, ``ref``, ball, free, slide, massless bodies, sites,
  inertias from geometry) and on the robots' URDFs through MuJoCo's importer (meshes
  stripped): body and site poses, ``mj_rne`` (flg_acc=1), ``mj_fullM``, ``mj_forward``'s
  qacc (passive forces and constraints off) and ``mj_jacBody``, to 1e-9 relative; the URDFs
  also against ``rbd.load_urdf`` and Pinocchio's reading of the same file.
* Layouts: ``rbd.rnea(model, *layout.from_peer(q, v, a))`` equals the peer's inverse
  dynamics mapped back; batches; what rbd cannot represent is reported; bad input raises.

Armature is compared as stored values (``model.armature`` against the peer's, mapped
through the layout) and the dynamics with it zero on both sides; where the algorithms apply
armature (``armature_applied()``), also with it on: ``mj_fullM``, ``mj_rne`` plus
armature·qacc, ``mj_forward`` and Pinocchio.
"""
import copy
import gzip
import os
import re
import subprocess
import sys
import warnings

import numpy as np
import pytest

import rbd
from rbd.interop import MujocoLayout, PinocchioLayout, from_mujoco, from_pinocchio
from rbd.urdf import stripped_for_mujoco

from oracles.pinocchio_adapter import ROBOTS, robot_urdf_path

TOL = 1e-9


def assert_close(ours, theirs, what):
    """``ours`` equals the peer's ``theirs`` to 1e-9 relative to the size of theirs."""
    theirs = np.asarray(theirs, dtype=float)
    scale = max(1.0, float(np.abs(theirs).max(initial=0.0)))
    np.testing.assert_allclose(ours, theirs, rtol=TOL, atol=TOL * scale, err_msg=what)


@pytest.fixture(scope="module")
def pin():
    return pytest.importorskip("pinocchio")


@pytest.fixture(scope="module")
def mujoco():
    return pytest.importorskip("mujoco")


def robot_path(name):
    path = robot_urdf_path(name)
    if path is None:
        if os.environ.get("CI", "").lower() in ("1", "true"):
            pytest.fail("example-robot-data has no %s URDF here" % ROBOTS[name].urdf)
        pytest.skip("example-robot-data has no %s URDF here" % ROBOTS[name].urdf)
    return str(path)


def load_urdf_quietly(path, floating_base):
    with warnings.catch_warnings():  # the Panda's and Talos's mimic joints (tested in test_urdf)
        warnings.filterwarnings("ignore", message="mimic joints", category=UserWarning)
        return rbd.load_urdf(path, floating_base=floating_base)


def random_state(model, rng):
    q = np.asarray(rbd.random_configuration(model, rng), dtype=float)
    return q, rng.normal(size=model.nv), rng.normal(size=model.nv)


ROBOT_CASES = [(name, floating) for name in sorted(ROBOTS) for floating in (False, True)]


# ------------------------------------------------------------------------------------------
# Pinocchio
# ------------------------------------------------------------------------------------------
def build_pin(pin, path, floating):
    return pin.buildModelFromUrdf(path, pin.JointModelFreeFlyer()) if floating else pin.buildModelFromUrdf(path)


def pin_mass_matrix(pin, pm, pd, q_pin):
    upper = np.triu(pin.crba(pm, pd, q_pin))  # Pinocchio fills the upper triangle
    return upper + np.triu(upper, 1).T


@pytest.mark.parametrize("robot, floating", ROBOT_CASES)
def test_from_pinocchio_agrees_with_load_urdf(pin, backend, robot, floating):
    path = robot_path(robot)
    pm = build_pin(pin, path, floating)
    ours, theirs = load_urdf_quietly(path, floating), from_pinocchio(pm)
    to_pin, from_pin = PinocchioLayout(ours, pm), PinocchioLayout(theirs, pm)
    assert set(theirs.joint_names) == set(ours.joint_names) and theirs.nv == ours.nv
    assert set(theirs.frame_names) == set(ours.frame_names)
    assert {theirs.body_names[theirs.joint_id(n)] for n in ours.joint_names} == set(ours.body_names)
    assert theirs.total_mass == pytest.approx(ours.total_mass, rel=1e-12)
    # a fixed base's root link: Pinocchio's universe inertia, rbd's world_inertia
    assert theirs.world_inertia[0] == pytest.approx(pm.inertias[0].mass, rel=1e-14)
    np.testing.assert_allclose(theirs.world_inertia, ours.world_inertia, rtol=1e-12, atol=1e-15)
    np.testing.assert_array_equal(theirs.gravity, ours.gravity)
    for name in ours.joint_names:  # limits and joint dynamics, joint by joint
        a, b = ours.joint_id(name), theirs.joint_id(name)
        assert ours.joint_kinds[a] == theirs.joint_kinds[b], name
        qa, qb = slice(ours.q_idx[a], ours.q_idx[a] + ours.joint_nq[a]), slice(theirs.q_idx[b], theirs.q_idx[b] + theirs.joint_nq[b])
        va, vb = slice(ours.v_idx[a], ours.v_idx[a] + ours.joint_nv[a]), slice(theirs.v_idx[b], theirs.v_idx[b] + theirs.joint_nv[b])
        for field in ("lower_limits", "upper_limits"):
            np.testing.assert_array_equal(getattr(theirs, field)[qb], getattr(ours, field)[qa], err_msg=name)
        for field in ("velocity_limits", "effort_limits", "damping", "friction", "armature"):
            np.testing.assert_array_equal(getattr(theirs, field)[vb], getattr(ours, field)[va], err_msg=name)
    rng = np.random.default_rng([3, len(robot), floating])
    for _ in range(2):
        q, v, a = random_state(ours, rng)
        q_pin, v_pin, a_pin = to_pin.to_peer(q, v, a)
        q2, v2, a2 = from_pin.from_peer(q_pin, v_pin, a_pin)
        tau = rbd.rnea(ours, q, v, a)
        assert_close(to_pin.tau_from_peer(q_pin, from_pin.tau_to_peer(q2, rbd.rnea(theirs, q2, v2, a2))), tau, "rnea")
        assert_close(to_pin.matrix_from_peer(q_pin, from_pin.matrix_to_peer(q2, rbd.crba(theirs, q2))),
                     rbd.crba(ours, q), "crba")
        tau2 = from_pin.tau_from_peer(q_pin, to_pin.tau_to_peer(q, tau))
        assert_close(to_pin.tau_from_peer(q_pin, from_pin.tau_to_peer(q2, rbd.aba(theirs, q2, v2, tau2))), a, "aba")
        for frame in ROBOTS[robot].frames:
            assert_close(rbd.frame_placement(theirs, q2, frame), rbd.frame_placement(ours, q, frame), frame)


@pytest.mark.parametrize("robot, floating", ROBOT_CASES)
def test_pinocchio_layout_against_pinocchio(pin, backend, robot, floating):
    path = robot_path(robot)
    pm = build_pin(pin, path, floating)
    pd = pm.createData()
    model = load_urdf_quietly(path, floating)
    layout = PinocchioLayout(model, pm)
    if robot == "talos":  # the trap this layout exists for: Pinocchio orders Talos's joints its own way
        assert not np.array_equal(layout.v_perm, np.arange(model.nv))
    rng = np.random.default_rng([5, len(robot), floating])
    for _ in range(2):
        q_pin = pin.randomConfiguration(pm, -np.ones(pm.nq), np.ones(pm.nq)) if floating else pin.randomConfiguration(pm)
        v_pin, a_pin = rng.normal(size=pm.nv), rng.normal(size=pm.nv)
        q, v, a = layout.from_peer(q_pin, v_pin, a_pin)
        assert_close(rbd.rnea(model, q, v, a), layout.tau_from_peer(q_pin, pin.rnea(pm, pd, q_pin, v_pin, a_pin)), "rnea")
        M_pin = pin_mass_matrix(pin, pm, pd, q_pin)
        assert_close(rbd.crba(model, q), layout.matrix_from_peer(q_pin, M_pin), "crba")
        assert_close(layout.matrix_to_peer(q, rbd.crba(model, q)), M_pin, "crba to Pinocchio")
        tau_pin = rng.normal(size=pm.nv)
        assert_close(rbd.aba(model, q, v, layout.tau_from_peer(q_pin, tau_pin)),
                     layout.from_peer(q_pin, v_pin, pin.aba(pm, pd, q_pin, v_pin, tau_pin))[2], "aba")
        frame = ROBOTS[robot].frames[-1]
        pin.computeJointJacobians(pm, pd, q_pin)
        pin.updateFramePlacements(pm, pd)
        J_pin = pin.getFrameJacobian(pm, pd, pm.getFrameId(frame, pin.BODY), pin.LOCAL_WORLD_ALIGNED)
        assert_close(rbd.frame_jacobian(model, q, frame, "local_world_aligned"), layout.jacobian_from_peer(q_pin, J_pin), frame)
        # External wrenches: the same joint frames on both sides, reordered
        fext = rng.normal(size=(model.nbodies, 6))
        forces = [pin.Force(f) for f in layout.fext_to_peer(fext)]
        assert len(forces) == pm.njoints and not forces[0].vector.any()
        assert_close(rbd.rnea(model, q, v, a, fext),
                     layout.tau_from_peer(q_pin, pin.rnea(pm, pd, q_pin, v_pin, a_pin, forces)), "rnea with fext")
        assert_close(rbd.aba(model, q, v, layout.tau_from_peer(q_pin, tau_pin), fext),
                     layout.from_peer(q_pin, v_pin, pin.aba(pm, pd, q_pin, v_pin, tau_pin, forces))[2], "aba with fext")
        np.testing.assert_array_equal(layout.fext_from_peer(forces), fext)
        assert layout.fext_to_peer(np.stack([fext, 2 * fext])).shape == (2, pm.njoints, 6)
        # Round trips: Pinocchio's layout back and forth is exact.
        back = layout.to_peer(q, v, a)
        for ours, theirs in zip(back, (q_pin, v_pin, a_pin)):
            np.testing.assert_allclose(ours, theirs, rtol=0, atol=1e-15)


def test_pinocchio_layout_refuses_fext_between_different_joint_frames(pin):
    """A joint placed differently on the two sides (same names and kinds): the wrenches in its
    frame are not the same numbers, so the fext converters refuse rather than reorder."""
    pm = pin.Model()
    placement = pin.SE3(np.eye(3), np.array([0.0, 0.0, 0.3]))
    jid = pm.addJoint(0, pin.JointModelRZ(), placement, "hinge")
    pm.appendBodyToJoint(jid, pin.Inertia.Random(), pin.SE3.Identity())
    b = rbd.ModelBuilder("moved")
    b.add_link("base")
    b.add_link("arm", mass=1.0, com=[0.1, 0, 0], inertia=np.diag([0.01, 0.01, 0.01]))
    origin = np.eye(4)
    origin[:3, 3] = [0.0, 0.0, 0.5]
    b.add_joint("hinge", "revolute", "base", "arm", origin=origin, axis=(0, 0, 1))
    layout = PinocchioLayout(b.build(), pm)
    with pytest.raises(ValueError, match="not Pinocchio's joint frames"):
        layout.fext_to_peer(np.zeros((1, 6)))
    with pytest.raises(ValueError, match="not Pinocchio's joint frames"):
        layout.fext_from_peer(np.zeros((2, 6)))


def test_a_one_dof_jacobian_from_pinocchio_comes_without_its_column_axis(pin, backend):
    """Pinocchio's bindings return a one-dof model's (6, 1) Jacobian as (6,): the layout takes
    it (and a stack of them) as the column it is; a (1,) row is still refused."""
    pm = pin.Model()
    jid = pm.addJoint(0, pin.JointModelRZ(), pin.SE3(np.eye(3), np.array([0.1, 0.0, 0.3])), "hinge")
    pm.appendBodyToJoint(jid, pin.Inertia(1.0, np.array([0.1, 0.0, 0.0]), np.diag([0.01, 0.02, 0.025])),
                         pin.SE3.Identity())
    fid = pm.addFrame(pin.Frame("tip", jid, 0, pin.SE3(np.eye(3), np.array([0.4, 0.2, 0.0])), pin.FrameType.OP_FRAME))
    pd = pm.createData()
    model = from_pinocchio(pm)
    layout = PinocchioLayout(model, pm)
    q = np.array([0.7])
    J_pin = pin.computeFrameJacobian(pm, pd, q, fid, pin.ReferenceFrame.LOCAL)
    assert J_pin.shape == (6,)  # (what makes this test: a (6, 1) here would need no help)
    expected = rbd.frame_jacobian(model, q, "tip", "local")
    np.testing.assert_allclose(layout.jacobian_from_peer(q, J_pin), expected, atol=1e-15)
    np.testing.assert_allclose(layout.jacobian_from_peer(np.stack([q, q]), np.stack([J_pin, J_pin])),
                               np.stack([expected, expected]), atol=1e-15)
    with pytest.raises(ValueError, match=r"J_peer must have shape \(\.\.\., k, 1\)"):
        layout.jacobian_from_peer(q, np.zeros(1))


def test_pinocchio_layout_pairs_mimic_models(pin, backend):
    """rbd's and Pinocchio's models with the URDF's <mimic> enforced (reduced coordinates on
    both sides): the layout pairs them, and rnea and crba agree through it; a mimic joint on
    one side only is refused naming the joint."""
    path = robot_path("panda")
    pm = pin.buildModelFromUrdf(path, mimic=True)
    pd = pm.createData()
    model = rbd.load_urdf(path, mimic=True)
    layout = PinocchioLayout(model, pm)
    assert model.nv == pm.nv == 8
    rng = np.random.default_rng(13)
    q, v, a = random_state(model, rng)
    q_pin, v_pin, a_pin = layout.to_peer(q, v, a)
    assert_close(rbd.rnea(model, q, v, a), layout.tau_from_peer(q_pin, pin.rnea(pm, pd, q_pin, v_pin, a_pin)), "rnea")
    assert_close(rbd.crba(model, q), layout.matrix_from_peer(q_pin, pin_mass_matrix(pin, pm, pd, q_pin)), "crba")
    with pytest.raises(ValueError, match="'panda_finger_joint2' is a mimic joint in Pinocchio only"):
        PinocchioLayout(load_urdf_quietly(path, False), pm)
    with pytest.raises(ValueError, match="'panda_finger_joint2' is a mimic joint in rbd only"):
        PinocchioLayout(model, pin.buildModelFromUrdf(path))
    converted = from_pinocchio(pm)  # the same coupling as load_urdf's
    assert converted.mimic == model.mimic and converted.nv == 8


def test_from_pinocchio_converts_mimic_joints(pin, backend):
    """Pinocchio's mimic joints (revolute about any axis, prismatic; a multiplier and an
    offset) become rbd's couplings: the dynamics and the mimic bodies' placements agree
    through the layout; a mimic joint with scaling 0 (its axis is lost) is refused naming it."""
    rng = np.random.default_rng(23)
    pm = pin.Model()
    parent = 0
    for name, joint in [("a", pin.JointModelRX()), ("b", pin.JointModelRevoluteUnaligned(0.0, 0.6, 0.8)),
                        ("c", pin.JointModelPZ()), ("d", pin.JointModelPrismaticUnaligned(0.8, 0.0, 0.6)),
                        ("e", pin.JointModelRY())]:
        parent = pm.addJoint(parent, joint, pin.exp6(rng.normal(size=6)), name)
        pm.appendBodyToJoint(parent, pin.Inertia(rng.uniform(0.5, 2), rng.normal(size=3), np.diag([0.3, 0.4, 0.5])),
                             pin.SE3.Identity())
    pm = pin.transformJointIntoMimic(pm, 1, 2, 2.5, 0.75)  # b follows a (revolute about another axis)
    pm = pin.transformJointIntoMimic(pm, 3, 4, -0.5, 0.1)  # d follows c (prismatic)
    model = from_pinocchio(pm)
    assert model.mimic == (("b", "a", 2.5, 0.75), ("d", "c", -0.5, 0.1)) and model.nv == pm.nv == 3
    layout, pd = PinocchioLayout(model, pm), pm.createData()
    for _ in range(3):
        q, v, a = random_state(model, rng)
        q_pin, v_pin, a_pin = layout.to_peer(q, v, a)
        assert_close(rbd.rnea(model, q, v, a), layout.tau_from_peer(q_pin, pin.rnea(pm, pd, q_pin, v_pin, a_pin)), "rnea")
        # (Pinocchio 4.1's crba on a mimic joint's Data gives another M when called again: fresh Data)
        M_pin = layout.matrix_from_peer(q_pin, pin_mass_matrix(pin, pm, pm.createData(), q_pin))
        assert_close(rbd.crba(model, q), M_pin, "crba")
        tau = rng.normal(size=model.nv)  # (Pinocchio's aba takes no mimic joint: M^-1 (tau - nle) of its own)
        nle_pin = layout.tau_from_peer(q_pin, pin.nonLinearEffects(pm, pd, q_pin, v_pin))
        assert_close(rbd.aba(model, q, v, tau), np.linalg.solve(M_pin, tau - nle_pin), "aba")
        pin.forwardKinematics(pm, pd, q_pin)
        placements = rbd.forward_kinematics(model, q)
        for body in range(model.nbodies):
            assert_close(placements[body], pd.oMi[pm.getJointId(model.joint_names[body])].homogeneous, "oMi")
    fixed = pin.transformJointIntoMimic(pm, 1, 5, 0.0, 0.0)
    with pytest.raises(ValueError, match="joint 'e' is a mimic joint with scaling 0"):
        from_pinocchio(fixed)


def test_from_pinocchio_keeps_frames_of_every_type_but_the_joints_own(pin, backend):
    """A JOINT or FIXED_JOINT frame placed by hand (its own name, anywhere) is a frame at
    Pinocchio's placement; a joint's own JOINT frame is rbd's joint frame, and a URDF's fixed
    joint frame, where its child link's frame is, is left out as load_urdf does."""
    pm = pin.Model()
    j = pm.addJoint(0, pin.JointModelRX(), pin.SE3(np.eye(3), np.array([0.0, 0.0, 0.3])), "hinge")
    pm.appendBodyToJoint(j, pin.Inertia(1.0, np.zeros(3), np.eye(3) * 0.1), pin.SE3.Identity())
    pm.addJointFrame(j, 0)
    X = pin.SE3(rbd.rotations.so3_exp([0.1, 0.2, 0.3]), np.array([0.0, 0.0, 0.5]))
    pm.addFrame(pin.Frame("motor_output", j, X, pin.FrameType.JOINT))
    pm.addFrame(pin.Frame("flange", j, X.inverse(), pin.FrameType.FIXED_JOINT))
    pm.addFrame(pin.Frame("arm", j, pin.SE3.Identity(), pin.FrameType.BODY))
    pm.addFrame(pin.Frame("arm_fixed", j, pin.SE3.Identity(), pin.FrameType.FIXED_JOINT))  # where "arm" is
    model = from_pinocchio(pm)
    assert sorted(model.frame_names) == ["arm", "flange", "hinge", "motor_output"]
    pd, q = pm.createData(), np.array([0.7])
    pin.framesForwardKinematics(pm, pd, q)
    for frame in ("motor_output", "flange", "arm"):
        assert_close(rbd.frame_placement(model, q, frame), pd.oMf[pm.getFrameId(frame)].homogeneous, frame)


def test_from_pinocchio_keeps_sensor_frames(pin, backend):
    """A SENSOR frame (an IMU) is an rbd frame, at Pinocchio's placement."""
    pm = pin.Model()
    j = pm.addJoint(0, pin.JointModelRX(), pin.SE3.Identity(), "j")
    pm.appendBodyToJoint(j, pin.Inertia(1.0, np.zeros(3), np.eye(3) * 0.1), pin.SE3.Identity())
    imu = pm.addFrame(pin.Frame("imu", j, pin.SE3(rbd.rotations.so3_exp([0.1, 0.2, 0.3]), np.array([0, 0, 0.1])),
                                pin.FrameType.SENSOR))
    model = from_pinocchio(pm)
    pd, q = pm.createData(), np.array([0.7])
    pin.framesForwardKinematics(pm, pd, q)
    assert_close(rbd.frame_placement(model, q, "imu"), pd.oMf[imu].homogeneous, "imu")


def hand_built_pinocchio(pin, rng):
    """A Pinocchio tree with every joint type rbd takes, frames on joints and on the universe,
    random inertias, limits, armature, damping and friction (depth-first, as Pinocchio needs)."""
    pm = pin.Model()
    pm.name = "every_joint"
    joints = [("rx", pin.JointModelRX(), 0), ("ry", pin.JointModelRY(), 1), ("rz", pin.JointModelRZ(), 2),
              ("r_any", pin.JointModelRevoluteUnaligned(0.0, 0.6, 0.8), 3),
              ("cont_z", pin.JointModelRUBZ(), 4), ("cont_any", pin.JointModelRevoluteUnboundedUnaligned(), 3),
              ("px", pin.JointModelPX(), 0), ("p_any", pin.JointModelPrismaticUnaligned(0.0, 0.8, 0.6), 7),
              ("ball", pin.JointModelSpherical(), 8), ("plane", pin.JointModelPlanar(), 0),
              ("free", pin.JointModelFreeFlyer(), 0)]
    for name, joint, parent in joints:
        jid = pm.addJoint(parent, joint, pin.exp6(rng.normal(size=6)), name)
        A = rng.normal(size=(3, 3))
        second_moment = A @ A.T + 0.1 * np.eye(3)  # of a mass distribution: its inertia is consistent
        inertia = np.trace(second_moment) * np.eye(3) - second_moment
        pm.appendBodyToJoint(jid, pin.Inertia(rng.uniform(0.5, 2), rng.normal(size=3), inertia), pin.SE3.Identity())
        pm.addFrame(pin.Frame(name + "_link", jid, pin.SE3.Identity(), pin.FrameType.BODY))
    pm.addFrame(pin.Frame("tool", 4, pin.exp6(rng.normal(size=6)), pin.FrameType.OP_FRAME))
    pm.addFrame(pin.Frame("table", 0, pin.exp6(rng.normal(size=6)), pin.FrameType.OP_FRAME))
    pm.lowerPositionLimit = -rng.uniform(1, 2, size=pm.nq)
    pm.upperPositionLimit = rng.uniform(1, 2, size=pm.nq)
    pm.velocityLimit, pm.effortLimit = rng.uniform(1, 2, size=pm.nv), rng.uniform(1, 2, size=pm.nv)
    pm.armature, pm.damping, pm.friction = (rng.uniform(0.1, 1, size=pm.nv) for _ in range(3))
    pm.gravity = pin.Motion(np.array([0.5, -1.0, -9.0, 0.0, 0.0, 0.0]))
    return pm


def test_from_pinocchio_every_joint_type(pin, backend):
    rng = np.random.default_rng(11)
    pm = hand_built_pinocchio(pin, rng)
    model = from_pinocchio(pm)
    layout = PinocchioLayout(model, pm)
    assert model.joint_names == tuple(pm.names[1:])
    assert [rbd.JointKind(k).name for k in model.joint_kinds] == [
        "REVOLUTE_X", "REVOLUTE_Y", "REVOLUTE_Z", "REVOLUTE", "REVOLUTE_Z", "REVOLUTE_X", "PRISMATIC", "PRISMATIC",
        "SPHERICAL", "PLANAR", "FREE"]
    assert model.nq == pm.nq - 3  # two continuous joints and the planar joint store an angle, not (cos, sin)
    np.testing.assert_array_equal(model.gravity, [0.5, -1.0, -9.0])
    for ours, theirs in (("armature", "armature"), ("damping", "damping"), ("friction", "friction"),
                         ("velocity_limits", "velocityLimit"), ("effort_limits", "effortLimit")):
        np.testing.assert_array_equal(getattr(model, ours), getattr(pm, theirs)[layout.v_perm], ours)
    assert model.frame_parents[model.frame_id("table")] == -1 and model.frame_parents[model.frame_id("tool")] == 3
    rx = model.joint_id("rx")
    assert model.lower_limits[model.q_idx[rx]] == pm.lowerPositionLimit[0]
    assert np.all(np.isinf(model.lower_limits[model.q_idx[model.joint_id("cont_z")]]))  # bounds on (cos, sin) bound no angle

    pm.armature = np.zeros(pm.nv)  # the dynamics with armature are compared where the algorithms apply it
    model = model.replace(armature=np.zeros(model.nv))
    pd = pm.createData()
    for _ in range(3):
        q, v, a = random_state(model, rng)
        q_pin, v_pin, a_pin = layout.to_peer(q, v, a)
        assert_close(rbd.rnea(model, q, v, a), layout.tau_from_peer(q_pin, pin.rnea(pm, pd, q_pin, v_pin, a_pin)), "rnea")
        assert_close(rbd.crba(model, q), layout.matrix_from_peer(q_pin, pin_mass_matrix(pin, pm, pd, q_pin)), "crba")
        tau = rng.normal(size=model.nv)
        assert_close(rbd.aba(model, q, v, tau), pin.aba(pm, pd, q_pin, v_pin, layout.tau_to_peer(q, tau))[layout.v_perm], "aba")
        pin.framesForwardKinematics(pm, pd, q_pin)
        for frame in ("tool", "table", "plane_link", "free_link"):
            assert_close(rbd.frame_placement(model, q, frame), pd.oMf[pm.getFrameId(frame)].homogeneous, frame)
        np.testing.assert_allclose(layout.q_to_peer(layout.q_from_peer(q_pin)), q_pin, atol=1e-15)


def test_from_pinocchio_refuses_joints_rbd_lacks(pin):
    pm = pin.Model()
    pm.addJoint(0, pin.JointModelSphericalZYX(), pin.SE3.Identity(), "zyx")
    with pytest.raises(ValueError, match="'zyx' is a JointModelSphericalZYX"):
        from_pinocchio(pm)
    with pytest.raises(TypeError, match="pinocchio.Model"):
        from_pinocchio("robot.urdf")


def test_from_pinocchio_refuses_an_angular_gravity_and_keeps_a_linear_one(pin, backend):
    """Pinocchio's gravity is a spatial motion (an angular part models a rotating base); rbd's
    is linear only: refused, not dropped. A tilted linear gravity is kept: oracle pin.rnea."""
    pm = pin.buildModelFromUrdf(str(rbd.sample_model_path("arm7")))
    pm.gravity = pin.Motion(np.array([0.5, 0.0, -9.81]), np.array([0.0, 0.3, 0.0]))
    with pytest.raises(ValueError, match="angular part"):
        from_pinocchio(pm)
    pm.gravity = pin.Motion(np.array([0.5, 0.0, -9.81]), np.zeros(3))
    model = from_pinocchio(pm)
    q = pin.randomConfiguration(pm)
    np.testing.assert_allclose(rbd.gravity(model, q), pin.computeGeneralizedGravity(pm, pm.createData(), q),
                               rtol=0, atol=1e-12)


def test_from_pinocchio_reads_inverted_limits_as_load_urdf(pin):
    """Bullet's "no limit" (lower above upper), which Pinocchio's parser keeps: unbounded,
    with load_urdf's warning naming the joint, and otherwise the model load_urdf gives."""
    urdf = """<robot name="r"><link name="base"/>
      <link name="l1"><inertial><mass value="1"/><inertia ixx="0.01" iyy="0.02" izz="0.015" ixy="0" ixz="0"
        iyz="0"/></inertial></link>
      <joint name="elbow" type="revolute"><parent link="base"/><child link="l1"/><axis xyz="0 0 1"/>
        <limit lower="1" upper="-1" effort="3" velocity="2"/></joint></robot>"""
    with pytest.warns(UserWarning, match="'elbow' have a lower limit above the upper one.*no limit"):
        ours = rbd.load_urdf(urdf)
    with pytest.warns(UserWarning, match="'elbow' have a lower limit above the upper one.*no limit"):
        theirs = from_pinocchio(pin.buildModelFromXML(urdf))
    assert theirs.lower_limits[0] == -np.inf and theirs.upper_limits[0] == np.inf
    np.testing.assert_array_equal(theirs.lower_limits, ours.lower_limits)
    np.testing.assert_array_equal(theirs.effort_limits, [3.0])


def test_from_pinocchio_applies_the_inertia_policy(pin):
    pm = pin.Model()
    jid = pm.addJoint(0, pin.JointModelRX(), pin.SE3.Identity(), "hinge")
    pm.appendBodyToJoint(jid, pin.Inertia(1.0, np.zeros(3), np.diag([0.1, 0.1, 0.5])), pin.SE3.Identity())
    with pytest.warns(UserWarning, match="triangle inequality"):
        from_pinocchio(pm)
    with pytest.raises(ValueError, match="triangle inequality"):
        from_pinocchio(pm, strict=True)


# ------------------------------------------------------------------------------------------
# MuJoCo
# ------------------------------------------------------------------------------------------
MJCF_MODELS = {
    # Two joints in one body, anchors away from the body origin, refs (degrees), a slide along
    # an unaligned axis, a ball with an anchor, a massless body without joints holding a site.
    "multi_joint": """
<mujoco model="multi_joint">
  <option gravity="0.3 -0.2 -9.81"/>
  <worldbody>
    <body name="upper" pos="0.2 0.1 1" quat="0.9 0.1 0.3 0.2">
      <joint name="swing" type="hinge" pos="0.1 0.05 -0.02" axis="0 1 1" ref="20" damping="0.5"/>
      <joint name="extend" type="slide" axis="1 0 0.3" ref="0.1" armature="0.2" frictionloss="0.3"/>
      <geom type="sphere" size="0.1" pos="0.1 0 0"/>
      <body name="lower" pos="0.1 0.2 0.3">
        <joint name="wrist" type="ball" pos="0.02 0.03 0.1" armature="0.05"/>
        <geom type="capsule" size="0.05 0.2" pos="0 0 0.2" euler="10 20 30"/>
        <body name="tip" pos="0 0 0.4" euler="0 90 0">
          <site name="tool" pos="0 0 0.1" euler="30 0 0"/>
        </body>
      </body>
    </body>
  </worldbody>
</mujoco>""",
    # A free body (inertia from a box, a cylinder and an ellipsoid), a body with two unnamed
    # hinges, a welded massive child merged into its parent, and explicit full inertias.
    "floating": """
<mujoco model="floating">
  <worldbody>
    <body name="base" pos="1 2 3" euler="10 20 30">
      <freejoint name="root"/>
      <geom type="box" size="0.1 0.2 0.3" pos="0.1 0.2 0" euler="30 0 10"/>
      <geom type="cylinder" size="0.05 0.1" pos="-0.1 0 0.1" density="2000"/>
      <site name="imu" pos="0 0.05 0.1"/>
      <body name="arm" pos="0.3 0 0">
        <joint type="hinge" axis="0 0 1" pos="0 0.1 0"/>
        <joint type="hinge" axis="1 0 0"/>
        <geom type="ellipsoid" size="0.1 0.2 0.05"/>
        <body name="weight" pos="0 0 0.2" quat="0.5 0.5 0.5 0.5">
          <inertial pos="0.01 0.02 0.03" mass="0.7" fullinertia="0.02 0.03 0.04 0.001 -0.002 0.003"/>
        </body>
        <body name="hand" pos="0.2 0 0">
          <joint name="grip" type="slide" axis="0 1 0" damping="2"/>
          <inertial pos="0 0.1 0" quat="0.7 0.7 0 0" mass="0.3" diaginertia="0.001 0.002 0.0025"/>
        </body>
      </body>
    </body>
  </worldbody>
</mujoco>""",
    # A chain of ball and slide joints; a second free body beside the first.
    "ball_chain": """
<mujoco model="ball_chain">
  <compiler angle="radian"/>
  <worldbody>
    <body name="b1" pos="0 0 1">
      <joint name="j1" type="ball" pos="0 0 0.1"/>
      <geom type="capsule" fromto="0 0 0 0 0 -0.3" size="0.03"/>
      <body name="b2" pos="0 0 -0.3" axisangle="1 1 0 0.7">
        <joint name="j2" type="slide" axis="0 0 1" ref="-0.05"/>
        <joint name="j3" type="ball" pos="0.01 0 0"/>
        <geom type="box" size="0.02 0.03 0.1" pos="0 0 -0.1"/>
      </body>
    </body>
    <body name="puck" pos="0.5 0 0.2">
      <joint name="puck_free" type="free" damping="0.2"/>
      <geom type="cylinder" size="0.1 0.02"/>
    </body>
  </worldbody>
</mujoco>""",
}

PASSIVE_AND_CONSTRAINTS_OFF = ("mjDSBL_SPRING", "mjDSBL_DAMPER", "mjDSBL_CONSTRAINT", "mjDSBL_CONTACT",
                               "mjDSBL_ACTUATION", "mjDSBL_FRICTIONLOSS")


def bare_dynamics(mujoco, mj_model):
    """``mj_model`` without armature, passive forces, constraints or actuation (a copy)."""
    mj_model = copy.deepcopy(mj_model)
    mj_model.dof_armature[:] = 0.0
    mujoco.mj_setConst(mj_model, mujoco.MjData(mj_model))  # MuJoCo keeps the armature in its constants
    for flag in PASSIVE_AND_CONSTRAINTS_OFF:
        mj_model.opt.disableflags |= int(getattr(mujoco.mjtDisableBit, flag))
    return mj_model


def full_mass_matrix(mujoco, mj_model, data):
    M = np.zeros((mj_model.nv, mj_model.nv))
    try:
        mujoco.mj_fullM(mj_model, data, M)  # MuJoCo 4
    except TypeError:
        mujoco.mj_fullM(mj_model, M, data.qM)  # MuJoCo 3
    return M


def mujoco_from_urdf(mujoco, path, floating):
    """MuJoCo's model of a URDF, without the visual and collision elements (MuJoCo would look
    for their meshes)."""
    spec = mujoco.MjSpec.from_string(stripped_for_mujoco(path))
    if floating:
        spec.worldbody.first_body().add_freejoint(name="root_joint")
    return spec.compile()


def assert_matches_mujoco(mujoco, model, mj_model, rng, states=3):
    """rbd's model of ``mj_model`` against MuJoCo: body and site poses, mj_rne, mj_fullM,
    mj_forward's qacc and mj_jacBody, at random states, armature off on both sides."""
    layout = MujocoLayout(model, mj_model)
    np.testing.assert_array_equal(model.armature, mj_model.dof_armature[layout.v_perm])
    np.testing.assert_array_equal(model.damping, mj_model.dof_damping[layout.v_perm])
    np.testing.assert_array_equal(model.friction, mj_model.dof_frictionloss[layout.v_perm])
    model = model.replace(armature=np.zeros(model.nv))
    mj_model = bare_dynamics(mujoco, mj_model)
    data = mujoco.MjData(mj_model)
    names = lambda obj, n: [mujoco.mj_id2name(mj_model, obj, i) for i in range(n)]  # noqa: E731
    bodies, sites = names(mujoco.mjtObj.mjOBJ_BODY, mj_model.nbody), names(mujoco.mjtObj.mjOBJ_SITE, mj_model.nsite)
    for _ in range(states):
        q, v, a = random_state(model, rng)
        qpos, qvel, qacc = layout.to_peer(q, v, a)
        data.qpos[:], data.qvel[:] = qpos, qvel
        mujoco.mj_forward(mj_model, data)
        for b, name in enumerate(bodies[1:], 1):
            if name:
                pose = rbd.frame_placement(model, q, name)
                assert_close(pose[:3, 3], data.xpos[b], name)
                assert_close(pose[:3, :3], data.xmat[b].reshape(3, 3), name)
                jacp, jacr = np.zeros((3, mj_model.nv)), np.zeros((3, mj_model.nv))
                mujoco.mj_jacBody(mj_model, data, jacp, jacr, b)
                assert_close(rbd.frame_jacobian(model, q, name, "local_world_aligned"),
                             layout.jacobian_from_peer(qpos, np.vstack([jacp, jacr])), name)
        for s, name in enumerate(sites):
            if name:
                pose = rbd.frame_placement(model, q, name)
                assert_close(pose[:3, 3], data.site_xpos[s], name)
                assert_close(pose[:3, :3], data.site_xmat[s].reshape(3, 3), name)
        assert_close(rbd.crba(model, q), layout.matrix_from_peer(qpos, full_mass_matrix(mujoco, mj_model, data)),
                     "mj_fullM")
        data.qacc[:] = qacc
        tau_mj = np.zeros(mj_model.nv)
        mujoco.mj_rne(mj_model, data, 1, tau_mj)
        # The layout's own round trip, and MuJoCo's inverse dynamics mapped back.
        assert_close(rbd.rnea(model, *layout.from_peer(qpos, qvel, qacc)), layout.tau_from_peer(qpos, tau_mj), "mj_rne")
        tau = rng.normal(size=model.nv)
        data.qfrc_applied[:] = layout.tau_to_peer(q, tau)
        mujoco.mj_forward(mj_model, data)
        assert_close(rbd.aba(model, q, v, tau), layout.from_peer(qpos, qvel, data.qacc)[2], "mj_forward qacc")


@pytest.mark.parametrize("name", sorted(MJCF_MODELS))
def test_load_mjcf_matches_mujoco(mujoco, backend, name):
    model = rbd.load_mjcf(MJCF_MODELS[name])
    mj_model = mujoco.MjModel.from_xml_string(MJCF_MODELS[name])
    assert model == from_mujoco(mj_model) and model.name == name
    assert model.nq == mj_model.nq and model.nv == mj_model.nv
    assert model.total_mass == pytest.approx(mj_model.body_mass.sum(), rel=1e-12)
    assert_matches_mujoco(mujoco, model, mj_model, np.random.default_rng([7, len(name)]))


@pytest.mark.parametrize("encoding", ["utf-8", "latin-1", "utf-16", "no declaration"])
def test_load_mjcf_reads_a_files_bytes_in_their_encoding(mujoco, encoding):
    """Bytes are a file's content, as load_urdf takes them: decoded as the XML declaration (or
    a byte-order mark) says. Oracle: MuJoCo compiling the same text; a body name outside
    ASCII survives."""
    text = MJCF_MODELS["floating"].strip().replace('name="hand"', 'name="händ"')
    assert "händ" in text
    if encoding == "no declaration":
        data = text.encode("utf-8")
    else:
        data = ('<?xml version="1.0" encoding="%s"?>\n' % encoding + text).encode(encoding)
    model = rbd.load_mjcf(data)
    assert model == from_mujoco(mujoco.MjModel.from_xml_string(text)) and "händ" in model.body_names
    assert rbd.load_mjcf(bytearray(data)) == model
    with pytest.raises(rbd.URDFError, match="MJCF: the bytes given are not XML text in utf-8"):
        rbd.load_mjcf(b"<mujoco>\xff\xfe\xfa</mujoco>")


def test_a_non_utf8_mjcf_file_by_path_is_a_clear_error(mujoco, tmp_path):
    """MuJoCo reads a file's bytes as they are and its names as UTF-8: a Latin-1 name read by
    path is a URDFError saying so (its bytes load: see above), not a UnicodeDecodeError."""
    path = tmp_path / "latin.xml"
    path.write_bytes(b'<?xml version="1.0" encoding="latin-1"?>\n<mujoco><worldbody><body name="b\xe9">'
                     b'<joint name="h\xe9"/><geom size="0.1"/></body></worldbody></mujoco>')
    with pytest.raises(rbd.URDFError, match="not UTF-8.*give load_mjcf its bytes"):
        rbd.load_mjcf(path)
    assert rbd.load_mjcf(path.read_bytes()).joint_names == ("h\xe9",)
    # a UTF-16 file, which MuJoCo's parser cannot read at all: its error says why
    path = tmp_path / "wide.xml"
    path.write_bytes('<?xml version="1.0" encoding="utf-16"?>\n<mujoco><worldbody><body name="b">'
                     '<joint name="h"/><geom size="0.1"/></body></worldbody></mujoco>'.encode("utf-16"))
    with pytest.raises(rbd.URDFError, match="the file is UTF-16.*give load_mjcf its bytes"):
        rbd.load_mjcf(path)
    assert rbd.load_mjcf(path.read_bytes()).joint_names == ("h",)


@pytest.mark.parametrize("element, expected", [
    ('<body name="b" pos="0 0 nan"><joint name="h"/>%s</body>', "body 'b' has a non-finite pos"),
    ('<body name="b" quat="nan 0 0 1"><joint name="h"/>%s</body>', "body 'b' has a non-finite quat"),
    ('<body name="b"><joint name="h" axis="0 nan 1"/>%s</body>', "joint 'h' has a non-finite axis"),
    ('<body name="b"><joint name="h" pos="inf 0 0"/>%s</body>', "joint 'h' has a non-finite pos"),
    ('<body name="b"><joint name="h" damping="nan"/>%s</body>', "joint 'h' has a non-finite damping"),
    ('<body name="b"><joint name="h"/>%s<site name="tip" pos="nan 0 0"/></body>', "site 'tip' has a non-finite pos"),
])
def test_a_non_finite_mujoco_number_names_its_element(mujoco, element, expected, tmp_path, monkeypatch):
    """MuJoCo compiles 'nan' (with a warning on its log): from_mujoco names the element and
    attribute (it named rbd's internal joint_placements)."""
    monkeypatch.chdir(tmp_path)  # (MuJoCo writes its warning to MUJOCO_LOG.TXT here)
    xml = "<mujoco><worldbody>%s</worldbody></mujoco>" % (element % '<geom size="0.1"/>')
    with pytest.raises(ValueError, match="^the MuJoCo model's " + re.escape(expected)):
        from_mujoco(mujoco.MjModel.from_xml_string(xml))
    with pytest.raises(ValueError, match="^MJCF: <.*> has a NaN in|^the MuJoCo model's " + re.escape(expected)):
        rbd.load_mjcf(xml)  # (a NaN written in the file: named as written)


@pytest.mark.parametrize("where, attribute", [
    ('<body name="b"><joint name="h"/><geom name="g" size="0.1" mass="nan"/></body>', "<geom name='g'> has a NaN in mass='nan'"),
    ('<body name="b"><joint name="h"/><geom size="0.1" pos="-NaN 0 0"/></body>', "<geom> has a NaN in pos='-NaN 0 0'"),
])
def test_a_nan_mujoco_reads_as_not_given_is_refused(mujoco, where, attribute, tmp_path, monkeypatch):
    """MuJoCo takes a NaN in a geom's mass or pos as not given (a sphere's mass from its
    density, the geom at the origin), with only a printed warning: load_mjcf names the element
    and attribute, in the file given and in the files it includes; a body named 'nan' is a name."""
    monkeypatch.chdir(tmp_path)  # (MuJoCo writes its warning to MUJOCO_LOG.TXT here)
    xml = "<mujoco><worldbody>%s</worldbody></mujoco>" % where
    mujoco.MjModel.from_xml_string(xml)  # (what makes this test: MuJoCo compiles it)
    with pytest.raises(rbd.URDFError, match="^MJCF: " + re.escape(attribute) + r" \(MuJoCo compiles it with only"):
        rbd.load_mjcf(xml)
    (tmp_path / "parts").mkdir()
    (tmp_path / "parts" / "arm.xml").write_text("<mujoco><worldbody>%s</worldbody></mujoco>" % where)
    (tmp_path / "robot.xml").write_text('<mujoco><include file="parts/arm.xml"/></mujoco>')
    with pytest.raises(rbd.URDFError, match=re.escape(attribute) + r" \(in the included file .*arm.xml'\)"):
        rbd.load_mjcf(str(tmp_path / "robot.xml"))
    named = ('<mujoco><worldbody><body name="nan"><joint name="inf"/><geom size="0.1" rgba="nan 0 0 1" user="nan"/>'
             '<site name="s" rgba="1 NaN 0 1" size="nan"/></body></worldbody></mujoco>')  # (names, colors, a
    # site's drawn size: no numbers of rbd's)
    assert rbd.load_mjcf(named).joint_names == ("inf",)


def test_mujoco_ranges_may_be_infinite(mujoco, backend):
    """MuJoCo compiles a limited joint's range with an infinite end (no bound there), and an
    infinite actuatorfrcrange: rbd's limits take them as they are (they were refused as
    non-finite); a NaN range is still refused."""
    xml = ('<mujoco><compiler angle="radian"/><worldbody><body name="b"><joint name="h" limited="true" '
           'range="-1 inf" actuatorfrclimited="true" actuatorfrcrange="-inf inf"/><geom size="0.1"/>'
           '</body></worldbody></mujoco>')
    model = rbd.load_mjcf(xml)
    np.testing.assert_array_equal([model.lower_limits[0], model.upper_limits[0], model.effort_limits[0]],
                                  mujoco.MjModel.from_xml_string(xml).jnt_range[0].tolist() + [np.inf])
    mj_model = mujoco.MjModel.from_xml_string(xml)
    mj_model.jnt_range[0, 1] = np.nan
    with pytest.raises(rbd.URDFError, match="joint 'h' has a NaN in its range"):
        from_mujoco(mj_model)


def test_from_mujoco_names_polynomial_springs_and_damping(mujoco):
    """MuJoCo 4's joint stiffness and damping take polynomial coefficients: a spring given by
    its higher terms only is a spring, and damping beyond the linear term is named (rbd's
    damping is the linear coefficient)."""
    if not hasattr(mujoco.MjModel, "dof_dampingpoly"):
        pytest.skip("this MuJoCo has no polynomial damping")
    xml = ('<mujoco><worldbody><body name="b"><joint name="spring" stiffness="0 5"/><geom size="0.1"/>'
           '<body name="c" pos="0 0 1"><joint name="damper" damping="1 2 3"/><geom size="0.1"/></body>'
           '</body></worldbody></mujoco>')
    with pytest.warns(UserWarning) as record:
        model = rbd.load_mjcf(xml)
    message = " ".join(str(w.message) for w in record)
    assert "joint springs (stiffness, springref) on 'spring'" in message
    assert "damping beyond its linear term on joints 'damper'" in message
    np.testing.assert_array_equal(model.damping, [0.0, 1.0])


def test_the_massless_links_of_a_mujoco_body_with_several_joints_take_new_names(mujoco, backend):
    """A body 'b' with joints 'j' and 'k' has a massless link 'b/j': a body of the file named
    'b/j' keeps its name, the made-up one takes a trailing '_', and frames and editing work.
    Oracle: MuJoCo's body poses."""
    xml = """<mujoco><worldbody>
      <body name="b" pos="0 0 0.3"><joint name="j" axis="1 0 0"/><joint name="k" axis="0 1 0" pos="0.1 0 0"/>
        <geom size="0.1" pos="0.2 0 0"/></body>
      <body name="b/j" pos="5 0 0.3"><joint name="z"/><geom size="0.1"/></body></worldbody></mujoco>"""
    mj_model = mujoco.MjModel.from_xml_string(xml)
    model = from_mujoco(mj_model)
    assert sorted(model.body_names) == ["b", "b/j", "b/j_"]
    data = mujoco.MjData(mj_model)
    data.qpos[:] = [0.4, -0.2, 0.9]
    mujoco.mj_kinematics(mj_model, data)
    q = MujocoLayout(model, mj_model).q_from_peer(data.qpos)
    for body in ("b", "b/j"):
        assert_close(rbd.frame_placement(model, q, body)[:3, 3], data.xpos[mj_model.body(body).id], body)
    assert "tool" in rbd.add_frame(model, "tool", "b/j", np.eye(4)).frame_names


def test_a_mujoco_body_too_heavy_for_float64_is_named(mujoco):
    """A mass and a centre of mass whose inertia about the body frame overflows (m c^2 past
    1e308): the error names the body (it was a bare overflow from rbd's spatial algebra)."""
    xml = ('<mujoco><worldbody><body name="heavy"><joint name="j"/><inertial mass="1e300" pos="1e10 0 0" '
           'diaginertia="1 1 1"/></body></worldbody></mujoco>')
    with pytest.raises(rbd.URDFError, match="body 'heavy' has a mass, inertia or position so large"):
        rbd.load_mjcf(xml)


def test_made_up_joint_names_never_take_a_written_body_or_site_name(mujoco, backend):
    """An unnamed joint is '<body>_joint<k>', with a trailing '_' while a body or site of the
    file holds that name: the written frames keep their names. Oracle: MuJoCo's poses of the
    body and the site named like the made-up joint names."""
    xml = """<mujoco><worldbody>
      <body name="a" pos="0 0 1"><joint axis="0 1 0"/><geom size="0.1" pos="0.2 0 0"/>
        <body name="a_joint0" pos="0.5 0 0"><geom size="0.1"/></body>
        <body name="b" pos="0 0.3 0"><joint type="slide" axis="1 0 0"/><geom size="0.1"/>
          <site name="b_joint0" pos="0 0 0.4"/></body>
      </body></worldbody></mujoco>"""
    mj_model = mujoco.MjModel.from_xml_string(xml)
    model = from_mujoco(mj_model)
    assert model.joint_names == ("a_joint0_", "b_joint0_")
    assert len(set(model.frame_names)) == len(model.frame_names)
    data = mujoco.MjData(mj_model)
    data.qpos[:] = [0.7, -0.3]
    mujoco.mj_kinematics(mj_model, data)
    q = MujocoLayout(model, mj_model).q_from_peer(data.qpos)
    assert_close(rbd.frame_placement(model, q, "a_joint0")[:3, 3], data.xpos[mj_model.body("a_joint0").id], "body")
    assert_close(rbd.frame_placement(model, q, "b_joint0")[:3, 3], data.site_xpos[0], "site")


def test_swapped_layout_arguments_and_a_folder_are_named(mujoco, tmp_path):
    """A layout's peer argument given an rbd Model says the two are swapped; load_mjcf of a
    folder is an IsADirectoryError, as load_urdf's (it said there was no such file)."""
    model = rbd.sample_model("arm7")
    with pytest.raises(TypeError, match=r"^mj_model must be a compiled mujoco.MjModel, got Model "
                                        r"\(the rbd model comes first"):
        MujocoLayout(model, model)
    with pytest.raises(TypeError, match=r"^mj_model must be a compiled mujoco.MjModel, got str$"):
        MujocoLayout(model, "arm7")
    with pytest.raises(IsADirectoryError):
        rbd.load_urdf(str(tmp_path))
    with pytest.raises(IsADirectoryError, match="is a folder"):
        rbd.load_mjcf(str(tmp_path))


def test_from_mujoco_structure(mujoco):
    model = rbd.load_mjcf(MJCF_MODELS["floating"])
    # Unnamed joints are called <body>_joint<k>; a body with two joints is a chain of two rbd bodies.
    assert model.joint_names == ("root", "arm_joint0", "arm_joint1", "grip")
    assert model.body_names == ("base", "arm/arm_joint0", "arm", "hand")
    assert model.inertias[1, 0] == 0.0  # the intermediate body is massless
    assert {"world", "base", "arm", "weight", "hand", "imu"} <= set(model.frame_names)
    assert model.frame_parents[model.frame_id("weight")] == model.joint_id("arm_joint1")  # welded: merged
    np.testing.assert_array_equal(model.damping, [0, 0, 0, 0, 0, 0, 0, 0, 2])
    # A joint's ref is folded into its placement: rbd's q is MuJoCo's qpos.
    mj_model = mujoco.MjModel.from_xml_string(MJCF_MODELS["multi_joint"])
    model = from_mujoco(mj_model)
    data = mujoco.MjData(mj_model)
    mujoco.mj_forward(mj_model, data)
    np.testing.assert_array_equal(MujocoLayout(model, mj_model).q_to_peer(mj_model.qpos0), mj_model.qpos0)
    assert_close(rbd.frame_placement(model, mj_model.qpos0, "lower")[:3, 3], data.xpos[2], "qpos0")
    np.testing.assert_array_equal(model.gravity, [0.3, -0.2, -9.81])
    mj_model.opt.disableflags |= int(mujoco.mjtDisableBit.mjDSBL_GRAVITY)
    np.testing.assert_array_equal(from_mujoco(mj_model).gravity, [0.0, 0.0, 0.0])


@pytest.mark.parametrize("robot, floating", ROBOT_CASES)
def test_urdf_through_mujoco(mujoco, backend, robot, floating):
    """MuJoCo's URDF importer (meshes stripped): ``from_mujoco`` against MuJoCo, and
    ``rbd.load_urdf`` of the same file against MuJoCo through the layout."""
    path = robot_path(robot)
    mj_model = mujoco_from_urdf(mujoco, path, floating)
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="from_mujoco: .*equality constraints", category=UserWarning)
        model = from_mujoco(mj_model)  # MuJoCo turns the Panda's and Talos's <mimic> into equalities
    rng = np.random.default_rng([9, len(robot), floating])
    assert_matches_mujoco(mujoco, model, mj_model, rng, states=2)
    ours = load_urdf_quietly(path, floating)
    layout = MujocoLayout(ours, mj_model)
    np.testing.assert_array_equal(ours.damping, mj_model.dof_damping[layout.v_perm])
    bare = bare_dynamics(mujoco, mj_model)
    data = mujoco.MjData(bare)
    for _ in range(2):
        q, v, a = random_state(ours, rng)
        qpos, qvel, qacc = layout.to_peer(q, v, a)
        data.qpos[:], data.qvel[:] = qpos, qvel
        mujoco.mj_forward(bare, data)
        data.qacc[:] = qacc
        tau_mj = np.zeros(bare.nv)
        mujoco.mj_rne(bare, data, 1, tau_mj)
        assert_close(rbd.rnea(ours, q, v, a), layout.tau_from_peer(qpos, tau_mj), "load_urdf vs mj_rne")
    # And MuJoCo's reading of the file against Pinocchio's, through both layouts.
    pin = pytest.importorskip("pinocchio")
    pm = build_pin(pin, path, floating)
    to_pin = PinocchioLayout(model, pm)
    q, v, a = random_state(model, rng)
    q_pin, v_pin, a_pin = to_pin.to_peer(q, v, a)
    assert_close(rbd.rnea(model, q, v, a), to_pin.tau_from_peer(q_pin, pin.rnea(pm, pm.createData(), q_pin, v_pin, a_pin)),
                 "from_mujoco vs Pinocchio")


def test_mujoco_layout_batches_and_round_trips(mujoco):
    mj_model = mujoco.MjModel.from_xml_string(MJCF_MODELS["floating"])
    model = from_mujoco(mj_model)
    layout = MujocoLayout(model, mj_model)
    rng = np.random.default_rng(21)
    Q = rbd.random_configuration(model, rng, batch=(2, 3))
    V, A, TAU = (rng.normal(size=(2, 3, model.nv)) for _ in range(3))
    M = rng.normal(size=(2, 3, model.nv, model.nv))
    J = rng.normal(size=(2, 3, 6, model.nv))
    peer = layout.to_peer(Q, V, A)
    batched = (peer, layout.tau_to_peer(Q, TAU), layout.matrix_to_peer(Q, M), layout.jacobian_to_peer(Q, J))
    for i in range(2):
        for k in range(3):
            one = (layout.to_peer(Q[i, k], V[i, k], A[i, k]), layout.tau_to_peer(Q[i, k], TAU[i, k]),
                   layout.matrix_to_peer(Q[i, k], M[i, k]), layout.jacobian_to_peer(Q[i, k], J[i, k]))
            for got, want in zip((batched[0][0], batched[0][1], batched[0][2], *batched[1:]), (*one[0], *one[1:])):
                np.testing.assert_allclose(got[i, k], want, rtol=0, atol=1e-14)
    back = layout.from_peer(*peer)
    for got, want in zip(back, (Q, V, A)):
        np.testing.assert_allclose(got, want, rtol=0, atol=1e-13)
    np.testing.assert_allclose(layout.tau_from_peer(peer[0], layout.tau_to_peer(Q, TAU)), TAU, atol=1e-13)
    np.testing.assert_allclose(layout.matrix_from_peer(peer[0], layout.matrix_to_peer(Q, M)), M, atol=1e-13)
    np.testing.assert_allclose(layout.jacobian_from_peer(peer[0], layout.jacobian_to_peer(Q, J)), J, atol=1e-13)
    # The free joint: qvel's linear part is the world-frame velocity of the body origin.
    q, v = Q[0, 0], V[0, 0]
    R = rbd.frame_placement(model, q, "base")[:3, :3]
    np.testing.assert_allclose(peer[1][0, 0, :3], R @ v[:3], atol=1e-14)


def test_mujoco_free_joint_acceleration_is_not_a_reordering(mujoco):
    """qacc's linear part is p̈ = d/dt (R v_lin): checked by finite differences of MuJoCo's
    own integration of a body moving with a constant body twist (rbd's a = 0)."""
    mj_model = mujoco.MjModel.from_xml_string(MJCF_MODELS["ball_chain"])
    model = from_mujoco(mj_model)
    layout = MujocoLayout(model, mj_model)
    rng = np.random.default_rng(4)
    q, v = np.asarray(rbd.random_configuration(model, rng)), rng.normal(size=model.nv)
    _, qvel, qacc = layout.to_peer(q, v, np.zeros(model.nv))
    free = slice(mj_model.jnt_dofadr[mj_model.joint("puck_free").id], None)
    assert np.abs(qacc[free][:3]).max() > 0.1  # a = 0 in rbd is not qacc = 0 in MuJoCo
    h = 1e-6
    qvels = []
    for sign in (-1, 1):
        q_h = rbd.integrate(model, q, sign * h * v)  # constant body twist for time ±h
        qvels.append(layout.to_peer(q_h, v)[1])
    np.testing.assert_allclose(qacc[free], ((qvels[1] - qvels[0]) / (2 * h))[free], rtol=1e-6, atol=1e-7)


UNSUPPORTED = """
<mujoco>
  <option density="1.2"/>
  <worldbody>
    <body name="a">
      <joint name="hinge" type="hinge" stiffness="10" springref="0.2"/>
      <geom size="0.1" mass="1"/>
      <site name="s1"/>
      <body name="b" pos="0 0 0.5" gravcomp="1">
        <joint name="shoulder" type="ball" range="0 30" limited="true"/>
        <geom size="0.1" mass="1"/>
        <site name="s2"/>
      </body>
    </body>
    <body name="target" mocap="true"/>
  </worldbody>
  <tendon><spatial name="cable"><site site="s1"/><site site="s2"/></spatial></tendon>
  <equality><connect name="pin" body1="b" body2="target" anchor="0 0 0"/></equality>
  <actuator><motor name="motor" joint="hinge" gear="50"/></actuator>
</mujoco>"""


def test_from_mujoco_reports_what_rbd_lacks(mujoco):
    with pytest.warns(UserWarning) as record:
        model = rbd.load_mjcf(UNSUPPORTED)
    message = " ".join(str(w.message) for w in record)
    for word in ("tendons 'cable'", "equality constraints 'pin'", "actuators 'motor'", "springs",
                 "'hinge'", "ball joints 'shoulder'", "gravity compensation on 'b'", "mocap bodies 'target'",
                 "fluid forces"):
        assert word in message, word
    assert model.nv == 4
    # Where rbd's dynamics would be wrong, an error instead.
    free_armature = MJCF_MODELS["ball_chain"].replace('type="free" damping="0.2"', 'type="free" armature="0.1"')
    with pytest.raises(ValueError, match="free joint 'puck_free' has armature on its translation"):
        rbd.load_mjcf(free_armature)
    mj_model = mujoco.MjModel.from_xml_string(MJCF_MODELS["ball_chain"])
    first = mj_model.jnt_dofadr[mj_model.joint("puck_free").id]
    mj_model.dof_armature[first + 3:first + 6] = 0.1  # on the rotation, MuJoCo's and rbd's agree
    model = from_mujoco(mj_model)
    np.testing.assert_array_equal(model.armature[model.joint_idx_v("puck_free"):][:6], [0, 0, 0, 0.1, 0.1, 0.1])


def test_load_mjcf_reads_urdfs_without_their_meshes(mujoco, backend, tmp_path):
    """A URDF given to load_mjcf (its root element says so, whatever the file's name) goes
    through MuJoCo's importer without the meshes it could not find: the same model as
    MuJoCo's of the stripped file, and the same dynamics as rbd.load_urdf."""
    path = robot_path("solo12")
    assert "<mesh" in open(path).read()
    with pytest.raises(ValueError):  # what load_mjcf would meet without the stripping
        mujoco.MjModel.from_xml_path(path)
    renamed = tmp_path / "solo12.xml"
    renamed.write_text(open(path).read())
    model = rbd.load_mjcf(path)
    assert model == from_mujoco(mujoco_from_urdf(mujoco, path, False))
    assert rbd.load_mjcf(renamed) == model and rbd.load_mjcf(open(path).read()) == model
    ours = load_urdf_quietly(path, False)
    # fixed links stay bodies: every link a frame, the fixed root link's mass kept
    assert set(ours.link_frame_names) <= set(model.frame_names)
    np.testing.assert_allclose(model.world_inertia, ours.world_inertia, rtol=1e-12, atol=1e-15)
    mj_model = mujoco.MjModel.from_xml_string(stripped_for_mujoco(path))
    to_ours, to_model = MujocoLayout(ours, mj_model), MujocoLayout(model, mj_model)
    q, v, a = random_state(ours, np.random.default_rng(11))
    peer = to_ours.to_peer(q, v, a)
    q_model = to_model.q_from_peer(peer[0])
    assert_close(to_model.tau_to_peer(q_model, rbd.rnea(model, *to_model.from_peer(*peer))),
                 to_ours.tau_to_peer(q, rbd.rnea(ours, q, v, a)), "load_mjcf vs load_urdf")


def test_load_mjcf_keeps_a_urdfs_fixed_links_even_when_it_asks_mujoco_to_fuse_them(mujoco, backend):
    """A URDF prepared for MuJoCo may say <compiler fusestatic="true"/>: its fixed links still
    stay frames through load_mjcf, with a fixed base's root link's mass; the dynamics are
    load_urdf's (oracle: the URDF loaded by rbd's own parser)."""
    inertial = ('<inertial><origin xyz="0.05 0 0"/><mass value="%s"/><inertia ixx="0.01" iyy="0.02" izz="0.02" '
                'ixy="0" ixz="0" iyz="0"/></inertial>')
    xml = """<robot name="r"><mujoco><compiler fusestatic="true"/></mujoco>
    <link name="base">%s</link><link name="arm">%s</link><link name="tool">%s</link>
    <joint name="j" type="revolute"><parent link="base"/><child link="arm"/><axis xyz="0 1 0"/>
      <limit lower="-1" upper="1" effort="1" velocity="1"/></joint>
    <joint name="fx" type="fixed"><parent link="arm"/><child link="tool"/><origin xyz="0 0 0.3" rpy="0 0.4 0"/>
    </joint></robot>""" % (inertial % 2.0, inertial % 1.0, inertial % 0.5)
    model, ours = rbd.load_mjcf(xml), rbd.load_urdf(xml)
    assert {"base", "arm", "tool"} <= set(model.frame_names)
    np.testing.assert_allclose(model.world_inertia, ours.world_inertia, rtol=1e-12, atol=1e-15)
    q, v, a = [0.3], [0.7], [-1.1]
    np.testing.assert_allclose(rbd.rnea(model, q, v, a), rbd.rnea(ours, q, v, a), rtol=1e-12)
    np.testing.assert_allclose(rbd.frame_placement(model, q, "tool"), rbd.frame_placement(ours, q, "tool"),
                               rtol=0, atol=1e-12)


def test_load_mjcf_keeps_a_urdfs_mass_from_geometry(mujoco, backend):
    """A URDF link without <inertial> takes its mass from its collision shapes in MuJoCo: only
    meshes are left out (with a warning where that loses mass), a box stays. Oracle: MuJoCo
    compiling the same (mesh-free) file; a string starting with a newline is read too."""
    urdf = """
<?xml version="1.0"?>
<robot name="tool_arm">
  <link name="base"/>
  <link name="arm"><inertial><origin xyz="0.2 0 0"/><mass value="1"/>
    <inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.01"/></inertial></link>
  <link name="tool"><collision><origin xyz="0.1 0 0"/><geometry><box size="0.1 0.1 0.1"/></geometry></collision></link>
  <joint name="shoulder" type="revolute"><parent link="base"/><child link="arm"/><axis xyz="0 0 1"/>
    <limit lower="-3" upper="3" effort="10" velocity="1"/></joint>
  <joint name="weld" type="fixed"><parent link="arm"/><child link="tool"/><origin xyz="0.4 0 0"/></joint>
</robot>"""
    mj_model = mujoco.MjModel.from_xml_string(urdf.lstrip())
    model = rbd.load_mjcf(urdf)
    assert model.total_mass == pytest.approx(mj_model.body_mass.sum(), rel=1e-12) and model.total_mass > 1.5
    data = mujoco.MjData(mj_model)
    mujoco.mj_forward(mj_model, data)
    assert_close(rbd.crba(model, np.zeros(1)), full_mass_matrix(mujoco, mj_model, data), "M")
    meshed = urdf.replace('<box size="0.1 0.1 0.1"/>', '<mesh filename="package://tool/tool.stl"/>')
    with pytest.warns(UserWarning, match="links 'tool' have no <inertial>"):
        assert rbd.load_mjcf(meshed).total_mass == pytest.approx(1.0)


def test_mujoco_sites_named_like_bodies_keep_both_frames(mujoco, backend):
    """MuJoCo names bodies and sites apart; rbd's frames share one namespace. The body keeps
    its name, the site becomes '<name>/site' (with a warning); a name rbd makes up for an
    unnamed body never takes a name written in the file. Oracle: MuJoCo's poses."""
    xml = """<mujoco><worldbody>
      <body name="head" pos="0 0 1"><joint name="j" type="hinge" axis="0 1 0"/><geom size="0.1" mass="1"/>
        <site name="head" pos="0.2 0 0.3"/>
        <body pos="0.5 0 0"><joint name="k" type="hinge"/><geom size="0.1" mass="1"/>
          <body name="body2" pos="0 0 -0.7"><joint name="l" type="slide"/><geom size="0.1" mass="1"/></body>
        </body>
      </body></worldbody></mujoco>"""
    mj_model = mujoco.MjModel.from_xml_string(xml)
    assert mj_model.body("body2").id == 3 and mujoco.mj_id2name(mj_model, mujoco.mjtObj.mjOBJ_BODY, 2) is None
    with pytest.warns(UserWarning, match="sites 'head' are named like bodies.*'head/site'"):
        model = from_mujoco(mj_model)
    assert {"head", "head/site", "body2", "body2_"} <= set(model.frame_names)
    # a joint's written name is not taken by a made-up body name either
    with pytest.warns(UserWarning, match="sites 'head'"):
        renamed = from_mujoco(mujoco.MjModel.from_xml_string(xml.replace('name="body2"', 'name="b3"').replace(
            'name="k"', 'name="body2"')))
    assert "body2_" in renamed.frame_names and renamed.frame_id("body2") == renamed.joint_frame("body2")
    data = mujoco.MjData(mj_model)
    data.qpos[:] = [0.4, -0.7, 0.2]
    mujoco.mj_kinematics(mj_model, data)
    q = MujocoLayout(model, mj_model).q_from_peer(data.qpos)
    for frame, position in (("head", data.xpos[1]), ("head/site", data.site_xpos[0]), ("body2_", data.xpos[2]),
                            ("body2", data.xpos[3])):
        assert_close(rbd.frame_placement(model, q, frame)[:3, 3], position, frame)


def test_mujoco_applied_wrenches_as_fext(mujoco, backend):
    """MuJoCo's xfrc_applied (world axes, at each body's center of mass) through
    fext_from_peer: rbd's aba with that fext against mj_forward's qacc, on a free-floating
    tree with a two-joint body, a welded body and a body welded to the world; batched."""
    xml = MJCF_MODELS["floating"].replace("<worldbody>", '<worldbody><body name="post" pos="0 0 -1">'
                                          '<geom size="0.1"/></body>')
    mj_model = bare_dynamics(mujoco, mujoco.MjModel.from_xml_string(xml))
    model = from_mujoco(mj_model)
    layout = MujocoLayout(model, mj_model)
    rng = np.random.default_rng(17)
    data = mujoco.MjData(mj_model)
    mujoco.mj_kinematics(mj_model, data)
    post = mj_model.body("post").id  # welded to the world: rbd's world_inertia
    assert model.world_inertia[0] == pytest.approx(mj_model.body_mass[post], rel=1e-14)
    np.testing.assert_allclose(model.world_inertia[1:4], mj_model.body_mass[post] * data.xipos[post], atol=1e-14)
    qpos, qvel, xfrc = [], [], []
    for _ in range(3):
        q, v, _ = random_state(model, rng)
        qpos.append(layout.q_to_peer(q))
        qvel.append(layout.to_peer(q, v)[1])
        xfrc.append(rng.normal(size=(mj_model.nbody, 6)))
    fext = layout.fext_from_peer(np.array(qpos), np.array(xfrc))
    assert fext.shape == (3, model.nbodies, 6)
    for s in range(3):
        data.qpos[:], data.qvel[:], data.xfrc_applied[:] = qpos[s], qvel[s], xfrc[s]
        mujoco.mj_forward(mj_model, data)
        q, v = layout.from_peer(qpos[s], qvel[s])
        a = rbd.aba(model, q, v, np.zeros(model.nv), fext=fext[s])
        assert_close(layout.to_peer(q, v, a)[2], data.qacc, "qacc with xfrc_applied")
        np.testing.assert_allclose(layout.fext_from_peer(qpos[s], xfrc[s]), fext[s], rtol=0, atol=1e-14)
    with pytest.raises(ValueError, match="xfrc_applied must have shape"):
        layout.fext_from_peer(qpos[0], np.zeros((2, 6)))


def test_mujoco_errors(mujoco, tmp_path, monkeypatch):
    with pytest.raises(rbd.URDFError, match="MJCF: MuJoCo cannot compile"):
        rbd.load_mjcf("<mujoco><worldbody><body><joint type='hinge'/></worldbody></mujoco>")
    with pytest.raises(FileNotFoundError):
        rbd.load_mjcf(str(tmp_path / "missing.xml"))
    with pytest.raises(TypeError, match="MJCF file path, an XML string or its bytes"):
        rbd.load_mjcf(42)
    with pytest.raises(rbd.URDFError, match="no <link>"):  # (as load_urdf: MuJoCo would make a 0-dof robot)
        rbd.load_mjcf('<robot name="r"/>')
    with pytest.raises(rbd.URDFError, match="xacro file"):
        rbd.load_mjcf('<robot name="r"><link name="a"/><xacro:include filename="b.xacro"/></robot>')
    with pytest.raises(TypeError, match="compiled mujoco.MjModel"):
        from_mujoco(MJCF_MODELS["floating"])
    path = tmp_path / "floating.xml"
    path.write_text(MJCF_MODELS["floating"])
    assert rbd.load_mjcf(path) == rbd.load_mjcf(str(path))
    twice = "<mujoco><worldbody><body name='b'><joint name='b_joint1' axis='1 0 0'/><joint/>" \
            "<geom size='0.1'/></body></worldbody></mujoco>"
    # the file's 'b_joint1' keeps its name; the unnamed second joint, whose synthesized name
    # it would take, gets a trailing '_' (as bodies and sites do)
    renamed = rbd.load_mjcf(twice)
    assert renamed.joint_names == ("b_joint1", "b_joint1_")
    np.testing.assert_allclose(renamed.joint_axes[renamed.joint_id("b_joint1")], [1, 0, 0])
    np.testing.assert_allclose(renamed.joint_axes[renamed.joint_id("b_joint1_")], [0, 0, 1])  # (MuJoCo's default)
    monkeypatch.setitem(sys.modules, "mujoco", None)
    with pytest.raises(ImportError, match="pip install mujoco"):
        rbd.load_mjcf(MJCF_MODELS["floating"])


def test_mujocos_bias_force_is_rnea_at_zero_qacc(mujoco, backend):
    """The README's recipe for qfrc_bias: rnea at the a of qacc = 0, which with a free joint
    is not nonlinear_effects (a = 0)."""
    mj = mujoco.MjModel.from_xml_string(MJCF_MODELS["floating"])
    model = from_mujoco(mj)
    layout = MujocoLayout(model, mj)
    data = mujoco.MjData(mj)
    rng = np.random.default_rng(3)
    data.qpos[:] = layout.q_to_peer(rbd.random_configuration(model, rng))
    data.qvel[:] = rng.standard_normal(mj.nv)
    mujoco.mj_forward(mj, data)
    q, v, a = layout.from_peer(data.qpos, data.qvel, np.zeros(mj.nv))
    np.testing.assert_allclose(layout.tau_to_peer(q, rbd.rnea(model, q, v, a)), data.qfrc_bias, rtol=1e-12, atol=1e-12)
    assert np.abs(layout.tau_to_peer(q, rbd.nonlinear_effects(model, q, v)) - data.qfrc_bias).max() > 1e-3


def test_mujoco_armature_rbd_cannot_hold_is_refused(mujoco, backend):
    """Actuator and tendon armature enter MuJoCo's mass matrix (J^T armature J): a model
    without them would give another M, so it is refused, not loaded with a warning."""
    two_links = ("<mujoco><worldbody><body name='a' pos='0 0 1'><joint name='j1' axis='0 1 0'/>"
                 "<geom type='capsule' fromto='0 0 0 0.5 0 0' size='0.05'/><body name='b' pos='0.5 0 0'>"
                 "<joint name='j2' axis='0 1 0'/><geom type='capsule' fromto='0 0 0 0.5 0 0' size='0.05'/>"
                 "</body></body></worldbody>%s</mujoco>")
    tendon = ("<tendon><fixed name='t' armature='%s'><joint joint='j1' coef='1'/><joint joint='j2' coef='-1'/>"
              "</fixed></tendon>")
    q = np.array([0.3, -0.5])
    for armature in ("0", "0.7"):
        mj = mujoco.MjModel.from_xml_string(two_links % (tendon % armature))
        data = mujoco.MjData(mj)
        data.qpos[:] = q
        mujoco.mj_forward(mj, data)
        M = np.zeros((2, 2))
        mujoco.mj_fullM(mj, data, M)
        if armature == "0":
            with pytest.warns(UserWarning, match="tendons 't'"):
                model = from_mujoco(mj)
            np.testing.assert_allclose(rbd.crba(model, q), M, rtol=1e-12, atol=1e-14)
        else:  # (what a load would have missed)
            np.testing.assert_allclose(M - rbd.crba(model, q), 0.7 * np.array([[1, -1], [-1, 1]]), atol=1e-12)
            with pytest.raises(ValueError, match="tendons 't' with armature"):
                from_mujoco(mj)
    with pytest.raises(ValueError, match="actuators with armature"):
        rbd.load_mjcf(two_links % "<actuator><motor joint='j1' armature='0.3'/></actuator>")


def test_layout_errors(mujoco, pin):
    mj_model = mujoco.MjModel.from_xml_string(MJCF_MODELS["floating"])
    model = from_mujoco(mj_model)
    layout = MujocoLayout(model, mj_model)
    with pytest.raises(ValueError, match="q must have shape"):
        layout.to_peer(np.zeros(model.nq + 1))
    with pytest.raises(ValueError, match="v_peer must have shape"):
        layout.from_peer(np.zeros(mj_model.nq), np.zeros(3))
    with pytest.raises(ValueError, match="needs v"):
        layout.to_peer(rbd.neutral(model), a=np.zeros(model.nv))
    with pytest.raises(ValueError, match="finite"):
        layout.tau_to_peer(rbd.neutral(model), np.full(model.nv, np.nan))
    with pytest.raises(ValueError, match=r"J must have shape \(\.\.\., k, %d\)" % model.nv):
        layout.jacobian_to_peer(rbd.neutral(model), np.zeros(model.nv))  # (a row, not a Jacobian)
    with pytest.raises(ValueError, match=r"J_peer must have shape \(\.\.\., k, %d\)" % mj_model.nv):
        layout.jacobian_from_peer(np.zeros(mj_model.nq), np.zeros(mj_model.nv))
    with pytest.raises(ValueError, match="only in rbd: 'grip'"):
        MujocoLayout(model, mujoco.MjModel.from_xml_string(MJCF_MODELS["floating"].replace('name="grip" ', "")))
    other = rbd.load_mjcf(MJCF_MODELS["floating"].replace('type="slide"', 'type="hinge"'))
    with pytest.raises(ValueError, match="'grip' is revolute_y in rbd but prismatic in MuJoCo"):
        MujocoLayout(other, mj_model)
    with pytest.raises(TypeError, match="pinocchio.Model"):
        PinocchioLayout(model, mj_model)


def test_peers_are_imported_only_when_used():
    code = ("import sys, rbd, rbd.interop; "
            "assert not {'mujoco', 'pinocchio'} & set(sys.modules), sorted(set(sys.modules) & {'mujoco', 'pinocchio'})")
    subprocess.run([sys.executable, "-c", code], check=True, env=dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path)))


def test_layout_batches_broadcast(mujoco):
    """A batch of configurations with one velocity (and the other way round), as rbd's algorithms."""
    mj_model = mujoco.MjModel.from_xml_string(MJCF_MODELS["floating"])
    model = from_mujoco(mj_model)
    layout = MujocoLayout(model, mj_model)
    rng = np.random.default_rng(8)
    Q, v = rbd.random_configuration(model, rng, batch=4), rng.normal(size=model.nv)
    _, V_peer = layout.to_peer(Q, v)
    for i in range(4):
        np.testing.assert_allclose(V_peer[i], layout.to_peer(Q[i], v)[1], rtol=0, atol=1e-15)
    assert layout.tau_from_peer(layout.q_to_peer(Q[0]), np.ones((3, model.nv))).shape == (3, model.nv)
    with pytest.raises(ValueError, match="do not broadcast"):
        layout.tau_to_peer(Q, np.ones((3, model.nv)))


def armature_applied():
    """Whether this build's algorithms put model.armature in the mass matrix (another change
    adds it): the comparisons with armature on run only then."""
    b = rbd.ModelBuilder("probe")
    b.add_link("base")
    b.add_link("arm", mass=1.0, inertia=np.eye(3))
    b.add_joint("hinge", "revolute", "base", "arm", armature=1.0)
    model = b.build()
    return rbd.crba(model, np.zeros(1))[0, 0] == 2.0


@pytest.mark.skipif(not armature_applied(), reason="the algorithms do not apply model.armature in this build")
@pytest.mark.parametrize("name", sorted(MJCF_MODELS))
def test_armature_on_matches_mujoco(mujoco, backend, name):
    """With armature: mj_fullM, mj_rne plus armature * qacc (mj_rne leaves it out) and mj_forward."""
    mj_model = mujoco.MjModel.from_xml_string(MJCF_MODELS[name])
    for flag in PASSIVE_AND_CONSTRAINTS_OFF:
        mj_model.opt.disableflags |= int(getattr(mujoco.mjtDisableBit, flag))
    model = from_mujoco(mj_model)
    layout = MujocoLayout(model, mj_model)
    data = mujoco.MjData(mj_model)
    rng = np.random.default_rng([13, len(name)])
    q, v, a = random_state(model, rng)
    qpos, qvel, qacc = layout.to_peer(q, v, a)
    data.qpos[:], data.qvel[:] = qpos, qvel
    mujoco.mj_forward(mj_model, data)
    assert_close(rbd.crba(model, q), layout.matrix_from_peer(qpos, full_mass_matrix(mujoco, mj_model, data)), "mj_fullM")
    data.qacc[:] = qacc
    tau_mj = np.zeros(mj_model.nv)
    mujoco.mj_rne(mj_model, data, 1, tau_mj)
    assert_close(rbd.rnea(model, q, v, a), layout.tau_from_peer(qpos, tau_mj + mj_model.dof_armature * qacc), "mj_rne")
    tau = rng.normal(size=model.nv)
    data.qfrc_applied[:] = layout.tau_to_peer(q, tau)
    mujoco.mj_forward(mj_model, data)
    assert_close(rbd.aba(model, q, v, tau), layout.from_peer(qpos, qvel, data.qacc)[2], "mj_forward qacc")


@pytest.mark.skipif(not armature_applied(), reason="the algorithms do not apply model.armature in this build")
def test_armature_on_matches_pinocchio(pin, backend):
    rng = np.random.default_rng(17)
    pm = hand_built_pinocchio(pin, rng)
    pd = pm.createData()
    model = from_pinocchio(pm)
    layout = PinocchioLayout(model, pm)
    q, v, a = random_state(model, rng)
    q_pin, v_pin, a_pin = layout.to_peer(q, v, a)
    assert_close(rbd.crba(model, q), layout.matrix_from_peer(q_pin, pin_mass_matrix(pin, pm, pd, q_pin)), "crba")
    assert_close(rbd.rnea(model, q, v, a), layout.tau_from_peer(q_pin, pin.rnea(pm, pd, q_pin, v_pin, a_pin)), "rnea")


def test_load_mjcf_knows_a_urdf_and_its_entities_after_any_length_of_comments(mujoco, backend):
    """Who reads a file by its root element must read up to it: a URDF after 70 kB of
    comments is still a URDF (its fixed links kept as frames, as without them; MuJoCo's
    importer would fuse them away), and entities declared there are still refused."""
    text = open(robot_urdf_path("ur5")).read()
    body = text[text.index("?>") + 2:] if text.startswith("<?xml") else text
    padded = '<?xml version="1.0"?>\n<!--' + "x" * 70000 + "-->\n" + body
    assert rbd.load_mjcf(padded) == rbd.load_mjcf(text)
    with pytest.raises(rbd.URDFError, match="entity declarations"):
        rbd.load_mjcf("<!--" + "x" * 70000 + '-->\n<!DOCTYPE m [<!ENTITY a "aaa">]>'
                      '<mujoco model="&a;"><worldbody/></mujoco>')


def test_load_mjcf_refuses_a_device_and_reads_a_pipe(mujoco, tmp_path):
    with pytest.raises(rbd.URDFError, match="'/dev/zero' is a device, not a file"):
        rbd.load_mjcf("/dev/zero")
    if not hasattr(os, "mkfifo"):
        return
    fifo = tmp_path / "robot.xml"
    os.mkfifo(fifo)
    with pytest.raises(rbd.URDFError, match="is empty \\(a pipe that no program writes to\\)"):
        rbd.load_mjcf(fifo)
    keeper = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
    writer = os.open(fifo, os.O_WRONLY)
    os.write(writer, MJCF_MODELS["floating"].encode("utf-8"))
    os.close(writer)
    try:
        assert rbd.load_mjcf(fifo) == rbd.load_mjcf(MJCF_MODELS["floating"])
    finally:
        os.close(keeper)


@pytest.mark.parametrize("spoil, expected", [
    ("mass", "the inertia of the body of joint 'hinge': mass must be non-negative"),
    ("com", "the inertia of the body of joint 'hinge': com must contain only finite numbers"),
    ("universe", "the inertia of the universe: mass must be non-negative"),
    ("lowerPositionLimit", "joint 'hinge' has lowerPositionLimit \\[nan\\]"),
    ("velocityLimit", "joint 'hinge' has velocityLimit \\[nan\\]"),
    ("armature", "joint 'hinge' has armature \\[-1.0\\]"),
    ("jointPlacements", "joint 'hinge': placement must be a rigid transform"),
    ("frame", "frame 'tool': placement must contain only finite numbers"),
])
def test_from_pinocchio_names_the_joint_of_bad_data(pin, spoil, expected):
    pm = pin.Model()
    jid = pm.addJoint(0, pin.JointModelRX(), pin.SE3.Identity(), "hinge")
    pm.appendBodyToJoint(jid, pin.Inertia.FromSphere(1.0, 0.1), pin.SE3.Identity())
    if spoil in ("mass", "universe"):
        pm.inertias[1 if spoil == "mass" else 0] = pin.Inertia(-1.0, np.zeros(3), np.eye(3))
    elif spoil == "com":
        pm.inertias[1] = pin.Inertia(1.0, np.array([np.nan, 0.0, 0.0]), np.eye(3))
    elif spoil == "jointPlacements":
        pm.jointPlacements[1] = pin.SE3(1.01 * np.eye(3), np.zeros(3))
    elif spoil == "frame":
        pm.addFrame(pin.Frame("tool", jid, pin.SE3(np.eye(3), np.array([np.nan, 0.0, 0.0])), pin.FrameType.OP_FRAME),
                    False)  # (not its inertia into the body's: that would be NaN too)
    else:
        setattr(pm, spoil, np.array([-1.0 if spoil == "armature" else np.nan]))
    with pytest.raises(ValueError, match="pin_model: " + expected):
        from_pinocchio(pm)


def test_load_mjcf_bytes_that_cannot_be_xml_compressed_files_and_unencodable_text(mujoco, tmp_path):
    path = tmp_path / "floating.xml"
    path.write_text(MJCF_MODELS["floating"], "utf-8")
    with pytest.raises(rbd.URDFError, match="bytes given are not XML: bytes are read as a file's content"):
        rbd.load_mjcf(str(path).encode())  # (was: loaded as a path, where load_urdf reads content)
    squeezed = tmp_path / "floating.xml.gz"
    squeezed.write_bytes(gzip.compress(MJCF_MODELS["floating"].encode("utf-8")))
    for source in (squeezed, squeezed.read_bytes()):
        with pytest.raises(rbd.URDFError, match="gzip-compressed: decompress it first"):
            rbd.load_mjcf(source)
    wide = tmp_path / "wide.xml"
    wide.write_bytes(MJCF_MODELS["floating"].encode("utf-32"))
    with pytest.raises(rbd.URDFError, match="the file is UTF-32"):
        rbd.load_mjcf(wide)
    assert rbd.load_mjcf(wide.read_bytes()) == rbd.load_mjcf(MJCF_MODELS["floating"])
    for codec in ("utf-16-le", "utf-16-be", "utf-32-le", "utf-32-be"):  # without a byte-order mark
        assert rbd.load_mjcf(MJCF_MODELS["floating"].encode(codec)) == rbd.load_mjcf(MJCF_MODELS["floating"])
    for entry in os.scandir(os.fsencode(tmp_path)):  # a path object whose path is bytes: a path
        if entry.name == b"floating.xml":
            assert rbd.load_mjcf(entry) == rbd.load_mjcf(path)
    with pytest.raises(rbd.URDFError, match="a character UTF-8 cannot encode"):
        rbd.load_mjcf(MJCF_MODELS["floating"].replace("<mujoco", "<!-- \ud800 --><mujoco", 1))


def test_a_layout_warns_when_the_models_armature_or_gravity_differ(pin, mujoco):
    """A layout converts coordinates only: paired with a peer model whose armature or gravity
    was changed, the dynamics differ with nothing failing, so the layout says so (and is
    silent for a model built from the peer's)."""
    urdf = str(rbd.sample_model_path("quadruped"))
    robot = rbd.load_urdf(urdf, floating_base=True)
    pm = pin.buildModelFromUrdf(urdf, pin.JointModelFreeFlyer())
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        PinocchioLayout(robot, pm)
    armature = np.array(pm.armature)
    armature[6:9] = 0.02
    pm.armature = armature
    with pytest.warns(UserWarning, match="differ in the armature of joints 'FL_hip_abduction', 'FL_hip_flexion', "
                                         "'FL_knee': .*from_pinocchio"):
        PinocchioLayout(robot, pm)
    pm.gravity = pin.Motion(np.array([0.5, 0.0, -3.7]), np.zeros(3))
    with pytest.warns(UserWarning, match=r"differ in gravity \[0.0, 0.0, -9.81\] vs \[0.5, 0.0, -3.7\] and the armature"):
        PinocchioLayout(robot, pm)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        PinocchioLayout(from_pinocchio(pm), pm)
    mj_model = mujoco.MjModel.from_xml_string(MJCF_MODELS["floating"])
    model = from_mujoco(mj_model)
    mj_model.opt.disableflags |= mujoco.mjtDisableBit.mjDSBL_GRAVITY
    with pytest.warns(UserWarning, match="the MuJoCo model differ in gravity"):
        MujocoLayout(model, mj_model)
