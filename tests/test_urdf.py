"""The URDF loader, tested independently of its implementation.

Every expected value is derived here by hand (rotation matrices written out
from sines and cosines, the parallel-axis theorem, a pendulum's mass matrix
and gravity torque, the spatial inertia of a free body) or comes from
Pinocchio loading the same file.  Each malformed or impossible file has its
own test, and the message must name the offending element.
"""
import importlib.util
import math
import warnings

import numpy as np
import pytest

import rbd
from oracles.textbook import Rx, Ry, Rz, pose, skew

G = 9.81


# ------------------------------------------------------------------------------------------
# Hand-built rotations and small URDF writers
# ------------------------------------------------------------------------------------------
def parallel_axis(mass, I_com, d):
    """Rotational inertia about a point at -d from the com (d = com - point)."""
    d = np.asarray(d, float)
    return I_com + mass * (d @ d * np.eye(3) - np.outer(d, d))


def nums(v):
    return " ".join(repr(float(x)) for x in v)


def link(name, mass=None, com=(0, 0, 0), rpy=(0, 0, 0), I=(1e-3, 1e-3, 1e-3, 0, 0, 0)):
    """A <link>; ``I`` is (ixx, iyy, izz, ixy, ixz, iyz) in the inertial frame."""
    if mass is None:
        return '<link name="%s"/>' % name
    ixx, iyy, izz, ixy, ixz, iyz = I
    return ('<link name="%s"><inertial><origin xyz="%s" rpy="%s"/><mass value="%r"/>'
            '<inertia ixx="%r" ixy="%r" ixz="%r" iyy="%r" iyz="%r" izz="%r"/></inertial></link>'
            % (name, nums(com), nums(rpy), mass, ixx, ixy, ixz, iyy, iyz, izz))


def joint(name, kind, parent, child, xyz=(0, 0, 0), rpy=(0, 0, 0), axis=None, extra=""):
    axis_xml = "" if axis is None else '<axis xyz="%s"/>' % nums(axis)
    return ('<joint name="%s" type="%s"><parent link="%s"/><child link="%s"/>'
            '<origin xyz="%s" rpy="%s"/>%s%s</joint>'
            % (name, kind, parent, child, nums(xyz), nums(rpy), axis_xml, extra))


def robot(*parts, name="test"):
    head = '<robot name="%s">' % name if name is not None else "<robot>"
    return '<?xml version="1.0"?>\n' + head + "".join(parts) + "</robot>"


def placement(model, q, frame):
    return np.asarray(rbd.frame_placement(model, np.asarray(q, float), frame))


# ------------------------------------------------------------------------------------------
# Origins: xyz and fixed-axis roll-pitch-yaw
# ------------------------------------------------------------------------------------------
def test_joint_origin_rpy_is_fixed_axis_roll_pitch_yaw(backend):
    roll, pitch, yaw = 0.3, -0.5, 1.1
    xyz = (0.1, -0.2, 0.3)
    model = rbd.load_urdf(robot(link("base"), link("arm", 1.0),
                                joint("hinge", "revolute", "base", "arm", xyz, (roll, pitch, yaw), axis=(0, 0, 1))))
    origin = pose(Rz(yaw) @ Ry(pitch) @ Rx(roll), xyz)
    # The other composition order gives a different matrix for these angles,
    # so the test tells the URDF convention apart from the moving-axis one.
    assert not np.allclose(origin[:3, :3], Rx(roll) @ Ry(pitch) @ Rz(yaw), atol=1e-3)
    np.testing.assert_allclose(placement(model, [0.0], "arm"), origin, atol=1e-14)
    for theta in (0.7, -2.0):
        np.testing.assert_allclose(placement(model, [theta], "arm"), origin @ pose(Rz(theta)), atol=1e-14)
    np.testing.assert_allclose(placement(model, [0.7], "base"), np.eye(4), atol=0)


def test_chain_of_origins_composes(backend):
    model = rbd.load_urdf(robot(
        link("a"), link("b", 1.0), link("c", 1.0),
        joint("j1", "revolute", "a", "b", (0, 0, 0.5), (0.2, 0, 0), axis=(0, 1, 0)),
        joint("j2", "revolute", "b", "c", (0.3, 0, 0), (0, 0, -0.4), axis=(1, 0, 0))))
    q = [0.9, -1.3]
    expected_b = pose(Rx(0.2), (0, 0, 0.5)) @ pose(Ry(q[0]))
    expected_c = expected_b @ pose(Rz(-0.4), (0.3, 0, 0)) @ pose(Rx(q[1]))
    np.testing.assert_allclose(placement(model, q, "b"), expected_b, atol=1e-14)
    np.testing.assert_allclose(placement(model, q, "c"), expected_c, atol=1e-14)


def test_unaligned_and_unnormalized_axis_is_normalized(backend):
    n = np.array([1.0, 2.0, 2.0]) / 3.0
    model = rbd.load_urdf(robot(link("a"), link("b", 1.0), joint("j", "revolute", "a", "b", axis=3 * n)))
    theta = 0.8
    # Rodrigues' formula about the unit axis n.
    K = skew(n)
    R = np.eye(3) + math.sin(theta) * K + (1 - math.cos(theta)) * K @ K
    np.testing.assert_allclose(placement(model, [theta], "b"), pose(R), atol=1e-14)


def test_default_axis_is_x(backend):
    model = rbd.load_urdf(robot(link("a"), link("b", 1.0), joint("j", "revolute", "a", "b")))
    np.testing.assert_allclose(placement(model, [0.4], "b"), pose(Rx(0.4)), atol=1e-14)


