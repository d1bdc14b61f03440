/* cpu_bounds.c: proven per-element bounds of each standard, and normal() emulated to the bit. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu_engine.h"
#include "cpu_internal.h"

/*
 * Every bound here is proven in docs/proofs/ (normal.md, any-order.md, engines.md); the comments at
 * the points of use give the argument in short.  Bound arithmetic is binary64 rounded to nearest and
 * then moved outward (step_up / step_down, one ulp: a correctly rounded result is within half an ulp)
 * or inflated by a factor that covers every rounding of the computation; the FPU's rounding mode is
 * never changed.  The same code gives the same bits wherever binary64 is IEEE with contraction off.
 */

typedef struct {
    problem *P;
    const er_tensor *rounded;
    int out_fmt, compute;
    int ftz;
    const er_standard *std;
    er_bounds *out;
    double *af, *bf;      /* binary64 copies of A' and B' (exact) for one batch */
    int16_t *ea, *eb;     /* engine models: upper bounds of each A' and B' element's hardware exponent */
    double *rw;           /* normal: the number of roundings on term p's path, k entries */
    double r_c, r_max;    /* the same for C, and the largest */
    int64_t b, r0, r1;
    /* compute format */
    double u, eta, emin_c, max_c;
    int c_rounds;         /* C is rounded into compute first */
    int exact_products;   /* products are exact in binary64 */
    const er_slack *slack;/* results as inputs: how far each stored operand may be from its value */
    const double *da, *db;/* the slack of this batch's A (m x k) and B (k x n), or NULL */
    const double *dc;     /* the slack of this batch's C (m x n), or NULL */
    const double *babs;   /* gemm path: |B'| (k x n) of this batch, or NULL */
} bctx;

static double fmt_max(int f)
{
    er_format_info fi;
    double x;
    er_format_get_info(f, &fi);
    er_from_bits(f, fi.max_finite_bits, &x);
    return x;
}

static double pattern_value(int f, uint64_t bits)
{
    return bits_to_double(er_convert(f, ER_FMT_F64, bits, ER_RND_NEAREST_EVEN, 0u).bits);
}

/* gamma-like factor u * r / (1 - r_max u), rounded up; inf when r_max u >= 1/2 (no useful bound). */
static double gamma_factor(double u, double rmax)
{
    double x = rmax * u; /* exact: u is a power of two and rmax an integer below 2^26 */
    if (x >= 0.5) return INFINITY;
    return step_up(u / step_down(1.0 - x));
}

/* ---- The standards' radii for element (i, j); see docs/proofs. ---- */

/*
 * normal and any_order.  With the products x_p (exact in binary64 here, or rounded once for f64
 * inputs) and C, an implementation's value before the final rounding is
 *     s_hat = sum_t x_t prod_{rounds on t's path} (1 + d),  |d| <= u,
 * so |s_hat - s| <= sum_t |x_t| gamma_{r_t} <= u/(1 - r_max u) sum_t |x_t| r_t (Higham, 3rd lemma of
 * ch. 3), plus, per rounded product, 2 eta for underflow (its absolute error eta, carried through
 * later additions by at most a factor 2), plus, with flush-to-zero, the flushed values.
 *   any_order: every path has at most n roundings (n - 1 additions and one product or fma), r_t <= n.
 *   normal:    r_t from the index-order and lane structure (weights rw[p], r_c), computed in
 *              normal_weights; where an intermediate overflow could restart a partial sum the
 *              structure changes and the any_order weights are used instead (any tree: r_t <= n).
 */
static double radius_from_sums(const bctx *c, int64_t i, int64_t j, double s, double T, double W, double Tf,
                               double pert, double cval, double *s64, double *e64, int *nonfinite);

