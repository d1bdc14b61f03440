/* interp_check.c: the pre-check: the first instruction, format or construct the interpreter does not model
 * (or that the dialect does not allow), said as the refusal says it. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "interp_impl.h"
#include "interp_bounds.h"
#include "exactref/core/er_round.h"

typedef struct C {
    const er_interp_module *m;
    const it_entry *e;
    char *msg;
    size_t msz;
    int found;
    int bounds; /* bounds mode: rounding<approx>/<full> and fast_acc are device freedoms it models */
} C;

static int bad(C *c, const it_op *op, const char *fmt, ...)
{
    char buf[512];
    va_list ap;
    if (c->found) return 1;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    it_msg(c->msg, c->msz, c->m->filename, op, "%s", buf);
    c->found = 1;
    return 1;
}

static const it_type *VT(C *c, const it_op *op, int k) { return c->e->vty[op->opd[k]]; }

static int same(const it_type *a, const it_type *b)
{
    int i;
    if (a->kind != b->kind || a->et != b->et || a->rank != b->rank) return 0;
    if (a->et == IT_PTR && a->pet != b->pet) return 0;
    for (i = 0; i < a->rank; i++)
        if (a->shape[i] != b->shape[i]) return 0;
    return 1;
}
static int same_shape(const it_type *a, const it_type *b)
{
    int i;
    if (a->kind != IT_TILE || b->kind != IT_TILE || a->rank != b->rank) return 0;
    for (i = 0; i < a->rank; i++)
        if (a->shape[i] != b->shape[i]) return 0;
    return 1;
}
static int is_tile(const it_type *t) { return t->kind == IT_TILE; }
static int scalar_int(const it_type *t) { return t->kind == IT_TILE && t->rank == 0 && it_is_int(t->et); }
static int64_t numel(const it_type *t) { return it_numel(t); }

static int type_unmodelled(C *c, const it_op *op, const it_type *t)
{
    if (t->et == IT_UNMODELLED || (t->et == IT_PTR && t->pet == IT_UNMODELLED))
        return bad(c, op, "format '%s' is not modelled by the interpreter", t->uname);
    return 0;
}

static const char *rname(int r)
{
    static const char *n[] = {"nearest_even", "nearest_away", "zero", "negative_inf", "positive_inf"};
    if (r >= 0 && r <= 4) return n[r];
    if (r == IT_RND_APPROX) return "approx";
    if (r == IT_RND_FULL) return "full";
    if (r == IT_RND_NEAREST_INT_TO_ZERO) return "nearest_int_to_zero";
    return "default";
}

static int is_ew(int code)
{
    switch (code) {
    case OP_ADDI: case OP_SUBI: case OP_MULI: case OP_NEGI: case OP_DIVI: case OP_REMI: case OP_MINI: case OP_MAXI:
    case OP_MULHII: case OP_ABSI: case OP_SHLI: case OP_SHRI: case OP_ANDI: case OP_ORI: case OP_XORI: case OP_CMPI:
    case OP_EXTI: case OP_TRUNCI: case OP_ADDF: case OP_SUBF: case OP_MULF: case OP_DIVF: case OP_FMA: case OP_SQRT:
    case OP_REMF: case OP_FLOOR: case OP_CEIL: case OP_NEGF: case OP_ABSF: case OP_MAXF: case OP_MINF: case OP_CMPF:
    case OP_FTOF: case OP_FTOI: case OP_ITOF: case OP_EXP: case OP_EXP2: case OP_LOG: case OP_LOG2: case OP_RSQRT:
    case OP_TANH: case OP_SINH: case OP_COSH: case OP_SIN: case OP_COS: case OP_TAN: case OP_ATAN2: case OP_POW:
    case OP_SELECT: case OP_BITCAST: case OP_CONSTANT: case OP_YIELD:
        return 1;
    default:
        return 0;
    }
}

static int check_region(C *c, const it_region *r, int in_loop, int in_for, int in_reduce);

/* The ops that take rounding<approx> and rounding<full>. */
static int approx_op(int code)
{
    return code == OP_DIVF || code == OP_EXP || code == OP_EXP2 || code == OP_RSQRT || code == OP_SQRT || code == OP_TANH;
}

/* Bits of an element in pack / unpack (0: not packable). */
static int pack_bits(const it_type *t)
{
    if (it_is_int(t->et)) return t->et == IT_I1 ? 0 : it_int_width(t->et);
    if (it_is_float(t->et)) {
        int w = er_fmt_get(t->et).width;
        return (w == 4 || w == 8 || w == 16 || w == 32 || w == 64) && t->et != ER_FMT_TF32 ? w : 0;
    }
    return 0;
}

