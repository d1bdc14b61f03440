"""_result.py: seed 002's Result, ExactArray, Boundary and Outputs over the C library's results."""
import dataclasses
import re

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


class _DefaultStandard(str):
    """The default standard, spelt "normal" as seed 002 writes it: it means the result's own standard,
    "normal" for every result but a scaled product's ("scaled:bk=<block>"); "normal" given explicitly is
    the normal standard (which a scaled product refuses)."""

    __slots__ = ()


_STANDARD_DEFAULT = _DefaultStandard("normal")


def _opts_key(result, compute, ulps, flush_to_zero, standard):
    """Resolve tolerance()'s arguments into the C layer's (compute id, ulps, ftz, standard name)."""
    if compute is None:
        cid = -1
    else:
        try:
            cid = A.format_id(compute)
        except (TypeError, ValueError) as e:
            raise (TypeError if isinstance(e, TypeError) else ValueError)(f"compute: {e}") from None
    calls = getattr(result, "_calls_library", False)  # an operation that calls exp, division, ... (_opsx.py)
    if ulps is None:
        u = -1.0 if calls else 0.0  # -1: each library function's documented default (docs/ops/README.md)
    else:
        u = float(ulps)
        if not u >= 0:
            raise ValueError(f"ulps must be a non-negative number, not {ulps!r}")
        if u > 0 and not calls:
            # the library's ulps is the accuracy of the library functions (exp, ...) a kernel calls; the
            # operations of this package call none, so it changes no bound: say so rather than let a
            # caller believe the check was widened (`exactref check --ulps` is the same no-op)
            A._warn(f"ulps={ulps!r} has no effect on {result.op}: ulps is the accuracy of library functions "
                    f"(exp, ...) a kernel calls, and {result.op} calls none; the bounds are the standard's "
                    f"(choose the standard, compute or flush_to_zero that describe the kernel)", UserWarning)
    if standard is None or standard is _STANDARD_DEFAULT:
        # the result's own standard: "scaled:bk=<block>" for a scaled product (as `exactref check` takes
        # for --scale-format f32), "normal" for every other
        standard = getattr(result, "_default_standard", None) or "normal"
    if not isinstance(standard, str):
        raise TypeError(f"standard must be a string, not {type(standard).__name__}")
    std = _core.check_standard(standard)
    fmts = getattr(result, "_operand_fmts", None)
    if fmts is not None:
        # a matrix-engine standard models instructions that take operands of given formats: refused on
        # others (f32 under hopper-fp8), as `exactref check` refuses them, rather than bounds that do not apply
        # a scaled product's engine partial (scaled:bk=..,partial=hopper-fp8) is held to that row's rule
        # by the library (its sentence names the scaled standard and its partial)
        try:
            _core.check_operands(std, *fmts)
        except ValueError as e:
            text = re.sub(r"--standard (\S+)", r"standard='\1'", str(e))
            text = re.sub(r"declare it \(--([ab])-format (\S+)\)", lambda m: f"convert {m.group(1).upper()} to "
                          f"{A.format_name(A.format_id(m.group(2)))} (exact where they are)", text)
            raise ValueError(text) from None
    return (cid, u, int(bool(flush_to_zero)), std)


class _Bounds:
    __slots__ = ("tolerance", "low", "high", "has_range", "may_pinf", "may_ninf", "may_nan")


def _new_shape(old, shape):
    """reshape's shape argument (an int, or a sequence with at most one -1) as a tuple for an output of shape
    old (ValueError where the counts differ, as numpy says)."""
    if isinstance(shape, (int, np.integer)):
        shape = (shape,)
    shape = tuple(int(s) for s in shape)
    if -1 in shape:
        shape = tuple(np.empty(old, np.bool_).reshape(shape).shape)
    return shape


