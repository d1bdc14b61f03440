"""test_ops.py: the operations beyond matmul (er.softmax, ...) as seed 002's Result, er.testing.assert_valid,
and real implementations as clients: torch's CPU softmax (and the other operations this build has) when
torch is importable (those tests skip cleanly otherwise), a float32 emulation in numpy always."""
import ml_dtypes
import numpy as np
import pytest

import exactref as er


def _torch():
    return pytest.importorskip("torch")


def _have(op):
    # every operation is in every build's table: a missing one is a failure, not a skip
    assert op in er.op_names(), f"{op} is not in this build's table of operations"


def _softmax64(x, axis):
    m = x.max(axis=axis, keepdims=True)
    e = np.exp(x - m)
    return e / e.sum(axis=axis, keepdims=True)


def _ulp_gap(a, b, dtype):
    """|a - b| in units of dtype's patterns (positive values)."""
    u = {1: np.uint8, 2: np.uint16, 4: np.uint32}[np.dtype(dtype).itemsize]
    return np.abs(np.asarray(a, dtype).view(u).astype(np.int64) - np.asarray(b, dtype).view(u).astype(np.int64))


def test_softmax_result_api(rng):
    x = (rng.standard_normal((3, 5, 40)) * 4).astype(np.float32)
    r = er.softmax(x, dim=1)
    assert r.op == "softmax" and r.guarantee == "correctly_rounded"
    assert r.shape == (3, 5, 40) and r.dtype == np.float32
    assert list(r.boundaries) == ["subtract", "exp", "sum", "divide", "out"]
    assert r.boundaries["sum"].kind == "accumulate"
    ref = _softmax64(x.astype(np.float64), 1)
    # rounded is the exact value rounded once: float64's softmax (error ~1e-16) rounds the same almost everywhere
    gap = _ulp_gap(r.rounded, ref.astype(np.float32), np.float32)
    assert gap.max() <= 1 and (gap == 0).mean() > 0.99
    ex = r.exact
    assert ex.shape == x.shape and (ex.lo <= ex.hi).all()
    assert np.abs(ex.odd - ref).max() <= 1e-12
    t_n = r.tolerance()
    t_a = r.tolerance(standard="any_order")
    assert t_n.shape == x.shape and (t_a >= t_n).all() and (t_n > 0).all()
    t_wide = r.tolerance(ulps=16)
    assert (t_wide >= r.tolerance(ulps=0)).all() and (t_wide > r.tolerance(ulps=0)).any()
    lo, hi = r.finite_range()
    assert (lo <= r.rounded).all() and (r.rounded <= hi).all()
    assert not r.may_be("nan").any() and not r.may_be("+inf").any()


def test_softmax_bf16_and_out_dtype(rng):
    x = er.asarray(rng.standard_normal((8, 64)) * 3, "bfloat16")
    r = er.softmax(x, dim=-1)
    assert r.dtype == ml_dtypes.bfloat16
    r32 = er.softmax(x, dim=-1, dtype="float32")
    assert r32.dtype == np.float32
    ref = _softmax64(np.asarray(x, np.float64), -1)
    assert _ulp_gap(r32.rounded, ref.astype(np.float32), np.float32).max() <= 1


def _emulate_f32(x, axis, order, rng):
    """softmax in float32: max, subtract, exp correctly rounded, a sum (index order or reversed pairs), divide."""
    x = x.astype(np.float32)
    m = x.max(axis=axis, keepdims=True)
    e = np.exp((x - m).astype(np.float64)).astype(np.float32)
    e = np.moveaxis(e, axis, -1)
    if order == "index":
        s = np.zeros(e.shape[:-1], np.float32)
        for j in range(e.shape[-1]):
            s = (s + e[..., j]).astype(np.float32)
    else:  # a random permutation, summed pairwise
        t = e[..., rng.permutation(e.shape[-1])]
        while t.shape[-1] > 1:
            if t.shape[-1] % 2:
                t = np.concatenate([t, np.zeros(t.shape[:-1] + (1,), np.float32)], axis=-1)
            t = (t[..., 0::2] + t[..., 1::2]).astype(np.float32)
        s = t[..., 0]
    y = (e / s[..., None]).astype(np.float32)
    return np.moveaxis(y, -1, axis)


def test_softmax_emulations_covered(rng):
    x = (rng.standard_normal((6, 7, 33)) * 5).astype(np.float32)
    for axis in (0, 1, 2):
        r = er.softmax(x, dim=axis)
        assert r.covers(_emulate_f32(x, axis, "index", rng)).all()
        assert r.covers(_emulate_f32(x, axis, "tree", rng), standard="any_order").all()


