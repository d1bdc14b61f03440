/*
 * test_cuda_slices.c: the CUDA module's exact integer slices route (cuda/er_cuda_slices.cu) against the
 * CPU engine, bit for bit.
 *   test_cuda_slices       on a GPU (int8 GEMMs by cuBLASLt); exits 77 (skipped) without a driver or a
 *                          device unless EXACTREF_REQUIRE_CUDA=1, which makes it fail instead
 *   test_cuda_slices_host  (ER_CUDA_HOST_PASS) through the module's host pass (er_cuda_mma_host): the
 *                          route's host code and per-element functions, with the core's int8 dot product
 *                          in place of cuBLASLt; no GPU needed
 * Problems (seeded, EXACTREF_SEED): f8E5M2 x f8E5M2, f8E4M3FN x f8E5M2 and f8E4M3FN x f8E4M3FN, random
 * finite patterns, with and without C, every output format of a list and every direction, the options;
 * NaN / infinity rows, columns and C elements (the exact kernel takes those); k = 2^17 + 9 (two chunks)
 * on 2 x 3; a batch with B broadcast; bf16 on grids per row / column (f8E5M2 x bf16, bf16 x bf16, and
 * a bf16 row spanning 41 bits, which declines the tile to the other paths).  The route's elements are counted in stats.exact_f64 with the
 * exact binary64 path's; f8E5M2 operands span more than 53 bits, so that path declines them, and the
 * host pass must show the slices' elements there (the test cannot pass by the route never running).
 * EXACTREF_CUDA_SLICES=require: on a GPU, a missing libcublasLt or a failing cuBLASLt call is an error
 * (the route would otherwise decline silently to the other kernels, with the same bits).
 */
#define _POSIX_C_SOURCE 200809L /* setenv */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "er_cuda_backend.h" /* er_cuda_mma_host */
#include "er_test.h"
#include "exactref/exactref.h"

#ifdef ER_CUDA_HOST_PASS
#define ER_SEED_PREFIX "cuda_slices_host"
#define ER_CUDA_PATH "CUDA host pass"
#else
#define ER_SEED_PREFIX "cuda_slices"
#define ER_CUDA_PATH "CUDA"
#endif

static int run_cuda_(er_mma_args *x)
{
#ifdef ER_CUDA_HOST_PASS
    return er_cuda_mma_host(x);
#else
    return er_mma(x);
#endif
}

static int bytes_of(int f)
{
    er_format_info fi;
    er_format_get_info(f, &fi);
    return fi.storage_bytes;
}

static uint8_t rnd_finite(int f, uint64_t *rng)
{
    for (;;) {
        uint8_t x = (uint8_t)er_test_rand(rng);
        if (f == ER_FMT_F8E4M3FN && (x & 0x7F) == 0x7F) continue;
        if (f == ER_FMT_F8E5M2 && (x & 0x7C) == 0x7C) continue;
        return x;
    }
}

/* One problem on the CPU and on CUDA; returns mismatches, adds the route's count to *sliced. */
static long compare(const char *name, int fa, int fb, int fc, int64_t batch, int64_t m, int64_t n, int64_t k,
                    const uint8_t *A, const uint8_t *B, const void *C, int fd, int dir, unsigned opts, long long *sliced)
{
    int db = bytes_of(fd);
    int64_t el = batch * m * n;
    uint8_t *d1 = (uint8_t *)calloc((size_t)el, (size_t)db), *d2 = (uint8_t *)malloc((size_t)(el * db));
    er_tensor a = batch > 1 ? er_tensor_3d(fa, batch, m, k, (void *)A) : er_tensor_2d(fa, m, k, (void *)A);
    er_tensor b = er_tensor_2d(fb, k, n, (void *)B);
    er_tensor c = batch > 1 ? er_tensor_3d(fc, batch, m, n, (void *)C) : er_tensor_2d(fc, m, n, (void *)C);
    er_tensor t1 = batch > 1 ? er_tensor_3d(fd, batch, m, n, d1) : er_tensor_2d(fd, m, n, d1);
    er_tensor t2 = batch > 1 ? er_tensor_3d(fd, batch, m, n, d2) : er_tensor_2d(fd, m, n, d2);
    er_mma_args x;
    er_mma_stats st;
    char msg[256] = "";
    long bad = 0;
    memset(d2, 0xA5, (size_t)(el * db)); /* poison: an element left unwritten shows */
    for (int pass = 0; pass < 2; pass++) {
        er_mma_args_init(&x);
        x.a = &a;
        x.b = &b;
        x.c = fc >= 0 ? &c : NULL;
        x.d = pass ? &t2 : &t1;
        x.rounding = dir;
        x.opts = opts;
        x.backend = pass ? ER_BACKEND_CUDA : ER_BACKEND_CPU;
        x.stats = &st;
        x.msg = msg;
        x.msg_size = sizeof msg;
        int s = pass ? run_cuda_(&x) : er_mma(&x);
        ck_assert_msg(s == ER_OK, "%s: %s: %s", name, pass ? ER_CUDA_PATH : "CPU", msg);
    }
    *sliced += st.exact_f64;
    for (int64_t e = 0; e < el; e++) {
        uint64_t v1 = 0, v2 = 0;
        memcpy(&v1, d1 + e * db, (size_t)db);
        memcpy(&v2, d2 + e * db, (size_t)db);
        if (v1 != v2 && bad++ < 5)
            fprintf(stderr, "%s: d %s dir %d opts 0x%x element %lld: CPU 0x%llx, " ER_CUDA_PATH " 0x%llx\n", name,
                    er_format_name(fd), dir, opts, (long long)e, (unsigned long long)v1, (unsigned long long)v2);
    }
    free(d1);
    free(d2);
    return bad;
}

