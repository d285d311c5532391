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


SIMD_BATCH = 1000


def _one_thread(impl, simd, call):
    """call() with rbd_c on one thread and the SIMD choice ``simd`` (both set and restored
    around it: microseconds against a batch's milliseconds; asv benchmarks have no setup hook)."""
    threads = impl.get_num_threads()
    impl.set_num_threads(1)
    impl.set_simd(simd)
    try:
        call()
    finally:
        impl.set_simd("auto")
        impl.set_num_threads(threads)


class SimdBatches:
    """rbd_c's batches of SIMD_BATCH samples on ONE thread, per instruction-set choice
    (``rbd_c.set_simd``): "auto" (the widest the machine has: AVX-512, AVX2 + FMA), "avx2",
    "baseline" and "off" (one sample at a time).  Time per sample = the time / SIMD_BATCH; the peer
    comparison (compare.py, "batched ... N=") sets it beside Pinocchio's."""

    params = [["auto", "avx2", "baseline", "off"], ROBOTS]
    param_names = ["simd", "robot"]

    def setup_cache(self):
        return States([BACKENDS[1:], ROBOTS], lambda backend, robot: robot_state(backend, robot, SIMD_BATCH))

    def time_rnea(self, states, simd, robot):
        s = states[("cython", robot)]
        _one_thread(s.impl, simd, lambda: s.impl.rnea(s.model, s.q, s.v, s.a))

    def time_crba(self, states, simd, robot):
        s = states[("cython", robot)]
        _one_thread(s.impl, simd, lambda: s.impl.crba(s.model, s.q))

    def time_aba(self, states, simd, robot):
        s = states[("cython", robot)]
        _one_thread(s.impl, simd, lambda: s.impl.aba(s.model, s.q, s.v, s.tau))
