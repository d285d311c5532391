"""Robot models: a tree of joints and rigid bodies held in flat NumPy arrays.

A ``Model`` is plain data that both backends read directly:

=====================  ==============  ==================================================
attribute              shape           meaning
=====================  ==============  ==================================================
``parents``            (nbodies,)      index of the parent body, -1 for the world
``joint_kinds``        (nbodies,)      a ``JointKind`` code per body
``joint_axes``         (nbodies, 3)    unit axis of revolute/prismatic joints (joint frame)
``joint_placements``   (nbodies, 4, 4) parent-body-from-joint transform (constant)
``inertias``           (nbodies, 10)   ``[m, m*c, Ixx, Ixy, Ixz, Iyy, Iyz, Izz]``: mass,
                                       first moment, rotational inertia about the BODY
                                       ORIGIN, all in body axes (see ``rbd.spatial``)
``q_idx``, ``v_idx``   (nbodies,)      where each joint's coordinates start in q and v
``joint_nq``, ``joint_nv`` (nbodies,)  how many coordinates each joint has
``frame_parents``      (nframes,)      body each frame is fixed to (-1: the world)
``frame_offsets``      (nframes, 4, 4) body-from-frame transform (constant; ``rbd.frame_placements``
                                       is the world placement of every frame at q)
``world_inertia``      (10,)           the mass fixed to the world (a fixed base's root link
                                       and the links welded to it), about the world origin in
                                       world axes: no joint moves it, so the algorithms (and
                                       ``total_mass``) leave it out; ``rbd.attach`` mounts it
                                       with the rest of a model
=====================  ==============  ==================================================

Bodies are ordered depth-first from the root, children in the order they were
added (for URDF: the order they appear in the file), so ``parents[i] < i``.
A body's frame is its joint's output frame: ``world_from_body[i] =
world_from_body[parents[i]] @ joint_placements[i] @ joint_transform(q_i)``.

Joints (``q`` = configuration coordinates, ``v`` = velocity coordinates):

* ``REVOLUTE_X/Y/Z``, ``REVOLUTE``: rotation by the angle q about the axis;
  nq = nv = 1; motion subspace ``S = [0; axis]``. The X/Y/Z kinds are the
  fast special cases of an axis equal to a unit basis vector.
* ``PRISMATIC``: translation by q along the axis; nq = nv = 1; ``S = [axis; 0]``.
* ``SPHERICAL``: q is a unit quaternion ``[w, x, y, z]``, v the angular
  velocity in the child (body) axes; nq = 4, nv = 3; ``S = [0; I3]``.
* ``PLANAR``: motion in the joint frame's x-y plane: q = ``[x, y, theta]``,
  v the body twist components ``[vx, vy, wz]``; nq = nv = 3; integrated with
  the SE(2) exponential.
* ``FREE``: q = ``[x, y, z, qw, qx, qy, qz]``, v the body twist ``[v; w]``
  in the body (local) frame; nq = 7, nv = 6; ``S = I6``; integrated with the
  SE(3) exponential.

The motion subspace of every kind is constant in the body frame, so no joint
has a bias acceleration term.
"""
import difflib
import enum
from dataclasses import dataclass, field

import numpy as np

from . import spatial
from ._checks import (ResultOverflow, _real_array, as_array, as_transform, check_model, flag, is_rotation, real_number,
                      short_names, short_repr)
from ._inertia import check_inertias


class JointKind(enum.IntEnum):
    REVOLUTE_X = 0
    REVOLUTE_Y = 1
    REVOLUTE_Z = 2
    REVOLUTE = 3
    PRISMATIC = 4
    SPHERICAL = 5
    PLANAR = 6
    FREE = 7


#: What a configuration coordinate is (for sampling and display).
ANGLE, LENGTH, QUATERNION = "angle", "length", "quaternion"


@dataclass(frozen=True)
class JointKindSpec:
    """What rbd needs to know about the coordinates of a joint kind.  How each kind
    moves is in one place per backend: ``rbd.reference.joints`` and
    ``rbd_c/_joints.pxd`` (whose table a test holds equal to this one)."""
    nq: int
    nv: int
    roles: tuple        # one of ANGLE, LENGTH, QUATERNION per q coordinate
    quaternion: int     # where the unit quaternion starts in the joint's q (-1: none)
    basis: int          # 0, 1, 2: a revolute joint about x, y, z of its frame (-1: other)
    columns: tuple      # S as unit columns e_k of the body twist (empty: S uses the axis)


#: The joint kinds: adding one starts with a row here.
JOINT_KINDS = {
    JointKind.REVOLUTE_X: JointKindSpec(1, 1, (ANGLE,), -1, 0, (3,)),
    JointKind.REVOLUTE_Y: JointKindSpec(1, 1, (ANGLE,), -1, 1, (4,)),
    JointKind.REVOLUTE_Z: JointKindSpec(1, 1, (ANGLE,), -1, 2, (5,)),
    JointKind.REVOLUTE: JointKindSpec(1, 1, (ANGLE,), -1, -1, ()),
    JointKind.PRISMATIC: JointKindSpec(1, 1, (LENGTH,), -1, -1, ()),
    JointKind.SPHERICAL: JointKindSpec(4, 3, (QUATERNION,) * 4, 0, -1, (3, 4, 5)),
    JointKind.PLANAR: JointKindSpec(3, 3, (LENGTH, LENGTH, ANGLE), -1, -1, (0, 1, 5)),
    JointKind.FREE: JointKindSpec(7, 6, (LENGTH,) * 3 + (QUATERNION,) * 4, 3, -1, (0, 1, 2, 3, 4, 5)),
}

#: (nq, nv) of each joint kind.
JOINT_DIMENSIONS = {kind: (spec.nq, spec.nv) for kind, spec in JOINT_KINDS.items()}

# Joint type names accepted by ModelBuilder.add_joint (URDF names plus ours).
_KIND_BY_NAME = {
    "revolute": JointKind.REVOLUTE,
    "continuous": JointKind.REVOLUTE,
    "prismatic": JointKind.PRISMATIC,
    "spherical": JointKind.SPHERICAL,
    "ball": JointKind.SPHERICAL,
    "planar": JointKind.PLANAR,
    "floating": JointKind.FREE,
    "free": JointKind.FREE,
    "fixed": None,
}

