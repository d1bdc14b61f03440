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

    __slots__ = ("arr", "bits", "fmt", "result", "name", "shape0", "expanded")

    def __init__(self, x, name, dtype=None, ndims=(2, 3)):
        self.result = None
        self.name = name
        self.expanded = False
        if isinstance(x, Result):
            x._single()
            self.result = x
            self.arr = x.rounded
        else:
            try:
                self.arr = _A.asarray(x, dtype)
            except (TypeError, ValueError) as e:
                raise (TypeError if isinstance(e, TypeError) else ValueError)(f"{name}: {e}") from None
        self.shape0 = tuple(self.arr.shape)
        if ndims is not None and self.arr.ndim not in ndims:
            raise ValueError(f"{name} must be 2-D or 3-D (a leading batch dimension), not {self.arr.ndim}-D "
                             f"(shape {tuple(self.arr.shape)})")
        self.bits, self.fmt = _A._bits_of(self.arr)

    def set_shape(self, shape, broadcast_from=None):
        """Give the C layer this operand in shape (row-major reshape; with broadcast_from, numpy's
        broadcast to that shape first: zero strides, a copy only where the merged dimensions need one)."""
        shape = tuple(shape)
        arr = self.arr
        if broadcast_from is not None and tuple(arr.shape) != tuple(broadcast_from):
            arr = _map_bits(arr, lambda x: np.broadcast_to(x, broadcast_from))
        if tuple(arr.shape) == shape and arr is self.arr:
            return
        if self.result is not None:
            core_shape = tuple(self.result._core.shape)
            if shape != core_shape:
                raise ValueError(f"{self.name}: a Result given as an operand is read with its own shape "
                                 f"{core_shape}; here it would need {shape} (pass result.rounded to broadcast it)")
        arr = _map_bits(arr, lambda x: x.reshape(shape))
        self.arr = arr
        self.bits, self.fmt = _A._bits_of(arr)


def _map_bits(arr, f):
    """f applied to an array or to a BitArray's bit patterns."""
    if isinstance(arr, _A.BitArray):
        return _A.BitArray(f(arr.bits), arr._fmt)
    return f(arr)


def _prod(shape):
    p = 1
    for s in shape:
        p *= int(s)
    return p


def _core_shape(shape):
    """The shape the C layer holds for an output of this shape: 2-D or 3-D, the leading dimensions
    merged into one batch (row-major), a 1-D output as one row."""
    shape = tuple(int(s) for s in shape)
    if len(shape) in (2, 3):
        return shape
    if len(shape) > 3:
        return (_prod(shape[:-2]),) + shape[-2:]
    return (1,) + shape if len(shape) == 1 else (1, 1)


def _plan(a, b):
    """torch.matmul's (and numpy.matmul's) shapes: a 1-D A is a row and a 1-D B a column (each
    dimension dropped from the output); the dimensions before the last two are batch dimensions,
    broadcast against each other.  Gives each operand the 2-D or 3-D shape the C layer takes (an
    operand without a batch of its own stays 2-D and is broadcast there) and returns the output's
    shape (None where it is the C layer's)."""
    sa, sb = tuple(a.arr.shape), tuple(b.arr.shape)
    if len(sa) == 0 or len(sb) == 0:
        raise ValueError(f"A has shape {sa} and B has shape {sb}: matmul needs at least one dimension in each")
    ma = sa if len(sa) > 1 else (1,) + sa
    mb = sb if len(sb) > 1 else sb + (1,)
    if ma[-1] != mb[-2]:
        raise ValueError(f"A is {ma[-2]} x {ma[-1]} and B is {mb[-2]} x {mb[-1]}: the inner dimensions differ")
    try:
        batch = tuple(int(x) for x in np.broadcast_shapes(ma[:-2], mb[:-2]))
    except ValueError:
        raise ValueError(f"A has batch dimensions {ma[:-2]} and B {mb[:-2]}: they do not broadcast "
                         f"(as torch.matmul and numpy.matmul broadcast them)") from None
    out = batch + (() if len(sa) == 1 else (ma[-2],)) + (() if len(sb) == 1 else (mb[-1],))
    nb = _prod(batch)
    for op, m in ((a, ma), (b, mb)):
        own = m[:-2]
        if not batch or (_prod(own) == 1 and (op.result is None or not own)):
            op.set_shape(m[-2:])  # no batch of its own: 2-D, the C layer broadcasts it over the batch
        elif own == batch:
            op.set_shape((nb,) + m[-2:])
        else:
            op.expanded = True
            op.set_shape((nb,) + m[-2:], broadcast_from=batch + m[-2:])
    core = (nb,) + (ma[-2], mb[-1]) if batch else (ma[-2], mb[-1])
    return (None if tuple(out) == core else tuple(out)), core


