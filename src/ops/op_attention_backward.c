/* op_attention_backward.c: attention.backward(query, key, value, attn_mask?, grad_out) with outputs "dq", "dk", "dv":
 * the exact gradients of the exact attention function rounded once, and bounds under normal, any_order and flash
 * (docs/ops/attention.md, "Backward"; proof: docs/proofs/attention-backward.md).  The forward's bounds (the stored
 * O and lse a kernel reads) are op_attention_math.c's er_attn_bounds. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../host/er_msg.h"
#include "exactref/formats.h"
#include "op_attention.h"
#include "op_impl.h"

#define msgf er_msgf

static const char *const ab_inputs[] = {"query", "key", "value", "attn_mask", "grad_out"};
static const char *const ab_outputs[] = {"dq", "dk", "dv"};
static const er_boundary ab_boundaries[] = {
    {"scores", "accumulate", "S = scale q . k (+ mask) per query row and key, a sum of products in compute", "dot"},
    {"p", "library", "P recomputed: exp(S - max) / rowsum (normal, any_order) or exp(S - lse) from the stored lse "
                     "(flash), exp and division within ulps; flash: P may be rounded to the value's format",
     "each score"},
    {"dp", "accumulate", "dP = dO . v per query row and key, a sum of products in compute", "dot"},
    {"delta", "accumulate", "D = rowsum(dO * O) with the forward's stored O, or rowsum(P * dP), in compute", "each row"},
    {"ds", "compute", "dS = P (dP - D) in compute (flash: may be rounded to the value's format)", "each score"},
    {"dq", "accumulate", "dQ = scale dS . K, any order over the keys (atomics), in compute", "dot"},
    {"dk", "accumulate", "dK = scale dS^T . Q, any order over the query rows (and a GQA group's heads)", "dot"},
    {"dv", "accumulate", "dV = P^T . dO, any order over the query rows (and a GQA group's heads)", "dot"},
    {"out", "cast", "the compute value rounded once to the output format", "each element"},
};

typedef struct ab_state {
    er_attn_prob p;
    double *q, *k, *v, *mask, *g;
    int out_fmt, v_fmt;
    int64_t G;
    /* the bounds last computed (the three outputs at once), for the options o */
    int have;
    er_tol_opts o;
    double *blo[3], *bhi[3];
} ab_state;

static void ab_free(void *ptr)
{
    ab_state *s = (ab_state *)ptr;
    if (!s) return;
    er_attn_release(&s->p);
    free(s->q), free(s->k), free(s->v), free(s->mask), free(s->g);
    for (int i = 0; i < 3; i++) free(s->blo[i]), free(s->bhi[i]);
    free(s);
}

/* ---- binary64 interval arithmetic, outward, exact zeros kept ---- */

static double dn(double x) { return er_b_down(x); }
static double up(double x) { return er_b_up(x); }
static double mdn(double a, double b) { return (a == 0 || b == 0) ? 0.0 : dn(a * b); }
static double mup(double a, double b) { return (a == 0 || b == 0) ? 0.0 : up(a * b); }
static double adn(double a, double b) { return b == 0 ? a : a == 0 ? b : dn(a + b); }
static double aup(double a, double b) { return b == 0 ? a : a == 0 ? b : up(a + b); }

static void mul_iv(double al, double ah, double bl, double bh, double *l, double *h)
{
    if (al >= 0 && bl >= 0) {
        *l = mdn(al, bl), *h = mup(ah, bh);
        return;
    }
    double p0 = mdn(al, bl), p1 = mdn(al, bh), p2 = mdn(ah, bl), p3 = mdn(ah, bh);
    double q0 = mup(al, bl), q1 = mup(al, bh), q2 = mup(ah, bl), q3 = mup(ah, bh);
    *l = fmin(fmin(p0, p1), fmin(p2, p3));
    *h = fmax(fmax(q0, q1), fmax(q2, q3));
}
/* [l, h] * c for a point c */
static void mul_pt(double l, double h, double c, double *ol, double *oh)
{
    if (c >= 0) *ol = mdn(l, c), *oh = mup(h, c);
    else *ol = mdn(h, c), *oh = mup(l, c);
}

/* [l, h] as m +- r (m = RN(l + (h - l) / 2), r rounded up: [m - r, m + r] holds [l, h]); exact points kept */
static void mid_rad(double l, double h, double *m, double *r)
{
    if (l == h) {
        *m = l, *r = 0;
        return;
    }
    double x = l + 0.5 * (h - l);
    if (!(x >= l && x <= h)) x = 0.5 * l + 0.5 * h;
    *m = x;
    *r = up(fmax(up(h - x), up(x - l)));
}

/*
 * sum_t x_t y_t for x_t in [m_t - r_t, m_t + r_t] and points y_t, from s = sum m y (rounded to nearest in
 * any order), a = sum |m y| and c = sum r |y| (likewise) over n terms: the exact sum lies in [s - R, s + R]
 * with R = c (1 + g) + a g (1 + g) + (n + 2) 2^-1073, g = (n + 2) 2^-52 (each product and sum rounding errs
 * by at most 2^-53 of its result plus 2^-1075 below the normal range; a and c are underestimated by at most
 * a factor 1 - n 2^-53).
 */
static void mr_finish(double s, double a, double c, int64_t n, double *lo, double *hi)
{
    if (a == 0 && c == 0) {
        *lo = *hi = 0;
        return;
    }
    double g = up((double)(n + 2) * 0x1p-52), g1 = up(1.0 + g);
    double R = up(up(up(c * g1) + up(up(a * g) * g1)) + (double)(n + 2) * 0x1p-1073);
    *lo = dn(s - R), *hi = up(s + R);
}

/* the dot product x . y (n terms, each product exact in binary64: the inputs are at most binary32) as
 * [d - r, d + r], and t >= sum |x y| */
static void dot_iv(const double *x, const double *y, int64_t n, int64_t ys, double *l, double *h, double *t)
{
    double d = 0, a = 0;
    for (int64_t c = 0; c < n; c++) {
        double pr = x[c] * y[c * ys];
        d += pr;
        a += fabs(pr);
    }
    /* |d - exact| <= (n - 1) 2^-53 sum |x y| and a >= sum |x y| (1 - n 2^-53): r = n 2^-52 a covers both for
     * n < 2^40; no underflow (products of binary32 values are at least 2^-298) */
    double r = up(up(a * (double)n) * 0x1p-52);
    if (a == 0) {
        *l = *h = 0;
    } else {
        *l = dn(d - r), *h = up(d + r);
    }
    *t = up(a * (1.0 + 0x1p-40));
}

/* whether key j takes part in row i of head h */
static int part(const er_attn_prob *p, int64_t b, int64_t h, int64_t i, int64_t j, double *mk)
{
    *mk = 0.0;
    if (p->causal && j > i) return 0;
    if (p->mask) {
        double m = p->mask[b * p->mstride[0] + h * p->mstride[1] + i * p->mstride[2] + j * p->mstride[3]];
        if (m == -INFINITY) return 0;
        *mk = m;
    }
    return 1;
}

/*
 * One group (batch b, key head hk) in binary64 intervals: its R = G Sq rows (rr = g Sq + i, query head
 * hk G + g) by Sk keys.  Per (row, key): the scores S, T >= scale sum |q k| + |mask|, P, dP, its U >= sum
 * |dO v|, a = dP - D, dS; per row: D, lse, the number of keys taking part, zero (dS exactly 0 on the row).
 */
typedef struct ab_grp {
    int64_t R, Sk;
    double *Sl, *Sh, *T, *Pl, *Ph, *dPl, *dPh, *U, *al, *ah, *dSl, *dSh;
    double *Pm, *Pr, *dSm, *dSr; /* P and dS as midpoint and radius: [m - r, m + r] holds [lo, hi] */
    double *Dl, *Dh, *Ll, *Lh;
    int64_t *nk;
    unsigned char *zero;
} ab_grp;

