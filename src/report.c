/* report.c: the scoring of a check, computed once here and printed by every front end. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exactref/exactref.h"
#include "exactref/report.h"

static const char *const bin_names[ER_REPORT_BINS] = {"0 (exact)",   "(0, 1/64]", "(1/64, 1/16]",
                                                      "(1/16, 1/4]", "(1/4, 1/2]", "(1/2, 1]",
                                                      "inf/NaN allowed", "outside"};

const char *er_check_report_bin_name(int bin)
{
    return bin >= 0 && bin < ER_REPORT_BINS ? bin_names[bin] : NULL;
}

static er_status fail(char *msg, size_t size, er_status st, const char *fmt, ...)
{
    va_list ap;
    if (msg && size) {
        va_start(ap, fmt);
        vsnprintf(msg, size, fmt, ap);
        va_end(ap);
    }
    return st;
}

void er_check_report_index(const er_check_report *rep, int64_t flat, int64_t idx[3])
{
    int64_t m = rep->shape[rep->ndim - 2], n = rep->shape[rep->ndim - 1];
    idx[0] = (m && n) ? flat / (m * n) : 0;
    idx[1] = n ? (flat / n) % (m ? m : 1) : 0;
    idx[2] = n ? flat % n : 0;
}

/* The element at flat row-major index e of a 2-D or 3-D tensor, through its strides. */
static uint64_t element(const er_tensor *t, int64_t e, int sb)
{
    int64_t m = t->shape[t->ndim - 2], n = t->shape[t->ndim - 1];
    int64_t b = e / (m * n), i = (e / n) % m, j = e % n;
    int64_t off = (t->ndim == 3 ? b * t->strides[0] : 0) + i * t->strides[t->ndim - 2] + j * t->strides[t->ndim - 1];
    uint64_t x = 0;
    const unsigned char *p = (const unsigned char *)t->data + (size_t)off * (size_t)sb;
    for (int k = sb - 1; k >= 0; k--) x = x << 8 | p[k];
    return x;
}

/* The value of a pattern: floats as doubles, integers sign- or zero-extended. */
static double value_of(int fmt, const er_format_info *fi, uint64_t bits)
{
    double v = 0;
    if (fi->kind == ER_KIND_FLOAT) {
        er_from_bits(fmt, bits, &v);
        return v;
    }
    if (fi->kind == ER_KIND_SINT) {
        int w = fi->width;
        int64_t s = w >= 64 ? (int64_t)bits
                            : (int64_t)((bits & ((UINT64_C(1) << w) - 1u)) ^ (UINT64_C(1) << (w - 1))) -
                                  (INT64_C(1) << (w - 1));
        return (double)s;
    }
    return (double)bits;
}

/* A signed ordinal of a float pattern: consecutive values of the format have consecutive ordinals. */
static int64_t ordinal(int fmt, uint64_t bits)
{
    er_fmt d = er_fmt_get(fmt);
    uint64_t mag = (bits >> d.pad) & ((d.ebits + d.mbits >= 64) ? ~0ull : ((1ull << (d.ebits + d.mbits)) - 1u));
    int neg = er_fmt_signed(d) && ((bits >> (d.width - 1)) & 1u);
    return neg ? -(int64_t)mag : (int64_t)mag;
}

static int all_tiny(const er_tensor *t)
{
    er_format_info ti;
    if (er_format_get_info(t->format, &ti) != ER_OK) return 0;
    int64_t cnt = 1;
    for (int d = 0; d < t->ndim; d++) cnt *= t->shape[d];
    for (int64_t x = 0; x < cnt; x++) {
        er_val v = er_decode(t->format, element(t, x, ti.storage_bytes));
        if (v.cls == ER_CLASS_NORMAL || v.cls == ER_CLASS_INF || v.cls == ER_CLASS_NAN) return 0;
    }
    return 1;
}

