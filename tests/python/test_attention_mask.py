"""test_attention_mask.py: er.scaled_dot_product_attention takes boolean masks (numpy's and torch's) as torch reads them: True takes part."""
import os

import numpy as np
import pytest

import exactref as er

SEED = int(os.environ.get("EXACTREF_SEED", "5"))
print(f"test_attention_mask: seed {SEED} (EXACTREF_SEED)")


def _inputs():
    g = np.random.default_rng(SEED)
    q, k, v = (g.standard_normal((1, 2, 5, 8)).astype(np.float32) for _ in range(3))
    mask = g.random((1, 2, 5, 5)) < 0.6
    mask[..., 0] = True  # every query row keeps a key
    return q, k, v, mask


def test_numpy_bool_mask_is_the_uint8_mask():
    q, k, v, mask = _inputs()
    rb = er.scaled_dot_product_attention(q, k, v, attn_mask=mask)
    ru = er.scaled_dot_product_attention(q, k, v, attn_mask=mask.astype(np.uint8))
    rn = er.scaled_dot_product_attention(q, k, v)
    for name in ("out", "lse"):
        assert np.array_equal(np.asarray(rb[name].rounded).view(np.uint32), np.asarray(ru[name].rounded).view(np.uint32))
    # the mask takes effect: some outputs differ from the unmasked attention
    assert not np.array_equal(np.asarray(rb["out"].rounded), np.asarray(rn["out"].rounded))


def test_torch_bool_mask_covers_torch():
    torch = pytest.importorskip("torch")
    q, k, v, mask = _inputs()
    tq, tk, tv, tm = (torch.from_numpy(a) for a in (q, k, v, mask))
    r = er.scaled_dot_product_attention(tq, tk, tv, attn_mask=tm)
    out = torch.nn.functional.scaled_dot_product_attention(tq, tk, tv, attn_mask=tm).numpy()
    assert np.asarray(r["out"].covers(out)).all()
    # the same mask read the other way round (True masked out) is caught
    wrong = torch.nn.functional.scaled_dot_product_attention(tq, tk, tv, attn_mask=~tm | (torch.arange(5) == 0)).numpy()
    assert not np.asarray(r["out"].covers(wrong)).all()
