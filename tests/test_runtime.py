"""The compiled path under ordinary misuse: absurd thread counts, fork, Ctrl-C, import
order, and models far deeper than Python's recursion limit.

Each crash or hang case runs in a fresh interpreter with a time limit, so a
regression fails the test instead of killing or stalling the suite.
"""
import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

import rbd

from conftest import HAVE_COMPILED

SOURCE_ROOT = str(Path(rbd.__file__).resolve().parent.parent)
needs_compiled = pytest.mark.skipif(not HAVE_COMPILED, reason="rbd_c is not built")


def run_python(code, env=None, timeout=60):
    """Run ``code`` in a fresh interpreter importing this checkout's rbd."""
    import os
    full_env = dict(os.environ)
    full_env.update(env or {})
    full_env["PYTHONPATH"] = SOURCE_ROOT + os.pathsep + full_env.get("PYTHONPATH", "")
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=timeout,
                          env=full_env, cwd=SOURCE_ROOT)


# ------------------------------------------------------------------------------------------
# Thread counts
# ------------------------------------------------------------------------------------------
@needs_compiled
@pytest.mark.parametrize("n", [0, -1, 65536, 10 ** 9])
def test_absurd_thread_counts_are_refused(n):
    import rbd_c
    with pytest.raises(ValueError, match="n must be between 1 and %d" % rbd_c.MAX_THREADS):
        rbd_c.set_num_threads(n)


@needs_compiled
def test_thread_count_bounds_accept_the_whole_range():
    import rbd_c
    before = rbd_c.get_num_threads()
    try:
        for n in (1, rbd_c.MAX_THREADS):
            rbd_c.set_num_threads(n)
            assert rbd_c.get_num_threads() == n
    finally:
        rbd_c.set_num_threads(before)


@needs_compiled
def test_an_unbalanced_parallel_batch_makes_the_next_ones_serial_for_a_while():
    """When a batch's second thread hardly worked and the team's end waited for it (its core
    busy with another process), batches run on the calling thread for 10 ms, doubling while
    it lasts up to 1 s, halving after balanced batches; answers stay the same.  A thread that
    did little because it woke late, while the end did not wait, changes nothing."""
    out = run_python("""
import time, numpy as np
import rbd, rbd_c, rbd_c._model as driver
assert driver._team_balance() == (False, 0.0)
assert driver._team_balance(50, 100, 2) == (False, 0.0)       # balanced: nothing changes
# a thread that woke late and did little, while the team's end did not wait for it: no harm
assert driver._team_balance(0, 100, 2, waited=5e-6, busy=1e-3) == (False, 0.0)
assert driver._team_balance(0, 100, 2, waited=0.2e-3, busy=1e-3) == (False, 0.0)   # under a quarter
assert driver._team_balance(0, 100, 2, waited=40e-6, busy=0.1e-3) == (False, 0.0)  # under 50 us
assert driver._team_balance(13, 100, 2) == (False, 0.0)       # at a quarter of its share: still fine
assert driver._team_balance(12, 100, 2) == (True, 0.01)       # under it: serial for 10 ms
assert driver._team_balance(0, 100, 2) == (True, 0.02)        # again: 20 ms
for _ in range(20):
    driver._team_balance(0, 1000, 4)
assert driver._team_balance() == (True, 1.0)                  # at most a second
model = rbd.sample_model("quadruped")
rng = np.random.default_rng(0)
q = rbd.random_configuration(model, rng, batch=4000)
v, a = rng.normal(size=(2, 4000, model.nv))
rbd_c.set_num_threads(2)
resting = rbd_c.rnea(model, q, v, a)                          # (runs serially: no balance noted)
assert driver._team_balance()[0]
rbd_c.set_num_threads(1)
assert np.array_equal(resting, rbd_c.rnea(model, q, v, a))
assert driver._team_balance(60, 100, 2) == (True, 0.5)        # a balanced batch halves the next time
time.sleep(1.05)
assert driver._team_balance() == (False, 0.5)                 # the time is over
print("ok")
""")
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr[-2000:]


