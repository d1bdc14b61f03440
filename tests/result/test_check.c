/* test_check.c: er_check (src/check.c) in tiles of every shape gives the one-pass report of
 * er_check_report_compute byte for byte (outside list and covers included), 2-D and batched, with an
 * accumulator and a block-scaled product; er_check_result tiles only a Result of arrays without bounds
 * kept (never a scaled product's); the hooks are called as documented; a wrong output shape is refused with a sentence. */
#define _POSIX_C_SOURCE 200809L
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "er_test.h"
#include "exactref/check.h"
#include "exactref/exactref.h"

#define CAP 9 /* below the number of outside elements: the cap is tested too */

static void bf16_fill(uint16_t *v, int64_t n, uint64_t *state)
{
    for (int64_t i = 0; i < n; i++) {
        uint64_t r = er_test_rand(state);
        v[i] = (uint16_t)(((r & 1) << 15) | ((uint64_t)(122 + (r >> 1) % 8) << 7) | ((r >> 8) & 0x7f));
    }
}

/* The output under test: the rounded answer d moved within, to and beyond its bounds, NaN and infinity. */
static void make_output(const float *d, const er_bounds *bd, int64_t count, uint64_t *state, float *out)
{
    for (int64_t e = 0; e < count; e++) {
        uint32_t x;
        memcpy(&x, &d[e], 4);
        uint64_t r = er_test_rand(state) % 16;
        if (r < 6) { /* unchanged */
        } else if (r < 10 && bd->has_range[e]) x = (uint32_t)(r & 1 ? bd->low[e] : bd->high[e]);
        else if (r < 13 && bd->has_range[e]) {
            uint32_t k = 1 + (uint32_t)(er_test_rand(state) % 3);
            x = !((uint32_t)bd->high[e] >> 31) ? (uint32_t)bd->high[e] + k : (uint32_t)bd->low[e] + k;
        } else if (r == 13) x = 0x7FC00000u;
        else if (r == 14) x = 0xFF800000u;
        memcpy(&out[e], &x, 4);
    }
}

typedef struct {
    int64_t bands, rows_seen, calls, tiles, tile_elems;
    double last;
    int bad;
} hooks;

static void on_band(void *ctx, int64_t matrix, int64_t row0, int64_t rows)
{
    hooks *h = (hooks *)ctx;
    (void)matrix;
    if (rows < 1 || row0 < 0) h->bad = 1;
    h->bands++;
    h->rows_seen += rows;
}

static void on_tile(void *ctx, int64_t matrix, int64_t row0, int64_t rows, int64_t col0, int64_t cols)
{
    hooks *h = (hooks *)ctx;
    (void)matrix;
    if (rows < 1 || cols < 1 || row0 < 0 || col0 < 0) h->bad = 1;
    h->tiles++;
    h->tile_elems += rows * cols;
}

static void on_progress(void *ctx, const char *what, double fraction)
{
    hooks *h = (hooks *)ctx;
    if (!what || !*what || (fraction != -1 && !(fraction >= 0 && fraction <= 1 + 1e-12))) h->bad = 1;
    h->calls++;
    h->last = fraction;
}

/* One problem (nb matrices of m x k times k x n, bf16, f32 output; with_c: an f32 accumulator; scaled:
 * block-scaled with f8E8M0FNU scales, block 8), checked in one pass and in tiles of br x bc. */
