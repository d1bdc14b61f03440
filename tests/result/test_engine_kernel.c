/* test_engine_kernel.c: the CPU's register-blocked engine bounds (cpu/cpu_bounds_engine.c) against the
 * per-element definition er_bound_element, bit for bit, over every engine standard; and its four-lane
 * recurrence against er_b_eng_block.  Random (EXACTREF_SEED, printed): shapes with k not a multiple of
 * the instruction's k and n not a multiple of the tile, special and block-scaled factors, with and
 * without C, row ranges split as threads split them, the AVX-512, AVX2 and portable kernels (each where
 * the processor has it), values whose products are not exact (no fused multiply-adds there). */
#define _POSIX_C_SOURCE 200809L
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../cpu/cpu_bounds_engine.h"
#include "../cpu/cpu_internal.h"
#include "er_test.h"
#include "exactref/exactref.h"
#include "exactref/core/er_bounds.h"

static double urand(uint64_t *st) { return (double)(er_test_rand(st) >> 11) * 0x1p-53; }
static int irand(uint64_t *st, int lo, int hi) { return lo + (int)(er_test_rand(st) % (uint64_t)(hi - lo + 1)); }

static void *xcalloc(size_t n, size_t s)
{
    void *p = calloc(n ? n : 1, s);
    ck_assert_ptr_nonnull(p);
    return p;
}

static double fmtmax(int f) { return er_b_value(f, er_maxval_(er_fmt_get(f), 0u)); }

/* The parameters src/tolerance.c gives a standard (f32 output; D of the standard's accumulator). */
static void make_par(er_bpar *c, const er_standard *s, int64_t k, int64_t n, int has_c, int c_rounds, int a_f32,
                     int b_f32)
{
    int cfmt = s->acc_fmt == ER_FMT_F16 ? ER_FMT_F16 : ER_FMT_F32;
    er_fmt cf = er_fmt_get(cfmt);
    memset(c, 0, sizeof *c);
    c->k = k;
    c->ldb = n;
    c->kind = ER_BK_ENGINE;
    c->out_fmt = ER_FMT_F32;
    c->dir = ER_RND_NEAREST_EVEN;
    c->has_c = has_c;
    c->c_rounds = has_c && c_rounds;
    c->u = ldexp(1.0, -(cf.mbits + 1));
    c->emin_c = er_fmt_emin(cf);
    c->eta = ldexp(1.0, er_fmt_emin(cf) - (cf.mbits + 1));
    c->max_c = fmtmax(cfmt);
    c->maxo = fmtmax(ER_FMT_F32);
    c->mk = s->k;
    c->F = s->F;
    c->out_p = s->out_p;
    c->out_round = s->out_round;
    while ((1 << c->gextra) < s->group) c->gextra++;
    c->promote = s->promote;
    c->tf32_inputs = s->tf32_inputs;
    c->F2 = s->F2;
    c->xterms = s->two_stage ? 2 : 0;
    c->a_f32 = a_f32;
    c->b_f32 = b_f32;
}

/* A factor and its hardware exponent: profile 0 narrow, 1 wide, 2 with specials and block scales, 3
 * values no engine reads (products not exact in binary64: full 53-bit significands, or tiny values
 * whose products fall below binary64's normal range), where the kernels may not fuse. */
static double factor(uint64_t *st, int profile, int16_t *e)
{
    int r = irand(st, 0, 99);
    if (profile == 3) {
        int ex = r < 15 ? irand(st, -540, -513) : irand(st, -20, 20);
        double v = ldexp(r < 15 ? 1.0 + (double)irand(st, 0, 255) / 256.0 : 1.0 + urand(st), ex);
        *e = (int16_t)(ex < -126 ? -126 : ex);
        return er_test_rand(st) & 1 ? -v : v;
    }
    if (profile == 2) {
        if (r < 4) {
            *e = -126;
            return r & 1 ? -0.0 : 0.0;
        }
        if (r < 6) {
            *e = 0;
            return r & 1 ? -INFINITY : INFINITY;
        }
        if (r == 6) {
            *e = 0;
            return NAN;
        }
        if (r < 9) { /* near f32's largest: partial sums may overflow */
            *e = 127;
            return (r & 1 ? -1 : 1) * 0x1.fep127;
        }
        if (r == 9 && irand(st, 0, 3) == 0) { /* an exponent bound far beyond any format's: e_a + e_b beyond int16 */
            *e = (int16_t)(irand(st, 0, 1) ? 20000 : -20000);
            return 1.0;
        }
    }
    if (r < 5) {
        *e = profile == 2 ? -6 : -126;
        return 0.0;
    }
    int span = profile == 0 ? 8 : 100, ex = irand(st, -span, span);
    double v = ldexp(1.0 + (double)irand(st, 0, 127) / 128.0, ex) * (er_test_rand(st) & 1 ? -1 : 1);
    *e = (int16_t)ex;
    if (profile == 2 && r < 20) { /* a block scale 2^s, its exponent added */
        int sc = irand(st, -120, 120);
        v = ldexp(v, sc);
        *e = (int16_t)(*e + sc);
    }
    return v;
}

