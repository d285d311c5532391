"""Models and states between rbd and its peers, Pinocchio and MuJoCo.

* ``from_pinocchio(pin_model)`` and ``from_mujoco(mj_model)`` give an rbd ``Model`` of a
  peer's model; ``rbd.load_mjcf(path_or_xml)`` reads MJCF (or anything MuJoCo compiles)
  through MuJoCo's own parser.
* ``PinocchioLayout(model, pin_model)`` and ``MujocoLayout(model, mj_model)`` convert
  ``q``, ``v``, ``a``, ``tau``, ``(nv, nv)`` matrices and ``(k, nv)`` Jacobians between an
  rbd model and the peer's model of the same robot, matching joints by name.

The peers are imported only when one of these is called: ``import rbd`` needs NumPy only.

What differs (and what the layouts convert):

* joint order: each library orders the joints its own way (Pinocchio's order for a URDF
  need not be rbd's depth-first file order; Talos's is not);
* quaternions: rbd and MuJoCo store ``[w, x, y, z]``, Pinocchio ``[x, y, z, w]``;
* Pinocchio's continuous joints (``RUBX``...) store ``(cos θ, sin θ)``, its planar joint
  ``[x, y, cos θ, sin θ]``; rbd stores θ;
* MuJoCo's free joint: ``qvel = [ṗ (world axes); ω (body axes)]``, rbd's velocity is the body
  twist ``[Rᵀṗ; ω]``. With ``T(q) = diag(R, I3)`` (``R`` the body's orientation),
  ``qvel = T v``, ``qfrc = T tau`` (``T`` is orthogonal, so forces map as velocities), and
  ``qacc = T (a + [ω × v_lin; 0])``: differentiating ``ṗ = R v_lin`` gives
  ``p̈ = R (v̇_lin + ω × v_lin)``. Matrices map as ``M_mj = T M Tᵀ``, Jacobians as
  ``J_mj = J Tᵀ``.

MuJoCo names: an unnamed MuJoCo body is called ``body<id>`` (its id in the MuJoCo model);
an unnamed joint ``<body name>_joint<k>`` (``k``: its place among its body's joints, from 0);
an unnamed site ``site<id>``; a made-up name that a named body, site or joint already has
takes a trailing ``_`` (``body2_``). MuJoCo's bodies and sites have separate names, rbd's frames
one namespace: a site named like a body is the frame ``<name>/site`` (with a warning).
"""
import importlib
import os
import warnings

import numpy as np

from . import rotations, spatial
from ._checks import ResultOverflow, URDFError, as_array, as_transform, check_model, short_names, short_repr
from ._inertia import check_inertias
from .model import JOINT_KINDS, JointKind, Model, assemble_model, couple_joints, _fast_kind
from .urdf import (ENTITIES, check_xml_bytes, gzip_hint, is_xml_text, read_file, root_element, stripped_for_mujoco,
                   warn_inverted_limits, xml_text)

__all__ = ["from_pinocchio", "from_mujoco", "load_mjcf", "PinocchioLayout", "MujocoLayout"]

_REVOLUTE = (JointKind.REVOLUTE_X, JointKind.REVOLUTE_Y, JointKind.REVOLUTE_Z, JointKind.REVOLUTE)
_EYE3 = np.eye(3)


def _import(module, package):
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise ImportError("rbd.interop needs %s for this: pip install %s (%s)" % (module, package, exc)) from exc


def _pose(position, rotation=_EYE3):
    M = np.eye(4)
    M[:3, :3] = rotation
    M[:3, 3] = position
    return M


def _finite_or_inf(x):
    """Peers write 'unbounded' as the largest float; rbd writes inf."""
    x = np.asarray(x, dtype=float)
    return np.where(np.abs(x) >= np.finfo(float).max, np.copysign(np.inf, x), x)


def _body(parent, kind, axis, placement, joint, link, nv, nq, **per_coordinate):
    """One moving body for ``assemble_model``: no inertia yet, unbounded, no armature,
    damping or friction unless given."""
    body = dict(parent=parent, kind=kind, axis=np.asarray(axis, dtype=float), placement=placement,
                inertia=np.zeros(10), joint=joint, link=link,
                lower=np.full(nq, -np.inf), upper=np.full(nq, np.inf),
                velocity=np.full(nv, np.inf), effort=np.full(nv, np.inf),
                armature=np.zeros(nv), damping=np.zeros(nv), friction=np.zeros(nv))
    body.update(per_coordinate)
    return body


def _unique_frames(frames, source):
    """Frames named twice keep the first (with a warning): a lookup by name must be unambiguous."""
    seen, kept, dropped = set(), [], []
    for frame in frames:
        (dropped if frame[0] in seen else kept).append(frame)
        seen.add(frame[0])
    if dropped:
        warnings.warn("%s: frames %s are named twice; rbd keeps the first of each"
                      % (source, short_names(sorted({f[0] for f in dropped}))), UserWarning, stacklevel=3)
    return kept


# ------------------------------------------------------------------------------------------
# Pinocchio
# ------------------------------------------------------------------------------------------
# Pinocchio joint type -> (rbd kind, continuous: the angle stored as (cos, sin)).
_PIN_JOINTS = {
    "JointModelRX": (JointKind.REVOLUTE, False), "JointModelRY": (JointKind.REVOLUTE, False),
    "JointModelRZ": (JointKind.REVOLUTE, False), "JointModelRevoluteUnaligned": (JointKind.REVOLUTE, False),
    "JointModelRUBX": (JointKind.REVOLUTE, True), "JointModelRUBY": (JointKind.REVOLUTE, True),
    "JointModelRUBZ": (JointKind.REVOLUTE, True), "JointModelRevoluteUnboundedUnaligned": (JointKind.REVOLUTE, True),
    "JointModelPX": (JointKind.PRISMATIC, False), "JointModelPY": (JointKind.PRISMATIC, False),
    "JointModelPZ": (JointKind.PRISMATIC, False), "JointModelPrismaticUnaligned": (JointKind.PRISMATIC, False),
    "JointModelSpherical": (JointKind.SPHERICAL, False), "JointModelPlanar": (JointKind.PLANAR, False),
    "JointModelFreeFlyer": (JointKind.FREE, False),
}


def _pin_joint(pin_model, jid):
    """(rbd kind, continuous) of Pinocchio joint ``jid``; ValueError if rbd has no such joint."""
    name = pin_model.joints[jid].shortname()
    if name not in _PIN_JOINTS:
        raise ValueError("Pinocchio joint %s is a %s, which rbd does not represent (rbd takes %s)"
                         % (short_repr(pin_model.names[jid]), name, ", ".join(sorted(_PIN_JOINTS))))
    return _PIN_JOINTS[name]


def _pin_column(pin_data, jid):
    """The first column of joint ``jid``'s motion subspace (constant, in the joint frame)."""
    return np.array(pin_data.joints[jid].S, dtype=float).reshape(6, -1)[:, 0]


