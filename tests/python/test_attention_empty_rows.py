"""test_attention_empty_rows.py: attention rows no key takes part in: exactly what correct kernels store (out +-0 or NaN, lse +-inf, +-0 or NaN) is allowed, planted garbage is caught, other rows are unchanged, and the backward gives dq 0 and nothing to dk, dv."""
import os

import numpy as np
import pytest

ml_dtypes = pytest.importorskip("ml_dtypes")
import exactref as er  # noqa: E402

SEED = int(os.environ.get("EXACTREF_SEED", "3131"))
print(f"test_attention_empty_rows: seed {SEED} (EXACTREF_SEED)")

STANDARDS = ("normal", "any_order", "flash", "flash:block=4", "flash:block=2,p=compute")
EMPTY = 2  # the query row no key takes part in


def rng(k=0):
    return np.random.default_rng(SEED * 1000 + k)


def inputs(g, Sq=6, Sk=5, D=8, dtype="float32", H=2):
    dt = np.dtype(getattr(ml_dtypes, dtype, dtype))
    q = g.standard_normal((1, H, Sq, D)).astype(np.float32).astype(dt)
    k = g.standard_normal((1, H, Sk, D)).astype(np.float32).astype(dt)
    v = g.standard_normal((1, H, Sk, D)).astype(np.float32).astype(dt)
    return q, k, v


def bool_mask(g, Sq, Sk, empty=(EMPTY,)):
    m = g.random((Sq, Sk)) < 0.7
    m[:, 0] = True
    for i in empty:
        m[i] = False
    return m


def bits(a):
    a = np.ascontiguousarray(np.asarray(a))
    return a.view({2: np.uint16, 4: np.uint32}[a.dtype.itemsize])


def all_covered(r, out, lse, standard="any_order"):
    return bool(np.asarray(r["out"].covers(out, standard=standard)).all()) and bool(
        np.asarray(r["lse"].covers(lse, standard=standard)).all())


def empty_row_covered(r, out, lse, standard):
    """out's and lse's row EMPTY covered, and every other row judged as the reference itself is (with a
    declared block and P in bf16 the exact value's rounding need not be reachable)."""
    ref_o, ref_l = np.asarray(r["out"].rounded), np.asarray(r["lse"].rounded)
    co, cl = np.asarray(r["out"].covers(out, standard=standard)), np.asarray(r["lse"].covers(lse, standard=standard))
    bo = np.asarray(r["out"].covers(with_row(ref_o, EMPTY, 0.0), standard=standard))
    bl = np.asarray(r["lse"].covers(ref_l, standard=standard))
    keep = [i for i in range(co.shape[-2]) if i != EMPTY]
    assert np.array_equal(co[..., keep, :], bo[..., keep, :]) and np.array_equal(cl[..., keep], bl[..., keep])
    return bool(co[..., EMPTY, :].all()) and bool(cl[..., EMPTY].all())


def with_row(a, row, value):
    a = np.array(a, copy=True)
    a[..., row, :] = value
    return a


def with_lse(a, row, value):
    a = np.array(a, copy=True)
    a[..., row] = value
    return a


# ---- what the reference says there ----

def test_reference_and_may_be():
    g = rng(1)
    q, k, v = inputs(g)
    r = er.scaled_dot_product_attention(q, k, v, attn_mask=bool_mask(g, 6, 5))
    out, lse = np.asarray(r["out"].rounded), np.asarray(r["lse"].rounded)
    assert np.isnan(out[:, :, EMPTY]).all() and (lse[:, :, EMPTY] == -np.inf).all()
    keep = [i for i in range(6) if i != EMPTY]
    assert np.isfinite(out[:, :, keep]).all() and np.isfinite(lse[:, :, keep]).all()
    for std in STANDARDS:
        nan = np.asarray(r["out"].may_be("nan", standard=std))
        assert nan[:, :, EMPTY].all() and not nan[:, :, keep].any(), std
        assert not np.asarray(r["out"].may_be("+inf", standard=std)).any(), std
        assert not np.asarray(r["out"].may_be("-inf", standard=std)).any(), std
        for kind in ("nan", "+inf", "-inf"):
            mb = np.asarray(r["lse"].may_be(kind, standard=std))
            assert mb[:, :, EMPTY].all() and not mb[:, :, keep].any(), (std, kind)
        # the reference itself is covered
        assert all_covered(r, out, lse, std), std


