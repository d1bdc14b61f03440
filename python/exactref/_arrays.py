"""_arrays.py: formats, dtypes and er.asarray: every array route into the C library."""
from __future__ import annotations

import os
import sys
import warnings

import ml_dtypes
import numpy as np

from . import _core

# The format table of the C library, by id.
_TABLE = _core.format_table()
_BY_ID = {f["id"]: f for f in _TABLE}
FMT_F64 = _core.format_id("f64")
FMT_F32 = _core.format_id("f32")

# Unsigned integer dtypes that hold bit patterns of each storage size.
_UINT = {1: np.dtype(np.uint8), 2: np.dtype(np.uint16), 4: np.dtype(np.uint32), 8: np.dtype(np.uint64)}


def _numpy_dtype_of(fmt):
    """The numpy or ml_dtypes dtype of a format, or None (tf32 has none)."""
    alias = _BY_ID[fmt]["alias"]
    if hasattr(np, alias) and alias not in ("float128",):
        return np.dtype(getattr(np, alias))
    if hasattr(ml_dtypes, alias):
        return np.dtype(getattr(ml_dtypes, alias))
    return None


_DTYPE = {f["id"]: _numpy_dtype_of(f["id"]) for f in _TABLE}
_FMT_OF_DTYPE = {dt: fid for fid, dt in _DTYPE.items() if dt is not None}


def formats():
    """The formats exactref models: a list of dicts (name, alias, kind, width, storage_bytes, ...)."""
    return [dict(f) for f in _TABLE]


def format_info(fmt):
    """The table row of a format given by name, dtype or id."""
    return dict(_BY_ID[format_id(fmt)])


def _is_torch_dtype(spec):
    torch = sys.modules.get("torch")
    return torch is not None and isinstance(spec, torch.dtype)


def format_id(spec):
    """A format id from a name (MLIR or ml_dtypes spelling, any case), a numpy/ml_dtypes dtype or type,
    or a torch dtype (torch.bfloat16, torch.float8_e4m3fn, ...)."""
    if isinstance(spec, (int, np.integer)) and not isinstance(spec, bool):
        if int(spec) in _BY_ID:
            return int(spec)
        raise ValueError(f"unknown format id {spec}")
    if isinstance(spec, str):
        return _core.format_id(spec)
    if _is_torch_dtype(spec):
        name = str(spec).replace("torch.", "")
        if name.startswith("float4_e2m1fn_x2"):
            raise TypeError("torch.float4_e2m1fn_x2 packs two fp4 values in a byte: name the format of one value, "
                            "'float4_e2m1fn'")
        try:
            return _core.format_id(name)
        except ValueError:
            raise TypeError(f"{spec} is not a format exactref models (er.formats() lists them)") from None
    try:
        dt = np.dtype(spec)
    except TypeError:
        raise TypeError(f"a dtype must be a format name or a numpy/ml_dtypes dtype, not {spec!r}") from None
    if dt in _FMT_OF_DTYPE:
        return _FMT_OF_DTYPE[dt]
    return _core.format_id(dt.name)


def dtype_of(fmt):
    """The numpy/ml_dtypes dtype that holds values of a format, or None (then arrays hold bit patterns)."""
    return _DTYPE[format_id(fmt)]


def format_name(fmt):
    return _BY_ID[fmt]["alias"]


def is_float(fmt):
    return _BY_ID[fmt]["kind"] == "float"