def _out_shape(a, b):
    sa, sb = a.arr.shape, b.arr.shape
    if sa[-1] != sb[-2]:
        raise ValueError(f"A is {sa[-2]} x {sa[-1]} and B is {sb[-2]} x {sb[-1]}: the inner dimensions differ")
    if len(sa) == 3 and len(sb) == 3 and sa[0] != sb[0]:
        raise ValueError(f"A has batch {sa[0]} and B has batch {sb[0]}")
    batch = sa[0] if len(sa) == 3 else sb[0] if len(sb) == 3 else None
    return (sa[-2], sb[-1]) if batch is None else (batch, sa[-2], sb[-1])


def _broadcast_c(c, user_shape, core_shape):
    """C (a bias) broadcast as torch broadcasts it to the output: (N,), (1, N), (M, 1), a scalar, a
    batch of them; zero strides, no copy where the merged dimensions allow."""
    if c.result is not None:
        if tuple(c.arr.shape) not in (tuple(user_shape), tuple(core_shape)):
            raise ValueError(f"C is a Result of shape {tuple(c.arr.shape)}; the product has shape {tuple(user_shape)} "
                             f"(a Result given as C is not broadcast)")
        c.set_shape(core_shape)
        return
    try:
        np.broadcast_shapes(tuple(c.arr.shape), tuple(user_shape))
        ok = len(c.arr.shape) <= len(user_shape) and \
            np.broadcast_shapes(tuple(c.arr.shape), tuple(user_shape)) == tuple(user_shape)
    except ValueError:
        ok = False
    if not ok:
        raise ValueError(f"C has shape {tuple(c.arr.shape)}; it does not broadcast to the product's shape "
                         f"{tuple(user_shape)}")
    c.set_shape(core_shape, broadcast_from=tuple(user_shape))


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


def _opts_of(saturate):
    return _SATURATE if saturate else 0


_SATURATE = 1  # ER_OPT_SATURATE (include/exactref/core/er_types.h)


_BACKENDS = {"auto": _core.BACKEND_AUTO, "cpu": _core.BACKEND_CPU, "opencl": _core.BACKEND_OPENCL,
             "cuda": _core.BACKEND_CUDA}
_STRATEGIES = {"auto": _core.STRATEGY_AUTO, "exact": _core.STRATEGY_EXACT}


def _engine(backend, threads, strategy, device):
    """The command's --backend, --threads, --strategy and --device as the C layer's arguments (none of
    them changes a bit of any answer or bound)."""
    if backend not in _BACKENDS:
        raise ValueError(f"backend must be auto, cpu, opencl or cuda, not {backend!r}")
    if strategy not in _STRATEGIES:
        raise ValueError(f"strategy must be auto or exact, not {strategy!r}")
    if isinstance(threads, bool) or not isinstance(threads, (int, np.integer)) or not 0 <= int(threads) <= 1024:
        raise ValueError(f"threads must be an integer from 0 (one per core) to 1024, not {threads!r}")
    if device is not None and (isinstance(device, bool) or not isinstance(device, (int, np.integer)) or
                               not 0 <= int(device) <= 4096):
        raise ValueError(f"device must be None or a device index (exactref info lists them), not {device!r}")
    return _BACKENDS[backend], int(threads), _STRATEGIES[strategy], -1 if device is None else int(device)


