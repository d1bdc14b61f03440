/*
 * test_slices.c (engine_slices): the host emulation of the GPU route's exact integer slices
 * (cpu/cpu_slices.c over include/exactref/core/er_slices.h) against er_mma on the CPU, bit for bit, for
 * every output format, every rounding direction and the options (saturation, flush of inputs and
 * outputs), with and without C (each kind of data has a case with all 216 combinations; the others run
 * a fixed fifth of them).  er_mma itself is checked against MPFR (tests/engine/test_*.c).
 *
 * Data (seeded: EXACTREF_SEED, printed):
 *  - random: uniform random finite patterns of f8E4M3FN, f8E5M2 and the mixed pairs, C of f32, bf16, f16;
 *  - specials: the same with NaN and infinity patterns in a few rows of A, columns of B and elements of
 *    C (those go to the element-wise exact path), and C = +-0 over sums that cancel;
 *  - max: every element +-max finite (the slices' largest digits), signs random;
 *  - cancel: the second half of each row the negation of the first, plus a few small terms (exact zeros
 *    and results far below the terms);
 *  - subnormal: only subnormal and zero patterns (the grid's lowest digits; ER_OPT_FTZ_IN flushes them);
 *  - bigk: m = n = 2 with k = 2^17 + 5 and 2^18 + 3 (two and three chunks of int32 sums), max magnitudes
 *    of one sign and random patterns;
 *  - batch: a batch of 3 with B broadcast and read through a transposed view;
 *  - fp6/fp4: f6E3M2FN x f4E2M1FN (one and two slices);
 *  - scaled: bf16 x bf16 (with and without C), f16 x f8E4M3FN, f8E5M2 x bf16: values within ten binades
 *    (a grid per row / column holds them in 21 bits), two rows of A and a column of B spanning 41 bits
 *    (no grid: the exact path), a column of zeros of both signs and one subnormal.
 * Every case also checks that the slices decided the elements they should (so the test cannot pass by
 * leaving everything to the exact path): at most the elements with a NaN or an infinity in their row,
 * column or C, or whose D is a zero, went to the exact path.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "../../cpu/cpu_slices.h"
#include "er_front.h"
#include "er_test.h"
#include "exactref/exactref.h"

static const int out_fmts[] = {ER_FMT_F64, ER_FMT_F32, ER_FMT_TF32, ER_FMT_F16, ER_FMT_BF16,
                               ER_FMT_F8E4M3FN, ER_FMT_F8E5M2, ER_FMT_F6E2M3FN, ER_FMT_F4E2M1FN};
static const unsigned opt_sets[] = {0u, ER_OPT_SATURATE, ER_OPT_FTZ_IN | ER_OPT_FTZ_OUT, ER_OPT_FTZ_IN};

typedef struct {
    const char *name;
    int fa, fb, fc; /* fc -1: no C */
    int64_t batch, m, n, k;
    int a3, bt;     /* A 3-D (batch), B given through a transposed view of an n x k array */
    uint8_t *A, *B; /* their formats' storage sizes per element */
    uint8_t *C;     /* fc's storage size per element */
    int all_cfg;    /* 1: every output, direction and option set; 0: a fifth of them; N > 1: one in N */
    uint64_t wide_rows, wide_cols; /* rows of A / columns of B (< 64) that do not fit a scaled grid */
} tcase;

static int bytes_of(int f)
{
    er_format_info fi;
    er_format_get_info(f, &fi);
    return fi.storage_bytes;
}

static er_val er_decode_pattern(int f, uint64_t bits)
{
    er_val v;
    memset(&v, 0, sizeof v);
    er_decode_bits(f, bits, &v);
    return v;
}

/* A random finite pattern of an 8-bit (or narrower) float format. */
static uint8_t rnd_finite(int f, uint64_t *rng)
{
    for (;;) {
        uint8_t x = (uint8_t)er_test_rand(rng);
        er_format_info fi;
        er_format_get_info(f, &fi);
        if (fi.width < 8) x &= (uint8_t)((1u << fi.width) - 1u);
        if (f == ER_FMT_F8E4M3FN && (x & 0x7F) == 0x7F) continue;
        if (f == ER_FMT_F8E5M2 && (x & 0x7C) == 0x7C) continue;
        return x;
    }
}

