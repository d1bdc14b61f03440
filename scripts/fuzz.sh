#!/bin/sh
# fuzz.sh: build the libFuzzer target tests/fuzz/fuzz_npy.c (the .npy reader) with clang, ASan and
# UBSan, and run it for FUZZ_SECONDS seconds (default 60) from the seed corpus tests/npy/corpus; then
# the same for tests/fuzz/fuzz_interp.c (the interpreter's text parser, pre-check and parameterless runs)
# for FUZZ_INTERP_SECONDS (default 30), or FUZZ_INTERP_RUNS executions when that is set, from the kernels
# in tests/interp/kernels and tests/interp/cutile and generated seeds: regions nested 64 deep (the
# limit), 65 and 400 deep, a chain of 700 operations, long names, names defined twice.
# Fails on any crash, leak, sanitizer report or abort.
#
#   scripts/fuzz.sh [BUILD_DIR]
#
# BUILD_DIR: a CMake build directory whose include/exactref/config.h is used; without it a minimal
# config.h is written into a temporary directory.  Environment: FUZZ_SECONDS, CC (default clang),
# FUZZ_WORK (where the binary, the grown corpus and any crash files go; default a temporary directory,
# kept on failure).  Needs clang with the libFuzzer runtime: on Debian 12, the packages clang and
# libclang-rt-14-dev.
set -eu
cd "$(dirname "$0")/.."
root=$(pwd)
cc=${CC:-clang}
seconds=${FUZZ_SECONDS:-60}
work=${FUZZ_WORK:-$(mktemp -d "${TMPDIR:-/tmp}/exactref-fuzz.XXXXXX")}
mkdir -p "$work/corpus" "$work/artifacts"

# write_config DIR: a minimal DIR/exactref/config.h (the project's version, every backend off)
write_config() {
    mkdir -p "$1/exactref"
    version=$(sed -n 's/^project(exactref VERSION \([0-9.]*\).*/\1/p' CMakeLists.txt)
    sed -e "s/@PROJECT_VERSION@/${version:-0.0.0}/" -e 's/^#cmakedefine01 \(.*\)$/#define \1 0/' \
        include/exactref/config.h.in > "$1/exactref/config.h"
}

# run_fuzz LABEL BINARY CORPUS ARTIFACTS LOG [libFuzzer options]: runs the fuzzer over the corpus,
# prints its final statistics, and exits 1 with the log's tail on a crash or any saved input.
run_fuzz() {
    label=$1 bin=$2 corpus=$3 arts=$4 log=$5
    shift 5
    status=0
    "$bin" "$@" -artifact_prefix="$arts/" -print_final_stats=1 "$corpus" 2>"$log" || status=$?
    grep -E '^(#[0-9]+ +DONE|Done|stat::number_of_executed_units|stat::average_exec_per_sec|stat::peak_rss_mb)' "$log" || true
    if [ "$status" -ne 0 ] || ls "$arts/" | grep -q .; then
        tail -n 60 "$log" >&2
        echo "fuzz: ${label}FAILED (status $status); crash inputs and the log are in $work" >&2
        exit 1
    fi
}

