"""fa_emul.py: a numpy FlashAttention-2 forward loop (binary32 arithmetic) with switchable planted bugs, for the attention tests."""
import numpy as np

try:
    import ml_dtypes
except ImportError:  # pragma: no cover - the tests that use this module skip without it
    ml_dtypes = None

LN2 = np.float32(np.log(2.0))
LOG2E = np.log2(np.e)

# The planted bugs, each a switch (the tests check that every one of them is caught).
BUGS = (
    "no_rescale",         # the accumulator O is not rescaled when the running max grows
    "causal_off_by_one",  # the causal mask lets key i + 1 take part in row i
    "scale_twice",        # the scores scaled twice
    "no_scale",           # the scores not scaled at all
    "wrong_axis",         # softmax over the query axis instead of the key axis
    "skip_block",         # the second key block is skipped
    "stale_max",          # P of a block computed with the running max before the block
    "p_fp8",              # P rounded to e4m3 where the standard says the value format
    "lse_log2",           # the log-sum-exp off by log(2)
)


def to_fmt(x, name):
    """x (any float array) rounded to the format `name` (a numpy/ml_dtypes dtype name), as float32 values."""
    if name in ("float32", "f32"):
        return np.asarray(x, dtype=np.float32)
    return np.asarray(x, dtype=np.float32).astype(np.dtype(getattr(ml_dtypes, name, name))).astype(np.float32)


def _perturb_ulps(y, ulps, rng, ftz):
    """y (float64, the exact function value) rounded to float32 and moved by a random whole number of
    float32 ulps within +-floor(ulps): a library function within `ulps` of its exact value."""
    y32 = y.astype(np.float32)
    k = int(np.floor(ulps))
    if k > 0:
        steps = rng.integers(-k, k + 1, size=y32.shape)
        up = np.nextafter(y32, np.float32(np.inf))
        ulp = (up - y32).astype(np.float32)
        y32 = (y32.astype(np.float64) + steps * ulp.astype(np.float64)).astype(np.float32)
        y32 = np.maximum(y32, np.float32(0))
    if ftz:
        y32 = np.where(np.abs(y32) < np.float32(2.0**-126), np.float32(0), y32)
    return y32


def exp2_f32(x, ulps, rng, ftz=False):
    """exp2 of float32 arguments within `ulps` (random errors), as a device's ex2.approx might be."""
    return _perturb_ulps(np.exp2(x.astype(np.float64)), ulps, rng, ftz)


# The least normal exponent of the formats the loop reads (a zero's hardware exponent is max(this, -126)).
EMIN = {"float32": -126, "bfloat16": -126, "float16": -14, "float8_e4m3fn": -6, "float8_e5m2": -14}

# Tensor-core models (docs/accumulation-models.md): products per step k, fraction bits F kept at the step's
# largest exponent, the accumulator's fraction bits p (normalised toward zero).
MODELS = {"hopper": (16, 25, 23), "blackwell": (16, 25, 23), "ampere": (8, 24, 23), "hopper-fp8": (32, 13, 13)}


def _hw_exp(x, emin):
    """The model's exponent of each value: floor(log2 |x|) at least emin; a zero's max(emin, -126)."""
    ax = np.abs(np.asarray(x, np.float64))
    e = np.frexp(ax)[1] - 1
    return np.where(ax > 0, np.maximum(e, emin), max(emin, -126))


def mma_model(A, B, C, model, emin_a, emin_b):
    """D = C + A B by an NVIDIA tensor-core model (the published bit-accurate model the library bounds):
    the k-loop in steps of k products; per step every term (the exact products, with exponent e_a + e_b,
    and the accumulator, -126 when zero) is truncated toward zero at 2^(E - F), E the step's largest
    exponent, the truncated terms are summed exactly and the sum is truncated toward zero to p fraction
    bits (an f32 accumulator's range).  A (m, K), B (K, n), C (m, n): values; returns float32 (p = 23) or
    the e8m13 values (p = 13) as float32.  Every step is exact in binary64: the terms are multiples of
    2^(E - F) below 2^(E + 2), at most k + 1 of them."""
    k, F, p = MODELS[model]
    A = np.asarray(A, np.float64)
    B = np.asarray(B, np.float64)
    D = np.asarray(C, np.float64).copy()
    ea, eb = _hw_exp(A, emin_a), _hw_exp(B, emin_b)
    for p0 in range(0, A.shape[1], k):
        p1 = min(p0 + k, A.shape[1])
        prods = A[:, p0:p1, None] * B[None, p0:p1, :]
        E = np.maximum((ea[:, p0:p1, None] + eb[None, p0:p1, :]).max(axis=1), _hw_exp(D, -126))
        qt = np.ldexp(1.0, E - F)
        s = (np.trunc(prods / qt[:, None, :]) * qt[:, None, :]).sum(axis=1) + np.trunc(D / qt) * qt
        ae = np.abs(s)
        es = np.maximum(np.where(ae > 0, np.frexp(ae)[1] - 1, -126), -126)
        qn = np.ldexp(1.0, es - p)
        D = np.trunc(s / qn) * qn
    return D.astype(np.float32)


