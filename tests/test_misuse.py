"""Numeric edges and bad input: the right answer or the same clear error on both backends.

Each expected value here is derived independently: a huge or tiny quaternion must
act as its unit direction (compared with the unit quaternion's result), a model
whose leaf has no inertia has no forward dynamics (its mass matrix is singular,
checked with NumPy), and a transform is rigid or not by construction.  The fuzz
test at the end draws arrays of every dtype, layout and shape through every
algorithm with a fixed seed and asks only that both backends agree.
"""
import numpy as np
import pytest

import rbd

from conftest import HAVE_COMPILED, rbd_c_threads
from models import algorithm_calls, random_model, two_sliders_model

needs_compiled = pytest.mark.skipif(not HAVE_COMPILED, reason="rbd_c is not built")


def outcome(f, *args, **kwargs):
    """("ok", result) or ("error", type, message) of one call."""
    try:
        return ("ok", f(*args, **kwargs))
    except Exception as exc:  # noqa: BLE001 - the outcome itself is compared
        return ("error", type(exc), str(exc))


def assert_same_outcome(name, args, kwargs=None, atol=1e-12):
    """Both backends give the same result (to atol, relative to its size) or the
    same exception type and message; a crash would end the test run."""
    kwargs = kwargs or {}
    if not HAVE_COMPILED:
        return
    import rbd_c
    ref = outcome(getattr(rbd.reference, name), *args, **kwargs)
    com = outcome(getattr(rbd_c, name), *args, **kwargs)
    assert ref[0] == com[0], (name, ref, com)
    if ref[0] == "ok":
        r, c = np.asarray(ref[1]), np.asarray(com[1])
        assert r.shape == c.shape, (name, r.shape, c.shape)
        np.testing.assert_allclose(c, r, rtol=0, atol=atol * max(1.0, np.abs(r).max(initial=0.0)))
    else:
        assert ref[1:] == com[1:], (name, ref, com)
    return ref


@pytest.fixture(scope="module")
def tree():
    return random_model(3, nlinks=10, floating_base=True)


# ------------------------------------------------------------------------------------------
# Quaternions of any norm read as their direction
# ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("norm", [1e-11, 1e-9, 1e90, 1e155, 1e300])
def test_quaternions_of_any_size_act_as_their_direction(backend, tree, norm, rng):
    q = rbd.random_configuration(tree, rng=rng)
    v = rng.normal(size=tree.nv)
    scaled = q.copy()
    for k in tree.quaternion_q_idx:
        scaled[k:k + 4] *= norm
    np.testing.assert_allclose(rbd.forward_kinematics(tree, scaled), rbd.forward_kinematics(tree, q), atol=1e-12)
    np.testing.assert_allclose(rbd.crba(tree, scaled), rbd.crba(tree, q), atol=1e-10)
    for reference in ("local", "world", "local_world_aligned"):
        np.testing.assert_allclose(rbd.frame_jacobian(tree, scaled, tree.nframes - 1, reference),
                                   rbd.frame_jacobian(tree, q, tree.nframes - 1, reference), atol=1e-12)
    np.testing.assert_allclose(rbd.normalize(tree, scaled), rbd.normalize(tree, q), atol=1e-14)
    np.testing.assert_allclose(rbd.integrate(tree, scaled, v), rbd.integrate(tree, q, v), atol=1e-12)
    np.testing.assert_allclose(rbd.difference(tree, scaled, q), np.zeros(tree.nv), atol=1e-9)


def test_near_zero_quaternion_is_an_error_on_both_backends(tree):
    """Each of the tree's quaternions (its free joint's and its ball joints'), alone, in a
    single call and in one sample of a batch."""
    assert len(tree.quaternion_q_idx) >= 2
    for k in tree.quaternion_q_idx:
        for tiny in (0.0, 1e-13, 1e-200):
            q = rbd.neutral(tree)
            q[k:k + 4] = tiny
            ref = assert_same_outcome("rnea", (tree, q, np.zeros(tree.nv), np.zeros(tree.nv)))
            batch = np.stack([rbd.neutral(tree), q, rbd.neutral(tree)])
            ref_batch = assert_same_outcome("rnea", (tree, batch, np.zeros((3, tree.nv)), np.zeros((3, tree.nv))))
            if HAVE_COMPILED:
                assert ref[0] == "error" and "must not be zero" in ref[2]
                assert ref_batch[0] == "error" and "must not be zero" in ref_batch[2]


# ------------------------------------------------------------------------------------------
# Overflow: a clear error, never NaN
# ------------------------------------------------------------------------------------------
def test_overflowing_inputs_raise_instead_of_returning_nan(backend):
    model = rbd.sample_model("arm7")
    q = rbd.neutral(model)
    huge = np.full(model.nv, 1e154)
    for f, args in [(rbd.rnea, (model, q, huge, np.zeros(model.nv))),
                    (rbd.nonlinear_effects, (model, q, huge)),
                    (rbd.kinetic_energy, (model, q, huge * 1e100)),
                    (rbd.rnea, (model, q, huge[None].repeat(3, axis=0), np.zeros((3, model.nv)))),
                    (rbd.integrate, (rbd.sample_model("quadruped"), rbd.neutral(rbd.sample_model("quadruped")),
                                     np.full(rbd.sample_model("quadruped").nv, 1e308)))]:
        with pytest.raises(ValueError, match="too large for float64"):
            f(*args)


def test_a_bad_sample_in_a_batch_is_named_by_its_index(backend):
    """In a batch of 1000, the one bad sample: the message gives its index (a zero
    quaternion at sample 517, a NaN at v[3, 2])."""
    model = rbd.sample_model("quadruped")
    Q = rbd.random_configuration(model, rng=0, batch=1000)
    Q[517, 3:7] = 0.0
    z = np.zeros((1000, model.nv))
    with pytest.raises(ValueError, match=r"q\[517, 3:7\] is the quaternion of a joint and must not be zero"):
        rbd.rnea(model, Q, z, z)
    V = z.copy()
    V[3, 2] = np.nan
    with pytest.raises(ValueError, match=r"v must contain only finite numbers \(found NaN or inf at v\[3, 2\]\)"):
        rbd.rnea(model, Q[:10], V[:10], z[:10])


