"""The NumPy backend on models of hundreds to thousands of bodies: M^-1 in memory about its
output, the contact dynamics linear in the model (ABA solves of the contact columns), and a
MemoryError that names the call and the model.

Oracles: LAPACK on the CRBA's M (numpy.linalg), the equations of motion through rnea, the
contacts' accelerations through frame_acceleration, and the compiled backend.  The large
cases run in a fresh interpreter under an address-space limit: a regression fails, never
swaps (the old M^-1 took 20-45x its output; one contact on a 5,000-body tree ran out of 4 GB).
"""
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import rbd
from rbd import reference as ref
from rbd.reference import contacts as ref_contacts

from conftest import HAVE_COMPILED
from models import m_inverse_slack

SOURCE_ROOT = str(Path(rbd.__file__).resolve().parent.parent)
TESTS = str(Path(__file__).resolve().parent)

# What the subprocesses share: a memory guard above what the process holds now.
PRELUDE = """
import json, resource, sys
import numpy as np
import rbd
from rbd import reference as ref
sys.path.insert(0, %r)
def peak_mb():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
def limit_to(extra_mb):  # an address-space limit extra_mb above what is mapped now (None: lifted)
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    if extra_mb is None:
        resource.setrlimit(resource.RLIMIT_AS, (hard, hard))
        return
    used = int(open("/proc/self/statm").read().split()[0]) * resource.getpagesize()
    resource.setrlimit(resource.RLIMIT_AS, (used + (int(extra_mb) << 20), hard))
""" % TESTS


