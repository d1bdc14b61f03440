/* cpu_mma.c: the exact engine on the CPU: mma, block-scaled mma, mmai and enclosures, on all cores. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cpu_engine.h"
#include "cpu_internal.h"
#include "exactref/core/er_acc.h"
#include "exactref/exactref.h"

/* ------------------------------------------------------------------------------------------------ */
/* Tensors                                                                                            */

er_tensor er_tensor_2d(int format, int64_t rows, int64_t cols, void *data)
{
    er_tensor t;
    memset(&t, 0, sizeof t);
    t.format = format;
    t.ndim = 2;
    t.shape[0] = rows;
    t.shape[1] = cols;
    t.strides[0] = cols;
    t.strides[1] = 1;
    t.data = data;
    return t;
}

er_tensor er_tensor_3d(int format, int64_t batch, int64_t rows, int64_t cols, void *data)
{
    er_tensor t;
    memset(&t, 0, sizeof t);
    t.format = format;
    t.ndim = 3;
    t.shape[0] = batch;
    t.shape[1] = rows;
    t.shape[2] = cols;
    t.strides[0] = rows * cols;
    t.strides[1] = cols;
    t.strides[2] = 1;
    t.data = data;
    return t;
}

er_tensor er_tensor_transpose(er_tensor t)
{
    int a = t.ndim - 2, b = t.ndim - 1;
    int64_t s = t.shape[a];
    t.shape[a] = t.shape[b];
    t.shape[b] = s;
    s = t.strides[a];
    t.strides[a] = t.strides[b];
    t.strides[b] = s;
    return t;
}

void er_mma_args_init(er_mma_args *args)
{
    memset(args, 0, sizeof *args);
    args->rounding = ER_RND_NEAREST_EVEN;
    args->strategy = ER_STRATEGY_AUTO;
    args->backend = ER_BACKEND_AUTO;
    args->device = -1;
}

int er_cpu_threads(int requested)
{
    long n;
    if (requested > 0) return requested;
    n = sysconf(_SC_NPROCESSORS_ONLN);
    return n < 1 ? 1 : n > 256 ? 256 : (int)n;
}

/* ------------------------------------------------------------------------------------------------ */
/* The problem, validated                                                                            */

static int fail(er_mma_args *a, int st, const char *fmt, ...)
{
    if (a->msg && a->msg_size) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(a->msg, a->msg_size, fmt, ap);
        va_end(ap);
    }
    return st;
}

static int fmt_ok(int f) { return f >= 0 && f < ER_FMT_COUNT; }

static int check_tensor(er_mma_args *args, const er_tensor *t, const char *name)
{
    if (!fmt_ok(t->format)) return fail(args, ER_EINVAL, "%s: unknown format id %d", name, t->format);
    if (t->ndim != 2 && t->ndim != 3)
        return fail(args, ER_EINVAL, "%s: %d dimensions; 2 (a matrix) or 3 (a batch of matrices) expected",
                    name, t->ndim);
    for (int i = 0; i < t->ndim; i++) {
        if (t->shape[i] < 0 || t->strides[i] < 0)
            return fail(args, ER_EINVAL, "%s: negative shape or stride in dimension %d", name, i);
    }
    if (!t->data) {
        int64_t elems = 1;
        for (int i = 0; i < t->ndim; i++) elems *= t->shape[i];
        if (elems) return fail(args, ER_EINVAL, "%s: no data", name);
    }
    return ER_OK;
}

/* Exponent range of a format's values: least significant bit of the least value, and 2^top above all. */
static void fmt_range(int f, int *lsb, int *top)
{
    er_fmt d = er_fmt_get(f);
    if (d.kind != ER_KIND_FLOAT) {
        *lsb = 0;
        *top = d.width;
        return;
    }
    *lsb = er_fmt_emin(d) - d.mbits;
    *top = er_fmt_emax(d) + 1;
}

static int is_elem_fmt(int f)
{
    return f == ER_FMT_F8E4M3FN || f == ER_FMT_F8E5M2 || f == ER_FMT_F6E2M3FN || f == ER_FMT_F6E3M2FN ||
           f == ER_FMT_F4E2M1FN;
}