def test_an_overflowing_mass_matrix_is_the_overflow_error_not_a_singular_joint(backend):
    """A prismatic coordinate of 1e160 makes the inertias overflow: the articulated pivots
    come out inf - inf, which the singularity test reads as a massless link; the forward
    dynamics say overflow instead, as rnea and crba do (single and batched)."""
    model = random_model(3, nlinks=9, floating_base=True)
    prismatic = [i for i, k in enumerate(model.joint_kinds) if k == int(rbd.JointKind.PRISMATIC)]
    assert prismatic
    q = rbd.random_configuration(model, np.random.default_rng(1))
    q[model.q_idx[prismatic[0]]] = 1e160
    ones = np.ones(model.nv)
    with pytest.raises(ValueError, match="too large for float64"):
        rbd.crba(model, q)
    for f, args in [(rbd.aba, (q, ones, ones)), (rbd.inverse_mass_matrix, (q,)), (rbd.aba_derivatives, (q, ones, ones)),
                    (rbd.aba, (np.stack([rbd.neutral(model), q]), ones, ones))]:
        with pytest.raises(ValueError, match="too large for float64") as info:
            f(model, *args)
        assert not isinstance(info.value, rbd.SingularModelError), f.__name__


@pytest.mark.parametrize("reference", ["local", "world"])
@pytest.mark.parametrize("shape", ["branch", "chain"])
def test_an_overflowing_frame_jacobian_raises(backend, reference, shape):
    """A frame Jacobian that overflows is an error on both backends, through both of the
    compiled kernel's walks (a foot's branch of a tree; the whole pass when the frame's chain
    is most of a deep chain), single and in a batch: the free joint's columns overflow.
    (The compiled kernel takes some columns from the difference of two translations, not
    each about the world's origin: revolute joints about a basis axis in local and
    local_world_aligned axes, the free joint in local_world_aligned ones; those of a robot
    1e308 m away can stay finite.)"""
    if shape == "branch":
        model = rbd.sample_model("quadruped")
    else:
        model = random_model(5, nlinks=8, floating_base=True, chain=True)
    q = rbd.random_configuration(model, np.random.default_rng(1))
    q[:3] = [1.5e308, -1.5e308, 1.5e308]  # finite, but no frame's columns are
    batch = np.stack([rbd.neutral(model), q, rbd.neutral(model)])
    for x in (q, batch):
        with pytest.raises(ValueError, match="too large for float64"):
            rbd.frame_jacobian(model, x, model.nframes - 1, reference)
    assert np.isfinite(rbd.frame_jacobian(model, batch[0], model.nframes - 1, reference)).all()


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("name", ["rnea", "nonlinear_effects", "aba", "rnea_derivatives"])
def test_one_overflowing_sample_in_a_batch_is_an_error(backend, name, threads):
    """Only the last sample of a batch overflows (after several SIMD blocks, and split over
    two threads where the batch is long enough): the overflow error on both backends."""
    model = rbd.sample_model("arm7")
    n = 2001 if threads == 2 else 13
    q = np.repeat(rbd.neutral(model)[None], n, axis=0)
    v = np.zeros((n, model.nv))
    v[-1] = 1e154
    args = (model, q, v) if name == "nonlinear_effects" else (model, q, v, np.zeros((n, model.nv)))
    previous = rbd_c_threads(threads)
    try:
        with pytest.raises(ValueError, match=r"too large for float64 arithmetic \(overflow\) in sample %d of the "
                                             r"batch$" % (n - 1)):
            getattr(rbd, name)(*args)
    finally:
        rbd_c_threads(previous)


@pytest.mark.parametrize("name", ["rnea", "center_of_mass", "integrate", "joint_torque_regressor"])
def test_the_overflowing_sample_of_a_batch_is_named(backend, name):
    """A batch of 4 x 5 whose samples [2, 3] and [3, 1] overflow (a prismatic coordinate, or
    a velocity, near 1e308; the base 1.7e308 m away for the center of mass): the error names
    [2, 3], the first, on both backends (their kernels, and the NumPy compositions)."""
    model = random_model(3, nlinks=9, floating_base=True)
    prismatic = [i for i, k in enumerate(model.joint_kinds) if k == int(rbd.JointKind.PRISMATIC)]
    q = rbd.random_configuration(model, np.random.default_rng(2), batch=(4, 5))
    v = np.zeros((4, 5, model.nv))
    for s in ((2, 3), (3, 1)):
        if name == "center_of_mass":
            q[s + (0,)] = 1.7e308
        elif name == "rnea":
            v[s] = 1e160
        else:
            q[s + (model.q_idx[prismatic[0]],)] = 1.7e308  # (q + v overflows)
            v[s + (model.v_idx[prismatic[0]],)] = 1.7e308
    args = {"rnea": (q, v, v), "center_of_mass": (q,), "integrate": (q, v), "joint_torque_regressor": (q, v, v)}
    with pytest.raises(ValueError, match=r"\(overflow\) in sample \[2, 3\] of the batch$"):
        getattr(rbd, name)(model, *args[name])


def test_the_regressors_first_overflowing_sample_is_named_whichever_body_overflows(backend):
    """Sample [2, 1] overflows first (a first-joint velocity of 1e160), [2, 3] later (every
    velocity 1e154) but in the terms of a body nearer the root: the NumPy regressor, built body
    by body, named the sample where the first body's own terms overflowed ([2, 3])."""
    model = rbd.sample_model("arm7")
    q = np.tile(rbd.random_configuration(model, rng=0), (3, 4, 1))
    v, a = np.zeros((3, 4, 7)), np.zeros((3, 4, 7))
    v[2, 3] = 1e154
    v[2, 1, 0] = 1e160
    for s in ((2, 1), (2, 3)):  # each overflows alone
        with pytest.raises(rbd.ResultOverflow):
            rbd.joint_torque_regressor(model, q[s], v[s], a[s])
    with pytest.raises(rbd.ResultOverflow, match=r"\(overflow\) in sample \[2, 1\] of the batch$"):
        rbd.joint_torque_regressor(model, q, v, a)
    with pytest.raises(rbd.ResultOverflow, match=r"\(overflow\) in sample 9 of the batch$"):  # a flat batch
        rbd.joint_torque_regressor(model, q.reshape(12, 7), v.reshape(12, 7), a.reshape(12, 7))


@pytest.mark.parametrize("name", ["constrained_dynamics", "impulse_dynamics", "joint_torque_regressor"])
def test_composed_algorithms_that_overflow_are_the_overflow_error(backend, name):
    """The contact dynamics and the regressor, composed from the other algorithms on the
    NumPy backend, raise the overflow error as the compiled kernels do (they returned NaN
    and inf): a torque or a velocity of 1.7e308, a prismatic coordinate of 1e200."""
    model = rbd.sample_model("quadruped")
    q, z = rbd.neutral(model), np.zeros(model.nv)
    huge = np.full(model.nv, 1.7e308)
    foot = [rbd.Contact(model.frame_names[-1])]
    if name == "constrained_dynamics":
        call = lambda: rbd.constrained_dynamics(model, q, z, huge, foot)  # noqa: E731
    elif name == "impulse_dynamics":
        call = lambda: rbd.impulse_dynamics(model, q, huge, foot)  # noqa: E731
    else:
        model = random_model(3, nlinks=9, floating_base=True)
        prismatic = [i for i, k in enumerate(model.joint_kinds) if k == int(rbd.JointKind.PRISMATIC)]
        q, z = rbd.neutral(model), np.ones(model.nv)
        q[model.q_idx[prismatic[0]]] = 1e200
        call = lambda: rbd.joint_torque_regressor(model, q, z, z)  # noqa: E731
    with pytest.raises(ValueError, match=r"too large for float64 arithmetic \(overflow\)$"):
        call()


