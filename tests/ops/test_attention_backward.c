/* test_attention_backward.c: attention.backward's dq, dk, dv against a plain MPFR computation (rounded
 * bit for bit, f32, causal and not, grouped-query, a cancelling case decided at high precision), its own answer
 * covered under every standard, and a gradient with the scale applied twice caught. */
#include <check.h>
#include <math.h>
#include <mpfr.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "er_test.h"
#include "exactref/exactref.h"

enum { B = 1, HQ = 2, HK = 1, S = 12, DH = 6 };
#define NQ (B * HQ * S * DH)
#define NK (B * HK * S * DH)

static uint64_t seed;

/* the gradients at 320 bits, rounded to nearest once into binary32 (an independent, textbook computation) */
static void mpfr_grads(const float *q, const float *k, const float *v, const float *g, double scale, int causal,
                       float *dq, float *dk, float *dv)
{
    mpfr_t P[S], dS[S], x, y, l, D, acc[NK], accv[NK];
    mpfr_inits2(320, x, y, l, D, (mpfr_ptr)0);
    for (int j = 0; j < S; j++) mpfr_init2(P[j], 320), mpfr_init2(dS[j], 320);
    for (int e = 0; e < NK; e++) mpfr_init2(acc[e], 320), mpfr_init2(accv[e], 320), mpfr_set_zero(acc[e], 1),
                                 mpfr_set_zero(accv[e], 1);
    for (int h = 0; h < HQ; h++) {
        int hk = h / (HQ / HK);
        for (int i = 0; i < S; i++) {
            const float *qi = q + (h * S + i) * DH, *gi = g + (h * S + i) * DH;
            int n = causal ? i + 1 : S;
            mpfr_set_zero(l, 1);
            for (int j = 0; j < n; j++) {
                mpfr_set_zero(x, 1);
                for (int c = 0; c < DH; c++) {
                    mpfr_set_flt(y, qi[c], MPFR_RNDN);
                    mpfr_mul_d(y, y, k[(hk * S + j) * DH + c], MPFR_RNDN);
                    mpfr_add(x, x, y, MPFR_RNDN);
                }
                mpfr_mul_d(x, x, scale, MPFR_RNDN);
                mpfr_exp(P[j], x, MPFR_RNDN);
                mpfr_add(l, l, P[j], MPFR_RNDN);
            }
            mpfr_set_zero(D, 1);
            for (int j = 0; j < n; j++) {
                mpfr_div(P[j], P[j], l, MPFR_RNDN);
                mpfr_set_zero(dS[j], 1);
                for (int c = 0; c < DH; c++) {
                    mpfr_set_flt(y, gi[c], MPFR_RNDN);
                    mpfr_mul_d(y, y, v[(hk * S + j) * DH + c], MPFR_RNDN);
                    mpfr_add(dS[j], dS[j], y, MPFR_RNDN);
                }
                mpfr_mul(y, P[j], dS[j], MPFR_RNDN);
                mpfr_add(D, D, y, MPFR_RNDN);
            }
            for (int j = 0; j < n; j++) {
                mpfr_sub(dS[j], dS[j], D, MPFR_RNDN);
                mpfr_mul(dS[j], dS[j], P[j], MPFR_RNDN);
                mpfr_mul_d(dS[j], dS[j], scale, MPFR_RNDN);
            }
            for (int c = 0; c < DH; c++) {
                mpfr_set_zero(x, 1);
                for (int j = 0; j < n; j++) {
                    mpfr_mul_d(y, dS[j], k[(hk * S + j) * DH + c], MPFR_RNDN);
                    mpfr_add(x, x, y, MPFR_RNDN);
                }
                dq[(h * S + i) * DH + c] = mpfr_get_flt(x, MPFR_RNDN);
            }
            for (int j = 0; j < n; j++)
                for (int c = 0; c < DH; c++) {
                    mpfr_mul_d(y, dS[j], qi[c], MPFR_RNDN);
                    mpfr_add(acc[(hk * S + j) * DH + c], acc[(hk * S + j) * DH + c], y, MPFR_RNDN);
                    mpfr_mul_d(y, P[j], gi[c], MPFR_RNDN);
                    mpfr_add(accv[(hk * S + j) * DH + c], accv[(hk * S + j) * DH + c], y, MPFR_RNDN);
                }
        }
    }
    for (int e = 0; e < NK; e++) dk[e] = mpfr_get_flt(acc[e], MPFR_RNDN), dv[e] = mpfr_get_flt(accv[e], MPFR_RNDN);
    mpfr_clears(x, y, l, D, (mpfr_ptr)0);
    for (int j = 0; j < S; j++) mpfr_clear(P[j]), mpfr_clear(dS[j]);
    for (int e = 0; e < NK; e++) mpfr_clear(acc[e]), mpfr_clear(accv[e]);
}