_BASIS_AXIS_KIND = {0: JointKind.REVOLUTE_X, 1: JointKind.REVOLUTE_Y, 2: JointKind.REVOLUTE_Z}


# The arguments that define a model, in the constructor's order: what pickling,
# equality and ``replace`` work from.
_DEFINING = ("name", "parents", "joint_kinds", "joint_axes", "joint_placements", "inertias",
             "joint_names", "body_names", "frame_names", "frame_parents", "frame_offsets",
             "lower_limits", "upper_limits", "velocity_limits", "effort_limits", "gravity",
             "armature", "damping", "friction", "mimic", "world_inertia")


class _Cache:
    """Everything a backend derives from a model and keeps for its next call: the
    compiled view (rbd_c) and the reference's per-body and per-frame tables.  One
    per model, private, and never part of its value (not pickled, not compared)."""

    __slots__ = ("compiled", "bodies", "frames", "joint_table", "contacts", "singular_tol")

    def __init__(self):
        self.compiled = self.bodies = self.frames = self.joint_table = self.contacts = self.singular_tol = None


class Model:
    """A kinematic tree; build it with ``ModelBuilder`` or ``rbd.load_urdf``.

    A model is a value: its attributes cannot be reassigned and its arrays are
    read-only for good (``setflags(write=True)`` fails), so one model is safely
    shared by every call and thread.  A changed model is derived with
    ``model.replace(...)`` (gravity, inertias, armature, damping, friction) or
    ``rbd.add_payload``; each derived model is validated anew.  Models pickle and
    compare by content.
    """

    def __init__(self, name, parents, joint_kinds, joint_axes, joint_placements, inertias,
                 joint_names, body_names, frame_names, frame_parents, frame_offsets,
                 lower_limits, upper_limits, velocity_limits, effort_limits, gravity=(0.0, 0.0, -9.81),
                 armature=None, damping=None, friction=None, mimic=(), world_inertia=None):
        set_ = object.__setattr__.__get__(self)
        set_("name", str(name))
        set_("parents", _frozen(_integers(parents, "parents"), np.intp))
        nb = len(self.parents)
        set_("joint_kinds", _frozen(_integers(joint_kinds, "joint_kinds"), np.intc))
        if self.joint_kinds.shape != (nb,):
            raise ValueError("joint_kinds must have one entry per body (%d), got shape %s"
                             % (nb, self.joint_kinds.shape))
        known = [int(k) for k in JointKind]
        if not all(int(k) in known for k in self.joint_kinds):
            raise ValueError("joint_kinds holds an unknown joint kind (known: %s)" % known)
        if nb and (np.any(self.parents >= np.arange(nb)) or np.any(self.parents < -1)):
            raise ValueError("parents must list each body after its parent (-1 <= parents[i] < i)")
        set_("joint_axes", _frozen(joint_axes, np.float64, (nb, 3), "joint_axes"))
        set_("joint_placements", _frozen(joint_placements, np.float64, (nb, 4, 4), "joint_placements"))
        set_("inertias", _frozen(inertias, np.float64, (nb, 10), "inertias"))
        set_("joint_names", _names_tuple(joint_names, nb, "joint_names"))
        set_("body_names", _names_tuple(body_names, nb, "body_names"))
        _check_values(self)
        # The given frames (links, tool points: "link frames"), then one frame per joint: its
        # output frame, the body's own frame (reachable by model.joint_frame(name), and by
        # its plain name where no link frame has it).
        links = _names_tuple(frame_names, None, "frame_names")
        nl = len(links)
        link_parents = _frozen(frame_parents, np.intp, (nl,), "frame_parents")
        if np.any(link_parents >= nb) or np.any(link_parents < -1):
            raise ValueError("frame_parents must name bodies (-1 <= frame_parents[f] < nbodies)")
        link_offsets = _frozen(frame_offsets, np.float64, (nl, 4, 4), "frame_offsets")
        as_transform(link_offsets, "frame_offsets")  # (raises unless every one is rigid)
        set_("_link_frames", nl)
        set_("frame_names", links + self.joint_names)
        nf = len(self.frame_names)
        set_("frame_parents", _frozen(np.concatenate([link_parents, np.arange(nb)]), np.intp))
        set_("frame_offsets", _frozen(np.concatenate([link_offsets, np.broadcast_to(np.eye(4), (nb, 4, 4))]),
                                      np.float64))

        dims = np.array([JOINT_DIMENSIONS[JointKind(k)] for k in self.joint_kinds], dtype=np.intp).reshape(-1, 2)
        set_("joint_nq", _frozen(dims[:, 0], np.intp))
        set_("joint_nv", _frozen(dims[:, 1], np.intp))
        set_("q_idx", _frozen(np.concatenate([[0], np.cumsum(dims[:, 0])[:-1]]) if nb else [], np.intp))
        set_("v_idx", _frozen(np.concatenate([[0], np.cumsum(dims[:, 1])[:-1]]) if nb else [], np.intp))
        set_("nbodies", nb)
        set_("nq", int(dims[:, 0].sum()))
        set_("nv", int(dims[:, 1].sum()))
        set_("nframes", nf)

        set_("lower_limits", _frozen(lower_limits, np.float64, (self.nq,), "lower_limits"))
        set_("upper_limits", _frozen(upper_limits, np.float64, (self.nq,), "upper_limits"))
        set_("velocity_limits", _frozen(velocity_limits, np.float64, (self.nv,), "velocity_limits"))
        set_("effort_limits", _frozen(effort_limits, np.float64, (self.nv,), "effort_limits"))
        _check_limits(self)
        set_("gravity", _frozen(as_array(gravity, "gravity", (3,), allow_batch=False), np.float64))
        for key, value in (("armature", armature), ("damping", damping), ("friction", friction)):
            values = np.zeros(self.nv) if value is None else as_array(value, key, (self.nv,), allow_batch=False)
            if np.any(values < 0.0):
                raise ValueError("%s must be non-negative (one value per velocity coordinate)" % key)
            set_(key, _frozen(values, np.float64))
        world = np.zeros(10) if world_inertia is None else as_array(world_inertia, "world_inertia", (10,),
                                                                    allow_batch=False)
        if world[0] < 0.0:
            raise ValueError("world_inertia must have a non-negative mass, got %s" % short_repr(world[0]))
        set_("world_inertia", _frozen(world, np.float64))

        # Where each unit quaternion (spherical, free-flyer) starts in q.
        set_("quaternion_q_idx", _frozen([self.q_idx[i] + JOINT_KINDS[JointKind(k)].quaternion
                                          for i, k in enumerate(self.joint_kinds)
                                          if JOINT_KINDS[JointKind(k)].quaternion >= 0], np.intp))
        set_("_joint_index", {n: i for i, n in enumerate(self.joint_names)})
        frame_index = {n: nl + i for i, n in enumerate(self.joint_names)}
        frame_index.update((n, i) for i, n in enumerate(links))  # link frames win a name
        set_("_frame_index", frame_index)
        # _children[i + 1]: the bodies whose parent is i, in order (i = -1: the world's).
        children = [[] for _ in range(nb + 1)]
        for i, p in enumerate(self.parents.tolist()):
            children[p + 1].append(i)
        set_("_children", tuple(tuple(c) for c in children))
        set_("_cache", _Cache())
        set_("mimic", ())
        set_("_full", None)
        if mimic:
            _couple(self, mimic)

    # -- a value ----------------------------------------------------------------------
    def __setattr__(self, key, value):
        raise AttributeError("rbd.Model is immutable: %r cannot be set; derive a changed model with "
                             "model.replace(...) or rbd.add_payload(...)" % key)

    def __delattr__(self, key):
        raise AttributeError("rbd.Model is immutable: %r cannot be deleted" % key)

    def _definition(self):
        if self._full is not None:  # mimic joints: the full model's arrays, and the couplings
            return dict(self._full._definition(), mimic=self.mimic)
        definition = {key: getattr(self, key) for key in _DEFINING}
        for key in ("frame_names", "frame_parents", "frame_offsets"):  # the joint frames are derived
            definition[key] = definition[key][:self._link_frames]
        return definition

    def __reduce__(self):
        return (_rebuild, (self._definition(),))  # the cache is rebuilt on first use

    def __copy__(self):
        return self

    def __deepcopy__(self, memo):
        return self

    def __eq__(self, other):
        if not isinstance(other, Model):
            return NotImplemented
        if self is other:
            return True
        mine, theirs = self._definition(), other._definition()
        return all(np.array_equal(mine[k], theirs[k]) if isinstance(mine[k], np.ndarray) else mine[k] == theirs[k]
                   for k in _DEFINING)

    def __hash__(self):
        # Equal models have equal names, sizes and joint names; the arrays stay out (costly).
        return hash((self.name, self.nq, self.nv, self.nbodies, self.joint_names))

    def replace(self, *, strict=False, **changes):
        """A new model equal to this one but for ``changes``, validated anew:
        ``gravity`` (3,), ``inertias`` (nbodies, 10) in this model's storage (see
        ``rbd.spatial``; checked by rbd's inertia policy: a physically inconsistent
        inertia warns, or raises ValueError when ``strict``), ``armature``, ``damping``,
        ``friction`` (nv,) each, non-negative.  Armature enters the mass matrix and
        everything built on it; damping and friction are stored for the user (the
        rigid-body algorithms do not apply them)."""
        strict = flag(strict, "strict")
        allowed = ("gravity", "inertias", "armature", "damping", "friction")
        unknown = sorted(set(changes) - set(allowed))
        if self.mimic and set(changes) & {"armature", "damping", "friction"}:
            raise ValueError("a model with mimic joints takes armature, damping and friction from the model "
                             "it couples: set them before coupling its joints (rbd.couple_joints)")
        if unknown:
            raise TypeError("replace() got unexpected keyword argument(s) %s (allowed: %s)"
                            % (", ".join(unknown), ", ".join(allowed)))
        for key, value in changes.items():
            if value is None:  # (None would otherwise read as "unchanged" here and "zeros" in Model())
                raise TypeError("replace(%s=None): give %s as an array" % (key, key))
        definition = self._definition()
        if changes.get("inertias") is not None:
            inertias = as_array(changes["inertias"], "inertias", (self.nbodies, 10), allow_batch=False)
            check_inertias(inertias, self.body_names, strict=strict)
            changes["inertias"] = inertias
        definition.update({k: v for k, v in changes.items() if v is not None})
        return Model(**definition)

    # -- lookups -----------------------------------------------------------------------
    def joint_id(self, joint):
        """Index of a joint (= of its body) given by name or index."""
        return _lookup(joint, self._joint_index, self.nbodies, "joint")

    def frame_id(self, frame):
        """Index of a frame given by name or index."""
        return _lookup(frame, self._frame_index, self.nframes, "frame")

    @property
    def coupling(self):
        """G (full nv, nv) with v_full = G v (dense: built on each access, full nv x nv
        numbers; the algorithms apply it without forming it, and ``coupling_entries`` gives
        it in memory linear in the model); the identity for a model without mimic joints."""
        source, scale = self.coupling_entries
        G = np.zeros((len(source), self.nv))
        G[np.arange(len(source)), source] = scale
        return _frozen(G, np.float64)

    @property
    def coupling_entries(self):
        """(source, scale): G's one entry per row, ``v_full[i] = scale[i] * v[source[i]]``
        (read-only arrays of the full nv); ``(arange(nv), ones(nv))`` for a model without
        mimic joints (v_full is v: code written for coupled models runs on every model)."""
        if self._full is None:
            source, scale = np.arange(self.nv), np.ones(self.nv)
        else:
            source, scale = self._v_map
        return _frozen(source, np.intp), _frozen(scale, np.float64)

    @property
    def link_frame_names(self):
        """The names of the frames the model was given (URDF links, tool points), before
        the joint frames: ``frame_names[:len(link_frame_names)]``."""
        return self.frame_names[:self._link_frames]

    def joint_frame(self, joint):
        """Index of the frame of a joint (its output frame, the frame of its body), given
        by the joint's name or index; reachable by the joint's plain name as well where
        no link frame has that name."""
        return self._link_frames + self.joint_id(joint)

    def joint_idx_q(self, name):
        """Where the joint's coordinates start in ``q``."""
        return int(self.q_idx[self.joint_id(name)])

    def joint_idx_v(self, name):
        """Where the joint's coordinates start in ``v``."""
        return int(self.v_idx[self.joint_id(name)])

    @property
    def total_mass(self):
        return float(self.inertias[:, 0].sum())

    @property
    def has_floating_base(self):
        return self.nbodies > 0 and self.joint_kinds[0] == JointKind.FREE and self.parents[0] == -1

    # -- display -----------------------------------------------------------------------
    def tree_string(self):
        """The tree as indented text: one line per joint with its kind and mass.  Below
        depth 32 the indentation stops growing and the line says its depth, so the
        text stays linear in the number of bodies however deep the chain."""
        lines = ["%s: %d bodies, nq = %d, nv = %d, mass = %.3f kg"
                 % (self.name or "<unnamed>", self.nbodies, self.nq, self.nv, self.total_mass)]

        stack = [(child, 1) for child in reversed(self._children[0])]  # iterative: any depth
        while stack:
            child, depth = stack.pop()
            kind = JointKind(self.joint_kinds[child]).name.lower()
            indent = "  " * depth if depth <= _MAX_INDENT else "  " * _MAX_INDENT + "(depth %d) " % depth
            lines.append("%s%s [%s] -> %s (%.3f kg)" % (indent, self.joint_names[child], kind,
                                                         self.body_names[child], self.inertias[child, 0]))
            stack.extend((grandchild, depth + 1) for grandchild in reversed(self._children[child + 1]))
        return "\n".join(lines)

    def __repr__(self):
        return "<rbd.Model %r: nbodies=%d nq=%d nv=%d>" % (self.name, self.nbodies, self.nq, self.nv)


