"""_result.py: seed 002's Result, ExactArray, Boundary and Outputs over the C library's results."""
import dataclasses

import numpy as np

from . import _arrays as A
from . import _core

_KINDS = ("+inf", "-inf", "nan")


@dataclasses.dataclass(frozen=True)
class Boundary:
    """One required rounding step of an operation."""

    kind: 'str'
    description: 'str'
    applies_to: 'str | None' = None


class Outputs:
    """Several outputs of one operation, by name: outputs.Q or outputs["Q"]; iterating gives the names in order.

    A read-only mapping (keys, values, items, len, in), as result.rounded, result.tolerance() and the
    rest give for a result with several outputs (backward's grad_A and grad_B)."""

    def __init__(self, items):
        object.__setattr__(self, "_items", dict(items))

    def __getattr__(self, name):
        items = object.__getattribute__(self, "_items")
        if name in items:
            return items[name]
        raise AttributeError(f"no output named {name!r} (outputs: {', '.join(items)})")

    def __setattr__(self, name, value):
        raise AttributeError("Outputs is read-only")

    def __getitem__(self, name):
        try:
            return self._items[name]
        except KeyError:
            raise KeyError(f"no output named {name!r} (outputs: {', '.join(self._items)})") from None

    def __iter__(self):
        return iter(self._items)

    def __len__(self):
        return len(self._items)

    def __contains__(self, name):
        return name in self._items

    def keys(self):
        return self._items.keys()

    def values(self):
        return self._items.values()

    def items(self):
        return self._items.items()

    def __repr__(self):
        return "Outputs(" + ", ".join(f"{k}={v!r}" for k, v in self._items.items()) + ")"


def _array_protocol(values, dtype, copy):
    """numpy's __array__ protocol over a kept, read-only array (copy=False refuses a conversion)."""
    if dtype is not None and np.dtype(dtype) != values.dtype:
        if copy is False:
            raise ValueError(f"converting {values.dtype} to {np.dtype(dtype)} needs a copy")
        return values.astype(dtype)
    return values.copy() if copy else values


class ExactArray:
    """Certified enclosures of the exact answer: lo <= exact <= hi per element (binary64, equal or adjacent),
    and odd, the exact value rounded to odd in binary64 (equal to it wherever lo == hi).

    It behaves as a read-only float64 array of odd for numpy (np.asarray, shape, dtype, ndim, size, len,
    indexing and slicing give ExactArrays); contains(x) and is_exact use the enclosures."""

    def __init__(self, lo, hi, odd):
        self.lo, self.hi, self.odd = lo, hi, odd
        for a in (lo, hi, odd):
            a.flags.writeable = False

    shape = property(lambda self: self.lo.shape, doc="The shape of the output.")
    ndim = property(lambda self: self.lo.ndim, doc="The number of dimensions.")
    size = property(lambda self: self.lo.size, doc="The number of elements.")
    dtype = property(lambda self: self.lo.dtype, doc="float64: lo, hi and odd are binary64.")

    @property
    def T(self):
        """The last two dimensions swapped."""
        return self.transpose(*range(self.ndim - 2), self.ndim - 1, self.ndim - 2) if self.ndim >= 2 else self

    @property
    def is_exact(self):
        """Where binary64 holds the exact value (lo == hi)."""
        return self.lo == self.hi

    def contains(self, x):
        """Where x lies within the enclosure."""
        x = np.asarray(x, dtype=np.float64)
        return (self.lo <= x) & (x <= self.hi)

    def __getitem__(self, key):
        lo = self.lo[key]
        if not isinstance(lo, np.ndarray):  # one element: its enclosure as 0-d arrays
            return ExactArray(np.asarray(lo), np.asarray(self.hi[key]), np.asarray(self.odd[key]))
        return ExactArray(lo, self.hi[key], self.odd[key])

    def __len__(self):
        if self.ndim == 0:
            raise TypeError("len() of a 0-d ExactArray")
        return self.shape[0]

    def __iter__(self):
        if self.ndim == 0:
            raise TypeError("iteration over a 0-d ExactArray")
        return (self[i] for i in range(self.shape[0]))

    def transpose(self, *axes):
        """The enclosures with their axes permuted (numpy's transpose)."""
        return ExactArray(self.lo.transpose(*axes), self.hi.transpose(*axes), self.odd.transpose(*axes))

    def reshape(self, shape):
        """The enclosures in a new row-major shape."""
        return ExactArray(self.lo.reshape(shape), self.hi.reshape(shape), self.odd.reshape(shape))

    def __array__(self, dtype=None, copy=None):
        return _array_protocol(self.odd, dtype, copy)

    def __float__(self):
        return float(self.odd)

    def tolist(self):
        """odd as nested Python floats."""
        return self.odd.tolist()

    def __repr__(self):
        def body(a, prefix):
            return np.array2string(a, separator=", ", prefix=prefix, floatmode="unique")

        if self.size and self.ndim and not (self.lo == self.hi).all():
            return (f"ExactArray(lo={body(self.lo, 'ExactArray(lo=')},\n"
                    f"           hi={body(self.hi, '           hi=')})")
        return f"ExactArray({body(self.odd, 'ExactArray(')}, exact=True)" if self.size else \
            f"ExactArray([], shape={self.shape})"


