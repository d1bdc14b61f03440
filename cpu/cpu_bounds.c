/* cpu_bounds.c: proven per-element bounds of each standard, and normal() emulated to the bit. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu_engine.h"
#include "cpu_internal.h"
#include "../host/er_alloc.h"
#include "../host/er_bel.h"
#include "../host/er_progress.h"
#include "exactref/core/er_d64.h"
#include "../host/er_isa.h"
#include "../host/er_par.h"

/*
 * Every bound is proven in docs/proofs/ (normal.md, any-order.md, engines.md).  The per-element
 * arithmetic is the shared core's (include/exactref/core/er_bounds.h: er_bound_element), the same
 * source the OpenCL and CUDA kernels run; this file runs the elements of a batch that the front door
 * prepared (src/tolerance.c: er_bjob) on the CPU's threads.  On the CPU, normal's and
 * any_order's exact quantities (S and the integer sums of the quantized magnitudes) come from the
 * matrix-product kernel (cpu/cpu_gemm.c) in tiles of rows (bounds_tile_rows): exact in any order, so the bits are those
 * er_bound_element gives when it forms them one element at a time.
 */

typedef struct {
    const er_bjob *job;
    er_bounds *out;
    int64_t e0, r0, r1;
    er_progress *pg; /* rows done, for the caller's hook */
    const double *S, *TT, *WW; /* bounds_blas: the tile's products, row i at (i - i0) * n */
    const float *TF;           /* normal: NT through binary32 (exact_el_tf) in place of TT, or NULL */
    int64_t i0;
} bctx;

/* Subnormals of compute format cf to the zero of their sign (the core's er_d_flush). */
static double flush_sub(int cf, double x) { return er_bits_to_double(er_d_flush(cf, er_double_to_bits(x))); }

/* An element of a gemm_form batch whose row and column have grids (sa, sb not ER_BQ_BAD), B' by rows:
 * er_b_exact_element with the quantities given and sd, a Sum2 of its products in index order, for the
 * ends (er_b_exact_element_dd; the bits of er_bound_element). */
static void er_bjob_element_dd(const er_bjob *j, int64_t i, int64_t col, double S, double NT, double NW,
                               const double *sd, er_bel *o)
{
    int64_t k = j->par.k, n = j->n;
    er_b_exact_element_dd(&j->par, j->af + i * k, j->bf + col, j->cv ? j->cv[i * n + col] : 0.0, j->rb[i * n + col], S,
                          NT, NW, j->sa[i] + j->sb[col], j->sw[i] + j->sb[col], sd, o);
}

void er_bjob_element(const er_bjob *j, int64_t i, int64_t col, const double *pre, er_bel *o)
{
    int64_t k = j->par.k, n = j->n;
    int sa = j->sa ? j->sa[i] : ER_BQ_BAD, sw = j->sw ? j->sw[i] : ER_BQ_BAD, sb = j->sb ? j->sb[col] : ER_BQ_BAD;
    const double *qa = j->qa ? j->qa + i * k : NULL, *qw = j->qw ? j->qw + i * k : NULL;
    double loc[3];
    if (j->par.gemm_form && !pre && sa != ER_BQ_BAD && sb != ER_BQ_BAD) {
        /* no matrix products (out of memory): the same quantities element by element, B' by rows */
        const double *ar = j->af + i * k;
        loc[0] = loc[1] = loc[2] = 0;
        for (int64_t p = 0; p < k; p++) {
            double q = j->qb[p * n + col];
            loc[0] = fma(ar[p], j->bf[p * n + col], loc[0]);
            loc[1] = loc[1] + qa[p] * q;
            loc[2] = loc[2] + qw[p] * q;
        }
        pre = loc;
    }
    if (j->bft && !(j->par.kind == ER_BK_ENGINE && j->qb)) {
        /* B' by columns (the CPU's copy): the same values in the same order, read with step 1 (engines
         * with grids: by rows, as qb is) */
        er_bpar c = j->par;
        c.ldb = 1;
        er_bound_element(&c, j->af + i * k, j->bft + col * k, j->ea ? j->ea + i * k : NULL,
                         j->ebt ? j->ebt + col * k : NULL, j->rw, j->da ? j->da + i * k : NULL,
                         j->dbt ? j->dbt + col * k : NULL, qa, qw, NULL, sa, sw, sb, j->cv ? j->cv[i * n + col] : 0.0,
                         j->dc ? j->dc[i * n + col] : 0.0, j->rb[i * n + col], pre, o);
        return;
    }
    er_bound_element(&j->par, j->af + i * k, j->bf + col, j->ea ? j->ea + i * k : NULL, j->eb ? j->eb + col : NULL,
                     j->rw, j->da ? j->da + i * k : NULL, j->db ? j->db + col : NULL, qa, qw, j->qb ? j->qb + col : NULL,
                     sa, sw, sb, j->cv ? j->cv[i * n + col] : 0.0, j->dc ? j->dc[i * n + col] : 0.0, j->rb[i * n + col],
                     pre, o);
}

/* ---- normal's and any_order's elements from their exact quantities, the common case quickly ---- */

#include "cpu_finish.h"

