"""test_attention_backward.py: attention.backward (dq, dk, dv): the rounded reference against an independent one, a numpy FlashAttention-2 backward loop and torch's CPU autograd covered, every planted bug caught."""
import os
import sys
from decimal import Decimal, getcontext

import numpy as np
import pytest

ml_dtypes = pytest.importorskip("ml_dtypes")
import exactref as er  # noqa: E402

sys.path.insert(0, os.path.dirname(__file__))
import fa_emul  # noqa: E402

SEED = int(os.environ.get("EXACTREF_SEED", "31"))
print(f"test_attention_backward: seed {SEED} (EXACTREF_SEED)")

LOG2E = np.log2(np.e)


def rng(k=0):
    return np.random.default_rng(SEED * 1000 + 500 + k)


def npdt(name):
    return np.dtype(getattr(ml_dtypes, name, name))


def inputs(g, shape_q, shape_kv, dtype="bfloat16"):
    dt = npdt(dtype)
    q = g.standard_normal(shape_q).astype(np.float32).astype(dt)
    k = g.standard_normal(shape_kv).astype(np.float32).astype(dt)
    v = g.standard_normal(shape_kv).astype(np.float32).astype(dt)
    do = g.standard_normal(shape_q[:-1] + shape_kv[-1:]).astype(np.float32).astype(dt)
    return q, k, v, do


def f32(x):
    return np.asarray(x).astype(np.float32)


def outside(result, output, standard, **kw):
    return int((~np.asarray(result.covers(output, standard=standard, **kw))).sum())


# ---- the reference, against Python's decimal (exp at 60 digits) ----

def decimal_backward(q, k, v, do, scale, causal):
    getcontext().prec = 60
    q, k, v, do = (np.asarray(x, np.float64) for x in (q, k, v, do))
    B, H, Sq, D = q.shape
    Hk, Sk, Dv = k.shape[1], k.shape[2], v.shape[3]
    G = H // Hk
    dq = np.zeros(q.shape, dtype=object)
    dk = np.full(k.shape, Decimal(0), dtype=object)
    dv = np.full(v.shape, Decimal(0), dtype=object)
    sc = Decimal(float(scale))
    for b in range(B):
        for h in range(H):
            hk = h // G
            for i in range(Sq):
                keys = [j for j in range(Sk) if not causal or j <= i]
                s = [sc * sum(Decimal(float(q[b, h, i, x])) * Decimal(float(k[b, hk, j, x])) for x in range(D))
                     for j in keys]
                m = max(s)
                w = [(x - m).exp() for x in s]
                den = sum(w)
                P = [x / den for x in w]
                dP = [sum(Decimal(float(do[b, h, i, c])) * Decimal(float(v[b, hk, j, c])) for c in range(Dv))
                      for j in keys]
                Dd = sum(p * d for p, d in zip(P, dP))
                dS = [p * (d - Dd) for p, d in zip(P, dP)]
                for x in range(D):
                    dq[b, h, i, x] = sc * sum(ds * Decimal(float(k[b, hk, j, x])) for ds, j in zip(dS, keys))
                for ds, p, j in zip(dS, P, keys):
                    for x in range(D):
                        dk[b, hk, j, x] += sc * ds * Decimal(float(q[b, h, i, x]))
                    for c in range(Dv):
                        dv[b, hk, j, c] += p * Decimal(float(do[b, h, i, c]))
    return dq, dk, dv


def dec_round(x, dtype):
    return np.vectorize(float)(x).astype(np.float64).astype(npdt(dtype))


@pytest.mark.parametrize("dtype", ["bfloat16", "float16", "float32"])
@pytest.mark.parametrize("causal", [False, True])
def test_rounded_against_decimal(dtype, causal):
    g = rng(1)
    q, k, v, do = inputs(g, (1, 4, 7, 5), (1, 2, 9, 5), dtype=dtype) if not causal else \
        inputs(g, (1, 4, 9, 5), (1, 2, 9, 5), dtype=dtype)
    r = er.scaled_dot_product_attention(q, k, v, is_causal=causal, enable_gqa=True).backward(do)
    want = decimal_backward(q, k, v, do, 1 / np.sqrt(5), causal)
    for name, w in zip(("dq", "dk", "dv"), want):
        got = np.asarray(r[name].rounded)
        assert got.dtype == npdt(dtype)
        ref = dec_round(w, dtype)
        bad = np.asarray(got).view(np.uint8) != np.asarray(ref).view(np.uint8)
        assert not bad.any(), f"{name}: {int(bad.sum())} elements differ from the decimal reference"
        ex = r[name].exact
        lo, hi = np.asarray(ex.lo), np.asarray(ex.hi)
        wf = np.vectorize(float)(w)
        assert np.all(lo <= wf) and np.all(wf <= hi)


