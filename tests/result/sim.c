/*
 * sim.c: simulated implementations of one dot product, bit-accurate (sim.h says what each one does).
 *
 * Exactness discipline: a binary64 operation is used only where its result is proven exact at run time
 * (exact_mul: the significands' bit counts and the exponents say the product fits; exact_add: Knuth's
 * TwoSum error is zero); otherwise the exact value is formed in MPFR with every operation checked exact
 * (a nonzero ternary value aborts).  Every rounding is one rounding of an exact value by the library's
 * core (er_round, er_round_double), or, for the tensor-core normalisation into a precision that is no
 * format of the library (e8m13), by round_custom below from the exact top 64 bits and a sticky bit.
 */
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpfr.h>

#include "sim.h"
#include "exactref/core/er_round.h"

/* ---- The model table: docs/accumulation-models.md's table, as data. ---- */
const sim_model sim_models[] = {
    /* name                  k   F  out_p out_round            promote floor groups acc_fmt  tf32 F2 stages */
    {"volta",                4, 23, 23, ER_RND_ZERO,          0,      0,    0,     ER_FMT_F32, 0, 0, 0, 0}, /* Volta fp16 */
    {"turing",               8, 24, 23, ER_RND_ZERO,          0,      0,    0,     ER_FMT_F32, 0, 0, 0, 0}, /* Turing fp16 */
    {"ampere",               8, 24, 23, ER_RND_ZERO,          0,      0,    0,     ER_FMT_F32, 0, 0, 0, 0}, /* fp16/bf16 k16: 2 x 8 */
    {"ampere-tf32",          4, 24, 23, ER_RND_ZERO,          0,      0,    0,     ER_FMT_F32, 1, 0, 0, 0}, /* tf32 k8: 2 x 4 */
    {"ada-fp8",             16, 13, 13, ER_RND_ZERO,          0,      0,    0,     ER_FMT_F32, 0, 0, 0, 0}, /* fp8 k32: 2 x 16, e8m13 */
    {"hopper",              16, 25, 23, ER_RND_ZERO,          0,      0,    0,     ER_FMT_F32, 0, 0, 0, 0}, /* wgmma f16/bf16 */
    {"hopper-tf32",          8, 25, 23, ER_RND_ZERO,          0,      0,    0,     ER_FMT_F32, 1, 0, 0, 0}, /* wgmma tf32 */
    {"hopper-fp8",          32, 13, 13, ER_RND_ZERO,          0,      0,    0,     ER_FMT_F32, 0, 0, 0, 0}, /* wgmma fp8, e8m13 */
    {"blackwell",           16, 25, 23, ER_RND_ZERO,          0,      0,    0,     ER_FMT_F32, 0, 0, 0, 0}, /* tcgen05 f16 */
    {"blackwell-f8f6f4",    32, 25, 23, ER_RND_ZERO,          0,      0,    0,     ER_FMT_F32, 0, 0, 0, 0}, /* tcgen05 f8f6f4 */
    {"blackwell-mxf8f6f4",  32, 25, 23, ER_RND_ZERO,          0,      0,    0,     ER_FMT_F32, 0, 0, 0, 0}, /* block 32, ue8m0 */
    {"blackwell-mxf4",      64, 35, 23, ER_RND_ZERO,          0,      0,    16,    ER_FMT_F32, 0, 0, 0, 0}, /* 4 exact groups of 16 */
    {"cdna3",                8, 24, 23, ER_RND_NEAREST_EVEN,  0,      1,    0,     ER_FMT_F32, 0, 31, 0, 0}, /* CDNA3 f16/bf16 */
    {"hopper-fp8-deepgemm", 32, 13, 13, ER_RND_ZERO,          128,    0,    0,     ER_FMT_F32, 0, 0, 0, 0}, /* DeepGEMM promotion */
    /* the models added with the f16 accumulators and CDNA3's fp8 and xf32 (docs/accumulation-models.md) */
    {"cdna3-fp8",           16, 24, 23, ER_RND_NEAREST_EVEN,  0,      1,    0,     ER_FMT_F32, 0, 31, 1, 0}, /* even/odd stages */
    {"cdna3-xf32",           4, 24, 23, ER_RND_NEAREST_EVEN,  0,      1,    0,     ER_FMT_F32, 1, 31, 0, 0}, /* xf32 */
    {"blackwell-tf32",       8, 25, 23, ER_RND_ZERO,          0,      0,    0,     ER_FMT_F32, 1, 0, 0, 0}, /* tcgen05 tf32 */
    {"ada-f16",              8, 24, 23, ER_RND_ZERO,          0,      0,    0,     ER_FMT_F32, 0, 0, 0, 0}, /* Ada f16 k16: 2 x 8 */
    {"volta-f16",            4, 23, 10, ER_RND_NEAREST_EVEN,  0,      0,    0,     ER_FMT_F16, 0, 0, 0, 0}, /* f16 D */
    {"turing-f16",           8, 24, 10, ER_RND_NEAREST_EVEN,  0,      0,    0,     ER_FMT_F16, 0, 0, 0, 0},
    {"ampere-f16",           8, 24, 10, ER_RND_NEAREST_EVEN,  0,      0,    0,     ER_FMT_F16, 0, 0, 0, 0},
    {"ada-fp8-f16",         16, 13, 10, ER_RND_NEAREST_EVEN,  0,      0,    0,     ER_FMT_F16, 0, 0, 0, 0},
    {"hopper-f16",          16, 25, 10, ER_RND_NEAREST_EVEN,  0,      0,    0,     ER_FMT_F16, 0, 0, 0, 0},
    {"hopper-fp8-f16",      32, 13, 10, ER_RND_NEAREST_EVEN,  0,      0,    0,     ER_FMT_F16, 0, 0, 0, 0},
    {"blackwell-f16",       16, 25, 10, ER_RND_NEAREST_EVEN,  0,      0,    0,     ER_FMT_F16, 0, 0, 0, 0},
    {"blackwell-f8f6f4-f16",32, 25, 10, ER_RND_NEAREST_EVEN,  0,      0,    0,     ER_FMT_F16, 0, 0, 0, 0},
};
const int sim_model_count = (int)(sizeof sim_models / sizeof sim_models[0]);