@pytest.mark.parametrize("mimic", [False, True])
def test_no_call_returns_inf_or_nan_for_finite_inputs(backend, mimic):
    """Every algorithm and composition, a velocity, acceleration, torque or external force
    scaled to 1e154..1e307 one at a time: a finite result or the overflow error, never an inf
    or NaN, nor another argument's error (an overflowing intermediate passed on as 'a')."""
    model = rbd.sample_model("arm7")
    if mimic:
        model = rbd.couple_joints(model, [("joint7", "joint6", 2.0, 0.1)])
    rng = np.random.default_rng(7)
    q, q1 = rbd.random_configuration(model, rng), rbd.random_configuration(model, rng)
    state = {"v": rng.normal(size=model.nv), "a": rng.normal(size=model.nv), "tau": rng.normal(size=model.nv),
             "fext": rng.normal(size=(model.nbodies, 6))}
    tool = [rbd.Contact("tool0")]
    for which in state:
        for scale in (1e154, 1e155, 1e160, 1e300, 1e306, 1e307):
            s = dict(state, **{which: state[which] * scale})
            calls = algorithm_calls(q, s["v"], s["a"], s["tau"], s["fext"], q1, ["tool0"]) + [
                ("constrained_dynamics", (q, s["v"], s["tau"], tool), {"fext": s["fext"]}),
                ("impulse_dynamics", (q, s["v"], tool), {}), ("joint_torque_regressor", (q, s["v"], s["a"]), {})]
            for name, args, kwargs in calls:
                try:
                    result = getattr(rbd, name)(model, *args, **kwargs)
                except ValueError as exc:
                    assert "(overflow)" in str(exc), (name, which, scale, str(exc))
                    continue
                for r in result if isinstance(result, tuple) else (result,):
                    assert np.isfinite(r).all(), (name, which, scale)


@pytest.mark.parametrize("frame, reference, error", [
    ("no_such_frame", "local", "unknown frame 'no_such_frame'"), ("tip", "bogus", "reference must be"),
    (5, "local", "frame index 5 out of range"), (None, "local", "frame must be a name")])
def test_a_model_without_dofs_still_checks_frames(backend, frame, reference, error):
    """On a model whose joints are all fixed (nv = 0) every frame call checks its frame and
    reference as on any model (the kinematic Hessian, with no column to compute, did not)."""
    builder = rbd.ModelBuilder("static")
    builder.add_link("base", mass=1.0, inertia=np.eye(3))
    builder.add_link("tip", mass=1.0, inertia=np.eye(3))
    builder.add_joint("weld", "fixed", "base", "tip")
    model = builder.build()
    q = v = np.zeros(0)
    calls = [lambda: rbd.kinematic_hessian(model, q, frame, reference),
             lambda: rbd.frame_jacobian(model, q, frame, reference),
             lambda: rbd.frame_velocity(model, q, v, frame, reference),
             lambda: rbd.frame_velocity_derivatives(model, q, v, frame, reference),
             lambda: rbd.frame_jacobian_time_derivative(model, q, v, frame, reference)]
    for call in calls:
        with pytest.raises((ValueError, TypeError), match=error):
            call()


@pytest.mark.parametrize("batch, error", [("3", TypeError), (True, TypeError), (2.5, TypeError),
                                          ((2, "a"), TypeError), (-1, ValueError), ((2, -3), ValueError)])
def test_a_bad_batch_of_random_configurations(backend, batch, error):
    """A batch that is not made of ints is a TypeError (strings and bools too, as for every
    argument); a negative size a ValueError."""
    with pytest.raises(error, match="batch must be a non-negative int or a tuple of them"):
        rbd.random_configuration(rbd.sample_model("arm7"), rng=0, batch=batch)


def test_overflow_error_is_the_same_on_both_backends():
    model = rbd.sample_model("arm7")
    q = rbd.neutral(model)
    ref = assert_same_outcome("rnea", (model, q, np.full(model.nv, 1e154), np.zeros(model.nv)))
    if HAVE_COMPILED:
        assert ref[0] == "error"


# ------------------------------------------------------------------------------------------
# Singular forward dynamics names the joint
# ------------------------------------------------------------------------------------------
def massless_leaf_model(kind):
    """A 1 kg pendulum with a massless link behind a joint of ``kind``."""
    b = rbd.ModelBuilder("leaf")
    b.add_link("base")
    b.add_link("arm", mass=1.0, com=[0, 0, -0.5], inertia=np.diag([0.01, 0.01, 0.001]))
    b.add_link("finger")
    b.add_joint("shoulder", "revolute", "base", "arm", axis=(1, 0, 0))
    b.add_joint("finger_joint", kind, "arm", "finger", axis=(0, 0, 1) if kind == "planar" else (0, 1, 0))
    return b.build()


@pytest.mark.parametrize("kind", ["revolute", "prismatic", "spherical", "planar", "floating"])
def test_massless_leaf_makes_forward_dynamics_raise_naming_the_joint(backend, kind):
    model = massless_leaf_model(kind)
    q = rbd.neutral(model)
    z = np.zeros(model.nv)
    # The premise, checked independently: the mass matrix is singular.
    assert np.linalg.matrix_rank(rbd.crba(model, q)) < model.nv
    with pytest.raises(rbd.SingularModelError, match="finger_joint"):
        rbd.aba(model, q, z, z)
    with pytest.raises(rbd.SingularModelError, match="finger_joint"):
        rbd.aba(model, np.stack([q, q]), np.zeros((2, model.nv)), np.zeros((2, model.nv)))
    # what is built on M^-1 too
    with pytest.raises(rbd.SingularModelError, match="finger_joint"):
        rbd.inverse_mass_matrix(model, q)
    with pytest.raises(rbd.SingularModelError, match="finger_joint"):
        rbd.aba_derivatives(model, np.stack([q, q]), np.zeros((2, model.nv)), np.zeros((2, model.nv)))
    assert issubclass(rbd.SingularModelError, ValueError)


