/* interp_exec.c: the executor: runs an entry over a grid on host buffers, every format to the bit. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exactref/mma.h"
#include "interp_arith.h"
#include "interp_impl.h"
#include "interp_math.h"
#include "interp_bounds.h"

/* ---------------------------------------------------------------- runtime values */

typedef struct rv {
    int kind, et, pet, rank;
    int64_t shape[IT_MAXRANK];
    int64_t n;
    uint64_t *b;
    int64_t cap;
    uint8_t *u; /* undefined lanes (valid when has_u) */
    int64_t ucap;
    int has_u;
    /* tensor_view / partition_view */
    uint64_t base;
    int vrank;
    int64_t vshape[IT_MAXRANK], vstr[IT_MAXRANK];
    int64_t tile[IT_MAXRANK];
    int dim_map[IT_MAXRANK];
    int padding;
    int vflav, sparse;           /* the view's kind (IT_VIEW_*) and a gather/scatter view's sparse dimension */
    int64_t tstep[IT_MAXRANK];   /* a strided view's traversal strides */
    /* bounds mode (interp_bounds_exec.h): per lane an enclosure of every value a correct device can hold
     * (valid when has_s; a float tile without one is exactly its patterns) */
    double *slo, *shi;
    uint8_t *sfl;
    int64_t scap;
    int has_s;
} rv;

typedef struct mreg {
    uint8_t *data;
    size_t n;
    int *stored;
    double *slo, *shi; /* bounds mode: a float buffer's per-element enclosures (seb bytes per element) */
    uint8_t *sfl;
    int seb, sfmt;     /* bounds mode: the element's bytes and format of those enclosures */
    int *acn;          /* bounds mode: float atomic adds per element since its last plain store, with */
    double *acl, *ach, *aca; /* the sums of the terms' lows, highs and magnitudes */
    uint8_t *acf;      /* 1: a term may be infinite; IT_BF_NAN: a term may be NaN */
    /* bounds mode, critical sections (interp_bounds_exec.h): per element (cseb bytes) the marks CS_READ (read under a
     * lock and used other than as the old value of old + v) and CS_ADDED (summed into: under a lock or by an atomic
     * add), its count of writes (cseq), and the first op that set each mark (for the message) */
    uint8_t *csm;
    uint32_t *cseq;
    int cseb;
    const struct it_op *csrop, *csaop;
} mreg;

/* bounds mode: the lanes of a value read under a lock (a critical section): kind 1 the old values loaded there,
 * kind 2 an old value plus a term (addf, subf, fma), the term's enclosure kept */
typedef struct it_taint {
    int kind;
    int64_t cap;
    int64_t *el;   /* per lane: memory region << 40 | element, or -1 (not read from memory) */
    uint32_t *seq; /* per lane: the element's write count when it was loaded */
    double *tl, *th;
    uint8_t *tf;   /* IT_BF_NAN; 0x80: stored */
    uint32_t sec;  /* the critical section it was read in */
    const struct it_op *op; /* the load */
} it_taint;

#define IT_MAX_LOCKS 16

#define IT_ADDR_SHIFT 40

typedef struct X {
    const er_interp_module *m;
    const it_entry *e;
    er_interp_launch *l;
    rv *v;
    int nv;
    mreg *mem;
    int nmem;
    uint8_t **gdata; /* per-launch copies of the globals */
    int grid[3], bid[3];
    int64_t steps, limit;
    int64_t work, wlimit;
    int ptrunc; /* print_tko's output was cut at the buffer's size */
    char *msg;
    size_t msz;
    jmp_buf jb;
    int kind;
    int ub; /* ub_checks */
    int fault; /* EXACTREF_INTERP_FAULT=internal: the first op refuses as interp.internal (tests) */
    size_t plen;
    const it_bopts *bo; /* bounds mode (NULL: point mode) */
    double *mlo, *mhi;  /* bounds mode: the last mmaf's enclosures, until its result slot takes them */
    uint8_t *mfl;
    /* bounds mode: the locks this block holds (each acquired by a compare-and-swap: its address, the value that
     * releases it, its format, the op) and, per value slot, the lanes read under them (interp_bounds_exec.h) */
    int nlock;
    struct { uint64_t addr, rel; int et; const it_op *op; } lock[IT_MAX_LOCKS];
    it_taint *tk;
    int ntk;       /* slots tainted now */
    uint32_t csid; /* critical sections entered (a count: the current one's id) */
} X;

static void tk_clear(X *x, int id)
{
    if (x->tk && x->tk[id].kind) {
        x->tk[id].kind = 0;
        x->ntk--;
    }
}
static void bnd_taint_use(X *x, const it_op *op, int id); /* interp_bounds_exec.h */

enum { SIG_END, SIG_YIELD, SIG_CONT, SIG_BREAK, SIG_RET };

void it_msg(char *msg, size_t size, const char *file, const it_op *op, const char *fmt, ...)
{
    va_list ap;
    int n;
    if (!msg || !size) return;
    if (op) n = snprintf(msg, size, "%s:%d:%d: op '%s': ", file ? file : "<input>", op->line, op->col, op->name);
    else n = snprintf(msg, size, "%s: ", file ? file : "<input>");
    if (n < 0) n = 0;
    if ((size_t)n >= size) return;
    va_start(ap, fmt);
    vsnprintf(msg + n, size - (size_t)n, fmt, ap);
    va_end(ap);
}

static void refuse(X *x, int kind, const it_op *op, const char *fmt, ...)
{
    va_list ap;
    char buf[768];
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    it_msg(x->msg, x->msz, x->m->filename, op, "%s", buf);
    x->kind = kind;
    longjmp(x->jb, 1);
}

#define UB(x, op, ...) refuse((x), ER_INTERP_UB, (op), __VA_ARGS__)
#define INTERNAL(x, op, ...) refuse((x), ER_INTERP_INTERNAL, (op), __VA_ARGS__)

static uint64_t wmask(int w) { return w >= 64 ? ~UINT64_C(0) : (UINT64_C(1) << w) - 1u; }
static int64_t sext(uint64_t v, int w) { return w >= 64 ? (int64_t)v : (int64_t)((v ^ (UINT64_C(1) << (w - 1))) & wmask(w)) - ((int64_t)1 << (w - 1)); }

/* Prepare slot id for a tile of n elements of the given type (contents undefined; undef cleared). */
static rv *slot_tile(X *x, const it_op *op, int id, const it_type *t, int rank, const int64_t *shape)
{
    rv *r = &x->v[id];
    int64_t n = 1;
    int i;
    for (i = 0; i < rank; i++) n *= shape[i];
    if (n > r->cap) {
        uint64_t *nb = (uint64_t *)realloc(r->b, (size_t)n * sizeof *nb);
        if (!nb) INTERNAL(x, op, "out of memory for a tile of %lld elements", (long long)n);
        r->b = nb;
        r->cap = n;
    }
    r->kind = IT_TILE;
    r->et = t->et;
    r->pet = t->pet;
    r->rank = rank;
    for (i = 0; i < rank; i++) r->shape[i] = shape[i];
    r->n = n;
    r->has_u = 0;
    r->has_s = 0;
    if (x->ntk) tk_clear(x, id);
    return r;
}

static void need_u(X *x, const it_op *op, rv *r)
{
    if (r->n > r->ucap) {
        uint8_t *nu = (uint8_t *)realloc(r->u, (size_t)r->n);
        if (!nu) INTERNAL(x, op, "out of memory");
        r->u = nu;
        r->ucap = r->n;
    }
    if (!r->has_u) memset(r->u, 0, (size_t)r->n);
    r->has_u = 1;
}

static void copy_rv(X *x, const it_op *op, rv *dst, const rv *src)
{
    uint64_t *b = dst->b;
    uint8_t *u = dst->u;
    int64_t cap = dst->cap, ucap = dst->ucap;
    double *slo = dst->slo, *shi = dst->shi; /* bounds mode's shadows */
    uint8_t *sfl = dst->sfl;
    int64_t scap = dst->scap;
    if (dst == src) return;
    if (x->ntk) { /* bounds mode: a value read under a lock leaves its op (carried by a loop or an if) */
        if (src >= x->v && src < x->v + x->nv) bnd_taint_use(x, op, (int)(src - x->v));
        if (dst >= x->v && dst < x->v + x->nv) tk_clear(x, (int)(dst - x->v));
    }
    if (src->kind == IT_TILE && src->has_s && src->n > scap) {
        double *nl = (double *)realloc(slo, (size_t)src->n * sizeof *nl), *nh;
        uint8_t *nf;
        if (nl) slo = nl;
        nh = nl ? (double *)realloc(shi, (size_t)src->n * sizeof *nh) : NULL;
        if (nh) shi = nh;
        nf = nh ? (uint8_t *)realloc(sfl, (size_t)src->n) : NULL;
        if (nf) sfl = nf;
        dst->slo = slo; dst->shi = shi; dst->sfl = sfl;
        if (!nf) INTERNAL(x, op, "out of memory");
        scap = src->n;
    }
    if (src->kind == IT_TILE && src->n > cap) {
        b = (uint64_t *)realloc(b, (size_t)src->n * sizeof *b);
        if (!b) INTERNAL(x, op, "out of memory");
        cap = src->n;
    }
    if (src->kind == IT_TILE && src->has_u && src->n > ucap) {
        u = (uint8_t *)realloc(u, (size_t)src->n);
        if (!u) INTERNAL(x, op, "out of memory");
        ucap = src->n;
    }
    *dst = *src;
    dst->b = b;
    dst->u = u;
    dst->cap = cap;
    dst->ucap = ucap;
    dst->slo = slo;
    dst->shi = shi;
    dst->sfl = sfl;
    dst->scap = scap;
    if (src->kind == IT_TILE) {
        memcpy(b, src->b, (size_t)src->n * sizeof *b);
        if (src->has_u) memcpy(u, src->u, (size_t)src->n);
        if (src->has_s) {
            memcpy(slo, src->slo, (size_t)src->n * sizeof *slo);
            memcpy(shi, src->shi, (size_t)src->n * sizeof *shi);
            memcpy(sfl, src->sfl, (size_t)src->n);
        }
    }
}

static void swap_rv(rv *a, rv *b)
{
    rv t = *a;
    *a = *b;
    *b = t;
}

/* The undefined-lane pattern read with ub_checks off: NaN for floats (their zero where there is no NaN), 0. */
static uint64_t undef_bits(int et)
{
    if (it_is_float(et)) {
        er_fmt d = er_fmt_get(et);
        if (er_fmt_has_nan(d)) return it_f_nan(et);
        return 0;
    }
    return 0;
}

static int lane_undef(const rv *r, int64_t i) { return r->has_u && r->u[r->n == 1 ? 0 : i]; }

/* An observable use of a value: every lane must be defined. */
static void use_defined(X *x, const it_op *op, const rv *r, const char *what)
{
    int64_t i;
    if (!r->has_u || !x->ub) return;
    for (i = 0; i < r->n; i++)
        if (r->u[i]) UB(x, op, "%s uses an undefined lane (element %lld)", what, (long long)i);
}

static uint64_t scalar_of(X *x, const it_op *op, int id, const char *what)
{
    rv *r = &x->v[id];
    if (r->kind != IT_TILE || r->n != 1) INTERNAL(x, op, "%s is not a scalar", what);
    use_defined(x, op, r, what);
    return r->b[0];
}

/* ---------------------------------------------------------------- memory */

static uint8_t *mem_at(X *x, const it_op *op, uint64_t addr, int64_t size, int write, int check_align)
{
    uint64_t idx = addr >> IT_ADDR_SHIFT, off = addr & ((UINT64_C(1) << IT_ADDR_SHIFT) - 1u);
    mreg *m;
    if (idx == 0 || idx > (uint64_t)x->nmem) UB(x, op, "access at address 0x%llx, outside any allocation", (unsigned long long)addr);
    m = &x->mem[idx - 1];
    if (off + (uint64_t)size > m->n)
        UB(x, op, "access of %lld bytes at byte %llu of %s %llu (%zu bytes): outside the allocation", (long long)size,
           (unsigned long long)off, m->stored ? "buffer" : "global", (unsigned long long)(m->stored ? idx - 1 : idx - 1), m->n);
    if (check_align && size > 1 && (off % (uint64_t)size) != 0)
        UB(x, op, "misaligned access: byte %llu is not a multiple of the element size %lld", (unsigned long long)off, (long long)size);
    if (write && m->stored) *m->stored = 1;
    return m->data + off;
}

/* One element of eb bytes (little-endian), as a pattern of et. */
static inline uint64_t it_load_elem(const uint8_t *p, int eb, int et)
{
    uint64_t v = 0;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    switch (eb) {
    case 1: v = p[0]; break;
    case 2: { uint16_t h; memcpy(&h, p, 2); v = h; break; }
    case 4: { uint32_t w; memcpy(&w, p, 4); v = w; break; }
    default: memcpy(&v, p, 8); break;
    }
#else
    int i;
    for (i = 0; i < eb; i++) v |= (uint64_t)p[i] << (8 * i);
#endif
    if (et == IT_I1) v = v != 0;
    else if (it_is_float(et) && eb * 8 > er_fmt_get(et).width) v &= (UINT64_C(1) << er_fmt_get(et).width) - 1u;
    return v;
}

static inline void it_store_elem(uint8_t *p, int eb, uint64_t v)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    switch (eb) {
    case 1: p[0] = (uint8_t)v; break;
    case 2: { uint16_t h = (uint16_t)v; memcpy(p, &h, 2); break; }
    case 4: { uint32_t w = (uint32_t)v; memcpy(p, &w, 4); break; }
    default: memcpy(p, &v, 8); break;
    }
#else
    int i;
    for (i = 0; i < eb; i++) p[i] = (uint8_t)(v >> (8 * i));
#endif
}

static uint64_t mem_read(const uint8_t *p, int eb, int et)
{
    uint64_t v = 0;
    int i;
    for (i = 0; i < eb; i++) v |= (uint64_t)p[i] << (8 * i);
    if (et == IT_I1) v = v != 0;
    else if (it_is_float(et)) v &= wmask(er_fmt_get(et).width);
    return v;
}

static void mem_write(uint8_t *p, int eb, uint64_t v)
{
    int i;
    for (i = 0; i < eb; i++) p[i] = (uint8_t)(v >> (8 * i));
}

static uint64_t pad_bits(int et, int padding)
{
    double d;
    uint64_t b;
    switch (padding) {
    case IT_PAD_ZERO: d = 0.0; break;
    case IT_PAD_NEG_ZERO: d = -0.0; break;
    case IT_PAD_POS_INF: d = 1.0 / 0.0; break;
    case IT_PAD_NEG_INF: d = -1.0 / 0.0; break;
    case IT_PAD_NAN: return it_is_float(et) ? it_f_nan(et) : 0;
    default: return 0;
    }
    if (!it_is_float(et)) return 0;
    memcpy(&b, &d, sizeof b);
    return er_convert(ER_FMT_F64, et, b, ER_RND_NEAREST_EVEN, 0u).bits;
}