/* The batch's constants of er_b_exact_element and er_b_radius_exact (the same operations on the same
 * values: computed once here rather than per element). */
typedef struct {
    er_cpu_fq fq;
    int any, has_c;
    double n1, g, gr, under, ge, r_c;
} exact_q;

static void exact_q_init(exact_q *Q, const er_bjob *j)
{
    const er_bpar *c = &j->par;
    er_cpu_fq_init(&Q->fq, c);
    Q->any = c->kind == ER_BK_ANY;
    Q->has_c = c->has_c;
    Q->n1 = (double)c->k + (c->has_c ? 1 : 0) + c->c_rounds;
    Q->g = er_b_gamma(c->u, Q->n1);
    Q->gr = er_b_gamma(c->u, c->r_max);
    Q->under = er_b_up(2.0 * c->eta * (double)c->k);
    Q->ge = er_b_up(er_b_gamma(0x1p-53, (double)c->k) * (double)c->k);
    Q->r_c = c->r_c;
    Q->fq.ok = Q->fq.ok && c->gemm_form;
}

/* er_b_radius_exact with the batch's constants (the same operations). */
static double exact_radius(const exact_q *Q, const er_bpar *c, double T, double W, double cval)
{
    double cm = fabs(cval), rad;
    if (cm > 0) {
        T = er_b_up(T + cm);
        W = er_b_up(W + er_b_up(cm * Q->r_c));
    }
    if (!er_b_finite(T)) return ER_B_INF;
    rad = er_b_up(er_b_up(Q->g * T) * Q->n1);
    if (!Q->any && er_b_up(T * (1 + 0x1p-20)) < c->max_c) {
        double rn = er_b_up(Q->gr * W);
        if (rn < rad) rad = rn;
    }
    return er_b_up(rad + Q->under);
}

/* er_b_exact_element's end game from an enclosure [x0 - e, x0 + e] of the products' exact sum (C
 * added here): where both keys are decided in the common case, er_b_finish_lh's result (any enclosure
 * decides the same keys: er_b_key_of).  1: done. */
static int exact_keys(const er_bjob *j, const exact_q *Q, int64_t i, int64_t col, double x0, double e, double cval,
                      double rad, er_bel *o)
{
    double xl = er_b_down(x0 - e), xh = er_b_up(x0 + e);
    if (Q->has_c) {
        xl = er_b_down(xl + cval);
        xh = er_b_up(xh + cval);
    }
    return er_cpu_fq_keys(&Q->fq, j->rb[i * j->n + col], xl, xh, rad, o);
}

/*
 * First pass over an element of a gemm_form batch whose S and W are known and NT either exactly
 * (NT, tf = 0) or through a binary32 product NTf (tf = 1: NT then lies within NTf (1 -+ rho), rho =
 * (k + 8) 2^-22 for k <= 2^16: each conversion to binary32 moves a factor by at most 2^-24 of itself,
 * the binary32 sum of k non-negative terms by at most gamma_k = k 2^-24 / (1 - k 2^-24) of the exact
 * sum of the rounded products, no term overflows or underflows (integers below 2^53): together below
 * (k + 3) 2^-24 (1 + 2^-7) < rho).  normal's radius is min(rad(T), rn(W)) (er_b_radius_exact) with
 * rad and its guard T (1 + 2^-20) < max_c monotone in T: where rn <= rad(T_lo) and the guard holds at
 * T_hi, the radius is rn whatever T is within, and the enclosure of x may use T_hi (any upper bound
 * of sum |x_p| serves).  Returns 1 when the element is done (er_b_exact_element's bits), 0 when it is
 * left for the second pass (NT summed exactly, a tighter enclosure: exact_second).
 */
