/* opres.c: the generic Result of every operation beyond matmul (er_opres): the call through the table,
 * options, outputs, exact enclosures, bounds cached per options, covers and the check's report (the
 * matmul check's own scoring), and the result through the operation interface (src/er_op.h). */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../host/er_bel.h"
#include "../host/er_msg.h"
#include "op_impl.h"
#include "exactref/formats.h"

#define msgf er_msgf

er_optensor er_optensor_make(int format, int ndim, const int64_t *shape, void *data)
{
    er_optensor t;
    memset(&t, 0, sizeof t);
    t.format = format;
    t.ndim = ndim < 0 ? 0 : ndim > ER_OP_MAXDIM ? ER_OP_MAXDIM : ndim;
    t.data = data;
    for (int d = 0; d < t.ndim; d++) t.shape[d] = shape[d];
    int64_t s = 1;
    for (int d = t.ndim - 1; d >= 0; d--) {
        t.strides[d] = s;
        if (__builtin_mul_overflow(s, t.shape[d], &s)) s = INT64_MAX; /* er_op_call refuses such a shape */
    }
    return t;
}

er_optensor er_optensor_of(const er_tensor *t)
{
    er_optensor o;
    memset(&o, 0, sizeof o);
    o.format = t->format;
    o.ndim = t->ndim < 0 ? 0 : t->ndim > 3 ? 3 : t->ndim;
    o.data = t->data;
    for (int d = 0; d < o.ndim; d++) {
        o.shape[d] = t->shape[d];
        o.strides[d] = t->strides[d];
    }
    return o;
}

int64_t er_optensor_count(const er_optensor *t)
{
    int64_t n = 1;
    for (int d = 0; d < t->ndim; d++)
        if (__builtin_mul_overflow(n, t->shape[d], &n)) n = INT64_MAX; /* no wrap: er_op_call refuses it */
    return n;
}

/* ---- the call ---- */

static er_status parse_options(er_opres *r, const char *options, char *msg, size_t msg_size)
{
    const char *p = options ? options : "";
    r->nopt = 0;
    while (*p) {
        while (*p == ' ' || *p == ',') p++;
        if (!*p) break;
        const char *e = strchr(p, ',');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        const char *eq = memchr(p, '=', n);
        if (!eq || eq == p)
            return msgf(msg, msg_size, ER_EINVAL, "%s: option '%.*s' is not key=value", r->def->name, (int)n, p);
        size_t kn = (size_t)(eq - p), vn = n - kn - 1;
        while (kn > 0 && p[kn - 1] == ' ') kn--;
        if (r->nopt >= ER_OP_MAXOPT)
            return msgf(msg, msg_size, ER_EINVAL, "%s: more than %d options", r->def->name, ER_OP_MAXOPT);
        er_opopt *o = &r->opt[r->nopt];
        if (kn >= sizeof o->key || vn >= sizeof o->val)
            return msgf(msg, msg_size, ER_EINVAL, "%s: option '%.*s' is too long", r->def->name, (int)n, p);
        memcpy(o->key, p, kn);
        o->key[kn] = 0;
        memcpy(o->val, eq + 1, vn);
        o->val[vn] = 0;
        o->used = 0;
        for (int i = 0; i < r->nopt; i++)
            if (!strcmp(r->opt[i].key, o->key))
                return msgf(msg, msg_size, ER_EINVAL, "%s: option %s is given twice", r->def->name, o->key);
        r->nopt++;
        p += n;
    }
    return ER_OK;
}

static int fmt_precision(int fmt)
{
    er_format_info fi;
    if (er_format_get_info(fmt, &fi) != ER_OK) return 0;
    return fi.significand_bits + 1;
}

/* whether input i of def is a mask (attention's attn_mask: boolean or float) */
static int mask_role(const er_opdef *def, int i)
{
    const char *n = def->input_names ? def->input_names[i] : NULL;
    size_t l = n ? strlen(n) : 0;
    return l >= 4 && strcmp(n + l - 4, "mask") == 0;
}