const sim_model *sim_model_find(const char *name)
{
    int i;
    if (!name) return NULL;
    if (strcmp(name, "blackwell-mx") == 0) name = "blackwell-mxf4";
    for (i = 0; i < sim_model_count; i++)
        if (strcmp(sim_models[i].name, name) == 0) return &sim_models[i];
    return NULL;
}

sim_model sim_model_f16_output(const sim_model *m)
{
    sim_model r = *m;
    r.out_p = 10;
    r.out_round = ER_RND_NEAREST_EVEN;
    r.acc_fmt = ER_FMT_F16;
    return r;
}

/* ---- Small helpers. ---- */
static void sim_die(const char *what)
{
    fprintf(stderr, "sim: %s\n", what);
    fflush(stderr);
    abort();
}

static int g_ftz;

void sim_set_ftz(int on) { g_ftz = on != 0; }
int sim_get_ftz(void) { return g_ftz; }

static int fmt_is_float(int fmt)
{
    return fmt >= 0 && fmt < ER_FMT_COUNT && er_fmt_get(fmt).kind == ER_KIND_FLOAT;
}

static int fmt_emin(int fmt) { return er_fmt_emin(er_fmt_get(fmt)); }
static int fmt_emax(int fmt) { return er_fmt_emax(er_fmt_get(fmt)); }

/* x (a binary64 value, taken exactly) rounded once into fmt in dir. */
static double rnd(int fmt, double x, int dir)
{
    double r;
    if (er_round_double(fmt, x, dir, &r) != ER_OK) sim_die("er_round_double refused its arguments");
    return r;
}

/* Flush a compute-format subnormal to the zero of its sign when ftz is on. */
static double fz(int ftz, int fmt, double x) { return ftz ? er_flush_subnormal(fmt, x) : x; }

static void check_exact(int ternary, const char *what)
{
    if (ternary != 0) sim_die(what);
}

/* The top 64 bits of |x| (x finite, nonzero; bit 63 set), its exponent (|x| = (sig + s) 2^exp with
 * 0 <= s < 1) and whether anything below them is nonzero. */
static void mp_top64(mpfr_srcptr x, unsigned *sign, uint64_t *sig, long *exp, unsigned *sticky)
{
    mpfr_t t;
    int inex;
    mpfr_exp_t e;
    mpfr_init2(t, 64);
    inex = mpfr_abs(t, x, MPFR_RNDZ);
    e = mpfr_get_exp(t); /* |t| in [2^(e-1), 2^e) */
    check_exact(mpfr_mul_2si(t, t, (long)(64 - e), MPFR_RNDN), "mp_top64: scaling inexact");
    *sig = (uint64_t)mpfr_get_uj(t, MPFR_RNDZ);
    *exp = (long)e - 64;
    *sticky = inex != 0;
    *sign = mpfr_signbit(x) ? 1u : 0u;
    mpfr_clear(t);
    if (!(*sig >> 63)) sim_die("mp_top64: not normalised");
}

/* The exact finite MPFR value x rounded once into fmt in dir, by the library's core rounding. */
static double mp_round_fmt(mpfr_srcptr x, int fmt, int dir)
{
    unsigned sign, sticky;
    uint64_t sig, bits;
    long exp;
    er_res r;
    double out;
    if (mpfr_zero_p(x)) return mpfr_signbit(x) ? -0.0 : 0.0;
    mp_top64(x, &sign, &sig, &exp, &sticky);
    if (exp < -100000 || exp > 100000) sim_die("mp_round_fmt: exponent out of range");
    r = er_round(fmt, sign, sig, (er_i32)exp, sticky, dir, 0u);
    bits = er_convert(fmt, ER_FMT_F64, r.bits, ER_RND_NEAREST_EVEN, 0u).bits;
    memcpy(&out, &bits, sizeof out);
    return out;
}

/* Number of significant bits of |x| (x finite, nonzero). */
static int sig_bits(double x)
{
    int e, z = 0;
    uint64_t m = (uint64_t)ldexp(frexp(fabs(x), &e), 53); /* exact: an integer below 2^53 */
    while (!(m & 1u)) {
        m >>= 1;
        z++;
    }
    return 53 - z;
}

/* *p = a b when that product is exactly a binary64 value (a, b finite); returns whether it is. */
static int exact_mul(double a, double b, double *p)
{
    int ba, bb, ea, eb;
    if (a == 0.0 || b == 0.0) {
        *p = a * b; /* a signed zero: exact */
        return 1;
    }
    ba = sig_bits(a);
    bb = sig_bits(b);
    if (ba + bb > 53) return 0;
    ea = ilogb(a);
    eb = ilogb(b);
    if (ea + eb + 1 > 1022) return 0;                         /* |ab| < 2^(ea+eb+2) <= 2^1024 */
    if ((ea - ba + 1) + (eb - bb + 1) < -1074) return 0;      /* the last bit must be representable */
    *p = a * b;
    return 1;
}

