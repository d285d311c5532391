# cython: language_level=3
"""Compiled spatial algebra: the functions of ``rbd.spatial``, same names,
signatures, batching and errors.

Three levels, as in SciPy's rotation Cython: the one-item kernels of
``_kernels.pxd``; a ``cdef`` loop over the flattened batch that calls a kernel;
a thin ``def`` wrapper that validates, allocates the output and runs the loop.

Validation has two paths with the same results and errors:

* fast: every argument an ``np.ndarray`` (not a subclass) of native, aligned,
  C-contiguous float64 with the right trailing shape, the batch shapes equal or
  one side a single item without batch dimensions.  Shapes are compared as C
  integers and finiteness is checked over the raw doubles in the C loop (the GIL
  released for big batches); nothing is converted or copied, the output is the
  only allocation.
* general (anything else, and a NaN or inf found on the fast path): the
  validation of the reference (``rbd._checks``), which raises its errors, then
  broadcasting; its arrays then run as on the fast path.

A side of a binary operation that holds a single item is not copied: the loop
reads it with a batch step of 0.
"""
cimport cython
cimport numpy as cnp
from libc.stdint cimport uint64_t
from libc.string cimport memcpy
from libc.math cimport fabs
import numpy as np

cimport rbd_c._kernels as K
from rbd_c._model cimport checks_module, MAX_BATCH_DIMS
from rbd_c._typedefs cimport unary_kernel_t, binary_kernel_t

cnp.import_array()

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

cdef enum:
    # Batches of more doubles than this (inputs and outputs) release the GIL; below,
    # releasing it costs more than the work.
    RELEASE_GIL_DOUBLES = 4096
    # Room for the dimensions of an output: a batch (at most NPY_MAXDIMS - 1 dimensions,
    # as an input has at least one trailing one) and up to two trailing dimensions.
    MAX_OUT_DIMS = cnp.NPY_MAXDIMS + 2


# An argument that can take the fast path: its raw storage and batch.
cdef struct Arg:
    const double* data
    Py_ssize_t size          # doubles per item
    Py_ssize_t items         # items stored (1 without batch dimensions)
    int nbatch               # batch dimensions
    const cnp.npy_intp* dims # the batch dimensions (the array's shape, which outlives the call)


# ------------------------------------------------------------------------------------------
# Batch loops (run without the GIL for big batches)
# ------------------------------------------------------------------------------------------
cdef inline Py_ssize_t _step(const Arg* arg) noexcept nogil:
    """The step between the items read for a batch: 0 repeats a single item."""
    return arg.size if arg.nbatch else 0


@cython.boundscheck(False)
@cython.wraparound(False)
cdef bint _unary_loop(unary_kernel_t kernel, const Arg* a, double* out, Py_ssize_t out_size) noexcept nogil:
    """out[i] = kernel(a[i]); True (nothing run) when an input holds a NaN or inf."""
    if K.any_nonfinite(a.data, a.items * a.size):
        return True
    cdef Py_ssize_t i
    for i in range(a.items):
        kernel(a.data + i * a.size, out + i * out_size)
    return False


@cython.boundscheck(False)
@cython.wraparound(False)
cdef bint _binary_loop(binary_kernel_t kernel, const Arg* a, const Arg* b,
                       double* out, Py_ssize_t out_size, Py_ssize_t n) noexcept nogil:
    """out[i] = kernel(a[i], b[i]) for n items, a side without batch dimensions repeated;
    True (nothing run) when an input holds a NaN or inf."""
    if K.any_nonfinite(a.data, a.items * a.size) or K.any_nonfinite(b.data, b.items * b.size):
        return True
    cdef Py_ssize_t i, step_a = _step(a), step_b = _step(b)
    for i in range(n):
        kernel(a.data + i * step_a, b.data + i * step_b, out + i * out_size)
    return False


@cython.boundscheck(False)
@cython.wraparound(False)
cdef void _mass_com_loop(const Arg* mass, const Arg* com, const Arg* I_com,
                         double* out, Py_ssize_t n) noexcept nogil:
    cdef Py_ssize_t i
    cdef Py_ssize_t sm = _step(mass), sc = _step(com), si = _step(I_com)
    for i in range(n):
        K.inertia_from_mass_com(mass.data[i * sm], com.data + i * sc, I_com.data + i * si,
                                out + i * 10)


