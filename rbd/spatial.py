"""Spatial algebra on SE(3), linear first (the NumPy reference).

Conventions (``docs/conventions.md``):

* a transform ``aMb`` is a 4x4 homogeneous matrix, ``p_a = R p_b + t``; one
  that is not rigid (rotation block not a rotation to 1e-6, last row not
  ``0 0 0 1``) is refused;
* a motion (twist, acceleration) is ``[v; w]``, a force (wrench) is ``[f; tau]``;
* an inertia is stored as the 10 numbers
  ``inertia10 = [m, hx, hy, hz, Ixx, Ixy, Ixz, Iyy, Iyz, Izz]`` with
  ``h = m c`` the first moment of mass and ``I`` the rotational inertia about
  the FRAME ORIGIN (not the center of mass), both in the frame's axes.  Its
  6x6 matrix is ``[[m 1, -[h]x], [[h]x, I]]``.

Every function broadcasts over leading (batch) dimensions.  The transforms are
applied with the minimal-operation formulas on ``R``, ``t`` and cross products
(24 multiplications for a twist); the dense 6x6 matrices exist only in
``adjoint``, ``ad_matrix``, ``ad_star_matrix``, ``inertia_matrix`` and
``inertia10_to_matrix``, for users and tests.
"""
import numpy as np

from . import rotations
from ._checks import as_array, as_transform, batch_shape, check_mass_com, finite_results

__all__ = [
    "se3_exp", "se3_log", "se3_inverse", "se3_compose", "se3_act_point",
    "act_motion", "inv_act_motion", "act_force", "inv_act_force",
    "motion_cross", "force_cross", "adjoint", "ad_matrix", "ad_star_matrix",
    "inertia_matrix", "inertia10_from_mass_com", "inertia10_to_mass_com",
    "inertia10_to_matrix", "inertia_apply", "inertia_cross_term",
    "inertia_act", "inertia_inv_act",
]


# ------------------------------------------------------------------------------------------
# Small helpers
# ------------------------------------------------------------------------------------------
def _transform(M, name="M"):
    M = as_transform(M, name)
    return M, M[..., :3, :3], M[..., :3, 3]


def _check_batches(*named):
    """Raise naming the arguments when their batch shapes do not broadcast."""
    batch_shape(list(named))


def _rot(R, x):
    """R x for stacks of 3x3 matrices and 3-vectors."""
    return np.matmul(R, x[..., None])[..., 0]


def _rot_t(R, x):
    """R^T x."""
    return np.matmul(np.swapaxes(R, -1, -2), x[..., None])[..., 0]


def _sym_from6(S6):
    """The symmetric 3x3 matrix of [xx, xy, xz, yy, yz, zz]."""
    xx, xy, xz, yy, yz, zz = np.moveaxis(S6, -1, 0)
    return np.stack([np.stack([xx, xy, xz], -1),
                     np.stack([xy, yy, yz], -1),
                     np.stack([xz, yz, zz], -1)], -2)


def _sym_to6(S):
    return np.stack([S[..., 0, 0], S[..., 0, 1], S[..., 0, 2],
                     S[..., 1, 1], S[..., 1, 2], S[..., 2, 2]], -1)


# ------------------------------------------------------------------------------------------
# SE(3)
# ------------------------------------------------------------------------------------------
def se3_exp(twist):
    """The transform exp([v; w]^) (4x4): R = exp([w]x), t = J_l(w) v."""
    return _se3_exp(as_array(twist, "twist", (6,)))


def _se3_exp(twist):
    v, w = twist[..., :3], twist[..., 3:]
    out = np.zeros(twist.shape[:-1] + (4, 4))
    out[..., :3, :3] = rotations._so3_exp(w)
    out[..., :3, 3] = _rot(rotations._left_jacobian(w), v)
    out[..., 3, 3] = 1.0
    return out


def se3_log(M):
    """The twist [v; w] with se3_exp(twist) = M, rotation angle in [0, pi]."""
    M, R, p = _transform(M)
    return _se3_log(rotations._matrix(R, "the rotation of M"), p)


def _se3_log(R, p):
    """The twist of the rigid transform with rotation R and translation p."""
    w = rotations._quat_to_rotvec(rotations._matrix_to_quat(R))
    v = _rot(rotations._left_jacobian_inverse(w), p)
    return np.concatenate([v, w], axis=-1)


def se3_inverse(M):
    """M^{-1} = [[R^T, -R^T t], [0, 1]]."""
    M, R, p = _transform(M)
    out = np.zeros(M.shape)
    Rt = np.swapaxes(R, -1, -2)
    out[..., :3, :3] = Rt
    out[..., :3, 3] = -_rot(Rt, p)
    out[..., 3, 3] = 1.0
    return out


