/* report.c: the scoring of a check (alone, and in one pass with covers for f32, bf16 and f16 outputs),
 * computed once here and printed by every front end; covers and its keys: src/report_covers.c. */
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "host/er_alloc.h"
#include "exactref/exactref.h"
#include "exactref/report.h"
#include "exactref/core/er_round.h"
#include "host/er_msg.h"
#include "er_report.h"
#include "report_cpu.h"
#include "result_internal.h"

#include "report_internal.h"
#include "host/er_par.h"

static const char *const bin_names[ER_REPORT_BINS] = {"0 (exact)",   "(0, 1/64]", "(1/64, 1/16]",
                                                      "(1/16, 1/4]", "(1/4, 1/2]", "(1/2, 1]",
                                                      "inf/NaN allowed", "outside"};

const char *er_check_report_bin_name(int bin)
{
    return bin >= 0 && bin < ER_REPORT_BINS ? bin_names[bin] : NULL;
}


void er_check_report_index(const er_check_report *rep, int64_t flat, int64_t idx[3])
{
    int64_t m = rep->shape[rep->ndim - 2], n = rep->shape[rep->ndim - 1];
    idx[0] = (m && n) ? flat / (m * n) : 0;
    idx[1] = n ? (flat / n) % (m ? m : 1) : 0;
    idx[2] = n ? flat % n : 0;
}

/* ---- scoring ---- */

typedef struct acc_ {
    int64_t hist[ER_REPORT_BINS], log_hist[ER_REPORT_LOG_BINS], zero_ok;
    int rank; /* -1 none, 0 covered, 1 ulps beyond, 2 no finite allowed, 3 special: then the score */
    double score, ratio;
    int64_t worst, beyond;
    int why;
} acc_;

typedef struct score_job {
    const er_bounds *bd;
    const fdesc *f; /* NULL: the straightforward path for every element */
    const er_format_info *fi;
    int fmt;
    rows_ wo, wr;
    const unsigned char *cov;
    int64_t r0, r1;
    int zero_known; /* the caller has the count of ranges holding zero */
    acc_ a;
} score_job;

ER_AI void take(acc_ *a, int rank, double score, int64_t e, int why, int64_t beyond, double ratio)
{
    if (rank > a->rank || (rank == a->rank && score > a->score)) {
        a->rank = rank;
        a->score = score;
        a->worst = e;
        a->why = why;
        a->beyond = beyond;
        a->ratio = ratio;
    }
}

/* A covered element's |output - rounded| / tolerance into its bins; covered_ratio into the accumulator's,
 * or into given arrays (the f32 loop keeps four copies, element c in copy c & 3, so that
 * consecutive increments of one bin do not wait on each other) */
ER_AI void ratio_bins(int64_t *hist, int64_t *log_hist, double score)
{
    if (score == 0) {
        hist[ER_REPORT_EXACT]++;
        return;
    }
    int h = (score > 1.0 / 64) + (score > 1.0 / 16) + (score > 0.25) + (score > 0.5);
    hist[ER_REPORT_BIN_64 + h]++;
    int ex, k;
    uint64_t sbits;
    memcpy(&sbits, &score, 8);
    int be = (int)((sbits >> 52) & 0x7FFu);
    if (be > 0 && be < 0x7FF) {
        ex = be - 1022;
        k = (sbits & ((UINT64_C(1) << 52) - 1u)) == 0 ? 1 - ex : -ex;
    } else {
        double mant = frexp(score, &ex);
        k = mant == 0.5 ? 1 - ex : -ex;
    }
    if (k < 0) k = 0;
    if (k > ER_REPORT_LOG_BINS - 1) k = ER_REPORT_LOG_BINS - 1;
    log_hist[k]++;
}

ER_AI void covered_ratio(acc_ *a, double score) { ratio_bins(a->hist, a->log_hist, score); }

/* One element, the straightforward way: the values decoded to doubles (the reference of the fast path,
 * and the path of integer outputs, invalid patterns and outside elements). */
static void score_slow(acc_ *a, const er_bounds *bd, int fmt, const er_format_info *fi, int64_t e, uint64_t ob,
                       uint64_t rb, int covered)
{
    int isfloat = fi->kind == ER_KIND_FLOAT;
    double ov = value_of(fmt, fi, ob), rv = value_of(fmt, fi, rb);
    double lo = value_of(fmt, fi, bd->low[e]), hi = value_of(fmt, fi, bd->high[e]);
    double tol = bd->tolerance[e], score;
    if (bd->has_range[e] && lo <= 0 && 0 <= hi) a->zero_ok++;
    if (!covered) {
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
            beyond = ov > hi ? ulps_between(ordinal(fmt, bd->high[e]), ordinal(fmt, ob))
                             : ulps_between(ordinal(fmt, ob), ordinal(fmt, bd->low[e]));
            rank = 1;
            score = (double)beyond;
        }
        take(a, rank, score, e, why, beyond, 0);
        return;
    }
    /* exact: the same pattern, both NaN, or the same value (a zero of either sign for a zero) */
    if (ob == rb || (isfloat && isnan(ov) && isnan(rv)) || (isfloat && ov == 0 && rv == 0)) {
        a->hist[ER_REPORT_EXACT]++;
        score = 0;
    } else if (!isfloat || !isfinite(ov) || !isfinite(rv) || !(tol > 0) || !isfinite(tol)) {
        /* an allowed infinity or NaN, or an allowed value where the reference is not finite: no ratio */
        a->hist[isfloat ? ER_REPORT_SPECIAL : ER_REPORT_EXACT]++;
        score = 0;
    } else {
        score = fabs(ov - rv) / tol;
        covered_ratio(a, score);
    }
    take(a, 0, score, e, ER_REPORT_WHY_NONE, 0, score);
}

/* An outside element of valid patterns: score_slow's decision on keys (a key is the pattern's ordinal;
 * a NaN high end compares false, as the doubles did). */
ER_AI void outside_keyed(acc_ *a, const fdesc *f, int64_t e, uint64_t ob, uint64_t lo, uint64_t hi, int has_range)
{
    int oc, lc, hc;
    int64_t ko = fkey(f, ob, &oc), kl = fkey(f, lo, &lc), kh = fkey(f, hi, &hc);
    (void)lc;
    if (oc != C_FIN) take(a, 3, 0, e, ER_REPORT_WHY_SPECIAL, 0, 0);
    else if (!has_range) take(a, 2, 0, e, ER_REPORT_WHY_NOT_FINITE, 0, 0);
    else {
        int64_t beyond = (hc != C_NAN && ko > kh) ? ulps_between(kh, ko) : ulps_between(ko, kl);
        take(a, 1, (double)beyond, e, ER_REPORT_WHY_ULPS, beyond, 0);
    }
}

ER_AI void score_rows(score_job *j, const fdesc *f)
{
    const er_bounds *bd = j->bd;
    acc_ *a = &j->a;
    const int sb = f->sb;
    for (int64_t r = j->r0; r < j->r1; r++) {
        const unsigned char *po = j->wo.base + (size_t)row_off(&j->wo, r) * (size_t)sb;
        const unsigned char *pr = j->wr.base + (size_t)row_off(&j->wr, r) * (size_t)sb;
        int64_t e0 = r * j->wo.n;
        for (int64_t c = 0; c < j->wo.n; c++) {
            int64_t e = e0 + c;
            uint64_t ob = load_(po + (size_t)(c * j->wo.s2) * (size_t)sb, sb);
            uint64_t rb = load_(pr + (size_t)(c * j->wr.s2) * (size_t)sb, sb);
            uint64_t lo = bd->low[e], hi = bd->high[e];
            if ((ob | rb | lo | hi) & ~f->valid) {
                score_slow(a, bd, j->fmt, j->fi, e, ob, rb, j->cov[e]);
                continue;
            }
            int oc, rc;
            int64_t kl, kh;
            range_keys(f, lo, hi, &kl, &kh);
            (void)kl;
            (void)kh;
            a->zero_ok += zero_in(f, bd, e);
            if (!j->cov[e]) {
                outside_keyed(a, f, e, ob, lo, hi, bd->has_range[e]);
                continue;
            }
            fkey(f, ob, &oc);
            fkey(f, rb, &rc);
            double tol = bd->tolerance[e], score = 0;
            if (ob == rb || (oc == C_NAN && rc == C_NAN) ||
                (oc == C_FIN && rc == C_FIN && fval(f, ob) == 0 && fval(f, rb) == 0)) {
                a->hist[ER_REPORT_EXACT]++;
            } else if (oc != C_FIN || rc != C_FIN || !(tol > 0) || !isfinite(tol)) {
                a->hist[ER_REPORT_SPECIAL]++;
            } else {
                score = fabs(fval(f, ob) - fval(f, rb)) / tol;
                covered_ratio(a, score);
            }
            /* a covered element is the worst only while nothing outside was seen */
            if (a->rank < 0 || (a->rank == 0 && score > a->score)) {
                a->rank = 0;
                a->score = score;
                a->worst = e;
                a->why = ER_REPORT_WHY_NONE;
                a->beyond = 0;
                a->ratio = score;
            }
        }
    }
}

