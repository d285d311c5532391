# cython: language_level=3
"""Blocks of LANES samples for the batched dynamics (the C kernels are in _lanes.h):
what the block kernels of _dynamics.pyx share: the kernels' model view, the joint
placements of a block (per lane, by the one-sample joint code: every joint kind) and
the transposition of inputs into lanes and of outputs back."""
from rbd_c._model cimport (CModel, Call, kernel_t, LANES, simd_cap, CONTACT_FRAME, CONTACT_BODY, CONTACT_DIM,
                           CONTACT_REF, CONTACT_ROW, CONTACT_FIELDS, REF_LWA)
from rbd_c._joints cimport (joint_placement, rbd_joint_table, K_COUNT, K_REV_X, K_REV_Y, K_REV_Z, K_REV, K_PRISM,
                            K_PLANAR, K_SPH, K_FREE)

cdef extern from "_lanes.h":
    """
    /* the motion subspace of each joint kind as rbd_lanes_model reads it (filled at import) */
    static int rbd_lanes_cols[6 * 16];
    static int rbd_lanes_basis[16];
    """
    int RBD_LANES
    int RBD_AXIS_ANGULAR
    int RBD_AXIS_LINEAR
    int rbd_lanes_cols[96]
    int rbd_lanes_basis[16]
    ctypedef struct rbd_lanes_model:
        int nb, nv, has_armature
        const int *parents, *kinds, *q_idx, *v_idx, *nvj, *d2_idx, *cols, *basis
        const double *axes, *placements, *inertias, *armature
        const double* singular_tol
        const int *dof_parents, *dof_run_start, *dof_ancestors, *dof_ancestors_start
    int RBD_K_REV_X, RBD_K_REV_Y, RBD_K_REV_Z, RBD_K_REV, RBD_K_PRISM, RBD_K_PLANAR, RBD_K_FREE
    int RBD_CONTACT_FRAME, RBD_CONTACT_BODY, RBD_CONTACT_DIM, RBD_CONTACT_REF, RBD_CONTACT_ROW, RBD_CONTACT_FIELDS
    int RBD_REF_LWA
    ctypedef struct rbd_lanes_contacts:
        const int* table
        int ncontacts, nrows
        const double* frame_offsets
        double regularization, restitution, rank_tol
    double rbd_rank_probe(int r) noexcept nogil
    ctypedef struct rbd_lanes_set:
        void (*place)(const rbd_lanes_model*, const double*, double*) noexcept nogil
        void (*rnea)(const rbd_lanes_model*, const double*, const double*, const double*, const double*,
                     const double*, double*, double*) noexcept nogil
        void (*crba)(const rbd_lanes_model*, const double*, double**, double*) noexcept nogil
        void (*aba)(const rbd_lanes_model*, const double*, const double*, const double*, const double*,
                    const double*, double*, double*, int*) noexcept nogil
        void (*rnea_derivatives)(const rbd_lanes_model*, const double*, const double*, const double*,
                                 const double*, const double*, double**, double**, double**,
                                 double*) noexcept nogil
        int (*minv)(const rbd_lanes_model*, const double*, double*, double*) noexcept nogil
        int (*contacts)(const rbd_lanes_model*, const rbd_lanes_contacts*, const double*, const double*,
                        const double*, const double*, const double*, double*, double*, double*) noexcept nogil
        void (*matvec)(int, const double*, const double*, double*) noexcept nogil
        const char* name
    const rbd_lanes_set rbd_lanes_sets[3]
    int rbd_lanes_best() noexcept nogil
    void rbd_lanes_scatter(int n, const double* rows, Py_ssize_t size, double* x, Py_ssize_t stride) noexcept nogil


cdef inline const rbd_lanes_set* lanes_set(int best) noexcept nogil:
    """The kernel set to run: the widest this machine has (``best``, rbd_lanes_best() of
    the calling module), within rbd_c.set_simd's choice.  The choice is read once: another
    thread may change it meanwhile, and a second read could pair the old test with the new
    cap (AVX-512 kernels on a machine without them)."""
    cdef int cap = simd_cap()  # (a call into rbd_c._model: the compiler cannot read it twice)
    return &rbd_lanes_sets[best if best < cap else cap]


