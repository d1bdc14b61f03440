/* op_normal_ops.c: normal() of quantize, attention and the softmax backwards (see op_normal.c). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../host/er_msg.h"
#include "exactref/formats.h"
#include "op_normal.h"

#define msgf er_msgf

/* a value rounded into fmt, saturating to +-fmax when sat */
static uint64_t q_round(int fmt, double v, int sat, double fmax)
{
    if (sat && v == v) v = v > fmax ? fmax : v < -fmax ? -fmax : v;
    return er_ops_rn_bits(fmt, v);
}

/*
 * quantize, the textbook order in compute: the scale RN(amax / Fmax) stored in f32 (tensor, row), the
 * given scale, or OCP MX's exact power of two; nvfp4: s_t = RN(amax / 2688) (or the given one), the block
 * scale RN(amax_b / RN(6 s_t)) stored in e4m3 (saturating), the divisor RN(stored * s_t).  Then
 * q = RN(x / divisor) stored in F (saturating as the option says); a zero scale gives q = 0 of x's sign;
 * a group holding a NaN or an infinity: scale and q NaN.
 */
er_status er_opn_quantize(er_opres *r, int i, const er_openv *env, uint64_t *bits, char *msg, size_t msg_size)
{
    er_status st;
    int scheme, sat;
    double *x = NULL, *gs = NULL, *amax = NULL, *stored = NULL;
    if ((st = er_opn_check_compute(r, env, msg, msg_size)) != ER_OK) return st;
    if ((st = er_ops_opt_choice(r, "scheme", "tensor row mx nvfp4", 0, &scheme, msg, msg_size)) != ER_OK) return st;
    if ((st = er_ops_opt_bool(r, "saturate", 1, &sat, msg, msg_size)) != ER_OK) return st;
    int F = r->out[0].format, sfmt = r->out[1].format;
    er_format_info ei;
    er_format_get_info(F, &ei);
    sat = sat || !ei.has_nan;
    double fmax;
    er_from_bits(F, ei.max_finite_bits, &fmax);
    int emax_f;
    frexp(fmax, &emax_f);
    emax_f -= 1; /* floor(log2 Fmax) */
    const er_optensor *xt = &r->in[0];
    int64_t count = er_optensor_count(xt), n = xt->ndim ? xt->shape[xt->ndim - 1] : 1;
    int64_t group = scheme == 2 ? 32 : scheme == 3 ? 16 : n, per_row = n / (group ? group : 1);
    int64_t rows = n ? count / n : 0, ngroups = scheme == 0 ? 1 : rows * per_row;
    if ((st = er_opn_read(r, 0, env, &x, msg, msg_size)) != ER_OK) goto done;
    if (r->has_in[1] && (st = er_ops_values(&r->in[1], &gs, msg, msg_size)) != ER_OK) goto done;
    amax = (double *)calloc((size_t)(ngroups ? ngroups : 1), sizeof(double));
    stored = (double *)calloc((size_t)(ngroups ? ngroups : 1), sizeof(double));
    if (!amax || !stored) {
        st = msgf(msg, msg_size, ER_ENOMEM, "quantize: out of memory");
        goto done;
    }
    double tmax = 0;
    int tbad = 0;
    for (int64_t e = 0; e < count; e++) {
        int64_t g = scheme == 0 ? 0 : (e / n) * per_row + (e % n) / group;
        double a = fabs(x[e]);
        if (!isfinite(a)) {
            amax[g] = NAN;
            tbad = 1;
        } else if (amax[g] == amax[g] && a > amax[g]) {
            amax[g] = a;
        }
        if (isfinite(a) && a > tmax) tmax = a;
    }
    double s_t = 0;
    if (scheme == 3) s_t = gs ? gs[0] : tbad ? NAN : er_opn_rc(env, tmax / 2688.0);
    for (int64_t g = 0; g < ngroups; g++) {
        double a = amax[g], v;
        uint64_t b;
        if (!(a == a)) {
            b = er_ops_rn_bits(sfmt, NAN);
        } else if (scheme == 2) { /* OCP MX: 2^(floor(log2 amax) - emax), clamped to e8m0's range */
            int ex = 0;
            if (a > 0) frexp(a, &ex);
            double sh = a > 0 ? (double)(ex - 1) - emax_f : -127;
            sh = sh < -127 ? -127 : sh > 127 ? 127 : sh;
            b = er_ops_rn_bits(sfmt, ldexp(1.0, (int)sh));
        } else if (scheme == 3) {
            v = (s_t == 0 || a == 0) ? 0.0 : er_opn_rc(env, a / er_opn_rc(env, 6.0 * s_t));
            b = q_round(sfmt, v, 1, 448.0);
        } else if (gs) {
            b = er_ops_rn_bits(sfmt, gs[scheme == 0 ? 0 : g]);
        } else {
            b = er_ops_rn_bits(sfmt, a == 0 ? 0.0 : er_opn_rc(env, a / fmax));
        }
        stored[g] = er_ops_bits_value(sfmt, b);
        if (i == 1) bits[g] = b;
    }
    if (i == 1) goto done;
    for (int64_t e = 0; e < count; e++) {
        int64_t g = scheme == 0 ? 0 : (e / n) * per_row + (e % n) / group;
        double sc = stored[g], xe = x[e];
        if (scheme == 3 && sc == sc && sc != 0) sc = er_opn_rc(env, sc * s_t);
        if (!isfinite(xe) || !(sc == sc)) bits[e] = er_ops_rn_bits(F, NAN);
        else if (sc == 0) bits[e] = er_ops_rn_bits(F, xe == 0 ? xe : 0.0 * xe);
        else bits[e] = q_round(F, er_opn_rc(env, xe / sc), sat, fmax);
    }
done:
    free(x);
    free(gs);
    free(amax);
    free(stored);
    return st;
}