def se3_compose(A, B):
    """A @ B, from the rotations and translations: [[Ra Rb, ta + Ra tb], [0, 1]]."""
    A, Ra, pa = _transform(A, "A")
    B, Rb, pb = _transform(B, "B")
    shape = batch_shape([("A", A, 2), ("B", B, 2)])
    out = np.zeros(shape + (4, 4))
    out[..., :3, :3] = np.matmul(Ra, Rb)
    out[..., :3, 3] = pa + _rot(Ra, pb)
    out[..., 3, 3] = 1.0
    return out


def se3_act_point(M, p):
    """The point p_b expressed in frame a: R p + t."""
    M, R, t = _transform(M)
    p = as_array(p, "p", (3,))
    _check_batches(("M", M, 2), ("p", p, 1))
    return _rot(R, p) + t


# ------------------------------------------------------------------------------------------
# Motions and forces
# ------------------------------------------------------------------------------------------
def _split6(x):
    return x[..., :3], x[..., 3:]


def act_motion(M, m):
    """Ad_M m: [R v + t x (R w); R w]."""
    M, R, p = _transform(M)
    m = as_array(m, "m", (6,))
    _check_batches(("M", M, 2), ("m", m, 1))
    v, w = _split6(m)
    Rw = _rot(R, w)
    return np.concatenate([_rot(R, v) + np.cross(p, Rw), Rw], axis=-1)


def inv_act_motion(M, m):
    """Ad_M^{-1} m: [R^T (v - t x w); R^T w]."""
    M, R, p = _transform(M)
    m = as_array(m, "m", (6,))
    _check_batches(("M", M, 2), ("m", m, 1))
    v, w = _split6(m)
    return np.concatenate([_rot_t(R, v - np.cross(p, w)), _rot_t(R, w)], axis=-1)


def act_force(M, f):
    """Ad_M^{-T} f: [R f; R tau + t x (R f)]."""
    M, R, p = _transform(M)
    f = as_array(f, "f", (6,))
    _check_batches(("M", M, 2), ("f", f, 1))
    lin, tau = _split6(f)
    Rf = _rot(R, lin)
    return np.concatenate([Rf, _rot(R, tau) + np.cross(p, Rf)], axis=-1)


def inv_act_force(M, f):
    """Ad_M^T f: [R^T f; R^T (tau - t x f)]."""
    M, R, p = _transform(M)
    f = as_array(f, "f", (6,))
    _check_batches(("M", M, 2), ("f", f, 1))
    lin, tau = _split6(f)
    return np.concatenate([_rot_t(R, lin), _rot_t(R, tau - np.cross(p, lin))], axis=-1)


def motion_cross(m1, m2):
    """ad_{m1} m2 = m1 x m2 = [v1 x w2 + w1 x v2; w1 x w2]."""
    m1 = as_array(m1, "m1", (6,))
    m2 = as_array(m2, "m2", (6,))
    _check_batches(("m1", m1, 1), ("m2", m2, 1))
    v1, w1 = _split6(m1)
    v2, w2 = _split6(m2)
    return np.concatenate([np.cross(v1, w2) + np.cross(w1, v2), np.cross(w1, w2)], axis=-1)


def force_cross(m, f):
    """m x* f = -ad_m^T f = [w x f; w x tau + v x f]."""
    m = as_array(m, "m", (6,))
    f = as_array(f, "f", (6,))
    _check_batches(("m", m, 1), ("f", f, 1))
    v, w = _split6(m)
    lin, tau = _split6(f)
    return np.concatenate([np.cross(w, lin), np.cross(w, tau) + np.cross(v, lin)], axis=-1)


def _block_triangular(diagonal, corner, upper):
    """The 6x6 matrix with the 3x3 ``diagonal`` on both diagonal blocks and ``corner`` in
    the upper-right (upper) or lower-left block, zero elsewhere (batched)."""
    out = np.zeros(diagonal.shape[:-2] + (6, 6))
    out[..., :3, :3] = diagonal
    out[..., 3:, 3:] = diagonal
    if upper:
        out[..., :3, 3:] = corner
    else:
        out[..., 3:, :3] = corner
    return out


def adjoint(M):
    """The 6x6 matrix Ad_M = [[R, [t]x R], [0, R]] (motions; forces use its inverse transpose)."""
    M, R, p = _transform(M)
    return _adjoint(R, p)


def _adjoint(R, p):
    return _block_triangular(R, np.matmul(rotations._skew(p), R), upper=True)


def ad_matrix(m):
    """The 6x6 matrix ad_m = [[[w]x, [v]x], [0, [w]x]] with ad_m x = motion_cross(m, x)."""
    m = as_array(m, "m", (6,))
    return _block_triangular(rotations._skew(m[..., 3:]), rotations._skew(m[..., :3]), upper=True)