def test_prismatic_joint_translates_along_its_axis(backend):
    m = 2.5
    model = rbd.load_urdf(robot(link("a"), link("slider", m, com=(0.1, 0.2, 0.3)),
                                joint("p", "prismatic", "a", "slider", (1, 0, 0), (0, 0, math.pi / 2),
                                      axis=(0, 2, 0), extra='<limit lower="-0.5" upper="0.5" effort="1" velocity="1"/>')))
    assert (model.nq, model.nv) == (1, 1)
    # The joint's y axis is the world's -x after the 90 degree yaw.
    np.testing.assert_allclose(placement(model, [0.25], "slider"), pose(Rz(math.pi / 2), (1 - 0.25, 0, 0)),
                               atol=1e-14)
    # A translating body's generalized inertia is its mass; gravity is orthogonal to the motion.
    np.testing.assert_allclose(rbd.crba(model, np.array([0.25])), [[m]], rtol=1e-14)
    np.testing.assert_allclose(rbd.gravity(model, np.array([0.25])), [0.0], atol=1e-14)
    np.testing.assert_allclose(model.lower_limits, [-0.5])
    np.testing.assert_allclose(model.upper_limits, [0.5])


# ------------------------------------------------------------------------------------------
# Inertias: the 1-DoF pendulum derived by hand
# ------------------------------------------------------------------------------------------
PENDULUM_MASS = 1.7
PENDULUM_COM = np.array([0.0, 0.3, -0.4])
PENDULUM_I = (0.02, 0.05, 0.03)  # principal moments in the inertial frame (yawed by 0.6)


def pendulum(joint_rpy=(0.0, 0.0, 0.0), kind="revolute"):
    Ia, Ib, Ic = PENDULUM_I
    return robot(link("base"),
                 link("bob", PENDULUM_MASS, com=PENDULUM_COM, rpy=(0, 0, 0.6), I=(Ia, Ib, Ic, 0, 0, 0)),
                 joint("hinge", kind, "base", "bob", (0.0, 0.0, 1.0), joint_rpy, axis=(1, 0, 0)))


def test_pendulum_mass_matrix_is_axis_inertia_plus_m_d_squared(backend):
    model = rbd.load_urdf(pendulum())
    Ia, Ib, _ = PENDULUM_I
    # The x axis seen in the inertial frame (yawed by 0.6) is (cos 0.6, -sin 0.6, 0).
    I_axis = Ia * math.cos(0.6) ** 2 + Ib * math.sin(0.6) ** 2
    d2 = PENDULUM_COM[1] ** 2 + PENDULUM_COM[2] ** 2  # squared distance of the com from the x axis
    expected = I_axis + PENDULUM_MASS * d2
    for theta in (0.0, 0.9, -2.5):
        np.testing.assert_allclose(rbd.crba(model, np.array([theta])), [[expected]], rtol=1e-13)


def test_pendulum_gravity_torque(backend):
    model = rbd.load_urdf(pendulum())
    _, cy, cz = PENDULUM_COM
    for theta in (0.0, 0.9, -2.5):
        # V = m g z_com with z_com = 1 + sin(t) cy + cos(t) cz; the torque is dV/dt.
        expected = PENDULUM_MASS * G * (math.cos(theta) * cy - math.sin(theta) * cz)
        np.testing.assert_allclose(rbd.gravity(model, np.array([theta])), [expected], rtol=1e-13, atol=1e-14)
        np.testing.assert_allclose(rbd.rnea(model, np.array([theta]), np.zeros(1), np.zeros(1)), [expected],
                                   rtol=1e-13, atol=1e-14)


def test_pendulum_with_tilted_joint_origin(backend):
    # Tilting the joint frame by roll about its own (x) axis moves nothing but
    # the zero of the angle: M is unchanged and g(theta) = g_untilted(theta + roll).
    untilted = rbd.load_urdf(pendulum())
    tilted = rbd.load_urdf(pendulum(joint_rpy=(0.5, 0.0, 0.0)))
    for theta in (0.0, 1.1):
        np.testing.assert_allclose(rbd.crba(tilted, np.array([theta])), rbd.crba(untilted, np.array([theta])),
                                   rtol=1e-13)
        _, cy, cz = PENDULUM_COM
        t = theta + 0.5
        expected = PENDULUM_MASS * G * (math.cos(t) * cy - math.sin(t) * cz)
        np.testing.assert_allclose(rbd.gravity(tilted, np.array([theta])), [expected], rtol=1e-13)


def test_continuous_joint_is_an_unbounded_revolute_joint(backend):
    model = rbd.load_urdf(pendulum(kind="continuous").replace(
        "</joint>", '<limit effort="10" velocity="3"/></joint>'))
    assert (model.nq, model.nv) == (1, 1)
    assert model.lower_limits[0] == -np.inf and model.upper_limits[0] == np.inf
    np.testing.assert_allclose(model.effort_limits, [10.0])
    np.testing.assert_allclose(model.velocity_limits, [3.0])
    np.testing.assert_allclose(placement(model, [4.0], "bob"), pose(np.eye(3), (0, 0, 1)) @ pose(Rx(4.0)),
                               atol=1e-14)
    revolute = rbd.load_urdf(pendulum())
    np.testing.assert_allclose(rbd.crba(model, np.array([4.0])), rbd.crba(revolute, np.array([4.0])), rtol=1e-14)


def test_missing_inertial_is_massless(backend):
    # A massless second link adds nothing: its joint feels no gravity torque and
    # the first joint feels exactly the hand-derived pendulum torque.
    xml = pendulum().replace("</robot>", link("ghost") + joint("j2", "revolute", "bob", "ghost", (0, 0.5, -0.5),
                                                               axis=(0, 0, 1)) + "</robot>")
    model = rbd.load_urdf(xml)
    assert model.nv == 2
    assert model.total_mass == pytest.approx(PENDULUM_MASS, rel=1e-15)
    _, cy, cz = PENDULUM_COM
    for q in ([0.3, 1.2], [-1.0, -0.4]):
        expected = PENDULUM_MASS * G * (math.cos(q[0]) * cy - math.sin(q[0]) * cz)
        np.testing.assert_allclose(rbd.gravity(model, np.array(q)), [expected, 0.0], rtol=1e-13, atol=1e-14)
        M = rbd.crba(model, np.array(q))
        np.testing.assert_allclose(M[1], [0.0, 0.0], atol=1e-15)


