"""Both backends against the dense textbook oracle (tests/oracles/dense.py) on random
trees with every joint kind, fixed and floating base; and the oracle against
itself and a closed form, so that it is trusted on its own."""
import numpy as np
import pytest

import rbd

from models import random_model
from oracles import dense

SEEDS = [0, 1, 2]
REFERENCES = ("local", "world", "local_world_aligned")


def state(model, seed):
    rng = np.random.default_rng(100 + seed)
    return (rbd.reference.random_configuration(model, rng), rng.normal(size=model.nv),
            rng.normal(size=model.nv), rng.normal(scale=3.0, size=model.nv),
            rng.normal(size=(model.nbodies, 6)))


def close(actual, expected, rtol=1e-10):
    expected = np.asarray(expected, dtype=float)
    np.testing.assert_allclose(actual, expected, rtol=0, atol=rtol * max(1.0, np.abs(expected).max()))


@pytest.fixture(params=[(s, fb) for s in SEEDS for fb in (False, True)], ids=lambda p: "seed%d-%s" % (p[0], "floating" if p[1] else "fixed"))
def tree(request):
    seed, floating = request.param
    return random_model(seed, nlinks=9, floating_base=floating, nframes=2), seed


def test_dynamics_against_the_dense_oracle(tree, backend):
    model, seed = tree
    q, v, a, tau, fext = state(model, seed)
    close(rbd.forward_kinematics(model, q), dense.forward_kinematics(model, q))
    close(rbd.rnea(model, q, v, a), dense.rnea(model, q, v, a))
    close(rbd.rnea(model, q, v, a, fext=fext), dense.rnea(model, q, v, a, fext))
    close(rbd.gravity(model, q), dense.rnea(model, q, 0 * v, 0 * a))
    close(rbd.nonlinear_effects(model, q, v), dense.rnea(model, q, v, 0 * a))
    close(rbd.crba(model, q), dense.crba(model, q))
    close(rbd.aba(model, q, v, tau), dense.aba(model, q, v, tau), rtol=1e-9)
    close(rbd.aba(model, q, v, tau, fext=fext), dense.aba(model, q, v, tau, fext), rtol=1e-9)
    close(rbd.center_of_mass(model, q), dense.center_of_mass(model, q))
    close(rbd.com_jacobian(model, q), dense.com_jacobian(model, q))
    close(rbd.kinetic_energy(model, q, v), dense.kinetic_energy(model, q, v))
    close(rbd.potential_energy(model, q), dense.potential_energy(model, q))


@pytest.mark.parametrize("reference", REFERENCES)
def test_frames_against_the_dense_oracle(tree, backend, reference):
    model, seed = tree
    q, v, a, _, _ = state(model, seed)
    for frame in (model.nframes - 1, model.nframes // 2, 0):
        close(rbd.frame_placement(model, q, frame), dense.frame_placement(model, q, frame))
        close(rbd.frame_jacobian(model, q, frame, reference), dense.frame_jacobian(model, q, frame, reference))
        close(rbd.frame_velocity(model, q, v, frame, reference), dense.frame_velocity(model, q, v, frame, reference))
        close(rbd.frame_acceleration(model, q, v, a, frame, reference),
              dense.frame_acceleration(model, q, v, a, frame, reference))
        close(rbd.frame_jacobian_time_derivative(model, q, v, frame, reference),
              dense.frame_jacobian_time_derivative(model, q, v, frame, reference), rtol=1e-6)


# ------------------------------------------------------------------------------------------
# The oracle on its own
# ------------------------------------------------------------------------------------------
def test_oracle_is_self_consistent(tree):
    model, seed = tree
    q, v, a, tau, fext = state(model, seed)
    M = dense.crba(model, q)
    # M from CRBA = the columns of RNEA at zero velocity and gravity removed
    zero = np.zeros(model.nv)
    bias = dense.rnea(model, q, zero, zero)
    columns = np.column_stack([dense.rnea(model, q, zero, e) - bias for e in np.eye(model.nv)])
    close(M, columns)
    close(M, M.T)
    assert np.all(np.linalg.eigvalsh(M) > 0)
    # ABA inverts RNEA
    close(dense.aba(model, q, v, dense.rnea(model, q, v, a, fext), fext), a, rtol=1e-9)
    # energy: T = v^T M v / 2
    close(dense.kinetic_energy(model, q, v), 0.5 * v @ M @ v)
    # frame acceleration = J a + dJ v (finite differences of J) in every reference
    for reference in REFERENCES:
        J = dense.frame_jacobian(model, q, model.nframes - 1, reference)
        dJ = dense.frame_jacobian_time_derivative(model, q, v, model.nframes - 1, reference)
        close(dense.frame_acceleration(model, q, v, a, model.nframes - 1, reference), J @ a + dJ @ v, rtol=1e-6)


def test_oracle_pendulum_closed_form():
    b = rbd.ModelBuilder("pendulum")
    b.add_link("base")
    b.add_link("bob", mass=2.0, com=[0, 0, -0.5], inertia=np.diag([0.01, 0.01, 0.001]))
    b.add_joint("hinge", "revolute", "base", "bob", axis=(1, 0, 0))
    model = b.build()
    theta, omega, alpha = 0.7, 1.3, -0.4
    inertia_about_axis = 0.01 + 2.0 * 0.5 ** 2
    expected = inertia_about_axis * alpha + 2.0 * 9.81 * 0.5 * np.sin(theta)
    close(dense.rnea(model, np.array([theta]), np.array([omega]), np.array([alpha])), [expected])
    close(dense.crba(model, np.array([theta])), [[inertia_about_axis]])
