/* help.c: the manual of the exactref command and of each subcommand. */
#include <string.h>

#include "cli.h"

static const char *const help_main =
    "NAME\n"
    "    exactref - exact references and proven tolerances for low-precision matrix products\n"
    "\n"
    "SYNOPSIS\n"
    "    exactref COMMAND [OPTIONS] [ARGUMENTS]\n"
    "    exactref help [COMMAND]\n"
    "    exactref --version\n"
    "\n"
    "DESCRIPTION\n"
    "    exactref computes the exact answer of low-precision arithmetic (bf16, f16, fp8, fp6, fp4,\n"
    "    block-scaled and integer formats), rounded once into the output format, and bounds what a\n"
    "    correct implementation may output. This build provides the number-format layer: every\n"
    "    format, every rounding direction, bit-exact on the CPU, OpenCL and CUDA paths.\n"
    "\n"
    "COMMANDS\n"
    "    convert   convert bit patterns between formats with one rounding (stdin to stdout)\n"
    "    decode    print the exact value and class of bit patterns\n"
    "    formats   list the formats and their properties\n"
    "    demo      a tour of the formats, conversions and backends\n"
    "    info      the version and the backends of this build, with their devices\n"
    "    help      show this manual, or a command's (also: exactref COMMAND --help)\n"
    "\n"
    "FORMATS\n"
    "    f64 f32 tf32 f16 bf16 f8E4M3FN f8E5M2 f8E4M3FNUZ f8E5M2FNUZ f8E8M0FNU f6E2M3FN f6E3M2FN\n"
    "    f4E2M1FN i8 u8 i16 i32 i64. Names are case-insensitive; the ml_dtypes spellings\n"
    "    (float32, bfloat16, float8_e4m3fn, float4_e2m1fn, int8, ...) are accepted as aliases.\n"
    "\n"
    "ROUNDING DIRECTIONS\n"
    "    nearest_even (default), nearest_away, zero, negative_inf, positive_inf, odd\n"
    "\n"
    "EXIT STATUS\n"
    "    0  success\n"
    "    1  a check found elements that no correct implementation can produce\n"
    "    2  bad usage or bad input (the message names the file, the line or index, and the problem)\n"
    "    3  internal or device error\n"
    "\n"
    "ENVIRONMENT\n"
    "    EXACTREF_OPENCL_DEVICE  index of the OpenCL device to use (see exactref info)\n"
    "\n"
    "SEE ALSO\n"
    "    docs/formats.md (the format table and the conversion rules), docs/core.md (how rounding\n"
    "    is done and why it is correct), README.md\n";

static const char *const help_convert =
    "NAME\n"
    "    exactref convert - convert bit patterns from one format to another, rounding once\n"
    "\n"
    "SYNOPSIS\n"
    "    exactref convert --from FORMAT --to FORMAT [--rounding DIR] [--saturate]\n"
    "                     [--flush-to-zero] [--flags] [FILE]\n"
    "\n"
    "DESCRIPTION\n"
    "    Reads one hexadecimal bit pattern per line from FILE (default: standard input; '-' is\n"
    "    standard input) and writes the converted pattern, in hexadecimal zero-padded to the\n"
    "    target's width, one per line: the pipe style of Berkeley TestFloat. Each conversion rounds\n"
    "    the exact value once (never through an intermediate format). A pattern may carry a 0x\n"
    "    prefix and surrounding blanks. fp6 and fp4 patterns are the low bits of the number\n"
    "    (0..3f, 0..f); tf32 patterns are 32-bit with the low 13 bits zero.\n"
    "    Output is written only when every line is valid: a bad line writes nothing.\n"
    "\n"
    "OPTIONS\n"
    "    --from FORMAT      format of the input patterns (required)\n"
    "    --to FORMAT        format of the output patterns (required)\n"
    "    --rounding DIR     nearest_even (default), nearest_away, zero, negative_inf,\n"
    "                       positive_inf or odd\n"
    "    --saturate         overflow and infinities give the largest finite value of the sign\n"
    "                       (CUDA's satfinite) instead of infinity or NaN\n"
    "    --flush-to-zero    subnormal inputs and results become the zero of their sign\n"
    "    --flags            append the exception flags of each conversion as two hex digits:\n"
    "                       01 inexact, 02 underflow, 04 overflow, 08 invalid\n"
    "    -h, --help         show this text\n"
    "\n"
    "EXIT STATUS\n"
    "    0 success; 2 bad usage or a bad line (the message names the file and line); 3 internal error\n"
    "\n"
    "EXAMPLES\n"
    "    $ printf '43e80000\\n43e88000\\n' | exactref convert --from f32 --to f8E4M3FN\n"
    "    7e\n"
    "    7f\n"
    "    (464 is a tie and rounds to 448; 465 overflows to NaN, or to 448 with --saturate)\n"
    "    $ echo 3eaaaaab | exactref convert --from f32 --to bf16 --rounding zero\n"
    "    3eaa\n";