/* ---------------------------------------------------------------- execution */

static int exec_region(X *x, const it_region *r, const it_op **term);

/* bounds mode's hooks (interp_bounds_exec.h, included at the end of this file) */
static void bnd_after(X *x, const it_op *op);
static void bnd_reduce_lanes(X *x, const it_op *op, rv *arg, const rv *in, int64_t n, int64_t kk, int64_t inner);
static void bnd_scan_store(X *x, const it_op *op, rv *res, const rv *acc, int64_t n, int64_t kk, int64_t inner);
static int bnd_mem_setup(X *x);
static int bnd_mem_out(X *x, er_interp_bounds *out);
static void bnd_mem_free(X *x);
static er_status bnd_mma_exec(X *x, const it_op *op, er_mma_args *args);
static void bnd_mma_attach(X *x, const it_op *op, rv *r);
static void bnd_block_start(X *x);

static void step(X *x, const it_op *op)
{
    if (++x->steps > x->limit)
        UB(x, op, "the loop ran past the step limit of %lld iterations (all loops of the launch together; "
                  "the launch's step_limit raises it)", (long long)x->limit);
}

static void work(X *x, const it_op *op)
{
    if (++x->work > x->wlimit)
        UB(x, op, "the launch ran past the work limit of %lld operations (all blocks and iterations together; "
                  "the launch's work_limit raises it)", (long long)x->wlimit);
}

/* Elementwise shape: the larger operand (a 1-element operand broadcasts, for reduce/scan lanes). */
static rv *ew_out(X *x, const it_op *op, const rv *a, const rv *b, const rv *c, int et, int pet)
{
    const rv *big = a;
    it_type t;
    if (b && b->n > big->n) big = b;
    if (c && c->n > big->n) big = c;
    if ((a->n != big->n && a->n != 1) || (b && b->n != big->n && b->n != 1) || (c && c->n != big->n && c->n != 1))
        INTERNAL(x, op, "operands of different shapes");
    memset(&t, 0, sizeof t);
    t.et = et;
    t.pet = pet;
    return slot_tile(x, op, op->res[0], &t, big->rank, big->shape);
}

static void ew_undef(X *x, const it_op *op, rv *r, const rv *a, const rv *b, const rv *c)
{
    int64_t i;
    if (!(a->has_u || (b && b->has_u) || (c && c->has_u))) return;
    need_u(x, op, r);
    for (i = 0; i < r->n; i++) r->u[i] = (uint8_t)(lane_undef(a, i) | (b ? lane_undef(b, i) : 0) | (c ? lane_undef(c, i) : 0));
}

#define AV(i) (a->b[a->n == 1 ? 0 : (i)])
#define BV(i) (b->b[b->n == 1 ? 0 : (i)])
#define CV(i) (c->b[c->n == 1 ? 0 : (i)])
#define DEFINED(i) (!lane_undef(a, i) && (!b || !lane_undef(b, i)))

static int rnd_dir(const it_op *op) { return op->rnd >= 0 && op->rnd <= ER_RND_POSITIVE_INF ? op->rnd : ER_RND_NEAREST_EVEN; }

static void exec_int_binary(X *x, const it_op *op, const rv *a, const rv *b)
{
    int w = it_int_width(a->et);
    uint64_t mk = wmask(w);
    rv *r = ew_out(x, op, a, b, NULL, a->et, 0);
    int64_t i;
    int uns = op->is_unsigned;
    ew_undef(x, op, r, a, b, NULL);
    for (i = 0; i < r->n; i++) {
        uint64_t p = AV(i) & mk, q = BV(i) & mk, o = 0;
        int64_t sp = sext(p, w), sq = sext(q, w);
        int def = DEFINED(i);
        switch (op->code) {
        case OP_ADDI:
            o = (p + q) & mk;
            if (def && (op->ovf & IT_NSW) && sext(o, w) != sp + sq && w < 64) UB(x, op, "signed overflow broke the no_signed_wrap promise (element %lld)", (long long)i);
            if (def && (op->ovf & IT_NSW) && w == 64 && ((sq > 0 && sp > INT64_MAX - sq) || (sq < 0 && sp < INT64_MIN - sq))) UB(x, op, "signed overflow broke the no_signed_wrap promise (element %lld)", (long long)i);
            if (def && (op->ovf & IT_NUW) && o < p) UB(x, op, "unsigned overflow broke the no_unsigned_wrap promise (element %lld)", (long long)i);
            break;
        case OP_SUBI:
            o = (p - q) & mk;
            if (def && (op->ovf & IT_NSW) && ((w < 64 && sext(o, w) != sp - sq) || (w == 64 && ((sq < 0 && sp > INT64_MAX + sq) || (sq > 0 && sp < INT64_MIN + sq)))))
                UB(x, op, "signed overflow broke the no_signed_wrap promise (element %lld)", (long long)i);
            if (def && (op->ovf & IT_NUW) && q > p) UB(x, op, "unsigned overflow broke the no_unsigned_wrap promise (element %lld)", (long long)i);
            break;
        case OP_MULI: {
            __extension__ __int128 sprod = (__int128)sp * sq;
            __extension__ unsigned __int128 uprod = (unsigned __int128)p * q;
            o = (uint64_t)uprod & mk;
            if (def && (op->ovf & IT_NSW) && sprod != (__int128)sext(o, w)) UB(x, op, "signed overflow broke the no_signed_wrap promise (element %lld)", (long long)i);
            if (def && (op->ovf & IT_NUW) && uprod != (unsigned __int128)o) UB(x, op, "unsigned overflow broke the no_unsigned_wrap promise (element %lld)", (long long)i);
            break;
        }
        case OP_DIVI: case OP_REMI:
            if (q == 0) {
                if (def && x->ub) UB(x, op, "integer %s by zero (element %lld)", op->code == OP_DIVI ? "division" : "remainder", (long long)i);
                o = 0;
                break;
            }
            if (!uns && sq == -1 && w > 1 && p == (UINT64_C(1) << (w - 1))) {
                if (def && x->ub) UB(x, op, "signed %s of INT_MIN by -1 (element %lld)", op->code == OP_DIVI ? "division" : "remainder", (long long)i);
                o = op->code == OP_DIVI ? p : 0;
                break;
            }
            if (uns) {
                uint64_t qq = p / q, rr = p % q;
                if (op->code == OP_REMI) o = rr;
                else o = (op->rnd == ER_RND_POSITIVE_INF && rr) ? qq + 1 : qq;
            } else {
                int64_t qq, rr;
                if (w == 1) { sp = p ? -1 : 0; sq = -1; }
                qq = sp / sq;
                rr = sp % sq;
                if (op->code == OP_REMI) o = (uint64_t)rr;
                else {
                    if (rr != 0 && op->rnd == ER_RND_NEGATIVE_INF && ((rr < 0) != (sq < 0))) qq -= 1;
                    if (rr != 0 && op->rnd == ER_RND_POSITIVE_INF && ((rr < 0) == (sq < 0))) qq += 1;
                    o = (uint64_t)qq;
                }
            }
            o &= mk;
            break;
        case OP_MINI: o = uns ? (p < q ? p : q) : (sp < sq ? p : q); break;
        case OP_MAXI: o = uns ? (p > q ? p : q) : (sp > sq ? p : q); break;
        case OP_MULHII: {
            __extension__ unsigned __int128 uprod = (unsigned __int128)p * q;
            o = (uint64_t)(uprod >> w) & mk;
            break;
        }
        case OP_SHLI: case OP_SHRI:
            if (q >= (uint64_t)w) {
                if (def && x->ub) UB(x, op, "shift by %llu, not below the bit width %d (unspecified by the dialect)", (unsigned long long)q, w);
                o = (op->code == OP_SHRI && !uns && sp < 0) ? mk : 0;
                break;
            }
            if (op->code == OP_SHLI) {
                o = (p << q) & mk;
                if (def && (op->ovf & IT_NSW) && sext(o, w) >> q != sp) UB(x, op, "shift broke the no_signed_wrap promise (element %lld)", (long long)i);
                if (def && (op->ovf & IT_NUW) && (o >> q) != p) UB(x, op, "shift broke the no_unsigned_wrap promise (element %lld)", (long long)i);
            } else if (uns) o = p >> q;
            else o = (uint64_t)(sp >> q) & mk;
            break;
        case OP_ANDI: o = p & q; break;
        case OP_ORI: o = p | q; break;
        case OP_XORI: o = p ^ q; break;
        default: INTERNAL(x, op, "not an integer binary op");
        }
        r->b[i] = o & mk;
    }
}

static int pred_int(int pred, int c) /* c: -1, 0, 1 */
{
    switch (pred) {
    case PRED_EQ: return c == 0;
    case PRED_NE: return c != 0;
    case PRED_LT: return c < 0;
    case PRED_LE: return c <= 0;
    case PRED_GT: return c > 0;
    default: return c >= 0;
    }
}

/* Exact comparison of two float patterns: -1, 0, 1, or 2 when unordered. */
static int fcmp(int fmt, uint64_t a, uint64_t b)
{
    er_val x = er_decode(fmt, a), y = er_decode(fmt, b);
    int sx, sy;
    if (x.cls == ER_CLASS_NAN || y.cls == ER_CLASS_NAN) return 2;
    if (x.cls == ER_CLASS_ZERO && y.cls == ER_CLASS_ZERO) return 0;
    /* order by conversion to binary64: every format's values are binary64 values */
    {
        uint64_t da = er_convert(fmt, ER_FMT_F64, a, 0, 0u).bits, db = er_convert(fmt, ER_FMT_F64, b, 0, 0u).bits;
        double p, q;
        memcpy(&p, &da, 8);
        memcpy(&q, &db, 8);
        sx = p < q ? -1 : p > q ? 1 : 0;
        sy = 0;
        (void)sy;
        return sx;
    }
}

static uint64_t f_to_double_bits(int fmt, uint64_t a) { return er_convert(fmt, ER_FMT_F64, a, 0, 0u).bits; }

static void exec_float(X *x, const it_op *op, const rv *a, const rv *b, const rv *c)
{
    int fmt = a->et;
    rv *r = ew_out(x, op, a, b, c, fmt, 0);
    int64_t i;
    int dir = rnd_dir(op);
    unsigned opts = op->ftz && fmt == ER_FMT_F32 ? ER_OPT_FTZ : 0u;
    ew_undef(x, op, r, a, b, c);
    if (dir == ER_RND_NEAREST_EVEN && !opts && (op->code == OP_ADDF || op->code == OP_SUBF || op->code == OP_MULF || op->code == OP_DIVF || op->code == OP_SQRT)) {
        int code = op->code == OP_ADDF ? 0 : op->code == OP_SUBF ? 1 : op->code == OP_MULF ? 2 : op->code == OP_DIVF ? 3 : 4;
        uint64_t o;
        for (i = 0; i < r->n; i++) {
            uint64_t p = AV(i), q = b ? BV(i) : 0;
            if (!it_f_fast(code, fmt, p, q, &o)) {
                switch (code) {
                case 0: o = it_f_add(fmt, p, q, 0, dir, 0u); break;
                case 1: o = it_f_add(fmt, p, q, 1, dir, 0u); break;
                case 2: o = it_f_mul(fmt, p, q, dir, 0u); break;
                case 3: o = it_f_div(fmt, p, q, dir, 0u); break;
                default: o = it_f_sqrt(fmt, p, dir, 0u); break;
                }
            }
            r->b[i] = o;
        }
        return;
    }
    for (i = 0; i < r->n; i++) {
        uint64_t p = AV(i), q = b ? BV(i) : 0, o = 0;
        unsigned fl;
        switch (op->code) {
        case OP_ADDF: o = it_f_add(fmt, p, q, 0, dir, opts); break;
        case OP_SUBF: o = it_f_add(fmt, p, q, 1, dir, opts); break;
        case OP_MULF: o = it_f_mul(fmt, p, q, dir, opts); break;
        case OP_DIVF: o = it_f_div(fmt, p, q, dir, opts); break;
        case OP_FMA: o = it_f_fma(fmt, p, q, CV(i), dir, opts); break;
        case OP_SQRT: o = it_f_sqrt(fmt, p, dir, opts); break;
        case OP_NEGF: o = p ^ er_fmt_signbit(er_fmt_get(fmt)); break;
        case OP_ABSF: o = p & ~er_fmt_signbit(er_fmt_get(fmt)); break;
        case OP_MAXF: case OP_MINF: {
            uint64_t pp = p, qq = q;
            int cmp, pn, qn;
            if (opts) {
                er_val vp = er_decode(fmt, p), vq = er_decode(fmt, q);
                if (vp.cls == ER_CLASS_SUBNORMAL) pp = p & er_fmt_signbit(er_fmt_get(fmt));
                if (vq.cls == ER_CLASS_SUBNORMAL) qq = q & er_fmt_signbit(er_fmt_get(fmt));
            }
            pn = er_decode(fmt, pp).cls == ER_CLASS_NAN;
            qn = er_decode(fmt, qq).cls == ER_CLASS_NAN;
            if (pn || qn) {
                if (op->nan_prop || (pn && qn)) o = it_f_nan(fmt);
                else o = pn ? qq : pp;
                break;
            }
            cmp = fcmp(fmt, pp, qq);
            if (cmp == 0) {
                /* +0 > -0 */
                unsigned sp = (unsigned)((pp & er_fmt_signbit(er_fmt_get(fmt))) != 0);
                if (op->code == OP_MAXF) o = sp ? qq : pp;
                else o = sp ? pp : qq;
            } else if (op->code == OP_MAXF) o = cmp > 0 ? pp : qq;
            else o = cmp < 0 ? pp : qq;
            break;
        }
        case OP_REMF: case OP_ATAN2: case OP_POW: {
            er_math_op mo = op->code == OP_REMF ? ER_MATH_FMOD : op->code == OP_ATAN2 ? ER_MATH_ATAN2 : ER_MATH_POW;
            if (er_math_binary(mo, fmt, p, q, ER_RND_NEAREST_EVEN, &o, &fl) != ER_OK) INTERNAL(x, op, "the math library failed");
            break;
        }
        default: {
            er_math_op mo;
            switch (op->code) {
            case OP_FLOOR: mo = ER_MATH_FLOOR; break;
            case OP_CEIL: mo = ER_MATH_CEIL; break;
            case OP_EXP: mo = ER_MATH_EXP; break;
            case OP_EXP2: mo = ER_MATH_EXP2; break;
            case OP_LOG: mo = ER_MATH_LOG; break;
            case OP_LOG2: mo = ER_MATH_LOG2; break;
            case OP_RSQRT: mo = ER_MATH_RSQRT; break;
            case OP_TANH: mo = ER_MATH_TANH; break;
            case OP_SINH: mo = ER_MATH_SINH; break;
            case OP_COSH: mo = ER_MATH_COSH; break;
            case OP_SIN: mo = ER_MATH_SIN; break;
            case OP_COS: mo = ER_MATH_COS; break;
            case OP_TAN: mo = ER_MATH_TAN; break;
            default: INTERNAL(x, op, "not a float op"); mo = ER_MATH_EXP;
            }
            if (opts && er_decode(fmt, p).cls == ER_CLASS_SUBNORMAL) p &= er_fmt_signbit(er_fmt_get(fmt));
            if (er_math_unary(mo, fmt, p, ER_RND_NEAREST_EVEN, &o, &fl) != ER_OK) INTERNAL(x, op, "the math library failed");
            if (opts) {
                er_val v = er_decode(fmt, o);
                if (v.cls == ER_CLASS_SUBNORMAL) o &= er_fmt_signbit(er_fmt_get(fmt));
            }
            break;
        }
        }
        r->b[i] = o;
    }
}

