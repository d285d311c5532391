#ifndef RBD_FAST_H
#define RBD_FAST_H
#include <string.h>
/* RBD_FAST compiles a function for x86-64-v3 (AVX2 with FMA) and for the baseline, the
   copy chosen when the module loads (never -march=native: an installed package runs on
   any machine).  FMA may change the last bits between the two. */
#if defined(__GNUC__) && !defined(__clang__) && (defined(__x86_64__) || defined(__i386__))
#define RBD_FAST __attribute__((target_clones("arch=x86-64-v3", "default")))
#else
#define RBD_FAST
#endif

/* inlined even where the compiler would not: a helper of an RBD_FAST function is then
   compiled for each of its instruction sets */
#if defined(__GNUC__) || defined(__clang__)
#define RBD_ALWAYS_INLINE static inline __attribute__((always_inline))
#else
#define RBD_ALWAYS_INLINE static inline
#endif

#if defined(__GNUC__) || defined(__clang__)
/* four doubles as one vector (two SSE2 halves on the baseline), loaded from anywhere; and
   four 64-bit integers, for their bits (masks, shuffle indices) */
typedef double rbd_v4 __attribute__((vector_size(32)));
typedef long long rbd_i4 __attribute__((vector_size(32)));
static inline rbd_v4 rbd_load4(const double* p) {
    rbd_v4 v;
    memcpy(&v, p, sizeof v);
    return v;
}
#endif

/* dst[0..3] += src[0..3] as one 4-wide load, add and store: a child adding into its
   parent's 4 numbers one at a time makes the parent, which later loads them 2 or 4 at a
   time, wait until those stores retire (store forwarding fails). */
static inline void rbd_add4(double* dst, const double* src) {
#if defined(__GNUC__) || defined(__clang__)
    rbd_v4 a = rbd_load4(dst) + rbd_load4(src);
    memcpy(dst, &a, sizeof a);
#else
    dst[0] += src[0]; dst[1] += src[1]; dst[2] += src[2]; dst[3] += src[3];
#endif
}
#endif