/* zero_in for IEEE formats that fill their storage, branch-free (keys_ieee's count without the keys) */
ER_AI int64_t zero_ieee(const er_bounds *bd, int64_t e0, int64_t e1, const int sb, const uint32_t inf)
{
    const uint64_t *__restrict low = bd->low, *__restrict high = bd->high;
    const unsigned char *__restrict hr = bd->has_range;
    const int bits = sb * 8;
    const uint32_t magm = sb == 4 ? 0x7FFFFFFFu : 0x7FFFu;
    int64_t zero = 0;
    for (int64_t e = e0; e < e1; e++) {
        uint32_t l = (uint32_t)low[e], u = (uint32_t)high[e];
        uint32_t ml = l & magm, mu = u & magm;
        uint32_t lbad = (uint32_t)((low[e] >> bits) != 0), ubad = (uint32_t)((high[e] >> bits) != 0);
        /* value <= 0: a negative non-NaN pattern or a zero; value >= 0: a positive non-NaN one or a zero */
        uint32_t l0 = lbad | ((ml <= inf) & ((l >> (bits - 1) & 1u) | (uint32_t)(ml == 0)));
        uint32_t u0 = ubad | ((mu <= inf) & ((~u >> (bits - 1) & 1u) | (uint32_t)(mu == 0)));
        zero += (int64_t)((uint32_t)(hr[e] != 0) & l0 & u0);
    }
    return zero;
}

/* ---- covers and scoring in one pass: f32, bf16 and f16 outputs with unit strides ---------------- */

/*
 * One pass over the output, the rounded answer and either the compact keys (covers decided here, and
 * covered written) or a given covered array.  Each element's class and bins come from integers: a
 * covered element is exact (the same pattern, both NaN, or the difference d = |output - rounded|, the
 * binary64 subtraction of the old loop, is zero), special (an infinity or NaN, or a tolerance t that is
 * not finite and positive), or a ratio d / t.  For d and t normal binary64 numbers with exponents p =
 * e(d) - e(t) within +-ER_RMAX, the correctly rounded quotient q = fl(d / t) lies in the log bin
 * k = -p - [m(d) > m(t)] (m: the 52 fraction bits), that is q in (2^-(k+1), 2^-k]:
 *   m(d) > m(t): d / t in (2^p, 2^(p+1)); m(d) - m(t) >= 2^-52 puts d / t above 2^p (1 + 2^-53), beyond
 *                the half ulp of 2^p, so q > 2^p, and q <= 2^(p+1) (rounding is monotone): k = -(p+1);
 *   equal:       d / t = 2^p exactly: k = -p;
 *   m(d) < m(t): d / t in (2^(p-1), 2^p); it is below 2^p (1 - 2^-53), more than the half ulp below 2^p,
 *                and above 2^(p-1) (1 + 2^-53), so q in (2^(p-1), 2^p): k = -p.
 * The histogram's bins are unions of log bins ((1/2, 1] and above: k <= 0; (1/4, 1/2]: k = 1; (1/16,
 * 1/4]: k in 2..3; (1/64, 1/16]: k in 4..5; the rest k >= 6), clamped into 0 .. ER_REPORT_LOG_BINS - 1
 * as ratio_bins clamps; so both histograms come from k without the division.  Other ratios (d or t
 * subnormal, an exponent difference beyond ER_RMAX, where q may be subnormal, zero or infinite) are
 * binned from the division itself, by ratio_bins.  The worst covered element (the first of the largest
 * q) needs q itself: an element is a candidate unless d < fl(fl(t * B) * (1 - 2^-40)) for B > 0 the
 * largest q before its step, which (two roundings of relative error below 2^-52 each; an overflow to
 * infinity only where t * B exceeds every finite d; an underflow only where t * B is below 2^-1022, under
 * every nonzero d of these formats) implies d < t * B, q <= B: it cannot be the first larger one.
 * Candidates are divided (the same correctly rounded quotient as the old loop) and compared in order.
 * Outside elements go to the old per-element code.  Each ISA (AVX-512, AVX2, portable) forms the same
 * lane masks, which the counting below reads.
 */
#define ER_RMAX 1000
#define ER_CAND_C (1.0 - 0x1p-40)

typedef struct fstep {
    uint32_t ok;      /* covered */
    uint32_t exact;   /* covered with ratio 0 */
    uint32_t special; /* covered, no ratio */
    uint32_t binned;  /* covered, a positive ratio in log bin k[q] */
    uint32_t slow;    /* covered, a positive ratio binned from the division */
    uint32_t cand;    /* binned lanes that may be larger than the best so far */
    int32_t k[16];
} fstep;

typedef struct fuse_job {
    const er_bounds *bd;
    const er_bkeys *k; /* NULL: covered given */
    const er_format_info *fi;
    int fmt, kind, zero_known;
    rows_ wo, wr;
    unsigned char *cov;
    int64_t r0, r1, bad, zero;
    int64_t cnt[4][ER_REPORT_LOG_BINS + 1], exact, special; /* log bins (the last a dummy), four copies */
    double best;
    int64_t bidx;
    acc_ a;             /* the outside elements (take), and the slow ratios' bins */
    int64_t *list;      /* cov NULL: the outside elements' flat indices, in order */
    int64_t listed, list_cap;
    int oom;            /* the list could not grow */
} fuse_job;

/* a pattern's value (exact in binary64) */
ER_AI double fuse_val(uint32_t x, const int kind)
{
    if (kind == 2) return f16_lut_[x & 0xFFFFu];
    uint32_t u = kind == 1 ? x << 16 : x;
    float v;
    memcpy(&v, &u, 4);
    return (double)v;
}

ER_AI uint32_t fuse_load(const unsigned char *p, int64_t j, const int kind)
{
    if (kind == 0) {
        uint32_t v;
        memcpy(&v, p + 4 * j, 4);
        return v;
    }
    uint16_t v;
    memcpy(&v, p + 2 * j, 2);
    return v;
}

/* The elements of a step that the masks do not settle: outside ones, slow ratios, candidates (in order). */
__attribute__((noinline)) static void fuse_rare(fuse_job *J, const fstep *s, uint32_t rare, int64_t e0,
                                                const unsigned char *po, const unsigned char *pr, const double *tp,
                                                int64_t j0)
{
    const int kind = J->kind;
    const fdesc *f = kind == 0 ? &f32_desc_ : kind == 1 ? &bf16_desc_ : &f16_desc_;
    const er_bounds *bd = J->bd;
    while (rare) {
        int q = __builtin_ctz(rare);
        rare &= rare - 1u;
        int64_t e = e0 + j0 + q;
        uint32_t ob = kind == 0 ? fuse_load(po, j0 + q, 0) : fuse_load(po, j0 + q, 1);
        if (!(s->ok >> q & 1u)) {
            if (!J->cov) {
                if (J->listed == J->list_cap) {
                    int64_t cap = J->list_cap ? 2 * J->list_cap : 1024;
                    int64_t *nl = (int64_t *)realloc(J->list, (size_t)cap * sizeof *nl);
                    if (!nl) J->oom = 1;
                    else {
                        J->list = nl;
                        J->list_cap = cap;
                    }
                }
                if (J->listed < J->list_cap) J->list[J->listed++] = e;
            }
            if (J->k) {
                /* a range that the keys hold (not empty: has_range, both ends valid and not NaN, low <= high)
                 * as outside_keyed reads it, from the keys: they are the ends' ordinals */
                int64_t kl = kind == 0 ? ((const int32_t *)J->k->lo)[e] : ((const int16_t *)J->k->lo)[e];
                int64_t kh = kind == 0 ? ((const int32_t *)J->k->hi)[e] : ((const int16_t *)J->k->hi)[e];
                if (kl <= kh) {
                    int oc;
                    int64_t ko = fkey(f, ob, &oc);
                    if (oc != C_FIN) take(&J->a, 3, 0, e, ER_REPORT_WHY_SPECIAL, 0, 0);
                    else {
                        int64_t beyond = ko > kh ? ulps_between(kh, ko) : ulps_between(ko, kl);
                        take(&J->a, 1, (double)beyond, e, ER_REPORT_WHY_ULPS, beyond, 0);
                    }
                    continue;
                }
            }
            uint64_t lo = bd->low[e], hi = bd->high[e], rb = kind == 0 ? fuse_load(pr, j0 + q, 0) : fuse_load(pr, j0 + q, 1);
            if ((lo | hi) & ~f->valid) score_slow(&J->a, bd, J->fmt, J->fi, e, ob, rb, 0);
            else outside_keyed(&J->a, f, e, ob, lo, hi, bd->has_range[e]);
            continue;
        }
        uint32_t rb = kind == 0 ? fuse_load(pr, j0 + q, 0) : fuse_load(pr, j0 + q, 1);
        double d = kind == 0 ? fabs(fuse_val(ob, 0) - fuse_val(rb, 0))
                   : kind == 1 ? fabs(fuse_val(ob, 1) - fuse_val(rb, 1))
                               : fabs(fuse_val(ob, 2) - fuse_val(rb, 2));
        double v = d / tp[j0 + q];
        if (s->slow >> q & 1u) ratio_bins(J->a.hist, J->a.log_hist, v);
        if (v > J->best) {
            J->best = v;
            J->bidx = e;
        }
    }
}