class BitArray:
    """Bit patterns of a format that numpy has no dtype for (tf32): bits is an unsigned integer array."""

    def __init__(self, bits, fmt):
        fid = format_id(fmt)
        bits = np.asarray(bits)
        want = _UINT[_BY_ID[fid]["storage_bytes"]]
        if bits.dtype != want:
            raise TypeError(f"{format_name(fid)} patterns are held in {want.name}, not {bits.dtype}")
        self.bits = bits
        self.format = format_name(fid)
        self._fmt = fid

    shape = property(lambda self: self.bits.shape, doc="The shape of the array.")
    ndim = property(lambda self: self.bits.ndim, doc="The number of dimensions.")
    size = property(lambda self: self.bits.size, doc="The number of elements.")
    dtype = property(lambda self: self.format, doc="The format's name (numpy has no dtype for it).")

    def __getitem__(self, key):
        return BitArray(np.asarray(self.bits[key]), self._fmt)

    def __array__(self, dtype=None, copy=None):
        # the values as float64 (every tf32 value is one): always a new array
        if copy is False:
            raise ValueError(f"{self.format} patterns are converted to values: that needs a copy")
        v = np.asarray(self.astype("float64"))
        return v if dtype is None else v.astype(dtype)

    @property
    def T(self):
        """The axes reversed (numpy's .T), a view."""
        return BitArray(self.bits.T, self._fmt)

    def transpose(self, *axes):
        """The axes permuted (numpy's transpose), a view."""
        return BitArray(self.bits.transpose(*axes), self._fmt)

    def astype(self, dtype):
        """The values converted into another format (correctly rounded, to nearest even)."""
        return _convert(self.bits, self._fmt, format_id(dtype))

    def tolist(self):
        """The values as nested Python floats."""
        return self.astype("float64").tolist()

    def __repr__(self):
        vals = np.array2string(np.asarray(self), separator=", ", prefix="BitArray(", floatmode="unique")
        return f"BitArray({vals}, format={self.format!r})"

    def __len__(self):
        return len(self.bits)


def _convert(bits, src, dst, rounding=0):
    """Convert an array of bit patterns of src into a new array of dst (values correctly rounded)."""
    bits = np.ascontiguousarray(bits)
    dst_bits = np.empty(bits.shape, _UINT[_BY_ID[dst]["storage_bytes"]])
    if bits.size:
        _core.convert(bits.reshape(-1), src, dst_bits.reshape(-1), dst, rounding, bits.size)
    return _wrap_bits(dst_bits, dst)


def _wrap_bits(bits, fmt):
    """Bit patterns as the format's array (a view, no copy)."""
    dt = _DTYPE[fmt]
    if dt is None:
        return BitArray(bits, fmt)
    return bits.view(dt)


# DLPack dtype codes (DLPack 1.1) of the formats numpy cannot export through DLPack itself, by dtype name:
# (code, bits).  fp6 and fp4 are absent: ml_dtypes keeps one value a byte, DLPack packs them.
_DL_CODES = {"bfloat16": (4, 16), "float8_e3m4": (7, 8), "float8_e4m3": (8, 8), "float8_e4m3b11fnuz": (9, 8),
             "float8_e4m3fn": (10, 8), "float8_e4m3fnuz": (11, 8), "float8_e5m2": (12, 8),
             "float8_e5m2fnuz": (13, 8), "float8_e8m0fnu": (14, 8)}


class ExportArray(np.ndarray):
    """A numpy / ml_dtypes array that torch and other DLPack consumers read in place, bfloat16 and fp8
    included (numpy's own DLPack export refuses those dtypes): torch.from_dlpack(r.rounded) is a
    tensor of torch.bfloat16 over the same memory.  Everything else is numpy's: arithmetic on it gives
    plain numpy arrays.  The results' rounded answers and finite ranges are ExportArrays."""

    def __array_wrap__(self, arr, context=None, return_scalar=False):
        arr = arr.view(np.ndarray) if isinstance(arr, np.ndarray) else arr
        return arr[()] if return_scalar and isinstance(arr, np.ndarray) else arr

    def __repr__(self):
        return repr(self.view(np.ndarray))  # printed as the numpy array it is

    def __dlpack_device__(self):
        return (1, 0)  # kDLCPU

    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        code = _DL_CODES.get(self.dtype.name)
        if code is None:
            # a dtype numpy exports itself (float32, float16, ...): numpy's DLPack
            kw = {k: v for k, v in (("stream", stream), ("max_version", max_version), ("dl_device", dl_device),
                                    ("copy", copy)) if v is not None}
            return self.view(np.ndarray).__dlpack__(**kw)
        if dl_device is not None and tuple(dl_device) != (1, 0):
            raise BufferError(f"an exactref array lives in host memory; it cannot be exported to device {dl_device}")
        bits = self.view(np.ndarray).view(_UINT[self.dtype.itemsize])
        if copy:
            bits = np.array(bits)  # a writable copy
        versioned = max_version is not None and int(max_version[0]) >= 1
        return _core.dlpack(bits, code[0], code[1], versioned)


def _exportable(arr):
    """An array the package hands out, as an ExportArray where numpy's DLPack would refuse its dtype."""
    if type(arr) is np.ndarray and arr.dtype.name in _DL_CODES:
        return arr.view(ExportArray)
    return arr