static const int outs[] = {ER_FMT_F32, ER_FMT_BF16, ER_FMT_F16, ER_FMT_F8E4M3FN, ER_FMT_F64};
static const unsigned optv[] = {0u, ER_OPT_SATURATE, ER_OPT_FTZ};

START_TEST(random_and_specials)
{
    uint64_t rng = er_test_seed(ER_SEED_PREFIX "/random_and_specials");
    const int pairs[][3] = {{ER_FMT_F8E5M2, ER_FMT_F8E5M2, -1}, {ER_FMT_F8E4M3FN, ER_FMT_F8E5M2, ER_FMT_F32},
                            {ER_FMT_F8E4M3FN, ER_FMT_F8E4M3FN, ER_FMT_BF16}, {ER_FMT_F8E5M2, ER_FMT_F8E5M2, ER_FMT_F16}};
    long bad = 0;
    for (int sp = 0; sp < 2; sp++)
        for (size_t q = 0; q < sizeof pairs / sizeof pairs[0]; q++) {
            int fa = pairs[q][0], fb = pairs[q][1], fc = pairs[q][2];
            int64_t m = 21, n = 18, k = 77;
            long long sliced = 0;
            uint8_t *A = (uint8_t *)malloc((size_t)(m * k)), *B = (uint8_t *)malloc((size_t)(k * n));
            uint8_t *C = (uint8_t *)calloc((size_t)(m * n), 8);
            for (int64_t e = 0; e < m * k; e++) A[e] = rnd_finite(fa, &rng);
            for (int64_t e = 0; e < k * n; e++) B[e] = rnd_finite(fb, &rng);
            if (fc >= 0)
                for (int64_t e = 0; e < m * n; e++) {
                    uint64_t v = er_test_rand(&rng) & (bytes_of(fc) == 4 ? 0x3FFFFFFFu : 0x3FFFu); /* finite */
                    if (e % 5 == 2) v = 0;
                    memcpy(C + e * bytes_of(fc), &v, (size_t)bytes_of(fc));
                }
            if (sp) { /* a NaN in row 1, an infinity (or NaN) in column 4, a NaN C */
                A[1 * k + 3] = 0x7F;
                B[10 * n + 4] = fb == ER_FMT_F8E5M2 ? 0xFC : 0xFF;
                if (fc >= 0) {
                    uint64_t nan = bytes_of(fc) == 4 ? 0x7FC00000u : 0x7E00u;
                    memcpy(C + 7 * bytes_of(fc), &nan, (size_t)bytes_of(fc));
                }
            }
            for (size_t o = 0; o < sizeof outs / sizeof outs[0]; o++)
                for (int dir = 0; dir < ER_RND_COUNT; dir++)
                    bad += compare(sp ? "specials" : "random", fa, fb, fc, 1, m, n, k, A, B, C, outs[o], dir,
                                   optv[(o + (size_t)dir) % 3], &sliced);
            printf("%s %s x %s (C %s): %lld elements by the slices or the exact binary64 path\n",
                   sp ? "specials" : "random", er_format_name(fa), er_format_name(fb), fc >= 0 ? er_format_name(fc) : "none",
                   sliced);
#ifdef ER_CUDA_HOST_PASS
            if (fa == ER_FMT_F8E5M2 || fb == ER_FMT_F8E5M2) /* the binary64 path declines these: the slices ran */
                ck_assert_msg(sliced >= (long long)(m - 1) * (n - 1) * 30 / 2,
                              "the slices computed only %lld elements", sliced);
#endif
            free(A);
            free(B);
            free(C);
        }
    ck_assert_msg(bad == 0, "%ld mismatches (see stderr)", bad);
}
END_TEST

