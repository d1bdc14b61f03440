/*
 * test_exhaustive.c (math_exhaustive_*): every pattern of a format with at most 2^16 values through
 * every unary function, and every pair (fp8, fp6, fp4) and every triple (fp6, fp4: fma) through the
 * binary functions, against the MPFR oracle (mo_oracle.c), bit for bit, flags checked; fma on random
 * triples of the fp8 formats, f16 and bf16 (seed from EXACTREF_SEED).  The group of
 * formats is the program's argument: "f16", "bf16", "fp8" or "small" (fp6, fp4: all directions).
 */
#include <string.h>

#include "mt_common.h"

static const char *group = "small";

static void unary_all(int fmt, int alldirs)
{
    const of_fmt *T = of_get(fmt);
    uint64_t n = UINT64_C(1) << T->width, b;
    int op, dir;
    for (op = ER_MATH_SQRT; op <= ER_MATH_CEIL; op++)
        for (b = 0; b < n; b++) {
            if (alldirs) {
                for (dir = 0; dir < ER_RND_COUNT; dir++)
                    mo_check("unary", op, fmt, &b, 1, dir);
            } else {
                mo_check("unary", op, fmt, &b, 1, (int)((b + (uint64_t)op) % ER_RND_COUNT));
            }
        }
}

static void binary_all(int fmt, int alldirs)
{
    const of_fmt *T = of_get(fmt);
    uint64_t n = UINT64_C(1) << T->width, in[3];
    int op, dir;
    for (op = ER_MATH_ADD; op <= ER_MATH_POW; op++)
        for (in[0] = 0; in[0] < n; in[0]++)
            for (in[1] = 0; in[1] < n; in[1]++) {
                if (alldirs) {
                    for (dir = 0; dir < ER_RND_COUNT; dir++)
                        mo_check("binary", op, fmt, in, 2, dir);
                } else {
                    mo_check("binary", op, fmt, in, 2, (int)((in[0] * 7 + in[1] + (uint64_t)op) % ER_RND_COUNT));
                }
            }
}

static void fma_all(int fmt, int alldirs)
{
    const of_fmt *T = of_get(fmt);
    uint64_t n = UINT64_C(1) << T->width, in[3];
    int dir;
    for (in[0] = 0; in[0] < n; in[0]++)
        for (in[1] = 0; in[1] < n; in[1]++)
            for (in[2] = 0; in[2] < n; in[2]++) {
                if (alldirs) {
                    for (dir = 0; dir < ER_RND_COUNT; dir++)
                        mo_check("fma", MO_FMA, fmt, in, 3, dir);
                } else {
                    mo_check("fma", MO_FMA, fmt, in, 3, (int)((in[0] * 5 + in[1] * 3 + in[2]) % ER_RND_COUNT));
                }
            }
}

/* fma on random triples of a format with too many triples to run them all (seeded). */
static void fma_random(int fmt, long n, uint64_t *st)
{
    const of_fmt *T = of_get(fmt);
    uint64_t in[3];
    long i;
    int k;
    for (i = 0; i < n; i++) {
        for (k = 0; k < 3; k++)
            in[k] = er_test_rand(st) & of_mask(T->width);
        if (i % 2 == 0 && T->is_signed) { /* c of the sign opposite to a*b's: a subtraction */
            uint64_t sb = UINT64_C(1) << (T->width - 1), sg = ((in[0] ^ in[1]) & sb) ^ sb;
            in[2] = (in[2] & ~sb) | sg;
        }
        mo_check("fma", MO_FMA, fmt, in, 3, (int)(er_test_rand(st) % ER_RND_COUNT));
    }
}

START_TEST(exhaustive)
{
    int alldirs = mt_all_dirs();
    mo_init();
    if (strcmp(group, "f16") == 0) {
        unary_all(ER_FMT_F16, alldirs);
    } else if (strcmp(group, "bf16") == 0) {
        unary_all(ER_FMT_BF16, alldirs);
    } else if (strcmp(group, "fp8") == 0) {
        static const int f8[] = {ER_FMT_F8E4M3FN, ER_FMT_F8E5M2, ER_FMT_F8E4M3FNUZ, ER_FMT_F8E5M2FNUZ,
                                 ER_FMT_F8E8M0FNU};
        int i;
        uint64_t st = er_test_seed("math_exhaustive fp8 (fma)");
        for (i = 0; i < 5; i++) {
            unary_all(f8[i], 1);
            binary_all(f8[i], alldirs);
            fma_random(f8[i], 100000, &st);
        }
        fma_random(ER_FMT_F16, 200000, &st);
        fma_random(ER_FMT_BF16, 200000, &st);
    } else {
        static const int sm[] = {ER_FMT_F6E2M3FN, ER_FMT_F6E3M2FN, ER_FMT_F4E2M1FN};
        int i;
        for (i = 0; i < 3; i++) {
            unary_all(sm[i], 1);
            binary_all(sm[i], 1);
            fma_all(sm[i], sm[i] == ER_FMT_F4E2M1FN || alldirs);
        }
    }
    printf("math_exhaustive %s: %ld checks, %ld disagreements\n", group, mo_checks, mo_fails);
    ck_assert_msg(mo_fails == 0, "%ld of %ld results disagree with the MPFR oracle", mo_fails, mo_checks);
}
END_TEST

int main(int argc, char **argv)
{
    Suite *s = suite_create("math_exhaustive");
    TCase *tc = tcase_create("exhaustive");
    if (argc > 1)
        group = argv[1];
    tcase_set_timeout(tc, 0);
    tcase_add_test(tc, exhaustive);
    suite_add_tcase(s, tc);
    return mt_run_suite(s);
}
