/* op_softmax.c: softmax(input, dim): the exact value rounded once, and per-element bounds under the
 * standards normal (index-order sum) and any_order (any summation tree); proof: docs/proofs/softmax.md. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../host/er_msg.h"
#include "op_impl.h"
#include "exactref/formats.h"

#define msgf er_msgf

static const char *const sm_inputs[] = {"input"};
static const char *const sm_outputs[] = {"out"};
static const er_boundary sm_boundaries[] = {
    {"subtract", "compute", "x_j - max(x) rounded to compute", "each element"},
    {"exp", "library", "exp of the difference within ulps of compute", "each element"},
    {"sum", "accumulate", "the sum of the exponentials in compute (index order, or any order)", "each row"},
    {"divide", "library", "e_i / sum within ulps of compute (correctly rounded: 0.5)", "each element"},
    {"out", "cast", "the compute value rounded once to the output format", "each element"},
};

typedef struct sm_state {
    double *v;     /* the input's values, row-major */
    int64_t outer, len, inner;
    int in_fmt;
} sm_state;

ER_OPS_STATE_FREE(sm_free, sm_state, s->v)

#define AT(s, row, j) ((((row) / (s)->inner) * (s)->len + (j)) * (s)->inner + (row) % (s)->inner)

/* ---- the exact value ---- */

typedef struct sm_job {
    er_opres *r;
    sm_state *s;
    int out_fmt;
} sm_job;

/* 1 when the row's exact softmax is NaN: a NaN or +inf in it, or every element -inf (or no finite max) */
static int row_max(const sm_state *s, int64_t row, double *m)
{
    double mx = -INFINITY;
    for (int64_t j = 0; j < s->len; j++) {
        double x = s->v[AT(s, row, j)];
        if (x != x || x == INFINITY) return 1;
        if (x > mx) mx = x;
    }
    *m = mx;
    return mx == -INFINITY;
}

static er_status sm_exact_rows(void *ctx, int64_t r0, int64_t r1, char *msg, size_t msg_size)
{
    sm_job *j = (sm_job *)ctx;
    sm_state *s = j->s;
    er_opres *r = j->r;
    int of = j->out_fmt;
    double *E = (double *)malloc(sizeof(double) * 2 * (size_t)(s->len ? s->len : 1));
    if (!E) return msgf(msg, msg_size, ER_ENOMEM, "softmax: out of memory");
    double *El = E, *Eh = E + s->len;
    er_ops_expc *ec = er_ops_expc_new(); /* NULL: no memo */
    er_status st = ER_OK;
    for (int64_t row = r0; row < r1; row++) {
        double m;
        if (row_max(s, row, &m)) {
            for (int64_t i = 0; i < s->len; i++) {
                int64_t e = AT(s, row, i);
                r->xlo[0][e] = r->xhi[0][e] = NAN;
                er_ops_store_inl(&r->out[0], e, er_ops_round(of, NAN));
            }
            continue;
        }
        double Sl = 0, Sh = 0;
        for (int64_t i = 0; i < s->len; i++) {
            double dl, dh;
            er_ops_sub_iv_inl(s->v[AT(s, row, i)], m, &dl, &dh);
            er_ops_exp_iv_c(ec, dl, dh, &El[i], &Eh[i]);
            Sl = er_b_down(Sl + El[i]);
            Sh = er_b_up(Sh + Eh[i]);
        }
        int undecided = 0;
        for (int64_t i = 0; i < s->len; i++) {
            int64_t e = AT(s, row, i);
            double yl = er_b_down(El[i] / Sh), yh = er_b_up(Eh[i] / Sl);
            uint64_t b;
            if (yl < 0) yl = 0;
            if (yh > 1) yh = 1;
            r->xlo[0][e] = yl;
            r->xhi[0][e] = yh;
            if (er_ops_decide_inl(of, yl, yh, &b)) er_ops_store_inl(&r->out[0], e, b);
            else {
                undecided = 1;
                El[i] = NAN; /* marks the element for the precise path */
            }
        }
        if (!undecided) continue;
        /* rising precision: S = sum exp(x_j - m), y_i = exp(x_i - m) / S, as MPFR intervals */
        for (int prec = 128;; prec *= 2) {
            er_ops_mp *mp = er_ops_mp_next("softmax", "row", row, prec, 1 << 16, 4, &st, msg, msg_size);
            if (!mp) goto done;
            er_ops_mp_set_d(mp, 0, m);
            er_ops_mp_set_d(mp, 1, 0);
            for (int64_t jj = 0; jj < s->len; jj++) {
                er_ops_mp_set_d(mp, 2, s->v[AT(s, row, jj)]);
                er_ops_mp_sub(mp, 2, 2, 0);
                er_ops_mp_exp(mp, 2, 2);
                er_ops_mp_add(mp, 1, 1, 2);
            }
            int left = 0;
            for (int64_t i = 0; i < s->len; i++) {
                if (El[i] == El[i]) continue;
                int64_t e = AT(s, row, i);
                er_ops_mp_set_d(mp, 2, s->v[e]);
                er_ops_mp_sub(mp, 2, 2, 0);
                er_ops_mp_exp(mp, 2, 2);
                er_ops_mp_div(mp, 3, 2, 1);
                if (er_ops_mp_store(mp, 3, r, 0, e)) {
                    El[i] = 0;
                } else {
                    left = 1;
                }
            }
            er_ops_mp_free(mp);
            if (!left) break;
        }
    }
done:
    er_ops_expc_free(ec);
    free(E);
    return st;
}

