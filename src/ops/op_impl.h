/* op_impl.h (internal): what an operation file of src/ops/ fills (er_opdef) and the helpers every
 * operation shares (options, outputs, rounding decisions, certified math, bounds, threads). */
#ifndef ER_OP_IMPL_H
#define ER_OP_IMPL_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "../er_op.h"
#include "exactref/core/er_bounds.h"
#include "exactref/ops.h"

#define ER_OP_MAXIN 8  /* inputs of one operation */
#define ER_OP_MAXOUT 4 /* outputs of one operation */
#define ER_OP_MAXOPT 24 /* options of one call */

/* One option of a call ("key=value"); used is set when the operation read it. */
typedef struct er_opopt {
    char key[32];
    char val[96];
    int used;
} er_opopt;

/* The standards an operation takes (er_opdef.standards): bits of the standard kinds. */
#define ER_OPSTD_NORMAL (1u << ER_STD_NORMAL)
#define ER_OPSTD_ANY (1u << ER_STD_ANY_ORDER)

/*
 * What an operation's bounds function receives: the options resolved.
 *   compute: the compute format; p: its precision (significand bits with the hidden one); u = 2^-p;
 *   eta: its least subnormal spacing 2^(emin - p + 1) (the absolute error of a rounding below 2^emin);
 *   tiny = 2^emin its least normal; max_c its largest finite value; ftz: flush_to_zero.
 */
typedef struct er_openv {
    const er_tol_opts *o;
    int compute, p, emin;
    double u, eta, tiny, max_c;
    int ftz;
} er_openv;

/* Per element flags a bounds function may set (else 0). */
#define ER_OPB_NONFINITE 1u /* the exact value is infinite or NaN: every implementation outputs rounded's */
#define ER_OPB_UNCERTAIN 2u /* no bound: every value and special possible (with NONFINITE) */
/* no value (an empty reduction's 0/0, e.g. an attention row no key takes part in): exactly +0, -0 and NaN
 * are allowed, and -inf where lo[e] == -inf, +inf where hi[e] == +inf (lo, hi: nothing else) */
#define ER_OPB_EMPTY 4u

typedef struct er_opdef {
    const char *name;             /* "softmax" */
    int min_inputs, max_inputs;   /* the inputs it takes (optional ones at the end, may be NULL) */
    const char *const *input_names;  /* max_inputs names, for messages */
    int noutputs;
    const char *const *output_names; /* noutputs names ("out") */
    const er_boundary *boundaries;
    int nboundaries;
    unsigned standards;           /* ER_OPSTD_* bits (and kinds the op adds) */
    const char *standard_names;   /* "normal, any_order": for the refusal message */
    /*
     * create: read the options (er_ops_opt_*), validate the inputs, allocate the outputs
     * (er_ops_alloc_output) and fill each output's rounded patterns and exact enclosures (r->xlo,
     * r->xhi).  State for the bounds may go in r->state (freed by free_state).  The generic code
     * refuses unknown options after create.
     */
    er_status (*create)(er_opres *r, char *msg, size_t msg_size);
    /*
     * bounds: for output i, per element e (row-major), an enclosure [lo[e], hi[e]] of every value a
     * correct implementation under env->o can hold BEFORE the final rounding to the output format
     * (values in compute; outward), and flags[e] (ER_OPB_*; arrays are zeroed before the call).  The
     * generic code makes er_bounds from them (er_b_finish_lh) and caches them per options.
     */
    er_status (*bounds)(er_opres *r, int i, const er_openv *env, double *lo, double *hi, unsigned char *flags,
                        char *msg, size_t msg_size);
    void (*free_state)(void *state);
    /*
     * normal (optional; NULL: none): output i of the
     * textbook implementation in index order, emulated exactly in env->compute (every step rounded once to
     * compute, library functions correctly rounded, flush-to-zero as env->ftz), then rounded to the output
     * format: bits[e] its pattern per element (row-major).
     */
    er_status (*normal)(er_opres *r, int i, const er_openv *env, uint64_t *bits, char *msg, size_t msg_size);
} er_opdef;

