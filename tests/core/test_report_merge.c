/* test_report_merge.c: the report of an output scored block by block (each block of rows its own result,
 * bounds and scoring, the reports merged with er_check_report_merge) equals the one-shot report of
 * er_check_report_compute, bit for bit, with the outside list, over random splits (2-D and batched, and
 * bands of rows cut into column tiles merged in a random order),
 * outputs with elements outside, specials, ties and a widened output (the narrower-format hint). */
#define _POSIX_C_SOURCE 200809L
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "er_test.h"
#include "exactref/exactref.h"
#include "exactref/report.h"

#define K 19
#define CAP 7 /* below the number of outside elements: the cap is tested too */

static void bf16_fill(uint16_t *v, int64_t n, uint64_t *state)
{
    for (int64_t i = 0; i < n; i++) {
        uint64_t r = er_test_rand(state);
        v[i] = (uint16_t)(((r & 1) << 15) | ((uint64_t)(122 + (r >> 1) % 8) << 7) | ((r >> 8) & 0x7f));
    }
}

static er_result *make(const er_tensor *a, const er_tensor *b, er_tensor *d)
{
    er_mma_args args;
    er_result *r = NULL;
    char msg[512];
    er_mma_args_init(&args);
    args.a = a;
    args.b = b;
    args.d = d;
    args.backend = ER_BACKEND_CPU;
    ck_assert_msg(er_result_create(&args, &r, msg, sizeof msg) == ER_OK, "%s", msg);
    return r;
}

/* The output under test from the rounded answer d and its bounds: kind 0 a mix (exact, moved within the
 * range, beyond it by a few ulps with ties, NaN and infinities), kind 1 the answer cut to bf16 (a widened
 * output: the hint). */
static void make_output(const float *d, const er_bounds *bd, int64_t count, int kind, uint64_t *state, float *out)
{
    for (int64_t e = 0; e < count; e++) {
        uint32_t x;
        memcpy(&x, &d[e], 4);
        if (kind == 1) x &= 0xFFFF0000u;
        else {
            uint64_t r = er_test_rand(state) % 16;
            if (r < 6) { /* unchanged */
            } else if (r < 10 && bd->has_range[e]) x = (uint32_t)(r & 1 ? bd->low[e] : bd->high[e]);
            else if (r < 13 && bd->has_range[e]) {
                uint32_t k = 1 + (uint32_t)(er_test_rand(state) % 3); /* few values: ties across blocks */
                x = !((uint32_t)bd->high[e] >> 31) ? (uint32_t)bd->high[e] + k : (uint32_t)bd->low[e] + k;
            } else if (r == 13) x = 0x7FC00000u;
            else if (r == 14) x = 0xFF800000u;
        }
        memcpy(&out[e], &x, 4);
    }
}

/* A band of mb rows (A rows a, B b: K x N, rounded answer d and output out: mb x N, row stride N) as
 * column tiles in a random order, merged into the band's report, then the band into all. */