static er_status sm_bound_rows(er_opres *r, int i, const er_openv *env, int64_t r0, int64_t r1, int64_t off,
                               er_ops_scratch *sc, double *lo, double *hi, unsigned char *fl, char *msg,
                               size_t msg_size);

static er_status sm_create(er_opres *r, char *msg, size_t msg_size)
{
    er_status st;
    int dim, of;
    const er_optensor *x = &r->in[0];
    sm_state *s = (sm_state *)calloc(1, sizeof *s);
    if (!s) return msgf(msg, msg_size, ER_ENOMEM, "softmax: out of memory");
    r->state = s;
    r->takes_from = 1;
    if ((st = er_ops_opt_dim(r, "dim", -1, x->ndim, &dim, msg, msg_size)) != ER_OK) return st;
    if ((st = er_ops_opt_format(r, "out", x->format, &of, msg, msg_size)) != ER_OK) return st;
    if ((st = er_ops_values(x, &s->v, msg, msg_size)) != ER_OK) return st;
    s->in_fmt = x->format;
    er_ops_split_dim(x, dim, &s->outer, &s->len, &s->inner);
    if ((st = er_ops_alloc_output(r, 0, of, x->ndim, x->shape, msg, msg_size)) != ER_OK) return st;
    if (s->inner == 1 && s->len > 0) { /* rows contiguous: the check's fused path (opres.c) */
        r->bounds_rows = sm_bound_rows;
        r->range_unit[0] = s->len;
    }
    sm_job j = {r, s, of};
    int64_t rows = s->outer * s->inner;
    return er_ops_parallel(rows, 1 + 65536 / (s->len + 1), sm_exact_rows, &j, msg, msg_size);
}

/* ---- the bounds (docs/proofs/softmax.md) ---- */

/* The softmax family's model of one finite row (docs/proofs/softmax.md, section 2, steps 1 to 4): x[j st]
 * for j < n.  Fills xl, xh (the values as compute reads them), dl, dh (the differences x_j - m with
 * their rounding into compute; may be NULL), El, Eh (exp's results within ue ulps), the sum [*Sl, *Sh]
 * (index order, or any tree with any), and the maximum's interval [*ml, *mh]. */
