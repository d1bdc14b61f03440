/* test_covers_fast.c: er_bounds_covers and er_check_report_score (patterns as order-mapped integers,
 * rows over threads) against a straightforward reference written here: every pattern decoded with
 * er_decode / er_from_bits and compared as doubles, one element after another.  Every output format,
 * every special pattern of each, random bounds, flags and tolerances, 2-D, strided and batched outputs
 * large enough to be split over threads; the fused covers and scoring of er_check_report_compute at each
 * ISA level and thread count, on the same data and on adversarial ratios (bin_edges).  The seed comes from
 * EXACTREF_SEED. */
#define _POSIX_C_SOURCE 200809L
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "er_test.h"
#include "exactref/exactref.h"
#include "exactref/report.h"
#include "exactref/core/er_round.h"
#include "er_report.h"

/* ---- the reference ---- */

static uint64_t get(const er_tensor *t, int64_t e, int sb)
{
    int64_t m = t->shape[t->ndim - 2], n = t->shape[t->ndim - 1];
    int64_t b = e / (m * n), i = (e / n) % m, j = e % n;
    int64_t off = (t->ndim == 3 ? b * t->strides[0] : 0) + i * t->strides[t->ndim - 2] + j * t->strides[t->ndim - 1];
    uint64_t x = 0;
    memcpy(&x, (const unsigned char *)t->data + (size_t)off * (size_t)sb, (size_t)sb);
    return x;
}

/* a pattern's value; ok = 0 where er_from_bits refuses it (the value is then 0) */
static double val(int fmt, const er_format_info *fi, uint64_t bits, int *ok)
{
    double v = 0;
    *ok = 1;
    if (fi->kind == ER_KIND_FLOAT) {
        *ok = er_from_bits(fmt, bits, &v) == ER_OK;
        if (!*ok) v = 0;
        return v;
    }
    if (fi->kind == ER_KIND_SINT) {
        int w = fi->width;
        uint64_t m = w >= 64 ? ~0ull : (1ull << w) - 1u;
        uint64_t x = bits & m;
        int64_t s = (w < 64 && (x >> (w - 1))) ? (int64_t)(x | ~m) : (int64_t)x;
        return (double)s;
    }
    return (double)bits;
}

static int64_t ord(int fmt, uint64_t bits)
{
    er_format_info fi;
    er_format_get_info(fmt, &fi);
    er_val v;
    /* sign and magnitude of the stored pattern, padding dropped */
    int pad = fmt == ER_FMT_TF32 ? 13 : 0;
    int mag_bits = fi.width - (fi.is_signed ? 1 : 0) - pad; /* f8E8M0FNU, f8E5M3FNU: no sign bit */
    uint64_t mag = (bits >> pad) & ((1ull << mag_bits) - 1u);
    v = er_decode(fmt, bits);
    return v.sign ? -(int64_t)mag : (int64_t)mag;
}

static void ref_covers(const er_bounds *bd, const er_tensor *out, int exact_int, unsigned char *cov, int64_t *bad)
{
    er_format_info fi;
    er_format_get_info(out->format, &fi);
    *bad = 0;
    for (int64_t e = 0; e < bd->count; e++) {
        uint64_t x = get(out, e, fi.storage_bytes);
        int ok;
        if (exact_int) ok = (uint32_t)x == (uint32_t)bd->low[e];
        else {
            er_val v = er_decode(out->format, x);
            if (v.cls == ER_CLASS_NAN) ok = bd->may_nan[e];
            else if (v.cls == ER_CLASS_INF) ok = v.sign ? bd->may_ninf[e] : bd->may_pinf[e];
            else {
                int o1, o2, o3;
                double xv = val(out->format, &fi, x, &o1), lo = val(out->format, &fi, bd->low[e], &o2),
                       hi = val(out->format, &fi, bd->high[e], &o3);
                ok = bd->has_range[e] && o1 && o2 && o3 && lo <= xv && xv <= hi;
            }
        }
        cov[e] = (unsigned char)(ok != 0);
        *bad += !ok;
    }
}

