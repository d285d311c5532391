"""The ``rbd`` command: subprocess runs of the console script and ``python -m rbd``.

Oracles: the library itself called directly on the same numbers (the command is a
file-handling layer around it), analytic trajectories (v and a known in closed
form), and the energy balance of a simulation."""
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import rbd
from rbd import cli


def run(*args, cwd=None, fed=None):
    """The command with these arguments (and ``fed``, bytes, on its standard input: a pipe)."""
    exe = shutil.which("rbd")
    command = [exe] if exe else [sys.executable, "-m", "rbd"]
    out = subprocess.run(command + [str(a) for a in args], capture_output=True, timeout=300, cwd=cwd, input=fed,
                         env=dict(os.environ, RBD_BACKEND=os.environ.get("RBD_BACKEND", "")))
    return subprocess.CompletedProcess(out.args, out.returncode, out.stdout.decode(), out.stderr.decode())


def sine_trajectory(model, n=201, dt=0.005):
    """q(t) = q0 + A sin(w t) on arm7's revolute joints, with exact v and a."""
    t = np.arange(n) * dt
    A, w = np.linspace(0.2, 0.8, model.nv), np.linspace(1.0, 3.0, model.nv)
    q = 0.1 + A * np.sin(w * t[:, None])
    v = A * w * np.cos(w * t[:, None])
    a = -A * w ** 2 * np.sin(w * t[:, None])
    return t, q, v, a


def write_csv(path, t, blocks):
    cli.write_table(path, t, blocks)


def test_python_m_rbd_keeps_the_demo_and_the_console_script_has_subcommands():
    demo = subprocess.run([sys.executable, "-m", "rbd", "arm7"], capture_output=True, text=True, timeout=120)
    assert demo.returncode == 0 and "mass matrix" in demo.stdout
    help_ = run("--help")
    assert help_.returncode == 0 and all(c in help_.stdout for c in cli.SUBCOMMANDS)


def test_check_reports_a_usable_robot_and_json(tmp_path):
    out = run("check", "quadruped")
    assert out.returncode == 0, out.stderr
    assert "usable" in out.stdout and "FL_foot" in out.stdout
    report = json.loads(run("check", "arm7", "--json").stdout)
    model = rbd.sample_model("arm7")
    assert report["usable"] and report["nv"] == model.nv
    assert report["total_mass"] == pytest.approx(model.total_mass)
    assert [j["name"] for j in report["joints"]] == list(model.joint_names)


def test_check_refuses_a_singular_robot_and_a_missing_file(tmp_path):
    urdf = tmp_path / "leaf.urdf"
    urdf.write_text("""<robot name="leaf"><link name="base"/>
      <link name="arm"><inertial><mass value="1"/><inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.001"/>
      </inertial></link><link name="finger"/>
      <joint name="shoulder" type="continuous"><parent link="base"/><child link="arm"/><axis xyz="1 0 0"/></joint>
      <joint name="finger_joint" type="continuous"><parent link="arm"/><child link="finger"/></joint></robot>""")
    out = run("check", urdf, "--json")
    assert out.returncode == 1
    report = json.loads(out.stdout)
    assert not report["usable"] and "finger_joint" in " ".join(report["problems"])
    missing = run("check", tmp_path / "nowhere.urdf")
    assert missing.returncode == 1 and "not usable" in missing.stdout


@pytest.mark.parametrize("given", ["q, v, a", "q only", "q, a"])
def test_inverse_dynamics_of_a_trajectory_file(tmp_path, given):
    model = rbd.sample_model("arm7")
    t, q, v, a = sine_trajectory(model)
    names = cli.coordinate_names(model)
    blocks = [("q", names, q)]
    if given == "q, v, a":
        blocks += [("v", ["v:" + n for n in names], v), ("a", ["a:" + n for n in names], a)]
    if given == "q, a":  # v derived from q, a taken from the file
        blocks += [("a", ["a:" + n for n in names], a)]
    write_csv(tmp_path / "traj.csv", t, blocks)
    out = run("inverse-dynamics", "arm7", tmp_path / "traj.csv", "-o", tmp_path / "tau.csv")
    assert out.returncode == 0, out.stderr
    table = cli.read_table(tmp_path / "tau.csv")
    tau = np.stack([table["tau:" + n] for n in names], axis=-1)
    expected = rbd.rnea(model, q, v, a)
    if given == "q, v, a":
        np.testing.assert_allclose(tau, expected, rtol=0, atol=1e-9)
    else:  # derived on the manifold: second order at every row, the ends included
        np.testing.assert_allclose(tau, expected, rtol=0, atol=1e-2 * np.abs(expected).max())


def test_npz_in_and_out_and_a_plot(tmp_path):
    pytest.importorskip("matplotlib")
    model = rbd.sample_model("arm7")
    t, q, v, a = sine_trajectory(model, n=50)
    np.savez(tmp_path / "traj.npz", time=t, q=q, v=v, a=a)
    out = run("inverse-dynamics", "arm7", tmp_path / "traj.npz", "-o", tmp_path / "tau.npz",
              "--plot", tmp_path / "tau.png")
    assert out.returncode == 0, out.stderr
    with np.load(tmp_path / "tau.npz") as data:
        np.testing.assert_allclose(data["tau"], rbd.rnea(model, q, v, a), atol=1e-9)
    png = Path(tmp_path / "tau.png").read_bytes()
    assert len(png) > 1000 and png[:8] == b"\x89PNG\r\n\x1a\n"


def test_trajectory_errors_name_what_is_wrong(tmp_path):
    model = rbd.sample_model("arm7")
    t, q, v, a = sine_trajectory(model, n=10)
    names = cli.coordinate_names(model)
    cases = {
        "missing": ([("q", names[:-1], q[:, :-1])], "missing joint column joint7"),
        "extra": ([("q", names + ["elbow_x"], np.column_stack([q, q[:, 0]]))], "elbow_x"),
        "nan": ([("q", names, np.where(np.arange(10)[:, None] == 4, np.nan, q))], "row 5"),
    }
    for case, (blocks, message) in cases.items():
        write_csv(tmp_path / (case + ".csv"), t, blocks)
        out = run("inverse-dynamics", "arm7", tmp_path / (case + ".csv"), "-o", tmp_path / "x.csv")
        assert out.returncode == 2 and message in out.stderr, (case, out.stderr)
    back = t.copy()
    back[6] = back[3]
    write_csv(tmp_path / "time.csv", back, [("q", names, q)])
    out = run("inverse-dynamics", "arm7", tmp_path / "time.csv", "-o", tmp_path / "x.csv")
    assert out.returncode == 2 and "not increasing at row 7" in out.stderr


def test_simulate_conserves_energy_and_writes_a_trajectory(tmp_path):
    pytest.importorskip("matplotlib")
    out = run("simulate", "arm7", "--duration", 0.2, "--dt", 0.0005, "-o", tmp_path / "sim.csv",
              "--plot", tmp_path / "sim.png")
    assert out.returncode == 0, out.stderr
    model = rbd.sample_model("arm7")
    table = cli.read_table(tmp_path / "sim.csv")
    q = np.stack([table[n] for n in cli.coordinate_names(model)], axis=-1)
    v = np.stack([table["v:" + n] for n in cli.coordinate_names(model)], axis=-1)
    assert q.shape == (401, model.nv)
    energy = rbd.kinetic_energy(model, q, v) + rbd.potential_energy(model, q)
    assert abs(energy[-1] - energy[0]) < 0.01 * abs(energy[0])  # symplectic Euler: a small drift
    assert "drift" in out.stdout and Path(tmp_path / "sim.png").stat().st_size > 1000
    # a free-flying robot with a constant torque, out as npz
    out = run("simulate", "quadruped", "--duration", 0.05, "--dt", 0.001, "--constant-torque", 0.3,
              "-o", tmp_path / "quad.npz")
    assert out.returncode == 0, out.stderr
    with np.load(tmp_path / "quad.npz") as data:
        assert data["q"].shape == (51, 19) and np.all(np.isfinite(data["q"]))


