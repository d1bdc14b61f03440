"""test_norms.py: layer_norm and rms_norm judged against numpy emulations of real kernels (two-pass, one-pass,
Welford, any order), planted bugs, a decimal reference for the rounded answer, and torch's CPU kernels."""
import decimal
from decimal import Decimal

import numpy as np
import pytest

import exactref as er

ml_dtypes = pytest.importorskip("ml_dtypes")

F32 = np.float32
DTYPES = {"float32": np.dtype(np.float32), "float16": np.dtype(np.float16), "bfloat16": np.dtype(ml_dtypes.bfloat16)}


# ---------------------------------------------------------------- emulations (f32 arithmetic)
def _sum_index(a):
    """Sum over the last axis in index order, each addition rounded to f32."""
    s = np.zeros(a.shape[:-1], F32)
    for j in range(a.shape[-1]):
        s = (s + a[..., j]).astype(F32)
    return s


def _sum_pairwise(a):
    """Sum over the last axis by halving (a balanced tree), each addition rounded to f32."""
    a = a.astype(F32)
    while a.shape[-1] > 1:
        if a.shape[-1] % 2:
            a = np.concatenate([a, np.zeros(a.shape[:-1] + (1,), F32)], axis=-1)
        a = (a[..., 0::2] + a[..., 1::2]).astype(F32)
    return a[..., 0]


def _rstd(var, eps, bug=None):
    e = F32(eps)
    if bug == "eps_outside":
        return (F32(1) / (np.sqrt(var).astype(F32) + e)).astype(F32)
    return (F32(1) / np.sqrt((var + e).astype(F32)).astype(F32)).astype(F32)


def layer_norm_emul(x, w, b, eps, mode="two_pass", summ=_sum_index, bug=None):
    """layer_norm over the last axis of x in f32: mode two_pass, one_pass or welford; bug a planted defect."""
    x = x.astype(F32)
    n = x.shape[-1]
    if mode == "welford":
        mean = np.zeros(x.shape[:-1], F32)
        m2 = np.zeros(x.shape[:-1], F32)
        for j in range(n):
            d = (x[..., j] - mean).astype(F32)
            mean = (mean + (d / F32(j + 1)).astype(F32)).astype(F32)
            m2 = (m2 + (d * (x[..., j] - mean).astype(F32)).astype(F32)).astype(F32)
        var = (m2 / F32(n)).astype(F32)
    else:
        mean = (summ(x) / F32(n)).astype(F32)
        if mode == "one_pass":
            q = summ((x * x).astype(F32))
            var = np.maximum(((q / F32(n)).astype(F32) - (mean * mean).astype(F32)).astype(F32), F32(0))
        else:
            d = (x - mean[..., None]).astype(F32)
            q = summ((d * d).astype(F32))
            var = (q / F32(n - 1 if bug == "unbiased" else n)).astype(F32)
    r = _rstd(var, eps, bug)
    d = x if bug == "no_mean" else (x - mean[..., None]).astype(F32)
    if bug == "swap_wb":
        w, b = b, w
    y = (d * r[..., None]).astype(F32)
    if w is not None:
        y = (y * w.astype(F32)).astype(F32)
    if b is not None:
        y = (y + b.astype(F32)).astype(F32)
    return y


def rms_norm_emul(x, w, eps, summ=_sum_index, bug=None):
    """rms_norm over the last axis of x in f32 (torch's formula), bug a planted defect."""
    x = x.astype(F32)
    n = x.shape[-1]
    q = summ((x * x).astype(F32))
    ms = (q / F32(n - 1 if bug == "unbiased" else n)).astype(F32)
    r = _rstd(ms, eps, bug)
    y = (x * r[..., None]).astype(F32)
    if w is not None and bug != "no_weight":
        y = (y * w.astype(F32)).astype(F32)
    return y


# ---------------------------------------------------------------- decimal reference
def _dec(a):
    return [Decimal(float(v)) for v in np.asarray(a, np.float64).ravel()]


