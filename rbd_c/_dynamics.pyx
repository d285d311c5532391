# cython: language_level=3
"""Compiled dynamics: RNEA (gravity, nonlinear effects), CRBA, ABA, Coriolis
matrix, energies and centroidal momentum.

Each algorithm is a ``k_*`` kernel for one sample (a forward pass over bodies
0..n-1 and a backward pass n-1..0 on C arrays) plus a thin ``def`` wrapper that
hands it to the shared driver ``_model.run`` (argument checks, output, batch loop).
Body-frame quantities throughout, with the parent_from_body transform X_i of
each body: motions go down the tree with inv_act_motion(X_i, .), forces up with
act_force(X_i, .), both cheaper than their dense 6x6 forms.  CRBA and the Coriolis
matrix work in world axes instead (see k_crba).
"""
cimport cython
from libc.string cimport memset, memcpy

from rbd_c._kernels cimport (act_motion, inv_act_motion, act_force, motion_cross,
                             force_cross, inertia_apply, inertia_cross_term, inertia_act, inertia_add,
                             velocity_variation, rotate3, rotate6, sym3_rotate, inertia_add_moved,
                             inertia_apply_angular, sym3_rotate_t)
from rbd_c._model cimport (prepare_mass_call, CModel, Call, CompiledModel, prepare_call, run_args, kernel_t,
                           Algorithm, algorithm, add_armature)
from rbd_c._model import size
from rbd_c._joints cimport (loop_placement, SINCOS_BLOCK, K_REV_Z, K_REV, K_FREE, joint_motion_add, joint_force, joint_column,
                            unit_column, basis_axis)
from rbd_c._passes cimport (gravity_acceleration, add4, add6, sub6, dot6, world_placements, body_velocities, child_placement,
                            child_twist, world_column, first_moment, moved_moment, total_first_moment, center_root,
                            shift_to_point)
from rbd_c._model cimport block_kernel_t, set_block, simd_cap, LANES
from rbd_c._lanes cimport (rbd_lanes_model, rbd_lanes_set, rbd_lanes_best, lanes_model, lanes_tables, lanes_set,
                           lanes_placements, lanes_in, lanes_out)
from rbd_c._articulated cimport (sym6_from_inertia, sym6_matvec, sym6_matvec_angular, sym6_rank1_sub,
                                 sym6_shift_add)

# Variants of the RNEA kernel.
cdef enum:
    RNEA_FULL = 0       # q, v, a (fext)
    RNEA_GRAVITY = 1    # q only: v = a = 0
    RNEA_NLE = 2        # q, v: a = 0


# ==========================================================================================
# RNEA
# ==========================================================================================
# (RNEA's scratch fields RNEA_* are declared in _dynamics.pxd, for the derivatives)


@cython.cdivision(True)
cdef int k_rnea(const Call* c, const double** ins, double** outs, double* work) noexcept nogil:
    """tau = M(q) a + C(q, v) v + g(q) - sum J^T fext, by the recursive Newton-Euler
    algorithm; v or a NULL stand for zero (gravity, nonlinear effects)."""
    cdef double* tau = outs[0]
    cdef const CModel* m = c.m
    cdef const double* q = ins[0]
    cdef const double* v = ins[1]
    cdef const double* a = ins[2]
    cdef const double* fext = ins[3]
    cdef int nb = m.nb, i, p
    cdef double* X = work + RNEA_X * nb
    cdef double* V = work + RNEA_V * nb
    cdef double* A = work + RNEA_A * nb
    cdef double* F = work + RNEA_F * nb
    cdef double a0[6]
    cdef double vJ[6]
    cdef double t[6]
    cdef double* xi
    cdef double* vi
    cdef double* ai
    cdef double* fi
    cdef const double* Y
    gravity_acceleration(c, a0)
    cdef double sn[SINCOS_BLOCK]
    cdef double cs[SINCOS_BLOCK]
    for i in range(nb):  # the placements first: they do not wait on the recursion
        loop_placement(m, i, q, sn, cs, X + 16 * i)
    for i in range(nb):
        xi = X + 16 * i
        vi = V + 6 * i
        ai = A + 6 * i
        fi = F + 6 * i
        Y = m.inertias + 10 * i
        p = m.parents[i]
        inv_act_motion(xi, A + 6 * p if p >= 0 else a0, ai)
        if a != NULL:
            joint_motion_add(m, i, a + m.v_idx[i], ai)
        if v != NULL:
            child_twist(m, i, xi, v, V + 6 * p if p >= 0 else NULL, vJ, vi)
            if p >= 0:
                motion_cross(vi, vJ, t)  # the joint's velocity-product acceleration
                add6(ai, t)
            inertia_apply(Y, ai, fi)
            inertia_cross_term(Y, vi, t)
            add6(fi, t)
        else:
            inertia_apply(Y, ai, fi)
        if fext != NULL:
            sub6(fi, fext + 6 * i)
    for i in range(nb - 1, -1, -1):
        fi = F + 6 * i
        joint_force(m, i, fi, tau + m.v_idx[i])
        p = m.parents[i]
        if p >= 0:
            act_force(X + 16 * i, fi, t)
            add6(F + 6 * p, t)
    if a != NULL and m.has_armature:
        for i in range(m.nv):
            tau[i] += m.armature[i] * a[i]
    return 0




# ---- batches: LANES samples per instruction (rbd_c/_lanes.h) ----------------------------
lanes_tables()
cdef int _best = rbd_lanes_best()


def simd():
    """The kernels batched rnea, crba, aba, rnea_derivatives and inverse_mass_matrix run on: "avx512", "avx2" or "baseline" (the
    widest this machine has, at most what rbd_c.set_simd allows), or "off"."""
    from rbd_c._model import _simd_mode_name
    if _simd_mode_name() == "off":
        return "off"
    return _kernels().name.decode()


cdef inline const rbd_lanes_set* _kernels() noexcept nogil:
    """The widest kernel set this machine runs, within rbd_c.set_simd's choice."""
    return lanes_set(_best)


cdef int _rnea_block(const Call* c, int n, const double** ins, const Py_ssize_t* size, int nin, double* tau,
                     Py_ssize_t tsize, double* work) noexcept nogil:
    """RNEA on a block (inputs q, then v, a, fext as far as nin; the others are zero)."""
    cdef const CModel* m = c.m
    cdef rbd_lanes_model lm
    cdef Py_ssize_t nb = m.nb, nv = m.nv
    cdef double* X = work
    cdef double* Q = X + 12 * LANES * nb         # q (nq <= nb + nv rows)
    cdef double* rows = Q + LANES * (nb + nv)    # v, a (nv rows each), fext (6 per body), tau (nv)
    cdef const double* v = lanes_in(n, ins[1] if nin > 1 else NULL, nv, rows)
    cdef const double* a = lanes_in(n, ins[2] if nin > 2 else NULL, nv, rows + LANES * nv)
    cdef const double* f = lanes_in(n, ins[3] if nin > 3 else NULL, 6 * nb, rows + 2 * LANES * nv)
    cdef double* taus = rows + 2 * LANES * nv + 6 * LANES * nb
    lanes_model(m, &lm)
    cdef const rbd_lanes_set* ks = _kernels()
    lanes_placements(ks, &lm, m, n, ins[0], size[0], X, Q)
    ks.rnea(&lm, c.g, X, v, a, f, taus, taus + LANES * nv)
    lanes_out(n, taus, tsize, tau)
    return 0