/* A step's counts but the log bins' (counted by each loop); lanes: the step's width */
ER_AI void fuse_settle(fuse_job *J, fstep *s, int lanes, int64_t e0, const unsigned char *po,
                       const unsigned char *pr, const double *tp, int64_t j0)
{
    uint32_t all = lanes == 32 ? ~0u : (1u << lanes) - 1u;
    J->bad += lanes - __builtin_popcount(s->ok);
    J->exact += __builtin_popcount(s->exact);
    J->special += __builtin_popcount(s->special);
    /* the first covered element is the worst (ratio 0) until a larger one comes */
    if (J->bidx < 0 && s->ok) {
        J->bidx = e0 + j0 + __builtin_ctz(s->ok);
        J->best = 0;
    }
    uint32_t rare = (~s->ok & all) | s->slow | s->cand;
    if (rare) fuse_rare(J, s, rare, e0, po, pr, tp, j0);
}

/* the log bins of 8 lanes, one a byte (ER_REPORT_LOG_BINS: none), counted in four copies so that
 * increments of one bin do not wait on each other */
ER_AI void fuse_count(fuse_job *J, uint64_t b8)
{
    for (int q = 0; q < 8; q += 4) {
        J->cnt[0][b8 & 0xFFu]++;
        J->cnt[1][b8 >> 8 & 0xFFu]++;
        J->cnt[2][b8 >> 16 & 0xFFu]++;
        J->cnt[3][b8 >> 24 & 0xFFu]++;
        b8 >>= 32;
    }
}

/* One element as a one-lane step (the portable loop and every vector loop's tail). */
ER_AI void fuse_one(fuse_job *J, int64_t e0, const unsigned char *po, const unsigned char *pr, const double *tp,
                    int64_t j, const int kind, const int mode)
{
    const uint32_t magm = kind == 0 ? 0x7FFFFFFFu : 0x7FFFu;
    const uint32_t inf = kind == 0 ? 0x7F800000u : kind == 1 ? 0x7F80u : 0x7C00u;
    const int bits = kind == 0 ? 32 : 16;
    fstep s;
    s.ok = s.exact = s.special = s.binned = s.slow = s.cand = 0;
    uint32_t ob = fuse_load(po, j, kind), rb = fuse_load(pr, j, kind);
    uint32_t mo = ob & magm, mr = rb & magm, ok;
    int64_t e = e0 + j;
    if (mode == 0 && ob == rb)
        ok = (J->k->fl[e] >> 3) & 1u; /* the rounded answer's own decision */
    else if (mode == 0) {
        int32_t kl, kh;
        if (kind == 0) {
            kl = ((const int32_t *)J->k->lo)[e];
            kh = ((const int32_t *)J->k->hi)[e];
        } else {
            kl = ((const int16_t *)J->k->lo)[e];
            kh = ((const int16_t *)J->k->hi)[e];
        }
        int32_t sx = -(int32_t)(ob >> (bits - 1) & 1u), kx = (int32_t)(mo ^ (uint32_t)sx) - sx;
        uint32_t fin = (uint32_t)(kl <= kx) & (uint32_t)(kx <= kh) & (uint32_t)(mo < inf), isinf_ = mo == inf;
        uint32_t cls = (uint32_t)(mo > inf) << 2 | (isinf_ & (uint32_t)(sx & 1)) << 1 | (isinf_ & (uint32_t)(~sx & 1));
        ok = fin | (uint32_t)((J->k->fl[e] & cls) != 0);
    } else
        ok = J->cov[e] != 0;
    if (mode == 0 && J->cov) J->cov[e] = (unsigned char)ok;
    if (ok) {
        s.ok = 1;
        double t = tp[j];
        if (ob == rb || (mo > inf && mr > inf) || (mo == 0 && mr == 0)) s.exact = 1;
        else if (!(mo < inf && mr < inf && t > 0 && t < INFINITY)) s.special = 1;
        else {
            double d = fabs(fuse_val(ob, kind) - fuse_val(rb, kind));
            uint64_t db, tb;
            memcpy(&db, &d, 8);
            memcpy(&tb, &t, 8);
            int64_t ed = (int64_t)(db >> 52), et = (int64_t)(tb >> 52), p = ed - et;
            if (d == 0) s.exact = 1;
            else if (ed == 0 || et == 0 || p < -ER_RMAX || p > ER_RMAX) s.slow = 1;
            else {
                const uint64_t m52 = (UINT64_C(1) << 52) - 1u;
                int64_t k = -p - ((db & m52) > (tb & m52));
                s.k[0] = (int32_t)(k < 0 ? 0 : k > ER_REPORT_LOG_BINS - 1 ? ER_REPORT_LOG_BINS - 1 : k);
                s.binned = 1;
                J->cnt[j & 3][s.k[0]]++;
                double B = J->best;
                if (!(B > 0) || !(d < (t * B) * ER_CAND_C)) s.cand = 1;
            }
        }
    }
    fuse_settle(J, &s, 1, e0, po, pr, tp, j);
}

/* zero_ieee's count for the rows (covered given and the count not given) */
ER_AI void fuse_zero(fuse_job *J, int64_t e0, int64_t n, const int kind)
{
    if (J->k == NULL && !J->zero_known)
        J->zero += zero_ieee(J->bd, e0, e0 + n, kind == 0 ? 4 : 2,
                             kind == 0 ? 0x7F800000u : kind == 1 ? 0x7F80u : 0x7C00u);
}

ER_AI void fuse_rows_portable(fuse_job *J, const int kind, const int mode)
{
    const int sb = kind == 0 ? 4 : 2;
    const int64_t n = J->wo.n;
    for (int64_t r = J->r0; r < J->r1; r++) {
        const unsigned char *po = J->wo.base + (size_t)row_off(&J->wo, r) * (size_t)sb;
        const unsigned char *pr = J->wr.base + (size_t)row_off(&J->wr, r) * (size_t)sb;
        const int64_t e0 = r * n;
        const double *tp = J->bd->tolerance + e0;
        for (int64_t j = 0; j < n; j++) fuse_one(J, e0, po, pr, tp, j, kind, mode);
        fuse_zero(J, e0, n, kind);
    }
}

#ifdef ER_AVX2_CLONES
#define ER_AVX2F __attribute__((target("avx2,f16c")))
#define ER_AVX512 __attribute__((target("avx2,f16c,avx512f,avx512bw,avx512vl,avx512dq")))

