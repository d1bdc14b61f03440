"""test_parity.py: the package at parity with the command and with torch's habits (issue 30, item 3),
checked with numpy / ml_dtypes alone: saturate=, ulps=, bias shapes, N-D batches, tolerance 0, the
failure message and DLPack export (torch's side is in test_torch.py)."""
import ctypes
import os
import subprocess
import sys
import warnings
from fractions import Fraction

import ml_dtypes
import numpy as np
import pytest

import exactref as er

from conftest import assert_correctly_rounded, exact_product

F8 = ml_dtypes.float8_e4m3fn
BF16 = ml_dtypes.bfloat16
REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _bits(x):
    x = np.asarray(x)
    return x.view({1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[x.dtype.itemsize])


# ---- saturate= (the command's --saturate) ----

def _saturating_problem(rng):
    """fp8 operands whose products overflow e4m3fn's 448 in many elements, and a saturating kernel's
    output computed independently: the exact sums (fp8 products and their 16-term sums are exact in
    binary64), clamped to +-448, then cast by ml_dtypes (every clamped value is exact in float32)."""
    a = (rng.standard_normal((8, 16)) * 16).astype(F8)
    b = (rng.standard_normal((16, 8)) * 16).astype(F8)
    exact = a.astype(np.float64) @ b.astype(np.float64)
    out = np.clip(exact, -448.0, 448.0).astype(F8)
    assert (np.abs(exact) > 464).sum() >= 8  # the premise: many elements overflow e4m3fn
    return a, b, exact, out


def test_saturate_gives_the_saturating_kernels_output_and_no_false_alarm(rng):
    a, b, exact, out = _saturating_problem(rng)
    r = er.matmul(a, b, dtype="float8_e4m3fn", saturate=True)
    assert (_bits(r.rounded) == _bits(out)).all()
    for std in ("normal", "any_order"):
        assert r.covers(out, standard=std).all(), std
    hi = r.finite_range()[1]
    assert float(np.asarray(hi, np.float64).max()) == 448.0
    er.testing.assert_matmul_valid(a, b, out, saturate=True)
    er.testing.assert_matmul_valid(a, b, out, c=np.zeros((8, 8), np.float32), saturate=True, dtype="float8_e4m3fn")
    # without saturate= the same output is refused where the exact value overflows (the false alarms)
    r0 = er.matmul(a, b, dtype="float8_e4m3fn")
    over = np.abs(exact) > 464
    assert not r0.covers(out)[over].any()
    with pytest.raises(AssertionError, match="outside the bound"):
        er.testing.assert_matmul_valid(a, b, out)


def _exactref_binary():
    path = os.environ.get("EXACTREF") or os.path.join(REPO, "build", "exactref")
    return os.path.abspath(path) if os.path.isfile(path) and os.access(path, os.X_OK) else None


def test_saturate_agrees_with_the_commands_check(rng, tmp_path):
    exe = _exactref_binary()
    if exe is None:
        pytest.skip("no exactref command built (build/exactref, or EXACTREF=path)")
    a, b, _, out = _saturating_problem(rng)
    np.save(tmp_path / "a.npy", _bits(a))
    np.save(tmp_path / "b.npy", _bits(b))
    np.save(tmp_path / "out.npy", _bits(out))

    def check(*flags):
        with open(tmp_path / "log.txt", "w") as log:
            return subprocess.run([exe, "check", "a.npy", "b.npy", "out.npy", "--a-format", "f8E4M3FN", "--b-format",
                                   "f8E4M3FN", "--out-format", "f8E4M3FN", "--no-progress", *flags], cwd=tmp_path,
                                  stdout=log, stderr=subprocess.STDOUT).returncode

    r = er.matmul(a, b, dtype="float8_e4m3fn", saturate=True)
    r0 = er.matmul(a, b, dtype="float8_e4m3fn")
    assert check("--saturate") == 0 and r.covers(out).all()
    assert check() == 1 and not r0.covers(out).all()


def test_saturate_on_mma_and_refused_for_integers(rng):
    a, b, exact, out = _saturating_problem(rng)
    c = np.full((8,), 64.0, np.float32)  # a bias, broadcast
    r = er.mma(a, b, c, dtype="float8_e4m3fn", saturate=True)
    ref = np.clip(exact + 64.0, -448.0, 448.0).astype(F8)
    assert (_bits(r.rounded) == _bits(ref)).all()
    with pytest.raises(ValueError, match="saturate"):
        er.testing.assert_matmul_valid(np.ones((2, 2), np.int8), np.ones((2, 2), np.int8),
                                       np.full((2, 2), 2, np.int32), saturate=True)


# ---- ulps= : the docstring made true (the library's ulps is for library functions; matmul calls none) ----

def test_ulps_is_documented_as_it_acts_and_warns_that_it_changes_nothing(rng):
    a = rng.standard_normal((8, 32)).astype(BF16)
    b = rng.standard_normal((32, 4)).astype(BF16)
    r = er.matmul(a, b, dtype="float32")
    doc = er.Result.tolerance.__doc__
    assert "no effect" in doc and "extra output ulps" not in doc
    base = r.tolerance()
    with pytest.warns(UserWarning, match="ulps=1000 has no effect on matmul"):
        wide = r.tolerance(ulps=1000)
    assert np.array_equal(wide, base)  # what the warning says
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        r.tolerance(ulps=0)  # 0 asks for nothing: no warning


# ---- tolerance() exactly 0 where one value is allowed ----

def test_tolerance_is_zero_where_only_rounded_is_allowed(rng):
    a = rng.standard_normal((16, 1)).astype(BF16)
    b = rng.standard_normal((1, 16)).astype(BF16)
    # k = 1: each product is exact in float32, so the only correct bf16 output is rounded itself
    r = er.matmul(a, b, dtype="bfloat16")
    lo, hi = r.finite_range()
    assert (_bits(lo) == _bits(r.rounded)).all() and (_bits(hi) == _bits(r.rounded)).all()
    tol = r.tolerance()
    assert (tol == 0.0).all(), tol[tol != 0][:4]
    tol_any = r.tolerance(standard="any_order")
    one = (_bits(r.finite_range(standard="any_order")[0]) == _bits(r.finite_range(standard="any_order")[1]))
    assert (tol_any[one] == 0.0).all() and not (tol_any == 5e-324).any()
    # where more than one value is allowed the tolerance is the library's, positive
    r2 = er.matmul(rng.standard_normal((4, 64)).astype(BF16), rng.standard_normal((64, 4)).astype(BF16),
                   dtype="float32")
    assert (r2.tolerance() > 0).all()


# ---- bias shapes as torch broadcasts them (torch.addmm(bias, a, b), a @ b + bias) ----

@pytest.mark.parametrize("shape", [(5,), (1, 5), (3, 1), (), (1,), (1, 1)])
def test_bias_broadcasts_as_torch_does(rng, shape):
    a = rng.standard_normal((3, 8)).astype(BF16)
    b = rng.standard_normal((8, 5)).astype(BF16)
    bias = np.asarray(rng.standard_normal(shape)).astype(np.float32)
    full = np.ascontiguousarray(np.broadcast_to(bias, (3, 5)))
    r = er.mma(a, b, bias, dtype="float32")
    assert r.shape == (3, 5)
    assert_correctly_rounded(r.rounded, exact_product(a, b, full))
    assert (_bits(r.rounded) == _bits(er.mma(a, b, full, dtype="float32").rounded)).all()
    out = a.astype(np.float32) @ b.astype(np.float32) + bias
    er.testing.assert_matmul_valid(a, b, out, c=bias, standard="any_order")


def test_bias_broadcasts_over_batches(rng):
    a = rng.standard_normal((2, 3, 4, 8)).astype(BF16)
    b = rng.standard_normal((8, 5)).astype(BF16)
    for shape in [(5,), (3, 1, 5), (2, 3, 1, 1), (4, 1)]:
        bias = rng.standard_normal(shape).astype(np.float32)
        r = er.mma(a, b, bias, dtype="float32")
        assert r.shape == (2, 3, 4, 5)
        full = np.broadcast_to(bias, (2, 3, 4, 5))
        for i, j in ((0, 0), (1, 2)):
            ref = er.mma(np.ascontiguousarray(a[i, j]), b, np.ascontiguousarray(full[i, j]), dtype="float32")
            assert (_bits(r.rounded[i, j]) == _bits(ref.rounded)).all(), shape
    with pytest.raises(ValueError, match="does not broadcast"):
        er.mma(a, b, np.ones((3, 5), np.float32))


# ---- N-D operands as torch.matmul / numpy.matmul broadcast them ----

@pytest.mark.parametrize("sa,sb", [
    ((2, 3, 4, 8), (2, 3, 8, 5)),      # (B, H, L, d) @ (B, H, d, L')
    ((2, 1, 4, 8), (3, 8, 5)),         # batch dimensions broadcast against each other
    ((2, 3, 4, 8), (8, 5)),            # a matrix over any batch
    ((4, 8), (2, 2, 8, 5)),
    ((8,), (8, 5)), ((4, 8), (8,)), ((8,), (8,)), ((2, 3, 4, 8), (8,)), ((8,), (3, 8, 5)),
    ((1, 4, 8), (3, 8, 5)),            # a batch of 1
])
def test_nd_operands_follow_matmul_broadcasting(rng, sa, sb):
    a = rng.standard_normal(sa).astype(BF16)
    b = rng.standard_normal(sb).astype(BF16)
    r = er.matmul(a, b, dtype="float32")
    want = np.matmul(a.astype(np.float32), b.astype(np.float32))
    assert r.shape == want.shape and r.rounded.shape == want.shape and r.ndim == want.ndim
    # each output matrix is the 2-D product of its operands' matrices (bit for bit)
    a2 = np.broadcast_to(a if a.ndim > 1 else a[None, :], np.broadcast_shapes(
        (a.shape[:-2] if a.ndim > 1 else ()), (b.shape[:-2] if b.ndim > 1 else ())) + (a.shape[-2] if a.ndim > 1 else 1,
                                                                                      a.shape[-1]))
    b2 = np.broadcast_to(b if b.ndim > 1 else b[:, None], a2.shape[:-2] + (b.shape[-2] if b.ndim > 1 else b.shape[0],
                                                                           b.shape[-1] if b.ndim > 1 else 1))
    got = np.asarray(r.rounded).reshape(a2.shape[:-1] + (b2.shape[-1],))
    for idx in np.ndindex(*a2.shape[:-2]):
        ref = er.matmul(np.ascontiguousarray(a2[idx]), np.ascontiguousarray(b2[idx]), dtype="float32")
        assert (_bits(got[idx]) == _bits(ref.rounded)).all(), idx
    for arr in (r.tolerance(), r.finite_range()[0], r.may_be("nan"), r.exact.lo, r.normal(), r.covers(want)):
        assert np.shape(arr) == want.shape
    assert r.covers(want, standard="any_order").all()
    er.testing.assert_matmul_valid(a, b, want, standard="any_order")


def test_nd_failure_names_the_nd_index(rng):
    a = rng.standard_normal((2, 3, 4, 16)).astype(BF16)
    b = rng.standard_normal((2, 3, 16, 5)).astype(BF16)
    r = er.matmul(a, b, dtype="float32")
    out = np.array(r.rounded)
    out[1, 2, 3, 4] = -out[1, 2, 3, 4] if out[1, 2, 3, 4] != 0 else 1.0
    rep = er.testing.report(r, out)
    assert rep["outside"] == 1 and rep["worst_index"] == (1, 2, 3, 4)
    assert "(1, 2, 3, 4)" in rep["message"]
    assert not r.covers(out)[1, 2, 3, 4] and r.covers(out).sum() == out.size - 1


def test_nd_views_and_backward(rng):
    a = rng.standard_normal((2, 3, 4, 8)).astype(np.float32)
    b = rng.standard_normal((2, 3, 8, 5)).astype(np.float32)
    r = er.matmul(a, b)
    t = r.T
    assert t.shape == (2, 3, 5, 4)
    assert (_bits(t.rounded) == _bits(np.swapaxes(np.asarray(r.rounded), -1, -2))).all()
    assert np.array_equal(t.tolerance(), np.swapaxes(r.tolerance(), -1, -2))
    f = r.reshape((6, 20))
    assert f.shape == (6, 20) and (_bits(f.rounded) == _bits(np.asarray(r.rounded).reshape(6, 20))).all()
    g = rng.standard_normal((2, 3, 4, 5)).astype(np.float32)
    grads = r.backward(g)
    assert grads["grad_A"].shape == a.shape and grads["grad_B"].shape == b.shape
    ref = er.matmul(g[1, 2], np.ascontiguousarray(b[1, 2].T))
    assert (_bits(grads.rounded.grad_A[1, 2]) == _bits(ref.rounded)).all()
    with pytest.raises(NotImplementedError, match="broadcast"):
        er.matmul(a[:, :1], b).backward(g)  # an operand broadcast over a batch dimension
    with pytest.raises(NotImplementedError, match="B was broadcast"):
        er.matmul(a, b[0, 0]).backward(g)  # a matrix broadcast over (2, 3): torch would sum its gradient
    v = rng.standard_normal(8).astype(np.float32)  # 1-D operands: the gradients have their shapes
    gv = er.matmul(v, b[0, 0]).backward(g[0, 0, 0])
    assert gv["grad_A"].shape == (8,) and gv["grad_B"].shape == (8, 5)
    assert (_bits(gv.rounded.grad_A) == _bits(er.matmul(b[0, 0], g[0, 0, 0]).rounded)).all()


# ---- the failure message: short, the worst in ulps AND the greatest absolute and relative error ----

def test_message_shows_absolute_and_relative_error_and_a_sign_flip(rng):
    a = rng.standard_normal((16, 32)).astype(BF16)
    b = rng.standard_normal((32, 8)).astype(BF16)
    r = er.matmul(a, b, dtype="float32")
    out = np.array(r.rounded)
    i, j = np.unravel_index(np.argmax(np.abs(out)), out.shape)
    out[i, j] = -out[i, j]
    with pytest.raises(AssertionError) as e:
        er.testing.assert_matmul_valid(a, b, out)
    msg = str(e.value)
    lines = msg.splitlines()
    assert len(lines) <= 15, msg
    x = float(r.rounded[i, j])
    assert f"Greatest absolute difference from rounded: {2 * abs(x):.6g} at index ({i}, {j})" in msg
    assert f"Greatest relative difference from rounded: 2 at index ({i}, {j})" in msg
    assert "the output has the opposite sign of rounded" in msg
    assert "allowed there" in msg


def test_pytest_shows_the_callers_line_not_the_packages_source(tmp_path):
    test = tmp_path / "test_kernel.py"
    test.write_text(
        "import numpy as np, ml_dtypes\n"
        "import exactref as er\n"
        "def test_kernel():\n"
        "    a = np.ones((4, 8), ml_dtypes.bfloat16)\n"
        "    out = np.full((4, 4), 8.0, np.float32)\n"
        "    out[1, 2] = 9.0\n"
        "    er.testing.assert_matmul_valid(a, a.T, out)\n")
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
    with open(tmp_path / "log.txt", "w") as log:
        rc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--rootdir",
                             str(tmp_path), str(test)], cwd=tmp_path, env=env, stdout=log,
                            stderr=subprocess.STDOUT).returncode
    text = (tmp_path / "log.txt").read_text()
    assert rc == 1, text
    failure = text[text.index("___ test_kernel ___"):text.index("short test summary")]
    assert "exactref/testing.py" not in failure and "raise AssertionError" not in failure, failure
    assert "Greatest absolute difference from rounded: 1 at index (1, 2)" in failure
    assert len(failure.splitlines()) <= 25, failure