cdef int kb_rnea(const Call* c, int n, const double** ins, const Py_ssize_t* size, double** outs,
                 const Py_ssize_t* osize, double* work) noexcept nogil:
    return _rnea_block(c, n, ins, size, 4, outs[0], osize[0], work)


cdef int kb_gravity(const Call* c, int n, const double** ins, const Py_ssize_t* size, double** outs,
                    const Py_ssize_t* osize, double* work) noexcept nogil:
    return _rnea_block(c, n, ins, size, 1, outs[0], osize[0], work)


cdef int kb_nle(const Call* c, int n, const double** ins, const Py_ssize_t* size, double** outs,
                const Py_ssize_t* osize, double* work) noexcept nogil:
    return _rnea_block(c, n, ins, size, 2, outs[0], osize[0], work)


def rnea(model, q, v, a, fext=None, *, out=None):
    """Inverse dynamics tau = M(q) a + C(q, v) v + g(q) - sum J_i^T fext_i (compiled)."""
    cdef Call call
    cdef CompiledModel cm = prepare_call(&call, model)
    return run_args(model, cm, &call, RNEA, out, q, v, a, fext)


def gravity(model, q, *, out=None):
    """Generalized gravity g(q) (compiled)."""
    cdef Call call
    cdef CompiledModel cm = prepare_call(&call, model)
    return run_args(model, cm, &call, GRAVITY, out, q)


def nonlinear_effects(model, q, v, *, out=None):
    """C(q, v) v + g(q) (compiled)."""
    cdef Call call
    cdef CompiledModel cm = prepare_call(&call, model)
    return run_args(model, cm, &call, NONLINEAR_EFFECTS, out, q, v)


cdef int k_gravity(const Call* c, const double** ins, double** outs, double* work) noexcept nogil:
    """g(q) from the subtrees' masses and first moments: at rest every body's spatial
    acceleration is gravity's, a pure linear one (a), so the force a joint transmits is
    its subtree's (m_sub a, h_sub x a) in its body's frame: gravity rotated down the tree,
    (m_sub, h_sub) summed up it as center_of_mass does, no spatial inertias or force
    transforms."""
    cdef double* tau = outs[0]
    cdef const CModel* m = c.m
    cdef int nb = m.nb, i, p, r
    cdef double* X = work              # parent_from_body placements (16 per body)
    cdef double* G = work + 16 * nb    # gravity's acceleration in each body's frame (3)
    cdef double* H = work + 19 * nb    # subtree mass and first moment (4)
    cdef double a0[6]
    cdef double f[6]
    cdef double w[4]
    cdef const double* g
    cdef double* x
    cdef double* h
    cdef double* a
    gravity_acceleration(c, a0)
    cdef double sn[SINCOS_BLOCK]
    cdef double cs[SINCOS_BLOCK]
    for i in range(nb):  # the placements first: they do not wait on gravity's rotations
        loop_placement(m, i, ins[0], sn, cs, X + 16 * i)
    for i in range(nb):
        p = m.parents[i]
        x = X + 16 * i
        g = G + 3 * p if p >= 0 else a0
        for r in range(3):  # R^T g
            G[3 * i + r] = x[r] * g[0] + x[4 + r] * g[1] + x[8 + r] * g[2]
        memcpy(H + 4 * i, m.inertias + 10 * i, 4 * sizeof(double))
    for i in range(nb - 1, -1, -1):  # children after their parents: a subtree is complete here
        h = H + 4 * i
        a = G + 3 * i
        f[0] = h[0] * a[0]; f[1] = h[0] * a[1]; f[2] = h[0] * a[2]
        f[3] = h[2] * a[2] - h[3] * a[1]
        f[4] = h[3] * a[0] - h[1] * a[2]
        f[5] = h[1] * a[1] - h[2] * a[0]
        joint_force(m, i, f, tau + m.v_idx[i])
        p = m.parents[i]
        if p >= 0:
            w[0] = h[0]
            moved_moment(X + 16 * i, h, w + 1)
            add4(H + 4 * p, w)
    return 0


cdef int k_rnea_nle(const Call* c, const double** ins, double** outs, double* work) noexcept nogil:
    cdef const double* args[4]
    args[0] = ins[0]; args[1] = ins[1]; args[2] = NULL; args[3] = NULL
    return k_rnea(c, args, outs, work)


# ==========================================================================================
# CRBA
# ==========================================================================================
# (the layout of its scratch: _dynamics.pxd)

cdef inline void _put_axis(const double* oM, int a, double* out) noexcept nogil:
    """out = [0; column a of oM's rotation]: a revolute column about a basis axis at its
    body's origin, in world axes."""
    out[0] = 0.0; out[1] = 0.0; out[2] = 0.0
    out[3] = oM[a]; out[4] = oM[4 + a]; out[5] = oM[8 + a]


