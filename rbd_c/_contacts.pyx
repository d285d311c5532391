# cython: language_level=3
"""Compiled dynamics with rigid contacts: the contact Jacobian, constrained dynamics
and impulses, and the joint torque regressor (the equations, and the reference, are
in ``rbd.contacts``).

The contacts are resolved in Python (``rbd.contacts``: the checks and their errors)
into a table of frame, body, dim, axes and first row (``Call.contacts``), the same for
the whole batch, before the kernels run.  Each sample then uses the tree's structure:

* M is factored as M = L^T D L along the tree, without forming it (``_factor.pxd``: no
  fill-in; D holds the articulated pivots, kept as D^-1, so a singular model fails
  here as it fails in ``aba``), L packed: one number per dof and ancestor, memory
  n x depth, not nv^2;
* M^-1 = L^-1 D^-1 L^-T: L^-T x only carries entries from each dof to its ancestors
  (``packed_up``), so Y = L^-T J^T stays on the contacts' chains, and K = J M^-1 J^T =
  Y^T D^-1 Y; L^-1 (``packed_down``) comes back down once, for the solution;
* K (+ r 1) is factored by Cholesky, with the reference's test for redundant rows.
"""
cimport cython
from libc.math cimport sqrt, fabs
from libc.float cimport DBL_MAX
from libc.string cimport memset, memcpy

cimport numpy as cnp
import numpy as np

cnp.import_array()

from rbd_c._kernels cimport inv_act_motion, act_force, motion_cross, inertia_apply, inertia_cross_term, dot_rows
from rbd_c._model cimport (CModel, Call, CompiledModel, prepare_call, run, Algorithm, algorithm, REF_LWA, REF_LOCAL,
                           CONTACT_FRAME, CONTACT_BODY, CONTACT_DIM, CONTACT_REF, CONTACT_ROW, CONTACT_FIELDS,
                           kernel_t, set_block, LANES, need_ancestors)
from rbd_c._model import size
from rbd_c._passes cimport (world_placements, world_columns, child_placement, child_twist, world_column, add6,
                            sub6, dot6, gravity_acceleration, shift_to_frame)
from rbd_c._joints cimport loop_placement, SINCOS_BLOCK, joint_motion_add
from rbd_c._dynamics cimport crba_world_terms, CRBA_PER_BODY, CRBA_OM, CRBA_YC
from rbd_c._lanes cimport (rbd_lanes_model, rbd_lanes_contacts, rbd_lanes_set, rbd_lanes_best, lanes_model,
                           lanes_tables, lanes_set, lanes_placements, lanes_in, rbd_lanes_scatter, one_by_one,
                           rbd_rank_probe)
from rbd_c._factor cimport (articulated_ltdl_packed, chain_dot, chain_axpy, packed_up, packed_down, packed_row_axpy,
                            LTDL_PER_BODY)

cdef double CONTACT_RANK_TOLERANCE = 1e-12  # as rbd._checks.CONTACT_RANK_TOLERANCE (a test keeps them equal)
cdef enum:
    CHOLESKY_PANEL = 64  # columns of the contact Cholesky's panels (64 rows of 3,000: 1.5 MB, in the cache)


# ==========================================================================================
# The contact rows
# ==========================================================================================
cdef void _contact_rows(const Call* c, const double* oM, const double* S, const double* V, const double* A,
                        double* J, double* gamma) noexcept nogil:
    """J (nrows x nv) and, when the bodies' twists V and accelerations A are given,
    gamma (nrows): each contact's rows of its frame's local Jacobian, and its held
    acceleration at q_ddot = 0 (the frame's spatial acceleration for a flat contact, the
    classical acceleration of its origin for a point one), in the contact's axes.

    oM: the world placements of every body (16 each); S: the world column of every dof
    (6 each, a twist at the world origin, as CRBA's); V, A: the bodies' twists and
    accelerations at q_ddot = 0 in world axes at the world origin (6 each), A with
    gravity as the world's acceleration (taken off here).  A world motion [v; w] seen at
    the frame's origin p is [v + w x p; w]: that in world axes (local_world_aligned), or
    turned by R^T (local).  The classical acceleration of the origin adds w x (its
    velocity)."""
    cdef const CModel* m = c.m
    cdef int nv = m.nv, k, t, r, dim, row, body, ref
    cdef const int* contact
    cdef const double* bMf
    cdef const double* w
    cdef double oMf[16]
    cdef double vp[6]
    cdef double a[6]
    memset(J, 0, c.nrows * nv * sizeof(double))
    if V != NULL:
        memset(gamma, 0, c.nrows * sizeof(double))
    for k in range(c.ncontacts):
        contact = c.contacts + CONTACT_FIELDS * k
        dim = contact[CONTACT_DIM]
        row = contact[CONTACT_ROW]
        body = contact[CONTACT_BODY]
        ref = contact[CONTACT_REF]
        if body < 0:
            continue  # on the world: nothing moves it
        bMf = m.frame_offsets + 16 * contact[CONTACT_FRAME]
        child_placement(oM + 16 * body, bMf, oMf)
        t = m.v_idx[body] + m.nvj[body] - 1
        while t >= 0:  # the dofs that move the body
            _at_frame(ref, dim, oMf, S + 6 * t, J + row * nv + t, nv)
            t = m.dof_parents[t]
        if V == NULL:
            continue
        memcpy(a, A + 6 * body, 6 * sizeof(double))
        a[0] += c.g[0]; a[1] += c.g[1]; a[2] += c.g[2]  # gravity off
        if dim == 3:  # + w x (v + w x p), the origin's velocity
            w = V + 6 * body
            shift_to_frame(oMf, w, vp)
            a[0] += w[4] * vp[2] - w[5] * vp[1]
            a[1] += w[5] * vp[0] - w[3] * vp[2]
            a[2] += w[3] * vp[1] - w[4] * vp[0]
        _at_frame(ref, dim, oMf, a, gamma + row, 1)