def _pin_mimic(pin_model, pin_data, jid):
    """(kind, axis, primary joint name, multiplier, offset) of Pinocchio's mimic joint ``jid``:
    its motion subspace is its multiplier times its own axis (in its frame), its coordinate
    the primary's."""
    name, mimic = short_repr(pin_model.names[jid]), pin_model.joints[jid].extract()
    primary = [int(p) for j, p in zip(pin_model.mimicking_joints, pin_model.mimicked_joints) if int(j) == jid]
    if len(primary) != 1 or _pin_joint(pin_model, primary[0])[0] not in _REVOLUTE + (JointKind.PRISMATIC,):
        raise ValueError("Pinocchio joint %s is a mimic joint of no revolute or prismatic joint, which rbd does "
                         "not represent" % name)
    S = _pin_column(pin_data, jid)
    if mimic.scaling == 0.0:  # (its axis is then nowhere in Pinocchio's data)
        raise ValueError("Pinocchio joint %s is a mimic joint with scaling 0, a fixed joint: make it one (or give "
                         "it a non-zero scaling)" % name)
    revolute = bool(S[3:].any())
    axis = (S[3:] if revolute else S[:3]) / mimic.scaling
    return (JointKind.REVOLUTE if revolute else JointKind.PRISMATIC), axis, str(pin_model.names[primary[0]]), \
        float(mimic.scaling), float(mimic.offset)


def _pin_placement(M, owner):
    """The 4x4 matrix of a ``pinocchio.SE3`` (of ``owner``, named in its errors)."""
    try:
        return as_transform(M.homogeneous, "placement").copy()
    except ValueError as exc:  # (a NaN, a scaled rotation, ...: whose)
        raise ValueError("pin_model: %s: %s" % (owner, exc)) from None


def _pin_inertia(Y, owner):
    """rbd's 10 numbers of a ``pinocchio.Inertia`` (of ``owner``, named in its errors)."""
    try:
        return spatial.inertia10_from_mass_com(Y.mass, np.array(Y.lever), np.array(Y.inertia))
    except ValueError as exc:  # (a negative mass, a NaN, ...: which body's)
        raise type(exc)("pin_model: the inertia of %s: %s" % (owner, exc)) from None


#: a body's per-coordinate arrays, as pinocchio.Model names them
_PIN_JOINT_ARRAYS = {"lower": "lowerPositionLimit", "upper": "upperPositionLimit", "velocity": "velocityLimit",
                     "effort": "effortLimit", "armature": "armature", "damping": "damping", "friction": "friction"}


def from_pinocchio(pin_model, strict=False):
    """An rbd ``Model`` of a ``pinocchio.Model``.

    Bodies keep Pinocchio's joint order (use ``PinocchioLayout`` to pair it with another
    rbd model of the robot) and joint names; a body is named after the BODY frame that sits
    on its joint frame. Frames become rbd frames, but a joint's own JOINT frame (rbd's joint
    frame) and a FIXED_JOINT frame where a BODY frame of its joint is (a URDF's fixed joint:
    ``load_urdf`` leaves out the frames of fixed joints); frames on the universe are fixed
    to the world. Inertias go through rbd's inertia policy (``strict``: an inconsistent
    inertia raises instead of warning); limits, ``armature``, ``damping``, ``friction`` and
    gravity are kept (a gravity with an angular part, which rbd cannot hold, raises
    ValueError). Mimic joints become couplings (``couple_joints``). Joint types rbd lacks
    (composite, helical, universal, ...) raise ValueError naming the joint.
    """
    pin = _import("pinocchio", "pin")
    if not isinstance(pin_model, pin.Model):
        raise TypeError("pin_model must be a pinocchio.Model, got %s" % type(pin_model).__name__)
    angular = np.array(pin_model.gravity.angular, dtype=float)
    if np.any(angular != 0.0):  # (a base's spatial acceleration, e.g. a ship's): no rbd equivalent
        raise ValueError("pin_model.gravity has an angular part %s: rbd's gravity is a linear acceleration "
                         "only (set pin_model.gravity.angular to zero to convert the rest)" % angular.tolist())
    bodies, pin_data, unlimited, mimics = [], pin_model.createData(), [], []
    for jid in range(1, pin_model.njoints):
        name, joint = str(pin_model.names[jid]), pin_model.joints[jid]
        placement = _pin_placement(pin_model.jointPlacements[jid], "joint %s" % short_repr(name))
        if joint.shortname() == "JointModelMimic":  # a coordinate of its own, then coupled to its primary's
            kind, axis, primary, multiplier, offset = _pin_mimic(pin_model, pin_data, jid)
            bodies.append(_body(int(pin_model.parents[jid]) - 1, _fast_kind(kind, axis), axis, placement,
                                name, name, 1, 1))
            bodies[-1]["inertia"] = _pin_inertia(pin_model.inertias[jid], "the body of joint %s" % short_repr(name))
            mimics.append((name, primary, multiplier, offset))
            continue
        kind, continuous = _pin_joint(pin_model, jid)
        S = _pin_column(pin_data, jid)  # (a 1-DoF joint's: its axis)
        axis = {JointKind.REVOLUTE: S[3:], JointKind.PRISMATIC: S[:3]}.get(kind, np.zeros(3))
        nq, nv = JOINT_KINDS[kind].nq, JOINT_KINDS[kind].nv
        rv, pq = slice(joint.idx_v, joint.idx_v + nv), slice(joint.idx_q, joint.idx_q + joint.nq)
        lower, upper = (_finite_or_inf(limit[pq]) for limit in (pin_model.lowerPositionLimit,
                                                                 pin_model.upperPositionLimit))
        if continuous or kind == JointKind.SPHERICAL:  # bounds on cos, sin or a quaternion bound no angle
            lower, upper = np.full(nq, -np.inf), np.full(nq, np.inf)
        elif kind in (JointKind.FREE, JointKind.PLANAR):  # the position is bounded, the rotation is not
            n = 3 if kind == JointKind.FREE else 2
            lower, upper = (np.concatenate([x[:n], np.full(nq - n, s * np.inf)]) for x, s in ((lower, -1), (upper, 1)))
        inverted = lower > upper  # (Bullet's "no limit", which Pinocchio's URDF parser keeps): as load_urdf
        if inverted.any():
            lower, upper = np.where(inverted, -np.inf, lower), np.where(inverted, np.inf, upper)
            unlimited.append(name)
        bodies.append(_body(int(pin_model.parents[jid]) - 1, _fast_kind(kind, axis), axis,
                            placement, name, name, nv, nq,
                            lower=lower, upper=upper,
                            velocity=_finite_or_inf(pin_model.velocityLimit[rv]),
                            effort=_finite_or_inf(pin_model.effortLimit[rv]),
                            armature=np.array(pin_model.armature[rv]), damping=np.array(pin_model.damping[rv]),
                            friction=np.array(pin_model.friction[rv])))
        for key, label in _PIN_JOINT_ARRAYS.items():  # (named here: assemble_model knows no pin_model)
            if np.isnan(bodies[-1][key]).any() or (key not in ("lower", "upper") and (bodies[-1][key] < 0).any()):
                raise ValueError("pin_model: joint %s has %s %s (expected %s)" % (
                    short_repr(name), label, bodies[-1][key].tolist(),
                    "numbers, -inf/inf for none" if key in ("lower", "upper") else "non-negative numbers"))
        bodies[-1]["inertia"] = _pin_inertia(pin_model.inertias[jid], "the body of joint %s" % short_repr(name))
    frames = []
    body_frames = {(int(f.parentJoint), f.placement.homogeneous.tobytes()) for f in pin_model.frames
                   if f.type == pin.FrameType.BODY}
    for frame in list(pin_model.frames)[1:]:  # (the first is Pinocchio's universe: rbd's world)
        body = int(frame.parentJoint) - 1
        if frame.type == pin.FrameType.JOINT and str(frame.name) == str(pin_model.names[frame.parentJoint]):
            continue  # a joint's own frame: rbd's joint frame
        if frame.type == pin.FrameType.FIXED_JOINT and (body + 1, frame.placement.homogeneous.tobytes()) in body_frames:
            continue  # where its child link's frame is (a URDF's fixed joint): as load_urdf
        placement = _pin_placement(frame.placement, "frame %s" % short_repr(str(frame.name)))
        frames.append((str(frame.name), body, placement))
        if body >= 0 and frame.type == pin.FrameType.BODY and np.array_equal(placement, np.eye(4)) \
                and bodies[body]["link"] == bodies[body]["joint"]:
            bodies[body]["link"] = str(frame.name)
    check_inertias([b["inertia"] for b in bodies], [b["link"] for b in bodies], strict=strict)
    if unlimited:
        warn_inverted_limits(unlimited, stacklevel=3)
    model = assemble_model(pin_model.name, bodies, _unique_frames(frames, "from_pinocchio"),
                           gravity=np.array(pin_model.gravity.linear),
                           world_inertia=_pin_inertia(pin_model.inertias[0], "the universe"))  # the universe's: a fixed root link
    return couple_joints(model, mimics) if mimics else model