cdef int k_crba(const Call* c, const double** ins, double** outs, double* work) noexcept nogil:
    """Joint-space mass matrix by the composite-rigid-body algorithm in world axes, each
    body's quantities at its own origin: a child's composite inertia reaches its parent's
    by a translation (no rotation), and each block M[v_j, v_i] (j = i or an ancestor) is
    a dot product per entry: S_i^T F at body i's origin for F = Yc_i S_i, J_j^T F_o for
    the ancestors' world columns J_j and F_o = F moved to the (root-centred) world origin,
    where body frames would carry F through a force transform per ancestor.  Summing the
    inertias about one distant point instead (as crba_world_terms does, for M's factor)
    costs a light body at the end of a lever L a relative 1e-16 (L/r)^2 of its own entries;
    here only F's move costs them, a relative 1e-16 L/(the joints' distance).  A floating base
    (_free_base) builds no columns: its block and its entries in the other columns come from
    the composite inertia and each column's F in the base's own axes."""
    cdef const CModel* m = c.m
    cdef int nb = m.nb, nv = m.nv, i, p, col, a
    cdef double* oM = work + CRBA_OM * nb
    cdef double* Yc = work + CRBA_YC * nb
    cdef double* J = work + CRBA_PER_BODY * nb  # world columns, at the world origin
    cdef double* S = J + 6 * nv                 # the same columns at their body's origin
    cdef double* D = S + 6 * nv                 # each body's origin from its parent's
    cdef const double* Y
    cdef double Xl[16]
    cdef double t[6]
    cdef double ref[3]
    cdef double sn[SINCOS_BLOCK]
    cdef double cs[SINCOS_BLOCK]
    for i in range(nb):
        p = m.parents[i]
        loop_placement(m, i, ins[0], sn, cs, Xl)
        if p < 0:
            center_root(i, Xl, ref)
        else:  # (the offset from the local translation: o_i - o_p would lose |o| eps)
            t[0] = Xl[3]; t[1] = Xl[7]; t[2] = Xl[11]
            rotate3(oM + 16 * p, t, D + 3 * i)
        child_placement(oM + 16 * p if p >= 0 else NULL, Xl, oM + 16 * i)
        Y = m.inertias + 10 * i
        Yc[10 * i] = Y[0]  # m, R h, R I R^T: the inertia at the body's origin in world axes
        rotate3(oM + 16 * i, Y + 1, Yc + 10 * i + 1)
        sym3_rotate(oM + 16 * i, Y + 4, Yc + 10 * i + 4)
        if _free_base(m, i):  # (its columns are not read)
            continue
        a = basis_axis(m.kinds[i])
        for col in range(m.nvj[i]):
            world_column(m, i, col, oM + 16 * i, J + 6 * (m.v_idx[i] + col))
            if a >= 0:  # about a basis axis: [0; that column of R]
                _put_axis(oM + 16 * i, a, S + 6 * (m.v_idx[i] + col))
            else:
                joint_column(m, i, col, t)
                rotate6(oM + 16 * i, t, S + 6 * (m.v_idx[i] + col))
    crba_composite(m, work, outs[0])
    return 0


cdef void crba_world_terms(const CModel* m, double* work) noexcept nogil:
    """From the world placements in ``work``'s CRBA_OM field (origin at the first body's):
    each body's inertia in world axes about that origin (CRBA_YC) and the world column of
    each dof (after the per-body fields), for M's factor along the tree (the contact
    dynamics and M^-1); CRBA itself keeps each body's inertia at its own origin."""
    cdef int nb = m.nb, i, col
    cdef double* oM = work + CRBA_OM * nb
    cdef double* Yc = work + CRBA_YC * nb
    cdef double* J = work + CRBA_PER_BODY * nb
    for i in range(nb):  # (one loop with the columns, not world_columns after it: 5% of Talos's CRBA)
        inertia_act(oM + 16 * i, m.inertias + 10 * i, Yc + 10 * i)
        for col in range(m.nvj[i]):
            world_column(m, i, col, oM + 16 * i, J + 6 * (m.v_idx[i] + col))


cdef inline void _crba_entry(double* M, int nv, int r, int c, const double* x, const double* f) noexcept nogil:
    """M[r, c] = M[c, r] = x . f"""
    cdef double val = dot6(x, f)
    M[r * nv + c] = val
    M[c * nv + r] = val


cdef inline bint _free_base(const CModel* m, int i) noexcept nogil:
    """Whether body i's joint is a free joint with no dof before it (a floating base): CRBA
    writes its block from the composite inertia and its entries in descendants' columns
    from their forces (_crba_free_block, _crba_free_entries), without its columns."""
    return m.kinds[i] == K_FREE and m.dof_parents[m.v_idx[i]] < 0


cdef inline void _crba_free_entries(double* M, int nv, int r, int c, const double* oMb, const double* fo) noexcept nogil:
    """M[r + k, c] = M[c, r + k], k < 6, for the free joint whose dofs start at r, of the body
    at the (root-centred) world placement oMb: the force fo (world axes, at the world
    origin) at the body's origin in its axes, which is those six dot products with the
    joint's world columns (24 multiplications for their 36: a floating base's entries are
    most of a legged robot's M)."""
    cdef double n[3]
    cdef double w
    cdef int k
    n[0] = fo[3] - (oMb[7] * fo[2] - oMb[11] * fo[1])  # the moment about the body's origin
    n[1] = fo[4] - (oMb[11] * fo[0] - oMb[3] * fo[2])
    n[2] = fo[5] - (oMb[3] * fo[1] - oMb[7] * fo[0])
    for k in range(3):  # R^T f, R^T n
        w = oMb[k] * fo[0] + oMb[4 + k] * fo[1] + oMb[8 + k] * fo[2]
        M[(r + k) * nv + c] = w
        M[c * nv + r + k] = w
        w = oMb[k] * n[0] + oMb[4 + k] * n[1] + oMb[8 + k] * n[2]
        M[(r + 3 + k) * nv + c] = w
        M[c * nv + r + 3 + k] = w


cdef inline void _crba_free_block(double* M, int nv, int r, const double* oMb, const double* Y) noexcept nogil:
    """A free joint's own 6x6 block of M (its dofs from r): the composite inertia Y (world
    axes, at the body's origin) in the body's axes, [m 1, -h^; h^, I] entry by entry."""
    cdef double h[3]
    cdef double I[6]
    cdef int k, l
    for k in range(3):
        h[k] = oMb[k] * Y[1] + oMb[4 + k] * Y[2] + oMb[8 + k] * Y[3]
    sym3_rotate_t(oMb, Y + 4, I)
    for k in range(3):
        for l in range(3):
            M[(r + k) * nv + r + l] = Y[0] if k == l else 0.0
    M[r * nv + r + 4] = h[2]; M[r * nv + r + 5] = -h[1]; M[(r + 1) * nv + r + 5] = h[0]   # -h^ above
    M[(r + 1) * nv + r + 3] = -h[2]; M[(r + 2) * nv + r + 3] = h[1]; M[(r + 2) * nv + r + 4] = -h[0]
    M[r * nv + r + 3] = 0.0; M[(r + 1) * nv + r + 4] = 0.0; M[(r + 2) * nv + r + 5] = 0.0
    M[(r + 3) * nv + r + 3] = I[0]; M[(r + 3) * nv + r + 4] = I[1]; M[(r + 3) * nv + r + 5] = I[2]
    M[(r + 4) * nv + r + 4] = I[3]; M[(r + 4) * nv + r + 5] = I[4]; M[(r + 5) * nv + r + 5] = I[5]
    for k in range(6):  # the lower triangle
        for l in range(k):
            M[(r + k) * nv + r + l] = M[(r + l) * nv + r + k]