# ------------------------------------------------------------------------------------------
# Fixed joints: merged inertias (parallel-axis theorem) and kept frames
# ------------------------------------------------------------------------------------------
FIXED_ROBOT = dict(
    m1=2.0, c1=np.array([0.1, -0.05, 0.2]), rpy1=(0.3, 0.0, 0.0), I1=(0.03, 0.04, 0.05, 0.0, 0.0, 0.0),
    m2=0.8, c2=np.array([0.0, 0.1, 0.05]), rpy2=(0.0, 0.4, 0.2), I2=(0.01, 0.012, 0.015, 0.001, 0.0, -0.002),
    fixed_xyz=np.array([0.2, 0.1, -0.3]), fixed_rpy=(0.1, -0.2, 0.7),
)


def inertia_from_tuple(I):
    ixx, iyy, izz, ixy, ixz, iyz = I
    return np.array([[ixx, ixy, ixz], [ixy, iyy, iyz], [ixz, iyz, izz]])


def merged_body_inertia():
    """(mass, com, rotational inertia about the body ORIGIN) of body + fixed link, by hand."""
    r = FIXED_ROBOT
    R1 = Rz(r["rpy1"][2]) @ Ry(r["rpy1"][1]) @ Rx(r["rpy1"][0])
    R2 = Rz(r["rpy2"][2]) @ Ry(r["rpy2"][1]) @ Rx(r["rpy2"][0])
    Rf = Rz(r["fixed_rpy"][2]) @ Ry(r["fixed_rpy"][1]) @ Rx(r["fixed_rpy"][0])
    I1 = R1 @ inertia_from_tuple(r["I1"]) @ R1.T                 # about com1, body axes
    I2 = Rf @ R2 @ inertia_from_tuple(r["I2"]) @ R2.T @ Rf.T      # about com2, body axes
    c2 = r["fixed_xyz"] + Rf @ r["c2"]                            # com2 in body coordinates
    mass = r["m1"] + r["m2"]
    com = (r["m1"] * r["c1"] + r["m2"] * c2) / mass
    I_origin = parallel_axis(r["m1"], I1, r["c1"]) + parallel_axis(r["m2"], I2, c2)
    return mass, com, I_origin


def fixed_robot_xml():
    r = FIXED_ROBOT
    return robot(link("base", r["m1"], r["c1"], r["rpy1"], r["I1"]),
                 link("tool", r["m2"], r["c2"], r["rpy2"], r["I2"]),
                 joint("weld", "fixed", "base", "tool", r["fixed_xyz"], r["fixed_rpy"]))


def test_fixed_link_inertia_is_merged_by_parallel_axis_theorem(backend):
    model = rbd.load_urdf(fixed_robot_xml(), floating_base=True)
    assert model.nbodies == 1 and list(model.joint_names) == ["root_joint"]
    mass, com, I_origin = merged_body_inertia()
    # The free flyer's mass matrix is the body's spatial inertia at its origin,
    # in body axes, linear first: [[m E, -m [c]x], [m [c]x, I_O]] (any configuration).
    expected = np.block([[mass * np.eye(3), -mass * skew(com)], [mass * skew(com), I_origin]])
    rng = np.random.default_rng(1)
    for q in (rbd.neutral(model), rbd.random_configuration(model, rng)):
        np.testing.assert_allclose(rbd.crba(model, np.asarray(q, float)), expected, rtol=1e-13, atol=1e-15)
    assert model.total_mass == pytest.approx(mass, rel=1e-15)
    q = np.array([0.3, -0.2, 1.0, 1.0, 0.0, 0.0, 0.0])
    np.testing.assert_allclose(rbd.center_of_mass(model, q), com + q[:3], rtol=1e-13)


def test_fixed_link_is_kept_as_a_frame(backend):
    r = FIXED_ROBOT
    model = rbd.load_urdf(fixed_robot_xml(), floating_base=True)
    assert sorted(model.link_frame_names) == ["base", "tool"]
    Rf = Rz(r["fixed_rpy"][2]) @ Ry(r["fixed_rpy"][1]) @ Rx(r["fixed_rpy"][0])
    theta = 0.9  # base rotated about z by theta and moved
    q = np.array([1.0, 2.0, 3.0, math.cos(theta / 2), 0.0, 0.0, math.sin(theta / 2)])
    base = pose(Rz(theta), (1, 2, 3))
    np.testing.assert_allclose(placement(model, q, "base"), base, atol=1e-14)
    np.testing.assert_allclose(placement(model, q, "tool"), base @ pose(Rf, r["fixed_xyz"]), atol=1e-14)


def test_fixed_joint_on_a_moving_link_merges_into_its_body(backend):
    # The tool welded to the pendulum bob: M is the merged inertia about the hinge axis.
    r = FIXED_ROBOT
    xml = robot(link("world"), link("base", r["m1"], r["c1"], r["rpy1"], r["I1"]),
                link("tool", r["m2"], r["c2"], r["rpy2"], r["I2"]),
                joint("hinge", "revolute", "world", "base", axis=(0, 0, 1)),
                joint("weld", "fixed", "base", "tool", r["fixed_xyz"], r["fixed_rpy"]))
    model = rbd.load_urdf(xml)
    assert model.nbodies == 1 and model.nv == 1
    _, _, I_origin = merged_body_inertia()
    np.testing.assert_allclose(rbd.crba(model, np.array([0.4])), [[I_origin[2, 2]]], rtol=1e-13)


def test_mass_fixed_to_the_world_does_not_move(backend):
    # A fixed-base root (and links welded to it) never moves: no generalized force.
    model = rbd.load_urdf(fixed_robot_xml())
    assert (model.nq, model.nv, model.nbodies) == (0, 0, 0)
    assert sorted(model.link_frame_names) == ["base", "tool"]
    np.testing.assert_allclose(placement(model, np.zeros(0), "tool")[:3, 3], FIXED_ROBOT["fixed_xyz"], atol=1e-15)