def ad_star_matrix(m):
    """The 6x6 matrix of force_cross(m, .): -ad_m^T = [[[w]x, 0], [[v]x, [w]x]]."""
    m = as_array(m, "m", (6,))
    return _block_triangular(rotations._skew(m[..., 3:]), rotations._skew(m[..., :3]), upper=False)


# ------------------------------------------------------------------------------------------
# Inertia
# ------------------------------------------------------------------------------------------
def _mass(mass):
    # as_array goes through np.ascontiguousarray, which turns a 0-d array into
    # shape (1,): restore the caller's shape so a scalar mass has batch shape ().
    mass = as_array(mass, "mass", ()).reshape(np.shape(mass))
    if np.any(mass < 0.0):
        raise ValueError("mass must be non-negative, got %s" % (mass.min(),))
    return mass


def _split10(Y):
    return Y[..., 0], Y[..., 1:4], Y[..., 4:10]


def _from_mass_com(mass, com, I_com, I_name):
    mass = _mass(mass)
    com = as_array(com, "com", (3,))
    I_com = as_array(I_com, I_name, (3, 3))
    # Accept round-off asymmetry (as the model builder does) and use the symmetric part.
    scale = np.maximum(np.abs(I_com).max(axis=(-2, -1)), 1e-300)
    if np.any(np.abs(I_com - np.swapaxes(I_com, -1, -2)).max(axis=(-2, -1)) > 1e-9 * scale):
        raise ValueError("%s must be symmetric (a rotational inertia)" % I_name)
    shape = batch_shape([("mass", mass, 0), ("com", com, 1), (I_name, I_com, 2)])
    mass = np.broadcast_to(mass, shape)
    Ic = 0.5 * (I_com + np.swapaxes(I_com, -1, -2))
    I0 = Ic + mass[..., None, None] * (np.sum(com * com, axis=-1)[..., None, None] * np.eye(3)
                                       - com[..., :, None] * com[..., None, :])
    out = np.empty(shape + (10,))
    out[..., 0] = mass
    out[..., 1:4] = mass[..., None] * com
    out[..., 4:10] = _sym_to6(np.broadcast_to(I0, shape + (3, 3)))
    return out


def inertia10_from_mass_com(mass, com, I_com):
    """The 10-number inertia [m, m c, I_origin] of a body of mass ``mass``,
    center of mass ``com`` and rotational inertia ``I_com`` about the center of
    mass (the symmetric part of ``I_com`` is used), all in the body frame.

    I_origin = I_com - m [c]x^2 = I_com + m (|c|^2 1 - c c^T) (parallel axes)."""
    return _from_mass_com(mass, com, I_com, "I_com")


def inertia10_to_mass_com(Y10):
    """(mass, com, I_com) of a 10-number inertia; a massless inertia has com = 0 (a
    negative mass, or a first moment without mass, is a ValueError)."""
    Y10 = as_array(Y10, "Y10", (10,))
    check_mass_com(Y10)
    m, h, I6 = _split10(Y10)
    massive = m > 0.0
    safe_m = np.where(massive, m, 1.0)
    com = np.where(massive[..., None], h / safe_m[..., None], 0.0)
    # I_com = I_origin - m (|c|^2 1 - c c^T); divide by m last so that a tiny
    # (even subnormal) mass does not overflow 1/m
    hh = np.sum(h * h, axis=-1)[..., None, None] * np.eye(3) - h[..., :, None] * h[..., None, :]
    I_com = _sym_from6(I6) - np.where(massive[..., None, None], hh / safe_m[..., None, None], 0.0)
    return m.copy(), com, I_com


def inertia10_to_matrix(Y10):
    """The 6x6 spatial inertia [[m 1, -[h]x], [[h]x, I_origin]]."""
    Y10 = as_array(Y10, "Y10", (10,))
    m, h, I6 = _split10(Y10)
    H = rotations._skew(h)
    out = np.zeros(Y10.shape[:-1] + (6, 6))
    out[..., :3, :3] = m[..., None, None] * np.eye(3)
    out[..., :3, 3:] = -H
    out[..., 3:, :3] = H
    out[..., 3:, 3:] = _sym_from6(I6)
    return out


def inertia_matrix(mass, com, I):
    """The 6x6 spatial inertia at the body origin of a body of mass ``mass``,
    center of mass ``com`` (body coordinates) and rotational inertia ``I``
    about the center of mass (body axes)."""
    return inertia10_to_matrix(_from_mass_com(mass, com, I, "I"))


