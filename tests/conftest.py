"""Shared fixtures: every test that takes ``backend`` runs once per backend.

The compiled backend is skipped only where ``rbd_c`` is truly absent; under CI
(``CI=true``) or with RBD_REQUIRE_EXTENSIONS=1 its absence is an error.
"""
import os

import numpy as np
import pytest
from hypothesis import settings

import rbd

# Under CI the property tests draw the same examples on every run: a landing never
# depends on the luck of the draw (locally they keep exploring new examples).
settings.register_profile("ci", derandomize=True, print_blob=True)
if os.environ.get("CI", "").lower() in ("1", "true"):
    settings.load_profile("ci")


def _compiled_available():
    try:
        import rbd_c  # noqa: F401
    except ImportError:
        if os.environ.get("CI", "").lower() in ("1", "true") or os.environ.get("RBD_REQUIRE_EXTENSIONS"):
            raise
        return False
    return True


HAVE_COMPILED = _compiled_available()


def rbd_c_threads(n):
    """Set rbd_c's batch threads (when built); returns the previous count."""
    if not HAVE_COMPILED:
        return n
    import rbd_c
    previous = rbd_c.get_num_threads()
    rbd_c.set_num_threads(n)
    return previous


@pytest.fixture(params=["numpy", "cython"])
def backend(request):
    """The backend name; ``rbd`` is switched to it for the test and restored after."""
    if request.param == "cython" and not HAVE_COMPILED:
        pytest.skip("rbd_c is not built")
    previous = rbd.backend
    rbd.set_backend(request.param)
    yield request.param
    rbd.set_backend(previous)


@pytest.fixture
def spatial_impl(backend):
    """The module implementing the spatial algebra for this backend."""
    if backend == "numpy":
        return rbd.spatial
    import rbd_c
    return rbd_c


@pytest.fixture
def rng():
    return np.random.default_rng(12345)


@pytest.fixture(scope="module", params=sorted(__import__("oracles.pinocchio_adapter", fromlist=["ROBOTS"]).ROBOTS))
def pair(request):
    """A robot of ``oracles.pinocchio_adapter.ROBOTS`` loaded by rbd and by Pinocchio (a
    ``ModelPair``); skipped where Pinocchio or example-robot-data is missing (never in CI)."""
    from oracles.pinocchio_adapter import ROBOTS, load_pair, pin
    if pin is None:
        pytest.skip("pinocchio is not installed")
    loaded = load_pair(request.param)
    if loaded is None:
        if os.environ.get("CI", "").lower() in ("1", "true"):  # CI installs the test extra: never skip there
            pytest.fail("example-robot-data has no %s URDF here" % ROBOTS[request.param].urdf)
        pytest.skip("example-robot-data has no %s URDF here" % ROBOTS[request.param].urdf)
    return loaded
