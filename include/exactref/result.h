/* result.h: the Result of a matrix product: the rounded answer, its enclosures, and proven tolerances
 * per standard. */
#ifndef EXACTREF_RESULT_H
#define EXACTREF_RESULT_H

#include <stddef.h>
#include <stdint.h>

#include "exactref/mma.h"
#include "exactref/status.h"
#include "exactref/export.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Standards: the implementations a tolerance covers (docs/proofs/). ---- */
#define ER_STD_NORMAL 0    /* products rounded to compute, added in index order or 2/4 interleaved lanes */
#define ER_STD_ANY_ORDER 1 /* any summation tree, with or without fused multiply-add, that does not overflow */
#define ER_STD_ENGINE 2    /* a matrix engine (tensor core) model: block fused dot-add per instruction */
#define ER_STD_BLOCKED 3   /* a declared structure: k-tiles of bk products, split-k, any order within a tile */
#define ER_STD_SCALED 4    /* scaled products (scaled.h): partials of bk products, scaled, accumulated in f32 */
#define ER_STD_FLASH 5     /* attention only (docs/proofs/attention.md): online softmax over key blocks */

typedef struct er_standard {
    int kind;       /* ER_STD_* */
    char name[48];  /* "normal", "any_order", "hopper", ... */
    /* matrix-engine models (docs/accumulation-models.md): */
    int k;          /* products per instruction */
    int F;          /* fractional bits kept when terms are aligned to the largest exponent */
    int out_p;      /* fraction bits of the normalised accumulator (23: f32; 13: e8m13) */
    int out_round;  /* normalisation: ER_RND_ZERO or ER_RND_NEAREST_EVEN */
    int promote;    /* products between promotions into an f32 accumulator (0: never) */
    int group;      /* products summed exactly before alignment (blackwell-mx fp4: 16), else 1 */
    int floor_terms;/* CDNA3 arithmetic: the product sum and C floored (toward -inf) when aligned */
    int tf32_inputs;/* f32 operands are truncated to tf32 before the products (the tf32 models) */
    int acc_fmt;    /* the accumulator D: ER_FMT_F32, or ER_FMT_F16 (f16 accumulators: to nearest even,
                       out_p 10); any other value is read as ER_FMT_F32 */
    int F2;         /* 0, or a second alignment of the product sum at F2 fraction bits (CDNA3: 31) */
    int two_stage;  /* the products summed in two stages, even and odd (CDNA3 fp8/bf8) */
    /* ER_STD_BLOCKED (docs/proofs/blocked.md): products per k-tile, the split-k factor; the
     * accumulator is acc_fmt (-1: the options' compute).  ER_STD_SCALED (docs/proofs/scaled.md): bk
     * products per partial; the partial's engine model in the fields above when k > 0, else f32; split
     * 1: order=before (the scales applied to the operands, rounded to f32, before the sum).
     * ER_STD_FLASH: bk the declared key block (0: any partition), acc_fmt P's format before P.V (-1: the
     * value's format, -2: kept in compute, else ER_FMT_*), split the scores' and P.V's matmul standard
     * (ER_STD_ANY_ORDER, ER_STD_NORMAL, or ER_STD_ENGINE with the model's parameters in the engine fields
     * above: k, F, out_p, out_round, F2, two_stage, tf32_inputs; mma=<name> stays in name), group the
     * blocks' order (1: index order, 2: reverse, order=reverse) */
    int bk;
    int split;
} er_standard;

/*
 * Parse a standard: "normal", "any_order", a model name or alias (er_standard_list; `exactref check
 * --standard list` prints them), or a user model "engine:k=16,F=25,p=23,round=zero,promote=0,group=1,
 * floor=0,tf32=0,d=f32,F2=0,stages=1" (any subset of keys after "engine:", those are the defaults).
 * The facts behind each model: docs/accumulation-models.md; the bound's proof: docs/proofs/engines.md.
 * A declared structure: "blocked:bk=64,split=4,acc=f32" (bk required; split 1 and acc the options'
 * compute by default): docs/proofs/blocked.md.  Scaled products (scaled.h): "scaled:bk=128" (partials
 * in f32, any order), "scaled:bk=128,partial=hopper-fp8" (a tensor-core model), or
 * "scaled:bk=128,order=before" (scales applied before the sum, torch's CPU _scaled_mm):
 * docs/proofs/scaled.md.  Attention's "flash[:block=N][,mma=normal|any_order|<engine model>][,p=value|compute|<format>][,order=index|reverse]"
 * (online softmax over key blocks; a matmul refuses it): docs/proofs/attention.md.
 */
