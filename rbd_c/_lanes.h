/* Batched dynamics, several samples per instruction.

   A block of RBD_LANES samples is held as a structure of arrays: every number of a
   sample (a placement entry, a twist component, a joint coordinate) is a row of
   RBD_LANES doubles, one per sample ("lanes").  The kernels below loop over the
   bodies outside and over the lanes inside, in fixed-size loops over contiguous
   rows that the compiler turns into vector instructions.  Each lane does the same
   arithmetic in the same order as the one-sample kernels (rbd_c/_dynamics.pyx).

   The kernels are compiled twice from rbd_c/_lanes_body.h: for the baseline of the
   target (SSE2 on x86-64, NEON on ARM64) and, on x86-64 with gcc, for AVX2 + FMA.
   The caller picks one at run time (rbd_lanes_have_avx2; the baseline can be forced).  The
   joint placements (sines, cosines, quaternions) are computed per lane by the
   callers with the one-sample joint code, so every joint kind stays in one place. */
#ifndef RBD_LANES_H
#define RBD_LANES_H

#include <math.h>
#include <string.h>

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
    double singular_tol;
} rbd_lanes_model;

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
#else
#define RBD_LANES_AVX2 0
#endif

/* Whether this machine runs the AVX2 + FMA kernels. */
static int rbd_lanes_have_avx2(void) {
#if RBD_LANES_AVX2
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
#else
    return 0;
#endif
}

#if !RBD_LANES_AVX2  /* (never called: rbd_lanes_have_avx2() is 0) */
#define rbd_place_lanes_avx2 rbd_place_lanes_base
#define rbd_rnea_lanes_avx2 rbd_rnea_lanes_base
#define rbd_crba_lanes_avx2 rbd_crba_lanes_base
#define rbd_aba_lanes_avx2 rbd_aba_lanes_base
#endif

#endif
