/* cpu_gemm.c: binary64 matrix products for the engine's certified fast path: a blocked kernel in index
 * order, and products in any order through a CBLAS where the build found one. */
#define _GNU_SOURCE /* pthread_sigmask, dlopen, sched_getaffinity, MAP_NORESERVE */
#include <dlfcn.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "cpu_internal.h"
#include "../host/er_par.h"
#ifdef ER_HAVE_BLAS
#include <cblas.h> /* from the BLAS's include directory (cmake/ERBlas.cmake): the prototype only */
#ifndef ER_BLAS_PATH
#define ER_BLAS_PATH ""
#endif
#ifndef ER_BLAS_SONAME
#define ER_BLAS_SONAME ""
#endif
#endif

/*
 * C[i][j] = sum_p A[i][p] B[p][j] for rows [r0, r1) of row-major A (lda), B (ldb), C (ldc).
 * Every element is one fused chain in index order: c <- 0, then c <- fma(A[i][p], B[p][j], c) for
 * p = 0, 1, ..., k - 1 (the accumulators live through all of k: a block of k reloads them from C).
 * The fast path does not need that (it certifies its results with a bound valid for every order), but
 * the bounds do: their canonical sums are these chains (include/exactref/core/er_bounds.h), which the
 * OpenCL and CUDA kernels form one element at a time, so the same bits come out everywhere.  Two
 * versions: a portable one (fma() of <math.h>), and an AVX2+FMA one chosen at run time where the
 * processor has it; both compute the same chains.
 *
 * Blocking (Goto's): a KB x NB panel of B is packed into NR-wide strips, an MR x KB block of A into
 * MR-tall strips, and an MR x NR micro-kernel keeps its accumulators in registers.
 */
#define KB 256
#define NB 256
#define MR 4
#define NR 8

/* Pack B[p0:p0+kb, j0:j0+nb] into strips of NR columns: strip s holds element (p, jj) at
 * s*kb*NR + p*NR + jj, zero padded past nb. */
static void pack_b(const double *b, int64_t ldb, int64_t p0, int64_t kb, int64_t j0, int64_t nb, double *bp)
{
    for (int64_t js = 0; js < nb; js += NR) {
        double *dst = bp + js * kb;
        int64_t w = nb - js < NR ? nb - js : NR;
        for (int64_t p = 0; p < kb; p++) {
            const double *src = b + (p0 + p) * ldb + j0 + js;
            int jj = 0;
            for (; jj < w; jj++) dst[p * NR + jj] = src[jj];
            for (; jj < NR; jj++) dst[p * NR + jj] = 0.0;
        }
    }
}

/* Pack A[i:i+h, p0:p0+kb] (h <= MR) as element (p, ii) at p*MR + ii, zero padded past h. */
static void pack_a(const double *a, int64_t lda, int64_t i, int h, int64_t p0, int64_t kb, double *ap)
{
    for (int64_t p = 0; p < kb; p++)
        for (int ii = 0; ii < MR; ii++) ap[p * MR + ii] = ii < h ? a[(i + ii) * lda + p0 + p] : 0.0;
}

/* The MR x NR block acc (row-major) from C and back, h rows and w columns of it (zero padded). */
static void get_block(double *acc, const double *c, int64_t ldc, int h, int w)
{
    for (int ii = 0; ii < MR; ii++)
        for (int jj = 0; jj < NR; jj++) acc[ii * NR + jj] = ii < h && jj < w ? c[ii * ldc + jj] : 0.0;
}

static void put_block(const double *acc, double *c, int64_t ldc, int h, int w)
{
    for (int ii = 0; ii < h; ii++)
        for (int jj = 0; jj < w; jj++) c[ii * ldc + jj] = acc[ii * NR + jj];
}

/* acc <- the chains continued over kb more terms. */
static void kernel_plain(int64_t kb, const double *ap, const double *bp, double *acc)
{
    double t[MR * NR];
    memcpy(t, acc, sizeof t);
    for (int64_t p = 0; p < kb; p++)
        for (int ii = 0; ii < MR; ii++) {
            double av = ap[p * MR + ii];
            for (int jj = 0; jj < NR; jj++) t[ii * NR + jj] = fma(av, bp[p * NR + jj], t[ii * NR + jj]);
        }
    memcpy(acc, t, sizeof t);
}

