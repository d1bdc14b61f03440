/* test_backend_sweep.c: the bounds of a result made on a device backend (OpenCL, CUDA on a GPU, the
 * CUDA module's host pass), swept over the standards, formats and shapes, give the CPU's bits.  The
 * suite of test_backends, run once per device backend (er_tb).
 *
 * Each problem is made into a Result twice, on the CPU and on the backend; for each set of tolerance
 * options the eight bounds arrays (radius, tolerance, low, high, has_range, may_pinf, may_ninf,
 * may_nan) must be byte-identical, and so must covers() of several outputs (the rounded answer, and one
 * with neighbours, specials and the range's ends mixed in) and its count of elements outside:
 *   standards  every name er_standard_parse accepts (normal, any_order, every engine model) and user
 *              engines (engine:...), over bf16, f16, f32, tf32, f8E4M3FN, f8E5M2 and f64 inputs and
 *              mixed pairs, C or not, every output format family, several directions, compute formats,
 *              flush_to_zero, 10% special values (NaN, infinities, extremes)
 *   scaled     block-scaled operands: MXFP8 (f8E4M3FN / f8E5M2 with f8E8M0FNU scales, block 32),
 *              MXFP4 (f4E2M1FN, block 32), NVFP4-like (f4E2M1FN with f8E4M3FN scales, block 16)
 *   batched    3-D problems, operands broadcast over the batch, transposed views
 *   overflow   sums that overflow compute or the output, infinite and NaN operands
 *   chain      results as inputs (er_result_create_from: slack of A, B and C), on each backend
 *   tiles      EXACTREF_<X>_MAX_CHUNK forcing tiles of a few rows and columns; on OpenCL B' by columns
 *              and by rows (EXACTREF_OPENCL_BOUNDS_LAYOUT; the standards test alternates the layouts)
 * On OpenCL only (its fault-injection hook):
 *   nofp64     EXACTREF_OPENCL_FAULT=nofp64: a device without fp64 leaves the bounds to the CPU
 *   faults     EXACTREF_OPENCL_FAULT=build|nomem|lost: the bounds (and normal()) fail with ER_EDEVICE,
 *              the bounds with a message naming the problem (which also proves they run on the device),
 *              and succeed once the fault is gone
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
#include "exactref/exactref.h"

#define MSG 8192

/* C from within 3 binades of 1 (positive, for mode 4), scales from mode 1 */
#define ER_PROB_C_MODE(mode) ((mode) == 4 ? 4 : 1)
#include "er_test_prob.h"

static long g_compared, g_elements, g_covers;

/* A failed check leaves its test at once (no fork): every test starts without the tile cap, the fault
 * and the layout that other tests set. */
static void clean_env(void)
{
    if (er_tb->chunk_env) unsetenv(er_tb->chunk_env);
    unsetenv("EXACTREF_OPENCL_MAX_CHUNK");
    unsetenv("EXACTREF_OPENCL_FAULT");
    unsetenv("EXACTREF_OPENCL_BOUNDS_LAYOUT");
}

#define CMP_ARRAY(field, size)                                                                                   \
    do {                                                                                                         \
        if (memcmp(b[0]->field, b[1]->field, (size_t)cnt * (size))) {                                            \
            for (int64_t e_ = 0; e_ < cnt; e_++)                                                                 \
                if (memcmp((const char *)b[0]->field + e_ * (size), (const char *)b[1]->field + e_ * (size),     \
                           (size)))                                                                              \
                    ck_abort_msg("%s, %s (compute %d, ftz %d): " #field " differs at element %lld of %lld: "     \
                                 "cpu %s, %s %s",                                                                \
                                 what, t->std, t->compute, t->ftz, (long long)e_, (long long)cnt,                \
                                 show(b[0], e_, sc0, sizeof sc0), er_tb->name,                                   \
                                 show(b[1], e_, sc1, sizeof sc1));                                               \
        }                                                                                                        \
    } while (0)