/* Every element of t is a pattern of its format: nothing above the width, tf32's padding zero. */
static int check_patterns(er_mma_args *A, const er_tensor *t, const char *name)
{
    er_fmt d = er_fmt_get(t->format);
    er_format_info fi;
    er_format_get_info(t->format, &fi);
    if (d.width == 8 * fi.storage_bytes && d.pad == 0) return ER_OK; /* every stored value is a pattern */
    int64_t B = t->ndim == 3 ? t->shape[0] : 1, M = t->shape[t->ndim - 2], N = t->shape[t->ndim - 1];
    int64_t sb = t->ndim == 3 ? t->strides[0] : 0;
    for (int64_t b = 0; b < B; b++)
        for (int64_t i = 0; i < M; i++)
            for (int64_t j = 0; j < N; j++) {
                uint64_t x = 0;
                memcpy(&x, (const unsigned char *)t->data +
                               (size_t)(b * sb + i * t->strides[t->ndim - 2] + j * t->strides[t->ndim - 1]) * (size_t)fi.storage_bytes,
                       (size_t)fi.storage_bytes);
                if (er_check_pattern(t->format, x) != ER_OK) {
                    char idx[80];
                    if (t->ndim == 3)
                        snprintf(idx, sizeof idx, "[%lld, %lld, %lld]", (long long)b, (long long)i, (long long)j);
                    else
                        snprintf(idx, sizeof idx, "[%lld, %lld]", (long long)i, (long long)j);
                    return fail(A, ER_EPATTERN, "%s: element %s = 0x%llx is not a %s pattern (%s)", name, idx,
                                (unsigned long long)x, fi.name,
                                d.pad ? "its low padding bits must be zero" : "bits set above its width");
                }
            }
    return ER_OK;
}