static void grp_free(ab_grp *w)
{
    free(w->Sl);
    free(w->Dl);
    free(w->nk);
    free(w->zero);
    memset(w, 0, sizeof *w);
}

static int grp_alloc(ab_grp *w, int64_t R, int64_t Sk)
{
    memset(w, 0, sizeof *w);
    size_t n = (size_t)(R * Sk > 0 ? R * Sk : 1), nr = (size_t)(R > 0 ? R : 1);
    w->R = R, w->Sk = Sk;
    w->Sl = malloc(sizeof(double) * n * 16);
    w->Dl = malloc(sizeof(double) * nr * 4);
    w->nk = malloc(sizeof(int64_t) * nr);
    w->zero = malloc(nr);
    if (!w->Sl || !w->Dl || !w->nk || !w->zero) {
        grp_free(w);
        return 0;
    }
    double *a = w->Sl;
    w->Sh = a + n, w->T = a + 2 * n, w->Pl = a + 3 * n, w->Ph = a + 4 * n, w->dPl = a + 5 * n, w->dPh = a + 6 * n;
    w->U = a + 7 * n, w->al = a + 8 * n, w->ah = a + 9 * n, w->dSl = a + 10 * n, w->dSh = a + 11 * n;
    w->Pm = a + 12 * n, w->Pr = a + 13 * n, w->dSm = a + 14 * n, w->dSr = a + 15 * n;
    w->Dh = w->Dl + nr, w->Ll = w->Dl + 2 * nr, w->Lh = w->Dl + 3 * nr;
    return 1;
}

static const double *qrow(const ab_state *s, int64_t b, int64_t h, int64_t i)
{
    const er_attn_prob *p = &s->p;
    return s->q + ((b * p->Hq + h) * p->Sq + i) * p->D;
}
static const double *grow(const ab_state *s, int64_t b, int64_t h, int64_t i)
{
    const er_attn_prob *p = &s->p;
    return s->g + ((b * p->Hq + h) * p->Sq + i) * p->Dv;
}

/* the group's intervals (a row no key takes part in: every term 0) */
static er_status grp_fill(const ab_state *s, int64_t b, int64_t hk, ab_grp *w, char *msg, size_t msg_size)
{
    const er_attn_prob *p = &s->p;
    int64_t Sq = p->Sq, Sk = p->Sk, D = p->D, Dv = p->Dv, G = s->G;
    const double *K = p->k + (b * p->Hk + hk) * Sk * D, *V = p->v + (b * p->Hk + hk) * Sk * Dv;
    double sc = p->scale;
    (void)msg, (void)msg_size; /* nothing fails here now (kept for the callers' error path) */
    for (int64_t rr = 0; rr < G * Sq; rr++) {
        int64_t i = rr % Sq, h = hk * G + rr / Sq;
        const double *q = qrow(s, b, h, i), *g = grow(s, b, h, i);
        double *Sl = w->Sl + rr * Sk, *Sh = w->Sh + rr * Sk, *T = w->T + rr * Sk;
        double m = -INFINITY;
        int64_t n = 0, first = -1;
        int samev = 1;
        for (int64_t j = 0; j < Sk; j++) {
            double mk, l, hh, t;
            if (!part(p, b, h, i, j, &mk)) {
                Sl[j] = Sh[j] = -INFINITY, T[j] = 0;
                continue;
            }
            dot_iv(q, K + j * D, D, 1, &l, &hh, &t);
            mul_pt(l, hh, sc, &l, &hh);
            Sl[j] = adn(l, mk), Sh[j] = aup(hh, mk);
            T[j] = aup(mup(t, sc), fabs(mk));
            if (Sh[j] > m) m = Sh[j];
            if (first < 0) first = j;
            else if (samev && memcmp(V + j * Dv, V + first * Dv, sizeof(double) * (size_t)Dv)) samev = 0;
            n++;
        }
        w->nk[rr] = n;
        if (n == 0) { /* no key takes part: no P, dq exactly 0, nothing to dk, dv (torch's autograd; docs/ops/attention.md) */
            size_t z = sizeof(double) * (size_t)Sk;
            memset(w->Pl + rr * Sk, 0, z), memset(w->Ph + rr * Sk, 0, z), memset(w->dPl + rr * Sk, 0, z);
            memset(w->dPh + rr * Sk, 0, z), memset(w->U + rr * Sk, 0, z), memset(w->al + rr * Sk, 0, z);
            memset(w->ah + rr * Sk, 0, z), memset(w->dSl + rr * Sk, 0, z), memset(w->dSh + rr * Sk, 0, z);
            memset(w->Pm + rr * Sk, 0, z), memset(w->Pr + rr * Sk, 0, z), memset(w->dSm + rr * Sk, 0, z);
            memset(w->dSr + rr * Sk, 0, z);
            w->Dl[rr] = w->Dh[rr] = 0, w->Ll[rr] = w->Lh[rr] = -INFINITY, w->zero[rr] = 1;
            continue;
        }
        /* P = exp(S - m) / sum exp(S - m) for the binary64 m (any shift gives the same P) */
        double ll = 0, lh = 0;
        double *Pl = w->Pl + rr * Sk, *Ph = w->Ph + rr * Sk;
        for (int64_t j = 0; j < Sk; j++) {
            if (Sh[j] == -INFINITY) {
                Pl[j] = Ph[j] = 0;
                continue;
            }
            er_ops_exp_iv(dn(Sl[j] - m), up(Sh[j] - m), &Pl[j], &Ph[j]);
            ll = adn(ll, Pl[j]), lh = aup(lh, Ph[j]);
        }
        for (int64_t j = 0; j < Sk; j++)
            if (Sh[j] != -INFINITY) Pl[j] = er_ops_div_dn(Pl[j], lh), Ph[j] = er_ops_div_up(Ph[j], ll);
        double gl, gh, x;
        er_ops_log(ll, &gl, &x);
        er_ops_log(lh, &x, &gh);
        w->Ll[rr] = adn(m, gl), w->Lh[rr] = aup(m, gh);
        /* dP, D = sum P dP */
        double *dPl = w->dPl + rr * Sk, *dPh = w->dPh + rr * Sk, *U = w->U + rr * Sk;
        double Dl = 0, Dh = 0;
        int gzero = 1;
        for (int64_t c = 0; c < Dv; c++)
            if (g[c] != 0) gzero = 0;
        for (int64_t j = 0; j < Sk; j++) {
            if (Sh[j] == -INFINITY) {
                dPl[j] = dPh[j] = U[j] = 0;
                continue;
            }
            dot_iv(g, V + j * Dv, Dv, 1, &dPl[j], &dPh[j], &U[j]);
            double a, z;
            mul_iv(Pl[j], Ph[j], dPl[j], dPh[j], &a, &z);
            Dl = adn(Dl, a), Dh = aup(Dh, z);
        }
        w->Dl[rr] = Dl, w->Dh[rr] = Dh;
        /* dS = P (dP - D): exactly 0 where the row has one key, every key's value row is the same, or dO is 0 */
        w->zero[rr] = n == 1 || samev || gzero;
        double *al = w->al + rr * Sk, *ah = w->ah + rr * Sk, *dSl = w->dSl + rr * Sk, *dSh = w->dSh + rr * Sk;
        for (int64_t j = 0; j < Sk; j++) {
            if (Sh[j] == -INFINITY || w->zero[rr]) {
                al[j] = ah[j] = dSl[j] = dSh[j] = 0;
                continue;
            }
            al[j] = er_ops_add_dn(dPl[j], -Dh), ah[j] = er_ops_add_up(dPh[j], -Dl);
            mul_iv(Pl[j], Ph[j], al[j], ah[j], &dSl[j], &dSh[j]);
        }
        for (int64_t j = 0; j < Sk; j++) {
            mid_rad(Pl[j], Ph[j], &w->Pm[rr * Sk + j], &w->Pr[rr * Sk + j]);
            mid_rad(dSl[j], dSh[j], &w->dSm[rr * Sk + j], &w->dSr[rr * Sk + j]);
        }
    }
    return ER_OK;
}