er_status er_op_call_nd(const char *op, int ninputs, const er_optensor *const *inputs, const char *options,
                        er_opres **out, char *msg, size_t msg_size)
{
    er_status st;
    if (!out) return msgf(msg, msg_size, ER_EINVAL, "er_op_call: no place for the result");
    *out = NULL;
    if (!op) return msgf(msg, msg_size, ER_EINVAL, "er_op_call: no operation named");
    const er_opdef *def = er_ops_find(op);
    if (!def)
        return msgf(msg, msg_size, ER_EINVAL, "unknown operation '%s' (the operations: %s)", op, er_op_names());
    if (!def->create)
        return msgf(msg, msg_size, ER_EUNSUPPORTED, "operation '%s' is not implemented in this build", op);
    if (ninputs < def->min_inputs || ninputs > def->max_inputs || (ninputs > 0 && !inputs))
        return msgf(msg, msg_size, ER_EINVAL, "%s takes %d to %d inputs, not %d", op, def->min_inputs,
                    def->max_inputs, ninputs);
    er_opres *r = (er_opres *)calloc(1, sizeof *r);
    if (!r) return msgf(msg, msg_size, ER_ENOMEM, "out of memory");
    r->def = def;
    r->ninputs = def->max_inputs;
    int widest = -1, wp = 0;
    for (int i = 0; i < ninputs; i++) {
        if (!inputs[i]) {
            if (i < def->min_inputs) {
                st = msgf(msg, msg_size, ER_EINVAL, "%s: input %d (%s) is required", op, i,
                          def->input_names ? def->input_names[i] : "?");
                goto fail;
            }
            continue;
        }
        if (inputs[i]->ndim < 0 || inputs[i]->ndim > ER_OP_MAXDIM || (!inputs[i]->data && er_optensor_count(inputs[i]))) {
            st = msgf(msg, msg_size, ER_EINVAL, "%s: input %d (%s) has no data or %d dimensions", op, i,
                      def->input_names ? def->input_names[i] : "?", inputs[i]->ndim);
            goto fail;
        }
        /* every dimension >= 0 and the count small enough for (size_t) count * 16 bytes: no wrapped
         * count (a 2^80-element tensor read as 0 elements) and no negative extent read as data */
        for (int d = 0, nd = inputs[i]->ndim; d < nd; d++)
            if (inputs[i]->shape[d] < 0) {
                st = msgf(msg, msg_size, ER_EINVAL, "%s: input %d (%s) has dimension %d of size %lld (negative)", op, i,
                          def->input_names ? def->input_names[i] : "?", d, (long long)inputs[i]->shape[d]);
                goto fail;
            }
        {
            int64_t n = 1, cap = (int64_t)((SIZE_MAX / 16 < (size_t)INT64_MAX ? SIZE_MAX / 16 : (size_t)INT64_MAX / 16));
            int zero = 0, big = 0;
            for (int d = 0; d < inputs[i]->ndim; d++) {
                int64_t m = inputs[i]->shape[d];
                if (m == 0) zero = 1;
                else if (n > cap / m) big = 1;
                else n *= m;
            }
            if (big && !zero) {
                st = msgf(msg, msg_size, ER_EINVAL, "%s: input %d (%s) has more elements than this machine can address",
                          op, i, def->input_names ? def->input_names[i] : "?");
                goto fail;
            }
        }
        er_format_info fi;
        if (er_format_get_info(inputs[i]->format, &fi) != ER_OK) {
            st = msgf(msg, msg_size, ER_EINVAL, "%s: input %d (%s) has an unknown format %d", op, i,
                      def->input_names ? def->input_names[i] : "?", inputs[i]->format);
            goto fail;
        }
        if (fi.kind != ER_KIND_FLOAT && !mask_role(def, i)) {
            /* every operation computes on float inputs; only a mask may be boolean or integer */
            st = msgf(msg, msg_size, ER_EINVAL,
                      "%s: input %d (%s) has format %s, which is not a float format; %s takes float inputs (f32, bf16, "
                      "f16, ...)",
                      op, i, def->input_names ? def->input_names[i] : "?", fi.name ? fi.name : "?", op);
            goto fail;
        }
        r->in[i] = *inputs[i];
        r->has_in[i] = 1;
        if (fi.kind == ER_KIND_FLOAT && fi.significand_bits + 1 > wp) {
            wp = fi.significand_bits + 1;
            widest = inputs[i]->format;
        }
    }
    r->default_compute = wp > 24 ? widest : ER_FMT_F32;
    if ((st = parse_options(r, options, msg, msg_size)) != ER_OK) goto fail;
    if ((st = def->create(r, msg, msg_size)) != ER_OK) goto fail;
    for (int i = 0; i < r->nopt; i++)
        if (!r->opt[i].used) {
            st = msgf(msg, msg_size, ER_EINVAL, "%s: unknown option '%s'", op, r->opt[i].key);
            goto fail;
        }
    *out = r;
    return ER_OK;
fail:
    er_opres_free(r);
    return st;
}

er_status er_op_call(const char *op, int ninputs, const er_tensor *const *inputs, const char *options,
                     er_opres **out, char *msg, size_t msg_size)
{
    er_optensor t[ER_OP_MAXIN];
    const er_optensor *p[ER_OP_MAXIN];
    if (ninputs > ER_OP_MAXIN || ninputs < 0)
        return msgf(msg, msg_size, ER_EINVAL, "%s: %d inputs (at most %d)", op ? op : "?", ninputs, ER_OP_MAXIN);
    for (int i = 0; i < ninputs; i++) {
        p[i] = NULL;
        if (inputs && inputs[i]) {
            t[i] = er_optensor_of(inputs[i]);
            p[i] = &t[i];
        }
    }
    /* the descriptors are copied by the call: the tensors' data must stay valid, not these */
    return er_op_call_nd(op, ninputs, p, options, out, msg, msg_size);
}

