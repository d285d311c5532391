"""Kinematics: placements, frame twists, accelerations and Jacobians, center of mass.

One forward pass, shared with the dynamics: for each body i, in order,

    parent_from_body[i] = joint_placements[i] @ M_J(q_i)
    world_from_body[i]  = world_from_body[parent] @ parent_from_body[i]
    v_i = X_i^-1 v_parent + S_i v_j                      (body twist, body frame)
    a_i = X_i^-1 a_parent + S_i a_j + v_i x (S_i v_j)    (spatial acceleration, body frame)

with X_i the motion transform of parent_from_body[i] (applied inversely, which
is the cheap direction).  The world's twist is 0 and its acceleration is 0
for kinematics, -g for the dynamics (gravity as a fictitious acceleration).

A frame is expressed in one of three references (``REFERENCES``), as
Pinocchio's LOCAL, WORLD and LOCAL_WORLD_ALIGNED:

* ``"local"``: the frame's own origin and axes, V_f = X_f^-1 v_body;
* ``"world"``: the world origin and axes (right-trivialised), V = Ad_{world_from_body} v_body;
* ``"local_world_aligned"``: the frame's origin with world axes, [p_dot; omega].

Accelerations and Jacobian time derivatives are the time derivatives of the
twist / Jacobian in the same reference, so ``frame_acceleration = J a + J_dot v``
in each reference (for "local_world_aligned" that is the classical
acceleration [p_ddot; omega_dot]).

Every function takes leading batch dimensions and loops only over joints.
"""
import numpy as np

from .. import spatial
from .._checks import model_arrays
from . import joints

REFERENCES = ("local", "world", "local_world_aligned")


def check_reference(reference):
    """Return ``reference`` if it names a reference, else raise ValueError."""
    if not isinstance(reference, str) or reference not in REFERENCES:
        raise ValueError("reference must be 'local', 'world' or 'local_world_aligned', got %r" % (reference,))
    return reference


# ------------------------------------------------------------------------------------------
# The forward pass, in pieces (used by the dynamics too)
# ------------------------------------------------------------------------------------------
def placements(table, q, bodies=None, world=True):
    """``(parent_from_body, world_from_body)``: lists indexed by body, filled for
    ``bodies`` (all by default; a list closed under parents, in increasing
    order), ``None`` elsewhere.  ``world=False`` skips ``world_from_body``."""
    parent_from_body = [None] * table.nbodies
    world_from_body = [None] * table.nbodies if world else None
    for i in range(table.nbodies) if bodies is None else bodies:
        joint = joints.transform(table.kinds[i], table.axes[i], q[..., table.q_slices[i]])
        parent_from_body[i] = M = spatial.se3_compose(table.placements[i], joint)
        if world:
            p = table.parents[i]
            world_from_body[i] = M if p < 0 else spatial.se3_compose(world_from_body[p], M)
    return parent_from_body, world_from_body


def joint_motion(table, i, x):
    """S_i x_j: the motion vector (..., 6) of joint i's velocity (or acceleration) coordinates."""
    return np.matmul(x[..., table.v_slices[i]], table.subspaces[i])


def velocities(table, parent_from_body, v, bodies=None):
    """``(body_twists, joint_twists)``: v_i and S_i v_j in body frames, lists by body."""
    body_twists = [None] * table.nbodies
    joint_twists = [None] * table.nbodies
    for i in range(table.nbodies) if bodies is None else bodies:
        joint_twists[i] = vJ = joint_motion(table, i, v)
        p = table.parents[i]
        body_twists[i] = vJ if p < 0 else spatial.inv_act_motion(parent_from_body[i], body_twists[p]) + vJ
    return body_twists, joint_twists