static int exact_first(const er_bjob *j, const exact_q *Q, int64_t i, int64_t col, double S, double NT, int tf,
                       float NTf, double NW, er_bel *o)
{
    const er_bpar *c = &j->par;
    int64_t n = j->n;
    int sa = j->sa[i], sb = j->sb[col];
    double cval = j->cv ? j->cv[i * n + col] : 0.0;
    if (sa == ER_BQ_BAD || sb == ER_BQ_BAD) {
        er_bjob_element(j, i, col, NULL, o); /* the general loop: no quantities */
        return 1;
    }
    if (!Q->fq.ok || !er_b_finite(cval)) {
        if (tf) return 0; /* er_b_exact_element needs NT itself */
        /* a binary64 output: S's enclosure (k 2^-53 T wide) almost never decides its ends, the second
         * pass's Sum2 nearly always does (exact_second) */
        if (c->out_fmt == ER_FMT_F64 && er_b_finite(cval)) return 0;
        double pre[3] = {S, NT, NW};
        er_bjob_element(j, i, col, pre, o);
        return 1;
    }
    if (!tf) {
        double T = er_b_scale_up(NT, sa + sb), W = Q->any ? 0.0 : er_b_scale_up(NW, j->sw[i] + sb);
        double rad = exact_radius(Q, c, T, W, cval);
        if (!er_b_finite(rad)) {
            double pre[3] = {S, NT, NW};
            er_bjob_element(j, i, col, pre, o);
            return 1;
        }
        return exact_keys(j, Q, i, col, S, er_b_up(Q->ge * T), cval, rad, o);
    }
    double rho = (double)(c->k + 8) * 0x1p-22, nt = (double)NTf;
    if (!er_b_finite(nt)) return 0;
    double T_lo = nt > 0 ? er_b_down(ldexp(er_b_down(nt * (1.0 - rho)), sa + sb)) : 0.0;
    double T_hi = er_b_scale_up(er_b_up(nt * (1.0 + rho)), sa + sb);
    if (T_lo < 0) T_lo = 0;
    double W = er_b_scale_up(NW, j->sw[i] + sb), cm = fabs(cval), Wr = W;
    if (cm > 0) Wr = er_b_up(W + er_b_up(cm * Q->r_c));
    double Tr_hi = cm > 0 ? er_b_up(T_hi + cm) : T_hi, Tr_lo = cm > 0 ? er_b_up(T_lo + cm) : T_lo;
    if (!er_b_finite(Tr_hi) || !(er_b_up(Tr_hi * (1 + 0x1p-20)) < c->max_c)) return 0;
    double rn = er_b_up(Q->gr * Wr);
    if (!(rn <= er_b_up(er_b_up(Q->g * Tr_lo) * Q->n1))) return 0;
    double rad = er_b_up(rn + Q->under);
    if (!er_b_finite(rad)) return 0;
    return exact_keys(j, Q, i, col, S, er_b_up(Q->ge * T_hi), cval, rad, o);
}

/* exact_first a vector of columns at a time: cpu_bounds_lanes.h at AVX-512's and AVX2's widths */
#define ER_VEC_KERNELS "cpu_bounds_lanes.h"
#include "cpu_vec_each.h"

/* An element the first pass left, with NT exactly and res, a Sum2 of its exact products in index
 * order (TwoSum, the error terms summed in binary64; Ogita, Rump and Oishi 2005): |res - x| <= u |x| +
 * gamma_k^2 sum |x_p|, so |res - x| <= 2^-52 |res| + 2 gamma_k^2 T (u = 2^-53).  S's enclosure, then
 * res's, then er_b_exact_element itself (the exact sum): the same bits whichever decides. */
static void exact_second(const er_bjob *j, const exact_q *Q, int64_t i, int64_t col, double S, double NT, double NW,
                         const double *sd, er_bel *o)
{
    const er_bpar *c = &j->par;
    int sa = j->sa[i], sb = j->sb[col];
    double cval = j->cv ? j->cv[i * j->n + col] : 0.0, res = sd[0] + sd[1];
    if (Q->fq.ok && er_b_finite(cval) && er_b_finite(res)) {
        double T = er_b_scale_up(NT, sa + sb), W = Q->any ? 0.0 : er_b_scale_up(NW, j->sw[i] + sb);
        double rad = exact_radius(Q, c, T, W, cval);
        if (er_b_finite(rad)) {
            if (exact_keys(j, Q, i, col, S, er_b_up(Q->ge * T), cval, rad, o)) return;
            double e2 = er_b_up(er_b_up(fabs(res) * 0x1p-52) + er_b_up(er_b_up(Q->ge * Q->ge) * er_b_up(2.0 * T)));
            if (exact_keys(j, Q, i, col, res, e2, cval, rad, o)) return;
        }
    }
    /* the core's element, with the Sum2 as a double-double for its ends (binary64 outputs need it for
     * nearly every element: it spares the exact sum) */
    er_bjob_element_dd(j, i, col, S, NT, NW, sd, o);
}

/* The elements a first pass left, together: one pass over B's rows (contiguous) for all of them,
 * forming each one's NT (when it came through binary32) and Sum2 in index order, then exact_second. */
typedef struct {
    int64_t i, col, q; /* the element, and its index in the tile's products */
} exact_left;

/* Terms [p0, p1) of four left elements: their TwoSum chains (and, with tf, their integer sums NT)
 * side by side, each in index order. */