static uint8_t max_of(int f) { return f == ER_FMT_F8E4M3FN ? 0x7E : f == ER_FMT_F8E5M2 ? 0x7B : 0x1F; }

static void setup(tcase *T)
{
    int64_t na = (T->a3 ? T->batch : 1) * T->m * T->k, nb = T->n * T->k;
    T->A = (uint8_t *)calloc((size_t)(na ? na : 1), (size_t)bytes_of(T->fa));
    T->B = (uint8_t *)calloc((size_t)(nb ? nb : 1), (size_t)bytes_of(T->fb));
    T->C = T->fc >= 0 ? (uint8_t *)calloc((size_t)(T->batch * T->m * T->n), (size_t)bytes_of(T->fc)) : NULL;
}

static void teardown(tcase *T)
{
    free(T->A);
    free(T->B);
    free(T->C);
}

/* B's element (p, j), in whichever layout the case uses (one-byte formats). */
static uint8_t *belem(tcase *T, int64_t p, int64_t j) { return T->bt ? &T->B[j * T->k + p] : &T->B[p * T->n + j]; }

/* Element idx of a packed array of format f. */
static uint64_t getx(const uint8_t *x, int f, int64_t idx)
{
    uint64_t v = 0;
    memcpy(&v, x + idx * bytes_of(f), (size_t)bytes_of(f));
    return v;
}

static void setx(uint8_t *x, int f, int64_t idx, uint64_t v) { memcpy(x + idx * bytes_of(f), &v, (size_t)bytes_of(f)); }

/* One configuration: er_mma (CPU) and the slices, compared byte for byte; returns mismatches. */
static long sliced_total, exact_total; /* over a case's configurations (printed) */