# ------------------------------------------------------------------------------------------
# MuJoCo
# ------------------------------------------------------------------------------------------
def _mj_names(mj_model, obj, count, default):
    mujoco = _import("mujoco", "mujoco")
    try:
        return [mujoco.mj_id2name(mj_model, obj, i) or default(i) for i in range(count)]
    except UnicodeDecodeError as exc:  # MuJoCo keeps a file's bytes as they are: read as UTF-8
        raise URDFError("MJCF: a name in the MuJoCo model is not UTF-8 (%s): MuJoCo reads files as UTF-8; save "
                        "the file in UTF-8, or give load_mjcf its bytes (decoded as its XML declaration says)"
                        % exc) from None


def _mj_kind(mujoco, jnt_type):
    J = mujoco.mjtJoint
    return {int(J.mjJNT_FREE): JointKind.FREE, int(J.mjJNT_BALL): JointKind.SPHERICAL,
            int(J.mjJNT_HINGE): JointKind.REVOLUTE, int(J.mjJNT_SLIDE): JointKind.PRISMATIC}[int(jnt_type)]


def _mujoco_frame_names(mj_model):
    """(body names, site names, renamed sites) in one namespace, as rbd's frames need them.

    MuJoCo keeps bodies and sites apart, rbd's frames share one namespace: a written name
    is kept, but a site named like a body is called ``<name>/site`` (returned as
    ``(name, new name)`` pairs for the warning); made-up names (``body<id>``, ``site<id>``)
    take a trailing ``_`` while a written name (of a body, a site or a joint) already holds
    them, so they never shadow one."""
    mujoco = _import("mujoco", "mujoco")
    written_bodies = _mj_names(mj_model, mujoco.mjtObj.mjOBJ_BODY, mj_model.nbody, lambda i: None)
    written_sites = _mj_names(mj_model, mujoco.mjtObj.mjOBJ_SITE, mj_model.nsite, lambda i: None)
    written_joints = _mj_names(mj_model, mujoco.mjtObj.mjOBJ_JOINT, mj_model.njnt, lambda i: None)
    taken = {n for n in written_bodies + written_sites + written_joints if n}  # (joints are frames too)

    def fresh(name):
        while name in taken:
            name += "_"
        taken.add(name)
        return name

    bodies = [name or fresh("body%d" % b) for b, name in enumerate(written_bodies)]
    body_set, sites, renamed = set(bodies), [], []
    for s, name in enumerate(written_sites):
        if name is None:
            name = fresh("site%d" % s)
        elif name in body_set:
            renamed.append((name, fresh(name + "/site")))
            name = renamed[-1][1]
        sites.append(name)
    return bodies, sites, renamed


def _mujoco_joint_names(mj_model, frames=None):
    """The joint names, unnamed joints given ``<body name>_joint<k>`` (with a trailing ``_``
    while a body, site or joint already holds it); duplicates raise. ``frames``: the body and
    site names of ``_mujoco_frame_names``, if the caller has them."""
    mujoco = _import("mujoco", "mujoco")
    bodies, sites = _mujoco_frame_names(mj_model)[:2] if frames is None else frames
    names = _mj_names(mj_model, mujoco.mjtObj.mjOBJ_JOINT, mj_model.njnt, lambda j: None)
    taken = set(names) | set(bodies) | set(sites)  # (a written name keeps its joint: a made-up one gets "_")
    for j in range(mj_model.njnt):
        if names[j] is None:
            body = int(mj_model.jnt_bodyid[j])
            name = "%s_joint%d" % (bodies[body], j - int(mj_model.body_jntadr[body]))
            while name in taken:
                name += "_"
            names[j] = name
            taken.add(name)
    if len(set(names)) != len(names):
        twice = sorted({n for n in names if names.count(n) > 1})
        raise ValueError("MuJoCo joints %s are named twice (an unnamed joint is called "
                         "'<body>_joint<k>'): name them apart" % short_names(twice))
    return names


def _mujoco_unsupported(mj_model, joint_names, bodies):
    """What rbd does not represent, as one sentence per feature (joints and bodies named as
    rbd names them)."""
    mujoco = _import("mujoco", "mujoco")
    m, notes = mj_model, []

    def named(obj, count, what, why):
        if count:
            notes.append("%s %s%s" % (what, short_names(_mj_names(m, obj, count, "#{}".format)), why))

    named(mujoco.mjtObj.mjOBJ_TENDON, m.ntendon, "tendons", "")
    named(mujoco.mjtObj.mjOBJ_EQUALITY, m.neq, "equality constraints", "")
    named(mujoco.mjtObj.mjOBJ_ACTUATOR, m.nu, "actuators", " (rbd's tau is the joint-space force, MuJoCo's qfrc_actuator)")
    named(mujoco.mjtObj.mjOBJ_FLEX, m.nflex, "flexes", "")
    stiffness = np.column_stack([m.jnt_stiffness, getattr(m, "jnt_stiffnesspoly", np.zeros((m.njnt, 0)))])
    springs = [joint_names[j] for j in np.flatnonzero(stiffness.any(axis=1))]  # (MuJoCo 4: polynomial terms too)
    if springs:
        notes.append("joint springs (stiffness, springref) on %s" % short_names(springs))
    nonlinear = np.asarray(getattr(m, "dof_dampingpoly", np.zeros((m.nv, 0)))).any(axis=1)
    if nonlinear.any():
        notes.append("the damping beyond its linear term on joints %s (rbd's damping is that term)"
                     % short_names(dict.fromkeys(joint_names[j] for j in m.dof_jntid[nonlinear])))
    cones = [joint_names[j] for j in range(m.njnt)
             if m.jnt_limited[j] and _mj_kind(mujoco, m.jnt_type[j]) in (JointKind.SPHERICAL, JointKind.FREE)]
    if cones:
        notes.append("the ranges of ball joints %s" % short_names(cones))
    gravcomp = [bodies[b] for b in np.flatnonzero(m.body_gravcomp)]
    if gravcomp:
        notes.append("gravity compensation on %s" % short_names(gravcomp))
    mocap = [bodies[b] for b in np.flatnonzero(m.body_mocapid >= 0)]
    if mocap:
        notes.append("mocap bodies %s (moved by mocap_pos in MuJoCo, fixed in rbd)" % short_names(mocap))
    free = [j for j in range(m.njnt) if _mj_kind(mujoco, m.jnt_type[j]) == JointKind.FREE]
    for field in ("dof_damping", "dof_frictionloss"):
        uneven = [joint_names[j] for j in free if np.ptp(getattr(m, field)[m.jnt_dofadr[j]:m.jnt_dofadr[j] + 3])]
        if uneven:
            notes.append("unequal %s on the translation of free joints %s (world axes in MuJoCo, body axes "
                         "in rbd)" % (field, short_names(uneven)))
    if m.opt.density or m.opt.viscosity or np.any(m.opt.wind):
        notes.append("fluid forces (density, viscosity, wind)")
    return notes


