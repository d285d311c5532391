"""rbd against its peers, side by side: ``python asv_benchmarks/compare.py`` from the repository.

Times rbd's two backends against the rigid-body dynamics libraries installed
on this machine -- Pinocchio, pybullet, Modern Robotics, the Robotics Toolbox
for Python (roboticstoolbox-python) -- and prints a table of median times (µs)
and ratios rbd / peer (below 1: rbd is faster).  A peer that is not installed
is skipped with a note.

* Every contender runs in this one process, on the same URDF and the same
  states, converted once into the peer's layout before timing.
* Rounds are interleaved: each round times every row, alternating which
  contender of a pair goes first, so a noisy moment of the machine hits both
  sides; the table reports medians over the rounds.
* Every row is cross-checked: the last column is the largest difference
  between the two answers (in rbd's layout), so the table never compares two
  different computations.  The run fails (exit 1) when an answer differs.
"""
import argparse
import functools
import gc
import importlib
import importlib.metadata
import os
import platform
import re
import statistics
import sys
import tempfile
import textwrap
import time
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np

import rbd
from rbd import JointKind
from rbd import reference as rbd_numpy

# The layout maps and the robot finder are the tests' (tests/oracles): one copy of each.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from oracles.robot_data import example_robot_data_dir  # noqa: E402

try:
    import rbd_c
except ImportError:  # rbd runs on NumPy only: the compiled rows are skipped
    rbd_c = None


def _optional_import(name):
    try:
        return importlib.import_module(name)
    except ImportError:
        return None


# ------------------------------------------------------------------------------------------
# Robots: rbd's samples, and example-robot-data's URDFs when it is installed
# ------------------------------------------------------------------------------------------
#: name -> (URDF path under example-robot-data's robots/ directory, floating base?)
EXAMPLE_ROBOTS = {  # (Solo12, UR5: the contact rows' quadruped and arm)
    "panda": ("panda_description/urdf/panda.urdf", False),
    "talos": ("talos_data/robots/talos_full_v2.urdf", True),  # the full Talos: 44 joints + free flyer
    "ur5": ("ur_description/urdf/ur5_robot.urdf", False),
    "solo12": ("solo_description/robots/solo12.urdf", True),
}
DEFAULT_ROBOTS = ("panda", "talos")


@dataclass
class Robot:
    name: str
    urdf: str            # the file every library loads
    floating_base: bool
    model: rbd.Model


#: generated robots (``rbd.generated_urdf``): "chain<n>" or "tree<n>", e.g. chain100
GENERATED = re.compile(r"^(chain|tree)([1-9][0-9]*)$")


def robot_names():
    return sorted(set(rbd.sample_model_names()) | set(EXAMPLE_ROBOTS))


def is_robot_name(name):
    return name in robot_names() or GENERATED.match(name) is not None


@functools.lru_cache(maxsize=None)
def _generated_directory():
    return Path(tempfile.mkdtemp(prefix="rbd-compare-"))


def load_robot(name):
    """A sample robot, a generated one or an example-robot-data robot; None when
    its URDF is not installed."""
    generated = GENERATED.match(name)
    if generated:  # written to a file: every library loads the same text
        path = _generated_directory() / (name + ".urdf")
        path.write_text(rbd.generated_urdf(int(generated.group(2)), generated.group(1)))
        return Robot(name, str(path), False, rbd.load_urdf(str(path)))
    if name in rbd.sample_model_names():
        model = rbd.sample_model(name)
        floating_base = int(model.joint_kinds[0]) == JointKind.FREE
        return Robot(name, rbd.sample_model_path(name), floating_base, model)
    if name not in EXAMPLE_ROBOTS:
        raise ValueError("unknown robot %r; known: %s" % (name, ", ".join(robot_names())))
    directory = example_robot_data_dir()
    if directory is None:
        return None
    relative_path, floating_base = EXAMPLE_ROBOTS[name]
    path = directory / relative_path
    if not path.is_file():
        return None
    with warnings.catch_warnings():  # e.g. Panda's <mimic> finger: loaded as an independent joint
        warnings.simplefilter("ignore")
        model = rbd.load_urdf(str(path), floating_base=floating_base)
    return Robot(name, str(path), floating_base, model)


def random_state(model, rng, batch=None):
    """q, v, a (or tau): a random configuration and standard-normal velocities."""
    shape = (model.nv,) if batch is None else (batch, model.nv)
    q = rbd_numpy.random_configuration(model, rng, batch=batch)
    return q, rng.standard_normal(shape), rng.standard_normal(shape)


# ------------------------------------------------------------------------------------------
# Peers' layouts: joints matched by name
# ------------------------------------------------------------------------------------------
class PinocchioTwin:
    """The robot's URDF loaded by Pinocchio, and rbd's vectors in Pinocchio's layout,
    through the tests' adapter (``tests/oracles/pinocchio_adapter.ModelPair``): joints
    matched by name, quaternions ``[x, y, z, w]``, continuous joints ``[cos, sin]``.
    Every conversion takes leading batch dimensions."""

    def __init__(self, pin, robot, frames=()):
        from oracles.pinocchio_adapter import ModelPair
        self.pin = pin
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            self.pair = ModelPair(robot.name, robot.urdf, robot.floating_base, frames=frames)
        self.model, self.data = self.pair.pin_model, self.pair.pin_data
        self.q = self.pair.q_to_pin
        self.v = self.pair.v_to_pin
        self.v_back = self.pair.v_from_pin
        self.mass_matrix_back = self.pair.mass_matrix_from_pin

    def columns(self, x):
        """(N, n) samples as Pinocchio's batches want them: (n, N), Fortran order (one sample per column)."""
        return np.asfortranarray(x.T)

    def batch(self, q, v, a):
        """rbd's batch of q, v, a in Pinocchio's layout (``columns``), and a zero output of
        v's shape there: the arguments of ``rneaInParallel`` / ``abaInParallel``."""
        q_pin, v_pin, a_pin = (self.columns(x) for x in (self.q(q), self.v(v), self.v(a)))
        return q_pin, v_pin, a_pin, np.zeros_like(v_pin, order="F")


class PybulletTwin:
    """The robot's URDF in a DIRECT pybullet client (fixed base only: pybullet's
    floating-base inverse dynamics uses another base-velocity convention)."""

    def __init__(self, pybullet, robot):
        self.pb = pybullet
        self.client = pybullet.connect(pybullet.DIRECT)
        self.body = pybullet.loadURDF(robot.urdf, useFixedBase=True, flags=pybullet.URDF_USE_INERTIA_FROM_FILE,
                                      physicsClientId=self.client)
        pybullet.setGravity(*robot.model.gravity, physicsClientId=self.client)
        # pybullet's q and v list its movable joints in link order
        names = []
        for j in range(pybullet.getNumJoints(self.body, physicsClientId=self.client)):
            info = pybullet.getJointInfo(self.body, j, physicsClientId=self.client)
            if info[2] != pybullet.JOINT_FIXED:
                names.append(info[1].decode())
        ours = robot.model
        if sorted(names) != sorted(ours.joint_names):
            raise ValueError("%s: pybullet's joints %s differ from rbd's" % (robot.name, sorted(names)))
        self.index = np.array([names.index(n) for n in ours.joint_names])  # x_pb[index] = x_rbd

    def vector(self, x):
        out = np.empty(len(self.index))
        out[self.index] = x
        return out.tolist()

    def back(self, x):
        return np.asarray(x)[..., self.index]

    def matrix_back(self, m):
        return np.asarray(m)[np.ix_(self.index, self.index)]