static const char *const help_decode =
    "NAME\n"
    "    exactref decode - print the exact value and class of bit patterns\n"
    "\n"
    "SYNOPSIS\n"
    "    exactref decode --format FORMAT [FILE]\n"
    "\n"
    "DESCRIPTION\n"
    "    Reads one hexadecimal bit pattern per line (as exactref convert does) and writes its\n"
    "    exact value as a C99 hexadecimal floating constant, a space and its class: zero,\n"
    "    subnormal, normal, inf or nan. Values are normalised (0x1.8p+1); NaNs print their\n"
    "    payload where the format has one (nan(0x200000)). Integers print as hexadecimal floats\n"
    "    too (-0x1p+7 for the i8 pattern 80). Nothing is written if a line is bad.\n"
    "\n"
    "OPTIONS\n"
    "    --format FORMAT    format of the patterns (required)\n"
    "    -h, --help         show this text\n"
    "\n"
    "EXIT STATUS\n"
    "    0 success; 2 bad usage or a bad line; 3 internal error\n"
    "\n"
    "EXAMPLE\n"
    "    $ printf '7e\\n01\\n7f\\n' | exactref decode --format f8E4M3FN\n"
    "    0x1.cp+8 normal\n"
    "    0x1p-9 subnormal\n"
    "    nan nan\n";

static const char *const help_formats =
    "NAME\n"
    "    exactref formats - list every format with its layout and special values\n"
    "\n"
    "SYNOPSIS\n"
    "    exactref formats\n"
    "\n"
    "DESCRIPTION\n"
    "    One line per format: canonical (MLIR) name, ml_dtypes alias, width in bits, exponent and\n"
    "    stored significand bits, bias, the largest finite value, and whether it has infinities,\n"
    "    NaN, negative zero and subnormals. docs/formats.md explains each column.\n";

static const char *const help_demo =
    "NAME\n"
    "    exactref demo - a tour of what this build of exactref does\n"
    "\n"
    "SYNOPSIS\n"
    "    exactref demo\n"
    "\n"
    "DESCRIPTION\n"
    "    Shows the formats, rounds a few values into every format in every direction, shows the\n"
    "    cases where rounding twice (as through float32) differs from rounding once, converts a\n"
    "    batch covering every pair of formats and every direction on each backend built in, and\n"
    "    checks that every backend gives the same bits as the portable C path.\n"
    "\n"
    "EXIT STATUS\n"
    "    0 success; 3 a backend disagreed with the C path or failed\n";

static const char *const help_info =
    "NAME\n"
    "    exactref info - the version and backends of this build\n"
    "\n"
    "SYNOPSIS\n"
    "    exactref info\n"
    "\n"
    "DESCRIPTION\n"
    "    Prints the version, which backends were compiled in (CPU always; OpenCL and CUDA when\n"
    "    their toolkits were found at build time), and the OpenCL platforms and devices found now.\n";

int er_cli_help(FILE *out, const char *cmd)
{
    const char *t = NULL;
    if (!cmd || !*cmd) t = help_main;
    else if (!strcmp(cmd, "convert")) t = help_convert;
    else if (!strcmp(cmd, "decode")) t = help_decode;
    else if (!strcmp(cmd, "formats")) t = help_formats;
    else if (!strcmp(cmd, "demo")) t = help_demo;
    else if (!strcmp(cmd, "info")) t = help_info;
    else if (!strcmp(cmd, "help")) t = help_main;
    if (!t) return -1;
    fputs(t, out);
    return 0;
}
