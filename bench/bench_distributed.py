#!/usr/bin/env python3
"""bench_distributed.py: the check on a dask LocalCluster (exactref.distributed) against the one-process check.

One process: er.testing.report(er.matmul(A, B, dtype="float32"), out).  Distributed: the same report by
exactref.distributed.check_matmul on a LocalCluster of --workers worker processes (one thread each,
started before the timing), with the operands given as numpy arrays (shipped in the task graph) and
as .npy files (each worker reads its blocks through a memory mapping).  bf16 operands, the f32 output
numpy's product of them (not timed), standard normal, default blocks.  Best of --reps, interleaved.
Prints the throughput ratio (one-process time / distributed time), in wall time and in CPU time (this
process and every worker process, all threads: the steadier measure on a machine shared with other
work), checks that the reports are equal, and for each worker its peak resident memory and the bytes
it received from other workers during one check of the files (B's broadcast and any block moved);
data in the task graph (numpy inputs) comes through the scheduler and is not counted there.  Asserts
nothing about speed.

    python bench/bench_distributed.py [--sizes 1024,2048] [--reps 2] [--workers 2]
"""
import argparse
import os
import resource
import tempfile
import time

import ml_dtypes
import numpy as np

import exactref as er
from exactref import distributed as erd


def _peak_rss():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def _received(dask_worker):
    return int(sum(e.get("total", 0) for e in dask_worker.transfer_incoming_log))


def _same(x, y):
    for k in x:
        a, b = x[k], y[k]
        if isinstance(a, float) and isinstance(b, float) and np.isnan(a) and np.isnan(b):
            continue
        assert a == b, (k, a, b)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", default="1024,2048")
    ap.add_argument("--reps", type=int, default=2)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--seed", type=int, default=int(os.environ.get("EXACTREF_SEED", "34")))
    args = ap.parse_args()
    from distributed import Client, LocalCluster

    print(f"EXACTREF_SEED={args.seed}; {os.cpu_count()} cores; load average {os.getloadavg()[0]:.1f}")
    with tempfile.TemporaryDirectory(prefix="bench_distributed") as tmp:
        import dask

        with dask.config.set({"temporary-directory": tmp}):
            cluster = LocalCluster(n_workers=args.workers, threads_per_worker=1, processes=True,
                                   dashboard_address=":0", local_directory=tmp, host="127.0.0.1")
            client = Client(cluster)
            rng = np.random.default_rng(args.seed)
            print("| n | one process: wall s (CPU s) | distributed, numpy inputs: wall s (CPU s) | ratio wall (CPU) | "
                  "distributed, .npy files: wall s (CPU s) | ratio wall (CPU) | per worker: peak RSS MiB, "
                  "received per check MiB (files) |")
            print("|---|---|---|---|---|---|---|")
            for n in [int(s) for s in args.sizes.split(",")]:
                client.restart()  # fresh worker processes: their peak memory is this size's
                a = rng.standard_normal((n, n)).astype(ml_dtypes.bfloat16)
                b = rng.standard_normal((n, n)).astype(ml_dtypes.bfloat16)
                out = a.astype(np.float32) @ b.astype(np.float32)
                paths = [os.path.join(tmp, f"{x}{n}.npy") for x in "abo"]
                for p, x in zip(paths, (a, b, out)):
                    np.save(p, x)
                best = {}

                def timed(what, f):
                    # wall time, and CPU time of this process and of every worker process (all threads)
                    w0, c0, t0 = client.run(time.process_time), time.process_time(), time.perf_counter()
                    r = f()
                    t1, c1, w1 = time.perf_counter(), time.process_time(), client.run(time.process_time)
                    cpu = c1 - c0 + sum(w1[w] - w0[w] for w in w0 if w in w1)
                    old = best.get(what)
                    if old is None or t1 - t0 < old[0]:
                        best[what] = (t1 - t0, cpu)
                    return r

                got = {}
                for _ in range(args.reps):
                    one = timed("one", lambda: er.testing.report(er.matmul(a, b, dtype="float32"), out))
                    d2 = timed("numpy", lambda: erd.check_matmul(a, b, out, client=client))
                    g0 = client.run(_received)
                    d3 = timed("files", lambda: erd.check_matmul((paths[0], "bfloat16"), (paths[1], "bfloat16"),
                                                               paths[2], client=client))
                    g1 = client.run(_received)
                    got = {w: g1[w] - g0.get(w, 0) for w in g1}
                    _same(d2, one)
                    _same(d3, one)
                rss = client.run(_peak_rss)
                per = "; ".join(f"{rss[w] / 2**20:.0f}, {got.get(w, 0) / 2**20:.2f}" for w in sorted(rss))
                (w1, c1), (w2, c2), (w3, c3) = best["one"], best["numpy"], best["files"]
                print(f"| {n} | {w1:.3f} ({c1:.3f}) | {w2:.3f} ({c2:.3f}) | {w1 / w2:.2f} ({c1 / c2:.2f}) | "
                      f"{w3:.3f} ({c3:.3f}) | {w1 / w3:.2f} ({c1 / c3:.2f}) | {per} |", flush=True)
            client.close()
            cluster.close()
    print(f"load average after: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
