"""test_torch.py: torch tensors through DLPack (runs where torch is installed, skips cleanly elsewhere).

Tensors are made from numpy / ml_dtypes bit patterns (torch.from_numpy(...).view(dtype)), so what the
package reads is compared bit for bit with an independent source, not with torch's own conversions."""
import warnings

import ml_dtypes
import numpy as np
import pytest

import exactref as er

torch = pytest.importorskip("torch")

UINT = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}
# torch dtype name -> (numpy / ml_dtypes dtype, a scale that keeps random values in range)
DTYPES = {
    "float64": (np.float64, 1.0), "float32": (np.float32, 1.0), "float16": (np.float16, 1.0),
    "bfloat16": (ml_dtypes.bfloat16, 1.0), "float8_e4m3fn": (ml_dtypes.float8_e4m3fn, 1.0),
    "float8_e5m2": (ml_dtypes.float8_e5m2, 1.0), "float8_e4m3fnuz": (ml_dtypes.float8_e4m3fnuz, 1.0),
    "float8_e5m2fnuz": (ml_dtypes.float8_e5m2fnuz, 1.0),
}
TORCH_INT_OF_WIDTH = {1: torch.uint8, 2: torch.int16, 4: torch.int32, 8: torch.int64}


def _tensor_of(arr):
    """A torch tensor holding exactly arr's bit patterns (and sharing its memory)."""
    dt = arr.dtype
    name = {np.dtype(v[0]): k for k, v in DTYPES.items()}.get(dt, None)
    if name is None:
        name = "float8_e8m0fnu" if dt == ml_dtypes.float8_e8m0fnu else dt.name
    bits = np.ascontiguousarray(arr).view(UINT[dt.itemsize])
    if dt.itemsize in (2, 4, 8):
        bits = bits.view({2: np.int16, 4: np.int32, 8: np.int64}[dt.itemsize])
    return torch.from_numpy(bits).view(getattr(torch, name))


def _bits(x):
    return np.asarray(x).view(UINT[np.asarray(x).dtype.itemsize])


@pytest.mark.parametrize("name", sorted(DTYPES))
def test_cpu_tensors_are_read_bit_for_bit_without_a_copy(name, rng):
    if not hasattr(torch, name):
        pytest.skip(f"this torch has no {name}")
    dt, scale = DTYPES[name]
    a = (rng.standard_normal((8, 16)) * scale).astype(dt)
    b = (rng.standard_normal((16, 4)) * scale).astype(dt)
    ta, tb = _tensor_of(a), _tensor_of(b)
    x = er.asarray(ta)
    assert x.dtype == np.dtype(dt)
    np.testing.assert_array_equal(_bits(x), _bits(a))
    assert np.shares_memory(_bits(x), ta.view(TORCH_INT_OF_WIDTH[ta.element_size()]).numpy())
    r = er.matmul(ta, tb, dtype="float32")
    ref = er.matmul(a, b, dtype="float32")
    np.testing.assert_array_equal(_bits(r.rounded), _bits(ref.rounded))


def test_e8m0_scales_from_torch(rng):
    if not hasattr(torch, "float8_e8m0fnu"):
        pytest.skip("this torch has no float8_e8m0fnu")
    a = rng.standard_normal((2, 64)).astype(ml_dtypes.float8_e4m3fn)
    b = rng.standard_normal((64, 3)).astype(ml_dtypes.float8_e4m3fn)
    sa = er.asarray(2.0 ** rng.integers(-3, 4, (2, 2)), "float8_e8m0fnu")
    sb = er.asarray(2.0 ** rng.integers(-3, 4, (2, 3)), "float8_e8m0fnu")
    r = er.mma_scaled(_tensor_of(a), _tensor_of(b), _tensor_of(sa), _tensor_of(sb))
    ref = er.mma_scaled(a, b, sa, sb)
    np.testing.assert_array_equal(_bits(r.rounded), _bits(ref.rounded))


def test_strided_transposed_offset_and_expanded_views(rng):
    big = rng.standard_normal((24, 30)).astype(ml_dtypes.bfloat16)
    t = _tensor_of(big)
    views = {
        "transposed": (t[:16, :8].t(), big[:16, :8].T),
        "strided": (t[::2, 1::3][:, :10], big[::2, 1::3][:, :10]),
        "offset": (t[3:13, 5:15], big[3:13, 5:15]),
        "expanded": (t[0:1, :10].expand(12, 10), np.broadcast_to(big[0:1, :10], (12, 10))),
    }
    for what, (tv, nv) in views.items():
        x = er.asarray(tv)
        np.testing.assert_array_equal(_bits(x), _bits(nv), err_msg=what)
        assert np.shares_memory(_bits(x), t.view(torch.int16).numpy()), what  # read in place, not copied
        k = tv.shape[1]
        bmat = rng.standard_normal((k, 5)).astype(ml_dtypes.bfloat16)
        r = er.matmul(tv, _tensor_of(bmat), dtype="float32")
        ref = er.matmul(np.ascontiguousarray(nv), bmat, dtype="float32")
        np.testing.assert_array_equal(_bits(r.rounded), _bits(ref.rounded), err_msg=what)