/* *s = x + y when the binary64 sum is exact (Knuth's TwoSum error is zero; x, y finite). */
static int exact_add(double x, double y, double *s)
{
    double t = x + y;
    double bv, av, err;
    if (!isfinite(t)) return 0;
    bv = t - x;
    av = t - bv;
    err = (x - av) + (y - bv);
    if (err != 0.0) return 0;
    *s = t;
    return 1;
}

/* ---- Compute-format arithmetic: one rounding to nearest even, optional flush to zero. ---- */
#define PREC_SUM 2200  /* x + y of two doubles: span at most 2^1024 .. 2^-1074 */
#define PREC_FMA 4400  /* a b + x: span at most 2^2048 .. 2^-2148 */

static double c_mul_ftz(int fmt, double a, double b, int ftz)
{
    double p, r;
    a = fz(ftz, fmt, a);
    b = fz(ftz, fmt, b);
    if (!isfinite(a) || !isfinite(b)) return rnd(fmt, a * b, ER_RND_NEAREST_EVEN); /* IEEE specials */
    if (exact_mul(a, b, &p)) {
        r = rnd(fmt, p, ER_RND_NEAREST_EVEN);
    } else {
        mpfr_t x;
        mpfr_init2(x, 128);
        check_exact(mpfr_set_d(x, a, MPFR_RNDN), "mul: set");
        check_exact(mpfr_mul_d(x, x, b, MPFR_RNDN), "mul: product inexact");
        r = mp_round_fmt(x, fmt, ER_RND_NEAREST_EVEN);
        mpfr_clear(x);
    }
    return fz(ftz, fmt, r);
}

static double c_add_ftz(int fmt, double x, double y, int ftz)
{
    double s, r;
    x = fz(ftz, fmt, x);
    y = fz(ftz, fmt, y);
    if (!isfinite(x) || !isfinite(y)) return rnd(fmt, x + y, ER_RND_NEAREST_EVEN);
    if (exact_add(x, y, &s)) {
        r = rnd(fmt, s, ER_RND_NEAREST_EVEN);
    } else {
        mpfr_t t;
        mpfr_init2(t, PREC_SUM);
        check_exact(mpfr_set_d(t, x, MPFR_RNDN), "add: set");
        check_exact(mpfr_add_d(t, t, y, MPFR_RNDN), "add: sum inexact");
        r = mp_round_fmt(t, fmt, ER_RND_NEAREST_EVEN);
        mpfr_clear(t);
    }
    return fz(ftz, fmt, r);
}

static double c_fma_ftz(int fmt, double a, double b, double x, int ftz)
{
    double p, s, r;
    a = fz(ftz, fmt, a);
    b = fz(ftz, fmt, b);
    x = fz(ftz, fmt, x);
    if (!isfinite(a) || !isfinite(b)) return rnd(fmt, a * b + x, ER_RND_NEAREST_EVEN);
    if (!isfinite(x)) return rnd(fmt, x, ER_RND_NEAREST_EVEN); /* finite product + inf/NaN */
    if (exact_mul(a, b, &p) && exact_add(p, x, &s)) {
        r = rnd(fmt, s, ER_RND_NEAREST_EVEN);
    } else {
        mpfr_t t, q;
        mpfr_init2(t, PREC_FMA);
        mpfr_init2(q, 128);
        check_exact(mpfr_set_d(q, a, MPFR_RNDN), "fma: set");
        check_exact(mpfr_mul_d(q, q, b, MPFR_RNDN), "fma: product inexact");
        check_exact(mpfr_set(t, q, MPFR_RNDN), "fma: set");
        check_exact(mpfr_add_d(t, t, x, MPFR_RNDN), "fma: sum inexact");
        r = mp_round_fmt(t, fmt, ER_RND_NEAREST_EVEN);
        mpfr_clear(t);
        mpfr_clear(q);
    }
    return fz(ftz, fmt, r);
}

static double c_mul(int fmt, double a, double b) { return c_mul_ftz(fmt, a, b, g_ftz); }
static double c_add(int fmt, double x, double y) { return c_add_ftz(fmt, x, y, g_ftz); }
static double c_fma(int fmt, double a, double b, double x) { return c_fma_ftz(fmt, a, b, x, g_ftz); }

/* c read into the compute format. */
static double c_in(int fmt, double c) { return fz(g_ftz, fmt, rnd(fmt, c, ER_RND_NEAREST_EVEN)); }

static void check_args(int n, const double *a, const double *b, int compute, int out_fmt, int out_dir)
{
    if (n < 0 || (n > 0 && (!a || !b))) sim_die("bad n, a or b");
    if (!fmt_is_float(compute) || !fmt_is_float(out_fmt)) sim_die("compute and out_fmt must be float formats");
    if (out_dir < 0 || out_dir >= ER_RND_COUNT) sim_die("bad out_dir");
}

/* ---- Family 1 and 2. ---- */
double sim_index_order(int n, const double *a, const double *b, double c, int compute, int out_fmt,
                       int out_dir)
{
    double acc;
    int p;
    check_args(n, a, b, compute, out_fmt, out_dir);
    acc = c_in(compute, c);
    for (p = 0; p < n; p++) acc = c_add(compute, acc, c_mul(compute, a[p], b[p]));
    return rnd(out_fmt, acc, out_dir);
}

double sim_reversed(int n, const double *a, const double *b, double c, int compute, int out_fmt,
                    int out_dir)
{
    double acc;
    int p;
    check_args(n, a, b, compute, out_fmt, out_dir);
    acc = c_in(compute, c);
    for (p = n - 1; p >= 0; p--) acc = c_add(compute, acc, c_mul(compute, a[p], b[p]));
    return rnd(out_fmt, acc, out_dir);
}

