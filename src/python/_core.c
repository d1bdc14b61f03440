/* _core.c: the CPython extension exactref._core: the C Result API over buffers, the GIL released around long calls. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <pythread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "exactref/exactref.h"
#include "exactref/report.h"
#include "exactref/interp.h"
#include "standards_internal.h"

/*
 * The Python layer (python/exactref) prepares every array: an unsigned-integer view of the bit
 * patterns (item size = the format's storage bytes), 2-D or 3-D, strides non-negative multiples of
 * the item size.  This module only checks that and hands the buffers to the library; it never copies
 * an operand.  One lock serialises the library's Result calls (a Result keeps a cache of bounds that
 * views and later results also read); it is taken with the GIL released.
 */

static PyThread_type_lock er_py_lock;

#define ER_PY_CALL(...)                                   \
    do {                                                  \
        Py_BEGIN_ALLOW_THREADS                            \
        PyThread_acquire_lock(er_py_lock, WAIT_LOCK);     \
        __VA_ARGS__;                                      \
        PyThread_release_lock(er_py_lock);                \
        Py_END_ALLOW_THREADS                              \
    } while (0)

/* Raise the Python exception for a status, with the library's message. */
static PyObject *raise_status(er_status st, const char *msg)
{
    const char *m = (msg && msg[0]) ? msg : er_status_string(st);
    PyObject *type = PyExc_ValueError;
    if (st == ER_ENOMEM) type = PyExc_MemoryError;
    else if (st == ER_EUNSUPPORTED) type = PyExc_NotImplementedError;
    else if (st == ER_ENODEVICE || st == ER_EDEVICE) type = PyExc_RuntimeError;
    PyErr_SetString(type, m);
    return NULL;
}

/* An operand: its buffer (held while the tensor is used) and the tensor over it. */
typedef struct {
    Py_buffer view;
    int held;
    er_tensor t;
} operand;

static void operand_release(operand *o)
{
    if (o->held) PyBuffer_Release(&o->view);
    o->held = 0;
}

/* Fill o from obj (a buffer of bit patterns of format fmt); what names it in messages. */
static int operand_get(PyObject *obj, int fmt, const char *what, int writable, operand *o)
{
    er_format_info fi;
    memset(o, 0, sizeof *o);
    if (er_format_get_info(fmt, &fi) != ER_OK) {
        PyErr_Format(PyExc_ValueError, "%s: unknown format id %d", what, fmt);
        return -1;
    }
    if (PyObject_GetBuffer(obj, &o->view, writable ? PyBUF_RECORDS : PyBUF_RECORDS_RO) != 0) return -1;
    o->held = 1;
    Py_buffer *v = &o->view;
    if (v->ndim != 2 && v->ndim != 3) {
        PyErr_Format(PyExc_ValueError, "%s must be 2-D or 3-D (a leading batch dimension), not %d-D", what, v->ndim);
        goto fail;
    }
    if (v->itemsize != fi.storage_bytes) {
        PyErr_Format(PyExc_TypeError, "%s: elements of %zd bytes, but %s is stored in %d", what, v->itemsize, fi.name,
                     fi.storage_bytes);
        goto fail;
    }
    o->t.format = fmt;
    o->t.ndim = v->ndim;
    o->t.data = v->buf;
    for (int d = 0; d < v->ndim; d++) {
        Py_ssize_t s = v->strides ? v->strides[d] : 0;
        if (!v->strides) {
            s = v->itemsize;
            for (int q = d + 1; q < v->ndim; q++) s *= v->shape[q];
        }
        if (s < 0 || s % v->itemsize) {
            PyErr_Format(PyExc_ValueError, "%s: stride %zd bytes in dimension %d is not a non-negative multiple of %zd",
                         what, s, d, v->itemsize);
            goto fail;
        }
        o->t.shape[d] = v->shape[d];
        o->t.strides[d] = s / v->itemsize;
    }
    return 0;
fail:
    operand_release(o);
    return -1;
}

/* A contiguous output buffer of exactly n items of itemsize bytes. */
static int out_get(PyObject *obj, Py_ssize_t n, Py_ssize_t itemsize, const char *what, Py_buffer *v)
{
    if (PyObject_GetBuffer(obj, v, PyBUF_WRITABLE | PyBUF_C_CONTIGUOUS) != 0) return -1;
    if (v->len != n * itemsize) {
        PyErr_Format(PyExc_ValueError, "%s: %zd bytes given, %zd needed", what, v->len, n * itemsize);
        PyBuffer_Release(v);
        return -1;
    }
    return 0;
}

/* ---------------------------------------------------------------------------------------------- */
/* CResult: one er_result and everything its tensors point at. */

typedef struct {
    PyObject_HEAD
    er_result *r;
    operand ops[6]; /* a, b, c, a_scale, b_scale, d (or the gradient of a backward result) */
    er_tensor grad; /* backward: the gradient tensor the result points at */
    PyObject *deps; /* a tuple of objects that must outlive r (earlier results, the base of a view) */
} CResult;

static PyTypeObject CResult_Type;

static void CResult_dealloc(CResult *self)
{
    if (self->r) er_result_free(self->r);
    self->r = NULL;
    for (int q = 0; q < 6; q++) operand_release(&self->ops[q]);
    Py_XDECREF(self->deps);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static CResult *CResult_new_empty(void)
{
    CResult *c = PyObject_New(CResult, &CResult_Type);
    if (!c) return NULL;
    c->r = NULL;
    memset(c->ops, 0, sizeof c->ops);
    memset(&c->grad, 0, sizeof c->grad);
    c->deps = NULL;
    return c;
}

static int check_result(PyObject *o, const char *what)
{
    if (o != Py_None && !PyObject_TypeCheck(o, &CResult_Type)) {
        PyErr_Format(PyExc_TypeError, "%s: expected a result", what);
        return -1;
    }
    return 0;
}

/* Parse tolerance options: compute (-1: default), ulps, flush_to_zero, standard name. */
static int tol_opts(int compute, double ulps, int ftz, const char *standard, er_tol_opts *o)
{
    char msg[512] = "";
    er_tol_opts_init(o);
    o->compute = compute;
    o->ulps = ulps;
    o->flush_to_zero = ftz;
    er_status st = er_standard_parse(standard, &o->standard, msg, sizeof msg);
    if (st != ER_OK) {
        raise_status(st, msg);
        return -1;
    }
    return 0;
}

/* The arguments of er_mma over a result's held operands (A, B, C, the scales, the output d). */
static void mma_args_of(CResult *self, int block, int rounding, unsigned int opts, int backend, int threads,
                        int strategy, int device, er_mma_args *a)
{
    er_mma_args_init(a);
    a->a = &self->ops[0].t;
    a->b = &self->ops[1].t;
    a->c = self->ops[2].held ? &self->ops[2].t : NULL;
    if (self->ops[3].held) {
        a->a_scale = &self->ops[3].t;
        a->b_scale = &self->ops[4].t;
        a->block = block;
    }
    a->d = &self->ops[5].t;
    a->rounding = rounding;
    a->opts = opts;
    a->backend = backend;
    a->threads = threads;
    a->strategy = strategy;
    a->device = device;
}

/* A new result holding the call's operands (A, B, C, a_scale, b_scale, the output; Py_None: absent),
 * A, B and the output required (and, with pair_scales, both scales or neither); NULL with Python's
 * error set. */
static CResult *result_with_operands(PyObject *const objs[6], const int fmts[6], int pair_scales)
{
    static const char *const names[6] = {"A", "B", "C", "a_scale", "b_scale", "the output"};
    CResult *self = CResult_new_empty();
    if (!self) return NULL;
    for (int q = 0; q < 6; q++) {
        if (objs[q] == Py_None) continue;
        if (operand_get(objs[q], fmts[q], names[q], q == 5, &self->ops[q]) != 0) {
            Py_DECREF(self);
            return NULL;
        }
    }
    if (!self->ops[0].held || !self->ops[1].held || !self->ops[5].held) {
        Py_DECREF(self);
        PyErr_SetString(PyExc_ValueError, "A, B and the output are required");
        return NULL;
    }
    if (pair_scales && self->ops[3].held != self->ops[4].held) {
        Py_DECREF(self);
        PyErr_SetString(PyExc_ValueError, "block scaling needs both a_scale and b_scale");
        return NULL;
    }
    return self;
}

/*
 * create(a, afmt, b, bfmt, c, cfmt, a_scale, b_scale, sfmt, block, d, dfmt, rounding, backend, threads,
 *        a_from, b_from, c_from, from_compute, from_ulps, from_ftz, from_standard[, opts, strategy, device])
 * a, b, c, the scales: bit-pattern buffers (c and the scales may be None); d: the writable output.
 * a_from, b_from, c_from: earlier results read in place of a, b, c (or None).  opts: er_mma_args.opts
 * (ER_OPT_SATURATE: `saturate=`, as the command's --saturate), 0 when not given; strategy
 * (ER_STRATEGY_*, default auto) and device (-1: the environment's or the first) as the command's
 * --strategy and --device.
 */
static PyObject *py_create(PyObject *mod, PyObject *args)
{
    PyObject *oa, *ob, *oc, *osa, *osb, *od, *fa, *fb, *fc;
    int afmt, bfmt, cfmt, sfmt, block, dfmt, rounding, backend, threads, fcomp, fftz;
    double fulps;
    const char *fstd;
    unsigned int opts = 0;
    int strategy = ER_STRATEGY_AUTO, device = -1;
    (void)mod;
    if (!PyArg_ParseTuple(args, "OiOiOiOOiiOiiiiOOOidis|Iii", &oa, &afmt, &ob, &bfmt, &oc, &cfmt, &osa, &osb, &sfmt,
                          &block, &od, &dfmt, &rounding, &backend, &threads, &fa, &fb, &fc, &fcomp, &fulps, &fftz,
                          &fstd, &opts, &strategy, &device))
        return NULL;
    if (check_result(fa, "A") || check_result(fb, "B") || check_result(fc, "C")) return NULL;
    PyObject *objs[6] = {oa, ob, oc, osa, osb, od};
    const int fmts[6] = {afmt, bfmt, cfmt, sfmt, sfmt, dfmt};
    CResult *self = result_with_operands(objs, fmts, 1);
    if (!self) return NULL;
    er_mma_args a;
    mma_args_of(self, block, rounding, opts, backend, threads, strategy, device, &a);
    char msg[1024] = "";
    er_status st;
    er_result *r = NULL;
    if (fa != Py_None || fb != Py_None || fc != Py_None) {
        er_tol_opts fo;
        if (tol_opts(fcomp, fulps, fftz, fstd, &fo) != 0) {
            Py_DECREF(self);
            return NULL;
        }
        er_result *ra = fa != Py_None ? ((CResult *)fa)->r : NULL, *rb = fb != Py_None ? ((CResult *)fb)->r : NULL,
                  *rc = fc != Py_None ? ((CResult *)fc)->r : NULL;
        ER_PY_CALL(st = er_result_create_from(&a, ra, rb, rc, &fo, &r, msg, sizeof msg));
        self->deps = PyTuple_Pack(3, fa, fb, fc);
        if (!self->deps) {
            if (st == ER_OK) er_result_free(r);
            Py_DECREF(self);
            return NULL;
        }
    } else {
        ER_PY_CALL(st = er_result_create(&a, &r, msg, sizeof msg));
    }
    if (st != ER_OK) {
        Py_DECREF(self);
        return raise_status(st, msg);
    }
    self->r = r;
    return (PyObject *)self;
}

static PyObject *report_to_dict(const er_check_report *rep, const int64_t *index, int64_t cap, int full);
#define ER_PY_OUTSIDE_CAP 1000

/*
 * create_checked(a, afmt, b, bfmt, c, cfmt, a_scale, b_scale, sfmt, block, d, dfmt, rounding, backend,
 *                threads, output, compute, ulps, ftz, standard, covered[, opts, strategy, device]): create's
 * Result on arrays and
 * the check of output against it in one call (er_check with co.result): on a large output in tiles,
 * whose rounded answers fill d and make the Result (the reference runs once, in bounded memory).
 * Returns (result, report dict); covered (uint8 buffer of the output's elements, or None) filled.
 */
static PyObject *py_create_checked(PyObject *mod, PyObject *args)
{
    PyObject *oa, *ob, *oc, *osa, *osb, *od, *oo, *ocv;
    int afmt, bfmt, cfmt, sfmt, block, dfmt, rounding, backend, threads, compute, ftz;
    double ulps;
    const char *std;
    unsigned int opts = 0;
    int strategy = ER_STRATEGY_AUTO, device = -1;
    (void)mod;
    if (!PyArg_ParseTuple(args, "OiOiOiOOiiOiiiiOidisO|Iii", &oa, &afmt, &ob, &bfmt, &oc, &cfmt, &osa, &osb, &sfmt,
                          &block, &od, &dfmt, &rounding, &backend, &threads, &oo, &compute, &ulps, &ftz, &std, &ocv,
                          &opts, &strategy, &device))
        return NULL;
    er_tol_opts o;
    if (tol_opts(compute, ulps, ftz, std, &o) != 0) return NULL;
    PyObject *objs[6] = {oa, ob, oc, osa, osb, od};
    const int fmts[6] = {afmt, bfmt, cfmt, sfmt, sfmt, dfmt};
    CResult *self = result_with_operands(objs, fmts, 1);
    if (!self) return NULL;
    operand out;
    if (operand_get(oo, dfmt, "output", 0, &out) != 0) {
        Py_DECREF(self);
        return NULL;
    }
    Py_buffer cv;
    int have_cov = ocv != Py_None;
    if (have_cov) {
        int64_t count = 1;
        for (int q = 0; q < self->ops[5].t.ndim; q++) count *= self->ops[5].t.shape[q];
        if (out_get(ocv, (Py_ssize_t)count, 1, "covered", &cv) != 0) {
            operand_release(&out);
            Py_DECREF(self);
            return NULL;
        }
    }
    er_mma_args a;
    mma_args_of(self, block, rounding, opts, backend, threads, strategy, device, &a);
    er_check_opts co;
    er_check_opts_init(&co);
    co.covered = have_cov ? (unsigned char *)cv.buf : NULL;
    /* tiles of about the arrays' bytes (the command's rule takes twice: Python holds the arrays and the
     * rounded answer besides) */
    for (int q = 0; q < 6; q++)
        if (q != 2 && q != 3 && q != 4 && self->ops[q].held) co.tile_bytes += (int64_t)self->ops[q].view.len;
    co.tile_bytes += (int64_t)out.view.len;
    int64_t *index = PyMem_Malloc(ER_PY_OUTSIDE_CAP * sizeof *index);
    if (!index) {
        operand_release(&out);
        if (have_cov) PyBuffer_Release(&cv);
        Py_DECREF(self);
        return PyErr_NoMemory();
    }
    co.outside_index = index;
    co.outside_cap = ER_PY_OUTSIDE_CAP;
    er_result *r = NULL;
    co.result = &r;
    er_check_report rep;
    char msg[1024] = "";
    er_status st;
    ER_PY_CALL(st = er_check(&a, &o, &out.t, &co, &rep, NULL, msg, sizeof msg));
    operand_release(&out);
    if (have_cov) PyBuffer_Release(&cv);
    if (st != ER_OK) {
        PyMem_Free(index);
        Py_DECREF(self);
        return raise_status(st, msg);
    }
    self->r = r;
    PyObject *d = report_to_dict(&rep, index, ER_PY_OUTSIDE_CAP, 0);
    PyMem_Free(index);
    if (!d) {
        Py_DECREF(self);
        return NULL;
    }
    return Py_BuildValue("(NN)", (PyObject *)self, d);
}

/* convert(src, from, dst, to, rounding, n): n patterns, contiguous buffers; returns the flags. */
static PyObject *py_convert(PyObject *mod, PyObject *args)
{
    PyObject *os, *od;
    int from, to, dir;
    Py_ssize_t n;
    er_format_info fs, fd;
    (void)mod;
    if (!PyArg_ParseTuple(args, "OiOiin", &os, &from, &od, &to, &dir, &n)) return NULL;
    if (n < 0 || er_format_get_info(from, &fs) != ER_OK || er_format_get_info(to, &fd) != ER_OK) {
        PyErr_SetString(PyExc_ValueError, "convert: bad format or count");
        return NULL;
    }
    Py_buffer vs, vd;
    if (PyObject_GetBuffer(os, &vs, PyBUF_C_CONTIGUOUS) != 0) return NULL;
    if (vs.len != n * fs.storage_bytes) {
        PyBuffer_Release(&vs);
        PyErr_SetString(PyExc_ValueError, "convert: source size mismatch");
        return NULL;
    }
    if (out_get(od, n, fd.storage_bytes, "convert", &vd) != 0) {
        PyBuffer_Release(&vs);
        return NULL;
    }
    unsigned flags = 0;
    size_t bad = 0;
    er_status st;
    Py_BEGIN_ALLOW_THREADS
    st = er_convert_array(from, to, vs.buf, vd.buf, (size_t)n, dir, 0, &flags, &bad);
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&vs);
    PyBuffer_Release(&vd);
    if (st == ER_EPATTERN)
        return PyErr_Format(PyExc_ValueError, "element %zu is not a bit pattern of %s", bad, fs.name);
    if (st != ER_OK) return raise_status(st, NULL);
    return PyLong_FromUnsignedLong(flags);
}