cdef inline void _at_frame(int ref, int dim, const double* oMf, const double* w, double* out,
                           int stride) noexcept nogil:
    """out[r * stride] (r < dim): the world motion w (at the world origin) seen at the
    frame's origin p, [v + w x p; w], in world axes (ref local_world_aligned) or the
    frame's (local: turned by R^T)."""
    cdef double lin[6]
    cdef int r
    shift_to_frame(oMf, w, lin)
    if ref == REF_LWA:
        for r in range(3):
            out[r * stride] = lin[r]
        if dim == 6:
            for r in range(3):
                out[(3 + r) * stride] = w[3 + r]
    else:
        for r in range(3):
            out[r * stride] = oMf[r] * lin[0] + oMf[4 + r] * lin[1] + oMf[8 + r] * lin[2]
        if dim == 6:
            for r in range(3):
                out[(3 + r) * stride] = oMf[r] * w[3] + oMf[4 + r] * w[4] + oMf[8 + r] * w[5]


cdef void _world_bias(const Call* c, const double* oM, const double* Yw, const double* S, const double* v,
                      const double* fext, double* V, double* A, double* F, double* h) noexcept nogil:
    """h = rnea(q, v, 0, fext) by Newton-Euler in world axes (every motion and force at
    the world origin), from CRBA's world placements oM, body inertias Yw and world
    columns S: no transform per body, forces add up the tree as they are.  Leaves the
    bodies' twists V and accelerations A (gravity as the world's acceleration)."""
    cdef const CModel* m = c.m
    cdef int nb = m.nb, i, p, col, d, k
    cdef double vJ[6]
    cdef double t[6]
    for i in range(nb):
        p = m.parents[i]
        memset(vJ, 0, 6 * sizeof(double))
        for col in range(m.nvj[i]):
            d = m.v_idx[i] + col
            for k in range(6):
                vJ[k] += S[6 * d + k] * v[d]
        if p >= 0:
            memcpy(A + 6 * i, A + 6 * p, 6 * sizeof(double))
            motion_cross(V + 6 * p, vJ, t)  # the joint's velocity-product acceleration, v x vJ
            add6(A + 6 * i, t)              # (the parent's v: (v_p + vJ) x vJ without the sum's rounding)
            memcpy(V + 6 * i, V + 6 * p, 6 * sizeof(double))
            add6(V + 6 * i, vJ)
        else:
            memcpy(V + 6 * i, vJ, 6 * sizeof(double))
            gravity_acceleration(c, A + 6 * i)
        inertia_apply(Yw + 10 * i, A + 6 * i, F + 6 * i)
        inertia_cross_term(Yw + 10 * i, V + 6 * i, t)
        add6(F + 6 * i, t)
        if fext != NULL:  # fext in body axes, taken to the world's
            act_force(oM + 16 * i, fext + 6 * i, t)
            sub6(F + 6 * i, t)
    for i in range(nb - 1, -1, -1):
        for col in range(m.nvj[i]):
            d = m.v_idx[i] + col
            h[d] = dot6(S + 6 * d, F + 6 * i)
        p = m.parents[i]
        if p >= 0:
            add6(F + 6 * p, F + 6 * i)


# ==========================================================================================
# Solves with M = L^T D L (L packed, D^-1 in dinv; the single-vector solves are
# _factor's packed_up and packed_down)
# ==========================================================================================
cdef void _up_rows(const CModel* m, const double* L, double* Y, int nrows, int last) noexcept nogil:
    """Each of the nrows rows of Y (a contact's, zero off the chain ending at dof
    ``last``) <- L^-T row: ``packed_up`` on that chain, for the rows together."""
    cdef int k = last
    while k >= 0:
        packed_row_axpy(m, k, nrows, L, Y, m.nv)
        k = m.dof_parents[k]