_MAX_INDENT = 32  # tree_string's deepest indentation


def _frozen(values, dtype, shape=None, name=None):
    """``values`` as an array of ``dtype`` that stays read-only: it lives on an
    immutable bytes buffer, so ``setflags(write=True)`` fails too."""
    arr = np.asarray(values, dtype=dtype)
    if shape is not None:
        if arr.size == 0 and 0 in shape:
            arr = arr.reshape(shape)
        if arr.shape != shape:
            raise ValueError("%s must have shape %s, got %s" % (name, shape, arr.shape))
    return np.frombuffer(arr.tobytes(), dtype=dtype).reshape(arr.shape)


def _integers(values, name):
    """Indices and kind codes: whole numbers (a float array would be truncated)."""
    arr = np.asarray(values)
    whole = arr.size == 0 or (arr.dtype.kind == "f" and np.all(arr == np.round(arr)))
    if arr.dtype.kind not in "iu" and not whole:
        raise TypeError("%s must hold integers, got %s" % (name, short_repr(values)))
    return arr


def _check_values(model):
    """What every algorithm assumes of a model's arrays (the builder and the loaders give
    them so; rbd.Model(...) and replace(...) are checked here): rigid joint placements,
    unit axes where a joint moves along its axis (the basis vector of a REVOLUTE_X/Y/Z
    joint), finite inertias of non-negative mass,
    one body per joint name."""
    as_transform(model.joint_placements, "joint_placements")  # (raises unless every one is rigid)
    generic = np.isin(model.joint_kinds, [int(JointKind.REVOLUTE), int(JointKind.PRISMATIC)])
    norms = np.linalg.norm(model.joint_axes, axis=1)
    not_unit = np.flatnonzero(generic & ~(np.abs(norms - 1.0) <= 1e-9))
    if not_unit.size:
        bad = int(not_unit[0])
        raise ValueError("joint_axes[%d] (joint %s) must be a unit vector, got norm %s"
                         % (bad, short_repr(model.joint_names[bad]), short_repr(float(norms[bad]))))
    for axis, kind in _BASIS_AXIS_KIND.items():  # the kind says the axis: joint_axes must agree
        wrong = np.flatnonzero((model.joint_kinds == int(kind)) & np.any(model.joint_axes != np.eye(3)[axis], axis=1))
        if wrong.size:
            bad = int(wrong[0])
            raise ValueError("joint_axes[%d] (joint %s) must be %s for kind %s, got %s (kind REVOLUTE takes any axis)"
                             % (bad, short_repr(model.joint_names[bad]), np.eye(3)[axis].tolist(), kind.name,
                                model.joint_axes[bad].tolist()))
    Y = model.inertias
    if not np.all(np.isfinite(Y)) or np.any(Y[:, 0] < 0.0):
        raise ValueError("inertias must be finite with non-negative masses (the 10 numbers of each body)")
    if len(set(model.joint_names)) != len(model.joint_names):
        raise ValueError("joint_names must be unique: %s" % short_names(
            sorted({n for n in model.joint_names if model.joint_names.count(n) > 1})))


