"""Seeded random number generation: ``ember.manual_seed`` and ``ember.Generator``.

A Generator belongs to a device type and lazily creates one backend generator object (for
numpy, ``numpy.random.Generator`` over PCG64) per backend. ``manual_seed(s)`` reseeds the
default generator of every backend, so a seeded program repeats exactly on one backend.
Streams differ from PyTorch's (different bit generators); distributions match.
"""
from __future__ import annotations

import random as _pyrandom

from .backends import registry as _registry
from .types import Device


class Generator:
    """A seeded source of random numbers for factories (``torch.Generator``).

    Args:
        device: the device whose backend draws the numbers (default ``"cpu"``).
    Methods: ``manual_seed(seed) -> self``, ``seed() -> int`` (reseed from entropy),
    ``initial_seed() -> int``, ``get_state()`` / ``set_state(state)``.
    """

    def __init__(self, device="cpu"):
        self.device = Device(device)
        self._seed = _pyrandom.SystemRandom().randrange(2**63)
        self._rng = None

    def manual_seed(self, seed: int) -> Generator:
        if not isinstance(seed, int) or isinstance(seed, bool):
            raise TypeError(f"manual_seed expected an int seed, got {type(seed).__name__}")
        self._seed = seed % 2**64
        self._rng = None
        return self

    def seed(self) -> int:
        self.manual_seed(_pyrandom.SystemRandom().randrange(2**63))
        return self._seed

    def initial_seed(self) -> int:
        return self._seed

    def _backend_rng(self, backend):
        if self._rng is None:
            if backend.make_rng is None:
                raise NotImplementedError(f"backend '{backend.name}' has no random generator")
            self._rng = backend.make_rng(self._seed)
        return self._rng

    def get_state(self):
        """An opaque snapshot of the generator; restore with ``set_state``."""
        backend = _registry.get_backend(self.device)
        rng = self._backend_rng(backend)
        return (self._seed, rng.bit_generator.state)

    def set_state(self, state) -> Generator:
        seed, bit_state = state
        backend = _registry.get_backend(self.device)
        self._seed = seed
        self._backend_rng(backend).bit_generator.state = bit_state
        return self


_default_generators: dict[str, Generator] = {}


def default_generator(device_type: str = "cpu") -> Generator:
    """The generator factories use for ``device_type`` when none is passed."""
    g = _default_generators.get(device_type)
    if g is None:
        g = _default_generators.setdefault(device_type, Generator(device_type))
    return g


def manual_seed(seed: int) -> Generator:
    """Seed every backend's default generator (``torch.manual_seed``); returns the cpu one."""
    for b in _registry.all_backends():
        default_generator(b.name).manual_seed(seed)
    return default_generator("cpu").manual_seed(seed)


def backend_rng(generator, backend):
    """The backend generator object to draw from (``generator`` may be None)."""
    g = generator if generator is not None else default_generator(backend.name)
    if not isinstance(g, Generator):
        raise TypeError(f"expected an ember.Generator, got {type(g).__name__}")
    if g.device.type != backend.name:  # its one backend generator serves one device type
        raise RuntimeError(f"expected a '{backend.name}' generator for a {backend.name} "
                           f"tensor, but got a '{g.device.type}' one; make it with "
                           f"ember.Generator('{backend.name}')")
    return g._backend_rng(backend)