cdef inline int _common_dof(const CModel* m, int a, int b) noexcept nogil:
    """The last dof on both dof a's and dof b's chains (-1: none); a dof's ancestors come
    before it."""
    while a != b:
        if a > b:
            a = m.dof_parents[a]
        else:
            b = m.dof_parents[b]
    return a


cdef void _row_chains(const Call* c, int* last) noexcept nogil:
    """last[r]: the last dof of the chain that moves constraint row r (its contact's
    body's last dof; -1 for a frame on the world).  The row of J, and of Y = (L^-T
    J^T)^T, is zero off that chain."""
    cdef int k, r, body, dof
    for k in range(c.ncontacts):
        body = c.contacts[CONTACT_FIELDS * k + CONTACT_BODY]
        dof = c.m.v_idx[body] + c.m.nvj[body] - 1 if body >= 0 else -1
        for r in range(c.contacts[CONTACT_FIELDS * k + CONTACT_DIM]):
            last[c.contacts[CONTACT_FIELDS * k + CONTACT_ROW] + r] = dof


cdef void _contact_inertia(const Call* c, const double* L, const double* dinv, double* Y, double* W,
                           const int* last, double* K) noexcept nogil:
    """With the rows of J in Y (nrows x nv): Y <- (L^-T J^T)^T, W = Y D^-1 (rows zero off
    their chains, as Y's) and K = W Y^T (lower triangle) = J M^-1 J^T, each entry summed
    over the chain its two rows share."""
    cdef const CModel* m = c.m
    cdef int nv = m.nv, n = c.nrows, r, s, k, t
    for k in range(c.ncontacts):
        r = c.contacts[CONTACT_FIELDS * k + CONTACT_ROW]
        _up_rows(m, L, Y + r * nv, c.contacts[CONTACT_FIELDS * k + CONTACT_DIM], last[r])
    for r in range(n):
        memset(W + r * nv, 0, nv * sizeof(double))
        k = last[r]
        while k >= 0:
            s = m.dof_run_start[k]
            for t in range(s, k + 1):
                W[r * nv + t] = Y[r * nv + t] * dinv[t]
            k = m.dof_parents[s]
    cdef int a, b, ra, rb, common
    for a in range(c.ncontacts):  # by pairs of contacts: a row pair shares its contacts' common chain
        ra = c.contacts[CONTACT_FIELDS * a + CONTACT_ROW]
        for b in range(a + 1):
            rb = c.contacts[CONTACT_FIELDS * b + CONTACT_ROW]
            common = _common_dof(m, last[ra], last[rb])
            for r in range(ra, ra + c.contacts[CONTACT_FIELDS * a + CONTACT_DIM]):
                for s in range(rb, min(r + 1, rb + c.contacts[CONTACT_FIELDS * b + CONTACT_DIM])):
                    K[r * n + s] = chain_dot(m, common, W + r * nv, Y + s * nv)


@cython.cdivision(True)
cdef int _contact_solve(const Call* c, double* K, double* b, double* probe) noexcept nogil:
    """b <- (K + r 1)^-1 b by Cholesky (K's lower triangle then holds the factor, its
    diagonal inverted), in panels of CHOLESKY_PANEL columns: each panel first takes the
    earlier columns' share for all its rows at once (the rows are read once per panel,
    not once per column: 3,000 rows no longer stream the matrix from memory 3,000 times).
    Returns -1 when the system's smallest eigenvalue is at most CONTACT_RANK_TOLERANCE of
    K's largest entry (at least 1), as a pivot or the growth of rbd_rank_probe under K^-1
    (``probe``: n doubles of scratch) tells: the contacts are redundant (the reference's
    test, rbd.contacts._deficient), else 0."""
    cdef int n = c.nrows, r, s, j0, j1, top
    cdef double pivot, largest = 1.0, probe_norm = 0.0, stretched_norm = 0.0
    for r in range(n):
        K[r * n + r] += c.regularization
        for s in range(r + 1):
            if fabs(K[r * n + s]) > largest:
                largest = fabs(K[r * n + s])
    j0 = 0
    while j0 < n:
        j1 = min(j0 + CHOLESKY_PANEL, n)
        for s in range(j0, n):  # the panel's columns, less the earlier columns' share
            top = min(j1, s + 1)
            for r in range(j0, top):
                K[s * n + r] -= dot_rows(K + s * n, K + r * n, j0)
        for r in range(j0, j1):  # then the panel's own columns, one after the other
            pivot = K[r * n + r] - dot_rows(K + r * n + j0, K + r * n + j0, r - j0)
            if not pivot > CONTACT_RANK_TOLERANCE * largest:  # (NaN included)
                return -1
            pivot = 1.0 / sqrt(pivot)
            K[r * n + r] = pivot                    # the factor's diagonal, inverted
            for s in range(r + 1, n):
                K[s * n + r] = (K[s * n + r] - dot_rows(K + s * n + j0, K + r * n + j0, r - j0)) * pivot
        j0 = j1
    for r in range(n):
        probe[r] = rbd_rank_probe(r)
        probe_norm += probe[r] * probe[r]
    _factor_solve(K, n, probe)
    for r in range(n):
        stretched_norm += probe[r] * probe[r]
    if n and not sqrt(probe_norm) > CONTACT_RANK_TOLERANCE * largest * sqrt(stretched_norm):
        return -1
    _factor_solve(K, n, b)
    return 0