ER_API er_status er_standard_parse(const char *spec, er_standard *std, char *msg, size_t msg_size);
/* The names er_standard_parse knows (aliases included), space separated. */
ER_API const char *er_standard_names(void);

/* One named matrix-engine standard: its parameters, the instructions it models, its other names. */
typedef struct er_standard_info {
    const char *name;    /* "hopper" */
    const char *family;  /* "Hopper wgmma f16/bf16 -> f32" */
    const char *aliases; /* other names, space separated ("" when none) */
    er_standard std;     /* what er_standard_parse(name) gives */
} er_standard_info;

/* The named engine standards, in a fixed order: *count entries (static storage). */
ER_API const er_standard_info *er_standard_list(int *count);

/*
 * The table `exactref check --standard list` prints (one line per standard: name, family, k, F, p,
 * rounding, promotion, aliases; normal and any_order first), written into buf as snprintf does:
 * returns the length of the whole table (buf holds it when the length is below size).
 */
ER_API size_t er_standard_table(char *buf, size_t size);

/*
 * The standard a model means for these input formats: "cdna3" on 8-bit float operands (f8E4M3FNUZ,
 * f8E5M2FNUZ and the other fp8 formats) is the fp8 MFMA, cdna3-fp8 (16 products in two stages); every
 * other standard is itself.  er_result_bounds applies this.
 */
ER_API er_standard er_standard_for_inputs(const er_standard *std, int a_format, int b_format);

/* Options of tolerance(), finite_range(), may_be() and covers(). */
typedef struct er_tol_opts {
    int compute;        /* the accumulation format; -1: f32 for inputs narrower than f32, else the
                           wider input format */
    double ulps;        /* library functions within ulps of compute; < 0 (er_tol_opts_init's default): each
                           function's documented default (docs/ops/README.md); matmul calls none */
    int flush_to_zero;  /* subnormal values of compute may be read or produced as zero */
    er_standard standard;
} er_tol_opts;

/* normal, default compute, no flush. */
ER_API void er_tol_opts_init(er_tol_opts *o);

/*
 * Per element bounds, arrays of batch*m*n in row-major (b, i, j) order (owned by the result):
 *   radius:     proven bound on |value before the final rounding - exact|: inf where none
 *   tolerance:  max |finite output - rounded| over the covered outputs,
 *               rounded up; inf: no finite bound; NaN: the reference is not finite
 *   low, high:  finite_range() as patterns of the output format, valid where has_range is 1
 *   may_pinf, may_ninf, may_nan: may_be("+inf"), may_be("-inf"), may_be("nan")
 */
typedef struct er_bounds {
    int64_t count;
    double *radius;
    double *tolerance;
    uint64_t *low, *high;
    unsigned char *has_range;
    unsigned char *may_pinf, *may_ninf, *may_nan;
} er_bounds;

/* ---- The Result of one operation. ---- */
typedef struct er_result er_result;

/*
 * Run the operation described by args (er_mma's arguments; args->d gives the output format and shape
 * and receives the rounded answer: it must be given) and keep what the Result needs.  The operand
 * tensors must stay valid while the result is used (they are not copied).
 */
ER_API er_status er_result_create(const er_mma_args *args, er_result **out, char *msg, size_t msg_size);
ER_API void er_result_free(er_result *r);

/*
 * Results as inputs: like er_result_create, with earlier results passed in place of A, B
 * and/or C (NULL: args' tensor).  The new result reads their rounded values (its rounded and exact
 * are the exact answer on those, rounded once) and its bounds cover every value the earlier bounds
 * allow under from_opts (NULL: normal): a stored value within tolerance of rounded; where the earlier
 * result allows an infinity or NaN, or has no finite bound, the new bounds leave no bound there.  Its
 * normal() works on the earlier results' normal().  The earlier results must outlive the new one.
 * Block-scaled products: ER_EUNSUPPORTED.
 */
ER_API er_status er_result_create_from(const er_mma_args *args, er_result *a_from, er_result *b_from, er_result *c_from,
                                const er_tol_opts *from_opts, er_result **out, char *msg, size_t msg_size);

ER_API const char *er_result_op(const er_result *r);        /* "matmul" */
ER_API const char *er_result_guarantee(const er_result *r); /* "correctly_rounded", or "exact" for integers */
ER_API const er_tensor *er_result_rounded(const er_result *r);
/* exact: certified binary64 enclosures of the exact values (lo <= exact <= hi, equal or adjacent; odd:
 * the round-to-odd binary64), written into f64 tensors of the output's shape (each may be NULL). */
