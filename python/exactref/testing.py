"""testing.py: er.testing.assert_matmul_valid, one line that checks a kernel's output in a test."""
from __future__ import annotations

import numpy as np

from . import _arrays as A
from . import _core

__all__ = ["assert_matmul_valid", "report"]


def _ordinal(fmt, bits):
    """A signed ordinal of a float pattern: consecutive values have consecutive ordinals."""
    info = A._BY_ID[fmt]
    bits = int(bits)
    pad = info["padding_bits"]
    width = info["width"]
    mag_bits = width - pad - (1 if info["is_signed"] else 0)
    mag = (bits >> pad) & ((1 << mag_bits) - 1)
    neg = info["is_signed"] and (bits >> (width - 1)) & 1
    return -mag if neg else mag


def _hex(fmt, bits):
    v = A._convert(np.array([bits], A._UINT[A._BY_ID[fmt]["storage_bytes"]]), fmt, A.FMT_F64)
    x = float(np.asarray(v)[0])
    return x.hex() if np.isfinite(x) else repr(x)


def _value(fmt, bits):
    v = A._convert(np.array([bits], A._UINT[A._BY_ID[fmt]["storage_bytes"]]), fmt, A.FMT_F64)
    return float(np.asarray(v)[0])


def report(result, output, *, compute=None, ulps=None, flush_to_zero=False, standard="normal"):
    """The judgment of output against result, as a dict: checked, outside, worst (index, output, rounded,
    low, high, tolerance, ulps_beyond), message (the assertion message, or None when every element is
    covered)."""
    result._one("report")
    covered, outside = result._covers(output, compute, ulps, flush_to_zero, standard)
    fmt = result._core.format
    info = A._BY_ID[fmt]
    n = covered.size
    rep = {"checked": n, "outside": int(outside), "worst": None, "message": None, "standard": standard}
    if outside == 0:
        return rep
    from ._result import _output_array

    out_bits, _ = A._bits_of(_output_array(output, fmt, result._core.shape))
    b = result._bounds_of(compute, ulps=ulps, flush_to_zero=flush_to_zero, standard=standard)
    rnd_bits, _ = A._bits_of(result.rounded)
    bad = np.argwhere(~covered)
    worst, worst_beyond = None, -1
    for idx in map(tuple, bad):
        ob = int(out_bits[idx])
        if info["kind"] != "float":
            beyond = abs(int(np.int64(np.int32(np.uint32(ob)))) - int(np.int64(np.int32(np.uint32(int(rnd_bits[idx]))))))
        else:
            ov = _value(fmt, ob)
            if np.isfinite(ov) and b.has_range[idx]:
                hi = int(b.high[idx])
                lo = int(b.low[idx])
                beyond = (_ordinal(fmt, ob) - _ordinal(fmt, hi)) if ov > _value(fmt, hi) else \
                    (_ordinal(fmt, lo) - _ordinal(fmt, ob))
            else:
                beyond = float("inf")
        if beyond > worst_beyond:
            worst, worst_beyond = idx, beyond
        if len(bad) > 100000 and worst_beyond == float("inf"):
            break
    idx = worst
    ob, rb = int(out_bits[idx]), int(rnd_bits[idx])
    w = {"index": tuple(int(i) for i in idx), "output": _value(fmt, ob), "rounded": _value(fmt, rb),
         "low": _value(fmt, int(b.low[idx])) if b.has_range[idx] else None,
         "high": _value(fmt, int(b.high[idx])) if b.has_range[idx] else None,
         "tolerance": float(b.tolerance[idx]), "ulps_beyond": worst_beyond}
    rep["worst"] = w
    cname = A.format_name(result._core.default_compute if compute is None else A.format_id(compute))
    lines = [
        f"{result.op}: the output is not one a correct implementation can produce!",
        "",
        f"Elements outside the bound: {outside} / {n} ({100.0 * outside / n:.1f}%)",
        f"Worst element at index {w['index']}: output {w['output']!r} ({_hex(fmt, ob)}), "
        f"rounded {w['rounded']!r} ({_hex(fmt, rb)}),",
    ]
    if w["low"] is not None:
        lines.append(f"allowed [{w['low']!r}, {w['high']!r}] ([{_hex(fmt, int(b.low[idx]))}, "
                     f"{_hex(fmt, int(b.high[idx]))}]), tolerance {w['tolerance']:.3g}")
    else:
        lines.append("no finite output is allowed there")
    if worst_beyond == float("inf"):
        lines.append("an infinity or NaN that no correct implementation produces there")
    else:
        lines.append(f"{worst_beyond} output ulps beyond the bound")
    lines.append(f"(standard {standard!r}, compute {cname}{', flush to zero' if flush_to_zero else ''}, "
                 f"output {A.format_name(fmt)})")
    rep["message"] = "\n".join(lines)
    return rep


def assert_matmul_valid(a, b, out, *, c=None, scales=None, block=None, standard="normal", compute=None,
                        ulps=None, flush_to_zero=False, dtype=None, rounding="nearest_even", msg=None):
    """Assert that out is an output a correct implementation of a @ b (+ c) can produce, element by element.

    a, b, c, out: anything er.asarray takes; scales=(a_scale, b_scale) for a block-scaled product;
    dtype: the output format (default: out's dtype); standard, compute, ulps, flush_to_zero: the
    implementations judged correct (Result.covers).  Raises AssertionError with the count outside,
    the worst element (output, rounded, allowed range, ulps beyond) and the standard.
    """
    from ._ops import matmul, mma, mma_scaled, mmai
    from ._result import Result

    if dtype is None:
        if isinstance(out, Result):
            dtype = out._core.format
        else:
            o = A.asarray(out) if (isinstance(out, np.ndarray) or hasattr(out, "__dlpack__")) else None
            dtype = A.format_id(o.dtype) if o is not None and not isinstance(o, A.BitArray) else (
                o._fmt if o is not None else None)
    aa = a if isinstance(a, Result) else A.asarray(a)
    bb = b if isinstance(b, Result) else A.asarray(b)
    if scales is not None:
        sa, sb = scales
        r = mma_scaled(aa, bb, sa, sb, block=block, C=c, dtype=dtype or "float32", rounding=rounding)
    elif not A.is_float(A._bits_of(aa.rounded if isinstance(aa, Result) else aa)[1]):
        r = mmai(aa, bb, c)
    elif c is not None:
        r = mma(aa, bb, c, dtype=dtype, rounding=rounding)
    else:
        r = matmul(aa, bb, dtype=dtype, rounding=rounding)
    rep = report(r, out, compute=compute, ulps=ulps, flush_to_zero=flush_to_zero, standard=standard)
    if rep["message"] is not None:
        text = rep["message"]
        if msg is not None:
            text = (msg(text) if callable(msg) else f"{msg}\n\n{text}")
        raise AssertionError(text)
    return r
