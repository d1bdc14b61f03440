"""test_result.py: Result's methods against exact rationals and the library's own definitions: bounds,
covers, normal, views, results as inputs, backward, caching."""
from fractions import Fraction

import ml_dtypes
import numpy as np
import pytest

import exactref as er

from conftest import assert_correctly_rounded, exact_product


@pytest.fixture
def bf16_problem(rng):
    a = rng.standard_normal((8, 40)).astype(ml_dtypes.bfloat16)
    b = rng.standard_normal((40, 6)).astype(ml_dtypes.bfloat16)
    return a, b


def test_bounds_are_consistent(bf16_problem):
    a, b = bf16_problem
    r = er.matmul(a, b, dtype="float32")
    tol = r.tolerance()
    low, high = r.finite_range()
    rd = r.rounded.astype(np.float64)
    assert tol.dtype == np.float64 and tol.shape == (8, 6)
    assert (tol > 0).all()
    assert (low.astype(np.float64) >= rd - tol).all() and (high.astype(np.float64) <= rd + tol).all()
    assert (low <= r.rounded).all() and (r.rounded <= high).all()
    assert r.covers(r.rounded).all()
    assert r.covers(low).all() and r.covers(high).all()
    # the next value beyond the range is not covered
    above = np.nextafter(high, np.float32(np.inf))
    assert not r.covers(above).any()
    for kind in ("+inf", "-inf", "nan"):
        assert not r.may_be(kind).any()
    # any_order is never tighter than normal; the standards' names are checked
    assert (r.tolerance(standard="any_order") >= 0).all()
    with pytest.raises(ValueError):
        r.tolerance(standard="no_such_standard")
    # bounds are kept per options: the same array comes back
    assert r.tolerance() is tol
    assert r.tolerance(standard="hopper") is r.tolerance(standard="hopper")
    assert r.tolerance(compute="float32") is r.tolerance(compute="f32")


def test_normal_is_index_order_accumulation_in_f32():
    # f32 index order: (2^24 + 1) + 1 rounds twice to 2^24; the exact sum is 2^24 + 2
    a = er.asarray([[2.0**24, 1.0, 1.0]], "float32")
    b = er.asarray([[1.0], [1.0], [1.0]], "float32")
    r = er.matmul(a, b)
    assert r.rounded.tolist() == [[2.0**24 + 2]]
    assert r.normal().tolist() == [[2.0**24]]
    assert r.normal(compute="float64").tolist() == [[2.0**24 + 2]]
    assert r.normal() is r.normal()
    assert r.covers(r.normal()).all()


def test_exact_encloses_the_exact_value(bf16_problem):
    a, b = bf16_problem
    r = er.matmul(a, b, dtype="bfloat16")
    ex = exact_product(a, b)
    e = r.exact
    assert isinstance(e, er.ExactArray) and e.shape == (8, 6)
    for i in range(8):
        for j in range(6):
            assert Fraction(float(e.lo[i, j])) <= ex[i][j] <= Fraction(float(e.hi[i, j]))
    assert_correctly_rounded(r.rounded, ex)


def test_views_move_everything(bf16_problem):
    a, b = bf16_problem
    r = er.matmul(a, b, dtype="float32")
    t = r.transpose(0, 1)
    assert t.shape == (6, 8)
    np.testing.assert_array_equal(t.rounded, r.rounded.T)
    np.testing.assert_array_equal(t.tolerance(), r.tolerance().T)
    np.testing.assert_array_equal(t.normal(), r.normal().T)
    np.testing.assert_array_equal(t.exact.lo, r.exact.lo.T)
    lo, hi = t.finite_range(standard="any_order")
    lo0, hi0 = r.finite_range(standard="any_order")
    np.testing.assert_array_equal(lo, lo0.T)
    s = r.reshape((4, 12))
    np.testing.assert_array_equal(s.rounded, r.rounded.reshape(4, 12))
    np.testing.assert_array_equal(s.tolerance(), r.tolerance().reshape(4, 12))
    assert s.covers(r.rounded.reshape(4, 12)).all()
    with pytest.raises(ValueError, match="no backward of its own"):
        t.backward(np.ones((6, 8), np.float32))
    with pytest.raises(ValueError, match="cannot become"):
        r.reshape((5, 5))


def test_results_as_inputs(bf16_problem, rng):
    a, b = bf16_problem
    r1 = er.matmul(a, b, dtype="float32")
    w = rng.standard_normal((6, 3)).astype(np.float32)
    r2 = er.matmul(r1, w)
    plain = er.matmul(r1.rounded, w)
    # the exact answer on r1.rounded, rounded once
    np.testing.assert_array_equal(r2.rounded.view(np.uint32), plain.rounded.view(np.uint32))
    # its bounds cover every stored value r1 allows: wider than the plain product's
    assert (r2.tolerance() >= plain.tolerance()).all() and (r2.tolerance() > plain.tolerance()).any()
    # a stored output at the edge of r1's range gives a product r2 covers
    low, high = r1.finite_range()
    for stored in (low, high):
        assert r2.covers(er.matmul(stored, w).rounded).all()
    # other options take r1's bounds with the same options
    assert (r2.tolerance(standard="any_order") >= plain.tolerance(standard="any_order")).all()
    # normal() works on r1's normal()
    n2 = r2.normal()
    assert n2.tolist() == er.matmul(r1.normal(), w).normal().tolist()
    # a result as C, and a view of a result as an input
    r3 = er.mma(a, b, r1)
    assert (r3.tolerance() > er.mma(a, b, r1.rounded).tolerance()).all()
    r4 = er.matmul(r1.transpose(0, 1), r1)
    np.testing.assert_array_equal(r4.rounded, er.matmul(r1.rounded.T.copy(), r1.rounded).rounded)


