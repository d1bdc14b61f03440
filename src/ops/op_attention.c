/* op_attention.c: scaled_dot_product_attention(query, key, value, attn_mask?) with outputs "out" and "lse":
 * the exact value rounded once, and bounds under normal, any_order and flash (docs/ops/attention.md;
 * proof: docs/proofs/attention.md).  The arithmetic is op_attention_math.c's. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../host/er_msg.h"
#include "exactref/formats.h"
#include "op_attention.h"
#include "op_impl.h"
#include "../standards_internal.h"

#define msgf er_msgf

static const char *const at_inputs[] = {"query", "key", "value", "attn_mask"};
static const char *const at_outputs[] = {"out", "lse"};
static const er_boundary at_boundaries[] = {
    {"scores", "accumulate", "q . k per query row and key, a sum of products in compute (the standard's matmul)", "dot"},
    {"scale", "compute", "the scores times scale (and the descales), a mask added, the running max subtracted, in compute",
     "each score"},
    {"exp", "library", "exp or exp2 of the shifted score within ulps of compute (flush_to_zero: ftz)", "each score"},
    {"p", "cast", "P rounded to the value's format before P.V (flash: p=value|compute|<format>)", "each score"},
    {"rowsum", "accumulate", "the sum l of the P values in compute", "each row"},
    {"pv", "accumulate", "P . V in compute (the standard's matmul)", "dot"},
    {"rescale", "compute", "flash: O and l times exp(m_old - m_new) (exp within ulps) at each key block", "each row"},
    {"divide", "library", "O / l within ulps of compute (normal, any_order: each P / l)", "each element"},
    {"lse", "library", "lse = m + log(l), log within ulps of compute", "each row"},
    {"out", "cast", "the compute value rounded once to the output format (lse: binary32)", "each element"},
};

typedef struct at_state {
    er_attn_prob p;
    double *q, *k, *v, *mask;
    int out_fmt, v_fmt, ndim;
    /* the bounds last computed (both outputs at once), for the options o */
    int have;
    er_tol_opts o;
    double *blo, *bhi, *llo, *lhi;
    unsigned char *row_nan;
} at_state;

static void at_free(void *ptr)
{
    at_state *s = (at_state *)ptr;
    if (!s) return;
    er_attn_release(&s->p);
    free(s->q), free(s->k), free(s->v), free(s->mask);
    free(s->blo), free(s->bhi), free(s->llo), free(s->lhi), free(s->row_nan);
    free(s);
}

static int fmt_ok(int f)
{
    return f == ER_FMT_F32 || f == ER_FMT_BF16 || f == ER_FMT_F16 || f == ER_FMT_F8E4M3FN || f == ER_FMT_F8E5M2;
}

/* ---- the reference, rows in parallel ---- */

typedef struct at_job {
    er_opres *r;
    at_state *s;
    uint64_t *obits, *lbits;
    const er_attn_std *std;
} at_job;

static er_status at_ref_rows(void *ctx, int64_t r0, int64_t r1, char *msg, size_t msg_size)
{
    at_job *j = (at_job *)ctx;
    er_status st = er_attn_reference(&j->s->p, r0, r1, j->s->out_fmt, j->obits, j->r->xlo[0], j->r->xhi[0], j->lbits,
                                     j->r->xlo[1], j->r->xhi[1], msg, msg_size);
    er_ops_mp_thread_done();
    return st;
}

static er_status at_bound_rows(void *ctx, int64_t r0, int64_t r1, char *msg, size_t msg_size)
{
    at_job *j = (at_job *)ctx;
    at_state *s = j->s;
    return er_attn_bounds(&s->p, r0, r1, j->std, s->blo, s->bhi, s->llo, s->lhi, s->row_nan, msg, msg_size);
}

/* the shape of the 3-D or 4-D input t as (B, H, S, D) */
static void bhsd(const er_optensor *t, int64_t *B, int64_t *H, int64_t *S, int64_t *D)
{
    int n = t->ndim;
    *B = n == 4 ? t->shape[0] : 1;
    *H = t->shape[n - 3];
    *S = t->shape[n - 2];
    *D = t->shape[n - 1];
}