def _opts_key(result, compute, ulps, flush_to_zero, standard):
    """Resolve tolerance()'s arguments into the C layer's (compute id, ulps, ftz, standard name)."""
    if compute is None:
        cid = -1
    else:
        try:
            cid = A.format_id(compute)
        except (TypeError, ValueError) as e:
            raise (TypeError if isinstance(e, TypeError) else ValueError)(f"compute: {e}") from None
    if ulps is None:
        u = 0.0
    else:
        u = float(ulps)
        if not u >= 0:
            raise ValueError(f"ulps must be a non-negative number, not {ulps!r}")
    if not isinstance(standard, str):
        raise TypeError(f"standard must be a string, not {type(standard).__name__}")
    std = _core.check_standard(standard)
    return (cid, u, int(bool(flush_to_zero)), std)


class _Bounds:
    __slots__ = ("tolerance", "low", "high", "has_range", "may_pinf", "may_ninf", "may_nan")


class Result:
    """What an operation returns: the exact answer rounded once (rounded), its enclosures (exact), and
    the proven bounds on what a correct implementation may output (tolerance, finite_range, may_be,
    covers).  A result with several outputs (backward) gives Outputs by name; result[name] is one.
    Results are made by the operations (er.matmul, er.mma, er.mma_scaled, er.mmai), not directly."""

    # ---- construction (internal) ----
    def __init__(self, op, core=None, rounded=None, *, outputs=None, recreate=None, view=None, backward=None,
                 boundaries=None):
        self._op = op
        self._outputs = outputs  # name -> Result, for several outputs
        self._core = core  # the C result of one output
        self._rounded_arr = rounded
        self._recreate = recreate  # opts key -> C result with the earlier results' bounds under those options
        self._view = view  # (base Result, function core -> view core) for views
        self._backward = backward
        self._bcache = {}
        self._cores = {}
        self._normal = {}
        self._exact = None
        self._boundaries = boundaries

    # ---- one output or several ----
    def _single(self):
        """The one output's rounded array (results as inputs read it)."""
        if self._outputs is not None:
            raise ValueError(f"{self._op} has several outputs ({', '.join(self._outputs)}): use result[name]")
        return self.rounded

    def _one(self, what):
        if self._outputs is not None:
            raise ValueError(f"{what}: {self._op} has several outputs ({', '.join(self._outputs)}); "
                             f"check one at a time, as result[name]")

    def _map(self, f):
        return Outputs((k, f(v)) for k, v in self._outputs.items())

    def __getitem__(self, name):
        if self._outputs is None:
            raise KeyError(f"{self._op} has one output; result[name] is for results with several")
        try:
            return self._outputs[name]
        except KeyError:
            raise KeyError(f"no output named {name!r} (outputs: {', '.join(self._outputs)})") from None

    def __array__(self, dtype=None, copy=None):
        # a Result is not one array: say which one is meant rather than make a 0-d object array
        raise TypeError(f"a {self._op} Result is not an array: use result.rounded (the answer), result.exact "
                        f"(its enclosures) or result.tolerance()")

    # ---- attributes ----
    @property
    def op(self):
        """The operation: "matmul", "mma", "mma_scaled", "mmai" or "matmul.backward"."""
        return self._op

    @property
    def guarantee(self):
        """What rounded satisfies: "correctly_rounded" (the exact answer rounded once) or "exact"."""
        if self._outputs is not None:
            gs = {r.guarantee for r in self._outputs.values()}
            return gs.pop() if len(gs) == 1 else "correctly_rounded"
        return self._core.guarantee

    @property
    def boundaries(self):
        """The operation's required rounding steps: name -> Boundary(kind, description, applies_to)."""
        if self._boundaries is None:
            core = self._core if self._core is not None else next(iter(self._outputs.values()))._core
            self._boundaries = {n: Boundary(k, d, a) for (n, k, d, a) in core.boundaries}
        return dict(self._boundaries)

    @property
    def rounded(self):
        """The exact answer rounded once into the output dtype (a read-only numpy / ml_dtypes array;
        a BitArray for tf32; Outputs for several outputs)."""
        if self._outputs is not None:
            return self._map(lambda r: r.rounded)
        if self._rounded_arr is None:
            fmt = self._core.format
            bits = np.empty(self._core.shape, A._UINT[A._BY_ID[fmt]["storage_bytes"]])
            self._core.rounded_into(bits)
            arr = A._wrap_bits(bits, fmt)
            (arr.bits if isinstance(arr, A.BitArray) else arr).flags.writeable = False
            self._rounded_arr = arr
        return self._rounded_arr

    @property
    def shape(self):
        """The output's shape (Outputs of them for several outputs)."""
        if self._outputs is not None:
            return self._map(lambda r: r.shape)
        return self._core.shape

    @property
    def ndim(self):
        """The number of dimensions of the output (Outputs of them for several outputs)."""
        if self._outputs is not None:
            return self._map(lambda r: r.ndim)
        return len(self._core.shape)

    @property
    def dtype(self):
        """The output's numpy/ml_dtypes dtype (a format name where numpy has none: tf32)."""
        if self._outputs is not None:
            return self._map(lambda r: r.dtype)
        return A.dtype_of(self._core.format) or A.format_name(self._core.format)

    @property
    def stats(self):
        """What the engine did: elements by the fast path and by the exact accumulator, threads, backend."""
        if self._outputs is not None:
            return self._map(lambda r: r.stats)
        return self._core.stats

    @property
    def exact(self):
        """The exact answer as certified binary64 enclosures (an ExactArray), computed when first asked for."""
        if self._outputs is not None:
            return self._map(lambda r: r.exact)
        if self._exact is None:
            if self._view is not None:
                base, _, move = self._view
                self._exact = move(base.exact)
            elif self.guarantee == "exact":
                # integer products are exact: the enclosure is the value itself
                v = np.asarray(self.rounded, dtype=np.float64)
                self._exact = ExactArray(v, v.copy(), v.copy())
            else:
                shape = self._core.shape
                lo, hi, odd = (np.empty(shape, np.float64) for _ in range(3))
                self._core.exact(lo, hi, odd)
                self._exact = ExactArray(lo, hi, odd)
        return self._exact

    # ---- bounds ----
    def _core_for(self, key):
        """The C result whose bounds are these options' (results as inputs: the earlier bounds taken with
        the same options)."""
        if self._view is not None:
            base, to_view, _ = self._view
            if base._recreate_chain():
                c = self._cores.get(key)
                if c is None:
                    c = self._cores[key] = to_view(base._core_for(key))
                return c
            return self._core
        if self._recreate is None or key == _DEFAULT_KEY:
            return self._core
        c = self._cores.get(key)
        if c is None:
            c = self._cores[key] = self._recreate(key)
        return c

    def _recreate_chain(self):
        if self._view is not None:
            return self._view[0]._recreate_chain()
        return self._recreate is not None

    def _bounds_of(self, compute=None, *, ulps=None, flush_to_zero=False, standard="normal"):
        """The bounds for tolerance()'s arguments (kept per options)."""
        key = _opts_key(self, compute, ulps, flush_to_zero, standard)
        b = self._bcache.get(key)
        if b is None:
            core = self._core_for(key)
            shape = core.shape
            fmt = core.format
            ub = A._UINT[A._BY_ID[fmt]["storage_bytes"]]
            b = _Bounds()
            b.tolerance = np.empty(shape, np.float64)
            low64 = np.empty(shape, np.uint64)
            high64 = np.empty(shape, np.uint64)
            b.has_range, b.may_pinf, b.may_ninf, b.may_nan = (np.empty(shape, np.bool_) for _ in range(4))
            core.bounds(*key, b.tolerance, low64, high64, b.has_range, b.may_pinf, b.may_ninf, b.may_nan)
            b.low = low64.astype(ub)
            b.high = high64.astype(ub)
            for name in _Bounds.__slots__:
                getattr(b, name).flags.writeable = False
            self._bcache[key] = b
        return b

    def _with_bounds(self, recreate):
        """This result with other bounds: recreate(opts key) gives the C result that holds them."""
        r = Result(self._op, self._core, self._rounded_arr, recreate=recreate, backward=self._backward,
                   boundaries=self._boundaries)
        for name in ("_inputs", "_dir"):
            if hasattr(self, name):
                setattr(r, name, getattr(self, name))
        return r

    def tolerance(self, compute=None, *, ulps=None, flush_to_zero: bool = False, standard: str = 'normal'):
        """Worst-case |implementation output - rounded| per element (float64, rounded upward).

        compute: the format an implementation accumulates in (a name or dtype; None: the wider of the
        operands' formats, at least float32).  ulps: extra output ulps allowed
        (None: none).  flush_to_zero: subnormal values of compute may be read or produced as zero.
        standard: which implementations are correct: "normal" (index order or 2/4 lanes, no FMA),
        "any_order" (any summation tree, FMA or not), a tensor-core model or "engine:..." (er.standards()
        lists them); each bound is proven in docs/proofs/.  Kept per options: asking again is free.
        inf marks elements with no finite bound, nan those whose exact value is not finite."""
        if self._outputs is not None:
            return self._map(lambda r: r.tolerance(compute, ulps=ulps, flush_to_zero=flush_to_zero,
                                                   standard=standard))
        return self._bounds_of(compute, ulps=ulps, flush_to_zero=flush_to_zero, standard=standard).tolerance

    def finite_range(self, compute=None, *, ulps=None, flush_to_zero: bool = False, standard: str = 'normal'):
        """(low, high): the lowest and highest finite output of a correct implementation, per element."""
        if self._outputs is not None:
            return self._map(lambda r: r.finite_range(compute, ulps=ulps, flush_to_zero=flush_to_zero,
                                                      standard=standard))
        b = self._bounds_of(compute, ulps=ulps, flush_to_zero=flush_to_zero, standard=standard)
        fmt = self._core.format
        info = A._BY_ID[fmt]
        low, high = np.array(b.low), np.array(b.high)
        none = ~b.has_range
        if none.any():
            if info["kind"] == "float" and info["has_nan"]:
                nan = _nan_bits(fmt)
                low[none] = nan
                high[none] = nan
            else:
                # no NaN in this format: an empty range (low above high), so low <= output <= high is false
                mx = info["max_finite_bits"]
                low[none] = mx
                high[none] = _negate_bits(fmt, mx)
        return A._wrap_bits(low, fmt), A._wrap_bits(high, fmt)

    def may_be(self, kind: str, compute=None, *, ulps=None, flush_to_zero: bool = False, standard: str = 'normal'):
        """Where a correct implementation may output kind ("+inf", "-inf" or "nan"), as a bool array."""
        if kind not in _KINDS:
            raise ValueError(f"kind must be '+inf', '-inf' or 'nan', not {kind!r}")
        if self._outputs is not None:
            return self._map(lambda r: r.may_be(kind, compute, ulps=ulps, flush_to_zero=flush_to_zero,
                                                standard=standard))
        key = _opts_key(self, compute, ulps, flush_to_zero, standard)
        if key not in self._bcache and self._core_for(key).may_be_any(kind, *key) == 0:
            return np.zeros(self._core.shape, np.bool_)
        b = self._bounds_of(compute, ulps=ulps, flush_to_zero=flush_to_zero, standard=standard)
        return np.array({"+inf": b.may_pinf, "-inf": b.may_ninf, "nan": b.may_nan}[kind])

    def covers(self, output, compute=None, *, ulps=None, flush_to_zero: bool = False, standard: str = 'normal'):
        """Where a correct implementation can produce output, as a bool array.

        output: the implementation's output (anything er.asarray takes: a numpy / ml_dtypes array, a
        torch / JAX / CuPy tensor, raw bit patterns as unsigned integers) with this result's dtype and
        shape; a dict of them for several outputs.  The other arguments are tolerance()'s.
        assert r.covers(out).all() checks a kernel; er.testing.assert_matmul_valid says where it fails."""
        if self._outputs is not None:
            if isinstance(output, (dict, Outputs)):
                return Outputs((k, self._outputs[k].covers(v, compute, ulps=ulps, flush_to_zero=flush_to_zero,
                                                           standard=standard)) for k, v in output.items())
            self._one("covers")
        covered, _ = self._covers(output, compute, ulps, flush_to_zero, standard)
        return covered

    def _covers(self, output, compute, ulps, flush_to_zero, standard):
        key = _opts_key(self, compute, ulps, flush_to_zero, standard)
        core = self._core_for(key)
        fmt = core.format
        out = _output_array(output, fmt, core.shape)
        bits, _ = A._bits_of(out)
        covered = np.empty(core.shape, np.bool_)
        # a large output: the library's check in tiles (bounded memory; None: one pass here)
        rep = core.check(bits, *key, covered)
        outside = rep["outside"] if rep is not None else core.covers(bits, *key, covered)
        return covered, outside

    def normal(self, compute=None, *, flush_to_zero: bool = False):
        """The output of normal accumulation in index order on these inputs, emulated exactly (kept)."""
        if self._outputs is not None:
            return self._map(lambda r: r.normal(compute, flush_to_zero=flush_to_zero))
        if self.guarantee == "exact":
            return self.rounded  # integer products are exact: every order gives rounded
        key = (-1 if compute is None else A.format_id(compute), int(bool(flush_to_zero)))
        arr = self._normal.get(key)
        if arr is None:
            fmt = self._core.format
            bits = np.empty(self._core.shape, A._UINT[A._BY_ID[fmt]["storage_bytes"]])
            self._core.normal(key[0], key[1], bits)
            arr = A._wrap_bits(bits, fmt)
            (arr.bits if isinstance(arr, A.BitArray) else arr).flags.writeable = False
            self._normal[key] = arr
        return arr

    # ---- views ----
    def reshape(self, shape) -> 'Result':
        """This one-output result with its elements in row-major order in a new shape."""
        self._one("reshape")
        if isinstance(shape, (int, np.integer)):
            shape = (shape,)
        shape = tuple(int(s) for s in shape)
        return self._make_view(lambda c: c.reshape(shape), lambda e: e.reshape(shape))

    def transpose(self, i: int, j: int) -> 'Result':
        """This one-output result with dimensions i and j swapped."""
        self._one("transpose")
        nd = len(self._core.shape)
        i2 = i + nd if i < 0 else i
        j2 = j + nd if j < 0 else j

        def move(e):
            axes = list(range(nd))
            axes[i2], axes[j2] = axes[j2], axes[i2]
            return e.transpose(*axes)

        return self._make_view(lambda c: c.transpose(i2, j2), move)

    @property
    def T(self):
        """The last two dimensions swapped (transpose(-2, -1))."""
        return self.transpose(-2, -1)

    def _make_view(self, to_view, move):
        core = to_view(self._core)
        r = Result(self._op, core, None, view=(self, to_view, move), boundaries=self._boundaries)
        return r

    # ---- backward ----
    def backward(self, grad, **options) -> 'Result':
        """The operation's backward for these inputs and the output gradient grad."""
        if self._view is not None:
            raise ValueError("a view has no backward of its own: call backward on the result it views, "
                             "with the gradient moved back")
        if self._backward is None:
            raise NotImplementedError(f"{self._op} has no backward")
        return self._backward(self, grad, **options)

    def __repr__(self):
        if self._outputs is not None:
            return f"<exactref.Result {self._op} outputs={list(self._outputs)}>"
        return (f"<exactref.Result {self._op} shape={self._core.shape} "
                f"dtype={A.format_name(self._core.format)} guarantee={self.guarantee}>")