cdef inline void _crba_ancestors(const CModel* m, double* M, int nv, int s, int e, int c, const double* J,
                                 const double* oM, const double* fo) noexcept nogil:
    """M[r, c] = M[c, r] = J_r . fo for the run of ancestor dofs r = s .. e - 1; a free
    joint that starts the run (a floating base does: it has no dof before it) gives its
    six at once."""
    cdef int r = s, b = m.dof_bodies[s]
    if m.kinds[b] == K_FREE and s == m.v_idx[b]:  # (an ancestor's dofs are all ancestors)
        _crba_free_entries(M, nv, s, c, oM + 16 * b, fo)
        r = s + 6
    for r in range(r, e):
        _crba_entry(M, nv, r, c, J + 6 * r, fo)


cdef void crba_composite(const CModel* m, double* work, double* M) noexcept nogil:
    """CRBA's second step, after k_crba's forward pass: the composite inertias (summed in
    place of the bodies', each at its body's origin) and M, armature included."""
    cdef int nb = m.nb, nv = m.nv, i, p, col, c, k, r, s, vi
    cdef const double* oMi
    cdef double* Yc = work + CRBA_YC * nb
    cdef double* J = work + CRBA_PER_BODY * nb
    cdef double* S = J + 6 * nv
    cdef double* D = S + 6 * nv
    cdef double f[6]
    cdef double fo[6]
    memset(M, 0, nv * nv * sizeof(double))  # blocks of unrelated bodies stay zero
    for i in range(nb - 1, -1, -1):
        vi = m.v_idx[i]
        oMi = work + CRBA_OM * nb + 16 * i
        if _free_base(m, i):  # its block, and no ancestors
            _crba_free_block(M, nv, vi, oMi, Yc + 10 * i)
        else:
            for col in range(m.nvj[i]):
                c = vi + col
                if basis_axis(m.kinds[i]) >= 0:  # F at the body's origin (a revolute column: [0; w])
                    inertia_apply_angular(Yc + 10 * i, S + 6 * c + 3, f)
                    M[c * nv + c] = S[6 * c + 3] * f[3] + S[6 * c + 4] * f[4] + S[6 * c + 5] * f[5]
                else:
                    inertia_apply(Yc + 10 * i, S + 6 * c, f)
                    for r in range(vi, c + 1):                # the joint's own block
                        _crba_entry(M, nv, r, c, S + 6 * r, f)
                fo[0] = f[0]; fo[1] = f[1]; fo[2] = f[2]  # F at the world origin: n + o x f
                fo[3] = f[3] + oMi[7] * f[2] - oMi[11] * f[1]
                fo[4] = f[4] + oMi[11] * f[0] - oMi[3] * f[2]
                fo[5] = f[5] + oMi[3] * f[1] - oMi[7] * f[0]
                s = m.dof_run_start[c]  # the ancestors' dofs: runs of consecutive dofs
                _crba_ancestors(m, M, nv, s, vi, c, J, work + CRBA_OM * nb, fo)
                k = m.dof_parents[s]
                while k >= 0:
                    s = m.dof_run_start[k]
                    _crba_ancestors(m, M, nv, s, k + 1, c, J, work + CRBA_OM * nb, fo)
                    k = m.dof_parents[s]
        p = m.parents[i]
        if p >= 0:
            inertia_add_moved(Yc + 10 * p, Yc + 10 * i, D + 3 * i)
    add_armature(m, M)


cdef int kb_crba(const Call* c, int n, const double** ins, const Py_ssize_t* size, double** outs,
                 const Py_ssize_t* osize, double* work) noexcept nogil:
    """CRBA on a block: each lane writes its own matrix (padded lanes one in the scratch)."""
    cdef const CModel* m = c.m
    cdef rbd_lanes_model lm
    cdef double* Ms[LANES]
    cdef double* X = work
    cdef double* Q = X + 12 * LANES * m.nb
    cdef double* rest = Q + LANES * (m.nb + m.nv)
    cdef int l
    cdef const rbd_lanes_set* ks = _kernels()
    for l in range(LANES):
        Ms[l] = outs[0] + l * osize[0] if l < n else rest
    rest += m.nv * m.nv
    lanes_model(m, &lm)
    lanes_placements(ks, &lm, m, n, ins[0], size[0], X, Q)
    ks.crba(&lm, X, Ms, rest)
    return 0


def crba(model, q, *, out=None):
    """Joint-space mass matrix M(q), full and symmetric (compiled)."""
    cdef Call call
    cdef CompiledModel cm = prepare_call(&call, model)
    return run_args(model, cm, &call, CRBA, out, q)


# ==========================================================================================
# ABA
# ==========================================================================================
cdef enum:
    # ABA's scratch per body, by offset: the world rotation R beside the origin's offset r
    # from the parent's (a 3x4 [R | r], world axes), the rigid inertia Y, twist v,
    # velocity-product acceleration c, articulated inertia IA (sym6, 21), bias force pA and
    # acceleration a, all at the body's origin in world axes; then the columns S and IA S of
    # each dof (6 each), 1 / D.
    ABA_RR = 0
    ABA_Y = 12
    ABA_V = 22
    ABA_C = 28
    ABA_IA = 34
    ABA_PA = 55
    ABA_A = 61
    ABA_PER_BODY = 67


cdef inline void _offset(const double* Rr, double* r) noexcept nogil:
    """r: the translation column of a 3x4 [R | r] (ABA's body origin from its parent's)."""
    r[0] = Rr[3]; r[1] = Rr[7]; r[2] = Rr[11]