/* (B, H, S, D) of an attention input of 2 or more dimensions (B the product of the leading ones) */
static void at_dims(const er_optensor *t, int64_t *B, int64_t *H, int64_t *S, int64_t *D)
{
    int n = t->ndim;
    *D = n >= 1 ? t->shape[n - 1] : 1;
    *S = n >= 2 ? t->shape[n - 2] : 1;
    *H = n >= 3 ? t->shape[n - 3] : 1;
    *B = 1;
    for (int d = 0; d < n - 3; d++) *B *= t->shape[d];
}

/*
 * attention, the textbook order (torch's math kernel): per query row i, s_j = RN(dot_j * RN(scale)) with
 * dot_j = the index-order sum over d of RN(q_d k_jd) (then times RN(q_descale) and RN(k_descale) where
 * they are not 1), plus the mask (RN); the keys that take part (the mask not -inf, j <= i when causal);
 * mu = max s_j, p_j = EXP(RN(s_j - mu)), l = index-order sum of p_j, P_j = RN(p_j / l),
 * out_c = index-order sum of RN(P_j v_jc) (times RN(v_descale) where it is not 1);
 * lse = RN(mu + LOG(l)) (rounded to f32 as the output is).  A row where no key takes part: out NaN, lse -inf.
 */
typedef struct at_njob {
    const er_openv *env;
    const double *q, *k, *v;
    const er_optensor *m;
    int mfloat, nd, causal, i, of;
    int64_t full[ER_OP_MAXDIM];
    int64_t Hq, Sq, D, Hk, Sk, Dv, group;
    double sc_c, qd_c, kd_c, vd_c, qd, kd, vd;
    uint64_t *bits;
} at_njob;

