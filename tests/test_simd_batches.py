"""Batches in SIMD lanes: rbd_c runs batched rnea (gravity, nonlinear effects), crba, aba,
rnea_derivatives, inverse_mass_matrix, aba_derivatives, constrained_dynamics and
impulse_dynamics in blocks of several samples per instruction (rbd_c/_lanes.h), with kernels
compiled for the baseline, AVX2 + FMA and AVX-512, the widest the machine has chosen at run time.

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

from conftest import HAVE_COMPILED, rbd_c_threads
from models import random_model, random_state, m_inverse_slack, aba_slack, aba_derivatives_slack, contacts_on

pytestmark = pytest.mark.skipif(not HAVE_COMPILED, reason="rbd_c is not built")

if HAVE_COMPILED:
    import rbd_c
    import rbd_c._contacts

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


def calls(q, v, a, tau, fext, contacts):
    """(name, positional arrays, keyword arguments) of every algorithm with a block kernel;
    the contact dynamics with ``contacts`` (a point, a flat and a point contact; None: none) and, damped,
    with a flat contact added on the first one's frame (redundant: only the damping solves it)."""
    with_contacts = []
    if contacts is not None:
        redundant = contacts + [rbd.Contact(contacts[0].frame, 6, "local_world_aligned")]
        with_contacts = [("constrained_dynamics", (q, v, tau), {"contacts": contacts, "fext": fext}),
                         ("constrained_dynamics", (q, v, tau), {"contacts": redundant, "regularization": 1e-3}),
                         ("impulse_dynamics", (q, v), {"contacts": contacts, "restitution": 0.3})]
    return with_contacts + [("rnea", (q, v, a), {}), ("rnea", (q, v, a), {"fext": fext}), ("gravity", (q,), {}),
            ("nonlinear_effects", (q, v), {}), ("crba", (q,), {}), ("aba", (q, v, tau), {}),
            ("aba", (q, v, tau), {"fext": fext}), ("rnea_derivatives", (q, v, a), {}),
            ("rnea_derivatives", (q, v, a), {"fext": fext}), ("inverse_mass_matrix", (q,), {}),
            ("aba_derivatives", (q, v, tau), {}), ("aba_derivatives", (q, v, tau), {"fext": fext})]


def compiled(name):
    """rbd_c's function ``name`` (the contact dynamics are in rbd_c._contacts)."""
    return getattr(rbd_c, name) if hasattr(rbd_c, name) else getattr(rbd_c._contacts, name)


def numpy_call(name):
    """The NumPy backend's ``name`` (the contact dynamics: rbd's composition of NumPy calls)."""
    if hasattr(reference, name):
        return getattr(reference, name)

    def call(*args, **kwargs):
        previous = rbd.backend
        rbd.set_backend("numpy")
        try:
            return getattr(rbd, name)(*args, **kwargs)
        finally:
            rbd.set_backend(previous)
    return call


def joined(result, batch_ndim):
    """An algorithm's result as one array: several outputs stacked after the batch axes
    (vectors of different lengths, as the contact dynamics', joined end to end)."""
    if not isinstance(result, tuple):
        return np.asarray(result)
    if len({np.shape(x) for x in result}) > 1:
        return np.concatenate(result, axis=-1)
    return np.stack(result, axis=batch_ndim)


def one_by_one(impl, name, model, args, kwargs, batch):
    """The call impl(name) on every sample alone, stacked back into the batch's shape."""
    flat = [np.reshape(x, (-1,) + np.shape(x)[len(batch):]) for x in args]
    kflat = {k: np.reshape(x, (-1,) + np.shape(x)[len(batch):]) for k, x in kwargs.items() if isinstance(x, np.ndarray)}
    constant = {k: x for k, x in kwargs.items() if k not in kflat}  # (contacts, regularization, ...)
    n = flat[0].shape[0]
    outs = [joined(impl(name)(model, *[x[s] for x in flat], **{k: x[s] for k, x in kflat.items()},
                                       **constant), 0)
            for s in range(n)]
    return np.reshape(np.stack(outs), batch + np.shape(outs[0]))


