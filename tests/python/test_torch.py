"""test_torch.py: torch tensors through DLPack (runs where torch is installed, skips cleanly elsewhere)."""
import numpy as np
import pytest

import exactref as er

torch = pytest.importorskip("torch")


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16", "float8_e4m3fn", "float8_e5m2"])
def test_torch_cpu_tensors(dtype):
    if not hasattr(torch, dtype):
        pytest.skip(f"this torch has no {dtype}")
    g = torch.Generator().manual_seed(5)
    a = torch.randn(8, 16, generator=g).to(getattr(torch, dtype))
    b = torch.randn(16, 4, generator=g).to(getattr(torch, dtype))
    r = er.matmul(a, b, dtype="float32")
    x = er.asarray(a)
    assert str(x.dtype) == dtype
    ref = er.matmul(np.asarray(a.float().numpy()).astype(x.dtype), np.asarray(b.float().numpy()).astype(x.dtype),
                    dtype="float32")
    np.testing.assert_array_equal(r.rounded.view(np.uint32), ref.rounded.view(np.uint32))
    out = (a.float() @ b.float())
    assert r.covers(out, standard="any_order").all()
    er.testing.assert_matmul_valid(a, b, out, standard="any_order")


def test_torch_transposed_view():
    a = torch.randn(16, 8).to(torch.bfloat16).t()
    b = torch.randn(16, 4).to(torch.bfloat16)
    r = er.matmul(a, b, dtype="float32")
    r2 = er.matmul(a.contiguous(), b, dtype="float32")
    np.testing.assert_array_equal(r.rounded, r2.rounded)
