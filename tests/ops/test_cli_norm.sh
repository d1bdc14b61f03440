#!/bin/sh
# test_cli_norm.sh: `exactref check --op` for layer_norm, rms_norm and quantize (docs/ops/norms.md,
# quantize.md): an exact answer passes, one wrong element is flagged (exit 1), quantize's two outputs are
# judged by --output-name, and bad calls are refused with the reason (exit 2).  Every file it writes is
# in its own temporary directory.  Usage: test_cli_norm.sh PATH/TO/exactref
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

P='\000\000\200\077'   # 1.0 in f32
M='\000\000\200\277'   # -1.0
H='\000\000\000\077'   # 0.5
# x = [1, -1, 1, -1] per row: mean 0, variance 1; with eps=0 layer_norm and rms_norm give x exactly
mknpy "$tmp/x.npy" '<f4' '(2, 4)' "$P$M$P$M$P$M$P$M"
mknpy "$tmp/bad.npy" '<f4' '(2, 4)' "$P$M$P$M$P$H$P$M"
mknpy "$tmp/w.npy" '<f4' '(2, 4)' "$P$P$P$P$P$P$P$P"
run "layer_norm: the exact answer passes" 0 "PASS" check --op layer_norm --input "$tmp/x.npy" \
    --output "$tmp/x.npy" --opt normalized_shape=4 --opt eps=0
grep -qF "layer_norm(" "$tmp/out" && ok || bad "the report does not name layer_norm: $(cat "$tmp/out")"
run "layer_norm: a wrong element" 1 "outside" check --op layer_norm --input "$tmp/x.npy" --output "$tmp/bad.npy" \
    --opt normalized_shape=4 --opt eps=0 --standard any_order
run "rms_norm with a weight of ones" 0 "PASS" check --op rms_norm --input "$tmp/x.npy" --input "$tmp/w.npy" \
    --output "$tmp/x.npy" --opt normalized_shape=2x4 --opt eps=0
run "normalized_shape that is not the input's" 2 "normalized_shape" check --op layer_norm --input "$tmp/x.npy" \
    --output "$tmp/x.npy" --opt normalized_shape=5
run "a negative eps" 2 "eps" check --op rms_norm --input "$tmp/x.npy" --output "$tmp/x.npy" --opt eps=-1

# quantize, OCP MX: 32 ones -> scale 2^(0 - 8) (e8m0 0x77), elements 256 (e4m3 0x78)
O=''
for i in 1 2 3 4 5 6 7 8; do O="$O$P$P$P$P"; done
Q=''
for i in 1 2 3 4 5 6 7 8; do Q="$Q\170\170\170\170"; done
mknpy "$tmp/ones.npy" '<f4' '(1, 32)' "$O"
mknpy "$tmp/q.npy" '|V1' '(1, 32)' "$Q"
mknpy "$tmp/s.npy" '|V1' '(1, 1)' '\167'
mknpy "$tmp/s2.npy" '|V1' '(1, 1)' '\170'
run "quantize mx: q" 0 "PASS" check --op quantize --input "$tmp/ones.npy" --output "$tmp/q.npy" \
    --out-format f8E4M3FN --opt scheme=mx --output-name q
run "quantize mx: scale" 0 "PASS" check --op quantize --input "$tmp/ones.npy" --output "$tmp/s.npy" \
    --out-format f8E8M0FNU --opt scheme=mx --output-name scale
run "quantize mx: a scale one binade up" 1 "outside" check --op quantize --input "$tmp/ones.npy" \
    --output "$tmp/s2.npy" --out-format f8E8M0FNU --opt scheme=mx --output-name scale
run "quantize mx: a row not a multiple of 32" 2 "multiple of 32" check --op quantize --input "$tmp/x.npy" \
    --output "$tmp/x.npy" --opt scheme=mx

echo "test_cli_norm: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
