/* scaled_internal.h: the front door's side of scaled products (src/scaled.c): the scaled standard's
 * parser (src/standards.c), its bounds, and the plan a scaled result keeps. */
#ifndef ER_SCALED_INTERNAL_H
#define ER_SCALED_INTERNAL_H

#include <stddef.h>

#include "exactref/result.h"

/* "scaled:bk=128[,partial=f32|<engine model>]" into s (defined in src/standards.c, beside the engines'
 * parser it takes the partial from). */
er_status er_standard_parse_scaled(const char *spec, er_standard *s, char *msg, size_t msg_size);

/* The bounds of result r under std into out (allocated for r's elements): r must come from
 * er_scaled_result_create and std be a scaled standard (else ER_EINVAL with a sentence). */
er_status er_scaled_bounds(er_result *r, const er_tol_opts *o, const er_standard *std, er_bounds *out, char *msg,
                           size_t msg_size);

/* Free a scaled result's plan (NULL: nothing). */
void er_scaled_plan_free(void *plan);

#endif /* ER_SCALED_INTERNAL_H */
