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


def _thp_mode():
    try:
        with open("/sys/kernel/mm/transparent_hugepage/enabled") as f:
            return f.read().split("[")[1].split("]")[0]
    except (OSError, IndexError):
        return None


def _vm_flags(address):
    """The VmFlags of the mapping holding ``address`` (/proc/self/smaps)."""
    with open("/proc/self/smaps") as f:
        inside = False
        for line in f:
            head = line.split()[0]
            if "-" in head and not head.endswith(":"):
                start, end = (int(x, 16) for x in head.split("-"))
                inside = start <= address < end
            elif inside and head == "VmFlags:":
                return line.split()[1:]
    return None


@pytest.mark.skipif(_thp_mode() not in ("madvise", "always"), reason="no transparent huge pages (Linux)")
def test_large_pool_blocks_ask_for_huge_pages_as_numpy_does(model):
    """NumPy's allocator madvises blocks of 4 MB and more for huge pages; the pool replaces
    it around a batch's outputs, so it must do the same (4 kB pages made a 763 MB batch of
    crba fault 195,000 times: 3x the time of the single calls)."""
    get_madvise = (np._core.multiarray if hasattr(np, "_core") else np.core.multiarray)._get_madvise_hugepage
    if not get_madvise():
        pytest.skip("NumPy does not use huge pages here")
    reference = np.empty(1 << 21)  # 16 MB from NumPy's own allocator: what the pool must match
    if "hg" not in (_vm_flags(reference.ctypes.data + (1 << 20)) or []):
        pytest.skip("this kernel does not show MADV_HUGEPAGE in VmFlags")
    rbd_c.release_memory()
    n = 1 + (1 << 23) // (8 * model.nv * model.nv)  # over 8 MB of fresh outputs
    q, _, _ = _batch(model, n, 3)
    M = rbd_c.crba(model, q)
    assert get_handler_name(M) == "rbd_c_output_pool"
    assert "hg" in _vm_flags(M.ctypes.data + M.nbytes // 2)
    np.testing.assert_allclose(M[-1], rbd_c.crba(model, q[-1]), rtol=0, atol=1e-13)
