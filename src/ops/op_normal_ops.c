/* op_normal_ops.c: normal() of quantize, attention and the softmax backwards (see op_normal.c). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../host/er_msg.h"
#include "exactref/formats.h"
#include "op_normal.h"

#define msgf er_msgf

er_status er_opn_quantize(er_opres *r, int i, const er_openv *env, uint64_t *bits, char *msg, size_t msg_size)
{
    (void)i; (void)env; (void)bits;
    return msgf(msg, msg_size, ER_EUNSUPPORTED, "normal() of %s is not emulated", r->def->name);
}

er_status er_opn_attention(er_opres *r, int i, const er_openv *env, uint64_t *bits, char *msg, size_t msg_size)
{
    (void)i; (void)env; (void)bits;
    return msgf(msg, msg_size, ER_EUNSUPPORTED, "normal() of %s is not emulated", r->def->name);
}

er_status er_opn_softmax_backward(er_opres *r, int i, const er_openv *env, uint64_t *bits, char *msg,
                                  size_t msg_size)
{
    (void)i; (void)env; (void)bits;
    return msgf(msg, msg_size, ER_EUNSUPPORTED, "normal() of %s is not emulated", r->def->name);
}
