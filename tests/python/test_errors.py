"""test_errors.py: malformed input raises ValueError or TypeError with the library's message and never
crashes the interpreter (the command's malformed cases, and more)."""
import ml_dtypes
import numpy as np
import pytest

import exactref as er

F32 = np.ones((2, 2), np.float32)


def test_wrong_shapes():
    with pytest.raises(ValueError, match="inner dimensions differ"):
        er.matmul(np.ones((3, 2), np.float32), np.ones((3, 2), np.float32))
    # 1-D and N-D operands follow torch.matmul (test_torch_habits.py); a 0-d one has no dimension to multiply
    with pytest.raises(ValueError, match="at least one dimension"):
        er.matmul(np.float32(3), F32)
    with pytest.raises(ValueError, match="inner dimensions differ"):
        er.matmul(np.ones(3, np.float32), F32)
    with pytest.raises(ValueError, match="batch"):
        er.matmul(np.ones((2, 2, 2), np.float32), np.ones((3, 2, 2), np.float32))
    with pytest.raises(ValueError, match="do not broadcast"):
        er.matmul(np.ones((4, 2, 2, 2), np.float32), np.ones((3, 2, 2), np.float32))
    with pytest.raises(ValueError, match="must be 2-D or 3-D"):
        er.mma_scaled(np.ones(32, np.float32), np.ones((32, 1), np.float32), np.ones((1, 1), ml_dtypes.float8_e8m0fnu),
                      np.ones((1, 1), ml_dtypes.float8_e8m0fnu))
    with pytest.raises(ValueError, match="C has shape .* does not broadcast"):
        er.mma(F32, F32, np.ones((3, 3), np.float32))
    with pytest.raises(ValueError, match="C has shape .* does not broadcast"):
        er.mma(F32, F32, np.ones((3, 2, 2), np.float32))  # C may not add a batch the product lacks
    r = er.matmul(F32, F32)
    with pytest.raises(ValueError, match="shape"):
        r.covers(np.ones((3, 2), np.float32))


def test_wrong_dtypes():
    r = er.matmul(F32, F32)
    with pytest.raises(TypeError, match="the output has dtype float64; the result's dtype is float32 "
                                        r"\(make the result with dtype='float64'"):
        r.covers(np.ones((2, 2)))
    with pytest.raises(TypeError, match="mmai"):
        er.matmul(np.ones((2, 2), np.int8), np.ones((2, 2), np.int8))
    with pytest.raises(TypeError, match="int8 or uint8"):
        er.mmai(F32, F32)
    with pytest.raises(TypeError, match="not a format exactref models"):
        er.matmul(np.ones((2, 2), np.complex64), F32)
    with pytest.raises(TypeError):
        er.asarray(np.array([[object()]]))
    with pytest.raises((TypeError, ValueError)):
        er.asarray([["a", "b"]], "float32")
    with pytest.raises(TypeError, match="a dtype must be"):
        er.asarray([[1.0]], 3.5)
    with pytest.raises(ValueError, match="compute must be"):
        r.tolerance(compute="int8")
    with pytest.raises(ValueError, match="unknown standard"):
        r.covers(F32, standard="pascal")
    with pytest.raises(ValueError, match="ulps"):
        r.tolerance(ulps=-1)


def test_bad_bit_patterns_name_the_operand_and_index():
    # fp6 patterns with bits above the width, tf32 with padding bits set: the library's message
    bad6 = er.asarray(np.array([[0x01, 0x3F], [0xFF, 0x00]], np.uint8), "float6_e2m3fn")
    ok6 = er.asarray(np.zeros((2, 2), np.uint8), "float6_e2m3fn")
    with pytest.raises(ValueError) as e:
        er.matmul(bad6, ok6, dtype="float32")
    assert str(e.value).startswith("a: element [1, 0] = 0xff")
    with pytest.raises(ValueError) as e:
        er.matmul(ok6, bad6, dtype="float32")
    assert str(e.value).startswith("b: element [1, 0]")
    badtf = er.asarray(np.array([[0x3F800001]], np.uint32), "tf32")
    with pytest.raises(ValueError):
        er.matmul(badtf, er.asarray([[1.0]], "tf32"), dtype="float32")


def test_nan_patterns_are_values_not_errors():
    # every NaN pattern of fp8 e4m3fn and of bf16 is read as NaN
    a = er.asarray(np.array([[0x7F, 0xFF]], np.uint8), "float8_e4m3fn")
    r = er.matmul(a, er.asarray([[1.0], [1.0]], "float8_e4m3fn"))
    assert np.isnan(r.rounded).all() and r.may_be("nan").all()
    b = er.asarray(np.array([[0x7FC1, 0xFF81]], np.uint16), "bfloat16")
    rb = er.matmul(b, er.asarray([[0.0], [1.0]], "bfloat16"))
    assert np.isnan(rb.rounded.astype(np.float32)).all()


