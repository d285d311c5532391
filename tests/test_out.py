"""``out=``: every algorithm writes into given arrays, bit for bit what it returns
otherwise, single and batched, on a plain model and one with mimic joints; a wrong
``out`` is the same error on both backends, before anything is computed where the
compiled driver can tell."""
import array

import numpy as np
import pytest

import rbd
from conftest import HAVE_COMPILED
from models import algorithm_calls, random_model


def states(model, batch, seed=0):
    rng = np.random.default_rng(seed)
    shape = () if batch is None else (batch,)
    q = rbd.random_configuration(model, rng, batch=batch)
    q1 = rbd.random_configuration(model, rng, batch=batch)
    v, a, tau = (rng.normal(size=shape + (model.nv,)) for _ in range(3))
    fext = rng.normal(size=shape + (model.nbodies, 6))
    return q, v, a, tau, fext, q1


def empty_like_result(result):
    if isinstance(result, tuple):
        return tuple(np.full(np.shape(r), np.nan) for r in result)
    return np.full(np.shape(result), np.nan)


@pytest.mark.parametrize("batch", [None, 3])
@pytest.mark.parametrize("mimic", [False, True])
def test_out_receives_exactly_the_result(backend, batch, mimic):
    model = random_model(2, nlinks=6, floating_base=True)
    if mimic:
        revolute = [n for n, k in zip(model.joint_names, model.joint_kinds) if rbd.model.JOINT_KINDS[rbd.JointKind(k)].nv == 1]
        model = rbd.couple_joints(model, [(revolute[-1], revolute[0], 0.5, 0.1)])
    q, v, a, tau, fext, q1 = states(model, batch)
    for name, args, kwargs in algorithm_calls(q, v, a, tau, fext, q1, [model.frame_names[-1]]):
        function = getattr(rbd, name)
        expected = function(model, *args, **kwargs)
        out = empty_like_result(expected)
        got = function(model, *args, out=out, **kwargs)
        assert got is out, name
        for o, e in zip(out if isinstance(out, tuple) else (out,), expected if isinstance(expected, tuple)
                        else (expected,)):
            np.testing.assert_array_equal(o, e, err_msg=name)


def test_out_as_a_list_and_a_zero_d_array(backend):
    model = rbd.sample_model("quadruped")
    q, v, a, _, _, _ = states(model, None)
    out = [np.empty((model.nv, model.nv)) for _ in range(3)]
    assert rbd.rnea_derivatives(model, q, v, a, out=out) is out
    np.testing.assert_allclose(out[2], rbd.crba(model, q), rtol=0, atol=1e-12)  # dtau_da = M
    energy = np.empty(())
    assert rbd.kinetic_energy(model, q, v, out=energy) is energy
    assert float(energy) == rbd.kinetic_energy(model, q, v)


def refusals(model):
    """(call, what) pairs of bad ``out`` arguments."""
    q, v, a, _, _, _ = states(model, None)
    Q = np.stack([q, q])
    n = model.nv
    read_only = np.zeros(n)
    read_only.setflags(write=False)
    shared = np.tile(v, 8)  # inputs read through a memoryview of it, out in it
    array_input = array.array("d", v)
    unaligned = np.frombuffer(bytearray(8 * n + 1), dtype=np.float64, offset=1, count=n)
    fext = np.zeros((model.nbodies, 6))
    return [
        (lambda: rbd.rnea(model, q, v, a, out=np.empty(n + 1)), "shape"),
        (lambda: rbd.rnea(model, q, v, a, out=np.empty((1, n))), "shape"),
        (lambda: rbd.rnea(model, Q, v, a, out=np.empty(n)), "batch shape"),
        (lambda: rbd.rnea(model, q, v, a, out=np.empty(n, np.float32)), "dtype"),
        (lambda: rbd.rnea(model, q, v, a, out=[0.0] * n), "a list"),
        (lambda: rbd.rnea(model, q, v, a, out=np.empty((n, 2))[:, 0]), "non-contiguous"),
        (lambda: rbd.rnea(model, q, v, a, out=read_only), "read-only"),
        (lambda: rbd.crba(model, q, out=np.broadcast_to(np.zeros(1), (n, n))), "read-only"),
        (lambda: rbd.rnea(model, q, v, a, out=v), "the input v"),
        (lambda: rbd.normalize(model, q, out=q), "the input q"),
        (lambda: rbd.gravity(model, q=q, out=q[:n]), "the input q, by keyword"),
        (lambda: rbd.rnea(model, q, v, a=a, out=a), "the input a, by keyword"),
        (lambda: rbd.rnea(model, q=q, v=v, a=a, out=v), "every input by keyword"),
        (lambda: rbd.rnea(model, q, v, a, fext=fext, out=fext.reshape(-1)[:n]), "the input fext, by keyword"),
        (lambda: rbd.rnea_derivatives(model, q, v, a, out=np.empty((n, n))), "one array for three"),
        (lambda: rbd.rnea_derivatives(model, q, v, a, out=(np.empty((n, n)),) * 3), "the same array thrice"),
        (lambda: rbd.rnea_derivatives(model, q, v, a, out=(np.empty((n, n)),) * 2), "two for three"),
        (lambda: rbd.kinetic_energy(model, q, v, out=np.empty(1)), "scalar into (1,)"),
        (lambda: rbd.aba(model, np.asfortranarray(Q), Q[:, :n].copy(), Q[:, :n].copy(),
                         out=np.asfortranarray(Q)[:, :n]), "a view of a converted input"),
        (lambda: rbd.rnea(model, q, memoryview(shared)[:n], a, out=shared[1:n + 1]), "a memoryview input"),
        (lambda: rbd.frame_jacobian(model, memoryview(shared)[:model.nq], model.frame_names[-1],
                                    out=shared[:6 * n].reshape(6, n)), "a memoryview q"),
        (lambda: rbd.rnea(model, Q, memoryview(shared[:2 * n].reshape(2, n)), a, out=shared[n:3 * n].reshape(2, n)),
         "a batch over a memoryview, one sample along"),
        (lambda: rbd.rnea(model, q, array_input, a, out=np.frombuffer(array_input, dtype=np.float64)),
         "an array.array input"),
        (lambda: rbd.rnea(model, q, v, a, out=unaligned), "unaligned"),
        (lambda: rbd.rnea(model, q, v, a, out=np.ma.masked_array(np.empty(n))), "masked (its mask ignored)"),
        (lambda: rbd.rnea(model, Q, Q[:, :n].copy(), Q[:, :n].copy(), out=np.ma.masked_array(np.empty((2, n)))),
         "masked, a batch"),
    ]


def outcome(call):
    try:
        call()
    except (TypeError, ValueError) as exc:
        return type(exc).__name__, str(exc)
    return "accepted", ""


@pytest.mark.skipif(not HAVE_COMPILED, reason="rbd_c is not built")
def test_a_wrong_out_is_the_same_error_on_both_backends():
    model = rbd.sample_model("quadruped")
    previous = rbd.backend
    try:
        seen = {}
        for backend in ("numpy", "cython"):
            rbd.set_backend(backend)
            seen[backend] = [outcome(call) for call, _ in refusals(model)]
    finally:
        rbd.set_backend(previous)
    for (_, what), ours, theirs in zip(refusals(model), seen["cython"], seen["numpy"]):
        assert ours == theirs, what
        assert ours[0] != "accepted", what
        assert "out" in ours[1], what
