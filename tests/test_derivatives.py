"""The derivatives of the dynamics: rnea_derivatives, aba_derivatives, inverse_mass_matrix.

Oracles: central finite differences through ``integrate`` on random trees with
every joint kind (q perturbed along q ⊕ δq, fext held in the body frames);
Pinocchio's computeRNEADerivatives / computeABADerivatives / computeMinverse on
the example-robot-data robots, fixed and floating base; and the identities that
tie them to the other algorithms (dtau_da = crba, dqdd_dtau = M^-1 = crba^-1,
dqdd_dx = -M^-1 dtau_dx at a = aba).  Batches and bad input are covered with
every algorithm (tests/models.py ``algorithm_calls``).
"""
import numpy as np
import pytest

import rbd
from models import random_model

from oracles.pinocchio_adapter import pin

H = 1e-6  # central-difference step: truncation ~H^2, round-off ~eps/H


def central_difference(f, x0, n, step):
    """The (…, n) Jacobian of f at x0 by central differences along step(x0, e)."""
    cols = []
    for k in range(n):
        e = np.zeros(n)
        e[k] = H
        cols.append((f(step(x0, e)) - f(step(x0, -e))) / (2 * H))
    return np.stack(cols, axis=-1)


def assert_relative(actual, expected, tol, what):
    scale = max(1.0, float(np.abs(expected).max()))
    np.testing.assert_allclose(actual, expected, rtol=0, atol=tol * scale, err_msg=what)


def random_state(model, seed):
    rng = np.random.default_rng([seed, model.nv])
    q = rbd.random_configuration(model, rng)
    v = rng.normal(size=model.nv)
    a = rng.normal(size=model.nv)
    tau = rng.normal(scale=3.0, size=model.nv)
    fext = rng.normal(scale=2.0, size=(model.nbodies, 6))
    return q, v, a, tau, fext


TREES = [(seed, floating) for seed in range(3) for floating in (False, True)]


@pytest.fixture(params=TREES, ids=["tree%d-%s" % (s, "floating" if f else "fixed") for s, f in TREES])
def tree(request):
    seed, floating = request.param
    return random_model(seed, nlinks=9, floating_base=floating)


# ------------------------------------------------------------------------------------------
# Finite differences on trees with every joint kind
# ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("with_fext", [False, True])
def test_rnea_derivatives_against_finite_differences(tree, backend, with_fext):
    model = tree
    q, v, a, _, fext = random_state(model, 1)
    fext = fext if with_fext else None
    dq, dv, da = rbd.rnea_derivatives(model, q, v, a, fext)
    along_q = central_difference(lambda x: rbd.rnea(model, x, v, a, fext), q, model.nv,
                                 lambda x, e: rbd.integrate(model, x, e))
    along_v = central_difference(lambda x: rbd.rnea(model, q, x, a, fext), v, model.nv, lambda x, e: x + e)
    along_a = central_difference(lambda x: rbd.rnea(model, q, v, x, fext), a, model.nv, lambda x, e: x + e)
    assert_relative(dq, along_q, 1e-6, "dtau_dq")
    assert_relative(dv, along_v, 1e-6, "dtau_dv")
    assert_relative(da, along_a, 1e-6, "dtau_da")


@pytest.mark.parametrize("with_fext", [False, True])
def test_aba_derivatives_against_finite_differences(tree, backend, with_fext):
    model = tree
    q, v, _, tau, fext = random_state(model, 2)
    fext = fext if with_fext else None
    dq, dv, dtau = rbd.aba_derivatives(model, q, v, tau, fext)
    along_q = central_difference(lambda x: rbd.aba(model, x, v, tau, fext), q, model.nv,
                                 lambda x, e: rbd.integrate(model, x, e))
    along_v = central_difference(lambda x: rbd.aba(model, q, x, tau, fext), v, model.nv, lambda x, e: x + e)
    along_tau = central_difference(lambda x: rbd.aba(model, q, v, x, fext), tau, model.nv, lambda x, e: x + e)
    assert_relative(dq, along_q, 1e-6, "dqdd_dq")
    assert_relative(dv, along_v, 1e-6, "dqdd_dv")
    assert_relative(dtau, along_tau, 1e-6, "dqdd_dtau")


