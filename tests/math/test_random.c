/*
 * test_random.c (math_random): seeded random binary64 (and f32, tf32) arguments through every function
 * of the math library, in every direction, against the MPFR oracle (mo_oracle.c) bit for bit; the
 * binary64 layer's functions (er_math_exp, ...) against the same oracle to nearest; and constructed
 * hard cases: exact midpoints (products and powers of 27- and 18-bit significands), results a hair away
 * from a binary64 number (exp, log, sin, tanh of tiny arguments and near 1), exact results (exp2 and
 * log2 at powers of two), and the overflow and underflow thresholds.
 * EXACTREF_MATH_N sets the number of random binary64 arguments (default 1000000, spread over the 22
 * functions and fma); EXACTREF_SEED the seed (printed).
 */
#include <math.h>
#include <string.h>

#include "mt_common.h"

static uint64_t st;
static long n_args;

static uint64_t rnd(void) { return er_test_rand(&st); }
static double unif(void) { return (double)(rnd() >> 11) * 0x1p-53; }
static uint64_t dbits(double x)
{
    uint64_t b;
    memcpy(&b, &x, sizeof b);
    return b;
}
static double bitsd(uint64_t b)
{
    double x;
    memcpy(&x, &b, sizeof x);
    return x;
}

/* A random binary64 argument for op: a quarter uniform patterns (NaN, inf, subnormals, huge), the rest
 * log-uniform magnitudes in the function's interesting range, either sign. */
static double arg_for(int op, int which)
{
    uint64_t r = rnd();
    double s = (r & 1) ? -1.0 : 1.0, m = 1.0 + unif();
    int k;
    if ((r >> 1) % 4 == 0)
        return bitsd(rnd());
    switch (op) {
    case ER_MATH_EXP: case ER_MATH_SINH: case ER_MATH_COSH:
        return s * unif() * 760.0;
    case ER_MATH_EXP2:
        return s * unif() * 1100.0;
    case ER_MATH_TANH:
        k = (int)(rnd() % 70) - 60;
        return s * ldexp(m, k);
    case ER_MATH_SIN: case ER_MATH_COS: case ER_MATH_TAN:
        k = (int)(rnd() % 120) - 60;
        return s * ldexp(m, k);
    case ER_MATH_POW:
        if (which == 0)
            return (r >> 3) & 1 ? ldexp(m, (int)(rnd() % 40) - 20) : s * floor(unif() * 20.0);
        return (r >> 4) & 1 ? s * floor(unif() * 200.0) : s * unif() * 300.0;
    default:
        k = (int)(rnd() % 2100) - 1075;
        return ((op == ER_MATH_LOG || op == ER_MATH_LOG2 || op == ER_MATH_SQRT || op == ER_MATH_RSQRT) &&
                (r >> 5) % 8 != 0) ? ldexp(m, k) : s * ldexp(m, k);
    }
}

static int rdir(void) { return (int)(rnd() % ER_RND_COUNT); }

/* The binary64 layer's function of op, to nearest. */
static double layer(int op, double x, double y)
{
    switch (op) {
    case ER_MATH_SQRT: return er_math_sqrt(x);
    case ER_MATH_RSQRT: return er_math_rsqrt(x);
    case ER_MATH_EXP: return er_math_exp(x);
    case ER_MATH_EXP2: return er_math_exp2(x);
    case ER_MATH_LOG: return er_math_log(x);
    case ER_MATH_LOG2: return er_math_log2(x);
    case ER_MATH_TANH: return er_math_tanh(x);
    case ER_MATH_SINH: return er_math_sinh(x);
    case ER_MATH_COSH: return er_math_cosh(x);
    case ER_MATH_SIN: return er_math_sin(x);
    case ER_MATH_COS: return er_math_cos(x);
    case ER_MATH_TAN: return er_math_tan(x);
    case ER_MATH_ATAN: return er_math_atan(x);
    case ER_MATH_FLOOR: return er_math_floor(x);
    case ER_MATH_CEIL: return er_math_ceil(x);
    case ER_MATH_ADD: return er_math_add(x, y, ER_RND_NEAREST_EVEN);
    case ER_MATH_SUB: return er_math_add(x, -y, ER_RND_NEAREST_EVEN);
    case ER_MATH_MUL: return er_math_mul(x, y, ER_RND_NEAREST_EVEN);
    case ER_MATH_DIV: return er_math_div(x, y, ER_RND_NEAREST_EVEN);
    case ER_MATH_FMOD: return er_math_fmod(x, y);
    case ER_MATH_ATAN2: return er_math_atan2(x, y);
    case ER_MATH_POW: return er_math_pow(x, y);
    }
    return 0.0;
}

