"""Contact dynamics, the kinematic Hessian and the regressor: the quadruped standing on its
four feet (point contacts), one sample and a batch of 100.  These functions run on the
active backend of ``rbd``: each benchmark selects its own (only when it is not active
already, so that switching is not timed)."""
import numpy as np

from .common import BACKENDS, State, States, algorithms, load_model

FEET = ("FL_foot", "FR_foot", "HL_foot", "HR_foot")


def contact_state(backend, n):
    import rbd
    model = load_model("quadruped")
    rng = np.random.default_rng(0)
    batch = None if n == "single" else n
    shape = () if batch is None else (batch,)
    return State(algorithms(backend), model=model, q=rbd.random_configuration(model, rng, batch=batch),
                 v=rng.normal(size=shape + (model.nv,)), tau=rng.normal(size=shape + (model.nv,)),
                 contacts=[rbd.Contact(f) for f in FEET], backend=backend)


def _active(s):
    """The rbd module, on the state's backend."""
    import rbd
    s.impl  # (skips where this backend is not built)
    if rbd.backend != s.backend:
        rbd.set_backend(s.backend)
    return rbd


class Contacts:
    params = [BACKENDS, ["single", 100]]
    param_names = ["backend", "n"]

    def setup_cache(self):
        return States(self.params, contact_state)

    def time_constrained_dynamics(self, states, *params):
        s = states[params]
        _active(s).constrained_dynamics(s.model, s.q, s.v, s.tau, s.contacts)

    def time_impulse_dynamics(self, states, *params):
        s = states[params]
        _active(s).impulse_dynamics(s.model, s.q, s.v, s.contacts)

    def time_joint_torque_regressor(self, states, *params):
        s = states[params]
        _active(s).joint_torque_regressor(s.model, s.q, s.v, s.tau)

    def time_kinematic_hessian(self, states, *params):
        s = states[params]
        _active(s).kinematic_hessian(s.model, s.q, FEET[0])

    peakmem_constrained_dynamics = time_constrained_dynamics
