/* er_bounds.h: the per-element bounds of every standard, in binary64 (shared core, needs fp64). */
#ifndef ER_BOUNDS_H
#define ER_BOUNDS_H

#include "er_acc.h" /* the exact accumulator (er_round.h with it) */

/*
 * One function, er_bound_element, computes the radius, tolerance, finite range and the specials an
 * element may take under a standard (include/exactref/result.h: er_bounds), from the binary64 values of
 * its row of A' and column of B' (scales applied, inputs flushed as the engine reads them), C, and the
 * pattern the exact result rounded to.  It is the same source for the CPU (cpu/cpu_bounds.c), the OpenCL
 * kernel (opencl/kernels/bounds.cl) and the CUDA kernel (cuda/er_cuda_bounds.cu), so the three give the
 * same bits: binary64 operations are IEEE 754 correctly rounded on each (contraction off everywhere,
 * fma only where written), and every loop whose order matters runs in index order (docs/proofs/).
 *
 * normal and any_order from exact quantities.  Where the products are exact in binary64 and nothing
 * else depends on a single product (no flush to zero, no slack: par.gemm_form), the bounds are defined
 * from quantities that do not depend on how they are computed (docs/proofs/foundations.md):
 *   T = RU(2^(sa_i + sb_j) sum_p qa_ip qb_pj),  W = RU(2^(sw_i + sb_j) sum_p qw_ip qb_pj),
 * qa = ceil(|a| 2^-sa), qw = ceil(|a| r_p 2^-sw), qb = ceil(|b| 2^-sb) the magnitudes quantized upward
 * to integers on per-row / per-column power-of-two grids (er_b_q_value), chosen so that every sum of
 * products of them is an integer <= 2^53: exact in binary64 in any order, with or without fma; and the
 * ends of the range from the exact sum x itself, RD(x - radius) and RU(x + radius).  A backend passes
 * S (a binary64 sum of the products, in ANY order) and the two integer sums in `pre`, or lets
 * er_bound_element form them; S only encloses x (er_b_exact_element), and where that enclosure cannot
 * decide an end, x is summed exactly with the core's accumulator.  Where a row of A' or a column of B'
 * holds an infinity or NaN (its scale is ER_BQ_BAD) the general loop runs instead, on every backend alike.
 *
 * Bound arithmetic is binary64 rounded to nearest then moved outward by one ulp (er_b_up, er_b_down)
 * or inflated by a factor covering every rounding; the rounding mode is never changed.
 *
 * OpenCL: include after `#pragma OPENCL EXTENSION cl_khr_fp64 : enable`; pointers are __global
 * (ER_GLOBAL).  The host decides whether the device has fp64 (opencl/er_opencl_bounds.c).
 */

#include "er_bits.h" /* er_b_bits, er_b_dbl; ER_GLOBAL is er_qual.h's */

#define ER_B_INF er_b_dbl(ER_U64(0x7FF0000000000000))
#define ER_B_NAN er_b_dbl(ER_U64(0x7FF8000000000000))

ER_FN int er_b_finite(double x) { return (er_b_bits(x) & ER_U64(0x7FF0000000000000)) != ER_U64(0x7FF0000000000000); }
ER_FN int er_b_isnan(double x) { return (er_b_bits(x) & ER_U64(0x7FFFFFFFFFFFFFFF)) > ER_U64(0x7FF0000000000000); }
ER_FN int er_b_isinf(double x) { return (er_b_bits(x) & ER_U64(0x7FFFFFFFFFFFFFFF)) == ER_U64(0x7FF0000000000000); }

/* |x|, by bits. */
ER_FN double er_b_abs(double x) { return er_b_dbl(er_b_bits(x) & ER_U64(0x7FFFFFFFFFFFFFFF)); }

/* The next binary64 value above / below x (x itself when not finite). */
ER_FN double er_b_up(double x)
{
    er_u64 u = er_b_bits(x);
    if (!er_b_finite(x)) return x;
    if (x == 0) return er_b_dbl(ER_U64(1)); /* 2^-1074 */
    return er_b_dbl(x > 0 ? u + 1u : u - 1u);
}

ER_FN double er_b_down(double x)
{
    er_u64 u = er_b_bits(x);
    if (!er_b_finite(x)) return x;
    if (x == 0) return -er_b_dbl(ER_U64(1));
    return er_b_dbl(x > 0 ? u - 1u : u + 1u);
}

/*
 * RU(a + b): the sum rounded toward +infinity (IEEE 754's roundTowardPositive), for a, b >= 0 (or
 * infinite or NaN), with the rounding to nearest every backend runs by default.  s = RN(a + b) and the
 * error of TwoSum, exact when s is finite (Knuth; with a, b >= 0 no intermediate exceeds s, so none
 * overflows), say on which side of a + b s lies: RU = s where s >= a + b, else the next binary64 above
 * s (er_b_up; from the largest finite value that is +inf, which RU gives there too).  An infinite or NaN
 * s makes err NaN and is returned as it is (RU of a sum beyond the range is +inf).  Where the processor
 * rounds upward in one instruction (AVX-512's embedded rounding, CUDA's __dadd_ru) the bits are the
 * same: IEEE defines them.  Never above er_b_up(a + b), the next pattern after the rounding to nearest,
 * which the engines' recurrence took until 2026-12-07.
 */
ER_FN double er_b_add_ru(double a, double b)
{
#if defined(__CUDA_ARCH__)
    return __dadd_ru(a, b); /* the device's own roundTowardPositive: the same bits, one instruction */
#else
    double s = a + b, bb = s - a, err = (a - (s - bb)) + (b - bb);
    return err > 0 ? er_b_up(s) : s;
#endif
}

/* The binary64 value of a pattern of format f (exact; NaN keeps a payload: only tested with isnan). */
ER_FN_NOINLINE double er_b_value(int f, er_u64 bits)
{
    return er_b_dbl(er_convert(f, ER_FMT_F64, bits, ER_RND_NEAREST_EVEN, 0u).bits);
}

/* 2^e for e in binary64's normal range. */
ER_FN double er_b_pow2(int e) { return er_b_dbl((er_u64)(er_i64)(e + 1023) << 52); }

/* floor(log2|x|) + 1 for a finite nonzero x (frexp's exponent), by bits. */
ER_FN int er_b_frexp_e(double x)
{
    er_u64 u = er_b_bits(x) & ER_U64(0x7FFFFFFFFFFFFFFF);
    int be = (int)(u >> 52);
    if (be == 0) return -1074 + (64 - ER_CLZ64(u)); /* subnormal: the top bit of the fraction */
    return be - 1022;
}

/* ---- The problem's constants (the same for every element) ---- */
enum { ER_BK_NORMAL = 0, ER_BK_ANY = 1, ER_BK_ENGINE = 2 };

typedef struct er_bpar {
    er_i64 k, ldb;      /* terms per element; the step between consecutive p of B' (its row length) */
    int kind;           /* ER_BK_* */
    int out_fmt, dir;   /* the output format and the result's rounding */
    er_u32 opts;        /* the result's conversion options (ER_OPT_*) */
    int ftz;            /* flush-to-zero model */
    int has_c, c_rounds;/* C given; C is rounded into compute first */
    int gemm_form;      /* the exact quantities apply (see the top of this file) */
    int slack_a, slack_b, slack_c; /* results as inputs: slack arrays given */
    int emin_c;         /* compute's least normal exponent (engines: the accumulator D's) */
    double u, eta, max_c, r_c, r_max, maxo;
    /* engines (docs/accumulation-models.md): products per step, fraction bits kept, the accumulator's
     * fraction bits and rounding, log2 of an exact group, promotion, tf32 operands; F2 (0: none): a
     * second alignment of the product sum at F2 fraction bits (CDNA3: 31); xterms: further roundings
     * at 2^(E - F) per step (CDNA3 fp8's two stages: 2) */
    int mk, F, out_p, out_round, gextra, promote, tf32_inputs, a_f32, b_f32, F2, xterms;
} er_bpar;

/* The parameter block: an array of 64-bit integers (binary64 values by their bits), the same layout
 * for every backend. */
