#!/bin/sh
# test_interp_cli.sh: `exactref interp` end to end: the launch log, -o (atomic; nothing on a refusal),
# the exit statuses 0/1/2, --check-unsupported, --no-ub-checks, --step-limit, parse errors, help.
set -u
exe=$1
kdir=$2
tmp=$(mktemp -d "${TMPDIR:-/tmp}/exactref-interp-cli.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
fail=0
check() { # description, condition already evaluated as $?
    if [ "$2" -ne 0 ]; then echo "FAIL: $1"; fail=1; else echo "ok: $1"; fi
}
# .npy files written by hand: a v1.0 header then little-endian data
npy() { # path descr shape-tuple hexbytes
    python3 - "$@" <<'PY'
import sys, binascii
path, descr, shape, hexd = sys.argv[1:5]
hdr = "{'descr': '%s', 'fortran_order': False, 'shape': %s, }" % (descr, shape)
hdr += " " * (64 - (10 + len(hdr) + 1) % 64) + "\n"
with open(path, "wb") as f:
    f.write(b"\x93NUMPY\x01\x00" + len(hdr).to_bytes(2, "little") + hdr.encode() + binascii.unhexlify(hexd))
PY
}
# out: three i32 zeros
npy "$tmp/out.npy" '<i4' '(3,)' 000000000000000000000000
mkdir "$tmp/o"
"$exe" interp "$kdir/loops.mlir" --kernel loops "$tmp/out.npy" 20 -o "$tmp/o" > "$tmp/log" 2> "$tmp/err"
rc=$?
[ $rc -eq 0 ]; check "loops exits 0" $?
grep -qx 'sum=127 steps=9 last=1023' "$tmp/log"; check "print_tko captured" $?
grep -qx 'loops ok' "$tmp/log"; check "launch log line" $?
python3 -c "
import sys
d = open('$tmp/o/out.npy','rb').read()
h = int.from_bytes(d[8:10],'little')
v = [int.from_bytes(d[10+h+4*i:14+h+4*i],'little',signed=True) for i in range(3)]
sys.exit(0 if v == [127, 9, 1023] else 1)"; check "-o writes the stored buffer" $?
# a refusal writes nothing
mkdir "$tmp/o2"
npy "$tmp/p.npy" '<i4' '(16,)' $(python3 -c "print(''.join(i.to_bytes(4,'little').hex() for i in range(16)))")
"$exe" interp "$kdir/ub.mlir" --kernel undef_lane "$tmp/p.npy" 0 -o "$tmp/o2" > "$tmp/log" 2> "$tmp/err"
[ $? -eq 1 ]; check "undefined behaviour exits 1" $?
grep -qx 'undef_lane interp.ub' "$tmp/log"; check "launch log names interp.ub" $?
grep -q "ub.mlir:34:11: op 'store_view_tko'" "$tmp/err"; check "the refusal names the op and line:column" $?
[ -z "$(ls -A "$tmp/o2")" ]; check "nothing written on a refusal" $?
"$exe" interp "$kdir/ub.mlir" --kernel undef_lane --no-ub-checks "$tmp/p.npy" 0 -o "$tmp/o2" > "$tmp/log" 2> "$tmp/err"
[ $? -eq 0 ] && [ -f "$tmp/o2/p.npy" ]; check "--no-ub-checks runs on" $?
"$exe" interp "$kdir/ub.mlir" --kernel forever --step-limit 10 "$tmp/p.npy" 0 > "$tmp/log" 2> "$tmp/err"
[ $? -eq 1 ] && grep -q "step limit of 10" "$tmp/err"; check "--step-limit" $?
"$exe" interp "$kdir/refuse.mlir" --check-unsupported > "$tmp/log" 2> "$tmp/err"
[ $? -eq 2 ] && grep -qx 'approx_exp interp.unsupported_op' "$tmp/log" && grep -qx 'ok_kernel ok' "$tmp/log"; check "--check-unsupported" $?
"$exe" interp "$kdir/refuse.mlir" --kernel approx_exp "$tmp/p.npy" > "$tmp/log" 2> "$tmp/err"
[ $? -eq 2 ] && grep -qx 'approx_exp interp.unsupported_op' "$tmp/log"; check "an unsupported op exits 2" $?
"$exe" interp "$kdir/refuse.mlir" --kernel token_param x > "$tmp/log" 2> "$tmp/err"
[ $? -eq 2 ] && grep -qx 'token_param interp.bad_launch' "$tmp/log"; check "a parameter no launch can pass is a bad launch (exit 2)" $?
npy "$tmp/f.npy" '<f8' '(2,)' 9a9999999999b93f000000000000f03f
"$exe" interp "$kdir/refuse.mlir" --kernel ok_kernel "$tmp/f.npy" 1.5 > "$tmp/log" 2> "$tmp/err"
[ $? -eq 2 ] && grep -q "f.npy: element \[0\]" "$tmp/err"; check "a .npy value that is not a value of the pointee format is bad input" $?
"$exe" interp "$kdir/refuse.mlir" --kernel ok_kernel "$tmp/p.npy" > "$tmp/log" 2> "$tmp/err"
[ $? -eq 2 ] && grep -q "takes 2 arguments, 1 given" "$tmp/err"; check "argument count" $?
printf 'entry @k() {\n  %%x = addf %%a, %%a : tile<f32>\n}\n' > "$tmp/bad.mlir"
"$exe" interp "$tmp/bad.mlir" > "$tmp/log" 2> "$tmp/err"
[ $? -eq 2 ] && grep -q "bad.mlir:2:13: use of undefined value %a" "$tmp/err"; check "parse error: file:line:column" $?
printf 'not bytecode' > "$tmp/k.tileirbc"
PATH=/nonexistent "$exe" interp "$tmp/k.tileirbc" > "$tmp/log" 2> "$tmp/err"
[ $? -eq 2 ] && grep -q "pip install nvidia-cuda-tileiras" "$tmp/err"; check ".tileirbc without tileirdisasm says how to install it" $?
# cuTile's convention: the .npy fills its shape and stride parameters (--cutile), or they are given explicitly
cdir=$kdir/../cutile
f32s=$(python3 -c "import struct; print(struct.pack('<40f', *[i * 0.5 for i in range(40)]).hex())")
npy "$tmp/a.npy" '<f4' '(40,)' "$f32s"
npy "$tmp/b.npy" '<f4' '(40,)' "$f32s"
npy "$tmp/c.npy" '<f4' '(40,)' "$f32s"
mkdir "$tmp/o3" "$tmp/o4"
"$exe" interp "$cdir/cutile_vadd.mlir" --cutile --grid 3 "$tmp/a.npy" "$tmp/b.npy" "$tmp/c.npy" -o "$tmp/o3" > "$tmp/log" 2> "$tmp/err"
[ $? -eq 0 ] && grep -q ' ok$' "$tmp/log"; check "--cutile fills shapes and strides" $?
"$exe" interp "$cdir/cutile_vadd.mlir" --grid 3 "$tmp/a.npy" 40 1 "$tmp/b.npy" 40 1 "$tmp/c.npy" 40 1 -o "$tmp/o4" > "$tmp/log" 2> "$tmp/err"
[ $? -eq 0 ] && cmp -s "$tmp/o3/arg6.npy" "$tmp/o4/arg6.npy"; check "the explicit form gives the same file" $?
python3 -c "
import struct, sys
d = open('$tmp/o3/arg6.npy','rb').read(); h = int.from_bytes(d[8:10],'little')
v = struct.unpack('<40f', d[10+h:])
sys.exit(0 if all(v[i] == i * 1.0 for i in range(40)) else 1)"; check "cuTile vector add values" $?
"$exe" interp --help > "$tmp/log" 2>&1
[ $? -eq 0 ] && grep -q "EXIT STATUS" "$tmp/log"; check "help" $?
exit $fail
