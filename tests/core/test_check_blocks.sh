#!/bin/sh
# test_check_blocks.sh: `exactref check` streamed in row blocks says what the one-shot check says: the
# text report (its time line aside), --json (its seconds aside), --junit, --plot and the failure
# bundle, byte for byte, for tiles of 1, 3, 5 and 7 rows and 1, 2, 4 or all columns
# (EXACTREF_CHECK_BLOCK_ROWS and _COLS; 0 rows is one pass), with the .npy files memory-mapped (the
# default) and read into memory (EXACTREF_NO_MMAP=1, one pass and tiles):
# 2-D and batched products (either operand broadcast), an accumulator, block scales, an integer
# product, a widened output (the narrower-format hint) and outputs with elements outside.
# Usage: test_check_blocks.sh PATH/TO/exactref      (random data: EXACTREF_SEED)
X="$1"
pass=0
fail=0
command -v python3 >/dev/null 2>&1 || { echo "python3 is missing: skipped"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }
seed=${EXACTREF_SEED:-12345}
echo "test_check_blocks: seed $seed (set EXACTREF_SEED to change)"

# npy FILE DESCR SHAPE KIND: random data (KIND bf16: small bf16 patterns; i8; e8m0: scales near 1;
# f32pert: FILE's f32 data with some elements moved; bf16cut: FILE's f32 data cut to bf16)
python3 - "$tmp" "$seed" <<'EOF'
import os, random, struct, sys
d, seed = sys.argv[1], int(sys.argv[2], 0)
rnd = random.Random(seed)
def write(name, descr, shape, data):
    hdr = "{'descr': '%s', 'fortran_order': False, 'shape': (%s), }" % (descr, "".join("%d, " % s for s in shape))
    hdr += " " * (63 - (10 + len(hdr)) % 64) + "\n"
    with open(os.path.join(d, name), "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + len(hdr).to_bytes(2, "little") + hdr.encode() + data)
def bf16(n): return b"".join(struct.pack("<H", (rnd.getrandbits(1) << 15) | ((121 + rnd.randrange(8)) << 7) | rnd.getrandbits(7)) for _ in range(n))
def count(s):
    c = 1
    for x in s: c *= x
    return c
for name, shape in (("a", (13, 21)), ("b", (21, 11)), ("a3", (3, 5, 21)), ("b3", (3, 21, 11))):
    write(name + ".npy", "<u2", shape, bf16(count(shape)))
write("c.npy", "<f4", (13, 11), b"".join(struct.pack("<f", rnd.uniform(-4, 4)) for _ in range(13 * 11)))
write("ai.npy", "|i1", (13, 40), bytes(rnd.getrandbits(8) for _ in range(13 * 40)))
write("bi.npy", "|i1", (40, 11), bytes(rnd.getrandbits(8) for _ in range(40 * 11)))
# MXFP8: e4m3 operands (k = 64, block 32), e8m0 scales near 1
write("am.npy", "|u1", (13, 64), bytes(rnd.choice([rnd.getrandbits(7) | 0x30, rnd.getrandbits(8) & 0xB7]) for _ in range(13 * 64)))
write("bm.npy", "|u1", (64, 11), bytes(rnd.getrandbits(8) & 0xBF for _ in range(64 * 11)))
write("sa.npy", "|u1", (13, 2), bytes(125 + rnd.randrange(5) for _ in range(26)))
write("sb.npy", "|u1", (2, 11), bytes(125 + rnd.randrange(5) for _ in range(22)))
EOF
[ -s "$tmp/sb.npy" ] || { echo "FAIL: the random arrays were not written"; exit 1; }

# perturb IN OUT KIND: OUT is IN's f32 data moved (KIND pert) or cut to bf16 (KIND cut)
perturb() {
    python3 - "$1" "$2" "$3" "$seed" <<'EOF'
import random, struct, sys
src, dst, kind, seed = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4], 0)
rnd = random.Random(seed + 7)
b = bytearray(open(src, "rb").read())
off = 10 + int.from_bytes(b[8:10], "little")
for p in range(off, len(b), 4):
    v = int.from_bytes(b[p:p + 4], "little")
    if kind == "cut": v &= 0xFFFF0000
    else:
        r = rnd.randrange(10)
        if r == 0: v ^= 1 << rnd.randrange(24)
        elif r == 1: v = 0x7FC00000
        elif r == 2: v += rnd.randrange(1, 3)
    b[p:p + 4] = v.to_bytes(4, "little")
