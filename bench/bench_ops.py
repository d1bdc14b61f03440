"""bench_ops.py: attention's check against torch's CPU scaled_dot_product_attention (time ratio, one run) and the tightness table per standard (issue 31 items 5 and 6)."""
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


def tightness(B, H, S, D, seed):
    g = np.random.default_rng(seed)
    q, k, v = bf16(g, (B, H, S, D)), bf16(g, (B, H, S, D)), bf16(g, (B, H, S, D))
    r = er.scaled_dot_product_attention(q, k, v)
    o = r["out"]
    ref = np.asarray(o.rounded).astype(np.float64)
    tol = 1e-5 + 1.6e-2 * np.abs(ref)
    # one output ulp at each element (bf16: 2^-7 of the binade)
    ulp = np.ldexp(1.0, np.frexp(np.maximum(np.abs(ref), 2.0**-126))[1] - 8)
    print(f"tightness: attention B={B} H={H} S={S} D={D} bf16, out bf16, default ulps")
    print(f"  {'standard':<18} {'median range (ulps)':>20} {'median range / assert_close tol':>32}")
    for std in ("flash:block=64", "flash:block=128", "flash", "any_order", "normal"):
        lo, hi = (np.asarray(x).astype(np.float64) for x in o.finite_range(standard=std))
        w = hi - lo
        print(f"  {std:<18} {np.median(w / ulp):>20.2f} {np.median(w / tol):>32.3f}")


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--block", type=int, default=64)
    ap.add_argument("--quick", action="store_true", help="smaller problems (a smoke run)")
    a = ap.parse_args()
    if a.quick:
        speed(1, 2, 512, 128, a.seed, a.block)
        tightness(1, 2, 256, 128, a.seed)
    else:
        speed(1, 8, 2048, 128, a.seed, a.block)
        tightness(1, 4, 1024, 128, a.seed)


if __name__ == "__main__":
    main()
