/* ops.h: operations beyond matmul (softmax, activations, linear, norms, attention, quantization): one
 * generic Result, er_opres, with the exact answer rounded once and proven per-element bounds. */
#ifndef EXACTREF_OPS_H
#define EXACTREF_OPS_H

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

/*
 * An operation's tensor: like er_tensor (mma.h) with up to ER_OP_MAXDIM dimensions (attention takes
 * (B, H, S, D)).  Element (i0, ..., i_{ndim-1}) is the pattern of `format` at data + (sum of i_d *
 * strides[d]) * storage_bytes; strides are in elements and may be any non-negative values.  ndim 0 is
 * a scalar (one element).
 */
#define ER_OP_MAXDIM 8
typedef struct er_optensor {
    int format;
    int ndim;
    int64_t shape[ER_OP_MAXDIM];
    int64_t strides[ER_OP_MAXDIM];
    void *data;
} er_optensor;

/* A contiguous row-major tensor of ndim (0 .. ER_OP_MAXDIM) dimensions over data. */
ER_API er_optensor er_optensor_make(int format, int ndim, const int64_t *shape, void *data);
/* The same elements as a 2-D or 3-D er_tensor, as an operation's tensor. */
ER_API er_optensor er_optensor_of(const er_tensor *t);
/* The number of elements (the product of the shape; 1 for a scalar; INT64_MAX where it overflows). */
ER_API int64_t er_optensor_count(const er_optensor *t);

/* The result of one operation (any operation of the table but matmul, whose result is er_result). */
typedef struct er_opres er_opres;

/*
 * Run operation `op` (a name of the table: er_op_names) on its inputs and keep what its Result needs.
 *   inputs:  ninputs tensors in the operation's order (docs/ops/README.md); an entry may be NULL for an
 *            absent optional input (bias, weight, mask).  They must stay valid while the result is
 *            used (they are not copied).
 *   options: "key=value,key=value" (NULL or "" for none): the operation's options under torch's names
 *            (dim=-1, eps=1e-5, approximate=tanh, ...) and out=<format> (the output format; default the
 *            first input's).  An unknown key, a bad value or a missing input is refused with a message
 *            naming it.
 * The outputs are the exact values rounded once to the output format (er_opres_rounded).
 */
ER_API er_status er_op_call(const char *op, int ninputs, const er_tensor *const *inputs, const char *options,
                            er_opres **out, char *msg, size_t msg_size);
/* er_op_call with inputs of any number of dimensions. */
ER_API er_status er_op_call_nd(const char *op, int ninputs, const er_optensor *const *inputs, const char *options,
                               er_opres **out, char *msg, size_t msg_size);

/*
 * Results as inputs: an input of er_op_call_from is an array, or the stored output of an earlier result
 * (matmul's er_result, or output `output` of an er_opres), read as the implementation under test stored
 * it: within that result's bounds.
 */
typedef struct er_opinput {
    const er_optensor *tensor; /* an array (all three NULL: an absent optional input) */
    er_result *result;         /* or matmul's result: its rounded output */
    er_opres *opres;           /* or an operation's result: its output `output` */
    int output;
} er_opinput;

/*
 * er_op_call_nd with earlier results as inputs: the new result's rounded and exact are the exact answer
 * on the earlier results' rounded outputs, and its bounds cover every stored value the earlier bounds
 * allow under from_opts (NULL: er_tol_opts_init's): a value within tolerance of rounded; where the
 * earlier result allows an infinity or NaN, or has no finite bound, the new bounds claim none there.
 * The earlier results must outlive the new one.  Operations that do not take results as inputs
 * (linear: use matmul's er_result_create_from) refuse them with ER_EUNSUPPORTED.
 */
ER_API er_status er_op_call_from(const char *op, int ninputs, const er_opinput *inputs, const er_tol_opts *from_opts,
                                 const char *options, er_opres **out, char *msg, size_t msg_size);

/* The operations of the table, space separated ("softmax log_softmax ..."). */
ER_API const char *er_op_names(void);

ER_API void er_opres_free(er_opres *r);
ER_API const char *er_opres_op(const er_opres *r); /* "softmax" */
/* "correctly_rounded": each output element is the exact value rounded once to the output format */
ER_API const char *er_opres_guarantee(const er_opres *r);
ER_API int er_opres_outputs(const er_opres *r);                   /* the number of outputs */
ER_API const char *er_opres_output_name(const er_opres *r, int i); /* "out", "lse", ...; NULL out of range */
/* The index of the output named `name`, or -1. */
ER_API int er_opres_output_index(const er_opres *r, const char *name);
/* Output i's rounded answer: a contiguous tensor of the output's format and shape (owned by r), or NULL. */
ER_API const er_optensor *er_opres_rounded(const er_opres *r, int i);
/* The number of elements of output i (0 for an i out of range). */
ER_API int64_t er_opres_count(const er_opres *r, int i);
/*
 * exact: certified binary64 enclosures of output i's exact values, lo[e] <= exact <= hi[e] for every
 * element e in row-major order (count elements; lo or hi may be NULL).  A NaN or infinite exact value
 * is given as itself in both.
 */