def layer_norm_decimal(x, w, b, eps):
    """The exact layer_norm of each row to 60 digits (decimal arithmetic)."""
    decimal.getcontext().prec = 60
    x = np.asarray(x, np.float64)
    out = []
    for row in x.reshape(-1, x.shape[-1]):
        d = _dec(row)
        n = len(d)
        mu = sum(d) / n
        var = sum((v - mu) ** 2 for v in d) / n
        r = 1 / (var + Decimal(float(eps))).sqrt()
        ww = _dec(w) if w is not None else [Decimal(1)] * n
        bb = _dec(b) if b is not None else [Decimal(0)] * n
        out.append([(v - mu) * r * ww[i] + bb[i] for i, v in enumerate(d)])
    return out


def rms_norm_decimal(x, w, eps):
    decimal.getcontext().prec = 60
    x = np.asarray(x, np.float64)
    out = []
    for row in x.reshape(-1, x.shape[-1]):
        d = _dec(row)
        n = len(d)
        r = 1 / (sum(v * v for v in d) / n + Decimal(float(eps))).sqrt()
        ww = _dec(w) if w is not None else [Decimal(1)] * n
        out.append([v * r * ww[i] for i, v in enumerate(d)])
    return out


def _neighbours(v, dt):
    u = {1: np.uint8, 2: np.uint16, 4: np.uint32}[dt.itemsize]
    bits = int(np.array([v], dt).view(u)[0])
    sign = 1 << (8 * dt.itemsize - 1)
    mag = bits & (sign - 1)
    o = -mag if bits & sign else mag
    res = []
    for k in (o - 1, o + 1):
        bb = k if k >= 0 else (sign | -k)
        res.append(float(np.array([bb], u).view(dt)[0].astype(np.float64)))
    return res


def assert_nearest(rounded, exact_rows):
    r = np.asarray(rounded)
    flat = r.reshape(-1)
    ex = [v for row in exact_rows for v in row]
    for i, (got, e) in enumerate(zip(flat, ex)):
        g = float(np.float64(got.astype(np.float64)))
        assert np.isfinite(g)
        dist = abs(Decimal(g) - e)
        for nb in _neighbours(got, r.dtype):
            if np.isfinite(nb):
                assert dist <= abs(Decimal(nb) - e), f"element {i}: {g!r} is not nearest to {float(e)!r}"


# ---------------------------------------------------------------- helpers
def _data(rng, rows, n, dtype, mean=0.0, std=1.0):
    return (rng.standard_normal((rows, n)) * std + mean).astype(np.float32).astype(DTYPES[dtype])


def _outside(res, out, **kw):
    c = np.asarray(res.covers(np.asarray(out), **kw))
    return int((~c).sum())


# ---------------------------------------------------------------- rounded is the exact value rounded once
@pytest.mark.parametrize("dtype", ["float32", "bfloat16", "float16"])
def test_layer_norm_rounded_is_exact_rounded_once(rng, dtype):
    x = _data(rng, 3, 24, dtype, mean=0.5)
    w = _data(rng, 1, 24, dtype).reshape(24)
    b = _data(rng, 1, 24, dtype).reshape(24)
    r = er.layer_norm(x, (24,), w, b, eps=1e-5)
    rounded = np.asarray(r.rounded)
    assert rounded.dtype == DTYPES[dtype] and rounded.shape == x.shape
    assert_nearest(rounded, layer_norm_decimal(x, w, b, 1e-5))


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_rms_norm_rounded_is_exact_rounded_once(rng, dtype):
    x = _data(rng, 3, 40, dtype)
    w = _data(rng, 1, 40, dtype).reshape(40)
    r = er.rms_norm(x, (40,), w, eps=1e-6)
    assert_nearest(np.asarray(r.rounded), rms_norm_decimal(x, w, 1e-6))