def test_assert_valid_message_and_wrong_axis(rng):
    x = (rng.standard_normal((8, 16)) * 2).astype(np.float32)
    r = er.softmax(x, dim=-1)
    good = _emulate_f32(x, 1, "index", rng)
    assert er.testing.assert_valid(r, good) is r
    # softmax over the wrong axis
    with pytest.raises(AssertionError) as e:
        er.testing.assert_valid(r, _emulate_f32(x, 0, "index", rng), standard="any_order")
    text = str(e.value)
    assert "softmax: the output is not one a correct implementation can produce" in text
    assert "Elements outside the bound" in text and "standard 'any_order'" in text
    # one element off by 1e-3 relative: caught, and msg= prefixes the message
    bad = good.copy()
    bad[3, 5] *= np.float32(1.001)
    with pytest.raises(AssertionError, match=r"kernel v2[\s\S]*1 / 128"):
        er.testing.assert_valid(r, bad, msg="kernel v2")
    with pytest.raises(TypeError):
        er.testing.assert_valid(np.zeros(3), good)


def test_bad_calls_refused():
    x = np.zeros((2, 3), np.float32)
    with pytest.raises(ValueError, match="unknown operation 'sofmax'"):
        er.op("sofmax", x)
    with pytest.raises(ValueError, match="dmi"):
        er.op("softmax", x, dmi=1)
    with pytest.raises(ValueError, match="dim=2"):
        er.softmax(x, dim=2)
    with pytest.raises(ValueError, match="dropout_p must be 0"):
        er.scaled_dot_product_attention(x, x, x, dropout_p=0.1)
    with pytest.raises(ValueError, match="approximate"):
        er.gelu(x, approximate="fast")
    r = er.softmax(x)
    with pytest.raises(ValueError, match="takes normal, any_order"):
        r.tolerance(standard="hopper")
    with pytest.raises(ValueError, match="ulps"):
        r.tolerance(ulps=-1)
    with pytest.raises(ValueError):
        r.covers(np.zeros((3, 2), np.float32))


def test_wrappers_route_to_the_table():
    """Every torch-named wrapper reaches the library: an operation this build lacks is named in the error."""
    x = np.zeros((2, 4), np.float32)
    calls = {
        "linear": lambda: er.linear(x, x), "add": lambda: er.add(x, x), "mul": lambda: er.mul(x, x),
        "relu": lambda: er.relu(x), "gelu": lambda: er.gelu(x), "silu": lambda: er.silu(x),
        "sigmoid": lambda: er.sigmoid(x), "tanh": lambda: er.tanh(x), "exp": lambda: er.exp(x),
        "log_softmax": lambda: er.log_softmax(x, 1), "logsumexp": lambda: er.logsumexp(x, 1),
        "layer_norm": lambda: er.layer_norm(x, (4,)), "rms_norm": lambda: er.rms_norm(x, [4]),
        "quantize": lambda: er.quantize_mx(x),
    }
    names = er.op_names()
    for name, call in calls.items():
        if name in names:
            continue
        with pytest.raises(ValueError, match=f"unknown operation '{name}'"):
            call()


# ---- real implementations: torch on CPU ----

@pytest.mark.parametrize("dtype", ["float32", "bfloat16", "float16"])
def test_torch_softmax_covered(rng, dtype):
    torch = _torch()
    tdt = getattr(torch, dtype)
    for shape, dim in (((4, 8, 128), -1), ((16, 1000), 1), ((32, 9), 0), ((2, 3, 4, 64), 2)):
        x = torch.from_numpy(rng.standard_normal(shape).astype(np.float32) * 6).to(tdt)
        r = er.softmax(x, dim=dim)
        y = torch.softmax(x, dim=dim)
        # torch's CPU kernel computes bfloat16 and float16 in float32 along the last dimension (and dim 2
        # of (2, 3, 4, 64)), but along dim 0 of (32, 9) in the input's own format: compute is then that
        # format (found by this test: under compute float32, 78 of 288 bfloat16 elements are 1 ulp outside)
        compute = dtype if dtype != "float32" and dim == 0 else None
        er.testing.assert_valid(r, y, standard="any_order", compute=compute)
        # a planted bug: the last element of each row dropped from the sum
        if dtype == "float32":
            xm = x.movedim(dim, -1)
            e = torch.exp(xm - xm.amax(-1, keepdim=True))
            wrong = (e / (e.sum(-1, keepdim=True) - e[..., -1:])).movedim(-1, dim).contiguous()
            assert not r.covers(wrong, standard="any_order").all()