static er_status at_create(er_opres *r, char *msg, size_t msg_size)
{
    const er_optensor *q = &r->in[0], *k = &r->in[1], *v = &r->in[2];
    const er_optensor *m = r->has_in[3] ? &r->in[3] : NULL;
    er_status st;
    for (int x = 0; x < 3; x++) {
        if (r->in[x].ndim != 3 && r->in[x].ndim != 4)
            return msgf(msg, msg_size, ER_EINVAL, "attention: %s has %d dimensions; it takes (B, H, S, D) or (H, S, D)",
                        at_inputs[x], r->in[x].ndim);
        if (!fmt_ok(r->in[x].format))
            return msgf(msg, msg_size, ER_EINVAL, "attention: %s is %s; attention takes f32, bf16, f16, f8E4M3FN or f8E5M2",
                        at_inputs[x], er_format_name(r->in[x].format) ? er_format_name(r->in[x].format) : "?");
    }
    if (k->ndim != q->ndim || v->ndim != q->ndim)
        return msgf(msg, msg_size, ER_EINVAL, "attention: query, key and value must have the same number of dimensions");
    int64_t B, Hq, Sq, D, Bk, Hk, Sk, Dk, Bv, Hv, Sv, Dv;
    bhsd(q, &B, &Hq, &Sq, &D);
    bhsd(k, &Bk, &Hk, &Sk, &Dk);
    bhsd(v, &Bv, &Hv, &Sv, &Dv);
    if (Bk != B || Bv != B)
        return msgf(msg, msg_size, ER_EINVAL, "attention: batch sizes differ (query %lld, key %lld, value %lld)",
                    (long long)B, (long long)Bk, (long long)Bv);
    if (Dk != D)
        return msgf(msg, msg_size, ER_EINVAL, "attention: key's last dimension %lld differs from query's %lld", (long long)Dk,
                    (long long)D);
    if (Hv != Hk || Sv != Sk)
        return msgf(msg, msg_size, ER_EINVAL, "attention: value's heads and length (%lld, %lld) differ from key's (%lld, %lld)",
                    (long long)Hv, (long long)Sv, (long long)Hk, (long long)Sk);
    int causal, gqa;
    double scale, qd, kd, vd;
    if ((st = er_ops_opt_bool(r, "is_causal", 0, &causal, msg, msg_size)) != ER_OK) return st;
    if ((st = er_ops_opt_bool(r, "enable_gqa", 0, &gqa, msg, msg_size)) != ER_OK) return st;
    if (D == 0 && !er_ops_opt(r, "scale"))
        return msgf(msg, msg_size, ER_EINVAL,
                    "attention: the head dimension (query's last dimension) is 0, so the default scale 1/sqrt(D) is "
                    "infinite; give scale= or inputs with a head dimension above 0");
    if ((st = er_ops_opt_double(r, "scale", 1.0 / sqrt((double)D), &scale, msg, msg_size)) != ER_OK) return st;
    if ((st = er_ops_opt_double(r, "q_descale", 1.0, &qd, msg, msg_size)) != ER_OK) return st;
    if ((st = er_ops_opt_double(r, "k_descale", 1.0, &kd, msg, msg_size)) != ER_OK) return st;
    if ((st = er_ops_opt_double(r, "v_descale", 1.0, &vd, msg, msg_size)) != ER_OK) return st;
    if (!(scale > 0) || !isfinite(scale) || !(qd > 0) || !isfinite(qd) || !(kd > 0) || !isfinite(kd) || !(vd > 0) ||
        !isfinite(vd))
        return msgf(msg, msg_size, ER_EINVAL, "attention: scale and the descales must be finite and positive");
    if (Hk == 0 || Hq % Hk)
        return msgf(msg, msg_size, ER_EINVAL, "attention: query's %lld heads are not a multiple of key's %lld", (long long)Hq,
                    (long long)Hk);
    if (Hq != Hk && !gqa)
        return msgf(msg, msg_size, ER_EINVAL,
                    "attention: query has %lld heads and key %lld: grouped-query attention needs enable_gqa=1", (long long)Hq,
                    (long long)Hk);
    int fp8 = q->format == ER_FMT_F8E4M3FN || q->format == ER_FMT_F8E5M2;
    int of;
    if ((st = er_ops_opt_format(r, "out", fp8 ? ER_FMT_BF16 : q->format, &of, msg, msg_size)) != ER_OK) return st;
    if (of != ER_FMT_F32 && of != ER_FMT_BF16 && of != ER_FMT_F16)
        return msgf(msg, msg_size, ER_EINVAL, "attention: out is f32, bf16 or f16");
    at_state *s = calloc(1, sizeof *s);
    if (!s) return msgf(msg, msg_size, ER_ENOMEM, "attention: out of memory");
    r->state = s;
    s->out_fmt = of;
    s->v_fmt = v->format;
    s->ndim = q->ndim;
    if ((st = er_ops_values(q, &s->q, msg, msg_size)) != ER_OK) return st;
    if ((st = er_ops_values(k, &s->k, msg, msg_size)) != ER_OK) return st;
    if ((st = er_ops_values(v, &s->v, msg, msg_size)) != ER_OK) return st;
    er_attn_prob *p = &s->p;
    p->B = B, p->Hq = Hq, p->Hk = Hk, p->Sq = Sq, p->Sk = Sk, p->D = D, p->Dv = Dv;
    p->q = s->q, p->k = s->k, p->v = s->v;
    p->causal = causal;
    p->scale = scale, p->q_descale = qd, p->k_descale = kd, p->v_descale = vd;
    for (int64_t e = 0; e < B * Hq * Sq * D; e++)
        if (!isfinite(s->q[e])) return msgf(msg, msg_size, ER_EINVAL, "attention: query element %lld is not finite", (long long)e);
    for (int64_t e = 0; e < B * Hk * Sk * D; e++)
        if (!isfinite(s->k[e])) return msgf(msg, msg_size, ER_EINVAL, "attention: key element %lld is not finite", (long long)e);
    for (int64_t e = 0; e < B * Hk * Sk * Dv; e++)
        if (!isfinite(s->v[e])) return msgf(msg, msg_size, ER_EINVAL, "attention: value element %lld is not finite", (long long)e);
    if (m) {
        /* broadcast to (B, Hq, Sq, Sk), right-aligned as torch does */
        int64_t full[4] = {B, Hq, Sq, Sk};
        if (m->ndim < 1 || m->ndim > 4)
            return msgf(msg, msg_size, ER_EINVAL, "attention: attn_mask has %d dimensions; at most 4", m->ndim);
        int is_bool = er_fmt_get(m->format).kind != ER_KIND_FLOAT;
        if (is_bool) { /* an integer (boolean) mask: a nonzero element lets its key take part */
            int64_t nm = er_optensor_count(m);
            s->mask = malloc(sizeof(double) * (size_t)(nm ? nm : 1));
            if (!s->mask) return msgf(msg, msg_size, ER_ENOMEM, "attention: out of memory");
            for (int64_t e = 0; e < nm; e++) s->mask[e] = er_ops_load(m, e) != 0 ? 1.0 : 0.0;
        } else if ((st = er_ops_values(m, &s->mask, msg, msg_size)) != ER_OK)
            return st;
        int64_t stride = 1;
        for (int d = 3, md = m->ndim - 1; d >= 0; d--, md--) {
            int64_t len = md >= 0 ? m->shape[md] : 1;
            if (len != 1 && len != full[d])
                return msgf(msg, msg_size, ER_EINVAL,
                            "attention: attn_mask's dimension %d has length %lld; it must be 1 or %lld (broadcast to (B, H, Sq, Sk))",
                            md, (long long)len, (long long)full[d]);
            p->mstride[d] = len == 1 ? 0 : stride;
            stride *= len;
        }
        for (int64_t e = 0; e < stride; e++) {
            double x = s->mask[e];
            if (is_bool) s->mask[e] = x != 0 ? 0.0 : -INFINITY;
            else if (x != x || x == INFINITY)
                return msgf(msg, msg_size, ER_EINVAL, "attention: attn_mask element %lld is %s (a mask adds finite values or -inf)",
                            (long long)e, x != x ? "NaN" : "+inf");
        }
        p->mask = s->mask;
    }
    if ((st = er_attn_prepare(p, msg, msg_size)) != ER_OK) return st;
    int64_t oshape[4], lshape[3];
    int n = q->ndim;
    for (int d = 0; d < n - 1; d++) oshape[d] = q->shape[d], lshape[d] = q->shape[d];
    oshape[n - 1] = Dv;
    if ((st = er_ops_alloc_output(r, 0, of, n, oshape, msg, msg_size)) != ER_OK) return st;
    if ((st = er_ops_alloc_output(r, 1, ER_FMT_F32, n - 1, lshape, msg, msg_size)) != ER_OK) return st;
    int64_t rows = B * Hq * Sq;
    at_job j = {r, s, malloc(sizeof(uint64_t) * (size_t)(rows * Dv > 0 ? rows * Dv : 1)),
                malloc(sizeof(uint64_t) * (size_t)(rows > 0 ? rows : 1)), NULL};
    if (!j.obits || !j.lbits) {
        free(j.obits), free(j.lbits);
        return msgf(msg, msg_size, ER_ENOMEM, "attention: out of memory");
    }
    st = er_ops_parallel(rows, 1 + (1 << 22) / (Sk * (D + Dv) + 1), at_ref_rows, &j, msg, msg_size);
    if (st == ER_OK) {
        for (int64_t e = 0; e < rows * Dv; e++) er_ops_store(&r->out[0], e, j.obits[e]);
        for (int64_t e = 0; e < rows; e++) er_ops_store(&r->out[1], e, j.lbits[e]);
    }
    free(j.obits), free(j.lbits);
    return st;
}