def test_rms_norm_default_eps_is_torch_finfo_eps(rng):
    # torch's rms_norm with eps=None uses finfo(input dtype).eps: 2^-7 for bf16
    x = _data(rng, 2, 16, "bfloat16", std=0.05)
    r = er.rms_norm(x, (16,))
    assert_nearest(np.asarray(r.rounded), rms_norm_decimal(x, None, 2.0**-7))


def test_layer_norm_several_normalized_dims(rng):
    x = _data(rng, 2, 24, "float32").reshape(2, 4, 6)
    r = er.layer_norm(x, (4, 6))
    assert_nearest(np.asarray(r.rounded).reshape(2, 24), layer_norm_decimal(x.reshape(2, 24), None, None, 1e-5))


# ---------------------------------------------------------------- real implementations are covered
@pytest.mark.parametrize("dtype", ["float32", "bfloat16", "float16"])
def test_layer_norm_emulations_covered(rng, dtype):
    n = 96
    x = _data(rng, 16, n, dtype, mean=0.25)
    w = _data(rng, 1, n, dtype).reshape(n)
    b = _data(rng, 1, n, dtype).reshape(n)
    r = er.layer_norm(x, (n,), w, b, eps=1e-5)
    dt = DTYPES[dtype]
    two_idx = layer_norm_emul(x, w, b, 1e-5).astype(dt)
    two_pw = layer_norm_emul(x, w, b, 1e-5, summ=_sum_pairwise).astype(dt)
    one = layer_norm_emul(x, w, b, 1e-5, mode="one_pass").astype(dt)
    wel = layer_norm_emul(x, w, b, 1e-5, mode="welford").astype(dt)
    assert _outside(r, two_idx, standard="normal") == 0
    assert _outside(r, two_pw, standard="normal") == 0
    for y in (two_idx, two_pw, one, wel):
        assert _outside(r, y, standard="any_order") == 0
    assert _outside(r, np.asarray(r.rounded), standard="normal") == 0


def test_layer_norm_one_pass_cancellation_needs_any_order(rng):
    # rows with a mean large against their spread: the one-pass variance cancels; any_order covers it
    n = 64
    x = _data(rng, 8, n, "float32", mean=300.0, std=0.5)
    r = er.layer_norm(x, (n,), eps=1e-5)
    one = layer_norm_emul(x, None, None, 1e-5, mode="one_pass")
    assert _outside(r, one, standard="any_order") == 0
    tn = np.asarray(r.tolerance(standard="normal"))
    ta = np.asarray(r.tolerance(standard="any_order"))
    assert (ta >= tn).all() and np.median(ta) > 4 * np.median(tn)


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_rms_norm_emulations_covered(rng, dtype):
    n = 80
    x = _data(rng, 12, n, dtype)
    w = _data(rng, 1, n, dtype).reshape(n)
    r = er.rms_norm(x, (n,), w, eps=1e-6)
    dt = DTYPES[dtype]
    for summ in (_sum_index, _sum_pairwise):
        y = rms_norm_emul(x, w, 1e-6, summ=summ).astype(dt)
        assert _outside(r, y, standard="normal") == 0
        assert _outside(r, y, standard="any_order") == 0


# ---------------------------------------------------------------- planted bugs are caught
@pytest.mark.parametrize("bug", ["unbiased", "eps_outside", "no_mean", "swap_wb"])
def test_layer_norm_planted_bugs_caught(rng, bug):
    n = 48
    x = _data(rng, 8, n, "float32", mean=1.0, std=0.1)
    w = _data(rng, 1, n, "float32").reshape(n)
    b = _data(rng, 1, n, "float32").reshape(n)
    eps = 1e-3
    r = er.layer_norm(x, (n,), w, b, eps=eps)
    good = layer_norm_emul(x, w, b, eps)
    assert _outside(r, good, standard="any_order") == 0
    bad = layer_norm_emul(x, w, b, eps, bug=bug)
    assert _outside(r, bad, standard="any_order") > 0, bug


def test_layer_norm_unbiased_variance_caught_in_bf16(rng):
    n = 16
    x = _data(rng, 8, n, "bfloat16")
    r = er.layer_norm(x, (n,))
    bad = layer_norm_emul(x, None, None, 1e-5, bug="unbiased").astype(DTYPES["bfloat16"])
    assert _outside(r, bad, standard="any_order") > 0


