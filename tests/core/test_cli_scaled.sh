#!/bin/sh
# test_cli_scaled.sh: the command's scaled products (--scale-format f32, --alpha, --beta, --bias; docs/scaled.md):
# matmul writes the exact answer, check passes it and flags a wrong one (its bundle, JSON and saved bounds
# whole, the bias among the inputs), bad flags and an engine partial on operands it does not take are
# refused with the reason, and the report names a blocked standard's accumulator. Every file it writes is in its own temporary directory. Usage: test_cli_scaled.sh PATH/TO/exactref
X="$1"
pass=0
fail=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }
. "$(dirname "$0")/../lib/mknpy.sh" # mknpy FILE DESCR SHAPE DATA
data() {
    hl=$(od -A n -t u1 -j 8 -N 2 "$1" | awk '{print $1 + 256 * $2}')
    od -A n -t x1 -v -j $((10 + hl)) "$1" | tr -d ' \n'
}
run() {
    name=$1; want=$2; msg=$3; shift 3
    "$X" "$@" >"$tmp/out" 2>"$tmp/err"
    rc=$?
    if [ "$rc" != "$want" ]; then bad "$name: exit $rc, want $want: $(cat "$tmp/err")"; return 1; fi
    if [ -n "$msg" ] && ! grep -qF -- "$msg" "$tmp/err"; then bad "$name: stderr '$(cat "$tmp/err")' lacks '$msg'"; return 1; fi
    ok
}

# e4m3 A = [[1, 2], [3, 0.5]], B = [[1, 0], [2, 1]]; a_scale 2 (per tensor), b_scale [0.5, 3] (per column);
# alpha 0.5, bias [1, -1]: D = 0.5 [[5, 12], [4, 3]] + [1, -1] = [[3.5, 5], [3, 0.5]]
mknpy "$tmp/a.npy" '|u1' '(2, 2)' '\070\100\104\060'
mknpy "$tmp/b.npy" '|u1' '(2, 2)' '\070\000\100\070'
mknpy "$tmp/sa.npy" '<f4' '(1, 1)' '\000\000\000\100'
mknpy "$tmp/sb.npy" '<f4' '(1, 2)' '\000\000\000\077\000\000\100\100'
mknpy "$tmp/sb3.npy" '<f4' '(1, 3)' '\000\000\000\077\000\000\100\100\000\000\100\100'
mknpy "$tmp/bias.npy" '<f4' '(1, 2)' '\000\000\200\077\000\000\200\277'
mknpy "$tmp/wrong.npy" '<f4' '(2, 2)' '\000\000\140\100\000\000\300\100\000\000\100\100\000\000\000\077'
F="--a-format f8E4M3FN --b-format f8E4M3FN --scale-format f32 --a-scale $tmp/sa.npy --b-scale $tmp/sb.npy"
run "matmul" 0 "" matmul "$tmp/a.npy" "$tmp/b.npy" $F --alpha 0.5 --bias "$tmp/bias.npy" --out-format f32 -o "$tmp/d.npy"
[ "$(data "$tmp/d.npy")" = "000060400000a040000040400000003f" ] && ok || bad "matmul: $(data "$tmp/d.npy")"
run "check passes the exact answer" 0 "" check "$tmp/a.npy" "$tmp/b.npy" "$tmp/d.npy" $F --alpha 0.5 --bias "$tmp/bias.npy"
grep -qF "scaled:bk=128" "$tmp/out" && ok || bad "check: the report names no scaled standard: $(head -c 2000 "$tmp/out")"
"$X" check "$tmp/a.npy" "$tmp/b.npy" "$tmp/wrong.npy" $F --alpha 0.5 --bias "$tmp/bias.npy" >"$tmp/out" 2>"$tmp/err"
[ $? -ne 0 ] && ok || bad "check: a wrong element (6 for 5) passed: $(head -c 2000 "$tmp/out")"
run "--alpha not f32" 2 "not a finite f32 value" matmul "$tmp/a.npy" "$tmp/b.npy" $F --alpha 0.1 --out-format f32 -o "$tmp/e.npy"
run "--beta without --acc" 2 "--beta has no effect without --acc" matmul "$tmp/a.npy" "$tmp/b.npy" $F --beta 2 --out-format f32 -o "$tmp/e.npy"
run "a b_scale of 1 x 3" 2 "b_scale is 1 x 3" matmul "$tmp/a.npy" "$tmp/b.npy" --a-format f8E4M3FN --b-format f8E4M3FN \
    --scale-format f32 --a-scale "$tmp/sa.npy" --b-scale "$tmp/sb3.npy" --out-format f32 -o "$tmp/e.npy"
[ ! -e "$tmp/e.npy" ] && ok || bad "a refused matmul left an output file"
# the failure bundle of a scaled product holds every input (the bias too): its repro.sh runs the same check
"$X" check "$tmp/a.npy" "$tmp/b.npy" "$tmp/wrong.npy" $F --alpha 0.5 --bias "$tmp/bias.npy" --save-failures "$tmp/fb" \
    --save-bounds "$tmp/bd" --json "$tmp/r.json" >"$tmp/out" 2>"$tmp/err"