/* ---- the reference: per group, binary64 intervals, then MPFR at rising precision where undecided ---- */

typedef struct ab_job {
    er_opres *r;
    ab_state *s;
    uint64_t *bits[3];
    const er_openv *env;
} ab_job;

/* output index of dq (b, h, i, c), dk/dv (b, hk, j, c) */
#define IDQ(p, b, h, i, c) ((((b) * (p)->Hq + (h)) * (p)->Sq + (i)) * (p)->D + (c))
#define IDK(p, b, hk, j, c) ((((b) * (p)->Hk + (hk)) * (p)->Sk + (j)) * (p)->D + (c))
#define IDV(p, b, hk, j, c) ((((b) * (p)->Hk + (hk)) * (p)->Sk + (j)) * (p)->Dv + (c))

/*
 * The group at prec bits (er_ops_mp registers, directed roundings): P, D, dS from the inputs, then every
 * element still undecided (und[o][e] set) recomputed and decided; returns the number still undecided.
 */
static int64_t grp_mp(const ab_state *s, int64_t b, int64_t hk, const ab_grp *w, int prec, int of, unsigned char *und[3],
                      uint64_t *bits[3], double *xlo[3], double *xhi[3], int *oom)
{
    const er_attn_prob *p = &s->p;
    int64_t Sq = p->Sq, Sk = p->Sk, D = p->D, Dv = p->Dv, G = s->G, R = G * Sq;
    const double *K = p->k + (b * p->Hk + hk) * Sk * D, *V = p->v + (b * p->Hk + hk) * Sk * Dv;
    /* registers: P (R Sk), dS (R Sk), then 8 scratch */
    int64_t nreg = 2 * R * Sk + 8;
    if (nreg > (1LL << 30)) {
        *oom = 1;
        return 1;
    }
    er_ops_mp *m = er_ops_mp_new(prec, (int)nreg);
    if (!m) {
        *oom = 1;
        return 1;
    }
    int P0 = 0, S0 = (int)(R * Sk), X = (int)(2 * R * Sk); /* X..X+7 scratch */
    int A = X, Bq = X + 1, C = X + 2, L = X + 3, Dr = X + 4, T = X + 5, M = X + 6, Z = X + 7;
    /* the rows needed: every row where a dk or dv element is undecided (each reads the whole column), else
     * those of the undecided dq elements */
    int all = 0;
    for (int64_t j = 0; j < Sk && !all; j++) {
        for (int64_t c = 0; c < D && !all; c++) all = und[1][IDK(p, b, hk, j, c)];
        for (int64_t c = 0; c < Dv && !all; c++) all = und[2][IDV(p, b, hk, j, c)];
    }
    for (int64_t rr = 0; rr < R; rr++) {
        int64_t i = rr % Sq, h = hk * G + rr / Sq;
        const double *q = qrow(s, b, h, i), *g = grow(s, b, h, i);
        int need = all;
        for (int64_t c = 0; c < D && !need; c++) need = und[0][IDQ(p, b, h, i, c)];
        if (!need) continue;
        double mref = -INFINITY;
        for (int64_t j = 0; j < Sk; j++) mref = fmax(mref, w->Sh[rr * Sk + j]);
        er_ops_mp_set_d(m, M, mref);
        er_ops_mp_set_d(m, L, 0);
        for (int64_t j = 0; j < Sk; j++) {
            int r = P0 + (int)(rr * Sk + j);
            double mk;
            if (!part(p, b, h, i, j, &mk)) {
                er_ops_mp_set_d(m, r, 0);
                continue;
            }
            er_ops_mp_set_d(m, A, 0);
            for (int64_t c = 0; c < D; c++) { /* each product is exact in binary64 (binary32 inputs) */
                er_ops_mp_set_d(m, Bq, q[c] * K[j * D + c]);
                er_ops_mp_add(m, A, A, Bq);
            }
            er_ops_mp_set_d(m, C, p->scale);
            er_ops_mp_mul(m, A, A, C);
            er_ops_mp_set_d(m, C, mk);
            er_ops_mp_add(m, A, A, C);
            er_ops_mp_sub(m, A, A, M);
            er_ops_mp_exp(m, r, A);
            er_ops_mp_add(m, L, L, r);
        }
        /* P = w / l; D = sum P dP; dS = P (dP - D) */
        er_ops_mp_set_d(m, Dr, 0);
        for (int64_t j = 0; j < Sk; j++) {
            int r = P0 + (int)(rr * Sk + j);
            if (w->Sh[rr * Sk + j] == -INFINITY) continue;
            er_ops_mp_div(m, r, r, L);
            int rd = S0 + (int)(rr * Sk + j);
            er_ops_mp_set_d(m, rd, 0);
            for (int64_t c = 0; c < Dv; c++) {
                er_ops_mp_set_d(m, Bq, g[c] * V[j * Dv + c]);
                er_ops_mp_add(m, rd, rd, Bq);
            }
            er_ops_mp_mul(m, T, r, rd);
            er_ops_mp_add(m, Dr, Dr, T);
        }
        for (int64_t j = 0; j < Sk; j++) {
            int r = P0 + (int)(rr * Sk + j), rd = S0 + (int)(rr * Sk + j);
            if (w->Sh[rr * Sk + j] == -INFINITY || w->zero[rr]) {
                er_ops_mp_set_d(m, rd, 0);
                continue;
            }
            er_ops_mp_sub(m, rd, rd, Dr);
            er_ops_mp_mul(m, rd, rd, r);
        }
    }
    int64_t left = 0;
    er_ops_mp_set_d(m, Z, p->scale);
    /* dq (b, h, i, c) = scale sum_j dS k_jc */
    for (int64_t rr = 0; rr < R; rr++) {
        int64_t i = rr % Sq, h = hk * G + rr / Sq;
        for (int64_t c = 0; c < D; c++) {
            int64_t e = IDQ(p, b, h, i, c);
            if (!und[0][e]) continue;
            er_ops_mp_set_d(m, A, 0);
            for (int64_t j = 0; j < Sk; j++) {
                er_ops_mp_set_d(m, C, K[j * D + c]);
                er_ops_mp_mul(m, Bq, S0 + (int)(rr * Sk + j), C);
                er_ops_mp_add(m, A, A, Bq);
            }
            er_ops_mp_mul(m, A, A, Z);
            er_ops_mp_get(m, A, &xlo[0][e], &xhi[0][e]);
            if (er_ops_mp_decide(m, A, of, &bits[0][e])) und[0][e] = 0;
            else left++;
        }
    }
    /* dk (b, hk, j, c) = scale sum_rows dS q_c; dv (b, hk, j, c) = sum_rows P dO_c */
    for (int64_t j = 0; j < Sk; j++) {
        for (int o = 1; o <= 2; o++) {
            int64_t nc = o == 1 ? D : Dv;
            for (int64_t c = 0; c < nc; c++) {
                int64_t e = o == 1 ? IDK(p, b, hk, j, c) : IDV(p, b, hk, j, c);
                if (!und[o][e]) continue;
                er_ops_mp_set_d(m, A, 0);
                for (int64_t rr = 0; rr < R; rr++) {
                    int64_t i = rr % Sq, h = hk * G + rr / Sq;
                    double x = o == 1 ? qrow(s, b, h, i)[c] : grow(s, b, h, i)[c];
                    er_ops_mp_set_d(m, C, x);
                    er_ops_mp_mul(m, Bq, (o == 1 ? S0 : P0) + (int)(rr * Sk + j), C);
                    er_ops_mp_add(m, A, A, Bq);
                }
                if (o == 1) er_ops_mp_mul(m, A, A, Z);
                er_ops_mp_get(m, A, &xlo[o][e], &xhi[o][e]);
                if (er_ops_mp_decide(m, A, of, &bits[o][e])) und[o][e] = 0;
                else left++;
            }
        }
    }
    er_ops_mp_free(m);
    return left;
}

