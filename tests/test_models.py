"""Sample robots, the ``python -m rbd`` main job and ``ModelBuilder``.

Expected values come from outside the code under test: the shipped URDF read
here with the standard library, Pinocchio loading the same file, hand-built
rotations, and the same robot written once as URDF and once with the builder.
"""
import math
import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from importlib import resources
from pathlib import Path

import numpy as np
import pytest

import rbd
from oracles.textbook import Rx, Ry, Rz, pose

SAMPLES = {"arm7": False, "quadruped": True}  # name -> floating base


def read_urdf(name):
    """(links, joints) of a shipped URDF, read with the standard library."""
    root = ET.parse(rbd.sample_model_path(name)).getroot()
    links = {}
    for link in root.findall("link"):
        mass = link.find("inertial/mass")
        links[link.get("name")] = 0.0 if mass is None else float(mass.get("value"))
    joints = [(j.get("name"), j.get("type"), j.find("parent").get("link"), j.find("child").get("link"))
              for j in root.findall("joint")]
    return links, joints


# ------------------------------------------------------------------------------------------
# Sample models
# ------------------------------------------------------------------------------------------
def test_sample_names():
    assert set(rbd.sample_model_names()) >= set(SAMPLES)


@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_sample_file_is_package_data(name):
    path = Path(rbd.sample_model_path(name))
    assert path.is_file()
    shipped = resources.files("rbd.robots").joinpath(name + ".urdf")
    assert shipped.is_file()
    assert path.read_bytes() == shipped.read_bytes()


@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_sample_structure_matches_its_file(name):
    model = rbd.sample_model(name)
    links, joints = read_urdf(name)
    moving = [j for j in joints if j[1] != "fixed"]
    assert sorted(model.link_frame_names) == sorted(links)
    expected_joints = {j[0] for j in moving} | ({"root_joint"} if SAMPLES[name] else set())
    assert set(model.joint_names) == expected_joints
    # Every joint of the file is revolute: one coordinate each (plus the free flyer).
    assert all(j[1] == "revolute" for j in moving)
    assert model.nv == len(moving) + (6 if SAMPLES[name] else 0)
    assert model.nq == len(moving) + (7 if SAMPLES[name] else 0)
    # The root link is the one that is nobody's child; with a fixed base its
    # mass (and that of links welded to it) never moves.
    root = (set(links) - {j[3] for j in joints}).pop()
    expected_mass = sum(links.values()) if SAMPLES[name] else sum(links.values()) - links[root]
    welded_to_root = [j[3] for j in joints if j[1] == "fixed" and j[2] == root]
    if not SAMPLES[name]:
        expected_mass -= sum(links[c] for c in welded_to_root)
    assert model.total_mass == pytest.approx(expected_mass, rel=1e-12)


def test_arm7_is_a_realistic_fixed_base_arm():
    model = rbd.sample_model("arm7")
    assert (model.nq, model.nv, model.nbodies) == (7, 7, 7)
    assert not model.has_floating_base
    assert 3.0 <= model.total_mass <= 60.0
    assert "tool0" in model.frame_names
    # A serial chain: each body hangs from the previous one.
    np.testing.assert_array_equal(model.parents, np.arange(-1, 6))


def test_quadruped_is_a_realistic_floating_base_robot(backend):
    model = rbd.sample_model("quadruped")
    assert model.joint_names[0] == "root_joint"
    assert model.joint_kinds[0] == rbd.JointKind.FREE
    assert (model.joint_idx_q("root_joint"), model.joint_idx_v("root_joint")) == (0, 0)
    assert (model.nq, model.nv) == (7 + 12, 6 + 12)
    assert 5.0 <= model.total_mass <= 60.0
    feet = ["FL_foot", "FR_foot", "HL_foot", "HR_foot"]
    assert set(feet) <= set(model.frame_names)
    # Standing at the neutral configuration: feet below the base, front feet ahead
    # of hind ones, left feet at +y and mirrored by the right ones.
    q0 = np.asarray(rbd.neutral(model), float)
    p = {f: rbd.frame_placement(model, q0, f)[:3, 3] for f in feet}
    base_z = rbd.frame_placement(model, q0, "base_link")[2, 3]
    assert all(p[f][2] < base_z - 0.2 for f in feet)
    assert p["FL_foot"][0] > 0 > p["HL_foot"][0]
    assert p["FL_foot"][1] > 0 > p["FR_foot"][1]
    np.testing.assert_allclose(p["FR_foot"], p["FL_foot"] * [1, -1, 1], atol=1e-12)
    # A free body's generalized inertia for translations is the total mass.
    M = rbd.crba(model, q0)
    np.testing.assert_allclose(M[:3, :3], model.total_mass * np.eye(3), rtol=1e-12)


