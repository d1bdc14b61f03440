/* op_math_erf.c: a certified binary64 enclosure of erf (a positive series times the certified exp),
 * fast, with MPFR for the far small arguments; proof: docs/proofs/ops-math.md, "erf". */
#include <math.h>

#include "op_impl.h"

/* 2/sqrt(pi) lies in [ERF_C_LO, ERF_C_HI] (consecutive binary64 values; tests/ops/test_ops_math.c checks
 * them against MPFR) */
#define ERF_C_LO 0x1.20dd750429b6dp+0
#define ERF_C_HI 0x1.20dd750429b6ep+0

void er_ops_erf_fast(double x, double *lo, double *hi)
{
    double a = x < 0 ? -x : x, l, h;
    if (x != x || a < 0x1p-300) { /* NaN, zeros (their sign), the far small: MPFR */
        er_ops_erf(x, lo, hi);
        return;
    }
    if (a >= 6) {
        /* 1 - erf a = erfc a <= erfc 6 < 2.2e-17 < 2^-54, and erf a < 1: [1 - 2^-53, 1] holds it */
        l = 0x1.fffffffffffffp-1;
        h = 1;
    } else {
        /* erf a = (2/sqrt(pi)) e^(-a^2) sum_{n>=0} T_n, T_0 = a, T_{n+1} = T_n 2a^2 / (2n + 3): every term
         * positive; the lower sum of terms rounded down, the upper of terms rounded up plus the tail */
        double q = a * a, ql = er_b_down(q), qh = er_b_up(q);
        double wl = er_b_down(2 * ql), wh = er_b_up(2 * qh); /* 2 a^2 */
        double tl = a, th = a, sl = a, sh = a;
        for (int n = 0;; n++) {
            double d = 2.0 * n + 3; /* exact */
            tl = er_b_down(er_b_down(tl * wl) / d);
            th = er_b_up(er_b_up(th * wh) / d);
            sl = er_b_down(sl + tl);
            sh = er_b_up(sh + th);
            /* the next ratio T_{n+2} / T_{n+1} = 2a^2 / (2n + 5) <= r, and every later one smaller: the tail
             * after T_{n+1} is at most T_{n+1} r / (1 - r) <= T_{n+1} when r <= 1/2 */
            if (wh <= 0.5 * (2.0 * n + 5) && th <= 0x1p-60 * sl) {
                sh = er_b_up(sh + th);
                break;
            }
        }
        double el, eh;
        er_ops_exp_iv(-qh, -ql, &el, &eh);
        l = er_b_down(er_b_down(ERF_C_LO * sl) * el);
        h = er_b_up(er_b_up(ERF_C_HI * sh) * eh);
        if (h > 1) h = 1;
        if (l < 0) l = 0;
    }
    if (x < 0) {
        *lo = -h;
        *hi = -l;
    } else {
        *lo = l;
        *hi = h;
    }
}
