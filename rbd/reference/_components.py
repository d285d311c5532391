"""Spatial algebra on scalar components: one code path for one sample and for a batch.

Every spatial quantity is held as a tuple of its scalar components (a rotation
as 9 numbers, row-major; a translation as 3; a motion or force as 6, linear
first).  For one sample the components are Python floats, which costs far less
than NumPy calls on 3-vectors; for a batch each component is a 1-D array over
the samples, so every formula below is one vectorized operation over the
batch.  ``evaluate`` runs an algorithm written on components either way.  What
each joint kind does (its placement, its motion subspace) is in ``joints``.
The same formulas also run on components that are rows over several right-hand
sides at once (numbers broadcast against rows): M^-1's columns, and the ABA's
solves of the contact columns (``dynamics.mass_solve``), as one sample or a batch.

Why these formulas exist beside ``rbd.spatial`` and ``rbd.rotations``: those take
and validate arrays of any batch shape (``(..., 4, 4)`` transforms, ``(..., 6)``
motions), which costs microseconds per call; the algorithms call a transform or
a cross product per body, thousands of times per call, on values that are
already checked.  The same formulas are written here once more on bare
components (tested against the public ones through the algorithms' oracles);
nothing else in the reference repeats them.

The conventions are those of the Pinocchio cheat sheet (docs/conventions.md): the
parent-from-child transform X = (R, p) of each body is stored, motions go down
the tree with its inverse action and forces come back up with its force
action.  Inertias come in two forms:

* a rigid-body inertia as 10 numbers (mass, first moment h = m c, and the
  rotational inertia about the body origin as xx, xy, xz, yy, yz, zz), the
  storage of ``Model.inertias`` (RBDL's 10-number form);
* a general symmetric 6x6 (articulated inertias) as 21 numbers: its blocks
  [[A, B], [B^T, C]] as A (6, upper triangle), B (9, row-major), C (6).
"""
import array
import math
import operator

import numpy as np

from .._checks import check_finite_result, overflow_error
from ..model import JOINT_DIMENSIONS, JOINT_KINDS, JointKind
from . import joints  # each kind's placement and subspace (joints uses this module's formulas)

LIST_OUTPUT = 1 << 14  # one sample's outputs of fewer components are lists (a list's store is ~35 ns faster)
BLOCK = 4096  # samples per vectorized block (measured: larger blocks spill out of cache)
SMALL_BATCH = 16  # fewer samples run one at a time: on rows this short NumPy's cost per call is
                  # more than the arithmetic (a batch of 4 of rnea on a 1000-link chain: 3x the time
                  # of four single calls, crba on 300 links 3.9x; even at about 16)
_BUFFER = 1 << 22  # output components per block at most (32 MB), in blocks of no fewer than 1024 samples


class Body:
    """The constants of one body as Python floats."""

    def __init__(self, model, i):
        self.kind = JointKind(int(model.joint_kinds[i]))
        self.parent = int(model.parents[i])
        self.q0, self.v0 = int(model.q_idx[i]), int(model.v_idx[i])
        self.nv = JOINT_DIMENSIONS[self.kind][1]
        P = model.joint_placements[i]
        self.R0 = tuple(P[:3, :3].ravel().tolist())  # parent-from-joint placement
        self.p0 = tuple(P[:3, 3].tolist())
        self.axis = tuple(model.joint_axes[i].tolist())
        self.R0_axis = tuple((P[:3, :3] @ model.joint_axes[i]).tolist())
        self.inertia = tuple(model.inertias[i].tolist())
        self.armature = tuple(model.armature[self.v0:self.v0 + self.nv].tolist())  # reflected rotor inertia
        spec = JOINT_KINDS[self.kind]
        self.basis = spec.basis if spec.basis >= 0 else None
        self.subspace = joints.subspace(self.kind, spec, self.axis)
        self.motions = [  # the same columns, all as 6-tuples
            tuple(float(k == s) for k in range(6)) if type(s) is int else s for s in self.subspace]