open(dst, "wb").write(bytes(b))
EOF
}

# same NAME ARGS...: the check of ARGS in one shot and in tiles of R rows and C columns (R_C; C 0: all
# columns) say the same
same() {
    name=$1; shift
    for r in 0_0 1_0 3_0 7_0 3_4 5_2 1_1 d_d n0_0 n3_4 nd_d; do
        mkdir -p "$tmp/r$r"
        rm -rf "$tmp/r$r/bundle"
        nomap=; rr=$r
        case $r in n*) nomap=1; rr=${r#n} ;; esac # n: read into memory, not mapped
        rows=${rr%_*}; [ "$rows" = d ] && rows= # d: the command's own choice (a batch goes matrix by matrix)
        EXACTREF_NO_MMAP=$nomap EXACTREF_CHECK_BLOCK_ROWS=$rows EXACTREF_CHECK_BLOCK_COLS=${rr#*_} "$X" check "$@" --json "$tmp/r$r/j.json" --junit "$tmp/r$r/u.xml" \
            --plot "$tmp/r$r/p.svg" --save-failures "$tmp/r$r/bundle" >"$tmp/r$r/out" 2>"$tmp/r$r/err"
        echo $? >"$tmp/r$r/rc"
        grep -v '^  time  ' "$tmp/r$r/out" | grep -v 'failure bundle' >"$tmp/r$r/text"
        grep -v '"seconds' "$tmp/r$r/j.json" >"$tmp/r$r/json"
        sed 's/time="[^"]*"//g' "$tmp/r$r/u.xml" >"$tmp/r$r/junit"
    done
    for r in 1_0 3_0 7_0 3_4 5_2 1_1 d_d n0_0 n3_4 nd_d; do
        for f in rc text json junit p.svg err; do
            cmp -s "$tmp/r0_0/$f" "$tmp/r$r/$f" || { bad "$name: tiles $r: $f differs: $(diff "$tmp/r0_0/$f" "$tmp/r$r/$f" | head -5)"; continue 2; }
        done
        if [ -d "$tmp/r0_0/bundle" ]; then
            for f in "$tmp/r0_0/bundle"/*.npy; do
                cmp -s "$f" "$tmp/r$r/bundle/$(basename "$f")" || { bad "$name: tiles $r: bundle $(basename "$f") differs"; continue 2; }
            done
        fi
        ok
    done
}

BF="--a-format bf16 --b-format bf16"
"$X" matmul "$tmp/a.npy" "$tmp/b.npy" $BF --out-format f32 -o "$tmp/d.npy" || bad "setup: matmul"
perturb "$tmp/d.npy" "$tmp/dp.npy" pert
perturb "$tmp/d.npy" "$tmp/dc.npy" cut
same "2-D exact" "$tmp/a.npy" "$tmp/b.npy" "$tmp/d.npy" $BF
same "2-D moved" "$tmp/a.npy" "$tmp/b.npy" "$tmp/dp.npy" $BF
same "2-D moved, hopper" "$tmp/a.npy" "$tmp/b.npy" "$tmp/dp.npy" $BF --standard hopper
same "2-D widened" "$tmp/a.npy" "$tmp/b.npy" "$tmp/dc.npy" $BF
grep -q "every output value is a bf16 value" "$tmp/r0_0/out" && ok || bad "2-D widened: no hint in $(cat "$tmp/r0_0/out" "$tmp/r0_0/err")"
"$X" matmul "$tmp/a.npy" "$tmp/b.npy" $BF --acc "$tmp/c.npy" --out-format f32 -o "$tmp/dacc.npy" || bad "setup: acc"
perturb "$tmp/dacc.npy" "$tmp/daccp.npy" pert
same "2-D accumulator" "$tmp/a.npy" "$tmp/b.npy" "$tmp/daccp.npy" $BF --acc "$tmp/c.npy"
"$X" matmul "$tmp/a3.npy" "$tmp/b3.npy" $BF --out-format f32 -o "$tmp/d3.npy" || bad "setup: batched"
perturb "$tmp/d3.npy" "$tmp/d3p.npy" pert
same "batched" "$tmp/a3.npy" "$tmp/b3.npy" "$tmp/d3p.npy" $BF
"$X" matmul "$tmp/a3.npy" "$tmp/b.npy" $BF --out-format f32 -o "$tmp/d3b.npy" || bad "setup: B broadcast"
perturb "$tmp/d3b.npy" "$tmp/d3bp.npy" pert
same "batched, B broadcast" "$tmp/a3.npy" "$tmp/b.npy" "$tmp/d3bp.npy" $BF
"$X" matmul "$tmp/a.npy" "$tmp/b3.npy" $BF --out-format f32 -o "$tmp/d3a.npy" 2>"$tmp/err3a" &&
    { perturb "$tmp/d3a.npy" "$tmp/d3ap.npy" pert; same "batched, A broadcast" "$tmp/a.npy" "$tmp/b3.npy" "$tmp/d3ap.npy" $BF; }
"$X" matmul "$tmp/ai.npy" "$tmp/bi.npy" --out-format i32 -o "$tmp/di.npy" || bad "setup: mmai"
same "mmai" "$tmp/ai.npy" "$tmp/bi.npy" "$tmp/di.npy"
MX="--a-format f8E4M3FN --b-format f8E4M3FN --a-scale $tmp/sa.npy --b-scale $tmp/sb.npy --scale-format f8E8M0FNU --block 32"
if "$X" matmul "$tmp/am.npy" "$tmp/bm.npy" $MX --out-format f32 -o "$tmp/dm.npy" 2>"$tmp/errm"; then
    perturb "$tmp/dm.npy" "$tmp/dmp.npy" pert
    same "block scales" "$tmp/am.npy" "$tmp/bm.npy" "$tmp/dmp.npy" $MX
else
    bad "setup: block-scaled matmul: $(cat "$tmp/errm")"
fi

# an error inside a tile (here a device that does not exist, where the build has OpenCL) is said as the
# one-pass check says it: the same status and message
for r in 0 1; do
    EXACTREF_CHECK_BLOCK_ROWS=$r "$X" check "$tmp/a.npy" "$tmp/b.npy" "$tmp/dp.npy" $BF --backend opencl --device 99 \
        >"$tmp/dev$r.out" 2>"$tmp/dev$r.err"
    echo $? >>"$tmp/dev$r.err"
done
if cmp -s "$tmp/dev0.err" "$tmp/dev1.err" && [ "$(tail -n 1 "$tmp/dev0.err")" != 0 ]; then ok; else
    bad "device error: one pass $(cat "$tmp/dev0.err"), tiles $(cat "$tmp/dev1.err")"; fi

# --save-bounds (one pass) writes the same four files mapped and read into memory
for nm in "" 1; do
    mkdir -p "$tmp/sb$nm"
    EXACTREF_NO_MMAP=$nm "$X" check "$tmp/a.npy" "$tmp/b.npy" "$tmp/dp.npy" $BF --save-bounds "$tmp/sb$nm" \
        >"$tmp/sb$nm.out" 2>&1
    echo $? >>"$tmp/sb$nm.out"
done
sbok=1
for f in tolerance.npy has_range.npy range_low.npy range_high.npy; do
    [ -s "$tmp/sb/$f" ] && cmp -s "$tmp/sb/$f" "$tmp/sb1/$f" || sbok=0
done
grep -v '^  time  ' "$tmp/sb.out" >"$tmp/sb.txt"; grep -v '^  time  ' "$tmp/sb1.out" >"$tmp/sb1.txt"
if [ $sbok = 1 ] && cmp -s "$tmp/sb.txt" "$tmp/sb1.txt"; then ok; else bad "--save-bounds: mapped and read differ: $(ls "$tmp/sb" "$tmp/sb1")"; fi

# a bad input says the same, mapped or read: the status, and the message naming the file, the index
# and the problem (a value not in the declared format, a NaN where the format has none, a pattern wider
# than its format, a truncated file, a bad header)
python3 - "$tmp" <<'EOF'
import os, struct, sys
d = sys.argv[1]
def write(name, descr, shape, data, cut=0):
    hdr = "{'descr': '%s', 'fortran_order': False, 'shape': (%s), }" % (descr, "".join("%d, " % s for s in shape))
    hdr += " " * (63 - (10 + len(hdr)) % 64) + "\n"
    b = b"\x93NUMPY\x01\x00" + len(hdr).to_bytes(2, "little") + hdr.encode() + data
    open(os.path.join(d, name), "wb").write(b[:len(b) - cut])
write("e_inexact.npy", "<f4", (13, 21), struct.pack("<f", 1.0) * 200 + struct.pack("<f", 0.1) + struct.pack("<f", 1.0) * 72)
write("e_nan.npy", "<f4", (13, 21), struct.pack("<f", 1.0) * 100 + struct.pack("<I", 0x7fc00000) + struct.pack("<f", 1.0) * 172)
write("e_pattern.npy", "|u1", (21, 11), bytes([3]) * 230 + bytes([0x1f]))
write("e_cut.npy", "<u2", (21, 11), bytes(2 * 231), cut=3)
open(os.path.join(d, "e_header.npy"), "wb").write(b"\x93NUMPY\x01\x00\x10\x00{'descr': 'x'}  \n")
EOF
Xa=$X; case $Xa in /*) ;; */*) Xa=$(pwd)/$Xa ;; esac # the runs below are in $tmp
for c in "e_inexact.npy b.npy d.npy --a-format bf16 --b-format bf16|e_inexact.npy: element [9, 11] = 0x1.99999ap-4" \
         "e_nan.npy b.npy d.npy --a-format f4E2M1FN --b-format bf16|e_nan.npy: element [4, 16] = nan (nan) is NaN, and f4E2M1FN has no NaN" \
         "a.npy e_pattern.npy d.npy --a-format bf16 --b-format f4E2M1FN|e_pattern.npy: element [20, 10] = 0x1f" \
         "a.npy e_cut.npy d.npy --a-format bf16 --b-format bf16|e_cut.npy: truncated" \
         "a.npy b.npy e_header.npy --a-format bf16 --b-format bf16|e_header.npy: " \
         "a.npy b.npy e_cut.npy --a-format bf16 --b-format bf16|e_cut.npy: truncated"; do
    want=${c#*|}
    set -- ${c%%|*}
    (cd "$tmp" && "$Xa" check "$@" >"$tmp/em.out" 2>"$tmp/em.err"; echo $? >>"$tmp/em.err")
    (cd "$tmp" && EXACTREF_NO_MMAP=1 "$Xa" check "$@" >"$tmp/er.out" 2>"$tmp/er.err"; echo $? >>"$tmp/er.err")
    if cmp -s "$tmp/em.err" "$tmp/er.err" && cmp -s "$tmp/em.out" "$tmp/er.out" && [ "$(tail -n 1 "$tmp/em.err")" = 2 ] &&
        grep -qF "$want" "$tmp/em.err"; then ok; else
        bad "bad input ($*): mapped: $(cat "$tmp/em.err"); read: $(cat "$tmp/er.err")"; fi
done

echo "test_check_blocks: $pass passed, $fail failed"
[ "$fail" = 0 ]