# ---- the conventions of real kernels: allowed ----

@pytest.mark.parametrize("dtype", ["float32", "bfloat16", "float16"])
def test_kernel_conventions_covered(dtype):
    g = rng(2)
    q, k, v = inputs(g, dtype=dtype)
    r = er.scaled_dot_product_attention(q, k, v, attn_mask=bool_mask(g, 6, 5))
    out, lse = np.asarray(r["out"].rounded), np.asarray(r["lse"].rounded)
    conventions = {
        "FlashAttention (0, +inf)": (0.0, np.inf),
        "FlashAttention split-KV (0, -inf)": (0.0, -np.inf),
        "torch CPU flash (0, 0)": (0.0, 0.0),
        "older math path (NaN, NaN)": (np.nan, np.nan),
        "negative zero (-0, -0)": (-0.0, -0.0),
    }
    for std in STANDARDS:
        for name, (o, l) in conventions.items():
            assert empty_row_covered(r, with_row(out, EMPTY, o), with_lse(lse, EMPTY, l), std), (std, name)


# ---- planted garbage in such a row: caught ----

@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_garbage_caught(dtype):
    g = rng(3)
    q, k, v = inputs(g, dtype=dtype)
    r = er.scaled_dot_product_attention(q, k, v, attn_mask=bool_mask(g, 6, 5))
    out, lse = np.asarray(r["out"].rounded), np.asarray(r["lse"].rounded)
    ok_lse = with_lse(lse, EMPTY, np.inf)
    tiny = float(np.finfo(out.dtype).smallest_subnormal)
    for std in STANDARDS:
        base_o = np.asarray(r["out"].covers(with_row(out, EMPTY, 0.0), standard=std))
        base_l = np.asarray(r["lse"].covers(ok_lse, standard=std))
        assert base_o[..., EMPTY, :].all() and base_l[..., EMPTY].all(), std
        for bad in (5.0, 1e30, -7.0, np.inf, -np.inf, tiny, -1e-3):
            o = with_row(out, EMPTY, 0.0)
            o[0, 1, EMPTY, 3] = bad  # one element of one head
            cov = np.asarray(r["out"].covers(o, standard=std))
            assert int((cov != base_o).sum()) == 1 and not cov[0, 1, EMPTY, 3], (std, bad)
        for bad in (5.0, 1e30, -7.0, 1.0):
            lb = with_lse(ok_lse, EMPTY, bad)
            cov = np.asarray(r["lse"].covers(lb, standard=std))
            assert int((cov != base_l).sum()) == 2 and not cov[:, :, EMPTY].any(), (std, bad)
    # uninitialized memory: random bit patterns that are not +-0 or NaN
    gb = rng(4)
    o = with_row(out, EMPTY, 0.0)
    raw = bits(o)
    pat = gb.integers(1, 1 << (8 * o.dtype.itemsize), size=raw[..., EMPTY, :].shape, dtype=np.uint64)
    raw[..., EMPTY, :] = pat.astype(raw.dtype)
    vals = np.asarray(o[..., EMPTY, :]).astype(np.float64)
    allowed = np.isnan(vals) | (vals == 0)
    cov = np.asarray(r["out"].covers(o))
    assert np.array_equal(cov[..., EMPTY, :], allowed)


# ---- the rows with keys: unchanged ----

def test_other_rows_unchanged():
    g = rng(5)
    q, k, v = inputs(g, Sq=7, Sk=6, dtype="bfloat16")
    m = bool_mask(g, 7, 6, empty=(EMPTY,))
    keep = [i for i in range(7) if i != EMPTY]
    r = er.scaled_dot_product_attention(q, k, v, attn_mask=m)
    s = er.scaled_dot_product_attention(np.ascontiguousarray(q[:, :, keep]), k, v, attn_mask=m[keep])
    for name in ("out", "lse"):
        assert np.array_equal(bits(np.asarray(r[name].rounded)[:, :, keep]), bits(s[name].rounded)), name
        for std in STANDARDS:
            tr = np.asarray(r[name].tolerance(standard=std))[:, :, keep]
            ts = np.asarray(s[name].tolerance(standard=std))
            assert np.array_equal(tr, ts), (name, std)
    # the largest allowed value of a row with keys is covered, the next bf16 value above it is not
    hi = np.asarray(r["out"].finite_range(standard="any_order")[1])
    full = with_row(np.asarray(r["out"].rounded), EMPTY, 0.0)
    full[0, 0, 0, 0] = hi[0, 0, 0, 0]
    assert np.asarray(r["out"].covers(full, standard="any_order")).all()
    full[0, 0, 0, 0] = (bits(hi)[0, 0, 0, 0] + (1 if hi[0, 0, 0, 0] > 0 else -1)).astype(np.uint16).view(hi.dtype)
    assert int((~np.asarray(r["out"].covers(full, standard="any_order"))).sum()) == 1


