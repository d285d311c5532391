"""Derived models: a frame added, a payload added, another model attached, joints locked.

Each function returns a new ``Model`` (models are values), built through
``model.assemble_model`` from per-body records, with its bodies put back in
depth-first order and its inertias through the inertia policy (``add_payload`` only
changes inertias: it keeps the model's arrays and body order).

* ``add_frame(model, name, parent_frame, placement)``: a link frame fixed to the
  body of ``parent_frame``, at ``placement`` from it.
* ``add_payload(model, frame, mass, com, inertia, strict=False)``: a rigid payload's
  inertia joined to the body of ``frame``; the payload itself goes through the inertia
  policy (as a fixed link of a URDF does), not only the merged body, which can hide it.
* ``attach(model, other, frame, placement=None, prefix="", strict=False)``: ``other``'s tree mounted
  on ``frame`` of ``model`` (its roots' joints then start from that frame, moved by
  ``placement``); ``other``'s joints are kept as they are (a free flyer stays free,
  relative to the frame); names get ``prefix`` and must stay unique.
* ``lock_joints(model, joints, q, strict=False)``: the joints fixed at their value in ``q``; the
  body of a locked joint merges into its parent (its inertia, its children, its
  frames), and the locked joint's frame stays as a link frame of the same name
  (Pinocchio's buildReducedModel).

``strict=True`` makes a physically inconsistent inertia in what a function returns an
error (ValueError) instead of one warning, as ``load_urdf``, ``ModelBuilder.build`` and
``model.replace(inertias=)`` do.
"""
import collections
import math

import numpy as np

from ._checks import (ResultOverflow, as_array, as_transform, check_model, flag, model_arrays, short_names,
                      short_repr)
from ._inertia import check_inertias
from .model import Model, assemble_model, check_inertia, couple_joints
from . import spatial

__all__ = ["add_frame", "add_payload", "attach", "lock_joints"]


def _records(model):
    """The model as assemble_model's records: one dict per body, one (name, body,
    body_from_frame) per link frame (the joint frames are derived again)."""
    bodies = []
    for i in range(model.nbodies):
        q0, nq = int(model.q_idx[i]), int(model.joint_nq[i])
        v0, nv = int(model.v_idx[i]), int(model.joint_nv[i])
        bodies.append(dict(
            parent=int(model.parents[i]), kind=int(model.joint_kinds[i]), axis=np.array(model.joint_axes[i]),
            placement=np.array(model.joint_placements[i]), inertia=np.array(model.inertias[i]),
            joint=model.joint_names[i], link=model.body_names[i],
            lower=model.lower_limits[q0:q0 + nq], upper=model.upper_limits[q0:q0 + nq],
            velocity=model.velocity_limits[v0:v0 + nv], effort=model.effort_limits[v0:v0 + nv],
            armature=model.armature[v0:v0 + nv], damping=model.damping[v0:v0 + nv],
            friction=model.friction[v0:v0 + nv]))
    frames = [(model.frame_names[f], int(model.frame_parents[f]), np.array(model.frame_offsets[f]))
              for f in range(len(model.link_frame_names))]
    return bodies, frames


def _assemble(name, bodies, frames, gravity, world_inertia, strict=False):
    """A validated Model from records in any parents-first order: bodies put in
    depth-first order (children in their order), names checked unique, inertias
    through the inertia policy (``strict``: an inconsistent one is an error)."""
    for what, names in (("joint", [b["joint"] for b in bodies]), ("link", [b["link"] for b in bodies]),
                        ("frame", [f[0] for f in frames])):
        counts = collections.Counter(names)
        clashes = sorted(n for n, k in counts.items() if k > 1)
        if clashes:
            raise ValueError("the model would have several %ss named %s (use a prefix)" % (what, short_names(clashes)))
    children = [[] for _ in range(len(bodies) + 1)]
    for i, body in enumerate(bodies):
        children[body["parent"] + 1].append(i)
    order, stack = [], list(reversed(children[0]))
    while stack:
        i = stack.pop()
        order.append(i)
        stack.extend(reversed(children[i + 1]))
    new_index = {old: new for new, old in enumerate(order)}
    new_index[-1] = -1
    bodies = [dict(bodies[i], parent=new_index[bodies[i]["parent"]]) for i in order]
    frames = [(n, new_index[b], M) for n, b, M in frames]
    check_inertias(np.array([b["inertia"] for b in bodies]).reshape(-1, 10), [b["link"] for b in bodies],
                   strict=strict)
    return assemble_model(name, bodies, frames, gravity=gravity, world_inertia=world_inertia)


def _recoupled(model, derive, *args):
    """``derive`` applied to a model with mimic joints: to its full model, then coupled again."""
    return couple_joints(derive(model._full, *args), model.mimic)


