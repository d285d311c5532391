"""Derived models: add_frame, add_payload, attach, lock_joints, and the inertia policy on them.

Oracles: Pinocchio's buildReducedModel and appendModel (joints matched by name),
models written by hand as one URDF, and the identity that a locked model's mass
matrix and inverse dynamics are the full model's rows and columns of the free
joints when the locked ones do not move.
"""
import warnings

import numpy as np
import pytest

import rbd
from models import random_model

from oracles.pinocchio_adapter import load_pair, pin


def pose(z=0.0, x=0.0, rz=0.0):
    c, s = np.cos(rz), np.sin(rz)
    return np.array([[c, -s, 0, x], [s, c, 0, 0], [0, 0, 1, z], [0, 0, 0, 1.0]])


def pin_in_rbd_order(pm, matrix, model):
    """A Pinocchio (nv, nv) matrix (upper triangle filled) in ``model``'s velocity order,
    joints matched by name (rbd has no continuous or free joints in these models)."""
    matrix = np.triu(matrix) + np.triu(matrix, 1).T
    perm = []
    for name in model.joint_names:
        joint = pm.joints[pm.getJointId(name)]
        perm += list(range(joint.idx_v, joint.idx_v + joint.nv))
    return matrix[np.ix_(perm, perm)]


def pin_q(pm, model, q):
    """rbd's q of revolute/prismatic joints in Pinocchio's layout."""
    out = pin.neutral(pm)
    for i, name in enumerate(model.joint_names):
        out[pm.joints[pm.getJointId(name)].idx_q] = q[model.q_idx[i]]
    return out


# ------------------------------------------------------------------------------------------
# lock_joints
# ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("floating", [False, True])
def test_locked_model_is_the_full_model_with_still_locked_joints(backend, floating):
    model = random_model(3, nlinks=10, floating_base=floating)
    rng = np.random.default_rng(5)
    q = rbd.random_configuration(model, rng)
    lock = [model.joint_names[i] for i in (2, 5, model.nbodies - 1)]
    reduced = rbd.lock_joints(model, lock, q)
    keep = [n for n in model.joint_names if n not in lock]
    assert reduced.joint_names == tuple(keep)
    vidx = np.concatenate([np.arange(model.joint_idx_v(n), model.joint_idx_v(n) + model.joint_nv[model.joint_id(n)])
                           for n in keep])
    qidx = np.concatenate([np.arange(model.joint_idx_q(n), model.joint_idx_q(n) + model.joint_nq[model.joint_id(n)])
                           for n in keep])
    v, a = np.zeros(model.nv), np.zeros(model.nv)
    v[vidx], a[vidx] = rng.normal(size=len(vidx)), rng.normal(size=len(vidx))
    np.testing.assert_allclose(rbd.crba(reduced, q[qidx]), rbd.crba(model, q)[np.ix_(vidx, vidx)], atol=1e-12)
    np.testing.assert_allclose(rbd.rnea(reduced, q[qidx], v[vidx], a[vidx]), rbd.rnea(model, q, v, a)[vidx],
                               atol=1e-10)
    # every frame is still there, where it was (the locked joints' frames as link frames)
    every = rbd.frame_placements(model, q)
    for name in model.link_frame_names + tuple(lock):
        np.testing.assert_allclose(rbd.frame_placement(reduced, q[qidx], name), every[model.frame_id(name)],
                                   atol=1e-12, err_msg=name)


def test_a_body_locked_to_the_world_is_mass_fixed_to_the_world(backend):
    """A body locked to the world joins model.world_inertia (about the world origin, left
    out of total_mass): its mass, and its first moment m c with c its centre of mass placed
    by the full model's frame_placement at q."""
    model = random_model(3, nlinks=6, floating_base=False)
    q = rbd.random_configuration(model, np.random.default_rng(8))
    root = next(i for i in range(model.nbodies) if model.parents[i] < 0)
    locked = rbd.lock_joints(model, [model.joint_names[root]], q)
    mass = model.inertias[root, 0]
    assert locked.world_inertia[0] == pytest.approx(model.world_inertia[0] + mass, rel=1e-14)
    assert locked.total_mass == pytest.approx(model.total_mass - mass, rel=1e-14)
    X = rbd.frame_placement(model, q, model.joint_frame(root))
    com = X[:3, :3] @ (model.inertias[root, 1:4] / mass) + X[:3, 3]
    np.testing.assert_allclose(locked.world_inertia[1:4] - model.world_inertia[1:4], mass * com, atol=1e-12)


