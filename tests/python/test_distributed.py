"""test_distributed.py: exactref.distributed on a real dask LocalCluster (2 worker processes): the merged report equals the one-process report."""
import os
import signal

import numpy as np
import pytest

import exactref as er

try:
    import dask  # noqa: F401
    import distributed  # noqa: F401
except ImportError as _e:
    pytest.skip(f"dask.distributed cannot be imported ({_e}): pip install 'dask[distributed]'", allow_module_level=True)

import dask.array as da  # noqa: E402
import ml_dtypes  # noqa: E402
from distributed import Client, LocalCluster  # noqa: E402

from exactref import _core  # noqa: E402
from exactref import distributed as erd  # noqa: E402

BF16 = ml_dtypes.bfloat16
E4M3 = ml_dtypes.float8_e4m3fn
E8M0 = ml_dtypes.float8_e8m0fnu


@pytest.fixture(scope="module")
def client(tmp_path_factory):
    """Two worker processes, one thread each, everything they write in a temporary directory, every
    port (the scheduler's, its HTTP server's, the workers') a free one the system picks: no fight over
    8786 / 8787 with another cluster."""
    import dask

    tmp = tmp_path_factory.mktemp("dask")
    with dask.config.set({"temporary-directory": str(tmp)}):
        cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0",
                               local_directory=str(tmp), host="127.0.0.1")
        cl = Client(cluster)
        try:
            yield cl
        finally:
            cl.close()
            cluster.close()


def _seed(request):
    seed = int(os.environ.get("EXACTREF_SEED", "20261207"))
    print(f"{request.node.name}: EXACTREF_SEED={seed}")
    return np.random.default_rng(seed)


@pytest.fixture
def rng(request):
    return _seed(request)


def _same(x, y):
    """Report dicts equal field for field (NaN equals NaN: a tolerance or range end may be one)."""
    assert x.keys() == y.keys()
    for k in x:
        a, b = x[k], y[k]
        if isinstance(a, float) and isinstance(b, float) and np.isnan(a) and np.isnan(b):
            continue
        assert a == b, (k, a, b)


def _full_one(r, out, **opts):
    """The one-process report with every field (log_hist, map, outside_listed) from the library."""
    from exactref import _arrays as A
    from exactref._result import _opts_key, _output_array

    key = _opts_key(r, opts.get("compute"), None, False, opts.get("standard", "normal"))
    core = r._core_for(key)
    bits, _ = A._bits_of(_output_array(out, core.format, core.shape))
    return _core.report_fields(bytes(core.report_part(bits, *key)[0]), None, 0, True)


def _full_dist(a, b, out, **kw):
    """The distributed report with every field, narrower hint included."""
    opts = dict(standard="normal", compute=None, ulps=None, flush_to_zero=False, c=None, scales=None, block=None,
                dtype=None, rounding="nearest_even", client=None, chunks=None, progress=False)
    opts.update(kw)
    rep = erd._check(a, b, out, **opts)[0]
    return _core.report_fields(rep, None, 0, True)


def _compare(a, b, out, r, client, chunks, **opts):
    """check_matmul == er.testing.report, and every field of the library's report equal."""
    one = er.testing.report(r, out, **opts)
    dist = erd.check_matmul(a, b, out, client=client, chunks=chunks, **opts)
    _same(dist, one)
    f1 = _full_one(r, out, **opts)
    f2 = _full_dist(a, b, out, client=client, chunks=chunks, **opts)
    f1.pop("outside_listed"), f2.pop("outside_listed")
    _same(f2, f1)
    return dist


def _plant(out, where, rng):
    """Errors at the given indices: each element moved by 8 to 12 (the values are a few units, their
    tolerances far below 1 under every standard used here), so they are outside whatever the seed."""
    out = np.array(out)
    for (i, j) in where:
        out[i, j] = float(out[i, j]) + 8.0 + 4.0 * rng.random()
    return out


