/* The block kernels of rbd_c/_lanes.h, included once per instruction set with
   RBD_SFX(name) naming that set's copy.  Storage: a quantity of k numbers is k rows
   of RBD_LANES doubles (row r, lane l at [r * RBD_LANES + l]); a transform is its 12
   top entries (row-major 3x4), a motion or force 6 rows (linear first), an inertia
   the 10 numbers [m, h, I] of rbd_c/_kernels.pxd, a symmetric 6x6 its 21 upper
   entries.  Each formula is the one-sample kernel's, lane by lane. */

#define L RBD_LANES
/* A loop over the lanes.  LANE_SIMD also tells the compiler that the lanes never depend on
   each other (`omp simd`): where rows of one work array are read and written, it cannot prove
   they do not overlap and left most of these loops scalar (measured: ABA's instructions -37%,
   the RNEA derivatives' -51%).  LANE is the plain loop, kept where the compiler's own unrolling
   did better than the forced loop (M^-1: LANE_SIMD doubled its instructions) and for loops
   that reduce over the lanes. */
#define RBD_PRAGMA(x) _Pragma(#x)
#define LANE for (int l = 0; l < L; l++)
#define LANE_SIMD RBD_PRAGMA(omp simd) for (int l = 0; l < L; l++)
#define R(x, r) (x)[(r) * L + l]

/* out = Ad_X^-1 m  (inv_act_motion) */
static inline void RBD_SFX(ln_inv_act_motion)(const double* restrict X, const double* restrict m,
                                              double* restrict out) {
    LANE_SIMD {
        double y0 = R(m, 3), y1 = R(m, 4), y2 = R(m, 5);
        double t0 = R(X, 3), t1 = R(X, 7), t2 = R(X, 11);
        double u0 = R(m, 0) - (t1 * y2 - t2 * y1);
        double u1 = R(m, 1) - (t2 * y0 - t0 * y2);
        double u2 = R(m, 2) - (t0 * y1 - t1 * y0);
        R(out, 0) = R(X, 0) * u0 + R(X, 4) * u1 + R(X, 8) * u2;
        R(out, 1) = R(X, 1) * u0 + R(X, 5) * u1 + R(X, 9) * u2;
        R(out, 2) = R(X, 2) * u0 + R(X, 6) * u1 + R(X, 10) * u2;
        R(out, 3) = R(X, 0) * y0 + R(X, 4) * y1 + R(X, 8) * y2;
        R(out, 4) = R(X, 1) * y0 + R(X, 5) * y1 + R(X, 9) * y2;
        R(out, 5) = R(X, 2) * y0 + R(X, 6) * y1 + R(X, 10) * y2;
    }
}

/* out (+)= Ad_X x for the pair (x: part that picks up the translation, y: rotated only):
   out_y = R y, out_x = R x + t x (R y); the shared form of act_motion and act_force. */
static inline void RBD_SFX(ln_act_pair)(const double* restrict X, const double* restrict x,
                                        const double* restrict y, double* restrict ox,
                                        double* restrict oy, int add) {
    LANE_SIMD {
        double x0 = R(x, 0), x1 = R(x, 1), x2 = R(x, 2), y0 = R(y, 0), y1 = R(y, 1), y2 = R(y, 2);
        double t0 = R(X, 3), t1 = R(X, 7), t2 = R(X, 11);
        double a0 = R(X, 0) * y0 + R(X, 1) * y1 + R(X, 2) * y2;
        double a1 = R(X, 4) * y0 + R(X, 5) * y1 + R(X, 6) * y2;
        double a2 = R(X, 8) * y0 + R(X, 9) * y1 + R(X, 10) * y2;
        double b0 = R(X, 0) * x0 + R(X, 1) * x1 + R(X, 2) * x2 + t1 * a2 - t2 * a1;
        double b1 = R(X, 4) * x0 + R(X, 5) * x1 + R(X, 6) * x2 + t2 * a0 - t0 * a2;
        double b2 = R(X, 8) * x0 + R(X, 9) * x1 + R(X, 10) * x2 + t0 * a1 - t1 * a0;
        if (add) {
            R(ox, 0) += b0; R(ox, 1) += b1; R(ox, 2) += b2;
            R(oy, 0) += a0; R(oy, 1) += a1; R(oy, 2) += a2;
        } else {
            R(ox, 0) = b0; R(ox, 1) = b1; R(ox, 2) = b2;
            R(oy, 0) = a0; R(oy, 1) = a1; R(oy, 2) = a2;
        }
    }
}

/* out += m1 x m2  (motion_cross, added) */
static inline void RBD_SFX(ln_motion_cross_add)(const double* restrict m1, const double* restrict m2,
                                                double* restrict out) {
    LANE_SIMD {
        double v0 = R(m1, 0), v1 = R(m1, 1), v2 = R(m1, 2), w0 = R(m1, 3), w1 = R(m1, 4), w2 = R(m1, 5);
        double x0 = R(m2, 0), x1 = R(m2, 1), x2 = R(m2, 2), y0 = R(m2, 3), y1 = R(m2, 4), y2 = R(m2, 5);
        R(out, 0) += v1 * y2 - v2 * y1 + w1 * x2 - w2 * x1;
        R(out, 1) += v2 * y0 - v0 * y2 + w2 * x0 - w0 * x2;
        R(out, 2) += v0 * y1 - v1 * y0 + w0 * x1 - w1 * x0;
        R(out, 3) += w1 * y2 - w2 * y1;
        R(out, 4) += w2 * y0 - w0 * y2;
        R(out, 5) += w0 * y1 - w1 * y0;
    }
}

/* out = Y a (+ v x* (Y v) when v is given): a body's force in RNEA (inertia_apply and
   inertia_cross_term); Y is one inertia for every lane. */
static inline void RBD_SFX(ln_body_force)(const double* restrict Y, const double* restrict a,
                                          const double* restrict v, double* restrict out) {
    const double mass = Y[0], h0 = Y[1], h1 = Y[2], h2 = Y[3];
    const double I0 = Y[4], I1 = Y[5], I2 = Y[6], I3 = Y[7], I4 = Y[8], I5 = Y[9];
    LANE_SIMD {
        double v0 = R(a, 0), v1 = R(a, 1), v2 = R(a, 2), w0 = R(a, 3), w1 = R(a, 4), w2 = R(a, 5);
        R(out, 0) = mass * v0 - (h1 * w2 - h2 * w1);
        R(out, 1) = mass * v1 - (h2 * w0 - h0 * w2);
        R(out, 2) = mass * v2 - (h0 * w1 - h1 * w0);
        R(out, 3) = h1 * v2 - h2 * v1 + I0 * w0 + I1 * w1 + I2 * w2;
        R(out, 4) = h2 * v0 - h0 * v2 + I1 * w0 + I3 * w1 + I4 * w2;
        R(out, 5) = h0 * v1 - h1 * v0 + I2 * w0 + I4 * w1 + I5 * w2;
    }
    if (v == NULL)
        return;
    LANE_SIMD {
        double v0 = R(v, 0), v1 = R(v, 1), v2 = R(v, 2), w0 = R(v, 3), w1 = R(v, 4), w2 = R(v, 5);
        double b0 = h1 * w2 - h2 * w1, b1 = h2 * w0 - h0 * w2, b2 = h0 * w1 - h1 * w0;
        double f0 = mass * v0 - b0, f1 = mass * v1 - b1, f2 = mass * v2 - b2;
        double n0 = h1 * v2 - h2 * v1 + I0 * w0 + I1 * w1 + I2 * w2;
        double n1 = h2 * v0 - h0 * v2 + I1 * w0 + I3 * w1 + I4 * w2;
        double n2 = h0 * v1 - h1 * v0 + I2 * w0 + I4 * w1 + I5 * w2;
        R(out, 0) += w1 * f2 - w2 * f1;
        R(out, 1) += w2 * f0 - w0 * f2;
        R(out, 2) += w0 * f1 - w1 * f0;
        R(out, 3) += w1 * n2 - w2 * n1 - (v1 * b2 - v2 * b1);
        R(out, 4) += w2 * n0 - w0 * n2 - (v2 * b0 - v0 * b2);
        R(out, 5) += w0 * n1 - w1 * n0 - (v0 * b1 - v1 * b0);
    }
}

/* out += (column c of S_i) x (x: one row) */
static inline void RBD_SFX(ln_motion_add_column)(const rbd_lanes_model* m, int i, int c, const double* restrict x,
                                                 double* restrict out) {
    const int col = m->cols[6 * m->kinds[i] + c];
    if (col >= 0) {
        double* o = out + col * L;
        LANE_SIMD o[l] += x[l];
    } else {
        const double* u = m->axes + 3 * i;
        double* o = out + (col == RBD_AXIS_ANGULAR ? 3 : 0) * L;
        LANE_SIMD {
            o[l] += u[0] * x[l]; o[L + l] += u[1] * x[l]; o[2 * L + l] += u[2] * x[l];
        }
    }
}

/* out += S_i x (x: nv_i rows)  (joint_motion_add) */
static inline void RBD_SFX(ln_motion_add)(const rbd_lanes_model* m, int i, const double* restrict x,
                                          double* restrict out) {
    for (int c = 0; c < m->nvj[i]; c++)
        RBD_SFX(ln_motion_add_column)(m, i, c, x + c * L, out);
}

/* out = S_i^T f (nv_i rows)  (joint_force) */
static inline void RBD_SFX(ln_joint_force)(const rbd_lanes_model* m, int i, const double* restrict f,
                                           double* restrict out) {
    const int* cols = m->cols + 6 * m->kinds[i];
    const double* u = m->axes + 3 * i;
    for (int c = 0; c < m->nvj[i]; c++) {
        double* o = out + c * L;
        if (cols[c] >= 0) {
            const double* fc = f + cols[c] * L;
            LANE_SIMD o[l] = fc[l];
        } else {
            const double* fc = f + (cols[c] == RBD_AXIS_ANGULAR ? 3 : 0) * L;
            LANE_SIMD o[l] = u[0] * fc[l] + u[1] * fc[L + l] + u[2] * fc[2 * L + l];
        }
    }
}

/* sn, cs = sin and cos of each lane of x (_sincos.h: the one-sample kernels' formula) */
static inline void RBD_SFX(ln_sincos)(const double* restrict x, double* restrict sn, double* restrict cs) {
    rbd_sincos_n(L, x, sn, cs);
}

/* X (12 rows per body) = parent_from_body of the bodies whose joint is revolute,
   prismatic or planar (joint_placement, lane by lane), from the coordinates Q (nq
   rows); the other bodies are left to the caller. */