START_TEST(bigk_and_batch)
{
    uint64_t rng = er_test_seed(ER_SEED_PREFIX "/bigk_and_batch");
    long bad = 0;
    long long sliced = 0;
    {
        int64_t m = 2, n = 3, k = (INT64_C(1) << 17) + 9;
        uint8_t *A = (uint8_t *)malloc((size_t)(m * k)), *B = (uint8_t *)malloc((size_t)(k * n));
        for (int64_t p = 0; p < k; p++) {
            A[p] = 0x7B; /* f8E5M2 max */
            A[k + p] = rnd_finite(ER_FMT_F8E5M2, &rng);
            B[p * n + 0] = 0x7B;
            B[p * n + 1] = (uint8_t)(0x7B | (p % 2 ? 0x80 : 0));
            B[p * n + 2] = rnd_finite(ER_FMT_F8E5M2, &rng);
        }
        for (int dir = 0; dir < ER_RND_COUNT; dir++)
            bad += compare("bigk", ER_FMT_F8E5M2, ER_FMT_F8E5M2, -1, 1, m, n, k, A, B, NULL, dir % 2 ? ER_FMT_F32 : ER_FMT_F64,
                           dir, 0u, &sliced);
        free(A);
        free(B);
    }
    {
        int64_t bt = 3, m = 5, n = 7, k = 40;
        uint8_t *A = (uint8_t *)malloc((size_t)(bt * m * k)), *B = (uint8_t *)malloc((size_t)(k * n));
        uint16_t *C = (uint16_t *)malloc((size_t)(bt * m * n) * 2);
        for (int64_t e = 0; e < bt * m * k; e++) A[e] = rnd_finite(ER_FMT_F8E4M3FN, &rng);
        for (int64_t e = 0; e < k * n; e++) B[e] = rnd_finite(ER_FMT_F8E5M2, &rng);
        for (int64_t e = 0; e < bt * m * n; e++) C[e] = (uint16_t)(er_test_rand(&rng) & 0x3FFF);
        for (int dir = 0; dir < ER_RND_COUNT; dir++)
            bad += compare("batch", ER_FMT_F8E4M3FN, ER_FMT_F8E5M2, ER_FMT_BF16, bt, m, n, k, A, B, C, ER_FMT_BF16, dir,
                           ER_OPT_SATURATE, &sliced);
        free(A);
        free(B);
        free(C);
    }
    printf("bigk and batch: %lld elements by the slices or the exact binary64 path\n", sliced);
#ifdef ER_CUDA_HOST_PASS
    ck_assert_msg(sliced > 0, "the slices never ran");
#endif
    ck_assert_msg(bad == 0, "%ld mismatches (see stderr)", bad);
}
END_TEST

/* A bf16 pattern with its binade in [-4, 5] (a 21-bit grid per row holds a row of them). */
static uint16_t rnd_bf16_band(uint64_t *rng)
{
    uint64_t r = er_test_rand(rng);
    return (uint16_t)(((r >> 8) & 1u) << 15 | (uint64_t)(127 - 4 + (int)(r % 10)) << 7 | ((r >> 16) & 0x7Fu));
}