static const char *show(const er_bounds *b, int64_t e, char *buf, size_t size)
{
    snprintf(buf, size, "radius %a tolerance %a low 0x%llx high 0x%llx range %d +inf %d -inf %d nan %d", b->radius[e],
             b->tolerance[e], (unsigned long long)b->low[e], (unsigned long long)b->high[e], b->has_range[e],
             b->may_pinf[e], b->may_ninf[e], b->may_nan[e]);
    return buf;
}

/* The two results' bounds under t, and covers() of two outputs: identical. */
static void compare_results(er_result *r[2], const er_tb_topt *t, const char *what, uint64_t *rng)
{
    const er_bounds *b[2];
    er_tol_opts o;
    char msg[MSG], sc0[256], sc1[256];
    er_status st[2];
    er_tb_make_opts(&o, t);
    for (int be = 0; be < 2; be++) {
        msg[0] = 0;
        st[be] = er_result_bounds(r[be], &o, &b[be], msg, sizeof msg);
    }
    ck_assert_msg(st[0] == st[1], "%s, %s: er_result_bounds: cpu status %d, %s %d (%s)", what, t->std, st[0], er_tb->name, st[1],
                  msg);
    if (st[0] != ER_OK) return; /* options refused on both (none in this suite so far) */
    int64_t cnt = b[0]->count;
    ck_assert_int_eq(cnt, b[1]->count);
    CMP_ARRAY(radius, sizeof(double));
    CMP_ARRAY(tolerance, sizeof(double));
    CMP_ARRAY(low, sizeof(uint64_t));
    CMP_ARRAY(high, sizeof(uint64_t));
    CMP_ARRAY(has_range, 1);
    CMP_ARRAY(may_pinf, 1);
    CMP_ARRAY(may_ninf, 1);
    CMP_ARRAY(may_nan, 1);
    g_compared++;
    g_elements += (long)cnt;
    /* covers(): the rounded answer, and an output with neighbours, the range's ends and specials */
    {
        const er_tensor *R = er_result_rounded(r[0]);
        int f = R->format, eb = sbytes(f);
        er_format_info fi;
        size_t nb = (size_t)cnt * (size_t)eb;
        unsigned char *out = (unsigned char *)malloc(nb ? nb : 1), *cov[2];
        er_tensor O;
        er_format_get_info(f, &fi);
        cov[0] = (unsigned char *)malloc(cnt ? (size_t)cnt : 1);
        cov[1] = (unsigned char *)malloc(cnt ? (size_t)cnt : 1);
        ck_assert(out && cov[0] && cov[1]);
        O = R->ndim == 3 ? er_tensor_3d(f, R->shape[0], R->shape[1], R->shape[2], out)
                         : er_tensor_2d(f, R->shape[0], R->shape[1], out);
        for (int pass = 0; pass < 2; pass++) {
            int64_t outside[2];
            int64_t e = 0, B = R->ndim == 3 ? R->shape[0] : 1, M = R->shape[R->ndim - 2], N = R->shape[R->ndim - 1];
            for (int64_t bb = 0; bb < B; bb++)
                for (int64_t i = 0; i < M; i++)
                    for (int64_t j = 0; j < N; j++, e++) {
                        int64_t sb = R->ndim == 3 ? R->strides[0] : 0;
                        uint64_t x = get_((const unsigned char *)R->data +
                                              (size_t)(bb * sb + i * R->strides[R->ndim - 2] + j * R->strides[R->ndim - 1]) *
                                                  (size_t)eb,
                                          eb);
                        if (pass == 1) switch (below(rng, 8)) {
                            case 0: x = (x + 1u) & mask_(fi.width); break;
                            case 1: x = (x - 1u) & mask_(fi.width); break;
                            case 2: x = b[0]->low[e]; break;
                            case 3: x = b[0]->high[e]; break;
                            case 4: x = (b[0]->high[e] + 1u) & mask_(fi.width); break;
                            case 5: x = special_pattern(f, rng); break;
                            case 6: x = er_test_rand(rng) & mask_(fi.width); break;
                            default: break;
                            }
                        put_(out + (size_t)e * (size_t)eb, eb, x);
                    }
            for (int be = 0; be < 2; be++) {
                memset(cov[be], 0xA5, cnt ? (size_t)cnt : 1);
                ck_assert_msg(er_result_covers(r[be], &o, &O, cov[be], &outside[be], msg, sizeof msg) == ER_OK,
                              "%s: covers: %s", what, msg);
            }
            ck_assert_msg(outside[0] == outside[1] && !memcmp(cov[0], cov[1], (size_t)cnt),
                          "%s, %s: covers differs (outside %lld vs %lld)", what, t->std, (long long)outside[0],
                          (long long)outside[1]);
            g_covers++;
        }
        free(out);
        free(cov[0]);
        free(cov[1]);
    }
}