def _run(op, a, b, c, dfmt, rounding, scales=None, block=0, backward=None, saturate=False, batched=False,
         engine=(0, 0, 0, -1)):
    if batched:
        nd, shape = _plan(a, b)
        if c is not None:
            _broadcast_c(c, nd if nd is not None else shape, shape)
    else:
        nd = None
        shape = _out_shape(a, b)
        if c is not None and tuple(c.arr.shape)[-2:] != tuple(shape)[-2:]:
            raise ValueError(f"C has shape {tuple(c.arr.shape)}; the product has shape {tuple(shape)}")
    info = _A._BY_ID[dfmt]
    if saturate and info["kind"] != "float":
        raise ValueError(f"saturate= has no meaning for an integer output ({_A.format_name(dfmt)})")
    opts = _opts_of(saturate)
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
                            out, dfmt, dir_, engine[0], engine[1],
                            *[None if f is None else f._core_for(key) for f in froms], fc, fu, ff, fs, opts,
                            engine[2], engine[3])

    from ._result import _DEFAULT_KEY

    chk = _CHECK.get()
    core = None
    if chk is not None and nd is None and all(f is None for f in froms):
        from ._result import _output_array

        try:
            out_bits, _ = _A._bits_of(_output_array(chk["output"], dfmt, shape))
        except (TypeError, ValueError):
            out_bits = None  # said by report, as without the check
        key = None
        if out_bits is not None:
            import warnings

            from ._result import _opts_key

            class _Shim:  # what _opts_key reads of a Result not made yet
                pass

            shim = _Shim()
            shim.op = op
            if _A.is_float(a.fmt) and _A.is_float(b.fmt):
                shim._operand_fmts = (a.fmt, b.fmt)
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")  # said once, by report
                    key = _opts_key(shim, *chk["opts"])
            except (TypeError, ValueError):
                key = None  # said by report, after the Result, as without the check
        if key is not None:
            chk["key"] = key
            core, chk["report"] = _core.create_checked(
                a.bits, a.fmt, b.bits, b.fmt, None if c is None else c.bits, cfmt, None if sa is None else sa.bits,
                None if sb is None else sb.bits, sfmt, block, d_bits, dfmt, dir_, engine[0], engine[1], out_bits,
                *key, None, opts, engine[2], engine[3])
    if core is None:
        core = create(_DEFAULT_KEY, d_bits)
    d_bits.flags.writeable = False
    rounded = _A._wrap_bits(d_bits, dfmt)

    def fresh(key):
        # results as inputs: other options take the earlier bounds with the same options; the rounded
        # answer is the same, so each new C result writes into its own scratch copy
        return create(key, np.empty(shape, _A._UINT[info["storage_bytes"]]))

    r = Result(op, core, rounded, recreate=fresh if any(f is not None for f in froms) else None, shape=nd)
    r._backward = backward  # called as backward(r, grad, **options): no reference cycle through r
    r._saturate = bool(saturate)
    if _A.is_float(a.fmt) and _A.is_float(b.fmt):
        r._operand_fmts = (a.fmt, b.fmt)  # the standards' operand check (_opts_key)
    return r


def _matmul_backward(r, grad, *, dtype=None, rounding=None, **unknown):
    """matmul's backward on r's inputs: grad_A = grad B^T, grad_B = A^T grad, each exact, rounded once."""
    if unknown:
        raise TypeError(f"backward() got unexpected options: {', '.join(sorted(unknown))}")
    a, b = r._inputs
    batched = len(r._core.shape) == 3
    for op in (a, b):
        # an operand broadcast over batch dimensions it lacks: torch's gradient sums over them, the
        # library's is per batch (kept for a 2-D operand of a 3-D product, as before N-D shapes)
        lacks = op.expanded or (batched and op.arr.ndim == 2 and not (r._nd is None and len(op.shape0) == 2))
        if lacks:
            raise NotImplementedError(f"backward of a matmul whose {op.name} was broadcast over batch dimensions it "
                                      f"lacks (its gradient would sum over them): broadcast {op.name} to the "
                                      f"batch first")
    g = _Operand(grad, "grad", None if (isinstance(grad, (np.ndarray, Result)) or hasattr(grad, "__dlpack__"))
                 else r._core.format, ndims=None)
    if not _A.is_float(g.fmt):
        raise TypeError("grad must have a float dtype")
    if tuple(g.arr.shape) != tuple(r.shape):
        raise ValueError(f"grad has shape {tuple(g.arr.shape)}; the output has shape {tuple(r.shape)}")
    if r._nd is not None:
        g.set_shape(r._core.shape)
    fa = fb = -1
    if dtype is not None:
        fa = fb = _A.format_id(dtype)
    if rounding is None or (_core.rounding_id(rounding) if isinstance(rounding, str) else int(rounding)) == r._dir:
        ca, cb = r._core.backward(g.bits, g.fmt, fa, fb)
        ra = Result("matmul.backward", ca, None, shape=None if tuple(ca.shape) == a.shape0 else a.shape0)
        rb = Result("matmul.backward", cb, None, shape=None if tuple(cb.shape) == b.shape0 else b.shape0)
    else:
        # another rounding than the forward's: the same products through matmul
        at = _transposed(a)
        bt = _transposed(b)
        ra = matmul(g.arr, bt, dtype=a.fmt if fa < 0 else fa, rounding=rounding)
        rb = matmul(at, g.arr, dtype=b.fmt if fb < 0 else fb, rounding=rounding)
        if r._nd is not None:
            ra, rb = ra.reshape(a.shape0), rb.reshape(b.shape0)
        ra._op = rb._op = "matmul.backward"
    return Result("matmul.backward", outputs={"grad_A": ra, "grad_B": rb})