static void merge_band(er_check_report *all, uint16_t *a, uint16_t *b, float *d, float *out, int64_t mb, int64_t N,
                       int64_t *idx, const er_tol_opts *o, uint64_t *state)
{
    int64_t cut[64], order[64], nt = 0;
    char msg[512];
    for (int64_t j = 0; j < N;) {
        int64_t w = 1 + (int64_t)(er_test_rand(state) % (uint64_t)(N - j < 9 ? N - j : 9));
        cut[nt++] = j;
        j += w;
    }
    cut[nt] = N;
    for (int64_t t = 0; t < nt; t++) order[t] = t;
    for (int64_t t = nt - 1; t > 0; t--) {
        int64_t u = (int64_t)(er_test_rand(state) % (uint64_t)(t + 1)), x = order[t];
        order[t] = order[u];
        order[u] = x;
    }
    unsigned char *bcov = malloc((size_t)(mb * N)), *tcov = malloc((size_t)(mb * N));
    float *dt = malloc(sizeof *dt * (size_t)(mb * N));
    er_check_report band;
    int64_t bshape[2] = {mb, N};
    ck_assert(bcov && tcov && dt);
    er_check_report_merge_init(&band, 2, bshape, ER_FMT_F32);
    er_tensor A = er_tensor_2d(ER_FMT_BF16, mb, K, a);
    for (int64_t t = 0; t < nt; t++) {
        int64_t j0 = cut[order[t]], w = cut[order[t] + 1] - j0;
        er_tensor B = er_tensor_2d(ER_FMT_BF16, K, w, b + j0), D = er_tensor_2d(ER_FMT_F32, mb, w, dt);
        er_tensor O = er_tensor_2d(ER_FMT_F32, mb, w, out + j0);
        B.strides[0] = N;
        O.strides[0] = N;
        er_result *r = make(&A, &B, &D);
        const er_bounds *bd;
        er_check_report tile;
        int64_t outside;
        ck_assert_int_eq(er_result_bounds(r, o, &bd, msg, sizeof msg), ER_OK);
        ck_assert_int_eq(er_result_covers(r, o, &O, tcov, &outside, msg, sizeof msg), ER_OK);
        ck_assert_msg(er_check_report_score(bd, &O, er_result_rounded(r), tcov, outside, &A, &B, NULL, 0, &tile, msg,
                                            sizeof msg) == ER_OK, "%s", msg);
        ck_assert_msg(er_check_report_merge_columns(&band, &tile, j0, tcov, bcov, msg, sizeof msg) == ER_OK, "%s", msg);
        for (int64_t i = 0; i < mb; i++) memcpy(d + i * N + j0, dt + i * w, sizeof *dt * (size_t)w);
        er_result_free(r);
    }
    ck_assert_int_eq(band.elements, mb * N);
    ck_assert_msg(er_check_report_merge(all, &band, bcov, NULL, idx, CAP, msg, sizeof msg) == ER_OK, "%s", msg);
    free(bcov);
    free(tcov);
    free(dt);
}

/* One batched (nb, m, N) or 2-D (nb = 0) problem: the one-shot report against merged block reports over
 * `splits` random splits into blocks of rows. */
