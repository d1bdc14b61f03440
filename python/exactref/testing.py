"""testing.py: er.testing.assert_matmul_valid, one line that checks a kernel's output in a test."""
from __future__ import annotations

import warnings

import numpy as np

from . import _arrays as A

__all__ = ["assert_matmul_valid", "report"]


def _hex(fmt, bits):
    v = A._convert(np.array([bits], A._UINT[A._BY_ID[fmt]["storage_bytes"]]), fmt, A.FMT_F64)
    x = float(np.asarray(v)[0])
    return x.hex() if np.isfinite(x) else repr(x)


def report(result, output, *, compute=None, ulps=None, flush_to_zero=False, standard="normal"):
    """The judgment of output against result by the library's report function (the one `exactref check`
    prints), as a dict: elements, outside, hist (with hist_labels), worst_index, output_value,
    rounded_value, low_value, high_value, tolerance, ulps_beyond, worst_why, the vacuity flags, and
    message: the assertion message, or None when every element is covered."""
    from ._result import _opts_key, _output_array

    result._one("report")
    key = _opts_key(result, compute, ulps, flush_to_zero, standard)
    core = result._core_for(key)
    fmt = core.format
    out = _output_array(output, fmt, core.shape)
    bits, _ = A._bits_of(out)
    # the report made with the result (assert_matmul_valid), else on a large output the library's check
    # in tiles (bounded memory; None: one pass here)
    pre = getattr(result, "_checked", None)
    rep = (pre[2] if pre is not None and pre[0] is output and pre[1] == key else None) or \
        core.check(bits, *key, None) or core.report(bits, *key)
    rep["standard"] = key[3]
    rep["compute"] = A.format_name(core.default_compute if key[0] < 0 else key[0])
    rep["worst_index"] = tuple(int(i) for i in rep["worst_index"])
    rep["message"] = None
    if rep["outside"] == 0:
        return rep
    n, outside = rep["elements"], rep["outside"]
    idx = rep["worst_index"]
    lines = [
        f"{result.op}: the output is not one a correct implementation can produce!",
        "",
        f"Elements outside the bound: {outside} / {n} ({100.0 * outside / n:.1f}%)",
        f"Worst element at index {idx}: output {rep['output_value']!r} ({_hex(fmt, rep['output'])}), "
        f"rounded {rep['rounded_value']!r} ({_hex(fmt, rep['rounded'])}),",
    ]
    if rep["has_range"]:
        lines.append(f"allowed [{rep['low_value']!r}, {rep['high_value']!r}] ([{_hex(fmt, rep['low'])}, "
                     f"{_hex(fmt, rep['high'])}]), tolerance {rep['tolerance']:.3g}")
    else:
        lines.append("no finite output is allowed there")
    why = rep["worst_why"]
    if why == "ulps":
        lines.append(f"{rep['ulps_beyond']} output ulps beyond the bound")
    elif why == "int":
        lines.append(f"{rep['ulps_beyond']} away from the exact integer")
    elif why == "special":
        lines.append("an infinity or NaN that no correct implementation produces there")
    elif why == "not_finite":
        lines.append("a finite output where no correct implementation produces one")
    if A.is_float(fmt):
        lines.append(f"(standard {key[3]!r}, compute {rep['compute']}{', flush to zero' if key[2] else ''}, "
                     f"output {A.format_name(fmt)})")
    else:
        lines.append(f"(exact integer product, output {A.format_name(fmt)})")
    if rep["narrower_format"] >= 0:
        lines.append(f"hint: every output value is a {A.format_name(rep['narrower_format'])} value: "
                     f"was the output saved widened from a narrower dtype?")
    if rep["operand_vacuous"]:
        lines.append("warning: an operand is all zero or subnormal: the check is vacuous")
    rep["message"] = "\n".join(lines)
    return rep


