/* er_report.h (internal): the bounds' compact keys, made once and kept with the bounds by the result
 * (src/result.c), and the covers (src/report_covers.c) and scoring (src/report.c) that read them. */
#ifndef ER_REPORT_INTERNAL_H
#define ER_REPORT_INTERNAL_H

#include <stdint.h>

#include "exactref/exactref.h"
#include "exactref/report.h"

/* The finite range of every element as two order-mapped keys in the output's own width (16 bits for
 * formats of up to 2 storage bytes, 32 for 4; an empty range, has_range 0 or a NaN or invalid end, as
 * low > high), the three may-flags in one byte (with, once er_check_report_fused has run, a fourth: the
 * rounded answer's own covers decision), and the number of elements whose range holds zero. */
typedef struct er_bkeys er_bkeys;
void er_bkeys_free(er_bkeys *k);
/* Every er_bkeys begins with the function that frees it, so that the result keeping them in its cache
 * (src/result_internal.h) frees them without calling up into the covers (no circle of calls). */
typedef struct er_bkeys_head {
    void (*release)(er_bkeys *k);
} er_bkeys_head;
static inline void er_bkeys_release(er_bkeys *k)
{
    if (k) ((er_bkeys_head *)(void *)k)->release(k);
}

/* er_bounds_covers through the keys kept at *keys (made on the first call for this output format;
 * keys NULL: none made, the bounds read directly).  *zero_ok (may be NULL) receives the number of
 * elements whose finite range contains zero, or -1 when it was not counted. */
er_status er_bounds_covers_kept(const er_bounds *bd, er_bkeys **keys, const er_tensor *output, int exact_int,
                                unsigned char *covered, int64_t *outside, int64_t *zero_ok, char *msg,
                                size_t msg_size);

/* er_result_covers with the count above and the bounds used (src/report_covers.c, beside the keys). */
er_status er_result_covers_kept(er_result *r, const er_tol_opts *o, const er_tensor *output, unsigned char *covered,
                                int64_t *outside, int64_t *zero_ok, const er_bounds **bounds, char *msg,
                                size_t msg_size);

/* er_check_report_score with zero_known, the number of ranges that hold zero (er_bounds_covers_kept's),
 * or -1 to count them here. */
er_status er_check_report_score_kept(const er_bounds *bd, const er_tensor *output, const er_tensor *R,
                                     const unsigned char *cov, int64_t outside, int64_t zero_known, const er_tensor *a,
                                     const er_tensor *b, int64_t *outside_index, int64_t outside_cap,
                                     er_check_report *rep, char *msg, size_t msg_size);

/* covers and the scoring in one pass (what er_check_report_compute runs for f32, bf16 and f16 outputs with
 * unit strides): covered written (covered NULL: the outside elements listed as they come instead), the
 * report as er_check_report_score's, through the keys at *keys (made
 * here when absent or made for another format; kept there for the caller to free).  ER_EINVAL, and
 * nothing done, for other outputs. */
er_status er_check_report_fused(const er_bounds *bd, er_bkeys **keys, const er_tensor *output, const er_tensor *R,
                                unsigned char *covered, const er_tensor *a, const er_tensor *b,
                                int64_t *outside_index, int64_t outside_cap, er_check_report *rep, char *msg,
                                size_t msg_size);

/* on != 0: the covers and scoring loops run their portable copies even where the processor has AVX2
 * (for the tests, which compare both; not thread-safe: set it before the calls) */
void er_report_portable(int on);
/* The same for the fused covers and scoring of er_check_report_compute: level 2 every ISA the processor
 * has (AVX-512 unless EXACTREF_NO_AVX512 is set), 1 AVX2 at most, 0 the portable loops; and the number of
 * threads the covers, keys and scoring split their rows over (0: one per processor, as for any large
 * output; the report's bytes do not depend on it).  For the tests; not thread-safe. */
void er_report_isa(int level);
void er_report_threads(int n);

#endif