def add_frame(model, name, parent_frame, placement):
    """A new model with a frame ``name`` fixed to the body of ``parent_frame`` (a name or
    an index), at ``placement`` (4x4, parent_frame_from_new_frame)."""
    check_model(model)
    if model.mimic:
        return _recoupled(model, add_frame, name, parent_frame, placement)
    if not isinstance(name, str):
        raise TypeError("frame name must be a string, got %s" % type(name).__name__)
    if not name:
        raise ValueError("frame name must be a non-empty string, got %s" % short_repr(name))
    if name in model.frame_names:
        raise ValueError("the model already has a frame named %s" % short_repr(name))
    f = model.frame_id(parent_frame)
    placement = as_transform(as_array(placement, "placement", (4, 4), allow_batch=False), "placement")
    bodies, frames = _records(model)
    frames.append((name, int(model.frame_parents[f]), model.frame_offsets[f] @ placement))
    return _assemble(model.name, bodies, frames, model.gravity, model.world_inertia)


def add_payload(model, frame, mass, com, inertia, strict=False):
    """A new model with a rigid payload fixed to ``frame`` (a name or an index):
    ``mass``, its centre of mass ``com`` in the frame's coordinates and its
    rotational ``inertia`` (3x3) about that centre of mass in the frame's axes.
    The payload's inertia joins the inertia of the body the frame is fixed to; body
    order and everything else stay as they are.

    The payload goes through rbd's inertia policy as a fixed link of a URDF would,
    judged against the robot's scale, together with the merged bodies: round-off
    passes; a physically inconsistent payload (a negative principal moment, or
    moments breaking a + b >= c) warns once naming it (``payload on 'FRAME'``), or
    raises ValueError when ``strict``."""
    check_model(model)
    strict = flag(strict, "strict")
    f = model.frame_id(frame)
    body = int(model.frame_parents[f])
    label = "payload on %s" % short_repr(model.frame_names[f], 30)
    if body < 0:
        raise ValueError("frame %s is fixed to the world: a payload there never moves"
                         % short_repr(model.frame_names[f]))
    mass = float(as_array(mass, "mass", (), allow_batch=False))
    com = as_array(com, "com", (3,), allow_batch=False)
    inertia = as_array(inertia, "inertia", (3, 3), allow_batch=False)
    check_inertia(mass, inertia, "the " + label)
    try:
        own = spatial.inertia10_from_mass_com(mass, np.zeros(3), inertia)  # about its com: exact
        payload = spatial.inertia_act(model.frame_offsets[f], spatial.inertia10_from_mass_com(mass, com, inertia))
    except ResultOverflow:
        raise ValueError("the %s: its mass, com and inertia overflow float64 once moved to its body's frame "
                         "(values too large)" % label) from None
    inertias = np.array(model.inertias)
    with np.errstate(over="ignore"):
        inertias[body] += payload
    if not np.all(np.isfinite(inertias[body])):
        raise ValueError("the %s: the body's inertia overflows float64 once the payload is added" % label)
    # One check of the payload beside the merged bodies: the carrier's inertia can hide an
    # impossible payload, and the robot's bodies give the round-off scale (a point mass's
    # 1e-20 is round-off on an arm); one warning names all.
    names = list(model.body_names)
    names[body] = "%s + %s" % (names[body], label)  # (flagged, it is the payload's doing, or both's)
    check_inertias(np.vstack([inertias, own]), names + [label], strict=strict,
                   stacklevel=3)  # (the warning names the user's line)
    # (model.replace would check the merged bodies again: a second warning)
    return Model(**dict(model._definition(), inertias=inertias))


def attach(model, other, frame, placement=None, prefix="", strict=False):
    """A new model: ``other`` mounted on ``frame`` of ``model`` (a name or an index), its
    root joints starting from that frame moved by ``placement`` (4x4, default identity);
    ``other``'s joints, bodies and frames are renamed ``prefix + name``. What ``other`` has
    fixed to its world (a fixed base's root link: ``other.world_inertia``) is fixed to that
    frame now, its mass joins the frame's body (as Pinocchio's appendModel).  Every inertia
    of the result goes through the inertia policy: an inconsistent one warns, or raises
    ValueError when ``strict``."""
    check_model(model)
    check_model(other)
    strict = flag(strict, "strict")
    if other.mimic:
        return couple_joints(attach(model, other._full, frame, placement, prefix, strict),
                             [(prefix + j, prefix + p, m, o) for j, p, m, o in other.mimic])
    if model.mimic:
        return _recoupled(model, attach, other, frame, placement, prefix, strict)
    if not isinstance(prefix, str):
        raise TypeError("prefix must be a string, got %s" % short_repr(prefix))
    # Across the two models every frame name (link and joint frames) must stay one frame's:
    # a link of ``other`` named like a joint of ``model`` would take over that joint's frame.
    clashes = sorted(set(model.frame_names) & {prefix + n for n in other.frame_names})
    if clashes:
        raise ValueError("the model would have several frames named %s (use a prefix)" % short_names(clashes))
    f = model.frame_id(frame)
    mount = model.frame_offsets[f] @ (np.eye(4) if placement is None else
                                      as_transform(as_array(placement, "placement", (4, 4), allow_batch=False),
                                                   "placement"))
    host = int(model.frame_parents[f])
    bodies, frames = _records(model)
    theirs, their_frames = _records(other)
    shift = len(bodies)
    for body in theirs:
        if body["parent"] < 0:
            body.update(parent=host, placement=mount @ body["placement"])
        else:
            body["parent"] += shift
        body.update(joint=prefix + body["joint"], link=prefix + body["link"])
    frames += [(prefix + n, host, mount @ M) if b < 0 else (prefix + n, b + shift, M) for n, b, M in their_frames]
    world_inertia = model.world_inertia
    try:
        mounted = spatial.inertia_act(mount, other.world_inertia)  # (mount: host-body-from-their-world)
    except ResultOverflow:
        raise ValueError("the links of the attached model fixed to its world overflow float64 once mounted on %s "
                         "(placement too far)" % short_repr(frame)) from None
    if host >= 0:
        bodies[host]["inertia"] = bodies[host]["inertia"] + mounted
    else:
        world_inertia = world_inertia + mounted
    return _assemble(model.name, bodies + theirs, frames, model.gravity, world_inertia, strict)


