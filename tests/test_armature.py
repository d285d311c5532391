"""Armature (reflected rotor inertia, per velocity coordinate) in the dynamics.

It adds diag(armature) to the joint-space mass matrix and to everything built
on it (rnea, crba, aba, inverse_mass_matrix, kinetic_energy, the derivatives),
and nothing to the velocity-product and gravity terms.  Oracles: the definition
checked against NumPy's dense algebra on random trees with every joint kind,
finite differences, and Pinocchio with its own ``model.armature`` set on real
robots.
"""
import itertools

import numpy as np
import pytest

import rbd
from models import random_model

from oracles.pinocchio_adapter import load_pair, pin

TREES = [(seed, floating) for seed in range(3) for floating in (False, True)]


@pytest.fixture(params=TREES, ids=["tree%d-%s" % (s, "floating" if f else "fixed") for s, f in TREES])
def pair(request):
    """A random tree without and with a random positive armature."""
    seed, floating = request.param
    plain = random_model(seed, nlinks=9, floating_base=floating)
    armature = np.random.default_rng(seed).uniform(0.05, 0.5, size=plain.nv)
    return plain, plain.replace(armature=armature)


def state(model, seed=0):
    rng = np.random.default_rng([seed, model.nv])
    return (rbd.random_configuration(model, rng), rng.normal(size=model.nv), rng.normal(size=model.nv),
            rng.normal(scale=3.0, size=model.nv), rng.normal(size=(model.nbodies, 6)))


def test_armature_enters_the_mass_matrix_and_everything_built_on_it(pair, backend):
    plain, model = pair
    arm = model.armature
    q, v, a, tau, fext = state(model)
    M = rbd.crba(model, q)
    np.testing.assert_allclose(M, rbd.crba(plain, q) + np.diag(arm), rtol=0, atol=1e-12)
    np.testing.assert_allclose(rbd.rnea(model, q, v, a, fext), rbd.rnea(plain, q, v, a, fext) + arm * a,
                               rtol=0, atol=1e-11)
    # forward dynamics against a dense solve with the armed mass matrix
    h = rbd.rnea(model, q, v, np.zeros(model.nv), fext)
    np.testing.assert_allclose(rbd.aba(model, q, v, tau, fext), np.linalg.solve(M, tau - h), rtol=0, atol=1e-9)
    np.testing.assert_allclose(rbd.inverse_mass_matrix(model, q) @ M, np.eye(model.nv), rtol=0, atol=1e-10)
    np.testing.assert_allclose(rbd.kinetic_energy(model, q, v), 0.5 * v @ M @ v, rtol=1e-12)
    # no armature in the velocity-product and gravity terms
    np.testing.assert_array_equal(rbd.nonlinear_effects(model, q, v), rbd.nonlinear_effects(plain, q, v))
    np.testing.assert_array_equal(rbd.gravity(model, q), rbd.gravity(plain, q))
    np.testing.assert_array_equal(rbd.coriolis_matrix(model, q, v), rbd.coriolis_matrix(plain, q, v))


def test_derivatives_with_armature(pair, backend):
    plain, model = pair
    q, v, a, tau, fext = state(model, 1)
    dq, dv, da = rbd.rnea_derivatives(model, q, v, a, fext)
    pq, pv, _ = rbd.rnea_derivatives(plain, q, v, a, fext)
    np.testing.assert_allclose(da, rbd.crba(model, q), rtol=0, atol=1e-12)
    np.testing.assert_allclose(dq, pq, rtol=0, atol=1e-10)  # armature * a does not depend on q or v
    np.testing.assert_allclose(dv, pv, rtol=0, atol=1e-10)
    ddq, ddv, ddtau = rbd.aba_derivatives(model, q, v, tau, fext)
    h = 1e-6
    fd = np.stack([(rbd.aba(model, rbd.integrate(model, q, h * e), v, tau, fext)
                    - rbd.aba(model, rbd.integrate(model, q, -h * e), v, tau, fext)) / (2 * h)
                   for e in np.eye(model.nv)], axis=-1)
    np.testing.assert_allclose(ddq, fd, rtol=0, atol=1e-6 * max(1.0, np.abs(fd).max()))
    np.testing.assert_allclose(ddtau, np.linalg.inv(rbd.crba(model, q)), rtol=0, atol=1e-9)