static void RBD_SFX(rbd_place_lanes)(const rbd_lanes_model* m, const double* Q, double* X) {
    double c[L], s[L];
    for (int i = 0; i < m->nb; i++) {
        const int k = m->kinds[i];
        const double* P = m->placements + 16 * i;
        const double* q = Q + m->q_idx[i] * L;
        double* out = X + 12 * L * i;
        if (k == RBD_K_REV_X || k == RBD_K_REV_Y || k == RBD_K_REV_Z || k == RBD_K_REV)
            RBD_SFX(ln_sincos)(q, s, c);
        else if (k == RBD_K_PLANAR)
            RBD_SFX(ln_sincos)(q + 2 * L, s, c);
        if (k == RBD_K_REV_X) {
            for (int r = 0; r < 3; r++) LANE_SIMD {
                R(out, 4 * r) = P[4 * r];
                R(out, 4 * r + 1) = c[l] * P[4 * r + 1] + s[l] * P[4 * r + 2];
                R(out, 4 * r + 2) = c[l] * P[4 * r + 2] - s[l] * P[4 * r + 1];
                R(out, 4 * r + 3) = P[4 * r + 3];
            }
        } else if (k == RBD_K_REV_Y) {
            for (int r = 0; r < 3; r++) LANE_SIMD {
                R(out, 4 * r) = c[l] * P[4 * r] - s[l] * P[4 * r + 2];
                R(out, 4 * r + 1) = P[4 * r + 1];
                R(out, 4 * r + 2) = s[l] * P[4 * r] + c[l] * P[4 * r + 2];
                R(out, 4 * r + 3) = P[4 * r + 3];
            }
        } else if (k == RBD_K_REV_Z || k == RBD_K_PLANAR) {
            for (int r = 0; r < 3; r++) LANE_SIMD {
                R(out, 4 * r) = c[l] * P[4 * r] + s[l] * P[4 * r + 1];
                R(out, 4 * r + 1) = c[l] * P[4 * r + 1] - s[l] * P[4 * r];
                R(out, 4 * r + 2) = P[4 * r + 2];
                R(out, 4 * r + 3) = P[4 * r + 3];
            }
            if (k == RBD_K_PLANAR) LANE_SIMD {
                double x = R(q, 0), y = R(q, 1);
                R(out, 3) += P[0] * x + P[1] * y;
                R(out, 7) += P[4] * x + P[5] * y;
                R(out, 11) += P[8] * x + P[9] * y;
            }
        } else if (k == RBD_K_REV) {
            const double* u = m->axes + 3 * i;
            LANE_SIMD {
                double t = 1.0 - c[l], Rm[9];
                Rm[0] = c[l] + t * u[0] * u[0];
                Rm[1] = t * u[0] * u[1] - s[l] * u[2];
                Rm[2] = t * u[0] * u[2] + s[l] * u[1];
                Rm[3] = t * u[0] * u[1] + s[l] * u[2];
                Rm[4] = c[l] + t * u[1] * u[1];
                Rm[5] = t * u[1] * u[2] - s[l] * u[0];
                Rm[6] = t * u[0] * u[2] - s[l] * u[1];
                Rm[7] = t * u[1] * u[2] + s[l] * u[0];
                Rm[8] = c[l] + t * u[2] * u[2];
                for (int r = 0; r < 3; r++) {
                    R(out, 4 * r) = P[4 * r] * Rm[0] + P[4 * r + 1] * Rm[3] + P[4 * r + 2] * Rm[6];
                    R(out, 4 * r + 1) = P[4 * r] * Rm[1] + P[4 * r + 1] * Rm[4] + P[4 * r + 2] * Rm[7];
                    R(out, 4 * r + 2) = P[4 * r] * Rm[2] + P[4 * r + 1] * Rm[5] + P[4 * r + 2] * Rm[8];
                    R(out, 4 * r + 3) = P[4 * r + 3];
                }
            }
        } else if (k == RBD_K_PRISM) {
            const double* u = m->axes + 3 * i;
            for (int r = 0; r < 12; r++) LANE_SIMD R(out, r) = P[r];
            LANE_SIMD {
                double x = u[0] * R(q, 0), y = u[1] * R(q, 0), z = u[2] * R(q, 0);
                R(out, 3) += P[0] * x + P[1] * y + P[2] * z;
                R(out, 7) += P[4] * x + P[5] * y + P[6] * z;
                R(out, 11) += P[8] * x + P[9] * y + P[10] * z;
            }
        }
    }
}

/* RNEA on a block: tau (nv rows) from the placements X (12 rows per body), v, a (nv
   rows each; NULL: zero) and fext (6 rows per body; NULL: none); work: 18 rows per body. */
static void RBD_SFX(rbd_rnea_lanes)(const rbd_lanes_model* m, const double* g, const double* X,
                                    const double* v, const double* a, const double* fext,
                                    double* tau, double* work) {
    const int nb = m->nb;
    double* V = work;
    double* A = work + 6 * L * nb;
    double* F = work + 12 * L * nb;
    double a0[6 * L], vJ[6 * L];
    LANE {
        R(a0, 0) = -g[0]; R(a0, 1) = -g[1]; R(a0, 2) = -g[2];
        R(a0, 3) = 0.0; R(a0, 4) = 0.0; R(a0, 5) = 0.0;
    }
    for (int i = 0; i < nb; i++) {
        const int p = m->parents[i], vi = m->v_idx[i];
        const double* xi = X + 12 * L * i;
        double* Vi = V + 6 * L * i;
        double* Ai = A + 6 * L * i;
        double* Fi = F + 6 * L * i;
        RBD_SFX(ln_inv_act_motion)(xi, p >= 0 ? A + 6 * L * p : a0, Ai);
        if (a != NULL)
            RBD_SFX(ln_motion_add)(m, i, a + vi * L, Ai);
        if (v != NULL) {
            memset(vJ, 0, sizeof(vJ));
            RBD_SFX(ln_motion_add)(m, i, v + vi * L, vJ);
            if (p >= 0) {
                RBD_SFX(ln_inv_act_motion)(xi, V + 6 * L * p, Vi);
                for (int r = 0; r < 6 * L; r++)
                    Vi[r] += vJ[r];
                RBD_SFX(ln_motion_cross_add)(Vi, vJ, Ai);
            } else {
                memcpy(Vi, vJ, sizeof(vJ));
            }
        }
        RBD_SFX(ln_body_force)(m->inertias + 10 * i, Ai, v != NULL ? Vi : NULL, Fi);
        if (fext != NULL)
            for (int r = 0; r < 6 * L; r++)
                Fi[r] -= fext[6 * L * i + r];
    }
    for (int i = nb - 1; i >= 0; i--) {
        const int p = m->parents[i];
        double* Fi = F + 6 * L * i;
        RBD_SFX(ln_joint_force)(m, i, Fi, tau + m->v_idx[i] * L);
        if (p >= 0) {
            double* Fp = F + 6 * L * p;
            RBD_SFX(ln_act_pair)(X + 12 * L * i, Fi + 3 * L, Fi, Fp + 3 * L, Fp, 1);
        }
    }
    if (a != NULL && m->has_armature)
        for (int k = 0; k < m->nv; k++)
            LANE R(tau, k) += m->armature[k] * R(a, k);
}

/* out = A B for transforms (se3_compose, 12 rows each) */
static inline void RBD_SFX(ln_compose)(const double* restrict A, const double* restrict B, double* restrict out) {
    LANE_SIMD {
        for (int r = 0; r < 3; r++) {
            double a0 = R(A, 4 * r), a1 = R(A, 4 * r + 1), a2 = R(A, 4 * r + 2);
            R(out, 4 * r) = a0 * R(B, 0) + a1 * R(B, 4) + a2 * R(B, 8);
            R(out, 4 * r + 1) = a0 * R(B, 1) + a1 * R(B, 5) + a2 * R(B, 9);
            R(out, 4 * r + 2) = a0 * R(B, 2) + a1 * R(B, 6) + a2 * R(B, 10);
            R(out, 4 * r + 3) = R(A, 4 * r + 3) + a0 * R(B, 3) + a1 * R(B, 7) + a2 * R(B, 11);
        }
    }
}

/* out = the inertia Y (one for every lane) in the frame of the transforms M (inertia_act) */
static inline void RBD_SFX(ln_inertia_act)(const double* restrict M, const double* restrict Y,
                                           double* restrict out) {
    const double mass = Y[0], y1 = Y[1], y2 = Y[2], y3 = Y[3];
    const double sxx = Y[4], sxy = Y[5], sxz = Y[6], syy = Y[7], syz = Y[8], szz = Y[9];
    LANE_SIMD {
        double a00 = R(M, 0), a01 = R(M, 1), a02 = R(M, 2), a10 = R(M, 4), a11 = R(M, 5), a12 = R(M, 6);
        double a20 = R(M, 8), a21 = R(M, 9), a22 = R(M, 10);
        double p0 = R(M, 3), p1 = R(M, 7), p2 = R(M, 11);
        double h0 = a00 * y1 + a01 * y2 + a02 * y3;   /* R h */
        double h1 = a10 * y1 + a11 * y2 + a12 * y3;
        double h2 = a20 * y1 + a21 * y2 + a22 * y3;
        double t00 = a00 * sxx + a01 * sxy + a02 * sxz, t01 = a00 * sxy + a01 * syy + a02 * syz;
        double t02 = a00 * sxz + a01 * syz + a02 * szz, t10 = a10 * sxx + a11 * sxy + a12 * sxz;
        double t11 = a10 * sxy + a11 * syy + a12 * syz, t12 = a10 * sxz + a11 * syz + a12 * szz;
        double t20 = a20 * sxx + a21 * sxy + a22 * sxz, t21 = a20 * sxy + a21 * syy + a22 * syz;
        double t22 = a20 * sxz + a21 * syz + a22 * szz;
        double I0 = t00 * a00 + t01 * a01 + t02 * a02, I1 = t00 * a10 + t01 * a11 + t02 * a12;
        double I2 = t00 * a20 + t01 * a21 + t02 * a22, I3 = t10 * a10 + t11 * a11 + t12 * a12;
        double I4 = t10 * a20 + t11 * a21 + t12 * a22, I5 = t20 * a20 + t21 * a21 + t22 * a22;
        /* parallel axes (_translation_term) */
        double diag = mass * (p0 * p0 + p1 * p1 + p2 * p2) + 2.0 * (p0 * h0 + p1 * h1 + p2 * h2);
        double k0 = mass * p0 + h0, k1 = mass * p1 + h1, k2 = mass * p2 + h2;
        R(out, 0) = mass;
        R(out, 1) = mass * p0 + h0;
        R(out, 2) = mass * p1 + h1;
        R(out, 3) = mass * p2 + h2;
        R(out, 4) = I0 + (diag - p0 * k0 - h0 * p0);
        R(out, 5) = I1 + (-p0 * k1 - h0 * p1);
        R(out, 6) = I2 + (-p0 * k2 - h0 * p2);
        R(out, 7) = I3 + (diag - p1 * k1 - h1 * p1);
        R(out, 8) = I4 + (-p1 * k2 - h1 * p2);
        R(out, 9) = I5 + (diag - p2 * k2 - h2 * p2);
    }
}

/* out = Y m for inertias Y that differ by lane (inertia_apply) */
static inline void RBD_SFX(ln_inertia_apply)(const double* restrict Y, const double* restrict m,
                                             double* restrict out) {
    LANE_SIMD {
        double v0 = R(m, 0), v1 = R(m, 1), v2 = R(m, 2), w0 = R(m, 3), w1 = R(m, 4), w2 = R(m, 5);
        double mass = R(Y, 0), h0 = R(Y, 1), h1 = R(Y, 2), h2 = R(Y, 3);
        R(out, 0) = mass * v0 - (h1 * w2 - h2 * w1);
        R(out, 1) = mass * v1 - (h2 * w0 - h0 * w2);
        R(out, 2) = mass * v2 - (h0 * w1 - h1 * w0);
        R(out, 3) = h1 * v2 - h2 * v1 + R(Y, 4) * w0 + R(Y, 5) * w1 + R(Y, 6) * w2;
        R(out, 4) = h2 * v0 - h0 * v2 + R(Y, 5) * w0 + R(Y, 7) * w1 + R(Y, 8) * w2;
        R(out, 5) = h0 * v1 - h1 * v0 + R(Y, 6) * w0 + R(Y, 8) * w1 + R(Y, 9) * w2;
    }
}

/* out = column col of body i's motion subspace in world axes (world_column), oM its
   world placement */
static inline void RBD_SFX(ln_world_column)(const rbd_lanes_model* m, int i, int col, const double* restrict oM,
                                            double* restrict out) {
    const int kind = m->kinds[i], a = m->basis[kind], c = m->cols[6 * kind + col];
    if (a >= 0) {
        LANE_SIMD {
            double r0 = R(oM, a), r1 = R(oM, 4 + a), r2 = R(oM, 8 + a);
            R(out, 3) = r0; R(out, 4) = r1; R(out, 5) = r2;
            R(out, 0) = R(oM, 7) * r2 - R(oM, 11) * r1;
            R(out, 1) = R(oM, 11) * r0 - R(oM, 3) * r2;
            R(out, 2) = R(oM, 3) * r1 - R(oM, 7) * r0;
        }
        return;
    }
    double s[6] = {0.0, 0.0, 0.0, 0.0, 0.0, 0.0};
    if (c >= 0) {
        s[c] = 1.0;
    } else {
        const double* u = m->axes + 3 * i;
        int o = c == RBD_AXIS_ANGULAR ? 3 : 0;
        s[o] = u[0]; s[o + 1] = u[1]; s[o + 2] = u[2];
    }
    LANE_SIMD {  /* act_motion with a constant motion s */
        double t0 = R(oM, 3), t1 = R(oM, 7), t2 = R(oM, 11);
        double a0 = R(oM, 0) * s[3] + R(oM, 1) * s[4] + R(oM, 2) * s[5];
        double a1 = R(oM, 4) * s[3] + R(oM, 5) * s[4] + R(oM, 6) * s[5];
        double a2 = R(oM, 8) * s[3] + R(oM, 9) * s[4] + R(oM, 10) * s[5];
        R(out, 0) = R(oM, 0) * s[0] + R(oM, 1) * s[1] + R(oM, 2) * s[2] + t1 * a2 - t2 * a1;
        R(out, 1) = R(oM, 4) * s[0] + R(oM, 5) * s[1] + R(oM, 6) * s[2] + t2 * a0 - t0 * a2;
        R(out, 2) = R(oM, 8) * s[0] + R(oM, 9) * s[1] + R(oM, 10) * s[2] + t0 * a1 - t1 * a0;
        R(out, 3) = a0; R(out, 4) = a1; R(out, 5) = a2;
    }
}