# ------------------------------------------------------------------------------------------
# Modern Robotics: its UR5, and the same robot built in rbd
# ------------------------------------------------------------------------------------------
def _pose(rotation, translation):
    pose = np.eye(4)
    pose[:3, :3] = rotation
    pose[:3, 3] = translation
    return pose


def modern_robotics_ur5():
    """The UR5 of Modern Robotics' examples (Lynch & Park): home poses M_{i-1,i} of
    the link frames (each at its link's center of mass), spatial inertias G_i
    (angular part first) and the joints' screw axes S_i in the space frame."""
    mlist = [_pose(np.eye(3), [0, 0, 0.089159]),
             _pose([[0, 0, 1], [0, 1, 0], [-1, 0, 0]], [0.28, 0.13585, 0]),
             _pose(np.eye(3), [0, -0.1197, 0.395]),
             _pose([[0, 0, 1], [0, 1, 0], [-1, 0, 0]], [0, 0, 0.14225]),
             _pose(np.eye(3), [0, 0.093, 0]),
             _pose(np.eye(3), [0, 0, 0.09465]),
             _pose([[1, 0, 0], [0, 0, 1], [0, -1, 0]], [0, 0.0823, 0])]
    glist = [np.diag([0.010267495893, 0.010267495893, 0.00666, 3.7, 3.7, 3.7]),
             np.diag([0.22689067591, 0.22689067591, 0.0151074, 8.393, 8.393, 8.393]),
             np.diag([0.049443313556, 0.049443313556, 0.004095, 2.275, 2.275, 2.275]),
             np.diag([0.111172755531, 0.111172755531, 0.21942, 1.219, 1.219, 1.219]),
             np.diag([0.111172755531, 0.111172755531, 0.21942, 1.219, 1.219, 1.219]),
             np.diag([0.0171364731454, 0.0171364731454, 0.033822, 0.1879, 0.1879, 0.1879])]
    slist = np.array([[0, 0, 1, 0, 0, 0],
                      [0, 1, 0, -0.089159, 0, 0],
                      [0, 1, 0, -0.089159, 0, 0.425],
                      [0, 1, 0, -0.089159, 0, 0.81725],
                      [0, 0, -1, -0.10915, 0.81725, 0],
                      [0, 1, 0, 0.005491, 0, 0.81725]], dtype=float).T
    return mlist, glist, slist


def model_from_screws(mlist, glist, slist, name="ur5_modern_robotics"):
    """The rbd model of an open chain given the Modern Robotics way.

    rbd's joint frame i sits on screw axis S_i (at its point closest to the
    space origin, omega x v for a unit omega) with the axes of link frame {i};
    the link's center of mass, the origin of {i}, is then an offset in it.
    """
    builder = rbd.ModelBuilder(name)
    builder.add_link("base")
    parent = "base"
    world_from_link = np.eye(4)
    world_from_parent_joint = np.eye(4)
    for i, (inertia, screw) in enumerate(zip(glist, slist.T), start=1):
        world_from_link = world_from_link @ mlist[i - 1]
        omega, v = screw[:3], screw[3:]
        rotation = world_from_link[:3, :3]
        world_from_joint = _pose(rotation, np.cross(omega, v))
        builder.add_link("link%d" % i, mass=inertia[3, 3], com=rotation.T @ (world_from_link[:3, 3] - np.cross(omega, v)),
                         inertia=inertia[:3, :3])
        builder.add_joint("joint%d" % i, "revolute", parent=parent, child="link%d" % i,
                          origin=np.linalg.solve(world_from_parent_joint, world_from_joint), axis=rotation.T @ omega)
        parent, world_from_parent_joint = "link%d" % i, world_from_joint
    builder.add_frame("end_effector", parent, origin=np.linalg.solve(world_from_parent_joint, world_from_link @ mlist[-1]))
    return builder.build()


# ------------------------------------------------------------------------------------------
# Robotics Toolbox for Python: the same URDF through its own loader
# ------------------------------------------------------------------------------------------
def rtb_robot(rtb, robot):
    """The robot's URDF read by the Robotics Toolbox's loader, as an ``rtb.Robot``
    whose ``rne`` (and so ``inertia`` and ``accel``) computes that robot.

    ``Robot.rne`` of roboticstoolbox-python 1.5 gets two URDF features wrong, so
    the links are re-expressed, the robot unchanged (``tests/test_benchmarks.py``
    checks the result against rbd):

    * a joint whose parent link is fixed to another joint's link (Panda's
      fingers on ``panda_hand``) moves as if that fixed link were the joint's
      link: the fixed transforms are folded into the joint's ETS, and the joint
      hung on the moving link;
    * a joint about a negative axis (``ty(-q)``, the right finger) gets a motion
      subspace of the positive one: it becomes ``SE3(flip) ⊕ ty(q)``, its link
      frame turned by that half turn (the link's center of mass and inertia, and
      its children's ETS, follow).
    """
    from roboticstoolbox.ets.ET import ET
    from roboticstoolbox.ets.ETS import ETS
    from roboticstoolbox.models.URDF.URDFRobot import URDF_read

    directory = example_robot_data_dir()
    if directory is not None:  # its URDFs name meshes as package://example-robot-data/...
        from xacrodoc import packages
        packages.update_package_cache({"example-robot-data": str(directory.parent)})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        links, name, _ = URDF_read(robot.urdf)
        twin = rtb.Robot(links, name=name)  # assigns the joint indices, in rbd's order for these robots
    for link in twin.links:
        if link.isjoint and link.parent is not None and not link.parent.isjoint:
            fixed, ancestor = np.eye(4), link.parent
            while ancestor is not None and not ancestor.isjoint:
                fixed = ancestor.A().A @ fixed
                ancestor = ancestor.parent
            if ancestor is not None:  # below the root: rne ignores the fixed links above the first joint
                link.ets = ETS([ET.SE3(fixed)]) * link.ets
                link.parent = ancestor
    for link in twin.links:
        if link.isjoint and link.v.isflip:
            joint = link.v
            axis = joint.kind[1]
            half_turn = _pose(np.diag([1.0, -1.0, -1.0] if axis != "x" else [-1.0, 1.0, -1.0]), np.zeros(3))
            ets = [et for et in link.ets if not et.isjoint]
            link.ets = ETS(ets + [ET.SE3(half_turn), getattr(ET, joint.kind)(jindex=joint.jindex, qlim=joint.qlim)])
            rotation = half_turn[:3, :3]  # its own inverse
            link.r = rotation @ np.asarray(link.r)
            link.I = rotation @ link.I @ rotation
            for child in twin.links:
                if child.parent is link:
                    child.ets = ETS([ET.SE3(half_turn)]) * child.ets
    joints = sorted((link for link in twin.links if link.isjoint), key=lambda link: link.jindex)
    names = [link._joint_name for link in joints]
    if names != list(robot.model.joint_names):
        raise ValueError("%s: rtb orders the joints %s, rbd %s" % (robot.name, names, list(robot.model.joint_names)))
    return twin


# ------------------------------------------------------------------------------------------
# Rows of the table, and the interleaved timing
# ------------------------------------------------------------------------------------------
@dataclass
class Contender:
    label: str                      # e.g. "rbd cython", "pin.rnea"
    run: Callable[[], object]       # the timed operation; returns its answer
    to_rbd: Callable = lambda x: x  # its answer in rbd's layout (not timed)


@dataclass
class Row:
    case: str
    robot: str
    ours: Contender
    peer: Contender
    samples_per_call: int = 1  # times are reported per sample
    ours_us: float = float("nan")
    peer_us: float = float("nan")
    max_difference: float = float("nan")
    agrees: bool = True

    @property
    def ratio(self):
        return self.ours_us / self.peer_us


