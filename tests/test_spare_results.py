"""A compiled single call's small result comes from a dropped earlier result of the same
shape when there is one (rbd_c/_model.pyx, ``_single_result``): the caller must never see
an array it still holds change, and a recycled array must be written whole.

Oracles: the NumPy backend (rbd.reference) on the same states, copies taken before the
later calls, and NumPy's own view of the arrays (data addresses, flags, shapes)."""
import gc
import threading
import weakref

import numpy as np
import pytest

import rbd
import rbd.reference as reference

from conftest import HAVE_COMPILED
from models import algorithm_calls, contacts_on, random_model

pytestmark = pytest.mark.skipif(not HAVE_COMPILED, reason="rbd_c is not built")

if HAVE_COMPILED:
    import rbd_c


def _state(model, seed):
    rng = np.random.default_rng(seed)
    q = rbd.random_configuration(model, rng)
    q1 = rbd.random_configuration(model, rng)
    v, a, tau = (rng.normal(size=model.nv) for _ in range(3))
    fext = rng.normal(size=(model.nbodies, 6))
    return q, v, a, tau, fext, q1


@pytest.fixture(scope="module")
def model():
    return random_model(1, nlinks=12, floating_base=True, nframes=3)


def _calls(model, state):
    q, v, a, tau, fext, q1 = state
    calls = algorithm_calls(q, v, a, tau, fext, q1, [model.frame_names[-1]])
    contacts = contacts_on(model, q)
    calls += [("contact_jacobian", (q, contacts), {}), ("constrained_dynamics", (q, v, tau, contacts), {}),
              ("impulse_dynamics", (q, v, contacts), {}), ("joint_torque_regressor", (q, v, a), {}),
              ("kinematic_hessian", (q, model.frame_names[-1]), {})]
    return calls


def _parts(result):
    return result if isinstance(result, tuple) else (result,)


def _data(result):
    return [r.ctypes.data for r in _parts(result) if isinstance(r, np.ndarray)]


def test_a_dropped_result_filled_with_garbage_is_rewritten_whole(model):
    """Every compiled function: its result is filled with finite garbage and dropped; the
    next call on another state takes that memory (same address) and must agree with
    the NumPy backend, entry by entry."""
    first, second = _state(model, 1), _state(model, 2)
    recycled = 0
    for (name, args, kwargs), (_, args2, kwargs2) in zip(_calls(model, first), _calls(model, second)):
        result = getattr(rbd_c, name)(model, *args, **kwargs)
        if isinstance(result, float):
            assert name in ("kinetic_energy", "potential_energy"), name
            continue
        addresses = _data(result)
        for r in _parts(result):
            r[...] = np.random.default_rng(3).uniform(-1e3, 1e3, size=r.shape)
        del result, r
        got = getattr(rbd_c, name)(model, *args2, **kwargs2)
        recycled += sorted(_data(got)) == sorted(addresses)
        expected = getattr(reference, name)(model, *args2, **kwargs2)
        for g, e in zip(_parts(got), _parts(expected)):
            np.testing.assert_allclose(g, e, rtol=1e-9, atol=1e-9, err_msg=name)
    assert recycled >= 40  # the mechanism is exercised, not bypassed


def test_a_held_result_never_changes(model):
    """Held directly, through a view, a memoryview or a list, a result keeps its values
    across later calls of the same shape; each later result is a different array."""
    q, v, a, tau, _, _ = _state(model, 4)
    kept_direct = rbd_c.crba(model, q)
    kept_view = rbd_c.crba(model, q)[1:4, 2:]
    kept_buffer = memoryview(rbd_c.crba(model, q))
    kept_list = [rbd_c.crba(model, q)]
    expected = reference.crba(model, q)
    seen = set()
    for seed in range(10):
        later = rbd_c.crba(model, _state(model, 10 + seed)[0])
        assert not any(np.shares_memory(later, k) for k in (kept_direct, kept_view, np.asarray(kept_buffer),
                                                              kept_list[0]))
        seen.add(later.ctypes.data)
        del later
    np.testing.assert_allclose(kept_direct, expected, rtol=0, atol=1e-12)
    np.testing.assert_allclose(kept_view, expected[1:4, 2:], rtol=0, atol=1e-12)
    np.testing.assert_allclose(np.asarray(kept_buffer), expected, rtol=0, atol=1e-12)
    np.testing.assert_allclose(kept_list[0], expected, rtol=0, atol=1e-12)
    assert len(seen) == 1  # dropped each time: one array served the ten calls