typedef struct {
    er_bjob j;
    double *af, *bf, *cv, *dc, *qa, *qb;
    int16_t *ea, *eb;
    uint64_t *rb;
} prob;

/* The engines' grids, computed here independently of the library (libm's frexp, ldexp and ceil): for
 * the values v[p * step] (p < cnt) of one instruction, the grid exponent s = e(the largest finite |v|)
 * - Q (at least -537; 0 for a zero run), and q = ceil(|v| 2^-s) 2^s (0 for an infinite or NaN v). */
static void ref_quant(const double *v, int64_t step, int64_t cnt, int Q, double *q)
{
    double mx = 0;
    for (int64_t p = 0; p < cnt; p++)
        if (isfinite(v[p * step]) && fabs(v[p * step]) > mx) mx = fabs(v[p * step]);
    int e = 0;
    if (mx > 0) (void)frexp(mx, &e);
    int s = mx > 0 ? e - Q : 0;
    if (s < -537) s = -537;
    for (int64_t p = 0; p < cnt; p++) {
        double x = v[p * step];
        q[p * step] = isfinite(x) ? ldexp(ceil(ldexp(fabs(x), -s)), s) : 0.0;
        if (isfinite(x) && !(q[p * step] >= fabs(x))) ck_abort_msg("grid value %a below |%a|", q[p * step], x);
    }
}

/* The job's qa and qb from af and bf (after any change to them), and the library's preparation
 * (cpu/cpu_quant.c: er_cpu_eng_q_row, er_cpu_eng_q_block, the vector paths where the processor has
 * them) against them, bit for bit. */
static void prob_quant(prob *P)
{
    const int64_t m = P->j.m, n = P->j.n, k = P->j.par.k, mk = P->j.par.mk;
    int Qa, Qb;
    er_b_q_bits(mk, &Qa, &Qb);
    free(P->qa);
    free(P->qb);
    P->qa = xcalloc((size_t)(m * k), sizeof(double));
    P->qb = xcalloc((size_t)(k * n), sizeof(double));
    for (int64_t i = 0; i < m; i++)
        for (int64_t p0 = 0; p0 < k; p0 += mk)
            ref_quant(P->af + i * k + p0, 1, k - p0 < mk ? k - p0 : mk, Qa, P->qa + i * k + p0);
    for (int64_t p0 = 0; p0 < k; p0 += mk)
        for (int64_t c = 0; c < n; c++)
            ref_quant(P->bf + p0 * n + c, n, k - p0 < mk ? k - p0 : mk, Qb, P->qb + p0 * n + c);
    double *ta = xcalloc((size_t)(m * k), sizeof(double)), *tb = xcalloc((size_t)(k * n), sizeof(double));
    for (int simd = 0; simd <= er_cpu_q_simd(); simd++) {
        for (int64_t i = 0; i < m; i++) er_cpu_eng_q_row(P->af + i * k, k, mk, Qa, ta + i * k, simd);
        for (int64_t p0 = 0; p0 < k; p0 += mk) er_cpu_eng_q_block(P->bf + p0 * n, n, k - p0 < mk ? k - p0 : mk, n, Qb, tb + p0 * n, simd);
        ck_assert_msg(memcmp(ta, P->qa, sizeof(double) * (size_t)(m * k)) == 0, "A's grids differ (simd %d)", simd);
        ck_assert_msg(memcmp(tb, P->qb, sizeof(double) * (size_t)(k * n)) == 0, "B's grids differ (simd %d)", simd);
    }
    /* a user model's long instruction (mk >= 512: one grid per call of the vector path), on row 0 */
    {
        double *ra = xcalloc((size_t)k, sizeof(double));
        int Q6, Q6b;
        er_b_q_bits(512, &Q6, &Q6b);
        for (int64_t p0 = 0; p0 < k; p0 += 512) ref_quant(P->af + p0, 1, k - p0 < 512 ? k - p0 : 512, Q6, ra + p0);
        for (int simd = 0; simd <= er_cpu_q_simd(); simd++) {
            er_cpu_eng_q_row(P->af, k, 512, Q6, ta, simd);
            ck_assert_msg(memcmp(ta, ra, sizeof(double) * (size_t)k) == 0, "a long instruction's grids differ (simd %d)",
                          simd);
        }
        free(ra);
    }
    free(ta);
    free(tb);
    P->j.qa = P->qa;
    P->j.qb = P->qb;
}

