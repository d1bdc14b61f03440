/* bench_interp_bounds.c: the interpreter's bounds mode against its point mode on cuTile's kernels (softmax,
 * bf16 matmul, reduce/scan, the FMHA sample causal and not), and the bounds' tightness: the
 * median width of the enclosures in ulps of the output. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_util.h"
#include "exactref/exactref.h"
#include "exactref/interp.h"


static uint64_t rs = 0x5eed2026u;
static double urand(void) { return (double)(bench_splitmix64(&rs) >> 11) * 0x1p-53; }

static er_interp_module *load(const char *dir, const char *name, const char **kernel)
{
    char path[2048], msg[1024];
    FILE *f;
    long n;
    char *text;
    er_interp_module *m = NULL;
    snprintf(path, sizeof path, "%s/%s", dir, name);
    if (!(f = fopen(path, "rb"))) return NULL;
    fseek(f, 0, SEEK_END);
    n = ftell(f);
    fseek(f, 0, SEEK_SET);
    text = (char *)malloc((size_t)n + 1);
    if (!text || fread(text, 1, (size_t)n, f) != (size_t)n) {
        fclose(f);
        free(text);
        return NULL;
    }
    fclose(f);
    if (er_interp_parse(text, (size_t)n, name, &m, msg, sizeof msg) != ER_OK) {
        fprintf(stderr, "%s\n", msg);
        m = NULL;
    }
    free(text);
    if (m) *kernel = er_interp_kernel_name(m, 0);
    return m;
}

typedef struct {
    er_interp_launch l;
    er_interp_buffer b[8];
    uint64_t s[32];
} launch;

static void lset(launch *L, int gx, int gy)
{
    memset(L, 0, sizeof *L);
    er_interp_launch_init(&L->l);
    L->l.grid[0] = gx;
    L->l.grid[1] = gy;
    L->l.buffers = L->b;
    L->l.scalars = L->s;
    L->l.work_limit = INT64_C(1) << 40;
}
static void lbuf_ct(launch *L, int fmt, void *data, size_t nbytes, int ndim, const int64_t *shape)
{
    int d;
    int64_t st = 1, strides[4];
    L->b[L->l.nbuffers].format = fmt;
    L->b[L->l.nbuffers].data = data;
    L->b[L->l.nbuffers].nbytes = nbytes;
    L->l.nbuffers++;
    for (d = ndim - 1; d >= 0; d--) {
        strides[d] = st;
        st *= shape[d];
    }
    for (d = 0; d < ndim; d++) L->s[L->l.nscalars++] = (uint64_t)shape[d];
    for (d = 0; d < ndim; d++) L->s[L->l.nscalars++] = (uint64_t)strides[d];
}

static int cmpd(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* The median over f32 buffer i of (hi - lo) / ulp(the interpreter's value). */
static double median_ulps(er_interp_bounds *bd, size_t i, const float *point)
{
    const double *lo, *hi;
    int64_t n, e;
    double *w, med;
    if (er_interp_bounds_get(bd, i, NULL, &n, &lo, &hi, NULL) != ER_OK || !lo || !n) return NAN;
    w = (double *)malloc((size_t)n * sizeof *w);
    if (!w) return NAN;
    for (e = 0; e < n; e++) {
        float p = fabsf(point[e]);
        double u = (double)(nextafterf(p, INFINITY) - p);
        w[e] = (hi[e] - lo[e]) / u;
    }
    qsort(w, (size_t)n, sizeof *w, cmpd);
    med = w[n / 2];
    free(w);
    return med;
}

