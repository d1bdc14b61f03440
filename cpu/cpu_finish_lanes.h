/* cpu_finish_lanes.h: cpu_finish.h's common case a vector of elements at a time, written once over cpu_vec.h (AVX2's four lanes, AVX-512's eight).
 *
 * For the CPU's per-element loops (cpu/cpu_bounds.c's first pass, cpu/cpu_bounds_engine.c's finish):
 * the same binary64 operations on each lane, the outward steps (er_b_up, er_b_down) and the rounding
 * to the output's precision on the bit patterns, so a lane finished here has the bits of
 * er_cpu_fq_finish.  A lane is finished only where every step lies in the common case (the caller's
 * mask `ok` says which lanes remain candidates; V(finish) returns those it stored).  Every integer
 * compared is below 2^63, so the signed compares serve.  A template: included by cpu_vec_each.h once
 * per width (ER_VW 4 or 8), where cpu_finish.h was included; it defines er_v4_fq, er_v4_keys, ... at that width.
 */
#if defined(ER_CPU_FINISH_H) && (ER_VW == 4 && !defined(ER_CPU_FINISH_LANES4_H) || ER_VW == 8 && !defined(ER_CPU_FINISH_LANES8_H))
#if ER_VW == 4
#define ER_CPU_FINISH_LANES4_H
#else
#define ER_CPU_FINISH_LANES8_H
#endif

typedef struct {
    V(i) half, lo_lim, r_lim, off, one, mant, sign, emax_f;
    V(d) max_c;
    V(c) sh, sgn, pb, sgn63; /* shift counts */
} V(fq);

ER_VK static inline void V(fq_init)(V(fq) *F, const er_cpu_fq *q)
{
    F->half = V(iset)((int64_t)q->half);
    F->lo_lim = V(iset)((int64_t)q->lo_lim);
    F->r_lim = V(iset)((int64_t)q->r_lim);
    F->off = V(iset)((int64_t)q->off);
    F->one = V(iset)(1);
    F->mant = V(iset)(0x000FFFFFFFFFFFFFll);
    F->sign = V(iset)((int64_t)(UINT64_C(1) << 63));
    F->emax_f = V(iset)(q->of == ER_FMT_F16 ? 31 : 255); /* the output's all-ones exponent field */
    F->max_c = V(dset)(q->max_c);
    F->sh = V(count)(q->sh);
    F->sgn = V(count)(q->sgn);
    F->pb = V(count)(q->pb);
    F->sgn63 = V(count)(63 - q->sgn);
}

/* er_b_scale_up(N, e) where its result is a normal binary64 value (lanes *ok kept); 0 for N <= 0. */
ER_VT static inline V(d) V(scale_up)(const V(fq) *F, V(d) N, V(i) e, V(m) *ok)
{
    V(i) u = V(bits)(N), be = V(iadd)(V(srli)(u, 52), e);
    V(m) pos = V(dcmp)(N, V(dzero)(), _CMP_GT_OQ);
    V(m) in = V(mand)(V(ige)(be, V(iset)(1)), V(ige)(V(iset)(2046), be));
    *ok = V(mand)(*ok, V(mor)(V(mandnot)(pos, V(mall)()), in));
    V(i) r = V(ior)(V(slli)(be, 52), V(iand)(u, F->mant));
    return V(dmaskz)(pos, V(dbl)(r));
}

/* The output pattern of each lane (er_cpu_fq_pattern), its rounded binary64 value, and the lanes in
 * the quick range (magnitudes below 2^63). */
ER_VT static inline V(i) V(pattern)(const V(fq) *F, V(d) v, V(d) *val, V(m) *ok)
{
    V(i) u = V(bits)(v), mag = V(iandnot)(F->sign, u), sg = V(iand)(u, F->sign);
    V(i) odd = V(iand)(V(shr)(mag, F->sh), F->one);
    V(i) r = V(shr)(V(iadd)(V(iadd)(mag, F->half), odd), F->sh);
    V(m) in = V(mand)(V(ige)(mag, F->lo_lim), V(igt)(F->r_lim, r));
    in = V(mand)(in, V(dcmp)(v, V(sub)(V(dzero)(), F->max_c), _CMP_GE_OQ));
    in = V(mand)(in, V(dcmp)(v, F->max_c, _CMP_LE_OQ));
    *ok = V(mand)(*ok, in);
    *val = V(dbl)(V(ior)(V(shl)(r, F->sh), sg));
    return V(ior)(V(isub)(r, F->off), V(shr)(sg, F->sgn63));
}