@needs_compiled
def test_absurd_omp_num_threads_does_not_crash():
    code = """
import warnings, numpy as np
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    import rbd, rbd_c
m = rbd.sample_model("arm7")
Q = rbd.random_configuration(m, rng=0, batch=4000)
Z = np.zeros((4000, m.nv))
tau = rbd_c.rnea(m, Q, Z, Z)
ref = rbd.reference.rnea(m, Q, Z, Z)
print(rbd_c.get_num_threads(), rbd_c.MAX_THREADS, float(np.abs(tau - ref).max()),
      any("OMP_NUM_THREADS" in str(w.message) for w in caught))
"""
    result = run_python(code, env={"OMP_NUM_THREADS": "65536"})
    assert result.returncode == 0, result.stderr
    threads, maximum, err, warned = result.stdout.split()
    assert int(threads) == int(maximum)
    assert float(err) < 1e-9
    assert warned == "True"


# ------------------------------------------------------------------------------------------
# fork after a parallel batch
# ------------------------------------------------------------------------------------------
@needs_compiled
def test_forked_pool_after_a_parallel_batch_does_not_hang():
    code = """
import multiprocessing as mp, numpy as np
import rbd, rbd_c
rbd_c.set_num_threads(2)
m = rbd.sample_model("arm7")
Q = rbd.random_configuration(m, rng=0, batch=20000)
Z = np.zeros((20000, m.nv))
parent = rbd_c.rnea(m, Q, Z, Z)          # large enough to wake the OpenMP team

def work(k):
    return rbd_c.rnea(m, Q[k::4], Z[k::4], Z[k::4])

with mp.get_context("fork").Pool(2) as pool:
    parts = pool.map(work, range(4))
err = max(float(np.abs(parts[k] - parent[k::4]).max()) for k in range(4))
print(err)
"""
    result = run_python(code, timeout=120)
    assert result.returncode == 0, result.stderr
    assert float(result.stdout) == 0.0  # the same kernels on the same samples


@needs_compiled
def test_a_child_forked_after_another_librarys_openmp_team_does_not_hang():
    """Another library's OpenMP threads (one GOMP_parallel call, as Pinocchio's
    rneaInParallel or any prange module makes) before a fork: the child's batches run on
    the calling thread (libgomp's team would wait forever for threads that did not survive
    the fork) and equal the parent's.  A child that asks for threads after rbd's own
    parallel batch is warned and stays serial; one forked before any gets them."""
    code = """
import ctypes, os, signal, warnings, numpy as np
import rbd, rbd_c
rbd_c.set_num_threads(2)
try:
    gomp = ctypes.CDLL("libgomp.so.1")
except OSError:
    print("no-libgomp"); raise SystemExit
gomp.GOMP_parallel.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_uint, ctypes.c_uint]
task = ctypes.cast(ctypes.CDLL(None).getpid, ctypes.c_void_p)   # a C function: no GIL in the workers
gomp.GOMP_parallel(task, None, 2, 0)                            # the other library's team
m = rbd.sample_model("quadruped")
Q = rbd.random_configuration(m, rng=0, batch=20000)
Z = np.zeros((20000, m.nv))

def child(ask_for_threads):  # in a forked child: its batch's result equal?, its threads, its warnings
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        signal.alarm(30)  # a hung child dies: its answer is missing
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            if ask_for_threads:
                rbd_c.set_num_threads(2)
            ok = bool(np.array_equal(rbd_c.rnea(m, Q, Z, Z), expected))
            threads = rbd_c.get_num_threads()
            if not ask_for_threads:  # asking now, rbd's team never ran: granted (no batch follows)
                rbd_c.set_num_threads(2)
                threads = threads * 10 + rbd_c.get_num_threads()
        os.write(w, ("%d %d %d" % (ok, threads, len(caught))).encode())
        os._exit(0)
    os.close(w)
    os.waitpid(pid, 0)
    return os.read(r, 100).decode()

rbd_c.set_num_threads(1)
expected = rbd_c.rnea(m, Q, Z, Z)          # serial: libgomp's team untouched by rbd
rbd_c.set_num_threads(2)
first = child(False)                       # before any parallel rbd batch
assert np.array_equal(rbd_c.rnea(m, Q, Z, Z), expected)   # rbd's own team, in the parent
print(first, "|", child(True))
"""
    result = run_python(code, timeout=120)
    assert result.returncode == 0, result.stderr
    if result.stdout.strip() == "no-libgomp":
        pytest.skip("libgomp is not loadable here")
    first, second = result.stdout.split("|")
    assert first.split() == ["1", "12", "0"]   # equal result, serial (then 2 threads asked), no warning
    assert second.split() == ["1", "1", "1"]   # equal result, serial, warned


