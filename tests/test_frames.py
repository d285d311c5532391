"""Frames: link frames, the joint frames after them, and ``frame_placements``.

Oracles: Pinocchio's ``updateFramePlacements`` (its BODY frames for rbd's link
frames, its JOINT frames for rbd's joint frames) on the example-robot-data robots;
each joint frame is its body's frame (``forward_kinematics``); every frame one at a
time through ``frame_placement``.
"""
import numpy as np

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
