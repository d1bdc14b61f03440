/* er_fpenv.h: the floating-point environment the library computes in.
 *
 * Every binary64 operation of the library is written for IEEE's default environment: rounding to
 * nearest, subnormals kept (no flush to zero, no denormals read as zero), exceptions masked.  The
 * certified fast path's error bounds, TwoSum (er_b_add_ru), the ends' directed steps and the
 * kernels' bit patterns all assume it.  A caller may have changed it: fesetround, a library that sets
 * flush-to-zero for speed (torch.set_flush_denormal(True) sets MXCSR's FTZ and DAZ), a debugger that
 * unmasks FE_INVALID (then an infinity minus an infinity would raise SIGFPE).  The front door's three
 * computing functions (er_front_mma_keep, er_front_bounds, er_front_normal) therefore run between
 * er_fpenv_enter and er_fpenv_leave: the default environment for the call, the caller's restored on
 * return (its exception flags included: the call's own are dropped).  Threads the call starts inherit
 * the calling thread's environment, so they compute in the default one too.  Where nothing differs
 * from the default (the usual case) nothing is written.
 *
 * On x86 the environment is MXCSR (the SSE unit, which does all binary64 arithmetic there):
 * rounding control (bits 13-14), FTZ (15), DAZ (6) and the six exception masks (7-12).  Elsewhere
 * the rounding direction is set with <fenv.h>; a flush-to-zero mode of another architecture (AArch64's
 * FPCR.FZ) is not handled.
 */
#ifndef ER_FPENV_H
#define ER_FPENV_H

#include <fenv.h>

#if (defined(__x86_64__) || (defined(__i386__) && defined(__SSE2__))) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define ER_FPENV_MXCSR 1
#endif

typedef struct er_fpenv {
    unsigned csr; /* the caller's MXCSR (x86) */
    int round;    /* the caller's rounding direction (elsewhere) */
    int changed;  /* 1: MXCSR was set, 2: the rounding direction was */
} er_fpenv;

static inline void er_fpenv_enter(er_fpenv *e)
{
    e->changed = 0;
#ifdef ER_FPENV_MXCSR
    e->csr = _mm_getcsr();
    /* rounding to nearest, FTZ and DAZ off, every exception masked; the flags as they are */
    const unsigned want = (e->csr & ~0xE040u) | 0x1F80u;
    if (want != e->csr) {
        _mm_setcsr(want);
        e->changed = 1;
    }
#else
    e->round = fegetround();
    if (e->round != FE_TONEAREST && fesetround(FE_TONEAREST) == 0) e->changed = 2;
#endif
}

static inline void er_fpenv_leave(const er_fpenv *e)
{
#ifdef ER_FPENV_MXCSR
    if (e->changed & 1) _mm_setcsr(e->csr);
#else
    if (e->changed & 2) (void)fesetround(e->round);
#endif
}

#endif /* ER_FPENV_H */