def test_a_singular_joint_behind_which_a_link_has_a_negative_moment_says_so(backend):
    """A leaf whose inertia about the hinge is negative (-0.01; the load warns about it)
    makes the pivot negative: the singular-joint error names that link as a likely cause,
    and a massless leaf's error (nothing unphysical behind it) does not."""
    b = rbd.ModelBuilder("negative")
    b.add_link("base", mass=1.0, com=(0, 0, 0), inertia=np.eye(3))
    b.add_link("leaf", mass=1.0, com=(0, 0, 0), inertia=np.diag([1.0, 1.0, -0.01]))
    b.add_link("tip", mass=0.1, com=(0, 0, 0), inertia=np.eye(3) * 1e-3)
    b.add_joint("hinge", "revolute", parent="base", child="leaf", axis=(0, 0, 1))
    b.add_joint("weld", "fixed", parent="leaf", child="tip")
    with pytest.warns(UserWarning, match="physically inconsistent inertia.*'leaf'"):
        model = b.build(floating_base=False)
    assert rbd.crba(model, rbd.neutral(model))[0, 0] < 0  # (the premise: a negative pivot)
    z = np.zeros(model.nv)
    with pytest.raises(rbd.SingularModelError, match="'hinge'.*the inertia of body 'leaf' behind it .* is physically inconsistent"):
        rbd.aba(model, rbd.neutral(model), z, z)
    with pytest.raises(rbd.SingularModelError) as massless:
        rbd.aba(massless_leaf_model("revolute"), np.zeros(2), np.zeros(2), np.zeros(2))
    assert "inconsistent" not in str(massless.value)


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("first, later", [("hinge1", "hinge2"), ("hinge2", "hinge1")])
def test_a_batch_names_the_joint_of_its_first_singular_sample(backend, threads, first, later):
    """Sample 40 is singular at one hinge, samples 1000 on at the other: the batch's error
    is the one sample 40 raises alone, on both backends and on one thread or two (the
    two threads' first failures were taken in thread order, NumPy's in joint order)."""
    model = two_sliders_model()
    n = 2000
    rng = np.random.default_rng(8)
    q = np.stack([rbd.random_configuration(model, rng) for _ in range(n)])
    v, tau = rng.standard_normal((2, n, model.nv))
    slider = {name: model.q_idx[model.joint_names.index(name.replace("hinge", "slide"))] for name in (first, later)}
    q[40, slider[first]] = 0.0
    q[1000:, slider[later]] = 0.0
    with pytest.raises(rbd.SingularModelError, match="'%s'" % first):
        rbd.aba(model, q[40], v[40], tau[40])  # (the premise: sample 40 alone)
    with pytest.raises(rbd.SingularModelError, match="'%s'" % later):
        rbd.aba(model, q[1500], v[1500], tau[1500])
    overflowing = v.copy()
    overflowing[3] = 1e200  # (an earlier sample whose result overflows: still the singular error)
    with pytest.raises(ValueError, match="too large for float64"):
        rbd.aba(model, q[3], overflowing[3], tau[3])
    previous = rbd_c_threads(threads)
    try:
        for call, expected, sample in ((lambda: rbd.aba(model, q, v, tau), first, 40),
                                       (lambda: rbd.inverse_mass_matrix(model, q), first, 40),
                                       (lambda: rbd.aba_derivatives(model, q, v, tau), first, 40),
                                       (lambda: rbd.aba(model, q[::-1], v, tau), later, 0),  # (reversed: 1999 first)
                                       (lambda: rbd.aba(model, q, overflowing, tau), first, 40)):
            with pytest.raises(rbd.SingularModelError) as info:
                call()
            assert "'%s' in sample %d of the batch:" % (expected, sample) in str(info.value)
    finally:
        rbd_c_threads(previous)


@pytest.mark.parametrize("threads", [1, 2])
def test_a_singular_sample_before_an_overflowing_one_is_named_by_its_index(backend, threads):
    """A batch of (4, 5): sample [1, 2] singular, a later one's mass matrix overflowing (a
    slider 1e160 out).  The error is the singular sample's, with its index; the overflow
    test looks at that sample's configuration, not the batch's (which overflows)."""
    model = two_sliders_model()
    rng = np.random.default_rng(11)
    q = np.stack([rbd.random_configuration(model, rng) for _ in range(20)]).reshape(4, 5, model.nq)
    v, tau = rng.standard_normal((2, 4, 5, model.nv))
    slide1, slide2 = (model.q_idx[model.joint_names.index(name)] for name in ("slide1", "slide2"))
    q[1, 2, slide1] = 0.0
    q[3, 1, slide2] = 1e160
    with pytest.raises(ValueError, match="too large for float64"):
        rbd.inverse_mass_matrix(model, q[3, 1])  # (the premise: that sample alone overflows)
    previous = rbd_c_threads(threads)
    try:
        for call in (lambda: rbd.aba(model, q, v, tau), lambda: rbd.inverse_mass_matrix(model, q),
                     lambda: rbd.aba_derivatives(model, q, v, tau)):
            with pytest.raises(rbd.SingularModelError, match=r"'hinge1' in sample \[1, 2\] of the batch:"):
                call()
    finally:
        rbd_c_threads(previous)


def test_tiny_but_real_inertia_is_not_singular(backend):
    """A light finger is not a massless one: its dynamics is well defined."""
    b = rbd.ModelBuilder("light")
    b.add_link("base")
    b.add_link("arm", mass=10.0, com=[0, 0, -0.5], inertia=np.diag([0.1, 0.1, 0.01]))
    b.add_link("finger", mass=1e-3, com=[0, 0, 0.01], inertia=np.diag([1e-8, 1e-8, 1e-8]))
    b.add_joint("shoulder", "revolute", "base", "arm", axis=(1, 0, 0))
    b.add_joint("finger_joint", "revolute", "arm", "finger", axis=(0, 1, 0))
    model = b.build()
    q = np.array([0.3, -0.2])
    v = np.array([0.5, 1.0])
    tau = np.array([1.0, 1e-4])
    qdd = rbd.aba(model, q, v, tau)
    np.testing.assert_allclose(rbd.rnea(model, q, v, qdd), tau, atol=1e-12)