@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_sample_mass_matrix_is_symmetric_positive_definite(name, backend):
    model = rbd.sample_model(name)
    rng = np.random.default_rng(11)
    for _ in range(5):
        q = np.asarray(rbd.random_configuration(model, rng), float)
        M = rbd.crba(model, q)
        np.testing.assert_allclose(M, M.T, atol=1e-14)
        assert np.linalg.eigvalsh(M).min() > 0


def test_unknown_sample_name():
    with pytest.raises(ValueError, match="unknown sample model 'hexapod'.*arm7.*quadruped"):
        rbd.sample_model("hexapod")
    with pytest.raises(ValueError, match="'hexapod'"):
        rbd.sample_model_path("hexapod")


@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_sample_matches_pinocchio(name, backend):
    pytest.importorskip("pinocchio")
    from oracles.pinocchio_adapter import ModelPair, PinocchioOracle, assert_spot_checks
    frames = ("tool0", "flange") if name == "arm7" else ("FL_foot", "HR_foot", "base_link")
    pair = ModelPair(name, rbd.sample_model_path(name), SAMPLES[name], frames)
    oracle = PinocchioOracle(pair)
    model = rbd.sample_model(name)
    # sample_model is load_urdf of the shipped file with the right base.
    assert model.joint_names == pair.model.joint_names
    np.testing.assert_array_equal(model.inertias, pair.model.inertias)
    assert_spot_checks(model, oracle, frames, seed=5, mass_rtol=1e-12)


# ------------------------------------------------------------------------------------------
# python -m rbd
# ------------------------------------------------------------------------------------------
def run_main(*args):
    env = dict(os.environ)
    env.pop("RBD_BACKEND", None)
    return subprocess.run([sys.executable, "-m", "rbd", *args], capture_output=True, text=True, timeout=60,
                          env=env, cwd=str(Path(__file__).parent))


def section(stdout, title):
    """The lines after the line containing ``title``, up to the next blank line."""
    lines = stdout.splitlines()
    start = next(i for i, line in enumerate(lines) if title in line)
    out = []
    for line in lines[start + 1:]:
        if not line.strip():
            break
        out.append(line)
    return out


def numbers(lines):
    return np.array([float(x) for line in lines for x in line.replace("[", " ").replace("]", " ").split()])


@pytest.mark.parametrize("args, name", [((), "arm7"), (("quadruped",), "quadruped"),
                                        (("arm7", "--backend", "numpy"), "arm7")])
def test_main_job_prints_tree_mass_matrix_and_inverse_dynamics(args, name):
    result = run_main(*args)
    assert result.returncode == 0, result.stderr
    out = result.stdout
    model = rbd.sample_model(name)
    for joint_name in model.joint_names:  # the tree
        assert joint_name in out
    assert out.splitlines()[0].startswith(name)
    M = numbers(section(out, "mass matrix"))
    assert M.size == model.nv ** 2
    M = M.reshape(model.nv, model.nv)
    np.testing.assert_allclose(M, M.T, atol=1.5e-3)  # printed to 3 decimals
    assert np.all(np.diag(M) > 0)
    tau = numbers(section(out, "inverse dynamics"))
    assert tau.size == model.nv and np.all(np.isfinite(tau))
    if "--backend" in args:
        assert "backend: numpy" in out


