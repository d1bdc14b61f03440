"""tile.py: the Tile IR interpreter from Python: run a kernel on numpy arrays, and judge a device's buffers.

``er.tile.run(kernel, grid, *args)`` runs a CUDA Tile IR kernel on the host, bit-exactly (the
interpreter's point mode), and returns the arrays it wrote.  ``er.tile.check(kernel, grid, args,
device_outputs, standard=...)`` runs it in bounds mode (docs/interp.md, "Bounds mode") and judges the
device's outputs with ``exactref check``'s report: every element must be a value some correct device
can store.

``kernel`` is Tile IR text, a file (``.mlir``; ``.tileirbc`` is printed by ``tileirdisasm``), or a cuTile
Python kernel function (``@cuda.tile.kernel``), which is exported with cuda.tile's ``export_kernel``
and printed with ``tileirdisasm`` (PyPI ``cuda-tile`` and ``nvidia-cuda-tileiras``; a clear error
names them when they are missing).  Arguments follow cuTile's calling convention as
``exactref interp --cutile`` does: each array binds its pointer parameter, and its shape and then its
strides (in elements) fill the integer parameters that follow; numbers bind scalar parameters.
"""

import glob
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np

from . import _arrays, _core

__all__ = ["run", "check", "TileCheck", "UndecidedError", "TileError"]

_POINTER, _SCALAR = 1, 2
_FMT_I1 = 1000
_AX = ("exp2", "exp", "divf", "rsqrt", "sqrt", "tanh")


class TileError(RuntimeError):
    """A launch the interpreter refused: .kind is its kind ("interp.ub", ...), the message names the line."""

    def __init__(self, kind, msg):
        super().__init__("%s: %s" % (kind, msg))
        self.kind = kind


class UndecidedError(TileError):
    """Bounds mode: a value that must be decided (a branch, an index, a mask) depends on the device."""


def _tileirdisasm():
    tool = shutil.which("tileirdisasm")
    if tool:
        return tool
    # where pip installs it: site-packages/nvidia/cu*/bin (nvidia-cuda-tileiras)
    for base in sys.path:
        for cand in sorted(glob.glob(os.path.join(base, "nvidia", "cu*", "bin", "tileirdisasm"))):
            if os.access(cand, os.X_OK):
                return cand
    return None


def _disasm(path):
    tool = _tileirdisasm()
    if not tool:
        raise RuntimeError("%s is Tile IR bytecode: printing it needs tileirdisasm (pip install nvidia-cuda-tileiras)" % path)
    out = subprocess.run([tool, path], capture_output=True, text=True)
    if out.returncode != 0:
        raise RuntimeError("tileirdisasm %s failed: %s" % (path, out.stderr.strip()))
    return out.stdout


def _cutile_text(fn, args):
    """Export a cuTile Python kernel for these arrays (cuTile's calling convention, i32 shapes and strides,
    as tests/interp/cutile/gen_cutile.py does) and print it as Tile IR text."""
    try:
        import cuda.tile as ct
        import cuda.tile.compilation as cc
    except ImportError as e:
        raise RuntimeError("a cuTile kernel function needs cuda.tile (pip install cuda-tile) and tileirdisasm "
                           "(pip install nvidia-cuda-tileiras) to be exported to Tile IR: %s" % e) from None
    if not _tileirdisasm():
        raise RuntimeError("exporting a cuTile kernel needs tileirdisasm (pip install nvidia-cuda-tileiras)")
    params = []
    for a in args:
        if isinstance(a, (bool, int, float, np.integer, np.floating)) and not isinstance(a, np.ndarray):
            # a compile-time constant (ct.Constant[int], a tile size): folded into the exported kernel,
            # so it takes no parameter there and binds to none
            params.append(cc.ConstantConstraint(a.item() if isinstance(a, np.generic) else a))
            continue
        if not isinstance(a, np.ndarray) or not hasattr(ct, a.dtype.name):
            raise TypeError("a cuTile kernel function is exported here for numpy arrays of cuTile's dtypes and "
                            "Python numbers (its constants) only; pass its Tile IR (exported with "
                            "cuda.tile.compilation.export_kernel) for others")
        params.append(cc.ArrayConstraint(getattr(ct, a.dtype.name), a.ndim, index_dtype=ct.int32, stride_lower_bound_incl=0,
                                         alias_groups=[], may_alias_internally=False))
    sig = cc.KernelSignature(params, cc.CallingConvention.cutile_python_v1())
    with tempfile.TemporaryDirectory() as d:
        bc = os.path.join(d, "kernel.tileirbc")
        cc.export_kernel(fn, [sig], bc, output_format="tileir_bytecode", bytecode_version="13.3")
        return _disasm(bc)


