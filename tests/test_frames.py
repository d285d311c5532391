"""Frames: link frames, the joint frames after them, and ``frame_placements``.

Oracles: Pinocchio's ``updateFramePlacements`` (its BODY frames for rbd's link
frames, its JOINT frames for rbd's joint frames) on the example-robot-data robots;
each joint frame is its body's frame (``forward_kinematics``); every frame one at a
time through ``frame_placement``.
"""
import numpy as np
import pytest

import rbd
from models import random_model

from oracles.pinocchio_adapter import pin


def test_joint_frames_follow_the_link_frames(backend):
    model = random_model(4, nlinks=8, floating_base=True)
    links = model.link_frame_names
    assert model.frame_names == links + model.joint_names
    assert model.nframes == len(links) + model.nbodies
    q = rbd.random_configuration(model, np.random.default_rng(0))
    bodies = rbd.forward_kinematics(model, q)
    for i, name in enumerate(model.joint_names):
        f = model.joint_frame(name)
        assert f == model.joint_frame(i) == model.frame_id(name) == len(links) + i
        np.testing.assert_allclose(rbd.frame_placement(model, q, f), bodies[i], atol=1e-14)


def test_a_link_frame_wins_its_name_over_a_joint_frame(backend):
    b = rbd.ModelBuilder("clash")
    b.add_link("base")
    b.add_link("arm", mass=1.0, com=[0, 0, 0.2], inertia=np.eye(3) * 1e-2)
    b.add_link("elbow", mass=1.0, com=[0, 0, 0.2], inertia=np.eye(3) * 1e-2)  # a link named like a joint
    b.add_joint("elbow", "revolute", "base", "arm", origin=np.diag([1.0, 1, 1, 1]))
    b.add_joint("wrist", "revolute", "arm", "elbow", origin=np.array([[1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0.5],
                                                                      [0, 0, 0, 1.0]]))
    model = b.build()
    q = np.array([0.3, -0.4])
    link = model.frame_id("elbow")
    assert link < len(model.link_frame_names) and model.joint_frame("elbow") != link
    # the link "elbow" is the wrist joint's body; the joint frame "elbow" is the arm's
    np.testing.assert_allclose(rbd.frame_placement(model, q, "elbow"), rbd.forward_kinematics(model, q)[1], atol=1e-15)
    np.testing.assert_allclose(rbd.frame_placement(model, q, model.joint_frame("elbow")),
                               rbd.forward_kinematics(model, q)[0], atol=1e-15)


def test_frame_placements_is_every_frame_placement(backend):
    model = random_model(6, nlinks=9, floating_base=False)
    rng = np.random.default_rng(2)
    q = rbd.random_configuration(model, rng, batch=(2, 3))
    every = rbd.frame_placements(model, q)
    assert every.shape == (2, 3, model.nframes, 4, 4)
    for f in range(model.nframes):
        np.testing.assert_allclose(every[:, :, f], rbd.frame_placement(model, q, f), atol=1e-14)




def test_frame_placements_against_pinocchio(pair, backend):
    model, pm = pair.model, pair.pin_model
    data = pm.createData()
    q = rbd.random_configuration(model, np.random.default_rng(9))
    pin.framesForwardKinematics(pm, data, pair.q_to_pin(q))
    ours = rbd.frame_placements(model, q)
    for f in range(model.nframes):
        theirs = data.oMf[pair.pin_frame_id(f)].homogeneous
        np.testing.assert_allclose(ours[f], theirs, rtol=0, atol=1e-10 * max(1.0, np.abs(theirs).max()),
                                   err_msg="%s frame %s" % (pair.name, model.frame_names[f]))


@pytest.mark.parametrize("kind, axis", [("revolute", (1.0, 0.0, 0.0)), ("revolute", (0.0, 1.0, 0.0)),
                                        ("revolute", (0.0, 0.0, 1.0)), ("planar", (0.0, 0.0, 1.0))])
def test_a_turn_about_a_basis_axis_moves_only_the_other_two_axes(backend, kind, axis):
    """A revolute joint about x, y or z (and a planar joint at x = y = 0, about z) places its
    body at P Rot(axis, q), SciPy's rotation, and leaves P's column along the axis and P's
    origin exactly as they were: the compiled turn takes those places as p + 0, which is
    exact only while nothing in P is scaled or rounded.  The placements' entries span many
    magnitudes, with exact zeros and negative zeros among them."""
    from scipy.spatial.transform import Rotation
    k = int(np.argmax(axis))
    rotations = [Rotation.from_rotvec([0.3, -1.1, 0.7]).as_matrix(),
                 np.array([[1.0, 0.0, -0.0], [0.0, -0.0, -1.0], [-0.0, 1.0, 0.0]]),  # a quarter turn about x
                 Rotation.from_rotvec([1e-9, 0.0, 2.0]).as_matrix()]
    origins = [[0.1, -0.2, 0.3], [-0.0, 3e-310, 1e150], [-7.5e11, 0.0, -1e-200]]
    for rotation in rotations:
        for origin in origins:
            P = np.eye(4)
            P[:3, :3], P[:3, 3] = rotation, origin
            b = rbd.ModelBuilder("turn")
            b.add_link("base")
            b.add_link("arm", mass=1.0, com=[0.0, 0.0, 0.1], inertia=np.eye(3) * 1e-2)
            b.add_joint("j", kind, "base", "arm", origin=P, axis=axis)
            model = b.build()
            for angle in (0.0, 0.4, -2.9, np.pi, 1e5 + 0.25):
                q = np.array([0.0, 0.0, angle]) if kind == "planar" else np.array([angle])
                placement = rbd.forward_kinematics(model, q)[0]
                expected = rotation @ Rotation.from_rotvec(angle * np.array(axis)).as_matrix()
                np.testing.assert_allclose(placement[:3, :3], expected, rtol=0, atol=1e-15)
                np.testing.assert_array_equal(placement[:3, k], rotation[:, k])
                np.testing.assert_array_equal(placement[:3, 3], origin)
                np.testing.assert_array_equal(placement[3], [0.0, 0.0, 0.0, 1.0])