/* One kept set of bounds (per output and options). */
typedef struct er_opbounds_entry {
    er_tol_opts o;
    int output;
    er_bounds b;
    struct er_opbounds_entry *next;
} er_opbounds_entry;

/*
 * A thread's scratch that a rows function keeps between its calls (er_ops_rows_fn, op_util.c): a memo of
 * exp and a buffer of doubles, made by the first call that asks; zeroed before the first call, freed by
 * er_ops_scratch_free after the last.  er_ops_scratch_buf: at least n doubles (NULL: out of memory);
 * er_ops_scratch_expc: the memo (NULL: none, out of memory: callers then evaluate exp itself).
 */
typedef struct er_ops_scratch {
    struct er_ops_expc *ec;
    double *buf;
    size_t cap;
    int ec_made;
} er_ops_scratch;
double *er_ops_scratch_buf(er_ops_scratch *sc, size_t n);
struct er_ops_expc *er_ops_scratch_expc(er_ops_scratch *sc);
void er_ops_scratch_free(er_ops_scratch *sc);

/*
 * The bounds of rows [r0, r1) of output i of an operation whose rows are independent: element e's at
 * lo[e - off], hi[e - off], flags[e - off] (flags zeroed by the caller), the values its er_opdef's bounds
 * gives there; sc the calling thread's scratch.  er_ops_rows_bounds (op_util.c) runs one over rows
 * [0, rows) on threads (len: the elements of one row, for the threads' share): an er_opdef's bounds in
 * one line.
 */
typedef er_status (*er_ops_rows_fn)(er_opres *r, int i, const er_openv *env, int64_t r0, int64_t r1, int64_t off,
                                    er_ops_scratch *sc, double *lo, double *hi, unsigned char *flags, char *msg,
                                    size_t msg_size);
er_status er_ops_rows_bounds(er_opres *r, int i, const er_openv *env, int64_t rows, int64_t len, er_ops_rows_fn fn,
                             double *lo, double *hi, unsigned char *flags, char *msg, size_t msg_size);

/* The generic result (opres.c); op files read and fill the fields marked so. */
struct er_opres {
    const er_opdef *def;
    int ninputs;
    er_optensor in[ER_OP_MAXIN];    /* the inputs (copies of the descriptors) */
    int has_in[ER_OP_MAXIN];        /* 0 where the input was absent (NULL) */
    er_opopt opt[ER_OP_MAXOPT];
    int nopt;
    /* outputs: filled by create through er_ops_alloc_output and the op's computation */
    int nout;
    er_optensor out[ER_OP_MAXOUT];  /* contiguous, owned */
    double *xlo[ER_OP_MAXOUT], *xhi[ER_OP_MAXOUT]; /* exact enclosures, owned */
    er_tensor view[ER_OP_MAXOUT];   /* out[i] as a 2-D/3-D er_tensor (for the report and matmul) */
    int default_compute;            /* set by the generic code from the inputs' formats; create may change it */
    void *state;                    /* the op's own, freed by def->free_state */
    er_opbounds_entry *bounds;      /* the cache */
    void *bkeys[ER_OP_MAXOUT];      /* unused (reserved for the covers keys) */
    /*
     * Set by create where the operation makes its whole er_bounds itself (linear: matmul's), else NULL:
     * output i's bounds under o filled into out (its arrays allocated, count elements), in place of
     * def->bounds and er_b_finish_lh.
     */
    er_status (*bounds_full)(er_opres *r, int i, const er_tol_opts *o, er_bounds *out, char *msg, size_t msg_size);
    /* results as inputs (er_op_call_from): per input, the slack of each element (row-major; infinity
     * where the earlier result allows a special or has no bound), or NULL for an array */
    double *slack[ER_OP_MAXIN];
    int takes_from; /* set by create: the operation's bounds read slack (else results are refused) */
    /* results as inputs (er_op_call_from): per input the earlier result it reads (NULL: an array), for
     * normal(), which works on the earlier results' normal() */
    er_opres *from_opres[ER_OP_MAXIN];
    int from_output[ER_OP_MAXIN];
    er_result *from_result[ER_OP_MAXIN];
    /*
     * Set by create where output i's bounds are made a row of the operation at a time, each row's output
     * elements contiguous (NULL: they are not): the bounds of rows [r0, r1), range_unit[i] (> 0) output
     * elements each (er_ops_rows_fn).  covers and the report then make the bounds, finish, cover and score
     * a block of rows at a time (opres.c, "the fused check") without the whole er_bounds arrays.
     */
    er_ops_rows_fn bounds_rows;
    int64_t range_unit[ER_OP_MAXOUT];
};

