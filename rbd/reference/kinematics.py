"""Kinematics: placements, frame twists, accelerations and Jacobians (and the partial
derivatives of the twists and accelerations), center of mass.

Written on scalar components (``_components``: Python floats for one sample,
rows of a batch block otherwise), with the dynamics' formulas.  With
X_i = (R_i, p_i) the parent_from_body placement of body i at q, the passes are:

* forward, from the root down to the frame's body only (its ``chain`` of
  ancestors; a frame does not depend on the other branches):

      world_from_body[i] = world_from_body[parent] X_i
      v_i = X_i^-1 v_parent + S_i v_j                      (body twist, body frame)
      a_i = X_i^-1 a_parent + S_i a_j + v_i x (S_i v_j)    (spatial acceleration, body frame)

  the world's twist and acceleration being 0 (no gravity in kinematics);
* backward, for the center of mass: the first moment of mass of each subtree,
  gathered in the subtree root's frame and moved to the parent with X_i (so
  ``center_of_mass`` needs no world placements); ``dynamics`` gathers the
  momentum the same way.

A frame is expressed in one of three references (``REFERENCES``), as
Pinocchio's LOCAL, WORLD and LOCAL_WORLD_ALIGNED:

* ``"local"``: the frame's own origin and axes, V_f = X_f^-1 v_body;
* ``"world"``: the world origin and axes (right-trivialised), V = Ad_{world_from_body} v_body;
* ``"local_world_aligned"``: the frame's origin with world axes, [p_dot; omega].

Accelerations and Jacobian time derivatives are the time derivatives of the
twist / Jacobian in the same reference, so ``frame_acceleration = J a + J_dot v``
in each reference (for "local_world_aligned" that is the classical
acceleration [p_ddot; omega_dot]).

Every function takes leading batch dimensions; Python loops run over joints only.
"""
from .._checks import check_model, model_arrays, short_repr
from . import _components as sc  # spatial algebra on scalar components
from . import joints

REFERENCES = ("local", "world", "local_world_aligned")


def check_reference(reference):
    """Return ``reference`` if it names a reference, else raise ValueError."""
    if not isinstance(reference, str) or reference not in REFERENCES:
        raise ValueError("reference must be 'local', 'world' or 'local_world_aligned', got %s"
                         % short_repr(reference))
    return reference


# ------------------------------------------------------------------------------------------
# Frames
# ------------------------------------------------------------------------------------------
class Frame:
    """The constants of one frame as Python floats: its ``body`` (-1: the world),
    its body_from_frame placement ``(R, p)`` and the body's ``chain`` (root first)."""

    def __init__(self, model, bodies, f):
        self.body = int(model.frame_parents[f])
        M = model.frame_offsets[f]
        self.R = tuple(M[:3, :3].ravel().tolist())
        self.p = tuple(M[:3, 3].tolist())
        self._bodies = bodies

    @property
    def chain(self):
        """The frame's body and its ancestors, root first (walked on each use: a pass
        reads it once)."""
        return sc.chain_of(self._bodies, self.body)


def _frames(model):
    """The body constants and the ``Frame`` of every frame (built once per model)."""
    check_model(model)
    bodies = sc.constants(model)
    frames = model._cache.frames
    if frames is None:
        frames = [Frame(model, bodies, k) for k in range(model.nframes)]
        model._cache.frames = frames
    return bodies, frames


def _frame(model, frame):
    """The body constants and the ``Frame`` of a frame name or index."""
    check_model(model)
    f = model.frame_id(frame)
    bodies, frames = _frames(model)
    return bodies, frames[f]


def _world_from_frame(frame, world):
    """world_from_frame (R, p), from the world placements of the chain."""
    if frame.body < 0:
        return frame.R, frame.p
    return sc.compose(*world[frame.body], frame.R, frame.p)


def _at_point(m, p):
    """The motion m, given at the origin, seen at the point p of the same axes: [v - p x w; w]."""
    v0, v1, v2, w0, w1, w2 = m
    p0, p1, p2 = p
    return (v0 - (p1 * w2 - p2 * w1), v1 - (p2 * w0 - p0 * w2), v2 - (p0 * w1 - p1 * w0), w0, w1, w2)