static void exec_cmp(X *x, const it_op *op, const rv *a, const rv *b)
{
    rv *r = ew_out(x, op, a, b, NULL, IT_I1, 0);
    int64_t i;
    ew_undef(x, op, r, a, b, NULL);
    if (op->code == OP_CMPI) {
        int w = it_int_width(a->et);
        for (i = 0; i < r->n; i++) {
            uint64_t p = AV(i) & wmask(w), q = BV(i) & wmask(w);
            int c;
            if (op->is_unsigned) c = p < q ? -1 : p > q;
            else {
                int64_t sp = sext(p, w), sq = sext(q, w);
                c = sp < sq ? -1 : sp > sq;
            }
            r->b[i] = (uint64_t)pred_int(op->pred, c);
        }
    } else {
        for (i = 0; i < r->n; i++) {
            int c = fcmp(a->et, AV(i), BV(i));
            if (c == 2) r->b[i] = op->ordered ? 0u : 1u;
            else r->b[i] = (uint64_t)pred_int(op->pred, c);
        }
    }
}

/* Integer value of a lane as a signed/unsigned exact quantity: sign and magnitude. */
static void int_val(uint64_t v, int w, int uns, unsigned *sign, uint64_t *mag)
{
    v &= wmask(w);
    if (!uns && w > 0 && ((v >> (w - 1)) & 1u)) {
        *sign = 1;
        *mag = w >= 64 ? ~v + 1u : ((~v + 1u) & wmask(w));
        if (w < 64 && *mag == 0) *mag = UINT64_C(1) << (w - 1);
        if (w == 64 && *mag == 0) *mag = UINT64_C(1) << 63;
    } else {
        *sign = 0;
        *mag = v;
    }
}

static void exec_convert(X *x, const it_op *op, const rv *a, const it_type *rt)
{
    rv *r;
    int64_t i;
    int sw = it_int_width(a->et), dw = it_int_width(rt->et);
    if (a->kind != IT_TILE) INTERNAL(x, op, "operand is not a tile");
    r = slot_tile(x, op, op->res[0], rt, a->rank, a->shape);
    if (a->has_u) {
        need_u(x, op, r);
        memcpy(r->u, a->u, (size_t)a->n);
    }
    for (i = 0; i < r->n; i++) {
        uint64_t p = a->b[i], o = 0;
        switch (op->code) {
        case OP_EXTI:
            o = op->is_unsigned ? (p & wmask(sw)) : ((uint64_t)sext(p, sw) & wmask(dw));
            break;
        case OP_TRUNCI:
            o = p & wmask(dw);
            if (!lane_undef(a, i)) {
                if ((op->ovf & IT_NSW) && sext(o, dw) != sext(p, sw)) UB(x, op, "truncation broke the no_signed_wrap promise (element %lld)", (long long)i);
                if ((op->ovf & IT_NUW) && o != (p & wmask(sw))) UB(x, op, "truncation broke the no_unsigned_wrap promise (element %lld)", (long long)i);
            }
            break;
        case OP_FTOF: {
            int dir = op->rnd >= 0 && op->rnd <= ER_RND_POSITIVE_INF ? op->rnd : ER_RND_NEAREST_EVEN;
            o = er_convert(a->et, rt->et, p, dir, 0u).bits;
            break;
        }
        case OP_ITOF: {
            unsigned s;
            uint64_t mag;
            if (sw == 1) { s = !op->is_unsigned && (p & 1u); mag = p & 1u; }
            else int_val(p, sw, op->is_unsigned, &s, &mag);
            o = mag == 0 ? er_convert(ER_FMT_F64, rt->et, 0u, 0, 0u).bits : er_round(rt->et, s, mag, 0, 0u, ER_RND_NEAREST_EVEN, 0u).bits;
            break;
        }
        case OP_FTOI: {
            /* truncation toward zero; NaN, infinities and values out of range give an undefined lane */
            er_val v = er_decode(a->et, p);
            int bad = 0;
            uint64_t mag = 0;
            if (v.cls == ER_CLASS_NAN || v.cls == ER_CLASS_INF) bad = 1;
            else if (v.cls != ER_CLASS_ZERO) {
                if (v.exp >= 0) {
                    int top = 63 - ER_CLZ64(v.sig);
                    if (top + v.exp >= 64) bad = 1;
                    else mag = v.sig << v.exp;
                } else {
                    mag = -v.exp >= 64 ? 0 : v.sig >> (-v.exp);
                }
            }
            if (!bad) {
                if (op->is_unsigned) {
                    if (v.sign && mag) bad = 1;
                    else if (dw < 64 && mag > wmask(dw)) bad = 1;
                    o = mag;
                } else {
                    uint64_t lim = dw == 1 ? (v.sign ? 1u : 0u) : (UINT64_C(1) << (dw - 1)) - (v.sign ? 0u : 1u);
                    if (mag > lim) bad = 1;
                    o = (v.sign ? ~mag + 1u : mag) & wmask(dw);
                }
            }
            if (bad && (op->ovf & IT_SAT)) /* 13.4's saturating ftoi: clamped to the type, NaN to 0 */
                o = v.cls == ER_CLASS_NAN ? 0u
                    : op->is_unsigned ? (v.sign ? 0u : wmask(dw))
                    : v.sign ? (UINT64_C(1) << (dw - 1)) & wmask(dw) : ((UINT64_C(1) << (dw - 1)) - 1u) & wmask(dw);
            else if (bad) {
                need_u(x, op, r);
                r->u[i] = 1;
                o = 0;
            }
            break;
        }
        case OP_BITCAST: case OP_PTR_TO_INT: case OP_INT_TO_PTR:
            o = p;
            break;
        default: INTERNAL(x, op, "not a conversion");
        }
        r->b[i] = o;
    }
}

/* Row-major strides of a shape. */
static void rm_strides(int rank, const int64_t *shape, int64_t *st)
{
    int i;
    int64_t s = 1;
    for (i = rank - 1; i >= 0; i--) {
        st[i] = s;
        s *= shape[i];
    }
}

/* Element i (row-major in the view's tile, strides tst) of the view pv's tile at index idx: 1 with its
 * element offset in *off when it lies inside the tensor, 0 when it does not. */
static int view_elem_off(const rv *pv, int rank, const int64_t *idx, const int64_t *tst, int64_t i, int64_t *off)
{
    int64_t rem = i, o = 0;
    int d, inb = 1;
    for (d = 0; d < rank; d++) {
        int64_t c = idx[d] * pv->tile[d] + rem / tst[d];
        rem %= tst[d];
        if (c >= pv->vshape[pv->dim_map[d]]) inb = 0;
        else o += c * pv->vstr[pv->dim_map[d]];
    }
    *off = o;
    return inb;
}

static void exec_shape(X *x, const it_op *op)
{
    const rv *a = &x->v[op->opd[0]];
    const it_type *rt = &op->rty[0];
    rv *r;
    int64_t i, sst[IT_MAXRANK], rst[IT_MAXRANK];
    int d, rank = rt->rank;
    if (a->kind != IT_TILE) INTERNAL(x, op, "operand is not a tile");
    r = slot_tile(x, op, op->res[0], rt, rt->rank, rt->shape);
    if (a->has_u) need_u(x, op, r);
    rm_strides(a->rank, a->shape, sst);
    rm_strides(rank, rt->shape, rst);
    switch (op->code) {
    case OP_RESHAPE:
        if (r->n != a->n) INTERNAL(x, op, "reshape changes the element count");
        memcpy(r->b, a->b, (size_t)a->n * sizeof *a->b);
        if (a->has_u) memcpy(r->u, a->u, (size_t)a->n);
        return;
    case OP_BROADCAST: case OP_PERMUTE: case OP_EXTRACT: {
        int64_t base[IT_MAXRANK] = {0};
        if (op->code == OP_EXTRACT) {
            for (d = 0; d < rank; d++) {
                uint64_t k = scalar_of(x, op, op->opd[1 + d], "extract's index");
                int64_t nslices = a->shape[d] / rt->shape[d];
                if (k >= (uint64_t)nslices) UB(x, op, "extract slice %llu outside the %lld slices of dimension %d", (unsigned long long)k, (long long)nslices, d);
                base[d] = (int64_t)k * rt->shape[d];
            }
        }
        for (i = 0; i < r->n; i++) {
            int64_t rem = i, src = 0;
            for (d = 0; d < rank; d++) {
                int64_t c = rem / rst[d];
                rem %= rst[d];
                if (op->code == OP_BROADCAST) src += (a->shape[d] == 1 ? 0 : c) * sst[d];
                else if (op->code == OP_PERMUTE) src += c * sst[op->ilist[d]];
                else src += (base[d] + c) * sst[d];
            }
            r->b[i] = a->b[src];
            if (a->has_u) r->u[i] = a->u[src];
        }
        return;
    }
    case OP_CAT: {
        const rv *b = &x->v[op->opd[1]];
        int dim = op->dim;
        if (b->has_u && !r->has_u) need_u(x, op, r);
        for (i = 0; i < r->n; i++) {
            int64_t rem = i, src = 0, cd = 0;
            const rv *s = a;
            int64_t bst[IT_MAXRANK];
            int64_t coords[IT_MAXRANK];
            for (d = 0; d < rank; d++) {
                coords[d] = rem / rst[d];
                rem %= rst[d];
            }
            cd = coords[dim];
            if (cd >= a->shape[dim]) {
                s = b;
                coords[dim] = cd - a->shape[dim];
            }
            rm_strides(s->rank, s->shape, bst);
            for (d = 0; d < rank; d++) src += coords[d] * bst[d];
            r->b[i] = s->b[src];
            if (r->has_u) r->u[i] = (uint8_t)lane_undef(s, src);
        }
        return;
    }
    default: INTERNAL(x, op, "not a shape op");
    }
}

/* ---------------------------------------------------------------- views */

static void set_token(X *x, const it_op *op, int k);

/*
 * load_view_tko / store_view_tko on 13.3's strided and gather/scatter views.  Tile element t lies at
 * tensor coordinate c_d = I_d s_d + t_d on a strided view (s: the traversal strides; an origin I_d s_d
 * outside [0, extent) is UB: the tile would lie wholly outside), and on a gather/scatter view at
 * c_d = idx[t_d] along the sparse dimension (idx: the 1-d index tile, element indices) and I_d + t_d
 * along the others (I_d: an element offset, as cuTile's Slice(start, length)); a tile with no element
 * inside the tensor is UB (cuTile's load_advanced_indexing: "If the tile lies entirely outside the tiled
 * view, the behavior is undefined").  Elements outside the tensor read the padding (else undefined) and
 * are not stored.
 */
static void exec_view_access13(X *x, const it_op *op, int store)
{
    const rv *pv = &x->v[op->opd[store ? 1 : 0]];
    const rv *val = store ? &x->v[op->opd[0]] : NULL;
    const rv *sp = NULL;
    int64_t start[IT_MAXRANK], tst[IT_MAXRANK], i, n = 1;
    int rank = pv->vrank, d, eb = it_elem_bytes(pv->et), first = store ? 2 : 1, any = 0;
    rv *r = NULL;
    for (d = 0; d < rank; d++) {
        if (pv->vflav == IT_VIEW_GATHER && d == pv->sparse) {
            sp = &x->v[op->opd[first + d]];
            start[d] = 0;
        } else {
            const rv *iv = &x->v[op->opd[first + d]];
            int64_t v = sext(scalar_of(x, op, op->opd[first + d], "the view index"), it_int_width(iv->et));
            if (pv->vflav == IT_VIEW_STRIDED) {
                if (v < 0 || v > pv->vshape[d] / pv->tstep[d] || v * pv->tstep[d] >= pv->vshape[d])
                    UB(x, op, "view index %lld of dimension %d puts the tile's origin %lld outside the tensor's %lld elements", (long long)v, d,
                       (long long)(v * pv->tstep[d]), (long long)pv->vshape[d]);
                start[d] = v * pv->tstep[d];
            } else {
                start[d] = v;
            }
        }
        n *= pv->tile[d];
    }
    if (sp) use_defined(x, op, sp, "the sparse dimension's index");
    rm_strides(rank, pv->tile, tst);
    if (!store) {
        it_type t;
        memset(&t, 0, sizeof t);
        t.et = pv->et;
        r = slot_tile(x, op, op->res[0], &t, rank, pv->tile);
    } else if (val->n != n) {
        INTERNAL(x, op, "stored tile has %lld elements, the view's tile %lld", (long long)val->n, (long long)n);
    }
    for (i = 0; i < n; i++) {
        int64_t rem = i;
        __extension__ __int128 off = 0;
        int inb = 1;
        for (d = 0; d < rank; d++) {
            int64_t td = rem / tst[d], c;
            rem %= tst[d];
            if (sp && d == pv->sparse) c = sext(sp->b[td], it_int_width(sp->et));
            else c = start[d] + td;
            if (c < 0 || c >= pv->vshape[d]) inb = 0;
            else off += (__int128)c * pv->vstr[d];
        }
        if (inb && off * eb > ((__int128)1 << 62)) UB(x, op, "the view's linear offset overflows");
        any |= inb;
        if (!store) {
            if (inb) {
                r->b[i] = mem_read(mem_at(x, op, pv->base + (uint64_t)(off * eb), eb, 0, 0), eb, pv->et);
            } else if (pv->padding != IT_PAD_NONE) {
                r->b[i] = pad_bits(pv->et, pv->padding);
            } else {
                need_u(x, op, r);
                r->u[i] = 1;
                r->b[i] = undef_bits(pv->et);
            }
        } else if (inb) {
            if (lane_undef(val, i) && x->ub) UB(x, op, "stores an undefined lane (tile element %lld)", (long long)i);
            mem_write(mem_at(x, op, pv->base + (uint64_t)(off * eb), eb, 1, 0), eb, val->b[i]);
        }
    }
    if (!any && n) UB(x, op, "the tile lies wholly outside the tensor");
    set_token(x, op, store ? 0 : 1);
}