def test_main_job_loads_a_urdf_path(tmp_path):
    path = tmp_path / "pendulum.urdf"
    path.write_text('<robot name="pend"><link name="a"/><link name="b"><inertial><origin xyz="0 0 -1"/>'
                    '<mass value="2"/><inertia ixx="0" ixy="0" ixz="0" iyy="0" iyz="0" izz="0"/></inertial>'
                    '</link><joint name="hinge" type="continuous"><parent link="a"/><child link="b"/>'
                    '<axis xyz="1 0 0"/></joint></robot>')
    result = run_main(str(path))
    assert result.returncode == 0, result.stderr
    assert "hinge" in result.stdout
    # A point mass 2 kg at 1 m: M = m l^2 = 2 whatever the angle.
    assert numbers(section(result.stdout, "mass matrix")) == pytest.approx([2.0], abs=1e-3)


def test_main_job_unknown_robot_fails():
    result = run_main("hexapod")
    assert result.returncode != 0
    assert result.stdout == ""
    assert "hexapod" in result.stderr.strip().splitlines()[-1]


def test_main_job_unknown_robot_error_is_a_message_not_a_traceback():
    result = run_main("hexapod")
    assert "Traceback" not in result.stderr
    assert "arm7" in result.stderr and "quadruped" in result.stderr


# ------------------------------------------------------------------------------------------
# ModelBuilder
# ------------------------------------------------------------------------------------------
URDF_TWIN = """<?xml version="1.0"?>
<robot name="twin">
  <link name="base"><inertial><origin xyz="0 0 0.05"/><mass value="5"/>
    <inertia ixx="0.1" ixy="0" ixz="0" iyy="0.1" iyz="0" izz="0.15"/></inertial></link>
  <link name="upper"><inertial><origin xyz="0 0.02 -0.15" rpy="0.3 0 0"/><mass value="2"/>
    <inertia ixx="0.02" ixy="0.001" ixz="0" iyy="0.025" iyz="0" izz="0.01"/></inertial></link>
  <link name="lower"><inertial><origin xyz="0.01 0 -0.12"/><mass value="1.2"/>
    <inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.004"/></inertial></link>
  <link name="tool"><inertial><origin xyz="0 0 0.02"/><mass value="0.3"/>
    <inertia ixx="0.0004" ixy="0" ixz="0" iyy="0.0004" iyz="0" izz="0.0002"/></inertial></link>
  <link name="slider"><inertial><origin xyz="0 0 0"/><mass value="0.8"/>
    <inertia ixx="0.001" ixy="0" ixz="0" iyy="0.001" iyz="0" izz="0.001"/></inertial></link>
  <joint name="shoulder" type="revolute"><parent link="base"/><child link="upper"/>
    <origin xyz="0 0 0.3" rpy="0 0 0.5"/><axis xyz="0 1 0"/>
    <limit lower="-1.5" upper="1.5" effort="40" velocity="2"/></joint>
  <joint name="elbow" type="continuous"><parent link="upper"/><child link="lower"/>
    <origin xyz="0 0 -0.3" rpy="0.2 0 0"/><axis xyz="0 0.6 0.8"/></joint>
  <joint name="weld" type="fixed"><parent link="lower"/><child link="tool"/>
    <origin xyz="0 0 -0.25" rpy="0 0.7 0"/></joint>
  <joint name="rail" type="prismatic"><parent link="base"/><child link="slider"/>
    <origin xyz="0.1 0 0"/><axis xyz="1 0 0"/><limit lower="0" upper="0.4" effort="10" velocity="1"/></joint>
</robot>"""


