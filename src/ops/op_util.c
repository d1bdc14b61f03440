/* op_util.c: the helpers every operation of src/ops/ shares: options, tensors, broadcasting, rounding
 * decisions, outward binary64 bound arithmetic, library functions within ulps, and a fork/join. */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../host/er_msg.h"
#include "op_impl.h"
#include "exactref/formats.h"

#define msgf er_msgf

/* ---- options ---- */

const char *er_ops_opt(er_opres *r, const char *key)
{
    for (int i = 0; i < r->nopt; i++)
        if (strcmp(r->opt[i].key, key) == 0) {
            r->opt[i].used = 1;
            return r->opt[i].val;
        }
    return NULL;
}

/* option key as a number (an integer where integer): its text, parsed to its end; def where absent */
static er_status opt_number(er_opres *r, const char *key, int integer, long long *iv, double *dv, char *msg,
                            size_t msg_size)
{
    const char *s = er_ops_opt(r, key);
    char *end;
    if (!s) return ER_OK;
    errno = 0;
    if (integer) {
        long long x = strtoll(s, &end, 10);
        if (end == s || *end || errno)
            return msgf(msg, msg_size, ER_EINVAL, "%s: option %s=%s is not an integer", r->def->name, key, s);
        *iv = x;
    } else {
        double x = strtod(s, &end);
        if (end == s || *end || errno == EINVAL || isnan(x))
            return msgf(msg, msg_size, ER_EINVAL, "%s: option %s=%s is not a number", r->def->name, key, s);
        *dv = x;
    }
    return ER_OK;
}

er_status er_ops_opt_int(er_opres *r, const char *key, int64_t def, int64_t *v, char *msg, size_t msg_size)
{
    long long x = (long long)def;
    er_status st = opt_number(r, key, 1, &x, NULL, msg, msg_size);
    *v = (int64_t)x;
    return st;
}

er_status er_ops_opt_double(er_opres *r, const char *key, double def, double *v, char *msg, size_t msg_size)
{
    *v = def;
    return opt_number(r, key, 0, NULL, v, msg, msg_size);
}

er_status er_ops_opt_format(er_opres *r, const char *key, int def, int *fmt, char *msg, size_t msg_size)
{
    const char *s = er_ops_opt(r, key);
    er_format_info fi;
    *fmt = def;
    if (!s) return ER_OK;
    if (er_format_from_name(s, fmt) != ER_OK) {
        /* say why the name is refused: a format not modelled (suggest the FN variant where there is one), or
         * no format at all */
        char fn[40];
        int f2;
        if (strlen(s) < sizeof fn - 2) snprintf(fn, sizeof fn, "%sFN", s);
        else fn[0] = 0;
        if (er_format_is_unmodelled(s) && fn[0] && er_format_from_name(fn, &f2) == ER_OK)
            return msgf(msg, msg_size, ER_EINVAL,
                        "%s: option %s=%s names a float format exactref does not model (the variant with "
                        "infinities); the modelled one is %s (finite, no infinities)",
                        r->def->name, key, s, er_format_name(f2));
        if (er_format_is_unmodelled(s))
            return msgf(msg, msg_size, ER_EINVAL, "%s: option %s=%s names a format exactref does not model", r->def->name,
                        key, s);
        return msgf(msg, msg_size, ER_EINVAL,
                    "%s: option %s=%s is not a format name (f32, bf16, f16, f8E4M3FN, f8E5M2, ...)", r->def->name, key, s);
    }
    if (er_format_get_info(*fmt, &fi) != ER_OK || fi.kind != ER_KIND_FLOAT)
        return msgf(msg, msg_size, ER_EINVAL,
                    "%s: option %s=%s is not a float format: the output of %s is a float format (f32, bf16, f16, ...)",
                    r->def->name, key, s, r->def->name);
    return ER_OK;
}