static inline __attribute__((always_inline)) void pass2_four(const er_bjob *j, const exact_left *L, int64_t p0,
                                                             int64_t p1, double *sv, double *cv, double *nv, int tf)
{
    int64_t k = j->par.k, n = j->n;
    const double *a0 = j->af + L[0].i * k, *a1 = j->af + L[1].i * k, *a2 = j->af + L[2].i * k, *a3 = j->af + L[3].i * k;
    const double *b0 = j->bf + L[0].col, *b1 = j->bf + L[1].col, *b2 = j->bf + L[2].col, *b3 = j->bf + L[3].col;
    const double *q0 = NULL, *q1 = NULL, *q2 = NULL, *q3 = NULL, *r0 = NULL, *r1 = NULL, *r2 = NULL, *r3 = NULL;
    if (tf) {
        q0 = j->qa + L[0].i * k, q1 = j->qa + L[1].i * k, q2 = j->qa + L[2].i * k, q3 = j->qa + L[3].i * k;
        r0 = j->qb + L[0].col, r1 = j->qb + L[1].col, r2 = j->qb + L[2].col, r3 = j->qb + L[3].col;
    }
    double s0 = sv[0], s1 = sv[1], s2 = sv[2], s3 = sv[3], c0 = cv[0], c1 = cv[1], c2 = cv[2], c3 = cv[3];
    double n0 = nv[0], n1 = nv[1], n2 = nv[2], n3 = nv[3];
    for (int64_t p = p0; p < p1; p++) {
        double x0 = a0[p] * b0[p * n], x1 = a1[p] * b1[p * n]; /* exact (gemm_form) */
        double x2 = a2[p] * b2[p * n], x3 = a3[p] * b3[p * n];
        double t0 = s0 + x0, t1 = s1 + x1, t2 = s2 + x2, t3 = s3 + x3;
        double z0 = t0 - s0, z1 = t1 - s1, z2 = t2 - s2, z3 = t3 - s3;
        c0 += (s0 - (t0 - z0)) + (x0 - z0);
        c1 += (s1 - (t1 - z1)) + (x1 - z1);
        c2 += (s2 - (t2 - z2)) + (x2 - z2);
        c3 += (s3 - (t3 - z3)) + (x3 - z3);
        s0 = t0, s1 = t1, s2 = t2, s3 = t3;
        if (tf) { /* integers below 2^53: exact */
            n0 += q0[p] * r0[p * n];
            n1 += q1[p] * r1[p * n];
            n2 += q2[p] * r2[p * n];
            n3 += q3[p] * r3[p * n];
        }
    }
    sv[0] = s0, sv[1] = s1, sv[2] = s2, sv[3] = s3;
    cv[0] = c0, cv[1] = c1, cv[2] = c2, cv[3] = c3;
    nv[0] = n0, nv[1] = n1, nv[2] = n2, nv[3] = n3;
}

/* The batch of cnt left elements with acc (3 cnt doubles) as their running sums.  Each element's terms
 * in index order (so the same res whatever the grouping), in blocks of B's rows small enough to stay in
 * the cache while every element takes its terms from them (a pass over all of B's rows per element
 * group fetched a line of B per term), four elements' chains at a time. */
static void exact_pass2_with(const er_bjob *j, const exact_q *Q, const exact_left *L, int64_t cnt, double *acc,
                             const double *S, const double *TT, const double *WW, int tf, er_bounds *out, int64_t e0)
{
    int64_t k = j->par.k, n = j->n;
    double *sv = acc, *cv = acc + cnt, *nv = acc + 2 * cnt;
    for (int64_t u = 0; u < cnt; u++) sv[u] = cv[u] = nv[u] = 0;
    int64_t pb = ((int64_t)1 << 18) / (16 * (n > 0 ? n : 1)); /* bf's and qb's rows of a block: 256 KiB */
    if (pb < 8) pb = 8;
    for (int64_t p0 = 0; p0 < k; p0 += pb) {
        int64_t p1 = k - p0 < pb ? k : p0 + pb;
        for (int64_t u0 = 0; u0 < cnt; u0 += 4) {
            int g = cnt - u0 < 4 ? (int)(cnt - u0) : 4;
            if (g == 4) {
                if (tf) pass2_four(j, L + u0, p0, p1, sv + u0, cv + u0, nv + u0, 1);
                else pass2_four(j, L + u0, p0, p1, sv + u0, cv + u0, nv + u0, 0);
                continue;
            }
            for (int64_t u = u0; u < u0 + g; u++) {
                const double *ar = j->af + L[u].i * k, *bc = j->bf + L[u].col;
                const double *qar = tf ? j->qa + L[u].i * k : NULL, *qc = tf ? j->qb + L[u].col : NULL;
                double s_ = sv[u], c_ = cv[u], n_ = nv[u];
                for (int64_t p = p0; p < p1; p++) {
                    double x = ar[p] * bc[p * n]; /* exact (gemm_form) */
                    double t = s_ + x, z = t - s_;
                    c_ += (s_ - (t - z)) + (x - z);
                    s_ = t;
                    if (tf) n_ += qar[p] * qc[p * n]; /* integers below 2^53: exact */
                }
                sv[u] = s_, cv[u] = c_, nv[u] = n_;
            }
        }
    }
    for (int64_t u = 0; u < cnt; u++) {
        er_bel b;
        const double sd[2] = {sv[u], cv[u]};
        exact_second(j, Q, L[u].i, L[u].col, S[L[u].q], tf ? nv[u] : TT[L[u].q], Q->any ? 0.0 : WW[L[u].q], sd, &b);
        er_bel_store(out, e0 + L[u].i * n + L[u].col, &b);
    }
}

static void exact_pass2(const er_bjob *j, const exact_q *Q, const exact_left *L, int64_t cnt, const double *S,
                        const double *TT, const double *WW, int tf, er_bounds *out, int64_t e0)
{
    double *acc = (double *)malloc(sizeof(double) * 3 * (size_t)(cnt ? cnt : 1));
    if (acc) {
        exact_pass2_with(j, Q, L, cnt, acc, S, TT, WW, tf, out, e0);
        free(acc);
        return;
    }
    /* no memory: one element at a time (the same bits) */
    for (int64_t u = 0; u < cnt; u++) {
        double one[3];
        exact_pass2_with(j, Q, L + u, 1, one, S, TT, WW, tf, out, e0);
    }
}

