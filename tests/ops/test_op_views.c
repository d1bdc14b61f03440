/* test_op_views.c: er_opres_normal and the views er_opres_transpose / er_opres_reshape in C: add's normal() is
 * binary32's own sum bit for bit, softmax's normal() lies within its normal bounds, a transposed view's rounded,
 * exact, bounds and normal() are the base's moved, a view is an input of er_op_call_from (the exact answer on
 * the moved rounded, bounds at least as wide as on that array), bad views are refused, and every operation's
 * normal() lies within its normal bounds. */
#define _POSIX_C_SOURCE 200809L
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "er_test.h"
#include "exactref/exactref.h"

enum { R = 5, C = 7 };

static float frand(uint64_t *st) { return (float)((double)(er_test_rand(st) >> 11) * 0x1p-53 * 6 - 3); }

START_TEST(normal_of_add_and_softmax)
{
    uint64_t st = er_test_seed("op_normal");
    static float a[R * C], b[C], y[R * C], want[R * C];
    char msg[512] = "";
    for (int e = 0; e < R * C; e++) a[e] = frand(&st);
    for (int e = 0; e < C; e++) b[e] = frand(&st);
    int64_t sa[2] = {R, C}, sb[1] = {C};
    er_optensor A = er_optensor_make(ER_FMT_F32, 2, sa, a), B = er_optensor_make(ER_FMT_F32, 1, sb, b);
    const er_optensor *in[2] = {&A, &B};
    er_opres *r = NULL, *sm = NULL;
    ck_assert_msg(er_op_call_nd("add", 2, in, NULL, &r, msg, sizeof msg) == ER_OK, "%s", msg);
    ck_assert_msg(er_opres_normal(r, 0, -1, 0, y, msg, sizeof msg) == ER_OK, "%s", msg);
    for (int e = 0; e < R * C; e++) want[e] = a[e] + b[e % C];
    ck_assert(memcmp(y, want, sizeof y) == 0);
    ck_assert_int_eq(er_opres_normal(r, 1, -1, 0, y, msg, sizeof msg), ER_EINVAL);
    er_opres_free(r);
    /* softmax: normal() within the normal bounds */
    ck_assert_msg(er_op_call_nd("softmax", 1, in, "dim=-1", &sm, msg, sizeof msg) == ER_OK, "%s", msg);
    ck_assert_msg(er_opres_normal(sm, 0, -1, 0, y, msg, sizeof msg) == ER_OK, "%s", msg);
    er_optensor Y = er_optensor_make(ER_FMT_F32, 2, sa, y);
    int64_t outside = -1;
    ck_assert_msg(er_opres_covers(sm, 0, NULL, &Y, NULL, &outside, msg, sizeof msg) == ER_OK, "%s", msg);
    ck_assert_int_eq(outside, 0);
    /* a value 1% off in one place is caught */
    y[3] *= 1.01f;
    ck_assert_int_eq(er_opres_covers(sm, 0, NULL, &Y, NULL, &outside, msg, sizeof msg), ER_OK);
    ck_assert_int_eq(outside, 1);
    er_opres_free(sm);
}
END_TEST