/* P as a Result on the CPU and on the backend (the same rounded bits), then every option of ts compared. */
static void check_prob(prob *P, const er_tb_topt *ts, int nt, const char *what, uint64_t *rng)
{
    er_result *r[2] = {NULL, NULL};
    unsigned char *d[2];
    er_tensor D[2];
    size_t nb = (size_t)((P->batch ? P->batch : 1) * P->m * P->n) * (size_t)sbytes(P->fd);
    char msg[MSG];
    for (int be = 0; be < 2; be++) {
        er_mma_args a;
        er_status st;
        d[be] = (unsigned char *)malloc(nb ? nb : 1);
        ck_assert(d[be] != NULL);
        memset(d[be], 0xA5, nb);
        D[be] = P->batch ? er_tensor_3d(P->fd, P->batch, P->m, P->n, d[be]) : er_tensor_2d(P->fd, P->m, P->n, d[be]);
        prob_args(P, &a, &D[be], be ? er_tb->backend : ER_BACKEND_CPU);
        st = er_result_create(&a, &r[be], msg, sizeof msg);
        ck_assert_msg(st == ER_OK, "%s: er_result_create (%s): %s", what, be ? er_tb->name : "cpu", msg);
    }
    ck_assert_msg(!memcmp(d[0], d[1], nb), "%s: rounded differs", what);
    for (int q = 0; q < nt; q++) compare_results(r, &ts[q], what, rng);
    for (int be = 0; be < 2; be++) {
        er_result_free(r[be]);
        free(d[be]);
    }
}

static const char *const all_standards[] = {
    "normal", "any_order", "volta", "turing", "ampere", "ampere-tf32", "ada-fp8", "hopper", "hopper-tf32", "hopper-fp8",
    "deepgemm-fp8", "hopper-fp8-deepgemm", "blackwell", "blackwell-f8f6f4", "blackwell-mx", "blackwell-mxf8f6f4",
    "blackwell-mxf4", "cdna3", "engine:k=8,f=20,p=13,round=nearest_even,promote=16,group=2",
    "engine:k=4,f=30,p=23,floor=1"};
#define NSTD ((int)(sizeof all_standards / sizeof all_standards[0]))

static const int in_formats[] = {ER_FMT_BF16, ER_FMT_F16, ER_FMT_F32, ER_FMT_TF32, ER_FMT_F8E4M3FN, ER_FMT_F8E5M2,
                                 ER_FMT_F64};
static const int out_formats[] = {ER_FMT_F32, ER_FMT_BF16, ER_FMT_F16, ER_FMT_F64, ER_FMT_F8E4M3FN, ER_FMT_F8E5M2,
                                  ER_FMT_F8E4M3FNUZ, ER_FMT_TF32};
static const int computes[] = {-1, ER_FMT_F32, ER_FMT_BF16, ER_FMT_F16, ER_FMT_F64};
static const unsigned opt_set[4] = {0u, ER_OPT_SATURATE, ER_OPT_FTZ, ER_OPT_SATURATE | ER_OPT_FTZ};
#define N_(a) (sizeof(a) / sizeof((a)[0]))

