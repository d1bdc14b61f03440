/* test_backend_normal.c: normal() (er_result_normal) on every backend present: on the CPU against an
 * independent reference (tests/backends/normal_ref.c: the host's binary64 arithmetic with TwoSum and
 * round to odd), and on OpenCL and CUDA (the core's integer emulation in their kernels) against the
 * CPU, byte for byte.  The suite of test_backends, run once per backend (er_tb).
 *
 * Each problem is made into a Result on the CPU (and on the backend under test), and normal() of each
 * (output tensors filled with the same junk first) must be byte-identical to the other's:
 *   random     every float input format, output format and direction, C or not, saturation and
 *              flush options, compute f64/f32/tf32/f16/bf16/f8 formats or the default, flush_to_zero
 *              on and off, 12% special values, batches with broadcast operands and transposed views
 *   scaled     block-scaled operands (both scale formats)
 *   overflow   partial sums restarted where the next addition would overflow (f16, bf16, f32, f64)
 *   nans       the host's NaN rules (0 x inf and inf - inf give the default NaN; a NaN operand
 *              propagates, the first of two), k = 0, and subnormal sums with flush_to_zero
 * The random tests print their seed (EXACTREF_SEED).
 */
#define _POSIX_C_SOURCE 200809L

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "er_tb.h"
#include "er_test.h"
#include "normal_ref.h"
#include "exactref/exactref.h"

#define NFLOAT 13
#define MSG 8192

/* scales from mode 0 */
#define ER_PROB_S_MODE 0
#include "er_test_prob.h"

static long g_compared, g_elements;

/* normal(compute, ftz) of P on the CPU and on the backend under test (on the CPU: the reference): the
 * same bytes. */
static void check_prob(prob *P, const int *computes, int ncomp, const char *what)
{
    er_result *r[2] = {NULL, NULL};
    unsigned char *d[2], *out[2];
    er_tensor D[2], O[2];
    size_t nb = (size_t)((P->batch ? P->batch : 1) * P->m * P->n) * (size_t)sbytes(P->fd);
    char msg[MSG];
    int cpu = er_tb->backend == ER_BACKEND_CPU;
    const char *name[2] = {"cpu", cpu ? "reference" : er_tb->name};
    er_mma_args args[2];
    for (int be = 0; be < 2; be++) {
        er_mma_args a;
        er_status st;
        d[be] = (unsigned char *)malloc(nb ? nb : 1);
        out[be] = (unsigned char *)malloc(nb ? nb : 1);
        ck_assert(d[be] && out[be]);
        memset(d[be], 0xA5, nb);
        D[be] = P->batch ? er_tensor_3d(P->fd, P->batch, P->m, P->n, d[be]) : er_tensor_2d(P->fd, P->m, P->n, d[be]);
        O[be] = D[be];
        O[be].data = out[be];
        er_mma_args_init(&a);
        a.a = &P->A.t;
        a.b = &P->B.t;
        a.c = P->fc >= 0 ? &P->C.t : NULL;
        if (P->fs >= 0) {
            a.a_scale = &P->SA.t;
            a.b_scale = &P->SB.t;
            a.block = P->block;
        }
        a.d = &D[be];
        a.rounding = P->dir;
        a.opts = P->opts;
        a.backend = be ? er_tb->backend : ER_BACKEND_CPU;
        args[be] = a;
        args[be].d = &O[be];
        st = er_result_create(&a, &r[be], msg, sizeof msg);
        ck_assert_msg(st == ER_OK, "%s: er_result_create (%s): %s", what, name[be], msg);
    }
    ck_assert_msg(!memcmp(d[0], d[1], nb), "%s: rounded differs", what);
    for (int q = 0; q < ncomp; q++)
        for (int ftz = 0; ftz < 2; ftz++) {
            for (int be = 0; be < 2; be++) {
                er_status st;
                memset(out[be], 0x5A, nb);
                if (be && cpu) {
                    int c = computes[q] < 0 ? er_result_default_compute(r[0]) : computes[q];
                    st = er_tb_normal_ref(&args[1], c, ftz, &O[1]);
                    snprintf(msg, sizeof msg, "out of memory");
                } else {
                    st = er_result_normal(r[be], computes[q], ftz, &O[be], msg, sizeof msg);
                }
                ck_assert_msg(st == ER_OK, "%s: normal (%s, compute %d): %s", what, name[be], computes[q], msg);
            }
            if (memcmp(out[0], out[1], nb)) {
                int eb = sbytes(P->fd);
                for (size_t e = 0; e * (size_t)eb < nb; e++)
                    if (memcmp(out[0] + e * (size_t)eb, out[1] + e * (size_t)eb, (size_t)eb)) {
                        uint64_t x = 0, y = 0;
                        memcpy(&x, out[0] + e * (size_t)eb, (size_t)eb);
                        memcpy(&y, out[1] + e * (size_t)eb, (size_t)eb);
                        ck_abort_msg("%s: normal(compute %s, ftz %d) element %zu: cpu 0x%llx, %s 0x%llx (%s x %s -> %s, "
                                     "c %d, k %lld, dir %d, opts %u)",
                                     what, computes[q] < 0 ? "default" : er_format_name(computes[q]), ftz, e,
                                     (unsigned long long)x, name[1], (unsigned long long)y, er_format_name(P->fa),
                                     er_format_name(P->fb), er_format_name(P->fd), P->fc, (long long)P->k, P->dir, P->opts);
                    }
            }
            g_compared++;
            g_elements += (long)(nb / (size_t)sbytes(P->fd));
        }
    for (int be = 0; be < 2; be++) {
        er_result_free(r[be]);
        free(d[be]);
        free(out[be]);
    }
}