def constants(model):
    """The ``Body`` list of a model, built once and cached on it.  Beyond its own
    constants each body knows its ``subtree_mass`` (its mass and its descendants')."""
    bodies = model._cache.bodies
    if bodies is None:
        bodies = [Body(model, i) for i in range(model.nbodies)]
        for body in bodies:
            body.subtree_mass = body.inertia[0]
        for body in reversed(bodies):
            if body.parent >= 0:
                bodies[body.parent].subtree_mass += body.subtree_mass
        model._cache.bodies = bodies
    return bodies


def chain_of(bodies, i):
    """Body i and its ancestors, root first (-1, the world: none).  Walked up the
    parents on each use: a stored list per body would take memory quadratic in depth."""
    chain = []
    while i >= 0:
        chain.append(i)
        i = bodies[i].parent
    chain.reverse()
    return chain


# ------------------------------------------------------------------------------------------
# Rotations and placements
# ------------------------------------------------------------------------------------------
def _matmul(A, B):
    a0, a1, a2, a3, a4, a5, a6, a7, a8 = A
    b0, b1, b2, b3, b4, b5, b6, b7, b8 = B
    return (a0 * b0 + a1 * b3 + a2 * b6, a0 * b1 + a1 * b4 + a2 * b7, a0 * b2 + a1 * b5 + a2 * b8,
            a3 * b0 + a4 * b3 + a5 * b6, a3 * b1 + a4 * b4 + a5 * b7, a3 * b2 + a4 * b5 + a5 * b8,
            a6 * b0 + a7 * b3 + a8 * b6, a6 * b1 + a7 * b4 + a8 * b7, a6 * b2 + a7 * b5 + a8 * b8)


def _transpose(R):
    return (R[0], R[3], R[6], R[1], R[4], R[7], R[2], R[5], R[8])


def _rotate(R, x, y, z):
    return (R[0] * x + R[1] * y + R[2] * z, R[3] * x + R[4] * y + R[5] * z, R[6] * x + R[7] * y + R[8] * z)


def cross(a0, a1, a2, b0, b1, b2):
    return (a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0)


def _sym_rotate(R, S):
    """R S R^T for a symmetric S given as (xx, xy, xz, yy, yz, zz); 45 products."""
    r0, r1, r2, r3, r4, r5, r6, r7, r8 = R
    xx, xy, xz, yy, yz, zz = S
    t0, t1, t2 = r0 * xx + r1 * xy + r2 * xz, r0 * xy + r1 * yy + r2 * yz, r0 * xz + r1 * yz + r2 * zz
    t3, t4, t5 = r3 * xx + r4 * xy + r5 * xz, r3 * xy + r4 * yy + r5 * yz, r3 * xz + r4 * yz + r5 * zz
    t6, t7, t8 = r6 * xx + r7 * xy + r8 * xz, r6 * xy + r7 * yy + r8 * yz, r6 * xz + r7 * yz + r8 * zz
    return (t0 * r0 + t1 * r1 + t2 * r2, t0 * r3 + t1 * r4 + t2 * r5, t0 * r6 + t1 * r7 + t2 * r8,
            t3 * r3 + t4 * r4 + t5 * r5, t3 * r6 + t4 * r7 + t5 * r8, t6 * r6 + t7 * r7 + t8 * r8)


def _quat_rotation(w, x, y, z, sqrt):
    n = 1.0 / sqrt(w * w + x * x + y * y + z * z)
    w, x, y, z = w * n, x * n, y * n, z * n
    return (1.0 - 2.0 * (y * y + z * z), 2.0 * (x * y - w * z), 2.0 * (x * z + w * y),
            2.0 * (x * y + w * z), 1.0 - 2.0 * (x * x + z * z), 2.0 * (y * z - w * x),
            2.0 * (x * z - w * y), 2.0 * (y * z + w * x), 1.0 - 2.0 * (x * x + y * y))


def _basis_rotated(R0, k, c, s):
    """R0 @ (rotation by (c, s) about basis axis k): two columns of R0 mix."""
    i, j = (k + 1) % 3, (k + 2) % 3
    out = list(R0)
    for r in (0, 3, 6):
        ci, cj = R0[r + i], R0[r + j]
        out[r + i] = c * ci + s * cj
        out[r + j] = c * cj - s * ci
    return tuple(out)