def cross_check(row):
    """Largest |difference| of the two answers; they must agree to 1e-7 relative."""
    ours = np.asarray(row.ours.to_rbd(row.ours.run()), dtype=float)
    theirs = np.asarray(row.peer.to_rbd(row.peer.run()), dtype=float)
    if ours.shape != theirs.shape:
        row.agrees = False
        return
    row.max_difference = float(np.max(np.abs(ours - theirs)))
    row.agrees = row.max_difference <= 1e-7 * (1.0 + float(np.max(np.abs(theirs))))


def _seconds_per_call(function, number):
    gc_was_enabled = gc.isenabled()
    gc.disable()  # as timeit: a collection must not land in one contender's sample
    try:
        start = time.perf_counter()
        for _ in range(number):
            function()
        return (time.perf_counter() - start) / number
    finally:
        if gc_was_enabled:
            gc.enable()


def _calls_per_sample(function, min_seconds):
    """How many calls make one timing sample last at least ``min_seconds``."""
    number = 1
    while True:
        elapsed = _seconds_per_call(function, number) * number
        if elapsed >= min_seconds:
            return number
        number *= max(2, min(10, int(min_seconds / max(elapsed, 1e-9)) + 1))


def measure(rows, rounds, min_seconds, progress=None):
    """Fill in each row's median µs per sample, the rounds interleaved across rows
    and the order within a pair alternated."""
    numbers = [(_calls_per_sample(r.ours.run, min_seconds), _calls_per_sample(r.peer.run, min_seconds))
               for r in rows]
    times = [([], []) for _ in rows]
    for round_index in range(rounds):
        for row, (n_ours, n_peer), (ours, theirs) in zip(rows, numbers, times):
            pair = [(row.ours.run, n_ours, ours), (row.peer.run, n_peer, theirs)]
            if round_index % 2:
                pair.reverse()
            for function, number, samples in pair:
                samples.append(_seconds_per_call(function, number))
        if progress:
            progress("round %d/%d done" % (round_index + 1, rounds))
    for row, (ours, theirs) in zip(rows, times):
        row.ours_us = statistics.median(ours) * 1e6 / row.samples_per_call
        row.peer_us = statistics.median(theirs) * 1e6 / row.samples_per_call


# ------------------------------------------------------------------------------------------
# The comparisons
# ------------------------------------------------------------------------------------------
def rbd_backends():
    """(label, module) of rbd's backends present here, the compiled one first."""
    backends = [("rbd cython", rbd_c)] if rbd_c is not None else []
    return backends + [("rbd numpy", rbd_numpy)]


def dynamics_calls(impl, model, q, v, a, tau):
    """One backend's single calls of RNEA, CRBA and ABA on a state, by case."""
    return {"rnea": lambda: impl.rnea(model, q, v, a),
            "crba": lambda: impl.crba(model, q),
            "aba": lambda: impl.aba(model, q, v, tau)}


def pinocchio_rows(pin, robot, rng):
    """Single calls of RNEA, CRBA and ABA: each rbd backend against Pinocchio."""
    twin = PinocchioTwin(pin, robot)
    model = robot.model
    q, v, a = random_state(model, rng)
    q_pin, v_pin, a_pin = twin.q(q), twin.v(v), twin.v(a)
    tau = rbd_numpy.rnea(model, q, v, a)  # so that ABA runs on a meaningful torque
    tau_pin = twin.v(tau)
    peers = {
        "rnea": Contender("pin.rnea", lambda: pin.rnea(twin.model, twin.data, q_pin, v_pin, a_pin), twin.v_back),
        "crba": Contender("pin.crba", lambda: pin.crba(twin.model, twin.data, q_pin), twin.mass_matrix_back),
        "aba": Contender("pin.aba", lambda: pin.aba(twin.model, twin.data, q_pin, v_pin, tau_pin), twin.v_back),
    }

    rows = [Row(case, robot.name, Contender(label, dynamics_calls(impl, model, q, v, a, tau)[case]), peers[case])
            for case in ("rnea", "crba", "aba") for label, impl in rbd_backends()]
    if rbd_c is not None:  # with out= (Pinocchio writes into its Data: the same job, nothing allocated)
        torques, accelerations, mass_matrix = np.empty(model.nv), np.empty(model.nv), np.empty((model.nv, model.nv))
        into = {"rnea": lambda: rbd_c.rnea(model, q, v, a, out=torques),
                "crba": lambda: rbd_c.crba(model, q, out=mass_matrix),
                "aba": lambda: rbd_c.aba(model, q, v, tau, out=accelerations)}
        rows += [Row(case, robot.name, Contender("rbd cython, out=", into[case]), peers[case]) for case in into]
    return rows


def kinematics_rows(pin, robot, rng):
    """rbd_c's kinematics, gravity and nonlinear effects against Pinocchio's
    (forwardKinematics; forwardKinematics + updateFramePlacement of one frame;
    computeFrameJacobian; centerOfMass; jacobianCenterOfMass;
    computeGeneralizedGravity; nonLinearEffects; integrate), and the same calls writing into
    an ``out=`` array (Pinocchio writes into its Data: no allocation either)."""
    if rbd_c is None:
        return []
    model = robot.model
    frame = model.link_frame_names[-1]  # the end effector, or a foot
    pair = PinocchioTwin(pin, robot, frames=(frame,)).pair
    pm, pd = pair.pin_model, pair.pin_data
    q, v, _ = random_state(model, rng)
    Q, V = pair.q_to_pin(q), pair.v_to_pin(v)
    joints = [pair.pin_joint_id(b) for b in range(model.nbodies)]
    fid = pair.pin_frame_id(frame)
    nv = model.nv

    def pin_fk():
        pin.forwardKinematics(pm, pd, Q)
        return pd

    def pin_frame():
        pin.forwardKinematics(pm, pd, Q)
        return pin.updateFramePlacement(pm, pd, fid)

    placements, placement, jacobian = np.empty((model.nbodies, 4, 4)), np.empty((4, 4)), np.empty((6, nv))
    torques, com, com_jacobian = np.empty(nv), np.empty(3), np.empty((3, nv))
    configuration = np.empty(model.nq)
    cases = [
        ("forward_kinematics", lambda: rbd_c.forward_kinematics(model, q),
         lambda: rbd_c.forward_kinematics(model, q, out=placements),
         Contender("pin.forwardKinematics", pin_fk, lambda d: np.array([d.oMi[j].homogeneous for j in joints]))),
        ("frame_placement", lambda: rbd_c.frame_placement(model, q, frame),
         lambda: rbd_c.frame_placement(model, q, frame, out=placement),
         Contender("pin.forwardKinematics + updateFramePlacement", pin_frame, lambda m: m.homogeneous)),
        ("frame_jacobian", lambda: rbd_c.frame_jacobian(model, q, frame),
         lambda: rbd_c.frame_jacobian(model, q, frame, out=jacobian),
         Contender("pin.computeFrameJacobian", lambda: pin.computeFrameJacobian(pm, pd, Q, fid),
                   pair.columns_from_pin)),
        ("center_of_mass", lambda: rbd_c.center_of_mass(model, q), lambda: rbd_c.center_of_mass(model, q, out=com),
         Contender("pin.centerOfMass", lambda: pin.centerOfMass(pm, pd, Q))),
        ("com_jacobian", lambda: rbd_c.com_jacobian(model, q), lambda: rbd_c.com_jacobian(model, q, out=com_jacobian),
         Contender("pin.jacobianCenterOfMass", lambda: pin.jacobianCenterOfMass(pm, pd, Q), pair.columns_from_pin)),
        ("gravity", lambda: rbd_c.gravity(model, q), lambda: rbd_c.gravity(model, q, out=torques),
         Contender("pin.computeGeneralizedGravity", lambda: pin.computeGeneralizedGravity(pm, pd, Q), pair.v_from_pin)),
        ("integrate", lambda: rbd_c.integrate(model, q, v), lambda: rbd_c.integrate(model, q, v, out=configuration),
         Contender("pin.integrate", lambda: pin.integrate(pm, Q, V), pair.q_from_pin)),
        ("nonlinear_effects", lambda: rbd_c.nonlinear_effects(model, q, v),
         lambda: rbd_c.nonlinear_effects(model, q, v, out=torques),
         Contender("pin.nonLinearEffects", lambda: pin.nonLinearEffects(pm, pd, Q, V), pair.v_from_pin)),
    ]
    rows = []
    for case, ours, ours_out, peer in cases:
        rows.append(Row(case, robot.name, Contender("rbd cython", ours), peer))
        if ours_out is not None:
            rows.append(Row(case, robot.name, Contender("rbd cython, out=", ours_out), peer))
    return rows