ER_API er_status er_opres_exact(const er_opres *r, int i, double *lo, double *hi, char *msg, size_t msg_size);
/* The boundaries: the operation's required rounding steps (static storage). */
ER_API int er_opres_boundaries(const er_opres *r, const er_boundary **list);
/* The compute format the default compute option (-1) resolves to: f32 for inputs narrower than f32,
 * else the widest input format. */
ER_API int er_opres_default_compute(const er_opres *r);

/*
 * The bounds of output i under the options o (NULL: er_tol_opts_init's), computed once per distinct
 * options and kept until r is freed: per element, radius, tolerance, finite range and may_be exactly
 * as er_result_bounds gives them for matmul (result.h: er_bounds).  o->standard: "normal" or
 * "any_order" (and what each operation adds, docs/ops/); another is refused with a message naming the
 * operation and the standards it takes.  o->ulps < 0: each library function's documented default
 * (docs/ops/README.md); >= 0: that many ulps of compute for every library function.
 */
ER_API er_status er_opres_bounds(er_opres *r, int i, const er_tol_opts *o, const er_bounds **out, char *msg,
                                 size_t msg_size);
/*
 * covers(output) for output i: covered[e] = 1 where a correct implementation (under o) can produce
 * output's element e (er_bounds_covers' rule).  output has output i's format and shape (any strides);
 * *outside receives the number not covered.  covered or outside may be NULL.  Bounds not kept yet are made a
 * block of rows at a time beside the judgment and not kept, where the operation allows (the same
 * decisions; docs/api/ops.md); er_opres_bounds keeps them.
 */
ER_API er_status er_opres_covers(er_opres *r, int i, const er_tol_opts *o, const er_optensor *output,
                                 unsigned char *covered, int64_t *outside, char *msg, size_t msg_size);
/*
 * The check's report (report.h) of output against output i under o: the same scoring as the matmul
 * check (er_check_report_score), over the output seen as a 2-D (rows x last dimension) or 3-D tensor.
 * outside_index: as er_check_report_compute's.
 */
ER_API er_status er_opres_report(er_opres *r, int i, const er_tol_opts *o, const er_optensor *output,
                                 int64_t *outside_index, int64_t outside_cap, er_check_report *rep, char *msg,
                                 size_t msg_size);

/*
 * normal(): output i of the operation's textbook implementation in index order on these inputs, emulated
 * exactly: the inputs read into compute (-1: er_opres_default_compute), every step rounded once to
 * nearest even in compute, the library functions (exp, log, tanh, erf, sqrt, the divisions) correctly
 * rounded in compute, subnormal results of compute flushed to zero (sign kept) and subnormal inputs read
 * as zero when flush_to_zero is set, then rounded once to the output format.  The order of each operation
 * is the one its `normal` standard describes (docs/ops/README.md, "normal()").  out_bits: count elements
 * of output i's format (its storage size each), row-major.  An operation without an emulation, or a
 * compute format it does not emulate, is refused with ER_EUNSUPPORTED.
 */
ER_API er_status er_opres_normal(er_opres *r, int i, int compute, int flush_to_zero, void *out_bits, char *msg,
                                 size_t msg_size);

/*
 * Views: output i of r with its elements moved, as a new one-output result: er_opres_reshape puts them in
 * row-major order in shape (ndim dimensions, the same count), er_opres_transpose swaps dimensions d0 and d1.
 * Moving elements rounds nothing: the view's rounded, exact, bounds (under any options), covers, report
 * and normal are output i's, moved the same way, and the view is an input of later operations
 * (er_op_call_from) like any result.  It has r's operation name and boundaries.  r must outlive the view;
 * free it with er_opres_free.
 */
ER_API er_status er_opres_reshape(er_opres *r, int i, int ndim, const int64_t *shape, er_opres **out, char *msg,
                                  size_t msg_size);
ER_API er_status er_opres_transpose(er_opres *r, int i, int d0, int d1, er_opres **out, char *msg, size_t msg_size);

#ifdef __cplusplus
}
#endif
#endif /* EXACTREF_OPS_H */
