/* report_cpu.h (internal): the processor features and the threads of the covers, the keys and the
 * scoring (src/report_cpu.c), for src/report.c and src/report_covers.c. */
#ifndef ER_REPORT_CPU_H
#define ER_REPORT_CPU_H

#include <stddef.h>
#include <stdint.h>

/* x86: each vectorised loop of src/report.c and src/report_covers.c is built twice, for the baseline ISA and for AVX2, and the
 * AVX2 copy runs where the processor has it (the same operations on the same values: the same bits) */
#if (defined(__GNUC__) || defined(__clang__)) && (defined(__x86_64__) || defined(__i386__)) && !defined(ER_NO_AVX2)
#define ER_AVX2_CLONES 1
#endif

/* AVX2 with F16C, and AVX-512 (F, BW, VL, DQ; not with EXACTREF_NO_AVX512 set), detected once, within
 * the level er_report_isa allows (tests) */
int er_report_have_avx2_(void);
int er_report_have_avx512_(void);
/* The threads for rows of count elements (er_report_threads: a fixed number, tests) */
int er_report_nthreads_(int64_t rows, int64_t count);
#endif
