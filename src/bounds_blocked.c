/* bounds_blocked.c: the blocked standard, a declared structure (k-tiles of bk products, a split-k
 * factor, the accumulator): its parser and its per-element bounds from the partial sums at the tile
 * boundaries (docs/proofs/blocked.md has the proof; each step below names the line it implements). */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bounds_blocked.h"
#include "host/er_bel.h"
#include "host/er_host.h"
#include "host/er_msg.h"
#include "exactref/core/er_bounds.h"
#include "exactref/exactref.h"
#include "host/er_par.h"

#define msgf er_msgf /* host/er_msg.h */

er_status er_standard_parse_blocked(const char *spec, er_standard *s, char *msg, size_t msg_size)
{
    const char *p;
    int have_bk = 0;
    memset(s, 0, sizeof *s);
    s->kind = ER_STD_BLOCKED;
    s->group = 1;
    s->split = 1;
    s->acc_fmt = -1;
    snprintf(s->name, sizeof s->name, "%.47s", spec);
    if (strncmp(spec, "blocked:", 8))
        return msgf(msg, msg_size, ER_EINVAL, "standard '%s': write blocked:bk=N[,split=S][,acc=f32] (bk: the k-tile)",
                    spec);
    p = spec + 8;
    while (*p) {
        char key[16], word[16];
        long v;
        int used = 0;
        if (sscanf(p, "acc=%15[a-z0-9]%n", word, &used) == 1) {
            int f;
            if (er_format_from_name(word, &f) != ER_OK ||
                (f != ER_FMT_F64 && f != ER_FMT_F32 && f != ER_FMT_F16 && f != ER_FMT_BF16))
                return msgf(msg, msg_size, ER_EINVAL, "standard '%s': acc is f64, f32, f16 or bf16", spec);
            s->acc_fmt = f;
        } else if (sscanf(p, "%15[a-z]=%ld%n", key, &v, &used) == 2) {
            if (!strcmp(key, "bk") && v >= 1 && v <= (1L << 24)) s->bk = (int)v, have_bk = 1;
            else if (!strcmp(key, "split") && v >= 1 && v <= 65536) s->split = (int)v;
            else return msgf(msg, msg_size, ER_EINVAL, "standard '%s': unknown key or value out of range at '%s' "
                             "(bk in [1, 2^24], split in [1, 65536])", spec, p);
        } else {
            return msgf(msg, msg_size, ER_EINVAL, "standard '%s': expected key=value at '%s'", spec, p);
        }
        p += used;
        if (*p == ',') p++;
        else if (*p) return msgf(msg, msg_size, ER_EINVAL, "standard '%s': expected ',' at '%s'", spec, p);
    }
    if (!have_bk) return msgf(msg, msg_size, ER_EINVAL, "standard '%s': bk (the k-tile) is required", spec);
    return ER_OK;
}

er_status er_blocked_begin(er_blocked_ctx *ctx, const er_standard *std, int compute, int ftz, int has_slack,
                           int threads, char *msg, size_t msg_size)
{
    memset(ctx, 0, sizeof *ctx);
    if (ftz)
        return msgf(msg, msg_size, ER_EUNSUPPORTED, "standard %s: flush_to_zero is not modelled (use any_order)",
                    std->name);
    if (has_slack)
        return msgf(msg, msg_size, ER_EUNSUPPORTED, "standard %s: results as inputs are not modelled (use any_order)",
                    std->name);
    ctx->bk = std->bk > 0 ? std->bk : 1;
    ctx->split = std->split > 0 ? std->split : 1;
    ctx->acc = std->acc_fmt >= 0 ? std->acc_fmt : compute;
    ctx->threads = threads;
    ctx->msg = msg;
    ctx->msg_size = msg_size;
    return ER_OK;
}

/* ------------------------------------------------------------------------------------------------ */

/* A finite nonzero binary64 value's significant bits, its exponent floor(log2 |v|) and the exponent of
 * its lowest set bit. */
static void sig_of(double v, int *bits, int *e, int *lsb)
{
    int fe;
    double f = frexp(fabs(v), &fe); /* exact: |v| = f 2^fe, f in [1/2, 1) */
    uint64_t m = (uint64_t)ldexp(f, 53); /* the 53-bit significand, exact */
    int tz = 0;
    while (!(m & 1u)) m >>= 1, tz++;
    *bits = 53 - tz;
    *e = fe - 1;
    *lsb = fe - 53 + tz;
}

/* Largest significant bits, the least lowest-bit exponent and the largest exponent of the finite
 * nonzero values of x[0..cnt) (cnt 0 or all zero: 0, large, very small). */