# DLPack device types whose memory the CPU reads directly: kDLCPU, kDLCUDAHost (pinned), kDLROCMHost,
# kDLCUDAManaged.
_DL_HOST = (1, 3, 11, 13)
_PKG_DIR = os.path.dirname(os.path.abspath(__file__))


def _warn(message, category=RuntimeWarning):
    """A warning attributed to the first caller outside this package (however deep the call is)."""
    level, f = 2, sys._getframe(1)
    while f is not None and os.path.dirname(os.path.abspath(f.f_code.co_filename)) == _PKG_DIR:
        level += 1
        f = f.f_back
    warnings.warn(message, category, stacklevel=level)


def _is_torch_tensor(data):
    torch = sys.modules.get("torch")
    return torch is not None and isinstance(data, torch.Tensor)


# torch dtypes that numpy cannot take through DLPack: read through an integer view of their bits.
_TORCH_BY_BITS = ("bfloat16", "float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz", "float8_e5m2fnuz",
                  "float8_e8m0fnu")


def _from_torch(t):
    """A host numpy array over a torch tensor (no copy on the CPU; a device tensor is copied once)."""
    import torch

    t = t.detach()
    if t.layout != torch.strided:
        raise TypeError(f"a torch tensor with layout {t.layout} cannot be read: pass a dense tensor (.to_dense())")
    if t.device.type != "cpu":
        _warn(f"exactref: a torch tensor on {t.device} is copied to the host once to be checked (the library "
              f"reads host memory; docs/python.md, CUDA tensors)")
        t = t.cpu()
    t = t.resolve_conj().resolve_neg()
    name = str(t.dtype).replace("torch.", "")
    if name in _TORCH_BY_BITS:
        width = t.element_size()
        view = t.view({1: torch.uint8, 2: torch.int16}[width])
        return np.from_dlpack(view).view(_UINT[width]).view(_DTYPE[format_id(name)])
    if name.startswith("float4_e2m1fn_x2"):
        raise TypeError("torch.float4_e2m1fn_x2 packs two fp4 values in a byte: pass one pattern per byte, as a "
                        "uint8 tensor of the low nibbles with dtype='float4_e2m1fn'")
    try:
        return np.from_dlpack(t)
    except (BufferError, RuntimeError, TypeError, ValueError) as e:
        raise TypeError(f"cannot read a torch tensor of dtype {t.dtype}: {e}") from None


def _from_dlpack(data):
    """A host numpy array from an object with __dlpack__ (numpy, torch, CuPy, JAX)."""
    if _is_torch_tensor(data):
        return _from_torch(data)
    try:
        dev = int(data.__dlpack_device__()[0]) if hasattr(data, "__dlpack_device__") else 1
    except Exception:  # noqa: BLE001 - a broken protocol method: read the object as numpy would
        dev = 1
    if dev not in _DL_HOST:
        _warn(f"exactref: a {type(data).__name__} in device memory is copied to the host once to be checked "
              f"(the library reads host memory; docs/python.md, CUDA tensors)")
        if hasattr(data, "get"):  # CuPy
            return np.asarray(data.get())
        if hasattr(data, "__array__"):  # JAX and others copy to the host themselves
            return np.asarray(data)
        raise TypeError(f"cannot copy a {type(data).__name__} from device type {dev} to the host: it has neither "
                        f"get() nor __array__")
    try:
        return np.from_dlpack(data)
    except (BufferError, RuntimeError, TypeError, ValueError) as e:
        if hasattr(data, "__array__"):  # a dtype numpy cannot take through DLPack (JAX's bfloat16, fp8)
            return np.asarray(data)
        raise TypeError(f"cannot read {type(data).__name__} through DLPack: {e}") from None