#if (defined(__x86_64__) || defined(__i386__)) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define ER_HAVE_AVX2_GEMM 1
__attribute__((target("avx2,fma"))) static void kernel_avx2(int64_t kb, const double *ap, const double *bp,
                                                             double *acc)
{
    __m256d c00 = _mm256_loadu_pd(acc), c01 = _mm256_loadu_pd(acc + 4), c10 = _mm256_loadu_pd(acc + 8),
            c11 = _mm256_loadu_pd(acc + 12), c20 = _mm256_loadu_pd(acc + 16), c21 = _mm256_loadu_pd(acc + 20),
            c30 = _mm256_loadu_pd(acc + 24), c31 = _mm256_loadu_pd(acc + 28);
    for (int64_t p = 0; p < kb; p++) {
        __m256d b0 = _mm256_loadu_pd(bp + p * NR), b1 = _mm256_loadu_pd(bp + p * NR + 4);
        __m256d a0 = _mm256_broadcast_sd(ap + p * MR), a1 = _mm256_broadcast_sd(ap + p * MR + 1);
        __m256d a2 = _mm256_broadcast_sd(ap + p * MR + 2), a3 = _mm256_broadcast_sd(ap + p * MR + 3);
        c00 = _mm256_fmadd_pd(a0, b0, c00);
        c01 = _mm256_fmadd_pd(a0, b1, c01);
        c10 = _mm256_fmadd_pd(a1, b0, c10);
        c11 = _mm256_fmadd_pd(a1, b1, c11);
        c20 = _mm256_fmadd_pd(a2, b0, c20);
        c21 = _mm256_fmadd_pd(a2, b1, c21);
        c30 = _mm256_fmadd_pd(a3, b0, c30);
        c31 = _mm256_fmadd_pd(a3, b1, c31);
    }
    _mm256_storeu_pd(acc, c00);
    _mm256_storeu_pd(acc + 4, c01);
    _mm256_storeu_pd(acc + 8, c10);
    _mm256_storeu_pd(acc + 12, c11);
    _mm256_storeu_pd(acc + 16, c20);
    _mm256_storeu_pd(acc + 20, c21);
    _mm256_storeu_pd(acc + 24, c30);
    _mm256_storeu_pd(acc + 28, c31);
}
#endif

typedef void (*kernel_fn)(int64_t, const double *, const double *, double *);

int er_cpu_gemm_rows(const double *a, int64_t lda, const double *b, int64_t ldb, double *c, int64_t ldc,
                     int64_t r0, int64_t r1, int64_t n, int64_t k)
{
    kernel_fn kern = kernel_plain;
    double *bp, *ap;
    double acc[MR * NR];
#ifdef ER_HAVE_AVX2_GEMM
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) kern = kernel_avx2;
#endif
    for (int64_t i = r0; i < r1; i++)
        for (int64_t j = 0; j < n; j++) c[i * ldc + j] = 0.0;
    if (k == 0) return 0;
    bp = (double *)malloc(sizeof(double) * KB * (NB + NR));
    ap = (double *)malloc(sizeof(double) * KB * MR);
    if (!bp || !ap) {
        free(bp);
        free(ap);
        return -1;
    }
    for (int64_t j0 = 0; j0 < n; j0 += NB) {
        int64_t nb = n - j0 < NB ? n - j0 : NB;
        for (int64_t p0 = 0; p0 < k; p0 += KB) {
            int64_t kb = k - p0 < KB ? k - p0 : KB;
            pack_b(b, ldb, p0, kb, j0, nb, bp);
            for (int64_t i = r0; i < r1; i += MR) {
                int h = r1 - i < MR ? (int)(r1 - i) : MR;
                pack_a(a, lda, i, h, p0, kb, ap);
                for (int64_t js = 0; js < nb; js += NR) {
                    int w = nb - js < NR ? (int)(nb - js) : NR;
                    get_block(acc, c + i * ldc + j0 + js, ldc, h, w);
                    kern(kb, ap, bp + js * kb, acc);
                    put_block(acc, c + i * ldc + j0 + js, ldc, h, w);
                }
            }
        }
    }
    free(bp);
    free(ap);
    return 0;
}