static double radius_sum(const bctx *c, int64_t i, int64_t j, double cval, double *s64, double *e64, int *nonfinite)
{
    const problem *P = c->P;
    int64_t k = P->k, n = P->n;
    const double *ar = c->af + i * k;
    double s = 0, T = 0, W = 0, Tf = 0, thr = 0x1p-126;
    int any = c->std->kind == ER_STD_ANY_ORDER;
    thr = ldexp(1.0, (int)c->emin_c);
    double pert = 0;
    for (int64_t p = 0; p < k; p++) {
        double a = ar[p], bb = c->bf[p * n + j], x = a * bb, ax = fabs(x);
        s += x;
        if (c->da || c->db) {
            /* results as inputs: the stored operands lie within da, db of these values, so every
             * |term| an implementation meets is at most (|a| + da)(|b| + db), and the exact value it
             * approximates is at most da|b| + |a|db + da db away (docs/proofs/foundations.md) */
            double sa = c->da ? c->da[i * k + p] : 0, sbb = c->db ? c->db[p * n + j] : 0;
            ax = step_up(step_up(fabs(a) + sa) * step_up(fabs(bb) + sbb));
            pert += step_up(step_up(sa * fabs(bb)) + step_up(fabs(a) * sbb)) + step_up(sa * sbb);
        }
        T += ax;
        if (!any) W += ax * c->rw[p];
        if (c->ftz && ((a != 0 && fabs(a) < thr) || (bb != 0 && fabs(bb) < thr))) Tf += ax;
    }
    return radius_from_sums(c, i, j, s, T, W, Tf, pert, cval, s64, e64, nonfinite);
}

/* The radius of normal or any_order from the sums over the products of element (i, j): s (their
 * binary64 sum), T (of their magnitudes), W (of their magnitudes times their path lengths), Tf (of the
 * flushable ones) and pert (results as inputs); C is added here. */
static double radius_from_sums(const bctx *c, int64_t i, int64_t j, double s, double T, double W, double Tf,
                               double pert, double cval, double *s64, double *e64, int *nonfinite)
{
    const problem *P = c->P;
    int64_t k = P->k, n = P->n;
    int any = c->std->kind == ER_STD_ANY_ORDER;
    double thr = ldexp(1.0, (int)c->emin_c);
    s += cval;
    double sc = c->dc ? c->dc[i * n + j] : 0;
    T += fabs(cval) + sc;
    if (!any) W += (fabs(cval) + sc) * c->r_c;
    pert += sc;
    if (!isfinite(s)) {
        *nonfinite = 1;
        return INFINITY;
    }
    if (!isfinite(T) || !isfinite(pert)) return INFINITY; /* an unbounded input: no finite bound here */
    /* the binary64 sum itself: |s - exact| <= (k + 2) 2^-53 T (products exact or rounded once),
     * plus (k + 1) 2^-1074 for products of f64 inputs that underflow */
    double infl = 1.0 + (double)(k + 8) * 0x1p-51;
    *s64 = s;
    *e64 = step_up(step_up((double)(k + 3) * 0x1p-53 * T * infl) + (double)(k + 1) * 0x1p-1074);
    double Tup = step_up(T * infl);
    double nterms = (double)k + (P->has_c ? 1 : 0);
    double rad;
    if (any || step_up(Tup * (1 + 0x1p-20)) >= c->max_c) {
        /* any tree (also normal's restarted partial sums): r_t <= n */
        double g = gamma_factor(c->u, nterms + c->c_rounds);
        rad = step_up(g * Tup * (nterms + c->c_rounds));
    } else {
        double g = gamma_factor(c->u, c->r_max);
        rad = step_up(g * step_up(W * infl));
    }
    /* underflow of each rounded product: absolute eta, at most doubled on its way */
    rad = step_up(rad + step_up(2.0 * c->eta * (double)k));
    if (c->ftz) {
        /* flushed inputs (their products lost entirely) and every subnormal product or sum flushed:
         * less than 2^emin_c each, 2n + 1 operations, each carried by at most a factor 2 */
        rad = step_up(rad + step_up(Tf * infl) + step_up(2.0 * thr * (2.0 * nterms + 1.0)));
    }
    if (pert > 0) rad = step_up(rad + step_up(pert * infl));
    return rad;
}

