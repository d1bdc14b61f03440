/* check.h: the check as a library function: an output judged element by element against the exact
 * product, tile by tile in bounded memory, into one mergeable report. */
#ifndef EXACTREF_CHECK_H
#define EXACTREF_CHECK_H

#include <stddef.h>
#include <stdint.h>

#include "exactref/export.h"
#include "exactref/mma.h"
#include "exactref/report.h"
#include "exactref/result.h"
#include "exactref/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* How far the check is: what it is doing ("computing the exact reference", "bounding every element")
 * and the fraction of the whole check done, in [0, 1] (-1: not known).  Called from the calling thread
 * between tiles and from the library's worker threads within one (never two calls at once). */
typedef void (*er_check_progress_fn)(void *ctx, const char *what, double fraction);
/* A sentence worth telling the user (er_mma_stats.note: why a device was not used, ...), once each
 * time it changes. */
typedef void (*er_check_note_fn)(void *ctx, const char *note);
/* Rows row0 .. row0+rows-1 of matrix `matrix` of the batch (0 for a 2-D output) are done with: every
 * tile of that band of rows is scored.  The command gives back the mapped pages of those rows there. */
typedef void (*er_check_band_fn)(void *ctx, int64_t matrix, int64_t row0, int64_t rows);
/* The tile of rows row0 .. row0+rows-1 and columns col0 .. col0+cols-1 of matrix `matrix` is scored
 * (its Result freed).  The command gives back the mapped pages of B's columns there. */
typedef void (*er_check_tile_fn)(void *ctx, int64_t matrix, int64_t row0, int64_t rows, int64_t col0, int64_t cols);

/* The check's choices and hooks (er_check_opts_init: automatic tiles, no hooks, nothing listed). */
typedef struct er_check_opts {
    /* rows of a tile: 0 automatic (by memory: the rule of docs/cli.md, "Memory: the check in tiles"),
     * -1 one pass, R > 0 at most R rows; tile_cols with R > 0: at most that many columns (0: all) */
    int64_t tile_rows, tile_cols;
    /* with automatic tiles: 0 the rule's budget (about the bytes of the inputs and output, twice
     * that past 16 MiB of them, at most 256 MiB: past that more tiles, so that the memory a check
     * holds does not grow with the files); B > 0 a tile of about B bytes (Python: the arrays' bytes) */
    int64_t tile_bytes;
    er_check_progress_fn progress;
    void *progress_ctx;
    er_check_note_fn note;
    void *note_ctx;
    er_check_band_fn band_done;
    void *band_ctx;
    er_check_tile_fn tile_done;
    void *tile_ctx;
    int64_t *outside_index;  /* may be NULL: receives the first min(outside, outside_cap) outside flat indices */
    int64_t outside_cap;
    unsigned char *covered;  /* may be NULL: receives covers() of every element (row-major, 1 covered) */
    /* NULL, or: *result receives the Result of the whole product (free it with er_result_free), whose
     * rounded answer is written into args->d (given, of the output's format and shape, and outliving
     * *result): in one pass its bounds for the options are kept (--save-bounds: tile_rows -1); in
     * tiles, the tiles' rounded answers are written there and the Result is made of them (no second
     * reference), with no bounds yet */
    er_result **result;
} er_check_opts;

/* What the check did. */
typedef struct er_check_info {
    er_mma_stats stats;        /* the tiles' statistics together (threads: the most; backend: a device where one ran) */
    int default_compute;       /* the accumulation format that compute -1 meant */
    double seconds_reference;  /* wall time spent computing the exact reference */
    int64_t tile_rows, tile_cols; /* the tiles as run; tile_rows 0: one pass */
} er_check_info;

ER_API void er_check_opts_init(er_check_opts *co);

/*
 * The tiles er_check would use for this problem and output under co (NULL: automatic): *tile_rows 0
 * for one pass, else the rows and columns of a tile.  The problem's shapes are read as er_mma reads
 * them; an inconsistent problem plans one pass (er_check then says what is wrong).
 */
ER_API void er_check_plan(const er_mma_args *args, const er_tensor *output, const er_check_opts *co,
                          int64_t *tile_rows, int64_t *tile_cols);

/*
 * Judge output, an implementation's answer to the product args describes (er_mma's arguments; args->d
 * is read only with co->result, the other outputs and args->stats never), under the options o (NULL:
 * normal): the report of er_check_report_compute, the same bytes, narrower_format included.  For
 * each tile of the output (er_check_plan) a Result of its own on views of A's rows and B's columns
 * (and C, the scales, the output), its bounds, covers and scoring, the tiles merged into one report
 * (er_check_report_merge_columns, er_check_report_merge); a tile's Result and bounds are freed before
 * the next, so the bounds of the whole output never exist at once.  An error in a tile is reported by
 * the one-pass check (its message names the whole output's indices).  info (may be NULL) receives
 * what the check did.  The operand and output tensors must stay valid during the call.
 */
ER_API er_status er_check(const er_mma_args *args, const er_tol_opts *o, const er_tensor *output,
                          const er_check_opts *co, er_check_report *rep, er_check_info *info, char *msg,
                          size_t msg_size);

/*
 * er_check for an existing Result r (made by er_result_create on arrays, or by er_result_backward):
 * where r has at least 2^20 output elements (any size when co->tile_rows is not 0), er_check_plan
 * gives tiles for r's problem and r holds no bounds for o yet, the tiles above, each a Result of its
 * own (r's rounded answer is not read, and the reference's products r keeps for its bounds are freed:
 * later bounds of r form them again, the same bits); *tiled = 1.  Otherwise (one pass, a view, a
 * result made from earlier results, bounds already kept) nothing is done and *tiled = 0: the caller
 * scores r itself (er_check_report_compute, er_result_covers).  co->result must be NULL.
 */
ER_API er_status er_check_result(er_result *r, const er_tol_opts *o, const er_tensor *output,
                                 const er_check_opts *co, er_check_report *rep, er_check_info *info, int *tiled,
                                 char *msg, size_t msg_size);

#ifdef __cplusplus
}
#endif
#endif /* EXACTREF_CHECK_H */