/* ------------------------------------------------------------------------------------------------ */
/* Products in any order: a BLAS where there is one, else the kernel above on the caller's threads.    */

typedef struct {
    const double *a, *b;
    double *c;
    int64_t lda, ldb, ldc, r0, r1, n, k;
    int blas; /* rows [r0, r1) by one single-threaded call of the BLAS (blas_split below), else the kernel */
    int failed;
} gemm_part;

static void gemm_part_blas(gemm_part *g);

static void *gemm_part_run(void *arg)
{
    gemm_part *g = (gemm_part *)arg;
    if (g->blas) {
        gemm_part_blas(g);
        return NULL;
    }
    g->failed = er_cpu_gemm_rows(g->a, g->lda, g->b, g->ldb, g->c, g->ldc, g->r0, g->r1, g->n, g->k) != 0;
    return NULL;
}

/* The kernel on `threads` threads, a fixed range of rows each (a thread that cannot start has its share
 * run here). */
static int gemm_split(const double *a, int64_t lda, const double *b, int64_t ldb, double *c, int64_t ldc, int64_t m,
                      int64_t n, int64_t k, int threads, int blas)
{
    enum { MAXT = 256 };
    gemm_part g[MAXT];
    int T = threads < 1 ? 1 : threads > MAXT ? MAXT : threads, failed = 0;
    if ((int64_t)T > (m + MR - 1) / MR) T = (int)((m + MR - 1) / MR);
    if (T < 1) T = 1;
    for (int t = 0; t < T; t++) {
        /* row ranges in whole micro-tiles, so no thread computes a ragged block it need not */
        int64_t tiles = (m + MR - 1) / MR;
        g[t].a = a;
        g[t].b = b;
        g[t].c = c;
        g[t].lda = lda;
        g[t].ldb = ldb;
        g[t].ldc = ldc;
        g[t].r0 = tiles * t / T * MR;
        g[t].r1 = t + 1 == T ? m : tiles * (t + 1) / T * MR;
        g[t].n = n;
        g[t].k = k;
        g[t].blas = blas;
        g[t].failed = 0;
    }
    er_par_jobs(gemm_part_run, g, sizeof g[0], T);
    for (int t = 0; t < T; t++) failed |= g[t].failed;
    return failed ? -1 : 0;
}

#ifdef ER_HAVE_BLAS
/*
 * The BLAS is loaded at run time (dlopen), not linked: its thread pool (OpenBLAS starts one when it is
 * loaded) is then created with every signal blocked, so its threads never take a signal meant for
 * the process (a command that holds SIGTERM while it writes a file, src/npy.c, relies on that), and a
 * machine without the library runs the hand-written kernel.  The prototype is the cblas.h found at
 * build time (its integer type); the library is the one found then (ER_BLAS_PATH), else its usual
 * names.  One product at a time through it from this library: its thread count is set to the caller's
 * for the call and put back after it (other users of the BLAS in the process keep theirs).
 *
 * Limits (issue 33): OpenBLAS cannot fail.  A pool thread it cannot start at load makes it raise(SIGINT)
 * (under `ulimit -u`), and a work buffer it cannot map (128 MiB of address space per thread that runs
 * a part of a product, taken on first use and kept; under `ulimit -v`) makes it retry for ever.  So
 * before loading it, the threads of its pool are started here and the buffers' address space mapped
 * here (and given back), and before a product needing more buffers than the BLAS has had, their
 * address space is mapped again: where either fails, the product runs on the kernel above (the
 * fast path's results do not depend on the order of the sums, so the bits are the same).  The product
 * itself runs with the caller's signal mask: SIGINT and SIGTERM end a long product as any other.
 */
typedef __typeof__(&cblas_dgemm) dgemm_fn;
typedef __typeof__(&cblas_sgemm) sgemm_fn;
typedef void (*set_threads_fn)(int64_t);
typedef int64_t (*get_threads_fn)(void);

static pthread_mutex_t blas_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t blas_once = PTHREAD_ONCE_INIT;
static dgemm_fn blas_dgemm;
static sgemm_fn blas_sgemm;
static set_threads_fn blas_set;
static get_threads_fn blas_get;
static int blas_split;   /* 1: OpenBLAS with its own pthreads pool (openblas_get_parallel() == 1) */
static int blas_buffers; /* work buffers the BLAS has had for the caller's threads at once (blas_lock) */

