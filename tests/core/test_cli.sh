#!/bin/sh
# test_cli.sh: the exactref command's contract: outputs, exit statuses, error messages, no partial output.
# Usage: test_cli.sh PATH/TO/exactref
X="$1"
pass=0
fail=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }

# expect_out NAME EXPECTED_STATUS EXPECTED_STDOUT INPUT ARGS...
expect_out() {
    name=$1; want_rc=$2; want_out=$3; input=$4; shift 4
    printf '%b' "$input" | "$X" "$@" >"$tmp/out" 2>"$tmp/err"
    rc=$?
    got=$(cat "$tmp/out")
    if [ "$rc" != "$want_rc" ]; then bad "$name: exit $rc, want $want_rc; stderr: $(cat "$tmp/err")"; return; fi
    if [ "$got" != "$want_out" ]; then bad "$name: stdout '$got', want '$want_out'"; return; fi
    ok
}

# expect_err NAME EXPECTED_STATUS STDERR_SUBSTRING INPUT ARGS...: stdout must be empty.
expect_err() {
    name=$1; want_rc=$2; want_err=$3; input=$4; shift 4
    printf '%b' "$input" | "$X" "$@" >"$tmp/out" 2>"$tmp/err"
    rc=$?
    if [ "$rc" != "$want_rc" ]; then bad "$name: exit $rc, want $want_rc; stderr: $(cat "$tmp/err")"; return; fi
    if ! grep -qF -- "$want_err" "$tmp/err"; then bad "$name: stderr '$(cat "$tmp/err")' lacks '$want_err'"; return; fi
    if [ -s "$tmp/out" ]; then bad "$name: wrote to stdout on error: '$(cat "$tmp/out")'"; return; fi
    ok
}

# Conversions whose answers are facts of docs/formats.md.
expect_out "e4m3 tie and overflow" 0 "$(printf '7e\n7f\n7e')" '43e80000\n43e88000\n0x43E40000\n' convert --from f32 --to f8E4M3FN
expect_out "e4m3 saturate" 0 "7e" '43e88000\n' convert --from f32 --to float8_e4m3fn --saturate
expect_out "f16 65520 to inf" 0 "7c00" '477ff000\n' convert --from f32 --to f16
expect_out "f16 65520 toward zero" 0 "7bff" '477ff000\n' convert --from f32 --to f16 --rounding zero
expect_out "bf16 toward zero" 0 "3eaa" '3eaaaaab\n' convert --from f32 --to bf16 --rounding zero
expect_out "bf16 toward +inf" 0 "3eab" '3eaaaaab\n' convert --from f32 --to bf16 --rounding positive_inf
expect_out "bf16 toward -inf, negative" 0 "beab" 'beaaaaab\n' convert --from f32 --to bf16 --rounding negative_inf
expect_out "padding of the width" 0 "$(printf '0000000000000000\n3ff0000000000000')" '0\n3c00\n' convert --from f16 --to f64
expect_out "fp4 one digit" 0 "$(printf '7\nf\n1')" '0x42c80000\nc2c80000\n3f000000\n' convert --from f32 --to f4E2M1FN
expect_out "flags column" 0 "7f 05" '43e88000\n' convert --from f32 --to f8E4M3FN --flags
expect_out "flush to zero" 0 "8000" '80000001\n' convert --from f32 --to f16 --flush-to-zero
expect_out "int wrap" 0 "80" '0080\n' convert --from i16 --to i8
expect_out "int saturate" 0 "7f" '0080\n' convert --from i16 --to i8 --saturate
expect_out "decode e4m3" 0 "$(printf '0x1.cp+8 normal\n0x1p-9 subnormal\nnan nan\n-0x0p+0 zero')" '7e\n01\n7f\n80\n' decode --format f8E4M3FN
expect_out "decode f32 nan payload" 0 "-nan(0x400001) nan" 'ffc00001\n' decode --format f32
expect_out "decode i8" 0 "-0x1p+7 normal" '80\n' decode --format i8
expect_out "empty input" 0 "" '' convert --from f32 --to f16
expect_out "ue5m3 tie, overflow, sign" 0 "$(printf '78\nfe\nff\nff\n00')" '3f880000\n47e80000\n47e80001\nbf800000\n80000000\n' convert --from f32 --to f8E5M3FNU
expect_out "decode ue5m3" 0 "$(printf '0x1.cp+16 normal\n0x1p-17 subnormal\nnan nan')" 'fe\n01\nff\n' decode --format float8_e5m3fnu

# Bad input: exit 2, a message naming the line and the problem, nothing on stdout.
expect_err "bad hex" 2 "<stdin>:2: not a hexadecimal bit pattern" '3f800000\nxyz\n' convert --from f32 --to bf16
expect_err "too wide" 2 "<stdin>:1: pattern has bits set above the format's width" '1ff\n' convert --from f8E4M3FN --to f32
expect_err "fp6 width" 2 "<stdin>:3: pattern has bits set above" '01\n3f\n40\n' convert --from f6E2M3FN --to f32
expect_err "tf32 padding" 2 "padding bits" '3f801000\n' convert --from tf32 --to f32
expect_err "empty line" 2 "<stdin>:2: empty line" '3c00\n\n3c00\n' decode --format f16
expect_err "64-bit overflow" 2 "wider than 64 bits" '12345678123456781\n' convert --from f64 --to f32
expect_err "unknown format" 2 "unknown format 'f9'" '' convert --from f9 --to f32
expect_err "unknown rounding" 2 "unknown direction 'up'" '' convert --from f32 --to f16 --rounding up
expect_err "missing --to" 2 "--to FORMAT is required" '' convert --from f32
expect_err "missing value" 2 "needs a value" '' convert --from
expect_err "unknown option" 2 "unknown option '--frob'" '' convert --from f32 --to f16 --frob
expect_err "unknown command" 2 "unknown command 'frobnicate'" '' frobnicate
expect_err "missing file" 2 "nope.txt: cannot open" '' decode --format f16 "$tmp/nope.txt"
printf '3c00\nzz\n' >"$tmp/in.txt"
expect_err "file line" 2 "in.txt:2: not a hexadecimal" '' decode --format f16 "$tmp/in.txt"

# Help and version.
for c in "" convert decode formats demo info matmul check; do
    if [ -z "$c" ]; then "$X" --help >"$tmp/out" 2>&1; else "$X" "$c" --help >"$tmp/out" 2>&1; fi
    if [ $? -eq 0 ] && grep -q "SYNOPSIS" "$tmp/out"; then ok; else bad "help for '$c'"; fi
done
"$X" --version | grep -q '^exactref [0-9]' && ok || bad "--version"
"$X" formats | grep -q '^f8E4M3FN .*448' && ok || bad "formats lists e4m3fn with max 448"
"$X" formats | grep -q '^f8E5M3FNU .*114688 (0xfe)' && ok || bad "formats lists ue5m3 with max 114688"

echo "cli: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
