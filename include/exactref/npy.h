/* npy.h: reading and writing NumPy .npy files, and converting their arrays to and from tensors. */
#ifndef EXACTREF_NPY_H
#define EXACTREF_NPY_H

#include <stddef.h>
#include <stdint.h>

#include "exactref/status.h"
#include "exactref/mma.h" /* er_tensor */
#include "exactref/export.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * A .npy array as read: the dtype string normalised to one of '<f8' '<f4' '<f2' '|i1' '|u1' '<i2'
 * '<u2' '<i4' '<u4' '<i8', or the void '|V1' '|V2' that np.save writes for ml_dtypes arrays (float8 and
 * float4 types, bfloat16; '<V2' and '=V2' are accepted spellings) ('=' and 1-byte '<' spellings are
 * accepted on reading), C order, 0 to 8
 * dimensions, and nbytes = itemsize * product(shape) bytes of little-endian elements in data (malloc'd;
 * never NULL after a successful read, even for an empty array).
 *
 * Supported files: format versions 1.0, 2.0 and 3.0, little-endian dtypes only, C order only.  Every
 * malformed file (bad magic, unsupported version, a header that is not the expected dict, a header or
 * data that the file is too short for, trailing bytes, negative or huge dimensions: more than 2^40
 * elements) gives ER_EINVAL and a sentence naming the file and the problem.  Nothing is allocated
 * before the sizes have been checked against the length of the file.
 */
typedef struct er_npy {
    char descr[16];
    int ndim;
    int64_t shape[8];
    size_t itemsize;
    void *data;
    size_t nbytes;
} er_npy;

#define ER_NPY_MAX_DIMS 8
#define ER_NPY_MAX_ELEMENTS (INT64_C(1) << 40)

/* Read the .npy file at path.  On error *out is left empty (er_npy_free is harmless on it). */
ER_API er_status er_npy_read(const char *path, er_npy *out, char *msg, size_t msg_size);

/* Parse a .npy file held in memory; name is used in messages (NULL: "<memory>").  The data are copied. */
ER_API er_status er_npy_parse(const void *buf, size_t len, const char *name, er_npy *out, char *msg,
                       size_t msg_size);

/* Free the data of an array and empty it (a NULL pointer or an empty array is fine). */
ER_API void er_npy_free(er_npy *a);

/*
 * The output rules, for every file the library writes:
 *   - a new file, or an existing regular file, is replaced atomically: the bytes go to a temporary file
 *     in the same directory, which is fsync'd, given the old file's mode, and renamed over it; on any
 *     error nothing is left behind and the old file is untouched;
 *   - a symbolic link is followed: its target is replaced as above (the link stays a link);
 *   - anything else that exists (a FIFO, a character device, a terminal) is opened and written in
 *     place, never replaced;
 *   - refused with ER_EINVAL and a message: a directory, a socket, a dangling link, a regular file that
 *     is read-only (no write permission bit: refused even for root), a directory the caller cannot
 *     create files in;
 *   - while the temporary file exists, SIGINT, SIGTERM, SIGHUP and SIGQUIT are held (the thread's
 *     signal mask), so an interrupted program leaves no temporary file: the signal is delivered once
 *     the file is renamed or removed;
 *   - a write beyond the file size limit (ulimit -f) fails with EFBIG, and the temporary file is
 *     removed, only if the program ignores SIGXFSZ (the exactref command and Python do); otherwise
 *     the system ends the program at that write.  Likewise SIGPIPE for a FIFO whose reader has gone.
 * Out of memory gives ER_ENOMEM.
 */

/* Check that path may be written under the output rules, before any work is done (nothing is written). */
ER_API er_status er_npy_output_check(const char *path, char *msg, size_t msg_size);

/* Write len bytes to path under the output rules (any content: the report files use it). */
ER_API er_status er_npy_write_bytes(const char *path, const void *data, size_t len, char *msg, size_t msg_size);

/*
 * Write a C-order array of ndim (0 to 8) dimensions with dtype descr (one of the dtypes above) and
 * itemsize * product(shape) bytes at data, as a version 1.0 file, under the output rules.
 */
ER_API er_status er_npy_write(const char *path, const char *descr, int ndim, const int64_t *shape,
                       const void *data, char *msg, size_t msg_size);

/*
 * An npy array (2-D or 3-D) as a contiguous row-major tensor of bit patterns of a format.
 * declared: the format id the elements must have, or -1 to let the dtype decide (float64 f64, float32
 * f32, float16 f16, int8 i8, uint8 u8, int16 i16, int32 i32, int64 i64; uint16 and uint32 need a
 * declared format).  How the elements are read:
 *   - float64, float32, float16 arrays hold values, each of which must be exactly a value of the
 *     declared format (NaN and infinities only where it has them): ER_EINEXACT otherwise;
 *   - unsigned, int8, int16 and void arrays whose itemsize is the declared float format's storage size
 *     (uint8/int8/|V1 for 8-, 6- and 4-bit formats, uint16/int16/<V2 for f16 and bf16, uint32 for f32
 *     and tf32) hold raw bit patterns: what torch's t.view(torch.int16).numpy()
 *     and ml_dtypes' np.save give.  A pattern with bits above the width, or tf32's padding set, gives
 *     ER_EPATTERN; a uint16 or uint32 array declared as a float format of another size gives ER_EINVAL;
 *   - a void array needs a declared float format of its size (ER_EINVAL otherwise, saying so);
 *   - every other integer array holds integers, each of which must be exactly a value of the declared
 *     format (an integer format's range, or a float format's values: int32 declared f32, int8 declared f16):
 *     ER_EINEXACT otherwise.
 * Errors name the file, the first offending index ([i, j] or [b, i, j]) and the value (%a and %.17g
 * for floats, decimal for integers, hexadecimal for patterns).  A float64, float32 or float16 array
 * declared as its own format keeps its patterns bit for bit, NaN payloads included, and so does a
 * float32 array declared tf32 whose patterns are tf32 patterns; other NaNs become the format's NaN.
 * On success *storage is the malloc'd buffer that t->data points to (the caller frees it).
 */
ER_API er_status er_npy_to_tensor(const er_npy *a, const char *name, int declared, er_tensor *t, void **storage,
                           char *msg, size_t msg_size);

/*
 * A tensor (2-D or 3-D, any strides) written as a C-order .npy file with its format's native dtype:
 * f64 '<f8', f32 and tf32 '<f4', f16 '<f2', i8 '|i1', u8 '|u1', i16 '<i2', i32 '<i4', i64 '<i8'; raw
 * patterns for the rest: '<u2' for bf16, '|u1' for formats of at most 8 bits.  Every pattern is
 * checked (ER_EPATTERN names the first bad index).  Written under the output rules, as er_npy_write.
 */
ER_API er_status er_npy_write_tensor(const char *path, const er_tensor *t, char *msg, size_t msg_size);

#ifdef __cplusplus
}
#endif
#endif /* EXACTREF_NPY_H */
