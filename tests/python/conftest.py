"""conftest.py: the random seed (EXACTREF_SEED, printed) and an exact-rational reference for the tests."""
import os
from fractions import Fraction

import numpy as np
import pytest


@pytest.fixture
def rng(request):
    seed = int(os.environ.get("EXACTREF_SEED", "20261201"))
    print(f"{request.node.name}: EXACTREF_SEED={seed}")
    return np.random.default_rng(seed)


def exact_product(a, b, c=None):
    """The exact A B (+ C) of arrays of exactly representable values, as nested lists of Fractions."""
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    m, k = a.shape
    n = b.shape[1]
    fa = [[Fraction(float(a[i, p])) for p in range(k)] for i in range(m)]
    fb = [[Fraction(float(b[p, j])) for j in range(n)] for p in range(k)]
    out = []
    for i in range(m):
        row = []
        for j in range(n):
            s = sum((fa[i][p] * fb[p][j] for p in range(k)), Fraction(0))
            if c is not None:
                s += Fraction(float(np.asarray(c, dtype=np.float64)[i, j]))
            row.append(s)
        out.append(row)
    return out


def _neighbours(x, dtype):
    """The next values below and above x (finite, sign-magnitude formats: f32, f16, bf16, f64)."""
    dt = np.dtype(dtype)
    u = {2: np.uint16, 4: np.uint32, 8: np.uint64}[dt.itemsize]
    bits = int(np.array([x], dt).view(u)[0])
    sign = 1 << (8 * dt.itemsize - 1)
    mag = bits & (sign - 1)
    neg = bool(bits & sign) and mag != 0
    o = -mag if neg else mag

    def val(o):
        b = o if o >= 0 else (sign | -o)
        return float(np.array([b], u).view(dt)[0].astype(np.float64))

    return val(o - 1), val(o + 1)


def assert_correctly_rounded(rounded, exact):
    """Each element of rounded (f64, f32, f16 or bf16) is a nearest value of the format to the exact Fraction."""
    r = np.asarray(rounded)
    for i in range(r.shape[0]):
        for j in range(r.shape[1]):
            x = float(r[i, j].astype(np.float64))
            e = exact[i][j]
            assert np.isfinite(x), (i, j, x)
            d = abs(Fraction(x) - e)
            for nb in _neighbours(r[i, j], r.dtype):
                if np.isfinite(nb):
                    assert d <= abs(Fraction(nb) - e), f"element [{i}, {j}]: {x!r} is not nearest to {float(e)!r}"