static void summarise(const double *x, int64_t cnt, int *maxbits, int *minlsb, int *maxe)
{
    *maxbits = 0, *minlsb = 100000, *maxe = -100000;
    for (int64_t q = 0; q < cnt; q++) {
        int b, e, l;
        uint64_t u;
        if (x[q] == 0 || !er_b_finite(x[q])) continue;
        memcpy(&u, &x[q], 8);
        if ((u >> 52 & 0x7FF) != 0) {
            /* a normal binary64 value, from its bits: the same numbers as sig_of */
            uint64_t f = (u & ((UINT64_C(1) << 52) - 1)) | (UINT64_C(1) << 52);
            int tz = er_ctz64(f);
            b = 53 - tz;
            e = (int)(u >> 52 & 0x7FF) - 1023;
            l = e - 52 + tz;
        } else {
            sig_of(x[q], &b, &e, &l);
        }
        if (b > *maxbits) *maxbits = b;
        if (l < *minlsb) *minlsb = l;
        if (e > *maxe) *maxe = e;
    }
}

typedef struct {
    const er_blocked_ctx *bc;
    const er_bjob *job;
    er_bounds *out;
    int64_t e0;
    int prod_exact; /* every finite product is a value of the accumulator's format (no rounding) */
    int pt;         /* the accumulator's precision (significand bits, the hidden one included) */
    int64_t next;   /* the next row to take (under lock) */
    pthread_mutex_t lock;
    int fail;       /* a worker could not allocate its scratch (atomic) */
} brun;

/* Half an ulp of the accumulator at M (M >= 0 finite): 2^(max(floor(log2 M), emin) - pt), 0 for M = 0.
 * Every value y with |y| <= M rounds to nearest within it (docs/proofs/blocked.md, (2)). */
static double half_ulp(const er_bpar *c, int pt, double M)
{
    int e;
    if (!(M > 0)) return 0.0;
    e = er_b_frexp_e(M) - 1;
    if (e < c->emin_c) e = c->emin_c;
    return ldexp(1.0, e - pt);
}

/* u r / (1 - r u) rounded up: gamma_r for the unit roundoff u. */
static double gam(double u, double r) { return er_b_up(er_b_gamma(u, r) * r); }

/* Q (1 + g) rounded up. */
static double grow(double Q, double g) { return er_b_up(Q + er_b_up(Q * g)); }