er_status er_op_call_from(const char *op, int ninputs, const er_opinput *inputs, const er_tol_opts *from_opts,
                          const char *options, er_opres **out, char *msg, size_t msg_size)
{
    er_optensor t[ER_OP_MAXIN];
    const er_optensor *p[ER_OP_MAXIN];
    double *slack[ER_OP_MAXIN] = {NULL};
    er_tol_opts def;
    er_status st = ER_OK;
    if (out) *out = NULL;
    if (ninputs > ER_OP_MAXIN || ninputs < 0 || (ninputs && !inputs))
        return msgf(msg, msg_size, ER_EINVAL, "%s: %d inputs (at most %d)", op ? op : "?", ninputs, ER_OP_MAXIN);
    if (!from_opts) {
        er_tol_opts_init(&def);
        from_opts = &def;
    }
    for (int i = 0; i < ninputs; i++) {
        const er_opinput *in = &inputs[i];
        er_op from;
        int k;
        p[i] = NULL;
        if (in->tensor) {
            p[i] = in->tensor;
            continue;
        }
        if (in->result) {
            er_result_as_op(in->result, &from);
            t[i] = er_optensor_of(er_result_rounded(in->result));
            k = 0;
        } else if (in->opres) {
            if (in->output < 0 || in->output >= in->opres->nout) {
                st = msgf(msg, msg_size, ER_EINVAL, "%s: input %d: %s has no output %d", op ? op : "?", i,
                          in->opres->def->name, in->output);
                goto fail;
            }
            er_opres_as_op(in->opres, &from);
            t[i] = in->opres->out[in->output];
            k = in->output;
        } else {
            continue; /* absent */
        }
        p[i] = &t[i];
        if ((st = er_op_slack(&from, k, from_opts, &slack[i], msg, msg_size)) != ER_OK) goto fail;
    }
    er_opres *r = NULL;
    if ((st = er_op_call_nd(op, ninputs, p, options, &r, msg, msg_size)) != ER_OK) goto fail;
    int any = 0;
    for (int i = 0; i < ninputs; i++) any |= slack[i] != NULL;
    if (any && !r->takes_from) {
        er_opres_free(r);
        st = msgf(msg, msg_size, ER_EUNSUPPORTED, "%s does not take results as inputs%s", op,
                  !strcmp(op, "linear") ? " (judge the product with matmul's er_result_create_from)" : "");
        goto fail;
    }
    for (int i = 0; i < ninputs; i++) {
        r->slack[i] = slack[i];
        r->from_opres[i] = inputs[i].tensor ? NULL : inputs[i].opres; /* for normal() (op_normal.c) */
        r->from_output[i] = inputs[i].output;
        r->from_result[i] = inputs[i].tensor ? NULL : inputs[i].result;
    }
    *out = r;
    return ER_OK;
fail:
    for (int i = 0; i < ER_OP_MAXIN; i++) free(slack[i]);
    return st;
}

void er_opres_free(er_opres *r)
{
    if (!r) return;
    for (int i = 0; i < ER_OP_MAXIN; i++) free(r->slack[i]);
    for (int i = 0; i < ER_OP_MAXOUT; i++) {
        free(r->out[i].data);
        free(r->xlo[i]);
        free(r->xhi[i]);
    }
    if (r->state && r->def->free_state) r->def->free_state(r->state);
    for (er_opbounds_entry *e = r->bounds, *n; e; e = n) {
        n = e->next;
        free(e->b.radius);
        free(e->b.tolerance);
        free(e->b.low);
        free(e->b.high);
        free(e->b.has_range);
        free(e->b.may_pinf);
        free(e->b.may_ninf);
        free(e->b.may_nan);
        free(e);
    }
    free(r);
}

/* ---- accessors ---- */

const char *er_opres_op(const er_opres *r) { return r ? r->def->name : NULL; }
const char *er_opres_guarantee(const er_opres *r) { return r ? "correctly_rounded" : NULL; }
int er_opres_outputs(const er_opres *r) { return r ? r->nout : 0; }

const char *er_opres_output_name(const er_opres *r, int i)
{
    if (!r || i < 0 || i >= r->nout) return NULL;
    return r->def->output_names[i];
}

int er_opres_output_index(const er_opres *r, const char *name)
{
    if (!r || !name) return -1;
    for (int i = 0; i < r->nout; i++)
        if (!strcmp(r->def->output_names[i], name)) return i;
    return -1;
}

const er_optensor *er_opres_rounded(const er_opres *r, int i)
{
    if (!r || i < 0 || i >= r->nout) return NULL;
    return &r->out[i];
}

int64_t er_opres_count(const er_opres *r, int i)
{
    if (!r || i < 0 || i >= r->nout) return 0;
    return er_optensor_count(&r->out[i]);
}

er_status er_opres_exact(const er_opres *r, int i, double *lo, double *hi, char *msg, size_t msg_size)
{
    if (!r || i < 0 || i >= r->nout)
        return msgf(msg, msg_size, ER_EINVAL, "exact: output %d out of range", i);
    int64_t n = er_optensor_count(&r->out[i]);
    if (lo) memcpy(lo, r->xlo[i], sizeof(double) * (size_t)n);
    if (hi) memcpy(hi, r->xhi[i], sizeof(double) * (size_t)n);
    return ER_OK;
}

