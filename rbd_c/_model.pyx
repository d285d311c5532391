# cython: language_level=3
"""Compiled model view (kept in the Model's private cache), argument driver and thread count.

The driver ``run`` is shared by every algorithm.  Each algorithm is declared once,
as an ``Algorithm`` beside its kernel (inputs and their names, one or several
outputs with their shapes, scratch and work as sizes of the model); the driver
reads that description, so no wrapper repeats shapes, sizes or costs.  A single call with exact-shape
float64 C-contiguous ndarrays takes the fast path: plain integer shape checks,
no conversion, the outputs are the only allocations, the kernel's scratch is on
the C stack (or malloc'ed per call for big models), so concurrent calls from
several Python threads never share memory.  One sample of a small model goes
through ``_run_one``, the same checks without the batch machinery.  Anything else (lists, other
dtypes, non-contiguous arrays, broadcasting, bad input) goes through
``rbd._checks.model_arrays``, the validation the reference uses, so errors are
the same.  Finiteness is checked inside the C loop; a NaN or inf re-runs the
shared validation to raise the reference's error.

Batches run as one loop with the GIL released, split over OpenMP threads, each
thread with its own scratch; memory is inputs + outputs + one scratch per thread.
"""
cimport cython
cimport numpy as cnp
from cython.parallel cimport prange, parallel, threadid
from libc.stdlib cimport malloc, free
from libc.limits cimport INT_MAX
from libc.string cimport memcpy, memset
from cpython.exc cimport PyErr_CheckSignals
from cpython.ref cimport PyObject, Py_XDECREF, Py_INCREF
from cpython.tuple cimport PyTuple_GET_ITEM
from cpython.weakref cimport PyWeakref_GetRef, PyWeakref_NewRef

from rbd_c._kernels cimport any_nonfinite, stream_copy, stream_fence
from rbd_c._joints cimport zero_quaternion, rbd_joint_table, K_COUNT, K_REV, SINCOS_BLOCK

import os
import warnings
from time import monotonic as _monotonic

import numpy as np

cnp.import_array()

cdef extern from *:
    """
    #ifdef _OPENMP
    #include <omp.h>
    static int rbd_omp_max_threads(void) { return omp_get_max_threads(); }
    static int rbd_have_openmp(void) { return 1; }
    static double rbd_wtime(void) { return omp_get_wtime(); }
    #else
    static int rbd_omp_max_threads(void) { return 1; }
    static int rbd_have_openmp(void) { return 0; }
    static double rbd_wtime(void) { return 0.0; }
    #endif
    """
    int rbd_omp_max_threads() noexcept nogil
    int rbd_have_openmp() noexcept nogil
    double rbd_wtime() noexcept nogil   # seconds (OpenMP's clock; 0 without OpenMP)


# ---- large outputs: a pool of freed blocks ------------------------------------------
# A batch's fresh outputs are megabytes; when they are freed, glibc gives such blocks
# back to the system, so the next batch's outputs fault in every page again (on a
# virtual machine, more than the arithmetic: Talos's batched RNEA derivatives twice as
# slow as into out=).  Outputs of RBD_POOL_MIN bytes or more are allocated through a
# NumPy memory handler that keeps a few freed blocks (up to RBD_POOL_MAX bytes in all)
# and hands them out again for the same size.
cdef extern from *:
    """
    #include <stdlib.h>
    #include <stdint.h>
    #if defined(__linux__)
    #include <sys/mman.h>
    #endif
    #define RBD_POOL_SLOTS 8
    #define RBD_HUGE_MIN ((size_t)1 << 22)  /* NumPy's threshold for madvise(MADV_HUGEPAGE) */
    #define RBD_PAGE ((size_t)4096)
    static int rbd_pool_huge_pages = 1;  /* NumPy's setting, read at import */
    #define RBD_POOL_MIN ((size_t)1 << 18)
    #define RBD_POOL_MAX ((size_t)1 << 28)
    static void* rbd_pool_block[RBD_POOL_SLOTS];
    static size_t rbd_pool_bytes[RBD_POOL_SLOTS];
    static size_t rbd_pool_total = 0;
    static char rbd_pool_busy = 0;  /* a spin lock: NumPy holds the GIL, a free-threaded build may not */
    static void rbd_pool_lock(void) { while (__atomic_test_and_set(&rbd_pool_busy, __ATOMIC_ACQUIRE)) {} }
    static void rbd_pool_unlock(void) { __atomic_clear(&rbd_pool_busy, __ATOMIC_RELEASE); }

    static void* rbd_pool_malloc(void* ctx, size_t size) {
        if (size >= RBD_POOL_MIN) {
            rbd_pool_lock();
            for (int i = 0; i < RBD_POOL_SLOTS; i++) {
                if (rbd_pool_block[i] != NULL && rbd_pool_bytes[i] == size) {
                    void* block = rbd_pool_block[i];
                    rbd_pool_block[i] = NULL;
                    rbd_pool_total -= size;
                    rbd_pool_unlock();
                    return block;
                }
            }
            rbd_pool_unlock();
        }
        void* block = malloc(size);
    #ifdef MADV_HUGEPAGE
        /* As NumPy's own allocator does (this handler replaces it): a large block in huge
           pages faults 512x less often (a 763 MB batch of crba: 195,000 faults, 3x the time) */
        if (block != NULL && size >= RBD_HUGE_MIN && rbd_pool_huge_pages) {
            uintptr_t start = ((uintptr_t)block + RBD_PAGE - 1) & ~(uintptr_t)(RBD_PAGE - 1);
            uintptr_t end = (uintptr_t)block + size;
            if (end > start) madvise((void*)start, end - start, MADV_HUGEPAGE);
        }
    #endif
        return block;
    }
    static void* rbd_pool_calloc(void* ctx, size_t n, size_t size) { return calloc(n, size); }
    static void* rbd_pool_realloc(void* ctx, void* block, size_t size) { return realloc(block, size); }
    static void rbd_pool_free(void* ctx, void* block, size_t size) {
        if (block != NULL && size >= RBD_POOL_MIN) {
            rbd_pool_lock();
            if (rbd_pool_total + size <= RBD_POOL_MAX) {
                for (int i = 0; i < RBD_POOL_SLOTS; i++) {
                    if (rbd_pool_block[i] == NULL) {
                        rbd_pool_block[i] = block;
                        rbd_pool_bytes[i] = size;
                        rbd_pool_total += size;
                        rbd_pool_unlock();
                        return;
                    }
                }
            }
            rbd_pool_unlock();
        }
        free(block);
    }
    /* Frees the kept blocks; returns how many bytes they held. */
    static size_t rbd_pool_release(void) {
        void* blocks[RBD_POOL_SLOTS];
        rbd_pool_lock();
        size_t total = rbd_pool_total;
        for (int i = 0; i < RBD_POOL_SLOTS; i++) {
            blocks[i] = rbd_pool_block[i];
            rbd_pool_block[i] = NULL;
        }
        rbd_pool_total = 0;
        rbd_pool_unlock();
        for (int i = 0; i < RBD_POOL_SLOTS; i++) free(blocks[i]);
        return total;
    }
    static PyDataMem_Handler rbd_pool_handler = {
        "rbd_c_output_pool", 1, {NULL, rbd_pool_malloc, rbd_pool_calloc, rbd_pool_realloc, rbd_pool_free}};
    static PyObject* rbd_pool_capsule(void) { return PyCapsule_New(&rbd_pool_handler, "mem_handler", NULL); }
    """
    size_t RBD_POOL_MIN
    int rbd_pool_huge_pages
    size_t rbd_pool_release()
    object rbd_pool_capsule()
    object PyDataMem_SetHandler(object handler)

cdef object _output_pool = rbd_pool_capsule()


def _numpy_uses_huge_pages():
    """NumPy's own choice (``_set_madvise_hugepage``; off on kernels where huge pages hurt)."""
    for name in ("numpy._core.multiarray", "numpy.core.multiarray"):
        try:
            return bool(__import__(name, fromlist=["_get_madvise_hugepage"])._get_madvise_hugepage())
        except (ImportError, AttributeError):
            pass
    return True


rbd_pool_huge_pages = _numpy_uses_huge_pages()


def release_memory():
    """Free what rbd_c keeps for later calls' outputs: the blocks of batches' freed
    outputs (at most 256 MB) and single calls' last small results (at most 8 x 32 kB);
    returns how many bytes of them were not in use."""
    return rbd_pool_release() + _forget_spares()


# Work (in units of ``cost``, roughly nanoseconds) below which a batch runs on the
# calling thread: waking an OpenMP team costs tens of microseconds, and far more
# on a loaded machine, so only batches of about 50 us of work or more are split.
# Work above RELEASE_GIL_WORK releases the GIL (cheap calls keep it: releasing costs more).
cdef enum:
    OUTPUT_OVERFLOW = 1 << 30   # _one/_span's flag for a non-finite output (the bits below: inputs)
    PARALLEL_WORK = 50000
    RELEASE_GIL_WORK = 4000
    CHUNK_WORK = 20000000   # ~20 ms of work between two looks at the signals (Ctrl-C)
    STACK_DOUBLES = 2048
    BLOCK_SCRATCH_LIMIT = 1 << 22   # doubles (32 MB) of a block's scratch per thread, beyond which a
                                    # batch runs one sample at a time (the lanes' nv x nv matrices of
                                    # a model of thousands of dofs would take gigabytes)
    BLOCK_MATRICES_LIMIT = 1 << 20  # doubles (8 MB) of a block's nv x nv matrices (its scratch's and its
                                    # samples' outputs) beyond which it runs one sample at a time, as
                                    # they leave the cache (measured, one thread: the derivatives of trees
                                    # of 150..300 dofs 1.1..1.35x slower in lanes; RNEA and ABA, whose
                                    # lanes stream per body and have no nv x nv matrix, are not judged)
    STREAM_MIN_DOUBLES = 1 << 19    # a batch's outputs (4 MB) from which blocks stream them (_span)
    STAGE_MAX_DOUBLES = 1 << 16     # and the largest stage (512 kB) of a block's outputs
    MAX_INPUTS = 8
    MAX_OUTPUTS = 4
    MAX_DIMS = 64