/* the P format a standard names, as er_attn_std.p_fmt (-1: kept in compute) */
static int p_format(const er_standard *sd, int v_fmt, int compute)
{
    if (sd->kind != ER_STD_FLASH || sd->acc_fmt == -2) return -1;
    int f = sd->acc_fmt == -1 ? v_fmt : sd->acc_fmt;
    if (er_fmt_get(f).mbits >= er_fmt_get(compute).mbits && er_fmt_get(f).ebits >= er_fmt_get(compute).ebits) return -1;
    return f;
}

void er_attn_std_init(er_attn_std *a, const er_openv *env, int q_fmt, int k_fmt, int v_fmt)
{
    const er_standard *sd = &env->o->standard;
    memset(a, 0, sizeof *a);
    a->kind = sd->kind == ER_STD_FLASH ? 2 : sd->kind == ER_STD_ANY_ORDER ? 1 : 0;
    a->block = sd->kind == ER_STD_FLASH ? sd->bk : 0;
    a->compute = env->compute;
    a->ftz = env->ftz;
    a->p_fmt = p_format(sd, v_fmt, env->compute);
    a->ulps_exp = er_ops_ulps(env, sd->kind == ER_STD_FLASH ? "exp2" : "exp");
    a->ulps_div = er_ops_ulps(env, "div");
    a->ulps_log = er_ops_ulps(env, "log");
    if (env->o->ulps < 0 && a->ulps_log < 2) a->ulps_log = 2; /* lg2.approx: 2^-22 absolute near 1 */
    a->q_fmt = q_fmt, a->k_fmt = k_fmt, a->v_fmt = v_fmt;
    a->reverse = sd->kind == ER_STD_FLASH && sd->group == 2; /* order=reverse */
}