enum {
    ER_BP_K, ER_BP_LDB, ER_BP_KIND, ER_BP_OUT_FMT, ER_BP_DIR, ER_BP_OPTS, ER_BP_FTZ, ER_BP_HAS_C,
    ER_BP_C_ROUNDS, ER_BP_GEMM_FORM, ER_BP_SLACK_A, ER_BP_SLACK_B, ER_BP_SLACK_C, ER_BP_EMIN_C, ER_BP_U,
    ER_BP_ETA, ER_BP_MAX_C, ER_BP_R_C, ER_BP_R_MAX, ER_BP_MAXO, ER_BP_MK, ER_BP_F, ER_BP_OUT_P,
    ER_BP_OUT_ROUND, ER_BP_GEXTRA, ER_BP_PROMOTE, ER_BP_TF32, ER_BP_A_F32, ER_BP_B_F32, ER_BP_F2, ER_BP_XTERMS,
    ER_BP_COUNT
};

ER_FN void er_bpar_to(const er_bpar *c, er_i64 *q)
{
    q[ER_BP_K] = c->k;
    q[ER_BP_LDB] = c->ldb;
    q[ER_BP_KIND] = c->kind;
    q[ER_BP_OUT_FMT] = c->out_fmt;
    q[ER_BP_DIR] = c->dir;
    q[ER_BP_OPTS] = (er_i64)c->opts;
    q[ER_BP_FTZ] = c->ftz;
    q[ER_BP_HAS_C] = c->has_c;
    q[ER_BP_C_ROUNDS] = c->c_rounds;
    q[ER_BP_GEMM_FORM] = c->gemm_form;
    q[ER_BP_SLACK_A] = c->slack_a;
    q[ER_BP_SLACK_B] = c->slack_b;
    q[ER_BP_SLACK_C] = c->slack_c;
    q[ER_BP_EMIN_C] = c->emin_c;
    q[ER_BP_U] = (er_i64)er_b_bits(c->u);
    q[ER_BP_ETA] = (er_i64)er_b_bits(c->eta);
    q[ER_BP_MAX_C] = (er_i64)er_b_bits(c->max_c);
    q[ER_BP_R_C] = (er_i64)er_b_bits(c->r_c);
    q[ER_BP_R_MAX] = (er_i64)er_b_bits(c->r_max);
    q[ER_BP_MAXO] = (er_i64)er_b_bits(c->maxo);
    q[ER_BP_MK] = c->mk;
    q[ER_BP_F] = c->F;
    q[ER_BP_OUT_P] = c->out_p;
    q[ER_BP_OUT_ROUND] = c->out_round;
    q[ER_BP_GEXTRA] = c->gextra;
    q[ER_BP_PROMOTE] = c->promote;
    q[ER_BP_TF32] = c->tf32_inputs;
    q[ER_BP_A_F32] = c->a_f32;
    q[ER_BP_B_F32] = c->b_f32;
    q[ER_BP_F2] = c->F2;
    q[ER_BP_XTERMS] = c->xterms;
}

ER_FN void er_bpar_from(er_bpar *c, const er_i64 *q)
{
    c->k = q[ER_BP_K];
    c->ldb = q[ER_BP_LDB];
    c->kind = (int)q[ER_BP_KIND];
    c->out_fmt = (int)q[ER_BP_OUT_FMT];
    c->dir = (int)q[ER_BP_DIR];
    c->opts = (er_u32)q[ER_BP_OPTS];
    c->ftz = (int)q[ER_BP_FTZ];
    c->has_c = (int)q[ER_BP_HAS_C];
    c->c_rounds = (int)q[ER_BP_C_ROUNDS];
    c->gemm_form = (int)q[ER_BP_GEMM_FORM];
    c->slack_a = (int)q[ER_BP_SLACK_A];
    c->slack_b = (int)q[ER_BP_SLACK_B];
    c->slack_c = (int)q[ER_BP_SLACK_C];
    c->emin_c = (int)q[ER_BP_EMIN_C];
    c->u = er_b_dbl((er_u64)q[ER_BP_U]);
    c->eta = er_b_dbl((er_u64)q[ER_BP_ETA]);
    c->max_c = er_b_dbl((er_u64)q[ER_BP_MAX_C]);
    c->r_c = er_b_dbl((er_u64)q[ER_BP_R_C]);
    c->r_max = er_b_dbl((er_u64)q[ER_BP_R_MAX]);
    c->maxo = er_b_dbl((er_u64)q[ER_BP_MAXO]);
    c->mk = (int)q[ER_BP_MK];
    c->F = (int)q[ER_BP_F];
    c->out_p = (int)q[ER_BP_OUT_P];
    c->out_round = (int)q[ER_BP_OUT_ROUND];
    c->gextra = (int)q[ER_BP_GEXTRA];
    c->promote = (int)q[ER_BP_PROMOTE];
    c->tf32_inputs = (int)q[ER_BP_TF32];
    c->a_f32 = (int)q[ER_BP_A_F32];
    c->b_f32 = (int)q[ER_BP_B_F32];
    c->F2 = (int)q[ER_BP_F2];
    c->xterms = (int)q[ER_BP_XTERMS];
}

/* One element's operands.  ar: A' row (k values, step 1); bc: B' column (step ldb); ea, eb: the engines'
 * exponent bounds (same layout; engines only); da, db: the slack of A and B (same layout; when
 * slack_a / slack_b); rw: normal's roundings per term (k values); cval: C's value, dc its slack. */
typedef struct er_bel {
    double radius, tolerance;
    er_u64 low, high;
    er_u32 flags; /* ER_BF_* */
} er_bel;

#define ER_BF_RANGE 1u
#define ER_BF_PINF 2u
#define ER_BF_NINF 4u
#define ER_BF_NAN 8u

/* u r / (1 - r_max u) rounded up for r = rmax; inf when r_max u >= 1/2 (no useful bound). */
ER_FN double er_b_gamma(double u, double rmax)
{
    double x = rmax * u; /* exact: u is a power of two and rmax an integer below 2^26 */
    if (x >= 0.5) return ER_B_INF;
    return er_b_up(u / er_b_down(1.0 - x));
}

/* ---- The quantized magnitudes (docs/proofs/foundations.md, "Exact quantities") ---- */

/* The scale of a row or column holding an infinity or NaN: no quantized copy, the general loop. */
#define ER_BQ_BAD (-100000)

/* Grid bits (Qa for A's rows, Qb for B's columns): Qa + Qb + ceil(log2 k) <= 53, so that a sum of k
 * products of integers <= 2^Qa and <= 2^Qb is an integer <= 2^53.  0 when k is too large (k > 2^51). */
ER_FN void er_b_q_bits(er_i64 k, int *qa, int *qb)
{
    int lg = 0, t;
    while (lg < 62 && ((er_i64)1 << lg) < k) lg++;
    t = 53 - lg;
    *qa = t >= 2 ? t / 2 : 0;
    *qb = t >= 2 ? t - t / 2 : 0;
}

/* The grid exponent of a row (or column) whose largest magnitude is mx (finite): every |v| <= mx is
 * below 2^(s + Q).  A zero row: 0 (its integers are all 0). */
ER_FN int er_b_q_scale(double mx, int Q) { return mx > 0 ? er_b_frexp_e(mx) - Q : 0; }

/* ceil(|v| 2^-s) for a finite v with |v| < 2^(s + Q), Q <= 53: an integer <= 2^Q, by integer
 * arithmetic on the bits (no rounding anywhere; a nonzero v gives at least 1). */
ER_FN double er_b_q_value(double v, int s)
{
    er_u64 u = er_b_bits(v) & ER_U64(0x7FFFFFFFFFFFFFFF), M;
    int be = (int)(u >> 52), E, sh;
    if (u == 0) return 0.0;
    if (be == 0) {
        M = u;
        E = -1074;
    } else {
        M = (u & ER_U64(0x000FFFFFFFFFFFFF)) | ER_U64(0x0010000000000000);
        E = be - 1075;
    }
    E -= s; /* |v| 2^-s = M 2^E < 2^53 */
    if (E >= 0) return (double)(M << E);
    sh = -E;
    if (sh >= 64) return 1.0;
    return (double)((M >> sh) + ((M & ((ER_U64(1) << sh) - 1u)) != 0u ? 1u : 0u));
}

