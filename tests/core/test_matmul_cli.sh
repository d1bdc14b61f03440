#!/bin/sh
# test_matmul_cli.sh: `exactref matmul` end to end: results, exit statuses, messages, no partial output.
# Usage: test_matmul_cli.sh PATH/TO/exactref PATH/TO/tests/npy/corpus
X="$1"
CORPUS="$2"
pass=0
fail=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }

. "$(dirname "$0")/../lib/mknpy.sh" # mknpy FILE DESCR SHAPE DATA
# bytes FILE: the data bytes after the 64-byte header, as hex
bytes() { od -A n -t x1 -j "$2" "$1" | tr -d ' \n'; }

# run NAME WANT_RC STDERR_SUBSTRING ARGS...
run() {
    name=$1; want=$2; msg=$3; shift 3
    "$X" "$@" >"$tmp/out" 2>"$tmp/err"
    rc=$?
    if [ "$rc" != "$want" ]; then bad "$name: exit $rc, want $want: $(cat "$tmp/err")"; return 1; fi
    if [ -n "$msg" ] && ! grep -qF -- "$msg" "$tmp/err"; then bad "$name: stderr '$(cat "$tmp/err")' lacks '$msg'"; return 1; fi
    ok
}

# bf16 patterns as uint16: A = [[1, 2], [3, 4]], B = [[1, 0], [0, 1]] -> D = A (f32, little-endian)
mknpy "$tmp/a.npy" '<u2' '(2, 2)' '\200\077\000\100\100\100\200\100'
mknpy "$tmp/b.npy" '<u2' '(2, 2)' '\200\077\000\000\000\000\200\077'
run "bf16 product" 0 "" matmul "$tmp/a.npy" "$tmp/b.npy" --a-format bf16 --b-format bfloat16 --out-format f32 -o "$tmp/d.npy" &&
    { [ "$(bytes "$tmp/d.npy" 128)" = "0000803f000000400000404000008040" ] && ok || bad "bf16 product bytes $(bytes "$tmp/d.npy" 128)"; }
# the same, transposed roles: B A = A; and toward zero into bf16 output (raw uint16)
run "bf16 out" 0 "" matmul "$tmp/b.npy" "$tmp/a.npy" --a-format bf16 --b-format bf16 --out-format bf16 --rounding zero -o "$tmp/e.npy" &&
    { [ "$(bytes "$tmp/e.npy" 128)" = "803f004040408040" ] && ok || bad "bf16 out bytes $(bytes "$tmp/e.npy" 128)"; }
# mmai: int8 [[127, 127]] x [[127], [127]] + C i32 [[2^31 - 32258 - 1 + 1]] wraps
mknpy "$tmp/i.npy" '|i1' '(1, 2)' '\177\177'
mknpy "$tmp/j.npy" '|i1' '(2, 1)' '\177\177'
mknpy "$tmp/c.npy" '<i4' '(1, 1)' '\377\377\377\177'
run "mmai wraps" 0 "wrapped modulo 2^32" matmul "$tmp/i.npy" "$tmp/j.npy" --acc "$tmp/c.npy" --out-format i32 -o "$tmp/k.npy" &&
    { [ "$(bytes "$tmp/k.npy" 128)" = "017e0080" ] && ok || bad "mmai bytes $(bytes "$tmp/k.npy" 128)"; }
# f4E2M1FN with f8E5M3FNU (UE5M3) scales, k = 32, the default block 16: A ones (0x2), B ones, scales
# a = [1, 2] (0x78, 0x80), b = [1, 4] (0x78, 0x88): 16 * 1 * 1 + 16 * 2 * 4 = 144 (f32 0x43100000)
ones=$(i=0; while [ $i -lt 32 ]; do printf '\\002'; i=$((i + 1)); done)
mknpy "$tmp/f4a.npy" '|u1' '(1, 32)' "$ones"
mknpy "$tmp/f4b.npy" '|u1' '(32, 1)' "$ones"
mknpy "$tmp/ua.npy" '|u1' '(1, 2)' '\170\200'
mknpy "$tmp/ub.npy" '|u1' '(2, 1)' '\170\210'
run "ue5m3 scales" 0 "" matmul "$tmp/f4a.npy" "$tmp/f4b.npy" --a-format f4E2M1FN --b-format f4E2M1FN \
    --a-scale "$tmp/ua.npy" --b-scale "$tmp/ub.npy" --scale-format f8E5M3FNU --out-format f32 -o "$tmp/us.npy" &&
    { [ "$(bytes "$tmp/us.npy" 128)" = "00001043" ] && ok || bad "ue5m3 scales bytes $(bytes "$tmp/us.npy" 128)"; }