static double *lanes_run(int lanes, int n, const double *a, const double *b, double c, int compute)
{
    double *lane;
    int l, p;
    if (lanes < 1) sim_die("lanes must be >= 1");
    lane = malloc(sizeof *lane * (size_t)lanes);
    if (!lane) sim_die("out of memory");
    lane[0] = c_in(compute, c);
    for (l = 1; l < lanes; l++) lane[l] = 0.0;
    for (p = 0; p < n; p++) lane[p % lanes] = c_add(compute, lane[p % lanes], c_mul(compute, a[p], b[p]));
    return lane;
}

double sim_lanes(int lanes, int n, const double *a, const double *b, double c, int compute, int out_fmt,
                 int out_dir)
{
    double *lane, acc;
    int l;
    check_args(n, a, b, compute, out_fmt, out_dir);
    lane = lanes_run(lanes, n, a, b, c, compute);
    acc = lane[0];
    for (l = 1; l < lanes; l++) acc = c_add(compute, acc, lane[l]);
    free(lane);
    return rnd(out_fmt, acc, out_dir);
}

static double pw_values(const double *v, int lo, int hi, int compute)
{
    int mid;
    if (hi - lo == 1) return v[lo];
    mid = lo + (hi - lo) / 2;
    return c_add(compute, pw_values(v, lo, mid, compute), pw_values(v, mid, hi, compute));
}

double sim_lanes_pairwise(int lanes, int n, const double *a, const double *b, double c, int compute,
                          int out_fmt, int out_dir)
{
    double *lane, acc;
    check_args(n, a, b, compute, out_fmt, out_dir);
    lane = lanes_run(lanes, n, a, b, c, compute);
    acc = pw_values(lane, 0, lanes, compute);
    free(lane);
    return rnd(out_fmt, acc, out_dir);
}

static double pw_products(const double *a, const double *b, int lo, int hi, int compute)
{
    int mid;
    if (hi - lo == 1) return c_mul(compute, a[lo], b[lo]);
    mid = lo + (hi - lo) / 2;
    return c_add(compute, pw_products(a, b, lo, mid, compute), pw_products(a, b, mid, hi, compute));
}

double sim_pairwise(int n, const double *a, const double *b, double c, int compute, int out_fmt,
                    int out_dir)
{
    double acc;
    check_args(n, a, b, compute, out_fmt, out_dir);
    if (n == 0)
        acc = c_in(compute, c);
    else
        acc = c_add(compute, pw_products(a, b, 0, n, compute), c_in(compute, c));
    return rnd(out_fmt, acc, out_dir);
}

double sim_blocked_fma(int block, int n, const double *a, const double *b, double c, int compute,
                       int out_fmt, int out_dir)
{
    double acc, part;
    int p0, p;
    check_args(n, a, b, compute, out_fmt, out_dir);
    if (block < 1) sim_die("block must be >= 1");
    acc = c_in(compute, c);
    for (p0 = 0; p0 < n; p0 += block) {
        int p1 = n - p0 < block ? n : p0 + block;
        part = 0.0;
        for (p = p0; p < p1; p++) part = c_fma(compute, a[p], b[p], part);
        acc = c_add(compute, acc, part);
    }
    return rnd(out_fmt, acc, out_dir);
}

static uint64_t splitmix(uint64_t *s)
{
    uint64_t z = (*s += UINT64_C(0x9e3779b97f4a7c15));
    z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
    return z ^ (z >> 31);
}

typedef struct tnode {
    double v;
    int prod; /* 1: the unrounded product a[p] b[p] */
    int p;
} tnode;

double sim_random_tree(uint64_t seed, int use_fma, int n, const double *a, const double *b, double c,
                       int compute, int out_fmt, int out_dir)
{
    tnode *nd;
    int cnt, i, j, p;
    uint64_t s = seed;
    double out;
    check_args(n, a, b, compute, out_fmt, out_dir);
    if (use_fma < 0 || use_fma > 2) sim_die("use_fma must be 0, 1 or 2");
    nd = malloc(sizeof *nd * (size_t)(n + 1));
    if (!nd) sim_die("out of memory");
    for (p = 0; p < n; p++) {
        nd[p].p = p;
        nd[p].prod = use_fma != 0;
        nd[p].v = use_fma ? 0.0 : c_mul(compute, a[p], b[p]);
    }
    nd[n].prod = 0;
    nd[n].p = -1;
    nd[n].v = c_in(compute, c);
    cnt = n + 1;
    while (cnt > 1) {
        tnode x, y;
        double r;
        i = (int)(splitmix(&s) % (uint64_t)cnt);
        j = (int)(splitmix(&s) % (uint64_t)(cnt - 1));
        if (j >= i) j++;
        x = nd[i];
        y = nd[j];
        if (x.prod && y.prod) { /* two products meet: the first is rounded, the second may be fused */
            x.v = c_mul(compute, a[x.p], b[x.p]);
            x.prod = 0;
        }
        if (x.prod) {
            tnode t = x;
            x = y;
            y = t;
        }
        if (y.prod) {
            int fuse = use_fma == 1 || (use_fma == 2 && (splitmix(&s) & 1u));
            r = fuse ? c_fma(compute, a[y.p], b[y.p], x.v) : c_add(compute, x.v, c_mul(compute, a[y.p], b[y.p]));
        } else {
            r = c_add(compute, x.v, y.v);
        }
        nd[i].v = r;
        nd[i].prod = 0;
        nd[i].p = -1;
        nd[j] = nd[cnt - 1];
        cnt--;
    }
    out = rnd(out_fmt, nd[0].v, out_dir);
    free(nd);
    return out;
}

/* ---- Family 3: the matrix-engine model. ---- */

