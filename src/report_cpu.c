/* report_cpu.c: the processor features and the thread counts of the covers, the keys and the scoring
 * (src/report.c): detected once, the test switches er_report_isa / er_report_threads. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "er_report.h"
#include "host/er_isa.h"
#include "report_cpu.h"

#ifdef ER_AVX2_CLONES
/* set by er_report_portable / er_report_isa (tests): 2 every ISA the processor has, 1 AVX2 at most, 0
 * the baseline copies everywhere */
static int er_isa_max_ = 2;
/* AVX2 (with F16C for f16 outputs), and for the fused covers and scoring AVX-512 (F, BW, VL, DQ), as
 * host/er_isa.h says (the processor, detected once; EXACTREF_NO_SIMD, EXACTREF_NO_AVX512) */
int er_report_have_avx2_(void) { return er_isa() >= ER_ISA_AVX2 && er_isa_max_ >= 1; }
int er_report_have_avx512_(void) { return er_isa() >= ER_ISA_AVX512 && er_isa_max_ >= 2; }
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