def _make(aa, bb, c, scales, block, dtype, rounding):
    """The Result assert_matmul_valid checks against."""
    from ._ops import matmul, mma, mma_scaled, mmai
    from ._result import Result

    if scales is not None:
        sa, sb = scales
        return mma_scaled(aa, bb, sa, sb, block=block, C=c, dtype=dtype or "float32", rounding=rounding)
    if not A.is_float(A._bits_of(aa.rounded if isinstance(aa, Result) else aa)[1]):
        return mmai(aa, bb, c)
    if c is not None:
        return mma(aa, bb, c, dtype=dtype, rounding=rounding)
    return matmul(aa, bb, dtype=dtype, rounding=rounding)


def assert_matmul_valid(a, b, out, *, c=None, scales=None, block=None, standard="normal", compute=None,
                        ulps=None, flush_to_zero=False, dtype=None, rounding="nearest_even", msg=None):
    """Assert that out is an output a correct implementation of a @ b (+ c) can produce, element by element.

    a, b, c, out: anything er.asarray takes; scales=(a_scale, b_scale) for a block-scaled product;
    dtype: the output format (default: out's dtype); standard, compute, ulps, flush_to_zero: the
    implementations judged correct (Result.covers; standard="any_order" for BLAS-like kernels with
    any summation order and FMA, "normal" for index order, a tensor-core model such as "hopper").
    Integer operands check er.mmai's exact product.  block: the scales' block size; rounding: the
    output's rounding direction; msg: a string put before the message, or a function of it.

    Raises AssertionError with the count outside, the worst element (output, rounded, allowed range,
    ulps beyond) and the standard; warns (UserWarning) where the check passes but proves little.
    Returns the Result, for further checks.

    >>> er.testing.assert_matmul_valid(a, b, my_kernel(a, b), standard="any_order")
    """
    from ._ops import _Operand
    from ._result import Result

    if not isinstance(out, (Result, A.BitArray)) and (isinstance(out, np.ndarray) or hasattr(out, "__dlpack__")):
        try:
            out = A.asarray(out)  # read once (a device tensor is copied once)
        except (TypeError, ValueError) as e:
            raise (TypeError if isinstance(e, TypeError) else ValueError)(f"out: {e}") from None
    if dtype is None:
        if isinstance(out, Result):
            dtype = out._core.format
        elif isinstance(out, A.BitArray):
            dtype = out._fmt
        elif isinstance(out, np.ndarray):
            dtype = A.format_id(out.dtype)
    aa = a if isinstance(a, Result) else _Operand(a, "a").arr
    bb = b if isinstance(b, Result) else _Operand(b, "b").arr
    from ._ops import _CHECK
    from ._result import _opts_key

    # the Result and the check in one call (the library's er_check: in tiles on a large output)
    try:
        chk = {"output": out, "key": _opts_key(None, compute, ulps, flush_to_zero, standard), "report": None}
    except (TypeError, ValueError):
        chk = None  # said by report, after the Result, as before
    token = _CHECK.set(chk)
    try:
        r = _make(aa, bb, c, scales, block, dtype, rounding)
    finally:
        _CHECK.reset(token)
    if chk is not None and chk["report"] is not None:
        r._checked = (out, chk["key"], chk["report"])
    rep = report(r, out, compute=compute, ulps=ulps, flush_to_zero=flush_to_zero, standard=standard)
    if rep["message"] is None and (rep["operand_vacuous"] or (rep["zero_accepted"] and rep["elements"])):
        # the check passed but proves little: say so, as `exactref check` does
        why = ("an operand is all zero or subnormal: the check is vacuous" if rep["operand_vacuous"] else
               "the bounds would accept an all-zero output: these inputs cannot tell a correct kernel from one "
               "that writes zeros")
        warnings.warn(f"assert_matmul_valid: {why}", UserWarning, stacklevel=2)
    if rep["message"] is not None:
        text = rep["message"]
        if msg is not None:
            text = (msg(text) if callable(msg) else f"{msg}\n\n{text}")
        raise AssertionError(text)
    return r