/* Input i's element e (value v) as the implementation may have stored it: [v - slack, v + slack]
 * outward ([v, v] for an array); 0, or 1 where the slack is infinite (no bound: lo, hi infinite). */
int er_ops_in_iv(const er_opres *r, int i, int64_t e, double v, double *lo, double *hi);

/* ---- an operation's state ---- */
/* free() each of the n blocks (NULL ones too), then the state. */
static inline void er_ops_free_blocks(void *state, void *const *blocks, size_t n)
{
    for (size_t q = 0; q < n; q++) free(blocks[q]);
    free(state);
}
/* Defines `static void fn(void *p)`, an er_opdef free function for a state of type T whose malloc'd
 * blocks are the fields listed (s->a, s->b, ...; s the state): each freed, then the state. */
#define ER_OPS_STATE_FREE(fn, T, ...)                                                                   \
    static void fn(void *p)                                                                            \
    {                                                                                                  \
        T *s = (T *)p;                                                                                 \
        if (s) er_ops_free_blocks(s, (void *const[]){__VA_ARGS__}, sizeof((void *[]){__VA_ARGS__}) / sizeof(void *)); \
    }

/* ---- options (op_util.c) ---- */
/* The value of option key (marked used), or NULL when not given. */
const char *er_ops_opt(er_opres *r, const char *key);
/* Integer / real / format / boolean options with a default; a bad value: ER_EINVAL naming the key. */
er_status er_ops_opt_int(er_opres *r, const char *key, int64_t def, int64_t *v, char *msg, size_t msg_size);
er_status er_ops_opt_double(er_opres *r, const char *key, double def, double *v, char *msg, size_t msg_size);
er_status er_ops_opt_format(er_opres *r, const char *key, int def, int *fmt, char *msg, size_t msg_size);
er_status er_ops_opt_bool(er_opres *r, const char *key, int def, int *v, char *msg, size_t msg_size);
/* One of the words of `choices` (space separated): *index its position; default def_index. */
er_status er_ops_opt_choice(er_opres *r, const char *key, const char *choices, int def_index, int *index,
                            char *msg, size_t msg_size);
/* A dimension option (dim=-1): negative counts from the end; checked against ndim. */
er_status er_ops_opt_dim(er_opres *r, const char *key, int def, int ndim, int *dim, char *msg, size_t msg_size);

/* ---- tensors (op_util.c) ---- */
/* The values of t as binary64 (exact for every float format up to f64), row-major; malloc'd. */
er_status er_ops_values(const er_optensor *t, double **out, char *msg, size_t msg_size);
/* Allocate output i (its format and shape; name from def), its exact enclosure arrays; contiguous. */
er_status er_ops_alloc_output(er_opres *r, int i, int format, int ndim, const int64_t *shape, char *msg,
                              size_t msg_size);
/* Store pattern bits at element e of a contiguous tensor. */
void er_ops_store(er_optensor *t, int64_t e, uint64_t bits);
/* The pattern of element e (row-major flat index) of any tensor (strides read). */
uint64_t er_ops_load(const er_optensor *t, int64_t e);
/*
 * Broadcasting (torch's rule): the shape of a and b broadcast together (ndim the larger), or
 * ER_EINVAL naming the dimension.  er_ops_bcast_index: the flat index in t of the flat index e of
 * the broadcast shape.
 */
er_status er_ops_broadcast(const er_optensor *a, const er_optensor *b, int *ndim, int64_t *shape, char *msg,
                           size_t msg_size);
int64_t er_ops_bcast_index(const er_optensor *t, int ndim, const int64_t *shape, int64_t e);
/* A tensor split along dim: outer x len x inner (row-major). */
void er_ops_split_dim(const er_optensor *t, int dim, int64_t *outer, int64_t *len, int64_t *inner);

