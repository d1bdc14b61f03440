/* bench_covers.c: covers and the check report's scoring in ns per output element (issue 16, item 3).
 *
 * For each size n: a bf16 product n x K times K x n (K small: the time of covers does not depend on
 * it, and the reference and bounds stay quick), its result and `normal` bounds, then an output made
 * from the rounded answer (f32 output: moved by -3..+3 ulps, one element in 1000 by 100000 ulps; bf16
 * output: the last bit flipped in one element of 7, one in 1000 moved by 100 ulps).  Timed, best of
 * --reps calls: er_result_covers (the first call separately: it makes the bounds' compact keys, kept
 * with the bounds), er_check_report_compute (covers + scoring), and the public er_bounds_covers /
 * er_check_report_score on the same bounds (no cached keys).
 *
 *   bench_covers [--sizes 1024,2048,4096] [--k 16] [--reps 5] [--format f32|bf16|both]
 */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_util.h"
#include "exactref/exactref.h"
#include "exactref/report.h"


/* the process's processor time (all threads): what a call costs when other work shares the cores */
static double cpu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static uint64_t rng(uint64_t *s) { return bench_splitmix64(s); }

/* a pattern moved by d ulps (sign-magnitude; the sign kept: the ranges here are away from zero) */
static uint32_t move(uint32_t x, int64_t d, uint32_t magm)
{
    uint32_t mag = x & magm;
    int64_t m = (int64_t)mag + d;
    if (m < 0) m = 0;
    if (m > (int64_t)magm) m = magm;
    return (x & ~magm) | (uint32_t)m;
}

static int run(int64_t n, int64_t K, int reps, int fmt, uint64_t seed, int exact)
{
    int64_t nn = n * n;
    uint16_t *a = malloc((size_t)(n * K) * 2), *b = malloc((size_t)(K * n) * 2);
    int sb = fmt == ER_FMT_F32 ? 4 : 2;
    unsigned char *d = malloc((size_t)nn * (size_t)sb), *o = malloc((size_t)nn * (size_t)sb);
    unsigned char *cov = malloc((size_t)nn);
    int64_t *idx = malloc(64 * sizeof *idx);
    if (!a || !b || !d || !o || !cov || !idx) return 1;
    uint64_t s = seed;
    for (int64_t i = 0; i < n * K; i++) {
        float v = (float)((double)(int64_t)(rng(&s) % 2001) / 1000.0 - 1.0);
        uint32_t u;
        memcpy(&u, &v, 4);
        a[i] = (uint16_t)(u >> 16);
        v = (float)((double)(int64_t)(rng(&s) % 2001) / 1000.0 - 1.0);
        memcpy(&u, &v, 4);
        b[i] = (uint16_t)(u >> 16);
    }
    er_tensor ta = er_tensor_2d(ER_FMT_BF16, n, K, a), tb = er_tensor_2d(ER_FMT_BF16, K, n, b);
    er_tensor td = er_tensor_2d(fmt, n, n, d), to = er_tensor_2d(fmt, n, n, o);
    er_mma_args args;
    er_result *res = NULL;
    er_tol_opts opt;
    const er_bounds *bd;
    char msg[512] = "";
    bench_mma_args(&args, &ta, &tb, &td);
    er_tol_opts_init(&opt);
    if (er_result_create(&args, &res, msg, sizeof msg) != ER_OK ||
        er_result_bounds(res, &opt, &bd, msg, sizeof msg) != ER_OK) {
        fprintf(stderr, "bench_covers: %s\n", msg);
        return 1;
    }
    const er_tensor *R = er_result_rounded(res);
    for (int64_t e = 0; e < nn; e++) {
        uint32_t x = 0;
        memcpy(&x, (const unsigned char *)R->data + (size_t)e * (size_t)sb, (size_t)sb);
        uint64_t r = rng(&s);
        if (exact) (void)r;
        else if (fmt == ER_FMT_F32) x = move(x, (r % 1000 == 0) ? 100000 : (int64_t)(r >> 20) % 7 - 3, 0x7FFFFFFFu);
        else x = (r % 1000 == 0) ? move(x, 100, 0x7FFFu) : (r % 7 == 0) ? x ^ 1u : x;
        memcpy(o + (size_t)e * (size_t)sb, &x, (size_t)sb);
    }
    int64_t outside = 0;
    double t0 = bench_now();
    int rc = er_result_covers(res, &opt, &to, cov, &outside, msg, sizeof msg);
    double first = bench_now() - t0, bc = 1e30, bs = 1e30, pc = 1e30, ps = 1e30, cs = 1e30;
    er_check_report rep;
    for (int k = 0; k < reps && rc == ER_OK; k++) {
        t0 = bench_now();
        rc = er_result_covers(res, &opt, &to, cov, &outside, msg, sizeof msg);
        double t1 = bench_now(), c1 = cpu_now();
        if (rc == ER_OK) rc = er_check_report_compute(res, &opt, &to, &ta, &tb, idx, 64, &rep, msg, sizeof msg);
        double t2 = bench_now(), c2 = cpu_now();
        if (c2 - c1 < cs) cs = c2 - c1;
        int64_t out2 = 0;
        if (rc == ER_OK) rc = er_bounds_covers(bd, &to, 0, cov, &out2, msg, sizeof msg);
        double t3 = bench_now();
        er_check_report rep2;
        if (rc == ER_OK) rc = er_check_report_score(bd, &to, R, cov, out2, &ta, &tb, idx, 64, &rep2, msg, sizeof msg);
        double t4 = bench_now();
        if (rc == ER_OK && (out2 != outside || rep2.worst != rep.worst || rep2.outside != rep.outside)) {
            fprintf(stderr, "bench_covers: the cached and public paths disagree\n");
            rc = ER_EINVAL;
        }
        if (t1 - t0 < bc) bc = t1 - t0;
        if (t2 - t1 < bs) bs = t2 - t1;
        if (t3 - t2 < pc) pc = t3 - t2;
        if (t4 - t2 < ps) ps = t4 - t2;
    }
    if (rc != ER_OK) {
        fprintf(stderr, "bench_covers: %s\n", msg);
        return 1;
    }
    double ne = 1e9 / (double)nn;
    printf("%-5s n=%-5lld covers %6.2f ns/element (first call %6.2f) | covers+scoring %6.2f (cpu %6.2f) | public covers %6.2f, "
           "covers+score %6.2f | %lld outside\n",
           fmt == ER_FMT_F32 ? "f32" : "bf16", (long long)n, bc * ne, first * ne, bs * ne, cs * ne, pc * ne, ps * ne,
           (long long)outside);
    fflush(stdout);
    er_result_free(res);
    free(a);
    free(b);
    free(d);
    free(o);
    free(cov);
    free(idx);
    return 0;
}