def test_locked_talos_against_pinocchio(backend):
    pair = load_pair("talos")
    if pair is None or pin is None:
        pytest.skip("needs pinocchio and example-robot-data")
    model, pm = pair.model, pair.pin_model
    q = rbd.random_configuration(model, np.random.default_rng(8))
    lock = [n for n in model.joint_names if n.startswith(("arm_left", "gripper", "head"))]
    reduced = rbd.lock_joints(model, lock, q)
    theirs = pin.buildReducedModel(pm, [pm.getJointId(n) for n in lock], pair.q_to_pin(q))
    keep = list(reduced.joint_names)
    qr = np.concatenate([q[model.joint_idx_q(n):model.joint_idx_q(n) + model.joint_nq[model.joint_id(n)]]
                         for n in keep])
    Q = pin.neutral(theirs)
    for i, name in enumerate(keep):
        joint = theirs.joints[theirs.getJointId(name)]
        seg = qr[reduced.q_idx[i]:reduced.q_idx[i] + reduced.joint_nq[i]]
        Q[joint.idx_q:joint.idx_q + joint.nq] = seg[[0, 1, 2, 4, 5, 6, 3]] if len(seg) == 7 else seg
    M = pin_in_rbd_order(theirs, pin.crba(theirs, theirs.createData(), Q), reduced)
    ours = rbd.crba(reduced, qr)
    np.testing.assert_allclose(ours, M, rtol=0, atol=1e-10 * np.abs(M).max())


def test_lock_joints_errors(backend):
    model = random_model(1, nlinks=4, floating_base=False)
    q = rbd.neutral(model)
    with pytest.raises(ValueError, match="unknown joint"):
        rbd.lock_joints(model, ["nope"], q)
    with pytest.raises(ValueError, match="q"):
        rbd.lock_joints(model, [model.joint_names[0]], np.zeros(model.nq + 1))
    everything = rbd.lock_joints(model, model.joint_names, q)  # a model without joints is still a model
    assert everything.nv == 0 and everything.nframes == model.nframes


# ------------------------------------------------------------------------------------------
# attach and add_frame
# ------------------------------------------------------------------------------------------
ARM = """<robot name="arm">
  <link name="base"/>
  <link name="upper"><inertial><origin xyz="0 0 0.2"/><mass value="2"/>
    <inertia ixx="0.03" ixy="0" ixz="0" iyy="0.03" iyz="0" izz="0.004"/></inertial></link>
  <link name="fore"><inertial><origin xyz="0.1 0 0.15"/><mass value="1.2"/>
    <inertia ixx="0.01" ixy="0.001" ixz="0" iyy="0.012" iyz="0" izz="0.003"/></inertial></link>
  <link name="flange"/>
  <joint name="shoulder" type="revolute"><parent link="base"/><child link="upper"/>
    <axis xyz="0 1 0"/><limit lower="-2" upper="2" effort="10" velocity="2"/></joint>
  <joint name="elbow" type="revolute"><parent link="upper"/><child link="fore"/>
    <origin xyz="0 0 0.4" rpy="0.3 0 0"/><axis xyz="1 0 0"/><limit lower="-2" upper="2" effort="10" velocity="2"/></joint>
  <joint name="flange_weld" type="fixed"><parent link="fore"/><child link="flange"/><origin xyz="0 0 0.3"/></joint>
</robot>"""

GRIPPER_LINKS = """
  <link name="g_palm"><inertial><origin xyz="0 0 0.03"/><mass value="0.5"/>
    <inertia ixx="0.001" ixy="0" ixz="0" iyy="0.001" iyz="0" izz="0.0005"/></inertial></link>
  <link name="g_finger"><inertial><origin xyz="0 0.01 0.02"/><mass value="0.1"/>
    <inertia ixx="0.0001" ixy="0" ixz="0" iyy="0.0001" iyz="0" izz="0.00005"/></inertial></link>
  <joint name="g_wrist" type="revolute"><parent link="g_mount"/><child link="g_palm"/>
    <origin xyz="0 0 0.02"/><axis xyz="0 0 1"/><limit lower="-3" upper="3" effort="5" velocity="3"/></joint>
  <joint name="g_slide" type="prismatic"><parent link="g_palm"/><child link="g_finger"/>
    <origin xyz="0 0 0.06"/><axis xyz="0 1 0"/><limit lower="0" upper="0.04" effort="5" velocity="1"/></joint>
"""
# the gripper's root link has mass: fixed to its world alone, fixed to the flange once attached
G_MOUNT = """<link name="g_mount"><inertial><origin xyz="0.01 0 0.01"/><mass value="0.3"/>
    <inertia ixx="0.0002" ixy="0" ixz="0" iyy="0.0003" iyz="0" izz="0.0002"/></inertial></link>"""