def _axis_rotation(u, c, s):
    """Rodrigues: c I + s [u]x + (1 - c) u u^T for a unit axis u."""
    x, y, z = u
    t = 1.0 - c
    return (c + t * x * x, t * x * y - s * z, t * x * z + s * y,
            t * x * y + s * z, c + t * y * y, t * y * z - s * x,
            t * x * z - s * y, t * y * z + s * x, c + t * z * z)


def compose(R1, p1, R2, p2):
    """(R1, p1) (R2, p2) = (R1 R2, p1 + R1 p2)."""
    r0, r1, r2 = _rotate(R1, p2[0], p2[1], p2[2])
    return _matmul(R1, R2), (p1[0] + r0, p1[1] + r1, p1[2] + r2)


# ------------------------------------------------------------------------------------------
# Motions and forces
# ------------------------------------------------------------------------------------------
def inv_act_motion(R, p, m):
    """X^-1 m = [R^T (v - p x w); R^T w]."""
    v0, v1, v2, w0, w1, w2 = m
    p0, p1, p2 = p
    d0, d1, d2 = v0 - (p1 * w2 - p2 * w1), v1 - (p2 * w0 - p0 * w2), v2 - (p0 * w1 - p1 * w0)
    return (R[0] * d0 + R[3] * d1 + R[6] * d2, R[1] * d0 + R[4] * d1 + R[7] * d2,
            R[2] * d0 + R[5] * d1 + R[8] * d2, R[0] * w0 + R[3] * w1 + R[6] * w2,
            R[1] * w0 + R[4] * w1 + R[7] * w2, R[2] * w0 + R[5] * w1 + R[8] * w2)


def act_motion(R, p, m):
    """X m = [R v + p x (R w); R w]."""
    v0, v1, v2 = _rotate(R, m[0], m[1], m[2])
    w0, w1, w2 = _rotate(R, m[3], m[4], m[5])
    p0, p1, p2 = p
    return (v0 + (p1 * w2 - p2 * w1), v1 + (p2 * w0 - p0 * w2), v2 + (p0 * w1 - p1 * w0), w0, w1, w2)


def rotate_motion(R, m):
    """[R v; R w]: a motion (or force) re-expressed in rotated axes, same origin."""
    return _rotate(R, m[0], m[1], m[2]) + _rotate(R, m[3], m[4], m[5])


def act_force(R, p, f):
    """X* f = [R f; R n + p x (R f)]."""
    f0, f1, f2 = _rotate(R, f[0], f[1], f[2])
    n0, n1, n2 = _rotate(R, f[3], f[4], f[5])
    p0, p1, p2 = p
    return (f0, f1, f2, n0 + p1 * f2 - p2 * f1, n1 + p2 * f0 - p0 * f2, n2 + p0 * f1 - p1 * f0)


def motion_cross(m, n):
    """m x n = [w x v' + v x w'; w x w']."""
    v0, v1, v2, w0, w1, w2 = m
    a0, a1, a2, b0, b1, b2 = n
    return (w1 * a2 - w2 * a1 + v1 * b2 - v2 * b1, w2 * a0 - w0 * a2 + v2 * b0 - v0 * b2,
            w0 * a1 - w1 * a0 + v0 * b1 - v1 * b0, w1 * b2 - w2 * b1, w2 * b0 - w0 * b2, w0 * b1 - w1 * b0)


def add(a, b):
    return (a[0] + b[0], a[1] + b[1], a[2] + b[2], a[3] + b[3], a[4] + b[4], a[5] + b[5])


def sub(a, b):
    return (a[0] - b[0], a[1] - b[1], a[2] - b[2], a[3] - b[3], a[4] - b[4], a[5] - b[5])


def dot(a, b):
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2] + a[3] * b[3] + a[4] * b[4] + a[5] * b[5]


