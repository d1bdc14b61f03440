#!/usr/bin/env python3
# tightness.py: the tightness of bounds mode on each cuTile sample (sample_*.mlir): the median width of every float
# output's enclosures in ulps of the interpreter's value ((hi - lo) / the float32 ulp above |value|), from
# `exactref interp --bounds` on the test's inputs (tests/python/test_cutile_samples.py's builders).  A measurement,
# not a test: docs/interp.md ("Speed") holds its output.
#
#   build/venv/bin/python tests/interp/cutile/tightness.py [SEED]     (the command: build/exactref or $EXACTREF_CLI)
import os
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
sys.path.insert(0, os.path.join(ROOT, "tests", "python"))
import test_cutile_samples as T  # noqa: E402  (the samples' input builders and argument binding)

F32, F16 = np.float32, np.float16


def cases(rng):
    """(sample, grid, args, standard) as the bounds tests launch them."""
    n = rng.standard_normal
    x64 = n((4, 64)).astype(F32)
    w64 = n(64).astype(F32)
    _, mean, rstd = T.layernorm_fwd(x64, w64, np.zeros(64, F32))
    x16 = n((16, 64)).astype(F32)
    _, mean16, rstd16 = T.layernorm_fwd(x16, w64, np.zeros(64, F32))
    moe, nb = T.moe_inputs(rng)
    peers, w, out0 = T.allgather_inputs(rng)
    shapes = [(16, 32, 16), (16, 48, 16)]
    qkv = [n((32, 32)).astype(F16) for _ in range(3)]
    return [
        ("sample_transpose", (2, 3), [n((32, 48)).astype(F32), np.zeros((48, 32), F32)], None),
        ("sample_bmm", (2, 1, 2), [n((2, 16, 48)).astype(F16), n((2, 48, 32)).astype(F16), np.zeros((2, 16, 32), F32)], "any_order"),
        ("sample_splitk", (1, 1, 2), [n((16, 64)).astype(F16), n((64, 16)).astype(F16), np.zeros((16, 16), F32)], None),
        ("sample_group_gemm", (1, 1, 2), [("list", [n((m, k)).astype(F16) for m, k, _ in shapes]),
                                          ("list", [n((k, c)).astype(F16) for _, k, c in shapes]),
                                          ("list", [np.zeros((m, c), F32) for m, _, c in shapes])], "any_order"),
        ("sample_layernorm_fwd", (4,), [x64, w64, n(64).astype(F32), np.zeros_like(x64), np.zeros(4, F32), np.zeros(4, F32)], None),
        ("sample_layernorm_bwd", (16,), [x16, n((16, 64)).astype(F32), w64, mean16, rstd16, np.zeros_like(x16),
                                         np.zeros((2, 64), F32), np.zeros((2, 64), F32), np.zeros(2, np.int32)], None),
        ("sample_rmsnorm", (4,), [x64, w64, np.zeros_like(x64)], None),
        ("sample_fmha", (2,), qkv + [np.zeros((32, 32), F32)], "any_order"),
        ("sample_fmha_causal", (2,), qkv + [np.zeros((32, 32), F32)], "any_order"),
        ("sample_fft", (2,), T.fft_inputs(rng, 32), "any_order"),
        ("sample_moe", (nb, 1), moe, "any_order"),
        ("sample_allgather_matmul", (4, 2), [("list", peers), w, out0], "any_order"),
    ]


def main():
    seed = int(sys.argv[1]) if len(sys.argv) > 1 else 20261201
    exe = os.environ.get("EXACTREF_CLI") or os.path.join(ROOT, "build", "exactref")
    rng = np.random.default_rng(seed)
    print("seed %d; median enclosure width in ulps of the interpreter's value, per float output" % seed)
    for name, grid, args, std in cases(rng):
        with tempfile.TemporaryDirectory() as tmp:
            cmd, names = T._args(tmp, args)
            arg_of = {"arg%d" % pn: i for i, (_, pn, _) in enumerate(names)}
            out, bd = os.path.join(tmp, "out"), os.path.join(tmp, "bd")
            base = [exe, "interp", os.path.join(HERE, name + ".mlir"), "--cutile", "--grid", ",".join(map(str, grid))] + cmd
            std_opt = ["--standard", std] if std else []
            subprocess.run(base + ["-o", out], check=True, capture_output=True)
            os.makedirs(bd)
            subprocess.run(base + ["--bounds", bd] + std_opt, check=True, capture_output=True)
            parts = []
            for f in sorted(os.listdir(out)):
                stem = f[:-4]
                lo_f = os.path.join(bd, stem + ".lo.npy")
                if not os.path.exists(lo_f):
                    continue
                v = np.load(os.path.join(out, f))
                if v.dtype != F32:
                    continue
                lo, hi = np.load(lo_f), np.load(os.path.join(bd, stem + ".hi.npy"))
                ulp = np.spacing(np.abs(v)).astype(np.float64)
                wd = (hi - lo) / ulp
                base_name, _, k = stem.partition(".")
                label = "output %d%s" % (arg_of.get(base_name, -1), "[%s]" % k if k else "")
                parts.append("%s %.3g" % (label, float(np.median(wd))))
            print("%-26s %-10s %s" % (name, std or "normal", ", ".join(parts)))


if __name__ == "__main__":
    main()
