#ifndef RBD_COLUMNS_H
#define RBD_COLUMNS_H
/* The frame Jacobian's columns of revolute joints about a basis axis of their frames (most
   robots' joints), up to four at a time: the four columns are the four lanes of each
   vector, so that each of J's six rows gets their numbers in one store, where one column at
   a time took six scattered stores and a full motion transform through the world each. */
#include <string.h>

/* Columns col .. col + n - 1 (1 <= n <= 4) of the row-major (6, nv) frame Jacobian J, for n
   bodies in that order (one column each) whose joints turn about axis a[k] (0, 1, 2) of their
   frames, from their world placements oM[k] (entries n .. 3 repeat a valid body; not
   written).  A column is [p x r; r], with r the body's axis and p its origin, both seen in
   the reference: r = A R[:, a], p = A (t - o), with A = R_f^T, o = t_f in local axes, A = I,
   o = t_f in local_world_aligned ones, A = I, o = 0 in the world's (A row-major, 3 x 3).
   The difference t - o is taken before anything multiplies it. */
static inline void rbd_revolute_columns(int n, const double* const* oM, const int* a, const double* A,
                                        const double* o, double* J, int nv, int col) {
    double dx[4], dy[4], dz[4], rx[4], ry[4], rz[4];
    double row[6][4];
    int k, r;
    for (k = 0; k < 4; k++) {
        const double* M = oM[k];
        dx[k] = M[3] - o[0];
        dy[k] = M[7] - o[1];
        dz[k] = M[11] - o[2];
        rx[k] = M[a[k]];
        ry[k] = M[4 + a[k]];
        rz[k] = M[8 + a[k]];
    }
    for (k = 0; k < 4; k++) {  /* lanes: the compiler's vectors */
        const double px = A[0] * dx[k] + A[1] * dy[k] + A[2] * dz[k];
        const double py = A[3] * dx[k] + A[4] * dy[k] + A[5] * dz[k];
        const double pz = A[6] * dx[k] + A[7] * dy[k] + A[8] * dz[k];
        const double wx = A[0] * rx[k] + A[1] * ry[k] + A[2] * rz[k];
        const double wy = A[3] * rx[k] + A[4] * ry[k] + A[5] * rz[k];
        const double wz = A[6] * rx[k] + A[7] * ry[k] + A[8] * rz[k];
        row[0][k] = py * wz - pz * wy;
        row[1][k] = pz * wx - px * wz;
        row[2][k] = px * wy - py * wx;
        row[3][k] = wx;
        row[4][k] = wy;
        row[5][k] = wz;
    }
    for (r = 0; r < 6; r++) {  /* (constant sizes: a copy of n numbers went one at a time) */
        if (n == 4)
            memcpy(J + (size_t)r * nv + col, row[r], 4 * sizeof(double));
        else if (n == 3)
            memcpy(J + (size_t)r * nv + col, row[r], 3 * sizeof(double));
        else
            for (k = 0; k < n; k++) J[(size_t)r * nv + col + k] = row[r][k];
    }
}
#endif