# ------------------------------------------------------------------------------------------
# Rigid-body inertias (10 components)
# ------------------------------------------------------------------------------------------
def inertia_apply(Y, m):
    """Y m = [mass v - h x w; h x v + I w] (inertia about the body origin)."""
    v0, v1, v2, w0, w1, w2 = m
    mass, h0, h1, h2, xx, xy, xz, yy, yz, zz = Y
    return (mass * v0 - (h1 * w2 - h2 * w1), mass * v1 - (h2 * w0 - h0 * w2), mass * v2 - (h0 * w1 - h1 * w0),
            h1 * v2 - h2 * v1 + xx * w0 + xy * w1 + xz * w2,
            h2 * v0 - h0 * v2 + xy * w0 + yy * w1 + yz * w2,
            h0 * v1 - h1 * v0 + xz * w0 + yz * w1 + zz * w2)


def force_cross(m, f):
    """m x* f = [w x f; v x f + w x n]."""
    v0, v1, v2, w0, w1, w2 = m
    f0, f1, f2, n0, n1, n2 = f
    return (w1 * f2 - w2 * f1, w2 * f0 - w0 * f2, w0 * f1 - w1 * f0,
            v1 * f2 - v2 * f1 + w1 * n2 - w2 * n1, v2 * f0 - v0 * f2 + w2 * n0 - w0 * n2,
            v0 * f1 - v1 * f0 + w0 * n1 - w1 * n0)


def bias_force(Y, twist):
    """v x* (Y v), the velocity-product force: with beta = h x w, Y v = [mass v - beta; n],
    and v x (mass v - beta) is written -v x beta (v x v = 0 exactly, where the rounding of
    mass v - beta, crossed with v, would leave eps |v|^2: a free flyer at 1e10 m/s)."""
    v0, v1, v2, w0, w1, w2 = twist
    mass, h0, h1, h2, xx, xy, xz, yy, yz, zz = Y
    b0, b1, b2 = cross(h0, h1, h2, w0, w1, w2)
    f0, f1, f2 = mass * v0 - b0, mass * v1 - b1, mass * v2 - b2  # (Y v as inertia_apply, beta kept)
    n0 = h1 * v2 - h2 * v1 + xx * w0 + xy * w1 + xz * w2
    n1 = h2 * v0 - h0 * v2 + xy * w0 + yy * w1 + yz * w2
    n2 = h0 * v1 - h1 * v0 + xz * w0 + yz * w1 + zz * w2
    wn, vb = cross(w0, w1, w2, n0, n1, n2), cross(v0, v1, v2, b0, b1, b2)
    return cross(w0, w1, w2, f0, f1, f2) + (wn[0] - vb[0], wn[1] - vb[1], wn[2] - vb[2])


def velocity_variation(Y, V):
    """(V x*) Y - Y (V x) for an inertia Y and a twist V: a symmetric matrix of the
    form [[0, -[g]x], [[g]x, N]], returned as the 10 components (0, g, N) of an
    inertia (so ``inertia_apply`` applies it and ``inertia_act`` moves it), with
    g = m v + w x h and N = [w]x I - I [w]x - ([v]x [h]x + [h]x [v]x)
    (= A + A^T - (h v^T + v h^T - 2 (v.h) 1) with A = [w]x I)."""
    mass, h0, h1, h2, xx, xy, xz, yy, yz, zz = Y
    v0, v1, v2, w0, w1, w2 = V
    a00, a01, a02 = w1 * xz - w2 * xy, w1 * yz - w2 * yy, w1 * zz - w2 * yz
    a10, a11, a12 = w2 * xx - w0 * xz, w2 * xy - w0 * yz, w2 * xz - w0 * zz
    a20, a21, a22 = w0 * xy - w1 * xx, w0 * yy - w1 * xy, w0 * yz - w1 * xz
    vh = v0 * h0 + v1 * h1 + v2 * h2
    return (0.0, mass * v0 + w1 * h2 - w2 * h1, mass * v1 + w2 * h0 - w0 * h2, mass * v2 + w0 * h1 - w1 * h0,
            2.0 * (a00 - h0 * v0 + vh), a01 + a10 - (h0 * v1 + v0 * h1), a02 + a20 - (h0 * v2 + v0 * h2),
            2.0 * (a11 - h1 * v1 + vh), a12 + a21 - (h1 * v2 + v1 * h2), 2.0 * (a22 - h2 * v2 + vh))