def flash_forward(q, k, v, *, scale=None, is_causal=False, enable_gqa=False, attn_mask=None, block=64,
                  p_format="bfloat16", out_format="bfloat16", exp_ulps=2.0, ftz=False, seed=0, bugs=(),
                  q_descale=1.0, k_descale=1.0, v_descale=1.0, mma=None, in_format="bfloat16", reverse=False):
    """FlashAttention-2's forward on (B, H, S, D) float32 arrays holding the inputs' values.

    Per query row, over key blocks of `block` keys: S = Q K^T (float32 matmul), a running max m, P = exp2(S
    scale log2e - m scale log2e) within exp_ulps, l = l alpha + rowsum(P) with alpha = exp2((m_old -
    m_new) scale log2e), O = O alpha + round(P, p_format) V; out = O / l (times v_descale) rounded to
    out_format, lse = m scale + log(l); fp8 inputs' q_descale and k_descale fold into the scale (as
    FlashAttention-3 does).  p_format None keeps P in float32.  mma: None (numpy's float32 matmul), or a
    name of MODELS: S = Q K^T and O = RN(O alpha) + P V through mma_model (in_format: the inputs' format,
    for the zeros' exponents).  reverse: the key blocks visited from the last (FlashAttention-2 and -3
    do).  Returns (out as float32 values, lse float32)."""
    bugs = set(bugs)
    for b in bugs:
        assert b in BUGS, b
    rng = np.random.default_rng(seed)
    q = np.asarray(q, np.float32)
    k = np.asarray(k, np.float32)
    v = np.asarray(v, np.float32)
    B, H, Sq, D = q.shape
    Hk, Sk, Dv = k.shape[1], k.shape[2], v.shape[3]
    if scale is None:
        scale = 1.0 / np.sqrt(D)
    sc = np.float32(np.float32(scale) * np.float32(q_descale) * np.float32(k_descale))
    if "scale_twice" in bugs:
        sc = np.float32(sc * sc)
    if "no_scale" in bugs:
        sc = np.float32(1.0)
    sc2 = np.float32(sc * np.float32(LOG2E))
    out = np.zeros((B, H, Sq, Dv), np.float32)
    lse = np.zeros((B, H, Sq), np.float32)
    group = H // Hk
    rows = np.arange(Sq)[:, None]
    for b in range(B):
        for h in range(H):
            hk = h // group if enable_gqa or Hk != H else h
            Q, K, V = q[b, h], k[b, hk], v[b, hk]
            if "wrong_axis" in bugs:
                # the textbook softmax, over the query axis
                S = (Q @ K.T) * sc
                S = S - S.max(axis=0, keepdims=True)
                P = np.exp(S.astype(np.float64)).astype(np.float32)
                P = P / P.sum(axis=0, keepdims=True)
                out[b, h] = P @ V
                lse[b, h] = np.log(np.exp(S.astype(np.float64)).sum(axis=1)).astype(np.float32)
                continue
            m = np.full(Sq, -np.inf, np.float32)
            l = np.zeros(Sq, np.float32)
            O = np.zeros((Sq, Dv), np.float32)
            starts = list(range(0, Sk, block))
            for bi, j0 in enumerate(starts[::-1] if reverse else starts):
                if "skip_block" in bugs and bi == 1:
                    continue
                j1 = min(j0 + block, Sk)
                if mma is None:
                    S = (Q @ K[j0:j1].T).astype(np.float32)
                else:
                    S = mma_model(Q, K[j0:j1].T, np.zeros((Sq, j1 - j0)), mma, EMIN[in_format], EMIN[in_format])
                cols = np.arange(j0, j1)[None, :]
                keep = np.ones(S.shape, bool)
                if is_causal:
                    keep &= cols <= rows + (1 if "causal_off_by_one" in bugs else 0)
                if attn_mask is not None:
                    mk = np.broadcast_to(attn_mask, (B, H, Sq, Sk))[b, h][:, j0:j1]
                    if mk.dtype == bool:
                        keep &= mk
                    else:
                        keep &= mk > -np.inf
                        S = (S + np.where(keep, mk, 0).astype(np.float32) / sc).astype(np.float32)
                S = np.where(keep, S, np.float32(-np.inf))
                m_new = np.maximum(m, S.max(axis=1))
                live = m_new > -np.inf
                m_use = m if "stale_max" in bugs else m_new
                m_use = np.where(np.isfinite(m_use), m_use, m_new)
                ms = np.where(live, m_use * sc2, np.float32(0)).astype(np.float32)
                arg = (S * sc2 - ms[:, None]).astype(np.float32)
                P = np.where(keep, exp2_f32(np.where(keep, arg, np.float32(0)), exp_ulps, rng, ftz), np.float32(0))
                with np.errstate(invalid="ignore"):  # -inf - -inf where no key has taken part yet
                    am = np.where(np.isfinite(m), ((m - m_new) * sc2).astype(np.float32), np.float32(0))
                alpha = np.where(np.isfinite(m), exp2_f32(am, exp_ulps, rng, ftz), np.float32(0))
                l = (l * alpha + P.sum(axis=1, dtype=np.float32)).astype(np.float32)
                pf = "float8_e4m3fn" if "p_fp8" in bugs else p_format
                Pq = P if pf is None else to_fmt(P, pf)
                if mma is not None:
                    C = O if "no_rescale" in bugs else (O * alpha[:, None]).astype(np.float32)
                    O = mma_model(Pq, V[j0:j1], C, mma, EMIN[pf or "float32"], EMIN[in_format])
                elif "no_rescale" in bugs:
                    O = (O + Pq @ V[j0:j1]).astype(np.float32)
                else:
                    O = (O * alpha[:, None] + Pq @ V[j0:j1]).astype(np.float32)
                m = m_new
            with np.errstate(invalid="ignore", divide="ignore"):
                out[b, h] = (O / l[:, None]).astype(np.float32)
                if v_descale != 1.0:
                    out[b, h] = (out[b, h] * np.float32(v_descale)).astype(np.float32)
                lse[b, h] = (m * sc + np.log(l)).astype(np.float32)
            if "lse_log2" in bugs:
                lse[b, h] = (lse[b, h] + LN2).astype(np.float32)
    return to_fmt(out, out_format), lse
