"""Inverse dynamics (RNEA), the mass matrix (CRBA) and forward dynamics (ABA):
single calls, and batches of N samples in one call."""
from .common import BACKENDS, BATCH_SIZES, ROBOTS, RobotBenchmark


class _DynamicsOperations:
    """The timed operations, shared by the single-call and the batched classes."""

    def time_rnea(self, *params):
        self.impl.rnea(self.model, self.q, self.v, self.a)

    def time_crba(self, *params):
        self.impl.crba(self.model, self.q)

    def time_aba(self, *params):
        self.impl.aba(self.model, self.q, self.v, self.tau)

    def peakmem_rnea(self, *params):
        self.impl.rnea(self.model, self.q, self.v, self.a)

    def peakmem_crba(self, *params):
        self.impl.crba(self.model, self.q)

    def peakmem_aba(self, *params):
        self.impl.aba(self.model, self.q, self.v, self.tau)


class Dynamics(_DynamicsOperations, RobotBenchmark):
    """One sample per call (1-D q, v, a)."""

    params = [BACKENDS, ROBOTS]
    param_names = ["backend", "robot"]

    def setup(self, backend, robot):
        self.load(backend, robot)


class BatchedDynamics(_DynamicsOperations, RobotBenchmark):
    """``n`` samples per call, stacked as (n, nq) arrays; the compiled backend runs
    them on all of rbd_c's threads (its default)."""

    params = [BACKENDS, ROBOTS, BATCH_SIZES]
    param_names = ["backend", "robot", "n"]
    timeout = 300  # NumPy's CRBA on 10000 Talos samples takes seconds per call

    def setup(self, backend, robot, n):
        self.batch = n
        self.load(backend, robot)