static const unsigned opt_set[4] = {0u, ER_OPT_SATURATE, ER_OPT_FTZ, ER_OPT_SATURATE | ER_OPT_FTZ};

START_TEST(test_random)
{
    static const int comps[] = {-1, ER_FMT_F64, ER_FMT_F32, ER_FMT_TF32, ER_FMT_F16, ER_FMT_BF16, ER_FMT_F8E4M3FN,
                                ER_FMT_F8E5M2, ER_FMT_F8E4M3FNUZ};
    uint64_t rng = er_tb_seed("normal", "random");
    for (int it = 0; it < 90; it++) {
        prob P;
        int cs[2];
        char what[64];
        memset(&P, 0, sizeof P);
        P.fa = (int)below(&rng, NFLOAT);
        P.fb = (int)below(&rng, NFLOAT);
        P.fd = (int)below(&rng, NFLOAT);
        P.fc = below(&rng, 2) ? (int)below(&rng, NFLOAT) : -1;
        P.fs = -1;
        P.block = 1;
        P.dir = (int)below(&rng, ER_RND_COUNT);
        P.opts = opt_set[below(&rng, 4)];
        P.m = 1 + (int64_t)below(&rng, 4);
        P.n = 1 + (int64_t)below(&rng, 4);
        P.k = (int64_t)below(&rng, 40);
        if (below(&rng, 4) == 0) {
            P.batch = 2;
            P.a2d = below(&rng, 3) == 0;
            P.b2d = !P.a2d && below(&rng, 3) == 0;
        }
        P.at = below(&rng, 3) == 0;
        P.bt = below(&rng, 3) == 0;
        P.mode = (int)below(&rng, 3);
        P.spec = below(&rng, 2) ? 12 : 0;
        cs[0] = comps[below(&rng, sizeof comps / sizeof comps[0])];
        cs[1] = comps[below(&rng, sizeof comps / sizeof comps[0])];
        prob_make(&P, &rng);
        snprintf(what, sizeof what, "random %d", it);
        check_prob(&P, cs, 2, what);
        prob_free(&P);
    }
}
END_TEST

START_TEST(test_scaled)
{
    static const int elems[5] = {ER_FMT_F8E4M3FN, ER_FMT_F8E5M2, ER_FMT_F6E2M3FN, ER_FMT_F6E3M2FN, ER_FMT_F4E2M1FN};
    static const int comps[3] = {-1, ER_FMT_F16, ER_FMT_F64};
    uint64_t rng = er_tb_seed("normal", "scaled");
    for (int it = 0; it < 16; it++) {
        prob P;
        char what[64];
        memset(&P, 0, sizeof P);
        P.fa = elems[below(&rng, 5)];
        P.fb = elems[below(&rng, 5)];
        P.fs = it % 2 ? ER_FMT_F8E4M3FN : ER_FMT_F8E8M0FNU;
        P.block = (int)(1 + below(&rng, 8));
        P.fd = (int)below(&rng, NFLOAT);
        P.fc = below(&rng, 2) ? ER_FMT_F32 : -1;
        P.dir = (int)below(&rng, ER_RND_COUNT);
        P.opts = opt_set[below(&rng, 4)];
        P.m = 1 + (int64_t)below(&rng, 3);
        P.n = 1 + (int64_t)below(&rng, 3);
        P.k = 1 + (int64_t)below(&rng, 30);
        P.mode = (int)below(&rng, 2);
        P.spec = 5;
        prob_make(&P, &rng);
        snprintf(what, sizeof what, "scaled %d", it);
        check_prob(&P, comps, 3, what);
        prob_free(&P);
    }
}
END_TEST