def derivative_rows(pin, robot, rng, batch):
    """The derivatives of the dynamics and M^-1: single calls of each rbd backend
    against Pinocchio's (computeRNEADerivatives, computeABADerivatives,
    computeMinverse), and rbd_c's batch of ``batch`` samples on one thread, per
    sample, against a loop of Pinocchio's single calls."""
    twin = PinocchioTwin(pin, robot)
    model, pm, pd = robot.model, twin.model, twin.data
    q, v, a = random_state(model, rng)
    tau = rbd_numpy.rnea(model, q, v, a)
    q_pin, v_pin, a_pin, tau_pin = twin.q(q), twin.v(v), twin.v(a), twin.v(tau)
    matrices_back = lambda ms: np.stack([twin.pair.matrix_from_pin(np.asarray(m)) for m in ms])  # noqa: E731
    peers = {
        "rnea_derivatives": Contender("pin.computeRNEADerivatives",
                                      lambda: pin.computeRNEADerivatives(pm, pd, q_pin, v_pin, a_pin), matrices_back),
        "aba_derivatives": Contender("pin.computeABADerivatives",
                                     lambda: pin.computeABADerivatives(pm, pd, q_pin, v_pin, tau_pin), matrices_back),
        "inverse_mass_matrix": Contender("pin.computeMinverse", lambda: pin.computeMinverse(pm, pd, q_pin),
                                         twin.mass_matrix_back),
    }
    calls = lambda impl: {"rnea_derivatives": lambda: impl.rnea_derivatives(model, q, v, a),  # noqa: E731
                          "aba_derivatives": lambda: impl.aba_derivatives(model, q, v, tau),
                          "inverse_mass_matrix": lambda: impl.inverse_mass_matrix(model, q)}
    rows = [Row(case, robot.name, Contender(label, calls(impl)[case]), peers[case])
            for case in peers for label, impl in rbd_backends()]
    if rbd_c is None:
        return rows
    # with out= (Pinocchio writes into its Data: the same job, nothing allocated)
    square = lambda: np.empty((model.nv, model.nv))  # noqa: E731
    three, one = (square(), square(), square()), square()
    into = {"rnea_derivatives": lambda: rbd_c.rnea_derivatives(model, q, v, a, out=three),
            "aba_derivatives": lambda: rbd_c.aba_derivatives(model, q, v, tau, out=three),
            "inverse_mass_matrix": lambda: rbd_c.inverse_mass_matrix(model, q, out=one)}
    rows += [Row(case, robot.name, Contender("rbd cython, out=", into[case]), peers[case]) for case in peers]
    qb, vb, ab = random_state(model, rng, batch=batch)
    taub = rbd_numpy.rnea(model, qb, vb, ab)
    qb_pin, vb_pin, ab_pin, taub_pin = twin.q(qb), twin.v(vb), twin.v(ab), twin.v(taub)
    batched = {"rnea_derivatives": (lambda: rbd_c.rnea_derivatives(model, qb, vb, ab),
                                    lambda k: pin.computeRNEADerivatives(pm, pd, qb_pin[k], vb_pin[k], ab_pin[k])),
               "aba_derivatives": (lambda: rbd_c.aba_derivatives(model, qb, vb, taub),
                                   lambda k: pin.computeABADerivatives(pm, pd, qb_pin[k], vb_pin[k], taub_pin[k])),
               "inverse_mass_matrix": (lambda: rbd_c.inverse_mass_matrix(model, qb),
                                       lambda k: (pin.computeMinverse(pm, pd, qb_pin[k]),))}
    for case, (ours, theirs) in batched.items():
        def pin_loop(theirs=theirs):
            return [[np.array(m) for m in theirs(k)] for k in range(batch)]
        if case == "inverse_mass_matrix":  # (Pinocchio fills M^-1's upper triangle: mass_matrix_back mirrors it)
            back = lambda loop: np.stack([twin.mass_matrix_back(ms[0]) for ms in loop])  # noqa: E731
        else:
            back = lambda loop: np.stack([matrices_back(ms) for ms in loop], axis=1)  # noqa: E731
        peer = Contender("%s loop" % peers[case].label, pin_loop, back)
        rows.append(Row("batched %s N=%d" % (case, batch), robot.name,
                        Contender("rbd cython, 1 thr", _with_threads(1, ours), np.stack), peer, samples_per_call=batch))
    return rows


#: The contacts of the contact rows, per robot: (frame, dim); point contacts in
#: local_world_aligned axes, flat ones in local axes (as Pinocchio's rows are set up).
CONTACT_FEET = {
    "solo12": [(foot, 3) for foot in ("FL_FOOT", "FR_FOOT", "HL_FOOT", "HR_FOOT")],
    "talos": [("left_sole_link", 6), ("right_sole_link", 6)],
    "panda": [("panda_hand_tcp", 3)],
    "ur5": [("tool0", 3)],
}


