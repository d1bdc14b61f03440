"""exactref: exact low-precision matmul references and proven tolerances (seed 002's Result API).

    import exactref as er
    r = er.matmul(er.asarray(a, "bfloat16"), er.asarray(b, "bfloat16"), dtype="float32")
    assert r.covers(kernel_output).all()
"""
from . import _core
from ._arrays import BitArray, ExportArray, asarray, dtype_of, format_info, formats
from ._ops import matmul, mma, mma_scaled, mmai, scaled_mm
from ._result import Boundary, ExactArray, Outputs, Result
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
]
