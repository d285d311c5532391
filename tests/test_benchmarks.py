"""Keep the benchmarks alive without asv: every asv benchmark runs once on a small
subset of its parameters, on its class's ``setup_cache`` states passed through
pickle as asv does, and the peer comparison (``python asv_benchmarks/compare.py
--quick``) runs end to end.
Nothing here looks at a time: a benchmark passes when it runs."""
import functools
import importlib
import inspect
import itertools
import os
import pickle
import pkgutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import rbd
from conftest import HAVE_COMPILED

ASV_DIR = Path(__file__).resolve().parent.parent / "asv_benchmarks"
COMPARE = ASV_DIR / "compare.py"
if str(ASV_DIR) not in sys.path:  # the comparison's helpers (compare.py) are imported by some tests
    sys.path.append(str(ASV_DIR))
SMALL_PARAMS = {"robot": ["arm7"], "n": ["single", 1, 100], "bodies": [10, 10000]}  # other names: every value (the backends)


def benchmark_modules():
    sys.path.insert(0, str(ASV_DIR))
    try:
        package = importlib.import_module("benchmarks")
        return [importlib.import_module("benchmarks." + info.name)
                for info in pkgutil.iter_modules(package.__path__)]
    finally:
        sys.path.remove(str(ASV_DIR))


def benchmark_cases():
    """(id, class, params, method name) for each benchmark method and small parameter set."""
    cases = []
    for module in benchmark_modules():
        for class_name, cls in inspect.getmembers(module, inspect.isclass):
            methods = [name for name in dir(cls) if name.startswith(("time_", "peakmem_"))]
            if class_name.startswith("_") or not methods:
                continue
            names = getattr(cls, "param_names", [])
            values = [[v for v in grid if v in SMALL_PARAMS.get(name, grid)]
                      for name, grid in zip(names, getattr(cls, "params", []))]
            for params in itertools.product(*values):
                for method in methods:
                    case_id = "%s.%s.%s%s" % (module.__name__, class_name, method, list(params))
                    cases.append(pytest.param(cls, params, method, id=case_id))
    return cases


@pytest.fixture(autouse=True)
def keep_backend():
    previous = rbd.backend
    yield
    rbd.set_backend(previous)


@functools.lru_cache(maxsize=None)
def states_of(cls):
    """What asv hands ``cls``'s benchmarks: its ``setup_cache`` result, pickled and
    loaded again (once per class, as asv does)."""
    return pickle.loads(pickle.dumps(cls().setup_cache()))


@pytest.mark.parametrize("cls, params, method", benchmark_cases())
def test_benchmark_runs_once(cls, params, method):
    try:
        getattr(cls(), method)(states_of(cls), *params)
    except NotImplementedError as exc:  # asv's SkipNotImplemented: an absent backend or robot
        pytest.skip(str(exc))


def test_every_benchmark_module_is_collected():
    names = {module.__name__ for module in benchmark_modules()}
    assert {"benchmarks.spatial", "benchmarks.kinematics", "benchmarks.dynamics"} <= names


def test_no_benchmark_has_a_setup_hook():
    """asv-runner would re-run it before every timed call and time calls one by one
    (see benchmarks/common.py); asv matches the name in any case."""
    for module in benchmark_modules():
        for owner in [module] + [cls for _, cls in inspect.getmembers(module, inspect.isclass)]:
            assert "setup" not in {name.lower() for name in dir(owner)}, owner


def common_module():
    sys.path.insert(0, str(ASV_DIR))
    try:
        return importlib.import_module("benchmarks.common")
    finally:
        sys.path.remove(str(ASV_DIR))


def test_an_absent_parameter_set_is_skipped():
    common = common_module()

    def make_state(backend):
        if backend == "absent":
            raise NotImplementedError("no such backend")
        return common.robot_state(backend, "arm7")

    states = pickle.loads(pickle.dumps(common.States([["numpy", "absent"]], make_state)))
    assert states["numpy",].impl is rbd.reference
    with pytest.raises(NotImplementedError, match="no such backend"):
        states["absent",].impl


def test_benchmark_states_are_reproducible():
    common = common_module()
    model = rbd.sample_model("quadruped")
    first, second = common.random_state(model, batch=3), common.random_state(model, batch=3)
    for x, y in zip(first, second):
        np.testing.assert_array_equal(x, y)