def builder_twin():
    b = rbd.ModelBuilder("twin")
    b.add_link("base", mass=5.0, com=[0, 0, 0.05], inertia=np.diag([0.1, 0.1, 0.15]))
    R = Rx(0.3)
    I_upper = np.array([[0.02, 0.001, 0], [0.001, 0.025, 0], [0, 0, 0.01]])
    b.add_link("upper", mass=2.0, com=[0, 0.02, -0.15], inertia=R @ I_upper @ R.T)
    b.add_link("lower", mass=1.2, com=[0.01, 0, -0.12], inertia=np.diag([0.01, 0.01, 0.004]))
    b.add_link("tool", mass=0.3, com=[0, 0, 0.02], inertia=np.diag([0.0004, 0.0004, 0.0002]))
    b.add_link("slider", mass=0.8, inertia=0.001 * np.eye(3))
    b.add_joint("shoulder", "revolute", "base", "upper", origin=pose(Rz(0.5), (0, 0, 0.3)), axis=[0, 1, 0],
                lower=-1.5, upper=1.5, effort=40, velocity=2)
    b.add_joint("elbow", "continuous", "upper", "lower", origin=pose(Rx(0.2), (0, 0, -0.3)), axis=[0, 0.6, 0.8])
    b.add_joint("weld", "fixed", "lower", "tool", origin=pose(Ry(0.7), (0, 0, -0.25)))
    b.add_joint("rail", "prismatic", "base", "slider", origin=pose(np.eye(3), (0.1, 0, 0)), axis=[1, 0, 0],
                lower=0.0, upper=0.4, effort=10, velocity=1)
    return b


ARRAYS = ("parents", "joint_kinds", "joint_axes", "joint_placements", "inertias", "q_idx", "v_idx",
          "frame_parents", "frame_offsets", "lower_limits", "upper_limits", "velocity_limits", "effort_limits")


@pytest.mark.parametrize("floating_base", [False, True])
def test_builder_model_equals_the_urdf_model(floating_base, backend):
    ours = builder_twin().build(floating_base=floating_base)
    loaded = rbd.load_urdf(URDF_TWIN, floating_base=floating_base)
    assert ours.name == loaded.name == "twin"
    assert ours.joint_names == loaded.joint_names
    assert ours.frame_names == loaded.frame_names
    assert (ours.nq, ours.nv, ours.nbodies) == (loaded.nq, loaded.nv, loaded.nbodies)
    for attr in ARRAYS:
        np.testing.assert_allclose(getattr(ours, attr), getattr(loaded, attr), rtol=1e-14, atol=1e-15,
                                   err_msg=attr)
    rng = np.random.default_rng(2)
    q = np.asarray(rbd.random_configuration(ours, rng), float)
    np.testing.assert_allclose(rbd.crba(ours, q), rbd.crba(loaded, q), rtol=1e-13, atol=1e-15)
    np.testing.assert_allclose(rbd.frame_placement(ours, q, "tool"), rbd.frame_placement(loaded, q, "tool"),
                               atol=1e-14)


def test_builder_spherical_joint(backend):
    b = rbd.ModelBuilder("ball")
    b.add_link("a")
    b.add_link("b", mass=1.0, com=[0, 0, -0.5], inertia=np.diag([0.01, 0.02, 0.03]))
    b.add_joint("ball", "spherical", "a", "b", origin=pose(np.eye(3), (0, 0, 1)))
    model = b.build()
    assert (model.nq, model.nv) == (4, 3)
    np.testing.assert_array_equal(rbd.neutral(model), [1, 0, 0, 0])
    theta = 0.8
    q = np.array([math.cos(theta / 2), 0, math.sin(theta / 2), 0])
    np.testing.assert_allclose(rbd.frame_placement(model, q, "b"), pose(Ry(theta), (0, 0, 1)), atol=1e-14)
    # M = rotational inertia about the joint center (parallel axis, com 0.5 m below).
    np.testing.assert_allclose(rbd.crba(model, q), np.diag([0.01 + 0.25, 0.02 + 0.25, 0.03]), rtol=1e-13,
                               atol=1e-15)


