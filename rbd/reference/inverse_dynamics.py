"""RNEA written on scalar components: one code path for one sample and for a batch.

The formulas and the batch driver are in ``_components``.  The passes are
those of the Pinocchio cheat sheet: motions go down the tree with the inverse
action of each parent-from-child transform, forces come back up with its force
action; the velocity-product force is the cheap ``v x* (Y v)``.
"""
from .._checks import model_arrays
from . import _components as c
from . import joints


def _passes(bodies, gravity, q, v, a, fext, trig):
    """tau as a list of components; v, a, fext may be None (zero).

    Forward: body accelerations a_i = X_i^-1 a_parent + S a_j + v_i x (S v_j)
    (the world's acceleration is -g) and forces f_i = Y_i a_i + v_i x* (Y_i v_i) - fext_i.
    Backward: tau_i = S^T f_i, f_parent += X_i* f_i."""
    n = len(bodies)
    placements, twists, joint_twists = c.kinematics(bodies, q, v, trig)
    accs, forces = [None] * n, [None] * n
    world_acc = (-gravity[0], -gravity[1], -gravity[2], 0.0, 0.0, 0.0)
    for i, body in enumerate(bodies):
        R, p = placements[i]
        parent = body.parent
        parent_acc = world_acc if parent < 0 else accs[parent]
        acc = c.inv_act_motion(R, p, parent_acc)
        if a is not None:
            acc = joints.add_joint_motion(acc, body, a)
        if v is not None:
            acc = c.add(acc, c.motion_cross(twists[i], joint_twists[i]))  # S is constant in the body frame
            f = c.add(c.inertia_apply(body.inertia, acc), c.bias_force(body.inertia, twists[i]))
        else:
            f = c.inertia_apply(body.inertia, acc)
        accs[i] = acc
        forces[i] = f if fext is None else c.sub(f, fext[i])
    tau = [None] * n
    for i in range(n - 1, -1, -1):
        body = bodies[i]
        tau[i] = joints.joint_force(body, forces[i])
        if body.parent >= 0:
            R, p = placements[i]
            forces[body.parent] = c.add(forces[body.parent], c.act_force(R, p, forces[i]))
    return [x for joint in tau for x in joint]


def inverse_dynamics(model, q, v, a, fext, zero=()):
    """tau (..., nv) for arrays to validate; fext, and the names in ``zero``
    (``"v"``, ``"a"``), may be None for zero."""
    batch, arrays = model_arrays(model, optional=("fext",) + tuple(zero), q=q, v=v, a=a, fext=fext)
    bodies = c.constants(model)
    gravity = model.gravity.tolist()
    return c.evaluate(lambda *args: _passes(bodies, gravity, *args), batch, arrays, (model.nv,))
