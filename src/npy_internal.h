/* npy_internal.h: what the .npy file format (npy.c) shares with the tensor conversions (npy_tensor.c). */
#ifndef ER_NPY_INTERNAL_H
#define ER_NPY_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "exactref/exactref.h"
#include "exactref/npy.h"

/* A dtype the reader knows: kind 'f', 'i', 'u', or 'V' (void: ml_dtypes' bfloat16 and float8 arrays). */
typedef struct _er_npy_dtype {
    const char *descr; /* normalised spelling */
    char kind;
    int size;
    int fmt; /* the format its elements are (floats, and the default for integers); -1 none */
} _er_npy_dtype;

void _er_npy_msg(char *msg, size_t size, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
void _er_npy_msg_ok(char *msg, size_t size);
const char *_er_npy_errstr(int err, char *buf, size_t size);
void _er_npy_shape_str(int ndim, const int64_t *shape, char *buf, size_t size);
void _er_npy_index_str(int ndim, const int64_t *shape, uint64_t k, char *buf, size_t size);
const _er_npy_dtype *_er_npy_dtype_find(const char *s, size_t len, char *why, size_t why_size);
uint64_t _er_npy_load_le(const unsigned char *p, int size);
void _er_npy_store_le(unsigned char *p, int size, uint64_t v);
er_status _er_npy_shape_bytes(const char *name, int ndim, const int64_t *shape, size_t itemsize, size_t *nbytes,
                              char *msg, size_t msg_size);
size_t _er_npy_make_header(char *buf, size_t size, const char *descr, int ndim, const int64_t *shape);
/* How the output rules treat path (nothing is opened or written): 0 replaced atomically (new, regular,
 * or a link's target), 1 written in place (a FIFO, a device), -1 refused (with the reason in msg). */
int _er_npy_output_kind(const char *path, char *msg, size_t msg_size);
er_status _er_npy_write_file(const char *path, const char *header, size_t hsize, const void *data, size_t nbytes,
                             char *msg, size_t msg_size);

#endif
