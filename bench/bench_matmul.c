/*
 * bench_matmul.c: exactref's er_mma (D = A B, bf16 or f8E4M3FN in, f32 out, exact and rounded once)
 * against what users compute today, on the same values in the same run:
 *   OpenBLAS cblas_dgemm on the values as binary64 (fast, NOT exact),
 *   Arb arb_mat_mul on exact balls at a precision where every radius comes out zero (exact),
 *   an MPFR mpfr_fma loop at 700 bits (exact; timed on a sample of elements and extrapolated).
 * The peers are optional (ER_BENCH_HAVE_OPENBLAS, ER_BENCH_HAVE_ARB, ER_BENCH_HAVE_MPFR, set by
 * bench/CMakeLists.txt); an absent one is reported "not built in".  Speed is measured here, never
 * asserted anywhere.  The MPFR sample also checks exactref's bits against the correctly rounded value.
 *
 *   bench_matmul [--sizes 1024,2048] [--quick] [--sets narrow,wide,fp8] [--reps R] [--samples S]
 *                [--hard H] [--arb-rows R] [--no-blas] [--no-arb] [--no-mpfr]
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench_util.h"
#include "exactref/exactref.h"
#include "exactref/report.h"

#ifdef ER_BENCH_HAVE_MPFR
#include <mpfr.h>
#endif
#ifdef ER_BENCH_HAVE_OPENBLAS
#include <cblas.h>
int openblas_get_num_threads(void); /* OpenBLAS's own; declared again in case cblas.h is generic */
#endif
#ifdef ER_BENCH_HAVE_ARB
#ifdef ER_BENCH_ARB_FLINT3 /* FLINT >= 3: Arb is part of FLINT, headers under flint/ */
#include <flint/flint.h>
#include <flint/arb_mat.h>
#else /* Arb 2.x (Debian 12: /usr/include/arb_mat.h, FLINT 2 under /usr/include/flint/) */
#include <flint/flint.h>
#include <arb_mat.h>
#endif
#endif

#define MPFR_BITS 700 /* exact for every data set here: at most ~200 bits are ever needed */


static uint64_t rng = 0x9e3779b97f4a7c15u;
static uint64_t next(void) { return bench_xorshift64(&rng); }

/* ---- data sets ---- */
enum { SET_NARROW, SET_WIDE, SET_FP8, SET_COUNT };
static const char *set_name[SET_COUNT] = {"narrow", "wide", "fp8"};
static const char *set_desc[SET_COUNT] = {
    "bf16, exponents uniform in [-8, 8], random sign and significand",
    "bf16, exponents uniform in [-40, 40], random sign and significand",
    "f8E4M3FN, uniformly random finite patterns (0x7f, 0xff excluded)"};
#ifdef ER_BENCH_HAVE_ARB
/* Arb precision at which every entry is exact: the exact sums need at most about 61 (narrow),
 * 190 (wide) and 47 (fp8) bits at n = 2048; the bench checks that every radius came out zero. */
static const long set_arb_prec[SET_COUNT] = {128, 400, 64};
#endif

static int set_format(int set) { return set == SET_FP8 ? ER_FMT_F8E4M3FN : ER_FMT_BF16; }

/* n*n patterns of the set's format into pat (2 bytes for bf16, 1 for fp8), values into val. */
static void make_data(int set, int64_t count, void *pat, double *val)
{
    for (int64_t i = 0; i < count; i++) {
        uint64_t bits;
        if (set == SET_FP8) {
            do bits = next() & 0xffu;
            while (bits == 0x7fu || bits == 0xffu);
            ((uint8_t *)pat)[i] = (uint8_t)bits;
        } else {
            int span = set == SET_NARROW ? 8 : 40;
            uint64_t r = next();
            int e = (int)(r % (uint64_t)(2 * span + 1)) - span;
            bits = ((r >> 32) & 0x807fu) | ((uint64_t)(127 + e) << 7);
            ((uint16_t *)pat)[i] = (uint16_t)bits;
        }
        if (er_from_bits(set_format(set), bits, &val[i]) != ER_OK) {
            fprintf(stderr, "bench_matmul: pattern 0x%llx does not decode\n", (unsigned long long)bits);
            exit(3);
        }
    }
}

/* ---- the table, printed last ---- */
typedef struct {
    char data[16];
    int64_t n;
    char engine[48];
    char threads[16];
    double gmacs;  /* < 0: not measured */
    double ratio;  /* exactref / this; < 0: none */
    char notes[256];
} row;
static row rows[256];
static int nrows;

static row *add_row(const char *data, int64_t n, const char *engine)
{
    row *r = &rows[nrows < 255 ? nrows++ : 255];
    memset(r, 0, sizeof *r);
    snprintf(r->data, sizeof r->data, "%s", data);
    r->n = n;
    snprintf(r->engine, sizeof r->engine, "%s", engine);
    r->gmacs = -1;
    r->ratio = -1;
    return r;
}

/* A row whose peer did not run: no threads, the note, and the line printed now (NULL: none). */
static void row_absent(row *r, const char *note, const char *line)
{
    snprintf(r->threads, sizeof r->threads, "-");
    snprintf(r->notes, sizeof r->notes, "%s", note);
    if (line) printf("%s\n", line);
}

/* ---- options ---- */
static int64_t sizes[16];
static int nsizes;
static int use_set[SET_COUNT] = {1, 1, 1};
static int reps = 3, samples = 64, hard = 256;
static int64_t arb_rows = 0; /* 0: all rows */
static int no_blas, no_arb, no_mpfr, no_opencl, no_check;
static int64_t ocl_rows = 8;
/* the standards of the whole check: normal and hopper (compared with OpenCL), then --standards' */
static const char *chk_std[18] = {"normal", "hopper"};
static int nchk = 2;
static char chk_buf[512];