static void prob_make(prob *P, uint64_t *st, const er_standard *s, int64_t m, int64_t n, int64_t k, int profile,
                      int has_c, int slack_c)
{
    memset(P, 0, sizeof *P);
    P->af = xcalloc((size_t)(m * k), sizeof(double));
    P->bf = xcalloc((size_t)(k * n), sizeof(double));
    P->ea = xcalloc((size_t)(m * k), sizeof(int16_t));
    P->eb = xcalloc((size_t)(k * n), sizeof(int16_t));
    P->rb = xcalloc((size_t)(m * n), sizeof(uint64_t));
    for (int64_t q = 0; q < m * k; q++) P->af[q] = factor(st, profile, &P->ea[q]);
    for (int64_t q = 0; q < k * n; q++) P->bf[q] = factor(st, profile, &P->eb[q]);
    if (has_c) {
        P->cv = xcalloc((size_t)(m * n), sizeof(double));
        for (int64_t q = 0; q < m * n; q++) {
            int16_t e;
            P->cv[q] = (double)(float)(factor(st, profile, &e) * factor(st, profile, &e));
        }
    }
    if (slack_c) {
        P->dc = xcalloc((size_t)(m * n), sizeof(double));
        for (int64_t q = 0; q < m * n; q++) P->dc[q] = irand(st, 0, 3) ? ldexp(urand(st), irand(st, -60, 10)) : 0.0;
    }
    /* the output's format (er_b_finish's conversions; f64: nearly every element takes the rare end
     * steps, in batches: cpu_bounds_engine.c, rare_flush) */
    static const int ofmts[5] = {ER_FMT_F32, ER_FMT_F32, ER_FMT_BF16, ER_FMT_F16, ER_FMT_F64};
    const int ofmt = ofmts[irand(st, 0, 4)];
    for (int64_t i = 0; i < m; i++)
        for (int64_t c = 0; c < n; c++) {
            double sum = P->cv ? P->cv[i * n + c] : 0.0;
            for (int64_t p = 0; p < k; p++) sum += P->af[i * k + p] * P->bf[p * n + c];
            uint64_t u, sb;
            memcpy(&sb, &sum, 8);
            ck_assert_int_eq(er_convert_bits(ER_FMT_F64, ofmt, sb, ER_RND_NEAREST_EVEN, 0, &u, NULL), ER_OK);
            if (irand(st, 0, 9) == 0) u ^= 1u; /* an output an ulp away now and then */
            P->rb[i * n + c] = u;
        }
    make_par(&P->j.par, s, k, n, has_c, irand(st, 0, 1), irand(st, 0, 1), irand(st, 0, 1));
    P->j.par.out_fmt = ofmt;
    P->j.par.maxo = fmtmax(ofmt);
    if (irand(st, 0, 3) == 0) P->j.par.dir = irand(st, 0, 1) ? ER_RND_ZERO : ER_RND_NEAREST_EVEN;
    P->j.par.slack_c = slack_c;
    P->j.m = m;
    P->j.n = n;
    P->j.af = P->af;
    P->j.bf = P->bf;
    P->j.ea = P->ea;
    P->j.eb = P->eb;
    P->j.cv = P->cv;
    P->j.dc = P->dc;
    P->j.rb = P->rb;
    /* the exact-sum certificate (cpu_bounds_engine.c, eng_ends): profiles 0 and 1 have exact products,
     * 7 fraction bits and exact exponents (2 has exponent bounds above some values', 3 inexact products) */
    P->j.prod_exact = profile <= 1;
    P->j.a_mbits = P->j.b_mbits = 7;
    prob_quant(P);
}

static void prob_free(prob *P)
{
    free(P->af);
    free(P->bf);
    free(P->ea);
    free(P->eb);
    free(P->rb);
    free(P->cv);
    free(P->dc);
    free(P->qa);
    free(P->qb);
}

typedef struct {
    double *radius, *tolerance;
    uint64_t *low, *high;
    unsigned char *f;
    er_bounds b;
} obuf;

static void obuf_make(obuf *o, int64_t cnt)
{
    o->radius = xcalloc((size_t)cnt, sizeof(double));
    o->tolerance = xcalloc((size_t)cnt, sizeof(double));
    o->low = xcalloc((size_t)cnt, sizeof(uint64_t));
    o->high = xcalloc((size_t)cnt, sizeof(uint64_t));
    o->f = xcalloc((size_t)cnt, 4);
    o->b.count = cnt;
    o->b.radius = o->radius;
    o->b.tolerance = o->tolerance;
    o->b.low = o->low;
    o->b.high = o->high;
    o->b.has_range = o->f;
    o->b.may_pinf = o->f + cnt;
    o->b.may_ninf = o->f + 2 * cnt;
    o->b.may_nan = o->f + 3 * cnt;
}

static void obuf_free(obuf *o)
{
    free(o->radius);
    free(o->tolerance);
    free(o->low);
    free(o->high);
    free(o->f);
}

static uint64_t dbits(double x)
{
    uint64_t u;
    memcpy(&u, &x, 8);
    return u;
}

/* Element e of o against the reference er_bel, every field by its bits. */
static void same_el(const obuf *o, int64_t e, const er_bel *r, const char *what, const char *std, int64_t i,
                    int64_t c)
{
    int64_t cnt = o->b.count;
    unsigned fl = (o->f[e] ? ER_BF_RANGE : 0u) | (o->f[cnt + e] ? ER_BF_PINF : 0u) |
                  (o->f[2 * cnt + e] ? ER_BF_NINF : 0u) | (o->f[3 * cnt + e] ? ER_BF_NAN : 0u);
    ck_assert_msg(dbits(o->radius[e]) == dbits(r->radius) && dbits(o->tolerance[e]) == dbits(r->tolerance) &&
                      o->low[e] == r->low && o->high[e] == r->high && fl == r->flags,
                  "%s, %s, element (%lld, %lld): radius %a / %a, tolerance %a / %a, low %llx / %llx, high %llx / "
                  "%llx, flags %x / %x (kernel / reference)",
                  what, std, (long long)i, (long long)c, o->radius[e], r->radius, o->tolerance[e], r->tolerance,
                  (unsigned long long)o->low[e], (unsigned long long)r->low, (unsigned long long)o->high[e],
                  (unsigned long long)r->high, fl, r->flags);
}