/* Rows [r0, r1) of a tile whose products start at row i0: the first pass, then the second for what
 * it left. */
static void exact_rows(const er_bjob *j, int64_t r0, int64_t r1, int64_t i0, const double *S, const double *TT,
                       const float *TF, const double *WW, er_bounds *out, int64_t e0, er_progress *pg)
{
    int64_t n = j->n, cnt = 0, cap = 0;
    exact_left *L = NULL;
    exact_q Q;
    exact_q_init(&Q, j);
    unsigned v_done = 0; /* the vector first pass: the lanes it finished, of columns v_base .. */
    int64_t v_base = -8;
    int vw = Q.fq.ok ? er_vec_width() : 0; /* its width: 8 (AVX-512), 4 (AVX2) or none */
#ifdef ER_VEC_HAVE
    er_v8_first_q V8;
    er_v4_first_q V4;
    if (vw == 8) er_v8_first_init(&V8, &Q, j);
    if (vw == 4) er_v4_first_init(&V4, &Q, j);
#else
    vw = 0;
#endif
    for (int64_t i = r0; i < r1; er_progress_add(pg, n), i++)
        for (int64_t col = 0; col < n; col++) {
            er_bel b;
            int64_t q = (i - i0) * n + col;
            /* eight or four columns at once where the processor allows; the lanes left, one by one below */
            if (col == 0) v_base = -8;
            if (vw && (col & (vw - 1)) == 0 && col + vw <= n && j->sa[i] != ER_BQ_BAD) {
#ifdef ER_VEC_HAVE
                int64_t e = e0 + i * n + col;
                v_done = vw == 8 ? er_v8_exact_first(j, &Q, &V8, i, col, q, S, TT, TF, WW, out, e)
                                 : er_v4_exact_first(j, &Q, &V4, i, col, q, S, TT, TF, WW, out, e);
#endif
                v_base = col;
            }
            if (col - v_base < vw && ((v_done >> (col - v_base)) & 1u)) continue;
            if (exact_first(j, &Q, i, col, S[q], TF ? 0.0 : TT[q], TF != NULL, TF ? TF[q] : 0.0f,
                            Q.any ? 0.0 : WW[q], &b)) {
                er_bel_store(out, e0 + i * n + col, &b);
                continue;
            }
            if (cnt == cap) {
                int64_t nc = cap ? 2 * cap : 256;
                exact_left *nl = (exact_left *)realloc(L, sizeof *L * (size_t)nc);
                if (!nl) {
                    /* no memory for the list: this element alone (the same bits) */
                    exact_left one = {i, col, q};
                    exact_pass2(j, &Q, &one, 1, S, TT, WW, TF != NULL, out, e0);
                    continue;
                }
                L = nl;
                cap = nc;
            }
            L[cnt].i = i;
            L[cnt].col = col;
            L[cnt].q = q;
            if (++cnt == 65536) { /* (binary64 outputs leave every element) the list's memory bounded */
                exact_pass2(j, &Q, L, cnt, S, TT, WW, TF != NULL, out, e0);
                cnt = 0;
            }
        }
    if (cnt) exact_pass2(j, &Q, L, cnt, S, TT, WW, TF != NULL, out, e0);
    free(L);
}

/* ---- Threads over rows. ---- */

/* An engine's elements (no slack of A or B), register-blocked: cpu/cpu_bounds_engine.c, the bits of
 * er_bound_element.  0: no memory (the caller takes the element-at-a-time path). */
#include "cpu_bounds_engine.h"
static int engine_rows(bctx *c) { return er_cpu_engine_rows(c->job, c->out, c->e0, c->r0, c->r1, -1, c->pg); }

/* C = A B for `rows` rows of A (k x n B, row-major, binary64): every matrix product of the bounds
 * goes through here (valid in any order: the quantities are exact sums, or S, whose bound holds for
 * every order).  0 on success. */
static int bounds_gemm(const double *a, const double *b, double *out, int64_t rows, int64_t n, int64_t k)
{
    return er_cpu_gemm_rows(a, k, b, n, out, n, 0, rows, n, k);
}

/* Rows per tile of normal's and any_order's matrix products: at least 128, and as many as keep each
 * of the three work arrays (tile rows x n) within 8 MiB, so that B' is packed for few tiles: the work
 * memory is bounded, whatever m. */
static int64_t bounds_tile_rows(int64_t n)
{
    int64_t t = ((int64_t)1 << 20) / (n > 0 ? n : 1);
    return t < 128 ? 128 : t;
}

