/* er_bel.h: one element's bounds (the core's er_bel) stored into the bounds arrays of a Result
 * (er_bounds): the one layout every CPU-side computation of bounds writes. */
#ifndef ER_BEL_H
#define ER_BEL_H

#include <stdint.h>

#include "exactref/core/er_bounds.h"
#include "exactref/result.h"

static inline void er_bel_store(er_bounds *o, int64_t e, const er_bel *b)
{
    o->radius[e] = b->radius;
    o->tolerance[e] = b->tolerance;
    o->low[e] = b->low;
    o->high[e] = b->high;
    o->has_range[e] = (unsigned char)((b->flags & ER_BF_RANGE) != 0);
    o->may_pinf[e] = (unsigned char)((b->flags & ER_BF_PINF) != 0);
    o->may_ninf[e] = (unsigned char)((b->flags & ER_BF_NINF) != 0);
    o->may_nan[e] = (unsigned char)((b->flags & ER_BF_NAN) != 0);
}

#endif /* ER_BEL_H */