@cython.cdivision(True)
cdef int k_aba(const Call* c, const double** ins, double** outs, double* work) noexcept nogil:
    """Forward dynamics by the articulated-body algorithm (Featherstone) with each body's
    quantities at its origin in world axes: a child's articulated inertia and bias force
    reach the parent's by a translation only (in body frames each also takes a rotation,
    the larger part of the 6x6 congruence), and they stay at the bodies' own origins
    (in world axes about one origin, the lever arms of distant bodies cost digits).  The
    dofs of a body are eliminated one at a time, so a joint's D is a number (its pivots
    are articulated_ltdl's).  Articulated inertias: 21-number symmetric (_articulated)."""
    cdef double* qdd = outs[0]
    cdef const CModel* m = c.m
    cdef const double* q = ins[0]
    cdef const double* v = ins[1]
    cdef const double* tau = ins[2]
    cdef const double* fext = ins[3]
    cdef int nb = m.nb, nv = m.nv, i, p, d, r, vi
    cdef double* S = work + ABA_PER_BODY * nb      # each dof's column (6)
    cdef double* U = S + 6 * nv                    # IA s of each dof (6)
    cdef double* Dinv = U + 6 * nv                 # 1 / D of each dof
    cdef double* B
    cdef double* P
    cdef double* Rr
    cdef double* IA
    cdef double* pA
    cdef double* acc
    cdef const double* Y
    cdef const double* s
    cdef double* Ud
    cdef double Xl[16]
    cdef double vJ[6]
    cdef double t[6]
    cdef double a0[6]
    cdef double sn[SINCOS_BLOCK]
    cdef double cs[SINCOS_BLOCK]
    cdef double off[3]
    cdef double D, inv, u
    cdef int b, kind

    # ---- forward: placements, velocities, bias terms, rigid inertias ------------------
    for i in range(nb):
        B = work + ABA_PER_BODY * i
        Rr = B + ABA_RR
        p = m.parents[i]
        vi = m.v_idx[i]
        kind = m.kinds[i]
        P = work + ABA_PER_BODY * p if p >= 0 else NULL
        loop_placement(m, i, q, sn, cs, Xl)
        if p >= 0:  # [R | r] = R_p [R_l | t_l], a row at a time
            for r in range(3):
                for b in range(4):
                    Rr[4 * r + b] = P[4 * r] * Xl[b] + P[4 * r + 1] * Xl[4 + b] + P[4 * r + 2] * Xl[8 + b]
        else:
            memcpy(Rr, Xl, 12 * sizeof(double))
        Y = m.inertias + 10 * i
        B[ABA_Y] = Y[0]  # m, R h, R I R^T: the inertia at the origin in world axes
        rotate3(Rr, Y + 1, B + ABA_Y + 1)
        sym3_rotate(Rr, Y + 4, B + ABA_Y + 4)
        if kind <= K_REV_Z:  # about a basis axis b: the column is R's column b
            Ud = S + 6 * vi
            Ud[0] = 0.0; Ud[1] = 0.0; Ud[2] = 0.0
            Ud[3] = Rr[kind]; Ud[4] = Rr[4 + kind]; Ud[5] = Rr[8 + kind]
            for r in range(6):
                vJ[r] = Ud[r] * v[vi]
        else:
            memset(vJ, 0, 6 * sizeof(double))
            for d in range(vi, vi + m.nvj[i]):
                joint_column(m, i, d - vi, t)
                rotate6(Rr, t, S + 6 * d)
                for r in range(6):
                    vJ[r] += S[6 * d + r] * v[d]
        if p >= 0:  # the parent's twist at this origin, + vJ
            _offset(Rr, off)
            shift_to_point(off, P + ABA_V, B + ABA_V)
            motion_cross(B + ABA_V, vJ, B + ABA_C)  # v x vJ, as (v_parent + vJ) x vJ without the
            add6(B + ABA_V, vJ)                     # sum's rounding (eps |vJ|^2 in world axes)
        else:  # (a root's v x vJ is zero)
            memcpy(B + ABA_V, vJ, 6 * sizeof(double))
            memset(B + ABA_C, 0, 6 * sizeof(double))
        sym6_from_inertia(B + ABA_Y, B + ABA_IA)
        inertia_cross_term(B + ABA_Y, B + ABA_V, B + ABA_PA)
        if fext != NULL:  # (given in the body's frame: rotated to world axes)
            rotate6(Rr, fext + 6 * i, t)
            sub6(B + ABA_PA, t)

    # ---- backward: articulated inertias and bias forces, a dof at a time ----------------
    for i in range(nb - 1, -1, -1):
        B = work + ABA_PER_BODY * i
        IA = B + ABA_IA
        pA = B + ABA_PA
        p = m.parents[i]
        vi = m.v_idx[i]
        kind = m.kinds[i]
        for d in range(vi + m.nvj[i] - 1, vi - 1, -1):
            s = S + 6 * d
            Ud = U + 6 * d
            if kind <= K_REV:  # a revolute column has no linear part
                sym6_matvec_angular(IA, s + 3, Ud)
                D = s[3] * Ud[3] + s[4] * Ud[4] + s[5] * Ud[5] + m.armature[d]
                u = tau[d] - (s[3] * pA[3] + s[4] * pA[4] + s[5] * pA[5])
            else:
                sym6_matvec(IA, s, Ud)
                D = dot6(s, Ud) + m.armature[d]
                u = tau[d] - dot6(s, pA)
            if not D > m.singular_tol[i]:  # (NaN included)
                return 1 + i
            inv = 1.0 / D
            Dinv[d] = inv
            qdd[d] = u                           # u, turned into qdd in the last pass
            u *= inv
            for r in range(6):
                pA[r] += Ud[r] * u
            sym6_rank1_sub(IA, Ud, inv)          # IA -= U U^T / D
        if p < 0:
            continue
        # the parent gets IA and pA + IA c, moved to its origin
        P = work + ABA_PER_BODY * p
        sym6_matvec(IA, B + ABA_C, t)
        add6(t, pA)
        _offset(B + ABA_RR, off)
        P[ABA_PA] += t[0]
        P[ABA_PA + 1] += t[1]
        P[ABA_PA + 2] += t[2]
        P[ABA_PA + 3] += t[3] + (off[1] * t[2] - off[2] * t[1])
        P[ABA_PA + 4] += t[4] + (off[2] * t[0] - off[0] * t[2])
        P[ABA_PA + 5] += t[5] + (off[0] * t[1] - off[1] * t[0])
        sym6_shift_add(off, IA, P + ABA_IA)

    # ---- forward: accelerations and joint accelerations --------------------------------
    gravity_acceleration(c, a0)
    for i in range(nb):
        B = work + ABA_PER_BODY * i
        p = m.parents[i]
        vi = m.v_idx[i]
        acc = B + ABA_A
        if p >= 0:  # the parent's acceleration at this origin, + c
            _offset(B + ABA_RR, off)
            shift_to_point(off, work + ABA_PER_BODY * p + ABA_A, acc)
            add6(acc, B + ABA_C)
        else:  # (gravity's acceleration is the same at every origin)
            memcpy(acc, a0, 6 * sizeof(double))
        for d in range(vi, vi + m.nvj[i]):
            qdd[d] = (qdd[d] - dot6(U + 6 * d, acc)) * Dinv[d]
            for r in range(6):
                acc[r] += S[6 * d + r] * qdd[d]
    return 0


cdef int kb_aba(const Call* c, int n, const double** ins, const Py_ssize_t* size, double** outs,
                const Py_ssize_t* osize, double* work) noexcept nogil:
    """ABA on a block; a singular joint is reported for the block's first sample that has one."""
    cdef const CModel* m = c.m
    cdef rbd_lanes_model lm
    cdef Py_ssize_t nb = m.nb, nv = m.nv
    cdef double* X = work
    cdef double* Q = X + 12 * LANES * nb
    cdef double* rows = Q + LANES * (nb + nv)    # v, tau (nv rows each), fext (6 per body), qdd (nv)
    cdef const double* v = lanes_in(n, ins[1], nv, rows)
    cdef const double* tau = lanes_in(n, ins[2], nv, rows + LANES * nv)
    cdef const double* f = lanes_in(n, ins[3], 6 * nb, rows + 2 * LANES * nv)
    cdef double* qdd = rows + 2 * LANES * nv + 6 * LANES * nb
    cdef int status[LANES]
    cdef int l
    cdef const rbd_lanes_set* ks = _kernels()
    lanes_model(m, &lm)
    lanes_placements(ks, &lm, m, n, ins[0], size[0], X, Q)
    ks.aba(&lm, c.g, X, v, tau, f, qdd, qdd + LANES * nv, status)
    lanes_out(n, qdd, osize[0], outs[0])
    for l in range(n):
        if status[l]:
            return status[l]
    return 0


