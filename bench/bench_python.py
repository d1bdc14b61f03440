#!/usr/bin/env python3
"""bench_python.py: er.matmul(A, B).covers(out) from Python against the same check through the C API.

Both paths run in one process on the same bf16 operands and the same f32 output (numpy's float32
product of the operands, not timed): the Python path is the package's er.matmul(A, B, dtype="float32")
then Result.covers(out); the C path calls the shared library's er_result_create and er_result_covers
directly through ctypes on the same buffers.  Best of --reps runs each, interleaved.  The package should
stay within 1.1x of the C path (no hidden copies or per-element Python work); this prints the ratio and
asserts nothing.

    python bench/bench_python.py [--sizes 1024,2048] [--reps 3] [--lib build/libexactref.so]
"""
import argparse
import ctypes as C
import os
import sys
import time

import ml_dtypes
import numpy as np

import exactref as er


class Tensor(C.Structure):
    _fields_ = [("format", C.c_int), ("ndim", C.c_int), ("shape", C.c_int64 * 3), ("strides", C.c_int64 * 3),
                ("data", C.c_void_p)]


class MmaArgs(C.Structure):
    _fields_ = [("a", C.POINTER(Tensor)), ("b", C.POINTER(Tensor)), ("c", C.POINTER(Tensor)),
                ("a_scale", C.POINTER(Tensor)), ("b_scale", C.POINTER(Tensor)), ("block", C.c_int),
                ("d", C.POINTER(Tensor)), ("rounding", C.c_int), ("opts", C.c_uint), ("lo", C.POINTER(Tensor)),
                ("hi", C.POINTER(Tensor)), ("odd", C.POINTER(Tensor)), ("threads", C.c_int), ("strategy", C.c_int),
                ("backend", C.c_int), ("device", C.c_int), ("stats", C.c_void_p), ("msg", C.c_char_p),
                ("msg_size", C.c_size_t)]


class Standard(C.Structure):
    _fields_ = [("kind", C.c_int), ("name", C.c_char * 48)] + [(n, C.c_int) for n in (
        "k", "F", "out_p", "out_round", "promote", "group", "floor_terms", "tf32_inputs")]


class TolOpts(C.Structure):
    _fields_ = [("compute", C.c_int), ("ulps", C.c_double), ("flush_to_zero", C.c_int), ("standard", Standard)]


def load(path):
    lib = C.CDLL(path)
    lib.er_tensor_2d.restype = Tensor
    lib.er_tensor_2d.argtypes = [C.c_int, C.c_int64, C.c_int64, C.c_void_p]
    lib.er_mma_args_init.argtypes = [C.POINTER(MmaArgs)]
    lib.er_result_create.argtypes = [C.POINTER(MmaArgs), C.POINTER(C.c_void_p), C.c_char_p, C.c_size_t]
    lib.er_tol_opts_init.argtypes = [C.POINTER(TolOpts)]
    lib.er_result_covers.argtypes = [C.c_void_p, C.POINTER(TolOpts), C.POINTER(Tensor), C.c_void_p,
                                     C.POINTER(C.c_int64), C.c_char_p, C.c_size_t]
    lib.er_result_free.argtypes = [C.c_void_p]
    lib.er_format_from_name.argtypes = [C.c_char_p, C.POINTER(C.c_int)]
    lib.er_version.restype = C.c_char_p
    return lib


def c_check(lib, a, b, out, fmt_bf16, fmt_f32):
    """The C path: er_result_create + er_result_covers on the numpy buffers; returns the count outside."""
    n, k = a.shape
    m = b.shape[1]
    d = np.empty((n, m), np.float32)
    cov = np.empty((n, m), np.uint8)
    ta = lib.er_tensor_2d(fmt_bf16, n, k, a.ctypes.data)
    tb = lib.er_tensor_2d(fmt_bf16, k, m, b.ctypes.data)
    td = lib.er_tensor_2d(fmt_f32, n, m, d.ctypes.data)
    to = lib.er_tensor_2d(fmt_f32, n, m, out.ctypes.data)
    args = MmaArgs()
    lib.er_mma_args_init(C.byref(args))
    args.a, args.b, args.d = C.pointer(ta), C.pointer(tb), C.pointer(td)
    msg = C.create_string_buffer(1024)
    res = C.c_void_p()
    st = lib.er_result_create(C.byref(args), C.byref(res), msg, 1024)
    if st != 0:
        raise RuntimeError(msg.value.decode())
    o = TolOpts()
    lib.er_tol_opts_init(C.byref(o))
    outside = C.c_int64()
    st = lib.er_result_covers(res, C.byref(o), C.byref(to), cov.ctypes.data, C.byref(outside), msg, 1024)
    lib.er_result_free(res)
    if st != 0:
        raise RuntimeError(msg.value.decode())
    return outside.value


def py_check(a, b, out):
    """The Python path, as a user writes it."""
    return int((~er.matmul(a, b, dtype="float32").covers(out)).sum())


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", default="1024,2048")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--lib", default=os.path.join(os.path.dirname(__file__), "..", "build", "libexactref.so"))
    ap.add_argument("--seed", type=int, default=int(os.environ.get("EXACTREF_SEED", "2026")))
    args = ap.parse_args()
    if not os.path.exists(args.lib):
        sys.exit(f"bench_python: {args.lib} not found (build the library first, or pass --lib)")
    lib = load(args.lib)
    fb, ff = C.c_int(), C.c_int()
    lib.er_format_from_name(b"bf16", C.byref(fb))
    lib.er_format_from_name(b"f32", C.byref(ff))
    print(f"bench_python: exactref {er.__version__} (package) vs {lib.er_version().decode()} ({args.lib}); "
          f"{os.cpu_count()} cores; seed {args.seed}; best of {args.reps}")
    print("| n | C API: er_result_create + er_result_covers, wall (CPU) s | Python: er.matmul(A, B).covers(out), "
          "wall (CPU) s | Python / C, wall (CPU) |")
    print("|---|---|---|---|")
    rng = np.random.default_rng(args.seed)
    for n in [int(s) for s in args.sizes.split(",")]:
        a = rng.standard_normal((n, n)).astype(ml_dtypes.bfloat16)
        b = rng.standard_normal((n, n)).astype(ml_dtypes.bfloat16)
        out = a.astype(np.float32) @ b.astype(np.float32)  # a float32 kernel's output (not timed)
        # wall time, and the process's CPU time (all threads: steadier on a shared machine)
        tc, tp, cc, cp = [], [], [], []
        for _ in range(args.reps):
            t0, u0 = time.perf_counter(), time.process_time()
            oc = c_check(lib, a, b, out, fb.value, ff.value)
            tc.append(time.perf_counter() - t0)
            cc.append(time.process_time() - u0)
            t0, u0 = time.perf_counter(), time.process_time()
            op = py_check(a, b, out)
            tp.append(time.perf_counter() - t0)
            cp.append(time.process_time() - u0)
            if oc != op:
                sys.exit(f"bench_python: the paths disagree at n={n}: {oc} vs {op} outside")
        c, p, c2, p2 = min(tc), min(tp), min(cc), min(cp)
        verdict = "within the 1.1x floor" if p <= 1.1 * c else "ABOVE the 1.1x floor"
        print(f"| {n} | {c:.3f} ({c2:.3f}) | {p:.3f} ({p2:.3f}) | {p / c:.3f} ({p2 / c2:.3f}); {verdict} by wall "
              f"time; {op} outside |")


if __name__ == "__main__":
    main()