/*
 * flash's mma=<model>: the model's parameters for S = Q K^T (query, key) and for P V (P's format,
 * value), each as er_standard_for_inputs reads the model for those operands, and refused (with the
 * table's sentence) where the model's instructions do not take them.
 */
static er_status eng_params(const er_standard *sd, er_attn_std *a, int compute, char *msg, size_t msg_size)
{
    const char *p = strstr(sd->name, "mma=");
    char word[48], m2[512];
    er_standard e;
    if (!p || sscanf(p, "mma=%47[a-zA-Z0-9_-]", word) != 1 || er_standard_parse(word, &e, m2, sizeof m2) != ER_OK ||
        e.kind != ER_STD_ENGINE)
        return msgf(msg, msg_size, ER_EINVAL, "attention: the standard '%s' names no matrix-engine model after mma=", sd->name);
    int pf = a->p_fmt >= 0 ? a->p_fmt : compute;
    const int fa[2] = {a->q_fmt, pf}, fb[2] = {a->k_fmt, a->v_fmt};
    const char *wa[2] = {"query", "P"}, *wb[2] = {"key", "value"};
    for (int x = 0; x < 2; x++) {
        er_standard f = er_standard_for_inputs(&e, fa[x], fb[x]);
        if (er_standard_check_operands_(&f, fa[x], fb[x], wa[x], wb[x], m2, sizeof m2) != ER_OK) {
            /* the matrix product's sentence up to "the model does not apply" (its advice names the
             * matmul command's --a-format) */
            char *cut = strstr(m2, "the model does not apply");
            if (cut) cut[strlen("the model does not apply")] = '\0';
            return msgf(msg, msg_size, ER_EINVAL, "attention: flash's mma=%s is used for %s: %s", word,
                        x ? "P V (P rounded to its format by p=)" : "S = Q K^T", m2);
        }
        if (f.acc_fmt == ER_FMT_F16 || f.promote || f.group > 1)
            return msgf(msg, msg_size, ER_EUNSUPPORTED, "attention: flash's mma=%s reads as %s here, which is not available "
                        "for attention", word, f.name);
        a->mm[x].k = f.k, a->mm[x].F = f.F, a->mm[x].p = f.out_p, a->mm[x].round = f.out_round;
        a->mm[x].F2 = f.F2, a->mm[x].xterms = f.two_stage ? 2 : 0, a->mm[x].tf32 = f.tf32_inputs;
    }
    a->eng = 1;
    return ER_OK;
}

