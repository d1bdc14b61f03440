/* op_normal.h (internal): the steps normal() emulations share (op_normal.c) and the emulations of the
 * operations with their own files (op_normal_ops.c). */
#ifndef ER_OP_NORMAL_H
#define ER_OP_NORMAL_H

#include "op_impl.h"

/* the library functions er_opn_lib rounds correctly */
enum { ER_OPN_EXP, ER_OPN_LOG, ER_OPN_TANH, ER_OPN_ERF };

/* x rounded to nearest even into compute (flushed to zero, sign kept, under env->ftz) */
double er_opn_rc(const er_openv *env, double x);
/* library function fn of x correctly rounded in compute (flushed under env->ftz) */
double er_opn_lib(const er_openv *env, int fn, double x);
/* ER_EUNSUPPORTED where compute is neither f64 nor at most 25 significand bits */
er_status er_opn_check_compute(const er_opres *r, const er_openv *env, char *msg, size_t msg_size);
/* input k's values (row-major) read into compute; *out NULL for an absent input; malloc'd */
er_status er_opn_read(const er_opres *r, int k, const er_openv *env, double **out, char *msg, size_t msg_size);

/* one row of the softmax family (values in compute at row[j st], j < len): d[j] = RN(x - max), ex[j] =
 * EXP(d[j]); returns the index-order sum, *m_out the maximum (NaN where a value is NaN) */
double er_opn_smx_row(const er_openv *env, const double *row, int64_t len, int64_t st, double *d, double *ex,
                      double *m_out);
/* the rows of the option dim of input 0: outer x len x inner */
er_status er_opn_smx_shape(er_opres *r, int64_t *outer, int64_t *len, int64_t *inner, char *msg, size_t msg_size);
/* the number of elements of a norm's row (normalized_shape; default the last dimension) */
int64_t er_opn_norm_count(er_opres *r);
/* a norm's eps option (rms_norm's default the input format's epsilon) and row length N (> 0, else error) */
er_status er_opn_norm_opts(er_opres *r, int rms, double *eps, int64_t *N, char *msg, size_t msg_size);
/* one norm row's index-order statistics in compute: *mean (0 for rms), and 1 / sqrt(var + eps) returned */
double er_opn_norm_rstd(const er_openv *env, const double *xr, int64_t N, int rms, double ec, double *mean);

#endif /* ER_OP_NORMAL_H */
