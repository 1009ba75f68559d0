"""``ember_cuda/rng.py``: the generator's per-device streams and state (device-free, on a
stand-in CuPy), and on a GPU the random factories through it: ranges, moments, seeding,
``get_state``/``set_state`` and dropout."""
from __future__ import annotations

import sys
import types

import numpy as np
import pytest

import ember as E
from ember_cuda.rng import CudaGenerator

from ._fake_cupy import FakeGPUs


def test_generator_state_round_trip_and_devices(monkeypatch):
    gpus = FakeGPUs()

    class Buffer:
        def __init__(self, seed):
            self.a = np.array([seed, 0], dtype=np.int64)

        def get(self):
            return self.a.copy()

        def set(self, a):
            self.a[...] = a

    class Generator:
        def __init__(self, bit_generator):
            self.bit_generator = bit_generator

        def random(self, size=None, dtype=np.float64):
            s = self.bit_generator._state.a
            s[1] += 1
            return np.random.default_rng(s.tolist()).random(size).astype(dtype)
    gpus.random = types.SimpleNamespace(
        Generator=Generator, XORWOW=lambda seed: types.SimpleNamespace(_state=Buffer(seed)))
    gpus.argsort, gpus.int64 = np.argsort, np.int64
    monkeypatch.setitem(sys.modules, "cupy", gpus)
    g = CudaGenerator(5)
    first = g.random(3)
    state = g.bit_generator.state
    again = g.random(3)
    g.bit_generator.state = state
    assert np.array_equal(g.random(3), again) and not np.array_equal(first, again)
    gpus.current = 1
    assert np.array_equal(g.random(3), first)  # device 1: its own stream, same seed
    assert sorted(g.permutation(6).tolist()) == list(range(6))
    assert sorted(g.bit_generator.state["devices"]) == [0, 1]



@pytest.mark.cuda
def test_random_factories():
    E.manual_seed(0)
    for dtype in (E.float16, E.float32, E.float64):
        u = E.rand(20000, dtype=dtype, device="cuda")
        n = E.randn(20000, dtype=dtype, device="cuda")
        assert u.device.type == "cuda" and u.dtype is dtype and n.dtype is dtype
        assert 0 <= u.min().item() and u.max().item() <= 1
        assert abs(u.float().mean().item() - 0.5) < 0.02
        assert abs(n.float().mean().item()) < 0.03 and abs(n.float().std().item() - 1) < 0.03
    k = E.randint(-3, 4, (20000,), device="cuda")
    assert k.dtype is E.int64 and k.min().item() == -3 and k.max().item() == 3
    E.manual_seed(7)
    a = E.rand(5, device="cuda")
    E.manual_seed(7)
    assert (a == E.rand(5, device="cuda")).all().item()
    g = E.Generator("cuda").manual_seed(1)
    state = g.get_state()
    first = E.randn(6, generator=g, device="cuda")
    g.set_state(state)
    assert (E.randn(6, generator=g, device="cuda") == first).all().item()
    keep = E.nn.functional.dropout(E.ones(10000, device="cuda"), 0.25)  # E.rand inside
    assert keep.device.type == "cuda" and abs((keep == 0).float().mean().item() - 0.25) < 0.02