def test_cancellation_decided_at_high_precision():
    # value rows equal but for a few ulps and a gradient whose dot products cancel: binary64 cannot decide
    # most roundings, so the reference raises the precision; still the decimal answer, bit for bit
    g = rng(9)
    S, D = 8, 4
    q = g.standard_normal((1, 1, S, D)).astype(np.float32)
    k = g.standard_normal((1, 1, S, D)).astype(np.float32)
    v = np.ones((1, 1, S, D), np.float32)
    v[..., 0] = (1 + g.integers(0, 4, S) * 2.0**-23).astype(np.float32)
    do = np.zeros((1, 1, S, D), np.float32)
    do[..., 0], do[..., 1] = 1, -1
    r = er.op("attention.backward", q, k, v, do)
    want = decimal_backward(q, k, v, do, 1 / np.sqrt(D), False)
    narrow = 0
    for name, w in zip(("dq", "dk", "dv"), want):
        ref = dec_round(w, "float32")
        assert np.array_equal(f32(r[name].rounded).view(np.uint32), ref.view(np.uint32)), name
        if name == "dq":  # binary64 leaves these about 2^-24 wide; the high-precision path about 2^-52
            ex = r[name].exact
            narrow += int(((ex.hi - ex.lo) <= np.abs(ex.lo) * 2.0**-50).sum())
    assert narrow > 0  # some enclosures came from the high-precision path


def test_exact_zeros_and_refusals():
    g = rng(2)
    q, k, v, do = inputs(g, (1, 1, 6, 4), (1, 1, 6, 4))
    r = er.scaled_dot_product_attention(q, k, v, is_causal=True).backward(do)
    # causal row 0 attends to key 0 only: P = 1, dS = 0, so dq[0] is exactly 0
    assert np.all(f32(r["dq"].rounded)[0, 0, 0] == 0)
    assert np.all(r["dq"].exact.lo[0, 0, 0] == 0) and np.all(r["dq"].exact.hi[0, 0, 0] == 0)
    # a zero gradient: every gradient is exactly 0
    z = er.scaled_dot_product_attention(q, k, v).backward(np.zeros_like(do))
    for name in ("dq", "dk", "dv"):
        assert not f32(z[name].rounded).any()
    with pytest.raises(ValueError, match="grad_out's shape"):
        er.op("attention.backward", q, k, v, None, do[:, :, :3])
    with pytest.raises(Exception, match="descale"):
        er.op("attention.backward", q, k, v, None, do, q_descale=0.5)
    mask = np.zeros((6, 6), np.float32)
    mask[2] = -np.inf
    e = er.op("attention.backward", q, k, v, mask, do)  # row 2 has no key: dq 0 there (test_attention_empty_rows.py)
    assert not f32(e["dq"].rounded)[0, 0, 2].any()
    assert r["dq"].op == "attention.backward"
    assert list(r["dq"].boundaries)[:4] == ["scores", "p", "dp", "delta"]


ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_mask_three_dims_and_f32_gradients():
    # a float mask: a key masked out everywhere has dk = dv = 0 exactly; 3-D inputs; dtype f32 (the stored O's too)
    g = rng(10)
    q, k, v, do = inputs(g, (2, 16, 8), (2, 16, 8))
    m = np.zeros((16, 16), np.float32)
    m[:, 3] = -np.inf
    m[:, 5] = 0.25
    r = er.scaled_dot_product_attention(q, k, v, attn_mask=m, dtype="float32").backward(do)
    assert np.asarray(r["dq"].rounded).dtype == np.float32 and r["dk"].shape == (2, 16, 8)
    assert not f32(r["dk"].rounded)[:, 3].any() and not f32(r["dv"].rounded)[:, 3].any()
    assert f32(r["dk"].rounded)[:, 5].any()
    # the mask shifts key 5's scores: without it the gradients differ (a kernel that drops the mask is caught)
    r0 = er.scaled_dot_product_attention(q, k, v, dtype="float32").backward(do)
    assert outside(r["dq"], r0["dq"].rounded, "flash") > 0