/* RU(N 2^e) for an integer 0 <= N <= 2^53 (a binary64 value): the exponent field moved, or, below
 * 2^-1022, the significand shifted with the bits shifted out rounding up; +inf beyond binary64. */
ER_FN double er_b_scale_up(double N, int e)
{
    er_u64 u = er_b_bits(N), M;
    int E, sh;
    if (!(N > 0)) return 0.0;
    M = (u & ER_U64(0x000FFFFFFFFFFFFF)) | ER_U64(0x0010000000000000);
    E = (int)(u >> 52) - 1075 + e; /* N 2^e = M 2^E, 2^52 <= M < 2^53 */
    if (E + 1075 >= 2047) return ER_B_INF;
    if (E + 1075 >= 1) return er_b_dbl(((er_u64)(er_i64)(E + 1075) << 52) | (M & ER_U64(0x000FFFFFFFFFFFFF)));
    sh = -(E + 1074); /* >= 1: M 2^E = (M 2^-sh) 2^-1074 */
    if (sh >= 64) return er_b_dbl(ER_U64(1));
    return er_b_dbl((M >> sh) + ((M & ((ER_U64(1) << sh) - 1u)) != 0u ? 1u : 0u));
}

/*
 * The engines' magnitudes on per-instruction grids (docs/proofs/engines.md, "xs, exactly").  For row i
 * of A' and instruction t (terms [t mk, (t + 1) mk)), s = er_b_eng_q_scale(the largest finite |a_ip|
 * of the instruction, Qa) with er_b_q_bits(mk, &Qa, &Qb), and the value qa_ip = ceil(|a_ip| 2^-s) 2^s
 * (0 for an infinite or NaN a_ip); B' by columns likewise with Qb.  Every product qa qb of one
 * instruction is an integer times 2^(s_a + s_b) >= 2^-1074 and at most 2^(Qa + Qb) of that unit, so every
 * partial sum of at most mk of them, in any order, with or without fma, is an integer <= 2^53 of that
 * unit: exact.  So xs = sum qa qb (>= the sum of the finite |a b|) has one value, whoever sums it.
 */
ER_FN int er_b_eng_q_scale(double mx, int Q)
{
    int s = er_b_q_scale(mx, Q);
    return s < -537 ? -537 : s; /* a coarser grid below: 2^(s_a + s_b) >= 2^-1074, no product underflows */
}

/* qa (or qb) of a value v on the grid 2^s (er_b_eng_q_scale of its instruction's largest finite
 * magnitude): ceil(|v| 2^-s) 2^s, exact; 0 for an infinite or NaN v. */
ER_FN double er_b_eng_q_value(double v, int s)
{
    if (!er_b_finite(v)) return 0.0;
    return er_b_scale_up(er_b_q_value(v, s), s);
}

/* normal and any_order (docs/proofs/normal.md, any-order.md): the radius from the sums s (binary64, of
 * the products), T (of their magnitudes), W (of magnitudes times path lengths), Tf (flushable) and pert
 * (results as inputs); C is added here.  s64 and e64: an enclosure s64 +- e64 of the exact sum. */
ER_FN double er_b_radius_from_sums(const er_bpar *c, double s, double T, double W, double Tf, double pert,
                                   double cval, double sc, double *s64, double *e64, int *nonfinite)
{
    int any = c->kind == ER_BK_ANY;
    double thr = er_b_pow2(c->emin_c);
    double infl, Tup, nterms, rad;
    double cm = er_b_finite(cval) ? fabs(cval) : 0.0; /* T, W: the finite terms only */
    infl = 1.0 + (double)(c->k + 8) * 0x1p-51;
    s = s + cval;
    T = T + (cm + sc);
    if (!any) W = W + (cm + sc) * c->r_c;
    pert = pert + sc;
    if (!er_b_finite(s)) {
        /* infinite or NaN terms: every order meets them, and the output is what the exact sum rounds
         * to, unless the finite terms can overflow a partial (then NaN or either infinity may come, so
         * nothing is excluded: an infinite radius, not `nonfinite`) */
        if (!er_b_finite(T) || er_b_up(er_b_up(T * infl) * (1 + 0x1p-20)) >= c->max_c) return ER_B_INF;
        *nonfinite = 1;
        return ER_B_INF;
    }
    if (!er_b_finite(T) || !er_b_finite(pert)) return ER_B_INF; /* an unbounded input: no finite bound */
    /* the binary64 sum itself: |s - exact| <= (k + 2) 2^-53 T (products exact or rounded once), plus
     * (k + 1) 2^-1074 for products of f64 inputs that underflow */
    *s64 = s;
    *e64 = er_b_up(er_b_up((double)(c->k + 3) * 0x1p-53 * T * infl) + (double)(c->k + 1) * 0x1p-1074);
    Tup = er_b_up(T * infl);
    nterms = (double)c->k + (c->has_c ? 1 : 0);
    {
        /* any tree (also normal's restarted partial sums): r_t <= n */
        double g = er_b_gamma(c->u, nterms + c->c_rounds);
        rad = er_b_up(g * Tup * (nterms + c->c_rounds));
    }
    if (!any && er_b_up(Tup * (1 + 0x1p-20)) < c->max_c) {
        /* normal's trees are some of any order's: the smaller of the two bounds holds */
        double g = er_b_gamma(c->u, c->r_max);
        double rn = er_b_up(g * er_b_up(W * infl));
        if (rn < rad) rad = rn;
    }
    /* underflow of each rounded product: absolute eta, at most doubled on its way */
    rad = er_b_up(rad + er_b_up(2.0 * c->eta * (double)c->k));
    if (c->ftz) {
        /* flushed inputs (their products lost entirely) and every subnormal product or sum flushed: less
         * than 2^emin_c each, 2n + 1 operations, each carried by at most a factor 2 */
        rad = er_b_up(rad + er_b_up(Tf * infl) + er_b_up(2.0 * thr * (2.0 * nterms + 1.0)));
    }
    if (pert > 0) rad = er_b_up(rad + er_b_up(pert * infl));
    return rad;
}

/* normal and any_order, the general loop: products one by one (flush, slack). */
ER_FN double er_b_radius_sum(const er_bpar *c, ER_GLOBAL const double *ar, ER_GLOBAL const double *bc,
                             ER_GLOBAL const double *rw, ER_GLOBAL const double *da, ER_GLOBAL const double *db,
                             double cval, double sc, double *s64, double *e64, int *nonfinite)
{
    er_i64 p, k = c->k, ldb = c->ldb;
    double s = 0, T = 0, W = 0, Tf = 0, pert = 0;
    double thr = er_b_pow2(c->emin_c);
    int any = c->kind == ER_BK_ANY;
    for (p = 0; p < k; p++) {
        double a = ar[p], bb = bc[p * ldb], x = a * bb, ax = fabs(x);
        s = s + x;
        if (c->slack_a || c->slack_b) {
            /* results as inputs: the stored operands lie within da, db of these values, so every |term|
             * an implementation meets is at most (|a| + da)(|b| + db), and the exact value it
             * approximates is at most da|b| + |a|db + da db away (docs/proofs/foundations.md) */
            double sa = c->slack_a ? da[p] : 0, sbb = c->slack_b ? db[p * ldb] : 0;
            ax = er_b_up(er_b_up(fabs(a) + sa) * er_b_up(fabs(bb) + sbb));
            pert = pert + (er_b_up(er_b_up(sa * fabs(bb)) + er_b_up(fabs(a) * sbb)) + er_b_up(sa * sbb));
        }
        if (er_b_finite(ax)) {
            T = T + ax;
            if (!any) W = W + ax * rw[p];
            if (c->ftz && ((a != 0 && fabs(a) < thr) || (bb != 0 && fabs(bb) < thr))) Tf = Tf + ax;
        } else if (er_b_finite(a) && er_b_finite(bb)) {
            T = ER_B_INF; /* finite operands whose product (or bound) is beyond binary64: no bound */
        }
    }
    return er_b_radius_from_sums(c, s, T, W, Tf, pert, cval, sc, s64, e64, nonfinite);
}