static PyObject *py_format_id(PyObject *mod, PyObject *arg)
{
    (void)mod;
    const char *name = PyUnicode_AsUTF8(arg);
    if (!name) return NULL;
    int fmt;
    if (er_format_from_name(name, &fmt) != ER_OK) {
        if (er_format_is_unmodelled(name))
            return PyErr_Format(PyExc_ValueError, "'%s' is a format exactref does not model", name);
        return PyErr_Format(PyExc_ValueError, "unknown format '%s' (exactref.formats() lists the names)", name);
    }
    return PyLong_FromLong(fmt);
}

static PyObject *py_rounding_id(PyObject *mod, PyObject *arg)
{
    (void)mod;
    const char *name = PyUnicode_AsUTF8(arg);
    if (!name) return NULL;
    int dir;
    if (er_rounding_from_name(name, &dir) != ER_OK)
        return PyErr_Format(PyExc_ValueError,
                            "unknown rounding '%s' (nearest_even, nearest_away, zero, negative_inf, positive_inf, odd)",
                            name);
    return PyLong_FromLong(dir);
}

static PyObject *py_check_standard(PyObject *mod, PyObject *arg)
{
    (void)mod;
    const char *name = PyUnicode_AsUTF8(arg);
    if (!name) return NULL;
    er_standard s;
    char msg[512] = "";
    er_status st = er_standard_parse(name, &s, msg, sizeof msg);
    if (st != ER_OK) return raise_status(st, msg);
    return PyUnicode_FromString(s.name);
}

/* The format table: a list of dicts. */
static PyObject *py_format_table(PyObject *mod, PyObject *unused)
{
    (void)mod, (void)unused;
    int n = er_format_count();
    PyObject *list = PyList_New(n);
    if (!list) return NULL;
    for (int f = 0; f < n; f++) {
        er_format_info fi;
        er_format_get_info(f, &fi);
        const char *kind = fi.kind == ER_KIND_FLOAT ? "float" : fi.kind == ER_KIND_SINT ? "sint" : "uint";
        PyObject *d = Py_BuildValue(
            "{s:i,s:s,s:s,s:s,s:i,s:i,s:i,s:i,s:i,s:i,s:i,s:i,s:i,s:i,s:i,s:K,s:K}", "id", f, "name", fi.name,
            "alias", fi.alias, "kind", kind, "width", fi.width, "storage_bytes", fi.storage_bytes, "exponent_bits",
            fi.exponent_bits, "significand_bits", fi.significand_bits, "padding_bits", fi.padding_bits, "bias",
            fi.bias, "emin", fi.emin, "emax", fi.emax, "is_signed", fi.is_signed, "has_inf", fi.has_inf, "has_nan",
            fi.has_nan, "max_finite_bits", (unsigned long long)fi.max_finite_bits, "min_subnormal_bits",
            (unsigned long long)fi.min_subnormal_bits);
        if (!d) {
            Py_DECREF(list);
            return NULL;
        }
        PyList_SET_ITEM(list, f, d);
    }
    return list;
}

static PyObject *py_version(PyObject *mod, PyObject *unused)
{
    (void)mod, (void)unused;
    return PyUnicode_FromString(er_version());
}

static PyObject *py_standard_names(PyObject *mod, PyObject *unused)
{
    (void)mod, (void)unused;
    return PyUnicode_FromString(er_standard_names());
}

/* ---- CResult methods ---- */

static int alive(CResult *self)
{
    if (!self->r) {
        PyErr_SetString(PyExc_ValueError, "the result is not initialised");
        return 0;
    }
    return 1;
}

/* bounds(compute, ulps, ftz, standard, tolerance, low, high, has_range, may_pinf, may_ninf, may_nan):
 * each output a contiguous buffer of count items (or None). */
static PyObject *CResult_bounds(CResult *self, PyObject *args)
{
    int compute, ftz;
    double ulps;
    const char *std;
    PyObject *outs[7];
    static const Py_ssize_t sizes[7] = {8, 8, 8, 1, 1, 1, 1};
    if (!alive(self)) return NULL;
    if (!PyArg_ParseTuple(args, "idisOOOOOOO", &compute, &ulps, &ftz, &std, &outs[0], &outs[1], &outs[2], &outs[3],
                          &outs[4], &outs[5], &outs[6]))
        return NULL;
    er_tol_opts o;
    if (tol_opts(compute, ulps, ftz, std, &o) != 0) return NULL;
    const er_bounds *b = NULL;
    er_status st;
    char msg[1024] = "";
    const er_tensor *d = er_result_rounded(self->r);
    int64_t count = 1;
    for (int q = 0; q < d->ndim; q++) count *= d->shape[q];
    Py_buffer v[7];
    int got[7] = {0};
    for (int q = 0; q < 7; q++) {
        if (outs[q] == Py_None) continue;
        if (out_get(outs[q], (Py_ssize_t)count, sizes[q], "bounds", &v[q]) != 0) {
            for (int p = 0; p < q; p++)
                if (got[p]) PyBuffer_Release(&v[p]);
            return NULL;
        }
        got[q] = 1;
    }
    ER_PY_CALL({
        st = er_result_bounds(self->r, &o, &b, msg, sizeof msg);
        if (st == ER_OK) {
            const void *src[7] = {b->tolerance, b->low, b->high, b->has_range, b->may_pinf, b->may_ninf, b->may_nan};
            for (int q = 0; q < 7; q++)
                if (got[q] && count) memcpy(v[q].buf, src[q], (size_t)count * (size_t)sizes[q]);
        }
    });
    for (int q = 0; q < 7; q++)
        if (got[q]) PyBuffer_Release(&v[q]);
    if (st != ER_OK) return raise_status(st, msg);
    Py_RETURN_NONE;
}

/* covers(output, compute, ulps, ftz, standard, covered): returns the count outside. */
static PyObject *CResult_covers(CResult *self, PyObject *args)
{
    PyObject *oo, *oc;
    int compute, ftz;
    double ulps;
    const char *std;
    if (!alive(self)) return NULL;
    if (!PyArg_ParseTuple(args, "OidisO", &oo, &compute, &ulps, &ftz, &std, &oc)) return NULL;
    er_tol_opts o;
    if (tol_opts(compute, ulps, ftz, std, &o) != 0) return NULL;
    const er_tensor *d = er_result_rounded(self->r);
    operand out;
    if (operand_get(oo, d->format, "output", 0, &out) != 0) return NULL;
    int64_t count = 1;
    for (int q = 0; q < d->ndim; q++) count *= d->shape[q];
    Py_buffer cv;
    if (out_get(oc, (Py_ssize_t)count, 1, "covered", &cv) != 0) {
        operand_release(&out);
        return NULL;
    }
    char msg[1024] = "";
    er_status st;
    int64_t outside = 0;
    ER_PY_CALL(st = er_result_covers(self->r, &o, &out.t, (unsigned char *)cv.buf, &outside, msg, sizeof msg));
    operand_release(&out);
    PyBuffer_Release(&cv);
    if (st != ER_OK) return raise_status(st, msg);
    return PyLong_FromLongLong((long long)outside);
}

/* The outside elements listed in a report dict: at most this many (the command's JSON cap). */

/* An index tuple of the report's shape for a flat index. */
static PyObject *report_index_tuple(const er_check_report *rep, int64_t flat)
{
    int64_t idx[3];
    er_check_report_index(rep, flat, idx);
    return rep->ndim == 3 ? Py_BuildValue("(LLL)", (long long)idx[0], (long long)idx[1], (long long)idx[2])
                          : Py_BuildValue("(LL)", (long long)idx[1], (long long)idx[2]);
}

/* A report as a dict; index: the first rep->outside_listed outside elements' flat indices (NULL: none
 * listed), cap the cap they were listed under; full: also log_hist and map. */
static PyObject *report_to_dict(const er_check_report *rep, const int64_t *index, int64_t cap, int full)
{
    PyObject *hist = PyList_New(ER_REPORT_BINS), *labels = PyList_New(ER_REPORT_BINS);
    int64_t listed = index ? rep->outside_listed : 0;
    PyObject *outside = PyList_New((Py_ssize_t)listed);
    PyObject *idx = NULL, *d = NULL;
    if (!hist || !labels || !outside) goto done;
    for (int q = 0; q < ER_REPORT_BINS; q++) {
        PyList_SET_ITEM(hist, q, PyLong_FromLongLong((long long)rep->hist[q]));
        PyList_SET_ITEM(labels, q, PyUnicode_FromString(er_check_report_bin_name(q)));
    }
    for (int64_t k = 0; k < listed; k++) {
        PyObject *t = report_index_tuple(rep, index[k]);
        if (!t) goto done;
        PyList_SET_ITEM(outside, (Py_ssize_t)k, t);
    }
    static const char *const why[5] = {"none", "ulps", "special", "not_finite", "int"};
    idx = rep->ndim == 3 ? Py_BuildValue("(LLL)", (long long)rep->worst_index[0], (long long)rep->worst_index[1],
                                         (long long)rep->worst_index[2])
                         : Py_BuildValue("(LL)", (long long)rep->worst_index[1], (long long)rep->worst_index[2]);
    if (!idx) goto done;
    d = Py_BuildValue("{s:L,s:L,s:O,s:O,s:L,s:O,s:i,s:s,s:L,s:K,s:K,s:K,s:K,s:d,s:d,s:d,s:d,s:i,s:i,s:d,s:d,s:i,s:i,s:i,"
                      "s:i,s:i,s:i,s:O,s:L,s:O}",
                      "elements", (long long)rep->elements, "outside", (long long)rep->outside, "hist", hist,
                      "hist_labels", labels, "worst", (long long)rep->worst, "worst_index", idx, "worst_covered",
                      rep->worst_covered, "worst_why",
                      (rep->worst_why >= 0 && rep->worst_why < 5) ? why[rep->worst_why] : "?", "ulps_beyond",
                      (long long)rep->ulps_beyond, "output", (unsigned long long)rep->output, "rounded",
                      (unsigned long long)rep->rounded, "low", (unsigned long long)rep->low, "high",
                      (unsigned long long)rep->high, "output_value", rep->output_value, "rounded_value",
                      rep->rounded_value, "low_value", rep->low_value, "high_value", rep->high_value, "has_range",
                      rep->has_range, "single_value", rep->single_value, "tolerance", rep->tolerance, "ratio",
                      rep->ratio, "operand_vacuous", rep->operand_vacuous, "zero_accepted", rep->zero_accepted,
                      "narrower_format", rep->narrower_format, "may_pinf", rep->may_pinf, "may_ninf", rep->may_ninf,
                      "may_nan", rep->may_nan, "outside_indices", outside, "outside_indices_cap", (long long)cap,
                      "outside_indices_complete", (index && rep->outside_listed == rep->outside) ? Py_True : Py_False);
    if (d && full) {
        PyObject *lh = PyList_New(ER_REPORT_LOG_BINS), *map = PyList_New(ER_REPORT_MAP);
        int bad = !lh || !map;
        for (int q = 0; !bad && q < ER_REPORT_LOG_BINS; q++)
            PyList_SET_ITEM(lh, q, PyLong_FromLongLong((long long)rep->log_hist[q]));
        for (int q = 0; !bad && q < ER_REPORT_MAP; q++) {
            PyObject *row = PyList_New(ER_REPORT_MAP);
            if (!row) {
                bad = 1;
                break;
            }
            for (int w = 0; w < ER_REPORT_MAP; w++) PyList_SET_ITEM(row, w, PyLong_FromLongLong((long long)rep->map[q][w]));
            PyList_SET_ITEM(map, q, row);
        }
        PyObject *nl = bad ? NULL : PyLong_FromLongLong((long long)rep->outside_listed);
        if (!nl || PyDict_SetItemString(d, "log_hist", lh) || PyDict_SetItemString(d, "map", map) ||
            PyDict_SetItemString(d, "outside_listed", nl))
            Py_CLEAR(d);
        Py_XDECREF(nl);
        Py_XDECREF(lh);
        Py_XDECREF(map);
    }
done:
    Py_XDECREF(hist);
    Py_XDECREF(labels);
    Py_XDECREF(outside);
    Py_XDECREF(idx);
    return d;
}