# ------------------------------------------------------------------------------------------
# Argument preparation
# ------------------------------------------------------------------------------------------
cdef bint _plain(object x, tuple trailing, Arg* arg) except -1:
    """Whether ``x`` can take the fast path (filling ``arg``): an ndarray, not a
    subclass, of native aligned C-contiguous float64 whose last dimensions are ``trailing``."""
    if not cnp.PyArray_CheckExact(x):
        return False
    cdef cnp.ndarray a = <cnp.ndarray>x
    if cnp.PyArray_TYPE(a) != cnp.NPY_DOUBLE or not cnp.PyArray_ISCARRAY_RO(a):
        return False
    cdef int k = len(trailing), nd = cnp.PyArray_NDIM(a), j
    if nd < k:
        return False
    if nd - k > MAX_BATCH_DIMS:
        return False  # the general path names the limit
    cdef const cnp.npy_intp* dims = cnp.PyArray_DIMS(a)
    cdef cnp.npy_intp t
    arg.size = 1
    for j in range(k):
        t = trailing[j]
        if dims[nd - k + j] != t:
            return False
        arg.size *= t
    arg.items = 1
    for j in range(nd - k):
        arg.items *= dims[j]
    arg.nbatch = nd - k
    arg.dims = dims
    arg.data = <const double*>cnp.PyArray_DATA(a)
    return True


@cython.boundscheck(False)
@cython.wraparound(False)
cdef bint _all_rigid(const double* M, Py_ssize_t n) noexcept nogil:
    """Whether each of the n row-major 4x4 matrices is a rigid transform, judged as
    rbd._checks.as_transform does: |R^T R - I| <= 1e-6 entrywise, det R >= 0, last
    row 0 0 0 1 to 1e-6 (a NaN fails every test)."""
    cdef Py_ssize_t k
    cdef int i, j
    cdef const double* T
    cdef double g, det
    for k in range(n):
        T = M + 16 * k
        if not (fabs(T[12]) <= 1e-6 and fabs(T[13]) <= 1e-6 and fabs(T[14]) <= 1e-6
                and fabs(T[15] - 1.0) <= 1e-6):
            return False
        for i in range(3):
            for j in range(i, 3):
                g = T[i] * T[j] + T[4 + i] * T[4 + j] + T[8 + i] * T[8 + j] - (1.0 if i == j else 0.0)
                if not (-1e-6 <= g <= 1e-6):
                    return False
        det = (T[0] * (T[5] * T[10] - T[6] * T[9]) - T[1] * (T[4] * T[10] - T[6] * T[8])
               + T[2] * (T[4] * T[9] - T[5] * T[8]))
        if det < 0.0:
            return False
    return True


cdef int _rigid(object M, str name) except -1:
    """Raise the reference's error unless every 4x4 of M is a rigid transform
    (checked in C on the fast path, by rbd._checks.as_transform otherwise)."""
    cdef Arg a
    if not (_plain(M, _T, &a) and _all_rigid(a.data, a.items)):
        checks_module().as_transform(M, name)
    return 0


cdef int _prepared(object x, tuple trailing, Arg* arg) except -1:
    """Fill ``arg`` for an array made by the general path (always plain)."""
    if not _plain(x, trailing, arg):
        raise AssertionError("rbd_c: a validated array cannot take the fast path")
    return 0


cdef const Arg* _result_batch(const Arg* a, const Arg* b) noexcept:
    """The argument whose batch is that of the result when the fast path serves the pair
    (equal batches, or one side without batch dimensions); NULL when it must broadcast."""
    if b.nbatch == 0:
        return a
    if a.nbatch == 0:
        return b
    if a.nbatch != b.nbatch:
        return NULL
    cdef int j
    for j in range(a.nbatch):
        if a.dims[j] != b.dims[j]:
            return NULL
    return a


cdef cnp.ndarray _empty(const Arg* batch, tuple trailing):
    """A new float64 array of the batch of ``batch`` followed by ``trailing``."""
    cdef cnp.npy_intp dims[MAX_OUT_DIMS]
    cdef int j, nb = batch.nbatch, nd = nb + len(trailing)
    for j in range(nb):
        dims[j] = batch.dims[j]
    for j in range(nd - nb):
        dims[nb + j] = trailing[j]
    if nd > cnp.NPY_MAXDIMS:
        np.empty(tuple([dims[j] for j in range(nd)]))  # raises NumPy's error, as the reference does
    return <cnp.ndarray>cnp.PyArray_EMPTY(nd, dims, cnp.NPY_DOUBLE, 0)


cdef object _fit(object arr, tuple trailing, tuple shape):
    """A validated array made plain for the batch ``shape``: of that batch, or without
    batch dimensions when it holds a single item (read with a step of 0); copied only
    to broadcast, or when its storage is misaligned."""
    cdef tuple own = arr.shape[:arr.ndim - len(trailing)]
    cdef Py_ssize_t n_own
    if own != shape:
        n_own = _prod(own)
        if n_own == _prod(shape):
            arr = arr.reshape(shape + trailing)
        elif n_own == 1:
            arr = arr.reshape(trailing)
        else:
            arr = np.ascontiguousarray(np.broadcast_to(arr, shape + trailing))
    if not cnp.PyArray_ISALIGNED(<cnp.ndarray>arr):
        arr = arr.copy()
    return arr


