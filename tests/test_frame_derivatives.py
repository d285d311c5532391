"""frame_velocity_derivatives and frame_acceleration_derivatives, on both backends.

The oracles, none of them the code under test:

* central finite differences of ``frame_velocity`` and ``frame_acceleration``
  (themselves compared with Pinocchio in test_against_pinocchio), q stepped
  through ``integrate`` (q (+) h e_k), v and a stepped plainly, on random trees
  with every joint kind, fixed and floating base, in every reference;
* Pinocchio's ``getFrameVelocityDerivatives`` / ``getFrameAccelerationDerivatives``
  (after ``computeForwardKinematicsDerivatives``) on example-robot-data robots, to
  1e-9 relative.  In LOCAL and WORLD they are rbd's partial derivatives as they are.
  In LOCAL_WORLD_ALIGNED (Pinocchio 4.1) they are the WORLD ones moved to the frame's
  origin held still, and the acceleration is the spatial one, so rbd's are built
  from them by the chain rule: the frame's origin moves with the step (velocity
  J_lin per unit step) and the classical acceleration is the spatial one plus
  [w x p_dot; 0] (see ``pinocchio_derivatives``);
* identities between the public functions, batches against single samples, and
  the same errors from both backends for bad input.
"""
import numpy as np
import pytest

import rbd
from rbd import reference as ref

from conftest import HAVE_COMPILED
from models import REFERENCES, random_model, random_state

H = 1e-5         # finite-difference step
FD_TOL = 1e-7    # relative to the size of the derivative
PIN_TOL = 1e-9


def close(ours, expected, tol, what):
    ours, expected = np.asarray(ours), np.asarray(expected)
    scale = max(1.0, float(np.abs(expected).max(initial=0.0)))
    np.testing.assert_allclose(ours, expected, rtol=tol, atol=tol * scale, strict=True, err_msg=what)


MODELS = {"fixed": random_model(3, nlinks=12, floating_base=False),
          "floating": random_model(4, nlinks=12, floating_base=True)}


@pytest.fixture(params=sorted(MODELS))
def model(request):
    return MODELS[request.param]


def test_random_trees_have_every_joint_kind(model):
    assert set(int(k) for k in model.joint_kinds) >= {int(k) for k in rbd.JointKind}


def frames(model):
    """The tool frames, the root link (on the world when the base is fixed) and the link of
    the deepest body."""
    depth = []
    for parent in model.parents:
        depth.append(1 + (depth[parent] if parent >= 0 else 0))
    deepest = int(np.argmax(depth))
    return ["tool0", "tool1", "tool2", model.frame_names[0], int(np.flatnonzero(model.frame_parents == deepest)[0])]


def finite_difference(f, x, n, step=lambda x, dx: x + dx):
    """Central differences of f along step(x, h e_k), k < n, as columns."""
    return np.stack([(f(step(x, H * e)) - f(step(x, -H * e))) / (2 * H) for e in np.eye(n)], axis=-1)


@pytest.mark.parametrize("reference", REFERENCES)
def test_finite_differences(model, backend, reference):
    rng = np.random.default_rng(5)
    nv = model.nv

    def step(q, dq):
        return rbd.integrate(model, q, dq)

    for _ in range(2):
        q, v, a, _, _ = random_state(model, rng)
        for frame in frames(model):
            def velocity(q, v):
                return rbd.frame_velocity(model, q, v, frame, reference=reference)

            def acceleration(q, v, a):
                return rbd.frame_acceleration(model, q, v, a, frame, reference=reference)

            expected = (finite_difference(lambda x: velocity(x, v), q, nv, step),
                        finite_difference(lambda x: acceleration(x, v, a), q, nv, step),
                        finite_difference(lambda x: acceleration(q, x, a), v, nv),
                        finite_difference(lambda x: acceleration(q, v, x), a, nv))
            what = "%s %s" % (frame, reference)
            dv_dq, dv_dv = rbd.frame_velocity_derivatives(model, q, v, frame, reference=reference)
            close(dv_dq, expected[0], FD_TOL, "dv_dq " + what)
            close(dv_dv, finite_difference(lambda x: velocity(q, x), v, nv), FD_TOL, "dv_dv " + what)
            derivatives = rbd.frame_acceleration_derivatives(model, q, v, a, frame, reference=reference)
            for name, ours, theirs in zip(("dv_dq", "da_dq", "da_dv", "da_da"), derivatives, expected):
                close(ours, theirs, FD_TOL, name + " " + what)