er_status er_ops_opt_bool(er_opres *r, const char *key, int def, int *v, char *msg, size_t msg_size)
{
    const char *s = er_ops_opt(r, key);
    *v = def;
    if (!s) return ER_OK;
    if (!strcmp(s, "1") || !strcmp(s, "true") || !strcmp(s, "True")) *v = 1;
    else if (!strcmp(s, "0") || !strcmp(s, "false") || !strcmp(s, "False")) *v = 0;
    else return msgf(msg, msg_size, ER_EINVAL, "%s: option %s=%s is not 0 or 1", r->def->name, key, s);
    return ER_OK;
}

er_status er_ops_opt_choice(er_opres *r, const char *key, const char *choices, int def_index, int *index,
                            char *msg, size_t msg_size)
{
    const char *s = er_ops_opt(r, key);
    *index = def_index;
    if (!s) return ER_OK;
    size_t n = strlen(s);
    int k = 0;
    for (const char *c = choices; *c; k++) {
        const char *e = strchr(c, ' ');
        size_t w = e ? (size_t)(e - c) : strlen(c);
        if (w == n && strncmp(c, s, n) == 0) {
            *index = k;
            return ER_OK;
        }
        c += w;
        while (*c == ' ') c++;
    }
    return msgf(msg, msg_size, ER_EINVAL, "%s: option %s=%s is not one of: %s", r->def->name, key, s, choices);
}

er_status er_ops_opt_dim(er_opres *r, const char *key, int def, int ndim, int *dim, char *msg, size_t msg_size)
{
    int64_t d;
    er_status st = er_ops_opt_int(r, key, def, &d, msg, msg_size);
    if (st != ER_OK) return st;
    int n = ndim < 1 ? 1 : ndim;
    if (d < -n || d >= n)
        return msgf(msg, msg_size, ER_EINVAL, "%s: option %s=%lld is out of range for a %d-dimensional input "
                    "(from %d to %d)", r->def->name, key, (long long)d, ndim, -n, n - 1);
    *dim = (int)(d < 0 ? d + n : d);
    return ER_OK;
}

/* ---- tensors ---- */

static int64_t offset_of(const er_optensor *t, int64_t e)
{
    int64_t off = 0;
    for (int d = t->ndim - 1; d >= 0; d--) {
        int64_t n = t->shape[d] ? t->shape[d] : 1;
        off += (e % n) * t->strides[d];
        e /= n;
    }
    return off;
}

/* a format's storage bytes, the common ones without the table's lookup */
static int storage_of(int fmt)
{
    if (fmt == ER_FMT_F32) return 4;
    if (fmt == ER_FMT_BF16 || fmt == ER_FMT_F16) return 2;
    if (fmt == ER_FMT_F64) return 8;
    er_format_info fi;
    er_format_get_info(fmt, &fi);
    return fi.storage_bytes;
}

uint64_t er_ops_load(const er_optensor *t, int64_t e)
{
    int sb = storage_of(t->format);
    int contiguous = t->ndim == 0 || t->strides[t->ndim - 1] == 1;
    for (int d = t->ndim - 2; contiguous && d >= 0; d--) contiguous = t->strides[d] == t->strides[d + 1] * t->shape[d + 1];
    const unsigned char *p = (const unsigned char *)t->data + (contiguous ? e : offset_of(t, e)) * sb;
    switch (sb) {
    case 1: return p[0];
    case 2: { uint16_t v; memcpy(&v, p, 2); return v; }
    case 4: { uint32_t v; memcpy(&v, p, 4); return v; }
    default: { uint64_t v; memcpy(&v, p, 8); return v; }
    }
}

void er_ops_store(er_optensor *t, int64_t e, uint64_t bits)
{
    int sb = storage_of(t->format);
    unsigned char *p = (unsigned char *)t->data + e * sb;
    switch (sb) {
    case 1: p[0] = (unsigned char)bits; break;
    case 2: { uint16_t v = (uint16_t)bits; memcpy(p, &v, 2); break; }
    case 4: { uint32_t v = (uint32_t)bits; memcpy(p, &v, 4); break; }
    default: memcpy(p, &bits, 8); break;
    }
}

