"""Inverse dynamics (RNEA), the mass matrix (CRBA) and forward dynamics (ABA):
single calls, and batches of N samples in one call."""
from .common import BACKENDS, BATCH_SIZES, ROBOTS, States, robot_state


class _DynamicsOperations:
    """The timed operations, shared by the single-call and the batched classes:
    each takes the class's States (its ``setup_cache``), then its parameters."""

    def time_rnea(self, states, *params):
        s = states[params]
        s.impl.rnea(s.model, s.q, s.v, s.a)

    def time_crba(self, states, *params):
        s = states[params]
        s.impl.crba(s.model, s.q)

    def time_aba(self, states, *params):
        s = states[params]
        s.impl.aba(s.model, s.q, s.v, s.tau)

    def time_gravity(self, states, *params):
        s = states[params]
        s.impl.gravity(s.model, s.q)

    def time_nonlinear_effects(self, states, *params):
        s = states[params]
        s.impl.nonlinear_effects(s.model, s.q, s.v)

    # the same calls, measured for peak memory
    peakmem_rnea = time_rnea
    peakmem_crba = time_crba
    peakmem_aba = time_aba


class Dynamics(_DynamicsOperations):
    """One sample per call (1-D q, v, a)."""

    params = [BACKENDS, ROBOTS]
    param_names = ["backend", "robot"]

    def setup_cache(self):
        return States(self.params, robot_state)


class BatchedDynamics(_DynamicsOperations):
    """``n`` samples per call, stacked as (n, nq) arrays; the compiled backend runs
    them on all of rbd_c's threads (its default)."""

    params = [BACKENDS, ROBOTS, BATCH_SIZES]
    param_names = ["backend", "robot", "n"]
    timeout = 300  # NumPy's CRBA on 10000 Talos samples takes seconds per call

    def setup_cache(self):
        return States(self.params, robot_state)
