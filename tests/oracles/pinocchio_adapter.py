"""Pinocchio as an independent oracle for rbd, on real robots.

The same URDF file of ``example-robot-data`` is loaded by ``rbd.load_urdf`` and
by ``pinocchio.buildModelFromUrdf`` (no meshes).  The two libraries order and
store things differently, so every conversion lives here, in the test layer,
and never in rbd:

* joints are matched by name (the free flyer is ``root_joint`` in both);
  Pinocchio's joint order need not be rbd's depth-first-in-file order
  (urdfdom sorts sibling joints), so velocity-space vectors are permuted:
  ``v_pin[perm] = v_rbd``, i.e. ``perm[i]`` is the Pinocchio index of rbd's
  velocity coordinate ``i``;
* Pinocchio stores a continuous (unbounded revolute) joint as ``[cos q, sin q]``
  (nq = 2) and quaternions as ``[x, y, z, w]``; rbd stores the angle and
  ``[w, x, y, z]``; planar joints are ``[x, y, cos, sin]`` versus ``[x, y, theta]``;
* frames are matched by URDF link name (Pinocchio BODY frames);
* Pinocchio's ``Force`` and ``Motion`` vectors are linear first, as rbd's.

``PinocchioOracle`` mirrors the signatures of rbd's algorithms (without the
model argument) and returns its answers in rbd's layout, so a test reads
``assert_close(rbd.rnea(model, q, v, a), oracle.rnea(q, v, a))``.
"""
import functools
import warnings
from dataclasses import dataclass

import numpy as np
import pytest

import rbd
from rbd import JointKind
from oracles.robot_data import example_robot_data_dir  # where example-robot-data keeps its URDFs

try:  # Pinocchio is an optional test dependency (the "pin" package).
    import pinocchio as pin
except ImportError:  # pragma: no cover - the test module skips without it
    pin = None


# ------------------------------------------------------------------------------------------
# The robots
# ------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class RobotSpec:
    urdf: str             # path under example-robot-data's robots/ directory
    floating_base: bool
    frames: tuple         # link frames to test, the end effector(s) included


ROBOTS = {
    # Fixed base; the fingers are prismatic (one about an unaligned axis, and a
    # URDF <mimic> that both libraries treat as an independent joint here).
    "panda": RobotSpec("panda_description/urdf/panda.urdf", False,
                       ("panda_link0", "panda_link4", "panda_hand", "panda_hand_tcp", "panda_leftfinger")),
    "ur5": RobotSpec("ur_description/urdf/ur5_robot.urdf", False,
                     ("world", "upper_arm_link", "wrist_2_link", "tool0")),
    "solo12": RobotSpec("solo_description/robots/solo12.urdf", True,
                        ("base_link", "FL_FOOT", "HR_LOWER_LEG")),
    # The full Talos (44 revolute joints + the free flyer), rather than the reduced one.
    "talos": RobotSpec("talos_data/robots/talos_full_v2.urdf", True,
                       ("base_link", "left_sole_link", "gripper_right_fingertip_3_link",
                        "rgbd_optical_frame")),
    # Not in the brief's list, but the one arm whose URDF has continuous joints
    # (Pinocchio's JointModelRUBZ, stored as [cos, sin]): it exercises that conversion.
    "kinova": RobotSpec("kinova_description/robots/kinova.urdf", False,
                        ("j2s6s200_link_base", "j2s6s200_link_3", "j2s6s200_end_effector")),
}


def robot_urdf_path(name):
    directory = example_robot_data_dir()
    if directory is None:
        return None
    path = directory / ROBOTS[name].urdf
    return path if path.is_file() else None