def tolerance(name, single, ref, model=None, q=None, args=(), kwargs=None):
    """1e-14 of the result's size; forward dynamics inherits the conditioning of M, so
    there the lanes may also differ from one sample as much as the two backends do, and
    M^-1 as much as rounding M moves it (FMA, where the lanes and the single calls are
    compiled differently, changes the last bits)."""
    scale = max(1.0, float(np.max(np.abs(single))))
    tol = 1e-14 * scale
    if name == "aba":  # (the lanes' ABA works in body frames, one sample's at the bodies' origins)
        tol += max(4.0 * float(np.max(np.abs(single - ref))), aba_slack(model, q, single))
    elif name in ("constrained_dynamics", "impulse_dynamics"):  # (and J M^-1 J^T's conditioning)
        tol += 4.0 * max(float(np.max(np.abs(single - ref))), contact_slack(name, single, model, args, kwargs))
    elif name == "inverse_mass_matrix":
        tol += m_inverse_slack(rbd_c.crba(model, q), single)
    elif name == "aba_derivatives":  # (single: the three outputs stacked after the batch axes)
        tol += aba_derivatives_slack(model, *args, (kwargs or {}).get("fext"), single[..., 2, :, :])
    return tol


def contact_slack(name, single, model, args, kwargs):
    """How far the single calls move when q moves by a few rounding errors (1e-14 along
    random directions, the most of three): FMA where the lanes and the single calls are
    compiled differently rounds q's functions differently."""
    q = np.asarray(args[0])
    rng = np.random.default_rng(0)
    slack = 0.0
    for _ in range(3):
        dq = rng.standard_normal(q.shape[:-1] + (model.nv,)) * 1e-14
        moved = (rbd.integrate(model, q, dq),) + tuple(args[1:])
        slack = max(slack, float(np.max(np.abs(one_by_one(compiled, name, model, moved, kwargs, q.shape[:-1])
                                                - single))))
    return slack


def assert_batches_match(model, arrays, batch):
    """Every algorithm on the batch ``arrays`` equals its one-sample calls."""
    for name, args, kwargs in calls(*arrays, None if model.mimic else contacts_on(model)):
        batched = joined(compiled(name)(model, *args, **kwargs), len(batch))
        single = one_by_one(compiled, name, model, args, kwargs, batch)
        ref = joined(numpy_call(name)(model, *args, **kwargs), len(batch))
        assert np.max(np.abs(batched - single)) <= tolerance(name, single, ref, model, args[0], args, kwargs), (
            name, kwargs.keys())


def test_every_joint_kind_is_in_the_trees(model):
    assert set(np.asarray(model.joint_kinds).tolist()) == set(range(len(rbd.model.JOINT_KINDS)))


@pytest.mark.parametrize("n", SIZES)
def test_batches_equal_single_calls_and_the_numpy_backend(model, simd, n):
    rng = np.random.default_rng(n)
    q, v, a, tau, fext = random_state(model, rng, batch=(n,))
    for name, args, kwargs in calls(q, v, a, tau, fext, contacts_on(model)):
        batched = joined(compiled(name)(model, *args, **kwargs), 1)
        single = one_by_one(compiled, name, model, args, kwargs, (n,))
        ref = joined(numpy_call(name)(model, *args, **kwargs), 1)
        assert batched.shape == single.shape == ref.shape
        tol = tolerance(name, single, ref, model, q, args, kwargs)
        assert np.max(np.abs(batched - single)) <= tol, (name, kwargs.keys())
        # against NumPy: as close as a single compiled call is (plus the same 1e-14)
        assert np.max(np.abs(batched - ref)) <= np.max(np.abs(single - ref)) + tol, (name, kwargs.keys())