/* one group's reference: the outputs' enclosures and rounded patterns */
static er_status grp_reference(ab_job *jb, int64_t b, int64_t hk, ab_grp *w, char *msg, size_t msg_size)
{
    ab_state *s = jb->s;
    er_opres *r = jb->r;
    const er_attn_prob *p = &s->p;
    int64_t Sq = p->Sq, Sk = p->Sk, D = p->D, Dv = p->Dv, G = s->G, R = G * Sq;
    const double *K = p->k + (b * p->Hk + hk) * Sk * D;
    int of = s->out_fmt;
    er_status st = grp_fill(s, b, hk, w, msg, msg_size);
    if (st != ER_OK) return st;
    int64_t und_n = 0;
    unsigned char *und[3] = {NULL, NULL, NULL};
    int64_t nq = p->B * p->Hq * Sq * D, nk = p->B * p->Hk * Sk * D, nv = p->B * p->Hk * Sk * Dv;
    /* the three sums in midpoint-radius form (mr_finish), accumulated row by row */
    double *acc = malloc(sizeof(double) * (size_t)(3 * (D > 0 ? D : 1) + 3 * Sk * (D + Dv) + 1));
    if (!acc) return msgf(msg, msg_size, ER_ENOMEM, "attention.backward: out of memory");
    double *qs = acc, *qa = qs + D, *qc = qa + D;
    double *ks = qc + D, *ka = ks + Sk * D, *kc = ka + Sk * D;
    double *vs = kc + Sk * D, *va = vs + Sk * Dv, *vc = va + Sk * Dv;
    for (int64_t x = 0; x < 3 * Sk * (D + Dv); x++) ks[x] = 0;
    for (int64_t rr = 0; rr < R; rr++) {
        int64_t i = rr % Sq, h = hk * G + rr / Sq;
        const double *qv = qrow(s, b, h, i), *gv = grow(s, b, h, i);
        for (int64_t c = 0; c < D; c++) qs[c] = qa[c] = qc[c] = 0;
        for (int64_t j = 0; j < Sk; j++) {
            double m = w->dSm[rr * Sk + j], rd = w->dSr[rr * Sk + j];
            if (m != 0 || rd != 0) {
                const double *kr = K + j * D;
                double *ksj = ks + j * D, *kaj = ka + j * D, *kcj = kc + j * D;
                for (int64_t c = 0; c < D; c++) {
                    double x = m * kr[c], y = m * qv[c];
                    qs[c] += x, qa[c] += fabs(x), qc[c] += rd * fabs(kr[c]);
                    ksj[c] += y, kaj[c] += fabs(y), kcj[c] += rd * fabs(qv[c]);
                }
            }
            double pm = w->Pm[rr * Sk + j], pr = w->Pr[rr * Sk + j];
            if (pm != 0 || pr != 0) {
                double *vsj = vs + j * Dv, *vaj = va + j * Dv, *vcj = vc + j * Dv;
                for (int64_t c = 0; c < Dv; c++) {
                    double x = pm * gv[c];
                    vsj[c] += x, vaj[c] += fabs(x), vcj[c] += pr * fabs(gv[c]);
                }
            }
        }
        for (int64_t c = 0; c < D; c++) {
            double l, hh;
            mr_finish(qs[c], qa[c], qc[c], Sk, &l, &hh);
            mul_pt(l, hh, p->scale, &l, &hh);
            int64_t e = IDQ(p, b, h, i, c);
            r->xlo[0][e] = l, r->xhi[0][e] = hh;
            if (!er_ops_decide(of, l, hh, &jb->bits[0][e])) und_n++;
        }
    }
    for (int64_t j = 0; j < Sk; j++) {
        for (int64_t c = 0; c < D; c++) {
            double l, hh;
            mr_finish(ks[j * D + c], ka[j * D + c], kc[j * D + c], R, &l, &hh);
            mul_pt(l, hh, p->scale, &l, &hh);
            int64_t e = IDK(p, b, hk, j, c);
            r->xlo[1][e] = l, r->xhi[1][e] = hh;
            if (!er_ops_decide(of, l, hh, &jb->bits[1][e])) und_n++;
        }
        for (int64_t c = 0; c < Dv; c++) {
            double l, hh;
            mr_finish(vs[j * Dv + c], va[j * Dv + c], vc[j * Dv + c], R, &l, &hh);
            int64_t e = IDV(p, b, hk, j, c);
            r->xlo[2][e] = l, r->xhi[2][e] = hh;
            if (!er_ops_decide(of, l, hh, &jb->bits[2][e])) und_n++;
        }
    }
    free(acc);
    if (!und_n) return ER_OK;
    /* the undecided elements: flags over the whole outputs (only this group's are set) */
    und[0] = calloc((size_t)(nq ? nq : 1), 1), und[1] = calloc((size_t)(nk ? nk : 1), 1), und[2] = calloc((size_t)(nv ? nv : 1), 1);
    if (!und[0] || !und[1] || !und[2]) {
        free(und[0]), free(und[1]), free(und[2]);
        return msgf(msg, msg_size, ER_ENOMEM, "attention.backward: out of memory");
    }
    for (int64_t rr = 0; rr < R; rr++)
        for (int64_t c = 0; c < D; c++) {
            int64_t e = IDQ(p, b, hk * G + rr / Sq, rr % Sq, c);
            uint64_t x;
            und[0][e] = !er_ops_decide(of, r->xlo[0][e], r->xhi[0][e], &x);
        }
    for (int64_t j = 0; j < Sk; j++) {
        for (int64_t c = 0; c < D; c++) {
            int64_t e = IDK(p, b, hk, j, c);
            uint64_t x;
            und[1][e] = !er_ops_decide(of, r->xlo[1][e], r->xhi[1][e], &x);
        }
        for (int64_t c = 0; c < Dv; c++) {
            int64_t e = IDV(p, b, hk, j, c);
            uint64_t x;
            und[2][e] = !er_ops_decide(of, r->xlo[2][e], r->xhi[2][e], &x);
        }
    }
    int oom = 0;
    for (int prec = 128; und_n && prec <= 4096 && !oom; prec *= 2)
        und_n = grp_mp(s, b, hk, w, prec, of, und, jb->bits, r->xlo, r->xhi, &oom);
    free(und[0]), free(und[1]), free(und[2]);
    er_ops_mp_thread_done();
    if (oom) return msgf(msg, msg_size, ER_ENOMEM, "attention.backward: out of memory (high precision)");
    if (und_n)
        return msgf(msg, msg_size, ER_EUNSUPPORTED,
                    "attention.backward: the rounding of %lld gradient elements of batch %lld, key head %lld is not decided "
                    "at 4096 bits (an exact value on a rounding boundary)",
                    (long long)und_n, (long long)b, (long long)hk);
    return ER_OK;
}

static er_status ab_ref_groups(void *ctx, int64_t g0, int64_t g1, char *msg, size_t msg_size)
{
    ab_job *jb = (ab_job *)ctx;
    const er_attn_prob *p = &jb->s->p;
    ab_grp w;
    if (!grp_alloc(&w, jb->s->G * p->Sq, p->Sk)) return msgf(msg, msg_size, ER_ENOMEM, "attention.backward: out of memory");
    er_status st = ER_OK;
    for (int64_t gi = g0; gi < g1 && st == ER_OK; gi++) st = grp_reference(jb, gi / p->Hk, gi % p->Hk, &w, msg, msg_size);
    grp_free(&w);
    er_ops_mp_thread_done();
    return st;
}

/* the shape of the 3-D or 4-D input t as (B, H, S, D) */
static void bhsd(const er_optensor *t, int64_t *B, int64_t *H, int64_t *S, int64_t *D)
{
    int n = t->ndim;
    *B = n == 4 ? t->shape[0] : 1;
    *H = t->shape[n - 3];
    *S = t->shape[n - 2];
    *D = t->shape[n - 1];
}