static long layer_fails;

static void check_layer(int op, double x, double y)
{
    uint64_t in[2];
    mo_exp e;
    double r = layer(op, x, y);
    in[0] = dbits(x);
    in[1] = dbits(y);
    if (op == ER_MATH_SUB && er_math_is_nan(y))
        return; /* x + (-y): the NaN's sign is flipped on the way */
    mo_expect(op, of_get(ER_FMT_F64), in, er_math_op_arity((er_math_op)op), ER_RND_NEAREST_EVEN, &e);
    mo_checks++;
    if (dbits(r) != e.bits && layer_fails++ < 20)
        printf("layer %s(%a, %a) = %a, expected %a\n", mo_op_name(op), x, y, r, bitsd(e.bits));
}

START_TEST(random_f64)
{
    int op, nops = ER_MATH_OP_COUNT + 1;
    long i, per = n_args / nops;
    uint64_t in[3];
    mo_init();
    mo_fails = mo_checks = layer_fails = 0;
    for (op = 0; op < ER_MATH_OP_COUNT; op++) {
        int ar = er_math_op_arity((er_math_op)op);
        for (i = 0; i < per; i++) {
            double x = arg_for(op, 0), y = arg_for(op, 1);
            in[0] = dbits(x);
            in[1] = dbits(y);
            mo_check("random f64", op, ER_FMT_F64, in, ar, rdir());
            if (i % 8 == 0)
                check_layer(op, x, y);
            if (i % 8 == 1 && (op == ER_MATH_ADD || op == ER_MATH_MUL || op == ER_MATH_DIV)) {
                /* The layer's directed operations. */
                int dir = rdir();
                mo_exp e;
                double r = op == ER_MATH_ADD ? er_math_add(x, y, dir)
                         : op == ER_MATH_MUL ? er_math_mul(x, y, dir) : er_math_div(x, y, dir);
                mo_expect(op, of_get(ER_FMT_F64), in, 2, dir, &e);
                mo_checks++;
                if (dbits(r) != e.bits && layer_fails++ < 20)
                    printf("layer %s(%a, %a) %s = %a, expected %a\n", mo_op_name(op), x, y, of_dir_name(dir), r,
                           bitsd(e.bits));
            }
        }
    }
    for (i = 0; i < per; i++) { /* fma: random patterns, and products cancelled by c */
        double a = arg_for(ER_MATH_MUL, 0), b = arg_for(ER_MATH_MUL, 1), c;
        c = (i & 1) ? -a * b * (1.0 + (double)(int)(rnd() % 9 - 4) * 0x1p-52) : arg_for(ER_MATH_ADD, 0);
        in[0] = dbits(a);
        in[1] = dbits(b);
        in[2] = dbits(c);
        mo_check("random f64", MO_FMA, ER_FMT_F64, in, 3, rdir());
    }
    printf("math_random f64: %ld checks (%ld arguments), %ld + %ld disagreements\n", mo_checks,
           per * nops, mo_fails, layer_fails);
    ck_assert_msg(mo_fails == 0 && layer_fails == 0, "%ld + %ld disagreements", mo_fails, layer_fails);
}
END_TEST