int er_opres_boundaries(const er_opres *r, const er_boundary **list)
{
    if (!r) {
        if (list) *list = NULL;
        return 0;
    }
    if (list) *list = r->def->boundaries;
    return r->def->nboundaries;
}

int er_opres_default_compute(const er_opres *r) { return r ? r->default_compute : -1; }

/* ---- bounds ---- */

static int same_opts(const er_tol_opts *a, const er_tol_opts *b)
{
    const er_standard *x = &a->standard, *y = &b->standard;
    return a->compute == b->compute && er_b_bits(a->ulps) == er_b_bits(b->ulps) &&
           a->flush_to_zero == b->flush_to_zero && x->kind == y->kind && !strcmp(x->name, y->name) && x->k == y->k &&
           x->F == y->F && x->out_p == y->out_p && x->out_round == y->out_round && x->promote == y->promote &&
           x->group == y->group && x->floor_terms == y->floor_terms && x->tf32_inputs == y->tf32_inputs &&
           x->acc_fmt == y->acc_fmt && x->F2 == y->F2 && x->two_stage == y->two_stage && x->bk == y->bk &&
           x->split == y->split;
}

static er_status alloc_bounds(er_bounds *b, int64_t n)
{
    size_t c = (size_t)(n ? n : 1);
    memset(b, 0, sizeof *b);
    b->count = n;
    b->radius = (double *)malloc(c * sizeof(double));
    b->tolerance = (double *)malloc(c * sizeof(double));
    b->low = (uint64_t *)malloc(c * sizeof(uint64_t));
    b->high = (uint64_t *)malloc(c * sizeof(uint64_t));
    b->has_range = (unsigned char *)malloc(c);
    b->may_pinf = (unsigned char *)malloc(c);
    b->may_ninf = (unsigned char *)malloc(c);
    b->may_nan = (unsigned char *)malloc(c);
    if (!b->radius || !b->tolerance || !b->low || !b->high || !b->has_range || !b->may_pinf || !b->may_ninf ||
        !b->may_nan)
        return ER_ENOMEM;
    return ER_OK;
}

static void free_bounds(er_bounds *b)
{
    free(b->radius);
    free(b->tolerance);
    free(b->low);
    free(b->high);
    free(b->has_range);
    free(b->may_pinf);
    free(b->may_ninf);
    free(b->may_nan);
}

typedef struct finish_job {
    er_opres *r;
    int i;
    er_bpar c;
    const double *lo, *hi;
    const unsigned char *flags;
    er_bounds *b;
    int64_t off; /* lo, hi, flags and b hold elements off, off + 1, ... */
} finish_job;

static er_status finish_range(void *ctx, int64_t e0, int64_t e1, char *msg, size_t msg_size)
{
    finish_job *j = (finish_job *)ctx;
    (void)msg;
    (void)msg_size;
    const er_optensor *R = &j->r->out[j->i]; /* contiguous (er_ops_alloc_output) */
    er_format_info fi;
    er_format_get_info(R->format, &fi);
    int sb = fi.storage_bytes;
    for (int64_t e = e0; e < e1; e++) {
        er_bel bel;
        int64_t k = e - j->off;
        uint64_t rb = sb == 2   ? ((const uint16_t *)R->data)[e]
                      : sb == 4 ? ((const uint32_t *)R->data)[e]
                                : er_ops_load(R, e);
        double xl = j->r->xlo[j->i][e], xh = j->r->xhi[j->i][e], l = j->lo[k], h = j->hi[k];
        int nf = (j->flags[k] & ER_OPB_NONFINITE) != 0, un = (j->flags[k] & ER_OPB_UNCERTAIN) != 0;
        if (j->flags[k] & ER_OPB_EMPTY) { /* op_impl.h: +-0 and NaN, and the infinities lo, hi name */
            bel.radius = ER_B_INF;
            bel.tolerance = ER_B_NAN;
            bel.flags = ER_BF_RANGE | ER_BF_NAN | (l == -ER_B_INF ? ER_BF_NINF : 0u) | (h == ER_B_INF ? ER_BF_PINF : 0u);
            bel.low = bel.high = er_ops_rn_bits(R->format, 0.0);
            er_bel_store(j->b, k, &bel);
            continue;
        }
        double rad = ER_B_INF;
        if (!nf && er_b_finite(xl) && er_b_finite(xh) && er_b_finite(l) && er_b_finite(h)) {
            double d1 = er_b_up(h - xl), d2 = er_b_up(xh - l);
            rad = d1 > d2 ? d1 : d2;
            if (rad < 0) rad = 0;
        }
        er_ops_finish_fast_inl(&j->c, rb, l, h, rad, nf || un, un, &bel);
        er_bel_store(j->b, k, &bel);
    }
    return ER_OK;
}