static er_status ab_create(er_opres *r, char *msg, size_t msg_size)
{
    /* grad_out is the last input given: (q, k, v, grad) or (q, k, v, mask or absent, grad) */
    int gi = r->has_in[4] ? 4 : 3;
    if (gi == 3 && !r->has_in[3]) return msgf(msg, msg_size, ER_EINVAL, "attention.backward: input grad_out is required");
    const er_optensor *q = &r->in[0], *k = &r->in[1], *v = &r->in[2], *g = &r->in[gi];
    const er_optensor *m = gi == 4 && r->has_in[3] ? &r->in[3] : NULL;
    er_status st;
    const int idx[4] = {0, 1, 2, gi};
    const char *nm[4] = {"query", "key", "value", "grad_out"};
    for (int x = 0; x < 4; x++) {
        const er_optensor *t = &r->in[idx[x]];
        if (t->ndim != 3 && t->ndim != 4)
            return msgf(msg, msg_size, ER_EINVAL, "attention.backward: %s has %d dimensions; it takes (B, H, S, D) or (H, S, D)",
                        nm[x], t->ndim);
        if (t->format != ER_FMT_F32 && t->format != ER_FMT_BF16 && t->format != ER_FMT_F16)
            return msgf(msg, msg_size, ER_EINVAL, "attention.backward: %s is %s; the backward takes f32, bf16 or f16", nm[x],
                        er_format_name(t->format) ? er_format_name(t->format) : "?");
        if (t->ndim != q->ndim)
            return msgf(msg, msg_size, ER_EINVAL,
                        "attention.backward: query, key, value and grad_out must have the same number of dimensions");
    }
    int64_t B, Hq, Sq, D, Bk, Hk, Sk, Dk, Bv, Hv, Sv, Dv, Bg, Hg, Sg, Dg;
    bhsd(q, &B, &Hq, &Sq, &D);
    bhsd(k, &Bk, &Hk, &Sk, &Dk);
    bhsd(v, &Bv, &Hv, &Sv, &Dv);
    bhsd(g, &Bg, &Hg, &Sg, &Dg);
    if (Bk != B || Bv != B)
        return msgf(msg, msg_size, ER_EINVAL, "attention.backward: batch sizes differ (query %lld, key %lld, value %lld)",
                    (long long)B, (long long)Bk, (long long)Bv);
    if (Dk != D)
        return msgf(msg, msg_size, ER_EINVAL, "attention.backward: key's last dimension %lld differs from query's %lld",
                    (long long)Dk, (long long)D);
    if (Hv != Hk || Sv != Sk)
        return msgf(msg, msg_size, ER_EINVAL, "attention.backward: value's heads and length (%lld, %lld) differ from key's (%lld, %lld)",
                    (long long)Hv, (long long)Sv, (long long)Hk, (long long)Sk);
    if (Bg != B || Hg != Hq || Sg != Sq || Dg != Dv)
        return msgf(msg, msg_size, ER_EINVAL,
                    "attention.backward: grad_out's shape (%lld, %lld, %lld, %lld) differs from the output's (%lld, %lld, %lld, %lld)",
                    (long long)Bg, (long long)Hg, (long long)Sg, (long long)Dg, (long long)B, (long long)Hq, (long long)Sq,
                    (long long)Dv);
    int causal, gqa;
    double scale, qd, kd, vd;
    if ((st = er_ops_opt_bool(r, "is_causal", 0, &causal, msg, msg_size)) != ER_OK) return st;
    if ((st = er_ops_opt_bool(r, "enable_gqa", 0, &gqa, msg, msg_size)) != ER_OK) return st;
    if (D == 0 && !er_ops_opt(r, "scale"))
        return msgf(msg, msg_size, ER_EINVAL,
                    "attention.backward: the head dimension (query's last dimension) is 0, so the default scale 1/sqrt(D) is "
                    "infinite; give scale= or inputs with a head dimension above 0");
    if ((st = er_ops_opt_double(r, "scale", 1.0 / sqrt((double)D), &scale, msg, msg_size)) != ER_OK) return st;
    if ((st = er_ops_opt_double(r, "q_descale", 1.0, &qd, msg, msg_size)) != ER_OK) return st;
    if ((st = er_ops_opt_double(r, "k_descale", 1.0, &kd, msg, msg_size)) != ER_OK) return st;
    if ((st = er_ops_opt_double(r, "v_descale", 1.0, &vd, msg, msg_size)) != ER_OK) return st;
    if (qd != 1.0 || kd != 1.0 || vd != 1.0)
        return msgf(msg, msg_size, ER_EUNSUPPORTED,
                    "attention.backward: descale factors (fp8 inputs) are the forward's only; the backward takes f32, bf16 or "
                    "f16 inputs without descales");
    if (!(scale > 0) || !isfinite(scale))
        return msgf(msg, msg_size, ER_EINVAL, "attention.backward: scale must be finite and positive");
    if (Hk == 0 || Hq % Hk)
        return msgf(msg, msg_size, ER_EINVAL, "attention.backward: query's %lld heads are not a multiple of key's %lld",
                    (long long)Hq, (long long)Hk);
    if (Hq != Hk && !gqa)
        return msgf(msg, msg_size, ER_EINVAL,
                    "attention.backward: query has %lld heads and key %lld: grouped-query attention needs enable_gqa=1",
                    (long long)Hq, (long long)Hk);
    int of;
    if ((st = er_ops_opt_format(r, "out", q->format, &of, msg, msg_size)) != ER_OK) return st;
    if (of != ER_FMT_F32 && of != ER_FMT_BF16 && of != ER_FMT_F16)
        return msgf(msg, msg_size, ER_EINVAL, "attention.backward: out is f32, bf16 or f16");
    ab_state *s = calloc(1, sizeof *s);
    if (!s) return msgf(msg, msg_size, ER_ENOMEM, "attention.backward: out of memory");
    r->state = s;
    s->out_fmt = of;
    s->v_fmt = v->format;
    s->G = Hq / Hk;
    if ((st = er_ops_values(q, &s->q, msg, msg_size)) != ER_OK) return st;
    if ((st = er_ops_values(k, &s->k, msg, msg_size)) != ER_OK) return st;
    if ((st = er_ops_values(v, &s->v, msg, msg_size)) != ER_OK) return st;
    if ((st = er_ops_values(g, &s->g, msg, msg_size)) != ER_OK) return st;
    er_attn_prob *p = &s->p;
    p->B = B, p->Hq = Hq, p->Hk = Hk, p->Sq = Sq, p->Sk = Sk, p->D = D, p->Dv = Dv;
    p->q = s->q, p->k = s->k, p->v = s->v;
    p->causal = causal;
    p->scale = scale, p->q_descale = 1.0, p->k_descale = 1.0, p->v_descale = 1.0;
    const double *arr[4] = {s->q, s->k, s->v, s->g};
    int64_t cnt[4] = {B * Hq * Sq * D, B * Hk * Sk * D, B * Hk * Sk * Dv, B * Hq * Sq * Dv};
    for (int x = 0; x < 4; x++)
        for (int64_t e = 0; e < cnt[x]; e++)
            if (!isfinite(arr[x][e]))
                return msgf(msg, msg_size, ER_EINVAL, "attention.backward: %s element %lld is not finite", nm[x], (long long)e);
    if (m) {
        int64_t full[4] = {B, Hq, Sq, Sk};
        if (m->ndim < 1 || m->ndim > 4)
            return msgf(msg, msg_size, ER_EINVAL, "attention.backward: attn_mask has %d dimensions; at most 4", m->ndim);
        int is_bool = er_fmt_get(m->format).kind != ER_KIND_FLOAT;
        if (is_bool) {
            int64_t nm4 = er_optensor_count(m);
            s->mask = malloc(sizeof(double) * (size_t)(nm4 ? nm4 : 1));
            if (!s->mask) return msgf(msg, msg_size, ER_ENOMEM, "attention.backward: out of memory");
            for (int64_t e = 0; e < nm4; e++) s->mask[e] = er_ops_load(m, e) != 0 ? 0.0 : -INFINITY;
        } else if ((st = er_ops_values(m, &s->mask, msg, msg_size)) != ER_OK)
            return st;
        int64_t stride = 1;
        for (int d = 3, md = m->ndim - 1; d >= 0; d--, md--) {
            int64_t len = md >= 0 ? m->shape[md] : 1;
            if (len != 1 && len != full[d])
                return msgf(msg, msg_size, ER_EINVAL,
                            "attention.backward: attn_mask's dimension %d has length %lld; it must be 1 or %lld (broadcast "
                            "to (B, H, Sq, Sk))",
                            md, (long long)len, (long long)full[d]);
            p->mstride[d] = len == 1 ? 0 : stride;
            stride *= len;
        }
        for (int64_t e = 0; e < stride; e++) {
            double x = s->mask[e];
            if (x != x || x == INFINITY)
                return msgf(msg, msg_size, ER_EINVAL,
                            "attention.backward: attn_mask element %lld is %s (a mask adds finite values or -inf)", (long long)e,
                            x != x ? "NaN" : "+inf");
        }
        p->mask = s->mask;
    }
    if ((st = er_attn_prepare(p, msg, msg_size)) != ER_OK) return st;
    if ((st = er_ops_alloc_output(r, 0, of, q->ndim, q->shape, msg, msg_size)) != ER_OK) return st;
    if ((st = er_ops_alloc_output(r, 1, of, k->ndim, k->shape, msg, msg_size)) != ER_OK) return st;
    if ((st = er_ops_alloc_output(r, 2, of, v->ndim, v->shape, msg, msg_size)) != ER_OK) return st;
    int64_t n3[3] = {cnt[0], cnt[1], cnt[2]};
    ab_job jb;
    memset(&jb, 0, sizeof jb);
    jb.r = r, jb.s = s;
    for (int o = 0; o < 3; o++) jb.bits[o] = malloc(sizeof(uint64_t) * (size_t)(n3[o] ? n3[o] : 1));
    if (!jb.bits[0] || !jb.bits[1] || !jb.bits[2]) st = msgf(msg, msg_size, ER_ENOMEM, "attention.backward: out of memory");
    else st = er_ops_parallel(B * Hk, 1, ab_ref_groups, &jb, msg, msg_size);
    if (st == ER_OK)
        for (int o = 0; o < 3; o++)
            for (int64_t e = 0; e < n3[o]; e++) er_ops_store(&r->out[o], e, jb.bits[o][e]);
    for (int o = 0; o < 3; o++) free(jb.bits[o]);
    return st;
}

