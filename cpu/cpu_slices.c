/* cpu_slices.c: the host emulation of the GPU route's exact integer slices: the shared core's slicing and
 * recombination (include/exactref/core/er_slices.h) around an int8 x int8 -> int32 GEMM in plain C. */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "cpu_slices.h"
#include "exactref/core/er_mma.h"
#include "exactref/core/er_slices.h"
#include "../host/er_par.h"

/* Blocking of the int8 GEMM: a tile of rows x columns of D, k in pieces that stay in the cache. */
#define SL_BI 16
#define SL_BJ 16
#define SL_BP 2048

/* An operand's slices: ns slices of rows x k int8 (row r of slice t at s + (t rows + r) k), each row's
 * grid exponent, the rows with a NaN or an infinity or that do not fit their grid, and which slices
 * are not all zero. */
typedef struct {
    int8_t *s;
    int32_t *grid;
    unsigned char *bad;
    int nz[ER_SL_MAX_SLICES];
    int ns;
} slices;

/* Slice rows x k values; side 0: row r is row r of A (batch b), side 1: row r is column r of B. */
static void cut(const er_problem *P, int side, int64_t b, int64_t rows, slices *S)
{
    const er_view *V = side ? &P->b : &P->a;
    int64_t k = P->k;
    unsigned opts = P->args->opts;
    for (int t = 0; t < S->ns; t++) S->nz[t] = 0;
    for (int64_t r = 0; r < rows; r++) {
        int32_t top = -100000, lsb = 100000, fits, finite = 1;
        for (int64_t p = 0; p < k; p++)
            finite &= er_sl_scan(V->fmt, side ? er_view_load(V, b, p, r) : er_view_load(V, b, r, p), opts, &top, &lsb);
        S->grid[r] = er_sl_row_grid(V->fmt, top, lsb, &fits);
        S->bad[r] = !finite || !fits;
        for (int64_t p = 0; p < k; p++) {
            int64_t n = 0;
            if (!S->bad[r]) er_sl_int_at(V->fmt, side ? er_view_load(V, b, p, r) : er_view_load(V, b, r, p), opts, S->grid[r], &n);
            for (int t = 0; t < S->ns; t++) {
                int8_t d = er_sl_digit(n, t);
                S->s[((int64_t)t * rows + r) * k + p] = d;
                S->nz[t] |= d != 0;
            }
        }
    }
}

/* The element-wise exact path (the CPU engine's exact strategy for one element), into D. */
static void exact_element(const er_problem *P, int64_t b, int64_t i, int64_t j)
{
    const er_view *A = &P->a, *B = &P->b;
    er_acc acc;
    er_acc_init(&acc, P->acc_lo, P->acc_nd);
    er_mma_sum_any(&acc, A->fmt, B->fmt, -1, A->data, b * A->sb + i * A->s0, A->s1, B->data, b * B->sb + j * B->s1,
                   B->s0, NULL, 0, 0, NULL, 0, 0, 1, P->k, P->args->opts);
    if (P->has_c) er_acc_add_val(&acc, in_val(P, er_decode(P->c.fmt, er_view_load(&P->c, b, i, j))));
    er_tensor_store(P->d, b, i, j, er_acc_round(&acc, P->d->format, P->args->rounding, P->args->opts).bits,
          er_storage_bytes(P->d->format));
}

/* W[i][j] += P_tu 2^(7(t+u)) for a tile: the int32 sums of slice t of A's rows [i0, i1) times slice u of
 * B's columns [j0, j1) over k in [c0, c1) (c1 - c0 <= ER_SL_KCHUNK: exact), blocked over k. */