# ------------------------------------------------------------------------------------------
# Ctrl-C during a long batch
# ------------------------------------------------------------------------------------------
@needs_compiled
@pytest.mark.parametrize("threads", [1, 2])
def test_ctrl_c_interrupts_a_long_batch(threads):
    code = """
import signal, sys, time, numpy as np
# Ctrl-C as in a fresh terminal, whatever this process inherited: a parent may spawn it
# while SIGINT is ignored or blocked (seen under pytest, from another test's helpers)
signal.signal(signal.SIGINT, signal.default_int_handler)
signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
import rbd, rbd_c
rbd_c.set_num_threads(%d)
m = rbd.sample_model("quadruped")
Q = rbd.random_configuration(m, rng=0, batch=400000)
Z = np.zeros((400000, m.nv))
t = time.perf_counter(); rbd_c.crba(m, Q[:20000]); per_sample = (time.perf_counter() - t) / 20000
print("ready", per_sample * 400000 * 30, flush=True)   # the batch below takes this long
try:
    for _ in range(30):
        rbd_c.crba(m, Q)
except KeyboardInterrupt:
    print("interrupted", flush=True)
    sys.exit(3)
print("finished", flush=True)
""" % threads
    import os
    env = dict(os.environ, PYTHONPATH=SOURCE_ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env=env, cwd=SOURCE_ROOT)
    try:
        line = proc.stdout.readline().split()
        assert line and line[0] == "ready", proc.stderr.read()
        expected_duration = float(line[1])
        time.sleep(0.5)
        proc.send_signal(signal.SIGINT)
        sent = time.perf_counter()
        out, err = proc.communicate(timeout=60)
        waited = time.perf_counter() - sent
    finally:
        if proc.poll() is None:
            proc.kill()
    if expected_duration < 5.0:
        pytest.skip("this machine finishes the batch too fast to interrupt it")
    assert proc.returncode == 3, (out, err)
    assert "interrupted" in out
    assert waited < expected_duration / 2  # a hang guard, not a timing measurement


# ------------------------------------------------------------------------------------------
# Import order binds the whole compiled backend
# ------------------------------------------------------------------------------------------
_REPORT = """
import json, sys
import rbd
compiled = sys.modules["rbd_c"]
print(json.dumps({"backend": rbd.backend,
                  "compiled": all(getattr(rbd, f) is getattr(compiled, f) for f in rbd.ALGORITHMS)}))
"""


@needs_compiled
@pytest.mark.parametrize("first", ["import rbd_c", "import rbd", "import rbd_c._dynamics",
                                   "import rbd_c._spatial", "from rbd_c import rnea"])
def test_import_order_binds_every_name_to_the_compiled_backend(first):
    result = run_python(first + "\nimport rbd_c\n" + _REPORT, env={"RBD_BACKEND": ""})
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report == {"backend": "cython", "compiled": True}


_BUILD_REPORT = """
import json, sys
import numpy as np
import rbd, rbd_c, rbd_c._contacts
m = rbd.sample_model("quadruped")
rng = np.random.default_rng(3)
q = rbd.random_configuration(m, rng)
v, a = rng.standard_normal(m.nv), rng.standard_normal(m.nv)
modules = ("_model", "_spatial", "_configuration", "_kinematics", "_dynamics", "_derivatives", "_contacts")
print(json.dumps({
    "build": rbd_c.build, "cpu_v3": rbd_c._cpu.x86_64_v3(),
    "files": [sys.modules["rbd_c." + name].__file__ for name in modules],
    "rnea": rbd.rnea(m, q, v, a).tolist(), "aba": rbd.aba(m, q, v, a).tolist(),
    "minv": rbd.inverse_mass_matrix(m, q).tolist(),
    "dtau_dq": rbd.rnea_derivatives(m, q, v, a)[0].tolist(),
    "fk": rbd.forward_kinematics(m, q).tolist(),
    "jacobians": [rbd.frame_jacobian(m, q, f, r).tolist() for f in range(m.nframes)
                  for r in ("local", "world", "local_world_aligned")],
    "jacobians_numpy": [rbd.reference.frame_jacobian(m, q, f, r).tolist() for f in range(m.nframes)
                        for r in ("local", "world", "local_world_aligned")]}))
"""