/* ---- the bounds (docs/proofs/attention-backward.md) ---- */

/* the larger of a and b, NaN when either is (an error bound that is NaN means no bound: never dropped) */
static double fmaxn(double a, double b) { return (a != a || b != b) ? NAN : a > b ? a : b; }

/* an error bound as used: NaN (an infinite factor times 0) or infinite gives +inf (no bound) */
static double errv(double e) { return e < INFINITY ? e : INFINITY; }

/* gamma(n) = n u / (1 - n u), rounded up; +inf when n u >= 1/2 */
static double gam(double n, double u)
{
    double x = up(n * u);
    return x >= 0.5 ? INFINITY : up(x / dn(1.0 - x));
}

/* the forward's stored values under the standard: per row the largest distance of the stored lse from the exact
 * one (wl), per element of O the same (wo), and |O| <= ob */
typedef struct ab_fwd {
    double *wl, *wo, *ob;
} ab_fwd;

typedef struct ab_bjob {
    ab_state *s;
    const er_openv *env;
    ab_fwd f;
    double *olo, *ohi, *llo, *lhi; /* the forward's bounds (before its final rounding) */
    double *xol, *xoh, *xll, *xlh;  /* the forward's exact enclosures */
    uint64_t *obits, *lbits;
    unsigned char *row_nan;
    er_attn_std a;
    er_opres *r;
} ab_bjob;

/* the forward's bounds (olo, ohi, llo, lhi) and its exact enclosures (xo*, xl*) on rows [r0, r1) */
static er_status ab_fwd_rows(void *ctx, int64_t r0, int64_t r1, char *msg, size_t msg_size)
{
    ab_bjob *j = (ab_bjob *)ctx;
    er_status st = er_attn_bounds(&j->s->p, r0, r1, &j->a, j->olo, j->ohi, j->llo, j->lhi, j->row_nan, msg, msg_size);
    if (st == ER_OK)
        st = er_attn_reference(&j->s->p, r0, r1, j->s->out_fmt, j->obits, j->xol, j->xoh, j->lbits, j->xll, j->xlh, msg,
                               msg_size);
    er_ops_mp_thread_done();
    return st;
}

/* the largest |stored - exact| where the stored value is the rounding to fmt of a value in [lo, hi] and the exact
 * one lies in [xl, xh] (rounding is monotone: the stored value lies in [RN(lo), RN(hi)]) */
static double stored_dist(int fmt, double lo, double hi, double xl, double xh)
{
    if (!(lo > -INFINITY) || !(hi < INFINITY)) return INFINITY;
    double sl = er_ops_bits_value(fmt, er_ops_rn_bits(fmt, lo)), sh = er_ops_bits_value(fmt, er_ops_rn_bits(fmt, hi));
    if (!isfinite(sl) || !isfinite(sh)) return INFINITY;
    return fmax(up(sh - xl), up(xh - sl));
}

