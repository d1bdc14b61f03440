/*
 * test_args.c (engine_args): invalid arguments give a non-OK status and a message (a sentence in msg),
 * never a crash, and write nothing into d; msg may be NULL; a valid call afterwards still works.
 * Empty problems (m, n or batch 0) are valid.  Patterns with bits beyond their format (fp4/fp6 high
 * bits, tf32 padding) give the same outcome for AUTO and EXACT (rejected by both, or the same bits).
 */
#include <check.h>
#include <stdint.h>
#include <string.h>

#include "eng_ref.h"

static unsigned char bufA[4096], bufB[4096], bufC[4096], bufD[4096], bufS[4096], bufT[4096], bufE[4096];

typedef struct {
    er_tensor a, b, c, d, sa, sb, lo;
    er_mma_args args;
    char msg[256];
} fixture;

/* A valid 3 x 4 x 5 problem: f16 x bf16 + f32 -> f32. */
static void valid(fixture *f)
{
    memset(f, 0, sizeof *f);
    f->a = er_tensor_2d(ER_FMT_F16, 3, 4, bufA);
    f->b = er_tensor_2d(ER_FMT_BF16, 4, 5, bufB);
    f->c = er_tensor_2d(ER_FMT_F32, 3, 5, bufC);
    f->d = er_tensor_2d(ER_FMT_F32, 3, 5, bufD);
    er_mma_args_init(&f->args);
    f->args.a = &f->a;
    f->args.b = &f->b;
    f->args.c = &f->c;
    f->args.d = &f->d;
    f->args.threads = 1;
    f->args.msg = f->msg;
    f->args.msg_size = sizeof f->msg;
}

/* A valid block-scaled problem: f4E2M1FN 3 x 40, 40 x 5, f8E4M3FN scales, block 16 (3 blocks). */
static void valid_scaled(fixture *f)
{
    valid(f);
    f->a = er_tensor_2d(ER_FMT_F4E2M1FN, 3, 40, bufA);
    f->b = er_tensor_2d(ER_FMT_F4E2M1FN, 40, 5, bufB);
    f->sa = er_tensor_2d(ER_FMT_F8E4M3FN, 3, 3, bufS);
    f->sb = er_tensor_2d(ER_FMT_F8E4M3FN, 3, 5, bufT);
    f->args.a_scale = &f->sa;
    f->args.b_scale = &f->sb;
    f->args.block = 16;
}

static long expect_fail(fixture *f, const char *what)
{
    unsigned char before[64];
    memcpy(before, bufD, sizeof before);
    int s = er_mma(&f->args);
    long bad = 0;
    if (s == ER_OK) {
        fprintf(stderr, "MISMATCH [args: %s]: accepted\n", what);
        bad++;
    } else if (f->msg[0] == 0) {
        fprintf(stderr, "MISMATCH [args: %s]: status %d without a message\n", what, s);
        bad++;
    } else {
        printf("args: %-52s -> %d: %s\n", what, s, f->msg);
    }
    if (memcmp(before, bufD, sizeof before) != 0) {
        fprintf(stderr, "MISMATCH [args: %s]: d was written by a failing call\n", what);
        bad++;
    }
    /* the same call without a message buffer: the same status, no crash */
    f->args.msg = NULL;
    f->args.msg_size = 0;
    if (er_mma(&f->args) != s) {
        fprintf(stderr, "MISMATCH [args: %s]: another status without msg\n", what);
        bad++;
    }
    return bad;
}