# ------------------------------------------------------------------------------------------
# Floating joints and floating_base=True
# ------------------------------------------------------------------------------------------
def test_floating_joint_is_a_free_flyer(backend):
    model = rbd.load_urdf(robot(link("world"), link("body", 1.0),
                                joint("float", "floating", "world", "body", (0, 0, 1), (0, 0, 0.5))))
    assert (model.nq, model.nv) == (7, 6)
    assert list(model.joint_names) == ["float"]
    assert model.joint_kinds[0] == rbd.JointKind.FREE
    theta = -0.7
    q = np.array([0.1, 0.2, 0.3, math.cos(theta / 2), math.sin(theta / 2), 0.0, 0.0])
    np.testing.assert_allclose(placement(model, q, "body"),
                               pose(Rz(0.5), (0, 0, 1)) @ pose(Rx(theta), (0.1, 0.2, 0.3)), atol=1e-14)


def test_floating_base_adds_root_joint_first(backend):
    model = rbd.load_urdf(pendulum(), floating_base=True)
    assert list(model.joint_names) == ["root_joint", "hinge"]
    assert (model.nq, model.nv, model.nbodies) == (8, 7, 2)
    assert (model.joint_idx_q("root_joint"), model.joint_idx_v("root_joint")) == (0, 0)
    assert (model.joint_idx_q("hinge"), model.joint_idx_v("hinge")) == (7, 6)
    assert model.has_floating_base
    # Total mass: the root link now moves with the base.
    assert model.total_mass == pytest.approx(PENDULUM_MASS, rel=1e-15)
    theta = 0.6
    q = np.array([1.0, -1.0, 0.5, math.cos(theta / 2), 0.0, math.sin(theta / 2), 0.0, 0.3])
    base = pose(Ry(theta), (1.0, -1.0, 0.5))
    np.testing.assert_allclose(placement(model, q, "base"), base, atol=1e-14)
    np.testing.assert_allclose(placement(model, q, "bob"), base @ pose(np.eye(3), (0, 0, 1)) @ pose(Rx(0.3)),
                               atol=1e-14)
    fixed = rbd.load_urdf(pendulum())
    assert list(fixed.joint_names) == ["hinge"] and (fixed.nq, fixed.nv) == (1, 1)


# ------------------------------------------------------------------------------------------
# Joint order, indices, frames, gravity
# ------------------------------------------------------------------------------------------
TREE = robot(
    # Joints are listed out of tree order on purpose: a child's joint before its parent's.
    joint("m_knee", "revolute", "thigh", "shin", axis=(0, 1, 0)),
    link("root", 1.0), link("thigh", 1.0), link("shin", 1.0), link("arm", 1.0), link("hand", 1.0),
    link("tip"), link("slider", 1.0),
    joint("z_hip", "revolute", "root", "thigh", axis=(1, 0, 0)),
    joint("a_shoulder", "floating", "root", "arm"),
    joint("tip_weld", "fixed", "shin", "tip", (0, 0, -0.3)),
    joint("b_wrist", "continuous", "arm", "hand", axis=(0, 0, 1)),
    joint("c_slide", "prismatic", "root", "slider", axis=(0, 0, 1)),
)


def test_joint_order_is_depth_first_children_in_file_order():
    model = rbd.load_urdf(TREE)
    # root's children in file order: thigh (z_hip), arm (a_shoulder), slider (c_slide);
    # depth first: thigh's subtree (m_knee) comes before arm. Neither breadth-first
    # nor alphabetical order would give this list.
    assert list(model.joint_names) == ["z_hip", "m_knee", "a_shoulder", "b_wrist", "c_slide"]
    assert (model.nq, model.nv, model.nbodies) == (1 + 1 + 7 + 1 + 1, 1 + 1 + 6 + 1 + 1, 5)
    expected_q = {"z_hip": 0, "m_knee": 1, "a_shoulder": 2, "b_wrist": 9, "c_slide": 10}
    expected_v = {"z_hip": 0, "m_knee": 1, "a_shoulder": 2, "b_wrist": 8, "c_slide": 9}
    for name in model.joint_names:
        assert model.joint_idx_q(name) == expected_q[name], name
        assert model.joint_idx_v(name) == expected_v[name], name
    assert sorted(model.link_frame_names) == sorted(["root", "thigh", "shin", "arm", "hand", "tip", "slider"])
    assert len(set(model.frame_names)) == len(model.frame_names)
    # The floating joint's slot in q holds a quaternion: neutral has 1 at q[2 + 3].
    q0 = np.asarray(rbd.neutral(model))
    np.testing.assert_array_equal(q0, [0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0])


def test_joint_indices_address_the_joint_coordinates(backend):
    # Moving only the coordinate at joint_idx_q("c_slide") moves only the slider, by that amount.
    model = rbd.load_urdf(TREE)
    q0 = np.asarray(rbd.neutral(model), float)
    q = q0.copy()
    q[model.joint_idx_q("c_slide")] = 0.25
    for frame in model.link_frame_names:
        expected = placement(model, q0, frame)
        if frame == "slider":
            expected = expected @ pose(np.eye(3), (0, 0, 0.25))
        np.testing.assert_allclose(placement(model, q, frame), expected, atol=1e-15, err_msg=frame)


def test_frames_by_name_or_index(backend):
    model = rbd.load_urdf(TREE)
    q = np.asarray(rbd.random_configuration(model, np.random.default_rng(3)), float)
    for i, name in enumerate(model.frame_names):
        np.testing.assert_array_equal(placement(model, q, i), placement(model, q, name))
        assert model.frame_id(name) == i
    np.testing.assert_array_equal(placement(model, q, -1), placement(model, q, model.frame_names[-1]))