# ---- the answer leaves as numpy or through DLPack without a copy ----

def test_rounded_is_numpy_and_exports_its_dtype():
    a = np.ones((2, 3), BF16)
    r = er.matmul(a, a.T)
    assert isinstance(r.rounded, np.ndarray) and isinstance(r.rounded, er.ExportArray) and r.rounded.dtype == BF16
    assert type(r.rounded + 1) is np.ndarray  # arithmetic gives plain numpy
    cap = r.rounded.__dlpack__(max_version=(1, 0))
    assert "dltensor_versioned" in repr(cap)
    with pytest.raises(BufferError, match="read-only"):
        r.rounded.__dlpack__()  # legacy DLPack cannot say read-only: refused, as numpy refuses
    del cap  # an unconsumed capsule frees its tensor
    f32 = er.matmul(np.ones((2, 3), np.float32), np.ones((3, 2), np.float32)).rounded
    assert np.from_dlpack(f32).ctypes.data == f32.ctypes.data  # numpy's own export where it has one


class _DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class _DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class _DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", _DLDevice), ("ndim", ctypes.c_int32), ("dtype", _DLDataType),
                ("shape", ctypes.POINTER(ctypes.c_int64)), ("strides", ctypes.POINTER(ctypes.c_int64)),
                ("byte_offset", ctypes.c_uint64)]


