"""Kinematics: every body's placement, one frame's placement and Jacobian, the centre of
mass and its Jacobian; single calls, batches, and single calls into ``out=`` arrays."""
import numpy as np

from .common import BACKENDS, ROBOTS, States, robot_state


class _KinematicsOperations:
    """The timed operations, shared by the classes below (the frame: the last link
    frame, the end effector or a foot)."""

    def time_forward_kinematics(self, states, *params):
        s = states[params]
        s.impl.forward_kinematics(s.model, s.q)

    def time_frame_placement(self, states, *params):
        s = states[params]
        s.impl.frame_placement(s.model, s.q, s.frame)

    def time_frame_jacobian(self, states, *params):
        s = states[params]
        s.impl.frame_jacobian(s.model, s.q, s.frame, reference="world")

    def time_center_of_mass(self, states, *params):
        s = states[params]
        s.impl.center_of_mass(s.model, s.q)

    def time_com_jacobian(self, states, *params):
        s = states[params]
        s.impl.com_jacobian(s.model, s.q)

    # the same calls, measured for peak memory
    peakmem_forward_kinematics = time_forward_kinematics
    peakmem_frame_jacobian = time_frame_jacobian


class Kinematics(_KinematicsOperations):
    """One sample per call."""

    params = [BACKENDS, ROBOTS]
    param_names = ["backend", "robot"]

    def setup_cache(self):
        return States(self.params, robot_state)


class BatchedKinematics(_KinematicsOperations):
    """``n`` samples per call (the compiled backend on all of rbd_c's threads)."""

    params = [BACKENDS, ROBOTS, [100, 1000]]
    param_names = ["backend", "robot", "n"]
    timeout = 300

    def setup_cache(self):
        return States(self.params, robot_state)


def out_state(backend, robot):
    """A single-sample state with its outputs allocated once, for the ``out=`` calls."""
    s = robot_state(backend, robot)
    s.placements = np.empty((s.model.nbodies, 4, 4))
    s.placement = np.empty((4, 4))
    s.jacobian = np.empty((6, s.model.nv))
    return s


class KinematicsInto:
    """Single calls writing into ``out=`` arrays (what a control loop does)."""

    params = [BACKENDS, ROBOTS]
    param_names = ["backend", "robot"]

    def setup_cache(self):
        return States(self.params, out_state)

    def time_forward_kinematics(self, states, backend, robot):
        s = states[backend, robot]
        s.impl.forward_kinematics(s.model, s.q, out=s.placements)

    def time_frame_placement(self, states, backend, robot):
        s = states[backend, robot]
        s.impl.frame_placement(s.model, s.q, s.frame, out=s.placement)

    def time_frame_jacobian(self, states, backend, robot):
        s = states[backend, robot]
        s.impl.frame_jacobian(s.model, s.q, s.frame, reference="world", out=s.jacobian)