int er_engine_validate(problem *P)
{
    er_mma_args *A = P->args;
    int st;
    if (!A->a || !A->b) return fail(A, ER_EINVAL, "the operands a and b are required");
    if ((st = check_tensor(A, A->a, "a")) || (st = check_tensor(A, A->b, "b"))) return st;
    if (A->c && (st = check_tensor(A, A->c, "c"))) return st;
    if (A->d && (st = check_tensor(A, A->d, "d"))) return st;
    if (A->lo && (st = check_tensor(A, A->lo, "lo"))) return st;
    if (A->hi && (st = check_tensor(A, A->hi, "hi"))) return st;
    if (A->odd && (st = check_tensor(A, A->odd, "odd"))) return st;
    if (!A->d && !A->lo && !A->hi && !A->odd) return fail(A, ER_EINVAL, "no output: give d or an enclosure");
    if (A->rounding < 0 || A->rounding >= ER_RND_COUNT)
        return fail(A, ER_EINVAL, "unknown rounding direction %d", A->rounding);
    if (A->opts & ~(unsigned)(ER_OPT_SATURATE | ER_OPT_FTZ))
        return fail(A, ER_EINVAL, "unknown option bits 0x%x (ER_OPT_SATURATE, ER_OPT_FTZ_IN, ER_OPT_FTZ_OUT)", A->opts);
    if (A->strategy != ER_STRATEGY_AUTO && A->strategy != ER_STRATEGY_EXACT)
        return fail(A, ER_EINVAL, "unknown strategy %d", A->strategy);

    er_fmt fa = er_fmt_get(A->a->format), fb = er_fmt_get(A->b->format);
    int aint = fa.kind != ER_KIND_FLOAT, bint = fb.kind != ER_KIND_FLOAT;
    if (aint != bint)
        return fail(A, ER_EINVAL, "a is %s and b is %s: both float formats (mma) or both i8/u8 (mmai)",
                    er_format_name(A->a->format), er_format_name(A->b->format));
    P->kind = aint;
    if (aint) {
        if ((A->a->format != ER_FMT_I8 && A->a->format != ER_FMT_U8) ||
            (A->b->format != ER_FMT_I8 && A->b->format != ER_FMT_U8))
            return fail(A, ER_EINVAL, "mmai takes i8 or u8 operands, not %s and %s", er_format_name(A->a->format),
                        er_format_name(A->b->format));
        if (A->c && A->c->format != ER_FMT_I32) return fail(A, ER_EINVAL, "mmai: the accumulator c must be i32");
        if (A->d && A->d->format != ER_FMT_I32) return fail(A, ER_EINVAL, "mmai: the result d must be i32");
        if (A->lo || A->hi || A->odd || A->a_scale || A->b_scale)
            return fail(A, ER_EINVAL, "mmai: no enclosures or scales (its result is exact)");
    } else {
        if (A->c && er_fmt_get(A->c->format).kind != ER_KIND_FLOAT)
            return fail(A, ER_EINVAL, "c: %s is not a float format", er_format_name(A->c->format));
        if (A->d && er_fmt_get(A->d->format).kind != ER_KIND_FLOAT)
            return fail(A, ER_EINVAL, "d: %s is not a float format", er_format_name(A->d->format));
    }
    const er_tensor *outs[4] = {A->lo, A->hi, A->odd, NULL};
    for (int i = 0; i < 3; i++)
        if (outs[i] && outs[i]->format != ER_FMT_F64)
            return fail(A, ER_EINVAL, "enclosures are binary64: lo, hi and odd must be f64 tensors");

    P->m = tr(A->a);
    P->k = tc(A->a);
    P->n = tc(A->b);
    if (tr(A->b) != P->k)
        return fail(A, ER_EINVAL, "a is %lld x %lld but b is %lld x %lld: the inner dimensions differ",
                    (long long)P->m, (long long)P->k, (long long)tr(A->b), (long long)P->n);
    if (P->k > ((int64_t)1 << 24))
        return fail(A, ER_EINVAL, "k = %lld is above 2^24, the largest inner dimension the engine handles",
                    (long long)P->k);
    P->batch = 1;
    if (A->a->ndim == 3) P->batch = tb(A->a);
    if (A->b->ndim == 3) {
        if (A->a->ndim == 3 && tb(A->b) != P->batch)
            return fail(A, ER_EINVAL, "a has a batch of %lld and b of %lld", (long long)P->batch,
                        (long long)tb(A->b));
        P->batch = tb(A->b);
    }
    int batched = A->a->ndim == 3 || A->b->ndim == 3;
    const er_tensor *mn[5] = {A->c, A->d, A->lo, A->hi, A->odd};
    const char *mnn[5] = {"c", "d", "lo", "hi", "odd"};
    for (int i = 0; i < 5; i++) {
        const er_tensor *t = mn[i];
        if (!t) continue;
        if (tr(t) != P->m || tc(t) != P->n)
            return fail(A, ER_EINVAL, "%s is %lld x %lld; the product is %lld x %lld", mnn[i], (long long)tr(t),
                        (long long)tc(t), (long long)P->m, (long long)P->n);
        if (t->ndim == 3 && tb(t) != P->batch)
            return fail(A, ER_EINVAL, "%s has a batch of %lld; the product has %lld", mnn[i], (long long)tb(t),
                        (long long)P->batch);
        if (i > 0 && batched && t->ndim != 3)
            return fail(A, ER_EINVAL, "%s must be 3-D: the product is a batch", mnn[i]);
    }
    /* Block scales. */
    P->scaled = A->a_scale || A->b_scale;
    if (P->scaled) {
        if (!A->a_scale || !A->b_scale) return fail(A, ER_EINVAL, "block scaling needs both a_scale and b_scale");
        if ((st = check_tensor(A, A->a_scale, "a_scale")) || (st = check_tensor(A, A->b_scale, "b_scale"))) return st;
        if (A->block < 1) return fail(A, ER_EINVAL, "block scaling needs a block size of at least 1");
        if (!is_elem_fmt(A->a->format) || !is_elem_fmt(A->b->format))
            return fail(A, ER_EINVAL,
                        "block-scaled elements are f8E4M3FN, f8E5M2, f6E2M3FN, f6E3M2FN or f4E2M1FN, not %s and %s",
                        er_format_name(A->a->format), er_format_name(A->b->format));
        int sf = A->a_scale->format;
        if ((sf != ER_FMT_F8E8M0FNU && sf != ER_FMT_F8E4M3FN) || A->b_scale->format != sf)
            return fail(A, ER_EINVAL, "scales are both f8E8M0FNU or both f8E4M3FN, not %s and %s",
                        er_format_name(sf), er_format_name(A->b_scale->format));
        P->nblocks = (P->k + A->block - 1) / A->block;
        if (tr(A->a_scale) != P->m || tc(A->a_scale) != P->nblocks)
            return fail(A, ER_EINVAL, "a_scale is %lld x %lld; expected %lld x %lld (m x ceil(k/block))",
                        (long long)tr(A->a_scale), (long long)tc(A->a_scale), (long long)P->m, (long long)P->nblocks);
        if (tr(A->b_scale) != P->nblocks || tc(A->b_scale) != P->n)
            return fail(A, ER_EINVAL, "b_scale is %lld x %lld; expected %lld x %lld (ceil(k/block) x n)",
                        (long long)tr(A->b_scale), (long long)tc(A->b_scale), (long long)P->nblocks, (long long)P->n);
        if ((A->a_scale->ndim == 3 && tb(A->a_scale) != P->batch) || (A->b_scale->ndim == 3 && tb(A->b_scale) != P->batch))
            return fail(A, ER_EINVAL, "a scale's batch differs from the product's");
        P->sa = make_view(A->a_scale);
        P->sb = make_view(A->b_scale);
    }
    P->a = make_view(A->a);
    P->b = make_view(A->b);
    P->has_c = A->c != NULL;
    if (P->has_c) P->c = make_view(A->c);
    {
        const er_tensor *ts[5] = {A->a, A->b, A->c, A->a_scale, A->b_scale};
        const char *tn[5] = {"a", "b", "c", "a_scale", "b_scale"};
        for (int t = 0; t < 5; t++)
            if (ts[t] && (st = check_patterns(A, ts[t], tn[t])) != ER_OK) return st;
    }
    P->nthreads = er_cpu_threads(A->threads);

    if (!P->kind) {
        /* The accumulator's window: every term's least significant bit and its magnitude bound. */
        int la, ta, lb, tb_, lc = 0, tcc = 0;
        fmt_range(A->a->format, &la, &ta);
        fmt_range(A->b->format, &lb, &tb_);
        if (P->scaled) {
            int ls, ts;
            fmt_range(A->a_scale->format, &ls, &ts);
            la += ls; ta += ts; lb += ls; tb_ += ts;
        }
        int lsb = la + lb, top = ta + tb_;
        if (P->has_c) {
            fmt_range(A->c->format, &lc, &tcc);
            if (lc < lsb) lsb = lc;
            if (tcc > top) top = tcc;
        }
        if (!er_acc_window(lsb, top, P->k + 1, &P->acc_lo, &P->acc_nd))
            return fail(A, ER_EUNSUPPORTED, "internal: the accumulator window does not fit");
        /* The certified fast path: products exact in binary64 and far from its range limits. */
        er_fmt d_a = er_fmt_get(A->a->format), d_b = er_fmt_get(A->b->format);
        int pa = d_a.mbits + 1, pb = d_b.mbits + 1;
        if (P->scaled) {
            int ps = er_fmt_get(A->a_scale->format).mbits + 1;
            pa += ps;
            pb += ps;
        }
        P->fast = A->strategy == ER_STRATEGY_AUTO && !A->lo && !A->hi && !A->odd && A->d && pa + pb <= 53 &&
                  la >= -480 && lb >= -480 && lsb >= -960 && top + 26 <= 1000;
        P->use_s2 = 1;
    }
    return ER_OK;
}

