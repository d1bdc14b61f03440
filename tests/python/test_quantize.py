"""test_quantize.py: quantize (per-tensor, per-row, OCP MX, NVFP4) judged against numpy + ml_dtypes quantizers,
with planted bugs (block size, scale binade, saturation, rounding direction), both the values and the scales."""
import numpy as np
import pytest

import exactref as er

ml_dtypes = pytest.importorskip("ml_dtypes")

F32 = np.float32
FMT = {
    "f8e4m3": (ml_dtypes.float8_e4m3fn, 448.0, 8),
    "f8e5m2": (ml_dtypes.float8_e5m2, 57344.0, 15),
    "f6e2m3": (ml_dtypes.float6_e2m3fn, 7.5, 2),
    "f6e3m2": (ml_dtypes.float6_e3m2fn, 28.0, 4),
    "f4e2m1": (ml_dtypes.float4_e2m1fn, 6.0, 2),
}
E8M0 = ml_dtypes.float8_e8m0fnu
E4M3 = ml_dtypes.float8_e4m3fn


def _values(dt):
    """The finite nonnegative values of an 8-bit-or-less format, sorted."""
    v = np.arange(256, dtype=np.uint8).view(dt).astype(np.float64)
    v = np.unique(np.abs(v[np.isfinite(v)]))
    return v


def _to_fmt(v, fmt, saturate=True, toward_zero=False):
    """f32 values v rounded into fmt: nearest even (ml_dtypes, from f32: one rounding) or toward zero."""
    dt, fmax, _ = FMT[fmt]
    v = np.asarray(v, F32)
    if saturate:
        v = np.clip(v, F32(-fmax), F32(fmax))
    if toward_zero:
        vals = _values(dt)
        a = np.abs(v.astype(np.float64))
        idx = np.searchsorted(vals, a, side="right") - 1
        return (np.sign(v) * vals[np.clip(idx, 0, None)]).astype(F32).astype(dt)
    return v.astype(dt)


