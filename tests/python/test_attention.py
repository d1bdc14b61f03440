"""test_attention.py: er.scaled_dot_product_attention: the rounded reference against an independent one, the numpy FlashAttention-2 loop and torch's CPU kernels covered, every planted bug caught."""
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
print(f"test_attention: seed {SEED} (EXACTREF_SEED)")


def rng(k=0):
    return np.random.default_rng(SEED * 1000 + k)


def inputs(g, shape_q, shape_kv, dtype="bfloat16", scale=1.0):
    dt = np.dtype(getattr(ml_dtypes, dtype, dtype))
    q = (g.standard_normal(shape_q) * scale).astype(np.float32).astype(dt)
    k = (g.standard_normal(shape_kv) * scale).astype(np.float32).astype(dt)
    v = g.standard_normal(shape_kv).astype(np.float32).astype(dt)
    return q, k, v


def f32(x):
    return np.asarray(x).astype(np.float32)


def outside(result, output, standard, **kw):
    return int((~np.asarray(result.covers(output, standard=standard, **kw))).sum())


# ---- the reference, against Python's decimal (exp correctly rounded at 60 digits) ----

def decimal_reference(q, k, v, scale, causal, mask=None):
    getcontext().prec = 60
    q, k, v = (np.asarray(x, np.float64) for x in (q, k, v))
    B, H, Sq, D = q.shape
    Hk, Sk, Dv = k.shape[1], k.shape[2], v.shape[3]
    out = np.zeros((B, H, Sq, Dv), dtype=object)
    lse = np.zeros((B, H, Sq), dtype=object)
    sc = Decimal(float(scale))
    for b in range(B):
        for h in range(H):
            hk = h // (H // Hk)
            for i in range(Sq):
                keys = [j for j in range(Sk) if (not causal or j <= i) and (mask is None or mask[i, j])]
                s = [sc * sum(Decimal(float(q[b, h, i, x])) * Decimal(float(k[b, hk, j, x])) for x in range(D))
                     for j in keys]
                m = max(s)
                w = [(x - m).exp() for x in s]
                den = sum(w)
                for c in range(Dv):
                    out[b, h, i, c] = sum(wj * Decimal(float(v[b, hk, j, c])) for wj, j in zip(w, keys)) / den
                lse[b, h, i] = m + den.ln()
    return out, lse


def round_decimal(x, dtype):
    """x (Decimal) rounded to nearest even into dtype, with the distance to the nearest tie: the
    binary64 neighbours of x bracket it; both round alike unless a tie lies between them."""
    dt = np.dtype(getattr(ml_dtypes, dtype, dtype))
    f = float(x)  # correctly rounded
    lo, hi = (np.nextafter(f, -np.inf), np.nextafter(f, np.inf))
    a, b = np.float64(lo).astype(dt), np.float64(hi).astype(dt) if dt != np.float32 else np.float32(hi)
    if dt == np.float32:
        a = np.float32(lo)
    return a if a == b else None


@pytest.mark.parametrize("out_dtype", ["bfloat16", "float32", "float16"])
@pytest.mark.parametrize("causal", [False, True])
def test_rounded_is_the_exact_value_rounded_once(out_dtype, causal):
    g = rng(1)
    q, k, v = inputs(g, (1, 2, 6, 8), (1, 1, 7, 8), scale=2.0)
    mask = g.random((6, 7)) > 0.2
    mask[:, 0] = True
    r = er.scaled_dot_product_attention(q, k, v, attn_mask=mask.astype(np.uint8), is_causal=causal, enable_gqa=True,
                                        dtype=out_dtype)
    ref_out, ref_lse = decimal_reference(q, k, v, 1 / np.sqrt(8.0), causal, mask)
    got = np.asarray(r["out"].rounded)
    checked = 0
    for e in np.ndindex(ref_out.shape):
        want = round_decimal(ref_out[e], out_dtype)
        if want is None:
            continue
        assert np.asarray(want).view(np.uint16 if out_dtype != "float32" else np.uint32) == \
            got[e].view(np.uint16 if out_dtype != "float32" else np.uint32), (e, got[e], ref_out[e])
        checked += 1
    assert checked >= ref_out.size - 2
    lse = np.asarray(r["lse"].rounded)
    for e in np.ndindex(ref_lse.shape):
        want = round_decimal(ref_lse[e], "float32")
        if want is not None:
            assert np.float32(want).view(np.uint32) == lse[e].view(np.uint32), (e, lse[e], ref_lse[e])
    # the exact enclosures hold the decimal value
    ex = r["out"].exact
    lo, hi = np.asarray(ex.lo), np.asarray(ex.hi)
    for e in np.ndindex(ref_out.shape):
        assert Decimal(float(lo[e])) <= ref_out[e] <= Decimal(float(hi[e]))