/* Row i of the batch: every element's radius and ends.  w: 10 n doubles of scratch. */
static void blocked_row(brun *r, int64_t i, double *w)
{
    const er_bjob *j = r->job;
    const er_bpar *c = &j->par;
    const int64_t k = c->k, n = j->n, bk = r->bc->bk, split = r->bc->split;
    const int64_t ntiles = k > 0 ? (k + bk - 1) / bk : 0, tps = ntiles > 0 ? (ntiles + split - 1) / split : 1;
    const int64_t nsplits = ntiles > 0 ? (ntiles + tps - 1) / tps : 0; /* the nonempty splits */
    const double *ar = j->af + i * k, u = c->u, eta = c->eta, maxc = c->max_c;
    double *P = w, *T = w + n, *Slo = w + 2 * n, *Shi = w + 3 * n, *E = w + 4 * n, *Xlo = w + 5 * n,
           *Xhi = w + 6 * n, *R = w + 7 * n, *Mc = w + 8 * n, *Tt = w + 9 * n;
    int64_t s, t, p, q;
    for (q = 0; q < n; q++) Xlo[q] = Xhi[q] = R[q] = Mc[q] = Tt[q] = 0.0;
    for (s = 0; s < nsplits; s++) {
        const int64_t t0 = s * tps, t1 = t0 + tps < ntiles ? t0 + tps : ntiles;
        for (q = 0; q < n; q++) Slo[q] = Shi[q] = E[q] = 0.0;
        for (t = t0; t < t1; t++) {
            const int64_t p0 = t * bk, p1 = p0 + bk < k ? p0 + bk : k, nt = p1 - p0;
            /* the tile's exact products (binary64: every product is exact, checked per batch) summed in
             * index order: P within gamma_(nt-1) T of the tile's sum, T >= (1 - nt 2^-53) sum |x_p| */
            /* eight columns at a time in registers (each element's additions in index order) */
            for (q = 0; q + 8 <= n; q += 8) {
                double s[8] = {0, 0, 0, 0, 0, 0, 0, 0}, m8[8] = {0, 0, 0, 0, 0, 0, 0, 0};
                for (p = p0; p < p1; p++) {
                    const double a = ar[p], *bq = j->bf + p * n + q;
                    for (int l = 0; l < 8; l++) {
                        double x = a * bq[l];
                        s[l] = s[l] + x;
                        m8[l] = m8[l] + fabs(x);
                    }
                }
                for (int l = 0; l < 8; l++) P[q + l] = s[l], T[q + l] = m8[l];
            }
            for (; q < n; q++) {
                double s1 = 0, m1 = 0;
                for (p = p0; p < p1; p++) {
                    double x = ar[p] * j->bf[p * n + q];
                    s1 = s1 + x;
                    m1 = m1 + fabs(x);
                }
                P[q] = s1, T[q] = m1;
            }
            const double infl = 1.0 + (double)(nt + 8) * 0x1p-51, g53 = gam(0x1p-53, (double)nt),
                         ga = gam(u, (double)(nt + 1)), nadd = (double)(t == t0 ? nt - 1 : nt);
            for (q = 0; q < n; q++) {
                double Tu = er_b_up(T[q] * infl), eP, Ma, M, h;
                if (!er_b_finite(Tu)) { /* an infinite or NaN product: the element is finished apart */
                    Tt[q] = ER_B_NAN; /* stays NaN: the mark of a special term */
                    continue;
                }
                eP = er_b_up(g53 * Tu);
                /* (3): every value the tile's tree forms, and every exact sum it rounds, is at most M: a
                 * subset of the tile's terms, with or without the accumulator, lies within
                 * [Slo - E - Tneg, Shi + E + Tpos] or [-Tneg, Tpos] (Tpos, Tneg: the sums of the positive
                 * and of the negative terms' magnitudes, (T + P) / 2 and (T - P) / 2), and the tree's
                 * roundings move it by at most gamma_(nt+1) (|acc| + T) */
                {
                    double Tp = fmin(er_b_up(er_b_up(er_b_up(Tu + P[q]) + eP) * 0.5), Tu);
                    double Tn = fmin(er_b_up(er_b_up(er_b_up(Tu - P[q]) + eP) * 0.5), Tu);
                    double hi = er_b_up(er_b_up(Shi[q] + E[q]) + Tp), lo = er_b_down(er_b_down(Slo[q] - E[q]) - Tn);
                    double M0 = fmax(fmax(fabs(hi), fabs(lo)), fmax(Tp, Tn));
                    Ma = fmax(fabs(Slo[q]), fabs(Shi[q]));
                    M = er_b_up(M0 + er_b_up(ga * er_b_up(er_b_up(Ma + E[q]) + Tu)));
                }
                if (!r->prod_exact) M = er_b_up(M + (double)(2 * nt) * eta);
                if (!(M < maxc)) E[q] = ER_B_INF; /* a partial may overflow: no blocked bound */
                h = half_ulp(c, r->pt, M);
                /* (4): nadd roundings of at most h each, and the products' own roundings */
                E[q] = er_b_up(E[q] + er_b_up(nadd * h));
                if (!r->prod_exact) E[q] = er_b_up(E[q] + er_b_up(er_b_up(u * Tu) + (double)nt * eta));
                /* the enclosure [Slo, Shi] of the split's exact partial sum after tile t */
                Slo[q] = er_b_down(Slo[q] + er_b_down(P[q] - eP));
                Shi[q] = er_b_up(Shi[q] + er_b_up(P[q] + eP));
                Tt[q] = er_b_up(Tt[q] + Tu);
            }
        }
        for (q = 0; q < n; q++) {
            /* (5): the split's accumulator is within E of its exact sum */
            Xlo[q] = er_b_down(Xlo[q] + Slo[q]);
            Xhi[q] = er_b_up(Xhi[q] + Shi[q]);
            R[q] = er_b_up(R[q] + E[q]);
            Mc[q] = er_b_up(Mc[q] + er_b_up(fmax(fabs(Slo[q]), fabs(Shi[q])) + E[q]));
        }
    }
    {
        const double nf = (double)nsplits + (c->has_c ? 1 : 0), gf = gam(u, nf > 0 ? nf : 1);
        for (q = 0; q < n; q++) {
            const int64_t e = i * n + q;
            const double cval = j->cv ? j->cv[e] : 0.0;
            const er_u64 rbits = j->rb[e];
            er_bel o;
            /* an infinite or NaN term (product or C): the exact value is not finite; every order meets
             * it unless the finite terms can overflow a partial (foundations.md, special inputs).  An
             * infinite or NaN product made its tile's T, so Tt or R, infinite or NaN. */
            if (!er_b_finite(cval) || !er_b_finite(Tt[q]) || er_b_isnan(R[q])) {
                double Tf = 0.0;
                for (p = 0; p < k; p++) {
                    double x = ar[p] * j->bf[p * n + q];
                    if (er_b_finite(x)) Tf = er_b_up(Tf + fabs(x));
                }
                if (er_b_finite(cval)) Tf = er_b_up(Tf + fabs(cval));
                er_b_finish_lh(c, rbits, -ER_B_INF, ER_B_INF, ER_B_INF, !(er_b_up(Tf * (1 + 0x1p-20)) >= maxc), 0, 0,
                               0, &o);
                er_bel_store(r->out, r->e0 + e, &o);
                continue;
            }
            {
                /* (6): the combination of the splits' accumulators and C, one tree of nf leaves */
                double Cm = fabs(cval), Cl = Cm, Rb, Ra, rad, xl = Xlo[q], xh = Xhi[q];
                if (c->has_c && c->c_rounds) Cl = er_b_up(er_b_up(Cm * (1 + u)) + eta);
                double Mf = grow(er_b_up(Mc[q] + Cl), gf);
                if (!(Mf < maxc) || !er_b_finite(R[q])) {
                    Rb = ER_B_INF;
                } else {
                    Rb = er_b_up(R[q] + er_b_up((nf - 1 > 0 ? nf - 1 : 0) * half_ulp(c, r->pt, Mf)));
                    if (c->has_c && c->c_rounds) Rb = er_b_up(Rb + er_b_up(er_b_up(u * Cm) + eta));
                }
                /* (7): blocked's trees are some of any_order's: the smaller bound holds */
                Ra = er_b_radius_exact(c, Tt[q], 0.0, cval);
                rad = Rb < Ra ? Rb : Ra;
                if (!er_b_finite(rad)) {
                    er_b_finish_lh(c, rbits, -ER_B_INF, ER_B_INF, rad, 0, 0, 0, 0, &o);
                } else {
                    if (c->has_c) {
                        xl = er_b_down(xl + cval);
                        xh = er_b_up(xh + cval);
                    }
                    er_b_ends_exact(c, ar, j->bf + q, cval, rbits, xl, xh, rad, &o);
                }
                er_bel_store(r->out, r->e0 + e, &o);
            }
        }
    }
}

