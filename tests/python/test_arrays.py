"""test_arrays.py: every route into er.asarray and the operations: dtypes, names, lists, bit patterns,
DLPack, strided views; each compared bit for bit with ml_dtypes or an exact-rational reference."""
import ml_dtypes
import numpy as np
import pytest

import exactref as er
from exactref import _arrays

from conftest import assert_correctly_rounded, exact_product

# every float format numpy or ml_dtypes has a dtype for, with a scale that keeps values in range
FLOATS = {
    "float64": 1.0, "float32": 1.0, "float16": 1.0, "bfloat16": 1.0, "float8_e4m3fn": 1.0, "float8_e5m2": 1.0,
    "float8_e4m3fnuz": 1.0, "float8_e5m2fnuz": 1.0, "float6_e2m3fn": 0.5, "float6_e3m2fn": 1.0, "float4_e2m1fn": 0.5,
}


def _ml(name):
    return np.dtype(getattr(np, name)) if hasattr(np, name) else np.dtype(getattr(ml_dtypes, name))


@pytest.mark.parametrize("name", sorted(FLOATS))
def test_list_with_a_dtype_name_rounds_as_ml_dtypes(name, rng):
    vals = rng.standard_normal((5, 7)) * FLOATS[name]
    got = er.asarray(vals.tolist(), name)
    want = vals.astype(_ml(name))
    assert got.dtype == _ml(name)
    u = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[got.dtype.itemsize]
    np.testing.assert_array_equal(got.view(u), want.view(u))


def test_e8m0_powers_of_two():
    got = er.asarray([[0.5, 1.0, 2.0**20]], "float8_e8m0fnu")
    assert got.dtype == ml_dtypes.float8_e8m0fnu
    assert got.view(np.uint8).tolist() == [[126, 127, 147]]


@pytest.mark.parametrize("name", sorted(FLOATS))
def test_matmul_from_every_float_dtype_is_correctly_rounded(name, rng):
    dt = _ml(name)
    a = (rng.standard_normal((4, 9)) * FLOATS[name]).astype(dt)
    b = (rng.standard_normal((9, 3)) * FLOATS[name]).astype(dt)
    r = er.matmul(a, b, dtype="float32")
    assert r.rounded.dtype == np.float32
    ex = exact_product(a.astype(np.float64), b.astype(np.float64))
    assert_correctly_rounded(r.rounded, ex)
    lo, hi = r.exact.lo, r.exact.hi
    for i in range(4):
        for j in range(3):
            assert lo[i, j] <= ex[i][j] <= hi[i, j]


def test_e8m0_scales_in_mma_scaled(rng):
    a = rng.standard_normal((2, 64)).astype(ml_dtypes.float8_e4m3fn)
    b = rng.standard_normal((64, 3)).astype(ml_dtypes.float8_e4m3fn)
    sa = er.asarray(np.full((2, 2), 2.0), "float8_e8m0fnu")
    sb = er.asarray(np.full((2, 3), 0.5), "float8_e8m0fnu")
    r = er.mma_scaled(a, b, sa, sb)
    ex = exact_product(a.astype(np.float64), b.astype(np.float64))  # the scales' product is 1
    assert_correctly_rounded(r.rounded, ex)
    assert r.op == "mma_scaled"


@pytest.mark.parametrize("spelling", ["bf16", "BF16", "bfloat16", "BFloat16", ml_dtypes.bfloat16,
                                      np.dtype(ml_dtypes.bfloat16)])
def test_dtype_names_ml_dtypes_and_mlir_any_case(spelling):
    x = er.asarray([[1.5, -2.25]], spelling)
    assert x.dtype == ml_dtypes.bfloat16
    assert x.view(np.uint16).tolist() == [[0x3FC0, 0xC010]]


@pytest.mark.parametrize("spelling", ["f8E4M3FN", "F8E4M3FN", "float8_e4m3fn", "FLOAT8_E4M3FN"])
def test_fp8_names(spelling):
    assert er.asarray([[448.0]], spelling).view(np.uint8).tolist() == [[0x7E]]


def test_unknown_and_unmodelled_names():
    with pytest.raises(ValueError, match="unknown format 'float7'"):
        er.asarray([[1.0]], "float7")
    with pytest.raises(ValueError, match="does not model"):
        er.asarray([[1.0]], "f8E3M4")


