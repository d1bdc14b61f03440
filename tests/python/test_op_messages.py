# test_op_messages.py: the operations' refusals through Python name the operation, the input (position and
# role) and the format, say why an output format is refused, and name a head dimension of 0.
import numpy as np
import pytest

import exactref as er


def test_non_float_input_named():
    with pytest.raises(ValueError) as e:
        er.relu(np.arange(4, dtype=np.int8))
    m = str(e.value)
    assert "relu" in m and "input 0 (input)" in m and "i8" in m and "not a float format" in m
    assert "format 14" not in m


def test_output_format_refusals():
    x = np.ones(4, np.float32)
    with pytest.raises(ValueError, match="f8e4m3.*does not model"):
        er.relu(x, dtype="f8e4m3")
    with pytest.raises(ValueError, match="out=int32 is not a float format"):
        er.relu(x, dtype="i32")
    r = er.relu(x, dtype="f8E4M3FN")
    assert np.asarray(r.rounded).astype(np.float32).tolist() == [1.0, 1.0, 1.0, 1.0]


def test_attention_head_dimension_zero():
    q = np.zeros((1, 1, 2, 0), np.float32)
    with pytest.raises(ValueError, match="head dimension .* is 0"):
        er.scaled_dot_product_attention(q, q, q)
