# cython: language_level=3
"""Compiled configuration-space operations: neutral, integrate, difference, normalize.

Per joint kind: vector joints (revolute, prismatic) add; spherical joints
compose unit quaternions on the right (v is the body angular velocity);
planar joints use the SE(2) exponential and free-flyers the SE(3) one, both on
the right (v is the body twist).
"""
cimport cython
from libc.math cimport sin, cos, sqrt, atan2, fabs

import numpy as np

from rbd_c._model cimport (CModel, Call, CompiledModel, prepare_call, run,
                           K_REV, K_SPH, K_PLANAR, K_FREE, quat_to_rot, quat_unit)


# ---- quaternions [w, x, y, z] ------------------------------------------------------------------
cdef inline void _quat_mul(const double* a, const double* b, double* out) noexcept nogil:
    cdef double w = a[0] * b[0] - a[1] * b[1] - a[2] * b[2] - a[3] * b[3]
    cdef double x = a[0] * b[1] + a[1] * b[0] + a[2] * b[3] - a[3] * b[2]
    cdef double y = a[0] * b[2] - a[1] * b[3] + a[2] * b[0] + a[3] * b[1]
    cdef double z = a[0] * b[3] + a[1] * b[2] - a[2] * b[1] + a[3] * b[0]
    out[0] = w; out[1] = x; out[2] = y; out[3] = z


@cython.cdivision(True)
cdef inline void _quat_exp(const double* w, double* out) noexcept nogil:
    """Unit quaternion of the rotation vector w."""
    cdef double t2 = w[0] * w[0] + w[1] * w[1] + w[2] * w[2]
    cdef double t = sqrt(t2), k
    if t < 1e-4:
        k = 0.5 - t2 / 48.0
    else:
        k = sin(0.5 * t) / t
    out[0] = cos(0.5 * t)
    out[1] = k * w[0]; out[2] = k * w[1]; out[3] = k * w[2]


@cython.cdivision(True)
cdef inline void _quat_log(const double* q, double* out) noexcept nogil:
    """Rotation vector (angle in [0, pi]) of the unit quaternion q."""
    cdef double w = q[0], x = q[1], y = q[2], z = q[3], n, k
    if w < 0.0:
        w = -w; x = -x; y = -y; z = -z
    n = sqrt(x * x + y * y + z * z)
    if n < 1e-8:
        k = 2.0 / w * (1.0 - n * n / (3.0 * w * w)) if w > 0.0 else 0.0
    else:
        k = 2.0 * atan2(n, w) / n
    out[0] = k * x; out[1] = k * y; out[2] = k * z


cdef inline void _quat_conj(const double* q, double* out) noexcept nogil:
    out[0] = q[0]; out[1] = -q[1]; out[2] = -q[2]; out[3] = -q[3]


# ---- SE(3) / SE(2) left Jacobians --------------------------------------------------------------
cdef inline void _cross_twice(const double* w, const double* x, double* c1, double* c2) noexcept nogil:
    """c1 = w x x and c2 = w x (w x x): the [w]x and [w]x^2 terms of V(w) and V(w)^-1."""
    c1[0] = w[1] * x[2] - w[2] * x[1]
    c1[1] = w[2] * x[0] - w[0] * x[2]
    c1[2] = w[0] * x[1] - w[1] * x[0]
    c2[0] = w[1] * c1[2] - w[2] * c1[1]
    c2[1] = w[2] * c1[0] - w[0] * c1[2]
    c2[2] = w[0] * c1[1] - w[1] * c1[0]


@cython.cdivision(True)
cdef inline void _se3_V(const double* w, const double* v, double* out) noexcept nogil:
    """out = V(w) v with V = I + (1 - cos t)/t^2 [w]x + (t - sin t)/t^3 [w]x^2."""
    cdef double t2 = w[0] * w[0] + w[1] * w[1] + w[2] * w[2]
    cdef double t = sqrt(t2), a, b
    cdef double c1[3]
    cdef double c2[3]
    if t < 1e-4:
        a = 0.5 - t2 / 24.0
        b = 1.0 / 6.0 - t2 / 120.0
    else:
        a = (1.0 - cos(t)) / t2
        b = (t - sin(t)) / (t2 * t)
    _cross_twice(w, v, c1, c2)
    out[0] = v[0] + a * c1[0] + b * c2[0]
    out[1] = v[1] + a * c1[1] + b * c2[1]
    out[2] = v[2] + a * c1[2] + b * c2[2]


@cython.cdivision(True)
cdef inline void _se3_Vinv(const double* w, const double* p, double* out) noexcept nogil:
    """out = V(w)^-1 p with V^-1 = I - [w]x / 2 + (1 - t sin t / (2 (1 - cos t))) / t^2 [w]x^2."""
    cdef double t2 = w[0] * w[0] + w[1] * w[1] + w[2] * w[2]
    cdef double t = sqrt(t2), b
    cdef double c1[3]
    cdef double c2[3]
    if t < 1e-4:
        b = 1.0 / 12.0 + t2 / 720.0
    else:
        b = (1.0 - t * sin(t) / (2.0 * (1.0 - cos(t)))) / t2
    _cross_twice(w, p, c1, c2)
    out[0] = p[0] - 0.5 * c1[0] + b * c2[0]
    out[1] = p[1] - 0.5 * c1[1] + b * c2[1]
    out[2] = p[2] - 0.5 * c1[2] + b * c2[2]


