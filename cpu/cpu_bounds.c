/* cpu_bounds.c: proven per-element bounds of each standard, and normal() emulated to the bit. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu_engine.h"
#include "cpu_internal.h"
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

/*
 * An engine's elements a row at a time (no slack of A or B): the terms of each instruction are summed
 * for all the row's elements together, reading B' by rows (independent sums: the loop over columns
 * pipelines and vectorises), then each element's instruction recurrence runs (er_b_eng_block).  Every
 * element sees the same operations in the same order as er_b_eng_run's, hence the same bits.  0: no
 * memory (the caller takes the element-at-a-time path).
 */
/* One term of every element of a row: er_b_eng_term's operations, column by column (the exponents
 * are small integers, exact as binary64, so the maximum may be taken in binary64). */
static void terms_row_plain(int64_t n, double av, const double *brow, int eav, const int16_t *erow, double *sv,
                            double *xs, double *em)
{
    for (int64_t col = 0; col < n; col++) {
        double x = av * brow[col];
        double e = (double)(eav + erow[col]); /* a zero product too: er_b_eng_term */
        sv[col] = sv[col] + x;
        if (er_b_finite(x)) xs[col] = xs[col] + fabs(x);
        em[col] = e > em[col] ? e : em[col];
    }
}

#if (defined(__x86_64__) || defined(__i386__)) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define ER_HAVE_AVX2_TERMS 1
/* The same four columns at a time: IEEE multiplication and addition lane by lane, the same bits. */
__attribute__((target("avx2"))) static void terms_row_avx2(int64_t n, double av, const double *brow, int eav,
                                                            const int16_t *erow, double *sv, double *xs, double *em)
{
    const __m256d va = _mm256_set1_pd(av);
    const __m256d absmask = _mm256_castsi256_pd(_mm256_set1_epi64x(0x7FFFFFFFFFFFFFFFLL));
    const __m128i vea = _mm_set1_epi32(eav);
    int64_t col = 0;
    for (; col + 4 <= n; col += 4) {
        __m256d x = _mm256_mul_pd(va, _mm256_loadu_pd(brow + col));
        __m128i e16 = _mm_loadl_epi64((const __m128i *)(erow + col));
        __m256d e = _mm256_cvtepi32_pd(_mm_add_epi32(_mm_cvtepi16_epi32(e16), vea));
        _mm256_storeu_pd(sv + col, _mm256_add_pd(_mm256_loadu_pd(sv + col), x));
        /* the finite terms only: an infinite or NaN x leaves xs as it is (x + 0 where it is finite is x) */
        __m256d ax = _mm256_and_pd(x, absmask);
        __m256d fin = _mm256_cmp_pd(ax, _mm256_set1_pd(0x1.fffffffffffffp+1023), _CMP_LE_OQ);
        __m256d xo = _mm256_loadu_pd(xs + col);
        _mm256_storeu_pd(xs + col, _mm256_blendv_pd(xo, _mm256_add_pd(xo, ax), fin));
        __m256d m = _mm256_loadu_pd(em + col);
        _mm256_storeu_pd(em + col, _mm256_blendv_pd(m, e, _mm256_cmp_pd(e, m, _CMP_GT_OQ)));
    }
    if (col < n) terms_row_plain(n - col, av, brow + col, eav, erow + col, sv + col, xs + col, em + col);
}
#endif

/* The vector paths: where the processor has AVX2, unless EXACTREF_NO_SIMD is set (the tests compare
 * both paths' bits).  Read once per call of engine_rows. */
static int simd_wanted(void)
{
#ifdef ER_HAVE_AVX2_TERMS
    return __builtin_cpu_supports("avx2") && !getenv("EXACTREF_NO_SIMD");
#else
    return 0;
#endif
}

static void terms_row(int simd, int64_t n, double av, const double *brow, int eav, const int16_t *erow, double *sv,
                      double *xs, double *em)
{
#ifdef ER_HAVE_AVX2_TERMS
    if (simd) {
        terms_row_avx2(n, av, brow, eav, erow, sv, xs, em);
        return;
    }
#endif
    (void)simd;
    terms_row_plain(n, av, brow, eav, erow, sv, xs, em);
}