/* ------------------------------------------------------------------------------------------------ */
/* The exact path: one element through the long accumulator                                          */

/* Accumulate element (b, i, j) exactly. */
static void exact_sum(const problem *P, int64_t b, int64_t i, int64_t j, const double *bcol, er_acc *acc)
{
    er_acc_init(acc, P->acc_lo, P->acc_nd);
    if (P->fast) {
        /* The binary64 copies hold the operands exactly and their products are exact (the fast path's
         * conditions): decode each product's pattern instead of both operands'. */
        /* bcol: column j of the binary64 copy of B, gathered contiguously by the caller */
        const double *ar = P->af + i * P->k;
        for (int64_t p = 0; p < P->k; p++) {
            double x = ar[p] * bcol[p];
            uint64_t bits = double_to_bits(x);
            uint32_t sign = (uint32_t)(bits >> 63), e = (uint32_t)(bits >> 52) & 0x7FFu;
            uint64_t f = bits & ((UINT64_C(1) << 52) - 1u);
            if (e == 0x7FFu || (e == 0 && f == 0) || x != x) {
                er_acc_add_product(acc, a_val(P, b, i, p), b_val(P, b, p, j)); /* zeros, inf, NaN */
                continue;
            }
            /* Strip the trailing zeros: the significand's lowest set bit is a bit of the exact
             * product, so its exponent is at least the window's lo (a 53-bit significand of a short
             * product would otherwise reach below the window). */
            uint64_t sig = e ? f | (UINT64_C(1) << 52) : f;
            int32_t ex = e ? (int32_t)e - 1075 : -1074;
            int tz = er_ctz64(sig);
            acc->nonzero = 1u;
            er_acc_add_digits(acc, sign, 0u, sig >> tz, ex + tz);
        }
    } else {
        for (int64_t p = 0; p < P->k; p++) er_acc_add_product(acc, a_val(P, b, i, p), b_val(P, b, p, j));
    }
    if (P->has_c) er_acc_add_val(acc, in_val(P, er_decode(P->c.fmt, load(&P->c, b, i, j))));
}

static void exact_element(const problem *P, int64_t b, int64_t i, int64_t j, const double *bcol, er_acc *acc,
                          er_acc *tmp)
{
    er_mma_args *A = P->args;
    exact_sum(P, b, i, j, bcol, acc);
    if (A->lo) {
        *tmp = *acc;
        store(A->lo, b, i, j, er_acc_round(tmp, ER_FMT_F64, ER_RND_NEGATIVE_INF, 0u).bits, 8);
    }
    if (A->hi) {
        *tmp = *acc;
        store(A->hi, b, i, j, er_acc_round(tmp, ER_FMT_F64, ER_RND_POSITIVE_INF, 0u).bits, 8);
    }
    if (A->odd) {
        *tmp = *acc;
        store(A->odd, b, i, j, er_acc_round(tmp, ER_FMT_F64, ER_RND_ODD, 0u).bits, 8);
    }
    if (A->d) {
        er_format_info fi;
        er_format_get_info(A->d->format, &fi);
        store(A->d, b, i, j, er_acc_round(acc, A->d->format, A->rounding, A->opts).bits, fi.storage_bytes);
    }
}

/* ------------------------------------------------------------------------------------------------ */
/* The certified fast path (docs/exact-engine.md, "Strategy 2")                                       */

/*
 * For rows [r0, r1) of batch b: S = A B (+ C) in binary64, where every product is exact (precisions
 * add up to at most 53 bits, exponents far inside the binary64 range) and so the only errors are the
 * k additions (k+1 with C): |S - exact| <= gamma * T with gamma = (k+1) u / (1 - (k+1) u), u = 2^-53,
 * and T >= sum of |terms|, for every order of addition, with or without fused multiply-add.
 * T is bounded from row and column norms (Cauchy-Schwarz and Hoelder), computed in binary64 and
 * inflated to cover their own rounding.  The element is decided when the two ends of the enclosure
 * [S - E, S + E], each moved one binary64 step outward, round to the same pattern: rounding is
 * monotone, so the exact value rounds to that pattern too.  Undecided elements return 0.
 */