static void one_problem(int64_t nb, int64_t m, int64_t N, int kind, int splits, int tiles, uint64_t *state)
{
    int64_t bat = nb ? nb : 1, count = bat * m * N;
    uint16_t *av = malloc(sizeof *av * (size_t)(bat * m * K)), *bv = malloc(sizeof *bv * (size_t)(bat * K * N));
    float *dv = malloc(sizeof *dv * (size_t)count), *dv2 = malloc(sizeof *dv2 * (size_t)count),
          *out = malloc(sizeof *out * (size_t)count);
    unsigned char *cov = malloc((size_t)count);
    int64_t idx1[CAP], idx2[CAP], pidx[CAP];
    char msg[512];
    ck_assert(av && bv && dv && dv2 && out && cov);
    bf16_fill(av, bat * m * K, state);
    bf16_fill(bv, bat * K * N, state);
    er_tensor A = nb ? er_tensor_3d(ER_FMT_BF16, nb, m, K, av) : er_tensor_2d(ER_FMT_BF16, m, K, av);
    er_tensor B = nb ? er_tensor_3d(ER_FMT_BF16, nb, K, N, bv) : er_tensor_2d(ER_FMT_BF16, K, N, bv);
    er_tensor D = nb ? er_tensor_3d(ER_FMT_F32, nb, m, N, dv) : er_tensor_2d(ER_FMT_F32, m, N, dv);
    er_tensor O = nb ? er_tensor_3d(ER_FMT_F32, nb, m, N, out) : er_tensor_2d(ER_FMT_F32, m, N, out);
    er_tensor D2 = nb ? er_tensor_3d(ER_FMT_F32, nb, m, N, dv2) : er_tensor_2d(ER_FMT_F32, m, N, dv2);
    er_result *r = make(&A, &B, &D);
    er_tol_opts o;
    er_tol_opts_init(&o);
    const er_bounds *bd;
    ck_assert_int_eq(er_result_bounds(r, &o, &bd, msg, sizeof msg), ER_OK);
    make_output(dv, bd, count, kind, state, out);
    er_check_report one;
    ck_assert_msg(er_check_report_compute(r, &o, &O, &A, &B, idx1, CAP, &one, msg, sizeof msg) == ER_OK, "%s", msg);
    ck_assert(one.outside > CAP);
    if (kind == 1) ck_assert_int_eq(one.narrower_format, ER_FMT_BF16);
    for (int s = 0; s < splits; s++) {
        er_check_report all;
        er_check_report_merge_init(&all, O.ndim, O.shape, O.format);
        memset(dv2, 0xA5, sizeof *dv2 * (size_t)count);
        /* blocks: whole matrices of the batch (3-D views) or rows of one matrix (2-D views) */
        for (int64_t b = 0; b < bat;) {
            int64_t take_b = nb ? (int64_t)(er_test_rand(state) % 3) : 0;
            if (take_b > bat - b) take_b = bat - b;
            if (take_b > 0) {
                er_tensor a = er_tensor_3d(ER_FMT_BF16, take_b, m, K, av + b * m * K);
                er_tensor bb = er_tensor_3d(ER_FMT_BF16, take_b, K, N, bv + b * K * N);
                er_tensor d = er_tensor_3d(ER_FMT_F32, take_b, m, N, dv2 + b * m * N);
                er_tensor ob = er_tensor_3d(ER_FMT_F32, take_b, m, N, out + b * m * N);
                er_result *rb = make(&a, &bb, &d);
                const er_bounds *bb_bd;
                er_check_report part;
                int64_t outside;
                ck_assert_int_eq(er_result_bounds(rb, &o, &bb_bd, msg, sizeof msg), ER_OK);
                ck_assert_int_eq(er_result_covers(rb, &o, &ob, cov, &outside, msg, sizeof msg), ER_OK);
                ck_assert_msg(er_check_report_score(bb_bd, &ob, er_result_rounded(rb), cov, outside, &a, &bb, pidx, CAP,
                                                    &part, msg, sizeof msg) == ER_OK, "%s", msg);
                ck_assert_msg(er_check_report_merge(&all, &part, cov, pidx, idx2, CAP, msg, sizeof msg) == ER_OK, "%s",
                              msg);
                er_result_free(rb);
                b += take_b;
                continue;
            }
            for (int64_t r0 = 0; r0 < m;) {
                int64_t mb = 1 + (int64_t)(er_test_rand(state) % (uint64_t)(m - r0));
                if (er_test_rand(state) % 4 == 0) mb = m - r0; /* long blocks too */
                int64_t row = b * m + r0;
                if (!nb && tiles) { /* the band in column tiles, in a random order */
                    merge_band(&all, av + row * K, bv, dv2 + row * N, out + row * N, mb, N, idx2, &o, state);
                    r0 += mb;
                    continue;
                }
                er_tensor a = er_tensor_2d(ER_FMT_BF16, mb, K, av + row * K);
                er_tensor bb = er_tensor_2d(ER_FMT_BF16, K, N, bv + (nb ? b * K * N : 0));
                er_tensor d = er_tensor_2d(ER_FMT_F32, mb, N, dv2 + row * N);
                er_tensor ob = er_tensor_2d(ER_FMT_F32, mb, N, out + row * N);
                er_result *rb = make(&a, &bb, &d);
                const er_bounds *bb_bd;
                er_check_report part;
                int64_t outside;
                ck_assert_int_eq(er_result_bounds(rb, &o, &bb_bd, msg, sizeof msg), ER_OK);
                ck_assert_int_eq(er_result_covers(rb, &o, &ob, cov, &outside, msg, sizeof msg), ER_OK);
                ck_assert_msg(er_check_report_score(bb_bd, &ob, er_result_rounded(rb), cov, outside, &a, &bb, pidx, CAP,
                                                    &part, msg, sizeof msg) == ER_OK, "%s", msg);
                ck_assert_msg(er_check_report_merge(&all, &part, cov, pidx, idx2, CAP, msg, sizeof msg) == ER_OK, "%s",
                              msg);
                er_result_free(rb);
                r0 += mb;
            }
            b++;
        }
        ck_assert_int_eq(all.elements, count);
        ck_assert(memcmp(dv, dv2, sizeof *dv * (size_t)count) == 0); /* the blocks' answers are the whole's */
        ck_assert_int_eq(all.narrower_format, -1);
        ck_assert_int_eq(er_check_report_narrower(&all, &O, &D2, A.format, B.format, msg, sizeof msg), ER_OK);
        ck_assert_int_eq(all.outside, one.outside);
        ck_assert_int_eq(all.worst, one.worst);
        ck_assert_int_eq(all.outside_listed, one.outside_listed);
        ck_assert(memcmp(idx1, idx2, sizeof idx1[0] * (size_t)one.outside_listed) == 0);
        ck_assert(memcmp(all.map, one.map, sizeof one.map) == 0);
        ck_assert(memcmp(&all, &one, sizeof one) == 0);
    }
    er_result_free(r);
    free(av);
    free(bv);
    free(dv);
    free(dv2);
    free(out);
    free(cov);
}