static float rnd(uint64_t *st) { return (float)((int64_t)(er_test_rand(st) % 257) - 128) * 0x1p-6f; }

START_TEST(backward_against_mpfr)
{
    uint64_t st = seed;
    static float q[NQ], k[NK], v[NK], g[NQ], dq[NQ], dk[NK], dv[NK];
    for (int cs = 0; cs < 3; cs++) {
        int causal = cs == 1;
        for (int e = 0; e < NQ; e++) q[e] = rnd(&st), g[e] = rnd(&st);
        for (int e = 0; e < NK; e++) k[e] = rnd(&st), v[e] = rnd(&st);
        if (cs == 2) {
            /* value rows equal but for a few ulps of column 0, a gradient whose dot products cancel: binary64
             * cannot decide most roundings and the high-precision path does */
            for (int e = 0; e < NK; e++) v[e] = e % DH ? 1.0f : 1.0f + (float)(er_test_rand(&st) % 4) * 0x1p-23f;
            for (int e = 0; e < NQ; e++) g[e] = e % DH == 0 ? 1.0f : e % DH == 1 ? -1.0f : 0.0f;
        }
        int64_t sq[4] = {B, HQ, S, DH}, sk[4] = {B, HK, S, DH};
        er_optensor tq = er_optensor_make(ER_FMT_F32, 4, sq, q), tk = er_optensor_make(ER_FMT_F32, 4, sk, k);
        er_optensor tv = er_optensor_make(ER_FMT_F32, 4, sk, v), tg = er_optensor_make(ER_FMT_F32, 4, sq, g);
        const er_optensor *in[5] = {&tq, &tk, &tv, NULL, &tg};
        char msg[512] = "";
        er_opres *r = NULL;
        er_status s = er_op_call_nd("attention.backward", 5, in, causal ? "is_causal=1,enable_gqa=1" : "enable_gqa=1", &r,
                                    msg, sizeof msg);
        ck_assert_msg(s == ER_OK, "%s", msg);
        ck_assert_int_eq(er_opres_outputs(r), 3);
        ck_assert_str_eq(er_opres_output_name(r, 0), "dq");
        mpfr_grads(q, k, v, g, 1.0 / sqrt((double)DH), causal, dq, dk, dv);
        const float *want[3] = {dq, dk, dv};
        for (int o = 0; o < 3; o++) {
            const er_optensor *t = er_opres_rounded(r, o);
            int64_t n = er_opres_count(r, o);
            ck_assert_int_eq(n, o == 0 ? NQ : NK);
            for (int64_t e = 0; e < n; e++) {
                uint32_t a, b;
                memcpy(&a, (const char *)t->data + 4 * e, 4);
                memcpy(&b, &want[o][e], 4);
                ck_assert_msg(a == b, "output %d element %lld: 0x%08x, MPFR 0x%08x (case %d, seed 0x%llx)", o,
                              (long long)e, a, b, cs, (unsigned long long)seed);
            }
        }
        /* its own answer is covered under every standard; dq with the scale applied twice is not */
        static const char *const stds[] = {"normal", "any_order", "flash", "flash:block=4"};
        for (int d = 0; d < 4; d++) {
            er_tol_opts opt;
            er_tol_opts_init(&opt);
            ck_assert_msg(er_standard_parse(stds[d], &opt.standard, msg, sizeof msg) == ER_OK, "%s", msg);
            unsigned char cov[NQ];
            for (int o = 0; o < 3; o++) {
                int64_t out = -1;
                ck_assert_msg(er_opres_covers(r, o, &opt, er_opres_rounded(r, o), cov, &out, msg, sizeof msg) == ER_OK,
                              "%s", msg);
                ck_assert_msg(out == 0, "%s: output %d: %lld of its own elements outside", stds[d], o, (long long)out);
            }
            static float twice[NQ];
            for (int e = 0; e < NQ; e++) twice[e] = (float)(dq[e] / sqrt((double)DH));
            er_optensor tt = er_optensor_make(ER_FMT_F32, 4, sq, twice);
            int64_t out = -1;
            ck_assert_msg(er_opres_covers(r, 0, &opt, &tt, cov, &out, msg, sizeof msg) == ER_OK, "%s", msg);
            if (cs < 2) ck_assert_msg(out > NQ / 2, "%s: the scale applied twice: only %lld of %d outside", stds[d], (long long)out, NQ);
        }
        er_opres_free(r);
    }
}
END_TEST

int main(void)
{
    seed = er_test_seed("test_attention_backward");
    Suite *su = suite_create("attention_backward");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, backward_against_mpfr);
    suite_add_tcase(su, tc);
    SRunner *sr = srunner_create(su);
    srunner_run_all(sr, CK_NORMAL);
    int nf = srunner_ntests_failed(sr);
    srunner_free(sr);
    return nf ? 1 : 0;
}
