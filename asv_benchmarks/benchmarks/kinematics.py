"""Forward kinematics and frame Jacobians, single calls."""
from .common import BACKENDS, ROBOTS, States, robot_state


class Kinematics:
    """World placements of every body, and the world-axes Jacobian of the last frame
    (the end effector, or a foot)."""

    params = [BACKENDS, ROBOTS]
    param_names = ["backend", "robot"]

    def time_forward_kinematics(self, states, backend, robot):
        s = states[backend, robot]
        s.impl.forward_kinematics(s.model, s.q)

    def time_frame_jacobian(self, states, backend, robot):
        s = states[backend, robot]
        s.impl.frame_jacobian(s.model, s.q, s.frame, reference="world")

    # the same calls, measured for peak memory
    peakmem_forward_kinematics = time_forward_kinematics
    peakmem_frame_jacobian = time_frame_jacobian

    def setup_cache(self):
        return States(self.params, robot_state)
