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
# .npy files written by hand (POSIX sh only): a v1.0 header, then little-endian data given in hex
npy() { # path descr shape-tuple hexbytes
    hdr="{'descr': '$2', 'fortran_order': False, 'shape': $3, }"
    while [ $(( (10 + ${#hdr} + 1) % 64 )) -ne 0 ]; do hdr="$hdr "; done
    hl=$(( ${#hdr} + 1 ))
    printf '\223NUMPY\001\000' > "$1"
    printf "\\$(printf %03o $((hl % 256)))\\$(printf %03o $((hl / 256)))" >> "$1"
    printf '%s\n' "$hdr" >> "$1"
    hex=$4
    while [ -n "$hex" ]; do
        b=${hex%"${hex#??}"}
        hex=${hex#??}
        printf "\\$(printf %03o 0x$b)" >> "$1"
    done
}
le32() { # the hex of little-endian 32-bit integers 0 .. n-1, each times k
    i=0
    while [ $i -lt $1 ]; do
        v=$(( i * $2 ))
        printf '%02x%02x%02x%02x' $((v & 255)) $(((v >> 8) & 255)) $(((v >> 16) & 255)) $(((v >> 24) & 255))
        i=$((i + 1))
    done
}
# the values of an .npy file's data as od prints them (t: d4 or f4)
npyvals() {
    hl=$(od -An -t u2 -j 8 -N 2 "$1" | tr -d ' ')
    od -An -v -t "$2" -j $((10 + hl)) "$1" | tr -s ' \n' '  ' | sed 's/^ //; s/ $//'
}
# out: three i32 zeros
npy "$tmp/out.npy" '<i4' '(3,)' 000000000000000000000000
mkdir "$tmp/o"
"$exe" interp "$kdir/loops.mlir" --kernel loops "$tmp/out.npy" 20 -o "$tmp/o" > "$tmp/log" 2> "$tmp/err"
rc=$?
[ $rc -eq 0 ]; check "loops exits 0" $?
grep -qx 'sum=127 steps=9 last=1023' "$tmp/log"; check "print_tko captured" $?
grep -qx 'loops ok' "$tmp/log"; check "launch log line" $?
[ "$(npyvals "$tmp/o/out.npy" d4)" = "127 9 1023" ]; check "-o writes the stored buffer" $?
# a refusal writes nothing
mkdir "$tmp/o2"
npy "$tmp/p.npy" '<i4' '(16,)' "$(le32 16 1)"
"$exe" interp "$kdir/ub.mlir" --kernel undef_lane "$tmp/p.npy" 0 -o "$tmp/o2" > "$tmp/log" 2> "$tmp/err"
[ $? -eq 1 ]; check "undefined behaviour exits 1" $?
grep -qx 'undef_lane interp.ub' "$tmp/log"; check "launch log names interp.ub" $?
grep -q "ub.mlir:34:11: op 'store_view_tko'" "$tmp/err"; check "the refusal names the op and line:column" $?
[ -z "$(ls -A "$tmp/o2")" ]; check "nothing written on a refusal" $?
mkdir "$tmp/o7" "$tmp/o7/p.npy"
"$exe" interp "$kdir/ub.mlir" --kernel undef_lane --no-ub-checks "$tmp/p.npy" 0 -o "$tmp/o7" > "$tmp/log" 2> "$tmp/err"
[ $? -eq 2 ] && ! grep -q "undef_lane ok" "$tmp/log"; check "an output path that cannot be written is refused before the run" $?
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
# integer arrays for f32 pointers: each element exactly a value of f32
npy "$tmp/a.npy" '<i4' '(40,)' "$(le32 40 1)"
npy "$tmp/b.npy" '<i4' '(40,)' "$(le32 40 2)"
npy "$tmp/c.npy" '<i4' '(40,)' "$(le32 40 0)"
mkdir "$tmp/o3" "$tmp/o4"
"$exe" interp "$cdir/cutile_vadd.mlir" --cutile --grid 3 "$tmp/a.npy" "$tmp/b.npy" "$tmp/c.npy" -o "$tmp/o3" > "$tmp/log" 2> "$tmp/err"
[ $? -eq 0 ] && grep -q ' ok$' "$tmp/log"; check "--cutile fills shapes and strides" $?
"$exe" interp "$cdir/cutile_vadd.mlir" --grid 3 "$tmp/a.npy" 40 1 "$tmp/b.npy" 40 1 "$tmp/c.npy" 40 1 -o "$tmp/o4" > "$tmp/log" 2> "$tmp/err"
[ $? -eq 0 ] && cmp -s "$tmp/o3/arg6.npy" "$tmp/o4/arg6.npy"; check "the explicit form gives the same file" $?
want=$(i=0; while [ $i -lt 40 ]; do printf '%d ' $((3 * i)); i=$((i + 1)); done)
[ "$(npyvals "$tmp/o3/arg6.npy" f4 | awk '{for (i = 1; i <= NF; i++) printf "%d ", $i}')" = "$want" ]; check "cuTile vector add values" $?
# ml_dtypes arrays as numpy saves them: '<V2' holding bf16 patterns (1.5, -2.0, 3.75, 0.25)
mkdir "$tmp/o5"
npy "$tmp/bf16.npy" '<V2' '(16,)' c03f00c07040803ec03f00c07040803ec03f00c07040803ec03f00c07040803e
npy "$tmp/c2.npy" '<V2' '(16,)' 0000000000000000000000000000000000000000000000000000000000000000
"$exe" interp "$kdir/peers.mlir" --kernel mul_bf16 "$tmp/bf16.npy" "$tmp/bf16.npy" "$tmp/c2.npy" -o "$tmp/o5" > "$tmp/log" 2> "$tmp/err"
[ $? -eq 0 ] && [ "$(npyvals "$tmp/o5/c.npy" x2 | cut -d' ' -f1-4)" = "4010 4080 4161 3d80" ]; check "ml_dtypes '<V2' arrays are read as patterns (bf16 squares)" $?
# bytecode through tileirdisasm, where it is installed (PyPI nvidia-cuda-tileiras)
if command -v tileirdisasm > "$tmp/which" 2>&1; then
    mkdir "$tmp/o6"
    "$exe" interp "$cdir/cutile_vadd.tileirbc" --cutile --grid 3 "$tmp/a.npy" "$tmp/b.npy" "$tmp/c.npy" -o "$tmp/o6" > "$tmp/log" 2> "$tmp/err"
    rc=$?; [ $rc -eq 0 ] && cmp -s "$tmp/o3/arg6.npy" "$tmp/o6/arg6.npy"; r=$?; [ $r -eq 0 ] || cat "$tmp/err"; check ".tileirbc through tileirdisasm" $r
else
    echo "skip: .tileirbc through tileirdisasm (not installed)"
fi
"$exe" interp --help > "$tmp/log" 2>&1
[ $? -eq 0 ] && grep -q "EXIT STATUS" "$tmp/log"; check "help" $?
exit $fail
