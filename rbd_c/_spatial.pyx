# cython: language_level=3
"""Compiled spatial algebra: the functions of ``rbd.spatial``, same names,
signatures, batching and errors.

Three levels, as in SciPy's rotation Cython: the one-item kernels of
``_kernels.pxd``; a ``cdef`` loop over the flattened batch that calls a kernel
with the GIL released; a thin ``def`` wrapper that validates and broadcasts
once in Python (``rbd._checks``), allocates the output and runs the loop.
A side of a binary operation that holds a single item is not copied: the loop
reads it with a batch step of 0.
"""
cimport cython
import numpy as np

cimport rbd_c._kernels as K
from rbd_c._typedefs cimport unary_kernel_t, binary_kernel_t

from rbd._checks import as_array, batch_shape

__all__ = [
    "se3_exp", "se3_log", "se3_inverse", "se3_compose", "se3_act_point",
    "act_motion", "inv_act_motion", "act_force", "inv_act_force",
    "motion_cross", "force_cross", "adjoint", "ad_matrix", "ad_star_matrix",
    "inertia_matrix", "inertia10_from_mass_com", "inertia10_to_mass_com",
    "inertia10_to_matrix", "inertia_apply", "inertia_cross_term",
    "inertia_act", "inertia_inv_act",
]

_T = (4, 4)      # transform
_V = (6,)        # motion / force
_Y = (10,)       # inertia
_X = (6, 6)      # dense spatial matrix


# ------------------------------------------------------------------------------------------
# Batch loops (no GIL)
# ------------------------------------------------------------------------------------------
@cython.boundscheck(False)
@cython.wraparound(False)
cdef void _unary_loop(unary_kernel_t kernel, const double[:, ::1] a, double[:, ::1] out) noexcept nogil:
    cdef Py_ssize_t i
    for i in range(out.shape[0]):
        kernel(&a[i, 0], &out[i, 0])


@cython.boundscheck(False)
@cython.wraparound(False)
cdef void _binary_loop(binary_kernel_t kernel, const double[:, ::1] a, Py_ssize_t step_a,
                       const double[:, ::1] b, Py_ssize_t step_b, double[:, ::1] out) noexcept nogil:
    """out[i] = kernel(a[i * step_a], b[i * step_b]); a step of 0 repeats a single item."""
    cdef Py_ssize_t i
    for i in range(out.shape[0]):
        kernel(&a[i * step_a, 0], &b[i * step_b, 0], &out[i, 0])


@cython.boundscheck(False)
@cython.wraparound(False)
cdef void _mass_com_loop(const double[:, ::1] mass, Py_ssize_t step_m, const double[:, ::1] com,
                         Py_ssize_t step_c, const double[:, ::1] I_com, Py_ssize_t step_i,
                         double[:, ::1] out) noexcept nogil:
    cdef Py_ssize_t i
    for i in range(out.shape[0]):
        K.inertia_from_mass_com(mass[i * step_m, 0], &com[i * step_c, 0], &I_com[i * step_i, 0],
                                &out[i, 0])


# ------------------------------------------------------------------------------------------
# Python-level preparation (validation and broadcasting happen once, here)
# ------------------------------------------------------------------------------------------
cdef Py_ssize_t _prod(tuple shape):
    cdef Py_ssize_t n = 1, s
    for s in shape:
        n *= s
    return n


cdef tuple _batch(object arr, tuple trailing):
    return arr.shape[:arr.ndim - len(trailing)]


cdef tuple _as_rows(object arr, tuple trailing, tuple shape):
    """(2-D C-contiguous (rows, item size) view of ``arr`` for the batch ``shape``,
    batch step): step 1 when ``arr`` has the full batch, 0 for a single item,
    otherwise ``arr`` is broadcast (copied) to the full batch."""
    cdef Py_ssize_t size = _prod(trailing)
    cdef tuple own = _batch(arr, trailing)
    if own == shape:
        return arr.reshape(_prod(shape), size), 1
    if _prod(own) == 1:
        return arr.reshape(1, size), 0
    full = np.ascontiguousarray(np.broadcast_to(arr, shape + trailing))
    return full.reshape(_prod(shape), size), 1