def aba(model, q, v, tau, fext=None, *, out=None):
    """Forward dynamics: the joint accelerations produced by tau and fext (compiled)."""
    cdef Call call
    cdef CompiledModel cm = prepare_call(&call, model)
    return run_args(model, cm, &call, ABA, out, q, v, tau, fext)


# ==========================================================================================
# Coriolis matrix
# ==========================================================================================
cdef enum:
    # The Coriolis kernel's scratch per body, by offset: world placement oM, body-frame
    # twist v, world twist ov, and the subtree composites in world axes: inertia Yc (10),
    # 2 B's symmetric part (v x*) Y - Y (v x) in inertia form (10), momentum h (6).
    COR_OM = 0
    COR_V = 16
    COR_OV = 22
    COR_YC = 28
    COR_SYM = 38
    COR_H = 48
    COR_PER_BODY = 54


cdef int k_coriolis(const Call* c, const double** ins, double** outs, double* work) noexcept nogil:
    """The Christoffel-consistent Coriolis matrix C = sum_i J_i^T (Y_i dJ_i + B_i J_i) in
    world coordinates (Y_i, J_i the body's world inertia and Jacobian, and
    B_i = (v_i x* Y_i - Y_i v_i x + (Y_i v_i) xbar) / 2), grouped over subtrees:
    C[j, k] = S_j . (Yc_b dS_k + Bc_b S_k) with b the deeper of the two joints' bodies.
    B's symmetric part is kept doubled in inertia form (``velocity_variation``) and its
    skew part as the momentum h: 2 B m = Sym m + m x* h, 2 B^T m = Sym m - m x* h."""
    cdef double* C = outs[0]
    cdef const CModel* m = c.m
    cdef const double* q = ins[0]
    cdef const double* v = ins[1]
    cdef int nb = m.nb, nv = m.nv, i, p, kk, col, r, b, jj, jk
    cdef double* S = work + COR_PER_BODY * nb      # world S columns, 6 per dof
    cdef double* dS = S + 6 * nv                    # their time derivatives
    cdef double* Bb
    cdef double* oM
    cdef double* vl
    cdef double* ov
    cdef double Xl[16]
    cdef double ref[3]
    cdef double vJ[6]
    cdef double t[6]
    cdef double x[6]
    cdef double F[6]
    cdef double G1[6]
    cdef double G2[6]
    memset(C, 0, nv * nv * sizeof(double))
    cdef double sn[SINCOS_BLOCK]
    cdef double cs[SINCOS_BLOCK]
    for i in range(nb):
        Bb = work + COR_PER_BODY * i
        oM = Bb + COR_OM
        vl = Bb + COR_V
        ov = Bb + COR_OV
        p = m.parents[i]
        loop_placement(m, i, q, sn, cs, Xl)
        child_twist(m, i, Xl, v, work + COR_PER_BODY * p + COR_V if p >= 0 else NULL, vJ, vl)
        if p < 0:
            center_root(i, Xl, ref)
        child_placement(work + COR_PER_BODY * p + COR_OM if p >= 0 else NULL, Xl, oM)
        act_motion(oM, vl, ov)
        inertia_act(oM, m.inertias + 10 * i, Bb + COR_YC)
        inertia_apply(Bb + COR_YC, ov, Bb + COR_H)
        velocity_variation(Bb + COR_YC, ov, Bb + COR_SYM)
        for col in range(m.nvj[i]):
            kk = m.v_idx[i] + col
            world_column(m, i, col, oM, S + 6 * kk)
            motion_cross(ov, S + 6 * kk, dS + 6 * kk)
    for i in range(nb - 1, -1, -1):
        Bb = work + COR_PER_BODY * i
        for col in range(m.nvj[i]):
            jk = m.v_idx[i] + col
            inertia_apply(Bb + COR_SYM, S + 6 * jk, t)
            force_cross(S + 6 * jk, Bb + COR_H, x)
            # column jk against the joints of i and its ancestors: F = Yc dS + Bc S
            inertia_apply(Bb + COR_YC, dS + 6 * jk, F)
            for r in range(6):
                F[r] += 0.5 * (t[r] + x[r])
            # row jk against the joints of the strict ancestors: G1 = Yc S, G2 = Bc^T S
            inertia_apply(Bb + COR_YC, S + 6 * jk, G1)
            for r in range(6):
                G2[r] = 0.5 * (t[r] - x[r])
            b = i
            while b >= 0:  # i and its ancestors
                for kk in range(m.nvj[b]):
                    jj = m.v_idx[b] + kk
                    C[jj * nv + jk] = dot6(S + 6 * jj, F)
                    if b != i:
                        C[jk * nv + jj] = dot6(G1, dS + 6 * jj) + dot6(G2, S + 6 * jj)
                b = m.parents[b]
        p = m.parents[i]
        if p >= 0:
            for r in range(COR_YC, COR_PER_BODY):  # Yc, B's symmetric part, momentum
                work[COR_PER_BODY * p + r] += Bb[r]
    return 0


def coriolis_matrix(model, q, v, *, out=None):
    """Coriolis matrix C(q, v): C v + g = nonlinear effects, Mdot - 2C skew (compiled)."""
    cdef Call call
    cdef CompiledModel cm = prepare_call(&call, model)
    return run_args(model, cm, &call, CORIOLIS, out, q, v)


# ==========================================================================================
# Energies and momentum
# ==========================================================================================
cdef int k_kinetic(const Call* c, const double** ins, double** outs, double* work) noexcept nogil:
    cdef double* out = outs[0]
    cdef const CModel* m = c.m
    cdef double* X = work + RNEA_X * m.nb
    cdef double* V = work + RNEA_V * m.nb
    cdef double f[6]
    cdef double e = 0.0
    cdef int i
    body_velocities(m, ins[0], ins[1], X, V)
    for i in range(m.nb):
        inertia_apply(m.inertias + 10 * i, V + 6 * i, f)
        e += dot6(f, V + 6 * i)
    if m.has_armature:
        for i in range(m.nv):
            e += m.armature[i] * ins[1][i] * ins[1][i]
    out[0] = 0.5 * e
    return 0