static int fast_rows(problem *P, int64_t b, int64_t r0, int64_t r1, double *s, unsigned char *decided)
{
    er_mma_args *A = P->args;
    int64_t n = P->n, k = P->k;
    const double u = 0x1p-53;
    double kk = (double)(k + (P->has_c ? 1 : 0) + 1);
    /* gamma, rounded up generously: (kk u)(1 + 2^-20) >= kk u / (1 - kk u) for kk <= 2^25 */
    double gamma = kk * u * (1.0 + 0x1p-20);
    /* inflation of the computed norms and products: relative errors of at most (4k+32) 2^-52 */
    double infl = 1.0 + (4.0 * (double)k + 64.0) * 0x1p-52;
    er_format_info fi;
    int to = A->d->format, dir = A->rounding;
    unsigned opts = A->opts;
    er_format_get_info(to, &fi);
    if (er_cpu_gemm_rows(P->af, k, P->bf, n, s, n, r0, r1, n, k) != 0) return -1;
    for (int64_t i = r0; i < r1; i++) {
        for (int64_t j = 0; j < n; j++) {
            double si = s[i * n + j];
            double cval = 0.0;
            decided[i * n + j] = 0;
            if (P->has_c) {
                cval = bits_to_double(er_convert(P->c.fmt, ER_FMT_F64, load(&P->c, b, i, j), ER_RND_NEAREST_EVEN,
                                                 A->opts & ER_OPT_FTZ_IN).bits);
                si = si + cval;
            }
            if (!isfinite(si)) continue;
            if (P->exact64) {
                /* every partial sum is an integer below 2^53: exact in any order (docs/interval.md);
                 * a zero sum takes its sign from the terms, which only the accumulator tracks */
                if (si != 0) {
                    store(A->d, b, i, j, convert_from_f64(to, double_to_bits(si), dir, opts).bits, fi.storage_bytes);
                    decided[i * n + j] = 1;
                }
                continue;
            }
            double t1 = P->a_s1[i] * P->b_mx[j], t2 = P->a_mx[i] * P->b_s1[j], t = t1 < t2 ? t1 : t2;
            double t3 = sqrt(P->a_s2[i] * P->b_s2[j]);
            if (t3 < t) t = t3;
            t = (t + fabs(cval)) * infl;
            double e = gamma * t * (1.0 + 0x1p-50) + 0x1p-1070;
            double lo = step_down(si - e), hi = step_up(si + e);
            if (!isfinite(lo) || !isfinite(hi)) continue;
            er_res rl = convert_from_f64(to, double_to_bits(lo), dir, opts);
            er_res rh = convert_from_f64(to, double_to_bits(hi), dir, opts);
            /* NaN's preimage need not be an interval (FNUZ formats: both overflows; f8E8M0FNU: every
             * negative value), so a NaN at both ends decides nothing */
            if (rl.bits == rh.bits && !(rl.flags & ER_FLAG_INVALID) && er_decode(to, rl.bits).cls != ER_CLASS_NAN) {
                store(A->d, b, i, j, rl.bits, fi.storage_bytes);
                decided[i * n + j] = 1;
            }
        }
    }
    return 0;
}

/* Binary64 copies of batch b's operands (scales applied, exactly) and their norms, for rows
 * [r0, r1) of A and rows [q0, q1) of B; the column norms of B are summed per thread into cs. */
static void fast_prepare_part(problem *P, int64_t b, int64_t r0, int64_t r1, int64_t q0, int64_t q1, double *cs)
{
    int64_t n = P->n, k = P->k;
    int contiguous_a = !P->scaled && P->a.s1 == 1 && P->a.s0 == k;
    int contiguous_b = !P->scaled && P->b.s1 == 1 && P->b.s0 == n;
    for (int64_t i = r0; i < r1; i++) {
        double *row = P->af + i * k;
        double s1 = 0, mx = 0, s2 = 0;
        if (contiguous_a) {
            er_convert_array(P->a.fmt, ER_FMT_F64, P->a.data + (size_t)(b * P->a.sb + i * k) * (size_t)P->a.bytes, row,
                             (size_t)k, ER_RND_NEAREST_EVEN, P->args->opts & ER_OPT_FTZ_IN, NULL, NULL);
        } else {
            for (int64_t p = 0; p < k; p++) row[p] = val_to_double(a_val(P, b, i, p));
        }
        for (int64_t p = 0; p < k; p++) {
            double ax = fabs(row[p]);
            s1 += ax;
            s2 += ax * ax;
            if (ax > mx) mx = ax;
        }
        P->a_s1[i] = s1; P->a_mx[i] = mx; P->a_s2[i] = s2;
    }
    double *c1 = cs, *cm = cs + n, *c2 = cs + 2 * n;
    for (int64_t j = 0; j < n; j++) { c1[j] = 0; cm[j] = 0; c2[j] = 0; }
    for (int64_t p = q0; p < q1; p++) {
        double *row = P->bf + p * n;
        if (contiguous_b) {
            er_convert_array(P->b.fmt, ER_FMT_F64, P->b.data + (size_t)(b * P->b.sb + p * n) * (size_t)P->b.bytes, row,
                             (size_t)n, ER_RND_NEAREST_EVEN, P->args->opts & ER_OPT_FTZ_IN, NULL, NULL);
        } else {
            for (int64_t j = 0; j < n; j++) row[j] = val_to_double(b_val(P, b, p, j));
        }
        for (int64_t j = 0; j < n; j++) {
            double ax = fabs(row[j]);
            c1[j] += ax;
            c2[j] += ax * ax;
            if (ax > cm[j]) cm[j] = ax;
        }
    }
}

