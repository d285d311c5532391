"""Batches in SIMD lanes: rbd_c runs batched rnea (gravity, nonlinear effects), crba, aba and
rnea_derivatives, inverse_mass_matrix and aba_derivatives in blocks of several samples per instruction (rbd_c/_lanes.h), with kernels compiled for
the baseline, AVX2 + FMA and AVX-512, the widest the machine has chosen at run time.

Oracles: the same call on one sample at a time (which never takes the block path) and the
NumPy backend.  Every test runs with the instruction set chosen by the machine, at most
AVX2, and the baseline, so every kernel the machine can run is exercised.  Batch sizes are
odd (a partial last block), inputs strided or Fortran-ordered, and the random trees of
tests/models.py go through every joint kind.
"""
import warnings

import numpy as np
import pytest

import rbd
import rbd.reference as reference

from conftest import HAVE_COMPILED
from models import random_model, random_state, m_inverse_slack, aba_derivatives_slack

pytestmark = pytest.mark.skipif(not HAVE_COMPILED, reason="rbd_c is not built")

if HAVE_COMPILED:
    import rbd_c

SIZES = (1, 3, 5, 7, 13)


@pytest.fixture(params=["auto", "avx2", "baseline"])
def simd(request):
    previous = rbd_c._model._simd_mode_name()
    rbd_c.set_simd(request.param)
    yield request.param
    rbd_c.set_simd(previous)


@pytest.fixture(scope="module", params=[0, 1, 2])
def model(request):
    return random_model(request.param, nlinks=16)


def calls(q, v, a, tau, fext):
    """(name, positional arrays, keyword arrays) of every algorithm with a block kernel."""
    return [("rnea", (q, v, a), {}), ("rnea", (q, v, a), {"fext": fext}), ("gravity", (q,), {}),
            ("nonlinear_effects", (q, v), {}), ("crba", (q,), {}), ("aba", (q, v, tau), {}),
            ("aba", (q, v, tau), {"fext": fext}), ("rnea_derivatives", (q, v, a), {}),
            ("rnea_derivatives", (q, v, a), {"fext": fext}), ("inverse_mass_matrix", (q,), {}),
            ("aba_derivatives", (q, v, tau), {}), ("aba_derivatives", (q, v, tau), {"fext": fext})]


def joined(result, batch_ndim):
    """An algorithm's result as one array: several outputs stacked after the batch axes."""
    return np.stack(result, axis=batch_ndim) if isinstance(result, tuple) else np.asarray(result)


def one_by_one(impl, name, model, args, kwargs, batch):
    """The call on every sample alone, stacked back into the batch's shape."""
    flat = [np.reshape(x, (-1,) + np.shape(x)[len(batch):]) for x in args]
    kflat = {k: np.reshape(x, (-1,) + np.shape(x)[len(batch):]) for k, x in kwargs.items()}
    n = flat[0].shape[0]
    outs = [joined(getattr(impl, name)(model, *[x[s] for x in flat], **{k: x[s] for k, x in kflat.items()}), 0)
            for s in range(n)]
    return np.reshape(np.stack(outs), batch + np.shape(outs[0]))


def tolerance(name, single, ref, model=None, q=None, args=(), kwargs=None):
    """1e-14 of the result's size; forward dynamics inherits the conditioning of M, so
    there the lanes may also differ from one sample as much as the two backends do, and
    M^-1 as much as rounding M moves it (FMA and the lanes' sine and cosine change the
    last bits)."""
    scale = max(1.0, float(np.max(np.abs(single))))
    tol = 1e-14 * scale
    if name == "aba":
        tol += 4.0 * float(np.max(np.abs(single - ref)))
    elif name == "inverse_mass_matrix":
        tol += m_inverse_slack(rbd_c.crba(model, q), single)
    elif name == "aba_derivatives":  # (single: the three outputs stacked after the batch axes)
        tol += aba_derivatives_slack(model, *args, (kwargs or {}).get("fext"), single[..., 2, :, :])
    return tol


def assert_batches_match(model, arrays, batch):
    """Every algorithm on the batch ``arrays`` equals its one-sample calls."""
    for name, args, kwargs in calls(*arrays):
        batched = joined(getattr(rbd_c, name)(model, *args, **kwargs), len(batch))
        single = one_by_one(rbd_c, name, model, args, kwargs, batch)
        ref = joined(getattr(reference, name)(model, *args, **kwargs), len(batch))
        assert np.max(np.abs(batched - single)) <= tolerance(name, single, ref, model, args[0], args, kwargs), (
            name, kwargs.keys())


def test_every_joint_kind_is_in_the_trees(model):
    assert set(np.asarray(model.joint_kinds).tolist()) == set(range(len(rbd.model.JOINT_KINDS)))


