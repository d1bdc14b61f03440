/* validate.c: the front door's validation of an mma's arguments, once, into the er_problem every
 * backend takes as const (er_problem_validate, declared in er_validate.h). */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <string.h>

#include "../cpu/cpu_internal.h"
#include "er_validate.h"
#include "host/er_msg.h"
#include "host/er_problem.h"

/* ------------------------------------------------------------------------------------------------ */
/* The problem, validated                                                                            */

static int fmt_ok(int f) { return f >= 0 && f < ER_FMT_COUNT; }

static int check_tensor(er_problem *P, const er_tensor *t, const char *name)
{
    if (!fmt_ok(t->format)) return er_msgf(P->msg, P->msg_size, ER_EINVAL, "%s: unknown format id %d", name, t->format);
    if (t->ndim != 2 && t->ndim != 3)
        return er_msgf(P->msg, P->msg_size, ER_EINVAL, "%s: %d dimensions; 2 (a matrix) or 3 (a batch of matrices) expected",
                    name, t->ndim);
    for (int i = 0; i < t->ndim; i++) {
        if (t->shape[i] < 0 || t->strides[i] < 0)
            return er_msgf(P->msg, P->msg_size, ER_EINVAL, "%s: negative shape or stride in dimension %d", name, i);
    }
    if (!t->data) {
        int64_t elems = 1;
        for (int i = 0; i < t->ndim; i++) elems *= t->shape[i];
        if (elems) return er_msgf(P->msg, P->msg_size, ER_EINVAL, "%s: no data", name);
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
static int check_patterns(er_problem *P, const er_tensor *t, const char *name)
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
                    return er_msgf(P->msg, P->msg_size, ER_EPATTERN, "%s: element %s = 0x%llx is not a %s pattern (%s)", name, idx,
                                (unsigned long long)x, fi.name,
                                d.pad ? "its low padding bits must be zero" : "bits set above its width");
                }
            }
    return ER_OK;
}