/* The cached bounds of output i under key (resolved), or NULL. */
static const er_bounds *bounds_cached(const er_opres *r, int i, const er_tol_opts *key)
{
    for (er_opbounds_entry *e = r->bounds; e; e = e->next)
        if (e->output == i && same_opts(&e->o, key)) return &e->b;
    return NULL;
}

/* key: o resolved (NULL: the defaults; compute -1: the result's default) */
static void resolve_opts(const er_opres *r, const er_tol_opts *o, er_tol_opts *key)
{
    if (o) *key = *o;
    else er_tol_opts_init(key);
    if (key->compute < 0) key->compute = r->default_compute;
}

/* The bounds' environment of output i under key (env->o points to key) and the finish's parameters c; the
 * standard and compute format checked. */
static er_status op_env(const er_opres *r, int i, const er_tol_opts *key, er_openv *env, er_bpar *c, char *msg,
                        size_t msg_size)
{
    if (!((r->def->standards >> (key->standard.kind & 31)) & 1u) || key->standard.kind < 0 || key->standard.kind > 31)
        return msgf(msg, msg_size, ER_EINVAL, "%s does not take the standard '%s': it takes %s", r->def->name,
                    key->standard.name, r->def->standard_names);
    er_format_info oi;
    er_status st = er_ops_env(r, key, env, msg, msg_size); /* key->compute is resolved: the compute format */
    if (st != ER_OK) return st;
    er_format_get_info(r->out[i].format, &oi);
    if (!(key->ulps == key->ulps))
        return msgf(msg, msg_size, ER_EINVAL, "%s: ulps is NaN", r->def->name);
    memset(c, 0, sizeof *c);
    c->out_fmt = r->out[i].format;
    c->dir = ER_RND_NEAREST_EVEN;
    c->opts = 0u;
    c->max_c = env->max_c;
    er_from_bits(r->out[i].format, oi.max_finite_bits, &c->maxo);
    return ER_OK;
}

er_status er_opres_bounds(er_opres *r, int i, const er_tol_opts *o, const er_bounds **out, char *msg,
                          size_t msg_size)
{
    er_tol_opts key;
    er_status st;
    if (!r || !out) return msgf(msg, msg_size, ER_EINVAL, "bounds: no result");
    if (i < 0 || i >= r->nout)
        return msgf(msg, msg_size, ER_EINVAL, "%s has %d output(s); output %d is out of range", r->def->name, r->nout, i);
    resolve_opts(r, o, &key);
    if ((*out = bounds_cached(r, i, &key)) != NULL) return ER_OK;
    er_openv env;
    er_bpar c;
    if ((st = op_env(r, i, &key, &env, &c, msg, msg_size)) != ER_OK) return st;

    int64_t n = er_optensor_count(&r->out[i]);
    size_t cnt = (size_t)(n ? n : 1);
    double *lo = (double *)malloc(cnt * sizeof(double)), *hi = (double *)malloc(cnt * sizeof(double));
    unsigned char *fl = (unsigned char *)calloc(cnt, 1);
    er_opbounds_entry *ent = (er_opbounds_entry *)calloc(1, sizeof *ent);
    if (!lo || !hi || !fl || !ent || alloc_bounds(&ent->b, n) != ER_OK) {
        st = msgf(msg, msg_size, ER_ENOMEM, "%s: out of memory for the bounds of %lld elements", r->def->name,
                  (long long)n);
        goto done;
    }
    if (r->bounds_full) { /* the operation's own er_bounds (linear: matmul's) */
        if ((st = r->bounds_full(r, i, &key, &ent->b, msg, msg_size)) != ER_OK) goto done;
        goto keep;
    }
    if ((st = r->def->bounds(r, i, &env, lo, hi, fl, msg, msg_size)) != ER_OK) goto done;
    finish_job j = {.r = r, .i = i, .c = c, .lo = lo, .hi = hi, .flags = fl, .b = &ent->b};
    if ((st = er_ops_parallel(n, 4096, finish_range, &j, msg, msg_size)) != ER_OK) goto done;
keep:
    ent->o = key;
    ent->output = i;
    ent->next = r->bounds;
    r->bounds = ent;
    ent = NULL;
    *out = &r->bounds->b;
done:
    if (ent) {
        free_bounds(&ent->b);
        free(ent);
    }
    free(lo);
    free(hi);
    free(fl);
    return st;
}

/* output as the 2-D/3-D view of output i (r->view[i]'s shape), copied when its strides cannot be
 * collapsed; *buf receives the copy (free it) */
