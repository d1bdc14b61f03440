"""bench_ops.py: attention's check against torch's CPU scaled_dot_product_attention (time ratio, one run), the tightness table per standard and planted tol/16 errors (issue 31 items 5 and 6)."""
import argparse
import time

import numpy as np

import exactref as er

try:
    import ml_dtypes
except ImportError:  # pragma: no cover
    raise SystemExit("bench_ops.py needs ml_dtypes")


def bf16(g, shape):
    return g.standard_normal(shape).astype(np.float32).astype(ml_dtypes.bfloat16)


def speed(B, H, S, D, seed, block):
    g = np.random.default_rng(seed)
    q, k, v = bf16(g, (B, H, S, D)), bf16(g, (B, H, S, D)), bf16(g, (B, H, S, D))
    try:
        import torch
    except ImportError:
        torch = None
    t_torch = None
    out = None
    if torch is not None:
        tq, tk, tv = (torch.from_numpy(x.astype(np.float32)) for x in (q, k, v))
        torch.nn.functional.scaled_dot_product_attention(tq[:, :1, :64], tk[:, :1, :64], tv[:, :1, :64])  # warm up
        t0 = time.perf_counter()
        o = torch.nn.functional.scaled_dot_product_attention(tq, tk, tv)
        t_torch = time.perf_counter() - t0
        out = o.numpy().astype(ml_dtypes.bfloat16)
    t0 = time.perf_counter()
    r = er.scaled_dot_product_attention(q, k, v)
    t_ref = time.perf_counter() - t0
    std = f"flash:block={block}"
    t0 = time.perf_counter()
    r["out"].finite_range(standard=std)
    t_bound = time.perf_counter() - t0
    if out is None:
        out = np.asarray(r["out"].rounded)
    t0 = time.perf_counter()
    cov = np.asarray(r["out"].covers(out, standard=std))
    t_cov = time.perf_counter() - t0
    total = t_ref + t_bound + t_cov
    print(f"attention B={B} H={H} S={S} D={D} bf16, standard {std}")
    print(f"  exactref: reference {t_ref:.3f} s, bound {t_bound:.3f} s, covers {t_cov:.3f} s: {total:.3f} s")
    if torch is not None:
        # torch's f32 kernel keeps P in f32 and calls exp_u20 (20 ulps); its key block is its own
        bad = int((~np.asarray(r["out"].covers(out, standard="flash:p=compute", ulps=20))).sum())
        print(f"  torch's output (rounded to bf16) under flash:p=compute, ulps=20: {bad} outside; "
              f"under {std} (P in bf16, not torch's): {int((~cov).sum())} outside")
    if t_torch is not None:
        print(f"  torch CPU SDPA f32 {t_torch:.3f} s; ratio {total / t_torch:.1f}x (floor: 5x)")


# The standards of the tightness table: flash with a declared key block and the scores' and P V's matrix
# standard (any_order: a CPU kernel in f32; ampere: FlashAttention-2's mma.sync f32 accumulation; hopper:
# FlashAttention-3's wgmma), flash over any partition, the textbook ones.
# order=reverse: the key blocks visited from the last, as FlashAttention-2 and -3 do.
STANDARDS = ("flash:block=64", "flash:block=128", "flash:block=64,mma=ampere", "flash:block=128,mma=ampere",
             "flash:block=128,mma=hopper", "flash:block=64,mma=ampere,order=reverse",
             "flash:block=128,mma=hopper,order=reverse", "flash:mma=hopper", "flash", "any_order", "normal")