/* Tile IR 13.3 / 13.4 ops (fpowi, the atomics, gdc, pack, unpack): 1 and the message when refused. */
static int check_ops13(C *c, const it_op *op)
{
    const it_type *rt = op->nres ? &op->rty[0] : NULL;
    int n = op->nopd - op->has_token, i;
    switch (op->code) {
    case OP_FPOWI: {
        const it_type *x = VT(c, op, 0), *e = VT(c, op, 1);
        if (n != 2 || !is_tile(x) || !it_is_float(x->et) || !same(x, rt) || !is_tile(e) || !it_is_int(e->et) || e->et == IT_I1 || e->et == IT_I4 ||
            !same_shape(x, e))
            return bad(c, op, "expects a float tile and an integer exponent tile of its shape");
        if (x->et == ER_FMT_F64 && e->et == IT_I64) return bad(c, op, "an i64 exponent with f64 is not modelled (it is exact in binary64 only up to 2^53)");
        if (op->rnd != IT_RND_DEFAULT || op->ftz) return bad(c, op, "takes no rounding or flush_to_zero attribute");
        return 0;
    }
    case OP_ATOMIC_RMW: case OP_ATOMIC_CAS: {
        const it_type *p = VT(c, op, 0), *v = VT(c, op, 1);
        int nv = op->code == OP_ATOMIC_CAS ? 2 : 1, et;
        if (!is_tile(p) || p->et != IT_PTR || !is_tile(v) || !same_shape(p, v) || v->et != p->pet || !same(v, rt))
            return bad(c, op, "expects pointers and values of the pointee's type and the pointers' shape, and a result of the values' type");
        for (i = 1; i <= nv; i++)
            if (!same(VT(c, op, i), v)) return bad(c, op, "the values must have one type");
        if (op->has_mask && (VT(c, op, 1 + nv)->et != IT_I1 || !same_shape(VT(c, op, 1 + nv), p))) return bad(c, op, "the mask must be an i1 tile of the pointers' shape");
        et = v->et;
        if (op->code == OP_ATOMIC_CAS || op->pred == RMW_XCHG) {
            if (!(et == IT_I32 || et == IT_I64 || et == ER_FMT_F32 || et == ER_FMT_F64))
                return bad(c, op, "element type %s is not allowed (i32, i64, f32, f64)", it_et_name(et, 0));
        } else if (op->pred == RMW_ADDF) {
            if (!(et == ER_FMT_F32 || et == ER_FMT_F64 || et == ER_FMT_F16 || et == ER_FMT_BF16))
                return bad(c, op, "addf takes f16, bf16, f32 or f64, not %s", it_et_name(et, 0));
        } else if (!(et == IT_I32 || et == IT_I64)) {
            return bad(c, op, "an integer mode takes i32 or i64, not %s", it_et_name(et, 0));
        }
        return 0;
    }
    case OP_GDC:
        return 0;
    case OP_ALLOCA:
        if (!it_elem_bytes(rt->pet)) return bad(c, op, "an allocation of %s is not modelled", it_et_name(rt->pet, 0));
        if (op->dim <= 0 || (op->dim & (op->dim - 1))) return bad(c, op, "the alignment must be a power of two");
        return 0;
    case OP_ATOMIC_RED: {
        /* operands: the view, its indices, the tile (the types: tile, view, indices) */
        const it_type *pv = VT(c, op, 0), *v = n >= 1 ? VT(c, op, n - 1) : NULL;
        int et;
        if (pv->kind != IT_PV || op->nidx != pv->rank || n != 2 + op->nidx) return bad(c, op, "expects a partition_view, one index per dimension and a tile");
        for (i = 0; i < op->nidx; i++)
            if (!scalar_int(VT(c, op, 1 + i))) return bad(c, op, "indices must be 0-d integer tiles");
        if (!is_tile(v) || v->et != pv->et || v->rank != pv->rank) return bad(c, op, "the tile must have the partition's tile shape and element type");
        for (i = 0; i < v->rank; i++)
            if (v->shape[i] != pv->shape[i]) return bad(c, op, "the tile must have the partition's tile shape and element type");
        if (op->ninb) return bad(c, op, "inbounds is not modelled on atomic_red_view_tko");
        et = v->et;
        if (op->pred == RMW_ADDF) {
            if (!(et == ER_FMT_F32 || et == ER_FMT_F64 || et == ER_FMT_F16 || et == ER_FMT_BF16)) return bad(c, op, "addf takes f16, bf16, f32 or f64, not %s", it_et_name(et, 0));
        } else if (op->pred == RMW_XCHG) {
            return bad(c, op, "xchg is not a reduction");
        } else if (!(et == IT_I32 || et == IT_I64)) {
            return bad(c, op, "an integer mode takes i32 or i64, not %s", it_et_name(et, 0));
        }
        return 0;
    }
    case OP_INSERT: {
        const it_type *v = VT(c, op, 0), *t = n >= 2 ? VT(c, op, 1) : NULL;
        if (!t || !is_tile(v) || !is_tile(t) || v->et != t->et || v->pet != t->pet || v->rank != t->rank || n != 2 + t->rank || op->nidx != t->rank || !same(t, rt))
            return bad(c, op, "expects a value tile, a tile of its rank and type, and one index per dimension");
        for (i = 0; i < t->rank; i++) {
            if (t->shape[i] % v->shape[i]) return bad(c, op, "the value's dimension %d does not divide the tile's", i);
            if (!scalar_int(VT(c, op, 2 + i))) return bad(c, op, "indices must be 0-d integer tiles");
        }
        return 0;
    }
    case OP_PACK: case OP_UNPACK: {
        const it_type *s = n == 1 ? VT(c, op, 0) : NULL;
        const it_type *bytes = op->code == OP_PACK ? rt : s, *val = op->code == OP_PACK ? s : rt;
        if (!s || !is_tile(s) || !is_tile(rt) || bytes->rank != 1 || bytes->et != IT_I8)
            return bad(c, op, "%s a tile to or from a 1-d i8 tile", op->code == OP_PACK ? "packs" : "unpacks");
        if (!pack_bits(val)) return bad(c, op, "element type %s cannot be packed (4, 8, 16, 32 or 64 bits)", it_et_name(val->et, 0));
        if (numel(val) * pack_bits(val) != numel(bytes) * 8) return bad(c, op, "%lld elements of %d bits are not %lld bytes", (long long)numel(val), pack_bits(val), (long long)numel(bytes));
        return 0;
    }
    default:
        return bad(c, op, "the operation is not modelled by the interpreter");
    }
}

static int mma_pair_ok(int a, int acc)
{
    switch (a) {
    case ER_FMT_F8E4M3FN: case ER_FMT_F8E5M2: case ER_FMT_F16: return acc == ER_FMT_F16 || acc == ER_FMT_F32;
    case ER_FMT_BF16: case ER_FMT_TF32: case ER_FMT_F32: return acc == ER_FMT_F32;
    case ER_FMT_F64: return acc == ER_FMT_F64;
    default: return 0;
    }
}