def from_mujoco(mj_model, strict=False):
    """An rbd ``Model`` of a compiled ``mujoco.MjModel``.

    Each MuJoCo joint becomes an rbd joint of the same name (unnamed ones: see the module
    docstring), in MuJoCo's order: hinge -> revolute, slide -> prismatic, ball -> spherical,
    free -> free flyer. A body with several joints becomes a chain of massless rbd bodies
    (named ``<body>/<joint>``, with a trailing ``_`` while a body, site or joint holds that
    name), the last one carrying the MuJoCo body. An rbd body's frame sits at its hinge or
    ball joint's anchor (MuJoCo's ``pos`` of the joint; a slide moves the same wherever its
    anchor is: its body's frame is the MuJoCo body's, at qpos0); every MuJoCo body and site
    is an rbd frame of its own name, the world body included. A joint's ``ref`` is folded
    into its placement, so rbd's q equals MuJoCo's qpos (and rbd's zero is not MuJoCo's
    qpos0 then). Bodies without joints are merged into their parent. ``dof_armature``,
    ``dof_damping``, ``dof_frictionloss``, hinge and slide ranges, symmetric
    ``actuatorfrcrange`` (as effort limits) and gravity are kept.

    What rbd cannot represent — tendons, equality constraints, actuators, flexes, joint
    springs, ball-joint ranges, gravity compensation, mocap bodies, fluid forces, unequal
    damping or frictionloss on a free joint's translation — is named in one UserWarning;
    what would make rbd's dynamics differ from MuJoCo's — armature on a free joint's
    translation, actuator or tendon armature — raises ValueError. Inertias go through rbd's inertia
    policy (``strict``).
    """
    mujoco = _import("mujoco", "mujoco")
    if not isinstance(mj_model, mujoco.MjModel):
        raise TypeError("mj_model must be a compiled mujoco.MjModel, got %s" % type(mj_model).__name__)
    m = mj_model
    body_names, site_names, renamed_sites = _mujoco_frame_names(m)
    joint_names = _mujoco_joint_names(m, (body_names, site_names))
    if np.any(getattr(m, "actuator_armature", 0.0)):
        raise ValueError("the MuJoCo model has actuators with armature, which MuJoCo adds to its mass matrix "
                         "and rbd does not represent (give the joints armature instead)")
    armed = np.flatnonzero(np.asarray(getattr(m, "tendon_armature", np.zeros(m.ntendon))))
    if armed.size:
        raise ValueError("the MuJoCo model has tendons %s with armature, which MuJoCo adds to its mass matrix "
                         "(J_t^T armature J_t) and rbd does not represent"
                         % short_names(mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_TENDON, int(t)) or "tendon%d" % t
                                       for t in armed))
    _check_mujoco_finite(m, body_names, joint_names, site_names)
    notes = _mujoco_unsupported(m, joint_names, body_names)
    if renamed_sites:
        warnings.warn("from_mujoco: sites %s are named like bodies (rbd's frames share one namespace): "
                      "the names stay the bodies', the sites are the frames %s"
                      % (short_names([r[0] for r in renamed_sites]), short_names([r[1] for r in renamed_sites])),
                      UserWarning, stacklevel=2)
    bodies, frames = [], [(body_names[0], -1, np.eye(4))]
    taken = set(body_names) | set(site_names) | set(joint_names)  # (the massless links' names must be new)
    place = [(-1, np.eye(4))]  # per MuJoCo body: (rbd body, rbd-body-from-MuJoCo-body)
    world_inertia = np.zeros(10)  # the bodies welded to the world
    for b in range(1, m.nbody):
        body, offset = place[m.body_parentid[b]]
        pre = offset @ _pose(m.body_pos[b], rotations.quat_to_matrix(m.body_quat[b]))
        first, count = int(m.body_jntadr[b]), int(m.body_jntnum[b])
        for j in range(first, first + count):
            kind = _mj_kind(mujoco, m.jnt_type[j])
            axis, anchor, ref = np.array(m.jnt_axis[j]), _pose(m.jnt_pos[j]), m.qpos0[m.jnt_qposadr[j]]
            if kind == JointKind.FREE:
                if np.any(m.dof_armature[m.jnt_dofadr[j]:m.jnt_dofadr[j] + 3]):
                    # MuJoCo's force is armature * p_ddot (world axes), rbd's armature * a (body axes): they
                    # differ by armature * (w x v) even when the mass matrices agree.
                    raise ValueError("free joint %s has armature on its translation, which MuJoCo applies to "
                                     "the world-frame acceleration and rbd to the body-frame one: set it to "
                                     "zero (add it to the body's mass instead)" % short_repr(joint_names[j]))
                if body != -1:
                    raise ValueError("MuJoCo free joint %s is not on a top-level body" % short_repr(joint_names[j]))
                placement, pre, axis = np.eye(4), np.eye(4), np.zeros(3)  # qpos is the body's world pose
            elif kind == JointKind.PRISMATIC:
                placement, pre = pre @ _pose(-ref * axis), np.eye(4)
            else:  # rotations turn about the anchor: the rbd body's frame sits there
                placement = pre @ anchor
                if kind == JointKind.REVOLUTE:
                    placement = placement @ _pose(np.zeros(3), rotations.angle_axis_to_matrix(-ref, axis))
                else:
                    axis = np.zeros(3)
                pre = _pose(-m.jnt_pos[j])
            nq, nv = JOINT_KINDS[kind].nq, JOINT_KINDS[kind].nv
            dofs = slice(m.jnt_dofadr[j], m.jnt_dofadr[j] + nv)
            extra = dict(armature=np.array(m.dof_armature[dofs]), damping=np.array(m.dof_damping[dofs]),
                         friction=np.array(m.dof_frictionloss[dofs]))
            if m.jnt_limited[j] and nq == 1:
                extra.update(lower=m.jnt_range[j, :1].copy(), upper=m.jnt_range[j, 1:].copy())
            low, high = m.jnt_actfrcrange[j]
            if m.jnt_actfrclimited[j]:
                if low != -high:
                    notes.append("the asymmetric actuatorfrcrange of joint %s (kept as the larger bound)"
                                 % short_repr(joint_names[j]))
                extra["effort"] = np.full(nv, max(-low, high))
            link = body_names[b]
            if j < first + count - 1:  # a massless link between two joints of one MuJoCo body
                link = "%s/%s" % (body_names[b], joint_names[j])
                while link in taken:
                    link += "_"
                taken.add(link)
            bodies.append(_body(body, _fast_kind(kind, axis), axis, placement, joint_names[j], link, nv, nq, **extra))
            body = len(bodies) - 1
        try:
            inertia = spatial.inertia_act(pre, spatial.inertia10_from_mass_com(
                m.body_mass[b], m.body_ipos[b], _principal(m.body_inertia[b], rotations.quat_to_matrix(m.body_iquat[b]))))
        except ResultOverflow:
            raise URDFError("the MuJoCo model's body %s has a mass, inertia or position so large that its inertia "
                            "overflows float64" % short_repr(body_names[b])) from None
        if body >= 0:
            bodies[body]["inertia"] = bodies[body]["inertia"] + inertia
        else:
            world_inertia = world_inertia + inertia
        frames.append((body_names[b], body, pre))
        place.append((body, pre))
    for s in range(m.nsite):
        body, offset = place[m.site_bodyid[s]]
        frames.append((site_names[s], body, offset @ _pose(m.site_pos[s], rotations.quat_to_matrix(m.site_quat[s]))))
    if notes:
        warnings.warn("from_mujoco: rbd does not represent " + "; ".join(notes), UserWarning, stacklevel=2)
    check_inertias([b["inertia"] for b in bodies], [b["link"] for b in bodies], strict=strict)
    gravity = np.zeros(3) if m.opt.disableflags & mujoco.mjtDisableBit.mjDSBL_GRAVITY else np.array(m.opt.gravity)
    name = bytes(m.names[:bytes(m.names).index(b"\0")]).decode() or "robot"
    return assemble_model(name, bodies, _unique_frames(frames, "from_mujoco"), gravity=gravity,
                          world_inertia=world_inertia)