/* The address space of one work buffer of OpenBLAS 0.3 on x86-64 (BUFFER_SIZE, 128 MiB, and a page),
 * with room to spare; other BLAS libraries take less. */
#define ER_BLAS_BUFFER ((size_t)130 << 20)
#define ER_BLAS_MAX_PROBE 512

/* Whether n buffers' address space can be mapped now (RLIMIT_AS, RLIMIT_DATA, strict overcommit):
 * mapped without its pages and given back at once. */
static int blas_room(int n)
{
    if (n <= 0) return 1;
    size_t need = (size_t)n * ER_BLAS_BUFFER;
    void *p = mmap(NULL, need, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED) return 0;
    munmap(p, need);
    return 1;
}

static pthread_mutex_t probe_gate = PTHREAD_MUTEX_INITIALIZER;

static void *probe_thread(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&probe_gate); /* held by blas_can_start until every probe thread exists */
    pthread_mutex_unlock(&probe_gate);
    return NULL;
}

/* Whether n more threads (with the default stack, as the BLAS starts them) can exist at once now. */
static int blas_can_start(int n)
{
    pthread_t th[ER_BLAS_MAX_PROBE];
    int made = 0, ok = 1;
    if (n > ER_BLAS_MAX_PROBE) n = ER_BLAS_MAX_PROBE;
    pthread_mutex_lock(&probe_gate);
    for (; made < n; made++)
        if (pthread_create(&th[made], NULL, probe_thread, NULL) != 0) {
            ok = 0;
            break;
        }
    pthread_mutex_unlock(&probe_gate);
    for (int i = 0; i < made; i++) pthread_join(th[i], NULL);
    return ok;
}

/* The threads OpenBLAS runs when loaded: the processors this process may use, fewer where
 * OPENBLAS_NUM_THREADS, GOTO_NUM_THREADS or OMP_NUM_THREADS (the first one set) says so. */
static int blas_load_threads(void)
{
    static const char *const vars[] = {"OPENBLAS_NUM_THREADS", "GOTO_NUM_THREADS", "OMP_NUM_THREADS"};
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0 && CPU_COUNT(&set) < n) n = CPU_COUNT(&set);
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) {
        const char *e = getenv(vars[i]);
        long v = e ? strtol(e, NULL, 10) : 0;
        if (v > 0) {
            if (v < n) n = v;
            break;
        }
    }
    return n < 1 ? 1 : n > ER_BLAS_MAX_PROBE ? ER_BLAS_MAX_PROBE : (int)n;
}

static void *blas_sym(void *h, const char *name)
{
    return h ? dlsym(h, name) : NULL;
}

