/* op_binary.c: add(a, b) and mul(a, b) with torch's broadcasting: the exact sum or product rounded
 * once, and the bounds of an implementation that reads both into compute and rounds the result there
 * (docs/ops/binary.md). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../host/er_msg.h"
#include "op_impl.h"
#include "exactref/formats.h"

#define msgf er_msgf

static const char *const bin_inputs[] = {"input", "other"};
static const char *const bin_outputs[] = {"out"};

typedef struct bin_state {
    double *a, *b; /* the inputs' values, row-major in their own shapes */
    er_optensor ta, tb;
    int ndim, mul, of;
    int64_t shape[ER_OP_MAXDIM], n;
} bin_state;

ER_OPS_STATE_FREE(bin_free, bin_state, s->a, s->b)

/* the exact a op b: an enclosure, *special 1 where it is exact (lo == hi, or a non-finite IEEE result) */
static void bin_exact(int mul, double a, double b, double *lo, double *hi, int *special)
{
    double r = mul ? a * b : a + b;
    *special = 0;
    if (!er_b_finite(a) || !er_b_finite(b)) { /* IEEE's special result is the exact one */
        *lo = *hi = r;
        *special = 1;
        return;
    }
    if (!er_b_finite(r)) { /* finite operands, a result beyond binary64: decided in MPFR */
        *lo = r > 0 ? 0x1.fffffffffffffp1023 : -INFINITY;
        *hi = r > 0 ? INFINITY : -0x1.fffffffffffffp1023;
        return;
    }
    if (mul) {
        double e = fma(a, b, -r); /* exact where the product is well inside the range */
        if (e == 0 && (r == 0 ? (a == 0 || b == 0) : fabs(r) >= 0x1p-968)) {
            *lo = *hi = r;
            *special = 1;
        } else {
            *lo = er_b_down(r);
            *hi = er_b_up(r);
        }
    } else {
        er_ops_sub_iv(a, -b, lo, hi);
        *special = *lo == *hi;
    }
}

/* a + b or a b exactly into register 2 (er_ops_mp_element's fill) */
typedef struct {
    int mul;
    double a, b;
} bin_mp_ctx;

static void bin_mp(void *ctx, er_ops_mp *m)
{
    const bin_mp_ctx *c = (const bin_mp_ctx *)ctx;
    er_ops_mp_set_d(m, 0, c->a);
    er_ops_mp_set_d(m, 1, c->b);
    if (c->mul) er_ops_mp_mul(m, 2, 0, 1);
    else er_ops_mp_add(m, 2, 0, 1);
}

/* elements [e0, e1) of the result ctx (its state s set) */
static er_status bin_exact_range(void *ctx, int64_t e0, int64_t e1, char *msg, size_t msg_size)
{
    er_opres *r = (er_opres *)ctx;
    bin_state *s = (bin_state *)r->state;
    for (int64_t e = e0; e < e1; e++) {
        double a = s->a[er_ops_bcast_index(&s->ta, s->ndim, s->shape, e)];
        double b = s->b[er_ops_bcast_index(&s->tb, s->ndim, s->shape, e)];
        double lo, hi;
        int sp;
        uint64_t bits;
        bin_exact(s->mul, a, b, &lo, &hi, &sp);
        r->xlo[0][e] = lo;
        r->xhi[0][e] = hi;
        if (sp || er_ops_decide(s->of, lo, hi, &bits)) {
            er_ops_store(&r->out[0], e, er_ops_round(s->of, lo));
            continue;
        }
        /* the exact sum needs at most about 2100 bits */
        bin_mp_ctx c = {s->mul, a, b};
        er_status st = er_ops_mp_element(r, e, 3, 2, 1 << 13, bin_mp, &c, msg, msg_size);
        if (st != ER_OK) return st;
    }
    return ER_OK;
}

static er_status bin_create(er_opres *r, int mul, char *msg, size_t msg_size)
{
    er_status st;
    bin_state *s = (bin_state *)calloc(1, sizeof *s);
    if (!s) return msgf(msg, msg_size, ER_ENOMEM, "%s: out of memory", r->def->name);
    r->state = s;
    r->takes_from = 1;
    s->mul = mul;
    s->ta = r->in[0];
    s->tb = r->in[1];
    if ((st = er_ops_broadcast(&s->ta, &s->tb, &s->ndim, s->shape, msg, msg_size)) != ER_OK) {
        char m2[256];
        snprintf(m2, sizeof m2, "%s", msg);
        return msgf(msg, msg_size, st, "%s: %s", r->def->name, m2);
    }
    if ((st = er_ops_opt_format(r, "out", s->ta.format, &s->of, msg, msg_size)) != ER_OK) return st;
    if ((st = er_ops_values(&s->ta, &s->a, msg, msg_size)) != ER_OK) return st;
    if ((st = er_ops_values(&s->tb, &s->b, msg, msg_size)) != ER_OK) return st;
    /* the descriptors are read by their shapes only from here on (the values are copied) */
    s->ta = er_optensor_make(s->ta.format, s->ta.ndim, s->ta.shape, NULL);
    s->tb = er_optensor_make(s->tb.format, s->tb.ndim, s->tb.shape, NULL);
    if ((st = er_ops_alloc_output(r, 0, s->of, s->ndim, s->shape, msg, msg_size)) != ER_OK) return st;
    s->n = er_optensor_count(&r->out[0]);
    return er_ops_parallel(s->n, 4096, bin_exact_range, r, msg, msg_size); /* r->state is s */
}