static void usage(FILE *f)
{
    fprintf(f,
            "usage: bench_matmul [--sizes N[,N...]] [--quick] [--sets narrow,wide,fp8] [--reps R]\n"
            "                    [--samples S] [--hard H] [--arb-rows R] [--opencl-rows R] [--no-blas]\n"
            "                    [--no-arb] [--no-mpfr] [--no-opencl] [--no-check] [--standards S[,S...]]\n"
            "  --sizes      n of the n x n x n products (default 1024,2048)\n"
            "  --quick      n = 256 only, a smoke check\n"
            "  --sets       data sets (default all three)\n"
            "  --reps       exactref (reference and whole check) and DGEMM: best of R runs (default 3),\n"
            "               and of one run each per round of the checks;\n"
            "               Arb and MPFR run once.  The whole check's first run (fresh pages, nothing\n"
            "               cached: what one `exactref check` process pays) is printed beside the best.\n"
            "               The checks run in R rounds, each running every standard twice and then\n"
            "               DGEMM once, so that a slow stretch of a shared machine weighs on every row\n"
            "               alike; a check's best is of its 2R runs\n"
            "  --samples    random output elements timed with MPFR and checked against exactref (default 64)\n"
            "  --hard       also check (untimed) the H elements whose DGEMM value lies nearest an f32 rounding\n"
            "               boundary: those the fast path most likely left to the exact path (default 256;\n"
            "               needs OpenBLAS)\n"
            "  --arb-rows   time Arb on the first R rows of A only (R x n x n), for large n\n"
            "  --opencl-rows  time the OpenCL backend on the first R rows of A (default 8): it runs the exact\n"
            "               accumulator for every element, on PoCL a CPU-speed check of the kernels\n"
            "  --no-blas, --no-arb, --no-mpfr, --no-opencl   skip a peer or the OpenCL backend\n"
            "  --no-check   skip the whole check (tolerance and covers): the reference and its peers only\n"
            "  --standards  more standards for the whole check after normal and hopper (any name\n"
            "               `exactref standards` lists, e.g. cdna3,volta,hopper-fp8); only normal and\n"
            "               hopper are compared with the OpenCL backend\n"
            "  The engine's binary64 products come from the BLAS the library was built with; EXACTREF_GEMM=builtin\n"
            "  in the environment selects the hand-written kernel instead (same bits).\n");
}

static void parse(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--quick")) {
            sizes[0] = 256;
            nsizes = 1;
        } else if (!strcmp(a, "--sizes") && v) {
            char buf[256];
            snprintf(buf, sizeof buf, "%s", v);
            nsizes = 0;
            for (char *t = strtok(buf, ","); t && nsizes < 16; t = strtok(NULL, ",")) {
                long long x = strtoll(t, NULL, 10);
                if (x < 1 || x > 65536) {
                    fprintf(stderr, "bench_matmul: bad size '%s'\n", t);
                    exit(2);
                }
                sizes[nsizes++] = x;
            }
            i++;
        } else if (!strcmp(a, "--sets") && v) {
            char buf[256];
            snprintf(buf, sizeof buf, "%s", v);
            memset(use_set, 0, sizeof use_set);
            for (char *t = strtok(buf, ","); t; t = strtok(NULL, ",")) {
                int k;
                for (k = 0; k < SET_COUNT && strcmp(t, set_name[k]); k++) {}
                if (k == SET_COUNT) {
                    fprintf(stderr, "bench_matmul: unknown data set '%s' (narrow, wide, fp8)\n", t);
                    exit(2);
                }
                use_set[k] = 1;
            }
            i++;
        } else if (v && (!strcmp(a, "--reps") || !strcmp(a, "--samples") || !strcmp(a, "--hard"))) {
            int *dst = !strcmp(a, "--reps") ? &reps : !strcmp(a, "--samples") ? &samples : &hard;
            int x = atoi(v), least = dst == &hard ? 0 : 1; /* --hard 0: no hard elements */
            *dst = x < least ? least : x;
            i++;
        } else if (!strcmp(a, "--arb-rows") && v) {
            arb_rows = strtoll(v, NULL, 10);
            i++;
        } else if (!strcmp(a, "--no-blas")) {
            no_blas = 1;
        } else if (!strcmp(a, "--no-arb")) {
            no_arb = 1;
        } else if (!strcmp(a, "--no-mpfr")) {
            no_mpfr = 1;
        } else if (!strcmp(a, "--no-opencl")) {
            no_opencl = 1;
        } else if (!strcmp(a, "--standards") && v) {
            snprintf(chk_buf, sizeof chk_buf, "%s", v);
            for (char *t = strtok(chk_buf, ","); t; t = strtok(NULL, ",")) {
                er_standard sd;
                char msg[256];
                if (er_standard_parse(t, &sd, msg, sizeof msg) != ER_OK) {
                    fprintf(stderr, "bench_matmul: --standards: %s\n", msg);
                    exit(2);
                }
                if (nchk == (int)(sizeof chk_std / sizeof chk_std[0])) {
                    fprintf(stderr, "bench_matmul: --standards: at most %d\n", nchk - 2);
                    exit(2);
                }
                chk_std[nchk++] = t;
            }
            i++;
        } else if (!strcmp(a, "--no-check")) {
            no_check = 1;
        } else if (!strcmp(a, "--opencl-rows") && i + 1 < argc) {
            ocl_rows = strtoll(argv[++i], NULL, 10);
            if (ocl_rows < 1) ocl_rows = 1;
        } else if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            usage(stdout);
            exit(0);
        } else {
            usage(stderr);
            exit(2);
        }
    }
    if (nsizes == 0) {
        sizes[0] = 1024;
        sizes[1] = 2048;
        nsizes = 2;
    }
}