/* one of the nth workers (host/er_par.h): the next row until none is left; r->fail set when its scratch
 * cannot be allocated (the other workers take the rows) */
static void blocked_worker(void *arg, int worker)
{
    brun *r = (brun *)arg;
    double *w = (double *)malloc(sizeof(double) * (size_t)(10 * (r->job->n > 0 ? r->job->n : 1)));
    (void)worker;
    if (!w) {
        __atomic_store_n(&r->fail, 1, __ATOMIC_RELAXED);
        return;
    }
    for (;;) {
        int64_t i;
        pthread_mutex_lock(&r->lock);
        i = r->next++;
        pthread_mutex_unlock(&r->lock);
        if (i >= r->job->m) break;
        blocked_row(r, i, w);
    }
    free(w);
}

int er_blocked_sink(void *ctx, const er_bjob *job, er_bounds *out, int64_t e0)
{
    er_blocked_ctx *bc = (er_blocked_ctx *)ctx;
    const er_bpar *c = &job->par;
    brun r;
    int ab, al, ae, bb, bl, be, nth, fail = 0;
    memset(&r, 0, sizeof r);
    r.bc = bc;
    r.job = job;
    r.out = out;
    r.e0 = e0;
    r.pt = -ilogb(c->u);
    /* the operands' values: every product exact in binary64 (at most 26 significant bits and an
     * exponent within [-537, 500] each), else not supported here */
    summarise(job->af, job->m * c->k, &ab, &al, &ae);
    summarise(job->bf, c->k * job->n, &bb, &bl, &be);
    if (ab > 26 || bb > 26 || (ab && (al < -537 || ae > 500)) || (bb && (bl < -537 || be > 500)))
        return msgf(bc->msg, bc->msg_size, ER_EUNSUPPORTED,
                    "the blocked standard takes operands of at most 26 significant bits (f32 and narrower) "
                    "within 2^+-500 (use any_order for the others)");
    /* (1): a product is a value of the accumulator when its significand fits and its lowest bit is at
     * least the accumulator's least subnormal, and the largest is below its largest value */
    r.prod_exact = !ab || !bb ||
                   (ab + bb <= r.pt && al + bl >= c->emin_c - (r.pt - 1) && ldexp(1.0, ae + be + 2) < c->max_c);
    pthread_mutex_init(&r.lock, NULL);
    nth = bc->threads > 0 ? bc->threads : (int)sysconf(_SC_NPROCESSORS_ONLN);
    if (nth < 1) nth = 1;
    if (nth > 64) nth = 64;
    if ((int64_t)nth > job->m) nth = (int)(job->m > 0 ? job->m : 1);
    r.fail = 0;
    er_par_for(nth, nth, blocked_worker, &r);
    fail = r.fail;
    pthread_mutex_destroy(&r.lock);
    return fail ? ER_ENOMEM : ER_OK;
}