def test_a_gram_part_on_a_ten_tonne_crane_is_not_singular(backend):
    """Singularity is judged against the scale of what a joint moves: a 1 g part (pivot
    4e-9 kg m^2) on a 10 t boom (entries 1e5) is well posed (M is diagonal here), and was
    refused against the crane's scale. Oracles: rnea (M qdd + h = tau), a LAPACK solve with
    crba, and M M^-1 = I; a massless part stays singular."""
    def crane(sensor_mass, sensor_inertia):
        b = rbd.ModelBuilder("crane")
        b.add_link("base")
        b.add_link("boom", mass=1e4, com=[3.0, 0, 0], inertia=np.diag([1e3, 3e4, 3e4]))
        b.add_link("sensor", mass=sensor_mass, com=[0.002, 0, 0], inertia=sensor_inertia)
        b.add_joint("slew", "revolute", "base", "boom", axis=[0, 0, 1])
        b.add_joint("tilt", "revolute", "boom", "sensor", origin=pose_x(6.0), axis=[0, 1, 0])
        return b.build()

    def pose_x(x):
        T = np.eye(4)
        T[0, 3] = x
        return T

    model = crane(1e-3, np.diag([1e-10, 1e-10, 1e-10]))
    q, v, a = np.array([0.3, 0.2]), np.array([0.1, -0.2]), np.array([0.5, 1.0])
    tau = rbd.rnea(model, q, v, a)
    M = rbd.crba(model, q)
    np.testing.assert_allclose(rbd.aba(model, q, v, tau), a, rtol=1e-9)
    np.testing.assert_allclose(rbd.aba(model, q, v, tau), np.linalg.solve(M, tau - rbd.nonlinear_effects(model, q, v)),
                               rtol=1e-9)
    np.testing.assert_allclose(rbd.inverse_mass_matrix(model, q) @ M, np.eye(2), atol=1e-9)
    np.testing.assert_allclose(rbd.aba_derivatives(model, q, v, tau)[2], rbd.inverse_mass_matrix(model, q), rtol=1e-12)
    massless = crane(0.0, np.zeros((3, 3)))
    with pytest.raises(rbd.SingularModelError, match="'tilt'"):
        rbd.aba(massless, q, v, tau)


# ------------------------------------------------------------------------------------------
# Arguments of the wrong kind
# ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("not_a_model", ["arm7", None, 3, object()])
def test_not_a_model_is_the_same_type_error(not_a_model):
    for name, args in [("rnea", (np.zeros(7), np.zeros(7), np.zeros(7))), ("crba", (np.zeros(7),)),
                       ("frame_placement", (np.zeros(7), 0)), ("neutral", ()),
                       ("center_of_mass", (np.zeros(7),))]:
        for impl in [rbd.reference] + ([__import__("rbd_c")] if HAVE_COMPILED else []):
            with pytest.raises(TypeError, match="model must be an rbd.Model, got"):
                getattr(impl, name)(not_a_model, *args)


def test_a_batch_too_large_for_memory_names_the_call_on_both_backends():
    """A batch whose outputs (or input copies) cannot be allocated: the MemoryError names the
    call, the model and the batch on both backends, not only an array's shape."""
    import os
    import subprocess
    import sys
    code = """
import resource, sys
resource.setrlimit(resource.RLIMIT_AS, (3 << 29, 3 << 29))
import numpy as np, rbd
rbd.set_backend(sys.argv[1])
m = rbd.sample_model("arm7")
Q = np.broadcast_to(rbd.neutral(m), (2 ** 26, m.nq))
V = np.broadcast_to(np.zeros(m.nv), (2 ** 26, m.nv))
for call in (lambda: rbd.rnea(m, Q, V, V), lambda: rbd.frame_jacobian(m, Q, "tool0"),
             lambda: rbd.crba(m, Q), lambda: rbd.kinematic_hessian(m, Q, "tool0"),
             lambda: rbd.joint_torque_regressor(m, Q, V, V),
             lambda: rbd.rnea(m, Q[:, None], V[None, :2 ** 5], V[None, :2 ** 5])):  # a batch q and v broadcast to
    try:
        call()
        print("no error")
    except MemoryError as exc:
        print(str(exc).split(" ran out of memory")[0])
"""
    for backend in ["numpy"] + (["cython"] if HAVE_COMPILED else []):
        env = dict(os.environ, OPENBLAS_NUM_THREADS="1")  # (its threads' buffers count against the limit)
        run = subprocess.run([sys.executable, "-c", code, backend], capture_output=True, text=True, timeout=120,
                             env=env)
        assert run.returncode == 0, run.stderr[-2000:]
        lines = run.stdout.splitlines()
        assert lines == ["%s on a model of 7 bodies and 7 dofs, a batch of 67108864 samples," % name
                         for name in ("rnea", "frame_jacobian", "crba", "kinematic_hessian",
                                      "joint_torque_regressor")] + [
            "rnea on a model of 7 bodies and 7 dofs, a batch of %d samples," % 2 ** 31], (backend, lines)


def test_a_random_configuration_batch_too_large_for_memory_names_batch():
    model = rbd.sample_model("arm7")
    for batch in (2 ** 62, (2 ** 31, 2 ** 31)):
        with pytest.raises(ValueError, match="batch .* is too large for memory"):
            rbd.random_configuration(model, batch=batch)
    assert rbd.random_configuration(model, batch=(0, 3)).shape == (0, 3, 7)


def test_a_call_without_its_arguments_names_the_function(backend):
    """A missing argument is a TypeError that names the public function, not a wrapper
    (the NumPy backend's said '_public.<locals>.algorithm()')."""
    import inspect
    names = [n for n in dir(rbd) if not n.startswith("_") and callable(getattr(rbd, n))
             and not inspect.isclass(getattr(rbd, n))]
    assert {"rnea", "crba", "center_of_mass", "constrained_dynamics", "frame_jacobian"} <= set(names)
    for name in names:
        try:
            getattr(rbd, name)()
        except TypeError as exc:
            assert str(exc).startswith(name + "()"), (name, str(exc))


def test_massless_model_centroidal_quantities_fail_alike():
    b = rbd.ModelBuilder("massless")
    b.add_link("a")
    b.add_link("b")
    b.add_joint("j", "revolute", "a", "b", axis=(0, 0, 1))
    model = b.build()
    for name, args in [("centroidal_momentum", ([0.1], [0.2])), ("center_of_mass", ([0.1],)),
                       ("com_jacobian", ([0.1],))]:
        ref = assert_same_outcome(name, (model,) + args)
        if HAVE_COMPILED:
            assert ref[0] == "error" and "no mass" in ref[2]


def test_batch_dimension_limit(backend):
    model = rbd.sample_model("arm7")
    q = rbd.neutral(model)
    ok = q.reshape((1,) * 16 + (model.nq,))
    assert rbd.crba(model, ok).shape == (1,) * 16 + (model.nv, model.nv)
    for ndim in (17, 33, 40):
        with pytest.raises(ValueError, match="q has %d batch dimensions; at most 16" % ndim):
            rbd.crba(model, q.reshape((1,) * ndim + (model.nq,)))
        with pytest.raises(ValueError, match="batch has %d dimensions; at most 16" % ndim):
            rbd.random_configuration(model, rng=0, batch=(1,) * ndim)


def test_batch_dimension_limits_agree():
    if not HAVE_COMPILED:
        pytest.skip("rbd_c is not built")
    from rbd._checks import MAX_BATCH_DIMS
    import rbd_c
    M = np.eye(4).reshape((1,) * (MAX_BATCH_DIMS + 1) + (4, 4))
    for impl in (rbd.spatial, rbd_c):
        with pytest.raises(ValueError, match="at most %d" % MAX_BATCH_DIMS):
            impl.se3_inverse(M)


