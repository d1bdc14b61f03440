/* er_alloc.c: large allocations of the host code and the cache of freed large blocks (er_alloc.h). */
#define _DEFAULT_SOURCE /* MADV_HUGEPAGE */
#include "er_alloc.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#if defined(__GLIBC__)
#include <malloc.h> /* malloc_usable_size: the cache needs a freed block's size */
#define ER_ALLOC_CACHE 1
#endif

static void *fresh(size_t bytes)
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

#ifdef ER_ALLOC_CACHE
/* smaller blocks: malloc and free as they are.  64 KiB, not 1 MiB as first: a check of 256 x 256 x 256
 * took 6.2 ms with 1 MiB and 3.4 ms with 64 KiB in a process running it again and again (volta; normal
 * 4.1 -> 1.7 ms), its arrays of a few hundred KiB having been glibc's, which gave their pages back and
 * took fresh ones each time (docs/benchmarks.md) */
#define CACHE_MIN ((size_t)1 << 16)
#define CACHE_SLOTS 64

static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;
static void *slot_p[CACHE_SLOTS];
static size_t slot_n[CACHE_SLOTS];
static size_t cached;    /* bytes held in the cache */
static size_t live;      /* bytes of the large blocks er_big_alloc handed out and er_big_free has not had */
static size_t peak;      /* the most `live` has been */
static size_t cache_cap; /* a quarter of the physical memory, or 0 (EXACTREF_ALLOC_CACHE=0: off) */
static int cache_cap_set;

static size_t cap_locked(void)
{
    if (!cache_cap_set) {
        const char *e = getenv("EXACTREF_ALLOC_CACHE");
        long pages = sysconf(_SC_PHYS_PAGES), psz = sysconf(_SC_PAGESIZE);
        cache_cap = pages > 0 && psz > 0 ? (size_t)pages / 4 * (size_t)psz : (size_t)1 << 30;
        if (e && e[0] == '0' && e[1] == 0) cache_cap = 0;
        cache_cap_set = 1;
    }
    return cache_cap;
}

void *er_big_alloc(size_t bytes)
{
    if (bytes < CACHE_MIN) {
        /* not from the cache; counted live where its usable size makes er_big_free take it */
        void *q = fresh(bytes);
        size_t n = q ? malloc_usable_size(q) : 0;
        if (n >= CACHE_MIN) {
            pthread_mutex_lock(&cache_lock);
            live += n;
            if (live > peak) peak = live;
            pthread_mutex_unlock(&cache_lock);
        }
        return q;
    }
    void *p = NULL, *drop[CACHE_SLOTS];
    int nd = 0, best = -1;
    pthread_mutex_lock(&cache_lock);
    for (int s = 0; s < CACHE_SLOTS; s++)
        if (slot_p[s] && slot_n[s] >= bytes && slot_n[s] - bytes <= bytes / 8 && (best < 0 || slot_n[s] < slot_n[best]))
            best = s;
    if (best >= 0) {
        p = slot_p[best];
        cached -= slot_n[best];
        live += slot_n[best];
        slot_p[best] = NULL;
    }
    pthread_mutex_unlock(&cache_lock);
    if (p) return p;
    /* no block fits: a new one (its pages untouched yet), then cached ones go, largest first, until
     * the live blocks and the cache together are within the most that was ever live (so the cache
     * never adds to a peak) */
    p = fresh(bytes);
    if (!p) return NULL;
    size_t n = malloc_usable_size(p);
    pthread_mutex_lock(&cache_lock);
    live += n;
    if (live > peak) peak = live;
    while (cached > 0 && live + cached > peak) {
        int big = -1;
        for (int s = 0; s < CACHE_SLOTS; s++)
            if (slot_p[s] && (big < 0 || slot_n[s] > slot_n[big])) big = s;
        drop[nd++] = slot_p[big];
        cached -= slot_n[big];
        slot_p[big] = NULL;
    }
    pthread_mutex_unlock(&cache_lock);
    for (int d = 0; d < nd; d++) free(drop[d]);
    return p;
}

void er_big_free(void *p)
{
    if (!p) return;
    size_t n = malloc_usable_size(p);
    if (n >= CACHE_MIN) {
        pthread_mutex_lock(&cache_lock);
        size_t cap = cap_locked();
        live = live >= n ? live - n : 0;
        for (int s = 0; s < CACHE_SLOTS && cached + n <= cap; s++)
            if (!slot_p[s]) {
                slot_p[s] = p;
                slot_n[s] = n;
                cached += n;
                p = NULL;
                break;
            }
        pthread_mutex_unlock(&cache_lock);
    }
    free(p); /* NULL where cached */
}

void er_big_stats(size_t *live_bytes, size_t *cached_bytes, size_t *peak_bytes)
{
    pthread_mutex_lock(&cache_lock);
    *live_bytes = live;
    *cached_bytes = cached;
    *peak_bytes = peak;
    pthread_mutex_unlock(&cache_lock);
}
#else
void *er_big_alloc(size_t bytes) { return fresh(bytes); }
void er_big_free(void *p) { free(p); }
void er_big_stats(size_t *live_bytes, size_t *cached_bytes, size_t *peak_bytes)
{
    *live_bytes = *cached_bytes = *peak_bytes = 0;
}
#endif