int er_ops_expsum_model(const er_openv *env, int any, double ue, const double *x, const double *slack, int64_t n,
                        int64_t st, double *xl, double *xh, double *dlo, double *dhi, double *El, double *Eh,
                        double *Slo, double *Shi, double *mlo, double *mhi)
{
    return er_ops_expsum_model_c(env, any, ue, x, slack, n, st, xl, xh, dlo, dhi, El, Eh, Slo, Shi, mlo, mhi, NULL);
}

int er_ops_expsum_model_c(const er_openv *env, int any, double ue, const double *x, const double *slack, int64_t n,
                          int64_t st, double *xl, double *xh, double *dlo, double *dhi, double *El, double *Eh,
                          double *Slo, double *Shi, double *mlo, double *mhi, er_ops_expc *ec)
{
    /* the values as compute reads them (rounded into a narrower compute; subnormals may be read as
     * zero under flush_to_zero), and their maxima */
    double ml = -INFINITY, mh = -INFINITY;
    for (int64_t i = 0; i < n; i++) {
        double a = x[i * st], b = a;
        if (slack) { /* results as inputs: the stored value within the earlier result's slack */
            double sl = slack[i * st];
            if (!(sl < INFINITY)) return 1;
            a = er_b_down(a - sl);
            b = er_b_up(b + sl);
        }
        er_ops_round_compute_inl(env, &a, &b); /* identity on compute's values, but for a flush */
        xl[i] = a < b ? a : b;
        xh[i] = a < b ? b : a;
        if (xl[i] > ml) ml = xl[i];
        if (xh[i] > mh) mh = xh[i];
    }
    /* e_j: exp within ue ulps of compute at a value between the exact difference and its rounding */
    for (int64_t i = 0; i < n; i++) {
        double dl, dh, t, cl, ch;
        er_ops_sub_iv_inl(xl[i], mh, &dl, &t);
        er_ops_sub_iv_inl(xh[i], ml, &t, &dh);
        cl = dl;
        ch = dh;
        er_ops_round_compute_inl(env, &cl, &ch);
        if (cl < dl) dl = cl;
        if (ch > dh) dh = ch;
        if (dlo) {
            dlo[i] = dl;
            dhi[i] = dh;
        }
        er_ops_exp_iv_c(ec, dl, dh, &El[i], &Eh[i]);
        er_ops_lib_result_inl(env, ue, &El[i], &Eh[i]);
        if (El[i] < 0) El[i] = 0;
    }
    /* the sum in compute */
    double Sl, Sh;
    if (!any) {
        Sl = El[0];
        Sh = Eh[0];
        /* each partial sum rounded to nearest in compute, or kept wider (a wider or exact accumulator:
         * the exact sum is one a correct implementation may hold): the hull of the two */
        for (int64_t i = 1; i < n; i++) {
            double al = er_b_down(Sl + El[i]), ah = er_b_up(Sh + Eh[i]);
            Sl = al;
            Sh = ah;
            er_ops_round_compute_inl(env, &Sl, &Sh);
            if (al < Sl) Sl = al;
            if (ah > Sh) Sh = ah;
        }
    } else {
        Sl = 0;
        Sh = 0;
        for (int64_t i = 0; i < n; i++) {
            Sl = er_b_down(Sl + El[i]);
            Sh = er_b_up(Sh + Eh[i]);
        }
        /* any tree of n - 1 additions: |sum - exact sum| <= gamma_{n-1} * exact sum (terms >= 0) */
        double g = er_b_up((double)(n - 1) * env->u), gam = er_ops_div_up(g, er_b_down(1 - g));
        if (!(g < 0.5)) {
            Sl = 0;
            Sh = INFINITY;
        } else {
            Sl = er_ops_mul_dn(Sl, er_b_down(1 - gam));
            Sh = er_ops_mul_up(Sh, er_b_up(1 + gam));
        }
        if (env->ftz) Sl = er_ops_add_dn(Sl, -er_b_up((double)n * env->tiny));
        if (Sl < 0) Sl = 0;
        er_ops_round_compute_inl(env, &Sl, &Sh);
    }
    *Slo = Sl;
    *Shi = Sh;
    *mlo = ml;
    *mhi = mh;
    return 0;
}