def test_four_inputs_and_the_command(tmp_path):
    import subprocess
    g = rng(3)
    q, k, v, do = inputs(g, (1, 2, 16, 8), (1, 2, 16, 8), dtype="float16")
    r = er.op("attention.backward", q, k, v, do)  # no mask: grad_out is the fourth input
    r2 = er.scaled_dot_product_attention(q, k, v).backward(do)
    for name in ("dq", "dk", "dv"):
        assert np.array_equal(f32(r[name].rounded), f32(r2[name].rounded))
    exe = os.environ.get("EXACTREF_CLI") or os.path.join(ROOT, "build", "exactref")
    if not os.access(exe, os.X_OK):
        pytest.skip("the exactref command is not built (%s)" % exe)
    for n, x in (("q", q), ("k", k), ("v", v), ("do", do)):
        np.save(tmp_path / f"{n}.npy", np.asarray(x))
    good = np.asarray(r["dk"].rounded)
    bad = good.copy()
    bad[0, 1, 3, 2] = -bad[0, 1, 3, 2] - np.float16(0.5)
    np.save(tmp_path / "dk.npy", good)
    np.save(tmp_path / "bad.npy", bad)
    base = [exe, "check", "--op", "attention.backward"] + sum(
        (["--input", str(tmp_path / f"{n}.npy")] for n in ("q", "k", "v", "do")), []) + ["--output-name", "dk"]
    ok = subprocess.run(base + ["--output", str(tmp_path / "dk.npy"), "--standard", "flash"], capture_output=True,
                        text=True, cwd=tmp_path, timeout=120)
    assert ok.returncode == 0, ok.stdout + ok.stderr
    no = subprocess.run(base + ["--output", str(tmp_path / "bad.npy")], capture_output=True, text=True, cwd=tmp_path,
                        timeout=120)
    assert no.returncode == 1 and "outside" in no.stdout, no.stdout + no.stderr


# ---- a numpy FlashAttention-2 backward loop: covered under its standard, every bug caught ----

BUGS = ("d_no_rescale", "ds_no_p", "dq_scale_twice", "causal_off_by_one", "dv_wrong_axis", "gqa_no_sum")


def flash_backward(q, k, v, do, out, lse, *, block_k=64, block_q=64, is_causal=False, p_format="bfloat16",
                   exp_ulps=2.0, seed=0, bugs=()):
    """FlashAttention-2's backward on float32 arrays holding the inputs' values, O (out: as stored, rounded to
    the output format) and lse (float32) as the forward stored them.  D = rowsum(dO O); per key block (the
    outer loop) and query block: S = Q K^T (float32), P = exp2(S scale log2e - lse log2e) within exp_ulps,
    dV += round(P)^T dO, dP = dO V^T, dS = P (dP - D), dK += round(dS)^T Q, and dQ's partial round(dS) K added
    to dQ in a random order of the key blocks (atomics); dQ and dK times scale at the end; a GQA group's
    heads summed into its key head's dK and dV."""
    bugs = set(bugs)
    r = np.random.default_rng(seed)
    q, k, v, do, out = (np.asarray(x, np.float32) for x in (q, k, v, do, out))
    B, H, Sq, D = q.shape
    Hk, Sk, Dv = k.shape[1], k.shape[2], v.shape[3]
    G = H // Hk
    sc = np.float32(1.0 / np.sqrt(D))
    sc2 = np.float32(sc * np.float32(LOG2E))
    dq = np.zeros(q.shape, np.float32)
    dk = np.zeros(k.shape, np.float32)
    dv = np.zeros(v.shape, np.float32)
    pf = (lambda x: x) if p_format is None else (lambda x: fa_emul.to_fmt(x, p_format))
    for b in range(B):
        for h in range(H):
            hk = h // G
            Q, K, V, dO, O = q[b, h], k[b, hk], v[b, hk], do[b, h], out[b, h]
            L2 = (lse[b, h] * np.float32(LOG2E)).astype(np.float32)
            if "d_no_rescale" in bugs:
                # D from P not divided by the row sum (exp(S - max), the forward's rescaling forgotten)
                Sf = (Q @ K.T).astype(np.float32) * sc
                if is_causal:
                    Sf = np.where(np.arange(Sk)[None, :] <= np.arange(Sq)[:, None], Sf, -np.inf)
                Pu = np.exp((Sf - Sf.max(axis=1, keepdims=True)).astype(np.float64)).astype(np.float32)
                Dd = (Pu * (dO @ V.T)).sum(axis=1, dtype=np.float32)
            else:
                Dd = (dO * O).sum(axis=1, dtype=np.float32)
            parts = []
            dkh = np.zeros((Sk, D), np.float32)
            dvh = np.zeros((Sk, Dv), np.float32)
            for j0 in range(0, Sk, block_k):
                j1 = min(j0 + block_k, Sk)
                dqp = np.zeros((Sq, D), np.float32)
                for i0 in range(0, Sq, block_q):
                    i1 = min(i0 + block_q, Sq)
                    S = (Q[i0:i1] @ K[j0:j1].T).astype(np.float32)
                    keep = np.ones(S.shape, bool)
                    if is_causal:
                        off = 1 if "causal_off_by_one" in bugs else 0
                        keep = np.arange(j0, j1)[None, :] <= np.arange(i0, i1)[:, None] + off
                    arg = (S * sc2 - L2[i0:i1, None]).astype(np.float32)
                    P = np.where(keep, fa_emul.exp2_f32(np.where(keep, arg, np.float32(0)), exp_ulps, r), np.float32(0))
                    if "dv_wrong_axis" in bugs:
                        dvh[j0:j1] += (pf(P) @ dO[i0:i1]).astype(np.float32)
                    else:
                        dvh[j0:j1] += (pf(P).T @ dO[i0:i1]).astype(np.float32)
                    dP = (dO[i0:i1] @ V[j0:j1].T).astype(np.float32)
                    dS = (dP - Dd[i0:i1, None]).astype(np.float32)
                    if "ds_no_p" not in bugs:
                        dS = (P * dS).astype(np.float32)
                    dS = pf(dS)
                    dkh[j0:j1] += (dS.T @ Q[i0:i1]).astype(np.float32)
                    dqp[i0:i1] = (dS @ K[j0:j1]).astype(np.float32)
                parts.append(dqp)
            acc = np.zeros((Sq, D), np.float32)
            for x in r.permutation(len(parts)):
                acc = (acc + parts[x]).astype(np.float32)
            dq[b, h] = (acc * sc).astype(np.float32)
            if "dq_scale_twice" in bugs:
                dq[b, h] = (dq[b, h] * sc).astype(np.float32)
            dkh = (dkh * sc).astype(np.float32)
            if "gqa_no_sum" in bugs:
                dk[b, hk], dv[b, hk] = dkh, dvh
            else:
                dk[b, hk] = (dk[b, hk] + dkh).astype(np.float32)
                dv[b, hk] = (dv[b, hk] + dvh).astype(np.float32)
    return dq, dk, dv