#ifdef ER_BENCH_HAVE_OPENBLAS
/* How close the binary64 value x lies to a rounding boundary of f32 (a midpoint between neighbours),
 * in units of the f32 spacing there: near 0, the certified fast path cannot decide the element. */
static double boundary_distance(double x)
{
    float f = (float)x;
    if (!isfinite(f) || x == 0.0) return 0.0;
    float g = nextafterf(f, (double)f < x ? INFINITY : -INFINITY);
    if (!isfinite(g)) return 0.0;
    double mid = 0.5 * ((double)f + (double)g), sp = fabs((double)g - (double)f);
    return fabs(x - mid) / sp;
}

/* The (up to) h indices of c[0..nn) with the least boundary_distance, into idx; returns how many. */
static int pick_hard(const double *c, int64_t nn, int h, int64_t *idx)
{
    double *key = malloc(sizeof(double) * (size_t)(h ? h : 1));
    int cnt = 0;
    if (!key) return 0;
    /* a max-heap of the h smallest keys */
    for (int64_t e = 0; e < nn && h > 0; e++) {
        double d = boundary_distance(c[e]);
        int pos;
        if (cnt < h) {
            pos = cnt++;
            while (pos > 0 && key[(pos - 1) / 2] < d) {
                key[pos] = key[(pos - 1) / 2];
                idx[pos] = idx[(pos - 1) / 2];
                pos = (pos - 1) / 2;
            }
        } else if (d < key[0]) {
            pos = 0;
            for (;;) {
                int l = 2 * pos + 1, r = l + 1, m = pos;
                double km = d;
                if (l < cnt && key[l] > km) { m = l; km = key[l]; }
                if (r < cnt && key[r] > km) { m = r; }
                if (m == pos) break;
                key[pos] = key[m];
                idx[pos] = idx[m];
                pos = m;
            }
        } else {
            continue;
        }
        key[pos] = d;
        idx[pos] = e;
    }
    free(key);
    return cnt;
}
#endif

/* ---- one case: a data set at one size ---- */
#ifdef ER_BENCH_HAVE_MPFR
/* acc = row i of A (ad, n x n) times column j of B (bd) in MPFR, products and sums in index order at
 * acc's precision, the operands in xa, xb (n each, at their precision); returns the seconds of the
 * products and sums alone (the inputs are set outside the timed loop, as a full MPFR product converts
 * each once). */
static double dot_mpfr(mpfr_ptr acc, mpfr_t *xa, mpfr_t *xb, const double *ad, const double *bd, int64_t n, int64_t i,
                       int64_t j)
{
    for (int64_t p = 0; p < n; p++) {
        mpfr_set_d(xa[p], ad[i * n + p], MPFR_RNDN);
        mpfr_set_d(xb[p], bd[p * n + j], MPFR_RNDN);
    }
    double t0 = bench_now();
    mpfr_mul(acc, xa[0], xb[0], MPFR_RNDN); /* the first product: IEEE signs of a zero sum */
    for (int64_t p = 1; p < n; p++) mpfr_fma(acc, xa[p], xb[p], acc, MPFR_RNDN);
    return bench_now() - t0;
}
#endif