def _express(reference, frame, world_from_body, m):
    """A body-frame motion of the frame's body, expressed in ``reference`` at the
    frame (a velocity-like re-expression, without derivative terms)."""
    if reference == "local":
        return sc.inv_act_motion(frame.R, frame.p, m)
    if reference == "world":
        return sc.act_motion(*world_from_body, m)
    # at the frame's origin, in body axes, then turned to world axes
    return sc.rotate_motion(world_from_body[0], _at_point(m, frame.p))


def _placement_components(R, p):
    """The 16 components of the homogeneous matrix of (R, p), row-major."""
    return [R[0], R[1], R[2], p[0], R[3], R[4], R[5], p[1], R[6], R[7], R[8], p[2], 0.0, 0.0, 0.0, 1.0]


def _placement_passes(bodies, frame, q, trig):
    chain = frame.chain
    placements, _, _ = sc.kinematics(bodies, q, None, trig, chain)
    return _placement_components(*_world_from_frame(frame, sc.world_placements(bodies, placements, chain)))


def frame_placement(model, q, frame):
    """world_from_frame (..., 4, 4), from the placements of the frame's chain."""
    bodies, frame = _frame(model, frame)
    batch, arrays = model_arrays(model, q=q)
    return sc.evaluate(lambda *args: _placement_passes(bodies, frame, *args), batch, arrays, (4, 4))


def _placements_passes(bodies, frames, q, trig):
    placements, _, _ = sc.kinematics(bodies, q, None, trig)
    world = sc.world_placements(bodies, placements)
    return [x for frame in frames for x in _placement_components(*_world_from_frame(frame, world))]


def frame_placements(model, q):
    """world_from_frame of every frame (link and joint frames), (..., nframes, 4, 4), from
    one forward pass."""
    bodies, frames = _frames(model)
    batch, arrays = model_arrays(model, q=q)
    return sc.evaluate(lambda *args: _placements_passes(bodies, frames, *args), batch, arrays,
                       (model.nframes, 4, 4))


def _velocity_passes(bodies, frame, reference, q, v, trig):
    if frame.body < 0:
        return [0.0] * 6
    chain = frame.chain
    placements, twists, _ = sc.kinematics(bodies, q, v, trig, chain)
    world_from_body = None  # ("local" needs no world placement)
    if reference != "local":
        world_from_body = sc.world_placements(bodies, placements, chain)[frame.body]
    return _express(reference, frame, world_from_body, twists[frame.body])


def frame_velocity(model, q, v, frame, reference="local"):
    """The frame's twist [v; ω] (..., 6) in ``reference``."""
    bodies, frame = _frame(model, frame)
    check_reference(reference)
    batch, arrays = model_arrays(model, q=q, v=v)
    return sc.evaluate(lambda *args: _velocity_passes(bodies, frame, reference, *args), batch, arrays, (6,))


def _accelerations(bodies, chain, placements, twists, joint_twists, a):
    """Spatial accelerations of the bodies of ``chain`` in their own frames (list
    by body), the world's being 0.  S is constant in the body frame: the only
    velocity-product term is v_i x (S v_j)."""
    accs = [None] * len(bodies)
    for i in chain:
        body = bodies[i]
        acc = sc.motion_cross(twists[i], joint_twists[i])
        if body.parent >= 0:
            acc = sc.add(sc.inv_act_motion(*placements[i], accs[body.parent]), acc)
        accs[i] = joints.add_joint_motion(acc, body, a)
    return accs


def _acceleration_passes(bodies, frame, reference, q, v, a, trig):
    if frame.body < 0:
        return [0.0] * 6
    chain = frame.chain
    placements, twists, joint_twists = sc.kinematics(bodies, q, v, trig, chain)
    acc = _accelerations(bodies, chain, placements, twists, joint_twists, a)[frame.body]
    world_from_body = None  # ("local" needs no world placement)
    if reference != "local":
        world_from_body = sc.world_placements(bodies, placements, chain)[frame.body]
    if reference != "local_world_aligned":
        return _express(reference, frame, world_from_body, acc)
    # [p_ddot; omega_dot]: at the frame's origin, in body axes, the spatial
    # acceleration's linear part plus omega x p_dot, then turned to world axes
    x0, x1, x2, x3, x4, x5 = _at_point(acc, frame.p)
    v0, v1, v2, w0, w1, w2 = _at_point(twists[frame.body], frame.p)
    classical = (x0 + (w1 * v2 - w2 * v1), x1 + (w2 * v0 - w0 * v2), x2 + (w0 * v1 - w1 * v0), x3, x4, x5)
    return sc.rotate_motion(world_from_body[0], classical)


