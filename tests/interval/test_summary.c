/* test_summary.c: whole-tensor summaries, and the engine's strategy choice they steer (bits unchanged). */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "er_test.h"
#include "exactref/exactref.h"
#include "exactref/core/er_round.h"

static uint16_t bf16_of(float v)
{
    uint32_t u;
    memcpy(&u, &v, 4);
    return (uint16_t)(u >> 16); /* exact for the values used here */
}

/* The summary of a known tensor: its range, integrality and exactness, NaN giving top. */
START_TEST(summary_of_tensors)
{
    uint16_t v[6] = {bf16_of(-3.0f), bf16_of(7.0f), bf16_of(0.0f), bf16_of(256.0f), bf16_of(-0.0f), bf16_of(1.0f)};
    er_tensor t = er_tensor_2d(ER_FMT_BF16, 2, 3, v);
    er_interval s;
    ck_assert_int_eq(er_interval_of_tensor(&t, &s), ER_OK);
    ck_assert(s.lo == -3.0 && s.hi == 256.0 && s.integral && s.exact);
    v[5] = bf16_of(0.5f);
    ck_assert_int_eq(er_interval_of_tensor(&t, &s), ER_OK);
    ck_assert(s.lo == -3.0 && s.hi == 256.0 && !s.integral);
    /* a strided view sees only its own elements: the first two elements of row 0, as a column */
    er_tensor tt = er_tensor_transpose(er_tensor_2d(ER_FMT_BF16, 1, 2, v));
    tt.strides[0] = 1;
    tt.strides[1] = 3;
    ck_assert_int_eq(er_interval_of_tensor(&tt, &s), ER_OK);
    ck_assert(s.lo == -3.0 && s.hi == 7.0);
    v[2] = 0x7fc0; /* NaN */
    ck_assert_int_eq(er_interval_of_tensor(&t, &s), ER_OK);
    ck_assert(er_interval_is_top(s));
    int8_t iv[4] = {-128, 5, 127, 0};
    er_tensor ti = er_tensor_2d(ER_FMT_I8, 2, 2, iv);
    ck_assert_int_eq(er_interval_of_tensor(&ti, &s), ER_OK);
    ck_assert(s.lo == -128 && s.hi == 127 && s.integral);
}
END_TEST

/* Every element of the tensor lies inside its summary (random formats and patterns). */
START_TEST(summary_is_sound)
{
    uint64_t st = er_test_seed("summary_is_sound");
    static uint8_t buf[64 * 8];
    for (int f = 0; f < ER_FMT_COUNT; f++) {
        er_format_info fi;
        er_format_get_info(f, &fi);
        for (int rep = 0; rep < 50; rep++) {
            for (int i = 0; i < 64; i++) {
                uint64_t x = er_test_rand(&st);
                if (fi.width < 64) x &= (UINT64_C(1) << fi.width) - 1u;
                if (fi.padding_bits) x &= ~((UINT64_C(1) << fi.padding_bits) - 1u);
                memcpy(buf + (size_t)i * (size_t)fi.storage_bytes, &x, (size_t)fi.storage_bytes);
            }
            er_tensor t = er_tensor_2d(f, 8, 8, buf);
            er_interval s;
            ck_assert_int_eq(er_interval_of_tensor(&t, &s), ER_OK);
            if (er_interval_is_top(s)) continue;
            for (int i = 0; i < 64; i++) {
                uint64_t x = 0;
                memcpy(&x, buf + (size_t)i * (size_t)fi.storage_bytes, (size_t)fi.storage_bytes);
                er_val v = er_decode(f, x);
                ck_assert(v.cls != ER_CLASS_NAN);
                long double d = v.cls == ER_CLASS_INF ? (long double)INFINITY
                                : v.cls == ER_CLASS_ZERO ? 0.0L : ldexpl((long double)v.sig, v.exp);
                if (v.sign) d = -d;
                ck_assert_msg((long double)s.lo <= d && d <= (long double)s.hi, "%s 0x%llx outside [%a, %a]", fi.name,
                              (unsigned long long)x, s.lo, s.hi);
                if (s.integral && v.cls != ER_CLASS_INF) ck_assert(floorl(d) == d);
            }
        }
    }
}
END_TEST