def test_exact_ties_are_rounded_to_even():
    # every score equal (a zero query): the output is the values' mean, exactly; [1, 1 + 2^-7] in bf16
    # has mean 1 + 2^-8, a tie between 1 and 1 + 2^-7: ties to even gives 1.  One key: lse = its score.
    q = np.zeros((1, 1, 2, 4), np.float32)
    k = np.ones((1, 1, 2, 4), np.float32)
    v = np.zeros((1, 1, 2, 1), np.float32)
    v[0, 0, :, 0] = [1.0, 1.0 + 2.0**-7]
    r = er.scaled_dot_product_attention(q.astype(ml_dtypes.bfloat16), k.astype(ml_dtypes.bfloat16),
                                        v.astype(ml_dtypes.bfloat16), is_causal=True)
    out = np.asarray(r["out"].rounded).astype(np.float64)
    assert out[0, 0, 0, 0] == 1.0            # one key: v_0
    assert out[0, 0, 1, 0] == 1.0            # the tie 1 + 2^-8 rounds to even
    lse = np.asarray(r["lse"].rounded)
    assert lse[0, 0, 0] == 0.0
    assert lse[0, 0, 1] == np.float32(np.log(2.0))


# ---- the FlashAttention-2 loop: covered under its standard, every bug caught ----

@pytest.mark.parametrize("block", [16, 64, 256])
@pytest.mark.parametrize("p_format,p_name", [("bfloat16", "value"), ("float16", "f16"),
                                             ("float8_e4m3fn", "f8E4M3FN")])
@pytest.mark.parametrize("causal", [False, True])
def test_flash_loop_covered(block, p_format, p_name, causal):
    g = rng(2)
    q, k, v = inputs(g, (1, 4, 256, 64), (1, 2, 256, 64))
    r = er.scaled_dot_product_attention(q, k, v, is_causal=causal, enable_gqa=True)
    out, lse = fa_emul.flash_forward(f32(q), f32(k), f32(v), block=block, is_causal=causal, enable_gqa=True,
                                     p_format=p_format, exp_ulps=2.0, seed=SEED + block)
    std = f"flash:block={block},p={p_name}"
    assert outside(r["out"], out.astype(ml_dtypes.bfloat16), std) == 0
    assert outside(r["lse"], lse, std) == 0
    # the declared block is the loop's: any partition covers it too
    assert outside(r["out"], out.astype(ml_dtypes.bfloat16), f"flash:p={p_name}") == 0


def test_flash_loop_f32_output_and_float_mask():
    g = rng(3)
    q, k, v = inputs(g, (2, 2, 96, 32), (2, 2, 80, 32))
    mask = np.where(g.random((96, 80)) > 0.3, g.standard_normal((96, 80)), -np.inf).astype(np.float32)
    mask[:, 0] = 0.5
    r = er.scaled_dot_product_attention(q, k, v, attn_mask=mask, dtype="float32")
    out, lse = fa_emul.flash_forward(f32(q), f32(k), f32(v), block=32, attn_mask=mask, out_format="float32",
                                     seed=SEED)
    assert outside(r["out"], out, "flash:block=32") == 0
    assert outside(r["lse"], lse, "flash:block=32") == 0