/* Whether every element of the output is exactly a value of format f (and finite). */
static int all_in(const er_tensor *out, int sb, int64_t count, int f)
{
    for (int64_t e = 0; e < count; e++) {
        uint64_t x = element(out, e, sb), y;
        unsigned flags = 0;
        er_val v = er_decode(out->format, x);
        if (v.cls == ER_CLASS_INF || v.cls == ER_CLASS_NAN) return 0;
        if (er_convert_bits(out->format, f, x, ER_RND_NEAREST_EVEN, 0u, &y, &flags) != ER_OK) return 0;
        if (flags & (ER_FLAG_INEXACT | ER_FLAG_OVERFLOW | ER_FLAG_INVALID | ER_FLAG_UNDERFLOW)) return 0;
    }
    return 1;
}

er_status er_check_report_compute(er_result *r, const er_tol_opts *o, const er_tensor *output, const er_tensor *a,
                                  const er_tensor *b, int64_t *outside_index, int64_t outside_cap,
                                  er_check_report *rep, char *msg, size_t msg_size)
{
    const er_bounds *bd;
    const er_tensor *R;
    er_format_info fi;
    er_status st;
    unsigned char *cov;
    int64_t outside = 0;
    double worst_score = -1;
    int worst_rank = -1; /* 3 special, 2 no finite allowed, 1 ulps beyond, 0 covered: then the score */
    if (!r || !o || !output || !rep) return fail(msg, msg_size, ER_EINVAL, "er_check_report_compute: null argument");
    memset(rep, 0, sizeof *rep);
    rep->worst = -1;
    rep->narrower_format = -1;
    if ((st = er_result_bounds(r, o, &bd, msg, msg_size)) != ER_OK) return st;
    R = er_result_rounded(r);
    if (output->ndim != 2 && output->ndim != 3)
        return fail(msg, msg_size, ER_EINVAL, "the output must be 2-D or 3-D");
    int64_t count = 1;
    for (int d = 0; d < output->ndim; d++) count *= output->shape[d];
    cov = (unsigned char *)malloc(count ? (size_t)count : 1);
    if (!cov) return fail(msg, msg_size, ER_ENOMEM, "out of memory for the check of %lld elements", (long long)count);
    if ((st = er_result_covers(r, o, output, cov, &outside, msg, msg_size)) != ER_OK) {
        free(cov);
        return st;
    }
    er_format_get_info(output->format, &fi);
    int sb = fi.storage_bytes, isfloat = fi.kind == ER_KIND_FLOAT;
    int64_t m = output->shape[output->ndim - 2], n = output->shape[output->ndim - 1];
    rep->ndim = output->ndim;
    for (int d = 0; d < output->ndim; d++) rep->shape[d] = output->shape[d];
    rep->format = output->format;
    rep->elements = count;
    rep->outside = outside;
    int64_t zero_ok = 0;
    for (int64_t e = 0; e < count; e++) {
        uint64_t ob = element(output, e, sb), rb = element(R, e, sb);
        double ov = value_of(output->format, &fi, ob), rv = value_of(output->format, &fi, rb);
        double lo = value_of(output->format, &fi, bd->low[e]), hi = value_of(output->format, &fi, bd->high[e]);
        double tol = bd->tolerance[e], score;
        if (bd->has_range[e] && lo <= 0 && 0 <= hi) zero_ok++;
        if (!cov[e]) {
            int64_t beyond;
            int why, rank;
            if (!isfloat) {
                why = ER_REPORT_WHY_INT;
                beyond = (int64_t)llabs((long long)((int64_t)ov - (int64_t)rv));
                rank = 1;
                score = (double)beyond;
            } else if (!isfinite(ov)) {
                why = ER_REPORT_WHY_SPECIAL;
                beyond = 0;
                rank = 3;
                score = 0;
            } else if (!bd->has_range[e]) {
                why = ER_REPORT_WHY_NOT_FINITE;
                beyond = 0;
                rank = 2;
                score = 0;
            } else {
                why = ER_REPORT_WHY_ULPS;
                beyond = ov > hi ? ordinal(output->format, ob) - ordinal(output->format, bd->high[e])
                                 : ordinal(output->format, bd->low[e]) - ordinal(output->format, ob);
                rank = 1;
                score = (double)beyond;
            }
            rep->hist[ER_REPORT_OUTSIDE]++;
            if (outside_index && rep->outside_listed < outside_cap) outside_index[rep->outside_listed++] = e;
            {
                int64_t i = (e / n) % m, j = e % n;
                int64_t mr = m < ER_REPORT_MAP ? m : ER_REPORT_MAP, mc = n < ER_REPORT_MAP ? n : ER_REPORT_MAP;
                rep->map[(int)(i * mr / m)][(int)(j * mc / n)]++;
            }
            if (rank > worst_rank || (rank == worst_rank && score > worst_score)) {
                worst_rank = rank;
                worst_score = score;
                rep->worst = e;
                rep->worst_why = why;
                rep->ulps_beyond = beyond;
                rep->ratio = 0;
            }
            continue;
        }
        /* covered */
        if (ob == rb || (isfloat && isnan(ov) && isnan(rv))) {
            rep->hist[ER_REPORT_EXACT]++;
            score = 0;
        } else if (!isfloat || !isfinite(ov) || !isfinite(rv) || !(tol > 0) || !isfinite(tol)) {
            /* an allowed infinity or NaN, or an allowed value where the reference is not finite: no ratio */
            rep->hist[isfloat ? ER_REPORT_SPECIAL : ER_REPORT_EXACT]++;
            score = 0;
        } else {
            double d = fabs(ov - rv);
            score = d / tol;
            if (score == 0) {
                rep->hist[ER_REPORT_EXACT]++;
            } else {
                static const double edges[5] = {1.0 / 64, 1.0 / 16, 0.25, 0.5, 1.0};
                int h = 0;
                while (h < 4 && score > edges[h]) h++;
                rep->hist[ER_REPORT_BIN_64 + h]++;
                int ex, k;
                double mant = frexp(score, &ex);
                k = mant == 0.5 ? 1 - ex : -ex;
                if (k < 0) k = 0;
                if (k > ER_REPORT_LOG_BINS - 1) k = ER_REPORT_LOG_BINS - 1;
                rep->log_hist[k]++;
            }
        }
        if (worst_rank < 0 || (worst_rank == 0 && score > worst_score)) {
            worst_rank = 0;
            worst_score = score;
            rep->worst = e;
            rep->worst_why = ER_REPORT_WHY_NONE;
            rep->ulps_beyond = 0;
            rep->ratio = score;
        }
    }
    if (rep->worst >= 0) {
        int64_t e = rep->worst;
        er_check_report_index(rep, e, rep->worst_index);
        rep->worst_covered = cov[e];
        rep->output = element(output, e, sb);
        rep->rounded = element(R, e, sb);
        rep->low = bd->low[e];
        rep->high = bd->high[e];
        rep->output_value = value_of(output->format, &fi, rep->output);
        rep->rounded_value = value_of(output->format, &fi, rep->rounded);
        rep->low_value = value_of(output->format, &fi, rep->low);
        rep->high_value = value_of(output->format, &fi, rep->high);
        rep->has_range = bd->has_range[e];
        rep->single_value = rep->has_range && rep->low == rep->high;
        rep->tolerance = rep->single_value ? 0.0 : bd->tolerance[e];
        rep->may_pinf = bd->may_pinf[e];
        rep->may_ninf = bd->may_ninf[e];
        rep->may_nan = bd->may_nan[e];
    }
    free(cov);
    rep->zero_accepted = count > 0 && zero_ok == count;
    if (a && all_tiny(a)) rep->operand_vacuous |= 1;
    if (b && all_tiny(b)) rep->operand_vacuous |= 2;
    /* the hint: an output saved in a wider format than the one the kernel wrote */
    if (outside && isfloat && count) {
        int cands[5] = {a ? a->format : -1, b ? b->format : -1, ER_FMT_BF16, ER_FMT_F16, ER_FMT_F32};
        for (int c = 0; c < 5 && rep->narrower_format < 0; c++) {
            er_format_info ci;
            int f = cands[c];
            if (f < 0 || f == output->format || er_format_get_info(f, &ci) != ER_OK || ci.kind != ER_KIND_FLOAT ||
                ci.width >= fi.width)
                continue;
            /* only where the exact answer needs more than f: an output that never does is a hint */
            if (all_in(output, sb, count, f) && !all_in(R, sb, count, f)) rep->narrower_format = f;
        }
    }
    if (msg && msg_size) msg[0] = '\0';
    return ER_OK;
}