START_TEST(bad_arguments)
{
    printf("%s/%s\n", "engine_args", "bad_arguments");
    fixture f;
    long bad = 0;
    memset(bufD, 0x77, sizeof bufD);

    valid(&f);
    ck_assert_msg(er_mma(&f.args) == ER_OK, "the valid problem fails: %s", f.msg);
    memset(bufD, 0x77, sizeof bufD);
    valid_scaled(&f);
    ck_assert_msg(er_mma(&f.args) == ER_OK, "the valid scaled problem fails: %s", f.msg);
    valid_scaled(&f); f.sa.format = ER_FMT_F8E5M3FNU; f.sb.format = ER_FMT_F8E5M3FNU;
    ck_assert_msg(er_mma(&f.args) == ER_OK, "f4E2M1FN with f8E5M3FNU scales fails: %s", f.msg);
    memset(bufD, 0x77, sizeof bufD);

    ck_assert_int_ne(er_mma(NULL), ER_OK);

    valid(&f); f.b = er_tensor_2d(ER_FMT_BF16, 5, 5, bufB);
    bad += expect_fail(&f, "inner dimensions differ (3x4 times 5x5)");
    valid(&f); f.a = er_tensor_2d(ER_FMT_F16, 3, (INT64_C(1) << 24) + 1, bufA);
    f.a.strides[0] = 0; f.a.strides[1] = 0; /* one element of storage is enough */
    f.b = er_tensor_2d(ER_FMT_BF16, (INT64_C(1) << 24) + 1, 5, bufB);
    f.b.strides[0] = 0; f.b.strides[1] = 0;
    bad += expect_fail(&f, "k = 2^24 + 1");
    valid(&f); f.a = er_tensor_2d(ER_FMT_I8, 3, 4, bufA);
    bad += expect_fail(&f, "int a with float b");
    valid(&f); f.b = er_tensor_2d(ER_FMT_U8, 4, 5, bufB);
    bad += expect_fail(&f, "float a with int b");
    valid(&f); f.a = er_tensor_2d(ER_FMT_I8, 3, 4, bufA); f.b = er_tensor_2d(ER_FMT_U8, 4, 5, bufB);
    bad += expect_fail(&f, "mmai with a float c and d");
    valid(&f); f.a = er_tensor_2d(ER_FMT_I8, 3, 4, bufA); f.b = er_tensor_2d(ER_FMT_U8, 4, 5, bufB);
    f.c = er_tensor_2d(ER_FMT_I32, 3, 5, bufC);
    bad += expect_fail(&f, "mmai with a float d");
    valid(&f); f.a = er_tensor_2d(ER_FMT_I16, 3, 4, bufA); f.b = er_tensor_2d(ER_FMT_I8, 4, 5, bufB);
    f.c = er_tensor_2d(ER_FMT_I32, 3, 5, bufC); f.d = er_tensor_2d(ER_FMT_I32, 3, 5, bufD);
    bad += expect_fail(&f, "mmai with i16 operands");
    valid(&f); f.d = er_tensor_2d(ER_FMT_I32, 3, 5, bufD);
    bad += expect_fail(&f, "float mma into an i32 d");
    valid(&f); f.c = er_tensor_2d(ER_FMT_I8, 3, 5, bufC);
    bad += expect_fail(&f, "float mma with an i8 c");
    valid(&f); f.c = er_tensor_2d(ER_FMT_F32, 3, 4, bufC);
    bad += expect_fail(&f, "c of the wrong shape");
    valid(&f); f.d = er_tensor_2d(ER_FMT_F32, 5, 3, bufD);
    bad += expect_fail(&f, "d of the wrong shape");
    valid(&f); f.a.format = 99;
    bad += expect_fail(&f, "unknown format id");
    valid(&f); f.a.format = -1;
    bad += expect_fail(&f, "negative format id");
    valid(&f); f.a.ndim = 4;
    bad += expect_fail(&f, "4 dimensions");
    valid(&f); f.a.ndim = 1;
    bad += expect_fail(&f, "1 dimension");
    valid(&f); f.a.strides[0] = -4;
    bad += expect_fail(&f, "negative stride");
    valid(&f); f.a.shape[0] = -3;
    bad += expect_fail(&f, "negative shape");
    valid(&f); f.a.data = NULL;
    bad += expect_fail(&f, "no data for a non-empty a");
    valid(&f); f.args.a = NULL;
    bad += expect_fail(&f, "no a");
    valid(&f); f.args.d = NULL;
    bad += expect_fail(&f, "no output at all");
    valid(&f); f.args.rounding = ER_RND_COUNT;
    bad += expect_fail(&f, "unknown rounding direction");
    valid(&f); f.args.rounding = -1;
    bad += expect_fail(&f, "negative rounding direction");
    valid(&f); f.args.strategy = 7;
    bad += expect_fail(&f, "unknown strategy");
    valid(&f); f.lo = er_tensor_2d(ER_FMT_F32, 3, 5, bufE); f.args.lo = &f.lo;
    bad += expect_fail(&f, "an f32 enclosure");
    valid(&f); f.lo = er_tensor_2d(ER_FMT_F64, 5, 3, bufE); f.args.hi = &f.lo;
    bad += expect_fail(&f, "an enclosure of the wrong shape");
    valid(&f); f.a = er_tensor_3d(ER_FMT_F16, 2, 3, 4, bufA); f.b = er_tensor_3d(ER_FMT_BF16, 3, 4, 5, bufB);
    f.d = er_tensor_3d(ER_FMT_F32, 2, 3, 5, bufD);
    bad += expect_fail(&f, "batches of 2 and 3");
    valid(&f); f.a = er_tensor_3d(ER_FMT_F16, 2, 3, 4, bufA);
    bad += expect_fail(&f, "a batched product into a 2-D d");
    valid(&f); f.a = er_tensor_3d(ER_FMT_F16, 2, 3, 4, bufA); f.d = er_tensor_3d(ER_FMT_F32, 3, 3, 5, bufD);
    bad += expect_fail(&f, "d with another batch");
    /* scales */
    valid_scaled(&f); f.sa = er_tensor_2d(ER_FMT_F8E4M3FN, 3, 2, bufS);
    bad += expect_fail(&f, "a_scale 3 x 2 for 3 blocks");
    valid_scaled(&f); f.sb = er_tensor_2d(ER_FMT_F8E4M3FN, 3, 4, bufT);
    bad += expect_fail(&f, "b_scale 3 x 4 for n = 5");
    valid_scaled(&f); f.sb = er_tensor_2d(ER_FMT_F8E4M3FN, 5, 3, bufT);
    bad += expect_fail(&f, "b_scale transposed shape (5 x 3)");
    valid_scaled(&f); f.args.block = 32;
    bad += expect_fail(&f, "block 32 with scales for block 16");
    valid_scaled(&f); f.args.block = 0;
    bad += expect_fail(&f, "block 0");
    valid_scaled(&f); f.args.b_scale = NULL;
    bad += expect_fail(&f, "a_scale without b_scale");
    valid_scaled(&f); f.sb.format = ER_FMT_F8E8M0FNU;
    bad += expect_fail(&f, "scales of two formats");
    valid_scaled(&f); f.sa.format = ER_FMT_BF16; f.sb.format = ER_FMT_BF16;
    bad += expect_fail(&f, "bf16 scales");
    valid_scaled(&f); f.sb.format = ER_FMT_F8E5M3FNU;
    bad += expect_fail(&f, "f8E4M3FN and f8E5M3FNU scales");
    valid_scaled(&f); f.sa.format = ER_FMT_F8E5M3FNU; f.sb.format = ER_FMT_F8E5M3FNU;
    f.a.format = ER_FMT_F8E4M3FN; f.b.format = ER_FMT_F8E4M3FN;
    bad += expect_fail(&f, "f8E5M3FNU scales of f8E4M3FN elements");
    valid_scaled(&f); f.sa.format = ER_FMT_F8E5M3FNU; f.sb.format = ER_FMT_F8E5M3FNU;
    f.b.format = ER_FMT_F6E2M3FN;
    bad += expect_fail(&f, "f8E5M3FNU scales of f6E2M3FN elements");
    valid_scaled(&f); f.a.format = ER_FMT_BF16;
    bad += expect_fail(&f, "bf16 elements with scales");
    valid_scaled(&f); f.a.format = ER_FMT_I8; f.b.format = ER_FMT_I8;
    f.c = er_tensor_2d(ER_FMT_I32, 3, 5, bufC); f.d = er_tensor_2d(ER_FMT_I32, 3, 5, bufD);
    bad += expect_fail(&f, "mmai with scales");
    {
        /* mmai with enclosures */
        valid(&f);
        f.a = er_tensor_2d(ER_FMT_I8, 3, 4, bufA);
        f.b = er_tensor_2d(ER_FMT_I8, 4, 5, bufB);
        f.c = er_tensor_2d(ER_FMT_I32, 3, 5, bufC);
        f.d = er_tensor_2d(ER_FMT_I32, 3, 5, bufD);
        f.lo = er_tensor_2d(ER_FMT_F64, 3, 5, bufE);
        f.args.lo = &f.lo;
        bad += expect_fail(&f, "mmai with an enclosure");
    }
    /* and a valid call still works, and clears the message */
    valid(&f);
    strcpy(f.msg, "stale");
    ck_assert_msg(er_mma(&f.args) == ER_OK && f.msg[0] == 0, "a valid call after failures: %s", f.msg);
    ck_assert_msg(bad == 0, "bad_arguments: %ld failures (see stderr)", bad);
}
END_TEST