def _source(kernel, args):
    """(text, filename) of the kernel."""
    if callable(kernel):
        return _cutile_text(kernel, args), getattr(kernel, "__name__", "<cutile>")
    if isinstance(kernel, os.PathLike) or (isinstance(kernel, str) and "\n" not in kernel and os.path.exists(kernel)):
        path = os.fspath(kernel)
        if path.endswith(".tileirbc"):
            return _disasm(path), path
        with open(path, encoding="utf-8") as f:
            return f.read(), path
    if isinstance(kernel, str):
        return kernel, "<text>"
    raise TypeError("kernel: Tile IR text, a file path, or a cuTile kernel function")


def _fmt_of(a):
    """The format id of an array's dtype (ml_dtypes dtypes included)."""
    try:
        return _arrays.format_id(a.dtype)
    except (TypeError, ValueError):
        raise TypeError("an array of dtype %s is not a format exactref knows" % a.dtype) from None


def _scalar_bits(v, fmt):
    """The bit pattern of a scalar argument: an integer in its type's width, a float exactly a value of it."""
    if fmt == _FMT_I1:
        return int(bool(v))
    if fmt < 0:  # i4
        return int(v) & 0xF
    row = _arrays.format_info(fmt)
    width = row["width"]
    if row["kind"] != "float":
        return int(v) & ((1 << width) - 1)
    dt = _arrays.dtype_of(fmt)
    if dt is None:
        raise TypeError("a scalar of format %s cannot be given from Python" % row["name"])
    x = np.array([v], dtype=dt)
    if not (np.isnan(x.astype(np.float64)[0]) and np.isnan(float(v))) and float(x.astype(np.float64)[0]) != float(v):
        raise ValueError("%r is not a value of the scalar's format %s" % (v, row["name"]))
    return int(x.view(_arrays._UINT[dt.itemsize])[0])


def _bind(params, args, cutile):
    """Buffers (format, bytearray, array) and scalar patterns from the arguments, cuTile's convention."""
    bufs, scal, arrays = [], [], []
    pending = []
    ai = 0
    for kind, fmt, name in params:
        if pending and kind == _SCALAR and fmt >= 0 and fmt != _FMT_I1 and _arrays.format_info(fmt)["kind"] != "float":
            scal.append(pending.pop(0) & ((1 << 64) - 1))
            continue
        pending = []  # a kernel that does not follow cuTile's convention here: arguments bind one to one
        if ai >= len(args):
            raise TypeError("no argument for parameter %%%s (%d given)" % (name, len(args)))
        a = args[ai]
        ai += 1
        if kind == _POINTER:
            if not isinstance(a, np.ndarray):
                raise TypeError("parameter %%%s is a pointer: pass a numpy array" % name)
            if fmt != _FMT_I1 and _fmt_of(a) != fmt:
                raise TypeError("parameter %%%s points to format %d; the array's dtype is %s" % (name, fmt, a.dtype))
            data = bytearray(np.ascontiguousarray(a).tobytes())
            bufs.append((fmt, data))
            arrays.append(a)
            if cutile:
                st, strides = 1, []
                for s in reversed(a.shape):
                    strides.insert(0, st)
                    st *= s
                pending = list(a.shape) + strides
        elif kind == _SCALAR:
            scal.append(_scalar_bits(a, fmt))
        else:
            raise TypeError("parameter %%%s has a type no launch can pass" % name)
    if ai != len(args):
        raise TypeError("the kernel takes %d arguments, %d given" % (ai, len(args)))
    return bufs, scal, arrays


def _grid(grid):
    g = (grid,) if isinstance(grid, int) else tuple(grid)
    g = tuple(int(v) for v in g) + (1,) * (3 - len(g))
    if len(g) != 3:
        raise ValueError("grid: one to three block counts")
    return g


def _prepare(kernel, args, name):
    """(text, filename, entry name, its parameters, the arguments that bind to them): a cuTile kernel
    function's constants are folded into its export and bind to no parameter."""
    text, filename = _source(kernel, args)
    if callable(kernel):
        args = tuple(a for a in args if isinstance(a, np.ndarray) or not isinstance(a, (bool, int, float, np.integer, np.floating)))
    entries = _core.interp_params(text, filename)
    if name is None:
        if len(entries) != 1:
            raise ValueError("the module has %d entries: name one with kernel_name=" % len(entries))
        name = next(iter(entries))
    if name not in entries:
        raise ValueError("no entry @%s in the module" % name)
    return text, filename, name, entries[name], args