cdef Py_ssize_t _prod(tuple shape):
    cdef Py_ssize_t n = 1, s
    for s in shape:
        n *= s
    return n


# ------------------------------------------------------------------------------------------
# Running a kernel: the fast path, else the reference's validation
# ------------------------------------------------------------------------------------------
cdef object _run_unary(unary_kernel_t kernel, const Arg* a, tuple out_trailing):
    """The output, or None when an input holds a NaN or inf."""
    cdef cnp.ndarray out = _empty(a, out_trailing)
    cdef double* o = <double*>cnp.PyArray_DATA(out)
    cdef Py_ssize_t out_size = _prod(out_trailing)
    cdef bint bad
    if a.items * (a.size + out_size) > RELEASE_GIL_DOUBLES:
        with nogil:
            bad = _unary_loop(kernel, a, o, out_size)
    else:
        bad = _unary_loop(kernel, a, o, out_size)
    return None if bad else _finite(out, a.items * out_size)


cdef object _run_binary(binary_kernel_t kernel, const Arg* a, const Arg* b, tuple out_trailing):
    """The output, or None when the batches must broadcast or an input holds a NaN or inf."""
    cdef const Arg* batch = _result_batch(a, b)
    if batch == NULL:
        return None
    cdef cnp.ndarray out = _empty(batch, out_trailing)
    cdef double* o = <double*>cnp.PyArray_DATA(out)
    cdef Py_ssize_t out_size = _prod(out_trailing), n = batch.items
    cdef bint bad
    if n * (a.size + b.size + out_size) > RELEASE_GIL_DOUBLES:
        with nogil:
            bad = _binary_loop(kernel, a, b, o, out_size, n)
    else:
        bad = _binary_loop(kernel, a, b, o, out_size, n)
    return None if bad else _finite(out, n * out_size)


cdef object _finite(cnp.ndarray out, Py_ssize_t size):
    """``out``, or the reference's overflow error when finite inputs gave an inf or NaN."""
    if K.any_nonfinite(<double*>cnp.PyArray_DATA(out), size):
        raise checks_module().overflow_error()
    return out


cdef object _ran(object out):
    """The output of the general path, whose arrays are validated and fitted, so the
    kernel ran: unless another thread wrote a NaN or inf into an input meanwhile."""
    if out is None:
        raise ValueError("an input was changed to hold NaN or inf while it was being read")
    return out


cdef object _unary(unary_kernel_t kernel, object x, str name, tuple trailing, tuple out_trailing):
    cdef Arg a
    out = _run_unary(kernel, &a, out_trailing) if _plain(x, trailing, &a) else None
    if out is None:
        x = checks_module().as_array(x, name, trailing)
        x = _fit(x, trailing, x.shape[:x.ndim - len(trailing)])
        _prepared(x, trailing, &a)
        out = _ran(_run_unary(kernel, &a, out_trailing))
    return out


cdef object _binary(binary_kernel_t kernel, object x, str name_x, tuple trail_x,
                    object y, str name_y, tuple trail_y, tuple out_trailing):
    cdef Arg a, b
    out = None
    if _plain(x, trail_x, &a) and _plain(y, trail_y, &b):
        out = _run_binary(kernel, &a, &b, out_trailing)
    if out is None:
        x = checks_module().as_array(x, name_x, trail_x)
        y = checks_module().as_array(y, name_y, trail_y)
        shape = checks_module().batch_shape([(name_x, x, len(trail_x)), (name_y, y, len(trail_y))])
        x = _fit(x, trail_x, shape)
        y = _fit(y, trail_y, shape)
        _prepared(x, trail_x, &a)
        _prepared(y, trail_y, &b)
        out = _ran(_run_binary(kernel, &a, &b, out_trailing))
    return out


cdef object _mass(object mass):
    # as_array goes through np.ascontiguousarray, which turns a 0-d array into
    # shape (1,): restore the caller's shape so a scalar mass has batch shape ().
    arr = checks_module().as_array(mass, "mass", ()).reshape(np.shape(mass))
    if np.any(arr < 0.0):
        raise ValueError("mass must be non-negative, got %s" % (arr.min(),))
    return arr