GRIPPER = '<robot name="gripper">' + G_MOUNT + GRIPPER_LINKS + "</robot>"
# the same arm and gripper written by hand as one robot: the mount fixed at the flange, 5 cm up
# and turned by 0.5 rad about z
MERGED = ARM.replace("</robot>", G_MOUNT + """
  <joint name="g_mount_weld" type="fixed"><parent link="flange"/><child link="g_mount"/>
    <origin xyz="0 0 0.05" rpy="0 0 0.5"/></joint>""" + GRIPPER_LINKS + "</robot>")


def test_attach_equals_the_hand_merged_robot(backend):
    arm, gripper = rbd.load_urdf(ARM), rbd.load_urdf(GRIPPER)
    assert gripper.world_inertia[0] == 0.3 and gripper.total_mass == pytest.approx(0.6)  # the mount: fixed
    composed = rbd.attach(arm, gripper, "flange", pose(z=0.05, rz=0.5))
    merged = rbd.load_urdf(MERGED)
    assert composed.joint_names == merged.joint_names
    q = rbd.random_configuration(merged, np.random.default_rng(2))
    v, a = np.array([0.3, -0.2, 0.5, 0.1]), np.array([1.0, 0.5, -0.3, 0.2])
    np.testing.assert_allclose(rbd.crba(composed, q), rbd.crba(merged, q), atol=1e-14)
    np.testing.assert_allclose(rbd.rnea(composed, q, v, a), rbd.rnea(merged, q, v, a), atol=1e-13)
    for name in ("g_mount", "g_palm", "g_finger", "flange"):
        np.testing.assert_allclose(rbd.frame_placement(composed, q, name), rbd.frame_placement(merged, q, name),
                                   atol=1e-14, err_msg=name)


def test_attach_against_pinocchio_append_model(backend):
    if pin is None:
        pytest.skip("pinocchio is not installed")
    arm, gripper = rbd.load_urdf(ARM), rbd.load_urdf(GRIPPER)
    composed = rbd.attach(arm, gripper, "flange", pose(z=0.05, rz=0.5))
    pa, pg = pin.buildModelFromXML(ARM), pin.buildModelFromXML(GRIPPER)
    theirs = pin.appendModel(pa, pg, pa.getFrameId("flange"), pin.SE3(pose(z=0.05, rz=0.5)))
    q = rbd.random_configuration(composed, np.random.default_rng(4))
    M = pin_in_rbd_order(theirs, pin.crba(theirs, theirs.createData(), pin_q(theirs, composed, q)), composed)
    np.testing.assert_allclose(rbd.crba(composed, q), M, atol=1e-12)
    g = pin.computeGeneralizedGravity(theirs, theirs.createData(), pin_q(theirs, composed, q))
    np.testing.assert_allclose(rbd.gravity(composed, q), pin_in_rbd_order(theirs, np.diag(g), composed).diagonal(),
                               atol=1e-12)


def test_attach_names_stay_unique(backend):
    arm = rbd.load_urdf(ARM)
    with pytest.raises(ValueError, match="several frames named 'base', 'elbow'"):
        rbd.attach(arm, arm, "flange")
    # a link of one named like a joint of the other (and back) would take over its frame
    tool = rbd.ModelBuilder("tool")
    tool.add_link("elbow")
    tool.add_link("finger", mass=0.1, inertia=np.eye(3) * 1e-5)
    tool.add_joint("flange", "revolute", parent="elbow", child="finger")
    with pytest.raises(ValueError, match="several frames named 'elbow', 'flange' \\(use a prefix\\)"):
        rbd.attach(arm, tool.build(), "flange")
    assert rbd.attach(arm, tool.build(), "flange", prefix="tool_").frame_names.count("elbow") == 1
    twice = rbd.attach(arm, arm, "flange", prefix="second_")
    assert twice.nv == 4 and "second_elbow" in twice.joint_names and "second_flange" in twice.frame_names
    with pytest.raises(ValueError, match="unknown frame"):
        rbd.attach(arm, arm, "nowhere", prefix="x_")
    with pytest.raises(ValueError, match="rigid transform"):
        rbd.attach(arm, arm, "flange", np.diag([2.0, 1, 1, 1]), prefix="x_")


