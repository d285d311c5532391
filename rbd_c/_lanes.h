/* Batched dynamics, several samples per instruction.

   A block of RBD_LANES samples is held as a structure of arrays: every number of a
   sample (a placement entry, a twist component, a joint coordinate) is a row of
   RBD_LANES doubles, one per sample ("lanes").  The kernels below loop over the
   bodies outside and over the lanes inside, in fixed-size loops over contiguous
   rows that the compiler turns into vector instructions.  Each lane does the same
   arithmetic in the same order as the one-sample kernels (rbd_c/_dynamics.pyx).

   The kernels are compiled from rbd_c/_lanes_body.h for the baseline of the target
   (SSE2 on x86-64, NEON on ARM64) and, on x86-64 with gcc, for AVX2 + FMA and for
   AVX-512; the caller picks a set at run time (rbd_lanes_best; a narrower one can be forced).  The
   joint placements (sines, cosines, quaternions) are computed per lane by the
   callers with the one-sample joint code, so every joint kind stays in one place. */
#ifndef RBD_LANES_H
#define RBD_LANES_H

#include <math.h>
#include <string.h>
#include "_sincos.h"

#define RBD_LANES 8

/* A joint's motion subspace as the block kernels read it: per joint kind, per column, the unit motion it is (0..5) or RBD_AXIS_ANGULAR / RBD_AXIS_LINEAR for a
   column along the joint's axis (revolute, prismatic). */
#define RBD_AXIS_ANGULAR -1
#define RBD_AXIS_LINEAR -2

/* the joint kinds the kernels place themselves (codes of rbd_c/_joints.pxd, checked at import) */
#define RBD_K_REV_X 0
#define RBD_K_REV_Y 1
#define RBD_K_REV_Z 2
#define RBD_K_REV 3
#define RBD_K_PRISM 4
#define RBD_K_PLANAR 6
#define RBD_K_FREE 7

typedef struct {
    int nb, nv;
    const int *parents, *kinds, *q_idx, *v_idx, *nvj, *d2_idx;
    const int *cols;            /* (number of kinds, 6) as above, by joint kind */
    const int *basis;           /* (number of kinds,) 0, 1, 2: revolute about that axis of its frame; -1 otherwise */
    const double *axes;         /* (nb, 3) */
    const double *placements;   /* (nb, 16) */
    const double *inertias;     /* (nb, 10) */
    const double *armature;     /* (nv,) */
    int has_armature;
    const double* singular_tol;  /* (nb,) */
    /* the dofs' tree (CModel's): parent dof, start of its run, ancestors (nearest first) */
    const int *dof_parents, *dof_run_start, *dof_ancestors, *dof_ancestors_start;
} rbd_lanes_model;

/* The fields of a contact in a contact table (CONTACT_* of rbd_c/_model.pxd, checked at
   import) and the code of local_world_aligned axes (REF_LWA) */
#define RBD_CONTACT_FRAME 0
#define RBD_CONTACT_BODY 1
#define RBD_CONTACT_DIM 2
#define RBD_CONTACT_REF 3
#define RBD_CONTACT_ROW 4
#define RBD_CONTACT_FIELDS 5
#define RBD_REF_LWA 2

/* A call's rigid contacts as the contact kernel reads them */
typedef struct {
    const int *table;              /* RBD_CONTACT_FIELDS ints per contact */
    int ncontacts, nrows;
    const double *frame_offsets;   /* (nframes, 16): each frame's body_from_frame */
    double regularization, restitution, rank_tol;
} rbd_lanes_contacts;

/* Entry r of the fixed vector whose growth under a contact system's inverse is the rank test
   the pivots miss (rbd.contacts._rank_probe's): steps of the golden ratio */
static inline double rbd_rank_probe(int r) { return 0.5 + fmod((r + 1) * 0.6180339887498949, 1.0); }

#define RBD_SFX(name) name##_base
#include "_lanes_body.h"
#undef RBD_SFX

#if defined(__GNUC__) && !defined(__clang__) && (defined(__x86_64__) || defined(__i386__))
#define RBD_LANES_AVX2 1
#pragma GCC push_options
#pragma GCC target("avx2,fma")
#define RBD_SFX(name) name##_avx2
#include "_lanes_body.h"
#undef RBD_SFX
#pragma GCC pop_options
#pragma GCC push_options
#pragma GCC target("avx512f,avx512dq,avx512vl,avx2,fma,prefer-vector-width=512")
#define RBD_SFX(name) name##_avx512
#include "_lanes_body.h"
#undef RBD_SFX
#pragma GCC pop_options
#else
#define RBD_LANES_AVX2 0
#endif