static void gemm_tile(const slices *SA, const slices *SB, int t, int u, int64_t m, int64_t n, int64_t k, int64_t i0,
                      int64_t i1, int64_t j0, int64_t j1, int64_t c0, int64_t c1, er_sl_wide *W)
{
    int32_t acc[SL_BI][SL_BJ];
    memset(acc, 0, sizeof acc);
    for (int64_t p0 = c0; p0 < c1; p0 += SL_BP) {
        int64_t len = c1 - p0 < SL_BP ? c1 - p0 : SL_BP;
        for (int64_t i = i0; i < i1; i++) {
            const int8_t *a = SA->s + ((int64_t)t * m + i) * k + p0;
            for (int64_t j = j0; j < j1; j++) {
                const int8_t *bb = SB->s + ((int64_t)u * n + j) * k + p0;
                int32_t s = 0;
                int64_t p = 0;
                for (; p + 32 <= len; p += 32) { /* fixed-length pieces: the compiler vectorises them */
                    int32_t piece = 0;
                    for (int q = 0; q < 32; q++) piece += (int32_t)a[p + q] * (int32_t)bb[p + q];
                    s += piece;
                }
                for (; p < len; p++) s += (int32_t)a[p] * (int32_t)bb[p];
                acc[i - i0][j - j0] += s; /* a partial sum of at most ER_SL_KCHUNK products: exact */
            }
        }
    }
    for (int64_t i = i0; i < i1; i++)
        for (int64_t j = j0; j < j1; j++) er_sl_wide_add(&W[i * n + j], acc[i - i0][j - j0], ER_SL_DIGIT_BITS * (t + u));
}

/* One thread's share of a batch: rows [r0, r1) of D (whole tiles of SL_BI rows), their GEMMs, their
 * recombination and their rounding; each element is written by one thread. */
typedef struct {
    const er_problem *P;
    const slices *SA, *SB;
    er_sl_wide *W;
    int64_t b, r0, r1;
    int64_t sliced, exact_path;
} share;

static void *run_share(void *arg)
{
    share *S = (share *)arg;
    const er_problem *P = S->P;
    const er_mma_args *A = P->args;
    int64_t m = P->m, n = P->n, k = P->k;
    for (int64_t c0 = 0; c0 < k; c0 += ER_SL_KCHUNK) {
        int64_t c1 = k - c0 < ER_SL_KCHUNK ? k : c0 + ER_SL_KCHUNK;
        for (int t = 0; t < S->SA->ns; t++)
            for (int u = 0; u < S->SB->ns; u++) {
                if (!S->SA->nz[t] || !S->SB->nz[u]) continue; /* a zero slice: every P_tu is 0 */
                for (int64_t i0 = S->r0; i0 < S->r1; i0 += SL_BI)
                    for (int64_t j0 = 0; j0 < n; j0 += SL_BJ)
                        gemm_tile(S->SA, S->SB, t, u, m, n, k, i0, i0 + SL_BI < S->r1 ? i0 + SL_BI : S->r1, j0,
                                  j0 + SL_BJ < n ? j0 + SL_BJ : n, c0, c1, S->W);
            }
    }
    for (int64_t i = S->r0; i < S->r1; i++)
        for (int64_t j = 0; j < n; j++) {
            er_val c;
            uint64_t out;
            memset(&c, 0, sizeof c);
            if (P->has_c) c = in_val(P, er_decode(P->c.fmt, er_view_load(&P->c, S->b, i, j)));
            if (!S->SA->bad[i] && !S->SB->bad[j] &&
                er_sl_finish(S->W[i * n + j], S->SA->grid[i] + S->SB->grid[j], P->has_c, c, P->acc_lo, P->acc_nd,
                             P->d->format, A->rounding, A->opts, &out)) {
                er_tensor_store(P->d, S->b, i, j, out, er_storage_bytes(P->d->format));
                S->sliced++;
            } else {
                exact_element(P, S->b, i, j);
                S->exact_path++;
            }
        }
    return NULL;
}

