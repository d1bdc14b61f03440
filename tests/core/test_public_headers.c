/* test_public_headers.c: a user's translation unit that includes every public header gets the core's
 * types and constants (include/exactref/core/er_types.h) and none of the core's inline functions.
 *
 * ctest compiles this file (public_headers).  Every core function is declared with ER_FN or
 * ER_FN_INLINE, which only er_qual.h defines, and every core header with functions includes
 * er_qual.h; so if ER_FN, or the include guard of any core header other than er_types.h, is defined
 * after the public headers, a core function reached the user's file and the compilation fails.
 * public_headers_selftest compiles it with ER_SELFTEST_LEAK, which includes er_round.h first as a
 * public header once did, and requires that very failure. */
#ifdef ER_SELFTEST_LEAK
#include "exactref/core/er_round.h"
#endif
#include "exactref/exactref.h"
#include "exactref/interp.h"
#include "exactref/npy.h"

#if defined(ER_FN) || defined(ER_FN_INLINE) || defined(ER_QUAL_H) || defined(ER_FORMATS_H) ||         \
    defined(ER_ROUND_H) || defined(ER_ACC_H) || defined(ER_BITS_H) || defined(ER_BOUNDS_H) ||           \
    defined(ER_D64_H) || defined(ER_MMA_H) || defined(ER_CLZ64)
#error "a public header includes a core header with functions"
#endif

/* What the public headers do give: the ids, directions, flags, classes and the decoded value. */
#if !defined(ER_TYPES_H) || !defined(ER_RND_NEAREST_EVEN) || !defined(ER_FLAG_INEXACT) ||            \
    !defined(ER_CLASS_NAN) || !defined(ER_OPT_SATURATE)
#error "the public headers lack the core's constants"
#endif

int er_public_headers_probe_(void);
int er_public_headers_probe_(void)
{
    er_val v;
    v.cls = ER_CLASS_NORMAL;
    v.sign = 0;
    v.sig = 1;
    v.exp = 0;
    return (int)ER_FMT_COUNT + ER_FMT_F4E2M1FN + v.cls + ER_RND_ZERO;
}