ER_API er_status er_result_exact(er_result *r, er_tensor *lo, er_tensor *hi, er_tensor *odd, char *msg, size_t msg_size);
ER_API const er_mma_stats *er_result_stats(const er_result *r);
/* The boundaries: the operation's required rounding steps.  For matmul one: "accumulate",
 * of kind "accumulate", applying to "dot" (the sum of each element's products, rounded once). */
typedef struct er_boundary {
    const char *name, *kind, *description, *applies_to;
} er_boundary;
/* The boundaries of r: *list points at `count` entries (static storage). */
ER_API int er_result_boundaries(const er_result *r, const er_boundary **list);

/*
 * backward(grad) for matmul: the two outputs by name, "grad_A" = grad B^T and "grad_B" = A^T grad, each
 * a Result of its own (exact, rounded once, with its own tolerances), on the same inputs.  grad is
 * m x n (a float format); the outputs take the formats grad_a_format and grad_b_format (-1: A's and
 * B's formats) and r's rounding.  Not defined for mmai and block-scaled products (ER_EUNSUPPORTED).
 * The new results own their outputs; free them with er_result_free (grad must outlive them).
 */
ER_API er_status er_result_backward(er_result *r, const er_tensor *grad, int grad_a_format, int grad_b_format,
                             er_result **grad_a, er_result **grad_b, char *msg, size_t msg_size);
/* The name of a result's output: "out" for an operation's result, "grad_A" or "grad_B" for backward's. */
ER_API const char *er_result_output_name(const er_result *r);

/*
 * Views: the same result with dimensions i and j swapped, or its elements in row-major
 * order in a new 2-D or 3-D shape.  Moving elements rounds nothing: rounded, the bounds and normal()
 * are the base result's, moved.  A view has no backward of its own.  The base must outlive the view;
 * free views with er_result_free.  reshape needs a contiguous rounded tensor (ER_EUNSUPPORTED else).
 */
ER_API er_status er_result_transpose(er_result *r, int i, int j, er_result **out, char *msg, size_t msg_size);
ER_API er_status er_result_reshape(er_result *r, int ndim, const int64_t *shape, er_result **out, char *msg, size_t msg_size);

/* The accumulation format the default compute option resolves to for this result. */
ER_API int er_result_default_compute(const er_result *r);

/*
 * The progress hook of r's later computations (the bounds; NULL: none), replacing the one its
 * er_mma_args gave er_result_create (which reports the exact reference's computation).  See
 * er_progress_fn (mma.h) for when it is called.  A view reports through its base's hook.
 */
ER_API void er_result_set_progress(er_result *r, er_progress_fn fn, void *ctx);

/* The bounds for options o (computed once per distinct options and kept). */
ER_API er_status er_result_bounds(er_result *r, const er_tol_opts *o, const er_bounds **out, char *msg, size_t msg_size);

/*
 * may_be(kind) for the whole tensor at once, from the operands' bounds summaries (interval layer),
 * without per-element bounds: *answer = 0 when the summaries prove that no element can be `kind`
 * ("+inf", "-inf" or "nan") for any implementation under o, -1 when they do not decide (then use
 * er_result_bounds' per-element may_* arrays).
 */
ER_API er_status er_result_may_be_any(er_result *r, const er_tol_opts *o, const char *kind, int *answer, char *msg,
                               size_t msg_size);

/*
 * covers(output): covered[e] = 1 where a correct implementation (under o) can produce output's
 * element e: a finite value within finite_range, or an infinity or NaN that may_be allows.  output has
 * the result's output format and shape (any strides).  *outside receives the number not covered.
 */
ER_API er_status er_result_covers(er_result *r, const er_tol_opts *o, const er_tensor *output, unsigned char *covered,
                           int64_t *outside, char *msg, size_t msg_size);

/*
 * normal(compute, flush_to_zero): the output of normal accumulation in index order, emulated to the
 * bit (each product rounded to compute, added in index order after C, each sum rounded to compute to
 * nearest even; a new partial sum where the next addition would overflow; then rounded to the output
 * format as rounded is).  out: a tensor of the output format and shape.
 */
ER_API er_status er_result_normal(er_result *r, int compute, int flush_to_zero, er_tensor *out, char *msg, size_t msg_size);

#ifdef __cplusplus
}
#endif
#endif /* EXACTREF_RESULT_H */