static void exec_view_access(X *x, const it_op *op, int store)
{
    const rv *pv = &x->v[op->opd[store ? 1 : 0]];
    const rv *val = store ? &x->v[op->opd[0]] : NULL;
    int64_t idx[IT_MAXRANK], tst[IT_MAXRANK];
    int rank = pv->vrank, d, eb = it_elem_bytes(pv->et);
    int first = store ? 2 : 1;
    int64_t i, n = 1;
    rv *r = NULL;
    if (pv->kind != IT_PV || op->nidx != rank) INTERNAL(x, op, "view access with %d indices for rank %d", op->nidx, rank);
    if (pv->vflav != IT_VIEW_PARTITION) {
        exec_view_access13(x, op, store);
        return;
    }
    for (d = 0; d < rank; d++) {
        const rv *iv = &x->v[op->opd[first + d]];
        uint64_t raw = scalar_of(x, op, op->opd[first + d], "the view index");
        int64_t v = sext(raw, it_int_width(iv->et));
        int64_t ext = pv->vshape[pv->dim_map[d]], t = pv->tile[d];
        int64_t count = (ext + t - 1) / t;
        if (v < 0 || v >= count) UB(x, op, "view index %lld outside the index space [0, %lld) of dimension %d", (long long)v, (long long)count, d);
        if (d < op->ninb && op->inb[d] && (v + 1) * t > ext)
            UB(x, op, "the inbounds promise of dimension %d is broken (tile %lld covers up to %lld of %lld)", d, (long long)v, (long long)((v + 1) * t), (long long)ext);
        idx[d] = v;
        n *= t;
    }
    rm_strides(rank, pv->tile, tst);
    {
        /* the largest in-bounds offset, exactly: beyond 2^62 bytes the linear offset overflows (UB) */
        __extension__ __int128 mx = 0;
        for (d = 0; d < rank; d++) {
            __extension__ __int128 hi = (__int128)(idx[d] + 1) * pv->tile[d];
            if (hi > pv->vshape[pv->dim_map[d]]) hi = pv->vshape[pv->dim_map[d]];
            mx += (hi - 1) * (__int128)pv->vstr[pv->dim_map[d]];
        }
        if (mx * eb > ((__int128)1 << 62)) UB(x, op, "the view's linear offset overflows");
    }
    if (!store) {
        it_type t;
        memset(&t, 0, sizeof t);
        t.et = pv->et;
        r = slot_tile(x, op, op->res[0], &t, rank, pv->tile);
    } else if (val->n != n) {
        INTERNAL(x, op, "stored tile has %lld elements, the view's tile %lld", (long long)val->n, (long long)n);
    }
    {
        /* a tile wholly inside the tensor: one range check, then an odometer over the elements */
        int64_t base_off = 0, span = 0, str[IT_MAXRANK], t[IT_MAXRANK];
        int allin = 1;
        for (d = 0; d < rank; d++) {
            int64_t c0 = idx[d] * pv->tile[d];
            str[d] = pv->vstr[pv->dim_map[d]];
            t[d] = 0;
            if (c0 + pv->tile[d] > pv->vshape[pv->dim_map[d]]) allin = 0;
            base_off += c0 * str[d];
            span += (pv->tile[d] - 1) * str[d];
        }
        if (allin && n > 0) {
            uint8_t *b0 = mem_at(x, op, pv->base + (uint64_t)(base_off * eb), (span + 1) * eb, store, 0);
            int64_t rel = 0;
            if (store && val->has_u && x->ub)
                for (i = 0; i < n; i++)
                    if (val->u[i]) UB(x, op, "stores an undefined lane (tile element %lld)", (long long)i);
            /* rows of the innermost dimension, the outer ones by an odometer */
            int64_t inner = rank ? pv->tile[rank - 1] : 1, istr = rank ? str[rank - 1] : 0, j;
            int w = it_is_float(pv->et) ? er_fmt_get(pv->et).width : 0;
            uint64_t emask = w && w < eb * 8 ? (UINT64_C(1) << w) - 1u : ~UINT64_C(0);
            int is_i1 = pv->et == IT_I1;
            for (i = 0; i < n; i += inner) {
                uint8_t *q = b0 + rel * eb;
                uint64_t *vb = store ? val->b + i : r->b + i;
                if (store) {
                    if (eb == 4 && istr == 1)
                        for (j = 0; j < inner; j++) { uint32_t v32 = (uint32_t)vb[j]; memcpy(q + 4 * j, &v32, 4); }
                    else
                        for (j = 0; j < inner; j++) it_store_elem(q + j * istr * eb, eb, vb[j]);
                } else {
                    if (eb == 4 && istr == 1)
                        for (j = 0; j < inner; j++) { uint32_t v32; memcpy(&v32, q + 4 * j, 4); vb[j] = v32 & emask; }
                    else if (eb == 2 && istr == 1)
                        for (j = 0; j < inner; j++) { uint16_t v16; memcpy(&v16, q + 2 * j, 2); vb[j] = v16 & emask; }
                    else
                        for (j = 0; j < inner; j++) {
                            uint64_t v = it_load_elem(q + j * istr * eb, eb, IT_I8);
                            vb[j] = is_i1 ? v != 0 : v & emask;
                        }
                }
                for (d = rank - 2; d >= 0; d--) {
                    rel += str[d];
                    if (++t[d] < pv->tile[d]) break;
                    rel -= pv->tile[d] * str[d];
                    t[d] = 0;
                }
            }
            goto tokens;
        }
    }
    for (i = 0; i < n; i++) {
        int64_t rem = i, off = 0;
        int inb = 1;
        for (d = 0; d < rank; d++) {
            int64_t td = rem / tst[d], c;
            int td2 = pv->dim_map[d];
            rem %= tst[d];
            c = idx[d] * pv->tile[d] + td;
            if (c >= pv->vshape[td2]) inb = 0;
            else off += c * pv->vstr[td2]; /* in-bounds offsets are bounded by the check above */
        }
        if (!store) {
            if (inb) {
                uint8_t *p = mem_at(x, op, pv->base + (uint64_t)(off * eb), eb, 0, 0);
                r->b[i] = mem_read(p, eb, pv->et);
            } else if (pv->padding != IT_PAD_NONE) {
                r->b[i] = pad_bits(pv->et, pv->padding);
            } else {
                need_u(x, op, r);
                r->u[i] = 1;
                r->b[i] = undef_bits(pv->et);
            }
        } else if (inb) {
            uint8_t *p;
            if (lane_undef(val, i) && x->ub) UB(x, op, "stores an undefined lane (tile element %lld)", (long long)i);
            p = mem_at(x, op, pv->base + (uint64_t)(off * eb), eb, 1, 0);
            mem_write(p, eb, val->b[i]);
        }
    }
tokens:
    if (!store) {
        it_type tt;
        memset(&tt, 0, sizeof tt);
        tt.kind = IT_TOKEN;
        slot_tile(x, op, op->res[1], &tt, 0, NULL)->kind = IT_TOKEN;
    } else {
        it_type tt;
        memset(&tt, 0, sizeof tt);
        slot_tile(x, op, op->res[0], &tt, 0, NULL)->kind = IT_TOKEN;
    }
}

static void exec_ptr_access(X *x, const it_op *op, int store)
{
    const rv *ptr = &x->v[op->opd[0]];
    const rv *val = store ? &x->v[op->opd[1]] : NULL;
    const rv *mask = op->has_mask ? &x->v[op->opd[store ? 2 : 1]] : NULL;
    const rv *pad = op->has_pad ? &x->v[op->opd[2]] : NULL;
    int et = ptr->pet, eb = it_elem_bytes(et);
    int64_t i;
    rv *r = NULL;
    if (ptr->kind != IT_TILE || ptr->et != IT_PTR) INTERNAL(x, op, "not a pointer tile");
    if ((mask && mask->n != ptr->n) || (val && val->n != ptr->n) || (pad && pad->n != ptr->n && pad->n != 1)) INTERNAL(x, op, "operand shapes differ");
    if (!store) {
        it_type t;
        memset(&t, 0, sizeof t);
        t.et = et;
        r = slot_tile(x, op, op->res[0], &t, ptr->rank, ptr->shape);
    }
    for (i = 0; i < ptr->n; i++) {
        int on = 1;
        if (mask) {
            if (lane_undef(mask, i) && x->ub) UB(x, op, "the mask's lane %lld is undefined", (long long)i);
            on = (mask->b[i] & 1u) != 0;
        }
        if (!on) {
            if (!store) {
                if (pad) {
                    r->b[i] = pad->b[pad->n == 1 ? 0 : i];
                    if (lane_undef(pad, i)) { need_u(x, op, r); r->u[i] = 1; }
                } else {
                    need_u(x, op, r);
                    r->u[i] = 1;
                    r->b[i] = undef_bits(et);
                }
            }
            continue;
        }
        if (lane_undef(ptr, i) && x->ub) UB(x, op, "the pointer's lane %lld is undefined", (long long)i);
        if (store) {
            uint8_t *p;
            if (lane_undef(val, i) && x->ub) UB(x, op, "stores an undefined lane (element %lld)", (long long)i);
            p = mem_at(x, op, ptr->b[i], eb, 1, 1);
            mem_write(p, eb, val->b[i]);
        } else {
            uint8_t *p = mem_at(x, op, ptr->b[i], eb, 0, 1);
            r->b[i] = mem_read(p, eb, et);
        }
    }
    {
        it_type tt;
        memset(&tt, 0, sizeof tt);
        slot_tile(x, op, op->res[store ? 0 : 1], &tt, 0, NULL)->kind = IT_TOKEN;
    }
}

/* ---------------------------------------------------------------- mma */

static void pack(const rv *t, int eb, void *buf)
{
    int64_t i;
    uint8_t *p = (uint8_t *)buf;
    for (i = 0; i < t->n; i++) it_store_elem(p + i * eb, eb, t->b[i]);
}

static void exec_mma(X *x, const it_op *op)
{
    const rv *a = &x->v[op->opd[0]], *b = &x->v[op->opd[1]], *c = &x->v[op->opd[2]];
    const rv *sa = op->code == OP_MMAF_SCALED ? &x->v[op->opd[3]] : NULL;
    const rv *sb = op->code == OP_MMAF_SCALED ? &x->v[op->opd[4]] : NULL;
    int batched = a->rank == 3;
    int64_t B = batched ? a->shape[0] : 1, M = a->shape[a->rank - 2], K = a->shape[a->rank - 1], N = b->shape[b->rank - 1];
    int fa = a->et, fb = b->et, fc = c->et;
    int eba, ebb, ebc;
    void *pa, *pb, *pc, *pd, *psa = NULL, *psb = NULL;
    er_tensor ta, tb, tc, td, tsa, tsb;
    er_mma_args args;
    char emsg[256];
    rv *r;
    int64_t i, j, p, bb;
    if (op->code == OP_MMAI) {
        fa = op->is_unsigned ? ER_FMT_U8 : ER_FMT_I8;
        fb = op->sgn2 ? ER_FMT_U8 : ER_FMT_I8;
        fc = ER_FMT_I32;
    }
    eba = er_fmt_get(fa).width <= 8 ? 1 : er_fmt_get(fa).width / 8;
    ebb = er_fmt_get(fb).width <= 8 ? 1 : er_fmt_get(fb).width / 8;
    ebc = er_fmt_get(fc).width / 8;
    pa = malloc((size_t)a->n * eba);
    pb = malloc((size_t)b->n * ebb);
    pc = malloc((size_t)c->n * ebc);
    pd = malloc((size_t)c->n * ebc);
    if (sa) {
        psa = malloc((size_t)sa->n);
        psb = malloc((size_t)sb->n);
    }
    if (!pa || !pb || !pc || !pd || (sa && (!psa || !psb))) {
        free(pa); free(pb); free(pc); free(pd); free(psa); free(psb);
        INTERNAL(x, op, "out of memory");
    }
    pack(a, eba, pa);
    pack(b, ebb, pb);
    pack(c, ebc, pc);
    if (batched) {
        ta = er_tensor_3d(fa, B, M, K, pa);
        tb = er_tensor_3d(fb, B, K, N, pb);
        tc = er_tensor_3d(fc, B, M, N, pc);
        td = er_tensor_3d(fc, B, M, N, pd);
    } else {
        ta = er_tensor_2d(fa, M, K, pa);
        tb = er_tensor_2d(fb, K, N, pb);
        tc = er_tensor_2d(fc, M, N, pc);
        td = er_tensor_2d(fc, M, N, pd);
    }
    er_mma_args_init(&args);
    args.a = &ta;
    args.b = &tb;
    args.c = &tc;
    args.d = &td;
    args.rounding = ER_RND_NEAREST_EVEN;
    args.backend = ER_BACKEND_CPU;
    args.threads = 1;
    args.msg = emsg;
    args.msg_size = sizeof emsg;
    if (sa) {
        int64_t ks = sa->shape[sa->rank - 1];
        pack(sa, 1, psa);
        pack(sb, 1, psb);
        if (batched) {
            tsa = er_tensor_3d(sa->et, B, M, ks, psa);
            tsb = er_tensor_3d(sb->et, B, ks, N, psb);
        } else {
            tsa = er_tensor_2d(sa->et, M, ks, psa);
            tsb = er_tensor_2d(sb->et, ks, N, psb);
        }
        args.a_scale = &tsa;
        args.b_scale = &tsb;
        args.block = (int)(K / ks);
    }
    if ((x->bo ? bnd_mma_exec(x, op, &args) : er_mma(&args)) != ER_OK) { /* bounds mode: the product and its bounds */
        free(pa); free(pb); free(pc); free(pd); free(psa); free(psb);
        INTERNAL(x, op, "the exact engine refused the product: %s", emsg);
    }
    {
        it_type t;
        memset(&t, 0, sizeof t);
        t.et = c->et;
        r = slot_tile(x, op, op->res[0], &t, c->rank, c->shape);
    }
    for (i = 0; i < c->n; i++) r->b[i] = it_load_elem((uint8_t *)pd + i * ebc, ebc, c->et);
    if (x->bo) bnd_mma_attach(x, op, r); /* bounds mode */
    free(pa); free(pb); free(pc); free(pd); free(psa); free(psb);
    /* undefined lanes: D[i][j] is undefined if C[i][j], a lane of row i of A or of column j of B is */
    if (a->has_u || b->has_u || c->has_u || (sa && (sa->has_u || sb->has_u))) {
        need_u(x, op, r);
        for (bb = 0; bb < B; bb++)
            for (i = 0; i < M; i++)
                for (j = 0; j < N; j++) {
                    int u = lane_undef(c, (bb * M + i) * N + j);
                    for (p = 0; p < K && !u; p++) {
                        u |= lane_undef(a, (bb * M + i) * K + p) | lane_undef(b, (bb * K + p) * N + j);
                        if (sa) {
                            int64_t ks = sa->shape[sa->rank - 1], blk = K / ks;
                            u |= lane_undef(sa, (bb * M + i) * ks + p / blk) | lane_undef(sb, (bb * ks + p / blk) * N + j);
                        }
                    }
                    r->u[(bb * M + i) * N + j] = (uint8_t)u;
                }
    }
}

