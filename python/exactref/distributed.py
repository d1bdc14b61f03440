"""distributed.py: exactref.distributed: a matmul's output checked on Dask, one task per output block, the blocks' reports merged by the library."""
from __future__ import annotations

import contextlib
import math
import os
import re
import uuid
import warnings

import numpy as np

try:
    import dask
    import dask.array as da
except ImportError as _e:  # pragma: no cover - the optional extra
    raise ImportError("exactref.distributed needs dask: pip install 'exactref[dask]' (dask[distributed]); "
                      f"importing it failed: {_e}") from None

from . import _arrays as A
from . import _core
from . import testing as _testing

__all__ = ["check_matmul", "assert_matmul_valid"]

# the outside elements listed in a report, as the command's JSON and er.testing.report list them
OUTSIDE_CAP = 1000
# the default output block: at most this many rows and columns a task
_BLOCK = 1024


# ---------------------------------------------------------------------------------------------------
# inputs


class _NpyFile:
    """An .npy file read on the worker that runs the task, through a memory mapping: only the block's
    rows and columns are read.  Small and picklable (the path, never the data)."""

    def __init__(self, name, path, shape, dtype, offset, fortran):
        self.name, self.path, self.shape, self.dtype = name, path, tuple(shape), np.dtype(dtype)
        self.offset, self.fortran, self.ndim = int(offset), bool(fortran), len(shape)

    def __getitem__(self, key):
        try:
            mm = np.memmap(self.path, dtype=self.dtype, mode="r", offset=self.offset, shape=self.shape,
                           order="F" if self.fortran else "C")
        except FileNotFoundError:
            raise FileNotFoundError(f"{self.name}: {self.path} is missing on {_where()}") from None
        except (OSError, ValueError) as e:
            raise ValueError(f"{self.name}: {self.path} cannot be read as its header says on {_where()} "
                             f"(shape {self.shape}, dtype {self.dtype.str}: {e})") from None
        try:
            return np.array(mm[key])
        finally:
            del mm


def _where():
    try:
        from distributed import get_worker

        return f"worker {get_worker().address}"
    except (ImportError, ValueError):
        return "this machine"


def _open_npy(name, path):
    """The header of an .npy file (read here, so that bad files fail before any task runs)."""
    path = os.fspath(path)
    try:
        mm = np.load(path, mmap_mode="r", allow_pickle=False)
    except FileNotFoundError:
        raise FileNotFoundError(f"{name}: {path}: no such file") from None
    except (OSError, ValueError) as e:
        raise ValueError(f"{name}: {path} is not an .npy file exactref can read: {e}") from None
    if not isinstance(mm, np.memmap):
        raise ValueError(f"{name}: {path} is not an .npy file of one array")
    # the path as given: each worker opens it (a relative one from the worker's working directory)
    return _from_memmap(name, mm, path)


def _from_memmap(name, mm, path=None):
    fortran = mm.flags.f_contiguous and not mm.flags.c_contiguous
    return _NpyFile(name, path or mm.filename, mm.shape, mm.dtype, mm.offset, fortran)


def _whole_memmap(x):
    """Whether x is a whole memory-mapped file (np.load's mmap_mode), not a view into one."""
    if not isinstance(x, np.memmap) or not isinstance(getattr(x, "filename", None), str):
        return False
    if not (x.flags.c_contiguous or x.flags.f_contiguous):
        return False
    try:
        return os.path.getsize(x.filename) == x.offset + x.nbytes
    except OSError:
        return False