static void bounds_rows(bctx *c)
{
    const er_bjob *j = c->job;
    int64_t n = j->n, k = j->par.k;
    /* normal and any_order: S = A' B', and the integer sums of the quantized magnitudes, three matrix
     * products per tile of rows (er_bound_element's quantities, in any order) */
    double *S = NULL, *TT = NULL, *WW = NULL;
    int any = j->par.kind == ER_BK_ANY;
    if (j->par.kind == ER_BK_ENGINE && !j->par.slack_a && !j->par.slack_b && engine_rows(c)) return;
    const int64_t TR = bounds_tile_rows(n);
    if (j->par.gemm_form && c->r1 > c->r0 && k > 0) {
        int64_t tr = c->r1 - c->r0 < TR ? c->r1 - c->r0 : TR;
        S = malloc(sizeof(double) * (size_t)(tr * n));
        TT = malloc(sizeof(double) * (size_t)(tr * n));
        WW = any ? NULL : malloc(sizeof(double) * (size_t)(tr * n));
        if (!S || !TT || (!any && !WW)) { /* no memory: er_bjob_element forms the same quantities itself */
            free(S); free(TT); free(WW);
            S = TT = WW = NULL;
        }
    }
    for (int64_t i0 = c->r0; i0 < c->r1; i0 += TR) {
        int64_t i1 = c->r1 - i0 < TR ? c->r1 : i0 + TR, rows = i1 - i0;
        int have = S && bounds_gemm(j->af + i0 * k, j->bf, S, rows, n, k) == 0 &&
                   bounds_gemm(j->qa + i0 * k, j->qb, TT, rows, n, k) == 0 &&
                   (any || bounds_gemm(j->qw + i0 * k, j->qb, WW, rows, n, k) == 0);
        if (have) {
            exact_rows(j, i0, i1, i0, S, TT, NULL, WW, c->out, c->e0, c->pg);
            continue;
        }
        for (int64_t i = i0; i < i1; er_progress_add(c->pg, n), i++)
            for (int64_t col = 0; col < n; col++) {
                er_bel b;
                er_bjob_element(j, i, col, NULL, &b);
                er_bel_store(c->out, c->e0 + i * n + col, &b);
            }
    }
    free(S);
    free(TT);
    free(WW);
}

/* The elements of rows [r0, r1) of a tile whose products (from row i0) bounds_blas formed. */
static void *elements_thread(void *arg)
{
    bctx *c = (bctx *)arg;
    const er_bjob *j = c->job;
    exact_rows(j, c->r0, c->r1, c->i0, c->S, c->TT, c->TF, c->WW, c->out, c->e0, c->pg);
    return NULL;
}

/* dst[x] = (float)src[x] for x < cnt on up to T threads (the integers of the quantized magnitudes,
 * below 2^24: exact): part t of T equal parts on each. */
typedef struct {
    const double *src;
    float *dst;
    int64_t cnt;
    int T;
} to_f32_job;

static void to_f32_part(void *ctx, int t)
{
    const to_f32_job *w = (const to_f32_job *)ctx;
    for (int64_t x = w->cnt * t / w->T; x < w->cnt * (t + 1) / w->T; x++) w->dst[x] = (float)w->src[x];
}

static void to_f32(const double *src, float *dst, int64_t cnt, int T)
{
    if ((int64_t)T > cnt / 65536) T = (int)(cnt / 65536 > 0 ? cnt / 65536 : 1);
    if (T > 64) T = 64;
    to_f32_job w = {src, dst, cnt, T};
    er_par_for(T, T, to_f32_part, &w);
}

/*
 * normal and any_order with a BLAS (cpu/cpu_gemm.c): the matrix products of a tile of rows by one
 * call each on all the threads (the BLAS's own), then the tile's elements on our threads.  The
 * quantities are exact sums (or S, whose bound holds for every order), so the bits are bounds_rows'.
 * 0: done; 1: not applicable or no memory (the caller runs bounds_rows).
 */