cdef object _unary(unary_kernel_t kernel, object x, str name, tuple trailing, tuple out_trailing):
    x = as_array(x, name, trailing)
    cdef tuple shape = _batch(x, trailing)
    cdef Py_ssize_t n = _prod(shape)
    out = np.empty(shape + out_trailing)
    cdef const double[:, ::1] a = x.reshape(n, _prod(trailing))
    cdef double[:, ::1] o = out.reshape(n, _prod(out_trailing))
    with nogil:
        _unary_loop(kernel, a, o)
    return out


cdef object _binary(binary_kernel_t kernel, object x, str name_x, tuple trail_x,
                    object y, str name_y, tuple trail_y, tuple out_trailing):
    x = as_array(x, name_x, trail_x)
    y = as_array(y, name_y, trail_y)
    cdef tuple shape = batch_shape([(name_x, x, len(trail_x)), (name_y, y, len(trail_y))])
    cdef Py_ssize_t n = _prod(shape)
    cdef Py_ssize_t step_x, step_y
    rows_x, step_x = _as_rows(x, trail_x, shape)
    rows_y, step_y = _as_rows(y, trail_y, shape)
    out = np.empty(shape + out_trailing)
    cdef const double[:, ::1] a = rows_x
    cdef const double[:, ::1] b = rows_y
    cdef double[:, ::1] o = out.reshape(n, _prod(out_trailing))
    with nogil:
        _binary_loop(kernel, a, step_x, b, step_y, o)
    return out


cdef object _mass(object mass):
    # as_array goes through np.ascontiguousarray, which turns a 0-d array into
    # shape (1,): restore the caller's shape so a scalar mass has batch shape ().
    arr = as_array(mass, "mass", ()).reshape(np.shape(mass))
    if np.any(arr < 0.0):
        raise ValueError("mass must be non-negative, got %s" % (arr.min(),))
    return arr


cdef object _from_mass_com(object mass, object com, object I_com, str I_name):
    mass = _mass(mass)
    com = as_array(com, "com", (3,))
    I_com = as_array(I_com, I_name, (3, 3))
    # Accept round-off asymmetry (as the model builder does) and use the symmetric part.
    scale = np.maximum(np.abs(I_com).max(axis=(-2, -1)), 1e-300)
    if np.any(np.abs(I_com - np.swapaxes(I_com, -1, -2)).max(axis=(-2, -1)) > 1e-9 * scale):
        raise ValueError("%s must be symmetric (a rotational inertia)" % I_name)
    cdef tuple shape = batch_shape([("mass", mass, 0), ("com", com, 1), (I_name, I_com, 2)])
    cdef Py_ssize_t step_m, step_c, step_i
    rows_m, step_m = _as_rows(mass[..., None], (1,), shape)
    rows_c, step_c = _as_rows(com, (3,), shape)
    rows_i, step_i = _as_rows(I_com, (3, 3), shape)
    out = np.empty(shape + _Y)
    cdef const double[:, ::1] m = rows_m
    cdef const double[:, ::1] c = rows_c
    cdef const double[:, ::1] i = rows_i
    cdef double[:, ::1] o = out.reshape(_prod(shape), 10)
    with nogil:
        _mass_com_loop(m, step_m, c, step_c, i, step_i, o)
    return out


# ------------------------------------------------------------------------------------------
# SE(3)
# ------------------------------------------------------------------------------------------
def se3_exp(twist):
    """The transform exp([v; w]^) (4x4): R = exp([w]x), t = J_l(w) v."""
    return _unary(K.se3_exp, twist, "twist", _V, _T)


def se3_log(M):
    """The twist [v; w] with se3_exp(twist) = M, rotation angle in [0, pi]."""
    return _unary(K.se3_log, M, "M", _T, _V)


def se3_inverse(M):
    """M^{-1} = [[R^T, -R^T t], [0, 1]]."""
    return _unary(K.se3_inverse, M, "M", _T, _T)


def se3_compose(A, B):
    """A @ B, from the rotations and translations."""
    return _binary(K.se3_compose, A, "A", _T, B, "B", _T, _T)