/* One problem: the kernel (AVX2 and portable, rows split in up to three ranges) and the whole CPU batch
 * (threads) against er_bound_element. */
static int64_t check_prob(prob *P, uint64_t *st, const char *std)
{
    const er_bjob *j = &P->j;
    int64_t m = j->m, n = j->n, k = j->par.k, cnt = m * n;
    prob_quant(P); /* af or bf may have changed since prob_make */
    /* xs is exact: each instruction's sum of qa qb the same forward with fused multiply-adds, backward
     * with the product rounded first, and in a pairwise tree (fails if the grids had a bit too many) */
    for (int64_t i = 0; i < m; i++)
        for (int64_t c = 0; c < n; c++)
            for (int64_t p0 = 0; p0 < k; p0 += j->par.mk) {
                const int64_t nt = k - p0 < j->par.mk ? k - p0 : j->par.mk;
                double f = 0, b = 0, t[4096];
                for (int64_t p = p0; p < p0 + nt; p++) f = fma(P->qa[i * k + p], P->qb[p * n + c], f);
                for (int64_t p = p0 + nt - 1; p >= p0; p--) b = b + P->qa[i * k + p] * P->qb[p * n + c];
                int64_t w = nt < 4096 ? nt : 4096;
                for (int64_t p = 0; p < w; p++) t[p] = P->qa[i * k + p0 + p] * P->qb[(p0 + p) * n + c];
                for (int64_t h = 1; h < w; h *= 2)
                    for (int64_t p = 0; p + h < w; p += 2 * h) t[p] = t[p] + t[p + h];
                if (!(dbits(f) == dbits(b) && (w < nt || dbits(f) == dbits(w ? t[0] : 0.0))))
                    ck_abort_msg("%s: element (%lld, %lld), instruction at %lld: xs %a / %a / %a by order", std,
                                 (long long)i, (long long)c, (long long)p0, f, b, w ? t[0] : 0.0);
            }
    er_bel *ref = xcalloc((size_t)cnt, sizeof(er_bel));
    for (int64_t i = 0; i < m; i++)
        for (int64_t c = 0; c < n; c++)
            er_bound_element(&j->par, j->af + i * k, j->bf + c, j->ea + i * k, j->eb + c, NULL, NULL, NULL,
                             j->qa + i * k, NULL, j->qb + c, 0, 0, 0, j->cv ? j->cv[i * n + c] : 0.0, j->dc ? j->dc[i * n + c] : 0.0, j->rb[i * n + c], NULL,
                             &ref[i * n + c]);
    static const char *const kname[3] = {"portable kernel", "AVX2 kernel", "AVX-512 kernel"};
    for (int simd = 0; simd <= 2; simd++) {
        if (simd && er_cpu_engine_simd(simd) != simd) continue; /* a processor without them (said in main) */
        obuf o;
        obuf_make(&o, cnt);
        int64_t a = m > 1 ? irand(st, 0, (int)m) : m, b = a + (m - a > 1 ? irand(st, 0, (int)(m - a)) : 0);
        ck_assert_int_eq(er_cpu_engine_rows(j, &o.b, 0, 0, a, simd, NULL), 1);
        ck_assert_int_eq(er_cpu_engine_rows(j, &o.b, 0, a, b, simd, NULL), 1);
        ck_assert_int_eq(er_cpu_engine_rows(j, &o.b, 0, b, m, simd, NULL), 1);
        for (int64_t e = 0; e < cnt; e++)
            same_el(&o, e, &ref[e], kname[simd], std, e / n, e % n);
        if (m <= 16) {
            /* one row per call: each tile padded from a single row, the buffers of the tile before it
             * (the exponents' among them) left as that tile wrote them: a tile that reads what it did
             * not write shows here (the AVX-512 tiles once skipped the exponents where a variant that
             * reads them then ran) */
            memset(o.radius, 0, sizeof(double) * (size_t)cnt);
            for (int64_t r = 0; r < m; r++) ck_assert_int_eq(er_cpu_engine_rows(j, &o.b, 0, r, r + 1, simd, NULL), 1);
            char what[64];
            snprintf(what, sizeof what, "%s, a row per call", kname[simd]);
            for (int64_t e = 0; e < cnt; e++) same_el(&o, e, &ref[e], what, std, e / n, e % n);
        }
        obuf_free(&o);
    }
    {
        /* with S given (the reference's A'B' in any order, src/tolerance.c): here in reverse index order,
         * each product rounded (any order serves); the kernels take it for s where every value is finite */
        double *S = xcalloc((size_t)cnt, sizeof(double));
        for (int64_t i = 0; i < m; i++)
            for (int64_t c = 0; c < n; c++) {
                double x = 0;
                for (int64_t p = k - 1; p >= 0; p--) x += j->af[i * k + p] * j->bf[p * n + c];
                S[i * n + c] = x;
            }
        P->j.S = S;
        for (int simd = 0; simd <= 2; simd++) {
            if (simd && er_cpu_engine_simd(simd) != simd) continue;
            obuf o;
            obuf_make(&o, cnt);
            int64_t a = m > 1 ? irand(st, 0, (int)m) : m;
            ck_assert_int_eq(er_cpu_engine_rows(j, &o.b, 0, 0, a, simd, NULL), 1);
            ck_assert_int_eq(er_cpu_engine_rows(j, &o.b, 0, a, m, simd, NULL), 1);
            char what[64];
            snprintf(what, sizeof what, "%s with S", kname[simd]);
            for (int64_t e = 0; e < cnt; e++) same_el(&o, e, &ref[e], what, std, e / n, e % n);
            obuf_free(&o);
        }
        P->j.S = NULL;
        free(S);
    }
    {
        obuf o;
        obuf_make(&o, cnt);
        ck_assert_int_eq(er_cpu_bounds_batch(j, &o.b, 0, irand(st, 1, 3)), ER_OK);
        for (int64_t e = 0; e < cnt; e++) same_el(&o, e, &ref[e], "er_cpu_bounds_batch", std, e / n, e % n);
        obuf_free(&o);
    }
    free(ref);
    return cnt;
}

