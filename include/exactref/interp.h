/* interp.h: the interpreter layer: run CUDA Tile IR (cuda_tile dialect) kernels on the host, bit-exactly. */
#ifndef EXACTREF_INTERP_H
#define EXACTREF_INTERP_H

#include <stddef.h>
#include "exactref/export.h"
#include <stdint.h>

#include "exactref/status.h"
#include "exactref/report.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * A module parsed from the MLIR text form (docs/interp.md lists the syntax, every supported operation
 * and its semantics).  The library never prints: every message goes to the caller's buffer.
 */
typedef struct er_interp_module er_interp_module;
typedef struct er_interp_prepared er_interp_prepared;

/* Refusal kinds (the seed's four), and ER_INTERP_OK for a launch that ran. */
#define ER_INTERP_OK 0
#define ER_INTERP_UNSUPPORTED 1 /* interp.unsupported_op: raised by the pre-check only, before anything runs */
#define ER_INTERP_UB 2          /* interp.ub: undefined behaviour the kernel reached */
#define ER_INTERP_BAD_LAUNCH 3  /* interp.bad_launch: the launch does not fit the kernel */
#define ER_INTERP_INTERNAL 4    /* interp.internal: a defect of the interpreter (or out of memory) */
#define ER_INTERP_UNDECIDED 5   /* interp.undecided: bounds mode only: a value that must be decided (an integer,
                                   pointer, mask, index, loop bound or branch condition) depends on which
                                   correct device ran the kernel */

/* "ok", "interp.unsupported_op", "interp.ub", "interp.bad_launch", "interp.internal", "interp.undecided". */
ER_API const char *er_interp_kind_name(int kind);

/* The default step limit: iterations of all for and loop bodies of one launch together (a loop that
 * never ends is stopped within seconds). */
#define ER_INTERP_DEFAULT_STEP_LIMIT (INT64_C(1) << 24)

/* The default work limit: operations executed in one launch, all blocks and iterations together, each
 * block counting one more (a grid too large to run is refused before it starts). */
#define ER_INTERP_DEFAULT_WORK_LIMIT (INT64_C(1) << 28)

/* Element format of a pointer parameter whose pointee is i1 (stored one byte, 0 or 1). */
#define ER_INTERP_FMT_I1 1000

/*
 * Parse the text (len bytes; it need not be NUL-terminated) of a module.  Accepted: a cuda_tile.module
 * (optionally inside a builtin `module { ... }`), or bare entry/global ops.  filename is used in messages
 * ("file:line:column: expected ..."); NULL gives "<input>".  ER_EINVAL on a parse error.
 */
ER_API er_status er_interp_parse(const char *text, size_t len, const char *filename, er_interp_module **out,
                          char *msg, size_t msg_size);
ER_API void er_interp_free(er_interp_module *m);

/* The entries of a module, in source order. */
ER_API int er_interp_kernel_count(const er_interp_module *m);
ER_API const char *er_interp_kernel_name(const er_interp_module *m, int i);

/* A parameter of an entry, as a launch binds it. */
#define ER_INTERP_PARAM_POINTER 1 /* tile<ptr<E>>: a buffer; format is E's */
#define ER_INTERP_PARAM_SCALAR 2  /* tile<E>: a number; format is E's (i1: ER_INTERP_FMT_I1, i4: -4) */
#define ER_INTERP_PARAM_OTHER 3   /* token, tensor_view, ...: no launch can pass it */
typedef struct er_interp_param {
    int kind;
    int format;
    char name[64]; /* the SSA name without '%' */
} er_interp_param;

/* The number of parameters of entry `kernel` (-1 if there is no such entry), and parameter i. */
ER_API int er_interp_param_count(const er_interp_module *m, const char *kernel);
ER_API er_status er_interp_param_get(const er_interp_module *m, const char *kernel, int i, er_interp_param *p);

/*
 * The pre-check: the first instruction or format of entry `kernel` (NULL: of every entry) that the
 * interpreter does not model, as the refusal will say it ("file:line:col: op 'exp' with rounding<approx>
 * is not modelled"), into msg; returns 1 when there is one, 0 when everything is modelled, -1 when
 * there is no such kernel.
 */