/* out = a root body's placement X with the origin moved to the first body's (center_root
   of rbd_c/_passes.pxd): X's translation minus the first body's, X0 (12 rows each) */
static inline void RBD_SFX(ln_center_root)(const double* restrict X, const double* restrict X0,
                                           double* restrict out) {
    memcpy(out, X, 12 * L * sizeof(double));
    for (int r = 3; r < 12; r += 4)
        LANE_SIMD R(out, r) -= R(X0, r);
}

/* CRBA's first step on a block (crba_world_terms): each body's world placement oM (12 rows)
   and inertia in world axes Yc (10 rows), each dof's world column J (6 rows), from the
   placements X (12 rows per body) */
static void RBD_SFX(ln_crba_world_terms)(const rbd_lanes_model* m, const double* X, double* oM, double* Yc,
                                         double* J) {
    const int nb = m->nb;
    for (int i = 0; i < nb; i++) {
        const int p = m->parents[i];
        if (p >= 0)
            RBD_SFX(ln_compose)(oM + 12 * L * p, X + 12 * L * i, oM + 12 * L * i);
        else
            RBD_SFX(ln_center_root)(X + 12 * L * i, X, oM + 12 * L * i);
        RBD_SFX(ln_inertia_act)(oM + 12 * L * i, m->inertias + 10 * i, Yc + 10 * L * i);
        for (int col = 0; col < m->nvj[i]; col++)
            RBD_SFX(ln_world_column)(m, i, col, oM + 12 * L * i, J + 6 * L * (m->v_idx[i] + col));
    }
}

/* out = m1 x m2  (motion_cross) */
static inline void RBD_SFX(ln_motion_cross)(const double* restrict m1, const double* restrict m2,
                                            double* restrict out) {
    LANE_SIMD {
        double v0 = R(m1, 0), v1 = R(m1, 1), v2 = R(m1, 2), w0 = R(m1, 3), w1 = R(m1, 4), w2 = R(m1, 5);
        double x0 = R(m2, 0), x1 = R(m2, 1), x2 = R(m2, 2), y0 = R(m2, 3), y1 = R(m2, 4), y2 = R(m2, 5);
        R(out, 0) = v1 * y2 - v2 * y1 + w1 * x2 - w2 * x1;
        R(out, 1) = v2 * y0 - v0 * y2 + w2 * x0 - w0 * x2;
        R(out, 2) = v0 * y1 - v1 * y0 + w0 * x1 - w1 * x0;
        R(out, 3) = w1 * y2 - w2 * y1;
        R(out, 4) = w2 * y0 - w0 * y2;
        R(out, 5) = w0 * y1 - w1 * y0;
    }
}

/* out = m x* f  (force_cross) */
static inline void RBD_SFX(ln_force_cross)(const double* restrict m, const double* restrict f,
                                           double* restrict out) {
    LANE_SIMD {
        double v0 = R(m, 0), v1 = R(m, 1), v2 = R(m, 2), w0 = R(m, 3), w1 = R(m, 4), w2 = R(m, 5);
        double f0 = R(f, 0), f1 = R(f, 1), f2 = R(f, 2), n0 = R(f, 3), n1 = R(f, 4), n2 = R(f, 5);
        R(out, 0) = w1 * f2 - w2 * f1;
        R(out, 1) = w2 * f0 - w0 * f2;
        R(out, 2) = w0 * f1 - w1 * f0;
        R(out, 3) = w1 * n2 - w2 * n1 + v1 * f2 - v2 * f1;
        R(out, 4) = w2 * n0 - w0 * n2 + v2 * f0 - v0 * f2;
        R(out, 5) = w0 * n1 - w1 * n0 + v0 * f1 - v1 * f0;
    }
}

/* (V x*) Y - Y (V x) as an inertia (0, g, N)  (velocity_variation) */
static inline void RBD_SFX(ln_velocity_variation)(const double* restrict Y, const double* restrict V,
                                                  double* restrict out) {
    LANE_SIMD {
        double mass = R(Y, 0), h0 = R(Y, 1), h1 = R(Y, 2), h2 = R(Y, 3);
        double v0 = R(V, 0), v1 = R(V, 1), v2 = R(V, 2), w0 = R(V, 3), w1 = R(V, 4), w2 = R(V, 5);
        double xx = R(Y, 4), xy = R(Y, 5), xz = R(Y, 6), yy = R(Y, 7), yz = R(Y, 8), zz = R(Y, 9);
        R(out, 0) = 0.0;
        R(out, 1) = mass * v0 + w1 * h2 - w2 * h1;
        R(out, 2) = mass * v1 + w2 * h0 - w0 * h2;
        R(out, 3) = mass * v2 + w0 * h1 - w1 * h0;
        double a00 = w1 * xz - w2 * xy, a01 = w1 * yz - w2 * yy, a02 = w1 * zz - w2 * yz;
        double a10 = w2 * xx - w0 * xz, a11 = w2 * xy - w0 * yz, a12 = w2 * xz - w0 * zz;
        double a20 = w0 * xy - w1 * xx, a21 = w0 * yy - w1 * xy, a22 = w0 * yz - w1 * xz;
        double vh = v0 * h0 + v1 * h1 + v2 * h2;
        R(out, 4) = 2.0 * a00 - (2.0 * h0 * v0 - 2.0 * vh);
        R(out, 5) = a01 + a10 - (h0 * v1 + v0 * h1);
        R(out, 6) = a02 + a20 - (h0 * v2 + v0 * h2);
        R(out, 7) = 2.0 * a11 - (2.0 * h1 * v1 - 2.0 * vh);
        R(out, 8) = a12 + a21 - (h1 * v2 + v1 * h2);
        R(out, 9) = 2.0 * a22 - (2.0 * h2 * v2 - 2.0 * vh);
    }
}

/* S -= (d U) U^T lane by lane, the 21 rows of a symmetric 6x6 (sym6_rank1_sub; d = 1 / pivot) */
static inline void RBD_SFX(ln_sym6_rank1_sub)(double* restrict S, const double* restrict U,
                                              const double* restrict d) {
    for (int r = 0; r < 6; r++) {
        double du[L];
        LANE_SIMD du[l] = d[l] * R(U, r);
        for (int c = r; c < 6; c++, S += L) {
            const double* uc = U + c * L;
            LANE_SIMD S[l] -= du[l] * uc[l];
        }
    }
}

/* y += x a lane by lane for motions and forces of 6 rows */
static inline void RBD_SFX(ln_axpy6)(const double* restrict a, const double* restrict x, double* restrict y) {
    for (int r = 0; r < 6; r++)
        LANE_SIMD R(y, r) += R(x, r) * a[l];
}

/* val = x . y for motions and forces of 6 rows (dot6) */
static inline void RBD_SFX(ln_dot6)(const double* restrict x, const double* restrict y, double* restrict val) {
    LANE_SIMD val[l] = R(x, 0) * R(y, 0) + R(x, 1) * R(y, 1) + R(x, 2) * R(y, 2) + R(x, 3) * R(y, 3)
                  + R(x, 4) * R(y, 4) + R(x, 5) * R(y, 5);
}

/* x = (x - y) dinv lane by lane: a pivot's unknown from its right-hand side x */
static inline void RBD_SFX(ln_pivot_solve)(const double* restrict y, const double* restrict dinv,
                                           double* restrict x) {
    LANE_SIMD x[l] = (x[l] - y[l]) * dinv[l];
}

/* Whether body i's joint is a free joint with no dof before it (a floating base, _free_base):
   its block of M comes from its composite inertia, without its columns. */
static inline int RBD_SFX(ln_free_base)(const rbd_lanes_model* m, int i) {
    return m->kinds[i] == RBD_K_FREE && m->dof_parents[m->v_idx[i]] < 0;
}

/* CRBA's first step on a block (k_crba's forward pass): each body's world placement oM
   (12 rows, origin at the first body's), its origin's offset from its parent's D (3 rows,
   from the local translation), its inertia in world axes at its own origin Yc (10 rows),
   and each dof's column at the world origin J and at its body's origin S (6 rows each) */
static void RBD_SFX(ln_crba_local_terms)(const rbd_lanes_model* m, const double* X, double* oM, double* D,
                                          double* Yc, double* J, double* S) {
    const int nb = m->nb;
    for (int i = 0; i < nb; i++) {
        const int p = m->parents[i];
        double* o = oM + 12 * L * i;
        if (p >= 0) {
            const double* P = oM + 12 * L * p;
            const double* x = X + 12 * L * i;
            double* d = D + 3 * L * i;
            RBD_SFX(ln_compose)(P, x, o);
            for (int r = 0; r < 3; r++)
                LANE_SIMD R(d, r) = R(P, 4 * r) * R(x, 3) + R(P, 4 * r + 1) * R(x, 7) + R(P, 4 * r + 2) * R(x, 11);
        } else {
            RBD_SFX(ln_center_root)(X + 12 * L * i, X, o);
        }
        const double* Y = m->inertias + 10 * i;
        double* y = Yc + 10 * L * i;
        const double mass = Y[0], h0 = Y[1], h1 = Y[2], h2 = Y[3];
        const double sxx = Y[4], sxy = Y[5], sxz = Y[6], syy = Y[7], syz = Y[8], szz = Y[9];
        LANE_SIMD {  /* m, R h, R I R^T */
            double a00 = R(o, 0), a01 = R(o, 1), a02 = R(o, 2), a10 = R(o, 4), a11 = R(o, 5), a12 = R(o, 6);
            double a20 = R(o, 8), a21 = R(o, 9), a22 = R(o, 10);
            double t00 = a00 * sxx + a01 * sxy + a02 * sxz, t01 = a00 * sxy + a01 * syy + a02 * syz;
            double t02 = a00 * sxz + a01 * syz + a02 * szz, t10 = a10 * sxx + a11 * sxy + a12 * sxz;
            double t11 = a10 * sxy + a11 * syy + a12 * syz, t12 = a10 * sxz + a11 * syz + a12 * szz;
            double t20 = a20 * sxx + a21 * sxy + a22 * sxz, t21 = a20 * sxy + a21 * syy + a22 * syz;
            double t22 = a20 * sxz + a21 * syz + a22 * szz;
            R(y, 0) = mass;
            R(y, 1) = a00 * h0 + a01 * h1 + a02 * h2;
            R(y, 2) = a10 * h0 + a11 * h1 + a12 * h2;
            R(y, 3) = a20 * h0 + a21 * h1 + a22 * h2;
            R(y, 4) = t00 * a00 + t01 * a01 + t02 * a02;
            R(y, 5) = t00 * a10 + t01 * a11 + t02 * a12;
            R(y, 6) = t00 * a20 + t01 * a21 + t02 * a22;
            R(y, 7) = t10 * a10 + t11 * a11 + t12 * a12;
            R(y, 8) = t10 * a20 + t11 * a21 + t12 * a22;
            R(y, 9) = t20 * a20 + t21 * a21 + t22 * a22;
        }
        const int ncols = RBD_SFX(ln_free_base)(m, i) ? 0 : m->nvj[i];  /* (a floating base's: not read) */
        for (int col = 0; col < ncols; col++) {
            const int c = m->v_idx[i] + col;
            double* w = J + 6 * L * c;
            double* s = S + 6 * L * c;
            RBD_SFX(ln_world_column)(m, i, col, o, w);
            /* the column at the body's origin: the world column's angular part, and its
               linear part without the origin's o x w (rotated from the joint's own) */
            const int kind = m->kinds[i], a = m->basis[kind], k = m->cols[6 * kind + col];
            double u[6] = {0.0, 0.0, 0.0, 0.0, 0.0, 0.0};
            if (a >= 0) {
                u[3 + a] = 1.0;
            } else if (k >= 0) {
                u[k] = 1.0;
            } else {
                const double* e = m->axes + 3 * i;
                int off = k == RBD_AXIS_ANGULAR ? 3 : 0;
                u[off] = e[0]; u[off + 1] = e[1]; u[off + 2] = e[2];
            }
            LANE_SIMD {
                R(s, 0) = R(o, 0) * u[0] + R(o, 1) * u[1] + R(o, 2) * u[2];
                R(s, 1) = R(o, 4) * u[0] + R(o, 5) * u[1] + R(o, 6) * u[2];
                R(s, 2) = R(o, 8) * u[0] + R(o, 9) * u[1] + R(o, 10) * u[2];
                R(s, 3) = R(w, 3); R(s, 4) = R(w, 4); R(s, 5) = R(w, 5);
            }
        }
    }
}

