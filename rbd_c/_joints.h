#ifndef RBD_JOINTS_H
#define RBD_JOINTS_H
/* The joint kinds' codes and table, and how each kind places its body, in C (the rest of
   each kind is in _joints.pxd).  The placement is here so that the passes can inline it:
   as a call it hands its 4x4 back through memory, stored a double or two at a time, and
   the pass's compose, loading 4 doubles at once, then waits for the stores to retire
   (store forwarding fails), once per body. */
#include <math.h>
#include <string.h>
#include "_sincos.h"
#include "_fast.h"  /* RBD_ALWAYS_INLINE */

#if defined(__GNUC__) || defined(__clang__)
#define RBD_NOINLINE static __attribute__((noinline))
#define RBD_OUT_OF_LINE static __attribute__((noinline, unused))  /* (unused: no warning where so) */
#else
#define RBD_NOINLINE static
#define RBD_OUT_OF_LINE static inline
#endif

enum {
    RBD_REVOLUTE_X, RBD_REVOLUTE_Y, RBD_REVOLUTE_Z, RBD_REVOLUTE, RBD_PRISMATIC, RBD_SPHERICAL,
    RBD_PLANAR, RBD_FREE, RBD_KIND_COUNT
};

/* One row per kind (same order as the codes): nq, nv, where the unit quaternion starts in
   the joint's q (-1: none), the axis (0, 1, 2) of a revolute joint about a basis vector
   (-1: other), and the unit columns of S (-1: S uses the joint's axis). */
typedef struct { int nq, nv, quaternion, basis; int cols[6]; } rbd_joint_kind_row;
static const rbd_joint_kind_row rbd_joint_table[] = {
    /* REVOLUTE_X */ {1, 1, -1, 0, {3, -1, -1, -1, -1, -1}},
    /* REVOLUTE_Y */ {1, 1, -1, 1, {4, -1, -1, -1, -1, -1}},
    /* REVOLUTE_Z */ {1, 1, -1, 2, {5, -1, -1, -1, -1, -1}},
    /* REVOLUTE   */ {1, 1, -1, -1, {-1, -1, -1, -1, -1, -1}},
    /* PRISMATIC  */ {1, 1, -1, -1, {-1, -1, -1, -1, -1, -1}},
    /* SPHERICAL  */ {4, 3, 0, -1, {3, 4, 5, -1, -1, -1}},
    /* PLANAR     */ {3, 3, -1, -1, {0, 1, 5, -1, -1, -1}},
    /* FREE       */ {7, 6, 3, -1, {0, 1, 2, 3, 4, 5}},
};

/* ---- unit quaternions [w, x, y, z] ---------------------------------------------------- */

/* The largest |component| of q (|q| lies between it and twice it). */
static inline double rbd_quat_largest(const double* q) {
    double a = fabs(q[0]), b = fabs(q[1]), c = fabs(q[2]), d = fabs(q[3]);
    if (b > a) a = b;
    if (d > c) c = d;
    return a > c ? a : c;
}

/* out = q / |q|, scaled by its largest component first so that no square overflows or
   underflows (a zero q gives zeros); out may be q. */
static inline void rbd_quat_unit(const double* q, double* out) {
    const double s = rbd_quat_largest(q);
    double n;
    if (s == 0.0) {
        out[0] = out[1] = out[2] = out[3] = 0.0;
        return;
    }
    out[0] = q[0] / s; out[1] = q[1] / s; out[2] = q[2] / s; out[3] = q[3] / s;
    n = sqrt(out[0] * out[0] + out[1] * out[1] + out[2] * out[2] + out[3] * out[3]);
    out[0] /= n; out[1] /= n; out[2] /= n; out[3] /= n;
}

/* Rotation matrix (3x3 row-major) of the quaternion q, of any non-zero length: the unit
   formula with 2 / |q|^2 for its 2 (one division where normalising q takes eight and a
   square root, on the path of every floating base's placement), or with q made unit
   first (rbd_quat_unit) when |q|^2 would overflow or lose digits. */
static inline void rbd_quat_to_rot(const double* q, double* R) {
    double w = q[0], x = q[1], y = q[2], z = q[3], s;
    const double big = rbd_quat_largest(q);
    if (big > 1e-100 && big < 1e100) {
        s = 2.0 / (w * w + x * x + y * y + z * z);
    } else {
        double u[4];
        rbd_quat_unit(q, u);
        w = u[0]; x = u[1]; y = u[2]; z = u[3];
        s = 2.0;
    }
    const double xx = s * x * x, yy = s * y * y, zz = s * z * z;
    const double xy = s * x * y, xz = s * x * z, yz = s * y * z;
    const double wx = s * w * x, wy = s * w * y, wz = s * w * z;
    R[0] = 1.0 - yy - zz; R[1] = xy - wz;       R[2] = xz + wy;
    R[3] = xy + wz;       R[4] = 1.0 - xx - zz; R[5] = yz - wx;
    R[6] = xz - wy;       R[7] = yz + wx;       R[8] = 1.0 - xx - yy;
}