/* report(output, compute, ulps, ftz, standard[, cap]): the check's scoring (the command's report
 * function), as a dict, with the first cap (default 1000, the command's) outside elements' indices. */
static PyObject *CResult_report(CResult *self, PyObject *args)
{
    PyObject *oo;
    int compute, ftz;
    double ulps;
    const char *std;
    Py_ssize_t cap = ER_PY_OUTSIDE_CAP;
    if (!alive(self)) return NULL;
    if (!PyArg_ParseTuple(args, "Oidis|n", &oo, &compute, &ulps, &ftz, &std, &cap)) return NULL;
    if (cap < 0) {
        PyErr_SetString(PyExc_ValueError, "report: the cap of outside indices must not be negative");
        return NULL;
    }
    er_tol_opts o;
    if (tol_opts(compute, ulps, ftz, std, &o) != 0) return NULL;
    operand out;
    if (operand_get(oo, er_result_rounded(self->r)->format, "output", 0, &out) != 0) return NULL;
    /* no more indices than elements can be listed: the buffer holds at most that many (a cap near
     * PY_SSIZE_T_MAX would overflow its size, and the list would run past it) */
    int64_t count = 1;
    for (int q = 0; q < out.t.ndim; q++) count *= out.t.shape[q];
    int64_t room = (int64_t)cap < count ? (int64_t)cap : count;
    int64_t *index = PyMem_Malloc((size_t)(room ? room : 1) * sizeof *index);
    if (!index) {
        operand_release(&out);
        return PyErr_NoMemory();
    }
    er_check_report rep;
    char msg[1024] = "";
    er_status st;
    const er_tensor *ta = self->ops[0].held ? &self->ops[0].t : NULL, *tb = self->ops[1].held ? &self->ops[1].t : NULL;
    ER_PY_CALL(st = er_check_report_compute(self->r, &o, &out.t, ta, tb, index, room, &rep, msg, sizeof msg));
    operand_release(&out);
    PyObject *d = st == ER_OK ? report_to_dict(&rep, index, (int64_t)cap, 0) : raise_status(st, msg);
    PyMem_Free(index);
    return d;
}

/*
 * check(output, compute, ulps, ftz, standard, covered): the check in tiles (er_check_result: bounded
 * memory for a large output) as report's dict, covered (a writable uint8 buffer of the output's
 * elements, or None) filled; None when the check would run in one pass (a small output, a view, a
 * result on earlier results, bounds kept): the caller's report or covers then do it.
 */
static PyObject *CResult_check(CResult *self, PyObject *args)
{
    PyObject *oo, *oc;
    int compute, ftz;
    double ulps;
    const char *std;
    if (!alive(self)) return NULL;
    if (!PyArg_ParseTuple(args, "OidisO", &oo, &compute, &ulps, &ftz, &std, &oc)) return NULL;
    /* the tiles read the operands' vacuity where report does: results on arrays A and B held here */
    if (!self->ops[0].held || !self->ops[1].held) Py_RETURN_NONE;
    er_tol_opts o;
    if (tol_opts(compute, ulps, ftz, std, &o) != 0) return NULL;
    const er_tensor *d = er_result_rounded(self->r);
    operand out;
    if (operand_get(oo, d->format, "output", 0, &out) != 0) return NULL;
    Py_buffer cv;
    int have_cov = oc != Py_None;
    if (have_cov) {
        int64_t count = 1;
        for (int q = 0; q < d->ndim; q++) count *= d->shape[q];
        if (out_get(oc, (Py_ssize_t)count, 1, "covered", &cv) != 0) {
            operand_release(&out);
            return NULL;
        }
    }
    int64_t *index = PyMem_Malloc(ER_PY_OUTSIDE_CAP * sizeof *index);
    if (!index) {
        operand_release(&out);
        if (have_cov) PyBuffer_Release(&cv);
        return PyErr_NoMemory();
    }
    er_check_opts co;
    er_check_opts_init(&co);
    co.covered = have_cov ? (unsigned char *)cv.buf : NULL;
    co.outside_index = index;
    co.outside_cap = ER_PY_OUTSIDE_CAP;
    er_check_report rep;
    char msg[1024] = "";
    er_status st;
    int tiled = 0;
    ER_PY_CALL(st = er_check_result(self->r, &o, &out.t, &co, &rep, NULL, &tiled, msg, sizeof msg));
    operand_release(&out);
    if (have_cov) PyBuffer_Release(&cv);
    PyObject *res = st != ER_OK ? raise_status(st, msg)
                    : tiled     ? report_to_dict(&rep, index, ER_PY_OUTSIDE_CAP, 0)
                                : (Py_INCREF(Py_None), Py_None);
    PyMem_Free(index);
    return res;
}

/*
 * The distributed check's pieces (python/exactref/distributed.py): a block's report as opaque bytes
 * (the er_check_report struct, merged by the library's er_check_report_merge / _merge_columns, so the
 * merged report is the one-pass report field for field), and the narrower-format hint gathered block
 * by block as the command's tiles gather it (src/cli/cmd_check.c): for each of the five candidates of
 * er_check_report_narrower, whether every element of the block's output, and of its rounded answer, is
 * a finite value of the candidate exactly.
 */

/* The candidates of er_check_report_narrower for an output format and the operands' formats (-1: none
 * or not a candidate). */
static void narrow_candidates(int out_format, int a_format, int b_format, int cand[5])
{
    er_format_info fi;
    const int c[5] = {a_format, b_format, ER_FMT_BF16, ER_FMT_F16, ER_FMT_F32};
    int ok_out = er_format_get_info(out_format, &fi) == ER_OK && fi.kind == ER_KIND_FLOAT;
    for (int k = 0; k < 5; k++) {
        er_format_info ci;
        cand[k] = ok_out && c[k] >= 0 && c[k] != out_format && er_format_get_info(c[k], &ci) == ER_OK &&
                          ci.kind == ER_KIND_FLOAT && ci.width < fi.width
                      ? c[k]
                      : -1;
    }
}

/* Whether every element of the 2-D or 3-D tensor t is a finite value of format f exactly. */
static int tensor_in(const er_tensor *t, int f)
{
    er_format_info fi;
    if (er_format_get_info(t->format, &fi) != ER_OK) return 0;
    int64_t B = t->ndim == 3 ? t->shape[0] : 1, M = t->shape[t->ndim - 2], N = t->shape[t->ndim - 1];
    int64_t sb = t->ndim == 3 ? t->strides[0] : 0, si = t->strides[t->ndim - 2], sj = t->strides[t->ndim - 1];
    for (int64_t b = 0; b < B; b++)
        for (int64_t i = 0; i < M; i++)
            for (int64_t j = 0; j < N; j++) {
                const unsigned char *p =
                    (const unsigned char *)t->data + (size_t)(b * sb + i * si + j * sj) * (size_t)fi.storage_bytes;
                uint64_t x = 0, y;
                unsigned flags = 0;
                er_val v;
                for (int k = fi.storage_bytes - 1; k >= 0; k--) x = x << 8 | p[k];
                if (er_decode_bits(t->format, x, &v) != ER_OK || v.cls == ER_CLASS_INF || v.cls == ER_CLASS_NAN)
                    return 0;
                if (er_convert_bits(t->format, f, x, ER_RND_NEAREST_EVEN, 0u, &y, &flags) != ER_OK) return 0;
                if (flags & (ER_FLAG_INEXACT | ER_FLAG_OVERFLOW | ER_FLAG_INVALID | ER_FLAG_UNDERFLOW)) return 0;
            }
    return 1;
}

/*
 * report_part(output, compute, ulps, ftz, standard): the report of output against this (block's)
 * result, for merging: (report bytes, covered bytes or None (None when no element is outside: all
 * covered), candidates, out_in, r_in), the last three 5-tuples of the narrower-format hint (r_in is
 * only computed where out_in holds, and is 1 elsewhere, as it cannot matter there).
 */
static PyObject *CResult_report_part(CResult *self, PyObject *args)
{
    PyObject *oo;
    int compute, ftz;
    double ulps;
    const char *std;
    if (!alive(self)) return NULL;
    if (!PyArg_ParseTuple(args, "Oidis", &oo, &compute, &ulps, &ftz, &std)) return NULL;
    er_tol_opts o;
    if (tol_opts(compute, ulps, ftz, std, &o) != 0) return NULL;
    const er_tensor *R = er_result_rounded(self->r);
    operand out;
    if (operand_get(oo, R->format, "output", 0, &out) != 0) return NULL;
    int64_t count = 1;
    for (int q = 0; q < R->ndim; q++) count *= R->shape[q];
    er_check_report rep;
    memset(&rep, 0, sizeof rep);
    char msg[1024] = "";
    er_status st;
    const er_tensor *ta = self->ops[0].held ? &self->ops[0].t : NULL, *tb = self->ops[1].held ? &self->ops[1].t : NULL;
    int cand[5], out_in[5], r_in[5];
    narrow_candidates(R->format, ta ? ta->format : -1, tb ? tb->format : -1, cand);
    unsigned char *covered = NULL;
    ER_PY_CALL({
        st = er_check_report_compute(self->r, &o, &out.t, ta, tb, NULL, 0, &rep, msg, sizeof msg);
        if (st == ER_OK && rep.outside > 0) {
            covered = malloc((size_t)count);
            if (!covered) st = ER_ENOMEM;
            else st = er_result_covers(self->r, &o, &out.t, covered, NULL, msg, sizeof msg);
        }
        for (int k = 0; k < 5 && st == ER_OK; k++) {
            out_in[k] = cand[k] >= 0 && tensor_in(&out.t, cand[k]);
            r_in[k] = out_in[k] ? tensor_in(R, cand[k]) : 1;
        }
    });
    operand_release(&out);
    if (st != ER_OK) {
        free(covered);
        return raise_status(st, msg);
    }
    PyObject *cov = Py_None;
    if (covered) cov = PyBytes_FromStringAndSize((const char *)covered, (Py_ssize_t)count);
    else Py_INCREF(cov);
    free(covered);
    if (!cov) return NULL;
    return Py_BuildValue("(y#N(iiiii)(iiiii)(iiiii))", (const char *)&rep, (Py_ssize_t)sizeof rep, cov, cand[0], cand[1],
                         cand[2], cand[3], cand[4], out_in[0], out_in[1], out_in[2], out_in[3], out_in[4], r_in[0],
                         r_in[1], r_in[2], r_in[3], r_in[4]);
}

/* may_be_any(kind, compute, ulps, ftz, standard): 0 (proven never), or -1 (undecided). */
static PyObject *CResult_may_be_any(CResult *self, PyObject *args)
{
    const char *kind, *std;
    int compute, ftz, answer = -1;
    double ulps;
    if (!alive(self)) return NULL;
    if (!PyArg_ParseTuple(args, "sidis", &kind, &compute, &ulps, &ftz, &std)) return NULL;
    er_tol_opts o;
    if (tol_opts(compute, ulps, ftz, std, &o) != 0) return NULL;
    char msg[1024] = "";
    er_status st;
    ER_PY_CALL(st = er_result_may_be_any(self->r, &o, kind, &answer, msg, sizeof msg));
    if (st != ER_OK) return raise_status(st, msg);
    return PyLong_FromLong(answer);
}

/* normal(compute, ftz, out): out a writable bit-pattern buffer of the output's format and shape. */
static PyObject *CResult_normal(CResult *self, PyObject *args)
{
    PyObject *oo;
    int compute, ftz;
    if (!alive(self)) return NULL;
    if (!PyArg_ParseTuple(args, "iiO", &compute, &ftz, &oo)) return NULL;
    operand out;
    if (operand_get(oo, er_result_rounded(self->r)->format, "normal's output", 1, &out) != 0) return NULL;
    char msg[1024] = "";
    er_status st;
    ER_PY_CALL(st = er_result_normal(self->r, compute, ftz, &out.t, msg, sizeof msg));
    operand_release(&out);
    if (st != ER_OK) return raise_status(st, msg);
    Py_RETURN_NONE;
}

/* exact(lo, hi, odd): writable f64 buffers of the output's shape (each may be None). */
static PyObject *CResult_exact(CResult *self, PyObject *args)
{
    PyObject *o[3];
    if (!alive(self)) return NULL;
    if (!PyArg_ParseTuple(args, "OOO", &o[0], &o[1], &o[2])) return NULL;
    operand t[3];
    memset(t, 0, sizeof t);
    for (int q = 0; q < 3; q++) {
        if (o[q] == Py_None) continue;
        if (operand_get(o[q], ER_FMT_F64, "exact", 1, &t[q]) != 0) {
            for (int p = 0; p < q; p++) operand_release(&t[p]);
            return NULL;
        }
    }
    char msg[1024] = "";
    er_status st;
    ER_PY_CALL(st = er_result_exact(self->r, t[0].held ? &t[0].t : NULL, t[1].held ? &t[1].t : NULL,
                                    t[2].held ? &t[2].t : NULL, msg, sizeof msg));
    for (int q = 0; q < 3; q++) operand_release(&t[q]);
    if (st != ER_OK) return raise_status(st, msg);
    Py_RETURN_NONE;
}