#: the MjModel arrays from_mujoco reads, by the object whose row they hold
_MUJOCO_NUMBERS = {"body": ("body_pos", "body_quat", "body_ipos", "body_iquat", "body_mass", "body_inertia"),
                   "joint": ("jnt_axis", "jnt_pos", "jnt_range", "jnt_actfrcrange"),
                   "dof": ("dof_armature", "dof_damping", "dof_frictionloss"),
                   "site": ("site_pos", "site_quat")}
_MUJOCO_RANGES = ("jnt_range", "jnt_actfrcrange")


def _check_mujoco_finite(m, body_names, joint_names, site_names):
    """A URDFError (a ValueError) naming the MuJoCo element and attribute of the first
    non-finite number from_mujoco would read (MuJoCo compiles 'nan' with a warning; the
    model's arrays would then name rbd's own, joint_placements, not the element written in
    the file)."""
    owners = {"body": ("body", body_names), "joint": ("joint", joint_names),
              "dof": ("joint", [joint_names[j] for j in m.dof_jntid]), "site": ("site", site_names)}
    for kind, fields in _MUJOCO_NUMBERS.items():
        element, names = owners[kind]
        for field in fields:
            values = np.asarray(getattr(m, field))
            # (a range may be infinite: no bound there, as rbd's limits)
            good = ~np.isnan(values) if field in _MUJOCO_RANGES else np.isfinite(values)
            bad = np.flatnonzero(~good.all(axis=tuple(range(1, values.ndim))))
            if bad.size:
                raise URDFError("the MuJoCo model's %s %s has a %s %s: %s"
                                % (element, short_repr(names[bad[0]]), "NaN in its" if field in _MUJOCO_RANGES
                                   else "non-finite", field.split("_", 1)[1], np.array2string(values[bad[0]])))
    for what, values in (("gravity", m.opt.gravity), ("qpos0 (the joints' ref)", m.qpos0)):
        if not np.all(np.isfinite(values)):
            raise URDFError("the MuJoCo model's %s is not finite" % what)


def _principal(moments, R):
    """The rotational inertia of principal ``moments`` along the columns of ``R``."""
    return (R * moments) @ R.T


def _is_urdf(source, is_xml):
    """Whether the MJCF source is a URDF; a URDFError for XML declaring entities (refused as
    load_urdf refuses them: MuJoCo's importer would load a URDF of them as an empty robot)."""
    if is_xml:  # (the whole of it: comments before the root element may be any length)
        root = root_element(source)
    else:
        try:
            root = root_element(read_file(source, "MJCF"))
        except OSError:  # MuJoCo says what is wrong
            return False
    if root == ENTITIES:
        raise URDFError("MJCF: XML entity declarations (<!ENTITY>) are not allowed")
    return root == "robot"


def load_mjcf(source, strict=False):
    """A ``Model`` of an MJCF file path, XML string or the file's bytes (in the encoding its XML
    declaration names; UTF-8 without one) (or a URDF: anything MuJoCo compiles;
    a URDF's mesh geometry is left out, so MuJoCo does not look for it, and its fixed links
    stay bodies: see ``rbd.urdf.stripped_for_mujoco``), parsed and compiled by MuJoCo
    (inertias from geometry included), then ``from_mujoco``.
    Needs ``mujoco`` (``pip install mujoco``); a file MuJoCo refuses raises ``rbd.URDFError``
    with MuJoCo's message."""
    mujoco = _import("mujoco", "mujoco")
    source = os.fsdecode(source) if isinstance(source, os.PathLike) else source  # (a path, even of bytes)
    if isinstance(source, (bytes, bytearray)):  # a file's content, as load_urdf takes it
        source = xml_text(check_xml_bytes(bytes(source), "MJCF"), "MJCF")
    if not isinstance(source, str):
        raise TypeError("source must be an MJCF file path, an XML string or its bytes, got %s"
                        % type(source).__name__)
    is_xml = is_xml_text(source)
    if not is_xml and os.path.isdir(source):  # (as load_urdf's open() says it)
        raise IsADirectoryError("MJCF: %s is a folder, not a file" % short_repr(source))
    if not is_xml and not os.path.exists(source):
        raise FileNotFoundError("no MJCF file %s" % short_repr(source))
    if not is_xml and not os.path.isfile(source):  # a pipe (``<(...)``), or a device: refused
        source, is_xml = xml_text(read_file(source, "MJCF"), "MJCF"), True
    if is_xml:
        try:
            source.encode("utf-8")
        except UnicodeEncodeError as exc:  # (MuJoCo's binding would refuse the argument's type)
            raise URDFError("MJCF: the XML text holds a character UTF-8 cannot encode (%s)" % exc) from None
    if _is_urdf(source, is_xml):  # MuJoCo's URDF importer, without the meshes it cannot find
        source, is_xml = stripped_for_mujoco(source), True
    try:
        mj_model = mujoco.MjModel.from_xml_string(source) if is_xml else mujoco.MjModel.from_xml_path(source)
    except ValueError as exc:
        raise URDFError("MJCF: MuJoCo cannot compile %s: %s%s" % (short_repr(source, 60), exc,
                                                                  "" if is_xml else _file_hint(source))) from None
    _refuse_written_nan(source, is_xml)
    return from_mujoco(mj_model, strict=strict)


# The MJCF attributes that shape rbd's model (poses, sizes, masses, inertias, joints, gravity)
_MJCF_NUMBERS = {"pos", "quat", "euler", "axisangle", "xyaxes", "zaxis", "fromto", "size", "mass", "density",
                 "diaginertia", "fullinertia", "axis", "ref", "range", "armature", "damping", "frictionloss",
                 "stiffness", "springref", "actuatorfrcrange", "gravity", "settotalmass", "boundmass",
                 "boundinertia"}

_MJCF_UNREAD = {("site", "size")}  # (a site is a frame: its drawn size shapes nothing of rbd's)


