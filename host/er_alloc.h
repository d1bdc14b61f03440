/* er_alloc.h: large allocations of the host code (internal), host/er_alloc.c.
 *
 * er_big_alloc is malloc with the advice that the block's whole 2 MiB pages be huge pages where the
 * kernel takes advice (Linux: MADV_HUGEPAGE): a large array touched once, such as the bounds'
 * per-element arrays or a matrix copy, then costs one page fault per 2 MiB instead of one per 4 KiB.
 * Advice only: its failure, or its absence, changes nothing but the time.
 *
 * er_big_free returns such a block (or any malloc'd block; NULL is ignored) to a cache of freed large
 * blocks, from which a later er_big_alloc of about the same size (at most 1/8 more) takes it without
 * new pages: the kernel zeroes every fresh page, which costs as much as a tenth of a whole check
 * (docs/benchmarks.md).  The cache never raises the peak: an allocation it cannot serve first frees
 * cached blocks until the live large blocks, the cached ones and the new one together are within the
 * most that was ever live, which is what the same calls reach without the cache (the reused blocks'
 * slack of at most 1/8 aside).  It holds at most a quarter of the physical memory, and nothing when
 * EXACTREF_ALLOC_CACHE=0 is set in the environment.  Every block er_big_alloc gives is released with
 * er_big_free (the count of live bytes relies on it). */
#ifndef ER_ALLOC_H
#define ER_ALLOC_H

#include <stddef.h>

void *er_big_alloc(size_t bytes);
void er_big_free(void *p);
/* The cache's counts, for the tests: bytes of live large blocks, bytes cached, the most ever live (all
 * 0 where the platform has no cache). */
void er_big_stats(size_t *live_bytes, size_t *cached_bytes, size_t *peak_bytes);

#endif /* ER_ALLOC_H */