def test_flash_loop_fp8_inputs_with_descales():
    g = rng(4)
    qd, kd, vd = 0.5, 0.25, 2.0
    q, k, v = inputs(g, (1, 2, 128, 64), (1, 2, 128, 64), dtype="float8_e4m3fn", scale=2.0)
    r = er.scaled_dot_product_attention(q, k, v, q_descale=qd, k_descale=kd, v_descale=vd)
    assert np.asarray(r["out"].rounded).dtype == np.dtype(ml_dtypes.bfloat16)
    out, lse = fa_emul.flash_forward(f32(q), f32(k), f32(v), block=64, p_format="float8_e4m3fn",
                                     q_descale=qd, k_descale=kd, v_descale=vd, seed=SEED)
    assert outside(r["out"], out.astype(ml_dtypes.bfloat16), "flash:block=64") == 0
    assert outside(r["lse"], lse, "flash:block=64") == 0
    # without the descales the loop is another computation: caught
    out2, _ = fa_emul.flash_forward(f32(q), f32(k), f32(v), block=64, p_format="float8_e4m3fn", seed=SEED)
    assert outside(r["out"], out2.astype(ml_dtypes.bfloat16), "flash:block=64") > 0


# ---- tensor-core models (flash's mma=): the loop's matrix products through the model itself ----

def franges(res, std):
    return [np.asarray(x).astype(np.float64) for x in res.finite_range(standard=std)]


@pytest.mark.parametrize("model", ["hopper", "ampere"])
@pytest.mark.parametrize("block", [64, 128])
@pytest.mark.parametrize("causal", [False, True])
def test_flash_loop_tensor_core_models_covered(model, block, causal):
    # S = Q K^T and O = RN(O alpha) + P V by the model's bit-accurate arithmetic (fa_emul.mma_model):
    # covered under flash:block=N,mma=<model>, and under the model over any partition
    g = rng(10)
    q, k, v = inputs(g, (1, 2, 192, 64), (1, 2, 192, 64))
    r = er.scaled_dot_product_attention(q, k, v, is_causal=causal, dtype="float32")
    out, lse = fa_emul.flash_forward(f32(q), f32(k), f32(v), block=block, is_causal=causal, mma=model,
                                     out_format="float32", seed=SEED + block)
    std = f"flash:block={block},mma={model}"
    assert outside(r["out"], out, std) == 0
    assert outside(r["lse"], lse, std) == 0
    assert outside(r["out"], out, f"flash:mma={model}") == 0
    # the model's bound is narrower than any_order's at the median element
    lo, hi = franges(r["out"], std)
    lo2, hi2 = franges(r["out"], f"flash:block={block}")
    assert np.median(hi - lo) < 0.8 * np.median(hi2 - lo2)


@pytest.mark.parametrize("model", [None, "hopper", "ampere"])
@pytest.mark.parametrize("causal", [False, True])
def test_flash_loop_reverse_block_order(model, causal):
    # FlashAttention-2 and -3 visit a row's key blocks from the last: covered under order=reverse, and
    # outside the index-order standard (the running maxima, the rescalings and P's units differ)
    g = rng(14)
    q, k, v = inputs(g, (1, 2, 160, 64), (1, 2, 160, 64))
    r = er.scaled_dot_product_attention(q, k, v, is_causal=causal, dtype="float32")
    out, lse = fa_emul.flash_forward(f32(q), f32(k), f32(v), block=32, is_causal=causal, mma=model,
                                     out_format="float32", seed=SEED, reverse=True)
    m = f",mma={model}" if model else ""
    assert outside(r["out"], out, f"flash:block=32{m},order=reverse") == 0
    assert outside(r["lse"], lse, f"flash:block=32{m},order=reverse") == 0
    assert outside(r["out"], out, f"flash:block=32{m}") > 0
    out2, _ = fa_emul.flash_forward(f32(q), f32(k), f32(v), block=32, is_causal=causal, mma=model,
                                    out_format="float32", seed=SEED)
    assert outside(r["out"], out2, f"flash:block=32{m},order=index") == 0