def test_sk_zero():
    g = rng(6)
    q, k, v = inputs(g, Sq=3, Sk=0)
    r = er.scaled_dot_product_attention(q, k, v)
    assert np.isnan(np.asarray(r["out"].rounded)).all()
    z = np.zeros(q.shape, np.float32)
    assert all_covered(r, z, np.full(q.shape[:3], np.inf, np.float32))
    assert not np.asarray(r["out"].covers(z + 5)).any()
    # the backward: dq exactly 0 (a subnormal is caught), dk and dv empty
    b = r.backward(np.ones(q.shape, np.float32))
    assert not np.asarray(b["dq"].rounded).any() and b["dk"].shape == (1, 2, 0, 8)
    assert np.asarray(b["dq"].covers(z)).all() and not np.asarray(b["dq"].covers(z + np.float32(1e-40))).any()


def test_float_mask_of_minus_inf_and_bottom_right_causal():
    g = rng(7)
    q, k, v = inputs(g, Sq=6, Sk=4)
    fm = np.zeros((6, 4), np.float32)
    fm[EMPTY] = -np.inf
    r = er.scaled_dot_product_attention(q, k, v, attn_mask=fm)
    assert np.isnan(np.asarray(r["out"].rounded)[:, :, EMPTY]).all()
    # bottom-right causal alignment with Sq > Sk: rows 0 and 1 see no key
    br = np.tril(np.ones((6, 4), bool), k=4 - 6)
    r2 = er.scaled_dot_product_attention(q, k, v, attn_mask=br)
    o = np.asarray(r2["out"].rounded)
    assert np.isnan(o[:, :, :2]).all() and np.isfinite(o[:, :, 2:]).all()
    o = with_row(o, 0, 0.0)
    o = with_row(o, 1, 0.0)
    assert np.asarray(r2["out"].covers(o)).all()
    o[0, 0, 1, 0] = 1e30
    assert int((~np.asarray(r2["out"].covers(o))).sum()) == 1


# ---- the backward ----

def test_backward_empty_row():
    g = rng(8)
    q, k, v = inputs(g, Sq=6, Sk=5)
    do = g.standard_normal(q.shape).astype(np.float32)
    m = bool_mask(g, 6, 5)
    keep = [i for i in range(6) if i != EMPTY]
    b = er.scaled_dot_product_attention(q, k, v, attn_mask=m).backward(do)
    dq = np.asarray(b["dq"].rounded)
    assert not dq[:, :, EMPTY].any()
    assert (np.asarray(b["dq"].exact.lo)[:, :, EMPTY] == 0).all() and (np.asarray(b["dq"].exact.hi)[:, :, EMPTY] == 0).all()
    # the problem without that row: the same dk, dv and other dq, bit for bit
    s = er.scaled_dot_product_attention(np.ascontiguousarray(q[:, :, keep]), k, v, attn_mask=m[keep]).backward(
        np.ascontiguousarray(do[:, :, keep]))
    assert np.array_equal(bits(dq[:, :, keep]), bits(s["dq"].rounded))
    for name in ("dk", "dv"):
        assert np.array_equal(bits(b[name].rounded), bits(s[name].rounded)), name
    for std in ("any_order", "flash", "flash:block=2"):
        # dq there: exactly +-0 allowed, anything else caught
        cov = np.asarray(b["dq"].covers(with_row(dq, EMPTY, -0.0), standard=std))
        assert cov.all(), std
        bad = np.array(dq, copy=True)
        bad[0, 0, EMPTY, 0] = np.float32(1e-30)
        assert int((~np.asarray(b["dq"].covers(bad, standard=std))).sum()) == 1, std
        for name in ("dk", "dv"):
            # the same bounds: the empty row adds no term to the sums
            tb, ts = np.asarray(b[name].tolerance(standard=std)), np.asarray(s[name].tolerance(standard=std))
            assert np.array_equal(tb, ts), (name, std, float(np.max(tb / ts)))


