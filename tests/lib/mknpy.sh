# mknpy.sh: sourced by the shell tests. mknpy FILE DESCR SHAPE DATA writes a version 1.0 .npy file; DATA is a
# printf format of the raw bytes.
mknpy() {
    dict="{'descr': '$2', 'fortran_order': False, 'shape': $3, }"
    len=${#dict}
    pad=$(( (64 - (10 + len + 1) % 64) % 64 ))
    {
        printf '\223NUMPY\001\000'
        hl=$((len + pad + 1))
        printf "\\$(printf '%03o' $((hl % 256)))\\$(printf '%03o' $((hl / 256)))"
        printf '%s' "$dict"
        printf "%${pad}s\n" ""
        printf "$4"
    } >"$1"
}