static er_status at_bounds(er_opres *r, int i, const er_openv *env, double *lo, double *hi, unsigned char *flags, char *msg,
                           size_t msg_size)
{
    at_state *s = (at_state *)r->state;
    const er_standard *sd = &env->o->standard;
    int64_t rows = s->p.B * s->p.Hq * s->p.Sq, Dv = s->p.Dv;
    if (!s->have || memcmp(&s->o, env->o, sizeof s->o)) {
        er_attn_std a;
        er_attn_std_init(&a, env, r->in[0].format, r->in[1].format, r->in[2].format);
        if (sd->kind == ER_STD_FLASH && sd->split == ER_STD_ENGINE) {
            er_status st = eng_params(sd, &a, env->compute, msg, msg_size);
            if (st != ER_OK) return st;
        }
        if (!s->blo) {
            size_t no = (size_t)(rows * Dv > 0 ? rows * Dv : 1), nr = (size_t)(rows > 0 ? rows : 1);
            s->blo = malloc(no * sizeof(double)), s->bhi = malloc(no * sizeof(double));
            s->llo = malloc(nr * sizeof(double)), s->lhi = malloc(nr * sizeof(double));
            s->row_nan = malloc(nr);
            if (!s->blo || !s->bhi || !s->llo || !s->lhi || !s->row_nan)
                return msgf(msg, msg_size, ER_ENOMEM, "attention: out of memory for the bounds");
        }
        s->have = 0;
        at_job j = {r, s, NULL, NULL, &a};
        er_status st = er_ops_parallel(rows, 1 + (1 << 22) / (s->p.Sk * (s->p.D + Dv) + 1), at_bound_rows, &j, msg, msg_size);
        if (st != ER_OK) return st;
        s->o = *env->o;
        s->have = 1;
    }
    int64_t n = i == 0 ? rows * Dv : rows;
    const double *sl = i == 0 ? s->blo : s->llo, *sh = i == 0 ? s->bhi : s->lhi;
    for (int64_t e = 0; e < n; e++) {
        int64_t row = i == 0 ? e / Dv : e;
        lo[e] = sl[e], hi[e] = sh[e];
        if (s->row_nan[row]) { /* no key takes part: what correct kernels store (docs/ops/attention.md) */
            flags[e] = ER_OPB_EMPTY;
            lo[e] = i == 0 ? 0.0 : -INFINITY, hi[e] = i == 0 ? 0.0 : INFINITY;
        }
        else if (!(lo[e] > -INFINITY) || !(hi[e] < INFINITY)) flags[e] = ER_OPB_UNCERTAIN;
    }
    return ER_OK;
}

const er_opdef er_opdef_attention = {
    "attention", 3, 4, at_inputs, 2, at_outputs, at_boundaries,
    (int)(sizeof at_boundaries / sizeof at_boundaries[0]), ER_OPSTD_NORMAL | ER_OPSTD_ANY | (1u << ER_STD_FLASH),
    "normal, any_order, flash[:block=N][,mma=normal|any_order|<matrix-engine model>][,p=value|compute|<format>][,order=index|reverse]",
    at_create, at_bounds, at_free, er_opn_attention,
};