/* Every engine standard, random shapes, the three profiles, with and without C. */
START_TEST(kernel_vs_element)
{
    uint64_t st = er_test_seed("engine_kernel/kernel_vs_element") ^ (uint64_t)_i * UINT64_C(0x9E3779B97F4A7C15);
    int count = 0;
    const er_standard_info *list = er_standard_list(&count);
    int64_t elements = 0, cases = 0;
    for (int s = 0; s < count; s++) {
        const er_standard *sd = &list[s].std;
        if (sd->kind != ER_STD_ENGINE) continue;
        for (int cs = 0; cs < 10; cs++) {
            int mk = sd->k;
            int64_t m = irand(&st, 1, 9), n = irand(&st, 1, 40), k = irand(&st, 1, 3 * mk + 5);
            if (cs == 4) n = irand(&st, 129, 170); /* two chunks of columns (128 each) */
            if (cs == 5) k = irand(&st, 513, 700) / mk * mk + irand(&st, 0, 1) * irand(&st, 1, mk - 1 > 1 ? mk - 1 : 1);
            prob P;
            if (cs == 7) { /* several tiles of 4 x 16 and chunks of B */
                m = irand(&st, 5, 13);
                n = irand(&st, 17, 70);
                k = irand(&st, 257, 600);
            }
            if (cs >= 8) { /* three chunks of B: the later ones where the exponents' products may be skipped */
                m = irand(&st, 4, 9);
                n = irand(&st, 16, 40);
                k = irand(&st, 1030, 1400);
            }
            prob_make(&P, &st, sd, m, n, k, cs == 6 ? 3 : cs == 7 ? (int)(er_test_rand(&st) % 3) : cs >= 8 ? cs - 8 : cs % 3,
                      cs & 1, cs == 3);
            if (cs == 2) /* exponent bounds whose sums leave int16 in some products (the kernel's int path) */
                for (int64_t q = 0; q < m * k; q++)
                    if (irand(&st, 0, 3) == 0) P.ea[q] = (int16_t)(P.ea[q] < 0 ? -16500 : 16500);
            if (cs == 2)
                for (int64_t q = 0; q < k * n; q++)
                    if (irand(&st, 0, 3) == 0) P.eb[q] = (int16_t)(P.eb[q] < 0 ? -16500 : 16500);
            elements += check_prob(&P, &st, list[s].name);
            prob_free(&P);
            cases++;
        }
    }
    printf("engine_kernel/kernel_vs_element: %lld cases, %lld elements equal\n", (long long)cases, (long long)elements);
}
END_TEST

/* Rows beyond one block of the state (256), promotion and C: hopper and deepgemm-fp8. */
/*
 * A tile that may skip the exponents' products (its elements' ec at least every emax + gextra of the
 * chunk: tile512's umax test) after a tile that formed large ones, in one call: rows 0-3 with C = 0
 * and products up to 2^16, rows 4-7 with C = 2^14 and every product below 2^-3.  Whatever the tile
 * skips must not be read by the recurrence that runs: the AVX-512 kernel once skipped them and then ran
 * a variant that reads them (f16 accumulators), so rows 4-7 took the first tile's exponents.
 */