/* Best of three: point mode, then bounds mode (and the bounds of the last run kept for the width). */
static void timeit(const char *label, er_interp_module *m, const char *k, launch *L, const er_interp_bounds_opts *o, size_t out,
                   const float *point)
{
    double tp = 1e30, tb = 1e30, t;
    char msg[1024];
    int r;
    er_interp_bounds *bd = NULL;
    for (r = 0; r < 3; r++) {
        t = bench_now();
        if (er_interp_kernel(m, k, &L->l, msg, sizeof msg) != ER_OK) {
            printf("%s: point mode refused (bounds mode alone below): %s\n", label, msg);
            tp = NAN;
            break;
        }
        t = bench_now() - t;
        if (t < tp) tp = t;
    }
    if (tp != tp) r = 0;
    for (r = 0; r < 3; r++) {
        er_interp_bounds_free(bd);
        bd = NULL;
        t = bench_now();
        if (er_interp_kernel_bounds(m, k, &L->l, o, &bd, msg, sizeof msg) != ER_OK) {
            printf("%s: bounds mode refused: %s\n", label, msg);
            return;
        }
        t = bench_now() - t;
        if (t < tb) tb = t;
    }
    printf("%-34s point %8.4f s   bounds %8.4f s   %5.2fx   median width %8.1f ulps\n", label, tp, tb, tb / tp,
           median_ulps(bd, out, point));
    er_interp_bounds_free(bd);
}