static int check_mma(C *c, const it_op *op)
{
    const it_type *a = VT(c, op, 0), *b = VT(c, op, 1), *acc = VT(c, op, 2);
    int r = a->rank;
    if (!is_tile(a) || !is_tile(b) || !is_tile(acc) || (r != 2 && r != 3) || b->rank != r || acc->rank != r)
        return bad(c, op, "operands must be 2-d (or batched 3-d) tiles of one rank");
    if (a->shape[r - 1] != b->shape[r - 2] || acc->shape[r - 2] != a->shape[r - 2] || acc->shape[r - 1] != b->shape[r - 1] ||
        (r == 3 && (a->shape[0] != b->shape[0] || a->shape[0] != acc->shape[0])))
        return bad(c, op, "the shapes do not compose (M x K times K x N plus M x N)");
    if (!same(&op->rty[0], acc)) return bad(c, op, "the result's type must be the accumulator's");
    /* fast_acc admits reduced-precision accumulation; the point mode's exact sum rounded once is one
     * accumulation it allows (docs/interp.md), so it runs as without the flag */
    if (op->fast_acc && op->code == OP_MMAI) return bad(c, op, "fast_acc is allowed only on mmaf and mmaf_scaled");
    if (op->code == OP_MMAI) {
        if (a->et != IT_I8 || b->et != IT_I8 || acc->et != IT_I32) return bad(c, op, "mmai takes i8 operands and an i32 accumulator");
        return 0;
    }
    if (op->code == OP_MMAF) {
        if (a->et != b->et) return bad(c, op, "both operands must have one element type");
        if (!it_is_float(a->et) || !mma_pair_ok(a->et, acc->et))
            return bad(c, op, "operand %s with accumulator %s is not a pair the dialect allows", it_et_name(a->et, 0), it_et_name(acc->et, 0));
        return 0;
    }
    {
        const it_type *sa = VT(c, op, 3), *sb = VT(c, op, 4);
        int64_t K = a->shape[r - 1], ks;
        int elem_ok = a->et == ER_FMT_F8E4M3FN || a->et == ER_FMT_F8E5M2 || a->et == ER_FMT_F4E2M1FN;
        if (!elem_ok || b->et != a->et) return bad(c, op, "mmaf_scaled takes f8E4M3FN, f8E5M2 or f4E2M1FN operands of one type");
        if (acc->et != ER_FMT_F32) return bad(c, op, "mmaf_scaled accumulates into f32");
        if (!is_tile(sa) || !is_tile(sb) || sa->rank != r || sb->rank != r || sa->et != sb->et)
            return bad(c, op, "the scales must be tiles of the operands' rank and one type");
        if (!(sa->et == ER_FMT_F8E8M0FNU || ((sa->et == ER_FMT_F8E4M3FN || sa->et == ER_FMT_F8E5M3FNU) && a->et == ER_FMT_F4E2M1FN)))
            return bad(c, op, "scale format %s with operands %s is not allowed", it_et_name(sa->et, 0), it_et_name(a->et, 0));
        ks = sa->shape[r - 1];
        if (sa->shape[r - 2] != a->shape[r - 2] || sb->shape[r - 2] != ks || sb->shape[r - 1] != b->shape[r - 1] || ks <= 0 || K % ks)
            return bad(c, op, "the scales' shapes must be M x K/V and K/V x N");
        {
            int64_t v = K / ks;
            int ok = (a->et != ER_FMT_F4E2M1FN && v == 32) || (a->et == ER_FMT_F4E2M1FN && sa->et == ER_FMT_F8E8M0FNU && (v == 16 || v == 32)) ||
                     (a->et == ER_FMT_F4E2M1FN && (sa->et == ER_FMT_F8E4M3FN || sa->et == ER_FMT_F8E5M3FNU) && v == 16);
            if (!ok) return bad(c, op, "block size %lld is not allowed for %s scaled by %s", (long long)v, it_et_name(a->et, 0), it_et_name(sa->et, 0));
        }
    }
    return 0;
}

/* Bounds mode carries enclosures through these operations (src/interp/interp_bounds_exec.h); any other
 * operation is refused there, so that a value it moves or computes is never taken as exact. */
static int bounds_known(int code)
{
    switch (code) {
    case OP_RETURN: case OP_CONSTANT: case OP_GET_GLOBAL: case OP_BLOCK_ID: case OP_NUM_BLOCKS:
    case OP_MAKE_TV: case OP_MAKE_PV: case OP_INDEX_SHAPE: case OP_LOAD_VIEW: case OP_STORE_VIEW: case OP_LOAD_PTR:
    case OP_STORE_PTR: case OP_OFFSET: case OP_PTR_TO_INT: case OP_INT_TO_PTR: case OP_MAKE_TOKEN: case OP_JOIN_TOKENS:
    case OP_FOR: case OP_CONTINUE: case OP_LOOP: case OP_BREAK: case OP_IF: case OP_YIELD:
    case OP_BROADCAST: case OP_RESHAPE: case OP_PERMUTE: case OP_EXTRACT: case OP_CAT: case OP_SELECT: case OP_IOTA:
    case OP_BITCAST: case OP_ADDI: case OP_SUBI: case OP_MULI: case OP_NEGI: case OP_DIVI: case OP_REMI: case OP_MINI:
    case OP_MAXI: case OP_MULHII: case OP_ABSI: case OP_SHLI: case OP_SHRI: case OP_ANDI: case OP_ORI: case OP_XORI:
    case OP_CMPI: case OP_EXTI: case OP_TRUNCI:
    case OP_ADDF: case OP_SUBF: case OP_MULF: case OP_DIVF: case OP_FMA: case OP_SQRT: case OP_REMF: case OP_FLOOR:
    case OP_CEIL: case OP_NEGF: case OP_ABSF: case OP_MAXF: case OP_MINF: case OP_CMPF: case OP_FTOF: case OP_FTOI:
    case OP_ITOF: case OP_EXP: case OP_EXP2: case OP_LOG: case OP_LOG2: case OP_RSQRT: case OP_TANH: case OP_SINH:
    case OP_COSH: case OP_SIN: case OP_COS: case OP_TAN: case OP_ATAN2: case OP_POW:
    case OP_REDUCE: case OP_SCAN: case OP_ASSUME: case OP_PRINT: case OP_MMAF: case OP_MMAI: case OP_MMAF_SCALED:
    case OP_FPOWI: case OP_ATOMIC_RMW: case OP_ATOMIC_CAS: case OP_ATOMIC_RED: case OP_GDC: case OP_PACK: case OP_UNPACK:
    case OP_INSERT: case OP_ALLOCA:
        return 1;
    default:
        return 0;
    }
}