/*
 * Matrix engines (accumulation-models.md; docs/proofs/engines.md).  Per instruction of k products and
 * the accumulator C: every term is truncated at weight 2^(E - F), E the largest term exponent, an
 * error below 2^(E - F) per term, so below (k + 1) 2^(E - F) in all; the normalisation to out_p
 * fraction bits (toward zero; to nearest: half of it) errs by less than 2^(floor(log2|D|) - out_p).
 * E is bounded from the elements' hardware exponents (ea, eb: the exponent of the significand in
 * [1, 2), the format's minimum for subnormals, -126 for zero; scale exponents added) and from the
 * bound B on |C|.  B grows by each step's sum of |products| and its error.  Promotion every
 * `promote` products adds the partial into an f32 accumulator: one more f32 rounding of at most
 * 2^-24 of the new value.
 */
static double radius_engine(const bctx *c, int64_t i, int64_t j, double cval, double *s64, double *e64, int *nonfinite)
{
    const problem *P = c->P;
    const er_standard *m = c->std;
    int64_t k = P->k, n = P->n;
    const double *ar = c->af + i * k;
    const int16_t *er_ = c->ea + i * k;
    double s = 0, T = 0, E = 0, infl = 1.0 + (double)(k + 8) * 0x1p-51;
    int gextra = 0;
    while ((1 << gextra) < m->group) gextra++;
    /* the accumulators: B bounds |D| of the running tensor-core partial, R the promoted f32 one */
    double sc = c->dc ? c->dc[i * n + j] : 0, pert = sc;
    double B = P->has_c && !m->promote ? fabs(cval) + sc : 0.0, R = P->has_c && m->promote ? fabs(cval) + sc : 0.0;
    for (int64_t p0 = 0; p0 < k; p0 += m->k) {
        int64_t p1 = p0 + m->k < k ? p0 + m->k : k;
        double xs = 0;
        int emax = -100000;
        for (int64_t p = p0; p < p1; p++) {
            double x = ar[p] * c->bf[p * n + j];
            /* a zero product is a term of exponent -126 (the model's rule for zeros) */
            int e = x == 0 ? -126 : er_[p] + c->eb[p * n + j];
            double ax = fabs(x);
            s += x;
            if (c->da || c->db) {
                /* results as inputs: the stored operands may be up to da, db away: larger terms, larger
                 * exponents (floor(log2(|a| + da)) + 1 bounds the stored operand's exponent) */
                double sa = c->da ? c->da[i * k + p] : 0, sbb = c->db ? c->db[p * n + j] : 0;
                double A_ = step_up(fabs(ar[p]) + sa), B_ = step_up(fabs(c->bf[p * n + j]) + sbb);
                ax = step_up(A_ * B_);
                pert += step_up(step_up(sa * fabs(c->bf[p * n + j])) + step_up(fabs(ar[p]) * sbb)) + step_up(sa * sbb);
                if (ax > 0) {
                    int ea_, eb_;
                    frexp(A_, &ea_);
                    frexp(B_, &eb_);
                    int e2 = ea_ + eb_;
                    e = e2 > e ? e2 : e;
                    if (x == 0) e = e2 > -126 ? e2 : -126;
                }
            }
            xs += ax;
            if (e > emax) emax = e;
        }
        T += xs;
        xs = step_up(xs * infl);
        /* C is an f32: its exponent is at least f32's minimum, -126, also when it is subnormal or 0 */
        int ec = -126;
        if (B > 0) {
            int ex;
            frexp(B, &ex);
            if (ex - 1 > ec) ec = ex - 1;
        }
        int Es = (emax + gextra > ec ? emax + gextra : ec);
        double trunc = step_up(ldexp((double)(p1 - p0 + 1), Es - m->F));
        double dmax = step_up(step_up(B + xs) + trunc);
        int ed;
        frexp(dmax, &ed);
        double norm = ldexp(1.0, ed - 1 - m->out_p - (m->out_round == ER_RND_NEAREST_EVEN ? 1 : 0));
        /* in f32's subnormal range the quantum is 2^-149, whatever the exponent of |D| */
        if (norm < 0x1p-149) norm = 0x1p-149;
        E = step_up(step_up(E + trunc) + norm);
        B = step_up(dmax + norm);
        if (B >= c->max_c || R >= c->max_c) return INFINITY; /* an intermediate overflow: no finite bound */
        if (m->promote && (p1 % m->promote == 0 || p1 == k)) {
            double rnew = step_up(R + B);
            double perr = step_up(rnew * 0x1p-24);
            E = step_up(E + perr);
            R = step_up(rnew + perr);
            B = 0;
        }
    }
    s += cval;
    T += fabs(cval);
    if (!isfinite(s) || !isfinite(T)) {
        *nonfinite = 1;
        return INFINITY;
    }
    *s64 = s;
    *e64 = step_up((double)(k + 3) * 0x1p-53 * T * infl);
    if (P->has_c && c->c_rounds) E = step_up(E + step_up(fabs(cval) * 0x1p-24));
    if (!isfinite(pert)) return INFINITY;
    if (pert > 0) E = step_up(E + step_up(pert * infl));
    if (m->tf32_inputs) {
        /* f32 operands truncated to tf32 first: each factor loses less than 2^-10 of itself, so a product
         * less than (2^-10 + 2^-10 + 2^-20) of itself; the sum of those losses is below that times T */
        int na = P->a.fmt == ER_FMT_F32, nb = P->b.fmt == ER_FMT_F32;
        double rel = (na ? 0x1p-10 : 0) + (nb ? 0x1p-10 : 0) + (na && nb ? 0x1p-20 : 0);
        if (rel > 0) E = step_up(E + step_up(step_up(T * infl) * rel));
    }
    return E;
}