class _DLManagedVersioned(ctypes.Structure):
    _fields_ = [("major", ctypes.c_uint32), ("minor", ctypes.c_uint32), ("manager_ctx", ctypes.c_void_p),
                ("deleter", ctypes.CFUNCTYPE(None, ctypes.c_void_p)), ("flags", ctypes.c_uint64),
                ("dl_tensor", _DLTensor)]


_USED_NAME = ctypes.create_string_buffer(b"used_dltensor_versioned")  # outlives every capsule renamed to it


def test_dlpack_export_follows_the_consumer_contract():
    # a consumer written from the DLPack 1.x ABI alone (no torch): it takes the tensor, renames the
    # capsule "used_dltensor_versioned" (so dropping the capsule frees nothing), reads the memory after
    # the result and its arrays are gone, and calls the deleter, which lets the memory go
    import gc
    import weakref

    getp = ctypes.pythonapi.PyCapsule_GetPointer
    getp.restype, getp.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]
    setname = ctypes.pythonapi.PyCapsule_SetName
    setname.restype, setname.argtypes = ctypes.c_int, [ctypes.py_object, ctypes.c_char_p]
    a = np.array([[1, 2, 3], [4, 5, 6]], BF16)
    r = er.matmul(a, np.ascontiguousarray(a.T))  # [[14, 32], [32, 77]]
    x = r.rounded
    owner = x
    while owner.base is not None:
        owner = owner.base
    w_owner, w_r = weakref.ref(owner), weakref.ref(r)
    cap = x.__dlpack__(max_version=(1, 1))
    ptr = getp(cap, b"dltensor_versioned")
    m = _DLManagedVersioned.from_address(ptr)
    t = m.dl_tensor
    assert (m.major, m.flags & 1) == (1, 1)  # DLPack 1.x, read-only (the answer is not to be written)
    assert (t.device.device_type, t.device.device_id, t.ndim) == (1, 0, 2)
    assert (t.dtype.code, t.dtype.bits, t.dtype.lanes) == (4, 16, 1)  # kDLBfloat, 16 bits
    assert t.data == x.ctypes.data and t.byte_offset == 0
    assert [t.shape[i] for i in range(2)] == [2, 2] and [t.strides[i] for i in range(2)] == [2, 1]
    deleter = m.deleter
    assert setname(cap, _USED_NAME) == 0
    del cap, x, r, owner
    gc.collect()
    assert w_r() is None  # the result is gone ...
    assert w_owner() is not None  # ... and the export still holds the memory
    assert list((ctypes.c_uint16 * 4).from_address(t.data)) == [int(v) for v in _bits(np.array(
        [14, 32, 32, 77], BF16))]
    deleter(ptr)  # the consumer lets go (ctypes calls it without the GIL: the deleter takes it)
    gc.collect()
    assert w_owner() is None
    # a writable copy (copy=True) goes out through legacy DLPack, which cannot say read-only
    r = er.matmul(a, np.ascontiguousarray(a.T))
    cap = r.rounded.__dlpack__(copy=True)
    ptr = getp(cap, b"dltensor")
    assert _DLTensor.from_address(ptr).data != r.rounded.ctypes.data
    del cap