def _raise(kind, msg):
    if kind == "ok":
        return
    if kind == "interp.undecided":
        raise UndecidedError(kind, msg)
    raise TileError(kind, msg)


def run(kernel, grid, *args, kernel_name=None, cutile=True):
    """Run the kernel in point mode; returns the arrays bound to its pointer parameters, as it left them."""
    text, filename, name, params, args = _prepare(kernel, args, kernel_name)
    bufs, scal, arrays = _bind(params, args, cutile)
    kind, msg, prints, _ = _core.interp_run(text, filename, name, _grid(grid), bufs, scal, False, None,
                                            [-1.0] * len(_AX), [None] * len(bufs), [()] * len(bufs))
    _raise(kind, msg)
    return [np.frombuffer(bytes(b), dtype=a.dtype).reshape(a.shape) for (_, b), a in zip(bufs, arrays)]


class TileCheck:
    """The judgement of a device's buffers: .covered, .reports[i] (the check's report dict, or None where no
    device array was given), .lo[i] / .hi[i] (float64 enclosures of float buffers, else None), .outputs[i]
    (the interpreter's own run)."""

    def __init__(self, reports, lo, hi, flags, outputs):
        self.reports, self.lo, self.hi, self.flags, self.outputs = reports, lo, hi, flags, outputs
        self.outside = sum(r["outside"] for r in reports if r)
        self.covered = self.outside == 0

    def __bool__(self):
        return self.covered

    def __repr__(self):
        return "TileCheck(covered=%s, outside=%d)" % (self.covered, self.outside)


def check(kernel, grid, args, device_outputs, standard="normal", ulps=None, kernel_name=None, cutile=True):
    """Judge device_outputs (one array or None per pointer parameter, in order, or a dict index -> array)
    against what any correct device can store (bounds mode).  ulps: {op: N} for exp2, exp, divf, rsqrt,
    sqrt, tanh.  Raises UndecidedError when a decision depends on the device, TileError on a refusal."""
    text, filename, name, params, args = _prepare(kernel, args, kernel_name)
    bufs, scal, arrays = _bind(params, list(args), cutile)
    dev = [None] * len(bufs)
    if isinstance(device_outputs, dict):
        for k, v in device_outputs.items():
            dev[int(k)] = v
    else:
        for i, v in enumerate(device_outputs):
            dev[i] = v
    devb, shapes = [], []
    for i, (v, a) in enumerate(zip(dev, arrays)):
        if v is None:
            devb.append(None)
            shapes.append(())
            continue
        v = np.ascontiguousarray(v)
        if v.dtype != a.dtype or v.shape != a.shape:
            raise ValueError("device output %d: %s %s, the buffer is %s %s" % (i, v.dtype, v.shape, a.dtype, a.shape))
        devb.append(v.tobytes())
        shapes.append(a.shape if a.ndim else (1,))
    u = [-1.0] * len(_AX)
    for op, n in (ulps or {}).items():
        if op not in _AX:
            raise ValueError("ulps: %r is not one of %s" % (op, ", ".join(_AX)))
        u[_AX.index(op)] = float(n)
    kind, msg, _prints, per = _core.interp_run(text, filename, name, _grid(grid), bufs, scal, True, standard, u, devb, shapes)
    _raise(kind, msg)
    reports, lo, hi, flags = [], [], [], []
    for i, (p, a) in enumerate(zip(per, arrays)):
        if p is None:
            reports.append(None)
            lo.append(None)
            hi.append(None)
            flags.append(None)
            continue
        l, h, f, rep = p
        reports.append(rep)
        lo.append(None if l is None else np.frombuffer(l, dtype=np.float64).reshape(a.shape))
        hi.append(None if h is None else np.frombuffer(h, dtype=np.float64).reshape(a.shape))
        flags.append(None if f is None else np.frombuffer(f, dtype=np.uint8).reshape(a.shape))
    outputs = [np.frombuffer(bytes(b), dtype=a.dtype).reshape(a.shape) for (_, b), a in zip(bufs, arrays)]
    return TileCheck(reports, lo, hi, flags, outputs)