/* ---- placements: out = P @ joint_transform, P the joint's fixed placement (4x4 row-major) */

/* out = P @ (R, 0): the rotation block of P times the 3x3 row-major R, P's translation. */
static inline void rbd_place_rot(const double* P, const double* R, double* out) {
    for (int r = 0; r < 3; r++) {
        out[4 * r + 0] = P[4 * r] * R[0] + P[4 * r + 1] * R[3] + P[4 * r + 2] * R[6];
        out[4 * r + 1] = P[4 * r] * R[1] + P[4 * r + 1] * R[4] + P[4 * r + 2] * R[7];
        out[4 * r + 2] = P[4 * r] * R[2] + P[4 * r + 1] * R[5] + P[4 * r + 2] * R[8];
        out[4 * r + 3] = P[4 * r + 3];
    }
}

/* Add P's rotation applied to (x, y, z) to out's translation. */
static inline void rbd_place_shift(const double* P, double x, double y, double z, double* out) {
    out[3] += P[0] * x + P[1] * y + P[2] * z;
    out[7] += P[4] * x + P[5] * y + P[6] * z;
    out[11] += P[8] * x + P[9] * y + P[10] * z;
}

/* out = P @ (R, 0), R the rotation of cosine c and sine s about the basis vector
   e_axis (0: x, 1: y, 2: z): each row of P turned in the plane of its other two places
   (i, j) = (1, 2), (2, 0), (0, 1): out_i = c p_i + s p_j, out_j = c p_j - s p_i.  Four
   numbers at a time, as the row times [c or 1] plus the row with p_i and p_j swapped times
   [s, -s or 0] (P is finite: the untouched places are p + 0 exactly). */
RBD_ALWAYS_INLINE void rbd_place_turn(const double* P, int axis, double c, double s, double* out) {
#if defined(__GNUC__) && !defined(__clang__)
    for (int r = 0; r < 3; r++) {
        const rbd_v4 p = rbd_load4(P + 4 * r);
        rbd_v4 row;
        if (axis == 2) {
            row = p * (rbd_v4){c, c, 1.0, 1.0} + __builtin_shuffle(p, (rbd_i4){1, 0, 2, 3}) * (rbd_v4){s, -s, 0.0, 0.0};
        } else if (axis == 0) {
            row = p * (rbd_v4){1.0, c, c, 1.0} + __builtin_shuffle(p, (rbd_i4){0, 2, 1, 3}) * (rbd_v4){0.0, s, -s, 0.0};
        } else {
            row = p * (rbd_v4){c, 1.0, c, 1.0} + __builtin_shuffle(p, (rbd_i4){2, 1, 0, 3}) * (rbd_v4){-s, 0.0, s, 0.0};
        }
        memcpy(out + 4 * r, &row, sizeof row);
    }
#else
    const int i = (axis + 1) % 3, j = (axis + 2) % 3;
    for (int r = 0; r < 3; r++) {
        const double pi = P[4 * r + i], pj = P[4 * r + j];
        memcpy(out + 4 * r, P + 4 * r, 4 * sizeof(double));
        out[4 * r + i] = c * pi + s * pj;
        out[4 * r + j] = c * pj - s * pi;
    }
#endif
}

/* out = P @ (I, x u) (4x4): a prismatic joint along the unit axis u, at x. */
static inline void rbd_prismatic_placement(const double* P, const double* u, double x, double* out) {
    memcpy(out, P, 12 * sizeof(double));  /* (a loop here was copied a double at a time) */
    rbd_place_shift(P, u[0] * x, u[1] * x, u[2] * x, out);
    out[12] = 0.0; out[13] = 0.0; out[14] = 0.0; out[15] = 1.0;
}

/* The kinds with a quaternion or several coordinates (out of line: they are rare, and
   inlining them everywhere would keep the passes from inlining the revolute ones).
   u: the joint's axis. */
RBD_NOINLINE void rbd_other_placement(int kind, const double* P, const double* u, const double* qj,
                                      double* out) {
    double R[9], s, c;
    out[12] = 0.0; out[13] = 0.0; out[14] = 0.0; out[15] = 1.0;
    if (kind == RBD_SPHERICAL) {
        rbd_quat_to_rot(qj, R);
        rbd_place_rot(P, R, out);
    } else if (kind == RBD_PLANAR) {
        rbd_sincos(qj[2], &s, &c);
        rbd_place_turn(P, 2, c, s, out);
        rbd_place_shift(P, qj[0], qj[1], 0.0, out);
    } else if (kind == RBD_FREE) {
        rbd_quat_to_rot(qj + 3, R);
        rbd_place_rot(P, R, out);
        rbd_place_shift(P, qj[0], qj[1], qj[2], out);
    } else {  /* not a kind (models are validated): a NaN placement, refused by the driver */
        for (int r = 0; r < 12; r++) out[r] = NAN;
    }
}

