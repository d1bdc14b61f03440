"""_opsx.py: the operations beyond matmul (softmax, activations, linear, norms, attention, quantization)
as seed 002's Result, through the C library's one generic operation call (include/exactref/ops.h).

Every function here has torch's name, argument order and defaults and is a thin wrapper: it maps its
arguments to the operation's inputs and options and calls _core.op_call; the Result is exactref's own
(tolerance, finite_range, may_be, covers, exact, boundaries, guarantee, op; result["name"] for several
outputs).  docs/ops/ describes each operation, its standards and the library functions' ulps."""
import numpy as np

from . import _arrays as A
from . import _core
from ._result import Result, _new_shape, _swap_dims

__all__ = [
    "op", "linear", "add", "mul", "relu", "gelu", "silu", "sigmoid", "tanh", "exp", "softmax", "log_softmax",
    "logsumexp", "layer_norm", "rms_norm", "scaled_dot_product_attention", "quantize", "quantize_mx",
    "quantize_nvfp4", "op_names",
]


class OpResult(Result):
    """The Result of an operation beyond matmul (er.softmax, er.gelu, ...): the exact value rounded once
    (rounded), certified binary64 enclosures (exact: lo <= exact <= hi; odd is the enclosure's midpoint
    where lo < hi), and the bounds of every implementation the standard covers, with library functions
    (exp, division, tanh, ...) within `ulps` ulps of compute (None: each function's documented default,
    docs/ops/README.md).  Several outputs (attention's "out" and "lse"): result["out"]."""

    _calls_library = True  # _opts_key: ulps None means the documented defaults (-1)

    def reshape(self, shape):
        """This one-output result (or one output, result[name]) with its elements in row-major order in a new
        shape: a view made by the C library (er_opres_reshape), so rounded, exact, tolerance(), finite_range(),
        may_be(), covers() and normal() are this result's moved, and the view is an input of later
        operations like any result."""
        self._one("reshape")
        shape = _new_shape(self.shape, shape)
        return self._op_view(lambda c: c.reshape(shape), lambda e: e.reshape(shape))

    def transpose(self, i, j):
        """This one-output result with dimensions i and j swapped (any two; negative counts from the end), a
        view as reshape describes."""
        self._one("transpose")
        _, i2, j2, move = _swap_dims(self.shape, i, j)

        return self._op_view(lambda c: c.transpose(i2, j2), move)

    @property
    def T(self):
        """The last two dimensions swapped (transpose(-2, -1)); a view of the same shape below two dimensions."""
        if self._outputs is None and len(self.shape) < 2:
            return self.reshape(self.shape)
        return self.transpose(-2, -1)

    def _output_bits(self, output, fmt, core):
        # the C layer reads an output's patterns row-major: a transposed or strided output is copied
        return np.ascontiguousarray(super()._output_bits(output, fmt, core))

    def _op_view(self, to_view, move):
        core = to_view(self._core)
        r = OpResult(self._op, core, view=(self, to_view, move), boundaries=self._boundaries, shape=core.nd_shape)
        r._no_bounds = self._no_bounds
        return r

    def normal(self, compute=None, *, flush_to_zero=False):
        """The output of the operation's textbook implementation in index order on these inputs, emulated
        exactly in compute (None: the default compute, float32 for narrower inputs): every step rounded once
        to compute, exp, log, tanh, erf, sqrt and the divisions correctly rounded, then rounded to the output
        dtype (docs/ops/README.md, "normal()"); kept per arguments.  Several outputs: Outputs of them."""
        return super().normal(compute, flush_to_zero=flush_to_zero)

    def backward(self, grad, **options):
        """The operation's backward on the same inputs and options with the gradient grad as the last input
        (the table's "<op>.backward": softmax's, the norms', attention's), as an OpResult whose outputs are
        the gradients ("grad_input", ...; attention: "dq", "dk", "dv").  options override the forward's
        (dtype= the gradients' format)."""
        if self._view is not None:
            raise ValueError("a view has no backward of its own: call backward on the result it views, "
                             "with the gradient moved back")
        call = getattr(self, "_call", None)
        name = f"{self._op}.backward"
        if call is None or name not in op_names():
            raise NotImplementedError(f"{name} is not in this build's table of operations")
        inputs, fwd = call
        opts = dict(fwd)
        opts.update(options)
        return op(name, *inputs, grad, **opts)

    def __repr__(self):
        if self._outputs is not None:
            return f"OpResult({self._op}, outputs={list(self._outputs)})"
        return f"OpResult({self._op}, shape={self.shape}, dtype={self.dtype})"


