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


def test_dlpack_export_and_nd_routes_keep_memory_flat():
    # the DLPack capsules of bf16 results (consumed by numpy's reader of a plain uint16 view, or dropped
    # unconsumed) free their buffer exports; N-D operands and a broadcast bias keep nothing
    import ml_dtypes

    a = (np.arange(2 * 3 * 4 * 8, dtype=np.float32).reshape(2, 3, 4, 8) / 7).astype(ml_dtypes.bfloat16)
    b = (np.arange(8 * 5, dtype=np.float32).reshape(8, 5) / 3).astype(ml_dtypes.bfloat16)
    bias = np.arange(5, dtype=np.float32)
    refs = (sys.getrefcount(a), sys.getrefcount(b), sys.getrefcount(bias))

    def once():
        r = er.mma(a, b, bias, dtype="bfloat16")
        cap = r.rounded.__dlpack__(max_version=(1, 0))  # unconsumed: the capsule frees it
        del cap
        x = r.rounded
        owner = x
        while isinstance(owner, np.ndarray) and owner.base is not None:
            owner = owner.base  # what numpy's views keep alive: the object that owns the memory
        base_refs = sys.getrefcount(owner)
        cap = x.__dlpack__(max_version=(1, 0))
        assert sys.getrefcount(owner) > base_refs  # the unconsumed export holds the memory's owner
        del cap
        assert sys.getrefcount(owner) == base_refs  # and lets it go with the capsule
        r.tolerance()
        r.covers(r.rounded)

    for _ in range(300):
        once()
    gc.collect()
    before = _rss_kib()
    for _ in range(5000):
        once()
    gc.collect()
    grown = _rss_kib() - before
    assert (sys.getrefcount(a), sys.getrefcount(b), sys.getrefcount(bias)) == refs
    assert grown < 4096, f"RSS grew by {grown} KiB over 5,000 calls"


def test_a_consumed_export_keeps_the_memory_until_the_consumer_lets_go():
    torch = __import__("pytest").importorskip("torch")
    import weakref

    import ml_dtypes

    a = np.ones((4, 4), ml_dtypes.bfloat16)
    r = er.matmul(a, a)
    t = torch.from_dlpack(r.rounded)
    w = weakref.ref(r)
    del r
    gc.collect()
    assert w() is None  # the result went; the tensor still holds the answer's memory through the export
    junk = [np.full((4, 4), 7.0, np.float32) for _ in range(100)]  # reuse of freed memory would show
    assert (t.float() == 4.0).all(), t
    del t, junk
    gc.collect()


def test_scaled_products_keep_memory_and_the_bias_flat():
    # the scaled product's bias is held by a memoryview for the result's life: released with it, and on errors
    a = np.arange(12, dtype=np.float32).reshape(3, 4) / 8
    b = np.arange(8, dtype=np.float32).reshape(4, 2) / 4
    bias = np.array([0.5, -0.25], np.float32)
    sa, sb = np.float32(2), np.array([0.5, 4], np.float32)
    refs = (sys.getrefcount(a), sys.getrefcount(bias), sys.getrefcount(sb))

    def once():
        r = er.scaled_mm(a, b, sa, sb, bias=bias, out_dtype="float32")
        r.covers(r.rounded)
        r.tolerance(standard="scaled:bk=4,order=before")
        try:
            er.scaled_mm(a, b, sa, sb, bias=bias, alpha=0.1)  # refused by the library after the bias is taken
        except ValueError:
            pass

    for _ in range(300):
        once()
    gc.collect()
    before = _rss_kib()
    for _ in range(5000):
        once()
    gc.collect()
    grown = _rss_kib() - before
    # a view of the bias kept alive by a leaked memoryview would hold a reference to it
    assert (sys.getrefcount(a), sys.getrefcount(bias), sys.getrefcount(sb)) == refs
    assert grown < 4096, f"RSS grew by {grown} KiB over 5,000 calls"