START_TEST(scaled_bf16)
{
    uint64_t rng = er_test_seed(ER_SEED_PREFIX "/scaled_bf16");
    long bad = 0;
    for (int q = 0; q < 3; q++) {
        /* q 0: f8E5M2 x bf16 (the binary64 path declines f8E5M2: the slices must run); 1: bf16 x bf16;
         * 2: bf16 x bf16 with a row spanning 41 bits (the route declines the tile to the other paths) */
        int fa = q == 0 ? ER_FMT_F8E5M2 : ER_FMT_BF16, fb = ER_FMT_BF16;
        int64_t m = 13, n = 11, k = 50, ab = q == 0 ? 1 : 2;
        long long sliced = 0;
        uint8_t *A = (uint8_t *)malloc((size_t)(m * k * ab));
        uint16_t *B = (uint16_t *)malloc((size_t)(k * n) * 2), *C = (uint16_t *)malloc((size_t)(m * n) * 2);
        for (int64_t e = 0; e < m * k; e++) {
            if (q == 0) A[e] = rnd_finite(fa, &rng);
            else {
                uint16_t v = rnd_bf16_band(&rng);
                memcpy(A + e * 2, &v, 2);
            }
        }
        for (int64_t e = 0; e < k * n; e++) B[e] = rnd_bf16_band(&rng);
        for (int64_t e = 0; e < m * n; e++) C[e] = e % 3 ? (uint16_t)(er_test_rand(&rng) & 0x3FFF) : 0;
        if (q == 2) {
            uint16_t big = 0x4980, tiny = 0x3580; /* 2^20, 2^-20 */
            memcpy(A + (2 * k + 1) * 2, &big, 2);
            memcpy(A + (2 * k + 7) * 2, &tiny, 2);
        }
        for (size_t o = 0; o < sizeof outs / sizeof outs[0]; o++)
            for (int dir = 0; dir < ER_RND_COUNT; dir++)
                bad += compare("scaled", fa, fb, dir % 2 ? ER_FMT_BF16 : -1, 1, m, n, k, A, (const uint8_t *)B, C, outs[o],
                               dir, optv[(o + (size_t)dir) % 3], &sliced);
        printf("scaled %s x bf16 (%s): %lld elements by the slices or the exact binary64 path\n", er_format_name(fa),
               q == 2 ? "a wide row" : "every row fits", sliced);
#ifdef ER_CUDA_HOST_PASS
        if (q == 0) ck_assert_msg(sliced >= (long long)m * n * 30 * 3 / 4, "the slices computed only %lld elements", sliced);
#endif
        free(A);
        free(B);
        free(C);
    }
    ck_assert_msg(bad == 0, "%ld mismatches (see stderr)", bad);
}
END_TEST

/* 0: run; 77: no device (skip); 1: EXACTREF_REQUIRE_CUDA=1 and none, or the host pass without its module. */
static int probe_(void)
{
    const char *req = getenv("EXACTREF_REQUIRE_CUDA");
    uint8_t a = 0x38, b = 0x38;
    float d = 0;
    er_tensor ta = er_tensor_2d(ER_FMT_F8E4M3FN, 1, 1, &a), tb = er_tensor_2d(ER_FMT_F8E4M3FN, 1, 1, &b);
    er_tensor td = er_tensor_2d(ER_FMT_F32, 1, 1, &d);
    er_mma_args x;
    char msg[256] = "";
    er_mma_args_init(&x);
    x.a = &ta;
    x.b = &tb;
    x.d = &td;
    x.backend = ER_BACKEND_CUDA;
    x.msg = msg;
    x.msg_size = sizeof msg;
    int st = run_cuda_(&x);
#ifdef ER_CUDA_HOST_PASS
    (void)req;
    if (st != ER_OK) {
        printf("FAIL: the host pass needs the CUDA backend module (EXACTREF_CUDA_MODULE): %s\n", msg);
        return 1;
    }
    return 0;
#else
    if (st != ER_ENODEVICE && st != ER_EUNSUPPORTED) return 0;
    if (req && !strcmp(req, "1")) {
        printf("FAIL: no CUDA device, and EXACTREF_REQUIRE_CUDA=1 (%s)\n", msg);
        return 1;
    }
    printf("SKIP: no CUDA device (%s); set EXACTREF_REQUIRE_CUDA=1 to make this a failure\n", msg);
    return 77;
#endif
}

int main(void)
{
    /* a failure of the route (no cuBLASLt, a cuBLASLt error) is an error here, not a silent decline */
    setenv("EXACTREF_CUDA_SLICES", "require", 1);
    int probe = probe_();
    if (probe) return probe;
    Suite *s = suite_create(ER_SEED_PREFIX);
    TCase *tc = tcase_create("slices");
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, random_and_specials);
    tcase_add_test(tc, bigk_and_batch);
    tcase_add_test(tc, scaled_bf16);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_set_fork_status(sr, CK_NOFORK); /* the CUDA runtime does not survive fork() */
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
