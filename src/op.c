/* op.c: what the operation interface (src/er_op.h) gives every operation once: the slack a stored
 * output leaves its later readers (results as inputs). */
#include <math.h>
#include <stdlib.h>

#include "er_op.h"
#include "host/er_msg.h"

er_status er_op_slack(const er_op *from, int i, const er_tol_opts *o, double **slack, char *msg, size_t msg_size)
{
    const er_bounds *bd;
    er_status st;
    *slack = NULL;
    if ((st = from->cls->bounds_of(from->self, i, o, &bd, msg, msg_size)) != ER_OK) return st;
    double *s = (double *)malloc(sizeof(double) * (size_t)(bd->count ? bd->count : 1));
    if (!s) return er_msgf(msg, msg_size, ER_ENOMEM, "out of memory for the slack of %lld elements", (long long)bd->count);
    for (int64_t e = 0; e < bd->count; e++) {
        /* within tolerance of rounded; an allowed infinity or NaN, or no finite bound, leaves none */
        int special = bd->may_pinf[e] || bd->may_ninf[e] || bd->may_nan[e] || !bd->has_range[e];
        double t = bd->tolerance[e];
        s[e] = special || !(t >= 0) ? INFINITY : t;
    }
    *slack = s;
    return ER_OK;
}