static int bounds_blas(const er_bjob *j, er_bounds *out, int64_t e0, int T, er_progress *pg)
{
    int64_t m = j->m, n = j->n, k = j->par.k;
    int any = j->par.kind == ER_BK_ANY;
    if (!er_cpu_gemm_uses_blas() || j->par.kind == ER_BK_ENGINE || !j->par.gemm_form || m <= 0 || n <= 0 || k <= 0 ||
        !j->qa || !j->qb || (!any && !j->qw))
        return 1;
    const int64_t TR = bounds_tile_rows(n) * T;
    int64_t tr = m < TR ? m : TR;
    /* S: the reference's where it kept it (j->S), else one product per tile */
    /* normal: NT through binary32 (exact_el_tf; half a binary64 product's time), for k <= 2^16 */
    float *qbf = NULL, *qaf = NULL, *TF = NULL;
    er_cpu_fq fq;
    er_cpu_fq_init(&fq, &j->par);
    /* (only where the common finish applies: elsewhere every element would sum NT itself) */
    if (!any && fq.ok && k <= 65536 && !er_env_on("EXACTREF_BOUNDS_NO_F32")) {
        qbf = (float *)er_big_alloc(sizeof(float) * (size_t)(k * n));
        qaf = (float *)er_big_alloc(sizeof(float) * (size_t)(tr * k));
        TF = (float *)er_big_alloc(sizeof(float) * (size_t)(tr * n));
        if (!qbf || !qaf || !TF) {
            er_big_free(qbf), er_big_free(qaf), er_big_free(TF);
            qbf = qaf = TF = NULL;
        } else {
            to_f32(j->qb, qbf, k * n, T);
        }
    }
    double *S = j->S ? NULL : er_big_alloc(sizeof(double) * (size_t)(tr * n));
    double *TT = TF ? NULL : er_big_alloc(sizeof(double) * (size_t)(tr * n));
    double *WW = any ? NULL : er_big_alloc(sizeof(double) * (size_t)(tr * n));
    bctx *ctx = (bctx *)calloc((size_t)T, sizeof *ctx);
    int st = 1;
    if ((S || j->S) && (TT || TF) && (any || WW) && ctx) {
        st = 0;
        for (int64_t i0 = 0; i0 < m && st == 0; i0 += TR) {
            int64_t rows = m - i0 < TR ? m - i0 : TR;
            const double *St = j->S ? j->S + i0 * n : S;
            int tf_ok = 0;
            if (TF) {
                to_f32(j->qa + i0 * k, qaf, rows * k, T);
                tf_ok = er_cpu_sgemm_blas(qaf, k, qbf, n, TF, n, rows, n, k, T) == 0;
                if (!tf_ok && !TT) TT = er_big_alloc(sizeof(double) * (size_t)(tr * n));
            }
            if ((!j->S && er_cpu_gemm_any(j->af + i0 * k, k, j->bf, n, S, n, rows, n, k, T) != 0) ||
                (!tf_ok && (!TT || er_cpu_gemm_any(j->qa + i0 * k, k, j->qb, n, TT, n, rows, n, k, T) != 0)) ||
                (!any && er_cpu_gemm_any(j->qw + i0 * k, k, j->qb, n, WW, n, rows, n, k, T) != 0)) {
                st = i0 == 0 ? 1 : -1; /* a BLAS call is not expected to fail */
                break;
            }
            int Tt = rows < T ? (int)rows : T;
            for (int t = 0; t < Tt; t++) {
                ctx[t].job = j;
                ctx[t].out = out;
                ctx[t].e0 = e0;
                ctx[t].pg = pg;
                ctx[t].S = St;
                ctx[t].TT = TT;
                ctx[t].TF = tf_ok ? TF : NULL;
                ctx[t].WW = WW;
                ctx[t].i0 = i0;
                ctx[t].r0 = i0 + rows * t / Tt;
                ctx[t].r1 = i0 + rows * (t + 1) / Tt;
            }
            er_par_jobs(elements_thread, ctx, sizeof ctx[0], Tt);
        }
    }
    er_big_free(S);
    er_big_free(TT);
    er_big_free(WW);
    er_big_free(qbf);
    er_big_free(qaf);
    er_big_free(TF);
    free(ctx);
    return st;
}

static void *bounds_thread(void *arg)
{
    bounds_rows((bctx *)arg);
    return NULL;
}

/* A batch on the CPU's threads (a fixed row split: the same bits for any number). */
static int bounds_cpu(const er_bjob *job, er_bounds *out, int64_t e0, int threads)
{
    int T = er_cpu_threads(threads);
    if (T > job->m) T = (int)(job->m ? job->m : 1);
    bctx *ctx = (bctx *)calloc((size_t)T, sizeof *ctx);
    if (!ctx) {
        free(ctx);
        return ER_ENOMEM;
    }
    er_progress pg;
    er_progress_init(&pg, job->progress, job->progress_ctx, e0, job->m * job->n, out->count);
    int bl = bounds_blas(job, out, e0, T, &pg);
    if (bl <= 0) {
        free(ctx);
        return bl == 0 ? ER_OK : ER_ENOMEM;
    }
    for (int t = 0; t < T; t++) {
        ctx[t].pg = &pg;
        ctx[t].job = job;
        ctx[t].out = out;
        ctx[t].e0 = e0;
        ctx[t].r0 = job->m * t / T;
        ctx[t].r1 = job->m * (t + 1) / T;
    }
    er_par_jobs(bounds_thread, ctx, sizeof ctx[0], T);
    free(ctx);
    return ER_OK;
}

/* A batch on the CPU: prepared for a device that declined, it gets the CPU's own copies first. */
int er_cpu_bounds_batch(const er_bjob *job, er_bounds *out, int64_t e0, int threads)
{
    int st;
    if (!job->bft && er_bjob_needs_bft(job)) {
        /* prepared for a device that declined: the CPU's own copy of B' by columns, without which the
         * same bits come more slowly */
        er_bjob j2 = *job;
        int64_t kn = job->par.k * job->n, k = job->par.k, n = job->n;
        double *bft = NULL, *dbt = NULL;
        int16_t *ebt = NULL;
        if (!job->bft) {
            bft = (double *)malloc(sizeof(double) * (size_t)(kn ? kn : 1));
            if (job->eb) ebt = (int16_t *)malloc(sizeof(int16_t) * (size_t)(kn ? kn : 1));
            if (job->db) dbt = (double *)malloc(sizeof(double) * (size_t)(kn ? kn : 1));
            if (bft && (!job->eb || ebt) && (!job->db || dbt)) {
                for (int64_t p = 0; p < k; p++)
                    for (int64_t jj = 0; jj < n; jj++) {
                        bft[jj * k + p] = job->bf[p * n + jj];
                        if (ebt) ebt[jj * k + p] = job->eb[p * n + jj];
                        if (dbt) dbt[jj * k + p] = job->db[p * n + jj];
                    }
                j2.bft = bft;
                j2.ebt = ebt;
                j2.dbt = dbt;
            }
        }
        st = bounds_cpu(&j2, out, e0, threads);
        free(bft);
        free(ebt);
        free(dbt);
        return st;
    }
    return bounds_cpu(job, out, e0, threads);
}

