"""CRBA written on scalar components (see ``_components``): one code path for
one sample and for a batch."""
from .._checks import model_arrays
from . import _components as c
from . import joints


def _passes(bodies, nv, q, trig):
    """The nv x nv components of M(q), row-major.

    Composite-rigid-body algorithm in body frames (Featherstone; Pinocchio's
    crba).  Backward over the bodies, with Yc_i the composite inertia of the
    subtree of body i (10 components, body i's frame):
      F = Yc_i S_i  (the forces that the joint's unit motions need),
      carried up the support with F <- X_j* F, giving M[j, i] = S_j^T F
      for body i and each ancestor j (and M[i, j] = M[j, i]);
      Yc_parent += X_i* Yc_i X_i^-1."""
    placements, _, _ = c.kinematics(bodies, q, None, trig)
    composite = [body.inertia for body in bodies]
    M = [0.0] * (nv * nv)
    for i in range(len(bodies) - 1, -1, -1):
        body = bodies[i]
        F = c.sym6_columns(c.sym6_from_inertia(composite[i]), body)
        j = i
        while True:
            ancestor = bodies[j]
            for col, f in enumerate(F):
                k = body.v0 + col
                for row, x in enumerate(joints.joint_force(ancestor, f), ancestor.v0):
                    M[row * nv + k] = M[k * nv + row] = x
            if ancestor.parent < 0:
                break
            R, p = placements[j]
            F = [c.act_force(R, p, f) for f in F]
            j = ancestor.parent
        if body.parent >= 0:
            R, p = placements[i]
            composite[body.parent] = c.add_all(composite[body.parent], c.inertia_act(R, p, composite[i]))
    return M


def mass_matrix(model, q):
    """M(q) (..., nv, nv) for a configuration to validate."""
    batch, arrays = model_arrays(model, q=q)
    bodies, nv = c.constants(model), model.nv
    return c.evaluate(lambda *args: _passes(bodies, nv, *args), batch, arrays, (nv, nv))
