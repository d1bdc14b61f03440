/* test_backend_bounds.c: the bounds of a result made on a device backend (OpenCL, CUDA on
 * a GPU, the CUDA module's host pass) give the CPU's bits.  The suite of test_backends, run once per
 * device backend (er_tb); on the CPU itself the bounds are checked against simulated implementations
 * and MPFR in tests/result (test_bounds), not here.
 *
 * The bounds run on the device (one work-item or thread per element calling the shared core's
 * er_bound_element; on CUDA with normal's and any_order's canonical sums from the tiled binary64
 * kernel of cuda/er_cuda_chains.cuh); normal() on every backend is test_backend_normal.c's.  Each
 * problem is made into a Result twice, on the CPU and on the backend, and compared byte for byte:
 *   standards  normal, any_order, hopper, hopper-fp8, blackwell-mx, cdna3 and a user engine
 *              (engine:k=8,f=20,p=13,promote=32) over bf16, f16, f8E4M3FN and f32 inputs and mixed
 *              pairs, C absent or f32 / bf16, outputs f32 / bf16 / f16, several directions, compute
 *              formats, flush_to_zero, special values; the eight bounds arrays, then covers() of two
 *              outputs (rounded, and one with neighbours and specials) and its count outside
 *   mxfp8      f8E4M3FN with f8E8M0FNU scales, block 32 (and f4E2M1FN with f8E4M3FN scales, block 16)
 *   chains     problems wider than one 64 x 64 block; on CUDA the tiled kernel off
 *              (EXACTREF_CUDA_BOUNDS_CHAINS=0: er_bound_element's own loop) gives the same bits as on
 *   tiles      EXACTREF_<X>_MAX_CHUNK cutting rows and columns (on CUDA B's columns by 2-D copies)
 *   batched    3-D problems, broadcast operands, transposed views
 *   slack      results as inputs (er_result_create_from: slack of A, B and C)
 *   device     er_front_bounds of a device problem does not fall back to the CPU (*on_cpu == 0); on
 *              CUDA, without the module normal() fails with ER_EUNSUPPORTED and the bounds come from
 *              the CPU, same bits; a device index that does not exist is refused
 * The random tests print their seed (EXACTREF_SEED).
 */
#define _POSIX_C_SOURCE 200809L /* setenv, unsetenv, clock_gettime */

#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../../src/er_front.h"      /* er_front_bounds: where the bounds ran */
#include "er_tb.h"
#include "er_test.h"
#include "exactref/exactref.h"

#define MSG 8192

