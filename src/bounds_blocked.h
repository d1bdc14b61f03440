/* bounds_blocked.h: the blocked standard (a declared k-tile, split-k and accumulator): its parser and
 * its per-element bounds (docs/proofs/blocked.md). */
#ifndef ER_BOUNDS_BLOCKED_H
#define ER_BOUNDS_BLOCKED_H

#include <stddef.h>

#include "exactref/result.h"
#include "host/er_bjob.h"

/* "blocked:bk=64,split=4,acc=f32" into s (bk required; split 1 and acc -1, the options' compute, by
 * default).  er_standard_parse hands every spelling that starts with "blocked" here. */
er_status er_standard_parse_blocked(const char *spec, er_standard *s, char *msg, size_t msg_size);

/* What the element loop needs beyond the batch: the declared structure and the threads. */
typedef struct er_blocked_ctx {
    int64_t bk, split;
    int acc;     /* the accumulator's format (the batch's compute) */
    int threads; /* 0: all cores */
    char *msg;
    size_t msg_size;
} er_blocked_ctx;

/* Check the options and fill ctx: ER_OK, or ER_EUNSUPPORTED with a sentence (flush, results as inputs). */
er_status er_blocked_begin(er_blocked_ctx *ctx, const er_standard *std, int compute, int ftz, int has_slack,
                           int threads, char *msg, size_t msg_size);

/* One batch prepared as any_order's (A', B', C and the result; par's u, eta, max_c are the
 * accumulator's): every element's bounds into out from index e0 on, on the CPU (an er_bjob_sink). */
int er_blocked_sink(void *ctx, const er_bjob *job, er_bounds *out, int64_t e0);

#endif /* ER_BOUNDS_BLOCKED_H */