def _max_threads():
    """The largest thread count accepted: a few per core, at most 256.  (libgomp
    crashes when asked for tens of thousands of threads; more threads than a
    few per core only add contention.)"""
    return min(256, 4 * max(1, os.cpu_count() or 1))


MAX_THREADS = _max_threads()


def _initial_threads():
    n = max(1, rbd_omp_max_threads())
    if n > MAX_THREADS:
        warnings.warn("rbd_c: OMP_NUM_THREADS asks for %d threads; batches use at most %d"
                      % (n, MAX_THREADS), RuntimeWarning, stacklevel=3)
        n = MAX_THREADS
    return n


cdef int _num_threads = _initial_threads()
# A process forked from one that had woken libgomp's thread team (rbd's own batches, or
# any other OpenMP code: Pinocchio's *InParallel, a prange module) waits forever in its
# first parallel region: the team does not survive fork.  rbd cannot see another
# library's team, so a forked child runs its batches on the calling thread until it asks
# for threads (set_num_threads), which it gets unless rbd's own team ran before the fork.
cdef bint _team_started = False   # a batch of this process (or of its parent) woke the team
cdef bint _serial_after_fork = False
# A batch whose second thread hardly worked (its core busy with another process: the
# team's end waits for it to be scheduled, up to milliseconds) makes the next batches
# run on the calling thread for a while, doubling while it lasts: on a loaded machine
# a parallel batch could otherwise take 10-100x its serial time.
cdef double _serial_until = 0.0
cdef double _serial_backoff = 0.0


def _after_fork_in_child():
    global _serial_after_fork
    _serial_after_fork = True


os.register_at_fork(after_in_child=_after_fork_in_child)


cdef void _note_team(Py_ssize_t least, Py_ssize_t total, int nt, double waited, double busy):
    """After a parallel batch of ``total`` steps whose laziest thread took ``least``, and
    whose end waited ``waited`` seconds after the calling thread's last step (``busy``
    seconds of steps): a thread under a quarter of its share, while the team's end waited
    more than a quarter of the caller's own time (and 50 us), starts (or doubles, up to a
    second) a time in which batches run on the calling thread; a balanced batch halves the
    next one.  A lazy thread whose team did not wait had woken late (a thread team idle for
    a while takes up to a millisecond to wake on a virtual machine) and then done its share
    of what was left: that costs the batch nothing a serial one would not, so it is not
    held against the next batches (it was: a short batch after a pause ran the next 10 ms
    of batches serially)."""
    global _serial_until, _serial_backoff
    if least * 4 * nt < total and waited * 4.0 > busy and waited > 50e-6:
        _serial_backoff = min(1.0, max(0.01, 2.0 * _serial_backoff))
        _serial_until = _monotonic() + _serial_backoff
    else:
        _serial_backoff = 0.5 * _serial_backoff


cdef bint _team_resting():
    """Whether batches still run on the calling thread after an unbalanced one."""
    global _serial_until
    if _monotonic() < _serial_until:
        return True
    _serial_until = 0.0
    return False


def _team_balance(least=None, total=None, nt=2, waited=1.0, busy=1.0):
    """(For the tests) note a parallel batch's balance as the driver does, when given;
    returns (batches run serially now, the length of the last such time in seconds)."""
    if least is not None:
        _note_team(least, total, nt, waited, busy)
    return _serial_until > 0.0 and _team_resting(), _serial_backoff


def set_num_threads(n):
    """Number of OpenMP threads batched calls use (default: all cores, or OMP_NUM_THREADS),
    between 1 and ``rbd_c.MAX_THREADS``.  A forked process (``multiprocessing`` with the
    fork start method) runs its batches on the calling thread until it calls this: then it
    gets n threads, which is safe only if no OpenMP code ran in the parent before the fork
    (after rbd's own parallel batches there it warns and stays serial); use the spawn or
    forkserver start method for threaded children."""
    global _num_threads, _serial_after_fork
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)):
        raise TypeError("n must be an int, got %r" % (type(n).__name__,))
    if not 1 <= n <= MAX_THREADS:
        raise ValueError("n must be between 1 and %d (rbd_c.MAX_THREADS), got %d" % (MAX_THREADS, n))
    _num_threads = int(n)
    if _serial_after_fork and n > 1:
        if _team_started:
            warnings.warn("rbd_c: batches stay on the calling thread in a process forked after a parallel "
                          "batch (OpenMP's thread team does not survive fork); use the spawn or forkserver "
                          "start method for threaded children", RuntimeWarning, stacklevel=2)
        else:
            _serial_after_fork = False


def joint_kind_table():
    """The compiled joint-kind table, one (nq, nv, quaternion start, basis axis, unit
    columns of S) per kind code: a test holds it equal to rbd.model.JOINT_KINDS."""
    cdef int k, c
    rows = []
    for k in range(<int>K_COUNT):
        rows.append((rbd_joint_table[k].nq, rbd_joint_table[k].nv, rbd_joint_table[k].quaternion,
                     rbd_joint_table[k].basis,
                     tuple([rbd_joint_table[k].cols[c] for c in range(6) if rbd_joint_table[k].cols[c] >= 0])))
    return rows


def get_num_threads():
    """Number of OpenMP threads batched calls use (1 in a forked child, until it calls set_num_threads)."""
    return 1 if _serial_after_fork else _num_threads


def have_openmp():
    """True when rbd_c was compiled with OpenMP (otherwise batches run serially)."""
    return bool(rbd_have_openmp())


cdef int current_threads() noexcept nogil:
    return 1 if _serial_after_fork else _num_threads


# Batches of an algorithm with a block kernel run LANES samples per instruction (see
# _lanes.h): "auto" picks the widest instruction set the machine has, "avx2" at most AVX2,
# "baseline" forces the kernels compiled for the baseline, "off" runs the one-sample kernels.
SIMD_MODES = ("auto", "avx2", "baseline", "off")
_SIMD_CAPS = (2, 1, 0, 0)   # the widest kernel set each mode allows (_lanes.h's rbd_lanes_sets)
cdef int _simd_mode = 0
cdef int _simd_cap = 2


def set_simd(mode):
    """How batches use SIMD lanes: "auto" (default: the widest instruction set this
    machine has: AVX-512, AVX2 + FMA or the baseline), "avx2" (at most AVX2), "baseline"
    (the kernels compiled for any machine of the architecture) or "off" (one sample at a
    time).  The environment variable RBD_SIMD sets it at import; rbd_c.simd() says which
    kernels run."""
    global _simd_mode, _simd_cap
    if not isinstance(mode, str):
        raise TypeError("mode must be a str, one of %s, got %s" % (", ".join(map(repr, SIMD_MODES)),
                                                                 type(mode).__name__))
    if mode.strip().lower() not in SIMD_MODES:  # (any case, as the environment variables)
        raise ValueError("mode must be one of %s, got %r" % (", ".join(map(repr, SIMD_MODES)), mode))
    mode = mode.strip().lower()
    _simd_mode = SIMD_MODES.index(mode)
    _simd_cap = _SIMD_CAPS[_simd_mode]


def _simd_mode_name():
    return SIMD_MODES[_simd_mode]


_env_simd = os.environ.get("RBD_SIMD", "").strip().lower() or "auto"
if _env_simd not in SIMD_MODES:  # (a typo must not pass silently: as RBD_CPU and RBD_BACKEND)
    raise ValueError("RBD_SIMD must be one of %s, got %r" % (", ".join(repr(m) for m in SIMD_MODES), _env_simd))
set_simd(_env_simd)


cdef int simd_cap() noexcept nogil:
    return _simd_cap


cdef int set_block(Algorithm alg, block_kernel_t block, tuple scratch, bint stage=False,
                    Py_ssize_t lanes_limit=0, Py_ssize_t lanes_depth=0) except -1:
    """Give ``alg`` a block kernel (batches then run LANES samples at a time); ``stage``:
    a large batch's block writes its outputs to a stage in the cache, from which they are
    streamed to memory (for kernels writing nv x nv matrices sample by sample; M^-1's,
    which builds all of its output in lanes and transposes it out, measured slower);
    ``lanes_limit``: the doubles of block scratch beyond which a batch runs one sample at
    a time, where the block's passes leave the cache and are measured slower than the
    single kernel's; ``lanes_depth``: the same for the dofs' mean depth (CModel.nancestors
    / nv), beyond which a deep chain makes the block slower (0: only the limits every
    algorithm has)."""
    alg.block = block
    alg.stage_outputs = stage
    alg.lanes_limit = lanes_limit
    alg.lanes_depth = lanes_depth
    _set_size(&alg.block_scratch, scratch)
    return 0


def _none():
    return None


cdef class CompiledModel:
    """The flat arrays of one Model as C arrays (built once, kept in model._cache)."""

    def __reduce__(self):
        # Never pickled: an unpickled model rebuilds its view on first use.
        return (_none, ())

    def __copy__(self):
        return self

    def __deepcopy__(self, memo):
        return self

    def __repr__(self):
        return "<rbd_c CompiledModel nbodies=%d nq=%d nv=%d>" % (self.m.nb, self.m.nq, self.m.nv)


