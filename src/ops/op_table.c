/* op_table.c: the table of operations beyond matmul: one line per operation (its er_opdef, in its own
 * file of src/ops/).  A new operation is one file and one line here. */
#include <pthread.h>
#include <string.h>

#include "op_impl.h"

static const er_opdef *const table[] = {
    &er_opdef_softmax,
    &er_opdef_layer_norm,
    &er_opdef_rms_norm,
    &er_opdef_quantize,
    &er_opdef_softmax_backward,
    &er_opdef_log_softmax_backward,
    &er_opdef_layer_norm_backward,
    &er_opdef_rms_norm_backward,
    &er_opdef_log_softmax,
    &er_opdef_logsumexp,
    &er_opdef_exp,
    &er_opdef_relu,
    &er_opdef_sigmoid,
    &er_opdef_tanh,
    &er_opdef_silu,
    &er_opdef_gelu,
    &er_opdef_add,
    &er_opdef_mul,
    &er_opdef_linear,
    &er_opdef_attention,
    &er_opdef_attention_backward,
};

#define NOPS (sizeof table / sizeof table[0])

const er_opdef *er_ops_find(const char *name)
{
    for (size_t i = 0; i < NOPS; i++)
        if (!strcmp(table[i]->name, name)) return table[i];
    return NULL;
}

static char names[1024];

static void make_names(void)
{
    size_t n = 0;
    names[0] = 0;
    for (size_t i = 0; i < NOPS && n + strlen(table[i]->name) + 2 < sizeof names; i++) {
        if (n) names[n++] = ' ';
        memcpy(names + n, table[i]->name, strlen(table[i]->name) + 1);
        n += strlen(table[i]->name);
    }
}

const char *er_op_names(void)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, make_names); /* the same text every time: built once (the table is constant) */
    return names;
}