/* Every standard on every input format (same for A and B), a few problems each. */
START_TEST(test_standards)
{
    clean_env();
    uint64_t rng = er_tb_seed("sweep", "standards");
    for (size_t fi = 0; fi < N_(in_formats); fi++)
        for (int rep = 0; rep < 3; rep++) {
            prob P;
            er_tb_topt ts[NSTD + 4];
            int nt = 0;
            char what[96];
            memset(&P, 0, sizeof P);
            P.fa = in_formats[fi];
            P.fb = rep == 2 ? in_formats[below(&rng, N_(in_formats))] : P.fa;
            P.fd = rep == 0 ? ER_FMT_F32 : out_formats[below(&rng, N_(out_formats))];
            P.fc = rep == 1 ? -1 : (below(&rng, 2) ? ER_FMT_F32 : P.fd);
            P.fs = -1;
            P.block = 1;
            P.dir = (int)below(&rng, ER_RND_COUNT);
            P.opts = opt_set[below(&rng, 4)];
            P.m = 1 + (int64_t)below(&rng, 5);
            P.n = 1 + (int64_t)below(&rng, 5);
            P.k = rep == 0 ? 1 + (int64_t)below(&rng, 40) : (int64_t)below(&rng, 300);
            P.mode = rep == 1 ? 4 : (int)below(&rng, 2);
            P.spec = rep == 2 ? 10 : 0;
            for (int s = 0; s < NSTD; s++) ts[nt++] = (er_tb_topt){all_standards[s], -1, 0};
            /* normal and any_order with other compute formats and flush to zero */
            ts[nt++] = (er_tb_topt){"normal", computes[below(&rng, N_(computes))], 1};
            ts[nt++] = (er_tb_topt){"any_order", computes[below(&rng, N_(computes))], (int)below(&rng, 2)};
            ts[nt++] = (er_tb_topt){"normal", computes[below(&rng, N_(computes))], 0};
            ts[nt++] = (er_tb_topt){all_standards[2 + below(&rng, NSTD - 2)], -1, 1};
            prob_make(&P, &rng);
            /* B' by rows (the GPU layout) for every other problem, else the device's own choice */
            if ((fi + (size_t)rep) % 2) setenv("EXACTREF_OPENCL_BOUNDS_LAYOUT", "rows", 1);
            else unsetenv("EXACTREF_OPENCL_BOUNDS_LAYOUT");
            snprintf(what, sizeof what, "standards %s x %s -> %s rep %d k %lld%s", er_format_name(P.fa),
                     er_format_name(P.fb), er_format_name(P.fd), rep, (long long)P.k,
                     (fi + (size_t)rep) % 2 ? " (rows)" : "");
            check_prob(&P, ts, nt, what, &rng);
            prob_free(&P);
        }
}
END_TEST

/* Block-scaled operands: MXFP8, MXFP4, NVFP4-like. */
START_TEST(test_scaled)
{
    clean_env();
    static const int elems[3][3] = {{ER_FMT_F8E4M3FN, ER_FMT_F8E8M0FNU, 32},
                                    {ER_FMT_F4E2M1FN, ER_FMT_F8E8M0FNU, 32},
                                    {ER_FMT_F4E2M1FN, ER_FMT_F8E4M3FN, 16}};
    static const er_tb_topt ts[] = {{"normal", -1, 0},        {"any_order", -1, 0},     {"blackwell-mx", -1, 0},
                              {"blackwell-mxf8f6f4", -1, 0}, {"blackwell-mxf4", -1, 0}, {"hopper-fp8", -1, 0},
                              {"deepgemm-fp8", -1, 0},  {"ada-fp8", -1, 0},       {"normal", ER_FMT_BF16, 1},
                              {"blackwell-f8f6f4", -1, 1}};
    uint64_t rng = er_tb_seed("sweep", "scaled");
    for (int it = 0; it < 12; it++) {
        prob P;
        char what[96];
        int q = it % 3;
        memset(&P, 0, sizeof P);
        P.fa = elems[q][0];
        P.fb = q == 0 && it % 2 ? ER_FMT_F8E5M2 : elems[q][0];
        P.fs = elems[q][1];
        P.block = elems[q][2];
        P.fd = it % 4 ? ER_FMT_F32 : ER_FMT_BF16;
        P.fc = it % 2 ? ER_FMT_F32 : -1;
        P.dir = (int)below(&rng, ER_RND_COUNT);
        P.m = 1 + (int64_t)below(&rng, 4);
        P.n = 1 + (int64_t)below(&rng, 4);
        P.k = P.block * (1 + (int64_t)below(&rng, 6)) - (int64_t)below(&rng, 3);
        P.mode = (int)below(&rng, 2);
        P.spec = it >= 9 ? 5 : 0;
        prob_make(&P, &rng);
        snprintf(what, sizeof what, "scaled %s/%s block %d k %lld", er_format_name(P.fa), er_format_name(P.fs), P.block,
                 (long long)P.k);
        check_prob(&P, ts, (int)N_(ts), what, &rng);
        prob_free(&P);
    }
}
END_TEST