static void one(int nb, int64_t m, int64_t k, int64_t n, int with_c, int scaled, uint64_t *state)
{
    int64_t cnt = nb * m * n, kb = (k + 7) / 8;
    uint16_t *a = malloc(sizeof(uint16_t) * (size_t)(nb * m * k)), *b = malloc(sizeof(uint16_t) * (size_t)(nb * k * n));
    float *c = malloc(sizeof(float) * (size_t)cnt), *d = malloc(sizeof(float) * (size_t)cnt);
    float *out = malloc(sizeof(float) * (size_t)cnt);
    uint8_t *sa = malloc((size_t)(nb * m * kb)), *sb = malloc((size_t)(nb * kb * n));
    bf16_fill(a, nb * m * k, state);
    bf16_fill(b, nb * k * n, state);
    for (int64_t e = 0; e < cnt; e++) c[e] = (float)((int64_t)(er_test_rand(state) % 9) - 4) / 8.0f;
    for (int64_t e = 0; e < nb * m * kb; e++) sa[e] = (uint8_t)(125 + er_test_rand(state) % 5);
    for (int64_t e = 0; e < nb * kb * n; e++) sb[e] = (uint8_t)(125 + er_test_rand(state) % 5);
    int fa = scaled ? ER_FMT_F8E4M3FN : ER_FMT_BF16, fb = scaled ? ER_FMT_F8E5M2 : ER_FMT_BF16;
    er_tensor A, B, C, SA, SB, D, O;
    if (nb > 1) {
        A = er_tensor_3d(fa, nb, m, k, a);
        B = er_tensor_3d(fb, nb, k, n, b);
        C = er_tensor_3d(ER_FMT_F32, nb, m, n, c);
        SA = er_tensor_3d(ER_FMT_F8E8M0FNU, nb, m, kb, sa);
        SB = er_tensor_3d(ER_FMT_F8E8M0FNU, nb, kb, n, sb);
        D = er_tensor_3d(ER_FMT_F32, nb, m, n, d);
        O = er_tensor_3d(ER_FMT_F32, nb, m, n, out);
    } else {
        A = er_tensor_2d(fa, m, k, a);
        B = er_tensor_2d(fb, k, n, b);
        C = er_tensor_2d(ER_FMT_F32, m, n, c);
        SA = er_tensor_2d(ER_FMT_F8E8M0FNU, m, kb, sa);
        SB = er_tensor_2d(ER_FMT_F8E8M0FNU, kb, n, sb);
        D = er_tensor_2d(ER_FMT_F32, m, n, d);
        O = er_tensor_2d(ER_FMT_F32, m, n, out);
    }
    if (scaled) { /* one byte per element: f8E4M3FN patterns below its NaN (0x7f), f8E5M2 finite ones */
        uint8_t *a8 = (uint8_t *)a, *b8 = (uint8_t *)b;
        for (int64_t e = 0; e < nb * m * k; e++) a8[e] = (uint8_t)((er_test_rand(state) & 0x80) | er_test_rand(state) % 0x7f);
        for (int64_t e = 0; e < nb * k * n; e++) b8[e] = (uint8_t)((er_test_rand(state) & 0x80) | er_test_rand(state) % 0x7c);
    }
    er_mma_args args;
    er_mma_args_init(&args);
    args.a = &A;
    args.b = &B;
    args.c = with_c ? &C : NULL;
    if (scaled) {
        args.a_scale = &SA;
        args.b_scale = &SB;
        args.block = 8;
    }
    args.d = &D;
    args.backend = ER_BACKEND_CPU;
    er_tol_opts o;
    er_tol_opts_init(&o);
    char msg[512] = "";
    er_result *r = NULL;
    ck_assert_msg(er_result_create(&args, &r, msg, sizeof msg) == ER_OK, "%s", msg);
    const er_bounds *bd;
    ck_assert_msg(er_result_bounds(r, &o, &bd, msg, sizeof msg) == ER_OK, "%s", msg);
    make_output(d, bd, cnt, state, out);
    /* the one-pass report and covers, the reference */
    er_check_report want, got;
    int64_t want_idx[CAP], got_idx[CAP];
    unsigned char *want_cov = malloc((size_t)cnt), *got_cov = malloc((size_t)cnt);
    ck_assert_msg(er_check_report_compute(r, &o, &O, &A, &B, want_idx, CAP, &want, msg, sizeof msg) == ER_OK, "%s", msg);
    ck_assert_msg(er_result_covers(r, &o, &O, want_cov, NULL, msg, sizeof msg) == ER_OK, "%s", msg);
    ck_assert_msg(want.outside > 0 && want.outside < cnt, "the output has some elements outside (%lld)",
                  (long long)want.outside);
    args.d = NULL; /* er_check does not need it */
    static const int64_t tiles[][2] = {{-1, 0}, {1, 0}, {1, 1}, {2, 3}, {3, 0}, {5, 7}, {1000, 2}, {4, 1000}};
    for (size_t t = 0; t < sizeof tiles / sizeof tiles[0]; t++) {
        er_check_opts co;
        er_check_info info;
        hooks h;
        memset(&h, 0, sizeof h);
        er_check_opts_init(&co);
        co.tile_rows = tiles[t][0];
        co.tile_cols = tiles[t][1];
        co.outside_index = got_idx;
        co.outside_cap = CAP;
        co.covered = got_cov;
        co.band_done = on_band;
        co.band_ctx = &h;
        co.tile_done = on_tile;
        co.tile_ctx = &h;
        co.progress = on_progress;
        co.progress_ctx = &h;
        memset(got_cov, 7, (size_t)cnt);
        memset(&got, 0x5a, sizeof got);
        ck_assert_msg(er_check(&args, &o, &O, &co, &got, &info, msg, sizeof msg) == ER_OK, "%s", msg);
        ck_assert_msg(!memcmp(&got, &want, sizeof got), "tiles %lld x %lld: the report differs from the one pass's",
                      (long long)tiles[t][0], (long long)tiles[t][1]);
        ck_assert(!memcmp(got_idx, want_idx, sizeof(int64_t) * (size_t)(want.outside < CAP ? want.outside : CAP)));
        ck_assert_msg(!memcmp(got_cov, want_cov, (size_t)cnt), "tiles %lld x %lld: covers differ",
                      (long long)tiles[t][0], (long long)tiles[t][1]);
        ck_assert(!h.bad && h.calls > 0);
        ck_assert_int_eq(info.stats.elements, cnt);
        ck_assert_int_eq(info.default_compute, ER_FMT_F32);
        if (tiles[t][0] > 0) { /* every row of every matrix was in exactly one band */
            int64_t br = tiles[t][0] < m ? tiles[t][0] : m;
            ck_assert_int_eq(info.tile_rows, br);
            ck_assert_int_eq(h.rows_seen, nb * m);
            ck_assert_int_eq(h.bands, nb * ((m + br - 1) / br));
            ck_assert_int_eq(h.tile_elems, cnt); /* every element in exactly one tile */
            ck_assert_int_eq(info.tile_cols, tiles[t][1] > 0 && tiles[t][1] < n ? tiles[t][1] : n);
        } else {
            ck_assert_int_eq(info.tile_rows, 0);
            ck_assert_int_eq(h.bands, 0);
            ck_assert_int_eq(h.tiles, 0);
        }
    }
    /* the Result kept from the tiles: its rounded answer is the one-pass Result's, and so are its
     * bounds (made afterwards, without the reference's S) */
    {
        float *d2 = malloc(sizeof(float) * (size_t)cnt);
        er_tensor D2 = D;
        D2.data = d2;
        memset(d2, 0x5a, sizeof(float) * (size_t)cnt);
        er_check_opts co;
        er_result *kept = NULL;
        er_check_opts_init(&co);
        co.tile_rows = 2;
        co.tile_cols = 3;
        co.result = &kept;
        args.d = &D2;
        ck_assert_msg(er_check(&args, &o, &O, &co, &got, NULL, msg, sizeof msg) == ER_OK, "%s", msg);
        ck_assert_ptr_nonnull(kept);
        ck_assert(!memcmp(d2, d, sizeof(float) * (size_t)cnt));
        ck_assert_int_eq(er_result_stats(kept)->elements, cnt);
        const er_bounds *b2;
        ck_assert_msg(er_result_bounds(kept, &o, &b2, msg, sizeof msg) == ER_OK, "%s", msg);
        ck_assert(!memcmp(b2->tolerance, bd->tolerance, sizeof(double) * (size_t)cnt));
        ck_assert(!memcmp(b2->low, bd->low, sizeof(uint64_t) * (size_t)cnt));
        ck_assert(!memcmp(b2->high, bd->high, sizeof(uint64_t) * (size_t)cnt));
        ck_assert(!memcmp(b2->has_range, bd->has_range, (size_t)cnt));
        er_result_free(kept);
        args.d = NULL;
        free(d2);
    }
    /* a Result with bounds kept: er_check_result leaves it to the caller */
    {
        er_check_opts co;
        int tiled = -1;
        er_check_opts_init(&co);
        co.tile_rows = 2;
        ck_assert_msg(er_check_result(r, &o, &O, &co, &got, NULL, &tiled, msg, sizeof msg) == ER_OK, "%s", msg);
        ck_assert_int_eq(tiled, 0);
        /* other options: no bounds kept for them, so tiles; the report is the one pass's for them */
        er_tol_opts o2 = o;
        er_standard_parse("any_order", &o2.standard, NULL, 0);
        ck_assert_msg(er_check_result(r, &o2, &O, &co, &got, NULL, &tiled, msg, sizeof msg) == ER_OK, "%s", msg);
        ck_assert_int_eq(tiled, 1);
        ck_assert_msg(er_check_report_compute(r, &o2, &O, &A, &B, NULL, 0, &want, msg, sizeof msg) == ER_OK, "%s",
                      msg);
        got.outside_listed = want.outside_listed; /* no list asked for either way */
        ck_assert_msg(!memcmp(&got, &want, sizeof got), "er_check_result's tiles differ from the one pass");
    }
    er_result_free(r);
    free(a);
    free(b);
    free(c);
    free(d);
    free(out);
    free(sa);
    free(sb);
    free(want_cov);
    free(got_cov);
}