_DEFAULT_KEY = (-1, 0.0, 0, "normal")


def _nan_bits(fmt):
    info = A._BY_ID[fmt]
    one = np.zeros(1, A._UINT[info["storage_bytes"]])
    src = np.array([np.nan], np.float64).view(np.uint64)
    _core.convert(src, A.FMT_F64, one, fmt, 0, 1)
    return one[0]


def _negate_bits(fmt, bits):
    info = A._BY_ID[fmt]
    if not info["is_signed"]:
        return 0
    return bits | (1 << (info["width"] - 1))


def _output_array(output, fmt, shape):
    """An implementation's output as an array of the result's format: its dtype's values, or its bit patterns."""
    if isinstance(output, Result):
        output = output._single()
    if isinstance(output, A.BitArray):
        if output._fmt != fmt:
            raise TypeError(f"the output holds {output.format}; the result's dtype is {A.format_name(fmt)}")
        arr = output
    else:
        if isinstance(output, np.ndarray) or hasattr(output, "__dlpack__"):
            arr = A.asarray(output)
            if arr.dtype.kind == "u" and arr.dtype.itemsize == A._BY_ID[fmt]["storage_bytes"] and \
                    A._BY_ID[fmt]["kind"] == "float":
                arr = A.asarray(arr, fmt)  # raw bit patterns of the result's format
            elif A.format_id(arr.dtype) != fmt:
                raise TypeError(f"the output has dtype {arr.dtype}; the result's dtype is {A.format_name(fmt)} "
                                f"(make the result with dtype='{arr.dtype}', or convert the output if that is "
                                f"intended)")
        else:
            arr = A.asarray(output, fmt)
    if tuple(arr.shape) != tuple(shape):
        raise ValueError(f"the output has shape {tuple(arr.shape)}; the result has shape {tuple(shape)}")
    return arr