/* rounded_into(out): copy the rounded tensor (any strides) into a contiguous buffer. */
static PyObject *CResult_rounded_into(CResult *self, PyObject *arg)
{
    if (!alive(self)) return NULL;
    const er_tensor *d = er_result_rounded(self->r);
    er_format_info fi;
    er_format_get_info(d->format, &fi);
    int64_t B = d->ndim == 3 ? d->shape[0] : 1, M = d->shape[d->ndim - 2], N = d->shape[d->ndim - 1];
    Py_buffer v;
    if (out_get(arg, (Py_ssize_t)(B * M * N), fi.storage_bytes, "rounded", &v) != 0) return NULL;
    size_t sz = (size_t)fi.storage_bytes;
    int64_t sb = d->ndim == 3 ? d->strides[0] : 0, si = d->strides[d->ndim - 2], sj = d->strides[d->ndim - 1];
    unsigned char *dst = (unsigned char *)v.buf;
    const unsigned char *src = (const unsigned char *)d->data;
    for (int64_t b = 0; b < B; b++)
        for (int64_t i = 0; i < M; i++)
            for (int64_t j = 0; j < N; j++, dst += sz) memcpy(dst, src + (size_t)(b * sb + i * si + j * sj) * sz, sz);
    PyBuffer_Release(&v);
    Py_RETURN_NONE;
}

/* backward(grad, gfmt, fa, fb): (grad_A, grad_B) results. */
static PyObject *CResult_backward(CResult *self, PyObject *args)
{
    PyObject *og;
    int gfmt, fa, fb;
    if (!alive(self)) return NULL;
    if (!PyArg_ParseTuple(args, "Oiii", &og, &gfmt, &fa, &fb)) return NULL;
    CResult *ga = CResult_new_empty(), *gb = ga ? CResult_new_empty() : NULL;
    if (!ga || !gb) {
        Py_XDECREF(ga);
        return NULL;
    }
    /* each output holds its own export of the gradient's buffer, and its parent */
    if (operand_get(og, gfmt, "grad", 0, &ga->ops[2]) != 0 || operand_get(og, gfmt, "grad", 0, &gb->ops[2]) != 0)
        goto fail;
    ga->deps = PyTuple_Pack(1, (PyObject *)self);
    gb->deps = PyTuple_Pack(1, (PyObject *)self);
    if (!ga->deps || !gb->deps) goto fail;
    char msg[1024] = "";
    er_status st;
    er_result *ra = NULL, *rb = NULL;
    ER_PY_CALL(st = er_result_backward(self->r, &ga->ops[2].t, fa, fb, &ra, &rb, msg, sizeof msg));
    if (st != ER_OK) {
        Py_DECREF(ga);
        Py_DECREF(gb);
        return raise_status(st, msg);
    }
    ga->r = ra;
    gb->r = rb;
    return Py_BuildValue("(NN)", ga, gb);
fail:
    Py_DECREF(ga);
    Py_DECREF(gb);
    return NULL;
}

static PyObject *view_of(CResult *self, er_status st, er_result *v, const char *msg)
{
    if (st != ER_OK) return raise_status(st, msg);
    CResult *c = CResult_new_empty();
    if (!c) {
        er_result_free(v);
        return NULL;
    }
    c->r = v;
    c->deps = PyTuple_Pack(1, (PyObject *)self);
    if (!c->deps) {
        Py_DECREF(c);
        return NULL;
    }
    return (PyObject *)c;
}

static PyObject *CResult_transpose(CResult *self, PyObject *args)
{
    int i, j;
    if (!alive(self)) return NULL;
    if (!PyArg_ParseTuple(args, "ii", &i, &j)) return NULL;
    char msg[512] = "";
    er_result *v = NULL;
    er_status st;
    ER_PY_CALL(st = er_result_transpose(self->r, i, j, &v, msg, sizeof msg));
    return view_of(self, st, v, msg);
}

static PyObject *CResult_reshape(CResult *self, PyObject *arg)
{
    if (!alive(self)) return NULL;
    PyObject *seq = PySequence_Fast(arg, "reshape: the shape must be a sequence of integers");
    if (!seq) return NULL;
    Py_ssize_t nd = PySequence_Fast_GET_SIZE(seq);
    int64_t shape[3] = {0, 0, 0};
    if (nd != 2 && nd != 3) {
        Py_DECREF(seq);
        PyErr_Format(PyExc_ValueError, "reshape: 2 or 3 dimensions, not %zd", nd);
        return NULL;
    }
    for (Py_ssize_t q = 0; q < nd; q++) {
        long long x = PyLong_AsLongLong(PySequence_Fast_GET_ITEM(seq, q));
        if (x == -1 && PyErr_Occurred()) {
            Py_DECREF(seq);
            return NULL;
        }
        shape[q] = x;
    }
    Py_DECREF(seq);
    char msg[512] = "";
    er_result *v = NULL;
    er_status st;
    ER_PY_CALL(st = er_result_reshape(self->r, (int)nd, shape, &v, msg, sizeof msg));
    return view_of(self, st, v, msg);
}

static PyObject *CResult_get_shape(CResult *self, void *c)
{
    (void)c;
    if (!alive(self)) return NULL;
    const er_tensor *d = er_result_rounded(self->r);
    if (d->ndim == 3) return Py_BuildValue("(LLL)", (long long)d->shape[0], (long long)d->shape[1], (long long)d->shape[2]);
    return Py_BuildValue("(LL)", (long long)d->shape[0], (long long)d->shape[1]);
}

/* A getter of the attribute tables: one expression of self (a new reference), where `guard` holds
 * (a condition that sets Python's error where it fails; 1: none). */
#define ER_PY_GETTER(T, name, guard, expr)                                                                \
    static PyObject *T##_get_##name(T *self, void *c)                                                   \
    {                                                                                                     \
        (void)c;                                                                                          \
        if (!(guard)) return NULL;                                                                        \
        return (expr);                                                                                    \
    }

ER_PY_GETTER(CResult, format, alive(self), PyLong_FromLong(er_result_rounded(self->r)->format))
ER_PY_GETTER(CResult, op, alive(self), PyUnicode_FromString(er_result_op(self->r)))
ER_PY_GETTER(CResult, guarantee, alive(self), PyUnicode_FromString(er_result_guarantee(self->r)))
ER_PY_GETTER(CResult, output_name, alive(self), PyUnicode_FromString(er_result_output_name(self->r)))
ER_PY_GETTER(CResult, default_compute, alive(self), PyLong_FromLong(er_result_default_compute(self->r)))

/* The boundaries as a list of (name, kind, description, applies_to) tuples. */
static PyObject *boundaries_list(const er_boundary *b, int n)
{
    PyObject *list = PyList_New(n);
    if (!list) return NULL;
    for (int q = 0; q < n; q++) {
        PyObject *t = Py_BuildValue("(ssss)", b[q].name, b[q].kind, b[q].description, b[q].applies_to);
        if (!t) {
            Py_DECREF(list);
            return NULL;
        }
        PyList_SET_ITEM(list, q, t);
    }
    return list;
}

static PyObject *CResult_get_boundaries(CResult *self, void *c)
{
    (void)c;
    if (!alive(self)) return NULL;
    const er_boundary *b = NULL;
    int n = er_result_boundaries(self->r, &b);
    return boundaries_list(b, n);
}

static PyObject *CResult_get_stats(CResult *self, void *c)
{
    (void)c;
    if (!alive(self)) return NULL;
    const er_mma_stats *s = er_result_stats(self->r);
    static const char *const be[4] = {"auto", "cpu", "opencl", "cuda"};
    return Py_BuildValue("{s:L,s:L,s:L,s:L,s:L,s:i,s:s,s:s}", "elements", (long long)s->elements, "fast_decided",
                         (long long)s->fast_decided, "exact_f64", (long long)s->exact_f64, "exact_path",
                         (long long)s->exact_path, "wrapped", (long long)s->wrapped, "threads", s->threads, "backend",
                         (s->backend >= 0 && s->backend < 4) ? be[s->backend] : "?", "note", s->note);
}

static PyMethodDef CResult_methods[] = {
    {"bounds", (PyCFunction)CResult_bounds, METH_VARARGS, "Fill the bounds arrays for the options."},
    {"covers", (PyCFunction)CResult_covers, METH_VARARGS, "Judge an output; returns the count outside."},
    {"report", (PyCFunction)CResult_report, METH_VARARGS, "The check's report (the command's scoring)."},
    {"report_part", (PyCFunction)CResult_report_part, METH_VARARGS, "A block's report for merging (bytes)."},
    {"check", (PyCFunction)CResult_check, METH_VARARGS, "The check in tiles (bounded memory), or None: one pass."},
    {"may_be_any", (PyCFunction)CResult_may_be_any, METH_VARARGS, "Whole-tensor may_be: 0 never, -1 undecided."},
    {"normal", (PyCFunction)CResult_normal, METH_VARARGS, "normal() into a buffer."},
    {"exact", (PyCFunction)CResult_exact, METH_VARARGS, "The binary64 enclosures into buffers."},
    {"rounded_into", (PyCFunction)CResult_rounded_into, METH_O, "Copy rounded into a contiguous buffer."},
    {"backward", (PyCFunction)CResult_backward, METH_VARARGS, "matmul's backward: (grad_A, grad_B)."},
    {"transpose", (PyCFunction)CResult_transpose, METH_VARARGS, "A view with two dimensions swapped."},
    {"reshape", (PyCFunction)CResult_reshape, METH_O, "A view in a new row-major shape."},
    {NULL, NULL, 0, NULL}};

static PyGetSetDef CResult_getset[] = {
    {"shape", (getter)CResult_get_shape, NULL, NULL, NULL},
    {"format", (getter)CResult_get_format, NULL, NULL, NULL},
    {"op", (getter)CResult_get_op, NULL, NULL, NULL},
    {"guarantee", (getter)CResult_get_guarantee, NULL, NULL, NULL},
    {"output_name", (getter)CResult_get_output_name, NULL, NULL, NULL},
    {"default_compute", (getter)CResult_get_default_compute, NULL, NULL, NULL},
    {"boundaries", (getter)CResult_get_boundaries, NULL, NULL, NULL},
    {"stats", (getter)CResult_get_stats, NULL, NULL, NULL},
    {NULL, NULL, NULL, NULL, NULL}};

static PyTypeObject CResult_Type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "exactref._core.CResult",
    .tp_basicsize = sizeof(CResult),
    .tp_dealloc = (destructor)CResult_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "One result of the C library (internal: use exactref.Result).",
    .tp_methods = CResult_methods,
    .tp_getset = CResult_getset,
};

/* ---------------------------------------------------------------------------------------------- */
/*
 * DLPack export of a host buffer under a dtype code numpy cannot export (bfloat16, the fp8 formats),
 * so that torch.from_dlpack(r.rounded) reads the answer in place.  The structures are DLPack's ABI
 * (version 1): a DLTensor inside a managed tensor, legacy ("dltensor") or versioned
 * ("dltensor_versioned", which can say read-only).  The capsule holds a buffer export of the array:
 * the memory lives until the consumer calls the deleter (or the capsule dies unconsumed).
 */
typedef struct { uint32_t major, minor; } er_dl_version;
typedef struct { int32_t device_type, device_id; } er_dl_device;
typedef struct { uint8_t code, bits; uint16_t lanes; } er_dl_dtype;
typedef struct {
    void *data;
    er_dl_device device;
    int32_t ndim;
    er_dl_dtype dtype;
    int64_t *shape, *strides;
    uint64_t byte_offset;
} er_dl_tensor;
typedef struct er_dl_managed {
    er_dl_tensor t;
    void *ctx;
    void (*deleter)(struct er_dl_managed *);
} er_dl_managed;
typedef struct er_dl_managed_v {
    er_dl_version version;
    void *ctx;
    void (*deleter)(struct er_dl_managed_v *);
    uint64_t flags;
    er_dl_tensor t;
} er_dl_managed_v;

#define ER_DL_READ_ONLY 1u
#define ER_DL_MAX_DIMS 32

typedef struct {
    Py_buffer view;
    int64_t shape[ER_DL_MAX_DIMS], strides[ER_DL_MAX_DIMS];
    er_dl_managed m;
    er_dl_managed_v v;
} er_dl_ctx;

static void er_dl_ctx_free(er_dl_ctx *ctx)
{
    /* a consumer may call the deleter from any thread: take the GIL to release the buffer */
    if (Py_IsInitialized()) {
        PyGILState_STATE g = PyGILState_Ensure();
        /* a capsule can die while an exception is being raised: releasing the buffer may run the
         * exporter's deallocation, which must neither see nor clear that exception */
        PyObject *et, *ev, *tb;
        PyErr_Fetch(&et, &ev, &tb);
        PyBuffer_Release(&ctx->view);
        PyErr_Restore(et, ev, tb);
        PyGILState_Release(g);
    }
    free(ctx);
}

static void er_dl_delete(er_dl_managed *m) { er_dl_ctx_free((er_dl_ctx *)m->ctx); }
static void er_dl_delete_v(er_dl_managed_v *m) { er_dl_ctx_free((er_dl_ctx *)m->ctx); }

static void er_dl_capsule_free(PyObject *cap)
{
    /* not consumed (the name unchanged): the capsule owns the tensor */
    if (PyCapsule_IsValid(cap, "dltensor_versioned")) {
        er_dl_managed_v *m = (er_dl_managed_v *)PyCapsule_GetPointer(cap, "dltensor_versioned");
        if (m && m->deleter) m->deleter(m);
    } else if (PyCapsule_IsValid(cap, "dltensor")) {
        er_dl_managed *m = (er_dl_managed *)PyCapsule_GetPointer(cap, "dltensor");
        if (m && m->deleter) m->deleter(m);
    }
}