def test_unknown_frame_and_joint_names_raise(backend):
    model = rbd.load_urdf(TREE)
    q = np.asarray(rbd.neutral(model), float)
    with pytest.raises(ValueError, match="unknown frame 'elbow'"):
        rbd.frame_placement(model, q, "elbow")
    with pytest.raises(ValueError, match="frame index %d out of range" % model.nframes):
        rbd.frame_placement(model, q, model.nframes)
    with pytest.raises(TypeError, match="frame must be a name"):
        rbd.frame_placement(model, q, 1.5)
    with pytest.raises(ValueError, match="unknown joint 'elbow'"):
        model.joint_idx_q("elbow")
    with pytest.raises(ValueError, match="unknown joint 'tip_weld'"):  # fixed joints are not joints
        model.joint_idx_v("tip_weld")


def test_gravity_default_and_derived(backend):
    model = rbd.load_urdf(pendulum())
    np.testing.assert_array_equal(model.gravity, [0.0, 0.0, -9.81])
    q = np.array([0.8])
    g1 = rbd.gravity(model, q)
    assert abs(g1[0]) > 0.1
    np.testing.assert_allclose(rbd.gravity(model.replace(gravity=[0.0, 0.0, -2 * 9.81]), q), 2 * g1, rtol=1e-14)
    sideways = model.replace(gravity=[1.0, 0.0, 0.0])  # along the hinge axis: no torque
    np.testing.assert_allclose(rbd.gravity(sideways, q), [0.0], atol=1e-15)
    np.testing.assert_allclose(rbd.gravity(model, q), g1, rtol=0)  # the original is unchanged
    with pytest.raises(ValueError, match="gravity"):
        model.replace(gravity=[0.0, -9.81])
    with pytest.raises(ValueError, match="gravity"):
        model.replace(gravity=[0.0, 0.0, np.nan])
    with pytest.raises(AttributeError, match="immutable"):
        model.gravity = [0.0, 0.0, -1.0]


# ------------------------------------------------------------------------------------------
# Sources, names, mimic joints, safety
# ------------------------------------------------------------------------------------------
def test_path_string_bytes_and_bom_give_the_same_model(tmp_path):
    xml = pendulum()
    path = tmp_path / "pendulum.urdf"
    path.write_text(xml, encoding="utf-8")
    bom_path = tmp_path / "bom.urdf"
    bom_path.write_bytes(b"\xef\xbb\xbf" + xml.encode())
    models = [rbd.load_urdf(src) for src in (xml, path, str(path), xml.encode(), "\ufeff" + xml, bom_path)]
    for m in models[1:]:
        assert m.joint_names == models[0].joint_names
        np.testing.assert_array_equal(m.inertias, models[0].inertias)
        np.testing.assert_array_equal(m.joint_placements, models[0].joint_placements)


def test_missing_file_names_the_path(tmp_path):
    with pytest.raises(FileNotFoundError, match="nowhere.urdf"):
        rbd.load_urdf(tmp_path / "nowhere.urdf")
    with pytest.raises(TypeError, match="source"):
        rbd.load_urdf(3.5)


def test_robot_without_a_name_loads():
    model = rbd.load_urdf(robot(link("a"), link("b", 1.0), joint("j", "revolute", "a", "b"), name=None))
    assert list(model.joint_names) == ["j"]
    assert isinstance(model.name, str)


def test_robot_name_is_kept():
    assert rbd.load_urdf(pendulum()).name == "test"


def test_mimic_joint_is_independent_with_a_warning(backend):
    xml = robot(link("a"), link("l", 1.0, com=(0, 0.1, 0)), link("r", 1.0, com=(0, -0.1, 0)),
                joint("left", "prismatic", "a", "l", axis=(0, 1, 0)),
                joint("right", "prismatic", "a", "r", axis=(0, -1, 0), extra='<mimic joint="left" multiplier="1"/>'))
    with pytest.warns(UserWarning, match="'right'.*independent"):
        model = rbd.load_urdf(xml)
    assert model.nv == 2
    q = np.array([0.01, 0.03])  # different openings are allowed
    np.testing.assert_allclose(placement(model, q, "l")[:3, 3], [0, 0.01, 0], atol=1e-15)
    np.testing.assert_allclose(placement(model, q, "r")[:3, 3], [0, -0.03, 0], atol=1e-15)
    np.testing.assert_allclose(rbd.crba(model, q), np.eye(2), atol=1e-15)  # two independent unit masses


def test_no_warning_without_mimic():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        rbd.load_urdf(pendulum())


def test_visual_collision_and_unknown_elements_are_ignored():
    plain = rbd.load_urdf(pendulum())
    decorated = rbd.load_urdf(pendulum().replace(
        '<link name="bob">',
        '<link name="bob"><visual><geometry><mesh filename="package://x/bob.stl"/></geometry></visual>'
        '<collision><geometry><box size="1 1 1"/></geometry></collision>').replace(
        "</robot>", '<gazebo reference="bob"><material>Red</material></gazebo>'
                    '<transmission name="t"><type>x</type></transmission></robot>'))
    np.testing.assert_array_equal(decorated.inertias, plain.inertias)
    np.testing.assert_array_equal(decorated.joint_placements, plain.joint_placements)


BILLION_LAUGHS = ('<?xml version="1.0"?><!DOCTYPE robot [<!ENTITY a "aaaaaaaaaa">'
                  '<!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;"><!ENTITY c "&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;">]>'
                  '<robot name="&c;"><link name="a"/></robot>')
EXTERNAL_ENTITY = ('<?xml version="1.0"?><!DOCTYPE robot [<!ENTITY secret SYSTEM "file:///etc/passwd">]>'
                   '<robot name="&secret;"><link name="a"/></robot>')


# ten levels of ten: 10^10 characters, past expat's own amplification limit
FULL_BOMB = ('<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY l0 "lol">'
             + "".join('<!ENTITY l%d "%s">' % (k, ("&l%d;" % (k - 1)) * 10) for k in range(1, 10))
             + ']><robot name="&l9;"><link name="a"/></robot>')


@pytest.mark.parametrize("xml", [BILLION_LAUGHS, EXTERNAL_ENTITY, FULL_BOMB],
                         ids=["billion_laughs", "external_entity", "full_bomb"])
