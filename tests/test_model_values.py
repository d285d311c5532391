"""Models are values: read-only for good, derived with ``replace`` and ``add_payload``,
pickled and compared by content, with one private cache that is never rebuilt."""
import copy
import multiprocessing as mp
import pickle
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import rbd

from conftest import HAVE_COMPILED
from models import random_model

SOURCE_ROOT = str(Path(rbd.__file__).resolve().parent.parent)
ARRAYS = ("parents", "joint_kinds", "joint_axes", "joint_placements", "inertias", "frame_parents",
          "frame_offsets", "joint_nq", "joint_nv", "q_idx", "v_idx", "lower_limits", "upper_limits",
          "velocity_limits", "effort_limits", "gravity", "armature", "damping", "friction",
          "quaternion_q_idx")
SCALARS = ("name", "nq", "nv", "nbodies", "nframes", "joint_names", "body_names", "frame_names")


@pytest.fixture
def model():
    return random_model(5, nlinks=8, floating_base=True)


@pytest.mark.parametrize("attribute", ARRAYS + SCALARS + ("_cache", "anything_new"))
def test_attributes_cannot_be_set_or_deleted(model, attribute):
    with pytest.raises(AttributeError, match="immutable"):
        setattr(model, attribute, 1)
    with pytest.raises(AttributeError, match="immutable"):
        delattr(model, attribute)


@pytest.mark.parametrize("attribute", ARRAYS)
def test_arrays_stay_read_only(model, attribute):
    arr = getattr(model, attribute)
    assert not arr.flags.writeable
    with pytest.raises(ValueError):
        arr.setflags(write=True)
    with pytest.raises(ValueError):
        arr[...] = 0


@pytest.mark.parametrize("mimic", [False, True])
def test_every_array_a_model_gives_stays_read_only(model, mimic):
    """Every public attribute that is an array (or a tuple of arrays: coupling_entries),
    found by walking the model's attributes, not by a list that a new one could miss;
    the coupling arrays were read-only but could be made writeable."""
    if mimic:
        model = rbd.couple_joints(rbd.sample_model("arm7"), [("joint3", "joint2", 0.5, 0.1)])
    found = 0
    for name in dir(model):
        if name.startswith("_"):
            continue
        value = getattr(model, name)
        for arr in value if isinstance(value, tuple) else (value,):
            if isinstance(arr, np.ndarray):
                found += 1
                with pytest.raises(ValueError):
                    arr.setflags(write=True)
    assert found > len(ARRAYS)


def test_names_are_tuples(model):
    for attribute in ("joint_names", "body_names", "frame_names"):
        assert isinstance(getattr(model, attribute), tuple)
    assert not any(isinstance(v, (list, dict, set)) for k, v in vars(model).items() if not k.startswith("_"))


@pytest.mark.skipif(not HAVE_COMPILED, reason="rbd_c is not built")
def test_reassigning_nv_cannot_corrupt_the_compiled_path():
    code = """
import numpy as np, rbd
rbd.set_backend("cython")
m = rbd.sample_model("arm7")
try:
    m.nv = 1
except AttributeError:
    pass
print(rbd.rnea(m, rbd.neutral(m), np.zeros(7), np.zeros(7)).shape)
"""
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                            cwd=SOURCE_ROOT)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "(7,)"


def test_caches_are_built_once(model, backend):
    """A second call must reuse what the first built (a rebuild per call was once a
    silent 46x slowdown)."""
    q = rbd.neutral(model)
    rbd.rnea(model, q, np.zeros(model.nv), np.zeros(model.nv))
    rbd.frame_jacobian(model, q, 0)
    rbd.integrate(model, q, np.zeros(model.nv))
    cache = model._cache
    kept = (cache.compiled, cache.bodies, cache.frames, cache.joint_table)
    assert any(x is not None for x in kept)
    for _ in range(3):
        rbd.rnea(model, q, np.zeros(model.nv), np.zeros(model.nv))
        rbd.frame_jacobian(model, q, 0)
        rbd.integrate(model, q, np.zeros(model.nv))
    assert all(a is b for a, b in zip(kept, (cache.compiled, cache.bodies, cache.frames, cache.joint_table)))


# ------------------------------------------------------------------------------------------
# Derived models
# ------------------------------------------------------------------------------------------
def pendulum(mass=2.0, length=0.5):
    b = rbd.ModelBuilder("pendulum")
    b.add_link("base")
    b.add_link("arm", mass=mass, com=[0, 0, -length], inertia=np.diag([0.01, 0.01, 0.001]))
    b.add_joint("hinge", "revolute", "base", "arm", axis=(1, 0, 0))
    return b.build()