/*
 * Matrix engines (docs/accumulation-models.md; docs/proofs/engines.md).  Per instruction of k products
 * and the accumulator C: every term is truncated at weight 2^(E - F), E the largest term exponent, an
 * error below 2^(E - F) per term, so below (k + 1) 2^(E - F) in all (CDNA3, F2 > 0: the products
 * aligned at their own largest exponent Ep, (k + xterms) 2^(Ep - F) + 2^(E - F) + 2^(E - F2)); the
 * normalisation to out_p fraction bits of the accumulator D (f32 or f16; toward zero, or to nearest:
 * half of it) errs by less than 2^(floor(log2|D|) - out_p), and by less than D's subnormal quantum
 * 2^(emin_D - out_p) below 2^emin_D.  E is bounded from the elements'
 * hardware exponents (ea, eb: a zero factor included, with the exponent the model gives a zero; block
 * scales added) and from the bound B on |C|: a zero C has exponent -126, a nonzero one at least D's
 * minimum exponent.  B grows by each step's xs (an exact upper bound of its sum of |products|: the
 * instruction's grids, er_b_eng_q_value) and its error.  Promotion every `promote`
 * products adds the partial into an f32 accumulator: one more f32 rounding of at most 2^-24 of the new
 * value.
 */
/* The running state of one element's engine bound: the recurrence over the instructions (blocks of
 * c->mk terms) is er_b_eng_block, the same source for every backend; the terms of a block are summed
 * by the caller (er_b_eng_run below, or the CPU's kernels): xs exactly, on the instruction's grids. */
typedef struct er_b_eng {
    double s;       /* the sum of the products, in index order (infinite or NaN terms included): it
                     * only encloses the exact sum (er_b_eng_element); its bits do not reach the result */
    double T;       /* the sum of the finite terms' magnitudes */
    double E, B, R; /* the error bound; bounds on |the tensor-core partial| and |the promoted partial| */
    double pert;    /* results as inputs: how far the stored operands may move the sum */
    int done;       /* the finite terms may overflow a partial: no bound at all, nothing more to do */
} er_b_eng;

/*
 * Infinite and NaN terms (and C) are left out of the recurrence: it bounds what the finite terms can
 * do.  If they cannot overflow a partial, every implementation meets the same special terms and
 * outputs what the exact sum (infinite or NaN) rounds to; if they can, an overflow may meet an
 * infinity of the other sign (NaN), so nothing is excluded (er_b_eng_final: done).
 */

ER_FN void er_b_eng_init(const er_bpar *c, er_b_eng *g, double cval, double sc)
{
    g->s = 0;
    g->T = 0;
    g->E = 0;
    double cm = er_b_finite(cval) ? fabs(cval) : 0.0; /* an infinite or NaN C: a special term */
    double cb = cm + sc;
    /* a C that is no value of the accumulator is rounded into it first (to nearest): at most u|C| more,
     * or half D's subnormal quantum (eta) below its normal range */
    if (c->has_c && c->c_rounds) cb = er_b_up(er_b_up(cb + er_b_up(cm * c->u)) + c->eta);
    g->pert = sc;
    g->B = c->has_c && !c->promote ? cb : 0.0;
    g->R = c->has_c && c->promote ? cb : 0.0;
    g->done = 0;
}

/*
 * The least exponent of the normalisation's error term: in D's subnormal range the quantum is
 * 2^(emin_D - out_p), whatever |D|'s exponent (f32: 2^-149; e8m13: 2^-139; f16: 2^-24), half of it to
 * nearest.  Where the aligned terms are already multiples of that quantum (E >= -126, so when
 * -126 - max(F, F2) >= emin_D - out_p: e8m13 with F = 13, f32 with F = 23) the normalisation is exact
 * there, and 2^-149 only keeps the term positive (as before the f16 accumulators).
 */
ER_FN int er_b_eng_qe(const er_bpar *c)
{
    int fe = c->F2 > c->F ? c->F2 : c->F;
    if (-126 - fe >= c->emin_c - c->out_p) return -149;
    return c->emin_c - c->out_p - (c->out_round == ER_RND_NEAREST_EVEN ? 1 : 0);
}

/* One instruction: terms [p1 - nt, p1), whose finite magnitudes sum to at most xs (er_b_eng_run: the
 * exact sum of their magnitudes on the instruction's grids, or with slack the index-order sum inflated)
 * and whose largest hardware exponent is emax. */
ER_FN void er_b_eng_block(const er_bpar *c, er_b_eng *g, double xs, int emax, er_i64 nt, er_i64 p1)
{
    double trunc, dmax, norm;
    int ec, Es, ed, sh;
    if (g->done) return;
    g->T = g->T + xs; /* xs: an upper bound of the step's magnitudes, taken as it is (exact: no inflation) */
    /* C is a value of the accumulator D: a zero C is a term of exponent -126; a nonzero one has at least
     * D's minimum exponent (f32: -126, f16: -14), also when it is subnormal */
    ec = -126;
    if (g->B > 0 && er_b_finite(g->B)) {
        int ex = er_b_frexp_e(g->B);
        ec = ex - 1 > c->emin_c ? ex - 1 : c->emin_c;
    }
    Es = emax + c->gextra > ec ? emax + c->gextra : ec;
    /* ldexp(cnt, .): exact, or rounded once below 2^-1022 (then er_b_up covers it); the powers of two
     * are exact, or 2^-1074 >= them (a user model's F or F2 beyond 948) */
    if (c->F2) {
        /* CDNA3: the products are aligned at their own largest exponent (<= emax + gextra), each losing
         * less than 2^(emax + gextra - F), as each of the xterms stage sums does; the product sum is
         * floored at 2^(Es - F2) and C at 2^(Es - F) (or dropped, below 2^(Es - 25)) */
        trunc = er_b_up(ldexp((double)(nt + c->xterms), emax + c->gextra - c->F));
        trunc = er_b_add_ru(trunc, ldexp(1.0, Es - c->F < -1074 ? -1074 : Es - c->F));
        trunc = er_b_add_ru(trunc, ldexp(1.0, Es - c->F2 < -1074 ? -1074 : Es - c->F2));
    } else {
        trunc = er_b_up(ldexp((double)(nt + 1 + c->xterms), Es - c->F));
    }
    dmax = er_b_add_ru(er_b_add_ru(g->B, xs), trunc);
    if (!er_b_finite(dmax)) {
        g->done = 1; /* beyond binary64: no bound */
        return;
    }
    ed = er_b_frexp_e(dmax);
    sh = ed - 1 - c->out_p - (c->out_round == ER_RND_NEAREST_EVEN ? 1 : 0);
    norm = er_b_pow2(sh < er_b_eng_qe(c) ? er_b_eng_qe(c) : sh);
    g->E = er_b_add_ru(er_b_add_ru(g->E, trunc), norm);
    g->B = er_b_add_ru(dmax, norm);
    if (g->B >= c->max_c || g->R >= c->max_c) {
        g->done = 1; /* an intermediate overflow: no finite bound */
        return;
    }
    if (c->promote && (p1 % c->promote == 0 || p1 == c->k)) {
        double rnew = er_b_add_ru(g->R, g->B);
        double perr = er_b_up(rnew * 0x1p-24);
        g->E = er_b_add_ru(g->E, perr);
        g->R = er_b_add_ru(rnew, perr);
        g->B = 0;
    }
}