static void run_case(int set, int64_t n)
{
    static double *cpu_tol[2];    /* the CPU's tolerance and low/high of the first rows, per standard */
    static uint64_t *cpu_lh[2];
    int fmt = set_format(set);
    int bytes = fmt == ER_FMT_BF16 ? 2 : 1;
    int64_t nn = n * n;
    double macs = (double)n * (double)n * (double)n;
    void *ap = malloc((size_t)nn * bytes), *bp = malloc((size_t)nn * bytes);
    double *ad = malloc((size_t)nn * sizeof(double)), *bd = malloc((size_t)nn * sizeof(double));
    uint32_t *d = malloc((size_t)nn * 4);
    /* verification elements: `samples` random ones (also timed with MPFR), then up to `hard` hard ones */
    int nver = samples;
    (void)nver; /* unused without MPFR */
    int64_t *si = malloc(sizeof(int64_t) * (size_t)(samples + hard)), *sj = malloc(sizeof(int64_t) * (size_t)(samples + hard));
    if (!ap || !bp || !ad || !bd || !d || !si || !sj) {
        fprintf(stderr, "bench_matmul: out of memory for n = %lld\n", (long long)n);
        exit(3);
    }
    rng = 0x9e3779b97f4a7c15u ^ (uint64_t)(set * 1000003 + n);
    make_data(set, nn, ap, ad);
    make_data(set, nn, bp, bd);
    for (int s = 0; s < samples; s++) {
        si[s] = (int64_t)(next() % (uint64_t)n);
        sj[s] = (int64_t)(next() % (uint64_t)n);
    }
    printf("\n[%s n=%lld] %s\n", set_name[set], (long long)n, set_desc[set]);
    fflush(stdout);

    /* exactref: default arguments (all cores, ER_STRATEGY_AUTO), best of reps */
    er_tensor ta = er_tensor_2d(fmt, n, n, ap), tb = er_tensor_2d(fmt, n, n, bp);
    er_tensor td = er_tensor_2d(ER_FMT_F32, n, n, d);
    er_mma_stats st;
    double er_best = 1e30;
    for (int r = 0; r < reps; r++) {
        er_mma_args args;
        char msg[256];
        double t;
        bench_mma_args(&args, &ta, &tb, &td);
        int rc = bench_mma_timed(&args, &st, msg, sizeof msg, &t);
        if (rc != ER_OK) {
            fprintf(stderr, "bench_matmul: er_mma failed: %s (%s)\n", er_status_string(rc), msg);
            exit(3);
        }
        if (t < er_best) er_best = t;
    }
    double er_g = macs / er_best / 1e9;
    double fast_share = st.elements ? (double)st.fast_decided / (double)st.elements : 0.0;
    printf("  exactref      %9.3f GMAC/s  (%.3f s, best of %d, %d threads; fast path decided %.4f%%,"
           " exact path %lld elements)\n",
           er_g, er_best, reps, st.threads, 100.0 * fast_share, (long long)st.exact_path);
    fflush(stdout);
    row *r = add_row(set_name[set], n, "exactref er_mma (auto)");
    row *rref = r; /* its rate joins the check's rounds' best below */
    snprintf(r->threads, sizeof r->threads, "%d", st.threads);
    r->gmacs = er_g;
    {
        const char *g = getenv("EXACTREF_GEMM");
        snprintf(r->notes, sizeof r->notes, "exact, rounded once to f32; fast path decided %.4f%% of elements; %s",
                 100.0 * fast_share,
                 g && !strcmp(g, "builtin") ? "products: hand-written kernel (EXACTREF_GEMM=builtin)"
                                            : "products: the library's BLAS (where built with one)");
    }

    /* the whole check of an output (here the exact one): the reference (er_result_create), the
     * tolerance and finite range of a standard (er_result_bounds), and covers, per standard.  Best of
     * 2 reps, in rounds: each round runs every standard's check twice, then DGEMM once (where built), so
     * that a slow stretch of the machine falls on every row alike instead of on the rows timed during
     * it (one row per standard after another made the ratios of one run differ by 10% on a shared
     * 2-core machine); the DGEMM rounds join the DGEMM row's own best below. */
    double dg_round = 1e30;
    if (!no_check) {
        const char *const *stds = chk_std;
        unsigned char *cov = malloc((size_t)nn);
        int64_t keep = ocl_rows < n ? ocl_rows * n : nn;
        double tb4[18][4], first[18];
        int64_t outside[18];
        int rcq[18];
        char msgq[18][256];
#ifdef ER_BENCH_HAVE_OPENBLAS
        double *cr = no_blas ? NULL : malloc((size_t)nn * sizeof(double));
#endif
        for (int q = 0; q < nchk; q++) {
            tb4[q][0] = tb4[q][1] = tb4[q][2] = 0, tb4[q][3] = 1e30;
            first[q] = 0;
            outside[q] = -1;
            rcq[q] = cov ? ER_OK : ER_ENOMEM;
            msgq[q][0] = 0;
        }
        for (int rep_ = 0; rep_ < reps; rep_++) {
            for (int qq = 0; qq < 2 * nchk; qq++) {
                /* each standard twice in a row: the second run finds the buffers the first one freed
                 * (host/er_alloc.c), as repeated checks of one standard do, where the run after
                 * another standard's check may not */
                const int q = qq / 2, last = rep_ == reps - 1 && (qq & 1);
                if (rcq[q] != ER_OK) continue;
                er_mma_args args;
                er_result *res = NULL;
                er_tol_opts o;
                const er_bounds *bd;
                char msg[512] = "";
                bench_mma_args(&args, &ta, &tb, &td);
                er_tol_opts_init(&o);
                /* each run creates the result (the reference), computes the bounds and covers; the
                 * run kept is the fastest whole check */
                int rc;
                double u0 = bench_now();
                rc = er_result_create(&args, &res, msg, sizeof msg);
                double u1 = bench_now();
                if (rc == ER_OK && (rc = er_standard_parse(stds[q], &o.standard, msg, sizeof msg)) == ER_OK)
                    rc = er_result_bounds(res, &o, &bd, msg, sizeof msg);
                double u2 = bench_now();
                if (rc == ER_OK) rc = er_result_covers(res, &o, &td, cov, &outside[q], msg, sizeof msg);
                double u3 = bench_now();
                if (rep_ == 0 && !(qq & 1)) first[q] = u3 - u0; /* the first run: fresh pages, nothing cached */
                if (rc == ER_OK && u3 - u0 < tb4[q][3] - tb4[q][0])
                    tb4[q][0] = u0, tb4[q][1] = u1, tb4[q][2] = u2, tb4[q][3] = u3;
                if (rc == ER_OK && last && q < 2) {
                    /* the first rows' tolerance and range, for the OpenCL backend's comparison below */
                    free(cpu_tol[q]);
                    free(cpu_lh[q]);
                    cpu_tol[q] = malloc(sizeof(double) * (size_t)keep);
                    cpu_lh[q] = malloc(sizeof(uint64_t) * 2 * (size_t)keep);
                    if (cpu_tol[q] && cpu_lh[q]) {
                        memcpy(cpu_tol[q], bd->tolerance, sizeof(double) * (size_t)keep);
                        memcpy(cpu_lh[q], bd->low, sizeof(uint64_t) * (size_t)keep);
                        memcpy(cpu_lh[q] + keep, bd->high, sizeof(uint64_t) * (size_t)keep);
                    }
                }
                if (rc == ER_OK && last && q == 0) {
                    /* covers and the report's scoring (the bounds are kept by the result): best of 5 */
                    double best = 1e30;
                    er_check_report rep;
                    int64_t idx[64];
                    for (int k = 0; k < 5 && rc == ER_OK; k++) {
                        double s0 = bench_now();
                        rc = er_check_report_compute(res, &o, &td, &ta, &tb, idx, 64, &rep, msg, sizeof msg);
                        double s1 = bench_now();
                        if (s1 - s0 < best) best = s1 - s0;
                    }
                    if (rc == ER_OK) {
                        row *rs = add_row(set_name[set], n, "covers + scoring (normal)");
                        snprintf(rs->threads, sizeof rs->threads, "%d", st.threads);
                        snprintf(rs->notes, sizeof rs->notes, "%.2f ns/element (best of 5, %.4f s); %lld outside",
                                 best * 1e9 / (double)nn, best, (long long)rep.outside);
                        printf("  covers+scoring %6.2f ns/element  (%.4f s, best of 5)\n", best * 1e9 / (double)nn,
                               best);
                    }
                }
                if (rc != ER_OK) {
                    rcq[q] = rc;
                    snprintf(msgq[q], sizeof msgq[q], "%.200s", msg[0] ? msg : er_status_string(rc));
                }
                er_result_free(res);
            }
            {
                /* the reference alone, once per round (its row keeps the best of these too) */
                er_mma_args args;
                bench_mma_args(&args, &ta, &tb, &td);
                double t0 = bench_now();
                int rc = er_mma(&args);
                double t = bench_now() - t0;
                if (rc == ER_OK && t < er_best) er_best = t;
            }
#ifdef ER_BENCH_HAVE_OPENBLAS
            if (cr) {
                if (rep_ == 0) /* the first run starts OpenBLAS's threads */
                    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)n, (int)n, (int)n, 1.0, ad, (int)n, bd,
                                (int)n, 0.0, cr, (int)n);
                double t0 = bench_now();
                cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)n, (int)n, (int)n, 1.0, ad, (int)n, bd,
                            (int)n, 0.0, cr, (int)n);
                double t = bench_now() - t0;
                if (t < dg_round) dg_round = t;
                /* OpenBLAS's threads wait spinning for a while after a call: let them stop before the
                 * next round's first check, which would share the cores with them */
                struct timespec pause = {0, 100000000};
                nanosleep(&pause, NULL);
            }