@cython.cdivision(True)
cdef inline void _se2_V(double phi, double* a, double* b) noexcept nogil:
    """V(phi) = [[a, -b], [b, a]] with a = sin(phi)/phi, b = (1 - cos(phi))/phi."""
    cdef double p2 = phi * phi
    if fabs(phi) < 1e-4:
        a[0] = 1.0 - p2 / 6.0
        b[0] = phi / 2.0 - phi * p2 / 24.0
    else:
        a[0] = sin(phi) / phi
        b[0] = (1.0 - cos(phi)) / phi


# ---- kernels ----------------------------------------------------------------------------------
cdef int k_neutral(const Call* c, const double** ins, double* q, double* work) noexcept nogil:
    cdef const CModel* m = c.m
    cdef int i, j, k, qi
    for j in range(m.nq):
        q[j] = 0.0
    for i in range(m.nb):
        k = m.kinds[i]
        qi = m.q_idx[i]
        if k == K_SPH:
            q[qi] = 1.0
        elif k == K_FREE:
            q[qi + 3] = 1.0
    return 0


@cython.cdivision(True)
cdef int k_integrate(const Call* c, const double** ins, double* out, double* work) noexcept nogil:
    cdef const CModel* m = c.m
    cdef const double* q = ins[0]
    cdef const double* v = ins[1]
    cdef const double* qj
    cdef const double* vj
    cdef double* oj
    cdef int i, k, j
    cdef double e[4]
    cdef double t[3]
    cdef double R[9]
    cdef double a, b, cs, sn, tx, ty
    for i in range(m.nb):
        k = m.kinds[i]
        qj = q + m.q_idx[i]
        vj = v + m.v_idx[i]
        oj = out + m.q_idx[i]
        if k == K_SPH:
            _quat_exp(vj, e)
            _quat_mul(qj, e, oj)
            quat_unit(oj, oj)
        elif k == K_PLANAR:
            _se2_V(vj[2], &a, &b)
            tx = a * vj[0] - b * vj[1]
            ty = b * vj[0] + a * vj[1]
            cs = cos(qj[2]); sn = sin(qj[2])
            oj[0] = qj[0] + cs * tx - sn * ty
            oj[1] = qj[1] + sn * tx + cs * ty
            oj[2] = qj[2] + vj[2]
        elif k == K_FREE:
            _se3_V(vj + 3, vj, t)
            quat_to_rot(qj + 3, R)
            for j in range(3):
                oj[j] = qj[j] + R[3 * j] * t[0] + R[3 * j + 1] * t[1] + R[3 * j + 2] * t[2]
            _quat_exp(vj + 3, e)
            _quat_mul(qj + 3, e, oj + 3)
            quat_unit(oj + 3, oj + 3)
        else:
            oj[0] = qj[0] + vj[0]
    return 0


@cython.cdivision(True)
cdef int k_difference(const Call* c, const double** ins, double* out, double* work) noexcept nogil:
    cdef const CModel* m = c.m
    cdef const double* q0 = ins[0]
    cdef const double* q1 = ins[1]
    cdef const double* a
    cdef const double* b
    cdef double* oj
    cdef int i, k, j
    cdef double qa[4]
    cdef double qb[4]
    cdef double rel[4]
    cdef double d[3]
    cdef double p[3]
    cdef double R[9]
    cdef double phi, cs, sn, dx, dy, h, ct
    for i in range(m.nb):
        k = m.kinds[i]
        a = q0 + m.q_idx[i]
        b = q1 + m.q_idx[i]
        oj = out + m.v_idx[i]
        if k == K_SPH:
            quat_unit(a, qa)
            quat_unit(b, qb)
            _quat_conj(qa, qa)
            _quat_mul(qa, qb, rel)
            _quat_log(rel, oj)
        elif k == K_PLANAR:
            # SE(2) log of the relative pose: the angle is wrapped to (-pi, pi]
            phi = atan2(sin(b[2] - a[2]), cos(b[2] - a[2]))
            cs = cos(a[2]); sn = sin(a[2])
            dx = cs * (b[0] - a[0]) + sn * (b[1] - a[1])
            dy = -sn * (b[0] - a[0]) + cs * (b[1] - a[1])
            # V(phi)^-1 = [[h cot(h), h], [-h, h cot(h)]] with h = phi / 2
            h = 0.5 * phi
            if fabs(phi) < 1e-4:
                ct = 1.0 - h * h / 3.0
            else:
                ct = h * cos(h) / sin(h)
            oj[0] = ct * dx + h * dy
            oj[1] = -h * dx + ct * dy
            oj[2] = phi
        elif k == K_FREE:
            quat_unit(a + 3, qa)
            quat_unit(b + 3, qb)
            quat_to_rot(qa, R)
            for j in range(3):
                d[j] = b[j] - a[j]
            for j in range(3):
                p[j] = R[j] * d[0] + R[3 + j] * d[1] + R[6 + j] * d[2]   # R0^T (p1 - p0)
            _quat_conj(qa, qa)
            _quat_mul(qa, qb, rel)
            _quat_log(rel, oj + 3)
            _se3_Vinv(oj + 3, p, oj)
        else:
            oj[0] = b[0] - a[0]
    return 0


@cython.cdivision(True)
cdef int k_normalize(const Call* c, const double** ins, double* out, double* work) noexcept nogil:
    cdef const CModel* m = c.m
    cdef const double* q = ins[0]
    cdef int i, k, j
    for j in range(m.nq):
        out[j] = q[j]
    for i in range(m.nb):
        k = m.kinds[i]
        if k == K_SPH:
            quat_unit(q + m.q_idx[i], out + m.q_idx[i])
        elif k == K_FREE:
            quat_unit(q + m.q_idx[i] + 3, out + m.q_idx[i] + 3)
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