def mx_emul(x, fmt, block=32, bug=None):
    """OCP MX quantization of the last axis: (q, e8m0 scales)."""
    _, fmax, emax = FMT[fmt]
    x = np.asarray(x, F32)
    rows, n = x.shape
    xb = x.reshape(rows, n // block, block)
    amax = np.abs(xb).max(axis=-1).astype(np.float64)
    _, ex = np.frexp(amax)
    shared = np.where(amax > 0, ex - 1 - emax, -127)
    if bug == "binade":
        shared = shared + 1
    shared = np.clip(shared, -127, 127)
    X = np.ldexp(1.0, shared)
    v = (xb.astype(np.float64) / X[..., None]).astype(F32)
    q = _to_fmt(v, fmt, saturate=(bug != "no_saturate"), toward_zero=(bug == "toward_zero"))
    return q.reshape(rows, n), X.astype(F32).astype(E8M0)


def nvfp4_emul(x, s_t=None, block=16, bug=None, recip=False):
    """NVFP4: e2m1 elements, e4m3 block scales (amax / 6 / s_t), a per-tensor f32 scale s_t."""
    x = np.asarray(x, F32)
    rows, n = x.shape
    if s_t is None:
        s_t = F32(np.abs(x).max()) / F32(6 * 448)
    s_t = F32(s_t)
    xb = x.reshape(rows, n // block, block)
    amax = np.abs(xb).max(axis=-1)
    if recip:  # amax * (1 / (6 s_t)): one more rounding
        sb = (amax * (F32(1) / (F32(6) * s_t).astype(F32)).astype(F32)).astype(F32)
    else:
        sb = ((amax / F32(6)).astype(F32) / s_t).astype(F32)
    if bug == "binade":
        sb = (sb * F32(2)).astype(F32)
    sb = np.clip(sb, F32(0), F32(448)).astype(E4M3)
    den = (sb.astype(F32) * s_t).astype(F32)
    with np.errstate(divide="ignore", invalid="ignore"):
        safe = np.where(den > 0, den, F32(1))
        q = (xb * (F32(1) / safe).astype(F32)[..., None]).astype(F32) if recip else xb / safe[..., None]
        v = np.where(den[..., None] > 0, q, F32(0)).astype(F32)
    q = _to_fmt(v, "f4e2m1", toward_zero=(bug == "toward_zero"))
    return q.reshape(rows, n), sb


def tensor_emul(x, fmt, scale=None, per_row=False, saturate=True, recip=False):
    """Per-tensor or per-row scaling: scale = amax / Fmax (f32) unless given; q = x / scale rounded into fmt."""
    _, fmax, _ = FMT[fmt]
    x = np.asarray(x, F32)
    if scale is None:
        amax = np.abs(x).max(axis=-1, keepdims=True) if per_row else np.abs(x).max()
        scale = (np.asarray(amax, F32) / F32(fmax)).astype(F32)
    scale = np.asarray(scale, F32)
    if recip:
        v = (x * (F32(1) / scale).astype(F32)).astype(F32)
    else:
        v = (x / scale).astype(F32)
    return _to_fmt(v, fmt, saturate=saturate), scale


def _q(x, scale=None, **opts):
    return er.quantize(x, scale=scale, **opts)


def _out(r, name, value, **kw):
    return int((~np.asarray(r[name].covers(np.asarray(value), **kw))).sum())


def _data(rng, rows, n, spread=True):
    x = rng.standard_normal((rows, n))
    if spread:
        x = x * np.exp2(rng.integers(-6, 7, size=(rows, 1)))
    return x.astype(F32)


# ---------------------------------------------------------------- OCP MX
@pytest.mark.parametrize("fmt", ["f8e4m3", "f8e5m2", "f6e2m3", "f6e3m2", "f4e2m1"])
def test_mx_matches_the_spec_rule(rng, fmt):
    x = _data(rng, 4, 128)
    x[0, :32] = 0.0  # an all-zero block
    q, s = mx_emul(x, fmt)
    r = _q(x, fmt=fmt, scheme="mx")
    rq, rs = np.asarray(r.rounded["q"]), np.asarray(r.rounded["scale"])
    assert rs.shape == (4, 4)
    np.testing.assert_array_equal(rs.astype(np.float64), s.astype(np.float64))
    np.testing.assert_array_equal(rq.astype(np.float64), q.astype(np.float64))
    assert _out(r, "q", q) == 0 and _out(r, "scale", s) == 0


@pytest.mark.parametrize("bug,fmt", [("binade", "f8e4m3"), ("no_saturate", "f8e4m3"), ("toward_zero", "f4e2m1"),
                                     ("toward_zero", "f8e4m3"), ("block16", "f8e4m3")])
def test_mx_planted_bugs_caught(rng, bug, fmt):
    x = _data(rng, 8, 256)
    if bug == "no_saturate":
        # one element per block is the block's largest, with significand 1.95: it overflows 448 before clamping
        blk = np.abs(x).reshape(8, 8, 32).max(axis=-1)
        x[:, ::32] = (F32(1.95) * np.exp2(np.ceil(np.log2(blk)))).astype(F32)
    r = _q(x, fmt=fmt, scheme="mx")
    if bug == "block16":
        q, s = mx_emul(x, fmt, block=16)
        # the values change wherever the 16-block's amax is a binade below the 32-block's
        assert _out(r, "q", q) > 0
        return
    q, s = mx_emul(x, fmt, bug=bug)
    bad = _out(r, "q", q) + (_out(r, "scale", s) if bug == "binade" else 0)
    assert bad > 0, bug


# ---------------------------------------------------------------- NVFP4
def test_nvfp4_covered_and_exact(rng):
    x = _data(rng, 4, 64, spread=False)
    s_t = F32(np.abs(x).max()) / F32(6 * 448)
    q, sb = nvfp4_emul(x, s_t)
    r = _q(x, np.asarray(s_t, F32), fmt="f4e2m1", scheme="nvfp4")
    assert np.asarray(r.rounded["scale"]).shape == (4, 4)
    assert _out(r, "scale", sb) == 0
    assert _out(r, "q", q) == 0
    # the same with the tensor scale computed by the operation
    r2 = _q(x, fmt="f4e2m1", scheme="nvfp4")
    assert _out(r2, "scale", sb) == 0 and _out(r2, "q", q) == 0
    # reciprocal forms of both quotients
    q, sb = nvfp4_emul(x, s_t, recip=True)
    assert _out(r, "scale", sb) == 0 and _out(r, "q", q) == 0


@pytest.mark.parametrize("bug", ["binade", "toward_zero", "block32"])
def test_nvfp4_planted_bugs_caught(rng, bug):
    x = _data(rng, 8, 128, spread=False)
    s_t = F32(np.abs(x).max()) / F32(6 * 448)
    r = _q(x, np.asarray(s_t, F32), fmt="f4e2m1", scheme="nvfp4")
    if bug == "block32":
        q, sb = nvfp4_emul(x, s_t, block=32)
        assert _out(r, "q", q) > 0
        return
    q, sb = nvfp4_emul(x, s_t, bug=bug)
    assert _out(r, "q", q) + _out(r, "scale", sb) > 0, bug


# ---------------------------------------------------------------- per tensor and per row
@pytest.mark.parametrize("fmt", ["f8e4m3", "f8e5m2"])
@pytest.mark.parametrize("per_row", [False, True])
def test_tensor_and_row_scales_covered(rng, fmt, per_row):
    x = _data(rng, 6, 50)
    r = _q(x, fmt=fmt, scheme="row" if per_row else "tensor")
    for recip in (False, True):
        q, s = tensor_emul(x, fmt, per_row=per_row, recip=recip)
        s = s.reshape(np.asarray(r.rounded["scale"]).shape)
        assert _out(r, "scale", s) == 0
        assert _out(r, "q", q) == 0, recip


def test_given_scale_saturation(rng):
    x = _data(rng, 4, 40, spread=False)
    scale = np.asarray(F32(np.abs(x).max()) / F32(600.0), F32)
    r = _q(x, scale, fmt="f8e4m3", scheme="tensor", saturate=1)
    q, _ = tensor_emul(x, "f8e4m3", scale=scale)
    assert _out(r, "q", q) == 0
    qn, _ = tensor_emul(x, "f8e4m3", scale=scale, saturate=False)
    assert np.isnan(qn.astype(np.float32)).any()
    assert _out(r, "q", qn) > 0
    # without saturation the NaN is what a correct implementation produces
    r0 = _q(x, scale, fmt="f8e4m3", scheme="tensor", saturate=0)
    assert _out(r0, "q", qn) == 0 and _out(r0, "q", q) > 0


def test_round_toward_zero_caught_per_tensor(rng):
    x = _data(rng, 4, 64, spread=False)
    r = _q(x, fmt="f8e4m3", scheme="tensor")
    q, s = tensor_emul(x, "f8e4m3")
    qz = _to_fmt((x / s).astype(F32), "f8e4m3", toward_zero=True)
    assert _out(r, "q", q) == 0 and _out(r, "q", qz) > 0