/* ---- rounding decisions (op_util.c) ---- */
/* 1 and *bits = RN_fmt(lo) when RN_fmt(lo) == RN_fmt(hi) (the rounding is decided), else 0. */
int er_ops_decide(int fmt, double lo, double hi, uint64_t *bits);
/* The pattern of x rounded to nearest even into fmt (x binary64). */
uint64_t er_ops_round(int fmt, double x);

/* ---- fast paths (op_fast.c): bf16, f16 and f32 without the generic converter; the same results ---- */
/* 1 for the formats with fast paths (bf16, f16, f32). */
int er_ops_fast_format(int fmt);
/* er_ops_round's pattern (x rounded to nearest even into fmt); any format (others: the converter). */
uint64_t er_ops_rn_bits(int fmt, double x);
/* The binary64 value of pattern bits of fmt (exact; NaN only tested with isnan); any format. */
double er_ops_bits_value(int fmt, uint64_t bits);
/* er_b_finish_lh(c, rbits, lo, hi, rad, nonfinite, uncertain, 0, 0, o): its common case (a finite range
 * of a fast format, rounding to nearest even) computed here, every other case by it. */
void er_ops_finish_fast(const er_bpar *c, uint64_t rbits, double lo, double hi, double rad, int nonfinite,
                        int uncertain, er_bel *o);

/* er_ops_rn_bits and er_ops_bits_value inline for the per-element loops: bf16 and f32 here (bf16 in its
 * normal range: the binary64 significand rounded to 8 bits in place, to nearest even, as er_ops_rn_bits
 * does), every other format and case by the functions; the same patterns and values. */
ER_FN uint64_t er_ops_rn_bits_inl(int fmt, double x)
{
    if (fmt == ER_FMT_F32 && x == x) { /* the conversion's own rounding to nearest */
        float f = (float)x;
        uint32_t u;
        __builtin_memcpy(&u, &f, 4);
        return u;
    }
    if (fmt == ER_FMT_BF16) {
        uint64_t u = er_b_bits(x), a = u & 0x7FFFFFFFFFFFFFFFull;
        if (a >= 0x3810000000000000ull && a <= 0x47EFE00000000000ull) { /* 2^-126 <= |x| <= 0x1.fep127 */
            uint64_t r = (a + ((1ull << 44) - 1) + ((a >> 45) & 1)) >> 45; /* 1 + 11 + 7 bits, rounded */
            return ((u >> 63) << 15) | (((r >> 7) - 1023 + 127) << 7) | (r & 0x7F);
        }
    }
    return er_ops_rn_bits(fmt, x);
}

ER_FN double er_ops_bits_value_inl(int fmt, uint64_t bits)
{
    if (fmt == ER_FMT_BF16 || fmt == ER_FMT_F32) {
        uint32_t v = fmt == ER_FMT_BF16 ? (uint32_t)(bits & 0xFFFFu) << 16 : (uint32_t)bits;
        float f;
        __builtin_memcpy(&f, &v, 4);
        return (double)f;
    }
    return er_ops_bits_value(fmt, bits);
}

/* er_ops_decide and er_ops_store inline for the reference's loops (the same decisions and stores; a
 * contiguous output of 2 or 4 storage bytes stored here, others by the function) */
ER_FN int er_ops_decide_inl(int fmt, double lo, double hi, uint64_t *bits)
{
    uint64_t a = er_ops_rn_bits_inl(fmt, lo), b = er_ops_rn_bits_inl(fmt, hi);
    if (a != b) return 0; /* +0 and -0 are different patterns: lo <= 0 <= hi then straddles, undecided */
    *bits = a;
    return 1;
}

ER_FN void er_ops_store_inl(er_optensor *t, int64_t e, uint64_t bits)
{
    if (t->format == ER_FMT_BF16 || t->format == ER_FMT_F16) ((uint16_t *)t->data)[e] = (uint16_t)bits;
    else if (t->format == ER_FMT_F32) ((uint32_t *)t->data)[e] = (uint32_t)bits;
    else er_ops_store(t, e, bits);
}

