"""The compiled backend (rbd_c) against the NumPy reference (rbd.reference).

Every algorithm of ``rbd.ALGORITHMS`` is called on both, directly (not through
``rbd.set_backend``), on the sample robots and on random trees that cover
every joint kind; single samples and batches must agree to 1e-10.  Then the
things only the compiled path has: threads (Python threads and OpenMP), the
fast argument path versus the general one, bad input giving the reference's
errors, and inputs left untouched.
"""
import threading

import numpy as np
import pytest

import rbd
from rbd import reference as ref

from conftest import HAVE_COMPILED
from models import algorithm_calls, random_model, m_inverse_slack, aba_slack, aba_derivatives_slack, topological_tree

if not HAVE_COMPILED:
    pytest.skip("rbd_c is not built", allow_module_level=True)

import rbd_c  # noqa: E402

TOL = 1e-10



# ------------------------------------------------------------------------------------------
# Models
# ------------------------------------------------------------------------------------------
MODEL_IDS = ["arm7", "quadruped", "tree0", "tree1-fixed-base", "tree2", "parents-first", "parents-first-fixed"]


@pytest.fixture(scope="module", params=MODEL_IDS)
def model(request):
    name = request.param
    if name == "tree0":
        return random_model(0)
    if name == "tree1-fixed-base":
        return random_model(1, nlinks=12, floating_base=False)
    if name == "tree2":
        return random_model(2, nlinks=20)
    if name == "parents-first":  # bodies parents first, not depth first
        return topological_tree(3, n=12, free=True)
    if name == "parents-first-fixed":
        return topological_tree(4, n=11)
    return rbd.sample_model(name)


def random_state(model, rng, batch=()):
    """Valid q (unit quaternions), v, a, tau and fext with leading ``batch`` dimensions."""
    v0 = rng.normal(size=batch + (model.nv,))
    q = ref.integrate(model, np.broadcast_to(ref.neutral(model), batch + (model.nq,)), 2.0 * v0)
    v = rng.normal(size=batch + (model.nv,))
    a = rng.normal(size=batch + (model.nv,))
    tau = rng.normal(size=batch + (model.nv,))
    fext = rng.normal(size=batch + (model.nbodies, 6))
    return q, v, a, tau, fext


def _calls(model, q, v, a, tau, fext, frames):
    """(name, args, kwargs) for every algorithm on the given state."""
    return algorithm_calls(q, v, a, tau, fext, ref.integrate(model, q, 0.3 * v), frames)