# ------------------------------------------------------------------------------------------
# The pair of models and the conversions between them
# ------------------------------------------------------------------------------------------
class ModelPair:
    """One URDF loaded by both libraries, and the maps between their layouts."""

    def __init__(self, name, path, floating_base, frames):
        self.name = name
        self.path = str(path)
        self.frames = tuple(frames)
        with warnings.catch_warnings():  # the Panda's and Talos's mimic joints (tested in test_urdf)
            warnings.filterwarnings("ignore", message="mimic joints", category=UserWarning)
            self.model = rbd.load_urdf(self.path, floating_base=floating_base)
        if floating_base:
            self.pin_model = pin.buildModelFromUrdf(self.path, pin.JointModelFreeFlyer())
        else:
            self.pin_model = pin.buildModelFromUrdf(self.path)
        self.pin_data = self.pin_model.createData()
        self._match_joints()
        self._match_frames()

    # -- joints --------------------------------------------------------------------------
    def _match_joints(self):
        model, pm = self.model, self.pin_model
        pin_names = list(pm.names)[1:]  # [0] is the universe
        if sorted(pin_names) != sorted(model.joint_names):
            raise AssertionError("%s: the libraries disagree on the joints: rbd has %s, Pinocchio %s"
                                 % (self.name, sorted(model.joint_names), sorted(pin_names)))
        if model.nv != pm.nv:
            raise AssertionError("%s: nv differs (rbd %d, Pinocchio %d)" % (self.name, model.nv, pm.nv))
        self.pin_joint_ids = np.array([pm.getJointId(n) for n in model.joint_names], dtype=np.intp)
        perm = np.empty(model.nv, dtype=np.intp)
        self._q_layout = []  # per body: (rbd kind, rbd q slice, pin q slice)
        for body, jid in enumerate(self.pin_joint_ids):
            joint = pm.joints[int(jid)]
            nv = int(model.joint_nv[body])
            if joint.nv != nv:
                raise AssertionError("%s: joint %r has nv %d in rbd and %d in Pinocchio"
                                     % (self.name, model.joint_names[body], nv, joint.nv))
            iv = int(model.v_idx[body])
            perm[iv:iv + nv] = np.arange(joint.idx_v, joint.idx_v + nv)
            kind = JointKind(int(model.joint_kinds[body]))
            iq = int(model.q_idx[body])
            rbd_q = slice(iq, iq + int(model.joint_nq[body]))
            pin_q = slice(joint.idx_q, joint.idx_q + joint.nq)
            expected_pin_nq = {JointKind.FREE: 7, JointKind.SPHERICAL: 4, JointKind.PLANAR: 4}.get(kind)
            if expected_pin_nq is None:  # a 1-DoF joint: bounded (nq 1) or continuous (nq 2)
                if joint.nq not in (1, 2):
                    raise AssertionError("%s: 1-DoF joint %r has nq %d in Pinocchio"
                                         % (self.name, model.joint_names[body], joint.nq))
            elif joint.nq != expected_pin_nq:
                raise AssertionError("%s: joint %r (%s) has nq %d in Pinocchio"
                                     % (self.name, model.joint_names[body], kind.name, joint.nq))
            self._q_layout.append((kind, rbd_q, pin_q))
        self.v_perm = perm  # v_pin[perm] = v_rbd
        if sorted(perm) != list(range(model.nv)):
            raise AssertionError("%s: the velocity map is not a permutation" % self.name)

    def pin_joint_id(self, body):
        return int(self.pin_joint_ids[body])

    # -- frames --------------------------------------------------------------------------
    def _match_frames(self):
        """rbd's link frames are Pinocchio's BODY frames, its joint frames Pinocchio's JOINT ones."""
        self.pin_frame_ids = {}
        for f, name in enumerate(self.model.frame_names):
            kind = pin.BODY if f < self.model._link_frames else pin.JOINT
            fid = self.pin_model.getFrameId(name, kind)
            if fid >= self.pin_model.nframes:
                raise AssertionError("%s: Pinocchio has no %s frame %r" % (self.name, kind, name))
            self.pin_frame_ids[f] = int(fid)
        missing = [f for f in self.frames if f not in self.model.frame_names]
        if missing:
            raise AssertionError("%s: rbd has no frames %s" % (self.name, missing))

    def pin_frame_id(self, frame):
        return self.pin_frame_ids[self.model.frame_id(frame)]

    # -- configuration ---------------------------------------------------------------------
    # Every conversion takes leading batch dimensions (the peer comparison in
    # asv_benchmarks/ converts whole batches with them).
    def q_to_pin(self, q):
        q = np.asarray(q, dtype=float)
        assert q.shape[-1:] == (self.model.nq,), q.shape
        out = np.empty(q.shape[:-1] + (self.pin_model.nq,))
        for kind, rq, pq in self._q_layout:
            src = q[..., rq]
            if kind == JointKind.FREE:  # [p, w, x, y, z] -> [p, x, y, z, w]
                out[..., pq] = src[..., [0, 1, 2, 4, 5, 6, 3]]
            elif kind == JointKind.SPHERICAL:
                out[..., pq] = src[..., [1, 2, 3, 0]]
            elif kind == JointKind.PLANAR:
                out[..., pq] = np.stack([src[..., 0], src[..., 1], np.cos(src[..., 2]), np.sin(src[..., 2])], -1)
            elif pq.stop - pq.start == 2:  # continuous
                out[..., pq] = np.stack([np.cos(src[..., 0]), np.sin(src[..., 0])], -1)
            else:
                out[..., pq] = src
        return out

    def q_from_pin(self, q_pin):
        q_pin = np.asarray(q_pin, dtype=float)
        assert q_pin.shape[-1:] == (self.pin_model.nq,), q_pin.shape
        out = np.empty(q_pin.shape[:-1] + (self.model.nq,))
        for kind, rq, pq in self._q_layout:
            src = q_pin[..., pq]
            if kind == JointKind.FREE:
                out[..., rq] = src[..., [0, 1, 2, 6, 3, 4, 5]]
            elif kind == JointKind.SPHERICAL:
                out[..., rq] = src[..., [3, 0, 1, 2]]
            elif kind == JointKind.PLANAR:
                out[..., rq] = np.stack([src[..., 0], src[..., 1], np.arctan2(src[..., 3], src[..., 2])], -1)
            elif pq.stop - pq.start == 2:
                out[..., rq] = np.arctan2(src[..., 1], src[..., 0])[..., None]
            else:
                out[..., rq] = src
        return out

    def configuration_error(self, q_rbd, q_pin):
        """Largest coordinate-wise gap between an rbd and a Pinocchio configuration,
        both read in Pinocchio's storage (a quaternion is compared up to its sign,
        which both libraries may flip)."""
        ours = self.q_to_pin(q_rbd)
        q_pin = np.asarray(q_pin, dtype=float)
        worst = 0.0
        for kind, _, pq in self._q_layout:
            a, b = ours[pq], q_pin[pq]
            if kind in (JointKind.FREE, JointKind.SPHERICAL):
                quat_a, quat_b = a[-4:], b[-4:]
                gap = min(np.abs(quat_a - quat_b).max(), np.abs(quat_a + quat_b).max())
                if kind == JointKind.FREE:
                    gap = max(gap, np.abs(a[:3] - b[:3]).max())
            else:
                gap = np.abs(a - b).max()
            worst = max(worst, gap)
        return worst

    def continuous_v_mask(self):
        """True at the rbd velocity coordinates of continuous joints (angles that
        Pinocchio wraps to (-pi, pi] where rbd's single angle need not be)."""
        mask = np.zeros(self.model.nv, dtype=bool)
        for body, (kind, _, pq) in enumerate(self._q_layout):
            if kind not in (JointKind.FREE, JointKind.SPHERICAL, JointKind.PLANAR) and pq.stop - pq.start == 2:
                mask[int(self.model.v_idx[body])] = True
        return mask

    # -- velocity space --------------------------------------------------------------------
    def v_to_pin(self, v):
        v = np.asarray(v, dtype=float)
        out = np.empty(v.shape[:-1] + (self.pin_model.nv,))
        out[..., self.v_perm] = v
        return out

    def v_from_pin(self, v_pin):
        return np.asarray(v_pin, dtype=float)[..., self.v_perm]

    def matrix_from_pin(self, m_pin):
        """An (nv, nv) matrix in rbd's velocity order."""
        return np.asarray(m_pin)[np.ix_(self.v_perm, self.v_perm)]

    def mass_matrix_from_pin(self, upper):
        """Pinocchio's CRBA fills the upper triangle only: mirrored, then in rbd's order."""
        upper = np.triu(upper)
        return self.matrix_from_pin(upper + np.triu(upper, 1).T)

    def columns_from_pin(self, j_pin):
        """A (k, nv) matrix (a Jacobian) in rbd's velocity order."""
        return np.asarray(j_pin)[:, self.v_perm]

    def fext_to_pin(self, fext):
        """rbd's (nbodies, 6) wrenches, each in its body's joint frame, as
        Pinocchio's per-joint list (index 0 is the universe)."""
        fext = np.asarray(fext, dtype=float)
        assert fext.shape == (self.model.nbodies, 6), fext.shape
        forces = [pin.Force.Zero() for _ in range(self.pin_model.njoints)]
        for body in range(self.model.nbodies):
            forces[self.pin_joint_id(body)] = pin.Force(fext[body].copy())
        return _pin_vector("StdVec_Force", forces)


