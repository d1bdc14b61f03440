# test_cutile_samples.py: NVIDIA's cuTile samples (tests/interp/cutile/sample_*.mlir, exported by gen_cutile.py)
# run by `exactref interp --cutile` in point mode, each against a numpy emulation written here: every
# float operation of the kernel's order in float32 (sums in index order, a*b + c fused where cuTile fuses
# it, mma as the exact sum rounded once, exp2 and rsqrt correctly rounded, approximate division computed
# correctly rounded with flush_to_zero), compared bit for bit.  The command is build/exactref, or
# $EXACTREF_CLI; without it the tests skip.  Random inputs from conftest's rng (EXACTREF_SEED, printed).
import os
import re
import subprocess
from fractions import Fraction

import numpy as np
import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CUTILE = os.path.join(ROOT, "tests", "interp", "cutile")


def cli():
    exe = os.environ.get("EXACTREF_CLI") or os.path.join(ROOT, "build", "exactref")
    if not os.access(exe, os.X_OK):
        pytest.skip("the exactref command is not built (%s)" % exe)
    return exe


def _args(tmp, args):
    """The command-line arguments binding args (arrays saved as .npy, or ("list", [arrays])) and, per
    argument, (kind, its first parameter's number, the list's length)."""
    cmd, pnum, names = [], 0, []
    os.makedirs(tmp, exist_ok=True)
    for i, a in enumerate(args):
        if isinstance(a, tuple):
            files = []
            for k, e in enumerate(a[1]):
                f = os.path.join(tmp, "a%d_%d.npy" % (i, k))
                np.save(f, e)
                files.append(f)
            cmd.append("list:" + ",".join(files))
            names.append(("list", pnum, len(a[1])))
            pnum += 2
        else:
            f = os.path.join(tmp, "a%d.npy" % i)
            np.save(f, a)
            cmd.append(f)
            names.append(("arr", pnum, 0))
            pnum += 1 + 2 * a.ndim
    return cmd, names


def run(tmp, kernel, grid, args):
    """args: arrays (saved as .npy) or ("list", [arrays]); returns (rc, stderr, outputs by parameter)."""
    exe = cli()
    cmd, names = _args(tmp, args)
    out = os.path.join(tmp, "out")
    p = subprocess.run([exe, "interp", os.path.join(CUTILE, kernel + ".mlir"), "--cutile", "--grid", ",".join(map(str, grid))] + cmd +
                       ["-o", out], capture_output=True, text=True)
    res = []
    for kind, n, cnt in names:
        if kind == "arr":
            f = os.path.join(out, "arg%d.npy" % n)
            res.append(np.load(f) if os.path.exists(f) else None)
        else:
            res.append([np.load(os.path.join(out, "arg%d.%d.npy" % (n, k))) if os.path.exists(os.path.join(out, "arg%d.%d.npy" % (n, k))) else None
                        for k in range(cnt)])
    return p.returncode, p.stdout + p.stderr, res


def check(tmp, kernel, grid, args, device, standard=None):
    """Bounds mode: `exactref interp --check DIR` with device's arrays (by argument number; a list
    argument's value is a list of arrays) as DIR/PARAM.npy (DIR/PARAM.K.npy for a list's arrays).
    Returns (rc, the log, the number of elements outside)."""
    exe = cli()
    cmd, names = _args(tmp, args)
    cdir = os.path.join(tmp, "device")
    os.makedirs(cdir, exist_ok=True)
    for i, d in device.items():
        kind, n, cnt = names[i]
        if kind == "arr":
            np.save(os.path.join(cdir, "arg%d.npy" % n), np.ascontiguousarray(d))
        else:
            for k, e in enumerate(d):
                np.save(os.path.join(cdir, "arg%d.%d.npy" % (n, k)), np.ascontiguousarray(e))
    js = os.path.join(tmp, "check.json")
    p = subprocess.run([exe, "interp", os.path.join(CUTILE, kernel + ".mlir"), "--cutile", "--grid", ",".join(map(str, grid))] + cmd +
                       ["--check", cdir, "--json", js] + (["--standard", standard] if standard else []), capture_output=True, text=True)
    log = p.stdout + p.stderr
    outside = sum(int(m) for m in re.findall(r"elements outside\s+(\d+)", log))
    return p.returncode, log, outside


# ---- float32 arithmetic, exactly

F32 = np.float32


def rnd(q):
    """The rational q rounded once to nearest even into float32."""
    q = Fraction(q)
    if q == 0:
        return F32(0.0)
    s, a = (-1 if q < 0 else 1), abs(q)
    e = a.numerator.bit_length() - a.denominator.bit_length()
    if Fraction(2) ** e > a:
        e -= 1
    e = max(e, -126)
    sc = a / Fraction(2) ** (e - 23)
    n = sc.numerator // sc.denominator
    r = sc - n
    if r > Fraction(1, 2) or (r == Fraction(1, 2) and n % 2):
        n += 1
    v = n * Fraction(2) ** (e - 23)
    if v >= 2 ** 128:
        return F32(s * np.inf)
    return F32(s * float(v))