/* f32 and tf32: random arguments of the format (its own patterns), every function. */
START_TEST(random_f32)
{
    static const int fm[2] = {ER_FMT_F32, ER_FMT_TF32};
    int f, op;
    long i, per = n_args / 40 + 1;
    uint64_t in[3];
    mo_init();
    mo_fails = mo_checks = 0;
    for (f = 0; f < 2; f++) {
        uint64_t mask = fm[f] == ER_FMT_TF32 ? UINT64_C(0xFFFFE000) : UINT64_C(0xFFFFFFFF);
        for (op = 0; op < ER_MATH_OP_COUNT; op++)
            for (i = 0; i < per; i++) {
                in[0] = rnd() & mask;
                in[1] = rnd() & mask;
                mo_check("random f32", op, fm[f], in, er_math_op_arity((er_math_op)op), rdir());
            }
        for (i = 0; i < per; i++) {
            in[0] = rnd() & mask;
            in[1] = rnd() & mask;
            in[2] = rnd() & mask;
            mo_check("random f32", MO_FMA, fm[f], in, 3, rdir());
        }
    }
    printf("math_random f32/tf32: %ld checks, %ld disagreements\n", mo_checks, mo_fails);
    ck_assert_msg(mo_fails == 0, "%ld disagreements", mo_fails);
}
END_TEST

/* Every direction on one binary64 input. */
static void all_dirs(int op, double x, double y, double c)
{
    uint64_t in[3];
    int dir, n = op == MO_FMA ? 3 : er_math_op_arity((er_math_op)op);
    in[0] = dbits(x);
    in[1] = dbits(y);
    in[2] = dbits(c);
    for (dir = 0; dir < ER_RND_COUNT; dir++)
        mo_check("hard", op, ER_FMT_F64, in, n, dir);
}

/* A random significand of `bits` bits (the top one set), as a double in [1, 2). */
static double sig_bits(int bits)
{
    uint64_t m = (rnd() >> (64 - bits)) | (UINT64_C(1) << (bits - 1)) | 1u;
    return ldexp((double)m, 1 - bits);
}