def _swap_dims(shape, i, j):
    """transpose(i, j) of an output of this shape: its rank, i and j counted from the start, and the function
    that swaps the two dimensions of an array (ValueError where i or j is out of range)."""
    nd = len(shape)
    i2 = i + nd if i < 0 else i
    j2 = j + nd if j < 0 else j
    if not (0 <= i2 < nd and 0 <= j2 < nd):
        raise ValueError(f"transpose({i}, {j}): the output has {nd} dimensions")

    def move(e):
        axes = list(range(nd))
        axes[i2], axes[j2] = axes[j2], axes[i2]
        return e.transpose(*axes)

    return nd, i2, j2, move


class Result:
    """What an operation returns: the exact answer rounded once (rounded), its enclosures (exact), and
    the proven bounds on what a correct implementation may output (tolerance, finite_range, may_be,
    covers).  A result with several outputs (backward) gives Outputs by name; result[name] is one.
    Results are made by the operations (er.matmul, er.mma, er.mma_scaled, er.mmai), not directly."""

    # ---- construction (internal) ----
    def __init__(self, op, core=None, rounded=None, *, outputs=None, recreate=None, view=None, backward=None,
                 boundaries=None, shape=None):
        self._op = op
        # the output's shape where it is not the C layer's 2-D or 3-D one (N-D batches, 1-D operands):
        # every array handed out is a row-major reshape of the C layer's, every array taken in one back
        self._nd = None if shape is None else tuple(int(x) for x in shape)
        if rounded is not None and self._nd is not None:
            rounded = _reshape_any(rounded, self._nd)
        if rounded is not None:
            rounded = A._exportable(rounded)
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
        self._no_bounds = None  # why this result has no bounds (rounded and exact only), or None

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
        """The exact answer rounded once into the output dtype (a read-only numpy / ml_dtypes array,
        an er.ExportArray that torch.from_dlpack reads in place, bfloat16 and fp8 included; a BitArray
        for tf32; Outputs for several outputs), in the output's shape."""
        if self._outputs is not None:
            return self._map(lambda r: r.rounded)
        if self._rounded_arr is None:
            fmt = self._core.format
            bits = np.empty(self._core.shape, A._UINT[A._BY_ID[fmt]["storage_bytes"]])
            self._core.rounded_into(bits)
            arr = A._wrap_bits(bits, fmt)
            (arr.bits if isinstance(arr, A.BitArray) else arr).flags.writeable = False
            self._rounded_arr = A._exportable(self._user(arr))
        return self._rounded_arr

    @property
    def shape(self):
        """The output's shape (Outputs of them for several outputs)."""
        if self._outputs is not None:
            return self._map(lambda r: r.shape)
        return self._nd if self._nd is not None else self._core.shape

    @property
    def ndim(self):
        """The number of dimensions of the output (Outputs of them for several outputs)."""
        if self._outputs is not None:
            return self._map(lambda r: r.ndim)
        return len(self.shape)

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
                self._exact = ExactArray(*(self._user(x) for x in (lo, hi, odd)))
        return self._exact

    # ---- bounds ----
    def _core_for(self, key):
        """The C result whose bounds are these options' (results as inputs: the earlier bounds taken with
        the same options)."""
        if self._no_bounds is not None:
            raise NotImplementedError(self._no_bounds)
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

    def _bounds_of(self, compute=None, *, ulps=None, flush_to_zero=False, standard=_STANDARD_DEFAULT):
        """The bounds for tolerance()'s arguments (kept per options)."""
        return self._bounds_key(_opts_key(self, compute, ulps, flush_to_zero, standard))

    def _bounds_key(self, key):
        """The bounds for _opts_key's resolved options (kept per options)."""
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
            if A.is_float(fmt):
                # one allowed output, the rounded answer itself: |output - rounded| is 0, not the smallest
                # positive double the library's upward rounding of a zero distance can give
                rb = A._bits_of(self.rounded)[0].reshape(shape) if self._nd is not None else \
                    A._bits_of(self.rounded)[0]
                one = b.has_range & (b.low == b.high) & (b.low == rb) & (b.tolerance <= 5e-324)
                b.tolerance[one] = 0.0
            for name in _Bounds.__slots__:
                setattr(b, name, self._user(getattr(b, name)))
                getattr(b, name).flags.writeable = False
            self._bcache[key] = b
        return b

    def _with_bounds(self, recreate):
        """This result with other bounds: recreate(opts key) gives the C result that holds them."""
        r = Result(self._op, self._core, self._rounded_arr, recreate=recreate, backward=self._backward,
                   boundaries=self._boundaries, shape=self._nd)
        r._no_bounds = self._no_bounds
        for name in ("_inputs", "_dir", "_operand_fmts", "_default_standard"):
            if hasattr(self, name):
                setattr(r, name, getattr(self, name))
        return r

    def tolerance(self, compute=None, *, ulps=None, flush_to_zero: bool = False, standard: str = _STANDARD_DEFAULT):
        """Worst-case |implementation output - rounded| per element (float64, rounded upward).

        compute: the format an implementation accumulates in (a name, numpy / ml_dtypes or torch dtype;
        None: the wider of the operands' formats, at least float32).  ulps: the accuracy, in ulps of
        compute, of library functions (exp, ...) the implementation calls; matmul, mma, mma_scaled and
        mmai call none, so it has no effect on them (a UserWarning says so when it is above 0), as
        `exactref check --ulps`.  It is not a widening of the bound by output ulps.
        flush_to_zero: subnormal values of compute may be read or produced as zero.
        standard: which implementations are correct: "normal" (index order or 2/4 lanes, no FMA),
        "any_order" (any summation tree, FMA or not), a tensor-core model or "engine:..." (er.standards()
        lists them); each bound is proven in docs/proofs/.  Kept per options: asking again is free.
        The default ("normal") is the result's own standard: "normal", or "scaled:bk=<block>" on a
        product with float32 scales (er.scaled_mm); "normal" given explicitly is always normal.
        inf marks elements with no finite bound, nan those whose exact value is not finite."""
        if self._outputs is not None:
            return self._map(lambda r: r.tolerance(compute, ulps=ulps, flush_to_zero=flush_to_zero,
                                                   standard=standard))
        return self._bounds_of(compute, ulps=ulps, flush_to_zero=flush_to_zero, standard=standard).tolerance

    def finite_range(self, compute=None, *, ulps=None, flush_to_zero: bool = False, standard: str = _STANDARD_DEFAULT):
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
        return A._exportable(A._wrap_bits(low, fmt)), A._exportable(A._wrap_bits(high, fmt))

    def may_be(self, kind: str, compute=None, *, ulps=None, flush_to_zero: bool = False,
               standard: str = _STANDARD_DEFAULT):
        """Where a correct implementation may output kind ("+inf", "-inf" or "nan"), as a bool array."""
        if kind not in _KINDS:
            raise ValueError(f"kind must be '+inf', '-inf' or 'nan', not {kind!r}")
        if self._outputs is not None:
            return self._map(lambda r: r.may_be(kind, compute, ulps=ulps, flush_to_zero=flush_to_zero,
                                                standard=standard))
        key = _opts_key(self, compute, ulps, flush_to_zero, standard)
        if key not in self._bcache and self._core_for(key).may_be_any(kind, *key) == 0:
            return np.zeros(self.shape, np.bool_)
        b = self._bounds_of(compute, ulps=ulps, flush_to_zero=flush_to_zero, standard=standard)
        return np.array({"+inf": b.may_pinf, "-inf": b.may_ninf, "nan": b.may_nan}[kind])

    def covers(self, output, compute=None, *, ulps=None, flush_to_zero: bool = False,
               standard: str = _STANDARD_DEFAULT):
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
        bits = self._output_bits(output, fmt, core)
        covered = np.empty(core.shape, np.bool_)
        # a large output: the library's check in tiles (bounded memory; None: one pass here)
        rep = core.check(bits, *key, covered)
        outside = rep["outside"] if rep is not None else core.covers(bits, *key, covered)
        return self._user(covered), outside

    def _output_bits(self, output, fmt, core):
        """An implementation's output (in this result's shape) as bit patterns in the C layer's shape."""
        out = _output_array(output, fmt, self.shape)
        bits, _ = A._bits_of(out)
        if self._nd is not None:
            bits = bits.reshape(core.shape)
        return bits

    def _user(self, arr):
        """An array of the C layer's shape in the output's shape (a view)."""
        return arr if self._nd is None else _reshape_any(arr, self._nd)

    def _user_index(self, idx):
        """An index of the C layer's shape as an index of the output's."""
        if self._nd is None:
            return tuple(int(i) for i in idx)
        flat = np.ravel_multi_index(tuple(int(i) for i in idx), self._core.shape)
        return tuple(int(i) for i in np.unravel_index(flat, self._nd))

    def normal(self, compute=None, *, flush_to_zero: bool = False):
        """The output of normal accumulation in index order on these inputs, emulated exactly (kept)."""
        if self._outputs is not None:
            return self._map(lambda r: r.normal(compute, flush_to_zero=flush_to_zero))
        if self.guarantee == "exact":
            return self.rounded  # integer products are exact: every order gives rounded
        if self._no_bounds is not None:
            raise NotImplementedError(self._no_bounds)
        key = (-1 if compute is None else A.format_id(compute), int(bool(flush_to_zero)))
        arr = self._normal.get(key)
        if arr is None:
            fmt = self._core.format
            bits = np.empty(self._core.shape, A._UINT[A._BY_ID[fmt]["storage_bytes"]])
            self._core.normal(key[0], key[1], bits)
            arr = A._wrap_bits(bits, fmt)
            (arr.bits if isinstance(arr, A.BitArray) else arr).flags.writeable = False
            arr = A._exportable(self._user(arr))
            self._normal[key] = arr
        return arr

    # ---- views ----
    def reshape(self, shape) -> 'Result':
        """This one-output result with its elements in row-major order in a new shape (any number of
        dimensions)."""
        self._one("reshape")
        shape = _new_shape(self.shape, shape)
        from ._ops import _core_shape

        cs = _core_shape(shape)
        return self._make_view(lambda c: c.reshape(cs), lambda e: e.reshape(shape),
                               None if cs == shape else shape)

    def transpose(self, i: int, j: int) -> 'Result':
        """This one-output result with dimensions i and j swapped (the last two, where the output has
        more than three dimensions or one)."""
        self._one("transpose")
        nd, i2, j2, move = _swap_dims(self.shape, i, j)

        if self._nd is None:
            return self._make_view(lambda c: c.transpose(i2, j2), move)
        if {i2, j2} == {nd - 2, nd - 1} and nd >= 2:
            new = list(self._nd)
            new[i2], new[j2] = new[j2], new[i2]
            cd = len(self._core.shape)
            return self._make_view(lambda c: c.transpose(cd - 2, cd - 1), move, tuple(new))
        if i2 == j2:
            return self._make_view(lambda c: c.transpose(0, 0), move, self._nd)
        raise NotImplementedError(f"transpose({i}, {j}) of a {nd}-D result: only the last two dimensions can be "
                                  f"swapped (reshape first)")

    @property
    def T(self):
        """The last two dimensions swapped (transpose(-2, -1))."""
        return self.transpose(-2, -1)

    def _make_view(self, to_view, move, shape=None):
        core = to_view(self._core)
        r = Result(self._op, core, None, view=(self, to_view, move), boundaries=self._boundaries, shape=shape)
        r._no_bounds = self._no_bounds
        for name in ("_operand_fmts", "_default_standard"):
            if hasattr(self, name):
                setattr(r, name, getattr(self, name))
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
        return (f"<exactref.Result {self._op} shape={self.shape} "
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


def _reshape_any(arr, shape):
    """A row-major reshape of a numpy array, a BitArray or an ExactArray (a view)."""
    if isinstance(arr, A.BitArray):
        return A.BitArray(arr.bits.reshape(shape), arr._fmt)
    return arr.reshape(shape)


def _output_array(output, fmt, shape):
    """An implementation's output as an array of the result's format: its dtype's values, or its bit patterns."""
    if isinstance(output, Result):
        output = output._single()
    if isinstance(output, np.generic):
        output = np.asarray(output)  # a numpy scalar (numpy.matmul of two vectors): a 0-d array
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