er_status er_ops_values(const er_optensor *t, double **out, char *msg, size_t msg_size)
{
    int64_t n = er_optensor_count(t);
    er_format_info fi;
    *out = NULL;
    if (er_format_get_info(t->format, &fi) != ER_OK || fi.kind != ER_KIND_FLOAT)
        return msgf(msg, msg_size, ER_EINVAL, "an input of format %s is not a float format",
                    er_format_name(t->format) ? er_format_name(t->format) : "?");
    double *v = (double *)malloc(sizeof(double) * (size_t)(n ? n : 1));
    if (!v) return msgf(msg, msg_size, ER_ENOMEM, "out of memory for %lld values", (long long)n);
    int contiguous = 1;
    int64_t s = 1; /* int64: an int wraps above 2^31 elements */
    for (int d = t->ndim - 1; d >= 0; d--) {
        if (t->shape[d] > 1 && t->strides[d] != s) contiguous = 0;
        s *= t->shape[d] ? t->shape[d] : 1;
    }
    if (contiguous && n > 0 &&
        er_convert_array(t->format, ER_FMT_F64, t->data, v, (size_t)n, ER_RND_NEAREST_EVEN, 0u, NULL, NULL) == ER_OK) {
        *out = v;
        return ER_OK;
    }
    for (int64_t e = 0; e < n; e++) {
        uint64_t b = er_ops_load(t, e);
        if (er_from_bits(t->format, b, &v[e]) != ER_OK) {
            free(v);
            return msgf(msg, msg_size, ER_EPATTERN, "element %lld (0x%llx) is not a pattern of %s", (long long)e,
                        (unsigned long long)b, fi.name);
        }
    }
    *out = v;
    return ER_OK;
}

er_status er_ops_alloc_output(er_opres *r, int i, int format, int ndim, const int64_t *shape, char *msg,
                              size_t msg_size)
{
    er_format_info fi;
    if (i < 0 || i >= ER_OP_MAXOUT) return msgf(msg, msg_size, ER_EINVAL, "output %d out of range", i);
    if (er_format_get_info(format, &fi) != ER_OK)
        return msgf(msg, msg_size, ER_EINVAL, "%s: unknown output format %d", r->def->name, format);
    er_optensor t = er_optensor_make(format, ndim, shape, NULL);
    int64_t n = er_optensor_count(&t);
    if (n < 0 || (uint64_t)n > SIZE_MAX / 16) /* a broadcast output too large: sizeof(double) * n would wrap */
        return msgf(msg, msg_size, ER_EINVAL, "%s: output %d has more elements than this machine can address",
                    r->def->name, i);
    t.data = calloc((size_t)(n ? n : 1), (size_t)fi.storage_bytes);
    r->xlo[i] = (double *)malloc(sizeof(double) * (size_t)(n ? n : 1));
    r->xhi[i] = (double *)malloc(sizeof(double) * (size_t)(n ? n : 1));
    if (!t.data || !r->xlo[i] || !r->xhi[i]) {
        free(t.data);
        return msgf(msg, msg_size, ER_ENOMEM, "%s: out of memory for an output of %lld elements", r->def->name,
                    (long long)n);
    }
    r->out[i] = t;
    if (r->nout < i + 1) r->nout = i + 1;
    /* the 2-D or 3-D view: (1, n) for 0-D and 1-D, leading dimensions collapsed above 3 */
    er_tensor v;
    memset(&v, 0, sizeof v);
    v.format = format;
    v.data = t.data;
    if (ndim <= 1) {
        v.ndim = 2;
        v.shape[0] = 1;
        v.shape[1] = ndim == 1 ? shape[0] : 1;
    } else if (ndim <= 3) {
        v.ndim = ndim;
        for (int d = 0; d < ndim; d++) v.shape[d] = shape[d];
    } else {
        v.ndim = 3;
        v.shape[0] = 1;
        for (int d = 0; d < ndim - 2; d++) v.shape[0] *= shape[d];
        v.shape[1] = shape[ndim - 2];
        v.shape[2] = shape[ndim - 1];
    }
    v.strides[v.ndim - 1] = 1;
    for (int d = v.ndim - 2; d >= 0; d--) v.strides[d] = v.strides[d + 1] * v.shape[d + 1];
    r->view[i] = v;
    return ER_OK;
}

