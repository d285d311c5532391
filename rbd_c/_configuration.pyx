# cython: language_level=3
"""Compiled configuration-space operations: neutral, integrate, difference, normalize,
each a loop over the joints; what each kind does is in ``_joints.pxd``."""
cimport cython
from libc.math cimport sin, cos, sqrt, atan2, fabs

import numpy as np

from rbd_c._model cimport CModel, Call, CompiledModel, prepare_call, run, Algorithm, algorithm
from rbd_c._model import size
from rbd_c._joints cimport joint_neutral, joint_integrate, joint_difference, joint_normalize


# ---- kernels ----------------------------------------------------------------------------------
cdef int k_neutral(const Call* c, const double** ins, double** outs, double* work) noexcept nogil:
    cdef double* q = outs[0]
    cdef const CModel* m = c.m
    cdef int i
    for i in range(m.nb):
        joint_neutral(m.kinds[i], q + m.q_idx[i])
    return 0


cdef int k_integrate(const Call* c, const double** ins, double** outs, double* work) noexcept nogil:
    cdef double* out = outs[0]
    cdef const CModel* m = c.m
    cdef int i
    for i in range(m.nb):
        joint_integrate(m.kinds[i], ins[0] + m.q_idx[i], ins[1] + m.v_idx[i], out + m.q_idx[i])
    return 0


cdef int k_difference(const Call* c, const double** ins, double** outs, double* work) noexcept nogil:
    cdef double* out = outs[0]
    cdef const CModel* m = c.m
    cdef int i
    for i in range(m.nb):
        joint_difference(m.kinds[i], ins[0] + m.q_idx[i], ins[1] + m.q_idx[i], out + m.v_idx[i])
    return 0


cdef int k_normalize(const Call* c, const double** ins, double** outs, double* work) noexcept nogil:
    cdef double* out = outs[0]
    cdef const CModel* m = c.m
    cdef int i
    for i in range(m.nb):
        joint_normalize(m.kinds[i], ins[0] + m.q_idx[i], out + m.q_idx[i])
    return 0


cdef Algorithm NEUTRAL = algorithm(b"", (), (b"q",), k_neutral, size(), size(1))
cdef Algorithm INTEGRATE = algorithm(b"qv", ("q", "v"), (b"q",), k_integrate, size(), size(nb=10))
cdef Algorithm DIFFERENCE = algorithm(b"qq", ("q0", "q1"), (b"v",), k_difference, size(), size(nb=10))
cdef Algorithm NORMALIZE = algorithm(b"q", ("q",), (b"q",), k_normalize, size(), size(nb=5))


# ---- wrappers ---------------------------------------------------------------------------------
def neutral(model):
    """The neutral configuration: zeros and identity quaternions (compiled)."""
    cdef Call call
    cdef CompiledModel cm = prepare_call(&call, model)
    return run(model, cm, &call, NEUTRAL, ())


def integrate(model, q, v):
    """q (+) v: integrate the velocity v for unit time from q on the joint manifolds (compiled)."""
    cdef Call call
    cdef CompiledModel cm = prepare_call(&call, model)
    return run(model, cm, &call, INTEGRATE, (q, v))


def difference(model, q0, q1):
    """The velocity v with q0 (+) v = q1 (compiled)."""
    cdef Call call
    cdef CompiledModel cm = prepare_call(&call, model)
    return run(model, cm, &call, DIFFERENCE, (q0, q1))


def normalize(model, q):
    """q with its quaternions scaled to unit norm (compiled)."""
    cdef Call call
    cdef CompiledModel cm = prepare_call(&call, model)
    return run(model, cm, &call, NORMALIZE, (q,))