int er_problem_validate(er_problem *P, const er_mma_args *A, er_tensor *d, er_tensor *lo, er_tensor *hi,
                        er_tensor *odd, char *msg, size_t msg_size)
{
    int st;
    memset(P, 0, sizeof *P);
    P->args = A;
    P->d = d;
    P->lo = lo;
    P->hi = hi;
    P->odd = odd;
    P->msg = msg;
    P->msg_size = msg_size;
    P->stats = A->stats;
    P->device = A->device;
    if (!A->a || !A->b) return er_msgf(P->msg, P->msg_size, ER_EINVAL, "the operands a and b are required");
    if ((st = check_tensor(P, A->a, "a")) || (st = check_tensor(P, A->b, "b"))) return st;
    if (A->c && (st = check_tensor(P, A->c, "c"))) return st;
    if (P->d && (st = check_tensor(P, P->d, "d"))) return st;
    if (P->lo && (st = check_tensor(P, P->lo, "lo"))) return st;
    if (P->hi && (st = check_tensor(P, P->hi, "hi"))) return st;
    if (P->odd && (st = check_tensor(P, P->odd, "odd"))) return st;
    if (!P->d && !P->lo && !P->hi && !P->odd) return er_msgf(P->msg, P->msg_size, ER_EINVAL, "no output: give d or an enclosure");
    if (A->rounding < 0 || A->rounding >= ER_RND_COUNT)
        return er_msgf(P->msg, P->msg_size, ER_EINVAL, "unknown rounding direction %d", A->rounding);
    if (A->opts & ~(unsigned)(ER_OPT_SATURATE | ER_OPT_FTZ))
        return er_msgf(P->msg, P->msg_size, ER_EINVAL, "unknown option bits 0x%x (ER_OPT_SATURATE, ER_OPT_FTZ_IN, ER_OPT_FTZ_OUT)", A->opts);
    if (A->strategy != ER_STRATEGY_AUTO && A->strategy != ER_STRATEGY_EXACT)
        return er_msgf(P->msg, P->msg_size, ER_EINVAL, "unknown strategy %d", A->strategy);

    er_fmt fa = er_fmt_get(A->a->format), fb = er_fmt_get(A->b->format);
    int aint = fa.kind != ER_KIND_FLOAT, bint = fb.kind != ER_KIND_FLOAT;
    if (aint != bint)
        return er_msgf(P->msg, P->msg_size, ER_EINVAL, "a is %s and b is %s: both float formats (mma) or both i8/u8 (mmai)",
                    er_format_name(A->a->format), er_format_name(A->b->format));
    P->kind = aint;
    if (aint) {
        if ((A->a->format != ER_FMT_I8 && A->a->format != ER_FMT_U8) ||
            (A->b->format != ER_FMT_I8 && A->b->format != ER_FMT_U8))
            return er_msgf(P->msg, P->msg_size, ER_EINVAL, "mmai takes i8 or u8 operands, not %s and %s", er_format_name(A->a->format),
                        er_format_name(A->b->format));
        if (A->c && A->c->format != ER_FMT_I32) return er_msgf(P->msg, P->msg_size, ER_EINVAL, "mmai: the accumulator c must be i32");
        if (P->d && P->d->format != ER_FMT_I32) return er_msgf(P->msg, P->msg_size, ER_EINVAL, "mmai: the result d must be i32");
        if (P->lo || P->hi || P->odd || A->a_scale || A->b_scale)
            return er_msgf(P->msg, P->msg_size, ER_EINVAL, "mmai: no enclosures or scales (its result is exact)");
    } else {
        if (A->c && er_fmt_get(A->c->format).kind != ER_KIND_FLOAT)
            return er_msgf(P->msg, P->msg_size, ER_EINVAL, "c: %s is not a float format", er_format_name(A->c->format));
        if (P->d && er_fmt_get(P->d->format).kind != ER_KIND_FLOAT)
            return er_msgf(P->msg, P->msg_size, ER_EINVAL, "d: %s is not a float format", er_format_name(P->d->format));
    }
    const er_tensor *outs[4] = {P->lo, P->hi, P->odd, NULL};
    for (int i = 0; i < 3; i++)
        if (outs[i] && outs[i]->format != ER_FMT_F64)
            return er_msgf(P->msg, P->msg_size, ER_EINVAL, "enclosures are binary64: lo, hi and odd must be f64 tensors");

    P->m = er_tensor_nr(A->a);
    P->k = er_tensor_nc(A->a);
    P->n = er_tensor_nc(A->b);
    if (er_tensor_nr(A->b) != P->k)
        return er_msgf(P->msg, P->msg_size, ER_EINVAL, "a is %lld x %lld but b is %lld x %lld: the inner dimensions differ",
                    (long long)P->m, (long long)P->k, (long long)er_tensor_nr(A->b), (long long)P->n);
    if (P->k > ((int64_t)1 << 24))
        return er_msgf(P->msg, P->msg_size, ER_EINVAL, "k = %lld is above 2^24, the largest inner dimension the engine handles",
                    (long long)P->k);
    P->batch = 1;
    if (A->a->ndim == 3) P->batch = er_tensor_nb(A->a);
    if (A->b->ndim == 3) {
        if (A->a->ndim == 3 && er_tensor_nb(A->b) != P->batch)
            return er_msgf(P->msg, P->msg_size, ER_EINVAL, "a has a batch of %lld and b of %lld", (long long)P->batch,
                        (long long)er_tensor_nb(A->b));
        P->batch = er_tensor_nb(A->b);
    }
    int batched = A->a->ndim == 3 || A->b->ndim == 3;
    const er_tensor *mn[5] = {A->c, P->d, P->lo, P->hi, P->odd};
    const char *mnn[5] = {"c", "d", "lo", "hi", "odd"};
    for (int i = 0; i < 5; i++) {
        const er_tensor *t = mn[i];
        if (!t) continue;
        if (er_tensor_nr(t) != P->m || er_tensor_nc(t) != P->n)
            return er_msgf(P->msg, P->msg_size, ER_EINVAL, "%s is %lld x %lld; the product is %lld x %lld", mnn[i], (long long)er_tensor_nr(t),
                        (long long)er_tensor_nc(t), (long long)P->m, (long long)P->n);
        if (t->ndim == 3 && er_tensor_nb(t) != P->batch)
            return er_msgf(P->msg, P->msg_size, ER_EINVAL, "%s has a batch of %lld; the product has %lld", mnn[i], (long long)er_tensor_nb(t),
                        (long long)P->batch);
        if (i > 0 && batched && t->ndim != 3)
            return er_msgf(P->msg, P->msg_size, ER_EINVAL, "%s must be 3-D: the product is a batch", mnn[i]);
    }
    /* Block scales. */
    P->scaled = A->a_scale || A->b_scale;
    if (P->scaled) {
        if (!A->a_scale || !A->b_scale) return er_msgf(P->msg, P->msg_size, ER_EINVAL, "block scaling needs both a_scale and b_scale");
        if ((st = check_tensor(P, A->a_scale, "a_scale")) || (st = check_tensor(P, A->b_scale, "b_scale"))) return st;
        if (A->block < 1) return er_msgf(P->msg, P->msg_size, ER_EINVAL, "block scaling needs a block size of at least 1");
        if (!is_elem_fmt(A->a->format) || !is_elem_fmt(A->b->format))
            return er_msgf(P->msg, P->msg_size, ER_EINVAL,
                        "block-scaled elements are f8E4M3FN, f8E5M2, f6E2M3FN, f6E3M2FN or f4E2M1FN, not %s and %s",
                        er_format_name(A->a->format), er_format_name(A->b->format));
        int sf = A->a_scale->format;
        if ((sf != ER_FMT_F8E8M0FNU && sf != ER_FMT_F8E4M3FN && sf != ER_FMT_F8E5M3FNU) || A->b_scale->format != sf)
            return er_msgf(P->msg, P->msg_size, ER_EINVAL,
                        "scales are both f8E8M0FNU, both f8E4M3FN or both f8E5M3FNU, not %s and %s",
                        er_format_name(sf), er_format_name(A->b_scale->format));
        /* UE5M3 scales only FP4 (Tile IR 13.4: the FP4 block-scaled mma) */
        if (sf == ER_FMT_F8E5M3FNU && (A->a->format != ER_FMT_F4E2M1FN || A->b->format != ER_FMT_F4E2M1FN))
            return er_msgf(P->msg, P->msg_size, ER_EINVAL, "f8E5M3FNU scales take f4E2M1FN elements, not %s and %s",
                        er_format_name(A->a->format), er_format_name(A->b->format));
        P->nblocks = (P->k + A->block - 1) / A->block;
        if (er_tensor_nr(A->a_scale) != P->m || er_tensor_nc(A->a_scale) != P->nblocks)
            return er_msgf(P->msg, P->msg_size, ER_EINVAL, "a_scale is %lld x %lld; expected %lld x %lld (m x ceil(k/block))",
                        (long long)er_tensor_nr(A->a_scale), (long long)er_tensor_nc(A->a_scale), (long long)P->m, (long long)P->nblocks);
        if (er_tensor_nr(A->b_scale) != P->nblocks || er_tensor_nc(A->b_scale) != P->n)
            return er_msgf(P->msg, P->msg_size, ER_EINVAL, "b_scale is %lld x %lld; expected %lld x %lld (ceil(k/block) x n)",
                        (long long)er_tensor_nr(A->b_scale), (long long)er_tensor_nc(A->b_scale), (long long)P->nblocks, (long long)P->n);
        if ((A->a_scale->ndim == 3 && er_tensor_nb(A->a_scale) != P->batch) || (A->b_scale->ndim == 3 && er_tensor_nb(A->b_scale) != P->batch))
            return er_msgf(P->msg, P->msg_size, ER_EINVAL, "a scale's batch differs from the product's");
        P->sa = er_view_of(A->a_scale);
        P->sb = er_view_of(A->b_scale);
    }
    P->a = er_view_of(A->a);
    P->b = er_view_of(A->b);
    P->has_c = A->c != NULL;
    if (P->has_c) P->c = er_view_of(A->c);
    {
        const er_tensor *ts[5] = {A->a, A->b, A->c, A->a_scale, A->b_scale};
        const char *tn[5] = {"a", "b", "c", "a_scale", "b_scale"};
        for (int t = 0; t < 5; t++)
            if (ts[t] && (st = check_patterns(P, ts[t], tn[t])) != ER_OK) return st;
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
            return er_msgf(P->msg, P->msg_size, ER_EUNSUPPORTED, "internal: the accumulator window does not fit");
        /* The certified fast path: products exact in binary64 and far from its range limits. */
        er_fmt d_a = er_fmt_get(A->a->format), d_b = er_fmt_get(A->b->format);
        int pa = d_a.mbits + 1, pb = d_b.mbits + 1;
        if (P->scaled) {
            int ps = er_fmt_get(A->a_scale->format).mbits + 1;
            pa += ps;
            pb += ps;
        }
        P->fast = A->strategy == ER_STRATEGY_AUTO && !P->lo && !P->hi && !P->odd && P->d && pa + pb <= 53 &&
                  la >= -480 && lb >= -480 && lsb >= -960 && top + 26 <= 1000;
    }
    return ER_OK;
}
