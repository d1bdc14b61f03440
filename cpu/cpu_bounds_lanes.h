/* cpu_bounds_lanes.h: cpu_bounds.c's first pass (exact_first) a vector of columns at a time, written once over cpu_vec.h.
 *
 * A template included by cpu/cpu_bounds.c through cpu_vec_each.h, once per width (ER_VW: AVX-512's
 * eight lanes, AVX2's four): the same binary64 operations on each lane, er_b_scale_up and ldexp as
 * moves of the exponent field where the result is normal, so that a lane it finishes has exact_first's
 * bits.  A lane is finished only where every step lies in the range where that holds: the row's and
 * the column's scales finite, C finite, the scaled quantities normal binary64 values, the reference's
 * pattern a normal finite value, and exact_first itself would finish it in its common case.  The other
 * lanes are left to exact_first.
 */
typedef struct {
    V(fq) F;
    V(d) n1, g, gr, under, ge, r_c, c_lo, c_hi, guard;
} V(first_q);

ER_VK static void V(first_init)(V(first_q) *P, const exact_q *Q, const er_bjob *j)
{
    double rho = (double)(j->par.k + 8) * 0x1p-22;
    V(fq_init)(&P->F, &Q->fq);
    P->n1 = V(dset)(Q->n1);
    P->g = V(dset)(Q->g);
    P->gr = V(dset)(Q->gr);
    P->under = V(dset)(Q->under);
    P->ge = V(dset)(Q->ge);
    P->r_c = V(dset)(Q->r_c);
    P->c_lo = V(dset)(1.0 - rho);
    P->c_hi = V(dset)(1.0 + rho);
    P->guard = V(dset)(1 + 0x1p-20);
}

/* Columns col .. col + ER_VW - 1 of row i (products at q): returns the lanes finished and stored. */
ER_VK static unsigned V(exact_first)(const er_bjob *j, const exact_q *Q, const V(first_q) *P, int64_t i, int64_t col,
                                     int64_t q, const double *S, const double *TT, const float *TF, const double *WW,
                                     er_bounds *out, int64_t e)
{
    int64_t n = j->n;
    const V(d) zero = V(dzero)();
    V(i) sb = V(iload32)(j->sb + col);
    V(m) ok = V(ine)(sb, V(iset)(ER_BQ_BAD));
    V(i) ea = V(iadd)(sb, V(iset)(j->sa[i]));
    V(i) ew = V(iadd)(sb, V(iset)(j->sw[i]));
    V(d) cval = j->cv ? V(dload)(j->cv + i * n + col) : zero;
    ok = V(mand)(ok, V(finite)(cval));
    V(d) cm = V(dabs)(cval);
    V(m) hc = V(dcmp)(cm, zero, _CMP_GT_OQ);
    V(d) Sv = V(dload)(S + q);
    V(d) W = Q->any ? zero : V(scale_up)(&P->F, V(dload)(WW + q), ew, &ok);
    V(d) rad, Te;
    if (TF) {
        V(d) nt = V(fload)(TF + q);
        ok = V(mand)(ok, V(finite)(nt));
        V(m) ntp = V(dcmp)(nt, zero, _CMP_GT_OQ);
        /* T_lo: ldexp as a move of the exponent field, the result normal */
        V(d) d = V(down)(V(mul)(nt, P->c_lo));
        V(i) du = V(bits)(d), dbf = V(srli)(du, 52), dbe = V(iadd)(dbf, ea);
        V(m) din = V(mand)(V(ige)(dbe, V(iset)(1)), V(ige)(V(iset)(2046), dbe));
        din = V(mand)(din, V(ine)(dbf, V(izero)()));
        ok = V(mand)(ok, V(mor)(V(mandnot)(ntp, V(mall)()), din));
        V(d) ld = V(dbl)(V(iadd)(du, V(slli)(ea, 52)));
        V(d) T_lo = V(dmaskz)(ntp, V(down)(ld));
        V(d) T_hi = V(scale_up)(&P->F, V(up)(V(mul)(nt, P->c_hi)), ea, &ok);
        V(d) Wr = V(dsel)(W, V(up)(V(add)(W, V(up)(V(mul)(cm, P->r_c)))), hc);
        V(d) Tr_hi = V(dsel)(T_hi, V(up)(V(add)(T_hi, cm)), hc);
        V(d) Tr_lo = V(dsel)(T_lo, V(up)(V(add)(T_lo, cm)), hc);
        ok = V(mand)(ok, V(finite)(Tr_hi));
        ok = V(mand)(ok, V(dcmp)(V(up)(V(mul)(Tr_hi, P->guard)), P->F.max_c, _CMP_LT_OQ));
        V(d) rn = V(up)(V(mul)(P->gr, Wr));
        ok = V(mand)(ok, V(dcmp)(rn, V(up)(V(mul)(V(up)(V(mul)(P->g, Tr_lo)), P->n1)), _CMP_LE_OQ));
        rad = V(up)(V(add)(rn, P->under));
        Te = T_hi;
    } else {
        /* exact_radius with T exact */
        V(d) T = V(scale_up)(&P->F, V(dload)(TT + q), ea, &ok);
        V(d) Tc = V(dsel)(T, V(up)(V(add)(T, cm)), hc);
        V(d) Wc = V(dsel)(W, V(up)(V(add)(W, V(up)(V(mul)(cm, P->r_c)))), hc);
        ok = V(mand)(ok, V(finite)(Tc));
        rad = V(up)(V(mul)(V(up)(V(mul)(P->g, Tc)), P->n1));
        if (!Q->any) {
            V(m) gd = V(dcmp)(V(up)(V(mul)(Tc, P->guard)), P->F.max_c, _CMP_LT_OQ);
            V(d) rn = V(up)(V(mul)(P->gr, Wc));
            rad = V(dsel)(rad, rn, V(mand)(gd, V(dcmp)(rn, rad, _CMP_LT_OQ)));
        }
        rad = V(up)(V(add)(rad, P->under));
        Te = T;
    }
    ok = V(mand)(ok, V(finite)(rad));
    if (!V(mbits)(ok)) return 0;
    /* exact_keys */
    V(d) en = V(up)(V(mul)(P->ge, Te));
    V(d) xl = V(down)(V(sub)(Sv, en)), xh = V(up)(V(add)(Sv, en));
    if (Q->has_c) {
        xl = V(down)(V(add)(xl, cval));
        xh = V(up)(V(add)(xh, cval));
    }
    return V(keys)(&P->F, j->rb + i * n + col, xl, xh, rad, ok, out, e);
}