def fr(x):
    return Fraction(float(x))


def fma(a, b, c):
    a, b, c = np.broadcast_arrays(np.asarray(a, F32), np.asarray(b, F32), np.asarray(c, F32))
    out = np.empty(a.shape, F32)
    for i in np.ndindex(a.shape):
        out[i] = rnd(fr(a[i]) * fr(b[i]) + fr(c[i]))
    return out


def mma(a, b, c):
    """sum_k a[i,k] b[k,j] + c[i,j], exact, rounded once to float32."""
    a = np.asarray(a, np.float64)
    b = np.asarray(b, np.float64)
    out = np.empty(c.shape, F32)
    for i in range(a.shape[0]):
        for j in range(b.shape[1]):
            s = fr(c[i, j])
            for k in range(a.shape[1]):
                s += fr(a[i, k]) * fr(b[k, j])
            out[i, j] = rnd(s)
    return out


def rowsum(x):
    """reduce with identity 0 in index order: acc = x_k + acc."""
    acc = np.zeros(x.shape[0], F32)
    for k in range(x.shape[1]):
        acc = (x[:, k] + acc).astype(F32)
    return acc.reshape(-1, 1)


def rowmax(x):
    acc = np.full(x.shape[0], -np.inf, F32)
    for k in range(x.shape[1]):
        acc = np.maximum(x[:, k], acc)
    return acc.reshape(-1, 1)


def rsqrt(x):
    """1/sqrt(x) rounded once: the candidate checked against its neighbours' midpoints exactly."""
    out = np.empty(x.shape, F32)
    for i in np.ndindex(x.shape):
        v = fr(x[i])
        y = F32(1.0 / np.sqrt(np.float64(x[i])))
        for _ in range(4):
            lo = (fr(np.nextafter(y, F32(0))) + fr(y)) / 2
            hi = (fr(y) + fr(np.nextafter(y, F32(np.inf)))) / 2
            if lo * lo * v > 1:      # 1/sqrt(v) < lo
                y = np.nextafter(y, F32(0))
            elif hi * hi * v < 1:    # 1/sqrt(v) > hi
                y = np.nextafter(y, F32(np.inf))
            else:
                break
        out[i] = y
    return out


def ftz(x):
    x = np.asarray(x, F32).copy()
    x[(x != 0) & (np.abs(x) < F32(2.0 ** -126))] = 0.0 * np.sign(x[(x != 0) & (np.abs(x) < F32(2.0 ** -126))])
    return x


def exp2_ftz(x):
    """exp2 with flush_to_zero, correctly rounded: binary64 exp2 (within an ulp of binary64) rounded to
    float32, asserted to be far from a rounding boundary of float32."""
    x = ftz(x)
    out = np.empty(x.shape, F32)
    for i in np.ndindex(x.shape):
        e = np.exp2(np.float64(x[i]))
        r = F32(e)
        if np.isfinite(e) and e != 0 and r != 0:
            m_lo = (np.float64(np.nextafter(r, F32(0))) + np.float64(r)) / 2
            m_hi = (np.float64(r) + np.float64(np.nextafter(r, F32(np.inf)))) / 2
            assert min(abs(e - m_lo), abs(e - m_hi)) > 4 * np.spacing(e), "exp2(%r) is too near a float32 midpoint" % x[i]
        out[i] = r
    return ftz(out)


def div_ftz(a, b):
    return ftz((ftz(a) / ftz(b)).astype(F32))


def same_bits(got, want, what):
    assert got is not None, what + ": no output"
    g = np.asarray(got, F32).view(np.uint32)
    w = np.asarray(want, F32).view(np.uint32)
    bad = np.argwhere(g != w)
    assert bad.size == 0, "%s: %d elements differ, first %s: %r, expected %r" % (what, len(bad), bad[0], got[tuple(bad[0])], want[tuple(bad[0])])


# ---- the samples

def test_transpose(tmp_path, rng):
    r = rng
    x = r.standard_normal((32, 48)).astype(F32)
    rc, log, out = run(str(tmp_path), "sample_transpose", (2, 3), [x, np.zeros((48, 32), F32)])
    assert rc == 0, log
    same_bits(out[1], x.T, "transpose")


def gemm_steps(a, b, bk):
    acc = np.zeros((a.shape[0], b.shape[1]), F32)
    for k in range(0, a.shape[1], bk):
        acc = mma(a[:, k:k + bk], b[k:k + bk, :], acc)
    return acc