def test_builder_planar_joint(backend):
    b = rbd.ModelBuilder("puck")
    b.add_link("table")
    b.add_link("puck", mass=2.0, inertia=np.diag([0.1, 0.1, 0.05]))
    b.add_joint("plane", "planar", "table", "puck", origin=pose(Rx(0.3), (0, 0, 0.1)))
    model = b.build()
    assert (model.nq, model.nv) == (3, 3)
    q = np.array([0.2, -0.4, 1.1])
    np.testing.assert_allclose(rbd.frame_placement(model, q, "puck"),
                               pose(Rx(0.3), (0, 0, 0.1)) @ pose(Rz(1.1), (0.2, -0.4, 0)), atol=1e-14)
    np.testing.assert_allclose(rbd.crba(model, q), np.diag([2.0, 2.0, 0.05]), rtol=1e-13, atol=1e-15)


def test_builder_add_frame(backend):
    b = rbd.ModelBuilder("pend")
    b.add_link("a")
    b.add_link("b", mass=1.0, com=[0, 0, -1])
    b.add_joint("j", "revolute", "a", "b", axis=[1, 0, 0])
    b.add_frame("tip", "b", origin=pose(Rz(0.3), (0, 0, -1)))
    model = b.build()
    assert model.nbodies == 1 and "tip" in model.frame_names
    q = np.array([0.5])
    np.testing.assert_allclose(rbd.frame_placement(model, q, "tip"), pose(Rx(0.5)) @ pose(Rz(0.3), (0, 0, -1)),
                               atol=1e-14)
    np.testing.assert_allclose(rbd.crba(model, q), [[1.0]], rtol=1e-14)  # the frame is massless


def _pendulum_builder():
    b = rbd.ModelBuilder("p")
    b.add_link("a")
    b.add_link("b", mass=1.0)
    return b


def test_builder_duplicate_link():
    b = _pendulum_builder()
    with pytest.raises(ValueError, match="link 'b' is defined twice"):
        b.add_link("b")


def test_builder_duplicate_joint():
    b = _pendulum_builder()
    b.add_link("c")
    b.add_joint("j", "revolute", "a", "b")
    b.add_joint("j", "revolute", "b", "c")
    with pytest.raises(ValueError, match="joint 'j' is defined twice"):
        b.build()


def test_builder_frame_name_clashing_with_a_link():
    b = _pendulum_builder()
    with pytest.raises(ValueError, match="link 'b' is defined twice"):
        b.add_frame("b", "a")


def test_builder_root_joint_name_clash_with_floating_base():
    b = _pendulum_builder()
    b.add_joint("root_joint", "revolute", "a", "b")
    assert b.build().joint_names == ("root_joint",)  # fine without a free flyer
    with pytest.raises(ValueError, match="'root_joint' is already defined"):
        b.build(floating_base=True)


def test_builder_unknown_parent():
    b = _pendulum_builder()
    b.add_joint("j", "revolute", "nowhere", "b")
    with pytest.raises(ValueError, match="joint 'j' names parent link 'nowhere'"):
        b.build()


def test_builder_unknown_child():
    b = _pendulum_builder()
    b.add_joint("j", "revolute", "a", "nowhere")
    with pytest.raises(ValueError, match="joint 'j' names child link 'nowhere'"):
        b.build()


@pytest.mark.parametrize("kind", ["revolute", "continuous", "prismatic"])
def test_builder_zero_axis(kind):
    with pytest.raises(ValueError, match="joint 'j' has a zero axis"):
        _pendulum_builder().add_joint("j", kind, "a", "b", axis=[0, 0, 0])


def test_builder_non_finite_axis():
    with pytest.raises(ValueError, match="axis of joint 'j'"):
        _pendulum_builder().add_joint("j", "revolute", "a", "b", axis=[0, np.nan, 1])


def test_builder_wrong_axis_shape():
    with pytest.raises(ValueError, match="axis of joint 'j'"):
        _pendulum_builder().add_joint("j", "revolute", "a", "b", axis=[0, 1])


@pytest.mark.parametrize("kind", ["hinge", "REVOLUTE", "", None, 3])
def test_builder_bad_joint_type(kind):
    with pytest.raises(ValueError, match="joint 'j' has unknown type"):
        _pendulum_builder().add_joint("j", kind, "a", "b")