@functools.lru_cache(maxsize=None)
def load_pair(name):
    """The (cached) ``ModelPair`` of a robot of ``ROBOTS``; None if its URDF is absent."""
    path = robot_urdf_path(name)
    if path is None:
        return None
    spec = ROBOTS[name]
    return ModelPair(name, path, spec.floating_base, spec.frames)


# ------------------------------------------------------------------------------------------
# Pinocchio, answering in rbd's layout
# ------------------------------------------------------------------------------------------
_REFERENCES = {}
if pin is not None:
    _REFERENCES = {"local": pin.LOCAL, "world": pin.WORLD, "local_world_aligned": pin.LOCAL_WORLD_ALIGNED}


def _pin_vector(kind, items):
    """A Pinocchio std::vector binding (``kind``, e.g. "StdVec_RigidConstraintModel") of items."""
    out = getattr(pin, kind)()
    for item in items:
        out.append(item)
    return out


def constraint_models(pin_model, contacts):
    """Pinocchio's rigid constraints for rbd ``contacts`` (names of frames Pinocchio
    knows: a 3D constraint for a point contact, 6D for a flat one, in the contact's
    axes), as (models, datas) ready for ``initConstraintDynamics``."""
    models = []
    for contact in contacts:
        frame = pin_model.frames[pin_model.getFrameId(contact.frame)]
        models.append(pin.RigidConstraintModel(
            pin.ContactType.CONTACT_3D if contact.dim == 3 else pin.ContactType.CONTACT_6D, pin_model,
            frame.parentJoint, frame.placement, _REFERENCES[contact.reference]))
    return (_pin_vector("StdVec_RigidConstraintModel", models),
            _pin_vector("StdVec_RigidConstraintData", [c.createData() for c in models]))