def inertia_act(R, p, Y):
    """The inertia Y of a child expressed in its parent (X = (R, p)): the
    minimal form of X* Y X^-1, as ``rbd.spatial.inertia_act``:
    h' = m p + R h,  I' = R I R^T + m (|p|^2 1 - p p^T) + 2 (p.Rh) 1 - Rh p^T - p Rh^T.
    With s = h' + Rh the parallel-axis term is (p.s) 1 - [p_i s_i] on the diagonal
    and -(p_j h'_i + p_i Rh_j) off it."""
    mass, h0, h1, h2 = Y[:4]
    p0, p1, p2 = p
    r0, r1, r2 = _rotate(R, h0, h1, h2)
    g0, g1, g2 = mass * p0 + r0, mass * p1 + r1, mass * p2 + r2
    s0, s1, s2 = g0 + r0, g1 + r1, g2 + r2
    diag = p0 * s0 + p1 * s1 + p2 * s2
    xx, xy, xz, yy, yz, zz = _sym_rotate(R, Y[4:])
    return (mass, g0, g1, g2,
            xx + (diag - p0 * s0), xy - (p1 * g0 + p0 * r1), xz - (p2 * g0 + p0 * r2),
            yy + (diag - p1 * s1), yz - (p2 * g1 + p1 * r2), zz + (diag - p2 * s2))


def first_moment_act(R, p, mass, h):
    """A first moment of mass h (= mass c, body axes) about the parent's origin in
    its axes (X = (R, p)): mass p + R h, as in ``inertia_act``."""
    r0, r1, r2 = _rotate(R, h[0], h[1], h[2])
    return (mass * p[0] + r0, mass * p[1] + r1, mass * p[2] + r2)


def add_all(a, b):
    """The sum of two tuples of components, whatever their length."""
    return tuple(map(operator.add, a, b))


# ------------------------------------------------------------------------------------------
# Symmetric 6x6 matrices (21 components)
# ------------------------------------------------------------------------------------------
# Index into the 21 components of the entry (r, c) of the full matrix.
_SYM_INDEX = [[0, 1, 2, 6, 7, 8], [1, 3, 4, 9, 10, 11], [2, 4, 5, 12, 13, 14],
              [6, 9, 12, 15, 16, 17], [7, 10, 13, 16, 18, 19], [8, 11, 14, 17, 19, 20]]
# (r, c) of each of the 21 components, in storage order.
SYM_ENTRIES = [(r, c) for r in range(6) for c in range(r, 6)]
SYM_ENTRIES.sort(key=lambda rc: _SYM_INDEX[rc[0]][rc[1]])


def sym6_from_inertia(Y):
    """The 21 components of the 6x6 matrix [[m 1, -[h]x], [[h]x, I]] of a 10-number inertia."""
    mass, h0, h1, h2 = Y[:4]
    return (mass, 0.0, 0.0, mass, 0.0, mass,
            0.0, h2, -h1, -h2, 0.0, h0, h1, -h0, 0.0) + tuple(Y[4:])


def sym6_columns(S, body):
    """The columns of S_6x6 * (motion subspace of the body's joint), as 6-tuples."""
    return [tuple(S[i] for i in _SYM_INDEX[s]) if type(s) is int else sym6_apply(S, s) for s in body.subspace]