/* Empty problems are valid: m, n or batch 0 write nothing; k = 0 is the +0 / C case (engine_targeted). */
START_TEST(empty)
{
    printf("%s/%s\n", "engine_args", "empty");
    fixture f;
    valid(&f);
    f.a = er_tensor_2d(ER_FMT_F16, 0, 4, NULL);
    f.c = er_tensor_2d(ER_FMT_F32, 0, 5, NULL);
    f.d = er_tensor_2d(ER_FMT_F32, 0, 5, NULL);
    ck_assert_msg(er_mma(&f.args) == ER_OK, "m = 0: %s", f.msg);
    valid(&f);
    f.b = er_tensor_2d(ER_FMT_BF16, 4, 0, NULL);
    f.c = er_tensor_2d(ER_FMT_F32, 3, 0, NULL);
    f.d = er_tensor_2d(ER_FMT_F32, 3, 0, NULL);
    ck_assert_msg(er_mma(&f.args) == ER_OK, "n = 0: %s", f.msg);
    valid(&f);
    f.a = er_tensor_3d(ER_FMT_F16, 0, 3, 4, NULL);
    f.c = er_tensor_2d(ER_FMT_F32, 3, 5, bufC);
    f.d = er_tensor_3d(ER_FMT_F32, 0, 3, 5, NULL);
    ck_assert_msg(er_mma(&f.args) == ER_OK, "batch = 0: %s", f.msg);
}
END_TEST