def test_peer_comparison_quick_run():
    result = subprocess.run([sys.executable, str(COMPARE), "--quick", "--robots", "arm7", "--markdown"],
                            capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "| case | robot | rbd | rbd µs | peer | peer µs | rbd/peer | max |Δ| |" in result.stdout
    if HAVE_COMPILED and (os.cpu_count() or 1) >= 2:  # the paired two-threads-against-one table
        scaling = result.stdout.split("Two threads against one")[1].splitlines()
        rows = [line.split() for line in scaling if line.startswith("arm7")]
        assert [row[:2] for row in rows] == [["arm7", "rnea"], ["arm7", "aba"]], result.stdout
        for row in rows:
            assert all(float(x.rstrip("x")) > 0.0 for x in row[2:]), row


def test_modern_robotics_ur5_rebuilt_in_rbd_matches_its_inverse_dynamics():
    """The UR5 built from Modern Robotics' parameters is the robot MR computes on
    (so the bench's MR row compares like with like)."""
    mr = pytest.importorskip("modern_robotics")
    from compare import model_from_screws, modern_robotics_ur5
    mlist, glist, slist = modern_robotics_ur5()
    model = model_from_screws(mlist, glist, slist)
    rng = np.random.default_rng(7)
    q, v, a = rng.uniform(-np.pi, np.pi, 6), rng.standard_normal(6), rng.standard_normal(6)
    expected = mr.InverseDynamics(q, v, a, model.gravity, np.zeros(6), mlist, glist, slist)
    np.testing.assert_allclose(rbd.reference.rnea(model, q, v, a), expected, rtol=1e-10, atol=1e-10)
    # and its end effector sits where MR's forward kinematics puts it
    home = np.linalg.multi_dot(mlist)
    np.testing.assert_allclose(mr.FKinSpace(home, slist, q),
                               rbd.reference.frame_placement(model, q, "end_effector"), atol=1e-12)


@pytest.mark.parametrize("name", ["arm7", "panda"])
def test_robotics_toolbox_robot_of_the_bench_matches_rbd(name):
    """The Robotics Toolbox's robot that the bench times (its URDF loader on the
    same file, re-expressed where its ``rne`` needs it) and rbd's model give the
    same inverse dynamics, mass matrix and forward dynamics: an independent
    implementation as the oracle."""
    rtb = pytest.importorskip("roboticstoolbox")
    from compare import load_robot, random_state, rtb_robot
    robot = load_robot(name)
    if robot is None:
        pytest.skip("example-robot-data is not installed")
    twin = rtb_robot(rtb, robot)
    model = robot.model
    assert twin.n == model.nv
    rng = np.random.default_rng(3)
    for _ in range(3):
        q, v, a = random_state(model, rng)
        tau = rbd.reference.rnea(model, q, v, a)
        np.testing.assert_allclose(twin.rne(q, v, a, gravity=model.gravity), tau, rtol=1e-10, atol=1e-10)
        np.testing.assert_allclose(twin.inertia(q), rbd.reference.crba(model, q), rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(twin.accel(q, v, tau, gravity=model.gravity), a, rtol=1e-8, atol=1e-8)


def test_peer_comparison_has_the_robotics_toolbox_rows():
    pytest.importorskip("roboticstoolbox")
    from compare import build_rows, cross_check
    notes = []
    rows = [r for r in build_rows(["arm7"], 10, notes) if r.peer.label.startswith("rtb.")]
    assert sorted({(r.case, r.peer.label) for r in rows}) == [
        ("aba", "rtb.accel (Python)"), ("crba", "rtb.inertia (Python)"), ("rnea", "rtb.rne (Python)")]
    assert {r.ours.label for r in rows} >= {"rbd numpy"}
    for row in rows:
        cross_check(row)
        assert row.agrees, (row.case, row.ours.label, row.max_difference)
    assert not any("Robotics Toolbox" in note for note in notes)


def test_growth_comparison_on_generated_robots():
    """``compare.py --growth``'s parts on small sizes: the rows agree with Pinocchio
    on generated chains and trees, and the scaling table has every size."""
    from compare import growth_rows, is_robot_name, scaling_table, cross_check
    assert is_robot_name("chain12") and is_robot_name("tree300") and not is_robot_name("chain0")
    notes = []
    rows = growth_rows(["chain6", "tree9"], notes)
    if not rows:
        pytest.skip("; ".join(notes))
    assert {(r.case, r.robot) for r in rows} == {(c, n) for c in ("rnea", "crba", "aba") for n in ("chain6", "tree9")}
    for row in rows:
        cross_check(row)
        assert row.agrees, (row.case, row.robot, row.max_difference)
    table = scaling_table(sizes=(10, 20), rounds=1)
    assert [line.split()[:2] for line in table.splitlines()[1:]] == [
        ["chain", "10"], ["chain", "20"], ["tree", "10"], ["tree", "20"]]


def test_split_table_has_every_call():
    """``compare.py --split``: a line per compiled call, each split adding up (call =
    allocation + call cost + C floor, by construction of its columns)."""
    pytest.importorskip("rbd_c")
    from compare import FLOOR_STAGES, SPLIT_CALLS, split_table
    lines = split_table(["arm7"], batch=10, rounds=1).splitlines()
    floors = [line for line in lines[1:] if line.split()[1].startswith("(")]  # rbd_c's floor, Pinocchio's
    assert len(floors) >= 1 + len(FLOOR_STAGES)
    lines = [line for line in lines[1:] if line not in floors]
    calls = [line.split()[1] for line in lines]
    assert calls == list(SPLIT_CALLS)
    for line in lines:
        single, into, per_sample, alloc, cost, floor = map(float, line.split()[2:])
        assert abs(alloc + cost + floor - single) < 0.02 and floor == per_sample