#endif
        }
        er_g = macs / er_best / 1e9; /* with the rounds' runs */
        rref->gmacs = er_g;
        printf("  exactref      %9.3f GMAC/s  (%.3f s, best of its runs above and one per round)\n", er_g, er_best);
        for (int q = 0; q < nchk; q++) {
            char eng[48];
            snprintf(eng, sizeof eng, "exactref check: %s", stds[q]);
            r = add_row(set_name[set], n, eng);
            snprintf(r->threads, sizeof r->threads, "%d", st.threads);
            if (rcq[q] == ER_OK) {
                double t0 = tb4[q][0], t1 = tb4[q][1], t2 = tb4[q][2], t3 = tb4[q][3];
                r->gmacs = macs / (t3 - t0) / 1e9;
                r->ratio = er_g / r->gmacs;
                snprintf(r->notes, sizeof r->notes,
                         "reference %.3f s + tolerance %.3f s + covers %.3f s; first run %.3f s; %lld outside (want 0)",
                         t1 - t0, t2 - t1, t3 - t2, first[q], (long long)outside[q]);
                printf("  check %-19s %9.3f GMAC/s  (reference %.3f s, tolerance %.3f s, covers %.3f s; first run %.3f s)\n",
                       stds[q], r->gmacs, t1 - t0, t2 - t1, t3 - t2, first[q]);
            } else {
                snprintf(r->notes, sizeof r->notes, "failed: %s", msgq[q]);
            }
        }
#ifdef ER_BENCH_HAVE_OPENBLAS
        free(cr);
#endif
        free(cov);
        fflush(stdout);
    }

    /* the OpenCL backend on the same inputs: the exact accumulator for every element (no device fast
     * path yet), timed on a subset of rows (ocl_rows x n x n) and checked bit for bit against the CPU */
    r = add_row(set_name[set], n, "exactref OpenCL (exact kernel)");
    if (no_opencl) {
        row_absent(r, "skipped (--no-opencl)", NULL);
    } else {
        int64_t rows_ = ocl_rows < n ? ocl_rows : n;
        uint32_t *dsub = malloc((size_t)(rows_ * n) * 4);
        er_tensor sa_ = er_tensor_2d(fmt, rows_, n, ap), sd_ = er_tensor_2d(ER_FMT_F32, rows_, n, dsub);
        er_mma_args args;
        char msg[512];
        bench_mma_args(&args, &sa_, &tb, &sd_);
        args.backend = ER_BACKEND_OPENCL;
        args.msg = msg;
        args.msg_size = sizeof msg;
        double t0 = bench_now();
        int rc = dsub ? er_mma(&args) : ER_ENOMEM;
        double t = bench_now() - t0;
        snprintf(r->threads, sizeof r->threads, "device");
        if (rc == ER_OK) {
            int64_t diff = 0;
            for (int64_t e = 0; e < rows_ * n; e++) diff += dsub[e] != d[e];
            r->gmacs = (double)rows_ * (double)n * (double)n / t / 1e9;
            r->ratio = er_g / r->gmacs;
            snprintf(r->notes, sizeof r->notes, "%lld rows x n x n (program build included); %s the CPU's bits",
                     (long long)rows_, diff ? "DIFFERS from" : "identical to");
            printf("  opencl        %9.5f GMAC/s  (%lld rows, %.3f s)%s\n", r->gmacs, (long long)rows_, t,
                   diff ? "  BITS DIFFER" : "");
            /* the bounds of the same rows on the device, against the CPU's */
            static const char *stds[] = {"normal", "hopper"};
            for (int q = 0; q < 2; q++) {
                char eng[48];
                snprintf(eng, sizeof eng, "OpenCL tolerance: %s", stds[q]);
                row *rb = add_row(set_name[set], n, eng);
                snprintf(rb->threads, sizeof rb->threads, "device");
                er_result *res = NULL;
                er_tol_opts o;
                const er_bounds *bd;
                er_tol_opts_init(&o);
                er_standard_parse(stds[q], &o.standard, msg, sizeof msg);
                int rc2 = er_result_create(&args, &res, msg, sizeof msg);
                double t0b = bench_now();
                if (rc2 == ER_OK) rc2 = er_result_bounds(res, &o, &bd, msg, sizeof msg);
                double tb_ = bench_now() - t0b;
                if (rc2 == ER_OK && cpu_tol[q] && cpu_lh[q]) {
                    int64_t cnt = rows_ * n, bad = 0;
                    bad += memcmp(bd->tolerance, cpu_tol[q], sizeof(double) * (size_t)cnt) != 0;
                    bad += memcmp(bd->low, cpu_lh[q], sizeof(uint64_t) * (size_t)cnt) != 0;
                    bad += memcmp(bd->high, cpu_lh[q] + cnt, sizeof(uint64_t) * (size_t)cnt) != 0;
                    rb->gmacs = (double)rows_ * (double)n * (double)n / tb_ / 1e9;
                    snprintf(rb->notes, sizeof rb->notes, "%lld rows x n x n: %.3f s (program build included); %s the CPU's bits",
                             (long long)rows_, tb_, bad ? "DIFFERS from" : "identical to");
                    printf("  opencl tol %-7s %9.5f GMAC/s  (%.3f s)%s\n", stds[q], rb->gmacs, tb_, bad ? "  BITS DIFFER" : "");
                } else {
                    snprintf(rb->notes, sizeof rb->notes, "unavailable: %.200s", msg);
                }
                er_result_free(res);
            }
        } else {
            snprintf(r->notes, sizeof r->notes, "unavailable: %.200s", msg);
        }
        free(dsub);
    }

    /* OpenBLAS DGEMM on the same values as binary64 */
    r = add_row(set_name[set], n, "OpenBLAS cblas_dgemm");
