"""rbd.dask: the algorithms on Dask arrays, against the in-memory results."""
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import rbd

da = pytest.importorskip("dask.array")
import rbd.dask  # noqa: E402


def batch(model, n=700, seed=0):
    rng = np.random.default_rng(seed)
    return rbd.random_configuration(model, rng, batch=n), rng.normal(size=(n, model.nv)), rng.normal(size=(n, model.nv))


def test_threaded_scheduler_keeps_chunks_and_values(backend):
    model = rbd.sample_model("quadruped")
    q, v, a = batch(model)
    Q, V, A = (da.from_array(x, chunks=(256, x.shape[1])) for x in (q, v, a))
    tau = rbd.dask.rnea(model, Q, V, A)
    assert isinstance(tau, da.Array) and tau.chunks == ((256, 256, 188), (model.nv,))
    np.testing.assert_allclose(tau.compute(scheduler="threads"), rbd.rnea(model, q, v, a), atol=1e-12)
    dq, dv, M = rbd.dask.rnea_derivatives(model, Q, V, A)
    np.testing.assert_allclose(M.compute(), rbd.crba(model, q), atol=1e-12)
    J = rbd.dask.frame_jacobian(model, Q, "FL_foot", "world")
    np.testing.assert_allclose(J.compute(), rbd.frame_jacobian(model, q, "FL_foot", "world"), atol=1e-12)
    # the states by name, as rbd takes them
    np.testing.assert_allclose(rbd.dask.rnea(model, q=Q, v=V, a=A).compute(), rbd.rnea(model, q, v, a), atol=1e-12)
    # a NumPy argument beside a Dask one takes its chunks
    np.testing.assert_allclose(rbd.dask.nonlinear_effects(model, Q, v).compute(), rbd.nonlinear_effects(model, q, v),
                               atol=1e-12)


def test_contacts_hessians_regressor_a_batched_fext_and_broadcasting(backend):
    """Every algorithm with state arrays, several outputs of different shapes, fext chunked
    with the states, and a single sample broadcast against a batch: as the one rbd call."""
    model = rbd.sample_model("quadruped")
    q, v, a = batch(model, 500)
    fext = np.random.default_rng(1).normal(size=(500, model.nbodies, 6))
    Q = da.from_array(q, chunks=(128, model.nq))
    feet = [rbd.Contact("FL_foot", 3), rbd.Contact("HR_foot", 6, "local")]
    cases = [("constrained_dynamics", (Q, v, a, feet), (q, v, a, feet), {"fext": fext}),
             ("impulse_dynamics", (Q, v, feet), (q, v, feet), {"restitution": 0.5}),
             ("contact_jacobian", (Q, feet), (q, feet), {}),
             ("kinematic_hessian", (Q, "FR_foot", "world"), (q, "FR_foot", "world"), {}),
             ("joint_torque_regressor", (Q, v, a), (q, v, a), {}),
             ("rnea", (Q, v[0], a), (q, v[0], a), {"fext": fext}),
             ("aba", (Q, v, a, da.from_array(fext, chunks=(128, model.nbodies, 6))), (q, v, a, fext), {}),
             ("constrained_dynamics", (Q, v, a, feet, fext, 1e-6), (q, v, a, feet, fext, 1e-6), {}),
             ("aba_derivatives", (Q, v, a), (q, v, a), {})]
    for name, lazy, eager, kwargs in cases:
        got, expected = getattr(rbd.dask, name)(model, *lazy, **kwargs), getattr(rbd, name)(model, *eager, **kwargs)
        for g, e in zip(got if isinstance(got, tuple) else (got,), expected if isinstance(expected, tuple) else (expected,)):
            assert g.chunks[0] == (128, 128, 128, 116), name
            np.testing.assert_allclose(g.compute(), e, atol=1e-10, err_msg=name)