def test_joint_angles_beyond_the_polynomials_range(simd):
    """Angles of 1e5 and beyond take libm's sine and cosine (rbd_c/_sincos.h: the
    polynomial's reduction by pi/2 is exact only below), in a lane among ordinary ones and
    in a single call alike; both equal the NumPy backend's (np.sin, np.cos) to rounding.
    Were the polynomial used up there, sin(1e9) would be off by 5e-8, sin(1e12) by 2e-6."""
    model = rbd.sample_model("arm7")
    q, v, a, tau, fext = random_state(model, np.random.default_rng(5), batch=(9,))
    q[2] = [1e5, -1e5, 3.7e5, -2.2e6, 1e9, -3e11, 1e12]
    q[5, 0] = 99999.9  # (just inside the polynomial's range)
    for name, args in (("rnea", (q, v, a)), ("crba", (q,)), ("aba", (q, v, tau)), ("gravity", (q,)),
                       ("forward_kinematics", (q,))):  # (the single calls' sines and cosines a block at a time)
        batched = compiled(name)(model, *args)
        single = one_by_one(compiled, name, model, args, {}, (9,))
        ref = numpy_call(name)(model, *args)
        scale = max(1.0, float(np.max(np.abs(ref))))
        assert np.max(np.abs(batched - single)) <= tolerance(name, single, ref, model, q, args), name
        assert np.max(np.abs(single - ref)) <= 1e-13 * scale, name


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


@pytest.mark.parametrize("kind", ["revolute", "spherical", "planar"])
def test_a_singular_joint_in_a_block_names_the_first_sample_s_joint(simd, kind):
    """A massless leaf makes forward dynamics singular (a one-dof pivot, or a multi-dof
    joint's D inverted in the lanes): the batch raises the error the first bad sample
    raises alone."""
    b = rbd.ModelBuilder("leaf")
    b.add_link("base", mass=1.0, com=(0, 0, 0), inertia=np.eye(3) * 0.1)
    b.add_link("leaf", mass=0.0, com=(0, 0, 0), inertia=np.zeros((3, 3)))
    b.add_joint("hinge", kind, parent="base", child="leaf", axis=(0, 0, 1))
    model = b.build(floating_base=False)
    q = np.broadcast_to(rbd.neutral(model), (6, model.nq)).copy()
    v = np.zeros((6, model.nv))
    with pytest.raises(ValueError) as alone:
        rbd_c.aba(model, q[0], v[0], v[0])
    with pytest.raises(ValueError) as batched:
        rbd_c.aba(model, q, v, v)
    assert str(batched.value) == in_sample(str(alone.value), "joint 'hinge'", 0)
    for name, args in (("inverse_mass_matrix", (q,)), ("aba_derivatives", (q, v, v))):
        with pytest.raises(ValueError) as alone:
            compiled(name)(model, *(x[0] for x in args))
        with pytest.raises(ValueError) as batched:
            compiled(name)(model, *args)
        assert str(batched.value) == in_sample(str(alone.value), "joint 'hinge'", 0), name


def in_sample(message, where, sample):
    """A single call's error ``message`` as a batch tells it: ``sample`` named after ``where``."""
    assert where in message
    return message.replace(where, "%s in sample %s of the batch" % (where, sample), 1)


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
        with pytest.raises(TypeError, match="mode must be a str"):
            rbd_c.set_simd(None)
        rbd_c.set_simd(" Baseline ")  # any case, as RBD_SIMD and RBD_CPU
        assert rbd_c.simd() == "baseline"
    finally:
        rbd_c.set_simd(previous)


SWITCHING_WHILE_RUNNING = """
import threading, time, numpy as np, rbd, rbd_c
model = rbd.sample_model("arm7")
Q = rbd.random_configuration(model, rng=0, batch=16)
Z = np.zeros((16, model.nv))
expected = rbd.rnea(model, Q, Z, Z)
done = False
def switch():
    while not done:
        for mode in ("avx2", "auto", "baseline", "auto", "off", "auto"):
            rbd_c.set_simd(mode)
thread = threading.Thread(target=switch)
thread.start()
end = time.monotonic() + 5.0
while time.monotonic() < end:
    got = rbd.rnea(model, Q, Z, Z)
    assert np.allclose(got, expected, rtol=1e-12, atol=1e-12)
done = True
thread.join()
print("ok")
"""