def test_requires_grad_tensors_and_parameters(rng):
    a = torch.from_numpy(rng.standard_normal((6, 9)).astype(np.float32)).requires_grad_()
    b = torch.nn.Parameter(torch.from_numpy(rng.standard_normal((9, 4)).astype(np.float32)))
    out = a @ b  # has a grad_fn
    r = er.matmul(a, b)
    ref = er.matmul(a.detach().numpy(), b.detach().numpy())
    np.testing.assert_array_equal(_bits(r.rounded), _bits(ref.rounded))
    assert r.covers(out, standard="any_order").all()
    er.testing.assert_matmul_valid(a, b, out, standard="any_order")
    assert a.grad is None and b.grad is None and a.requires_grad  # nothing of autograd was touched


def _beyond(out, high):
    """out with element [0, 0] moved to the next value above high (the largest allowed), as torch."""
    h = torch.from_numpy(np.array([high]).astype(np.float64)).to(out.dtype)
    width = out.element_size()
    ib = h.view(TORCH_INT_OF_WIDTH[width])
    # sign-magnitude: the next value up has the magnitude's bits one higher if positive, one lower if negative
    ib = ib + 1 if float(h[0]) >= 0 else ib - 1
    bad = out.clone()
    bad[0, 0] = ib.view(out.dtype)[0]
    return bad


@pytest.mark.parametrize("dtype", ["bfloat16", "float16", "float32"])
@pytest.mark.parametrize("shape", [(1, 1, 1), (7, 33, 5), (64, 64, 64), (33, 4096, 17), (8, 16384, 3)])
def test_torch_matmul_outputs_are_covered_by_any_order(dtype, shape, rng):
    # whatever kernel torch picks on the CPU (blocked sums, FMA or not), any_order admits it if it sums
    # in float32 or wider and rounds once (docs/proofs/any-order.md); this is what it produced here
    m, k, n = shape
    td = getattr(torch, dtype)
    a = torch.from_numpy(rng.standard_normal((m, k))).to(td)
    b = torch.from_numpy(rng.standard_normal((k, n))).to(td)
    out = torch.matmul(a, b)
    r = er.matmul(a, b)
    assert r.rounded.dtype == np.dtype(DTYPES[dtype][0])
    covered = r.covers(out, standard="any_order")
    assert covered.all(), f"{int((~covered).sum())} of {covered.size} torch outputs outside any_order"
    er.testing.assert_matmul_valid(a, b, out, standard="any_order")
    # the check can fail: one element just above the highest allowed value is refused, and named
    _, high = r.finite_range(standard="any_order")
    bad = _beyond(out, float(np.asarray(high)[0, 0].astype(np.float64)))
    c2 = r.covers(bad, standard="any_order")
    assert not c2[0, 0] and c2.sum() == c2.size - 1
    with pytest.raises(AssertionError, match=r"1 / %d .*\n.*index \(0, 0\)" % (m * n)):
        er.testing.assert_matmul_valid(a, b, bad, standard="any_order")


def test_batched_torch_matmul_is_covered(rng):
    a = torch.from_numpy(rng.standard_normal((4, 16, 300))).to(torch.bfloat16)
    b = torch.from_numpy(rng.standard_normal((300, 8))).to(torch.bfloat16)
    b3 = torch.from_numpy(rng.standard_normal((4, 300, 8))).to(torch.bfloat16)
    for x, y, out in ((a, b, torch.matmul(a, b)), (a, b3, torch.bmm(a, b3))):
        r = er.matmul(x, y)
        assert r.shape == (4, 16, 8) and r.covers(out, standard="any_order").all()
        for q in range(4):  # each batch is its own 2-D product
            yq = y if y.ndim == 2 else y[q]
            np.testing.assert_array_equal(_bits(r.rounded[q]), _bits(er.matmul(x[q], yq).rounded))