def test_bench_prints_timings():
    out = run("bench", "arm7", "--seconds", 0.01, "--batch", 50)
    assert out.returncode == 0, out.stderr
    assert "rnea" in out.stdout and "us" in out.stdout


LEAF = """<robot name="leaf"><link name="base"/>
  <link name="arm"><inertial><mass value="1"/><inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.001"/>
  </inertial></link><link name="finger"/>
  <joint name="shoulder" type="continuous"><parent link="base"/><child link="arm"/><axis xyz="1 0 0"/></joint>
  <joint name="finger_joint" type="continuous"><parent link="arm"/><child link="finger"/></joint></robot>"""


def test_flags_keep_a_sample_robot_as_shipped_and_add_what_they_say():
    """--mimic (nothing to couple here) must not drop the quadruped's floating base, and
    --floating-base adds one to the arm."""
    quadruped, arm = rbd.sample_model("quadruped"), rbd.sample_model("arm7")
    free_arm = rbd.load_urdf(rbd.sample_model_path("arm7"), floating_base=True)  # its base link now moves too
    for args, model, nv in ((("quadruped", "--mimic"), quadruped, quadruped.nv),
                            (("quadruped", "--floating-base"), quadruped, quadruped.nv),
                            (("arm7", "--floating-base"), free_arm, arm.nv + 6)):
        report = json.loads(run("check", *args, "--json").stdout)
        assert report["nv"] == nv and report["total_mass"] == pytest.approx(model.total_mass), args


def test_a_urdf_named_xml_is_read_as_a_urdf(tmp_path):
    """URDFs come as .xml too (a robot_description dump): the root element decides."""
    arm = rbd.load_urdf(rbd.sample_model_path("arm7"), floating_base=True)
    path = tmp_path / "arm.xml"
    path.write_text(Path(rbd.sample_model_path("arm7")).read_text())
    report = json.loads(run("check", path, "--floating-base", "--json").stdout)
    assert report["nv"] == arm.nv and report["total_mass"] == pytest.approx(arm.total_mass)
    assert cli.robot_file_kind(path) == "urdf" and cli.robot_file_kind(rbd.sample_model_path("arm7")) == "urdf"


def test_mjcf_files_in_the_demo_and_urdf_flags_on_them(tmp_path):
    pytest.importorskip("mujoco")
    path = tmp_path / "pendulum.txt"  # the root element, not the name, makes it MJCF
    path.write_text('<mujoco><worldbody><body name="arm"><joint name="hinge" axis="0 1 0"/>'
                    '<geom type="capsule" fromto="0 0 0 0 0 -0.5" size="0.05" mass="1"/></body></worldbody></mujoco>')
    assert cli.robot_file_kind(path) == "mjcf"
    demo = subprocess.run([sys.executable, "-m", "rbd", str(path)], capture_output=True, text=True, timeout=120)
    assert demo.returncode == 0 and "mass matrix" in demo.stdout, demo.stderr
    out = run("check", path, "--floating-base")
    assert out.returncode == 1 and "apply to URDF files" in out.stdout


def test_output_paths_in_missing_folders_are_refused_before_the_work(tmp_path):
    model = rbd.sample_model("arm7")
    t, q, v, a = sine_trajectory(model, n=10)
    write_csv(tmp_path / "traj.csv", t, [("q", cli.coordinate_names(model), q)])
    for args in (("inverse-dynamics", "arm7", tmp_path / "traj.csv", "-o", tmp_path / "no" / "tau.csv"),
                 ("inverse-dynamics", "arm7", tmp_path / "traj.csv", "-o", tmp_path / "tau.csv",
                  "--plot", tmp_path / "no" / "tau.png"),
                 ("simulate", "arm7", "--duration", 0.01, "--dt", 0.001, "-o", tmp_path / "no" / "s.csv")):
        out = run(*args)
        assert out.returncode == 2 and "cannot write" in out.stderr and "Traceback" not in out.stderr, out.stderr


def test_csv_headers_as_spreadsheets_write_them_and_repeated_columns(tmp_path):
    model = rbd.sample_model("arm7")
    t, q, v, a = sine_trajectory(model, n=10)
    names = cli.coordinate_names(model)
    write_csv(tmp_path / "plain.csv", t, [("q", names, q)])
    text = (tmp_path / "plain.csv").read_text()
    (tmp_path / "bom.csv").write_bytes(b"\xef\xbb\xbf" + text.encode())  # Excel's "CSV UTF-8"
    out = run("inverse-dynamics", "arm7", tmp_path / "bom.csv", "-o", tmp_path / "tau.csv")
    assert out.returncode == 0, out.stderr
    (tmp_path / "twice.csv").write_text(text.replace(names[-1] + "\n", names[-1] + "," + names[0] + "\n", 1)
                                        .replace("\n", ",1.5\n").replace(names[0] + ",1.5\n", names[0] + "\n", 1))
    out = run("inverse-dynamics", "arm7", tmp_path / "twice.csv", "-o", tmp_path / "tau.csv")
    assert out.returncode == 2 and "column %s appears more than once" % names[0] in out.stderr, out.stderr
    (tmp_path / "header.csv").write_text(text.splitlines()[0] + "\n")
    out = run("inverse-dynamics", "arm7", tmp_path / "header.csv", "-o", tmp_path / "tau.csv")
    assert out.returncode == 2 and "no rows" in out.stderr and "Warning" not in out.stderr, out.stderr


def test_bench_on_a_robot_without_forward_dynamics_says_so(tmp_path):
    (tmp_path / "leaf.urdf").write_text(LEAF)
    out = run("bench", tmp_path / "leaf.urdf", "--seconds", 0.01, "--batch", 50)
    assert out.returncode == 0 and "Traceback" not in out.stderr, out.stderr
    assert "singular model: forward dynamics is singular at joint 'finger_joint'" in out.stdout
    assert [line.split()[1] for line in out.stdout.splitlines() if line.strip().startswith("aba ")] == ["-"]



def test_bench_reports_a_row_out_of_memory_and_goes_on(monkeypatch, capsys):
    """On a model of tens of thousands of dofs the nv x nv rows cannot be allocated: that row
    says so, with the error's words, and the rest still run (it stopped at the first)."""
    def no_memory(*args, **kwargs):
        raise MemoryError("aba_derivatives on a model of 20000 bodies and 20000 dofs needs 9.6 GB")
    monkeypatch.setattr(rbd, "aba_derivatives", no_memory)
    assert cli.main(["bench", "arm7", "--seconds", "0.001", "--batch", "10"]) in (0, None)
    lines = capsys.readouterr().out.splitlines()
    row = [line for line in lines if line.strip().startswith("aba_derivatives")]
    assert row and "out of memory: aba_derivatives on a model of 20000 bodies" in row[0] and " - " in row[0], lines
    assert any(line.strip().startswith("inverse_mass_matrix") and line.endswith("us") for line in lines), lines

# ------------------------------------------------------------------------------------------
# Derived velocities and accelerations: analytic trajectories, every row (ends included)
# ------------------------------------------------------------------------------------------
def derived_torques(tmp_path, robot, t, q, v=None):
    """inverse-dynamics on a q (and v) file without accelerations: the torques it writes."""
    model = rbd.sample_model(robot)
    blocks = [("q", cli.coordinate_names(model), q)]
    if v is not None:
        blocks.append(("v", cli.coordinate_names(model, "v", "v:"), v))
    write_csv(tmp_path / "traj.csv", t, blocks)
    out = run("inverse-dynamics", robot, tmp_path / "traj.csv", "-o", tmp_path / "tau.csv")
    assert out.returncode == 0, out.stderr
    table = cli.read_table(tmp_path / "tau.csv")
    return np.stack([table[n] for n in cli.coordinate_names(model, "v", "tau:")], axis=-1)