START_TEST(tiles_2d)
{
    uint64_t state = er_test_seed("check_tiles_2d");
    one(1, 13, 21, 11, 0, 0, &state);
    one(1, 7, 5, 17, 1, 0, &state);
}
END_TEST

START_TEST(tiles_batched)
{
    uint64_t state = er_test_seed("check_tiles_batched");
    one(3, 6, 9, 10, 1, 0, &state);
}
END_TEST

START_TEST(tiles_scaled)
{
    uint64_t state = er_test_seed("check_tiles_scaled");
    one(1, 9, 20, 12, 0, 1, &state);
}
END_TEST

/* A scaled product (f32 scales after a block's sum, include/exactref/scaled.h) is never tiled: its
 * problem is its plan, not the Result's arguments (whose tiles would check the unscaled A B).  e4m3
 * A = [[1, 2], [3, 0.5]], B = [[1, 0], [2, 1]], a_scale 2, b_scale [0.5, 3], alpha 0.5, bias [1, -1]:
 * D = [[3.5, 5], [3, 0.5]]; the output has 6 for 5 at [0, 1]. */
START_TEST(scaled_one_pass)
{
    uint8_t a[4] = {0x38, 0x40, 0x44, 0x30}, b[4] = {0x38, 0x00, 0x40, 0x38};
    float sa[1] = {2.0f}, sb[2] = {0.5f, 3.0f}, bias[2] = {1.0f, -1.0f}, d[4] = {0}, out[4] = {3.5f, 6.0f, 3.0f, 0.5f};
    const float want[4] = {3.5f, 5.0f, 3.0f, 0.5f};
    er_tensor A = er_tensor_2d(ER_FMT_F8E4M3FN, 2, 2, a), B = er_tensor_2d(ER_FMT_F8E4M3FN, 2, 2, b);
    er_tensor SA = er_tensor_2d(ER_FMT_F32, 1, 1, sa), SB = er_tensor_2d(ER_FMT_F32, 1, 2, sb);
    er_tensor BI = er_tensor_2d(ER_FMT_F32, 1, 2, bias), D = er_tensor_2d(ER_FMT_F32, 2, 2, d);
    er_tensor O = er_tensor_2d(ER_FMT_F32, 2, 2, out);
    er_scaled_args args;
    er_scaled_args_init(&args);
    args.a = &A, args.b = &B, args.a_scale = &SA, args.b_scale = &SB, args.bias = &BI, args.d = &D;
    args.alpha = 0.5;
    er_result *r = NULL;
    char msg[512] = "";
    ck_assert_msg(er_scaled_result_create(&args, &r, msg, sizeof msg) == ER_OK, "%s", msg);
    ck_assert(memcmp(d, want, sizeof want) == 0);
    er_tol_opts o;
    er_tol_opts_init(&o);
    ck_assert_msg(er_standard_parse("scaled:bk=128", &o.standard, msg, sizeof msg) == ER_OK, "%s", msg);
    er_check_opts co;
    er_check_opts_init(&co);
    co.tile_rows = 1; /* tiles asked for: still the caller's one pass */
    er_check_report rep;
    int tiled = -1;
    ck_assert_msg(er_check_result(r, &o, &O, &co, &rep, NULL, &tiled, msg, sizeof msg) == ER_OK, "%s", msg);
    ck_assert_int_eq(tiled, 0);
    ck_assert_msg(er_check_report_compute(r, &o, &O, &A, &B, NULL, 0, &rep, msg, sizeof msg) == ER_OK, "%s", msg);
    ck_assert_int_eq(rep.outside, 1);
    ck_assert(rep.worst_index[1] == 0 && rep.worst_index[2] == 1);
    er_result_free(r);
}
END_TEST