/* 16 lanes a step */
ER_AVX512 static inline __attribute__((always_inline)) void fuse_rows_avx512(fuse_job *J, const int kind,
                                                                               const int mode)
{
    const int sb = kind == 0 ? 4 : 2;
    const int64_t n = J->wo.n;
    const uint32_t inf = kind == 0 ? 0x7F800000u : kind == 1 ? 0x7F80u : 0x7C00u;
    const __m512i magm = _mm512_set1_epi32(kind == 0 ? 0x7FFFFFFF : 0x7FFF), vinf = _mm512_set1_epi32((int)inf);
    const __m512i c1 = _mm512_set1_epi32(1), c2 = _mm512_set1_epi32(2), c4 = _mm512_set1_epi32(4),
                  c8 = _mm512_set1_epi32(8);
    const __m512i m52 = _mm512_set1_epi64((INT64_C(1) << 52) - 1), abs64 = _mm512_set1_epi64(INT64_MAX);
    const __m512i rmax = _mm512_set1_epi64(ER_RMAX), rmin = _mm512_set1_epi64(-ER_RMAX), one64 = _mm512_set1_epi64(1),
                  last = _mm512_set1_epi64(ER_REPORT_LOG_BINS - 1);
    const __m512d dz = _mm512_setzero_pd(), dinf = _mm512_set1_pd(INFINITY), cc = _mm512_set1_pd(ER_CAND_C);
    const __m128i bone = _mm_set1_epi8(1);
    const __m512i nobin = _mm512_set1_epi32(ER_REPORT_LOG_BINS);
    for (int64_t r = J->r0; r < J->r1; r++) {
        const unsigned char *po = J->wo.base + (size_t)row_off(&J->wo, r) * (size_t)sb;
        const unsigned char *pr = J->wr.base + (size_t)row_off(&J->wr, r) * (size_t)sb;
        const int64_t e0 = r * n;
        const double *tp = J->bd->tolerance + e0;
        unsigned char *cv = J->cov ? J->cov + e0 : NULL;
        int64_t j = 0;
        for (; j + 16 <= n; j += 16) {
            __m512i x, y;
            if (kind == 0) {
                x = _mm512_loadu_si512((const void *)(po + 4 * j));
                y = _mm512_loadu_si512((const void *)(pr + 4 * j));
            } else {
                x = _mm512_cvtepu16_epi32(_mm256_loadu_si256((const __m256i *)(const void *)(po + 2 * j)));
                y = _mm512_cvtepu16_epi32(_mm256_loadu_si256((const __m256i *)(const void *)(pr + 2 * j)));
            }
            __m512i mx = _mm512_and_si512(x, magm), my = _mm512_and_si512(y, magm);
            __mmask16 ok;
            if (mode == 0) {
                __m512i FL = _mm512_cvtepu8_epi32(_mm_loadu_si128((const __m128i *)(const void *)(J->k->fl + e0 + j)));
                __mmask16 eq = _mm512_cmpeq_epi32_mask(x, y), ne = (__mmask16)~eq;
                /* the output the rounded answer: its decision, made with the keys; else the range's keys */
                ok = eq & _mm512_test_epi32_mask(FL, c8);
                if (ne) {
                    __m512i L, H;
                    if (kind == 0) {
                        L = _mm512_maskz_loadu_epi32(ne, (const void *)((const int32_t *)J->k->lo + e0 + j));
                        H = _mm512_maskz_loadu_epi32(ne, (const void *)((const int32_t *)J->k->hi + e0 + j));
                    } else {
                        L = _mm512_cvtepi16_epi32(_mm256_maskz_loadu_epi16(ne, (const void *)((const int16_t *)J->k->lo + e0 + j)));
                        H = _mm512_cvtepi16_epi32(_mm256_maskz_loadu_epi16(ne, (const void *)((const int16_t *)J->k->hi + e0 + j)));
                    }
                    __m512i sx = kind == 0 ? _mm512_srai_epi32(x, 31) : _mm512_srai_epi32(_mm512_slli_epi32(x, 16), 31);
                    __m512i kx = _mm512_sub_epi32(_mm512_xor_si512(mx, sx), sx);
                    __mmask16 fin = _mm512_cmple_epi32_mask(L, kx) & _mm512_cmple_epi32_mask(kx, H) &
                                    _mm512_cmplt_epi32_mask(mx, vinf);
                    __mmask16 isnan_ = _mm512_cmpgt_epi32_mask(mx, vinf), isinf_ = _mm512_cmpeq_epi32_mask(mx, vinf);
                    __mmask16 neg = _mm512_movepi32_mask(sx);
                    ok |= ne & (fin | (isnan_ & _mm512_test_epi32_mask(FL, c4)) |
                                (isinf_ & neg & _mm512_test_epi32_mask(FL, c2)) |
                                (isinf_ & ~neg & _mm512_test_epi32_mask(FL, c1)));
                }
                if (cv) _mm_storeu_si128((__m128i *)(void *)(cv + j), _mm_maskz_mov_epi8(ok, bone));
            } else {
                __m128i cb = _mm_loadu_si128((const __m128i *)(const void *)(cv + j));
                ok = _mm_test_epi8_mask(cb, cb);
            }
            fstep s;
            s.ok = ok;
            __mmask16 ex = ok & (_mm512_cmpeq_epi32_mask(x, y) |
                                 (_mm512_cmpgt_epi32_mask(mx, vinf) & _mm512_cmpgt_epi32_mask(my, vinf)) |
                                 (_mm512_cmpeq_epi32_mask(mx, _mm512_setzero_si512()) &
                                  _mm512_cmpeq_epi32_mask(my, _mm512_setzero_si512())));
            if (ex == ok) {
                /* every covered element of the step exact: no tolerance read */
                s.exact = ex;
                s.special = s.binned = s.slow = s.cand = 0;
                fuse_settle(J, &s, 16, e0, po, pr, tp, j);
                continue;
            }
            __mmask16 fine = ok & ~ex & _mm512_cmplt_epi32_mask(mx, vinf) & _mm512_cmplt_epi32_mask(my, vinf);
            __m512d t0 = _mm512_maskz_loadu_pd((__mmask8)fine, tp + j);
            __m512d t1 = _mm512_maskz_loadu_pd((__mmask8)(fine >> 8), tp + j + 8);
            __mmask8 g0 = _mm512_cmp_pd_mask(t0, dz, _CMP_GT_OQ) & _mm512_cmp_pd_mask(t0, dinf, _CMP_LT_OQ);
            __mmask8 g1 = _mm512_cmp_pd_mask(t1, dz, _CMP_GT_OQ) & _mm512_cmp_pd_mask(t1, dinf, _CMP_LT_OQ);
            __mmask16 rat = fine & (__mmask16)(g0 | (unsigned)g1 << 8);
            __m512 fo, fr;
            if (kind == 0) {
                fo = _mm512_castsi512_ps(x);
                fr = _mm512_castsi512_ps(y);
            } else if (kind == 1) {
                fo = _mm512_castsi512_ps(_mm512_slli_epi32(x, 16));
                fr = _mm512_castsi512_ps(_mm512_slli_epi32(y, 16));
            } else {
                fo = _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(const void *)(po + 2 * j)));
                fr = _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(const void *)(pr + 2 * j)));
            }
            __m512d o0 = _mm512_cvtps_pd(_mm512_castps512_ps256(fo)), r0 = _mm512_cvtps_pd(_mm512_castps512_ps256(fr));
            __m512d o1 = _mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(fo), 1)));
            __m512d r1 = _mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(fr), 1)));
            __m512i db0 = _mm512_and_si512(_mm512_castpd_si512(_mm512_sub_pd(o0, r0)), abs64);
            __m512i db1 = _mm512_and_si512(_mm512_castpd_si512(_mm512_sub_pd(o1, r1)), abs64);
            __m512i tb0 = _mm512_castpd_si512(t0), tb1 = _mm512_castpd_si512(t1);
            __m512i ed0 = _mm512_srli_epi64(db0, 52), ed1 = _mm512_srli_epi64(db1, 52);
            __m512i et0 = _mm512_srli_epi64(tb0, 52), et1 = _mm512_srli_epi64(tb1, 52);
            __m512i p0 = _mm512_sub_epi64(ed0, et0), p1 = _mm512_sub_epi64(ed1, et1);
            __mmask8 z0 = _mm512_cmpeq_epi64_mask(db0, _mm512_setzero_si512()),
                     z1 = _mm512_cmpeq_epi64_mask(db1, _mm512_setzero_si512());
            __mmask8 l0 = _mm512_cmpeq_epi64_mask(ed0, _mm512_setzero_si512()) |
                          _mm512_cmpeq_epi64_mask(et0, _mm512_setzero_si512()) | _mm512_cmpgt_epi64_mask(p0, rmax) |
                          _mm512_cmplt_epi64_mask(p0, rmin);
            __mmask8 l1 = _mm512_cmpeq_epi64_mask(ed1, _mm512_setzero_si512()) |
                          _mm512_cmpeq_epi64_mask(et1, _mm512_setzero_si512()) | _mm512_cmpgt_epi64_mask(p1, rmax) |
                          _mm512_cmplt_epi64_mask(p1, rmin);
            __mmask8 q0 = _mm512_cmpgt_epu64_mask(_mm512_and_si512(db0, m52), _mm512_and_si512(tb0, m52));
            __mmask8 q1 = _mm512_cmpgt_epu64_mask(_mm512_and_si512(db1, m52), _mm512_and_si512(tb1, m52));
            __m512i k0 = _mm512_sub_epi64(_mm512_setzero_si512(), p0), k1 = _mm512_sub_epi64(_mm512_setzero_si512(), p1);
            k0 = _mm512_mask_sub_epi64(k0, q0, k0, one64);
            k1 = _mm512_mask_sub_epi64(k1, q1, k1, one64);
            k0 = _mm512_min_epi64(_mm512_max_epi64(k0, _mm512_setzero_si512()), last);
            k1 = _mm512_min_epi64(_mm512_max_epi64(k1, _mm512_setzero_si512()), last);
            __m512i kv = _mm512_inserti64x4(_mm512_castsi256_si512(_mm512_cvtepi64_epi32(k0)), _mm512_cvtepi64_epi32(k1), 1);
            __mmask16 zz = (__mmask16)(z0 | (unsigned)z1 << 8), sl = (__mmask16)(l0 | (unsigned)l1 << 8);
            s.exact = ex | (rat & zz);
            s.special = ok & ~ex & ~rat;
            s.slow = rat & ~zz & sl;
            s.binned = rat & ~zz & ~sl;
            double B = J->best;
            if (!(B > 0)) s.cand = s.binned;
            else {
                __m512d bb = _mm512_set1_pd(B);
                __mmask8 a0 = _mm512_cmp_pd_mask(_mm512_castsi512_pd(db0), _mm512_mul_pd(_mm512_mul_pd(t0, bb), cc), _CMP_NLT_UQ);
                __mmask8 a1 = _mm512_cmp_pd_mask(_mm512_castsi512_pd(db1), _mm512_mul_pd(_mm512_mul_pd(t1, bb), cc), _CMP_NLT_UQ);
                s.cand = s.binned & (__mmask16)(a0 | (unsigned)a1 << 8);
            }
            /* the log bins' counts (other lanes in the dummy bin), four copies so that increments of one
             * bin do not wait on each other */
            if (s.binned) {
                __m128i kb = _mm512_cvtepi32_epi8(_mm512_mask_blend_epi32((__mmask16)s.binned, nobin, kv));
                fuse_count(J, (uint64_t)_mm_cvtsi128_si64(kb));
                fuse_count(J, (uint64_t)_mm_extract_epi64(kb, 1));
            }
            fuse_settle(J, &s, 16, e0, po, pr, tp, j);
        }
        for (; j < n; j++) fuse_one(J, e0, po, pr, tp, j, kind, mode);
        fuse_zero(J, e0, n, kind);
    }
}