def sym6_apply(S, m):
    """S m = [A v + B w; B^T v + C w]."""
    a0, a1, a2, a3, a4, a5, b0, b1, b2, b3, b4, b5, b6, b7, b8, c0, c1, c2, c3, c4, c5 = S
    v0, v1, v2, w0, w1, w2 = m
    return (a0 * v0 + a1 * v1 + a2 * v2 + b0 * w0 + b1 * w1 + b2 * w2,
            a1 * v0 + a3 * v1 + a4 * v2 + b3 * w0 + b4 * w1 + b5 * w2,
            a2 * v0 + a4 * v1 + a5 * v2 + b6 * w0 + b7 * w1 + b8 * w2,
            b0 * v0 + b3 * v1 + b6 * v2 + c0 * w0 + c1 * w1 + c2 * w2,
            b1 * v0 + b4 * v1 + b7 * v2 + c1 * w0 + c3 * w1 + c4 * w2,
            b2 * v0 + b5 * v1 + b8 * v2 + c2 * w0 + c4 * w1 + c5 * w2)


def sym6_act(R, p, S):
    """X* S X^-1 for a symmetric 6x6 S of the child (X = (R, p)): the same inertia
    in the parent frame.  X* = T Rot with T = [[1, 0], [P, 1]], P = [p]x: rotate
    every block (A, B, C -> R A R^T, R B R^T, R C R^T), then
    T S T^T = [[A, B + A P^T], [., C + P B' + (P B)^T]] with B' = B + A P^T;
    row r of A P^T is p x (row r of A) and (P X)_ij = (p x column j of X)_i."""
    a0, a1, a2, a3, a4, a5 = A = _sym_rotate(R, S[0:6])
    b = _matmul(_matmul(R, S[6:15]), _transpose(R))
    c = _sym_rotate(R, S[15:21])
    p0, p1, p2 = p
    rows = [cross(p0, p1, p2, *row) for row in ((a0, a1, a2), (a1, a3, a4), (a2, a4, a5))]
    b2 = (b[0] + rows[0][0], b[1] + rows[0][1], b[2] + rows[0][2],
          b[3] + rows[1][0], b[4] + rows[1][1], b[5] + rows[1][2],
          b[6] + rows[2][0], b[7] + rows[2][1], b[8] + rows[2][2])  # B'
    PN = [cross(p0, p1, p2, b2[j], b2[j + 3], b2[j + 6]) for j in range(3)]  # P B', by columns
    PB = [cross(p0, p1, p2, b[j], b[j + 3], b[j + 6]) for j in range(3)]  # P B, by columns
    return A + b2 + (c[0] + PN[0][0] + PB[0][0], c[1] + PN[1][0] + PB[0][1], c[2] + PN[2][0] + PB[0][2],
                     c[3] + PN[1][1] + PB[1][1], c[4] + PN[2][1] + PB[1][2], c[5] + PN[2][2] + PB[2][2])


def sym6_subtract_outer(S, W, scales):
    """S - sum_k scales[k] W_k W_k^T for 6-tuples W_k."""
    out = list(S)
    for w, s in zip(W, scales):
        sw = [s * x for x in w]
        out = [x - sw[r] * w[c] for x, (r, c) in zip(out, SYM_ENTRIES)]
    return tuple(out)


# ------------------------------------------------------------------------------------------
# Small symmetric positive definite solves (n <= 6), D = L diag(d) L^T
# ------------------------------------------------------------------------------------------
class SingularPivot(ArithmeticError):
    """An LDL pivot at or below the tolerance: the matrix is singular at its scale."""


def _check_pivot(pivot, tol):
    """Raise SingularPivot unless the pivot (a float, or a row over the samples) exceeds tol."""
    if not (pivot > tol if isinstance(pivot, float) else np.all(pivot > tol)):
        raise SingularPivot()


def ldl(D, tol):
    """The unit lower-triangular L (rows, below the diagonal only: L[i][k] for k < i)
    and the diagonal d of D = L diag(d) L^T, for a symmetric positive definite D
    given as a full list of rows; SingularPivot when a pivot is at most ``tol``."""
    n = len(D)
    if n == 1:
        _check_pivot(D[0][0], tol)
        return [[]], [D[0][0]]
    L, d = [[] for _ in range(n)], []
    for j in range(n):
        dj = D[j][j]
        for k in range(j):
            dj = dj - L[j][k] * L[j][k] * d[k]
        _check_pivot(dj, tol)
        d.append(dj)
        for i in range(j + 1, n):
            x = D[i][j]
            for k in range(j):
                x = x - L[i][k] * L[j][k] * d[k]
            L[i].append(x / dj)
    return L, d


