# cython: language_level=3
"""Compiled configuration-space operations: neutral, integrate, difference, normalize and
the Jacobians of integrate and difference, each a loop over the joints; what each kind
does is in ``_joints.pxd``."""
cimport cython
from libc.math cimport sin, cos, sqrt, atan2, fabs
from libc.string cimport memset

import numpy as np

from rbd_c._model cimport CModel, Call, CompiledModel, prepare_call, run, run_args, Algorithm, algorithm
from rbd_c._model import size
from rbd_c._joints cimport (joint_neutral, joint_integrate, joint_difference, joint_normalize,
                            joint_integrate_jacobians, joint_difference_jacobians)


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


cdef int k_integrate_jacobians(const Call* c, const double** ins, double** outs,
                               double* work) noexcept nogil:
    """Block diagonal: both matrices are zeroed, then each joint writes its diagonal block."""
    cdef const CModel* m = c.m
    cdef int i, n = m.nv, d
    memset(outs[0], 0, n * n * sizeof(double))
    memset(outs[1], 0, n * n * sizeof(double))
    for i in range(m.nb):
        d = m.v_idx[i] * (n + 1)
        joint_integrate_jacobians(m.kinds[i], ins[1] + m.v_idx[i], outs[0] + d, outs[1] + d, n)
    return 0


cdef int k_difference_jacobians(const Call* c, const double** ins, double** outs,
                                double* work) noexcept nogil:
    """Block diagonal, as k_integrate_jacobians."""
    cdef const CModel* m = c.m
    cdef int i, n = m.nv, d
    memset(outs[0], 0, n * n * sizeof(double))
    memset(outs[1], 0, n * n * sizeof(double))
    for i in range(m.nb):
        d = m.v_idx[i] * (n + 1)
        joint_difference_jacobians(m.kinds[i], ins[0] + m.q_idx[i], ins[1] + m.q_idx[i], outs[0] + d,
                                   outs[1] + d, n)
    return 0


cdef Algorithm NEUTRAL = algorithm(b"", (), (b"q",), k_neutral, size(), size(1))
cdef Algorithm INTEGRATE = algorithm(b"qv", ("q", "v"), (b"q",), k_integrate, size(), size(nb=10))
cdef Algorithm DIFFERENCE = algorithm(b"qq", ("q0", "q1"), (b"v",), k_difference, size(), size(nb=10))
cdef Algorithm NORMALIZE = algorithm(b"q", ("q",), (b"q",), k_normalize, size(), size(nb=5))
# (work: a block per joint, and the two zeroed nv x nv outputs)
cdef Algorithm INTEGRATE_JACOBIANS = algorithm(b"qv", ("q", "v"), (b"vv", b"vv"), k_integrate_jacobians, size(),
                                               size(nb=50, nv=20))
cdef Algorithm DIFFERENCE_JACOBIANS = algorithm(b"qq", ("q0", "q1"), (b"vv", b"vv"), k_difference_jacobians,
                                                size(), size(nb=60, nv=20))


# ---- wrappers ---------------------------------------------------------------------------------
def neutral(model, *, out=None):
    """The neutral configuration: zeros and identity quaternions (compiled)."""
    cdef Call call
    cdef CompiledModel cm = prepare_call(&call, model)
    return run(model, cm, &call, NEUTRAL, (), out)


def integrate(model, q, v, *, out=None):
    """q (+) v: integrate the velocity v for unit time from q on the joint manifolds (compiled)."""
    cdef Call call
    cdef CompiledModel cm = prepare_call(&call, model)
    return run_args(model, cm, &call, INTEGRATE, out, q, v)


def difference(model, q0, q1, *, out=None):
    """The velocity v with q0 (+) v = q1 (compiled)."""
    cdef Call call
    cdef CompiledModel cm = prepare_call(&call, model)
    return run_args(model, cm, &call, DIFFERENCE, out, q0, q1)


def normalize(model, q, *, out=None):
    """q with its quaternions scaled to unit norm (compiled)."""
    cdef Call call
    cdef CompiledModel cm = prepare_call(&call, model)
    return run_args(model, cm, &call, NORMALIZE, out, q)


def integrate_jacobians(model, q, v, *, out=None):
    """(d_dq, d_dv): the tangent-space Jacobians of q (+) v, block diagonal (compiled)."""
    cdef Call call
    cdef CompiledModel cm = prepare_call(&call, model)
    return run_args(model, cm, &call, INTEGRATE_JACOBIANS, out, q, v)


def difference_jacobians(model, q0, q1, *, out=None):
    """(d_dq0, d_dq1): the tangent-space Jacobians of difference(q0, q1), block diagonal (compiled)."""
    cdef Call call
    cdef CompiledModel cm = prepare_call(&call, model)
    return run_args(model, cm, &call, DIFFERENCE_JACOBIANS, out, q0, q1)

# the public name of each algorithm (what a model with mimic joints is run through: rbd._coupled)
NEUTRAL.name = "neutral"
INTEGRATE.name = "integrate"
DIFFERENCE.name = "difference"
NORMALIZE.name = "normalize"
INTEGRATE_JACOBIANS.name = "integrate_jacobians"
DIFFERENCE_JACOBIANS.name = "difference_jacobians"
