/* cpu_bounds.c: proven per-element bounds of each standard, and normal() emulated to the bit. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu_engine.h"
#include "cpu_internal.h"
#include "../src/host/er_progress.h"
#include "exactref/core/er_d64.h"

/*
 * Every bound is proven in docs/proofs/ (normal.md, any-order.md, engines.md).  The per-element
 * arithmetic is the shared core's (include/exactref/core/er_bounds.h: er_bound_element), the same
 * source the OpenCL and CUDA kernels run; this file runs the elements of a batch that the front door
 * prepared (src/tolerance.c: er_bjob) on the CPU's threads.  On the CPU, normal's and
 * any_order's canonical sums come from the matrix-product kernel (cpu/cpu_gemm.c: the same fused
 * chains in index order as er_bound_element forms one element at a time).
 */

typedef struct {
    const er_bjob *job;
    er_bounds *out;
    int64_t e0, r0, r1;
    er_progress *pg; /* rows done, for the caller's hook */
} bctx;

/* Subnormals of compute format cf to the zero of their sign (the core's er_d_flush). */
static double flush_sub(int cf, double x) { return bits_to_double(er_d_flush(cf, double_to_bits(x))); }

/* Store one element's bounds. */
static void put_bel(er_bounds *o, int64_t e, const er_bel *b)
{
    o->radius[e] = b->radius;
    o->tolerance[e] = b->tolerance;
    o->low[e] = b->low;
    o->high[e] = b->high;
    o->has_range[e] = (unsigned char)((b->flags & ER_BF_RANGE) != 0);
    o->may_pinf[e] = (unsigned char)((b->flags & ER_BF_PINF) != 0);
    o->may_ninf[e] = (unsigned char)((b->flags & ER_BF_NINF) != 0);
    o->may_nan[e] = (unsigned char)((b->flags & ER_BF_NAN) != 0);
}

void er_bjob_element(const er_bjob *j, int64_t i, int64_t col, const double *pre, er_bel *o)
{
    int64_t k = j->par.k, n = j->n;
    if (j->bft) {
        /* B' by columns (the CPU's copy): the same values in the same order, read with step 1 */
        er_bpar c = j->par;
        c.ldb = 1;
        er_bound_element(&c, j->af + i * k, j->bft + col * k, j->ea ? j->ea + i * k : NULL,
                         j->ebt ? j->ebt + col * k : NULL, j->rw, j->da ? j->da + i * k : NULL,
                         j->dbt ? j->dbt + col * k : NULL, j->cv ? j->cv[i * n + col] : 0.0,
                         j->dc ? j->dc[i * n + col] : 0.0, j->rb[i * n + col], pre, o);
        return;
    }
    er_bound_element(&j->par, j->af + i * k, j->bf + col, j->ea ? j->ea + i * k : NULL, j->eb ? j->eb + col : NULL,
                     j->rw, j->da ? j->da + i * k : NULL, j->db ? j->db + col : NULL,
                     j->cv ? j->cv[i * n + col] : 0.0, j->dc ? j->dc[i * n + col] : 0.0, j->rb[i * n + col], pre, o);
}

/* ---- Threads over rows. ---- */

/* An engine's elements (no slack of A or B), register-blocked: cpu/cpu_bounds_engine.c, the bits of
 * er_bound_element.  0: no memory (the caller takes the element-at-a-time path). */
#include "cpu_bounds_engine.h"
static int engine_rows(bctx *c) { return er_cpu_engine_rows(c->job, c->out, c->e0, c->r0, c->r1, -1, c->pg); }