/* dlpack(buffer, code, bits, versioned): a DLPack capsule over buffer (host memory, any strides that
 * are multiples of the item size) with dtype (code, bits, 1 lane). */
static PyObject *py_dlpack(PyObject *mod, PyObject *args)
{
    PyObject *obj;
    int code, bits, versioned;
    (void)mod;
    if (!PyArg_ParseTuple(args, "Oiip", &obj, &code, &bits, &versioned)) return NULL;
    if (code < 0 || code > 255 || bits <= 0 || bits > 255) {
        PyErr_Format(PyExc_ValueError, "dlpack: bad dtype code %d / bits %d", code, bits);
        return NULL;
    }
    er_dl_ctx *ctx = (er_dl_ctx *)calloc(1, sizeof *ctx);
    if (!ctx) return PyErr_NoMemory();
    if (PyObject_GetBuffer(obj, &ctx->view, PyBUF_RECORDS_RO) != 0) {
        free(ctx);
        return NULL;
    }
    Py_buffer *v = &ctx->view;
    const char *fail = NULL;
    if (v->ndim > ER_DL_MAX_DIMS) fail = "too many dimensions";
    else if (v->itemsize * 8 != bits) fail = "the item size is not the dtype's";
    else if (!versioned && v->readonly)
        fail = "a read-only array cannot be exported through legacy DLPack (it cannot say read-only): "
               "ask for DLPack 1.0 or later (torch.from_dlpack does)";
    for (int d = 0; !fail && d < v->ndim; d++) {
        Py_ssize_t s = v->strides ? v->strides[d] : 0;
        if (!v->strides) {
            s = v->itemsize;
            for (int q = d + 1; q < v->ndim; q++) s *= v->shape[q];
        }
        if (s % v->itemsize) fail = "a stride is not a multiple of the item size";
        ctx->shape[d] = v->shape[d];
        ctx->strides[d] = s / v->itemsize;
    }
    if (fail) {
        PyBuffer_Release(v);
        free(ctx);
        PyErr_Format(PyExc_BufferError, "dlpack: %s", fail);
        return NULL;
    }
    er_dl_tensor t;
    t.data = v->buf;
    t.device.device_type = 1; /* kDLCPU */
    t.device.device_id = 0;
    t.ndim = v->ndim;
    t.dtype.code = (uint8_t)code;
    t.dtype.bits = (uint8_t)bits;
    t.dtype.lanes = 1;
    t.shape = ctx->shape;
    t.strides = ctx->strides;
    t.byte_offset = 0;
    PyObject *cap;
    if (versioned) {
        ctx->v.version.major = 1;
        ctx->v.version.minor = 1;
        ctx->v.ctx = ctx;
        ctx->v.deleter = er_dl_delete_v;
        ctx->v.flags = v->readonly ? ER_DL_READ_ONLY : 0;
        ctx->v.t = t;
        cap = PyCapsule_New(&ctx->v, "dltensor_versioned", er_dl_capsule_free);
    } else {
        ctx->m.t = t;
        ctx->m.ctx = ctx;
        ctx->m.deleter = er_dl_delete;
        cap = PyCapsule_New(&ctx->m, "dltensor", er_dl_capsule_free);
    }
    if (!cap) {
        PyBuffer_Release(v);
        free(ctx);
    }
    return cap;
}

/* ---- the reports of blocks merged (python/exactref/distributed.py) ---- */

/* A report held in a bytes-like object (writable for the merges' targets). */
static int report_buf(PyObject *obj, int writable, const char *what, Py_buffer *v)
{
    if (PyObject_GetBuffer(obj, v, writable ? (PyBUF_WRITABLE | PyBUF_C_CONTIGUOUS) : PyBUF_C_CONTIGUOUS) != 0)
        return -1;
    if (v->len != (Py_ssize_t)sizeof(er_check_report)) {
        PyErr_Format(PyExc_ValueError, "%s: not a check report (%zd bytes, a report has %zd)", what, v->len,
                     (Py_ssize_t)sizeof(er_check_report));
        PyBuffer_Release(v);
        return -1;
    }
    return 0;
}

/* An optional contiguous buffer of at least n bytes (None: NULL). */
static int opt_buf(PyObject *obj, Py_ssize_t n, int writable, const char *what, Py_buffer *v, void **data)
{
    *data = NULL;
    if (obj == Py_None) return 0;
    if (PyObject_GetBuffer(obj, v, writable ? (PyBUF_WRITABLE | PyBUF_C_CONTIGUOUS) : PyBUF_C_CONTIGUOUS) != 0) return -1;
    if (v->len < n) {
        PyErr_Format(PyExc_ValueError, "%s: %zd bytes given, %zd needed", what, v->len, n);
        PyBuffer_Release(v);
        return -1;
    }
    *data = v->buf;
    return 1;
}

/* report_merge_init(shape, format): an empty report (a bytearray) of an output of this shape. */
static PyObject *py_report_merge_init(PyObject *mod, PyObject *args)
{
    PyObject *oshape;
    int fmt;
    er_format_info fi;
    (void)mod;
    if (!PyArg_ParseTuple(args, "Oi", &oshape, &fmt)) return NULL;
    if (er_format_get_info(fmt, &fi) != ER_OK) return PyErr_Format(PyExc_ValueError, "unknown format id %d", fmt);
    PyObject *seq = PySequence_Fast(oshape, "report_merge_init: the shape must be a sequence");
    if (!seq) return NULL;
    Py_ssize_t nd = PySequence_Fast_GET_SIZE(seq);
    int64_t shape[3] = {0, 0, 0};
    if (nd != 2 && nd != 3) {
        Py_DECREF(seq);
        return PyErr_Format(PyExc_ValueError, "report_merge_init: 2 or 3 dimensions, not %zd", nd);
    }
    for (Py_ssize_t q = 0; q < nd; q++) {
        long long x = PyLong_AsLongLong(PySequence_Fast_GET_ITEM(seq, q));
        if ((x == -1 && PyErr_Occurred()) || x < 0) {
            Py_DECREF(seq);
            if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "report_merge_init: a negative dimension");
            return NULL;
        }
        shape[q] = x;
    }
    Py_DECREF(seq);
    er_check_report rep;
    er_check_report_merge_init(&rep, (int)nd, shape, fmt);
    return PyByteArray_FromStringAndSize((const char *)&rep, (Py_ssize_t)sizeof rep);
}

/* report_merge(into, part, part_covered, into_index, cap): er_check_report_merge, into (a bytearray)
 * updated in place; part_covered: the part's covered bytes or None; into_index: a writable int64 buffer
 * of cap entries or None.  Returns None. */
static PyObject *py_report_merge(PyObject *mod, PyObject *args)
{
    PyObject *ointo, *opart, *ocov, *oidx;
    Py_ssize_t cap;
    (void)mod;
    if (!PyArg_ParseTuple(args, "OOOOn", &ointo, &opart, &ocov, &oidx, &cap)) return NULL;
    Py_buffer vi, vp, vc, vx;
    void *cov = NULL, *idx = NULL;
    /* cap entries of 8 bytes: a cap whose bytes overflow would let a short buffer pass as cap entries */
    if (cap < 0 || cap > PY_SSIZE_T_MAX / (Py_ssize_t)sizeof(int64_t))
        return PyErr_Format(PyExc_ValueError, "report_merge: the cap %zd is negative or too large", cap);
    if (report_buf(ointo, 1, "report_merge: into", &vi) != 0) return NULL;
    if (report_buf(opart, 0, "report_merge: part", &vp) != 0) {
        PyBuffer_Release(&vi);
        return NULL;
    }
    const er_check_report *part = (const er_check_report *)vp.buf;
    int hc = opt_buf(ocov, (Py_ssize_t)part->elements, 0, "report_merge: part_covered", &vc, &cov);
    int hx = hc < 0 ? -1 : opt_buf(oidx, cap * (Py_ssize_t)sizeof(int64_t), 1, "report_merge: into_index", &vx, &idx);
    char msg[512] = "";
    er_status st = ER_OK;
    if (hc >= 0 && hx >= 0)
        st = er_check_report_merge((er_check_report *)vi.buf, part, (const unsigned char *)cov, NULL, (int64_t *)idx,
                                   idx ? (int64_t)cap : 0, msg, sizeof msg);
    if (hc > 0) PyBuffer_Release(&vc);
    if (hx > 0) PyBuffer_Release(&vx);
    PyBuffer_Release(&vi);
    PyBuffer_Release(&vp);
    if (hc < 0 || hx < 0) return NULL;
    if (st != ER_OK) return raise_status(st, msg);
    Py_RETURN_NONE;
}

/* report_merge_columns(band, tile, j0, tile_covered, band_covered): er_check_report_merge_columns,
 * band (a bytearray) and band_covered (writable, the band's elements) updated in place. */
static PyObject *py_report_merge_columns(PyObject *mod, PyObject *args)
{
    PyObject *oband, *otile, *otc, *obc;
    long long j0;
    (void)mod;
    if (!PyArg_ParseTuple(args, "OOLOO", &oband, &otile, &j0, &otc, &obc)) return NULL;
    Py_buffer vb, vt, vtc, vbc;
    void *tc = NULL, *bc = NULL;
    if (report_buf(oband, 1, "report_merge_columns: band", &vb) != 0) return NULL;
    if (report_buf(otile, 0, "report_merge_columns: tile", &vt) != 0) {
        PyBuffer_Release(&vb);
        return NULL;
    }
    const er_check_report *band = (const er_check_report *)vb.buf, *tile = (const er_check_report *)vt.buf;
    int h1 = opt_buf(otc, (Py_ssize_t)tile->elements, 0, "report_merge_columns: tile_covered", &vtc, &tc);
    int h2 = h1 < 0 ? -1
                    : opt_buf(obc, (Py_ssize_t)(band->shape[0] * band->shape[1]), 1, "report_merge_columns: band_covered",
                              &vbc, &bc);
    char msg[512] = "";
    er_status st = ER_OK;
    if (h1 >= 0 && h2 >= 0)
        st = er_check_report_merge_columns((er_check_report *)vb.buf, tile, (int64_t)j0, (const unsigned char *)tc,
                                           (unsigned char *)bc, msg, sizeof msg);
    if (h1 > 0) PyBuffer_Release(&vtc);
    if (h2 > 0) PyBuffer_Release(&vbc);
    PyBuffer_Release(&vb);
    PyBuffer_Release(&vt);
    if (h1 < 0 || h2 < 0) return NULL;
    if (st != ER_OK) return raise_status(st, msg);
    Py_RETURN_NONE;
}

/* report_set_narrower(rep, format): the narrower-format hint of a merged report (a bytearray), as
 * er_check_report_narrower would set it from the whole output (-1: none). */
static PyObject *py_report_set_narrower(PyObject *mod, PyObject *args)
{
    PyObject *orep;
    int fmt;
    (void)mod;
    if (!PyArg_ParseTuple(args, "Oi", &orep, &fmt)) return NULL;
    Py_buffer v;
    if (report_buf(orep, 1, "report_set_narrower", &v) != 0) return NULL;
    ((er_check_report *)v.buf)->narrower_format = fmt;
    PyBuffer_Release(&v);
    Py_RETURN_NONE;
}

/* report_fields(rep, index, cap, full): a report's dict (CResult.report's keys; full: also log_hist,
 * map and outside_listed); index: the int64 buffer of its listed outside elements, or None. */
static PyObject *py_report_fields(PyObject *mod, PyObject *args)
{
    PyObject *orep, *oidx;
    Py_ssize_t cap;
    int full;
    (void)mod;
    if (!PyArg_ParseTuple(args, "OOnp", &orep, &oidx, &cap, &full)) return NULL;
    Py_buffer v, vx;
    void *idx = NULL;
    if (report_buf(orep, 0, "report_fields", &v) != 0) return NULL;
    er_check_report rep;
    memcpy(&rep, v.buf, sizeof rep);
    PyBuffer_Release(&v);
    if (rep.outside_listed < 0 || rep.outside_listed > rep.outside ||
        rep.outside_listed > (int64_t)(PY_SSIZE_T_MAX / (Py_ssize_t)sizeof(int64_t)))
        return PyErr_Format(PyExc_ValueError, "report_fields: not a check report (%lld outside elements listed of %lld)",
                            (long long)rep.outside_listed, (long long)rep.outside);
    int hx = opt_buf(oidx, (Py_ssize_t)rep.outside_listed * (Py_ssize_t)sizeof(int64_t), 0, "report_fields: index", &vx,
                     &idx);
    if (hx < 0) return NULL;
    PyObject *d = report_to_dict(&rep, (const int64_t *)idx, (int64_t)cap, full);
    if (hx > 0) PyBuffer_Release(&vx);
    return d;
}

/* check_operands(standard, afmt, bfmt): None where the standard takes operands of these formats, as
 * `exactref check` requires (a matrix-engine row models instructions whose operands are of given
 * formats: docs/accumulation-models.md, "Operands"); else ValueError with the reason. */
static PyObject *py_check_operands(PyObject *mod, PyObject *args)
{
    const char *standard;
    int afmt, bfmt;
    er_standard s;
    char msg[1024] = "";
    (void)mod;
    if (!PyArg_ParseTuple(args, "sii", &standard, &afmt, &bfmt)) return NULL;
    er_status st = er_standard_parse(standard, &s, msg, sizeof msg);
    if (st != ER_OK) {
        raise_status(st, msg);
        return NULL;
    }
    er_standard used = er_standard_for_inputs(&s, afmt, bfmt);
    if (er_standard_check_operands_(&used, afmt, bfmt, "A", "B", msg, sizeof msg) != ER_OK) {
        PyErr_SetString(PyExc_ValueError, msg);
        return NULL;
    }
    Py_RETURN_NONE;
}