cdef inline int lanes_tables() except -1:
    """Fill rbd_lanes_cols / rbd_lanes_basis from the joint table (once, at import)."""
    cdef int k, c
    if (RBD_K_REV_X, RBD_K_REV_Y, RBD_K_REV_Z, RBD_K_REV, RBD_K_PRISM, RBD_K_PLANAR, RBD_K_FREE) != (
            K_REV_X, K_REV_Y, K_REV_Z, K_REV, K_PRISM, K_PLANAR, K_FREE):
        raise ImportError("rbd_c: the joint kind codes of _lanes.h and _joints.pxd differ")
    if (RBD_CONTACT_FRAME, RBD_CONTACT_BODY, RBD_CONTACT_DIM, RBD_CONTACT_REF, RBD_CONTACT_ROW, RBD_CONTACT_FIELDS,
            RBD_REF_LWA) != (CONTACT_FRAME, CONTACT_BODY, CONTACT_DIM, CONTACT_REF, CONTACT_ROW, CONTACT_FIELDS,
                             REF_LWA):
        raise ImportError("rbd_c: the contact table layouts of _lanes.h and _model.pxd differ")
    for k in range(<int>K_COUNT):
        rbd_lanes_basis[k] = rbd_joint_table[k].basis
        for c in range(6):
            rbd_lanes_cols[6 * k + c] = rbd_joint_table[k].cols[c]
        if k == K_REV:
            rbd_lanes_cols[6 * k] = RBD_AXIS_ANGULAR
        elif k == K_PRISM:
            rbd_lanes_cols[6 * k] = RBD_AXIS_LINEAR
    return 0


cdef inline void lanes_model(const CModel* m, rbd_lanes_model* out) noexcept nogil:
    out.nb, out.nv, out.has_armature, out.singular_tol = m.nb, m.nv, m.has_armature, m.singular_tol
    out.parents, out.kinds, out.q_idx, out.v_idx, out.nvj, out.d2_idx = (
        m.parents, m.kinds, m.q_idx, m.v_idx, m.nvj, m.d2_idx)
    out.axes, out.placements, out.inertias, out.armature = m.axes, m.placements, m.inertias, m.armature
    out.cols, out.basis = rbd_lanes_cols, rbd_lanes_basis
    out.dof_parents, out.dof_run_start = m.dof_parents, m.dof_run_start
    out.dof_ancestors, out.dof_ancestors_start = m.dof_ancestors, m.dof_ancestors_start


cdef inline void lanes_placements(const rbd_lanes_set* ks, const rbd_lanes_model* lm, const CModel* m, int n,
                                  const double* q, Py_ssize_t qsize, double* X, double* Q) noexcept nogil:
    """X (12 rows of LANES per body) = every body's parent_from_body in each lane, Q (nq
    rows) the coordinates in lanes; lanes n.. repeat the last sample (their results are
    dropped).  Quaternion joints are placed lane by lane by the one-sample code."""
    cdef double T[16]
    cdef const double* qs
    cdef int i, l, r
    lanes_in(n, q, qsize, Q)
    ks.place(lm, Q, X)
    for i in range(m.nb):
        if m.kinds[i] == K_SPH or m.kinds[i] == K_FREE:
            for l in range(LANES):
                qs = q + (l if l < n else n - 1) * qsize
                joint_placement(m, i, qs + m.q_idx[i], T)
                for r in range(12):
                    X[(12 * i + r) * LANES + l] = T[r]


cdef inline double* lanes_in(int n, const double* x, Py_ssize_t xsize, double* rows) noexcept nogil:
    """rows (xsize rows of LANES) = the n samples of x, the last repeated; returns rows,
    or NULL for an absent x."""
    cdef int l
    cdef Py_ssize_t j
    cdef const double* xs
    if x == NULL:
        return NULL
    for l in range(LANES):
        xs = x + (l if l < n else n - 1) * xsize
        for j in range(xsize):
            rows[j * LANES + l] = xs[j]
    return rows


cdef inline double* lanes_state(int n, const double** ins, Py_ssize_t nb, Py_ssize_t nv, double* rows,
                                const double** v, const double** x, const double** fext) noexcept nogil:
    """A block's state inputs in lanes: ins[1] and ins[2] (nv rows each) into v and x,
    ins[3] (6 rows per body, or absent) into fext, from ``rows`` on; returns what follows."""
    v[0] = lanes_in(n, ins[1], nv, rows)
    x[0] = lanes_in(n, ins[2], nv, rows + LANES * nv)
    fext[0] = lanes_in(n, ins[3], 6 * nb, rows + 2 * LANES * nv)
    return rows + 2 * LANES * nv + 6 * LANES * nb


cdef inline void lanes_out(int n, const double* rows, Py_ssize_t xsize, double* x) noexcept nogil:
    """The first n lanes of rows back into n samples of xsize doubles."""
    cdef int l
    cdef Py_ssize_t j
    for l in range(n):
        for j in range(xsize):
            x[l * xsize + j] = rows[j * LANES + l]


cdef inline int one_by_one(kernel_t kernel, const Call* c, int n, int nin, const double** ins,
                           const Py_ssize_t* size, int nout, double** outs, const Py_ssize_t* osize,
                           double* work) noexcept nogil:
    """A block's samples through the one-sample kernel, one at a time (where the lanes
    do not apply); the first non-zero status, as the single calls'."""
    cdef const double* one[4]
    cdef double* res[3]
    cdef int l, k, status
    for l in range(n):
        for k in range(nin):
            one[k] = NULL if ins[k] == NULL else ins[k] + l * size[k]
        for k in range(nout):
            res[k] = outs[k] + l * osize[k]
        status = kernel(c, one, res, work)
        if status:
            return status
    return 0