def test_empty_arrays():
    r = er.matmul(np.ones((0, 3), np.float32), np.ones((3, 2), np.float32))
    assert r.rounded.shape == (0, 2) and r.tolerance().shape == (0, 2)
    assert r.covers(np.ones((0, 2), np.float32)).shape == (0, 2)
    z = er.matmul(np.ones((2, 0), np.float32), np.ones((0, 2), np.float32))
    assert z.rounded.tolist() == [[0.0, 0.0], [0.0, 0.0]]
    assert z.covers(np.zeros((2, 2), np.float32)).all()
    assert not z.covers(np.ones((2, 2), np.float32)).any()
    e = er.mma(np.ones((2, 0), np.float32), np.ones((0, 2), np.float32), np.full((2, 2), 3.0, np.float32))
    assert e.rounded.tolist() == [[3.0, 3.0], [3.0, 3.0]]


def test_huge_dimensions_raise():
    a = np.broadcast_to(np.float32(1), (1 << 40, 1))
    with pytest.raises((MemoryError, ValueError)):
        er.matmul(a, np.ones((1, 1 << 20), np.float32))
    # an inner dimension beyond the engine's: the library's message (zero strides: no memory is used)
    k = 1 << 40
    with pytest.raises(ValueError, match="largest inner dimension"):
        er.matmul(np.broadcast_to(np.float32(1), (1, k)), np.broadcast_to(np.float32(1), (k, 1)))


def test_block_scaled_errors():
    a = np.ones((2, 32), ml_dtypes.float8_e4m3fn)
    b = np.ones((32, 2), ml_dtypes.float8_e4m3fn)
    s = er.asarray(np.ones((2, 1)), "float8_e8m0fnu")
    with pytest.raises(ValueError):
        er.mma_scaled(a, b, s, er.asarray(np.ones((2, 2)), "float8_e8m0fnu"))  # b_scale must be 1 x 2
    with pytest.raises(ValueError, match="one format"):
        er.mma_scaled(a, b, s, er.asarray(np.ones((1, 2)), "float8_e4m3fn"))
    with pytest.raises(ValueError, match="block must be positive"):
        er.mma_scaled(a, b, s, s.T.copy(), block=0)


def test_several_outputs_need_a_name():
    r = er.matmul(F32, F32)
    g = r.backward(F32)
    with pytest.raises(ValueError, match="several outputs"):
        er.matmul(g, F32)
    with pytest.raises(ValueError, match="several outputs"):
        g.reshape((4, 1))
    with pytest.raises(KeyError, match="no output named"):
        g["grad_C"]
    with pytest.raises(KeyError):
        r["grad_A"]


def test_errors_name_the_operand():
    with pytest.raises(TypeError, match="^B: dtype complex64 is not a format"):
        er.matmul(F32, np.ones((2, 2), np.complex64))
    with pytest.raises(TypeError, match="^C: dtype bool"):
        er.mma(F32, F32, np.ones((2, 2), np.bool_))
    with pytest.raises(ValueError, match=r"^C: element \[0, 1\] = 3000000000 is outside the range of int32"):
        er.mmai(np.ones((2, 2), np.int8), np.ones((2, 2), np.int8), np.array([[0, 3_000_000_000], [0, 0]]))
    with pytest.raises(ValueError, match="^a_scale: unknown format 'e9m0'"):
        er.mma_scaled(np.ones((2, 32), ml_dtypes.float8_e4m3fn), np.ones((32, 2), ml_dtypes.float8_e4m3fn),
                      np.ones((2, 1), np.uint8), np.ones((1, 2), np.uint8), scale_dtype="e9m0")
    with pytest.raises(TypeError, match="^grad: "):
        er.matmul(F32, F32).backward(np.ones((2, 2), np.complex64))
    with pytest.raises(TypeError, match="^a: dtype complex128"):
        er.testing.assert_matmul_valid(np.ones((2, 2), np.complex128), F32, F32)
    with pytest.raises(TypeError, match="^out: dtype bool"):
        er.testing.assert_matmul_valid(F32, F32, np.ones((2, 2), np.bool_))
    r = er.matmul(F32, F32)
    with pytest.raises(ValueError, match="^compute: unknown format 'bf17'"):
        r.tolerance(compute="bf17")
    with pytest.raises(ValueError, match=r"^grad has shape \(3, 3\); the output has shape \(2, 2\)"):
        r.backward(np.ones((3, 3), np.float32))
