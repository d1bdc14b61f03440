#!/bin/sh
# test_interp_bounds_cli.sh: `exactref interp` in bounds mode end to end: --check DIR (exit 0 covered, 1 outside,
# the check's report, --json), --bounds DIR (lo/hi per float buffer), interp.undecided (exit 1, the line named),
# --standard / --ulps usage errors.
set -u
exe=$1
kdir=$2
tmp=$(mktemp -d "${TMPDIR:-/tmp}/exactref-interp-bounds-cli.XXXXXX")
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
rep() { # hex n: the hex repeated n times
    r=""
    i=0
    while [ $i -lt $2 ]; do r="$r$1"; i=$((i + 1)); done
    printf '%s' "$r"
}
k="$kdir/bounds.mlir"
npy "$tmp/x0.npy" '<f4' '(1,)' 00000000
npy "$tmp/x3.npy" '<f4' '(1,)' 00004040
npy "$tmp/o.npy" '<i4' '(1,)' 00000000
# interp.undecided: exp2(0) >= 1 is not decided
mkdir "$tmp/c0"
"$exe" interp "$k" --kernel branch "$tmp/x0.npy" "$tmp/o.npy" --bounds "$tmp/c0" > "$tmp/log" 2> "$tmp/err"
[ $? -eq 1 ]; check "undecided exits 1" $?
grep -qx 'branch interp.undecided' "$tmp/log"; check "launch log names interp.undecided" $?
grep -q "bounds.mlir:30:11: op 'cmpf': the comparison of element 0 is not decided" "$tmp/err"; check "the refusal names the op and its line" $?
[ -z "$(ls -A "$tmp/c0")" ]; check "nothing written on a refusal" $?
# decided at 3: -o writes the run, --bounds the enclosures of the float buffer only
mkdir "$tmp/o3" "$tmp/b3"
"$exe" interp "$k" --kernel branch "$tmp/x3.npy" "$tmp/o.npy" -o "$tmp/o3" --bounds "$tmp/b3" > "$tmp/log" 2> "$tmp/err"
[ $? -eq 0 ]; check "decided exits 0" $?
[ -f "$tmp/o3/o.npy" ] && [ -f "$tmp/b3/x.lo.npy" ] && [ -f "$tmp/b3/x.hi.npy" ] && [ ! -e "$tmp/b3/o.lo.npy" ]; check "--bounds: lo/hi of float buffers" $?
# --check on the run's own output: covered; the integer judged exactly
"$exe" interp "$k" --kernel branch "$tmp/x3.npy" "$tmp/o.npy" --check "$tmp/o3" > "$tmp/log" 2> "$tmp/err"
[ $? -eq 0 ] && grep -q '^PASS$' "$tmp/log"; check "--check of the run's own output passes" $?
mkdir "$tmp/d3"
npy "$tmp/d3/o.npy" '<i4' '(1,)' 00000000
"$exe" interp "$k" --kernel branch "$tmp/x3.npy" "$tmp/o.npy" --check "$tmp/d3" --json "$tmp/r.json" > "$tmp/log" 2> "$tmp/err"
[ $? -eq 1 ] && grep -q '^FAIL$' "$tmp/log"; check "--check of a wrong decided value fails (exit 1)" $?
grep -q '"outside": 1' "$tmp/r.json" && grep -q '"parameter": "o"' "$tmp/r.json"; check "--json writes the report" $?
# cuTile's vector add: a + b = 3 covered; one element an ulp off is outside, with the report's worst element
v=$(rep 0000803f 40)
w=$(rep 00000040 40)
npy "$tmp/a.npy" '<f4' '(40,)' "$v"
npy "$tmp/b.npy" '<f4' '(40,)' "$w"
npy "$tmp/c.npy" '<f4' '(40,)' "$(rep 00000000 40)"
mkdir "$tmp/dv"
npy "$tmp/dv/arg6.npy" '<f4' '(40,)' "$(rep 00004040 40)"
"$exe" interp "$kdir/../cutile/cutile_vadd.mlir" --cutile --grid 3 "$tmp/a.npy" "$tmp/b.npy" "$tmp/c.npy" --check "$tmp/dv" > "$tmp/log" 2> "$tmp/err"
[ $? -eq 0 ] && grep -q 'elements checked   40' "$tmp/log"; check "vadd: the device's sums are covered" $?
npy "$tmp/dv/arg6.npy" '<f4' '(40,)' "$(rep 00004040 7)01004040$(rep 00004040 32)"
npy "$tmp/dv/unrelated.npy" '<f4' '(1,)' 00000000
"$exe" interp "$kdir/../cutile/cutile_vadd.mlir" --cutile --grid 3 "$tmp/a.npy" "$tmp/b.npy" "$tmp/c.npy" --check "$tmp/dv" > "$tmp/log" 2> "$tmp/err"
[ $? -eq 1 ]; check "vadd: an element one ulp off exits 1" $?
grep -q 'elements outside   1' "$tmp/log" && grep -q 'worst element      \[7\]' "$tmp/log" && grep -q '1 ulps beyond' "$tmp/log"; check "the report names the element and the ulps beyond" $?
# no device file at all, usage errors
mkdir "$tmp/empty"
"$exe" interp "$k" --kernel branch "$tmp/x3.npy" "$tmp/o.npy" --check "$tmp/empty" > "$tmp/log" 2> "$tmp/err"
[ $? -eq 2 ]; check "--check with no device file exits 2" $?
"$exe" interp "$k" --kernel branch "$tmp/x3.npy" "$tmp/o.npy" --bounds "$tmp/x3.npy" > "$tmp/log" 2> "$tmp/err"
[ $? -eq 2 ] && grep -q 'not a directory' "$tmp/err"; check "--bounds must be a directory" $?
"$exe" interp "$k" --kernel branch "$tmp/x3.npy" "$tmp/o.npy" --check "$tmp/o3" --ulps log=1 > "$tmp/log" 2> "$tmp/err"
[ $? -eq 2 ]; check "--ulps of an op without a model exits 2" $?
"$exe" interp "$k" --kernel branch "$tmp/x3.npy" "$tmp/o.npy" --check "$tmp/o3" --ulps exp2=x > "$tmp/log" 2> "$tmp/err"
[ $? -eq 2 ]; check "--ulps needs a number" $?
"$exe" interp "$k" --kernel branch "$tmp/x3.npy" "$tmp/o.npy" --check "$tmp/o3" --ulps exp2=1 --ulps exp2=2 > "$tmp/log" 2> "$tmp/err"
[ $? -eq 2 ]; check "--ulps of one op twice exits 2" $?
"$exe" interp "$k" --kernel branch "$tmp/x3.npy" "$tmp/o.npy" --check "$tmp/o3" --standard no-such > "$tmp/log" 2> "$tmp/err"
[ $? -eq 2 ] && grep -q "no-such" "$tmp/err"; check "an unknown standard is refused by name" $?
# exp2 within 0 ulps at x = 3 is exactly 8: still decided, and covered
"$exe" interp "$k" --kernel branch "$tmp/x3.npy" "$tmp/o.npy" --check "$tmp/o3" --ulps exp2=0 > "$tmp/log" 2> "$tmp/err"
[ $? -eq 0 ]; check "--ulps exp2=0" $?
# bounds mode takes rounding<approx> (the device's freedom), and writes its enclosures
npy "$tmp/s16.npy" '<f4' '(16,)' "$(rep 0000803f 16)"
mkdir "$tmp/ba"
"$exe" interp "$k" --kernel approx "$tmp/s16.npy" "$tmp/s16.npy" "$tmp/s16.npy" "$tmp/s16.npy" "$tmp/s16.npy" --bounds "$tmp/ba" > "$tmp/log" 2> "$tmp/err"
[ $? -eq 0 ] && [ -f "$tmp/ba/q.lo.npy" ] && [ -f "$tmp/ba/e.hi.npy" ]; check "bounds mode runs rounding<approx>" $?
exit $fail