@pytest.mark.parametrize("reference", REFERENCES)
def test_identities(model, backend, reference):
    rng = np.random.default_rng(6)
    q, v, a, _, _ = random_state(model, rng)
    for frame in frames(model):
        what = "%s %s" % (frame, reference)
        dv_dq, dv_dv = rbd.frame_velocity_derivatives(model, q, v, frame, reference=reference)
        dv_dq2, da_dq, da_dv, da_da = rbd.frame_acceleration_derivatives(model, q, v, a, frame, reference=reference)
        J = rbd.frame_jacobian(model, q, frame, reference=reference)
        close(dv_dv, J, 1e-14, "dv_dv = J " + what)
        close(da_da, J, 1e-14, "da_da = J " + what)
        close(dv_dq2, dv_dq, 1e-14, "the same dv_dq " + what)
        # y = J(q) v: its time derivative's velocity partial is J_dot + dy/dq
        close(da_dv, rbd.frame_jacobian_time_derivative(model, q, v, frame, reference=reference) + dv_dq,
              1e-12, "da_dv = J_dot + dv_dq " + what)
        for x in (dv_dq, da_dq, da_dv, J):  # dtype, shape, a fresh writable array each
            assert x.dtype == np.float64 and x.shape == (6, model.nv) and x.flags.writeable


def test_frame_on_the_world_has_zero_derivatives(backend):
    model = MODELS["fixed"]
    q, v, a, _, _ = random_state(model, np.random.default_rng(7))
    assert model.frame_parents[0] == -1
    for reference in REFERENCES:
        dv_dq, dv_dv = rbd.frame_velocity_derivatives(model, q, v, 0, reference=reference)
        for x in (dv_dq, dv_dv) + rbd.frame_acceleration_derivatives(model, q, v, a, 0, reference=reference):
            assert np.array_equal(x, np.zeros((6, model.nv)))


@pytest.mark.parametrize("batch", [(3,), (2, 3)], ids=["3", "2x3"])
def test_batches_equal_single_samples(model, backend, batch):
    rng = np.random.default_rng(8)
    q, v, a, _, _ = random_state(model, rng, batch)
    frame = frames(model)[-1]
    for reference in REFERENCES:
        for name, args in (("frame_velocity_derivatives", (q, v)), ("frame_acceleration_derivatives", (q, v, a))):
            got = getattr(rbd, name)(model, *args, frame, reference=reference)
            for idx in np.ndindex(*batch):
                single = getattr(rbd, name)(model, *(x[idx] for x in args), frame, reference=reference)
                assert len(got) == len(single)
                for g, s in zip(got, single):
                    assert g.shape == batch + (6, model.nv)
                    close(g[idx], s, 1e-14, "%s %s %s" % (name, reference, idx))


# ------------------------------------------------------------------------------------------
# Bad input: the same error from both backends
# ------------------------------------------------------------------------------------------
def _bad_calls(model):
    q, v, a, _, _ = random_state(model, np.random.default_rng(9))
    return [
        ("frame_velocity_derivatives", (q, v, "no_such_frame"), {}),
        ("frame_velocity_derivatives", (q, v, model.nframes), {}),
        ("frame_velocity_derivatives", (q, v, "tool0"), {"reference": "global"}),
        ("frame_velocity_derivatives", (q, v, "tool0"), {"reference": None}),
        ("frame_velocity_derivatives", (q[:-1], v, "tool0"), {}),
        ("frame_velocity_derivatives", (q, v[:-1], "tool0"), {}),
        ("frame_velocity_derivatives", (q, np.full(model.nv, np.nan), "tool0"), {}),
        ("frame_acceleration_derivatives", (q, v, a, "no_such_frame"), {}),
        ("frame_acceleration_derivatives", (q, v, a, "tool0"), {"reference": "LOCAL"}),
        ("frame_acceleration_derivatives", (q, v, a[:-1], "tool0"), {}),
        ("frame_acceleration_derivatives", (np.stack([q, q]), v, np.stack([a, a, a]), "tool0"), {}),
        ("frame_acceleration_derivatives", (q, v, None, "tool0"), {}),
        ("frame_acceleration_derivatives", (q, v, a.astype(complex), "tool0"), {}),
    ]


def _error(function, model, args, kwargs):
    with pytest.raises((TypeError, ValueError)) as info:
        function(model, *args, **kwargs)
    return type(info.value), str(info.value)


@pytest.mark.skipif(not HAVE_COMPILED, reason="rbd_c is not built")
def test_bad_input_raises_the_same_error_on_both_backends(model):
    import rbd_c
    for name, args, kwargs in _bad_calls(model):
        expected = _error(getattr(ref, name), model, args, kwargs)
        assert _error(getattr(rbd_c, name), model, args, kwargs) == expected, (name, kwargs, expected)