def test_constant_acceleration_is_exact_at_every_row_on_uneven_time_steps(tmp_path):
    """q = c t^2 / 2: v = c t, a = c.  The ends were off by O(1) (a_0 = c/2), whatever dt."""
    model = rbd.sample_model("arm7")
    c = np.linspace(1.0, 2.0, model.nv)
    t = np.cumsum(np.r_[0.0, np.random.default_rng(1).uniform(0.5e-3, 1.5e-3, 60)])  # uneven steps
    q = 0.5 * c * t[:, None] ** 2
    exact = rbd.rnea(model, q, c * t[:, None], np.broadcast_to(c, q.shape))
    np.testing.assert_allclose(derived_torques(tmp_path, "arm7", t, q), exact, rtol=0, atol=1e-8)
    # three rows are enough (two q would give a = 0: refused, see USER_ERRORS), and two rows
    # when v is given
    np.testing.assert_allclose(derived_torques(tmp_path, "arm7", t[:3], q[:3]), exact[:3], rtol=0, atol=1e-8)
    np.testing.assert_allclose(derived_torques(tmp_path, "arm7", t[:2], q[:2], c * t[:2, None]), exact[:2],
                               rtol=0, atol=1e-8)
    # with v given, a is derived from that v (not from q): a q that disagrees with v shows it
    np.testing.assert_allclose(derived_torques(tmp_path, "arm7", t, 0.0 * q, c * t[:, None]),
                               rbd.rnea(model, 0.0 * q, c * t[:, None], np.broadcast_to(c, q.shape)), rtol=0, atol=1e-8)


def test_constant_acceleration_of_a_free_flyer_is_exact_on_the_manifold(tmp_path):
    """q(t) = q0 (+) c t^2/2 along a fixed direction c (free flyer and joints): the body
    velocity is c t and the acceleration c exactly (exp of a fixed direction)."""
    model = rbd.sample_model("quadruped")
    c = np.linspace(-1.0, 1.5, model.nv)
    t = np.arange(40) * 2e-3
    q = rbd.integrate(model, rbd.neutral(model), 0.5 * c * t[:, None] ** 2)
    exact = rbd.rnea(model, q, c * t[:, None], np.broadcast_to(c, (len(t), model.nv)))
    np.testing.assert_allclose(derived_torques(tmp_path, "quadruped", t, q), exact, rtol=0, atol=1e-7)


@pytest.mark.parametrize("shape", ["cubic", "sine"])
def test_derived_accelerations_converge_as_dt_squared_at_every_row(tmp_path, shape):
    model = rbd.sample_model("arm7")
    b, w = np.linspace(1.0, 3.0, model.nv), np.linspace(2.0, 4.0, model.nv)
    errors = []
    for dt in (4e-3, 2e-3, 1e-3):
        t = np.arange(0.0, 0.2 + dt / 2, dt)[:, None]
        if shape == "cubic":  # q = b t^3 / 6
            q, v, a = b * t ** 3 / 6, b * t ** 2 / 2, b * t
        else:
            q, v, a = np.sin(w * t), w * np.cos(w * t), -w ** 2 * np.sin(w * t)
        errors.append(np.abs(derived_torques(tmp_path, "arm7", t[:, 0], q) - rbd.rnea(model, q, v, a)).max())
    for coarse, fine in zip(errors, errors[1:]):  # the first and last rows included in the max
        assert fine <= coarse / 3.5 or fine < 1e-8, errors


# ------------------------------------------------------------------------------------------
# User errors: one line, exit status 2, no traceback, no hang
# ------------------------------------------------------------------------------------------
TAU_HEADER = "time," + ",".join("tau:joint%d" % k for k in range(1, 8))


def bad_files(d):
    """The files of the error cases below, written into folder d."""
    (d / "empty.npz").write_bytes(b"")
    (d / "corrupt.npz").write_bytes(b"PK\x03\x04garbage")
    (d / "text.npz").write_text("time,joint1\n0,0\n")  # a CSV file under an npz name
    np.save(d / "array.npy", np.zeros(3))
    os.replace(d / "array.npy", d / "npy.npz")
    t = np.arange(5) * 0.01
    np.savez(d / "complex.npz", time=t, q=np.zeros((5, 7)) + 1j)
    q_header = "time," + ",".join("joint%d" % k for k in range(1, 8))
    (d / "huge.csv").write_text(q_header + "\n0,1e308,2,3,4,5,6,7\n0.1,-1e308,2,3,4,5,6,7\n0.2,1e308,2,3,4,5,6,7\n")
    (d / "tinydt.csv").write_text(q_header + "\n0,1,2,3,4,5,6,7\n1e-300,2,2,3,4,5,6,7\n2e-300,3,2,3,4,5,6,7\n")
    (d / "two_rows.csv").write_text(q_header + "\n0,1,2,3,4,5,6,7\n0.1,2,2,3,4,5,6,7\n")
    (d / "no_header.csv").write_text("0,1,2,3,4,5,6,7\n0.1,1,2,3,4,5,6,7\n0.2,1,2,3,4,5,6,7\n")
    (d / "tau_header.csv").write_text(TAU_HEADER + "\n")
    np.savez(d / "tau_empty.npz", time=np.zeros(0), tau=np.zeros((0, 7)))
    (d / "tau_nan_time.csv").write_text(TAU_HEADER + "\n0" + ",0" * 7 + "\nnan" + ",5" * 7 + "\n")
    (d / "tau_extra.csv").write_text(TAU_HEADER + ",tau:joint8\n0" + ",0" * 8 + "\n")
    (d / "tau_late.csv").write_text(TAU_HEADER + "\n0.005" + ",1" * 7 + "\n")
    (d / "bad_cell.csv").write_text(q_header + "\n\n0,1,2,3,4,5,6,7\n\n0.1,1,x,3,4,5,6,7\n")


SIM = ("simulate", "arm7", "--duration", "0.01", "--dt", "0.001")
USER_ERRORS = [
    (("bench", "arm7", "--batch", "0"), "--batch: expected a positive integer, got '0'"),
    (("bench", "arm7", "--batch", "-3"), "--batch: expected a positive integer"),
    (("bench", "arm7", "--seconds", "nan"), "--seconds: expected a positive number"),
    (("bench", "arm7", "--seconds", "inf"), "--seconds: expected a positive number"),
    (("bench", "arm7", "--seconds", "-1"), "--seconds: expected a positive number"),
    (("simulate", "arm7", "--duration", "1e300", "--dt", "1e-300", "-o", "s.csv"), "more than 10000000"),
    (("simulate", "arm7", "--duration", "1", "--dt", "nan", "-o", "s.csv"), "--dt: expected a positive number"),
    (("simulate", "arm7", "--duration", "1e-9", "--dt", "1", "-o", "s.csv"), "no step"),
    (("simulate", "arm7", "--duration", "0.0005", "--dt", "0.001", "-o", "s.csv"), "at most half of --dt 0.001: no step"),
    (("simulate", "arm7", "--duration", "10000.001", "--dt", "0.001", "-o", "s.csv"), "= 10000001 steps: more than"),
    (("inverse-dynamics", "arm7", "empty.npz", "-o", "t.csv"), "empty.npz: not a readable npz file"),
    (("inverse-dynamics", "arm7", "corrupt.npz", "-o", "t.csv"), "corrupt.npz: not a readable npz file"),
    (("inverse-dynamics", "arm7", "text.npz", "-o", "t.csv"), "text.npz: not an npz file: an npz is a zip archive, "
                                                            "this file starts with b'time,j'"),
    (("inverse-dynamics", "arm7", "npy.npz", "-o", "t.csv"), "npy.npz: a single .npy array"),
    (("inverse-dynamics", "arm7", "complex.npz", "-o", "t.csv"), "array 'q' holds complex numbers"),
    (("inverse-dynamics", "arm7", "huge.csv", "-o", "t.csv"), "huge.csv: "),
    (("inverse-dynamics", "arm7", "tinydt.csv", "-o", "t.csv"), "tinydt.csv: "),
    (("inverse-dynamics", "arm7", "two_rows.csv", "-o", "t.csv"), "at least three rows to derive v and a from q"),
    (("inverse-dynamics", "arm7", "bad_cell.csv", "-o", "t.csv"), "row 2, column joint2: 'x' is not a number"),
    (SIM + ("--torques", "tau_header.csv", "-o", "s.csv"), "tau_header.csv: no rows"),
    (SIM + ("--torques", "tau_empty.npz", "-o", "s.csv"), "tau_empty.npz: no rows"),
    (SIM + ("--torques", "tau_nan_time.csv", "-o", "s.csv"), "row 2, column time: nan is not a finite number"),
    (SIM + ("--torques", "tau_extra.csv", "-o", "s.csv"), "unknown column tau:joint8"),
    (SIM + ("--torques", "tau_late.csv", "-o", "s.csv"), "first row is at t = 0.005 s"),
    (SIM + ("-o", "-"), "cannot write '-': rbd writes files, not standard output"),
    (SIM + ("-o", ""), "cannot write '': give a file name"),
    (SIM + ("-o", "/proc/s.csv"), "cannot write /proc/s.csv: "),
    (("inverse-dynamics", "arm7", "no_header.csv", "-o", "t.csv"), "the first line holds numbers, not column names"),
    (SIM + ("--constant-torque", "1e200", "-o", "s.csv"), "t = 0 s: the torques (up to 1e+200) make the motion overflow"),
    # torques beyond any machine's make the velocities past 1e100 in one step: said as the torques
    (SIM + ("--constant-torque", "1e120", "-o", "s.csv"), "the torques (up to 1e+120) make the motion overflow"),
    # semi-implicit Euler at a step far too long for the arm's light links gains energy at every
    # step until the state overflows: said as a divergence, not as inputs too large
    (("simulate", "arm7", "--duration", "20", "--dt", "0.05", "-o", "s.csv"), "--dt 0.05 is too long for this motion: try a smaller --dt"),
    (("check", "arm7", "extra"), "unrecognized arguments: extra"),
    (SIM + ("-o", "s.csv", "--dtt", "1"), "unrecognized arguments: --dtt 1"),
]