START_TEST(kernel_skipped_exponents)
{
    uint64_t st = er_test_seed("engine_kernel/kernel_skipped_exponents");
    int count = 0;
    const er_standard_info *list = er_standard_list(&count);
    int64_t elements = 0;
    for (int s = 0; s < count; s++) {
        const er_standard *sd = &list[s].std;
        if (sd->kind != ER_STD_ENGINE) continue;
        const int64_t m = 8, n = 16, k = sd->k;
        prob P;
        prob_make(&P, &st, sd, m, n, k, 0, 1, 0);
        for (int64_t i = 4; i < m; i++)
            for (int64_t p = 0; p < k; p++) {
                P.af[i * k + p] = ldexp(P.af[i * k + p], -20); /* exact: a scaling by a power of two */
                P.ea[i * k + p] = (int16_t)(P.ea[i * k + p] - 20);
            }
        for (int64_t i = 0; i < m; i++)
            for (int64_t c = 0; c < n; c++) {
                P.cv[i * n + c] = i < 4 ? 0.0 : 0x1p14;
                /* the output: the exact sum rounded to the output format, as prob_make's */
                double sum = P.cv[i * n + c];
                for (int64_t p = 0; p < k; p++) sum += P.af[i * k + p] * P.bf[p * n + c];
                uint64_t u, sb;
                memcpy(&sb, &sum, 8);
                ck_assert_int_eq(er_convert_bits(ER_FMT_F64, P.j.par.out_fmt, sb, ER_RND_NEAREST_EVEN, 0, &u, NULL),
                                 ER_OK);
                P.rb[i * n + c] = u;
            }
        elements += check_prob(&P, &st, list[s].name);
        prob_free(&P);
    }
    printf("engine_kernel/kernel_skipped_exponents: %lld elements equal\n", (long long)elements);
}
END_TEST

START_TEST(kernel_many_rows)
{
    uint64_t st = er_test_seed("engine_kernel/kernel_many_rows");
    static const char *names[] = {"hopper", "deepgemm-fp8", "cdna3-fp8"};
    int64_t elements = 0;
    for (int q = 0; q < 3; q++) {
        er_standard sd;
        char msg[256];
        ck_assert_int_eq(er_standard_parse(names[q], &sd, msg, sizeof msg), ER_OK);
        prob P;
        prob_make(&P, &st, &sd, 261, 19, 300, q == 2 ? 2 : 1, 1, 0);
        elements += check_prob(&P, &st, names[q]);
        prob_free(&P);
    }
    printf("engine_kernel/kernel_many_rows: %lld elements equal\n", (long long)elements);
}
END_TEST

/*
 * The engines' rare end steps (cpu/cpu_bounds_engine.c: eng_ends_rare, Sum2 then the core's exact sum):
 * rows whose second half cancels the first (a[p + k/2] = -a[p], the columns repeating), plus a few small
 * terms, so that x is small beside E and T (the Sum2 step's cancellation case).  The first enclosure s64 +- e64 is about k u T wide and the ends RD(x - E), RU(x + E) lie near
 * +-E, whose f32 spacing is about (k / mk) T 2^-48 (E grows by a normalisation of B ~ T each
 * instruction), so it straddles a rounding boundary at a fraction of about mk / 32 of the elements (seen:
 * 6% to 11% over seeds 1 to 6 and the default).  Every element against er_bound_element, bit for bit;
 * the test counts, with the core's own keys, the elements the first enclosure leaves undecided, and
 * fails below 1 in 32 (it would then hardly reach the rare steps).
 */
