"""What every benchmark class shares: the parameter values, the backend
modules, the robots and random states built with a fixed seed.

Parameter lists are fixed: a backend or a robot missing on this machine makes
``setup`` raise ``NotImplementedError``, which asv reports as skipped.
"""
import numpy as np

import rbd

BACKENDS = ["numpy", "cython"]
#: rbd's two sample robots, then example-robot-data's Panda and full Talos (floating base)
ROBOTS = ["arm7", "quadruped", "panda", "talos"]
BATCH_SIZES = [1, 100, 10000]
SEED = 1234


def compiled_backend():
    try:
        import rbd_c
    except ImportError:
        raise NotImplementedError("rbd_c (the compiled backend) is not built")
    return rbd_c


def algorithms(backend):
    """The module of rbd's algorithms for ``backend``: called directly, so no
    benchmark depends on the global ``rbd.set_backend`` state."""
    return rbd.reference if backend == "numpy" else compiled_backend()


def spatial_kernels(backend):
    return rbd.spatial if backend == "numpy" else compiled_backend()


def load_model(name):
    if name in rbd.sample_model_names():
        return rbd.sample_model(name)
    try:  # rbd.bench knows where example-robot-data keeps its URDFs (absent in old commits)
        from rbd.bench import load_robot
    except ImportError:
        raise NotImplementedError("this rbd has no rbd.bench to locate example-robot-data")
    robot = load_robot(name)
    if robot is None:
        raise NotImplementedError("example-robot-data is not installed: no %s" % name)
    return robot.model


def random_state(model, batch=None):
    """q, v, a: a random configuration, standard-normal velocities and accelerations
    (``batch`` samples stacked on a leading axis, or a single sample)."""
    rng = np.random.default_rng(SEED)
    shape = (model.nv,) if batch is None else (batch, model.nv)
    q = rbd.reference.random_configuration(model, rng, batch=batch)
    return q, rng.standard_normal(shape), rng.standard_normal(shape)


class RobotBenchmark:
    """Set-up shared by the classes parametrized over (backend, robot[, ...])."""

    batch = None  # samples per call; None: a single, unbatched call

    def load(self, backend, robot):
        self.impl = algorithms(backend)
        self.model = load_model(robot)
        self.q, self.v, self.a = random_state(self.model, self.batch)
        # a torque that ABA turns back into self.a: forward dynamics on a meaningful input
        self.tau = rbd.reference.rnea(self.model, self.q, self.v, self.a)
        # One untimed call, so that one-time costs (rbd_c's compiled view of the model,
        # OpenMP's thread start-up) land here and not in a --quick run's single sample.
        self.impl.rnea(self.model, self.q, self.v, self.a)