/* The strategy choice changes with the summaries; the bits do not. */
START_TEST(strategy_changes_bits_do_not)
{
    uint64_t st = er_test_seed("strategy_changes_bits_do_not");
    enum { M = 24, N = 20, K = 300 };
    static uint16_t a[M * K], b[K * N];
    static uint32_t d_auto[M * N], d_exact[M * N];
    for (int round = 0; round < 2; round++) {
        for (int i = 0; i < M * K; i++) a[i] = bf16_of((float)((int)(er_test_rand(&st) % 256) - 128));
        for (int i = 0; i < K * N; i++) b[i] = bf16_of((float)((int)(er_test_rand(&st) % 256) - 128));
        if (round == 1) a[M * K / 2] = bf16_of(0.5f); /* one non-integer: the summary no longer proves it */
        er_tensor A = er_tensor_2d(ER_FMT_BF16, M, K, a), B = er_tensor_2d(ER_FMT_BF16, K, N, b);
        for (int out = 0; out < 2; out++) {
            int of = out ? ER_FMT_BF16 : ER_FMT_F32;
            er_tensor Da = er_tensor_2d(of, M, N, d_auto), De = er_tensor_2d(of, M, N, d_exact);
            for (int dir = 0; dir < 5; dir++) {
                er_mma_args g;
                er_mma_stats s;
                er_mma_args_init(&g);
                g.a = &A;
                g.b = &B;
                g.d = &Da;
                g.rounding = dir;
                g.stats = &s;
                ck_assert_int_eq(er_mma(&g), ER_OK);
                if (round == 0) {
                    ck_assert_msg(s.exact_f64 + s.exact_path == M * N && s.fast_decided == 0,
                                  "integral inputs: exact_f64 %lld fast %lld", (long long)s.exact_f64, (long long)s.fast_decided);
                    ck_assert(s.exact_f64 > M * N / 2);
                } else {
                    ck_assert_int_eq(s.exact_f64, 0);
                }
                g.d = &De;
                g.strategy = ER_STRATEGY_EXACT;
                ck_assert_int_eq(er_mma(&g), ER_OK);
                for (int e = 0; e < M * N; e++)
                    ck_assert_msg(memcmp(&d_auto[e], &d_exact[e], of == ER_FMT_F32 ? 4 : 2) == 0,
                                  "round %d element %d: auto and exact differ", round, e);
            }
        }
    }
}
END_TEST

/* may_be for a whole tensor from the summaries: decides "no" where it can, agrees with the elements. */
START_TEST(may_be_whole_tensor)
{
    enum { M = 8, N = 8, K = 64 };
    static uint16_t a[M * K], b[K * N];
    static uint32_t d[M * N];
    static const char *kinds[3] = {"+inf", "-inf", "nan"};
    for (int i = 0; i < M * K; i++) a[i] = (uint16_t)(0x3f80 + i % 7);
    for (int i = 0; i < K * N; i++) b[i] = (uint16_t)(0xbf80 + i % 5);
    er_tensor A = er_tensor_2d(ER_FMT_BF16, M, K, a), B = er_tensor_2d(ER_FMT_BF16, K, N, b), D = er_tensor_2d(ER_FMT_F32, M, N, d);
    for (int round = 0; round < 3; round++) {
        if (round == 1) a[3] = 0x7f7f; /* bf16's largest value: products near f32's overflow */
        if (round == 2) a[3] = 0x7fc0; /* a NaN */
        er_mma_args g;
        er_mma_args_init(&g);
        g.a = &A;
        g.b = &B;
        g.d = &D;
        er_result *r;
        char msg[256];
        ck_assert_int_eq(er_result_create(&g, &r, msg, sizeof msg), ER_OK);
        const er_bounds *bd;
        ck_assert_int_eq(er_result_bounds(r, NULL, &bd, msg, sizeof msg), ER_OK);
        for (int q = 0; q < 3; q++) {
            int ans = 7;
            ck_assert_int_eq(er_result_may_be_any(r, NULL, kinds[q], &ans, msg, sizeof msg), ER_OK);
            ck_assert_int_eq(ans, round == 0 ? 0 : -1);
            const unsigned char *arr = q == 0 ? bd->may_pinf : q == 1 ? bd->may_ninf : bd->may_nan;
            if (ans == 0)
                for (int e = 0; e < M * N; e++) ck_assert_int_eq(arr[e], 0);
        }
        if (round == 2) ck_assert_int_eq(bd->may_nan[0], 1); /* row 0 holds the NaN */
        er_result_free(r);
    }
    int ans;
    ck_assert_int_eq(er_result_may_be_any(NULL, NULL, "nan", &ans, NULL, 0), ER_EINVAL);
}
END_TEST