# ------------------------------------------------------------------------------------------
# Identities
# ------------------------------------------------------------------------------------------
def test_identities_with_the_other_algorithms(tree, backend):
    model = tree
    q, v, a, tau, fext = random_state(model, 3)
    M = rbd.crba(model, q)
    Minv = rbd.inverse_mass_matrix(model, q)
    np.testing.assert_array_equal(Minv, Minv.T)  # exactly symmetric
    assert np.all(np.linalg.eigvalsh(Minv) > 0)
    assert_relative(M @ Minv, np.eye(model.nv), 1e-11, "M M^-1 = I")
    assert_relative(Minv, np.linalg.inv(M), 1e-10 * np.linalg.cond(M), "M^-1 = inv(crba)")

    dq, dv, da = rbd.rnea_derivatives(model, q, v, a, fext)
    assert_relative(da, M, 1e-13, "dtau_da = crba")

    qdd = rbd.aba(model, q, v, tau, fext)
    ddq, ddv, ddtau = rbd.aba_derivatives(model, q, v, tau, fext)
    assert_relative(ddtau, Minv, 1e-13, "dqdd_dtau = inverse_mass_matrix")
    tq, tv, _ = rbd.rnea_derivatives(model, q, v, qdd, fext)
    assert_relative(ddq, -np.linalg.solve(M, tq), 1e-9, "dqdd_dq = -M^-1 dtau_dq at a = aba")
    assert_relative(ddv, -np.linalg.solve(M, tv), 1e-9, "dqdd_dv = -M^-1 dtau_dv at a = aba")


def test_both_forms_of_the_inverse_mass_matrix(backend):
    """rbd_c takes M^-1 factored along the tree for shallow trees and by the
    articulated-body sweeps for deep chains: both against M and the other algorithms,
    with every joint kind, and a singular deep chain named at its joint."""
    shallow = random_model(11, nlinks=12, floating_base=True)
    deep = random_model(12, nlinks=40, floating_base=True, chain=True)  # (90 dofs)
    if backend == "cython":
        from rbd_c._derivatives import _inverse_mass_matrix_form
        assert _inverse_mass_matrix_form(shallow) == "factored"
        assert _inverse_mass_matrix_form(deep) == "articulated"
    for model in (shallow, deep):
        q, v, a, tau, fext = random_state(model, 5)
        M = rbd.crba(model, q)
        Minv = rbd.inverse_mass_matrix(model, q)
        np.testing.assert_array_equal(Minv, Minv.T)
        assert_relative(M @ Minv, np.eye(model.nv), 1e-10, "M M^-1 = I")
        ddq, ddv, ddtau = rbd.aba_derivatives(model, q, v, tau, fext)
        assert_relative(ddtau, Minv, 1e-13, "dqdd_dtau = inverse_mass_matrix")
        tq, _, _ = rbd.rnea_derivatives(model, q, v, rbd.aba(model, q, v, tau, fext), fext)
        assert_relative(ddq, -np.linalg.solve(M, tq), 1e-8, "dqdd_dq = -M^-1 dtau_dq")
    text = rbd.generated_urdf(120)
    last = text.index('<link name="l120">')
    text = text[:last] + text[last:].replace('<mass value="0.1"/>', '<mass value="0"/>', 1).replace(
        'ixx="1e-4" ixy="0" ixz="0" iyy="1e-4" iyz="0" izz="5e-5"', 'ixx="0" ixy="0" ixz="0" iyy="0" iyz="0" izz="0"', 1)
    singular = rbd.load_urdf(text)
    if backend == "cython":
        assert _inverse_mass_matrix_form(singular) == "articulated"
    with pytest.raises(rbd.SingularModelError, match="j120"):
        rbd.inverse_mass_matrix(singular, np.full(120, 0.3))


