"""test_leak.py: the same calls 10,000 times keep memory and reference counts flat."""
import gc
import sys

import numpy as np

import exactref as er


def _rss_kib():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4


def test_ten_thousand_calls_keep_memory_flat():
    a = np.arange(12, dtype=np.float32).reshape(3, 4) / 7
    b = np.arange(8, dtype=np.float32).reshape(4, 2) / 3
    out = (a @ b).astype(np.float32)
    refs = (sys.getrefcount(a), sys.getrefcount(b), sys.getrefcount(out))

    def once():
        r = er.matmul(a, b)
        r.covers(out)
        r.tolerance()
        r.finite_range(standard="any_order")
        r.transpose(0, 1).tolerance()
        r.normal()
        r2 = er.matmul(r, b.T.copy())
        r2.tolerance()
        g = r.backward(out)
        g.rounded.grad_A

    for _ in range(300):
        once()
    gc.collect()
    before = _rss_kib()
    for _ in range(10000):
        once()
    gc.collect()
    grown = _rss_kib() - before
    assert (sys.getrefcount(a), sys.getrefcount(b), sys.getrefcount(out)) == refs
    # a leak of one result per call would be tens of megabytes
    assert grown < 4096, f"RSS grew by {grown} KiB over 10,000 calls"


def test_errors_do_not_leak():
    a = np.ones((3, 2), np.float32)
    refs = sys.getrefcount(a)
    for _ in range(2000):
        try:
            er.matmul(a, a)
        except ValueError:
            pass
        try:
            er.matmul(er.asarray(np.full((2, 2), 0xFF, np.uint8), "float6_e2m3fn"), np.ones((2, 2), np.float32))
        except ValueError:
            pass
    assert sys.getrefcount(a) == refs


def test_results_are_freed_without_the_cycle_collector():
    # a big result must go when its last reference does, not at some later garbage collection
    import weakref

    a = np.ones((8, 8), np.float32)
    gc.collect()
    gc.disable()
    try:
        r = er.matmul(a, a)
        r.tolerance()
        v = r.transpose(0, 1)
        r2 = er.matmul(v, a)
        r2.tolerance(standard="any_order")
        g = r.backward(a)
        refs = [weakref.ref(x) for x in (r, v, r2, g, g["grad_A"])]
        del r, v, r2, g
        assert [w() for w in refs] == [None] * len(refs)
    finally:
        gc.enable()