static int check_op(C *c, const it_op *op, int in_loop, int in_for, int in_reduce)
{
    int i, n = op->nopd;
    const it_type *rt = op->nres ? &op->rty[0] : NULL;
    if (op->code == OP_UNKNOWN) return bad(c, op, "the operation is not modelled by the interpreter");
    if (c->bounds && !bounds_known(op->code)) return bad(c, op, "the operation is not modelled in bounds mode yet");
    for (i = 0; i < op->nres; i++)
        if (type_unmodelled(c, op, &op->rty[i])) return 1;
    for (i = 0; i < n; i++)
        if (type_unmodelled(c, op, VT(c, op, i))) return 1;
    if (in_reduce && !is_ew(op->code)) return bad(c, op, "only elementwise operations are modelled inside a reduce or scan region");
    if (in_reduce && op->code == OP_CONSTANT && op->rty[0].rank != 0) return bad(c, op, "a constant inside a reduce or scan region must be 0-d");
    switch (op->code) {
    case OP_ADDI: case OP_SUBI: case OP_MULI: case OP_DIVI: case OP_REMI: case OP_MINI: case OP_MAXI: case OP_MULHII:
    case OP_SHLI: case OP_SHRI: case OP_ANDI: case OP_ORI: case OP_XORI:
        if (n != 2 || !is_tile(rt) || !it_is_int(rt->et) || !same(VT(c, op, 0), rt) || !same(VT(c, op, 1), rt))
            return bad(c, op, "expects two integer tiles of the result's type");
        if (op->code == OP_DIVI && op->is_unsigned && op->rnd == ER_RND_NEGATIVE_INF) return bad(c, op, "rounding<negative_inf> is not allowed with unsigned");
        if (op->code == OP_DIVI && !(op->rnd == IT_RND_DEFAULT || op->rnd == ER_RND_ZERO || op->rnd == ER_RND_NEGATIVE_INF || op->rnd == ER_RND_POSITIVE_INF))
            return bad(c, op, "rounding<%s> is not a divi rounding", rname(op->rnd));
        return 0;
    case OP_NEGI: case OP_ABSI:
        if (n != 1 || !is_tile(rt) || !it_is_int(rt->et) || !same(VT(c, op, 0), rt)) return bad(c, op, "expects one integer tile of the result's type");
        return 0;
    case OP_CMPI: case OP_CMPF:
        if (n != 2 || !same(VT(c, op, 0), VT(c, op, 1)) || !is_tile(VT(c, op, 0)) || rt->et != IT_I1 || !same_shape(rt, VT(c, op, 0)))
            return bad(c, op, "expects two operands of one type and an i1 result of their shape");
        if (op->code == OP_CMPI ? !it_is_int(VT(c, op, 0)->et) : !it_is_float(VT(c, op, 0)->et))
            return bad(c, op, "operand element type %s is not allowed", it_et_name(VT(c, op, 0)->et, 0));
        return 0;
    case OP_ADDF: case OP_SUBF: case OP_MULF: case OP_DIVF: case OP_FMA: case OP_SQRT: case OP_REMF: case OP_FLOOR:
    case OP_CEIL: case OP_NEGF: case OP_ABSF: case OP_MAXF: case OP_MINF: case OP_EXP: case OP_EXP2: case OP_LOG:
    case OP_LOG2: case OP_RSQRT: case OP_TANH: case OP_SINH: case OP_COSH: case OP_SIN: case OP_COS: case OP_TAN:
    case OP_ATAN2: case OP_POW: {
        int want = op->code == OP_FMA ? 3 : (op->code == OP_ADDF || op->code == OP_SUBF || op->code == OP_MULF || op->code == OP_DIVF ||
                                             op->code == OP_REMF || op->code == OP_MAXF || op->code == OP_MINF || op->code == OP_ATAN2 || op->code == OP_POW) ? 2 : 1;
        if (n != want || !is_tile(rt) || !it_is_float(rt->et)) return bad(c, op, "expects %d float tile%s of the result's type", want, want > 1 ? "s" : "");
        for (i = 0; i < n; i++)
            if (!same(VT(c, op, i), rt)) return bad(c, op, "operand %d's type is not the result's", i);
        if (op->ftz && rt->et != ER_FMT_F32) return bad(c, op, "flush_to_zero is allowed only on f32");
        if (op->rnd == ER_RND_NEAREST_AWAY || op->rnd == IT_RND_NEAREST_INT_TO_ZERO) return bad(c, op, "rounding<%s> is not allowed here", rname(op->rnd));
        /* approx and full: the point mode computes the correctly rounded result, one answer the device's
         * instruction may give (docs/interp.md: "rounding<approx> and rounding<full>") */
        if ((op->rnd == IT_RND_FULL || op->rnd == IT_RND_APPROX) && !approx_op(op->code))
            return bad(c, op, "rounding<%s> is not allowed here (only on divf, exp, exp2, rsqrt, sqrt and tanh)", rname(op->rnd));
        if (op->rnd >= 0 && op->rnd <= 4 && op->rnd != ER_RND_NEAREST_EVEN &&
            !(op->code == OP_ADDF || op->code == OP_SUBF || op->code == OP_MULF || op->code == OP_DIVF || op->code == OP_FMA || op->code == OP_SQRT))
            return bad(c, op, "rounding<%s> is not allowed here", rname(op->rnd));
        return 0;
    }
    case OP_FTOF: case OP_FTOI: case OP_ITOF: case OP_EXTI: case OP_TRUNCI: case OP_BITCAST: {
        const it_type *s = n == 1 ? VT(c, op, 0) : NULL;
        if (!s || !is_tile(s) || !is_tile(rt) || !same_shape(s, rt)) return bad(c, op, "expects one tile and a result of its shape");
        if (op->code == OP_FTOF) {
            if (!it_is_float(s->et) || !it_is_float(rt->et) || s->et == rt->et) return bad(c, op, "converts between two different float types");
            if (rt->et == ER_FMT_F8E8M0FNU) {
                if (op->rnd != ER_RND_ZERO && op->rnd != ER_RND_POSITIVE_INF) return bad(c, op, "conversion to f8E8M0FNU needs rounding<zero> or rounding<positive_inf>");
            } else if (op->rnd != IT_RND_DEFAULT && op->rnd != ER_RND_NEAREST_EVEN) {
                return bad(c, op, "rounding<%s> is not allowed (only nearest_even)", rname(op->rnd));
            }
        } else if (op->code == OP_FTOI) {
            if (!it_is_float(s->et) || !it_is_int(rt->et)) return bad(c, op, "converts a float tile to an integer tile");
            if (op->rnd != IT_RND_DEFAULT && op->rnd != IT_RND_NEAREST_INT_TO_ZERO) return bad(c, op, "rounding<%s> is not allowed (only nearest_int_to_zero)", rname(op->rnd));
        } else if (op->code == OP_ITOF) {
            if (!it_is_int(s->et) || !it_is_float(rt->et) || rt->et == ER_FMT_F8E8M0FNU) return bad(c, op, "converts an integer tile to a float tile (not f8E8M0FNU)");
            if (op->rnd != IT_RND_DEFAULT && op->rnd != ER_RND_NEAREST_EVEN) return bad(c, op, "rounding<%s> is not allowed (only nearest_even)", rname(op->rnd));
        } else if (op->code == OP_EXTI) {
            if (!it_is_int(s->et) || !it_is_int(rt->et) || it_int_width(rt->et) <= it_int_width(s->et)) return bad(c, op, "extends to a wider integer type");
        } else if (op->code == OP_TRUNCI) {
            if (!it_is_int(s->et) || !it_is_int(rt->et) || it_int_width(rt->et) >= it_int_width(s->et)) return bad(c, op, "truncates to a narrower integer type");
        } else {
            int ws = it_is_int(s->et) ? it_int_width(s->et) : it_is_float(s->et) ? er_fmt_get(s->et).width : s->et == IT_PTR ? 64 : 0;
            int wr = it_is_int(rt->et) ? it_int_width(rt->et) : it_is_float(rt->et) ? er_fmt_get(rt->et).width : rt->et == IT_PTR ? 64 : 0;
            if (!ws || ws != wr) return bad(c, op, "bitcast between types of different widths");
            if ((s->et == IT_PTR) != (rt->et == IT_PTR) && !(s->et == IT_PTR ? rt->et == IT_I64 : s->et == IT_I64))
                return bad(c, op, "bitcast of a pointer only to or from i64");
        }
        if ((s->et == IT_I4 || rt->et == IT_I4) && op->code != OP_EXTI && op->code != OP_TRUNCI) return bad(c, op, "i4 is allowed only in exti and trunci");
        return 0;
    }
    case OP_PTR_TO_INT: case OP_INT_TO_PTR: {
        const it_type *s = n == 1 ? VT(c, op, 0) : NULL;
        if (!s || !same_shape(s, rt)) return bad(c, op, "expects one tile and a result of its shape");
        if (op->code == OP_PTR_TO_INT ? (s->et != IT_PTR || rt->et != IT_I64) : (s->et != IT_I64 || rt->et != IT_PTR))
            return bad(c, op, "converts between a pointer tile and an i64 tile");
        return 0;
    }
    case OP_SELECT:
        if (n != 3 || VT(c, op, 0)->et != IT_I1 || !same_shape(VT(c, op, 0), VT(c, op, 1)) || !same(VT(c, op, 1), VT(c, op, 2)) || !same(VT(c, op, 1), rt))
            return bad(c, op, "expects an i1 condition and two values of one type and shape");
        if (rt->et == ER_FMT_F4E2M1FN) return bad(c, op, "select of f4E2M1FN is not allowed");
        return 0;
    case OP_BROADCAST: {
        const it_type *s = VT(c, op, 0);
        if (n != 1 || !is_tile(s) || !is_tile(rt) || s->rank != rt->rank || s->et != rt->et || s->pet != rt->pet) return bad(c, op, "expects a tile of the result's rank and element type");
        for (i = 0; i < s->rank; i++)
            if (s->shape[i] != 1 && s->shape[i] != rt->shape[i]) return bad(c, op, "dimension %d of size %lld cannot broadcast to %lld", i, (long long)s->shape[i], (long long)rt->shape[i]);
        return 0;
    }
    case OP_RESHAPE: {
        const it_type *s = VT(c, op, 0);
        if (n != 1 || !is_tile(s) || !is_tile(rt) || s->et != rt->et || s->pet != rt->pet || numel(s) != numel(rt)) return bad(c, op, "expects a tile of the result's element type and count");
        return 0;
    }
    case OP_PERMUTE: {
        const it_type *s = VT(c, op, 0);
        int seen[IT_MAXRANK] = {0};
        if (n != 1 || !is_tile(s) || !is_tile(rt) || s->et != rt->et || s->pet != rt->pet || s->rank != rt->rank || op->nilist != s->rank)
            return bad(c, op, "expects a permutation of the operand's rank");
        for (i = 0; i < s->rank; i++) {
            if (op->ilist[i] < 0 || op->ilist[i] >= s->rank || seen[op->ilist[i]]) return bad(c, op, "the permutation is not valid");
            seen[op->ilist[i]] = 1;
            if (rt->shape[i] != s->shape[op->ilist[i]]) return bad(c, op, "the result's dimension %d must be the operand's dimension %lld", i, (long long)op->ilist[i]);
        }
        return 0;
    }
    case OP_EXTRACT: {
        const it_type *s = VT(c, op, 0);
        if (!is_tile(s) || !is_tile(rt) || s->et != rt->et || s->pet != rt->pet || s->rank != rt->rank || n != 1 + s->rank)
            return bad(c, op, "expects a tile and one index per dimension");
        for (i = 0; i < s->rank; i++) {
            if (s->shape[i] % rt->shape[i]) return bad(c, op, "the result's dimension %d does not divide the source's", i);
            if (!scalar_int(VT(c, op, 1 + i))) return bad(c, op, "indices must be 0-d integer tiles");
        }
        return 0;
    }
    case OP_CAT: {
        const it_type *a = VT(c, op, 0), *b = n == 2 ? VT(c, op, 1) : NULL;
        if (!b || !is_tile(a) || !is_tile(b) || a->rank != b->rank || a->et != b->et || a->pet != b->pet || !is_tile(rt) || rt->rank != a->rank || rt->et != a->et ||
            op->dim < 0 || op->dim >= a->rank)
            return bad(c, op, "expects two tiles of one rank and type and a dimension");
        for (i = 0; i < a->rank; i++)
            if (i == op->dim ? rt->shape[i] != a->shape[i] + b->shape[i] : (a->shape[i] != b->shape[i] || rt->shape[i] != a->shape[i]))
                return bad(c, op, "the shapes do not concatenate along dimension %d", op->dim);
        return 0;
    }
    case OP_IOTA: case OP_CONSTANT: case OP_MAKE_TOKEN: case OP_JOIN_TOKENS: case OP_BLOCK_ID: case OP_NUM_BLOCKS:
    case OP_GET_GLOBAL:
        for (i = 0; i < n; i++)
            if (VT(c, op, i)->kind != IT_TOKEN) return bad(c, op, "operands must be tokens");
        return 0;
    case OP_MAKE_TV: {
        const it_type *base = VT(c, op, 0);
        if (!is_tile(base) || base->rank != 0 || base->et != IT_PTR || base->pet != rt->et) return bad(c, op, "the base must be a pointer to the view's element type");
        for (i = 1; i < n; i++)
            if (!scalar_int(VT(c, op, i))) return bad(c, op, "dynamic shapes and strides must be 0-d integer tiles");
        if (rt->et == ER_FMT_F4E2M1FN) return bad(c, op, "views of f4E2M1FN (packed two per byte) are not modelled");
        return 0;
    }
    case OP_MAKE_PV: {
        const it_type *tv = VT(c, op, 0);
        if (n != 1 || tv->kind != IT_TV || tv->et != rt->et || tv->rank != rt->tv_rank) return bad(c, op, "expects a tensor_view of the partition's type");
        for (i = 0; i < tv->rank; i++)
            if (tv->shape[i] != rt->tv_shape[i] || tv->strides[i] != rt->tv_strides[i]) return bad(c, op, "the tensor_view's type is not the partition's");
        if (rt->padding > IT_PAD_ZERO && !it_is_float(rt->et)) return bad(c, op, "special padding values need a float element type");
        if (strcmp(op->name, rt->vflav == IT_VIEW_STRIDED ? "make_strided_view" : rt->vflav == IT_VIEW_GATHER ? "make_gather_scatter_view" : "make_partition_view"))
            return bad(c, op, "the result's view type is not the one this op makes");
        return 0;
    }
    case OP_INDEX_SHAPE:
        if (n != 1 || VT(c, op, 0)->kind != IT_PV || op->nres != VT(c, op, 0)->rank) return bad(c, op, "expects a partition_view and one result per dimension");
        if (VT(c, op, 0)->vflav != IT_VIEW_PARTITION) return bad(c, op, "the index space of a strided or gather/scatter view is not modelled");
        return 0;
    case OP_LOAD_VIEW: case OP_STORE_VIEW: {
        int st = op->code == OP_STORE_VIEW;
        const it_type *pv = n > st ? VT(c, op, st) : NULL;
        it_type want;
        if (!pv || pv->kind != IT_PV || op->nidx != pv->rank || n != st + 1 + op->nidx + op->has_token) return bad(c, op, "expects a partition_view and one index per dimension");
        for (i = 0; i < op->nidx; i++) {
            const it_type *ix = VT(c, op, st + 1 + i);
            if (pv->vflav == IT_VIEW_GATHER && i == pv->sparse) { /* the sparse dimension: a 1-d tile of element indices */
                if (!is_tile(ix) || ix->rank != 1 || !it_is_int(ix->et) || ix->et == IT_I1 || ix->shape[0] != pv->shape[i])
                    return bad(c, op, "the sparse dimension's index must be a 1-d integer tile of the view's tile size");
            } else if (!scalar_int(ix)) {
                return bad(c, op, "indices must be 0-d integer tiles");
            }
        }
        if (pv->vflav != IT_VIEW_PARTITION && op->ninb) return bad(c, op, "inbounds on a strided or gather/scatter view is not modelled");
        if (op->has_token && VT(c, op, n - 1)->kind != IT_TOKEN) return bad(c, op, "token= must be a token");
        if (op->ninb && op->ninb != pv->rank) return bad(c, op, "inbounds needs one entry per dimension");
        memset(&want, 0, sizeof want);
        want.kind = IT_TILE;
        want.et = pv->et;
        want.rank = pv->rank;
        memcpy(want.shape, pv->shape, sizeof want.shape);
        if (!same(st ? VT(c, op, 0) : rt, &want)) return bad(c, op, "the tile must have the partition's tile shape and element type");
        return 0;
    }
    case OP_LOAD_PTR: case OP_STORE_PTR: {
        int st = op->code == OP_STORE_PTR;
        const it_type *p = n ? VT(c, op, 0) : NULL;
        int nv = 1 + st + op->has_mask + op->has_pad;
        if (!p || !is_tile(p) || p->et != IT_PTR || n != nv + op->has_token) return bad(c, op, "expects a pointer tile and its operands");
        if (p->pet == ER_FMT_F4E2M1FN) return bad(c, op, "memory access to f4E2M1FN (packed two per byte) is not modelled");
        if (st && (!same_shape(VT(c, op, 1), p) || VT(c, op, 1)->et != p->pet)) return bad(c, op, "the value must be a tile of the pointee type and the pointers' shape");
        if (!st && (!same_shape(rt, p) || rt->et != p->pet)) return bad(c, op, "the result must be a tile of the pointee type and the pointers' shape");
        if (op->has_mask && (!same_shape(VT(c, op, 1 + st), p) || VT(c, op, 1 + st)->et != IT_I1)) return bad(c, op, "the mask must be an i1 tile of the pointers' shape");
        if (op->has_pad && !same(VT(c, op, 2), rt)) return bad(c, op, "the padding must have the result's type");
        if (op->has_token && VT(c, op, n - 1)->kind != IT_TOKEN) return bad(c, op, "token= must be a token");
        return 0;
    }
    case OP_OFFSET:
        if (n != 2 || !is_tile(VT(c, op, 0)) || VT(c, op, 0)->et != IT_PTR || !same_shape(VT(c, op, 0), VT(c, op, 1)) || !it_is_int(VT(c, op, 1)->et) || !same(rt, VT(c, op, 0)))
            return bad(c, op, "expects a pointer tile and an integer tile of its shape");
        return 0;
    case OP_MMAF: case OP_MMAI: case OP_MMAF_SCALED:
        return check_mma(c, op);
    case OP_REDUCE: case OP_SCAN: {
        const it_type *a = VT(c, op, 0);
        const it_region *body = op->region[0];
        if (!is_tile(a) || op->dim < 0 || op->dim >= a->rank) return bad(c, op, "dim=%d is not a dimension of the operand", op->dim);
        for (i = 0; i < n; i++) {
            const it_type *t = VT(c, op, i);
            int k, j = 0;
            if (!same_shape(t, a)) return bad(c, op, "every operand must have one shape");
            if (op->rty[i].et != t->et) return bad(c, op, "result %d's element type is not its operand's", i);
            if (op->code == OP_SCAN) {
                if (!same_shape(&op->rty[i], t)) return bad(c, op, "scan's results have the operands' shapes");
            } else {
                if (op->rty[i].rank != t->rank - 1) return bad(c, op, "reduce removes the dimension dim");
                for (k = 0; k < t->rank; k++) {
                    if (k == op->dim) continue;
                    if (op->rty[i].shape[j++] != t->shape[k]) return bad(c, op, "reduce removes the dimension dim");
                }
            }
            if (body->aty[2 * i].rank != 0 || body->aty[2 * i + 1].rank != 0 || body->aty[2 * i].et != t->et || body->aty[2 * i + 1].et != t->et)
                return bad(c, op, "region arguments must be 0-d tiles of the operands' element types");
        }
        if (check_region(c, body, 0, 0, 1)) return 1;
        return 0;
    }
    case OP_ASSUME:
        if (n != 1 || !same(VT(c, op, 0), rt)) return bad(c, op, "expects one operand of the result's type");
        if (!op->pred) return bad(c, op, "expects a predicate");
        if ((op->pred == IT_ASSUME_DIV_BY || op->pred == IT_ASSUME_BOUNDED) && !(it_is_int(rt->et) || rt->et == IT_PTR))
            return bad(c, op, "the predicate applies to integer or pointer tiles");
        return 0;
    case OP_PRINT:
        return 0;
    case OP_IF: {
        int k;
        for (k = 0; k < op->nregion; k++)
            if (check_region(c, op->region[k], in_loop, in_for, 0)) return 1;
        if (op->nres && op->nregion < 2) return bad(c, op, "an if with results needs an else region");
        for (k = 0; k < op->nregion; k++) {
            const it_region *r = op->region[k];
            const it_op *t = r->nops ? &r->ops[r->nops - 1] : NULL;
            if (op->nres && (!t || t->code != OP_YIELD)) {
                if (!t || (t->code != OP_CONTINUE && t->code != OP_BREAK && t->code != OP_RETURN))
                    return bad(c, op, "region %d must end with yield of %d values", k, op->nres);
            }
            if (t && t->code == OP_YIELD) {
                if (t->nopd != op->nres) return bad(c, op, "yield gives %d values, the if has %d results", t->nopd, op->nres);
                for (i = 0; i < t->nopd; i++)
                    if (!same(VT(c, t, i), &op->rty[i])) return bad(c, op, "yielded value %d's type is not result %d's", i, i);
            }
        }
        return 0;
    }
    case OP_FOR: case OP_LOOP: {
        const it_region *body = op->region[0];
        int nit = op->code == OP_FOR ? body->nargs - 1 : body->nargs;
        if (op->code == OP_FOR && op->nres != nit) return bad(c, op, "for has %d results for %d iteration values", op->nres, nit);
        if (check_region(c, body, op->code == OP_LOOP ? 1 : 0, op->code == OP_FOR ? 1 : 0, 0)) return 1;
        (void)nit;
        return 0;
    }
    case OP_CONTINUE: {
        /* checked against the innermost loop by check_terms */
        (void)in_loop;
        return 0;
    }
    case OP_BREAK:
        if (!in_loop) return bad(c, op, "break outside a loop");
        return 0;
    case OP_YIELD: case OP_RETURN:
        return 0;
    case OP_FPOWI: case OP_ATOMIC_RMW: case OP_ATOMIC_CAS: case OP_GDC: case OP_PACK: case OP_UNPACK:
    case OP_ATOMIC_RED: case OP_INSERT: case OP_ALLOCA:
        return check_ops13(c, op);
    default:
        return bad(c, op, "the operation is not modelled by the interpreter");
    }
}