def _transposed(x):
    arr = x.arr
    if isinstance(arr, _A.BitArray):
        return arr.transpose(*range(arr.ndim - 2), arr.ndim - 1, arr.ndim - 2)
    return np.swapaxes(arr, -1, -2)


def matmul(A, B, *, dtype=None, rounding="nearest_even", saturate=False, backend="auto", threads=0, strategy="auto",
           device=None):
    """The exact product A B, rounded once into dtype, as a Result.

    A, B: anything er.asarray takes (numpy / ml_dtypes arrays, torch / JAX / CuPy tensors through
    DLPack, BitArray, a one-output Result), with torch.matmul's shapes: 2-D matrices; a 1-D A is a row
    and a 1-D B a column (that dimension is dropped from the output); dimensions before the last two
    are batch dimensions, broadcast against each other ((B, H, L, d) @ (B, H, d, L), (B, 1, L, d) @
    (H, d, L), a 2-D operand over any batch).  Both must be float formats (er.mmai multiplies integers).
    dtype: the output format (a name, MLIR or ml_dtypes spelling, a numpy / ml_dtypes or torch dtype);
    None: the operands' format where both share one of 16 bits or more, else the wider of them and at
    least float32.
    rounding: nearest_even, nearest_away, zero, negative_inf, positive_inf or odd.
    saturate: the output cast saturates (CUDA's satfinite, torch's CPU .to(float8_e4m3fn)): a value
    beyond the largest finite one gives the largest finite value of its sign instead of inf or NaN, in
    rounded and in the bounds (the command's --saturate).
    backend ("auto", "cpu", "opencl", "cuda"), threads (0: one per core), strategy ("auto", "exact")
    and device (an OpenCL or CUDA device index): where and how the exact product is computed, as the
    command's --backend, --threads, --strategy and --device; the bits are the same whatever they are.

    >>> r = er.matmul(er.asarray([[1.0, 2.0]], "float32"), er.asarray([[3.0], [4.0]], "float32"))
    >>> r.rounded, r.covers(kernel_output).all(), r.tolerance(standard="any_order")
    """
    a = _Operand(A, "A", ndims=None)
    b = _Operand(B, "B", ndims=None)
    if not _A.is_float(a.fmt) or not _A.is_float(b.fmt):
        raise TypeError("matmul takes float operands; er.mmai multiplies integers")
    dfmt = _default_dtype(a, b) if dtype is None else _dtype_arg(dtype)
    if not _A.is_float(dfmt):
        raise TypeError(f"matmul's dtype must be a float format, not {_A.format_name(dfmt)}")
    r = _run("matmul", a, b, None, dfmt, rounding, backward=_matmul_backward, saturate=saturate, batched=True,
             engine=_engine(backend, threads, strategy, device))
    r._inputs = (a, b)
    r._dir = _core.rounding_id(rounding) if isinstance(rounding, str) else int(rounding)
    return r


def _dtype_arg(dtype, what="dtype"):
    try:
        return _A.format_id(dtype)
    except (TypeError, ValueError) as e:
        raise (TypeError if isinstance(e, TypeError) else ValueError)(f"{what}: {e}") from None


