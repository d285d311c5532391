# cython: language_level=3
"""The compiled view of a Model and the batch driver.

``CModel`` is a C struct of the model's flat arrays (copied once per model and
kept in its private cache).  What each joint kind does is in ``_joints.pxd``.

``run`` (in _model.pyx) is the single driver every algorithm goes through:
it checks and unpacks the arguments (fast path for exact-shape float64
C-contiguous ndarrays, rbd._checks otherwise), allocates the output and
calls the algorithm's kernel once per sample, over the batch in parallel.
"""
cdef enum:
    MAX_BATCH_DIMS = 16     # as rbd._checks.MAX_BATCH_DIMS (a test keeps them equal)
    SIZE_TERMS = 12         # the coefficients of a ``size`` (see Algorithm)
    SIZE_NV2 = 6            # where a size holds its nv^2 coefficient


# A ``size`` (see Algorithm) as the driver keeps it: its coefficients, and how many of
# them are worth reading (those up to the last non-zero one: a call evaluates two or three
# sizes, of one or two terms on most algorithms, out of the twelve).
ctypedef struct Size:
    Py_ssize_t c[SIZE_TERMS]
    int nterms


# The fields of one contact in Call.contacts, resolved in Python before the batch runs.
cdef enum:
    CONTACT_FRAME = 0
    CONTACT_BODY = 1
    CONTACT_DIM = 2
    CONTACT_REF = 3         # RefCode: REF_LOCAL or REF_LWA
    CONTACT_ROW = 4         # its first row among the constraint rows
    CONTACT_FIELDS = 5


cdef object checks_module()


cdef enum RefCode:
    REF_LOCAL = 0
    REF_WORLD = 1
    REF_LWA = 2

ctypedef struct CModel:
    int nb
    int nq
    int nv
    int nframes
    int nd2                 # sum of nv_i**2 (storage of per-joint nv x nv blocks)
    int max_depth
    Py_ssize_t nancestors   # the dofs' ancestors, counted (the length of dof_ancestors: n x depth)
    Py_ssize_t minv_levels  # sum over the depths of nv - level_start (articulated M^-1's rows)
    Py_ssize_t size_terms[SIZE_TERMS]  # a size's terms on this model (those of the contact rows 0)
    int* level_start        # (max_depth,)  the first dof of any body at each depth (depth - 1)
    Py_ssize_t* level_at    # (max_depth,)  where each depth's 6 rows of nv - level_start start
    int* parents            # (nb,)  -1: the world
    int* kinds              # (nb,)
    int* q_idx              # (nb,)
    int* v_idx              # (nb,)
    int* nqj                # (nb,)
    int* nvj                # (nb,)
    int* d2_idx             # (nb,)  start of the joint's nv x nv block
    int* subtree_end        # (nb,)  i's subtree is among bodies i..subtree_end[i]-1 (all of
                            #        them when depth_first: its last body, + 1)
    bint depth_first        # every subtree one run of indices (a model may be parents-first
                            #        only: Pinocchio's models built joint by joint)
    int* depth              # (nb,)  number of ancestors including itself
    int* dof_bodies         # (nv,)  the body of each dof
    int* dof_parents        # (nv,)  the dof before each along the tree: the previous one of its
                            #        joint, else its nearest moving ancestor's last (-1: none)
    int* dof_run_start      # (nv,)  the first of the run of dofs d, d-1, ... that are each the one
                            #        before the next (a dof's ancestors are a few such runs)
    int* dof_ancestors      # each dof's ancestors along dof_parents, nearest first, dof after dof (NULL until need_ancestors)
    int* dof_ancestors_start  # (nv + 1,) where each dof's list starts in dof_ancestors
    bint minv_factored      # M^-1 by factoring M along the tree (shallow trees) or by the
                            #        articulated-body sweeps (deep chains): see _build
    double* axes            # (nb, 3)
    double* placements      # (nb, 16) parent_from_joint, row-major 4x4
    double* inertias        # (nb, 10)
    double* armature        # (nv,)  reflected rotor inertia of each dof (joint-space diagonal)
    bint has_armature       # any armature at all (else the algorithms skip it)
    int* frame_parents      # (nframes,)
    double* frame_offsets  # (nframes, 16) body_from_frame
    double total_mass
    double gravity[3]       # the model's gravity (a model is immutable: read once, here)
    int coupled             # a model with mimic joints (this is its full model: run() goes through rbd._coupled)
    double* singular_tol    # (nb,) pivots of a body's articulated inertia at or below this are singular
    # for the joint placements' sines and cosines a block of bodies at a time (_joints.h):
    int* angle_q            # (nb padded to whole blocks) a revolute joint's angle's index in q, else 0
    int* angle_blocks       # (blocks,) whether the block has a revolute joint
    int nquat               # joints with a unit quaternion in q (free, spherical)
    int* quat_q             # (nquat,) where each quaternion starts in q