cdef inline void _factor_solve(const double* K, int n, double* b) noexcept nogil:
    """b <- (L L^T)^-1 b with _contact_solve's factor L (its diagonal inverted)."""
    cdef int r, k
    cdef double x
    for r in range(n):  # L y = b, row by row
        b[r] = (b[r] - dot_rows(K + r * n, b, r)) * K[r * n + r]
    for r in range(n - 1, -1, -1):  # L^T x = y: each x_r, once known, leaves the rows above
        b[r] *= K[r * n + r]
        x = b[r]
        for k in range(r):
            b[k] -= K[r * n + k] * x


cdef void _apply_inverse_mass(const Call* c, const double* L, const double* dinv, const double* W,
                              const int* last, const double* forces, double* x) noexcept nogil:
    """x <- M^-1 (L^T x + J^T forces) = L^-1 (D^-1 x + W^T forces): x holds L^-T of a
    generalized force, W = D^-1 L^-T J^T (as rows)."""
    cdef const CModel* m = c.m
    cdef int nv = m.nv, r, k
    for k in range(nv):
        x[k] *= dinv[k]
    for r in range(c.nrows):
        chain_axpy(m, last[r], forces[r], W + r * nv, x)
    packed_down(m, L, x)


cdef inline int _factor(const CModel* m, const double* crba_work, double* IA, double* L, double* dinv) noexcept nogil:
    """M = L^T D L, packed into L (m.nancestors numbers) and D^-1 into dinv, from CRBA's
    world terms in crba_work (articulated_ltdl_packed; IA: LTDL_PER_BODY doubles per
    body); 1 + the body whose pivot is singular, else 0."""
    cdef int status = articulated_ltdl_packed(m, crba_work + CRBA_YC * m.nb, 10, crba_work + CRBA_PER_BODY * m.nb, 6,
                                              IA, L, dinv)
    if status:
        return 1 + m.dof_bodies[status - 1]
    return 0


# ==========================================================================================
# The kernels
# ==========================================================================================
cdef int k_contact_jacobian(const Call* c, const double** ins, double** outs, double* work) noexcept nogil:
    cdef double* S = work + 16 * c.m.nb
    world_placements(c.m, ins[0], work, True)
    world_columns(c.m, work, S)
    _contact_rows(c, work, S, NULL, NULL, outs[0], NULL)
    return 0


cdef int k_constrained_dynamics(const Call* c, const double** ins, double** outs, double* work) noexcept nogil:
    """M q_ddot + h = tau + J^T lambda with J q_ddot + gamma = 0: with y = L^-T (tau - h),
    (K + r 1) lambda = -gamma - W y and q_ddot = L^-1 (D^-1 y + W^T lambda).
    One pass of placements serves CRBA, h (Newton-Euler in world axes, on CRBA's world
    inertias and columns) and the contact rows (CRBA's world columns, the bias pass's
    twists and accelerations)."""
    cdef const CModel* m = c.m
    cdef int nv = m.nv, nb = m.nb, n = c.nrows, k, r, status
    cdef double* qdd = outs[0]
    cdef double* forces = outs[1]
    cdef double* L = work
    cdef double* dinv = L + m.nancestors             # (L: the factor, packed)
    cdef double* Y = dinv + nv
    cdef double* W = Y + n * nv
    cdef double* K = W + n * nv
    cdef double* gamma = K + n * n
    cdef int* last = <int*>(gamma + n)              # the rows' chains (n ints in n doubles)
    cdef double* crba_work = gamma + 2 * n
    cdef double* oM = crba_work + CRBA_OM * nb
    cdef double* S = crba_work + CRBA_PER_BODY * nb
    cdef double* V = S + 6 * nv                     # the world bias pass: twists, accelerations, forces
    cdef double* A = V + 6 * nb
    cdef double* F = A + 6 * nb
    cdef double* IA = F + 6 * nb                    # the factor's articulated inertias
    world_placements(m, ins[0], oM, True)
    crba_world_terms(m, crba_work)
    _world_bias(c, oM, crba_work + CRBA_YC * nb, S, ins[1], ins[3], V, A, F, qdd)  # h, in q_ddot's place
    status = _factor(m, crba_work, IA, L, dinv)
    if status:
        return status
    for k in range(nv):
        qdd[k] = ins[2][k] - qdd[k]
    _contact_rows(c, oM, S, V, A, Y, gamma)
    _row_chains(c, last)
    packed_up(m, L, qdd)
    _contact_inertia(c, L, dinv, Y, W, last, K)
    for r in range(n):
        forces[r] = -gamma[r] - chain_dot(m, last[r], W + r * nv, qdd)
    status = _contact_solve(c, K, forces, gamma)  # (gamma is spent: the probe's room)
    if status:
        return status
    _apply_inverse_mass(c, L, dinv, W, last, forces, qdd)
    return 0