def accelerations(table, parent_from_body, twists, a, world_acceleration=None, bodies=None):
    """Spatial accelerations a_i of the bodies in their own frames (list by body).

    ``twists`` is the pair returned by ``velocities`` (or None for v = 0),
    ``a`` the joint accelerations (or None for 0) and ``world_acceleration`` the
    world's own (6,) acceleration (None for 0; -g for the dynamics)."""
    body_acc = [None] * table.nbodies
    for i in range(table.nbodies) if bodies is None else bodies:
        p = table.parents[i]
        parent_acc = body_acc[p] if p >= 0 else world_acceleration
        acc = None
        if parent_acc is not None:
            acc = spatial.inv_act_motion(parent_from_body[i], parent_acc)
        if a is not None:
            aJ = joint_motion(table, i, a)
            acc = aJ if acc is None else acc + aJ
        if twists is not None:
            # S is constant in the body frame: the only bias term is v_i x vJ.
            bias = spatial.motion_cross(twists[0][i], twists[1][i])
            acc = bias if acc is None else acc + bias
        if acc is None:
            acc = np.zeros(6)
        body_acc[i] = acc
    return body_acc


def world_jacobian_rows(table, world_from_body, bodies=None):
    """Per body i, the world-frame motion vectors Ad_{world_from_body[i]} S_i of its
    joint's unit velocities, shape (..., nv_i, 6) (the columns of the world Jacobian)."""
    rows = [None] * table.nbodies
    for i in range(table.nbodies) if bodies is None else bodies:
        rows[i] = spatial.act_motion(world_from_body[i][..., None, :, :], table.subspaces[i])
    return rows


def first_moments(table, world_from_body):
    """m_i c_i in world coordinates per body (..., 3), c_i its center of mass."""
    return [table.masses[i] * spatial.se3_act_point(world_from_body[i], table.coms[i])
            for i in range(table.nbodies)]


def center_of_mass_of(table, world_from_body, batch):
    if not table.total_mass > 0.0:
        raise ValueError("the model has no mass: its center of mass is undefined")
    total = np.zeros(batch + (3,))
    for moment in first_moments(table, world_from_body):
        total = total + moment
    return total / table.total_mass


# ------------------------------------------------------------------------------------------
# Frames
# ------------------------------------------------------------------------------------------
def _frame(model, table, frame):
    """(body, body_from_frame, chain of bodies from the root) of a frame name or index."""
    f = model.frame_id(frame)
    body = table.frame_parents[f]
    return body, table.frame_placements[f], (table.ancestors[body] if body >= 0 else [])


def _world_from_frame(world_from_body, body, body_from_frame, batch):
    if body < 0:
        return np.broadcast_to(body_from_frame, batch + (4, 4)).copy()
    return spatial.se3_compose(world_from_body[body], body_from_frame)


def _rotation_only(M):
    """The transform with M's rotation and no translation (re-expresses vectors in new axes)."""
    out = M.copy()
    out[..., :3, 3] = 0.0
    return out


def translation(p):
    """The pure translation by p (..., 3), as (..., 4, 4) transforms."""
    out = np.zeros(p.shape[:-1] + (4, 4))
    out[..., 0, 0] = out[..., 1, 1] = out[..., 2, 2] = out[..., 3, 3] = 1.0
    out[..., :3, 3] = p
    return out


def _express(reference, world_from_body, body_from_frame, world_from_frame, m_body):
    """A body-frame motion vector of the frame's body, expressed in ``reference``
    at the frame (a velocity-like re-expression, without derivative terms)."""
    if reference == "world":
        return spatial.act_motion(world_from_body, m_body)
    local = spatial.inv_act_motion(body_from_frame, m_body)
    if reference == "local":
        return local
    return spatial.act_motion(_rotation_only(world_from_frame), local)


def frame_placement(model, q, frame):
    """world_from_frame (..., 4, 4)."""
    table = joints.joint_table(model)
    body, body_from_frame, chain = _frame(model, table, frame)
    batch, (q,) = model_arrays(model, q=q)
    _, world_from_body = placements(table, q, chain)
    return _world_from_frame(world_from_body, body, body_from_frame, batch)


