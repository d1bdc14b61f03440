/* op_lse.c: log_softmax(input, dim) and logsumexp(input, dim, keepdim): the exact values rounded once,
 * and bounds under normal and any_order built on softmax's row model; proof: docs/proofs/softmax.md,
 * section 5. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../host/er_msg.h"
#include "op_impl.h"
#include "exactref/formats.h"

#define msgf er_msgf

static const char *const lse_inputs[] = {"input"};
static const char *const lse_outputs[] = {"out"};
/* the boundaries log_softmax and logsumexp share: the row's max subtracted, exp, the sum, its log */
#define LSE_COMMON_BOUNDARIES                                                                                 \
    {"subtract", "compute", "x_j - max(x) rounded to compute (or exact)", "each element"},                     \
    {"exp", "library", "exp of the difference within ulps of compute", "each element"},                        \
    {"sum", "accumulate", "the sum of the exponentials in compute (index order, or any order)", "each row"},  \
    {"log", "library", "log of the sum within ulps of compute", "each row"}
static const er_boundary ls_boundaries[] = {
    LSE_COMMON_BOUNDARIES,
    {"combine", "compute", "(x_i - max) - log(sum), or x_i - (max + log(sum)), rounded to compute", "each element"},
    {"out", "cast", "the compute value rounded once to the output format", "each element"},
};
static const er_boundary lse_boundaries[] = {
    LSE_COMMON_BOUNDARIES,
    {"add", "compute", "max + log(sum) rounded to compute", "each row"},
    {"out", "cast", "the compute value rounded once to the output format", "each row"},
};

typedef struct lse_state {
    double *v;
    int64_t outer, len, inner;
    int lse; /* 1: logsumexp (one output per row), 0: log_softmax */
} lse_state;

ER_OPS_STATE_FREE(lse_free, lse_state, s->v)

#define BASE(s, row) (((row) / (s)->inner) * (s)->len * (s)->inner + (row) % (s)->inner)

/* The row's kind: 0 finite (m its maximum), else the exact value of every element of a log_softmax row /
 * of the logsumexp: NaN (a NaN in the row), +inf (a +inf and no NaN: logsumexp +inf, log_softmax NaN),
 * -inf (every element -inf or no element: logsumexp -inf, log_softmax NaN). */
static int row_kind(const lse_state *s, int64_t row, double *m, double *special)
{
    const double *x = s->v + BASE(s, row);
    double mx = -INFINITY;
    int nan = 0, pinf = 0;
    for (int64_t j = 0; j < s->len; j++) {
        double v = x[j * s->inner];
        nan |= v != v;
        pinf |= v == INFINITY;
        if (v > mx) mx = v;
    }
    *m = mx;
    if (nan) *special = NAN;
    else if (pinf) *special = s->lse ? INFINITY : NAN;
    else if (mx == -INFINITY) *special = s->lse ? -INFINITY : NAN;
    else return 0;
    return 1;
}

typedef struct lse_job {
    er_opres *r;
    lse_state *s;
    int of;
} lse_job;

/* the row's exact log(S) at rising precision into register 1 of a new MPFR context (register 0: m) */
static er_ops_mp *mp_logsum(const lse_state *s, const double *x, double m, int prec)
{
    er_ops_mp *mp = er_ops_mp_new(prec, 4);
    if (!mp) return NULL;
    er_ops_mp_set_d(mp, 0, m);
    er_ops_mp_set_d(mp, 1, 0);
    for (int64_t j = 0; j < s->len; j++) {
        er_ops_mp_set_d(mp, 2, x[j * s->inner]);
        er_ops_mp_sub(mp, 2, 2, 0);
        er_ops_mp_exp(mp, 2, 2);
        er_ops_mp_add(mp, 1, 1, 2);
    }
    er_ops_mp_log(mp, 1, 1);
    return mp;
}