def _refuse_written_nan(source, is_xml):
    """A URDFError naming the first NaN written in an attribute that shapes rbd's model, in
    the MJCF text or the files it includes (as MuJoCo finds them): MuJoCo compiles a NaN with
    only a printed warning, and reads some (a geom's mass or pos) as not given, where rbd's
    checks of the compiled model cannot see them."""
    import xml.etree.ElementTree as ElementTree

    folder = os.getcwd() if is_xml else os.path.dirname(os.path.abspath(source))
    documents, seen = [(source if is_xml else None, None if is_xml else source)], set()
    while documents:
        text, path = documents.pop()
        if path is not None:
            if path in seen or not os.path.isfile(path):
                continue  # (MuJoCo compiled it: an include it found elsewhere is its business)
            seen.add(path)
            with open(path, "rb") as f:
                text = xml_text(f.read(), "MJCF")
        try:
            root = ElementTree.fromstring(text)
        except (ElementTree.ParseError, ValueError):  # (MuJoCo's reader took it; rbd's does not)
            continue
        for element in root.iter():
            if element.tag == "include" and element.get("file"):
                documents.append((None, os.path.join(folder, element.get("file"))))
            for attribute, value in element.attrib.items():
                if (attribute in _MJCF_NUMBERS and (element.tag, attribute) not in _MJCF_UNREAD
                        and any(w.lower().lstrip("+-") == "nan" for w in value.split())):
                    where = "<%s%s>" % (element.tag, " name=%s" % short_repr(element.get("name"))
                                        if element.get("name") else "")
                    raise URDFError("MJCF: %s has a NaN in %s=%s%s (MuJoCo compiles it with only a printed warning, "
                                    "and reads some as not given): write a number, or leave the attribute out"
                                    % (where, attribute, short_repr(value),
                                       "" if path in (None, source) else " (in the included file %s)" % short_repr(path, 300)))



def _file_hint(path):
    """What to do with a UTF-16 file, which MuJoCo's parser (UTF-8 only) cannot read, or a
    compressed one."""
    with open(path, "rb") as f:
        head = f.read(4)
    compressed = gzip_hint(head)
    if compressed:
        return compressed
    if head in (b"\xff\xfe\0\0", b"\0\0\xfe\xff"):
        encoding = "UTF-32"
    elif head[:2] in (b"\xff\xfe", b"\xfe\xff"):
        encoding = "UTF-16"
    else:
        return ""
    return (" (the file is %s, MuJoCo reads UTF-8 files: save it as UTF-8, or give load_mjcf its bytes, "
            "which rbd decodes)" % encoding)


# ------------------------------------------------------------------------------------------
# Layouts
# ------------------------------------------------------------------------------------------
def _peer_type_error(name, expected, given):
    """The TypeError of a layout's peer model argument; an rbd Model there is the two
    arguments swapped (the rbd model comes first)."""
    swapped = " (the rbd model comes first: the arguments are (model, %s))" % name if isinstance(given, Model) else ""
    return TypeError("%s must be %s, got %s%s" % (name, expected, type(given).__name__, swapped))


class _Layout:
    """The map between an rbd model's layout and a peer's, one joint at a time.

    Per joint: where its coordinates are on each side, and how they differ: the peer stores
    the quaternion w last (``w_last``), stores the joint's last angle as ``(cos, sin)``
    (``cos_sin``), or gives the free joint's linear velocity in world axes
    (``world_linear``). Every method is batched over leading dimensions and takes the
    configuration in the layout it converts from.

    Attributes: ``model``; ``peer_nq``, ``peer_nv``; ``v_perm``, the peer's index of each of
    rbd's velocity coordinates (``v = v_peer[..., v_perm]`` but for MuJoCo's free joints,
    whose linear part is also rotated).
    """

    def __init__(self, model, peer_nq, peer_nv, joints):
        # joints: rbd body -> (peer q start, peer v start, w_last, cos_sin, world_linear)
        self.model, self.peer_nq, self.peer_nv = model, int(peer_nq), int(peer_nv)
        self._joints, self._free = [], []  # _free: (q index of the quaternion, v index) per world_linear joint
        perm = np.empty(model.nv, dtype=np.intp)
        for body, (pq, pv, w_last, cos_sin, world_linear) in joints.items():
            iq, iv = int(model.q_idx[body]), int(model.v_idx[body])
            nq, nv = int(model.joint_nq[body]), int(model.joint_nv[body])
            perm[iv:iv + nv] = np.arange(pv, pv + nv)
            self._joints.append((slice(iq, iq + nq), slice(pq, pq + nq + cos_sin), w_last, cos_sin))
            if world_linear:
                self._free.append((iq + 3, iv))
        self.v_perm = perm  # v = v_peer[..., v_perm]
        self._inverse = np.argsort(perm)  # v_peer = v[..., _inverse]
        if model.nv != self.peer_nv or model.nq + sum(j[3] for j in self._joints) != self.peer_nq:
            raise ValueError("the rbd model (nq %d, nv %d) and the peer's (nq %d, nv %d) do not match"
                             % (model.nq, model.nv, self.peer_nq, self.peer_nv))

    def _warn_if_dynamics_differ(self, peer, gravity, armature):
        """A layout maps coordinates only: a warning when the two models' gravity or armature
        (``armature`` in the peer's velocity order) differ, as after editing one of them,
        since their dynamics then differ too with nothing failing."""
        differ = []
        if not np.allclose(self.model.gravity, gravity, rtol=1e-12, atol=1e-12):
            differ.append("gravity %s vs %s" % (np.asarray(self.model.gravity).tolist(), np.asarray(gravity).tolist()))
        m = self.model
        unlike = ~np.isclose(m.armature, np.asarray(armature, dtype=float)[self.v_perm], rtol=1e-12, atol=1e-12)
        if unlike.any():
            joints = [m.joint_names[b] for b in range(m.nbodies) if unlike[m.v_idx[b]:m.v_idx[b] + m.joint_nv[b]].any()]
            differ.append("the armature of joints %s" % short_names(joints))
        if differ:
            warnings.warn("the rbd model and the %s model differ in %s: the layout converts coordinates, but "
                          "their dynamics differ (give both the same, e.g. model.replace(gravity=..., armature=...), "
                          "or build the rbd model with %s)"
                          % (peer, " and ".join(differ),
                             "from_pinocchio(pin_model)" if peer == "Pinocchio" else "from_mujoco(mj_model)"),
                          UserWarning, stacklevel=3)

    # -- configuration -------------------------------------------------------------------
    def q_to_peer(self, q):
        q = as_array(q, "q", (self.model.nq,))
        out = np.empty(q.shape[:-1] + (self.peer_nq,))
        for rq, pq, w_last, cos_sin in self._joints:
            x = q[..., rq]
            if w_last:
                x = np.concatenate([x[..., :-4], x[..., -3:], x[..., -4:-3]], axis=-1)
            if cos_sin:
                x = np.concatenate([x[..., :-1], np.cos(x[..., -1:]), np.sin(x[..., -1:])], axis=-1)
            out[..., pq] = x
        return out

    def q_from_peer(self, q_peer):
        q_peer = as_array(q_peer, "q_peer", (self.peer_nq,))
        out = np.empty(q_peer.shape[:-1] + (self.model.nq,))
        for rq, pq, w_last, cos_sin in self._joints:
            x = q_peer[..., pq]
            if cos_sin:
                x = np.concatenate([x[..., :-2], np.arctan2(x[..., -1:], x[..., -2:-1])], axis=-1)
            if w_last:
                x = np.concatenate([x[..., :-4], x[..., -1:], x[..., -4:-1]], axis=-1)
            out[..., rq] = x
        return out

    # -- tangent vectors: x_peer = T(q) x for velocities and forces (T orthogonal) ----------
    def _rotations(self, q):
        return [(iv, rotations.quat_to_matrix(q[..., iq:iq + 4])) for iq, iv in self._free]

    def _broadcast(self, q, x):
        """A writable copy of ``x`` with the batch dimensions of ``q`` and ``x`` broadcast together."""
        try:
            batch = np.broadcast_shapes(q.shape[:-1], x.shape[:-1])
        except ValueError:
            raise ValueError("the batch dimensions of the configuration %s and of the vectors %s do not "
                             "broadcast together" % (q.shape[:-1], x.shape[:-1])) from None
        return np.array(np.broadcast_to(x, batch + x.shape[-1:]), dtype=float)

    def _tangent_to_peer(self, q, x):
        x = self._broadcast(q, x)
        for iv, R in self._rotations(q):
            x[..., iv:iv + 3] = np.einsum("...ij,...j->...i", R, x[..., iv:iv + 3])
        return x[..., self._inverse]

    def _tangent_from_peer(self, q, x_peer):
        x = self._broadcast(q, x_peer)[..., self.v_perm]
        for iv, R in self._rotations(q):
            x[..., iv:iv + 3] = np.einsum("...ji,...j->...i", R, x[..., iv:iv + 3])
        return x

    def _omega_cross_v(self, v):
        """[ω × v_lin; 0] at each free joint with world-linear peer velocities, else 0."""
        out = np.zeros_like(v)
        for _, iv in self._free:
            out[..., iv:iv + 3] = np.cross(v[..., iv + 3:iv + 6], v[..., iv:iv + 3])
        return out

    def _vector(self, x, name, peer=False):
        return as_array(x, name, (self.peer_nv if peer else self.model.nv,))

    def to_peer(self, q, v=None, a=None):
        """``(q, v[, a])`` in the peer's layout (the arguments given, as a tuple)."""
        out = [self.q_to_peer(q)]
        q = as_array(q, "q", (self.model.nq,))
        if v is not None:
            v = self._vector(v, "v")
            out.append(self._tangent_to_peer(q, v))
            if a is not None:
                out.append(self._tangent_to_peer(q, self._vector(a, "a") + self._omega_cross_v(v)))
        elif a is not None:
            raise ValueError("converting a needs v (the accelerations of a free joint depend on it)")
        return tuple(out)

    def from_peer(self, q_peer, v_peer=None, a_peer=None):
        """``(q, v[, a])`` in rbd's layout from the peer's (the arguments given, as a tuple):
        ``rbd.rnea(model, *layout.from_peer(qpos, qvel, qacc))``."""
        q = self.q_from_peer(q_peer)
        out = [q]
        if v_peer is not None:
            v = self._tangent_from_peer(q, self._vector(v_peer, "v_peer", peer=True))
            out.append(v)
            if a_peer is not None:
                out.append(self._tangent_from_peer(q, self._vector(a_peer, "a_peer", peer=True))
                           - self._omega_cross_v(v))
        elif a_peer is not None:
            raise ValueError("converting a_peer needs v_peer (the accelerations of a free joint depend on it)")
        return tuple(out)

    def tau_to_peer(self, q, tau):
        """Generalized forces (rbd's ``tau``) in the peer's layout, at rbd's configuration ``q``."""
        return self._tangent_to_peer(as_array(q, "q", (self.model.nq,)), self._vector(tau, "tau"))

    def tau_from_peer(self, q_peer, tau_peer):
        """The peer's generalized forces in rbd's layout, at the peer's configuration ``q_peer``."""
        return self._tangent_from_peer(self.q_from_peer(q_peer), self._vector(tau_peer, "tau_peer", peer=True))

    # -- matrices --------------------------------------------------------------------------
    def matrix_to_peer(self, q, M):
        """An (nv, nv) matrix between velocities and forces (a mass matrix, its inverse):
        ``T M Tᵀ``."""
        q = as_array(q, "q", (self.model.nq,))[..., None, :]
        M = as_array(M, "M", (self.model.nv, self.model.nv))
        half = self._tangent_to_peer(q, M)  # rows: M Tᵀ
        return np.swapaxes(self._tangent_to_peer(q, np.swapaxes(half, -1, -2)), -1, -2)

    def matrix_from_peer(self, q_peer, M_peer):
        """The peer's (nv, nv) matrix between velocities and forces in rbd's layout: ``Tᵀ M T``."""
        q = self.q_from_peer(q_peer)[..., None, :]
        M = as_array(M_peer, "M_peer", (self.peer_nv, self.peer_nv))
        half = self._tangent_from_peer(q, M)
        return np.swapaxes(self._tangent_from_peer(q, np.swapaxes(half, -1, -2)), -1, -2)

    def jacobian_to_peer(self, q, J):
        """A (k, nv) Jacobian (``J v`` a velocity) in the peer's columns: ``J Tᵀ``."""
        q = as_array(q, "q", (self.model.nq,))[..., None, :]
        return self._tangent_to_peer(q, _jacobian(J, "J", self.model.nv))

    def jacobian_from_peer(self, q_peer, J_peer):
        """The peer's (k, nv) Jacobian in rbd's columns: ``J T``."""
        q = self.q_from_peer(q_peer)[..., None, :]
        return self._tangent_from_peer(q, _jacobian(J_peer, "J_peer", self.peer_nv))