/* Terminators of a loop body (at any if depth) against the loop's iteration values and results. */
static int check_terms(C *c, const it_op *loop, const it_region *r)
{
    const it_region *body = loop->region[0];
    int nit = loop->code == OP_FOR ? body->nargs - 1 : body->nargs;
    const it_type *ity = loop->code == OP_FOR ? body->aty + 1 : body->aty;
    int i, k;
    for (i = 0; i < r->nops; i++) {
        const it_op *t = &r->ops[i];
        if (t->code == OP_CONTINUE) {
            if (t->nopd != nit) return bad(c, t, "continue gives %d values, the loop carries %d", t->nopd, nit);
            for (k = 0; k < nit; k++)
                if (!same(VT(c, t, k), &ity[k])) return bad(c, t, "continued value %d's type is not the iteration value's", k);
        } else if (t->code == OP_BREAK && loop->code == OP_LOOP) {
            if (t->nopd != loop->nres) return bad(c, t, "break gives %d values, the loop has %d results", t->nopd, loop->nres);
            for (k = 0; k < loop->nres; k++)
                if (!same(VT(c, t, k), &loop->rty[k])) return bad(c, t, "value %d's type is not the loop's result %d", k, k);
        } else if (t->code == OP_IF) {
            for (k = 0; k < t->nregion; k++)
                if (check_terms(c, loop, t->region[k])) return 1;
        }
    }
    if (nit && (r == body) && (!r->nops || (r->ops[r->nops - 1].code != OP_CONTINUE && r->ops[r->nops - 1].code != OP_BREAK &&
                                            r->ops[r->nops - 1].code != OP_RETURN && r->ops[r->nops - 1].code != OP_IF)))
        return bad(c, loop, "the body must end with continue of its %d iteration values", nit);
    if (loop->code == OP_FOR)
        for (k = 0; k < nit; k++)
            if (!same(&loop->rty[k], &ity[k])) return bad(c, loop, "result %d's type is not the iteration value's", k);
    return 0;
}