run "ue5m3 scales of e4m3" 2 "f8E5M3FNU scales take f4E2M1FN elements" matmul "$tmp/f4a.npy" "$tmp/f4b.npy" \
    --a-format f8E4M3FN --b-format f8E4M3FN --a-scale "$tmp/ua.npy" --b-scale "$tmp/ub.npy" --scale-format f8E5M3FNU \
    --out-format f32 -o "$tmp/ux.npy"
[ -e "$tmp/ux.npy" ] && bad "ue5m3 scales of e4m3: wrote an output" || ok
# values that are not in the declared format: float16 0.1 declared bf16
mknpy "$tmp/h.npy" '<f2' '(2, 2)' '\000\074\146\056\000\074\000\074'
run "inexact value" 2 "element [0, 1]" matmul "$tmp/h.npy" "$tmp/b.npy" --a-format bf16 --b-format bf16 --out-format f32 -o "$tmp/x.npy"
[ -e "$tmp/x.npy" ] && bad "inexact value: wrote an output" || ok
# shapes, usage, backends
mknpy "$tmp/r.npy" '<u2' '(3, 2)' '\200\077\000\100\100\100\200\100\000\000\000\000'
run "inner dims" 2 "inner dimensions differ" matmul "$tmp/r.npy" "$tmp/r.npy" --a-format bf16 --b-format bf16 --out-format f32 -o "$tmp/x.npy"
run "missing out format" 2 "--out-format FORMAT is required" matmul "$tmp/a.npy" "$tmp/b.npy" -o "$tmp/x.npy"
run "missing file" 2 "nope.npy" matmul "$tmp/nope.npy" "$tmp/b.npy" --out-format f32 -o "$tmp/x.npy"
run "undeclared uint16" 2 "declare" matmul "$tmp/a.npy" "$tmp/b.npy" --out-format f32 -o "$tmp/x.npy"
# the OpenCL engine: the CPU's bits (d.npy above) where a device works; else exit 3 with the reason
if "$X" info 2>"$tmp/info.err" | grep -q "device 0:"; then
    run "opencl engine" 0 "" matmul "$tmp/a.npy" "$tmp/b.npy" --a-format bf16 --b-format bf16 --out-format f32 -o "$tmp/o.npy" --backend opencl &&
        { [ "$(bytes "$tmp/o.npy" 128)" = "$(bytes "$tmp/d.npy" 128)" ] && ok || bad "opencl engine bytes $(bytes "$tmp/o.npy" 128)"; }
else
    run "opencl engine" 3 "OpenCL" matmul "$tmp/a.npy" "$tmp/b.npy" --a-format bf16 --b-format bf16 --out-format f32 -o "$tmp/x.npy" --backend opencl
