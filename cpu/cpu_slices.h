/* cpu_slices.h: the host emulation of the GPU route's exact integer slices (cpu/cpu_slices.c), for the
 * tests and the benchmark: not the CPU engine's default route. */
#ifndef ER_CPU_SLICES_H
#define ER_CPU_SLICES_H

#include <stdint.h>

#include "../host/er_problem.h"

/* What one call did (elements of D). */
typedef struct er_slices_stats {
    int64_t elements; /* elements computed */
    int64_t sliced;   /* from the slices' integer sums, rounded once */
    int64_t exact_path; /* left to the element-wise exact path (rows or columns with a NaN or an
                           infinity or that do not fit their grid, zero sums) */
    int64_t gemms;    /* int8 GEMMs run (batches x chunks x pairs of slices not all zero) */
    int slices_a, slices_b; /* slices per operand */
} er_slices_stats;

/*
 * D of a validated float mma (er_problem_validate) through exact integer slices (core/er_slices.h):
 * each operand cut into int8 slices, an int8 x int8 -> int32 GEMM per pair of slices and chunk of k
 * (a blocked plain-C kernel, as a tensor core would run it), the int32 results recombined exactly and
 * rounded once.  Operands: formats with slices (er_sl_slices_of > 0: f8E4M3FN, f8E5M2, the FNUZ, fp6 and
 * fp4 formats on their fixed grids; bf16, f16, tf32 on a grid per row of A / column of B, rows that do
 * not fit it left to the exact path), not block-scaled; D only (no enclosures).  The same bits as er_mma.  ER_OK, or
 * ER_EUNSUPPORTED / ER_ENOMEM with a sentence in P->msg.  st may be NULL.
 */
int er_cpu_slices_mma(const er_problem *P, er_slices_stats *st);

#endif