/* acc += Y moved by d, per lane (inertia_add_moved): Y at a point P, acc at P - d */
static inline void RBD_SFX(ln_inertia_add_moved)(double* restrict acc, const double* restrict Y,
                                                 const double* restrict d) {
    LANE_SIMD {
        double mass = R(Y, 0), h0 = R(Y, 1), h1 = R(Y, 2), h2 = R(Y, 3);
        double p0 = R(d, 0), p1 = R(d, 1), p2 = R(d, 2);
        double diag = mass * (p0 * p0 + p1 * p1 + p2 * p2) + 2.0 * (p0 * h0 + p1 * h1 + p2 * h2);
        double k0 = mass * p0 + h0, k1 = mass * p1 + h1, k2 = mass * p2 + h2;
        R(acc, 0) += mass;
        R(acc, 1) += h0 + mass * p0;
        R(acc, 2) += h1 + mass * p1;
        R(acc, 3) += h2 + mass * p2;
        R(acc, 4) += R(Y, 4) + (diag - p0 * k0 - h0 * p0);
        R(acc, 5) += R(Y, 5) + (-p0 * k1 - h0 * p1);
        R(acc, 6) += R(Y, 6) + (-p0 * k2 - h0 * p2);
        R(acc, 7) += R(Y, 7) + (diag - p1 * k1 - h1 * p1);
        R(acc, 8) += R(Y, 8) + (-p1 * k2 - h1 * p2);
        R(acc, 9) += R(Y, 9) + (diag - p2 * k2 - h2 * p2);
    }
}

/* M[r + k][c] = M[c][r + k], k < 6, for the free joint whose dofs start at r, of the body at
   the world placement o, per lane (_crba_free_entries): the force f (world axes, at the
   world origin) at the body's origin in its axes, [R^T f; R^T (n - o x f)]. */
static inline void RBD_SFX(ln_crba_free_entries)(const double* restrict o, const double* restrict f, int r, int c,
                                                 int nv, double* const* M) {
    double w[6 * L];
    LANE_SIMD {
        const double f0 = R(f, 0), f1 = R(f, 1), f2 = R(f, 2);
        const double n0 = R(f, 3) - (R(o, 7) * f2 - R(o, 11) * f1);
        const double n1 = R(f, 4) - (R(o, 11) * f0 - R(o, 3) * f2);
        const double n2 = R(f, 5) - (R(o, 3) * f1 - R(o, 7) * f0);
        for (int k = 0; k < 3; k++) {
            R(w, k) = R(o, k) * f0 + R(o, 4 + k) * f1 + R(o, 8 + k) * f2;
            R(w, 3 + k) = R(o, k) * n0 + R(o, 4 + k) * n1 + R(o, 8 + k) * n2;
        }
    }
    for (int k = 0; k < 6; k++)
        for (int l = 0; l < L; l++) {
            M[l][(size_t)(r + k) * nv + c] = R(w, k);
            M[l][(size_t)c * nv + r + k] = R(w, k);
        }
}

/* A free joint's own 6x6 block of M (its dofs from r), per lane (_crba_free_block): the
   composite inertia y (world axes, at the body's origin o) in the body's axes,
   [m 1, -h^; h^, I] with h = R^T h_world, I = R^T I_world R. */
static inline void RBD_SFX(ln_crba_free_block)(const double* restrict o, const double* restrict y, int r, int nv,
                                               double* const* M) {
    double b[21 * L];  /* the block's upper triangle, row by row */
    LANE_SIMD {
        const double a00 = R(o, 0), a01 = R(o, 1), a02 = R(o, 2), a10 = R(o, 4), a11 = R(o, 5), a12 = R(o, 6);
        const double a20 = R(o, 8), a21 = R(o, 9), a22 = R(o, 10);
        const double sxx = R(y, 4), sxy = R(y, 5), sxz = R(y, 6), syy = R(y, 7), syz = R(y, 8), szz = R(y, 9);
        const double h0 = a00 * R(y, 1) + a10 * R(y, 2) + a20 * R(y, 3);
        const double h1 = a01 * R(y, 1) + a11 * R(y, 2) + a21 * R(y, 3);
        const double h2 = a02 * R(y, 1) + a12 * R(y, 2) + a22 * R(y, 3);
        /* t = S R (column k of t: S times column k of R), then I = R^T t */
        const double t00 = sxx * a00 + sxy * a10 + sxz * a20, t01 = sxx * a01 + sxy * a11 + sxz * a21;
        const double t02 = sxx * a02 + sxy * a12 + sxz * a22, t10 = sxy * a00 + syy * a10 + syz * a20;
        const double t11 = sxy * a01 + syy * a11 + syz * a21, t12 = sxy * a02 + syy * a12 + syz * a22;
        const double t20 = sxz * a00 + syz * a10 + szz * a20, t21 = sxz * a01 + syz * a11 + szz * a21;
        const double t22 = sxz * a02 + syz * a12 + szz * a22;
        const double mass = R(y, 0);
        R(b, 0) = mass; R(b, 1) = 0.0; R(b, 2) = 0.0; R(b, 3) = 0.0; R(b, 4) = h2; R(b, 5) = -h1;
        R(b, 6) = mass; R(b, 7) = 0.0; R(b, 8) = -h2; R(b, 9) = 0.0; R(b, 10) = h0;
        R(b, 11) = mass; R(b, 12) = h1; R(b, 13) = -h0; R(b, 14) = 0.0;
        R(b, 15) = a00 * t00 + a10 * t10 + a20 * t20; R(b, 16) = a00 * t01 + a10 * t11 + a20 * t21;
        R(b, 17) = a00 * t02 + a10 * t12 + a20 * t22;
        R(b, 18) = a01 * t01 + a11 * t11 + a21 * t21; R(b, 19) = a01 * t02 + a11 * t12 + a21 * t22;
        R(b, 20) = a02 * t02 + a12 * t12 + a22 * t22;
    }
    for (int k = 0, e = 0; k < 6; k++)
        for (int c = k; c < 6; c++, e++)
            for (int l = 0; l < L; l++) {
                M[l][(size_t)(r + k) * nv + r + c] = R(b, e);
                M[l][(size_t)(r + c) * nv + r + k] = R(b, e);
            }
}

/* CRBA's composite step on a block (crba_composite), after ln_crba_local_terms: the
   composite inertias (summed in place of Yc, each at its body's origin) and M, armature
   included, into each lane's matrix M[l] (both triangles; the entries of unrelated dofs
   left as they were): a joint's own block from S and F = Yc S, its ancestors' from J and
   F moved to the world origin. */
static void RBD_SFX(ln_crba_composite)(const rbd_lanes_model* m, const double* oM, const double* D, double* Yc,
                                       const double* J, const double* S, double* const* M) {
    const int nb = m->nb, nv = m->nv;
    double f[6 * L], val[L];
    for (int i = nb - 1; i >= 0; i--) {
        const int vi = m->v_idx[i];
        const double* o = oM + 12 * L * i;
        const int free_base = RBD_SFX(ln_free_base)(m, i);
        if (free_base)  /* its block, and no ancestors */
            RBD_SFX(ln_crba_free_block)(o, Yc + 10 * L * i, vi, nv, M);
        for (int col = 0; col < (free_base ? 0 : m->nvj[i]); col++) {
            RBD_SFX(ln_inertia_apply)(Yc + 10 * L * i, S + 6 * L * (vi + col), f);
            for (int r = 0; r <= col; r++) {  /* own block: its lower triangle (mirrored into M) */
                RBD_SFX(ln_dot6)(S + 6 * L * (vi + r), f, val);
                for (int l = 0; l < L; l++) {
                    M[l][(size_t)(vi + r) * nv + vi + col] = val[l];
                    M[l][(size_t)(vi + col) * nv + vi + r] = val[l];
                }
            }
            LANE_SIMD {  /* F at the world origin: n + o x f */
                double f0 = R(f, 0), f1 = R(f, 1), f2 = R(f, 2);
                R(f, 3) += R(o, 7) * f2 - R(o, 11) * f1;
                R(f, 4) += R(o, 11) * f0 - R(o, 3) * f2;
                R(f, 5) += R(o, 3) * f1 - R(o, 7) * f0;
            }
            for (int j = m->parents[i]; j >= 0; j = m->parents[j]) {
                const int vj = m->v_idx[j];
                if (m->kinds[j] == RBD_K_FREE) {
                    RBD_SFX(ln_crba_free_entries)(oM + 12 * L * j, f, vj, vi + col, nv, M);
                    continue;
                }
                for (int r = 0; r < m->nvj[j]; r++) {
                    RBD_SFX(ln_dot6)(J + 6 * L * (vj + r), f, val);
                    for (int l = 0; l < L; l++) {
                        M[l][(size_t)(vj + r) * nv + vi + col] = val[l];
                        M[l][(size_t)(vi + col) * nv + vj + r] = val[l];
                    }
                }
            }
        }
        const int p = m->parents[i];
        if (p >= 0)
            RBD_SFX(ln_inertia_add_moved)(Yc + 10 * L * p, Yc + 10 * L * i, D + 3 * L * i);
    }
    if (m->has_armature)
        for (int k = 0; k < nv; k++)
            for (int l = 0; l < L; l++)
                M[l][(size_t)k * nv + k] += m->armature[k];
}

/* CRBA on a block (k_crba, lane by lane): the mass matrix of lane l into M[l] (nv x nv,
   row-major), from the placements X (12 rows per body); work: 25 rows per body + 12 per dof. */
static void RBD_SFX(rbd_crba_lanes)(const rbd_lanes_model* m, const double* X, double* const* M, double* work) {
    const int nb = m->nb, nv = m->nv;
    double* oM = work;
    double* D = work + 12 * L * nb;
    double* Yc = work + 15 * L * nb;
    double* J = work + 25 * L * nb;
    double* S = J + 6 * L * nv;
    for (int l = 0; l < L; l++)
        memset(M[l], 0, (size_t)nv * nv * sizeof(double));
    RBD_SFX(ln_crba_local_terms)(m, X, oM, D, Yc, J, S);
    RBD_SFX(ln_crba_composite)(m, oM, D, Yc, J, S, M);
}

/* The RNEA derivatives on a block (k_rnea_derivatives, lane by lane): dtau/dq, dtau/dv
   and M of lane l into dq[l], dv[l], M[l] (nv x nv, row-major; M NULL: no mass matrix), from the placements X
   (12 rows per body), v, a (nv rows each) and fext (6 rows per body; NULL: none);
   work: 56 rows per body (world placement 12, twist 6, acceleration 6, then the
   composites: inertia 10, B's symmetric part 10, momentum 6, force 6) + 24 per dof
   (s, u, w, d). */