/* ------------------------------------------------------------------------------------------------ */
/* mmai                                                                                               */

static void mmai_element(problem *P, int64_t b, int64_t i, int64_t j, int64_t *wrapped)
{
    int64_t s = 0;
    for (int64_t p = 0; p < P->k; p++) {
        er_val x = er_decode(P->a.fmt, load(&P->a, b, i, p)), y = er_decode(P->b.fmt, load(&P->b, b, p, j));
        int64_t xv = x.sign ? -(int64_t)x.sig : (int64_t)x.sig, yv = y.sign ? -(int64_t)y.sig : (int64_t)y.sig;
        s += xv * yv; /* |s| < 2^24 * 2^16: exact in 64 bits */
    }
    if (P->has_c) {
        er_val c = er_decode(P->c.fmt, load(&P->c, b, i, j));
        s += c.sign ? -(int64_t)c.sig : (int64_t)c.sig;
    }
    if (s < INT32_MIN || s > INT32_MAX) (*wrapped)++;
    if (P->args->d) store(P->args->d, b, i, j, (uint64_t)s & 0xFFFFFFFFu, 4);
}

/* ------------------------------------------------------------------------------------------------ */
/* Workers: thread t owns a fixed range of rows of every batch, so results never depend on threads.  */

typedef struct {
    problem *P;
    int phase; /* 0: prepare the fast path's copies, 1: compute */
    int64_t b, r0, r1, q0, q1;
    double *s, *cs;
    unsigned char *decided;
    int64_t fast_decided, exact_f64, exact_path, wrapped;
    int failed;
} work;

static int cmp_i64(const void *x, const void *y)
{
    int64_t a = *(const int64_t *)x, b = *(const int64_t *)y;
    return (a > b) - (a < b);
}

static void *worker(void *arg)
{
    work *w = (work *)arg;
    problem *P = w->P;
    er_acc *acc = NULL, *tmp = NULL;
    double *col = NULL;
    if (w->phase == 0) {
        fast_prepare_part(P, w->b, w->r0, w->r1, w->q0, w->q1, w->cs);
        return NULL;
    }
    if (P->kind) {
        for (int64_t i = w->r0; i < w->r1; i++)
            for (int64_t j = 0; j < P->n; j++) mmai_element(P, w->b, i, j, &w->wrapped);
        return NULL;
    }
    acc = (er_acc *)malloc(sizeof *acc);
    tmp = (er_acc *)malloc(sizeof *tmp);
    if (P->fast) col = (double *)malloc(sizeof(double) * (size_t)(P->k ? P->k : 1));
    if (!acc || !tmp || (P->fast && !col) ||
        (P->fast && w->r1 > w->r0 && fast_rows(P, w->b, w->r0, w->r1, w->s, w->decided) != 0)) {
        w->failed = 1;
        free(acc);
        free(tmp);
        free(col);
        return NULL;
    }
    if (!P->fast) {
        for (int64_t i = w->r0; i < w->r1; i++)
            for (int64_t j = 0; j < P->n; j++) {
                exact_element(P, w->b, i, j, NULL, acc, tmp);
                w->exact_path++;
            }
    } else {
        /* The undecided elements (a row-major scan), sorted by column: column j of B is gathered
         * once for all of them, so the accumulator reads both operands contiguously. */
        int64_t cap = 0, cnt = 0;
        int64_t *list = NULL;
        for (int64_t i = w->r0; i < w->r1; i++)
            for (int64_t j = 0; j < P->n; j++) {
                if (w->decided[i * P->n + j]) continue;
                if (cnt == cap) {
                    int64_t *nl = (int64_t *)realloc(list, sizeof *list * (size_t)(cap = cap ? 2 * cap : 256));
                    if (!nl) {
                        w->failed = 1;
                        free(list);
                        free(acc);
                        free(tmp);
                        free(col);
                        return NULL;
                    }
                    list = nl;
                }
                list[cnt++] = j * P->m + i; /* column-major key: sorting groups columns */
            }
        if (cnt) qsort(list, (size_t)cnt, sizeof *list, cmp_i64);
        if (P->exact64) w->exact_f64 += (w->r1 - w->r0) * P->n - cnt;
        else w->fast_decided += (w->r1 - w->r0) * P->n - cnt;
        for (int64_t t = 0; t < cnt; t++) {
            int64_t j = list[t] / P->m, i = list[t] % P->m;
            if (t == 0 || list[t - 1] / P->m != j)
                for (int64_t p = 0; p < P->k; p++) col[p] = P->bf[p * P->n + j];
            exact_element(P, w->b, i, j, col, acc, tmp);
            w->exact_path++;
        }
        free(list);
    }
    free(acc);
    free(tmp);
    free(col);
    return NULL;
}