/* The normalisation of a step: (-1)^sign (sig + s) 2^exp (sig bit 63 set, 0 < s < 1 iff sticky) to p
 * fraction bits with exponent range [emin, emax] (subnormal quantum 2^(emin - p)), toward zero or to
 * nearest even; at or beyond 2^(emax+1) after rounding: infinity. */
static double round_custom(unsigned sign, uint64_t sig, long exp, unsigned sticky, int p, int emin,
                           int emax, int dir)
{
    long x = exp + 63, xc, shift;
    uint64_t n;
    unsigned g, rest;
    double v;
    if (x > emax) return sign ? -INFINITY : INFINITY;
    xc = x < emin ? emin : x;
    shift = xc - p - exp; /* >= 63 - p >= 11 */
    if (shift > 64) {
        n = 0;
        g = 0;
        rest = 1;
    } else if (shift == 64) {
        n = 0;
        g = (unsigned)(sig >> 63);
        rest = ((sig << 1) != 0) | sticky;
    } else {
        n = sig >> shift;
        g = (unsigned)((sig >> (shift - 1)) & 1u);
        rest = (shift > 1 ? ((sig << (65 - shift)) != 0) : 0) | sticky;
    }
    if (dir == ER_RND_NEAREST_EVEN) {
        if (g && (rest || (n & 1u))) n++;
    } else if (dir != ER_RND_ZERO) {
        sim_die("model out_round must be ER_RND_ZERO or ER_RND_NEAREST_EVEN");
    }
    if (n == 0) return sign ? -0.0 : 0.0;
    v = ldexp((double)n, (int)(xc - p)); /* n <= 2^(p+1) <= 2^53: exact */
    if (v >= ldexp(1.0, emax + 1)) return sign ? -INFINITY : INFINITY;
    return sign ? -v : v;
}

/* x = s 2^e with 1 <= |s| < 2, except below 2^emin: e = emin, |s| < 1 (x finite, nonzero). */
static void decompose(double x, int emin, double *s, int *e)
{
    int ex = ilogb(x);
    if (ex < emin) ex = emin;
    *e = ex;
    *s = ldexp(x, -ex); /* exact: a power-of-two scaling into [2^-60, 2) or so */
}

/* Workspace of one engine call. */
typedef struct eng_ws {
    int cap;
    mpfr_t *sig;  /* term significands (exact) */
    long *ex;     /* term exponents */
    mpfr_t tmp, sum;
} eng_ws;

#define PREC_TERM 256   /* a product term: four significands of at most 53 bits */
#define PREC_GROUP 4800 /* a group sum of products of doubles times scale significands */

static void ws_init(eng_ws *w, int cap, int groups)
{
    int i;
    w->cap = cap;
    w->sig = malloc(sizeof *w->sig * (size_t)cap);
    w->ex = malloc(sizeof *w->ex * (size_t)cap);
    if (!w->sig || !w->ex) sim_die("out of memory");
    for (i = 0; i < cap; i++) mpfr_init2(w->sig[i], groups ? PREC_GROUP : PREC_TERM);
    mpfr_init2(w->tmp, groups ? PREC_GROUP : PREC_TERM);
    mpfr_init2(w->sum, 64);
}

static void ws_clear(eng_ws *w)
{
    int i;
    for (i = 0; i < w->cap; i++) mpfr_clear(w->sig[i]);
    mpfr_clear(w->tmp);
    mpfr_clear(w->sum);
    free(w->sig);
    free(w->ex);
}

/* A factor as (significand, exponent); a zero is (0, zexp): the exponent the model gives a zero. */
static void factor(double x, int emin, int zexp, double *s, int *e)
{
    if (x == 0.0) {
        *s = 0.0;
        *e = zexp;
        return;
    }
    decompose(x, emin, s, e);
}

/* The exponent of a zero factor of a format of minimum exponent emin under model m. */
static int zero_exp(const sim_model *m, int emin) { return m->zero_fmt_emin ? emin : SIM_ZERO_EXP; }

/* The term of the product x y (finite) times the optional scales: sets sig (exact) and returns the
 * exponent, the sum of the factors' exponents also when a factor is zero (then sig = 0): a zero factor
 * has exponent zx (x), zy (y), a zero scale SIM_ZERO_EXP. */
static long product_term(mpfr_ptr sig, double x, double y, int emin_x, int emin_y, int zx, int zy,
                         const double *sx, const double *sy)
{
    double s;
    int e;
    long ex = 0;
    factor(x, emin_x, zx, &s, &e);
    check_exact(mpfr_set_d(sig, s, MPFR_RNDN), "term: set");
    ex += e;
    factor(y, emin_y, zy, &s, &e);
    check_exact(mpfr_mul_d(sig, sig, s, MPFR_RNDN), "term: product inexact");
    ex += e;
    if (sx) {
        factor(*sx, -100000, SIM_ZERO_EXP, &s, &e);
        check_exact(mpfr_mul_d(sig, sig, s, MPFR_RNDN), "term: scale inexact");
        ex += e;
        factor(*sy, -100000, SIM_ZERO_EXP, &s, &e);
        check_exact(mpfr_mul_d(sig, sig, s, MPFR_RNDN), "term: scale inexact");
        ex += e;
    }
    if (mpfr_zero_p(sig)) mpfr_set_zero(sig, 1);
    return ex;
}