static er_status as_view(er_opres *r, int i, const er_optensor *output, er_tensor *v, void **buf, char *msg,
                         size_t msg_size)
{
    const er_optensor *R = &r->out[i];
    *buf = NULL;
    if (!output || !output->data)
        return msgf(msg, msg_size, ER_EINVAL, "%s: no output tensor to check", r->def->name);
    if (output->format != R->format)
        return msgf(msg, msg_size, ER_EINVAL, "%s: the output is %s, the result's output '%s' is %s", r->def->name,
                    er_format_name(output->format) ? er_format_name(output->format) : "?", r->def->output_names[i],
                    er_format_name(R->format));
    int same = output->ndim == R->ndim;
    for (int d = 0; same && d < R->ndim; d++) same = output->shape[d] == R->shape[d];
    if (!same) {
        char a[160] = "", b[160] = "";
        for (int d = 0; d < output->ndim && strlen(a) < 140; d++)
            snprintf(a + strlen(a), sizeof a - strlen(a), "%s%lld", d ? "x" : "", (long long)output->shape[d]);
        for (int d = 0; d < R->ndim && strlen(b) < 140; d++)
            snprintf(b + strlen(b), sizeof b - strlen(b), "%s%lld", d ? "x" : "", (long long)R->shape[d]);
        return msgf(msg, msg_size, ER_EINVAL, "%s: the output's shape (%s) is not the result's output '%s' (%s)",
                    r->def->name, output->ndim ? a : "scalar", r->def->output_names[i], R->ndim ? b : "scalar");
    }
    *v = r->view[i];
    if (output->ndim >= 2 && output->ndim <= 3) {
        v->data = output->data;
        for (int d = 0; d < output->ndim; d++) v->strides[d] = output->strides[d];
        return ER_OK;
    }
    if (output->ndim == 1) {
        v->data = output->data;
        v->strides[0] = 0;
        v->strides[1] = output->strides[0];
        return ER_OK;
    }
    if (output->ndim == 0) {
        v->data = output->data;
        return ER_OK;
    }
    /* more than 3 dimensions: a contiguous copy */
    er_format_info fi;
    er_format_get_info(output->format, &fi);
    int64_t n = er_optensor_count(output);
    er_optensor c = er_optensor_make(output->format, output->ndim, output->shape, NULL);
    c.data = malloc((size_t)(n ? n : 1) * (size_t)fi.storage_bytes);
    if (!c.data) return msgf(msg, msg_size, ER_ENOMEM, "out of memory");
    for (int64_t e = 0; e < n; e++) er_ops_store(&c, e, er_ops_load(output, e));
    *buf = c.data;
    v->data = c.data;
    return ER_OK;
}

/* ---- the fused check: bounds, finish, covers and scoring a block of rows at a time ----
 *
 * Where the operation makes its bounds a row at a time (r->bounds_rows) and the bounds
 * for the options are not cached yet, covers and the report never build the whole er_bounds arrays: each
 * block of rows gets its op bounds, finish (finish_range, the same per element), covers
 * (er_bounds_covers) and scoring (er_check_report_score) while it is in the cache, on the threads of
 * er_ops_parallel; the blocks' reports are merged in order (er_check_report_merge, which gives the
 * one-shot report, and er_check_report_narrower the hint).  The decisions are the same element by element;
 * tests/ops/test_ops_fused.c compares both paths' reports. */

#define FUSED_BLOCK 16384 /* output elements per block, about 0.7 MiB of scratch per thread */

typedef struct fused_job {
    er_opres *r;
    int i;
    const er_openv *env;
    er_bpar c;
    const er_tensor *v;     /* the output, contiguous */
    int64_t n, per, nv;     /* elements, elements per block, the view's row length */
    int64_t unit;           /* the output elements of one row of the operation */
    unsigned char *covered; /* every element's decision */
    int64_t *outside;       /* per block */
    er_check_report *parts; /* per block; NULL: covers only */
} fused_job;

/* elements [e0, e1) (whole rows of length nv) of a contiguous 2-D/3-D tensor as a 2-D tensor */
static er_tensor rows_of(const er_tensor *v, int64_t e0, int64_t e1, int64_t nv)
{
    er_format_info fi;
    er_format_get_info(v->format, &fi);
    er_tensor t = *v;
    t.ndim = 2;
    t.shape[0] = (e1 - e0) / nv;
    t.shape[1] = nv;
    t.shape[2] = 0;
    t.strides[0] = nv;
    t.strides[1] = 1;
    t.strides[2] = 0;
    t.data = (char *)v->data + e0 * (int64_t)fi.storage_bytes;
    return t;
}