def test_bmm(tmp_path, rng):
    r = rng
    a = r.standard_normal((2, 16, 48)).astype(np.float16)
    b = r.standard_normal((2, 48, 32)).astype(np.float16)
    rc, log, out = run(str(tmp_path), "sample_bmm", (2, 1, 2), [a, b, np.zeros((2, 16, 32), F32)])
    assert rc == 0, log
    same_bits(out[2], np.stack([gemm_steps(a[i], b[i], 16) for i in range(2)]), "batched matmul")


def test_splitk(tmp_path, rng):
    """blocks (x, y, z), x fastest: each adds its k tiles z, z + 2, ... with an atomic reduction (f32 addf)."""
    r = rng
    a = r.standard_normal((16, 64)).astype(np.float16)
    b = r.standard_normal((64, 16)).astype(np.float16)
    c = np.zeros((16, 16), F32)
    rc, log, out = run(str(tmp_path), "sample_splitk", (1, 1, 2), [a, b, c])
    assert rc == 0, log
    want = np.zeros((16, 16), F32)
    for z in range(2):
        acc = np.zeros((16, 16), F32)
        for k in range(z, 4, 2):
            acc = mma(a[:, 16 * k:16 * k + 16], b[16 * k:16 * k + 16, :], acc)
        want = (want + acc).astype(F32)
    same_bits(out[2], want, "split-k matmul")


def test_group_gemm(tmp_path, rng):
    """group g = bid(2) multiplies As[g] by Bs[g] into Cs[g]: lists of arrays of different k."""
    r = rng
    shapes = [(16, 32, 16), (16, 48, 16)]  # (m, k, n) per group
    As = [r.standard_normal((m, k)).astype(np.float16) for m, k, n in shapes]
    Bs = [r.standard_normal((k, n)).astype(np.float16) for m, k, n in shapes]
    Cs = [np.zeros((m, n), F32) for m, k, n in shapes]
    rc, log, out = run(str(tmp_path), "sample_group_gemm", (1, 1, 2), [("list", As), ("list", Bs), ("list", Cs)])
    assert rc == 0, log
    for g in range(2):
        same_bits(out[2][g], gemm_steps(As[g], Bs[g], 16), "group GEMM, group %d" % g)
    # a grid wider than the groups' tiles reads outside a view: refused, nothing written
    rc, log, out = run(str(tmp_path / "wide"), "sample_group_gemm", (2, 1, 2), [("list", As), ("list", Bs), ("list", Cs)])
    assert rc == 1 and "outside the index space" in log, log


def layernorm_fwd(x, w, b):
    n = x.shape[1]
    mean = (rowsum(x) / F32(n)).astype(F32)
    xc = (x - mean).astype(F32)
    var = (rowsum((xc * xc).astype(F32)) / F32(n)).astype(F32)
    rstd = rsqrt((var + F32(1e-5)).astype(F32))
    y = fma((xc * rstd).astype(F32), w.reshape(1, -1), b.reshape(1, -1))
    return y, mean.ravel(), rstd.ravel()


def test_layernorm_fwd(tmp_path, rng):
    r = rng
    x = (r.standard_normal((4, 64)) * 3 + 1).astype(F32)
    w = r.standard_normal(64).astype(F32)
    b = r.standard_normal(64).astype(F32)
    rc, log, out = run(str(tmp_path), "sample_layernorm_fwd", (4,), [x, w, b, np.zeros_like(x), np.zeros(4, F32), np.zeros(4, F32)])
    assert rc == 0, log
    y, mean, rstd = layernorm_fwd(x, w, b)
    same_bits(out[4], mean, "layer norm mean")
    same_bits(out[5], rstd, "layer norm rstd")
    same_bits(out[3], y, "layer norm y")


def ln_bwd_rows(x, dy, w, mean, rstd, rowsum_fn=None):
    """dx per row and xhat, every float32 operation of the kernel's order; rowsum_fn: the row sums' order."""
    rowsum_fn = rowsum_fn or rowsum
    dx, xh = np.zeros_like(x), np.zeros_like(x)
    for i in range(x.shape[0]):
        xi, dyi = x[i:i + 1], dy[i:i + 1]
        xhat = ((xi - mean[i]).astype(F32) * rstd[i]).astype(F32)
        wdy = (w.reshape(1, -1) * dyi).astype(F32)
        c1 = (rowsum_fn((xhat * wdy).astype(F32)) / F32(64)).astype(F32)
        c2 = (rowsum_fn(wdy) / F32(64)).astype(F32)
        dx[i] = ((wdy - fma(xhat, c1, c2)).astype(F32) * rstd[i]).astype(F32)
        xh[i] = xhat.ravel()
    return dx, xh


