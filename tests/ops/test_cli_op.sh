#!/bin/sh
# test_cli_op.sh: `exactref check --op` (docs/cli.md): softmax's exact answer passes, one wrong element is
# flagged (exit 1, the JSON names the operation and the element), and bad calls are refused with the
# reason (exit 2): an unknown operation, an unknown option, a missing output, a shape that differs, an
# output name the operation lacks, a required input given as none.  Every file it writes is in its own
# temporary directory.  Usage: test_cli_op.sh PATH/TO/exactref
X="$1"
pass=0
fail=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }
. "$(dirname "$0")/../lib/mknpy.sh" # mknpy FILE DESCR SHAPE DATA
run() {
    name=$1; want=$2; msg=$3; shift 3
    "$X" "$@" >"$tmp/out" 2>"$tmp/err"
    rc=$?
    if [ "$rc" != "$want" ]; then bad "$name: exit $rc, want $want: $(cat "$tmp/err")"; return 1; fi
    if [ -n "$msg" ] && ! grep -qF -- "$msg" "$tmp/err" "$tmp/out"; then
        bad "$name: output '$(cat "$tmp/out" "$tmp/err")' lacks '$msg'"; return 1
    fi
    ok
}

Z='\000\000\000\000'
Q='\000\000\200\076'   # 0.25 in f32
W='\270\036\205\076'   # 0.26
# x: 2 x 4 zeros, softmax over the last dimension: 0.25 everywhere (exact)
mknpy "$tmp/x.npy" '<f4' '(2, 4)' "$Z$Z$Z$Z$Z$Z$Z$Z"
mknpy "$tmp/y.npy" '<f4' '(2, 4)' "$Q$Q$Q$Q$Q$Q$Q$Q"
mknpy "$tmp/bad.npy" '<f4' '(2, 4)' "$Q$Q$Q$Q$Q$W$Q$Q"
mknpy "$tmp/short.npy" '<f4' '(1, 4)' "$Q$Q$Q$Q"
mknpy "$tmp/x3.npy" '<f4' '(2, 1, 4)' "$Z$Z$Z$Z$Z$Z$Z$Z"
mknpy "$tmp/y3.npy" '<f4' '(2, 1, 4)' "$Q$Q$Q$Q$Q$Q$Q$Q"

run "the exact answer passes" 0 "PASS" check --op softmax --input "$tmp/x.npy" --output "$tmp/y.npy"
grep -qF "softmax(" "$tmp/out" && ok || bad "the report does not name the operation: $(cat "$tmp/out")"
run "any_order, dim given" 0 "standard any_order" check --op softmax --input "$tmp/x.npy" --output "$tmp/y.npy" \
    --opt dim=1 --standard any_order
run "three dimensions" 0 "PASS" check --op softmax --input "$tmp/x3.npy" --output "$tmp/y3.npy" --opt dim=-1
run "a wrong element fails" 1 "elements outside   1" check --op softmax --input "$tmp/x.npy" --output "$tmp/bad.npy" \
    --json "$tmp/r.json" --plot "$tmp/r.svg"
grep -qF '"op": "softmax"' "$tmp/r.json" && ok || bad "JSON lacks the operation: $(cat "$tmp/r.json")"
grep -qF '"outside_indices": [[1, 1]]' "$tmp/r.json" && ok || bad "JSON lacks the outside element: $(cat "$tmp/r.json")"
[ -s "$tmp/r.svg" ] && ok || bad "no plot written"
run "an unknown operation" 2 "unknown operation 'sofmax'" check --op sofmax --input "$tmp/x.npy" --output "$tmp/y.npy"
run "an unknown option" 2 "unknown option 'dmi'" check --op softmax --input "$tmp/x.npy" --output "$tmp/y.npy" \
    --opt dmi=1
run "a dim out of range" 2 "dim=5" check --op softmax --input "$tmp/x.npy" --output "$tmp/y.npy" --opt dim=5
run "no output" 2 "--output" check --op softmax --input "$tmp/x.npy"
run "a shape that differs" 2 "has shape 1 x 4" check --op softmax --input "$tmp/x.npy" --output "$tmp/short.npy"
run "an output name it lacks" 2 "--output-name lse" check --op softmax --input "$tmp/x.npy" --output "$tmp/y.npy" \
    --output-name lse
run "a required input absent" 2 "required" check --op softmax --input none --output "$tmp/y.npy"
run "a standard it does not take" 2 "it takes normal, any_order" check --op softmax --input "$tmp/x.npy" \
    --output "$tmp/y.npy" --standard hopper
run "a matmul flag" 2 "not one of check --op's" check --op softmax --input "$tmp/x.npy" --output "$tmp/y.npy" \
    --a-format f32
# linear without a bias (--input none), gelu's tanh form through --opt, four dimensions
mknpy "$tmp/x23.npy" '<f4' '(2, 3)' "$Z$Z$Z$Z$Z$Z"
mknpy "$tmp/z22.npy" '<f4' '(2, 2)' "$Z$Z$Z$Z"
run "linear, no bias" 0 "PASS" check --op linear --input "$tmp/x23.npy" --input "$tmp/x23.npy" --input none \
    --output "$tmp/z22.npy" --standard any_order
run "gelu tanh" 0 "PASS" check --op gelu --input "$tmp/x23.npy" --output "$tmp/x23.npy" --opt approximate=tanh
run "gelu, a bad form" 2 "approximate=fast" check --op gelu --input "$tmp/x23.npy" --output "$tmp/x23.npy" \
    --opt approximate=fast
mknpy "$tmp/x4.npy" '<f4' '(1, 2, 1, 4)' "$Z$Z$Z$Z$Z$Z$Z$Z"
mknpy "$tmp/y4.npy" '<f4' '(1, 2, 1, 4)' "$Q$Q$Q$Q$Q$Q$Q$Q"
run "four dimensions" 0 "PASS" check --op softmax --input "$tmp/x4.npy" --output "$tmp/y4.npy"
run "help names --op" 0 "" check --help
grep -qF -- "--op NAME" "$tmp/out" && ok || bad "check --help does not describe --op"

echo "test_cli_op: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