def forward_substitute(L, b):
    """L^-1 b for the unit lower-triangular L of ``ldl``."""
    if len(b) == 1:
        return list(b)
    out = []
    for i, x in enumerate(b):
        for k, l in enumerate(L[i]):
            x = x - l * out[k]
        out.append(x)
    return out


def back_substitute(L, b):
    """L^-T b for the unit lower-triangular L of ``ldl``."""
    n = len(b)
    if n == 1:
        return list(b)
    out = [None] * n
    for i in range(n - 1, -1, -1):
        x = b[i]
        for k in range(i + 1, n):
            x = x - L[k][i] * out[k]
        out[i] = x
    return out


# ------------------------------------------------------------------------------------------
# Shared pass and the batch driver
# ------------------------------------------------------------------------------------------
def kinematics(bodies, q, v, trig, chain=None):
    """The forward kinematic pass: the placements (R, p) of every body in its parent
    and, if v is given, the body twists and the joint twists S q_dot_j (else None).

    ``chain`` (a body's ``chain``, or any list of bodies closed under parents, in
    increasing order) limits the pass to those bodies; the lists, still indexed
    by body, hold None elsewhere."""
    n = len(bodies)
    if chain is None:
        placements = [joints.placement(body, q, trig) for body in bodies]
        chain = range(n)
    else:
        placements = [None] * n
        for i in chain:
            placements[i] = joints.placement(bodies[i], q, trig)
    if v is None:
        return placements, None, None
    twists, joint_twists = [None] * n, [None] * n
    for i in chain:
        body = bodies[i]
        joint_twists[i] = s = joints.joint_motion(body, v)
        if body.parent >= 0:
            R, p = placements[i]
            s = add(inv_act_motion(R, p, twists[body.parent]), s)
        twists[i] = s
    return placements, twists, joint_twists


def world_placements(bodies, placements, chain=None, centered=False):
    """world_from_body (R, p) of the bodies of ``chain`` (all by default; as in
    ``kinematics``) from their parent_from_body placements, list by body.  ``centered``:
    the origin moved to the first body's (world axes), for sums in world axes whose
    results do not depend on the origin: about the world origin, inertias (m |p|^2) and
    columns (p x w) grow with the robot's distance from it and cancel (as rbd_c's
    center_root)."""
    world = [None] * len(bodies)
    ref = placements[0][1] if centered and placements else None  # (a model may have no body)
    for i in range(len(bodies)) if chain is None else chain:
        parent = bodies[i].parent
        if parent >= 0:
            world[i] = compose(*world[parent], *placements[i])
        elif centered:
            R, p = placements[i]
            world[i] = (R, (p[0] - ref[0], p[1] - ref[1], p[2] - ref[2]))
        else:
            world[i] = placements[i]
    return world


def lanes(q):
    """The shape of one component: () for one sample (floats), (samples,) for a batch."""
    return np.shape(q[0]) if len(q) else ()


def stacked(m, shape):
    """The components of m (floats or rows of ``shape``) as one array (len(m),) + shape."""
    out = np.empty((len(m),) + shape)
    for k, x in enumerate(m):
        out[k] = x
    return out


def output(size, q):
    """Zeroed storage for ``size`` output components that the passes fill by index, for
    the samples of ``q`` (a component list).  One sample: a list of floats while small
    (the fastest to fill), else a view of an array of doubles (8 bytes an entry, where a
    list takes 32: 4x an nv x nv output).  A batch: an array of one row per component.
    ``evaluate`` takes each as it is."""
    shape = lanes(q)
    if shape != ():
        return np.zeros((size,) + shape)
    if size < LIST_OUTPUT:
        return [0.0] * size
    return memoryview(array.array("d", [0.0]) * size)


