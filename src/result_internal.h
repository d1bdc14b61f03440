/* result_internal.h: the Result object's fields, shared by src/result.c (its data: life, views,
 * normal()), src/tolerance.c (its bounds and their cache), src/report.c (covers and the keys),
 * src/result_from.c (results as inputs) and src/check.c. Not installed. */
#ifndef ER_RESULT_INTERNAL_H
#define ER_RESULT_INTERNAL_H

#include <string.h>

#include "exactref/result.h"
#include "er_report.h"
#include "host/er_alloc.h"

#define ER_CACHE 8

struct er_result {
    er_mma_args args;
    er_tensor d;
    er_tensor a_view, b_view; /* backward: the transposed operands the args point at */
    void *owned;              /* backward: the output storage this result owns */
    void *scaled;             /* er_scaled_result_create's plan (src/scaled.c), freed with the result */
    void (*scaled_free)(void *); /* its release, set with it (the data calls no later concern) */
    const char *output_name;
    er_result *from[3];       /* results passed as A, B, C (results as inputs), or NULL */
    er_tol_opts from_opts;    /* the options their bounds are taken with */
    double *slack[3];         /* per element of A, B, C: how far a stored value may be (inf: unbounded) */
    er_result *base;          /* a view (reshape, transpose): the result it shows, and */
    int64_t *map;             /* for each element of the view, its index in base's row-major order */
    er_mma_stats stats;
    double *keep_s;           /* the reference's S = A'B' (its fast path's), reused by the bounds, or NULL */
    int is_int;
    int64_t count;
    int ncache;
    struct {
        er_tol_opts o;
        int compute;
        er_bounds b;
        er_bkeys *keys; /* b's compact keys, made by the first covers (src/report.c) */
    } cache[ER_CACHE];
};

/* For the check (src/check.c): r's problem (er_mma's arguments, args->d its rounded answer), and
 * whether r is a Result of arrays (not a view, not made from earlier results) that holds no bounds for
 * o yet (a tiled check then costs less memory than its one pass). */
const er_mma_args *er_result_args_(const er_result *r);
int er_result_tileable_(const er_result *r, const er_tol_opts *o);
/* Free the reference's S that r keeps for its bounds (keep_s; its later bounds form S again, the same
 * bits): a tiled check of r does not read it, and it weighs 8 bytes per output element. */
void er_result_drop_keep_(er_result *r);
/* A Result of args whose rounded answer args->d already holds, exactly (written by er_check's tiles,
 * each the exact product of its views rounded once: the whole answer's bits), with those stats; no
 * reference is run.  Like er_result_create's otherwise (no S kept: its bounds form S themselves). */
er_status er_result_adopt_(const er_mma_args *args, const er_mma_stats *stats, er_result **out);

/* Free the arrays of bounds kept in a result's cache (the data's own release: src/result.c frees the
 * cache with it, src/tolerance.c evicts with it). */
static inline void er_result_bounds_free_(er_bounds *b)
{
    er_big_free(b->radius);
    er_big_free(b->tolerance);
    er_big_free(b->low);
    er_big_free(b->high);
    er_big_free(b->has_range);
    er_big_free(b->may_pinf);
    er_big_free(b->may_ninf);
    er_big_free(b->may_nan);
    memset(b, 0, sizeof *b);
}

#endif
