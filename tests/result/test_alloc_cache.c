/* test_alloc_cache.c: the cache of freed large blocks (host/er_alloc.c) keeps its promises: a
 * freed block comes back for a request of about its size (at most 1/8 smaller) and not for one much
 * smaller; the live and cached bytes together never exceed the most ever live (so the cache adds
 * nothing to a peak), checked after every step of a random sequence of allocations and releases
 * (seed from EXACTREF_SEED, printed), with the cache's count of live bytes checked against the
 * test's own sum of the live blocks' usable sizes; EXACTREF_ALLOC_CACHE=0 (read once, so checked in a child run by
 * ctest: test_alloc_cache_off) caches nothing.  Blocks are written in full, as the library does. */
#include <check.h>
#if defined(__GLIBC__)
#include <malloc.h> /* malloc_usable_size: the test's own count of live bytes */
#endif
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "er_test.h"
#include "host/er_alloc.h"

static uint64_t seed;
static uint64_t below(uint64_t *r, uint64_t n) { return er_test_rand(r) % n; }
#define MiB ((size_t)1 << 20)

static void invariant(const char *where, int step)
{
    size_t live, cached, peak;
    er_big_stats(&live, &cached, &peak);
    ck_assert_msg(live + cached <= peak, "%s, step %d: live %zu + cached %zu > peak %zu (seed 0x%llx)", where, step,
                  live, cached, peak, (unsigned long long)seed);
}

START_TEST(reuse)
{
    int off = getenv("EXACTREF_ALLOC_CACHE") && !strcmp(getenv("EXACTREF_ALLOC_CACHE"), "0");
    void *a = er_big_alloc(8 * MiB);
    ck_assert(a != NULL);
    memset(a, 1, 8 * MiB);
    er_big_free(a);
    invariant("after one free", 0);
    void *b = er_big_alloc(8 * MiB - 4096); /* within 1/8: the same block, where the cache is on */
    ck_assert(b != NULL);
    memset(b, 2, 8 * MiB - 4096);
    size_t live, cached, peak;
    er_big_stats(&live, &cached, &peak);
    if (off) ck_assert_msg(cached == 0, "EXACTREF_ALLOC_CACHE=0 cached %zu bytes", cached);
    else ck_assert_msg(b == a, "a freed 8 MiB block did not serve a request of 8 MiB - 4 KiB");
    er_big_free(b);
    void *c = er_big_alloc(2 * MiB); /* much smaller: never the 8 MiB block */
    ck_assert(c != NULL && (off || c != a));
    memset(c, 3, 2 * MiB);
    invariant("after a smaller request", 0);
    er_big_free(c);
}
END_TEST

START_TEST(never_above_peak)
{
    uint64_t st = seed;
    enum { N = 12 };
    void *p[N] = {0};
    size_t sz[N] = {0};
    size_t live0, cached0, peak0;
    er_big_stats(&live0, &cached0, &peak0);
    for (int step = 0; step < 400; step++) {
        int i = (int)below(&st, N);
        if (p[i]) {
            er_big_free(p[i]);
            p[i] = NULL;
        } else {
            /* sizes from 1 to 12 MiB, often repeated (the library's arrays come in a few sizes), and
             * from 64 KiB to 960 KiB (the arrays of a small check; the cache takes blocks from 64 KiB) */
            const size_t KiB64 = (size_t)64 << 10;
            const uint64_t kind = below(&st, 4);
            sz[i] = kind == 0   ? (size_t)(1 + below(&st, 15)) * KiB64
                    : kind == 1 ? (size_t)(1 + below(&st, 12)) * MiB
                                : (size_t)(1 + below(&st, 3)) * 4 * MiB;
            p[i] = er_big_alloc(sz[i]);
            ck_assert(p[i] != NULL);
            memset(p[i], step & 0xff, sz[i]);
        }
        invariant("random sequence", step);
#if defined(__GLIBC__)
        {
            /* the library's count of live bytes against the test's own (the blocks' usable sizes):
             * the invariant above is only as good as that count */
            size_t mine = 0, live, cached, peak;
            for (int t = 0; t < N; t++)
                if (p[t]) mine += malloc_usable_size(p[t]);
            er_big_stats(&live, &cached, &peak);
            ck_assert_msg(live == live0 + mine, "step %d: the cache counts %zu live bytes, the test %zu (seed 0x%llx)", step,
                          live - live0, mine, (unsigned long long)seed);
        }
#endif
    }
    for (int i = 0; i < N; i++) er_big_free(p[i]);
    invariant("all freed", 400);
}
END_TEST

int main(void)
{
    seed = er_test_seed("test_alloc_cache");
    Suite *s = suite_create("alloc_cache");
    TCase *tc = tcase_create("cache");
    tcase_add_test(tc, reuse);
    tcase_add_test(tc, never_above_peak);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int nf = srunner_ntests_failed(sr);
    srunner_free(sr);
    return nf ? 1 : 0;
}
