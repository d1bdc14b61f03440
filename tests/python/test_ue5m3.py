"""test_ue5m3.py: the f8E5M3FNU (UE5M3) scale format in the Python package: its table row, its arrays (the
ml_dtypes dtype float8_e5m3fnu where ml_dtypes has it, 0.7 on; bit patterns, er.BitArray, before), conversion
bit for bit against a decoder written here from the format's definition and against ml_dtypes, and its use
as a block scale of f4E2M1FN in mma_scaled against an exact-rational reference."""
from fractions import Fraction

import ml_dtypes
import numpy as np
import pytest

import exactref as er

from conftest import assert_correctly_rounded


def ue5m3_value(p):
    """The value of a UE5M3 pattern from its definition (no sign, E5 bias 15, M3, 0xff NaN), or None."""
    if p == 0xFF:
        return None
    e, m = p >> 3, p & 7
    return Fraction(m, 8) * Fraction(2) ** -14 if e == 0 else (1 + Fraction(m, 8)) * Fraction(2) ** (e - 15)


def bits_of(x):
    """The uint8 patterns of a UE5M3 array, whichever way the package holds it."""
    return x.bits if isinstance(x, er.BitArray) else np.asarray(x).view(np.uint8)


def ue5m3_array(bits):
    """UE5M3 values from raw patterns, as the package reads raw bits with a declared format."""
    return er.asarray(np.asarray(bits, np.uint8), "float8_e5m3fnu")


def test_row():
    f = er.format_info("float8_e5m3fnu")
    assert f == er.format_info("F8E5M3FNU")
    assert f["name"] == "f8E5M3FNU" and f["alias"] == "float8_e5m3fnu"
    assert (f["width"], f["exponent_bits"], f["significand_bits"], f["bias"]) == (8, 5, 3, 15)
    assert not f["has_inf"] and f["has_nan"] and not f["is_signed"]
    assert (f["emin"], f["emax"], f["max_finite_bits"], f["min_subnormal_bits"]) == (-14, 16, 0xFE, 0x01)


def test_every_pattern_decodes_and_round_trips():
    bits = np.arange(256, dtype=np.uint8)
    held = ue5m3_array(bits)
    np.testing.assert_array_equal(bits_of(held), bits)
    x = er.asarray(held, "float64")
    for p in range(256):
        want = ue5m3_value(p)
        if want is None:
            assert np.isnan(x[p])
        else:
            assert Fraction(float(x[p])) == want, hex(p)
    back = er.asarray(x, "float8_e5m3fnu")
    np.testing.assert_array_equal(bits_of(back), bits)


def test_rounding_overflow_and_sign():
    got = er.asarray([[1.0, 1.0625, 114688.0, 118784.0, 118785.0, 2.0**-17, 2.0**-18, -0.0, -1.0]], "float8_e5m3fnu")
    assert bits_of(got).tolist() == [[0x78, 0x78, 0xFE, 0xFE, 0xFF, 0x01, 0x00, 0x00, 0xFF]]


def test_same_bits_as_ml_dtypes(rng):
    ml = getattr(ml_dtypes, "float8_e5m3fnu", None)
    if ml is None:
        pytest.skip("this ml_dtypes has no float8_e5m3fnu (0.7 on has it)")
    # float32 sources (ml_dtypes rounds those once): wide magnitudes, negatives, ties, specials
    x = (rng.standard_normal(20000) * 2.0 ** rng.integers(-24, 20, 20000)).astype(np.float32)
    x = np.concatenate([x, np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 118784.0, 118785.0, 2.0**-18],
                                    np.float32)])
    ours = bits_of(er.asarray(x, "float8_e5m3fnu"))
    theirs = x.astype(ml).view(np.uint8)
    np.testing.assert_array_equal(ours, theirs)
    assert er.dtype_of("float8_e5m3fnu") == np.dtype(ml)


def test_scales_in_mma_scaled(rng):
    m, k, n, block = 3, 48, 2, 16
    a = rng.integers(-6, 7, (m, k)).astype(np.float64).clip(-6, 6).astype(ml_dtypes.float4_e2m1fn)
    b = (rng.integers(-12, 13, (k, n)) / 2).astype(ml_dtypes.float4_e2m1fn)
    sa_bits = rng.integers(0x50, 0xA0, (m, k // block)).astype(np.uint8)
    sb_bits = rng.integers(0x50, 0xA0, (k // block, n)).astype(np.uint8)
    sa = ue5m3_array(sa_bits)
    sb = ue5m3_array(sb_bits)
    r = er.mma_scaled(a, b, sa, sb)  # block 16 by default for these scales
    af, bf = a.astype(np.float64), b.astype(np.float64)
    ex = [[sum(Fraction(float(af[i, p])) * ue5m3_value(int(sa_bits[i, p // block])) * Fraction(float(bf[p, j]))
               * ue5m3_value(int(sb_bits[p // block, j])) for p in range(k)) for j in range(n)] for i in range(m)]
    assert_correctly_rounded(r.rounded, ex)
    # the bounds of a device's answer take the UE5M3 scales as they take the others
    for std in ("normal", "any_order"):
        t = np.asarray(r.tolerance(standard=std))
        assert t.shape == (m, n) and (t >= 0).all() and np.isfinite(t).all()
    assert np.asarray(r.covers(r.rounded)).all()
    off = np.array(r.rounded, np.float32)
    off[1, 1] = np.float32(float(off[1, 1]) + 4 * float(np.asarray(r.tolerance(standard="any_order"))[1, 1]) + 1.0)
    cov = np.asarray(r.covers(off))
    assert not cov[1, 1] and cov.sum() == m * n - 1


def test_scales_of_other_elements_are_refused():
    a = np.ones((2, 16), ml_dtypes.float8_e4m3fn)
    b = np.ones((16, 2), ml_dtypes.float8_e4m3fn)
    s = ue5m3_array(np.full((2, 1), 0x78))
    t = ue5m3_array(np.full((1, 2), 0x78))
    with pytest.raises(ValueError, match="f4E2M1FN"):
        er.mma_scaled(a, b, s, t)