/* 8 lanes a step */
ER_AVX2F static inline __attribute__((always_inline)) void fuse_rows_avx2(fuse_job *J, const int kind, const int mode)
{
    const int sb = kind == 0 ? 4 : 2;
    const int64_t n = J->wo.n;
    const uint32_t inf = kind == 0 ? 0x7F800000u : kind == 1 ? 0x7F80u : 0x7C00u;
    const __m256i magm = _mm256_set1_epi32(kind == 0 ? 0x7FFFFFFF : 0x7FFF), vinf = _mm256_set1_epi32((int)inf);
    const __m256i z = _mm256_setzero_si256(), c1 = _mm256_set1_epi32(1), c2 = _mm256_set1_epi32(2),
                  c4 = _mm256_set1_epi32(4), c8 = _mm256_set1_epi32(8), ones = _mm256_set1_epi32(-1);
    const __m256i m52 = _mm256_set1_epi64x((INT64_C(1) << 52) - 1), abs64 = _mm256_set1_epi64x(INT64_MAX);
    const __m256i rmax = _mm256_set1_epi64x(ER_RMAX), rmin = _mm256_set1_epi64x(-ER_RMAX),
                  one64 = _mm256_set1_epi64x(1), last = _mm256_set1_epi64x(ER_REPORT_LOG_BINS - 1);
    const __m256i lo32 = _mm256_setr_epi32(0, 2, 4, 6, 0, 2, 4, 6);
    const __m256d dz = _mm256_setzero_pd(), dinf = _mm256_set1_pd(INFINITY), cc = _mm256_set1_pd(ER_CAND_C);
    const __m256i nobin = _mm256_set1_epi32(ER_REPORT_LOG_BINS), bitsel = _mm256_setr_epi32(1, 2, 4, 8, 16, 32, 64, 128);
    for (int64_t r = J->r0; r < J->r1; r++) {
        const unsigned char *po = J->wo.base + (size_t)row_off(&J->wo, r) * (size_t)sb;
        const unsigned char *pr = J->wr.base + (size_t)row_off(&J->wr, r) * (size_t)sb;
        const int64_t e0 = r * n;
        const double *tp = J->bd->tolerance + e0;
        unsigned char *cv = J->cov ? J->cov + e0 : NULL;
        int64_t j = 0;
        for (; j + 8 <= n; j += 8) {
            __m256i x, y;
            if (kind == 0) {
                x = _mm256_loadu_si256((const __m256i *)(const void *)(po + 4 * j));
                y = _mm256_loadu_si256((const __m256i *)(const void *)(pr + 4 * j));
            } else {
                x = _mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)(const void *)(po + 2 * j)));
                y = _mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)(const void *)(pr + 2 * j)));
            }
            __m256i mx = _mm256_and_si256(x, magm), my = _mm256_and_si256(y, magm);
            __m256i okv;
            if (mode == 0) {
                __m256i FL = _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)(const void *)(J->k->fl + e0 + j)));
                __m256i eqv = _mm256_cmpeq_epi32(x, y);
                if (_mm256_movemask_ps(_mm256_castsi256_ps(eqv)) == 0xFF) {
                    /* every output the rounded answer: its decisions, made with the keys */
                    okv = _mm256_cmpeq_epi32(_mm256_and_si256(FL, c8), c8);
                } else {
                    __m256i L, H;
                    if (kind == 0) {
                        L = _mm256_loadu_si256((const __m256i *)(const void *)((const int32_t *)J->k->lo + e0 + j));
                        H = _mm256_loadu_si256((const __m256i *)(const void *)((const int32_t *)J->k->hi + e0 + j));
                    } else {
                        L = _mm256_cvtepi16_epi32(_mm_loadu_si128((const __m128i *)(const void *)((const int16_t *)J->k->lo + e0 + j)));
                        H = _mm256_cvtepi16_epi32(_mm_loadu_si128((const __m128i *)(const void *)((const int16_t *)J->k->hi + e0 + j)));
                    }
                    __m256i sx = kind == 0 ? _mm256_srai_epi32(x, 31) : _mm256_srai_epi32(_mm256_slli_epi32(x, 16), 31);
                    __m256i kx = _mm256_sub_epi32(_mm256_xor_si256(mx, sx), sx);
                    __m256i out = _mm256_or_si256(_mm256_cmpgt_epi32(L, kx), _mm256_cmpgt_epi32(kx, H));
                    __m256i fin = _mm256_andnot_si256(out, _mm256_cmpgt_epi32(vinf, mx));
                    __m256i isnan_ = _mm256_cmpgt_epi32(mx, vinf), isinf_ = _mm256_cmpeq_epi32(mx, vinf);
                    __m256i cls = _mm256_or_si256(_mm256_and_si256(isnan_, c4),
                                                  _mm256_and_si256(isinf_, _mm256_blendv_epi8(c1, c2, sx)));
                    __m256i sp = _mm256_cmpeq_epi32(_mm256_and_si256(FL, cls), z);
                    okv = _mm256_or_si256(fin, _mm256_xor_si256(sp, ones));
                }
                __m128i w16 = _mm_packs_epi32(_mm256_castsi256_si128(okv), _mm256_extracti128_si256(okv, 1));
                if (cv)
                    _mm_storel_epi64((__m128i *)(void *)(cv + j), _mm_and_si128(_mm_packs_epi16(w16, w16), _mm_set1_epi8(1)));
            } else {
                __m256i cb = _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)(const void *)(cv + j)));
                okv = _mm256_xor_si256(_mm256_cmpeq_epi32(cb, z), ones);
            }
            fstep s;
            uint32_t ok = (uint32_t)_mm256_movemask_ps(_mm256_castsi256_ps(okv));
            s.ok = ok;
            __m256i exv = _mm256_or_si256(_mm256_cmpeq_epi32(x, y),
                                          _mm256_and_si256(_mm256_cmpgt_epi32(mx, vinf), _mm256_cmpgt_epi32(my, vinf)));
            exv = _mm256_or_si256(exv, _mm256_and_si256(_mm256_cmpeq_epi32(mx, z), _mm256_cmpeq_epi32(my, z)));
            uint32_t ex = ok & (uint32_t)_mm256_movemask_ps(_mm256_castsi256_ps(exv));
            if (ex == ok) {
                s.exact = ex;
                s.special = s.binned = s.slow = s.cand = 0;
                fuse_settle(J, &s, 8, e0, po, pr, tp, j);
                continue;
            }
            __m256i finev = _mm256_and_si256(_mm256_andnot_si256(exv, okv),
                                             _mm256_and_si256(_mm256_cmpgt_epi32(vinf, mx), _mm256_cmpgt_epi32(vinf, my)));
            __m256i fm0 = _mm256_cvtepi32_epi64(_mm256_castsi256_si128(finev));
            __m256i fm1 = _mm256_cvtepi32_epi64(_mm256_extracti128_si256(finev, 1));
            __m256d t0 = _mm256_maskload_pd(tp + j, fm0), t1 = _mm256_maskload_pd(tp + j + 4, fm1);
            __m256d g0 = _mm256_and_pd(_mm256_cmp_pd(t0, dz, _CMP_GT_OQ), _mm256_cmp_pd(t0, dinf, _CMP_LT_OQ));
            __m256d g1 = _mm256_and_pd(_mm256_cmp_pd(t1, dz, _CMP_GT_OQ), _mm256_cmp_pd(t1, dinf, _CMP_LT_OQ));
            uint32_t fine = (uint32_t)_mm256_movemask_ps(_mm256_castsi256_ps(finev));
            uint32_t rat = fine & ((uint32_t)_mm256_movemask_pd(g0) | (uint32_t)_mm256_movemask_pd(g1) << 4);
            __m256 fo, fr;
            if (kind == 0) {
                fo = _mm256_castsi256_ps(x);
                fr = _mm256_castsi256_ps(y);
            } else if (kind == 1) {
                fo = _mm256_castsi256_ps(_mm256_slli_epi32(x, 16));
                fr = _mm256_castsi256_ps(_mm256_slli_epi32(y, 16));
            } else {
                fo = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(const void *)(po + 2 * j)));
                fr = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(const void *)(pr + 2 * j)));
            }
            __m256i db0 = _mm256_and_si256(_mm256_castpd_si256(_mm256_sub_pd(_mm256_cvtps_pd(_mm256_castps256_ps128(fo)),
                                                                               _mm256_cvtps_pd(_mm256_castps256_ps128(fr)))),
                                           abs64);
            __m256i db1 = _mm256_and_si256(_mm256_castpd_si256(_mm256_sub_pd(_mm256_cvtps_pd(_mm256_extractf128_ps(fo, 1)),
                                                                               _mm256_cvtps_pd(_mm256_extractf128_ps(fr, 1)))),
                                           abs64);
            __m256i tb0 = _mm256_castpd_si256(t0), tb1 = _mm256_castpd_si256(t1);
            __m256i ed0 = _mm256_srli_epi64(db0, 52), ed1 = _mm256_srli_epi64(db1, 52);
            __m256i et0 = _mm256_srli_epi64(tb0, 52), et1 = _mm256_srli_epi64(tb1, 52);
            __m256i p0 = _mm256_sub_epi64(ed0, et0), p1 = _mm256_sub_epi64(ed1, et1);
            __m256i zv0 = _mm256_cmpeq_epi64(db0, z), zv1 = _mm256_cmpeq_epi64(db1, z);
            __m256i lv0 = _mm256_or_si256(_mm256_or_si256(_mm256_cmpeq_epi64(ed0, z), _mm256_cmpeq_epi64(et0, z)),
                                          _mm256_or_si256(_mm256_cmpgt_epi64(p0, rmax), _mm256_cmpgt_epi64(rmin, p0)));
            __m256i lv1 = _mm256_or_si256(_mm256_or_si256(_mm256_cmpeq_epi64(ed1, z), _mm256_cmpeq_epi64(et1, z)),
                                          _mm256_or_si256(_mm256_cmpgt_epi64(p1, rmax), _mm256_cmpgt_epi64(rmin, p1)));
            /* the fractions are below 2^52: a signed comparison */
            __m256i q0 = _mm256_cmpgt_epi64(_mm256_and_si256(db0, m52), _mm256_and_si256(tb0, m52));
            __m256i q1 = _mm256_cmpgt_epi64(_mm256_and_si256(db1, m52), _mm256_and_si256(tb1, m52));
            __m256i k0 = _mm256_sub_epi64(_mm256_sub_epi64(z, p0), _mm256_and_si256(q0, one64));
            __m256i k1 = _mm256_sub_epi64(_mm256_sub_epi64(z, p1), _mm256_and_si256(q1, one64));
            k0 = _mm256_blendv_epi8(k0, z, _mm256_cmpgt_epi64(z, k0));
            k1 = _mm256_blendv_epi8(k1, z, _mm256_cmpgt_epi64(z, k1));
            k0 = _mm256_blendv_epi8(k0, last, _mm256_cmpgt_epi64(k0, last));
            k1 = _mm256_blendv_epi8(k1, last, _mm256_cmpgt_epi64(k1, last));
            __m256i kv = _mm256_permute2x128_si256(_mm256_permutevar8x32_epi32(k0, lo32),
                                                   _mm256_permutevar8x32_epi32(k1, lo32), 0x20);
            uint32_t zz = (uint32_t)_mm256_movemask_pd(_mm256_castsi256_pd(zv0)) |
                          (uint32_t)_mm256_movemask_pd(_mm256_castsi256_pd(zv1)) << 4;
            uint32_t sl = (uint32_t)_mm256_movemask_pd(_mm256_castsi256_pd(lv0)) |
                          (uint32_t)_mm256_movemask_pd(_mm256_castsi256_pd(lv1)) << 4;
            s.exact = ex | (rat & zz);
            s.special = ok & ~ex & ~rat;
            s.slow = rat & ~zz & sl;
            s.binned = rat & ~zz & ~sl;
            double B = J->best;
            if (!(B > 0)) s.cand = s.binned;
            else {
                __m256d bb = _mm256_set1_pd(B);
                __m256d a0 = _mm256_cmp_pd(_mm256_castsi256_pd(db0), _mm256_mul_pd(_mm256_mul_pd(t0, bb), cc), _CMP_NLT_UQ);
                __m256d a1 = _mm256_cmp_pd(_mm256_castsi256_pd(db1), _mm256_mul_pd(_mm256_mul_pd(t1, bb), cc), _CMP_NLT_UQ);
                s.cand = s.binned & ((uint32_t)_mm256_movemask_pd(a0) | (uint32_t)_mm256_movemask_pd(a1) << 4);
            }
            if (s.binned) {
                __m256i kk = _mm256_blendv_epi8(
                    nobin, kv, _mm256_cmpeq_epi32(_mm256_and_si256(_mm256_set1_epi32((int)s.binned), bitsel), bitsel));
                /* the 8 bins as bytes of one integer */
                __m128i k16 = _mm_packs_epi32(_mm256_castsi256_si128(kk), _mm256_extracti128_si256(kk, 1));
                fuse_count(J, (uint64_t)_mm_cvtsi128_si64(_mm_packus_epi16(k16, k16)));
            }
            fuse_settle(J, &s, 8, e0, po, pr, tp, j);
        }
        for (; j < n; j++) fuse_one(J, e0, po, pr, tp, j, kind, mode);
        fuse_zero(J, e0, n, kind);
    }
}
#endif

