"""Forward kinematics and frame Jacobians, single calls."""
from .common import BACKENDS, ROBOTS, RobotBenchmark


class Kinematics(RobotBenchmark):
    """World placements of every body, and the world-axes Jacobian of the last frame
    (the end effector, or a foot)."""

    params = [BACKENDS, ROBOTS]
    param_names = ["backend", "robot"]

    def setup(self, backend, robot):
        self.load(backend, robot)
        self.frame = self.model.frame_names[-1]

    def time_forward_kinematics(self, backend, robot):
        self.impl.forward_kinematics(self.model, self.q)

    def time_frame_jacobian(self, backend, robot):
        self.impl.frame_jacobian(self.model, self.q, self.frame, reference="world")

    def peakmem_forward_kinematics(self, backend, robot):
        self.impl.forward_kinematics(self.model, self.q)

    def peakmem_frame_jacobian(self, backend, robot):
        self.impl.frame_jacobian(self.model, self.q, self.frame, reference="world")
