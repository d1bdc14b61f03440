"""test_torch_lse_bf16.py: torch's bf16 (and f16) log_softmax and logsumexp store intermediates in the input's
format: outside the f32-compute standards where they really are off, covered under compute=bfloat16 (float16)
(docs/ops/log_softmax.md)."""
import ml_dtypes
import numpy as np
import pytest

import exactref as er

BF16 = np.dtype(ml_dtypes.bfloat16)
F16 = np.dtype(np.float16)
NARROW = {"bfloat16": BF16, "float16": F16}


def _rn(a, dt):
    """a rounded to dt (nearest even), as float32."""
    return np.asarray(a, np.float32).astype(dt).astype(np.float32)


def _lane_sum(e, lanes=16):
    """Row sums in float32 in a vectorised order: lane l adds elements l, l + lanes, ...; the lanes pairwise."""
    rows, n = e.shape
    acc = np.zeros((rows, lanes), np.float32)
    for j in range(0, n, lanes):
        blk = e[:, j:j + lanes]
        acc[:, :blk.shape[1]] += blk
    while acc.shape[1] > 1:
        acc = acc[:, 0::2] + acc[:, 1::2]
    return acc[:, 0]


def _emulate(x):
    """(log_softmax, logsumexp) as torch 2.x's CPU bf16 (f16) kernels compute them, in numpy, and the float32
    textbook (nothing stored in the narrow format before the output).  log_softmax (the last-dimension
    kernel): the row sum of exp(x - m) in float32, STORED in x's format, its log STORED in x's format, then
    (x - m) - l in float32.  logsumexp (tensor operations in x's format): x - m, exp, the sum (float32
    accumulator) and log each rounded to x's format, then m + l rounded to it (the outputs as float32)."""
    dt = x.dtype

    def _bf(a):
        return _rn(a, dt)

    x32 = x.astype(np.float32)
    m = x32.max(-1, keepdims=True)
    d = x32 - m
    s = _lane_sum(np.exp(d))[:, None]
    ls_torch = _bf(d - _bf(np.log(_bf(s))))
    ls_f32 = _bf(d - np.log(s))
    e = _bf(np.exp(_bf(d)))
    lse_torch = _bf(_bf(np.log(_bf(_lane_sum(e)))) + m[:, 0])
    lse_f32 = _bf(m[:, 0] + np.log(s[:, 0]))
    return ls_torch, ls_f32, lse_torch, lse_f32


def _outside(res, y, **kw):
    return int((~np.asarray(res.covers(np.asarray(y).astype(res.rounded.dtype), **kw))).sum())


def _input(rng, rows, n, dtype):
    return (rng.standard_normal((rows, n)) * 1.5).astype(np.float32).astype(NARROW[dtype])


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
@pytest.mark.parametrize("n", [256, 4096])
def test_narrow_intermediates_emulated(rng, n, dtype):
    """Without torch: the emulated kernels are covered with compute in x's format and fall outside both
    f32-compute standards; the float32 textbook is inside them (the f32 bound is not what is wrong)."""
    x = _input(rng, 32, n, dtype)
    narrow = {"standard": "normal", "compute": dtype}
    rn = lambda a: _rn(a, x.dtype)  # noqa: E731
    ls_t, ls_f, lse_t, lse_f = _emulate(x)
    r, q = er.log_softmax(x, -1), er.logsumexp(x, -1)
    assert _outside(r, ls_t, **narrow) == 0
    assert _outside(q, lse_t, **narrow) == 0
    for std in ("normal", "any_order"):
        assert _outside(r, ls_f, standard=std) == 0
        assert _outside(q, lse_f, standard=std) == 0
        assert _outside(r, ls_t, standard=std) > 0.02 * x.size, std
        assert _outside(q, lse_t, standard=std) > 0, std
    # the bf16-compute bound is wider but not vacuous: the log off by log 2 (a planted bug) is caught
    assert _outside(r, rn(ls_t - np.float32(np.log(2))), **narrow) > 0.9 * x.size
    assert _outside(q, rn(lse_t + np.float32(np.log(2))), **narrow) == x.shape[0]


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
@pytest.mark.parametrize("n", [256, 4096])
def test_torch_narrow_log_softmax_logsumexp(rng, n, dtype):
    """torch's own bf16 and f16 kernels: they round the intermediates named in _emulate (agreement with the
    emulation), so they are outside normal and any_order with f32 compute and covered with compute in x's
    format."""
    torch = pytest.importorskip("torch")
    x = _input(rng, 32, n, dtype)
    narrow = {"standard": "normal", "compute": dtype}
    xt = torch.from_numpy(x.astype(np.float32)).to(getattr(torch, dtype))
    ls = torch.log_softmax(xt, -1).float().numpy()
    lse = torch.logsumexp(xt, -1).float().numpy()
    ls_t, ls_f, lse_t, lse_f = _emulate(x)
    # which intermediates torch rounds: its output is the bf16-storing emulation's (up to a rare difference
    # of its vectorised exp or sum order), far from the float32 textbook's
    assert (ls != ls_t).mean() < 1e-3 and (lse != lse_t).mean() < 0.05
    assert (ls != ls_f).mean() > 0.02
    r, q = er.log_softmax(x, -1), er.logsumexp(x, -1)
    assert _outside(r, ls, **narrow) == 0
    assert _outside(q, lse, **narrow) == 0
    for std in ("normal", "any_order"):
        out_ls = np.asarray(r.covers(ls.astype(x.dtype), standard=std))
        assert (~out_ls).mean() > 0.02, std
        # every element outside is one where torch's value is not the float32 textbook's
        assert (ls[~out_ls] != ls_f[~out_ls]).all(), std
        assert _outside(q, lse, standard=std) > 0, std