/* ---------------------------------------------------------------- reduce and scan */

static void exec_reduce(X *x, const it_op *op)
{
    int nop = op->nopd, k, j;
    const rv *in0 = &x->v[op->opd[0]];
    int dim = op->dim, rank = in0->rank;
    int64_t n = in0->shape[dim], outer = 1, inner = 1, M, i, t;
    const it_region *body = op->region[0];
    int64_t oshape[IT_MAXRANK];
    int orank = 0;
    int scan = op->code == OP_SCAN;
    for (k = 0; k < rank; k++) {
        if (k < dim) outer *= in0->shape[k];
        if (k > dim) inner *= in0->shape[k];
        if (k != dim) oshape[orank++] = in0->shape[k];
    }
    M = outer * inner;
    /* accumulators: the region's second argument of each pair, M lanes each */
    for (j = 0; j < nop; j++) {
        rv *acc = slot_tile(x, op, body->args[2 * j + 1], &body->aty[2 * j + 1], orank, oshape);
        for (i = 0; i < M; i++) acc->b[i] = op->cdata[j];
        if (scan) {
            const rv *in = &x->v[op->opd[j]];
            slot_tile(x, op, op->res[j], &op->rty[j], in->rank, in->shape);
        }
    }
    for (t = 0; t < n; t++) {
        int64_t kk = scan && op->reverse ? n - 1 - t : t;
        const it_op *term = NULL;
        int sig;
        for (j = 0; j < nop; j++) {
            const rv *in = &x->v[op->opd[j]];
            rv *arg = slot_tile(x, op, body->args[2 * j], &body->aty[2 * j], orank, oshape);
            if (in->has_u) need_u(x, op, arg);
            for (i = 0; i < M; i++) {
                int64_t o = i / inner, q = i % inner, src = (o * n + kk) * inner + q;
                arg->b[i] = in->b[src];
                if (in->has_u) arg->u[i] = in->u[src];
            }
            if (x->bo) bnd_reduce_lanes(x, op, arg, in, n, kk, inner); /* bounds mode */
        }
        sig = exec_region(x, body, &term);
        if (sig != SIG_YIELD || !term || term->nopd != nop) INTERNAL(x, op, "the region must yield one value per operand");
        for (j = 0; j < nop; j++) {
            rv *acc = &x->v[body->args[2 * j + 1]];
            const rv *y = &x->v[term->opd[j]];
            if (y->n != M && y->n != 1) INTERNAL(x, op, "the region yields a value of another shape");
            if (y->n == M) copy_rv(x, op, acc, y);
            else {
                /* a constant yield: splat it over the lanes */
                uint64_t v0 = y->b[0];
                int u0 = lane_undef(y, 0);
                acc->has_u = 0;
                acc->has_s = 0; /* bounds mode: a constant is exact */
                for (i = 0; i < M; i++) acc->b[i] = v0;
                if (u0) { need_u(x, op, acc); memset(acc->u, 1, (size_t)M); }
            }
            acc->rank = orank;
            memcpy(acc->shape, oshape, sizeof oshape);
            acc->n = M;
            if (scan) {
                rv *res = &x->v[op->res[j]];
                if (acc->has_u && !res->has_u) need_u(x, op, res);
                for (i = 0; i < M; i++) {
                    int64_t o = i / inner, q = i % inner, dst = (o * n + kk) * inner + q;
                    res->b[dst] = acc->b[i];
                    if (res->has_u) res->u[dst] = (uint8_t)lane_undef(acc, i);
                }
                if (x->bo) bnd_scan_store(x, op, res, acc, n, kk, inner); /* bounds mode */
            }
        }
    }
    if (!scan)
        for (j = 0; j < nop; j++) {
            rv *res = &x->v[op->res[j]];
            copy_rv(x, op, res, &x->v[body->args[2 * j + 1]]);
            res->rank = op->rty[j].rank;
            memcpy(res->shape, op->rty[j].shape, sizeof res->shape);
        }
}

/* ---------------------------------------------------------------- assume, print */

static void exec_assume(X *x, const it_op *op)
{
    const rv *a = &x->v[op->opd[0]];
    int64_t i, st[IT_MAXRANK];
    int w = a->et == IT_PTR ? 64 : it_int_width(a->et);
    rm_strides(a->rank, a->shape, st);
    if (a->kind == IT_TILE) {
        use_defined(x, op, a, "assume");
        for (i = 0; i < a->n; i++) {
            uint64_t v = a->b[i];
            if (op->pred == IT_ASSUME_DIV_BY) {
                uint64_t dv = (uint64_t)op->ilist[0];
                if (op->ilist[2] >= 0 && op->ilist[2] < a->rank && op->ilist[1] > 0) {
                    int64_t c = (i / st[op->ilist[2]]) % a->shape[op->ilist[2]];
                    if (c % op->ilist[1] != 0) continue;
                }
                if ((v & (dv - 1u)) != 0 && x->ub) UB(x, op, "the assumption div_by<%lld> is false (element %lld)", (long long)dv, (long long)i);
            } else if (op->pred == IT_ASSUME_BOUNDED) {
                int64_t s = w ? sext(v, w) : (int64_t)v;
                if (it_is_float(a->et)) break;
                if (((!op->ilist[2] && s < op->ilist[0]) || (!op->ilist[3] && s > op->ilist[1])) && x->ub)
                    UB(x, op, "the assumption bounded<%lld, %lld> is false (element %lld is %lld)", (long long)op->ilist[0], (long long)op->ilist[1], (long long)i, (long long)s);
            } else if (op->pred == IT_ASSUME_SAME_ELEMENTS) {
                int64_t rem = i, first = 0;
                int d;
                for (d = 0; d < a->rank; d++) {
                    int64_t c = rem / st[d], g = d < op->nilist ? op->ilist[d] : 1;
                    rem %= st[d];
                    if (g <= 0) g = 1;
                    first += (c / g * g) * st[d];
                }
                if (a->b[first] != v && x->ub) UB(x, op, "the assumption same_elements is false (element %lld)", (long long)i);
            }
        }
    }
    copy_rv(x, op, &x->v[op->res[0]], a);
}

/* Appends to the launch's print buffer; when the text would not fit, it is cut at the end of the last
 * whole line that fits with a line saying so (once; nothing more is appended). */
static void pr_append(X *x, const char *s, size_t n)
{
    static const char cut[] = "[print_tko output cut here: it exceeds the launch's print buffer of %zu bytes]\n";
    er_interp_launch *l = x->l;
    size_t room;
    if (!l->prints || !l->prints_size || x->ptrunc) return;
    if (x->plen + n < l->prints_size) {
        memcpy(l->prints + x->plen, s, n);
        x->plen += n;
        l->prints[x->plen] = 0;
        return;
    }
    x->ptrunc = 1;
    room = sizeof cut + 24;
    if (l->prints_size <= room) { /* too small for the note: keep what fits */
        n = l->prints_size - 1 - x->plen;
        memcpy(l->prints + x->plen, s, n);
        x->plen += n;
        l->prints[x->plen] = 0;
        return;
    }
    room = l->prints_size - room; /* the text's share, the note after it */
    if (x->plen > room) x->plen = room;
    if (n > room - x->plen) n = room - x->plen;
    memcpy(l->prints + x->plen, s, n);
    x->plen += n;
    while (x->plen > 0 && l->prints[x->plen - 1] != '\n') x->plen--; /* back to a whole line */
    x->plen += (size_t)snprintf(l->prints + x->plen, l->prints_size - x->plen, cut, l->prints_size);
}

static void exec_print(X *x, const it_op *op)
{
    const char *f = op->str;
    int vi = 0;
    char buf[256];
    int nvals = op->nopd - op->has_token;
    /* the string holds MLIR escapes: \\, \", \n, \t, \XX */
    char fmt[1024];
    size_t fl = 0;
    while (*f && fl + 1 < sizeof fmt) {
        if (*f == '\\' && f[1]) {
            if (f[1] == 'n') { fmt[fl++] = '\n'; f += 2; }
            else if (f[1] == 't') { fmt[fl++] = '\t'; f += 2; }
            else if (f[1] == '\\' || f[1] == '"') { fmt[fl++] = f[1]; f += 2; }
            else if (f[2] && strchr("0123456789abcdefABCDEF", f[1]) && strchr("0123456789abcdefABCDEF", f[2])) {
                char h[3] = {f[1], f[2], 0};
                char c = (char)strtol(h, NULL, 16);
                if (c) fmt[fl++] = c;
                f += 3;
            } else { fmt[fl++] = *f++; }
        } else fmt[fl++] = *f++;
    }
    fmt[fl] = 0;
    f = fmt;
    while (*f) {
        if (*f != '%') {
            const char *q = strchr(f, '%');
            size_t n = q ? (size_t)(q - f) : strlen(f);
            pr_append(x, f, n);
            f += n;
            continue;
        }
        if (f[1] == '%') { pr_append(x, "%", 1); f += 2; continue; }
        {
            /* one conversion: flags, width, precision, length, conversion character */
            char spec[32];
            size_t k = 0;
            char conv;
            const rv *v;
            int64_t i;
            spec[k++] = *f++;
            while (*f && strchr("-+ #0123456789.", *f) && k < 20) spec[k++] = *f++;
            while (*f && strchr("hlLqjzt", *f)) f++;
            conv = *f ? *f++ : 'd';
            if (vi >= nvals) {
                pr_append(x, "<missing>", 9);
                continue;
            }
            v = &x->v[op->opd[vi++]];
            use_defined(x, op, v, "print_tko");
            if (v->n != 1) pr_append(x, "[", 1);
            for (i = 0; i < v->n; i++) {
                int n;
                char s2[40];
                memcpy(s2, spec, k);
                if (it_is_float(v->et)) {
                    uint64_t db = f_to_double_bits(v->et, v->b[i]);
                    double d;
                    memcpy(&d, &db, 8);
                    s2[k] = strchr("eEfFgGaA", conv) ? conv : 'f';
                    s2[k + 1] = 0;
                    n = snprintf(buf, sizeof buf, s2, d);
                } else {
                    int w = v->et == IT_PTR ? 64 : it_int_width(v->et);
                    s2[k] = 'l';
                    s2[k + 1] = 'l';
                    s2[k + 2] = strchr("uxXo", conv) ? conv : 'd';
                    s2[k + 3] = 0;
                    if (strchr("uxXo", conv)) n = snprintf(buf, sizeof buf, s2, (unsigned long long)(v->b[i] & wmask(w)));
                    else n = snprintf(buf, sizeof buf, s2, (long long)(w == 1 ? (long long)(v->b[i] & 1u) : sext(v->b[i], w)));
                }
                if (n > 0) pr_append(x, buf, (size_t)n < sizeof buf ? (size_t)n : sizeof buf - 1);
                if (i + 1 < v->n) pr_append(x, ", ", 2);
            }
            if (v->n != 1) pr_append(x, "]", 1);
        }
    }
    {
        it_type tt;
        memset(&tt, 0, sizeof tt);
        slot_tile(x, op, op->res[0], &tt, 0, NULL)->kind = IT_TOKEN;
    }
}

/* ---------------------------------------------------------------- the op loop */

static void set_token(X *x, const it_op *op, int k)
{
    it_type tt;
    memset(&tt, 0, sizeof tt);
    slot_tile(x, op, op->res[k], &tt, 0, NULL)->kind = IT_TOKEN;
}

static void set_scalar(X *x, const it_op *op, int k, uint64_t v)
{
    rv *r = slot_tile(x, op, op->res[k], &op->rty[k], 0, NULL);
    r->b[0] = v & (op->rty[k].et == IT_PTR ? ~UINT64_C(0) : wmask(it_int_width(op->rty[k].et)));
}

/* ---------------------------------------------------------------- Tile IR 13.3 / 13.4 ops (point mode) */

/* fpowi: x^n for an integer n, rounded once to nearest even into x's format.  f64: the math library's
 * pow of the exact binary64 exponent (the pre-check refuses an i64 exponent there).  Narrower formats:
 * pow in binary64 rounded to odd, then to nearest even into the format, which is one rounding (53 >= p + 2
 * for every narrower format); an exponent beyond 2^52 is replaced by one of its sign and parity at 2^52,
 * which gives the same result: there every |x| other than 0, 1 and infinity overflows or underflows. */
static uint64_t fpowi_one(X *x, const it_op *op, int fmt, uint64_t xb, int64_t n)
{
    uint64_t nb, o, xd;
    double nd;
    if (fmt != ER_FMT_F64 && (n > (INT64_C(1) << 52) || n < -(INT64_C(1) << 52)))
        n = (n < 0 ? -1 : 1) * ((INT64_C(1) << 52) + (n & 1));
    nd = (double)n; /* exact: |n| <= 2^53 here (f64 takes at most i32 exponents) */
    memcpy(&nb, &nd, 8);
    if (fmt == ER_FMT_F64) {
        if (er_math_binary(ER_MATH_POW, ER_FMT_F64, xb, nb, ER_RND_NEAREST_EVEN, &o, NULL) != ER_OK) INTERNAL(x, op, "the math library failed");
    } else {
        xd = er_convert(fmt, ER_FMT_F64, xb, ER_RND_NEAREST_EVEN, 0u).bits;
        if (er_math_binary(ER_MATH_POW, ER_FMT_F64, xd, nb, ER_RND_ODD, &o, NULL) != ER_OK) INTERNAL(x, op, "the math library failed");
        o = er_convert(ER_FMT_F64, fmt, o, ER_RND_NEAREST_EVEN, 0u).bits;
    }
    if (er_decode(fmt, o).cls == ER_CLASS_NAN) o = it_f_nan(fmt);
    return o;
}

/* atomic_rmw_tko's new value from the old one and the argument (pattern of et). */
static uint64_t rmw_apply(int mode, int et, uint64_t old, uint64_t arg)
{
    int w = it_is_int(et) ? it_int_width(et) : 0;
    switch (mode) {
    case RMW_AND: return old & arg;
    case RMW_OR: return old | arg;
    case RMW_XOR: return old ^ arg;
    case RMW_ADD: return (old + arg) & wmask(w);
    case RMW_ADDF: return it_f_add(et, old, arg, 0, ER_RND_NEAREST_EVEN, 0u);
    case RMW_MAX: return sext(old, w) >= sext(arg, w) ? old : arg;
    case RMW_MIN: return sext(old, w) <= sext(arg, w) ? old : arg;
    case RMW_UMAX: return (old & wmask(w)) >= (arg & wmask(w)) ? old : arg;
    case RMW_UMIN: return (old & wmask(w)) <= (arg & wmask(w)) ? old : arg;
    default: return arg; /* xchg */
    }
}