er_status er_ops_broadcast(const er_optensor *a, const er_optensor *b, int *ndim, int64_t *shape, char *msg,
                           size_t msg_size)
{
    int n = a->ndim > b->ndim ? a->ndim : b->ndim;
    for (int d = 0; d < n; d++) {
        int da = d - (n - a->ndim), db = d - (n - b->ndim);
        int64_t sa = da >= 0 ? a->shape[da] : 1, sb = db >= 0 ? b->shape[db] : 1;
        if (sa != sb && sa != 1 && sb != 1)
            return msgf(msg, msg_size, ER_EINVAL, "shapes do not broadcast: dimension %d is %lld in one input and "
                        "%lld in the other", d, (long long)sa, (long long)sb);
        shape[d] = sa == 1 ? sb : sa;
    }
    *ndim = n;
    return ER_OK;
}

int64_t er_ops_bcast_index(const er_optensor *t, int ndim, const int64_t *shape, int64_t e)
{
    int64_t idx = 0, mul = 1;
    for (int d = ndim - 1; d >= 0; d--) {
        int64_t i = e % shape[d];
        e /= shape[d];
        int dt = d - (ndim - t->ndim);
        if (dt >= 0) {
            if (t->shape[dt] != 1) idx += i * mul;
            mul *= t->shape[dt];
        }
    }
    return idx;
}

void er_ops_split_dim(const er_optensor *t, int dim, int64_t *outer, int64_t *len, int64_t *inner)
{
    *outer = *inner = 1;
    *len = t->ndim ? t->shape[dim] : 1;
    for (int d = 0; d < dim; d++) *outer *= t->shape[d];
    for (int d = dim + 1; d < t->ndim; d++) *inner *= t->shape[d];
}

int er_ops_in_iv(const er_opres *r, int i, int64_t e, double v, double *lo, double *hi)
{
    double sl = r->slack[i] ? r->slack[i][e] : 0;
    if (!(sl < INFINITY)) {
        *lo = -INFINITY;
        *hi = INFINITY;
        return 1;
    }
    *lo = sl > 0 ? er_b_down(v - sl) : v;
    *hi = sl > 0 ? er_b_up(v + sl) : v;
    return 0;
}

/* ---- rounding ---- */

uint64_t er_ops_round(int fmt, double x) { return er_ops_rn_bits_inl(fmt, x); }

int er_ops_decide(int fmt, double lo, double hi, uint64_t *bits) { return er_ops_decide_inl(fmt, lo, hi, bits); }

/* ---- outward arithmetic: RN then one ulp outward (covers the exact value) ---- */

void er_ops_sub_iv(double a, double b, double *l, double *h) { er_ops_sub_iv_inl(a, b, l, h); }

double er_ops_add_dn(double a, double b) { return er_b_down(a + b); }
double er_ops_add_up(double a, double b) { return er_b_up(a + b); }
double er_ops_mul_dn(double a, double b) { return er_b_down(a * b); }
double er_ops_mul_up(double a, double b) { return er_b_up(a * b); }
double er_ops_div_dn(double a, double b) { return er_b_down(a / b); }
double er_ops_div_up(double a, double b) { return er_b_up(a / b); }

void er_ops_lib_result(const er_openv *env, double ulps, double *lo, double *hi)
{
    er_ops_lib_result_inl(env, ulps, lo, hi);
}