/* query rows r0 .. r1 - 1 of the flattened (b, h, i) */
static er_status at_nrows(void *ctx, int64_t r0, int64_t r1, char *msg, size_t msg_size)
{
    const at_njob *jb = (const at_njob *)ctx;
    const er_openv *env = jb->env;
    int64_t Hq = jb->Hq, Sq = jb->Sq, D = jb->D, Hk = jb->Hk, Sk = jb->Sk, Dv = jb->Dv;
    size_t c = (size_t)(Sk ? Sk : 1);
    double *sc = (double *)malloc(c * sizeof(double)), *pj = (double *)malloc(c * sizeof(double));
    unsigned char *part = (unsigned char *)malloc(c);
    if (!sc || !pj || !part) {
        free(sc);
        free(pj);
        free(part);
        return msgf(msg, msg_size, ER_ENOMEM, "attention: out of memory");
    }
    for (int64_t row = r0; row < r1; row++) {
        int64_t b = row / (Hq * Sq), h = (row / Sq) % Hq, qi = row % Sq, hk = h / jb->group;
        const double *qr = jb->q + row * D;
        double mu = -INFINITY;
        int any = 0;
        for (int64_t j = 0; j < Sk; j++) {
            const double *kr = jb->k + ((b * Hk + hk) * Sk + j) * D;
            double dot = 0;
            for (int64_t d = 0; d < D; d++) {
                double t = er_opn_rc(env, qr[d] * kr[d]);
                dot = d ? er_opn_rc(env, dot + t) : t;
            }
            double s = er_opn_rc(env, dot * jb->sc_c);
            if (jb->qd != 1) s = er_opn_rc(env, s * jb->qd_c);
            if (jb->kd != 1) s = er_opn_rc(env, s * jb->kd_c);
            part[j] = !(jb->causal && j > qi);
            if (jb->m && part[j]) {
                int64_t mi = er_ops_bcast_index(jb->m, jb->nd, jb->full, row * Sk + j);
                uint64_t mb = er_ops_load(jb->m, mi);
                if (jb->mfloat) {
                    double mv = er_ops_bits_value(jb->m->format, mb);
                    if (mv == -INFINITY) part[j] = 0;
                    else s = er_opn_rc(env, s + er_opn_rc(env, mv));
                } else if (mb == 0) {
                    part[j] = 0;
                }
            }
            sc[j] = s;
            if (part[j]) {
                any = 1;
                if (s > mu) mu = s;
            }
        }
        if (!any) {
            if (jb->i == 0)
                for (int64_t cc = 0; cc < Dv; cc++) jb->bits[row * Dv + cc] = er_ops_rn_bits(jb->of, NAN);
            else
                jb->bits[row] = er_ops_rn_bits(jb->of, -INFINITY);
            continue;
        }
        double l = 0;
        int first = 1;
        for (int64_t j = 0; j < Sk; j++) {
            if (!part[j]) continue;
            pj[j] = er_opn_lib(env, ER_OPN_EXP, er_opn_rc(env, sc[j] - mu));
            l = first ? pj[j] : er_opn_rc(env, l + pj[j]);
            first = 0;
        }
        if (jb->i == 1) {
            jb->bits[row] = er_ops_rn_bits(jb->of, er_opn_rc(env, mu + er_opn_lib(env, ER_OPN_LOG, l)));
            continue;
        }
        for (int64_t j = 0; j < Sk; j++) /* P_j = RN(p_j / l) */
            if (part[j]) pj[j] = er_opn_rc(env, pj[j] / l);
        for (int64_t cc = 0; cc < Dv; cc++) {
            double acc = 0;
            first = 1;
            for (int64_t j = 0; j < Sk; j++) {
                if (!part[j]) continue;
                double t = er_opn_rc(env, pj[j] * jb->v[((b * Hk + hk) * Sk + j) * Dv + cc]);
                acc = first ? t : er_opn_rc(env, acc + t);
                first = 0;
            }
            if (jb->vd != 1) acc = er_opn_rc(env, acc * jb->vd_c);
            jb->bits[row * Dv + cc] = er_ops_rn_bits(jb->of, acc);
        }
    }
    free(sc);
    free(pj);
    free(part);
    return ER_OK;
}

er_status er_opn_attention(er_opres *r, int i, const er_openv *env, uint64_t *bits, char *msg, size_t msg_size)
{
    er_status st;
    double *q = NULL, *k = NULL, *v = NULL;
    int causal, gqa;
    double scale;
    at_njob jb;
    memset(&jb, 0, sizeof jb);
    if ((st = er_opn_check_compute(r, env, msg, msg_size)) != ER_OK) return st;
    int64_t B, Bk, Dk, Bv, Hv, Sv;
    at_dims(&r->in[0], &B, &jb.Hq, &jb.Sq, &jb.D);
    at_dims(&r->in[1], &Bk, &jb.Hk, &jb.Sk, &Dk);
    at_dims(&r->in[2], &Bv, &Hv, &Sv, &jb.Dv);
    (void)Bk, (void)Bv, (void)Dk, (void)Hv, (void)Sv;
    if ((st = er_ops_opt_bool(r, "is_causal", 0, &causal, msg, msg_size)) != ER_OK) return st;
    if ((st = er_ops_opt_bool(r, "enable_gqa", 0, &gqa, msg, msg_size)) != ER_OK) return st;
    if ((st = er_ops_opt_double(r, "scale", 1.0 / sqrt((double)jb.D), &scale, msg, msg_size)) != ER_OK) return st;
    if ((st = er_ops_opt_double(r, "q_descale", 1.0, &jb.qd, msg, msg_size)) != ER_OK) return st;
    if ((st = er_ops_opt_double(r, "k_descale", 1.0, &jb.kd, msg, msg_size)) != ER_OK) return st;
    if ((st = er_ops_opt_double(r, "v_descale", 1.0, &jb.vd, msg, msg_size)) != ER_OK) return st;
    if ((st = er_opn_read(r, 0, env, &q, msg, msg_size)) != ER_OK) goto done;
    if ((st = er_opn_read(r, 1, env, &k, msg, msg_size)) != ER_OK) goto done;
    if ((st = er_opn_read(r, 2, env, &v, msg, msg_size)) != ER_OK) goto done;
    jb.env = env;
    jb.q = q, jb.k = k, jb.v = v;
    jb.m = r->has_in[3] ? &r->in[3] : NULL;
    jb.mfloat = jb.m && er_fmt_get(jb.m->format).kind == ER_KIND_FLOAT;
    jb.nd = r->in[0].ndim;
    for (int d = 0; d < jb.nd - 1; d++) jb.full[d] = r->in[0].shape[d];
    jb.full[jb.nd - 1] = jb.Sk;
    jb.causal = causal;
    jb.i = i;
    jb.of = r->out[i].format;
    jb.group = jb.Hk && jb.Hq / jb.Hk ? jb.Hq / jb.Hk : 1;
    jb.sc_c = er_opn_rc(env, scale), jb.qd_c = er_opn_rc(env, jb.qd), jb.kd_c = er_opn_rc(env, jb.kd);
    jb.vd_c = er_opn_rc(env, jb.vd);
    jb.bits = bits;
    /* query rows in parallel (each row in index order: the same bits on any number of threads) */
    st = er_ops_parallel(B * jb.Hq * jb.Sq, 1 + (1 << 16) / (jb.Sk * (jb.D + jb.Dv) + 1), at_nrows, &jb, msg,
                         msg_size);
done:
    free(q);
    free(k);
    free(v);
    return st;
}