#ifdef ER_BENCH_HAVE_OPENBLAS
    if (no_blas) {
        row_absent(r, "skipped (--no-blas)", NULL);
    } else {
        double *c = malloc((size_t)nn * sizeof(double));
        if (!c) {
            fprintf(stderr, "bench_matmul: out of memory\n");
            exit(3);
        }
        double best = 1e30;
        for (int k = 0; k < reps + 1; k++) { /* one more: the first run starts OpenBLAS's threads */
            double t0 = bench_now();
            cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)n, (int)n, (int)n, 1.0, ad, (int)n, bd,
                        (int)n, 0.0, c, (int)n);
            double t = bench_now() - t0;
            if (k > 0 && t < best) best = t;
        }
        if (dg_round < best) best = dg_round; /* the check's rounds (above) */
        /* how often the binary64 result, rounded to f32, misses the correctly rounded f32 */
        int64_t differ = 0;
        for (int64_t e = 0; e < nn; e++) {
            float f = (float)c[e];
            uint32_t fb;
            memcpy(&fb, &f, 4);
            differ += fb != d[e];
        }
#ifdef ER_BENCH_HAVE_MPFR
        if (!no_mpfr && hard > 0) {
            int64_t *idx = malloc(sizeof(int64_t) * (size_t)hard);
            int h = idx ? pick_hard(c, nn, hard, idx) : 0;
            for (int q = 0; q < h; q++) {
                si[nver] = idx[q] / n;
                sj[nver] = idx[q] % n;
                nver++;
            }
            free(idx);
        }
#endif
        free(c);
        double g = macs / best / 1e9;
        printf("  OpenBLAS      %9.3f GMAC/s  (%.3f s, best of %d, %d threads; f32(DGEMM) differs from the"
               " exact f32 at %lld of %lld elements)\n",
               g, best, reps + (dg_round < 1e30 ? reps : 0), openblas_get_num_threads(), (long long)differ, (long long)nn);
        fflush(stdout);
        snprintf(r->threads, sizeof r->threads, "%d", openblas_get_num_threads());
        r->gmacs = g;
        r->ratio = er_g / g;
        /* f8E4M3FN values are integers times 2^-9: every product is an integer times 2^-18 below 2^36, so
         * every partial sum is exact in binary64 while k < 2^17; bf16 products span too many bits. */
        if (set == SET_FP8 && n < ((int64_t)1 << 17))
            snprintf(r->notes, sizeof r->notes,
                     "exact here (e4m3 products are integers x 2^-18, k < 2^17), but no certificate;"
                     " f32(DGEMM) != exact f32 at %lld of %lld elements",
                     (long long)differ, (long long)nn);
        else
            snprintf(r->notes, sizeof r->notes, "NOT exact in general; f32(DGEMM) != exact f32 at %lld of %lld elements",
                     (long long)differ, (long long)nn);
    }
#else
    row_absent(r, "not built in", "  OpenBLAS      not built in");
#endif

    /* Arb: exact balls (arb_set_d is exact, radius 0), product at a precision that keeps it exact */
#ifdef ER_BENCH_HAVE_ARB
    arb_mat_t AA, BB, CC;
    int64_t am = arb_rows > 0 && arb_rows < n ? arb_rows : n;
    int arb_done = 0;
    int64_t arb_nonzero_rad = 0;
#endif
    r = add_row(set_name[set], n, "Arb arb_mat_mul");