#ifdef ER_HAVE_AVX2_TERMS
/*
 * er_b_eng_block for four elements at once, where every value is finite and not negative (then
 * er_b_up(x) is the next pattern, bits + 1, also for +0, and frexp and 2^e are exponent-field
 * arithmetic on normal values).  Returns 0, touching nothing, when a lane does not meet those
 * conditions before or after (done, bad, a negative or subnormal accumulator, an infinity or NaN on
 * the way): the caller then runs er_b_eng_block lane by lane.  Otherwise the same operations, lane by
 * lane, in the same order: the same bits.
 */
__attribute__((target("avx2"))) static int block4_avx2(const er_bpar *c, er_b_eng *g, const double *xsp,
                                                        const double *emp, int64_t nt, int64_t p1)
{
    for (int l = 0; l < 4; l++) {
        double B = g[l].B, E = g[l].E, R = g[l].R, x = xsp[l];
        if (g[l].done) return 0;
        if (!(B >= 0 && E >= 0 && R >= 0 && x >= 0) || signbit(B) || signbit(E) || signbit(R) || signbit(x)) return 0;
        if (!er_b_finite(B) || !er_b_finite(E) || !er_b_finite(R) || !er_b_finite(x)) return 0;
        if (B != 0 && B < 0x1p-1022) return 0;
    }
    const __m256i one = _mm256_set1_epi64x(1), expmask = _mm256_set1_epi64x(0x7FF0000000000000LL);
#define ER_UP4(v) _mm256_castsi256_pd(_mm256_add_epi64(_mm256_castpd_si256(v), one))
#define ER_POW2_4(e) _mm256_castsi256_pd(_mm256_slli_epi64(_mm256_add_epi64((e), _mm256_set1_epi64x(1023)), 52))
    __m256d T = _mm256_set_pd(g[3].T, g[2].T, g[1].T, g[0].T), B = _mm256_set_pd(g[3].B, g[2].B, g[1].B, g[0].B);
    __m256d E = _mm256_set_pd(g[3].E, g[2].E, g[1].E, g[0].E), R = _mm256_set_pd(g[3].R, g[2].R, g[1].R, g[0].R);
    __m256d xs = _mm256_loadu_pd(xsp), zero = _mm256_setzero_pd();
    __m256d infl = _mm256_set1_pd(1.0 + (double)(c->k + 8) * 0x1p-51);
    T = _mm256_add_pd(T, xs);
    __m256d xs2 = ER_UP4(_mm256_mul_pd(xs, infl));
    /* ec = max(emin_D, frexp_e(B) - 1) where B > 0, else -126 (a zero C) */
    __m256i m126 = _mm256_set1_epi64x(-126), emd = _mm256_set1_epi64x(c->emin_c);
    __m256i exb = _mm256_sub_epi64(_mm256_srli_epi64(_mm256_castpd_si256(B), 52), _mm256_set1_epi64x(1023));
    __m256i ec = _mm256_blendv_epi8(emd, exb, _mm256_cmpgt_epi64(exb, emd));
    ec = _mm256_blendv_epi8(m126, ec, _mm256_castpd_si256(_mm256_cmp_pd(B, zero, _CMP_GT_OQ)));
    /* Es = max(emax + gextra, ec) */
    __m256i em = _mm256_add_epi64(_mm256_cvtepi32_epi64(_mm256_cvtpd_epi32(_mm256_loadu_pd(emp))),
                                  _mm256_set1_epi64x(c->gextra));
    __m256i Es = _mm256_blendv_epi8(ec, em, _mm256_cmpgt_epi64(em, ec));
    {
        /* 2^(Es - F), and for CDNA3 2^(em - F) and 2^(Es - F2), normal binary64 values (else
         * er_b_eng_block's ldexp, lane by lane) */
        __m256i lo = _mm256_set1_epi64x(-1022), hi = _mm256_set1_epi64x(1023);
        __m256i ef = _mm256_sub_epi64(Es, _mm256_set1_epi64x(c->F));
        __m256i ef2 = _mm256_sub_epi64(Es, _mm256_set1_epi64x(c->F2 ? c->F2 : c->F));
        __m256i efp = _mm256_sub_epi64(c->F2 ? em : Es, _mm256_set1_epi64x(c->F));
        __m256i out = _mm256_or_si256(_mm256_cmpgt_epi64(lo, ef), _mm256_cmpgt_epi64(ef, hi));
        out = _mm256_or_si256(out, _mm256_or_si256(_mm256_cmpgt_epi64(lo, ef2), _mm256_cmpgt_epi64(ef2, hi)));
        out = _mm256_or_si256(out, _mm256_or_si256(_mm256_cmpgt_epi64(lo, efp), _mm256_cmpgt_epi64(efp, hi)));
        if (!_mm256_testz_si256(out, out)) return 0;
    }
    __m256d trunc;
    if (c->F2) { /* CDNA3: er_b_eng_block's three terms, in its order */
        trunc = ER_UP4(_mm256_mul_pd(_mm256_set1_pd((double)(nt + c->xterms)),
                                     ER_POW2_4(_mm256_sub_epi64(em, _mm256_set1_epi64x(c->F)))));
        trunc = ER_UP4(_mm256_add_pd(trunc, ER_POW2_4(_mm256_sub_epi64(Es, _mm256_set1_epi64x(c->F)))));
        trunc = ER_UP4(_mm256_add_pd(trunc, ER_POW2_4(_mm256_sub_epi64(Es, _mm256_set1_epi64x(c->F2)))));
    } else {
        trunc = ER_UP4(_mm256_mul_pd(_mm256_set1_pd((double)(nt + 1 + c->xterms)),
                                     ER_POW2_4(_mm256_sub_epi64(Es, _mm256_set1_epi64x(c->F)))));
    }
    __m256d dmax = ER_UP4(_mm256_add_pd(ER_UP4(_mm256_add_pd(B, xs2)), trunc));
    /* sh = frexp_e(dmax) - 1 - out_p - rne; norm = 2^qe below qe (D's subnormal quantum, halved to nearest) */
    const int rne = c->out_round == ER_RND_NEAREST_EVEN ? 1 : 0, qe = er_b_eng_qe(c);
    __m256i sh = _mm256_sub_epi64(_mm256_srli_epi64(_mm256_castpd_si256(dmax), 52),
                                  _mm256_set1_epi64x(1023 + c->out_p + rne));
    __m256d norm = _mm256_blendv_pd(ER_POW2_4(sh), _mm256_set1_pd(ldexp(1.0, qe)),
                                    _mm256_castsi256_pd(_mm256_cmpgt_epi64(_mm256_set1_epi64x(qe), sh)));
    E = ER_UP4(_mm256_add_pd(ER_UP4(_mm256_add_pd(E, trunc)), norm));
    B = ER_UP4(_mm256_add_pd(dmax, norm));
    __m256d maxc = _mm256_set1_pd(c->max_c);
    __m256d done = _mm256_or_pd(_mm256_cmp_pd(B, maxc, _CMP_GE_OQ), _mm256_cmp_pd(R, maxc, _CMP_GE_OQ));
    __m256d E2 = E, R2 = R, B2 = B;
    if (c->promote && (p1 % c->promote == 0 || p1 == c->k)) {
        __m256d rnew = ER_UP4(_mm256_add_pd(R, B));
        __m256d perr = ER_UP4(_mm256_mul_pd(rnew, _mm256_set1_pd(0x1p-24)));
        E2 = ER_UP4(_mm256_add_pd(E, perr));
        R2 = ER_UP4(_mm256_add_pd(rnew, perr));
        B2 = zero;
    }
    /* every value finite (a pattern past the largest finite one would not be er_b_up's): else decline */
    __m256i bad = _mm256_cmpeq_epi64(_mm256_and_si256(_mm256_castpd_si256(xs2), expmask), expmask);
    bad = _mm256_or_si256(bad, _mm256_cmpeq_epi64(_mm256_and_si256(_mm256_castpd_si256(trunc), expmask), expmask));
    bad = _mm256_or_si256(bad, _mm256_cmpeq_epi64(_mm256_and_si256(_mm256_castpd_si256(dmax), expmask), expmask));
    bad = _mm256_or_si256(bad, _mm256_cmpeq_epi64(_mm256_and_si256(_mm256_castpd_si256(E2), expmask), expmask));
    bad = _mm256_or_si256(bad, _mm256_cmpeq_epi64(_mm256_and_si256(_mm256_castpd_si256(R2), expmask), expmask));
    bad = _mm256_or_si256(bad, _mm256_cmpeq_epi64(_mm256_and_si256(_mm256_castpd_si256(B), expmask), expmask));
    if (!_mm256_testz_si256(bad, bad)) return 0;
    double t[4], e[4], r[4], b[4], d[4];
    _mm256_storeu_pd(t, T);
    /* a lane that overflowed keeps the values of the overflow step (its state is never read again) */
    _mm256_storeu_pd(e, _mm256_blendv_pd(E2, E, done));
    _mm256_storeu_pd(r, _mm256_blendv_pd(R2, R, done));
    _mm256_storeu_pd(b, _mm256_blendv_pd(B2, B, done));
    _mm256_storeu_pd(d, done);
    for (int l = 0; l < 4; l++) {
        g[l].T = t[l];
        g[l].E = e[l];
        g[l].R = r[l];
        g[l].B = b[l];
        g[l].done = d[l] != 0;
    }
#undef ER_UP4
#undef ER_POW2_4
    return 1;
}
#endif