static er_status ab_bound_groups(void *ctx, int64_t g0, int64_t g1, char *msg, size_t msg_size)
{
    ab_bjob *jb = (ab_bjob *)ctx;
    ab_state *s = jb->s;
    const er_openv *env = jb->env;
    const er_attn_prob *p = &s->p;
    const er_standard *sd = &env->o->standard;
    int64_t Sq = p->Sq, Sk = p->Sk, D = p->D, Dv = p->Dv, G = s->G, R = G * Sq;
    int flash = sd->kind == ER_STD_FLASH;
    double u = env->u, t = env->ftz ? env->tiny : env->eta; /* t: the absolute loss of one rounding */
    double ue = er_ops_ulps(env, flash ? "exp2" : "exp"), ud = er_ops_ulps(env, "div");
    double eps_e = up(ue * 2 * u), eps_d = up(up(ud * 2 * u) + u);
    double abs_e = up((ue > 1 ? ue : 1.0) * env->eta + (env->ftz ? env->tiny : 0));
    /* P's narrower format (flash: p=value|<format>): a relative uP and an absolute absP more */
    double uP = 0, absP = 0;
    if (jb->a.p_fmt >= 0) {
        er_fmt f = er_fmt_get(jb->a.p_fmt);
        uP = ldexp(1.0, -(f.mbits + 1));
        absP = ldexp(1.0, er_fmt_emin(f) - f.mbits);
    }
    double gS = gam((double)D + 3, u), gP = gam((double)Dv + 1, u), gD = gam((double)(Sk > Dv ? Sk : Dv) + 2, u);
    double gQ = gam((double)Sk + 3, u), gK = gam((double)R + 3, u), gV = gam((double)R + 1, u);
    const double *K = NULL;
    ab_grp w;
    if (!grp_alloc(&w, R, Sk)) return msgf(msg, msg_size, ER_ENOMEM, "attention.backward: out of memory");
    double *eP = malloc(sizeof(double) * (size_t)(R * Sk > 0 ? R * Sk : 1) * 2);
    double *kacc = malloc(sizeof(double) * (size_t)(2 * Sk * (D + Dv) + 2 * D + 1));
    double *qe = kacc ? kacc + 2 * Sk * (D + Dv) : NULL, *qm = qe ? qe + D : NULL;
    if (!eP || !kacc) {
        free(eP), free(kacc);
        grp_free(&w);
        return msgf(msg, msg_size, ER_ENOMEM, "attention.backward: out of memory");
    }
    double *eS = eP + R * Sk; /* per (row, key): |P^ - P| and |dS^ - dS| bounds */
    er_status st = ER_OK;
    for (int64_t gi = g0; gi < g1 && st == ER_OK; gi++) {
        int64_t b = gi / p->Hk, hk = gi % p->Hk;
        K = p->k + (b * p->Hk + hk) * Sk * D;
        const double *V = p->v + (b * p->Hk + hk) * Sk * Dv;
        if ((st = grp_fill(s, b, hk, &w, msg, msg_size)) != ER_OK) break;
        /* dk, dv sum over the rows some key takes part in: a row with none adds exact zeros (no rounding) */
        int64_t Re = 0;
        for (int64_t rr = 0; rr < R; rr++) Re += w.nk[rr] > 0;
        gK = gam((double)Re + 3, u), gV = gam((double)Re + 1, u);
        for (int64_t rr = 0; rr < R; rr++) {
            int64_t i = rr % Sq, h = hk * G + rr / Sq, row = (b * p->Hq + h) * Sq + i;
            const double *g = grow(s, b, h, i);
            double *Sl = w.Sl + rr * Sk, *Sh = w.Sh + rr * Sk, *T = w.T + rr * Sk;
            double *Pe = eP + rr * Sk, *Se = eS + rr * Sk;
            /* score errors: |S^ - S| <= gS T + (D + 4) t (scale) */
            double Smax = -INFINITY, eSmax = 0, Emax = 0;
            for (int64_t j = 0; j < Sk; j++) {
                if (Sh[j] == -INFINITY) continue;
                Smax = fmax(Smax, Sh[j]);
                eSmax = fmaxn(eSmax, up(gS * T[j] + (double)(D + 4) * t * (1 + p->scale)));
            }
            double wl = flash ? jb->f.wl[row] : 0, lmag = flash ? fmax(fabs(w.Ll[rr]), fabs(w.Lh[rr])) : 0;
            for (int64_t j = 0; j < Sk; j++) {
                if (Sh[j] == -INFINITY) {
                    Pe[j] = 0;
                    continue;
                }
                double es = up(gS * T[j] + (double)(D + 4) * t * (1 + p->scale));
                double smag = fmax(fabs(Sl[j]), fabs(Sh[j]));
                double E;
                if (flash) /* exp(S^ c - lse^ c) (c = log2 e or 1): the score's error, the stored lse's, 4 roundings */
                    E = up(es + wl + 4 * u * (smag + es + lmag + wl) * (1 + 0x1p-20) + 4 * t);
                else /* exp(S^ - m^): the score's error and the subtraction's rounding (|S^ - m^| <= Smax - S + 2 eSmax) */
                    E = up(es + u * (up(Smax - Sl[j]) + 2 * eSmax) * (1 + 0x1p-20) + t);
                Pe[j] = E; /* the argument's error for now */
                Emax = fmaxn(Emax, E);
            }
            /* relative: P^ / P in [1/z, z]; then the absolute terms */
            double den = up(1.0 / dn(dn(1.0 - eps_e) * dn(1.0 - uP)));
            double absAll = up(abs_e + absP + t);
            if (!flash) {
                /* the row sum (any order, nonnegative terms) and the division; the row sum's absolute loss
                 * (Sk (abs_e + t)) relative to l^ >= 1/2 */
                double rel = up(gam((double)Sk, u) + 2 * (double)Sk * (abs_e + t));
                den = up(den / dn(dn(dn(1.0 - eps_e) * dn(1.0 - rel)) * dn(1.0 - eps_d)));
                absAll = up(2 * abs_e + absP + 2 * t);
            }
            for (int64_t j = 0; j < Sk; j++) {
                if (Sh[j] == -INFINITY) continue;
                double E = flash ? Pe[j] : up(Pe[j] + Emax);
                double el, eh;
                er_ops_exp(E, &el, &eh);
                double z = E < 700 ? up(eh * den) : INFINITY;
                double rho = up(z - 1.0);
                Pe[j] = up(rho * w.Ph[rr * Sk + j] + absAll);
            }
            /* dP^: |e| <= gP U + Dv t; D^: max of rowsum(dO O^) and rowsum(P^ dP^) */
            double eD1 = 0, mag1 = 0;
            for (int64_t c = 0; c < Dv; c++) {
                int64_t e = row * Dv + c;
                if (g[c] == 0) continue; /* an exact zero of dO: no term */
                eD1 += fabs(g[c]) * jb->f.wo[e];
                mag1 += fabs(g[c]) * jb->f.ob[e];
            }
            eD1 = eD1 + gD * mag1 + (double)(Dv + 2) * t;
            double eD2 = 0, mag2 = 0;
            for (int64_t j = 0; j < Sk; j++) {
                if (Sh[j] == -INFINITY) continue;
                double dp = fmax(fabs(w.dPl[rr * Sk + j]), fabs(w.dPh[rr * Sk + j]));
                double edp = gP * w.U[rr * Sk + j] + (double)(Dv + 1) * t;
                double ph = w.Ph[rr * Sk + j];
                eD2 += Pe[j] * (dp + edp) + ph * edp;
                mag2 += (ph + Pe[j]) * (dp + edp);
            }
            eD2 = eD2 + gD * mag2 + (double)(Sk + 2) * t;
            double eD = errv(fmaxn(eD1, eD2) * (1 + 0x1p-20));
            /* dS^ = P^ (dP^ - D^) (flash: maybe rounded to P's format) */
            for (int64_t j = 0; j < Sk; j++) {
                if (Sh[j] == -INFINITY || w.zero[rr]) {
                    Se[j] = 0;
                    continue;
                }
                double edp = gP * w.U[rr * Sk + j] + (double)(Dv + 1) * t;
                double amag = fmax(fabs(w.al[rr * Sk + j]), fabs(w.ah[rr * Sk + j]));
                double ea = (edp + eD) * (1 + u) + u * amag + t;
                double ph = w.Ph[rr * Sk + j];
                double ahat = amag + ea, phat = ph + Pe[j];
                double e = Pe[j] * ahat + ph * ea + u * phat * ahat + t;
                e = e + uP * (fmax(fabs(w.dSl[rr * Sk + j]), fabs(w.dSh[rr * Sk + j])) + e) + absP;
                Se[j] = e * (1 + 0x1p-20);
            }
            /* a row whose dS is exactly 0 still gets P^'s error on every dS^ when computed: an implementation
             * computes P^ (dP^ - D^) with dP^ - D^ not 0 in general */
            if (w.zero[rr])
                for (int64_t j = 0; j < Sk; j++) {
                    if (Sh[j] == -INFINITY) continue;
                    double edp = gP * w.U[rr * Sk + j] + (double)(Dv + 1) * t;
                    double ea = (edp + eD) * (1 + u) + t;
                    double e = (w.Ph[rr * Sk + j] + Pe[j]) * ea * (1 + u) + t;
                    Se[j] = (e + uP * e + absP) * (1 + 0x1p-20);
                }
        }
        /* outputs: exact enclosure +- the error; the sums accumulated row by row (nonnegative terms) */
        er_opres *r = jb->r;
        double sc = p->scale;
        for (int64_t x = 0; x < 2 * Sk * (D + Dv); x++) kacc[x] = 0;
        double *ke = kacc, *km = ke + Sk * D, *ve = km + Sk * D, *vm = ve + Sk * Dv;
        for (int64_t rr = 0; rr < R; rr++) {
            int64_t i = rr % Sq, h = hk * G + rr / Sq;
            const double *qv = qrow(s, b, h, i), *gv = grow(s, b, h, i);
            for (int64_t c = 0; c < D; c++) qe[c] = qm[c] = 0;
            for (int64_t j = 0; j < Sk; j++) {
                int64_t x = rr * Sk + j;
                if (w.Sh[x] == -INFINITY) continue;
                double es = eS[x], ms = fmax(fabs(w.dSl[x]), fabs(w.dSh[x])) + es;
                const double *kr = K + j * D;
                double *kej = ke + j * D, *kmj = km + j * D;
                for (int64_t c = 0; c < D; c++) {
                    double kk = fabs(kr[c]), qq = fabs(qv[c]);
                    qe[c] += es * kk, qm[c] += ms * kk;
                    kej[c] += es * qq, kmj[c] += ms * qq;
                }
                double ep = eP[x], mp = w.Ph[x] + ep;
                double *vej = ve + j * Dv, *vmj = vm + j * Dv;
                for (int64_t c = 0; c < Dv; c++) {
                    double gg = fabs(gv[c]);
                    vej[c] += ep * gg, vmj[c] += mp * gg;
                }
            }
            for (int64_t c = 0; c < D; c++) {
                double err = errv((sc * (qe[c] + gQ * qm[c]) + (double)(Sk + 3) * t * (1 + sc)) * (1 + 0x1p-20) + 0x1p-1000);
                if (w.nk[rr] == 0) err = 0; /* no key takes part: no term, dq is 0 in every implementation */
                int64_t e = IDQ(p, b, h, i, c);
                s->blo[0][e] = dn(r->xlo[0][e] - err), s->bhi[0][e] = up(r->xhi[0][e] + err);
            }
        }
        for (int64_t j = 0; j < Sk; j++) {
            for (int64_t c = 0; c < D; c++) {
                double err = errv((sc * (ke[j * D + c] + gK * km[j * D + c]) + (double)(Re + 3) * t * (1 + sc)) * (1 + 0x1p-20) +
                                  0x1p-1000);
                int64_t e = IDK(p, b, hk, j, c);
                s->blo[1][e] = dn(r->xlo[1][e] - err), s->bhi[1][e] = up(r->xhi[1][e] + err);
            }
            for (int64_t c = 0; c < Dv; c++) {
                double err = errv((ve[j * Dv + c] + gV * vm[j * Dv + c] + (double)(Re + 1) * t) * (1 + 0x1p-20) + 0x1p-1000);
                int64_t e = IDV(p, b, hk, j, c);
                s->blo[2][e] = dn(r->xlo[2][e] - err), s->bhi[2][e] = up(r->xhi[2][e] + err);
            }
        }
        (void)V;
    }
    free(eP), free(kacc);
    grp_free(&w);
    er_ops_mp_thread_done();
    return st;
}