static long run_cfg(tcase *T, int fd, int dir, unsigned opts, int threads)
{
    int64_t el = T->batch * T->m * T->n;
    int db = bytes_of(fd);
    uint8_t *d1 = (uint8_t *)calloc((size_t)el, (size_t)db), *d2 = (uint8_t *)calloc((size_t)el, (size_t)db);
    er_tensor a = T->a3 ? er_tensor_3d(T->fa, T->batch, T->m, T->k, T->A) : er_tensor_2d(T->fa, T->m, T->k, T->A);
    er_tensor b = T->bt ? er_tensor_transpose(er_tensor_2d(T->fb, T->n, T->k, T->B)) : er_tensor_2d(T->fb, T->k, T->n, T->B);
    er_tensor c, d = er_tensor_3d(fd, T->batch, T->m, T->n, d1), d_sl = er_tensor_3d(fd, T->batch, T->m, T->n, d2);
    er_mma_args args;
    er_problem P;
    er_slices_stats st;
    char msg[256] = "";
    long bad = 0, zeros = 0, specials = 0;
    er_mma_args_init(&args);
    if (T->batch == 1 && !T->a3) {
        d = er_tensor_2d(fd, T->m, T->n, d1);
        d_sl = er_tensor_2d(fd, T->m, T->n, d2);
    }
    if (T->fc >= 0) {
        c = T->batch > 1 ? er_tensor_3d(T->fc, T->batch, T->m, T->n, T->C) : er_tensor_2d(T->fc, T->m, T->n, T->C);
        args.c = &c;
    }
    args.a = &a;
    args.b = &b;
    args.d = &d;
    args.rounding = dir;
    args.opts = opts;
    args.threads = threads;
    args.backend = ER_BACKEND_CPU;
    args.msg = msg;
    args.msg_size = sizeof msg;
    ck_assert_msg(er_mma(&args) == ER_OK, "%s: er_mma: %s", T->name, msg);
    ck_assert_msg(er_problem_validate(&P, &args, &d_sl, NULL, NULL, NULL, msg, sizeof msg) == ER_OK, "%s: validate: %s",
                  T->name, msg);
    ck_assert_msg(er_cpu_slices_mma(&P, &st) == ER_OK, "%s: slices: %s", T->name, msg);
    ck_assert_int_eq(st.elements, el);
    for (int64_t x = 0; x < el; x++) {
        uint64_t v1 = 0, v2 = 0;
        memcpy(&v1, d1 + x * db, (size_t)db);
        memcpy(&v2, d2 + x * db, (size_t)db);
        if (v1 != v2 && bad++ < 5)
            fprintf(stderr, "%s: d %s dir %d opts 0x%x element %lld: er_mma 0x%llx, slices 0x%llx\n", T->name,
                    er_format_name(fd), dir, opts, (long long)x, (unsigned long long)v1, (unsigned long long)v2);
        /* the elements the exact path may have taken: a zero D, or a NaN / infinity around */
        {
            er_format_info fi;
            er_format_get_info(fd, &fi);
            uint64_t mag = v1 & ~(UINT64_C(1) << (fi.width - 1));
            if (mag == 0) zeros++;
        }
        {
            int64_t bb = x / (T->m * T->n), i = (x / T->n) % T->m, j = x % T->n, sp = 0;
            for (int64_t p = 0; p < T->k && !sp; p++) {
                er_val va = er_decode_pattern(T->fa, getx(T->A, T->fa, (T->a3 ? bb * T->m * T->k : 0) + i * T->k + p));
                er_val vb = er_decode_pattern(T->fb, getx(T->B, T->fb, T->bt ? j * T->k + p : p * T->n + j));
                sp = va.cls >= ER_CLASS_INF || vb.cls >= ER_CLASS_INF;
            }
            if ((i < 64 && (T->wide_rows >> i & 1)) || (j < 64 && (T->wide_cols >> j & 1))) sp = 1;
            if (T->fc >= 0) {
                uint64_t cb = 0;
                memcpy(&cb, T->C + x * bytes_of(T->fc), (size_t)bytes_of(T->fc));
                if (er_decode_pattern(T->fc, cb).cls >= ER_CLASS_INF) sp = 1;
            }
            specials += sp;
        }
    }
    ck_assert_msg(st.exact_path <= zeros + specials,
                  "%s: d %s dir %d: %lld elements left to the exact path, at most %ld expected (zeros %ld, non-finite "
                  "or wide %ld)",
                  T->name, er_format_name(fd), dir, (long long)st.exact_path, zeros + specials, zeros, specials);
    ck_assert_int_eq(st.sliced + st.exact_path, el);
    sliced_total += (long)st.sliced;
    exact_total += (long)st.exact_path;
    free(d1);
    free(d2);
    return bad;
}

static long run_case(tcase *T)
{
    long bad = 0, runs = 0, idx = 0;
    sliced_total = exact_total = 0;
    for (size_t f = 0; f < sizeof out_fmts / sizeof out_fmts[0]; f++)
        for (int dir = 0; dir < ER_RND_COUNT; dir++)
            for (size_t o = 0; o < sizeof opt_sets / sizeof opt_sets[0]; o++) {
                long this_idx = idx++;
                if (T->all_cfg == 0 && (dir + (int)o + (int)f) % 5 != 0) continue;
                if (T->all_cfg > 1 && this_idx % T->all_cfg != 0) continue;
                bad += run_cfg(T, out_fmts[f], dir, opt_sets[o], 1 + (int)(o % 2));
                runs++;
            }
    printf("%s: %s x %s, C %s, %lld x %lld x %lld x %lld: %ld configurations, %ld mismatches "
           "(elements from the slices %ld, from the exact path %ld)\n", T->name,
           er_format_name(T->fa), er_format_name(T->fb), T->fc >= 0 ? er_format_name(T->fc) : "none",
           (long long)T->batch, (long long)T->m, (long long)T->n, (long long)T->k, runs, bad, sliced_total, exact_total);
    return bad;
}