static void RBD_SFX(rbd_rnea_derivatives_lanes)(const rbd_lanes_model* m, const double* g, const double* X,
                                                const double* v, const double* a, const double* fext,
                                                double* const* dq, double* const* dv, double* const* M,
                                                double* work) {
    enum { OM = 0, OV = 12, OA = 18, YC = 24, SYM = 34, K = 44, F = 50, PER_BODY = 56 };
    enum { S = 0, U = 6, W = 12, D = 18, PER_DOF = 24 };
    const int nb = m->nb, nv = m->nv;
    double* dofs = work + PER_BODY * L * nb;
    double a0[6 * L], zero[6 * L], vJ[6 * L], aJ[6 * L], t[6 * L], x[6 * L];
    double G1[6 * L], G2[6 * L], Pv[6 * L], Pq[6 * L], val[L];
    LANE_SIMD {
        R(a0, 0) = -g[0]; R(a0, 1) = -g[1]; R(a0, 2) = -g[2];
        R(a0, 3) = 0.0; R(a0, 4) = 0.0; R(a0, 5) = 0.0;
    }
    memset(zero, 0, sizeof(zero));
    for (int l = 0; l < L; l++) {
        memset(dq[l], 0, (size_t)nv * nv * sizeof(double));
        memset(dv[l], 0, (size_t)nv * nv * sizeof(double));
        if (M)
            memset(M[l], 0, (size_t)nv * nv * sizeof(double));
    }
    /* forward: world placements, twists, accelerations, forces; each dof's s, u, w, d */
    for (int i = 0; i < nb; i++) {
        const int p = m->parents[i];
        double* B = work + PER_BODY * L * i;
        const double* P = p >= 0 ? work + PER_BODY * L * p : NULL;
        if (p >= 0)
            RBD_SFX(ln_compose)(P + OM * L, X + 12 * L * i, B + OM * L);
        else
            RBD_SFX(ln_center_root)(X + 12 * L * i, X, B + OM * L);
        memset(vJ, 0, sizeof(vJ));
        memset(aJ, 0, sizeof(aJ));
        for (int col = 0; col < m->nvj[i]; col++) {
            const int ic = m->v_idx[i] + col;
            double* s = dofs + PER_DOF * L * ic;
            RBD_SFX(ln_world_column)(m, i, col, B + OM * L, s + S * L);
            for (int r = 0; r < 6; r++)
                LANE_SIMD {
                    R(vJ, r) += R(s + S * L, r) * R(v, ic);
                    R(aJ, r) += R(s + S * L, r) * R(a, ic);
                }
        }
        const double* vp = p >= 0 ? P + OV * L : zero;
        const double* ap = p >= 0 ? P + OA * L : a0;
        for (int r = 0; r < 6 * L; r++)
            B[OV * L + r] = vp[r] + vJ[r];
        RBD_SFX(ln_motion_cross)(B + OV * L, vJ, t);
        for (int r = 0; r < 6 * L; r++)
            B[OA * L + r] = ap[r] + aJ[r] + t[r];
        for (int col = 0; col < m->nvj[i]; col++) {
            double* s = dofs + PER_DOF * L * (m->v_idx[i] + col);
            RBD_SFX(ln_motion_cross)(vp, s + S * L, s + U * L);
            RBD_SFX(ln_motion_cross)(ap, s + S * L, s + W * L);
            RBD_SFX(ln_motion_cross)(vp, s + U * L, t);
            for (int r = 0; r < 6 * L; r++)
                s[W * L + r] += t[r];
            for (int r = 0; r < 6 * L; r++)
                t[r] = B[OV * L + r] + vp[r];
            RBD_SFX(ln_motion_cross)(t, s + S * L, s + D * L);
        }
        RBD_SFX(ln_inertia_act)(B + OM * L, m->inertias + 10 * i, B + YC * L);
        RBD_SFX(ln_inertia_apply)(B + YC * L, B + OV * L, B + K * L);
        RBD_SFX(ln_inertia_apply)(B + YC * L, B + OA * L, B + F * L);
        RBD_SFX(ln_force_cross)(B + OV * L, B + K * L, t);
        for (int r = 0; r < 6 * L; r++)
            B[F * L + r] += t[r];
        if (fext != NULL) {  /* the body's external force in world axes (act_force) */
            const double* fe = fext + 6 * L * i;
            RBD_SFX(ln_act_pair)(B + OM * L, fe + 3 * L, fe, t + 3 * L, t, 0);
            for (int r = 0; r < 6 * L; r++)
                B[F * L + r] -= t[r];
        }
        RBD_SFX(ln_velocity_variation)(B + YC * L, B + OV * L, B + SYM * L);
    }
    /* backward: composites, and each column against its body's ancestors */
    for (int i = nb - 1; i >= 0; i--) {
        double* B = work + PER_BODY * L * i;
        for (int col = 0; col < m->nvj[i]; col++) {
            const int ic = m->v_idx[i] + col;
            const double* s = dofs + PER_DOF * L * ic;
            RBD_SFX(ln_inertia_apply)(B + YC * L, s + S * L, G1);          /* Yc s */
            RBD_SFX(ln_inertia_apply)(B + SYM * L, s + S * L, t);
            RBD_SFX(ln_force_cross)(s + S * L, B + K * L, x);
            for (int r = 0; r < 6 * L; r++) {
                G2[r] = t[r] - x[r];                                          /* Bc^T s */
                Pv[r] = t[r] + x[r];                                          /* Bc s ... */
            }
            RBD_SFX(ln_inertia_apply)(B + YC * L, s + D * L, t);
            for (int r = 0; r < 6 * L; r++)
                Pv[r] += t[r];                                                /* ... + Yc d */
            RBD_SFX(ln_inertia_apply)(B + SYM * L, s + U * L, Pq);
            RBD_SFX(ln_force_cross)(s + U * L, B + K * L, t);
            for (int r = 0; r < 6 * L; r++)
                Pq[r] += t[r];
            RBD_SFX(ln_inertia_apply)(B + YC * L, s + W * L, t);
            for (int r = 0; r < 6 * L; r++)
                Pq[r] += t[r];                                                /* Bc u + Yc w */
            for (int r = 0; r < m->nvj[i]; r++) {                             /* the joint's own block */
                const int jc = m->v_idx[i] + r;
                const double* o = dofs + PER_DOF * L * jc;
                const size_t e = (size_t)jc * nv + ic;
                RBD_SFX(ln_dot6)(o + S * L, Pq, val);
                for (int l = 0; l < L; l++) dq[l][e] = val[l];
                RBD_SFX(ln_dot6)(o + S * L, Pv, val);
                for (int l = 0; l < L; l++) dv[l][e] = val[l];
                if (M) {
                    RBD_SFX(ln_dot6)(o + S * L, G1, val);
                    for (int l = 0; l < L; l++) M[l][e] = val[l];
                }
            }
            RBD_SFX(ln_force_cross)(s + S * L, B + F * L, t);
            for (int r = 0; r < 6 * L; r++)
                Pq[r] += t[r];                                                /* + s x* F for the ancestors */
            for (int j = m->parents[i]; j >= 0; j = m->parents[j]) {
                for (int r = 0; r < m->nvj[j]; r++) {
                    const int jc = m->v_idx[j] + r;
                    const double* o = dofs + PER_DOF * L * jc;
                    const size_t up = (size_t)jc * nv + ic, down = (size_t)ic * nv + jc;
                    double v2[L];
                    RBD_SFX(ln_dot6)(o + S * L, Pq, val);
                    for (int l = 0; l < L; l++) dq[l][up] = val[l];
                    RBD_SFX(ln_dot6)(o + S * L, Pv, val);
                    for (int l = 0; l < L; l++) dv[l][up] = val[l];
                    if (M) {
                        RBD_SFX(ln_dot6)(o + S * L, G1, val);
                        for (int l = 0; l < L; l++) M[l][up] = M[l][down] = val[l];
                    }
                    RBD_SFX(ln_dot6)(G2, o + U * L, val);
                    RBD_SFX(ln_dot6)(G1, o + W * L, v2);
                    for (int l = 0; l < L; l++) dq[l][down] = val[l] + v2[l];
                    RBD_SFX(ln_dot6)(G2, o + S * L, val);
                    RBD_SFX(ln_dot6)(G1, o + D * L, v2);
                    for (int l = 0; l < L; l++) dv[l][down] = val[l] + v2[l];
                }
            }
        }
        const int p = m->parents[i];
        if (p >= 0) {
            double* P = work + PER_BODY * L * p;
            for (int r = YC * L; r < PER_BODY * L; r++)  /* Yc, B's symmetric part, momentum, force */
                P[r] += B[r];
        }
    }
    if (M && m->has_armature)
        for (int l = 0; l < L; l++)
            for (int k = 0; k < nv; k++)
                M[l][(size_t)k * nv + k] += m->armature[k];
}

/* the packed index of entry (i, j) of a symmetric 6x6 (rbd_sym6 of _articulated.pxd) */
static const int RBD_SFX(ln_sym6)[36] = {0, 1, 2, 3, 4, 5, 1, 6, 7, 8, 9, 10, 2, 7, 11, 12, 13, 14,
                                         3, 8, 12, 15, 16, 17, 4, 9, 13, 16, 18, 19, 5, 10, 14, 17, 19, 20};

/* row r of S x for a symmetric 6x6 S (21 rows) and the x components x0..x5
   (sym6_matvec); the packed indices are written out so that every row is a plain load */
#define RBD_SYM6_ROWS(S, x0, x1, x2, x3, x4, x5, ASSIGN, o)                                               \
    ASSIGN(o, 0, R(S, 0) * x0 + R(S, 1) * x1 + R(S, 2) * x2 + R(S, 3) * x3 + R(S, 4) * x4 + R(S, 5) * x5);       \
    ASSIGN(o, 1, R(S, 1) * x0 + R(S, 6) * x1 + R(S, 7) * x2 + R(S, 8) * x3 + R(S, 9) * x4 + R(S, 10) * x5);      \
    ASSIGN(o, 2, R(S, 2) * x0 + R(S, 7) * x1 + R(S, 11) * x2 + R(S, 12) * x3 + R(S, 13) * x4 + R(S, 14) * x5);   \
    ASSIGN(o, 3, R(S, 3) * x0 + R(S, 8) * x1 + R(S, 12) * x2 + R(S, 15) * x3 + R(S, 16) * x4 + R(S, 17) * x5);   \
    ASSIGN(o, 4, R(S, 4) * x0 + R(S, 9) * x1 + R(S, 13) * x2 + R(S, 16) * x3 + R(S, 18) * x4 + R(S, 19) * x5);   \
    ASSIGN(o, 5, R(S, 5) * x0 + R(S, 10) * x1 + R(S, 14) * x2 + R(S, 17) * x3 + R(S, 19) * x4 + R(S, 20) * x5);
#define RBD_SET(o, r, e) R(o, r) = (e)
#define RBD_ADD(o, r, e) R(o, r) += (e)

/* out = S x for a motion x that is the same in every lane */
static inline void RBD_SFX(ln_sym6_matvec_const)(const double* restrict S, const double* x, double* restrict out) {
    const double x0 = x[0], x1 = x[1], x2 = x[2], x3 = x[3], x4 = x[4], x5 = x[5];
    LANE_SIMD { RBD_SYM6_ROWS(S, x0, x1, x2, x3, x4, x5, RBD_SET, out) }
}

/* out += S x */
static inline void RBD_SFX(ln_sym6_matvec_add)(const double* restrict S, const double* restrict x,
                                               double* restrict out) {
    LANE_SIMD {
        const double x0 = R(x, 0), x1 = R(x, 1), x2 = R(x, 2), x3 = R(x, 3), x4 = R(x, 4), x5 = R(x, 5);
        RBD_SYM6_ROWS(S, x0, x1, x2, x3, x4, x5, RBD_ADD, out)
    }
}

/* The factor of M on a block (articulated_ltdl, lane by lane): D^-1 on the diagonal of
   the lanes matrix Z (nv x nv rows), L at each dof's ancestors' columns of its row,
   from the bodies' world inertias Y (10 rows per body) and the dofs' world columns J
   (6 rows per dof), without forming M; IA: 21 rows per body.  Returns 1 when a pivot of
   some lane is not above the singularity tolerance (NaN included), else 0. */
static int RBD_SFX(ln_articulated_ltdl)(const rbd_lanes_model* m, const double* Y, const double* J, double* IA,
                                        double* Z) {
    const int nb = m->nb, nv = m->nv;
    #define ZE(row, col) (Z + ((size_t)(row) * nv + (col)) * L)
    for (int i = 0; i < nb; i++) {  /* IA = each body's own inertia (sym6_from_inertia) */
        const double* y = Y + 10 * L * i;
        double* S = IA + 21 * L * i;
        LANE_SIMD {
            R(S, 0) = R(y, 0); R(S, 1) = 0.0; R(S, 2) = 0.0; R(S, 3) = 0.0; R(S, 4) = R(y, 3); R(S, 5) = -R(y, 2);
            R(S, 6) = R(y, 0); R(S, 7) = 0.0; R(S, 8) = -R(y, 3); R(S, 9) = 0.0; R(S, 10) = R(y, 1);
            R(S, 11) = R(y, 0); R(S, 12) = R(y, 2); R(S, 13) = -R(y, 1); R(S, 14) = 0.0;
            for (int r = 0; r < 6; r++)
                R(S, 15 + r) = R(y, 4 + r);
        }
    }
    for (int i = nb - 1; i >= 0; i--) {
        double* S = IA + 21 * L * i;
        for (int d = m->v_idx[i] + m->nvj[i] - 1; d >= m->v_idx[i]; d--) {
            const double* s = J + 6 * L * d;
            const double armature = m->has_armature ? m->armature[d] : 0.0;
            double U[6 * L], pivot[L], inverse[L];
            int bad = 0;
            memset(U, 0, sizeof(U));
            RBD_SFX(ln_sym6_matvec_add)(S, s, U);
            RBD_SFX(ln_dot6)(s, U, pivot);
            LANE {  /* (a reduction over the lanes) */
                pivot[l] += armature;
                bad |= !(pivot[l] > m->singular_tol[i]);
                inverse[l] = 1.0 / pivot[l];
            }
            if (bad)
                return 1;
            memcpy(ZE(d, d), inverse, sizeof(inverse));
            for (int t = m->dof_ancestors_start[d]; t < m->dof_ancestors_start[d + 1]; t++) {
                const int a = m->dof_ancestors[t];
                double* zda = ZE(d, a);
                RBD_SFX(ln_dot6)(J + 6 * L * a, U, zda);
                LANE_SIMD zda[l] *= inverse[l];
            }
            RBD_SFX(ln_sym6_rank1_sub)(S, U, inverse);  /* IA -= U U^T / D */
        }
        const int p = m->parents[i];
        if (p >= 0)
            for (int r = 0; r < 21 * L; r++)
                IA[21 * L * p + r] += S[r];
    }
    #undef ZE
    return 0;
}