/* standard_accumulator(standard, compute): the accumulator's format id the bounds under standard use (a
 * matrix-engine row's D, a blocked standard's acc=), else compute; what a report names as its compute,
 * as `exactref check` names it. */
static PyObject *py_standard_accumulator(PyObject *mod, PyObject *args)
{
    const char *standard;
    int compute;
    er_standard s;
    char msg[1024] = "";
    (void)mod;
    if (!PyArg_ParseTuple(args, "si", &standard, &compute)) return NULL;
    er_status st = er_standard_parse(standard, &s, msg, sizeof msg);
    if (st != ER_OK) return raise_status(st, msg);
    return PyLong_FromLong(er_standard_accumulator_(&s, compute));
}

/*
 * scaled_create(a, afmt, b, bfmt, a_scale, b_scale, sfmt, block_k, block_n, alpha, beta, c, cfmt, bias, biasfmt,
 *               d, dfmt, rounding, opts, threads)
 * A scaled product through er_scaled_result_create (include/exactref/scaled.h): f32 or bf16 scales (sfmt)
 * applied after a block's sum, alpha, beta C and a 1 x n bias, rounded once into d.  a, b, the scales, c
 * and the bias: 2-D bit-pattern buffers (the scales, c and the bias may be None); d: the writable output.
 * The library checks the shapes and values (its messages name the argument).  The bias's tensor is kept
 * in the result's `grad` slot, its buffer held by a memoryview in deps.
 */
static PyObject *py_scaled_create(PyObject *mod, PyObject *args)
{
    PyObject *oa, *ob, *osa, *osb, *oc, *obias, *od;
    int afmt, bfmt, sfmt, block_k, block_n, cfmt, biasfmt, dfmt, rounding, threads;
    unsigned int opts;
    double alpha, beta;
    (void)mod;
    if (!PyArg_ParseTuple(args, "OiOiOOiiiddOiOiOiiIi", &oa, &afmt, &ob, &bfmt, &osa, &osb, &sfmt, &block_k, &block_n,
                          &alpha, &beta, &oc, &cfmt, &obias, &biasfmt, &od, &dfmt, &rounding, &opts, &threads))
        return NULL;
    PyObject *objs[6] = {oa, ob, oc, osa, osb, od};
    const int fmts[6] = {afmt, bfmt, cfmt, sfmt, sfmt, dfmt};
    CResult *self = result_with_operands(objs, fmts, 0);
    if (!self) return NULL;
    if (obias != Py_None) {
        /* the bias: a memoryview holds its buffer for the result's life; its tensor lives in self->grad */
        operand tmp;
        PyObject *mv = PyMemoryView_FromObject(obias);
        if (!mv) {
            Py_DECREF(self);
            return NULL;
        }
        if (operand_get(mv, biasfmt, "bias", 0, &tmp) != 0) {
            Py_DECREF(mv);
            Py_DECREF(self);
            return NULL;
        }
        self->grad = tmp.t;
        operand_release(&tmp); /* the memoryview keeps the exporter's buffer */
        self->deps = PyTuple_Pack(1, mv);
        Py_DECREF(mv);
        if (!self->deps) {
            Py_DECREF(self);
            return NULL;
        }
    }
    er_scaled_args a;
    er_scaled_args_init(&a);
    a.a = &self->ops[0].t;
    a.b = &self->ops[1].t;
    a.a_scale = self->ops[3].held ? &self->ops[3].t : NULL;
    a.b_scale = self->ops[4].held ? &self->ops[4].t : NULL;
    a.block_k = block_k;
    a.block_n = block_n;
    a.alpha = alpha;
    a.beta = beta;
    a.c = self->ops[2].held ? &self->ops[2].t : NULL;
    a.bias = obias != Py_None ? &self->grad : NULL;
    a.d = &self->ops[5].t;
    a.rounding = rounding;
    a.opts = opts;
    a.threads = threads;
    char msg[1024] = "";
    er_status st;
    er_result *r = NULL;
    ER_PY_CALL(st = er_scaled_result_create(&a, &r, msg, sizeof msg));
    if (st != ER_OK) {
        Py_DECREF(self);
        return raise_status(st, msg);
    }
    self->r = r;
    return (PyObject *)self;
}

/* ---- The Tile IR interpreter (python/exactref/tile.py), point and bounds mode: one block of its own. ---- */

/* The module from text, or NULL with ValueError (the parse error). */
static er_interp_module *tile_parse(const char *text, Py_ssize_t len, const char *filename)
{
    er_interp_module *m = NULL;
    char msg[1024];
    if (er_interp_parse(text, (size_t)len, filename, &m, msg, sizeof msg) != ER_OK) {
        PyErr_SetString(PyExc_ValueError, msg);
        return NULL;
    }
    return m;
}

/* interp_params(text, filename): {kernel: [(kind, format, name), ...]} in source order. */
static PyObject *py_interp_params(PyObject *mod, PyObject *args)
{
    const char *text, *filename;
    Py_ssize_t len;
    (void)mod;
    if (!PyArg_ParseTuple(args, "s#s", &text, &len, &filename)) return NULL;
    er_interp_module *m = tile_parse(text, len, filename);
    if (!m) return NULL;
    PyObject *d = PyDict_New();
    for (int k = 0; d && k < er_interp_kernel_count(m); k++) {
        const char *name = er_interp_kernel_name(m, k);
        int np = er_interp_param_count(m, name);
        PyObject *l = PyList_New(np);
        for (int i = 0; l && i < np; i++) {
            er_interp_param p;
            er_interp_param_get(m, name, i, &p);
            PyObject *t = Py_BuildValue("(iis)", p.kind, p.format, p.name);
            if (!t) Py_CLEAR(l);
            else PyList_SET_ITEM(l, i, t);
        }
        if (!l || PyDict_SetItemString(d, name, l)) Py_CLEAR(d);
        Py_XDECREF(l);
    }
    er_interp_free(m);
    return d;
}

/*
 * interp_run(text, filename, kernel, (gx, gy, gz), [(format, writable buffer), ...], [scalar patterns],
 *            bounds, standard or None, [6 ulps], [device buffer or None, ...], [shape tuples]):
 * (kind name, message, prints, per buffer: None or (lo bytes, hi bytes, flags bytes, report dict or None)).
 * The buffers receive the interpreter's run; in bounds mode each float buffer's enclosures come back, and
 * a device buffer given for it is judged (er_interp_bounds_report) in the shape given.
 */
static PyObject *py_interp_run(PyObject *mod, PyObject *args)
{
    const char *text, *filename, *kernel, *standard = NULL;
    Py_ssize_t len;
    int gx, gy, gz, bounds;
    PyObject *obufs, *oscal, *oulps, *odev, *oshapes, *ostd;
    (void)mod;
    if (!PyArg_ParseTuple(args, "s#ss(iii)OOpOOOO", &text, &len, &filename, &kernel, &gx, &gy, &gz, &obufs, &oscal, &bounds,
                          &ostd, &oulps, &odev, &oshapes))
        return NULL;
    if (ostd != Py_None && !(standard = PyUnicode_AsUTF8(ostd))) return NULL;
    if (!PyList_Check(obufs) || !PyList_Check(oscal) || !PyList_Check(oulps) || !PyList_Check(odev) || !PyList_Check(oshapes) ||
        PyList_GET_SIZE(oulps) != ER_INTERP_AX_COUNT || PyList_GET_SIZE(odev) != PyList_GET_SIZE(obufs) ||
        PyList_GET_SIZE(oshapes) != PyList_GET_SIZE(obufs) || PyList_GET_SIZE(obufs) > 4096 || PyList_GET_SIZE(oscal) > 4096)
        return PyErr_Format(PyExc_TypeError, "interp_run: bad argument lists");
    Py_ssize_t nb = PyList_GET_SIZE(obufs), ns = PyList_GET_SIZE(oscal);
    er_interp_module *m = tile_parse(text, len, filename);
    if (!m) return NULL;
    Py_buffer *views = (Py_buffer *)calloc((size_t)nb + 1, sizeof(Py_buffer));
    er_interp_buffer *ib = (er_interp_buffer *)calloc((size_t)nb + 1, sizeof *ib);
    uint64_t *sc = (uint64_t *)calloc((size_t)ns + 1, sizeof *sc);
    char *prints = (char *)malloc(1 << 16);
    PyObject *res = NULL, *per = NULL;
    Py_ssize_t got = 0;
    er_interp_bounds_opts bo;
    er_interp_bounds *bd = NULL;
    er_interp_launch l;
    char msg[2048] = "";
    er_status st;
    if (!views || !ib || !sc || !prints) {
        PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t i = 0; i < nb; i++, got++) {
        PyObject *t = PyList_GET_ITEM(obufs, i);
        int fmt;
        PyObject *ob;
        if (!PyArg_ParseTuple(t, "iO", &fmt, &ob)) goto done;
        if (PyObject_GetBuffer(ob, &views[i], PyBUF_WRITABLE | PyBUF_C_CONTIGUOUS) != 0) goto done;
        ib[i].format = fmt;
        ib[i].data = views[i].buf;
        ib[i].nbytes = (size_t)views[i].len;
    }
    for (Py_ssize_t i = 0; i < ns; i++) {
        sc[i] = PyLong_AsUnsignedLongLongMask(PyList_GET_ITEM(oscal, i));
        if (PyErr_Occurred()) goto done;
    }
    er_interp_bounds_opts_init(&bo);
    bo.standard = standard;
    for (int a = 0; a < ER_INTERP_AX_COUNT; a++) {
        bo.ulps[a] = PyFloat_AsDouble(PyList_GET_ITEM(oulps, a));
        if (PyErr_Occurred()) goto done;
    }
    er_interp_launch_init(&l);
    l.grid[0] = gx;
    l.grid[1] = gy;
    l.grid[2] = gz;
    l.buffers = ib;
    l.nbuffers = (size_t)nb;
    l.scalars = sc;
    l.nscalars = (size_t)ns;
    l.prints = prints;
    l.prints_size = 1 << 16;
    prints[0] = 0;
    Py_BEGIN_ALLOW_THREADS
    st = bounds ? er_interp_kernel_bounds(m, kernel, &l, &bo, &bd, msg, sizeof msg) : er_interp_kernel(m, kernel, &l, msg, sizeof msg);
    Py_END_ALLOW_THREADS
    (void)st;
    per = PyList_New(nb);
    if (!per) goto done;
    for (Py_ssize_t i = 0; i < nb; i++) {
        const double *lo, *hi;
        const unsigned char *fl;
        int64_t count;
        PyObject *item, *rep = Py_None;
        Py_INCREF(Py_None);
        if (!bd || er_interp_bounds_get(bd, (size_t)i, NULL, &count, &lo, &hi, &fl) != ER_OK) {
            PyList_SET_ITEM(per, i, rep);
            continue;
        }
        PyObject *dv = PyList_GET_ITEM(odev, i);
        if (dv != Py_None) {
            Py_buffer v;
            PyObject *shp = PyList_GET_ITEM(oshapes, i);
            int64_t shape[8];
            int nd = (int)PySequence_Size(shp);
            er_check_report r;
            int64_t idx[1000];
            char rmsg[512] = "";
            if (nd < 1 || nd > 8) {
                PyErr_SetString(PyExc_ValueError, "interp_run: a device array needs 1 to 8 dimensions");
                Py_DECREF(rep);
                goto done;
            }
            for (int d = 0; d < nd; d++) {
                PyObject *e = PySequence_GetItem(shp, d);
                shape[d] = e ? PyLong_AsLongLong(e) : 0;
                Py_XDECREF(e);
            }
            if (PyErr_Occurred() || PyObject_GetBuffer(dv, &v, PyBUF_C_CONTIGUOUS) != 0) {
                Py_DECREF(rep);
                goto done;
            }
            er_status rs = er_interp_bounds_report(bd, (size_t)i, v.buf, (size_t)v.len, nd, shape, idx, 1000, &r, rmsg, sizeof rmsg);
            PyBuffer_Release(&v);
            if (rs != ER_OK) {
                PyErr_SetString(PyExc_ValueError, rmsg);
                Py_DECREF(rep);
                goto done;
            }
            Py_DECREF(rep);
            if (!(rep = report_to_dict(&r, idx, 1000, 0))) goto done;
        }
        if (lo)
            item = Py_BuildValue("(y#y#y#O)", (const char *)lo, (Py_ssize_t)(count * 8), (const char *)hi, (Py_ssize_t)(count * 8),
                                 (const char *)fl, (Py_ssize_t)count, rep);
        else
            item = Py_BuildValue("(OOOO)", Py_None, Py_None, Py_None, rep);
        Py_DECREF(rep);
        if (!item) goto done;
        PyList_SET_ITEM(per, i, item);
    }
    res = Py_BuildValue("(ssyO)", er_interp_kind_name(l.kind), msg, prints, per);
done:
    Py_XDECREF(per);
    er_interp_bounds_free(bd);
    for (Py_ssize_t i = 0; i < got; i++) PyBuffer_Release(&views[i]);
    free(views);
    free(ib);
    free(sc);
    free(prints);
    er_interp_free(m);
    return res;
}

/* ---------------------------------------------------------------------------------------------- */
/*
 * The operations beyond matmul (include/exactref/ops.h): op_call(name, inputs, options) runs one and
 * returns a COpRes; COpRes.output(i) is a COpOut, one output seen with CResult's methods (shape: the
 * output's 2-D or 3-D view, nd_shape: its own), so that exactref.Result serves it unchanged
 * (python/exactref/_opsx.py).  Inputs are buffers of bit patterns of up to 8 dimensions (not copied:
 * held while the result lives) or None for an absent optional input.
 */
typedef struct {
    PyObject_HEAD
    er_opres *r;
    Py_buffer in[8];
    int held[8];
    PyObject *deps; /* the earlier results it reads (results as inputs), kept alive */
} COpRes;

typedef struct {
    PyObject_HEAD
    COpRes *res;
    int i;
} COpOut;

static PyTypeObject COpRes_Type, COpOut_Type;