@pytest.mark.parametrize("bug", ["unbiased", "eps_outside", "no_weight"])
def test_rms_norm_planted_bugs_caught(rng, bug):
    n = 48
    x = _data(rng, 8, n, "float32", std=0.1)
    w = _data(rng, 1, n, "float32").reshape(n)
    r = er.rms_norm(x, (n,), w, eps=1e-3)
    assert _outside(r, rms_norm_emul(x, w, 1e-3), standard="any_order") == 0
    assert _outside(r, rms_norm_emul(x, w, 1e-3, bug=bug), standard="any_order") > 0, bug


def test_one_element_off_by_one_ulp_caught_in_bf16(rng):
    # the bound is tight: for bf16 outputs it allows the rounded value and at most its neighbours where
    # the exact value is near a midpoint; a value two ulps away is always flagged
    n = 128
    x = _data(rng, 4, n, "bfloat16")
    r = er.layer_norm(x, (n,))
    y = np.asarray(r.rounded).copy()
    u = y.view(np.uint16).reshape(-1)
    k = int(np.argmax(np.abs(y.astype(np.float32)).reshape(-1)))
    u[k] += 2
    assert _outside(r, y, standard="any_order") == 1


# ---------------------------------------------------------------- torch's CPU kernels as clients
@pytest.mark.parametrize("dtype", ["float32", "bfloat16", "float16"])
def test_torch_layer_norm_and_rms_norm_covered(rng, dtype):
    torch = pytest.importorskip("torch")
    tdt = {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}[dtype]
    n = 256
    x = _data(rng, 32, n, dtype, mean=0.1)
    w = _data(rng, 1, n, dtype).reshape(n)
    b = _data(rng, 1, n, dtype).reshape(n)

    def t(a):
        return torch.from_numpy(np.asarray(a, np.float32)).to(tdt)

    def back(tt):
        return tt.float().numpy().astype(DTYPES[dtype])

    y = back(torch.nn.functional.layer_norm(t(x), (n,), t(w), t(b), eps=1e-5))
    r = er.layer_norm(x, (n,), w, b, eps=1e-5)
    # torch's CPU layer_norm computes the moments by Welford updates (docs/proofs/norms.md: measured)
    assert _outside(r, y, standard="any_order") == 0
    if hasattr(torch.nn.functional, "rms_norm"):
        y = back(torch.nn.functional.rms_norm(t(x), (n,), t(w), eps=1e-6))
        r = er.rms_norm(x, (n,), w, eps=1e-6)
        assert _outside(r, y, standard="any_order") == 0
        assert _outside(r, y, standard="normal") == 0


# ---------------------------------------------------------------- tightness
def test_bf16_bound_is_within_an_ulp_at_the_median(rng):
    n = 512
    x = _data(rng, 16, n, "bfloat16")
    r = er.layer_norm(x, (n,))
    y = np.asarray(r.rounded).astype(np.float64)
    ulp = np.spacing(np.abs(y).astype(np.float32)).astype(np.float64) * 2.0**16
    tol = np.asarray(r.tolerance(standard="any_order"))
    assert np.median(tol / ulp) <= 1.0


# ---------------------------------------------------------------- backward: torch autograd and a numpy reference
def _np_layer_norm_backward(x, w, g, eps, rms=False):
    """grad_input, grad_weight, grad_bias in float64 (the exact formulas, for comparison with rounded)."""
    x = x.astype(np.float64)
    g = g.astype(np.float64)
    n = x.shape[-1]
    w = np.ones(n) if w is None else w.astype(np.float64)
    mu = 0.0 if rms else x.mean(-1, keepdims=True)
    d = x - mu
    r = 1 / np.sqrt((d * d).mean(-1, keepdims=True) + eps)
    gy = g * w
    xh = d * r
    gi = r * (gy - (0.0 if rms else gy.mean(-1, keepdims=True)) - xh * (gy * xh).mean(-1, keepdims=True))
    return gi, (g * xh).sum(0), g.sum(0)