/* After the last instruction: the radius, and the enclosure s64 +- e64 of the exact sum. */
ER_FN double er_b_eng_final(const er_bpar *c, const er_b_eng *g, double cval, double *s64, double *e64,
                            int *nonfinite)
{
    double infl = 1.0 + (double)(c->k + 8) * 0x1p-51, s, T, E = g->E;
    if (g->done) return ER_B_INF; /* no bound: every special possible too */
    s = g->s + cval;
    T = g->T + fabs(cval);
    if (!er_b_finite(s) || !er_b_finite(T)) {
        *nonfinite = 1;
        return ER_B_INF;
    }
    *s64 = s;
    *e64 = er_b_up((double)(c->k + 3) * 0x1p-53 * T * infl);
    /* C rounded into the accumulator (to nearest): at most u|C| (f32: 2^-24; f16: 2^-11), or half D's
     * subnormal quantum (eta: f32 2^-150, f16 2^-25) */
    if (c->has_c && c->c_rounds) E = er_b_up(er_b_up(E + er_b_up(fabs(cval) * c->u)) + c->eta);
    if (!er_b_finite(g->pert)) return ER_B_INF;
    if (g->pert > 0) E = er_b_up(E + er_b_up(g->pert * infl));
    if (c->tf32_inputs) {
        /* f32 operands truncated to tf32 first: each factor loses less than 2^-10 of itself, so a product
         * less than (2^-10 + 2^-10 + 2^-20) of itself; the sum of those losses is below that times T */
        double rel = (c->a_f32 ? 0x1p-10 : 0) + (c->b_f32 ? 0x1p-10 : 0) + (c->a_f32 && c->b_f32 ? 0x1p-20 : 0);
        if (rel > 0) E = er_b_up(E + er_b_up(er_b_up(T * infl) * rel));
    }
    return E;
}

/* A term of an engine's instruction: x = a b into the index-order sum s (which only encloses the exact
 * sum), its magnitude on the instruction's grids xq = qa qb (exact: er_b_eng_q_value) into xs, and its
 * hardware exponent eab = e_a + e_b (block scales included) into emax.  A zero product is a term too: its
 * exponent is its factors' sum, a zero factor having the exponent the model gives a zero
 * (cpu/cpu_bounds.c's hw_exp), so 0 x 2^101 may set the step's E (docs/accumulation-models.md). */
ER_FN void er_b_eng_term(double av, double bv, double xq, int eab, double *s, double *xs, int *emax)
{
    *s = *s + av * bv;
    *xs = *xs + xq; /* exact, in any order */
    if (eab > *emax) *emax = eab;
}

/* Every instruction of one element, its terms one by one (slack included).  qa, qb: the element's row
 * of A' and column of B' (step c->ldb) on the instructions' grids (er_b_eng_q_value); without slack
 * xs = sum qa qb, exact and so the same whatever the order (read only without slack). */
ER_FN void er_b_eng_run(const er_bpar *c, er_b_eng *gp, ER_GLOBAL const double *ar, ER_GLOBAL const double *bc,
                        ER_GLOBAL const er_i16 *ea, ER_GLOBAL const er_i16 *eb, ER_GLOBAL const double *da,
                        ER_GLOBAL const double *db, ER_GLOBAL const double *qa, ER_GLOBAL const double *qb)
{
    er_i64 k = c->k, ldb = c->ldb, p0, p;
    er_b_eng g = *gp;
    for (p0 = 0; p0 < k; p0 += c->mk) {
        er_i64 p1 = p0 + c->mk < k ? p0 + c->mk : k;
        double xs = 0;
        int emax = -100000;
        for (p = p0; p < p1; p++) {
            double av = ar[p], bv = bc[p * ldb];
            if (c->slack_a || c->slack_b) {
                /* results as inputs: the stored operands may be up to da, db away: larger terms, larger
                 * exponents (floor(log2(|a| + da)) + 1 bounds the stored operand's exponent); xs in
                 * index order (this path has no grids) */
                double x = av * bv, ax;
                int e = ea[p] + eb[p * ldb]; /* a zero product too (er_b_eng_term) */
                double sa = c->slack_a ? da[p] : 0, sbb = c->slack_b ? db[p * ldb] : 0;
                double A_ = er_b_up(fabs(av) + sa), B_ = er_b_up(fabs(bv) + sbb);
                g.s = g.s + x;
                ax = er_b_up(A_ * B_);
                g.pert = g.pert + (er_b_up(er_b_up(sa * fabs(bv)) + er_b_up(fabs(av) * sbb)) + er_b_up(sa * sbb));
                if (ax > 0 && er_b_finite(A_) && er_b_finite(B_)) {
                    /* a stored operand within the slack: its exponent at most frexp's (a stored zero's
                     * is at most any value's of its format: hw_exp) */
                    int e2 = er_b_frexp_e(A_) + er_b_frexp_e(B_);
                    e = e2 > e ? e2 : e;
                }
                if (er_b_finite(ax)) xs = xs + ax;
                if (e > emax) emax = e;
                /* the index-order sum rounded: inflated (p1 - p0 additions, each within 2^-53) */
                if (p == p1 - 1) xs = er_b_up(xs * (1.0 + (double)(c->k + 8) * 0x1p-51));
            } else {
                er_b_eng_term(av, bv, qa[p] * qb[p * ldb], ea[p] + eb[p * ldb], &g.s, &xs, &emax);
            }
        }
        er_b_eng_block(c, &g, xs, emax, p1 - p0, p1);
    }
    *gp = g;
}

/* The output pattern of the binary64 value v in format of, direction dir: out of line (er_convert with a
 * format known only at run time is a large function, and the bounds call it at many places). */
ER_FN_NOINLINE er_u64 er_b_cvt(int of, double v, int dir, er_u32 opts)
{
    return er_convert(ER_FMT_F64, of, er_b_bits(v), dir, opts).bits;
}

ER_FN int er_b_nan_pattern(int f, er_u64 bits) { return er_decode(f, bits).cls == ER_CLASS_NAN; }
ER_FN int er_b_inf_pattern(int f, er_u64 bits) { return er_decode(f, bits).cls == ER_CLASS_INF; }

/* From the ends lo <= hi of the compute values an implementation may reach (radius rad) to tolerance,
 * finite_range and may_be (docs/proofs/foundations.md).  lpk, hpk: the output patterns of the clipped
 * ends where the caller has them already (er_b_key_of's), or NULL. */