def _frames(model):
    """A few frames: the first, the last, one in the middle (by name and by index)."""
    n = model.nframes
    return sorted({0, n // 2, n - 1}) + [model.link_frame_names[-1]]


def assert_same(name, args, kwargs, model):
    expected = getattr(ref, name)(model, *args, **kwargs)
    got = getattr(rbd_c, name)(model, *args, **kwargs)
    expected, got = np.asarray(expected), np.asarray(got)
    assert got.shape == expected.shape, name
    assert got.dtype == np.float64, name
    np.testing.assert_allclose(got, expected, rtol=0, atol=TOL * max(1.0, np.abs(expected).max(initial=0)),
                               err_msg="%s%s" % (name, "" if not kwargs else " %s" % kwargs))


# ------------------------------------------------------------------------------------------
# Agreement with the reference
# ------------------------------------------------------------------------------------------
def test_exports_every_algorithm():
    missing = [name for name in rbd.ALGORITHMS if not callable(getattr(rbd_c, name, None))]
    assert not missing
    assert callable(rbd_c.set_num_threads) and callable(rbd_c.get_num_threads)


def test_neutral(model):
    assert_same("neutral", (), {}, model)


def test_single_samples_agree(model):
    rng = np.random.default_rng(7)
    for _ in range(3):
        q, v, a, tau, fext = random_state(model, rng)
        for name, args, kwargs in _calls(model, q, v, a, tau, fext, _frames(model)):
            assert_same(name, args, kwargs, model)


# the algorithms whose batches run in SIMD lanes (tests/test_simd_batches.py)
SIMD_BATCHED = {"rnea", "gravity", "nonlinear_effects", "crba", "aba", "rnea_derivatives", "inverse_mass_matrix",
                "aba_derivatives"}


@pytest.mark.parametrize("batch", [(7,), (2, 3)], ids=["N7", "2x3"])
def test_batches_agree(model, batch):
    rng = np.random.default_rng(11)
    q, v, a, tau, fext = random_state(model, rng, batch)
    for name, args, kwargs in _calls(model, q, v, a, tau, fext, _frames(model)[:1]):
        assert_same(name, args, kwargs, model)
        # and each sample of the batch equals the single call on it (output by output)
        got = getattr(rbd_c, name)(model, *args, **kwargs)
        for idx in np.ndindex(*batch):
            single_args = tuple(x[idx] if isinstance(x, np.ndarray) else x for x in args)
            single_kwargs = {k: (x[idx] if isinstance(x, np.ndarray) else x) for k, x in kwargs.items()}
            sample = tuple(x[idx] for x in got) if isinstance(got, tuple) else got[idx]  # several outputs: a tuple
            single = getattr(rbd_c, name)(model, *single_args, **single_kwargs)
            if name in SIMD_BATCHED:  # blocks in SIMD lanes: FMA and the lanes' sin/cos move the last bits
                atol = 1e-14 * max(1.0, np.max(np.abs(single)))
                if name == "aba":  # ... amplified by M's conditioning (and the lanes' ABA is in body frames)
                    atol += max(4.0 * np.max(np.abs(single - ref.aba(model, *single_args, **single_kwargs))),
                                aba_slack(model, single_args[0], single))
                elif name == "aba_derivatives":  # ... as rounding M moves M^-1 and -M^-1 dtau/dx
                    atol += aba_derivatives_slack(model, *single_args, single_kwargs.get("fext"), single[2])
                elif name == "inverse_mass_matrix":  # ... as a perturbation of M by its rounding moves M^-1
                    atol += m_inverse_slack(rbd_c.crba(model, single_args[0]), single)
                np.testing.assert_allclose(sample, single, rtol=0, atol=atol)
            else:
                np.testing.assert_array_equal(sample, single)


def test_scalar_outputs_are_floats(model):
    q, v, *_ = random_state(model, np.random.default_rng(3))
    assert isinstance(rbd_c.kinetic_energy(model, q, v), float)
    assert isinstance(rbd_c.potential_energy(model, q), float)


def test_random_configuration(model):
    q1 = rbd_c.random_configuration(model, np.random.default_rng(5))
    q2 = rbd_c.random_configuration(model, np.random.default_rng(5))
    np.testing.assert_array_equal(q1, q2)
    assert q1.shape == (model.nq,)
    np.testing.assert_allclose(rbd_c.normalize(model, q1), q1, atol=1e-12)  # unit quaternions
    finite_lo, finite_hi = np.isfinite(model.lower_limits), np.isfinite(model.upper_limits)
    assert np.all(q1[finite_lo] >= model.lower_limits[finite_lo])
    assert np.all(q1[finite_hi] <= model.upper_limits[finite_hi])
    assert rbd_c.random_configuration(model).shape == (model.nq,)  # rng=None


def test_identities(model):
    """Backend-independent checks of the compiled algorithms against each other."""
    rng = np.random.default_rng(21)
    q, v, a, tau, fext = random_state(model, rng)
    M = rbd_c.crba(model, q)
    tau = rbd_c.rnea(model, q, v, a, fext)
    np.testing.assert_allclose(rbd_c.aba(model, q, v, tau, fext), a, atol=1e-8)
    nle = rbd_c.nonlinear_effects(model, q, v)
    np.testing.assert_allclose(M @ a + nle, rbd_c.rnea(model, q, v, a), atol=1e-9)
    np.testing.assert_allclose(rbd_c.coriolis_matrix(model, q, v) @ v + rbd_c.gravity(model, q), nle, atol=1e-9)
    np.testing.assert_allclose(rbd_c.kinetic_energy(model, q, v), 0.5 * v @ M @ v, rtol=1e-10)


# ------------------------------------------------------------------------------------------
# Threads
# ------------------------------------------------------------------------------------------
def test_python_threads_get_their_own_results():
    """Threads calling on several models in turn (rbd_c keeps the last model's compiled
    view) each get their own model's results."""
    models = [random_model(3, nlinks=16), random_model(5, nlinks=7, floating_base=False), rbd.sample_model("arm7")]
    rng = np.random.default_rng(0)
    states = [(model, random_state(model, rng)) for _ in range(3) for model in models]
    expected = [(rbd_c.rnea(model, q, v, a, fext), rbd_c.crba(model, q), rbd_c.aba(model, q, v, tau))
                for model, (q, v, a, tau, fext) in states]
    for (model, (q, v, a, tau, fext)), e in zip(states, expected):
        np.testing.assert_allclose(e[0], ref.rnea(model, q, v, a, fext), atol=TOL)
    errors = []

    def hammer(k):
        try:
            for n in range(300):
                i = (k + n) % len(states)
                model, (q, v, a, tau, fext) = states[i]
                got = (rbd_c.rnea(model, q, v, a, fext), rbd_c.crba(model, q), rbd_c.aba(model, q, v, tau))
                for g, e in zip(got, expected[i]):
                    if not np.array_equal(g, e):
                        errors.append((k, n))
                        return
        except Exception as exc:  # noqa: BLE001
            errors.append(exc)

    threads = [threading.Thread(target=hammer, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors



def test_the_last_model_is_not_kept_alive():
    """rbd_c remembers the last model it ran on by a weak reference: deleting the model
    frees it (and its compiled view), and the next model gets its own results."""
    import gc
    import weakref
    model = random_model(6, nlinks=9)
    q, v, a, _, _ = random_state(model, np.random.default_rng(3))
    rbd_c.rnea(model, q, v, a)
    gone = weakref.ref(model)
    del model
    gc.collect()
    assert gone() is None
    other = random_model(7, nlinks=5, floating_base=False)
    q, v, a, _, _ = random_state(other, np.random.default_rng(4))
    np.testing.assert_allclose(rbd_c.rnea(other, q, v, a), ref.rnea(other, q, v, a), atol=TOL)

def test_python_threads_with_batches():
    model = random_model(4)
    rng = np.random.default_rng(1)
    batches = [random_state(model, rng, (300,)) for _ in range(4)]
    expected = [rbd_c.rnea(model, q, v, a) for q, v, a, _, _ in batches]
    results = [None] * len(batches)

    def work(k):
        q, v, a, _, _ = batches[k]
        results[k] = [rbd_c.rnea(model, q, v, a) for _ in range(5)]

    threads = [threading.Thread(target=work, args=(k,)) for k in range(len(batches))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for k in range(len(batches)):
        for r in results[k]:
            np.testing.assert_array_equal(r, expected[k])


def test_thread_count_does_not_change_results():
    model = random_model(5)
    rng = np.random.default_rng(2)
    q, v, a, tau, fext = random_state(model, rng, (2000,))
    previous = rbd_c.get_num_threads()
    try:
        out = {}
        for n in (1, 2, 3):
            rbd_c.set_num_threads(n)
            assert rbd_c.get_num_threads() == n
            out[n] = (rbd_c.rnea(model, q, v, a, fext), rbd_c.aba(model, q, v, tau), rbd_c.crba(model, q),
                      rbd_c.frame_jacobian(model, q, 0, reference="world"))
        for n in (2, 3):
            for x, y in zip(out[1], out[n]):
                np.testing.assert_array_equal(x, y)
    finally:
        rbd_c.set_num_threads(previous)


@pytest.mark.parametrize("bad", [0, -1, 1.5, "2", True])
def test_set_num_threads_rejects(bad):
    with pytest.raises((ValueError, TypeError)):
        rbd_c.set_num_threads(bad)


# ------------------------------------------------------------------------------------------
# Argument handling: fast path, general path, errors
# ------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def arm():
    return random_model(6, nlinks=9)


def _same_error(fname, model, args, kwargs=None, argname=None):
    """Both backends raise the same exception type, naming the argument."""
    kwargs = kwargs or {}
    with pytest.raises(Exception) as ref_err:
        getattr(ref, fname)(model, *args, **kwargs)
    with pytest.raises(Exception) as c_err:
        getattr(rbd_c, fname)(model, *args, **kwargs)
    assert type(c_err.value) is type(ref_err.value), (c_err.value, ref_err.value)
    assert isinstance(c_err.value, (ValueError, TypeError))
    if argname is not None:
        assert argname in str(c_err.value)
        assert str(c_err.value) == str(ref_err.value)


def test_wrong_lengths(arm):
    q, v, a, tau, fext = random_state(arm, np.random.default_rng(0))
    _same_error("rnea", arm, (q[:-1], v, a), argname="q")
    _same_error("rnea", arm, (q, np.append(v, 0.0), a), argname="v")
    _same_error("rnea", arm, (q, v, a[:-1]), argname="a")
    _same_error("rnea", arm, (q, v, a), {"fext": fext[:-1]}, argname="fext")
    _same_error("aba", arm, (q, v, tau[:2]), argname="tau")
    _same_error("crba", arm, (q.reshape(1, -1)[:, :-1],), argname="q")
    _same_error("difference", arm, (q, q[:-1]), argname="q1")
    _same_error("crba", arm, (np.float64(1.0),), argname="q")


def test_wrong_dtypes(arm):
    q, v, a, *_ = random_state(arm, np.random.default_rng(0))
    _same_error("rnea", arm, (np.array(["x"] * arm.nq), v, a), argname="q")
    _same_error("rnea", arm, (q, [None] * arm.nv, a), argname="v")
    _same_error("crba", arm, ("abc",), argname="q")
    # complex numbers would lose their imaginary part, strings read as numbers,
    # booleans as 0/1, masks be ignored: all refused, naming the argument
    _same_error("crba", arm, (q.astype(complex) + 1j,), argname="q")
    _same_error("crba", arm, (q.astype(complex),), argname="q")
    _same_error("rnea", arm, (np.array(["1"] * arm.nq), v, a), argname="q")
    _same_error("rnea", arm, (q, np.zeros(arm.nv, dtype=bool), a), argname="v")
    _same_error("rnea", arm, (q, v, np.ma.masked_array(a, mask=np.arange(arm.nv) == 0)), argname="a")
    _same_error("rnea", arm, (np.array(list(q), dtype=object), v, np.array(["1"] * arm.nv, dtype=object)),
                argname="a")


def test_non_finite(arm):
    q, v, a, tau, fext = random_state(arm, np.random.default_rng(0))
    for bad in (np.nan, np.inf, -np.inf):
        qb = q.copy()
        qb[1] = bad
        _same_error("rnea", arm, (qb, v, a), argname="q")
        ab = a.copy()
        ab[-1] = bad
        _same_error("rnea", arm, (q, v, ab), argname="a")
        fb = fext.copy()
        fb[0, 3] = bad
        _same_error("aba", arm, (q, v, tau), {"fext": fb}, argname="fext")
    # inside a batch (on the parallel path too)
    Q, V, A, *_ = random_state(arm, np.random.default_rng(1), (500,))
    V[377, 2] = np.nan
    _same_error("rnea", arm, (Q, V, A), argname="v")
    _same_error("frame_jacobian", arm, (np.full(arm.nq, np.nan), 0), argname="q")


def test_a_non_finite_number_is_found_wherever_it_is():
    """The compiled driver scans inputs sixteen, then four, then one number at a time: a
    NaN or an infinity at any place of an input of 23 (16 + 4 + 3) is refused as the
    reference refuses it, and the largest, smallest and subnormal finite numbers are not."""
    model = rbd.load_urdf(rbd.generated_urdf(23))
    assert model.nv == 23
    q, v, a, *_ = random_state(model, np.random.default_rng(3))
    for place in range(model.nv):
        for bad in (np.nan, np.inf, -np.inf):
            vb = v.copy()
            vb[place] = bad
            _same_error("rnea", model, (q, vb, a), argname="v")
    # finite extremes at every place: revolute angles, so the placements stay finite
    extremes = (np.finfo(float).max, -np.finfo(float).max, np.finfo(float).smallest_subnormal, -0.0)
    qx = np.array([extremes[k % 4] for k in range(model.nq)])
    assert np.allclose(rbd_c.forward_kinematics(model, qx), ref.forward_kinematics(model, qx), atol=1e-9)


def test_empty_batches(arm):
    q0 = np.zeros((0, arm.nq))
    v0 = np.zeros((0, arm.nv))
    assert rbd_c.rnea(arm, q0, v0, v0).shape == (0, arm.nv)
    assert rbd_c.crba(arm, q0).shape == (0, arm.nv, arm.nv)
    assert rbd_c.forward_kinematics(arm, np.zeros((2, 0, arm.nq))).shape == (2, 0, arm.nbodies, 4, 4)
    assert rbd_c.kinetic_energy(arm, q0, v0).shape == (0,)
    assert rbd_c.frame_jacobian(arm, q0, 0).shape == (0, 6, arm.nv)
    for name, args in [("rnea", (q0, v0, v0)), ("crba", (q0,)), ("kinetic_energy", (q0, v0))]:
        assert np.asarray(getattr(ref, name)(arm, *args)).shape == getattr(rbd_c, name)(arm, *args).shape



@pytest.mark.parametrize("batch", [(), (3,), (2, 2), (0,)])
def test_a_model_without_bodies(batch):
    """A robot that is one fixed link (no joint, no dof): every algorithm works on both
    backends, single and batched, with empty results (or the same error, for the
    centre of mass of a model without mass), and its frames stay where they are fixed."""
    model = random_model(0, nlinks=1, floating_base=False)
    assert model.nbodies == 0 and model.nq == model.nv == 0
    q, v, fext = np.zeros(batch + (0,)), np.zeros(batch + (0,)), np.zeros(batch + (0, 6))
    frames = list(range(model.nframes))
    for name, args, kwargs in algorithm_calls(q, v, v, v, fext, q, frames):
        results = []
        for backend in (ref, rbd_c):
            try:
                results.append(getattr(backend, name)(model, *args, **kwargs))
            except ValueError as exc:
                results.append(str(exc))
        expected, got = results
        if isinstance(expected, str):
            assert got == expected and "no mass" in expected, name
            continue
        for e, g in zip(expected if isinstance(expected, tuple) else (expected,),
                        got if isinstance(got, tuple) else (got,)):
            e, g = np.asarray(e), np.asarray(g)
            assert e.shape == g.shape and e.shape[:len(batch)] == batch, name
            np.testing.assert_allclose(g, e, atol=TOL, err_msg=name)
    for f in frames:  # attached to the world: the frame's fixed offset is its placement
        for backend in (ref, rbd_c):
            np.testing.assert_allclose(backend.frame_placement(model, q, f),
                                       np.broadcast_to(model.frame_offsets[f], batch + (4, 4)), atol=1e-15)

def test_general_inputs_give_correct_results(arm):
    """Lists, ints, float32, Fortran order, non-contiguous slices, read-only and
    byte-swapped arrays and broadcasting all take the general path and agree."""
    rng = np.random.default_rng(4)
    Q, V, A, _, F = random_state(arm, rng, (6,))
    q, v, a = Q[0], V[0], A[0]
    expected = ref.rnea(arm, q, v, a)
    wide = np.zeros((arm.nq, 3))
    wide[:, 1] = q
    np.testing.assert_allclose(rbd_c.rnea(arm, wide[:, 1], v, a), expected, atol=TOL)        # strided
    np.testing.assert_allclose(rbd_c.rnea(arm, list(q), list(v), list(a)), expected, atol=TOL)
    np.testing.assert_allclose(rbd_c.rnea(arm, q.astype(np.float32), v, a),
                               ref.rnea(arm, q.astype(np.float32), v, a), atol=TOL)
    np.testing.assert_allclose(rbd_c.rnea(arm, q.astype(">f8"), v, a), expected, atol=TOL)   # byte-swapped
    ro = q.copy()
    ro.setflags(write=False)
    np.testing.assert_allclose(rbd_c.rnea(arm, ro, v, a), expected, atol=TOL)
    q_int = ref.neutral(arm).astype(int)  # integer dtype (a valid configuration)
    np.testing.assert_allclose(rbd_c.rnea(arm, q_int, v, a), ref.rnea(arm, q_int.astype(float), v, a), atol=TOL)
    # batches: every other sample, Fortran order, broadcasting a single v / fext
    np.testing.assert_allclose(rbd_c.rnea(arm, Q[::2], V[::2], A[::2]), ref.rnea(arm, Q[::2], V[::2], A[::2]), atol=TOL)
    np.testing.assert_allclose(rbd_c.crba(arm, np.asfortranarray(Q)), ref.crba(arm, Q), atol=TOL)
    np.testing.assert_allclose(rbd_c.rnea(arm, Q, v, A, fext=F[0]), ref.rnea(arm, Q, v, A, fext=F[0]), atol=TOL)
    np.testing.assert_allclose(rbd_c.rnea(arm, q, V, a), ref.rnea(arm, q, V, a), atol=TOL)
    _same_error("rnea", arm, (Q, V[:5], A))  # batch mismatch


def test_bad_frames_and_references(arm):
    q, v, *_ = random_state(arm, np.random.default_rng(0))
    _same_error("frame_placement", arm, (q, "no such frame"))
    _same_error("frame_placement", arm, (q, arm.nframes + 3))
    _same_error("frame_jacobian", arm, (q, 0), {"reference": "nowhere"})
    _same_error("frame_velocity", arm, (q, v, 0), {"reference": 3})
    np.testing.assert_allclose(rbd_c.frame_placement(arm, q, -1), ref.frame_placement(arm, q, -1), atol=TOL)
    np.testing.assert_allclose(rbd_c.frame_placement(arm, q, np.int64(1)), ref.frame_placement(arm, q, 1), atol=TOL)


def test_inputs_not_modified(arm):
    rng = np.random.default_rng(9)
    for batch in ((), (5,)):
        state = random_state(arm, rng, batch)
        copies = [x.copy() for x in state]
        q, v, a, tau, fext = state
        for name, args, kwargs in _calls(arm, q, v, a, tau, fext, [0]):
            getattr(rbd_c, name)(arm, *args, **kwargs)
        for x, c in zip(state, copies):
            np.testing.assert_array_equal(x, c)


def test_gravity_change_is_seen():
    model = random_model(8, nlinks=6)
    q, *_ = random_state(model, np.random.default_rng(0))
    g0 = rbd_c.gravity(model, q)  # builds and keeps the compiled view of model
    heavier = model.replace(gravity=[0.0, 0.0, -2 * 9.81])
    np.testing.assert_allclose(rbd_c.gravity(heavier, q), ref.gravity(heavier, q), atol=TOL)
    np.testing.assert_allclose(rbd_c.gravity(heavier, q), 2 * g0, atol=1e-9)
    np.testing.assert_allclose(rbd_c.gravity(model, q), g0, atol=0)  # the original is unchanged


def test_copied_and_pickled_models_still_work():
    import copy
    import pickle

    model = random_model(10, nlinks=6)
    q, *_ = random_state(model, np.random.default_rng(0))
    expected = rbd_c.crba(model, q)  # builds and caches the compiled view
    for other in (copy.copy(model), copy.deepcopy(model), pickle.loads(pickle.dumps(model))):
        np.testing.assert_array_equal(rbd_c.crba(other, q), expected)


def test_not_a_model():
    with pytest.raises((TypeError, AttributeError)):
        rbd_c.rnea(object(), np.zeros(1), np.zeros(1), np.zeros(1))


def test_large_model_uses_heap_scratch():
    """A long chain whose scratch does not fit the per-call stack buffer."""
    b = rbd.ModelBuilder("chain")
    b.add_link("l0", mass=1.0, inertia=np.eye(3) * 0.1)
    for i in range(1, 120):
        b.add_link("l%d" % i, mass=1.0, com=[0.0, 0.0, 0.1], inertia=np.eye(3) * 0.1)
        b.add_joint("j%d" % i, "revolute", "l%d" % (i - 1), "l%d" % i,
                    origin=np.array([[1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0.2], [0, 0, 0, 1.0]]),
                    axis=[0.0, 1.0, 0.0] if i % 2 else [1.0, 0.0, 0.0])
    model = b.build()
    q, v, a, tau, fext = random_state(model, np.random.default_rng(0))
    for name, args, kwargs in [("rnea", (q, v, a), {}), ("aba", (q, v, tau), {}), ("crba", (q,), {}),
                               ("coriolis_matrix", (q, v), {})]:
        assert_same(name, args, kwargs, model)


@pytest.mark.parametrize("name", ["rnea", "aba", "crba", "forward_kinematics", "rnea_derivatives",
                                  "aba_derivatives", "inverse_mass_matrix"])
def test_batches_need_no_memory_beyond_their_outputs(name):
    """A batch runs sample by sample in C: the only large allocation is the result
    (contiguous float64 inputs are read in place, never copied)."""
    import tracemalloc

    model = rbd.sample_model("arm7")
    q, v, a, tau, _ = random_state(model, np.random.default_rng(0), (20000,))
    args = {"rnea": (q, v, a), "aba": (q, v, tau), "crba": (q,), "forward_kinematics": (q,),
            "rnea_derivatives": (q, v, a), "aba_derivatives": (q, v, tau), "inverse_mass_matrix": (q,)}[name]
    getattr(rbd_c, name)(model, *args)  # warm the per-model caches first
    tracemalloc.start()
    try:
        out = getattr(rbd_c, name)(model, *args)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    size = sum(x.nbytes for x in out) if isinstance(out, tuple) else out.nbytes
    assert peak <= size + 64 * 1024, (peak, size)


def test_none_for_an_array_is_a_type_error_naming_it(arm):
    """A missing array (None where the API wants one) raises the reference's
    TypeError on the compiled path too: rbd_c never reads a NULL pointer."""
    q, v, a, tau, fext = random_state(arm, np.random.default_rng(0))
    for name, args, kwargs in algorithm_calls(q, v, a, tau, fext, q, [0]):
        for k, arg in enumerate(args):
            if isinstance(arg, np.ndarray):
                broken = args[:k] + (None,) + args[k + 1:]
                _same_error(name, arm, broken, kwargs)
                with pytest.raises(TypeError, match="got None"):
                    getattr(rbd_c, name)(arm, *broken, **kwargs)


def test_compiled_joint_kind_table_is_the_python_one():
    """rbd_c/_joints.pxd keeps its own table of the joint kinds; it must say what
    rbd.model.JOINT_KINDS says, kind by kind (a new kind added on one side only fails here)."""
    from rbd.model import JOINT_KINDS, JointKind
    from rbd_c._model import joint_kind_table
    table = joint_kind_table()
    assert len(table) == len(JOINT_KINDS) == len(JointKind)
    for code, (nq, nv, quaternion, basis, columns) in enumerate(table):
        spec = JOINT_KINDS[JointKind(code)]
        assert (nq, nv, quaternion, basis, columns) == (spec.nq, spec.nv, spec.quaternion, spec.basis, spec.columns)
        assert len(spec.roles) == spec.nq


def test_unknown_joint_kind_is_refused_by_both_backends():
    from rbd.model import JointKind
    model = random_model(3, nlinks=4)
    definition = model._definition()
    kinds = np.array(model.joint_kinds)
    kinds[-1] = len(JointKind)  # a code no kind has
    definition["joint_kinds"] = kinds
    with pytest.raises(ValueError, match="unknown joint kind"):
        rbd.Model(**definition)


def test_reference_driver_returns_several_outputs():
    """rbd.reference's batch driver splits the components of several outputs, for one
    sample and for a batch (the derivatives return three matrices)."""
    from rbd.reference._components import evaluate

    def passes(x, trig):  # per sample: x (3,) -> (sum as (1,), outer product (3, 3)), as components
        return [x[0] + x[1] + x[2]] + [x[i] * x[j] for i in range(3) for j in range(3)]

    rng = np.random.default_rng(0)
    for batch in [(), (5,), (2, 3)]:
        X = rng.normal(size=batch + (3,))
        total, outer = evaluate(passes, batch, [X], [(1,), (3, 3)])
        np.testing.assert_allclose(total, X.sum(axis=-1, keepdims=True), rtol=1e-15)
        np.testing.assert_allclose(outer, X[..., :, None] * X[..., None, :], rtol=1e-15)
        assert total.shape == batch + (1,) and outer.shape == batch + (3, 3)


def test_compiled_driver_returns_several_outputs():
    """rbd_c's driver allocates and returns each declared output, single and batched,
    on the serial and the threaded paths."""
    from rbd_c._model import _driver_probe
    model = random_model(4, nlinks=5)
    rng = np.random.default_rng(0)
    for batch in [(), (3,), (2, 5), (40000,)]:
        Q = rng.normal(size=batch + (model.nq,))
        copy, total = _driver_probe(model, Q)
        np.testing.assert_array_equal(copy, Q)
        np.testing.assert_allclose(total, Q.sum(axis=-1), rtol=0, atol=1e-13 * np.abs(Q).sum(axis=-1).max())
        assert copy.shape == batch + (model.nq,) and np.shape(total) == batch


def test_call_floor_stages_run_and_refuse_a_wrong_bare_call():
    """rbd_c._model._call_floor (compare.py --split's floor): every stage runs; the
    driver stage writes into ``out``; the bare stage checks what it is given."""
    from rbd_c._model import _call_floor
    model = rbd.sample_model("arm7")
    q = rbd.reference.neutral(model)
    out = np.full(1, np.nan)
    for stage in (0, 1, 2):
        assert _call_floor(model, q, stage) is None
    assert _call_floor(model, q, 3, out) is out and out[0] == 0.0
    assert _call_floor(model, q, 3).shape == (1,)
    out[0] = np.nan
    assert _call_floor(model, q, 4, out) is out and out[0] == 0.0
    with pytest.raises(ValueError):
        _call_floor(model, q[:-1], 4, out)


def _revolute_runs_model(floating_base):
    """A tree whose chains hold runs of 1 to 6 revolute joints about basis axes (the
    compiled frame Jacobian writes those columns up to four at a time), broken by other
    joint kinds and by side branches whose columns fall between them."""
    from models import random_inertia, random_pose
    rng = np.random.default_rng(17)
    builder = rbd.ModelBuilder("revolute_runs")
    basis = [(1.0, 0.0, 0.0), (0.0, 1.0, 0.0), (0.0, 0.0, 1.0)]
    # (joint type, axis; None: a random axis), "side": a side branch off the link before
    pattern = ["x", "y", "z", "x", "y", ("prismatic", None), "z", ("revolute", None), "x", "side", "y", "z",
               "x", ("spherical", (0.0, 0.0, 1.0)), "y", "z", "x", "y", "z", "x", "side", ("planar", (0.0, 0.0, 1.0)),
               "y", "z"]
    mass, com, inertia = random_inertia(rng)
    builder.add_link("link0", mass=mass, com=com, inertia=inertia)
    last, n = "link0", 0
    for step in pattern:
        n += 1
        name = "link%d" % n
        mass, com, inertia = random_inertia(rng)
        builder.add_link(name, mass=mass, com=com, inertia=inertia)
        if step == "side":
            builder.add_joint("joint%d" % n, "revolute", parent=last, child=name, origin=random_pose(rng),
                              axis=basis[n % 3])
            continue
        if isinstance(step, str):
            joint_type, axis = "revolute", basis["xyz".index(step)]
        else:
            joint_type, axis = step
            if axis is None:
                axis = rng.normal(size=3)
                axis /= np.linalg.norm(axis)
        builder.add_joint("joint%d" % n, joint_type, parent=last, child=name, origin=random_pose(rng), axis=axis)
        last = name
    builder.add_frame("tool", last, origin=random_pose(rng))
    return builder.build(floating_base=floating_base)


def test_a_frame_name_given_again_is_the_same_frame():
    """The compiled model remembers the last frame name object it looked up (a loop passing
    one string skips the dictionary): names given in turn, the same objects again, and a
    second model whose frames of the same names are elsewhere in its list each give the
    frame they name (the NumPy backend's answer, by index)."""
    first = rbd.load_urdf(rbd.generated_urdf(6))
    second = rbd.load_urdf(rbd.generated_urdf(9, "tree"))
    q1 = np.linspace(-1.0, 1.0, first.nq)
    q2 = np.linspace(1.0, -1.0, second.nq)
    shared = [name for name in first.frame_names if name in second.frame_names]
    assert len(shared) >= 2
    for _ in range(2):
        for name in shared + shared[::-1]:
            for model, q in ((first, q1), (second, q2)):
                expected = ref.frame_jacobian(model, q, model.frame_names.index(name), "world")
                np.testing.assert_allclose(rbd_c.frame_jacobian(model, q, name, "world"), expected, atol=1e-12)
                np.testing.assert_allclose(rbd_c.frame_placement(model, q, name),
                                           ref.frame_placement(model, q, model.frame_names.index(name)), atol=1e-12)
    # what is not a frame is refused as the reference refuses it, before and after a name
    fresh = rbd.load_urdf(rbd.generated_urdf(6))
    for frame in (None, object(), "l0 ", 10_000):
        _same_error("frame_jacobian", fresh, (q1, frame))
        rbd_c.frame_jacobian(fresh, q1, "l1")


@pytest.mark.parametrize("floating_base", [False, True])
def test_frame_jacobian_revolute_runs(floating_base):
    """The compiled frame Jacobian's columns of revolute joints about basis axes, written
    up to four at a time, against the NumPy backend: every frame, every reference, one
    configuration and a strided batch of five."""
    model = _revolute_runs_model(floating_base)
    rng = np.random.default_rng(3)
    q = rbd.random_configuration(model, rng)
    Q = np.stack([rbd.random_configuration(model, rng) for _ in range(10)])[::2]
    for frame in range(model.nframes):
        for reference in ("local", "world", "local_world_aligned"):
            for x in (q, Q):
                expected = ref.frame_jacobian(model, x, frame, reference)
                got = rbd_c.frame_jacobian(model, x, frame, reference)
                np.testing.assert_allclose(got, expected, rtol=0, atol=1e-12 * max(1.0, np.abs(expected).max()))


def test_frame_jacobian_of_bodies_not_depth_first():
    """Bodies 0 <- 1 <- 3 and 0 <- 2, numbered parents first but not depth first (body 1's
    subtree is 1 and 3): the world Jacobian's angular rows of a frame on body 2 are the
    axes of its ancestors' joints, 0 and 2, and zero for 1 and 3 (all turn about z)."""
    n = 4
    placements = np.tile(np.eye(4), (n, 1, 1))
    placements[:, 0, 3], placements[:, 1, 3] = 0.3, 0.1
    inertias = np.tile([1.0, 0.1, 0, 0, 0.02, 0, 0, 0.03, 0, 0.03], (n, 1))
    model = rbd.Model("not_depth_first", [-1, 0, 0, 1], [int(rbd.JointKind.REVOLUTE_Z)] * n, np.tile([0, 0, 1.0], (n, 1)),
                      placements, inertias, ["j0", "j1", "j2", "j3"], ["b0", "b1", "b2", "b3"], [], [],
                      np.zeros((0, 4, 4)), -np.pi * np.ones(n), np.pi * np.ones(n), np.ones(n), np.ones(n))
    q = np.array([0.3, 0.5, 0.7, 0.9])
    for reference in ("world", "local_world_aligned"):
        J = rbd_c.frame_jacobian(model, q, "j2", reference)
        np.testing.assert_array_equal(J[3:], [[0, 0, 0, 0], [0, 0, 0, 0], [1, 0, 1, 0]])
        assert not np.any(J[:, [1, 3]])


@pytest.mark.parametrize("seed", range(6))
def test_every_frame_of_models_not_depth_first(seed):
    """Every frame kernel on trees numbered parents first but not depth first, every frame
    and reference, single and batched, as the NumPy backend computes them."""
    model = topological_tree(seed, n=10 + seed, free=bool(seed % 2))
    rng = np.random.default_rng(seed)
    for batch in ((), (3,)):
        q, v, a, _, _ = random_state(model, rng, batch)
        for frame in range(model.nframes):
            for name, args, kwargs in algorithm_calls(q, v, a, a, None, q, [frame]):
                if name.startswith("frame_"):
                    assert_same(name, args, kwargs, model)