def test_add_frame_and_a_payload_on_it_equal_a_urdf_with_the_extra_link(backend):
    arm = rbd.load_urdf(ARM)
    tcp = rbd.add_frame(arm, "tcp", "flange", pose(z=0.1, x=0.02))
    loaded = rbd.add_payload(tcp, "tcp", 0.4, [0.0, 0.0, 0.03], np.diag([1e-3, 1e-3, 5e-4]))
    written = rbd.load_urdf(ARM.replace("</robot>", """  <link name="tcp"><inertial><origin xyz="0 0 0.03"/>
    <mass value="0.4"/><inertia ixx="1e-3" ixy="0" ixz="0" iyy="1e-3" iyz="0" izz="5e-4"/></inertial></link>
  <joint name="tcp_weld" type="fixed"><parent link="flange"/><child link="tcp"/><origin xyz="0.02 0 0.1"/></joint>
</robot>"""))
    q = np.array([0.4, -0.7])
    np.testing.assert_allclose(rbd.frame_placement(tcp, q, "tcp"), rbd.frame_placement(written, q, "tcp"), atol=1e-15)
    np.testing.assert_allclose(rbd.crba(loaded, q), rbd.crba(written, q), atol=1e-14)
    with pytest.raises(ValueError, match="already has a frame"):
        rbd.add_frame(arm, "flange", "base", np.eye(4))
    with pytest.raises(ValueError, match="unknown frame"):
        rbd.add_frame(arm, "x", "nowhere", np.eye(4))
    # a payload on a joint frame goes to that joint's body
    on_joint = rbd.add_payload(arm, arm.joint_frame("elbow"), 0.4, [0, 0, 0], np.eye(3) * 1e-3)
    assert on_joint.inertias[1, 0] == pytest.approx(arm.inertias[1, 0] + 0.4)


@pytest.mark.parametrize("couplings, locked, also", [
    ([("joint7", "joint6", 2.0, 0.1)], ["joint7"], ["joint6"]),                      # the mimic joint
    ([("joint3", "joint2", 1.0, 0.0), ("joint4", "joint3", 0.5, 0.0)], ["joint2"], ["joint3", "joint4"]),  # a chain's head
    ([("joint3", "joint2", 1.0, 0.0), ("joint4", "joint3", 0.5, 0.0)], ["joint3"], ["joint2", "joint4"]),  # its middle
])
def test_locking_a_coupled_joint_locks_its_coupling(backend, couplings, locked, also):
    """q_mimic = m q_primary + o: fixing one fixes the other, so the reduced model is the
    uncoupled arm with every joint of the coupling locked at the coupled values."""
    arm = rbd.sample_model("arm7")
    coupled = rbd.couple_joints(arm, couplings)
    q = rbd.random_configuration(coupled, np.random.default_rng(3))
    reduced = rbd.lock_joints(coupled, locked, q)
    q_arm = np.array([q[coupled.joint_idx_q(n)] for n in arm.joint_names])  # a mimic joint's entry: its primary's
    for joint, primary, multiplier, offset in couplings:  # (in order: a chain's primaries come first)
        q_arm[arm.joint_id(joint)] = multiplier * q_arm[arm.joint_id(primary)] + offset
    expected = rbd.lock_joints(arm, locked + also, q_arm)
    assert reduced.joint_names == expected.joint_names and reduced.mimic == ()
    qr = rbd.random_configuration(reduced, np.random.default_rng(4))
    v = np.random.default_rng(5).normal(size=reduced.nv)
    np.testing.assert_allclose(rbd.crba(reduced, qr), rbd.crba(expected, qr), atol=1e-12)
    np.testing.assert_allclose(rbd.rnea(reduced, qr, v, v), rbd.rnea(expected, qr, v, v), atol=1e-12)


# ------------------------------------------------------------------------------------------
# The inertia policy on what a derived model adds (payloads, attached models, merged bodies)
# ------------------------------------------------------------------------------------------
def with_fixed_link(urdf, name, parent, mass, com, inertia, xyz="0 0 0"):
    """``urdf`` with a link ``name`` welded to ``parent``: the oracle for a payload."""
    I = np.asarray(inertia, dtype=float)
    return urdf.replace("</robot>", """  <link name="%s"><inertial><origin xyz="%r %r %r"/><mass value="%r"/>
    <inertia ixx="%r" ixy="%r" ixz="%r" iyy="%r" iyz="%r" izz="%r"/></inertial></link>
  <joint name="%s_weld" type="fixed"><parent link="%s"/><child link="%s"/><origin xyz="%s"/></joint>
</robot>""" % ((name, *map(float, com), float(mass))
               + tuple(float(I[i, j]) for i, j in ((0, 0), (0, 1), (0, 2), (1, 1), (1, 2), (2, 2)))
               + (name, parent, name, xyz)))