# Per-call parameters handed to the kernels (read-only during the loop).
ctypedef struct Call:
    const CModel* m
    double g[3]             # gravity, world frame
    int frame               # frame index (kinematics)
    int body                # the frame's body (-1: world)
    int ref                 # RefCode
    int flag                # algorithm variant
    const int* contacts     # CONTACT_FIELDS ints per contact (contact kernels; see CONTACT_*)
    int ncontacts
    int nrows               # the contacts' constraint rows (the sum of their dims)
    double regularization   # contact kernels: the damping added to J M^-1 J^T
    double restitution      # impulse_dynamics: the coefficient e

# One sample: ins[k] points at input k of this sample (NULL when absent), outs[k] at
# output k.  Returns 0, or 1 + i when body i's joint makes forward dynamics singular, or
# -1 when the contacts' constraints are redundant (contact kernels).
ctypedef int (*kernel_t)(const Call* c, const double** ins, double** outs, double* work) noexcept nogil

# A block of n <= LANES consecutive samples at once (several samples per instruction):
# ins[k] points at input k of the first sample, the next ones size[k] doubles apart
# (NULL when absent); outs[k] likewise, osize[k] apart.  Returns as a kernel_t.
ctypedef int (*block_kernel_t)(const Call* c, int n, const double** ins, const Py_ssize_t* size,
                               double** outs, const Py_ssize_t* osize, double* work) noexcept nogil

cdef enum:
    LANES = 8               # samples per block (RBD_LANES in _lanes.h)



cdef class CompiledModel:
    cdef CModel m
    cdef object owner       # the arrays the pointers of m point into
    cdef dict frame_index   # the model's frame names -> indices
    cdef object last_frame_name       # the last frame name object a call gave (resolve_frame)
    cdef Py_ssize_t last_frame_index  # and its frame's index
    cdef object model_ref   # a weak reference to the model it was looked up for (compiled)


cdef CompiledModel compiled(object model)
cdef CompiledModel prepare_call(Call* call, object model)
cdef int need_ancestors(CompiledModel cm) except -1
cdef CompiledModel prepare_mass_call(Call* call, object model)
cdef class Algorithm:
    """What the driver needs to know of an algorithm, declared once beside its kernel:
    its inputs (a code each: q -> nq, v -> nv, f -> (nbodies, 6)) and their argument
    names, its outputs (one or several; each a per-sample shape in codes: v -> nv,
    q -> nq, b -> nbodies, n -> nframes, a digit -> itself, empty -> a scalar), its kernel, the
    scratch the kernel uses (doubles) and its work per sample (about nanoseconds, for
    the decision to use threads), each a ``size``: coefficients of 1, nbodies, nv,
    the depth of the tree, nv x depth, the sum of nv_i^2, nv^2, and of the call's
    contact rows r: r, r x nv and r^2; then the dofs' ancestors counted (a factor of M
    along the tree, packed) and CModel.minv_levels (the articulated M^-1's rows).  Output codes c -> r, p -> 10 nbodies (inertial
    parameters)."""
    cdef bytes inputs
    cdef tuple names
    cdef tuple outputs
    cdef int nout
    cdef char shapes[4][4]  # the outputs' shape codes as C chars (read on every call)
    cdef int ndims[4]
    cdef kernel_t kernel
    cdef public str name    # the public function's name (None: rbd runs the model with mimic joints)
    cdef public str label   # how errors name it when name is None
    cdef Size scratch
    cdef Size cost
    cdef block_kernel_t block           # NULL, or the kernel of a block of samples (batches)
    cdef Size block_scratch             # its scratch, as scratch
    cdef bint stage_outputs             # a large batch's blocks stream their outputs (set_block)
    cdef Py_ssize_t lanes_limit         # doubles of block scratch beyond which blocks are slower (0: none)
    cdef Py_ssize_t lanes_depth         # mean depth of the dofs beyond which blocks are slower (0: none)


cdef Algorithm algorithm(bytes inputs, tuple names, tuple outputs, kernel_t kernel, tuple scratch, tuple cost)
cdef object run(object model, CompiledModel cm, Call* call, Algorithm alg, tuple values, object out=*,
               object contacts=*)
cdef object run_args(object model, CompiledModel cm, Call* call, Algorithm alg, object out, object x0,
                     object x1=*, object x2=*, object x3=*)
cdef int resolve_frame(Call* call, CompiledModel cm, object model, object frame) except -1
cdef int resolve_reference(Call* call, object reference) except -1
cdef int current_threads() noexcept nogil
cdef int simd_cap() noexcept nogil
cdef int set_block(Algorithm alg, block_kernel_t block, tuple scratch, bint stage=*, Py_ssize_t lanes_limit=*,
                    Py_ssize_t lanes_depth=*) except -1


cdef inline void add_armature(const CModel* m, double* M) noexcept nogil:
    """M += diag(armature) for an nv x nv row-major mass matrix."""
    cdef int k
    if m.has_armature:
        for k in range(m.nv):
            M[k * m.nv + k] += m.armature[k]
