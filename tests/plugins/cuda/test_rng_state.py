"""``CudaGenerator``'s state write (``ember_cuda/rng.py``), device-free on ``FakeGPUs``:
``ndarray.set`` is an asynchronous copy on the current stream (``cupy/_core/core.pyx``,
v14.2.0), so ``set_state`` waits for it on each device before a draw on another stream
can read the cuRAND states."""
from __future__ import annotations

import sys
import types

import numpy as np

from ember_cuda.rng import CudaGenerator

from ._fake_cupy import FakeGPUs


def test_set_state_waits_for_its_copies(monkeypatch):
    gpus = FakeGPUs(count=2)
    writes = []

    class Buffer:
        def __init__(self):
            self.a = np.zeros(4, np.uint8)

        def get(self):
            return self.a.copy()

        def set(self, a, stream=None):  # CuPy: copy_from_host_async on the current stream
            writes.append(gpus.current)
            self.a[...] = a
    gpus.random = types.SimpleNamespace(
        Generator=lambda bit_generator: types.SimpleNamespace(bit_generator=bit_generator),
        XORWOW=lambda seed: types.SimpleNamespace(_state=Buffer()))
    monkeypatch.setitem(sys.modules, "cupy", gpus)
    g = CudaGenerator(3)
    g._generator(0), g._generator(1)
    state = g.bit_generator.state
    gpus.log.clear()
    g.bit_generator.state = state
    assert writes == [0, 1]
    null = gpus.cuda.Stream.null.ptr  # each device's current stream (the null one here)
    assert gpus.log == [("synchronize stream", null)] * 2
