"""ABA written on scalar components (see ``_components``): one code path for
one sample and for a batch."""
from .._checks import model_arrays, singular_joint_error, singular_tolerance
from . import _components as c
from . import joints


class _Singular(Exception):
    """Raised inside the passes at the first singular joint (body index in args[0])."""


def _passes(bodies, gravity, tol, q, v, tau, fext, trig):
    """The nv components of q_ddot; fext may be None.

    Articulated-body algorithm in body frames (Featherstone; Pinocchio's aba).
    1. Forward: placements, twists v_i, the velocity-product acceleration
       c_i = v_i x (S v_j), and the bias force pA_i = v_i x* (Y_i v_i) - fext_i;
       the articulated inertia IA_i starts as Y_i (symmetric 6x6, 21 components).
    2. Backward: U = IA_i S, D = S^T U = L diag(d) L^T, u = tau_i - S^T pA_i;
       then the parent gets what the subtree passes through the joint:
       Ia = IA_i - U D^-1 U^T,  pa = pA_i + Ia c_i + U D^-1 u,
       IA_parent += X_i* Ia X_i^-1,  pA_parent += X_i* pa.
    3. Forward (the world accelerates by -g): a_i = X_i^-1 a_parent + c_i,
       q_ddot_j = D^-1 (u - U^T a_i),  a_i += S q_ddot_j.
    With W = U L^-T and z = L^-1 u, U D^-1 U^T = W diag(1/d) W^T,
    U D^-1 u = W (z / d) and D^-1 (u - U^T a) = L^-T ((z - W^T a) / d): the
    multi-DoF joints need no inverse, the 1-DoF ones (L empty) reduce to
    scalars."""
    n = len(bodies)
    placements, twists, joint_twists = c.kinematics(bodies, q, v, trig)
    articulated, bias, coriolis = [None] * n, [None] * n, [None] * n
    for i, body in enumerate(bodies):
        articulated[i] = c.sym6_from_inertia(body.inertia)
        bias[i] = c.bias_force(body.inertia, twists[i])
        if fext is not None:
            bias[i] = c.sub(bias[i], fext[i])
        coriolis[i] = c.motion_cross(twists[i], joint_twists[i])  # S is constant in the body frame

    factors = [None] * n
    for i in range(n - 1, -1, -1):
        body = bodies[i]
        U = c.sym6_columns(articulated[i], body)
        try:
            L, d = c.ldl([joints.joint_force(body, column) for column in U], tol)  # D, row by row (symmetric)
        except c.SingularPivot:
            raise _Singular(i) from None
        u = [tau[body.v0 + k] - x for k, x in enumerate(joints.joint_force(body, bias[i]))]
        z = c.forward_substitute(L, u)
        W = U if body.nv == 1 else list(zip(*[c.forward_substitute(L, [col[r] for col in U]) for r in range(6)]))
        inv_d = [1.0 / x for x in d]
        factors[i] = L, W, z, inv_d
        if body.parent >= 0:
            Ia = c.sym6_subtract_outer(articulated[i], W, inv_d)
            pa = c.add(bias[i], c.sym6_apply(Ia, coriolis[i]))
            for w, zk, s in zip(W, z, inv_d):
                t = zk * s
                pa = (pa[0] + w[0] * t, pa[1] + w[1] * t, pa[2] + w[2] * t,
                      pa[3] + w[3] * t, pa[4] + w[4] * t, pa[5] + w[5] * t)
            R, p = placements[i]
            articulated[body.parent] = c.add_all(articulated[body.parent], c.sym6_act(R, p, Ia))
            bias[body.parent] = c.add(bias[body.parent], c.act_force(R, p, pa))

    qdd = [None] * (sum(body.nv for body in bodies))
    accs = [None] * n
    world_acc = (-gravity[0], -gravity[1], -gravity[2], 0.0, 0.0, 0.0)
    for i, body in enumerate(bodies):
        R, p = placements[i]
        acc = c.add(c.inv_act_motion(R, p, world_acc if body.parent < 0 else accs[body.parent]), coriolis[i])
        L, W, z, inv_d = factors[i]
        y = [(zk - c.dot(w, acc)) * s for w, zk, s in zip(W, z, inv_d)]
        qdd[body.v0:body.v0 + body.nv] = c.back_substitute(L, y)
        accs[i] = joints.add_joint_motion(acc, body, qdd)
    return qdd


def forward_dynamics(model, q, v, tau, fext):
    """q_ddot (..., nv) for arrays to validate (fext may be None)."""
    batch, arrays = model_arrays(model, q=q, v=v, tau=tau, fext=fext)
    bodies = c.constants(model)
    gravity = model.gravity.tolist()
    tol = singular_tolerance(model)
    try:
        return c.evaluate(lambda *args: _passes(bodies, gravity, tol, *args), batch, arrays, (model.nv,))
    except _Singular as exc:
        raise singular_joint_error(model, exc.args[0]) from None