#ifdef ER_BENCH_HAVE_ARB
    if (no_arb) {
        row_absent(r, "skipped (--no-arb)", "  Arb           skipped (--no-arb)");
    } else {
        long prec = set_arb_prec[set];
        arb_mat_init(AA, am, n);
        arb_mat_init(BB, n, n);
        arb_mat_init(CC, am, n);
        for (int64_t i = 0; i < am; i++)
            for (int64_t p = 0; p < n; p++) arb_set_d(arb_mat_entry(AA, i, p), ad[i * n + p]);
        for (int64_t p = 0; p < n; p++)
            for (int64_t j = 0; j < n; j++) arb_set_d(arb_mat_entry(BB, p, j), bd[p * n + j]);
        double t0 = bench_now();
        arb_mat_mul(CC, AA, BB, prec);
        double t = bench_now() - t0;
        for (int64_t i = 0; i < am; i++)
            for (int64_t j = 0; j < n; j++) arb_nonzero_rad += !mag_is_zero(arb_radref(arb_mat_entry(CC, i, j)));
        arb_done = 1;
        double g = (double)am * (double)n * (double)n / t / 1e9;
        printf("  Arb           %9.3f GMAC/s  (%.3f s, once, %d threads, prec %ld, %lld x %lld x %lld; %s)\n", g,
               t, flint_get_num_threads(), prec, (long long)am, (long long)n, (long long)n,
               arb_nonzero_rad ? "SOME RADII NONZERO: not exact" : "all radii zero: exact");
        fflush(stdout);
        snprintf(r->threads, sizeof r->threads, "%d", flint_get_num_threads());
        r->gmacs = g;
        r->ratio = er_g / g;
        snprintf(r->notes, sizeof r->notes, "prec %ld; %s%s", prec,
                 arb_nonzero_rad ? "radii NOT all zero (not exact)" : "all radii zero (exact)",
                 am < n ? "; timed on a row subset" : "");
        if (am < n)
            snprintf(r->notes + strlen(r->notes), sizeof r->notes - strlen(r->notes), " (%lld x %lld x %lld)",
                     (long long)am, (long long)n, (long long)n);
        arb_mat_clear(AA);
        arb_mat_clear(BB);
    }
#else
    row_absent(r, "not built in", "  Arb           not built in");
#endif

    /* MPFR: a plain mpfr_fma loop at 700 bits over `samples` elements, extrapolated; also the check */
    r = add_row(set_name[set], n, "MPFR mpfr_fma loop");
#ifdef ER_BENCH_HAVE_MPFR
    if (no_mpfr) {
        row_absent(r, "skipped (--no-mpfr)", "  MPFR          skipped (--no-mpfr); exactref not verified");
    } else {
        mpfr_t acc, x, *xa = malloc(sizeof(mpfr_t) * (size_t)n), *xb = malloc(sizeof(mpfr_t) * (size_t)n);
        if (!xa || !xb) {
            fprintf(stderr, "bench_matmul: out of memory\n");
            exit(3);
        }
        mpfr_init2(acc, MPFR_BITS);
        mpfr_init2(x, MPFR_BITS);
        for (int64_t p = 0; p < n; p++) {
            mpfr_init2(xa[p], 53);
            mpfr_init2(xb[p], 53);
        }
        double tsum = 0;
        int64_t bad = 0, arb_checked = 0, arb_bad = 0;
        for (int s = 0; s < nver; s++) {
            int64_t i = si[s], j = sj[s];
            double t = dot_mpfr(acc, xa, xb, ad, bd, n, i, j);
            if (s < samples) tsum += t; /* only the random elements are timed */
            /* exactref's f32 against the correctly rounded f32 of the exact sum */
            float f = mpfr_get_flt(acc, MPFR_RNDN);
            uint32_t fb;
            memcpy(&fb, &f, 4);
            if (fb != d[i * n + j]) {
                if (bad < 5)
                    fprintf(stderr, "bench_matmul: MISMATCH %s n=%lld element (%lld, %lld): exactref 0x%08x,"
                                    " MPFR 0x%08x\n",
                            set_name[set], (long long)n, (long long)i, (long long)j, (unsigned)d[i * n + j],
                            (unsigned)fb);
                bad++;
            }
#ifdef ER_BENCH_HAVE_ARB
            /* and Arb's midpoint against the exact sum */
            if (arb_done && i < am) {
                arf_get_mpfr(x, arb_midref(arb_mat_entry(CC, i, j)), MPFR_RNDN);
                arb_checked++;
                arb_bad += mpfr_cmp(x, acc) != 0 || !mag_is_zero(arb_radref(arb_mat_entry(CC, i, j)));
            }
#endif
        }
        /* the same loop with every operand at 700 bits (inputs not narrowed to 53 bits): slower */
        double t700 = 0;
        int s700 = samples < 16 ? samples : 16;
        for (int64_t p = 0; p < n; p++) {
            mpfr_set_prec(xa[p], MPFR_BITS);
            mpfr_set_prec(xb[p], MPFR_BITS);
        }
        for (int s = 0; s < s700; s++) {
            int64_t i = si[s], j = sj[s];
            t700 += dot_mpfr(x, xa, xb, ad, bd, n, i, j);
        }
        double g700 = (double)s700 * (double)n / t700 / 1e9;
        double g = (double)samples * (double)n / tsum / 1e9;
        if (bad)
            printf("  verification  FAILED: %lld of %d sampled elements differ from the correctly rounded MPFR value\n",
                   (long long)bad, nver);
        else
            printf("  verified %d sampled elements (%d random, %d nearest an f32 rounding boundary per DGEMM):"
                   " exactref's f32 == MPFR's exact sum rounded to f32\n",
                   nver, samples, nver - samples);
        if (arb_checked)
            printf("  Arb midpoints equal the exact sum at %lld of %lld sampled elements\n",
                   (long long)(arb_checked - arb_bad), (long long)arb_checked);
        printf("  MPFR          %9.5f GMAC/s  (extrapolated from %d of %lld elements, %.3f s, 1 thread, %d-bit"
               " accumulator, 53-bit inputs; every operand at %d bits: %.5f GMAC/s on %d elements)\n",
               g, samples, (long long)nn, tsum, MPFR_BITS, MPFR_BITS, g700, s700);
        fflush(stdout);
        snprintf(r->threads, sizeof r->threads, "1");
        r->gmacs = g;
        r->ratio = er_g / g;
        snprintf(r->notes, sizeof r->notes,
                 "%d-bit accumulator, 53-bit inputs (all operands at %d bits: %.5f); extrapolated from %d random"
                 " elements; exactref %s on %d sampled elements (%d near f32 rounding boundaries)",
                 MPFR_BITS, MPFR_BITS, g700, samples, bad ? "MISMATCHED" : "verified", nver, nver - samples);
        for (int64_t p = 0; p < n; p++) {
            mpfr_clear(xa[p]);
            mpfr_clear(xb[p]);
        }
        free(xa);
        free(xb);
        mpfr_clear(acc);
        mpfr_clear(x);
    }