def _fa_case(g, dtype="bfloat16", causal=False, block=64, Sq=128, Sk=128, H=4, Hk=2, D=32):
    q, k, v, do = inputs(g, (1, H, Sq, D), (1, Hk, Sk, D), dtype=dtype)
    out, lse = fa_emul.flash_forward(f32(q), f32(k), f32(v), block=block, is_causal=causal, enable_gqa=True,
                                     p_format=dtype, out_format=dtype, exp_ulps=2.0, seed=SEED + block)
    out = fa_emul.to_fmt(out, dtype)
    fwd = er.scaled_dot_product_attention(q, k, v, is_causal=causal, enable_gqa=True)
    assert outside(fwd["out"], out.astype(npdt(dtype)), f"flash:block={block}") == 0
    return q, k, v, do, out, lse, fwd.backward(do)


@pytest.mark.parametrize("block_k,block_q", [(16, 32), (64, 64), (128, 16)])
@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
@pytest.mark.parametrize("causal", [False, True])
def test_flash_backward_loop_covered(block_k, block_q, dtype, causal):
    g = rng(4)
    q, k, v, do, out, lse, r = _fa_case(g, dtype, causal, block_k)
    grads = flash_backward(f32(q), f32(k), f32(v), f32(do), out, lse, block_k=block_k, block_q=block_q,
                           is_causal=causal, p_format=dtype, seed=SEED + block_q)
    for name, x in zip(("dq", "dk", "dv"), grads):
        got = x.astype(npdt(dtype))
        assert outside(r[name], got, f"flash:block={block_k}") == 0, name
        # the declared block only narrows the forward's stored values: any partition covers the loop too
        assert outside(r[name], got, "flash") == 0, name


@pytest.mark.parametrize("bug", BUGS)
def test_flash_backward_bugs_caught(bug):
    g = rng(5)
    causal = bug == "causal_off_by_one"
    q, k, v, do, out, lse, r = _fa_case(g, "bfloat16", causal, 64, Sq=128, Sk=128)
    grads = flash_backward(f32(q), f32(k), f32(v), f32(do), out, lse, block_k=64, block_q=64, is_causal=causal,
                           seed=SEED, bugs=(bug,))
    bad = sum(outside(r[n], x.astype(ml_dtypes.bfloat16), "flash:block=64") for n, x in zip(("dq", "dk", "dv"), grads))
    print(f"{bug}: {bad} elements outside")
    assert bad > 0, bug


