#ifndef RBD_SYM6_H
#define RBD_SYM6_H
/* Symmetric 6x6 matrices packed as their 21 upper entries row by row (rbd_sym6 of
   _articulated.pxd), for the articulated-body algorithm (through _articulated.pxd) and
   the C kernels built on articulated inertias (_factor.pxd): one formula each. */

/* S = the 6x6 matrix of the 10-number inertia Y = [m, h, Ixx, Ixy, Ixz, Iyy, Iyz, Izz]:
   [[m I, -[h]x], [[h]x, I_origin]] */
static inline void rbd_sym6_from_inertia(const double* Y, double* S) {
    const double m = Y[0], hx = Y[1], hy = Y[2], hz = Y[3];
    S[0] = m;  S[1] = 0.0; S[2] = 0.0; S[3] = 0.0; S[4] = hz;  S[5] = -hy;
    S[6] = m;  S[7] = 0.0; S[8] = -hz; S[9] = 0.0; S[10] = hx;
    S[11] = m; S[12] = hy; S[13] = -hx; S[14] = 0.0;
    S[15] = Y[4]; S[16] = Y[5]; S[17] = Y[6];
    S[18] = Y[7]; S[19] = Y[8];
    S[20] = Y[9];
}

/* out = S x */
static inline void rbd_sym6_matvec(const double* S, const double* x, double* out) {
    out[0] = S[0] * x[0] + S[1] * x[1] + S[2] * x[2] + S[3] * x[3] + S[4] * x[4] + S[5] * x[5];
    out[1] = S[1] * x[0] + S[6] * x[1] + S[7] * x[2] + S[8] * x[3] + S[9] * x[4] + S[10] * x[5];
    out[2] = S[2] * x[0] + S[7] * x[1] + S[11] * x[2] + S[12] * x[3] + S[13] * x[4] + S[14] * x[5];
    out[3] = S[3] * x[0] + S[8] * x[1] + S[12] * x[2] + S[15] * x[3] + S[16] * x[4] + S[17] * x[5];
    out[4] = S[4] * x[0] + S[9] * x[1] + S[13] * x[2] + S[16] * x[3] + S[18] * x[4] + S[19] * x[5];
    out[5] = S[5] * x[0] + S[10] * x[1] + S[14] * x[2] + S[17] * x[3] + S[19] * x[4] + S[20] * x[5];
}

/* out = S [0; w]: S times a motion with no linear part (a revolute joint's column) */
static inline void rbd_sym6_matvec_angular(const double* S, const double* w, double* out) {
    out[0] = S[3] * w[0] + S[4] * w[1] + S[5] * w[2];
    out[1] = S[8] * w[0] + S[9] * w[1] + S[10] * w[2];
    out[2] = S[12] * w[0] + S[13] * w[1] + S[14] * w[2];
    out[3] = S[15] * w[0] + S[16] * w[1] + S[17] * w[2];
    out[4] = S[16] * w[0] + S[18] * w[1] + S[19] * w[2];
    out[5] = S[17] * w[0] + S[19] * w[1] + S[20] * w[2];
}

/* S -= alpha u u^T */
static inline void rbd_sym6_rank1_sub(double* S, const double* u, double alpha) {
    int n = 0;
    for (int i = 0; i < 6; i++) {
        const double ai = alpha * u[i];
        for (int j = i; j < 6; j++, n++) S[n] -= ai * u[j];
    }
}

/* P += S - alpha u u^T: a body's articulated inertia after its last dof, passed on to
   its parent in one pass (written out: storing S and reading it back as vectors stalls
   on the store forwarding, 10-25% of the factor's time) */
static inline void rbd_sym6_rank1_sub_add(double* P, const double* S, const double* u, double alpha) {
    const double a0 = alpha * u[0], a1 = alpha * u[1], a2 = alpha * u[2];
    const double a3 = alpha * u[3], a4 = alpha * u[4], a5 = alpha * u[5];
    P[0] += S[0] - a0 * u[0]; P[1] += S[1] - a0 * u[1]; P[2] += S[2] - a0 * u[2];
    P[3] += S[3] - a0 * u[3]; P[4] += S[4] - a0 * u[4]; P[5] += S[5] - a0 * u[5];
    P[6] += S[6] - a1 * u[1]; P[7] += S[7] - a1 * u[2]; P[8] += S[8] - a1 * u[3];
    P[9] += S[9] - a1 * u[4]; P[10] += S[10] - a1 * u[5];
    P[11] += S[11] - a2 * u[2]; P[12] += S[12] - a2 * u[3]; P[13] += S[13] - a2 * u[4];
    P[14] += S[14] - a2 * u[5];
    P[15] += S[15] - a3 * u[3]; P[16] += S[16] - a3 * u[4]; P[17] += S[17] - a3 * u[5];
    P[18] += S[18] - a4 * u[4]; P[19] += S[19] - a4 * u[5];
    P[20] += S[20] - a5 * u[5];
}
#endif