def test_flash_loop_fp8_tensor_core_model():
    # FlashAttention-3's fp8 path: e4m3 Q, K, V and P through Hopper's fp8 wgmma (13 fraction bits kept,
    # an e8m13 accumulator): covered under mma=hopper-fp8, and NOT under any_order's f32 radius
    g = rng(11)
    qd, kd, vd = 0.5, 0.25, 2.0
    q, k, v = inputs(g, (1, 2, 128, 64), (1, 2, 128, 64), dtype="float8_e4m3fn", scale=2.0)
    r = er.scaled_dot_product_attention(q, k, v, q_descale=qd, k_descale=kd, v_descale=vd)
    out, lse = fa_emul.flash_forward(f32(q), f32(k), f32(v), block=64, p_format="float8_e4m3fn", q_descale=qd,
                                     k_descale=kd, v_descale=vd, mma="hopper-fp8", in_format="float8_e4m3fn",
                                     seed=SEED)
    got = out.astype(ml_dtypes.bfloat16)
    assert outside(r["out"], got, "flash:block=64,mma=hopper-fp8") == 0
    assert outside(r["lse"], lse, "flash:block=64,mma=hopper-fp8") == 0
    assert outside(r["out"], got, "flash:mma=hopper-fp8") == 0
    assert outside(r["out"], got, "flash:block=64") > 0


def test_flash_loop_coarser_engine_caught():
    # an engine keeping 13 fraction bits where Hopper's bf16 wgmma keeps 25 is not Hopper: caught
    g = rng(12)
    q, k, v = inputs(g, (1, 2, 128, 64), (1, 2, 128, 64))
    r = er.scaled_dot_product_attention(q, k, v, dtype="float32")
    fa_emul.MODELS["coarse"] = (16, 13, 13)
    try:
        out, _ = fa_emul.flash_forward(f32(q), f32(k), f32(v), block=64, mma="coarse", out_format="float32", seed=SEED)
    finally:
        del fa_emul.MODELS["coarse"]
    assert outside(r["out"], out, "flash:block=64,mma=hopper") > 0


def test_exp_errors_within_explicit_ulps():
    # an exp2 up to 1000 ulps off (as torch's CPU fexp_u20) is admitted by ulps=1024
    g = rng(5)
    q, k, v = inputs(g, (1, 2, 128, 64), (1, 2, 128, 64))
    r = er.scaled_dot_product_attention(q, k, v)
    out, lse = fa_emul.flash_forward(f32(q), f32(k), f32(v), block=64, exp_ulps=1000, seed=SEED)
    w0 = np.median(np.asarray(r["lse"].tolerance(standard="flash:block=64")))
    assert np.median(np.asarray(r["lse"].tolerance(standard="flash:block=64", ulps=1024))) > w0
    assert outside(r["out"], out.astype(ml_dtypes.bfloat16), "flash:block=64", ulps=1024) == 0
    assert outside(r["lse"], lse, "flash:block=64", ulps=1024) == 0


@pytest.mark.parametrize("bug", fa_emul.BUGS)
def test_planted_bug_caught(bug):
    g = rng(6)
    q, k, v = inputs(g, (1, 4, 192, 64), (1, 2, 192, 64))
    r = er.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True)
    out, lse = fa_emul.flash_forward(f32(q), f32(k), f32(v), block=64, is_causal=True, enable_gqa=True,
                                     bugs=[bug], seed=SEED)
    bad = outside(r["out"], out.astype(ml_dtypes.bfloat16), "flash:block=64") + \
        outside(r["lse"], lse, "flash:block=64")
    assert bad > 0, bug
    # the same loop without the bug passes
    out, lse = fa_emul.flash_forward(f32(q), f32(k), f32(v), block=64, is_causal=True, enable_gqa=True, seed=SEED)
    assert outside(r["out"], out.astype(ml_dtypes.bfloat16), "flash:block=64") == 0
    assert outside(r["lse"], lse, "flash:block=64") == 0