static void bounds_rows(bctx *c)
{
    const er_bjob *j = c->job;
    int64_t n = j->n, k = j->par.k, rows = c->r1 - c->r0;
    /* normal and any_order: the canonical sums s, T = sum |a||b| and W = sum |a| r_p |b| are three
     * matrix products, on the fast path's kernel (the same chains as er_bound_element's) */
    double *S = NULL, *TT = NULL, *WW = NULL, *aa = NULL, *aw = NULL;
    const double *babs = NULL;
    if (j->par.kind == ER_BK_ENGINE && !j->par.slack_a && !j->par.slack_b && engine_rows(c)) return;
    if (j->par.gemm_form && rows > 0 && k > 0) {
        S = malloc(sizeof(double) * (size_t)(rows * n));
        TT = malloc(sizeof(double) * (size_t)(rows * n));
        WW = malloc(sizeof(double) * (size_t)(rows * n));
        aa = malloc(sizeof(double) * (size_t)(rows * k));
        aw = malloc(sizeof(double) * (size_t)(rows * k));
        babs = j->babs;
        int ok = S && TT && WW && aa && aw && babs;
        if (ok) {
            for (int64_t i = 0; i < rows; i++)
                for (int64_t p = 0; p < k; p++) {
                    double v = fabs(j->af[(c->r0 + i) * k + p]);
                    aa[i * k + p] = v;
                    aw[i * k + p] = v * j->rw[p]; /* exact: at most 24 + 26 bits */
                }
            ok = er_cpu_gemm_rows(j->af + c->r0 * k, k, j->bf, n, S, n, 0, rows, n, k) == 0 &&
                 er_cpu_gemm_rows(aa, k, babs, n, TT, n, 0, rows, n, k) == 0 &&
                 er_cpu_gemm_rows(aw, k, babs, n, WW, n, 0, rows, n, k) == 0;
        }
        if (!ok) { /* no memory: er_bound_element forms the same sums itself */
            free(S); free(TT); free(WW);
            S = TT = WW = NULL;
        }
        free(aa);
        free(aw);
    }
    for (int64_t i = c->r0; i < c->r1; er_progress_add(c->pg, n), i++)
        for (int64_t col = 0; col < n; col++) {
            er_bel b;
            double pre[3];
            const double *pp = NULL;
            if (S) {
                int64_t q = (i - c->r0) * n + col;
                pre[0] = S[q];
                pre[1] = TT[q];
                pre[2] = WW[q];
                pp = pre;
            }
            er_bjob_element(j, i, col, pp, &b);
            put_bel(c->out, c->e0 + i * n + col, &b);
        }
    free(S);
    free(TT);
    free(WW);
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
    pthread_t *th = (pthread_t *)calloc((size_t)T, sizeof *th);
    unsigned char *started = (unsigned char *)calloc((size_t)T, 1);
    if (!ctx || !th || !started) {
        free(ctx);
        free(th);
        free(started);
        return ER_ENOMEM;
    }
    er_progress pg;
    er_progress_init(&pg, job->progress, job->progress_ctx, e0, job->m * job->n, out->count);
    for (int t = 0; t < T; t++) {
        ctx[t].pg = &pg;
        ctx[t].job = job;
        ctx[t].out = out;
        ctx[t].e0 = e0;
        ctx[t].r0 = job->m * t / T;
        ctx[t].r1 = job->m * (t + 1) / T;
        started[t] = t > 0 && pthread_create(&th[t], NULL, bounds_thread, &ctx[t]) == 0;
    }
    for (int t = 1; t < T; t++)
        if (!started[t]) bounds_rows(&ctx[t]);
    bounds_rows(&ctx[0]);
    for (int t = 1; t < T; t++)
        if (started[t]) pthread_join(th[t], NULL);
    free(ctx);
    free(th);
    free(started);
    return ER_OK;
}

/* A batch on the CPU: prepared for a device that declined, it gets the CPU's own copies first. */
int er_cpu_bounds_batch(const er_bjob *job, er_bounds *out, int64_t e0, int threads)
{
    int st;
    if ((job->par.gemm_form && !job->babs) || !job->bft) {
        /* prepared for a device that declined: the CPU's own copies (|B'|, B' by columns), without
         * which the same bits come more slowly */
        er_bjob j2 = *job;
        int64_t kn = job->par.k * job->n, k = job->par.k, n = job->n;
        double *babs = NULL, *bft = NULL, *dbt = NULL;
        int16_t *ebt = NULL;
        if (job->par.gemm_form && !job->babs && (babs = (double *)malloc(sizeof(double) * (size_t)(kn ? kn : 1)))) {
            for (int64_t q = 0; q < kn; q++) babs[q] = fabs(job->bf[q]);
            j2.babs = babs;
        }
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
        free(babs);
        free(bft);
        free(ebt);
        free(dbt);
        return st;
    }
    return bounds_cpu(job, out, e0, threads);
}