@pytest.mark.parametrize("args, message", USER_ERRORS, ids=[m for _, m in USER_ERRORS])
def test_user_errors_end_in_one_line_and_status_2(tmp_path, args, message):
    bad_files(tmp_path)
    out = run(*args, cwd=tmp_path)  # run() has a timeout: a hang fails
    last = out.stderr.strip().splitlines()[-1]
    assert out.returncode == 2 and "Traceback" not in out.stderr, out.stderr
    assert last.startswith("rbd %s: error: " % args[0]) and message in last, out.stderr
    assert "warning" not in out.stderr, out.stderr  # (NumPy's overflow warnings came before an overflow's error)
    assert not (tmp_path / "s.csv").exists() and not (tmp_path / "t.csv").exists()


def test_check_json_is_strict_json_with_null_for_unbounded_limits():
    def refuse(token):
        raise AssertionError("not JSON: %s" % token)
    report = json.loads(run("check", "quadruped", "--json").stdout, parse_constant=refuse)
    root = report["joints"][0]
    assert root["type"] == "free" and root["lower"] == [None] * 7 and root["upper"] == [None] * 7
    knee = next(j for j in report["joints"] if j["name"] == "FL_knee")
    assert knee["lower"] == [-2.7] and knee["upper"] == [2.7]  # the quadruped's URDF limits


def test_plot_names_are_checked_before_the_work_and_kept(tmp_path):
    pytest.importorskip("matplotlib")
    model = rbd.sample_model("arm7")
    t, q, v, a = sine_trajectory(model, n=20)
    write_csv(tmp_path / "traj.csv", t, [("q", cli.coordinate_names(model), q)])
    for output, name, message in (("tau.csv", "plot", "must end in a file type"), ("tau.csv", "plot.xyz", "not .xyz"),
                                  ("plot.png", "plot.png", "same file as -o")):
        out = run("inverse-dynamics", "arm7", "traj.csv", "-o", output, "--plot", name, cwd=tmp_path)
        assert out.returncode == 2 and message in out.stderr, out.stderr
        assert not (tmp_path / "tau.csv").exists() and not (tmp_path / "plot.png").exists()
    for name, magic in (("torques.png", b"\x89PNG"), ("torques.pdf", b"%PDF"), ("TORQUES.PNG", b"\x89PNG")):
        out = run("inverse-dynamics", "arm7", "traj.csv", "-o", "tau.csv", "--plot", name, cwd=tmp_path)
        assert out.returncode == 0 and "plot written to %s\n" % name in out.stdout, out.stderr
        assert (tmp_path / name).read_bytes().startswith(magic)


def test_a_torque_file_starting_before_zero_is_held_from_its_rows(tmp_path):
    """A row at t < 0 applies from the start; the energy balance sees the torque's work."""
    (tmp_path / "tau.csv").write_text(TAU_HEADER + "\n-1" + ",0" * 7 + "\n0.002" + ",2" * 7 + "\n")
    out = run(*SIM, "--torques", "tau.csv", "-o", "s.csv", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    work = float(out.stdout.split("work of the torques")[1].split()[0])
    assert work != 0.0


# ------------------------------------------------------------------------------------------
# Command-line details
# ------------------------------------------------------------------------------------------
def test_help_after_options_lists_the_subcommands():
    out = run("--backend", "numpy", "--help")
    assert out.returncode == 0 and "{%s}" % ",".join(cli.SUBCOMMANDS) in out.stdout, out.stdout  # not the demo's
    demo = run("arm7", "--help")  # the demo's own help, with a robot
    assert demo.returncode == 0 and "robot" in demo.stdout


def test_negative_numbers_of_every_spelling_are_option_values(tmp_path):
    """argparse takes -5 and -.5 as values but -1e3, -5. and -inf as options ("expected one
    argument"): every number is a value, and -inf then gets the option's own error."""
    torques = {}
    for value in ("-5", "-.5", "-5.", "-1e-1", "-2E0"):
        out = run(*SIM[:1], "arm7", "--duration", "0.003", "--dt", "0.001", "--constant-torque", value, "-o",
                  tmp_path / "s.npz")
        assert out.returncode == 0, (value, out.stderr)
        torques[value] = np.load(tmp_path / "s.npz")["q"][-1]
    model = rbd.sample_model("arm7")  # oracle: the same three steps, semi-implicit Euler as the README says
    for value, q_end in torques.items():
        q, v = rbd.neutral(model), np.zeros(model.nv)
        for _ in range(3):
            v = v + 0.001 * rbd.aba(model, q, v, np.full(model.nv, float(value)))
            q = rbd.integrate(model, q, 0.001 * v)
        np.testing.assert_allclose(q_end, q, rtol=0, atol=1e-12, err_msg=value)
    out = run(*SIM[:1], "arm7", "--duration", "0.003", "--dt", "0.001", "--constant-torque", "-inf", "-o",
              tmp_path / "s.npz")
    assert out.returncode == 2 and "--constant-torque: expected a finite number, got '-inf'" in out.stderr


def test_ctrl_c_ends_quietly_as_killed_by_sigint(tmp_path):
    """Ctrl-C (SIGINT) during a long run: 'rbd: interrupted', no traceback, and the process
    ends by SIGINT (a shell loop around it stops, as for any command)."""
    import signal
    import time
    script = ("import sys; from rbd import cli; print('ready', flush=True); "
              "sys.argv[1:] = ['simulate', 'quadruped', '--duration', '1e4', '--dt', '0.001', '-o', %r]; cli.command()"
              % str(tmp_path / "s.npz"))
    process = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True)
    assert process.stdout.readline().strip() == "ready"  # (imported: main() runs from here on)
    time.sleep(0.5)  # (into main(): the interrupt is its own, not the script's)
    process.send_signal(signal.SIGINT)
    _, err = process.communicate(timeout=60)
    assert process.returncode == -signal.SIGINT and "Traceback" not in err, (process.returncode, err)
    assert err.strip().splitlines()[-1] == "rbd: interrupted", err
    assert not (tmp_path / "s.npz").exists()