def kinetic_energy(model, q, v, *, out=None):
    """Kinetic energy 1/2 v^T M(q) v (compiled)."""
    cdef Call call
    cdef CompiledModel cm = prepare_call(&call, model)
    return run_args(model, cm, &call, KINETIC_ENERGY, out, q, v)


cdef int k_potential(const Call* c, const double** ins, double** outs, double* work) noexcept nogil:
    cdef double* out = outs[0]
    cdef double h[3]
    world_placements(c.m, ins[0], work, False)
    total_first_moment(c.m, work, h)
    out[0] = -(c.g[0] * h[0] + c.g[1] * h[1] + c.g[2] * h[2])
    return 0


def potential_energy(model, q, *, out=None):
    """Gravitational potential energy -m g . com (compiled)."""
    cdef Call call
    cdef CompiledModel cm = prepare_call(&call, model)
    return run_args(model, cm, &call, POTENTIAL_ENERGY, out, q)


cdef int k_centroidal(const Call* c, const double** ins, double** outs, double* work) noexcept nogil:
    """Momentum of every body summed at the first body's origin, then moved to the center of mass."""
    cdef double* out = outs[0]
    cdef const CModel* m = c.m
    cdef double* X = work + RNEA_X * m.nb
    cdef double* V = work + RNEA_V * m.nb
    cdef double* oM = work + MOMENTUM_OM * m.nb
    cdef double f[6]
    cdef double t[6]
    cdef double h[3]
    cdef double hc[3]
    cdef double tot[6]
    cdef double Xl[16]
    cdef double ref[3]
    cdef double mass = m.total_mass
    cdef int i, p
    memset(tot, 0, 6 * sizeof(double))
    hc[0] = 0.0; hc[1] = 0.0; hc[2] = 0.0
    body_velocities(m, ins[0], ins[1], X, V)
    for i in range(m.nb):
        p = m.parents[i]
        if p >= 0:
            child_placement(oM + 16 * p, X + 16 * i, oM + 16 * i)
        else:  # (the sums about the first body's origin: center_root)
            memcpy(Xl, X + 16 * i, 16 * sizeof(double))
            center_root(i, Xl, ref)
            child_placement(NULL, Xl, oM + 16 * i)
        inertia_apply(m.inertias + 10 * i, V + 6 * i, f)
        act_force(oM + 16 * i, f, t)
        add6(tot, t)
        first_moment(m, i, oM + 16 * i, h)
        hc[0] += h[0]; hc[1] += h[1]; hc[2] += h[2]
    # com = hc / mass; angular momentum about the com: n - com x f
    if mass > 0.0:
        hc[0] /= mass; hc[1] /= mass; hc[2] /= mass
    out[0] = tot[0]; out[1] = tot[1]; out[2] = tot[2]
    out[3] = tot[3] - (hc[1] * tot[2] - hc[2] * tot[1])
    out[4] = tot[4] - (hc[2] * tot[0] - hc[0] * tot[2])
    out[5] = tot[5] - (hc[0] * tot[1] - hc[1] * tot[0])
    return 0


def centroidal_momentum(model, q, v, *, out=None):
    """Linear and angular momentum about the center of mass, world axes (compiled)."""
    cdef Call call
    cdef CompiledModel cm = prepare_mass_call(&call, model)
    return run_args(model, cm, &call, CENTROIDAL_MOMENTUM, out, q, v)


cdef enum:
    # The centroidal matrices' scratch: per body the world placement, the composite world
    # inertia (10), the world twist (6) and the composite inertia rate (V x*) Y - Y (V x)
    # (10); per dof its world column and the column's rate V x S.
    CM_OM = 0
    CM_YC = 16
    CM_V = 26
    CM_SYM = 32
    CM_PER_BODY = 42


cdef int _centroidal_matrix(const Call* c, const double* q, const double* v, double* out,
                            double* work) noexcept nogil:
    """A_G (v NULL) or its time derivative, 6 x nv row-major, in world axes: column j of
    A_O (momentum about the origin) is Yc_i S_j for j a dof of body i; A_G moves it to
    the centre of mass c ([f; n] -> [f; n - c x f]).  The rate: Sym_i S_j + Yc_i (V_i x
    S_j), moved the same way, minus c_dot x f with c_dot = p / mass (see the reference)."""
    cdef const CModel* m = c.m
    cdef int nb = m.nb, nv = m.nv, i, p, col, k, r
    cdef double* S = work + CM_PER_BODY * nb   # world columns, 6 per dof
    cdef double* B
    cdef double Xl[16]
    cdef double a[6]
    cdef double ad[6]
    cdef double t[6]
    cdef double com[3]
    cdef double cd[3]
    cdef double ref[3]
    cdef double mass = m.total_mass
    com[0] = 0.0; com[1] = 0.0; com[2] = 0.0
    cd[0] = 0.0; cd[1] = 0.0; cd[2] = 0.0
    cdef double sn[SINCOS_BLOCK]
    cdef double cs[SINCOS_BLOCK]
    for i in range(nb):
        B = work + CM_PER_BODY * i
        p = m.parents[i]
        loop_placement(m, i, q, sn, cs, Xl)
        if p < 0:
            center_root(i, Xl, ref)
        child_placement(work + CM_PER_BODY * p + CM_OM if p >= 0 else NULL, Xl, B + CM_OM)
        inertia_act(B + CM_OM, m.inertias + 10 * i, B + CM_YC)
        for col in range(m.nvj[i]):
            world_column(m, i, col, B + CM_OM, S + 6 * (m.v_idx[i] + col))
        if v != NULL:
            for r in range(6):
                B[CM_V + r] = work[CM_PER_BODY * p + CM_V + r] if p >= 0 else 0.0
            for col in range(m.nvj[i]):
                k = m.v_idx[i] + col
                for r in range(6):
                    B[CM_V + r] += S[6 * k + r] * v[k]
            velocity_variation(B + CM_YC, B + CM_V, B + CM_SYM)
    for i in range(nb - 1, -1, -1):
        B = work + CM_PER_BODY * i
        p = m.parents[i]
        if p < 0:
            com[0] += B[CM_YC + 1]; com[1] += B[CM_YC + 2]; com[2] += B[CM_YC + 3]
            continue
        for r in range(10):  # composites: inertia, and its rate
            work[CM_PER_BODY * p + CM_YC + r] += B[CM_YC + r]
            if v != NULL:
                work[CM_PER_BODY * p + CM_SYM + r] += B[CM_SYM + r]
    com[0] /= mass; com[1] /= mass; com[2] /= mass
    for i in range(nb):
        B = work + CM_PER_BODY * i
        for col in range(m.nvj[i]):
            k = m.v_idx[i] + col
            inertia_apply(B + CM_YC, S + 6 * k, a)
            if v == NULL:
                memcpy(ad, a, 6 * sizeof(double))
            else:
                cd[0] += a[0] * v[k] / mass; cd[1] += a[1] * v[k] / mass; cd[2] += a[2] * v[k] / mass
                inertia_apply(B + CM_SYM, S + 6 * k, ad)
                motion_cross(B + CM_V, S + 6 * k, t)
                inertia_apply(B + CM_YC, t, Xl)   # Xl: scratch, Yc (V x S)
                add6(ad, Xl)
            out[k] = ad[0]; out[nv + k] = ad[1]; out[2 * nv + k] = ad[2]
            out[3 * nv + k] = ad[3] - (com[1] * ad[2] - com[2] * ad[1])
            out[4 * nv + k] = ad[4] - (com[2] * ad[0] - com[0] * ad[2])
            out[5 * nv + k] = ad[5] - (com[0] * ad[1] - com[1] * ad[0])
            if v != NULL:  # the linear rows of A_G, kept for the c_dot term below
                S[6 * k] = a[0]; S[6 * k + 1] = a[1]; S[6 * k + 2] = a[2]
    if v != NULL:
        for k in range(nv):
            out[3 * nv + k] -= cd[1] * S[6 * k + 2] - cd[2] * S[6 * k + 1]
            out[4 * nv + k] -= cd[2] * S[6 * k] - cd[0] * S[6 * k + 2]
            out[5 * nv + k] -= cd[0] * S[6 * k + 1] - cd[1] * S[6 * k]
    return 0


