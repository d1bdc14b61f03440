#!/bin/sh
# make_corpus.sh: write the .npy test corpus (tiny valid files ok_*, malformed files bad_*) into
# tests/npy/corpus, or into the directory given as $1.  POSIX sh and printf only; deterministic.
# test_npy_corpus reads every file and checks the status and message it expects for each; the
# fuzzer (scripts/fuzz.sh) starts from these files.  Rerun after adding a case, and commit the files.
set -eu
out=${1:-$(dirname "$0")/corpus}
mkdir -p "$out"
rm -f "$out"/*.npy

# oct N: the octal escape of byte N (for printf).
oct() { printf '\\%03o' "$1"; }

# preamble MAJOR HLEN: magic, version MAJOR.0 and the header length (2 bytes for 1.0, 4 otherwise).
preamble() {
    printf '\223NUMPY'
    printf "$(oct "$1")$(oct 0)"
    if [ "$1" = 1 ]; then
        printf "$(oct $(($2 % 256)))$(oct $(($2 / 256 % 256)))"
    else
        printf "$(oct $(($2 % 256)))$(oct $(($2 / 256 % 256)))$(oct $(($2 / 65536 % 256)))$(oct $(($2 / 16777216 % 256)))"
    fi
}

# header MAJOR DICT: the preamble and DICT padded with spaces and a newline to a multiple of 64 bytes.
header() {
    pre=10
    [ "$1" = 1 ] || pre=12
    len=${#2}
    total=$(( (pre + len + 1 + 63) / 64 * 64 ))
    hlen=$((total - pre))
    preamble "$1" "$hlen"
    printf '%s' "$2"
    printf "%$((hlen - len - 1))s\n" ""
}

# bytes N: N bytes 0x01 0x02 ... (cycling), as data.
bytes() {
    i=0
    while [ "$i" -lt "$1" ]; do
        printf "$(oct $((i % 255 + 1)))"
        i=$((i + 1))
    done
}

d() { printf "{'descr': '%s', 'fortran_order': False, 'shape': %s, }" "$1" "$2"; }

# ---- Valid files. ----
{ header 1 "$(d '<f8' '(2, 3)')"; printf '\000\000\000\000\000\000\360\077'; bytes 40; } > "$out/ok_f8_2x3.npy"
{ header 2 "$(d '<f4' '(2, 2)')"; printf '\000\000\200\077\000\000\000\100\000\000\100\100\000\000\200\100'; } > "$out/ok_f4_v2.npy"
{ header 3 "$(d '|u1' '(3, 2)')"; printf '\000\001\007\070\100\177'; } > "$out/ok_u1_v3.npy"
{ header 1 "$(d '<i4' '()')"; printf '\052\000\000\000'; } > "$out/ok_i4_scalar.npy"
{ header 1 "$(d '<f2' '(3,)')"; printf '\000\074\000\100\000\176'; } > "$out/ok_f2_1d.npy"
{ header 1 "$(d '<i8' '(0, 4)')"; } > "$out/ok_i8_empty.npy"
{ header 1 "$(d '=i2' '(1, 2, 2)')"; bytes 8; } > "$out/ok_i2_native_order.npy"
{ header 1 "{'shape': (2L, 2L), 'fortran_order': False, 'descr': '<u2'}"; printf '\200\077\000\100\300\177\000\000'; } > "$out/ok_u2_python2.npy"
{ header 1 "{\"descr\": \"|i1\", \"fortran_order\": False, \"shape\": (2, 2)}"; printf '\001\377\200\177'; } > "$out/ok_i1_double_quotes.npy"

# ---- Malformed files. ----
: > "$out/bad_empty.npy"
{ printf '\223NUMPZ\001\000'; printf 'v\000'; printf "%118s\n" ""; } > "$out/bad_magic.npy"
printf '\223NU' > "$out/bad_magic_short.npy"
{ preamble 4 54; d '<f8' '(1,)'; printf '\n'; bytes 8; } > "$out/bad_version.npy"
{ printf '\223NUMPY\001\000\010'; } > "$out/bad_truncated_preamble.npy"
{ preamble 1 1000; d '<f8' '(1,)'; printf '\n'; bytes 8; } > "$out/bad_header_len.npy"
{ preamble 2 4294967295; d '<f8' '(1,)'; printf '\n'; } > "$out/bad_header_len_v2.npy"
{ header 1 "$(d '<f8' '(3, 4)')"; bytes 40; } > "$out/bad_truncated.npy"
{ header 1 "$(d '<f4' '(2,)')"; bytes 12; } > "$out/bad_trailing.npy"
{ header 1 "$(d '<f8' '(1000000, 1000000)')"; bytes 8; } > "$out/bad_lying_shape.npy"
{ header 1 "$(d '<f8' '(1099511627776, 2)')"; bytes 8; } > "$out/bad_huge.npy"
{ header 1 "$(d '|u1' '(4294967296, 4294967296, 4294967296)')"; bytes 8; } > "$out/bad_huge_product.npy"
{ header 1 "$(d '<f8' '(99999999999999999999999999,)')"; bytes 8; } > "$out/bad_huge_digits.npy"
{ header 1 "$(d '<f8' '(-3, 4)')"; bytes 8; } > "$out/bad_negative.npy"
{ header 1 "{'descr': '<f8', 'fortran_order': True, 'shape': (2, 2), }"; bytes 32; } > "$out/bad_fortran.npy"
{ header 1 "$(d '>f8' '(2,)')"; bytes 16; } > "$out/bad_bigendian.npy"
{ header 1 "$(d '<c16' '(1,)')"; bytes 16; } > "$out/bad_dtype.npy"
{ header 1 "$(d '|f8' '(1,)')"; bytes 8; } > "$out/bad_byteorder.npy"
{ header 1 "{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (1,), }"; bytes 4; } > "$out/bad_structured.npy"
{ header 1 "[1, 2, 3]"; } > "$out/bad_not_dict.npy"
{ header 1 "{'descr' '<f8', 'fortran_order': False, 'shape': (1,), }"; bytes 8; } > "$out/bad_garbage_dict.npy"
{ header 1 "{'descr': '<f8', 'fortran_order': False}"; bytes 8; } > "$out/bad_missing_key.npy"
{ header 1 "{'descr': '<f8', 'fortran_order': False, 'shape': (1,), 'foo': 1}"; bytes 8; } > "$out/bad_extra_key.npy"
{ header 1 "{'descr': '<f8', 'fortran_order': False, 'shape': (1,), 'descr': '<f4'}"; bytes 8; } > "$out/bad_duplicate_key.npy"
{ header 1 "{'descr': '<f8"; } > "$out/bad_unterminated.npy"
{ header 1 "$(d '<f8' '(3)')"; bytes 24; } > "$out/bad_shape_not_tuple.npy"
{ header 1 "$(d '<f8' '(1, 1, 1, 1, 1, 1, 1, 1, 1)')"; bytes 8; } > "$out/bad_too_many_dims.npy"
{ header 1 "$(d '<f8' '(1,)') junk"; bytes 8; } > "$out/bad_after_dict.npy"
{ preamble 1 58; printf "{'descr': '<f8', 'fortran_order': False, 'shape': (1,)"; printf '\000\000}\n'; bytes 8; } > "$out/bad_nul_in_header.npy"