int main(int argc, char **argv)
{
    char sizes[256] = "1024,2048,4096";
    int64_t K = 16;
    int reps = 5, which = 3, exact = 0;
    uint64_t seed = 12345;
    const char *se = getenv("EXACTREF_SEED");
    if (se && *se) seed = strtoull(se, NULL, 0);
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--sizes") && i + 1 < argc) snprintf(sizes, sizeof sizes, "%s", argv[++i]);
        else if (!strcmp(argv[i], "--k") && i + 1 < argc) K = atoll(argv[++i]);
        else if (!strcmp(argv[i], "--reps") && i + 1 < argc) reps = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--exact")) exact = 1;
        else if (!strcmp(argv[i], "--format") && i + 1 < argc) {
            i++;
            which = !strcmp(argv[i], "f32") ? 1 : !strcmp(argv[i], "bf16") ? 2 : 3;
        } else {
            fprintf(stderr,
                    "usage: bench_covers [--sizes 1024,2048,4096] [--k 16] [--reps 5] [--format f32|bf16|both] [--exact]\n");
            return 2;
        }
    }
    if (K < 1 || reps < 1) return 2;
    printf("bench_covers: seed %llu, k = %lld, best of %d (ns per output element)\n", (unsigned long long)seed,
           (long long)K, reps);
    for (char *p = strtok(sizes, ","); p; p = strtok(NULL, ",")) {
        int64_t n = atoll(p);
        if (n < 1) continue;
        if ((which & 1) && run(n, K, reps, ER_FMT_F32, seed, exact)) return 1;
        if ((which & 2) && run(n, K, reps, ER_FMT_BF16, seed, exact)) return 1;
    }
    return 0;
}