def mma(A, B, C, *, dtype=None, rounding="nearest_even", saturate=False, backend="auto", threads=0, strategy="auto",
        device=None):
    """D = A B + C exactly, rounded once into dtype, as a Result.

    A, B: as for matmul (torch.matmul's shapes, batch dimensions broadcast); C: any float format,
    broadcast to the product's shape as torch broadcasts a bias (torch.addmm, C + A @ B): (N,),
    (1, N), (M, 1), a scalar, (B, 1, N), ... (zero strides: no copy).  dtype: the output format,
    default C's.  rounding, saturate, backend, threads, strategy and device: as for matmul.
    """
    a = _Operand(A, "A", ndims=None)
    b = _Operand(B, "B", ndims=None)
    c = _Operand(C, "C", ndims=None)
    if not (_A.is_float(a.fmt) and _A.is_float(b.fmt) and _A.is_float(c.fmt)):
        raise TypeError("mma takes float operands; er.mmai multiplies integers")
    dfmt = c.fmt if dtype is None else _dtype_arg(dtype)
    r = _run("mma", a, b, c, dfmt, rounding, saturate=saturate, batched=True,
             engine=_engine(backend, threads, strategy, device))
    return r


def mma_scaled(A, B, a_scale, b_scale, *, block=None, C=None, dtype="float32", rounding="nearest_even",
               scale_dtype=None, saturate=False, backend="auto", threads=0, strategy="auto", device=None,
               alpha=1.0, beta=None, bias=None, block_n=None):
    """Block-scaled D = (A a_scale)(B b_scale) + C exactly, rounded once into dtype, as a Result.

    a_scale is m x ceil(k/block) and b_scale ceil(k/block) x n, both float8_e8m0fnu (MX, block 32 by
    default), both float8_e4m3fn (NVFP4, block 16 by default) or both float8_e5m3fnu (UE5M3, with
    float4_e2m1fn elements only, block 16 by default); term p of element (i, j) is
    (A[i, p] a_scale[i, p // block]) (B[p, j] b_scale[p // block, j]).  A scale's sign bit is ignored
    (x * |s|), as the hardware reads nvfp4's ue4m3 scales.  scale_dtype names the scales' format when
    they are given as values or raw bit patterns; C, dtype, rounding, saturate and the engine's
    options (backend, threads, strategy, device) are as for mma.

    float32 (bfloat16, float16) scales, as fp8 GEMMs take them after a block's sum, their shape saying
    the granularity: a scalar (per tensor: torch.tensor(.37)), a_scale (m,) or (m, 1) per row of A,
    b_scale (n,) or (1, n) per column of B, a_scale (m, ceil(k/block)) and b_scale (ceil(k/block), n)
    or (ceil(k/block), ceil(n/block_n)) per block (DeepGEMM's 1 x 128 and 128 x 128; block and block_n
    128 by default).  The product is the library's scaled one (include/exactref/scaled.h): alpha times
    the sum over blocks of sa sb (sum of a b), plus beta C (beta 1 when C is given) and bias ((n,) or
    (1, n)), exact and rounded once; its bounds (tolerance, covers, ...) take the standards
    scaled:bk=.. (docs/scaled.md), by default scaled:bk=<block>.  A and B are 2-D there, of at most
    24 significant bits (int8 / uint8 operands are read as their float32 values).  A float64 scale (a
    Python float) must be a float32 value; infinite and NaN scales are refused."""
    a = _Operand(A, "A")
    b = _Operand(B, "B")
    sa = _Operand(a_scale, "a_scale", scale_dtype, ndims=None)
    sb = _Operand(b_scale, "b_scale", scale_dtype, ndims=None)
    c = None if C is None else _Operand(C, "C", ndims=None)
    engine = dict(backend=backend, threads=threads, strategy=strategy, device=device)
    _engine(**engine)
    if sa.fmt in _WIDE_SCALES or sb.fmt in _WIDE_SCALES:
        return _wide_scaled(a, b, sa, sb, c, block, dtype, rounding, saturate, engine, alpha=alpha, beta=beta,
                            bias=None if bias is None else _Operand(bias, "bias", ndims=None), block_n=block_n)
    if alpha != 1.0 or beta is not None or bias is not None or block_n is not None:
        raise ValueError("alpha, beta, bias and block_n are taken with float32 (bfloat16, float16) scales, not "
                         "with MX / NVFP4 block scales")
    for op in (sa, sb):
        if op.arr.ndim not in (2, 3):
            raise ValueError(f"{op.name} must be 2-D or 3-D (a leading batch dimension), not {op.arr.ndim}-D "
                             f"(shape {tuple(op.arr.shape)}); float32, bfloat16 or float16 scales may be scalars "
                             f"or vectors (per tensor, per row of A, per column of B)")
    if block is None:
        block = 16 if sa.fmt in (_core.format_id("f8E4M3FN"), _core.format_id("f8E5M3FNU")) else 32
    if int(block) <= 0:
        raise ValueError(f"block must be positive, not {block}")
    dfmt = _dtype_arg(dtype)
    if c is not None:
        _broadcast_c(c, _out_shape(a, b), _out_shape(a, b))
    return _run("mma_scaled", a, b, c, dfmt, rounding, scales=(sa, sb), block=int(block), saturate=saturate,
                engine=_engine(**engine))