cdef inline void* _kept(list owner, values, dtype):
    """The data of ``values`` as a contiguous array of ``dtype`` (at least one element), kept
    alive by ``owner`` (the compiled model's)."""
    arr = np.ascontiguousarray(np.asarray(values).reshape(-1), dtype=dtype)
    if arr.size == 0:
        arr = np.zeros(1, dtype=dtype)
    owner.append(arr)
    return cnp.PyArray_DATA(arr)


cdef inline int* _ints(list owner, values):
    return <int*>_kept(owner, values, np.intc)


cdef inline Py_ssize_t* _ssizes(list owner, values):
    return <Py_ssize_t*>_kept(owner, values, np.intp)


cdef inline double* _doubles(list owner, values):
    return <double*>_kept(owner, values, np.float64)


def _dof_ancestor_counts(dof_parents):
    """How many ancestors each dof has along dof_parents (its depth - 1), as an int64 array."""
    counts = np.zeros(len(dof_parents), dtype=np.int64)
    for d in range(len(dof_parents)):
        if dof_parents[d] >= 0:
            counts[d] = counts[dof_parents[d]] + 1
    return counts


def _minv_factored_is_cheaper(ancestor_counts):
    """Whether M^-1 costs less factored along the tree (the factor from the articulated
    inertias, then its inverse: about sum_k (6 d_k + (d_k - 1) k) multiply-adds, with d_k
    the depth of dof k, 1 + its ancestors) than by the articulated-body sweeps (about
    sum_k (s_k + nv - k), s_k the size of dof k's subtree).  The first grows with the depth
    of the tree, the second does not: measured on chains and binary trees of 10 to 120
    bodies, the factored form is faster while the ratio stays under about 32 (chains of up
    to about 90 dofs, any tree of moderate depth), and the two are within 10-20% of each
    other around it."""
    nv = len(ancestor_counts)
    factored = articulated = 0
    for k in range(nv):
        d = int(ancestor_counts[k]) + 1
        factored += 6 * d + (d - 1) * k
        articulated += d + nv - k  # (sum_k s_k = sum_k d_k)
    return factored <= 32 * articulated


cdef CompiledModel _build(object model):
    checks_module().check_model(model)
    try:
        parents = np.asarray(model.parents, dtype=np.intp).reshape(-1)
        kinds = np.asarray(model.joint_kinds, dtype=np.intc).reshape(-1)
        nq_j = np.asarray(model.joint_nq, dtype=np.intp).reshape(-1)
        nv_j = np.asarray(model.joint_nv, dtype=np.intp).reshape(-1)
        q_idx = np.asarray(model.q_idx, dtype=np.intp).reshape(-1)
        v_idx = np.asarray(model.v_idx, dtype=np.intp).reshape(-1)
        axes = np.asarray(model.joint_axes, dtype=np.float64).reshape(-1, 3)
        placements = np.asarray(model.joint_placements, dtype=np.float64).reshape(-1, 4, 4)
        inertias = np.asarray(model.inertias, dtype=np.float64).reshape(-1, 10)
        frame_parents = np.asarray(model.frame_parents, dtype=np.intp).reshape(-1)
        frame_offsets = np.asarray(model.frame_offsets, dtype=np.float64).reshape(-1, 4, 4)
        nq, nv = int(model.nq), int(model.nv)
    except AttributeError as exc:
        raise TypeError("model must be an rbd.Model, got %r (%s)" % (type(model).__name__, exc)) from None
    nb = parents.shape[0]
    if not (kinds.shape[0] == nb == axes.shape[0] == placements.shape[0] == inertias.shape[0]
            == nq_j.shape[0] == nv_j.shape[0] == q_idx.shape[0] == v_idx.shape[0]):
        raise ValueError("model arrays have inconsistent lengths")
    if nb and (np.any(parents >= np.arange(nb)) or np.any(parents < -1)):
        raise ValueError("model bodies must be ordered parents first (parents[i] < i)")
    if np.any((kinds < 0) | (kinds >= K_COUNT)):
        raise ValueError("model has an unknown joint kind (the compiled table knows %d)" % K_COUNT)
    if frame_parents.shape[0] != frame_offsets.shape[0] or np.any(frame_parents >= nb) or np.any(frame_parents < -1):
        raise ValueError("model frames are inconsistent")

    par = [int(x) for x in parents]
    depth = [0] * nb
    subtree_end = list(range(1, nb + 1))
    for i in range(nb):
        depth[i] = 1 + (depth[par[i]] if par[i] >= 0 else 0)
    subtree_size = [1] * nb
    for i in reversed(range(nb)):
        if par[i] >= 0:
            subtree_end[par[i]] = max(subtree_end[par[i]], subtree_end[i])
            subtree_size[par[i]] += subtree_size[i]
    d2 = nv_j * nv_j
    d2_idx = np.cumsum(d2) - d2

    cdef CompiledModel cm = CompiledModel.__new__(CompiledModel)
    cdef list owner = []
    cm.m.nb = nb
    cm.m.nq = nq
    cm.m.nv = nv
    cm.m.nframes = frame_parents.shape[0]
    cm.m.nd2 = int(d2.sum())
    cm.m.max_depth = max(depth) if nb else 0
    cm.m.parents = _ints(owner, parents)
    cm.m.kinds = _ints(owner, kinds)
    cm.m.q_idx = _ints(owner, q_idx)
    nblocks = (nb + SINCOS_BLOCK - 1) // SINCOS_BLOCK
    revolute = kinds <= K_REV
    angle_q = np.zeros(nblocks * SINCOS_BLOCK, dtype=np.intp)
    angle_q[:nb][revolute] = q_idx[revolute]
    angle_blocks = np.zeros(nblocks * SINCOS_BLOCK, dtype=np.intp)
    angle_blocks[:nb] = revolute
    cm.m.angle_q = _ints(owner, angle_q)
    cm.m.angle_blocks = _ints(owner, angle_blocks.reshape(-1, SINCOS_BLOCK).any(axis=1))
    quat_q = [int(q_idx[i]) + rbd_joint_table[kinds[i]].quaternion for i in range(nb)
              if rbd_joint_table[kinds[i]].quaternion >= 0]
    cm.m.nquat = len(quat_q)
    cm.m.quat_q = _ints(owner, quat_q)
    cm.m.v_idx = _ints(owner, v_idx)
    cm.m.nqj = _ints(owner, nq_j)
    cm.m.nvj = _ints(owner, nv_j)
    cm.m.d2_idx = _ints(owner, d2_idx)
    cm.m.subtree_end = _ints(owner, subtree_end)
    cm.m.depth_first = all(subtree_end[i] - i == subtree_size[i] for i in range(nb))
    cm.m.depth = _ints(owner, depth)
    level_start = [nv] * cm.m.max_depth  # (v_idx never decreases along the bodies)
    for i in reversed(range(nb)):
        level_start[depth[i] - 1] = int(v_idx[i])
    widths = np.array([nv - start for start in level_start], dtype=np.intp)
    cm.m.level_start = _ints(owner, level_start)
    cm.m.level_at = _ssizes(owner, 6 * (np.cumsum(widths) - widths))
    cm.m.minv_levels = int(widths.sum())
    dof_bodies = np.repeat(np.arange(nb), nv_j)
    dof_parents = np.arange(nv) - 1
    last_dof = [-1] * nb  # each body's last dof, or its nearest moving ancestor's
    for i in range(nb):
        before = last_dof[par[i]] if par[i] >= 0 else -1
        if nv_j[i]:
            dof_parents[v_idx[i]] = before
            before = v_idx[i] + nv_j[i] - 1
        last_dof[i] = before
    dof_run_start = np.arange(nv)
    for d in range(1, nv):
        if dof_parents[d] == d - 1:
            dof_run_start[d] = dof_run_start[d - 1]
    cm.m.dof_bodies = _ints(owner, dof_bodies)
    cm.m.dof_parents = _ints(owner, dof_parents)
    cm.m.dof_run_start = _ints(owner, dof_run_start)
    cm.m.dof_ancestors = NULL  # (built on first use: need_ancestors)
    cm.m.dof_ancestors_start = NULL
    ancestor_counts = _dof_ancestor_counts(dof_parents)
    cm.m.minv_factored = _minv_factored_is_cheaper(ancestor_counts)
    cm.m.nancestors = int(ancestor_counts.sum())
    cm.m.axes = _doubles(owner, axes)
    cm.m.placements = _doubles(owner, placements)
    cm.m.inertias = _doubles(owner, inertias)
    armature = np.asarray(model.armature, dtype=np.float64).reshape(nv)
    cm.m.armature = _doubles(owner, armature)
    cm.m.has_armature = bool(np.any(armature != 0.0))
    cm.m.frame_parents = _ints(owner, frame_parents)
    cm.m.frame_offsets = _doubles(owner, frame_offsets)
    cm.m.total_mass = float(inertias[:, 0].sum()) if nb else 0.0
    gravity = np.asarray(model.gravity, dtype=np.float64).reshape(3)
    for d in range(3):
        cm.m.gravity[d] = gravity[d]
    cm.m.coupled = 0
    cm.m.singular_tol = _doubles(owner, checks_module().singular_tolerance(model))
    _set_size_terms(&cm.m)
    cm.owner = tuple(owner)
    cm.frame_index = dict(model._frame_index)
    cm.last_frame_name = _NO_FRAME_NAME
    return cm


# The last model a call looked up and its compiled view, as one tuple (replaced whole, so
# a thread never reads one model's view beside another model): a weak reference to the
# model (the view's own, made once), so that remembering it keeps nothing alive; when
# the model goes, its callback forgets the pair.
cdef tuple _last_compiled = (None, None)


def _forget_model(ref):
    """The remembered model is gone: drop its compiled view with it."""
    global _last_compiled
    if _last_compiled[0] is ref:
        _last_compiled = (None, None)