int main(int argc, char **argv)
{
    const char *dir = argc > 1 ? argv[1] : "tests/interp/cutile";
    int rows = argc > 2 ? atoi(argv[2]) : 16384, mm = argc > 3 ? atoi(argv[3]) : 256, fmha = argc > 4 ? atoi(argv[4]) : 512;
    const char *k;
    er_interp_module *m;
    er_interp_bounds_opts o;
    launch L;
    int64_t i;
    er_interp_bounds_opts_init(&o);
    printf("bench_interp_bounds %s %d %d %d (best of 3, one thread)\n", dir, rows, mm, fmha);
    if ((m = load(dir, "cutile_softmax.mlir", &k))) {
        float *X = (float *)malloc(sizeof(float) * (size_t)rows * 16), *Y = (float *)malloc(sizeof(float) * (size_t)rows * 16);
        int64_t sx[2] = {rows, 16};
        for (i = 0; i < (int64_t)rows * 16; i++) X[i] = (float)(urand() * 8 - 4);
        lset(&L, rows / 4, 1);
        lbuf_ct(&L, ER_FMT_F32, X, sizeof(float) * (size_t)rows * 16, 2, sx);
        lbuf_ct(&L, ER_FMT_F32, Y, sizeof(float) * (size_t)rows * 16, 2, sx);
        timeit("softmax (rows x 16, f32)", m, k, &L, &o, 1, Y);
        free(X);
        free(Y);
        er_interp_free(m);
    }
    if ((m = load(dir, "cutile_reduce_scan.mlir", &k))) {
        float *X = (float *)malloc(sizeof(float) * (size_t)rows * 16), *S = (float *)malloc(sizeof(float) * (size_t)rows),
              *P = (float *)malloc(sizeof(float) * (size_t)rows * 16);
        int64_t sx[2] = {rows, 16}, ss[1] = {rows};
        for (i = 0; i < (int64_t)rows * 16; i++) X[i] = (float)(urand() * 8 - 4);
        lset(&L, rows / 4, 1);
        lbuf_ct(&L, ER_FMT_F32, X, sizeof(float) * (size_t)rows * 16, 2, sx);
        lbuf_ct(&L, ER_FMT_F32, S, sizeof(float) * (size_t)rows, 1, ss);
        lbuf_ct(&L, ER_FMT_F32, P, sizeof(float) * (size_t)rows * 16, 2, sx);
        timeit("reduce (row sums, f32)", m, k, &L, &o, 1, S);
        timeit("scan (cumulative sums, f32)", m, k, &L, &o, 2, P);
        free(X);
        free(S);
        free(P);
        er_interp_free(m);
    }
    if ((m = load(dir, "cutile_matmul_bf16.mlir", &k))) {
        uint16_t *A = (uint16_t *)malloc(2 * (size_t)mm * mm), *B = (uint16_t *)malloc(2 * (size_t)mm * mm);
        float *C = (float *)malloc(4 * (size_t)mm * mm);
        int64_t s2[2] = {mm, mm};
        for (i = 0; i < (int64_t)mm * mm; i++) {
            float a = (float)(urand() * 2 - 1), b = (float)(urand() * 2 - 1);
            uint32_t ua, ub;
            memcpy(&ua, &a, 4);
            memcpy(&ub, &b, 4);
            A[i] = (uint16_t)(ua >> 16);
            B[i] = (uint16_t)(ub >> 16);
        }
        lset(&L, (mm + 31) / 32, (mm + 31) / 32);
        lbuf_ct(&L, ER_FMT_BF16, A, 2 * (size_t)mm * mm, 2, s2);
        lbuf_ct(&L, ER_FMT_BF16, B, 2 * (size_t)mm * mm, 2, s2);
        lbuf_ct(&L, ER_FMT_F32, C, 4 * (size_t)mm * mm, 2, s2);
        timeit("matmul bf16 (mm^3, normal)", m, k, &L, &o, 2, C);
        o.standard = "hopper";
        timeit("matmul bf16 (mm^3, hopper)", m, k, &L, &o, 2, C);
        o.standard = NULL;
        free(A);
        free(B);
        free(C);
        er_interp_free(m);
    }
    {
        /* cuTile's FMHA sample (gen_cutile.py: 16 x 16 tiles, head dimension 32), f16 Q K V of fmha x 32, f32 O */
        static const char *const files[2] = {"sample_fmha.mlir", "sample_fmha_causal.mlir"};
        int fi, S = fmha;
        for (fi = 0; fi < 2; fi++) {
            uint16_t *Q, *K, *V;
            float *O;
            int64_t sh[2] = {S, 32};
            char label[64];
            if (!(m = load(dir, files[fi], &k))) {
                printf("%s: not in %s (exported by gen_cutile.py)\n", files[fi], dir);
                continue;
            }
            Q = (uint16_t *)malloc(2 * (size_t)S * 32);
            K = (uint16_t *)malloc(2 * (size_t)S * 32);
            V = (uint16_t *)malloc(2 * (size_t)S * 32);
            O = (float *)malloc(4 * (size_t)S * 32);
            for (i = 0; i < (int64_t)S * 32; i++) {
                /* f16 values in [-2, 2): sign, exponent 13..15, any fraction */
                Q[i] = (uint16_t)(((uint64_t)(urand() * 2) << 15) | ((uint64_t)(13 + urand() * 3) << 10) | (uint64_t)(urand() * 1024));
                K[i] = (uint16_t)(((uint64_t)(urand() * 2) << 15) | ((uint64_t)(13 + urand() * 3) << 10) | (uint64_t)(urand() * 1024));
                V[i] = (uint16_t)(((uint64_t)(urand() * 2) << 15) | ((uint64_t)(13 + urand() * 3) << 10) | (uint64_t)(urand() * 1024));
            }
            lset(&L, S / 16, 1);
            lbuf_ct(&L, ER_FMT_F16, Q, 2 * (size_t)S * 32, 2, sh);
            lbuf_ct(&L, ER_FMT_F16, K, 2 * (size_t)S * 32, 2, sh);
            lbuf_ct(&L, ER_FMT_F16, V, 2 * (size_t)S * 32, 2, sh);
            lbuf_ct(&L, ER_FMT_F32, O, 4 * (size_t)S * 32, 2, sh);
            snprintf(label, sizeof label, "%s (S=%d, any_order)", fi ? "fmha causal" : "fmha", S);
            o.standard = "any_order";
            timeit(label, m, k, &L, &o, 3, O);
            o.standard = NULL;
            free(Q);
            free(K);
            free(V);
            free(O);
            er_interp_free(m);
        }
    }
    return 0;
}