_WIDE_SCALES = tuple(_core.format_id(n) for n in ("f32", "bf16", "f16", "f64"))
_BF16 = _core.format_id("bf16")


def _values64(op):
    """An operand's values as float64 (every modelled float value is one: exact)."""
    if op.fmt == _A.FMT_F64:
        return np.asarray(op.arr, np.float64)
    return np.asarray(_A._convert(op.bits, op.fmt, _A.FMT_F64), np.float64)


def _significant_bits(fmt):
    """The most significant bits a value of fmt has: a float's significand with its leading bit, an
    integer's magnitude bits."""
    info = _A._BY_ID[fmt]
    if info["kind"] == "float":
        return int(info["significand_bits"]) + 1
    return int(info["width"]) - (1 if info["is_signed"] else 0)


def _scale_values(op):
    v = _values64(op)
    if np.isinf(v).any():
        # sa sb (sum of a b) is +-inf or NaN by the sum's sign; the operands scaled first would give
        # NaN for every zero term (0 inf): no kernel order has one answer there
        bad = np.flatnonzero(np.isinf(v).reshape(-1))[0]
        raise ValueError(f"{op.name}: element {bad} is {v.reshape(-1)[bad]!r}: an infinite scale applied after the "
                         f"sum is not modelled")
    if op.fmt == _A.FMT_F64:
        # a float64 scale (a Python float) must be a float32 value: the kernel's scale is one
        with np.errstate(over="ignore"):
            ok = (v.astype(np.float32).astype(np.float64) == v) | np.isnan(v)
        if not ok.all():
            bad = np.flatnonzero(~ok.reshape(-1))[0]
            raise ValueError(f"{op.name}: {v.reshape(-1)[bad]!r} is not a float32 value: pass the kernel's float32 "
                             f"scale (np.float32(x), torch.tensor(x)) or name scale_dtype='float32'")
    return v


def _f32_bits(values):
    """float64 values that are float32 values, as a float32 array's bit patterns (exact)."""
    return np.ascontiguousarray(np.asarray(values, np.float64).astype(np.float32)).view(np.uint32)


def _scale_2d(op, m, n, which):
    """A scale given as torch takes it (a scalar, (m,) for A, (n,) for B) in the library's 2-D shape:
    1 x 1, m x 1, 1 x n; a 2-D scale as it is (the library checks its shape against the blocks)."""
    shape = tuple(op.arr.shape)
    if len(shape) == 2:
        return shape
    if _prod(shape) == 1 and len(shape) <= 2:
        return (1, 1)
    if len(shape) == 1 and which == "a" and shape[0] == m:
        return (m, 1)
    if len(shape) == 1 and which == "b" and shape[0] == n:
        return (1, n)
    want = (f"a scalar (per tensor), ({m},) or ({m}, 1) (per row of A), or ({m}, ceil(k / block)) (per 1 x block "
            f"block)") if which == "a" else (f"a scalar (per tensor), ({n},) or (1, {n}) (per column of B), or "
                                             f"(ceil(k / block), ceil({n} / block_n)) (per block)")
    raise ValueError(f"{op.name} has shape {shape}: {want}")