/* er_ops_finish_fast inline (its one definition: op_fast.c's calls this) */
ER_FN void er_ops_finish_fast_inl(const er_bpar *c, uint64_t rbits, double lo, double hi, double rad, int nonfinite,
                                  int uncertain, er_bel *o)
{
    int of = c->out_fmt;
    if (!nonfinite && !uncertain && c->dir == ER_RND_NEAREST_EVEN && c->opts == 0u && er_ops_fast_format(of) &&
        er_b_finite(rad) && lo >= -c->max_c && hi <= c->max_c && lo <= hi) {
        double rv = er_ops_bits_value_inl(of, rbits);
        uint64_t lp = er_ops_rn_bits_inl(of, lo), hp = er_ops_rn_bits_inl(of, hi);
        double lv = er_ops_bits_value_inl(of, lp), hv = er_ops_bits_value_inl(of, hp);
        if (er_b_finite(rv) && er_b_finite(lv) && er_b_finite(hv) && lv <= hv) {
            /* er_b_finish_lh's case of a finite range inside compute's and the output's finite values */
            double d1 = er_b_up(rv - lv), d2 = er_b_up(hv - rv);
            o->radius = rad;
            o->flags = ER_BF_RANGE;
            o->low = lp;
            o->high = hp;
            o->tolerance = d1 > d2 ? d1 : d2;
            if (o->tolerance < 0) o->tolerance = 0;
            return;
        }
    }
    er_b_finish_lh(c, rbits, lo, hi, rad, nonfinite, uncertain, 0, 0, o);
}

/*
 * A memo of er_ops_exp (op_fast.c) for one thread: the same enclosures, each value's computed once while
 * it stays in the table (rows of bf16/f16 inputs repeat their differences from the maximum).  NULL: no
 * memo (er_ops_exp itself).  er_ops_exp_iv_c is er_ops_exp_iv through the memo.
 */
typedef struct er_ops_expc er_ops_expc;
er_ops_expc *er_ops_expc_new(void); /* NULL when out of memory (then callers pass NULL: no memo) */
void er_ops_expc_free(er_ops_expc *c);
void er_ops_exp_c(er_ops_expc *c, double x, double *lo, double *hi);
void er_ops_exp_iv_c(er_ops_expc *c, double a, double b, double *lo, double *hi);
/* lo <= tanh(x) <= hi from the certified exp (op_fast.c; docs/proofs/ops-math.md): in place of
 * er_ops_tanh's MPFR per element (which it calls for zeros, NaN and |x| < 2^-500). */
void er_ops_tanh_fast(double x, double *lo, double *hi);
/* lo <= erf(x) <= hi from the certified exp and a positive series (op_math_erf.c; docs/proofs/ops-math.md,
 * "erf"): fast, relative width below 2^-30; MPFR for |x| < 2^-300, zeros and NaN. */
void er_ops_erf_fast(double x, double *lo, double *hi);

/* ---- bounds arithmetic (op_util.c): binary64, outward (the rounding mode is never changed) ---- */
/* a - b enclosed: [d, d] when the binary64 difference d is exact (TwoSum), else one ulp outward */
void er_ops_sub_iv(double a, double b, double *l, double *h);
double er_ops_add_dn(double a, double b);
double er_ops_add_up(double a, double b);
double er_ops_mul_dn(double a, double b);
double er_ops_mul_up(double a, double b);
double er_ops_div_dn(double a, double b);
double er_ops_div_up(double a, double b);
/*
 * A library function within ulps (>= 0) ulps of compute applied where the exact value is in [lo, hi]
 * (lo >= 0 or any sign): the interval of its possible results, outward: each end moved by
 * ulps * max(2u|v|, eta) (an ulp of compute at v is at most 2u|v| for normal v and eta below 2^emin);
 * with ftz, a result below the least normal may be 0.  ulps = 0.5 is a correctly rounded operation.
 */
void er_ops_lib_result(const er_openv *env, double ulps, double *lo, double *hi);
/* The results of rounding to nearest into compute of every value in [lo, hi] (monotone), with ftz. */
void er_ops_round_compute(const er_openv *env, double *lo, double *hi);
/*
 * The ulps of library function `fn` ("exp", "exp2", "log", "tanh", "erf", "div", "rsqrt", "sqrt") in
 * compute under o, from the exact value: o->ulps when >= 0, else the documented default
 * (docs/ops/README.md; a function not in its table: 2.5).
 */