def _jacobian(J, name, nv):
    """J as a (..., k, nv) array: a row vector (nv,) is not read as a Jacobian of one row."""
    J = as_array(J, name, (nv,))
    if J.ndim < 2:
        raise ValueError("%s must have shape (..., k, %d) (a Jacobian of k rows), got %s" % (name, nv, J.shape))
    return J


def _match(model, peer_names, what):
    check_model(model)
    mine, theirs = set(model.joint_names), set(peer_names)
    if mine != theirs:
        raise ValueError("the rbd model and the %s model do not have the same joints: only in rbd: %s; "
                         "only in %s: %s" % (what, short_names(sorted(mine - theirs)) or "none", what,
                                             short_names(sorted(theirs - mine)) or "none"))


def _check_kind(model, body, peer_kind, what):
    kind = JointKind(int(model.joint_kinds[body]))
    if (kind in _REVOLUTE) != (peer_kind in _REVOLUTE) or (kind not in _REVOLUTE and kind != peer_kind):
        raise ValueError("joint %s is %s in rbd but %s in %s" % (short_repr(model.joint_names[body]),
                                                                 kind.name.lower(), peer_kind.name.lower(), what))


class PinocchioLayout(_Layout):
    """The layout map between an rbd ``model`` and a ``pinocchio.Model`` of the same robot
    (joints matched by name): Pinocchio's joint order, its quaternions ``[x, y, z, w]``,
    its continuous joints ``(cos θ, sin θ)`` and planar ``[x, y, cos θ, sin θ]``.
    Velocities, accelerations and forces are the same vectors, reordered. Mimic joints
    (``load_urdf(..., mimic=True)`` and Pinocchio's ``mimic=True``) have no coordinates of
    their own on either side."""

    def __init__(self, model, pin_model):
        pin = _import("pinocchio", "pin")
        if not isinstance(pin_model, pin.Model):
            raise _peer_type_error("pin_model", "a pinocchio.Model", pin_model)
        _match(model, list(pin_model.names)[1:], "Pinocchio")
        joints, mimics = {}, {m[0] for m in model.mimic}
        for body, name in enumerate(model.joint_names):
            jid = pin_model.getJointId(name)
            pin_mimic, rbd_mimic = pin_model.joints[jid].shortname() == "JointModelMimic", name in mimics
            if pin_mimic != rbd_mimic:
                raise ValueError("joint %s is a mimic joint in %s only (both models must enforce the URDF's "
                                 "<mimic> tags, or neither: rbd.load_urdf(..., mimic=True), "
                                 "pinocchio.buildModelFromUrdf(..., mimic=True))"
                                 % (short_repr(name), "Pinocchio" if pin_mimic else "rbd"))
            if pin_mimic:  # no coordinates of its own on either side: its primary's carry it
                continue
            kind, continuous = _pin_joint(pin_model, jid)
            _check_kind(model, body, kind, "Pinocchio")
            joint = pin_model.joints[jid]
            joints[body] = (joint.idx_q, joint.idx_v, kind in (JointKind.FREE, JointKind.SPHERICAL),
                            continuous or kind == JointKind.PLANAR, False)
        super().__init__(model, pin_model.nq, pin_model.nv, joints)
        self._pin_njoints = int(pin_model.njoints)
        self._pin_joint = np.array([pin_model.getJointId(name) for name in model.joint_names], dtype=np.intp)
        # fext is per joint frame on both sides: the same frames when each joint sits where
        # rbd's body frame does (models of one URDF, from_pinocchio); else no fext converter
        self._same_frames = all(np.allclose(model.joint_placements[body], pin_model.jointPlacements[int(jid)].homogeneous,
                                            rtol=0, atol=1e-9) for body, jid in enumerate(self._pin_joint))
        self._warn_if_dynamics_differ("Pinocchio", np.array(pin_model.gravity.linear), np.array(pin_model.armature))

    def jacobian_from_peer(self, q_peer, J_peer):
        """The peer's (k, nv) Jacobian in rbd's columns; for a one-dof model, Pinocchio's (k,)
        too (its bindings drop the column axis of a (k, 1) matrix)."""
        if self.peer_nv == 1:
            try:
                shape = np.shape(J_peer)
            except (ValueError, TypeError):  # (not array-like: the check below names it)
                shape = ()
            if shape and shape[-1] != 1:
                J_peer = np.expand_dims(np.asarray(J_peer), -1)
        return super().jacobian_from_peer(q_peer, J_peer)

    def _fext_frames(self):
        if not self._same_frames:
            raise ValueError("the rbd model's body frames are not Pinocchio's joint frames (the joints are "
                             "placed differently): the wrenches would have to be moved, which this layout "
                             "does not do")

    def fext_to_peer(self, fext):
        """Pinocchio's ``fext`` of rbd's ``fext`` (..., nbodies, 6): an (..., njoints, 6) array in
        Pinocchio's joint order, the universe's row zero. Both are ``[f; τ]`` on each joint's body
        in that joint's frame (the same frame on both sides: models of one URDF), so the rows are
        only reordered; pass one sample as ``[pinocchio.Force(f) for f in rows]``."""
        self._fext_frames()
        fext = as_array(fext, "fext", (self.model.nbodies, 6))
        peer = np.zeros(fext.shape[:-2] + (self._pin_njoints, 6))
        peer[..., self._pin_joint, :] = fext
        return peer

    def fext_from_peer(self, fext_peer):
        """rbd's ``fext`` (..., nbodies, 6) of Pinocchio's (a sequence of ``pinocchio.Force``, one
        per joint with the universe's first, or an (..., njoints, 6) array): its rows reordered
        (see ``fext_to_peer``); the universe's wrench acts on nothing and is dropped."""
        self._fext_frames()
        if isinstance(fext_peer, (list, tuple)) and fext_peer and hasattr(fext_peer[0], "vector"):
            fext_peer = [np.asarray(f.vector, dtype=float) for f in fext_peer]
        fext_peer = as_array(fext_peer, "fext_peer", (self._pin_njoints, 6))
        return np.ascontiguousarray(fext_peer[..., self._pin_joint, :])