@pytest.mark.parametrize("n", SIZES)
def test_batches_equal_single_calls_and_the_numpy_backend(model, simd, n):
    rng = np.random.default_rng(n)
    q, v, a, tau, fext = random_state(model, rng, batch=(n,))
    for name, args, kwargs in calls(q, v, a, tau, fext):
        batched = joined(getattr(rbd_c, name)(model, *args, **kwargs), 1)
        single = one_by_one(rbd_c, name, model, args, kwargs, (n,))
        ref = joined(getattr(reference, name)(model, *args, **kwargs), 1)
        assert batched.shape == single.shape == ref.shape
        tol = tolerance(name, single, ref, model, q, args, kwargs)
        assert np.max(np.abs(batched - single)) <= tol, (name, kwargs.keys())
        # against NumPy: as close as a single compiled call is (plus the same 1e-14)
        assert np.max(np.abs(batched - ref)) <= np.max(np.abs(single - ref)) + tol, (name, kwargs.keys())


def test_strided_fortran_and_several_batch_dimensions(model, simd):
    rng = np.random.default_rng(7)
    q, v, a, tau, fext = random_state(model, rng, batch=(3, 10))
    # every other sample along the last batch axis (strided), and Fortran-ordered copies
    views = [x[:, ::2] for x in (q, v, a, tau, fext)]
    fortran = [np.asfortranarray(x) for x in views]
    for arrays in (views, fortran):
        assert_batches_match(model, arrays, (3, 5))


def test_a_block_with_a_bad_sample_raises_as_a_single_call(model, simd):
    rng = np.random.default_rng(3)
    q, v, a, tau, fext = random_state(model, rng, batch=(5,))
    v[3, 0] = np.nan
    with pytest.raises(ValueError, match="v must contain only finite numbers"):
        rbd_c.rnea(model, q, v, a)
    with pytest.raises(ValueError, match="v must contain only finite numbers"):
        rbd_c.aba(model, q, v, tau)


def test_a_singular_joint_in_a_block_names_the_first_sample_s_joint(simd):
    """A massless leaf makes forward dynamics singular: the batch raises the error the
    first bad sample raises alone."""
    b = rbd.ModelBuilder("leaf")
    b.add_link("base", mass=1.0, com=(0, 0, 0), inertia=np.eye(3) * 0.1)
    b.add_link("leaf", mass=0.0, com=(0, 0, 0), inertia=np.zeros((3, 3)))
    b.add_joint("hinge", "revolute", parent="base", child="leaf", axis=(0, 0, 1))
    model = b.build(floating_base=False)
    q = np.zeros((6, model.nq))
    v = np.zeros((6, model.nv))
    with pytest.raises(ValueError) as alone:
        rbd_c.aba(model, q[0], v[0], v[0])
    with pytest.raises(ValueError) as batched:
        rbd_c.aba(model, q, v, v)
    assert str(batched.value) == str(alone.value)
    for name, args in (("inverse_mass_matrix", (q,)), ("aba_derivatives", (q, v, v))):
        with pytest.raises(ValueError) as alone:
            getattr(rbd_c, name)(model, *(x[0] for x in args))
        with pytest.raises(ValueError) as batched:
            getattr(rbd_c, name)(model, *args)
        assert str(batched.value) == str(alone.value), name


def test_armature_in_the_lanes(simd):
    plain = random_model(4, nlinks=10)
    model = plain.replace(armature=np.random.default_rng(4).uniform(0.05, 0.5, size=plain.nv))
    q = random_state(model, np.random.default_rng(5), batch=(9,))[0]
    assert_batches_match(model, random_state(model, np.random.default_rng(5), batch=(9,)), (9,))
    # armature changes what it should: M's diagonal
    np.testing.assert_allclose(rbd_c.crba(model, q) - rbd_c.crba(plain, q),
                               np.broadcast_to(np.diag(model.armature), (9, model.nv, model.nv)), atol=1e-12)


def test_mimic_models_batch(simd):
    from oracles.pinocchio_adapter import robot_urdf_path
    path = robot_urdf_path("panda")
    if path is None:
        pytest.skip("example-robot-data is not installed")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = rbd.load_urdf(path, mimic=True)
    assert model.mimic
    assert_batches_match(model, random_state(model, np.random.default_rng(6), batch=(5,)), (5,))


def test_simd_switch():
    previous = rbd_c._model._simd_mode_name()
    allowed = {"auto": {"avx512", "avx2", "baseline"}, "avx2": {"avx2", "baseline"}, "baseline": {"baseline"},
               "off": {"off"}}
    try:
        for mode, names in allowed.items():
            rbd_c.set_simd(mode)
            assert rbd_c.simd() in names
        with pytest.raises(ValueError, match="mode must be one of"):
            rbd_c.set_simd("avx9000")
    finally:
        rbd_c.set_simd(previous)