cdef inline bint _is_last(object ref, object model):
    """Whether the weak reference ``ref`` (or None) refers to ``model``."""
    cdef PyObject* alive = NULL
    if ref is None:
        return False
    PyWeakref_GetRef(ref, &alive)
    cdef bint same = alive == <PyObject*>model
    Py_XDECREF(alive)
    return same


cdef CompiledModel _remember(object model, CompiledModel cm):
    """cm, remembered as the last model's view (a model without weak references is not)."""
    global _last_compiled
    if cm.model_ref is None:
        try:
            cm.model_ref = PyWeakref_NewRef(model, _forget_model)
        except TypeError:
            return cm
    _last_compiled = (cm.model_ref, cm)
    return cm


cdef CompiledModel compiled(object model):
    """The compiled view of ``model``, kept in the model's private cache (built on
    first use; a model is immutable, so the view never goes stale).  A model with
    mimic joints gets the view of its full model, marked ``coupled``.  The same model
    as the last call's skips the two attribute look-ups (a control loop calls on one
    model; on the Panda, with the interpreter's attribute path no longer run between
    two kernels, a call is 10-16% faster)."""
    cdef tuple last = _last_compiled
    if _is_last(last[0], model):
        return <CompiledModel>last[1]
    try:
        cache = model._cache
    except AttributeError:
        checks_module().check_model(model)  # raises the TypeError naming the argument
        raise
    cm = cache.compiled
    if type(cm) is CompiledModel:
        return _remember(model, <CompiledModel>cm)
    cdef CompiledModel built
    if getattr(model, "_full", None) is not None:
        built = _build(model._full)
        built.m.coupled = 1
    else:
        built = _build(model)
    cache.compiled = built
    return _remember(model, built)


cdef int need_ancestors(CompiledModel cm) except -1:
    """Build CModel.dof_ancestors (each dof's ancestors, nearest first) for the algorithms
    that factor M along the tree, on their first call: the lists hold the sum of the dofs'
    depths, quadratic in a chain (50 million ints for a 10,000-link chain), which the
    linear-time algorithms must not pay for.  (The factor itself needs nv^2 doubles.)"""
    if cm.m.dof_ancestors != NULL:
        return 0
    cdef Py_ssize_t nv = cm.m.nv, d, p, n
    cdef list keep = []
    if cm.m.nancestors > INT_MAX:  # (C ints index them; M's factor would need nv^2 doubles anyway)
        raise MemoryError("the lists of each dof's ancestors on a model of %d dofs hold %d entries, more than "
                          "this algorithm indexes (2**31 - 1): the tree is too deep for it (its factor of M "
                          "alone needs %.3g GB)" % (nv, cm.m.nancestors, nv * nv * 8.0 / 1e9))
    depth = _dof_ancestor_counts([cm.m.dof_parents[d] for d in range(nv)])
    starts = np.zeros(nv + 1, dtype=np.int64)
    np.cumsum(depth, out=starts[1:])
    ancestors = np.empty(max(int(starts[nv]), 1), dtype=np.intc)
    for d in range(nv):  # the parent, then the parent's own list (a slice copy per dof)
        p = cm.m.dof_parents[d]
        if p >= 0:
            n = depth[p]
            ancestors[starts[d]] = p
            ancestors[starts[d] + 1:starts[d] + 1 + n] = ancestors[starts[p]:starts[p] + n]
    cm.m.dof_ancestors_start = _ints(keep, starts)
    cm.m.dof_ancestors = _ints(keep, ancestors)
    cm.owner = tuple(cm.owner) + tuple(keep)
    return 0


cdef CompiledModel prepare_call(Call* call, object model):
    """The compiled view of ``model``, with ``call`` set up for it: its gravity, no frame."""
    cdef CompiledModel cm = compiled(model)
    call.m = &cm.m
    call.frame = -1
    call.body = -1
    call.ref = REF_LOCAL
    call.flag = 0
    call.contacts = NULL
    call.ncontacts = 0
    call.nrows = 0
    call.regularization = 0.0
    call.restitution = 0.0
    call.g[0] = cm.m.gravity[0]
    call.g[1] = cm.m.gravity[1]
    call.g[2] = cm.m.gravity[2]
    return cm


cdef CompiledModel prepare_mass_call(Call* call, object model):
    """prepare_call for the center-of-mass quantities: refuses a model without mass."""
    cdef CompiledModel cm = prepare_call(call, model)
    if not cm.m.total_mass > 0.0:
        raise ValueError("the model has no mass in its moving bodies: its center of mass is undefined "
                         "(the mass fixed to the world, model.world_inertia, is not counted)")
    return cm


cdef object _NO_FRAME_NAME = object()  # CompiledModel.last_frame_name before any name (no argument is it)


cdef extern from *:
    """
    /* Caches that threads share through plain fields and reference counts -- the last frame
       name (resolve_frame), a single call's kept results (rbd_only_here) -- only where the
       GIL orders their reads and writes (a free-threaded Python could read one field's new
       value beside another's old one, or a count another thread is changing). */
    #ifdef Py_GIL_DISABLED
    #define RBD_SHARED_CACHES 0
    #else
    #define RBD_SHARED_CACHES 1
    #endif
    """
    const bint SHARED_CACHES "RBD_SHARED_CACHES"


cdef int resolve_frame(Call* call, CompiledModel cm, object model, object frame) except -1:
    cdef Py_ssize_t fid
    cdef object found = None
    if type(frame) is int and 0 <= frame < cm.m.nframes:
        fid = frame
    elif SHARED_CACHES and frame is cm.last_frame_name:
        fid = cm.last_frame_index  # the name object the last call gave (a loop): no look-up
    else:
        if type(frame) is str:
            found = cm.frame_index.get(frame)  # (one look-up of the name)
            if found is not None and SHARED_CACHES:
                cm.last_frame_index = found  # (an exact str: dropping the old one runs no
                cm.last_frame_name = frame   # Python code, so no thread sees half of this)
        fid = model.frame_id(frame) if found is None else found  # (its errors, and integer-like indices)
    call.frame = <int>fid
    call.body = cm.m.frame_parents[fid]
    return 0


cdef int resolve_reference(Call* call, object reference) except -1:
    if not isinstance(reference, str):
        raise ValueError("reference must be 'local', 'world' or 'local_world_aligned', got %s"
                         % checks_module().short_repr(reference))
    if reference == "local":
        call.ref = REF_LOCAL
    elif reference == "world":
        call.ref = REF_WORLD
    elif reference == "local_world_aligned":
        call.ref = REF_LWA
    else:
        raise ValueError("reference must be 'local', 'world' or 'local_world_aligned', got %s"
                         % checks_module().short_repr(reference))
    return 0


cdef inline Py_ssize_t _trailing(const CModel* m, char code, Py_ssize_t* dims) noexcept:
    """Per-sample shape of an input from its spec code; returns its ndim."""
    if code == b'q':
        dims[0] = m.nq
        return 1
    if code == b'f':
        dims[0] = m.nb
        dims[1] = 6
        return 2
    dims[0] = m.nv
    return 1


cdef object _checks_module = None


cdef object checks_module():
    """rbd._checks, the validation both backends share (for every rbd_c module), imported
    on first use: importing rbd while rbd_c initialises would bind a half-built backend."""
    global _checks_module
    if _checks_module is None:
        import rbd._checks
        _checks_module = rbd._checks
    return _checks_module


cdef object _validate(object model, tuple names, tuple values):
    """The shared validation (rbd._checks.model_arrays): raises the reference's errors."""
    kwargs = {}
    for k in range(len(names)):
        kwargs[names[k]] = values[k]
    return checks_module().model_arrays(model, **kwargs)


@cython.boundscheck(False)
@cython.wraparound(False)
cdef inline int _one(const Call* call, kernel_t kern, int nin, const double** base, const Py_ssize_t* size,
                     bint check, int qmask, Py_ssize_t s, int nout, double** out, const Py_ssize_t* out_size,
                     double* work, int* status) noexcept nogil:
    """Run sample s: returns a bit per non-finite input (bit k for input k), and
    OUTPUT_OVERFLOW for a non-finite output; the first non-zero kernel status lands in
    status."""
    cdef const double* ins_s[MAX_INPUTS]
    cdef double* outs_s[MAX_OUTPUTS]
    cdef const double** ins = base
    cdef double** outs = out
    cdef int k, bad = 0
    if s > 0:  # (sample 0 reads the arrays as they are: a single call copies nothing, where the
               # compiler made the copy a byte loop whose pointers the kernel then waited for)
        ins = ins_s
        outs = outs_s
        for k in range(nout):
            outs[k] = out[k] + s * out_size[k]
        for k in range(nin):
            ins_s[k] = NULL if base[k] == NULL else base[k] + s * size[k]
    for k in range(nin):
        if ins[k] != NULL and check and (any_nonfinite(ins[k], size[k])
                                         or (qmask & (1 << k) and zero_quaternion(call.m, ins[k]))):
            bad |= 1 << k
    k = kern(call, ins, outs, work)
    if k != 0 and status[0] == 0:
        status[0] = k
    for k in range(nout):  # while the outputs are in the cache
        if any_nonfinite(outs[k], out_size[k]):
            bad |= OUTPUT_OVERFLOW
    return bad