@needs_compiled
def test_the_cpu_picks_the_copy_of_the_compiled_modules():
    """rbd_c imports its x86-64-v3 copy (rbd_c/_v3, setup.py) when it was built and the CPU
    runs it, every module from it; RBD_CPU=baseline forces the baseline copy; the two agree
    to rounding (FMA) on this well-conditioned robot."""
    import rbd_c
    v3 = Path(rbd_c.__file__).parent / "_v3"
    built = v3.is_dir() and any(p.name.startswith("_spatial.") for p in v3.iterdir())
    runs = {}
    for choice in ("", "baseline"):
        result = run_python(_BUILD_REPORT, env={"RBD_CPU": choice, "RBD_BACKEND": ""})
        assert result.returncode == 0, result.stderr
        runs[choice] = json.loads(result.stdout)
    auto, base = runs[""], runs["baseline"]
    expected = "x86-64-v3" if built and auto["cpu_v3"] else "baseline"
    assert auto["build"] == expected and base["build"] == "baseline"
    assert all((Path(f).parent.name == "_v3") == (expected == "x86-64-v3") for f in auto["files"]), auto["files"]
    assert not any(Path(f).parent.name == "_v3" for f in base["files"]), base["files"]
    for key in ("rnea", "aba", "minv", "dtau_dq", "fk"):
        ours, theirs = np.array(auto[key]), np.array(base[key])
        np.testing.assert_allclose(ours, theirs, rtol=0, atol=1e-14 * max(1.0, np.max(np.abs(theirs))))
    for run in (auto, base):  # each copy's frame Jacobians (their own C kernels) against the NumPy backend
        ours, theirs = np.array(run["jacobians"]), np.array(run["jacobians_numpy"])
        np.testing.assert_allclose(ours, theirs, rtol=0, atol=1e-13 * max(1.0, np.max(np.abs(theirs))))


_SCAN_REPORT = """
import json
import numpy as np
import rbd, rbd_c
model = rbd.load_urdf(rbd.generated_urdf(23))
q = np.zeros(model.nq)
found = []
for place in range(model.nv):
    for bad in (np.nan, np.inf, -np.inf):
        v = np.zeros(model.nv)
        v[place] = bad
        try:
            rbd_c.rnea(model, q, v, np.zeros(model.nv))
            found.append(False)
        except ValueError as exc:
            found.append("v" in str(exc))
extremes = np.array([(np.finfo(float).max, -np.finfo(float).max, 5e-324, -0.0)[k % 4] for k in range(model.nq)])
print(json.dumps({"build": rbd_c.build, "found": found,
                  "extremes": bool(np.all(np.isfinite(rbd_c.forward_kinematics(model, extremes))))}))
"""


@needs_compiled
@pytest.mark.parametrize("choice", ["", "baseline"])
def test_each_copy_finds_a_non_finite_number_wherever_it_is(choice):
    """The finiteness scan differs between the copies (rbd_c/_kernels.pxd): in each, a NaN or
    an infinity at any of 23 places (16 + 4 + 3: each of its loops) is refused, and finite
    extremes are not."""
    result = run_python(_SCAN_REPORT, env={"RBD_CPU": choice, "RBD_BACKEND": ""})
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert choice != "baseline" or report["build"] == "baseline"
    assert len(report["found"]) == 3 * 23 and all(report["found"])
    assert report["extremes"]


@needs_compiled
@pytest.mark.parametrize("value, error", [("avx9", "RBD_CPU must be"), ("x86-64-v3", None)])
def test_a_bad_or_impossible_rbd_cpu_is_refused(value, error):
    import rbd_c
    v3 = Path(rbd_c.__file__).parent / "_v3"
    if error is None:  # forcing the copy: refused where it cannot run, taken where it can
        built = v3.is_dir() and any(p.name.startswith("_spatial.") for p in v3.iterdir())
        if built and rbd_c._cpu.x86_64_v3():
            result = run_python("import rbd_c; print(rbd_c.build)", env={"RBD_CPU": value})
            assert result.returncode == 0 and result.stdout.strip() == "x86-64-v3", result.stderr
            return
        error = "RBD_CPU=x86-64-v3, but"
    result = run_python("import rbd_c", env={"RBD_CPU": value})
    assert result.returncode != 0 and error in result.stderr, result.stderr