/* atomic_rmw_tko and atomic_cas_tko: blocks run one after another and a tile's lanes in row-major order,
 * each lane one indivisible read-modify-write (a lane whose address another lane of the tile also names
 * sees that lane's write).  The result is the old value; a masked-off lane's result is undefined. */
static void exec_atomic(X *x, const it_op *op)
{
    int cas = op->code == OP_ATOMIC_CAS;
    const rv *ptr = &x->v[op->opd[0]], *v1 = &x->v[op->opd[1]], *v2 = cas ? &x->v[op->opd[2]] : NULL;
    const rv *mask = op->has_mask ? &x->v[op->opd[cas ? 3 : 2]] : NULL;
    int et = ptr->pet, eb = it_elem_bytes(et);
    it_type t;
    rv *r;
    int64_t i;
    if (ptr->kind != IT_TILE || ptr->et != IT_PTR) INTERNAL(x, op, "not a pointer tile");
    memset(&t, 0, sizeof t);
    t.et = et;
    r = slot_tile(x, op, op->res[0], &t, ptr->rank, ptr->shape);
    for (i = 0; i < ptr->n; i++) {
        uint8_t *p;
        uint64_t old, nv;
        if (mask) {
            if (lane_undef(mask, i) && x->ub) UB(x, op, "the mask's lane %lld is undefined", (long long)i);
            if (!(mask->b[mask->n == 1 ? 0 : i] & 1u)) {
                need_u(x, op, r);
                r->u[i] = 1;
                r->b[i] = undef_bits(et);
                continue;
            }
        }
        if (lane_undef(ptr, i) && x->ub) UB(x, op, "the pointer's lane %lld is undefined", (long long)i);
        if ((lane_undef(v1, i) || (v2 && lane_undef(v2, i))) && x->ub) UB(x, op, "uses an undefined value lane (element %lld)", (long long)i);
        p = mem_at(x, op, ptr->b[i], eb, 0, 1);
        old = mem_read(p, eb, et);
        if (cas) {
            if (old != v1->b[v1->n == 1 ? 0 : i]) { r->b[i] = old; continue; } /* the patterns differ: nothing stored */
            nv = v2->b[v2->n == 1 ? 0 : i];
        } else {
            nv = rmw_apply(op->pred, et, old, v1->b[v1->n == 1 ? 0 : i]);
        }
        p = mem_at(x, op, ptr->b[i], eb, 1, 1);
        mem_write(p, eb, nv);
        r->b[i] = old;
    }
    set_token(x, op, 1);
}

/* atomic_red_view_tko: the tile reduced into the view's tile at the index, element by element in row-major
 * order, each one indivisible read-modify-write (mode as atomic_rmw_tko's); lanes outside the tensor touch
 * nothing; an index outside the index space is UB, as for load_view_tko. */
static void exec_atomic_red(X *x, const it_op *op)
{
    const rv *pv = &x->v[op->opd[0]], *val = &x->v[op->opd[1 + op->nidx]];
    int rank, d, eb = it_elem_bytes(pv->et);
    int64_t idx[IT_MAXRANK], tst[IT_MAXRANK], i, n = 1;
    if (pv->kind != IT_PV) INTERNAL(x, op, "not a partition_view");
    rank = op->nidx;
    for (d = 0; d < rank; d++) {
        const rv *iv = &x->v[op->opd[1 + d]];
        uint64_t raw = scalar_of(x, op, op->opd[1 + d], "a view index");
        int64_t v = sext(raw, it_int_width(iv->et)), ext = pv->vshape[pv->dim_map[d]], t = pv->tile[d];
        if (v < 0 || v >= (ext + t - 1) / t) UB(x, op, "view index %lld outside the index space [0, %lld) of dimension %d", (long long)v, (long long)((ext + t - 1) / t), d);
        idx[d] = v;
        n *= t;
    }
    if (val->n != n) INTERNAL(x, op, "the tile has %lld elements, the view's tile %lld", (long long)val->n, (long long)n);
    rm_strides(rank, pv->tile, tst);
    for (i = 0; i < n; i++) {
        int64_t off;
        uint8_t *p;
        if (!view_elem_off(pv, rank, idx, tst, i, &off)) continue;
        if (lane_undef(val, i) && x->ub) UB(x, op, "reduces an undefined lane (tile element %lld)", (long long)i);
        p = mem_at(x, op, pv->base + (uint64_t)(off * eb), eb, 1, 0);
        mem_write(p, eb, rmw_apply(op->pred, pv->et, mem_read(p, eb, pv->et), val->b[i]));
    }
    set_token(x, op, 0);
}

/* insert: the tile with the value written over its slice at the indices (slice numbers, as extract's);
 * a slice outside the tile is UB. */
static void exec_insert(X *x, const it_op *op)
{
    const rv *v = &x->v[op->opd[0]], *t = &x->v[op->opd[1]];
    int rank = t->rank, d;
    int64_t base[IT_MAXRANK], vst[IT_MAXRANK], tst[IT_MAXRANK], i;
    rv *r = slot_tile(x, op, op->res[0], &op->rty[0], rank, t->shape);
    for (d = 0; d < rank; d++) {
        uint64_t k = scalar_of(x, op, op->opd[2 + d], "insert's index");
        int64_t nslices = t->shape[d] / v->shape[d];
        if (k >= (uint64_t)nslices) UB(x, op, "insert slice %llu outside the %lld slices of dimension %d", (unsigned long long)k, (long long)nslices, d);
        base[d] = (int64_t)k * v->shape[d];
    }
    memcpy(r->b, t->b, (size_t)t->n * sizeof *r->b);
    if (t->has_u || v->has_u) {
        need_u(x, op, r);
        if (t->has_u) memcpy(r->u, t->u, (size_t)t->n);
    }
    rm_strides(rank, v->shape, vst);
    rm_strides(rank, t->shape, tst);
    for (i = 0; i < v->n; i++) {
        int64_t rem = i, dst = 0;
        for (d = 0; d < rank; d++) {
            dst += (base[d] + rem / vst[d]) * tst[d];
            rem %= vst[d];
        }
        r->b[dst] = v->b[i];
        if (r->has_u) r->u[dst] = (uint8_t)lane_undef(v, i);
    }
}

/* Bits of one element in pack / unpack (the pre-check allows 4, 8, 16, 32 and 64). */
static int pack_width(int et) { return it_is_int(et) ? it_int_width(et) : er_fmt_get(et).width; }

/* Tile IR 13.3 / 13.4: fpowi, the atomics (atomic_red_view_tko too), insert, the launch-dependency ops (gdc_*: no-ops on the host, where
 * launches do not overlap) and pack / unpack (a tile's patterns as little-endian bytes, row-major, two
 * 4-bit elements per byte with the lower-indexed one in the low nibble). */
static void exec_ops13(X *x, const it_op *op)
{
    int64_t i;
    switch (op->code) {
    case OP_FPOWI: {
        const rv *a = &x->v[op->opd[0]], *e = &x->v[op->opd[1]];
        rv *r = ew_out(x, op, a, e, NULL, a->et, 0);
        int w = it_int_width(e->et);
        ew_undef(x, op, r, a, e, NULL);
        for (i = 0; i < r->n; i++) r->b[i] = fpowi_one(x, op, a->et, a->b[a->n == 1 ? 0 : i], sext(e->b[e->n == 1 ? 0 : i], w));
        return;
    }
    case OP_ATOMIC_RMW: case OP_ATOMIC_CAS:
        exec_atomic(x, op);
        return;
    case OP_GDC:
        set_token(x, op, 0);
        return;
    case OP_ATOMIC_RED:
        exec_atomic_red(x, op);
        return;
    case OP_ALLOCA: {
        /* the op's own region after the globals, made on first use: zeros, and zeroed again at every run
         * of the op unless `global` (one region per launch, kept across blocks) */
        size_t k = x->l->nbuffers + x->l->nextra + (size_t)x->m->nglobals + (size_t)op->gindex;
        size_t bytes = (size_t)op->cn * (size_t)it_elem_bytes(op->rty[0].pet);
        mreg *mr = &x->mem[k];
        if (!mr->data) {
            mr->data = (uint8_t *)calloc(bytes + 1, 1);
            if (!mr->data) INTERNAL(x, op, "out of memory for an alloca of %zu bytes", bytes);
            mr->n = bytes;
        } else if (!op->reverse) {
            memset(mr->data, 0, bytes);
        }
        set_scalar(x, op, 0, (uint64_t)(k + 1) << IT_ADDR_SHIFT);
        return;
    }
    case OP_INSERT:
        exec_insert(x, op);
        return;
    case OP_PACK: case OP_UNPACK: {
        const rv *s = &x->v[op->opd[0]];
        const it_type *rt = &op->rty[0];
        rv *r = slot_tile(x, op, op->res[0], rt, rt->rank, rt->shape);
        int w = pack_width(op->code == OP_PACK ? s->et : rt->et);
        int64_t per = w >= 8 ? w / 8 : 1; /* bytes per element, or one byte per two nibbles */
        if (op->code == OP_PACK) {
            for (i = 0; i < r->n; i++) r->b[i] = 0;
            for (i = 0; i < s->n; i++) {
                uint64_t v = s->b[i] & wmask(w);
                int64_t k;
                if (w == 4) r->b[i / 2] |= v << (4 * (i & 1));
                else for (k = 0; k < per; k++) r->b[i * per + k] = (v >> (8 * k)) & 0xFFu;
            }
            if (s->has_u) {
                need_u(x, op, r); /* a byte holding an undefined element's bits is undefined */
                for (i = 0; i < s->n; i++)
                    if (s->u[i]) {
                        int64_t k;
                        if (w == 4) r->u[i / 2] = 1;
                        else for (k = 0; k < per; k++) r->u[i * per + k] = 1;
                    }
            }
        } else {
            for (i = 0; i < r->n; i++) {
                uint64_t v = 0;
                int64_t k;
                if (w == 4) v = (s->b[i / 2] >> (4 * (i & 1))) & 0xFu;
                else for (k = 0; k < per; k++) v |= (s->b[i * per + k] & 0xFFu) << (8 * k);
                r->b[i] = v;
            }
            if (s->has_u) {
                need_u(x, op, r);
                for (i = 0; i < r->n; i++) {
                    int64_t k;
                    r->u[i] = 0;
                    if (w == 4) r->u[i] = s->u[i / 2];
                    else for (k = 0; k < per; k++) r->u[i] |= s->u[i * per + k];
                }
            }
        }
        return;
    }
    default:
        INTERNAL(x, op, "not a Tile IR 13.3 / 13.4 op");
    }
}

/* Copy the operands of terminator term into the slots ids (through scratch copies: they may overlap). */
static void bind_values(X *x, const it_op *op, const it_op *term, const int *ids, int n)
{
    int i;
    rv *tmp;
    if (!term) {
        if (n) INTERNAL(x, op, "the region ends without yielding its %d values", n);
        return;
    }
    if (term->nopd != n) INTERNAL(x, op, "%s yields %d values, %d expected", term->name, term->nopd, n);
    if (n == 0) return;
    tmp = (rv *)calloc((size_t)n, sizeof *tmp);
    if (!tmp) INTERNAL(x, op, "out of memory");
    for (i = 0; i < n; i++) copy_rv(x, op, &tmp[i], &x->v[term->opd[i]]);
    for (i = 0; i < n; i++) {
        if (x->ntk) tk_clear(x, ids[i]);
        swap_rv(&tmp[i], &x->v[ids[i]]);
        free(tmp[i].b);
        free(tmp[i].u);
        free(tmp[i].slo);
        free(tmp[i].shi);
        free(tmp[i].sfl);
    }
    free(tmp);
}

