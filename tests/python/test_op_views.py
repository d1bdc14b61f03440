"""test_op_views.py: reshape, transpose and .T of operation results (views made by the C library,
er_opres_reshape / er_opres_transpose): every accessor of a view is the parent's moved the same way, a view
is an input of later operations (results as inputs), and a view has no backward of its own."""
import os

import ml_dtypes
import numpy as np
import pytest

import exactref as er

F32 = np.float32
BF16 = ml_dtypes.bfloat16
SEED = int(os.environ.get("EXACTREF_SEED", "31032"))
print(f"test_op_views: EXACTREF_SEED={SEED}")


def rand(shape, dt, k=0, scale=3.0):
    return (np.random.default_rng(SEED + k).standard_normal(shape) * scale).astype(dt)


def bits(a):
    a = np.asarray(a)
    return a.view({1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[a.dtype.itemsize])


def eq_bits(a, b):
    a, b = np.asarray(a), np.asarray(b)
    assert a.shape == b.shape and a.dtype == b.dtype, (a.shape, b.shape, a.dtype, b.dtype)
    assert np.array_equal(bits(a), bits(b))


OPTS = [dict(), dict(standard="any_order"), dict(compute="float64"), dict(ulps=4.0, flush_to_zero=True)]


def check_view(parent, view, move):
    """every accessor of view equals move(the parent's)"""
    eq_bits(view.rounded, move(np.asarray(parent.rounded)))
    assert view.shape == move(np.asarray(parent.rounded)).shape and view.dtype == parent.dtype
    eq_bits(view.exact.lo, move(parent.exact.lo))
    eq_bits(view.exact.hi, move(parent.exact.hi))
    assert view.op == parent.op and view.guarantee == parent.guarantee
    assert list(view.boundaries) == list(parent.boundaries)
    for o in OPTS:
        try:
            parent.tolerance(**o)
        except NotImplementedError as e:  # options the operation does not take: the view refuses them too
            with pytest.raises(NotImplementedError, match=str(e).split(":")[0]):
                view.tolerance(**o)
            continue
        eq_bits(view.tolerance(**o), move(parent.tolerance(**o)))
        lo, hi = view.finite_range(**o)
        plo, phi = parent.finite_range(**o)
        eq_bits(lo, move(np.asarray(plo)))
        eq_bits(hi, move(np.asarray(phi)))
        for kind in ("+inf", "-inf", "nan"):
            assert np.array_equal(view.may_be(kind, **o), move(parent.may_be(kind, **o)))
    # covers of an output 10% off rounded in a few places: the same verdicts, moved
    out = np.array(parent.rounded, copy=True)
    flat = out.reshape(-1)
    pick = slice(None, None, max(1, flat.size // 7))
    flat[pick] = (flat[pick].astype(np.float64) * 1.1 + 1e-3).astype(out.dtype)
    assert np.array_equal(view.covers(move(out)), move(parent.covers(out)))
    assert not parent.covers(out).all()
    try:
        n = parent.normal()
    except NotImplementedError:
        return
    eq_bits(view.normal(), move(np.asarray(n)))


@pytest.mark.parametrize("dt", [BF16, np.float16, F32])
def test_views_move_every_accessor(dt):
    x = rand((3, 4, 5), dt, 1)
    r = er.softmax(x)
    check_view(r, r.transpose(0, 2), lambda a: np.swapaxes(a, 0, 2))
    check_view(r, r.transpose(-1, -2), lambda a: np.swapaxes(a, -1, -2))
    check_view(r, r.reshape((12, 5)), lambda a: a.reshape(12, 5))
    check_view(r, r.reshape(-1), lambda a: a.reshape(-1))
    check_view(r, r.T, lambda a: np.swapaxes(a, -1, -2))
    # a view of a view
    v = r.reshape((12, 5)).T
    check_view(r, v, lambda a: a.reshape(12, 5).T)
    g = er.gelu(rand((6, 7), dt, 2), approximate="tanh")
    check_view(g, g.T, lambda a: a.T)
    ln = er.layer_norm(rand((2, 3, 8), dt, 3), (8,))
    check_view(ln, ln.transpose(0, 1).reshape((3, 16)), lambda a: np.swapaxes(a, 0, 1).reshape(3, 16))


def test_view_of_one_output_of_several():
    q, k, v = (rand((1, 2, 6, 4), F32, 4 + i) for i in range(3))
    r = er.scaled_dot_product_attention(q, k, v)
    with pytest.raises(ValueError, match="several outputs"):
        r.reshape((2, 6, 4))
    out = r["out"]
    check_view(out, out.reshape((2, 6, 4)), lambda a: a.reshape(2, 6, 4))
    check_view(out, out.transpose(1, 2), lambda a: np.swapaxes(a, 1, 2))
    lse = r["lse"]
    check_view(lse, lse.T, lambda a: np.swapaxes(a, -1, -2))


def test_view_errors_and_backward():
    r = er.softmax(rand((4, 6), F32, 8))
    with pytest.raises(ValueError, match="elements"):
        r.reshape((5, 5))
    with pytest.raises(ValueError):
        r.transpose(0, 2)
    with pytest.raises(ValueError, match="no backward of its own"):
        r.T.backward(np.ones((6, 4), F32))
    assert r.backward(np.ones((4, 6), F32)).shape == (4, 6)  # the parent's backward works


@pytest.mark.parametrize("dt", [BF16, F32])
def test_view_as_input(dt):
    """softmax(x).transpose(0, 1) into later operations: the exact answer on the moved rounded, and bounds
    at least as wide as with that array as an exact input"""
    x = rand((8, 5), dt, 9)
    s = er.softmax(x, dim=0)
    v = s.transpose(0, 1)
    moved = np.ascontiguousarray(np.asarray(s.rounded).T)
    for f in (lambda a: er.log_softmax(a), lambda a: er.gelu(a), lambda a: er.add(a, a),
              lambda a: er.softmax(a, dim=0)):
        from_view, on_array = f(v), f(moved)
        eq_bits(from_view.rounded, on_array.rounded)
        eq_bits(from_view.exact.lo, on_array.exact.lo)
        eq_bits(from_view.exact.hi, on_array.exact.hi)
        for o in OPTS[:3]:
            tv, ta = from_view.tolerance(**o), on_array.tolerance(**o)
            assert np.all(tv >= ta)
            lo_v, hi_v = (np.asarray(a, np.float64) for a in from_view.finite_range(**o))
            lo_a, hi_a = (np.asarray(a, np.float64) for a in on_array.finite_range(**o))
            assert np.all(lo_v <= lo_a) and np.all(hi_v >= hi_a)
        if np.any(s.tolerance() > 0):  # the softmax's slack is really taken (bf16: often none to take)
            assert (from_view.tolerance() > on_array.tolerance()).any()
    # the norms take results too
    for f in (lambda a: er.layer_norm(a, (8,)), lambda a: er.rms_norm(a, (8,))):
        from_view, on_array = f(v), f(moved)
        eq_bits(from_view.rounded, on_array.rounded)
        eq_bits(from_view.exact.lo, on_array.exact.lo)
        eq_bits(from_view.exact.hi, on_array.exact.hi)
        for o in OPTS[:3]:
            assert np.all(from_view.tolerance(**o) >= on_array.tolerance(**o))


@pytest.mark.parametrize("op", ["layer_norm", "rms_norm", "log_softmax", "gelu"])
def test_results_as_inputs_cover_stored_extremes(op):
    """an implementation that stored the softmax anywhere its bounds allow (each element at the low or the high
    end of its finite range), then ran the later operation's textbook order on what it stored, is covered by
    the later result made from the softmax's view"""
    x = rand((64, 6), F32, 11)
    s = er.softmax(x, dim=0)
    v = s.T
    lo, hi = (np.ascontiguousarray(np.asarray(a).T) for a in s.finite_range(standard="any_order"))
    pick = np.random.default_rng(SEED + 12).integers(0, 2, lo.shape).astype(bool)
    assert (lo != hi).any()
    f = {"layer_norm": lambda a: er.layer_norm(a, (64,)), "rms_norm": lambda a: er.rms_norm(a, (64,)),
         "log_softmax": er.log_softmax, "gelu": er.gelu}[op]
    later = f(v)
    for stored in (lo, hi, np.where(pick, lo, hi)):
        impl = f(stored).normal()  # the textbook order on the values it stored
        cov = later.covers(impl, standard="any_order")
        assert cov.all(), f"{op}: {int((~cov).sum())} elements outside"
    # the slack is taken: wider than the bounds on the rounded softmax read as exact, which miss some of these
    narrow = f(np.ascontiguousarray(np.asarray(s.rounded).T))
    assert (later.tolerance(standard="any_order") > narrow.tolerance(standard="any_order")).any()
    if op != "log_softmax":  # (log_softmax's own bound is wide enough to hold these by itself)
        mixed = f(np.where(pick, lo, hi)).normal()
        assert not narrow.covers(mixed, standard="any_order").all()


def test_view_chain_other_options():
    """a view of a result built on an earlier result: its bounds under other options are those of the chain
    recomputed with the same options, moved"""
    x = rand((4, 6), F32, 10)
    g = er.gelu(er.softmax(x))
    v = g.T
    for o in OPTS[:3]:
        eq_bits(v.tolerance(**o), g.tolerance(**o).T)
    w = er.log_softmax(v)
    assert np.all(w.tolerance(standard="any_order") >= w.tolerance())
