"""_ops.py: the operations: matmul, mma, mma_scaled and mmai, each returning a Result."""
from __future__ import annotations

import contextvars

import numpy as np

from . import _arrays as _A
from . import _core
from ._result import Result


class _Operand:
    """One operand ready for the C layer: the array, its bit-pattern view, its format, and the earlier
    result it came from (results as inputs)."""

    __slots__ = ("arr", "bits", "fmt", "result")

    def __init__(self, x, name, dtype=None):
        self.result = None
        if isinstance(x, Result):
            x._single()
            self.result = x
            self.arr = x.rounded
        else:
            try:
                self.arr = _A.asarray(x, dtype)
            except (TypeError, ValueError) as e:
                raise (TypeError if isinstance(e, TypeError) else ValueError)(f"{name}: {e}") from None
        if self.arr.ndim not in (2, 3):
            raise ValueError(f"{name} must be 2-D or 3-D (a leading batch dimension), not {self.arr.ndim}-D "
                             f"(shape {tuple(self.arr.shape)})")
        self.bits, self.fmt = _A._bits_of(self.arr)


def _out_shape(a, b):
    sa, sb = a.arr.shape, b.arr.shape
    if sa[-1] != sb[-2]:
        raise ValueError(f"A is {sa[-2]} x {sa[-1]} and B is {sb[-2]} x {sb[-1]}: the inner dimensions differ")
    if len(sa) == 3 and len(sb) == 3 and sa[0] != sb[0]:
        raise ValueError(f"A has batch {sa[0]} and B has batch {sb[0]}")
    batch = sa[0] if len(sa) == 3 else sb[0] if len(sb) == 3 else None
    return (sa[-2], sb[-1]) if batch is None else (batch, sa[-2], sb[-1])


def _default_dtype(a, b):
    """dtype=None: int32 for integer operands; the operands' format where both share a float format of
    16 bits or more; else the wider of them, at least float32."""
    ia, ib = _A._BY_ID[a.fmt], _A._BY_ID[b.fmt]
    if ia["kind"] != "float" or ib["kind"] != "float":
        return _core.format_id("i32")
    if a.fmt == b.fmt and ia["width"] >= 16:
        return a.fmt
    wide = a.fmt if ia["significand_bits"] >= ib["significand_bits"] else b.fmt
    return wide if _A._BY_ID[wide]["significand_bits"] >= 23 else _A.FMT_F32


# er.testing.assert_matmul_valid's output under test, set while it makes its Result: _run then makes
# the Result and the check together (_core.create_checked: the library's er_check, in tiles on a large
# output, whose rounded answers make the Result: one reference, bounded memory) and keeps the report
_CHECK = contextvars.ContextVar("exactref_check", default=None)