if [ $# -ge 1 ] && [ -f "$1/include/exactref/config.h" ]; then
    confdir=$1/include
else
    confdir=$work/include
    write_config "$confdir"
fi

echo "fuzz: building $work/fuzz_npy with $cc"
$cc -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined -ffp-contract=off \
    -Iinclude -I"$confdir" \
    tests/fuzz/fuzz_npy.c src/npy.c src/npy_tensor.c src/formats.c src/scalar.c src/status.c \
    -o "$work/fuzz_npy"

# The seeds: the committed corpus (valid and malformed files), copied so the run can grow it.
cp tests/npy/corpus/*.npy "$work/corpus/"

echo "fuzz: running for $seconds s on $(ls "$work/corpus" | wc -l) seed files"
run_fuzz "" "$work/fuzz_npy" "$work/corpus" "$work/artifacts" "$work/fuzz.log" \
    -max_total_time="$seconds" -max_len=4096 -rss_limit_mb=2048 -timeout=10
echo "fuzz: no crash in $seconds s"

# The interpreter's parser: the library's sources (it runs kernels through the whole library).
iseconds=${FUZZ_INTERP_SECONDS:-30}
mkdir -p "$work/icorpus" "$work/iartifacts"
# the library without device backends: a minimal config.h (every backend off)
write_config "$work/iinclude"
echo "fuzz: building $work/fuzz_interp with $cc"
# the library's sources compiled one object each, ${JOBS:-2} at a time (one compiler call over them all
# took minutes on 2 cores), then linked with the fuzz target
mkdir -p "$work/iobj"
for f in src/interp/*.c \
         src/math/*.c src/*.c src/interval/*.c host/*.c cpu/*.c; do
    echo "$f"
done | xargs -P "${JOBS:-2}" -I{} sh -c 'o=$(echo "$1" | tr / _); exec "$2" -c -g -O1 -fsanitize=fuzzer-no-link,address,undefined \
    -fno-sanitize-recover=undefined -ffp-contract=off -DER_NO_FLATTEN -Iinclude -I"$3/iinclude" -I. -Isrc "$1" -o "$3/iobj/${o%.c}.o"' \
    sh {} "$cc" "$work"
$cc -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined -ffp-contract=off \
    -Iinclude -I"$work/iinclude" -I. -Isrc tests/fuzz/fuzz_interp.c "$work"/iobj/*.o \
    -lmpfr -lgmp -lm -lpthread -ldl -o "$work/fuzz_interp"
cp tests/interp/kernels/*.mlir tests/interp/cutile/*.mlir "$work/icorpus/"
# generated seeds: deep nesting (at, just past and far past the limit), a long kernel, long and
# duplicated names
for depth in 64 65 400; do
    awk -v n="$depth" 'BEGIN {
        print "entry @k() {"
        print "%c0 = constant <i32: 0> : tile<i32>"
        print "%c1 = constant <i32: 1> : tile<i32>"
        print "%t = constant <i1: true> : tile<i1>"
        for (i = 0; i < n; i++) printf(i % 2 ? "if %%t {\n" : "for %%i%d in (%%c0 to %%c1, step %%c1) : tile<i32> {\n", i)
        print "%p = print_tko \"x\" -> token"
        for (i = 0; i < n; i++) print "}"
        print "}" }' > "$work/icorpus/nest$depth.mlir"
done
awk 'BEGIN {
    print "entry @k() {"
    print "%v0 = constant <f32: 1.5> : tile<4xf32>"
    for (i = 1; i <= 700; i++) printf "%%v%d = addf %%v%d, %%v0 : tile<4xf32>\n", i, i - 1
    print "}" }' > "$work/icorpus/chain700.mlir"
awk 'BEGIN {
    n = ""; for (i = 0; i < 62; i++) n = n "a"
    print "entry @" n n "() {"
    print "%" n " = constant <i32: 1> : tile<i32>"
    print "%" n "b = addi %" n ", %" n " : tile<i32>"
    print "%" n " = addi %" n ", %" n " : tile<i32>"
    print "}" }' > "$work/icorpus/names.mlir"
runs=
[ -z "${FUZZ_INTERP_RUNS:-}" ] || runs="-runs=$FUZZ_INTERP_RUNS"
echo "fuzz: running the interpreter's parser for ${FUZZ_INTERP_RUNS:-$iseconds s} ${FUZZ_INTERP_RUNS:+executions} on $(ls "$work/icorpus" | wc -l) seed files"
[ -z "$runs" ] || iseconds=0
# shellcheck disable=SC2086
run_fuzz "interp " "$work/fuzz_interp" "$work/icorpus" "$work/iartifacts" "$work/ifuzz.log" \
    -max_total_time="$iseconds" $runs -max_len=32768 -rss_limit_mb=2048 -timeout=20
echo "fuzz: interp: no crash in ${FUZZ_INTERP_RUNS:-$iseconds s} ${FUZZ_INTERP_RUNS:+executions}"
[ -n "${FUZZ_WORK:-}" ] || rm -rf "$work"