static void COpRes_dealloc(COpRes *self)
{
    if (self->r) er_opres_free(self->r);
    self->r = NULL;
    for (int q = 0; q < 8; q++)
        if (self->held[q]) PyBuffer_Release(&self->in[q]);
    Py_XDECREF(self->deps);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static void COpOut_dealloc(COpOut *self)
{
    Py_XDECREF(self->res);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

/* An N-D tensor over a buffer (any non-negative strides, multiples of the item size). */
static int nd_get(PyObject *obj, int fmt, const char *what, Py_buffer *v, er_optensor *t)
{
    er_format_info fi;
    if (er_format_get_info(fmt, &fi) != ER_OK) {
        PyErr_Format(PyExc_ValueError, "%s: unknown format id %d", what, fmt);
        return -1;
    }
    if (PyObject_GetBuffer(obj, v, PyBUF_RECORDS_RO) != 0) return -1;
    if (v->ndim > ER_OP_MAXDIM || v->itemsize != fi.storage_bytes) {
        PyErr_Format(PyExc_ValueError, "%s: %d dimensions of %zd-byte items (at most %d dimensions; %s is stored "
                     "in %d bytes)", what, v->ndim, v->itemsize, ER_OP_MAXDIM, fi.name, fi.storage_bytes);
        PyBuffer_Release(v);
        return -1;
    }
    memset(t, 0, sizeof *t);
    t->format = fmt;
    t->ndim = v->ndim;
    t->data = v->buf;
    Py_ssize_t s = v->itemsize;
    for (int d = v->ndim - 1; d >= 0; d--) {
        Py_ssize_t sd = v->strides ? v->strides[d] : s;
        if (sd < 0 || sd % v->itemsize) {
            PyErr_Format(PyExc_ValueError, "%s: stride %zd bytes in dimension %d is not a non-negative multiple of %zd",
                         what, sd, d, v->itemsize);
            PyBuffer_Release(v);
            return -1;
        }
        t->shape[d] = v->shape[d];
        t->strides[d] = sd / v->itemsize;
        s *= v->shape[d];
    }
    return 0;
}

/*
 * op_call(name, inputs, options[, from_compute, from_ulps, from_ftz, from_standard]): inputs a sequence
 * of None, (buffer, format id), (COpRes, output index) or a CResult (results as inputs, read within
 * their bounds under the from_ options).
 */
static PyObject *py_op_call(PyObject *mod, PyObject *args)
{
    (void)mod;
    const char *name, *options, *fstd = "normal";
    PyObject *seq;
    int fcomp = -1, fftz = 0;
    double fulps = -1;
    if (!PyArg_ParseTuple(args, "sOs|idis", &name, &seq, &options, &fcomp, &fulps, &fftz, &fstd)) return NULL;
    er_tol_opts fo;
    if (tol_opts(fcomp, fulps, fftz, fstd, &fo) != 0) return NULL;
    PyObject *fast = PySequence_Fast(seq, "op_call: inputs must be a sequence");
    if (!fast) return NULL;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(fast);
    if (n > 8) {
        Py_DECREF(fast);
        PyErr_SetString(PyExc_ValueError, "op_call: at most 8 inputs");
        return NULL;
    }
    COpRes *self = PyObject_New(COpRes, &COpRes_Type);
    if (!self) {
        Py_DECREF(fast);
        return NULL;
    }
    self->r = NULL;
    memset(self->held, 0, sizeof self->held);
    self->deps = PyTuple_New(n);
    if (!self->deps) {
        Py_DECREF(fast);
        Py_DECREF(self);
        return NULL;
    }
    er_optensor t[8];
    er_opinput ins[8];
    memset(ins, 0, sizeof ins);
    for (Py_ssize_t q = 0; q < n; q++) {
        PyObject *it = PySequence_Fast_GET_ITEM(fast, q);
        Py_INCREF(it);
        PyTuple_SET_ITEM(self->deps, q, it);
        if (it == Py_None) continue;
        if (PyObject_TypeCheck(it, &CResult_Type)) { /* matmul's result */
            if (!((CResult *)it)->r) {
                Py_DECREF(fast);
                Py_DECREF(self);
                PyErr_SetString(PyExc_ValueError, "op_call: an input result is not initialised");
                return NULL;
            }
            ins[q].result = ((CResult *)it)->r;
            continue;
        }
        if (PyTuple_Check(it) && PyTuple_GET_SIZE(it) == 2 && PyObject_TypeCheck(PyTuple_GET_ITEM(it, 0), &COpRes_Type)) {
            ins[q].opres = ((COpRes *)PyTuple_GET_ITEM(it, 0))->r;
            ins[q].output = (int)PyLong_AsLong(PyTuple_GET_ITEM(it, 1));
            if (PyErr_Occurred()) {
                Py_DECREF(fast);
                Py_DECREF(self);
                return NULL;
            }
            continue;
        }
        PyObject *buf;
        int fmt;
        char what[32];
        snprintf(what, sizeof what, "input %d", (int)q);
        if (!PyArg_ParseTuple(it, "Oi", &buf, &fmt) || nd_get(buf, fmt, what, &self->in[q], &t[q]) != 0) {
            Py_DECREF(fast);
            Py_DECREF(self);
            return NULL;
        }
        self->held[q] = 1;
        ins[q].tensor = &t[q];
    }
    Py_DECREF(fast);
    char msg[1024] = "";
    er_status st;
    er_opres *r = NULL;
    ER_PY_CALL(st = er_op_call_from(name, (int)n, ins, &fo, options, &r, msg, sizeof msg));
    if (st != ER_OK) {
        Py_DECREF(self);
        return raise_status(st, msg);
    }
    self->r = r;
    return (PyObject *)self;
}

static PyObject *COpRes_output(COpRes *self, PyObject *arg)
{
    long i = PyLong_AsLong(arg);
    if (i == -1 && PyErr_Occurred()) return NULL;
    if (i < 0 || i >= er_opres_outputs(self->r)) {
        PyErr_Format(PyExc_IndexError, "%s has %d output(s), not %ld", er_opres_op(self->r), er_opres_outputs(self->r), i);
        return NULL;
    }
    COpOut *o = PyObject_New(COpOut, &COpOut_Type);
    if (!o) return NULL;
    Py_INCREF(self);
    o->res = self;
    o->i = (int)i;
    return (PyObject *)o;
}

static PyObject *COpRes_get_names(COpRes *self, void *c)
{
    (void)c;
    int n = er_opres_outputs(self->r);
    PyObject *l = PyList_New(n);
    if (!l) return NULL;
    for (int i = 0; i < n; i++) PyList_SET_ITEM(l, i, PyUnicode_FromString(er_opres_output_name(self->r, i)));
    return l;
}

ER_PY_GETTER(COpRes, op, 1, PyUnicode_FromString(er_opres_op(self->r)))

static PyMethodDef COpRes_methods[] = {
    {"output", (PyCFunction)COpRes_output, METH_O, "Output i as a COpOut."},
    {NULL, NULL, 0, NULL}};
static PyGetSetDef COpRes_getset[] = {
    {"output_names", (getter)COpRes_get_names, NULL, NULL, NULL},
    {"op", (getter)COpRes_get_op, NULL, NULL, NULL},
    {NULL, NULL, NULL, NULL, NULL}};

/* the output's er_tensor view (2-D or 3-D) and its element count */
static const er_optensor *opout_t(COpOut *self) { return er_opres_rounded(self->res->r, self->i); }

static PyObject *shape_tuple(int ndim, const int64_t *shape)
{
    PyObject *t = PyTuple_New(ndim);
    if (!t) return NULL;
    for (int d = 0; d < ndim; d++) PyTuple_SET_ITEM(t, d, PyLong_FromLongLong((long long)shape[d]));
    return t;
}

/* The 2-D/3-D view shape of an N-D output (ops.h's rule: 1 x n for 0-D and 1-D, leading dims collapsed) */
static int view_shape(const er_optensor *t, int64_t *s)
{
    if (t->ndim <= 1) {
        s[0] = 1;
        s[1] = t->ndim == 1 ? t->shape[0] : 1;
        return 2;
    }
    if (t->ndim <= 3) {
        for (int d = 0; d < t->ndim; d++) s[d] = t->shape[d];
        return t->ndim;
    }
    s[0] = 1;
    for (int d = 0; d < t->ndim - 2; d++) s[0] *= t->shape[d];
    s[1] = t->shape[t->ndim - 2];
    s[2] = t->shape[t->ndim - 1];
    return 3;
}

static PyObject *COpOut_get_shape(COpOut *self, void *c)
{
    (void)c;
    int64_t s[3];
    int nd = view_shape(opout_t(self), s);
    return shape_tuple(nd, s);
}

static PyObject *COpOut_get_nd_shape(COpOut *self, void *c)
{
    (void)c;
    const er_optensor *t = opout_t(self);
    return shape_tuple(t->ndim, t->shape);
}

ER_PY_GETTER(COpOut, format, 1, PyLong_FromLong(opout_t(self)->format))
ER_PY_GETTER(COpOut, op, 1, PyUnicode_FromString(er_opres_op(self->res->r)))
ER_PY_GETTER(COpOut, guarantee, 1, PyUnicode_FromString(er_opres_guarantee(self->res->r)))
ER_PY_GETTER(COpOut, output_name, 1, PyUnicode_FromString(er_opres_output_name(self->res->r, self->i)))
ER_PY_GETTER(COpOut, default_compute, 1, PyLong_FromLong(er_opres_default_compute(self->res->r)))
ER_PY_GETTER(COpOut, index, 1, PyLong_FromLong(self->i))

static PyObject *COpOut_get_res(COpOut *self, void *c)
{
    (void)c;
    Py_INCREF(self->res);
    return (PyObject *)self->res;
}

static PyObject *COpOut_get_stats(COpOut *self, void *c)
{
    (void)self;
    (void)c;
    Py_RETURN_NONE;
}

static PyObject *COpOut_get_boundaries(COpOut *self, void *c)
{
    (void)c;
    const er_boundary *b;
    int n = er_opres_boundaries(self->res->r, &b);
    return boundaries_list(b, n);
}

static PyObject *COpOut_rounded_into(COpOut *self, PyObject *obj)
{
    const er_optensor *t = opout_t(self);
    er_format_info fi;
    er_format_get_info(t->format, &fi);
    int64_t n = er_optensor_count(t);
    Py_buffer v;
    if (out_get(obj, (Py_ssize_t)n, fi.storage_bytes, "rounded", &v) != 0) return NULL;
    if (n) memcpy(v.buf, t->data, (size_t)n * (size_t)fi.storage_bytes);
    PyBuffer_Release(&v);
    Py_RETURN_NONE;
}

/* exact(lo, hi, odd): the enclosures; odd receives lo where lo == hi, else the enclosure's midpoint */
static PyObject *COpOut_exact(COpOut *self, PyObject *args)
{
    PyObject *ol, *oh, *oo;
    if (!PyArg_ParseTuple(args, "OOO", &ol, &oh, &oo)) return NULL;
    int64_t n = er_optensor_count(opout_t(self));
    Py_buffer v[3];
    PyObject *objs[3] = {ol, oh, oo};
    for (int q = 0; q < 3; q++)
        if (out_get(objs[q], (Py_ssize_t)n, 8, "exact", &v[q]) != 0) {
            for (int p = 0; p < q; p++) PyBuffer_Release(&v[p]);
            return NULL;
        }
    char msg[256] = "";
    er_status st;
    double *lo = (double *)v[0].buf, *hi = (double *)v[1].buf, *odd = (double *)v[2].buf;
    ER_PY_CALL(st = er_opres_exact(self->res->r, self->i, lo, hi, msg, sizeof msg));
    if (st == ER_OK)
        for (int64_t e = 0; e < n; e++) odd[e] = lo[e] == hi[e] || !(lo[e] == lo[e]) ? lo[e] : lo[e] + (hi[e] - lo[e]) / 2;
    for (int q = 0; q < 3; q++) PyBuffer_Release(&v[q]);
    if (st != ER_OK) return raise_status(st, msg);
    Py_RETURN_NONE;
}

static PyObject *COpOut_bounds(COpOut *self, PyObject *args)
{
    int compute, ftz;
    double ulps;
    const char *std;
    PyObject *outs[7];
    static const Py_ssize_t sizes[7] = {8, 8, 8, 1, 1, 1, 1};
    if (!PyArg_ParseTuple(args, "idisOOOOOOO", &compute, &ulps, &ftz, &std, &outs[0], &outs[1], &outs[2], &outs[3],
                          &outs[4], &outs[5], &outs[6]))
        return NULL;
    er_tol_opts o;
    if (tol_opts(compute, ulps, ftz, std, &o) != 0) return NULL;
    int64_t count = er_optensor_count(opout_t(self));
    Py_buffer v[7];
    int got[7] = {0};
    for (int q = 0; q < 7; q++) {
        if (outs[q] == Py_None) continue;
        if (out_get(outs[q], (Py_ssize_t)count, sizes[q], "bounds", &v[q]) != 0) {
            for (int p = 0; p < q; p++)
                if (got[p]) PyBuffer_Release(&v[p]);
            return NULL;
        }
        got[q] = 1;
    }
    const er_bounds *b = NULL;
    char msg[1024] = "";
    er_status st;
    ER_PY_CALL({
        st = er_opres_bounds(self->res->r, self->i, &o, &b, msg, sizeof msg);
        if (st == ER_OK) {
            const void *src[7] = {b->tolerance, b->low, b->high, b->has_range, b->may_pinf, b->may_ninf, b->may_nan};
            for (int q = 0; q < 7; q++)
                if (got[q] && count) memcpy(v[q].buf, src[q], (size_t)count * (size_t)sizes[q]);
        }
    });
    for (int q = 0; q < 7; q++)
        if (got[q]) PyBuffer_Release(&v[q]);
    if (st != ER_OK) return raise_status(st, msg);
    Py_RETURN_NONE;
}

/* An output's bit patterns (C-contiguous, in any shape of the right count) as the output's N-D tensor. */
static int opout_output(COpOut *self, PyObject *obj, Py_buffer *v, er_optensor *t)
{
    const er_optensor *R = opout_t(self);
    er_format_info fi;
    er_format_get_info(R->format, &fi);
    if (PyObject_GetBuffer(obj, v, PyBUF_C_CONTIGUOUS) != 0) return -1;
    int64_t n = er_optensor_count(R);
    if (v->len != (Py_ssize_t)n * fi.storage_bytes) {
        PyErr_Format(PyExc_ValueError, "output: %zd bytes given, %lld elements of %s (%d bytes each) needed", v->len,
                     (long long)n, fi.name, fi.storage_bytes);
        PyBuffer_Release(v);
        return -1;
    }
    *t = er_optensor_make(R->format, R->ndim, R->shape, v->buf);
    return 0;
}

static PyObject *COpOut_covers(COpOut *self, PyObject *args)
{
    PyObject *oo, *oc;
    int compute, ftz;
    double ulps;
    const char *std;
    if (!PyArg_ParseTuple(args, "OidisO", &oo, &compute, &ulps, &ftz, &std, &oc)) return NULL;
    er_tol_opts o;
    if (tol_opts(compute, ulps, ftz, std, &o) != 0) return NULL;
    Py_buffer ov, cv;
    er_optensor out;
    if (opout_output(self, oo, &ov, &out) != 0) return NULL;
    if (out_get(oc, (Py_ssize_t)er_optensor_count(&out), 1, "covered", &cv) != 0) {
        PyBuffer_Release(&ov);
        return NULL;
    }
    char msg[1024] = "";
    er_status st;
    int64_t outside = 0;
    ER_PY_CALL(st = er_opres_covers(self->res->r, self->i, &o, &out, (unsigned char *)cv.buf, &outside, msg, sizeof msg));
    PyBuffer_Release(&ov);
    PyBuffer_Release(&cv);
    if (st != ER_OK) return raise_status(st, msg);
    return PyLong_FromLongLong((long long)outside);
}

static PyObject *COpOut_report(COpOut *self, PyObject *args)
{
    PyObject *oo;
    int compute, ftz;
    double ulps;
    const char *std;
    Py_ssize_t cap = ER_PY_OUTSIDE_CAP;
    if (!PyArg_ParseTuple(args, "Oidis|n", &oo, &compute, &ulps, &ftz, &std, &cap)) return NULL;
    if (cap < 0) {
        PyErr_SetString(PyExc_ValueError, "report: the cap of outside indices must not be negative");
        return NULL;
    }
    er_tol_opts o;
    if (tol_opts(compute, ulps, ftz, std, &o) != 0) return NULL;
    Py_buffer ov;
    er_optensor out;
    if (opout_output(self, oo, &ov, &out) != 0) return NULL;
    int64_t count = er_optensor_count(&out);
    int64_t room = (int64_t)cap < count ? (int64_t)cap : count;
    int64_t *index = PyMem_Malloc((size_t)(room ? room : 1) * sizeof *index);
    if (!index) {
        PyBuffer_Release(&ov);
        return PyErr_NoMemory();
    }
    er_check_report rep;
    char msg[1024] = "";
    er_status st;
    ER_PY_CALL(st = er_opres_report(self->res->r, self->i, &o, &out, index, room, &rep, msg, sizeof msg));
    PyBuffer_Release(&ov);
    PyObject *d = st == ER_OK ? report_to_dict(&rep, index, (int64_t)cap, 0) : raise_status(st, msg);
    PyMem_Free(index);
    return d;
}

static PyObject *COpOut_check(COpOut *self, PyObject *args)
{
    (void)self;
    (void)args;
    Py_RETURN_NONE; /* one pass: report and covers do it */
}

static PyObject *COpOut_may_be_any(COpOut *self, PyObject *args)
{
    (void)self;
    (void)args;
    return PyLong_FromLong(-1); /* not decided from summaries: the per-element flags are read */
}

/* normal(compute, ftz, bits): er_opres_normal into a writable contiguous buffer of the output's count */
static PyObject *COpOut_normal(COpOut *self, PyObject *args)
{
    PyObject *oo;
    int compute, ftz;
    if (!PyArg_ParseTuple(args, "iiO", &compute, &ftz, &oo)) return NULL;
    const er_optensor *t = opout_t(self);
    er_format_info fi;
    er_format_get_info(t->format, &fi);
    Py_buffer v;
    if (out_get(oo, (Py_ssize_t)er_optensor_count(t), fi.storage_bytes, "normal", &v) != 0) return NULL;
    char msg[1024] = "";
    er_status st;
    ER_PY_CALL(st = er_opres_normal(self->res->r, self->i, compute, ftz, v.buf, msg, sizeof msg));
    PyBuffer_Release(&v);
    if (st != ER_OK) return raise_status(st, msg);
    Py_RETURN_NONE;
}

/* a view (er_opres_reshape / er_opres_transpose) as a new COpRes that keeps its base alive; its output 0 */
static PyObject *opout_view(COpOut *self, er_status st, er_opres *v, const char *msg)
{
    if (st != ER_OK) return raise_status(st, msg);
    COpRes *res = PyObject_New(COpRes, &COpRes_Type);
    if (!res) {
        er_opres_free(v);
        return NULL;
    }
    res->r = v;
    memset(res->held, 0, sizeof res->held);
    res->deps = PyTuple_Pack(1, (PyObject *)self->res);
    if (!res->deps) {
        Py_DECREF(res);
        return NULL;
    }
    PyObject *zero = PyLong_FromLong(0);
    PyObject *o = zero ? COpRes_output(res, zero) : NULL;
    Py_XDECREF(zero);
    Py_DECREF(res);
    return o;
}

static PyObject *COpOut_reshape(COpOut *self, PyObject *arg)
{
    int64_t shape[ER_OP_MAXDIM];
    PyObject *fast = PySequence_Fast(arg, "reshape: the shape must be a sequence of integers");
    if (!fast) return NULL;
    Py_ssize_t nd = PySequence_Fast_GET_SIZE(fast);
    if (nd > ER_OP_MAXDIM) {
        Py_DECREF(fast);
        PyErr_Format(PyExc_ValueError, "reshape: %zd dimensions (at most %d)", nd, ER_OP_MAXDIM);
        return NULL;
    }
    for (Py_ssize_t d = 0; d < nd; d++) {
        shape[d] = (int64_t)PyLong_AsLongLong(PySequence_Fast_GET_ITEM(fast, d));
        if (PyErr_Occurred()) {
            Py_DECREF(fast);
            return NULL;
        }
    }
    Py_DECREF(fast);
    char msg[1024] = "";
    er_status st;
    er_opres *v = NULL;
    ER_PY_CALL(st = er_opres_reshape(self->res->r, self->i, (int)nd, shape, &v, msg, sizeof msg));
    return opout_view(self, st, v, msg);
}

static PyObject *COpOut_transpose(COpOut *self, PyObject *args)
{
    int d0, d1;
    if (!PyArg_ParseTuple(args, "ii", &d0, &d1)) return NULL;
    char msg[1024] = "";
    er_status st;
    er_opres *v = NULL;
    ER_PY_CALL(st = er_opres_transpose(self->res->r, self->i, d0, d1, &v, msg, sizeof msg));
    return opout_view(self, st, v, msg);
}

static PyMethodDef COpOut_methods[] = {
    {"normal", (PyCFunction)COpOut_normal, METH_VARARGS, "normal() into a buffer."},
    {"reshape", (PyCFunction)COpOut_reshape, METH_O, "A view in a new row-major shape (a COpOut)."},
    {"transpose", (PyCFunction)COpOut_transpose, METH_VARARGS, "A view with two dimensions swapped (a COpOut)."},
    {"bounds", (PyCFunction)COpOut_bounds, METH_VARARGS, "Fill the bounds arrays for the options."},
    {"covers", (PyCFunction)COpOut_covers, METH_VARARGS, "Judge an output; returns the count outside."},
    {"report", (PyCFunction)COpOut_report, METH_VARARGS, "The check's report (the command's scoring)."},
    {"check", (PyCFunction)COpOut_check, METH_VARARGS, "None: the check runs in one pass."},
    {"may_be_any", (PyCFunction)COpOut_may_be_any, METH_VARARGS, "-1: undecided from summaries."},
    {"exact", (PyCFunction)COpOut_exact, METH_VARARGS, "The binary64 enclosures into buffers."},
    {"rounded_into", (PyCFunction)COpOut_rounded_into, METH_O, "Copy rounded into a contiguous buffer."},
    {NULL, NULL, 0, NULL}};
static PyGetSetDef COpOut_getset[] = {
    {"shape", (getter)COpOut_get_shape, NULL, NULL, NULL},
    {"nd_shape", (getter)COpOut_get_nd_shape, NULL, NULL, NULL},
    {"format", (getter)COpOut_get_format, NULL, NULL, NULL},
    {"op", (getter)COpOut_get_op, NULL, NULL, NULL},
    {"guarantee", (getter)COpOut_get_guarantee, NULL, NULL, NULL},
    {"output_name", (getter)COpOut_get_output_name, NULL, NULL, NULL},
    {"default_compute", (getter)COpOut_get_default_compute, NULL, NULL, NULL},
    {"boundaries", (getter)COpOut_get_boundaries, NULL, NULL, NULL},
    {"stats", (getter)COpOut_get_stats, NULL, NULL, NULL},
    {"res", (getter)COpOut_get_res, NULL, NULL, NULL},
    {"index", (getter)COpOut_get_index, NULL, NULL, NULL},
    {NULL, NULL, NULL, NULL, NULL}};

static PyTypeObject COpRes_Type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "exactref._core.COpRes",
    .tp_basicsize = sizeof(COpRes),
    .tp_dealloc = (destructor)COpRes_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "One operation's result of the C library (internal: use exactref's operations).",
    .tp_methods = COpRes_methods,
    .tp_getset = COpRes_getset,
};

static PyTypeObject COpOut_Type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "exactref._core.COpOut",
    .tp_basicsize = sizeof(COpOut),
    .tp_dealloc = (destructor)COpOut_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "One output of an operation's result (internal).",
    .tp_methods = COpOut_methods,
    .tp_getset = COpOut_getset,
};