def test_errors():
    model = rbd.sample_model("arm7")
    q, v, _ = batch(model, 10)
    with pytest.raises(ValueError, match="batches"):
        rbd.dask.rnea(model, q[0], v[0], v[0])
    with pytest.raises(ValueError, match="batch dimensions do not match"):
        rbd.dask.rnea(model, da.from_array(q, chunks=(4, model.nq)), v[:6], v)
    with pytest.raises(AttributeError):
        rbd.dask.not_an_algorithm
    Q = da.from_array(q, chunks=(4, model.nq))
    with pytest.raises(ValueError, match="unknown chunk sizes.*compute_chunk_sizes"):
        rbd.dask.rnea(model, Q[Q[:, 0] > -10], v[0], v[0])
    with pytest.raises(TypeError, match="multiple values for argument 'fext'"):
        rbd.dask.rnea(model, Q, v, v, np.zeros((model.nbodies, 6)), fext=np.zeros((model.nbodies, 6)))
    with pytest.raises(TypeError, match="at most"):
        rbd.dask.rnea(model, Q, v, v, None, None)  # (no out= by position: rbd.rnea refuses it too)
    with pytest.raises(TypeError, match="needs its state arguments q, v, a"):
        rbd.dask.rnea(model, Q, v)
    with pytest.raises(TypeError, match="model must be an rbd.Model"):
        rbd.dask.rnea("arm7", Q, v, v)
    with pytest.raises(TypeError, match="takes no out="):
        rbd.dask.rnea(model, Q, v, v, out=np.empty((10, model.nv)))
    # the argument named, and rbd's own errors before any chunk runs
    with pytest.raises(ValueError, match=r"rnea: v has shape \(10, 3\); expected \(\.\.\., 7\)"):
        rbd.dask.rnea(model, Q, v[:, :3], v)
    with pytest.raises(TypeError, match=r"needs its state arguments q, v, a \(v missing\)"):
        rbd.dask.rnea(model, Q, None, v)
    with pytest.raises(TypeError, match="v must be an array of real numbers, got dtype complex128"):
        rbd.dask.rnea(model, Q, da.from_array(v + 1j, chunks=(4, model.nv)), v)
    with pytest.raises(TypeError, match="fext must be an array of real numbers"):  # (a batched fext too)
        rbd.dask.rnea(model, Q, v, v, da.from_array(np.zeros((10, model.nbodies, 6), dtype=bool), chunks=(4, -1, -1)))
    with pytest.raises(ValueError, match="17 batch dimensions; at most 16"):
        rbd.dask.gravity(model, da.from_array(q[:1].reshape((1,) * 17 + (model.nq,))))


def test_outer_broadcasting_keeps_each_axis_chunks_and_empty_chunks_compute(backend):
    """q (n, 1, nq) against v (1, n, nv): each batch axis keeps its argument's chunks (the
    whole batch was one chunk of n^2 samples); a chunk of no samples (after slicing), and a
    batch of none, give the algorithms with several outputs their shapes."""
    model = rbd.sample_model("quadruped")
    q, v, a = batch(model, 40)
    Q = da.from_array(q[:, None, :], chunks=(10, 1, model.nq))
    V = da.from_array(v[None, :, :], chunks=(1, 8, model.nv))
    dq, dv, M = rbd.dask.rnea_derivatives(model, Q, V, a[0])
    assert M.chunks[:2] == ((10,) * 4, (8,) * 5)
    # two arguments splitting one axis differently: split wherever either does
    tau = rbd.dask.rnea(model, da.from_array(q[:12], chunks=((1, 11), (model.nq,))),
                        da.from_array(v[:12], chunks=((6, 6), (model.nv,))), a[:12])
    assert tau.chunks[0] == (1, 5, 6)
    np.testing.assert_allclose(tau.compute(), rbd.rnea(model, q[:12], v[:12], a[:12]), atol=1e-12)
    np.testing.assert_allclose(dv.compute(), rbd.rnea_derivatives(model, q[:, None], v[None], a[0])[1], atol=1e-12)
    Q = da.from_array(q[:10], chunks=((5, 0, 5), (model.nq,)))  # (as slicing or filtering leave them)
    results = rbd.dask.aba_derivatives(model, Q, v[:10], a[:10])
    for ours, expected in zip(results, rbd.aba_derivatives(model, q[:10], v[:10], a[:10])):
        np.testing.assert_allclose(ours.compute(), expected, atol=1e-10)
    empty = rbd.dask.crba(model, da.from_array(q[:0].reshape(2, 0, model.nq)))
    assert empty.compute().shape == (2, 0, model.nv, model.nv)
    assert [x.compute().shape for x in rbd.dask.rnea_derivatives(model, Q[:0], v[:0], a[:0])] == [(0, 18, 18)] * 3


def test_the_backend_is_the_one_active_when_the_graph_is_built():
    """A graph built under the NumPy backend computes with it, after a switch and in worker
    processes (which start with their own default): bit for bit the NumPy backend's."""
    model = rbd.sample_model("arm7")
    q, v, a = batch(model, 64)
    before = rbd.backend
    rbd.set_backend("numpy")
    try:
        tau = rbd.dask.rnea(model, da.from_array(q, chunks=(16, model.nq)), v, a)
        expected = rbd.reference.rnea(model, q, v, a)
    finally:
        rbd.set_backend(before)
    assert np.array_equal(tau.compute(scheduler="threads"), expected)
    assert np.array_equal(tau.compute(scheduler="processes", num_workers=2), expected)


