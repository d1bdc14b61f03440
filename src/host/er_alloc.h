/* er_alloc.h: large allocations of the host code (internal): malloc, with the advice that the block's
 * whole 2 MiB pages be huge pages where the kernel takes advice (Linux: MADV_HUGEPAGE; the translation
 * unit must define _DEFAULT_SOURCE before its first include to see it).  A large array touched once,
 * such as the bounds' per-element arrays or a matrix copy, then costs one page fault per 2 MiB instead
 * of one per 4 KiB.  Advice only: its failure, or its absence, changes nothing but the time.  Free
 * with free(). */
#ifndef ER_ALLOC_H
#define ER_ALLOC_H

#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>

static inline void *er_big_alloc(size_t bytes)
{
    void *p = malloc(bytes ? bytes : 1);
#ifdef MADV_HUGEPAGE
    const uintptr_t hp = (uintptr_t)2 << 20;
    if (p && bytes >= 2 * hp) {
        uintptr_t a = ((uintptr_t)p + hp - 1) & ~(hp - 1), e = ((uintptr_t)p + bytes) & ~(hp - 1);
        if (e > a) (void)madvise((void *)a, e - a, MADV_HUGEPAGE);
    }
#endif
    return p;
}

#endif /* ER_ALLOC_H */