/* Partial sums: rows of large values of both signs, so that sums overflow and restart. */
START_TEST(test_overflow)
{
    static const int fm[4] = {ER_FMT_F16, ER_FMT_BF16, ER_FMT_F32, ER_FMT_F64};
    uint64_t rng = er_tb_seed("normal", "overflow");
    for (int it = 0; it < 8; it++) {
        prob P;
        char what[64];
        int comp[2];
        memset(&P, 0, sizeof P);
        P.fa = P.fb = P.fd = fm[it % 4];
        P.fc = it >= 4 ? fm[it % 4] : -1;
        P.fs = -1;
        P.block = 1;
        P.dir = it % ER_RND_COUNT;
        P.m = 3;
        P.n = 3;
        P.k = 24;
        P.mode = 2; /* A near the top of the range, B in [1/4, 1): finite products, sums that overflow */
        comp[0] = fm[it % 4];
        comp[1] = -1;
        prob_make(&P, &rng);
        snprintf(what, sizeof what, "overflow %s", er_format_name(fm[it % 4]));
        check_prob(&P, comp, 2, what);
        prob_free(&P);
    }
}
END_TEST

/* NaN rules, k = 0 and small sums, with explicit f32 operands. */
START_TEST(test_nans)
{
    static const float inf = __builtin_inff();
    const float nan = __builtin_nanf("");
    static const int comps[4] = {ER_FMT_F32, ER_FMT_F64, ER_FMT_F16, ER_FMT_BF16};
    const float rows[][4] = {{0, nan, 0, 0}, {nan, 0, 0, 0}, {inf, -inf, 0, 0}, {0, 1, 0, 0}, {-nan, 1, 0, 0},
                             {inf, nan, 1, 0}, {1e-40f, 1e-40f, -1e-45f, 0}, {3e38f, 3e38f, -3e38f, 1}};
    const float cols[][4] = {{inf, 1, 1, 1}, {1, inf, 1, 1}, {1, 1, 1, 1}, {inf, 1, 1, 1}, {1, 1, 1, 1},
                             {1, 1, 1, 1}, {1, 1, 1, 1}, {1, 1, 1, 1}};
    for (size_t q = 0; q < sizeof rows / sizeof rows[0]; q++)
        for (int withc = 0; withc < 2; withc++) {
            prob P;
            char what[64];
            memset(&P, 0, sizeof P);
            P.fa = P.fb = P.fd = ER_FMT_F32;
            P.fc = withc ? ER_FMT_F32 : -1;
            P.fs = -1;
            P.block = 1;
            P.m = 1;
            P.n = 1;
            P.k = 4;
            {
                uint64_t st = 1;
                prob_make(&P, &st);
            }
            memcpy(P.A.mem, rows[q], sizeof rows[q]);
            memcpy(P.B.mem, cols[q], sizeof cols[q]);
            if (withc) {
                float c = q % 2 ? -nan : -0.0f;
                memcpy(P.C.mem, &c, 4);
            }
            snprintf(what, sizeof what, "nans %zu c %d", q, withc);
            check_prob(&P, comps, 4, what);
            prob_free(&P);
        }
    {
        /* k = 0: C alone, or +0 */
        prob P;
        uint64_t st = 7;
        memset(&P, 0, sizeof P);
        P.fa = P.fb = ER_FMT_BF16;
        P.fd = ER_FMT_F16;
        P.fc = -1;
        P.fs = -1;
        P.block = 1;
        P.m = 2;
        P.n = 2;
        P.k = 0;
        P.dir = ER_RND_NEGATIVE_INF;
        prob_make(&P, &st);
        check_prob(&P, comps, 4, "k = 0");
        prob_free(&P);
    }
}
END_TEST

Suite *er_tb_normal_suite(void)
{
    Suite *s = suite_create(er_tb->name);
    TCase *tc = tcase_create("normal");
    tcase_add_test(tc, test_nans);
    tcase_add_test(tc, test_overflow);
    tcase_add_test(tc, test_scaled);
    tcase_add_test(tc, test_random);
    tcase_set_timeout(tc, 300);
    suite_add_tcase(s, tc);
    return s;
}

void er_tb_normal_summary(void)
{
    printf("%s: %ld normal() comparisons, %ld elements\n", er_tb->label, g_compared, g_elements);
    g_compared = 0;
    g_elements = 0;
}