/* M^-1 on a block in its factored form (k_minv_factored, lane by lane): the world
   inertias and columns, the factor M = L^T D L along the tree (ln_articulated_ltdl)
   and M^-1 through it (rbd_ltdl_inverse), every step the one-sample code's with each
   number a row of L lanes.  Z: nv x nv rows (row-major, entry e at Z + e L), M^-1 on
   return; work: 43 rows per body + 7 per dof.  Returns 0, or 1 when a pivot of some
   lane is not above the singularity tolerance (NaN included): the caller then runs the
   lanes one by one. */
static int RBD_SFX(rbd_minv_lanes)(const rbd_lanes_model* m, const double* X, double* Z, double* work) {
    const int nb = m->nb, nv = m->nv;
    double* oM = work;
    double* Yc = work + 12 * L * nb;
    double* J = work + 22 * L * nb;
    double* IA = J + 6 * L * nv;
    double* lrow = IA + 21 * L * nb;
    #define ZE(row, col) (Z + ((size_t)(row) * nv + (col)) * L)
    /* world placements, inertias and columns; the factor from the articulated inertias */
    RBD_SFX(ln_crba_world_terms)(m, X, oM, Yc, J);
    if (RBD_SFX(ln_articulated_ltdl)(m, Yc, J, IA, Z))
        return 1;
    /* M^-1 through the factor (rbd_ltdl_inverse), row by row from the top */
    for (int k = 0; k < nv; k++) {
        const int* anc = m->dof_ancestors + m->dof_ancestors_start[k];
        const int n = m->dof_ancestors_start[k + 1] - m->dof_ancestors_start[k];
        for (int j = 0; j < n; j++)
            memcpy(lrow + (size_t)j * L, ZE(k, anc[j]), L * sizeof(double));
        /* each entry summed in registers over the ancestors, four entries at a time (each
           factor of L loaded once for four; the entries' sums in the one-sample order) */
        int i = 0;
        for (; i + 4 <= k; i += 4) {
            double acc[4 * L];
            for (int r = 0; r < 4 * L; r++)
                acc[r] = 0.0;
            for (int j = 0; j < n; j++) {
                const double* lj = lrow + (size_t)j * L;
                const double* zji = ZE(anc[j], i);
                LANE {
                    acc[l] -= lj[l] * zji[l];
                    acc[L + l] -= lj[l] * zji[L + l];
                    acc[2 * L + l] -= lj[l] * zji[2 * L + l];
                    acc[3 * L + l] -= lj[l] * zji[3 * L + l];
                }
            }
            memcpy(ZE(k, i), acc, sizeof(acc));
        }
        for (; i < k; i++) {
            double acc[L];
            LANE acc[l] = 0.0;
            for (int j = 0; j < n; j++) {
                const double* lj = lrow + (size_t)j * L;
                const double* zji = ZE(anc[j], i);
                LANE acc[l] -= lj[l] * zji[l];
            }
            memcpy(ZE(k, i), acc, sizeof(acc));
        }
        double* zkk = ZE(k, k);  /* the diagonal in two sums, as rbd_ltdl_inverse */
        double odd[L];
        LANE odd[l] = 0.0;
        for (int j = 0; j < n; j++) {
            const double* zkj = ZE(k, anc[j]);
            const double* lj = lrow + (size_t)j * L;
            if (j % 2 == 0) {
                LANE zkk[l] -= lj[l] * zkj[l];
            } else {
                LANE odd[l] -= lj[l] * zkj[l];
            }
        }
        LANE zkk[l] += odd[l];
        for (int i = 0; i < k; i++)
            memcpy(ZE(i, k), ZE(k, i), L * sizeof(double));
    }
    #undef ZE
    return 0;
}

/* out = m x* (Y m) for inertias Y that differ by lane (inertia_cross_term) */
static inline void RBD_SFX(ln_inertia_cross_term)(const double* restrict Y, const double* restrict m,
                                                  double* restrict out) {
    LANE_SIMD {
        double v0 = R(m, 0), v1 = R(m, 1), v2 = R(m, 2), w0 = R(m, 3), w1 = R(m, 4), w2 = R(m, 5);
        double mass = R(Y, 0), h0 = R(Y, 1), h1 = R(Y, 2), h2 = R(Y, 3);
        double b0 = h1 * w2 - h2 * w1, b1 = h2 * w0 - h0 * w2, b2 = h0 * w1 - h1 * w0;
        double f0 = mass * v0 - b0, f1 = mass * v1 - b1, f2 = mass * v2 - b2;
        double n0 = h1 * v2 - h2 * v1 + R(Y, 4) * w0 + R(Y, 5) * w1 + R(Y, 6) * w2;
        double n1 = h2 * v0 - h0 * v2 + R(Y, 5) * w0 + R(Y, 7) * w1 + R(Y, 8) * w2;
        double n2 = h0 * v1 - h1 * v0 + R(Y, 6) * w0 + R(Y, 8) * w1 + R(Y, 9) * w2;
        R(out, 0) = w1 * f2 - w2 * f1;
        R(out, 1) = w2 * f0 - w0 * f2;
        R(out, 2) = w0 * f1 - w1 * f0;
        R(out, 3) = w1 * n2 - w2 * n1 - (v1 * b2 - v2 * b1);
        R(out, 4) = w2 * n0 - w0 * n2 - (v2 * b0 - v0 * b2);
        R(out, 5) = w0 * n1 - w1 * n0 - (v0 * b1 - v1 * b0);
    }
}

/* acc = the sum of x[t] y[t] over dof k's chain (chain_dot; rows of nv entries) */
static inline void RBD_SFX(ln_chain_dot)(const rbd_lanes_model* m, int k, const double* restrict x,
                                         const double* restrict y, double* restrict acc) {
    LANE_SIMD acc[l] = 0.0;
    while (k >= 0) {
        const int s = m->dof_run_start[k];
        for (int t = s; t <= k; t++)
            LANE_SIMD acc[l] += R(x, t) * R(y, t);
        k = m->dof_parents[s];
    }
}

/* y[t] += a x[t] over dof k's chain (chain_axpy) */
static inline void RBD_SFX(ln_chain_axpy)(const rbd_lanes_model* m, int k, const double* restrict a,
                                          const double* restrict x, double* restrict y) {
    while (k >= 0) {
        const int s = m->dof_run_start[k];
        for (int t = s; t <= k; t++)
            LANE_SIMD R(y, t) += a[l] * R(x, t);
        k = m->dof_parents[s];
    }
}

/* lin (3 rows) = the linear part of the world motion w seen at the frame's origin,
   v + w x p (shift_to_frame) */
static inline void RBD_SFX(ln_shift_to_frame)(const double* restrict oMf, const double* restrict w,
                                              double* restrict lin) {
    LANE_SIMD {
        double w3 = R(w, 3), w4 = R(w, 4), w5 = R(w, 5), p0 = R(oMf, 3), p1 = R(oMf, 7), p2 = R(oMf, 11);
        R(lin, 0) = R(w, 0) + w4 * p2 - w5 * p1;
        R(lin, 1) = R(w, 1) + w5 * p0 - w3 * p2;
        R(lin, 2) = R(w, 2) + w3 * p1 - w4 * p0;
    }
}

/* out (rows r < dim, stride rows apart) = the world motion w seen at the frame's origin,
   in world axes or the frame's (_at_frame) */
static inline void RBD_SFX(ln_at_frame)(int ref, int dim, const double* restrict oMf, const double* restrict w,
                                        double* restrict out, int stride) {
    double lin[3 * L];
    RBD_SFX(ln_shift_to_frame)(oMf, w, lin);
    LANE_SIMD {
        double w3 = R(w, 3), w4 = R(w, 4), w5 = R(w, 5);
        double lin0 = R(lin, 0), lin1 = R(lin, 1), lin2 = R(lin, 2);
        if (ref == RBD_REF_LWA) {
            out[0 * stride * L + l] = lin0; out[1 * stride * L + l] = lin1; out[2 * stride * L + l] = lin2;
            if (dim == 6) {
                out[3 * stride * L + l] = w3; out[4 * stride * L + l] = w4; out[5 * stride * L + l] = w5;
            }
        } else {
            for (int r = 0; r < 3; r++)
                out[r * stride * L + l] = R(oMf, r) * lin0 + R(oMf, 4 + r) * lin1 + R(oMf, 8 + r) * lin2;
            if (dim == 6)
                for (int r = 0; r < 3; r++)
                    out[(3 + r) * stride * L + l] = R(oMf, r) * w3 + R(oMf, 4 + r) * w4 + R(oMf, 8 + r) * w5;
        }
    }
}

/* b <- (L L^T)^-1 b in lanes, with rbd_contacts_lanes' factor L of n rows (its diagonal
   inverted) */
static void RBD_SFX(ln_factor_solve)(const double* K, int n, double* b) {
    #define KE(r, s) (K + ((size_t)(r) * n + (s)) * L)
    for (int r = 0; r < n; r++) {
        for (int k = 0; k < r; k++)
            LANE_SIMD R(b, r) -= KE(r, k)[l] * R(b, k);
        LANE_SIMD R(b, r) *= KE(r, r)[l];
    }
    for (int r = n - 1; r >= 0; r--) {
        for (int k = r + 1; k < n; k++)
            LANE_SIMD R(b, r) -= KE(k, r)[l] * R(b, k);
        LANE_SIMD R(b, r) *= KE(r, r)[l];
    }
    #undef KE
}


/* The contact dynamics on a block (k_constrained_dynamics, or k_impulse_dynamics when
   tau is NULL; lane by lane): from the placements X (12 rows per body), v, tau (nv rows
   each) and fext (6 rows per body, or NULL), x (nv rows: q_ddot, or v after the impact)
   and f (the contact rows: forces or impulses).  The steps and their order are the
   one-sample kernels' (rbd_c/_contacts.pyx), each number a row of L lanes.  work: 61 rows
   per body, 7 per dof, nv^2, 2 nrows nv + nrows^2 + 2 nrows.  Returns 0, or 1 when a pivot of
   some lane (M's or the contacts') fails: the caller then runs the lanes one by one. */