# ---- torch's kernels as clients (skip without torch) ----

torch = None
try:
    import torch  # noqa: F811
except ImportError:
    pass


@pytest.mark.skipif(torch is None, reason="torch is not installed")
@pytest.mark.parametrize("dtype", ["float32", "bfloat16", "float16"])
def test_torch_covered(dtype):
    from torch.nn.attention import SDPBackend, sdpa_kernel
    g = rng(9)
    q, k, v = inputs(g, dtype=dtype)
    tdt = getattr(torch, dtype)
    tq, tk, tv = (torch.from_numpy(np.asarray(x).astype(np.float32)).to(tdt) for x in (q, k, v))
    bm = bool_mask(g, 6, 5)
    fm = np.where(bm, 0.0, -np.inf).astype(np.float32)
    std = "any_order" if dtype == "float32" else "flash"
    kw = {} if dtype == "float32" else {"compute": "float32", "ulps": 1024}
    cases = [("bool", torch.from_numpy(bm), bm), ("float -inf", torch.from_numpy(fm).to(tdt), fm)]
    for name, tm, em in cases:
        r = er.scaled_dot_product_attention(tq, tk, tv, attn_mask=tm)
        for backend in (SDPBackend.MATH, SDPBackend.FLASH_ATTENTION):
            try:
                with sdpa_kernel(backend):
                    out = torch.nn.functional.scaled_dot_product_attention(tq, tk, tv, attn_mask=tm)
            except RuntimeError as e:
                pytest.skip(f"torch's {backend} kernel refused: {e}")
            o = out.float().numpy()
            assert (o[:, :, EMPTY] == 0).all() or np.isnan(o[:, :, EMPTY]).all(), (name, backend)
            cov = np.asarray(r["out"].covers(out, standard=std, **kw))
            assert cov[:, :, EMPTY].all(), (name, backend)
        # torch's CPU flash kernel with its lse (it stores lse 0 in such rows)
        if hasattr(torch.ops.aten, "_scaled_dot_product_flash_attention_for_cpu"):
            fo, fl = torch.ops.aten._scaled_dot_product_flash_attention_for_cpu(
                tq, tk, tv, 0.0, False, attn_mask=torch.from_numpy(fm).to(tdt))[:2]
            assert np.asarray(r["out"].covers(fo, standard=std, **kw))[:, :, EMPTY].all(), name
            lcov = np.asarray(r["lse"].covers(fl.float(), standard=std, **kw))
            assert lcov[:, :, EMPTY].all(), (name, fl[:, :, EMPTY])
    # Sk = 0: torch returns zeros
    r0 = er.scaled_dot_product_attention(tq, tk[:, :, :0], tv[:, :, :0])
    out0 = torch.nn.functional.scaled_dot_product_attention(tq, tk[:, :, :0], tv[:, :, :0])
    assert np.asarray(r0["out"].covers(out0)).all()


@pytest.mark.skipif(torch is None, reason="torch is not installed")
def test_torch_autograd_empty_row():
    g = rng(10)
    q, k, v = inputs(g, Sq=6, Sk=5)
    do = g.standard_normal(q.shape).astype(np.float32)
    bm = bool_mask(g, 6, 5)
    tq, tk, tv = (torch.from_numpy(x).requires_grad_() for x in (q, k, v))
    with torch.nn.attention.sdpa_kernel(torch.nn.attention.SDPBackend.MATH):
        torch.nn.functional.scaled_dot_product_attention(tq, tk, tv, attn_mask=torch.from_numpy(bm)).backward(
            torch.from_numpy(do))
    assert not tq.grad[:, :, EMPTY].any()
    b = er.scaled_dot_product_attention(q, k, v, attn_mask=bm).backward(do)
    for name, t in (("dq", tq), ("dk", tk), ("dv", tv)):
        assert np.asarray(b[name].covers(t.grad.numpy(), standard="any_order")).all(), name