def test_replace_gravity_reaches_every_backend_and_leaves_the_original(backend):
    model = pendulum()
    theta = np.array([0.4])
    rbd.gravity(model, theta)  # builds the caches of the original
    moon = model.replace(gravity=[0.0, 0.0, -1.62])
    # m g l sin(theta) about the hinge, for each gravity
    np.testing.assert_allclose(rbd.gravity(moon, theta), [2.0 * 1.62 * 0.5 * np.sin(0.4)], rtol=1e-12)
    np.testing.assert_allclose(rbd.gravity(model, theta), [2.0 * 9.81 * 0.5 * np.sin(0.4)], rtol=1e-12)
    assert moon != model and moon.replace(gravity=model.gravity) == model


def test_replace_inertias(backend):
    model = pendulum()
    heavier = model.replace(inertias=model.inertias * 3.0)
    theta = np.array([0.7])
    np.testing.assert_allclose(rbd.gravity(heavier, theta), 3.0 * rbd.gravity(model, theta), rtol=1e-12)
    np.testing.assert_allclose(rbd.crba(heavier, theta), 3.0 * rbd.crba(model, theta), rtol=1e-12)


def test_replace_validates():
    model = pendulum()
    with pytest.raises(TypeError, match="unexpected keyword.*mass"):
        model.replace(mass=3.0)
    with pytest.raises(ValueError, match="inertias must have shape"):
        model.replace(inertias=np.zeros((2, 10)))
    with pytest.raises(ValueError, match="negative mass"):
        model.replace(inertias=-model.inertias)
    with pytest.raises(ValueError, match="armature must be non-negative"):
        model.replace(armature=[-1.0])
    with pytest.raises(ValueError, match="armature must have shape"):
        model.replace(armature=[1.0, 2.0])
    assert np.array_equal(model.replace(armature=[0.3]).armature, [0.3])
    assert np.array_equal(model.armature, [0.0])


def test_add_payload_equals_a_fixed_link_merged_by_the_builder(backend, rng):
    from models import random_inertia
    base = random_model(11, nlinks=6, floating_base=True)
    frame = base.link_frame_names[-1]  # a tool frame, placed away from its body's origin
    mass, com, inertia = random_inertia(rng)
    loaded = rbd.add_payload(base, frame, mass, com, inertia)
    # Independently: the same tree with the payload as a link fixed at that frame,
    # merged into the body by the builder's parallel-axis code.
    rebuilt = random_model(11, nlinks=6, floating_base=True, payload=(frame, mass, com, inertia))
    q = rbd.random_configuration(base, rng=rng)
    v, a = rng.normal(size=base.nv), rng.normal(size=base.nv)
    np.testing.assert_allclose(rbd.crba(loaded, q), rbd.crba(rebuilt, q), atol=1e-12)
    np.testing.assert_allclose(rbd.rnea(loaded, q, v, a), rbd.rnea(rebuilt, q, v, a), atol=1e-10)
    assert not np.allclose(rbd.crba(loaded, q), rbd.crba(base, q))


def test_add_payload_errors():
    model = pendulum()
    with pytest.raises(ValueError, match="unknown frame"):
        rbd.add_payload(model, "nowhere", 1.0, [0, 0, 0], np.eye(3) * 1e-3)
    with pytest.raises(ValueError, match="fixed to the world"):
        rbd.add_payload(model, "base", 1.0, [0, 0, 0], np.eye(3) * 1e-3)
    with pytest.raises(ValueError, match="negative"):
        rbd.add_payload(model, "arm", -1.0, [0, 0, 0], np.eye(3) * 1e-3)


# ------------------------------------------------------------------------------------------
# Pickling, copying, equality
# ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("protocol", range(pickle.HIGHEST_PROTOCOL + 1))
def test_pickle_round_trip(model, protocol, backend):
    q = rbd.random_configuration(model, rng=3)
    v = np.linspace(-1, 1, model.nv)
    tau = rbd.rnea(model, q, v, v)
    other = pickle.loads(pickle.dumps(model, protocol=protocol))
    assert other == model and hash(other) == hash(model) and other is not model
    assert all(not getattr(other, k).flags.writeable for k in ARRAYS)
    np.testing.assert_array_equal(rbd.rnea(other, q, v, v), tau)


def test_copies_are_the_same_value(model):
    assert copy.copy(model) == model and copy.deepcopy(model) == model
    assert model != random_model(6, nlinks=8, floating_base=True)
    assert model != "a model"


def _rnea_in_child(args):
    model, q, v = args
    return rbd.rnea(model, q, v, v)


def test_models_cross_process_boundaries():
    model = random_model(9, nlinks=5, floating_base=True)
    q = rbd.random_configuration(model, rng=1, batch=4)
    v = np.ones((4, model.nv))
    expected = rbd.rnea(model, q, v, v)
    with mp.get_context("spawn").Pool(1) as pool:
        got = pool.map_async(_rnea_in_child, [(model, q[k], v[k]) for k in range(4)]).get(timeout=120)
    np.testing.assert_allclose(np.array(got), expected, atol=1e-12)