static er_status lse_exact_rows(void *ctx, int64_t r0, int64_t r1, char *msg, size_t msg_size)
{
    lse_job *j = (lse_job *)ctx;
    lse_state *s = j->s;
    er_opres *r = j->r;
    const char *name = r->def->name;
    er_ops_expc *ec = er_ops_expc_new(); /* NULL: no memo */
    for (int64_t row = r0; row < r1; row++) {
        const double *x = s->v + BASE(s, row);
        int64_t base = BASE(s, row);
        double m, sp;
        if (row_kind(s, row, &m, &sp)) {
            int64_t n = s->lse ? 1 : s->len;
            for (int64_t i = 0; i < n; i++) {
                int64_t e = s->lse ? row : base + i * s->inner;
                r->xlo[0][e] = r->xhi[0][e] = sp;
                er_ops_store_inl(&r->out[0], e, er_ops_round(j->of, sp));
            }
            continue;
        }
        /* S = sum exp(x_j - m) enclosed, then log(S) (S >= 1) */
        double Sl = 0, Sh = 0;
        for (int64_t i = 0; i < s->len; i++) {
            double dl, dh, el, eh;
            er_ops_sub_iv_inl(x[i * s->inner], m, &dl, &dh);
            er_ops_exp_iv_c(ec, dl, dh, &el, &eh);
            Sl = er_b_down(Sl + el);
            Sh = er_b_up(Sh + eh);
        }
        double Ll, Lh, t;
        er_ops_log(Sl, &Ll, &t);
        er_ops_log(Sh, &t, &Lh);
        if (Ll < 0) Ll = 0;
        int64_t n = s->lse ? 1 : s->len;
        int undecided = 0;
        for (int64_t i = 0; i < n; i++) {
            int64_t e = s->lse ? row : base + i * s->inner;
            double yl, yh;
            if (s->lse) {
                yl = er_ops_add_dn(m, Ll);
                yh = er_ops_add_up(m, Lh);
            } else {
                double x_ = x[i * s->inner];
                if (x_ == -INFINITY) {
                    r->xlo[0][e] = r->xhi[0][e] = -INFINITY;
                    er_ops_store_inl(&r->out[0], e, er_ops_round(j->of, -INFINITY));
                    continue;
                }
                double dl, dh;
                er_ops_sub_iv(x_, m, &dl, &dh);
                yl = er_ops_add_dn(dl, -Lh);
                yh = er_ops_add_up(dh, -Ll);
            }
            uint64_t b;
            r->xlo[0][e] = yl;
            r->xhi[0][e] = yh;
            if (er_ops_decide_inl(j->of, yl, yh, &b)) er_ops_store_inl(&r->out[0], e, b);
            else {
                undecided = 1;
                r->xlo[0][e] = NAN; /* marks the element for the precise path */
            }
        }
        if (!undecided) continue;
        for (int prec = 128;; prec *= 2) {
            if (prec > (1 << 16)) {
                er_ops_expc_free(ec);
                return msgf(msg, msg_size, ER_EINVAL, "%s: the rounding of row %lld is not decided at %d bits", name,
                            (long long)row, prec / 2);
            }
            er_ops_mp *mp = mp_logsum(s, x, m, prec);
            if (!mp) {
                er_ops_expc_free(ec);
                return msgf(msg, msg_size, ER_ENOMEM, "%s: out of memory", name);
            }
            int left = 0;
            for (int64_t i = 0; i < n; i++) {
                int64_t e = s->lse ? row : base + i * s->inner;
                if (r->xlo[0][e] == r->xlo[0][e]) continue;
                if (s->lse) {
                    er_ops_mp_add(mp, 3, 0, 1);
                } else {
                    er_ops_mp_set_d(mp, 2, x[i * s->inner]);
                    er_ops_mp_sub(mp, 2, 2, 0);
                    er_ops_mp_sub(mp, 3, 2, 1);
                }
                if (!er_ops_mp_store(mp, 3, r, 0, e)) left = 1;
            }
            er_ops_mp_free(mp);
            if (!left) break;
        }
    }
    er_ops_expc_free(ec);
    return ER_OK;
}

static er_status lse_bound_rows(er_opres *r, int i, const er_openv *env, int64_t r0, int64_t r1, int64_t off,
                                er_ops_scratch *sc, double *lo, double *hi, unsigned char *fl, char *msg,
                                size_t msg_size);

static er_status lse_create_common(er_opres *r, int lse, char *msg, size_t msg_size)
{
    er_status st;
    int dim, of, keep = 0;
    const er_optensor *x = &r->in[0];
    lse_state *s = (lse_state *)calloc(1, sizeof *s);
    if (!s) return msgf(msg, msg_size, ER_ENOMEM, "%s: out of memory", r->def->name);
    r->state = s;
    r->takes_from = 1;
    s->lse = lse;
    if ((st = er_ops_opt_dim(r, "dim", -1, x->ndim, &dim, msg, msg_size)) != ER_OK) return st;
    if (lse && (st = er_ops_opt_bool(r, "keepdim", 0, &keep, msg, msg_size)) != ER_OK) return st;
    if ((st = er_ops_opt_format(r, "out", x->format, &of, msg, msg_size)) != ER_OK) return st;
    if ((st = er_ops_values(x, &s->v, msg, msg_size)) != ER_OK) return st;
    er_ops_split_dim(x, dim, &s->outer, &s->len, &s->inner);
    int64_t shape[ER_OP_MAXDIM];
    int nd = 0;
    for (int d = 0; d < x->ndim; d++) {
        if (lse && d == dim) {
            if (keep) shape[nd++] = 1;
            continue;
        }
        shape[nd++] = x->shape[d];
    }
    if ((st = er_ops_alloc_output(r, 0, of, nd, shape, msg, msg_size)) != ER_OK) return st;
    if (s->inner == 1 && s->len > 0) { /* rows contiguous: the check's fused path (opres.c) */
        r->bounds_rows = lse_bound_rows;
        r->range_unit[0] = lse ? 1 : s->len;
    }
    lse_job j = {r, s, of};
    return er_ops_parallel(s->outer * s->inner, 1 + 65536 / (s->len + 1), lse_exact_rows, &j, msg, msg_size);
}