static void blas_load(void)
{
    static const char *names[] = {ER_BLAS_PATH, ER_BLAS_SONAME, "libopenblas.so.0", "libblis.so.4", "libcblas.so.3"};
    sigset_t all, old, pending;
    void *h = NULL, *f;
    int pool = blas_load_threads() - 1, sigint_before, sigint_after;
    struct rlimit rl;
    /* Under a limit of the address space no BLAS at all: OpenBLAS's pool threads map their 128 MiB
     * buffers when they start, after dlopen returns, and retry for ever where that fails; a probe here
     * cannot reserve that space, so the process's own allocations after it could take it and leave a
     * pool thread spinning (and the process hung at exit, where the BLAS joins its pool). */
    if ((getrlimit(RLIMIT_AS, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY) ||
        (getrlimit(RLIMIT_DATA, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY))
        return;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &old); /* threads the library starts inherit this mask */
    /* its pool's threads and their buffers must be there to be had: else no BLAS in this process */
    if (!blas_can_start(pool) || !blas_room(pool)) {
        pthread_sigmask(SIG_SETMASK, &old, NULL);
        return;
    }
    sigpending(&pending);
    sigint_before = sigismember(&pending, SIGINT);
    for (size_t i = 0; i < sizeof names / sizeof names[0] && !h; i++)
        if (names[i][0]) h = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
    sigpending(&pending);
    sigint_after = sigismember(&pending, SIGINT);
    if (h && sigint_after && !sigint_before) {
        /* OpenBLAS raises SIGINT at the thread that loads it when it could not start its pool after
         * all: take that signal back and leave the library unused */
        struct timespec zero = {0, 0};
        sigset_t only;
        sigemptyset(&only);
        sigaddset(&only, SIGINT);
        (void)sigtimedwait(&only, NULL, &zero);
        h = NULL;
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (!(f = blas_sym(h, "cblas_dgemm"))) return;
    memcpy(&blas_dgemm, &f, sizeof f);
    if ((f = blas_sym(h, "cblas_sgemm"))) memcpy(&blas_sgemm, &f, sizeof f);
    /* its thread control: OpenBLAS's, else BLIS's; both take and return one integer (BLIS: dim_t),
     * which the low 32 bits carry on the ABIs here */
    void *set = blas_sym(h, "openblas_set_num_threads"), *get = blas_sym(h, "openblas_get_num_threads");
    if (!set || !get) {
        set = blas_sym(h, "bli_thread_set_num_threads");
        get = blas_sym(h, "bli_thread_get_num_threads");
    }
    if (set && get) {
        memcpy(&blas_set, &set, sizeof set);
        memcpy(&blas_get, &get, sizeof get);
        /* OpenBLAS's pthreads build (not its OpenMP one, whose thread count is per calling thread):
         * er_cpu_gemm_any calls it on one thread from each of the caller's threads (below) */
        void *par = blas_sym(h, "openblas_get_parallel");
        if (par && set == blas_sym(h, "openblas_set_num_threads")) {
            int (*get_parallel)(void);
            memcpy(&get_parallel, &par, sizeof par);
            blas_split = get_parallel() == 1;
        }
    }
}

static void gemm_part_blas(gemm_part *g)
{
    if (g->r1 > g->r0)
        blas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)(g->r1 - g->r0), (int)g->n, (int)g->k, 1.0,
                   g->a + g->r0 * g->lda, (int)g->lda, g->b, (int)g->ldb, 0.0, g->c + g->r0 * g->ldc, (int)g->ldc);
}
#else
static void gemm_part_blas(gemm_part *g)
{
    g->failed = 1; /* never called: no BLAS */
}
#endif

int er_cpu_gemm_uses_blas(void)
{
#ifdef ER_HAVE_BLAS
    const char *e = getenv("EXACTREF_GEMM");
    if (e && !strcmp(e, "builtin")) return 0;
    pthread_once(&blas_once, blas_load);
    return blas_dgemm != NULL;
#else
    return 0;
#endif
}

#ifdef ER_HAVE_BLAS
/* The way into and out of one product through the BLAS: one at a time from this library, its thread
 * count the caller's for the call (1 per call where ours split the rows: blas_split) and put back
 * after it, set with every signal blocked (threads the BLAS starts then inherit the mask); the
 * product itself runs with the caller's mask.  0 (and nothing held) where the BLAS could not get the
 * buffers of `threads` parts at once, or start the threads asked for: the caller runs the kernel. */
static int blas_enter(int threads, int64_t *before)
{
    sigset_t all, old;
    int parts = threads < 1 ? 1 : threads;
    pthread_mutex_lock(&blas_lock);
    if (parts > blas_buffers && !blas_room(parts - blas_buffers)) {
        pthread_mutex_unlock(&blas_lock);
        return 0;
    }
    *before = 0;
    if (blas_set) {
        int want = blas_split ? 1 : parts;
        sigfillset(&all);
        pthread_sigmask(SIG_BLOCK, &all, &old);
        *before = (int64_t)(int32_t)blas_get();
        if (want > *before && !blas_can_start(want - (int)*before)) {
            pthread_sigmask(SIG_SETMASK, &old, NULL);
            pthread_mutex_unlock(&blas_lock);
            return 0;
        }
        blas_set(want);
        pthread_sigmask(SIG_SETMASK, &old, NULL);
    }
    return 1;
}

static void blas_leave(int threads, int64_t before)
{
    sigset_t all, old;
    int parts = threads < 1 ? 1 : threads;
    if (parts > blas_buffers) blas_buffers = parts; /* they exist now, and the BLAS keeps them */
    if (blas_set && before > 0) {
        sigfillset(&all);
        pthread_sigmask(SIG_BLOCK, &all, &old);
        blas_set(before);
        pthread_sigmask(SIG_SETMASK, &old, NULL);
    }
    pthread_mutex_unlock(&blas_lock);
}
#endif