/* Batches with broadcast operands and transposed views. */
START_TEST(test_batched)
{
    clean_env();
    static const er_tb_topt ts[] = {{"normal", -1, 0}, {"any_order", -1, 1}, {"hopper", -1, 0}, {"ampere", -1, 0},
                              {"cdna3", -1, 0},  {"normal", ER_FMT_F16, 0}};
    uint64_t rng = er_tb_seed("sweep", "batched");
    for (int it = 0; it < 10; it++) {
        prob P;
        char what[96];
        memset(&P, 0, sizeof P);
        P.fa = in_formats[below(&rng, 3)];
        P.fb = in_formats[below(&rng, 3)];
        P.fd = out_formats[below(&rng, 3)];
        P.fc = it % 2 ? P.fd : -1;
        P.fs = -1;
        P.block = 1;
        P.dir = it % ER_RND_COUNT;
        P.batch = 2 + (int64_t)below(&rng, 3);
        P.a2d = it % 3 == 1;
        P.b2d = it % 3 == 2;
        P.at = below(&rng, 2);
        P.bt = below(&rng, 2);
        P.m = 1 + (int64_t)below(&rng, 6);
        P.n = 1 + (int64_t)below(&rng, 6);
        P.k = (int64_t)below(&rng, 70);
        P.mode = 1;
        P.spec = it % 4 == 3 ? 8 : 0;
        prob_make(&P, &rng);
        snprintf(what, sizeof what, "batched %d (batch %lld)", it, (long long)P.batch);
        check_prob(&P, ts, (int)N_(ts), what, &rng);
        prob_free(&P);
    }
}
END_TEST

/* Sums that overflow compute or the output; NaN and infinite operands and C. */
START_TEST(test_overflow)
{
    clean_env();
    static const int fm[4] = {ER_FMT_F16, ER_FMT_BF16, ER_FMT_F32, ER_FMT_F64};
    static const er_tb_topt ts[] = {{"normal", -1, 0},        {"any_order", -1, 0}, {"hopper", -1, 0},
                              {"volta", -1, 0},         {"deepgemm-fp8", -1, 0}, {"normal", ER_FMT_F16, 0},
                              {"any_order", ER_FMT_BF16, 1}, {"blackwell-mxf4", -1, 0}};
    uint64_t rng = er_tb_seed("sweep", "overflow");
    for (int it = 0; it < 16; it++) {
        prob P;
        char what[96];
        memset(&P, 0, sizeof P);
        P.fa = P.fb = fm[it % 4];
        P.fd = it % 3 ? fm[(it + 1) % 4] : ER_FMT_F8E4M3FN;
        P.fc = it >= 8 ? fm[it % 4] : -1;
        P.fs = -1;
        P.block = 1;
        P.dir = it % ER_RND_COUNT;
        P.opts = opt_set[it % 4];
        P.m = 3;
        P.n = 3;
        P.k = 24 + it;
        P.mode = 2; /* A near the top of the range, B in [1/4, 1) */
        P.spec = it % 2 ? 15 : 0;
        prob_make(&P, &rng);
        snprintf(what, sizeof what, "overflow %s -> %s", er_format_name(P.fa), er_format_name(P.fd));
        check_prob(&P, ts, (int)N_(ts), what, &rng);
        prob_free(&P);
    }
}
END_TEST