int er_cpu_slices_mma(const er_problem *P, er_slices_stats *st)
{
    int64_t m = P->m, n = P->n, k = P->k;
    slices SA, SB;
    er_sl_wide *W = NULL;
    er_slices_stats s;
    int status = ER_OK;
    memset(&s, 0, sizeof s);
    memset(&SA, 0, sizeof SA);
    memset(&SB, 0, sizeof SB);
    if (P->kind != 0 || P->scaled || !P->d || P->lo || P->hi || P->odd)
        return er_msgf(P->msg, P->msg_size, ER_EUNSUPPORTED,
                       "integer slices: a float mma, not block-scaled, with d and no enclosures");
    SA.ns = er_sl_slices_of(P->a.fmt);
    SB.ns = er_sl_slices_of(P->b.fmt);
    if (!SA.ns || !SB.ns)
        return er_msgf(P->msg, P->msg_size, ER_EUNSUPPORTED,
                       "integer slices: %s x %s has no exact int8 slices (formats of at most 8 bits with subnormals, or "
                       "of at most 21 bits of precision: bf16, f16, tf32)",
                       er_host_format_name(P->a.fmt), er_host_format_name(P->b.fmt));
    if (k > ER_SL_KMAX)
        return er_msgf(P->msg, P->msg_size, ER_EUNSUPPORTED, "integer slices: k = %lld above 2^24", (long long)k);
    s.slices_a = SA.ns;
    s.slices_b = SB.ns;
    if (m && n) {
        SA.s = (int8_t *)malloc((size_t)(SA.ns * m * (k ? k : 1)));
        SB.s = (int8_t *)malloc((size_t)(SB.ns * n * (k ? k : 1)));
        SA.bad = (unsigned char *)malloc((size_t)m);
        SB.bad = (unsigned char *)malloc((size_t)n);
        SA.grid = (int32_t *)malloc((size_t)m * sizeof(int32_t));
        SB.grid = (int32_t *)malloc((size_t)n * sizeof(int32_t));
        W = (er_sl_wide *)malloc((size_t)(m * n) * sizeof *W);
        if (!SA.s || !SB.s || !SA.bad || !SB.bad || !SA.grid || !SB.grid || !W) {
            status = er_msgf(P->msg, P->msg_size, ER_ENOMEM, "integer slices: out of memory (m %lld, n %lld, k %lld)",
                             (long long)m, (long long)n, (long long)k);
            goto out;
        }
    }
    for (int64_t b = 0; b < P->batch && m && n; b++) {
        cut(P, 0, b, m, &SA);
        cut(P, 1, b, n, &SB);
        for (int64_t x = 0; x < m * n; x++) W[x] = er_sl_wide_zero();
        for (int t = 0; t < SA.ns; t++)
            for (int u = 0; u < SB.ns; u++) s.gemms += (SA.nz[t] && SB.nz[u]) ? (k + ER_SL_KCHUNK - 1) / ER_SL_KCHUNK : 0;
        {
            /* the rows in whole tiles over the threads (P->nthreads; 1 if a thread cannot start) */
            int64_t tiles = (m + SL_BI - 1) / SL_BI, nth = P->nthreads < 1 ? 1 : P->nthreads;
            share sh[64];
            if (nth > 64) nth = 64;
            if (nth > tiles) nth = tiles;
            for (int64_t q = 0; q < nth; q++) {
                memset(&sh[q], 0, sizeof sh[q]);
                sh[q].P = P;
                sh[q].SA = &SA;
                sh[q].SB = &SB;
                sh[q].W = W;
                sh[q].b = b;
                sh[q].r0 = tiles * q / nth * SL_BI;
                sh[q].r1 = q + 1 == nth ? m : tiles * (q + 1) / nth * SL_BI;
            }
            er_par_jobs(run_share, sh, sizeof sh[0], (int)nth);
            for (int64_t q = 0; q < nth; q++) {
                s.sliced += sh[q].sliced;
                s.exact_path += sh[q].exact_path;
            }
        }
    }
    s.elements = P->batch * m * n;
out:
    free(SA.s);
    free(SB.s);
    free(SA.bad);
    free(SB.bad);
    free(SA.grid);
    free(SB.grid);
    free(W);
    if (st) *st = s;
    return status;
}