ER_API int er_interp_first_unsupported(const er_interp_module *m, const char *kernel, char *msg, size_t msg_size);

/* A buffer bound to a pointer parameter: format must be the parameter's pointee format; data holds
 * nbytes bytes of patterns (storage_bytes each, f4E2M1FN packed two per byte, element 2i in the low
 * nibble).  The run modifies data in place; stored is set to 1 when a store reached the buffer.  After a
 * refusal the contents are unspecified (the command writes nothing then). */
typedef struct er_interp_buffer {
    int format;
    void *data;
    size_t nbytes;
    int stored;
} er_interp_buffer;

/* One launch. */
typedef struct er_interp_launch {
    int grid[3];                  /* blocks per axis; missing axes 1 (0 is taken as 1) */
    er_interp_buffer *buffers;    /* one per pointer parameter, in parameter order */
    size_t nbuffers;
    const uint64_t *scalars;      /* one per scalar parameter, in order: the pattern of its type */
    size_t nscalars;
    int ub_checks;                /* 1: refuse undefined behaviour; 0: undefined lanes read NaN or 0 */
    int64_t step_limit;           /* 0: ER_INTERP_DEFAULT_STEP_LIMIT */
    char *prints;                 /* print_tko output is appended here (NUL-terminated; may be NULL) */
    size_t prints_size;
    int kind;                     /* out: ER_INTERP_OK or the refusal's kind */
    int64_t steps;                /* out: loop iterations run */
    int64_t work_limit;           /* 0: ER_INTERP_DEFAULT_WORK_LIMIT */
    int64_t work;                 /* out: operations executed, plus one per block */
    /* Buffers no parameter names (cuTile's list-of-arrays parameters: a table of addresses points into
     * them).  Buffer i of `buffers` lives at the address (i + 1) * 2^40, and extra buffer j at
     * (nbuffers + j + 1) * 2^40, just after them; the module's globals follow.  stored comes back set
     * as for the others.  NULL / 0: none. */
    er_interp_buffer *extra;
    size_t nextra;
} er_interp_launch;

/* Initialise a launch: grid 1x1x1, no buffers, ub_checks on, the default step and work limits. */
ER_API void er_interp_launch_init(er_interp_launch *l);

/*
 * Run entry `kernel` over l->grid, blocks one after another, x fastest.  Returns ER_OK when the launch
 * ran to the end; otherwise l->kind says the refusal's kind and msg names the instruction and its
 * line:column.  Status: ER_EUNSUPPORTED (unsupported_op), ER_EINVAL (ub, bad_launch), ER_ENOMEM or
 * ER_EDEVICE (internal).
 */
ER_API er_status er_interp_kernel(const er_interp_module *m, const char *kernel, er_interp_launch *l, char *msg,
                           size_t msg_size);

/* The prepared form: the kernel found and pre-checked once and fixed to a grid (nothing is lowered or
 * compiled: each run interprets the module's operations); run it many times
 * (l->grid is ignored by er_interp_run: the prepared grid is used).  The module must outlive it. */
ER_API er_status er_interp_prepare(const er_interp_module *m, const char *kernel, const int grid[3],
                            er_interp_prepared **out, char *msg, size_t msg_size);
ER_API er_status er_interp_run(er_interp_prepared *p, er_interp_launch *l, char *msg, size_t msg_size);
ER_API void er_interp_prepared_free(er_interp_prepared *p);

/* ---- Bounds mode (docs/interp.md, "Bounds mode"): what every correct device can store. ---- */

/* The approximate instructions whose error can be overridden (er_interp_bounds_opts.ulps). */
#define ER_INTERP_AX_EXP2 0  /* exp2 (any rounding: ex2.approx) */
#define ER_INTERP_AX_EXP 1   /* exp with rounding<approx> or <full> */
#define ER_INTERP_AX_DIV 2   /* divf with rounding<approx> or <full> */
#define ER_INTERP_AX_RSQRT 3 /* rsqrt with rounding<approx> */
#define ER_INTERP_AX_SQRT 4  /* sqrt with rounding<approx> */
#define ER_INTERP_AX_TANH 5  /* tanh with rounding<approx> or <full> */
#define ER_INTERP_AX_COUNT 6