/* er_cpu_fq_finish for the lanes of ok, from the ends la <= hb (patterns pl, ph2, their values lv,
 * hv) and the radius: where the reference's pattern (rbp[0 .. ER_VW - 1]) is a normal finite value,
 * the lane's bounds are stored at element e of out.  Returns the lanes stored (bit l: lane l). */
ER_VT static inline unsigned V(finish)(const V(fq) *F, const uint64_t *rbp, V(d) la, V(d) hb, V(d) rad, V(i) pl,
                                       V(d) lv, V(i) ph2, V(d) hv, V(m) ok, er_bounds *out, int64_t e)
{
    ok = V(mand)(ok, V(dcmp)(la, hb, _CMP_LE_OQ));
    V(i) rb = V(bits)(V(dload)((const double *)(const void *)rbp));
    V(i) rsg = V(shr)(rb, F->sgn);
    V(i) rmag = V(isub)(rb, V(shl)(rsg, F->sgn));
    V(i) ef = V(shr)(rmag, F->pb);
    ok = V(mand)(ok, V(ige)(F->one, rsg));
    ok = V(mand)(ok, V(ige)(ef, F->one));
    ok = V(mand)(ok, V(igt)(F->emax_f, ef));
    unsigned m = V(mbits)(ok);
    if (!m) return 0;
    /* the reference's value: its pattern's bits widened (a normal value) */
    V(d) rv = V(dbl)(V(ior)(V(shl)(V(iadd)(rmag, F->off), F->sh), V(slli)(rsg, 63)));
    V(m) rg = V(dcmp)(lv, hv, _CMP_LE_OQ);
    V(d) d1 = V(up)(V(sub)(rv, lv)), d2 = V(up)(V(sub)(hv, rv));
    V(d) tol = V(dsel)(d2, d1, V(dcmp)(d1, d2, _CMP_GT_OQ));
    tol = V(dsel)(tol, V(dzero)(), V(dcmp)(tol, V(dzero)(), _CMP_LT_OQ));
    tol = V(dsel)(V(dset)(ER_B_INF), tol, rg);
    V(i) lo = V(isel)(rb, pl, rg), hi = V(isel)(rb, ph2, rg);
    V(dstore_m)(out->radius + e, ok, rad);
    V(dstore_m)(out->tolerance + e, ok, tol);
    V(istore_m)(out->low + e, ok, lo);
    V(istore_m)(out->high + e, ok, hi);
    V(bstore_m)(out->has_range + e, ok, rg);
    V(bstore_m)(out->may_pinf + e, ok, V(mnone)());
    V(bstore_m)(out->may_ninf + e, ok, V(mnone)());
    V(bstore_m)(out->may_nan + e, ok, V(mnone)());
    return m;
}

/* er_cpu_fq_keys for a vector of lanes: RD(x - rad) and RU(x + rad) decided by the enclosure [xl, xh]
 * of x where both ends give the same pattern; returns the lanes stored (V(finish)), 0 for the others. */
ER_VT static inline unsigned V(keys)(const V(fq) *F, const uint64_t *rbp, V(d) xl, V(d) xh, V(d) rad, V(m) ok,
                                     er_bounds *out, int64_t e)
{
    V(d) la = V(down)(V(sub)(xl, rad)), lb = V(up)(V(sub)(xh, rad));
    V(d) ha = V(down)(V(add)(xl, rad)), hb = V(up)(V(add)(xh, rad));
    V(d) lv, lv2, hv, hv2; /* lv2, hv2: unused (the ends must agree) */
    V(i) pl = V(pattern)(F, la, &lv, &ok), pl2 = V(pattern)(F, lb, &lv2, &ok);
    V(i) ph = V(pattern)(F, ha, &hv2, &ok), ph2 = V(pattern)(F, hb, &hv, &ok);
    ok = V(mand)(ok, V(mand)(V(ieq)(pl, pl2), V(ieq)(ph, ph2)));
    if (!V(mbits)(ok)) return 0;
    return V(finish)(F, rbp, la, hb, rad, pl, lv, ph2, hv, ok, out, e);
}
#endif