def contact_rows(pin, robot, rng, batch):
    """constrained_dynamics and impulse_dynamics (the robot on its feet, or an arm
    holding its tool) against Pinocchio's constraintDynamics and impulseDynamics after
    initConstraintDynamics: single calls, and rbd_c's batch on one thread per sample
    against a loop; the joint torque regressor and the kinematic Hessian of a frame
    against computeJointTorqueRegressor and computeJointKinematicHessians +
    getJointKinematicHessian."""
    if robot.name not in CONTACT_FEET:
        return []
    from oracles.pinocchio_adapter import constraint_models
    twin = PinocchioTwin(pin, robot)
    model, pm, pd = robot.model, twin.model, twin.data
    contacts = [rbd.Contact(frame, dim, "local_world_aligned" if dim == 3 else "local")
                for frame, dim in CONTACT_FEET[robot.name]]
    models, datas = constraint_models(pm, contacts)
    pin.initConstraintDynamics(pm, pd, models, datas)
    exact = pin.ProximalSettings(1e-14, 0.0, 1)
    q, v, a = random_state(model, rng)
    tau = rng.standard_normal(model.nv)
    q_pin, v_pin, a_pin, tau_pin = twin.q(q), twin.v(v), twin.v(a), twin.v(tau)
    both = lambda answer: np.concatenate([np.ravel(x) for x in answer])  # noqa: E731
    joint = model.joint_names[-1]
    joint_id = pm.getJointId(joint)
    columns = [c for name in model.joint_names for c in range(10 * (pm.getJointId(name) - 1), 10 * pm.getJointId(name))]
    perm = twin.pair.v_perm

    def constrained_pin():
        return twin.v_back(pin.constraintDynamics(pm, pd, q_pin, v_pin, tau_pin, models, datas, exact)), pd.lambda_c

    def impulse_pin():
        return twin.v_back(pin.impulseDynamics(pm, pd, q_pin, v_pin, models, datas, 0.0, exact)), pd.impulse_c

    def hessian_pin():
        pin.computeJointJacobians(pm, pd, q_pin)
        pin.computeJointKinematicHessians(pm, pd, q_pin)
        return pin.getJointKinematicHessian(pm, pd, joint_id, pin.LOCAL)

    def hessian_back(raw):  # (the binding shows Eigen's column-major tensor with row-major strides)
        raw = np.asarray(raw)
        return raw.ravel(order="K").reshape(raw.shape, order="F")[:, perm][:, :, perm]

    peers = {
        "constrained_dynamics": Contender("pin.constraintDynamics", constrained_pin, both),
        "impulse_dynamics": Contender("pin.impulseDynamics", impulse_pin, both),
        "kinematic_hessian": Contender("pin.computeJointKinematicHessians", hessian_pin, hessian_back),
        "joint_torque_regressor": Contender(
            "pin.computeJointTorqueRegressor", lambda: pin.computeJointTorqueRegressor(pm, pd, q_pin, v_pin, a_pin),
            lambda Y: twin.v_back(np.asarray(Y).T).T[:, columns]),
    }
    ours = {
        "constrained_dynamics": lambda: rbd.constrained_dynamics(model, q, v, tau, contacts),
        "impulse_dynamics": lambda: rbd.impulse_dynamics(model, q, v, contacts),
        "kinematic_hessian": lambda: rbd.kinematic_hessian(model, q, model.joint_frame(joint), "local"),
        "joint_torque_regressor": lambda: rbd.joint_torque_regressor(model, q, v, a),
    }
    label = "rbd %s" % rbd.backend
    rows = [Row(case, robot.name, Contender(label, ours[case], both if case.endswith("dynamics") else (lambda x: x)),
                peers[case]) for case in ours]
    if rbd_c is None or rbd.backend != "cython":
        return rows
    qb, vb, _ = random_state(model, rng, batch=batch)
    taub = rng.standard_normal((batch, model.nv))
    qb_pin, vb_pin, taub_pin = twin.q(qb), twin.v(vb), twin.v(taub)

    def constrained_loop():
        return [(twin.v_back(pin.constraintDynamics(pm, pd, qb_pin[k], vb_pin[k], taub_pin[k], models, datas, exact)),
                 pd.lambda_c.copy()) for k in range(batch)]

    def impulse_loop():
        return [(twin.v_back(pin.impulseDynamics(pm, pd, qb_pin[k], vb_pin[k], models, datas, 0.0, exact)),
                 pd.impulse_c.copy()) for k in range(batch)]

    batched = {"constrained_dynamics": (lambda: rbd.constrained_dynamics(model, qb, vb, taub, contacts),
                                        constrained_loop),
               "impulse_dynamics": (lambda: rbd.impulse_dynamics(model, qb, vb, contacts), impulse_loop)}
    for case, (ours_batch, loop) in batched.items():
        rows.append(Row("batched %s N=%d" % (case, batch), robot.name,
                        Contender("rbd cython, 1 thr", _with_threads(1, ours_batch),
                                  lambda out: np.concatenate([x.reshape(batch, -1) for x in out], axis=1)),
                        Contender("%s loop" % peers[case].label, loop,
                                  lambda answers: np.stack([both(answer) for answer in answers])),
                        samples_per_call=batch))
    return rows


def _with_threads(n, function):
    """``function`` run with rbd_c's batches on ``n`` threads."""
    def run():
        previous = rbd_c.get_num_threads()
        rbd_c.set_num_threads(n)
        try:
            return function()
        finally:
            rbd_c.set_num_threads(previous)
    return run


def batched_rows(pin, robot, rng, batch):
    """RNEA, ABA and CRBA on ``batch`` samples at once, per sample.  RNEA: rbd's NumPy
    batch against a loop of Pinocchio's single calls.  Each: rbd_c's batch (blocks of
    samples in SIMD lanes, rbd_c.simd()) against ``pin.rneaInParallel`` /
    ``pin.abaInParallel`` on the same numbers of threads, and, for CRBA (Pinocchio has
    no batched CRBA), against one ``pin.crba`` call per sample on one thread."""
    twin = PinocchioTwin(pin, robot)
    model = robot.model
    q, v, a = random_state(model, rng, batch=batch)
    q_pin, v_pin, a_pin, out_pin = twin.batch(q, v, a)

    def pin_loop():
        for k in range(batch):
            out_pin[:, k] = pin.rnea(twin.model, twin.data, q_pin[:, k], v_pin[:, k], a_pin[:, k])
        return out_pin

    def pin_parallel(function, threads):
        pool = pin.ModelPool(twin.model, threads)  # one model/data pair per thread

        def run():
            function(threads, pool, q_pin, v_pin, a_pin, out_pin)
            return np.array(out_pin)
        return run

    def pin_crba_loop():
        return [np.array(pin.crba(twin.model, twin.data, q_pin[:, k])) for k in range(batch)]

    back = lambda x: twin.v_back(x.T)  # noqa: E731
    rows = [Row("batched rnea N=%d" % batch, robot.name,
                Contender("rbd numpy batch", lambda: rbd_numpy.rnea(model, q, v, a)),
                Contender("pin.rnea loop", pin_loop, back), samples_per_call=batch)]
    if rbd_c is not None:
        all_threads = os.cpu_count() or 1
        for case, ours, theirs in (("rnea", lambda: rbd_c.rnea(model, q, v, a), pin.rneaInParallel),
                                   ("aba", lambda: rbd_c.aba(model, q, v, a), pin.abaInParallel)):
            for threads in sorted({1, all_threads}):
                rows.append(Row("batched %s N=%d" % (case, batch), robot.name,
                                Contender("rbd cython, %d thr" % threads, _with_threads(threads, ours)),
                                Contender("pin.%sInParallel, %d thr" % (case, threads),
                                          pin_parallel(theirs, threads), back),
                                samples_per_call=batch))
        rows.append(Row("batched crba N=%d" % batch, robot.name,
                        Contender("rbd cython, 1 thr", _with_threads(1, lambda: rbd_c.crba(model, q))),
                        Contender("pin.crba loop", pin_crba_loop,
                                  lambda ms: np.stack([twin.mass_matrix_back(m) for m in ms])),
                        samples_per_call=batch))
    return rows