def _check_limits(model):
    lower, upper = model.lower_limits, model.upper_limits
    if np.any(np.isnan(lower)) or np.any(np.isnan(upper)) or np.any(lower > upper):
        raise ValueError("lower_limits and upper_limits must be numbers (±inf: none) with lower <= upper")
    for key in ("velocity_limits", "effort_limits"):
        if not np.all(getattr(model, key) >= 0.0):  # (NaN fails too)
            raise ValueError("%s must be non-negative (inf: none)" % key)


def _names_tuple(names, count, what):
    names = tuple(str(n) for n in names)
    if count is not None and len(names) != count:
        raise ValueError("%s must have one name per body (%d), got %d" % (what, count, len(names)))
    return names


def _rebuild(definition):
    return Model(**definition)


# ------------------------------------------------------------------------------------------
# Mimic joints
# ------------------------------------------------------------------------------------------
_COUPLABLE = (JointKind.REVOLUTE_X, JointKind.REVOLUTE_Y, JointKind.REVOLUTE_Z, JointKind.REVOLUTE,
              JointKind.PRISMATIC)


def _couple(model, mimic):
    """Turn ``model`` (just built with every joint independent) into a model with mimic
    joints: each ``(joint, primary, multiplier, offset)`` makes q_joint = multiplier *
    q_primary + offset.  The public coordinates (nq, nv, q_idx, v_idx, limits) become those
    of the independent joints, armature, damping and friction their effective values there
    (a mimic joint's added to its primary's); ``_full`` keeps the model of
    every joint, on which the algorithms run (``rbd._coupled``); ``coupling`` is G with
    v_full = G v."""
    set_ = object.__setattr__.__get__(model)
    definition = model._definition()
    full = Model(**definition)
    rules = {}
    for item in mimic:
        try:
            joint, primary, multiplier, offset = item
        except (TypeError, ValueError):
            raise ValueError("each mimic coupling must be (joint, primary, multiplier, offset), got %s"
                             % short_repr(item)) from None
        j, p = full.joint_id(joint), full.joint_id(primary)
        multiplier, offset = (real_number(value, "mimic joint %s: %s" % (short_repr(joint), key))
                              for key, value in (("multiplier", multiplier), ("offset", offset)))
        for k, role in ((j, "mimic joint"), (p, "primary joint")):
            if JointKind(int(full.joint_kinds[k])) not in _COUPLABLE:
                raise ValueError("%s %s must be revolute, continuous or prismatic" % (role, short_repr(full.joint_names[k])))
        if j == p or j in rules or not np.isfinite(multiplier) or not np.isfinite(offset):
            raise ValueError("mimic joint %s: a joint mimics one other joint once, with finite multiplier and "
                             "offset" % short_repr(full.joint_names[j]))
        rules[j] = (p, multiplier, offset)
    # q_j = m q_p + o, with the primary itself perhaps a mimic: resolve to an independent joint
    # (each joint once: a chain of k mimics costs k, not k^2, as every rebuild of the model runs this)
    resolved = {}
    for j in rules:
        path, on_path, p = [], set(), j
        while p in rules and p not in resolved:  # up to an independent joint, or one resolved already
            if p in on_path:  # (the joints from p on: those before it only lead into the cycle)
                raise ValueError("mimic joints %s form a cycle"
                                 % short_names([full.joint_names[k] for k in path[path.index(p):]]))
            path.append(p)
            on_path.add(p)
            p = rules[p][0]
        for k in reversed(path):  # q_k = m q_primary + o, the primary's own rule resolved already
            primary, m, o = rules[k]
            root, m2, o2 = resolved.get(primary, (primary, 1.0, 0.0))
            resolved[k] = (root, m * m2, m * o2 + o)
    nb = full.nbodies
    q_idx, v_idx = np.zeros(nb, np.intp), np.zeros(nb, np.intp)
    nq = nv = 0
    for i in range(nb):
        if i not in resolved:
            q_idx[i], v_idx[i] = nq, nv
            nq, nv = nq + int(full.joint_nq[i]), nv + int(full.joint_nv[i])
    q_source, q_scale, q_offset = np.zeros(full.nq, np.intp), np.ones(full.nq), np.zeros(full.nq)
    v_source, v_scale = np.zeros(full.nv, np.intp), np.ones(full.nv)
    for i in range(nb):
        p, m, o = resolved.get(i, (i, 1.0, 0.0))
        for k in range(int(full.joint_nq[i])):
            q_source[full.q_idx[i] + k], q_scale[full.q_idx[i] + k] = q_idx[p] + k, m
            q_offset[full.q_idx[i] + k] = o
        for k in range(int(full.joint_nv[i])):
            v_source[full.v_idx[i] + k], v_scale[full.v_idx[i] + k] = v_idx[p] + k, m
        if i in resolved:
            q_idx[i], v_idx[i] = q_idx[p], v_idx[p]
    independent_q = np.concatenate([np.arange(full.q_idx[i], full.q_idx[i] + full.joint_nq[i])
                                    for i in range(nb) if i not in resolved] or [np.zeros(0, np.intp)])
    independent_v = np.concatenate([np.arange(full.v_idx[i], full.v_idx[i] + full.joint_nv[i])
                                    for i in range(nb) if i not in resolved] or [np.zeros(0, np.intp)])
    set_("_full", full)
    set_("mimic", tuple((full.joint_names[j], full.joint_names[p], m, o)
                        for j, (p, m, o) in ((j, rules[j]) for j in sorted(rules))))
    set_("nq", nq)
    set_("nv", nv)
    set_("q_idx", _frozen(q_idx, np.intp))
    set_("v_idx", _frozen(v_idx, np.intp))
    set_("joint_nq", _frozen([0 if i in resolved else full.joint_nq[i] for i in range(nb)], np.intp))
    set_("joint_nv", _frozen([0 if i in resolved else full.joint_nv[i] for i in range(nb)], np.intp))
    for key in ("lower_limits", "upper_limits"):
        set_(key, _frozen(getattr(full, key)[independent_q], np.float64))
    for key in ("velocity_limits", "effort_limits"):
        set_(key, _frozen(getattr(full, key)[independent_v], np.float64))
    # The passive terms on the independent coordinates, G^T diag(x) G (diagonal: each row of G
    # has one entry): a mimic joint's armature and damping add scale^2 of theirs to its
    # primary's, its friction |scale| of its own (a coupled gripper's two fingers: twice one's)
    with np.errstate(over="ignore", invalid="ignore"):  # (a multiplier of 1e200: inf where x is not 0)
        for key, weight in (("armature", v_scale ** 2), ("damping", v_scale ** 2), ("friction", np.abs(v_scale))):
            x, reduced = getattr(full, key), np.zeros(nv)
            np.add.at(reduced, v_source, np.where(x != 0.0, weight * x, 0.0))
            set_(key, _frozen(reduced, np.float64))
    set_("quaternion_q_idx", _frozen([q_idx[i] + JOINT_KINDS[JointKind(k)].quaternion
                                      for i, k in enumerate(full.joint_kinds)
                                      if JOINT_KINDS[JointKind(k)].quaternion >= 0], np.intp))
    set_("_q_map", (q_source, q_scale, q_offset))
    set_("_v_map", (v_source, v_scale))
    set_("_independent", (independent_q, independent_v))
    # G has one entry per row (v_full = G v): kept as those entries, not as the dense
    # (full nv, nv) matrix, which a long chain with one coupling would square
    set_("_mimic_v_rows", np.setdiff1d(np.arange(full.nv), independent_v))