def evaluate(passes, batch, inputs, out_shape):
    """Run ``passes(*inputs, trig)``, an algorithm on components that returns the
    components of its per-sample output (C order of ``out_shape``; a list, an ``output``
    or an array of them), on validated
    arrays with leading dimensions ``batch`` (inputs may be None).

    ``out_shape`` may also be a list of shapes: the passes then return the
    components of every output one after the other, and ``evaluate`` returns a
    tuple of arrays (the derivatives have several outputs).

    One sample runs on Python floats.  A batch runs with one row per component,
    samples along the row (contiguous rows: fast vector ops), in blocks small
    enough that the rows stay in cache across the passes."""
    shapes = out_shape if isinstance(out_shape, list) else [out_shape]
    size = sum(math.prod(shape) for shape in shapes)
    n = math.prod(batch)
    if batch == ():
        out = _one_sample(passes, inputs, size)
        if out is None:
            raise overflow_error()
    elif size == 0:  # nothing to compute per sample (a 0-dof model): no loop over 2**40 empty ones
        out = np.empty(batch + (0,))
    elif n < SMALL_BATCH:  # one sample at a time, on floats (a singular joint raises at once, as in rows)
        samples = [None if x is None else x.reshape((n,) + x.shape[len(batch):]) for x in inputs]
        out = np.empty((n, size))
        for s in range(n):
            one = _one_sample(passes, [None if x is None else x[s] for x in samples], size)
            out[s] = np.nan if one is None else one  # (an overflow: the error below)
    else:
        tails = [None if x is None else x.shape[len(batch):] for x in inputs]
        flat = [None if x is None else x.reshape((n, math.prod(t))) for x, t in zip(inputs, tails)]
        out = np.empty((n, size))
        block = max(1024, min(BLOCK, _BUFFER // max(size, 1)))  # large outputs (M, C): smaller blocks
        buffer = None  # (allocated on first use: passes that return an ``output`` need none)
        for start in range(0, n, block):
            count = min(block, n - start)
            rows = [None if x is None else np.ascontiguousarray(x[start:start + block].T).reshape(t + (count,))
                    for x, t in zip(flat, tails)]
            with np.errstate(over="ignore", invalid="ignore"):  # overflow: the error below
                result = passes(*rows, (np.cos, np.sin, np.sqrt))
                if isinstance(result, np.ndarray):  # (an ``output``: already one row per component)
                    _transpose_into(out[start:start + count], result.reshape(size, count))
                    continue
                if buffer is None:
                    buffer = np.empty((size, min(block, n)))
                for k, component in enumerate(result):
                    buffer[k, :count] = component
            _transpose_into(out[start:start + count], buffer[:, :count])
    check_finite_result(out.reshape(batch + (size,)), 1)  # (naming a batch's first overflowing sample)
    if not isinstance(out_shape, list):
        return out.reshape(batch + out_shape)
    results, start = [], 0
    for shape in shapes:
        stop = start + math.prod(shape)
        results.append(np.ascontiguousarray(out[..., start:stop]).reshape(batch + tuple(shape)))
        start = stop
    return tuple(results)


def _one_sample(passes, inputs, size):
    """The passes on one sample's inputs, on Python floats: the ``size`` components of its
    output, or None where an intermediate overflowed."""
    try:
        with np.errstate(over="ignore", invalid="ignore"):  # (rows over columns: the check after)
            out = passes(*[None if x is None else x.tolist() for x in inputs], (math.cos, math.sin, math.sqrt))
    except OverflowError:
        return None
    except ValueError as exc:  # math.cos(inf) & co: an intermediate overflowed
        if str(exc) != "math domain error":
            raise
        return None
    # (an ``output`` or an array is used as it is: a copy would double the peak of M^-1)
    out = np.frombuffer(out, dtype=float) if isinstance(out, memoryview) else np.asarray(out, dtype=float)
    return out.reshape(size)


def _transpose_into(out, buffer):
    """out[:] = buffer.T, by tiles: a plain transposed copy of a large buffer reads
    each sample's components from as many memory pages (measured 4x slower)."""
    size, count = buffer.shape
    for k in range(0, size, 64):
        for s in range(0, count, 256):
            out[s:s + 256, k:k + 64] = buffer[k:k + 64, s:s + 256].T
