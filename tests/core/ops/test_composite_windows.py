"""hann, hamming, blackman, bartlett and kaiser windows (ops/composite_windows.py) against
numpy's symmetric windows (np.hanning, ...): PyTorch's default periodic window of length
N is numpy's symmetric window of length N + 1 without its last point."""
from __future__ import annotations

import ember as E
import numpy as np
import pytest
from ember.errors import DtypeError
from helpers import assert_close

NUMPY = {"hann_window": np.hanning, "hamming_window": np.hamming,
         "blackman_window": np.blackman, "bartlett_window": np.bartlett,
         "kaiser_window": lambda m: np.kaiser(m, 12.0)}


@pytest.mark.parametrize("name", sorted(NUMPY))
@pytest.mark.parametrize("n", [0, 1, 2, 5, 8])
def test_windows_match_numpy(name, n):
    fn, ref = getattr(E, name), NUMPY[name]
    assert_close(fn(n, periodic=False, dtype=E.float64), ref(n), atol=1e-12)
    periodic = ref(n + 1)[:-1] if n > 1 else np.ones(n)
    assert_close(fn(n, dtype=E.float64), periodic, atol=1e-12)
    default = fn(n)
    assert default.dtype is E.get_default_dtype() and not default.requires_grad


def test_window_parameters():
    k = np.arange(6)
    want = 0.5 - 0.3 * np.cos(2 * np.pi * k / 5)
    assert_close(E.hamming_window(6, False, 0.5, 0.3, dtype=E.float64), want)
    assert_close(E.kaiser_window(7, False, 5.0, dtype=E.float64), np.kaiser(7, 5.0))
    assert_close(E.kaiser_window(6, beta=5.0, dtype=E.float64), np.kaiser(7, 5.0)[:-1])


def test_window_dtype_device_requires_grad_and_errors():
    w = E.hann_window(4, dtype=E.float16, requires_grad=True)
    assert w.dtype is E.float16 and w.requires_grad and w.is_leaf
    assert E.bartlett_window(3, device="cpu").device.type == "cpu"
    with pytest.raises(ValueError, match="non-negative window_length"):
        E.hann_window(-1)
    with pytest.raises(DtypeError, match="floating point dtype"):
        E.blackman_window(3, dtype=E.int64)