cdef int k_impulse_dynamics(const Call* c, const double** ins, double** outs, double* work) noexcept nogil:
    """M (v+ - v) = J^T Lambda with J v+ = -e J v: (K + r 1) Lambda = -(1 + e) J v and
    v+ = v + L^-1 W^T Lambda."""
    cdef const CModel* m = c.m
    cdef int nv = m.nv, n = c.nrows, k, r, status
    cdef double* v_after = outs[0]
    cdef double* impulses = outs[1]
    cdef double* L = work
    cdef double* dinv = L + m.nancestors             # (L: the factor, packed)
    cdef double* Y = dinv + nv
    cdef double* W = Y + n * nv
    cdef double* K = W + n * nv
    cdef int* last = <int*>(K + n * n)              # the rows' chains (n ints in n doubles)
    cdef double* probe = K + n * n + n              # _contact_solve's
    cdef double* rest = probe + n
    world_placements(m, ins[0], rest + CRBA_OM * m.nb, True)
    crba_world_terms(m, rest)
    status = _factor(m, rest, rest + CRBA_PER_BODY * m.nb + 6 * nv, L, dinv)
    if status:
        return status
    _contact_rows(c, rest + CRBA_OM * m.nb, rest + CRBA_PER_BODY * m.nb, NULL, NULL, Y, NULL)
    _row_chains(c, last)
    for r in range(n):
        impulses[r] = -(1.0 + c.restitution) * chain_dot(m, last[r], Y + r * nv, ins[1])
    _contact_inertia(c, L, dinv, Y, W, last, K)
    status = _contact_solve(c, K, impulses, probe)
    if status:
        return status
    memset(v_after, 0, nv * sizeof(double))
    _apply_inverse_mass(c, L, dinv, W, last, impulses, v_after)
    for k in range(nv):
        v_after[k] += ins[1][k]
    return 0


# ==========================================================================================
# Joint torque regressor
# ==========================================================================================
# The symmetric unit matrices of the public inertia parameters Ixx, Ixy, Iyy, Ixz, Iyz, Izz
# (rbd.contacts' parameter order: Y @ inertial_parameters = rnea, tested): row, column.
cdef int INERTIA_ENTRIES[6][2]
INERTIA_ENTRIES[:] = [[0, 0], [0, 1], [1, 1], [0, 2], [1, 2], [2, 2]]

# Scratch of the regressor per body: world placement, twist, acceleration (body frame).
cdef enum:
    REG_OM = 0
    REG_V = 16
    REG_A = 22
    REG_PER_BODY = 28


cdef inline void _cross3(const double* a, const double* b, double* out) noexcept nogil:
    out[0] = a[1] * b[2] - a[2] * b[1]
    out[1] = a[2] * b[0] - a[0] * b[2]
    out[2] = a[0] * b[1] - a[1] * b[0]