START_TEST(transpose_moves_everything)
{
    uint64_t st = er_test_seed("op_views");
    static float x[R * C], n[R * C], nv[R * C], moved[R * C];
    static double lo[R * C], hi[R * C], vlo[R * C], vhi[R * C];
    char msg[512] = "";
    for (int e = 0; e < R * C; e++) x[e] = frand(&st);
    int64_t sx[2] = {R, C};
    er_optensor X = er_optensor_make(ER_FMT_F32, 2, sx, x);
    const er_optensor *in[1] = {&X};
    er_opres *sm = NULL, *v = NULL, *bad = NULL;
    ck_assert_msg(er_op_call_nd("softmax", 1, in, "dim=0", &sm, msg, sizeof msg) == ER_OK, "%s", msg);
    ck_assert_msg(er_opres_transpose(sm, 0, 0, -1, &v, msg, sizeof msg) == ER_OK, "%s", msg);
    ck_assert_str_eq(er_opres_op(v), "softmax");
    ck_assert_int_eq(er_opres_outputs(v), 1);
    const er_optensor *rv = er_opres_rounded(v, 0), *rb = er_opres_rounded(sm, 0);
    ck_assert_int_eq(rv->ndim, 2);
    ck_assert_int_eq(rv->shape[0], C);
    ck_assert_int_eq(rv->shape[1], R);
    ck_assert_int_eq(er_opres_exact(sm, 0, lo, hi, msg, sizeof msg), ER_OK);
    ck_assert_int_eq(er_opres_exact(v, 0, vlo, vhi, msg, sizeof msg), ER_OK);
    ck_assert_int_eq(er_opres_normal(sm, 0, -1, 0, n, msg, sizeof msg), ER_OK);
    ck_assert_int_eq(er_opres_normal(v, 0, -1, 0, nv, msg, sizeof msg), ER_OK);
    er_tol_opts any;
    er_tol_opts_init(&any);
    er_standard_parse("any_order", &any.standard, msg, sizeof msg);
    const er_bounds *bb, *bv;
    ck_assert_int_eq(er_opres_bounds(sm, 0, &any, &bb, msg, sizeof msg), ER_OK);
    ck_assert_int_eq(er_opres_bounds(v, 0, &any, &bv, msg, sizeof msg), ER_OK);
    for (int i = 0; i < C; i++)
        for (int j = 0; j < R; j++) {
            int e = i * R + j, k = j * C + i;
            ck_assert(((const float *)rv->data)[e] == ((const float *)rb->data)[k]);
            ck_assert(vlo[e] == lo[k] && vhi[e] == hi[k]);
            ck_assert(nv[e] == n[k]);
            ck_assert(bv->tolerance[e] == bb->tolerance[k] && bv->low[e] == bb->low[k] && bv->high[e] == bb->high[k]);
            moved[e] = ((const float *)rb->data)[k];
        }
    /* the view as an input: gelu's exact answer on the moved rounded, bounds at least as wide */
    er_opinput gi[1] = {{NULL, NULL, v, 0}};
    int64_t sm_shape[2] = {C, R};
    er_optensor M = er_optensor_make(ER_FMT_F32, 2, sm_shape, moved);
    const er_optensor *min[1] = {&M};
    er_opres *gv = NULL, *ga = NULL;
    ck_assert_msg(er_op_call_from("gelu", 1, gi, NULL, NULL, &gv, msg, sizeof msg) == ER_OK, "%s", msg);
    ck_assert_msg(er_op_call_nd("gelu", 1, min, NULL, &ga, msg, sizeof msg) == ER_OK, "%s", msg);
    ck_assert(memcmp(er_opres_rounded(gv, 0)->data, er_opres_rounded(ga, 0)->data, sizeof moved) == 0);
    const er_bounds *tv, *ta;
    ck_assert_int_eq(er_opres_bounds(gv, 0, NULL, &tv, msg, sizeof msg), ER_OK);
    ck_assert_int_eq(er_opres_bounds(ga, 0, NULL, &ta, msg, sizeof msg), ER_OK);
    int wider = 0;
    for (int e = 0; e < R * C; e++) {
        ck_assert(tv->tolerance[e] >= ta->tolerance[e]);
        wider += tv->tolerance[e] > ta->tolerance[e];
    }
    ck_assert_int_gt(wider, 0); /* the softmax's slack is taken */
    /* refusals */
    int64_t wrong[2] = {6, 6};
    ck_assert_int_eq(er_opres_reshape(sm, 0, 2, wrong, &bad, msg, sizeof msg), ER_EINVAL);
    ck_assert(strstr(msg, "elements") != NULL);
    ck_assert(bad == NULL);
    ck_assert_int_eq(er_opres_transpose(sm, 0, 0, 2, &bad, msg, sizeof msg), ER_EINVAL);
    ck_assert_int_eq(er_opres_transpose(sm, 1, 0, 1, &bad, msg, sizeof msg), ER_EINVAL);
    int64_t flat[1] = {R * C};
    ck_assert_int_eq(er_opres_reshape(v, 0, 1, flat, &bad, msg, sizeof msg), ER_OK); /* a view of a view */
    ck_assert(((const float *)er_opres_rounded(bad, 0)->data)[1] == moved[1]);
    er_opres_free(bad);
    er_opres_free(gv);
    er_opres_free(ga);
    er_opres_free(v);
    er_opres_free(sm);
}
END_TEST