#define ER_FUSE(kind, mode)                                                                                    \
    static void fuse_p##kind##mode(fuse_job *J) { fuse_rows_portable(J, kind, mode); }                          \
    ER_FUSE_VEC(kind, mode)
#ifdef ER_AVX2_CLONES
#define ER_FUSE_VEC(kind, mode)                                                                                \
    ER_AVX2F static void fuse_a##kind##mode(fuse_job *J) { fuse_rows_avx2(J, kind, mode); }                     \
    ER_AVX512 static void fuse_x##kind##mode(fuse_job *J) { fuse_rows_avx512(J, kind, mode); }
#else
#define ER_FUSE_VEC(kind, mode)
#endif
ER_FUSE(0, 0)
ER_FUSE(1, 0)
ER_FUSE(2, 0)
ER_FUSE(0, 1)
ER_FUSE(1, 1)
ER_FUSE(2, 1)

static void *fuse_thread(void *arg);

/* the blocks of a fused pass and the next one to take */
/* block c of the fused pass (host/er_par.h's loop: the threads take the blocks in turn) */
static void fuse_block(void *jobs, int c) { (void)fuse_thread(&((fuse_job *)jobs)[c]); }

static void *fuse_thread(void *arg)
{
    fuse_job *J = (fuse_job *)arg;
    typedef void (*fn_t)(fuse_job *);
    static fn_t const port[2][3] = {{fuse_p00, fuse_p10, fuse_p20}, {fuse_p01, fuse_p11, fuse_p21}};
    int mode = J->k ? 0 : 1;
    fn_t fn = port[mode][J->kind];
#ifdef ER_AVX2_CLONES
    static fn_t const avx2[2][3] = {{fuse_a00, fuse_a10, fuse_a20}, {fuse_a01, fuse_a11, fuse_a21}};
    static fn_t const avx512[2][3] = {{fuse_x00, fuse_x10, fuse_x20}, {fuse_x01, fuse_x11, fuse_x21}};
    if (have_avx512()) fn = avx512[mode][J->kind];
    else if (have_avx2()) fn = avx2[mode][J->kind];
#endif
    fn(J);
    return NULL;
}

static void *score_thread(void *arg)
{
    score_job *j = (score_job *)arg;
    if (!j->f) {
        int sb = j->fi->storage_bytes;
        for (int64_t r = j->r0; r < j->r1; r++) {
            int64_t oo = row_off(&j->wo, r), orr = row_off(&j->wr, r);
            for (int64_t c = 0; c < j->wo.n; c++) {
                int64_t e = r * j->wo.n + c;
                uint64_t ob = 0, rb = 0;
                memcpy(&ob, j->wo.base + (size_t)(oo + c * j->wo.s2) * (size_t)sb, (size_t)sb);
                memcpy(&rb, j->wr.base + (size_t)(orr + c * j->wr.s2) * (size_t)sb, (size_t)sb);
                score_slow(&j->a, j->bd, j->fmt, j->fi, e, ob, rb, j->cov[e]);
            }
        }
    } else if (j->f->fmt == ER_FMT_F32)
        score_rows(j, &f32_desc_);
    else
        score_rows(j, j->f);
    return NULL;
}

er_status er_check_report_score(const er_bounds *bd, const er_tensor *output, const er_tensor *R,
                                const unsigned char *cov, int64_t outside, const er_tensor *a,
                                const er_tensor *b, int64_t *outside_index, int64_t outside_cap, er_check_report *rep,
                                char *msg, size_t msg_size)
{
    return er_check_report_score_kept(bd, output, R, cov, outside, -1, a, b, outside_index, outside_cap, rep, msg,
                                      msg_size);
}

/* er_check_report_score's and er_check_report_narrower's check of their arguments (report_internal.h). */
er_status er_report_output_shape_(const char *fn, const er_tensor *output, const er_tensor *R, int64_t want,
                                  const char *want_name, er_format_info *fi, int64_t *count, char *msg, size_t msg_size)
{
    if ((output->ndim != 2 && output->ndim != 3) || er_format_get_info(output->format, fi) != ER_OK)
        return fail(msg, msg_size, ER_EINVAL, "%s: the output must be 2-D or 3-D", fn);
    if (R->format != output->format || R->ndim != output->ndim)
        return fail(msg, msg_size, ER_EINVAL, "%s: the rounded answer's format or shape differs", fn);
    *count = 1;
    for (int d = 0; d < output->ndim; d++) {
        if (R->shape[d] != output->shape[d])
            return fail(msg, msg_size, ER_EINVAL, "%s: the rounded answer's shape differs", fn);
        *count *= output->shape[d];
    }
    if (*count != want)
        return fail(msg, msg_size, ER_EINVAL, "%s: the output has %lld elements, %s %lld", fn, (long long)*count,
                    want_name, (long long)want);
    return ER_OK;
}