typedef struct er_interp_bounds_opts {
    const char *standard; /* mmaf / mmaf_scaled: a standard `exactref check --standard` takes; NULL: "normal".
                             mmaf with fast_acc always takes "hopper-fp8" */
    double ulps[ER_INTERP_AX_COUNT]; /* < 0: the documented default of the device instruction; >= 0: the
                                        maximum error in ulps of the result's format */
} er_interp_bounds_opts;

/* standard NULL, every ulps -1 (the documented defaults). */
ER_API void er_interp_bounds_opts_init(er_interp_bounds_opts *o);
/* "exp2", "exp", "divf", "rsqrt", "sqrt", "tanh" to ER_INTERP_AX_*; -1 for any other name. */
ER_API int er_interp_bounds_op_index(const char *name);

/* The enclosures of one bounds-mode launch: per buffer, per element. */
typedef struct er_interp_bounds er_interp_bounds;

/* Flags of an element (er_interp_bounds_get). */
#define ER_INTERP_MAY_NAN 1
#define ER_INTERP_MAY_PINF 2
#define ER_INTERP_MAY_NINF 4

/*
 * Run entry `kernel` in bounds mode: the same parser, pre-check (which accepts rounding<approx>,
 * rounding<full> and fast_acc here) and refusals as er_interp_kernel, plus ER_INTERP_UNDECIDED
 * (ER_EINVAL).  The launch's buffers receive the interpreter's own run (one legal device's output);
 * *out receives, for every buffer, the lowest and highest value each element can hold on any correct
 * device (options o, NULL: defaults).  Free *out with er_interp_bounds_free.
 */
ER_API er_status er_interp_kernel_bounds(const er_interp_module *m, const char *kernel, er_interp_launch *l,
                                         const er_interp_bounds_opts *o, er_interp_bounds **out, char *msg,
                                         size_t msg_size);
ER_API void er_interp_bounds_free(er_interp_bounds *b);
/* The number of buffers: the launch's buffers, then its extra buffers (a list's arrays: buffer nbuffers + j). */
ER_API size_t er_interp_bounds_buffers(const er_interp_bounds *b);
/*
 * Buffer i: its format and element count; for a float buffer lo[e] <= every value element e can hold
 * <= hi[e] (binary64, values of the format or infinities) and flags[e] (ER_INTERP_MAY_*); for an
 * integer buffer lo, hi and flags are NULL (its values are decided: the launch's buffer holds them).
 * Any pointer may be NULL.
 */
ER_API er_status er_interp_bounds_get(const er_interp_bounds *b, size_t i, int *format, int64_t *count,
                                      const double **lo, const double **hi, const unsigned char **flags);
/*
 * covers(device buffer i), scored as `exactref check` scores: device holds buffer i as a device stored
 * it (the format's patterns, count elements, raw bytes as the launch's buffer); the report (report.h)
 * takes the shape ndim (1 to 3; 1 is read as one row) x shape, rounded being the interpreter's own run;
 * outside_index (may be NULL) the first outside_cap outside elements.  An integer buffer is covered
 * where it equals the decided value.
 */
ER_API er_status er_interp_bounds_report(er_interp_bounds *b, size_t i, const void *device, size_t nbytes, int ndim,
                                         const int64_t *shape, int64_t *outside_index, int64_t outside_cap,
                                         er_check_report *rep, char *msg, size_t msg_size);
/* Buffer i's bounds as er_bounds (report.h's er_bounds_covers reads them), kept until b is freed;
 * NULL for an integer buffer. */
ER_API const er_bounds *er_interp_bounds_as_bounds(er_interp_bounds *b, size_t i);

#ifdef __cplusplus
}
#endif
#endif /* EXACTREF_INTERP_H */