def test_entities_are_refused(xml, tmp_path):
    """By load_urdf, and by load_mjcf, whose URDFs go through MuJoCo's importer (it loaded
    the last two as robots of nothing: the scan for the root element stopped at them)."""
    path = tmp_path / "evil.urdf"
    path.write_text(xml)
    for source in (xml, path):
        with pytest.raises(rbd.URDFError, match="ENTITY"):
            rbd.load_urdf(source)
        if importlib.util.find_spec("mujoco") is not None:
            with pytest.raises(rbd.URDFError, match="ENTITY"):
                rbd.load_mjcf(source)


def test_load_mjcf_refuses_a_urdf_nested_deeper_than_it_reads(tmp_path):
    """load_urdf reads 2,000 nested unknown elements; load_mjcf, which rewrites the URDF for
    MuJoCo (whose parser stops at a few hundred levels), raises URDFError (a RecursionError)."""
    pytest.importorskip("mujoco")
    xml = '<robot name="r"><link name="a"/><link name="b"/>%s%s' \
          '<joint name="j" type="continuous"><parent link="a"/><child link="b"/></joint></robot>' \
          % ("<x>" * 2000, "</x>" * 2000)
    assert rbd.load_urdf(xml).joint_names == ("j",)
    with pytest.raises(rbd.URDFError, match="nested too deeply"):
        rbd.load_mjcf(xml)


def test_undeclared_entity_is_malformed_xml():
    with pytest.raises(rbd.URDFError, match="malformed XML"):
        rbd.load_urdf('<robot name="&secret;"><link name="a"/></robot>')


def test_urdf_error_is_a_value_error():
    assert issubclass(rbd.URDFError, ValueError)


# ------------------------------------------------------------------------------------------
# Broken files: one test each; the message names the offending element
# ------------------------------------------------------------------------------------------
GOOD_I = (0.01, 0.01, 0.01, 0, 0, 0)


def inertial_link(name, mass="1.0", inertia='ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.01"',
                  origin=""):
    return ('<link name="%s"><inertial>%s<mass value="%s"/><inertia %s/></inertial></link>'
            % (name, origin, mass, inertia))


BROKEN = {
    # XML and document structure
    "malformed_xml": ('<robot name="r"><link name="a"></robot>', "malformed XML"),
    "not_a_robot": ('<model name="r"><link name="a"/></model>', "<robot>.*<model>"),
    "no_links": (robot(), "no <link>"),
    "link_without_name": (robot("<link/>"), "<link> element has no name"),
    "joint_without_name": (robot(link("a"), link("b"),
                                 '<joint type="fixed"><parent link="a"/><child link="b"/></joint>'),
                           "<joint> element has no name"),
    "duplicate_link": (robot(link("a"), link("a")), "link 'a' is defined twice"),
    "duplicate_joint": (robot(link("a"), link("b"), link("c"), joint("j", "revolute", "a", "b"),
                              joint("j", "revolute", "b", "c")), "joint 'j' is defined twice"),
    # joints
    "unknown_joint_type": (robot(link("a"), link("b"), joint("elbow", "hinge", "a", "b")),
                           "joint 'elbow' has unknown type 'hinge'"),
    "joint_without_type": (robot(link("a"), link("b"),
                                 '<joint name="elbow"><parent link="a"/><child link="b"/></joint>'),
                           "joint 'elbow' has unknown type None"),
    "joint_without_parent": (robot(link("a"), link("b"), '<joint name="elbow" type="revolute"><child link="b"/></joint>'),
                             "joint 'elbow' has no <parent"),
    "joint_without_child": (robot(link("a"), link("b"), '<joint name="elbow" type="revolute"><parent link="a"/></joint>'),
                            "joint 'elbow' has no <child"),
    "missing_child_link": (robot(link("a"), joint("elbow", "revolute", "a", "forearm")),
                           "joint 'elbow' names child link 'forearm'"),
    "missing_parent_link": (robot(link("b"), joint("elbow", "revolute", "upperarm", "b")),
                            "joint 'elbow' names parent link 'upperarm'"),
    "zero_axis": (robot(link("a"), link("b"), joint("elbow", "revolute", "a", "b", axis=(0, 0, 0))),
                  "joint 'elbow' has a zero <axis>"),
    "zero_prismatic_axis": (robot(link("a"), link("b"), joint("slide", "prismatic", "a", "b", axis=(0, 0, 0))),
                            "joint 'slide' has a zero <axis>"),
    "planar_axis_not_z": (robot(link("a"), link("b"), joint("table", "planar", "a", "b", axis=(1, 0, 0))),
                          "planar joint 'table'"),
    "self_loop": (robot(link("a"), link("b"), joint("j", "revolute", "a", "b"), joint("loop", "revolute", "b", "b")),
                  "link 'b' has two parents"),
    # tree structure
    "two_parents": (robot(link("a"), link("b"), link("c"), joint("j1", "revolute", "a", "c"),
                          joint("j2", "revolute", "b", "c")), "link 'c' has two parents \\(joints 'j1' and 'j2'\\)"),
    "cycle": (robot(link("a"), link("b"), link("c"), joint("j1", "revolute", "a", "b"),
                    joint("j2", "revolute", "b", "c"), joint("j3", "revolute", "c", "a")),
              "cycle.*'a'.*'b'.*'c'|cycle.*'b'.*'c'.*'a'|cycle.*'c'.*'a'.*'b'"),
    "detached_cycle": (robot(link("root"), link("b"), link("c"), joint("j2", "revolute", "b", "c"),
                             joint("j3", "revolute", "c", "b")), "links 'b', 'c' form a cycle"),
    "several_roots": (robot(link("a"), link("b"), link("c"), joint("j", "revolute", "a", "c")),
                      "several root links: 'a', 'b'"),
    # numbers
    "nan_origin": (robot(link("a"), link("b"), joint("elbow", "revolute", "a", "b", xyz=(0, float("nan"), 0))),
                   "<origin> of joint 'elbow'.*finite"),
    "inf_rpy": (robot(link("a"), link("b"), joint("elbow", "revolute", "a", "b", rpy=(0, float("inf"), 0))),
                "<origin> of joint 'elbow'.*rpy.*finite"),
    "overflowing_number": (robot(link("a"), link("b"), joint("elbow", "revolute", "a", "b", xyz=(0, 0, 1e308))
                                 .replace("1e+308", "1e400")), "<origin> of joint 'elbow'.*finite"),
    "nan_axis": (robot(link("a"), link("b"), joint("elbow", "revolute", "a", "b", axis=(0, float("nan"), 1))),
                 "<axis> of joint 'elbow'.*finite"),
    "nan_limit": (robot(link("a"), link("b"), joint("elbow", "revolute", "a", "b",
                                                    extra='<limit lower="nan" upper="1" effort="1" velocity="1"/>')),
                  "<limit> of joint 'elbow'.*finite"),
    "short_xyz": (robot(link("a"), link("b"), '<joint name="elbow" type="revolute"><parent link="a"/>'
                        '<child link="b"/><origin xyz="1 2"/></joint>'), "<origin> of joint 'elbow'.*3 numbers"),
    "not_numbers": (robot(link("a"), link("b"), '<joint name="elbow" type="revolute"><parent link="a"/>'
                          '<child link="b"/><origin xyz="1 two 3"/></joint>'),
                    "<origin> of joint 'elbow'.*not a list of numbers"),
    "inf_mass": (robot(inertial_link("forearm", mass="inf")), "<mass> of link 'forearm'.*finite"),
    "nan_inertia": (robot(inertial_link("forearm", inertia='ixx="nan" ixy="0" ixz="0" iyy="1" iyz="0" izz="1"')),
                    "<inertia> of link 'forearm'.*finite"),
    "nan_inertial_origin": (robot(inertial_link("forearm", origin='<origin xyz="0 0 nan"/>')),
                            "<origin> of link 'forearm'.*finite"),
    # physics
    "negative_mass": (robot(inertial_link("forearm", mass="-2.0")), "link 'forearm' has a negative mass"),
    "inertial_without_mass": (robot('<link name="forearm"><inertial><inertia ixx="1" ixy="0" ixz="0" iyy="1" '
                                    'iyz="0" izz="1"/></inertial></link>'), "link 'forearm'.*<mass>"),
    "inertial_without_inertia": (robot('<link name="forearm"><inertial><mass value="1"/></inertial></link>'),
                                 "link 'forearm'.*<inertia>"),
    "mass_without_value": (robot(inertial_link("forearm").replace('<mass value="1.0"/>', "<mass/>")),
                           "<mass> of link 'forearm' has no value"),
    "inertia_missing_component": (robot(inertial_link("forearm", inertia='ixx="1" iyy="1" izz="1" ixy="0" ixz="0"')),
                                  "<inertia> of link 'forearm' lacks iyz"),
}