/* 6. NaN and infinities, from the exact sum: 1 and *out the special result, else 0. */
static int step_specials(int n, const double *a, const double *b, const double *sa, const double *sb, int block,
                         int p0, double c, double *out)
{
    int i, nan = 0, pinf = 0, ninf = 0;
    for (i = 0; i < n; i++) {
        double f[4];
        int nf = 2, j, zero = 0, inf = 0, neg = 0;
        f[0] = a[i];
        f[1] = b[i];
        if (sa) {
            f[2] = sa[(p0 + i) / block];
            f[3] = sb[(p0 + i) / block];
            nf = 4;
        }
        for (j = 0; j < nf; j++) {
            if (isnan(f[j])) nan = 1;
            if (isinf(f[j])) inf = 1;
            if (f[j] == 0.0) zero = 1;
            if (signbit(f[j])) neg ^= 1;
        }
        if (inf) {
            if (zero) nan = 1;
            else if (neg) ninf = 1;
            else pinf = 1;
        }
    }
    if (isnan(c)) nan = 1;
    if (isinf(c)) {
        if (c < 0) ninf = 1;
        else pinf = 1;
    }
    if (nan || (pinf && ninf)) *out = NAN;
    else if (pinf) *out = INFINITY;
    else if (ninf) *out = -INFINITY;
    else return 0;
    return 1;
}

/* One fused step: n products a[i] b[i] (global index p0 + i for the scales) and C = c, a value of the
 * accumulator. */
static double step_impl(const sim_model *m, eng_ws *w, int n, const double *a, const double *b,
                        const double *sa, const double *sb, int block, int p0, double c, int emin_a,
                        int emin_b)
{
    int i, nt = 0;
    long E, maxbits = 0;
    mpfr_prec_t prec;
    int emin_acc = fmt_emin(m->acc_fmt), emax_acc = fmt_emax(m->acc_fmt);
    double sp;

    if (step_specials(n, a, b, sa, sb, block, p0, c, &sp)) return sp;

    /* 1-2. The terms as (significand, exponent); C first. */
    if (c == 0.0) {
        mpfr_set_zero(w->sig[0], 1);
        w->ex[0] = SIM_ZERO_EXP;
    } else {
        double s;
        int e;
        decompose(c, emin_acc, &s, &e);
        check_exact(mpfr_set_d(w->sig[0], s, MPFR_RNDN), "C: set");
        w->ex[0] = e;
    }
    nt = 1;
    if (m->groups > 0) {
        int g0;
        for (g0 = 0; g0 < n; g0 += m->groups) {
            int g1 = n - g0 < m->groups ? n : g0 + m->groups;
            const double *sx = sa ? &sa[(p0 + g0) / block] : NULL, *sy = sb ? &sb[(p0 + g0) / block] : NULL;
            double s;
            int e;
            long ex = 0;
            mpfr_ptr g = w->sig[nt];
            mpfr_set_zero(g, 1);
            for (i = g0; i < g1; i++) {
                check_exact(mpfr_set_d(w->tmp, a[i], MPFR_RNDN), "group: set");
                check_exact(mpfr_mul_d(w->tmp, w->tmp, b[i], MPFR_RNDN), "group: product inexact");
                check_exact(mpfr_add(g, g, w->tmp, MPFR_RNDN), "group: sum inexact");
            }
            if (sx && sy) {
                /* the group's exponent is its scales' whatever its elements (a zero scale: -126) */
                factor(*sx, -100000, SIM_ZERO_EXP, &s, &e);
                check_exact(mpfr_mul_d(g, g, s, MPFR_RNDN), "group: scale inexact");
                ex += e;
                factor(*sy, -100000, SIM_ZERO_EXP, &s, &e);
                check_exact(mpfr_mul_d(g, g, s, MPFR_RNDN), "group: scale inexact");
                ex += e;
                if (mpfr_zero_p(g)) mpfr_set_zero(g, 1);
            }
            w->ex[nt] = ex;
            nt++;
        }
    } else {
        for (i = 0; i < n; i++) {
            const double *sx = sa ? &sa[(p0 + i) / block] : NULL, *sy = sb ? &sb[(p0 + i) / block] : NULL;
            w->ex[nt] = product_term(w->sig[nt], a[i], b[i], emin_a, emin_b, zero_exp(m, emin_a), zero_exp(m, emin_b),
                                     sx, sy);
            nt++;
        }
    }
    E = w->ex[0];
    for (i = 1; i < nt; i++)
        if (w->ex[i] > E) E = w->ex[i];

    /* 3. Each term to an integer multiple of 2^(E-F): t = trunc (or floor) of sig 2^(e - E + F). */
    for (i = 0; i < nt; i++) {
        mpfr_ptr t = w->sig[i];
        if (mpfr_zero_p(t)) continue;
        check_exact(mpfr_mul_2si(t, t, w->ex[i] - E + m->F, MPFR_RNDN), "term: scaling inexact");
        if (m->floor_terms)
            mpfr_floor(t, t); /* the integer part fits the precision: exact */
        else
            mpfr_trunc(t, t);
        if (!mpfr_zero_p(t) && (long)mpfr_get_exp(t) > maxbits) maxbits = (long)mpfr_get_exp(t);
    }

    /* 4. The exact sum: integers below 2^maxbits each, nt of them. */
    prec = (mpfr_prec_t)(maxbits + 2);
    for (i = 1; i < nt; i <<= 1) prec++;
    if (prec < 64) prec = 64;
    mpfr_set_prec(w->sum, prec);
    mpfr_set_zero(w->sum, 1);
    for (i = 0; i < nt; i++)
        if (!mpfr_zero_p(w->sig[i])) check_exact(mpfr_add(w->sum, w->sum, w->sig[i], MPFR_RNDN), "step: sum inexact");

    /* 5. One normalisation. */
    if (mpfr_zero_p(w->sum)) return 0.0;
    {
        unsigned sign, sticky;
        uint64_t sig;
        long exp;
        check_exact(mpfr_mul_2si(w->sum, w->sum, E - m->F, MPFR_RNDN), "step: scaling inexact");
        mp_top64(w->sum, &sign, &sig, &exp, &sticky);
        return round_custom(sign, sig, exp, sticky, m->out_p, emin_acc, emax_acc, m->out_round);
    }
}

