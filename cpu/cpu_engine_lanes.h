/* cpu_engine_lanes.h: cpu_bounds_engine.c's finish (er_b_eng_final and er_cpu_fq_keys) a vector of elements at a time, written once over cpu_vec.h.
 *
 * A template included by cpu/cpu_bounds_engine.c through cpu_vec_each.h, once per width (ER_VW:
 * AVX-512's eight lanes, AVX2's four), for consecutive elements of a row of the state: the same
 * binary64 operations on each lane (cpu_finish_lanes.h), where the common case holds: the state not
 * `done`, C finite, no results as inputs (j->dc NULL: no perturbation), the sums finite, the ends in the
 * output's quick range and decided by the enclosure s +- e64 of the exact sum.  V(eng_finish) returns
 * the lanes stored; the others are left to the caller.
 */
typedef struct {
    V(fq) F;
    V(d) c0, infl, u, eta, rel;
    int cr, tf;
} V(eng);

ER_VK static void V(eng_init)(V(eng) *P, const er_bpar *c, const er_cpu_fq *fq)
{
    V(fq_init)(&P->F, fq);
    P->c0 = V(dset)((double)(c->k + 3) * 0x1p-53);
    P->infl = V(dset)(1.0 + (double)(c->k + 8) * 0x1p-51);
    P->u = V(dset)(c->u);
    P->eta = V(dset)(c->eta);
    double rel = (c->a_f32 ? 0x1p-10 : 0) + (c->b_f32 ? 0x1p-10 : 0) + (c->a_f32 && c->b_f32 ? 0x1p-20 : 0);
    P->rel = V(dset)(rel);
    P->cr = c->has_c && c->c_rounds;
    P->tf = c->tf32_inputs && rel > 0;
}

ER_VK static unsigned V(eng_finish)(const V(eng) *P, const er_bjob *j, const eng_state *st, int64_t q, int64_t e,
                                    er_bounds *out, int64_t eo)
{
    V(m) ok = V(mzero_bytes)(st->dn + q);
    V(d) cval = j->cv ? V(dload)(j->cv + e) : V(dzero)();
    ok = V(mand)(ok, V(finite)(cval));
    V(d) cm = V(dabs)(cval);
    V(d) s = V(add)(V(dload)(st->s + q), cval);
    V(d) T = V(add)(V(dload)(st->T + q), cm);
    V(d) E = V(dload)(st->E + q);
    ok = V(mand)(ok, V(mand)(V(finite)(s), V(finite)(T)));
    V(d) e64 = V(up)(V(mul)(V(mul)(P->c0, T), P->infl));
    if (P->cr) E = V(up)(V(add)(V(up)(V(add)(E, V(up)(V(mul)(cm, P->u)))), P->eta));
    if (P->tf) E = V(up)(V(add)(E, V(up)(V(mul)(V(up)(V(mul)(T, P->infl)), P->rel))));
    ok = V(mand)(ok, V(finite)(E));
    if (!V(mbits)(ok)) return 0;
    /* RD(x - E) and RU(x + E) decided by [xl, xh] */
    V(d) xl = V(down)(V(sub)(s, e64)), xh = V(up)(V(add)(s, e64));
    return V(keys)(&P->F, j->rb + e, xl, xh, E, ok, out, eo);
}