def test_armature_makes_a_massless_leaf_regular(backend):
    """Forward-dynamics singularity is judged with armature included: a rotor on a
    massless finger gives it inertia."""
    b = rbd.ModelBuilder("leaf")
    b.add_link("base")
    b.add_link("arm", mass=1.0, com=[0, 0, -0.5], inertia=np.diag([0.01, 0.01, 0.001]))
    b.add_link("finger")
    b.add_joint("shoulder", "revolute", "base", "arm", axis=(1, 0, 0))
    b.add_joint("finger_joint", "revolute", "arm", "finger", axis=(0, 1, 0))
    bare = b.build()
    q, z = rbd.neutral(bare), np.zeros(bare.nv)
    with pytest.raises(rbd.SingularModelError):
        rbd.aba(bare, q, z, z)
    model = bare.replace(armature=[0.0, 0.02])
    tau = np.array([0.3, 0.1])
    qdd = rbd.aba(model, q, z, tau)
    np.testing.assert_allclose(qdd, np.linalg.solve(rbd.crba(model, q), tau - rbd.gravity(model, q)), atol=1e-12)
    np.testing.assert_allclose(rbd.inverse_mass_matrix(model, q), np.linalg.inv(rbd.crba(model, q)), atol=1e-10)


@pytest.mark.parametrize("robot", ["panda", "talos"])
def test_against_pinocchio_with_armature(robot, backend):
    if pin is None:
        pytest.skip("pinocchio is not installed")
    pair = load_pair(robot)
    if pair is None:
        pytest.skip("example-robot-data is not installed")
    armature = np.random.default_rng(3).uniform(0.01, 0.3, size=pair.model.nv)
    model = pair.model.replace(armature=armature)
    pm = pair.pin_model.copy()
    pm.armature = pair.v_to_pin(armature)
    data = pm.createData()
    q, v, a, tau, _ = state(model, 2)
    Q, V, A, T = pair.q_to_pin(q), pair.v_to_pin(v), pair.v_to_pin(a), pair.v_to_pin(tau)

    def close(ours, theirs, what):
        theirs = np.asarray(theirs)
        np.testing.assert_allclose(ours, theirs, rtol=0, atol=1e-9 * max(1.0, np.abs(theirs).max()), err_msg=what)

    close(rbd.rnea(model, q, v, a), pair.v_from_pin(pin.rnea(pm, data, Q, V, A)), "rnea")
    close(rbd.crba(model, q), pair.mass_matrix_from_pin(pin.crba(pm, data, Q)), "crba")
    close(rbd.aba(model, q, v, tau), pair.v_from_pin(pin.aba(pm, data, Q, V, T)), "aba")
    close(rbd.inverse_mass_matrix(model, q), pair.mass_matrix_from_pin(np.array(pin.computeMinverse(pm, data, Q))),
          "M^-1")
    for name, ours, theirs in zip(("dtau_dq", "dtau_dv", "dtau_da"), rbd.rnea_derivatives(model, q, v, a),
                                  pin.computeRNEADerivatives(pm, data, Q, V, A)):
        close(ours, pair.matrix_from_pin(np.array(theirs)), name)
    for name, ours, theirs in zip(("dqdd_dq", "dqdd_dv", "dqdd_dtau"), rbd.aba_derivatives(model, q, v, tau),
                                  pin.computeABADerivatives(pm, data, Q, V, T)):
        close(ours, pair.matrix_from_pin(np.array(theirs)), name)


def test_armature_enters_the_contact_dynamics(pair, backend):
    """M (armature included) in the equations of motion and of impact with contacts,
    and the contact constraints held (checked through frame_acceleration and the rows)."""
    _, model = pair
    q, v, _, tau, fext = state(model, seed=3)
    bodies = range(model.nbodies - 1, -1, -1)
    for a, b in itertools.chain(itertools.combinations(bodies, 2), ((a, None) for a in bodies)):
        frames = [model.joint_frame(a)] + ([] if b is None else [model.joint_frame(b)])
        contacts = [rbd.Contact(frames[0], 3)] + ([] if b is None else [rbd.Contact(frames[1], 3, "local")])
        J = rbd.contact_jacobian(model, q, contacts)
        if np.linalg.matrix_rank(J, tol=1e-6) == J.shape[0]:  # two independent points, else one
            break
    else:
        pytest.skip("no point on this tree moves in three directions")
    M = rbd.crba(model, q)
    assert np.allclose(np.diag(M) - np.diag(rbd.crba(pair[0], q)), model.armature)
    qdd, forces = rbd.constrained_dynamics(model, q, v, tau, contacts, fext)
    h = rbd.rnea(model, q, v, np.zeros(model.nv), fext)
    np.testing.assert_allclose(M @ qdd + h, tau + J.T @ forces, atol=1e-9 * max(1.0, np.abs(tau).max()))
    np.testing.assert_allclose(rbd.frame_acceleration(model, q, v, qdd, frames[0], "local_world_aligned")[:3], 0,
                               atol=1e-9)
    v_after, impulses = rbd.impulse_dynamics(model, q, v, contacts)
    np.testing.assert_allclose(M @ (v_after - v), J.T @ impulses, atol=1e-9)
    np.testing.assert_allclose(J @ v_after, 0, atol=1e-9)