static int exec_op(X *x, const it_op *op, const it_op **term)
{
    int k;
    if (x->fault) INTERNAL(x, op, "a fault injected by EXACTREF_INTERP_FAULT=internal");
    switch (op->code) {
    case OP_RETURN: *term = op; return SIG_RET;
    case OP_YIELD: *term = op; return SIG_YIELD;
    case OP_CONTINUE: *term = op; return SIG_CONT;
    case OP_BREAK: *term = op; return SIG_BREAK;
    case OP_CONSTANT: {
        rv *r = slot_tile(x, op, op->res[0], &op->rty[0], op->rty[0].rank, op->rty[0].shape);
        if (op->cn == r->n) memcpy(r->b, op->cdata, (size_t)op->cn * sizeof *r->b);
        else {
            int64_t i;
            for (i = 0; i < r->n; i++) r->b[i] = op->cdata[0]; /* a splat */
        }
        return SIG_END;
    }
    case OP_GET_GLOBAL:
        set_scalar(x, op, 0, (uint64_t)(x->l->nbuffers + x->l->nextra + 1 + (size_t)op->gindex) << IT_ADDR_SHIFT);
        return SIG_END;
    case OP_BLOCK_ID:
        for (k = 0; k < 3; k++) set_scalar(x, op, k, (uint64_t)x->bid[k]);
        return SIG_END;
    case OP_NUM_BLOCKS:
        for (k = 0; k < 3; k++) set_scalar(x, op, k, (uint64_t)x->grid[k]);
        return SIG_END;
    case OP_MAKE_TOKEN: case OP_JOIN_TOKENS:
        set_token(x, op, 0);
        return SIG_END;
    case OP_MAKE_TV: {
        rv *r = &x->v[op->res[0]];
        const it_type *t = &op->rty[0];
        uint64_t base = scalar_of(x, op, op->opd[0], "the base pointer");
        int d;
        r->kind = IT_TV;
        r->et = t->et;
        r->pet = t->pet;
        r->base = base;
        r->vrank = t->rank;
        for (d = 0; d < t->rank; d++) {
            int64_t sv, tv;
            if (op->shape[d].is_val) {
                const rv *s = &x->v[op->opd[op->shape[d].val]];
                sv = (int64_t)(scalar_of(x, op, op->opd[op->shape[d].val], "a dynamic shape") & wmask(it_int_width(s->et)));
            } else sv = op->shape[d].lit;
            if (op->strides[d].is_val) {
                const rv *s = &x->v[op->opd[op->strides[d].val]];
                tv = (int64_t)(scalar_of(x, op, op->opd[op->strides[d].val], "a dynamic stride") & wmask(it_int_width(s->et)));
            } else tv = op->strides[d].lit;
            if (sv <= 0 || tv <= 0) UB(x, op, "the tensor_view's shape and strides must be positive (dimension %d: shape %lld, stride %lld)", d, (long long)sv, (long long)tv);
            r->vshape[d] = sv;
            r->vstr[d] = tv;
        }
        if (t->rank == 0) mem_at(x, op, base, it_elem_bytes(t->et), 0, 0);
        return SIG_END;
    }
    case OP_MAKE_PV: {
        const rv *tv = &x->v[op->opd[0]];
        rv *r = &x->v[op->res[0]];
        const it_type *t = &op->rty[0];
        int d;
        uint64_t *b = r->b;
        uint8_t *u = r->u;
        int64_t cap = r->cap, ucap = r->ucap;
        if (tv->kind != IT_TV) INTERNAL(x, op, "not a tensor_view");
        double *slo = r->slo, *shi = r->shi;
        uint8_t *sfl = r->sfl;
        int64_t scap = r->scap;
        *r = *tv;
        r->b = b; r->u = u; r->cap = cap; r->ucap = ucap;
        r->slo = slo; r->shi = shi; r->sfl = sfl; r->scap = scap; r->has_s = 0;
        r->kind = IT_PV;
        for (d = 0; d < t->rank; d++) {
            r->tile[d] = t->shape[d];
            r->dim_map[d] = t->dim_map[d];
            r->tstep[d] = t->tstep[d];
        }
        r->padding = t->padding;
        r->vflav = t->vflav;
        r->sparse = t->sparse;
        return SIG_END;
    }
    case OP_INDEX_SHAPE: {
        const rv *pv = &x->v[op->opd[0]];
        int w = it_int_width(op->rty[0].et);
        for (k = 0; k < pv->vrank && k < op->nres; k++) {
            int64_t ext = pv->vshape[pv->dim_map[k]], c = (ext + pv->tile[k] - 1) / pv->tile[k];
            if (w < 64 && c > (int64_t)wmask(w - 1)) UB(x, op, "the index space's size %lld does not fit i%d", (long long)c, w);
            set_scalar(x, op, k, (uint64_t)c);
        }
        return SIG_END;
    }
    case OP_LOAD_VIEW: exec_view_access(x, op, 0); return SIG_END;
    case OP_STORE_VIEW: exec_view_access(x, op, 1); return SIG_END;
    case OP_LOAD_PTR: exec_ptr_access(x, op, 0); return SIG_END;
    case OP_STORE_PTR: exec_ptr_access(x, op, 1); return SIG_END;
    case OP_OFFSET: {
        const rv *p = &x->v[op->opd[0]], *o = &x->v[op->opd[1]];
        rv *r = ew_out(x, op, p, o, NULL, IT_PTR, p->pet);
        int w = it_int_width(o->et), eb = it_elem_bytes(p->pet);
        int64_t i;
        ew_undef(x, op, r, p, o, NULL);
        for (i = 0; i < r->n; i++) {
            int64_t off = sext(o->b[o->n == 1 ? 0 : i], w);
            uint64_t base = p->b[p->n == 1 ? 0 : i];
            __extension__ __int128 bytes = (__int128)off * eb;
            __extension__ __int128 sum = (__int128)base + bytes;
            if ((bytes > INT64_MAX || bytes < INT64_MIN || sum < 0 || sum > (__int128)UINT64_MAX) && x->ub && !lane_undef(r, i))
                UB(x, op, "the offset overflows (element %lld)", (long long)i);
            r->b[i] = (uint64_t)sum;
        }
        return SIG_END;
    }
    case OP_PTR_TO_INT: case OP_INT_TO_PTR: case OP_BITCAST: case OP_EXTI: case OP_TRUNCI: case OP_FTOF:
    case OP_FTOI: case OP_ITOF:
        exec_convert(x, op, &x->v[op->opd[0]], &op->rty[0]);
        return SIG_END;
    case OP_BROADCAST: case OP_RESHAPE: case OP_PERMUTE: case OP_EXTRACT: case OP_CAT:
        exec_shape(x, op);
        return SIG_END;
    case OP_SELECT: {
        const rv *c = &x->v[op->opd[0]], *a = &x->v[op->opd[1]], *b = &x->v[op->opd[2]];
        rv *r = ew_out(x, op, c, a, b, a->et, a->pet);
        int64_t i;
        if (c->has_u || a->has_u || b->has_u) need_u(x, op, r);
        for (i = 0; i < r->n; i++) {
            int s = (CV(i) & 1u) != 0;
            r->b[i] = s ? AV(i) : BV(i);
            if (r->has_u) r->u[i] = (uint8_t)(lane_undef(c, i) | (s ? lane_undef(a, i) : lane_undef(b, i)));
        }
        return SIG_END;
    }
    case OP_IOTA: {
        rv *r = slot_tile(x, op, op->res[0], &op->rty[0], op->rty[0].rank, op->rty[0].shape);
        int64_t i;
        for (i = 0; i < r->n; i++) r->b[i] = (uint64_t)i & wmask(it_int_width(r->et));
        return SIG_END;
    }
    case OP_ADDI: case OP_SUBI: case OP_MULI: case OP_DIVI: case OP_REMI: case OP_MINI: case OP_MAXI:
    case OP_MULHII: case OP_SHLI: case OP_SHRI: case OP_ANDI: case OP_ORI: case OP_XORI:
        exec_int_binary(x, op, &x->v[op->opd[0]], &x->v[op->opd[1]]);
        return SIG_END;
    case OP_NEGI: case OP_ABSI: {
        const rv *a = &x->v[op->opd[0]];
        rv *r = ew_out(x, op, a, NULL, NULL, a->et, 0);
        int w = it_int_width(a->et);
        int64_t i;
        ew_undef(x, op, r, a, NULL, NULL);
        for (i = 0; i < r->n; i++) {
            uint64_t p = a->b[i] & wmask(w);
            int neg = op->code == OP_NEGI || sext(p, w) < 0;
            uint64_t o = neg ? (~p + 1u) & wmask(w) : p;
            if (op->code == OP_NEGI && (op->ovf & IT_NSW) && p == (UINT64_C(1) << (w - 1)) && !lane_undef(a, i))
                UB(x, op, "negation broke the no_signed_wrap promise (element %lld)", (long long)i);
            r->b[i] = o;
        }
        return SIG_END;
    }
    case OP_CMPI: case OP_CMPF:
        exec_cmp(x, op, &x->v[op->opd[0]], &x->v[op->opd[1]]);
        return SIG_END;
    case OP_ADDF: case OP_SUBF: case OP_MULF: case OP_DIVF: case OP_MAXF: case OP_MINF: case OP_REMF:
    case OP_ATAN2: case OP_POW:
        exec_float(x, op, &x->v[op->opd[0]], &x->v[op->opd[1]], NULL);
        return SIG_END;
    case OP_FMA:
        exec_float(x, op, &x->v[op->opd[0]], &x->v[op->opd[1]], &x->v[op->opd[2]]);
        return SIG_END;
    case OP_SQRT: case OP_FLOOR: case OP_CEIL: case OP_NEGF: case OP_ABSF: case OP_EXP: case OP_EXP2:
    case OP_LOG: case OP_LOG2: case OP_RSQRT: case OP_TANH: case OP_SINH: case OP_COSH: case OP_SIN:
    case OP_COS: case OP_TAN:
        exec_float(x, op, &x->v[op->opd[0]], NULL, NULL);
        return SIG_END;
    case OP_MMAF: case OP_MMAI: case OP_MMAF_SCALED:
        exec_mma(x, op);
        return SIG_END;
    case OP_FPOWI: case OP_ATOMIC_RMW: case OP_ATOMIC_CAS: case OP_GDC: case OP_PACK: case OP_UNPACK:
    case OP_ATOMIC_RED: case OP_INSERT: case OP_ALLOCA:
        exec_ops13(x, op);
        return SIG_END;
    case OP_REDUCE: case OP_SCAN:
        exec_reduce(x, op);
        return SIG_END;
    case OP_ASSUME:
        exec_assume(x, op);
        return SIG_END;
    case OP_PRINT:
        exec_print(x, op);
        return SIG_END;
    case OP_IF: {
        uint64_t c = scalar_of(x, op, op->opd[0], "the if condition");
        const it_op *t = NULL;
        int sig;
        if (!(c & 1u) && op->nregion < 2) {
            if (op->nres) INTERNAL(x, op, "an if with results needs an else region");
            return SIG_END;
        }
        sig = exec_region(x, op->region[(c & 1u) ? 0 : 1], &t);
        if (sig == SIG_YIELD || sig == SIG_END) {
            bind_values(x, op, t, op->res, op->nres);
            return SIG_END;
        }
        *term = t;
        return sig;
    }
    case OP_FOR: {
        const it_region *body = op->region[0];
        const rv *lbv = &x->v[op->opd[0]];
        int w = it_int_width(lbv->et), uns = op->is_unsigned, i;
        uint64_t lb = scalar_of(x, op, op->opd[0], "the lower bound") & wmask(w);
        uint64_t ubv = scalar_of(x, op, op->opd[1], "the upper bound") & wmask(w);
        uint64_t st = scalar_of(x, op, op->opd[2], "the step") & wmask(w);
        __extension__ __int128 iv, hi, s;
        int nit = body->nargs - 1;
        iv = uns ? (__int128)lb : (__int128)sext(lb, w);
        hi = uns ? (__int128)ubv : (__int128)sext(ubv, w);
        s = uns ? (__int128)st : (__int128)sext(st, w);
        if (s <= 0) UB(x, op, "the step %lld is not positive", (long long)s);
        for (i = 0; i < nit; i++) copy_rv(x, op, &x->v[body->args[1 + i]], &x->v[op->opd[3 + i]]);
        for (; iv < hi; iv += s) {
            const it_op *t = NULL;
            int sig;
            rv *ivr;
            step(x, op);
            ivr = slot_tile(x, op, body->args[0], &body->aty[0], 0, NULL);
            ivr->b[0] = (uint64_t)iv & wmask(w);
            sig = exec_region(x, body, &t);
            if (sig == SIG_RET) { *term = t; return SIG_RET; }
            if (sig == SIG_BREAK) INTERNAL(x, op, "break inside a for");
            if (sig == SIG_CONT || nit) bind_values(x, op, t, body->args + 1, nit);
        }
        for (i = 0; i < op->nres; i++) copy_rv(x, op, &x->v[op->res[i]], &x->v[body->args[1 + i]]);
        return SIG_END;
    }
    case OP_LOOP: {
        const it_region *body = op->region[0];
        int nit = body->nargs, i;
        for (i = 0; i < nit; i++) copy_rv(x, op, &x->v[body->args[i]], &x->v[op->opd[i]]);
        for (;;) {
            const it_op *t = NULL;
            int sig;
            step(x, op);
            sig = exec_region(x, body, &t);
            if (sig == SIG_RET) { *term = t; return SIG_RET; }
            if (sig == SIG_BREAK) {
                bind_values(x, op, t, op->res, op->nres);
                return SIG_END;
            }
            bind_values(x, op, t, body->args, nit);
        }
    }
    default:
        INTERNAL(x, op, "operation '%s' reached the executor unchecked", op->name);
    }
    return SIG_END;
}

static int exec_region(X *x, const it_region *r, const it_op **term)
{
    int i;
    *term = NULL;
    for (i = 0; i < r->nops; i++) {
        int sig;
        work(x, &r->ops[i]);
        sig = exec_op(x, &r->ops[i], term);
        if (x->bo && sig == SIG_END) bnd_after(x, &r->ops[i]); /* bounds mode */
        if (sig != SIG_END) return sig;
    }
    return SIG_END;
}

/* ---------------------------------------------------------------- launch */

const char *er_interp_kind_name(int kind)
{
    switch (kind) {
    case ER_INTERP_OK: return "ok";
    case ER_INTERP_UNSUPPORTED: return "interp.unsupported_op";
    case ER_INTERP_UB: return "interp.ub";
    case ER_INTERP_BAD_LAUNCH: return "interp.bad_launch";
    case ER_INTERP_UNDECIDED: return "interp.undecided";
    default: return "interp.internal";
    }
}

static er_status bad_launch(er_interp_launch *l, char *msg, size_t msz, const char *file, const char *fmt, ...);

/* The launch's extra buffers (list-of-arrays elements): present when counted, under 1 TiB each. */
static er_status check_extra(er_interp_launch *l, const er_interp_module *m, char *msg, size_t msz)
{
    size_t j;
    if (l->nextra && !l->extra) return bad_launch(l, msg, msz, m->filename, "the launch counts %zu extra buffers but gives none", l->nextra);
    if (l->nextra > 4096) return bad_launch(l, msg, msz, m->filename, "%zu extra buffers are more than 4096", l->nextra);
    for (j = 0; j < l->nextra; j++) {
        if (!l->extra[j].data && l->extra[j].nbytes) return bad_launch(l, msg, msz, m->filename, "extra buffer %zu has no data", j);
        if (l->extra[j].nbytes >= (UINT64_C(1) << IT_ADDR_SHIFT)) return bad_launch(l, msg, msz, m->filename, "extra buffer %zu is larger than 1 TiB", j);
    }
    return ER_OK;
}

/* Extra buffer j at (nbuffers + j + 1) * 2^40, after the parameters' buffers. */
static void bind_extra(X *x, er_interp_launch *l)
{
    size_t j;
    for (j = 0; j < l->nextra; j++) {
        mreg *r = &x->mem[l->nbuffers + j];
        r->data = (uint8_t *)l->extra[j].data;
        r->n = l->extra[j].nbytes;
        r->stored = &l->extra[j].stored;
        l->extra[j].stored = 0;
    }
}

void er_interp_launch_init(er_interp_launch *l)
{
    if (!l) return;
    memset(l, 0, sizeof *l);
    l->grid[0] = l->grid[1] = l->grid[2] = 1;
    l->ub_checks = 1;
}

struct er_interp_prepared {
    const er_interp_module *m;
    const it_entry *e;
    int grid[3];
};

static er_status kind_status(int kind)
{
    switch (kind) {
    case ER_INTERP_OK: return ER_OK;
    case ER_INTERP_UNSUPPORTED: return ER_EUNSUPPORTED;
    case ER_INTERP_UB: case ER_INTERP_BAD_LAUNCH: case ER_INTERP_UNDECIDED: return ER_EINVAL;
    default: return ER_EDEVICE;
    }
}

static er_status bad_launch(er_interp_launch *l, char *msg, size_t msz, const char *file, const char *fmt, ...)
{
    va_list ap;
    char buf[512];
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    it_msg(msg, msz, file, NULL, "%s", buf);
    l->kind = ER_INTERP_BAD_LAUNCH;
    return ER_EINVAL;
}