@needs_compiled
@pytest.mark.parametrize("value", ["avx3", "on"])
def test_a_bad_rbd_simd_is_refused_like_rbd_cpu(value):
    result = run_python("import rbd", env={"RBD_SIMD": value})
    assert result.returncode != 0 and "RBD_SIMD must be one of" in result.stderr, result.stderr
    assert repr(value) in result.stderr
    result = run_python("import rbd_c; print(rbd_c.simd())", env={"RBD_SIMD": " Baseline "})
    assert result.returncode == 0 and result.stdout.strip() == "baseline", result.stderr


def test_set_backend_refuses_an_incomplete_backend(monkeypatch):
    import types
    partial = types.ModuleType("rbd_c")
    partial.rnea = rbd.reference.rnea  # one name only: a half-initialised package
    monkeypatch.setitem(sys.modules, "rbd_c", partial)
    before = {f: getattr(rbd, f) for f in rbd.ALGORITHMS}
    backend = rbd.backend
    with pytest.raises(ImportError, match="lacks"):
        rbd.set_backend("cython")
    assert rbd.backend == backend
    assert all(getattr(rbd, f) is before[f] for f in rbd.ALGORITHMS)


# ------------------------------------------------------------------------------------------
# Deep chains: no recursion, memory linear in the number of bodies
# ------------------------------------------------------------------------------------------
def chain_urdf(n):
    return rbd.generated_urdf(n, "chain")


def test_deep_chain_loads_and_prints():
    model = rbd.load_urdf(chain_urdf(3000))
    assert model.nbodies == model.nv == 3000
    assert list(model.parents[:4]) == [-1, 0, 1, 2]
    lines = model.tree_string().splitlines()
    assert len(lines) == 3001
    assert lines[-1].strip() == "(depth 3000) j3000 [revolute_x] -> l3000 (0.100 kg)"
    assert lines[32].startswith("  " * 32 + "j32 ") and lines[33].startswith("  " * 32 + "(depth 33) j33 ")
    assert len(model.tree_string()) < 200 * len(lines)  # linear in the number of bodies


def test_deep_builder_chain():
    builder = rbd.ModelBuilder("deep")
    builder.add_link("l0")
    for i in range(1, 2001):
        builder.add_link("l%d" % i, mass=1.0, com=[0, 0, 0.05], inertia=np.diag([1e-3, 1e-3, 1e-3]))
        builder.add_joint("j%d" % i, "continuous", "l%d" % (i - 1), "l%d" % i,
                          origin=np.array([[1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0.1], [0, 0, 0, 1.0]]),
                          axis=(0, 1, 0))
    model = builder.build()
    assert model.nbodies == 2000 and model.frame_id("l2000") == len(model.link_frame_names) - 1


@pytest.fixture(scope="module")
def deep_chain():
    return rbd.load_urdf(chain_urdf(1500))


def test_deep_chain_algorithms_agree_between_backends(deep_chain, backend):
    model = deep_chain
    rng = np.random.default_rng(7)
    q = rng.uniform(-0.3, 0.3, model.nq)
    v = rng.uniform(-0.3, 0.3, model.nv)
    a = rng.uniform(-0.3, 0.3, model.nv)
    tip = model.nframes - 1
    got = dict(rnea=rbd.rnea(model, q, v, a), fk=rbd.forward_kinematics(model, q),
               J=rbd.frame_jacobian(model, q, tip, "world"),
               vel=rbd.frame_velocity(model, q, v, tip, "local_world_aligned"),
               acc=rbd.frame_acceleration(model, q, v, a, tip, "local"),
               dJ=rbd.frame_jacobian_time_derivative(model, q, v, tip, "world"))
    # ABA inverts RNEA.  A 1500-link chain's mass matrix is badly conditioned, so the
    # check is on the residual (backward error), not on the accelerations themselves.
    qdd = rbd.aba(model, q, v, got["rnea"])
    residual = rbd.rnea(model, q, v, qdd) - got["rnea"]
    assert np.abs(residual).max() < 1e-9 * np.abs(got["rnea"]).max()
    np.testing.assert_allclose(rbd.frame_placement(model, q, tip), got["fk"][-1], atol=1e-9)
    # The world Jacobian maps v to the world twist of the tip body.
    twist_world = got["J"] @ v
    vel_world = rbd.frame_velocity(model, q, v, tip, "world")
    np.testing.assert_allclose(twist_world, vel_world, atol=1e-9 * max(1.0, np.abs(vel_world).max()))
    if backend == "cython":
        rbd.set_backend("numpy")
        try:
            ref = dict(rnea=rbd.rnea(model, q, v, a), fk=rbd.forward_kinematics(model, q),
                       J=rbd.frame_jacobian(model, q, tip, "world"),
                       vel=rbd.frame_velocity(model, q, v, tip, "local_world_aligned"),
                       acc=rbd.frame_acceleration(model, q, v, a, tip, "local"),
                       dJ=rbd.frame_jacobian_time_derivative(model, q, v, tip, "world"))
        finally:
            rbd.set_backend("cython")
        for key, value in ref.items():
            scale = max(1.0, np.abs(value).max())
            np.testing.assert_allclose(got[key], value, atol=1e-9 * scale, err_msg=key)