cdef object _from_mass_com(object mass, object com, object I_com, str I_name):
    mass = _mass(mass)
    com = checks_module().as_array(com, "com", (3,))
    I_com = checks_module().as_array(I_com, I_name, (3, 3))
    # Accept round-off asymmetry (as the model builder does) and use the symmetric part.
    scale = np.maximum(np.abs(I_com).max(axis=(-2, -1)), 1e-300)
    if np.any(np.abs(I_com - np.swapaxes(I_com, -1, -2)).max(axis=(-2, -1)) > 1e-9 * scale):
        raise ValueError("%s must be symmetric (a rotational inertia)" % I_name)
    cdef tuple shape = checks_module().batch_shape([("mass", mass, 0), ("com", com, 1), (I_name, I_com, 2)])
    cdef Arg m, c, i
    mass = _fit(mass[..., None], (1,), shape)
    com = _fit(com, (3,), shape)
    I_com = _fit(I_com, (3, 3), shape)
    _prepared(mass, (1,), &m)
    _prepared(com, (3,), &c)
    _prepared(I_com, (3, 3), &i)
    out = np.empty(shape + _Y)
    cdef double* o = <double*>cnp.PyArray_DATA(<cnp.ndarray>out)
    cdef Py_ssize_t n = _prod(shape)
    with nogil:
        _mass_com_loop(&m, &c, &i, o, n)
    return _finite(out, n * 10)


# ------------------------------------------------------------------------------------------
# SE(3)
# ------------------------------------------------------------------------------------------
def se3_exp(twist):
    """The transform exp([v; w]^) (4x4): R = exp([w]x), t = J_l(w) v."""
    return _unary(K.se3_exp, twist, "twist", _V, _T)


def se3_log(M):
    """The twist [v; w] with se3_exp(twist) = M, rotation angle in [0, pi]."""
    _rigid(M, "M")
    return _unary(K.se3_log, M, "M", _T, _V)


def se3_inverse(M):
    """M^{-1} = [[R^T, -R^T t], [0, 1]]."""
    _rigid(M, "M")
    return _unary(K.se3_inverse, M, "M", _T, _T)


def se3_compose(A, B):
    """A @ B, from the rotations and translations."""
    _rigid(A, "A")
    _rigid(B, "B")
    return _binary(K.se3_compose, A, "A", _T, B, "B", _T, _T)


def se3_act_point(M, p):
    """The point p_b expressed in frame a: R p + t."""
    _rigid(M, "M")
    return _binary(K.se3_act_point, M, "M", _T, p, "p", (3,), (3,))


# ------------------------------------------------------------------------------------------
# Motions and forces
# ------------------------------------------------------------------------------------------
def act_motion(M, m):
    """Ad_M m: [R v + t x (R w); R w]."""
    _rigid(M, "M")
    return _binary(K.act_motion, M, "M", _T, m, "m", _V, _V)


def inv_act_motion(M, m):
    """Ad_M^{-1} m: [R^T (v - t x w); R^T w]."""
    _rigid(M, "M")
    return _binary(K.inv_act_motion, M, "M", _T, m, "m", _V, _V)


def act_force(M, f):
    """Ad_M^{-T} f: [R f; R tau + t x (R f)]."""
    _rigid(M, "M")
    return _binary(K.act_force, M, "M", _T, f, "f", _V, _V)


def inv_act_force(M, f):
    """Ad_M^T f: [R^T f; R^T (tau - t x f)]."""
    _rigid(M, "M")
    return _binary(K.inv_act_force, M, "M", _T, f, "f", _V, _V)


def motion_cross(m1, m2):
    """ad_{m1} m2 = [v1 x w2 + w1 x v2; w1 x w2]."""
    return _binary(K.motion_cross, m1, "m1", _V, m2, "m2", _V, _V)


def force_cross(m, f):
    """m x* f = -ad_m^T f = [w x f; w x tau + v x f]."""
    return _binary(K.force_cross, m, "m", _V, f, "f", _V, _V)


def adjoint(M):
    """The 6x6 matrix Ad_M = [[R, [t]x R], [0, R]]."""
    _rigid(M, "M")
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
    """(mass, com, I_com) of a 10-number inertia; a massless inertia has com = 0 (a
    negative mass, or a first moment without mass, is a ValueError)."""
    Y10 = checks_module().as_array(Y10, "Y10", _Y)
    checks_module().check_mass_com(Y10)
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
    _rigid(M, "M")
    return _binary(K.inertia_act, M, "M", _T, Y10, "Y10", _Y, _Y)


def inertia_inv_act(M, Y10):
    """The inertia Y10 given in frame a, expressed in frame b (M = aMb)."""
    _rigid(M, "M")
    return _binary(K.inertia_inv_act, M, "M", _T, Y10, "Y10", _Y, _Y)