def se3_act_point(M, p):
    """The point p_b expressed in frame a: R p + t."""
    return _binary(K.se3_act_point, M, "M", _T, p, "p", (3,), (3,))


# ------------------------------------------------------------------------------------------
# Motions and forces
# ------------------------------------------------------------------------------------------
def act_motion(M, m):
    """Ad_M m: [R v + t x (R w); R w]."""
    return _binary(K.act_motion, M, "M", _T, m, "m", _V, _V)


def inv_act_motion(M, m):
    """Ad_M^{-1} m: [R^T (v - t x w); R^T w]."""
    return _binary(K.inv_act_motion, M, "M", _T, m, "m", _V, _V)


def act_force(M, f):
    """Ad_M^{-T} f: [R f; R tau + t x (R f)]."""
    return _binary(K.act_force, M, "M", _T, f, "f", _V, _V)


def inv_act_force(M, f):
    """Ad_M^T f: [R^T f; R^T (tau - t x f)]."""
    return _binary(K.inv_act_force, M, "M", _T, f, "f", _V, _V)


def motion_cross(m1, m2):
    """ad_{m1} m2 = [v1 x w2 + w1 x v2; w1 x w2]."""
    return _binary(K.motion_cross, m1, "m1", _V, m2, "m2", _V, _V)


def force_cross(m, f):
    """m x* f = -ad_m^T f = [w x f; w x tau + v x f]."""
    return _binary(K.force_cross, m, "m", _V, f, "f", _V, _V)


def adjoint(M):
    """The 6x6 matrix Ad_M = [[R, [t]x R], [0, R]]."""
    return _unary(K.adjoint_matrix, M, "M", _T, _X)


def ad_matrix(m):
    """The 6x6 matrix ad_m = [[[w]x, [v]x], [0, [w]x]]."""
    return _unary(K.ad_matrix, m, "m", _V, _X)


def ad_star_matrix(m):
    """The 6x6 matrix of force_cross(m, .): [[[w]x, 0], [[v]x, [w]x]]."""
    return _unary(K.ad_star_matrix, m, "m", _V, _X)


# ------------------------------------------------------------------------------------------
# Inertia
# ------------------------------------------------------------------------------------------
def inertia10_from_mass_com(mass, com, I_com):
    """The 10-number inertia [m, m c, I_origin] from the mass, the center of mass
    and the rotational inertia about the center of mass (its symmetric part)."""
    return _from_mass_com(mass, com, I_com, "I_com")


def inertia10_to_mass_com(Y10):
    """(mass, com, I_com) of a 10-number inertia; a massless inertia has com = 0."""
    packed = _unary(K.inertia_to_mass_com, Y10, "Y10", _Y, (13,))
    shape = packed.shape[:packed.ndim - 1]
    # .copy(), not np.ascontiguousarray, which would turn a 0-d mass into shape (1,)
    return packed[..., 0].copy(), packed[..., 1:4].copy(), packed[..., 4:].copy().reshape(shape + (3, 3))


def inertia10_to_matrix(Y10):
    """The 6x6 spatial inertia [[m 1, -[h]x], [[h]x, I_origin]]."""
    return _unary(K.inertia_matrix, Y10, "Y10", _Y, _X)


def inertia_matrix(mass, com, I):
    """The 6x6 spatial inertia at the body origin (com in body coordinates, I about the com)."""
    return inertia10_to_matrix(_from_mass_com(mass, com, I, "I"))


def inertia_apply(Y10, m):
    """Y m = [m v - h x w; h x v + I w]."""
    return _binary(K.inertia_apply, Y10, "Y10", _Y, m, "m", _V, _V)


def inertia_cross_term(Y10, m):
    """m x* (Y m)."""
    return _binary(K.inertia_cross_term, Y10, "Y10", _Y, m, "m", _V, _V)


def inertia_act(M, Y10):
    """The inertia Y10 given in frame b, expressed in frame a (M = aMb)."""
    return _binary(K.inertia_act, M, "M", _T, Y10, "Y10", _Y, _Y)


def inertia_inv_act(M, Y10):
    """The inertia Y10 given in frame a, expressed in frame b (M = aMb)."""
    return _binary(K.inertia_inv_act, M, "M", _T, Y10, "Y10", _Y, _Y)
