# cython: language_level=3
"""What other compiled modules use of _dynamics: the ABA kernel (the ABA derivatives
run it first) and the size of its scratch."""
from rbd_c._model cimport Call

cdef enum:
    # ABA's scratch per body, by offset: parent_from_body X, twist v, velocity-product
    # acceleration c, articulated inertia IA (sym6, 21), bias force pA, acceleration a.
    ABA_X = 0
    ABA_V = 16
    ABA_C = 22
    ABA_IA = 28
    ABA_PA = 49
    ABA_A = 55
    ABA_PER_BODY = 61


cdef int k_aba(const Call* c, const double** ins, double** outs, double* work) noexcept nogil