def frame_velocity(model, q, v, frame, reference="local"):
    """The frame's twist [v; ω] (..., 6) in ``reference``."""
    table = joints.joint_table(model)
    body, body_from_frame, chain = _frame(model, table, frame)
    check_reference(reference)
    batch, (q, v) = model_arrays(model, q=q, v=v)
    if body < 0:
        return np.zeros(batch + (6,))
    parent_from_body, world_from_body = placements(table, q, chain)
    twists, _ = velocities(table, parent_from_body, v, chain)
    world_from_frame = _world_from_frame(world_from_body, body, body_from_frame, batch)
    return _express(reference, world_from_body[body], body_from_frame, world_from_frame, twists[body])


def frame_acceleration(model, q, v, a, frame, reference="local"):
    """The time derivative (..., 6) of the frame's twist in ``reference`` (no gravity).

    "local": the spatial acceleration in the frame (= derivative of the body
    twist); "world": the derivative of the world-frame twist, Ad a_body;
    "local_world_aligned": [p_ddot; omega_dot] in world axes, i.e. the
    rotated local acceleration plus R (omega x v) in its linear part."""
    table = joints.joint_table(model)
    body, body_from_frame, chain = _frame(model, table, frame)
    check_reference(reference)
    batch, (q, v, a) = model_arrays(model, q=q, v=v, a=a)
    if body < 0:
        return np.zeros(batch + (6,))
    parent_from_body, world_from_body = placements(table, q, chain)
    twists = velocities(table, parent_from_body, v, chain)
    body_acc = accelerations(table, parent_from_body, twists, a, None, chain)
    world_from_frame = _world_from_frame(world_from_body, body, body_from_frame, batch)
    out = _express(reference, world_from_body[body], body_from_frame, world_from_frame, body_acc[body])
    if reference == "local_world_aligned":
        # d/dt (R v) = R (v_dot + ω x v); d/dt (R ω) = R ω_dot since ω x ω = 0.
        twist = spatial.inv_act_motion(body_from_frame, twists[0][body])
        correction = np.zeros(batch + (6,))
        correction[..., :3] = np.cross(twist[..., 3:], twist[..., :3])
        out = out + spatial.act_motion(_rotation_only(world_from_frame), correction)
    return out


def _jacobian_from_rows(table, rows, chain, batch):
    """Scatter per-joint rows (..., nv_i, 6) of the chain into a (..., nv, 6) array."""
    out = np.zeros(batch + (table.nv, 6))
    for i in chain:
        out[..., table.v_slices[i], :] = rows[i]
    return out


def frame_jacobian(model, q, frame, reference="local"):
    """The frame Jacobian (..., 6, nv): frame_velocity = J v in ``reference``."""
    table = joints.joint_table(model)
    body, body_from_frame, chain = _frame(model, table, frame)
    check_reference(reference)
    batch, (q,) = model_arrays(model, q=q)
    out = np.zeros(batch + (6, table.nv))
    if body < 0:
        return out
    _, world_from_body = placements(table, q, chain)
    rows = world_jacobian_rows(table, world_from_body, chain)
    world_from_frame = _world_from_frame(world_from_body, body, body_from_frame, batch)
    support = table.support[body]
    J = np.concatenate([rows[i] for i in chain], axis=-2)  # (..., len(support), 6), world
    if reference == "local":
        J = spatial.inv_act_motion(world_from_frame[..., None, :, :], J)
    elif reference == "local_world_aligned":
        J = spatial.act_motion(translation(-world_from_frame[..., None, :3, 3]), J)
    out[..., support] = np.swapaxes(J, -1, -2)
    return out