/* out = parent_from_body = P @ joint_transform(qj) (4x4 row-major) for a joint of the kind,
   axis u (revolute and prismatic joints) and coordinates qj; *sn and *cs: the sine and
   cosine of qj[0] (read by the revolute kinds only). */
RBD_ALWAYS_INLINE void rbd_joint_placement_sc(int kind, const double* P, const double* u, const double* qj,
                                              const double* sn, const double* cs, double* out) {
    double s, c, t, R[9];
    if (kind == RBD_PRISMATIC) {  /* (inline: small, and common: a gripper's fingers, a linear axis) */
        rbd_prismatic_placement(P, u, qj[0], out);
        return;
    }
    if (kind > RBD_REVOLUTE) {
        rbd_other_placement(kind, P, u, qj, out);
        return;
    }
    s = *sn;
    c = *cs;
    out[12] = 0.0; out[13] = 0.0; out[14] = 0.0; out[15] = 1.0;
    if (kind < RBD_REVOLUTE) {  /* about x, y or z */
        rbd_place_turn(P, kind - RBD_REVOLUTE_X, c, s, out);
    } else {  /* about the unit axis u (Rodrigues) */
        t = 1.0 - c;
        R[0] = c + t * u[0] * u[0];
        R[1] = t * u[0] * u[1] - s * u[2];
        R[2] = t * u[0] * u[2] + s * u[1];
        R[3] = t * u[0] * u[1] + s * u[2];
        R[4] = c + t * u[1] * u[1];
        R[5] = t * u[1] * u[2] - s * u[0];
        R[6] = t * u[0] * u[2] - s * u[1];
        R[7] = t * u[1] * u[2] + s * u[0];
        R[8] = c + t * u[2] * u[2];
        rbd_place_rot(P, R, out);
    }
}

/* rbd_joint_placement_sc, with the sine and cosine of qj[0] computed here. */
RBD_ALWAYS_INLINE void rbd_joint_placement(int kind, const double* P, const double* u, const double* qj,
                                           double* out) {
    double s = 0.0, c = 1.0;
    if (kind <= RBD_REVOLUTE) rbd_sincos(qj[0], &s, &c);
    rbd_joint_placement_sc(kind, P, u, qj, &s, &c, out);
}

/* The sines and cosines of the angles q[idx[0]], ..., q[idx[RBD_SINCOS_BLOCK - 1]]: one
   polynomial vectorised across a block of bodies, where each revolute placement would
   evaluate its own, and the placements of a pass no longer wait on them.  The compiled
   model's angle_q gives, per body, its revolute joint's angle (another kind: any valid
   index), padded to whole blocks, and angle_blocks whether a block has a revolute joint.
   Out of line, as the compiler chose for it when it was written out: inlined into the
   passes it made gravity 4-13% slower.  Blocks of 8 (two independent 4-wide chains in
   AVX2): a pass waits on half as many blocks as with 4, forward kinematics 5-14% faster
   (Panda, Talos, Solo12); blocks of 16 were slower again. */
#define RBD_SINCOS_BLOCK 8
RBD_OUT_OF_LINE void rbd_block_sincos(const int* idx, const double* q, double* S, double* C) {
    double x[RBD_SINCOS_BLOCK];
    for (int k = 0; k < RBD_SINCOS_BLOCK; k++) x[k] = q[idx[k]];
    rbd_sincos_n(RBD_SINCOS_BLOCK, x, S, C);
}

/* rbd_joint_placement of body i of a compiled model m (a macro: an inline wrapper around an
   always-inlined body would itself be too large for the compiler to inline). */
#define RBD_BODY_PLACEMENT(m, i, qj, out) \
    rbd_joint_placement((m)->kinds[i], (m)->placements + 16 * (i), (m)->axes + 3 * (i), (qj), (out))

/* rbd_joint_placement of body i with its angle's sine and cosine given (*S, *C; read by
   the revolute kinds only), e.g. from rbd_block_sincos over a chain's bodies. */
#define RBD_PLACEMENT_SC(m, i, qj, S, C, out) \
    rbd_joint_placement_sc((m)->kinds[i], (m)->placements + 16 * (i), (m)->axes + 3 * (i), (qj), (S), (C), (out))

/* The same inside a loop over the bodies i = 0, 1, ..., nb - 1 in order, for the whole q:
   the sines and cosines come from S and C (RBD_SINCOS_BLOCK doubles each, the loop's),
   filled by rbd_block_sincos at the start of each block of bodies. */
#define RBD_LOOP_PLACEMENT(m, i, q, S, C, out) do { \
        const int k_ = (i) & (RBD_SINCOS_BLOCK - 1); \
        if (k_ == 0 && (m)->angle_blocks[(i) / RBD_SINCOS_BLOCK]) \
            rbd_block_sincos((m)->angle_q + (i), (q), (S), (C)); \
        RBD_PLACEMENT_SC(m, i, (q) + (m)->q_idx[i], (S) + k_, (C) + k_, out); \
    } while (0)
#endif