fi
run "one scale" 2 "both --a-scale and --b-scale" matmul "$tmp/a.npy" "$tmp/b.npy" --out-format f32 -o "$tmp/x.npy" --a-scale "$tmp/a.npy"
[ -e "$tmp/x.npy" ] && bad "an error left an output file" || ok
# exactref check: the exact output passes, a wrong one fails with a report, JSON, JUnit and a bundle
run "check pass" 0 "" check "$tmp/a.npy" "$tmp/b.npy" "$tmp/d.npy" --a-format bf16 --b-format bf16 --json "$tmp/r.json" --junit "$tmp/r.xml"
grep -q '"outside": 0' "$tmp/r.json" && grep -q '"passed": true' "$tmp/r.json" && ok || bad "check pass json: $(cat "$tmp/r.json")"
grep -q 'failures="0"' "$tmp/r.xml" && ok || bad "check pass junit"
grep -q '^PASS' "$tmp/out" && ok || bad "check pass report: $(cat "$tmp/out")"
# the same output claimed for [[1, 2], [3, 5]]: element [1, 1] is 4, far from 5's bounds
mknpy "$tmp/w.npy" '<f4' '(2, 2)' '\000\000\200\077\000\000\000\100\000\000\100\100\000\000\240\100'
run "check fail" 1 "" check "$tmp/a.npy" "$tmp/b.npy" "$tmp/w.npy" --a-format bf16 --b-format bf16 --standard any_order --json "$tmp/f.json" --save-failures "$tmp/bundle"
grep -q 'elements outside   1' "$tmp/out" && grep -q 'worst element      \[1, 1\]' "$tmp/out" && grep -q '^FAIL' "$tmp/out" && ok || bad "check fail report: $(cat "$tmp/out")"
grep -q '"outside": 1' "$tmp/f.json" && ok || bad "check fail json"
[ -x "$tmp/bundle/repro.sh" ] && [ -f "$tmp/bundle/a.npy" ] && [ -f "$tmp/bundle/out.npy" ] && ok || bad "check bundle: $(ls "$tmp/bundle" 2>&1)"
# repro.sh writes no report file (no --json, no redirection to a device): its output goes to our files
grep -v '^#' "$tmp/bundle/repro.sh" | grep -qE -- '--json|/dev/' && bad "repro.sh names --json or a device: $(cat "$tmp/bundle/repro.sh")" || ok
(cd "$tmp/bundle" && sh repro.sh >"$tmp/repro.out" 2>"$tmp/repro.err"; [ $? -eq 1 ]) && ok || bad "repro.sh does not reproduce the failure: $(cat "$tmp/repro.err")"
run "check shape" 2 "the product is" check "$tmp/a.npy" "$tmp/b.npy" "$tmp/k.npy" --a-format bf16 --b-format bf16
run "check standard" 2 "unknown standard" check "$tmp/a.npy" "$tmp/b.npy" "$tmp/d.npy" --a-format bf16 --b-format bf16 --standard pascal
# check on the OpenCL backend: the same report and JSON as on the CPU, but for the time line
if "$X" info 2>"$tmp/info.err" | grep -q "device 0:"; then
    for std in normal any_order hopper blackwell cdna3; do # (blackwell-mx takes fp8/fp6/fp4 operands, not these bf16)
        for be in cpu opencl; do
            "$X" check "$tmp/a.npy" "$tmp/b.npy" "$tmp/w.npy" --a-format bf16 --b-format bf16 --standard $std \
                --backend $be --json "$tmp/c-$be.json" 2>"$tmp/err" | grep -v '^  time ' >"$tmp/c-$be.txt"
        done
        cmp -s "$tmp/c-cpu.txt" "$tmp/c-opencl.txt" && ok || bad "check --backend opencl ($std): report differs: $(diff "$tmp/c-cpu.txt" "$tmp/c-opencl.txt")"
        grep -v "\"seconds\"" "$tmp/c-cpu.json" >"$tmp/j1"; grep -v "\"seconds\"" "$tmp/c-opencl.json" >"$tmp/j2"
        cmp -s "$tmp/j1" "$tmp/j2" && ok || bad "check --backend opencl ($std): JSON differs: $(diff "$tmp/j1" "$tmp/j2")"
    done
fi
# auto: a device that fails leaves the work to the CPU with a one-line note and the same bits
if "$X" info 2>"$tmp/info.err" | grep -qE "^cuda: (built in, no device|not built in)"; then
    EXACTREF_BACKEND=cuda "$X" matmul "$tmp/a.npy" "$tmp/b.npy" --a-format bf16 --b-format bf16 --out-format f32 -o "$tmp/au.npy" 2>"$tmp/err"
    rc=$?
    [ "$rc" = 0 ] && [ "$(bytes "$tmp/au.npy" 128)" = "$(bytes "$tmp/d.npy" 128)" ] && ok || bad "auto fallback: exit $rc: $(cat "$tmp/err")"
    grep -q "note: the CUDA backend failed" "$tmp/err" && [ "$(wc -l <"$tmp/err")" = 1 ] && ok || bad "auto fallback note: $(cat "$tmp/err")"
    # asked for explicitly, the same failure is an error (exit 3), with no output file
    run "cuda explicit" 3 "CUDA" matmul "$tmp/a.npy" "$tmp/b.npy" --a-format bf16 --b-format bf16 --out-format f32 -o "$tmp/cx.npy" --backend cuda
    [ -e "$tmp/cx.npy" ] && bad "cuda explicit: wrote an output" || ok
fi
# every malformed corpus file: exit 2, its name in the message, no output
for f in "$CORPUS"/bad_*.npy; do
    run "corpus $(basename "$f")" 2 "$(basename "$f")" matmul "$f" "$tmp/b.npy" --b-format bf16 --out-format f32 -o "$tmp/y.npy"
    [ -e "$tmp/y.npy" ] && { bad "corpus $(basename "$f") left an output"; rm -f "$tmp/y.npy"; }
done
ls "$tmp" | grep -q 'tmp-' && bad "a temporary file was left behind" || ok

echo "matmul cli: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