def test_flash_backward_p_format_matters():
    # P and dS rounded to e4m3 where the standard says bf16: caught
    g = rng(6)
    q, k, v, do, out, lse, r = _fa_case(g, "bfloat16", False, 64)
    grads = flash_backward(f32(q), f32(k), f32(v), f32(do), out, lse, block_k=64, block_q=64,
                           p_format="float8_e4m3fn", seed=SEED)
    assert sum(outside(r[n], x.astype(ml_dtypes.bfloat16), "flash:block=64") for n, x in zip(("dq", "dk", "dv"), grads)) > 0


def test_standards_order_and_ulps():
    g = rng(7)
    q, k, v, do = inputs(g, (1, 2, 64, 32), (1, 2, 64, 32))
    r = er.scaled_dot_product_attention(q, k, v).backward(do)
    for n in ("dq", "dk", "dv"):
        tn = np.asarray(r[n].tolerance(standard="normal")).astype(np.float64)
        ta = np.asarray(r[n].tolerance(standard="any_order")).astype(np.float64)
        tf = np.asarray(r[n].tolerance(standard="flash")).astype(np.float64)
        tb = np.asarray(r[n].tolerance(standard="flash:block=16")).astype(np.float64)
        assert np.all(tn <= ta) and np.all(tb <= tf)
        # more ulps for the library functions: never narrower, and wider somewhere
        tw = np.asarray(r[n].tolerance(standard="flash:block=16", ulps=4096)).astype(np.float64)
        assert np.all(tw >= tb) and np.any(tw > tb)
        # the rounded answer is covered by every standard
        for s in ("normal", "any_order", "flash", "flash:block=16"):
            assert outside(r[n], r[n].rounded, s) == 0
    # one gradient element moved by 1/4 of its median normal tolerance off the rounded answer past the bound
    x = f32(r["dq"].rounded).copy()
    lo, hi = (np.asarray(a).astype(np.float64) for a in r["dq"].finite_range(standard="normal"))
    x[0, 0, 0, 0] = hi[0, 0, 0, 0] + abs(hi[0, 0, 0, 0]) * 0.01 + 1e-3
    assert outside(r["dq"], x.astype(ml_dtypes.bfloat16), "normal") >= 1


# ---- torch's CPU autograd as a client ----

torch = None
try:
    import torch  # noqa: F811
except ImportError:  # pragma: no cover
    pass


@pytest.mark.skipif(torch is None, reason="torch is not installed")
@pytest.mark.parametrize("dtype", ["float32", "bfloat16", "float16"])
@pytest.mark.parametrize("backend", ["math", "flash"])
@pytest.mark.parametrize("causal,gqa", [(False, False), (True, False), (False, True)])
def test_torch_cpu_autograd_covered(dtype, backend, causal, gqa):
    from torch.nn.attention import SDPBackend, sdpa_kernel
    g = rng(8)
    Hk = 1 if gqa else 2
    q, k, v, do = inputs(g, (1, 2, 96, 32), (1, Hk, 96, 32), dtype=dtype)
    tdt = getattr(torch, dtype)
    tq, tk, tv = (torch.from_numpy(f32(x)).to(tdt).requires_grad_() for x in (q, k, v))
    be = SDPBackend.MATH if backend == "math" else SDPBackend.FLASH_ATTENTION
    kw = {"enable_gqa": True} if gqa else {}
    try:
        with sdpa_kernel(be):
            out = torch.nn.functional.scaled_dot_product_attention(tq, tk, tv, is_causal=causal, **kw)
            out.backward(torch.from_numpy(f32(do)).to(tdt))
    except RuntimeError as e:  # an older torch whose CPU flash kernel takes no enable_gqa
        pytest.skip(f"torch's {backend} kernel refused: {e}")
    r = er.scaled_dot_product_attention(q, k, v, is_causal=causal, enable_gqa=gqa).backward(do)
    for name, t in (("dq", tq), ("dk", tk), ("dv", tv)):
        got = t.grad.float().numpy().astype(npdt(dtype))
        # torch's CPU flash kernel: exp within ~1000 ulps (fexp_u20), P and dS in the input's format; the
        # math kernel: autograd of the textbook formula, computed in float32 (bf16/f16 inputs upcast), so
        # `normal` with its defaults covers it
        if backend == "flash":
            assert outside(r[name], got, "flash", ulps=1024) == 0, name
            assert outside(r[name], got, "normal", compute=dtype, ulps=20) == 0, name
        else:
            assert outside(r[name], got, "normal") == 0, name
