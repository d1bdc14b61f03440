#!/bin/sh
# test_opencl_errors.sh: OpenCL errors end to end through the command: no platform, a program that fails
# to build (its log in the message), out of device memory, a lost device.  Each must exit 3 with a
# message naming the problem, within a time limit (no hang), and leave no output file.
#
# The device errors are injected with the testing hook EXACTREF_OPENCL_FAULT=build|nomem|lost
# (opencl/er_opencl_common.h), which makes that stage fail as the real error would; "no platform" is
# real: OCL_ICD_VENDORS pointing at an empty directory leaves the ICD loader without a platform.
#
# Usage: test_opencl_errors.sh PATH/TO/exactref
# Without an OpenCL device the fault cases are skipped (exit 77 if nothing ran) unless
# EXACTREF_REQUIRE_OPENCL=1.
X="$1"
pass=0
fail=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }

# A time limit per command where timeout(1) exists: a hang fails instead of blocking the suite.
T=""
command -v timeout >"$tmp/which" 2>&1 && T="timeout 300"

. "$(dirname "$0")/../lib/mknpy.sh" # mknpy FILE DESCR SHAPE DATA

# run NAME WANT_RC OUTPUT_FILE ARGS...: the exit status, and no OUTPUT_FILE afterwards when WANT_RC != 0
run() {
    name=$1; want=$2; outf=$3; shift 3
    rm -f "$outf"
    $T "$X" "$@" >"$tmp/out" 2>"$tmp/err"
    rc=$?
    if [ "$rc" = 124 ]; then bad "$name: timed out (a hang)"; return 1; fi
    if [ "$rc" != "$want" ]; then bad "$name: exit $rc, want $want: $(cat "$tmp/err")"; return 1; fi
    if [ "$want" != 0 ] && [ -e "$outf" ]; then bad "$name: exit $rc but $outf was written"; return 1; fi
    ok
}

# has NAME TEXT: stderr of the last run contains TEXT
has() {
    if grep -qF -- "$2" "$tmp/err"; then ok; else bad "$1: stderr lacks '$2': $(cat "$tmp/err")"; fi
}

# bf16 patterns as uint16: A = [[1, 2], [3, 4]], B = [[1, 0], [0, 1]]
mknpy "$tmp/a.npy" '<u2' '(2, 2)' '\200\077\000\100\100\100\200\100'
mknpy "$tmp/b.npy" '<u2' '(2, 2)' '\200\077\000\000\000\000\200\077'
mm="matmul $tmp/a.npy $tmp/b.npy --a-format bf16 --b-format bf16 --out-format f32 --backend opencl -o $tmp/out.npy"

# No platform: a real one (the ICD loader finds no vendor file).
mkdir "$tmp/no-icd"
OCL_ICD_VENDORS="$tmp/no-icd" run "no platform" 3 "$tmp/out.npy" $mm && has "no platform" "OpenCL: no platform"

if ! "$X" info 2>"$tmp/info-err" | grep -q "device 0:"; then
    if [ -n "$EXACTREF_REQUIRE_OPENCL" ] && [ "$EXACTREF_REQUIRE_OPENCL" != 0 ]; then
        bad "no OpenCL device, and EXACTREF_REQUIRE_OPENCL=1"
    else
        echo "SKIP: no OpenCL device: the injected faults need one"
        echo "opencl errors: $pass passed, $fail failed"
        [ "$fail" -eq 0 ] || exit 1
        exit 77
    fi
else
    # The device works: the same command succeeds without a fault.
    run "no fault" 0 "$tmp/out.npy" $mm && { [ -s "$tmp/out.npy" ] && ok || bad "no fault: no output"; }

    # A program that fails to build: exit 3, the clBuildProgram failure and the build log in the message.
    EXACTREF_OPENCL_FAULT=build run "build" 3 "$tmp/out.npy" $mm &&
        { has "build" "clBuildProgram failed: CL_BUILD_PROGRAM_FAILURE"; has "build" "build log:";
          has "build" "error: build failure injected by EXACTREF_OPENCL_FAULT=build"; }
    # Out of device memory.
    EXACTREF_OPENCL_FAULT=nomem run "nomem" 3 "$tmp/out.npy" $mm &&
        { has "nomem" "clCreateBuffer failed: CL_MEM_OBJECT_ALLOCATION_FAILURE"; has "nomem" "out of device memory"; }
    # A lost device.
    EXACTREF_OPENCL_FAULT=lost run "lost" 3 "$tmp/out.npy" $mm &&
        { has "lost" "CL_DEVICE_NOT_AVAILABLE"; has "lost" "the device is not available"; }

    # exactref check on OpenCL (the engine, then the bounds): the same statuses and messages.
    run "reference" 0 "$tmp/d.npy" matmul "$tmp/a.npy" "$tmp/b.npy" --a-format bf16 --b-format bf16 --out-format f32 -o "$tmp/d.npy"
    run "check on opencl" 0 "$tmp/none" check "$tmp/a.npy" "$tmp/b.npy" "$tmp/d.npy" --a-format bf16 --b-format bf16 --backend opencl
    for f in build nomem lost; do
        EXACTREF_OPENCL_FAULT=$f run "check $f" 3 "$tmp/none" check "$tmp/a.npy" "$tmp/b.npy" "$tmp/d.npy" \
            --a-format bf16 --b-format bf16 --backend opencl && has "check $f" "OpenCL: "
    done
    OCL_ICD_VENDORS="$tmp/no-icd" run "check no platform" 3 "$tmp/none" check "$tmp/a.npy" "$tmp/b.npy" "$tmp/d.npy" \
        --a-format bf16 --b-format bf16 --backend opencl && has "check no platform" "OpenCL: no platform"
fi

echo "opencl errors: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
