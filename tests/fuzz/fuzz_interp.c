/* fuzz_interp.c: libFuzzer target for the interpreter's text parser: er_interp_parse on the input, then the
 * pre-check of every entry, and a run of every entry without parameters under small step and work limits
 * and a small print buffer.  Built and run by scripts/fuzz.sh (whose seeds include deep nesting and long
 * kernels). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "exactref/interp.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char msg[1024];
    er_interp_module *m = NULL;
    er_status st = er_interp_parse((const char *)data, size, "fuzz.mlir", &m, msg, sizeof msg);
    int i;
    if (st != ER_OK) {
        /* a refusal (a parse error, or out of memory) names the file, and leaves no module */
        if ((st != ER_EINVAL && st != ER_ENOMEM) || m || !strstr(msg, "fuzz.mlir")) abort();
        return 0;
    }
    for (i = 0; i < er_interp_kernel_count(m); i++) {
        const char *k = er_interp_kernel_name(m, i);
        char pre[1024];
        int r = er_interp_first_unsupported(m, k, pre, sizeof pre);
        if (r < 0) abort();
        if (r == 0 && er_interp_param_count(m, k) == 0) {
            er_interp_launch l;
            char prints[256];
            er_interp_launch_init(&l);
            l.step_limit = 64;
            l.work_limit = 4096;
            l.prints = prints;
            l.prints_size = sizeof prints;
            memset(prints, 'x', sizeof prints);
            st = er_interp_kernel(m, k, &l, msg, sizeof msg);
            /* a run ends ok or with a refusal of a kind; a message names the file; the limits hold; the
             * print buffer holds a string */
            if ((st == ER_OK) != (l.kind == ER_INTERP_OK)) abort();
            if (st != ER_OK && !strstr(msg, "fuzz.mlir")) abort();
            if (l.steps > l.step_limit + 1 || l.work > l.work_limit + 1) abort();
            if (!memchr(prints, 0, sizeof prints)) abort();
        }
    }
    er_interp_free(m);
    return 0;
}
