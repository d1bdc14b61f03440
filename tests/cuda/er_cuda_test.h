/* er_cuda_test.h: helpers of the CUDA tests (the batch against the C path, first mismatch reported). */
#ifndef ER_CUDA_TEST_H
#define ER_CUDA_TEST_H

#include <check.h>
#include <stdio.h>
#include <stdlib.h>

#include "er_batch.h" /* src/: the cross-backend batch */
#include "er_cuda.h"
#include "er_test.h"

/* Per wide source format and job: random patterns on top of the special ones. */
#define ER_CUDA_TEST_PER_WIDE 256

/* A batch and the C path's answers; er_cuda_batch_free releases it. */
typedef struct er_cuda_batch {
    size_t n;
    uint32_t *spec;
    uint64_t *src;
    uint64_t *want;
    uint32_t *want_flags;
    uint64_t *got;
    uint32_t *got_flags;
} er_cuda_batch;

static inline void er_cuda_batch_free(er_cuda_batch *b)
{
    free(b->spec);
    free(b->src);
    free(b->want);
    free(b->want_flags);
    free(b->got);
    free(b->got_flags);
    b->n = 0;
}

static inline void er_cuda_batch_make(er_cuda_batch *b, const char *test)
{
    uint64_t seed = er_test_seed(test);
    b->n = er_batch_build(seed, ER_CUDA_TEST_PER_WIDE, &b->spec, &b->src);
    ck_assert_msg(b->n > 0, "er_batch_build: out of memory");
    b->want = (uint64_t *)malloc(b->n * sizeof *b->want);
    b->want_flags = (uint32_t *)malloc(b->n * sizeof *b->want_flags);
    b->got = (uint64_t *)malloc(b->n * sizeof *b->got);
    b->got_flags = (uint32_t *)malloc(b->n * sizeof *b->got_flags);
    ck_assert_msg(b->want && b->want_flags && b->got && b->got_flags, "out of memory");
    er_batch_reference(b->spec, b->src, b->want, b->want_flags, b->n);
    /* Poison the outputs so that an element left unwritten shows as a mismatch. */
    for (size_t i = 0; i < b->n; i++) {
        b->got[i] = ~b->want[i];
        b->got_flags[i] = ~b->want_flags[i];
    }
    printf("%s: %zu conversions\n", test, b->n);
    fflush(stdout);
}

/* Every pattern and flags word of `got` equals the C path's; the first mismatch is reported. */
static inline void er_cuda_batch_compare(const er_cuda_batch *b, const char *who)
{
    size_t bad = 0, first = 0;
    for (size_t i = 0; i < b->n; i++) {
        if (b->got[i] != b->want[i] || b->got_flags[i] != b->want_flags[i]) {
            if (!bad)
                first = i;
            bad++;
        }
    }
    if (bad) {
        uint32_t s = b->spec[first];
        int from = (int)(s & 0xff), to = (int)((s >> 8) & 0xff), dir = (int)((s >> 16) & 0xff);
        unsigned opts = (s >> 24) & 0xff;
        ck_abort_msg("%s: %zu of %zu conversions differ from the C path; first at [%zu]: %s -> %s, %s, "
                     "opts 0x%x, src 0x%llx: got 0x%llx flags 0x%x, C gives 0x%llx flags 0x%x",
                     who, bad, b->n, first, er_format_name(from), er_format_name(to),
                     er_rounding_name(dir), opts, (unsigned long long)b->src[first],
                     (unsigned long long)b->got[first], (unsigned)b->got_flags[first],
                     (unsigned long long)b->want[first], (unsigned)b->want_flags[first]);
    }
}

/* Run a one-suite program; exit status 0 when every test passed. */
static inline int er_cuda_run_suite(Suite *s)
{
    SRunner *sr = srunner_create(s);
    int failed;
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

#endif