def test_messages_do_not_quote_values_at_length(backend):
    model = rbd.sample_model("arm7")
    q = rbd.neutral(model)
    for call in (lambda: rbd.frame_placement(model, q, "x" * 100000),
                 lambda: rbd.frame_jacobian(model, q, 0, reference="y" * 100000)):
        with pytest.raises(ValueError) as err:
            call()
        assert len(str(err.value)) < 1000


# ------------------------------------------------------------------------------------------
# SE(3) functions refuse matrices that are not rigid transforms
# ------------------------------------------------------------------------------------------
TRANSFORM_CALLS = {
    "se3_inverse": lambda S, M: S.se3_inverse(M),
    "se3_log": lambda S, M: S.se3_log(M),
    "se3_compose_A": lambda S, M: S.se3_compose(M, np.eye(4)),
    "se3_compose_B": lambda S, M: S.se3_compose(np.eye(4), M),
    "se3_act_point": lambda S, M: S.se3_act_point(M, np.ones(3)),
    "act_motion": lambda S, M: S.act_motion(M, np.ones(6)),
    "inv_act_motion": lambda S, M: S.inv_act_motion(M, np.ones(6)),
    "act_force": lambda S, M: S.act_force(M, np.ones(6)),
    "inv_act_force": lambda S, M: S.inv_act_force(M, np.ones(6)),
    "adjoint": lambda S, M: S.adjoint(M),
    "inertia_act": lambda S, M: S.inertia_act(M, np.array([1.0, 0, 0, 0, 1, 0, 0, 1, 0, 1])),
    "inertia_inv_act": lambda S, M: S.inertia_inv_act(M, np.array([1.0, 0, 0, 0, 1, 0, 0, 1, 0, 1])),
}


def bad_transforms():
    """Matrices that are no rigid transform, each for its own reason."""
    scaled = np.diag([2.0, 1.0, 1.0, 1.0])
    reflected = np.diag([1.0, 1.0, -1.0, 1.0])
    sheared = np.eye(4)
    sheared[0, 1] = 0.3
    projective = np.eye(4)
    projective[3, 0] = 0.5
    batch = np.stack([np.eye(4), np.eye(4), scaled])  # one bad item in a batch
    return {"scaled": scaled, "reflected": reflected, "sheared": sheared, "projective": projective,
            "batch": batch}


@pytest.mark.parametrize("call", sorted(TRANSFORM_CALLS))
@pytest.mark.parametrize("bad", sorted(bad_transforms()))
def test_non_rigid_transforms_are_refused(spatial_impl, call, bad):
    M = bad_transforms()[bad]
    with pytest.raises(ValueError, match="must be a rigid transform"):
        TRANSFORM_CALLS[call](spatial_impl, M)


@pytest.mark.parametrize("call", sorted(TRANSFORM_CALLS))
def test_rigid_transforms_with_round_off_pass(spatial_impl, call, rng):
    from models import random_pose
    M = random_pose(rng)
    M[:3, :3] *= 1.0 + 1e-9  # round-off in a computed transform
    TRANSFORM_CALLS[call](spatial_impl, M)


_HUGE_INERTIA = np.array([2.0, 0.2, 0.1, -0.1, 1.0, 0.01, 0.02, 1.2, 0.03, 0.9])
_FAR = np.eye(4)
_FAR[:3, 3] = 1e308


@pytest.mark.parametrize("call", [
    lambda S: S.se3_exp(np.array([0.0, 0.0, 0.0, 1e200, 0.0, 0.0])),  # rotation angle 1e200
    lambda S: S.se3_compose(_FAR, _FAR),  # translations of 1e308 added
    lambda S: S.inertia10_to_mass_com(_HUGE_INERTIA * 1e300),
    lambda S: S.inertia_cross_term(_HUGE_INERTIA, np.arange(1.0, 7.0) * 1e300),
    lambda S: S.inertia_apply(_HUGE_INERTIA * 1e300, np.arange(1.0, 7.0) * 1e10),
    lambda S: S.motion_cross(np.full(6, 1e200), np.full(6, 1e200)),
    lambda S: S.inertia10_from_mass_com(1e300, np.full(3, 1e200), np.eye(3)),
    lambda S: S.act_motion(np.diag([1.0, 1.0, 1.0, 1.0]) + np.pad(np.full((3, 1), 1e300), ((0, 1), (3, 0))),
                           np.full(6, 1e10)),
], ids=["se3_exp angle", "se3_compose", "inertia10_to_mass_com", "inertia_cross_term", "inertia_apply",
        "motion_cross", "inertia10_from_mass_com", "act_motion"])
def test_spatial_results_that_overflow_are_the_overflow_error(spatial_impl, call):
    """Finite inputs whose result is not finite in float64: the same ValueError on both
    backends (an inf from one and a NaN from the other before)."""
    with pytest.raises(ValueError, match=r"not finite .* \(overflow\)"):
        call(spatial_impl)


def test_rotations_that_overflow_are_the_overflow_error():
    with pytest.raises(ValueError, match=r"not finite .* \(overflow\)"):
        rbd.rotations.so3_exp([1e200, 0.0, 0.0])
    np.testing.assert_allclose(rbd.rotations.so3_exp([np.pi, 0.0, 0.0]), np.diag([1.0, -1.0, -1.0]), atol=1e-15)


# ------------------------------------------------------------------------------------------
# Fuzz: every dtype, layout and shape through every algorithm, same outcome on both backends
# ------------------------------------------------------------------------------------------
def _variants(x, rng):
    """Ways a caller may hand over the array x (valid or not)."""
    yield x
    yield x.tolist()
    for dtype in (np.float16, np.float32, np.int64, np.uint8, np.bool_, np.complex128, object, str):
        yield x.astype(dtype)
    yield np.asfortranarray(np.stack([x, x], axis=-1))[..., 0]  # non-contiguous
    yield x[::-1][::-1]                                         # negative strides (a view)
    ro = x.copy()
    ro.setflags(write=False)
    yield ro
    yield np.ma.masked_array(x, mask=np.zeros(x.shape, bool))
    yield x[..., :-1]                                           # too short
    yield np.concatenate([x, x[..., :1]], axis=-1)              # too long
    yield np.stack([x, x, x])                                   # a batch
    yield np.broadcast_to(x, (2, 3) + x.shape)                  # a broadcast batch
    yield x[None][:0]                                           # an empty batch
    yield np.float64(1.0)                                       # 0-d
    bad = x.copy()
    bad.flat[rng.integers(x.size)] = np.nan
    yield bad