#else
    row_absent(r, "not built in (so exactref is not verified)", "  MPFR          not built in (exactref not verified)");
#endif
#ifdef ER_BENCH_HAVE_ARB
    if (arb_done) arb_mat_clear(CC);
#endif
    free(ap);
    free(bp);
    free(ad);
    free(bd);
    free(d);
    free(si);
    free(sj);
}

int main(int argc, char **argv)
{
    parse(argc, argv);
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    if (cores < 1) cores = 1;
#ifdef ER_BENCH_HAVE_ARB
    flint_set_num_threads((int)cores);
#endif
    char cpu[128] = "unknown CPU";
    FILE *fc = fopen("/proc/cpuinfo", "r");
    if (fc) {
        char line[256];
        while (fgets(line, sizeof line, fc)) {
            if (!strncmp(line, "model name", 10)) {
                char *c = strchr(line, ':');
                if (c) {
                    c += 1 + (c[1] == ' ');
                    c[strcspn(c, "\n")] = 0;
                    snprintf(cpu, sizeof cpu, "%s", c);
                }
                break;
            }
        }
        fclose(fc);
    }
    char date[64];
    time_t tt = time(NULL);
    strftime(date, sizeof date, "%Y-%m-%d %H:%M UTC", gmtime(&tt));
    char szs[160] = "";
    for (int s = 0; s < nsizes; s++)
        snprintf(szs + strlen(szs), sizeof szs - strlen(szs), "%s%lld", s ? "," : "", (long long)sizes[s]);

    printf("bench_matmul: exactref %s, D = A B (n x n x n), inputs bf16 / f8E4M3FN, output f32 nearest-even\n",
           er_version());
    printf("peers:"
#ifdef ER_BENCH_HAVE_OPENBLAS
           " OpenBLAS"
#else
           " (OpenBLAS not built in)"
#endif
#ifdef ER_BENCH_HAVE_ARB
           " Arb"
#else
           " (Arb not built in)"
#endif
#ifdef ER_BENCH_HAVE_MPFR
           " MPFR"
#else
           " (MPFR not built in)"
#endif
           "\n");
    for (int s = 0; s < nsizes; s++)
        for (int set = 0; set < SET_COUNT; set++)
            if (use_set[set]) run_case(set, sizes[s]);

    printf("\n## bench_matmul: %ld cores (%s), %s, sizes %s\n\n", cores, cpu, date, szs);
    printf("| data | n | engine | threads | GMAC/s | exactref / peer | notes |\n");
    printf("|---|---|---|---|---|---|---|\n");
    for (int i = 0; i < nrows; i++) {
        row *r = &rows[i];
        char g[32] = "-", q[32] = "-";
        if (r->gmacs >= 0) snprintf(g, sizeof g, r->gmacs < 0.1 ? "%.5f" : "%.3f", r->gmacs);
        if (r->ratio >= 0) snprintf(q, sizeof q, r->ratio < 10 ? "%.3f" : "%.0f", r->ratio);
        printf("| %s | %lld | %s | %s | %s | %s | %s |\n", r->data, (long long)r->n, r->engine, r->threads, g, q,
               r->notes);
    }
    {
        /* Issue 7's line: the one-pass bounds summary of an 8192 x 8192 tensor, as a fraction of the
         * exact matmul's time on such inputs (that time extrapolated from the best exactref rate
         * measured above: an 8192^3 product takes minutes on this machine). */
        const int64_t S = 8192;
        uint16_t *t = malloc(sizeof *t * (size_t)(S * S));
        double best = -1;
        for (int i = 0; i < nrows; i++)
            if (!strncmp(rows[i].engine, "exactref", 8) && !strcmp(rows[i].data, "narrow") && rows[i].gmacs > best)
                best = rows[i].gmacs;
        if (t) {
            for (int64_t i = 0; i < S * S; i++) t[i] = (uint16_t)((next() & 0x807f) | ((127 - 8 + next() % 17) << 7));
            er_tensor T = er_tensor_2d(ER_FMT_BF16, S, S, t);
            er_interval iv;
            double t0 = bench_now();
            er_interval_of_tensor(&T, &iv);
            double ts = bench_now() - t0;
            printf("\nwhole-tensor summary (issue 7): one pass over an 8192 x 8192 bf16 tensor: %.3f s (one thread)", ts);
            if (best > 0) {
                double tm = (double)S * S * S / (best * 1e9);
                printf("; the exact 8192^3 product at %.2f GMAC/s (the best narrow rate above) takes about %.0f s:\n"
                       "the summaries of both operands cost %.4f%% of it\n", best, tm, 200.0 * ts / tm);
            } else {
                printf("\n");
            }
            free(t);
        }
    }
    printf("\nGMAC/s: n^3 multiply-adds per second of wall time (Arb on a row subset: rows x n x n).  exactref,\n"
           "OpenBLAS and Arb use all cores (threads column); MPFR is one thread, timed on a sample of output\n"
           "elements (inputs converted outside the timed loop) and extrapolated.  Arb's precision is one at which\n"
           "every entry is exact (narrow 128, wide 400, fp8 64 bits); the notes say whether all radii came out\n"
           "zero.  Data:\n  narrow = %s;\n  wide = %s;\n  fp8 = %s.\n",
           set_desc[SET_NARROW], set_desc[SET_WIDE], set_desc[SET_FP8]);
    return 0;
}