@pytest.mark.parametrize("name", ["", None, 7])
def test_builder_bad_joint_name(name):
    with pytest.raises(ValueError, match="joint name"):
        _pendulum_builder().add_joint(name, "revolute", "a", "b")


@pytest.mark.parametrize("name", ["", None, 7])
def test_builder_bad_link_name(name):
    with pytest.raises(ValueError, match="link name"):
        rbd.ModelBuilder().add_link(name)


def test_builder_planar_axis_must_be_z():
    with pytest.raises(ValueError, match="planar joint 'j'"):
        _pendulum_builder().add_joint("j", "planar", "a", "b", axis=[1, 0, 0])


@pytest.mark.parametrize("origin, what", [
    (np.diag([2.0, 1.0, 1.0, 1.0]), "scaled"),
    (pose(np.diag([1.0, 1.0, -1.0])), "reflection"),
    (np.array([[1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0], [0.1, 0, 0, 1.0]]), "projective row"),
    (pose(np.array([[1.0, 0.1, 0], [0, 1, 0], [0, 0, 1]])), "sheared"),
])
def test_builder_origin_must_be_rigid(origin, what):
    with pytest.raises(ValueError, match="origin of joint 'j' must be a rigid transform"):
        _pendulum_builder().add_joint("j", "revolute", "a", "b", origin=origin)


def test_builder_origin_shape_and_finiteness():
    with pytest.raises(ValueError, match="origin of joint 'j'"):
        _pendulum_builder().add_joint("j", "revolute", "a", "b", origin=np.eye(3))
    bad = np.eye(4)
    bad[0, 3] = np.inf
    with pytest.raises(ValueError, match="origin of joint 'j'"):
        _pendulum_builder().add_joint("j", "revolute", "a", "b", origin=bad)


def test_builder_limits():
    with pytest.raises(ValueError, match="joint 'j' has lower limit > upper limit"):
        _pendulum_builder().add_joint("j", "revolute", "a", "b", lower=1.0, upper=0.0)
    with pytest.raises(ValueError, match="lower limit of joint 'j'.*1 numbers"):
        _pendulum_builder().add_joint("j", "revolute", "a", "b", lower=[-1.0, -2.0])
    with pytest.raises(ValueError, match="upper limit of joint 'j'.*NaN"):
        _pendulum_builder().add_joint("j", "revolute", "a", "b", upper=np.nan)


@pytest.mark.parametrize("kwargs, match", [
    (dict(mass=-1.0), "link 'c' has a negative"),
    (dict(mass=np.nan), "mass of link 'c'"),
    (dict(com=[0, 0]), "com of link 'c'"),
    (dict(com=[0, np.inf, 0]), "com of link 'c'"),
    (dict(mass=1.0, inertia=np.array([[1.0, 0.5, 0], [0, 1, 0], [0, 0, 1]])), "link 'c'.*non-symmetric"),
])
def test_builder_bad_link_inertia(kwargs, match):
    with pytest.raises(ValueError, match=match):
        rbd.ModelBuilder().add_link("c", **kwargs)


@pytest.mark.parametrize("inertia", [np.diag([-1.0, 1.0, 1.0]), np.diag([1.0, 1.0, 3.0])])
def test_builder_inconsistent_inertia_warns_or_raises_when_strict(inertia):
    def builder():
        b = rbd.ModelBuilder()
        b.add_link("a")
        b.add_link("c", mass=1.0, inertia=inertia)
        b.add_joint("j", "revolute", "a", "c")
        return b
    with pytest.warns(UserWarning, match="inconsistent inertia.*'c'"):
        builder().build()
    with pytest.raises(ValueError, match="inconsistent inertia.*'c'"):
        builder().build(strict=True)


def test_builder_tree_errors():
    b = rbd.ModelBuilder()
    with pytest.raises(ValueError, match="no links"):
        b.build()
    b = _pendulum_builder()
    with pytest.raises(ValueError, match="several root links: 'a', 'b'"):
        b.build()
    b.add_joint("j1", "revolute", "a", "b")
    b.add_joint("j2", "revolute", "b", "a")
    with pytest.raises(ValueError, match="cycle"):
        b.build()