/* Random C of format fc: finite patterns of every magnitude (subnormals included), some zeros. */
static void fill_c(tcase *T, uint64_t *rng, int specials)
{
    int cb = bytes_of(T->fc);
    for (int64_t x = 0; x < T->batch * T->m * T->n; x++) {
        uint64_t v = er_test_rand(rng);
        if (cb == 4) v &= 0xFFFFFFFFu;
        else if (cb == 2) v &= 0xFFFFu;
        er_val dv = er_decode_pattern(T->fc, v);
        if (dv.cls >= ER_CLASS_INF && !specials) v = 0;
        if (x % 7 == 3) v = x % 2 ? (UINT64_C(1) << (cb * 8 - 1)) : 0; /* +-0 */
        memcpy(T->C + x * cb, &v, (size_t)cb);
    }
}

START_TEST(random_data)
{
    uint64_t rng = er_test_seed("engine_slices/random");
    const int pairs[][3] = {{ER_FMT_F8E4M3FN, ER_FMT_F8E4M3FN, -1}, {ER_FMT_F8E5M2, ER_FMT_F8E5M2, ER_FMT_F32},
                            {ER_FMT_F8E4M3FN, ER_FMT_F8E5M2, ER_FMT_BF16}, {ER_FMT_F8E5M2, ER_FMT_F8E4M3FN, ER_FMT_F16},
                            {ER_FMT_F8E4M3FN, ER_FMT_F8E4M3FN, ER_FMT_F32}, {ER_FMT_F8E5M2, ER_FMT_F8E5M2, -1}};
    long bad = 0;
    for (size_t q = 0; q < sizeof pairs / sizeof pairs[0]; q++) {
        tcase T = {"random", pairs[q][0], pairs[q][1], pairs[q][2], 1, 19, 23, 77, 0, 0, NULL, NULL, NULL, q < 3, 0, 0};
        setup(&T);
        for (int64_t x = 0; x < T.m * T.k; x++) T.A[x] = rnd_finite(T.fa, &rng);
        for (int64_t x = 0; x < T.k * T.n; x++) T.B[x] = rnd_finite(T.fb, &rng);
        if (T.fc >= 0) fill_c(&T, &rng, 0);
        bad += run_case(&T);
        teardown(&T);
    }
    ck_assert_msg(bad == 0, "random: %ld mismatches (see stderr)", bad);
}
END_TEST

START_TEST(specials)
{
    uint64_t rng = er_test_seed("engine_slices/specials");
    const int pairs[][3] = {{ER_FMT_F8E5M2, ER_FMT_F8E5M2, ER_FMT_F32}, {ER_FMT_F8E4M3FN, ER_FMT_F8E5M2, -1},
                            {ER_FMT_F8E4M3FN, ER_FMT_F8E4M3FN, ER_FMT_BF16}};
    long bad = 0;
    for (size_t q = 0; q < sizeof pairs / sizeof pairs[0]; q++) {
        tcase T = {"specials", pairs[q][0], pairs[q][1], pairs[q][2], 1, 13, 11, 40, 0, 0, NULL, NULL, NULL, q == 0, 0, 0};
        setup(&T);
        for (int64_t x = 0; x < T.m * T.k; x++) T.A[x] = rnd_finite(T.fa, &rng);
        for (int64_t x = 0; x < T.k * T.n; x++) T.B[x] = rnd_finite(T.fb, &rng);
        /* rows 0..3 of A: a 0 x inf, a NaN, an infinity, cancelling infinities; column 2 of B a NaN */
        T.A[0 * T.k + 5] = 0x00;
        T.A[1 * T.k + 7] = T.fa == ER_FMT_F8E5M2 ? 0x7E : 0xFF;
        if (T.fb == ER_FMT_F8E5M2) T.B[5 * T.n + 0] = 0x7C; /* inf x 0 in element (0, 0) */
        if (T.fa == ER_FMT_F8E5M2) {
            T.A[2 * T.k + 9] = 0xFC;
            T.A[3 * T.k + 1] = 0x7C;
            T.A[3 * T.k + 2] = 0xFC;
        }
        T.B[12 * T.n + 2] = T.fb == ER_FMT_F8E5M2 ? 0xFF : 0x7F;
        /* rows 6..8: the second half cancels the first exactly (sums 0: C = +-0 decides the sign) */
        for (int64_t i = 6; i <= 8; i++)
            for (int64_t p = 0; p < T.k / 2; p++) {
                T.A[i * T.k + T.k / 2 + p] = T.A[i * T.k + p] ^ 0x80;
                for (int64_t j = 0; j < T.n; j++) T.B[(T.k / 2 + p) * T.n + j] = T.B[p * T.n + j];
            }
        if (T.fc >= 0) {
            fill_c(&T, &rng, 1);
            int cb = bytes_of(T.fc);
            uint64_t inf = cb == 4 ? 0x7F800000u : 0x7F80u, nan = cb == 4 ? 0x7FC00001u : 0x7FC1u;
            memcpy(T.C + 10 * cb, &inf, (size_t)cb);
            memcpy(T.C + 21 * cb, &nan, (size_t)cb);
        }
        bad += run_case(&T);
        teardown(&T);
    }
    ck_assert_msg(bad == 0, "specials: %ld mismatches (see stderr)", bad);
}
END_TEST

