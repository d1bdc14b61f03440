/* er_isa.h: the processor's vector instructions, detected once, and the environment's switches that
 * limit them (internal, host/er_isa.c): the one place every vector path asks. */
#ifndef ER_ISA_H
#define ER_ISA_H

/* The vector levels, each including the one below. */
#define ER_ISA_NONE 0   /* the portable loops */
#define ER_ISA_AVX2 1   /* AVX2 with FMA and F16C */
#define ER_ISA_AVX512 2 /* and AVX-512 F, BW, VL, DQ */

/* The processor's level, detected once per process (cached; ER_ISA_NONE on a processor other than x86
 * or a compiler without the feature checks). */
int er_isa_hw(void);

/* The level the library uses now: er_isa_hw() within the environment's switches, read at each call (the
 * tests set them between calls): EXACTREF_NO_SIMD on, ER_ISA_NONE; EXACTREF_NO_AVX512 on, at most
 * ER_ISA_AVX2.  Every vector path of the library asks here, so each switch means the same everywhere. */
int er_isa(void);

/* Whether the environment switch `name` is on: set to a non-empty value other than "0" (unset, empty
 * and "0" are off).  The library's on/off switches (docs/building.md's table) all mean it so. */
int er_env_on(const char *name);

#endif /* ER_ISA_H */