@pytest.mark.parametrize("seed", range(3))
def test_fuzz_arrays_through_every_algorithm(seed):
    if not HAVE_COMPILED:
        pytest.skip("rbd_c is not built")
    rng = np.random.default_rng(seed)
    model = random_model(seed, nlinks=6, floating_base=bool(seed % 2), nframes=1)
    state = {"q": rbd.random_configuration(model, rng=rng), "q1": rbd.random_configuration(model, rng=rng),
             "v": rng.normal(size=model.nv), "a": rng.normal(size=model.nv), "tau": rng.normal(size=model.nv),
             "fext": rng.normal(size=(model.nbodies, 6))}
    # The calls with the argument names as placeholders, one frame in the single reference "local".
    calls = [c for c in algorithm_calls("q", "v", "a", "tau", "fext", "q1", [model.nframes - 1])
             if c[2].get("reference", "local") == "local"]
    for name, args, kwargs in calls:
        slots = [("arg", k) for k, x in enumerate(args) if isinstance(x, str)]
        slots += [("kw", key) for key, x in kwargs.items() if x == "fext"]
        for where, key in slots:
            marker = args[key] if where == "arg" else kwargs[key]
            for variant in _variants(state[marker], rng):
                call_args = [state[x] if isinstance(x, str) else x for x in args]
                call_kwargs = {k: state[x] if x == "fext" else x for k, x in kwargs.items()}
                if where == "arg":
                    call_args[key] = variant
                else:
                    call_kwargs[key] = variant
                assert_same_outcome(name, (model, *call_args), call_kwargs, atol=1e-9)


_EMPTY_SAMPLES = r"""
import json, sys
import numpy as np
import rbd
sys.path.insert(0, sys.argv[2])
from models import algorithm_calls
rbd.set_backend(sys.argv[1])
builder = rbd.ModelBuilder("welded")
builder.add_link("base", mass=1.0, inertia=np.eye(3))
model = builder.build()  # nq = nv = 0: every sample is empty
Q = np.empty((2 ** 40, 0))
fext = np.empty((2 ** 40, 0, 6))
calls = algorithm_calls(Q, Q, Q, Q, fext, Q, [0])
calls += [("contact_jacobian", (Q, []), {}), ("constrained_dynamics", (Q, Q, Q, []), {}),
          ("impulse_dynamics", (Q, Q, []), {}), ("kinematic_hessian", (Q, 0), {}),
          ("joint_torque_regressor", (Q, Q, Q), {})]
outcomes = []
for name, args, kwargs in calls:
    try:
        result = getattr(rbd, name)(model, *args, **kwargs)
        outcomes.append([name, [list(r.shape) for r in (result if isinstance(result, tuple) else (result,))]])
    except (MemoryError, ValueError) as exc:  # a non-empty result of 2**40 samples; no mass
        outcomes.append([name, type(exc).__name__])
print(json.dumps(outcomes))
"""


def test_a_huge_batch_of_empty_samples_returns_at_once():
    """A 0-dof model's batch of 2**40 samples holds no data: each call returns its empty
    result (or cannot allocate a non-empty one) at once, the same on both backends,
    instead of looping over the samples (NumPy's matmul and solvers would too)."""
    import json
    import subprocess
    import sys
    from pathlib import Path
    backends = ["numpy"] + (["cython"] if HAVE_COMPILED else [])
    seen = {}
    for backend in backends:
        run = subprocess.run([sys.executable, "-c", _EMPTY_SAMPLES, backend, str(Path(__file__).parent)],
                             capture_output=True, text=True, timeout=120)
        assert run.returncode == 0, run.stderr[-2000:]
        seen[backend] = json.loads(run.stdout)
    for name, outcome in seen["numpy"]:
        if isinstance(outcome, list):
            assert all(shape[0] == 2 ** 40 and 0 in shape[1:] for shape in outcome), (name, outcome)
    assert len(seen["numpy"]) > 40
    if "cython" in seen:
        assert seen["cython"] == seen["numpy"]


@pytest.mark.parametrize("call", [
    lambda path: rbd.load_urdf(path, floating_base="no"),
    lambda path: rbd.load_urdf(path, mimic="False"),
    lambda path: rbd.load_urdf(path, strict=None),
    lambda path: rbd.load_urdf(path, floating_base=1),
    lambda path: rbd.sample_model("arm7", mimic="yes"),
], ids=["floating_base='no'", "mimic='False'", "strict=None", "floating_base=1", "sample mimic='yes'"])
def test_yes_no_arguments_take_booleans_only(call):
    """floating_base="no" would read as True and add a free flyer without a word."""
    with pytest.raises(TypeError, match="must be True or False"):
        call(rbd.sample_model_path("arm7"))
    assert rbd.load_urdf(rbd.sample_model_path("arm7"), floating_base=np.bool_(True)).nv == 13


def test_numbers_given_as_strings_are_refused(backend):
    model = rbd.sample_model("quadruped")
    q, zero = rbd.neutral(model), np.zeros(model.nv)
    feet = [rbd.Contact("FL_foot", 3), rbd.Contact("HR_foot", 3)]
    with pytest.raises(TypeError, match="regularization must be a real number, got .0."):
        rbd.constrained_dynamics(model, q, zero, zero, feet, regularization="0")
    with pytest.raises(TypeError, match="restitution must be a real number"):
        rbd.impulse_dynamics(model, q, zero, feet, restitution=" 1 ")
    with pytest.raises(TypeError, match="multiplier must be a real number, got '2'"):
        rbd.couple_joints(rbd.sample_model("arm7"), [("joint2", "joint3", "2", 0.0)])


def test_a_coupling_that_overflows_is_the_overflow_error(backend):
    """The couplings' products (G^T M G, its solve) can overflow where the full model
    does not: the same error as any overflow, not an inf or NaN with a warning."""
    model = rbd.couple_joints(rbd.sample_model("arm7"), [("joint2", "joint3", 1e300, 0.0)])
    q, v = np.full(model.nq, 0.1), np.ones(model.nv)
    for call in (lambda: rbd.crba(model, q), lambda: rbd.inverse_mass_matrix(model, q),
                 lambda: rbd.aba(model, q, 0 * v, 0 * v), lambda: rbd.rnea(model, q, v, v)):
        with pytest.raises(ValueError, match="not finite"):
            call()


def test_numbers_beyond_float64_name_the_argument(backend):
    model = rbd.sample_model("arm7")
    with pytest.raises(ValueError, match="q holds a number too large for float64"):
        rbd.crba(model, [10 ** 400] + [0] * 6)
    q = np.zeros(7, dtype=np.longdouble)
    q[0] = np.longdouble("1e400")
    if np.isfinite(q[0]):  # (where long double is wider than float64)
        with pytest.raises(ValueError, match="q holds a number too large for float64"):
            rbd.crba(model, q)


@pytest.mark.parametrize("contacts", [None, 3, "FL_foot", {"FL_foot"}], ids=["None", "int", "str", "set"])
def test_contacts_must_be_an_ordered_collection(backend, contacts):
    """A set has no order, and the force rows follow the contacts' order."""
    model = rbd.sample_model("quadruped")
    q, zero = rbd.neutral(model), np.zeros(model.nv)
    if contacts == {"FL_foot"}:
        contacts = {rbd.Contact("FL_foot", 3), rbd.Contact("HR_foot", 3)}
    with pytest.raises(TypeError, match="contacts must be a list or tuple of rbd.Contact"):
        rbd.constrained_dynamics(model, q, zero, zero, contacts)


