/* test_ops_fused.c: the check's fused path (opres.c: bounds, finish, covers and scoring a block of rows at a
 * time, without the whole er_bounds arrays) gives the report, the covered array, the outside count and the
 * list of outside indices of the array path (the bounds made whole and kept first), field for field, for
 * softmax, log_softmax, logsumexp, layer_norm and rms_norm on random inputs with special rows, on correct
 * outputs and on planted bugs, under normal and any_order. */
#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "er_test.h"
#include "exactref/exactref.h"
#include "ops/op_impl.h"

static uint64_t seed;

static double gauss(uint64_t *st, double sd)
{
    double s = 0;
    for (int k = 0; k < 4; k++) s += (double)(er_test_rand(st) >> 11) * 0x1p-53 - 0.5;
    return s * sd * 1.7320508;
}

static int same_double(double a, double b) { return memcmp(&a, &b, sizeof a) == 0; }

/* the reports field for field (message: which field differs) */
static void same_report(const er_check_report *a, const er_check_report *b, const char *what)
{
#define EQI(f) \
    ck_assert_msg(a->f == b->f, "%s: " #f " %lld (fused) != %lld (arrays)", what, (long long)a->f, (long long)b->f)
#define EQD(f) ck_assert_msg(same_double(a->f, b->f), "%s: " #f " %.17g (fused) != %.17g (arrays)", what, a->f, b->f)
    EQI(elements);
    EQI(outside);
    for (int h = 0; h < ER_REPORT_BINS; h++) EQI(hist[h]);
    for (int h = 0; h < ER_REPORT_LOG_BINS; h++) EQI(log_hist[h]);
    for (int i = 0; i < ER_REPORT_MAP; i++)
        for (int j = 0; j < ER_REPORT_MAP; j++) EQI(map[i][j]);
    EQI(ndim);
    for (int d = 0; d < a->ndim; d++) EQI(shape[d]);
    EQI(format);
    EQI(worst);
    for (int d = 0; d < 3; d++) EQI(worst_index[d]);
    EQI(worst_covered);
    EQI(worst_why);
    EQI(ulps_beyond);
    EQI(output);
    EQI(rounded);
    EQI(low);
    EQI(high);
    EQD(output_value);
    EQD(rounded_value);
    EQD(low_value);
    EQD(high_value);
    EQI(has_range);
    EQI(single_value);
    EQD(tolerance);
    EQD(ratio);
    EQI(may_pinf);
    EQI(may_ninf);
    EQI(may_nan);
    EQI(operand_vacuous);
    EQI(zero_accepted);
    EQI(narrower_format);
    EQI(outside_listed);
#undef EQI
#undef EQD
}

/* planted bugs in a copy of the rounded patterns (storage bytes sb): kind 0 none, 1 the last bit flipped in
 * one element of 7, 2 one in 997 moved up by about a quarter of its value, 3 NaN and infinity patterns here
 * and there, 4 every element zero, 5 the sign flipped in one of 11 */
static void plant(unsigned char *y, int64_t n, int sb, int fmt, int kind)
{
    for (int64_t e = 0; e < n; e++) {
        uint64_t v = 0;
        memcpy(&v, y + e * sb, (size_t)sb);
        uint64_t sign = (uint64_t)1 << (8 * sb - 1);
        switch (kind) {
        case 1:
            if (e % 7 == 3) v ^= 1;
            break;
        case 2:
            if (e % 997 == 5) v += sb == 4 ? (uint64_t)1 << 21 : fmt == ER_FMT_F16 ? 256 : 32;
            break;
        case 3:
            if (e % 101 == 7) {
                double x = e % 2 ? NAN : INFINITY;
                er_convert_array(ER_FMT_F64, fmt, &x, &v, 1, ER_RND_NEAREST_EVEN, 0u, NULL, NULL);
            }
            break;
        case 4:
            v = 0;
            break;
        case 5:
            if (e % 11 == 2) v ^= sign;
            break;
        default:
            break;
        }
        memcpy(y + e * sb, &v, (size_t)sb);
    }
}

/* one case: op on a random input of shape (nd dims) in fmt with options opts; special rows planted */
static void one_case(const char *op, int fmt, int nd, const int64_t *shape, const char *opts, int nin, uint64_t *st)
{
    char msg[512] = "", what[256];
    er_format_info fi;
    er_format_get_info(fmt, &fi);
    int64_t n = 1;
    for (int d = 0; d < nd; d++) n *= shape[d];
    int64_t last = shape[nd - 1];
    double *f = (double *)malloc(sizeof(double) * (size_t)n);
    void *data = malloc((size_t)n * 8), *wd = malloc((size_t)last * 8), *bd = malloc((size_t)last * 8);
    double *wf = (double *)malloc(sizeof(double) * (size_t)last);
    ck_assert(f && data && wd && bd && wf);
    for (int64_t e = 0; e < n; e++) f[e] = gauss(st, 2.0);
    if (n > 4 * last) { /* special rows: a NaN, a +inf, every element -inf, one -inf */
        f[1 * last + 2] = NAN;
        f[2 * last + 1] = INFINITY;
        for (int64_t j = 0; j < last; j++) f[3 * last + j] = -INFINITY;
        f[4 * last] = -INFINITY;
    }
    ck_assert_int_eq(er_convert_array(ER_FMT_F64, fmt, f, data, (size_t)n, ER_RND_NEAREST_EVEN, 0u, NULL, NULL), ER_OK);
    for (int64_t j = 0; j < last; j++) wf[j] = gauss(st, 1.0);
    ck_assert_int_eq(er_convert_array(ER_FMT_F64, fmt, wf, wd, (size_t)last, ER_RND_NEAREST_EVEN, 0u, NULL, NULL),
                     ER_OK);
    for (int64_t j = 0; j < last; j++) wf[j] = gauss(st, 1.0);
    ck_assert_int_eq(er_convert_array(ER_FMT_F64, fmt, wf, bd, (size_t)last, ER_RND_NEAREST_EVEN, 0u, NULL, NULL),
                     ER_OK);
    er_optensor t = er_optensor_make(fmt, nd, shape, data);
    /* weight and bias over the last dimension (normalized_shape of one dimension) */
    er_optensor tw = er_optensor_make(fmt, 1, &shape[nd - 1], wd), tb = er_optensor_make(fmt, 1, &shape[nd - 1], bd);
    const er_optensor *in[3] = {&t, &tw, &tb};
    static const char *const stds[] = {"normal", "any_order"};
    for (int sd = 0; sd < 2; sd++)
        for (int kind = 0; kind < 6; kind++) {
            er_opres *ra = NULL, *rb = NULL;
            ck_assert_msg(er_op_call_nd(op, nin, in, opts, &ra, msg, sizeof msg) == ER_OK, "%s: %s", op, msg);
            ck_assert_msg(er_op_call_nd(op, nin, in, opts, &rb, msg, sizeof msg) == ER_OK, "%s: %s", op, msg);
            const er_optensor *R = er_opres_rounded(ra, 0);
            er_format_info oi;
            er_format_get_info(R->format, &oi);
            int64_t cnt = er_opres_count(ra, 0);
            unsigned char *y = (unsigned char *)malloc((size_t)(cnt ? cnt : 1) * (size_t)oi.storage_bytes);
            memcpy(y, R->data, (size_t)cnt * (size_t)oi.storage_bytes);
            plant(y, cnt, oi.storage_bytes, R->format, kind);
            er_optensor out = er_optensor_make(R->format, R->ndim, R->shape, y);
            er_tol_opts o;
            er_tol_opts_init(&o);
            ck_assert(er_standard_parse(stds[sd], &o.standard, msg, sizeof msg) == ER_OK);
            snprintf(what, sizeof what, "%s %s fmt %d (%s) bug %d, seed 0x%llx", op, stds[sd], fmt, opts, kind,
                     (unsigned long long)seed);
            /* fused: a fresh result (no bounds kept); arrays: the bounds made and kept first */
            int fused = ra->bounds_rows != NULL;
            const er_bounds *bdk;
            ck_assert_msg(er_opres_bounds(rb, 0, &o, &bdk, msg, sizeof msg) == ER_OK, "%s: %s", what, msg);
            size_t cz = (size_t)(cnt ? cnt : 1);
            unsigned char *ca = (unsigned char *)malloc(cz), *cb = (unsigned char *)malloc(cz);
            int64_t oa = -1, ob = -2;
            ck_assert_msg(er_opres_covers(ra, 0, &o, &out, ca, &oa, msg, sizeof msg) == ER_OK, "%s: %s", what, msg);
            ck_assert_msg(er_opres_covers(rb, 0, &o, &out, cb, &ob, msg, sizeof msg) == ER_OK, "%s: %s", what, msg);
            ck_assert_msg(oa == ob, "%s: covers outside %lld (fused) != %lld (arrays)", what, (long long)oa,
                          (long long)ob);
            ck_assert_msg(memcmp(ca, cb, (size_t)cnt) == 0, "%s: the covered arrays differ", what);
            if (fused) ck_assert_msg(ra->bounds == NULL, "%s: the fused covers kept whole bounds", what);
            er_check_report pa, pb;
            int64_t ia[40], ib[40];
            memset(&pa, 0, sizeof pa);
            memset(&pb, 0, sizeof pb);
            ck_assert_msg(er_opres_report(ra, 0, &o, &out, ia, 40, &pa, msg, sizeof msg) == ER_OK, "%s: %s", what, msg);
            ck_assert_msg(er_opres_report(rb, 0, &o, &out, ib, 40, &pb, msg, sizeof msg) == ER_OK, "%s: %s", what, msg);
            same_report(&pa, &pb, what);
            ck_assert_msg(memcmp(ia, ib, sizeof(int64_t) * (size_t)pa.outside_listed) == 0, "%s: outside lists differ",
                          what);
            if (fused) ck_assert_msg(ra->bounds == NULL, "%s: the fused report kept whole bounds", what);
            if (kind == 0 && pa.outside) /* the op's own answer: covered (test_covers_rounded's claim) */
                ck_abort_msg("%s: %lld of the rounded answer outside", what, (long long)pa.outside);
            if ((kind == 2 && cnt > 1000) || kind == 4)
                ck_assert_msg(pa.outside > 0, "%s: a planted bug not caught", what);
            free(ca);
            free(cb);
            free(y);
            er_opres_free(ra);
            er_opres_free(rb);
        }
    free(f);
    free(data);
    free(wd);
    free(bd);
    free(wf);
}

START_TEST(fused_equals_arrays)
{
    uint64_t st = seed;
    int64_t s2[2] = {40, 1000}, s2b[2] = {9, 4096}, s3[3] = {3, 7, 40}, s1[1] = {100}, s2c[2] = {600, 7};
    static const char *const sm[] = {"softmax", "log_softmax", "logsumexp"};
    static const int fmts[] = {ER_FMT_BF16, ER_FMT_F16, ER_FMT_F32};
    for (int f = 0; f < 3; f++) {
        for (int k = 0; k < 3; k++) {
            one_case(sm[k], fmts[f], 2, s2, "", 1, &st);
            one_case(sm[k], fmts[f], 3, s3, "", 1, &st);
            one_case(sm[k], fmts[f], 2, s2c, "", 1, &st);
            one_case(sm[k], fmts[f], 3, s3, "dim=1", 1, &st); /* strided rows: the array path both times */
        }
        one_case("logsumexp", fmts[f], 3, s3, "keepdim=1", 1, &st);
        one_case("logsumexp", fmts[f], 1, s1, "", 1, &st);
        one_case("layer_norm", fmts[f], 2, s2, "normalized_shape=1000", 3, &st);
        one_case("layer_norm", fmts[f], 3, s3, "normalized_shape=40", 1, &st);
        one_case("layer_norm", fmts[f], 3, s3, "normalized_shape=7x40", 1, &st);
        one_case("rms_norm", fmts[f], 2, s2b, "normalized_shape=4096", 2, &st);
        one_case("rms_norm", fmts[f], 2, s2c, "normalized_shape=7", 2, &st);
        one_case("rms_norm", fmts[f], 1, s1, "normalized_shape=100", 1, &st);
    }
}
END_TEST

/* the inline roundings of the per-element loops (op_impl.h) give er_ops_rn_bits' patterns and
 * er_ops_bits_value's values: every bf16 pattern's value and its neighbours, the midpoints, and random
 * binary64 values of every exponent */
START_TEST(inline_roundings)
{
    uint64_t st = seed;
    static const int fmts[] = {ER_FMT_BF16, ER_FMT_F32, ER_FMT_F16};
    for (int f = 0; f < 3; f++) {
        int fmt = fmts[f];
        for (uint64_t p = 0; p < 65536; p++) {
            double v = er_ops_bits_value(fmt, p);
            ck_assert_msg(same_double(er_ops_bits_value_inl(fmt, p), v) || (v != v), "value of %llx",
                          (unsigned long long)p);
            if (!(v == v) || !isfinite(v)) continue;
            double nb[5] = {v, er_b_up(v), er_b_down(v), v * (1 + 0x1p-9), v * (1 - 0x1p-9)};
            for (int k = 0; k < 5; k++)
                ck_assert_msg(er_ops_rn_bits_inl(fmt, nb[k]) == er_ops_rn_bits(fmt, nb[k]), "fmt %d: %a", fmt, nb[k]);
            double mid = v + (er_ops_bits_value(fmt, p + 1) - v) / 2; /* the midpoint to the next pattern */
            if (isfinite(mid))
                ck_assert_msg(er_ops_rn_bits_inl(fmt, mid) == er_ops_rn_bits(fmt, mid), "fmt %d: %a", fmt, mid);
        }
        for (int k = 0; k < 2000000; k++) {
            uint64_t u = er_test_rand(&st);
            double x;
            memcpy(&x, &u, 8);
            uint64_t a = er_ops_rn_bits_inl(fmt, x), b = er_ops_rn_bits(fmt, x);
            ck_assert_msg(a == b || (x != x && er_ops_bits_value(fmt, a) != er_ops_bits_value(fmt, a)), "fmt %d: %a",
                          fmt, x);
        }
    }
}
END_TEST

int main(void)
{
    seed = er_test_seed("test_ops_fused");
    Suite *s = suite_create("ops_fused");
    TCase *tc = tcase_create("ops_fused");
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, fused_equals_arrays);
    tcase_add_test(tc, inline_roundings);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