/*
 * Patterns that are not their format's (bits above an fp4/fp6 width, tf32's low padding bits set): the
 * contract leaves open whether they are rejected or their extra bits ignored, but both strategies and
 * every thread count must agree: both fail, or both give the same bits.
 */
START_TEST(invalid_patterns)
{
    printf("%s/%s\n", "engine_args", "invalid_patterns");
    long bad = 0;
    ref_init();
    struct {
        int f;
        uint32_t a[4];
    } cases[] = {
        {ER_FMT_F4E2M1FN, {0xF3, 0x12, 0x25, 0x03}},
        {ER_FMT_F6E2M3FN, {0xC1, 0x45, 0x0A, 0x80}},
        {ER_FMT_F6E3M2FN, {0x41, 0x05, 0xFA, 0x02}},
        {ER_FMT_TF32, {0x3F800001u, 0x3F800FFFu, 0x40000123u, 0x3F801000u}},
    };
    for (size_t ci = 0; ci < sizeof cases / sizeof cases[0]; ci++) {
        unsigned char a[16], b[16];
        int bytes = rf(cases[ci].f)->bytes;
        for (int p = 0; p < 4; p++) {
            memcpy(a + p * bytes, &cases[ci].a[p], (size_t)bytes); /* little-endian host */
            uint32_t one = cases[ci].f == ER_FMT_TF32 ? 0x3F800000u : (uint32_t)ref_encode_d(cases[ci].f, 1.0);
            memcpy(b + p * bytes, &one, (size_t)bytes);
        }
        int st[3];
        uint32_t d[3];
        for (int s = 0; s < 3; s++) {
            er_tensor ta = er_tensor_2d(cases[ci].f, 1, 4, a), tb = er_tensor_2d(cases[ci].f, 4, 1, b);
            er_tensor td = er_tensor_2d(ER_FMT_F32, 1, 1, &d[s]);
            er_mma_args args;
            er_mma_args_init(&args);
            args.a = &ta;
            args.b = &tb;
            args.d = &td;
            args.strategy = s == 1 ? ER_STRATEGY_EXACT : ER_STRATEGY_AUTO;
            args.threads = s == 2 ? 3 : 1;
            d[s] = 0;
            st[s] = er_mma(&args);
        }
        if (st[0] != st[1] || st[0] != st[2] || (st[0] == ER_OK && (d[0] != d[1] || d[0] != d[2]))) {
            fprintf(stderr, "MISMATCH [invalid_patterns %s]: AUTO status %d d 0x%08x, EXACT status %d d 0x%08x, "
                            "AUTO 3 threads status %d d 0x%08x\n",
                    rf(cases[ci].f)->name, st[0], d[0], st[1], d[1], st[2], d[2]);
            bad++;
        } else {
            printf("invalid_patterns %s: %s\n", rf(cases[ci].f)->name, st[0] == ER_OK ? "accepted (extra bits ignored)" : "rejected");
        }
    }
    ck_assert_msg(bad == 0, "invalid_patterns: %ld disagreements between strategies (see stderr)", bad);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("engine_args");
    TCase *tc = tcase_create("args");
    SRunner *sr;
    int nf;
    tcase_add_checked_fixture(tc, eng_fixture_setup, eng_fixture_teardown);
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, bad_arguments);
    tcase_add_test(tc, empty);
    tcase_add_test(tc, invalid_patterns);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    nf = srunner_ntests_failed(sr);
    srunner_free(sr);
    return nf ? 1 : 0;
}