START_TEST(refusals)
{
    uint16_t a[6] = {0}, b[6] = {0};
    float out[9] = {0};
    er_tensor A = er_tensor_2d(ER_FMT_BF16, 2, 3, a), B = er_tensor_2d(ER_FMT_BF16, 3, 2, b);
    er_tensor O = er_tensor_2d(ER_FMT_F32, 3, 3, out);
    er_mma_args args;
    er_check_report rep;
    char msg[256] = "";
    er_mma_args_init(&args);
    args.a = &A;
    args.b = &B;
    ck_assert_int_eq(er_check(&args, NULL, &O, NULL, &rep, NULL, msg, sizeof msg), ER_EINVAL);
    ck_assert_msg(strstr(msg, "3 x 3") && strstr(msg, "2 x 2"), "the message names both shapes: %s", msg);
    ck_assert_int_eq(er_check(NULL, NULL, &O, NULL, &rep, NULL, msg, sizeof msg), ER_EINVAL);
    int64_t br = 9, bc = 9;
    er_check_plan(&args, &O, NULL, &br, &bc);
    ck_assert(br == 0 && bc == 0); /* small: one pass */
}
END_TEST

int main(void)
{
    Suite *s = suite_create("check");
    TCase *tc = tcase_create("check");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, tiles_2d);
    tcase_add_test(tc, tiles_batched);
    tcase_add_test(tc, tiles_scaled);
    tcase_add_test(tc, scaled_one_pass);
    tcase_add_test(tc, refusals);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