/* The scoring, with covers in the same pass where keys are given (then cov is written and outside
 * counted; the caller has checked that the fused pass applies: f32, bf16 or f16, unit strides). */
static er_status score_common(const er_bounds *bd, const er_bkeys *keys, const er_tensor *output, const er_tensor *R,
                              unsigned char *cov, int64_t outside, int64_t zero_known, const er_tensor *a,
                              const er_tensor *b, int64_t *outside_index, int64_t outside_cap, er_check_report *rep,
                              char *msg, size_t msg_size)
{
    er_format_info fi;
    fdesc f;
    double lut8[256];
    if (!bd || !output || !R || !rep)
        return fail(msg, msg_size, ER_EINVAL, "er_check_report_score: null argument");
    memset(rep, 0, sizeof *rep);
    rep->worst = -1;
    rep->narrower_format = -1;
    int64_t count;
    er_status st = er_report_output_shape_("er_check_report_score", output, R, bd->count, "the bounds", &fi, &count,
                                           msg, msg_size);
    if (st != ER_OK) return st;
    int sb = fi.storage_bytes, isfloat = fi.kind == ER_KIND_FLOAT;
    int64_t m = output->shape[output->ndim - 2], n = output->shape[output->ndim - 1];
    rep->ndim = output->ndim;
    for (int d = 0; d < output->ndim; d++) rep->shape[d] = output->shape[d];
    rep->format = output->format;
    rep->elements = count;
    rep->outside = outside;
    int fast = isfloat && fdesc_make(output->format, &f, lut8);
    rows_ wo = rows_of(output), wr = rows_of(R);
    int64_t rows = count ? count / n : 0;
    int nt = nthreads_for(rows, count);
    int kind = output->format == ER_FMT_F32 ? 0 : output->format == ER_FMT_BF16 ? 1 : output->format == ER_FMT_F16 ? 2 : -1;
    int fuse = fast && kind >= 0 && wo.s2 == 1 && wr.s2 == 1;
    /* the rows in order: the first of the worst wins, as in one pass */
    acc_ w;
    memset(&w, 0, sizeof w);
    w.rank = -1;
    w.score = -1;
    w.worst = -1;
    int64_t zero_ok = 0;
    if (keys && !fuse) return fail(msg, msg_size, ER_EINVAL, "er_check_report_score: no fused pass for this output");
    if (!keys && !cov) return fail(msg, msg_size, ER_EINVAL, "er_check_report_score: null argument");
    fuse_job *lists = NULL; /* cov NULL: the blocks, with their lists of outside elements */
    int nlists = 0;
    if (fuse) {
        /* blocks of rows, more than threads, taken by whichever thread is free (a thread that starts late,
         * on cores busy with other work, leaves its share to the others) and merged in order */
        int nb = nt == 1 ? 1 : (int)(rows < 8 * nt ? rows : 8 * nt);
        fuse_job *jobs = (fuse_job *)calloc((size_t)nb, sizeof *jobs);
        if (!jobs) return fail(msg, msg_size, ER_ENOMEM, "out of memory for the check's scoring");
        for (int t = 0; t < nb; t++) {
            fuse_job *J = &jobs[t];
            J->bd = bd;
            J->k = keys;
            J->fi = &fi;
            J->fmt = output->format;
            J->kind = kind;
            J->zero_known = zero_known >= 0;
            J->wo = wo;
            J->wr = wr;
            J->cov = cov;
            J->r0 = rows * t / nb;
            J->r1 = rows * (t + 1) / nb;
            J->best = -1;
            J->bidx = -1;
            J->a.rank = -1;
            J->a.score = -1;
            J->a.worst = -1;
        }
        er_par_for(nb, nt, fuse_block, jobs);
        int64_t bad = 0;
        for (int t = 0; t < nb; t++) {
            fuse_job *J = &jobs[t];
            for (int k = 0; k < ER_REPORT_LOG_BINS; k++) {
                int h = (k <= 5) + (k <= 3) + (k <= 1) + (k <= 0);
                int64_t c = J->cnt[0][k] + J->cnt[1][k] + J->cnt[2][k] + J->cnt[3][k];
                rep->hist[ER_REPORT_BIN_64 + h] += c;
                rep->log_hist[k] += c + J->a.log_hist[k];
            }
            for (int h = 0; h < ER_REPORT_BINS; h++) rep->hist[h] += J->a.hist[h];
            rep->hist[ER_REPORT_EXACT] += J->exact;
            rep->hist[ER_REPORT_SPECIAL] += J->special;
            zero_ok += J->zero;
            bad += J->bad;
            /* an outside element outranks every covered one */
            if (J->a.worst >= 0) take(&w, J->a.rank, J->a.score, J->a.worst, J->a.why, J->a.beyond, J->a.ratio);
            if (J->bidx >= 0) take(&w, 0, J->best, J->bidx, ER_REPORT_WHY_NONE, 0, J->best);
        }
        int oom = 0;
        for (int t = 0; t < nb; t++) oom |= jobs[t].oom;
        if (cov || oom) {
            for (int t = 0; t < nb; t++) free(jobs[t].list);
            free(jobs);
            if (oom) return fail(msg, msg_size, ER_ENOMEM, "out of memory for the list of outside elements");
        } else {
            lists = jobs;
            nlists = nb;
        }
        if (keys) outside = bad;
        rep->outside = outside;
    } else {
        score_job *jobs = (score_job *)calloc((size_t)nt, sizeof *jobs);
        if (!jobs) return fail(msg, msg_size, ER_ENOMEM, "out of memory for the check's scoring");
        for (int t = 0; t < nt; t++) {
            jobs[t].bd = bd;
            jobs[t].f = fast ? &f : NULL;
            jobs[t].fi = &fi;
            jobs[t].fmt = output->format;
            jobs[t].wo = wo;
            jobs[t].wr = wr;
            jobs[t].cov = cov;
            jobs[t].zero_known = zero_known >= 0;
            jobs[t].r0 = rows * t / nt;
            jobs[t].r1 = rows * (t + 1) / nt;
            jobs[t].a.rank = -1;
            jobs[t].a.score = -1;
            jobs[t].a.worst = -1;
        }
        er_par_jobs(score_thread, jobs, sizeof jobs[0], nt);
        for (int t = 0; t < nt; t++) {
            acc_ *x = &jobs[t].a;
            for (int h = 0; h < ER_REPORT_BINS; h++) rep->hist[h] += x->hist[h];
            for (int h = 0; h < ER_REPORT_LOG_BINS; h++) rep->log_hist[h] += x->log_hist[h];
            zero_ok += x->zero_ok;
            if (x->worst >= 0) take(&w, x->rank, x->score, x->worst, x->why, x->beyond, x->ratio);
        }
        free(jobs);
    }
    if (w.worst >= 0) {
        rep->worst = w.worst;
        rep->worst_why = w.why;
        rep->ulps_beyond = w.beyond;
        rep->ratio = w.ratio;
    }
    /* the outside elements, in order: the list and the map */
    if (outside > 0) {
        int64_t mr = m < ER_REPORT_MAP ? m : ER_REPORT_MAP, mc = n < ER_REPORT_MAP ? n : ER_REPORT_MAP;
        /* row by row, the cells of the row and of each column found without a division per element */
        unsigned char *colcell = (unsigned char *)malloc((size_t)n);
        for (int64_t j = 0; colcell && j < n; j++) colcell[j] = (unsigned char)(j * mc / n);
        if (lists) {
            /* from the jobs' lists (rows in order), a division only where a row with outside elements starts */
            int64_t row = -1, start = 0, cr = 0;
            for (int t = 0; t < nlists; t++)
                for (int64_t i = 0; i < lists[t].listed; i++) {
                    int64_t e = lists[t].list[i];
                    if (e - start >= n || row < 0) {
                        row = e / n;
                        start = row * n;
                        cr = ((row % m) * mr) / m;
                    }
                    int64_t j = e - start;
                    rep->hist[ER_REPORT_OUTSIDE]++;
                    if (outside_index && rep->outside_listed < outside_cap) outside_index[rep->outside_listed++] = e;
                    rep->map[(int)cr][colcell ? colcell[j] : (int)(j * mc / n)]++;
                }
        } else
            for (int64_t row = 0, e = 0; row < rows; row++) {
                int64_t cr = ((row % m) * mr) / m, end = e + n;
                for (; e < end; e++) {
                    uint64_t eight;
                    if (e + 8 <= end && (memcpy(&eight, cov + e, 8), eight == UINT64_C(0x0101010101010101))) {
                        e += 7;
                        continue;
                    }
                    if (cov[e]) continue;
                    int64_t j = e - (end - n);
                    rep->hist[ER_REPORT_OUTSIDE]++;
                    if (outside_index && rep->outside_listed < outside_cap) outside_index[rep->outside_listed++] = e;
                    rep->map[(int)cr][colcell ? colcell[j] : (int)(j * mc / n)]++;
                }
            }
        free(colcell);
    }
    if (lists) {
        for (int t = 0; t < nlists; t++) free(lists[t].list);
        free(lists);
    }
    if (rep->worst >= 0) {
        int64_t e = rep->worst;
        er_check_report_index(rep, e, rep->worst_index);
        rep->worst_covered = cov ? cov[e] : w.rank == 0; /* outside elements rank 1 .. 3 */
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
    if (zero_known >= 0) zero_ok = zero_known;
    rep->zero_accepted = count > 0 && zero_ok == count;
    if (a && all_tiny(a)) rep->operand_vacuous |= 1;
    if (b && all_tiny(b)) rep->operand_vacuous |= 2;
    /* the hint: an output saved in a wider format than the one the kernel wrote */
    if (outside && isfloat && count)
        rep->narrower_format = narrower_format(output, R, &fi, count, a ? a->format : -1, b ? b->format : -1);
    if (msg && msg_size) msg[0] = '\0';
    return ER_OK;
}

/* zero_known: the number of ranges that hold zero (er_bounds_covers_kept's), or -1 to count them here */
er_status er_check_report_score_kept(const er_bounds *bd, const er_tensor *output, const er_tensor *R,
                                     const unsigned char *cov, int64_t outside, int64_t zero_known, const er_tensor *a,
                                     const er_tensor *b, int64_t *outside_index, int64_t outside_cap,
                                     er_check_report *rep, char *msg, size_t msg_size)
{
    if (!cov) return fail(msg, msg_size, ER_EINVAL, "er_check_report_score: null argument");
    return score_common(bd, NULL, output, R, (unsigned char *)cov, outside, zero_known, a, b, outside_index,
                        outside_cap, rep, msg, msg_size);
}

/* Bit 3 of the keys' flags: covers of the rounded answer R itself (the decision for every element whose
 * output is R's pattern, which the fused pass then takes without reading the range's keys).  0: out of
 * memory. */
/* covers of the rows of R into the job's array, then into bit 3 of the keys' flags */
static void *rbit_thread(void *arg)
{
    cov_job *j = (cov_job *)arg;
    cov_thread(j);
    unsigned char *fl = j->rbit_fl;
    for (int64_t e = j->r0 * j->w.n; e < j->r1 * j->w.n; e++)
        fl[e] = (unsigned char)((fl[e] & 7u) | (j->cov[e] != 0) << 3);
    return NULL;
}

static int keys_rbit(er_bkeys *k, const er_bounds *bd, const er_tensor *R)
{
    fdesc f;
    double lut8[256];
    unsigned char *c = (unsigned char *)malloc((size_t)(k->count ? k->count : 1));
    if (!c || !fdesc_make(R->format, &f, lut8)) {
        free(c);
        return 0;
    }
    rows_ w = rows_of(R);
    int64_t rows = k->count ? k->count / w.n : 0;
    int nt = nthreads_for(rows, k->count);
    cov_job jobs[64];
    for (int t = 0; t < nt; t++) {
        jobs[t].bd = bd;
        jobs[t].f = &f;
        jobs[t].keys = k;
        jobs[t].rbit_fl = k->fl;
        jobs[t].w = w;
        jobs[t].exact_int = 0;
        jobs[t].cov = c;
        jobs[t].r0 = rows * t / nt;
        jobs[t].r1 = rows * (t + 1) / nt;
        jobs[t].bad = 0;
    }
    er_par_jobs(rbit_thread, jobs, sizeof jobs[0], nt);
    free(c);
    k->rdata = R->data;
    for (int d = 0; d < 3; d++) {
        k->rshape[d] = d < R->ndim ? R->shape[d] : 0;
        k->rstrides[d] = d < R->ndim ? R->strides[d] : 0;
    }
    return 1;
}

/* Whether the fused pass applies to this output and rounded answer: f32, bf16 or f16 of one shape, unit
 * strides, as many elements as the bounds. */
static int fused_applies(const er_bounds *bd, const er_tensor *output, const er_tensor *R)
{
    int fmt = output->format;
    if ((fmt != ER_FMT_F32 && fmt != ER_FMT_BF16 && fmt != ER_FMT_F16) || !R || R->format != fmt ||
        (output->ndim != 2 && output->ndim != 3) || R->ndim != output->ndim)
        return 0;
    int64_t count = 1;
    for (int d = 0; d < output->ndim; d++) {
        if (R->shape[d] != output->shape[d]) return 0;
        count *= output->shape[d];
    }
    return count == bd->count && output->strides[output->ndim - 1] == 1 && R->strides[R->ndim - 1] == 1;
}

er_status er_check_report_fused(const er_bounds *bd, er_bkeys **keys, const er_tensor *output, const er_tensor *R,
                                unsigned char *covered, const er_tensor *a, const er_tensor *b,
                                int64_t *outside_index, int64_t outside_cap, er_check_report *rep, char *msg,
                                size_t msg_size)
{
    if (!bd || !keys || !output || !R || !rep)
        return fail(msg, msg_size, ER_EINVAL, "er_check_report_fused: null argument");
    if (!fused_applies(bd, output, R))
        return fail(msg, msg_size, ER_EINVAL, "er_check_report_fused: not an f32, bf16 or f16 output with unit strides");
    if (*keys && ((*keys)->fmt != output->format || (*keys)->count != bd->count)) {
        er_bkeys_free(*keys);
        *keys = NULL;
    }
    if (!*keys) {
        fdesc f;
        double lut8[256];
        if (fdesc_make(output->format, &f, lut8)) *keys = keys_make(bd, &f);
        if (!*keys) return fail(msg, msg_size, ER_ENOMEM, "out of memory for the keys of %lld elements", (long long)bd->count);
    }
    er_bkeys *k = *keys;
    int rsame = k->rdata == R->data;
    for (int d = 0; rsame && d < R->ndim; d++) rsame = k->rshape[d] == R->shape[d] && k->rstrides[d] == R->strides[d];
    if (!rsame && !keys_rbit(k, bd, R))
        return fail(msg, msg_size, ER_ENOMEM, "out of memory for the keys of %lld elements", (long long)bd->count);
    return score_common(bd, k, output, R, covered, -1, k->zero_ok, a, b, outside_index, outside_cap, rep, msg,
                        msg_size);
}

er_status er_check_report_compute(er_result *r, const er_tol_opts *o, const er_tensor *output, const er_tensor *a,
                                  const er_tensor *b, int64_t *outside_index, int64_t outside_cap,
                                  er_check_report *rep, char *msg, size_t msg_size)
{
    const er_bounds *bd;
    er_status st;
    unsigned char *cov;
    int64_t outside = 0;
    if (!r || !o || !output || !rep) return fail(msg, msg_size, ER_EINVAL, "er_check_report_compute: null argument");
    memset(rep, 0, sizeof *rep);
    rep->worst = -1;
    rep->narrower_format = -1;
    if ((st = er_result_bounds(r, o, &bd, msg, msg_size)) != ER_OK) return st;
    if (output->ndim != 2 && output->ndim != 3)
        return fail(msg, msg_size, ER_EINVAL, "the output must be 2-D or 3-D");
    int64_t count = 1;
    for (int d = 0; d < output->ndim; d++) count *= output->shape[d];
    const er_tensor *R = er_result_rounded(r);
    /* f32, bf16 and f16 outputs of the result's shape (bounds it keeps, not an integer product's): covers and
     * the scoring in one pass over the output, the rounded answer and the kept keys, the outside elements
     * listed as they come (no covered array) */
    er_bkeys **keys = NULL;
    int same = !r->is_int && output->format == r->d.format && output->ndim == r->d.ndim;
    for (int d = 0; same && d < output->ndim; d++) same = output->shape[d] == r->d.shape[d];
    for (int i = 0; same && i < r->ncache; i++)
        if (&r->cache[i].b == bd) keys = &r->cache[i].keys;
    if (keys && fused_applies(bd, output, R)) {
        st = er_check_report_fused(bd, keys, output, R, NULL, a, b, outside_index, outside_cap, rep, msg, msg_size);
        /* out of memory (the keys, the lists): covers below read the bounds directly */
        if (st != ER_ENOMEM) return st;
    }
    cov = (unsigned char *)malloc(count ? (size_t)count : 1);
    if (!cov) return fail(msg, msg_size, ER_ENOMEM, "out of memory for the check of %lld elements", (long long)count);
    int64_t zero_ok = -1;
    if ((st = er_result_covers_kept(r, o, output, cov, &outside, &zero_ok, &bd, msg, msg_size)) != ER_OK) {
        free(cov);
        return st;
    }
    st = er_check_report_score_kept(bd, output, R, cov, outside, zero_ok, a, b, outside_index,
                                    outside_cap, rep, msg, msg_size);
    free(cov);
    return st;
}