def couple_joints(model, mimic):
    """A new model whose ``mimic`` joints follow others: ``mimic`` is a list of
    ``(joint, primary, multiplier, offset)`` with q_joint = multiplier * q_primary +
    offset (revolute or prismatic joints).  Its ``q``, ``v``, ``a``, ``tau`` hold the
    independent joints only (``nv`` counts them); a mimic joint's ``joint_idx_q``/``_v``
    is its primary's; every algorithm accounts for the couplings (``rnea`` returns the
    generalized forces on the independent coordinates, G^T tau_full)."""
    check_model(model)
    definition = model._definition()
    return Model(**dict(definition, mimic=tuple(definition["mimic"]) + tuple(mimic)))


def _lookup(key, index, count, what):
    if isinstance(key, (int, np.integer)) and not isinstance(key, bool):
        if not -count <= key < count:
            raise ValueError("%s index %d out of range for a model with %d %ss" % (what, key, count, what))
        return int(key) % count
    if isinstance(key, str):
        try:
            return index[key]
        except KeyError:  # (the closest names first, then the model's own order: its links before joint frames)
            close = difflib.get_close_matches(key, list(index), n=3)
            raise ValueError("unknown %s %s (%sknown: %s)" % (
                what, short_repr(key), "did you mean %s? " % " or ".join(map(short_repr, close)) if close else "",
                short_names(sorted(index, key=index.get)))) from None
    raise TypeError("%s must be a name (str) or an index (int), got %r" % (what, type(key).__name__))


