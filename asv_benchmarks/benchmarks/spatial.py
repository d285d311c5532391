"""The spatial-algebra kernels every algorithm is built on."""
import numpy as np

import rbd

from .common import BACKENDS, SEED, spatial_kernels


class SpatialKernels:
    """``act_motion``, ``act_force`` and ``inertia_act`` on one transform
    (``n == "single"``: 1-D arguments) or on a batch of ``n``."""

    params = [BACKENDS, ["single", 100, 10000]]
    param_names = ["backend", "n"]

    def setup(self, backend, n):
        self.kernels = spatial_kernels(backend)
        rng = np.random.default_rng(SEED)
        batch = () if n == "single" else (n,)
        self.transform = rbd.spatial.se3_exp(rng.standard_normal(batch + (6,)))
        self.motion = rng.standard_normal(batch + (6,))
        self.force = rng.standard_normal(batch + (6,))
        masses = rng.uniform(0.5, 5.0, batch)
        coms = rng.standard_normal(batch + (3,))
        # a rotational inertia about the com: R diag(principal) R^T, positive definite
        rotations = rbd.rotations.so3_exp(rng.standard_normal(batch + (3,)))
        principal = rng.uniform(0.1, 1.0, batch + (3,))
        inertias = np.einsum("...ij,...j,...kj->...ik", rotations, principal, rotations)
        self.inertia10 = rbd.spatial.inertia10_from_mass_com(masses, coms, inertias)

    def time_act_motion(self, backend, n):
        self.kernels.act_motion(self.transform, self.motion)

    def time_act_force(self, backend, n):
        self.kernels.act_force(self.transform, self.force)

    def time_inertia_act(self, backend, n):
        self.kernels.inertia_act(self.transform, self.inertia10)

    def peakmem_act_motion(self, backend, n):
        self.kernels.act_motion(self.transform, self.motion)

    def peakmem_act_force(self, backend, n):
        self.kernels.act_force(self.transform, self.force)

    def peakmem_inertia_act(self, backend, n):
        self.kernels.inertia_act(self.transform, self.inertia10)
