"""``ember.testing.assert_close`` against torch.testing.assert_close's rules and messages
(recorded from torch 2.13), and the names a PyTorch port reaches for (issue 36):
``ember.device``, and ``ember.onnx`` / ``ember.train`` / ``ember.testing`` /
``ember.jit.passes`` without an explicit import."""
from __future__ import annotations

import math
import subprocess
import sys

import pytest

import ember as E


def test_close_tensors_pass_at_the_dtype_default_tolerances():
    E.testing.assert_close(E.ones(3), E.ones(3) + 1e-6)
    E.testing.assert_close(E.ones(3, dtype=E.float64), E.ones(3, dtype=E.float64) + 1e-8)
    E.testing.assert_close(E.ones(2, dtype=E.float16), E.ones(2, dtype=E.float16))
    E.testing.assert_close([E.ones(2), {"a": E.zeros(1)}], [E.ones(2), {"a": E.zeros(1)}])
    E.testing.assert_close(E.tensor([math.nan]), E.tensor([math.nan]), equal_nan=True)
    E.testing.assert_close(E.ones(3), E.ones(3) * 1.1, rtol=0.2, atol=0.0)


@pytest.mark.parametrize("actual, expected, kwargs, message", [
    (E.ones(4), E.tensor([1.0, 2.0, 1.0, 1.0]), {},
     r"Tensor-likes are not close!\n\nMismatched elements: 1 / 4 \(25.0%\)\nGreatest "
     r"absolute difference: 1.0 at index \(1,\) \(up to 1e-05 allowed\)"),
    (E.tensor(1.0), E.tensor(1.5), {}, r"Expected 1.5 but got 1.0"),
    (E.ones(3), E.ones(3, dtype=E.float64), {}, r"attribute 'dtype' do not match"),
    (E.ones(3), E.ones(2), {}, r"attribute 'shape' do not match"),
    (E.tensor([math.nan]), E.tensor([math.nan]), {}, r"not close"),
    (E.tensor([math.inf]), E.tensor([-math.inf]), {}, r"not close"),
    ([E.ones(1), E.ones(1)], [E.ones(1), E.zeros(1)], {}, r"failure occurred for item \[1\]"),
    (E.ones(2), E.zeros(2), {"msg": "custom"}, r"^custom$"),
])
def test_what_is_not_close_raises_torchs_message(actual, expected, kwargs, message):
    with pytest.raises(AssertionError, match=message):
        E.testing.assert_close(actual, expected, **kwargs)


def test_rtol_and_atol_go_together():
    with pytest.raises(ValueError, match="must be either specified or omitted"):
        E.testing.assert_close(E.ones(1), E.ones(1), rtol=0.1)


def test_the_names_a_port_needs_work_after_import_ember_alone():
    code = ("import ember as E; assert E.device('cpu') == E.Device('cpu'); "
            "E.onnx.export; E.train.digits; E.testing.assert_close; E.jit.passes.pipeline")
    subprocess.run([sys.executable, "-c", code], check=True)
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        E.nope  # noqa: B018