static int RBD_SFX(rbd_contacts_lanes)(const rbd_lanes_model* m, const rbd_lanes_contacts* c, const double* g,
                                       const double* X, const double* v, const double* tau, const double* fext,
                                       double* x, double* f, double* work) {
    const int nb = m->nb, nv = m->nv, n = c->nrows;
    double* oM = work;
    double* Yc = oM + 12 * L * nb;
    double* V = Yc + 10 * L * nb;
    double* A = V + 6 * L * nb;
    double* F = A + 6 * L * nb;
    double* IA = F + 6 * L * nb;            /* the factor's articulated inertias */
    double* S = IA + 21 * L * nb;           /* the dofs' world columns */
    double* dinv = S + 6 * L * nv;
    double* Z = dinv + L * nv;              /* M's factor */
    double* Y = Z + (size_t)L * nv * nv;    /* the contact rows, then L^-T J^T (as rows) */
    double* W = Y + (size_t)L * n * nv;
    double* K = W + (size_t)L * n * nv;
    double* gamma = K + (size_t)L * n * n;
    int* last = (int*)(gamma + (size_t)L * n);  /* the rows' chains (_row_chains; n ints) */
    double oMf[12 * L], t12[12 * L], t[6 * L], vJ[6 * L], acc[L];
    #define ZE(row, col) (Z + ((size_t)(row) * nv + (col)) * L)
    #define ROW(P, r) ((P) + (size_t)(r) * nv * L)
    RBD_SFX(ln_crba_world_terms)(m, X, oM, Yc, S);
    if (tau != NULL) {  /* h = rnea(q, v, 0, fext) in world axes into x (_world_bias) */
        for (int i = 0; i < nb; i++) {
            const int p = m->parents[i];
            double* Vi = V + 6 * L * i;
            double* Ai = A + 6 * L * i;
            double* Fi = F + 6 * L * i;
            memset(vJ, 0, sizeof(vJ));
            for (int col = 0; col < m->nvj[i]; col++) {
                const int d = m->v_idx[i] + col;
                for (int k = 0; k < 6; k++)
                    LANE_SIMD R(vJ, k) += R(S + 6 * L * d, k) * R(v, d);
            }
            if (p >= 0) {
                for (int r = 0; r < 6 * L; r++) {
                    Vi[r] = V[6 * L * p + r] + vJ[r];
                    Ai[r] = A[6 * L * p + r];
                }
            } else {
                memcpy(Vi, vJ, sizeof(vJ));
                LANE_SIMD {
                    R(Ai, 0) = -g[0]; R(Ai, 1) = -g[1]; R(Ai, 2) = -g[2];
                    R(Ai, 3) = 0.0; R(Ai, 4) = 0.0; R(Ai, 5) = 0.0;
                }
            }
            RBD_SFX(ln_motion_cross)(Vi, vJ, t);
            for (int r = 0; r < 6 * L; r++)
                Ai[r] += t[r];
            RBD_SFX(ln_inertia_apply)(Yc + 10 * L * i, Ai, Fi);
            RBD_SFX(ln_inertia_cross_term)(Yc + 10 * L * i, Vi, t);
            for (int r = 0; r < 6 * L; r++)
                Fi[r] += t[r];
            if (fext != NULL) {
                RBD_SFX(ln_act_pair)(oM + 12 * L * i, fext + 6 * L * i + 3 * L, fext + 6 * L * i, t + 3 * L, t, 0);
                for (int r = 0; r < 6 * L; r++)
                    Fi[r] -= t[r];
            }
        }
        for (int i = nb - 1; i >= 0; i--) {
            for (int col = 0; col < m->nvj[i]; col++) {
                const int d = m->v_idx[i] + col;
                RBD_SFX(ln_dot6)(S + 6 * L * d, F + 6 * L * i, x + (size_t)d * L);
            }
            const int p = m->parents[i];
            if (p >= 0)
                for (int r = 0; r < 6 * L; r++)
                    F[6 * L * p + r] += F[6 * L * i + r];
        }
    }
    if (RBD_SFX(ln_articulated_ltdl)(m, Yc, S, IA, Z))
        return 1;
    for (int k = 0; k < nv; k++)
        memcpy(dinv + (size_t)k * L, ZE(k, k), L * sizeof(double));
    /* the contact rows J into Y and, for constrained dynamics, gamma (_contact_rows) */
    memset(Y, 0, (size_t)L * n * nv * sizeof(double));
    for (int k = 0; k < c->ncontacts; k++) {
        const int* contact = c->table + RBD_CONTACT_FIELDS * k;
        const int dim = contact[RBD_CONTACT_DIM], row = contact[RBD_CONTACT_ROW];
        const int body = contact[RBD_CONTACT_BODY], ref = contact[RBD_CONTACT_REF];
        for (int r = 0; r < dim; r++)
            last[row + r] = body >= 0 ? m->v_idx[body] + m->nvj[body] - 1 : -1;
        if (body < 0) {
            if (tau != NULL)
                for (int r = 0; r < dim; r++)
                    LANE_SIMD R(gamma, row + r) = 0.0;
            continue;
        }
        const double* B = c->frame_offsets + 16 * contact[RBD_CONTACT_FRAME];
        const double* Ab = oM + 12 * L * body;
        for (int r = 0; r < 12; r++)  /* oMf = oM B, B (the frame's offset) in every lane */
            LANE_SIMD R(t12, r) = B[r];
        RBD_SFX(ln_compose)(Ab, t12, oMf);
        for (int d = last[row]; d >= 0; d = m->dof_parents[d])
            RBD_SFX(ln_at_frame)(ref, dim, oMf, S + 6 * L * d, ROW(Y, row) + (size_t)d * L, nv);
        if (tau == NULL)
            continue;
        const double* w = V + 6 * L * body;
        memcpy(t, A + 6 * L * body, sizeof(t));
        LANE_SIMD {
            R(t, 0) += g[0]; R(t, 1) += g[1]; R(t, 2) += g[2];  /* gravity off */
        }
        if (dim == 3) {  /* + w x (v + w x p), the origin's velocity */
            RBD_SFX(ln_shift_to_frame)(oMf, w, t12);
            LANE_SIMD {
                double w3 = R(w, 3), w4 = R(w, 4), w5 = R(w, 5);
                R(t, 0) += w4 * R(t12, 2) - w5 * R(t12, 1);
                R(t, 1) += w5 * R(t12, 0) - w3 * R(t12, 2);
                R(t, 2) += w3 * R(t12, 1) - w4 * R(t12, 0);
            }
        }
        RBD_SFX(ln_at_frame)(ref, dim, oMf, t, gamma + (size_t)row * L, 1);
    }
    if (tau != NULL) {  /* x = L^-T (tau - h) (ltdl_up) */
        for (int k = 0; k < nv; k++)
            LANE_SIMD R(x, k) = R(tau, k) - R(x, k);
        for (int k = nv - 1; k >= 0; k--) {
            double a[L];
            LANE_SIMD a[l] = -R(x, k);
            RBD_SFX(ln_chain_axpy)(m, m->dof_parents[k], a, ZE(k, 0), x);
        }
    } else {  /* f = -(1 + e) J v */
        for (int r = 0; r < n; r++) {
            RBD_SFX(ln_chain_dot)(m, last[r], ROW(Y, r), v, acc);
            LANE_SIMD R(f, r) = -(1.0 + c->restitution) * acc[l];
        }
    }
    /* Y <- (L^-T J^T)^T, W = Y D^-1, K = W Y^T (_contact_inertia) */
    for (int k = 0; k < c->ncontacts; k++) {
        const int row = c->table[RBD_CONTACT_FIELDS * k + RBD_CONTACT_ROW];
        const int dim = c->table[RBD_CONTACT_FIELDS * k + RBD_CONTACT_DIM];
        for (int d = last[row]; d >= 0; d = m->dof_parents[d]) {  /* (_up_rows) */
            const double* Ld = ZE(d, 0);
            for (int e = m->dof_parents[d]; e >= 0; ) {
                const int s = m->dof_run_start[e];
                for (int r = row; r < row + dim; r++) {
                    double* Yr = ROW(Y, r);
                    double a[L];
                    LANE_SIMD a[l] = R(Yr, d);
                    for (int j = s; j <= e; j++)
                        LANE_SIMD R(Yr, j) -= a[l] * R(Ld, j);
                }
                e = m->dof_parents[s];
            }
        }
    }
    memset(W, 0, (size_t)L * n * nv * sizeof(double));
    for (int r = 0; r < n; r++)
        for (int d = last[r]; d >= 0; d = m->dof_parents[d])
            LANE_SIMD R(ROW(W, r), d) = R(ROW(Y, r), d) * R(dinv, d);
    for (int a = 0; a < c->ncontacts; a++) {
        const int ra = c->table[RBD_CONTACT_FIELDS * a + RBD_CONTACT_ROW];
        const int da = c->table[RBD_CONTACT_FIELDS * a + RBD_CONTACT_DIM];
        for (int b = 0; b <= a; b++) {
            const int rb = c->table[RBD_CONTACT_FIELDS * b + RBD_CONTACT_ROW];
            const int db = c->table[RBD_CONTACT_FIELDS * b + RBD_CONTACT_DIM];
            int ca = last[ra], cb = last[rb];   /* their common chain (_common_dof) */
            while (ca != cb) {
                if (ca > cb)
                    ca = m->dof_parents[ca];
                else
                    cb = m->dof_parents[cb];
            }
            for (int r = ra; r < ra + da; r++)
                for (int s = rb; s < rb + db && s <= r; s++)
                    RBD_SFX(ln_chain_dot)(m, ca, ROW(W, r), ROW(Y, s), K + ((size_t)r * n + s) * L);
        }
    }
    if (tau != NULL)
        for (int r = 0; r < n; r++) {
            RBD_SFX(ln_chain_dot)(m, last[r], ROW(W, r), x, acc);
            LANE_SIMD R(f, r) = -R(gamma, r) - acc[l];
        }
    /* f <- (K + r 1)^-1 f by Cholesky, with the rank test (_contact_solve) */
    #define KE(r, s) (K + ((size_t)(r) * n + (s)) * L)
    double largest[L];
    LANE_SIMD largest[l] = 1.0;
    for (int r = 0; r < n; r++) {
        LANE_SIMD KE(r, r)[l] += c->regularization;
        for (int s = 0; s <= r; s++)
            LANE_SIMD if (fabs(KE(r, s)[l]) > largest[l]) largest[l] = fabs(KE(r, s)[l]);
    }
    for (int r = 0; r < n; r++) {
        double pivot[L];
        int bad = 0;
        LANE_SIMD pivot[l] = KE(r, r)[l];
        for (int k = 0; k < r; k++)
            LANE_SIMD pivot[l] -= KE(r, k)[l] * KE(r, k)[l];
        LANE {  /* (a reduction over the lanes) */
            bad |= !(pivot[l] > c->rank_tol * largest[l]);
            pivot[l] = 1.0 / sqrt(pivot[l]);
        }
        if (bad)
            return 1;
        LANE_SIMD KE(r, r)[l] = pivot[l];
        for (int s = r + 1; s < n; s++) {
            LANE_SIMD acc[l] = KE(s, r)[l];
            for (int k = 0; k < r; k++)
                LANE_SIMD acc[l] -= KE(s, k)[l] * KE(r, k)[l];
            LANE_SIMD KE(s, r)[l] = acc[l] * pivot[l];
        }
    }
    /* the growth of rbd_rank_probe under K^-1 bounds the smallest eigenvalue where the pivots
       cannot (_contact_solve): its room is gamma's, spent */
    double probe_norm = 0.0, stretched[L];
    for (int r = 0; r < n; r++) {
        const double p = rbd_rank_probe(r);
        probe_norm += p * p;
        LANE_SIMD R(gamma, r) = p;
    }
    RBD_SFX(ln_factor_solve)(K, n, gamma);
    LANE_SIMD stretched[l] = 0.0;
    for (int r = 0; r < n; r++)
        LANE_SIMD stretched[l] += R(gamma, r) * R(gamma, r);
    {
        int bad = 0;
        LANE bad |= !(sqrt(probe_norm) > c->rank_tol * largest[l] * sqrt(stretched[l]));
        if (bad && n)
            return 1;
    }
    RBD_SFX(ln_factor_solve)(K, n, f);
    #undef KE
    /* x <- L^-1 (D^-1 x + W^T f) (_apply_inverse_mass), then v + that for impulses */
    if (tau == NULL)
        memset(x, 0, (size_t)L * nv * sizeof(double));
    for (int k = 0; k < nv; k++)
        LANE_SIMD R(x, k) *= R(dinv, k);
    for (int r = 0; r < n; r++) {
        double a[L];
        LANE_SIMD a[l] = R(f, r);
        RBD_SFX(ln_chain_axpy)(m, last[r], a, ROW(W, r), x);
    }
    for (int k = 0; k < nv; k++) {  /* (ltdl_down) */
        RBD_SFX(ln_chain_dot)(m, m->dof_parents[k], ZE(k, 0), x, acc);
        LANE_SIMD R(x, k) -= acc[l];
    }
    if (tau == NULL)
        for (int k = 0; k < nv; k++)
            LANE_SIMD R(x, k) += R(v, k);
    #undef ROW
    #undef ZE
    return 0;
}

/* out = Z x for a lanes matrix Z (n x n rows, row-major) and a lanes vector x (n rows),
   four rows at a time (independent sums in flight); each entry summed over the columns in order */
static void RBD_SFX(rbd_matvec_lanes)(int n, const double* Z, const double* x, double* out) {
    int r = 0;
    for (; r + 4 <= n; r += 4) {
        double acc[4 * L];
        for (int e = 0; e < 4 * L; e++)
            acc[e] = 0.0;
        for (int k = 0; k < n; k++) {
            const double* xk = x + (size_t)k * L;
            for (int t = 0; t < 4; t++) {
                const double* z = Z + ((size_t)(r + t) * n + k) * L;
                LANE_SIMD acc[t * L + l] += z[l] * xk[l];
            }
        }
        memcpy(out + (size_t)r * L, acc, sizeof(acc));
    }
    for (; r < n; r++) {
        double acc[L];
        LANE_SIMD acc[l] = 0.0;
        for (int k = 0; k < n; k++) {
            const double* z = Z + ((size_t)r * n + k) * L;
            LANE_SIMD acc[l] += z[l] * x[(size_t)k * L + l];
        }
        memcpy(out + (size_t)r * L, acc, sizeof(acc));
    }
}