/* er_b_eng_block for the n elements of a row. */
static void blocks_row(int simd, const er_bpar *par, er_b_eng *g, const double *xs, const double *em, int64_t n,
                       int64_t nt, int64_t p1)
{
    int64_t col = 0;
#ifdef ER_HAVE_AVX2_TERMS
    if (simd)
        for (; col + 4 <= n; col += 4)
            if (!block4_avx2(par, g + col, xs + col, em + col, nt, p1))
                for (int l = 0; l < 4; l++) er_b_eng_block(par, &g[col + l], xs[col + l], (int)em[col + l], nt, p1);
#endif
    (void)simd;
    for (; col < n; col++) er_b_eng_block(par, &g[col], xs[col], (int)em[col], nt, p1);
}

static int engine_rows(bctx *c)
{
    const er_bjob *j = c->job;
    const er_bpar *par = &j->par;
    int64_t n = j->n, k = par->k;
    er_b_eng *g = malloc(sizeof *g * (size_t)(n ? n : 1));
    double *sv = malloc(sizeof(double) * (size_t)(n ? n : 1)), *xs = malloc(sizeof(double) * (size_t)(n ? n : 1));
    double *em = malloc(sizeof(double) * (size_t)(n ? n : 1));
    int simd = simd_wanted();
    if (!g || !sv || !xs || !em) {
        free(g); free(sv); free(xs); free(em);
        return 0;
    }
    for (int64_t i = c->r0; i < c->r1; i++) {
        const double *ar = j->af + i * k;
        const int16_t *ea = j->ea + i * k;
        for (int64_t col = 0; col < n; col++) {
            er_b_eng_init(par, &g[col], j->cv ? j->cv[i * n + col] : 0.0, j->dc ? j->dc[i * n + col] : 0.0);
            sv[col] = 0;
        }
        for (int64_t p0 = 0; p0 < k; p0 += par->mk) {
            int64_t p1 = p0 + par->mk < k ? p0 + par->mk : k;
            for (int64_t col = 0; col < n; col++) {
                xs[col] = 0;
                em[col] = -100000.0;
            }
            for (int64_t p = p0; p < p1; p++) {
                const double av = ar[p], *brow = j->bf + p * n;
                const int eav = ea[p];
                const int16_t *erow = j->eb + p * n;
                terms_row(simd, n, av, brow, eav, erow, sv, xs, em);
            }
            blocks_row(simd, par, g, xs, em, n, p1 - p0, p1);
        }
        for (int64_t col = 0; col < n; col++) {
            er_bel b;
            g[col].s = sv[col];
            er_b_eng_element(par, &g[col], j->cv ? j->cv[i * n + col] : 0.0, j->rb[i * n + col], &b);
            put_bel(c->out, c->e0 + i * n + col, &b);
        }
    }
    free(g); free(sv); free(xs); free(em);
    return 1;
}

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
    for (int64_t i = c->r0; i < c->r1; i++)
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
    for (int t = 0; t < T; t++) {
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

#include "../src/host/er_tile.h"
#include "exactref/core/er_mma.h" /* er_mma_normal_element */

/*
 * normal() on the CPU runs the core's element, er_mma_normal_element (include/exactref/core/er_mma.h:
 * binary64 emulated with integers, er_d64.h), the very source the OpenCL and CUDA kernels run, over
 * the same tiles (src/host/er_tile.h): each tile's operands packed, its elements computed on the
 * problem's threads, the results scattered into out.  A tile's buffers take at most
 * ER_CPU_NORMAL_TILE bytes.
 */
#define ER_CPU_NORMAL_TILE ((uint64_t)64 << 20)

static int normal_fits(const void *ctx, uint64_t nbt, uint64_t nr, uint64_t nc)
{
    uint64_t sz[ER_TB_COUNT], t = 0;
    er_tile_sizes((const er_tiling *)ctx, nbt, nr, nc, sz);
    for (int i = 0; i < ER_TB_COUNT; i++) t += sz[i];
    return t <= ER_CPU_NORMAL_TILE;
}

/* The elements [e0, e1) of a packed tile (one thread's share; each element is its own: the same bits
 * for any split). */
typedef struct {
    const er_i64 *prm;
    unsigned char *const *buf;
    int64_t e0, e1;
} normal_part;

static void *normal_thread(void *arg)
{
    const normal_part *w = (const normal_part *)arg;
    uint64_t *d = (uint64_t *)w->buf[ER_TB_D];
    for (int64_t e = w->e0; e < w->e1; e++)
        d[e] = er_mma_normal_element(w->prm, w->buf[ER_TB_A], w->buf[ER_TB_B], w->buf[ER_TB_SA], w->buf[ER_TB_SB],
                                     w->buf[ER_TB_C], e);
    return NULL;
}

/* Every element of a tile on up to `threads` threads (the calling one among them). */
static void normal_tile(const er_i64 *prm, unsigned char *const *buf, int64_t el, int threads)
{
    enum { MAXT = 64 };
    normal_part w[MAXT];
    pthread_t th[MAXT];
    int started[MAXT], T = threads < 1 ? 1 : threads > MAXT ? MAXT : threads;
    if (T > el) T = (int)(el > 0 ? el : 1);
    for (int t = 0; t < T; t++) {
        w[t].prm = prm;
        w[t].buf = buf;
        w[t].e0 = el * t / T;
        w[t].e1 = el * (t + 1) / T;
        started[t] = t > 0 && pthread_create(&th[t], NULL, normal_thread, &w[t]) == 0;
    }
    for (int t = 1; t < T; t++)
        if (!started[t]) normal_thread(&w[t]); /* no thread: this one does the share */
    normal_thread(&w[0]);
    for (int t = 1; t < T; t++)
        if (started[t]) pthread_join(th[t], NULL);
}

int er_cpu_normal(const er_problem *P, int compute, int ftz, er_tensor *out)
{
    er_mma_args a = *P->args;
    er_tiling T;
    unsigned char *buf[ER_TB_COUNT];
    uint64_t sz[ER_TB_COUNT];
    int64_t nbt = 1, nr = 1, nc = 1, wrapped = 0;
    int st = ER_OK;
    a.d = out;
    a.lo = a.hi = a.odd = NULL;
    er_tiling_init(&T, &a, P->kind, P->scaled, P->has_c, P->acc_lo, P->acc_nd, P->batch, P->m, P->n, P->k, P->nblocks,
                   1, compute, ftz ? 1 : 0);
    if (P->batch == 0 || P->m == 0 || P->n == 0) return ER_OK;
    if (!er_tile_plan((uint64_t)P->batch, (uint64_t)P->m, (uint64_t)P->n, UINT64_MAX, normal_fits, &T, &nbt, &nr, &nc))
        nbt = nr = nc = 1; /* one element's operands beyond the tile's size: one element at a time */
    er_tile_sizes(&T, (uint64_t)nbt, (uint64_t)nr, (uint64_t)nc, sz);
    memset(buf, 0, sizeof buf);
    for (int i = 0; i < ER_TB_COUNT; i++)
        if (sz[i] && !(buf[i] = (unsigned char *)malloc((size_t)sz[i]))) st = ER_ENOMEM;
    for (int64_t b0 = 0; st == ER_OK && b0 < P->batch; b0 += nbt) {
        int64_t tb_ = P->batch - b0 < nbt ? P->batch - b0 : nbt;
        for (int64_t i0 = 0; i0 < P->m; i0 += nr)
            for (int64_t j0 = 0; j0 < P->n; j0 += nc) {
                int64_t tr_ = P->m - i0 < nr ? P->m - i0 : nr, tc_ = P->n - j0 < nc ? P->n - j0 : nc;
                er_i64 prm[ER_MP_COUNT];
                er_tile_params(&T, tb_, tr_, tc_, prm);
                er_tile_pack(&T, buf, b0, tb_, i0, tr_, j0, tc_);
                normal_tile(prm, buf, tb_ * tr_ * tc_, P->nthreads);
                er_tile_scatter(&T, buf, b0, tb_, i0, tr_, j0, tc_, &wrapped);
            }
    }
    for (int i = 0; i < ER_TB_COUNT; i++) free(buf[i]);
    return st;
}