cdef void _parameter_forces(const double* V, const double* A, double* block) noexcept nogil:
    """The force Y a + v x* (Y v) of a body with twist V = [v; w] and acceleration
    A = [a; alpha] (body frame) for the unit inertia of each parameter, 10 x 6: with
    beta = a + w x v (the origin's classical acceleration),
    m: [beta; 0],  h = e_k: [alpha x e_k + w x (w x e_k); e_k x beta],
    the inertia entry E: [0; E alpha + w x (E w)]."""
    cdef const double* w = V + 3
    cdef const double* alpha = A + 3
    cdef double beta[3]
    cdef double e[3]
    cdef double t[3]
    cdef double Ea[3]
    cdef double Ew[3]
    cdef double* f
    cdef int k, r, i, j
    _cross3(w, V, beta)
    for r in range(3):
        beta[r] += A[r]
        block[r] = beta[r]
        block[3 + r] = 0.0
    for k in range(3):
        f = block + 6 * (1 + k)
        e[0] = 0.0; e[1] = 0.0; e[2] = 0.0
        e[k] = 1.0
        _cross3(alpha, e, f)
        _cross3(w, e, t)
        _cross3(w, t, e)
        for r in range(3):
            f[r] += e[r]
        e[0] = 0.0; e[1] = 0.0; e[2] = 0.0
        e[k] = 1.0
        _cross3(e, beta, f + 3)
    for k in range(6):
        f = block + 6 * (4 + k)
        i = INERTIA_ENTRIES[k][0]
        j = INERTIA_ENTRIES[k][1]
        for r in range(3):
            Ea[r] = 0.0
            Ew[r] = 0.0
            f[r] = 0.0
        Ea[i] = alpha[j]
        Ew[i] = w[j]
        if i != j:
            Ea[j] = alpha[i]
            Ew[j] = w[i]
        _cross3(w, Ew, f + 3)
        for r in range(3):
            f[3 + r] += Ea[r]


cdef inline void _row_times(const double* s, const double* W, double* out) noexcept nogil:
    """out[0:10] = s^T W for a 6-vector s and a 6 x 10 W (a row of the regressor)."""
    cdef int col
    for col in range(10):
        out[col] = (s[0] * W[col] + s[1] * W[10 + col] + s[2] * W[20 + col] + s[3] * W[30 + col]
                    + s[4] * W[40 + col] + s[5] * W[50 + col])


cdef int k_regressor(const Call* c, const double** ins, double** outs, double* work) noexcept nogil:
    """Y (nv x 10 nb) with Y pi = rnea.  RNEA's forward pass (gravity as the world's
    acceleration) gives each body's twist and acceleration, and ``_parameter_forces``
    its force per unit parameter; that block is taken to world axes once, and each
    ancestor i's rows are dot products with its world columns (S_i^T X*_ij f =
    (Ad S_i)^T (Ad* f)), with no transform per ancestor."""
    cdef double* Y = outs[0]
    cdef const CModel* m = c.m
    cdef const double* q = ins[0]
    cdef const double* v = ins[1]
    cdef const double* a = ins[2]
    cdef int nb = m.nb, nv = m.nv, ncols = 10 * m.nb, i, j, p, col, r
    cdef double* S = work + REG_PER_BODY * nb       # world columns, 6 per dof
    cdef double* block = S + 6 * nv                  # 10 forces of 6
    cdef double* world = block + 60                  # the same in world axes, 6 x 10
    cdef double* B
    cdef double* P
    cdef double Xl[16]
    cdef double a0[6]
    cdef double vJ[6]
    cdef double t[6]
    gravity_acceleration(c, a0)
    memset(Y, 0, nv * ncols * sizeof(double))
    cdef double sn[SINCOS_BLOCK]
    cdef double cs[SINCOS_BLOCK]
    for j in range(nb):
        B = work + REG_PER_BODY * j
        p = m.parents[j]
        P = work + REG_PER_BODY * p if p >= 0 else NULL
        loop_placement(m, j, q, sn, cs, Xl)
        child_placement(P + REG_OM if p >= 0 else NULL, Xl, B + REG_OM)
        child_twist(m, j, Xl, v, P + REG_V if p >= 0 else NULL, vJ, B + REG_V)
        inv_act_motion(Xl, P + REG_A if p >= 0 else a0, B + REG_A)
        motion_cross(B + REG_V, vJ, t)
        add6(B + REG_A, t)
        joint_motion_add(m, j, a + m.v_idx[j], B + REG_A)
        for col in range(m.nvj[j]):
            world_column(m, j, col, B + REG_OM, S + 6 * (m.v_idx[j] + col))
        _parameter_forces(B + REG_V, B + REG_A, block)
        for col in range(10):  # in world axes, transposed: 6 rows of the 10 parameters
            act_force(B + REG_OM, block + 6 * col, t)
            for r in range(6):
                world[10 * r + col] = t[r]
        i = j
        while i >= 0:
            for r in range(m.v_idx[i], m.v_idx[i] + m.nvj[i]):
                _row_times(S + 6 * r, world, Y + r * ncols + 10 * j)
            i = m.parents[i]
    return 0


# ==========================================================================================
# Blocks of samples in SIMD lanes (batches; rbd_c/_lanes.h)
# ==========================================================================================
lanes_tables()
cdef int _best = rbd_lanes_best()