cdef inline int _span(const Call* call, kernel_t kern, block_kernel_t blk, int nin, const double** base,
                      const Py_ssize_t* size, bint check, int qmask, Py_ssize_t start, Py_ssize_t stop, int nout,
                      double** out, const Py_ssize_t* out_size, double* work, double* stage,
                      int* status, Py_ssize_t* status_at) noexcept nogil:
    """Run samples start..stop-1, one at a time (blk NULL) or in blocks of LANES (the last
    one partial); returns as _one, with the status of the earliest failing sample (or
    block) in status and that sample in status_at (kept across calls: whatever order a
    thread's spans come in).  With a ``stage`` (LANES samples of every output), the blocks
    write there, in the cache, and their outputs are streamed to ``out`` (not a failed
    block's)."""
    cdef const double* ins[MAX_INPUTS]
    cdef double* outs[MAX_OUTPUTS]
    cdef Py_ssize_t s, t, staged
    cdef int j, k, n, one, bad = 0
    if blk == NULL:
        for s in range(start, stop):
            one = 0
            bad |= _one(call, kern, nin, base, size, check, qmask, s, nout, out, out_size, work, &one)
            if one != 0 and (status[0] == 0 or s < status_at[0]):
                status[0] = one
                status_at[0] = s
        return bad
    s = start
    while s < stop:
        n = <int>(stop - s) if stop - s < LANES else LANES
        staged = 0
        for k in range(nout):
            if stage != NULL:
                outs[k] = stage + staged
                staged += LANES * out_size[k]
            else:
                outs[k] = out[k] + s * out_size[k]
        for k in range(nin):
            ins[k] = NULL if base[k] == NULL else base[k] + s * size[k]
            if check and base[k] != NULL:  # (the block's samples are consecutive: one scan)
                if any_nonfinite(ins[k], n * size[k]):
                    bad |= 1 << k
                elif qmask & (1 << k):
                    for t in range(n):
                        if zero_quaternion(call.m, ins[k] + t * size[k]):
                            bad |= 1 << k
        if (bad & ~OUTPUT_OVERFLOW) == 0:  # (a non-finite input: the driver raises, whatever the kernel
                                         # says; an overflow: a later block's status outranks it)
            k = blk(call, n, ins, size, outs, out_size, work)
            if k != 0 and (status[0] == 0 or s < status_at[0]):
                status[0] = k
                status_at[0] = s
            for j in range(nout):  # while the outputs are in the cache
                if stage != NULL and k != 0:
                    break  # (a failed block's stage is not copied: the call raises)
                if any_nonfinite(outs[j], n * out_size[j]):
                    bad |= OUTPUT_OVERFLOW
                if stage != NULL:
                    stream_copy(out[j] + s * out_size[j], outs[j], n * out_size[j])
        s += n
    if stage != NULL:
        stream_fence()
    return bad


cdef object _no_memory(const Call* call, Py_ssize_t doubles, object name):
    """The MemoryError of a scratch of ``doubles`` that malloc refused: what it was for and
    how large (an empty MemoryError says nothing on a model of 20,000 bodies)."""
    return MemoryError("%s on a model of %d bodies and %d dofs needs %.3g GB of scratch memory, which could "
                       "not be allocated" % (name or "rbd_c", call.m.nb, call.m.nv, doubles * 8.0 / 1e9))


cdef Py_ssize_t _first_failing(const Call* call, kernel_t kern, int nin, const double** base, const Py_ssize_t* size,
                               Py_ssize_t start, Py_ssize_t stop, int nout, const Py_ssize_t* out_size,
                               Py_ssize_t work_doubles, int* status, object name) except -1:
    """The first of samples start..stop-1 (a failed block's) whose one-sample kernel fails,
    its status in ``status`` (the error path only: the single call's error for that sample);
    ``start`` if none does (the block's status stands).  The outputs go to a scratch: the
    caller's out= keeps what the batch left there."""
    cdef const double* ins[MAX_INPUTS]
    cdef double* outs[MAX_OUTPUTS]
    cdef Py_ssize_t s, total = 0
    cdef int k, one
    for k in range(nout):
        total += out_size[k]
    cdef double* work = <double*>malloc((work_doubles + total + 1) * sizeof(double))
    if work == NULL:
        raise _no_memory(call, work_doubles + total + 1, name)
    try:
        outs[0] = work + work_doubles
        for k in range(1, nout):
            outs[k] = outs[k - 1] + out_size[k - 1]
        for s in range(start, stop):
            for k in range(nin):
                ins[k] = NULL if base[k] == NULL else base[k] + s * size[k]
            one = kern(call, ins, outs, work)
            if one != 0:
                status[0] = one
                return s
        return start
    finally:
        free(work)


cdef object _sample_copy(const double* base, Py_ssize_t size, Py_ssize_t s):
    """Sample s of a batched input (``size`` doubles a sample) as a new array."""
    cdef cnp.npy_intp n = size
    cdef cnp.ndarray x = cnp.PyArray_EMPTY(1, &n, cnp.NPY_DOUBLE, 0)
    memcpy(cnp.PyArray_DATA(x), base + s * size, size * sizeof(double))
    return x


cdef Py_ssize_t _stream_min = STREAM_MIN_DOUBLES


def _set_stream_min(Py_ssize_t doubles):
    """The doubles of a batch's outputs from which its blocks stream them (tests: 0 streams
    every batch with a block kernel); returns the previous threshold."""
    global _stream_min
    previous = _stream_min
    _stream_min = doubles
    return previous


@cython.boundscheck(False)
@cython.wraparound(False)
def size(constant=0, nb=0, nv=0, depth=0, nv_depth=0, nd2=0, nv2=0, rows=0, rows_nv=0, rows2=0, ancestors=0,
         levels=0):
    """The coefficients of a size that grows with the model and the call's contact rows
    (see ``Algorithm``)."""
    return (constant, nb, nv, depth, nv_depth, nd2, nv2, rows, rows_nv, rows2, ancestors, levels)


cdef void _set_size_terms(CModel* m) noexcept:
    """The terms of a size (see Algorithm) that depend on the model alone, once."""
    cdef Py_ssize_t* t = m.size_terms
    t[0], t[1], t[2], t[3] = 1, m.nb, m.nv, m.max_depth
    t[4], t[5], t[6] = <Py_ssize_t>m.nv * m.max_depth, m.nd2, <Py_ssize_t>m.nv * m.nv
    t[7], t[8], t[9] = 0, 0, 0  # (a call's contact rows: _evaluate_size)
    t[10], t[11] = m.nancestors, m.minv_levels


cdef int _set_size(Size* s, tuple coefficients) except -1:
    cdef int j
    if len(coefficients) != SIZE_TERMS:
        raise ValueError("rbd_c: a size has %d terms" % SIZE_TERMS)
    s.nterms = 0
    for j in range(SIZE_TERMS):
        s.c[j] = coefficients[j]
        if s.c[j]:
            s.nterms = j + 1
    return 0


cdef inline Py_ssize_t _evaluate_size(const Size* s, const Call* call) noexcept:
    cdef const Py_ssize_t* t = call.m.size_terms
    cdef const Py_ssize_t* c = s.c
    cdef Py_ssize_t r = call.nrows, total = 0
    cdef int j
    for j in range(s.nterms):
        total += c[j] * t[j]
    if r:
        total += c[7] * r + c[8] * r * call.m.nv + c[9] * r * r
    return total


cdef Algorithm algorithm(bytes inputs, tuple names, tuple outputs, kernel_t kernel, tuple scratch, tuple cost):
    """An ``Algorithm`` (see _model.pxd), checked: one name per input, few outputs."""
    if len(inputs) != len(names) or len(inputs) > MAX_INPUTS or not 1 <= len(outputs) <= MAX_OUTPUTS:
        raise ValueError("rbd_c: malformed algorithm description %r %r %r" % (inputs, names, outputs))
    cdef Algorithm alg = Algorithm.__new__(Algorithm)
    cdef int o, j
    alg.inputs, alg.names, alg.outputs = inputs, names, outputs
    alg.nout = len(outputs)
    for o in range(alg.nout):
        if len(outputs[o]) > 3:
            raise ValueError("rbd_c: an output has at most 3 per-sample dimensions")
        alg.ndims[o] = len(outputs[o])
        for j in range(alg.ndims[o]):
            alg.shapes[o][j] = outputs[o][j]
    alg.kernel = kernel
    alg.block = NULL
    _set_size(&alg.scratch, scratch)
    _set_size(&alg.cost, cost)
    return alg


cdef inline int _output_shape(const Call* call, const char* codes, int ndim, cnp.npy_intp* dims) noexcept:
    """The per-sample shape of an output from its codes; returns its ndim."""
    cdef const CModel* m = call.m
    cdef int j
    for j in range(ndim):
        if codes[j] == b'v':
            dims[j] = m.nv
        elif codes[j] == b'q':
            dims[j] = m.nq
        elif codes[j] == b'b':
            dims[j] = m.nb
        elif codes[j] == b'n':
            dims[j] = m.nframes
        elif codes[j] == b'c':
            dims[j] = call.nrows
        elif codes[j] == b'p':
            dims[j] = 10 * m.nb
        else:
            dims[j] = codes[j] - 48  # a digit
    return ndim


cdef object _run_coupled(object model, Call* call, Algorithm alg, tuple values, object out):
    """An algorithm on a model with mimic joints, through rbd._coupled (which runs it on
    the full model with the coordinates expanded, and brings its results back)."""
    import rbd_c
    from rbd import _coupled
    kwargs = {}
    if call.frame >= 0:  # a frame algorithm: its frame (and reference), as the public call takes them
        kwargs = {"frame": call.frame, "reference": ("local", "world", "local_world_aligned")[call.ref]}
    if alg.name is None:  # (the contact kernels: rbd.contacts runs mimic models through its composition)
        raise ValueError("this rbd_c kernel does not take a model with mimic joints: call it through rbd")
    result = _coupled.call(rbd_c, alg.name, model, values, kwargs)
    return result if out is None else checks_module().write_out(result, out, list(zip(alg.names, values)))


