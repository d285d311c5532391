"""The Coriolis matrix written on scalar components (see ``_components``): one
code path for one sample and for a batch."""
from .._checks import model_arrays
from . import _components as c
from . import joints


def _cross_columns(V):
    """The columns of the 6x6 matrix of m -> V x m."""
    v0, v1, v2, w0, w1, w2 = V
    return [(0.0, w2, -w1, 0.0, 0.0, 0.0), (-w2, 0.0, w0, 0.0, 0.0, 0.0), (w1, -w0, 0.0, 0.0, 0.0, 0.0),
            (0.0, v2, -v1, 0.0, w2, -w1), (-v2, 0.0, v0, -w2, 0.0, w0), (v1, -v0, 0.0, w1, -w0, 0.0)]


def _half_symmetric_part(Y, V):
    """-1/2 ((V x)^T Y + Y (V x)) = 1/2 ((V x*) Y - Y (V x)), 21 components."""
    P = [c.inertia_apply(Y, column) for column in _cross_columns(V)]  # the columns of Y (V x)
    return tuple(-0.5 * (P[col][row] + P[row][col]) for row, col in c.SYM_ENTRIES)


def _passes(bodies, nv, q, v, trig):
    """The nv x nv components of C(q, v), row-major.

    Pinocchio's factorisation (computeCoriolisMatrix), in body frames.  Per
    body, with inertia Y, twist V and momentum h = Y V,
    B = ((V x*) Y - Y (V x) + (h x-bar*)) / 2, where (h x-bar*) m = m x* h;
    B splits into a symmetric part (21 components) and the skew (h x-bar*) / 2,
    and both parts move between frames like Y and h, so the composites Yc, Bc
    of a subtree come up the tree as 10 + 21 + 6 components.  With S_k the
    joint's motion subspace and dJ_k = V_k x S_k (frame k), backward over k:
      F = Yc_k dJ_k + Bc_k S_k,  G1 = Yc_k S_k,  G2 = Bc_k^T S_k,
    carried up the support with X* (like the CRBA's columns), giving
      C[j, k] = S_j^T F                    for j = k and each ancestor j,
      C[k, j] = G1 . dJ_j + S_j^T G2       for each strict ancestor j."""
    n = len(bodies)
    placements, twists, _ = c.kinematics(bodies, q, v, trig)
    composite = [body.inertia for body in bodies]
    symmetric = [_half_symmetric_part(body.inertia, twists[i]) for i, body in enumerate(bodies)]
    momentum = [tuple(0.5 * x for x in c.inertia_apply(body.inertia, twists[i])) for i, body in enumerate(bodies)]
    dJ = [[c.motion_cross(twists[i], s) for s in body.motions] for i, body in enumerate(bodies)]
    C = [0.0] * (nv * nv)
    for k in range(n - 1, -1, -1):
        body = bodies[k]
        G1 = c.sym6_columns(c.sym6_from_inertia(composite[k]), body)
        sym = c.sym6_columns(symmetric[k], body)
        skew = [c.force_cross(s, momentum[k]) for s in body.motions]  # (hc x-bar*) S / 2
        F = [c.add(c.add(c.inertia_apply(composite[k], d), a), b) for d, a, b in zip(dJ[k], sym, skew)]
        G2 = [c.sub(a, b) for a, b in zip(sym, skew)]
        j = k
        while True:
            ancestor = bodies[j]
            for col, f in enumerate(F):
                for row, x in enumerate(joints.joint_force(ancestor, f), ancestor.v0):
                    C[row * nv + body.v0 + col] = x
            if j != k:
                for row, (g1, g2) in enumerate(zip(G1, G2), body.v0):
                    for col, (d, x) in enumerate(zip(dJ[j], joints.joint_force(ancestor, g2)), ancestor.v0):
                        C[row * nv + col] = c.dot(g1, d) + x
            if ancestor.parent < 0:
                break
            R, p = placements[j]
            F, G1, G2 = ([c.act_force(R, p, f) for f in forces] for forces in (F, G1, G2))
            j = ancestor.parent
        if body.parent >= 0:
            R, p = placements[k]
            parent = body.parent
            composite[parent] = c.add_all(composite[parent], c.inertia_act(R, p, composite[k]))
            symmetric[parent] = c.add_all(symmetric[parent], c.sym6_act(R, p, symmetric[k]))
            momentum[parent] = c.add(momentum[parent], c.act_force(R, p, momentum[k]))
    return C


def coriolis(model, q, v):
    """C(q, v) (..., nv, nv) for arrays to validate."""
    batch, arrays = model_arrays(model, q=q, v=v)
    bodies, nv = c.constants(model), model.nv
    return c.evaluate(lambda *args: _passes(bodies, nv, *args), batch, arrays, (nv, nv))
