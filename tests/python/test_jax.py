"""test_jax.py: JAX arrays through DLPack (runs where JAX is installed, skips cleanly elsewhere)."""
import numpy as np
import pytest

import exactref as er

jnp = pytest.importorskip("jax.numpy")


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16", "float8_e4m3fn", "float8_e5m2"])
def test_jax_arrays(dtype, rng):
    a64 = rng.standard_normal((6, 10))
    b64 = rng.standard_normal((10, 3))
    a = jnp.asarray(a64, dtype=jnp.float32).astype(getattr(jnp, dtype))
    b = jnp.asarray(b64, dtype=jnp.float32).astype(getattr(jnp, dtype))
    x = er.asarray(a)
    assert str(x.dtype) == dtype
    r = er.matmul(a, b, dtype="float32")
    ref = er.matmul(np.asarray(a), np.asarray(b), dtype="float32")
    np.testing.assert_array_equal(r.rounded.view(np.uint32), ref.rounded.view(np.uint32))
    out = jnp.matmul(a.astype(jnp.float32), b.astype(jnp.float32))
    er.testing.assert_matmul_valid(a, b, out, standard="any_order")
