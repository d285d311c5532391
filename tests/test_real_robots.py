"""Every robot of example-robot-data loads, fixed and floating base, and its dynamics is finite.

Real robot files carry CAD round-off and small physical inconsistencies that
Pinocchio and iDynTree accept; rbd loads them too (with a warning for the
inconsistent ones, see rbd._inertia).  For a few of the robots that rbd once
refused, the loaded model is compared with Pinocchio's on the same file.
"""
import warnings
from pathlib import Path

import numpy as np
import pytest

import rbd

from oracles.pinocchio_adapter import example_robot_data_dir

ROOT = example_robot_data_dir()
URDFS = sorted(str(p.relative_to(ROOT)) for p in Path(ROOT).rglob("*.urdf")) if ROOT else []


def load_quietly(path, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # mimic joints, inconsistent inertias
        return rbd.load_urdf(path, **kwargs)


def has_links(path):
    import xml.etree.ElementTree as ET
    return ET.parse(path).getroot().find("link") is not None


@pytest.mark.skipif(not URDFS, reason="example-robot-data is not installed")
def test_the_collection_is_there():
    assert len(URDFS) >= 60


@pytest.mark.parametrize("relpath", URDFS)
def test_every_robot_loads_with_finite_dynamics(relpath, backend):
    path = ROOT / relpath
    if not has_links(path):
        with pytest.raises(rbd.URDFError, match="no <link>"):
            rbd.load_urdf(path)
        return
    for floating_base in (False, True):
        model = load_quietly(path, floating_base=floating_base)
        assert model.nframes >= 1
        if model.nv == 0:
            continue
        rng = np.random.default_rng(0)
        for q in (rbd.neutral(model), rbd.random_configuration(model, rng=rng)):
            v = rng.normal(size=model.nv)
            M = rbd.crba(model, q)
            tau = rbd.rnea(model, q, v, np.zeros(model.nv))
            assert np.all(np.isfinite(M)) and np.all(np.isfinite(tau))
            np.testing.assert_allclose(M, M.T, atol=1e-12 * max(1.0, np.abs(M).max()))


# The robots that rbd refused before its inertia policy, compared with Pinocchio.
FORMERLY_REFUSED = [
    "anymal_b_simple_description/robots/anymal.urdf",
    "go1_description/urdf/go1.urdf",
    "icub_description/robots/icub_reduced.urdf",
    "romeo_description/urdf/romeo_small.urdf",
    "allegro_hand_description/urdf/allegro_right_hand.urdf",
]


@pytest.mark.parametrize("relpath", FORMERLY_REFUSED)
def test_formerly_refused_robots_agree_with_pinocchio(relpath, backend):
    pin = pytest.importorskip("pinocchio")
    from oracles.pinocchio_adapter import ModelPair
    if ROOT is None or not (ROOT / relpath).is_file():
        pytest.skip("example-robot-data is not installed")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        pair = ModelPair(relpath, ROOT / relpath, floating_base=True, frames=())
    model = pair.model
    rng = np.random.default_rng(1)
    q = rbd.random_configuration(model, rng=rng)
    v = rng.normal(size=model.nv)
    a = rng.normal(size=model.nv)
    q_pin, v_pin, a_pin = pair.q_to_pin(q), pair.v_to_pin(v), pair.v_to_pin(a)
    tau_pin = pair.v_from_pin(pin.rnea(pair.pin_model, pair.pin_data, q_pin, v_pin, a_pin))
    M_pin = pair.matrix_from_pin(pin.crba(pair.pin_model, pair.pin_data, q_pin))
    M_pin = np.triu(M_pin) + np.triu(M_pin, 1).T
    tau = rbd.rnea(model, q, v, a)
    np.testing.assert_allclose(tau, tau_pin, atol=1e-9 * max(1.0, np.abs(tau_pin).max()))
    np.testing.assert_allclose(rbd.crba(model, q), M_pin, atol=1e-9 * max(1.0, np.abs(M_pin).max()))


def test_strict_mode_refuses_an_inconsistent_real_robot():
    if ROOT is None:
        pytest.skip("example-robot-data is not installed")
    path = ROOT / "romeo_description/urdf/romeo_small.urdf"
    with pytest.raises(rbd.URDFError, match="inconsistent inertia.*ShoulderYaw"):
        rbd.load_urdf(path, strict=True)
    with pytest.warns(UserWarning, match="inconsistent inertia"):
        rbd.load_urdf(path)