cdef int k_centroidal_matrix(const Call* c, const double** ins, double** outs, double* work) noexcept nogil:
    return _centroidal_matrix(c, ins[0], NULL, outs[0], work)


cdef int k_centroidal_matrix_rate(const Call* c, const double** ins, double** outs, double* work) noexcept nogil:
    return _centroidal_matrix(c, ins[0], ins[1], outs[0], work)


def centroidal_momentum_matrix(model, q, *, out=None):
    """The centroidal momentum matrix A_G, centroidal_momentum = A_G v (compiled)."""
    cdef Call call
    cdef CompiledModel cm = prepare_mass_call(&call, model)
    return run_args(model, cm, &call, CENTROIDAL_MATRIX, out, q)


def centroidal_momentum_matrix_time_variation(model, q, v, *, out=None):
    """dA_G/dt along the motion with velocity v (compiled)."""
    cdef Call call
    cdef CompiledModel cm = prepare_mass_call(&call, model)
    return run_args(model, cm, &call, CENTROIDAL_MATRIX_RATE, out, q, v)


# ==========================================================================================
# The algorithms as the driver reads them: inputs, outputs, kernel, scratch, work
# ==========================================================================================
cdef Algorithm RNEA = algorithm(b"qvaf", ("q", "v", "a", "fext"), (b"v",), k_rnea, size(nb=RNEA_PER_BODY),
                               size(nb=40))
cdef Algorithm GRAVITY = algorithm(b"q", ("q",), (b"v",), k_gravity, size(nb=23), size(nb=20))
cdef Algorithm NONLINEAR_EFFECTS = algorithm(b"qv", ("q", "v"), (b"v",), k_rnea_nle, size(nb=RNEA_PER_BODY),
                                             size(nb=40))
cdef Algorithm CRBA = algorithm(b"q", ("q",), (b"vv",), k_crba, size(nb=CRBA_PER_BODY + 3, nv=12),
                                size(nb=30, nv_depth=15))
cdef Algorithm ABA = algorithm(b"qvvf", ("q", "v", "tau", "fext"), (b"v",), k_aba,
                               size(nb=ABA_PER_BODY, nv=13), size(nb=90))
cdef Algorithm CORIOLIS = algorithm(b"qv", ("q", "v"), (b"vv",), k_coriolis, size(nb=COR_PER_BODY, nv=12),
                                    size(nb=250, nv_depth=20))
cdef Algorithm KINETIC_ENERGY = algorithm(b"qv", ("q", "v"), (b"",), k_kinetic, size(nb=RNEA_A), size(nb=25))
cdef Algorithm POTENTIAL_ENERGY = algorithm(b"q", ("q",), (b"",), k_potential, size(nb=RNEA_V), size(nb=20))
cdef Algorithm CENTROIDAL_MOMENTUM = algorithm(b"qv", ("q", "v"), (b"6",), k_centroidal,
                                               size(nb=MOMENTUM_PER_BODY), size(nb=40))
cdef Algorithm CENTROIDAL_MATRIX = algorithm(b"q", ("q",), (b"6v",), k_centroidal_matrix,
                                             size(nb=CM_PER_BODY, nv=6), size(nb=100, nv=20))
cdef Algorithm CENTROIDAL_MATRIX_RATE = algorithm(b"qv", ("q", "v"), (b"6v",), k_centroidal_matrix_rate,
                                                  size(nb=CM_PER_BODY, nv=6), size(nb=160, nv=40))

# the block kernels (batches) and their scratch, LANES times the rows of _rnea_block etc.
set_block(RNEA, kb_rnea, size(nb=37 * LANES, nv=4 * LANES))
set_block(GRAVITY, kb_gravity, size(nb=37 * LANES, nv=4 * LANES))
set_block(NONLINEAR_EFFECTS, kb_nle, size(nb=37 * LANES, nv=4 * LANES))
# ABA's three passes over a block's 600 bytes per body and lane leave the cache near
# 1,500 bodies (8 MB): a batch of a 2,000-link chain in lanes measured as slow as one
# sample at a time, 1.3-2.3x slower at 3,000 (RNEA's two passes keep their lanes: 0.5x at 6,000)
set_block(ABA, kb_aba, size(nb=64 * LANES, nv=11 * LANES), False, 1 << 20)  # (stage, lanes_limit)
set_block(CRBA, kb_crba, size(nb=38 * LANES, nv=13 * LANES, nv2=1), stage=True)

# the public name of each algorithm (what a model with mimic joints is run through: rbd._coupled)
RNEA.name = "rnea"
GRAVITY.name = "gravity"
NONLINEAR_EFFECTS.name = "nonlinear_effects"
CRBA.name = "crba"
ABA.name = "aba"
CORIOLIS.name = "coriolis_matrix"
KINETIC_ENERGY.name = "kinetic_energy"
POTENTIAL_ENERGY.name = "potential_energy"
CENTROIDAL_MOMENTUM.name = "centroidal_momentum"
CENTROIDAL_MATRIX.name = "centroidal_momentum_matrix"
CENTROIDAL_MATRIX_RATE.name = "centroidal_momentum_matrix_time_variation"
