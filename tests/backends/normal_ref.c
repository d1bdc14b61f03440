/* normal_ref.c: the independent reference of normal() for tests/backends: index-order accumulation in
 * the host's binary64 arithmetic (each product rounded to compute, each sum by TwoSum and round to odd
 * in binary64 then to compute: one rounding, a new partial sum where the next addition would
 * overflow, the partial sums added in order), not the core's integer emulation that every backend
 * runs (include/exactref/core/er_d64.h, er_mma.h: er_mma_normal_element). */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "host/er_host.h"
#include "normal_ref.h"

/* Subnormals of compute cf to the zero of their sign (flush_to_zero). */
static double flush_sub(int cf, double x)
{
    er_format_info fi;
    er_format_get_info(cf, &fi);
    if (fi.has_subnormals && x != 0 && isfinite(x) && fabs(x) < ldexp(1.0, fi.emin)) return x < 0 ? -0.0 : 0.0;
    return x;
}

/* x rounded to cf to nearest even, as binary64. */
static double to_c(int cf, double x)
{
    uint64_t r = 0;
    double y = 0;
    er_convert_bits(ER_FMT_F64, cf, er_double_to_bits(x), ER_RND_NEAREST_EVEN, 0u, &r, NULL);
    er_from_bits(cf, r, &y);
    return y;
}

/* x + y rounded to nearest even into compute cf (binary64 operands that are values of cf). */
static double add_rn(int cf, double x, double y)
{
    if (cf == ER_FMT_F64) return x + y;
    /* TwoSum, then round to odd in binary64, then to cf: one rounding, since cf has at most 24
     * significand bits <= 51 (Boldo and Melquiond) */
    double s = x + y, bp = s - x, e = (x - (s - bp)) + (y - bp);
    if (e != 0 && isfinite(s)) {
        uint64_t u = er_double_to_bits(s);
        if ((u & 1u) == 0) s = (e > 0) == (s > 0) ? er_bits_to_double(u + 1) : er_bits_to_double(u - 1);
    }
    return to_c(cf, s);
}

static double round_c(int cf, double x, int ftz)
{
    double r = to_c(cf, x);
    return ftz ? flush_sub(cf, r) : r;
}

/* An operand's value: flushed with ER_OPT_FTZ_IN, times its scale's magnitude. */
static double operand(const er_mma_args *A, const er_view *x, const er_view *s, int64_t b, int64_t i, int64_t j, int side)
{
    er_val v = er_val_flush_in(er_decode(x->fmt, er_view_load(x, b, i, j)), A->opts);
    if (A->a_scale)
        v = er_val_scaled(v, er_decode(s->fmt, side ? er_view_load(s, b, i / A->block, j) : er_view_load(s, b, i, j / A->block)));
    return er_val_to_double(v);
}

int er_tb_normal_ref(const er_mma_args *A, int compute, int ftz, er_tensor *out)
{
    er_view va = er_view_of(A->a), vb = er_view_of(A->b), vc, vsa, vsb;
    int64_t B = out->ndim == 3 ? out->shape[0] : 1, M = out->shape[out->ndim - 2], N = out->shape[out->ndim - 1];
    int64_t K = A->a->shape[A->a->ndim - 1];
    int bytes = er_storage_bytes(out->format);
    double *parts = (double *)malloc(sizeof(double) * (size_t)(K + 2));
    if (!parts) return ER_ENOMEM;
    if (A->c) vc = er_view_of(A->c);
    if (A->a_scale) {
        vsa = er_view_of(A->a_scale);
        vsb = er_view_of(A->b_scale);
    }
    for (int64_t b = 0; b < B; b++)
        for (int64_t i = 0; i < M; i++)
            for (int64_t j = 0; j < N; j++) {
                int np = 0, have = 0;
                double acc = 0;
                uint64_t bits = 0;
                if (A->c) {
                    acc = round_c(compute, er_val_to_double(er_decode(vc.fmt, er_view_load(&vc, b, i, j))), ftz);
                    have = 1;
                }
                for (int64_t p = 0; p < K; p++) {
                    double a = operand(A, &va, &vsa, b, i, p, 0), bb = operand(A, &vb, &vsb, b, p, j, 1);
                    if (ftz) {
                        a = flush_sub(compute, a);
                        bb = flush_sub(compute, bb);
                    }
                    double x = round_c(compute, a * bb, ftz); /* a*b exact for inputs up to f32 */
                    if (!have) {
                        acc = x;
                        have = 1;
                        continue;
                    }
                    double t = add_rn(compute, acc, x);
                    if (ftz) t = flush_sub(compute, t);
                    if (isinf(t) && isfinite(acc) && isfinite(x)) {
                        parts[np++] = acc; /* the next addition would overflow: a new partial sum */
                        acc = x;
                    } else {
                        acc = t;
                    }
                }
                double r = acc;
                if (np) {
                    double s = parts[0];
                    for (int q = 1; q < np; q++) s = add_rn(compute, s, parts[q]);
                    r = add_rn(compute, s, acc);
                }
                if (!have) r = 0.0;
                /* a NaN result is the output format's canonical NaN */
                if (r != r) r = er_bits_to_double(UINT64_C(0x7FF8000000000000));
                er_convert_bits(ER_FMT_F64, out->format, er_double_to_bits(r), A->rounding, A->opts, &bits, NULL);
                er_tensor_store(out, b, i, j, bits, bytes);
            }
    free(parts);
    return ER_OK;
}