START_TEST(max_cancel_subnormal)
{
    uint64_t rng = er_test_seed("engine_slices/max_cancel_subnormal");
    const int fm[] = {ER_FMT_F8E4M3FN, ER_FMT_F8E5M2};
    long bad = 0;
    for (int q = 0; q < 2; q++)
        for (int kind = 0; kind < 3; kind++) {
            static const char *names[] = {"max", "cancel", "subnormal"};
            int f = fm[q];
            tcase T = {names[kind], f, f, kind == 1 ? ER_FMT_F32 : -1, 1, 9, 7, 64, 0, 0, NULL, NULL, NULL, q == 0, 0, 0};
            setup(&T);
            for (int64_t x = 0; x < T.m * T.k; x++) {
                uint8_t s = (uint8_t)(er_test_rand(&rng) & 0x80);
                T.A[x] = kind == 0 ? (uint8_t)(max_of(f) | s)
                       : kind == 2 ? (uint8_t)((er_test_rand(&rng) & (f == ER_FMT_F8E4M3FN ? 7 : 3)) | s)
                                   : rnd_finite(f, &rng);
            }
            for (int64_t x = 0; x < T.k * T.n; x++) {
                uint8_t s = (uint8_t)(er_test_rand(&rng) & 0x80);
                T.B[x] = kind == 0 ? (uint8_t)(max_of(f) | s)
                       : kind == 2 ? (uint8_t)((er_test_rand(&rng) & (f == ER_FMT_F8E4M3FN ? 7 : 3)) | s)
                                   : rnd_finite(f, &rng);
            }
            if (kind == 1) {
                /* A[i][32 + p] = -A[i][p], B[32 + p][j] = B[p][j] for p < 30: only p = 30, 31, 62, 63 remain */
                for (int64_t i = 0; i < T.m; i++)
                    for (int64_t p = 0; p < 30; p++) T.A[i * T.k + 32 + p] = T.A[i * T.k + p] ^ 0x80;
                for (int64_t p = 0; p < 30; p++)
                    for (int64_t j = 0; j < T.n; j++) T.B[(32 + p) * T.n + j] = T.B[p * T.n + j];
                for (int64_t i = 0; i < T.m; i++) { /* small leftovers: subnormal, or zero in some rows */
                    T.A[i * T.k + 30] = i % 3 ? 0x01 : 0x00;
                    T.A[i * T.k + 31] = 0x00;
                    T.A[i * T.k + 62] = i % 2 ? 0x81 : 0x00;
                    T.A[i * T.k + 63] = 0x00;
                }
                fill_c(&T, &rng, 0);
            }
            bad += run_case(&T);
            teardown(&T);
        }
    ck_assert_msg(bad == 0, "max/cancel/subnormal: %ld mismatches (see stderr)", bad);
}
END_TEST