@pytest.mark.parametrize("rms", [False, True])
def test_norm_backward_matches_numpy_and_covers_torch_autograd(rng, rms):
    _norm_backward_case(rng, rms)


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
@pytest.mark.parametrize("rms", [False, True])
def test_norm_backward_covers_torch_autograd_16bit(rng, rms, dtype):
    torch = pytest.importorskip("torch")
    tdt = {"bfloat16": torch.bfloat16, "float16": torch.float16}[dtype]
    n = 128
    x = _data(rng, 8, n, dtype, mean=0.3)
    w = _data(rng, 1, n, dtype).reshape(n)
    b = _data(rng, 1, n, dtype).reshape(n)
    g = _data(rng, 8, n, dtype)
    eps = 1e-5

    def t(a):
        return torch.from_numpy(np.asarray(a, np.float32)).to(tdt).requires_grad_(True)

    xt, wt, bt = t(x), t(w), t(b)
    if rms:
        y = torch.nn.functional.rms_norm(xt, (n,), wt, eps=eps)
        gb = er.rms_norm(x, (n,), w, eps=eps).backward(g)
    else:
        y = torch.nn.functional.layer_norm(xt, (n,), wt, bt, eps=eps)
        gb = er.layer_norm(x, (n,), w, b, eps=eps).backward(g)
    y.backward(torch.from_numpy(np.asarray(g, np.float32)).to(tdt))
    dt = DTYPES[dtype]
    # measured (torch 2.15): the CPU layer_norm backward for 16-bit inputs rounds its sums to the input
    # format (grad_bias of 8 rows is then 2 bf16 ulps off), so it is judged with that compute format;
    # rms_norm's composite backward computes in f32
    kw = {"standard": "any_order", "compute": None if rms else dtype}
    assert _outside(gb["grad_input"], xt.grad.float().numpy().astype(dt), **kw) == 0
    assert _outside(gb["grad_weight"], wt.grad.float().numpy().astype(dt), **kw) == 0
    if not rms:
        assert _outside(gb["grad_bias"], bt.grad.float().numpy().astype(dt), **kw) == 0


