"""test_check_tiles.py: on a large output, Result.covers and er.testing.report run the library's check in
tiles (er_check_result: bounded memory) and give exactly what the one pass over the whole output's
bounds gives: the covered array, the count outside, the worst element, the histogram."""
import ml_dtypes
import numpy as np
import pytest

import exactref as er
from exactref._result import _opts_key

N = 1024  # N x N = 2^20 output elements: the size from which an existing Result is checked in tiles
K = 8


@pytest.fixture
def case(rng):
    a = rng.standard_normal((N, K)).astype(ml_dtypes.bfloat16)
    b = rng.standard_normal((K, N)).astype(ml_dtypes.bfloat16)
    r = er.matmul(a, b, dtype="float32")
    out = np.array(r.rounded)
    bits = out.view(np.uint32)
    # some elements moved by a few ulps (outside where the range is narrow), a NaN, an infinity
    idx = rng.choice(N * N, 4000, replace=False)
    bits.reshape(-1)[idx[:3000]] += np.uint32(3)
    bits.reshape(-1)[idx[3000]] = np.uint32(0x7FC00000)
    bits.reshape(-1)[idx[3001]] = np.uint32(0x7F800000)
    return a, b, r, out


def test_tiles_run_and_equal_one_pass(case):
    a, b, r, out = case
    key = _opts_key(r, None, None, False, "normal")
    assert r._core.check(out.view(np.uint32), *key, None) is not None, "the tiled check ran"
    tiled_cov = r.covers(out)  # tiles: no bounds kept yet
    tiled_rep = er.testing.report(r, out)
    # a second Result of the same product, its bounds made first: covers and report go one pass
    r1 = er.matmul(a, b, dtype="float32")
    r1.tolerance()
    assert r1._core.check(out.view(np.uint32), *key, None) is None, "bounds kept: one pass"
    one_cov = r1.covers(out)
    one_rep = er.testing.report(r1, out)
    assert np.array_equal(tiled_cov, one_cov)
    assert 0 < one_rep["outside"] < N * N
    assert tiled_rep == one_rep


def test_tiles_any_order_and_assert(case):
    a, b, r, out = case
    tiled = r.covers(out, standard="any_order")
    r1 = er.matmul(a, b, dtype="float32")
    r1.tolerance(standard="any_order")  # kept: one pass
    assert np.array_equal(tiled, r1.covers(out, standard="any_order"))
    with pytest.raises(AssertionError, match="outside the bound"):
        er.testing.assert_matmul_valid(a, b, out)
    er.testing.assert_matmul_valid(a, b, r.rounded)


def test_assert_returns_a_result_whose_report_is_fresh(rng):
    # assert_matmul_valid makes its Result and the check in one call; the returned Result must not keep
    # that report: a later report on the same (since changed) array is made again, and its dict is new
    a = rng.standard_normal((64, 8)).astype(ml_dtypes.bfloat16)
    b = rng.standard_normal((8, 48)).astype(ml_dtypes.bfloat16)
    out = np.array(er.matmul(a, b, dtype="float32").rounded)
    r = er.testing.assert_matmul_valid(a, b, out)
    first = er.testing.report(r, out)
    assert first["outside"] == 0
    first["outside"] = 99  # the caller's dict: not the one a later report returns
    out.view(np.uint32)[5, 7] += np.uint32(1 << 20)
    rep = er.testing.report(r, out)
    assert rep["outside"] == 1 and rep["worst_index"] == (5, 7)


def test_report_cap_near_the_limit_lists_within_its_buffer(tmp_path):
    # the cap of listed outside indices is the caller's; a huge one must not size the index buffer past
    # its limit (it overflowed to 8 bytes, and the list ran past them): run where the debug allocator
    # sees every write past a buffer
    import os
    import subprocess
    import sys

    code = (
        "import numpy as np, exactref as er\n"
        "from exactref._result import _opts_key\n"
        "a = np.arange(12, dtype=np.float32).reshape(3, 4); b = np.ones((4, 5), np.float32)\n"
        "r = er.matmul(a, b); out = np.array(r.rounded); out.reshape(-1)[[1, 6, 13]] += 1\n"
        "rep = r._core.report(out.view(np.uint32), *_opts_key(r, None, None, False, 'normal'), 2**61 + 1)\n"
        "assert rep['outside'] == 3 and rep['outside_indices'] == [(0, 1), (1, 1), (2, 3)], rep\n"
        "assert rep['outside_indices_complete'] and rep['outside_indices_cap'] == 2**61 + 1\n"
        "print('ok')\n")
    env = dict(os.environ, PYTHONMALLOC="debug", PYTHONDONTWRITEBYTECODE="1")
    p = subprocess.run([sys.executable, "-c", code], env=env, cwd=tmp_path, capture_output=True, text=True,
                       timeout=120)
    assert p.returncode == 0 and p.stdout.strip() == "ok", (p.returncode, p.stdout, p.stderr[-2000:])


def test_report_merge_refuses_a_cap_whose_bytes_overflow():
    # exactref.distributed's merge: the index buffer must hold cap entries; a cap near the limit made its
    # byte count wrap, so an 8-byte buffer passed for 2**61 + 1 entries
    from exactref import _core

    into = _core.report_merge_init((4, 5), _core.format_id("f32"))
    part = bytes(_core.report_merge_init((4, 5), _core.format_id("f32")))
    with pytest.raises(ValueError, match="cap"):
        _core.report_merge(into, part, None, np.zeros(1, np.int64), 2**61 + 1)
    _core.report_merge(into, part, None, np.zeros(3, np.int64), 3)  # a cap its buffer holds: merged
    rep = _core.report_fields(bytes(into), None, 0, False)
    assert rep["outside"] == 0 and rep["outside_indices"] == []