# ------------------------------------------------------------------------------------------
# Builder
# ------------------------------------------------------------------------------------------
@dataclass
class _Link:
    name: str
    inertia10: np.ndarray  # about the link origin, link axes


@dataclass
class _Joint:
    name: str
    kind: object  # JointKind, or None for fixed
    parent: str
    child: str
    origin: np.ndarray  # parent-link-from-joint 4x4
    axis: np.ndarray
    lower: np.ndarray = field(default=None)
    upper: np.ndarray = field(default=None)
    velocity: float = np.inf
    effort: float = np.inf
    armature: np.ndarray = field(default=None)  # one value per velocity coordinate
    damping: np.ndarray = field(default=None)
    friction: np.ndarray = field(default=None)


class ModelBuilder:
    """Write a model link by link, as a URDF does.

    >>> b = ModelBuilder("pendulum")
    >>> b.add_link("base")
    >>> b.add_link("arm", mass=1.0, com=[0, 0, -0.5], inertia=np.diag([0.01, 0.01, 0.0]))
    >>> b.add_joint("hinge", "revolute", parent="base", child="arm", axis=[1, 0, 0])
    >>> model = b.build()

    ``fixed`` joints merge the child link into its parent body (the link stays
    a frame); the root link is fixed to the world unless ``build(floating_base=True)``
    adds a free-flyer joint named ``root_joint``.
    """

    def __init__(self, name="robot"):
        self.name = name
        self._links = {}
        self._joints = []

    def add_link(self, name, mass=0.0, com=(0.0, 0.0, 0.0), inertia=None):
        """Add a link with its mass, center of mass ``com`` (link coordinates) and
        rotational inertia ``inertia`` (3x3, about the com, link axes)."""
        if not isinstance(name, str) or not name:
            raise ValueError("link name must be a non-empty string, got %s" % short_repr(name))
        if name in self._links:
            raise ValueError("link %s is defined twice" % short_repr(name))
        mass = float(as_array(mass, "mass of link %s" % short_repr(name), (), allow_batch=False))
        com = as_array(com, "com of link %s" % short_repr(name), (3,), allow_batch=False)
        inertia = np.zeros((3, 3)) if inertia is None else as_array(
            inertia, "inertia of link %s" % short_repr(name), (3, 3), allow_batch=False)
        check_inertia(mass, inertia, "link %s" % short_repr(name))
        try:
            inertia10 = spatial.inertia10_from_mass_com(mass, com, inertia)
        except ResultOverflow:
            raise ValueError("link %s: its mass, centre of mass and inertia overflow when moved to "
                             "the link origin (values too large)" % short_repr(name)) from None
        self._links[name] = _Link(name, inertia10)

    def add_joint(self, name, kind, parent, child, origin=None, axis=(0.0, 0.0, 1.0),
                  lower=None, upper=None, velocity=np.inf, effort=np.inf,
                  armature=0.0, damping=0.0, friction=0.0):
        """Connect ``child`` to ``parent``. ``kind`` is one of revolute, continuous,
        prismatic, fixed, spherical, planar, floating (or free). ``origin`` is the
        4x4 pose of the joint frame in the parent link frame; ``axis`` is in the
        joint frame; ``lower``/``upper`` bound the joint's q coordinates.
        ``armature``, ``damping`` and ``friction`` (non-negative; a number for all the
        joint's velocity coordinates, or one per coordinate) become ``model.armature``,
        ``model.damping`` and ``model.friction``."""
        if not isinstance(name, str) or not name:
            raise ValueError("joint name must be a non-empty string, got %s" % short_repr(name))
        if not isinstance(kind, str) or kind not in _KIND_BY_NAME:
            raise ValueError("joint %s has unknown type %s (expected one of %s)"
                             % (short_repr(name), short_repr(kind), ", ".join(sorted(_KIND_BY_NAME))))
        joint_kind = _KIND_BY_NAME[kind]
        origin = np.eye(4) if origin is None else as_array(origin, "origin of joint %s" % short_repr(name), (4, 4),
                                                            allow_batch=False)
        _check_rigid(origin, "origin of joint %s" % short_repr(name))
        axis = as_array(axis, "axis of joint %s" % short_repr(name), (3,), allow_batch=False)
        largest = np.abs(axis).max()
        direction = axis / largest if largest > 0.0 else axis  # scaled first: no square overflows
        direction = direction / max(np.linalg.norm(direction), 1e-300)
        if joint_kind in (JointKind.REVOLUTE, JointKind.PRISMATIC):
            if largest == 0.0:
                raise ValueError("joint %s has a zero axis" % short_repr(name))
            axis = direction
        if joint_kind == JointKind.PLANAR and not np.allclose(direction, [0, 0, 1]):
            raise ValueError("planar joint %s must move in its frame's x-y plane (axis 0 0 1)" % short_repr(name))
        if kind == "continuous":
            lower = upper = None
        nq = JOINT_DIMENSIONS[joint_kind][0] if joint_kind is not None else 0
        lower = _limits(lower, -np.inf, nq, "lower limit of joint %s" % short_repr(name))
        upper = _limits(upper, np.inf, nq, "upper limit of joint %s" % short_repr(name))
        if np.any(lower > upper):
            raise ValueError("joint %s has lower limit > upper limit" % short_repr(name))
        nv = JOINT_DIMENSIONS[joint_kind][1] if joint_kind is not None else 0
        per_dof = {key: _per_velocity(value, nv, "%s of joint %s" % (key, short_repr(name)))
                   for key, value in (("armature", armature), ("damping", damping), ("friction", friction))}
        for key, value in (("velocity", velocity), ("effort", effort)):
            if not real_number(value, "%s limit of joint %s" % (key, short_repr(name))) >= 0.0:  # (NaN fails too)
                raise ValueError("%s limit of joint %s must be a non-negative number (inf: none), got %s"
                                 % (key, short_repr(name), short_repr(value)))
        self._joints.append(_Joint(name, joint_kind, parent, child, origin, axis, lower, upper,
                                   float(velocity), float(effort), **per_dof))

    def add_frame(self, name, parent, origin=None):
        """A massless link fixed to ``parent`` (e.g. a tool point)."""
        self.add_link(name)
        self.add_joint(name + "_fixed", "fixed", parent, name, origin=origin)

    # -- build -------------------------------------------------------------------------
    def build(self, floating_base=False, strict=False):
        """Order the tree depth-first, merge fixed joints and return a ``Model``.

        The links' inertias go through rbd's inertia policy (``rbd._inertia``):
        round-off passes, a physically inconsistent inertia warns once naming the
        links, or raises ValueError when ``strict``."""
        root, children_of = self._check_tree()
        floating_base = flag(floating_base, "floating_base")
        check_inertias([link.inertia10 for link in self._links.values()], list(self._links), strict=strict)
        if floating_base and any(j.name == "root_joint" for j in self._joints):
            # Two joints of one name would make joint_idx_q("root_joint") ambiguous.
            raise ValueError("floating_base=True adds a joint 'root_joint', but joint 'root_joint' "
                             "is already defined")
        bodies = []  # one dict per moving body, in depth-first order
        frames = []  # (link name, body index, body_from_link), one per link
        placed = {}  # link name -> (body index, body_from_link)
        if floating_base:
            bodies.append(dict(parent=-1, kind=JointKind.FREE, axis=np.zeros(3), placement=np.eye(4),
                               inertia=self._links[root].inertia10.copy(), joint="root_joint", link=root,
                               lower=np.full(7, -np.inf), upper=np.full(7, np.inf),
                               velocity=np.full(6, np.inf), effort=np.full(6, np.inf),
                               armature=np.zeros(6), damping=np.zeros(6), friction=np.zeros(6)))
            placed[root] = (0, np.eye(4))
        else:
            placed[root] = (-1, np.eye(4))  # fixed to the world: its mass never moves
        world_inertia = np.zeros(10) if floating_base else self._links[root].inertia10.copy()
        frames.append((root, *placed[root]))

        # Depth-first from the root, children in the order they were added; an explicit
        # stack (not recursion) so that chains of any depth build.
        stack = [iter(children_of[root])]
        while stack:
            joint = next(stack[-1], None)
            if joint is None:
                stack.pop()
                continue
            body, body_from_link = placed[joint.parent]
            body_from_joint = body_from_link @ joint.origin
            child_inertia = self._links[joint.child].inertia10
            if joint.kind is None:  # fixed: merge the child link into this body
                placed[joint.child] = (body, body_from_joint)
                try:
                    moved = spatial.inertia_act(body_from_joint, child_inertia)
                except ResultOverflow:
                    raise ValueError("link %s overflows when merged into link %s through fixed joint %s "
                                     "(values too large)" % (short_repr(joint.child), short_repr(joint.parent),
                                                             short_repr(joint.name))) from None
                if body >= 0:
                    bodies[body]["inertia"] = bodies[body]["inertia"] + moved
                else:
                    world_inertia = world_inertia + moved
            else:
                kind = _fast_kind(joint.kind, joint.axis)
                nv = JOINT_DIMENSIONS[kind][1]
                bodies.append(dict(parent=body, kind=kind, axis=joint.axis, placement=body_from_joint,
                                   inertia=child_inertia.copy(), joint=joint.name, link=joint.child,
                                   lower=joint.lower, upper=joint.upper,
                                   velocity=np.full(nv, joint.velocity), effort=np.full(nv, joint.effort),
                                   armature=joint.armature, damping=joint.damping, friction=joint.friction))
                placed[joint.child] = (len(bodies) - 1, np.eye(4))
            frames.append((joint.child, *placed[joint.child]))
            stack.append(iter(children_of[joint.child]))

        for body in bodies:  # merging fixed links moves their inertias: that may overflow
            if not np.all(np.isfinite(body["inertia"])):
                raise ValueError("the inertia of body %s overflows once its fixed links are merged into it"
                                 % short_repr(body["link"]))
        if not np.all(np.isfinite(world_inertia)):
            raise ValueError("the inertia of the links fixed to the world overflows once they are merged")
        return assemble_model(self.name, bodies, frames, world_inertia=world_inertia)

    def _check_tree(self):
        """Return the root link and each link's child joints; raise on a broken tree."""
        if not self._links:
            raise ValueError("the model has no links")
        children_of = {name: [] for name in self._links}
        parent_joint = {}
        joint_names = set()
        for joint in self._joints:
            if joint.name in joint_names:
                raise ValueError("joint %s is defined twice" % short_repr(joint.name))
            joint_names.add(joint.name)
            for role in ("parent", "child"):
                link = getattr(joint, role)
                if link not in self._links:
                    raise ValueError("joint %s names %s link %s, which does not exist"
                                     % (short_repr(joint.name), role, short_repr(link)))
            if joint.child in parent_joint:
                raise ValueError("link %s has two parents (joints %s and %s)"
                                 % (short_repr(joint.child), short_repr(parent_joint[joint.child].name),
                                    short_repr(joint.name)))
            if joint.child == joint.parent:
                raise ValueError("joint %s connects link %s to itself" % (short_repr(joint.name), short_repr(joint.child)))
            parent_joint[joint.child] = joint
            children_of[joint.parent].append(joint)
        roots = [name for name in self._links if name not in parent_joint]
        if not roots:
            raise ValueError("the links form a cycle: no link is without a parent (cycle %s)"
                             % short_names(_cycle_from(next(iter(self._links)), parent_joint), " -> "))
        if len(roots) > 1:
            raise ValueError("the model has several root links: %s" % short_names(roots))
        reached, stack = set(), [roots[0]]
        while stack:
            link = stack.pop()
            reached.add(link)
            stack.extend(j.child for j in children_of[link])
        if len(reached) != len(self._links):
            cycle = sorted(set(self._links) - reached)
            raise ValueError("the links %s form a cycle detached from the root %s"
                             % (short_names(cycle), short_repr(roots[0])))
        return roots[0], children_of