def _norm_backward_case(rng, rms):
    n = 64
    x = _data(rng, 6, n, "float32", mean=0.3)
    w = _data(rng, 1, n, "float32").reshape(n)
    b = _data(rng, 1, n, "float32").reshape(n)
    g = _data(rng, 6, n, "float32")
    eps = 1e-5
    r = er.rms_norm(x, (n,), w, eps=eps) if rms else er.layer_norm(x, (n,), w, b, eps=eps)
    gb = r.backward(g)
    gi, gw, gbias = _np_layer_norm_backward(x, w, g, eps, rms)
    np.testing.assert_allclose(np.asarray(gb.rounded["grad_input"]).astype(np.float64), gi, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(np.asarray(gb.rounded["grad_weight"]).astype(np.float64), gw, rtol=1e-5, atol=1e-6)
    if not rms:
        np.testing.assert_allclose(np.asarray(gb.rounded["grad_bias"]).astype(np.float64), gbias, rtol=1e-6, atol=1e-6)
    # planted bugs: the mean(gy) term dropped (layer_norm), the xhat term dropped
    x64, g64 = x.astype(np.float64), g.astype(np.float64)
    mu = 0.0 if rms else x64.mean(-1, keepdims=True)
    rs = 1 / np.sqrt(((x64 - mu) ** 2).mean(-1, keepdims=True) + eps)
    gy = g64 * w
    bugs = [rs * (gy - gy.mean(-1, keepdims=True))]
    if not rms:
        bugs.append(gi + rs * gy.mean(-1, keepdims=True))
    for bad in bugs:
        assert _outside(gb["grad_input"], bad.astype(np.float32), standard="any_order") > 0
    torch = pytest.importorskip("torch")
    xt = torch.from_numpy(x).requires_grad_(True)
    wt = torch.from_numpy(w).requires_grad_(True)
    bt = torch.from_numpy(b).requires_grad_(True)
    if rms:
        y = torch.nn.functional.rms_norm(xt, (n,), wt, eps=eps)
    else:
        y = torch.nn.functional.layer_norm(xt, (n,), wt, bt, eps=eps)
    y.backward(torch.from_numpy(g))
    assert _outside(gb["grad_input"], xt.grad.numpy(), standard="any_order") == 0
    assert _outside(gb["grad_weight"], wt.grad.numpy(), standard="any_order") == 0
    if not rms:
        assert _outside(gb["grad_bias"], bt.grad.numpy(), standard="any_order") == 0


def test_softmax_backward_covers_torch_autograd(rng):
    torch = pytest.importorskip("torch")
    x = _data(rng, 5, 40, "float32", std=2.0)
    g = _data(rng, 5, 40, "float32")
    r = er.softmax(x, -1)
    gb = r.backward(g)
    xt = torch.from_numpy(x).requires_grad_(True)
    torch.softmax(xt, -1).backward(torch.from_numpy(g))
    assert _outside(gb, xt.grad.numpy(), standard="any_order") == 0
    # a planted bug: y * g (the sum term dropped)
    y = torch.softmax(torch.from_numpy(x), -1).numpy()
    assert _outside(gb, (y * g).astype(np.float32), standard="any_order") > 0


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_log_softmax_backward_matches_numpy_and_covers_torch(rng, dtype):
    x = _data(rng, 6, 48, dtype, std=2.0)
    g = _data(rng, 6, 48, dtype)
    x[0] = x[0, 0]  # an all-equal row
    g[0] = g[0, 0]  # with a constant gradient: grad_input is exactly 0 there
    gb = er.log_softmax(x, -1).backward(g)
    x64, g64 = x.astype(np.float64), g.astype(np.float64)
    y = np.exp(x64 - x64.max(-1, keepdims=True))
    y /= y.sum(-1, keepdims=True)
    want = g64 - y * g64.sum(-1, keepdims=True)
    got = np.asarray(gb.rounded).astype(np.float64)
    tol = 1e-6 if dtype == "float32" else 8e-3
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol)
    assert (got[0] == 0).all() and not np.signbit(got[0]).any()
    # planted bugs: the sum of grad dropped (g - y), the softmax taken as exp(x) unnormalised
    assert _outside(gb, (g64 - y).astype(np.float32).astype(DTYPES[dtype]), standard="any_order") > 0
    torch = pytest.importorskip("torch")
    tdt = {"float32": torch.float32, "bfloat16": torch.bfloat16}[dtype]
    xt = torch.from_numpy(x.astype(np.float32)).to(tdt).requires_grad_(True)
    torch.log_softmax(xt, -1).backward(torch.from_numpy(g.astype(np.float32)).to(tdt))
    # measured (torch 2.15): for bf16 the CPU kernel rounds its intermediate values to bf16 (with compute
    # f32 a few elements fall outside), so it is judged with compute bf16
    kw = {"standard": "any_order", "compute": None if dtype == "float32" else dtype}
    assert _outside(gb, xt.grad.float().numpy().astype(DTYPES[dtype]), **kw) == 0


def test_backward_exact_zeros(rng):
    # gradients whose exact backward is 0 everywhere: decided exactly (Lindemann-Weierstrass for the
    # softmax family, rational identities for the norms), +0, with a zero allowed range
    x = _data(rng, 4, 300, "float32")
    ones = np.ones_like(x)
    for gb in (er.softmax(x, -1).backward(ones), er.log_softmax(x, -1).backward(np.zeros_like(x)),
               er.layer_norm(x, (300,)).backward(ones)["grad_input"]):
        y = np.asarray(gb.rounded)
        assert (y == 0).all() and not np.signbit(y).any()
        assert _outside(gb, np.zeros_like(x), standard="any_order") == 0