START_TEST(hard_cases)
{
    static const double thresholds[] = {
        709.782712893384, 709.7827128933840, 0x1.62e42fefa39efp+9, 0x1.62e42fefa39f0p+9, -745.1332191019411,
        -0x1.74910d52d3051p+9, -0x1.74910d52d3052p+9, -708.3964185322641, -0x1.6232bdd7abcd2p+9,
        710.4758600739439, 0x1.633ce8fb9f87dp+9, 0x1.633ce8fb9f87ep+9, 1024.0, 1023.9999999999999,
        -1074.0, -1075.0, -1074.5, -1022.0, -1022.5, 0x1p-1074, 0x1p-1022, 0x1.fffffffffffffp+1023};
    static const int ops1[] = {ER_MATH_EXP, ER_MATH_EXP2, ER_MATH_SINH, ER_MATH_COSH, ER_MATH_TANH,
                               ER_MATH_SIN, ER_MATH_TAN, ER_MATH_ATAN, ER_MATH_LOG, ER_MATH_LOG2,
                               ER_MATH_SQRT, ER_MATH_RSQRT, ER_MATH_COS};
    size_t i, j;
    int k;
    mo_init();
    mo_fails = mo_checks = 0;
    /* Thresholds and range ends, both signs, every unary function. */
    for (i = 0; i < sizeof thresholds / sizeof thresholds[0]; i++)
        for (j = 0; j < sizeof ops1 / sizeof ops1[0]; j++) {
            all_dirs(ops1[j], thresholds[i], 0.0, 0.0);
            all_dirs(ops1[j], -thresholds[i], 0.0, 0.0);
            all_dirs(ops1[j], er_math_succ(thresholds[i]), 0.0, 0.0);
            all_dirs(ops1[j], er_math_pred(thresholds[i]), 0.0, 0.0);
        }
    /* Results a hair from a binary64 number: tiny arguments, arguments next to 1 and to 0. */
    for (k = -1074; k <= -20; k += 3) {
        double x = ldexp(1.0 + unif(), k);
        for (j = 0; j < sizeof ops1 / sizeof ops1[0]; j++) {
            all_dirs(ops1[j], x, 0.0, 0.0);
            all_dirs(ops1[j], -x, 0.0, 0.0);
        }
        if (k > -1022) {
            all_dirs(ER_MATH_LOG, 1.0 + ldexp(1.0, k < -52 ? -52 : k), 0.0, 0.0);
            all_dirs(ER_MATH_LOG2, 1.0 - ldexp(1.0, k < -53 ? -53 : k), 0.0, 0.0);
        }
        all_dirs(ER_MATH_POW, 1.0 + 0x1p-52, ldexp(1.0, -k > 1023 ? 1023 : -k), 0.0);
        all_dirs(ER_MATH_ADD, 1.0, x, 0.0);
        all_dirs(ER_MATH_ATAN2, x, 1.0, 0.0);
        all_dirs(ER_MATH_ATAN2, 1.0, x, 0.0);
    }
    /* Exact results: powers of two through exp2, log2, pow, sqrt of squares. */
    for (k = -1080; k <= 1030; k++) {
        all_dirs(ER_MATH_EXP2, (double)k, 0.0, 0.0);
        if (k >= -1074 && k <= 1023) {
            all_dirs(ER_MATH_LOG2, ldexp(1.0, k), 0.0, 0.0);
            all_dirs(ER_MATH_POW, 2.0, (double)k, 0.0);
            all_dirs(ER_MATH_POW, 0.5, (double)-k, 0.0);
        }
    }
    for (i = 0; i < 2000; i++) {
        /* Exact midpoints: 27-bit by 27-bit products (54 bits), 18-bit cubes, squares of 27 bits. */
        double a = sig_bits(27), b = sig_bits(27), c = sig_bits(18), e = ldexp(1.0, (int)(rnd() % 200) - 100);
        all_dirs(ER_MATH_MUL, a * e, -b, 0.0);
        all_dirs(ER_MATH_POW, a * e, 2.0, 0.0);
        all_dirs(ER_MATH_POW, -c, 3.0, 0.0);
        all_dirs(MO_FMA, a, b * e, ldexp(1.0, (int)(rnd() % 120) - 60));
        all_dirs(ER_MATH_SQRT, (a * a) * (e * e), 0.0, 0.0);
        all_dirs(ER_MATH_ADD, a * e, ldexp(e, -53), 0.0);
        /* Midpoints in the subnormal range: products landing below 2^-1022. */
        all_dirs(ER_MATH_MUL, a * 0x1p-540, b * 0x1p-520, 0.0);
        all_dirs(ER_MATH_FMOD, a * e, b, 0.0);
        all_dirs(ER_MATH_DIV, a * e, b, 0.0);
        all_dirs(ER_MATH_SUB, a, a, 0.0); /* exact zero: -0 toward -inf only */
        all_dirs(MO_FMA, a, b, -(a * b));
        k = 27 + (int)(i % 26); /* a b = 1 - 2^-2k: c + a b a hair below the midpoint c + 1 */
        all_dirs(MO_FMA, 1.0 + ldexp(1.0, -k), 1.0 - ldexp(1.0, -k), 0x1p53 + 2.0 * (double)(i % 64));
    }
    printf("math_random hard cases: %ld checks, %ld disagreements\n", mo_checks, mo_fails);
    ck_assert_msg(mo_fails == 0, "%ld disagreements", mo_fails);
}
END_TEST

/*
 * Near the boundaries: random arguments kept only when the function's value, computed by MPFR at 64
 * bits, lies within 2^-8 of an ulp of a rounding boundary of the target (a representable number or a
 * midpoint: the bits below the target's precision plus one are all equal), then checked in every
 * direction.  These are the arguments where a wrong sticky bit, a lost guard bit or a double rounding
 * would show (about one candidate in eight is kept: exact and tiny-argument results qualify often).
 */