double er_ops_ulps(const er_openv *env, const char *fn);

/* er_ops_lib_result and er_ops_round_compute inline (the same operations, for the per-element loops) */
ER_FN void er_ops_lib_result_inl(const er_openv *env, double ulps, double *lo, double *hi)
{
    double l = *lo, h = *hi;
    double two_u = 2 * env->u;
    /* |result - v| <= ulps * max(2u|v|, eta): the ends move outward by the bound at the end (the bound
     * grows with |v|, and v - bound(v) is increasing for ulps * 2u < 1) */
    double al = er_b_up(two_u * (l < 0 ? -l : l)), ah = er_b_up(two_u * (h < 0 ? -h : h));
    double el = er_b_up(ulps * er_b_up(al > env->eta ? al : env->eta));
    double eh = er_b_up(ulps * er_b_up(ah > env->eta ? ah : env->eta));
    l = er_b_down(l - el);
    h = er_b_up(h + eh);
    if (env->ftz) {
        if (l > 0 && l < env->tiny) l = 0;
        if (h < 0 && h > -env->tiny) h = 0;
    }
    *lo = l;
    *hi = h;
}

/* element e's enclosure [l, h] into lo/hi; beyond compute's largest finite value (or NaN): unbounded */
ER_FN void er_ops_put_bound(unsigned char *fl, double *lo, double *hi, int64_t e, double l, double h, double max_c)
{
    if (!(l >= -max_c && h <= max_c)) {
        fl[e] = ER_OPB_NONFINITE | ER_OPB_UNCERTAIN;
        lo[e] = -INFINITY;
        hi[e] = INFINITY;
        return;
    }
    lo[e] = l;
    hi[e] = h;
}

/* er_ops_sub_iv and er_ops_round_compute inline (the same operations, for the per-element loops; the
 * rounding into compute inline for f32 and f64 without flush_to_zero, the function otherwise) */
ER_FN void er_ops_sub_iv_inl(double a, double b, double *l, double *h)
{
    double s = a - b;
    if (!er_b_finite(s)) {
        *l = *h = s;
        return;
    }
    double nb = -b, bb = s - a, err = (a - (s - bb)) + (nb - bb);
    if (err == 0) {
        *l = *h = s;
    } else {
        *l = er_b_down(s);
        *h = er_b_up(s);
    }
}

ER_FN void er_ops_round_compute_inl(const er_openv *env, double *lo, double *hi)
{
    if (!env->ftz && env->compute == ER_FMT_F32) { /* the conversion's own rounding to nearest */
        *lo = (double)(float)*lo;
        *hi = (double)(float)*hi;
    } else if (env->ftz || env->compute != ER_FMT_F64) {
        er_ops_round_compute(env, lo, hi);
    }
}

/* ---- certified math in binary64 (op_math.c; proofs: docs/proofs/ops-math.md) ---- */
/* lo <= log(x) <= hi (MPFR at 64 bits, directed: slower than exp; x >= 0, log(0) = -inf). */
void er_ops_log(double x, double *lo, double *hi);
/* lo <= tanh(x) <= hi, lo <= erf(x) <= hi (MPFR at 64 bits, directed). */
void er_ops_tanh(double x, double *lo, double *hi);
void er_ops_erf(double x, double *lo, double *hi);
/* lo <= exp(x) <= hi (x binary64; infinities and NaN as exp's). */
void er_ops_exp(double x, double *lo, double *hi);
/* lo <= f(x) <= hi over x in [a, b] for an increasing f: [f_lo(a), f_hi(b)]. */
void er_ops_exp_iv(double a, double b, double *lo, double *hi);

/*
 * High precision (MPFR, op_math.c): a context that holds intervals [lo, hi] at `prec` bits.  Used where
 * the binary64 enclosure of an exact value straddles a rounding boundary: the op recomputes that
 * element at rising precision until er_ops_mp_decide decides it.
 */