cdef int _contacts_block(kernel_t kernel, const Call* c, int n, const double** ins, const Py_ssize_t* size,
                         double** outs, const Py_ssize_t* osize, double* work) noexcept nogil:
    """Constrained dynamics (ins: q, v, tau, fext) or impulses (ins: q, v; kernel
    k_impulse_dynamics) on a block: rbd_contacts_lanes, or, when a lane's pivot fails
    (a singular model, redundant contacts), one sample at a time, whose errors are the
    single calls'."""
    cdef const CModel* m = c.m
    cdef rbd_lanes_model lm
    cdef rbd_lanes_contacts lc
    cdef Py_ssize_t nb = m.nb, nv = m.nv, rows = c.nrows
    cdef bint impulse = kernel == k_impulse_dynamics
    cdef double* X = work
    cdef double* Q = X + 12 * LANES * nb        # q (nq <= nb + nv rows)
    cdef double* v = Q + LANES * (nb + nv)
    cdef double* tau = v + LANES * nv
    cdef double* fext = tau + LANES * nv        # (6 rows per body)
    cdef double* x = fext + 6 * LANES * nb      # q_ddot or v after the impact
    cdef double* f = x + LANES * nv             # the contact rows' forces or impulses
    cdef double* rest = f + LANES * rows
    cdef const rbd_lanes_set* ks = lanes_set(_best)
    lanes_model(m, &lm)
    lc.table, lc.ncontacts, lc.nrows, lc.frame_offsets = c.contacts, c.ncontacts, c.nrows, m.frame_offsets
    lc.regularization, lc.restitution, lc.rank_tol = c.regularization, c.restitution, CONTACT_RANK_TOLERANCE
    lanes_placements(ks, &lm, m, n, ins[0], size[0], X, Q)
    lanes_in(n, ins[1], nv, v)
    if ks.contacts(&lm, &lc, c.g, X, v, NULL if impulse else lanes_in(n, ins[2], nv, tau),
                   NULL if impulse else lanes_in(n, ins[3], 6 * nb, fext), x, f, rest) == 0:
        rbd_lanes_scatter(n, x, nv, outs[0], osize[0])
        rbd_lanes_scatter(n, f, rows, outs[1], osize[1])
        return 0
    return one_by_one(kernel, c, n, 2 if impulse else 4, ins, size, 2, outs, osize, work)


cdef int kb_constrained_dynamics(const Call* c, int n, const double** ins, const Py_ssize_t* size, double** outs,
                                 const Py_ssize_t* osize, double* work) noexcept nogil:
    return _contacts_block(k_constrained_dynamics, c, n, ins, size, outs, osize, work)


cdef int kb_impulse_dynamics(const Call* c, int n, const double** ins, const Py_ssize_t* size, double** outs,
                             const Py_ssize_t* osize, double* work) noexcept nogil:
    return _contacts_block(k_impulse_dynamics, c, n, ins, size, outs, osize, work)


# ==========================================================================================
# The algorithms as the driver reads them, and the entry points rbd.contacts calls
# ==========================================================================================
cdef Algorithm CONTACT_JACOBIAN = algorithm(b"q", ("q",), (b"cv",), k_contact_jacobian, size(nb=16, nv=6),
                                            size(rows_nv=1, nb=25))
cdef Algorithm CONSTRAINED_DYNAMICS = algorithm(
    b"qvvf", ("q", "v", "tau", "fext"), (b"v", b"c"), k_constrained_dynamics,
    size(ancestors=1, rows_nv=2, rows2=1, rows=2, nb=CRBA_PER_BODY + 18 + LTDL_PER_BODY, nv=7),
    size(nb=80, nv_depth=40, rows_nv=20, rows2=10))
cdef Algorithm IMPULSE_DYNAMICS = algorithm(
    b"qv", ("q", "v"), (b"v", b"c"), k_impulse_dynamics,
    size(ancestors=1, rows_nv=2, rows2=1, rows=2, nb=CRBA_PER_BODY + LTDL_PER_BODY, nv=7),
    size(nb=40, nv_depth=30, rows_nv=20, rows2=10))
# a block: placements, q, v, tau, fext, x and the forces in lanes, then rbd_contacts_lanes' rows
# (or one sample's scratch, from the start)
_contacts_block_scratch = size(nb=(12 + 1 + 6 + 61) * LANES + CRBA_PER_BODY + 18 + LTDL_PER_BODY,
                               nv=(1 + 2 + 1 + 7) * LANES + 7,
                               nv2=LANES, ancestors=1, rows=3 * LANES + 2, rows_nv=2 * LANES + 2, rows2=LANES + 1)
# Lanes pay off on branching trees (one sample's time per sample: 0.5-0.73x on trees of 60-300
# bodies, one contact) but not on deep chains (a factor of M per lane, dense along the chain:
# 0.82x at 50 links, 1.0x at 75, 1.1-1.35x at 100-200): past a mean dof depth of 32, one sample
# at a time. (stage, lanes_limit, lanes_depth)
set_block(CONSTRAINED_DYNAMICS, kb_constrained_dynamics, _contacts_block_scratch, False, 0, 32)
set_block(IMPULSE_DYNAMICS, kb_impulse_dynamics, _contacts_block_scratch, False, 0, 32)