def tightness(B, H, S, D, seed):
    g = np.random.default_rng(seed)
    q, k, v = bf16(g, (B, H, S, D)), bf16(g, (B, H, S, D)), bf16(g, (B, H, S, D))
    for out_dtype in ("bfloat16", "float32"):
        r = er.scaled_dot_product_attention(q, k, v, dtype=out_dtype)
        o = r["out"]
        ref = np.asarray(o.rounded).astype(np.float64)
        tol = 1e-5 + 1.6e-2 * np.abs(ref)
        # one output ulp at each element (bf16: 2^-7 of the binade; f32: 2^-23)
        ulp = np.ldexp(1.0, np.frexp(np.maximum(np.abs(ref), 2.0**-126))[1] - (8 if out_dtype == "bfloat16" else 24))
        print(f"tightness: attention B={B} H={H} S={S} D={D} bf16, out {out_dtype}, default ulps")
        print(f"  {'standard':<40} {'median range (ulps)':>20} {'median range / assert_close bf16 tol':>38}"
              f" {'one value':>10}")
        for std in STANDARDS:
            lo, hi = (np.asarray(x).astype(np.float64) for x in o.finite_range(standard=std))
            w = hi - lo
            print(f"  {std:<40} {np.median(w / ulp):>20.2f} {np.median(w / tol):>38.3f} {np.mean(w == 0):>10.3f}")


def planted(B, H, S, D, seed, n=4000):
    """Errors of tol/16 planted into a FlashAttention-2 / -3 kernel's output (the tests' numpy loop with
    the tensor-core model's bit-accurate arithmetic, out f32): the fraction of them flagged."""
    import os
    import sys
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "python"))
    import fa_emul
    g = np.random.default_rng(seed)
    q, k, v = bf16(g, (B, H, S, D)), bf16(g, (B, H, S, D)), bf16(g, (B, H, S, D))
    r = er.scaled_dot_product_attention(q, k, v, dtype="float32")
    o = r["out"]
    ref = np.asarray(o.rounded).astype(np.float64)
    tol = 1e-5 + 1.6e-2 * np.abs(ref)
    f = [np.asarray(x).astype(np.float32) for x in (q, k, v)]
    print(f"planted errors of assert_close's bf16 tol / 16 at {n} random elements (B={B} H={H} S={S} D={D}, out f32)")
    for model, block, rev in (("ampere", 64, False), ("hopper", 128, False), ("ampere", 64, True), ("hopper", 128, True)):
        std = f"flash:block={block},mma={model}" + (",order=reverse" if rev else "")
        t0 = time.perf_counter()
        out, _ = fa_emul.flash_forward(*f, block=block, mma=model, out_format="float32", seed=seed, reverse=rev)
        t_emu = time.perf_counter() - t0
        clean = int((~np.asarray(o.covers(out, standard=std))).sum())
        lo, hi = (np.asarray(x).astype(np.float64) for x in o.finite_range(standard=std))
        idx = g.choice(out.size, size=n, replace=False)
        sign = g.choice([-1.0, 1.0], size=n)
        away = np.where(out.ravel()[idx] >= 0.5 * (lo.ravel()[idx] + hi.ravel()[idx]), 1.0, -1.0)
        res = []
        for sg in (sign, away):
            bad = out.copy().ravel()
            bad[idx] = (bad[idx].astype(np.float64) + sg * tol.ravel()[idx] / 16).astype(np.float32)
            cov = np.asarray(o.covers(bad.reshape(out.shape), standard=std)).ravel()
            res.append(float(np.mean(~cov[idx])))
        print(f"  {std:<40} kernel's own output: {clean} outside; flagged: {res[0]:.3f} (random sign), "
              f"{res[1]:.3f} (away from the range's centre)  [emulation {t_emu:.1f} s]")


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--block", type=int, default=64)
    ap.add_argument("--quick", action="store_true", help="smaller problems (a smoke run)")
    a = ap.parse_args()
    if a.quick:
        speed(1, 2, 512, 128, a.seed, a.block)
        tightness(1, 2, 256, 128, a.seed)
        planted(1, 2, 256, 128, a.seed, n=1000)
    else:
        speed(1, 8, 2048, 128, a.seed, a.block)
        tightness(1, 4, 1024, 128, a.seed)
        planted(1, 4, 1024, 128, a.seed)


if __name__ == "__main__":
    main()