static er_status ls_create(er_opres *r, char *msg, size_t msg_size) { return lse_create_common(r, 0, msg, msg_size); }
static er_status lse_create(er_opres *r, char *msg, size_t msg_size) { return lse_create_common(r, 1, msg, msg_size); }

/* the bounds of rows [r0, r1) (er_ops_rows_fn) */
static er_status lse_bound_rows(er_opres *r, int oi, const er_openv *env, int64_t r0, int64_t r1, int64_t off,
                                er_ops_scratch *sc, double *lo, double *hi, unsigned char *fl, char *msg,
                                size_t msg_size)
{
    lse_state *s = (lse_state *)r->state;
    (void)oi;
    int any = env->o->standard.kind == ER_STD_ANY_ORDER;
    double ue = er_ops_ulps(env, "exp"), ul = er_ops_ulps(env, "log");
    size_t L = (size_t)(s->len ? s->len : 1);
    double *buf = er_ops_scratch_buf(sc, 6 * L);
    if (!buf) return msgf(msg, msg_size, ER_ENOMEM, "out of memory");
    double *xl = buf, *xh = buf + L, *El = buf + 2 * L, *Eh = buf + 3 * L, *dl = buf + 4 * L, *dh = buf + 5 * L;
    er_ops_expc *ec = er_ops_scratch_expc(sc); /* NULL: no memo */
    for (int64_t row = r0; row < r1; row++) {
        int64_t base = BASE(s, row), n = s->lse ? 1 : s->len;
        double m, sp;
        if (row_kind(s, row, &m, &sp)) {
            for (int64_t i = 0; i < n; i++) {
                int64_t e = (s->lse ? row : base + i * s->inner) - off;
                fl[e] = ER_OPB_NONFINITE;
                lo[e] = hi[e] = sp;
            }
            continue;
        }
        double ml, mh, Sl, Sh;
        const double *sk = r->slack[0] ? r->slack[0] + base : NULL;
        int overflow = er_ops_expsum_model_c(env, any, ue, s->v + base, sk, s->len, s->inner, xl, xh, dl, dh, El, Eh,
                                             &Sl, &Sh, &ml, &mh, ec);
        overflow = overflow || !(Sh <= env->max_c) || !(Sl > 0);
        /* l = LOG(s) within ul ulps: log is increasing */
        double Ll, Lh, t;
        if (!overflow) {
            er_ops_log(Sl, &Ll, &t);
            er_ops_log(Sh, &t, &Lh);
            er_ops_lib_result(env, ul, &Ll, &Lh);
        }
        for (int64_t i = 0; i < n; i++) {
            int64_t e = (s->lse ? row : base + i * s->inner) - off;
            if (overflow) {
                fl[e] = ER_OPB_NONFINITE | ER_OPB_UNCERTAIN;
                lo[e] = -INFINITY;
                hi[e] = INFINITY;
                continue;
            }
            double yl, yh;
            /* m + l rounded to compute */
            double al = er_b_down(ml + Ll), ah = er_b_up(mh + Lh);
            er_ops_round_compute_inl(env, &al, &ah);
            if (s->lse) {
                yl = al;
                yh = ah;
            } else {
                if (xl[i] == -INFINITY) { /* exp(-inf) = 0, and -inf - anything finite = -inf */
                    fl[e] = ER_OPB_NONFINITE;
                    lo[e] = hi[e] = -INFINITY;
                    continue;
                }
                /* (x_i - m) - l, or x_i - (m + l), each rounded to compute: the hull */
                double bl = er_b_down(dl[i] - Lh), bh = er_b_up(dh[i] - Ll);
                er_ops_round_compute_inl(env, &bl, &bh);
                double cl = er_b_down(xl[i] - ah), ch = er_b_up(xh[i] - al);
                er_ops_round_compute_inl(env, &cl, &ch);
                yl = bl < cl ? bl : cl;
                yh = bh > ch ? bh : ch;
            }
            lo[e] = yl;
            hi[e] = yh;
        }
    }
    return ER_OK;
}

static er_status lse_bounds(er_opres *r, int i, const er_openv *env, double *lo, double *hi, unsigned char *flags,
                            char *msg, size_t msg_size)
{
    lse_state *s = (lse_state *)r->state;
    return er_ops_rows_bounds(r, i, env, s->outer * s->inner, s->len, lse_bound_rows, lo, hi, flags, msg, msg_size);
}

const er_opdef er_opdef_log_softmax = {
    "log_softmax", 1, 1, lse_inputs, 1, lse_outputs, ls_boundaries,
    (int)(sizeof ls_boundaries / sizeof ls_boundaries[0]), ER_OPSTD_NORMAL | ER_OPSTD_ANY, "normal, any_order",
    ls_create, lse_bounds, lse_free, er_opn_softmax_family,
};

const er_opdef er_opdef_logsumexp = {
    "logsumexp", 1, 1, lse_inputs, 1, lse_outputs, lse_boundaries,
    (int)(sizeof lse_boundaries / sizeof lse_boundaries[0]), ER_OPSTD_NORMAL | ER_OPSTD_ANY, "normal, any_order",
    lse_create, lse_bounds, lse_free, er_opn_softmax_family,
};
