"""Derivatives of the dynamics: rnea_derivatives, aba_derivatives and the inverse
mass matrix, single calls and batches (three nv x nv outputs per sample, so the
batches stop at 100 samples)."""
from .common import BACKENDS, ROBOTS, States, robot_state


class _DerivativeOperations:
    def time_rnea_derivatives(self, states, *params):
        s = states[params]
        s.impl.rnea_derivatives(s.model, s.q, s.v, s.a)

    def time_aba_derivatives(self, states, *params):
        s = states[params]
        s.impl.aba_derivatives(s.model, s.q, s.v, s.tau)

    def time_inverse_mass_matrix(self, states, *params):
        s = states[params]
        s.impl.inverse_mass_matrix(s.model, s.q)

    peakmem_rnea_derivatives = time_rnea_derivatives
    peakmem_aba_derivatives = time_aba_derivatives


class Derivatives(_DerivativeOperations):
    """One sample per call."""

    params = [BACKENDS, ROBOTS]
    param_names = ["backend", "robot"]

    def setup_cache(self):
        return States(self.params, robot_state)


class BatchedDerivatives(_DerivativeOperations):
    """``n`` samples per call (the compiled backend on all of rbd_c's threads)."""

    params = [BACKENDS, ROBOTS, [1, 100]]
    param_names = ["backend", "robot", "n"]
    timeout = 300

    def setup_cache(self):
        return States(self.params, robot_state)