def thread_scaling_table(robot_names_, batch, pairs=21, seed=0):
    """Two threads against one on batched RNEA and ABA, for rbd_c and for Pinocchio's
    ``*InParallel``: each pair times about 5 ms of calls on one thread and as many on two,
    back to back (the order alternating, each after an untimed call), and the table gives
    the median of the pairs' ratios.  On a shared machine a thread's speed drifts from one
    second to the next; two timings taken milliseconds apart see the same machine, where
    the batched rows above (medians of rounds taken seconds apart) may not.  A ratio well under 2 for both libraries at once
    says the second core was busy with something else."""
    pin = _optional_import("pinocchio")
    threads = min(2, os.cpu_count() or 1)
    if rbd_c is None or threads < 2:
        return "(two threads against one: needs rbd_c and two cores)"
    rng = np.random.default_rng(seed)
    lines = ["%-10s %-6s %14s %14s" % ("robot", "call", "rbd_c 2/1 thr", "pin 2/1 thr")]
    for name in robot_names_:
        robot = load_robot(name)
        if robot is None:
            continue
        model = robot.model
        q, v, a = random_state(model, rng, batch=batch)
        out = np.empty((batch, model.nv))
        twin = PinocchioTwin(pin, robot) if pin is not None else None
        if twin is not None:
            q_pin, v_pin, a_pin, out_pin = twin.batch(q, v, a)
            pools = {n: pin.ModelPool(twin.model, n) for n in (1, threads)}
        for case in ("rnea", "aba"):
            ours = getattr(rbd_c, case)

            def rbd_call(n, ours=ours):
                return _with_threads(n, lambda: ours(model, q, v, a, out=out))()
            callers = [rbd_call]
            if twin is not None:
                theirs = getattr(pin, case + "InParallel")

                def pin_call(n, theirs=theirs):
                    return theirs(n, pools[n], q_pin, v_pin, a_pin, out_pin)
                callers.append(pin_call)
            speedups = []
            for call in callers:
                number = _calls_per_sample(lambda: call(1), 0.005)
                ratios = []
                for k in range(pairs):
                    timed = {}
                    for n in ((1, threads) if k % 2 else (threads, 1)):
                        call(n)  # (untimed: wakes a sleeping thread team, as a steady stream of batches keeps it)
                        timed[n] = _seconds_per_call(lambda: call(n), number)
                    ratios.append(timed[1] / timed[threads])
                speedups.append("%13.2fx" % statistics.median(ratios))
            lines.append("%-10s %-6s %14s %14s" % (robot.name, case, speedups[0],
                                                    speedups[1] if len(speedups) > 1 else "-"))
    return "\n".join(lines)


def pybullet_rows(pybullet, robot, rng):
    """RNEA and the mass matrix: rbd's compiled (else NumPy) backend against pybullet."""
    twin = PybulletTwin(pybullet, robot)
    model = robot.model
    q, v, a = random_state(model, rng)
    q_pb, v_pb, a_pb = twin.vector(q), twin.vector(v), twin.vector(a)
    label, impl = rbd_backends()[0]
    body, client = twin.body, twin.client
    return [
        Row("rnea", robot.name, Contender(label, lambda: impl.rnea(model, q, v, a)),
            Contender("pybullet InverseDynamics",
                      lambda: pybullet.calculateInverseDynamics(body, q_pb, v_pb, a_pb, physicsClientId=client),
                      twin.back)),
        Row("crba", robot.name, Contender(label, lambda: impl.crba(model, q)),
            Contender("pybullet MassMatrix", lambda: pybullet.calculateMassMatrix(body, q_pb, physicsClientId=client),
                      twin.matrix_back)),
    ]


def modern_robotics_rows(mr, rng):
    """RNEA on Modern Robotics' own UR5: each rbd backend against ``InverseDynamics``
    (the same robot, built in rbd from MR's parameters)."""
    mlist, glist, slist = modern_robotics_ur5()
    model = model_from_screws(mlist, glist, slist)
    q, v, a = random_state(model, rng)
    gravity, no_tip_wrench = np.array(model.gravity, dtype=float), np.zeros(6)
    peer = Contender("mr.InverseDynamics",
                     lambda: mr.InverseDynamics(q, v, a, gravity, no_tip_wrench, mlist, glist, slist))
    return [Row("rnea", "ur5 (MR)", Contender(label, lambda impl=impl: impl.rnea(model, q, v, a)), peer)
            for label, impl in reversed(rbd_backends())]  # NumPy first: the like-for-like row


def rtb_rows(rtb, robot, rng):
    """RNEA, the mass matrix and forward dynamics: each rbd backend against the
    Robotics Toolbox on the same URDF.  Its ``Robot.rne`` is Python (spatialmath
    objects; the toolbox's C Newton-Euler serves only its DH robots),
    ``inertia`` is n calls of it and ``accel`` solves with that matrix."""
    twin = rtb_robot(rtb, robot)
    model = robot.model
    q, v, a = random_state(model, rng)
    tau = rbd_numpy.rnea(model, q, v, a)
    gravity = np.array(model.gravity, dtype=float)
    peers = {
        "rnea": Contender("rtb.rne (Python)", lambda: twin.rne(q, v, a, gravity=gravity)),
        "crba": Contender("rtb.inertia (Python)", lambda: twin.inertia(q)),
        "aba": Contender("rtb.accel (Python)", lambda: twin.accel(q, v, tau, gravity=gravity)),
    }

    return [Row(case, robot.name, Contender(label, dynamics_calls(impl, model, q, v, a, tau)[case]), peers[case])
            for case in ("rnea", "crba", "aba")
            for label, impl in reversed(rbd_backends())]  # NumPy first: the like-for-like row


def _fixed_base(robots, peer, notes):
    """The fixed-base robots among ``robots``; a note for each floating-base one ``peer`` skips."""
    for robot in robots:
        if robot.floating_base:
            notes.append("%s: %s is compared on fixed-base robots only" % (robot.name, peer))
    return [robot for robot in robots if not robot.floating_base]


def build_rows(robot_names_, batch, notes, seed=0):
    rng = np.random.default_rng(seed)
    pin = _optional_import("pinocchio")
    pybullet = _optional_import("pybullet")
    mr = _optional_import("modern_robotics")
    rtb = _optional_import("roboticstoolbox")
    if rbd_c is None:
        notes.append("rbd_c (the compiled backend) is not built: rbd's compiled rows are skipped")
    if pin is None:
        notes.append("Pinocchio is not installed (pip install pin): its rows are skipped")
    if pybullet is None:
        notes.append("pybullet is not installed (pip install pybullet): its rows are skipped")
    if mr is None:
        notes.append("Modern Robotics is not installed (pip install modern-robotics): its rows are skipped")
    if rtb is None:
        notes.append("the Robotics Toolbox is not installed (pip install roboticstoolbox-python): its rows are skipped")
    robots = []
    for name in robot_names_:
        robot = load_robot(name)
        if robot is None:
            notes.append("%s: example-robot-data is not installed (pip install example-robot-data): skipped" % name)
        else:
            robots.append(robot)
    rows = []
    if pin is not None:
        for robot in robots:
            rows += pinocchio_rows(pin, robot, rng)
            rows += kinematics_rows(pin, robot, rng)
    if pybullet is not None:
        for robot in _fixed_base(robots, "pybullet", notes):
            rows += pybullet_rows(pybullet, robot, rng)
    if mr is not None:
        rows += modern_robotics_rows(mr, rng)
    if rtb is not None:
        for robot in _fixed_base(robots, "the Robotics Toolbox", notes):
            rows += rtb_rows(rtb, robot, rng)
    if pin is not None:
        for robot in robots:
            rows += batched_rows(pin, robot, rng, batch)
        for robot in robots:
            rows += derivative_rows(pin, robot, rng, min(batch, 100))
        for robot in robots:
            rows += contact_rows(pin, robot, rng, min(batch, 100))
    return rows


# ------------------------------------------------------------------------------------------
# Growth with the robot
# ------------------------------------------------------------------------------------------
#: the generated robots compared with Pinocchio (its Data grows as n^3 on a chain: 1.8 GB at 300)
GROWTH_ROBOTS = tuple("%s%d" % (shape, n) for shape in ("chain", "tree") for n in (10, 100, 300))
#: the sizes rbd runs alone, and the one the time per body is compared with
SCALING_SIZES = (100, 1000, 10000)


def growth_rows(robot_names_, notes, seed=0):
    """rbd_c's RNEA, CRBA and ABA against Pinocchio's on the generated robots."""
    pin = _optional_import("pinocchio")
    if pin is None or rbd_c is None:
        notes.append("the growth comparison needs Pinocchio and rbd_c: skipped")
        return []
    rng = np.random.default_rng(seed)
    rows = []
    for name in robot_names_:
        rows += [row for row in pinocchio_rows(pin, load_robot(name), rng) if row.ours.label == "rbd cython"]
    return rows