def _bf16(rng, m, k, n):
    a = rng.standard_normal((m, k)).astype(BF16)
    b = rng.standard_normal((k, n)).astype(BF16)
    return a, b


def test_normal_equals_one_process_and_finds_planted_errors(client, rng):
    a, b = _bf16(rng, 70, 48, 90)
    r = er.matmul(a, b, dtype="float32")
    where = [(0, 0), (3, 89), (33, 40), (69, 7)]
    out = _plant(r.rounded, where, rng)
    d = _compare(a, b, out, r, client, (16, 25))  # blocks that do not divide the shape
    assert d["outside"] == len(where)
    assert d["outside_indices"] == sorted(where)
    assert d["outside_indices_complete"] is True
    assert d["worst_index"] in where
    # every element covered when nothing is planted
    ok = erd.check_matmul(a, b, r.rounded, client=client, chunks=(32, 32))
    assert ok["outside"] == 0 and ok["message"] is None and ok["hist"][0] == 70 * 90


def test_any_order_equals_one_process(client, rng):
    a, b = _bf16(rng, 64, 200, 48)
    r = er.matmul(a, b, dtype="float32")
    out = (a.astype(np.float32) @ b.astype(np.float32))
    out = _plant(out, [(5, 5), (60, 1)], rng)
    d = _compare(a, b, out, r, client, (20, 16), standard="any_order")
    assert d["outside_indices"] == [(5, 5), (60, 1)]


def test_tensor_core_model_equals_one_process(client, rng):
    a = rng.standard_normal((40, 64)).astype(E4M3)
    b = rng.standard_normal((64, 36)).astype(E4M3)
    r = er.matmul(a, b, dtype="float32")
    out = _plant(r.rounded, [(39, 35), (0, 17)], rng)
    d = _compare(a, b, out, r, client, (16, 12), standard="hopper-fp8")
    assert d["outside_indices"] == [(0, 17), (39, 35)]