/* ---- normal(): index order emulated to the bit. ---- */

#include "../host/er_tile.h"
#include "exactref/core/er_mma.h" /* er_mma_normal_element */

/*
 * normal() on the CPU runs the core's element, er_mma_normal_element (include/exactref/core/er_mma.h:
 * binary64 emulated with integers, er_d64.h), the very source the OpenCL and CUDA kernels run, over
 * the same tiles (host/er_tile.h): each tile's operands packed, its elements computed on the
 * problem's threads, the results scattered into out.  A tile's buffers take at most
 * ER_CPU_NORMAL_TILE bytes.
 */
#define ER_CPU_NORMAL_TILE ((uint64_t)64 << 20)

static int normal_fits(const void *ctx, uint64_t nbt, uint64_t nr, uint64_t nc)
{
    uint64_t sz[ER_TB_COUNT], t = 0;
    er_tile_sizes((const er_tiling *)ctx, nbt, nr, nc, sz);
    for (int i = 0; i < ER_TB_COUNT; i++) t += sz[i];
    return t <= ER_CPU_NORMAL_TILE;
}

/* The elements of a packed tile, T equal parts (one thread's share each; each element is its own: the same bits
 * for any split). */
typedef struct {
    const er_i64 *prm;
    unsigned char *const *buf;
    int64_t el;
    int T;
} normal_job;

static void normal_part(void *ctx, int t)
{
    const normal_job *w = (const normal_job *)ctx;
    uint64_t *d = (uint64_t *)w->buf[ER_TB_D];
    for (int64_t e = w->el * t / w->T; e < w->el * (t + 1) / w->T; e++)
        d[e] = er_mma_normal_element(w->prm, w->buf[ER_TB_A], w->buf[ER_TB_B], w->buf[ER_TB_SA], w->buf[ER_TB_SB],
                                     w->buf[ER_TB_C], e);
}

/* Every element of a tile on up to `threads` threads (the calling one among them). */
static void normal_tile(const er_i64 *prm, unsigned char *const *buf, int64_t el, int threads)
{
    int T = threads < 1 ? 1 : threads > 64 ? 64 : threads;
    if (T > el) T = (int)(el > 0 ? el : 1);
    normal_job w = {prm, buf, el, T};
    er_par_for(T, T, normal_part, &w);
}

int er_cpu_normal(const er_problem *P, int compute, int ftz, er_tensor *out)
{
    er_mma_args a = *P->args;
    er_tiling T;
    unsigned char *buf[ER_TB_COUNT];
    uint64_t sz[ER_TB_COUNT];
    int64_t nbt = 1, nr = 1, nc = 1, wrapped = 0;
    int st = ER_OK;
    a.d = out;
    a.lo = a.hi = a.odd = NULL;
    er_tiling_init(&T, &a, P->kind, P->scaled, P->has_c, P->acc_lo, P->acc_nd, P->batch, P->m, P->n, P->k, P->nblocks,
                   1, compute, ftz ? 1 : 0);
    if (P->batch == 0 || P->m == 0 || P->n == 0) return ER_OK;
    if (!er_tile_plan((uint64_t)P->batch, (uint64_t)P->m, (uint64_t)P->n, UINT64_MAX, normal_fits, &T, &nbt, &nr, &nc))
        nbt = nr = nc = 1; /* one element's operands beyond the tile's size: one element at a time */
    er_tile_sizes(&T, (uint64_t)nbt, (uint64_t)nr, (uint64_t)nc, sz);
    memset(buf, 0, sizeof buf);
    for (int i = 0; i < ER_TB_COUNT; i++)
        if (sz[i] && !(buf[i] = (unsigned char *)malloc((size_t)sz[i]))) st = ER_ENOMEM;
    for (int64_t b0 = 0; st == ER_OK && b0 < P->batch; b0 += nbt) {
        int64_t tb_ = P->batch - b0 < nbt ? P->batch - b0 : nbt;
        for (int64_t i0 = 0; i0 < P->m; i0 += nr)
            for (int64_t j0 = 0; j0 < P->n; j0 += nc) {
                int64_t tr_ = P->m - i0 < nr ? P->m - i0 : nr, tc_ = P->n - j0 < nc ? P->n - j0 : nc;
                er_i64 prm[ER_MP_COUNT];
                er_tile_params(&T, tb_, tr_, tc_, prm);
                er_tile_pack(&T, buf, b0, tb_, i0, tr_, j0, tc_);
                normal_tile(prm, buf, tb_ * tr_ * tc_, P->nthreads);
                er_tile_scatter(&T, buf, b0, tb_, i0, tr_, j0, tc_, &wrapped);
            }
    }
    for (int i = 0; i < ER_TB_COUNT; i++) free(buf[i]);
    return st;
}