static er_status fused_blocks(void *ctx, int64_t b0, int64_t b1, char *msg, size_t msg_size)
{
    fused_job *j = (fused_job *)ctx;
    er_opres *r = j->r;
    size_t cap = (size_t)j->per;
    double *lo = (double *)malloc(cap * sizeof(double)), *hi = (double *)malloc(cap * sizeof(double));
    unsigned char *fl = (unsigned char *)malloc(cap);
    er_bounds bd;
    er_ops_scratch sc; /* the thread's memo of exp and row buffers, kept over its blocks */
    er_status st = ER_OK;
    memset(&sc, 0, sizeof sc);
    if (!lo || !hi || !fl || alloc_bounds(&bd, j->per) != ER_OK) {
        st = msgf(msg, msg_size, ER_ENOMEM, "%s: out of memory for the check's blocks", r->def->name);
        goto done;
    }
    for (int64_t b = b0; b < b1; b++) {
        int64_t e0 = b * j->per, e1 = e0 + j->per < j->n ? e0 + j->per : j->n, cnt = e1 - e0;
        memset(fl, 0, (size_t)cnt);
        if ((st = r->bounds_rows(r, j->i, j->env, e0 / j->unit, e1 / j->unit, e0, &sc, lo, hi, fl, msg, msg_size)) !=
            ER_OK)
            goto done;
        finish_job f;
        memset(&f, 0, sizeof f);
        f.r = r;
        f.i = j->i;
        f.c = j->c;
        f.lo = lo;
        f.hi = hi;
        f.flags = fl;
        f.b = &bd;
        f.off = e0;
        finish_range(&f, e0, e1, msg, msg_size);
        bd.count = cnt;
        er_tensor ov = rows_of(j->v, e0, e1, j->nv);
        if ((st = er_bounds_covers(&bd, &ov, 0, j->covered + e0, &j->outside[b], msg, msg_size)) != ER_OK) goto done;
        if (j->parts) {
            er_tensor rv = rows_of(&r->view[j->i], e0, e1, j->nv);
            if ((st = er_check_report_score(&bd, &ov, &rv, j->covered + e0, j->outside[b], NULL, NULL, NULL, 0,
                                            &j->parts[b], msg, msg_size)) != ER_OK)
                goto done;
        }
    }
done:
    er_ops_scratch_free(&sc);
    if (lo && hi && fl) free_bounds(&bd);
    free(lo);
    free(hi);
    free(fl);
    return st;
}

/* the options' refusals (standard, compute, ulps) before the output's, as er_opres_bounds gives them */
static er_status opts_ok(er_opres *r, int i, const er_tol_opts *o, char *msg, size_t msg_size)
{
    er_tol_opts key;
    er_openv env;
    er_bpar c;
    resolve_opts(r, o, &key);
    if (bounds_cached(r, i, &key)) return ER_OK;
    return op_env(r, i, &key, &env, &c, msg, msg_size);
}

static int64_t gcd64(int64_t a, int64_t b)
{
    while (b) {
        int64_t t = a % b;
        a = b;
        b = t;
    }
    return a;
}

/*
 * The fused check of output v (output i's view, any strides) under o: *done 0 and nothing else when it
 * does not apply (no bounds_rows, the bounds already cached, a strided output, a row too long); else
 * covered (every element), *outside, and with rep the report (outside_index as er_opres_report's).
 */
static er_status fused_check(er_opres *r, int i, const er_tol_opts *o, const er_tensor *v, unsigned char *covered,
                             int64_t *outside, er_check_report *rep, int64_t *outside_index, int64_t outside_cap,
                             int *done, char *msg, size_t msg_size)
{
    er_tol_opts key;
    er_openv env;
    er_status st;
    *done = 0;
    const char *no = getenv("EXACTREF_NO_FUSED"); /* set (not empty): the array path, for measurements */
    if (!r->bounds_rows || r->bounds_full || r->range_unit[i] <= 0 || (no && *no)) return ER_OK;
    resolve_opts(r, o, &key);
    if (bounds_cached(r, i, &key)) return ER_OK; /* the kept arrays are faster to read */
    if (v->ndim < 2 || v->ndim > 3) return ER_OK;
    int64_t n = 1, want = 1;
    for (int d = v->ndim - 1; d >= 0; d--) { /* row-major and contiguous (a dimension of 1: any stride) */
        if (v->shape[d] != 1 && v->strides[d] != want) return ER_OK;
        want *= v->shape[d];
        n *= v->shape[d];
    }
    int64_t nv = v->shape[v->ndim - 1], unit = r->range_unit[i];
    if (n == 0 || nv == 0) return ER_OK;
    int64_t g = gcd64(unit, nv), per = unit / g * nv; /* the least whole block of both rows */
    if (per > (int64_t)1 << 24) return ER_OK;
    if (per < FUSED_BLOCK) per *= FUSED_BLOCK / per;
    fused_job j;
    memset(&j, 0, sizeof j);
    if ((st = op_env(r, i, &key, &env, &j.c, msg, msg_size)) != ER_OK) return st;
    int64_t nb = (n + per - 1) / per;
    j.r = r;
    j.i = i;
    j.env = &env;
    j.v = v;
    j.n = n;
    j.per = per;
    j.unit = unit;
    j.nv = nv;
    j.covered = covered;
    j.outside = (int64_t *)calloc((size_t)nb, sizeof(int64_t));
    j.parts = rep ? (er_check_report *)calloc((size_t)nb, sizeof(er_check_report)) : NULL;
    if (!j.outside || (rep && !j.parts)) {
        free(j.outside);
        free(j.parts);
        return msgf(msg, msg_size, ER_ENOMEM, "out of memory");
    }
    st = er_ops_parallel(nb, 1, fused_blocks, &j, msg, msg_size);
    int64_t total = 0;
    for (int64_t b = 0; b < nb; b++) total += j.outside[b];
    if (st == ER_OK && rep) {
        er_check_report_merge_init(rep, v->ndim, v->shape, v->format);
        for (int64_t b = 0; b < nb && st == ER_OK; b++)
            st = er_check_report_merge(rep, &j.parts[b], covered + b * per, NULL, outside_index, outside_cap, msg,
                                       msg_size);
        if (st == ER_OK) st = er_check_report_narrower(rep, v, &r->view[i], -1, -1, msg, msg_size);
    }
    free(j.outside);
    free(j.parts);
    if (st != ER_OK) return st;
    if (outside) *outside = total;
    *done = 1;
    return ER_OK;
}