static er_status add_create(er_opres *r, char *m, size_t ms) { return bin_create(r, 0, m, ms); }
static er_status mul_create(er_opres *r, char *m, size_t ms) { return bin_create(r, 1, m, ms); }

static er_status bin_bound_range(void *ctx, int64_t e0, int64_t e1, char *msg, size_t msg_size)
{
    er_ops_bjob *j = (er_ops_bjob *)ctx;
    bin_state *s = (bin_state *)j->r->state;
    const er_openv *env = j->env;
    (void)msg;
    (void)msg_size;
    for (int64_t e = e0; e < e1; e++) {
        int64_t ia = er_ops_bcast_index(&s->ta, s->ndim, s->shape, e), ib = er_ops_bcast_index(&s->tb, s->ndim, s->shape, e);
        double a = s->a[ia], b = s->b[ib];
        double lo, hi, al, ah, bl, bh;
        int sp;
        bin_exact(s->mul, a, b, &lo, &hi, &sp);
        /* results as inputs: each operand within its earlier result's slack */
        int unb = er_ops_in_iv(j->r, 0, ia, a, &al, &ah) | er_ops_in_iv(j->r, 1, ib, b, &bl, &bh);
        int slack = (j->r->slack[0] && j->r->slack[0][ia] != 0) || (j->r->slack[1] && j->r->slack[1][ib] != 0);
        if (unb) {
            j->fl[e] = ER_OPB_NONFINITE | ER_OPB_UNCERTAIN;
            j->lo[e] = -INFINITY;
            j->hi[e] = INFINITY;
            continue;
        }
        if (sp && !er_b_finite(lo) && !slack) {
            j->fl[e] = ER_OPB_NONFINITE;
            j->lo[e] = j->hi[e] = lo;
            continue;
        }
        /* both read into compute, the result rounded there (monotone in each operand) */
        er_ops_round_compute(env, &al, &ah);
        er_ops_round_compute(env, &bl, &bh);
        double yl, yh;
        if (!s->mul) {
            yl = er_ops_add_dn(al, bl);
            yh = er_ops_add_up(ah, bh);
        } else {
            double c[4] = {al * bl, al * bh, ah * bl, ah * bh};
            yl = INFINITY;
            yh = -INFINITY;
            for (int k = 0; k < 4; k++) {
                if (c[k] < yl) yl = c[k];
                if (c[k] > yh) yh = c[k];
            }
            yl = er_b_down(yl);
            yh = er_b_up(yh);
        }
        if (yl != yl || yh != yh || !er_b_finite(al) || !er_b_finite(ah) || !er_b_finite(bl) || !er_b_finite(bh)) {
            j->fl[e] = ER_OPB_NONFINITE | ER_OPB_UNCERTAIN; /* an operand beyond compute's range when read */
            j->lo[e] = -INFINITY;
            j->hi[e] = INFINITY;
            continue;
        }
        er_ops_round_compute(env, &yl, &yh);
        j->lo[e] = yl;
        j->hi[e] = yh;
    }
    return ER_OK;
}

static er_status bin_bounds(er_opres *r, int i, const er_openv *env, double *lo, double *hi, unsigned char *flags,
                            char *msg, size_t msg_size)
{
    bin_state *s = (bin_state *)r->state;
    (void)i;
    er_ops_bjob j = {r, env, lo, hi, flags};
    return er_ops_parallel(s->n, 4096, bin_bound_range, &j, msg, msg_size);
}

static const er_boundary add_b[] = {
    {"read", "compute", "each operand read into compute (rounded to nearest)", "each element"},
    {"add", "compute", "the sum rounded to compute", "each element"},
    {"out", "cast", "the compute value rounded once to the output format", "each element"},
};
static const er_boundary mul_b[] = {
    {"read", "compute", "each operand read into compute (rounded to nearest)", "each element"},
    {"multiply", "compute", "the product rounded to compute", "each element"},
    {"out", "cast", "the compute value rounded once to the output format", "each element"},
};

const er_opdef er_opdef_add = {"add", 2, 2, bin_inputs, 1, bin_outputs, add_b, 3, ER_OPSTD_NORMAL | ER_OPSTD_ANY,
                               "normal, any_order", add_create, bin_bounds, bin_free, er_opn_binary};
const er_opdef er_opdef_mul = {"mul", 2, 2, bin_inputs, 1, bin_outputs, mul_b, 3, ER_OPSTD_NORMAL | ER_OPSTD_ANY,
                               "normal, any_order", mul_create, bin_bounds, bin_free, er_opn_binary};