/* softmax.backward: y = softmax's normal() stored in forward_out, c = index-order sum of RN(g_j y_j),
 * grad_input_i = RN(y_i RN(g_i - c)).  log_softmax.backward: z = log_softmax's normal() stored in
 * forward_out, y = EXP(z), G = index-order sum of g, grad_input_i = RN(g_i - RN(y_i G)). */
er_status er_opn_softmax_backward(er_opres *r, int i, const er_openv *env, uint64_t *bits, char *msg,
                                  size_t msg_size)
{
    er_status st;
    double *x = NULL, *g = NULL, *d = NULL, *ex = NULL, *y = NULL;
    int ff, lsm = !strcmp(r->def->name, "log_softmax.backward");
    int64_t outer, len, inner;
    (void)i;
    if ((st = er_opn_check_compute(r, env, msg, msg_size)) != ER_OK) return st;
    if ((st = er_opn_smx_shape(r, &outer, &len, &inner, msg, msg_size)) != ER_OK) return st;
    if ((st = er_ops_opt_format(r, "forward_out", r->in[0].format, &ff, msg, msg_size)) != ER_OK) return st;
    if ((st = er_opn_read(r, 0, env, &x, msg, msg_size)) != ER_OK) goto done;
    if ((st = er_opn_read(r, 1, env, &g, msg, msg_size)) != ER_OK) goto done;
    size_t c = (size_t)(len ? len : 1);
    d = (double *)malloc(c * sizeof(double));
    ex = (double *)malloc(c * sizeof(double));
    y = (double *)malloc(c * sizeof(double));
    if (!d || !ex || !y) {
        st = msgf(msg, msg_size, ER_ENOMEM, "%s: out of memory", r->def->name);
        goto done;
    }
    int of = r->out[0].format;
    for (int64_t o = 0; o < outer; o++)
        for (int64_t in = 0; in < inner; in++) {
            int64_t base = o * len * inner + in;
            double s = er_opn_smx_row(env, x + base, len, inner, d, ex, NULL);
            double l = lsm ? er_opn_lib(env, ER_OPN_LOG, s) : 0, acc = 0;
            for (int64_t j = 0; j < len; j++) {
                /* the forward output as stored (forward_out), read into compute */
                double f = lsm ? er_opn_rc(env, d[j] - l) : er_opn_rc(env, ex[j] / s);
                f = er_opn_rc(env, er_ops_bits_value(ff, er_ops_rn_bits(ff, f)));
                y[j] = lsm ? er_opn_lib(env, ER_OPN_EXP, f) : f;
                double t = lsm ? g[base + j * inner] : er_opn_rc(env, g[base + j * inner] * y[j]);
                acc = j ? er_opn_rc(env, acc + t) : t;
            }
            for (int64_t j = 0; j < len; j++) {
                double gj = g[base + j * inner];
                double v = lsm ? er_opn_rc(env, gj - er_opn_rc(env, y[j] * acc))
                               : er_opn_rc(env, y[j] * er_opn_rc(env, gj - acc));
                bits[base + j * inner] = er_ops_rn_bits(of, v);
            }
        }
done:
    free(x);
    free(g);
    free(d);
    free(ex);
    free(y);
    return st;
}