cdef object _refuse_out(object out, Algorithm alg, tuple values, int nbatch, const cnp.npy_intp* batch,
                        const int* ond, cnp.npy_intp odims[][4]):
    """Raise the shared error (rbd._checks.check_out) for an ``out=`` the driver cannot take."""
    shapes = [tuple([batch[j] for j in range(nbatch)] + [odims[o][j] for j in range(ond[o])])
              for o in range(alg.nout)]
    checks_module().check_out(out, shapes, list(zip(alg.names, values)))
    raise ValueError("out cannot be used for this call")  # (check_out accepts what the driver does)


cdef inline bint _overlap(const double* a, Py_ssize_t na, const double* b, Py_ssize_t nb) noexcept nogil:
    return a < b + nb and b < a + na


cdef inline int _exact_input(const CModel* m, char code, object x, const double** data,
                             Py_ssize_t* size) noexcept:
    """For an input (spec ``code``) that the driver reads in place, an exact float64
    C-contiguous ndarray whose last dimensions are the per-sample shape: its data, its
    per-sample size, and its number of batch dimensions as the result; -1 for anything
    else (the general path converts it, or raises the shared error)."""
    cdef Py_ssize_t tdims[2]
    cdef int tnd, andim
    cdef cnp.npy_intp* adims
    if not cnp.PyArray_CheckExact(x):
        return -1
    if cnp.PyArray_TYPE(<cnp.ndarray>x) != cnp.NPY_DOUBLE or not cnp.PyArray_ISCARRAY_RO(<cnp.ndarray>x):
        return -1
    tnd = <int>_trailing(m, code, tdims)
    andim = cnp.PyArray_NDIM(<cnp.ndarray>x)
    adims = cnp.PyArray_DIMS(<cnp.ndarray>x)
    if andim < tnd or adims[andim - 1] != tdims[tnd - 1] or (tnd == 2 and adims[andim - 2] != tdims[0]):
        return -1
    data[0] = <const double*>cnp.PyArray_DATA(<cnp.ndarray>x)
    size[0] = tdims[0] * (tdims[1] if tnd == 2 else 1)
    return andim - tnd


cdef object _MaskedArray = np.ma.MaskedArray


cdef inline bint _fits_out(object given, int ndim, const cnp.npy_intp* dims) noexcept:
    """Whether ``given`` can take a result of shape dims[:ndim] in place: an ndarray of
    exactly that shape, float64, C-contiguous, writeable, and not masked (its mask would be
    ignored)."""
    cdef int j
    if not cnp.PyArray_CheckExact(given) and isinstance(given, _MaskedArray):
        return False
    if not (cnp.PyArray_Check(given) and cnp.PyArray_TYPE(<cnp.ndarray>given) == cnp.NPY_DOUBLE
            and cnp.PyArray_ISCARRAY(<cnp.ndarray>given) and cnp.PyArray_NDIM(<cnp.ndarray>given) == ndim):
        return False
    for j in range(ndim):
        if cnp.PyArray_DIMS(<cnp.ndarray>given)[j] != dims[j]:
            return False
    return True


cdef Py_ssize_t _first_nonfinite(Py_ssize_t N, int nout, double** outp, const Py_ssize_t* osize) noexcept:
    """The first of N samples whose outputs hold an inf or NaN (N if none does)."""
    cdef Py_ssize_t s
    cdef int o
    for s in range(N):
        for o in range(nout):
            if any_nonfinite(outp[o] + s * osize[o], osize[o]):
                return s
    return N


# ---- a single call's small results, handed out again once dropped -----------------------
# NumPy's allocation and release of a small array (about 700 instructions, 1,400 past its
# 1 kB cache) cost as much as the Panda's forward kinematics.  Single calls keep their last
# few small results; one that its caller has since dropped (referenced from here alone, by
# no weak reference) and that is still a float64, C-contiguous, writeable array of the shape
# asked becomes the next result of that shape instead of a new array.  No one else can reach
# it, so no one sees it change; what shows is the extra reference to a result still held
# (sys.getrefcount).  Two spares per shape serve ``x = f(...)``
# in a loop (the old x is dropped after the call); a free-threaded Python keeps none.
cdef extern from *:
    """
    #define rbd_only_here(x) (RBD_SHARED_CACHES && Py_REFCNT(x) == 1 && (Py_TYPE(x)->tp_weaklistoffset == 0 \
        || *(PyObject**)((char*)(x) + Py_TYPE(x)->tp_weaklistoffset) == NULL))
    """
    bint rbd_only_here(PyObject* x) noexcept

cdef enum:
    SPARES = 8
    SPARE_MAX_DOUBLES = 4096   # 32 kB: larger results are allocated as ever

cdef PyObject* _spares[SPARES]
cdef int _spare_oldest = 0


cdef Py_ssize_t _forget_spares():
    """Drop the kept results; the bytes of those no caller held."""
    cdef PyObject* old
    cdef Py_ssize_t freed = 0
    cdef int k
    for k in range(SPARES):
        old = _spares[k]
        _spares[k] = NULL
        if old != NULL and rbd_only_here(old):
            freed += cnp.PyArray_NBYTES(<cnp.ndarray>old)
        Py_XDECREF(old)
    return freed


cdef cnp.ndarray _single_result(int ond, cnp.npy_intp* odims, Py_ssize_t size):
    """A single call's fresh output of shape odims[:ond] (``size`` doubles): a dropped spare
    of that shape, or a new array (kept as a spare, in place of the oldest, when small)."""
    global _spare_oldest
    cdef int k
    cdef PyObject* old
    cdef cnp.ndarray arr
    if size <= SPARE_MAX_DOUBLES:
        for k in range(SPARES):
            if _spares[k] != NULL and rbd_only_here(_spares[k]) and _fits_out(<object>_spares[k], ond, odims):
                return <cnp.ndarray>_spares[k]
    arr = cnp.PyArray_EMPTY(ond, odims, cnp.NPY_DOUBLE, 0)
    if size <= SPARE_MAX_DOUBLES:
        k = _spare_oldest
        _spare_oldest = (k + 1) % SPARES
        old = _spares[k]
        Py_INCREF(arr)
        _spares[k] = <PyObject*>arr
        Py_XDECREF(old)
    return arr


cdef object _NOT_ONE = object()  # _run_one's answer for a call it leaves to run's general path


cdef object _run_one(CompiledModel cm, Call* call, Algorithm alg, int nin, PyObject** values, object out):
    """The commonest call, on its own short path: one sample, every input an exact
    float64 C-contiguous ndarray of its per-sample shape, the outputs fresh or given
    (``out``: one array, or a tuple or list of one per output, each exactly its shape,
    float64, C-contiguous, overlapping no input and no other output).  Anything else, and
    any call that must raise (a non-finite input or output, a kernel's status, no memory
    for the scratch), is _NOT_ONE: run's general path takes it from the start (and raises
    the shared errors).  The same checks, in the same order, as the general path, without
    its batch, thread and conversion machinery: the driver's floor with ``out=`` 0.13 ->
    0.105 us (Panda); a call whose scratch outgrows the stack takes it from the heap, and
    one with more work than RELEASE_GIL_WORK runs without the GIL, as there."""
    cdef const CModel* m = &cm.m
    cdef const char* spec = alg.inputs
    cdef int nout = alg.nout, k, j, o, qmask = 0, status = 0, bad
    cdef const double* base[MAX_INPUTS]
    cdef Py_ssize_t size[MAX_INPUTS]
    cdef Py_ssize_t osize[MAX_OUTPUTS]
    cdef double* outp[MAX_OUTPUTS]
    cdef cnp.npy_intp odims[4]
    cdef int ond
    cdef cnp.ndarray arr
    cdef object x
    cdef double stackbuf[STACK_DOUBLES]
    cdef double* work = stackbuf
    cdef double scalar
    cdef Py_ssize_t work_doubles = _evaluate_size(&alg.scratch, call)
    cdef bint release = _evaluate_size(&alg.cost, call) >= RELEASE_GIL_WORK
    if nout > 1 and out is not None and not ((type(out) is tuple or type(out) is list) and len(out) == nout):
        return _NOT_ONE
    for k in range(nin):
        x = <object>values[k]
        if x is None:
            if spec[k] != b'f':
                return _NOT_ONE
            base[k] = NULL
            size[k] = 0
            continue
        if _exact_input(m, spec[k], x, &base[k], &size[k]) != 0:  # (a batch, or to convert)
            return _NOT_ONE
        if spec[k] == b'q':
            qmask |= 1 << k  # configurations: their quaternions are checked too
    cdef list several = [] if nout > 1 and out is None else None
    for o in range(nout):
        ond = _output_shape(call, alg.shapes[o], alg.ndims[o], odims)
        osize[o] = 1
        for j in range(ond):
            osize[o] *= odims[j]
        if out is None and ond == 0 and nout == 1:
            outp[0] = &scalar  # a scalar result: returned as a float, no array
            continue
        if out is None:
            arr = _single_result(ond, odims, osize[o])
            if several is not None:
                several.append(arr)
        else:
            x = out if nout == 1 else out[o]
            if not _fits_out(x, ond, odims):
                return _NOT_ONE
            arr = <cnp.ndarray>x
            for k in range(nin):
                if base[k] != NULL and _overlap(<double*>cnp.PyArray_DATA(arr), osize[o], base[k], size[k]):
                    return _NOT_ONE
            for j in range(o):
                if _overlap(<double*>cnp.PyArray_DATA(arr), osize[o], outp[j], osize[j]):
                    return _NOT_ONE
        outp[o] = <double*>cnp.PyArray_DATA(arr)
    if work_doubles > STACK_DOUBLES:
        work = <double*>malloc(work_doubles * sizeof(double))
        if work == NULL:
            return _NOT_ONE
    if release:
        with nogil:
            bad = _one(call, alg.kernel, nin, base, size, True, qmask, 0, nout, outp, osize, work, &status)
    else:
        bad = _one(call, alg.kernel, nin, base, size, True, qmask, 0, nout, outp, osize, work, &status)
    if work != stackbuf:
        free(work)
    if bad or status:
        return _NOT_ONE
    if nout > 1:
        return out if out is not None else tuple(several)
    if ond == 0 and out is None:
        return scalar  # a scalar result as a float (into a 0-d out=, the array)
    return arr


