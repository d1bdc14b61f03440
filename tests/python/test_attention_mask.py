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


def test_command_reads_a_bool_mask(tmp_path):
    import subprocess
    exe = os.environ.get("EXACTREF_CLI") or os.path.join(os.path.dirname(__file__), "..", "..", "build", "exactref")
    if not os.access(exe, os.X_OK):
        pytest.skip("the exactref command is not built (%s)" % exe)
    q, k, v, mask = _inputs()
    r = er.scaled_dot_product_attention(q, k, v, attn_mask=mask)
    good = np.asarray(r["out"].rounded)
    unmasked = np.asarray(er.scaled_dot_product_attention(q, k, v)["out"].rounded)
    for n, x in (("q", q), ("k", k), ("v", v), ("m", mask)):
        np.save(tmp_path / f"{n}.npy", x)
    assert np.load(tmp_path / "m.npy").dtype == np.bool_
    np.save(tmp_path / "good.npy", good)
    np.save(tmp_path / "unmasked.npy", unmasked)
    base = [exe, "check", "--op", "attention"] + sum((["--input", str(tmp_path / f"{n}.npy")] for n in "qkvm"), [])
    ok = subprocess.run(base + ["--output", str(tmp_path / "good.npy")], capture_output=True, text=True,
                        cwd=tmp_path, timeout=120)
    assert ok.returncode == 0, ok.stdout + ok.stderr
    # the attention without the mask is caught: the bool file was read as the mask, not ignored
    no = subprocess.run(base + ["--output", str(tmp_path / "unmasked.npy")], capture_output=True, text=True,
                        cwd=tmp_path, timeout=120)
    assert no.returncode == 1 and "outside" in no.stdout, no.stdout + no.stderr