er_status er_opres_covers(er_opres *r, int i, const er_tol_opts *o, const er_optensor *output,
                          unsigned char *covered, int64_t *outside, char *msg, size_t msg_size)
{
    const er_bounds *bd;
    er_tensor v;
    void *buf;
    er_status st;
    int done = 0;
    if (!r || i < 0 || i >= r->nout) return er_opres_bounds(r, i, o, &bd, msg, msg_size); /* its message */
    if ((st = opts_ok(r, i, o, msg, msg_size)) != ER_OK) return st;
    if ((st = as_view(r, i, output, &v, &buf, msg, msg_size)) != ER_OK) return st;
    int64_t count = er_optensor_count(&r->out[i]);
    unsigned char *cv = covered;
    if (!cv && !(cv = (unsigned char *)malloc((size_t)(count ? count : 1)))) {
        free(buf);
        return msgf(msg, msg_size, ER_ENOMEM, "out of memory");
    }
    st = fused_check(r, i, o, &v, cv, outside, NULL, NULL, 0, &done, msg, msg_size);
    if (st == ER_OK && !done && (st = er_opres_bounds(r, i, o, &bd, msg, msg_size)) == ER_OK)
        st = er_bounds_covers(bd, &v, 0, cv, outside, msg, msg_size);
    if (cv != covered) free(cv);
    free(buf);
    return st;
}

er_status er_opres_report(er_opres *r, int i, const er_tol_opts *o, const er_optensor *output,
                          int64_t *outside_index, int64_t outside_cap, er_check_report *rep, char *msg,
                          size_t msg_size)
{
    const er_bounds *bd;
    er_tensor v;
    void *buf;
    er_status st;
    int64_t outside = 0;
    int done = 0;
    if (!rep) return msgf(msg, msg_size, ER_EINVAL, "report: no report to fill");
    if (!r || i < 0 || i >= r->nout) return er_opres_bounds(r, i, o, &bd, msg, msg_size); /* its message */
    if ((st = opts_ok(r, i, o, msg, msg_size)) != ER_OK) return st;
    if ((st = as_view(r, i, output, &v, &buf, msg, msg_size)) != ER_OK) return st;
    int64_t count = er_optensor_count(&r->out[i]);
    unsigned char *cv = (unsigned char *)malloc((size_t)(count ? count : 1));
    if (!cv) {
        free(buf);
        return msgf(msg, msg_size, ER_ENOMEM, "out of memory");
    }
    st = fused_check(r, i, o, &v, cv, &outside, rep, outside_index, outside_cap, &done, msg, msg_size);
    if (st == ER_OK && !done && (st = er_opres_bounds(r, i, o, &bd, msg, msg_size)) == ER_OK)
        st = er_bounds_covers(bd, &v, 0, cv, &outside, msg, msg_size);
    if (st == ER_OK && !done)
        st = er_check_report_score(bd, &v, &r->view[i], cv, outside, NULL, NULL, outside_index, outside_cap, rep, msg,
                                   msg_size);
    free(cv);
    free(buf);
    return st;
}

/* ---- through the operation interface (src/er_op.h) ---- */

static int oi_outputs(const void *self) { return er_opres_outputs((const er_opres *)self); }
static const char *oi_output_name(const void *self, int i) { return er_opres_output_name((const er_opres *)self, i); }

static const er_tensor *oi_single(const void *self, int i)
{
    const er_opres *r = (const er_opres *)self;
    return i >= 0 && i < r->nout ? &r->view[i] : NULL;
}

static er_status oi_bounds_of(void *self, int i, const er_tol_opts *o, const er_bounds **out, char *msg,
                              size_t msg_size)
{
    return er_opres_bounds((er_opres *)self, i, o, out, msg, msg_size);
}

static void oi_keep(void *self) { (void)self; }

static const er_op_class opres_same_class;

static er_status oi_with_bounds(void *self, const er_tol_opts *o, er_op *out, char *msg, size_t msg_size)
{
    (void)o;
    (void)msg;
    (void)msg_size;
    /* a result on arrays: its bounds are its own under any options (the same result) */
    out->cls = &opres_same_class;
    out->self = self;
    return ER_OK;
}

static const er_op_class opres_same_class = {"op", oi_outputs, oi_output_name, oi_single, oi_bounds_of,
                                             oi_with_bounds, oi_keep};

void er_opres_as_op(er_opres *r, er_op *op)
{
    op->cls = &opres_same_class;
    op->self = r;
}
