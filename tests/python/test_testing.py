"""test_testing.py: er.testing.assert_matmul_valid passes correct outputs and fails a wrong one with an
assert_close-like message whose numbers are the library's bounds."""
import re

import ml_dtypes
import numpy as np
import pytest

import exactref as er


@pytest.fixture
def problem(rng):
    a = rng.standard_normal((16, 64)).astype(ml_dtypes.bfloat16)
    b = rng.standard_normal((64, 8)).astype(ml_dtypes.bfloat16)
    return a, b


def test_passes_a_float32_kernel(problem):
    a, b = problem
    out = a.astype(np.float32) @ b.astype(np.float32)  # numpy's float32 accumulation
    r = er.testing.assert_matmul_valid(a, b, out, standard="any_order")
    assert isinstance(r, er.Result) and r.rounded.dtype == np.float32
    er.testing.assert_matmul_valid(a, b, r.rounded)
    er.testing.assert_matmul_valid(a, b, r.normal())


def test_message_names_the_worst_element(problem):
    a, b = problem
    r = er.matmul(a, b, dtype="float32")
    out = np.array(r.rounded)
    high = r.finite_range()[1]
    # element [3, 5] 7 ulps above its highest allowed value, element [0, 0] 1 ulp above
    bumped = high[3, 5].view(np.uint32) + np.uint32(7) if high[3, 5] > 0 else high[3, 5].view(np.uint32) - np.uint32(7)
    out[3, 5] = np.array([bumped], np.uint32).view(np.float32)[0]
    b00 = high[0, 0].view(np.uint32) + np.uint32(1) if high[0, 0] > 0 else high[0, 0].view(np.uint32) - np.uint32(1)
    out[0, 0] = np.array([b00], np.uint32).view(np.float32)[0]
    with pytest.raises(AssertionError) as e:
        er.testing.assert_matmul_valid(a, b, out)
    msg = str(e.value)
    assert "Elements outside the bound: 2 / 128 (1.6%)" in msg
    assert "Worst element at index (3, 5)" in msg
    assert "7 output ulps beyond the bound" in msg
    assert "(standard 'normal', compute float32, output float32)" in msg
    lo, hi = r.finite_range()
    assert f"allowed [{float(lo[3, 5])!r}, {float(hi[3, 5])!r}]" in msg
    assert f"rounded {float(r.rounded[3, 5])!r}" in msg
    assert f"output {float(out[3, 5])!r}" in msg
    rep = er.testing.report(r, out)
    assert rep["outside"] == 2 and rep["worst_index"] == (3, 5) and rep["ulps_beyond"] == 7
    assert rep["hist"][-1] == 2 and sum(rep["hist"]) == 128 and rep["hist_labels"][-1] == "outside"
    with pytest.raises(AssertionError, match=r"^my kernel\n\n"):
        er.testing.assert_matmul_valid(a, b, out, msg="my kernel")


def test_infinity_not_allowed(problem):
    a, b = problem
    r = er.matmul(a, b, dtype="float32")
    out = np.array(r.rounded)
    out[1, 2] = np.inf
    with pytest.raises(AssertionError, match="an infinity or NaN that no correct implementation produces"):
        er.testing.assert_matmul_valid(a, b, out, standard="any_order")


def test_mma_mmai_and_scaled_routes(rng):
    a = rng.integers(-128, 128, (4, 8)).astype(np.int8)
    b = rng.integers(-128, 128, (8, 3)).astype(np.int8)
    exact = (a.astype(np.int64) @ b.astype(np.int64)).astype(np.int32)
    er.testing.assert_matmul_valid(a, b, exact)
    wrong = exact.copy()
    wrong[2, 1] += 3
    with pytest.raises(AssertionError, match=re.escape("Worst element at index (2, 1)")):
        er.testing.assert_matmul_valid(a, b, wrong)
    fa = rng.standard_normal((4, 32)).astype(ml_dtypes.float8_e4m3fn)
    fb = rng.standard_normal((32, 3)).astype(ml_dtypes.float8_e4m3fn)
    one = er.asarray(np.ones((4, 1)), "float8_e8m0fnu")
    oneb = er.asarray(np.ones((1, 3)), "float8_e8m0fnu")
    ref = er.mma_scaled(fa, fb, one, oneb)
    er.testing.assert_matmul_valid(fa, fb, ref.rounded, scales=(one, oneb))
    c = np.ones((4, 3), np.float32)
    er.testing.assert_matmul_valid(fa, fb, er.mma(fa, fb, c).rounded, c=c)


def test_vacuous_checks_warn(rng):
    a = np.zeros((4, 8), np.float32)
    b = rng.standard_normal((8, 3)).astype(np.float32)
    with pytest.warns(UserWarning, match="all zero or subnormal: the check is vacuous"):
        er.testing.assert_matmul_valid(a, b, np.zeros((4, 3), np.float32))
    # a cancelling sum whose bounds contain zero everywhere
    c = np.array([[1.0, -1.0]], np.float32)
    d = np.array([[1.0], [1.0]], np.float32)
    with pytest.warns(UserWarning, match="would accept an all-zero output"):
        er.testing.assert_matmul_valid(c, d, np.zeros((1, 1), np.float32))


def test_report_names_the_accumulator_the_standard_uses():
    # a blocked standard's acc= and an engine row's D are the accumulator the bounds use (as `exactref
    # check` names it), not the options' compute
    a = np.array([[1, 2], [3, 0.5]], np.float16)
    b = np.array([[1, 0], [2, 1]], np.float16)
    r = er.matmul(a, b, dtype="float32")
    want = {"normal": "float32", "blocked:bk=64,acc=f16": "float16", "blocked:bk=64": "float32",
            "hopper-f16": "float16", "hopper": "float32"}
    for std, acc in want.items():
        assert er.testing.report(r, r.rounded, standard=std)["compute"] == acc, std
    assert er.testing.report(r, r.rounded, compute="float64")["compute"] == "float64"