def _definition(model, **changes):
    nl = len(model.link_frame_names)
    arguments = dict(name=model.name, parents=model.parents, joint_kinds=model.joint_kinds,
                     joint_axes=model.joint_axes, joint_placements=model.joint_placements, inertias=model.inertias,
                     joint_names=model.joint_names, body_names=model.body_names,
                     frame_names=model.link_frame_names, frame_parents=model.frame_parents[:nl],
                     frame_offsets=model.frame_offsets[:nl], lower_limits=model.lower_limits,
                     upper_limits=model.upper_limits, velocity_limits=model.velocity_limits,
                     effort_limits=model.effort_limits)
    arguments.update(changes)
    return arguments


def _changed(array, index, value):
    array = np.array(array)
    array[index] = value
    return array


@pytest.mark.parametrize("change, error, match", [
    (lambda m: {"parents": m.parents + 0.5}, TypeError, "parents must hold integers"),
    (lambda m: {"joint_kinds": m.joint_kinds + 0.25}, TypeError, "joint_kinds must hold integers"),
    (lambda m: {"joint_placements": _changed(m.joint_placements, (2, 0, 0), 2.0)}, ValueError,
     "joint_placements must be a rigid transform"),
    (lambda m: {"joint_placements": _changed(m.joint_placements, (2, 3, 0), 0.5)}, ValueError,
     "joint_placements must be a rigid transform"),
    (lambda m: {"joint_kinds": _changed(m.joint_kinds, 3, int(rbd.JointKind.REVOLUTE)),
                "joint_axes": _changed(m.joint_axes, 3, (0.0, 0.0, 2.0))}, ValueError, r"joint_axes\[3\].*unit vector"),
    (lambda m: {"joint_kinds": _changed(m.joint_kinds, 3, int(rbd.JointKind.REVOLUTE_X)),
                "joint_axes": _changed(m.joint_axes, 3, (0.0, 0.0, 1.0))}, ValueError,
     r"joint_axes\[3\].*must be \[1.0, 0.0, 0.0\] for kind REVOLUTE_X"),
    (lambda m: {"inertias": _changed(m.inertias, (1, 0), -1.0)}, ValueError, "non-negative masses"),
    (lambda m: {"inertias": _changed(m.inertias, (1, 5), np.nan)}, ValueError, "finite"),
    (lambda m: {"lower_limits": _changed(m.lower_limits, 0, np.nan)}, ValueError, "lower <= upper"),
    (lambda m: {"lower_limits": _changed(m.lower_limits, 0, 3.0), "upper_limits": _changed(m.upper_limits, 0, 2.0)},
     ValueError, "lower <= upper"),
    (lambda m: {"velocity_limits": _changed(m.velocity_limits, 0, -1.0)}, ValueError, "velocity_limits must be non"),
    (lambda m: {"joint_names": ("joint1",) * 7}, ValueError, "joint_names must be unique: 'joint1'"),
    (lambda m: {"frame_offsets": _changed(m.frame_offsets[:len(m.link_frame_names)], (0, 1, 1), 3.0)}, ValueError,
     "frame_offsets must be a rigid transform"),
], ids=["float parents", "float kinds", "scaled placement", "projective placement", "axis of norm 2",
        "axis not the kind's", "negative mass", "NaN inertia", "NaN limit", "lower > upper", "negative velocity limit", "same names",
        "scaled frame"])
def test_the_constructor_refuses_what_the_algorithms_cannot_use(change, error, match):
    """rbd.Model(...) builds a model from arrays: anything the algorithms would read wrongly
    (or the two backends differently) is refused, as the builder and loaders refuse it."""
    arm = rbd.sample_model("arm7")
    assert rbd.Model(**_definition(arm)).nv == arm.nv  # the arrays as they are: accepted
    with pytest.raises(error, match=match):
        rbd.Model(**_definition(arm, **change(arm)))


def test_replace_with_none_is_refused_not_ignored():
    model = rbd.sample_model("arm7")
    for key in ("gravity", "inertias", "armature"):
        with pytest.raises(TypeError, match=r"replace\(%s=None\)" % key):
            model.replace(**{key: None})


@pytest.mark.parametrize("dim, error", [(3.0, TypeError), ("3", TypeError), (True, TypeError), (4, ValueError)])
def test_contact_dim_is_the_int_3_or_6(dim, error):
    with pytest.raises(error, match="Contact dim must be"):
        rbd.Contact("FL_foot", dim)
    assert rbd.Contact("FL_foot", np.int64(6)).dim == 6