def test_16_bit_inputs_with_a_float32_output(rng):
    a = torch.from_numpy(rng.standard_normal((16, 512))).to(torch.bfloat16)
    b = torch.from_numpy(rng.standard_normal((512, 8))).to(torch.bfloat16)
    out = torch.matmul(a.float(), b.float())  # the exact products of bf16 values, summed in f32
    r = er.matmul(a, b, dtype="float32")
    assert r.covers(out, standard="any_order").all()
    assert r.tolerance(standard="any_order").max() > 0


def test_int8_and_uint8_tensors_and_raw_bits(rng):
    a = torch.from_numpy(rng.integers(-128, 128, (5, 40)).astype(np.int8))
    b = torch.from_numpy(rng.integers(-128, 128, (40, 3)).astype(np.int8))
    r = er.mmai(a, b)
    want = a.numpy().astype(np.int64) @ b.numpy().astype(np.int64)
    assert r.rounded.dtype == np.int32 and (r.rounded.astype(np.int64) == want).all()
    assert r.covers(torch.from_numpy(want.astype(np.int32))).all()
    u = torch.from_numpy(rng.integers(0, 256, (3, 7)).astype(np.uint8))
    ru = er.mmai(u, u.t())
    assert (ru.rounded.astype(np.int64) == u.numpy().astype(np.int64) @ u.numpy().T.astype(np.int64)).all()
    # an fp8 tensor's bits as a uint8 view, with the format named
    f8 = rng.standard_normal((4, 4)).astype(ml_dtypes.float8_e4m3fn)
    x = er.asarray(torch.from_numpy(f8.view(np.uint8)), "float8_e4m3fn")
    assert x.dtype == ml_dtypes.float8_e4m3fn and (_bits(x) == _bits(f8)).all()


def test_backward_with_a_torch_gradient(rng):
    a = rng.standard_normal((5, 7)).astype(ml_dtypes.bfloat16)
    b = rng.standard_normal((7, 3)).astype(ml_dtypes.bfloat16)
    grad = rng.standard_normal((5, 3)).astype(ml_dtypes.bfloat16)
    r = er.matmul(_tensor_of(a), _tensor_of(b))
    g = r.backward(_tensor_of(grad))
    np.testing.assert_array_equal(_bits(g.rounded.grad_A), _bits(er.matmul(grad, b.T).rounded))
    np.testing.assert_array_equal(_bits(g.rounded.grad_B), _bits(er.matmul(a.T, grad).rounded))


def test_packed_fp4_is_refused_with_a_clear_message():
    if not hasattr(torch, "float4_e2m1fn_x2"):
        pytest.skip("this torch has no float4_e2m1fn_x2")
    t = torch.zeros(2, 2, dtype=torch.uint8).view(torch.float4_e2m1fn_x2)
    with pytest.raises(TypeError, match="two fp4 values"):
        er.asarray(t)
    with pytest.raises(TypeError, match="^A: .*two fp4 values"):
        er.matmul(t, t)


def test_unmodelled_torch_dtypes_name_the_operand():
    with pytest.raises(TypeError, match="^B: dtype bool"):
        er.matmul(torch.ones(2, 2), torch.ones(2, 2, dtype=torch.bool))
    with pytest.raises(TypeError, match="^out: "):
        er.testing.assert_matmul_valid(torch.ones(2, 2), torch.ones(2, 2), torch.ones(2, 2, dtype=torch.complex64))
    with pytest.raises(TypeError, match="sparse|layout"):
        er.asarray(torch.ones(2, 2).to_sparse())


@pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device")
def test_cuda_tensors_are_copied_once_with_a_warning(rng):
    a = rng.standard_normal((16, 32)).astype(ml_dtypes.bfloat16)
    b = rng.standard_normal((32, 8)).astype(ml_dtypes.bfloat16)
    ta, tb = _tensor_of(a).cuda(), _tensor_of(b).cuda()
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        r = er.matmul(ta, tb, dtype="float32")
    msgs = [x for x in w if issubclass(x.category, RuntimeWarning) and "copied to the host" in str(x.message)]
    assert len(msgs) == 2 and all(x.filename == __file__ for x in msgs)
    np.testing.assert_array_equal(_bits(r.rounded), _bits(er.matmul(a, b, dtype="float32").rounded))
    out = torch.matmul(ta.float(), tb.float())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        assert r.covers(out, standard="any_order").all()