def ln_bwd_partials(dy, xh, dw0, db0, order):
    """dw and db of each group of rows (row i in group i % 2) as a device taking the lock in the given order of
    rows (blocks) stores them: dw = fma(dy, xhat, dw), db = db + dy, one row after another."""
    dw, db = dw0.copy(), db0.copy()
    for i in order:
        g = i % 2
        dw[g] = fma(dy[i:i + 1], xh[i:i + 1], dw[g:g + 1]).ravel()
        db[g] = (db[g] + dy[i]).astype(F32)
    return dw, db


def test_layernorm_bwd(tmp_path, rng):
    """dx per row; dw and db accumulated per group of rows under the spin lock, rows in block order."""
    r = rng
    x = r.standard_normal((4, 64)).astype(F32)
    dy = r.standard_normal((4, 64)).astype(F32)
    w = r.standard_normal(64).astype(F32)
    _, mean, rstd = layernorm_fwd(x, w, np.zeros(64, F32))
    dw0 = np.zeros((2, 64), F32)
    db0 = r.standard_normal((2, 64)).astype(F32)
    locks = np.zeros(2, np.int32)
    rc, log, out = run(str(tmp_path), "sample_layernorm_bwd", (4,), [x, dy, w, mean, rstd, np.zeros_like(x), dw0, db0, locks])
    assert rc == 0, log
    dx, xh = ln_bwd_rows(x, dy, w, mean, rstd)
    dw, db = ln_bwd_partials(dy, xh, dw0, db0, range(4))
    same_bits(out[5], dx, "layer norm dx")
    same_bits(out[6], dw, "layer norm dw (under the lock)")
    same_bits(out[7], db, "layer norm db (under the lock)")
    assert (out[8] == 0).all()  # the locks released


def test_rmsnorm(tmp_path, rng):
    r = rng
    x = r.standard_normal((4, 64)).astype(F32)
    w = r.standard_normal(64).astype(F32)
    rc, log, out = run(str(tmp_path), "sample_rmsnorm", (4,), [x, w, np.zeros_like(x)])
    assert rc == 0, log
    ms = (rowsum((x * x).astype(F32)) / F32(64)).astype(F32)
    want = ((x * rsqrt((ms + F32(1e-6)).astype(F32))).astype(F32) * w.reshape(1, -1)).astype(F32)
    same_bits(out[2], want, "RMS norm")