def run_python(code, timeout=300):
    """Run PRELUDE + ``code`` in a fresh interpreter on this checkout's rbd; its stdout's
    last line as JSON."""
    env = dict(os.environ, PYTHONPATH=SOURCE_ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    result = subprocess.run([sys.executable, "-c", PRELUDE + code], capture_output=True, text=True,
                            timeout=timeout, env=env, cwd=SOURCE_ROOT)
    assert result.returncode == 0, result.stderr[-3000:]
    return json.loads(result.stdout.strip().splitlines()[-1])


def generated(n, shape):
    return rbd.load_urdf(rbd.generated_urdf(n, shape))


def kkt_solution(model, q, v, tau, contacts, regularization):
    """(qdd, forces) of one sample from the KKT system written out densely: M from crba, h
    from rnea, J from contact_jacobian, the drift gamma the contacts' accelerations at qdd = 0
    (frame_acceleration), solved by LAPACK:  [[M, -J^T], [J, r I]] [qdd; lam] = [tau - h; -gamma]."""
    M = ref.crba(model, q)
    h = ref.rnea(model, q, v, np.zeros(model.nv))
    J = ref.contact_jacobian(model, q, contacts)
    gamma = contact_accelerations(model, q, v, np.zeros(model.nv), contacts)
    m = J.shape[0]
    A = np.block([[M, -J.T], [J, regularization * np.eye(m)]])
    x = np.linalg.solve(A, np.concatenate([tau - h, -gamma]))
    return x[:model.nv], x[model.nv:]


def contact_accelerations(model, q, v, a, contacts):
    """Each contact's acceleration in its force axes (a point: the classical acceleration of the
    frame's origin; a flat contact: its local spatial acceleration), stacked."""
    rows = []
    for c in contacts:
        R = ref.frame_placement(model, q, c.frame)[:3, :3]
        if c.dim == 3:
            acc = ref.frame_acceleration(model, q, v, a, c.frame, "local_world_aligned")[:3]
            rows.append(acc if c.reference == "local_world_aligned" else R.T @ acc)
        else:
            acc = ref.frame_acceleration(model, q, v, a, c.frame, "local")
            rows.append(acc if c.reference == "local" else np.concatenate([R @ acc[:3], R @ acc[3:]]))
    return np.concatenate(rows)


def contact_sets(model):
    """One point contact at the tip; a point at the tip, a flat contact (local axes) two
    thirds of the way and a point (local axes) on a body whose origin the tip's joint does
    not move (its sibling branch on a tree, the middle of a chain), so the 12 rows are
    independent."""
    tip = model.nbodies  # (link l<k> is body k - 1)
    third = tip - 1 if model.parents[tip - 1] != tip - 2 else tip // 2
    return [[rbd.Contact("l%d" % tip, 3)],
            [rbd.Contact("l%d" % tip, 3), rbd.Contact("l%d" % (2 * tip // 3), 6, "local"),
             rbd.Contact("l%d" % third, 3, "local")]]


# ------------------------------------------------------------------------------------------
# M^-1
# ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("shape, n", [("chain", 600), ("tree", 1000)])
def test_inverse_mass_matrix_of_a_large_model_takes_about_its_output(shape, n):
    """M^-1 against LAPACK's inverse of the CRBA's M, exactly symmetric, its peak memory a small
    multiple of its output under an address-space limit the old passes could not meet (they
    took 20-45x the output: 120 MB for a 600-link chain's 3 MB)."""
    got = run_python("""
from models import m_inverse_slack
model = rbd.load_urdf(rbd.generated_urdf(%d, %r))
q = rbd.random_configuration(model, np.random.default_rng(1))
output_mb = model.nv ** 2 * 8 / 2 ** 20
limit_to(4 * output_mb + 60)
base = peak_mb()
Minv = ref.inverse_mass_matrix(model, q)
extra = peak_mb() - base
limit_to(None)
M = ref.crba(model, q)
lapack = np.linalg.inv(M)
print(json.dumps([extra, output_mb, float(np.abs(Minv - lapack).max()), m_inverse_slack(M, lapack),
                  bool((Minv == Minv.T).all()), float(np.abs(Minv @ M - np.eye(model.nv)).max())]))
""" % (n, shape))
    extra, output_mb, error, slack, symmetric, residual = got
    assert extra < 3 * output_mb + 30, (extra, output_mb)
    assert error <= slack, (error, slack)
    assert symmetric
    assert residual < 1e-6, residual


def test_inverse_mass_matrix_batches_are_their_samples():
    model = generated(300, "tree")
    q = rbd.random_configuration(model, np.random.default_rng(2), batch=3)
    Minv = ref.inverse_mass_matrix(model, q)
    for i in range(3):
        M = ref.crba(model, q[i])
        lapack = np.linalg.solve(M, np.eye(model.nv))
        np.testing.assert_allclose(Minv[i], ref.inverse_mass_matrix(model, q[i]), rtol=0, atol=1e-12 * np.abs(lapack).max())
        assert np.abs(Minv[i] - lapack).max() <= m_inverse_slack(M, lapack)
        assert (Minv[i] == Minv[i].T).all()


# ------------------------------------------------------------------------------------------
# Contact dynamics
# ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("shape, n, regularization", [("chain", 130, 0.0), ("tree", 250, 1e-3)])
def test_contact_dynamics_of_a_large_model_solve_the_dense_kkt_system(shape, n, regularization):
    """One sample (through M^-1 at this size) and a batch (ABA solves) against the KKT system
    written out with crba, rnea, contact_jacobian and LAPACK, and the equations of motion through
    rnea; the impact likewise."""
    model = generated(n, shape)
    rng = np.random.default_rng(n)
    q = rbd.random_configuration(model, rng, batch=2)
    v, tau = rng.normal(size=(2, model.nv)), rng.normal(size=(2, model.nv))
    for contacts in contact_sets(model):
        qdd, forces = ref.constrained_dynamics(model, q, v, tau, contacts, regularization=regularization)
        after, impulses = ref.impulse_dynamics(model, q, v, contacts, restitution=0.5, regularization=regularization)
        for i in range(2):
            one = ref.constrained_dynamics(model, q[i], v[i], tau[i], contacts, regularization=regularization)
            kkt_qdd, kkt_forces = kkt_solution(model, q[i], v[i], tau[i], contacts, regularization)
            scale = np.abs(kkt_qdd).max()
            for got_qdd, got_forces in (one, (qdd[i], forces[i])):
                np.testing.assert_allclose(got_qdd, kkt_qdd, rtol=0, atol=1e-8 * scale)
                np.testing.assert_allclose(got_forces, kkt_forces, rtol=0, atol=1e-8 * np.abs(kkt_forces).max())
            J = ref.contact_jacobian(model, q[i], contacts)
            motion = ref.rnea(model, q[i], v[i], qdd[i]) - tau[i] - J.T @ forces[i]
            assert np.abs(motion).max() < 1e-9 * np.abs(tau[i]).max()
            held = contact_accelerations(model, q[i], v[i], qdd[i], contacts)
            np.testing.assert_allclose(held, -regularization * forces[i], rtol=0, atol=1e-9 * scale)
            # the impact: M (v+ - v) = J^T impulses, J v+ = -e J v (- r impulses)
            M = ref.crba(model, q[i])
            np.testing.assert_allclose(M @ (after[i] - v[i]), J.T @ impulses[i], rtol=0,
                                       atol=1e-9 * np.abs(J.T @ impulses[i]).max())
            np.testing.assert_allclose(J @ after[i], -0.5 * J @ v[i] - regularization * impulses[i], rtol=0,
                                       atol=1e-9 * np.abs(J @ v[i]).max())


def test_the_solves_and_m_inverse_give_the_same_contact_dynamics(monkeypatch):
    """A 60-body tree's single sample runs through M^-1, its batch through ABA solves: the same
    answers; and each path forced on the single samples gives them too."""
    model = generated(60, "tree")
    rng = np.random.default_rng(5)
    q = rbd.random_configuration(model, rng, batch=3)
    v, tau = rng.normal(size=(3, model.nv)), rng.normal(size=(3, model.nv))
    contacts = contact_sets(model)[1]
    batch = ref.constrained_dynamics(model, q, v, tau, contacts, regularization=1e-6)
    for forced_dense in (False, True):
        with monkeypatch.context() as patch:
            patch.setattr(ref_contacts, "SOLVES_MIN_DOFS", 10 ** 9 if forced_dense else 0)
            patch.setattr(ref_contacts, "SOLVES_MAX_COLUMNS", 0.0 if forced_dense else 1.0)
            for i in range(3):
                qdd, forces = ref.constrained_dynamics(model, q[i], v[i], tau[i], contacts, regularization=1e-6)
                np.testing.assert_allclose(qdd, batch[0][i], rtol=0, atol=1e-9 * np.abs(qdd).max())
                np.testing.assert_allclose(forces, batch[1][i], rtol=0, atol=1e-9 * np.abs(forces).max())


def test_redundant_contacts_are_the_same_error_on_the_solves(monkeypatch):
    """The rank-deficient contact set's error (naming the contacts and the sample) is the one
    the M^-1 path gives, and a regularization lifts it."""
    model = generated(200, "chain")
    rng = np.random.default_rng(6)
    q = rbd.random_configuration(model, rng, batch=2)
    v, tau = rng.normal(size=(2, model.nv)), rng.normal(size=(2, model.nv))
    foot = model.frame_names[-1]
    twice = [rbd.Contact(foot, 3), rbd.Contact(foot, 6, "local")]
    messages = []
    for forced_dense in (False, True):
        with monkeypatch.context() as patch:
            patch.setattr(ref_contacts, "SOLVES_MIN_DOFS", 10 ** 9 if forced_dense else 0)
            patch.setattr(ref_contacts, "SOLVES_MAX_COLUMNS", 0.0 if forced_dense else 1.0)
            for args in ((q, v, tau), (q[1], v[1], tau[1])):
                with pytest.raises(ValueError, match="rank-deficient") as info:
                    ref.constrained_dynamics(model, *args, twice)
                messages.append(str(info.value))
            with pytest.raises(ValueError, match="rank-deficient"):
                ref.impulse_dynamics(model, q, v, twice)
    assert messages[:2] == messages[2:] and foot in messages[0] and "sample" in messages[0], messages
    qdd, forces = ref.constrained_dynamics(model, q, v, tau, twice, regularization=1e-4)
    assert np.isfinite(qdd).all() and np.isfinite(forces).all()


@pytest.mark.skipif(not HAVE_COMPILED, reason="rbd_c is not built")
def test_contact_dynamics_of_thousands_of_bodies_stay_linear_in_memory():
    """One to three contacts on a chain and a tree of thousands of bodies, with and without
    regularization: the compiled backend's answers, in megabytes (one contact on a 5000-body
    tree ran out of 4 GB; on a 5000-link chain it ran for minutes).  (Batches: above.)"""
    got = run_python("""
import rbd_c
from test_reference_scale import contact_sets
out = []
for shape, n in (("chain", 2000), ("tree", 2500)):
    model = rbd.load_urdf(rbd.generated_urdf(n, shape))
    rng = np.random.default_rng(7)
    q, v, tau = rbd.random_configuration(model, rng), rng.normal(size=model.nv), rng.normal(size=model.nv)
    ref.rnea(model, q, v, tau)
    one, three = contact_sets(model)
    calls = [(rbd_c.constrained_dynamics, (q, v, tau, one), {}),
             (rbd_c.constrained_dynamics, (q, v, tau, three), {"regularization": 1e-6}),
             (rbd_c.impulse_dynamics, (q, v, three), {"restitution": 0.2})]
    limit_to(300)
    base = peak_mb()
    results = [getattr(ref, f.__name__)(model, *args, **kwargs) for f, args, kwargs in calls]
    extra = peak_mb() - base
    limit_to(None)
    errors = []
    for (f, args, kwargs), got in zip(calls, results):
        want = f(model, *args, **kwargs)
        errors += [float(np.abs(g - w).max() / np.abs(w).max()) for g, w in zip(got, want)]
    out.append([shape, extra, max(errors)])
print(json.dumps(out))
""")
    for shape, extra, error in got:
        assert extra < 100, (shape, extra)
        assert error < 1e-6, (shape, error)  # (a chain of 2000 links is badly conditioned: the backends round apart)


# ------------------------------------------------------------------------------------------
# Out of memory
# ------------------------------------------------------------------------------------------
def test_an_empty_memory_error_becomes_one_naming_the_call_and_the_model(monkeypatch):
    """Python's MemoryError of a list that cannot grow is empty: the NumPy backend's names the
    call (the outer one, and the one inside it that ran out), the model's size and the batch."""
    from rbd.reference import derivatives

    def out_of_memory(*args):
        raise MemoryError()
    monkeypatch.setattr(derivatives, "_inverse_mass_matrix_passes", out_of_memory)
    model = generated(30, "tree")
    q = rbd.random_configuration(model, np.random.default_rng(8), batch=4)
    with pytest.raises(MemoryError) as info:
        ref.inverse_mass_matrix(model, q)
    assert str(info.value) == ("inverse_mass_matrix on a model of 30 bodies and 30 dofs, a batch of 4 samples, "
                               "ran out of memory (NumPy backend)")
    z = np.zeros(model.nv)
    with pytest.raises(MemoryError) as info:  # (one sample of 30 dofs: through M^-1)
        ref.constrained_dynamics(model, q[0], z, z, contact_sets(model)[0])
    assert str(info.value) == ("constrained_dynamics on a model of 30 bodies and 30 dofs ran out of memory "
                               "(NumPy backend, in inverse_mass_matrix)")


def test_a_memory_limit_is_a_memory_error_naming_the_call_and_the_model():
    """Under an address-space limit 4 MB above the process, M^-1 of a 1200-link chain (11 MB)
    cannot be had: the error names the call and the model's size."""
    got = run_python("""
model = rbd.load_urdf(rbd.generated_urdf(1200))
q = np.full(model.nq, 0.01)
ref.rnea(model, q, q, q)
limit_to(4)
try:
    ref.inverse_mass_matrix(model, q)
    message = None
except MemoryError as exc:
    message = str(exc)
print(json.dumps(message))
""")
    assert got is not None
    assert got.startswith("inverse_mass_matrix on a model of 1200 bodies and 1200 dofs ran out of memory "
                          "(NumPy backend"), got