static int param_format(const it_type *t, int *kind)
{
    if (t->kind == IT_TILE && t->rank == 0 && t->et == IT_PTR) {
        *kind = ER_INTERP_PARAM_POINTER;
        if (t->pet == IT_I1) return ER_INTERP_FMT_I1;
        if (it_is_float(t->pet)) return t->pet;
        switch (t->pet) {
        case IT_I8: return ER_FMT_I8;
        case IT_I16: return ER_FMT_I16;
        case IT_I32: return ER_FMT_I32;
        case IT_I64: return ER_FMT_I64;
        default: *kind = ER_INTERP_PARAM_OTHER; return -1;
        }
    }
    if (t->kind == IT_TILE && t->rank == 0 && (it_is_int(t->et) || it_is_float(t->et))) {
        *kind = ER_INTERP_PARAM_SCALAR;
        if (t->et == IT_I1) return ER_INTERP_FMT_I1;
        if (t->et == IT_I4) return -4;
        if (it_is_float(t->et)) return t->et;
        return t->et == IT_I8 ? ER_FMT_I8 : t->et == IT_I16 ? ER_FMT_I16 : t->et == IT_I32 ? ER_FMT_I32 : ER_FMT_I64;
    }
    *kind = ER_INTERP_PARAM_OTHER;
    return -1;
}

int er_interp_param_count(const er_interp_module *m, const char *kernel)
{
    const it_entry *e = it_find_entry(m, kernel);
    return e ? e->nparams : -1;
}

er_status er_interp_param_get(const er_interp_module *m, const char *kernel, int i, er_interp_param *p)
{
    const it_entry *e = it_find_entry(m, kernel);
    if (!e || !p || i < 0 || i >= e->nparams) return ER_EINVAL;
    p->format = param_format(&e->pty[i], &p->kind);
    snprintf(p->name, sizeof p->name, "%s", e->pname[i]);
    return ER_OK;
}

static er_status run(const er_interp_module *m, const it_entry *e, const int grid[3], er_interp_launch *l, char *msg,
                     size_t msz, const it_bopts *bo, er_interp_bounds *bout)
{
    X *x;
    size_t nb = 0, ns = 0, k;
    int i, g;
    volatile er_status st = ER_OK;
    volatile int ok = 0;
    l->kind = ER_INTERP_OK;
    l->steps = 0;
    if (msg && msz) msg[0] = 0;
    if (l->prints && l->prints_size) l->prints[0] = 0;
    l->work = 0;
    for (i = 0; i < 3; i++)
        if (grid[i] < 0 || grid[i] > (1 << 24) - 1) return bad_launch(l, msg, msz, m->filename, "kernel @%s: grid axis %d is %d (1 to 16777215 blocks, the dialect's limit)", e->name, i, grid[i]);
    {
        /* every block counts one unit of work: a grid with more blocks than the limit cannot finish */
        int64_t wl = l->work_limit > 0 ? l->work_limit : ER_INTERP_DEFAULT_WORK_LIMIT;
        int64_t blocks = (int64_t)(grid[0] ? grid[0] : 1) * (grid[1] ? grid[1] : 1);
        if (blocks > wl || blocks > wl / (grid[2] ? grid[2] : 1))
            return bad_launch(l, msg, msz, m->filename, "kernel @%s: a grid of %d x %d x %d blocks is more than the work limit of %lld operations (the launch's work_limit raises it)",
                              e->name, grid[0] ? grid[0] : 1, grid[1] ? grid[1] : 1, grid[2] ? grid[2] : 1, (long long)wl);
    }
    /* bind the parameters */
    for (i = 0; i < e->nparams; i++) {
        int kind, fmt = param_format(&e->pty[i], &kind);
        if (kind == ER_INTERP_PARAM_POINTER) {
            if (nb >= l->nbuffers) { nb++; continue; }
            if (l->buffers[nb].format != fmt)
                return bad_launch(l, msg, msz, m->filename, "kernel @%s: parameter %%%s points to %s but buffer %zu holds %s", e->name, e->pname[i],
                                  fmt == ER_INTERP_FMT_I1 ? "i1" : er_format_name(fmt), nb,
                                  l->buffers[nb].format == ER_INTERP_FMT_I1 ? "i1" : er_format_name(l->buffers[nb].format) ? er_format_name(l->buffers[nb].format) : "an unknown format");
            if (!l->buffers[nb].data && l->buffers[nb].nbytes) return bad_launch(l, msg, msz, m->filename, "buffer %zu has no data", nb);
            if (l->buffers[nb].nbytes >= (UINT64_C(1) << IT_ADDR_SHIFT)) return bad_launch(l, msg, msz, m->filename, "buffer %zu is larger than 1 TiB", nb);
            nb++;
        } else if (kind == ER_INTERP_PARAM_SCALAR) {
            if (ns < l->nscalars && l->scalars) {
                uint64_t v = l->scalars[ns];
                int w = it_is_int(e->pty[i].et) ? it_int_width(e->pty[i].et) : er_fmt_get(e->pty[i].et).width;
                if (w < 64 && (v >> w) != 0)
                    return bad_launch(l, msg, msz, m->filename, "kernel @%s: scalar %zu (%%%s) 0x%llx has bits above its type's %d", e->name, ns, e->pname[i], (unsigned long long)v, w);
                if (it_is_float(e->pty[i].et) && er_check_pattern(e->pty[i].et, v) != ER_OK)
                    return bad_launch(l, msg, msz, m->filename, "kernel @%s: scalar %zu (%%%s) is not a pattern of %s", e->name, ns, e->pname[i], er_format_name(e->pty[i].et));
            }
            ns++;
        } else {
            return bad_launch(l, msg, msz, m->filename, "kernel @%s: parameter %%%s has a type no launch can pass (only pointers and scalars)", e->name, e->pname[i]);
        }
    }
    if (nb != l->nbuffers || ns != l->nscalars)
        return bad_launch(l, msg, msz, m->filename, "kernel @%s takes %zu buffer%s and %zu scalar%s; the launch gives %zu and %zu", e->name, nb,
                          nb == 1 ? "" : "s", ns, ns == 1 ? "" : "s", l->nbuffers, l->nscalars);
    if ((st = check_extra(l, m, msg, msz)) != ER_OK) return st;
    x = (X *)calloc(1, sizeof *x);
    if (!x) { l->kind = ER_INTERP_INTERNAL; it_msg(msg, msz, m->filename, NULL, "out of memory"); return ER_ENOMEM; }
    x->m = m;
    x->e = e;
    x->l = l;
    x->msg = msg;
    x->msz = msz;
    x->ub = l->ub_checks != 0;
    x->bo = bo;
    {
        const char *f = getenv("EXACTREF_INTERP_FAULT");
        x->fault = f && !strcmp(f, "internal");
    }
    x->limit = l->step_limit > 0 ? l->step_limit : ER_INTERP_DEFAULT_STEP_LIMIT;
    x->wlimit = l->work_limit > 0 ? l->work_limit : ER_INTERP_DEFAULT_WORK_LIMIT;
    x->nv = e->nvalues;
    x->v = (rv *)calloc((size_t)(e->nvalues + 1), sizeof(rv));
    if (bo) x->tk = (it_taint *)calloc((size_t)(e->nvalues + 1), sizeof(it_taint));
    x->nmem = (int)(l->nbuffers + l->nextra) + m->nglobals + e->nalloca;
    x->mem = (mreg *)calloc((size_t)x->nmem + 1, sizeof(mreg));
    x->gdata = (uint8_t **)calloc((size_t)m->nglobals + 1, sizeof(uint8_t *));
    if (!x->v || !x->mem || !x->gdata || (bo && !x->tk)) {
        st = ER_ENOMEM;
        l->kind = ER_INTERP_INTERNAL;
        it_msg(msg, msz, m->filename, NULL, "out of memory");
        goto done;
    }
    for (k = 0; k < l->nbuffers; k++) {
        x->mem[k].data = (uint8_t *)l->buffers[k].data;
        x->mem[k].n = l->buffers[k].nbytes;
        x->mem[k].stored = &l->buffers[k].stored;
        l->buffers[k].stored = 0;
    }
    bind_extra(x, l);
    for (g = 0; g < m->nglobals; g++) {
        const it_global *gl = &m->globals[g];
        int eb = it_elem_bytes(gl->ty.et);
        int64_t j;
        x->gdata[g] = (uint8_t *)calloc((size_t)(gl->n * (eb ? eb : 1)) + 1, 1);
        if (!x->gdata[g]) {
            st = ER_ENOMEM;
            l->kind = ER_INTERP_INTERNAL;
            it_msg(msg, msz, m->filename, NULL, "out of memory");
            goto done;
        }
        for (j = 0; j < gl->n; j++) mem_write(x->gdata[g] + j * eb, eb, gl->data[gl->splat ? 0 : j]);
        x->mem[l->nbuffers + l->nextra + (size_t)g].data = x->gdata[g];
        x->mem[l->nbuffers + l->nextra + (size_t)g].n = (size_t)(gl->n * eb);
    }
    if (bo && bnd_mem_setup(x) != 0) {
        st = ER_ENOMEM;
        l->kind = ER_INTERP_INTERNAL;
        it_msg(msg, msz, m->filename, NULL, "out of memory");
        goto done;
    }
    x->grid[0] = grid[0] ? grid[0] : 1;
    x->grid[1] = grid[1] ? grid[1] : 1;
    x->grid[2] = grid[2] ? grid[2] : 1;
    if (setjmp(x->jb) == 0) {
        for (x->bid[2] = 0; x->bid[2] < x->grid[2]; x->bid[2]++)
            for (x->bid[1] = 0; x->bid[1] < x->grid[1]; x->bid[1]++)
                for (x->bid[0] = 0; x->bid[0] < x->grid[0]; x->bid[0]++) {
                    const it_op *t = NULL;
                    size_t bi = 0, si = 0;
                    work(x, NULL);
                    if (bo) bnd_block_start(x);
                    for (i = 0; i < e->nparams; i++) {
                        int kind;
                        rv *r;
                        param_format(&e->pty[i], &kind);
                        r = slot_tile(x, NULL, e->params[i], &e->pty[i], 0, NULL);
                        if (kind == ER_INTERP_PARAM_POINTER) r->b[0] = (uint64_t)(bi++ + 1) << IT_ADDR_SHIFT;
                        else r->b[0] = l->scalars[si++];
                    }
                    exec_region(x, &e->body, &t);
                }
        ok = 1;
    }
    if (!ok) {
        l->kind = x->kind;
        st = kind_status(x->kind);
    }
    l->steps = x->steps;
    l->work = x->work;
    if (ok && bout && bnd_mem_out(x, bout) != 0) {
        st = ER_ENOMEM;
        l->kind = ER_INTERP_INTERNAL;
        it_msg(msg, msz, m->filename, NULL, "out of memory");
    }
done:
    if (x->mem) bnd_mem_free(x);
    free(x->mlo);
    free(x->mhi);
    free(x->mfl);
    if (x->v)
        for (i = 0; i < x->nv; i++) {
            free(x->v[i].b);
            free(x->v[i].u);
            free(x->v[i].slo);
            free(x->v[i].shi);
            free(x->v[i].sfl);
            if (x->tk) {
                free(x->tk[i].el);
                free(x->tk[i].seq);
                free(x->tk[i].tl);
                free(x->tk[i].th);
                free(x->tk[i].tf);
            }
        }
    free(x->tk);
    if (x->gdata)
        for (g = 0; g < m->nglobals; g++) free(x->gdata[g]);
    if (x->mem)
        for (g = 0; g < e->nalloca; g++) free(x->mem[l->nbuffers + l->nextra + (size_t)m->nglobals + (size_t)g].data);
    free(x->gdata);
    free(x->v);
    free(x->mem);
    free(x);
    return st;
}

er_status er_interp_prepare(const er_interp_module *m, const char *kernel, const int grid[3], er_interp_prepared **out,
                            char *msg, size_t msg_size)
{
    const it_entry *e;
    er_interp_prepared *p;
    if (msg && msg_size) msg[0] = 0;
    if (!m || !kernel || !out) return ER_EINVAL;
    *out = NULL;
    e = it_find_entry(m, kernel);
    if (!e) {
        it_msg(msg, msg_size, m->filename, NULL, "no entry @%s in the module", kernel[0] == '@' ? kernel + 1 : kernel);
        return ER_EINVAL;
    }
    if (er_interp_first_unsupported(m, kernel, msg, msg_size) == 1) return ER_EUNSUPPORTED;
    p = (er_interp_prepared *)calloc(1, sizeof *p);
    if (!p) return ER_ENOMEM;
    p->m = m;
    p->e = e;
    p->grid[0] = grid && grid[0] > 0 ? grid[0] : 1;
    p->grid[1] = grid && grid[1] > 0 ? grid[1] : 1;
    p->grid[2] = grid && grid[2] > 0 ? grid[2] : 1;
    *out = p;
    return ER_OK;
}

er_status er_interp_run(er_interp_prepared *p, er_interp_launch *l, char *msg, size_t msg_size)
{
    if (!p || !l) return ER_EINVAL;
    if (l->prints && l->prints_size) l->prints[0] = 0;
    return run(p->m, p->e, p->grid, l, msg, msg_size, NULL, NULL);
}

void er_interp_prepared_free(er_interp_prepared *p) { free(p); }

er_status er_interp_kernel(const er_interp_module *m, const char *kernel, er_interp_launch *l, char *msg, size_t msg_size)
{
    const it_entry *e;
    int grid[3];
    if (msg && msg_size) msg[0] = 0;
    if (!m || !kernel || !l) return ER_EINVAL;
    if (l->prints && l->prints_size) l->prints[0] = 0;
    l->steps = 0;
    e = it_find_entry(m, kernel);
    if (!e) {
        l->kind = ER_INTERP_BAD_LAUNCH;
        it_msg(msg, msg_size, m->filename, NULL, "no entry @%s in the module", kernel[0] == '@' ? kernel + 1 : kernel);
        return ER_EINVAL;
    }
    if (er_interp_first_unsupported(m, kernel, msg, msg_size) == 1) {
        l->kind = ER_INTERP_UNSUPPORTED;
        return ER_EUNSUPPORTED;
    }
    grid[0] = l->grid[0] > 0 ? l->grid[0] : 1;
    grid[1] = l->grid[1] > 0 ? l->grid[1] : 1;
    grid[2] = l->grid[2] > 0 ? l->grid[2] : 1;
    return run(m, e, grid, l, msg, msg_size, NULL, NULL);
}

/* ---------------------------------------------------------------- bounds mode (its hooks' bodies) */

#include "interp_bounds_exec.h"

er_status it_run_bounds(const er_interp_module *m, const char *kernel, er_interp_launch *l, const it_bopts *o,
                        er_interp_bounds *out, char *msg, size_t msg_size)
{
    const it_entry *e = it_find_entry(m, kernel);
    int grid[3];
    if (!e) return ER_EINVAL;
    grid[0] = l->grid[0] > 0 ? l->grid[0] : 1;
    grid[1] = l->grid[1] > 0 ? l->grid[1] : 1;
    grid[2] = l->grid[2] > 0 ? l->grid[2] : 1;
    return run(m, e, grid, l, msg, msg_size, o, out);
}
