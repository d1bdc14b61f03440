"""test_scaled_mm.py: float32 scales after a block's sum from Python (er.scaled_mm, er.mma_scaled) through the
library's scaled product: DeepGEMM-style and torch clients, planted bugs, the exact value, the blocked standard."""
import json
import os
import subprocess
from fractions import Fraction

import ml_dtypes
import numpy as np
import pytest

import exactref as er
from conftest import assert_correctly_rounded

F8 = ml_dtypes.float8_e4m3fn
BF16 = ml_dtypes.bfloat16
REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


def _f32(x):
    return np.asarray(x, np.float32)


# ---- a DeepGEMM-style kernel in numpy: A per 1 x 128, B per 128 x 128 f32 scales, promotion every 128 ----

def _deepgemm(a, b, sa, sb, bug=None, blk=128):
    """D = sum over k-blocks of f32(sa sb) * partial, the partial of each block an f32 sum (promoted every
    blk products), accumulated in f32; bug plants one of the mistakes the check must catch."""
    m, k = a.shape
    n = b.shape[1]
    a32, b32 = _f32(a), _f32(b)
    acc = np.zeros((m, n), np.float32)
    nkb = -(-k // blk)
    trunc = np.uint32(0xFFFFFFFF ^ ((1 << 10) - 1))  # a 14-bit accumulator: 13 fraction bits, truncated
    for t in range(nkb):
        ks = slice(t * blk, min(k, (t + 1) * blk))
        part = a32[:, ks] @ b32[ks, :]  # the block's partial in f32 (BLAS: any order, FMA or not)
        ta = t
        if bug == "wrong_block":
            ta = (t + 1) % nkb
        sbt = sb.T if bug == "transposed" else sb
        s = sa[:, ta][:, None] * np.repeat(sbt[t], blk)[None, :n]  # f32(sa sb)
        if bug == "twice":
            s = s * sa[:, ta][:, None]
        if bug == "no_promotion":
            # the tensor core's ~14-bit accumulator kept over all of k: products added one at a time, truncated
            for p in range(ks.start, ks.stop):
                acc = ((acc + s * (a32[:, p][:, None] * b32[p][None, :])).view(np.uint32) & trunc).view(np.float32)
            continue
        acc = acc + s * part
    return acc


@pytest.fixture
def deepgemm_case(rng):
    m, k, n = 8, 256, 256  # 2 k-blocks, 2 n-blocks (a square grid of B's scales: transposable)
    a = (rng.standard_normal((m, k)) * 3).astype(F8)
    b = (rng.standard_normal((k, n)) * 3).astype(F8)
    sa = rng.uniform(0.01, 2, (m, k // 128)).astype(np.float32)
    sb = rng.uniform(0.01, 2, (k // 128, n // 128)).astype(np.float32)
    return a, b, sa, sb


def test_deepgemm_loop_is_covered_and_its_planted_bugs_are_caught(deepgemm_case):
    a, b, sa, sb = deepgemm_case
    r = er.scaled_mm(a, b, sa, sb, out_dtype=np.float32)
    assert r.op == "scaled_mm" and r.shape == (8, 256) and r.rounded.dtype == np.float32
    ok = _deepgemm(a, b, sa, sb)
    assert r.covers(ok).all()  # the default standard: scaled:bk=128
    assert r.covers(ok, standard="scaled:bk=128").all()
    assert er.testing.report(r, ok)["message"] is None
    er.testing.assert_matmul_valid(a, b, ok, scales=(sa, sb))
    assert np.all(r.tolerance() > 0) and np.all(np.isfinite(r.tolerance()))
    lo, hi = r.finite_range()
    assert np.all(lo <= r.rounded) and np.all(r.rounded <= hi)
    for bug in ("twice", "wrong_block", "transposed"):
        bad = _deepgemm(a, b, sa, sb, bug=bug)
        outside = int((~r.covers(bad)).sum())
        assert outside >= 0.9 * bad.size, (bug, outside)
        with pytest.raises(AssertionError, match="outside"):
            er.testing.assert_matmul_valid(a, b, bad, scales=(sa, sb))
    # the other standards are the library's to refuse on a scaled product (they bound other operands)
    with pytest.raises(ValueError):
        r.tolerance(standard="any_order")


def test_deepgemm_without_promotion_is_caught_on_one_signed_data(rng):
    m, k, n = 4, 1024, 128
    a = np.abs(rng.standard_normal((m, k)) * 3).astype(F8)
    b = np.abs(rng.standard_normal((k, n)) * 3).astype(F8)
    sa = rng.uniform(0.5, 2, (m, k // 128)).astype(np.float32)
    sb = rng.uniform(0.5, 2, (k // 128, 1)).astype(np.float32)
    r = er.scaled_mm(a, b, sa, sb, out_dtype="float32")
    assert r.covers(_deepgemm(a, b, sa, sb)).all()
    bad = _deepgemm(a, b, sa, sb, bug="no_promotion")
    outside = int((~r.covers(bad)).sum())
    assert outside >= 0.9 * bad.size, outside


def test_hopper_fp8_partials_take_fp8_operands_and_refuse_f32_ones(deepgemm_case, rng):
    a, b, sa, sb = deepgemm_case
    r = er.scaled_mm(a, b, sa, sb, out_dtype=np.float32)
    assert r.covers(r.rounded, standard="scaled:bk=128,partial=hopper-fp8").all()
    assert np.all(np.isfinite(r.tolerance(standard="scaled:bk=128,partial=hopper-fp8")))
    a32 = rng.standard_normal((4, 128)).astype(np.float32)
    r32 = er.scaled_mm(a32, a32.T.copy(), np.float32(2), np.float32(1), out_dtype="float32")
    with pytest.raises(ValueError, match=r"partial=hopper-fp8' \(its partial hopper-fp8\) models instructions"):
        r32.tolerance(standard="scaled:bk=128,partial=hopper-fp8")
    assert r32.covers(r32.rounded, standard="scaled:bk=128,partial=f32").all()


# ---- the exact value against Fractions ----

def _exact(a, b, fa, fb, bk, bn, alpha=1, beta=0, c=None, bias=None):
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
            s *= Fraction(alpha)
            if c is not None:
                s += Fraction(beta) * Fraction(float(np.asarray(c, np.float64)[i, j]))
            if bias is not None:
                s += Fraction(float(np.asarray(bias, np.float64).reshape(-1)[j]))
            row.append(s)
        out.append(row)
    return out


def test_exact_value_with_block_scales_alpha_beta_c_and_bias(rng):
    m, k, n, bk, bn = 3, 40, 5, 16, 2
    a = (rng.standard_normal((m, k)) * 4).astype(F8)
    b = (rng.standard_normal((k, n)) * 4).astype(F8)
    sa = rng.uniform(0.01, 3, (m, 3)).astype(np.float32)
    sb = rng.uniform(0.01, 3, (3, 3)).astype(np.float32)
    c = rng.standard_normal((m, n)).astype(np.float32)
    bias = rng.standard_normal(n).astype(BF16)
    alpha, beta = float(np.float32(0.7)), 0.5
    want = _exact(a, b, sa, sb, bk, bn, alpha, beta, c, bias)
    for dtype in ("float32", "bfloat16"):
        r = er.mma_scaled(a, b, sa, sb, block=bk, block_n=bn, C=c, alpha=alpha, beta=beta, bias=bias, dtype=dtype)
        assert_correctly_rounded(r.rounded, want)
        r2 = er.scaled_mm(a, b, sa, sb, bias=bias, out_dtype=dtype, alpha=alpha, beta=beta, c=c, block=bk, block_n=bn)
        assert (np.asarray(r.rounded).view(np.uint8) == np.asarray(r2.rounded).view(np.uint8)).all()
        assert r.covers(r.rounded, standard=f"scaled:bk={bk}").all()
    # bfloat16 scales go to the library as they are
    r = er.scaled_mm(a, b, sa.astype(BF16), sb.astype(BF16), out_dtype="float32", block=bk, block_n=bn)
    assert_correctly_rounded(r.rounded, _exact(a, b, sa.astype(BF16), sb.astype(BF16), bk, bn))


def test_torch_shaped_scales_are_reshaped(rng):
    m, k, n = 4, 32, 6
    a = (rng.standard_normal((m, k)) * 4).astype(F8)
    b = (rng.standard_normal((k, n)) * 4).astype(F8)
    ra = rng.uniform(0.1, 2, m).astype(np.float32)
    cb = rng.uniform(0.1, 2, n).astype(np.float32)
    want = _exact(a, b, ra[:, None], cb[None, :], k, 1)
    for sa, sb in ((ra, cb), (ra[:, None], cb[None, :])):
        assert_correctly_rounded(er.scaled_mm(a, b, sa, sb, out_dtype="float32").rounded, want)
    r = er.scaled_mm(a, b, np.float32(0.37), np.array(1.9, np.float32), out_dtype="float32")
    assert_correctly_rounded(r.rounded, _exact(a, b, np.full((m, 1), np.float32(0.37)),
                                               np.full((1, 1), np.float32(1.9)), k, n))
    # out_dtype None: a's format, as torch's
    assert er.scaled_mm(a, b, ra, cb).rounded.dtype == F8
    with pytest.raises(ValueError, match="a_scale has shape|scale_a has shape"):
        er.scaled_mm(a, b, ra[:3], cb)
    with pytest.raises(ValueError, match="bias has shape"):
        er.scaled_mm(a, b, ra, cb, bias=np.zeros(n + 1, np.float32))
    with pytest.raises(NotImplementedError, match="scale_result"):
        er.scaled_mm(a, b, ra, cb, scale_result=np.float32(2))


def test_f32_scales_keep_the_exactness_refusals():
    x = np.float32(1 + 2.0 ** -23)
    with pytest.raises(ValueError, match="not a float32 value"):
        er.mma_scaled(np.ones((1, 4), F8), np.ones((4, 1), F8), 0.37, 1.0)
    with pytest.raises(ValueError, match="infinite scale"):
        er.scaled_mm(np.ones((1, 2), np.float32), np.ones((2, 1), np.float32), np.float32(np.inf), np.float32(1))
    with pytest.raises(ValueError, match="NaN|nan"):
        er.scaled_mm(np.ones((1, 2), np.float32), np.ones((2, 1), np.float32), np.float32(np.nan), np.float32(1))
    with pytest.raises(ValueError, match="not exact"):
        er.scaled_mm(np.ones((1, 1), np.float64), np.ones((1, 1), np.float64), x, np.float32(1))
    with pytest.raises(ValueError, match="alpha"):  # an alpha that is no f32 value: the library's message
        er.scaled_mm(np.ones((1, 1), np.float32), np.ones((1, 1), np.float32), x, x, alpha=0.1)


# ---- torch's CPU _scaled_mm: the scales applied before the sum (order=before) ----

def test_torch_cpu_scaled_mm_is_covered_under_order_before(rng):
    torch = pytest.importorskip("torch")
    if not hasattr(torch, "_scaled_mm"):
        pytest.skip("this torch has no _scaled_mm")
    g = torch.Generator().manual_seed(int(rng.integers(1 << 31)))
    m, k, n = 16, 256, 32
    a = (torch.randn(m, k, generator=g) * 3).to(torch.float8_e4m3fn)
    b = (torch.randn(n, k, generator=g) * 3).to(torch.float8_e4m3fn).t()  # column-major, as torch wants
    cases = [(torch.tensor(.37), torch.tensor(1.9)),  # per tensor
             (torch.rand(m, 1, generator=g) + 0.1, torch.rand(1, n, generator=g) + 0.1)]  # row-wise
    for sa, sb in cases:
        for out_dtype in (torch.float32, torch.bfloat16):
            try:
                out = torch._scaled_mm(a, b, scale_a=sa, scale_b=sb, out_dtype=out_dtype)
            except (RuntimeError, NotImplementedError) as e:
                pytest.skip(f"torch's CPU _scaled_mm does not take these: {e}")
            r = er.scaled_mm(a, b, sa, sb, out_dtype=out_dtype)
            std = "scaled:bk=128,order=before"
            assert r.covers(out, standard=std).all(), (tuple(sa.shape), out_dtype)
            er.testing.assert_matmul_valid(a, b, out, scales=(sa, sb), standard=std)
            # a scale applied twice is caught
            bad = torch._scaled_mm(a, b, scale_a=sa * sa, scale_b=sb, out_dtype=out_dtype)
            assert (~r.covers(bad, standard=std)).sum() >= 0.9 * m * n


# ---- the blocked standard from Python: a numpy blocked loop ----

def _blocked(a, b, bk, drop=None):
    acc = np.zeros((a.shape[0], b.shape[1]), np.float32)
    a32, b32 = _f32(a), _f32(b)
    for t in range(-(-a.shape[1] // bk)):
        if t == drop:
            continue
        ks = slice(t * bk, (t + 1) * bk)
        acc = acc + a32[:, ks] @ b32[ks, :]
    return acc


def test_blocked_standard_on_a_numpy_blocked_loop(rng):
    m, k, n = 16, 4096, 16
    a = rng.standard_normal((m, k)).astype(BF16)
    b = rng.standard_normal((k, n)).astype(BF16)
    r = er.matmul(a, b, dtype="float32")
    ok = _blocked(a, b, 64)
    assert r.covers(ok, standard="blocked:bk=64").all()
    er.testing.assert_matmul_valid(a, b, ok, standard="blocked:bk=64")
    bad = _blocked(a, b, 64, drop=17)
    outside = int((~r.covers(bad, standard="blocked:bk=64")).sum())
    assert outside >= 0.99 * bad.size, outside
    with pytest.raises(AssertionError, match="outside"):
        er.testing.assert_matmul_valid(a, b, bad, standard="blocked:bk=64")
    # the scaled standards belong to scaled products only
    with pytest.raises(ValueError):
        r.tolerance(standard="scaled:bk=64")


# ---- the same verdict as `exactref check --scale-format f32` (its default standard scaled:bk=<block>) ----

def test_scaled_check_agrees_with_the_command(deepgemm_case, tmp_path):
    path = os.environ.get("EXACTREF") or os.path.join(REPO, "build", "exactref")
    if not (os.path.isfile(path) and os.access(path, os.X_OK)):
        pytest.skip("no exactref command built (build/exactref, or EXACTREF=path)")
    a, b, sa, sb = deepgemm_case
    bias = np.linspace(-1, 1, b.shape[1]).astype(np.float32)[None, :]
    ok = _deepgemm(a, b, sa, sb) + bias
    bad = _deepgemm(a, b, sa, sb, bug="wrong_block") + bias
    for name, x in (("a", a.view(np.uint8)), ("b", b.view(np.uint8)), ("sa", sa), ("sb", sb), ("bias", bias),
                    ("ok", ok), ("bad", bad)):
        np.save(tmp_path / f"{name}.npy", x)
    r = er.scaled_mm(a, b, sa, sb, bias=bias, out_dtype="float32")
    for out, arr in (("ok", ok), ("bad", bad)):
        with open(tmp_path / "log.txt", "w") as log:
            rc = subprocess.run([os.path.abspath(path), "check", "a.npy", "b.npy", f"{out}.npy", "--a-format",
                                 "f8E4M3FN", "--b-format", "f8E4M3FN", "--scale-format", "f32", "--a-scale", "sa.npy",
                                 "--b-scale", "sb.npy", "--bias", "bias.npy", "--no-progress", "--json", "rep.json"],
                                cwd=tmp_path, stdout=log, stderr=subprocess.STDOUT).returncode
        with open(tmp_path / "rep.json") as f:
            rep = json.load(f)
        outside = int((~r.covers(arr)).sum())
        assert rc == (0 if out == "ok" else 1), (out, rc, (tmp_path / "log.txt").read_text())
        assert rep["standard"] == "scaled:bk=128" and rep["outside"] == outside, (rep, outside)


def test_saturate_on_an_fp8_output(rng):
    # the exact value beyond e4m3's 448: the saturating cast gives +-448, the plain one NaN (e4m3fn has no inf)
    a = np.full((2, 32), 4.0, F8)
    a[1] *= -1
    b = np.full((32, 3), 4.0, F8)
    sa, sb = np.float32(2), np.float32(1)  # 2 * 32 * 16 = 1024
    sat = er.scaled_mm(a, b, sa, sb, out_dtype=F8, saturate=True)
    plain = er.scaled_mm(a, b, sa, sb, out_dtype=F8)
    assert (np.asarray(sat.rounded, np.float32) == np.array([[448.0] * 3, [-448.0] * 3], np.float32)).all()
    assert np.isnan(np.asarray(plain.rounded, np.float32)).all()
    assert sat.covers(sat.rounded).all() and not sat.covers(plain.rounded).any()
