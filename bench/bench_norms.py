#!/usr/bin/env python3
"""bench_norms.py: the softmax, layer_norm and rms_norm checks against torch's CPU op, and their tightness.

For each operation, on the same random bf16 input (rows x n, default 4096 x 4096): torch's CPU op in
float32 on the inputs (best of --reps), and the whole exactref check in one go: the Result (the exact
answer rounded once: "ref") and covers() of torch's bf16 output under normal (the bounds made for the
call, not kept before: "covers"). Prints the times side by side with their ratio (the issue's floor:
within 5x of torch's op), and the tightness: the median (and 90th percentile) allowed range, high - low of
the finite range, in units of the output's ulp at rounded, per standard, with the number of torch's
outputs outside (expected 0; torch's bf16 log_softmax and logsumexp are the exception: they store intermediates
in bf16, docs/ops/log_softmax.md), and the number outside normal with compute=bfloat16 ("normal/bf16",
the standard that names bf16 intermediates). Beside the wall clock, the CPU seconds of both (time.process_time, every
thread: steadier than the wall clock on a shared machine) and their ratio. Asserts nothing.

    python bench/bench_norms.py [--rows 4096] [--n 4096] [--reps 3]
                                [--ops softmax,log_softmax,logsumexp,layer_norm,rms_norm]
"""
import argparse
import time

import ml_dtypes
import numpy as np

import exactref as er

BF16 = np.dtype(ml_dtypes.bfloat16)


def ulps_of(y):
    """One bf16 ulp at each element of y (bf16 values as float64): 2^(e - 7) for |y| in [2^e, 2^(e+1))."""
    a = np.abs(y)
    e = np.floor(np.log2(np.where(a > 0, a, 1.0)))
    return np.where(a >= 2.0**-126, np.exp2(e - 7), 2.0**-133)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=4096)
    ap.add_argument("--n", type=int, default=4096)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--ops", default="softmax,log_softmax,logsumexp,layer_norm,rms_norm")
    ap.add_argument("--seed", type=int, default=20261207)
    args = ap.parse_args()
    import torch

    rng = np.random.default_rng(args.seed)
    x = (rng.standard_normal((args.rows, args.n)) * 1.5).astype(np.float32).astype(BF16)
    w = rng.standard_normal(args.n).astype(np.float32).astype(BF16)
    b = rng.standard_normal(args.n).astype(np.float32).astype(BF16)
    xt32 = torch.from_numpy(x.astype(np.float32))
    wt32, bt32 = torch.from_numpy(w.astype(np.float32)), torch.from_numpy(b.astype(np.float32))
    xtb, wtb, btb = xt32.to(torch.bfloat16), wt32.to(torch.bfloat16), bt32.to(torch.bfloat16)
    F = torch.nn.functional
    ops = {
        "softmax": (lambda t, tw, tb: torch.softmax(t, -1), lambda: er.softmax(x, -1)),
        "log_softmax": (lambda t, tw, tb: torch.log_softmax(t, -1), lambda: er.log_softmax(x, -1)),
        "logsumexp": (lambda t, tw, tb: torch.logsumexp(t, -1), lambda: er.logsumexp(x, -1)),
        "layer_norm": (lambda t, tw, tb: F.layer_norm(t, (args.n,), tw, tb, 1e-5),
                       lambda: er.layer_norm(x, (args.n,), w, b, 1e-5)),
        "rms_norm": (lambda t, tw, tb: F.rms_norm(t, (args.n,), tw, 1e-6), lambda: er.rms_norm(x, (args.n,), w, 1e-6)),
    }
    print(f"bf16 input {args.rows} x {args.n}, torch {torch.__version__}, {torch.get_num_threads()} threads")
    print(f"{'op':<11} {'torch f32':>10} {'ref':>7} {'covers':>7} {'check':>7} {'ratio':>6} {'cpu torch':>9} "
          f"{'cpu check':>9} {'ratio':>6}   standard: median / p90 range (ulps), outside")
    for name in args.ops.split(","):
        top, eop = ops[name]
        times = [_time(lambda: top(xt32, wt32, bt32)) for _ in range(args.reps)]
        best, best_cpu = min(t[0] for t in times), min(t[1] for t in times)
        yb = top(xtb, wtb, btb).float().numpy().astype(BF16)  # torch's bf16 kernel: the output judged
        c0, t0 = time.process_time(), time.perf_counter()
        r = eop()
        t1 = time.perf_counter()
        out = {std: int((~np.asarray(r.covers(yb, standard=std))).sum()) for std in ("normal",)}
        check, check_cpu = time.perf_counter() - t0, time.process_time() - c0
        ref = t1 - t0
        parts = []
        for std in ("normal", "any_order"):
            if std not in out:
                out[std] = int((~np.asarray(r.covers(yb, standard=std))).sum())
            lo, hi = r.finite_range(standard=std)
            u = ulps_of(np.asarray(r.rounded).astype(np.float64))
            rng_ulps = (np.asarray(hi).astype(np.float64) - np.asarray(lo).astype(np.float64)) / u
            parts.append(f"{std} {np.median(rng_ulps):.3g} / {np.percentile(rng_ulps, 90):.3g}, {out[std]}")
        parts.append(f"normal/bf16 {int((~np.asarray(r.covers(yb, standard='normal', compute='bfloat16'))).sum())}")
        print(f"{name:<11} {best * 1e3:8.1f}ms {ref:6.2f}s {check - ref:6.2f}s {check:6.2f}s {check / best:5.0f}x "
              f"{best_cpu * 1e3:7.0f}ms {check_cpu:8.2f}s {check_cpu / best_cpu:5.0f}x   " + "; ".join(parts))


def _time(f):
    """(wall seconds, CPU seconds of every thread) of f()."""
    c0, t0 = time.process_time(), time.perf_counter()
    f()
    return time.perf_counter() - t0, time.process_time() - c0


if __name__ == "__main__":
    main()