class PinocchioOracle:
    """rbd's algorithms computed by Pinocchio (single samples, rbd layouts in and out)."""

    def __init__(self, pair):
        self.pair = pair
        self.pm = pair.pin_model
        self.pd = pair.pin_data

    def _args(self, q, *vecs):
        return (self.pair.q_to_pin(q),) + tuple(self.pair.v_to_pin(x) for x in vecs)

    # -- configuration space -----------------------------------------------------------
    def neutral(self):
        """Pinocchio's neutral configuration, in Pinocchio's storage."""
        return pin.neutral(self.pm)

    def integrate(self, q, v):
        """q (+) v, in Pinocchio's storage (compare with ``pair.configuration_error``)."""
        return pin.integrate(self.pm, *self._args(q, v))

    def difference(self, q0, q1):
        return self.pair.v_from_pin(pin.difference(self.pm, self.pair.q_to_pin(q0), self.pair.q_to_pin(q1)))

    # -- kinematics ----------------------------------------------------------------------
    def forward_kinematics(self, q):
        pin.forwardKinematics(self.pm, self.pd, self.pair.q_to_pin(q))
        return np.array([self.pd.oMi[self.pair.pin_joint_id(b)].homogeneous
                         for b in range(self.pair.model.nbodies)])

    def frame_placement(self, q, frame):
        pin.framesForwardKinematics(self.pm, self.pd, self.pair.q_to_pin(q))
        return self.pd.oMf[self.pair.pin_frame_id(frame)].homogeneous.copy()

    def frame_velocity(self, q, v, frame, reference="local"):
        pin.forwardKinematics(self.pm, self.pd, *self._args(q, v))
        pin.updateFramePlacements(self.pm, self.pd)
        return pin.getFrameVelocity(self.pm, self.pd, self.pair.pin_frame_id(frame),
                                    _REFERENCES[reference]).vector.copy()

    def frame_acceleration(self, q, v, a, frame, reference="local"):
        """The time derivative of the frame's twist expressed in ``reference``.

        In LOCAL and WORLD that is Pinocchio's (spatial) ``getFrameAcceleration``.
        In LOCAL_WORLD_ALIGNED the twist is ``[p_dot; omega]`` in world axes, whose
        derivative is ``[p_ddot; omega_dot]``: Pinocchio's *classical* acceleration
        there (its spatial LWA acceleration lacks the ``omega x p_dot`` term), and
        what Pinocchio's own ``J_lwa a + dJ_lwa v`` gives.
        """
        pin.forwardKinematics(self.pm, self.pd, *self._args(q, v, a))
        pin.updateFramePlacements(self.pm, self.pd)
        fid = self.pair.pin_frame_id(frame)
        if reference == "local_world_aligned":
            acc = pin.getFrameClassicalAcceleration(self.pm, self.pd, fid, pin.LOCAL_WORLD_ALIGNED)
        else:
            acc = pin.getFrameAcceleration(self.pm, self.pd, fid, _REFERENCES[reference])
        return acc.vector.copy()

    def frame_jacobian(self, q, frame, reference="local"):
        pin.computeJointJacobians(self.pm, self.pd, self.pair.q_to_pin(q))
        pin.updateFramePlacements(self.pm, self.pd)
        jac = pin.getFrameJacobian(self.pm, self.pd, self.pair.pin_frame_id(frame), _REFERENCES[reference])
        return self.pair.columns_from_pin(jac)

    def frame_jacobian_time_derivative(self, q, v, frame, reference="local"):
        pin.computeJointJacobiansTimeVariation(self.pm, self.pd, *self._args(q, v))
        pin.updateFramePlacements(self.pm, self.pd)
        djac = pin.getFrameJacobianTimeVariation(self.pm, self.pd, self.pair.pin_frame_id(frame),
                                                 _REFERENCES[reference])
        return self.pair.columns_from_pin(djac)

    def center_of_mass(self, q):
        return pin.centerOfMass(self.pm, self.pd, self.pair.q_to_pin(q)).copy()

    def com_jacobian(self, q):
        return self.pair.columns_from_pin(pin.jacobianCenterOfMass(self.pm, self.pd, self.pair.q_to_pin(q)))

    # -- dynamics --------------------------------------------------------------------------
    def rnea(self, q, v, a, fext=None):
        args = self._args(q, v, a)
        if fext is None:
            tau = pin.rnea(self.pm, self.pd, *args)
        else:
            tau = pin.rnea(self.pm, self.pd, *args, self.pair.fext_to_pin(fext))
        return self.pair.v_from_pin(tau)

    def gravity(self, q):
        return self.pair.v_from_pin(pin.computeGeneralizedGravity(self.pm, self.pd, self.pair.q_to_pin(q)))

    def nonlinear_effects(self, q, v):
        return self.pair.v_from_pin(pin.nonLinearEffects(self.pm, self.pd, *self._args(q, v)))

    def crba(self, q):
        upper = np.triu(pin.crba(self.pm, self.pd, self.pair.q_to_pin(q)))
        # Pinocchio fills only the upper triangle: mirror it.
        return self.pair.matrix_from_pin(upper + np.triu(upper, 1).T)

    def aba(self, q, v, tau, fext=None):
        args = self._args(q, v, tau)
        if fext is None:
            ddq = pin.aba(self.pm, self.pd, *args)
        else:
            ddq = pin.aba(self.pm, self.pd, *args, self.pair.fext_to_pin(fext))
        return self.pair.v_from_pin(ddq)

    def coriolis_matrix(self, q, v):
        return self.pair.matrix_from_pin(pin.computeCoriolisMatrix(self.pm, self.pd, *self._args(q, v)))

    def kinetic_energy(self, q, v):
        return float(pin.computeKineticEnergy(self.pm, self.pd, *self._args(q, v)))

    def potential_energy(self, q):
        return float(pin.computePotentialEnergy(self.pm, self.pd, self.pair.q_to_pin(q)))

    def centroidal_momentum(self, q, v):
        return pin.computeCentroidalMomentum(self.pm, self.pd, *self._args(q, v)).vector.copy()


def assert_spot_checks(model, oracle, frames, seed, mass_rtol):
    """The quick comparison of a loaded model with Pinocchio's: total mass, then the mass
    matrix, inverse dynamics and frame placements at three random states."""
    pm = oracle.pair.pin_model
    assert model.total_mass == pytest.approx(sum(pm.inertias[j].mass for j in range(1, pm.njoints)), rel=mass_rtol)
    rng = np.random.default_rng(seed)
    for _ in range(3):
        q = np.asarray(rbd.random_configuration(model, rng), float)
        v, a = rng.normal(size=model.nv), rng.normal(size=model.nv)
        np.testing.assert_allclose(rbd.crba(model, q), oracle.crba(q), rtol=1e-10, atol=1e-11)
        np.testing.assert_allclose(rbd.rnea(model, q, v, a), oracle.rnea(q, v, a), rtol=1e-10, atol=1e-10)
        for frame in frames:
            np.testing.assert_allclose(rbd.frame_placement(model, q, frame), oracle.frame_placement(q, frame),
                                       atol=1e-12, err_msg=frame)