START_TEST(kernel_rare_ends)
{
    uint64_t st = er_test_seed("engine_kernel/kernel_rare_ends");
    static const char *names[] = {"hopper", "volta", "cdna3", "hopper-fp8"};
    int64_t elements = 0, undecided = 0;
    for (int q = 0; q < 4; q++) {
        er_standard sd;
        char msg[256];
        ck_assert_int_eq(er_standard_parse(names[q], &sd, msg, sizeof msg), ER_OK);
        const int64_t m = 8, n = 24, k = 2 * irand(&st, 150, 300);
        prob P;
        prob_make(&P, &st, &sd, m, n, k, 0, q & 1, 0);
        for (int64_t i = 0; i < m; i++)
            for (int64_t p = 0; p < k / 2; p++) {
                P.af[i * k + k / 2 + p] = -P.af[i * k + p];
                P.ea[i * k + k / 2 + p] = P.ea[i * k + p];
            }
        for (int64_t p = 0; p < k / 2; p++)
            for (int64_t c = 0; c < n; c++) {
                P.bf[(k / 2 + p) * n + c] = P.bf[p * n + c];
                P.eb[(k / 2 + p) * n + c] = P.eb[p * n + c];
            }
        for (int64_t i = 0; i < m; i++) /* the small terms: a few products near 2^-12 survive */
            for (int t = 0; t < 3; t++) {
                int64_t p = k / 2 + irand(&st, 0, (int)(k / 2 - 1));
                P.af[i * k + p] = ldexp(1.0 + (double)irand(&st, 0, 127) / 128.0, -12) * (irand(&st, 0, 1) ? 1 : -1);
                P.ea[i * k + p] = -12;
            }
        if (P.cv)
            for (int64_t e = 0; e < m * n; e++) P.cv[e] = (double)(float)ldexp(urand(&st) - 0.5, -12);
        P.j.par.out_fmt = ER_FMT_F32;
        P.j.par.maxo = fmtmax(ER_FMT_F32);
        P.j.par.dir = ER_RND_NEAREST_EVEN;
        for (int64_t i = 0; i < m; i++) /* the exactly rounded outputs of the new values */
            for (int64_t c = 0; c < n; c++) {
                double sum = P.cv ? P.cv[i * n + c] : 0.0, cmp = 0.0; /* compensated: near the exact sum (both sides read the same rb) */
                for (int64_t p = 0; p < k; p++) {
                    double x = P.af[i * k + p] * P.bf[p * n + c], t = sum + x;
                    cmp += fabs(sum) >= fabs(x) ? (sum - t) + x : (x - t) + sum;
                    sum = t;
                }
                float f = (float)(sum + cmp);
                uint32_t u;
                memcpy(&u, &f, 4);
                P.rb[i * n + c] = u;
            }
        /* the elements whose first enclosure does not decide (er_b_ends_exact's test) */
        const er_bpar *c = &P.j.par;
        prob_quant(&P);
        for (int64_t i = 0; i < m; i++)
            for (int64_t col = 0; col < n; col++) {
                er_b_eng g;
                double cval = P.cv ? P.cv[i * n + col] : 0.0, s64 = 0, e64 = 0;
                int nonfinite = 0;
                er_b_eng_init(c, &g, cval, 0.0);
                er_b_eng_run(c, &g, P.af + i * k, P.bf + col, P.ea + i * k, P.eb + col, NULL, NULL, P.qa + i * k,
                             P.qb + col);
                double rad = er_b_eng_final(c, &g, cval, &s64, &e64, &nonfinite);
                ck_assert_msg(!nonfinite && isfinite(rad), "%s: element (%lld, %lld) has no finite radius", names[q],
                              (long long)i, (long long)col);
                double xl = er_b_down(s64 - e64), xh = er_b_up(s64 + e64);
                if (!er_b_key_eq(er_b_key_of(c, er_b_down(xl - rad), 0), er_b_key_of(c, er_b_up(xh - rad), 0)) ||
                    !er_b_key_eq(er_b_key_of(c, er_b_down(xl + rad), 1), er_b_key_of(c, er_b_up(xh + rad), 1)))
                    undecided++;
            }
        elements += check_prob(&P, &st, names[q]);
        prob_free(&P);
    }
    printf("engine_kernel/kernel_rare_ends: %lld elements equal, %lld of them past the first enclosure\n",
           (long long)elements, (long long)undecided);
    ck_assert_msg(undecided * 32 >= elements, "only %lld of %lld elements reached the rare end steps", (long long)undecided,
                  (long long)elements);
}
END_TEST

/* A state value: typical, zero, subnormal, huge, infinite, NaN, negative, -0. */
static double state_value(uint64_t *st, int edge)
{
    int r = irand(st, 0, 99);
    if (!edge || r >= 40) return r < 10 ? 0.0 : ldexp(urand(st) + 0.5, irand(st, -160, 40));
    switch (r % 8) {
    case 0: return 0.0;
    case 1: return -0.0;
    case 2: return 0x1p-1074 * irand(st, 1, 1000);
    case 3: return ldexp(urand(st) + 0.5, irand(st, 100, 1024));
    case 4: return INFINITY;
    case 5: return NAN;
    case 6: return -ldexp(urand(st) + 0.5, irand(st, -20, 20));
    default: return 0x1.fffffep127;
    }
}