/* ---- From a radius to tolerance, finite_range and may_be. ---- */

static int is_nan_pattern(int f, uint64_t bits)
{
    er_val v = er_decode(f, bits);
    return v.cls == ER_CLASS_NAN;
}

static int is_inf_pattern(int f, uint64_t bits, int *sign)
{
    er_val v = er_decode(f, bits);
    *sign = (int)v.sign;
    return v.cls == ER_CLASS_INF;
}

static void finish_element(const bctx *c, int64_t e, uint64_t rbits, double s64, double e64, double rad,
                           int nonfinite_inputs, int uncertain)
{
    er_bounds *o = c->out;
    const er_mma_args *A = c->P->args;
    int of = c->out_fmt, dir = A->rounding;
    unsigned opts = A->opts;
    double rv = pattern_value(of, rbits), maxo = fmt_max(of);
    o->radius[e] = rad;
    o->has_range[e] = 0;
    o->may_pinf[e] = o->may_ninf[e] = o->may_nan[e] = 0;
    o->low[e] = o->high[e] = rbits;
    if (nonfinite_inputs && uncertain) {
        /* a stored operand may be NaN or infinite where the earlier result allowed it, or finite
         * where its reference was not: no bound, every special possible */
        o->tolerance[e] = isfinite(rv) ? INFINITY : NAN;
        o->has_range[e] = 1;
        o->may_pinf[e] = o->may_ninf[e] = o->may_nan[e] = 1;
        er_bits_of(of, -maxo, &o->low[e]);
        er_bits_of(of, maxo, &o->high[e]);
        if (!er_fmt_signed(er_fmt_get(of))) o->low[e] = 0;
        return;
    }
    if (nonfinite_inputs) {
        /* a NaN or infinite exact value: every implementation meets the same special values (no
         * order turns +inf alone into NaN), so it outputs what rounded is */
        o->tolerance[e] = isfinite(rv) ? 0.0 : NAN;
        if (isfinite(rv)) o->has_range[e] = 1;
        else if (isnan(rv)) o->may_nan[e] = 1;
        else if (rv > 0) o->may_pinf[e] = 1;
        else o->may_ninf[e] = 1;
        return;
    }
    double lo = -INFINITY, hi = INFINITY;
    if (!isfinite(rad)) o->may_nan[e] = 1; /* unbounded: an intermediate overflow may meet its opposite */
    if (isfinite(rad)) {
        lo = step_down(step_down(s64 - e64) - rad);
        hi = step_up(step_up(s64 + e64) + rad);
    }
    /* values beyond compute's range: the compute result is an infinity (no order avoids it then) */
    double lo_c = lo < -c->max_c ? -c->max_c : lo, hi_c = hi > c->max_c ? c->max_c : hi;
    er_res inf_p = er_convert(ER_FMT_F64, of, UINT64_C(0x7FF0000000000000), dir, opts);
    er_res inf_n = er_convert(ER_FMT_F64, of, UINT64_C(0xFFF0000000000000), dir, opts);
    int sgn;
    if (hi > c->max_c) {
        if (is_nan_pattern(of, inf_p.bits)) o->may_nan[e] = 1;
        else if (is_inf_pattern(of, inf_p.bits, &sgn)) o->may_pinf[e] = 1;
    }
    if (lo < -c->max_c) {
        if (is_nan_pattern(of, inf_n.bits)) o->may_nan[e] = 1;
        else if (is_inf_pattern(of, inf_n.bits, &sgn)) o->may_ninf[e] = 1;
    }
    double flo = NAN, fhi = NAN;
    if (!er_fmt_signed(er_fmt_get(of)) && lo_c <= 0) {
        /* an unsigned output (f8E8M0FNU): every value <= 0 gives NaN and every positive value a
         * positive pattern, so the monotone argument applies to the positive part only */
        o->may_nan[e] = 1;
        lo_c = 0x1p-1074;
    }
    if (lo_c <= hi_c) {
        uint64_t lp = convert_from_f64(of, double_to_bits(lo_c), dir, opts).bits;
        uint64_t hp = convert_from_f64(of, double_to_bits(hi_c), dir, opts).bits;
        double lv = pattern_value(of, lp), hv = pattern_value(of, hp);
        if (isnan(lv)) o->may_nan[e] = 1;
        if (isnan(hv)) o->may_nan[e] = 1;
        if (isinf(lv) && lv < 0) o->may_ninf[e] = 1;
        if (isinf(hv) && hv > 0) o->may_pinf[e] = 1;
        /* the finite outputs: rounding is monotone and the interval connected */
        flo = isfinite(lv) ? lv : (lo_c < 0 ? -maxo : NAN);
        fhi = isfinite(hv) ? hv : (hi_c > 0 ? maxo : NAN);
        if (isfinite(flo) && isfinite(fhi) && flo <= fhi) {
            uint64_t b1 = lp, b2 = hp;
            o->has_range[e] = 1;
            if (!isfinite(lv)) er_bits_of(of, flo, &b1); /* -max: a value of the format */
            if (!isfinite(hv)) er_bits_of(of, fhi, &b2);
            o->low[e] = b1;
            o->high[e] = b2;
        }
    }
    if (!isfinite(rv)) {
        o->tolerance[e] = NAN;
    } else if (!isfinite(rad)) {
        o->tolerance[e] = INFINITY;
    } else if (o->has_range[e]) {
        double d1 = step_up(rv - flo), d2 = step_up(fhi - rv);
        o->tolerance[e] = d1 > d2 ? d1 : d2;
        if (o->tolerance[e] < 0) o->tolerance[e] = 0;
    } else {
        o->tolerance[e] = INFINITY;
    }
}