/* ---- normal(): index order emulated to the bit. ---- */

/* x + y rounded to nearest even into compute cf (binary64 operands that are values of cf). */
static double add_rn(int cf, double x, double y)
{
    if (cf == ER_FMT_F64) return x + y;
    /* TwoSum, then round to odd in binary64 (seed 001's odd_of), then to cf: one rounding, since cf
     * has at most 24 significand bits <= 51 (Boldo and Melquiond) */
    double s = x + y, bp = s - x, e = (x - (s - bp)) + (y - bp);
    if (e != 0 && isfinite(s)) {
        uint64_t u = double_to_bits(s);
        if ((u & 1u) == 0) s = (e > 0) == (s > 0) ? bits_to_double(u + 1) : bits_to_double(u - 1);
    }
    return er_b_value(cf, er_convert(ER_FMT_F64, cf, double_to_bits(s), ER_RND_NEAREST_EVEN, 0u).bits);
}

static double round_c(int cf, double x, int ftz)
{
    double r = er_b_value(cf, er_convert(ER_FMT_F64, cf, double_to_bits(x), ER_RND_NEAREST_EVEN, 0u).bits);
    if (ftz) r = flush_sub(cf, r);
    return r;
}

int er_cpu_normal(const er_problem *P, int compute, int ftz, er_tensor *out)
{
    const er_mma_args *args = P->args;
    int bytes = er_storage_bytes(out->format);
    double *parts = (double *)malloc(sizeof(double) * (size_t)(P->k + 2));
    if (!parts) return ER_ENOMEM;
    for (int64_t b = 0; b < P->batch; b++)
        for (int64_t i = 0; i < P->m; i++)
            for (int64_t j = 0; j < P->n; j++) {
                int np = 0;
                double acc = 0;
                int have = 0;
                if (P->has_c) {
                    acc = round_c(compute, val_to_double(er_decode(P->c.fmt, load(&P->c, b, i, j))), ftz);
                    have = 1;
                }
                for (int64_t p = 0; p < P->k; p++) {
                    double a = val_to_double(a_val(P, b, i, p)), bb = val_to_double(b_val(P, b, p, j));
                    if (ftz) {
                        a = flush_sub(compute, a);
                        bb = flush_sub(compute, bb);
                    }
                    double x = round_c(compute, a * bb, ftz); /* a*b exact for inputs up to f32 */
                    if (!have) {
                        acc = x;
                        have = 1;
                        continue;
                    }
                    double t = add_rn(compute, acc, x);
                    if (ftz) t = flush_sub(compute, t);
                    if (isinf(t) && isfinite(acc) && isfinite(x)) {
                        /* the next addition would overflow: a new partial sum */
                        parts[np++] = acc;
                        acc = x;
                    } else {
                        acc = t;
                    }
                }
                /* the partial sums combined the same way */
                double r = acc;
                if (np) {
                    double s = parts[0];
                    for (int q = 1; q < np; q++) s = add_rn(compute, s, parts[q]);
                    r = add_rn(compute, s, acc);
                }
                if (!have) r = 0.0;
                /* a NaN result is the output format's canonical NaN: the sign and payload of an
                 * intermediate NaN depend on the machine's floating-point unit (x86: negative) */
                if (r != r) r = bits_to_double(UINT64_C(0x7FF8000000000000));
                store(out, b, i, j, er_convert(ER_FMT_F64, out->format, double_to_bits(r), args->rounding, args->opts).bits,
                      bytes);
            }
    free(parts);
    return ER_OK;
}