def test_backward_outputs(bf16_problem, rng):
    a, b = bf16_problem
    r = er.matmul(a, b, dtype="float32")
    grad = rng.standard_normal((8, 6)).astype(np.float32)
    g = r.backward(grad)
    assert g.op == "matmul.backward"
    assert list(g.rounded) == ["grad_A", "grad_B"]
    ga, gb = g.rounded.grad_A, g.rounded["grad_B"]
    assert ga.dtype == ml_dtypes.bfloat16 and ga.shape == (8, 40)
    assert gb.dtype == ml_dtypes.bfloat16 and gb.shape == (40, 6)
    assert_correctly_rounded(ga, exact_product(grad, b.astype(np.float64).T))
    assert_correctly_rounded(gb, exact_product(a.astype(np.float64).T, grad))
    assert g["grad_A"].covers(ga).all()
    tol = g.tolerance()
    assert set(tol) == {"grad_A", "grad_B"} and tol.grad_A.shape == (8, 40)
    with pytest.raises(ValueError, match="several outputs"):
        g.covers(ga)
    cov = g.covers({"grad_A": ga, "grad_B": gb})
    assert cov.grad_A.all() and cov.grad_B.all()
    # options: the gradients' dtype, and another rounding
    g32 = r.backward(grad, dtype="float32")
    assert g32.rounded.grad_A.dtype == np.float32
    gz = r.backward(grad, dtype="float32", rounding="zero")
    assert (np.abs(gz.rounded.grad_B) <= np.abs(g32.rounded.grad_B)).all()
    with pytest.raises(TypeError, match="unexpected options"):
        r.backward(grad, colour="red")
    with pytest.raises(ValueError, match="shape"):
        r.backward(np.ones((3, 3), np.float32))


def test_outputs_class():
    o = er.Outputs([("Q", 1), ("R", 2)])
    assert o.Q == 1 and o["R"] == 2 and list(o) == ["Q", "R"] and len(o) == 2
    with pytest.raises(AttributeError):
        o.S
    with pytest.raises(KeyError):
        o["S"]


def test_boundary():
    r = er.matmul(er.asarray([[1.0]], "float32"), er.asarray([[1.0]], "float32"))
    b = r.boundaries["accumulate"]
    assert b == er.Boundary("accumulate", b.description, "dot") and b.description


def test_overflow_and_specials():
    big = er.asarray([[3.0e38, 3.0e38]], "float32")
    one = er.asarray([[1.0], [1.0]], "float32")
    r = er.matmul(big, one)
    assert r.rounded.tolist() == [[float("inf")]]
    assert r.may_be("+inf").all()
    low, high = r.finite_range()
    assert (np.isnan(low) | (low.astype(np.float64) >= 3.0e38)).all()
    assert r.covers(np.array([[np.inf]], np.float32)).all()
    assert not r.covers(np.array([[-np.inf]], np.float32)).any()
    nan_in = er.asarray([[np.nan, 1.0]], "float32")
    rn = er.matmul(nan_in, one)
    assert np.isnan(rn.rounded).all() and rn.may_be("nan").all()
    assert np.isnan(rn.tolerance()).all()
    with pytest.raises(ValueError, match="kind must be"):
        r.may_be("inf")


def test_threads_share_results(bf16_problem):
    # the GIL is released inside the library: threads asking one result (and its views) for bounds
    # under several standards at once get the same arrays as one thread does
    import threading

    a, b = bf16_problem
    stds = ["normal", "any_order", "hopper", "cdna3", "blackwell", "ampere"]
    serial = er.matmul(a, b, dtype="float32")
    want = {s: serial.tolerance(standard=s) for s in stds}
    r = er.matmul(a, b, dtype="float32")
    t = r.transpose(0, 1)
    got, errors = {}, []

    def work(s):
        try:
            got[s] = (np.array(r.tolerance(standard=s)), np.array(t.tolerance(standard=s)),
                      bool(r.covers(serial.rounded, standard=s).all()))
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(s,)) for s in stds for _ in range(2)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert not errors
    for s in stds:
        np.testing.assert_array_equal(got[s][0], want[s])
        np.testing.assert_array_equal(got[s][1], want[s].T)
        assert got[s][2]


