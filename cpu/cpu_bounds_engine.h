/* cpu_bounds_engine.h: the engines' bounds on the CPU, register-blocked (cpu/cpu_bounds_engine.c). */
#ifndef ER_CPU_BOUNDS_ENGINE_H
#define ER_CPU_BOUNDS_ENGINE_H

#include <stdint.h>

#include "../host/er_bjob.h"
#include "../host/er_progress.h"
#include "exactref/result.h"

/*
 * The elements of rows [r0, r1) of an engine's batch (no slack of A or B) into out from index e0 on:
 * the bits of er_bound_element, element by element.  simd: 2 the AVX-512 kernels where the processor
 * has them (else as 1), 1 the AVX2 kernels where it has them, 0 the portable ones, -1 as the
 * environment says (the widest the processor has; AVX2 at most with EXACTREF_NO_AVX512, the portable
 * kernels with EXACTREF_NO_SIMD).
 * Returns 1 when done, 0 when it cannot (no memory, no exponents, slack of A or B): the caller then
 * runs the elements one at a time.
 */
int er_cpu_engine_rows(const er_bjob *job, er_bounds *out, int64_t e0, int64_t r0, int64_t r1, int simd,
                       er_progress *pg);

/* The kernels er_cpu_engine_rows runs for its argument simd (2 AVX-512, 1 AVX2, 0 portable). */
int er_cpu_engine_simd(int simd);

/*
 * er_b_eng_block for four consecutive elements whose states are the arrays T, E, B, R and done (4
 * each), xs and emax their step's sums and exponents, through the AVX2 recurrence the kernels run (one
 * instruction of a tile, its lane-by-lane fallback included): the state afterwards is
 * er_b_eng_block's, lane by lane, in every case.  Returns 1 when the vector path computed them, 0 when
 * it fell back to er_b_eng_block (a lane done, a negative, subnormal, infinite or NaN value on the way),
 * -1 without AVX2 (nothing touched).
 */
int er_cpu_eng_block4(const er_bpar *c, double *T, double *E, double *B, double *R, unsigned char *done,
                      const double *xs, const int32_t *emax, int64_t nt, int64_t p1);

#endif