@needs_compiled
def test_ten_thousand_link_chain_stays_linear_in_memory():
    code = """
import resource, sys
resource.setrlimit(resource.RLIMIT_AS, (3 << 30, 3 << 30))   # a guard: fail, never swap
import numpy as np
import rbd, rbd_c
def peak_mb():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
text = rbd.generated_urdf(10000)
base = peak_mb()
model = rbd.load_urdf(text)
q = np.full(model.nq, 0.01); z = np.zeros(model.nv)
tau = rbd_c.rnea(model, q, z, z)
qdd = rbd_c.aba(model, q, z, tau)
placements = rbd_c.forward_kinematics(model, q)
J = rbd_c.frame_jacobian(model, q, model.nframes - 1)
residual = rbd_c.rnea(model, q, z, qdd) - tau    # ABA inverts RNEA (backward error)
print(peak_mb() - base, float(np.abs(residual).max() / np.abs(tau).max()))
"""
    result = run_python(code, timeout=300)
    assert result.returncode == 0, result.stderr
    extra_mb, relative_residual = map(float, result.stdout.split())
    assert extra_mb < 200.0, extra_mb
    assert relative_residual < 1e-9


def test_one_mimic_coupling_keeps_a_long_chain_linear_in_memory(backend):
    """The coupling G (v_full = G v) has one entry per row: a 10,000-link chain with one
    coupling runs rnea and a frame Jacobian (G^T tau, J G) in memory linear in its length
    (the dense G alone was 763 MB, the call 1.6 GB)."""
    code = """
import resource, sys
resource.setrlimit(resource.RLIMIT_AS, (3 << 30, 3 << 30))   # a guard: fail, never swap
import numpy as np
import rbd
rbd.set_backend(%r)
def peak_mb():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
text = rbd.generated_urdf(10000)
base = peak_mb()
model = rbd.couple_joints(rbd.load_urdf(text), [("j2", "j1", -0.5, 0.0)])
q = np.full(model.nq, 0.01); z = np.zeros(model.nv)
tau = rbd.rnea(model, q, z, z)
J = rbd.frame_jacobian(model, q, model.nframes - 1)
print(peak_mb() - base)
""" % backend
    result = run_python(code, timeout=300)
    assert result.returncode == 0, result.stderr
    assert float(result.stdout) < 200.0, result.stdout


@needs_compiled
def test_a_batch_on_a_model_of_a_thousand_dofs_takes_about_its_outputs():
    """Batches in SIMD lanes keep an nv x nv matrix per lane (M^-1, the contact dynamics):
    on a model of 1200 dofs that would be 90 MB of scratch per thread, so such a batch runs
    one sample at a time: its memory stays about its outputs (3 x 11 MB of M^-1)."""
    code = """
import resource, sys
resource.setrlimit(resource.RLIMIT_AS, (3 << 30, 3 << 30))   # a guard: fail, never swap
import numpy as np
import rbd, rbd_c
def peak_mb():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
model = rbd.load_urdf(rbd.generated_urdf(1200, "tree"))
q = rbd.random_configuration(model, np.random.default_rng(0), batch=3)
z = np.zeros((3, model.nv))
contacts = [rbd.Contact(model.frame_names[-1], 3)]
one = rbd_c.inverse_mass_matrix(model, q[1])
base = peak_mb()
Minv = rbd_c.inverse_mass_matrix(model, q)
qdd, forces = rbd.constrained_dynamics(model, q, z, z, contacts)
print(peak_mb() - base, Minv.nbytes / 2 ** 20, float(np.abs(Minv[1] - one).max()))
"""
    result = run_python(code, timeout=300)
    assert result.returncode == 0, result.stderr
    extra_mb, outputs_mb, difference = map(float, result.stdout.split())
    assert extra_mb < 2.0 * outputs_mb, (extra_mb, outputs_mb)
    assert difference == 0.0  # (one sample at a time: the single call's kernel)