/* x <- floor (down = 1) or trunc (0) of x at the quantum 2^q (exact in x's precision). */
static void quantize(mpfr_ptr x, long q, int down)
{
    if (mpfr_zero_p(x)) return;
    check_exact(mpfr_mul_2si(x, x, -q, MPFR_RNDN), "quantize: scaling inexact");
    if (down) mpfr_floor(x, x);
    else mpfr_trunc(x, x);
    check_exact(mpfr_mul_2si(x, x, q, MPFR_RNDN), "quantize: scaling inexact");
}

/*
 * CDNA3's step (floor_terms models; sim.h): the products (not C) truncated toward zero at F fraction
 * bits of their largest exponent (two_stage: the even and the odd products apart, each stage's sum then
 * floored at F bits of the larger stage exponent and the two added); that sum floored at F2 fraction
 * bits of E = max(its exponent, C's), C floored at F bits of E (two_stage: dropped below 2^(E-25)); the
 * exact total rounded once into the accumulator.  A finite product of magnitude >= 2^128 is an
 * infinity of its sign (both signs: NaN).
 */
#define PREC_AMD 4800
static double amd_step(const sim_model *m, int n, const double *a, const double *b, double c, int emin_a,
                       int emin_b)
{
    mpfr_t t, st[2], tot;
    long ep[2] = {LONG_MIN, LONG_MIN}, Em, E, ec;
    int i, g, ns = m->two_stage ? 2 : 1, pinf = 0, ninf = 0;
    int emin_acc = fmt_emin(m->acc_fmt), emax_acc = fmt_emax(m->acc_fmt);
    double sp;
    if (step_specials(n, a, b, NULL, NULL, 1, 0, c, &sp)) return sp;
    for (i = 0; i < n; i++) {
        double x = fabs(a[i]) * fabs(b[i]); /* only compared with 2^128: rounding cannot cross it wrongly */
        if (x >= 0x1p128) {
            if (signbit(a[i]) != signbit(b[i])) ninf = 1;
            else pinf = 1;
        }
    }
    if (pinf && ninf) return NAN;
    if (pinf) return INFINITY;
    if (ninf) return -INFINITY;
    mpfr_init2(t, PREC_AMD);
    mpfr_init2(tot, PREC_AMD);
    for (g = 0; g < 2; g++) {
        mpfr_init2(st[g], PREC_AMD);
        mpfr_set_zero(st[g], 1);
    }
    /* each stage's largest product exponent, then its truncated terms summed */
    for (i = 0; i < n; i++) {
        long e = product_term(t, a[i], b[i], emin_a, emin_b, zero_exp(m, emin_a), zero_exp(m, emin_b), NULL, NULL);
        g = ns == 2 ? i & 1 : 0;
        if (e > ep[g]) ep[g] = e;
    }
    for (i = 0; i < n; i++) {
        long e = product_term(t, a[i], b[i], emin_a, emin_b, zero_exp(m, emin_a), zero_exp(m, emin_b), NULL, NULL);
        g = ns == 2 ? i & 1 : 0;
        check_exact(mpfr_mul_2si(t, t, e, MPFR_RNDN), "amd: term inexact"); /* the product's value */
        quantize(t, ep[g] - m->F, 0);
        check_exact(mpfr_add(st[g], st[g], t, MPFR_RNDN), "amd: stage sum inexact");
    }
    Em = ep[0] > ep[1] ? ep[0] : ep[1];
    if (ns == 2) {
        quantize(st[0], Em - m->F, 1);
        quantize(st[1], Em - m->F, 1);
        check_exact(mpfr_add(st[0], st[0], st[1], MPFR_RNDN), "amd: stages inexact");
    }
    /* C's exponent: -126 for a zero, else as the accumulator's value */
    if (c == 0.0) {
        ec = SIM_ZERO_EXP;
    } else {
        double sc;
        int e;
        decompose(c, emin_acc, &sc, &e);
        ec = e;
    }
    if (n == 0) Em = ec;
    E = Em > ec ? Em : ec;
    if (m->F2 > 0) quantize(st[0], E - m->F2, 1);
    check_exact(mpfr_set_d(tot, c, MPFR_RNDN), "amd: C set");
    if (ns == 2 && ec < E - 25) mpfr_set_zero(tot, 1);
    else quantize(tot, E - m->F, 1);
    check_exact(mpfr_add(tot, tot, st[0], MPFR_RNDN), "amd: total inexact");
    for (g = 0; g < 2; g++) mpfr_clear(st[g]);
    mpfr_clear(t);
    if (mpfr_zero_p(tot)) {
        mpfr_clear(tot);
        return 0.0;
    }
    {
        unsigned sign, sticky;
        uint64_t sig;
        long exp;
        mp_top64(tot, &sign, &sig, &exp, &sticky);
        mpfr_clear(tot);
        return round_custom(sign, sig, exp, sticky, m->out_p, emin_acc, emax_acc, m->out_round);
    }
}

static void check_model(const sim_model *m)
{
    if (!m || m->k < 1 || m->F < 0 || m->out_p < 1 || m->out_p > 52 || m->promote < 0 || m->groups < 0 ||
        !fmt_is_float(m->acc_fmt) || (m->out_round != ER_RND_ZERO && m->out_round != ER_RND_NEAREST_EVEN))
        sim_die("bad model");
    if (m->promote > 0 && m->promote % m->k != 0) sim_die("promote must be a multiple of k");
}

