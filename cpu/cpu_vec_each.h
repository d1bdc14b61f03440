/* cpu_vec_each.h: compiles a file's vector kernels at each width: AVX-512's eight lanes, then AVX2's four.
 *
 * Define ER_VEC_KERNELS as the kernels' header (a template over cpu_vec.h's V(op), like
 * cpu_finish_lanes.h) and include this after cpu_finish.h: the header is included with ER_VW 8 and
 * again with ER_VW 4, each after cpu_vec.h and cpu_finish_lanes.h at that width, so the file has both
 * er_v8_* and er_v4_* kernels, and er_vec_width() says which one the processor and the environment
 * allow.  Where the compiler takes no x86 target attributes nothing is defined (ER_VEC_HAVE unset) and
 * er_vec_width() is 0.
 */
#include "../host/er_isa.h"

#ifndef ER_CPU_VEC_WIDTH
#define ER_CPU_VEC_WIDTH
/* The lanes of the vector kernels to run: 8 (AVX-512), 4 (AVX2) or 0 (none: the one-at-a-time paths,
 * which the tests compare; EXACTREF_NO_SIMD and EXACTREF_NO_AVX512 through host/er_isa.h). */
static inline int er_vec_width(void)
{
#if (defined(__x86_64__) || defined(__i386__)) && (defined(__GNUC__) || defined(__clang__))
    int l = er_isa();
    return l >= ER_ISA_AVX512 ? 8 : l >= ER_ISA_AVX2 ? 4 : 0;
#else
    return 0;
#endif
}
#endif

#define ER_VW 8
#include "cpu_vec.h"
#ifdef ER_VEC_HAVE
#include "cpu_finish_lanes.h"
#include ER_VEC_KERNELS
#endif
#undef ER_VW
#define ER_VW 4
#include "cpu_vec.h"
#ifdef ER_VEC_HAVE
#include "cpu_finish_lanes.h"
#include ER_VEC_KERNELS
#endif
#undef ER_VW
#undef ER_VEC_KERNELS