@needs_compiled
def test_aba_batches_beyond_the_cache_run_one_sample_at_a_time():
    """ABA's lanes keep 600 bytes per body and lane through three passes; from ~1,750 bodies
    (8 MB a block) they were measured slower than single calls (1.3-2.3x at 3,000), so such
    a batch runs the single kernel on each sample: bit for bit the single call's answer (the
    lanes' differ in the last bits, FMA). Oracle for the values: the equations of motion."""
    import rbd_c
    model = rbd.load_urdf(rbd.generated_urdf(1800, "chain"))
    rng = np.random.default_rng(5)
    q = rbd.random_configuration(model, rng, batch=9)
    v, tau = 0.1 * rng.standard_normal((2, 9, model.nv))
    qdd = rbd_c.aba(model, q, v, tau)
    for s in (0, 4, 8):
        assert np.array_equal(qdd[s], rbd_c.aba(model, q[s], v[s], tau[s]))
    residual = rbd_c.rnea(model, q, v, qdd) - tau
    assert np.abs(residual).max() < 1e-7 * max(1.0, np.abs(qdd).max())


@needs_compiled
def test_contact_batches_on_deep_chains_run_one_sample_at_a_time():
    """The contact kernels' lanes keep a factor of M per lane, dense along a chain: past a
    mean dof depth of 32 they were measured slower than single calls, so such a batch runs
    the single kernel on each sample (bit for bit its answer; the lanes' differ in the last
    bits). Oracle for the values: the equations of motion and the held contact."""
    import rbd_c
    model = rbd.load_urdf(rbd.generated_urdf(80, "chain"))
    rng = np.random.default_rng(6)
    q = rbd.random_configuration(model, rng, batch=9)
    v, tau = 0.1 * rng.standard_normal((2, 9, model.nv))
    contacts = [rbd.Contact(model.frame_names[-1], 3)]
    qdd, forces = rbd_c.constrained_dynamics(model, q, v, tau, contacts)
    after, impulses = rbd_c.impulse_dynamics(model, q, v, contacts)
    for s in (0, 5, 8):
        one = rbd_c.constrained_dynamics(model, q[s], v[s], tau[s], contacts)
        assert np.array_equal(qdd[s], one[0]) and np.array_equal(forces[s], one[1])
        one = rbd_c.impulse_dynamics(model, q[s], v[s], contacts)
        assert np.array_equal(after[s], one[0]) and np.array_equal(impulses[s], one[1])
    J = rbd_c.contact_jacobian(model, q, contacts)
    residual = rbd_c.rnea(model, q, v, qdd) - tau - (np.swapaxes(J, -1, -2) @ forces[..., None])[..., 0]
    assert np.abs(residual).max() < 1e-8 * max(1.0, np.abs(tau).max(), np.abs(forces).max())
    assert np.abs((J @ after[..., None])[..., 0]).max() < 1e-9 * max(1.0, np.abs(after).max())


@needs_compiled
def test_inverse_mass_matrix_of_a_deep_chain_takes_about_three_times_its_output():
    """The articulated form of M^-1 (chains deeper than ~90 dofs) keeps 6 rows per depth of
    the tree, each from that depth's first column on: 3 nv^2 numbers on a chain (6 nv^2
    before). Oracle: LAPACK's solve with crba."""
    code = """
import numpy as np
import rbd, rbd_c
def status_kb(field):
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith(field + ":"))
model = rbd.load_urdf(rbd.generated_urdf(1500, "chain"))
q = rbd.random_configuration(model, np.random.default_rng(3))
M = rbd_c.crba(model, q)
X = np.linalg.solve(M, np.eye(model.nv))
try:
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")  # the peak resident size starts again from now (Linux)
except OSError:
    print("skip")
before = status_kb("VmRSS")
Minv = rbd_c.inverse_mass_matrix(model, q)
rise = (status_kb("VmHWM") - before) * 1024.0
print(rise / Minv.nbytes, float(np.abs(Minv - X).max() / np.abs(X).max()))
"""
    result = run_python(code, timeout=300)
    assert result.returncode == 0, result.stderr
    if result.stdout.startswith("skip"):
        pytest.skip("the peak resident size cannot be reset here")
    rise, error = map(float, result.stdout.split())
    assert rise < 5.0, rise  # the output and 3 nv^2 of scratch (7 before)
    assert error < 1e-6, error  # (a 1500-link chain's M is ill-conditioned: LAPACK's own error)


