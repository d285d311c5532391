"""rbd_c's pool of large batch outputs (rbd_c/_model.pyx): a batch's fresh outputs of
256 kB or more come from a NumPy memory handler that keeps a few freed blocks for the
next batch of the same size, so repeated batches do not fault their pages in again.

Oracles: each sample's single call (which never uses the pool), NumPy's own view of the
arrays (their memory handler, ownership, overlap) and the pool's byte count."""
import threading

import numpy as np
import pytest

import rbd

from conftest import HAVE_COMPILED
from models import random_model, random_state

pytestmark = pytest.mark.skipif(not HAVE_COMPILED, reason="rbd_c is not built")

if HAVE_COMPILED:
    import rbd_c

get_handler_name = np._core.multiarray.get_handler_name if hasattr(np, "_core") else np.core.multiarray.get_handler_name


@pytest.fixture(scope="module")
def model():
    return random_model(3, nlinks=12)


def _batch(model, n, seed):
    q, v, a, _, _ = random_state(model, np.random.default_rng(seed), batch=(n,))
    return q, v, a


def _per_sample(f, model, *args):
    return np.stack([f(model, *(x[i] for x in args)) for i in range(len(args[0]))])


def test_large_outputs_come_from_the_pool_and_are_independent(model):
    rbd_c.release_memory()
    n = 1 + (1 << 18) // (8 * model.nv * model.nv)  # just over the pool's threshold
    q1, _, _ = _batch(model, n, 1)
    q2, _, _ = _batch(model, n, 2)
    m1 = rbd_c.crba(model, q1)
    assert get_handler_name(m1) == "rbd_c_output_pool" and m1.flags.owndata
    assert get_handler_name() != "rbd_c_output_pool"  # the handler is set only around the outputs
    m2 = rbd_c.crba(model, q2)
    assert not np.shares_memory(m1, m2)
    np.testing.assert_allclose(m1, _per_sample(rbd_c.crba, model, q1), rtol=0, atol=1e-13)
    address = m1.ctypes.data
    del m1  # its block goes to the pool ...
    m3 = rbd_c.crba(model, q1[::-1].copy())
    assert m3.ctypes.data == address  # ... and serves the next batch of that size
    np.testing.assert_allclose(m3, _per_sample(rbd_c.crba, model, q1[::-1]), rtol=0, atol=1e-13)
    np.testing.assert_allclose(m2, _per_sample(rbd_c.crba, model, q2), rtol=0, atol=1e-13)  # untouched
    del m3
    assert rbd_c.release_memory() >= n * model.nv * model.nv * 8
    assert rbd_c.release_memory() == 0


def test_small_outputs_and_out_do_not_use_the_pool(model):
    q, v, a = _batch(model, 3, 4)
    assert get_handler_name(rbd_c.rnea(model, q, v, a)) != "rbd_c_output_pool"
    assert get_handler_name(rbd_c.crba(model, q[0])) != "rbd_c_output_pool"
    n = 1 + (1 << 18) // (8 * model.nv * model.nv)
    q, v, a = _batch(model, n, 5)
    out = tuple(np.empty((n, model.nv, model.nv)) for _ in range(3))
    result = rbd_c.rnea_derivatives(model, q, v, a, out=out)
    assert all(r is o for r, o in zip(result, out))


def test_several_outputs_and_threads(model):
    """Batches of derivatives (three outputs each) from several Python threads at once:
    every result equals its samples' single calls, no two share memory."""
    n = 1 + (1 << 18) // (8 * model.nv * model.nv)
    inputs = [_batch(model, n, 10 + k) for k in range(4)]
    results = [None] * 4

    def work(k):
        for _ in range(3):
            results[k] = rbd_c.aba_derivatives(model, *inputs[k])

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for k in range(4):
        q, v, tau = inputs[k]
        expected = [np.stack([rbd_c.aba_derivatives(model, q[i], v[i], tau[i])[j] for i in range(n)]) for j in range(3)]
        for got, want in zip(results[k], expected):
            np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    arrays = [x for r in results for x in r]
    for i in range(len(arrays)):
        for j in range(i):
            assert not np.shares_memory(arrays[i], arrays[j])
    results[:] = []
    arrays = None
    rbd_c.release_memory()


def test_numpy_backend_results_are_the_same(model):
    n = 1 + (1 << 18) // (8 * model.nv * model.nv)
    q, v, a = _batch(model, n, 7)
    np.testing.assert_allclose(rbd_c.crba(model, q), rbd.reference.crba(model, q), rtol=1e-12, atol=1e-12)
    rbd_c.release_memory()