START_TEST(split_2d)
{
    uint64_t state = er_test_seed("report_merge_split_2d");
    one_problem(0, 41, 23, 0, 12, 0, &state);
    one_problem(0, 70, 37, 0, 6, 0, &state); /* more than ER_REPORT_MAP rows: blocks straddle the map's cells */
}
END_TEST

/* bands of rows in column tiles (er_check_report_merge_columns), tiles in a random order */
START_TEST(split_tiles)
{
    uint64_t state = er_test_seed("report_merge_split_tiles");
    one_problem(0, 41, 23, 0, 10, 1, &state);
    one_problem(0, 70, 45, 0, 4, 1, &state);
}
END_TEST

START_TEST(split_batched)
{
    uint64_t state = er_test_seed("report_merge_split_batched");
    one_problem(4, 9, 11, 0, 10, 0, &state);
}
END_TEST

START_TEST(widened_hint)
{
    uint64_t state = er_test_seed("report_merge_widened_hint");
    one_problem(0, 33, 17, 1, 4, 0, &state);
    one_problem(0, 33, 17, 1, 3, 1, &state);
}
END_TEST

/* Blocks that do not follow: refused, the report unchanged. */
START_TEST(refusals)
{
    er_check_report into, part;
    int64_t shape[2] = {4, 5}, pshape[2] = {2, 3};
    char msg[256];
    er_check_report_merge_init(&into, 2, shape, ER_FMT_F32);
    er_check_report_merge_init(&part, 2, pshape, ER_FMT_F32);
    part.elements = 6; /* rows of 3 columns, not the output's 5 */
    ck_assert_int_eq(er_check_report_merge(&into, &part, NULL, NULL, NULL, 0, msg, sizeof msg), ER_EINVAL);
    ck_assert(strstr(msg, "whole rows") != NULL);
    pshape[1] = 5;
    er_check_report_merge_init(&part, 2, pshape, ER_FMT_F32);
    part.elements = 25; /* more than the output has */
    ck_assert_int_eq(er_check_report_merge(&into, &part, NULL, NULL, NULL, 0, msg, sizeof msg), ER_EINVAL);
    part.elements = 10;
    part.outside = 1; /* outside elements without their covered array */
    ck_assert_int_eq(er_check_report_merge(&into, &part, NULL, NULL, NULL, 0, msg, sizeof msg), ER_EINVAL);
    part.format = ER_FMT_BF16;
    ck_assert_int_eq(er_check_report_merge(&into, &part, NULL, NULL, NULL, 0, msg, sizeof msg), ER_EINVAL);
    ck_assert_int_eq(into.elements, 0);
    ck_assert_int_eq(into.worst, -1);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("report_merge");
    TCase *tc = tcase_create("merge");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, split_2d);
    tcase_add_test(tc, split_tiles);
    tcase_add_test(tc, split_batched);
    tcase_add_test(tc, widened_hint);
    tcase_add_test(tc, refusals);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
