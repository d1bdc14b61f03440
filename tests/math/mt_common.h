/* mt_common.h: what the math tests share: the seed, the counts from the environment, a Check runner. */
#ifndef MT_COMMON_H
#define MT_COMMON_H

#include <check.h>
#include <stdlib.h>

#include "er_test.h"
#include "mo_oracle.h"

/* A count from the environment (EXACTREF_MATH_N scales the random tests), else the default. */
static inline long mt_env_long(const char *name, long dflt)
{
    const char *s = getenv(name);
    long v;
    if (!s || !*s)
        return dflt;
    v = strtol(s, NULL, 0);
    return v >= 0 ? v : dflt;
}

/* Whether every direction is run on every input (EXACTREF_MATH_ALL_DIRS=1), or one direction per input,
 * cycling through all six (the default, so that each direction meets a sixth of the inputs). */
static inline int mt_all_dirs(void) { return mt_env_long("EXACTREF_MATH_ALL_DIRS", 0) != 0; }

static inline int mt_run_suite(Suite *s)
{
    SRunner *r = srunner_create(s);
    int f;
    srunner_set_fork_status(r, CK_NOFORK);
    srunner_run_all(r, CK_NORMAL);
    f = srunner_ntests_failed(r);
    srunner_free(r);
    mo_fini();
    return f == 0 ? 0 : 1;
}

#endif