def frame_acceleration(model, q, v, a, frame, reference="local"):
    """The time derivative (..., 6) of the frame's twist in ``reference`` (no gravity).

    "local": the spatial acceleration in the frame (= derivative of the body
    twist); "world": the derivative of the world-frame twist, Ad a_body;
    "local_world_aligned": [p_ddot; omega_dot] in world axes, i.e. the
    rotated local acceleration plus R (omega x v) in its linear part."""
    bodies, frame = _frame(model, frame)
    check_reference(reference)
    batch, arrays = model_arrays(model, q=q, v=v, a=a)
    return sc.evaluate(lambda *args: _acceleration_passes(bodies, frame, reference, *args), batch, arrays, (6,))


def _in_reference(reference, R_f, p_f, m):
    """A world motion (world origin and axes) in ``reference`` at the frame
    world_from_frame = (R_f, p_f)."""
    if reference == "world":
        return m
    if reference == "local":
        return sc.inv_act_motion(R_f, p_f, m)
    return _at_point(m, p_f)


def _jacobian_passes(bodies, frame, reference, nv, q, v, trig):
    """The frame Jacobian's components (C order of (6, nv)), or with v given its
    time derivative.

    The column of a joint velocity of body i is its world motion
    Ad_{world_from_body[i]} S e_k, in the reference.  It moves with the body
    (twist V_i) and is seen from the reference, which moves too (twist V_ref:
    none for "world", the frame's twist for "local", the velocity of its origin
    for "local_world_aligned", whose axes do not turn); both in the reference's
    coordinates, its derivative is (V_i - V_ref) x column."""
    out = [0.0] * (6 * nv)
    if frame.body < 0:
        return out
    chain = frame.chain
    placements, twists, _ = sc.kinematics(bodies, q, v, trig, chain)
    world = sc.world_placements(bodies, placements, chain)
    R_f, p_f = _world_from_frame(frame, world)
    if v is not None:
        moving = {i: _in_reference(reference, R_f, p_f, sc.act_motion(*world[i], twists[i])) for i in chain}
        V_ref = {"world": (0.0,) * 6, "local": moving[frame.body],
                 "local_world_aligned": moving[frame.body][:3] + (0.0, 0.0, 0.0)}[reference]
    for i in chain:
        body = bodies[i]
        if v is not None:
            relative = sc.sub(moving[i], V_ref)
        for k, w in enumerate(joints.world_motions(body, *world[i])):
            column = _in_reference(reference, R_f, p_f, w)
            if v is not None:
                column = sc.motion_cross(relative, column)
            out[body.v0 + k::nv] = column  # the column's 6 entries, one per row
    return out


def frame_jacobian(model, q, frame, reference="local"):
    """The frame Jacobian (..., 6, nv): frame_velocity = J v in ``reference``."""
    bodies, frame = _frame(model, frame)
    check_reference(reference)
    batch, arrays = model_arrays(model, q=q)
    nv = model.nv
    return sc.evaluate(lambda q, trig: _jacobian_passes(bodies, frame, reference, nv, q, None, trig),
                      batch, arrays, (6, nv))


def frame_jacobian_time_derivative(model, q, v, frame, reference="local"):
    """d/dt of ``frame_jacobian`` along the motion with velocity v (..., 6, nv)."""
    bodies, frame = _frame(model, frame)
    check_reference(reference)
    batch, arrays = model_arrays(model, q=q, v=v)
    nv = model.nv
    return sc.evaluate(lambda *args: _jacobian_passes(bodies, frame, reference, nv, *args), batch, arrays, (6, nv))


# ------------------------------------------------------------------------------------------
# Partial derivatives of the frame velocity and acceleration
# ------------------------------------------------------------------------------------------
def _moving_part(reference, m):
    """The part of a motion m (in the reference's coordinates) that the reference
    follows when its frame moves with m: all of it ("local"), the velocity of its
    origin ("local_world_aligned", whose axes stay with the world's), none ("world")."""
    if reference == "local":
        return m
    if reference == "local_world_aligned":
        return (m[0], m[1], m[2], 0.0, 0.0, 0.0)
    return (0.0,) * 6