def frame_jacobian_time_derivative(model, q, v, frame, reference="local"):
    """d/dt of ``frame_jacobian`` along the motion with velocity v (..., 6, nv).

    World columns move with their body: d/dt (Ad_i S) = V_i x (Ad_i S), V_i the
    body's world twist.  "local" adds the change of the frame's own placement,
    -V_f x J_local; "local_world_aligned" the motion of the frame's origin,
    -p_dot x J_angular in the linear rows."""
    table = joints.joint_table(model)
    body, body_from_frame, chain = _frame(model, table, frame)
    check_reference(reference)
    batch, (q, v) = model_arrays(model, q=q, v=v)
    out = np.zeros(batch + (6, table.nv))
    if body < 0:
        return out
    parent_from_body, world_from_body = placements(table, q, chain)
    twists, _ = velocities(table, parent_from_body, v, chain)
    rows = world_jacobian_rows(table, world_from_body, chain)
    world_twists = {i: spatial.act_motion(world_from_body[i], twists[i]) for i in chain}
    J = np.concatenate([rows[i] for i in chain], axis=-2)
    dJ = np.concatenate([spatial.motion_cross(world_twists[i][..., None, :], rows[i]) for i in chain], axis=-2)
    world_from_frame = _world_from_frame(world_from_body, body, body_from_frame, batch)
    if reference == "local":
        frame_twist = spatial.inv_act_motion(body_from_frame, twists[body])
        J_local = spatial.inv_act_motion(world_from_frame[..., None, :, :], J)
        dJ = (spatial.inv_act_motion(world_from_frame[..., None, :, :], dJ)
              - spatial.motion_cross(frame_twist[..., None, :], J_local))
    elif reference == "local_world_aligned":
        to_origin = translation(-world_from_frame[..., None, :3, 3])
        origin_velocity = spatial.act_motion(to_origin[..., 0, :, :], world_twists[body])[..., :3]
        dJ = spatial.act_motion(to_origin, dJ)
        dJ[..., :3] -= np.cross(origin_velocity[..., None, :], J[..., 3:])
    out[..., table.support[body]] = np.swapaxes(dJ, -1, -2)
    return out


# ------------------------------------------------------------------------------------------
# Whole-body quantities
# ------------------------------------------------------------------------------------------
def forward_kinematics(model, q):
    """world_from_body of every body, (..., nbodies, 4, 4)."""
    table = joints.joint_table(model)
    batch, (q,) = model_arrays(model, q=q)
    _, world_from_body = placements(table, q)
    out = np.empty(batch + (table.nbodies, 4, 4))
    for i, M in enumerate(world_from_body):
        out[..., i, :, :] = M
    return out


def center_of_mass(model, q):
    """The center of mass of the moving bodies in world coordinates (..., 3)."""
    table = joints.joint_table(model)
    batch, (q,) = model_arrays(model, q=q)
    _, world_from_body = placements(table, q)
    return center_of_mass_of(table, world_from_body, batch)


def com_jacobian(model, q):
    """d(center_of_mass)/dt = J_com v, J_com of shape (..., 3, nv).

    The column of a joint velocity with world twist s = [s_v; s_w] moves its
    subtree (mass m_sub, world first moment h_sub): (m_sub s_v + s_w x h_sub) / m."""
    table = joints.joint_table(model)
    batch, (q,) = model_arrays(model, q=q)
    if not table.total_mass > 0.0:
        raise ValueError("the model has no mass: its center of mass is undefined")
    _, world_from_body = placements(table, q)
    rows = world_jacobian_rows(table, world_from_body)
    subtree_mass = list(table.masses)
    subtree_moment = first_moments(table, world_from_body)
    for i in reversed(range(table.nbodies)):
        p = table.parents[i]
        if p >= 0:
            subtree_mass[p] += subtree_mass[i]
            subtree_moment[p] = subtree_moment[p] + subtree_moment[i]
    out = np.zeros(batch + (3, table.nv))
    for i in range(table.nbodies):
        s = rows[i]
        cols = subtree_mass[i] * s[..., :3] + np.cross(s[..., 3:], subtree_moment[i][..., None, :])
        out[..., table.v_slices[i]] = np.swapaxes(cols, -1, -2) / table.total_mass
    return out
