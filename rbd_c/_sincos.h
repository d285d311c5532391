#ifndef RBD_SINCOS_H
#define RBD_SINCOS_H
/* sin and cos of a joint angle, for the joint placements of the one-sample kernels
   (_joints.pxd) and of the SIMD lanes (_lanes_body.h): one formula for both. */
#include <math.h>

/* For |x| < 1e5: Cody-Waite reduction by pi/2 (pi/2 in three parts, exact products in
   that range) and fdlibm's polynomials on [-pi/4, pi/4]; within an ulp or two of libm's.
   Branch-free, so a loop over lanes vectorises it. */
static inline void rbd_sincos_reduced(double x, double* sn, double* cs) {
    const double fn = (x * 6.36619772367581382433e-01 + 6755399441055744.0) - 6755399441055744.0;
    const double r = ((x - fn * 1.57079632673412561417e+00) - fn * 6.07710050630396597660e-11)
                     - fn * 2.02226624871116645580e-21;
    const double z = r * r;
    const double sr = r + r * z * (-1.66666666666666324348e-01 + z * (8.33333333332248946124e-03
                      + z * (-1.98412698298579493134e-04 + z * (2.75573137070700676789e-06
                      + z * (-2.50507602534068634195e-08 + z * 1.58969099521155010221e-10)))));
    const double cr = 1.0 - 0.5 * z + z * z * (4.16666666666666019037e-02 + z * (-1.38888888888741095749e-03
                      + z * (2.48015872894767294178e-05 + z * (-2.75573143513906633035e-07
                      + z * (2.08757232129817482790e-09 + z * -1.13596475577881948265e-11)))));
    const int k = (int)fn;
    const double s1 = (k & 1) ? cr : sr, c1 = (k & 1) ? sr : cr;
    *sn = (k & 2) ? -s1 : s1;
    *cs = ((k + 1) & 2) ? -c1 : c1;
}

/* Whether rbd_sincos_reduced serves x: |x| < 1e5 (not NaN). */
static inline int rbd_sincos_near(double x) {
    return fabs(x) < 1e5;
}

/* Any x: libm's sin and cos beyond 1e5 (and for NaN and infinities). */
static inline void rbd_sincos(double x, double* sn, double* cs) {
    if (rbd_sincos_near(x)) {
        rbd_sincos_reduced(x, sn, cs);
    } else {
        *sn = sin(x);
        *cs = cos(x);
    }
}
/* sn[k], cs[k] = sin and cos of x[k] for k < n (n a constant where it is inlined: the
   SIMD lanes, a block of joint angles): the polynomial branch-free across the n, and,
   when some |x[k]| >= 1e5, rbd_sincos one by one (the same numbers for the others,
   libm's for that one). */
static inline void rbd_sincos_n(int n, const double* x, double* sn, double* cs) {
    int far = 0;
    for (int k = 0; k < n; k++) rbd_sincos_reduced(x[k], sn + k, cs + k);
    for (int k = 0; k < n; k++) far |= !rbd_sincos_near(x[k]);
    if (far)
        for (int k = 0; k < n; k++) rbd_sincos(x[k], sn + k, cs + k);
}
#endif