def policy_outcome(call):
    """'silent', 'warns' or 'raises' (a ValueError) for ``call()``, and the messages."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            call()
        except ValueError as exc:
            return "raises", [str(exc)]
    return ("warns" if caught else "silent"), [str(w.message) for w in caught]


# principal moments 1e-3, 1e-3, 5e-3: 1 + 1 < 5, no mass distribution has them (2.5x over)
BAD_PAYLOAD = (1.0, [0.01, 0.0, 0.04], np.diag([1e-3, 1e-3, 5e-3]))


def test_an_impossible_payload_warns_or_raises_as_the_same_fixed_link_of_a_urdf(backend):
    arm = rbd.load_urdf(ARM)
    mass, com, inertia = BAD_PAYLOAD
    written = with_fixed_link(ARM, "payload", "flange", mass, com, inertia)
    # the oracle: load_urdf warns by default and raises with strict=True for this link
    assert policy_outcome(lambda: rbd.load_urdf(written))[0] == "warns"
    with pytest.raises(rbd.URDFError, match="payload"):
        rbd.load_urdf(written, strict=True)
    with pytest.warns(UserWarning, match="inconsistent inertia.*payload on 'flange'") as caught:
        loaded = rbd.add_payload(arm, "flange", mass, com, inertia)
    assert len(caught) == 1  # one warning for the model
    # the merged body alone passes the policy: the carrier's inertia hides the payload
    assert policy_outcome(lambda: arm.replace(inertias=loaded.inertias, strict=True)) == ("silent", [])
    with pytest.raises(ValueError, match="payload on 'flange'.*principal moments"):
        rbd.add_payload(arm, "flange", mass, com, inertia, strict=True)
    # loaded as given: the same dynamics as the URDF with the payload as a fixed link
    with pytest.warns(UserWarning):
        oracle = rbd.load_urdf(written)
    rng = np.random.default_rng(8)
    for _ in range(3):
        q = rbd.random_configuration(arm, rng)
        v, a = rng.normal(size=arm.nv), rng.normal(size=arm.nv)
        np.testing.assert_allclose(rbd.crba(loaded, q), rbd.crba(oracle, q), rtol=1e-13, atol=1e-14)
        np.testing.assert_allclose(rbd.rnea(loaded, q, v, a), rbd.rnea(oracle, q, v, a), rtol=1e-13, atol=1e-13)
        np.testing.assert_allclose(rbd.aba(loaded, q, v, rbd.rnea(oracle, q, v, a)), a, rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("inertia, expected", [
    (np.diag([1e-3, 1e-3, 5e-4]), "silent"),                              # a real body
    (np.zeros((3, 3)), "silent"),                                         # a point mass
    (np.diag([1e-3, 1e-3, 2e-3 * (1 + 1e-12)]), "silent"),                # a thin disc, rounded
    (np.diag([0.0, 0.0, 1e-20]), "silent"),                               # a point mass with round-off
    (np.diag([1e-6, 1e-6, 3e-6]), "raises"),                              # small, but 1.5x over
    (np.diag([1e-3, 1e-3, -1e-4]), "raises"),                             # a clearly negative moment
])
def test_payload_policy_is_the_urdf_policy_at_the_robots_scale(inertia, expected):
    """With strict=True: an add_payload and the same payload as a URDF fixed link either
    both load or both refuse; round-off judged against the arm (0.03 kg m^2) passes."""
    arm = rbd.load_urdf(ARM)
    com = [0.0, 0.02, 0.05]
    ours = policy_outcome(lambda: rbd.add_payload(arm, "flange", 0.7, com, inertia, strict=True))
    urdf = policy_outcome(lambda: rbd.load_urdf(with_fixed_link(ARM, "payload", "flange", 0.7, com, inertia),
                                                strict=True))
    assert ours[0] == urdf[0] == expected, (ours, urdf)
    if expected == "raises":
        assert "payload on 'flange'" in ours[1][0]
    else:  # and silent by default too
        assert policy_outcome(lambda: rbd.add_payload(arm, "flange", 0.7, com, inertia)) == ("silent", [])


def test_payload_strict_checks_the_merged_body_too_and_is_a_flag():
    arm = rbd.load_urdf(ARM)
    with pytest.raises(TypeError, match="strict must be True or False"):
        rbd.add_payload(arm, "flange", 0.5, [0, 0, 0], np.eye(3) * 1e-3, strict="yes")
    # a carrier already inconsistent (loaded with a warning): strict refuses the result, and the
    # default names it and the impossible payload in one warning
    bad_fore = ARM.replace('ixx="0.01" ixy="0.001" ixz="0" iyy="0.012" iyz="0" izz="0.003"',
                           'ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.05"')
    with pytest.warns(UserWarning, match="'fore'"):
        carrier = rbd.load_urdf(bad_fore)
    with pytest.raises(ValueError, match="fore \\+ payload on 'flange'"):  # (the carrier with the payload)
        rbd.add_payload(carrier, "flange", 0.5, [0, 0, 0], np.eye(3) * 1e-3, strict=True)
    # (on the other body: on 'fore' this payload's mass would make the merged body consistent)
    outcome, messages = policy_outcome(lambda: rbd.add_payload(carrier, "upper", *BAD_PAYLOAD))
    assert outcome == "warns" and len(messages) == 1
    assert "2 links" in messages[0] and "'fore'" in messages[0] and "payload on 'upper'" in messages[0]


def test_attach_and_lock_joints_take_strict():
    arm = rbd.load_urdf(ARM)
    bad_gripper = GRIPPER.replace('ixx="0.0001" ixy="0" ixz="0" iyy="0.0001" iyz="0" izz="0.00005"',
                                  'ixx="0.0001" ixy="0" ixz="0" iyy="0.0001" iyz="0" izz="0.0005"')
    assert policy_outcome(lambda: rbd.load_urdf(bad_gripper))[0] == "warns"
    with pytest.warns(UserWarning):
        gripper = rbd.load_urdf(bad_gripper)
    outcome, messages = policy_outcome(lambda: rbd.attach(arm, gripper, "flange", prefix="x_"))
    assert outcome == "warns" and "'x_g_finger'" in messages[0]
    with pytest.raises(ValueError, match="'x_g_finger'"):
        rbd.attach(arm, gripper, "flange", prefix="x_", strict=True)
    # a locked joint's body merges, the finger stays a body: the reduced model is judged anew
    q = np.zeros(gripper.nq)
    outcome, messages = policy_outcome(lambda: rbd.lock_joints(gripper, "g_wrist", q))
    assert outcome == "warns" and "'g_finger'" in messages[0]
    with pytest.raises(ValueError, match="'g_finger'"):
        rbd.lock_joints(gripper, "g_wrist", q, strict=True)
    with pytest.raises(TypeError, match="strict must be True or False"):
        rbd.lock_joints(arm, "elbow", np.zeros(arm.nq), strict=1)
    with pytest.raises(TypeError, match="strict must be True or False"):
        rbd.attach(arm, arm, "flange", prefix="x_", strict=None)


def test_add_frame_refuses_a_name_that_is_not_a_string():
    model = rbd.sample_model("arm7")
    with pytest.raises(TypeError, match="frame name must be a string, got int"):
        rbd.add_frame(model, 5, "tool0", np.eye(4))
    with pytest.raises(ValueError, match="non-empty"):
        rbd.add_frame(model, "", "tool0", np.eye(4))
    assert "tip" in rbd.add_frame(model, "tip", "tool0", np.eye(4)).frame_names


def test_an_edit_too_large_for_float64_names_what_overflows():
    """A payload of 1e300 kg 1e10 m from its frame, or a model attached 1e200 m away: the
    error names the payload or the attachment (it was a bare overflow from the spatial
    algebra), and the model given is unchanged."""
    model = rbd.sample_model("arm7")
    with pytest.raises(ValueError, match="the payload on 'tool0': its mass, com and inertia overflow"):
        rbd.add_payload(model, "tool0", 1e300, [1e10, 0, 0], np.eye(3))
    far = np.eye(4)
    far[0, 3] = 1e200
    assert model.world_inertia[0] > 0  # (its base link's mass, mounted with it)
    with pytest.raises(ValueError, match="attached model fixed to its world overflow float64 once mounted on 'tool0'"):
        rbd.attach(model, rbd.sample_model("arm7"), "tool0", far, prefix="b_")
    assert model == rbd.sample_model("arm7")