def test_torch_route_keeps_memory_and_references_flat():
    import gc
    import sys

    a = torch.arange(12, dtype=torch.float32).reshape(3, 4).div(7).to(torch.bfloat16).requires_grad_()
    b = torch.arange(8, dtype=torch.float32).reshape(4, 2).div(3).to(torch.bfloat16)
    out = torch.matmul(a.detach(), b)
    refs = (sys.getrefcount(a), sys.getrefcount(b), sys.getrefcount(out))

    def rss_kib():
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * 4

    def once():
        r = er.matmul(a, b.t().contiguous().t())
        r.covers(out, standard="any_order")
        er.asarray(b)

    for _ in range(300):
        once()
    gc.collect()
    before = rss_kib()
    for _ in range(10000):
        once()
    gc.collect()
    grown = rss_kib() - before
    assert (sys.getrefcount(a), sys.getrefcount(b), sys.getrefcount(out)) == refs  # no DLPack capsule kept
    assert grown < 4096, f"RSS grew by {grown} KiB over 10,000 calls"


# ---- torch's habits (issue 30, item 3): dtypes, bias shapes, N-D batches, saturation, tensors out ----

def test_torch_dtypes_are_taken_wherever_a_dtype_is(rng):
    a = _tensor_of(rng.standard_normal((4, 32)).astype(ml_dtypes.bfloat16))
    b = _tensor_of(rng.standard_normal((32, 3)).astype(ml_dtypes.bfloat16))
    r = er.matmul(a, b, dtype=torch.float32)
    assert r.rounded.dtype == np.float32
    assert (_bits(r.rounded) == _bits(er.matmul(a, b, dtype="float32").rounded)).all()
    assert er.matmul(a, b, dtype=torch.bfloat16).rounded.dtype == ml_dtypes.bfloat16
    assert er.mma(a, b, np.zeros((4, 3), np.float32), dtype=torch.float16).rounded.dtype == np.float16
    assert np.array_equal(r.tolerance(compute=torch.float32), r.tolerance(compute="f32"))
    assert er.asarray([[1.5]], torch.float8_e4m3fn).dtype == ml_dtypes.float8_e4m3fn
    assert er.dtype_of(torch.float8_e8m0fnu) == ml_dtypes.float8_e8m0fnu
    sa = np.ones((4, 1), np.uint8) * 127  # e8m0 patterns of 1.0
    sb = np.ones((1, 3), np.uint8) * 127
    a8, b8 = a.to(torch.float8_e4m3fn), b.to(torch.float8_e4m3fn)
    rs = er.mma_scaled(a8, b8, sa, sb, scale_dtype=torch.float8_e8m0fnu, dtype=torch.float32)
    assert (_bits(rs.rounded) == _bits(er.matmul(a8, b8, dtype="float32").rounded)).all()
    er.testing.assert_matmul_valid(a, b, torch.matmul(a.float(), b.float()), dtype=torch.float32, standard="any_order")
    with pytest.raises(TypeError, match="complex64 is not a format exactref models"):
        er.matmul(a, b, dtype=torch.complex64)


@pytest.mark.parametrize("shape", [(7,), (1, 7), (5, 1), ()])
def test_torch_bias_shapes(shape, rng):
    a = torch.randn(5, 64, generator=torch.Generator().manual_seed(1)).to(torch.bfloat16)
    b = torch.randn(64, 7, generator=torch.Generator().manual_seed(2)).to(torch.bfloat16)
    bias = torch.randn(shape, generator=torch.Generator().manual_seed(3))
    out = torch.addmm(bias, a.float(), b.float()) if len(shape) else a.float() @ b.float() + bias
    r = er.testing.assert_matmul_valid(a, b, out, c=bias, standard="any_order")
    assert r.shape == (5, 7)
    full = bias.expand(5, 7)
    assert (_bits(r.rounded) == _bits(er.mma(a, b, full.contiguous(), dtype="float32").rounded)).all()
    # one element moved one ulp beyond its range is caught, at its index
    bad = out.clone()
    hi = r.finite_range(standard="any_order")[1]
    bad[2, 3] = float(np.nextafter(np.float32(hi[2, 3]), np.float32(np.inf)))
    with pytest.raises(AssertionError, match=r"index \(2, 3\)"):
        er.testing.assert_matmul_valid(a, b, bad, c=bias, standard="any_order")


def test_torch_4d_attention_shapes_are_covered(rng):
    g = torch.Generator().manual_seed(4)
    q = torch.randn(2, 3, 16, 64, generator=g).to(torch.bfloat16)
    k = torch.randn(2, 3, 16, 64, generator=g).to(torch.bfloat16)
    s = torch.matmul(q, k.transpose(-1, -2))  # (B, H, L, L) in bf16
    r = er.testing.assert_matmul_valid(q, k.transpose(-1, -2), s, standard="any_order")
    assert r.shape == (2, 3, 16, 16)
    kv = torch.randn(2, 1, 64, 16, generator=g).to(torch.bfloat16)  # broadcast over heads
    er.testing.assert_matmul_valid(q, kv, torch.matmul(q, kv), standard="any_order")
    v = torch.randn(64, generator=g).to(torch.bfloat16)  # a vector: torch drops the dimension
    out = torch.matmul(q, v)
    assert er.testing.assert_matmul_valid(q, v, out, standard="any_order").shape == tuple(out.shape)