cdef object run(object model, CompiledModel cm, Call* call, Algorithm alg, tuple values, object out=None,
               object contacts=None):
    """Run ``alg`` on the arguments ``values`` (its inputs, in order) over their batch,
    into ``out`` when given; ``contacts`` (the contact kernels) are named in the error
    of a redundant set."""
    if cm.m.coupled:
        return _run_coupled(model, call, alg, values, out)
    cdef PyObject* inputs[MAX_INPUTS]
    cdef int k, nin = len(values)
    cdef object one = _NOT_ONE
    if nin <= MAX_INPUTS:
        for k in range(nin):
            inputs[k] = PyTuple_GET_ITEM(values, k)
        one = _run_one(cm, call, alg, nin, inputs, out)
    if one is not _NOT_ONE:
        return one
    return _named_run(model, cm, call, alg, values, out, contacts)


cdef object run_args(object model, CompiledModel cm, Call* call, Algorithm alg, object out, object x0,
                     object x1=None, object x2=None, object x3=None):
    """run with the inputs as arguments (the first len(alg.inputs) of x0 .. x3): a single
    call hands them to _run_one as they are (a tuple of them, made and freed on every
    call, was a fifth of the driver's floor); other calls get the tuple."""
    cdef PyObject* inputs[4]
    cdef int nin = len(alg.inputs)
    cdef object one
    if nin > 4:
        raise ValueError("rbd_c: run_args takes at most 4 inputs, %s has %d" % (alg.name, nin))
    if not cm.m.coupled:
        inputs[0] = <PyObject*>x0
        inputs[1] = <PyObject*>x1
        inputs[2] = <PyObject*>x2
        inputs[3] = <PyObject*>x3
        one = _run_one(cm, call, alg, nin, inputs, out)
        if one is not _NOT_ONE:
            return one
        return _named_run(model, cm, call, alg, (x0, x1, x2, x3)[:nin], out, None)
    return _run_coupled(model, call, alg, (x0, x1, x2, x3)[:nin], out)


cdef object _named_run(object model, CompiledModel cm, Call* call, Algorithm alg, tuple values, object out,
                       object contacts):
    """_run_general, whose MemoryError names the call, the model and the batch, as the NumPy
    backend's do (NumPy's own names only an array's shape: a batch's outputs or a converted
    input that cannot be allocated)."""
    cdef object name = alg.name or alg.label
    try:
        return _run_general(model, cm, call, alg, values, out, contacts)
    except MemoryError as exc:  # (its words kept, not it: its traceback holds the call's memory)
        detail = str(exc)
        if detail.startswith("%s on a model" % name):  # the driver's own: named already
            raise
    raise MemoryError("%s on a model of %d bodies and %d dofs%s ran out of memory (compiled backend%s)"
                      % (name, call.m.nb, call.m.nv, checks_module().batch_words(list(zip(alg.names, values))), ": " + detail if detail else ""))