#if !RBD_LANES_AVX2  /* (never chosen: rbd_lanes_best() is 0) */
#define rbd_place_lanes_avx2 rbd_place_lanes_base
#define rbd_rnea_lanes_avx2 rbd_rnea_lanes_base
#define rbd_crba_lanes_avx2 rbd_crba_lanes_base
#define rbd_aba_lanes_avx2 rbd_aba_lanes_base
#define rbd_rnea_derivatives_lanes_avx2 rbd_rnea_derivatives_lanes_base
#define rbd_minv_lanes_avx2 rbd_minv_lanes_base
#define rbd_contacts_lanes_avx2 rbd_contacts_lanes_base
#define rbd_matvec_lanes_avx2 rbd_matvec_lanes_base
#define rbd_place_lanes_avx512 rbd_place_lanes_base
#define rbd_rnea_lanes_avx512 rbd_rnea_lanes_base
#define rbd_crba_lanes_avx512 rbd_crba_lanes_base
#define rbd_aba_lanes_avx512 rbd_aba_lanes_base
#define rbd_rnea_derivatives_lanes_avx512 rbd_rnea_derivatives_lanes_base
#define rbd_minv_lanes_avx512 rbd_minv_lanes_base
#define rbd_contacts_lanes_avx512 rbd_contacts_lanes_base
#define rbd_matvec_lanes_avx512 rbd_matvec_lanes_base
#endif

/* x_l[e] = rows[e * RBD_LANES + l] for the first n lanes and e < size: a block's results
   back to n samples (x_l = x + l * stride), reading the rows once, in order. */
static void rbd_lanes_scatter(int n, const double* rows, Py_ssize_t size, double* x, Py_ssize_t stride) {
    double* out[RBD_LANES];
    for (int l = 0; l < n; l++)
        out[l] = x + l * stride;
    for (Py_ssize_t e = 0; e < size; e++) {
        const double* r = rows + e * RBD_LANES;
        for (int l = 0; l < n; l++)
            out[l][e] = r[l];
    }
}

/* One instruction set's kernels. */
typedef struct {
    void (*place)(const rbd_lanes_model*, const double*, double*);
    void (*rnea)(const rbd_lanes_model*, const double*, const double*, const double*, const double*,
                 const double*, double*, double*);
    void (*crba)(const rbd_lanes_model*, const double*, double* const*, double*);
    void (*aba)(const rbd_lanes_model*, const double*, const double*, const double*, const double*,
                const double*, double*, double*, int*);
    void (*rnea_derivatives)(const rbd_lanes_model*, const double*, const double*, const double*, const double*,
                             const double*, double* const*, double* const*, double* const*, double*);
    int (*minv)(const rbd_lanes_model*, const double*, double*, double*);
    int (*contacts)(const rbd_lanes_model*, const rbd_lanes_contacts*, const double*, const double*, const double*,
                    const double*, const double*, double*, double*, double*);
    void (*matvec)(int, const double*, const double*, double*);
    const char* name;
} rbd_lanes_set;

static const rbd_lanes_set rbd_lanes_sets[3] = {
    {rbd_place_lanes_base, rbd_rnea_lanes_base, rbd_crba_lanes_base, rbd_aba_lanes_base,
     rbd_rnea_derivatives_lanes_base, rbd_minv_lanes_base, rbd_contacts_lanes_base, rbd_matvec_lanes_base, "baseline"},
    {rbd_place_lanes_avx2, rbd_rnea_lanes_avx2, rbd_crba_lanes_avx2, rbd_aba_lanes_avx2,
     rbd_rnea_derivatives_lanes_avx2, rbd_minv_lanes_avx2, rbd_contacts_lanes_avx2, rbd_matvec_lanes_avx2, "avx2"},
    {rbd_place_lanes_avx512, rbd_rnea_lanes_avx512, rbd_crba_lanes_avx512, rbd_aba_lanes_avx512,
     rbd_rnea_derivatives_lanes_avx512, rbd_minv_lanes_avx512, rbd_contacts_lanes_avx512, rbd_matvec_lanes_avx512, "avx512"},
};

/* The widest set this machine runs: 2 (AVX-512 F/DQ/VL + FMA), 1 (AVX2 + FMA) or 0. */
static int rbd_lanes_best(void) {
#if RBD_LANES_AVX2
    __builtin_cpu_init();
    if (!__builtin_cpu_supports("avx2") || !__builtin_cpu_supports("fma"))
        return 0;
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl"))
        return 2;
    return 1;
#else
    return 0;
#endif
}

#endif