def test_tightness_declared_block_within_assert_close():
    # issue 31's floor, on a smaller problem than the bench (bench/bench_ops.py: S = 1024, H = 4)
    g = rng(7)
    q, k, v = inputs(g, (1, 2, 512, 128), (1, 2, 512, 128))
    r = er.scaled_dot_product_attention(q, k, v)
    ref = np.asarray(r["out"].rounded).astype(np.float64)
    lo, hi = (np.asarray(x).astype(np.float64) for x in r["out"].finite_range(standard="flash:block=64"))
    tol = 1e-5 + 1.6e-2 * np.abs(ref)
    assert np.median((hi - lo) / tol) < 1.0
    # the bound without a declared block is much wider: the partition is worth declaring
    lo2, hi2 = (np.asarray(x).astype(np.float64) for x in r["out"].finite_range(standard="flash"))
    assert np.median(hi2 - lo2) > 4 * np.median(hi - lo)
    # an element one step past the range is flagged, and only it
    e = np.unravel_index(np.argsort(((hi - lo) / tol).ravel())[ref.size // 2], ref.shape)
    bad = np.asarray(r["out"].rounded).copy()
    bits = bad.view(np.uint16)
    x = np.asarray(hi[e]).astype(ml_dtypes.bfloat16).reshape(1)
    xb = x.view(np.uint16)[0]
    nxt = xb + 1 if float(x[0]) > 0 else (xb - 1 if float(x[0]) < 0 else 1)  # one bf16 step up
    bits[e] = nxt
    assert float(bad[e]) > hi[e]
    cov = np.asarray(r["out"].covers(bad, standard="flash:block=64"))
    # (rounded itself need not be covered: with the block declared, P's rounding is known, and a
    # kernel's output is that of the rounded P values)
    cov0 = np.asarray(r["out"].covers(r["out"].rounded, standard="flash:block=64"))
    assert not cov[e] and int((cov0 != cov).sum()) == 1


@pytest.mark.parametrize("model,block,rev", [("ampere", 64, False), ("hopper", 128, False), ("ampere", 64, True),
                                             ("hopper", 128, True)])
def test_tol16_error_flagged_under_the_kernels_model(model, block, rev):
    # issue 31's floor with the partition and the tensor-core model of a real kernel declared
    # (FlashAttention-2: mma.sync with f32 accumulation, "ampere"; FlashAttention-3: wgmma, "hopper"; both
    # visit the blocks from the last: order=reverse), out=f32: the median range is below 1/8 of assert_close's bf16 tolerance, so the kernel's output moved
    # by tol/16 away from the range's centre at the median element is flagged, and only there
    g = rng(13)
    q, k, v = inputs(g, (1, 2, 512, 128), (1, 2, 512, 128))
    r = er.scaled_dot_product_attention(q, k, v, dtype="float32")
    std = f"flash:block={block},mma={model}" + (",order=reverse" if rev else "")
    out, _ = fa_emul.flash_forward(f32(q), f32(k), f32(v), block=block, mma=model, out_format="float32", seed=SEED,
                                   reverse=rev)
    assert outside(r["out"], out, std) == 0
    ref = np.asarray(r["out"].rounded).astype(np.float64)
    tol = 1e-5 + 1.6e-2 * np.abs(ref)
    lo, hi = franges(r["out"], std)
    assert np.median((hi - lo) / tol) < 1 / 8
    e = np.unravel_index(np.argsort(((hi - lo) / tol).ravel())[ref.size // 2], ref.shape)
    bad = out.copy()
    away = 1.0 if out[e] >= 0.5 * (lo[e] + hi[e]) else -1.0
    bad[e] = np.float32(float(out[e]) + away * tol[e] / 16)
    cov = np.asarray(r["out"].covers(bad, standard=std))
    assert not cov[e] and int((~cov).sum()) == 1
    # errors of tol/16 of either sign at random elements: most are flagged
    idx = g.choice(out.size, size=400, replace=False)
    bad = out.copy().ravel()
    bad[idx] = (bad[idx] + g.choice([-1.0, 1.0], size=idx.size) * tol.ravel()[idx] / 16).astype(np.float32)
    cov = np.asarray(r["out"].covers(bad.reshape(out.shape), standard=std)).ravel()
    assert np.mean(~cov[idx]) > 0.7


def test_options_refused_with_a_sentence():
    g = rng(8)
    q, k, v = inputs(g, (1, 4, 8, 8), (1, 2, 8, 8))
    with pytest.raises(Exception, match="enable_gqa"):
        er.scaled_dot_product_attention(q, k, v)
    r = er.scaled_dot_product_attention(q, k, v, enable_gqa=True)
    with pytest.raises(Exception, match="flash"):
        r["out"].tolerance(standard="flash:block=0")
    with pytest.raises(Exception, match="mma"):
        r["out"].tolerance(standard="flash:mma=volta-f16")      # an f16 accumulator
    with pytest.raises(Exception, match="mma"):
        r["out"].tolerance(standard="flash:mma=deepgemm-fp8")   # promotion
    with pytest.raises(Exception, match="mma"):
        r["out"].tolerance(standard="flash:mma=tpu")
    with pytest.raises(Exception, match="order"):
        r["out"].tolerance(standard="flash:block=4,order=sideways")
    # a model whose instructions do not take the operands: the sentence names the product and the operand
    with pytest.raises(Exception, match="query"):
        r["out"].tolerance(standard="flash:block=4,mma=hopper-fp8")
    with pytest.raises(Exception, match="P V"):
        r["out"].tolerance(standard="flash:block=4,mma=hopper,p=compute")
    A = er.asarray(np.ones((2, 2), np.float32), "float32")
    with pytest.raises(Exception, match="attention"):
        er.matmul(A, A).tolerance(standard="flash:block=64")


# ---- torch's CPU kernels as clients ----

torch = None
try:
    import torch  # noqa: F811
except ImportError:  # pragma: no cover
    pass


@pytest.mark.skipif(torch is None, reason="torch is not installed")
@pytest.mark.parametrize("dtype", ["float32", "bfloat16", "float16"])
@pytest.mark.parametrize("backend", ["math", "flash"])
@pytest.mark.parametrize("causal", [False, True])
def test_torch_cpu_sdpa_covered(dtype, backend, causal):
    from torch.nn.attention import SDPBackend, sdpa_kernel
    g = rng(9)
    q, k, v = inputs(g, (1, 2, 160, 64), (1, 2, 160, 64), dtype=dtype)
    tq, tk, tv = (torch.from_numpy(np.asarray(x).astype(np.float32)).to(getattr(torch, dtype)) for x in (q, k, v))
    be = SDPBackend.MATH if backend == "math" else SDPBackend.FLASH_ATTENTION
    with sdpa_kernel(be):
        out = torch.nn.functional.scaled_dot_product_attention(tq, tk, tv, is_causal=causal)
    got = out.float().numpy().astype(np.dtype(getattr(ml_dtypes, dtype, dtype)))
    r = er.scaled_dot_product_attention(q, k, v, is_causal=causal)
    # torch's CPU exp: exp_u20 (f32), fexp_u20 in the reduced-precision flash kernel (~985 ulps
    # measured); the math kernel in bf16/f16 rounds the scores and P to the input's format
    if backend == "flash":
        assert outside(r["out"], got, "flash", ulps=1024) == 0
    elif dtype == "float32":
        assert outside(r["out"], got, "any_order", ulps=20) == 0
    else:
        assert outside(r["out"], got, "any_order", compute=dtype, ulps=20) == 0
