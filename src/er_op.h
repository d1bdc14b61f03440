/* er_op.h (internal): the operation interface: seed 002's three internal methods of a Result, over
 * which operations build results from results; mma/matmul fills it first (src/result.c). */
#ifndef ER_OP_H
#define ER_OP_H

#include <stddef.h>

#include "exactref/result.h"

typedef struct er_op er_op;

/*
 * What every operation's result offers the operations that take it as an input (results as inputs)
 * and the check.  An operation is one file that fills this table for its own result type (`self`)
 * and validates and computes in the front door (docs/architecture.md, "How to add an operation");
 * the rest (the slack a stored output leaves, er_op_slack, and results as inputs) is written once.
 * Outputs are numbered 0 .. outputs-1 and named (one output: "out"; matmul.backward: "grad_A",
 * "grad_B"; attention: "O", "lse"); an elementwise operation has the shape of its input.
 */
typedef struct er_op_class {
    const char *op; /* "matmul", "softmax", ... */
    /* the number of outputs and the name of output i */
    int (*outputs)(const void *self);
    const char *(*output_name)(const void *self, int i);
    /* _single: output i's rounded value (the exact answer rounded once, in the output format) */
    const er_tensor *(*single)(const void *self, int i);
    /* _bounds_of: output i's bounds for the tolerance arguments o (NULL: normal), kept by the result
     * until it is freed */
    er_status (*bounds_of)(void *self, int i, const er_tol_opts *o, const er_bounds **out, char *msg, size_t msg_size);
    /* _with_bounds: a new result of the same operation on the same inputs whose bounds take its
     * input results' bounds under o (what a result on earlier results means for other options); for
     * a result on arrays, the same result again.  *out is freed with release. */
    er_status (*with_bounds)(void *self, const er_tol_opts *o, er_op *out, char *msg, size_t msg_size);
    void (*release)(void *self);
} er_op_class;

/* One result seen through the interface. */
struct er_op {
    const er_op_class *cls;
    void *self;
};

/*
 * Results as inputs, for every operation: the slack of output i of `from` under the options o, per
 * element (row-major, bd->count of them): how far a value stored by an implementation under test may
 * be from the rounded one: its tolerance, or infinity where the result allows an infinity or NaN or
 * has no finite bound.  *slack is malloc'd (free it).  A later operation reads single(i) in place of
 * the array and widens its bounds by the slack (src/result.c: er_result_create_from).
 */
er_status er_op_slack(const er_op *from, int i, const er_tol_opts *o, double **slack, char *msg, size_t msg_size);

/* mma/matmul's result as an operation (src/result.c): the worked example. */
void er_result_as_op(er_result *r, er_op *op);

#endif /* ER_OP_H */