def assemble_model(name, bodies, frames, gravity=(0.0, 0.0, -9.81), world_inertia=None):
    """A ``Model`` from one dict per moving body in depth-first order (keys ``parent``,
    ``kind``, ``axis``, ``placement``, ``inertia`` (10 numbers), ``joint``, ``link``, and
    per coordinate ``lower``, ``upper``, ``velocity``, ``effort``, ``armature``, ``damping``,
    ``friction``), one ``(name, body, body_from_frame)`` per frame, and the inertia fixed
    to the world: what the builder and the converters of ``rbd.interop`` hand over."""
    def stack(key, shape):
        return np.array([b[key] for b in bodies], dtype=float).reshape(shape)

    def concat(key):
        return np.concatenate([b[key] for b in bodies]) if bodies else np.zeros(0)

    n = len(bodies)
    return Model(
        name=name,
        parents=[b["parent"] for b in bodies],
        joint_kinds=[int(b["kind"]) for b in bodies],
        joint_axes=stack("axis", (n, 3)),
        joint_placements=stack("placement", (n, 4, 4)),
        inertias=stack("inertia", (n, 10)),
        joint_names=[b["joint"] for b in bodies],
        body_names=[b["link"] for b in bodies],
        frame_names=[f[0] for f in frames],
        frame_parents=[f[1] for f in frames],
        frame_offsets=np.array([f[2] for f in frames], dtype=float).reshape(-1, 4, 4),
        lower_limits=concat("lower"),
        upper_limits=concat("upper"),
        velocity_limits=concat("velocity"),
        effort_limits=concat("effort"),
        gravity=gravity,
        armature=concat("armature"),
        damping=concat("damping"),
        friction=concat("friction"),
        world_inertia=world_inertia,
    )