/* every emulation once (memory checked under the sanitizer build): normal() of each output within its bounds */
static void normal_covered(const char *op, int nin, const er_optensor *const *in, const char *opts)
{
    char msg[512] = "";
    er_opres *r = NULL;
    ck_assert_msg(er_op_call_nd(op, nin, in, opts, &r, msg, sizeof msg) == ER_OK, "%s: %s", op, msg);
    for (int i = 0; i < er_opres_outputs(r); i++) {
        const er_optensor *t = er_opres_rounded(r, i);
        er_format_info fi;
        er_format_get_info(t->format, &fi);
        int64_t n = er_opres_count(r, i);
        void *buf = calloc((size_t)(n ? n : 1), (size_t)fi.storage_bytes);
        ck_assert_msg(er_opres_normal(r, i, -1, 0, buf, msg, sizeof msg) == ER_OK, "%s: %s", op, msg);
        er_optensor Y = er_optensor_make(t->format, t->ndim, t->shape, buf);
        int64_t outside = -1;
        ck_assert_msg(er_opres_covers(r, i, NULL, &Y, NULL, &outside, msg, sizeof msg) == ER_OK, "%s: %s", op, msg);
        ck_assert_msg(outside == 0, "%s output %d: %lld outside", op, i, (long long)outside);
        free(buf);
    }
    er_opres_free(r);
}

START_TEST(every_emulation)
{
    uint64_t st = er_test_seed("op_normal_all");
    static float x[4 * 64], g[4 * 64], w[64], b[64], q[2 * 8 * 4], k[2 * 8 * 4], v[2 * 8 * 4];
    for (int e = 0; e < 4 * 64; e++) x[e] = frand(&st), g[e] = frand(&st) / 3;
    for (int e = 0; e < 64; e++) w[e] = frand(&st) / 3, b[e] = frand(&st) / 3;
    for (int e = 0; e < 2 * 8 * 4; e++) q[e] = frand(&st) / 2, k[e] = frand(&st) / 2, v[e] = frand(&st);
    int64_t sx[2] = {4, 64}, sw[1] = {64}, sa[4] = {1, 2, 8, 4}, sb4[1] = {4};
    er_optensor X = er_optensor_make(ER_FMT_F32, 2, sx, x), G = er_optensor_make(ER_FMT_F32, 2, sx, g);
    er_optensor W = er_optensor_make(ER_FMT_F32, 1, sw, w), B = er_optensor_make(ER_FMT_F32, 1, sw, b);
    er_optensor Q = er_optensor_make(ER_FMT_F32, 4, sa, q), K = er_optensor_make(ER_FMT_F32, 4, sa, k);
    er_optensor V = er_optensor_make(ER_FMT_F32, 4, sa, v), L = er_optensor_make(ER_FMT_F32, 2, sx, g);
    er_optensor B4 = er_optensor_make(ER_FMT_F32, 1, sb4, b);
    const er_optensor *x1[1] = {&X}, *xg[2] = {&X, &G}, *xw[2] = {&X, &W}, *xwb[3] = {&X, &W, &B};
    const er_optensor *lnb[4] = {&X, &W, &B, &G}, *rmsb[3] = {&X, &W, &G}, *qkv[3] = {&Q, &K, &V};
    const er_optensor *lin[3] = {&X, &L, &B4}; /* weight (4 x 64), bias (4) */
    const char *un[] = {"exp", "relu", "tanh", "sigmoid", "silu", "gelu", "softmax", "log_softmax", "logsumexp"};
    for (size_t u = 0; u < sizeof un / sizeof un[0]; u++) normal_covered(un[u], 1, x1, NULL);
    normal_covered("gelu", 1, x1, "approximate=tanh,out=bf16");
    normal_covered("add", 2, xw, "out=f16");
    normal_covered("mul", 2, xw, NULL);
    normal_covered("linear", 3, lin, NULL);
    normal_covered("layer_norm", 3, xwb, "normalized_shape=64");
    normal_covered("rms_norm", 2, xw, "normalized_shape=64,out=bf16");
    normal_covered("softmax.backward", 2, xg, NULL);
    normal_covered("log_softmax.backward", 2, xg, NULL);
    normal_covered("layer_norm.backward", 4, lnb, "normalized_shape=64");
    normal_covered("rms_norm.backward", 3, rmsb, "normalized_shape=64");
    normal_covered("attention", 3, qkv, "is_causal=1");
    normal_covered("quantize", 1, x1, "scheme=mx");
    normal_covered("quantize", 1, x1, "scheme=nvfp4");
    normal_covered("quantize", 1, x1, "scheme=row,fmt=f8e5m2");
}
END_TEST

int main(void)
{
    Suite *s = suite_create("op_views");
    TCase *tc = tcase_create("op_views");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, normal_of_add_and_softmax);
    tcase_add_test(tc, transpose_moves_everything);
    tcase_add_test(tc, every_emulation);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