# ---- float32 scales after the sum (per tensor, row, column, block): the library's scaled product ----

def _exact_scaled(a, b, fa, fb, bk, bn):
    """sum over k-blocks of sa[i, blk] * sb[blk, j // bn] * (sum over the block of a b), in Fractions."""
    from fractions import Fraction

    a64, b64 = np.asarray(a, np.float64), np.asarray(b, np.float64)
    m, k = a64.shape
    n = b64.shape[1]
    out = []
    for i in range(m):
        row = []
        for j in range(n):
            s = Fraction(0)
            for blk in range(-(-k // bk)):
                part = sum((Fraction(float(a64[i, p])) * Fraction(float(b64[p, j]))
                            for p in range(blk * bk, min(k, (blk + 1) * bk))), Fraction(0))
                s += Fraction(float(fa[i, blk])) * Fraction(float(fb[blk, j // bn])) * part
            row.append(s)
        out.append(row)
    return out


def test_f32_scales_per_tensor_row_column_give_the_exact_value(rng):
    a = (rng.standard_normal((5, 48)) * 4).astype(F8)
    b = (rng.standard_normal((48, 6)) * 4).astype(F8)
    sa, sb = np.float32(0.37), np.float32(1.9)
    r = er.mma_scaled(a, b, sa, sb)
    assert r.shape == (5, 6) and r.op == "mma_scaled" and r.rounded.dtype == np.float32
    assert_correctly_rounded(r.rounded, _exact_scaled(a, b, np.full((5, 1), sa), np.full((1, 1), sb), 48, 6))
    ra = rng.uniform(0.01, 3, 5).astype(np.float32)
    cb = rng.uniform(0.01, 3, 6).astype(np.float32)
    for a_s, b_s in ((ra, cb), (ra[:, None], cb[None, :])):
        r = er.mma_scaled(a, b, a_s, b_s, dtype="bfloat16")
        assert_correctly_rounded(r.rounded, _exact_scaled(a, b, ra[:, None], cb[None, :], 48, 1))
    # the bounds of sum-then-scale kernels: the library's scaled:bk=.. standard, the default here
    r = er.mma_scaled(a, b, sa, sb)
    tol = np.asarray(r.tolerance(), np.float64)
    assert np.isfinite(tol).all() and (tol > 0).all()
    assert r.covers(r.rounded).all()
    with pytest.raises(ValueError):  # normal given explicitly: the library refuses it on a scaled product
        r.tolerance(standard="normal")
    assert r.tolerance().tobytes() == r.tolerance(standard="scaled:bk=128").tobytes()
    with pytest.raises(AssertionError, match="outside"):
        er.testing.assert_matmul_valid(a, b, np.zeros((5, 6), np.float32), scales=(sa, sb))
    assert np.isfinite(np.asarray(r.exact)).all()
    with pytest.raises(ValueError, match="not a float32 value"):
        er.mma_scaled(a, b, 0.37, 1.0)  # a Python float that the kernel's float32 scale is not
    er.mma_scaled(a, b, 0.5, 2.0)  # float32 values given as Python floats are fine


def test_f32_block_scales_as_deepgemm_gives_the_exact_value(rng):
    # A scaled per 1 x 128, B per 128 x 128 (K = 256: two k-blocks; N = 160: a partial n-block)
    m, k, n = 3, 256, 160
    a = (rng.standard_normal((m, k)) * 8).astype(F8)
    b = (rng.standard_normal((k, n)) * 8).astype(F8)
    sa = rng.uniform(0.001, 2, (m, 2)).astype(np.float32)
    sb = rng.uniform(0.001, 2, (2, 2)).astype(np.float32)
    r = er.mma_scaled(a, b, sa, sb)
    assert_correctly_rounded(r.rounded, _exact_scaled(a, b, sa, sb, 128, 128))
    # per k-block and column of B
    sbc = rng.uniform(0.001, 2, (2, n)).astype(np.float32)
    r = er.mma_scaled(a, b, sa, sbc, block=128)
    assert_correctly_rounded(r.rounded, _exact_scaled(a, b, sa, sbc, 128, 1))
    with pytest.raises(ValueError, match="block"):
        er.mma_scaled(a, b, rng.uniform(0.1, 1, (m, 3)).astype(np.float32), sb)  # 3 blocks of 128 do not fit 256


def test_f32_scales_refuse_what_binary64_cannot_scale_exactly():
    # the exact value comes from operands scaled in binary64: each product must be exact there, and the
    # scaled sum must be the sum-then-scale value; where it cannot be, refused, never a wrong "exact"
    x = np.float32(1 + 2.0 ** -23)  # 24 significant bits
    one = np.ones((1, 1), np.float32)
    # an integer scale of 31 significant bits times x has 55: binary64 would round it
    with pytest.raises(ValueError, match="must both be float32"):
        er.mma_scaled(np.full((1, 1), x), one, np.float32(1), np.full((1, 1), 2 ** 31 - 1, np.int32))
    # an MX (e8m0) scale with a float32 one: different semantics (per-32 blocks, sign ignored)
    with pytest.raises(ValueError, match="must both be float32"):
        er.mma_scaled(np.full((1, 32), x), np.ones((32, 1), np.float32), np.float32(1),
                      np.ones((1, 1), ml_dtypes.float8_e8m0fnu))
    # an int32 operand of 31 significant bits times a float32 scale of 24 bits: not exact in binary64
    with pytest.raises(ValueError, match="not exact"):
        er.mma_scaled(np.full((1, 1), 2 ** 31 - 1, np.int32), np.ones((1, 1), np.int32), x, np.float32(1))
    # int8 operands (W8A8 kernels with float32 scales) are exact: the value is 127 * 127 * x rounded once
    r = er.mma_scaled(np.full((1, 1), 127, np.int8), np.full((1, 1), 127, np.int8), x, np.float32(1))
    assert_correctly_rounded(r.rounded, [[Fraction(127 * 127) * Fraction(float(x))]])
    # an infinite scale: sa * (0 * 1 + 1 * 1) is +inf, but the operands scaled first give inf * 0 = NaN
    with pytest.raises(ValueError, match="infinite scale"):
        er.mma_scaled(np.array([[0.0, 1.0]], np.float32), np.ones((2, 1), np.float32), np.float32(np.inf),
                      np.float32(1))
    # a NaN scale: the library refuses it (its message names the scale and the element)
    with pytest.raises(ValueError, match=r"a_scale\[0, 0\] is NaN"):
        er.mma_scaled(np.array([[0.0, 1.0]], np.float32), np.ones((2, 1), np.float32), np.float32(np.nan),
                      np.float32(1))


def test_engine_standards_refuse_operands_their_instructions_do_not_take(rng):
    # as `exactref check` (exit 2): hopper-fp8 models instructions on e4m3/e5m2 operands, hopper on
    # f16/bf16, blackwell-nvf4 on e2m1; f32 operands under them get no bounds of a model that does not apply
    a = rng.standard_normal((3, 32)).astype(np.float32)
    b = rng.standard_normal((32, 2)).astype(np.float32)
    r = er.matmul(a, b)
    for std in ("hopper-fp8", "hopper", "blackwell-nvf4"):
        with pytest.raises(ValueError, match=f"standard='{std}' models instructions whose operands"):
            r.tolerance(standard=std)
        with pytest.raises(ValueError, match="A is f32"):
            r.T.covers(r.T.rounded, standard=std)  # views too
        with pytest.raises(ValueError, match="convert A to float"):
            er.testing.assert_matmul_valid(a, b, r.rounded, standard=std)
    assert r.covers(r.rounded, standard="hopper-tf32").all()  # f32 read as tf32: taken
    assert r.covers(r.rounded, standard="engine:k=8,F=24").all()  # a model of one's own takes any
    f8 = er.matmul(a.astype(F8), b.astype(F8))
    assert f8.covers(f8.rounded, standard="hopper").all()  # fp8 under an f16/bf16 row: taken
    assert f8.covers(f8.rounded, standard="hopper-fp8").all()


# ---- the command's --backend, --threads, --strategy and --device ----

def test_engine_options_change_where_not_what(rng):
    a = rng.standard_normal((9, 70)).astype(BF16)
    b = rng.standard_normal((70, 11)).astype(BF16)
    base = er.matmul(a, b, dtype="float32")
    r = er.matmul(a, b, dtype="float32", backend="cpu", threads=1, strategy="exact")
    assert (_bits(r.rounded) == _bits(base.rounded)).all()
    assert np.array_equal(r.tolerance(standard="any_order"), base.tolerance(standard="any_order"))
    st = r.stats
    assert st["backend"] == "cpu" and st["threads"] == 1 and st["exact_path"] == st["elements"] == 99
    assert base.stats["fast_decided"] > 0  # the default strategy takes the certified fast path
    er.testing.assert_matmul_valid(a, b, base.rounded, backend="cpu", threads=2)
    assert er.mmai(np.ones((2, 3), np.int8), np.ones((3, 2), np.int8), threads=1).rounded.tolist() == [[3, 3], [3, 3]]
    try:
        ro = er.matmul(a, b, dtype="float32", backend="opencl", device=0)
    except (RuntimeError, NotImplementedError, ValueError) as e:  # no OpenCL device in this build or machine
        print(f"opencl: {e}")
    else:
        assert (_bits(ro.rounded) == _bits(base.rounded)).all()
    for bad in (dict(backend="gpu"), dict(threads=-1), dict(threads=2000), dict(strategy="fast"), dict(device=-2)):
        with pytest.raises(ValueError):
            er.matmul(a, b, **bad)


def test_exported_arrays_print_as_numpy_arrays():
    r = er.matmul(np.ones((2, 2), BF16), np.ones((2, 2), BF16))
    assert repr(r.rounded) == repr(np.asarray(r.rounded).view(np.ndarray)) and repr(r.rounded).startswith("array(")