/* Operands truncated to tf32 where the model says so (a copy), else the operands themselves. */
static const double *tf32_view(const sim_model *m, int n, const double *x, int fmt, double **owned)
{
    int i;
    double *y;
    *owned = NULL;
    if (!m->tf32_trunc || fmt != ER_FMT_F32 || n == 0) return x;
    y = malloc(sizeof *y * (size_t)n);
    if (!y) sim_die("out of memory");
    for (i = 0; i < n; i++) y[i] = isfinite(x[i]) ? rnd(ER_FMT_TF32, x[i], ER_RND_ZERO) : x[i];
    *owned = y;
    return y;
}

static double engine_acc(const sim_model *m, int n, const double *a, const double *b, const double *sa,
                         const double *sb, int block, double c, int in_fmt_a, int in_fmt_b)
{
    eng_ws w;
    double acc, *oa, *ob;
    int emin_a, emin_b, p0, q0;
    const double *ta, *tb;
    int step_terms = 1 + (m->groups > 0 ? (m->k + m->groups - 1) / m->groups : m->k);
    if (!fmt_is_float(in_fmt_a) || !fmt_is_float(in_fmt_b)) sim_die("input formats must be float formats");
    if ((sa || sb) && (!sa || !sb || block < 1)) sim_die("scales need both arrays and block >= 1");
    emin_a = fmt_emin(in_fmt_a);
    emin_b = fmt_emin(in_fmt_b);
    ta = tf32_view(m, n, a, in_fmt_a, &oa);
    tb = tf32_view(m, n, b, in_fmt_b, &ob);
    ws_init(&w, step_terms, m->groups > 0);
    acc = rnd(m->acc_fmt, c, ER_RND_NEAREST_EVEN);
    if (m->promote == 0) {
        for (p0 = 0; p0 < n; p0 += m->k) {
            int kk = n - p0 < m->k ? n - p0 : m->k;
            acc = m->floor_terms ? amd_step(m, kk, ta + p0, tb + p0, acc, emin_a, emin_b)
                                 : step_impl(m, &w, kk, ta + p0, tb + p0, sa, sb, block, p0, acc, emin_a, emin_b);
        }
    } else {
        double facc = rnd(ER_FMT_F32, c, ER_RND_NEAREST_EVEN);
        for (q0 = 0; q0 < n; q0 += m->promote) {
            int q1 = n - q0 < m->promote ? n : q0 + m->promote;
            double part = 0.0;
            for (p0 = q0; p0 < q1; p0 += m->k) {
                int kk = q1 - p0 < m->k ? q1 - p0 : m->k;
                part = m->floor_terms ? amd_step(m, kk, ta + p0, tb + p0, part, emin_a, emin_b)
                                      : step_impl(m, &w, kk, ta + p0, tb + p0, sa, sb, block, p0, part, emin_a, emin_b);
            }
            facc = c_add_ftz(ER_FMT_F32, facc, part, 0);
        }
        acc = facc;
    }
    ws_clear(&w);
    free(oa);
    free(ob);
    return acc;
}

double sim_engine_scaled(const sim_model *m, int n, const double *a, const double *b,
                         const double *scale_a, const double *scale_b, int block, double c,
                         int in_fmt_a, int in_fmt_b, int out_fmt, int out_dir)
{
    check_model(m);
    check_args(n, a, b, m->acc_fmt, out_fmt, out_dir);
    if (!scale_a || !scale_b) scale_a = scale_b = NULL;
    return rnd(out_fmt, engine_acc(m, n, a, b, scale_a, scale_b, block, c, in_fmt_a, in_fmt_b), out_dir);
}

double sim_engine(const sim_model *m, int n, const double *a, const double *b, double c, int in_fmt_a,
                  int in_fmt_b, int out_fmt, int out_dir)
{
    return sim_engine_scaled(m, n, a, b, NULL, NULL, 1, c, in_fmt_a, in_fmt_b, out_fmt, out_dir);
}

double sim_engine_step(const sim_model *m, int n, const double *a, const double *b,
                       const double *scale_a, const double *scale_b, int block, double c,
                       int in_fmt_a, int in_fmt_b)
{
    eng_ws w;
    double r, *oa, *ob;
    const double *ta, *tb;
    sim_model one;
    check_model(m);
    check_args(n, a, b, m->acc_fmt, m->acc_fmt, ER_RND_NEAREST_EVEN);
    if (!fmt_is_float(in_fmt_a) || !fmt_is_float(in_fmt_b)) sim_die("input formats must be float formats");
    if (!scale_a || !scale_b) scale_a = scale_b = NULL;
    if (scale_a && block < 1) sim_die("block must be >= 1");
    one = *m;
    ta = tf32_view(&one, n, a, in_fmt_a, &oa);
    tb = tf32_view(&one, n, b, in_fmt_b, &ob);
    ws_init(&w, 1 + (m->groups > 0 ? (n + m->groups - 1) / m->groups : n), m->groups > 0);
    if (m->floor_terms)
        r = amd_step(m, n, ta, tb, rnd(m->acc_fmt, c, ER_RND_NEAREST_EVEN), fmt_emin(in_fmt_a), fmt_emin(in_fmt_b));
    else
        r = step_impl(m, &w, n, ta, tb, scale_a, scale_b, block, 0, rnd(m->acc_fmt, c, ER_RND_NEAREST_EVEN),
                      fmt_emin(in_fmt_a), fmt_emin(in_fmt_b));
    ws_clear(&w);
    free(oa);
    free(ob);
    return r;
}