def test_ctrl_c_inside_main_returns_its_status_to_a_caller(monkeypatch, capsys):
    """main() called from Python (a notebook, a script) gets 130 back: only the command
    ends its own process by SIGINT."""
    def interrupted(argv=None):
        raise KeyboardInterrupt
    monkeypatch.setattr(cli, "_main", interrupted)
    assert cli.main(["check", "arm7"]) == 130
    assert capsys.readouterr().err.strip() == "rbd: interrupted"


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes here")
def test_output_to_a_named_pipe_and_through_a_dangling_link(tmp_path):
    """The check that an output can be written leaves a FIFO alone (opening it would pair
    with its reader and end it) and writes through a symbolic link to a file not yet there:
    the reader gets the trajectory, the link's target is written."""
    import threading
    fifo = tmp_path / "out.csv"
    os.mkfifo(fifo)
    received = []
    reader = threading.Thread(target=lambda: received.append(fifo.read_text()), daemon=True)
    reader.start()
    out = run(*SIM, "-o", fifo)
    reader.join(timeout=60)
    assert out.returncode == 0 and received and received[0].startswith("time,"), (out.stderr, received)
    os.symlink(tmp_path / "target.csv", tmp_path / "link.csv")
    out = run(*SIM, "-o", tmp_path / "link.csv")
    assert out.returncode == 0, out.stderr
    assert (tmp_path / "target.csv").read_text() == received[0]
    os.symlink(tmp_path / "no" / "x.csv", tmp_path / "nowhere.csv")  # (a link into no folder: found first)
    out = run(*SIM, "-o", tmp_path / "nowhere.csv")
    assert out.returncode == 2 and "cannot write" in out.stderr and "no folder" in out.stderr, out.stderr


def test_backend_errors_are_the_commands_one_line(monkeypatch, capsys):
    """RBD_BACKEND naming no backend (import rbd fails in the command), and --backend naming
    one not built here: one 'rbd: error:' line and status 2, no traceback; a Python import
    still raises."""
    env = dict(os.environ, RBD_BACKEND="bogus")
    exe = shutil.which("rbd")
    for command in ([exe, "check", "arm7"] if exe else [], [sys.executable, "-m", "rbd", "arm7"]):
        if command:
            out = subprocess.run(command, capture_output=True, text=True, timeout=120, env=env)
            assert out.returncode == 2 and out.stderr.splitlines() == [
                "rbd: error: RBD_BACKEND must be 'numpy' or 'cython' (or unset: the compiled backend when it is "
                "built), got 'bogus'"], out.stderr
    out = subprocess.run([sys.executable, "-c", "import rbd"], capture_output=True, text=True, timeout=120, env=env)
    assert out.returncode == 1 and "ValueError: RBD_BACKEND must be" in out.stderr
    before = rbd.backend
    monkeypatch.setattr(rbd, "set_backend", lambda name: (_ for _ in ()).throw(ImportError("rbd_c is not built")))
    assert cli.main(["check", "arm7", "--backend", "cython"]) == 2
    assert capsys.readouterr().err.strip() == "rbd check: error: --backend cython: rbd_c is not built"
    assert rbd.backend == before


def test_version_and_a_one_body_robots_hint(tmp_path):
    out = run("--version")
    assert out.returncode == 0 and out.stdout.strip() == "rbd %s" % rbd.__version__, out
    (tmp_path / "drone.urdf").write_text('<robot name="drone"><link name="base">%s</link></robot>' % INERTIAL)
    report = json.loads(run("check", "--json", tmp_path / "drone.urdf").stdout)
    assert "the model has no moving joint (--floating-base gives a URDF's root link a free flyer)" in report["problems"]
    assert json.loads(run("check", "--json", "--floating-base", tmp_path / "drone.urdf").stdout)["usable"]


def test_backend_before_or_after_the_subcommand():
    for argv in (["--backend", "numpy", "check", "arm7"], ["check", "--backend", "numpy", "arm7"],
                 ["check", "arm7", "--backend", "numpy"]):
        assert cli._parser().parse_args(argv).backend == "numpy", argv
    assert cli._parser().parse_args(["check", "arm7"]).backend is None
    out = run("check", "arm7", "--backend", "numpy")
    assert out.returncode == 0, out.stderr
    usage = run("--help").stdout
    assert "rbd [ROBOT]" in usage and "--plot PNG" not in run("simulate", "--help").stdout


def test_writing_to_a_pipe_that_closes_is_not_an_error():
    exe = shutil.which("rbd")
    command = ([exe] if exe else [sys.executable, "-m", "rbd"]) + list(SIM[:2]) + [
        "--duration", "1", "--dt", "0.0001", "-o", "/dev/stdout"]
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    proc.stdout.read(100)
    proc.stdout.close()  # the reader goes away (| head)
    stderr = proc.communicate(timeout=120)[1].decode()
    assert proc.returncode == 0 and "error" not in stderr and "Traceback" not in stderr, stderr


def test_a_check_whose_reader_goes_away_keeps_its_verdicts_status(tmp_path):
    """rbd check robot | true: the reader is gone before the report is printed; the status is
    still the verdict's (a missing file: 1), and no traceback."""
    exe = shutil.which("rbd")
    for robot, status in ((tmp_path / "missing.urdf", 1), ("arm7", 0)):
        command = ([exe] if exe else [sys.executable, "-m", "rbd"]) + ["check", str(robot), "--json"]
        proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        proc.stdout.close()  # (gone before rbd writes: importing rbd takes longer)
        stderr = proc.communicate(timeout=120)[1].decode()
        assert proc.returncode == status and "Traceback" not in stderr, (robot, stderr)


def test_csv_with_a_blank_first_line_and_a_quoted_header_read_like_a_plain_one(tmp_path):
    model = rbd.sample_model("arm7")
    t, q, v, a = sine_trajectory(model, n=10)
    names = cli.coordinate_names(model)
    write_csv(tmp_path / "plain.csv", t, [("q", names, q), ("v", ["v:" + n for n in names], v),
                                          ("a", ["a:" + n for n in names], a)])
    header, body = (tmp_path / "plain.csv").read_text().split("\n", 1)
    (tmp_path / "odd.csv").write_text("\n\n" + ",".join('"%s"' % c for c in header.split(",")) + "\n" + body)
    out = run("inverse-dynamics", "arm7", tmp_path / "odd.csv", "-o", tmp_path / "tau.npz")
    assert out.returncode == 0, out.stderr
    with np.load(tmp_path / "tau.npz") as data:
        np.testing.assert_allclose(data["tau"], rbd.rnea(model, q, v, a), atol=1e-9)


# ------------------------------------------------------------------------------------------
# Round trips, error wording, warnings
# ------------------------------------------------------------------------------------------
def one_joint_urdf(joint, extra=""):
    """A pendulum whose joint has the given name (XML-escaped here)."""
    from xml.sax.saxutils import quoteattr
    return ('<robot name="r"><link name="base"/><link name="a"><inertial><mass value="1"/><origin xyz="0.1 0 0"/>'
            '<inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial></link>'
            '<joint name=%s type="revolute"><parent link="base"/><child link="a"/><axis xyz="0 1 0"/>'
            '<limit lower="-1" upper="1" effort="1" velocity="1"/></joint>%s</robot>'
            % (quoteattr(joint).replace("\n", "&#10;"), extra))