static double now_(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

#include "er_test_prob.h"

static const char *path_name(int be) { return be ? er_tb->label : "CPU"; }

/* EXACTREF_<X>_MAX_CHUNK of the backend under test set to v (NULL: unset). */
static void chunk_(const char *v)
{
    if (!er_tb->chunk_env) return;
    if (v) setenv(er_tb->chunk_env, v, 1);
    else unsetenv(er_tb->chunk_env);
}

/* ---- Results and comparisons ------------------------------------------------------------------- */

typedef struct {
    er_result *r;
    unsigned char *d;
    er_tensor D;
} res;

static size_t out_bytes(const prob *P) { return (size_t)((P->batch ? P->batch : 1) * P->m * P->n) * (size_t)sbytes(P->fd); }

static void res_make(res *R, prob *P, int backend, const char *what)
{
    er_mma_args a;
    char msg[MSG];
    er_status st;
    size_t nb = out_bytes(P);
    R->d = (unsigned char *)malloc(nb ? nb : 1);
    ck_assert(R->d != NULL);
    memset(R->d, 0xA5, nb);
    R->D = P->batch ? er_tensor_3d(P->fd, P->batch, P->m, P->n, R->d) : er_tensor_2d(P->fd, P->m, P->n, R->d);
    prob_args(P, &a, &R->D, backend);
    st = er_result_create(&a, &R->r, msg, sizeof msg);
    ck_assert_msg(st == ER_OK, "%s: er_result_create (%s): %s", what, path_name(backend), msg);
}

static void res_free(res *R)
{
    er_result_free(R->r);
    free(R->d);
    R->r = NULL;
    R->d = NULL;
}

static long g_compared, g_elements;

static void same_bounds(const er_bounds *x, const er_bounds *y, const char *what, const er_tb_topt *t)
{
    ck_assert_msg(x->count == y->count, "%s (%s): count %lld vs %lld", what, t->std, (long long)x->count,
                  (long long)y->count);
    for (int64_t e = 0; e < x->count; e++) {
        int bad = memcmp(&x->radius[e], &y->radius[e], 8) || memcmp(&x->tolerance[e], &y->tolerance[e], 8) ||
                  x->low[e] != y->low[e] || x->high[e] != y->high[e] || x->has_range[e] != y->has_range[e] ||
                  x->may_pinf[e] != y->may_pinf[e] || x->may_ninf[e] != y->may_ninf[e] || x->may_nan[e] != y->may_nan[e];
        if (bad)
            ck_abort_msg("%s: standard %s, compute %d, ftz %d: element %lld differs: CPU radius %a tolerance %a low "
                         "0x%llx high 0x%llx flags %d%d%d%d; %s radius %a tolerance %a low 0x%llx high "
                         "0x%llx flags %d%d%d%d",
                         what, t->std, t->compute, t->ftz, (long long)e, x->radius[e], x->tolerance[e],
                         (unsigned long long)x->low[e], (unsigned long long)x->high[e], x->has_range[e], x->may_pinf[e],
                         x->may_ninf[e], x->may_nan[e], er_tb->label, y->radius[e], y->tolerance[e], (unsigned long long)y->low[e],
                         (unsigned long long)y->high[e], y->has_range[e], y->may_pinf[e], y->may_ninf[e], y->may_nan[e]);
    }
    g_compared++;
    g_elements += (long)x->count;
}

/* Bounds of r[0] (CPU) and r[1] (the backend) under t; covers() of rounded and of a perturbed output. */
static void compare_bounds(res R[2], prob *P, const er_tb_topt *t, const char *what, uint64_t *rng)
{
    er_tol_opts o;
    const er_bounds *b[2];
    char msg[MSG];
    er_tb_make_opts(&o, t);
    for (int be = 0; be < 2; be++) {
        er_status st = er_result_bounds(R[be].r, &o, &b[be], msg, sizeof msg);
        ck_assert_msg(st == ER_OK, "%s: bounds (%s, %s): %s", what, path_name(be), t->std, msg);
    }
    same_bounds(b[0], b[1], what, t);
    {
        /* covers of the rounded answer and of one with neighbours, specials and the range's ends */
        size_t nb = out_bytes(P), cnt = nb / (size_t)sbytes(P->fd);
        int eb = sbytes(P->fd);
        unsigned char *out = (unsigned char *)malloc(nb ? nb : 1), *cov[2];
        cov[0] = (unsigned char *)malloc(cnt ? cnt : 1);
        cov[1] = (unsigned char *)malloc(cnt ? cnt : 1);
        ck_assert(out && cov[0] && cov[1]);
        for (int v = 0; v < 2; v++) {
            int64_t outside[2];
            er_tensor O = R[0].D;
            memcpy(out, R[0].d, nb);
            if (v)
                for (size_t e = 0; e < cnt; e++) {
                    uint64_t x = get_(out + e * (size_t)eb, eb), r = below(rng, 6);
                    if (r == 0) x = b[0]->low[e];
                    else if (r == 1) x = b[0]->high[e];
                    else if (r == 2) x = (x + 1) & mask_(8 * eb);
                    else if (r == 3) x = (x - 1) & mask_(8 * eb);
                    else if (r == 4) x = special_pattern(P->fd, rng);
                    put_(out + e * (size_t)eb, eb, x);
                }
            O.data = out;
            for (int be = 0; be < 2; be++) {
                er_status st = er_result_covers(R[be].r, &o, &O, cov[be], &outside[be], msg, sizeof msg);
                ck_assert_msg(st == ER_OK, "%s: covers (%s): %s", what, path_name(be), msg);
            }
            ck_assert_msg(outside[0] == outside[1] && !memcmp(cov[0], cov[1], cnt),
                          "%s: covers differ (%s): outside %lld vs %lld", what, t->std, (long long)outside[0],
                          (long long)outside[1]);
        }
        free(out);
        free(cov[0]);
        free(cov[1]);
    }
}

/* P on both backends: rounded, then the bounds under each of ts. */
static void check_prob(prob *P, const er_tb_topt *ts, int nt, const char *what, uint64_t *rng)
{
    res R[2];
    res_make(&R[0], P, ER_BACKEND_CPU, what);
    res_make(&R[1], P, er_tb->backend, what);
    ck_assert_msg(!memcmp(R[0].d, R[1].d, out_bytes(P)), "%s: rounded differs", what);
    for (int q = 0; q < nt; q++) compare_bounds(R, P, &ts[q], what, rng);
    res_free(&R[0]);
    res_free(&R[1]);
}

static const er_tb_topt all_std[] = {
    {"normal", -1, 0},        {"any_order", -1, 0},  {"normal", ER_FMT_BF16, 0},
    {"any_order", ER_FMT_F16, 1}, {"normal", ER_FMT_F32, 1}, {"hopper", -1, 0},
    {"hopper-fp8", -1, 0},    {"blackwell-mx", -1, 0}, {"cdna3", -1, 0},
    {"engine:k=8,f=20,p=13,promote=32", -1, 0},
};
#define NSTD ((int)(sizeof all_std / sizeof all_std[0]))

static const unsigned opt_set[4] = {0u, ER_OPT_SATURATE, ER_OPT_FTZ, ER_OPT_SATURATE | ER_OPT_FTZ};

/* ---- Tests ------------------------------------------------------------------------------------- */

START_TEST(test_standards)
{
    static const int ins[4] = {ER_FMT_BF16, ER_FMT_F16, ER_FMT_F8E4M3FN, ER_FMT_F32};
    static const int outs_[3] = {ER_FMT_F32, ER_FMT_BF16, ER_FMT_F16};
    uint64_t rng = er_tb_seed("bounds", "standards");
    for (int it = 0; it < 24; it++) {
        prob P;
        char what[64];
        er_tb_topt ts[4];
        memset(&P, 0, sizeof P);
        P.fa = ins[it % 4];
        P.fb = it % 3 ? P.fa : ins[below(&rng, 4)];
        P.fc = it % 3 == 0 ? -1 : it % 3 == 1 ? ER_FMT_F32 : ER_FMT_BF16;
        P.fd = outs_[it % 3];
        P.fs = -1;
        P.block = 1;
        P.dir = (int)below(&rng, ER_RND_COUNT);
        P.opts = opt_set[below(&rng, 4)];
        P.m = 1 + (int64_t)below(&rng, 6);
        P.n = 1 + (int64_t)below(&rng, 6);
        P.k = it % 6 == 5 ? 100 + (int64_t)below(&rng, 200) : (int64_t)below(&rng, 40);
        P.mode = (int)below(&rng, 2);
        P.spec = it % 4 == 3 ? 10 : 0;
        P.at = it % 5 == 2;
        prob_make(&P, &rng);
        for (int q = 0; q < 4; q++) ts[q] = all_std[(it + 3 * q) % NSTD];
        snprintf(what, sizeof what, "standards %d", it);
        check_prob(&P, ts, 4, what, &rng);
        prob_free(&P);
    }
}
END_TEST

START_TEST(test_mxfp8)
{
    uint64_t rng = er_tb_seed("bounds", "mxfp8");
    static const er_tb_topt ts[4] = {{"normal", -1, 0}, {"any_order", -1, 0}, {"blackwell-mx", -1, 0}, {"hopper-fp8", -1, 0}};
    for (int it = 0; it < 6; it++) {
        prob P;
        char what[64];
        memset(&P, 0, sizeof P);
        P.fa = P.fb = it < 4 ? ER_FMT_F8E4M3FN : ER_FMT_F4E2M1FN;
        P.fs = it < 4 ? ER_FMT_F8E8M0FNU : ER_FMT_F8E4M3FN;
        P.block = it < 4 ? 32 : 16;
        P.fc = it % 2 ? ER_FMT_F32 : -1;
        P.fd = it % 3 ? ER_FMT_F32 : ER_FMT_BF16;
        P.dir = it % ER_RND_COUNT;
        P.m = 2 + (int64_t)below(&rng, 5);
        P.n = 2 + (int64_t)below(&rng, 5);
        P.k = 32 + (int64_t)below(&rng, 100);
        P.mode = it % 2;
        P.spec = it == 3 ? 5 : 0;
        prob_make(&P, &rng);
        snprintf(what, sizeof what, "mxfp8 %d", it);
        check_prob(&P, ts, 4, what, &rng);
        prob_free(&P);
    }
}
END_TEST

/* Problems wider than one block of CUDA's tiled kernel; the tiled kernel off gives the same bits (on
 * OpenCL the variable changes nothing: the same comparison, thrice). */
START_TEST(test_chains)
{
    uint64_t rng = er_tb_seed("bounds", "chains");
    static const er_tb_topt ts[3] = {{"normal", -1, 0}, {"any_order", -1, 0}, {"normal", ER_FMT_BF16, 0}};
    static const int fm[3][2] = {{ER_FMT_BF16, ER_FMT_BF16}, {ER_FMT_F8E4M3FN, ER_FMT_F8E4M3FN}, {ER_FMT_F16, ER_FMT_F32}};
    for (int it = 0; it < 3; it++) {
        prob P;
        char what[64];
        res R[3];
        memset(&P, 0, sizeof P);
        P.fa = fm[it][0];
        P.fb = fm[it][1];
        P.fc = it == 1 ? ER_FMT_F32 : -1;
        P.fd = ER_FMT_F32;
        P.fs = -1;
        P.dir = it;
        P.m = 65 + (int64_t)below(&rng, 40);
        P.n = 60 + (int64_t)below(&rng, 80);
        P.k = it == 0 ? 37 : 16 * (1 + (int64_t)below(&rng, 8)) + (int64_t)below(&rng, 2);
        P.mode = it == 2 ? 0 : 1;
        P.spec = it == 2 ? 2 : 0;
        P.bt = it == 1;
        prob_make(&P, &rng);
        snprintf(what, sizeof what, "chains %d (%lld x %lld x %lld)", it, (long long)P.m, (long long)P.n,
                 (long long)P.k);
        res_make(&R[0], &P, ER_BACKEND_CPU, what);
        res_make(&R[1], &P, er_tb->backend, what);
        setenv("EXACTREF_CUDA_BOUNDS_CHAINS", "0", 1);
        res_make(&R[2], &P, er_tb->backend, what);
        for (int q = 0; q < 3; q++) {
            er_tol_opts o;
            const er_bounds *b[3];
            char msg[MSG];
            er_tb_make_opts(&o, &ts[q]);
            for (int x = 0; x < 3; x++) {
                if (x == 1) unsetenv("EXACTREF_CUDA_BOUNDS_CHAINS");
                if (x == 2) setenv("EXACTREF_CUDA_BOUNDS_CHAINS", "0", 1);
                ck_assert_msg(er_result_bounds(R[x].r, &o, &b[x], msg, sizeof msg) == ER_OK, "%s: %s", what, msg);
            }
            same_bounds(b[0], b[1], what, &ts[q]);
            same_bounds(b[0], b[2], what, &ts[q]);
        }
        unsetenv("EXACTREF_CUDA_BOUNDS_CHAINS");
        for (int x = 0; x < 3; x++) res_free(&R[x]);
        prob_free(&P);
    }
}
END_TEST

/* Tiles of a few rows and columns (EXACTREF_<X>_MAX_CHUNK), batches, broadcast and transposed operands. */
START_TEST(test_tiles_batched)
{
    static const char *caps[4] = {"1", "7", "64", "150"};
    uint64_t rng = er_tb_seed("bounds", "tiles");
    for (int it = 0; it < 8; it++) {
        prob P;
        char what[96];
        er_tb_topt ts[3] = {all_std[it % NSTD], all_std[(it + 4) % NSTD], {"any_order", -1, 0}};
        memset(&P, 0, sizeof P);
        P.fa = it % 2 ? ER_FMT_BF16 : ER_FMT_F16;
        P.fb = it % 3 ? ER_FMT_BF16 : ER_FMT_F8E4M3FN;
        P.fc = it % 2 ? ER_FMT_F32 : -1;
        P.fd = ER_FMT_F32;
        P.fs = -1;
        P.dir = it % ER_RND_COUNT;
        P.batch = it % 3 ? 2 + (int64_t)below(&rng, 2) : 0;
        P.a2d = P.batch && it % 4 == 1;
        P.b2d = P.batch && it % 4 == 2;
        P.at = it % 2;
        P.bt = it % 3 == 1;
        P.m = 3 + (int64_t)below(&rng, 9);
        P.n = 3 + (int64_t)below(&rng, 21);
        P.k = 1 + (int64_t)below(&rng, 60);
        P.mode = 1;
        P.spec = it % 4 == 0 ? 5 : 0;
        prob_make(&P, &rng);
        chunk_(caps[it % 4]);
        snprintf(what, sizeof what, "tiles %d (%s=%s)", it, er_tb->chunk_env, caps[it % 4]);
        check_prob(&P, ts, 3, what, &rng);
        chunk_(NULL);
        prob_free(&P);
    }
}
END_TEST

/* Results as inputs: the slack of A, B and C. */
START_TEST(test_slack)
{
    uint64_t rng = er_tb_seed("bounds", "slack");
    static const er_tb_topt ts[4] = {{"normal", -1, 0}, {"any_order", -1, 0}, {"hopper", -1, 0}, {"normal", ER_FMT_F32, 1}};
    for (int it = 0; it < 4; it++) {
        prob X, Y, Z;
        res RX[2], RY[2];
        er_result *rz[2];
        unsigned char *dz[2];
        er_tensor DZ[2];
        int64_t m = 2 + (int64_t)below(&rng, 4), k = 1 + (int64_t)below(&rng, 12), n = 2 + (int64_t)below(&rng, 4);
        char msg[MSG], what[64];
        er_tol_opts fo;
        snprintf(what, sizeof what, "slack %d", it);
        memset(&X, 0, sizeof X);
        memset(&Y, 0, sizeof Y);
        memset(&Z, 0, sizeof Z);
        /* X: m x k (bf16), Y: m x n (f32, for C); Z = X B + Y with the rounded X and Y */
        X.fa = X.fb = ER_FMT_BF16;
        X.fc = -1;
        X.fd = ER_FMT_BF16;
        X.fs = -1;
        X.m = m;
        X.k = 3 + (int64_t)below(&rng, 20);
        X.n = k;
        X.mode = 1;
        X.spec = it == 3 ? 10 : 0;
        prob_make(&X, &rng);
        Y = X;
        memset(&Y.A, 0, sizeof Y.A);
        Y.fd = ER_FMT_F32;
        Y.n = n;
        Y.k = 2 + (int64_t)below(&rng, 10);
        prob_make(&Y, &rng);
        Z.fa = ER_FMT_BF16;
        Z.fb = ER_FMT_BF16;
        Z.fc = -1;
        Z.fd = ER_FMT_F32;
        Z.fs = -1;
        Z.m = m;
        Z.k = k;
        Z.n = n;
        Z.mode = 1;
        Z.dir = it % ER_RND_COUNT;
        prob_make(&Z, &rng);
        er_tol_opts_init(&fo);
        if (it % 2) ck_assert(er_standard_parse("hopper", &fo.standard, msg, sizeof msg) == ER_OK);
        for (int be = 0; be < 2; be++) {
            er_mma_args a;
            res_make(&RX[be], &X, be ? er_tb->backend : ER_BACKEND_CPU, what);
            res_make(&RY[be], &Y, be ? er_tb->backend : ER_BACKEND_CPU, what);
            dz[be] = (unsigned char *)malloc((size_t)(m * n) * 4);
            ck_assert(dz[be] != NULL);
            DZ[be] = er_tensor_2d(ER_FMT_F32, m, n, dz[be]);
            prob_args(&Z, &a, &DZ[be], be ? er_tb->backend : ER_BACKEND_CPU);
            a.c = er_result_rounded(RY[be].r);
            ck_assert_msg(er_result_create_from(&a, RX[be].r, NULL, it >= 2 ? RY[be].r : NULL, &fo, &rz[be], msg,
                                                sizeof msg) == ER_OK,
                          "%s: create_from (%s): %s", what, path_name(be), msg);
        }
        ck_assert_msg(!memcmp(dz[0], dz[1], (size_t)(m * n) * 4), "%s: rounded differs", what);
        for (int q = 0; q < 4; q++) {
            er_tol_opts o;
            const er_bounds *b[2];
            er_tb_make_opts(&o, &ts[q]);
            for (int be = 0; be < 2; be++)
                ck_assert_msg(er_result_bounds(rz[be], &o, &b[be], msg, sizeof msg) == ER_OK, "%s: %s", what, msg);
            same_bounds(b[0], b[1], what, &ts[q]);
        }
        /* normal() through the chain (the earlier results' normal() as inputs) */
        for (int be = 0; be < 2; be++) {
            memset(dz[be], 0x5A, (size_t)(m * n) * 4);
            ck_assert_msg(er_result_normal(rz[be], -1, 0, &DZ[be], msg, sizeof msg) == ER_OK, "%s: normal: %s", what,
                          msg);
        }
        ck_assert_msg(!memcmp(dz[0], dz[1], (size_t)(m * n) * 4), "%s: normal() differs", what);
        for (int be = 0; be < 2; be++) {
            er_result_free(rz[be]);
            res_free(&RX[be]);
            res_free(&RY[be]);
            free(dz[be]);
        }
        prob_free(&X);
        prob_free(&Y);
        prob_free(&Z);
    }
}
END_TEST

/* The bounds of a device problem are computed by the device (no fallback to the CPU); on CUDA, without
 * the module normal() fails with a clear status and the bounds come from the CPU (the same bits); a
 * device index that does not exist is refused. */
START_TEST(test_device)
{
    uint64_t rng = er_tb_seed("bounds", "device");
    prob P;
    res R[2];
    er_mma_args a;
    er_standard s;
    er_bounds b;
    char msg[MSG], module[4096];
    int on_cpu = -1, st;
    int64_t cnt;
    memset(&P, 0, sizeof P);
    P.fa = P.fb = ER_FMT_BF16;
    P.fc = -1;
    P.fd = ER_FMT_F32;
    P.fs = -1;
    P.m = 5;
    P.n = 6;
    P.k = 33;
    P.mode = 1;
    prob_make(&P, &rng);
    res_make(&R[0], &P, ER_BACKEND_CPU, "device");
    res_make(&R[1], &P, er_tb->backend, "device");
    cnt = P.m * P.n;
    memset(&b, 0, sizeof b);
    b.count = cnt;
    b.radius = (double *)malloc((size_t)cnt * 8);
    b.tolerance = (double *)malloc((size_t)cnt * 8);
    b.low = (uint64_t *)malloc((size_t)cnt * 8);
    b.high = (uint64_t *)malloc((size_t)cnt * 8);
    b.has_range = (unsigned char *)malloc((size_t)cnt);
    b.may_pinf = (unsigned char *)malloc((size_t)cnt);
    b.may_ninf = (unsigned char *)malloc((size_t)cnt);
    b.may_nan = (unsigned char *)malloc((size_t)cnt);
    ck_assert(b.radius && b.tolerance && b.low && b.high && b.has_range && b.may_pinf && b.may_ninf && b.may_nan);
    ck_assert(er_standard_parse("normal", &s, msg, sizeof msg) == ER_OK);
    prob_args(&P, &a, &R[1].D, er_tb->backend);
    st = er_front_bounds(&a, &R[1].D, ER_FMT_F32, 0, &s, NULL, NULL, &b, msg, sizeof msg, &on_cpu);
    ck_assert_msg(st == ER_OK, "er_front_bounds: %s", msg);
    ck_assert_msg(on_cpu == 0, "the bounds of a %s problem were computed on the CPU", er_tb->label);
    {
        er_tol_opts o;
        const er_bounds *bc;
        er_tb_topt t = {"normal", ER_FMT_F32, 0};
        er_tb_make_opts(&o, &t);
        ck_assert(er_result_bounds(R[0].r, &o, &bc, msg, sizeof msg) == ER_OK);
        same_bounds(bc, &b, "device (er_front_bounds)", &t);
    }
    /* no module: normal() says so; the bounds fall back to the CPU */
    if (er_tb->backend == ER_BACKEND_CUDA) {
        const char *was = getenv("EXACTREF_CUDA_MODULE");
        er_tensor O = R[1].D;
        unsigned char *out = (unsigned char *)malloc(out_bytes(&P));
        er_tb_topt t = {"any_order", -1, 0};
        er_tol_opts o;
        const er_bounds *b2[2];
        snprintf(module, sizeof module, "%s", was ? was : "");
        setenv("EXACTREF_CUDA_MODULE", "/nonexistent/exactref-test/libexactref_cuda.so", 1);
        O.data = out;
        st = er_result_normal(R[1].r, -1, 0, &O, msg, sizeof msg);
        ck_assert_msg(st == ER_EUNSUPPORTED, "normal() without the module: %s (%s)", er_status_string(st), msg);
        free(out);
        on_cpu = -1;
        st = er_front_bounds(&a, &R[1].D, ER_FMT_F32, 0, &s, NULL, NULL, &b, msg, sizeof msg, &on_cpu);
        ck_assert_msg(st == ER_OK && on_cpu == 1, "bounds without the module: %s, on_cpu %d (%s)", er_status_string(st),
                      on_cpu, msg);
        er_tb_make_opts(&o, &t);
        for (int be = 0; be < 2; be++) ck_assert(er_result_bounds(R[be].r, &o, &b2[be], msg, sizeof msg) == ER_OK);
        same_bounds(b2[0], b2[1], "device (no module)", &t);
        if (module[0]) setenv("EXACTREF_CUDA_MODULE", module, 1);
        else unsetenv("EXACTREF_CUDA_MODULE");
    }
    if (er_tb->device) {
        /* a device index that does not exist: the bounds say so */
        a.device = 100000;
        st = er_front_bounds(&a, &R[1].D, ER_FMT_F32, 0, &s, NULL, NULL, &b, msg, sizeof msg, &on_cpu);
        ck_assert_msg(st == ER_ENODEVICE && strstr(msg, er_tb->no_device), "device 100000: %s (%s)",
                      er_status_string(st), msg);
    }
    free(b.radius);
    free(b.tolerance);
    free(b.low);
    free(b.high);
    free(b.has_range);
    free(b.may_pinf);
    free(b.may_ninf);
    free(b.may_nan);
    res_free(&R[0]);
    res_free(&R[1]);
    prob_free(&P);
}
END_TEST

Suite *er_tb_bounds_suite(void)
{
    Suite *s = suite_create(er_tb->name);
    TCase *tc = tcase_create("bounds");
    tcase_add_test(tc, test_device);
    tcase_add_test(tc, test_standards);
    tcase_add_test(tc, test_mxfp8);
    tcase_add_test(tc, test_chains);
    tcase_add_test(tc, test_tiles_batched);
    tcase_add_test(tc, test_slack);
    tcase_set_timeout(tc, 600);
    suite_add_tcase(s, tc);
    return s;
}

void er_tb_bounds_summary(void)
{
    printf("%s: %ld bounds comparisons, %ld bounds elements\n", er_tb->label, g_compared, g_elements);
    g_compared = 0;
    g_elements = 0;
}