class _Input:
    """One input: a dask array (given, or a zarr array's), or its source (a numpy array, an .npy file)
    made a dask array of the blocks' chunks at once, so that no task ever reads more than its block; and
    the format its raw bit patterns are read in (None: its dtype's)."""

    def __init__(self, name, x):
        self.name = name
        self.fmt = None
        if isinstance(x, tuple) and len(x) == 2 and isinstance(x[1], (str, np.dtype, type)):
            x, self.fmt = x
            try:
                self.fmt = A.format_name(A.format_id(self.fmt))
            except (TypeError, ValueError) as e:
                raise ValueError(f"{name}: {e}") from None
        self.arr = self.src = None
        if isinstance(x, (str, os.PathLike)):
            self.src = _open_npy(name, x)
        elif _whole_memmap(x):
            self.src = _from_memmap(name, x)
        elif isinstance(x, da.Array):
            self.arr = x
        elif type(x).__module__.split(".")[0] == "zarr":
            self.arr = da.from_zarr(x)  # its chunks are where the data is
        else:
            try:
                arr = A.asarray(x)
            except (TypeError, ValueError) as e:
                raise (TypeError if isinstance(e, TypeError) else ValueError)(f"{name}: {e}") from None
            if isinstance(arr, A.BitArray):
                raise TypeError(f"{name}: tf32 inputs are not taken by exactref.distributed; check them with "
                                f"er.testing.assert_matmul_valid")
            self.src = arr
        x = self.arr if self.arr is not None else self.src
        if x.ndim != 2:
            if x.ndim == 3:
                raise NotImplementedError(f"{name}: exactref.distributed checks 2-D products; check a batch "
                                          f"matrix by matrix (shape {tuple(x.shape)})")
            raise ValueError(f"{name} must be 2-D, not {x.ndim}-D (shape {tuple(x.shape)})")
        if any(math.isnan(s) for s in x.shape):
            raise ValueError(f"{name}: its shape is not known ({x.shape}); call compute_chunk_sizes() first")
        dt = np.dtype(x.dtype)
        if dt.type is np.void and dt.fields is None:
            if dt.itemsize not in A._UINT:
                raise TypeError(f"{name}: raw {dt.itemsize}-byte patterns ({dt.str}) are not a format's storage")
            if self.fmt is None and name != "out":
                raise TypeError(f"{name}: it holds raw {dt.itemsize}-byte patterns ({dt.str}): name their format, "
                                f"as ({name}, 'bfloat16')")
        self.dtype = dt
        self.shape = tuple(int(s) for s in x.shape)

    @property
    def user_dask(self):
        return self.arr is not None

    def chunks(self, dim):
        return tuple(self.arr.chunks[dim]) if self.arr is not None else None

    def blocks(self, chunks):
        """The input as a dask array of these chunks."""
        if self.arr is not None:
            return self.arr.rechunk(chunks)
        if isinstance(self.src, _NpyFile):
            return da.from_array(self.src, chunks=chunks, asarray=False, lock=False, inline_array=True,
                                 name=f"exactref-{self.name}-{_token(self.src, chunks)}")
        # each block in the graph, no task sees more; named, not hashed (hashing reads every byte)
        return da.from_array(self.src, chunks=chunks, name=f"exactref-{self.name}-{uuid.uuid4().hex}")

    def probe(self, rows, cols, client):
        """A corner of the input, here (for the checks before any task runs)."""
        if self.arr is None:
            return _read_block(self.src[rows, cols])
        x = self.arr[rows, cols]
        return _read_block(client.compute(x).result() if client is not None else x.compute(scheduler="sync"))


def _read_block(x):
    x = np.asarray(x)
    if x.dtype.type is np.void and x.dtype.fields is None:
        x = x.view(A._UINT[x.dtype.itemsize])
    return x


def _token(src, chunks):
    from dask.base import tokenize

    return tokenize(src.path, src.shape, src.dtype.str, src.offset, src.fortran, chunks)


# ---------------------------------------------------------------------------------------------------
# one block


class _Spec:
    """What every task needs besides its blocks (small, picklable)."""

    def __init__(self, fmts, dtype, rounding, block, scaled, key):
        self.fmts, self.dtype, self.rounding, self.block, self.scaled, self.key = fmts, dtype, rounding, block, \
            scaled, key

    def __dask_tokenize__(self):
        return ("exactref-spec", self.fmts, self.dtype, self.rounding, self.block, self.scaled, self.key)


def _block_result(spec, a, b, out, c, sa, sb):
    """The Result of one block and its output's bit patterns: the dispatch of er.testing.assert_matmul_valid."""
    from ._ops import _Operand, matmul, mma, mma_scaled, mmai
    from ._result import _output_array

    def arg(x, q, name):
        x = _read_block(x)
        f = spec.fmts[q]
        if f is not None:
            try:
                x = A.asarray(x, f)
            except (TypeError, ValueError) as e:
                raise (TypeError if isinstance(e, TypeError) else ValueError)(f"{name}: {e}") from None
        return x

    aa = _Operand(arg(a, 0, "a"), "a").arr
    bb = _Operand(arg(b, 1, "b"), "b").arr
    cc = None if c is None else arg(c, 3, "c")
    if spec.scaled:
        r = mma_scaled(aa, bb, arg(sa, 4, "a_scale"), arg(sb, 5, "b_scale"), block=spec.block, C=cc,
                       dtype=spec.dtype, rounding=spec.rounding)
    elif not A.is_float(A._bits_of(aa)[1]):
        r = mmai(aa, bb, cc)
    elif cc is not None:
        r = mma(aa, bb, cc, dtype=spec.dtype, rounding=spec.rounding)
    else:
        r = matmul(aa, bb, dtype=spec.dtype, rounding=spec.rounding)
    core = r._core_for(spec.key)
    try:
        o = _output_array(arg(out, 2, "out"), core.format, core.shape)
    except (TypeError, ValueError) as e:
        raise (TypeError if isinstance(e, TypeError) else ValueError)(f"out: {e}") from None
    bits, _ = A._bits_of(o)
    return r, core, bits