START_TEST(bigk)
{
    uint64_t rng = er_test_seed("engine_slices/bigk");
    const int64_t ks[] = {(INT64_C(1) << 17) + 5, (INT64_C(1) << 18) + 3};
    long bad = 0;
    for (int q = 0; q < 2; q++)
        for (int f = 0; f < 2; f++) {
            int fmt = f ? ER_FMT_F8E5M2 : ER_FMT_F8E4M3FN;
            /* one configuration in 13 (17 of the 216, every output format, direction and option set
             * among them): the chunks of int32 sums are what this case tests, and the exact reference
             * of k = 2^18 products is its time */
            tcase T = {"bigk", fmt, fmt, q ? ER_FMT_F32 : -1, 1, 2, 3, ks[q], 0, 1, NULL, NULL, NULL, 13, 0, 0};
            setup(&T);
            for (int64_t p = 0; p < T.k; p++) {
                T.A[p] = max_of(fmt);              /* row 0: every product +max^2 or -max^2 by column */
                T.A[T.k + p] = rnd_finite(fmt, &rng); /* row 1: random */
                *belem(&T, p, 0) = max_of(fmt);
                *belem(&T, p, 1) = (uint8_t)(max_of(fmt) | (p % 2 ? 0x80 : 0)); /* alternating */
                *belem(&T, p, 2) = rnd_finite(fmt, &rng);
            }
            *belem(&T, T.k - 1, 1) = 0x01; /* the alternation ends on a small term */
            if (T.fc >= 0) fill_c(&T, &rng, 0);
            bad += run_case(&T);
            teardown(&T);
        }
    ck_assert_msg(bad == 0, "bigk: %ld mismatches (see stderr)", bad);
}
END_TEST

START_TEST(batch_and_narrow)
{
    uint64_t rng = er_test_seed("engine_slices/batch_and_narrow");
    long bad = 0;
    {
        tcase T = {"batch", ER_FMT_F8E4M3FN, ER_FMT_F8E5M2, ER_FMT_F16, 3, 5, 6, 33, 1, 1, NULL, NULL, NULL, 0, 0, 0};
        setup(&T);
        for (int64_t x = 0; x < T.batch * T.m * T.k; x++) T.A[x] = rnd_finite(T.fa, &rng);
        for (int64_t x = 0; x < T.k * T.n; x++) T.B[x] = rnd_finite(T.fb, &rng);
        fill_c(&T, &rng, 0);
        bad += run_case(&T);
        teardown(&T);
    }
    {
        tcase T = {"fp6xfp4", ER_FMT_F6E3M2FN, ER_FMT_F4E2M1FN, -1, 1, 8, 9, 50, 0, 0, NULL, NULL, NULL, 0, 0, 0};
        setup(&T);
        for (int64_t x = 0; x < T.m * T.k; x++) T.A[x] = rnd_finite(T.fa, &rng);
        for (int64_t x = 0; x < T.k * T.n; x++) T.B[x] = rnd_finite(T.fb, &rng);
        bad += run_case(&T);
        teardown(&T);
    }
    ck_assert_msg(bad == 0, "batch/narrow: %ld mismatches (see stderr)", bad);
}
END_TEST

START_TEST(declines)
{
    /* f32 has no int8 slices (24 bits of precision), nor has a block-scaled problem: ER_EUNSUPPORTED */
    uint32_t a[4] = {0x3F800000u, 0, 0, 0x3F800000u}, b[4] = {0x40000000u, 0, 0, 0x40000000u}, d[4];
    er_tensor ta = er_tensor_2d(ER_FMT_F32, 2, 2, a), tb_ = er_tensor_2d(ER_FMT_F32, 2, 2, b),
              td = er_tensor_2d(ER_FMT_F32, 2, 2, d);
    er_mma_args args;
    er_problem P;
    char msg[256] = "";
    er_mma_args_init(&args);
    args.a = &ta;
    args.b = &tb_;
    args.d = &td;
    ck_assert_int_eq(er_problem_validate(&P, &args, &td, NULL, NULL, NULL, msg, sizeof msg), ER_OK);
    ck_assert_int_eq(er_cpu_slices_mma(&P, NULL), ER_EUNSUPPORTED);
    ck_assert_msg(strstr(msg, "f32") != NULL, "message: %s", msg);
}
END_TEST