def scaling_table(sizes=SCALING_SIZES, rounds=9, seed=0):
    """rbd_c alone on chains and binary trees of ``sizes`` bodies: µs per body of
    RNEA, ABA and forward kinematics, and that time relative to the smallest size's
    (1.0: linear in the number of bodies)."""
    rng = np.random.default_rng(seed)
    cases = ("rnea", "aba", "forward_kinematics")
    lines = ["robot        bodies  " + "  ".join("%-22s" % ("%s µs/body (x %d)" % (case, sizes[0])) for case in cases)]
    timed = {}  # (shape, n, case) -> [call, calls per timing, best seconds per call]
    for shape in ("chain", "tree"):
        for n in sizes:
            model = rbd.load_urdf(rbd.generated_urdf(n, shape))
            q, v, a = random_state(model, rng)
            calls = {"rnea": lambda m=model, q=q, v=v, a=a: rbd_c.rnea(m, q, v, a),
                     "aba": lambda m=model, q=q, v=v, a=a: rbd_c.aba(m, q, v, a),
                     "forward_kinematics": lambda m=model, q=q: rbd_c.forward_kinematics(m, q)}
            for case, call in calls.items():
                timed[shape, n, case] = [call, _calls_per_sample(call, 0.02), float("inf")]
    for _ in range(rounds):  # every size in every round: a slow spell of the machine hits them all
        for entry in timed.values():
            entry[2] = min(entry[2], _seconds_per_call(entry[0], entry[1]))
    for shape in ("chain", "tree"):
        cells = {n: [] for n in sizes}
        for case in cases:
            first = timed[shape, sizes[0], case][2] * 1e6 / sizes[0]
            for n in sizes:
                per_body = timed[shape, n, case][2] * 1e6 / n
                cells[n].append("%-22s" % ("%.4f (x %.2f)" % (per_body, per_body / first)))
        lines += ["%-12s %6d  %s" % (shape, n, "  ".join(cells[n])) for n in sizes]
    return "\n".join(lines)


# ------------------------------------------------------------------------------------------
# Where a compiled call's time goes
# ------------------------------------------------------------------------------------------
#: the calls the split measures: name -> (arguments after the model, by state name)
SPLIT_CALLS = {
    "rnea": ("q", "v", "a"), "gravity": ("q",), "nonlinear_effects": ("q", "v"), "crba": ("q",),
    "aba": ("q", "v", "a"), "forward_kinematics": ("q",), "frame_placement": ("q", "frame"),
    "frame_jacobian": ("q", "frame"), "center_of_mass": ("q",), "com_jacobian": ("q",),
    "inverse_mass_matrix": ("q",), "rnea_derivatives": ("q", "v", "a"), "aba_derivatives": ("q", "v", "a"),
}


#: rbd_c._model._call_floor's stages: (label, stage, out=?)
FLOOR_STAGES = (("(floor) parse args", 0, False), ("(floor) + model lookup", 1, False),
                ("(floor) + call set-up", 2, False), ("(floor) + bare kernel", 4, True),
                ("(floor) + driver, out=", 3, True), ("(floor) + driver, alloc", 3, False))


def floor_by_stage(model, q, best):
    """(label, µs) of rbd_c's floor stage by stage (``rbd_c._model._call_floor``: what a call
    costs before its arithmetic), then Pinocchio's floor (``updateFramePlacement`` of the
    universe frame on its sample manipulator: a bound call that does almost nothing) when
    Pinocchio is installed, timed in the same process."""
    from rbd_c._model import _call_floor
    one = np.empty(1)
    rows = [(label, best(lambda stage=stage, out=(one if into else None): _call_floor(model, q, stage, out)))
            for label, stage, into in FLOOR_STAGES]
    pin = _optional_import("pinocchio")
    if pin is not None:
        pm = pin.buildSampleModelManipulator()
        pd = pm.createData()
        rows.append(("(pin floor) a bound call", best(lambda: pin.updateFramePlacement(pm, pd, 0))))
    return rows


def _fixed_call(function, model, args, out=None):
    """function(model, *args[, out=out]) as a call of fixed arity, as a user writes it:
    ``*args`` and a keyword in one call build a tuple and a dict each time (0.1 us, most of
    a small call's floor, which the split's out= column used to show as its own cost)."""
    if len(args) == 1:
        (x,) = args
        return (lambda: function(model, x)) if out is None else (lambda: function(model, x, out=out))
    if len(args) == 2:
        x, y = args
        return (lambda: function(model, x, y)) if out is None else (lambda: function(model, x, y, out=out))
    x, y, z = args
    return (lambda: function(model, x, y, z)) if out is None else (lambda: function(model, x, y, z, out=out))


def split_table(robot_names_, batch=1000, rounds=7, seed=0):
    """For each compiled call: its time as a call (µs), with ``out=`` (no output
    allocated), and per sample in a batch of ``batch`` on one thread, the plain-C
    floor of its arithmetic (the batch pays the call once); the differences are what
    allocating the output costs and what the call itself costs (arguments, checks,
    the cached model, the return), beside rbd_c's own floor (``_driver_probe``, a call
    that checks its arguments, allocates and returns)."""
    from rbd_c._model import _driver_probe
    rng = np.random.default_rng(seed)
    lines = ["%-12s %-22s %9s %9s %11s %9s %9s %9s" % ("robot", "call", "call µs", "out= µs", "batch/smp µs",
                                                     "alloc", "call cost", "C floor")]

    def best(function):
        number = _calls_per_sample(function, 0.01)
        return min(_seconds_per_call(function, number) for _ in range(rounds)) * 1e6

    for name in robot_names_:
        robot = load_robot(name)
        if robot is None:
            continue
        model = robot.model
        q, v, a = random_state(model, rng)
        Q, V, A = random_state(model, rng, batch=batch)
        states = {"q": q, "v": v, "a": a, "frame": model.link_frame_names[-1]}
        batched = {"q": Q, "v": V, "a": A, "frame": model.link_frame_names[-1]}
        lines.append("%-12s %-22s %9.2f" % (name, "(driver probe)", best(lambda: _driver_probe(model, q))))
        lines += ["%-12s %-22s %9.2f" % (name, label, us) for label, us in floor_by_stage(model, q, best)]
        for call, names in SPLIT_CALLS.items():
            function = getattr(rbd_c, call)
            args = [states[n] for n in names]
            result = function(model, *args)
            out = tuple(np.empty_like(r) for r in result) if isinstance(result, tuple) else np.empty_like(result)
            single = best(_fixed_call(function, model, args))
            into = best(_fixed_call(function, model, args, out))
            many = best(_with_threads(1, lambda: function(model, *[batched[n] for n in names]))) / batch
            lines.append("%-12s %-22s %9.2f %9.2f %11.2f %9.2f %9.2f %9.2f"
                         % (name, call, single, into, many, single - into, into - many, many))
    return "\n".join(lines)