/* ---- Threads over rows. ---- */

static void bounds_rows(bctx *c)
{
    const problem *P = c->P;
    int64_t n = P->n, k = P->k, rows = c->r1 - c->r0;
    er_format_info fo;
    er_format_get_info(c->out_fmt, &fo);
    /* normal and any_order need three sums per element over its products: s, T = sum |a||b| and
     * W = sum |a| r_p |b|.  With exact products and nothing else per product (no flush, no slack), they
     * are three matrix products, computed by the fast path's kernel in any order: the radius's
     * inflation factor covers any order of a sum of non-negative terms, and e64 the sum s. */
    double *S = NULL, *TT = NULL, *WW = NULL, *aa = NULL, *aw = NULL;
    if (c->babs && rows > 0) {
        S = malloc(sizeof(double) * (size_t)(rows * n));
        TT = malloc(sizeof(double) * (size_t)(rows * n));
        WW = malloc(sizeof(double) * (size_t)(rows * n));
        aa = malloc(sizeof(double) * (size_t)(rows * (k ? k : 1)));
        aw = malloc(sizeof(double) * (size_t)(rows * (k ? k : 1)));
        int ok = S && TT && WW && aa && aw;
        if (ok) {
            for (int64_t i = 0; i < rows; i++)
                for (int64_t p = 0; p < k; p++) {
                    double v = fabs(c->af[(c->r0 + i) * k + p]);
                    aa[i * k + p] = v;
                    aw[i * k + p] = v * c->rw[p]; /* exact: at most 24 + 26 bits */
                }
            ok = er_cpu_gemm_rows(c->af + c->r0 * k, k, c->bf, n, S, n, 0, rows, n, k) == 0 &&
                 er_cpu_gemm_rows(aa, k, c->babs, n, TT, n, 0, rows, n, k) == 0 &&
                 er_cpu_gemm_rows(aw, k, c->babs, n, WW, n, 0, rows, n, k) == 0;
        }
        if (!ok) { /* no memory: the per-element loop below needs none */
            free(S); free(TT); free(WW);
            S = TT = WW = NULL;
        }
        free(aa);
        free(aw);
    }
    for (int64_t i = c->r0; i < c->r1; i++) {
        for (int64_t j = 0; j < n; j++) {
            int64_t e = (c->b * P->m + i) * n + j;
            double cval = 0, s64 = 0, e64 = 0, rad;
            int nonfinite = 0;
            if (P->has_c) cval = val_to_double(er_decode(P->c.fmt, load(&P->c, c->b, i, j)));
            if (!isfinite(cval)) nonfinite = 1;
            if (c->std->kind == ER_STD_ENGINE)
                rad = radius_engine(c, i, j, cval, &s64, &e64, &nonfinite);
            else if (S) {
                int64_t q = (i - c->r0) * n + j;
                if (!isfinite(S[q]) || !isfinite(TT[q])) /* an infinite or NaN operand: the exact loop */
                    rad = radius_sum(c, i, j, cval, &s64, &e64, &nonfinite);
                else
                    rad = radius_from_sums(c, i, j, S[q], TT[q], WW[q], 0.0, 0.0, cval, &s64, &e64, &nonfinite);
            } else
                rad = radius_sum(c, i, j, cval, &s64, &e64, &nonfinite);
            uint64_t rb = load(&(view){(const unsigned char *)c->rounded->data, c->out_fmt, fo.storage_bytes,
                                       c->rounded->ndim == 3 ? c->rounded->strides[0] : 0,
                                       c->rounded->strides[c->rounded->ndim - 2],
                                       c->rounded->strides[c->rounded->ndim - 1]},
                               c->b, i, j);
            finish_element(c, e, rb, s64, e64, rad, nonfinite, c->slack != NULL && !isfinite(rad));
        }
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

/* The hardware exponent bound of a decoded element (accumulation-models.md, step 2). */
static int16_t hw_exp(er_val v, int fmt)
{
    if (v.cls == ER_CLASS_ZERO) return -126;
    if (v.cls != ER_CLASS_NORMAL && v.cls != ER_CLASS_SUBNORMAL) return 0;
    int top = 63 - ER_CLZ64(v.sig);
    int e = v.exp + top;
    int emin = er_fmt_emin(er_fmt_get(fmt));
    return (int16_t)(e < emin ? emin : e);
}

/* normal's roundings per term: products (one each), within-lane additions, lane combination;
 * the largest over 1, 2 and 4 lanes (docs/proofs/normal.md). */
static void normal_weights(bctx *c, int64_t k, int has_c)
{
    static const int lanes[3] = {1, 2, 4};
    c->r_c = 0;
    c->r_max = 0;
    for (int64_t p = 0; p < k; p++) c->rw[p] = 0;
    for (int li = 0; li < 3; li++) {
        int L = lanes[li];
        for (int l = 0; l < L; l++) {
            int64_t cnt = (k > l ? (k - l + L - 1) / L : 0) + (l == 0 && has_c ? 1 : 0);
            int64_t q = 0;
            if (l == 0 && has_c) {
                q = 1;
                double r = (double)c->c_rounds + (cnt >= 2 ? (double)(cnt - 1) : 0) + (L - 1);
                if (r > c->r_c) c->r_c = r;
            }
            for (int64_t p = l; p < k; p += L) {
                q++;
                double within = cnt >= 2 ? (double)(cnt - (q > 2 ? q : 2) + 1) : 0;
                double r = 1 + within + (L - 1);
                if (r > c->rw[p]) c->rw[p] = r;
            }
        }
    }
    c->r_max = c->r_c;
    for (int64_t p = 0; p < k; p++)
        if (c->rw[p] > c->r_max) c->r_max = c->rw[p];
}

int er_cpu_bounds(er_mma_args *args, const er_tensor *rounded, int compute, int ftz, const er_standard *std,
                  const er_slack *slack, er_bounds *out)
{
    problem P;
    int st;
    memset(&P, 0, sizeof P);
    P.args = args;
    er_tensor *d_saved = args->d;
    args->d = (er_tensor *)rounded;
    st = er_engine_validate(&P);
    args->d = d_saved;
    if (st != ER_OK) return st;
    int T = er_cpu_threads(args->threads);
    if (T > P.m) T = (int)(P.m ? P.m : 1);
    int64_t mk = P.m * P.k, kn = P.k * P.n;
    bctx base;
    double *babs = NULL;
    memset(&base, 0, sizeof base);
    base.P = &P;
    base.rounded = rounded;
    base.out_fmt = rounded->format;
    base.compute = std->kind == ER_STD_ENGINE ? ER_FMT_F32 : compute;
    base.ftz = ftz;
    base.std = std;
    base.out = out;
    base.slack = slack;
    {
        er_fmt cf = er_fmt_get(base.compute);
        base.u = ldexp(1.0, -(cf.mbits + 1));
        base.emin_c = er_fmt_emin(cf);
        base.eta = ldexp(1.0, er_fmt_emin(cf) - (cf.mbits + 1));
        base.max_c = fmt_max(base.compute);
        base.c_rounds = P.has_c && er_fmt_get(P.c.fmt).mbits > cf.mbits;
        er_fmt fa = er_fmt_get(args->a->format), fb = er_fmt_get(args->b->format);
        base.exact_products = fa.mbits + fb.mbits + 2 <= 53;
    }
    base.af = (double *)malloc(sizeof(double) * (size_t)(mk ? mk : 1));
    base.bf = (double *)malloc(sizeof(double) * (size_t)(kn ? kn : 1));
    base.rw = (double *)malloc(sizeof(double) * (size_t)(P.k ? P.k : 1));
    if (std->kind == ER_STD_ENGINE) {
        base.ea = (int16_t *)malloc(sizeof(int16_t) * (size_t)(mk ? mk : 1));
        base.eb = (int16_t *)malloc(sizeof(int16_t) * (size_t)(kn ? kn : 1));
    }
    bctx *ctx = (bctx *)calloc((size_t)T, sizeof *ctx);
    pthread_t *th = (pthread_t *)calloc((size_t)T, sizeof *th);
    unsigned char *started = (unsigned char *)calloc((size_t)T, 1);
    if (!base.af || !base.bf || !base.rw || !ctx || !th || !started ||
        (std->kind == ER_STD_ENGINE && (!base.ea || !base.eb))) {
        st = ER_ENOMEM;
        goto done;
    }
    normal_weights(&base, P.k, P.has_c);
    /* the matrix-product path of normal and any_order (bounds_rows): exact products, no flush, no slack */
    if (std->kind != ER_STD_ENGINE && !ftz && !slack && base.exact_products && P.k > 0)
        babs = (double *)malloc(sizeof(double) * (size_t)(kn ? kn : 1)); /* NULL: the per-element path */
    for (int64_t b = 0; b < P.batch; b++) {
        for (int64_t i = 0; i < P.m; i++)
            for (int64_t p = 0; p < P.k; p++) {
                er_val v = a_val(&P, b, i, p);
                base.af[i * P.k + p] = val_to_double(v);
                if (base.ea) {
                    int16_t e = hw_exp(er_decode(P.a.fmt, load(&P.a, b, i, p)), P.a.fmt);
                    if (P.scaled) e = (int16_t)(e + hw_exp(er_decode(P.sa.fmt, load(&P.sa, b, i, p / args->block)), P.sa.fmt));
                    base.ea[i * P.k + p] = e;
                }
            }
        for (int64_t p = 0; p < P.k; p++)
            for (int64_t j = 0; j < P.n; j++) {
                base.bf[p * P.n + j] = val_to_double(b_val(&P, b, p, j));
                if (base.eb) {
                    int16_t e = hw_exp(er_decode(P.b.fmt, load(&P.b, b, p, j)), P.b.fmt);
                    if (P.scaled) e = (int16_t)(e + hw_exp(er_decode(P.sb.fmt, load(&P.sb, b, p / args->block, j)), P.sb.fmt));
                    base.eb[p * P.n + j] = e;
                }
            }
        if (babs) {
            for (int64_t q = 0; q < P.k * P.n; q++) babs[q] = fabs(base.bf[q]);
            base.babs = babs;
        }
        if (slack) {
            /* the slack of this batch (a 2-D operand's slack serves every batch) */
            base.da = slack->da ? slack->da + (args->a->ndim == 3 ? b * P.m * P.k : 0) : NULL;
            base.db = slack->db ? slack->db + (args->b->ndim == 3 ? b * P.k * P.n : 0) : NULL;
            base.dc = slack->dc ? slack->dc + (args->c && args->c->ndim == 3 ? b * P.m * P.n : 0) : NULL;
        }
        for (int t = 0; t < T; t++) {
            ctx[t] = base;
            ctx[t].b = b;
            ctx[t].r0 = P.m * t / T;
            ctx[t].r1 = P.m * (t + 1) / T;
            started[t] = t > 0 && pthread_create(&th[t], NULL, bounds_thread, &ctx[t]) == 0;
        }
        for (int t = 1; t < T; t++)
            if (!started[t]) bounds_rows(&ctx[t]);
        bounds_rows(&ctx[0]);
        for (int t = 1; t < T; t++)
            if (started[t]) pthread_join(th[t], NULL);
    }
done:
    free(base.af);
    free(base.bf);
    free(base.rw);
    free(base.ea);
    free(base.eb);
    free(babs);
    free(ctx);
    free(th);
    free(started);
    return st;
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
    return pattern_value(cf, er_convert(ER_FMT_F64, cf, double_to_bits(s), ER_RND_NEAREST_EVEN, 0u).bits);
}

static double round_c(int cf, double x, int ftz)
{
    double r = pattern_value(cf, er_convert(ER_FMT_F64, cf, double_to_bits(x), ER_RND_NEAREST_EVEN, 0u).bits);
    if (ftz) r = er_flush_subnormal(cf, r);
    return r;
}

int er_cpu_normal(er_mma_args *args, const er_tensor *rounded, int compute, int ftz, er_tensor *out)
{
    problem P;
    int st;
    memset(&P, 0, sizeof P);
    P.args = args;
    er_tensor *d_saved = args->d;
    args->d = (er_tensor *)rounded;
    st = er_engine_validate(&P);
    args->d = d_saved;
    if (st != ER_OK) return st;
    er_format_info fo;
    er_format_get_info(out->format, &fo);
    double *parts = (double *)malloc(sizeof(double) * (size_t)(P.k + 2));
    if (!parts) return ER_ENOMEM;
    for (int64_t b = 0; b < P.batch; b++)
        for (int64_t i = 0; i < P.m; i++)
            for (int64_t j = 0; j < P.n; j++) {
                int np = 0;
                double acc = 0;
                int have = 0;
                if (P.has_c) {
                    acc = round_c(compute, val_to_double(er_decode(P.c.fmt, load(&P.c, b, i, j))), ftz);
                    have = 1;
                }
                for (int64_t p = 0; p < P.k; p++) {
                    double a = val_to_double(a_val(&P, b, i, p)), bb = val_to_double(b_val(&P, b, p, j));
                    if (ftz) {
                        a = er_flush_subnormal(compute, a);
                        bb = er_flush_subnormal(compute, bb);
                    }
                    double x = round_c(compute, a * bb, ftz); /* a*b exact for inputs up to f32 */
                    if (!have) {
                        acc = x;
                        have = 1;
                        continue;
                    }
                    double t = add_rn(compute, acc, x);
                    if (ftz) t = er_flush_subnormal(compute, t);
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
                      fo.storage_bytes);
            }
    free(parts);
    return ER_OK;
}