def op_names():
    """The operations this build of the library has (er.op(name, ...) calls any of them)."""
    return _core.op_names().split()


def _input(x, name, dtype=None):
    """(bits, format id) of an input (anything er.asarray takes), None, or an earlier Result (kept as it is:
    results as inputs are read within their bounds)."""
    if x is None:
        return None
    if isinstance(x, Result):
        x._single()  # one output: result[name] picks one of several
        return x
    try:
        arr = A.asarray(x, dtype)
    except (TypeError, ValueError) as e:
        raise (TypeError if isinstance(e, TypeError) else ValueError)(f"{name}: {e}") from None
    bits, fmt = A._bits_of(arr)
    if arr.ndim == 0:
        bits = bits.reshape(())
    return bits, fmt


def _fmt_opt(v):
    if isinstance(v, bool):
        return "1" if v else "0"
    if isinstance(v, float):
        return repr(v)
    if isinstance(v, (tuple, list)):
        return "x".join(str(int(d)) for d in v)
    return str(v)


def op(name, *inputs, dtype=None, **options):
    """Run operation `name` (er.op_names() lists them) on its inputs (arrays or None for an absent
    optional input) with options under their C names (dim=-1, eps=1e-5, approximate="tanh", ...); dtype
    is the output format (the option out=).  Returns an OpResult."""
    ins = [_input(x, f"input {i}") for i, x in enumerate(inputs)]
    while ins and ins[-1] is None:
        ins.pop()
    opts = {k: v for k, v in options.items() if v is not None}
    if dtype is not None:
        opts["out"] = A.format_name(A.format_id(dtype))
    text = ",".join(f"{k}={_fmt_opt(v)}" for k, v in opts.items())
    froms = any(isinstance(x, Result) for x in ins)

    def call(key):
        # key: the options the earlier results' bounds are taken under (None: arrays only)
        args = [_c_input(x, key) for x in ins]
        return _core.op_call(name, args, text) if key is None else _core.op_call(name, args, text, *key)

    c = call(None if not froms else (-1, -1.0, 0, "normal"))
    names = c.output_names
    singles = []
    cache = {}
    for i, n in enumerate(names):
        core = c.output(i)
        recreate = None
        if froms:
            def recreate(key, i=i):
                if key not in cache:
                    cache[key] = call(key)
                return cache[key].output(i)
        r = OpResult(name, core, shape=core.nd_shape, recreate=recreate)
        singles.append((n, r))
    if len(singles) == 1:
        res = singles[0][1]
    else:
        res = OpResult(name, outputs=dict(singles))
    res._c = c
    fwd = dict(options)
    if dtype is not None:
        fwd["dtype"] = dtype
    res._call = (inputs, fwd)  # backward(grad): the same inputs and options
    return res


def _c_input(x, key):
    """An input as _core.op_call takes it: None, (bits, fmt), or an earlier result's C object whose bounds
    are those under key (a COpRes and the output's index, or matmul's CResult)."""
    if not isinstance(x, Result):
        return x
    core = x._core if key is None else x._core_for(key)
    if isinstance(x, OpResult):
        return (core.res, core.index)
    return core


# ---- torch-named wrappers ----

def linear(input, weight, bias=None, *, dtype=None):
    """torch.nn.functional.linear: input @ weight.T + bias (weight n x k)."""
    return op("linear", input, weight, bias, dtype=dtype)


def add(input, other, *, alpha=1, dtype=None):
    """torch.add (broadcasting); alpha must be 1."""
    if alpha != 1:
        raise ValueError("add: alpha other than 1 is not supported (scale the operand with er.mul)")
    return op("add", input, other, dtype=dtype)


def mul(input, other, *, dtype=None):
    """torch.mul (broadcasting)."""
    return op("mul", input, other, dtype=dtype)


def relu(input, *, dtype=None):
    """torch.relu."""
    return op("relu", input, dtype=dtype)


def gelu(input, approximate="none", *, dtype=None):
    """torch.nn.functional.gelu: approximate="none" (the erf form) or "tanh"; each judged as its own
    operation, so the tanh form judged as the erf form is caught."""
    if approximate not in ("none", "tanh"):
        raise ValueError(f"gelu: approximate must be 'none' or 'tanh', not {approximate!r}")
    return op("gelu", input, dtype=dtype, approximate=approximate)


def silu(input, *, dtype=None):
    """torch.nn.functional.silu: x * sigmoid(x)."""
    return op("silu", input, dtype=dtype)


def sigmoid(input, *, dtype=None):
    """torch.sigmoid."""
    return op("sigmoid", input, dtype=dtype)