void er_ops_round_compute(const er_openv *env, double *lo, double *hi)
{
    double l, h;
    if (env->compute == ER_FMT_F32) { /* the conversion's own rounding to nearest (never changed) */
        l = (double)(float)*lo;
        h = (double)(float)*hi;
    } else if (env->compute == ER_FMT_F64) {
        l = *lo;
        h = *hi;
    } else if (er_ops_fast_format(env->compute)) { /* bf16, f16: the pattern to nearest even, its value */
        l = er_ops_bits_value(env->compute, er_ops_rn_bits(env->compute, *lo));
        h = er_ops_bits_value(env->compute, er_ops_rn_bits(env->compute, *hi));
    } else {
        er_round_double(env->compute, *lo, ER_RND_NEAREST_EVEN, &l);
        er_round_double(env->compute, *hi, ER_RND_NEAREST_EVEN, &h);
    }
    if (env->ftz) {
        if (l > 0 && l < env->tiny) l = 0;
        if (h < 0 && h > -env->tiny) h = 0;
    }
    *lo = l;
    *hi = h;
}

/* The documented defaults (docs/ops/README.md): the CUDA C++ Programming Guide's maximum ulp errors of
 * its math functions, which it measures from the correctly rounded result, plus the 0.5 ulp of that
 * rounding (the bound here is from the exact value): single precision expf, exp2f 2, logf 1, tanhf 2,
 * erff 2, x/y 2 (without -prec-div=true), rsqrtf 2, sqrtf 0 (IEEE by default); double exp, exp2, log,
 * tanh, rsqrt 1, erf 2, x/y and sqrt 0. */
double er_ops_ulps(const er_openv *env, const char *fn)
{
    static const struct { const char *fn; double f32, f64; } tab[] = {
        {"exp", 2.5, 1.5}, {"exp2", 2.5, 1.5}, {"log", 1.5, 1.5}, {"tanh", 2.5, 1.5}, {"erf", 2.5, 2.5},
        {"div", 2.5, 0.5}, {"rsqrt", 2.5, 1.5}, {"sqrt", 0.5, 0.5},
    };
    if (env->o->ulps >= 0) return env->o->ulps;
    for (size_t k = 0; k < sizeof tab / sizeof tab[0]; k++)
        if (!strcmp(tab[k].fn, fn)) return env->compute == ER_FMT_F64 ? tab[k].f64 : tab[k].f32;
    return 2.5; /* a function without an entry: 2 ulps from the correctly rounded result */
}

/* ---- threads ---- */

typedef struct par_job {
    er_ops_range_fn fn;
    void *ctx;
    int64_t i0, i1;
    er_status st;
    int own_thread;
    char msg[256];
} par_job;

static void *par_run(void *p)
{
    par_job *j = (par_job *)p;
    j->msg[0] = 0;
    j->st = j->fn(j->ctx, j->i0, j->i1, j->msg, sizeof j->msg);
    if (j->own_thread) er_ops_mp_thread_done(); /* MPFR's per-thread caches */
    return NULL;
}

er_status er_ops_parallel(int64_t n, int64_t min_per_thread, er_ops_range_fn fn, void *ctx, char *msg,
                          size_t msg_size)
{
    enum { MAXT = 64 };
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    const char *env = getenv("EXACTREF_THREADS");
    if (env && atoi(env) > 0) ncpu = atoi(env);
    if (ncpu < 1) ncpu = 1;
    if (ncpu > MAXT) ncpu = MAXT;
    if (min_per_thread < 1) min_per_thread = 1;
    int64_t nt = n / min_per_thread;
    if (nt > ncpu) nt = ncpu;
    if (nt <= 1) return fn(ctx, 0, n, msg, msg_size);
    par_job jobs[MAXT];
    pthread_t th[MAXT];
    int started[MAXT];
    for (int64_t t = 0; t < nt; t++) {
        jobs[t].fn = fn;
        jobs[t].ctx = ctx;
        jobs[t].i0 = n * t / nt;
        jobs[t].i1 = n * (t + 1) / nt;
        jobs[t].st = ER_OK;
        jobs[t].own_thread = t > 0;
        started[t] = t > 0 && pthread_create(&th[t], NULL, par_run, &jobs[t]) == 0;
    }
    par_run(&jobs[0]);
    for (int64_t t = 1; t < nt; t++) {
        if (started[t]) pthread_join(th[t], NULL);
        else {
            jobs[t].own_thread = 0;
            par_run(&jobs[t]); /* no thread: run it here */
        }
    }
    for (int64_t t = 0; t < nt; t++)
        if (jobs[t].st != ER_OK) return msgf(msg, msg_size, jobs[t].st, "%s", jobs[t].msg);
    return ER_OK;
}