def test_one_contact_alone_is_a_list_of_one_and_a_stray_item_is_named(backend):
    """A bare rbd.Contact is the list of that contact (the same answer, as documented); a
    list holding something else names its index."""
    model = rbd.sample_model("quadruped")
    q, zero = rbd.neutral(model), np.zeros(model.nv)
    foot = rbd.Contact("FL_foot", 3)
    for function, args in ((rbd.constrained_dynamics, (q, zero, zero)), (rbd.impulse_dynamics, (q, zero)),
                           (rbd.contact_jacobian, (q,))):
        alone, listed = function(model, *args, foot), function(model, *args, [foot])
        np.testing.assert_array_equal(np.hstack(alone), np.hstack(listed))
        with pytest.raises(TypeError, match=r"contacts must be a list of rbd.Contact, got str at contacts\[1\]"):
            function(model, *args, [foot, "HR_foot"])


def test_lock_joints_names_a_missing_joint_list():
    model = rbd.sample_model("quadruped")
    with pytest.raises(TypeError, match="joints must be a joint"):
        rbd.lock_joints(model, None, rbd.neutral(model))
    assert rbd.lock_joints(model, {"FL_knee", "FR_knee"}, rbd.neutral(model)).nv == model.nv - 2  # (order-free)


def test_random_configuration_within_limits_of_any_size_and_its_rng_argument(backend):
    builder = rbd.ModelBuilder("rail")
    builder.add_link("base")
    builder.add_link("cart", mass=1.0, inertia=np.eye(3))
    builder.add_joint("slide", "prismatic", "base", "cart", axis=(1, 0, 0), lower=-1e308, upper=1e308)
    model = builder.build()
    q = rbd.random_configuration(model, 0, batch=200)  # (upper - lower overflows)
    assert np.all(np.isfinite(q)) and np.all(np.abs(q) <= 1e308) and q.min() < -5e307 and q.max() > 5e307
    with pytest.raises(ValueError, match="rng must be a numpy.random.Generator, a non-negative seed or None, got -1"):
        rbd.random_configuration(model, rng=-1)
    with pytest.raises(TypeError, match="rng must be a numpy.random.Generator.*got True"):
        rbd.random_configuration(model, rng=True)  # (NumPy would seed with 1)


def test_the_batch_a_memory_error_names_is_the_states_not_fext_s_bodies():
    from rbd._checks import batch_words
    q, fext = np.zeros(7), np.zeros((7, 6))
    assert batch_words([("q", q), ("fext", fext)]) == ""  # a single call: its fext's 7 bodies are no batch
    assert batch_words([("q", q), ("fext", np.zeros((5, 7, 6)))]) == ", a batch of 5 samples,"
    assert batch_words([("q", np.zeros((4, 1, 7))), ("v", np.zeros((3, 7))), ("fext", fext)]) == \
        ", a batch of 12 samples,"


def test_an_unknown_name_suggests_the_closest_and_lists_links_first():
    model = rbd.sample_model("arm7")
    with pytest.raises(ValueError, match=r"unknown frame 'tool' \(did you mean 'tool0'\? known: 'base_link', 'link1'"):
        model.frame_id("tool")
    with pytest.raises(ValueError, match=r"unknown joint 'joint9' \(did you mean 'joint7'"):
        rbd.lock_joints(model, ["joint9"], rbd.neutral(model))
    with pytest.raises(ValueError, match=r"unknown frame 'zzz' \(known: 'base_link'"):
        rbd.frame_placement(model, rbd.neutral(model), "zzz")


def test_masked_scalar_options_and_bytes_joints_are_type_errors(backend):
    """A masked number as a scalar option (regularization, restitution, a coupling's
    multiplier) is refused as masked arrays are (np.ma.masked was read as nan, a value
    whose mask was unset as its data); bytes as lock_joints' joints are not a list of
    indices (b"\\x02\\x03" locked joints 3 and 4)."""
    quad = rbd.sample_model("quadruped")
    q = rbd.random_configuration(quad, rng=2)
    v, tau = np.ones(quad.nv), np.ones(quad.nv)
    feet = [rbd.Contact("FL_foot"), rbd.Contact("FR_foot")]
    for masked in (np.ma.masked_array(1e-3), np.ma.masked_array(0.5, mask=True), np.ma.masked):
        with pytest.raises(TypeError, match="regularization is a masked array"):
            rbd.constrained_dynamics(quad, q, v, tau, feet, regularization=masked)
        with pytest.raises(TypeError, match="restitution is a masked array"):
            rbd.impulse_dynamics(quad, q, v, feet, restitution=masked)
        with pytest.raises(TypeError, match="multiplier is a masked array"):
            rbd.couple_joints(rbd.sample_model("arm7"), [("joint7", "joint6", masked, 0.0)])
    arm = rbd.sample_model("arm7")
    for joints in (b"joint3", b"\x02\x03", bytearray(b"\x02")):
        with pytest.raises(TypeError, match="joints must be a joint"):
            rbd.lock_joints(arm, joints, rbd.neutral(arm))


def test_a_boolean_inside_a_list_is_a_type_error_as_a_boolean_array_is(backend):
    """NumPy reads [True, 0.5] as [1.0, 0.5]: a list (or a nested list, or a tuple) holding a
    boolean among numbers is refused as a boolean array is, on every argument that takes an
    array (it was read as 1.0)."""
    model = rbd.sample_model("arm7")
    with pytest.raises(TypeError, match="q must be an array of real numbers, got a list holding a boolean"):
        rbd.crba(model, [True, 0, 0, 0, 0, 0, 0])
    with pytest.raises(TypeError, match="got a list holding a boolean"):
        rbd.rnea(model, [[0.1] * 7, [np.False_] + [0.1] * 6], np.zeros(7), np.zeros(7))
    with pytest.raises(TypeError, match="twist must be an array of real numbers, got a tuple holding a boolean"):
        rbd.spatial.se3_exp((0.0, 0.0, 0.0, 0.0, 0.0, True))
    with pytest.raises(TypeError, match="got a list holding a boolean"):  # a boolean array inside a list
        rbd.crba(model, [np.array(True), 0, 0, 0, 0, 0, 0])
    holding_itself = [0.1] * 7
    holding_itself.append(holding_itself)
    with pytest.raises(TypeError, match="q must be an array of real numbers"):  # (not a walk without end)
        rbd.crba(model, holding_itself)
    assert rbd.crba(model, [0.1] * 7).shape == (7, 7)  # numbers alone, as ever