static int check_region(C *c, const it_region *r, int in_loop, int in_for, int in_reduce)
{
    int i;
    for (i = 0; i < r->nops; i++) {
        const it_op *op = &r->ops[i];
        if (check_op(c, op, in_loop, in_for, in_reduce)) return 1;
        if ((op->code == OP_FOR || op->code == OP_LOOP) && check_terms(c, op, op->region[0])) return 1;
        if ((op->code == OP_CONTINUE || op->code == OP_BREAK) && !in_loop && !in_for) return bad(c, op, "'%s' outside a loop", op->name);
        if (op->code == OP_BREAK && !in_loop) return bad(c, op, "break is allowed only in a loop");
        if (in_reduce && op->code == OP_YIELD && i != r->nops - 1) return bad(c, op, "yield must end the region");
        if (op->code == OP_YIELD || op->code == OP_CONTINUE || op->code == OP_BREAK || op->code == OP_RETURN) {
            if (i != r->nops - 1) return bad(c, op, "'%s' must be the last operation of its region", op->name);
        }
    }
    if (in_reduce) {
        const it_op *t = r->nops ? &r->ops[r->nops - 1] : NULL;
        if (!t || t->code != OP_YIELD) return bad(c, NULL, "a reduce or scan region must end with yield");
    }
    return 0;
}