def fmha(q, k, v, causal):
    fm, fn, fd = 16, 16, 32
    scale = F32((1.0 / fd ** 0.5) * 1.4426950408889634)
    o = np.zeros((q.shape[0], fd), F32)
    for qb in range(q.shape[0] // fm):
        qq = q[qb * fm:(qb + 1) * fm]
        m = np.full((fm, 1), -np.inf, F32)
        l = np.zeros((fm, 1), F32)
        acc = np.zeros((fm, fd), F32)
        for j in range(qb + 1 if causal else k.shape[0] // fn):
            kk, vv = k[j * fn:(j + 1) * fn], v[j * fn:(j + 1) * fn]
            s = (mma(qq, kk.T, np.zeros((fm, fn), F32)) * scale).astype(F32)
            if causal:
                rows = np.arange(fm).reshape(-1, 1) + qb * fm
                cols = np.arange(fn).reshape(1, -1) + j * fn
                s = np.where(cols > rows, F32(-np.inf), s).astype(F32)
            m_new = np.maximum(m, rowmax(s))
            p = exp2_ftz((s - m_new).astype(F32))
            alpha = exp2_ftz((m - m_new).astype(F32))
            l = fma(l, alpha, rowsum(p))
            acc = mma(p.astype(np.float16), vv, (acc * alpha).astype(F32))
            m = m_new
        o[qb * fm:(qb + 1) * fm] = div_ftz(acc, l)
    return o


@pytest.mark.parametrize("causal", [False, True])
def test_fmha(tmp_path, rng, causal):
    r = rng
    q = r.standard_normal((32, 32)).astype(np.float16)
    k = r.standard_normal((32, 32)).astype(np.float16)
    v = r.standard_normal((32, 32)).astype(np.float16)
    rc, log, out = run(str(tmp_path), "sample_fmha_causal" if causal else "sample_fmha", (2,), [q, k, v, np.zeros((32, 32), F32)])
    assert rc == 0, log
    same_bits(out[3], fmha(q, k, v, causal), "FMHA" + (" causal" if causal else ""))


def test_fmha_tail_refused(tmp_path, rng):
    """the sample's EVEN_K=False case on this path: 40 keys in tiles of 16 load the last tile's 8 lanes
    past the end with no padding; their undefined values reach the output, which is refused."""
    r = rng
    q = r.standard_normal((16, 32)).astype(np.float16)
    k = r.standard_normal((40, 32)).astype(np.float16)
    v = r.standard_normal((40, 32)).astype(np.float16)
    rc, log, out = run(str(tmp_path), "sample_fmha", (1,), [q, k, v, np.zeros((16, 32), F32)])
    assert rc == 1 and "interp.ub" in log and "undefined" in log, log
    assert out[3] is None  # nothing written


# ---- bounds mode (`exactref interp --check`): each sample's legal device-like outputs covered, planted bugs caught


def rowsum_rev(x):
    """a reduce in another legal order: the terms from the last to the first."""
    return rowsum(x[:, ::-1])


def ulps_off(a, flat, k):
    """a copy of a with element flat moved k ulps (float32) up."""
    a = np.array(a, F32, order="C", copy=True)
    v = a.reshape(-1)
    for _ in range(k):
        v[flat] = np.nextafter(v[flat], F32(np.inf))
    return a


def covered(tmp, kernel, grid, args, device, standard=None):
    rc, log, n = check(tmp, kernel, grid, args, device, standard)
    assert rc == 0 and n == 0, log
    return log


def caught(tmp, kernel, grid, args, device, what, standard=None):
    rc, log, n = check(tmp, kernel, grid, args, device, standard)
    assert rc == 1 and n > 0, "%s not caught: %s" % (what, log)
    return n


def test_bounds_transpose(tmp_path, rng):
    x = rng.standard_normal((32, 48)).astype(F32)
    args = [x, np.zeros((48, 32), F32)]
    covered(str(tmp_path / "ok"), "sample_transpose", (2, 3), args, {1: x.T})
    bad = x.T.copy()
    bad[7:, 5] = x.T[:-7, 5]  # a wrong tile index: a column shifted
    caught(str(tmp_path / "shift"), "sample_transpose", (2, 3), args, {1: bad}, "a shifted column")
    rc, log, n = check(str(tmp_path / "two"), "sample_transpose", (2, 3), args, {1: ulps_off(x.T, 77, 2)})
    assert rc == 1 and n == 1 and "2 ulps beyond" in log, log


def test_bounds_bmm(tmp_path, rng):
    a = rng.standard_normal((2, 16, 48)).astype(np.float16)
    b = rng.standard_normal((2, 48, 32)).astype(np.float16)
    args = [a, b, np.zeros((2, 16, 32), F32)]
    # tensor-core-like: the whole k range summed exactly, rounded once (another legal accumulation)
    dev = np.stack([mma(a[i], b[i], np.zeros((16, 32), F32)) for i in range(2)])
    covered(str(tmp_path / "ok"), "sample_bmm", (2, 1, 2), args, {2: dev}, "any_order")
    skipped = np.stack([gemm_steps(a[i][:, :32], b[i][:32], 16) for i in range(2)])  # the last k block skipped
    caught(str(tmp_path / "skip"), "sample_bmm", (2, 1, 2), args, {2: skipped}, "a skipped k block", "any_order")


def test_bounds_splitk(tmp_path, rng):
    """the atomic adds of the two k halves land in either order on a device."""
    a = rng.standard_normal((16, 64)).astype(np.float16)
    b = rng.standard_normal((64, 16)).astype(np.float16)
    args = [a, b, np.zeros((16, 16), F32)]
    parts = []
    for z in range(2):
        acc = np.zeros((16, 16), F32)
        for k in range(z, 4, 2):
            acc = mma(a[:, 16 * k:16 * k + 16], b[16 * k:16 * k + 16, :], acc)
        parts.append(acc)
    for order in ([0, 1], [1, 0]):
        want = np.zeros((16, 16), F32)
        for z in order:
            want = (want + parts[z]).astype(F32)
        covered(str(tmp_path / ("ok%d" % order[0])), "sample_splitk", (1, 1, 2), args, {2: want})
    caught(str(tmp_path / "skip"), "sample_splitk", (1, 1, 2), args, {2: parts[0]}, "a block's atomic add skipped")


def test_bounds_group_gemm(tmp_path, rng):
    """lists of arrays: --check reads each array's DIR/PARAM.K.npy."""
    shapes = [(16, 32, 16), (16, 48, 16)]
    As = [rng.standard_normal((m, k)).astype(np.float16) for m, k, n in shapes]
    Bs = [rng.standard_normal((k, n)).astype(np.float16) for m, k, n in shapes]
    args = [("list", As), ("list", Bs), ("list", [np.zeros((m, n), F32) for m, k, n in shapes])]
    dev = [mma(As[g], Bs[g], np.zeros((16, 16), F32)) for g in range(2)]
    log = covered(str(tmp_path / "ok"), "sample_group_gemm", (1, 1, 2), args, {2: dev}, "any_order")
    assert log.count("elements outside") == 2, log  # both arrays judged
    bad = [dev[0], gemm_steps(As[1][:, :32], Bs[1][:32], 16)]  # group 1's last k block skipped
    caught(str(tmp_path / "skip"), "sample_group_gemm", (1, 1, 2), args, {2: bad}, "a skipped k block in group 1", "any_order")
    # --bounds writes each list array's lo / hi as PARAM.K.lo.npy / PARAM.K.hi.npy, holding the device's values
    cmd, names = _args(str(tmp_path / "bd"), args)
    bd = str(tmp_path / "bd" / "bounds")
    os.makedirs(bd)
    p = subprocess.run([cli(), "interp", os.path.join(CUTILE, "sample_group_gemm.mlir"), "--cutile", "--grid", "1,1,2"] + cmd +
                       ["--bounds", bd, "--standard", "any_order"], capture_output=True, text=True)
    assert p.returncode == 0, p.stdout + p.stderr
    for g in range(2):
        lo = np.load(os.path.join(bd, "arg%d.%d.lo.npy" % (names[2][1], g)))
        hi = np.load(os.path.join(bd, "arg%d.%d.hi.npy" % (names[2][1], g)))
        assert lo.shape == (16, 16) and (lo <= dev[g]).all() and (dev[g] <= hi).all() and (lo < hi).any()


def test_bounds_layernorm_fwd(tmp_path, rng):
    x = (rng.standard_normal((4, 64)) * 3 + 1).astype(F32)
    w = rng.standard_normal(64).astype(F32)
    b = rng.standard_normal(64).astype(F32)
    args = [x, w, b, np.zeros_like(x), np.zeros(4, F32), np.zeros(4, F32)]
    # the row sums in reverse order (reduce promises no order)
    n = 64
    mean = (rowsum_rev(x) / F32(n)).astype(F32)
    xc = (x - mean).astype(F32)
    var = (rowsum_rev((xc * xc).astype(F32)) / F32(n)).astype(F32)
    rstd = rsqrt((var + F32(1e-5)).astype(F32))
    y = fma((xc * rstd).astype(F32), w.reshape(1, -1), b.reshape(1, -1))
    covered(str(tmp_path / "ok"), "sample_layernorm_fwd", (4,), args, {3: y, 4: mean.ravel(), 5: rstd.ravel()})
    # a wrong mask: the last column left out of the mean
    bad_mean = (rowsum(x[:, :63]) / F32(n)).astype(F32)
    caught(str(tmp_path / "mask"), "sample_layernorm_fwd", (4,), args, {4: bad_mean.ravel()}, "a wrong mask in the mean")
    caught(str(tmp_path / "two"), "sample_layernorm_fwd", (4,), args, {3: ulps_off(y, 100, 2000)}, "y far off")


def test_bounds_layernorm_bwd(tmp_path, rng):
    """dx in another order of its row sums; dw and db, summed under the spin lock, as devices taking the lock in
    other orders of the blocks store them (block order, reverse, random orders from the printed seed): covered;
    a block's contribution dropped or added twice: caught."""
    rows = 16
    x = rng.standard_normal((rows, 64)).astype(F32)
    dy = rng.standard_normal((rows, 64)).astype(F32)
    w = rng.standard_normal(64).astype(F32)
    _, mean, rstd = layernorm_fwd(x, w, np.zeros(64, F32))
    dw0 = rng.standard_normal((2, 64)).astype(F32)
    db0 = rng.standard_normal((2, 64)).astype(F32)
    args = [x, dy, w, mean, rstd, np.zeros_like(x), dw0, db0, np.zeros(2, np.int32)]
    dx, xh = ln_bwd_rows(x, dy, w, mean, rstd, rowsum_rev)
    _, nomix_xh = ln_bwd_rows(x, dy, w, mean, rstd)
    orders = [list(range(rows)), list(range(rows))[::-1]] + [list(rng.permutation(rows)) for _ in range(2)]
    for k, order in enumerate(orders):
        dw, db = ln_bwd_partials(dy, xh, dw0, db0, order)
        covered(str(tmp_path / ("ok%d" % k)), "sample_layernorm_bwd", (rows,), args, {5: dx, 6: dw, 7: db})
    # planted bugs: block 5's contribution dropped, block 5's added twice (group 1 = rows 1, 3, 5, ...)
    drop = [i for i in orders[2] if i != 5]
    dw, db = ln_bwd_partials(dy, xh, dw0, db0, drop)
    caught(str(tmp_path / "drop_dw"), "sample_layernorm_bwd", (rows,), args, {6: dw}, "dw: a block's contribution dropped")
    caught(str(tmp_path / "drop_db"), "sample_layernorm_bwd", (rows,), args, {7: db}, "db: a block's contribution dropped")
    dw, db = ln_bwd_partials(dy, xh, dw0, db0, orders[3] + [5])
    caught(str(tmp_path / "twice_dw"), "sample_layernorm_bwd", (rows,), args, {6: dw}, "dw: a block's contribution added twice")
    caught(str(tmp_path / "twice_db"), "sample_layernorm_bwd", (rows,), args, {7: db}, "db: a block's contribution added twice")
    # dx without its mean term
    nomix = np.zeros_like(x)
    for i in range(rows):
        xi, dyi = x[i:i + 1], dy[i:i + 1]
        xhat = ((xi - mean[i]).astype(F32) * rstd[i]).astype(F32)
        wdy = (w.reshape(1, -1) * dyi).astype(F32)
        c1 = (rowsum_rev((xhat * wdy).astype(F32)) / F32(64)).astype(F32)
        nomix[i] = ((wdy - (xhat * c1).astype(F32)).astype(F32) * rstd[i]).astype(F32)  # c2 forgotten
    caught(str(tmp_path / "c2"), "sample_layernorm_bwd", (rows,), args, {5: nomix}, "dx without its mean term")


def test_bounds_rmsnorm(tmp_path, rng):
    x = rng.standard_normal((4, 64)).astype(F32)
    w = rng.standard_normal(64).astype(F32)
    args = [x, w, np.zeros_like(x)]
    ms = (rowsum_rev((x * x).astype(F32)) / F32(64)).astype(F32)
    want = ((x * rsqrt((ms + F32(1e-6)).astype(F32))).astype(F32) * w.reshape(1, -1)).astype(F32)
    covered(str(tmp_path / "ok"), "sample_rmsnorm", (4,), args, {2: want})
    ms_bad = (rowsum((x[:, :62] * x[:, :62]).astype(F32)) / F32(64)).astype(F32)  # a wrong mask: two columns dropped
    bad = ((x * rsqrt((ms_bad + F32(1e-6)).astype(F32))).astype(F32) * w.reshape(1, -1)).astype(F32)
    caught(str(tmp_path / "mask"), "sample_rmsnorm", (4,), args, {2: bad}, "a wrong mask in the mean square")


def fft_inputs(rng, batch):
    n = 16
    k = np.arange(n)
    ang = -2 * np.pi * np.outer(k, k) / n
    wr, wi = np.cos(ang).astype(np.float16), np.sin(ang).astype(np.float16)
    xr = rng.standard_normal((batch, n)).astype(np.float16)
    xi = rng.standard_normal((batch, n)).astype(np.float16)
    return [xr, xi, wr, wi, (-wi).astype(np.float16), np.zeros((batch, n), F32), np.zeros((batch, n), F32)]


def test_fft(tmp_path, rng):
    """the FFT sample's transform (a DFT by tensor-core mma), each plane one mma chain; with the sample's
    own grid (a block per vector) it reads outside the view's index space: refused, the witness."""
    args = fft_inputs(rng, 32)
    xr, xi, wr, wi, wn = args[:5]
    z = np.zeros((32, 16), F32)
    rc, log, out = run(str(tmp_path), "sample_fft", (2,), args)
    assert rc == 0, log
    same_bits(out[5], mma(xi, wn, mma(xr, wr, z)), "FFT real plane")
    same_bits(out[6], mma(xi, wr, mma(xr, wi, z)), "FFT imaginary plane")
    rc, log, out = run(str(tmp_path / "grid"), "sample_fft", (32,), args)
    assert rc == 1 and "interp.ub" in log and "outside the index space" in log, log
    assert out[5] is None  # nothing written
    rc, log, n = check(str(tmp_path / "gridb"), "sample_fft", (32,), args, {5: z})
    assert rc == 1 and "interp.ub" in log, log  # refused alike in bounds mode


def test_bounds_fft(tmp_path, rng):
    args = fft_inputs(rng, 32)
    xr, xi, wr, wi, wn = args[:5]
    z = np.zeros((32, 16), F32)
    # tensor-core-like: the two products of each plane summed exactly and rounded once
    dev_r = mma(np.hstack([xr, xi]), np.vstack([wr, wn]), z)
    dev_i = mma(np.hstack([xr, xi]), np.vstack([wi, wr]), z)
    covered(str(tmp_path / "ok"), "sample_fft", (2,), args, {5: dev_r, 6: dev_i}, "any_order")
    caught(str(tmp_path / "skip"), "sample_fft", (2,), args, {5: mma(xr, wr, z)}, "the imaginary input's term skipped", "any_order")


def moe_inputs(rng, tokens=24, experts=2):
    """top-1 routing (token t to expert t % experts), ids sorted by expert, each expert's group padded
    to 16 with the id `tokens` (past the last row)."""
    x = rng.standard_normal((tokens, 32)).astype(np.float16)
    w = rng.standard_normal((experts * 32, 16)).astype(np.float16)
    ids, eids = [], []
    for e in range(experts):
        group = [t for t in range(tokens) if t % experts == e]
        for s in range(0, len(group), 16):
            blk = group[s:s + 16]
            ids += blk + [tokens] * (16 - len(blk))
            eids.append(e)
    return [x, w, np.array(ids, np.int32), np.array(eids, np.int32), np.zeros((tokens, 16), F32)], len(eids)


def moe_ref(x, w, experts=2, skip_k=False):
    y = np.zeros((x.shape[0], 16), F32)
    for t in range(x.shape[0]):
        e = t % experts
        kk = 16 if skip_k else 32
        y[t] = gemm_steps(x[t:t + 1, :kk], w[e * 32:e * 32 + kk], 16)[0]
    return y


def test_moe(tmp_path, rng):
    """MoE: rows gathered by routed token id (make_gather_scatter_view), the expert's weight rows gathered,
    the product's rows scattered back; padded ids read zeros and store nothing."""
    args, nb = moe_inputs(rng)
    rc, log, out = run(str(tmp_path), "sample_moe", (nb, 1), args)
    assert rc == 0, log
    same_bits(out[4], moe_ref(args[0], args[1]), "MoE")


def test_bounds_moe(tmp_path, rng):
    args, nb = moe_inputs(rng)
    x, w = args[0], args[1]
    dev = np.zeros((x.shape[0], 16), F32)
    for t in range(x.shape[0]):  # tensor-core-like: the whole k range rounded once
        e = t % 2
        dev[t] = mma(x[t:t + 1], w[e * 32:e * 32 + 32], np.zeros((1, 16), F32))[0]
    covered(str(tmp_path / "ok"), "sample_moe", (nb, 1), args, {4: dev}, "any_order")
    caught(str(tmp_path / "skip"), "sample_moe", (nb, 1), args, {4: moe_ref(x, w, skip_k=True)}, "a skipped k block", "any_order")
    wrong = dev.copy()
    wrong[[0, 1]] = dev[[1, 0]]  # a routing bug: two tokens' rows swapped
    caught(str(tmp_path / "route"), "sample_moe", (nb, 1), args, {4: wrong}, "two tokens' rows swapped", "any_order")


# ---- AllGather matmul: the peers' inputs as a list of arrays

def tf32(a):
    """float32 values rounded to nearest even into tf32 (10 fraction bits), as float32."""
    u = np.asarray(a, F32).view(np.uint32).astype(np.uint64)
    u = (u + np.uint64(0xFFF) + ((u >> np.uint64(13)) & np.uint64(1))) & ~np.uint64(0x1FFF)
    return u.astype(np.uint32).view(F32)


def allgather_inputs(rng, world=2, m=32, k=40, n=32):
    peers = [rng.standard_normal((m, k)).astype(F32) for _ in range(world)]
    w = rng.standard_normal((k, n)).astype(F32)
    return peers, w, np.zeros((world * m, n), F32)


def test_allgather_matmul(tmp_path, rng):
    """each rank's input is one array of the list; output rows t*16.. come from peer t // (m / 16), both operands
    rounded to tf32, k steps of 16 (the last one padded with zeros)."""
    peers, w, out0 = allgather_inputs(rng)
    rc, log, out = run(str(tmp_path), "sample_allgather_matmul", (4, 2), [("list", peers), w, out0])
    assert rc == 0, log
    want = gemm_steps(tf32(np.concatenate(peers)), tf32(w), 16)
    same_bits(out[2], want, "AllGather matmul")


def test_bounds_allgather_matmul(tmp_path, rng):
    peers, w, out0 = allgather_inputs(rng)
    args = [("list", peers), w, out0]
    a, b = tf32(np.concatenate(peers)), tf32(w)
    dev = mma(a, b, np.zeros(out0.shape, F32))  # tensor-core-like: the whole k range rounded once
    covered(str(tmp_path / "ok"), "sample_allgather_matmul", (4, 2), args, {2: dev}, "any_order")
    covered(str(tmp_path / "steps"), "sample_allgather_matmul", (4, 2), args, {2: gemm_steps(a, b, 16)}, "any_order")  # the run's own order
    swapped = np.concatenate([dev[32:], dev[:32]])  # a wrong peer: each rank's rows from the other
    caught(str(tmp_path / "peer"), "sample_allgather_matmul", (4, 2), args, {2: swapped}, "the peers swapped", "any_order")
    skipped = gemm_steps(a[:, :32], b[:32], 16)  # the last k block skipped
    caught(str(tmp_path / "skip"), "sample_allgather_matmul", (4, 2), args, {2: skipped}, "a skipped k block", "any_order")
    unrounded = mma(np.concatenate(peers), w, np.zeros(out0.shape, F32))  # tf32's rounding of the operands forgotten
    caught(str(tmp_path / "tf32"), "sample_allgather_matmul", (4, 2), args, {2: unrounded}, "operands not rounded to tf32", "any_order")