/*
 * layer_norm.backward / rms_norm.backward: per row the forward's mean m and rstd r as its normal() computes
 * them, gy_j = RN(g_j w_j), xhat_j = RN(RN(x_j - m) r) (rms: RN(x_j r)), G = index-order sum of gy,
 * C = index-order sum of RN(gy_j xhat_j); grad_input_i = RN(RN(RN(r gy_i) - RN(r RN(G/N))) -
 * RN(xhat_i RN(r RN(C/N)))) (rms: without the G term); grad_weight_c = index-order sum over rows of
 * RN(g_c xhat_c); grad_bias_c = index-order sum over rows of g_c.
 */
er_status er_opn_norm_backward(er_opres *r, int i, const er_openv *env, uint64_t *bits, char *msg, size_t msg_size)
{
    er_status st;
    double *x = NULL, *w = NULL, *g = NULL, *xh = NULL, *gy = NULL, *acc = NULL, eps;
    int rms = !strcmp(r->def->name, "rms_norm.backward");
    int gi = -1, wi = -1;
    if ((st = er_opn_check_compute(r, env, msg, msg_size)) != ER_OK) return st;
    for (int k = 1; k < r->ninputs; k++)
        if (r->has_in[k]) gi = k;
    if (gi < 0) return msgf(msg, msg_size, ER_EINVAL, "%s: no gradient (the last input)", r->def->name);
    if (r->ninputs > 1 && r->has_in[1] && gi != 1) wi = 1;
    int64_t N, n = er_optensor_count(&r->in[0]);
    if ((st = er_opn_norm_opts(r, rms, &eps, &N, msg, msg_size)) != ER_OK) return st;
    if ((st = er_opn_read(r, 0, env, &x, msg, msg_size)) != ER_OK) goto done;
    if (wi >= 0 && (st = er_opn_read(r, wi, env, &w, msg, msg_size)) != ER_OK) goto done;
    if ((st = er_opn_read(r, gi, env, &g, msg, msg_size)) != ER_OK) goto done;
    xh = (double *)malloc(sizeof(double) * (size_t)N);
    gy = (double *)malloc(sizeof(double) * (size_t)N);
    acc = (double *)calloc((size_t)N, sizeof(double));
    if (!xh || !gy || !acc) {
        st = msgf(msg, msg_size, ER_ENOMEM, "%s: out of memory", r->def->name);
        goto done;
    }
    double ec = er_opn_rc(env, eps), dn = (double)N;
    int of = r->out[i].format;
    for (int64_t row = 0; row < n / N; row++) {
        const double *xr = x + row * N, *gr = g + row * N;
        double mean, rs = er_opn_norm_rstd(env, xr, N, rms, ec, &mean);
        double G = 0, C = 0;
        for (int64_t j = 0; j < N; j++) {
            xh[j] = er_opn_rc(env, (rms ? xr[j] : er_opn_rc(env, xr[j] - mean)) * rs);
            gy[j] = w ? er_opn_rc(env, gr[j] * w[j]) : gr[j];
            double t = er_opn_rc(env, gy[j] * xh[j]);
            G = j ? er_opn_rc(env, G + gy[j]) : gy[j];
            C = j ? er_opn_rc(env, C + t) : t;
        }
        if (i == 0) {
            double tg = er_opn_rc(env, rs * er_opn_rc(env, G / dn));
            double tc = er_opn_rc(env, rs * er_opn_rc(env, C / dn));
            for (int64_t j = 0; j < N; j++) {
                double a = er_opn_rc(env, rs * gy[j]);
                if (!rms) a = er_opn_rc(env, a - tg);
                bits[row * N + j] = er_ops_rn_bits(of, er_opn_rc(env, a - er_opn_rc(env, xh[j] * tc)));
            }
        } else {
            for (int64_t j = 0; j < N; j++) {
                double t = i == 1 ? er_opn_rc(env, gr[j] * xh[j]) : gr[j];
                acc[j] = row ? er_opn_rc(env, acc[j] + t) : t;
            }
        }
    }
    if (i > 0)
        for (int64_t j = 0; j < N; j++) bits[j] = er_ops_rn_bits(of, acc[j]);
done:
    free(x);
    free(w);
    free(g);
    free(xh);
    free(gy);
    free(acc);
    return st;
}
