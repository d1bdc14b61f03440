/* interval_tensor.c: the one-pass bounds summary of a whole tensor (issue 7: whole-tensor reasoning). */
#include <math.h>
#include <string.h>

#include "exactref/exactref.h"
#include "exactref/core/er_round.h"

/*
 * The join of the point intervals of every element: [min, max], integral when every element is an
 * integer, exact as er_interval_point defines it for the endpoints; top when an element is NaN.  A
 * 2-D or 3-D tensor of any float or integer format, any strides.  Sound: every element is one of the
 * joined points, and the join of points is their convex hull (docs/interval.md).
 */
/* Fold n elements into (lo, hi, integral); 1 if one is NaN.  x: each element's binary64 value, or its
 * value rounded down when xu is given; xu: the same rounded up (64-bit integers beyond 2^53). */
static int fold_(const double *x, const double *xu, size_t n, double *lo, double *hi, int *integral)
{
    double l = *lo, h = *hi;
    int in = *integral;
    for (size_t i = 0; i < n; i++) {
        double v = x[i], u = xu ? xu[i] : v;
        if (v != v) return 1;
        l = v < l ? v : l;
        h = u > h ? u : h;
        /* below 2^62 in magnitude the int64 cast is defined; every binary64 at or above 2^53 is an integer */
        if (fabs(v) < 0x1p62) in &= (double)(int64_t)v == v;
    }
    *lo = l;
    *hi = h;
    *integral = in;
    return 0;
}

er_status er_interval_of_tensor(const er_tensor *t, er_interval *out)
{
    er_format_info fi;
    double buf[1024], bufu[1024];
    int inexact = 0; /* a 64-bit integer was rounded outward */
    if (!t || !out || t->ndim < 2 || t->ndim > 3 || er_format_get_info(t->format, &fi) != ER_OK) return ER_EINVAL;
    int64_t B = t->ndim == 3 ? t->shape[0] : 1, M = t->shape[t->ndim - 2], N = t->shape[t->ndim - 1];
    int64_t sb = t->ndim == 3 ? t->strides[0] : 0, s0 = t->strides[t->ndim - 2], s1 = t->strides[t->ndim - 1];
    double lo = INFINITY, hi = -INFINITY;
    int integral = 1, wide_int = fi.kind != ER_KIND_FLOAT && fi.width == 64;
    if (B * M * N == 0) {
        *out = er_interval_of_int_range(1, 0); /* empty */
        return ER_OK;
    }
    for (int64_t b = 0; b < B; b++)
        for (int64_t i = 0; i < M; i++) {
            const unsigned char *row = (const unsigned char *)t->data + (size_t)(b * sb + i * s0) * (size_t)fi.storage_bytes;
            for (int64_t j0 = 0; j0 < N; j0 += 1024) {
                size_t n = (size_t)(N - j0 < 1024 ? N - j0 : 1024);
                if (s1 == 1 && !wide_int) {
                    /* the core's array conversion: every value of every format except i64's is a binary64 */
                    if (er_convert_array(t->format, ER_FMT_F64, row + (size_t)j0 * (size_t)fi.storage_bytes, buf, n,
                                         ER_RND_NEAREST_EVEN, 0u, NULL, NULL) != ER_OK)
                        return ER_EPATTERN;
                } else {
                    for (size_t j = 0; j < n; j++) {
                        uint64_t x = 0;
                        memcpy(&x, row + (size_t)((j0 + (int64_t)j) * s1) * (size_t)fi.storage_bytes, (size_t)fi.storage_bytes);
                        if (wide_int) {
                            /* outward to binary64, each side on its own: a 64-bit integer beyond 2^53 may
                             * not be one, so lo takes its value rounded down and hi its value rounded up
                             * (both integers: the summary stays integral) */
                            er_val v = er_decode(t->format, x);
                            er_res dn = er_convert(ER_FMT_I64, ER_FMT_F64, v.sig, ER_RND_NEGATIVE_INF, 0u);
                            er_res up = er_convert(ER_FMT_I64, ER_FMT_F64, v.sig, ER_RND_POSITIVE_INF, 0u);
                            double mdn, mup;
                            if (v.sig >> 63) {
                                /* 2^63 and beyond (u64 data, or -2^63): the i64 conversion takes no such
                                 * magnitude; binary64 has every value in [2^63, 2^64] at step 2^11 */
                                uint64_t q = v.sig >> 11, r = v.sig & 0x7FFu;
                                mdn = ldexp((double)q, 11);
                                mup = ldexp((double)(q + (r != 0)), 11);
                            } else {
                                memcpy(&mdn, &dn.bits, 8);
                                memcpy(&mup, &up.bits, 8);
                            }
                            if (mdn != mup) inexact = 1;
                            buf[j] = v.sign ? -mup : mdn;
                            bufu[j] = v.sign ? -mdn : mup;
                        } else {
                            er_res r = er_convert(t->format, ER_FMT_F64, x, ER_RND_NEAREST_EVEN, 0u);
                            memcpy(&buf[j], &r.bits, 8);
                        }
                    }
                }
                if (fold_(buf, wide_int ? bufu : NULL, n, &lo, &hi, &integral)) {
                    *out = er_interval_top();
                    return ER_OK;
                }
            }
        }
    er_interval r = er_interval_join(er_interval_point(lo), er_interval_point(hi));
    r.integral = integral && isfinite(lo) && isfinite(hi);
    if (inexact) r.exact = 0;
    *out = r;
    return ER_OK;
}