ER_FN_NOINLINE void er_b_finish_lh(const er_bpar *c, er_u64 rbits, double lo, double hi, double rad, int nonfinite,
                          int uncertain, const er_u64 *lpk, const er_u64 *hpk, er_bel *o)
{
    int of = c->out_fmt, dir = c->dir;
    er_u32 opts = c->opts;
    double rv = er_b_value(of, rbits), maxo = c->maxo;
    double lo_c, hi_c, flo = ER_B_NAN, fhi = ER_B_NAN;
    int sgn = er_fmt_signed(er_fmt_get(of));
    o->radius = rad;
    o->flags = 0u;
    o->low = o->high = rbits;
    if (nonfinite && uncertain) {
        /* a stored operand may be NaN or infinite where the earlier result allowed it, or finite where
         * its reference was not: no bound, every special possible */
        o->tolerance = er_b_finite(rv) ? ER_B_INF : ER_B_NAN;
        o->flags = ER_BF_RANGE | ER_BF_PINF | ER_BF_NINF | ER_BF_NAN;
        o->low = sgn ? er_b_cvt(of, -maxo, ER_RND_NEAREST_EVEN, 0u) : 0u;
        o->high = er_b_cvt(of, maxo, ER_RND_NEAREST_EVEN, 0u);
        return;
    }
    if (nonfinite) {
        /* a NaN or infinite exact value: every implementation meets the same special values (no order
         * turns +inf alone into NaN), so it outputs what rounded is */
        o->tolerance = er_b_finite(rv) ? 0.0 : ER_B_NAN;
        if (er_b_finite(rv)) o->flags |= ER_BF_RANGE;
        else if (er_b_isnan(rv)) o->flags |= ER_BF_NAN;
        else if (rv > 0) o->flags |= ER_BF_PINF;
        else o->flags |= ER_BF_NINF;
        return;
    }
    if (!er_b_finite(rad)) {
        o->flags |= ER_BF_NAN; /* unbounded: an intermediate overflow may meet its opposite */
        lo = -ER_B_INF;
        hi = ER_B_INF;
    }
    /* values beyond compute's range: the compute result is an infinity (no order avoids it then) */
    lo_c = lo < -c->max_c ? -c->max_c : lo;
    hi_c = hi > c->max_c ? c->max_c : hi;
    if (hi > c->max_c) {
        er_u64 ip = er_convert(ER_FMT_F64, of, ER_U64(0x7FF0000000000000), dir, opts).bits;
        if (er_b_nan_pattern(of, ip)) o->flags |= ER_BF_NAN;
        else if (er_b_inf_pattern(of, ip)) o->flags |= ER_BF_PINF;
    }
    if (lo < -c->max_c) {
        er_u64 in = er_convert(ER_FMT_F64, of, ER_U64(0xFFF0000000000000), dir, opts).bits;
        if (er_b_nan_pattern(of, in)) o->flags |= ER_BF_NAN;
        else if (er_b_inf_pattern(of, in)) o->flags |= ER_BF_NINF;
    }
    if (!sgn && lo_c <= 0) {
        /* an unsigned output (f8E8M0FNU): every value <= 0 gives NaN and every positive value a positive
         * pattern, so the monotone argument applies to the positive part only */
        o->flags |= ER_BF_NAN;
        lo_c = 0x1p-1074;
    }
    if (lo_c <= hi_c) {
        er_u64 lp = lpk ? *lpk : er_b_cvt(of, lo_c, dir, opts);
        er_u64 hp = hpk ? *hpk : er_b_cvt(of, hi_c, dir, opts);
        double lv = er_b_value(of, lp), hv = er_b_value(of, hp);
        if (er_b_isnan(lv) || er_b_isnan(hv)) o->flags |= ER_BF_NAN;
        if (er_b_isinf(lv) && lv < 0) o->flags |= ER_BF_NINF;
        if (er_b_isinf(hv) && hv > 0) o->flags |= ER_BF_PINF;
        /* the finite outputs: rounding is monotone and the interval connected */
        flo = er_b_finite(lv) ? lv : (lo_c < 0 ? -maxo : ER_B_NAN);
        fhi = er_b_finite(hv) ? hv : (hi_c > 0 ? maxo : ER_B_NAN);
        if (er_b_finite(flo) && er_b_finite(fhi) && flo <= fhi) {
            o->flags |= ER_BF_RANGE;
            /* -max and max (in place of an infinity): values of the format */
            o->low = er_b_finite(lv) ? lp : er_b_cvt(of, flo, ER_RND_NEAREST_EVEN, 0u);
            o->high = er_b_finite(hv) ? hp : er_b_cvt(of, fhi, ER_RND_NEAREST_EVEN, 0u);
        }
    }
    if (!er_b_finite(rv)) {
        o->tolerance = ER_B_NAN;
    } else if (!er_b_finite(rad)) {
        o->tolerance = ER_B_INF;
    } else if (o->flags & ER_BF_RANGE) {
        double d1 = er_b_up(rv - flo), d2 = er_b_up(fhi - rv);
        o->tolerance = d1 > d2 ? d1 : d2;
        if (o->tolerance < 0) o->tolerance = 0;
    } else {
        o->tolerance = ER_B_INF;
    }
}

/* The ends from an enclosure s64 +- e64 of the exact sum (the engines, and normal's and any_order's
 * general loop). */
ER_FN void er_b_finish(const er_bpar *c, er_u64 rbits, double s64, double e64, double rad, int nonfinite,
                       int uncertain, er_bel *o)
{
    double lo = -ER_B_INF, hi = ER_B_INF;
    if (er_b_finite(rad)) {
        lo = er_b_down(er_b_down(s64 - e64) - rad);
        hi = er_b_up(er_b_up(s64 + e64) + rad);
    }
    er_b_finish_lh(c, rbits, lo, hi, rad, nonfinite, uncertain, 0, 0, o);
}

/*
 * What er_b_finish_lh reads of one end v (lo: side 0, hi: side 1): the comparisons with -max_c, max_c
 * and 0, and the output pattern of v clipped as it clips it.  Each is a monotone step function of v
 * (rounding is monotone, and on one side of 0 a pattern's preimage is an interval), so where two values
 * have the same key, so has every value between them, and er_b_finish_lh gives the same result for
 * any lo (hi) between them, for lo <= hi (docs/proofs/foundations.md).
 */
typedef struct er_b_key {
    er_u64 pat;
    er_u32 cmp;
} er_b_key;

ER_FN er_b_key er_b_key_of(const er_bpar *c, double v, int side)
{
    er_b_key k;
    double vc = v;
    k.cmp = (v < -c->max_c ? 1u : 0u) | (v > c->max_c ? 2u : 0u) | (v < 0 ? 4u : 0u) | (v <= 0 ? 8u : 0u);
    if (side == 0) {
        if (vc < -c->max_c) vc = -c->max_c;
        if (!er_fmt_signed(er_fmt_get(c->out_fmt)) && vc <= 0) vc = 0x1p-1074;
    } else if (vc > c->max_c) {
        vc = c->max_c;
    }
    k.pat = er_b_cvt(c->out_fmt, vc, c->dir, c->opts);
    return k;
}

ER_FN int er_b_key_eq(er_b_key x, er_b_key y) { return x.pat == y.pat && x.cmp == y.cmp; }

/* normal's and any_order's radius from upper bounds T >= sum |x_p| and W >= sum |x_p| r_p (exact
 * quantities rounded up once), and C (finite): no inflation for the way T and W were computed. */
ER_FN double er_b_radius_exact(const er_bpar *c, double T, double W, double cval)
{
    double cm = fabs(cval), nterms = (double)c->k + (c->has_c ? 1 : 0), n1, g, rad;
    if (cm > 0) {
        T = er_b_up(T + cm);
        W = er_b_up(W + er_b_up(cm * c->r_c));
    }
    if (!er_b_finite(T)) return ER_B_INF;
    /* any tree (also normal's restarted partial sums): r_t <= n' */
    n1 = nterms + c->c_rounds;
    g = er_b_gamma(c->u, n1);
    rad = er_b_up(er_b_up(g * T) * n1);
    if (c->kind != ER_BK_ANY && er_b_up(T * (1 + 0x1p-20)) < c->max_c) {
        /* normal's trees are some of any order's: the smaller of the two bounds holds */
        double rn = er_b_up(er_b_gamma(c->u, c->r_max) * W);
        if (rn < rad) rad = rn;
    }
    /* underflow of each rounded product: absolute eta, at most doubled on its way */
    return er_b_up(rad + er_b_up(2.0 * c->eta * (double)c->k));
}

/* The binary64 value next to y = h + L -+ d (exact: h = fl(h + L)) in direction up (RU) or down (RD), where
 * it is decided: h a normal value of magnitude 2^e or more (e > -960) and d <= 2^(e - 56), so that y lies
 * within half a spacing of h plus d on either side of it (docs/proofs/foundations.md, "A double-double
 * sum").  1 with *r set, else 0. */
ER_FN int er_b_dd_round(double h, double L, double d, int up, double *r)
{
    er_u64 be = (er_b_bits(h) >> 52) & 0x7FFu;
    if (be <= 63u || be == 0x7FFu || !(d >= 0)) return 0; /* |h| >= 2^-960, finite */
    if (!(d <= er_b_pow2((int)be - 1023 - 56))) return 0;
    if (up) {
        if (L <= -d) *r = h;             /* y <= h, above the value below h */
        else if (L > d) *r = er_b_up(h); /* y > h, below the value above h */
        else return 0;
    } else {
        if (L >= d) *r = h;                /* y >= h, below the value above h */
        else if (L < -d) *r = er_b_down(h); /* y < h, above the value below h */
        else return 0;
    }
    return 1;
}

/* x + rad as h + L exactly (h = fl(h + L)) and the bound d of its distance to the true value, from the
 * double-double s + e of x within err (err = 0 and e = 0: x = s exactly, and then d = 0). */