static int check_entry(C *c, const it_entry *e)
{
    int i;
    c->e = e;
    for (i = 0; i < e->nparams; i++)
        if (e->pty[i].et == IT_UNMODELLED || (e->pty[i].et == IT_PTR && e->pty[i].pet == IT_UNMODELLED)) {
            if (c->msg && c->msz)
                snprintf(c->msg, c->msz, "%s:%d:%d: entry '@%s': parameter %%%s: format '%s' is not modelled by the interpreter", c->m->filename, e->line, e->col,
                         e->name, e->pname[i], e->pty[i].uname);
            c->found = 1;
            return 1;
        }
    return check_region(c, &e->body, 0, 0, 0);
}

int er_interp_first_unsupported(const er_interp_module *m, const char *kernel, char *msg, size_t msg_size)
{
    return it_first_unsupported(m, kernel, 0, msg, msg_size);
}

int it_first_unsupported(const er_interp_module *m, const char *kernel, int bounds, char *msg, size_t msg_size)
{
    C c;
    int i;
    if (msg && msg_size) msg[0] = 0;
    if (!m) return -1;
    memset(&c, 0, sizeof c);
    c.m = m;
    c.msg = msg;
    c.msz = msg_size;
    c.bounds = bounds;
    if (kernel) {
        const it_entry *e = it_find_entry(m, kernel);
        if (!e) return -1;
        return check_entry(&c, e) ? 1 : 0;
    }
    for (i = 0; i < m->nentries; i++)
        if (check_entry(&c, &m->entries[i])) return 1;
    return 0;
}