def test_normal_matches_an_independent_float32_loop(bf16_problem):
    # bf16 products are exact in f32; numpy's float32 additions round to nearest even, one at a time
    a, b = bf16_problem
    r = er.matmul(a, b, dtype="float32")
    a32, b32 = a.astype(np.float32), b.astype(np.float32)
    want = np.zeros((a.shape[0], b.shape[1]), np.float32)
    for p in range(a.shape[1]):
        want = (want + np.outer(a32[:, p], b32[p, :]).astype(np.float32)).astype(np.float32)
    np.testing.assert_array_equal(r.normal().view(np.uint32), want.view(np.uint32))
    # and in bf16 output: the same sum, rounded once more
    rb = er.matmul(a, b, dtype="bfloat16")
    np.testing.assert_array_equal(rb.normal().view(np.uint16), want.astype(ml_dtypes.bfloat16).view(np.uint16))


def test_reprs():
    r = er.matmul(er.asarray([[1.0, 2.0]], "float32"), er.asarray([[3.0], [4.0]], "float32"))
    assert repr(r) == "<exactref.Result matmul shape=(1, 1) dtype=float32 guarantee=correctly_rounded>"
    assert repr(r.exact) == "ExactArray([[11.]], exact=True)"
    g = r.backward(er.asarray([[1.0]], "float32"))
    assert repr(g) == "<exactref.Result matmul.backward outputs=['grad_A', 'grad_B']>"
    assert repr(r.boundaries["accumulate"]).startswith("Boundary(kind='accumulate', description=")
    # an inexact element shows both ends of its enclosure
    x = er.matmul(er.asarray([[1.0, 2.0**-60]], "float64"), er.asarray([[1.0], [1.0]], "float64"))
    lo, hi = x.exact.lo[0, 0], x.exact.hi[0, 0]
    assert lo < hi
    assert (lo, hi) == (1.0, float(np.nextafter(1.0, 2.0)))
    assert repr(x.exact) == "ExactArray(lo=[[1.]],\n           hi=[[1.0000000000000002]])"
    assert repr(er.matmul(np.ones((0, 2), np.float32), np.ones((2, 3), np.float32)).exact) == \
        "ExactArray([], shape=(0, 3))"


def test_exact_array_is_numpy_like():
    a = er.asarray([[1.0, 2.0**-60], [3.0, 4.0], [0.5, 0.25]], "float64")
    b = er.asarray([[1.0, 2.0, 0.0], [1.0, 0.0, 1.0]], "float64")
    r = er.matmul(a, b)
    e = r.exact
    assert e.shape == (3, 3) and e.ndim == 2 and e.size == 9 and len(e) == 3 and e.dtype == np.float64
    v = np.asarray(e)
    assert v.dtype == np.float64 and v.shape == (3, 3) and not v.flags.writeable
    np.testing.assert_array_equal(v.view(np.uint64), e.odd.view(np.uint64))
    assert np.asarray(e, dtype=np.float32).dtype == np.float32
    with pytest.raises(ValueError, match="needs a copy"):
        np.asarray(e, dtype=np.float32, copy=False)
    c = np.array(e, copy=True)
    assert c.flags.writeable and not np.shares_memory(c, e.odd)
    rows = list(e)
    assert len(rows) == 3 and all(isinstance(x, er.ExactArray) and x.shape == (3,) for x in rows)
    one = e[0, 0]
    assert one.shape == () and one.lo < one.hi and one.contains(1.0 + 2.0**-60)
    assert float(e[1, 1]) == 6.0 and e[1, 1].is_exact
    assert e.T.shape == (3, 3) and float(e.T[0, 1]) == float(e[1, 0]) == 7.0
    assert not e.is_exact[0, 0] and e.is_exact[1:].all()
    with pytest.raises(TypeError, match="0-d"):
        len(one)
    assert r.ndim == 2 and r.shape == (3, 3) and r.dtype == np.float64
    with pytest.raises(TypeError, match="use result.rounded"):
        np.asarray(r)  # not silently a 0-d object array


def test_docstrings_and_signatures():
    import inspect

    engine = "backend='auto', threads=0, strategy='auto', device=None"
    assert str(inspect.signature(er.matmul)) == f"(A, B, *, dtype=None, rounding='nearest_even', saturate=False, {engine})"
    assert str(inspect.signature(er.mma)) == f"(A, B, C, *, dtype=None, rounding='nearest_even', saturate=False, {engine})"
    for f in (er.asarray, er.matmul, er.mma, er.mma_scaled, er.mmai, er.formats, er.format_info, er.dtype_of,
              er.standards, er.testing.assert_matmul_valid, er.testing.report):
        assert f.__doc__ and len(f.__doc__.strip()) > 40, f.__name__
    for cls in (er.Result, er.ExactArray, er.Boundary, er.Outputs, er.BitArray):
        assert cls.__doc__, cls.__name__
    for name in ("op", "guarantee", "boundaries", "rounded", "exact", "shape", "dtype", "ndim", "stats", "T",
                 "tolerance", "finite_range", "may_be", "covers", "normal", "reshape", "transpose", "backward"):
        assert getattr(er.Result, name).__doc__, name
    assert "standard" in er.Result.tolerance.__doc__ and "any_order" in er.Result.tolerance.__doc__