cdef Algorithm JOINT_TORQUE_REGRESSOR = algorithm(b"qvv", ("q", "v", "a"), (b"vp",), k_regressor,
                                                  size(nb=REG_PER_BODY, nv=6, constant=120), size(nb=40, nv_depth=30))

# (no name: rbd.contacts composes them for models with mimic joints)
CONTACT_JACOBIAN.label = "contact_jacobian"
CONSTRAINED_DYNAMICS.label = "constrained_dynamics"
IMPULSE_DYNAMICS.label = "impulse_dynamics"
JOINT_TORQUE_REGRESSOR.label = "joint_torque_regressor"

cdef object _contacts_module = None


cdef object _python_side():
    """rbd.contacts (its checks and errors), imported on first use: importing rbd while
    rbd_c initialises would bind a half-built backend."""
    global _contacts_module
    if _contacts_module is None:
        import rbd.contacts
        _contacts_module = rbd.contacts
    return _contacts_module


cdef object _use_contacts(Call* call, object model, object contacts):
    """The contact table of ``contacts`` on the call; returns the table, to be kept alive
    for the call.  The last set resolved stays in the model's cache (contacts are
    values): a controller calling with the same feet every step checks and resolves
    them once (the checks, and their errors, are rbd.contacts')."""
    cache = model._cache
    last = cache.contacts
    key = tuple(contacts) if type(contacts) is list or type(contacts) is tuple else None
    if key is None or last is None or last[0] != key:
        checked = _python_side()._contacts(model, contacts)
        key = tuple(checked)
        table = np.zeros((max(1, len(key)), CONTACT_FIELDS), dtype=np.intc)
        row = 0
        for k, contact in enumerate(key):
            frame = model.frame_id(contact.frame)
            table[k] = (frame, model.frame_parents[frame], contact.dim,
                        REF_LWA if contact.reference == "local_world_aligned" else REF_LOCAL, row)
            row += contact.dim
        last = (key, table, len(key), row)
        cache.contacts = last
    table = last[1]
    call.contacts = <const int*>cnp.PyArray_DATA(table)
    call.ncontacts = last[2]
    call.nrows = last[3]
    return last


cdef double _regularization(object value) except -1.0:
    if type(value) is float and 0.0 <= <double>value <= DBL_MAX:
        return <double>value
    return _python_side()._regularization(value)  # (its error)


def contact_jacobian(model, q, contacts):
    """The stacked contact Jacobians (m, nv), in the order of ``contacts`` (compiled)."""
    cdef Call call
    cdef CompiledModel cm = prepare_call(&call, model)
    last = _use_contacts(&call, model, contacts)
    return run(model, cm, &call, CONTACT_JACOBIAN, (q,), None, last[0])


def constrained_dynamics(model, q, v, tau, contacts, fext=None, regularization=0.0):
    """(q_ddot, forces): M q_ddot + h = tau + J^T forces, every contact held (compiled)."""
    cdef Call call
    cdef CompiledModel cm = prepare_call(&call, model)
    last = _use_contacts(&call, model, contacts)
    call.regularization = _regularization(regularization)
    need_ancestors(cm)
    return run(model, cm, &call, CONSTRAINED_DYNAMICS, (q, v, tau, fext), None, last[0])


def impulse_dynamics(model, q, v, contacts, restitution=0.0, regularization=0.0):
    """(v_after, impulses): M (v_after - v) = J^T impulses, J v_after = -e J v (compiled)."""
    cdef Call call
    cdef CompiledModel cm = prepare_call(&call, model)
    last = _use_contacts(&call, model, contacts)
    call.regularization = _regularization(regularization)
    if type(restitution) is float and 0.0 <= <double>restitution <= 1.0:
        call.restitution = restitution
    else:
        call.restitution = _python_side()._restitution(restitution)
    need_ancestors(cm)
    return run(model, cm, &call, IMPULSE_DYNAMICS, (q, v), None, last[0])


def joint_torque_regressor(model, q, v, a):
    """Y (nv, 10 nbodies) with Y @ inertial_parameters(model) = rnea (compiled)."""
    cdef Call call
    cdef CompiledModel cm = prepare_call(&call, model)
    return run(model, cm, &call, JOINT_TORQUE_REGRESSOR, (q, v, a))


def _rank_tolerance():
    """CONTACT_RANK_TOLERANCE, for the test that holds it equal to rbd._checks'."""
    return CONTACT_RANK_TOLERANCE