[ $? -eq 1 ] && ok || bad "check --save-failures: exit $?, want 1: $(cat "$tmp/err")"
[ -f "$tmp/fb/bias.npy" ] && cmp -s "$tmp/fb/bias.npy" "$tmp/bias.npy" && ok || bad "the bundle lacks bias.npy"
EXACTREF="$X" sh "$tmp/fb/repro.sh" >"$tmp/rout" 2>"$tmp/rerr"
rc=$?
[ $rc -eq 1 ] && grep -qF "elements outside   1" "$tmp/rout" && ok || bad "repro.sh: exit $rc, want 1: $(cat "$tmp/rerr")"
grep -qF '"bias": {"file": ' "$tmp/r.json" && ok || bad "--json names no bias: $(head -c 600 "$tmp/r.json")"
grep -qF '"outside_indices": [[0, 1]]' "$tmp/r.json" && ok || bad "--json: the outside element: $(cat "$tmp/r.json")"
# --save-bounds on a scaled product: its bounds, the tolerance of [0, 1] the report's (1.4305114746093752e-06)
[ -f "$tmp/bd/range_high.npy" ] && [ "$(data "$tmp/bd/tolerance.npy" | cut -c 17-32)" = "010000000000b83e" ] &&
    grep -qF '"tolerance": 1.4305114746093752e-06' "$tmp/r.json" && ok || bad "--save-bounds: $(data "$tmp/bd/tolerance.npy")"
# an output naming the bias is refused before any work (it is an input)
cp "$tmp/bias.npy" "$tmp/bias2.npy"
run "-o the bias" 2 "refusing to overwrite an input" matmul "$tmp/a.npy" "$tmp/b.npy" $F --bias "$tmp/bias2.npy" \
    --out-format f32 -o "$tmp/bias2.npy"
cmp -s "$tmp/bias.npy" "$tmp/bias2.npy" && ok || bad "matmul -o the bias overwrote it"
run "--json the bias" 2 "refusing to overwrite an input" check "$tmp/a.npy" "$tmp/b.npy" "$tmp/d.npy" $F --alpha 0.5 \
    --bias "$tmp/bias2.npy" --json "$tmp/bias2.npy"
cmp -s "$tmp/bias.npy" "$tmp/bias2.npy" && ok || bad "check --json the bias overwrote it"

# an engine partial holds the operands to its row's rule, as the Python package does (the library's
# sentence): f32 operands are not hopper-fp8's; partial=f32 takes them
mknpy "$tmp/a32.npy" '<f4' '(2, 2)' '\000\000\200\077\000\000\000\100\000\000\100\100\000\000\000\077'
mknpy "$tmp/b32.npy" '<f4' '(2, 2)' '\000\000\200\077\000\000\000\000\000\000\000\100\000\000\200\077'
S32="--scale-format f32 --a-scale $tmp/sa.npy --b-scale $tmp/sb.npy"
run "f32 matmul" 0 "" matmul "$tmp/a32.npy" "$tmp/b32.npy" $S32 --out-format f32 -o "$tmp/d32.npy"
run "f32 under partial=hopper-fp8" 2 \
    "--standard scaled:bk=128,partial=hopper-fp8 (its partial hopper-fp8) models instructions whose operands are e4m3, e5m2" \
    check "$tmp/a32.npy" "$tmp/b32.npy" "$tmp/d32.npy" $S32 --standard scaled:bk=128,partial=hopper-fp8
grep -qF "A (" "$tmp/err" && grep -qF "is f32" "$tmp/err" && ok || bad "the refusal names no operand: $(cat "$tmp/err")"
# a spec longer than a standard's name holds (48 bytes): still the partial's rule
run "f32 under a long spec" 2 "(its partial hopper-fp8) models instructions" check "$tmp/a32.npy" "$tmp/b32.npy" \
    "$tmp/d32.npy" $S32 --standard scaled:bk=00000128,order=after,partial=hopper-fp8
run "f32 under partial=f32" 0 "" check "$tmp/a32.npy" "$tmp/b32.npy" "$tmp/d32.npy" $S32 --standard scaled:bk=128,partial=f32
run "e4m3 under partial=hopper-fp8" 0 "" check "$tmp/a.npy" "$tmp/b.npy" "$tmp/d.npy" $F --alpha 0.5 \
    --bias "$tmp/bias.npy" --standard scaled:bk=128,partial=hopper-fp8

# a blocked standard's accumulator (acc=f16) is the one the report names, not the options' compute
run "plain f32 matmul" 0 "" matmul "$tmp/a32.npy" "$tmp/b32.npy" --out-format f32 -o "$tmp/p32.npy"
run "blocked acc=f16" 0 "" check "$tmp/a32.npy" "$tmp/b32.npy" "$tmp/p32.npy" --standard blocked:bk=64,acc=f16 \
    --json "$tmp/bl.json"
grep -qF "standard blocked:bk=64,acc=f16, compute f16" "$tmp/out" && grep -qF '"compute": "f16"' "$tmp/bl.json" && ok ||
    bad "blocked acc=f16: the report names another accumulator: $(head -n 1 "$tmp/out"); $(grep compute "$tmp/bl.json")"
run "blocked acc=f32" 0 "" check "$tmp/a32.npy" "$tmp/b32.npy" "$tmp/p32.npy" --standard blocked:bk=64
grep -qF "compute f32" "$tmp/out" && ok || bad "blocked: $(head -n 1 "$tmp/out")"
echo "test_cli_scaled: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