def test_raw_bit_patterns_with_a_declared_format():
    bits = np.array([[0x38, 0x40], [0x7E, 0x80]], np.uint8)  # e4m3fn: 1, 2, 448, -0
    x = er.asarray(bits, "float8_e4m3fn")
    assert x.dtype == ml_dtypes.float8_e4m3fn
    assert np.shares_memory(x, bits)
    assert x.astype(np.float64).tolist() == [[1.0, 2.0], [448.0, -0.0]]
    y = er.asarray(np.array([[0x3F80]], np.uint16), "bf16")
    assert y.astype(np.float32).tolist() == [[1.0]]
    # the same product from bits and from values
    r1 = er.matmul(x, x.T.copy(), dtype="float32")
    r2 = er.matmul(er.asarray([[1, 2], [448, -0.0]], "float8_e4m3fn"),
                   er.asarray([[1, 448], [2, -0.0]], "float8_e4m3fn"), dtype="float32")
    np.testing.assert_array_equal(r1.rounded.view(np.uint32), r2.rounded.view(np.uint32))


def test_tf32_bit_array():
    x = er.asarray([[1.0, 1.0 + 2.0**-10, 1.0 + 2.0**-12]], "tf32")
    assert isinstance(x, er.BitArray) and x.format == "tensorfloat32"
    assert x.bits.tolist() == [[0x3F800000, 0x3F802000, 0x3F800000]]
    r = er.matmul(x, er.asarray([[1.0], [1.0], [1.0]], "tf32"), dtype="float32")
    assert r.rounded.tolist() == [[3.0 + 2.0**-10]]


def test_integer_routes():
    a = er.asarray([[1, -2, 3]], "int8")
    assert a.dtype == np.int8
    r = er.mmai(a, er.asarray([[100], [100], [-100]], "int8"))
    assert r.rounded.dtype == np.int32 and r.rounded.tolist() == [[-400]]
    assert r.guarantee == "exact"
    assert r.normal().tolist() == [[-400]] and r.exact.lo.tolist() == [[-400.0]] and r.exact.hi.tolist() == [[-400.0]]
    assert r.tolerance().tolist() == [[0.0]]
    u = er.mmai(np.full((1, 4), 255, np.uint8), np.full((4, 1), 255, np.uint8), er.asarray([[7]], "int32"))
    assert u.rounded.tolist() == [[4 * 255 * 255 + 7]]
    assert u.covers(np.array([[4 * 255 * 255 + 7]], np.int32)).all()
    assert not u.covers(np.array([[4 * 255 * 255 + 8]], np.int32)).any()
    with pytest.raises(ValueError, match="outside the range of int8"):
        er.asarray([[200]], "int8")


class _DLPackOnly:
    """An object that offers only the DLPack protocol (as torch and JAX arrays do)."""

    def __init__(self, arr):
        self._arr = arr

    def __dlpack__(self, **kw):
        return self._arr.__dlpack__(**kw)

    def __dlpack_device__(self):
        return self._arr.__dlpack_device__()


def test_dlpack_from_numpy(rng):
    a = rng.standard_normal((6, 5)).astype(np.float32)
    b = rng.standard_normal((5, 4)).astype(np.float32)
    x = er.asarray(_DLPackOnly(a))
    assert x.dtype == np.float32 and np.shares_memory(x, a)
    r1 = er.matmul(_DLPackOnly(a), _DLPackOnly(b))
    r2 = er.matmul(a, b)
    np.testing.assert_array_equal(r1.rounded.view(np.uint32), r2.rounded.view(np.uint32))
    assert r1.covers(_DLPackOnly(np.asarray(r2.rounded).copy())).all()


def test_strided_and_transposed_views_without_a_copy(rng):
    big = rng.standard_normal((20, 30)).astype(ml_dtypes.bfloat16)
    a = big[::2, 1::3]          # 10 x 10, strided
    b = big[1:11, :12:1].T.T    # 10 x 12
    bt = np.ascontiguousarray(big[:12, 5:15]).T  # 10 x 12, transposed
    for x in (a, bt):
        bits, _ = _arrays._bits_of(x)
        assert np.shares_memory(bits, x) and not bits.flags.c_contiguous
    r = er.matmul(a, bt, dtype="float32")
    rc = er.matmul(np.ascontiguousarray(a), np.ascontiguousarray(bt), dtype="float32")
    np.testing.assert_array_equal(r.rounded.view(np.uint32), rc.rounded.view(np.uint32))
    assert_correctly_rounded(r.rounded, exact_product(a.astype(np.float64), bt.astype(np.float64)))
    r3 = er.matmul(a, b, dtype="bfloat16")
    assert r3.rounded.dtype == ml_dtypes.bfloat16
    # a reversed view (negative strides) is copied, with the same answer
    r4 = er.matmul(a[::-1], bt, dtype="float32")
    np.testing.assert_array_equal(r4.rounded.view(np.uint32), rc.rounded.view(np.uint32)[::-1])