def _run(op, a, b, c, dfmt, rounding, scales=None, block=0, backward=None):
    shape = _out_shape(a, b)
    if c is not None and tuple(c.arr.shape)[-2:] != tuple(shape)[-2:]:
        raise ValueError(f"C has shape {tuple(c.arr.shape)}; the product has shape {tuple(shape)}")
    info = _A._BY_ID[dfmt]
    d_bits = np.empty(shape, _A._UINT[info["storage_bytes"]])
    dir_ = _core.rounding_id(rounding) if isinstance(rounding, str) else int(rounding)
    sa = sb = None
    sfmt = 0
    if scales is not None:
        sa, sb = scales
        sfmt = sa.fmt
        if sb.fmt != sfmt:
            raise ValueError(f"a_scale is {_A.format_name(sa.fmt)} and b_scale is {_A.format_name(sb.fmt)}: "
                             f"both scales must have one format")
    froms = (a.result, b.result, c.result if c is not None else None)
    cfmt = c.fmt if c is not None else 0

    def create(key, out):
        fc, fu, ff, fs = key
        return _core.create(a.bits, a.fmt, b.bits, b.fmt, None if c is None else c.bits, cfmt,
                            None if sa is None else sa.bits, None if sb is None else sb.bits, sfmt, block,
                            out, dfmt, dir_, _core.BACKEND_AUTO, 0,
                            *[None if f is None else f._core_for(key) for f in froms], fc, fu, ff, fs)

    from ._result import _DEFAULT_KEY

    chk = _CHECK.get()
    core = None
    if chk is not None and all(f is None for f in froms):
        from ._result import _output_array

        try:
            out_bits, _ = _A._bits_of(_output_array(chk["output"], dfmt, shape))
        except (TypeError, ValueError):
            out_bits = None  # said by report, as without the check
        if out_bits is not None:
            core, chk["report"] = _core.create_checked(
                a.bits, a.fmt, b.bits, b.fmt, None if c is None else c.bits, cfmt, None if sa is None else sa.bits,
                None if sb is None else sb.bits, sfmt, block, d_bits, dfmt, dir_, _core.BACKEND_AUTO, 0, out_bits,
                *chk["key"], None)
    if core is None:
        core = create(_DEFAULT_KEY, d_bits)
    d_bits.flags.writeable = False
    rounded = _A._wrap_bits(d_bits, dfmt)

    def fresh(key):
        # results as inputs: other options take the earlier bounds with the same options; the rounded
        # answer is the same, so each new C result writes into its own scratch copy
        return create(key, np.empty(shape, _A._UINT[info["storage_bytes"]]))

    r = Result(op, core, rounded, recreate=fresh if any(f is not None for f in froms) else None)
    r._backward = backward  # called as backward(r, grad, **options): no reference cycle through r
    return r


def _matmul_backward(r, grad, *, dtype=None, rounding=None, **unknown):
    """matmul's backward on r's inputs: grad_A = grad B^T, grad_B = A^T grad, each exact, rounded once."""
    if unknown:
        raise TypeError(f"backward() got unexpected options: {', '.join(sorted(unknown))}")
    a, b = r._inputs
    g = _Operand(grad, "grad", None if (isinstance(grad, (np.ndarray, Result)) or hasattr(grad, "__dlpack__"))
                 else r._core.format)
    if not _A.is_float(g.fmt):
        raise TypeError("grad must have a float dtype")
    if tuple(g.arr.shape) != tuple(r.shape):
        raise ValueError(f"grad has shape {tuple(g.arr.shape)}; the output has shape {tuple(r.shape)}")
    fa = fb = -1
    if dtype is not None:
        fa = fb = _A.format_id(dtype)
    if rounding is None or (_core.rounding_id(rounding) if isinstance(rounding, str) else int(rounding)) == r._dir:
        ca, cb = r._core.backward(g.bits, g.fmt, fa, fb)
        ra = Result("matmul.backward", ca, None)
        rb = Result("matmul.backward", cb, None)
    else:
        # another rounding than the forward's: the same products through matmul
        at = _transposed(a)
        bt = _transposed(b)
        ra = matmul(g.arr, bt, dtype=a.fmt if fa < 0 else fa, rounding=rounding)
        rb = matmul(at, g.arr, dtype=b.fmt if fb < 0 else fb, rounding=rounding)
        ra._op = rb._op = "matmul.backward"
    return Result("matmul.backward", outputs={"grad_A": ra, "grad_B": rb})


def _transposed(x):
    arr = x.arr
    if isinstance(arr, _A.BitArray):
        return arr.transpose(*range(arr.ndim - 2), arr.ndim - 1, arr.ndim - 2)
    return np.swapaxes(arr, -1, -2)