def tanh(input, *, dtype=None):
    """torch.tanh."""
    return op("tanh", input, dtype=dtype)


def exp(input, *, dtype=None):
    """torch.exp."""
    return op("exp", input, dtype=dtype)


def softmax(input, dim=-1, *, dtype=None):
    """torch.softmax(input, dim): rows along dim.  Standards: "normal" (index-order sum), "any_order"."""
    return op("softmax", input, dtype=dtype, dim=int(dim))


def log_softmax(input, dim=-1, *, dtype=None):
    """torch.log_softmax(input, dim)."""
    return op("log_softmax", input, dtype=dtype, dim=int(dim))


def logsumexp(input, dim=-1, keepdim=False, *, dtype=None):
    """torch.logsumexp(input, dim, keepdim)."""
    return op("logsumexp", input, dtype=dtype, dim=int(dim), keepdim=bool(keepdim))


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5, *, dtype=None):
    """torch.nn.functional.layer_norm."""
    if isinstance(normalized_shape, int):
        normalized_shape = (normalized_shape,)
    return op("layer_norm", input, weight, bias, dtype=dtype, normalized_shape=tuple(normalized_shape),
              eps=float(eps))


def rms_norm(input, normalized_shape, weight=None, eps=None, *, dtype=None):
    """torch.nn.functional.rms_norm (eps None: torch's finfo(input dtype).eps)."""
    if isinstance(normalized_shape, int):
        normalized_shape = (normalized_shape,)
    return op("rms_norm", input, weight, dtype=dtype, normalized_shape=tuple(normalized_shape),
              eps=None if eps is None else float(eps))


def _bool_mask(m):
    """A boolean mask (numpy's or torch's bool: True takes part, as torch reads it) as the uint8 mask the
    C layer takes; any other mask as it is."""
    dt = getattr(m, "dtype", None)
    if dt is None or str(dt) not in ("bool", "torch.bool"):
        return m
    if hasattr(m, "detach"):
        m = m.detach().cpu().numpy()
    return np.asarray(m).astype(np.uint8)


def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None,
                                 enable_gqa=False, *, dtype=None, q_descale=None, k_descale=None, v_descale=None):
    """torch.nn.functional.scaled_dot_product_attention on (B, H, S, D) inputs: outputs result["out"]
    and result["lse"] (the log-sum-exp per query, f32, as FlashAttention's softmax_lse).  dropout_p must
    be 0 (a random dropout has no exact answer).  q_descale, k_descale, v_descale: fp8 inputs' per-tensor
    descale factors (FlashAttention-3's).  result.backward(grad_out) gives the gradients
    ("attention.backward": result["dq"], result["dk"], result["dv"]; docs/ops/attention.md, "Backward")."""
    if dropout_p != 0:
        raise ValueError(f"scaled_dot_product_attention: dropout_p must be 0 (a random dropout has no exact "
                         f"answer to judge against), not {dropout_p!r}")
    return op("attention", query, key, value, _bool_mask(attn_mask), dtype=dtype, is_causal=bool(is_causal),
              scale=None if scale is None else float(scale), enable_gqa=bool(enable_gqa),
              q_descale=None if q_descale is None else float(q_descale),
              k_descale=None if k_descale is None else float(k_descale),
              v_descale=None if v_descale is None else float(v_descale))


def quantize(input, fmt=None, scheme="tensor", scale=None, saturate=True):
    """Quantization to an fp8/fp6/fp4 format with a per-tensor, per-row or per-block scale: outputs
    result["q"] and result["scale"].  fmt: f8e4m3 (None: f8e4m3, f4e2m1 for nvfp4), f8e5m2, f6e2m3, f6e3m2,
    f4e2m1; scheme: tensor, row,
    mx (OCP MX, block 32, e8m0 scales) or nvfp4 (block 16, e4m3 scales and a per-tensor f32 scale)."""
    return op("quantize", input, scale, fmt=fmt, scheme=scheme, saturate=bool(saturate))


def quantize_mx(input, fmt="f8e4m3", saturate=True):
    """OCP MX quantization (blocks of 32 along the last dimension, e8m0 scales by the OCP MX v1.0 rule)."""
    return quantize(input, fmt=fmt, scheme="mx", saturate=saturate)


def quantize_nvfp4(input, scale=None, saturate=True):
    """NVFP4 quantization (f4e2m1 values, blocks of 16 with e4m3 scales, a per-tensor f32 scale)."""
    return quantize(input, fmt="f4e2m1", scheme="nvfp4", scale=scale, saturate=saturate)