class MujocoLayout(_Layout):
    """The layout map between an rbd ``model`` and a ``mujoco.MjModel`` of the same robot
    (joints matched by name; unnamed MuJoCo joints as named in the module docstring).
    Configurations are reordered (both store quaternions w first; hinge and slide angles
    are the same numbers when the rbd model comes from ``from_mujoco`` or the joints have
    no ``ref``); a free joint's velocity, acceleration and force go through ``T(q)`` (see
    the module docstring). ``fext_from_peer(q_peer, xfrc_applied)`` gives rbd's ``fext`` of
    MuJoCo's applied body wrenches."""

    def __init__(self, model, mj_model):
        mujoco = _import("mujoco", "mujoco")
        if not isinstance(mj_model, mujoco.MjModel):
            raise _peer_type_error("mj_model", "a compiled mujoco.MjModel", mj_model)
        names = _mujoco_joint_names(mj_model)
        _match(model, names, "MuJoCo")
        joints = {}
        for j, name in enumerate(names):
            body, kind = model.joint_id(name), _mj_kind(mujoco, mj_model.jnt_type[j])
            _check_kind(model, body, kind, "MuJoCo")
            joints[body] = (mj_model.jnt_qposadr[j], mj_model.jnt_dofadr[j], False, False, kind == JointKind.FREE)
        super().__init__(model, mj_model.nq, mj_model.nv, joints)
        self._mj_model = mj_model
        gravity_off = mj_model.opt.disableflags & mujoco.mjtDisableBit.mjDSBL_GRAVITY
        self._warn_if_dynamics_differ("MuJoCo", np.zeros(3) if gravity_off else np.array(mj_model.opt.gravity),
                                      np.array(mj_model.dof_armature))
        # The rbd body each MuJoCo body moves with: its last joint's, else its parent's (-1: the world).
        self._rbd_body = [-1] * mj_model.nbody
        for b in range(1, mj_model.nbody):
            count = int(mj_model.body_jntnum[b])
            self._rbd_body[b] = (model.joint_id(names[int(mj_model.body_jntadr[b]) + count - 1]) if count
                                 else self._rbd_body[int(mj_model.body_parentid[b])])

    def fext_from_peer(self, q_peer, xfrc_applied):
        """rbd's ``fext`` (nbodies, 6) of MuJoCo's ``xfrc_applied`` (nbody, 6) at the
        configuration ``q_peer``. MuJoCo's wrench on a body is ``[force; torque]`` in world axes
        at the body's center of mass, rbd's ``[f; τ]`` in the rbd body's frame (at its joint
        anchor, torque about that point): each is moved there and rotated, the wrenches on
        MuJoCo bodies that move with one rbd body added; those on bodies welded to the world
        move nothing and are left out. Batched over leading dimensions."""
        from . import forward_kinematics  # (the active backend's)
        mujoco = _import("mujoco", "mujoco")
        m = self._mj_model
        q_peer = as_array(q_peer, "q_peer", (self.peer_nq,))
        xfrc = as_array(xfrc_applied, "xfrc_applied", (m.nbody, 6))
        try:
            batch = np.broadcast_shapes(q_peer.shape[:-1], xfrc.shape[:-2])
        except ValueError:
            raise ValueError("the batch dimensions of q_peer %s and of xfrc_applied %s do not broadcast together"
                             % (q_peer.shape[:-1], xfrc.shape[:-2])) from None
        q_peer = np.broadcast_to(q_peer, batch + q_peer.shape[-1:]).reshape(-1, self.peer_nq)
        xfrc = np.broadcast_to(xfrc, batch + xfrc.shape[-2:]).reshape(-1, m.nbody, 6)
        placements = forward_kinematics(self.model, self.q_from_peer(q_peer))
        fext = np.zeros((len(q_peer), self.model.nbodies, 6))
        data = mujoco.MjData(m)
        for s in range(len(q_peer)):
            data.qpos[:] = q_peer[s]
            mujoco.mj_kinematics(m, data)  # the centers of mass, xipos
            for b, k in enumerate(self._rbd_body):
                if k < 0:
                    continue
                R, p = placements[s, k, :3, :3], placements[s, k, :3, 3]
                force, torque = xfrc[s, b, :3], xfrc[s, b, 3:]
                fext[s, k, :3] += R.T @ force
                fext[s, k, 3:] += R.T @ (torque + np.cross(data.xipos[b] - p, force))
        return fext.reshape(batch + (self.model.nbodies, 6))
