"""Contact dynamics: the quadruped standing on its four feet (point contacts).  The contact
functions run on the active backend of ``rbd``: each benchmark selects its own."""
import numpy as np

from .common import BACKENDS, State, States, algorithms, load_model


def contact_state(backend):
    import rbd
    model = load_model("quadruped")
    rng = np.random.default_rng(0)
    return State(algorithms(backend), model=model, q=rbd.random_configuration(model, rng),
                 v=rng.normal(size=model.nv), tau=rng.normal(size=model.nv),
                 contacts=[rbd.Contact(f) for f in ("FL_foot", "FR_foot", "HL_foot", "HR_foot")])


class Contacts:
    params = [BACKENDS]
    param_names = ["backend"]

    def setup_cache(self):
        return States(self.params, contact_state)

    def time_constrained_dynamics(self, states, backend):
        import rbd
        s = states[(backend,)]
        s.impl  # (skips where this backend is not built)
        rbd.set_backend(backend)
        rbd.constrained_dynamics(s.model, s.q, s.v, s.tau, s.contacts)

    def time_impulse_dynamics(self, states, backend):
        import rbd
        s = states[(backend,)]
        s.impl  # (skips where this backend is not built)
        rbd.set_backend(backend)
        rbd.impulse_dynamics(s.model, s.q, s.v, s.contacts)