@needs_compiled
def test_contact_dynamics_on_a_large_tree_stay_linear_in_memory():
    """The contact dynamics factor M along the tree, packed (one number per dof and
    ancestor): on a binary tree of 20,000 bodies (depth 15) they take megabytes, not the
    3.2 GB of an nv x nv factor (a MemoryError).  Checked by the equations of motion
    (rnea) and the contacts' zero accelerations."""
    code = """
import resource
resource.setrlimit(resource.RLIMIT_AS, (3 << 30, 3 << 30))   # a guard: fail, never swap
import numpy as np
import rbd, rbd_c
def peak_mb():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
model = rbd.load_urdf(rbd.generated_urdf(20000, "tree"))
rng = np.random.default_rng(3)
q = rng.uniform(-0.5, 0.5, model.nq); v = rng.normal(size=model.nv); tau = rng.normal(size=model.nv)
feet = [model.frame_names[-1], model.frame_names[-7000]]
contacts = [rbd.Contact(feet[0], 3), rbd.Contact(feet[1], 6)]
rbd_c.rnea(model, q, v, tau)
base = peak_mb()
qdd, forces = rbd_c.constrained_dynamics(model, q, v, tau, contacts)
extra = peak_mb() - base
J = rbd_c.contact_jacobian(model, q, contacts)
motion = rbd_c.rnea(model, q, v, qdd) - tau - J.T @ forces
point = rbd_c.frame_acceleration(model, q, v, qdd, feet[0], "local_world_aligned")[:3]
flat = rbd_c.frame_acceleration(model, q, v, qdd, feet[1], "local")
print(extra, float(np.abs(motion).max() / np.abs(tau).max()), float(np.abs(point).max()), float(np.abs(flat).max()),
      float(np.abs(qdd).max()))
"""
    result = run_python(code, timeout=300)
    assert result.returncode == 0, result.stderr
    extra_mb, motion, point, flat, scale = map(float, result.stdout.split())
    assert extra_mb < 50.0, extra_mb
    assert motion < 1e-9 and point < 1e-9 * scale and flat < 1e-9 * scale, (motion, point, flat)


@needs_compiled
def test_scratch_memory_that_cannot_be_had_is_a_clear_memory_error():
    """A call whose scratch malloc refuses says which call, on what model and how much
    (it was an empty MemoryError): constrained dynamics on a 5000-link chain factor M
    along it in 100 MB of scratch (nv^2 / 2 numbers), here under an address-space limit
    50 MB above the model's."""
    code = """
import resource
import numpy as np
import rbd, rbd_c
model = rbd.load_urdf(rbd.generated_urdf(5000))
q = np.full(model.nq, 0.01); z = np.zeros(model.nv)
contacts = [rbd.Contact(model.frame_names[-1], 3)]
rbd_c.rnea(model, q, z, z)
used = int(open("/proc/self/statm").read().split()[0]) * resource.getpagesize()
resource.setrlimit(resource.RLIMIT_AS, (used + (50 << 20), used + (50 << 20)))
try:
    rbd_c.constrained_dynamics(model, q, z, z, contacts)
except MemoryError as exc:
    print(exc)
"""
    result = run_python(code, timeout=300)
    assert result.returncode == 0, result.stderr
    message = result.stdout.strip()
    assert "constrained_dynamics" in message and "5000 dofs" in message and " GB " in message, message


def test_the_one_list_of_algorithms_is_what_every_backend_and_the_tests_cover():
    from models import algorithm_calls
    assert set(rbd.reference.__all__) == set(rbd.ALGORITHMS) | set(rbd.COMPOSED) | {"REFERENCES"}
    for name in rbd.ALGORITHMS + rbd.COMPOSED:
        assert callable(getattr(rbd.reference, name)), name
    if HAVE_COMPILED:
        import rbd_c
        assert all(callable(getattr(rbd_c, name, None)) for name in rbd.ALGORITHMS + rbd.COMPOSED)
    covered = {name for name, _, _ in algorithm_calls(*["x"] * 6, ["f"])}
    assert covered == set(rbd.ALGORITHMS) - {"neutral", "random_configuration"}