/* Results as inputs, on each backend: x = A1 B1 (M x N), y = G H (N x P2), c = A1 B3 (M x P2), then
 * z = x y + c with x, and y or c as well, passed as earlier results (slack of A, B and C). */
START_TEST(test_chain)
{
    clean_env();
    static const er_tb_topt ts[] = {{"normal", -1, 0}, {"any_order", -1, 0}, {"hopper", -1, 0}, {"blackwell", -1, 1},
                              {"normal", ER_FMT_BF16, 0}};
    static const char *const from[3] = {"normal", "any_order", "hopper"};
    uint64_t rng = er_tb_seed("sweep", "chain");
    for (int it = 0; it < 9; it++) {
        int64_t M = 1 + (int64_t)below(&rng, 4), K = 1 + (int64_t)below(&rng, 60), N = 1 + (int64_t)below(&rng, 4),
                K2 = 1 + (int64_t)below(&rng, 30), P2 = 1 + (int64_t)below(&rng, 5);
        int f1 = it % 2 ? ER_FMT_BF16 : ER_FMT_F16, spec = it % 3 == 2 ? 10 : 0;
        int use_b = it % 3 == 2, use_c = it % 3 >= 1;
        tens A1, B1, G, H, B3, B2;
        er_result *x[2], *y[2] = {NULL, NULL}, *c[2] = {NULL, NULL}, *z[2];
        er_tensor DX[2], DY[2], DC[2], DZ[2];
        unsigned char *mem[2][4];
        char msg[MSG], what[64];
        er_tol_opts fo;
        er_tb_make_opts(&fo, &(er_tb_topt){from[it % 3], -1, it % 2});
        tens_make(&A1, f1, 0, M, K, 0, &rng, 1, spec);
        tens_make(&B1, f1, 0, K, N, 0, &rng, 1, spec);
        tens_make(&G, f1, 0, N, K2, 0, &rng, 1, 0);
        tens_make(&H, f1, 0, K2, P2, 0, &rng, 1, 0);
        tens_make(&B3, f1, 0, K, P2, 0, &rng, 1, 0);
        tens_make(&B2, ER_FMT_F32, 0, N, P2, 0, &rng, 1, 0);
        for (int be = 0; be < 2; be++) {
            er_mma_args g;
            int backend = be ? er_tb->backend : ER_BACKEND_CPU;
            for (int q = 0; q < 4; q++) {
                mem[be][q] = (unsigned char *)calloc((size_t)((M > N ? M : N) * (N > P2 ? N : P2)), 4);
                ck_assert(mem[be][q] != NULL);
            }
            DX[be] = er_tensor_2d(ER_FMT_F32, M, N, mem[be][0]);
            DY[be] = er_tensor_2d(ER_FMT_F32, N, P2, mem[be][1]);
            DC[be] = er_tensor_2d(ER_FMT_F32, M, P2, mem[be][2]);
            DZ[be] = er_tensor_2d(ER_FMT_F32, M, P2, mem[be][3]);
            er_mma_args_init(&g);
            g.a = &A1.t;
            g.b = &B1.t;
            g.d = &DX[be];
            g.backend = backend;
            ck_assert_msg(er_result_create(&g, &x[be], msg, sizeof msg) == ER_OK, "chain x: %s", msg);
            if (use_b) {
                g.a = &G.t;
                g.b = &H.t;
                g.d = &DY[be];
                ck_assert_msg(er_result_create(&g, &y[be], msg, sizeof msg) == ER_OK, "chain y: %s", msg);
            }
            if (use_c) {
                g.a = &A1.t;
                g.b = &B3.t;
                g.d = &DC[be];
                g.rounding = ER_RND_ZERO;
                ck_assert_msg(er_result_create(&g, &c[be], msg, sizeof msg) == ER_OK, "chain c: %s", msg);
            }
            er_mma_args_init(&g);
            g.b = &B2.t; /* replaced by y where use_b */
            g.d = &DZ[be];
            g.rounding = (int)(it % ER_RND_COUNT);
            g.backend = backend;
            ck_assert_msg(er_result_create_from(&g, x[be], y[be], c[be], &fo, &z[be], msg, sizeof msg) == ER_OK,
                          "chain z: %s", msg);
        }
        ck_assert_msg(!memcmp(mem[0][3], mem[1][3], (size_t)(M * P2) * 4), "chain %d: rounded differs", it);
        snprintf(what, sizeof what, "chain %d (%s, b %d, c %d)", it, from[it % 3], use_b, use_c);
        for (size_t q = 0; q < N_(ts); q++) compare_results(z, &ts[q], what, &rng);
        for (int be = 0; be < 2; be++) {
            er_result_free(z[be]);
            er_result_free(x[be]);
            er_result_free(y[be]);
            er_result_free(c[be]);
            for (int q = 0; q < 4; q++) free(mem[be][q]);
        }
        tens_free(&A1);
        tens_free(&B1);
        tens_free(&G);
        tens_free(&H);
        tens_free(&B3);
        tens_free(&B2);
    }
}
END_TEST

