"""exactref: exact low-precision matmul references and proven tolerances (seed 002's Result API).

    import exactref as er
    r = er.matmul(er.asarray(a, "bfloat16"), er.asarray(b, "bfloat16"), dtype="float32")
    assert r.covers(kernel_output).all()
"""
from . import _core
from ._arrays import BitArray, ExportArray, asarray, dtype_of, format_info, formats
from ._ops import matmul, mma, mma_scaled, mmai, scaled_mm
from ._result import Boundary, ExactArray, Outputs, Result
from ._opsx import (OpResult, add, exp, gelu, layer_norm, linear, log_softmax, logsumexp, mul, op, op_names, quantize,
                    quantize_mx, quantize_nvfp4, relu, rms_norm, scaled_dot_product_attention, sigmoid, silu, softmax,
                    tanh)
from . import testing
from . import tile

__version__ = _core.version()


def standards():
    """The standards tolerance(), covers() and friends accept (besides user models "engine:...")."""
    return _core.standard_names().split()


__all__ = [
    "asarray", "matmul", "mma", "mma_scaled", "mmai", "scaled_mm", "Result", "ExactArray", "Boundary", "Outputs", "BitArray",
    "ExportArray",
    "formats", "format_info", "dtype_of", "standards", "testing",
    "OpResult", "op", "op_names", "linear", "add", "mul", "relu", "gelu", "silu", "sigmoid", "tanh", "exp", "softmax",
    "log_softmax", "logsumexp", "layer_norm", "rms_norm", "scaled_dot_product_attention", "quantize", "quantize_mx",
    "quantize_nvfp4",
]