def test_batched_and_broadcast(rng):
    a = rng.standard_normal((3, 4, 5)).astype(np.float16)
    b = rng.standard_normal((5, 2)).astype(np.float16)
    r = er.matmul(a, b, dtype="float32")
    assert r.rounded.shape == (3, 4, 2)
    for q in range(3):
        assert_correctly_rounded(r.rounded[q], exact_product(a[q], b))
    assert r.tolerance().shape == (3, 4, 2)


def test_default_output_dtypes():
    f32 = er.asarray([[1.0]], "float32")
    bf = er.asarray([[1.0]], "bfloat16")
    f8 = er.asarray([[1.0]], "float8_e4m3fn")
    assert er.matmul(bf, bf).rounded.dtype == ml_dtypes.bfloat16
    assert er.matmul(f8, f8).rounded.dtype == np.float32
    assert er.matmul(bf, f32).rounded.dtype == np.float32
    assert er.mma(bf, bf, er.asarray([[0.5]], "float16")).rounded.dtype == np.float16


def test_rounding_directions():
    a = er.asarray([[1.0, 2.0**-30]], "float32")
    b = er.asarray([[1.0], [1.0]], "float32")
    assert er.matmul(a, b).rounded.tolist() == [[1.0]]
    up = er.matmul(a, b, rounding="positive_inf").rounded
    assert up.tolist() == [[float(np.nextafter(np.float32(1), np.float32(2)))]]
    assert er.matmul(a, b, rounding="zero").rounded.tolist() == [[1.0]]
    with pytest.raises(ValueError, match="unknown rounding"):
        er.matmul(a, b, rounding="sideways")


def test_big_endian_arrays_are_read_by_value():
    a = np.array([[1.5, -2.0]], dtype=">f4")
    b = np.array([[2.0], [1.0]], dtype=">f4")
    x = er.asarray(a)
    assert x.dtype == np.float32 and x.tolist() == [[1.5, -2.0]]
    assert er.matmul(a, b).rounded.tolist() == [[1.0]]


class _DeviceArray:
    """An array in device memory as the DLPack protocol describes it (kDLCUDA), with CuPy's get()."""

    def __init__(self, arr, with_get=True):
        self._arr = arr
        if with_get:
            self.get = lambda: self._arr.copy()

    def __dlpack__(self, **kw):
        raise BufferError("device memory")

    def __dlpack_device__(self):
        return (2, 0)


def test_device_arrays_are_copied_once_with_a_warning(rng):
    import warnings

    a = rng.standard_normal((4, 6)).astype(ml_dtypes.bfloat16)
    b = rng.standard_normal((6, 3)).astype(ml_dtypes.bfloat16)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        r = er.matmul(_DeviceArray(a), _DeviceArray(b), dtype="float32")
    msgs = [x for x in w if issubclass(x.category, RuntimeWarning)]
    assert len(msgs) == 2 and all("copied to the host once" in str(x.message) for x in msgs)
    assert all(x.filename == __file__ for x in msgs)  # attributed to the caller, not to the package
    ref = er.matmul(a, b, dtype="float32")
    np.testing.assert_array_equal(r.rounded.view(np.uint32), ref.rounded.view(np.uint32))
    with pytest.warns(RuntimeWarning, match="copied to the host"), \
            pytest.raises(TypeError, match="^A: cannot copy a _DeviceArray from device type 2"):
        er.matmul(_DeviceArray(a, with_get=False), b)


def test_bit_array_is_numpy_like():
    x = er.asarray([[1.0, 2.0, 3.0], [4.0, 1.0 + 2.0**-10, -0.5]], "tf32")
    assert x.shape == (2, 3) and x.ndim == 2 and x.size == 6 and len(x) == 2 and x.dtype == "tensorfloat32"
    v = np.asarray(x)
    assert v.dtype == np.float64 and v.tolist() == [[1.0, 2.0, 3.0], [4.0, 1.0 + 2.0**-10, -0.5]]
    assert np.asarray(x, dtype=np.float32).dtype == np.float32
    assert x[1].bits.tolist() == [0x40800000, 0x3F802000, 0xBF000000]
    assert x.T.shape == (3, 2) and x.T.bits[2, 1] == 0xBF000000
    assert repr(x) == ("BitArray([[ 1.          ,  2.          ,  3.          ],\n"
                       "          [ 4.          ,  1.0009765625, -0.5         ]], format='tensorfloat32')")
    with pytest.raises(ValueError, match="needs a copy"):
        np.asarray(x, copy=False)