def test_switching_simd_while_another_thread_runs_batches():
    """set_simd from one thread while another runs batches: the kernel set is read once per
    choice (reading it twice could pair an old test with a new cap and run AVX-512 on a
    machine without it: a SIGILL within seconds, before).  In a child process, so a crash
    fails this test instead of the run."""
    import subprocess
    import sys
    done = subprocess.run([sys.executable, "-c", SWITCHING_WHILE_RUNNING], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0 and done.stdout.strip() == "ok", (done.returncode, done.stderr[-2000:])


def test_a_redundant_contact_set_in_one_lane_raises_as_the_single_call(simd):
    """A planar arm stretched straight loses a direction at its tip: a point contact there
    is redundant in that sample only.  The block raises the single call's error (it names
    the contacts); the damped batch equals its single calls."""
    b = rbd.ModelBuilder("arm")
    for name in ("base", "upper", "fore", "slider"):
        b.add_link(name, mass=1.0, com=(0.5, 0, 0), inertia=np.eye(3) * 0.1)
    b.add_joint("shoulder", "revolute", parent="base", child="upper", axis=(0, 0, 1))
    along_x = np.array([[1, 0, 0, 1.0], [0, 1, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1]])
    b.add_joint("elbow", "revolute", parent="upper", child="fore", axis=(0, 0, 1), origin=along_x)
    b.add_joint("lift", "prismatic", parent="fore", child="slider", axis=(0, 0, 1), origin=along_x)
    model = b.build(floating_base=False)
    contacts = [rbd.Contact(model.joint_frame("lift"), 3)]
    q = np.array([[0.3, 0.5, 0.1], [0.2, -0.4, 0.0], [0.1, 0.0, 0.2], [0.4, 0.9, 0.3], [0.0, 1.2, 0.0]])
    v = np.tile([0.1, -0.2, 0.3], (5, 1))
    with pytest.raises(ValueError) as alone:
        compiled('constrained_dynamics')(model, q[2], v[2], v[2], contacts)
    for call in (lambda: compiled('constrained_dynamics')(model, q, v, v, contacts),
                 lambda: compiled('impulse_dynamics')(model, q, v, contacts),
                 lambda: numpy_call('constrained_dynamics')(model, q, v, v, contacts)):
        with pytest.raises(ValueError) as batched:  # (sample 2: inside a block, found again alone)
            call()
        assert str(batched.value) == in_sample(str(alone.value), "rank-deficient", 2)
    for name, args in (("constrained_dynamics", (q, v, v)), ("impulse_dynamics", (q, v))):
        kwargs = {"contacts": contacts, "regularization": 1e-6}
        batched = joined(compiled(name)(model, *args, **kwargs), 1)
        single = one_by_one(compiled, name, model, args, kwargs, (5,))
        ref = joined(numpy_call(name)(model, *args, **kwargs), 1)
        assert np.max(np.abs(batched - single)) <= tolerance(name, single, ref, model, q, args, kwargs)


STAGED = ("crba", "rnea_derivatives", "aba_derivatives")  # (set_block(..., stage=True))


def stream_min(doubles):
    """Set the batch output size (doubles) from which staged blocks stream; returns the previous."""
    return rbd_c._model._set_stream_min(doubles)


def staged_calls(model, rng, n):
    q, v, a, tau, fext = random_state(model, rng, batch=(n,))
    return [("crba", (q,), {}), ("rnea_derivatives", (q, v, a), {"fext": fext}),
            ("aba_derivatives", (q, v, tau), {}), ("aba_derivatives", (q, v, tau), {"fext": fext})]


@pytest.mark.parametrize("n", (1, 7, 13))
def test_streamed_outputs_equal_single_calls(model, simd, n):
    """Large batches of the nv x nv outputs write each block to a stage in the cache and
    stream it to memory (non-temporal stores): forced here on small batches, the result
    equals the single calls as the direct path's does (with a partial last block)."""
    previous = stream_min(0)
    try:
        for name, args, kwargs in staged_calls(model, np.random.default_rng(11 + n), n):
            batched = joined(compiled(name)(model, *args, **kwargs), 1)
            single = one_by_one(compiled, name, model, args, kwargs, (n,))
            ref = joined(numpy_call(name)(model, *args, **kwargs), 1)
            assert np.max(np.abs(batched - single)) <= tolerance(name, single, ref, model, args[0], args, kwargs), name
    finally:
        stream_min(previous)


@pytest.mark.parametrize("threads", [1, 2])
def test_a_large_batch_streams_the_same_numbers_as_the_direct_path(threads):
    """A batch above the default threshold (crba on a 40-link tree: a few MB of output),
    one thread and two, and into an out= array 8 bytes off a 16-byte boundary (the
    non-temporal stores' alignment): bit for bit the numbers of the direct path, whose
    equality to single calls the tests above check."""
    model = random_model(5, nlinks=40)
    threshold = stream_min(0)
    stream_min(threshold)
    samples = threshold // (model.nv * model.nv) + 9
    rng = np.random.default_rng(12)
    q = random_state(model, rng, batch=(samples,))[0]
    previous_threads = rbd_c_threads(threads)
    try:
        streamed = rbd_c.crba(model, q)
        shifted = np.empty(samples * model.nv * model.nv + 1)[1:].reshape(samples, model.nv, model.nv)
        assert shifted.ctypes.data % 16 == 8
        rbd_c.crba(model, q, out=shifted)
        previous = stream_min(1 << 62)
        try:
            direct = rbd_c.crba(model, q)
        finally:
            stream_min(previous)
    finally:
        rbd_c_threads(previous_threads)
    assert np.array_equal(streamed, direct)
    assert np.array_equal(shifted, direct)


@pytest.mark.parametrize("name", STAGED)
def test_an_overflow_in_a_streamed_batch_is_the_overflow_error(name):
    """The last sample's prismatic coordinate of 1e160 overflows its inertias: the error,
    as in the direct path (the staged block is checked before it is streamed)."""
    model = random_model(3, nlinks=9, floating_base=True)
    prismatic = [i for i, k in enumerate(model.joint_kinds) if k == int(rbd.JointKind.PRISMATIC)]
    q, v, a, tau, fext = random_state(model, np.random.default_rng(13), batch=(13,))
    q[-1, model.q_idx[prismatic[0]]] = 1e160
    args = {"crba": (q,), "rnea_derivatives": (q, v, a), "aba_derivatives": (q, v, tau)}[name]
    previous = stream_min(0)
    try:
        with pytest.raises(ValueError, match="too large for float64"):
            compiled(name)(model, *args)
    finally:
        stream_min(previous)


def test_a_failed_streamed_block_leaves_no_stale_numbers_in_out():
    """A singular sample in the second block (one-sample fallback, which stops there):
    after the error, every sample of out= holds either what was there or its own result,
    never a stale stage (an earlier block's numbers, or uninitialised memory)."""
    from models import two_sliders_model
    model = two_sliders_model()
    n = 24
    rng = np.random.default_rng(9)
    q = np.stack([rbd.random_configuration(model, rng) for _ in range(n)])
    v, tau = rng.standard_normal((2, n, model.nv))
    good = rbd_c.aba_derivatives(model, q, v, tau)
    q[10, model.q_idx[model.joint_names.index("slide1")]] = 0.0
    previous = stream_min(0)
    try:
        out = tuple(np.full((n, model.nv, model.nv), -7.0) for _ in range(3))
        with pytest.raises(rbd.SingularModelError, match="'hinge1'"):
            rbd_c.aba_derivatives(model, q, v, tau, out=out)
    finally:
        stream_min(previous)
    for mine, right in zip(out, good):
        for s in range(n):
            assert np.all(mine[s] == -7.0) or (s != 10 and np.array_equal(mine[s], right[s])), s
    assert not np.all(out[0][:8] == -7.0)  # (the first block went through)