/* ---- rows of an operation's bounds over threads ---- */

typedef struct rows_job {
    er_opres *r;
    int i;
    const er_openv *env;
    er_ops_rows_fn fn;
    double *lo, *hi;
    unsigned char *flags;
} rows_job;

static er_status rows_part(void *ctx, int64_t r0, int64_t r1, char *msg, size_t msg_size)
{
    rows_job *j = (rows_job *)ctx;
    er_ops_scratch sc;
    memset(&sc, 0, sizeof sc);
    er_status st = j->fn(j->r, j->i, j->env, r0, r1, 0, &sc, j->lo, j->hi, j->flags, msg, msg_size);
    er_ops_scratch_free(&sc);
    return st;
}

double *er_ops_scratch_buf(er_ops_scratch *sc, size_t n)
{
    if (n > sc->cap) {
        double *b = (double *)malloc(sizeof(double) * (n ? n : 1));
        if (!b) return NULL;
        free(sc->buf);
        sc->buf = b;
        sc->cap = n;
    }
    return sc->buf;
}

er_ops_expc *er_ops_scratch_expc(er_ops_scratch *sc)
{
    if (!sc->ec_made) {
        sc->ec = er_ops_expc_new(); /* NULL: no memo */
        sc->ec_made = 1;
    }
    return sc->ec;
}

void er_ops_scratch_free(er_ops_scratch *sc)
{
    er_ops_expc_free(sc->ec);
    free(sc->buf);
    memset(sc, 0, sizeof *sc);
}

er_status er_ops_rows_bounds(er_opres *r, int i, const er_openv *env, int64_t rows, int64_t len, er_ops_rows_fn fn,
                             double *lo, double *hi, unsigned char *flags, char *msg, size_t msg_size)
{
    rows_job j = {r, i, env, fn, lo, hi, flags};
    if (rows <= 0) return ER_OK;
    return er_ops_parallel(rows, 1 + 65536 / (len + 1), rows_part, &j, msg, msg_size);
}

/* ---- a rising precision's decided element ---- */

er_ops_mp *er_ops_mp_next(const char *name, const char *what, int64_t idx, int prec, int limit, int nreg,
                          er_status *st, char *msg, size_t msg_size)
{
    if (prec > limit) {
        *st = msgf(msg, msg_size, ER_EINVAL, "%s: the rounding of %s %lld is not decided at %d bits", name, what,
                   (long long)idx, prec / 2);
        return NULL;
    }
    er_ops_mp *mp = er_ops_mp_new(prec, nreg);
    if (!mp) *st = msgf(msg, msg_size, ER_ENOMEM, "%s: out of memory", name);
    return mp;
}

er_status er_ops_mp_element(er_opres *r, int64_t e, int nreg, int reg, int limit, void (*fill)(void *ctx, er_ops_mp *m),
                            void *ctx, char *msg, size_t msg_size)
{
    er_status st = ER_OK;
    for (int prec = 128;; prec *= 2) {
        er_ops_mp *m = er_ops_mp_next(r->def->name, "element", e, prec, limit, nreg, &st, msg, msg_size);
        if (!m) return st;
        fill(ctx, m);
        int ok = er_ops_mp_store(m, reg, r, 0, e);
        er_ops_mp_free(m);
        if (ok) return ER_OK;
    }
}

int er_ops_mp_store(er_ops_mp *m, int reg, er_opres *r, int i, int64_t e)
{
    uint64_t bits;
    if (!er_ops_mp_decide(m, reg, r->out[i].format, &bits)) return 0;
    er_ops_store(&r->out[i], e, bits);
    er_ops_mp_get(m, reg, &r->xlo[i][e], &r->xhi[i][e]);
    return 1;
}