# an element named in a message of the library or the package: "a: element [4, 3] = ..."
_ELEMENT = re.compile(r"^(a|b|c|out|a_scale|b_scale|A|B|C|the output): element \[(\d+), (\d+)\]")
# which of the block's offsets (rows, columns) each input's indices take
_OFFSETS = {"a": (1, 0), "a_scale": (1, 0), "b": (0, 1), "b_scale": (0, 1), "c": (1, 1), "out": (1, 1),
            "the output": (1, 1)}


def _global(msg, i0, j0):
    """msg with an element index of the block made the index in the whole input."""
    m = _ELEMENT.match(msg)
    if not m:
        return msg
    ri, cj = _OFFSETS[m.group(1) if m.group(1) in _OFFSETS else m.group(1).lower()]
    i, j = int(m.group(2)) + ri * i0, int(m.group(3)) + cj * j0
    return f"{m.group(1)}: element [{i}, {j}]{msg[m.end():]}"


def _check_block(spec, where, a, b, out, c, sa, sb):
    """The task: one output block's report, for the merge: (report bytes, covered bytes or None, the
    narrower-format hint's candidates, out_in and r_in, and the block's greatest absolute and relative
    differences from rounded with their flat indices in the whole output).  where: (first row, first
    column, its text, the whole output's columns)."""
    i0, j0, text, n = where
    try:
        r, core, bits = _block_result(spec, a, b, out, c, sa, sb)
        rep, cov, cand, out_in, r_in = core.report_part(bits, *spec.key)
        tol = r._bounds_key(spec.key).tolerance.reshape(-1) if A.is_float(core.format) else None
        parts = _testing._greatest_parts(A._bits_of(r.rounded)[0], bits, core.format, core.shape,
                                         lambda f: tol[f] if tol is not None else 0.0)
    except (TypeError, ValueError, NotImplementedError) as e:
        raise type(e)(f"{_global(str(e), i0, j0)} (in the output block of {text})") from None
    cols = core.shape[1]
    parts = [(w, v, (i0 + f // cols) * n + j0 + f % cols, t) for w, v, f, t in parts]
    return rep, cov, cand, out_in, r_in, parts


# ---------------------------------------------------------------------------------------------------
# the blocks


def _chunks_of(inputs, m, n, chunks, workers):
    """The output's row and column chunks: chunks= if given; else those of the dask inputs (which must
    line up); else blocks of at most _BLOCK rows and columns, at least two a worker."""
    from dask.array.core import normalize_chunks

    if chunks is not None:
        try:
            return normalize_chunks(chunks, (m, n))
        except (TypeError, ValueError) as e:
            raise ValueError(f"chunks: {e}") from None
    rows, cols = {}, {}
    for inp, rdim, cdim in inputs:
        if inp is None or not inp.user_dask:
            continue
        if rdim is not None and len(inp.chunks(rdim)) > 1:
            rows[inp.name] = inp.chunks(rdim)
        if cdim is not None and len(inp.chunks(cdim)) > 1:
            cols[inp.name] = inp.chunks(cdim)
    for what, got in (("row", rows), ("column", cols)):
        if len(set(got.values())) > 1:
            (n1, c1), (n2, c2) = [(k, v) for k, v in got.items() if v != next(iter(got.values()))][:1] + \
                [next(iter(got.items()))]
            raise ValueError(f"{n1}'s {what} chunks {_short(c1)} do not line up with {n2}'s {what} chunks "
                             f"{_short(c2)}: rechunk them alike, or pass chunks=(rows, columns)")
    if rows and cols:
        return next(iter(rows.values())), next(iter(cols.values()))
    rs = max(1, -(-m // _BLOCK))
    cs = max(1, -(-n // _BLOCK))
    while rs * cs < 2 * workers and (rs < m or cs < n):
        if (m / rs >= n / cs and rs < m) or cs >= n:
            rs = min(m, rs * 2)
        else:
            cs = min(n, cs * 2)
    r = next(iter(rows.values())) if rows else normalize_chunks(-(-m // rs) if m else 1, (m,))[0]
    c = next(iter(cols.values())) if cols else normalize_chunks(-(-n // cs) if n else 1, (n,))[0]
    return r, c


def _short(c):
    return str(c) if len(c) <= 6 else f"({', '.join(map(str, c[:3]))}, ..., {c[-1]}; {len(c)} chunks)"


def _offsets(c):
    o = [0]
    for x in c:
        o.append(o[-1] + x)
    return o


@contextlib.contextmanager
def _quiet():
    """numpy inputs travel in the task graph, one block a task: dask's warning about a large graph is
    expected then."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="Sending large graph")
        yield


def _workers(cl):
    try:
        info = cl.scheduler_info(n_workers=-1)
    except TypeError:  # older distributed: every worker is listed
        info = cl.scheduler_info()
    return max(1, len(info.get("workers", {})))


def _client(client):
    if client is False:
        return None
    if client is not None:
        return client
    try:
        from distributed import get_client

        return get_client()
    except (ImportError, ValueError):
        return None


# ---------------------------------------------------------------------------------------------------
# the check


def _check(a, b, out, *, standard, compute, ulps, flush_to_zero, c, scales, block, dtype, rounding, client, chunks,
           progress):
    """The merged report: (report bytes, outside index array, op, default compute, format, key)."""
    from ._result import _opts_key

    key = _opts_key(None, compute, ulps, flush_to_zero, standard)
    ia, ib, io = _Input("a", a), _Input("b", b), _Input("out", out)
    ic = None if c is None else _Input("c", c)
    isa = isb = None
    if scales is not None:
        try:
            sa, sb = scales
        except (TypeError, ValueError):
            raise TypeError("scales must be a pair (a_scale, b_scale)") from None
        isa, isb = _Input("a_scale", sa), _Input("b_scale", sb)
    (m, k), (k2, n) = ia.shape, ib.shape
    if k != k2:
        raise ValueError(f"a is {m} x {k} and b is {k2} x {n}: the inner dimensions differ")
    if io.shape != (m, n):
        raise ValueError(f"out has shape {io.shape}; the product a b has shape {(m, n)}")
    if ic is not None and ic.shape != (m, n):
        raise ValueError(f"c has shape {ic.shape}; the product a b has shape {(m, n)}")
    if isa is not None:
        if isa.shape[0] != m or isb.shape[1] != n or isa.shape[1] != isb.shape[0]:
            raise ValueError(f"a_scale is {isa.shape[0]} x {isa.shape[1]} and b_scale {isb.shape[0]} x "
                             f"{isb.shape[1]}; a {m} x {k} by {k} x {n} product needs {m} x kb and kb x {n}")
    if dtype is None:
        if io.fmt is None and io.dtype.type is np.void:
            raise TypeError(f"out: it holds raw {io.dtype.itemsize}-byte patterns ({io.dtype.str}): name their "
                            f"format, as (out, 'bfloat16'), or pass dtype=")
        dtype = io.fmt if io.fmt is not None else A.format_name(A.format_id(io.dtype))
    fmts = tuple(None if x is None else x.fmt for x in (ia, ib, io, ic, isa, isb))
    spec = _Spec(fmts, dtype, rounding, block, isa is not None, key)
    if isa is not None and spec.dtype is None:
        spec.dtype = "float32"

    # the first element, here: the one-process messages for bad formats and options before any task runs
    # (and the operation's name, default compute and output format)
    cl = _client(client)
    i1, j1 = min(m, 1), min(n, 1)
    r, core, _ = _block_result(spec, ia.probe(slice(0, i1), slice(None), cl), ib.probe(slice(None), slice(0, j1), cl),
                               io.probe(slice(0, i1), slice(0, j1), cl),
                               None if ic is None else ic.probe(slice(0, i1), slice(0, j1), cl),
                               None if isa is None else isa.probe(slice(0, i1), slice(None), cl),
                               None if isb is None else isb.probe(slice(None), slice(0, j1), cl))
    op, default_compute, fmt = r.op, core.default_compute, core.format
    if m == 0 or n == 0:
        # an empty output: no block to run; the whole (empty) check here, for the operands' vacuity flags
        whole = slice(None)
        r, core, bits = _block_result(spec, *(None if x is None else x.probe(whole, whole, cl)
                                              for x in (ia, ib, io, ic, isa, isb)))
        rep = core.report_part(bits, *key)[0]
        return rep, np.zeros(OUTSIDE_CAP, np.int64), op, default_compute, fmt, key, [], n

    workers = _workers(cl) if cl is not None else 1
    rc, cc = _chunks_of([(ia, 0, None), (ib, None, 1), (io, 0, 1), (ic, 0, 1), (isa, 0, None), (isb, None, 1)],
                        m, n, chunks, workers)
    ro, co = _offsets(rc), _offsets(cc)
    nr, nc = len(rc), len(cc)
    kk = (k,) if k else (0,)
    A_ = ia.blocks((rc, kk))
    B_ = ib.blocks((kk, cc))
    O_ = io.blocks((rc, cc))
    C_ = None if ic is None else ic.blocks((rc, cc))
    SA = None if isa is None else isa.blocks((rc, (isa.shape[1],)))
    SB = None if isb is None else isb.blocks(((isb.shape[0],), cc))

    a_d = A_.to_delayed()[:, 0]
    o_d = O_.to_delayed()
    c_d = None if C_ is None else C_.to_delayed()
    sa_d = None if SA is None else SA.to_delayed()[:, 0]
    sb_d = None if SB is None else SB.to_delayed()[0, :]
    task = dask.delayed(_check_block, pure=True)
    b_futs = B_p = None
    if cl is not None:
        # B's blocks computed once and copied to every worker once, not once per task
        with _quiet():
            B_p = cl.persist(B_)
        from distributed import futures_of, wait

        by_key = {f.key: f for f in futures_of(B_p)}
        b_futs = [by_key[key_] for key_ in B_p.__dask_keys__()[0]]
        wait(b_futs)
        if workers > 1:
            cl.replicate(b_futs)
        b_of = b_futs
    else:
        b_of = B_.to_delayed()[0, :]
    tasks, where = [], []
    for i in range(nr):
        for j in range(nc):
            w = (ro[i], co[j], f"rows {ro[i]}:{ro[i + 1]}, columns {co[j]}:{co[j + 1]}", n)
            tasks.append(task(spec, w, a_d[i], b_of[j], o_d[i, j], None if c_d is None else c_d[i, j],
                              None if sa_d is None else sa_d[i], None if sb_d is None else sb_d[j]))
            where.append((i, j))

    rep = _core.report_merge_init((m, n), fmt)
    index = np.zeros(OUTSIDE_CAP, np.int64)
    out_in = r_in = None
    cand = [-1] * 5
    pending = {}  # band -> {column tile: (report, covered)}
    ones_band = np.ones(max(rc) * n if nr and n else 1, np.uint8)
    ones_tile = np.ones(max(rc) * max(cc) if nr and nc else 1, np.uint8)  # apart: the merge copies tile to band
    nxt = [0]
    greatest = {}  # "absolute" / "relative" -> (difference, flat index, allowed there)

    def take(t, res):
        nonlocal out_in, r_in
        i, j = where[t]
        prep, pcov, p_cand, p_out, p_r, p_parts = res
        for what, v, g, tl in p_parts:  # the greatest, the first in index order among equals
            old = greatest.get(what)
            if old is None or v > old[0] or (v == old[0] and g < old[1]):
                greatest[what] = (v, g, tl)
        cand[:] = p_cand
        out_in = list(p_out) if out_in is None else [x and y for x, y in zip(out_in, p_out)]
        r_in = list(p_r) if r_in is None else [x and y for x, y in zip(r_in, p_r)]
        pending.setdefault(i, {})[j] = (prep, pcov)
        while nxt[0] < nr and len(pending.get(nxt[0], ())) == nc:
            bi = nxt[0]
            tiles = pending.pop(bi)
            band = _core.report_merge_init((rc[bi], n), fmt)
            # a band without outside elements merges over all-ones arrays kept from band to band (the
            # merge copies ones over ones); one with outside elements gets its own covered array
            if all(t[1] is None for t in tiles.values()):
                band_cov = ones_band[: rc[bi] * n]
            else:
                band_cov = np.ones(rc[bi] * n, np.uint8)
            for jj in range(nc):
                trep, tcov = tiles[jj]
                if tcov is None:
                    tcov = ones_tile[: rc[bi] * cc[jj]]
                _core.report_merge_columns(band, trep, co[jj], tcov, band_cov)
            _core.report_merge(rep, bytes(band), band_cov, index, OUTSIDE_CAP)
            nxt[0] += 1

    try:
        if cl is not None:
            from distributed import as_completed

            with _quiet():
                futs = cl.compute(tasks)
            pos = {f.key: t for t, f in enumerate(futs)}
            try:
                if progress:
                    from distributed import progress as _progress

                    _progress(futs)
                for f in as_completed(futs):
                    take(pos[f.key], f.result())
            finally:
                # released, not cancelled: the tasks left are forgotten (a failed check stops), and
                # keys another check shares stay
                futs = f = None
        else:
            if progress:
                from dask.diagnostics import ProgressBar

                with ProgressBar():
                    results = dask.compute(*tasks)
            else:
                results = dask.compute(*tasks)
            for t, res in enumerate(results):
                take(t, res)
    finally:
        b_futs = b_of = B_p = None  # B's copies released
    if nr == 0 or nc == 0:
        pass
    elif nxt[0] != nr:  # pragma: no cover - every task answered or the check raised
        raise RuntimeError("exactref.distributed: not every block was reported")

    # the narrower-format hint of the whole output, from the blocks' (as the command's tiles gather it)
    info = _core.report_fields(bytes(rep), None, 0, False)
    narrower = -1
    if info["outside"] and info["elements"] and out_in is not None:
        for q in range(5):
            if cand[q] >= 0 and out_in[q] and not r_in[q]:
                narrower = cand[q]
                break
    _core.report_set_narrower(rep, narrower)
    parts = [(w, *greatest[w]) for w in ("absolute", "relative") if w in greatest]
    return bytes(rep), index, op, default_compute, fmt, key, parts, n


class _Named:
    def __init__(self, **kw):
        self.__dict__.update(kw)


def check_matmul(a, b, out, *, standard="normal", compute=None, c=None, scales=None, block=None, dtype=None,
                 client=None, chunks=None, ulps=None, flush_to_zero=False, rounding="nearest_even", progress=False):
    """er.testing.report's dict for out against a @ b (+ c), computed on Dask, one task per output block.

    a, b, out, c, scales=(a_scale, b_scale): dask arrays, numpy / ml_dtypes arrays, paths of .npy files
    or memory-mapped .npy files (np.load(..., mmap_mode="r"): each worker reads its block's rows and
    columns from the file itself), zarr arrays; any of them as (x, format) when x holds raw bit patterns
    of format.  2-D.  standard, compute, ulps, flush_to_zero, dtype (default: out's), block, rounding:
    as er.testing.assert_matmul_valid.  client: a dask.distributed Client (default: the current one;
    without one, dask's local scheduler in this process).  chunks: the output blocks, (rows, columns)
    as dask.array takes them (default: the dask inputs' chunks, which must line up, else blocks of at
    most 1024 x 1024, at least two a worker).  progress: show Dask's progress bar.

    Each task checks one block of the output (A's rows, B's columns, the output's block); B's blocks
    are copied once to every worker; the blocks' reports are merged by the library's merge, so the dict
    equals er.testing.report's for the whole product, field for field.  A failing block raises its
    error (naming the input and the block); nothing is reported then.
    """
    rep, index, op, dc, fmt, key, parts, n = _check(a, b, out, standard=standard, compute=compute, ulps=ulps,
                                          flush_to_zero=flush_to_zero, c=c, scales=scales, block=block, dtype=dtype,
                                          rounding=rounding, client=client, chunks=chunks, progress=progress)
    d = _core.report_fields(rep, index, OUTSIDE_CAP, False)
    index_of = (lambda g: (int(g // n), int(g % n))) if n else (lambda g: (int(g),))
    return _testing._finish(_Named(op=op, _user_index=lambda idx: tuple(int(i) for i in idx)),
                            _Named(default_compute=dc), fmt, d, key,
                            lambda: _testing._greatest_lines(parts, index_of))


def assert_matmul_valid(a, b, out, *, c=None, scales=None, block=None, standard="normal", compute=None, ulps=None,
                        flush_to_zero=False, dtype=None, rounding="nearest_even", msg=None, client=None, chunks=None,
                        progress=False):
    """er.testing.assert_matmul_valid on Dask (check_matmul): raises AssertionError with the one-process
    helper's message, warns where the check proves little, and returns the report dict."""
    rep = check_matmul(a, b, out, standard=standard, compute=compute, c=c, scales=scales, block=block, dtype=dtype,
                       client=client, chunks=chunks, ulps=ulps, flush_to_zero=flush_to_zero, rounding=rounding,
                       progress=progress)
    _testing._matmul_verdict(rep, msg)
    return rep