typedef struct er_ops_mp er_ops_mp;
er_ops_mp *er_ops_mp_new(int prec, int n);   /* n interval registers 0..n-1 */
void er_ops_mp_free(er_ops_mp *m);
void er_ops_mp_set_d(er_ops_mp *m, int r, double x);          /* [x, x] */
void er_ops_mp_add(er_ops_mp *m, int r, int a, int b);        /* r = a + b */
void er_ops_mp_sub(er_ops_mp *m, int r, int a, int b);
void er_ops_mp_mul(er_ops_mp *m, int r, int a, int b);        /* any signs */
void er_ops_mp_div(er_ops_mp *m, int r, int a, int b);        /* b > 0 or b < 0 (not straddling 0) */
void er_ops_mp_exp(er_ops_mp *m, int r, int a);
void er_ops_mp_log(er_ops_mp *m, int r, int a);               /* a > 0 */
void er_ops_mp_copy(er_ops_mp *m, int r, int a);
void er_ops_mp_tanh(er_ops_mp *m, int r, int a);
void er_ops_mp_erf(er_ops_mp *m, int r, int a);
void er_ops_mp_erfc(er_ops_mp *m, int r, int a);              /* decreasing: ends swapped */
void er_ops_mp_sqrt(er_ops_mp *m, int r, int a);             /* a >= 0 */
void er_ops_mp_pi(er_ops_mp *m, int r);                       /* [pi down, pi up] */
void er_ops_mp_set_str(er_ops_mp *m, int r, const char *dec); /* a decimal constant, enclosed */
/* 1 when every value of register r rounds to the same pattern of fmt (nearest even): *bits. */
int er_ops_mp_decide(er_ops_mp *m, int r, int fmt, uint64_t *bits);
/* Register r's ends rounded outward to binary64. */
void er_ops_mp_get(er_ops_mp *m, int r, double *lo, double *hi);
/* 1 when register reg decides element e of output i (er_ops_mp_decide into its format): its pattern and
 * the register's enclosure stored (op_util.c); else 0 and nothing stored. */
int er_ops_mp_store(er_ops_mp *m, int reg, er_opres *r, int i, int64_t e);
/* The registers of the next precision prec of a rising-precision loop over `what` number idx of op name:
 * NULL with *st set where prec passed limit (the rounding not decided at prec / 2 bits) or memory ran out. */
er_ops_mp *er_ops_mp_next(const char *name, const char *what, int64_t idx, int prec, int limit, int nreg,
                          er_status *st, char *msg, size_t msg_size);
/* Element e of output 0 by rising precision: fill(ctx, m) computes its exact value into register reg of
 * nreg registers, at 128 bits and doubling until er_ops_mp_store decides it (limit as er_ops_mp_next). */
er_status er_ops_mp_element(er_opres *r, int64_t e, int nreg, int reg, int limit, void (*fill)(void *ctx, er_ops_mp *m),
                            void *ctx, char *msg, size_t msg_size);
/* er_ops_mp_store for an element a precision loop still has undecided (*und): *und cleared where stored;
 * 1 where it is left for the next precision, else 0 */
ER_FN int er_ops_mp_settle(er_ops_mp *m, int reg, er_opres *r, int i, int64_t e, unsigned char *und)
{
    if (!er_ops_mp_store(m, reg, r, i, e)) return 1;
    *und = 0;
    return 0;
}
/* Frees the calling thread's MPFR caches: a thread of er_ops_parallel calls it before it ends. */
void er_ops_mp_thread_done(void);

/* ---- the softmax family (op_softmax.c; docs/proofs/softmax.md) ---- */
/* The compute model of one finite row x[j st], j < n: the values as read (xl, xh), the differences from
 * the maximum with their rounding (dl, dh; may be NULL), exp's results within ue ulps (El, Eh), the sum
 * in index order or any tree (any) [*Sl, *Sh], and the maximum's interval [*ml, *mh]. */
/* slack: results as inputs, the slack of x[j st] at slack[j st] (NULL: none); returns 1 where a slack
 * is infinite (no bound for the row), else 0. */
int er_ops_expsum_model(const er_openv *env, int any, double ue, const double *x, const double *slack, int64_t n,
                        int64_t st, double *xl, double *xh, double *dl, double *dh, double *El, double *Eh, double *Sl,
                        double *Sh, double *ml, double *mh);