def test_torch_log_softmax_covered(rng):
    torch = _torch()
    _have("log_softmax")
    x = torch.from_numpy(rng.standard_normal((8, 300)).astype(np.float32) * 4)
    er.testing.assert_valid(er.log_softmax(x, 1), torch.log_softmax(x, 1), standard="any_order")


@pytest.mark.parametrize("approximate", ["none", "tanh"])
def test_torch_gelu_covered_and_forms_told_apart(rng, approximate):
    torch = _torch()
    _have("gelu")
    x = torch.from_numpy(rng.standard_normal((64, 256)).astype(np.float32) * 3)
    y = torch.nn.functional.gelu(x, approximate=approximate)
    # torch's CPU gelu (erf form) evaluates erf with its vectorized polynomial, up to about 6 ulps from the
    # exact value near erf = -1 (found here: 515 of 65536 elements outside under the 2.5-ulp default; none
    # at 8), more than CUDA's erff: judged with ulps=8
    ulps = 8 if approximate == "none" else None
    er.testing.assert_valid(er.gelu(x, approximate=approximate), y, standard="any_order", ulps=ulps)
    other = "tanh" if approximate == "none" else "none"
    assert not er.gelu(x, approximate=other).covers(y, standard="any_order").all()


def test_torch_linear_gelu_epilogue(rng):
    torch = _torch()
    _have("linear")
    _have("gelu")
    x = torch.from_numpy(rng.standard_normal((16, 64)).astype(np.float32))
    w = torch.from_numpy(rng.standard_normal((32, 64)).astype(np.float32) / 8)
    b = torch.from_numpy(rng.standard_normal((32,)).astype(np.float32))
    lin = torch.nn.functional.linear(x, w, b)
    er.testing.assert_valid(er.linear(x, w, b), lin, standard="any_order")


def test_results_as_inputs_fused_epilogue(rng):
    """er.gelu(er.linear(x, w, b), approximate="tanh") judges a fused GEMM + bias + GELU kernel (numpy float32
    here: the products in index order, the bias last, torch's tanh formula), and the earlier result's
    tolerance widens the bounds."""
    _have("linear")
    _have("gelu")
    x = er.asarray(rng.standard_normal((16, 96)), "bfloat16")
    w = er.asarray(rng.standard_normal((40, 96)) / 6, "bfloat16")
    b = er.asarray(rng.standard_normal(40), "bfloat16")
    lin = er.linear(x, w, b, dtype="float32")
    g = er.gelu(lin, approximate="tanh")
    xf, wf, bf = (np.asarray(t, np.float32) for t in (x, w, b))
    acc = np.zeros((16, 40), np.float32)
    for p in range(96):
        acc = (acc + xf[:, p:p + 1] * wf[:, p][None, :]).astype(np.float32)
    acc = (acc + bf).astype(np.float32)
    inner = np.float32(0.7978845608) * (acc + np.float32(0.044715) * (acc * acc * acc))
    y = (np.float32(0.5) * acc * (np.float32(1) + np.tanh(inner.astype(np.float64)).astype(np.float32))).astype(np.float32)
    er.testing.assert_valid(g, y, standard="any_order")
    g0 = er.gelu(lin.rounded, approximate="tanh")
    assert (g.tolerance(standard="any_order") >= g0.tolerance(standard="any_order")).all()
    assert not er.gelu(lin, approximate="none").covers(y, standard="any_order").all()


def test_torch_linear_gelu_chain(rng):
    torch = _torch()
    _have("linear")
    x = torch.from_numpy(rng.standard_normal((32, 128)).astype(np.float32))
    w = torch.from_numpy((rng.standard_normal((64, 128)) / 10).astype(np.float32))
    b = torch.from_numpy(rng.standard_normal(64).astype(np.float32))
    y = torch.nn.functional.gelu(torch.nn.functional.linear(x, w, b), approximate="tanh")
    er.testing.assert_valid(er.gelu(er.linear(x, w, b), approximate="tanh"), y, standard="any_order")


def test_backward_routes_to_the_table(rng):
    """r.backward(grad) calls "<op>.backward" on the same inputs and options with grad last (h31norm's and
    attention's operations); an operation without one says so."""
    x = rng.standard_normal((3, 8)).astype(np.float32)
    g = rng.standard_normal((3, 8)).astype(np.float32)
    r = er.softmax(x, dim=1)
    if "softmax.backward" not in er.op_names():
        with pytest.raises(NotImplementedError, match="softmax.backward"):
            r.backward(g)
    else:
        b = r.backward(g)
        assert b.op == "softmax.backward"
    with pytest.raises(NotImplementedError, match="relu.backward"):
        er.relu(x).backward(g)