START_TEST(near_boundaries)
{
    static const int ops[] = {ER_MATH_EXP, ER_MATH_EXP2, ER_MATH_LOG, ER_MATH_LOG2, ER_MATH_TANH, ER_MATH_SINH,
                              ER_MATH_COSH, ER_MATH_SIN, ER_MATH_COS, ER_MATH_TAN, ER_MATH_ATAN, ER_MATH_SQRT,
                              ER_MATH_RSQRT, ER_MATH_POW, ER_MATH_ATAN2, ER_MATH_DIV};
    static const int fm[2] = {ER_FMT_F64, ER_FMT_F32};
    mpfr_t a, b, r;
    size_t j;
    int f, dir;
    long i, kept = 0, tries = n_args / 60 + 1;
    mo_init();
    mo_fails = mo_checks = 0;
    mpfr_inits2(64, a, b, r, (mpfr_ptr)0);
    for (f = 0; f < 2; f++) {
        int p = of_get(fm[f])->prec;
        for (j = 0; j < sizeof ops / sizeof ops[0]; j++) {
            int op = ops[j], ar = er_math_op_arity((er_math_op)op);
            for (i = 0; i < tries; i++) {
                double x = arg_for(op, 0), y = arg_for(op, 1);
                uint64_t in[2], low, sig;
                if (fm[f] == ER_FMT_F32) {
                    x = (double)(float)x;
                    y = (double)(float)y;
                }
                if (!isfinite(x) || !isfinite(y) || (fm[f] == ER_FMT_F32 && (fabs(x) > 3e38 || fabs(y) > 3e38)))
                    continue;
                mpfr_set_d(a, x, MPFR_RNDN);
                mpfr_set_d(b, y, MPFR_RNDN);
                switch (op) {
                case ER_MATH_EXP: mpfr_exp(r, a, MPFR_RNDZ); break;
                case ER_MATH_EXP2: mpfr_exp2(r, a, MPFR_RNDZ); break;
                case ER_MATH_LOG: mpfr_log(r, a, MPFR_RNDZ); break;
                case ER_MATH_LOG2: mpfr_log2(r, a, MPFR_RNDZ); break;
                case ER_MATH_TANH: mpfr_tanh(r, a, MPFR_RNDZ); break;
                case ER_MATH_SINH: mpfr_sinh(r, a, MPFR_RNDZ); break;
                case ER_MATH_COSH: mpfr_cosh(r, a, MPFR_RNDZ); break;
                case ER_MATH_SIN: mpfr_sin(r, a, MPFR_RNDZ); break;
                case ER_MATH_COS: mpfr_cos(r, a, MPFR_RNDZ); break;
                case ER_MATH_TAN: mpfr_tan(r, a, MPFR_RNDZ); break;
                case ER_MATH_ATAN: mpfr_atan(r, a, MPFR_RNDZ); break;
                case ER_MATH_SQRT: mpfr_sqrt(r, a, MPFR_RNDZ); break;
                case ER_MATH_RSQRT: mpfr_rec_sqrt(r, a, MPFR_RNDZ); break;
                case ER_MATH_POW: mpfr_pow(r, a, b, MPFR_RNDZ); break;
                case ER_MATH_ATAN2: mpfr_atan2(r, a, b, MPFR_RNDZ); break;
                default: mpfr_div(r, a, b, MPFR_RNDZ); break;
                }
                if (!mpfr_regular_p(r))
                    continue;
                /* The 64-bit significand; its bits below position p + 1 (the half-ulp bit of a normal
                 * result) within 2^-8 ulp of all zeros or all ones: next to a boundary. */
                mpfr_mul_2si(r, r, 64 - (long)mpfr_get_exp(r), MPFR_RNDN);
                mpfr_abs(r, r, MPFR_RNDN);
                sig = (uint64_t)mpfr_get_uj(r, MPFR_RNDN);
                low = sig & ((UINT64_C(1) << (63 - p)) - 1u);
                if ((low >> (63 - p - 8)) != 0 && (low >> (63 - p - 8)) != 0xFF)
                    continue;
                kept++;
                if (fm[f] == ER_FMT_F32) {
                    float xf = (float)x, yf = (float)y;
                    uint32_t ux, uy;
                    memcpy(&ux, &xf, 4);
                    memcpy(&uy, &yf, 4);
                    in[0] = ux;
                    in[1] = uy;
                } else {
                    in[0] = dbits(x);
                    in[1] = dbits(y);
                }
                for (dir = 0; dir < ER_RND_COUNT; dir++)
                    mo_check("near boundary", op, fm[f], in, ar, dir);
            }
        }
    }
    mpfr_clears(a, b, r, (mpfr_ptr)0);
    printf("math_random near boundaries: %ld arguments kept, %ld checks, %ld disagreements\n", kept, mo_checks,
           mo_fails);
    ck_assert_msg((tries < 1000 || kept > 100) && mo_fails == 0, "%ld kept, %ld disagreements", kept, mo_fails);
}
END_TEST