def _derivative_passes(bodies, frame, reference, nv, q, v, a, trig):
    """The components of (dv_dq, J), or with a given (dv_dq, da_dq, da_dv, J).

    In world coordinates the twist of the frame's body b is V_b = sum_(j <= b) s_j v_j
    and its spatial acceleration A_b = sum_(j <= b) (s_j a_j + V_j x s_j v_j), over the
    world motions s_j of the joint velocities of its chain.  A tangent step of joint k
    along its column s moves k's subtree rigidly by s: each later s_j turns into
    s_j + s x s_j, and with p the parent of k (V_p = A_p = 0 at a root)

        dV_b = s x (V_b - V_p),   dA_b = s x (A_b - A_p) - (s x V_p) x (V_b - V_p).

    Every motion is taken in the reference's coordinates (a constant adjoint, which
    keeps the cross products); the reference itself moves with the part m(s) of s it
    follows (``_moving_part``), which adds -m(s) x X to the derivative of each
    quantity X.  The classical "local_world_aligned" acceleration adds [w x p_dot; 0]
    to the spatial one, whose derivative is [dw x p_dot + w x dp_dot; 0].  The partial
    da_dv is the Jacobian time derivative plus dv_dq, as for any d/dt (J(q) v)."""
    outs = [[0.0] * (6 * nv) for _ in range(2 if a is None else 4)]
    if frame.body < 0:
        return [x for out in outs for x in out]
    chain = frame.chain
    placements, twists, joint_twists = sc.kinematics(bodies, q, v, trig, chain)
    world = sc.world_placements(bodies, placements, chain)
    R_f, p_f = _world_from_frame(frame, world)
    V = {i: _in_reference(reference, R_f, p_f, sc.act_motion(*world[i], twists[i])) for i in chain}
    V[-1] = zero = (0.0,) * 6
    V_b = V[frame.body]
    if a is not None:
        accs = _accelerations(bodies, chain, placements, twists, joint_twists, a)
        A = {i: _in_reference(reference, R_f, p_f, sc.act_motion(*world[i], accs[i])) for i in chain}
        A[-1] = zero
        V_ref = _moving_part(reference, V_b)
    for i in chain:
        body = bodies[i]
        V_p = V[body.parent]
        for k, w in enumerate(joints.world_motions(body, *world[i])):
            s = _in_reference(reference, R_f, p_f, w)
            moving = sc.sub(s, _moving_part(reference, s))
            dv = sc.sub(sc.motion_cross(moving, V_b), sc.motion_cross(s, V_p))
            columns = [dv, s]
            if a is not None:
                da = sc.sub(sc.sub(sc.motion_cross(moving, A[frame.body]), sc.motion_cross(s, A[body.parent])),
                            sc.motion_cross(sc.motion_cross(s, V_p), sc.sub(V_b, V_p)))
                if reference == "local_world_aligned":
                    x0, x1, x2 = sc.cross(*dv[3:], *V_b[:3])
                    y0, y1, y2 = sc.cross(*V_b[3:], *dv[:3])
                    da = (da[0] + x0 + y0, da[1] + x1 + y1, da[2] + x2 + y2) + da[3:]
                jdot = sc.motion_cross(sc.sub(V[i], V_ref), s)
                columns = [dv, da, sc.add(jdot, dv), s]
            for out, column in zip(outs, columns):
                out[body.v0 + k::nv] = column  # the column's 6 entries, one per row
    return [x for out in outs for x in out]


def frame_velocity_derivatives(model, q, v, frame, reference="local"):
    """(dv_dq, dv_dv), each (..., 6, nv): the partial derivatives of ``frame_velocity``,
    along q (+) dq for q (dv_dv is the frame Jacobian)."""
    bodies, frame = _frame(model, frame)
    check_reference(reference)
    batch, arrays = model_arrays(model, q=q, v=v)
    nv = model.nv
    return sc.evaluate(lambda q, v, trig: _derivative_passes(bodies, frame, reference, nv, q, v, None, trig),
                       batch, arrays, [(6, nv)] * 2)


def frame_acceleration_derivatives(model, q, v, a, frame, reference="local"):
    """(dv_dq, da_dq, da_dv, da_da), each (..., 6, nv): dv_dq of ``frame_velocity`` and the
    partial derivatives of ``frame_acceleration`` (along q (+) dq for q; da_da is the
    frame Jacobian)."""
    bodies, frame = _frame(model, frame)
    check_reference(reference)
    batch, arrays = model_arrays(model, q=q, v=v, a=a)
    nv = model.nv
    return sc.evaluate(lambda *args: _derivative_passes(bodies, frame, reference, nv, *args),
                       batch, arrays, [(6, nv)] * 4)