int er_cpu_gemm_any(const double *a, int64_t lda, const double *b, int64_t ldb, double *c, int64_t ldc, int64_t m,
                    int64_t n, int64_t k, int threads)
{
    if (m <= 0 || n <= 0) return 0;
#ifdef ER_HAVE_BLAS
    int64_t before;
    if (m <= INT_MAX && n <= INT_MAX && k <= INT_MAX && lda <= INT_MAX && ldb <= INT_MAX && ldc <= INT_MAX && k > 0 &&
        er_cpu_gemm_uses_blas() && blas_enter(threads, &before)) {
        if (blas_split && threads > 1) {
            /* One single-threaded call per thread of ours, on a fixed range of rows each.  OpenBLAS's
             * own pool stays idle, and idle it sleeps: between its calls the pool's threads busy-wait
             * (sched_yield) for a while, competing with the engine's threads for the cores during the
             * passes before and after the product. */
            gemm_split(a, lda, b, ldb, c, ldc, m, n, k, threads, 1);
        } else {
            blas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)m, (int)n, (int)k, 1.0, a, (int)lda, b,
                       (int)ldb, 0.0, c, (int)ldc);
        }
        blas_leave(threads, before);
        return 0;
    }
#endif
    return gemm_split(a, lda, b, ldb, c, ldc, m, n, k, threads, 0);
}

#ifdef ER_HAVE_BLAS
/* Rows [r0, r1) of a binary32 product by one single-threaded BLAS call (er_cpu_sgemm_blas's split). */
typedef struct {
    const float *a, *b;
    float *c;
    int64_t lda, ldb, ldc, r0, r1, n, k;
} sgemm_part;

static void *sgemm_part_run(void *arg)
{
    sgemm_part *g = (sgemm_part *)arg;
    if (g->r1 > g->r0)
        blas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)(g->r1 - g->r0), (int)g->n, (int)g->k, 1.0f,
                   g->a + g->r0 * g->lda, (int)g->lda, g->b, (int)g->ldb, 0.0f, g->c + g->r0 * g->ldc, (int)g->ldc);
    return NULL;
}
#endif

/* C = A B in binary32 through the BLAS (row-major, any order: its own), on `threads` threads (with
 * OpenBLAS's pthreads pool, one single-threaded call per thread of ours, as er_cpu_gemm_any); -1
 * without one (no hand-written binary32 kernel: the caller takes another way). */
int er_cpu_sgemm_blas(const float *a, int64_t lda, const float *b, int64_t ldb, float *c, int64_t ldc, int64_t m,
                      int64_t n, int64_t k, int threads)
{
#ifdef ER_HAVE_BLAS
    int64_t before;
    if (m > 0 && n > 0 && k > 0 && m <= INT_MAX && n <= INT_MAX && k <= INT_MAX && lda <= INT_MAX && ldb <= INT_MAX &&
        ldc <= INT_MAX && er_cpu_gemm_uses_blas() && blas_sgemm && blas_enter(threads, &before)) {
        if (blas_split && threads > 1) {
            enum { MAXT = 256 };
            sgemm_part g[MAXT];
            int T = threads > MAXT ? MAXT : threads;
            if ((int64_t)T > m) T = (int)m;
            for (int t = 0; t < T; t++) {
                g[t].a = a, g[t].b = b, g[t].c = c;
                g[t].lda = lda, g[t].ldb = ldb, g[t].ldc = ldc;
                g[t].r0 = m * t / T;
                g[t].r1 = m * (t + 1) / T;
                g[t].n = n, g[t].k = k;
            }
            er_par_jobs(sgemm_part_run, g, sizeof g[0], T);
        } else {
            blas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)m, (int)n, (int)k, 1.0f, a, (int)lda, b,
                       (int)ldb, 0.0f, c, (int)ldc);
        }
        blas_leave(threads, before);
        return 0;
    }
#endif
    (void)a, (void)lda, (void)b, (void)ldb, (void)c, (void)ldc, (void)m, (void)n, (void)k, (void)threads;
    return -1;
}