def test_broadcast_batch_is_not_an_error(model, backend):
    """A batch of a against one q and v broadcasts as everywhere else (not a bad input)."""
    q, v, a, _, _ = random_state(model, np.random.default_rng(10))
    got = rbd.frame_acceleration_derivatives(model, q, v, np.stack([a, 2 * a]), "tool0", reference="world")
    for k, scale in enumerate((1.0, 2.0)):
        single = rbd.frame_acceleration_derivatives(model, q, v, scale * a, "tool0", reference="world")
        for g, s in zip(got, single):
            close(g[k], s, 1e-14, "sample %d" % k)


# ------------------------------------------------------------------------------------------
# Pinocchio on real robots
# ------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def pair():
    pytest.importorskip("pinocchio")
    from oracles.pinocchio_adapter import ROBOTS, load_pair
    loaded = {name: load_pair(name) for name in sorted(ROBOTS)}
    loaded = {name: p for name, p in loaded.items() if p is not None}
    if not loaded:
        pytest.skip("example-robot-data is not installed")
    return loaded


def _cross_columns(w, M):
    """w x (each column of the (3, n) M)."""
    return np.cross(w, M.T).T


def pinocchio_derivatives(p, q, v, a, frame, reference):
    """(dv_dq, da_dq, da_dv, da_da) of rbd's frame velocity and acceleration, from Pinocchio."""
    import pinocchio as pin
    pm, pd = p.pin_model, p.pin_data
    pin.computeForwardKinematicsDerivatives(pm, pd, p.q_to_pin(q), p.v_to_pin(v), p.v_to_pin(a))
    pin.updateFramePlacements(pm, pd)
    fid = p.pin_frame_id(frame)
    pin_reference = {"local": pin.LOCAL, "world": pin.WORLD, "local_world_aligned": pin.LOCAL_WORLD_ALIGNED}
    dv_dq, da_dq, da_dv, J = (p.columns_from_pin(x) for x in
                              pin.getFrameAccelerationDerivatives(pm, pd, fid, pin_reference[reference]))
    velocity_dv_dq, velocity_J = (p.columns_from_pin(x) for x in
                                  pin.getFrameVelocityDerivatives(pm, pd, fid, pin_reference[reference]))
    np.testing.assert_allclose(velocity_dv_dq, dv_dq, atol=1e-12)
    np.testing.assert_allclose(velocity_J, J, atol=1e-12)
    if reference != "local_world_aligned":
        return dv_dq, da_dq, da_dv, J
    # Pinocchio's LOCAL_WORLD_ALIGNED derivatives keep the frame's origin where it is: a step
    # moves it by J_lin, which adds w x J_lin to the linear velocity (a velocity at the point
    # p is v_o + w x p) and w_dot x J_lin to the linear spatial acceleration.
    pdot, w = J[:3] @ v, J[3:] @ v
    w_dot = pin.getFrameAcceleration(pm, pd, fid, pin.LOCAL_WORLD_ALIGNED).angular
    dv_dq = dv_dq + np.vstack([_cross_columns(w, J[:3]), np.zeros_like(J[3:])])
    da_dq = da_dq + np.vstack([_cross_columns(w_dot, J[:3]), np.zeros_like(J[3:])])
    # the classical acceleration is the spatial one plus [w x p_dot; 0]
    da_dq[:3] += -_cross_columns(pdot, dv_dq[3:]) + _cross_columns(w, dv_dq[:3])
    da_dv[:3] += -_cross_columns(pdot, J[3:]) + _cross_columns(w, J[:3])
    return dv_dq, da_dq, da_dv, J


@pytest.mark.parametrize("reference", REFERENCES)
def test_against_pinocchio(pair, backend, reference):
    for name, p in pair.items():
        rng = np.random.default_rng([11, sum(map(ord, name))])
        for k in range(2):
            q = rbd.random_configuration(p.model, rng)
            v, a = rng.normal(size=p.model.nv), rng.normal(size=p.model.nv)
            for frame in p.frames:
                what = "%s state %d %s %s" % (name, k, frame, reference)
                expected = pinocchio_derivatives(p, q, v, a, frame, reference)
                ours = rbd.frame_acceleration_derivatives(p.model, q, v, a, frame, reference=reference)
                for label, x, y in zip(("dv_dq", "da_dq", "da_dv", "da_da"), ours, expected):
                    close(x, y, PIN_TOL, label + " " + what)
                dv_dq, dv_dv = rbd.frame_velocity_derivatives(p.model, q, v, frame, reference=reference)
                close(dv_dq, expected[0], PIN_TOL, "velocity dv_dq " + what)
                close(dv_dv, expected[3], PIN_TOL, "velocity dv_dv " + what)