@pytest.mark.parametrize("joint", ["elbow,left", " padded ", "line\nbreak", 'say "hi"', "#first"])
def test_simulate_writes_csv_that_inverse_dynamics_reads_back_whatever_the_joint_name(tmp_path, joint):
    (tmp_path / "r.urdf").write_text(one_joint_urdf(joint))
    model = rbd.load_urdf(tmp_path / "r.urdf")
    assert model.joint_names == (joint,)
    out = run("simulate", "r.urdf", "--duration", 0.02, "--dt", 0.001, "-o", "s.csv", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    table = cli.read_table(tmp_path / "s.csv")
    assert list(table) == ["time", joint, "v:" + joint]
    out = run("inverse-dynamics", "r.urdf", "s.csv", "-o", "tau.csv", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    tau = cli.read_table(tmp_path / "tau.csv")
    assert list(tau) == ["time", "tau:" + joint]
    # the simulation ran without torque: the derived torques are ~0 next to gravity's (~1 N m)
    q, v = table[joint][:, None], table["v:" + joint][:, None]
    assert np.abs(tau["tau:" + joint]).max() < 0.01 * np.abs(rbd.gravity(model, q)).max() + 1e-9


def test_a_joint_named_time_is_refused_in_csv_and_kept_in_npz(tmp_path):
    (tmp_path / "r.urdf").write_text(one_joint_urdf("time"))
    out = run("simulate", "r.urdf", "--duration", 0.01, "--dt", 0.001, "-o", "s.csv", cwd=tmp_path)
    assert out.returncode == 2 and "joint named 'time'" in out.stderr.splitlines()[-1], out.stderr
    assert not (tmp_path / "s.csv").exists()
    (tmp_path / "t.csv").write_text("time,time\n0,0\n0.1,0\n")
    out = run("inverse-dynamics", "r.urdf", "t.csv", "-o", "tau.csv", cwd=tmp_path)
    assert out.returncode == 2 and "joint named 'time'" in out.stderr, out.stderr
    out = run("simulate", "r.urdf", "--duration", 0.01, "--dt", 0.001, "-o", "s.npz", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    out = run("inverse-dynamics", "r.urdf", "s.npz", "-o", "tau.npz", cwd=tmp_path)
    assert out.returncode == 0, out.stderr


@pytest.mark.parametrize("given", ["q only", "q, v, a", "npz"])
def test_a_zero_quaternion_is_named_by_row_and_columns(tmp_path, monkeypatch, capsys, given):
    """The library's refusal of one sample (q[3, 3:7]: its argument, 0-based) in the file's
    words, also in a later batch of rows (CHUNK made small here)."""
    monkeypatch.setattr(cli, "CHUNK", 4)
    model = rbd.sample_model("quadruped")
    t = np.arange(10) * 0.01
    q = np.tile(rbd.neutral(model), (10, 1))
    q[6, 3:7] = 0.0  # row 7, in the second batch of 4 rows
    zeros = np.zeros((10, model.nv))
    names = cli.coordinate_names(model)
    path = tmp_path / ("traj.npz" if given == "npz" else "traj.csv")
    if given == "npz":
        np.savez(path, time=t, q=q, v=zeros, a=zeros)
    else:
        blocks = [("q", names, q)]
        if given == "q, v, a":
            blocks += [("v", cli.coordinate_names(model, "v", "v:"), zeros), ("a", cli.coordinate_names(model, "v", "a:"), zeros)]
        write_csv(path, t, blocks)
    assert cli.main(["inverse-dynamics", "quadruped", str(path), "-o", str(tmp_path / "tau.csv")]) == 2
    err = capsys.readouterr().err
    columns = "q[:, 3]..q[:, 6]" if given == "npz" else "root_joint[3]..root_joint[6]"
    assert err.splitlines()[-1] == "rbd inverse-dynamics: error: %s: row 7 (columns %s): the quaternion of joint " \
                                   "root_joint must not be zero" % (path, columns), err


def test_an_overflowing_row_is_named_by_its_row(tmp_path, monkeypatch, capsys):
    """A finite velocity too large for float64 (1e200: v^2 overflows in rnea) is the library's
    overflow error for the sample as a whole: the file's row (from 1, in a later batch of
    rows too), not the batch's 0-based sample."""
    monkeypatch.setattr(cli, "CHUNK", 4)
    model = rbd.sample_model("arm7")
    t, q, v, a = sine_trajectory(model, n=10)
    v[5, 0] = 1e200  # row 6, in the second batch of 4 rows
    names = cli.coordinate_names(model)
    write_csv(tmp_path / "traj.csv", t, [("q", names, q), ("v", ["v:" + n for n in names], v),
                                         ("a", ["a:" + n for n in names], a)])
    assert cli.main(["inverse-dynamics", "arm7", str(tmp_path / "traj.csv"), "-o", str(tmp_path / "tau.csv")]) == 2
    err = capsys.readouterr().err.splitlines()[-1]
    assert err.startswith("rbd inverse-dynamics: error: %s: row 6: " % (tmp_path / "traj.csv")), err
    assert "overflow" in err and "sample" not in err, err


INERTIAL = ('<inertial><mass value="1"/><origin xyz="0.1 0 0"/>'
            '<inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial>')
MIMIC = """<robot name="r"><link name="base"/><link name="a">{I}</link><link name="b">{I}</link>
<joint name="ja" type="revolute"><parent link="base"/><child link="a"/><axis xyz="0 0 1"/>
  <limit lower="-1" upper="1" effort="1" velocity="1"/></joint>
<joint name="jb" type="revolute"><parent link="a"/><child link="b"/><axis xyz="0 1 0"/>{limit}
  <mimic joint="ja" multiplier="2" offset="0.1"/></joint></robot>"""


def test_errors_are_one_line_and_warnings_are_rbd_lines(tmp_path):
    (tmp_path / "m.urdf").write_text(MIMIC.format(I=INERTIAL, limit='<limit lower="-0.5" upper="2" effort="1" '
                                                                     'velocity="1"/>'))
    for args in (SIM[:1] + ("m.urdf",) + SIM[2:] + ("-o", "s.csv"), ("bench", "m.urdf", "--seconds", "0.001",
                                                                     "--batch", "2")):
        out = run(*args, cwd=tmp_path)
        assert out.returncode == 0, out.stderr
        assert out.stderr.splitlines() == ["rbd %s: warning: mimic joints 'jb' are loaded as independent joints "
                                           "(--mimic enforces them)" % args[0]], out.stderr
    demo = run("m.urdf", cwd=tmp_path)
    assert demo.returncode == 0 and demo.stderr.splitlines() == ["rbd: warning: mimic joints 'jb' are loaded as "
                                                                 "independent joints (--mimic enforces them)"], demo.stderr
    pytest.importorskip("mujoco")
    (tmp_path / "massless.xml").write_text('<mujoco model="m"><worldbody><body name="b"><joint type="hinge"/>'
                                           '</body></worldbody></mujoco>')
    out = run(*SIM[:1], "massless.xml", *SIM[2:], "-o", "s2.csv", cwd=tmp_path)
    assert out.returncode == 2 and len(out.stderr.splitlines()) == 1, out.stderr
    assert out.stderr.startswith("rbd simulate: error: massless.xml: ") and "; Element name 'b'" in out.stderr
    demo = run("massless.xml", cwd=tmp_path)
    assert demo.returncode == 2 and demo.stderr.splitlines()[-1].endswith("; Element name 'b', id 1, line 1")
    (tmp_path / "tendon.xml").write_text(
        '<mujoco model="t"><worldbody><body name="a" pos="0 0 1"><joint name="h" axis="0 1 0"/><geom size="0.05"/>'
        '<site name="s1"/><body name="b" pos="0.3 0 0"><joint name="h2" axis="0 1 0"/><geom size="0.05"/>'
        '<site name="s2"/></body></body></worldbody>'
        '<tendon><spatial name="ten"><site site="s1"/><site site="s2"/></spatial></tendon></mujoco>')
    out = run(*SIM[:1], "tendon.xml", *SIM[2:], "-o", "s3.csv", cwd=tmp_path)
    assert out.returncode == 0 and out.stderr.splitlines() == [
        "rbd simulate: warning: from_mujoco: rbd does not represent tendons 'ten'"], out.stderr


def test_check_mimic_shows_the_coupling_and_the_files_limits(tmp_path):
    (tmp_path / "m.urdf").write_text(MIMIC.format(I=INERTIAL, limit='<limit lower="-0.5" upper="2" effort="1" '
                                                                     'velocity="1"/>'))
    report = json.loads(run("check", "--mimic", "--json", tmp_path / "m.urdf").stdout)
    ja, jb = report["joints"]
    assert report["nv"] == 1 and ja["mimic"] is None and (ja["lower"], ja["upper"]) == ([-1.0], [1.0])
    assert jb["mimic"] == {"joint": "ja", "multiplier": 2.0, "offset": 0.1}
    assert (jb["lower"], jb["upper"]) == ([-0.5], [2.0])  # its own, from the file (the model keeps none)
    text = run("check", "--mimic", tmp_path / "m.urdf").stdout
    line = next(line for line in text.splitlines() if line.strip().startswith("jb "))
    assert line.endswith("mimic of ja: jb = 2 ja + 0.1, own limits [-0.5, 2]"), text
    independent = json.loads(run("check", "--json", tmp_path / "m.urdf").stdout)["joints"][1]
    assert independent["mimic"] is None and independent["lower"] == [-0.5]


def test_mistyped_subcommands_are_named_and_a_robot_first_is_still_the_demo(tmp_path):
    for args, hint in ((("chek", "arm7"), ", did you mean check?"), (("--backend", "numpy", "simulat"), ", did you "
                                                                      "mean simulate?"), (("frobnicate", "arm7"), "")):
        out = run(*args)
        assert out.returncode == 2 and out.stderr.splitlines() == [
            "rbd: error: unknown subcommand %r%s (the subcommands: check, inverse-dynamics, simulate, bench; "
            "rbd ROBOT alone runs the demo)" % (args[-2] if args[-1] == "arm7" else args[-1], hint)], out.stderr
    (tmp_path / "chek").write_text(Path(rbd.sample_model_path("arm7")).read_text())  # a robot file so named
    for args in (("chek",), ("arm7", "--floating-base")):
        demo = run(*args, cwd=tmp_path)
        assert demo.returncode == 0 and "mass matrix" in demo.stdout, demo.stderr
    missing = run("arm7.urdf", cwd=tmp_path)
    assert missing.returncode == 2 and "arm7.urdf: no such robot" in missing.stderr


def test_the_progress_bars_count_every_sample(tmp_path, monkeypatch):
    """simulate's bar stopped at the last whole chunk (98% of 50,000 steps); the counts it is
    given add up to the steps, and inverse-dynamics' to the rows."""
    counted = []

    class Bar:
        def __init__(self, total, what):
            counted.append([total, 0])

        def update(self, n):
            counted[-1][1] += n

        def close(self):
            pass

    monkeypatch.setattr(cli, "CHUNK", 4)
    monkeypatch.setattr(cli, "progress", Bar)
    assert cli.main(["simulate", "arm7", "--duration", "0.01", "--dt", "0.001", "-o", str(tmp_path / "s.csv")]) in (0, None)
    assert cli.main(["inverse-dynamics", "arm7", str(tmp_path / "s.csv"), "-o", str(tmp_path / "t.csv")]) in (0, None)
    assert counted == [[10, 10], [11, 11]]


def test_simulate_reports_the_drift_against_the_kinetic_energy_not_an_arbitrary_zero(tmp_path):
    """A free pendulum at the origin starts with 0 J (the potential's zero): the drift was
    a percentage of 1e-12 J (2e+11%)."""
    (tmp_path / "r.urdf").write_text('<robot name="ball"><link name="ball">%s</link></robot>' % INERTIAL)
    out = run("simulate", "r.urdf", "--floating-base", "--duration", 0.02, "--dt", 0.001, "-o", "s.npz", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    line = out.stdout.splitlines()[-1]
    assert line.startswith("energy: 0 J at the start"), line
    drift, percent, largest = (float(line.split(key)[1].split()[0].rstrip("%,"))
                               for key in ("drift", "J (", "kinetic energy,"))
    model = rbd.load_urdf(tmp_path / "r.urdf", floating_base=True)
    with np.load(tmp_path / "s.npz") as data:
        kinetic = rbd.kinetic_energy(model, data["q"], data["v"])
        energy = kinetic + rbd.potential_energy(model, data["q"])
    assert drift == pytest.approx(energy[-1] - energy[0], rel=1e-2)
    assert largest == pytest.approx(kinetic.max(), rel=1e-2) and largest > 0.0
    assert percent == pytest.approx(100 * abs(drift) / largest, rel=0.05) and percent < 10  # dt/t of free fall


def test_a_robot_file_from_a_pipe(tmp_path):
    """A pipe (``rbd check <(xacro ...)``) is read once: the file kind and the model come from
    those bytes (reading it twice found it drained); a named pipe no program writes to is an
    error at once, not a wait."""
    if not hasattr(os, "mkfifo"):
        pytest.skip("no FIFOs here")
    fifo = tmp_path / "robot.urdf"
    os.mkfifo(fifo)
    keeper = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)  # (lets the writer open and leave its data)
    writer = os.open(fifo, os.O_WRONLY)
    os.write(writer, open(rbd.sample_model_path("arm7"), "rb").read())
    os.close(writer)
    try:
        out = run("check", fifo)
    finally:
        os.close(keeper)
    assert out.returncode == 0 and "robot 'arm7': nq = 7" in out.stdout, out.stderr
    out = run("check", fifo)  # nobody writes now
    assert out.returncode == 1 and "is empty (a pipe that no program writes to)" in out.stdout


@pytest.mark.parametrize("kind", ["csv", "npz"])
def test_a_trajectory_from_a_pipe_or_under_another_name_reads_as_what_it_holds(tmp_path, kind):
    """An input is npz by its first bytes as well as by its name: an npz through a pipe
    (``cat traj.npz | rbd inverse-dynamics arm7 /dev/stdin``) was read as CSV text and refused,
    and so was one named ``.dat``; a CSV through a pipe reads as from its file."""
    model = rbd.sample_model("arm7")
    t, q, v, a = sine_trajectory(model, n=40)
    names = cli.coordinate_names(model)
    path = tmp_path / ("traj." + kind)
    if kind == "npz":
        np.savez(path, time=t, q=q, v=v, a=a)
    else:
        write_csv(path, t, [("q", names, q), ("v", ["v:" + n for n in names], v), ("a", ["a:" + n for n in names], a)])
    expected = rbd.rnea(model, q, v, a)
    other_name = tmp_path / "traj.dat"
    other_name.write_bytes(path.read_bytes())
    for source, fed in (("/dev/stdin", path.read_bytes()), (other_name, None)):
        out = run("inverse-dynamics", "arm7", source, "-o", tmp_path / "tau.csv", fed=fed)
        assert out.returncode == 0, out.stderr
        table = cli.read_table(tmp_path / "tau.csv")
        tau = np.stack([table["tau:" + n] for n in names], axis=-1)
        np.testing.assert_allclose(tau, expected, rtol=0, atol=1e-9)


def test_a_bad_row_from_a_pipe_is_named_and_a_device_is_refused(tmp_path):
    """The bad row of a CSV through a pipe is named (the pipe was drained when the row was
    looked for: 'not a table of numbers'); a torque file through a pipe is checked as a file;
    a device as a trajectory is refused at once (/dev/zero was read until memory ran out)."""
    model = rbd.sample_model("arm7")
    header = "time," + ",".join(cli.coordinate_names(model))
    text = header + "\n0" + ",0" * 7 + "\n0.1,1,2,x,4,5,6,7\n"
    out = run("inverse-dynamics", "arm7", "/dev/stdin", "-o", tmp_path / "tau.csv", fed=text.encode())
    assert out.returncode == 2 and "row 2, column joint3: 'x' is not a number" in out.stderr, out.stderr
    tau_header = "time," + ",".join(cli.coordinate_names(model, "v", "tau:"))
    out = run(*SIM, "--torques", "/dev/stdin", "-o", tmp_path / "s.csv", fed=(tau_header + "\n0" + ",1" * 7 + "\n").encode())
    assert out.returncode == 0, out.stderr
    if os.path.exists("/dev/zero"):
        out = run("inverse-dynamics", "arm7", "/dev/zero", "-o", tmp_path / "tau.csv")  # (run has a timeout)
        assert out.returncode == 2 and "is a device, not a file" in out.stderr, out.stderr


def test_output_to_standard_output_itself_keeps_the_summary_out_of_the_data(tmp_path):
    """``-o /dev/stdout`` writes the data there and the summary lines to standard error (they
    ended the CSV on standard output, which then read back as a bad row)."""
    if not os.path.exists("/dev/stdout"):
        pytest.skip("no /dev/stdout here")
    out = run(*SIM, "-o", "/dev/stdout")
    assert out.returncode == 0, out.stderr
    (tmp_path / "s.csv").write_text(out.stdout)
    table = cli.read_table(tmp_path / "s.csv")  # the whole of standard output is the table
    np.testing.assert_allclose(table["time"], np.arange(11) * 0.001, rtol=0, atol=1e-15)
    assert "10 steps of 0.001 s: trajectory written to /dev/stdout" in out.stderr and "energy:" in out.stderr
    out = run(*SIM, "-o", tmp_path / "s.csv")  # to a file: the summary on standard output as ever
    assert "10 steps of 0.001 s" in out.stdout and out.stderr == "", out.stderr
    out = run("simulate", "arm7", "--duration", "0.001", "--dt", "0.001", "-o", tmp_path / "s.csv")
    assert "1 step of 0.001 s" in out.stdout, out.stdout  # (not "1 steps")


def test_a_state_that_overflows_after_the_last_step_is_the_one_line_error(tmp_path, monkeypatch, capsys):
    """The energy balance after the loop squares the last velocities, finite until then: its
    overflow is the simulation's error too, not a traceback (the loop's were)."""
    def kinetic_energy(model, q, v):
        if np.any(np.asarray(v) != 0.0):
            raise rbd.ResultOverflow("the result is not finite")
        return np.zeros(np.shape(v)[:-1]) if np.ndim(v) > 1 else 0.0
    monkeypatch.setattr(rbd, "kinetic_energy", kinetic_energy)
    assert cli.main(list(SIM) + ["-o", str(tmp_path / "s.csv")]) == 2
    err = capsys.readouterr().err.splitlines()[-1]
    assert err.startswith("rbd simulate: error: simulation diverged at t = 0.01 s: "), err


def test_a_named_pipe_whose_writer_starts_later_is_waited_for(tmp_path):
    """A trajectory through a named pipe is read when its writer comes (``producer > fifo &``
    may start after rbd opens it): it was refused as a pipe no program writes to."""
    if not hasattr(os, "mkfifo"):
        pytest.skip("no FIFOs here")
    import threading
    import time
    model = rbd.sample_model("arm7")
    t, q, v, a = sine_trajectory(model, n=20)
    write_csv(tmp_path / "traj.csv", t, [("q", cli.coordinate_names(model), q)])
    fifo = tmp_path / "traj_fifo"
    os.mkfifo(fifo)

    def writer():
        time.sleep(0.5)
        with open(fifo, "wb") as f:
            f.write((tmp_path / "traj.csv").read_bytes())
    thread = threading.Thread(target=writer)
    thread.start()
    out = run("inverse-dynamics", "arm7", fifo, "-o", tmp_path / "tau.csv")
    thread.join()
    assert out.returncode == 0 and "20 samples" in out.stdout, out.stderr


def test_output_to_dev_null_with_standard_output_there_too_says_nothing(tmp_path):
    """``-o /dev/null > /dev/null``: standard output is the output file, but a device that
    keeps nothing: the summary stays where the user silenced it (it moved to standard error)."""
    if not os.path.exists("/dev/null"):
        pytest.skip("no /dev/null here")
    exe = shutil.which("rbd")
    command = ([exe] if exe else [sys.executable, "-m", "rbd"]) + list(SIM) + ["-o", "/dev/null"]
    out = subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, timeout=300,
                         env=dict(os.environ, RBD_BACKEND=os.environ.get("RBD_BACKEND", "")))
    assert out.returncode == 0 and out.stderr == "", out.stderr


def test_a_plot_through_a_link_to_the_output_is_refused_and_a_plot_into_a_pipe_is_written(tmp_path):
    """--plot naming -o's file through a symbolic or a hard link is refused before the work (the
    trajectory was replaced by the image, status 0); a plot into a named pipe is rendered in
    memory first (a PNG writer seeks: it failed after the work)."""
    pytest.importorskip("matplotlib")
    (tmp_path / "target.png").write_text("")
    os.symlink(tmp_path / "target.png", tmp_path / "link.png")
    out = run(*SIM, "-o", tmp_path / "target.png", "--plot", tmp_path / "link.png")
    assert out.returncode == 2 and "the same file as -o" in out.stderr, out.stderr
    os.link(tmp_path / "target.png", tmp_path / "hard.png")
    out = run(*SIM, "-o", tmp_path / "hard.png", "--plot", tmp_path / "target.png")
    assert out.returncode == 2 and "the same file as -o" in out.stderr, out.stderr
    if not hasattr(os, "mkfifo"):
        return
    import threading
    fifo = tmp_path / "plot.png"
    os.mkfifo(fifo)
    received = []
    reader = threading.Thread(target=lambda: received.append(open(fifo, "rb").read()))
    reader.start()
    out = run(*SIM, "-o", tmp_path / "s.csv", "--plot", fifo)
    reader.join(timeout=60)
    assert out.returncode == 0, out.stderr
    assert received and received[0].startswith(b"\x89PNG"), received[:1]


def test_standard_output_that_cannot_be_written_is_the_one_line_error(tmp_path):
    """A full standard output (> /dev/full) is the command's one-line error, status 2 (a
    traceback); -o /dev/stdout appended to a log (>> log) keeps the log's lines."""
    if os.path.exists("/dev/full"):
        exe = shutil.which("rbd")
        command = ([exe] if exe else [sys.executable, "-m", "rbd"])
        with open("/dev/full", "w") as full:
            for args in (["check", "arm7"], list(SIM) + ["-o", str(tmp_path / "s.csv")], ["arm7"]):
                out = subprocess.run(command + args, stdout=full, stderr=subprocess.PIPE, text=True, timeout=300,
                                     env=dict(os.environ, RBD_BACKEND=os.environ.get("RBD_BACKEND", "")))
                prefix = "rbd %s" % args[0] if args[0] in cli.SUBCOMMANDS else "rbd"
                assert out.returncode == 2 and "Traceback" not in out.stderr, out.stderr
                assert out.stderr.strip().splitlines()[-1] == (
                    "%s: error: cannot write standard output: No space left on device" % prefix), out.stderr
    if os.path.exists("/dev/stdout"):
        log = tmp_path / "app.log"
        log.write_text("earlier line\n")
        exe = shutil.which("rbd")
        command = ([exe] if exe else [sys.executable, "-m", "rbd"]) + list(SIM) + ["-o", "/dev/stdout"]
        with open(log, "a") as appended:
            out = subprocess.run(command, stdout=appended, stderr=subprocess.PIPE, text=True, timeout=300,
                                 env=dict(os.environ, RBD_BACKEND=os.environ.get("RBD_BACKEND", "")))
        assert out.returncode == 0, out.stderr
        lines = log.read_text().splitlines()
        assert lines[0] == "earlier line" and lines[1].startswith("time,") and len(lines) == 2 + 11, lines[:3]


def test_a_singular_model_in_a_simulation_is_its_error_and_a_diverged_one_the_step(tmp_path):
    """Forward dynamics singular at velocities a machine reaches is the model's error (a
    massless leaf, at rest); at velocities of 1e14 rad/s (the Panda at --dt 0.01 after 1.35 s:
    its joints lose their last digits) it is the step's: the simulation diverged."""
    (tmp_path / "leaf.urdf").write_text(LEAF)
    out = run("simulate", tmp_path / "leaf.urdf", "--duration", "0.01", "--dt", "0.001", "-o", tmp_path / "s.csv")
    assert out.returncode == 2, out.stderr
    assert "simulation stopped at t = 0 s: forward dynamics is singular at joint 'finger_joint'" in out.stderr, out.stderr
    args = cli._parser().parse_args(["simulate", "arm7", "--duration", "1", "--dt", "0.01", "-o", "x.csv"])
    t, v = np.arange(3) * 0.01, np.zeros((3, 7))
    singular = rbd.SingularModelError("forward dynamics is singular at joint 'joint5'")
    assert cli._diverged(t, v, 2, lambda t: np.zeros(7), args, singular).startswith(
        "simulation stopped at t = 0.02 s: forward dynamics is singular")
    v[1, 3] = 3e14
    assert cli._diverged(t, v, 2, lambda t: np.zeros(7), args, singular).startswith(
        "simulation diverged at t = 0.02 s: the velocities reached 3e+14 and then forward dynamics turned singular")
