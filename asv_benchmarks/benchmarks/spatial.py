"""The spatial-algebra kernels every algorithm is built on."""
import numpy as np

import rbd

from .common import BACKENDS, SEED, State, States, spatial_kernels


def kernel_state(backend, n):
    """A random transform, motion, force and inertia (10 parameters), 1-D
    (``n == "single"``) or ``n`` stacked, and the backend's kernels."""
    rng = np.random.default_rng(SEED)
    batch = () if n == "single" else (n,)
    transform = rbd.spatial.se3_exp(rng.standard_normal(batch + (6,)))
    motion = rng.standard_normal(batch + (6,))
    force = rng.standard_normal(batch + (6,))
    masses = rng.uniform(0.5, 5.0, batch)
    coms = rng.standard_normal(batch + (3,))
    # a rotational inertia about the com: R diag(principal) R^T, positive definite
    rotations = rbd.rotations.so3_exp(rng.standard_normal(batch + (3,)))
    principal = rng.uniform(0.1, 1.0, batch + (3,))
    inertias = np.einsum("...ij,...j,...kj->...ik", rotations, principal, rotations)
    return State(spatial_kernels(backend), transform=transform, motion=motion, force=force,
                 inertia10=rbd.spatial.inertia10_from_mass_com(masses, coms, inertias))


class SpatialKernels:
    """``act_motion``, ``act_force`` and ``inertia_act`` on one transform
    (``n == "single"``: 1-D arguments) or on a batch of ``n``."""

    params = [BACKENDS, ["single", 100, 10000]]
    param_names = ["backend", "n"]

    def setup_cache(self):
        return States(self.params, kernel_state)

    def time_act_motion(self, states, backend, n):
        s = states[backend, n]
        s.impl.act_motion(s.transform, s.motion)

    def time_act_force(self, states, backend, n):
        s = states[backend, n]
        s.impl.act_force(s.transform, s.force)

    def time_inertia_act(self, states, backend, n):
        s = states[backend, n]
        s.impl.inertia_act(s.transform, s.inertia10)

    # the same calls, measured for peak memory
    peakmem_act_motion = time_act_motion
    peakmem_act_force = time_act_force
    peakmem_inertia_act = time_inertia_act