def _wide_scaled(a, b, sa, sb, c, block, dtype, rounding, saturate, engine, *, alpha=1.0, beta=None, bias=None,
                 block_n=None, op="mma_scaled"):
    """A product with float32 (bfloat16, float16) scales applied after a block's sum, through the
    library's scaled product (include/exactref/scaled.h): D = alpha sum_blocks sa sb (sum a b) + beta C +
    bias, exact, rounded once.  Its Result's bounds take the standards scaled:bk=.. (docs/proofs/scaled.md);
    the default is scaled:bk=<block> (block_k: 128 unless given), as `exactref check` takes."""
    if a.arr.ndim != 2 or b.arr.ndim != 2:
        raise ValueError(f"float32 scales take 2-D A and B (A is {a.arr.ndim}-D, B is {b.arr.ndim}-D)")
    if sa.fmt not in _WIDE_SCALES or sb.fmt not in _WIDE_SCALES:
        # an integer scale (up to 31 significant bits) is no float32 value, and an MX scale (e8m0, e4m3)
        # means per-32/16 blocks and a sign ignored, not a float32 scale applied after a block's sum
        raise ValueError(f"a_scale is {_A.format_name(sa.fmt)} and b_scale is {_A.format_name(sb.fmt)}: scales "
                         f"applied after the sum must both be float32, bfloat16 or float16 (block scales of MX "
                         f"or NVFP4 formats must both be of that format)")
    ops = []
    for x in (a, b):
        if _significant_bits(x.fmt) > 24:
            raise ValueError(f"{x.name} is {_A.format_name(x.fmt)}: its product with a float32 scale is not exact "
                             f"in binary64 (float32 scales take operands of float32 or narrower, or integers of "
                             f"at most 24 bits)")
        if _A.is_float(x.fmt):
            ops.append((x.bits, x.fmt))
        else:  # int8 / uint8 / int16 (W8A8 kernels): their values are float32 values
            ops.append((_f32_bits(_values64(x)), _A.FMT_F32))
    m, k = a.arr.shape
    kb, n = b.arr.shape
    if kb != k:
        raise ValueError(f"A is {m} x {k} and B is {kb} x {n}: the inner dimensions differ")
    va, vb = _scale_values(sa), _scale_values(sb)
    shp_a, shp_b = _scale_2d(sa, m, n, "a"), _scale_2d(sb, m, n, "b")
    bk = 0 if block is None else int(block)
    if block is not None and bk <= 0:
        raise ValueError(f"block must be positive, not {block}")
    bn = 0 if block_n is None else int(block_n)
    if block_n is not None and bn <= 0:
        raise ValueError(f"block_n must be positive, not {block_n}")
    if block_n is None and shp_b[0] > 1 and shp_b[1] == n and n > 1:
        bn = 1  # (ceil(k / block), n): per k-block and column of B
    if sa.fmt == _BF16 and sb.fmt == _BF16:
        sfmt, bits_a, bits_b = _BF16, sa.bits.reshape(shp_a), sb.bits.reshape(shp_b)
    else:  # float32, float16 and float32-valued float64 scales: float32 (exact)
        sfmt, bits_a, bits_b = _A.FMT_F32, _f32_bits(va).reshape(shp_a), _f32_bits(vb).reshape(shp_b)
    dfmt = _dtype_arg(dtype)
    if not _A.is_float(dfmt):
        raise TypeError(f"a scaled product's dtype must be a float format, not {_A.format_name(dfmt)}")
    cbits, cfmt = None, 0
    if c is not None:
        _broadcast_c(c, (m, n), (m, n))  # torch's broadcasting of C (zero strides: no copy)
        cbits, cfmt = c.bits, c.fmt
        if beta is None:
            beta = 1.0
    elif beta not in (None, 0, 0.0):
        raise ValueError("beta has no effect without C")
    biasbits, biasfmt = None, 0
    if bias is not None:
        shape = tuple(bias.arr.shape)
        if shape not in ((n,), (1, n)):
            raise ValueError(f"bias has shape {shape}: expected ({n},) or (1, {n}) (added to every row)")
        bias.set_shape((1, n))
        biasbits, biasfmt = bias.bits, bias.fmt
    _engine(**engine)  # the reference's backend is the CPU's; the other options are checked, not used
    dir_ = _core.rounding_id(rounding) if isinstance(rounding, str) else int(rounding)
    info = _A._BY_ID[dfmt]
    d_bits = np.empty((m, n), _A._UINT[info["storage_bytes"]])
    core = _core.scaled_create(ops[0][0], ops[0][1], ops[1][0], ops[1][1], bits_a, bits_b, sfmt, bk, bn,
                               float(alpha), 0.0 if beta is None else float(beta), cbits, cfmt, biasbits, biasfmt,
                               d_bits, dfmt, dir_, _opts_of(saturate), int(engine.get("threads", 0)))
    d_bits.flags.writeable = False
    r = Result(op, core, _A._wrap_bits(d_bits, dfmt))
    r._saturate = bool(saturate)
    r._default_standard = f"scaled:bk={bk if bk else 128}"
    r._operand_fmts = (ops[0][1], ops[1][1])  # the standards' operand check (scaled:..,partial=hopper-fp8)
    return r