# ------------------------------------------------------------------------------------------
# Whole-body quantities
# ------------------------------------------------------------------------------------------
def _forward_kinematics_passes(bodies, q, trig):
    placements, _, _ = sc.kinematics(bodies, q, None, trig)
    return [x for R, p in sc.world_placements(bodies, placements) for x in _placement_components(R, p)]


def forward_kinematics(model, q):
    """world_from_body of every body, (..., nbodies, 4, 4)."""
    batch, arrays = model_arrays(model, q=q)
    bodies = sc.constants(model)
    return sc.evaluate(lambda *args: _forward_kinematics_passes(bodies, *args), batch, arrays,
                      (model.nbodies, 4, 4))


def subtree_first_moments(bodies, placements):
    """The backward pass of first moments of mass: per body, that of its subtree
    (sum of m_j c_j) about its origin in its axes (list by body), and the whole
    model's in the world (the sum over the roots).  The subtree masses are constants."""
    moments = [body.inertia[1:4] for body in bodies]  # m c of each body alone, in its frame
    total = (0.0, 0.0, 0.0)
    for i in range(len(bodies) - 1, -1, -1):  # children (higher indices) are complete first
        body = bodies[i]
        h = sc.first_moment_act(*placements[i], body.subtree_mass, moments[i])
        target = total if body.parent < 0 else moments[body.parent]
        target = (target[0] + h[0], target[1] + h[1], target[2] + h[2])
        if body.parent < 0:
            total = target
        else:
            moments[body.parent] = target
    return moments, total


def check_mass(model):
    """Return the model's total mass, or raise ValueError if it has none (checked
    before the state arguments, as on the compiled backend)."""
    check_model(model)
    mass = sum(body.inertia[0] for body in sc.constants(model))
    if not mass > 0.0:
        raise ValueError("the model has no mass in its moving bodies: its center of mass is undefined "
                         "(the mass fixed to the world, model.world_inertia, is not counted)")
    return mass


def _center_of_mass_passes(bodies, mass, q, trig):
    placements, _, _ = sc.kinematics(bodies, q, None, trig)
    _, h = subtree_first_moments(bodies, placements)
    return [h[0] / mass, h[1] / mass, h[2] / mass]


def center_of_mass(model, q):
    """The center of mass of the moving bodies in world coordinates (..., 3)."""
    mass = check_mass(model)
    batch, arrays = model_arrays(model, q=q)
    bodies = sc.constants(model)
    return sc.evaluate(lambda *args: _center_of_mass_passes(bodies, mass, *args), batch, arrays, (3,))


def _com_jacobian_passes(bodies, mass, nv, q, trig):
    placements, _, _ = sc.kinematics(bodies, q, None, trig)
    world = sc.world_placements(bodies, placements)
    moments, _ = subtree_first_moments(bodies, placements)
    out = [0.0] * (3 * nv)
    for i, body in enumerate(bodies):
        R, p = world[i]
        m = body.subtree_mass
        h0, h1, h2 = sc.first_moment_act(R, p, m, moments[i])  # the subtree's, in the world
        for k, (s0, s1, s2, s3, s4, s5) in enumerate(joints.world_motions(body, R, p)):
            out[body.v0 + k::nv] = ((m * s0 + (s4 * h2 - s5 * h1)) / mass, (m * s1 + (s5 * h0 - s3 * h2)) / mass,
                                    (m * s2 + (s3 * h1 - s4 * h0)) / mass)
    return out


def com_jacobian(model, q):
    """d(center_of_mass)/dt = J_com v, J_com of shape (..., 3, nv).

    The column of a joint velocity with world twist s = [s_v; s_w] moves its
    subtree (mass m_sub, world first moment h_sub): (m_sub s_v + s_w x h_sub) / m."""
    mass = check_mass(model)
    batch, arrays = model_arrays(model, q=q)
    bodies = sc.constants(model)
    nv = model.nv
    return sc.evaluate(lambda *args: _com_jacobian_passes(bodies, mass, nv, *args), batch, arrays, (3, nv))