/* Run phase `phase` of batch b on T threads (thread 0 is the caller); a thread that cannot be
 * started has its share run here: the same work, the same bits. */
static void run_phase(work *ws, pthread_t *th, unsigned char *started, int T, int phase)
{
    for (int t = 0; t < T; t++) {
        ws[t].phase = phase;
        started[t] = 0;
        if (t > 0 && pthread_create(&th[t], NULL, worker, &ws[t]) == 0) started[t] = 1;
    }
    for (int t = 1; t < T; t++)
        if (!started[t]) worker(&ws[t]);
    worker(&ws[0]);
    for (int t = 1; t < T; t++)
        if (started[t]) pthread_join(th[t], NULL);
}

int er_mma(er_mma_args *args)
{
    problem P;
    int st;
    double *s = NULL, *cs = NULL;
    unsigned char *decided = NULL;
    work *ws = NULL;
    pthread_t *th = NULL;
    unsigned char *started = NULL;
    if (!args) return ER_EINVAL;
    if (args->msg && args->msg_size) args->msg[0] = 0;
    memset(&P, 0, sizeof P);
    P.args = args;
    if ((st = er_engine_validate(&P)) != ER_OK) return st;
    if (args->backend == ER_BACKEND_OPENCL || args->backend == ER_BACKEND_CUDA) {
        st = args->backend == ER_BACKEND_OPENCL ? er_opencl_mma(args) : er_cuda_mma(args);
        if (st == ER_OK && args->stats) {
            args->stats->backend = args->backend;
            args->stats->note[0] = '\0';
        }
        return st;
    }
    if (args->backend == ER_BACKEND_AUTO) {
        /* a device where er_backend_auto says so; if it fails, the CPU below (the same bits) */
        char why[256], dmsg[512];
        int64_t macs = P.batch * P.m * P.n * P.k;
        int be = er_backend_auto(macs, args->device, why, sizeof why);
        if (be == ER_BACKEND_CPU && ER_HAVE_CUDA && macs >= ER_AUTO_DEVICE_MACS && !getenv("EXACTREF_BACKEND"))
            /* a build with the CUDA backend on a machine without a usable device: say so, once per call */
            snprintf(P.note, sizeof P.note, "no device used: %.230s", why);
        if (be != ER_BACKEND_CPU) {
            er_mma_args a2 = *args;
            a2.backend = be;
            a2.msg = dmsg;
            a2.msg_size = sizeof dmsg;
            dmsg[0] = '\0';
            if (be == ER_BACKEND_OPENCL && a2.device < 0) a2.device = er_backend_auto_opencl_device_();
            st = be == ER_BACKEND_OPENCL ? er_opencl_mma(&a2) : er_cuda_mma(&a2);
            if (st == ER_OK) {
                if (args->stats) {
                    args->stats->backend = be;
                    args->stats->note[0] = '\0';
                }
                return ER_OK;
            }
            if (st == ER_EINVAL) { /* the caller's mistake (a device index): said as such */
                if (args->msg && args->msg_size) snprintf(args->msg, args->msg_size, "%s", dmsg);
                return st;
            }
            snprintf(P.note, sizeof P.note, "the %s backend failed (%s); computed on the CPU instead (the same bits)",
                     be == ER_BACKEND_OPENCL ? "OpenCL" : "CUDA", dmsg[0] ? dmsg : er_status_string(st));
            st = ER_OK;
        }
    }
    if (P.m == 0 || P.n == 0 || P.batch == 0) goto done;

    if (P.fast) {
        size_t mk = (size_t)(P.m * P.k), kn = (size_t)(P.k * P.n), mn = (size_t)(P.m * P.n);
        P.af = (double *)malloc(sizeof(double) * (mk ? mk : 1));
        P.bf = (double *)malloc(sizeof(double) * (kn ? kn : 1));
        P.a_s1 = (double *)malloc(sizeof(double) * 3 * (size_t)P.m);
        P.b_s1 = (double *)malloc(sizeof(double) * 3 * (size_t)P.n);
        s = (double *)malloc(sizeof(double) * mn);
        decided = (unsigned char *)malloc(mn);
        if (!P.af || !P.bf || !P.a_s1 || !P.b_s1 || !s || !decided) {
            /* Not enough memory for the binary64 copies: the exact path alone needs none. */
            free(P.af); free(P.bf); free(P.a_s1); free(P.b_s1); free(s); free(decided);
            P.af = P.bf = P.a_s1 = P.b_s1 = s = NULL;
            decided = NULL;
            P.fast = 0;
        }
    }
    if (P.fast && !P.scaled) {
        /* Whole-tensor summaries (issue 7): integral operands whose products and sums stay below
         * 2^53 make binary64 accumulation exact in any order, with no bound needed. */
        er_interval ia, ib, ic;
        if (er_interval_of_tensor(args->a, &ia) == ER_OK && er_interval_of_tensor(args->b, &ib) == ER_OK &&
            ia.integral && ib.integral && !er_interval_is_top(ia) && !er_interval_is_top(ib) && ia.lo <= ia.hi &&
            ib.lo <= ib.hi) {
            double ma = fmax(fabs(ia.lo), fabs(ia.hi)), mb = fmax(fabs(ib.lo), fabs(ib.hi)), mc = 0;
            int cok = 1;
            if (P.has_c) {
                cok = er_interval_of_tensor(args->c, &ic) == ER_OK && ic.integral && !er_interval_is_top(ic) &&
                      ic.lo <= ic.hi;
                if (cok) mc = fmax(fabs(ic.lo), fabs(ic.hi));
            }
            /* (k ma mb + mc)(1 + 2^-40) < 2^53 bounds every partial sum, with room for its roundings */
            if (cok && ((double)P.k * ma * mb + mc) * (1.0 + 0x1p-40) < 0x1p53) P.exact64 = 1;
        }
    }
    if (P.fast) {
        P.a_mx = P.a_s1 + P.m;
        P.a_s2 = P.a_s1 + 2 * P.m;
        P.b_mx = P.b_s1 + P.n;
        P.b_s2 = P.b_s1 + 2 * P.n;
    }
    int T = P.nthreads;
    if (T > P.m) T = (int)P.m;
    if (T < 1) T = 1;
    ws = (work *)calloc((size_t)T, sizeof *ws);
    th = (pthread_t *)calloc((size_t)T, sizeof *th);
    started = (unsigned char *)calloc((size_t)T, 1);
    if (P.fast) cs = (double *)malloc(sizeof(double) * 3 * (size_t)P.n * (size_t)T);
    if (!ws || !th || !started || (P.fast && !cs)) {
        st = fail(args, ER_ENOMEM, "out of memory for %d threads", T);
        goto done;
    }
    for (int64_t b = 0; b < P.batch; b++) {
        for (int t = 0; t < T; t++) {
            ws[t].P = &P;
            ws[t].b = b;
            ws[t].r0 = P.m * t / T;
            ws[t].r1 = P.m * (t + 1) / T;
            ws[t].q0 = P.k * t / T;
            ws[t].q1 = P.k * (t + 1) / T;
            ws[t].s = s;
            ws[t].cs = cs ? cs + (size_t)t * 3 * (size_t)P.n : NULL;
            ws[t].decided = decided;
        }
        if (P.fast) {
            run_phase(ws, th, started, T, 0);
            /* column norms of B: the threads' partial sums and maxima (any order: see the proof) */
            for (int64_t j = 0; j < P.n; j++) {
                double s1 = 0, mx = 0, s2 = 0;
                for (int t = 0; t < T; t++) {
                    const double *c = ws[t].cs;
                    s1 += c[j];
                    if (c[P.n + j] > mx) mx = c[P.n + j];
                    s2 += c[2 * P.n + j];
                }
                P.b_s1[j] = s1;
                P.b_mx[j] = mx;
                P.b_s2[j] = s2;
            }
        }
        run_phase(ws, th, started, T, 1);
        for (int t = 0; t < T; t++) {
            P.fast_decided += ws[t].fast_decided;
            P.exact_f64 += ws[t].exact_f64;
            ws[t].exact_f64 = 0;
            P.exact_path += ws[t].exact_path;
            P.wrapped += ws[t].wrapped;
            P.failed |= ws[t].failed;
            ws[t].fast_decided = ws[t].exact_path = ws[t].wrapped = 0;
            ws[t].failed = 0;
        }
        if (P.failed) {
            st = fail(args, ER_ENOMEM, "out of memory in a worker thread");
            goto done;
        }
    }
done:
    if (args->stats) {
        args->stats->elements = P.batch * P.m * P.n;
        args->stats->fast_decided = P.fast_decided;
        args->stats->exact_f64 = P.exact_f64;
        args->stats->exact_path = P.exact_path;
        args->stats->wrapped = P.wrapped;
        args->stats->threads = P.nthreads;
        args->stats->backend = ER_BACKEND_CPU;
        snprintf(args->stats->note, sizeof args->stats->note, "%s", P.note);
    }
    free(P.af);
    free(P.bf);
    free(P.a_s1);
    free(P.b_s1);
    free(s);
    free(decided);
    free(ws);
    free(th);
    free(started);
    free(cs);
    return st;
}
