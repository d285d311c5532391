"""What every benchmark class shares: the parameter values, the backend
modules, the robots and random states built with a fixed seed.

Why no class has a ``setup``: asv-runner >= 0.3 (asv#966) re-runs setup hooks
before every timed call and then times each call on its own (``number = 1``),
so a microsecond kernel would be timed alone, cold, right after its setup
re-parsed a URDF (rbd_c's RNEA on arm7 showed as 2.7 µs, 0.6 µs in ``timeit``).
Instead each class builds the inputs of all its parameter sets at once in
``setup_cache``, a ``States``; asv runs it once per class, pickles the result and
passes it to every benchmark as the first argument. With no setup hook, asv
calibrates ``number`` and times many calls per sample on warm state; a
benchmark looks its state up (``states[params]``) and does only the operation.
Each class defines its own ``setup_cache``: asv keys the cache by that
function's source line, so an inherited one would be shared between classes.

Parameter lists are fixed: a backend or a robot missing on this machine gives
its parameter sets an ``Absent`` state, whose use raises ``SkipNotImplemented``,
which asv reports as skipped (``n/a``).
"""
import functools
import importlib
import itertools
import sys
from pathlib import Path

import numpy as np

import rbd

try:
    from asv_runner.benchmarks.mark import SkipNotImplemented
except ImportError:  # run without asv (tests/test_benchmarks.py): its base class
    SkipNotImplemented = NotImplementedError

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


@functools.lru_cache(maxsize=None)  # one URDF parse per robot, shared by its states
def load_model(name):
    if name in rbd.sample_model_names():
        return rbd.sample_model(name)
    # The peer comparison beside this suite knows the robots and where example-robot-data is.
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from compare import load_robot
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


class State:
    """The inputs of one parameter set, as attributes, and ``impl``, the backend
    module its benchmarks call. A module does not pickle: the pickle holds its
    name, imported again where the state is unpickled."""

    def __init__(self, impl, **inputs):
        self.impl = impl
        for name, value in inputs.items():  # not __dict__.update(), which makes
            setattr(self, name, value)  # CPython's attribute loads twice as slow

    def __getstate__(self):
        return dict(vars(self), impl=self.impl.__name__)

    def __setstate__(self, state):
        self.__init__(importlib.import_module(state.pop("impl")), **state)


class Absent:
    """Stands for the state of a parameter set that cannot run here (its backend
    or robot is missing): its ``impl``, which every benchmark reads first, raises
    SkipNotImplemented."""

    def __init__(self, reason):
        self.reason = reason

    @property
    def impl(self):
        raise SkipNotImplemented(self.reason)


class States(dict):
    """Parameter tuple -> ``make_state(*parameters)`` for every parameter set in
    ``params``, or an Absent where that raised NotImplementedError.

    It pickles (asv hands ``setup_cache``'s result over as a pickle) into a plain
    dict whose string keys are interned, so that looking up the parameters asv
    passes compares identities: 40 ns instead of 80, timed with every call."""

    def __init__(self, params, make_state):
        super().__init__()
        for parameters in itertools.product(*params):
            try:
                self[parameters] = make_state(*parameters)
            except NotImplementedError as exc:
                self[parameters] = Absent(str(exc))

    def __reduce__(self):
        return interned_dict, (list(self.items()),)


def interned_dict(items):
    return {tuple(sys.intern(p) if isinstance(p, str) else p for p in parameters): state
            for parameters, state in items}


@functools.lru_cache(maxsize=None)  # shared by both backends' states (and pickled once)
def robot_inputs(robot, batch=None):
    model = load_model(robot)
    q, v, a = random_state(model, batch)
    return {
        "model": model, "q": q, "v": v, "a": a,
        # a torque that ABA turns back into a: forward dynamics on a meaningful input
        "tau": rbd.reference.rnea(model, q, v, a),
        # the last frame: the end effector, or a foot
        "frame": model.link_frame_names[-1],
    }


def robot_state(backend, robot, n=None):
    """The State of a benchmark over (backend, robot[, n]): a random state of the
    robot, ``n`` samples stacked (or a single one), and the backend's algorithms."""
    return State(algorithms(backend), **robot_inputs(robot, n))
