"""testing.py: er.testing.assert_matmul_valid, one line that checks a kernel's output in a test."""
from __future__ import annotations

import warnings

import numpy as np

from . import _core
from . import _arrays as A
from ._result import _STANDARD_DEFAULT

__all__ = ["assert_matmul_valid", "assert_valid", "report"]


def _hex(fmt, bits):
    v = A._convert(np.array([bits], A._UINT[A._BY_ID[fmt]["storage_bytes"]]), fmt, A.FMT_F64)
    x = float(np.asarray(v)[0])
    return x.hex() if np.isfinite(x) else repr(x)


def _values(bits, fmt):
    """Bit patterns of fmt as float64 values (every modelled value is one)."""
    return np.asarray(A._convert(np.asarray(bits), fmt, A.FMT_F64), dtype=np.float64)


def _greatest_parts(rb, out_bits, fmt, shape, tol_at):
    """assert_close's figures: for the greatest absolute and the greatest relative difference of the
    output from the correctly rounded answer (finite elements only), (what, difference, flat index in
    shape, what the bound allows there); the first such element in index order where several tie.
    tol_at(flat): the tolerance of that element."""
    try:
        o, r = _values(np.asarray(out_bits).reshape(-1), fmt), _values(np.asarray(rb).reshape(-1), fmt)
    except (TypeError, ValueError):
        return []
    with np.errstate(all="ignore"):
        d = np.abs(o - r)
        rel = d / np.abs(r)
    ok = np.isfinite(o) & np.isfinite(r)
    if not ok.any():
        return []
    parts = []
    for what, v in (("absolute", d), ("relative", rel)):
        v = np.where(ok & ~np.isnan(v), v, -1.0)
        flat = int(np.argmax(v))
        if v[flat] <= 0:
            continue
        t = float(tol_at(flat))
        if what == "relative":
            t = t / abs(float(r[flat])) if r[flat] != 0 else float("inf")
        parts.append((what, float(v[flat]), flat, t))
    return parts


def _greatest_lines(parts, index_of):
    """The message's lines for _greatest_parts' figures; index_of(flat): the index the user reads."""
    return [f"Greatest {what} difference from rounded: {v:.6g} at index {index_of(flat)} "
            f"(up to {t:.3g} allowed there)" for what, v, flat, t in parts]


def _greatest(result, out_bits, core, tol):
    """The message's assert_close lines for a whole result (tol: its tolerance array, or None)."""
    rb = A._bits_of(result.rounded)[0]
    flat_tol = None if tol is None else np.asarray(tol).reshape(-1)
    parts = _greatest_parts(rb, out_bits, core.format, core.shape,
                            lambda f: flat_tol[f] if flat_tol is not None else float("nan"))
    return _greatest_lines(parts, lambda f: result._user_index(np.unravel_index(f, core.shape)))


def report(result, output, *, compute=None, ulps=None, flush_to_zero=False, standard=_STANDARD_DEFAULT):
    """The judgment of output against result by the library's report function (the one `exactref check`
    prints), as a dict: elements, outside, hist (with hist_labels), worst_index, output_value,
    rounded_value, low_value, high_value, tolerance, ulps_beyond, worst_why, the vacuity flags,
    outside_indices (the outside elements' indices in order, at most outside_indices_cap = 1000, as the
    command's JSON lists them; outside_indices_complete), and message: the assertion message (at most
    about 12 lines: the count outside, the worst element in output ulps, the greatest absolute and
    relative difference from rounded, the standard), or None when every element is covered."""
    __tracebackhide__ = True  # pytest: the caller's line, not this package's source
    from ._result import _opts_key

    result._one("report")
    key = _opts_key(result, compute, ulps, flush_to_zero, standard)
    core = result._core_for(key)
    fmt = core.format
    bits = result._output_bits(output, fmt, core)
    # the report made with the result (assert_matmul_valid), else on a large output the library's check
    # in tiles (bounded memory; None: one pass here)
    pre = getattr(result, "_checked", None)
    rep = (pre[2] if pre is not None and pre[0] is output and pre[1] == key else None) or \
        core.check(bits, *key, None) or core.report(bits, *key)

    def greatest():
        tol = result._bounds_key(key).tolerance if A.is_float(fmt) else np.zeros(core.shape)
        return _greatest(result, bits, core, tol)

    return _finish(result, core, fmt, rep, key, greatest)


