/* er_isa.c: the processor's vector instructions, detected once, and the environment's switches
 * (host/er_isa.h). */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "er_isa.h"

#if (defined(__GNUC__) || defined(__clang__)) && (defined(__x86_64__) || defined(__i386__))
#include <cpuid.h>

/* F16C (CPUID leaf 1, ECX bit 29), read directly: clang before 15 has no "f16c" for
 * __builtin_cpu_supports, and the fuzzers build this file with clang. */
static int er_isa_f16c(void)
{
    unsigned a, b, c, d;
    if (!__get_cpuid(1, &a, &b, &c, &d)) return 0;
    return (int)((c >> 29) & 1u);
}
#endif

static int er_isa_hw_v;
static pthread_once_t er_isa_once = PTHREAD_ONCE_INIT;

static void er_isa_detect(void)
{
#if (defined(__GNUC__) || defined(__clang__)) && (defined(__x86_64__) || defined(__i386__))
    __builtin_cpu_init();
    if (!(__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && er_isa_f16c()))
        return;
    er_isa_hw_v = ER_ISA_AVX2;
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
        __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq"))
        er_isa_hw_v = ER_ISA_AVX512;
#endif
}

int er_isa_hw(void)
{
    pthread_once(&er_isa_once, er_isa_detect);
    return er_isa_hw_v;
}

int er_env_on(const char *name)
{
    const char *e = getenv(name);
    return e && *e && strcmp(e, "0") != 0;
}

int er_isa(void)
{
    int h = er_isa_hw();
    if (h == ER_ISA_NONE || er_env_on("EXACTREF_NO_SIMD")) return ER_ISA_NONE;
    if (h > ER_ISA_AVX2 && er_env_on("EXACTREF_NO_AVX512")) return ER_ISA_AVX2;
    return h;
}