# Physically inconsistent inertias: they load with one warning naming the link, and
# are an error in strict mode (rbd's inertia policy, rbd._inertia).
INCONSISTENT = {
    "inertia_not_psd": (robot(inertial_link("forearm", inertia='ixx="-0.1" ixy="0" ixz="0" iyy="1" iyz="0" izz="1"')),
                        "inconsistent inertia.*'forearm'"),
    "inertia_not_psd_off_diagonal": (robot(inertial_link(
        "forearm", inertia='ixx="1" ixy="2" ixz="0" iyy="1" iyz="0" izz="1"')),
        "inconsistent inertia.*'forearm'"),
    "triangle_inequality": (robot(inertial_link("forearm", inertia='ixx="1" ixy="0" ixz="0" iyy="1" iyz="0" izz="3"')),
                            "inconsistent inertia.*'forearm'"),
    # a 10 g part, its moment 10 % negative, on a 500 kg robot whose base's centre of mass is
    # 1 m from its origin: about that origin the base's entries are 5e2, about its centre of
    # mass 2e1, and the latter is the scale round-off is judged against (1e-9 of 5e2 would
    # pass -1e-7 as round-off)
    "light_link_on_a_heavy_robot": (robot(
        link("base", 500.0, com=(1.0, 0, 0), I=(20.0, 20.0, 10.0, 0, 0, 0)),
        link("forearm", 0.01, com=(1.0, 0, 0), I=(1e-6, 1e-6, -1e-7, 0, 0, 0)),
        joint("weld", "fixed", "base", "forearm")), "inconsistent inertia.*'forearm': a negative principal moment"),
    # PSD with a valid diagonal, yet its principal moments (0.1, 1, 1.9) break the inequality.
    "triangle_inequality_off_diagonal": (robot(inertial_link(
        "forearm", inertia='ixx="1" ixy="0.9" ixz="0" iyy="1" iyz="0" izz="1"')),
        r"inconsistent inertia.*'forearm': principal moments 0\.1 \+ 1 < 1\.9 \(by 0\.8\)"),
}


@pytest.mark.parametrize("case", sorted(INCONSISTENT))
def test_inconsistent_inertia_warns_once_and_is_an_error_when_strict(case):
    xml, match = INCONSISTENT[case]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model = rbd.load_urdf(xml)
    messages = [str(w.message) for w in caught if issubclass(w.category, UserWarning)]
    assert len(messages) == 1 and "forearm" in messages[0], messages
    assert model.nbodies == 0  # a single fixed link: loaded as given
    with pytest.raises(rbd.URDFError, match=match):
        rbd.load_urdf(xml, strict=True)


@pytest.mark.parametrize("case", sorted(BROKEN))
def test_broken_urdf_raises_naming_the_element(case, tmp_path):
    xml, match = BROKEN[case]
    with pytest.raises(rbd.URDFError, match=match):
        rbd.load_urdf(xml)
    path = tmp_path / (case + ".urdf")
    path.write_text(xml, encoding="utf-8")
    with pytest.raises(rbd.URDFError, match=match):
        rbd.load_urdf(path)