def test_errors_name_the_sample_in_the_whole_batch(backend):
    """A chunk's error tells the entry's place in the whole batch, not in the chunk."""
    model = rbd.sample_model("arm7")
    q, v, _ = batch(model, 24)
    bad = q.reshape(4, 6, model.nq).copy()
    bad[3, 4, 2] = np.nan
    Q = da.from_array(bad, chunks=(2, 4, model.nq))  # the NaN is entry [1, 0, 2] of its chunk
    with pytest.raises(ValueError, match=r"at q\[3, 4, 2\]"):
        rbd.dask.rnea(model, Q, v[0], v[0]).compute()
    # an error told by the entry without 'at', and one told by the sample (the direct call's
    # words are the oracle: the same batch in one piece)
    floating = rbd.sample_model("quadruped")
    q = np.broadcast_to(rbd.neutral(floating), (6, 5, floating.nq)).copy()
    v = np.zeros((6, 5, floating.nv))
    q[3, 4, 3:7] = 0.0
    huge = v.copy()
    huge[3, 4] = 1e200
    for args in ((q, v, v), (rbd.neutral(floating), huge, huge)):
        with pytest.raises(ValueError) as direct:
            rbd.rnea(floating, *args)
        chunked = [da.from_array(np.broadcast_to(x, (6, 5, x.shape[-1])), chunks=(2, 3, x.shape[-1])) for x in args]
        with pytest.raises(ValueError) as told:
            rbd.dask.rnea(floating, *chunked).compute()
        assert str(told.value) == str(direct.value) and ("[3, 4" in str(told.value)), str(told.value)


def test_a_pose_singular_for_the_contacts_outside_the_batch(backend):
    """The per-sample shapes come from no sample at all: the arm straight up (its neutral
    configuration) makes a flat contact on its flange singular, but no sample of the batch is."""
    model = rbd.sample_model("arm7")
    contacts = [rbd.Contact("tool0", dim=6)]
    with pytest.raises(ValueError, match="rank-deficient"):
        rbd.constrained_dynamics(model, rbd.neutral(model), np.zeros(model.nv), np.zeros(model.nv), contacts)
    q = rbd.random_configuration(model, 3, batch=10)
    zeros = np.zeros((10, model.nv))
    qdd, forces = rbd.dask.constrained_dynamics(model, da.from_array(q, chunks=(5, model.nq)), zeros, zeros, contacts)
    expected = rbd.constrained_dynamics(model, q, zeros, zeros, contacts)
    np.testing.assert_allclose(qdd.compute(), expected[0], atol=1e-9)
    np.testing.assert_allclose(forces.compute(), expected[1], atol=1e-9)


CLUSTER = textwrap.dedent("""
    import numpy as np, dask.array as da, rbd, rbd.dask
    from distributed import Client, LocalCluster
    if __name__ == "__main__":
        model = rbd.sample_model("quadruped")
        rng = np.random.default_rng(1)
        q = rbd.random_configuration(model, rng, batch=900)
        v = rng.normal(size=(900, model.nv))
        Q, V = da.from_array(q, chunks=(250, model.nq)), da.from_array(v, chunks=(250, model.nv))
        with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster, \\
                Client(cluster):
            tau = rbd.dask.rnea(model, Q, V, V).compute()
            Minv = rbd.dask.inverse_mass_matrix(model, Q).compute()
        assert np.abs(tau - rbd.rnea(model, q, v, v)).max() < 1e-12
        assert np.abs(Minv - rbd.inverse_mass_matrix(model, q)).max() < 1e-9
        print("ok")
""")


def test_local_cluster_of_two_worker_processes(tmp_path):
    pytest.importorskip("distributed")
    script = tmp_path / "cluster.py"
    script.write_text(CLUSTER)
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=240)
    assert out.returncode == 0 and "ok" in out.stdout, out.stderr[-3000:]


def test_the_algorithms_are_listed_and_documented_as_rbd_s():
    """dir(), ``from rbd.dask import *``, help() and inspect.signature show each algorithm
    with rbd's own arguments (without out=, which a Dask result cannot take)."""
    import inspect
    from rbd import reference
    names = set(rbd.dask._STATE)
    assert names <= set(dir(rbd.dask)) and names <= set(rbd.dask.__all__)
    for name in names:
        function = getattr(rbd.dask, name)
        expected = [p for p in inspect.signature(getattr(reference, name)).parameters if p != "out"]
        assert list(inspect.signature(function).parameters) == expected, name
        assert inspect.getdoc(getattr(reference, name)) in function.__doc__, name
    namespace = {}
    exec("from rbd.dask import *", namespace)
    assert names <= set(namespace)
