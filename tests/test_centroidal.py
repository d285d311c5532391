"""The centroidal momentum matrix A_G and its time variation.

Oracles: Pinocchio's ccrba / dccrba on the example-robot-data robots (fixed and
floating base); on random trees with every joint kind the identities
A_G v = centroidal_momentum, the linear rows = total mass x com_jacobian,
dA_G/dt by central differences along q(t) = q ⊕ t v, and the momentum rate
A_G a + dA_G/dt v by central differences of centroidal_momentum along the motion;
armature changes neither.
"""
import numpy as np
import pytest

import rbd
from models import random_model

from oracles.pinocchio_adapter import pin

TREES = [(seed, floating) for seed in range(3) for floating in (False, True)]
H = 1e-6


@pytest.fixture(params=TREES, ids=["tree%d-%s" % (s, "floating" if f else "fixed") for s, f in TREES])
def tree(request):
    seed, floating = request.param
    return random_model(seed, nlinks=9, floating_base=floating)


def state(model, seed=0):
    rng = np.random.default_rng([seed, model.nv])
    return rbd.random_configuration(model, rng), rng.normal(size=model.nv), rng.normal(size=model.nv)


def close(actual, expected, tol, what):
    np.testing.assert_allclose(actual, expected, rtol=0, atol=tol * max(1.0, np.abs(expected).max()), err_msg=what)


def test_identities(tree, backend):
    model = tree
    q, v, a = state(model)
    A = rbd.centroidal_momentum_matrix(model, q)
    assert A.shape == (6, model.nv)
    close(A @ v, rbd.centroidal_momentum(model, q, v), 1e-12, "A_G v = h_G")
    mass = model.inertias[:, 0].sum()
    close(A[:3], mass * rbd.com_jacobian(model, q), 1e-12, "linear rows = m J_com")
    step = lambda t: rbd.integrate(model, q, t * v)  # noqa: E731
    fd = (rbd.centroidal_momentum_matrix(model, step(H)) - rbd.centroidal_momentum_matrix(model, step(-H))) / (2 * H)
    dA = rbd.centroidal_momentum_matrix_time_variation(model, q, v)
    close(dA, fd, 1e-6, "dA_G/dt by central differences")
    # the momentum rate along q(t) = q ⊕ t v, v(t) = v + t a
    h = lambda t: rbd.centroidal_momentum(model, step(t), v + t * a)  # noqa: E731
    close(A @ a + dA @ v, (h(H) - h(-H)) / (2 * H), 1e-6, "d/dt h_G = A_G a + dA_G v")


def test_the_momentum_does_not_depend_on_where_the_robot_is(backend):
    """Momentum about the center of mass is invariant to moving the floating base far away
    (the same velocity): about the world origin its parts grow with the distance and would
    cancel to garbage (1e-2 relative at 1e12 m, a finite wrong value at 1e300 m)."""
    model = random_model(4, nlinks=9, floating_base=True)
    q, v, _ = state(model, 2)
    here = rbd.centroidal_momentum(model, q, v)
    for distance in (1e6, 1e12, 1e300):
        far = q.copy()
        far[:3] += distance
        close(rbd.centroidal_momentum(model, far, v), here, 1e-13, "moved by %g" % distance)
        close(rbd.centroidal_momentum_matrix(model, far) @ v, here, 1e-13, "A_G v moved by %g" % distance)


def test_armature_does_not_enter(tree, backend):
    q, v, _ = state(tree, 1)
    armed = tree.replace(armature=np.full(tree.nv, 0.3))
    np.testing.assert_array_equal(rbd.centroidal_momentum_matrix(armed, q), rbd.centroidal_momentum_matrix(tree, q))
    np.testing.assert_array_equal(rbd.centroidal_momentum_matrix_time_variation(armed, q, v),
                                  rbd.centroidal_momentum_matrix_time_variation(tree, q, v))


def test_massless_model_is_refused_like_centroidal_momentum(backend):
    b = rbd.ModelBuilder("massless")
    b.add_link("a")
    b.add_link("b")
    b.add_joint("j", "revolute", "a", "b")
    model = b.build()
    with pytest.raises(ValueError, match="no mass"):
        rbd.centroidal_momentum_matrix(model, np.zeros(1))
    with pytest.raises(ValueError, match="no mass"):
        rbd.centroidal_momentum_matrix_time_variation(model, np.zeros(1), np.zeros(1))




def test_against_pinocchio(pair, backend):
    model, pm = pair.model, pair.pin_model
    data = pm.createData()
    rng = np.random.default_rng([3, sum(map(ord, pair.name))])
    for k in range(2):
        q, v = rbd.random_configuration(model, rng), rng.normal(size=model.nv)
        Q, V = pair.q_to_pin(q), pair.v_to_pin(v)
        close(rbd.centroidal_momentum_matrix(model, q), pair.columns_from_pin(np.array(pin.ccrba(pm, data, Q, V))),
              1e-10, "%s state %d ccrba" % (pair.name, k))
        close(rbd.centroidal_momentum_matrix_time_variation(model, q, v),
              pair.columns_from_pin(np.array(pin.dccrba(pm, data, Q, V))), 1e-10, "%s state %d dccrba" % (pair.name, k))