def lock_joints(model, joints, q, strict=False):
    """A reduced model with ``joints`` (names or indices, or one of them) fixed at their
    values in ``q`` (a configuration of ``model``, (nq,)): each locked joint's body
    merges into its parent, with its inertia, children and frames; the other joints
    keep their coordinates, limits, armature, damping and friction.  Joints coupled by
    mimic couplings move together, so locking one of them locks all of them.  The merged
    inertias go through the inertia policy (``strict``: an inconsistent one is an error)."""
    from .reference import _components as sc, joints as joint_kinds  # the joint placements at q

    check_model(model)
    strict = flag(strict, "strict")
    if isinstance(joints, (bytes, bytearray, memoryview)) or (not isinstance(joints, (str, int, np.integer))
                                                  and not hasattr(joints, "__iter__")):  # (bytes: numbers)
        raise TypeError("joints must be a joint (name or index) or a list of them, got %s" % type(joints).__name__)
    names = [joints] if isinstance(joints, (str, int, np.integer)) else list(joints)
    locked = {model.joint_id(j) for j in names}
    _, (q,) = model_arrays(model, q=q)
    if q.ndim != 1:
        raise ValueError("q must be one configuration (%d,), got shape %s" % (model.nq, q.shape))
    if model.mimic:  # lock in the full model, a locked joint's mimics with it
        from ._coupled import expand_q
        locked_names = {model.joint_names[i] for i in locked}
        grown = True
        while grown:  # a coupling's joints move together: locking one of them locks them all
            before = len(locked_names)
            for j, p, _, _ in model.mimic:
                if j in locked_names or p in locked_names:
                    locked_names |= {j, p}
            grown = len(locked_names) > before
        reduced = lock_joints(model._full, sorted(locked_names), expand_q(model, q), strict)
        return couple_joints(reduced, [c for c in model.mimic if c[0] not in locked_names])
    trig = (math.cos, math.sin, math.sqrt)
    constants = sc.constants(model)
    bodies, frames = _records(model)
    host, to_host = [None] * model.nbodies, [None] * model.nbodies  # where a body ends up, and how
    for i in range(model.nbodies):
        if i not in locked:
            host[i], to_host[i] = i, np.eye(4)
            continue
        R, p = joint_kinds.placement(constants[i], q.tolist(), trig)  # parent_from_body at q
        X = np.eye(4)
        X[:3, :3], X[:3, 3] = np.reshape(R, (3, 3)), p
        parent = bodies[i]["parent"]
        host[i], to_host[i] = (-1, X) if parent < 0 else (host[parent], to_host[parent] @ X)
    kept, new_frames = [], []
    world_inertia = model.world_inertia
    link_frames = set(model.link_frame_names)
    for i, body in enumerate(bodies):
        if i in locked:
            try:
                merged = spatial.inertia_act(to_host[i], body["inertia"])
            except ResultOverflow:
                raise ValueError("locked joint %s: its body's inertia overflows float64 once moved into its host "
                                 "(q too large)" % short_repr(body["joint"])) from None
            if host[i] >= 0:
                bodies[host[i]]["inertia"] = bodies[host[i]]["inertia"] + merged
            else:  # locked to the world: fixed to it now
                world_inertia = world_inertia + merged
            if body["joint"] not in link_frames:  # the locked joint's frame stays
                new_frames.append((body["joint"], host[i], to_host[i]))
            continue
        parent = body["parent"]
        if parent >= 0:
            body.update(parent=host[parent], placement=to_host[parent] @ body["placement"])
        kept.append(i)
    frames = [(n, b, M) if b < 0 else (n, host[b], to_host[b] @ M) for n, b, M in frames] + new_frames
    index = {old: new for new, old in enumerate(kept)}
    index[-1] = -1
    records = [dict(bodies[i], parent=index[bodies[i]["parent"]]) for i in kept]
    return _assemble(model.name, records, [(n, index[b], M) for n, b, M in frames], model.gravity, world_inertia,
                     strict)