static PyObject *py_op_names(PyObject *mod, PyObject *noargs)
{
    (void)mod;
    (void)noargs;
    return PyUnicode_FromString(er_op_names());
}

static PyMethodDef module_methods[] = {
    {"create", py_create, METH_VARARGS, "Run an operation and keep its result."},
    {"create_checked", py_create_checked, METH_VARARGS, "create and the check of an output in one call (tiles)."},
    {"convert", py_convert, METH_VARARGS, "Convert n bit patterns between formats."},
    {"format_id", py_format_id, METH_O, "A format's id from its name (MLIR or ml_dtypes, any case)."},
    {"rounding_id", py_rounding_id, METH_O, "A rounding direction's id from its name."},
    {"check_standard", py_check_standard, METH_O, "Parse a standard; returns its name."},
    {"format_table", py_format_table, METH_NOARGS, "The format table."},
    {"standard_names", py_standard_names, METH_NOARGS, "The standards' names."},
    {"version", py_version, METH_NOARGS, "The library's version."},
    {"dlpack", py_dlpack, METH_VARARGS, "A DLPack capsule over a host buffer with a given dtype code."},
    {"report_merge_init", py_report_merge_init, METH_VARARGS, "An empty report (bytes) of an output's shape."},
    {"report_merge", py_report_merge, METH_VARARGS, "Merge the report of the next rows into a report."},
    {"report_merge_columns", py_report_merge_columns, METH_VARARGS, "Merge a tile's report into its band's."},
    {"report_set_narrower", py_report_set_narrower, METH_VARARGS, "Set a merged report's narrower-format hint."},
    {"report_fields", py_report_fields, METH_VARARGS, "A report (bytes) as a dict."},
    {"check_operands", py_check_operands, METH_VARARGS, "Whether a standard takes operands of these formats."},
    {"standard_accumulator", py_standard_accumulator, METH_VARARGS, "The accumulator a standard's bounds use."},
    {"scaled_create", py_scaled_create, METH_VARARGS, "A scaled product (f32/bf16 scales after a block's sum)."},
    {"interp_params", py_interp_params, METH_VARARGS, "A Tile IR module's entries and their parameters."},
    {"interp_run", py_interp_run, METH_VARARGS, "Run a Tile IR kernel (point or bounds mode); judge device buffers."},
    {"op_call", py_op_call, METH_VARARGS, "Run an operation beyond matmul (ops.h): a COpRes."},
    {"op_names", py_op_names, METH_NOARGS, "The operations of the table, space separated."},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT, .m_name = "exactref._core", .m_doc = "The exactref C library.", .m_size = -1,
    .m_methods = module_methods,
};

PyMODINIT_FUNC PyInit__core(void)
{
    if (PyType_Ready(&CResult_Type) < 0) return NULL;
    if (PyType_Ready(&COpRes_Type) < 0 || PyType_Ready(&COpOut_Type) < 0) return NULL;
    if (!er_py_lock) er_py_lock = PyThread_allocate_lock();
    if (!er_py_lock) return PyErr_NoMemory();
    PyObject *m = PyModule_Create(&module_def);
    if (!m) return NULL;
    Py_INCREF(&CResult_Type);
    if (PyModule_AddObject(m, "CResult", (PyObject *)&CResult_Type) < 0) {
        Py_DECREF(&CResult_Type);
        Py_DECREF(m);
        return NULL;
    }
    PyModule_AddIntConstant(m, "BACKEND_AUTO", ER_BACKEND_AUTO);
    PyModule_AddIntConstant(m, "BACKEND_CPU", ER_BACKEND_CPU);
    PyModule_AddIntConstant(m, "BACKEND_OPENCL", ER_BACKEND_OPENCL);
    PyModule_AddIntConstant(m, "BACKEND_CUDA", ER_BACKEND_CUDA);
    PyModule_AddIntConstant(m, "STRATEGY_AUTO", ER_STRATEGY_AUTO);
    PyModule_AddIntConstant(m, "STRATEGY_EXACT", ER_STRATEGY_EXACT);
    return m;
}