def scaled_mm(a, b, scale_a, scale_b, bias=None, scale_result=None, out_dtype=None, use_fast_accum=False, *,
              alpha=1.0, beta=None, c=None, block=None, block_n=None, rounding="nearest_even", saturate=False,
              threads=0):
    """torch._scaled_mm's product, exactly: D = alpha sum_blocks sa sb (sum a b) + beta c + bias, rounded
    once into out_dtype, as a Result whose bounds take the scaled:bk=.. standards (docs/scaled.md).

    a (m x k), b (k x n): 2-D, float formats of at most 24 significant bits (float8, bfloat16, float16,
    float32; torch's fp8 tensors as they are); scale_a, scale_b: float32 (or bfloat16) scales as
    torch takes them, their shape saying the granularity: a scalar (per tensor), scale_a (m,) or
    (m, 1) per row, scale_b (n,) or (1, n) per column, scale_a (m, ceil(k / block)) and scale_b
    (ceil(k / block), ceil(n / block_n)) per block (DeepGEMM's 1 x 128 and 128 x 128: block and block_n
    128 by default).  bias: (n,) or (1, n), added to every row.  out_dtype: the output format (a torch
    dtype or a name; None: a's, as torch's).  scale_result: only None (or 1) is taken.
    use_fast_accum: taken and ignored: it changes how a GPU accumulates, not the exact answer; choose
    the standard that describes the kernel.  alpha, beta, c: cuBLASLt's epilogue (beta 1 when c is
    given).  rounding and saturate (the output cast saturates, as torch's CPU fp8 casts) as matmul's.

    The default standard is scaled:bk=<block> (the scales after each block's sum, DeepGEMM's and
    cuBLASLt's order); torch's CPU _scaled_mm scales the operands first: standard="scaled:bk=128,order=before".
    """
    del use_fast_accum
    if scale_result is not None:
        v = _values64(_Operand(scale_result, "scale_result", ndims=None))
        if v.size != 1 or float(v.reshape(-1)[0]) != 1.0:
            raise NotImplementedError("scale_result other than 1 is not modelled (fold it into alpha where the "
                                      "kernel multiplies before adding the bias)")
    A_ = _Operand(a, "a")
    B_ = _Operand(b, "b")
    sa = _Operand(scale_a, "scale_a", ndims=None)
    sb = _Operand(scale_b, "scale_b", ndims=None)
    cc = None if c is None else _Operand(c, "c", ndims=None)
    bb = None if bias is None else _Operand(bias, "bias", ndims=None)
    dtype = A_.fmt if out_dtype is None else out_dtype
    engine = dict(backend="auto", threads=threads, strategy="auto", device=None)
    return _wide_scaled(A_, B_, sa, sb, cc, block, dtype, rounding, saturate, engine, alpha=alpha, beta=beta, bias=bb,
                        block_n=block_n, op="scaled_mm")


def mmai(A, B, C=None, *, backend="auto", threads=0, strategy="auto", device=None):
    """The integer product A B (+ C) of int8/uint8 operands, exact, in int32 (wrapped modulo 2^32).

    A, B: torch.matmul's shapes, as for matmul.  C (optional) is read as int32 and broadcast as mma's.
    The result's guarantee is "exact": its tolerance is zero and only rounded itself is covered.
    backend, threads, strategy and device: as for matmul.
    """
    a = _Operand(A, "A", ndims=None)
    b = _Operand(B, "B", ndims=None)
    c = None if C is None else _Operand(C, "C", "int32", ndims=None)
    if _A.is_float(a.fmt) or _A.is_float(b.fmt):
        raise TypeError("mmai takes int8 or uint8 operands")
    return _run("mmai", a, b, c, _core.format_id("i32"), "nearest_even", batched=True,
                engine=_engine(backend, threads, strategy, device))