def _dqdd_dq_from_a_solve(model, q, v, tau):
    """-M^-1 dtau/dq at the qdd of a LAPACK solve with crba (backward stable), by crba,
    nonlinear_effects and rnea_derivatives: the oracle of dqdd/dq on ill-conditioned models."""
    M = rbd.crba(model, q)
    qdd = np.linalg.solve(M, tau - rbd.nonlinear_effects(model, q, v))
    return -np.linalg.solve(M, rbd.rnea_derivatives(model, q, v, qdd)[0])


def _relative_error(actual, expected):
    return float(np.abs(actual - expected).max() / np.abs(expected).max())


def test_aba_derivatives_stay_accurate_where_m_is_ill_conditioned(backend):
    """dqdd/dq amplifies an error of qdd: taken as M^-1 (tau - h) by an explicit inverse
    (not backward stable), it lost 1e3..1e5 of accuracy (rbd_c's deep chains, 3e-7 here, and
    its batches, 1.6e-6); with a step of refinement it stays near what cond(M) allows.
    A 100-link chain with armature (M^-1 by the articulated-body sweeps on rbd_c), and a
    chain with light links (cond 2e9) batched."""
    deep = random_model(12, nlinks=100, floating_base=True, chain=True)
    deep = deep.replace(armature=np.linspace(0.0, 0.1, deep.nv))
    rng = np.random.default_rng(5)
    q, v, tau = rbd.random_configuration(deep, rng), rng.normal(size=deep.nv), rng.normal(size=deep.nv)
    assert _relative_error(rbd.aba_derivatives(deep, q, v, tau)[0], _dqdd_dq_from_a_solve(deep, q, v, tau)) < 1e-8
    light = random_model(21, nlinks=16, floating_base=True, chain=True)
    Y = np.array(light.inertias)
    Y[1::3] *= 1e-6
    light = light.replace(inertias=Y)
    Q = rbd.random_configuration(light, rng, batch=8)
    V, T = rng.normal(size=(8, light.nv)), rng.normal(size=(8, light.nv))
    batched = rbd.aba_derivatives(light, Q, V, T)[0]
    for k in range(8):
        assert _relative_error(batched[k], _dqdd_dq_from_a_solve(light, Q[k], V[k], T[k])) < 3e-7, k


@pytest.mark.parametrize("shape", ["tree", "chain", "star"])
def test_aba_derivatives_of_many_dofs(shape, backend):
    """Past one panel of the compiled product -M^-1 dtau/dx (32 columns, blocks of 8; each
    block sums over its columns' ancestors and subtrees only): a branching tree, a chain
    (dense) and a star (every block's rows apart but the root's), of 60..90 dofs (not a
    multiple of 8), single and batched, against LAPACK solves with crba of the RNEA
    derivatives at qdd."""
    nlinks = {"tree": 45, "chain": 43, "star": 61}[shape]
    model = random_model(30 + nlinks, nlinks=nlinks, floating_base=True, chain=shape == "chain")
    if shape == "star":  # every link on the root
        builder = rbd.ModelBuilder("star")
        builder.add_link("root", mass=1.0, com=np.zeros(3), inertia=np.eye(3) * 0.1)
        rng = np.random.default_rng(7)
        for n in range(nlinks):
            builder.add_link("l%d" % n, mass=rng.uniform(0.5, 2), com=rng.normal(size=3) * 0.1, inertia=np.eye(3) * 0.05)
            builder.add_joint("j%d" % n, "revolute", parent="root", child="l%d" % n,
                              origin=np.eye(4), axis=rng.normal(size=3))
        model = builder.build(floating_base=True)
    assert model.nv > 32 and model.nv % 8
    rng = np.random.default_rng(9)
    Q = rbd.random_configuration(model, rng, batch=3)
    V, T = rng.normal(size=(3, model.nv)), rng.normal(size=(3, model.nv))
    batched = rbd.aba_derivatives(model, Q, V, T)
    for k in range(3):
        M = rbd.crba(model, Q[k])
        qdd = np.linalg.solve(M, T[k] - rbd.nonlinear_effects(model, Q[k], V[k]))
        dq, dv, _ = rbd.rnea_derivatives(model, Q[k], V[k], qdd)
        expected = (-np.linalg.solve(M, dq), -np.linalg.solve(M, dv))
        single = rbd.aba_derivatives(model, Q[k], V[k], T[k])
        for j, name in enumerate(("dqdd_dq", "dqdd_dv")):
            assert _relative_error(single[j], expected[j]) < 1e-9, (name, k)
            assert _relative_error(batched[j][k], expected[j]) < 1e-9, (name, k)