ER_FN void er_b_dd_shift(double s, double e, double err, double rad, double *h, double *L, double *d)
{
    double h1 = s + rad, bb = h1 - s, l1 = (s - (h1 - bb)) + (rad - bb); /* TwoSum: s + rad = h1 + l1 */
    double l2 = l1 + e; /* within 2^-53 |l2| of l1 + e (plus 2^-1075 below the normal range); exact for e = 0 */
    double h2 = h1 + l2, b2 = h2 - h1;
    *L = (h1 - (h2 - b2)) + (l2 - b2); /* TwoSum: h1 + l2 = h2 + L */
    *h = h2;
    if (e == 0) *d = err;
    else *d = er_b_up(err + er_b_up(er_b_up(er_b_abs(l2) * 0x1p-53) + 0x1p-1074));
}

/* lo = RD(x - rad), hi = RU(x + rad) from a double-double s + e within err of x, where it decides both. */
ER_FN_NOINLINE int er_b_dd_ends(double s, double e, double err, double rad, double *lo, double *hi)
{
    double h, L, d;
    if (!er_b_finite(s) || !er_b_finite(e) || !er_b_finite(err)) return 0;
    er_b_dd_shift(s, e, err, -rad, &h, &L, &d);
    if (!er_b_dd_round(h, L, d, 0, lo)) return 0;
    er_b_dd_shift(s, e, err, rad, &h, &L, &d);
    return er_b_dd_round(h, L, d, 1, hi);
}

/*
 * er_b_ends_exact's second step: lo = RD(x - rad) and hi = RU(x + rad) from a double-double Sum2 of the
 * exact products and C in index order (TwoSum; Ogita, Rump and Oishi 2005: s + e within
 * gamma_(n-1)^2 sum |x_i| of x), where every product is exact in binary64 (checked: finite, fma(a, b,
 * -x) = 0 and not below 2^-969) and that enclosure decides both ends.  1: *lo and *hi set (the exact
 * sum's own results); 0: not decided, the caller sums exactly.  About k fused operations instead of the
 * exact accumulator's much longer per-product step; binary64 outputs need it for nearly every element.
 */
ER_FN_NOINLINE int er_b_ends_dd(const er_bpar *c, ER_GLOBAL const double *ar, ER_GLOBAL const double *bc, double cval,
                       double rad, double *lo, double *hi)
{
    double s = 0, e = 0, t = 0;
    int exact = 1; /* every TwoSum error zero: s is x */
    er_i64 p, n = c->k + 1;
    for (p = 0; p <= c->k; p++) {
        double x;
        if (p < c->k) {
            double a = ar[p], b = bc[p * c->ldb];
            x = a * b;
            if (!er_b_finite(x) || fma(a, b, -x) != 0.0) return 0;
            if (er_b_abs(x) < 0x1p-969 && (x != 0.0 || (a != 0.0 && b != 0.0))) return 0; /* maybe rounded */
        } else {
            if (!c->has_c) break;
            x = cval;
            if (!er_b_finite(x)) return 0;
        }
        {
            double s1 = s + x, bb = s1 - s, ei = (s - (s1 - bb)) + (x - bb);
            exact &= ei == 0;
            e = e + ei;
            s = s1;
            t = t + er_b_abs(x);
        }
    }
    {
        /* gamma_n = n u / (1 - n u) (er_b_gamma is its factor per unit of n) */
        double g = er_b_up(er_b_gamma(0x1p-53, (double)n) * (double)n), tt, err;
        if (!er_b_finite(s) || !er_b_finite(e) || !er_b_finite(t) || !er_b_finite(g)) return 0;
        tt = er_b_up(t * er_b_up(1.0 + g)); /* >= sum |x_i|: t is n - 1 additions of non-negative terms */
        /* and n + 2 times 2^-1074: the additions of e, t and L below binary64's normal range err by
         * at most 2^-1075 each beyond their relative bounds */
        err = exact ? 0.0 : er_b_up(er_b_up(er_b_up(g * g) * tt) + (double)(n + 2) * 0x1p-1073);
        return er_b_dd_ends(s, e, err, rad, lo, hi);
    }
}

/* er_b_ends_exact's last step: lo = RD(x - rad), hi = RU(x + rad) from x summed exactly (the products of
 * binary64 values, lsb >= 2^-2148, below 2^2048; C; -rad), then x + rad = (x - rad) + 2 rad on a copy. */
ER_FN_NOINLINE void er_b_ends_acc(const er_bpar *c, ER_GLOBAL const double *ar, ER_GLOBAL const double *bc,
                                  double cval, er_u64 rbits, double rad, er_bel *o)
{
    er_acc acc, acc2;
    er_i32 wlo, wnd;
    er_i64 p;
    double lo, hi;
    er_val mr = er_decode(ER_FMT_F64, er_b_bits(-rad)), pr = er_decode(ER_FMT_F64, er_b_bits(rad));
    er_acc_window(-2148, 2048, c->k + 3, &wlo, &wnd);
    er_acc_init(&acc, wlo, wnd);
    for (p = 0; p < c->k; p++)
        er_acc_add_product(&acc, er_decode(ER_FMT_F64, er_b_bits(ar[p])), er_decode(ER_FMT_F64, er_b_bits(bc[p * c->ldb])));
    if (c->has_c) er_acc_add_val(&acc, er_decode(ER_FMT_F64, er_b_bits(cval)));
    er_acc_add_val(&acc, mr);
    er_acc_copy(&acc2, &acc);
    er_acc_add_val(&acc2, pr);
    er_acc_add_val(&acc2, pr);
    lo = er_b_dbl(er_acc_round(&acc, ER_FMT_F64, ER_RND_NEGATIVE_INF, 0u).bits);
    hi = er_b_dbl(er_acc_round(&acc2, ER_FMT_F64, ER_RND_POSITIVE_INF, 0u).bits);
    if (lo == 0) lo = 0.0; /* the real number 0 (an exact zero rounds to -0 toward -inf) */
    if (hi == 0) hi = 0.0;
    er_b_finish_lh(c, rbits, lo, hi, rad, 0, 0, 0, 0, o);
}

/* er_b_ends_exact's rare step: lo = RD(x - rad), hi = RU(x + rad) from the double-double Sum2 where it
 * decides (er_b_ends_dd), else from x summed exactly (er_b_ends_acc): the same results either way. */
ER_FN_NOINLINE void er_b_ends_sum(const er_bpar *c, ER_GLOBAL const double *ar, ER_GLOBAL const double *bc,
                                  double cval, er_u64 rbits, double rad, er_bel *o)
{
    double lo, hi;
    if (er_b_ends_dd(c, ar, bc, cval, rad, &lo, &hi)) {
        er_b_finish_lh(c, rbits, lo, hi, rad, 0, 0, 0, 0, o);
        return;
    }
    er_b_ends_acc(c, ar, bc, cval, rbits, rad, o);
}

/*
 * The element's result at lo = RD(x - rad) and hi = RU(x + rad), x the exact sum of the k products of
 * ar and bc and C (when has_c), rad finite: from an enclosure [xl, xh] of x where both its ends give the
 * same keys (er_b_key_of: any enclosure of x decides the same result), else from x summed exactly
 * here (rare: a rounding boundary of the output within the enclosure's width).  normal's, any_order's
 * and the engines' ends, so that their bits do not depend on how x was enclosed.
 */
ER_FN void er_b_ends_exact_dd(const er_bpar *c, ER_GLOBAL const double *ar, ER_GLOBAL const double *bc,
                              double cval, er_u64 rbits, double xl, double xh, double rad, const double *sd,
                              double T, er_bel *o)
{
    double la = er_b_down(xl - rad), lb = er_b_up(xh - rad), ha = er_b_down(xl + rad), hb = er_b_up(xh + rad);
    er_b_key kl = er_b_key_of(c, la, 0), kh = er_b_key_of(c, hb, 1);
    if (er_b_key_eq(kl, er_b_key_of(c, lb, 0)) && er_b_key_eq(kh, er_b_key_of(c, ha, 1))) {
        er_b_finish_lh(c, rbits, la, hb, rad, 0, 0, &kl.pat, &kh.pat, o);
        return;
    }
    if (sd && er_b_finite(cval) && er_b_finite(T)) {
        /* the caller's Sum2 of the products in index order, sd[0] + sd[1], within gamma_(k-1)^2 sum |x_p|
         * <= gamma_k^2 T of their sum (T >= sum |x_p|); C added by TwoSum, its error term rounded once */
        double s = sd[0], e = sd[1], lo, hi, g = er_b_up(er_b_gamma(0x1p-53, (double)c->k) * (double)c->k);
        double err = er_b_up(er_b_up(er_b_up(g * g) * T) + (double)(c->k + 3) * 0x1p-1073);
        if (c->has_c) {
            double s1 = s + cval, bb = s1 - s, ec = (s - (s1 - bb)) + (cval - bb);
            s = s1;
            e = e + ec;
            err = er_b_up(err + er_b_up(er_b_up(er_b_abs(e) * 0x1p-53) + 0x1p-1074));
        }
        if (er_b_dd_ends(s, e, err, rad, &lo, &hi)) {
            er_b_finish_lh(c, rbits, lo, hi, rad, 0, 0, 0, 0, o);
            return;
        }
    }
    er_b_ends_sum(c, ar, bc, cval, rbits, rad, o); /* rare: a rounding boundary of the output within the
                                                    * enclosure's width */
}