/* A random pattern of bf16 (ebits 8, 7 stored bits) or f16 (5, 10) with its binade in [e0 - 4, e0 + 5]. */
static uint64_t rnd_band(int f, uint64_t *rng)
{
    uint64_t r = er_test_rand(rng);
    int mb = f == ER_FMT_BF16 ? 7 : 10, bias = f == ER_FMT_BF16 ? 127 : 15;
    uint64_t e = (uint64_t)(bias - 4 + (int)(r % 10));
    return ((r >> 8) & 1u) << 15 | e << mb | ((r >> 16) & ((UINT64_C(1) << mb) - 1u));
}

START_TEST(scaled_bf16_f16)
{
    uint64_t rng = er_test_seed("engine_slices/scaled_bf16_f16");
    const int pairs[][3] = {{ER_FMT_BF16, ER_FMT_BF16, -1}, {ER_FMT_BF16, ER_FMT_BF16, ER_FMT_F32},
                            {ER_FMT_F16, ER_FMT_F8E4M3FN, ER_FMT_BF16}, {ER_FMT_F8E5M2, ER_FMT_BF16, -1}};
    long bad = 0;
    for (size_t q = 0; q < sizeof pairs / sizeof pairs[0]; q++) {
        tcase T = {"scaled", pairs[q][0], pairs[q][1], pairs[q][2], 1, 12, 10, 64, 0, 0, NULL, NULL, NULL, q < 2, 0, 0};
        setup(&T);
        for (int64_t x = 0; x < T.m * T.k; x++)
            setx(T.A, T.fa, x, bytes_of(T.fa) == 1 ? rnd_finite(T.fa, &rng) : rnd_band(T.fa, &rng));
        for (int64_t x = 0; x < T.k * T.n; x++)
            setx(T.B, T.fb, x, bytes_of(T.fb) == 1 ? rnd_finite(T.fb, &rng) : rnd_band(T.fb, &rng));
        if (T.fa == ER_FMT_BF16) { /* rows 0 and 1: 2^20 and 2^-20 (41 bits apart): no common 21-bit grid */
            setx(T.A, T.fa, 0 * T.k + 3, 0x4980);
            setx(T.A, T.fa, 0 * T.k + 9, 0x3580);
            setx(T.A, T.fa, 1 * T.k + 0, 0xC980);
            setx(T.A, T.fa, 1 * T.k + 63, 0x3581);
            T.wide_rows = 3;
        }
        if (T.fb == ER_FMT_BF16) { /* column 3 likewise; column 5 all zero but one tiny subnormal (fits) */
            setx(T.B, T.fb, 7 * T.n + 3, 0x4980);
            setx(T.B, T.fb, 8 * T.n + 3, 0x3580);
            for (int64_t p = 0; p < T.k; p++) setx(T.B, T.fb, p * T.n + 5, p == 11 ? 0x0001 : (p % 2 ? 0x8000 : 0));
            T.wide_cols = 1u << 3;
        }
        if (T.fc >= 0) fill_c(&T, &rng, 0);
        bad += run_case(&T);
        teardown(&T);
    }
    ck_assert_msg(bad == 0, "scaled: %ld mismatches (see stderr)", bad);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("engine_slices");
    TCase *tc = tcase_create("slices");
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, random_data);
    tcase_add_test(tc, specials);
    tcase_add_test(tc, max_cancel_subnormal);
    tcase_add_test(tc, bigk);
    tcase_add_test(tc, batch_and_narrow);
    tcase_add_test(tc, scaled_bf16_f16);
    tcase_add_test(tc, declines);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