def test_gravity_only_derivative_is_the_gravity_jacobian(tree, backend):
    """At v = a = 0 without fext, dtau_dq is the Jacobian of gravity(q) and dtau_dv is zero."""
    model = tree
    q = random_state(model, 4)[0]
    z = np.zeros(model.nv)
    dq, dv, _ = rbd.rnea_derivatives(model, q, z, z)
    along_q = central_difference(lambda x: rbd.gravity(model, x), q, model.nv,
                                 lambda x, e: rbd.integrate(model, x, e))
    assert_relative(dq, along_q, 1e-6, "dg/dq")
    np.testing.assert_allclose(dv, 0.0, atol=1e-12)


def test_batched_derivatives_equal_the_per_sample_results(backend):
    model = random_model(5, nlinks=7, floating_base=True)
    states = [random_state(model, s) for s in range(4)]
    q, v, a, tau, fext = (np.stack(x).reshape((2, 2) + x[0].shape) for x in zip(*states))
    for name, args in [("rnea_derivatives", (q, v, a, fext)), ("aba_derivatives", (q, v, tau, fext)),
                       ("inverse_mass_matrix", (q,))]:
        batched = getattr(rbd, name)(model, *args)
        batched = batched if isinstance(batched, tuple) else (batched,)
        for idx in np.ndindex(2, 2):
            single = getattr(rbd, name)(model, *[x[idx] for x in args])
            single = single if isinstance(single, tuple) else (single,)
            for got, expected in zip(batched, single):
                assert got.shape == (2, 2, model.nv, model.nv)
                assert_relative(got[idx], expected, 1e-13, name)


# ------------------------------------------------------------------------------------------
# Against Pinocchio on real robots
# ------------------------------------------------------------------------------------------


def robot_states(pair, count=2):
    model = pair.model
    rng = np.random.default_rng([7, sum(map(ord, pair.name))])
    for _ in range(count):
        yield (rbd.random_configuration(model, rng), rng.normal(size=model.nv), rng.normal(size=model.nv),
               rng.normal(scale=10.0, size=model.nv), rng.normal(scale=5.0, size=(model.nbodies, 6)))


def test_against_pinocchio(pair, backend):
    model, pm = pair.model, pair.pin_model
    data = pm.createData()
    for k, (q, v, a, tau, fext) in enumerate(robot_states(pair)):
        Q, V, A, T = pair.q_to_pin(q), pair.v_to_pin(v), pair.v_to_pin(a), pair.v_to_pin(tau)
        F = pair.fext_to_pin(fext)
        what = "%s state %d" % (pair.name, k)
        theirs = pin.computeRNEADerivatives(pm, data, Q, V, A, F)
        ours = rbd.rnea_derivatives(model, q, v, a, fext)
        for name, o, t in zip(("dtau_dq", "dtau_dv", "dtau_da"), ours, theirs):
            assert_relative(o, pair.matrix_from_pin(np.array(t)), 1e-9, "%s %s" % (what, name))
        theirs = pin.computeABADerivatives(pm, data, Q, V, T, F)
        ours = rbd.aba_derivatives(model, q, v, tau, fext)
        for name, o, t in zip(("dqdd_dq", "dqdd_dv", "dqdd_dtau"), ours, theirs):
            assert_relative(o, pair.matrix_from_pin(np.array(t)), 1e-9, "%s %s" % (what, name))
        Minv = pair.mass_matrix_from_pin(np.array(pin.computeMinverse(pm, data, Q)))  # upper triangle
        assert_relative(rbd.inverse_mass_matrix(model, q), Minv, 1e-9, "%s M^-1" % what)