/* d <= x and d >= x for a binary64 d and an int64 x, compared exactly: d <= x iff ceil(d) <= x, and
 * ceil(d) in [-2^63, 2^63) converts to int64 exactly. */
static int le_di(double d, int64_t x)
{
    d = ceil(d);
    if (d < -0x1p63) return 1;
    if (d >= 0x1p63) return 0;
    return (int64_t)d <= x;
}
static int ge_di(double d, int64_t x)
{
    d = floor(d);
    if (d >= 0x1p63) return 1;
    if (d < -0x1p63) return 0;
    return (int64_t)d >= x;
}

/* i64 tensors beyond 2^53: each bound rounded outward on its own side, and no further than the next
 * binary64 (the three cases, then seeded random values near 2^53 and 2^63), against the exact
 * integers. */
START_TEST(summary_of_wide_integers)
{
    static const struct { int64_t v; double lo, hi; } fixed[] = {
        {INT64_MAX - 1, 0x1p63 - 1024, 0x1p63},
        {(INT64_C(1) << 53) + 1, 0x1p53, 0x1p53 + 2},
        {-(INT64_C(1) << 53) - 1, -0x1p53 - 2, -0x1p53},
        {INT64_MIN, -0x1p63, -0x1p63},
        {INT64_MIN + 1, -0x1p63, -0x1p63 + 1024},
        {INT64_MAX, 0x1p63 - 1024, 0x1p63},
        {(INT64_C(1) << 53) - 1, 0x1p53 - 1, 0x1p53 - 1},
    };
    for (size_t q = 0; q < sizeof fixed / sizeof fixed[0]; q++) {
        int64_t v = fixed[q].v;
        er_tensor t = er_tensor_2d(ER_FMT_I64, 1, 1, &v);
        er_interval s;
        ck_assert_int_eq(er_interval_of_tensor(&t, &s), ER_OK);
        ck_assert_msg(s.lo == fixed[q].lo && s.hi == fixed[q].hi && s.integral,
                      "%lld: got [%a, %a], want [%a, %a]", (long long)v, s.lo, s.hi, fixed[q].lo, fixed[q].hi);
        ck_assert_int_eq(s.exact, fixed[q].lo == fixed[q].hi && fabs(fixed[q].lo) < 0x1p53);
    }
    uint64_t st = er_test_seed("summary_of_wide_integers");
    for (int rep = 0; rep < 2000; rep++) {
        int64_t v[6];
        for (int i = 0; i < 6; i++) {
            uint64_t r = er_test_rand(&st);
            int bits = 53 + (int)(er_test_rand(&st) % 11); /* magnitudes in [2^52, 2^63) */
            int64_t m = (int64_t)(r >> (64 - bits));
            if (er_test_rand(&st) & 1u) m = -m;
            if (rep % 7 == 0 && i == 0) m = (er_test_rand(&st) & 1u) ? INT64_MAX - (int64_t)(r % 4096) : INT64_MIN + (int64_t)(r % 4096);
            v[i] = m;
        }
        int n = 1 + rep % 6;
        er_tensor t = er_tensor_2d(ER_FMT_I64, 1, n, v);
        er_interval s;
        ck_assert_int_eq(er_interval_of_tensor(&t, &s), ER_OK);
        int64_t mn = v[0], mx = v[0];
        for (int i = 1; i < n; i++) {
            mn = v[i] < mn ? v[i] : mn;
            mx = v[i] > mx ? v[i] : mx;
        }
        ck_assert_msg(le_di(s.lo, mn) && ge_di(s.hi, mx), "case %d: [%a, %a] misses [%lld, %lld]", rep, s.lo, s.hi,
                      (long long)mn, (long long)mx);
        /* the nearest binary64 on each side: one step inward passes the extreme */
        ck_assert_msg(!le_di(nextafter(s.lo, INFINITY), mn),
                      "case %d: lo %a is not the largest binary64 <= %lld", rep, s.lo, (long long)mn);
        ck_assert_msg(!ge_di(nextafter(s.hi, -INFINITY), mx), "case %d: hi %a is not the least binary64 >= %lld", rep,
                      s.hi, (long long)mx);
        ck_assert(s.integral);
    }
}
END_TEST

int main(void)
{
    Suite *s = suite_create("summary");
    TCase *tc = tcase_create("summary");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, summary_of_tensors);
    tcase_add_test(tc, summary_is_sound);
    tcase_add_test(tc, summary_of_wide_integers);
    tcase_add_test(tc, strategy_changes_bits_do_not);
    tcase_add_test(tc, may_be_whole_tensor);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