/* er_cpu_eng_block4 against er_b_eng_block lane by lane, every engine standard, random and edge states. */
START_TEST(block4_vs_scalar)
{
    uint64_t st = er_test_seed("engine_kernel/block4_vs_scalar");
    int count = 0;
    const er_standard_info *list = er_standard_list(&count);
    long accepted = 0, declined = 0, accepted_typical = 0, typical = 0;
    for (int s = 0; s < count; s++) {
        const er_standard *sd = &list[s].std;
        if (sd->kind != ER_STD_ENGINE) continue;
        for (int t = 0; t < 4000; t++) {
            er_bpar c;
            int edge = t % 2;
            int64_t k = irand(&st, 1, 5000);
            make_par(&c, sd, k, 8, irand(&st, 0, 1), irand(&st, 0, 1), 0, 0);
            double T[4], E[4], B[4], R[4], xs[4];
            unsigned char dn[4];
            int32_t em[4];
            int64_t nt = irand(&st, 1, c.mk), p1 = irand(&st, 1, (int)k);
            if (irand(&st, 0, 3) == 0 && c.promote) p1 = c.promote * irand(&st, 1, 4);
            er_b_eng g[4];
            for (int l = 0; l < 4; l++) {
                T[l] = state_value(&st, edge);
                E[l] = state_value(&st, edge);
                B[l] = state_value(&st, edge);
                R[l] = c.promote ? state_value(&st, edge) : 0.0;
                xs[l] = state_value(&st, edge);
                em[l] = edge && irand(&st, 0, 9) == 0 ? irand(&st, -2000, 2000) : irand(&st, -300, edge ? 260 : 90);
                dn[l] = (unsigned char)(edge && irand(&st, 0, 19) == 0);
                g[l].s = 0;
                g[l].pert = 0;
                g[l].T = T[l];
                g[l].E = E[l];
                g[l].B = B[l];
                g[l].R = R[l];
                g[l].done = dn[l];
                er_b_eng_block(&c, &g[l], xs[l], em[l], nt, p1);
            }
            double T0[4], E0[4], B0[4], R0[4];
            unsigned char d0[4];
            memcpy(T0, T, sizeof T);
            memcpy(E0, E, sizeof E);
            memcpy(B0, B, sizeof B);
            memcpy(R0, R, sizeof R);
            memcpy(d0, dn, 4);
            int ok = er_cpu_eng_block4(&c, T, E, B, R, dn, xs, em, nt, p1);
            if (!edge) typical++;
            if (ok < 0) { /* no AVX2: nothing touched */
                ck_assert_msg(!memcmp(T, T0, sizeof T) && !memcmp(E, E0, sizeof E) && !memcmp(B, B0, sizeof B) &&
                                  !memcmp(R, R0, sizeof R) && !memcmp(dn, d0, 4),
                              "%s: the call without AVX2 changed the state", list[s].name);
                declined++;
                continue;
            }
            if (!ok) declined++; /* the lane-by-lane fallback: er_b_eng_block's state all the same */
            else {
                accepted++;
                if (!edge) accepted_typical++;
            }
            for (int l = 0; l < 4; l++)
                ck_assert_msg(dbits(T[l]) == dbits(g[l].T) && dbits(E[l]) == dbits(g[l].E) &&
                                  dbits(B[l]) == dbits(g[l].B) && dbits(R[l]) == dbits(g[l].R) &&
                                  (dn[l] != 0) == (g[l].done != 0),
                              "%s, lane %d (xs %a, emax %d, nt %lld, p1 %lld): T %a/%a E %a/%a B %a/%a R %a/%a done "
                              "%d/%d (vector / scalar)",
                              list[s].name, l, xs[l], em[l], (long long)nt, (long long)p1, T[l], g[l].T, E[l], g[l].E,
                              B[l], g[l].B, R[l], g[l].R, dn[l], g[l].done);
        }
    }
    printf("engine_kernel/block4_vs_scalar: %ld accepted (%ld of %ld typical), %ld declined\n", accepted,
           accepted_typical, typical, declined);
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
    /* where AVX2 runs, the typical states take the vector path (else this test would test nothing) */
    if (__builtin_cpu_supports("avx2"))
        ck_assert_msg(accepted_typical * 2 > typical, "the vector path declined most typical states");
#endif
}
END_TEST

/* The kernels' choice: the widest the processor has, capped by EXACTREF_NO_AVX512 and EXACTREF_NO_SIMD. */
START_TEST(simd_choice)
{
    int hw = er_cpu_engine_simd(2);
    ck_assert_int_ge(hw, 0);
    ck_assert_int_le(hw, 2);
    ck_assert_int_eq(er_cpu_engine_simd(0), 0);
    ck_assert_int_eq(er_cpu_engine_simd(1), hw < 1 ? hw : 1);
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512dq") &&
        __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("fma"))
        ck_assert_int_eq(hw, 2);
    else if (__builtin_cpu_supports("avx2"))
        ck_assert_int_eq(hw, 1);
#endif
    char *no512 = getenv("EXACTREF_NO_AVX512"), *nos = getenv("EXACTREF_NO_SIMD");
    char s512[64] = "", ss[64] = "";
    if (no512) snprintf(s512, sizeof s512, "%s", no512);
    if (nos) snprintf(ss, sizeof ss, "%s", nos);
    unsetenv("EXACTREF_NO_AVX512");
    unsetenv("EXACTREF_NO_SIMD");
    ck_assert_int_eq(er_cpu_engine_simd(-1), hw);
    setenv("EXACTREF_NO_AVX512", "1", 1);
    ck_assert_int_eq(er_cpu_engine_simd(-1), hw < 1 ? hw : 1);
    setenv("EXACTREF_NO_SIMD", "1", 1);
    ck_assert_int_eq(er_cpu_engine_simd(-1), 0);
    unsetenv("EXACTREF_NO_AVX512");
    unsetenv("EXACTREF_NO_SIMD");
    if (no512) setenv("EXACTREF_NO_AVX512", s512, 1);
    if (nos) setenv("EXACTREF_NO_SIMD", ss, 1);
}
END_TEST

int main(void)
{
    static const char *const what[3] = {"the portable kernels only", "AVX2 and portable kernels",
                                        "AVX-512, AVX2 and portable kernels"};
    printf("engine_kernel: this processor runs %s\n", what[er_cpu_engine_simd(2)]);
    Suite *s = suite_create("engine_kernel");
    TCase *tc = tcase_create("engine_kernel");
    tcase_set_timeout(tc, 600);
    tcase_add_loop_test(tc, kernel_vs_element, 0, 2);
    tcase_add_test(tc, kernel_many_rows);
    tcase_add_test(tc, kernel_skipped_exponents);
    tcase_add_test(tc, kernel_rare_ends);
    tcase_add_test(tc, block4_vs_scalar);
    tcase_add_test(tc, simd_choice);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