def asarray(data, dtype=None):
    """data as an array of the format dtype: a numpy/ml_dtypes array (a view where data already is one).

    data: a numpy or ml_dtypes array, a Python list or scalar, any object with __dlpack__ (torch,
    CuPy, JAX), or an unsigned integer array of raw bit patterns whose item size is the format's
    storage size (with dtype naming the format).  Values are converted into dtype correctly rounded
    (to nearest, ties to even); integers into an integer format must fit it.  A Result with one
    output gives its rounded array.

    dtype: None (data's own dtype, which must be one exactref models), a format name in the MLIR or
    ml_dtypes spelling in any case ("bf16", "f8E4M3FN", "float8_e4m3fn", "tf32", "i8"), or a numpy /
    ml_dtypes dtype.  er.formats() lists them.  tf32 has no numpy dtype: it gives an er.BitArray.

    Host arrays are read in place (strided views included); an array in device memory (a CUDA tensor,
    a CuPy array) is copied to the host once, with a RuntimeWarning.

    >>> er.asarray([[1.0, 2.5]], "bf16")            # an ml_dtypes bfloat16 array
    >>> er.asarray(torch_tensor)                    # the same memory, as numpy / ml_dtypes
    >>> er.asarray(np.array([[0x38]], np.uint8), "float8_e4m3fn")   # raw bits: 1.0
    """
    from ._result import Result

    if isinstance(data, Result):
        data = data._single()
        if dtype is None:
            return data
    if isinstance(data, BitArray):
        if dtype is None or format_id(dtype) == data._fmt:
            return data
        return data.astype(dtype)
    fmt = None if dtype is None else format_id(dtype)
    if not isinstance(data, np.ndarray):
        if hasattr(data, "__dlpack__") and not isinstance(data, (list, tuple)):
            data = _from_dlpack(data)
        elif fmt is not None and not isinstance(data, np.generic):
            if hasattr(data, "__array__") or hasattr(data, "__array_interface__"):
                data = np.asarray(data)
            elif is_float(fmt):
                data = np.asarray(data, dtype=np.float64)
            else:
                data = np.asarray(data)
                if data.dtype.kind not in "iub":
                    raise TypeError(f"{format_name(fmt)} takes integers, not {data.dtype}")
        else:
            data = np.asarray(data)
    if data.dtype == object:
        raise TypeError("an array of Python objects cannot be read as numbers")
    if data.dtype.byteorder == (">" if np.little_endian else "<"):
        data = data.astype(data.dtype.newbyteorder("="))  # the library reads native byte order: one copy
    if fmt is None:
        if data.dtype not in _FMT_OF_DTYPE:
            raise TypeError(f"dtype {data.dtype} is not a format exactref models; name one with dtype=")
        return data
    info = _BY_ID[fmt]
    if _DTYPE[fmt] is not None and data.dtype == _DTYPE[fmt]:
        return data
    if data.dtype.kind == "u" and data.dtype.itemsize == info["storage_bytes"] and info["kind"] == "float":
        # raw bit patterns with a declared format: a view
        bits = data.view(_UINT[info["storage_bytes"]])
        wrapped = _wrap_bits(bits, fmt)
        return wrapped
    if info["kind"] != "float":
        if data.dtype.kind not in "iub":
            raise TypeError(f"{info['alias']} takes integers, not {data.dtype}")
        lo, hi = (np.iinfo(_DTYPE[fmt]).min, np.iinfo(_DTYPE[fmt]).max)
        if data.size and (data.min() < lo or data.max() > hi):
            bad = np.flatnonzero((data.reshape(-1) < lo) | (data.reshape(-1) > hi))[0]
            where = ", ".join(str(int(i)) for i in np.unravel_index(bad, data.shape))
            raise ValueError(f"element [{where}] = {data.reshape(-1)[bad]} is outside the range of {info['alias']}")
        return data.astype(_DTYPE[fmt])
    # values into a float format, correctly rounded by the library
    if data.dtype in _FMT_OF_DTYPE and is_float(_FMT_OF_DTYPE[data.dtype]):
        src = _FMT_OF_DTYPE[data.dtype]
    else:
        if data.dtype.kind == "c":
            raise TypeError("complex values are not supported")
        data = data.astype(np.float64)
        src = FMT_F64
    sinfo = _BY_ID[src]
    return _convert(np.ascontiguousarray(data).view(_UINT[sinfo["storage_bytes"]]), src, fmt)


def _bits_of(x):
    """(uint view of the patterns ready for the C layer, format id) of an array asarray returned."""
    if isinstance(x, BitArray):
        bits, fmt = x.bits, x._fmt
    else:
        fmt = _FMT_OF_DTYPE[x.dtype]
        bits = x.view(_UINT[x.dtype.itemsize]) if x.ndim else x.reshape(1).view(_UINT[x.dtype.itemsize])
    isz = bits.dtype.itemsize
    if any(s < 0 or s % isz for s in bits.strides):
        bits = np.ascontiguousarray(bits)
    return bits, fmt