/* the bounds of rows [r0, r1) (er_ops_rows_fn) */
static er_status sm_bound_rows(er_opres *r, int oi, const er_openv *env, int64_t r0, int64_t r1, int64_t off,
                               er_ops_scratch *sc, double *lo, double *hi, unsigned char *fl, char *msg,
                               size_t msg_size)
{
    sm_state *s = (sm_state *)r->state;
    (void)oi;
    int any = env->o->standard.kind == ER_STD_ANY_ORDER;
    double ue = er_ops_ulps(env, "exp"), ud = er_ops_ulps(env, "div");
    size_t L = (size_t)(s->len ? s->len : 1);
    double *buf = er_ops_scratch_buf(sc, 4 * L);
    if (!buf) return msgf(msg, msg_size, ER_ENOMEM, "softmax: out of memory");
    double *xl = buf, *xh = buf + L, *El = buf + 2 * L, *Eh = buf + 3 * L;
    er_ops_expc *ec = er_ops_scratch_expc(sc); /* NULL: no memo */
    for (int64_t row = r0; row < r1; row++) {
        double m;
        if (row_max(s, row, &m)) {
            for (int64_t i = 0; i < s->len; i++) {
                int64_t e = AT(s, row, i) - off;
                fl[e] = ER_OPB_NONFINITE;
                lo[e] = hi[e] = NAN;
            }
            continue;
        }
        double ml, mh, Sl, Sh;
        const double *sk = r->slack[0] ? r->slack[0] + AT(s, row, 0) : NULL;
        if (er_ops_expsum_model_c(env, any, ue, s->v + AT(s, row, 0), sk, s->len, s->inner, xl, xh, NULL, NULL, El,
                                  Eh, &Sl, &Sh, &ml, &mh, ec)) {
            for (int64_t i = 0; i < s->len; i++) { /* an earlier result's unbounded element: no bound */
                int64_t e = AT(s, row, i) - off;
                fl[e] = ER_OPB_NONFINITE | ER_OPB_UNCERTAIN;
                lo[e] = -INFINITY;
                hi[e] = INFINITY;
            }
            continue;
        }
        int overflow = !(Sh <= env->max_c);
        for (int64_t i = 0; i < s->len; i++) {
            int64_t e = AT(s, row, i) - off;
            if (overflow) { /* the sum may be infinite in compute: no bound */
                fl[e] = ER_OPB_NONFINITE | ER_OPB_UNCERTAIN;
                lo[e] = -INFINITY;
                hi[e] = INFINITY;
                continue;
            }
            double ql = er_b_down(El[i] / Sh), qh = Sl > 0 ? er_b_up(Eh[i] / Sl) : INFINITY;
            er_ops_lib_result_inl(env, ud, &ql, &qh);
            if (ql < 0) ql = 0;
            lo[e] = ql;
            hi[e] = qh;
        }
    }
    return ER_OK;
}

static er_status sm_bounds(er_opres *r, int i, const er_openv *env, double *lo, double *hi, unsigned char *flags,
                           char *msg, size_t msg_size)
{
    sm_state *s = (sm_state *)r->state;
    return er_ops_rows_bounds(r, i, env, s->outer * s->inner, s->len, sm_bound_rows, lo, hi, flags, msg, msg_size);
}

const er_opdef er_opdef_softmax = {
    "softmax", 1, 1, sm_inputs, 1, sm_outputs, sm_boundaries,
    (int)(sizeof sm_boundaries / sizeof sm_boundaries[0]), ER_OPSTD_NORMAL | ER_OPSTD_ANY, "normal, any_order",
    sm_create, sm_bounds, sm_free, er_opn_softmax_family,
};