def _finish(result, core, fmt, rep, key, greatest):
    """report()'s dict completed from the library's report: the options, and the assertion message
    (result.op, result._user_index and core.default_compute are read; exactref.distributed passes the
    merged report).  greatest(): the message's lines of the greatest absolute and relative difference."""
    rep["standard"] = key[3]
    # the accumulator the bounds used (a blocked standard's acc=, an engine row's D), as `exactref check` says
    rep["compute"] = A.format_name(_core.standard_accumulator(key[3], core.default_compute if key[0] < 0
                                                              else key[0]))
    rep["worst_index"] = result._user_index(rep["worst_index"])
    rep["message"] = None
    if rep["outside"] == 0:
        return rep
    n, outside = rep["elements"], rep["outside"]
    idx = rep["worst_index"]
    lines = [
        f"{result.op}: the output is not one a correct implementation can produce!",
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
        flip = (rep["output_value"] < 0 < rep["rounded_value"]) or (rep["rounded_value"] < 0 < rep["output_value"])
        lines.append(f"{rep['ulps_beyond']} output ulps beyond the bound" +
                     (" (the output has the opposite sign of rounded)" if flip else ""))
    elif why == "int":
        lines.append(f"{rep['ulps_beyond']} away from the exact integer")
    elif why == "special":
        lines.append("an infinity or NaN that no correct implementation produces there")
    elif why == "not_finite":
        lines.append("a finite output where no correct implementation produces one")
    lines += greatest()
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


def _matmul_verdict(rep, msg, stacklevel=3):
    """assert_matmul_valid's ending on a report dict (here and in distributed.py): a warning where the check
    passed but proves little, as `exactref check` gives; AssertionError with rep's message (msg: text put
    before it, or a callable that rewrites it) where it failed.  stacklevel: the warning's, counted from here."""
    __tracebackhide__ = True  # pytest: the caller's line, not this package's source
    if rep["message"] is None and (rep["operand_vacuous"] or (rep["zero_accepted"] and rep["elements"])):
        why = ("an operand is all zero or subnormal: the check is vacuous" if rep["operand_vacuous"] else
               "the bounds would accept an all-zero output: these inputs cannot tell a correct kernel from one "
               "that writes zeros")
        warnings.warn(f"assert_matmul_valid: {why}", UserWarning, stacklevel=stacklevel)
    if rep["message"] is not None:
        text = rep["message"]
        if msg is not None:
            text = (msg(text) if callable(msg) else f"{msg}\n\n{text}")
        raise AssertionError(text)


def assert_matmul_valid(a, b, out, *, c=None, scales=None, block=None, standard=_STANDARD_DEFAULT, compute=None,
                        ulps=None, flush_to_zero=False, dtype=None, rounding="nearest_even", saturate=False,
                        msg=None, backend="auto", threads=0, strategy="auto", device=None):
    """Assert that out is an output a correct implementation of a @ b (+ c) can produce, element by element.

    a, b, c, out: anything er.asarray takes, with torch.matmul's shapes (1-D, 2-D, batch dimensions
    broadcast: (B, H, L, d)); c is broadcast to the output as torch broadcasts a bias ((N,), (1, N),
    (M, 1), a scalar); scales=(a_scale, b_scale) for a block-scaled product;
    dtype: the output format (a name, numpy / ml_dtypes or torch dtype; default: out's dtype);
    saturate: the output cast saturates (a value beyond the largest finite one gives the largest
    finite value, as CUDA's satfinite and torch's CPU fp8 cast; the command's --saturate);
    standard, compute, ulps, flush_to_zero: the
    implementations judged correct (Result.covers; standard="any_order" for BLAS-like kernels with
    any summation order and FMA, "normal" for index order, a tensor-core model such as "hopper"; the
    default, "normal", is "scaled:bk=<block>" where float32 scales make it a scaled product, as er.scaled_mm).
    Integer operands check er.mmai's exact product.  block: the scales' block size; rounding: the
    output's rounding direction; msg: a string put before the message, or a function of it;
    backend, threads, strategy, device: where the exact product is computed (er.matmul's; the bits
    never depend on them).

    Raises AssertionError with the count outside, the worst element (output, rounded, allowed range,
    ulps beyond), the greatest absolute and relative difference from rounded, and the standard, in
    about ten lines (pytest shows the caller's line, not this package's source); warns (UserWarning) where the check passes but proves little.
    Returns the Result, for further checks.

    >>> er.testing.assert_matmul_valid(a, b, my_kernel(a, b), standard="any_order")
    """
    __tracebackhide__ = True  # pytest: the caller's line, not this package's source
    from ._ops import _Operand, matmul, mma, mma_scaled, mmai
    from ._result import Result

    if isinstance(out, np.generic):
        out = np.asarray(out)  # a numpy scalar (numpy.matmul of two vectors): a 0-d array
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
    aa = a if isinstance(a, Result) else _Operand(a, "a", ndims=None).arr
    bb = b if isinstance(b, Result) else _Operand(b, "b", ndims=None).arr
    engine = dict(backend=backend, threads=threads, strategy=strategy, device=device)
    from ._ops import _CHECK

    # the Result and the check in one call where the product is made by _run (the library's er_check:
    # in tiles on a large output, whose rounded answers make the Result: one reference, bounded memory)
    chk = {"output": out, "opts": (compute, ulps, flush_to_zero, standard), "key": None, "report": None}
    token = _CHECK.set(chk)
    try:
        if scales is not None:
            sa, sb = scales
            r = mma_scaled(aa, bb, sa, sb, block=block, C=c, dtype="float32" if dtype is None else dtype,
                           rounding=rounding, saturate=saturate, **engine)
        elif not A.is_float(A._bits_of(aa.rounded if isinstance(aa, Result) else aa)[1]):
            if saturate:
                raise ValueError("saturate= has no meaning for an integer product (mmai)")
            r = mmai(aa, bb, c, **engine)
        elif c is not None:
            r = mma(aa, bb, c, dtype=dtype, rounding=rounding, saturate=saturate, **engine)
        else:
            r = matmul(aa, bb, dtype=dtype, rounding=rounding, saturate=saturate, **engine)
    finally:
        _CHECK.reset(token)
    # the report made with the Result is this call's alone: the Result returned keeps neither it nor out
    # (a later report on out, changed in place since, is made again)
    if chk["report"] is not None:
        r._checked = (out, chk["key"], chk["report"])
    try:
        rep = report(r, out, compute=compute, ulps=ulps, flush_to_zero=flush_to_zero, standard=standard)
    finally:
        r._checked = None
    _matmul_verdict(rep, msg)
    return r


def assert_valid(result, output, *, standard=_STANDARD_DEFAULT, compute=None, ulps=None, flush_to_zero=False,
                 msg=None):
    """Assert that output is what a correct implementation of result's operation can produce, element by
    element, for any Result (er.softmax, er.gelu, er.layer_norm, er.scaled_dot_product_attention, er.matmul,
    ...).  For a result with several outputs, output is a dict (or Outputs) of them by name, each checked
    (a name not given is not checked); or one array for result's only output.

    standard, compute, ulps, flush_to_zero: the implementations judged correct (Result.covers': for the
    operations beyond matmul ulps=None is each library function's documented default, docs/ops/).
    msg: a string put before the message, or a function of it.

    Raises AssertionError in assert_close's style: the count outside, the worst element (output, rounded,
    allowed range, ulps beyond), the greatest absolute and relative difference from rounded, and the
    standard.  Returns the result.

    >>> r = er.softmax(x, dim=-1)
    >>> er.testing.assert_valid(r, torch.softmax(x, -1), standard="any_order")
    """
    __tracebackhide__ = True  # pytest: the caller's line, not this package's source
    from ._result import Outputs, Result

    if not isinstance(result, Result):
        raise TypeError(f"assert_valid: result must be an exactref Result, not {type(result).__name__}")
    if result._outputs is not None:
        if not isinstance(output, (dict, Outputs)):
            raise TypeError(f"assert_valid: {result.op} has several outputs ({', '.join(result._outputs)}): "
                            f"give output as a dict by name")
        parts = [(name, result[name], out) for name, out in output.items()]
    else:
        parts = [(None, result, output)]
    texts = []
    for name, r, out in parts:
        rep = report(r, out, compute=compute, ulps=ulps, flush_to_zero=flush_to_zero, standard=standard)
        if rep["message"] is not None:
            texts.append(rep["message"] if name is None else f"output {name!r}: " + rep["message"])
    if texts:
        text = "\n\n".join(texts)
        if msg is not None:
            text = (msg(text) if callable(msg) else f"{msg}\n\n{text}")
        raise AssertionError(text)
    return result