def _per_velocity(value, nv, name):
    """``value`` (a number or ``nv`` numbers, non-negative) as ``nv`` numbers."""
    if type(value) in (float, int) and (value == 0 or (nv and 0 < value < 1e300)):
        return np.full(nv, float(value))  # (the common case, without as_array's general checks)
    arr = as_array(value, name, np.shape(value), allow_batch=False)
    if nv == 0 and np.any(arr != 0.0):
        raise ValueError("%s must be 0: a fixed joint has no velocity coordinates" % name)
    if arr.ndim == 0:
        arr = np.full(nv, float(arr))
    if arr.shape != (nv,):
        raise ValueError("%s must be a number or %d numbers (one per velocity coordinate), got shape %s"
                         % (name, nv, arr.shape))
    if np.any(arr < 0.0):
        raise ValueError("%s must be non-negative, got %s" % (name, short_repr(value)))
    return arr


def _cycle_from(link, parent_joint):
    """The cycle reached by walking up from ``link`` (every link has a parent)."""
    path = [link]
    while parent_joint[path[-1]].parent not in path:
        path.append(parent_joint[path[-1]].parent)
    start = path.index(parent_joint[path[-1]].parent)
    return path[start:][::-1]


def _check_rigid(M, name):
    """A joint origin must be a rigid transform: anything else silently skews
    every placement and inertia downstream."""
    if not np.array_equal(M[3], [0.0, 0.0, 0.0, 1.0]) or not is_rotation(M[:3, :3]):
        raise ValueError("%s must be a rigid transform (rotation block orthonormal to 1e-6 with "
                         "determinant +1, last row 0 0 0 1)" % name)


def _limits(values, default, nq, name):
    if values is None:
        return np.full(nq, default)
    arr = _real_array(values, name)  # (a TypeError for strings and booleans; ±inf: no limit)
    if arr.ndim == 0:
        arr = np.full(nq, float(arr))
    if arr.shape != (nq,):
        raise ValueError("%s must be a number or %d numbers, got shape %s" % (name, nq, arr.shape))
    if np.any(np.isnan(arr)):
        raise ValueError("%s must not be NaN" % name)
    return arr.copy()


def _fast_kind(kind, axis):
    """A revolute joint about a unit basis vector gets its specialised kind."""
    if kind == JointKind.REVOLUTE and np.count_nonzero(axis) == 1:
        i = int(np.flatnonzero(axis)[0])
        if axis[i] == 1.0:
            return _BASIS_AXIS_KIND[i]
    return kind


def check_inertia(mass, inertia, where):
    """Raise ValueError unless ``mass`` is finite and non-negative and ``inertia``
    (about the com) is symmetric.  Whether it is physically consistent is judged
    for the whole robot at build time (``rbd._inertia.check_inertias``)."""
    if not np.isfinite(mass) or mass < 0:
        raise ValueError("%s has a negative or non-finite mass %s" % (where, short_repr(mass)))
    scale = max(np.abs(inertia).max(), 1e-300)
    if not np.allclose(inertia, inertia.T, rtol=0, atol=1e-9 * scale):
        raise ValueError("%s has a non-symmetric inertia matrix" % where)