/* out += X* S X^-1: the articulated inertia S (21 rows) of a child in its parent's frame,
   X = parent_from_child (the body-frame congruence: sym3_rotate's rotation, then
   sym6_shift_add's shift, lane by lane) */
static inline void RBD_SFX(ln_sym6_act_add)(const double* restrict X, const double* restrict S,
                                            double* restrict out) {
    LANE_SIMD {
        double M[12], A[6], C[6], Ar[6], Cr[6], Bm[9], T[9], Bp[9], Bpp[9], Lm[9], K[9];
        for (int r = 0; r < 12; r++) M[r] = R(X, r);
        const double px = M[3], py = M[7], pz = M[11];
        A[0] = R(S, 0); A[1] = R(S, 1); A[2] = R(S, 2); A[3] = R(S, 6); A[4] = R(S, 7); A[5] = R(S, 11);
        C[0] = R(S, 15); C[1] = R(S, 16); C[2] = R(S, 17); C[3] = R(S, 18); C[4] = R(S, 19); C[5] = R(S, 20);
        Bm[0] = R(S, 3); Bm[1] = R(S, 4); Bm[2] = R(S, 5);
        Bm[3] = R(S, 8); Bm[4] = R(S, 9); Bm[5] = R(S, 10);
        Bm[6] = R(S, 12); Bm[7] = R(S, 13); Bm[8] = R(S, 14);
        /* R A R^T, R C R^T (sym3_rotate) */
#define RBD_ROT_SYM3(Y, o)                                                                      \
        for (int i = 0; i < 3; i++) {                                                           \
            T[3 * i + 0] = M[4 * i] * Y[0] + M[4 * i + 1] * Y[1] + M[4 * i + 2] * Y[2];         \
            T[3 * i + 1] = M[4 * i] * Y[1] + M[4 * i + 1] * Y[3] + M[4 * i + 2] * Y[4];         \
            T[3 * i + 2] = M[4 * i] * Y[2] + M[4 * i + 1] * Y[4] + M[4 * i + 2] * Y[5];         \
        }                                                                                       \
        o[0] = T[0] * M[0] + T[1] * M[1] + T[2] * M[2];                                         \
        o[1] = T[0] * M[4] + T[1] * M[5] + T[2] * M[6];                                         \
        o[2] = T[0] * M[8] + T[1] * M[9] + T[2] * M[10];                                        \
        o[3] = T[3] * M[4] + T[4] * M[5] + T[5] * M[6];                                         \
        o[4] = T[3] * M[8] + T[4] * M[9] + T[5] * M[10];                                        \
        o[5] = T[6] * M[8] + T[7] * M[9] + T[8] * M[10];
        RBD_ROT_SYM3(A, Ar)
        RBD_ROT_SYM3(C, Cr)
#undef RBD_ROT_SYM3
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 3; j++)
                T[3 * i + j] = M[4 * i] * Bm[j] + M[4 * i + 1] * Bm[3 + j] + M[4 * i + 2] * Bm[6 + j];
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 3; j++)
                Bp[3 * i + j] = T[3 * i] * M[4 * j] + T[3 * i + 1] * M[4 * j + 1] + T[3 * i + 2] * M[4 * j + 2];
        {   /* row i of A' is (Ar[a[i]], Ar[b[i]], Ar[c[i]]) */
            static const int ia[3] = {0, 1, 2}, ib[3] = {1, 3, 4}, ic[3] = {2, 4, 5};
            for (int i = 0; i < 3; i++) {
                double a0 = Ar[ia[i]], a1 = Ar[ib[i]], a2 = Ar[ic[i]];
                Bpp[3 * i + 0] = Bp[3 * i + 0] - (a1 * pz - a2 * py);
                Bpp[3 * i + 1] = Bp[3 * i + 1] - (a2 * px - a0 * pz);
                Bpp[3 * i + 2] = Bp[3 * i + 2] - (a0 * py - a1 * px);
            }
        }
        for (int j = 0; j < 3; j++) {
            Lm[j] = py * Bp[6 + j] - pz * Bp[3 + j];
            Lm[3 + j] = pz * Bp[j] - px * Bp[6 + j];
            Lm[6 + j] = px * Bp[3 + j] - py * Bp[j];
            K[j] = py * Bpp[6 + j] - pz * Bpp[3 + j];
            K[3 + j] = pz * Bpp[j] - px * Bpp[6 + j];
            K[6 + j] = px * Bpp[3 + j] - py * Bpp[j];
        }
        R(out, 0) += Ar[0]; R(out, 1) += Ar[1]; R(out, 2) += Ar[2];
        R(out, 6) += Ar[3]; R(out, 7) += Ar[4]; R(out, 11) += Ar[5];
        R(out, 3) += Bpp[0]; R(out, 4) += Bpp[1]; R(out, 5) += Bpp[2];
        R(out, 8) += Bpp[3]; R(out, 9) += Bpp[4]; R(out, 10) += Bpp[5];
        R(out, 12) += Bpp[6]; R(out, 13) += Bpp[7]; R(out, 14) += Bpp[8];
        R(out, 15) += Cr[0] + Lm[0] + K[0];
        R(out, 16) += Cr[1] + Lm[1] + K[3];
        R(out, 17) += Cr[2] + Lm[2] + K[6];
        R(out, 18) += Cr[3] + Lm[4] + K[4];
        R(out, 19) += Cr[4] + Lm[5] + K[7];
        R(out, 20) += Cr[5] + Lm[8] + K[8];
    }
}


/* ABA on a block (in body frames, lane by lane; a joint's dofs eliminated one at a time
   as k_aba does): qdd (nv rows) from the placements X (12 rows per body), v, tau (nv
   rows), fext (6 rows per body, or NULL); work: 45 rows per body, 7 per dof.  status[l]
   = 1 + the first singular joint of lane l (backward order), else 0. */
static void RBD_SFX(rbd_aba_lanes)(const rbd_lanes_model* m, const double* g, const double* X,
                                   const double* v, const double* tau, const double* fext, double* qdd,
                                   double* work, int* status) {
    enum { B_V = 0, B_C = 6, B_IA = 12, B_PA = 33, B_A = 39, PER = 45 };
    const int nb = m->nb;
    double* U = work + PER * L * nb;        /* 6 rows per dof */
    double* Dinv = U + 6 * L * m->nv;       /* 1 / D: a row per dof */
    double vJ[6 * L], t[6 * L], pa[6 * L], a0[6 * L];
    for (int l = 0; l < L; l++)
        status[l] = 0;
    for (int i = 0; i < nb; i++) {
        const int p = m->parents[i];
        const double* xi = X + 12 * L * i;
        double* B = work + PER * L * i;
        const double* Y = m->inertias + 10 * i;
        memset(vJ, 0, sizeof(vJ));
        RBD_SFX(ln_motion_add)(m, i, v + m->v_idx[i] * L, vJ);
        if (p >= 0) {
            RBD_SFX(ln_inv_act_motion)(xi, work + PER * L * p + B_V * L, B + B_V * L);
            for (int r = 0; r < 6 * L; r++)
                B[B_V * L + r] += vJ[r];
            memset(B + B_C * L, 0, 6 * L * sizeof(double));
            RBD_SFX(ln_motion_cross_add)(B + B_V * L, vJ, B + B_C * L);
        } else {
            memcpy(B + B_V * L, vJ, sizeof(vJ));
            memset(B + B_C * L, 0, 6 * L * sizeof(double));
        }
        /* IA = the rigid inertia (sym6_from_inertia), the same in every lane */
        const double S21[21] = {Y[0], 0.0, 0.0, 0.0, Y[3], -Y[2], Y[0], 0.0, -Y[3], 0.0, Y[1],
                                Y[0], Y[2], -Y[1], 0.0, Y[4], Y[5], Y[6], Y[7], Y[8], Y[9]};
        for (int r = 0; r < 21; r++)
            LANE_SIMD R(B + B_IA * L, r) = S21[r];
        /* pA = v x* (Y v) (the body force of RNEA at zero acceleration) - fext */
        memset(t, 0, sizeof(t));
        RBD_SFX(ln_body_force)(Y, t, B + B_V * L, B + B_PA * L);
        if (fext != NULL)
            for (int r = 0; r < 6 * L; r++)
                B[B_PA * L + r] -= fext[6 * L * i + r];
    }
    for (int i = nb - 1; i >= 0; i--) {
        const int p = m->parents[i], vi = m->v_idx[i], kind = m->kinds[i];
        const double* xi = X + 12 * L * i;
        double* B = work + PER * L * i;
        double* IA = B + B_IA * L;
        double* pA = B + B_PA * L;
        /* a dof at a time from the joint's last (k_aba): U = IA s, D = s^T U + armature,
           u = tau - s^T pA (kept in qdd until the last pass), pA += U u / D, IA -= U U^T / D */
        for (int d = vi + m->nvj[i] - 1; d >= vi; d--) {
            const int c = m->cols[6 * kind + d - vi];
            double* Ud = U + 6 * L * d;
            double* Dd = Dinv + L * d;
            double D[L], u[L];
            if (c >= 0) {  /* a unit column: IA's column c, D its diagonal entry */
                for (int r = 0; r < 6; r++)
                    memcpy(Ud + r * L, IA + RBD_SFX(ln_sym6)[6 * r + c] * L, L * sizeof(double));
                LANE_SIMD {
                    D[l] = R(Ud, c);
                    u[l] = R(tau, d) - R(pA, c);
                }
            } else {
                double sc[6] = {0.0, 0.0, 0.0, 0.0, 0.0, 0.0};
                const double* ax = m->axes + 3 * i;
                const int o = c == RBD_AXIS_ANGULAR ? 3 : 0;
                sc[o] = ax[0]; sc[o + 1] = ax[1]; sc[o + 2] = ax[2];
                RBD_SFX(ln_sym6_matvec_const)(IA, sc, Ud);
                LANE_SIMD {
                    D[l] = ax[0] * R(Ud, o) + ax[1] * R(Ud, o + 1) + ax[2] * R(Ud, o + 2);
                    u[l] = R(tau, d) - (ax[0] * R(pA, o) + ax[1] * R(pA, o + 1) + ax[2] * R(pA, o + 2));
                }
            }
            const double arm = m->armature[d], tol = m->singular_tol[i];
            LANE_SIMD {
                const double dd = D[l] + arm;
                const int ok = dd > tol;  /* (NaN included) */
                Dd[l] = ok ? 1.0 / dd : 0.0;
                if (!ok && status[l] == 0)
                    status[l] = 1 + i;
                R(qdd, d) = u[l];
                u[l] *= Dd[l];
            }
            RBD_SFX(ln_axpy6)(u, Ud, pA);
            RBD_SFX(ln_sym6_rank1_sub)(IA, Ud, Dd);
        }
        if (p < 0)
            continue;
        /* pa = pA + Ia c, then into the parent */
        memcpy(pa, pA, sizeof(pa));
        RBD_SFX(ln_sym6_matvec_add)(IA, B + B_C * L, pa);
        double* Bp = work + PER * L * p;
        RBD_SFX(ln_sym6_act_add)(xi, IA, Bp + B_IA * L);
        RBD_SFX(ln_act_pair)(xi, pa + 3 * L, pa, Bp + B_PA * L + 3 * L, Bp + B_PA * L, 1);
    }
    LANE_SIMD {
        R(a0, 0) = -g[0]; R(a0, 1) = -g[1]; R(a0, 2) = -g[2];
        R(a0, 3) = 0.0; R(a0, 4) = 0.0; R(a0, 5) = 0.0;
    }
    for (int i = 0; i < nb; i++) {
        const int p = m->parents[i], vi = m->v_idx[i];
        const double* xi = X + 12 * L * i;
        double* B = work + PER * L * i;
        double* acc = B + B_A * L;
        RBD_SFX(ln_inv_act_motion)(xi, p >= 0 ? work + PER * L * p + B_A * L : a0, acc);
        for (int r = 0; r < 6 * L; r++)
            acc[r] += B[B_C * L + r];
        for (int d = vi; d < vi + m->nvj[i]; d++) {  /* qdd = (u - U^T a) / D, a += s qdd */
            double Ua[L];
            RBD_SFX(ln_dot6)(U + 6 * L * d, acc, Ua);
            RBD_SFX(ln_pivot_solve)(Ua, Dinv + L * d, qdd + L * d);
            RBD_SFX(ln_motion_add_column)(m, i, d - vi, qdd + d * L, acc);
        }
    }
}

#undef RBD_SYM6_ROWS
#undef RBD_SET
#undef RBD_ADD
#undef L
#undef LANE
#undef LANE_SIMD
#undef RBD_PRAGMA
#undef R
