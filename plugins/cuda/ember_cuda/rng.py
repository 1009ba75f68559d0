"""The cuda backend's random generator: CuPy's ``Generator`` behind the part of
``numpy.random.Generator``'s interface that ember uses.

``ember.random.Generator`` makes one backend generator per seed (``Backend.make_rng``)
and calls ``random``, ``standard_normal`` and ``integers`` on it (the factories),
``permutation`` (samplers) and reads or writes ``bit_generator.state``
(``get_state``/``set_state``). A CuPy bit generator keeps its state in memory of the
device it was created on and refuses to run elsewhere, so ``CudaGenerator`` holds one
``cupy.random.Generator`` over cuRAND XORWOW per device, each seeded with the same seed
(as ``torch.cuda.manual_seed_all`` does), and draws from the current device's.

Departures: streams differ from numpy's and PyTorch's (different bit generators), the
distributions match. ``permutation(n)`` is the argsort of ``n`` uniform float64 draws
(CuPy's Generator has no permutation). The state is a snapshot of each device's cuRAND
state buffer (``XORWOW._state``, a CuPy internal) of 8 x 256 x (multiprocessor count)
states of ``sizeof(curandStateXORWOW)`` = 48 bytes (``_cuRANDGenerator.__init__`` in
``cupy/random/_bit_generator.pyx``, CuPy >= 13.1; the struct in CUDA's
``curand_kernel.h``): 98,304 bytes a multiprocessor, about 13 MB on an H200 (132 SMs),
10.6 MB on an A100 (108). CuPy 13.0.0 multiplied by the attribute's enum value (16)
instead of the count: 1.5 MB on every GPU. ``set_state`` writes with ``ndarray.set``, an
asynchronous copy on the current stream, and waits for it before returning.

Reference: CuPy "Random sampling" (``cupy.random.Generator``, ``XORWOW``); cuRAND device
API.
"""
from __future__ import annotations

import numpy as np

__all__ = ["CudaGenerator"]


class _BitGeneratorState:
    """``generator.bit_generator``: its ``state`` snapshots every device's stream."""

    def __init__(self, owner: "CudaGenerator"):
        self._owner = owner

    @property
    def state(self) -> dict:
        """``{"seed": int, "devices": {index: numpy uint8 copy of the cuRAND state}}``."""
        return {"seed": self._owner.seed,
                "devices": {d: _state_buffer(g).get() for d, g in
                            self._owner._generators.items()}}

    @state.setter
    def state(self, value: dict) -> None:
        import cupy
        owner = self._owner
        owner.seed = value["seed"]
        owner._generators.clear()
        for d, buf in value["devices"].items():
            with cupy.cuda.Device(d):
                _state_buffer(owner._generator(d)).set(np.asarray(buf))
                # NOTE: ndarray.set is copy_from_host_async on the current stream
                # (cupy/_core/core.pyx, v14.2.0): a draw on another stream must see it
                cupy.cuda.get_current_stream().synchronize()


def _state_buffer(generator):
    try:
        return generator.bit_generator._state
    except AttributeError:
        raise NotImplementedError("get_state/set_state of a cuda Generator read CuPy's "
                                  "cuRAND state buffer (XORWOW._state), which this CuPy "
                                  "version does not have; reseed with manual_seed "
                                  "instead") from None


class CudaGenerator:
    """Draws on the current CUDA device; ``CudaGenerator(seed)`` is ``Backend.make_rng``.

    Methods follow ``numpy.random.Generator``: ``random(size, dtype)``,
    ``standard_normal(size, dtype)``, ``integers(low, high, size, dtype)``,
    ``permutation(n)``; they return CuPy arrays.
    """

    def __init__(self, seed: int):
        self.seed = seed
        self._generators: dict = {}
        self.bit_generator = _BitGeneratorState(self)

    def _generator(self, device: int | None = None):
        import cupy
        d = cupy.cuda.runtime.getDevice() if device is None else device
        g = self._generators.get(d)
        if g is None:
            with cupy.cuda.Device(d):
                g = cupy.random.Generator(cupy.random.XORWOW(self.seed))
            self._generators[d] = g
        return g

    def random(self, size=None, dtype=np.float64):
        """Uniform floats in [0, 1) (float32 draws for ``dtype`` float32)."""
        return self._generator().random(size, dtype=dtype)

    def standard_normal(self, size=None, dtype=np.float64):
        return self._generator().standard_normal(size, dtype=dtype)

    def integers(self, low, high=None, size=None, dtype=np.int64):
        """Integers in [low, high) (``[0, low)`` when ``high`` is None)."""
        return self._generator().integers(low, high, size=size, dtype=dtype)

    def permutation(self, n: int):
        """A uniformly random permutation of ``range(n)`` as an int64 CuPy array."""
        import cupy
        return cupy.argsort(self.random(n)).astype(cupy.int64, copy=False)