def test_broken_cases_differ_from_a_loadable_file_only_by_their_defect():
    # Guard for the table above: the same writers produce files that load.
    rbd.load_urdf(robot(inertial_link("forearm")))
    rbd.load_urdf(robot(link("a"), link("b"), joint("elbow", "revolute", "a", "b", axis=(0, 0, 1),
                                                    extra='<limit lower="-1" upper="1" effort="1" velocity="1"/>')))
    rbd.load_urdf(robot(link("a"), link("b"), joint("table", "planar", "a", "b", axis=(0, 0, 1))))
    rbd.load_urdf(robot(inertial_link("forearm", inertia='ixx="1" ixy="0.5" ixz="0" iyy="1" iyz="0" izz="1"')))


def test_error_message_has_no_double_prefix():
    with pytest.raises(rbd.URDFError) as info:
        rbd.load_urdf(BROKEN["nan_origin"][0])
    assert str(info.value).count("URDF:") == 1


# ------------------------------------------------------------------------------------------
# Against Pinocchio: small URDFs exercising every element, loaded by both
# ------------------------------------------------------------------------------------------
pin_available = True
try:
    import pinocchio  # noqa: F401
except ImportError:  # pragma: no cover
    pin_available = False

MIXED = robot(
    link("base", 3.0, (0.05, 0.0, 0.1), (0.1, 0.2, 0.3), (0.05, 0.06, 0.07, 0.001, -0.002, 0.003)),
    link("upper", 1.5, (0.0, 0.1, -0.2), (0.0, 0.5, 0.0), (0.02, 0.03, 0.025, 0.0, 0.0, 0.0)),
    link("lower", 1.0, (0.1, 0.0, -0.15), (0.3, 0.0, -0.2), (0.01, 0.012, 0.008, 0.0005, 0.0, 0.0)),
    link("tool", 0.4, (0.0, 0.0, 0.05), (0.0, 0.0, 0.9), (0.002, 0.002, 0.001, 0.0, 0.0, 0.0)),
    link("tcp"),
    link("side", 0.7, (0.0, 0.0, 0.0), (0.0, 0.0, 0.0), (0.003, 0.004, 0.005, 0.0, 0.0, 0.0)),
    link("wheel", 0.5, (0.0, 0.02, 0.0), (1.0, 0.0, 0.0), (0.002, 0.001, 0.002, 0.0, 0.0, 0.0)),
    joint("shoulder", "revolute", "base", "upper", (0.0, 0.1, 0.4), (0.2, -0.3, 0.5), axis=(0.0, 0.6, 0.8),
          extra='<limit lower="-2" upper="2" effort="50" velocity="3"/>'),
    joint("elbow", "continuous", "upper", "lower", (0.0, 0.0, -0.35), (0.0, 0.0, 0.0), axis=(1, 0, 0)),
    joint("wrist_weld", "fixed", "lower", "tool", (0.05, 0.0, -0.3), (0.4, 0.1, -0.6)),
    joint("tcp_weld", "fixed", "tool", "tcp", (0.0, 0.0, 0.1), (0.0, math.pi, 0.0)),
    joint("slide", "prismatic", "base", "side", (0.2, -0.1, 0.0), (0.0, 0.0, 1.2), axis=(1, 1, 0),
          extra='<limit lower="-0.3" upper="0.3" effort="50" velocity="3"/>'),
    joint("spin", "revolute", "side", "wheel", (0.0, 0.0, 0.1), (math.pi / 2, 0.0, 0.0), axis=(0, 0, -1),
          extra='<limit lower="-3" upper="3" effort="50" velocity="3"/>'),
    name="mixed",
)


@pytest.mark.skipif(not pin_available, reason="pinocchio is not installed")
@pytest.mark.parametrize("floating_base", [False, True])
def test_small_urdf_matches_pinocchio(floating_base, tmp_path, backend):
    from oracles.pinocchio_adapter import ModelPair, PinocchioOracle, assert_spot_checks
    path = tmp_path / "mixed.urdf"
    path.write_text(MIXED)
    pair = ModelPair("mixed", path, floating_base, ("base", "lower", "tool", "tcp", "wheel"))
    oracle = PinocchioOracle(pair)
    assert_spot_checks(pair.model, oracle, pair.model.frame_names, seed=7, mass_rtol=1e-14)


def test_dynamics_damping_and_friction_are_kept():
    """<dynamics> goes into model.damping and model.friction per velocity coordinate (floating
    joints: broadcast over their six); a fixed joint's has no coordinate to go to."""
    urdf = robot(
        link("base", 1.0), link("a", 1.0), link("b", 1.0), link("c", 1.0), link("d"),
        joint("j1", "revolute", "base", "a", extra='<dynamics damping="0.5" friction="0.25"/>'
                                                   '<limit lower="-1" upper="1" effort="1" velocity="1"/>'),
        joint("j2", "continuous", "a", "b", extra='<dynamics friction="2"/>'),
        joint("j3", "floating", "b", "c", extra='<dynamics damping="0.1"/>'),
        joint("weld", "fixed", "c", "d", extra='<dynamics damping="3"/>'))
    model = rbd.load_urdf(urdf)
    np.testing.assert_array_equal(model.damping, [0.5, 0.0] + [0.1] * 6)
    np.testing.assert_array_equal(model.friction, [0.25, 2.0] + [0.0] * 6)
    np.testing.assert_array_equal(model.armature, np.zeros(8))
    np.testing.assert_array_equal(rbd.load_urdf(urdf, floating_base=True).damping, [0.0] * 6 + [0.5, 0.0] + [0.1] * 6)
    for bad, message in (('damping="-1"', "non-negative"), ('friction="x"', "not a list of numbers"),
                         ('damping="nan"', "finite")):
        with pytest.raises(rbd.URDFError, match=message):
            rbd.load_urdf(robot(link("base", 1.0), link("a", 1.0),
                                joint("j", "continuous", "base", "a", extra="<dynamics %s/>" % bad)))