def matmul(A, B, *, dtype=None, rounding="nearest_even"):
    """The exact product A B, rounded once into dtype, as a Result.

    A, B: anything er.asarray takes (numpy / ml_dtypes arrays, torch / JAX / CuPy tensors through
    DLPack, BitArray, a one-output Result); 2-D, or 3-D with a leading batch dimension (a 2-D operand
    is broadcast over the batch).  Both must be float formats (er.mmai multiplies integers).
    dtype: the output format (a name, MLIR or ml_dtypes spelling, or a dtype); None: the operands'
    format where both share one of 16 bits or more, else the wider of them and at least float32.
    rounding: nearest_even, nearest_away, zero, negative_inf, positive_inf or odd.

    >>> r = er.matmul(er.asarray([[1.0, 2.0]], "float32"), er.asarray([[3.0], [4.0]], "float32"))
    >>> r.rounded, r.covers(kernel_output).all(), r.tolerance(standard="any_order")
    """
    a = _Operand(A, "A")
    b = _Operand(B, "B")
    if not _A.is_float(a.fmt) or not _A.is_float(b.fmt):
        raise TypeError("matmul takes float operands; er.mmai multiplies integers")
    dfmt = _default_dtype(a, b) if dtype is None else _A.format_id(dtype)
    if not _A.is_float(dfmt):
        raise TypeError(f"matmul's dtype must be a float format, not {_A.format_name(dfmt)}")
    r = _run("matmul", a, b, None, dfmt, rounding, backward=_matmul_backward)
    r._inputs = (a, b)
    r._dir = _core.rounding_id(rounding) if isinstance(rounding, str) else int(rounding)
    return r


def mma(A, B, C, *, dtype=None, rounding="nearest_even"):
    """D = A B + C exactly, rounded once into dtype, as a Result.

    A, B, C: anything er.asarray takes, float formats (C's last two dimensions those of the product).
    dtype: the output format, default C's.  rounding: as for matmul.
    """
    a = _Operand(A, "A")
    b = _Operand(B, "B")
    c = _Operand(C, "C")
    if not (_A.is_float(a.fmt) and _A.is_float(b.fmt) and _A.is_float(c.fmt)):
        raise TypeError("mma takes float operands; er.mmai multiplies integers")
    dfmt = c.fmt if dtype is None else _A.format_id(dtype)
    r = _run("mma", a, b, c, dfmt, rounding)
    return r


def mma_scaled(A, B, a_scale, b_scale, *, block=None, C=None, dtype="float32", rounding="nearest_even",
               scale_dtype=None):
    """Block-scaled D = (A a_scale)(B b_scale) + C exactly, rounded once into dtype, as a Result.

    a_scale is m x ceil(k/block) and b_scale ceil(k/block) x n, both float8_e8m0fnu (MX, block 32 by
    default) or both float8_e4m3fn (NVFP4, block 16 by default); term p of element (i, j) is
    (A[i, p] a_scale[i, p // block]) (B[p, j] b_scale[p // block, j]).  A scale's sign bit is ignored
    (x * |s|), as the hardware reads nvfp4's ue4m3 scales.  scale_dtype names the scales' format when
    they are given as values or raw bit patterns; C, dtype and rounding are as for mma."""
    a = _Operand(A, "A")
    b = _Operand(B, "B")
    sa = _Operand(a_scale, "a_scale", scale_dtype)
    sb = _Operand(b_scale, "b_scale", scale_dtype)
    c = None if C is None else _Operand(C, "C")
    if block is None:
        block = 16 if sa.fmt == _core.format_id("f8E4M3FN") else 32
    if int(block) <= 0:
        raise ValueError(f"block must be positive, not {block}")
    dfmt = _A.format_id(dtype)
    return _run("mma_scaled", a, b, c, dfmt, rounding, scales=(sa, sb), block=int(block))


def mmai(A, B, C=None):
    """The integer product A B (+ C) of int8/uint8 operands, exact, in int32 (wrapped modulo 2^32).

    C (optional) is read as int32.  The result's guarantee is "exact": its tolerance is zero and only
    rounded itself is covered.
    """
    a = _Operand(A, "A")
    b = _Operand(B, "B")
    c = None if C is None else _Operand(C, "C", "int32")
    if _A.is_float(a.fmt) or _A.is_float(b.fmt):
        raise TypeError("mmai takes int8 or uint8 operands")
    return _run("mmai", a, b, c, _core.format_id("i32"), "nearest_even")