cdef object _run_general(object model, CompiledModel cm, Call* call, Algorithm alg, tuple values, object out,
                         object contacts):
    """run's general path: batches, conversions, threads, and every error."""
    cdef const CModel* m = &cm.m
    cdef const char* spec = alg.inputs
    cdef tuple names = alg.names
    cdef kernel_t kern = alg.kernel
    cdef Py_ssize_t work_doubles = _evaluate_size(&alg.scratch, call)
    cdef Py_ssize_t cost = _evaluate_size(&alg.cost, call)
    cdef int nout = alg.nout, out_nd = 0, o
    cdef cnp.npy_intp odims[MAX_OUTPUTS][4]
    cdef int ond[MAX_OUTPUTS]
    cdef Py_ssize_t osize[MAX_OUTPUTS]
    cdef double* outp[MAX_OUTPUTS]
    for o in range(nout):
        ond[o] = _output_shape(call, alg.shapes[o], alg.ndims[o], odims[o])
        if ond[o] > out_nd:
            out_nd = ond[o]
    cdef int nin = len(values)
    cdef const double* base[MAX_INPUTS]
    cdef Py_ssize_t size[MAX_INPUTS]
    cdef Py_ssize_t tdims[2]
    cdef cnp.npy_intp dims[MAX_DIMS]
    cdef cnp.npy_intp* adims
    cdef int k, j, nt, tnd, nbatch = -1, xbatch, bad = 0, status = 0
    cdef bint fast = True, check = True
    cdef int qmask = 0
    cdef cnp.ndarray arr
    cdef object x
    cdef object keep = None
    cdef Py_ssize_t N = 1, s, wpad, chunk = 1, start, stop, step, csize, least
    cdef double begun, waited = 0.0, busy = 0.0
    cdef double caller_done[1]  # (an array: a name assigned in the prange below would be each thread's own)
    cdef Py_ssize_t* steps
    cdef double stackbuf[STACK_DOUBLES]
    cdef double* work = NULL
    cdef int* flags

    for k in range(nin):
        if spec[k] == b'q':
            qmask |= 1 << k  # configurations: their quaternions are checked too

    # ---- fast path: exact-shape float64 C-contiguous ndarrays ------------------------
    for k in range(nin):
        x = values[k]
        if x is None:
            if spec[k] != b'f':  # only fext may be absent: the reference names a missing array
                fast = False
                break
            base[k] = NULL
            size[k] = 0
            continue
        xbatch = _exact_input(m, spec[k], x, &base[k], &size[k])
        if xbatch < 0 or xbatch + out_nd > MAX_DIMS or xbatch > MAX_BATCH_DIMS:
            fast = False
            break
        adims = cnp.PyArray_DIMS(<cnp.ndarray>x)
        if nbatch < 0:
            nbatch = xbatch
            for j in range(nbatch):
                dims[j] = adims[j]
        elif xbatch != nbatch:
            fast = False
            break
        else:
            for j in range(nbatch):
                if dims[j] != adims[j]:
                    fast = False
                    break
            if not fast:
                break

    # ---- slow path: the shared validation, conversion and broadcasting ---------------
    if not fast:
        batch, arrays = _validate(model, names, values)
        keep = arrays
        check = False
        nbatch = len(batch)
        if nbatch + out_nd > MAX_DIMS:
            raise ValueError("too many batch dimensions")
        for j in range(nbatch):
            dims[j] = batch[j]
        for k in range(nin):
            x = arrays[k]
            if x is None:
                base[k] = NULL
                size[k] = 0
            else:
                arr = <cnp.ndarray>x
                base[k] = <const double*>cnp.PyArray_DATA(arr)
                tnd = <int>_trailing(m, spec[k], tdims)
                size[k] = tdims[0] * (tdims[1] if tnd == 2 else 1)
    if nbatch < 0:
        nbatch = 0

    for j in range(nbatch):
        N *= dims[j]
    cdef bint user_out = out is not None
    cdef list several = [] if nout > 1 and not user_out else None
    cdef object given
    cdef object handler = None
    cdef Py_ssize_t total = 0
    for o in range(nout):  # each output's doubles per sample
        osize[o] = 1
        for j in range(ond[o]):
            osize[o] *= odims[o][j]
        total += osize[o]
    if not user_out and N > 1 and N * total * <Py_ssize_t>sizeof(double) >= <Py_ssize_t>RBD_POOL_MIN:
        handler = PyDataMem_SetHandler(_output_pool)  # a batch's large fresh outputs: from the pool
    try:
        for o in range(nout):
            for j in range(ond[o]):
                dims[nbatch + j] = odims[o][j]
            if not user_out:
                arr = cnp.PyArray_EMPTY(nbatch + ond[o], dims, cnp.NPY_DOUBLE, 0)
            else:  # the caller's array: exactly the result's shape, float64, C-contiguous, writeable
                if nout == 1:
                    given = out
                elif (type(out) is tuple or type(out) is list) and len(out) == nout:
                    given = out[o]
                else:
                    given = None
                if not _fits_out(given, nbatch + ond[o], dims):
                    _refuse_out(out, alg, values, nbatch, dims, ond, odims)
                arr = <cnp.ndarray>given
            outp[o] = <double*>cnp.PyArray_DATA(arr)
            if several is not None:
                several.append(arr)
    finally:
        if handler is not None:
            PyDataMem_SetHandler(handler)
    if user_out:
        if not fast:  # the inputs were converted: the originals' memory is checked as the reference does
            checks_module().check_out(out, [(out if nout == 1 else out[o]).shape for o in range(nout)],
                                      list(zip(names, values)))
        for o in range(nout):  # no output may overlap an input or another output
            for k in range(nin):
                if fast and base[k] != NULL and _overlap(outp[o], N * osize[o], base[k], N * size[k]):
                    _refuse_out(out, alg, values, nbatch, dims, ond, odims)
            for j in range(o):
                if _overlap(outp[o], N * osize[o], outp[j], N * osize[j]):
                    _refuse_out(out, alg, values, nbatch, dims, ond, odims)
    else:
        out = arr if several is None else tuple(several)  # what the call returns
    if N == 0 or total == 0:
        # Nothing to write (e.g. a 0-dof model, no contacts): no loop over the samples,
        # which may be 2**40 empty ones; the inputs are still checked as the reference does.
        if N > 0 and fast:
            _validate(model, names, values)
        return out

    cdef block_kernel_t blk = alg.block if N > 1 and _simd_mode != 3 else NULL
    cdef Py_ssize_t block_doubles
    if blk != NULL:
        block_doubles = _evaluate_size(&alg.block_scratch, call)
        if ((block_doubles > BLOCK_SCRATCH_LIMIT and block_doubles > 2 * work_doubles)
                or (alg.lanes_limit > 0 and block_doubles > alg.lanes_limit)
                or (alg.lanes_depth > 0 and call.m.nancestors > alg.lanes_depth * call.m.nv)
                or alg.block_scratch.c[SIZE_NV2] * call.m.nv * call.m.nv + LANES * total > BLOCK_MATRICES_LIMIT):
            blk = NULL
        else:
            work_doubles = block_doubles
    # A batch's outputs far larger than the cache: each block writes them to a stage in
    # the cache, from which they are streamed to memory (written without being read:
    # batched crba on Talos, 20 kB a sample, ...).
    cdef Py_ssize_t stage_at = -1, status_sample = 0
    if blk != NULL and alg.stage_outputs and N * total >= _stream_min and LANES * total <= STAGE_MAX_DOUBLES:
        stage_at = (work_doubles + 7) & ~(<Py_ssize_t>7)
        work_doubles = stage_at + LANES * total
    if work_doubles < 1:
        work_doubles = 1
    nt = current_threads()
    if nt > N:
        nt = <int>N
    # Long batches run in chunks of about CHUNK_WORK, with a look at the signals
    # between chunks, so Ctrl-C interrupts within a fraction of a second.
    if N > 1:
        chunk = CHUNK_WORK // (cost if cost > 0 else 1)
        if chunk < LANES:
            chunk = LANES
        chunk -= chunk % LANES  # whole blocks (the last one partial)
    if nt > 1 and _serial_until > 0.0 and N * cost >= PARALLEL_WORK and _team_resting():
        nt = 1
    if N == 1 or nt <= 1 or N * cost < PARALLEL_WORK:
        # ---- one thread: scratch on the stack when it fits --------------------------
        if work_doubles <= STACK_DOUBLES:
            work = stackbuf
        else:
            work = <double*>malloc(work_doubles * sizeof(double))
            if work == NULL:
                raise _no_memory(call, work_doubles, alg.name or alg.label)
        try:
            if N * cost < RELEASE_GIL_WORK:
                bad = _span(call, kern, blk, nin, base, size, check, qmask, 0, N, nout, outp, osize, work,
                            NULL if stage_at < 0 else work + stage_at, &status, &status_sample)
            else:
                start = 0
                while start < N:
                    stop = min(start + chunk, N)
                    with nogil:
                        bad |= _span(call, kern, blk, nin, base, size, check, qmask, start, stop, nout, outp, osize,
                                     work, NULL if stage_at < 0 else work + stage_at, &status, &status_sample)
                    start = stop
                    if start < N:
                        PyErr_CheckSignals()  # raises KeyboardInterrupt after Ctrl-C
        finally:
            if work != stackbuf:
                free(work)
    else:
        # ---- OpenMP: one scratch and one flag word per thread -----------------------
        global _team_started
        _team_started = True
        wpad = (work_doubles + 7) & ~(<Py_ssize_t>7)
        work = <double*>malloc(nt * wpad * sizeof(double))
        flags = <int*>malloc(nt * 16 * sizeof(int))  # per thread, a cache line apart: error bits, status
        steps = <Py_ssize_t*>malloc(nt * 8 * sizeof(Py_ssize_t))  # and the steps it took
        if work == NULL or flags == NULL or steps == NULL:
            free(work)
            free(flags)
            free(steps)
            raise _no_memory(call, nt * wpad, alg.name or alg.label)
        memset(flags, 0, nt * 16 * sizeof(int))
        memset(steps, 0, nt * 8 * sizeof(Py_ssize_t))
        chunk *= nt
        step = LANES if blk != NULL else 1
        csize = 32 // step   # about 32 samples per hand-out
        try:
            start = 0
            while start < N:
                stop = min(start + chunk, N)
                begun = rbd_wtime()
                caller_done[0] = begun
                with nogil, parallel(num_threads=nt):
                    # steps of one sample, or of one block of LANES samples
                    for s in prange((stop - start + step - 1) // step, schedule='dynamic', chunksize=csize):
                        flags[16 * threadid()] |= _span(call, kern, blk, nin, base, size, check, qmask,
                                                        start + s * step, min(start + (s + 1) * step, stop),
                                                        nout, outp, osize, work + threadid() * wpad,
                                                        NULL if stage_at < 0 else work + threadid() * wpad + stage_at,
                                                        flags + 16 * threadid() + 1, steps + 8 * threadid() + 1)
                        steps[8 * threadid()] += 1
                        if threadid() == 0:  # (the calling thread: when it took its last step)
                            caller_done[0] = rbd_wtime()
                waited += rbd_wtime() - caller_done[0]
                busy += caller_done[0] - begun
                start = stop
                if start < N:
                    PyErr_CheckSignals()
            least = steps[0]
            for j in range(nt):  # (the status of the earliest failing sample of all threads)
                bad |= flags[16 * j]
                if flags[16 * j + 1] != 0 and (status == 0 or steps[8 * j + 1] < status_sample):
                    status = flags[16 * j + 1]
                    status_sample = steps[8 * j + 1]
                least = min(least, steps[8 * j])
            _note_team(least, (N + step - 1) // step, nt, waited, busy)
        finally:
            free(work)
            free(flags)
            free(steps)

    if bad & ~OUTPUT_OVERFLOW:
        _validate(model, names, values)  # raises the reference's error for the NaN/inf
        for k in range(nin):
            if bad & (1 << k):
                raise ValueError("%s must contain only finite numbers (found NaN or inf)" % names[k])
    if status:
        if blk != NULL:  # a block failed: its first failing sample, and that sample's own status
            status_sample = _first_failing(call, kern, nin, base, size, status_sample,
                                           min(status_sample + LANES, N), nout, osize,
                                           _evaluate_size(&alg.scratch, call), &status, alg.name or alg.label)
        sample = tuple(np.unravel_index(status_sample, [dims[j] for j in range(nbatch)])) if nbatch else None
        if status < 0:
            raise checks_module().redundant_contacts_error(model, contacts, call.regularization, sample)
        raise checks_module().singular_joint_error(model, status - 1,
                                                   _sample_copy(base[0], size[0], status_sample)
                                                   if nin and spec[0] == b'q' else None, sample)
    if bad & OUTPUT_OVERFLOW:
        sample = None
        if nbatch:  # the first sample with a non-finite output
            s = _first_nonfinite(N, nout, outp, osize)
            sample = tuple(np.unravel_index(s, [dims[j] for j in range(nbatch)]))
        raise checks_module().overflow_error(sample)
    if nout == 1 and nbatch == 0 and out_nd == 0 and not user_out:
        return outp[0][0]  # a scalar result as a float (into a 0-d out=, the array)
    return out


# ---- a probe of the driver's several outputs (used by the tests until an algorithm has them)
cdef int _k_probe(const Call* c, const double** ins, double** outs, double* work) noexcept nogil:
    """q to the first output, the sum of q to the second (a scalar per sample)."""
    cdef int j
    cdef double total = 0.0
    for j in range(c.m.nq):
        outs[0][j] = ins[0][j]
        total += ins[0][j]
    outs[1][0] = total
    return 0


cdef Algorithm _PROBE = algorithm(b"q", ("q",), (b"q", b""), _k_probe, size(), size(1))


def _driver_probe(model, q):
    """(q, sum of q) through the driver: the test of an algorithm with two outputs."""
    cdef Call call
    cdef CompiledModel cm = prepare_call(&call, model)
    return run(model, cm, &call, _PROBE, (q,))



# ---- rbd_c's own floor, by stage (compare.py --split; docs/performance.md) ----------------
cdef int _k_nothing(const Call* c, const double** ins, double** outs, double* work) noexcept nogil:
    outs[0][0] = 0.0
    return 0


cdef Algorithm _FLOOR = algorithm(b"q", ("q",), (b"1",), _k_nothing, size(), size(1))


def _call_floor(model, q, int stage=3, out=None):
    """What a compiled call costs before any arithmetic, one stage at a time: 0 returns
    once its arguments are parsed, 1 after the cached compiled model is looked up, 2 after
    the call is set up (gravity, no frame), 3 through the driver with a kernel that does
    nothing (one output of one double: allocated, or ``out``), 4 the bare minimum instead
    of the driver (q checked by hand, the kernel run into ``out``)."""
    cdef Call call
    cdef const double* ins[1]
    cdef double* outs[1]
    if stage == 0:
        return None
    if stage == 1:
        compiled(model)
        return None
    cdef CompiledModel cm = prepare_call(&call, model)
    if stage == 2:
        return None
    if stage == 4:
        if not (cnp.PyArray_CheckExact(q) and cnp.PyArray_TYPE(<cnp.ndarray>q) == cnp.NPY_DOUBLE
                and cnp.PyArray_ISCARRAY_RO(<cnp.ndarray>q) and cnp.PyArray_NDIM(<cnp.ndarray>q) == 1
                and cnp.PyArray_DIMS(<cnp.ndarray>q)[0] == cm.m.nq
                and cnp.PyArray_Check(out) and cnp.PyArray_TYPE(<cnp.ndarray>out) == cnp.NPY_DOUBLE
                and cnp.PyArray_ISCARRAY(<cnp.ndarray>out) and cnp.PyArray_SIZE(<cnp.ndarray>out) == 1):
            raise ValueError("_call_floor stage 4 takes a float64 q of shape (nq,) and an out of one double")
        ins[0] = <const double*>cnp.PyArray_DATA(<cnp.ndarray>q)
        outs[0] = <double*>cnp.PyArray_DATA(<cnp.ndarray>out)
        _k_nothing(&call, ins, outs, NULL)
        return out
    return run_args(model, cm, &call, _FLOOR, out, q)
