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
/*
 * Memory-mapped reading (what `exactref check` uses; EXACTREF_NO_MMAP=1 turns it off there).
 * _er_npy_map_read validates a file exactly as er_npy_read does (the same statuses and messages) and
 * then maps it read-only (MAP_PRIVATE, PROT_READ): out->data points into the mapping, and map->base
 * and map->len say what to unmap.  Where a mapping is not possible (an empty array, a file system
 * that refuses mmap) the data are read as er_npy_read reads them and map->base is NULL.  Only regular
 * files are read at all.  The size is taken at open and again once mapped (a file cut in between is
 * refused); a file cut WHILE its mapping is in use makes the next access to a page past its new end
 * raise SIGBUS: a caller that maps must handle that signal (the command reports it and exits 3,
 * src/cli/cli_mma.c), which is why these functions are internal.  A file changed in place (same size)
 * during use can be seen half-changed: the tensors made in place (_er_npy_to_tensor_mapped) are only
 * those of formats where every bit pattern of the storage is valid, so that it cannot give a pattern
 * the library refuses; the answer for such a file has no meaning.
 */
typedef struct _er_npy_map {
    void *base; /* NULL: the data were read into memory (out->data is malloc'd) */
    size_t len;
} _er_npy_map;
er_status _er_npy_map_read(const char *path, er_npy *out, _er_npy_map *map, char *msg, size_t msg_size);
/* Unmap (or free, for data that were read) and empty both. */
void _er_npy_map_release(er_npy *a, _er_npy_map *map);
/* Whether [p, p + n) lies inside the mapping. */
int _er_npy_map_holds(const _er_npy_map *map, const void *p, size_t n);
/* Give the pages of [p, p + n) back (Linux: madvise MADV_DONTNEED; the next access reads them again
 * from the file or the page cache); nothing unless the range lies in the mapping (never on malloc'd
 * data, which MADV_DONTNEED would zero).  Resident memory then holds only the pages in use. */
void _er_npy_map_drop(const _er_npy_map *map, const void *p, size_t n);
/*
 * er_npy_to_tensor over an array that _er_npy_map_read gave: the same validation, statuses and
 * messages.  When map->base is set, the format's patterns fill its storage (width = 8 x storage
 * bytes, no padding: f64, f32, f16, bf16, the 8-bit floats, the integers), the array's elements are
 * those patterns as they are (a raw-pattern dtype, or the format's own float dtype, or an integer
 * dtype of the same width) and the data are 16-byte aligned, the tensor points into the mapping
 * (*storage NULL: nothing to free); otherwise it is a decoded copy (*storage malloc'd).  Either way
 * the pages read while checking are given back as it goes (_er_npy_map_drop), so that the check of a
 * large file does not hold the whole file resident.
 */
er_status _er_npy_to_tensor_mapped(const er_npy *a, const _er_npy_map *map, const char *name, int declared,
                                   er_tensor *t, void **storage, char *msg, size_t msg_size);
er_status _er_npy_write_file(const char *path, const char *header, size_t hsize, const void *data, size_t nbytes,
                             char *msg, size_t msg_size);

#endif
