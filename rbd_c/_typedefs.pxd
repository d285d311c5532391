# cython: language_level=3
"""Type names shared by the rbd_c modules."""

# A spatial kernel on raw storage (see _kernels.pxd for the layouts): one input, or two.
ctypedef void (*unary_kernel_t)(const double*, double*) noexcept nogil
ctypedef void (*binary_kernel_t)(const double*, const double*, double*) noexcept nogil