/* er_math_fma_f64 (Boldo and Melquiond inside its range, the exact path outside) against MPFR. */
START_TEST(fma_f64)
{
    long i, n = n_args / 10 + 1, fails = 0, inrange = 0;
    uint64_t in[3];
    mo_exp e;
    mo_init();
    for (i = 0; i < n; i++) {
        double a, b, c, r;
        int ka = (int)(rnd() % 900) - 450, kb = (int)(rnd() % 900) - 450;
        a = ((rnd() & 1) ? -1.0 : 1.0) * ldexp(1.0 + unif(), ka);
        b = ((rnd() & 1) ? -1.0 : 1.0) * ldexp(1.0 + unif(), kb);
        switch (i % 6) {
        case 5: {
            /* Where rounding tl + ul to nearest would double-round: a b = 1 - 2^-2k exactly, so uh = 1
             * and ul = -2^-2k; c = 2^53 + 2m makes c + 1 a tie, broken by ul alone. */
            int kk = 27 + (int)(rnd() % 26), sc = (int)(rnd() % 800) - 400;
            double sg = (rnd() & 1) ? -1.0 : 1.0;
            a = sg * ldexp(1.0 + ldexp(1.0, -kk), sc / 2);
            b = sg * ldexp(1.0 - ldexp(1.0, -kk), sc - sc / 2);
            c = ldexp(0x1p53 + 2.0 * (double)(rnd() % 1000), sc);
            if (rnd() & 1) {
                a = -a;
                c = -c;
            }
            break;
        }
        case 0: c = -(a * b); break;                                        /* cancellation */
        case 1: c = -(a * b) * (1.0 + (double)(int)(rnd() % 17 - 8) * 0x1p-52); break;
        case 2: c = ldexp(1.0 + unif(), ka + kb + (int)(rnd() % 240) - 120); break;
        case 3: c = bitsd(rnd()); break;                                   /* anything, out of range too */
        default: a = bitsd(rnd()); b = bitsd(rnd()); c = bitsd(rnd()); break;
        }
        if (fabs(a) < 0x1p500 && fabs(b) < 0x1p500 && fabs(c) < 0x1p1000 && fabs(a * b) >= 0x1p-900 &&
            fabs(a * b) <= 0x1p900)
            inrange++;
        r = er_math_fma_f64(a, b, c);
        in[0] = dbits(a);
        in[1] = dbits(b);
        in[2] = dbits(c);
        mo_expect(MO_FMA, of_get(ER_FMT_F64), in, 3, ER_RND_NEAREST_EVEN, &e);
        if (dbits(r) != e.bits && fails++ < 20)
            printf("fma_f64(%a, %a, %a) = %a, expected %a\n", a, b, c, r, bitsd(e.bits));
    }
    printf("math_random fma_f64: %ld cases (%ld in Boldo-Melquiond's range), %ld disagreements\n", n, inrange,
           fails);
    ck_assert_msg(fails == 0, "%ld disagreements", fails);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("math_random");
    TCase *tc = tcase_create("random");
    st = er_test_seed("math_random");
    n_args = mt_env_long("EXACTREF_MATH_N", 1000000);
    printf("math_random: %ld random binary64 arguments (set EXACTREF_MATH_N to change)\n", n_args);
    tcase_set_timeout(tc, 0);
    tcase_add_test(tc, random_f64);
    tcase_add_test(tc, random_f32);
    tcase_add_test(tc, hard_cases);
    tcase_add_test(tc, near_boundaries);
    tcase_add_test(tc, fma_f64);
    suite_add_tcase(s, tc);
    return mt_run_suite(s);
}