def _apply(m, h, I6, v, w):
    """Y [v; w] = [m v - h x w; h x v + I w], and h x w (reused by the cross term)."""
    hw = np.cross(h, w)
    lin = m[..., None] * v - hw
    ang = np.cross(h, v) + np.matmul(_sym_from6(I6), w[..., None])[..., 0]
    return lin, ang, hw


def inertia_apply(Y10, m):
    """Y m: the momentum (or force) [m v - h x w; h x v + I w]."""
    Y10 = as_array(Y10, "Y10", (10,))
    m = as_array(m, "m", (6,))
    _check_batches(("Y10", Y10, 1), ("m", m, 1))
    mass, h, I6 = _split10(Y10)
    v, w = _split6(m)
    lin, ang, _ = _apply(mass, h, I6, v, w)
    return np.concatenate([lin, ang], axis=-1)


def inertia_cross_term(Y10, m):
    """m x* (Y m), with five cross products: for beta = h x w and f = m v - beta,
    [w x f; w x (h x v + I w) - v x beta]  (v x f = -v x beta since v x v = 0)."""
    Y10 = as_array(Y10, "Y10", (10,))
    m = as_array(m, "m", (6,))
    _check_batches(("Y10", Y10, 1), ("m", m, 1))
    mass, h, I6 = _split10(Y10)
    v, w = _split6(m)
    lin, ang, beta = _apply(mass, h, I6, v, w)
    return np.concatenate([np.cross(w, lin), np.cross(w, ang) - np.cross(v, beta)], axis=-1)


def _translation_term(m, p, h):
    """The 6 numbers of  m (|p|^2 1 - p p^T) + 2 (p.h) 1 - h p^T - p h^T: what
    the inertia about an origin gains when every point r of the body becomes
    p + r (parallel axes), for a body of mass m and first moment h; this is
    sum mu (|p + r|^2 1 - (p + r)(p + r)^T) - sum mu (|r|^2 1 - r r^T)."""
    px, py, pz = np.moveaxis(p, -1, 0)
    hx, hy, hz = np.moveaxis(h, -1, 0)
    diag = m * (px * px + py * py + pz * pz) + 2.0 * (px * hx + py * hy + pz * hz)
    return np.stack([
        diag - m * px * px - 2.0 * hx * px,
        -m * px * py - hx * py - px * hy,
        -m * px * pz - hx * pz - px * hz,
        diag - m * py * py - 2.0 * hy * py,
        -m * py * pz - hy * pz - py * hz,
        diag - m * pz * pz - 2.0 * hz * pz], -1)


def inertia_act(M, Y10):
    """Express in frame a an inertia given in frame b (M = aMb):
    m' = m, h' = m t + R h, I' = R I R^T + m (|t|^2 1 - t t^T) + 2 (t.Rh) 1 - Rh t^T - t (Rh)^T.
    (The same as Ad_M^{-T} Y Ad_M^{-1}, without any 6x6 product.)"""
    M, R, p = _transform(M)
    Y10 = as_array(Y10, "Y10", (10,))
    shape = batch_shape([("M", M, 2), ("Y10", Y10, 1)])
    m, h, I6 = _split10(Y10)
    m = np.broadcast_to(m, shape)
    Rh = _rot(R, h)
    I_rot = np.matmul(np.matmul(R, _sym_from6(I6)), np.swapaxes(R, -1, -2))
    out = np.empty(shape + (10,))
    out[..., 0] = m
    out[..., 1:4] = m[..., None] * p + Rh
    out[..., 4:10] = _sym_to6(I_rot) + _translation_term(m, p, Rh)
    return out


def inertia_inv_act(M, Y10):
    """Express in frame b an inertia given in frame a (M = aMb), the inverse of
    ``inertia_act``: move the origin to t first (still in a's axes), then rotate
    by R^T.  h' = R^T (h - m t)."""
    M, R, p = _transform(M)
    Y10 = as_array(Y10, "Y10", (10,))
    shape = batch_shape([("M", M, 2), ("Y10", Y10, 1)])
    m, h, I6 = _split10(Y10)
    m = np.broadcast_to(m, shape)
    h_moved = h - m[..., None] * p  # first moment about the new origin, a's axes
    # inertia_act added _translation_term(m, t, R h_b) with R h_b = h_moved: remove it.
    I_moved = _sym_from6(I6 - _translation_term(m, p, h_moved))
    Rt = np.swapaxes(R, -1, -2)
    out = np.empty(shape + (10,))
    out[..., 0] = m
    out[..., 1:4] = _rot_t(R, h_moved)
    out[..., 4:10] = _sym_to6(np.matmul(np.matmul(Rt, I_moved), R))
    return out


# Every public function: an overflow is the shared error, never an inf or NaN returned.
for _name in __all__:
    if callable(globals()[_name]):
        globals()[_name] = finite_results(globals()[_name])
del _name
