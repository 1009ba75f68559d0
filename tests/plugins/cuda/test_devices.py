"""The device guard of ``ember_cuda/devices.py`` (device-free, on ``_fake_cupy.FakeGPUs``):
a kernel runs on the device of its arrays, two devices raise DeviceMismatchError, copy_
brings its source over. On two real GPUs ``test_backend.py`` checks the same."""
from __future__ import annotations

import sys

import pytest

import ember as E
from ember.errors import DeviceMismatchError
from ember_cuda.devices import GuardedKernels, index_of

from ._fake_cupy import FakeGPUs


def test_guard_runs_kernels_on_their_device_and_refuses_two(monkeypatch):
    gpus = FakeGPUs()
    monkeypatch.setitem(sys.modules, "cupy", gpus)
    a0, a1 = gpus.ndarray(0), gpus.ndarray(1)
    table = GuardedKernels({"add": lambda a, b, alpha: gpus.current,
                            "cat": lambda arrays, dim: gpus.current,
                            "copy_": lambda dst, src, nb: (src.data.device_id, gpus.current)})
    assert table["add"](a1, a1, 1) == 1 and gpus.current == 0
    with pytest.raises(DeviceMismatchError, match=r"add\(\): expected all tensors on one "
                                                  r"device, but found tensors on cuda:0 and "
                                                  r"cuda:1; move them with \.to\('cuda:0'\)"):
        table["add"](a0, a1, 1)
    with pytest.raises(DeviceMismatchError, match=r"cat\(\)"):
        table["cat"]([a1, a0], 0)
    assert table["copy_"](a0, a1, False) == (0, 0)  # PyTorch copies across devices
    table.setdefault("_convolution", lambda x: gpus.current)
    assert table["_convolution"](a1) == 1



def test_index_of_names_the_device(monkeypatch):
    gpus = FakeGPUs()
    gpus.current = 1
    monkeypatch.setitem(sys.modules, "cupy", gpus)
    assert [index_of(d, 2) for d in (None, 0, "cuda", "cuda:0", E.Device("cuda", 1))] == \
        [1, 0, 1, 0, 1]
    with pytest.raises(ValueError, match=r"expected a cuda device such as 'cuda:0' or an int, "
                                         r"got 'cpu'"):
        index_of("cpu")
    with pytest.raises(ValueError, match=r"invalid CUDA device index 2: this machine has 2 "
                                         r"visible device\(s\), cuda:0 to cuda:1"):
        index_of("cuda:2", 2)