/* er_ops_expsum_model with a memo of exp (er_ops_expc; NULL: none): the same results. */
int er_ops_expsum_model_c(const er_openv *env, int any, double ue, const double *x, const double *slack, int64_t n,
                          int64_t st, double *xl, double *xh, double *dl, double *dh, double *El, double *Eh,
                          double *Sl, double *Sh, double *ml, double *mh, er_ops_expc *ec);

/* ---- threads (op_util.c) ---- */
/* the usual context of an elementwise bounds loop run by er_ops_parallel: the result (its state), the
 * environment, the enclosures and flags it fills */
typedef struct er_ops_bjob {
    er_opres *r;
    const er_openv *env;
    double *lo, *hi;
    unsigned char *fl;
} er_ops_bjob;

/* fn(ctx, i0, i1) over [0, n) split into contiguous parts on up to the machine's processors (one part
 * when n < min_per_thread * 2).  Each part's status; the first failure is returned (msg its). */
typedef er_status (*er_ops_range_fn)(void *ctx, int64_t i0, int64_t i1, char *msg, size_t msg_size);
er_status er_ops_parallel(int64_t n, int64_t min_per_thread, er_ops_range_fn fn, void *ctx, char *msg,
                          size_t msg_size);

/* ---- normal() (op_normal*.c; er_opdef.normal) ---- */
/* The environment of er_opres_bounds for the options o (compute -1: r's default compute). */
er_status er_ops_env(const er_opres *r, const er_tol_opts *o, er_openv *env, char *msg, size_t msg_size);
/* The emulations (er_opdef.normal) of the operations beyond matmul (linear's is matmul's, op_linear.c). */
er_status er_opn_unary(er_opres *r, int i, const er_openv *env, uint64_t *bits, char *msg, size_t msg_size);
er_status er_opn_binary(er_opres *r, int i, const er_openv *env, uint64_t *bits, char *msg, size_t msg_size);
er_status er_opn_softmax_family(er_opres *r, int i, const er_openv *env, uint64_t *bits, char *msg, size_t msg_size);
er_status er_opn_norm(er_opres *r, int i, const er_openv *env, uint64_t *bits, char *msg, size_t msg_size);
er_status er_opn_quantize(er_opres *r, int i, const er_openv *env, uint64_t *bits, char *msg, size_t msg_size);
er_status er_opn_attention(er_opres *r, int i, const er_openv *env, uint64_t *bits, char *msg, size_t msg_size);
er_status er_opn_softmax_backward(er_opres *r, int i, const er_openv *env, uint64_t *bits, char *msg,
                                  size_t msg_size);
er_status er_opn_norm_backward(er_opres *r, int i, const er_openv *env, uint64_t *bits, char *msg, size_t msg_size);

/* ---- the table (op_table.c) ---- */
const er_opdef *er_ops_find(const char *name);

/* er_opres through the operation interface (src/er_op.h): results as inputs, for every operation. */
void er_opres_as_op(er_opres *r, er_op *op);

/* The operations (one file each). */
extern const er_opdef er_opdef_softmax;
extern const er_opdef er_opdef_layer_norm, er_opdef_rms_norm; /* op_norm.c */
extern const er_opdef er_opdef_layer_norm_backward, er_opdef_rms_norm_backward;
extern const er_opdef er_opdef_quantize;                       /* op_quant.c */
extern const er_opdef er_opdef_softmax_backward, er_opdef_log_softmax_backward; /* op_softmax_backward.c */
extern const er_opdef er_opdef_log_softmax;
extern const er_opdef er_opdef_logsumexp;
extern const er_opdef er_opdef_add, er_opdef_mul, er_opdef_linear;
extern const er_opdef er_opdef_exp, er_opdef_relu, er_opdef_sigmoid, er_opdef_tanh, er_opdef_silu, er_opdef_gelu;
extern const er_opdef er_opdef_attention; /* op_attention.c */
extern const er_opdef er_opdef_attention_backward; /* op_attention_backward.c */

#endif /* ER_OP_IMPL_H */
