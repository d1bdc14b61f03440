/* fuzz_npy.c: libFuzzer target for the .npy reader: er_npy_parse on the input, then er_npy_to_tensor
 * with the dtype's own format and a few declared formats.  Built and run by scripts/fuzz.sh. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "exactref/exactref.h"
#include "exactref/npy.h"

static const int declared[] = {-1, ER_FMT_F64, ER_FMT_TF32, ER_FMT_BF16, ER_FMT_F8E4M3FN,
                               ER_FMT_F8E8M0FNU, ER_FMT_F6E2M3FN, ER_FMT_F4E2M1FN, ER_FMT_I8, ER_FMT_I32};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char msg[512];
    er_npy a;
    er_status st = er_npy_parse(data, size, "fuzz.npy", &a, msg, sizeof msg);
    if (st != ER_OK) {
        /* A refusal names the file and leaves the array empty. */
        if (st != ER_EINVAL && st != ER_ENOMEM) abort();
        if (!strstr(msg, "fuzz.npy") || a.data || a.nbytes) abort();
        return 0;
    }
    {
        /* A consistent array: nbytes is itemsize times the product of the shape, and all of it is read. */
        uint64_t n = 1, sum = 0;
        int d;
        size_t k;
        for (d = 0; d < a.ndim; d++) n *= (uint64_t)a.shape[d];
        if (!a.data || a.nbytes != n * a.itemsize || a.nbytes > size) abort();
        for (k = 0; k < a.nbytes; k++) sum += ((const unsigned char *)a.data)[k];
        (void)sum;
    }
    for (size_t i = 0; i < sizeof declared / sizeof declared[0]; i++) {
        er_tensor t;
        void *storage = NULL;
        st = er_npy_to_tensor(&a, "fuzz.npy", declared[i], &t, &storage, msg, sizeof msg);
        if (st == ER_OK) {
            if (!storage || t.data != storage || (t.ndim != 2 && t.ndim != 3)) abort();
        } else if (storage || !strstr(msg, "fuzz.npy") ||
                   (st != ER_EINVAL && st != ER_EINEXACT && st != ER_EPATTERN && st != ER_ENOMEM)) {
            abort();
        }
        free(storage);
    }
    er_npy_free(&a);
    return 0;
}