/* Tiles of a few rows and columns (EXACTREF_<X>_MAX_CHUNK), against the CPU. */
START_TEST(test_tiles)
{
    clean_env();
    static const char *const caps[] = {"1", "5", "7", "30", "64", "1", "5", "7", "30", "64"};
    static const er_tb_topt ts[] = {{"normal", -1, 0}, {"any_order", -1, 1}, {"hopper", -1, 0}, {"normal", ER_FMT_F16, 0}};
    uint64_t rng = er_tb_seed("sweep", "tiles");
    for (size_t c = 0; c < N_(caps); c++) {
        prob P;
        char what[64];
        memset(&P, 0, sizeof P);
        P.fa = ER_FMT_BF16;
        P.fb = c % 2 ? ER_FMT_F16 : ER_FMT_BF16;
        P.fd = ER_FMT_F32;
        P.fc = c % 2 ? ER_FMT_F32 : -1;
        P.fs = -1;
        P.block = 1;
        P.dir = (int)(c % ER_RND_COUNT);
        P.batch = c % 5 == 4 ? 2 : 0;
        P.m = 13;
        P.n = 11;
        P.k = 37;
        P.mode = 1;
        P.spec = 4;
        prob_make(&P, &rng);
        if (er_tb->chunk_env) setenv(er_tb->chunk_env, caps[c], 1);
        setenv("EXACTREF_OPENCL_BOUNDS_LAYOUT", c < 5 ? "columns" : "rows", 1);
        snprintf(what, sizeof what, "tiles of at most %s elements, B' by %s", caps[c], c < 5 ? "columns" : "rows");
        check_prob(&P, ts, (int)N_(ts), what, &rng);
        clean_env();
        prob_free(&P);
    }
}
END_TEST

/* EXACTREF_OPENCL_FAULT=nofp64: a device without fp64 leaves the bounds to the CPU: the same bits. */
START_TEST(test_nofp64)
{
    static const er_tb_topt ts[] = {{"normal", -1, 0}, {"hopper", -1, 0}, {"any_order", ER_FMT_F16, 1}};
    uint64_t rng = er_tb_seed("sweep", "nofp64");
    prob P;
    clean_env();
    memset(&P, 0, sizeof P);
    P.fa = ER_FMT_BF16;
    P.fb = ER_FMT_F8E4M3FN;
    P.fd = ER_FMT_F32;
    P.fc = ER_FMT_F32;
    P.fs = -1;
    P.block = 1;
    P.m = 5;
    P.n = 6;
    P.k = 33;
    P.mode = 1;
    P.spec = 5;
    prob_make(&P, &rng);
    setenv("EXACTREF_OPENCL_FAULT", "nofp64", 1);
    check_prob(&P, ts, (int)N_(ts), "no fp64", &rng);
    unsetenv("EXACTREF_OPENCL_FAULT");
    prob_free(&P);
}
END_TEST

