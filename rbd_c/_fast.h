#ifndef RBD_FAST_H
#define RBD_FAST_H
/* RBD_FAST compiles a function for x86-64-v3 (AVX2 with FMA) and for the baseline, the
   copy chosen when the module loads (never -march=native: an installed package runs on
   any machine).  FMA may change the last bits between the two. */
#if defined(__GNUC__) && !defined(__clang__) && (defined(__x86_64__) || defined(__i386__))
#define RBD_FAST __attribute__((target_clones("arch=x86-64-v3", "default")))
#else
#define RBD_FAST
#endif
#endif