# ------------------------------------------------------------------------------------------
# Output
# ------------------------------------------------------------------------------------------
def machine_description():
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as cpuinfo:
            cpu = next(line.split(":", 1)[1].strip() for line in cpuinfo if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    versions = ["Python %s" % platform.python_version(), "NumPy %s" % np.__version__, "rbd %s" % rbd.__version__]
    for dist in ("pin", "pybullet", "modern-robotics", "roboticstoolbox-python"):
        try:
            versions.append("%s %s" % (dist, importlib.metadata.version(dist)))
        except importlib.metadata.PackageNotFoundError:
            pass
    openmp = rbd_c is not None and rbd_c.have_openmp()
    build = rbd_c.build if rbd_c is not None else "not built"
    return "%s, %d logical cores, %s; rbd_c OpenMP: %s, build: %s" % (
        cpu, os.cpu_count() or 1, ", ".join(versions), "yes" if openmp else "no", build)


HEADER = ("case", "robot", "rbd", "rbd µs", "peer", "peer µs", "rbd/peer", "max |Δ|")


def _significant(x):
    """Two decimals, or two significant digits for the small ratios."""
    return "%.2f" % x if x >= 0.1 else "%.2g" % x


def _microseconds(x):
    """Two decimals, three under a microsecond (a batch's 0.12 µs per sample: ratios of such
    times, two threads' against one, would otherwise carry the rounding's 4%)."""
    return "%.3f" % x if x < 1.0 else "%.2f" % x


def table_cells(row):
    ratio = _significant(row.ratio) if row.agrees else "answers differ"
    return (row.case, row.robot, row.ours.label, _microseconds(row.ours_us), row.peer.label,
            _microseconds(row.peer_us), ratio, "%.1e" % row.max_difference)


def format_table(rows, markdown=False):
    cells = [HEADER] + [table_cells(r) for r in rows]
    numeric = {3, 5, 6, 7}
    if markdown:
        lines = ["| " + " | ".join(HEADER) + " |",
                 "|" + "|".join("---:" if i in numeric else "---" for i in range(len(HEADER))) + "|"]
        lines += ["| " + " | ".join(c) + " |" for c in cells[1:]]
        return "\n".join(lines)
    widths = [max(len(c[i]) for c in cells) for i in range(len(HEADER))]
    lines = ["  ".join(c[i].rjust(widths[i]) if i in numeric else c[i].ljust(widths[i])
                       for i in range(len(HEADER))).rstrip() for c in cells]
    lines.insert(1, "-" * len(lines[0]))
    return "\n".join(lines)


def plot_ratios(rows, path, title):
    """A horizontal bar chart of rbd / peer, log scale (left of 1: rbd is faster)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    shown = [r for r in rows if r.agrees][::-1]  # top to bottom in table order
    labels = ["%s · %s: %s vs %s" % (r.robot, r.case, r.ours.label, r.peer.label) for r in shown]
    ratios = [r.ratio for r in shown]
    fig, ax = plt.subplots(figsize=(11, 1.2 + 0.32 * len(shown)))
    colors = ["tab:green" if x < 1 else "tab:red" for x in ratios]
    # bars grow from 1 (parity): leftwards where rbd is faster, rightwards where slower
    ax.barh(range(len(shown)), [x - 1.0 for x in ratios], left=1.0, color=colors)
    ax.set_xscale("log")
    ax.axvline(1.0, color="black", linewidth=1)
    ax.set_yticks(range(len(shown)), labels, fontsize=8)
    for y, ratio in enumerate(ratios):
        ax.annotate(_significant(ratio), (ratio, y), xytext=(3 if ratio >= 1 else -3, 0), textcoords="offset points",
                    ha="left" if ratio >= 1 else "right", va="center", fontsize=7)
    ax.set_xlabel("time ratio rbd / peer (log scale; < 1: rbd faster)")
    fig.suptitle(textwrap.fill(title, 110), fontsize=9)  # over the whole figure: the labels are wide
    ax.margins(x=0.15)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


# ------------------------------------------------------------------------------------------
# Command line
# ------------------------------------------------------------------------------------------
def parse_args(argv):
    parser = argparse.ArgumentParser(prog="python asv_benchmarks/compare.py",
                                     description="Time rbd against Pinocchio, pybullet, Modern Robotics and "
                                                 "the Robotics Toolbox for Python.")
    parser.add_argument("--quick", action="store_true",
                        help="few rounds and a small batch (a smoke run for CI and tests)")
    parser.add_argument("--robots", nargs="+", metavar="NAME",
                        help="robots to compare on (space or comma separated; default: %s; known: %s, and "
                        "generated ones: chain<n>, tree<n>, e.g. chain100)" % (" ".join(DEFAULT_ROBOTS), ", ".join(robot_names())))
    parser.add_argument("--split", action="store_true",
                        help="where each compiled call's time goes: the call, with out=, and per sample in a "
                        "batch (the plain-C floor)")
    parser.add_argument("--growth", action="store_true",
                        help="how the cost grows with the robot: RNEA, CRBA and ABA against Pinocchio on generated "
                        "chains and binary trees of 10, 100 and 300 bodies, then rbd alone up to 10,000 bodies")
    parser.add_argument("--batch", type=int, help="samples of the batched rows (default 20000; --quick: 200)")
    parser.add_argument("--rounds", type=int, help="interleaved timing rounds (default 21; --quick: 3)")
    parser.add_argument("--plot", metavar="PATH", help="save a bar chart of the ratios (needs matplotlib)")
    parser.add_argument("--markdown", action="store_true", help="print the table as Markdown")
    args = parser.parse_args(argv)
    names = [n for item in (args.robots or DEFAULT_ROBOTS) for n in item.split(",") if n]
    unknown = sorted(n for n in names if not is_robot_name(n))
    if unknown:
        parser.error("unknown robot(s) %s; known: %s, chain<n>, tree<n>" % (", ".join(unknown), ", ".join(robot_names())))
    args.robots = names
    if args.plot and _optional_import("matplotlib") is None:
        parser.error("--plot needs matplotlib: pip install matplotlib (or pip install 'rbd[bench]')")
    args.batch = args.batch or (200 if args.quick else 20000)
    args.rounds = args.rounds or (3 if args.quick else 21)
    if args.batch < 1 or args.rounds < 1:
        parser.error("--batch and --rounds must be positive")
    return args


def main(argv=None):
    args = parse_args(argv)
    if args.split:
        if rbd_c is None:
            print("error: --split needs rbd_c (the compiled backend)", file=sys.stderr)
            return 1
        print("Machine: %s" % machine_description())
        print("Best of %d, µs; alloc = call - out=, call cost = out= - batch per sample, C floor = batch per "
              "sample (1 thread)\n" % (3 if args.quick else 7))
        print(split_table(args.robots, batch=100 if args.quick else 1000, rounds=3 if args.quick else 7))
        return 0

    def progress(message):
        print(message, file=sys.stderr, flush=True)

    notes = []
    rows = growth_rows(GROWTH_ROBOTS, notes) if args.growth else build_rows(args.robots, args.batch, notes)
    for row in rows:
        cross_check(row)
    measure(rows, args.rounds, min_seconds=0.002 if args.quick else 0.02, progress=progress)

    machine = machine_description()
    print("Machine: %s" % machine)
    print("Median of %d interleaved rounds, µs per call (per sample for batches); rbd/peer < 1: rbd is faster.\n"
          % args.rounds)
    print(format_table(rows, markdown=args.markdown))
    if args.growth and rbd_c is not None:
        print("\nrbd_c alone, best of 9 interleaved rounds, µs per body (and relative to %d bodies):\n"
              % SCALING_SIZES[0])
        print(scaling_table(SCALING_SIZES[:2] if args.quick else SCALING_SIZES))
    if not args.growth and rbd_c is not None and (os.cpu_count() or 1) >= 2:
        print("\nTwo threads against one, N = %d: median over pairs of timings taken back to back "
              "(one thread's time / two threads'):\n" % args.batch)
        print(thread_scaling_table(args.robots, args.batch, pairs=5 if args.quick else 21))
    for note in notes:
        print("note: %s" % note)
    if args.plot:
        plot_ratios(rows, args.plot, "rbd / peer, median time ratio. " + machine)
        print("chart saved to %s" % args.plot)
    differing = [r for r in rows if not r.agrees]
    if differing:
        print("error: %d row(s) compare different answers (see max |Δ|)" % len(differing), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