/* EXACTREF_OPENCL_FAULT: every fault fails the bounds with ER_EDEVICE and a message naming it. */
START_TEST(test_faults)
{
    clean_env();
    static const char *const fault[3] = {"build", "nomem", "lost"};
    static const char *const want[3] = {"build log", "CL_MEM_OBJECT_ALLOCATION_FAILURE", "CL_DEVICE_NOT_AVAILABLE"};
    uint64_t rng = 99;
    for (int f = 0; f < 3; f++) {
        prob P;
        er_result *r;
        er_mma_args a;
        unsigned char d[4 * 4 * 4];
        er_tensor D;
        const er_bounds *b;
        er_tol_opts o;
        char msg[MSG];
        er_status st;
        memset(&P, 0, sizeof P);
        P.fa = P.fb = ER_FMT_BF16;
        P.fd = ER_FMT_F32;
        P.fc = P.fs = -1;
        P.block = 1;
        P.m = P.n = 4;
        P.k = 8;
        P.mode = 1;
        prob_make(&P, &rng);
        D = er_tensor_2d(P.fd, P.m, P.n, d);
        prob_args(&P, &a, &D, er_tb->backend);
        ck_assert_msg(er_result_create(&a, &r, msg, sizeof msg) == ER_OK, "faults: create: %s", msg);
        er_tb_make_opts(&o, &(er_tb_topt){f == 2 ? "hopper" : "normal", -1, 0});
        setenv("EXACTREF_OPENCL_FAULT", fault[f], 1);
        {
            /* normal() on the device fails the same way, with the device's message */
            unsigned char nd[4 * 4 * 4];
            er_tensor ND = er_tensor_2d(P.fd, P.m, P.n, nd);
            msg[0] = 0;
            st = er_result_normal(r, ER_FMT_F32, 0, &ND, msg, sizeof msg);
            ck_assert_msg(st == ER_EDEVICE, "fault %s: normal(): status %d", fault[f], st);
            ck_assert_msg(strstr(msg, "OpenCL") != NULL, "fault %s: normal()'s message '%s' does not name OpenCL",
                          fault[f], msg);
        }
        msg[0] = 0;
        st = er_result_bounds(r, &o, &b, msg, sizeof msg);
        unsetenv("EXACTREF_OPENCL_FAULT");
        ck_assert_msg(st == ER_EDEVICE, "fault %s: status %d (%s)", fault[f], st, msg);
        ck_assert_msg(strstr(msg, want[f]) != NULL, "fault %s: message '%s' lacks '%s'", fault[f], msg, want[f]);
        printf("fault %s: %s\n", fault[f], msg);
        /* without the fault the same call succeeds */
        ck_assert_msg(er_result_bounds(r, &o, &b, msg, sizeof msg) == ER_OK, "after fault %s: %s", fault[f], msg);
        er_result_free(r);
        prob_free(&P);
    }
}
END_TEST

Suite *er_tb_sweep_suite(void)
{
    Suite *s = suite_create(er_tb->name);
    TCase *tc = tcase_create("sweep");
    if (er_tb->backend == ER_BACKEND_OPENCL) {
        tcase_add_test(tc, test_faults);
        tcase_add_test(tc, test_nofp64);
    }
    tcase_add_test(tc, test_tiles);
    tcase_add_test(tc, test_overflow);
    tcase_add_test(tc, test_scaled);
    tcase_add_test(tc, test_batched);
    tcase_add_test(tc, test_chain);
    tcase_add_test(tc, test_standards);
    tcase_set_timeout(tc, 600);
    suite_add_tcase(s, tc);
    return s;
}

void er_tb_sweep_summary(void)
{
    printf("%s: %ld bounds comparisons (%ld elements), %ld covers comparisons in the sweep\n", er_tb->label,
           g_compared, g_elements, g_covers);
    g_compared = 0;
    g_elements = 0;
    g_covers = 0;
}
