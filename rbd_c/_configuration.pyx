# cython: language_level=3
"""Compiled configuration-space operations: neutral, integrate, difference, normalize,
each a loop over the joints; what each kind does is in ``_joints.pxd``."""
cimport cython
from libc.math cimport sin, cos, sqrt, atan2, fabs

import numpy as np

from rbd_c._model cimport CModel, Call, CompiledModel, prepare_call, run
from rbd_c._joints cimport joint_neutral, joint_integrate, joint_difference, joint_normalize


# ---- kernels ----------------------------------------------------------------------------------
cdef int k_neutral(const Call* c, const double** ins, double* q, double* work) noexcept nogil:
    cdef const CModel* m = c.m
    cdef int i
    for i in range(m.nb):
        joint_neutral(m.kinds[i], q + m.q_idx[i])
    return 0


cdef int k_integrate(const Call* c, const double** ins, double* out, double* work) noexcept nogil:
    cdef const CModel* m = c.m
    cdef int i
    for i in range(m.nb):
        joint_integrate(m.kinds[i], ins[0] + m.q_idx[i], ins[1] + m.v_idx[i], out + m.q_idx[i])
    return 0


cdef int k_difference(const Call* c, const double** ins, double* out, double* work) noexcept nogil:
    cdef const CModel* m = c.m
    cdef int i
    for i in range(m.nb):
        joint_difference(m.kinds[i], ins[0] + m.q_idx[i], ins[1] + m.q_idx[i], out + m.v_idx[i])
    return 0


cdef int k_normalize(const Call* c, const double** ins, double* out, double* work) noexcept nogil:
    cdef const CModel* m = c.m
    cdef int i
    for i in range(m.nb):
        joint_normalize(m.kinds[i], ins[0] + m.q_idx[i], out + m.q_idx[i])
    return 0


# ---- wrappers ---------------------------------------------------------------------------------
def neutral(model):
    """The neutral configuration: zeros and identity quaternions (compiled)."""
    cdef Call call
    cdef CompiledModel cm = prepare_call(&call, model)
    cdef Py_ssize_t dims[1]
    dims[0] = cm.m.nq
    return run(model, cm, &call, b"", (), (), 1, dims, k_neutral, 1, 1)


def integrate(model, q, v):
    """q (+) v: integrate the velocity v for unit time from q on the joint manifolds (compiled)."""
    cdef Call call
    cdef CompiledModel cm = prepare_call(&call, model)
    cdef Py_ssize_t dims[1]
    dims[0] = cm.m.nq
    return run(model, cm, &call, b"qv", ("q", "v"), (q, v), 1, dims, k_integrate, 1, 10 * cm.m.nb)


def difference(model, q0, q1):
    """The velocity v with q0 (+) v = q1 (compiled)."""
    cdef Call call
    cdef CompiledModel cm = prepare_call(&call, model)
    cdef Py_ssize_t dims[1]
    dims[0] = cm.m.nv
    return run(model, cm, &call, b"qq", ("q0", "q1"), (q0, q1), 1, dims, k_difference, 1, 10 * cm.m.nb)


def normalize(model, q):
    """q with its quaternions scaled to unit norm (compiled)."""
    cdef Call call
    cdef CompiledModel cm = prepare_call(&call, model)
    cdef Py_ssize_t dims[1]
    dims[0] = cm.m.nq
    return run(model, cm, &call, b"q", ("q",), (q,), 1, dims, k_normalize, 1, 5 * cm.m.nb)
