/* cpu_quant_lanes.h: cpu_quant.c's runs of values a vector at a time, written once over cpu_vec.h (AVX2's four lanes, AVX-512's eight).
 *
 * A template included by cpu/cpu_quant.c through cpu_vec_each.h, once per width (ER_VW), after the
 * width's V(qval) (er_b_q_value lane by lane, cpu_quant.c): the quantized magnitudes of a run, the
 * largest magnitude of a run and the column maxima of a block, each by the same operations as the
 * one-value loops (the maximum of the finite lanes; a lane that is not finite sets *bad, which makes
 * the maximum meaningless to the caller).
 */
ER_VK static void V(q_values)(const double *x, const double *w, const int32_t *sv, int s, int64_t cnt, double *q)
{
    int64_t p = 0;
    for (; p + ER_VW <= cnt; p += ER_VW) {
        V(d) v = V(dabs)(V(dload)(x + p));
        if (w) v = V(mul)(v, V(dload)(w + p));
        V(dstore)(q + p, V(qval)(v, sv ? V(iload32)(sv + p) : V(iset)(s)));
    }
    for (; p < cnt; p++) q[p] = er_b_q_value(__builtin_fabs(x[p]) * (w ? w[p] : 1.0), sv ? sv[p] : s);
}

ER_VK static double V(q_max)(const double *x, const double *w, int64_t cnt, int *bad)
{
    V(d) mx = V(dzero)();
    V(m) nf = V(mnone)();
    int64_t p = 0;
    for (; p + ER_VW <= cnt; p += ER_VW) {
        V(d) v = V(dabs)(V(dload)(x + p));
        if (w) v = V(mul)(v, V(dload)(w + p));
        nf = V(mor)(nf, V(nonfinite)(v));
        mx = V(max)(mx, v); /* finite lanes: the larger */
    }
    double m = V(hmax)(mx);
    if (V(mbits)(nf)) *bad = 1;
    for (; p < cnt; p++) {
        double v = __builtin_fabs(x[p]) * (w ? w[p] : 1.0);
        if (!er_b_finite(v)) *bad = 1;
        else if (v > m) m = v;
    }
    return m;
}

/* The column maxima of 8 columns at a time (8 / ER_VW vectors per pass over the rows; the rest one by
 * one), the same comparisons. */
ER_VK static void V(q_colmax)(const double *b, int64_t ld, int64_t k, int64_t nj, double *mx, int *bad)
{
    int64_t t = 0;
    for (; t + 8 <= nj; t += 8) {
        V(d) m[8 / ER_VW];
        V(m) nf[8 / ER_VW];
        for (int h = 0; h < 8 / ER_VW; h++) m[h] = V(dzero)(), nf[h] = V(mnone)();
        for (int64_t p = 0; p < k; p++)
            for (int h = 0; h < 8 / ER_VW; h++) {
                V(d) v = V(dabs)(V(dload)(b + p * ld + t + h * ER_VW));
                nf[h] = V(mor)(nf[h], V(nonfinite)(v));
                m[h] = V(max)(m[h], v);
            }
        for (int h = 0; h < 8 / ER_VW; h++) {
            unsigned f = V(mbits)(nf[h]);
            V(dstore)(mx + t + h * ER_VW, m[h]);
            for (int l = 0; l < ER_VW; l++) bad[t + h * ER_VW + l] = (f >> l) & 1;
        }
    }
    for (; t < nj; t++) {
        double m = 0;
        bad[t] = 0;
        for (int64_t p = 0; p < k; p++) {
            double v = __builtin_fabs(b[p * ld + t]);
            if (!er_b_finite(v)) bad[t] = 1;
            else if (v > m) m = v;
        }
        mx[t] = m;
    }
}