def test_block_scaled_equals_one_process(client, rng):
    m, k, n = 24, 64, 20
    a = rng.standard_normal((m, k)).astype(E4M3)
    b = rng.standard_normal((k, n)).astype(E4M3)
    sa = np.exp2(rng.integers(-3, 4, (m, k // 32)).astype(np.float32)).astype(E8M0)
    sb = np.exp2(rng.integers(-3, 4, (k // 32, n)).astype(np.float32)).astype(E8M0)
    r = er.mma_scaled(a, b, sa, sb, dtype="float32")
    out = _plant(r.rounded, [(2, 3), (23, 19)], rng)
    one = er.testing.report(r, out, standard="blackwell-mx")
    dist = erd.check_matmul(a, b, out, scales=(sa, sb), client=client, chunks=(8, 7), standard="blackwell-mx")
    _same(dist, one)
    assert dist["outside_indices"] == [(2, 3), (23, 19)]
    f1 = _full_one(r, out, standard="blackwell-mx")
    f2 = _full_dist(a, b, out, scales=(sa, sb), client=client, chunks=(8, 7), standard="blackwell-mx")
    f1.pop("outside_listed"), f2.pop("outside_listed")
    _same(f2, f1)


def test_mma_and_integer_products(client, rng):
    a, b = _bf16(rng, 30, 20, 26)
    c = rng.standard_normal((30, 26)).astype(np.float32)
    r = er.mma(a, b, c, dtype="float32")
    out = _plant(r.rounded, [(29, 0)], rng)
    one = er.testing.report(r, out)
    _same(erd.check_matmul(a, b, out, c=c, client=client, chunks=(8, 8)), one)
    ia = rng.integers(-128, 128, (12, 40)).astype(np.int8)
    ib = rng.integers(-128, 128, (40, 10)).astype(np.int8)
    ri = er.mmai(ia, ib)
    oi = np.array(ri.rounded)
    oi[4, 4] += 1
    _same(erd.check_matmul(ia, ib, oi, client=client, chunks=(5, 4)), er.testing.report(ri, oi))


def test_narrower_hint_gathered_from_the_blocks(client, rng):
    # an f32 output that holds only bf16 values (saved widened): the one-process hint, from the blocks
    a, b = _bf16(rng, 32, 40, 30)
    r = er.matmul(a, b, dtype="float32")
    out = np.array(r.rounded).astype(BF16).astype(np.float32)
    one = er.testing.report(r, out)
    assert one["outside"] > 0 and one["narrower_format"] >= 0
    d = erd.check_matmul(a, b, out, client=client, chunks=(8, 8))
    _same(d, one)
    assert "hint:" in d["message"]


def test_assert_matmul_valid_message_is_the_one_process_message(client, rng):
    a, b = _bf16(rng, 20, 16, 12)
    r = er.matmul(a, b, dtype="float32")
    out = _plant(r.rounded, [(7, 3)], rng)
    with pytest.raises(AssertionError) as one:
        er.testing.assert_matmul_valid(a, b, out, standard="any_order")
    with pytest.raises(AssertionError) as dist:
        erd.assert_matmul_valid(a, b, out, standard="any_order", client=client, chunks=(6, 5))
    assert str(dist.value) == str(one.value)
    assert "(7, 3)" in str(dist.value)
    rep = erd.assert_matmul_valid(a, b, r.rounded, client=client, chunks=(6, 5))
    assert rep["outside"] == 0
    with pytest.warns(UserWarning, match="vacuous"):
        erd.assert_matmul_valid(np.zeros((4, 4), BF16), b[:4], np.zeros((4, 12), np.float32), client=client)


def test_inputs_dask_memmap_path_and_local_scheduler(client, rng, tmp_path):
    a, b = _bf16(rng, 48, 32, 40)
    r = er.matmul(a, b, dtype="float32")
    out = _plant(r.rounded, [(10, 10), (47, 39)], rng)
    one = er.testing.report(r, out)
    # dask arrays whose chunks line up: their chunks are the blocks
    d = erd.check_matmul(da.from_array(a, chunks=(16, 32)), da.from_array(b, chunks=(32, 20)),
                         da.from_array(out, chunks=(16, 20)), client=client)
    _same(d, one)
    # .npy files: paths and np.load's memory mappings (bf16 files hold raw patterns: the format named)
    np.save(tmp_path / "a.npy", a)
    np.save(tmp_path / "b.npy", b)
    np.save(tmp_path / "out.npy", out)
    pa, pb, po = (str(tmp_path / f) for f in ("a.npy", "b.npy", "out.npy"))
    _same(erd.check_matmul((pa, "bfloat16"), (pb, "bfloat16"), po, client=client, chunks=(16, 16)), one)
    np.save(tmp_path / "outf.npy", np.asfortranarray(out))  # a Fortran-ordered file
    _same(erd.check_matmul(a, b, str(tmp_path / "outf.npy"), client=client, chunks=(16, 16)), one)
    ma = np.load(pa, mmap_mode="r")
    mo = np.load(po, mmap_mode="r")
    _same(erd.check_matmul((ma, "bf16"), b, mo, client=client, chunks=(12, 40)), one)
    # dask's local scheduler in this process (client=False: even while a default client exists)
    _same(erd.check_matmul(a, b, out, client=False, chunks=(16, 16)), one)


def test_zarr_input(client, rng, tmp_path):
    zarr = pytest.importorskip("zarr", reason="zarr is not installed")
    a, b = _bf16(rng, 32, 24, 20)
    r = er.matmul(a, b, dtype="float32")
    out = _plant(r.rounded, [(1, 2)], rng)
    z = zarr.open(str(tmp_path / "out.zarr"), mode="w", shape=out.shape, chunks=(16, 10), dtype=np.float32)
    z[:] = out
    _same(erd.check_matmul(a, b, z, client=client), er.testing.report(r, out))


def test_bad_input_is_named_and_nothing_is_reported(client, rng, tmp_path):
    a, b = _bf16(rng, 32, 16, 24)
    out = np.zeros((32, 24), np.float32)
    with pytest.raises(ValueError, match="inner dimensions differ"):
        erd.check_matmul(a, b[:8], out, client=client)
    with pytest.raises(ValueError, match="^out has shape"):
        erd.check_matmul(a, b, out[:, :20], client=client)
    with pytest.raises(TypeError, match="^out: the output has dtype float16"):
        erd.check_matmul(a, b, out.astype(np.float16), dtype="float32", client=client)
    with pytest.raises(ValueError, match="^a_scale is float8_e8m0fnu and b_scale is float8_e4m3fn"):
        erd.check_matmul(a.astype(E4M3), b.astype(E4M3), out, scales=(np.ones((32, 1), E8M0),
                         np.ones((1, 24), E4M3)), block=16, client=client)
    with pytest.raises(ValueError, match="do not line up"):
        erd.check_matmul(da.from_array(a, chunks=(8, 16)), b, da.from_array(out, chunks=(16, 12)), client=client)
    with pytest.raises(ValueError, match="^chunks:"):
        erd.check_matmul(a, b, out, client=client, chunks=(-1, "x"))
    with pytest.raises(FileNotFoundError, match="^b: .*nothing.npy: no such file"):
        erd.check_matmul(a, str(tmp_path / "nothing.npy"), out, client=client)
    with pytest.raises(TypeError, match="raw 2-byte patterns"):
        np.save(tmp_path / "a.npy", a)
        erd.check_matmul(str(tmp_path / "a.npy"), b, out, client=client)
    # a bad pattern in one block: the library's message with the element's index in the whole input,
    # the input and the block named (either of the band's two blocks may fail first)
    f6 = np.zeros((32, 16), np.uint8)
    f6[20, 3] = 0xFF
    with pytest.raises(ValueError, match=r"^a: element \[20, 3\] = 0xff is not a f6E2M3FN .*rows 16:32, columns (0:12|12:24)\)$"):
        erd.check_matmul((da.from_array(f6, chunks=(16, 16)), "float6_e2m3fn"), (np.zeros((16, 24), np.uint8),
                         "float6_e2m3fn"), out, client=client, chunks=(16, 12))
    f6b = np.zeros((16, 24), np.uint8)
    f6b[5, 17] = 0xC0
    with pytest.raises(ValueError, match=r"^b: element \[5, 17\] = 0xc0 is not a f6E2M3FN .*columns 12:24\)$"):
        erd.check_matmul((np.zeros((32, 16), np.uint8), "float6_e2m3fn"), (f6b, "float6_e2m3fn"), out, client=client,
                         chunks=(16, 12))


def _clear_log(dask_worker):
    dask_worker.transfer_incoming_log.clear()


def _b_transfers(dask_worker):
    """How many times each block of B (keys named exactref-b-...) came to this worker."""
    seen = {}
    for e in dask_worker.transfer_incoming_log:
        for key in e.get("keys", {}):
            name = key[0] if isinstance(key, tuple) else key
            if str(name).startswith("exactref-b-"):
                seen[str(key)] = seen.get(str(key), 0) + 1
    return seen


def test_b_comes_to_each_worker_once_not_once_per_task(client, rng, monkeypatch):
    a, b = _bf16(rng, 96, 32, 40)
    r = er.matmul(a, b, dtype="float32")
    copies = []
    real = type(client).replicate

    def replicate(self, futures, **kw):
        out = real(self, futures, **kw)
        copies.append({str(k): len(v) for k, v in self.who_has(futures).items()})
        return out

    monkeypatch.setattr(type(client), "replicate", replicate)
    client.run(_clear_log)
    d = erd.check_matmul(a, b, r.rounded, client=client, chunks=(8, 20))  # 12 bands x 2 tiles = 24 tasks
    assert d["outside"] == 0 and d["elements"] == 96 * 40
    # B's two blocks were on both workers before the tasks ran ...
    assert len(copies) == 1 and len(copies[0]) == 2 and set(copies[0].values()) == {2}, copies
    # ... and no task fetched a block of B a second time
    for worker, seen in client.run(_b_transfers).items():
        assert all(v == 1 for v in seen.values()), (worker, seen)


def test_a_file_missing_on_the_workers_is_named(client, rng, tmp_path, monkeypatch):
    # a relative path: here it names a file, on the workers (another working directory) nothing
    a, b = _bf16(rng, 16, 8, 12)
    here, there = tmp_path / "here", tmp_path / "there"
    here.mkdir()
    there.mkdir()
    np.save(here / "out.npy", np.zeros((16, 12), np.float32))
    monkeypatch.chdir(here)
    old = client.run(os.getcwd)
    client.run(os.chdir, str(there))
    try:
        with pytest.raises(FileNotFoundError, match=r"^out: out.npy is missing on worker tcp://"):
            erd.check_matmul(a, b, "out.npy", client=client, chunks=(8, 6))
    finally:
        for addr, cwd in old.items():
            client.run(os.chdir, cwd, workers=[addr])


class _KillOnce:
    """An array whose first read of rows from row0 on kills the worker process that reads it (once: a
    marker file in the test's directory), in the middle of a check."""

    def __init__(self, x, marker, row0):
        self.x, self.marker, self.row0 = x, marker, row0
        self.shape, self.dtype, self.ndim = x.shape, x.dtype, x.ndim

    def __getitem__(self, key):
        rows = key[0] if isinstance(key, tuple) else key
        start = (rows.start or 0) if isinstance(rows, slice) else 0
        if start >= self.row0 and not os.path.exists(self.marker):
            from distributed import get_worker

            get_worker()  # only on a worker, never in the test's process
            with open(self.marker, "w") as f:
                f.write(str(os.getpid()))
            os.kill(os.getpid(), signal.SIGKILL)
        return self.x[key]


def test_a_worker_killed_mid_check_and_the_report_is_complete(client, rng, tmp_path):
    a, b = _bf16(rng, 64, 32, 48)
    r = er.matmul(a, b, dtype="float32")
    where = [(2, 2), (40, 41), (63, 0)]
    out = _plant(r.rounded, where, rng)
    marker = str(tmp_path / "killed")
    pids = set(client.run(os.getpid).values())
    killer = da.from_array(_KillOnce(out, marker, 32), chunks=(16, 16), asarray=True, lock=False)
    d = erd.check_matmul(a, b, killer, client=client, chunks=(16, 16))
    assert os.path.exists(marker), "no worker was killed"
    with open(marker) as f:
        assert int(f.read()) in pids
    _same(d, er.testing.report(r, out))
    assert d["outside_indices"] == sorted(where)
    client.wait_for_workers(2, timeout=60)


def test_a_worker_killed_from_outside_while_it_checks_a_block(client, rng):
    # SIGKILL to a worker process while the scheduler says it is running a block's check task
    import concurrent.futures
    import time

    a, b = _bf16(rng, 256, 384, 256)
    r = er.matmul(a, b, dtype="float32")
    where = [(7, 9), (130, 255), (255, 0)]
    out = _plant(r.rounded, where, rng)
    client.wait_for_workers(2, timeout=60)
    pids = client.run(os.getpid)
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        job = pool.submit(erd.check_matmul, a, b, out, client=client, chunks=(16, 32))  # 128 tasks
        killed = None
        deadline = time.monotonic() + 60
        while killed is None and not job.done() and time.monotonic() < deadline:
            for worker, keys in client.processing().items():
                if any("_check_block" in str(k) for k in keys) and worker in pids:
                    os.kill(pids[worker], signal.SIGKILL)
                    killed = worker
                    break
            time.sleep(0.005)
        d = job.result(timeout=300)
    assert killed is not None, "the check ended before a worker could be killed"
    _same(d, er.testing.report(r, out))
    assert d["outside_indices"] == sorted(where)
    client.wait_for_workers(2, timeout=60)
    assert killed not in client.run(os.getpid) or client.run(os.getpid)[killed] != pids[killed]

@pytest.mark.parametrize("m,k,n", [(0, 4, 3), (3, 0, 2), (3, 4, 0), (1, 1, 1)])
def test_empty_and_tiny_products(m, k, n):
    # the local scheduler (no cluster needed): the same report, vacuity flags included
    a = np.ones((m, k), np.float32)
    b = np.full((k, n), 0.5, np.float32)
    out = a @ b
    _same(erd.check_matmul(a, b, out, client=False), er.testing.report(er.matmul(a, b), out))


def test_progress_bars(client, rng, capsys):
    # Dask's own progress: distributed.progress with the client, dask.diagnostics.ProgressBar without
    a, b = _bf16(rng, 24, 16, 20)
    r = er.matmul(a, b, dtype="float32")
    one = er.testing.report(r, r.rounded)
    _same(erd.check_matmul(a, b, r.rounded, client=client, chunks=(8, 10), progress=True), one)
    _same(erd.check_matmul(a, b, r.rounded, client=False, chunks=(8, 10), progress=True), one)
    assert "100% Completed" in capsys.readouterr().out


def test_the_merge_bindings_refuse_what_is_not_a_report(rng):
    # the extension's merge entry points check their buffers before the library reads them
    a, b = _bf16(rng, 16, 24, 12)
    r = er.matmul(a, b, dtype="float32")
    out = _plant(r.rounded, [(3, 4), (10, 1)], rng)
    bits = out.view(np.uint32)
    part = r._core.report_part(bits, -1, 0.0, 0, "normal")
    assert part[1] is not None and len(part[1]) == 16 * 12 and bytes(part[1]).count(0) == 2
    fmt = r._core.format
    with pytest.raises(ValueError, match="not a check report"):
        _core.report_merge(bytearray(10), part[0], None, None, 0)
    with pytest.raises(ValueError, match="not a check report"):
        _core.report_fields(b"abc", None, 0, False)
    with pytest.raises(ValueError, match="tile_covered: 1 bytes given, 192 needed"):
        _core.report_merge_columns(_core.report_merge_init((16, 12), fmt), part[0], 0, b"\x01", np.ones(192, np.uint8))
    with pytest.raises(ValueError, match="band_covered: 5 bytes given, 192 needed"):
        _core.report_merge_columns(_core.report_merge_init((16, 12), fmt), part[0], 0, part[1], np.ones(5, np.uint8))
    with pytest.raises(ValueError, match="the block has 192 elements, 0 of the output's 192 are left"):
        full = _core.report_merge_init((16, 12), fmt)
        _core.report_merge(full, part[0], part[1], None, 0)
        _core.report_merge(full, part[0], part[1], None, 0)
    with pytest.raises(ValueError, match="2 or 3 dimensions"):
        _core.report_merge_init((1, 2, 3, 4), fmt)
    with pytest.raises(ValueError, match="negative dimension"):
        _core.report_merge_init((1, -2), fmt)
    with pytest.raises(ValueError, match="cap of outside indices"):
        r._core.report(bits, -1, 0.0, 0, "normal", -1)
    # one merge of the whole block lists the outside elements as the one-pass report does
    whole = _core.report_merge_init((16, 12), fmt)
    idx = np.zeros(1000, np.int64)
    _core.report_merge(whole, part[0], part[1], idx, 1000)
    d = _core.report_fields(bytes(whole), idx, 1000, False)
    assert d["outside_indices"] == r._core.report(bits, -1, 0.0, 0, "normal")["outside_indices"] == [(3, 4), (10, 1)]