def test_builder_armature_damping_friction():
    """A number covers every velocity coordinate of its joint, or one number per coordinate."""
    b = rbd.ModelBuilder("joints")
    b.add_link("base")
    b.add_link("arm", mass=1.0, inertia=np.eye(3) * 0.1)
    b.add_link("hand", mass=1.0, inertia=np.eye(3) * 0.1)
    b.add_joint("hinge", "revolute", "base", "arm", armature=0.3, damping=[0.1])
    b.add_joint("wrist", "spherical", "arm", "hand", friction=[1.0, 2.0, 3.0], armature=0.2)
    model = b.build(floating_base=True)
    np.testing.assert_array_equal(model.armature, [0.0] * 6 + [0.3, 0.2, 0.2, 0.2])
    np.testing.assert_array_equal(model.damping, [0.0] * 6 + [0.1, 0.0, 0.0, 0.0])
    np.testing.assert_array_equal(model.friction, [0.0] * 6 + [0.0, 1.0, 2.0, 3.0])
    for kwargs, error, message in ((dict(armature=-1.0), ValueError, "armature of joint 'x' must be non-negative"),
                                   (dict(damping=[1.0, 2.0]), ValueError, "a number or 1 numbers"),
                                   (dict(friction=np.nan), ValueError, "finite"),
                                   (dict(friction="0.1"), TypeError, "friction of joint 'x'")):
        with pytest.raises(error, match=message):
            b.add_joint("x", "revolute", "base", "arm", **kwargs)
    with pytest.raises(ValueError, match="a fixed joint has no velocity coordinates"):
        b.add_joint("x", "fixed", "base", "arm", damping=1.0)


@pytest.mark.parametrize("shape", ["chain", "tree"])
def test_generated_robots_have_the_shape_they_claim(shape, backend):
    n = 37
    model = rbd.load_urdf(rbd.generated_urdf(n, shape))
    assert model.nbodies == model.nv == n
    # parents as the generator's rule gives them (link k on link k - 1, or on link k // 2; l0 is the base)
    names = list(model.body_names)
    for name, p in zip(names, model.parents):
        k = int(name[1:])
        want = k - 1 if shape == "chain" else k // 2
        assert (p < 0 and want == 0) or names[p] == "l%d" % want
    depth = [0] * n
    for i, p in enumerate(model.parents):
        depth[i] = 1 if p < 0 else depth[p] + 1
    assert max(depth) == (n if shape == "chain" else n.bit_length())
    rng = np.random.default_rng(3)
    q, v = rng.uniform(-1, 1, n), rng.normal(size=n)
    M = rbd.crba(model, q)  # every link moves: M is symmetric positive definite
    np.testing.assert_allclose(M, M.T, atol=1e-15)
    assert np.linalg.eigvalsh(M).min() > 0


def test_generated_robots_agree_with_pinocchio_on_the_same_text(backend):
    pin = pytest.importorskip("pinocchio")
    for shape in ("chain", "tree"):
        text = rbd.generated_urdf(20, shape)
        model, pm = rbd.load_urdf(text), pin.buildModelFromXML(text)
        pd = pm.createData()
        if list(model.joint_names) != [pm.names[i] for i in range(1, pm.njoints)]:
            pytest.skip("Pinocchio orders this tree's joints differently")
        rng = np.random.default_rng(4)
        q, v, a = rng.uniform(-1, 1, 20), rng.normal(size=20), rng.normal(size=20)
        np.testing.assert_allclose(rbd.rnea(model, q, v, a), pin.rnea(pm, pd, q, v, a), atol=1e-12)


@pytest.mark.parametrize("bad", [0, -3, 2.5, True, "10"])
def test_generated_robots_refuse_a_bad_size(bad):
    with pytest.raises(ValueError, match="n must be a positive integer"):
        rbd.generated_urdf(bad)
    with pytest.raises(ValueError, match="shape must be"):
        rbd.generated_urdf(5, "star")
