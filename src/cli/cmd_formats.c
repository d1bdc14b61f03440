/* cmd_formats.c: `exactref formats` and `exactref info`. */
#include <string.h>

#include "cli.h"
#include "exactref/core/er_round.h"

/* The value of a pattern as text: a %g rendering of its binary64 value (every float format's
 * values are binary64 values), or the integer. */
static void value_text(int fmt, uint64_t bits, char *buf, size_t size)
{
    double x;
    er_val v;
    if (er_from_bits(fmt, bits, &x) == ER_OK) {
        snprintf(buf, size, "%.7g", x);
        return;
    }
    er_decode_bits(fmt, bits, &v);
    snprintf(buf, size, "%s%llu", v.sign ? "-" : "", (unsigned long long)v.sig);
}

int er_cmd_formats(int argc, char **argv)
{
    int i;
    (void)argv;
    if (argc > 1) return er_cli_usage_error("formats", "takes no arguments");
    printf("%-11s %-16s %5s %3s %3s %5s %-22s %-12s %3s %-10s %2s %3s\n", "format", "ml_dtypes", "width",
           "E", "M", "bias", "max finite", "min >0", "inf", "NaN", "-0", "sub");
    for (i = 0; i < er_format_count(); i++) {
        er_format_info fi;
        char maxv[32], minv[32], nan[16];
        er_format_get_info(i, &fi);
        value_text(i, fi.max_finite_bits, maxv, sizeof maxv);
        value_text(i, fi.min_subnormal_bits, minv, sizeof minv);
        if (fi.kind != ER_KIND_FLOAT) {
            printf("%-11s %-16s %5d %3s %3s %5s %-22s %-12s %3s %-10s %2s %3s\n", fi.name, fi.alias, fi.width, "-",
                   "-", "-", maxv, minv, "-", "-", "-", "-");
            continue;
        }
        {
            er_fmt d = er_fmt_get(i);
            const char *sp = d.special == ER_SPECIAL_IEEE   ? "E=max,M!=0"
                             : d.special == ER_SPECIAL_FN   ? "all ones"
                             : d.special == ER_SPECIAL_FNUZ ? "-0 pattern"
                                                            : "none";
            snprintf(nan, sizeof nan, "%s", sp);
        }
        char maxcol[40];
        snprintf(maxcol, sizeof maxcol, "%s (0x%llx)", maxv, (unsigned long long)fi.max_finite_bits);
        printf("%-11s %-16s %5d %3d %3d %5d %-22s %-12s %3s %-10s %2s %3s\n", fi.name, fi.alias, fi.width,
               fi.exponent_bits, fi.significand_bits, fi.bias, maxcol, minv, fi.has_inf ? "yes" : "no", nan,
               fi.has_negative_zero ? "y" : "n", fi.has_subnormals ? "yes" : "no");
    }
    printf("\nwidth: bits of a pattern (tf32: stored in 32 bits, the low 13 zero); E, M: exponent and stored\n"
           "significand bits; NaN: which patterns are NaN; -0: a negative zero exists; sub: subnormals.\n"
           "f8E8M0FNU has no sign, no zero and no subnormals: pattern E is 2^(E-127), 0xff is NaN.\n"
           "f8E5M3FNU (UE5M3) has no sign: zero, subnormals, no infinity, 0xff is NaN.\n");
    return ER_EXIT_OK;
}

int er_cmd_info(int argc, char **argv)
{
    char buf[8192];
    (void)argv;
    if (argc > 1) return er_cli_usage_error("info", "takes no arguments");
    printf("exactref %s\n", er_version());
    printf("backends compiled in: cpu%s%s\n", ER_HAVE_OPENCL ? " opencl" : "", ER_HAVE_CUDA ? " cuda" : "");
    printf("cpu: portable C, the reference path (always available)\n");
    if (er_opencl_describe(buf, sizeof buf) == ER_OK)
        fputs(buf, stdout);
    else
        printf("opencl: %s", ER_HAVE_OPENCL ? buf : "not built in (no OpenCL headers/ICD loader at build time)\n");
    if (ER_HAVE_CUDA) {
        char why[512];
        int nd = er_cuda_devices(why, sizeof why);
        if (nd > 0) printf("cuda: %d device(s) (the backend module libexactref_cuda.so loads)\n", nd);
        else printf("cuda: built in, no device usable: %s\n", why);
    } else {
        printf("cuda: not built in (nvcc not found at build time)\n");
    }
    /* --backend auto: er_backend_auto (include/exactref/mma.h) */
    {
        char why[768];
        int be = er_backend_auto(ER_AUTO_DEVICE_MACS, -1, why, sizeof why);
        if (be < 0) { /* EXACTREF_BACKEND holds something else: every computation would refuse it */
            fprintf(stderr, "exactref info: %s\n", why);
            return ER_EXIT_USAGE;
        }
        printf("auto: %s for a problem of 2^30 multiply-adds or more (the CPU below that, unless EXACTREF_BACKEND is set)\n"
               "      why: %s\n"
               "      A device that fails leaves the work to the CPU, with a one-line note. Ask for a backend\n"
               "      with --backend, a device with --device N (or EXACTREF_OPENCL_DEVICE, EXACTREF_CUDA_DEVICE),\n"
               "      and set auto's choice with EXACTREF_BACKEND=cpu|opencl|cuda.\n",
               be == ER_BACKEND_CUDA ? "cuda" : be == ER_BACKEND_OPENCL ? "opencl" : "cpu", why);
    }
    return ER_EXIT_OK;
}