def test_a_loop_rebinding_its_result_alternates_two_arrays(model):
    """``M = crba(...)`` in a loop: the old M is dropped only after the call, so two
    arrays take turns; each M is right when it is read."""
    addresses = set()
    M = None
    for seed in range(8):
        q = _state(model, 20 + seed)[0]
        M = rbd_c.crba(model, q)
        np.testing.assert_allclose(M, reference.crba(model, q), rtol=0, atol=1e-12)
        addresses.add(M.ctypes.data)
    assert len(addresses) <= 3


def test_weakly_referenced_or_altered_results_are_not_taken(model):
    q0 = _state(model, 30)[0]
    result = rbd_c.frame_jacobian(model, q0, model.frame_names[-1])
    watcher = weakref.ref(result)
    address = result.ctypes.data
    expected0 = reference.frame_jacobian(model, q0, model.frame_names[-1])
    del result
    for seed in range(3):
        q = _state(model, 31 + seed)[0]
        got = rbd_c.frame_jacobian(model, q, model.frame_names[-1])
        assert got.ctypes.data != address
        np.testing.assert_allclose(got, reference.frame_jacobian(model, q, model.frame_names[-1]), atol=1e-12)
        del got
    alive = watcher()
    if alive is not None:  # (kept as a spare: it must still hold its own values)
        np.testing.assert_allclose(alive, expected0, rtol=0, atol=1e-12)
    del alive

    q = _state(model, 35)[0]
    for alter in (lambda r: r.setflags(write=False), lambda r: setattr(r, "shape", (r.size,)),
                  lambda r: setattr(r, "dtype", np.int64)):
        rbd_c.release_memory()
        result = rbd_c.crba(model, q0)
        altered = result.ctypes.data
        alter(result)
        del result
        got = rbd_c.crba(model, q)
        assert got.shape == (model.nv, model.nv) and got.dtype == np.float64
        assert got.flags.writeable and got.flags.c_contiguous
        assert got.ctypes.data != altered
        np.testing.assert_allclose(got, reference.crba(model, q), rtol=0, atol=1e-12)


def test_several_outputs_are_distinct_arrays(model):
    q, v, a, _, _, _ = _state(model, 40)
    for _ in range(3):
        outputs = rbd_c.rnea_derivatives(model, q, v, a)
        assert len({o.ctypes.data for o in outputs}) == 3
        expected = reference.rnea_derivatives(model, q, v, a)
        for o, e in zip(outputs, expected):
            np.testing.assert_allclose(o, e, rtol=0, atol=1e-10)
        del outputs


def test_threads_never_share_a_result():
    """Four threads, each checking its own results against the NumPy backend's, while
    the others drop theirs: a result handed to two callers would show."""
    model = random_model(6, nlinks=9)
    states = [_state(model, 50 + k)[0] for k in range(4)]
    expected = [reference.crba(model, q) for q in states]
    errors = []
    start = threading.Barrier(4)

    def work(k):
        start.wait()
        for _ in range(300):
            M = rbd_c.crba(model, states[k])
            sys_switch = rbd_c.crba(model, states[(k + 1) % 4])  # dropped at once by the next line
            del sys_switch
            if not np.allclose(M, expected[k], rtol=0, atol=1e-12):
                errors.append(k)
                return

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []


def test_scalar_results_are_floats(model):
    q, v, _, _, _, _ = _state(model, 60)
    energy = rbd_c.kinetic_energy(model, q, v)
    assert type(energy) is float
    assert energy == pytest.approx(reference.kinetic_energy(model, q, v), rel=1e-13)


def test_forgetting_the_spares_frees_them(model):
    q = _state(model, 70)[0]
    result = rbd_c.crba(model, q)
    watcher = weakref.ref(result)
    del result
    gc.collect()
    assert watcher() is not None  # kept as a spare
    rbd_c.release_memory()
    assert watcher() is None