/* er_b_ends_exact_dd without a caller's double-double (sd NULL, T unused). */
ER_FN void er_b_ends_exact(const er_bpar *c, ER_GLOBAL const double *ar, ER_GLOBAL const double *bc, double cval,
                           er_u64 rbits, double xl, double xh, double rad, er_bel *o)
{
    er_b_ends_exact_dd(c, ar, bc, cval, rbits, xl, xh, rad, 0, 0.0, o);
}

/*
 * normal and any_order where the exact quantities apply (gemm_form; the row and the column finite).
 * S: a binary64 sum of the k products in any order (they are exact, so |S - sum| <= gamma_(k-1) T for
 * every tree, with or without fma); NT, NW: the exact integer sums, with their grids' exponents et, ew.
 * The element's result is er_b_finish_lh at lo = RD(x - rad) and hi = RU(x + rad), x the exact sum
 * (C included): taken from the enclosure of x where both its ends give the same key, else from x
 * summed exactly here (rare: a rounding boundary of the output within a few ulps of binary64).
 */
ER_FN void er_b_exact_element_dd(const er_bpar *c, ER_GLOBAL const double *ar, ER_GLOBAL const double *bc,
                                 double cval, er_u64 rbits, double S, double NT, double NW, int et, int ew,
                                 const double *sd, er_bel *o)
{
    double T = er_b_scale_up(NT, et), W = c->kind == ER_BK_ANY ? 0.0 : er_b_scale_up(NW, ew), rad, e, xl, xh;
    if (!er_b_finite(cval)) {
        /* an infinite or NaN C: the exact value is not finite; every order meets it, unless the finite
         * terms can overflow a partial (then nothing is excluded) */
        rad = ER_B_INF;
        er_b_finish_lh(c, rbits, -ER_B_INF, ER_B_INF, rad, !(er_b_up(T * (1 + 0x1p-20)) >= c->max_c), 0, 0, 0, o);
        return;
    }
    rad = er_b_radius_exact(c, T, W, cval);
    if (!er_b_finite(rad)) {
        er_b_finish_lh(c, rbits, -ER_B_INF, ER_B_INF, rad, 0, 0, 0, 0, o);
        return;
    }
    e = er_b_up(er_b_up(er_b_gamma(0x1p-53, (double)c->k) * (double)c->k) * T);
    xl = er_b_down(S - e);
    xh = er_b_up(S + e);
    if (c->has_c) {
        xl = er_b_down(xl + cval);
        xh = er_b_up(xh + cval);
    }
    er_b_ends_exact_dd(c, ar, bc, cval, rbits, xl, xh, rad, sd, T, o);
}

/* er_b_exact_element_dd without a caller's double-double. */
ER_FN void er_b_exact_element(const er_bpar *c, ER_GLOBAL const double *ar, ER_GLOBAL const double *bc, double cval,
                              er_u64 rbits, double S, double NT, double NW, int et, int ew, er_bel *o)
{
    er_b_exact_element_dd(c, ar, bc, cval, rbits, S, NT, NW, et, ew, 0, o);
}

/*
 * An engine's element from its finished state: the ends RD(x - E) and RU(x + E) of the exact sum x (C
 * included) and the radius E (er_b_eng_final), decided from the enclosure s64 +- e64 of x or from x
 * itself (er_b_ends_exact): the bits depend on E and x only, not on the order in which s was summed.
 * ar, bc: the element's row of A' and column of B' (step c->ldb), as er_b_eng_run read them.
 */
ER_FN void er_b_eng_element(const er_bpar *c, const er_b_eng *g, double cval, er_u64 rbits,
                            ER_GLOBAL const double *ar, ER_GLOBAL const double *bc, er_bel *o)
{
    double s64 = 0, e64 = 0, rad;
    int nonfinite = 0; /* set by the radius: the exact sum is infinite or NaN and decides the output */
    rad = er_b_eng_final(c, g, cval, &s64, &e64, &nonfinite);
    if (nonfinite || !er_b_finite(rad)) {
        er_b_finish(c, rbits, s64, e64, rad, nonfinite, (c->slack_a || c->slack_b || c->slack_c) && !er_b_finite(rad), o);
        return;
    }
    er_b_ends_exact(c, ar, bc, cval, rbits, er_b_down(s64 - e64), er_b_up(s64 + e64), rad, o);
}

/*
 * One element.  qa, qw: the element's row of the quantized |A'| and |A'| diag(r) (k values, step 1);
 * qb: its column of the quantized |B'| (step ldb, as bc); sa, sw, sb their grids' exponents (ER_BQ_BAD:
 * the row or column holds an infinity or NaN).  pre: S and the two integer sums (er_b_exact_element)
 * from the backend's matrix products in any order, or NULL: then they are formed here.  Engines
 * without slack: qa and qb are the magnitudes on the instructions' grids (er_b_eng_q_value; sa, sw, sb
 * and qw unused), read by er_b_eng_run.
 */
ER_FN void er_bound_element(const er_bpar *c, ER_GLOBAL const double *ar, ER_GLOBAL const double *bc,
                            ER_GLOBAL const er_i16 *ea, ER_GLOBAL const er_i16 *eb, ER_GLOBAL const double *rw,
                            ER_GLOBAL const double *da, ER_GLOBAL const double *db, ER_GLOBAL const double *qa,
                            ER_GLOBAL const double *qw, ER_GLOBAL const double *qb, int sa, int sw, int sb, double cval,
                            double sc, er_u64 rbits, const double *pre, er_bel *o)
{
    double s64 = 0, e64 = 0, rad;
    int nonfinite = 0; /* set by the radius: the exact sum is infinite or NaN and decides the output */
    if (c->kind == ER_BK_ENGINE) {
        er_b_eng g;
        er_b_eng_init(c, &g, cval, sc);
        er_b_eng_run(c, &g, ar, bc, ea, eb, da, db, qa, qb);
        er_b_eng_element(c, &g, cval, rbits, ar, bc, o);
        return;
    }
    if (c->gemm_form && sa != ER_BQ_BAD && sb != ER_BQ_BAD) {
        double S = 0, NT = 0, NW = 0;
        if (pre) {
            S = pre[0];
            NT = pre[1];
            NW = pre[2];
        } else {
            er_i64 p;
            int any = c->kind == ER_BK_ANY;
            for (p = 0; p < c->k; p++) {
                double q = qb[p * c->ldb];
                S = fma(ar[p], bc[p * c->ldb], S);
                NT = NT + qa[p] * q; /* integers: exact, below 2^53 */
                if (!any) NW = NW + qw[p] * q;
            }
        }
        er_b_exact_element(c, ar, bc, cval, rbits, S, NT, NW, sa + sb, sw + sb, o);
        return;
    }
    /* an infinite or NaN operand, flush, slack, f64 inputs: the general loop */
    rad = er_b_radius_sum(c, ar, bc, rw, da, db, cval, sc, &s64, &e64, &nonfinite);
    er_b_finish(c, rbits, s64, e64, rad, nonfinite, (c->slack_a || c->slack_b || c->slack_c) && !er_b_finite(rad), o);
}

#endif /* ER_BOUNDS_H */
