/* interval_tensor.c: the one-pass bounds summary of a whole tensor (issue 7: whole-tensor reasoning). */
#include <math.h>
#include <string.h>

#include "exactref/exactref.h"

/*
 * The join of the point intervals of every element: [min, max], integral when every element is an
 * integer, exact as er_interval_point defines it for the endpoints; top when an element is NaN.  A
 * 2-D or 3-D tensor of any float or integer format, any strides.  Sound: every element is one of the
 * joined points, and the join of points is their convex hull (docs/interval.md).
 */
er_status er_interval_of_tensor(const er_tensor *t, er_interval *out)
{
    er_format_info fi;
    if (!t || !out || t->ndim < 2 || t->ndim > 3 || er_format_get_info(t->format, &fi) != ER_OK) return ER_EINVAL;
    int64_t B = t->ndim == 3 ? t->shape[0] : 1, M = t->shape[t->ndim - 2], N = t->shape[t->ndim - 1];
    int64_t sb = t->ndim == 3 ? t->strides[0] : 0, s0 = t->strides[t->ndim - 2], s1 = t->strides[t->ndim - 1];
    double lo = INFINITY, hi = -INFINITY;
    int integral = 1, any = 0;
    for (int64_t b = 0; b < B; b++)
        for (int64_t i = 0; i < M; i++)
            for (int64_t j = 0; j < N; j++) {
                uint64_t x = 0;
                memcpy(&x, (const unsigned char *)t->data + (size_t)(b * sb + i * s0 + j * s1) * (size_t)fi.storage_bytes,
                       (size_t)fi.storage_bytes);
                er_val v = er_decode(t->format, x);
                double d;
                if (v.cls == ER_CLASS_NAN) {
                    *out = er_interval_top();
                    return ER_OK;
                }
                if (v.cls == ER_CLASS_INF) d = v.sign ? -INFINITY : INFINITY;
                else if (v.cls == ER_CLASS_ZERO) d = 0.0;
                else {
                    /* sig * 2^exp: an integer when exp >= 0 or the low -exp bits of sig are zero */
                    if (v.exp < 0 && (v.exp <= -64 || (v.sig & ((UINT64_C(1) << -v.exp) - 1u)))) integral = 0;
                    d = ldexp(v.sign ? -(double)v.sig : (double)v.sig, v.exp); /* exact below 2^53 bits */
                    if (fi.kind != ER_KIND_FLOAT && v.sig >> 53) {
                        /* a 64-bit integer that binary64 cannot hold: widen outward */
                        d = v.sign ? -ldexp((double)(v.sig >> 11) + 1.0, 11) : ldexp((double)(v.sig >> 11) + 1.0, 11);
                    }
                }
                any = 1;
                if (d < lo) lo = d;
                if (d > hi) hi = d;
            }
    if (!any) {
        *out = er_interval_of_int_range(1, 0); /* empty */
        return ER_OK;
    }
    er_interval r = er_interval_join(er_interval_point(lo), er_interval_point(hi));
    r.integral = integral && isfinite(lo) && isfinite(hi);
    *out = r;
    return ER_OK;
}
