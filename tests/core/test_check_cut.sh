#!/bin/sh
# test_check_cut.sh: an input of `exactref check` cut while the command has it memory-mapped: right
# after it is mapped (refused as truncated, exit 2, the file named) or after it was checked, while the
# tiles still read it (the access past its new end raises SIGBUS: the command must say which file and
# exit 3, never crash, and leave no report or temporary file).  With EXACTREF_NO_MMAP=1 the file is
# read, not mapped, and the check is not disturbed.  A shim (cut_preload.c, LD_PRELOAD) does the cut.
# Usage: test_check_cut.sh PATH/TO/exactref PATH/TO/cut_preload.so     (random data: EXACTREF_SEED)
X="$1"
SHIM="$2"
pass=0
fail=0
command -v python3 >/dev/null 2>&1 || { echo "python3 is missing: skipped"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }
seed=${EXACTREF_SEED:-12345}
echo "test_check_cut: seed $seed (set EXACTREF_SEED to change)"
mkdir "$tmp/in" "$tmp/out"
python3 - "$tmp/in" "$seed" <<'PY'
import os, random, struct, sys
d, seed = sys.argv[1], int(sys.argv[2], 0)
rnd = random.Random(seed)
for name, shape in (("a", (96, 80)), ("b", (80, 72))):
    hdr = "{'descr': '<u2', 'fortran_order': False, 'shape': (%d, %d), }" % shape
    hdr += " " * (63 - (10 + len(hdr)) % 64) + "\n"
    data = b"".join(struct.pack("<H", (rnd.getrandbits(1) << 15) | ((121 + rnd.randrange(8)) << 7) | rnd.getrandbits(7))
                    for _ in range(shape[0] * shape[1]))
    open(os.path.join(d, name + ".npy"), "wb").write(b"\x93NUMPY\x01\x00" + len(hdr).to_bytes(2, "little") + hdr.encode() + data)
PY
BF="--a-format bf16 --b-format bf16"
"$X" matmul "$tmp/in/a.npy" "$tmp/in/b.npy" $BF --out-format f32 -o "$tmp/in/d.npy" 2>/dev/null || { echo "FAIL: setup"; exit 1; }
cp "$tmp/in/a.npy" "$tmp/in/a.keep"
cp "$tmp/in/d.npy" "$tmp/in/d.keep"
# the shim must load (a sanitizer's runtime may refuse a library before it: then this is skipped)
LD_PRELOAD="$SHIM" "$X" formats >/dev/null 2>"$tmp/shim.err" || { echo "the shim does not load: skipped"; cat "$tmp/shim.err"; exit 77; }

# run NAME WHEN FILE ENV...: the check, with FILE cut at WHEN, in tiles of 8 rows (several bands)
run() {
    name=$1 when=$2 file=$3
    shift 3
    cp "$tmp/in/a.keep" "$tmp/in/a.npy"
    cp "$tmp/in/d.keep" "$tmp/in/d.npy"
    env "$@" EXACTREF_CHECK_BLOCK_ROWS=8 ER_TEST_CUT="$tmp/in/$file" ER_TEST_CUT_WHEN="$when" LD_PRELOAD="$SHIM" \
        "$X" check "$tmp/in/a.npy" "$tmp/in/b.npy" "$tmp/in/d.npy" $BF --json "$tmp/out/r.json" \
        >"$tmp/$name.out" 2>"$tmp/$name.err"
    echo $? >"$tmp/$name.rc"
}
for f in a.npy d.npy; do
    run "map_$f" mmap "$f"
    if [ "$(cat "$tmp/map_$f.rc")" = 2 ] && grep -q "$tmp/in/$f: truncated: the file shrank while it was being opened" "$tmp/map_$f.err"
    then ok; else bad "cut at mapping $f: rc $(cat "$tmp/map_$f.rc"): $(cat "$tmp/map_$f.err")"; fi
    run "use_$f" madvise "$f"
    if [ "$(cat "$tmp/use_$f.rc")" = 3 ] && grep -q "exactref: $tmp/in/$f: the file became shorter while it was being read" "$tmp/use_$f.err"
    then ok; else bad "cut in use $f: rc $(cat "$tmp/use_$f.rc"): $(cat "$tmp/use_$f.err")"; fi
    [ -z "$(ls -A "$tmp/out")" ] && ok || bad "cut $f: files left in the report directory: $(ls -A "$tmp/out")"
    run "read_$f" madvise "$f" EXACTREF_NO_MMAP=1
    if [ "$(cat "$tmp/read_$f.rc")" = 0 ] && grep -q "^PASS" "$tmp/read_$f.out" && [ -s "$tmp/out/r.json" ]
    then ok; else bad "EXACTREF_NO_MMAP=1, $f: rc $(cat "$tmp/read_$f.rc"): $(cat "$tmp/read_$f.err")"; fi
    rm -f "$tmp/out/r.json"
done
echo "test_check_cut: $pass passed, $fail failed"
[ "$fail" = 0 ]
