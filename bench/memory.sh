#!/bin/sh
# memory.sh: the peak resident memory of `exactref check` on n x n x n bf16 products with an f32
# output, against the bytes of the .npy inputs and output (the ratio issue 16 bounds by 4).
#   bench/memory.sh EXACTREF [N ...]        (default N: 1024 2048)
# Needs /usr/bin/time (Debian package "time") and python3 (for the random operands).  The files go to
# a temporary directory that is removed at the end.  Speed is not measured here.  The check streams
# in row blocks (docs/cli.md); EXACTREF_CHECK_BLOCK_ROWS=R in the environment sets the rows of a block
# (0: the one-pass check), and the line then names it; so does EXACTREF_NO_MMAP=1 (the files read into
# memory instead of memory-mapped, docs/cli.md).  The peak counts the mapped files' pages that are
# resident: they are the page cache's, which the kernel reclaims under memory pressure, so the peak
# of a mapped check is what it holds when memory is plentiful, not what it needs.
# With ER_PYTHON set to a Python that imports exactref (e.g. build/venv/bin/python), the same problem
# is also checked from Python: the three .npy files loaded into memory (np.load, no mapping), then
# er.testing.assert_matmul_valid(a, b, out) (on a large output the library's check in tiles,
# er_check_result), and its peak is printed against the same bytes ("python" line).
set -eu
exe=${1:?usage: memory.sh EXACTREF [N ...]}
shift
[ $# -gt 0 ] || set -- 1024 2048
[ -x /usr/bin/time ] || { echo "memory.sh: /usr/bin/time is missing (apt-get install time)" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for n in "$@"; do
    # random bf16 patterns: random sign and fraction, exponents 120..127 (values in [2^-7, 2))
    python3 - "$n" "$tmp" <<'EOF'
import os, sys
n, d = int(sys.argv[1]), sys.argv[2]
for name in ("a", "b"):
    cnt = n * n
    r = int.from_bytes(os.urandom(2 * cnt), "little")
    r = (r & int.from_bytes(b"\xff\x83" * cnt, "little")) | int.from_bytes(b"\x00\x3c" * cnt, "little")
    hdr = "{'descr': '<u2', 'fortran_order': False, 'shape': (%d, %d), }" % (n, n)
    hdr += " " * (63 - (10 + len(hdr)) % 64) + "\n"
    with open(os.path.join(d, name + ".npy"), "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + len(hdr).to_bytes(2, "little") + hdr.encode())
        f.write(r.to_bytes(2 * cnt, "little"))
EOF
    "$exe" matmul "$tmp/a.npy" "$tmp/b.npy" -o "$tmp/out.npy" --out-format f32 --a-format bf16 --b-format bf16
    /usr/bin/time -v "$exe" check "$tmp/a.npy" "$tmp/b.npy" "$tmp/out.npy" --a-format bf16 --b-format bf16 \
        >"$tmp/check.txt" 2>"$tmp/time.txt" || { cat "$tmp/check.txt" "$tmp/time.txt" >&2; exit 1; }
    kb=$(sed -n 's/^[[:space:]]*Maximum resident set size (kbytes): //p' "$tmp/time.txt")
    wall=$(sed -n 's/^[[:space:]]*Elapsed (wall clock) time (h:mm:ss or m:ss): //p' "$tmp/time.txt")
    files=$(($(wc -c <"$tmp/a.npy") + $(wc -c <"$tmp/b.npy") + $(wc -c <"$tmp/out.npy")))
    blocks=; [ -z "${EXACTREF_CHECK_BLOCK_ROWS-}" ] || blocks=", EXACTREF_CHECK_BLOCK_ROWS=$EXACTREF_CHECK_BLOCK_ROWS"
    [ -z "${EXACTREF_CHECK_BLOCK_COLS-}" ] || blocks="$blocks, EXACTREF_CHECK_BLOCK_COLS=$EXACTREF_CHECK_BLOCK_COLS"
    [ -z "${EXACTREF_NO_MMAP-}" ] || blocks="$blocks, EXACTREF_NO_MMAP=$EXACTREF_NO_MMAP"
    awk -v n="$n" -v kb="$kb" -v f="$files" -v w="$wall" -v b="$blocks" 'BEGIN {
        printf "memory n=%d bf16 -> f32: peak RSS %.1f MB, inputs+output %.1f MB, ratio %.2f (wall %s%s)\n",
               n, kb * 1024 / 1e6, f / 1e6, kb * 1024 / f, w, b }'
    if [ -n "${ER_PYTHON-}" ]; then
        /usr/bin/time -v "$ER_PYTHON" - "$tmp" >"$tmp/py.txt" 2>"$tmp/time.txt" <<'EOF' || { cat "$tmp/py.txt" "$tmp/time.txt" >&2; exit 1; }
import os, sys
import ml_dtypes, numpy as np
import exactref as er
d = sys.argv[1]
a = np.load(os.path.join(d, "a.npy")).view(ml_dtypes.bfloat16)
b = np.load(os.path.join(d, "b.npy")).view(ml_dtypes.bfloat16)
out = np.load(os.path.join(d, "out.npy"))
er.testing.assert_matmul_valid(a, b, out)
EOF
        kb=$(sed -n 's/^[[:space:]]*Maximum resident set size (kbytes): //p' "$tmp/time.txt")
        wall=$(sed -n 's/^[[:space:]]*Elapsed (wall clock) time (h:mm:ss or m:ss): //p' "$tmp/time.txt")
        awk -v n="$n" -v kb="$kb" -v f="$files" -v w="$wall" 'BEGIN {
            printf "memory n=%d bf16 -> f32, python assert_matmul_valid: peak RSS %.1f MB, inputs+output %.1f MB, ratio %.2f (wall %s)\n",
                   n, kb * 1024 / 1e6, f / 1e6, kb * 1024 / f, w }'
    fi
done