def test_torch_saturating_fp8_cast_has_no_false_alarm(rng):
    g = torch.Generator().manual_seed(5)
    a = (torch.randn(16, 32, generator=g) * 12).to(torch.float8_e4m3fn)
    b = (torch.randn(32, 16, generator=g) * 12).to(torch.float8_e4m3fn)
    acc = torch.matmul(a.float(), b.float())
    assert (acc.abs() > 464).sum() > 0  # the premise: some elements overflow e4m3fn
    out = acc.to(torch.float8_e4m3fn)  # torch's CPU cast saturates
    er.testing.assert_matmul_valid(a, b, out, saturate=True, standard="any_order")
    with pytest.raises(AssertionError, match="outside the bound"):
        er.testing.assert_matmul_valid(a, b, out, standard="any_order")


@pytest.mark.parametrize("dtype", ["bfloat16", "float8_e4m3fn", "float8_e5m2", "float32"])
def test_results_become_torch_tensors_without_a_copy(dtype, rng):
    a = rng.standard_normal((6, 16)).astype(ml_dtypes.bfloat16)
    b = rng.standard_normal((16, 5)).astype(ml_dtypes.bfloat16)
    r = er.matmul(a, b, dtype=dtype)
    t = torch.from_dlpack(r.rounded)
    assert t.dtype == getattr(torch, dtype) and tuple(t.shape) == r.shape
    assert t.data_ptr() == r.rounded.ctypes.data  # the same memory
    w = t.element_size()
    assert (t.view(TORCH_INT_OF_WIDTH[w]).numpy().view(UINT[w]) == _bits(r.rounded)).all()
    lo, hi = r.finite_range()
    assert torch.from_dlpack(hi).dtype == t.dtype and torch.from_dlpack(r.tolerance()).dtype == torch.float64
    tt = torch.from_dlpack(r.rounded.T)  # strides travel
    assert tt.stride() == (1, 5) and torch.equal(tt.view(TORCH_INT_OF_WIDTH[w]), t.view(TORCH_INT_OF_WIDTH[w]).T)
    # the documented from_numpy recipe: an integer view of the same bits, then torch's view as the dtype
    if w == 2 and dtype != "float32":
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)  # torch: "the given NumPy array is not writable"
            u = torch.from_numpy(r.rounded.view(np.int16)).view(getattr(torch, dtype))
        assert u.data_ptr() == t.data_ptr() and torch.equal(u.view(torch.int16), t.view(torch.int16))
    del t, tt
    import gc

    gc.collect()
    assert (_bits(r.rounded) == _bits(er.matmul(a, b, dtype=dtype).rounded)).all()  # still alive and intact


def test_f32_scalar_scales_from_torch_are_taken(rng):
    g = torch.Generator().manual_seed(6)
    a = (torch.randn(4, 32, generator=g) * 4).to(torch.float8_e4m3fn)
    b = (torch.randn(32, 5, generator=g) * 4).to(torch.float8_e4m3fn)
    sa, sb = torch.tensor(.37), torch.tensor(1.9)  # float32 scalars, as torch._scaled_mm takes them
    r = er.mma_scaled(a, b, sa, sb)
    # the same exact value through the per-row / per-column route, and through scaled float64 operands
    r2 = er.mma_scaled(a, b, sa.expand(4).clone(), sb.expand(5).clone())
    assert (_bits(r.rounded) == _bits(r2.rounded)).all()
    a64 = a.double() * float(sa)  # exact: 4 + 24 significant bits
    b64 = b.double() * float(sb)
    assert (_bits(r.rounded) == _bits(er.matmul(a64.numpy(), b64.numpy(), dtype="float32").rounded)).all()
    # the check of such a kernel: torch's CPU _scaled_mm scales the operands before the sum (order=before)
    if hasattr(torch, "_scaled_mm"):
        out = torch._scaled_mm(a, b.t().contiguous().t(), scale_a=sa, scale_b=sb, out_dtype=torch.float32)
        er.testing.assert_matmul_valid(a, b, out, scales=(sa, sb), standard="scaled:bk=128,order=before")
    with pytest.raises(AssertionError, match="outside"):
        er.testing.assert_matmul_valid(a, b, torch.zeros(4, 5), scales=(sa, sb))
