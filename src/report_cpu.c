/* report_cpu.c: the processor features and the threads of the covers, the keys and the scoring
 * (src/report.c): detected once, the test switches er_report_isa / er_report_threads. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "er_report.h"
#include "report_cpu.h"

#ifdef ER_AVX2_CLONES
#include <cpuid.h>
static int have_avx2_v_, have_avx512_v_;
static pthread_once_t have_avx2_once_ = PTHREAD_ONCE_INIT;
static void have_avx2_init_(void)
{
    __builtin_cpu_init();
    have_avx2_v_ = __builtin_cpu_supports("avx2") != 0;
    /* the fused covers and scoring: AVX-512 (F, BW, VL, DQ) unless EXACTREF_NO_AVX512 is set (AVX2 then),
     * and F16C for f16 outputs in AVX2 lanes */
    const char *no512 = getenv("EXACTREF_NO_AVX512");
    have_avx512_v_ = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                     __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq") &&
                     !(no512 && *no512 && strcmp(no512, "0") != 0);
    unsigned a = 0, b = 0, c = 0, d = 0;
    if (!__get_cpuid(1, &a, &b, &c, &d) || !(c >> 29 & 1u)) have_avx2_v_ = 0; /* F16C: CPUID.1:ECX bit 29 */
}
/* set by er_report_portable / er_report_isa (tests): 2 every ISA the processor has, 1 AVX2 at most, 0
 * the baseline copies everywhere */
static int er_isa_max_ = 2;
int er_report_have_avx2_(void)
{
    pthread_once(&have_avx2_once_, have_avx2_init_);
    return have_avx2_v_ && er_isa_max_ >= 1;
}
int er_report_have_avx512_(void)
{
    pthread_once(&have_avx2_once_, have_avx2_init_);
    return have_avx2_v_ && have_avx512_v_ && er_isa_max_ >= 2;
}
#else
int er_report_have_avx2_(void) { return 0; }
int er_report_have_avx512_(void) { return 0; }
#endif

static int er_threads_;
int er_report_nthreads_(int64_t rows, int64_t count)
{
    if (er_threads_ > 0) return (int)(rows < 1 ? 1 : rows < er_threads_ ? rows : er_threads_);
    if (count < (INT64_C(1) << 16) || rows < 2) return 1;
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    if (n < 1) n = 1;
    if (n > 64) n = 64;
    if (n > rows) n = (long)rows;
    if (n > count / (INT64_C(1) << 15)) n = (long)(count / (INT64_C(1) << 15));
    return n < 1 ? 1 : (int)n;
}

/* Run fn over nt jobs of size sz each (job 0 on the calling thread; a thread that cannot start runs
 * its job here too). */
void er_report_run_jobs_(void *(*fn)(void *), void *jobs, size_t sz, int nt)
{
    pthread_t th[64];
    int started[64];
    for (int t = 1; t < nt; t++) started[t] = pthread_create(&th[t], NULL, fn, (char *)jobs + (size_t)t * sz) == 0;
    fn(jobs);
    for (int t = 1; t < nt; t++) {
        if (started[t]) pthread_join(th[t], NULL);
        else fn((char *)jobs + (size_t)t * sz);
    }
}

/* er_threads_ is set by er_report_threads (tests): 0 the processors' count */

void er_report_portable(int on) { er_report_isa(on ? 0 : 2); }

void er_report_isa(int level)
{
#ifdef ER_AVX2_CLONES
    er_isa_max_ = level < 0 ? 0 : level > 2 ? 2 : level;
#else
    (void)level;
#endif
}

void er_report_threads(int n) { er_threads_ = n < 0 ? 0 : n > 64 ? 64 : n; }

/* name(args) runs name_avx2 where the processor has AVX2, else name_base: two copies of one body */