static void ref_score(const er_bounds *bd, const er_tensor *out, const er_tensor *R, const unsigned char *cov,
                      int64_t outside, int64_t *idx, int64_t cap, er_check_report *rep)
{
    er_format_info fi;
    er_format_get_info(out->format, &fi);
    int fmt = out->format, sb = fi.storage_bytes, isfloat = fi.kind == ER_KIND_FLOAT, ok;
    int64_t m = out->shape[out->ndim - 2], n = out->shape[out->ndim - 1], zero_ok = 0;
    int worst_rank = -1;
    double worst_score = -1;
    memset(rep, 0, sizeof *rep);
    rep->worst = -1;
    rep->narrower_format = -1;
    rep->ndim = out->ndim;
    for (int d = 0; d < out->ndim; d++) rep->shape[d] = out->shape[d];
    rep->format = fmt;
    rep->elements = bd->count;
    rep->outside = outside;
    for (int64_t e = 0; e < bd->count; e++) {
        uint64_t ob = get(out, e, sb), rb = get(R, e, sb);
        double ov = val(fmt, &fi, ob, &ok), rv = val(fmt, &fi, rb, &ok);
        double lo = val(fmt, &fi, bd->low[e], &ok), hi = val(fmt, &fi, bd->high[e], &ok);
        double tol = bd->tolerance[e], score;
        int rank, why = ER_REPORT_WHY_NONE;
        int64_t beyond = 0;
        if (bd->has_range[e] && lo <= 0 && 0 <= hi) zero_ok++;
        if (!cov[e]) {
            if (!isfloat) {
                why = ER_REPORT_WHY_INT;
                beyond = (int64_t)llabs((long long)((int64_t)ov - (int64_t)rv));
                rank = 1;
            } else if (!isfinite(ov)) {
                why = ER_REPORT_WHY_SPECIAL;
                rank = 3;
            } else if (!bd->has_range[e]) {
                why = ER_REPORT_WHY_NOT_FINITE;
                rank = 2;
            } else {
                why = ER_REPORT_WHY_ULPS;
                /* the distance in patterns, saturated where it exceeds int64 (f64 ends far apart) */
                int64_t x1 = ov > hi ? ord(fmt, bd->high[e]) : ord(fmt, ob), x2 = ov > hi ? ord(fmt, ob) : ord(fmt, bd->low[e]);
                if (x2 >= x1) {
                    uint64_t dd = (uint64_t)x2 - (uint64_t)x1;
                    beyond = dd > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)dd;
                } else {
                    uint64_t dd = (uint64_t)x1 - (uint64_t)x2;
                    beyond = dd > (uint64_t)INT64_MAX ? INT64_MIN : -(int64_t)dd;
                }
                rank = 1;
            }
            score = (double)beyond;
            rep->hist[ER_REPORT_OUTSIDE]++;
            if (idx && rep->outside_listed < cap) idx[rep->outside_listed++] = e;
            int64_t i = (e / n) % m, j = e % n, mr = m < ER_REPORT_MAP ? m : ER_REPORT_MAP,
                    mc = n < ER_REPORT_MAP ? n : ER_REPORT_MAP;
            rep->map[i * mr / m][j * mc / n]++;
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
        /* exact: the same pattern, both NaN, or the same value (zeros of either sign) */
        if (ob == rb || (isfloat && isnan(ov) && isnan(rv)) || (isfloat && ov == 0 && rv == 0)) {
            rep->hist[ER_REPORT_EXACT]++;
            score = 0;
        } else if (!isfloat || !isfinite(ov) || !isfinite(rv) || !(tol > 0) || !isfinite(tol)) {
            rep->hist[isfloat ? ER_REPORT_SPECIAL : ER_REPORT_EXACT]++;
            score = 0;
        } else {
            score = fabs(ov - rv) / tol;
            if (score == 0) rep->hist[ER_REPORT_EXACT]++;
            else {
                static const double edges[5] = {1.0 / 64, 1.0 / 16, 0.25, 0.5, 1.0};
                int h = 0, ex, k;
                while (h < 4 && score > edges[h]) h++;
                rep->hist[ER_REPORT_BIN_64 + h]++;
                double mant = frexp(score, &ex);
                k = mant == 0.5 ? 1 - ex : -ex;
                k = k < 0 ? 0 : k > ER_REPORT_LOG_BINS - 1 ? ER_REPORT_LOG_BINS - 1 : k;
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
        rep->output = get(out, e, sb);
        rep->rounded = get(R, e, sb);
        rep->low = bd->low[e];
        rep->high = bd->high[e];
        rep->output_value = val(fmt, &fi, rep->output, &ok);
        rep->rounded_value = val(fmt, &fi, rep->rounded, &ok);
        rep->low_value = val(fmt, &fi, rep->low, &ok);
        rep->high_value = val(fmt, &fi, rep->high, &ok);
        rep->has_range = bd->has_range[e];
        rep->single_value = rep->has_range && rep->low == rep->high;
        rep->tolerance = rep->single_value ? 0.0 : bd->tolerance[e];
        rep->may_pinf = bd->may_pinf[e];
        rep->may_ninf = bd->may_ninf[e];
        rep->may_nan = bd->may_nan[e];
    }
    rep->zero_accepted = bd->count > 0 && zero_ok == bd->count;
}

/* ---- the data ---- */

/* A pattern of fmt: the specials and edges often, random bits otherwise, now and then an invalid one
 * (bits above the width of a narrow format, tf32's padding bits). */
static uint64_t pattern(int fmt, const er_format_info *fi, uint64_t *st)
{
    uint64_t r = er_test_rand(st), w = fi->width >= 64 ? ~0ull : (1ull << fi->width) - 1u;
    uint64_t top = fi->width >= 64 ? 0 : 1ull << (fi->width - 1);
    uint64_t x = er_test_rand(st) & w;
    switch (r % 16) {
    case 0: x = w; break;                        /* all ones: a NaN in most formats */
    case 1: x = top; break;                      /* -0, or FNUZ's NaN */
    case 2: x = 0; break;
    case 3: x = (x & top) | 1u; break;           /* the smallest subnormal */
    case 4: er_bits_of(fmt, INFINITY, &x); x |= (r >> 8 & 1) ? top : 0; break; /* +-inf where there is one */
    case 5: x = (x & top) | ((w >> 1) ^ (1ull << (fi->width > 2 ? fi->width - 3 : 0))); break;
    case 6:
        if ((r >> 8) % 4 == 0) x |= fmt == ER_FMT_TF32 ? 1u : (fi->storage_bytes * 8 > fi->width ? w + 1 : 0);
        break;
    default: break;
    }
    if (fmt == ER_FMT_TF32 && (r % 16) != 6) x &= ~(uint64_t)0x1FFF;
    return x;
}

static double vcmp(int fmt, uint64_t x)
{
    double v = NAN;
    er_from_bits(fmt, x, &v);
    return v;
}

typedef struct data {
    int fmt, ndim, exact_int, all_covered;
    int64_t B, M, N, count;
    er_format_info fi;
    unsigned char *obuf, *rbuf;
    er_tensor O, R;
    er_bounds bd;
} data;

/* finite_out: every output element finite (no outside infinity or NaN to outrank the ulps beyond) */
static void make(data *d, int fmt, int64_t B, int64_t M, int64_t N, int strided, int finite_out, uint64_t *st)
{
    memset(d, 0, sizeof *d);
    d->fmt = fmt;
    er_format_get_info(fmt, &d->fi);
    d->exact_int = d->fi.kind != ER_KIND_FLOAT;
    d->B = B;
    d->M = M;
    d->N = N;
    d->count = B * M * N;
    int sb = d->fi.storage_bytes;
    /* strided: every element two apart in a row (the output a view of a wider array) */
    int64_t step = strided ? 2 : 1;
    d->obuf = calloc((size_t)(d->count * step), (size_t)sb);
    d->rbuf = calloc((size_t)d->count, (size_t)sb);
    er_bounds *b = &d->bd;
    b->count = d->count;
    b->radius = calloc((size_t)d->count, sizeof(double));
    b->tolerance = calloc((size_t)d->count, sizeof(double));
    b->low = calloc((size_t)d->count, sizeof(uint64_t));
    b->high = calloc((size_t)d->count, sizeof(uint64_t));
    b->has_range = calloc((size_t)d->count, 1);
    b->may_pinf = calloc((size_t)d->count, 1);
    b->may_ninf = calloc((size_t)d->count, 1);
    b->may_nan = calloc((size_t)d->count, 1);
    if (B > 1) {
        d->O = er_tensor_3d(fmt, B, M, N, d->obuf);
        d->R = er_tensor_3d(fmt, B, M, N, d->rbuf);
    } else {
        d->O = er_tensor_2d(fmt, M, N, d->obuf);
        d->R = er_tensor_2d(fmt, M, N, d->rbuf);
    }
    if (strided) {
        d->O.strides[d->O.ndim - 1] = 2;
        d->O.strides[d->O.ndim - 2] = 2 * N;
        if (d->O.ndim == 3) d->O.strides[0] = 2 * M * N;
    }
    for (int64_t e = 0; e < d->count; e++) {
        uint64_t r = er_test_rand(st), ob, rb, lo, hi;
        if (d->exact_int) {
            ob = er_test_rand(st) & 0xFFFFFFFFu;
            rb = (r % 3) ? ob : ob ^ (r >> 8 & 7);
            lo = hi = (r % 5) ? rb : ob;
        } else {
            rb = pattern(fmt, &d->fi, st);
            ob = (r % 4 == 0) ? rb : (r % 4 == 1) ? pattern(fmt, &d->fi, st) : rb ^ (er_test_rand(st) & 7);
            uint64_t p1 = (r >> 3) % 5 ? rb ^ (er_test_rand(st) & 15) : pattern(fmt, &d->fi, st);
            uint64_t p2 = (r >> 6) % 5 ? rb ^ (er_test_rand(st) & 15) : pattern(fmt, &d->fi, st);
            if (fmt == ER_FMT_TF32) {
                if ((r >> 20) % 16) p1 &= ~(uint64_t)0x1FFF, p2 &= ~(uint64_t)0x1FFF, ob &= ~(uint64_t)0x1FFF;
            }
            if ((r >> 9) % 8) {
                /* mostly an ordered range, sometimes reversed */
                int swap = vcmp(fmt, p1) > vcmp(fmt, p2);
                lo = swap ? p2 : p1;
                hi = swap ? p1 : p2;
            } else {
                lo = p1;
                hi = p2;
            }
            if ((r >> 12) % 6 == 0) hi = lo; /* a single value */
            if (finite_out) {
                er_val v = er_decode(fmt, ob);
                if (v.cls == ER_CLASS_INF || v.cls == ER_CLASS_NAN) ob = 0;
            }
        }
        memcpy(d->obuf + (size_t)(e * step) * (size_t)sb, &ob, (size_t)sb);
        memcpy(d->rbuf + (size_t)e * (size_t)sb, &rb, (size_t)sb);
        b->low[e] = lo;
        b->high[e] = hi;
        b->has_range[e] = finite_out || (r >> 15) % 8 != 0; /* finite_out: nothing outranks ulps beyond */
        b->may_pinf[e] = (r >> 18) & 1;
        b->may_ninf[e] = (r >> 19) & 1;
        b->may_nan[e] = (r >> 21) & 1;
        static const double tols[6] = {0.0, INFINITY, NAN, 0x1p-1074, 0.0, 0.0};
        unsigned ti = (unsigned)((r >> 24) % 12);
        double tv = fabs(vcmp(fmt, hi) - vcmp(fmt, lo));
        b->tolerance[e] = ti < 6 ? tols[ti] : ti < 9 ? tv : tv * (double)(1 + (r >> 40) % 97) / 64.0;
    }
}

static void release(data *d)
{
    free(d->obuf);
    free(d->rbuf);
    free(d->bd.radius);
    free(d->bd.tolerance);
    free(d->bd.low);
    free(d->bd.high);
    free(d->bd.has_range);
    free(d->bd.may_pinf);
    free(d->bd.may_ninf);
    free(d->bd.may_nan);
}

/* The number of elements whose range holds zero, as the reference reads the patterns (a refused one as 0). */
static int64_t ref_zero(const data *d)
{
    int64_t z = 0;
    for (int64_t e = 0; e < d->count; e++) {
        int o1, o2;
        double lo = val(d->fmt, &d->fi, d->bd.low[e], &o1), hi = val(d->fmt, &d->fi, d->bd.high[e], &o2);
        z += d->bd.has_range[e] && lo <= 0 && 0 <= hi;
    }
    return z;
}

/* One comparison: isa, the loops' portable copies (0), AVX2 at most (1) or every ISA the processor has (2,
 * AVX-512 where it has it); kept, covers
 * through the compact keys (made by the first call, used again by a second) and the scoring with their count
 * of ranges that hold zero (else the public functions). */
typedef struct refs {
    unsigned char *cr;
    int64_t bad_ref, ir[64];
    er_check_report rr;
} refs;

static void compare_one(data *d, const char *what, int isa, int kept, refs *rf_)
{
    char msg[512];
    int64_t n = d->count, bad_ref = rf_->bad_ref, bad = -1, zero = -2;
    unsigned char *cr = rf_->cr, *cf = malloc((size_t)n);
    er_bkeys *keys = NULL;
    er_report_isa(isa);
    if (kept) {
        for (int call = 0; call < 2; call++) {
            memset(cf, 7, (size_t)n);
            ck_assert_msg(er_bounds_covers_kept(&d->bd, &keys, &d->O, d->exact_int, cf, &bad, &zero, msg, sizeof msg) ==
                              ER_OK, "%s", msg);
            ck_assert_int_eq(bad, bad_ref);
            int64_t first = -1;
            for (int64_t e = 0; e < n && first < 0; e++)
                if (cr[e] != cf[e]) first = e;
            ck_assert_msg(first < 0, "%s %s (kept keys, call %d): covers differs at %lld", what, er_format_name(d->fmt),
                          call, (long long)first);
        }
        /* keys for float formats of up to 4 bytes, and their count of ranges holding zero */
        ck_assert(d->exact_int || d->fi.storage_bytes > 4 ? keys == NULL && zero == -1 : keys != NULL);
        if (keys) ck_assert_int_eq(zero, ref_zero(d));
    } else
        ck_assert_msg(er_bounds_covers(&d->bd, &d->O, d->exact_int, cf, &bad, msg, sizeof msg) == ER_OK, "%s", msg);
    er_bkeys_free(keys);
    int64_t first = -1;
    for (int64_t e = 0; e < n && first < 0; e++)
        if (cr[e] != cf[e]) first = e;
    for (int64_t e = first < 0 ? n : first; e < n && e == first; e++)
        ck_assert_msg(cr[e] == cf[e], "%s %s: covers differs at %lld (output 0x%llx, range 0x%llx..0x%llx)", what,
                      er_format_name(d->fmt), (long long)e, (unsigned long long)get(&d->O, e, d->fi.storage_bytes),
                      (unsigned long long)d->bd.low[e], (unsigned long long)d->bd.high[e]);
    ck_assert_int_eq(bad, bad_ref);
    /* a case that cannot pass by accident: both outcomes occur */
    if (n >= 1000 && !d->all_covered) ck_assert_msg(bad > 0 && bad < n, "%s %s: %lld of %lld outside", what, er_format_name(d->fmt),
                                 (long long)bad, (long long)n);
    int64_t *ir = rf_->ir, iff[64];
    er_check_report rr = rf_->rr, rf;
    if (kept)
        ck_assert_msg(er_check_report_score_kept(&d->bd, &d->O, &d->R, cr, bad_ref, zero, NULL, NULL, iff, 64, &rf, msg,
                                                 sizeof msg) == ER_OK, "%s", msg);
    else
        ck_assert_msg(er_check_report_score(&d->bd, &d->O, &d->R, cr, bad_ref, NULL, NULL, iff, 64, &rf, msg,
                                            sizeof msg) == ER_OK, "%s", msg);
    for (int h = 0; h < ER_REPORT_BINS; h++)
        ck_assert_msg(rr.hist[h] == rf.hist[h], "%s %s: bin %d: %lld, reference %lld", what, er_format_name(d->fmt), h,
                      (long long)rf.hist[h], (long long)rr.hist[h]);
    for (int h = 0; h < ER_REPORT_LOG_BINS; h++) ck_assert_int_eq(rr.log_hist[h], rf.log_hist[h]);
    ck_assert_msg(rr.worst == rf.worst, "%s %s: worst %lld, reference %lld", what, er_format_name(d->fmt),
                  (long long)rf.worst, (long long)rr.worst);
    ck_assert_int_eq(rr.worst_why, rf.worst_why);
    ck_assert_int_eq(rr.ulps_beyond, rf.ulps_beyond);
    ck_assert_int_eq(rr.zero_accepted, rf.zero_accepted);
    ck_assert_int_eq(rr.outside_listed, rf.outside_listed);
    ck_assert(memcmp(ir, iff, sizeof ir[0] * (size_t)rr.outside_listed) == 0);
    ck_assert(memcmp(rr.map, rf.map, sizeof rr.map) == 0);
    ck_assert(memcmp(&rr.ratio, &rf.ratio, sizeof rr.ratio) == 0);
    ck_assert(memcmp(&rr.output_value, &rf.output_value, sizeof(double)) == 0);
    ck_assert(memcmp(&rr.tolerance, &rf.tolerance, sizeof(double)) == 0);
    /* and everything else: the whole report, bit for bit */
    ck_assert_msg(memcmp(&rr, &rf, sizeof rr) == 0, "%s %s: the reports differ", what, er_format_name(d->fmt));
    er_report_isa(2);
    free(cf);
}

/* The fused covers and scoring (er_check_report_compute's pass for f32, bf16 and f16 outputs with unit
 * strides) against the reference, at every ISA level and several thread counts: covered, the outside list
 * and the whole report, bit for bit; the keys made by the first call and read by the later ones. */
static void compare_fused(data *d, const char *what, refs *rf_)
{
    char msg[512];
    int64_t n = d->count;
    int unit = d->O.strides[d->O.ndim - 1] == 1;
    int fused = d->fmt == ER_FMT_F32 || d->fmt == ER_FMT_BF16 || d->fmt == ER_FMT_F16;
    unsigned char *cf = malloc((size_t)(n ? n : 1));
    er_bkeys *keys = NULL;
    er_check_report rf;
    int64_t iff[64];
    if (!fused || !unit) {
        ck_assert(er_check_report_fused(&d->bd, &keys, &d->O, &d->R, cf, NULL, NULL, iff, 64, &rf, msg, sizeof msg) ==
                  ER_EINVAL);
        ck_assert(keys == NULL);
        free(cf);
        return;
    }
    static const int threads[4] = {0, 1, 3, 7};
    for (int isa = 0; isa <= 2; isa++)
        for (int t = 0; t < 4; t++) {
            er_report_isa(isa);
            er_report_threads(threads[t]);
            memset(cf, 7, (size_t)n);
            er_status st = er_check_report_fused(&d->bd, &keys, &d->O, &d->R, cf, NULL, NULL, iff, 64, &rf, msg, sizeof msg);
            er_report_threads(0);
            er_report_isa(2);
            ck_assert_msg(st == ER_OK, "%s", msg);
            int64_t first = -1;
            for (int64_t e = 0; e < n && first < 0; e++)
                if (rf_->cr[e] != cf[e]) first = e;
            ck_assert_msg(first < 0, "%s %s (fused, isa %d, %d threads): covers differs at %lld", what,
                          er_format_name(d->fmt), isa, threads[t], (long long)first);
            er_check_report *rr = &rf_->rr;
            for (int h = 0; h < ER_REPORT_BINS; h++)
                ck_assert_msg(rr->hist[h] == rf.hist[h], "%s %s (fused, isa %d, %d threads): bin %d: %lld, reference %lld",
                              what, er_format_name(d->fmt), isa, threads[t], h, (long long)rf.hist[h],
                              (long long)rr->hist[h]);
            for (int h = 0; h < ER_REPORT_LOG_BINS; h++)
                ck_assert_msg(rr->log_hist[h] == rf.log_hist[h], "%s %s (fused, isa %d): log bin %d: %lld, reference %lld",
                              what, er_format_name(d->fmt), isa, h, (long long)rf.log_hist[h], (long long)rr->log_hist[h]);
            ck_assert_msg(rr->worst == rf.worst, "%s %s (fused, isa %d, %d threads): worst %lld, reference %lld", what,
                          er_format_name(d->fmt), isa, threads[t], (long long)rf.worst, (long long)rr->worst);
            ck_assert(memcmp(rf_->ir, iff, sizeof iff[0] * (size_t)rr->outside_listed) == 0);
            ck_assert_msg(memcmp(rr, &rf, sizeof rf) == 0, "%s %s (fused, isa %d, %d threads): the reports differ", what,
                          er_format_name(d->fmt), isa, threads[t]);
            /* without a covered array: the outside elements listed as they come, the same report */
            er_report_isa(isa);
            er_report_threads(threads[t]);
            memset(&rf, 0x5A, sizeof rf);
            memset(iff, 0xA5, sizeof iff);
            st = er_check_report_fused(&d->bd, &keys, &d->O, &d->R, NULL, NULL, NULL, iff, 64, &rf, msg, sizeof msg);
            er_report_threads(0);
            er_report_isa(2);
            ck_assert_msg(st == ER_OK, "%s", msg);
            ck_assert(memcmp(rf_->ir, iff, sizeof iff[0] * (size_t)rr->outside_listed) == 0);
            ck_assert_msg(memcmp(rr, &rf, sizeof rf) == 0, "%s %s (fused, listed, isa %d, %d threads): the reports differ",
                          what, er_format_name(d->fmt), isa, threads[t]);
        }
    er_bkeys_free(keys);
    free(cf);
}

static void compare(data *d, const char *what)
{
    refs r;
    r.cr = malloc((size_t)d->count);
    ref_covers(&d->bd, &d->O, d->exact_int, r.cr, &r.bad_ref);
    ref_score(&d->bd, &d->O, &d->R, r.cr, r.bad_ref, r.ir, 64, &r.rr);
    for (int isa = 0; isa <= 2; isa++)
        for (int kept = 0; kept < 2; kept++) compare_one(d, what, isa, kept, &r);
    compare_fused(d, what, &r);
    free(r.cr);
}

static const int formats[] = {ER_FMT_F64,        ER_FMT_F32,        ER_FMT_TF32,       ER_FMT_F16,
                              ER_FMT_BF16,       ER_FMT_F8E4M3FN,   ER_FMT_F8E5M2,     ER_FMT_F8E4M3FNUZ,
                              ER_FMT_F8E5M2FNUZ, ER_FMT_F8E8M0FNU,  ER_FMT_F6E2M3FN,   ER_FMT_F6E3M2FN,
                              ER_FMT_F4E2M1FN,   ER_FMT_F8E5M3FNU,  ER_FMT_I32};
#define NFORMATS ((int)(sizeof formats / sizeof formats[0]))

/* Small 2-D outputs of every format (one thread). */
START_TEST(every_format_small)
{
    uint64_t st = er_test_seed("covers_fast_small") ^ (uint64_t)_i * 0x9E3779B97F4A7C15ull;
    data d;
    make(&d, formats[_i], 1, 37, 41, 0, 0, &st);
    compare(&d, "2-D");
    release(&d);
}
END_TEST

/* Large outputs (split over threads), strided and batched. */
START_TEST(every_format_threads)
{
    uint64_t st = er_test_seed("covers_fast_threads") ^ (uint64_t)_i * 0xD1B54A32D192ED03ull;
    data d;
    make(&d, formats[_i], 1, 300, 257, 0, 0, &st);
    compare(&d, "large 2-D");
    release(&d);
    make(&d, formats[_i], 3, 129, 200, 1, 0, &st);
    compare(&d, "strided batch");
    release(&d);
}
END_TEST

/* Finite outputs, several seeds: the worst element is then an ulps-beyond one (or covered), so its
 * distance in patterns is compared too. */
START_TEST(every_format_finite)
{
    uint64_t st = er_test_seed("covers_fast_finite") ^ (uint64_t)_i * 0x94D049BB133111EBull;
    for (int rep = 0; rep < 6; rep++) {
        data d;
        make(&d, formats[_i], 1, 23 + rep, 29, rep & 1, 1, &st);
        compare(&d, "finite");
        ck_assert(formats[_i] == ER_FMT_I32 || d.O.ndim == 2);
        release(&d);
    }
}
END_TEST

/* Every pattern of the 8-bit and narrower formats as the output, against every pattern as a range end. */
START_TEST(exhaustive_narrow)
{
    int fmt = formats[5 + _i];
    er_format_info fi;
    er_format_get_info(fmt, &fi);
    data d;
    uint64_t st = er_test_seed("covers_fast_exhaustive");
    make(&d, fmt, 1, 256, 256, 0, 0, &st);
    for (int64_t e = 0; e < d.count; e++) {
        d.obuf[e] = (unsigned char)(e >> 8);
        d.bd.low[e] = (uint64_t)(e & 255);
        d.bd.high[e] = (uint64_t)((e * 7 + 3) & 255);
        d.bd.has_range[e] = 1;
    }
    compare(&d, "exhaustive");
    release(&d);
}
END_TEST

/* Every pattern of the 16-bit formats as the output, each against eight ranges: a random one, all finite
 * values (-inf..+inf), -0..+0, +0..-0, a NaN end, a single value, no finite range, and the smallest positive
 * subnormal .. the largest finite value (with, for some outputs, a bit above the width set in an end). */
START_TEST(exhaustive_16)
{
    int fmt = _i ? ER_FMT_BF16 : ER_FMT_F16;
    uint64_t pinf = _i ? 0x7F80u : 0x7C00u, qnan = _i ? 0x7FC0u : 0x7E00u, maxf = _i ? 0x7F7Fu : 0x7BFFu;
    data d;
    uint64_t st = er_test_seed("covers_fast_exhaustive16") ^ (uint64_t)_i;
    make(&d, fmt, 1, 8 * 256, 256, 0, 0, &st);
    for (int64_t e = 0; e < d.count; e++) {
        uint64_t x = (uint64_t)(e & 0xFFFF), c = (uint64_t)(e >> 16);
        uint16_t x16 = (uint16_t)x;
        memcpy(d.obuf + 2 * e, &x16, 2);
        uint64_t *lo = &d.bd.low[e], *hi = &d.bd.high[e];
        switch (c) {
        case 0: break;
        case 1: *lo = pinf | 0x8000u, *hi = pinf; break;
        case 2: *lo = 0x8000u, *hi = 0; break;
        case 3: *lo = 0, *hi = 0x8000u; break;
        case 4: *lo = (x & 1) ? qnan : 0, *hi = (x & 1) ? pinf : qnan | 0x8000u; break;
        case 5: *lo = *hi = (x * 40503u) & 0xFFFFu; break;
        case 6: d.bd.has_range[e] = 0; break;
        default: *lo = (x % 97 == 0) ? 0x10001u : 1u, *hi = (x % 89 == 0) ? maxf | 0x20000u : maxf; break;
        }
        if (c && c != 6) d.bd.has_range[e] = 1;
    }
    compare(&d, "exhaustive 16-bit");
    release(&d);
}
END_TEST

/* Through a result: er_result_covers and er_check_report_compute (the compact keys made by the first call
 * and kept with the result's bounds, for several options, more than the result keeps, so that bounds
 * and their keys are dropped and made again) against er_bounds_covers and er_check_report_score on the
 * same bounds, and on a transposed view (its own bounds and keys). */
START_TEST(through_result)
{
    static const int outs[3] = {ER_FMT_F32, ER_FMT_BF16, ER_FMT_F16};
    int ofmt = outs[_i];
    uint64_t st = er_test_seed("covers_fast_result") ^ (uint64_t)_i;
    int64_t M = 97, K = 24, N = 700, count = M * N;
    er_format_info fi;
    er_format_get_info(ofmt, &fi);
    int sb = fi.storage_bytes;
    uint16_t *a = malloc((size_t)(M * K) * 2), *b = malloc((size_t)(K * N) * 2);
    unsigned char *d = calloc((size_t)count, (size_t)sb), *o = malloc((size_t)count * (size_t)sb);
    unsigned char *c1 = malloc((size_t)count), *c2 = malloc((size_t)count);
    /* bf16 values of both signs within a factor of about 2 of 1 */
    for (int64_t i = 0; i < M * K + K * N; i++) {
        uint64_t r = er_test_rand(&st);
        uint16_t v = (uint16_t)((0x3F80u + r % 0x100u - 0x80u) | (r >> 20 & 1u) << 15);
        if (i < M * K) a[i] = v;
        else b[i - M * K] = v;
    }
    er_tensor ta = er_tensor_2d(ER_FMT_BF16, M, K, a), tb = er_tensor_2d(ER_FMT_BF16, K, N, b);
    er_tensor td = er_tensor_2d(ofmt, M, N, d), to = er_tensor_2d(ofmt, M, N, o);
    er_mma_args args;
    er_result *res = NULL, *view = NULL;
    char msg[512] = "";
    er_mma_args_init(&args);
    args.a = &ta;
    args.b = &tb;
    args.d = &td;
    ck_assert_msg(er_result_create(&args, &res, msg, sizeof msg) == ER_OK, "%s", msg);
    const er_tensor *R = er_result_rounded(res);
    for (int64_t e = 0; e < count; e++) {
        uint32_t x = 0;
        memcpy(&x, (const unsigned char *)R->data + (size_t)e * (size_t)sb, (size_t)sb);
        uint64_t r = er_test_rand(&st);
        x = (r % 5 == 0) ? x ^ (uint32_t)(r >> 8 & 3) : (r % 97 == 0) ? x ^ (sb == 4 ? 0x7F800000u : 0x7C00u) : x;
        memcpy(o + (size_t)e * (size_t)sb, &x, (size_t)sb);
    }
    ck_assert_msg(er_result_transpose(res, 0, 1, &view, msg, sizeof msg) == ER_OK, "%s", msg);
    static const int computes[5] = {ER_FMT_F32, ER_FMT_F64, ER_FMT_BF16, ER_FMT_F16, ER_FMT_F32};
    for (int round = 0; round < 2; round++)
        for (int q = 0; q < 10; q++) {
            er_tol_opts opt;
            er_tol_opts_init(&opt);
            opt.compute = computes[q % 5];
            opt.flush_to_zero = q >= 5;
            const er_bounds *bd;
            int64_t out1 = -1, out2 = -2;
            ck_assert_msg(er_result_covers(res, &opt, &to, c1, &out1, msg, sizeof msg) == ER_OK, "%s", msg);
            ck_assert_msg(er_result_bounds(res, &opt, &bd, msg, sizeof msg) == ER_OK, "%s", msg);
            ck_assert_msg(er_bounds_covers(bd, &to, 0, c2, &out2, msg, sizeof msg) == ER_OK, "%s", msg);
            ck_assert_int_eq(out1, out2);
            ck_assert(memcmp(c1, c2, (size_t)count) == 0);
            er_check_report r1, r2;
            int64_t i1[32], i2[32];
            er_status sc = er_check_report_compute(res, &opt, &to, &ta, &tb, i1, 32, &r1, msg, sizeof msg);
            ck_assert_msg(sc == ER_OK, "%s", msg);
            ck_assert_msg(er_check_report_score(bd, &to, R, c2, out2, &ta, &tb, i2, 32, &r2, msg, sizeof msg) == ER_OK,
                          "%s", msg);
            ck_assert(memcmp(&r1, &r2, sizeof r1) == 0);
            ck_assert(memcmp(i1, i2, sizeof i1[0] * (size_t)r1.outside_listed) == 0);
            ck_assert_msg(r1.outside > 0 && r1.outside < count, "%lld outside", (long long)r1.outside);
            /* the view: the same decisions, transposed */
            er_tensor tv = to;
            tv.shape[0] = N;
            tv.shape[1] = M;
            tv.strides[0] = 1;
            tv.strides[1] = N;
            int64_t outv = -3;
            ck_assert_msg(er_result_covers(view, &opt, &tv, c2, &outv, msg, sizeof msg) == ER_OK, "%s", msg);
            ck_assert_int_eq(outv, out1);
            int64_t diff = 0;
            for (int64_t i = 0; i < M; i++)
                for (int64_t j = 0; j < N; j++) diff += c2[j * M + i] != c1[i * N + j];
            ck_assert_int_eq(diff, 0);
        }
    er_result_free(view);
    er_result_free(res);
    free(a);
    free(b);
    free(d);
    free(o);
    free(c1);
    free(c2);
}
END_TEST

/* ---- adversarial ratios: at and beside the bins' edges, extreme tolerances, specials ---- */

/* a pattern of an IEEE format that fills its storage (f32, bf16, f16) moved by delta in sign-magnitude
 * order (the largest finite magnitude at most) */
static uint64_t moved(uint64_t x, int64_t delta, int bits, uint64_t inf)
{
    uint64_t sign = 1ull << (bits - 1), mag = x & (sign - 1u);
    int64_t k = (x & sign) ? -(int64_t)mag : (int64_t)mag;
    k += delta;
    if (k > (int64_t)inf - 1) k = (int64_t)inf - 1;
    if (k < -((int64_t)inf - 1)) k = -((int64_t)inf - 1);
    return k < 0 ? sign | (uint64_t)(-k) : (uint64_t)k;
}

/* Outputs near their rounded answers and tolerances t = d 2^j (d = |output - rounded| as binary64: the
 * ratio exactly a power of two, a bin's edge), one ulp either side of that, slightly above and below,
 * subnormal, huge and tiny tolerances (ratios that underflow, are subnormal or overflow), zero,
 * negative, infinite and NaN ones; +0 against -0, NaN against NaN, infinities, subnormal outputs; the
 * ranges mostly around both values, some not covering the output.  all_covered: every element covered
 * and no extreme tolerance, ratios within a few powers of two of each other (many equal, many one ulp
 * apart), so that the worst element is the first of the largest covered ratios. */
static void make_edges(data *d, int fmt, int64_t M, int64_t N, int all_covered, uint64_t *st)
{
    make(d, fmt, 1, M, N, 0, 0, st);
    d->all_covered = all_covered;
    int sb = d->fi.storage_bytes, bits = 8 * sb;
    uint64_t inf = fmt == ER_FMT_F32 ? 0x7F800000u : fmt == ER_FMT_BF16 ? 0x7F80u : 0x7C00u;
    uint64_t sign = 1ull << (bits - 1), qnan = fmt == ER_FMT_F32 ? 0x7FC00000u : fmt == ER_FMT_BF16 ? 0x7FC0u : 0x7E00u;
    er_bounds *b = &d->bd;
    for (int64_t e = 0; e < d->count; e++) {
        uint64_t r = er_test_rand(st), r2 = er_test_rand(st);
        uint64_t rb = er_test_rand(st) & (inf - 1u), ob;
        if (r % 11 == 0) rb &= 0xFFu;                     /* a subnormal (or zero) answer */
        if (r % 13 == 1) rb = 0;
        if ((r >> 4) & 1) rb |= sign;
        static const int64_t deltas[8] = {1, -1, 2, -3, 7, -100, 1000, -65536};
        ob = moved(rb, deltas[(r >> 5) % 8] >> ((r >> 8) % 3 == 0 ? 0 : 0), bits, inf);
        switch ((r >> 12) % 16) {
        case 0: ob = rb; break;
        case 1: ob = rb == 0 ? sign : rb == sign ? 0 : ob; rb = (r >> 20 & 1) ? 0 : sign; ob = rb ^ sign; break;
        case 2: ob = qnan | (r >> 21 & 1 ? sign : 0); rb = (r >> 22 & 1) ? qnan : rb; break;
        case 3: ob = inf | (r >> 21 & 1 ? sign : 0); break;
        case 4: rb = inf; break;
        default: break;
        }
        double ov = vcmp(fmt, ob), rv = vcmp(fmt, rb), dd = fabs(ov - rv);
        int j = all_covered ? -(int)((r2 >> 8) % 3) : -(int)((r2 >> 8) % 48) + 6;
        double t = ldexp(dd, j);
        switch (all_covered && r2 % 16 >= 8 && r2 % 16 < 14 ? 0 : r2 % 16) {
        case 0: case 1: case 2: break;                            /* a power of two: an edge */
        case 3: case 4: t = nextafter(t, INFINITY); break;        /* just below the edge */
        case 5: case 6: t = nextafter(t, 0.0); break;             /* just above it */
        case 7: t *= 1.0 + (double)(r2 >> 40) * 0x1p-30; break;
        case 8: t = 0x1p-1060 * (double)(1 + (r2 >> 50)); break; /* subnormal: slow path, huge ratios */
        case 9: t = 0x1.fffffffffffffp+1023 / (double)(1 + (r2 >> 60)); break; /* ratios near or below 2^-1074 */
        case 10: t = ldexp(1.0, -1000 - (int)((r2 >> 20) % 40)); break;  /* exponent differences near 1000 */
        case 11: t = ldexp(1.0 + (double)(r2 >> 40) * 0x1p-24, 990 - (int)((r2 >> 20) % 40)); break;
        case 12: t = (r2 >> 20 & 1) ? 0.0 : -1.0; break;
        case 13: t = (r2 >> 20 & 1) ? INFINITY : NAN; break;
        default: t = ldexp(dd, j - 1) * 3.0; break;               /* between edges */
        }
        if (dd == 0 && (r2 % 16) < 8) t = ldexp(1.0, j);
        b->tolerance[e] = t;
        /* the range: both values and a few ulps more, sometimes only the answer's side */
        uint64_t lo = vcmp(fmt, ob) < vcmp(fmt, rb) ? ob : rb, hi = lo == ob ? rb : ob;
        if (isnan(vcmp(fmt, ob)) || isinf(vcmp(fmt, ob))) lo = hi = rb;
        if (isnan(vcmp(fmt, rb)) || isinf(vcmp(fmt, rb))) lo = hi = 0;
        lo = moved(lo, -(int64_t)((r >> 24) % 4), bits, inf);
        hi = moved(hi, (int64_t)((r >> 26) % 4), bits, inf);
        if ((r >> 28) % 9 == 0 && !all_covered) lo = hi = rb;     /* the output outside, by a few ulps */
        b->low[e] = lo;
        b->high[e] = hi;
        b->has_range[e] = all_covered || (r >> 32) % 16 != 0;
        if (all_covered) {
            b->may_nan[e] = b->may_pinf[e] = b->may_ninf[e] = 1;
            if (!isfinite(vcmp(fmt, ob))) b->tolerance[e] = t = 1.0;
            if (isnan(vcmp(fmt, rb)) || isinf(vcmp(fmt, rb))) b->low[e] = b->high[e] = ob;
        }
        memcpy(d->obuf + (size_t)e * (size_t)sb, &ob, (size_t)sb);
        memcpy(d->rbuf + (size_t)e * (size_t)sb, &rb, (size_t)sb);
    }
}

/* The adversarial data above, f32, bf16 and f16 outputs, each size split over threads, several seeds. */
START_TEST(bin_edges)
{
    static const int fmts[3] = {ER_FMT_F32, ER_FMT_BF16, ER_FMT_F16};
    uint64_t st = er_test_seed("covers_fast_edges") ^ (uint64_t)_i * 0xA24BAED4963EE407ull;
    for (int rep = 0; rep < 6; rep++) {
        data d;
        int all = rep >= 3;
        make_edges(&d, fmts[_i], rep % 3 == 2 ? 300 : 61, rep % 3 == 1 ? 1 : 253, all, &st);
        compare(&d, all ? "bin edges, all covered" : "bin edges");
        /* the data reach the bins they are made for */
        refs r;
        r.cr = malloc((size_t)d.count);
        ref_covers(&d.bd, &d.O, 0, r.cr, &r.bad_ref);
        ref_score(&d.bd, &d.O, &d.R, r.cr, r.bad_ref, r.ir, 64, &r.rr);
        if (d.count >= 10000 && !all)
            for (int h = 0; h < ER_REPORT_BINS; h++)
                ck_assert_msg(r.rr.hist[h] > 0, "%s: bin %d empty", er_format_name(d.fmt), h);
        /* all covered: the worst is a covered ratio */
        if (all) ck_assert(r.bad_ref == 0 && r.rr.worst >= 0 && r.rr.worst_covered && r.rr.ratio > 0);
        free(r.cr);
        release(&d);
    }
}
END_TEST

int main(void)
{
    Suite *s = suite_create("covers_fast");
    TCase *tc = tcase_create("all");
    tcase_set_timeout(tc, 300);
    tcase_add_loop_test(tc, every_format_small, 0, NFORMATS);
    tcase_add_loop_test(tc, every_format_threads, 0, NFORMATS);
    tcase_add_loop_test(tc, every_format_finite, 0, NFORMATS);
    tcase_add_loop_test(tc, exhaustive_narrow, 0, 8);
    tcase_add_loop_test(tc, exhaustive_16, 0, 2);
    tcase_add_loop_test(tc, through_result, 0, 3);
    tcase_add_loop_test(tc, bin_edges, 0, 3);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
