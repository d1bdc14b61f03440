"""test_op_normal.py: normal() of the operations beyond matmul against an independent numpy emulation of
each textbook order (float32 compute: numpy's float32 + - * / and sqrt are correctly rounded; exp and
tanh from er.exp / er.tanh rounded to float32, which is the exact value rounded once; log and erf from
mpmath, skipped without it), bit for bit, and normal() covered by every operation's `normal` bounds in
bfloat16, float16 and float32."""
import os

import ml_dtypes
import numpy as np
import pytest

import exactref as er

F32 = np.float32
BF16 = ml_dtypes.bfloat16
SEED = int(os.environ.get("EXACTREF_SEED", "31031"))
print(f"test_op_normal: EXACTREF_SEED={SEED}")
DTYPES = [BF16, np.float16, F32]


def rng(k=0):
    return np.random.default_rng(SEED + k)


def bits(a):
    a = np.asarray(a)
    return a.view({1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[a.dtype.itemsize])


def same_bits(a, b):
    a, b = np.asarray(a), np.asarray(b)
    assert a.dtype == b.dtype and a.shape == b.shape, (a.dtype, b.dtype, a.shape, b.shape)
    diff = np.flatnonzero(bits(a) != bits(b))
    assert diff.size == 0, f"{diff.size} of {a.size} elements differ, first at {diff[0]}: " \
                           f"{a.ravel()[diff[0]]!r} vs {b.ravel()[diff[0]]!r}"


# ---- correctly rounded library functions in float32 ----

def cr_exp(x):
    return np.array(er.exp(np.asarray(x, F32)).rounded, F32)


def cr_tanh(x):
    return np.array(er.tanh(np.asarray(x, F32)).rounded, F32)


def _cr_mp(fn, x):
    mpmath = pytest.importorskip("mpmath")
    out = np.empty(np.shape(x), F32)
    flat = np.asarray(x, F32).ravel()
    with mpmath.workprec(300):
        for q, v in enumerate(flat):
            t = getattr(mpmath, fn)(mpmath.mpf(float(v)))
            f = F32(float(t))
            # the nearer of f and its float32 neighbours at 300 bits (no double rounding through binary64)
            cands = [f, np.nextafter(f, F32(np.inf)), np.nextafter(f, F32(-np.inf))]
            out.ravel()[q] = min(cands, key=lambda c: abs(mpmath.mpf(float(c)) - t))
    return out


def cr_log(x):
    return _cr_mp("log", x)


def cr_erf(x):
    return _cr_mp("erf", x)


# ---- the textbook orders in float32 (docs/ops/README.md, "normal()") ----

def seq_sum(e, axis=-1):
    e = np.moveaxis(np.asarray(e, F32), axis, -1)
    s = e[..., 0].copy()
    for j in range(1, e.shape[-1]):
        s = (s + e[..., j]).astype(F32)
    return s


def emu_softmax(x, kind):
    xc = np.asarray(x, F32)
    m = xc.max(axis=-1, keepdims=True)
    d = (xc - m).astype(F32)
    e = cr_exp(d)
    s = seq_sum(e)
    if kind == "softmax":
        return (e / s[..., None]).astype(F32)
    lg = cr_log(s)
    if kind == "log_softmax":
        return (d - lg[..., None]).astype(F32)
    return (m[..., 0] + lg).astype(F32)


def emu_unary(name, x, approximate="none"):
    x = np.asarray(x, F32)
    one, half = F32(1), F32(0.5)
    if name == "exp":
        return cr_exp(x)
    if name == "relu":
        return np.where(x > 0, x, F32(0)).astype(F32)
    if name == "tanh":
        return cr_tanh(x)
    if name == "sigmoid":
        return (one / (one + cr_exp(-x))).astype(F32)
    if name == "silu":
        return (x / (one + cr_exp(-x))).astype(F32)
    if approximate == "none":
        a = (x * F32(0.7071067811865476)).astype(F32)
        return ((half * x) * (one + cr_erf(a))).astype(F32)
    x3 = ((x * x) * x).astype(F32)
    inner = (F32(0.7978845608028654) * (x + F32(0.044715) * x3)).astype(F32)
    return ((half * x) * (one + cr_tanh(inner))).astype(F32)


def emu_layer_norm(x, w, b, eps, rms=False):
    x = np.asarray(x, F32)
    n = F32(x.shape[-1])
    if rms:
        d = x
    else:
        mean = (seq_sum(x) / n).astype(F32)
        d = (x - mean[..., None]).astype(F32)
    q = seq_sum((d * d).astype(F32))
    v = ((q / n).astype(F32) + F32(eps)).astype(F32)
    rstd = (F32(1) / np.sqrt(v)).astype(F32)
    y = (d * rstd[..., None]).astype(F32)
    if w is not None:
        y = (y * np.asarray(w, F32)).astype(F32)
    if b is not None:
        y = (y + np.asarray(b, F32)).astype(F32)
    return y


def emu_linear(x, w, b):
    x, w = np.asarray(x, F32), np.asarray(w, F32)
    acc = np.zeros((x.shape[0], w.shape[0]), F32) if b is None else \
        np.broadcast_to(np.asarray(b, F32), (x.shape[0], w.shape[0])).copy()
    for k in range(x.shape[1]):
        p = (x[:, k][:, None] * w[:, k][None, :]).astype(F32)
        acc = (acc + p).astype(F32) if (b is not None or k) else p
    return acc


def rand(shape, dt, k=0, scale=3.0):
    return (rng(k).standard_normal(shape) * scale).astype(dt)


# ---- bit for bit against the emulations ----

@pytest.mark.parametrize("dt", DTYPES)
def test_softmax_normal_bits(dt):
    x = rand((5, 37), dt, 1)
    same_bits(er.softmax(x).normal(), emu_softmax(x, "softmax").astype(dt))
    # dim=0: the same rows, moved
    same_bits(er.softmax(x, dim=0).normal(), emu_softmax(x.T, "softmax").T.astype(dt))


@pytest.mark.parametrize("kind", ["log_softmax", "logsumexp"])
def test_log_family_normal_bits(kind):
    pytest.importorskip("mpmath")
    for dt in DTYPES:
        x = rand((4, 19), dt, 2)
        r = er.log_softmax(x) if kind == "log_softmax" else er.logsumexp(x)
        same_bits(r.normal(), emu_softmax(x, kind).astype(dt))


@pytest.mark.parametrize("name", ["exp", "relu", "tanh", "sigmoid", "silu", "gelu_tanh", "gelu"])
@pytest.mark.parametrize("dt", DTYPES)
def test_unary_normal_bits(name, dt):
    if name == "gelu":
        pytest.importorskip("mpmath")
    x = rand((3, 41), dt, 3)
    x.ravel()[:4] = np.array([0, -0.0, 8.0, -9.5]).astype(dt)
    if name.startswith("gelu"):
        appr = "tanh" if name == "gelu_tanh" else "none"
        r = er.gelu(x, approximate=appr)
        want = emu_unary("gelu", x, appr)
    else:
        r = getattr(er, name)(x)
        want = emu_unary(name, x)
    same_bits(r.normal(), want.astype(dt))


@pytest.mark.parametrize("dt", DTYPES)
def test_binary_normal_bits(dt):
    a, b = rand((4, 6), dt, 4), rand((6,), dt, 5)
    same_bits(er.add(a, b).normal(), (a.astype(F32) + b.astype(F32)).astype(dt))
    same_bits(er.mul(a, b).normal(), (a.astype(F32) * b.astype(F32)).astype(dt))


@pytest.mark.parametrize("dt", DTYPES)
def test_norms_normal_bits(dt):
    x = rand((3, 24), dt, 6) + dt(2)
    w, b = rand((24,), dt, 7, 1.0), rand((24,), dt, 8, 1.0)
    same_bits(er.layer_norm(x, (24,), w, b).normal(), emu_layer_norm(x, w, b, 1e-5).astype(dt))
    same_bits(er.layer_norm(x, (24,)).normal(), emu_layer_norm(x, None, None, 1e-5).astype(dt))
    eps = float(np.finfo(dt).eps)
    same_bits(er.rms_norm(x, (24,), w).normal(), emu_layer_norm(x, w, None, eps, rms=True).astype(dt))


@pytest.mark.parametrize("dt", DTYPES)
def test_linear_normal_bits(dt):
    x, w, b = rand((3, 9), dt, 9), rand((5, 9), dt, 10), rand((5,), dt, 11)
    same_bits(er.linear(x, w, b).normal(), emu_linear(x, w, b).astype(dt))


def test_normal_compute_and_ftz():
    x = rand((4, 33), F32, 12)
    r = er.softmax(x)
    # f64 compute: every step in binary64 (numpy's float64 is correctly rounded; exp from er.exp in f64)
    xd = x.astype(np.float64)
    m = xd.max(-1, keepdims=True)
    d = xd - m
    e = np.array(er.exp(d).rounded)
    s = e[:, 0].copy()
    for j in range(1, e.shape[1]):
        s = s + e[:, j]
    same_bits(r.normal("float64"), (e / s[:, None]).astype(F32))
    # flush_to_zero: subnormal float32 results flushed (the output keeps no subnormal)
    y = np.array([[0.0, -90.0, -100.0]], F32)
    n = er.softmax(y).normal(flush_to_zero=True)
    assert np.all((np.abs(n) >= np.finfo(F32).tiny) | (n == 0))
    assert er.softmax(y).normal()[0, 2] != 0 and n[0, 2] == 0 and n[0, 0] == 1


def emu_attention(q, k, v, causal=False, mask=None, scale=None):
    """torch's math order in float32: index-order dots, scores times the scale (then the mask), the row's
    max, exp of the difference, index-order sum, each P_j / l, then P.V in index order; lse = mu + log l"""
    q, k, v = (np.asarray(t, F32) for t in (q, k, v))
    sc = F32(1 / np.sqrt(q.shape[-1]) if scale is None else scale)
    sq, sk = q.shape[-2], k.shape[-2]
    dots = q[..., :, None, 0] * k[..., None, :, 0]
    for d in range(1, q.shape[-1]):
        dots = (dots + (q[..., :, None, d] * k[..., None, :, d]).astype(F32)).astype(F32)
    s = (dots * sc).astype(F32)
    if mask is not None:
        s = (s + np.asarray(mask, F32)).astype(F32)
    take = np.ones((sq, sk), bool) if not causal else np.tril(np.ones((sq, sk), bool))
    s = np.where(take, s, F32(-np.inf))
    mu = s.max(-1, keepdims=True)
    p = np.where(take, cr_exp(np.where(take, (s - mu).astype(F32), F32(0))), F32(0))
    cols = [j for j in range(sk)]
    lsum = p[..., cols[0]].copy()
    for j in cols[1:]:
        lsum = np.where(take[:, j], (lsum + p[..., j]).astype(F32), lsum)
    P = (p / lsum[..., None]).astype(F32)
    out = (P[..., :, 0, None] * v[..., None, 0, :]).astype(F32)
    for j in range(1, sk):
        t = (P[..., :, j, None] * v[..., None, j, :]).astype(F32)
        out = np.where(take[:, j, None], (out + t).astype(F32), out)
    lse = (mu[..., 0] + cr_log(lsum)).astype(F32)
    return out, lse


@pytest.mark.parametrize("dt", DTYPES)
def test_attention_normal_bits(dt):
    pytest.importorskip("mpmath")
    q, k, v = (rand((1, 2, 5, 4), dt, 30 + i, 1.5) for i in range(3))
    mask = rand((5, 5), dt, 33, 1.0)
    for kw in (dict(), dict(is_causal=True), dict(attn_mask=mask, scale=0.3)):
        r = er.scaled_dot_product_attention(q, k, v, **kw)
        out, lse = emu_attention(q, k, v, kw.get("is_causal", False), kw.get("attn_mask"), kw.get("scale"))
        n = r.normal()
        same_bits(n["out"], out.astype(dt))
        same_bits(n["lse"], lse)


@pytest.mark.parametrize("dt", DTYPES)
def test_softmax_backward_normal_bits(dt):
    x, g = rand((3, 17), dt, 40), rand((3, 17), dt, 41, 1.0)
    y = emu_softmax(x, "softmax").astype(dt).astype(F32)  # the forward output as stored (the input's dtype)
    gf = np.asarray(g, F32)
    c = seq_sum((gf * y).astype(F32))
    want = (y * (gf - c[:, None]).astype(F32)).astype(F32)
    same_bits(er.softmax(x).backward(g).normal(), want.astype(dt))


def test_quantize_normal_bits():
    x = rand((3, 64), F32, 50)
    f8 = ml_dtypes.float8_e4m3fn
    r = er.quantize(x, scheme="row")
    amax = np.abs(x).max(-1, keepdims=True)
    scale = (amax / F32(448)).astype(F32)
    q = np.clip((x / scale).astype(F32), -448, 448).astype(f8)
    n = r.normal()
    same_bits(n["scale"], scale)
    same_bits(n["q"], q)
    r = er.quantize_mx(x)  # the scale is a power of two: x / X is exact, q = the exact value rounded once
    n = r.normal()
    same_bits(n["q"], np.asarray(r["q"].rounded))
    same_bits(n["scale"], np.asarray(r["scale"].rounded))


# ---- normal() covered by the `normal` bounds, every operation, bf16 / f16 / f32 ----

def _cases(dt):
    x = rand((4, 48), dt, 20)
    xs = rand((2, 3, 16), dt, 21)
    w, b = rand((48,), dt, 22, 1.0), rand((48,), dt, 23, 1.0)
    cases = [
        ("softmax", er.softmax(x)), ("log_softmax", er.log_softmax(x)), ("logsumexp", er.logsumexp(xs, dim=1)),
        ("layer_norm", er.layer_norm(x + dt(3), (48,), w, b)), ("rms_norm", er.rms_norm(x, (48,), w)),
        ("add", er.add(x, b)), ("mul", er.mul(x, b)), ("linear", er.linear(x, rand((7, 48), dt, 24), b[:7])),
    ]
    for name in ("exp", "relu", "tanh", "sigmoid", "silu"):
        cases.append((name, getattr(er, name)(x)))
    cases += [("gelu", er.gelu(x)), ("gelu_tanh", er.gelu(x, approximate="tanh"))]
    g = rand((4, 48), dt, 25, 1.0)
    cases += [("softmax.backward", er.softmax(x).backward(g)), ("log_softmax.backward", er.log_softmax(x).backward(g)),
              ("layer_norm.backward", er.layer_norm(x, (48,), w, b).backward(g)),
              ("rms_norm.backward", er.rms_norm(x, (48,), w).backward(g))]
    q, k, v = (rand((1, 2, 16, 8), dt, 26 + i, 1.5) for i in range(3))
    cases += [("attention", er.scaled_dot_product_attention(q, k, v)),
              ("attention causal", er.scaled_dot_product_attention(q, k, v, is_causal=True)),
              ("attention gqa", er.scaled_dot_product_attention(q, k[:, :1], v[:, :1], enable_gqa=True))]
    for kw in (dict(), dict(scheme="row"), dict(scheme="mx"), dict(scheme="nvfp4"), dict(scheme="row", fmt="f8e5m2")):
        cases.append((f"quantize {kw}", er.quantize(rand((4, 64), dt, 27), **kw)))
    return cases


def _each_output(name, r):
    if r._outputs is None:
        yield name, r
    else:
        for k in r._outputs:
            yield f"{name}[{k}]", r[k]


@pytest.mark.parametrize("dt", DTYPES)
def test_normal_within_normal_bounds(dt):
    for name, r in (c for n0, r0 in _cases(dt) for c in _each_output(n0, r0)):
        for compute in (None, "float64"):
            if compute and (name.startswith("quantize") or name.startswith("attention")):
                continue  # the scales are formed in f32, and attention's bounds model compute up to f32
            n = r.normal(compute)
            cov = r.covers(n, compute, standard="normal")
            assert cov.all(), f"{name} {np.dtype(dt).name} compute={compute}: {int((~cov).sum())} of {cov.size} " \
                              f"normal() elements outside the normal bounds"


def test_normal_on_results():
    """a result on earlier results computes normal() on their normal() (seed 002), views included"""
    x = rand((4, 9), F32, 60)
    s = er.softmax(x)
    assert (bits(s.normal()) != bits(s.rounded)).any()  # so reading rounded in place of normal() is caught
    g = er.gelu(s, approximate="tanh")
    same_bits(g.normal(), emu_unary("gelu", s.normal(), "tanh"))
    a = er.add(s.T, s.T)
    same_bits(a.normal(), (np.asarray(s.normal()).T * F32(2)).astype(F32))
    ls = er.softmax(er.mul(s, s))
    sq = (np.asarray(s.normal()) * np.asarray(s.normal())).astype(F32)
    same_bits(ls.normal(), emu_softmax(sq, "softmax"))
    # matmul's result as an input: its normal() (index-order accumulation) is read
    p, w = rand((4, 16), F32, 61), rand((16, 6), F32, 62)
    m = er.matmul(p, w)
    same_bits(er.softmax(m).normal(), emu_softmax(m.normal(), "softmax"))


@pytest.mark.parametrize("dt", DTYPES)
def test_log_softmax_backward_normal_bits(dt):
    pytest.importorskip("mpmath")
    x, g = rand((3, 11), dt, 70), rand((3, 11), dt, 71, 1.0)
    z = emu_softmax(x, "log_softmax").astype(dt).astype(F32)  # the forward output as stored
    y = cr_exp(z)
    gf = np.asarray(g, F32)
    G = seq_sum(gf)
    want = (gf - (y * G[:, None]).astype(F32)).astype(F32)
    same_bits(er.log_softmax(x).backward(g).normal(), want.astype(dt))


def emu_norm_backward(x, w, g, eps, rms):
    x, g = np.asarray(x, F32), np.asarray(g, F32)
    n = F32(x.shape[-1])
    if rms:
        d = x
    else:
        mean = (seq_sum(x) / n).astype(F32)
        d = (x - mean[..., None]).astype(F32)
    q = seq_sum((d * d).astype(F32))
    r = (F32(1) / np.sqrt(((q / n).astype(F32) + F32(eps)).astype(F32))).astype(F32)[..., None]
    xh = (d * r).astype(F32)
    gy = g if w is None else (g * np.asarray(w, F32)).astype(F32)
    G = seq_sum(gy)[..., None]
    C = seq_sum((gy * xh).astype(F32))[..., None]
    a = (r * gy).astype(F32)
    if not rms:
        a = (a - (r * (G / n).astype(F32)).astype(F32)).astype(F32)
    gi = (a - (xh * (r * (C / n).astype(F32)).astype(F32)).astype(F32)).astype(F32)
    gw = seq_sum((g * xh).astype(F32), axis=0)
    gb = seq_sum(g, axis=0)
    return gi, gw, gb


@pytest.mark.parametrize("dt", DTYPES)
def test_norm_backward_normal_bits(dt):
    x, g = rand((5, 16), dt, 72) + dt(1), rand((5, 16), dt, 73, 1.0)
    w, b = rand((16,), dt, 74, 1.0), rand((16,), dt, 75, 1.0)
    gi, gw, gb = emu_norm_backward(x, w, g, 1e-5, rms=False)
    n = er.layer_norm(x, (16,), w, b).backward(g).normal()
    same_bits(n["grad_input"], gi.astype(dt))
    same_bits(n["grad_weight"], gw.astype(dt))
    same_bits(n["grad_bias"], gb.astype(dt))
    gi, gw, _ = emu_norm_backward(x, w, g, float(np.finfo(dt).eps), rms=True)
    n = er.rms_norm(x, (16,), w).backward(g).normal()
    same_bits(n["grad_input"], gi.astype(dt))
    same_bits(n["grad_weight"], gw.astype(dt))


def test_quantize_nvfp4_normal_bits():
    x = rand((2, 32), F32, 76)
    e4m3, e2m1 = ml_dtypes.float8_e4m3fn, ml_dtypes.float4_e2m1fn
    s_t = F32(np.abs(x).max() / F32(2688))
    blocks = x.reshape(2, 2, 16)
    amax = np.abs(blocks).max(-1)
    sig = (amax / F32(F32(6) * s_t)).astype(F32)
    stored = np.clip(sig, 0, 448).astype(e4m3)
    div = (stored.astype(F32) * s_t).astype(F32)
    q = np.clip((blocks / div[..., None]).astype(F32), -6, 6).astype(e2m1).reshape(2, 32)
    n = er.quantize_nvfp4(x).normal()
    same_bits(n["scale"], stored)
    same_bits(n["q"], q)