static er_status ab_bounds(er_opres *r, int i, const er_openv *env, double *lo, double *hi, unsigned char *flags, char *msg,
                           size_t msg_size)
{
    ab_state *s = (ab_state *)r->state;
    const er_attn_prob *p = &s->p;
    const er_standard *sd = &env->o->standard;
    int64_t n3[3] = {p->B * p->Hq * p->Sq * p->D, p->B * p->Hk * p->Sk * p->D, p->B * p->Hk * p->Sk * p->Dv};
    if (!s->have || memcmp(&s->o, env->o, sizeof s->o)) {
        if (sd->kind == ER_STD_FLASH && sd->split != ER_STD_NORMAL && sd->split != ER_STD_ANY_ORDER)
            return msgf(msg, msg_size, ER_EUNSUPPORTED,
                        "attention.backward: flash's matmuls are modelled as any_order in compute; its mma= takes normal or "
                        "any_order only");
        for (int o = 0; o < 3; o++)
            if (!s->blo[o]) {
                s->blo[o] = malloc(sizeof(double) * (size_t)(n3[o] ? n3[o] : 1));
                s->bhi[o] = malloc(sizeof(double) * (size_t)(n3[o] ? n3[o] : 1));
                if (!s->blo[o] || !s->bhi[o]) return msgf(msg, msg_size, ER_ENOMEM, "attention.backward: out of memory");
            }
        s->have = 0;
        ab_bjob jb;
        memset(&jb, 0, sizeof jb);
        jb.s = s, jb.env = env, jb.r = r;
        /* the forward's bounds under the same standard: the stored O (the out format) and lse (binary32) */
        er_attn_std_init(&jb.a, env, r->in[0].format, r->in[1].format, r->in[2].format);
        int64_t rows = p->B * p->Hq * p->Sq, no = rows * p->Dv;
        size_t sno = (size_t)(no > 0 ? no : 1), snr = (size_t)(rows > 0 ? rows : 1);
        jb.olo = malloc(sizeof(double) * sno * 6), jb.llo = malloc(sizeof(double) * snr * 5), jb.row_nan = malloc(snr);
        jb.obits = malloc(sizeof(uint64_t) * (sno + snr));
        er_status st = ER_OK;
        if (!jb.olo || !jb.llo || !jb.row_nan || !jb.obits)
            st = msgf(msg, msg_size, ER_ENOMEM, "attention.backward: out of memory");
        if (st == ER_OK) {
            jb.ohi = jb.olo + sno, jb.f.wo = jb.olo + 2 * sno, jb.f.ob = jb.olo + 3 * sno;
            jb.xol = jb.olo + 4 * sno, jb.xoh = jb.olo + 5 * sno;
            jb.lhi = jb.llo + snr, jb.f.wl = jb.llo + 2 * snr, jb.xll = jb.llo + 3 * snr, jb.xlh = jb.llo + 4 * snr;
            jb.lbits = jb.obits + sno;
            st = er_ops_parallel(rows, 1 + (1 << 22) / (p->Sk * (p->D + p->Dv) + 1), ab_fwd_rows, &jb, msg, msg_size);
        }
        if (st == ER_OK) {
            {
                for (int64_t e = 0; e < no; e++) {
                    jb.f.wo[e] = stored_dist(s->out_fmt, jb.olo[e], jb.ohi[e], jb.xol[e], jb.xoh[e]);
                    double sl = er_ops_bits_value(s->out_fmt, er_ops_rn_bits(s->out_fmt, jb.olo[e]));
                    double sh = er_ops_bits_value(s->out_fmt, er_ops_rn_bits(s->out_fmt, jb.ohi[e]));
                    jb.f.ob[e] = fmax(fabs(sl), fabs(sh));
                    if (!isfinite(jb.f.ob[e]) || !isfinite(jb.f.wo[e])) jb.f.ob[e] = jb.f.wo[e] = INFINITY;
                }
                for (int64_t e = 0; e < rows; e++)
                    jb.f.wl[e] = stored_dist(ER_FMT_F32, jb.llo[e], jb.lhi[e], jb.xll[e], jb.xlh[e]);
                st = er_ops_parallel(p->B * p->Hk, 1, ab_bound_groups, &jb, msg, msg_size);
            }
        }
        free(jb.olo), free(jb.llo), free(jb.row_nan), free(jb.obits);
        if (st != ER_OK) return st;
        s->o = *env->o;
        s->have = 1;
    }
    for (int64_t e = 0; e < n3[i]; e++) {
        lo[e] = s->blo[i][e], hi[e] = s->bhi[i][e];
        if (!(lo[e] > -INFINITY) || !(hi[e] < INFINITY) || lo[e] != lo[e] || hi[e] != hi[e]) flags[e] = ER_OPB_UNCERTAIN;
    }
    return ER_OK;
}

const er_opdef er_opdef_attention_backward = {
    "attention.backward", 3, 5, ab_inputs, 3, ab_outputs, ab_boundaries,
    (int)(sizeof ab_boundaries / sizeof ab_boundaries[0]), ER_OPSTD_NORMAL | ER_OPSTD_ANY | (1u << ER_STD_FLASH),
    "normal, any_order, flash[:block=N][,p=value|compute|<format>][,order=index|reverse]",
    ab_create, ab_bounds, ab_free,
    NULL, /* normal(): not emulated yet (er_opres_normal refuses it) */
};
