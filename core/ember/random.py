"""Seeded random number generation: ``ember.manual_seed`` and ``ember.Generator``.

A Generator belongs to a device type and lazily creates one backend generator object (for
numpy, ``numpy.random.Generator`` over PCG64) per backend. ``manual_seed(s)`` reseeds the
default generator of every backend, so a seeded program repeats exactly on one backend.
Streams differ from PyTorch's (different bit generators); distributions match.

As ``torch.random``: ``seed``, ``initial_seed``, ``get_rng_state`` / ``set_rng_state``
(the cpu default generator's state as a uint8 Tensor) and ``fork_rng`` (a block whose
random draws leave the default generators as they were).
"""
from __future__ import annotations

import contextlib
import json as _json
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


def seed() -> int:
    """Seed every backend's default generator with one non-deterministic seed and return
    it (``torch.seed``)."""
    s = default_generator("cpu").seed()
    for b in _registry.all_backends():
        if b.name != "cpu":
            default_generator(b.name).manual_seed(s)
    return s


def initial_seed() -> int:
    """The seed of the cpu default generator (``torch.initial_seed``): the last one given to
    ``manual_seed`` or ``seed``, or the random one it started with."""
    return default_generator("cpu").initial_seed()


def get_rng_state():
    """The state of the cpu default generator as a 1-D uint8 Tensor, for ``set_rng_state``
    or ``ember.save`` (``torch.get_rng_state``).

    Departure from PyTorch: the bytes encode ember's generator (its seed and its bit
    generator's state, as JSON), so their length and content differ from PyTorch's 5056
    bytes of Mersenne Twister state; a PyTorch state does not load here."""
    from .factories import tensor
    from .types import uint8
    raw = _json.dumps(default_generator("cpu").get_state()).encode()
    return tensor(list(raw), dtype=uint8)


def set_rng_state(new_state) -> None:
    """Restore the cpu default generator from a ``get_rng_state()`` Tensor
    (``torch.set_rng_state``). Raises TypeError for anything but a uint8 Tensor, and
    RuntimeError for bytes that are not an ember generator state."""
    from .tensor import Tensor
    from .types import uint8
    if not isinstance(new_state, Tensor) or new_state.dtype != uint8:
        got = new_state.dtype if isinstance(new_state, Tensor) else type(new_state).__name__
        raise TypeError(f"set_rng_state(): expected a uint8 Tensor from get_rng_state(), got "
                        f"{got}")
    try:
        seed_, bit_state = _json.loads(bytes(new_state.cpu().numpy().tolist()))
        default_generator("cpu").set_state((seed_, bit_state))
    except (ValueError, TypeError, KeyError) as e:
        raise RuntimeError(f"set_rng_state(): the {new_state.numel()} bytes given are not an "
                           f"ember generator state ({e}); pass a Tensor from "
                           f"ember.get_rng_state()") from None


def get_states(device_types) -> dict:
    """``{device type: state}`` of the default generators of ``device_types`` (for
    ``fork_rng`` and ``ember.utils.checkpoint``); types without a random generator are
    left out."""
    states = {}
    for name in dict.fromkeys(device_types):
        if _registry.get_backend(name).make_rng is not None:
            states[name] = default_generator(name).get_state()
    return states


def set_states(states: dict) -> None:
    """Restore what ``get_states`` returned."""
    for name, state in states.items():
        default_generator(name).set_state(state)


@contextlib.contextmanager
def fork_rng(devices=None, enabled: bool = True, _caller: str = "fork_rng",
             _devices_kw: str = "devices", device_type=None):
    """A block whose random draws leave the default generators as they were: their states
    are saved on entry and restored on exit (``torch.random.fork_rng``).

    Args:
        devices: which devices of ``device_type`` to fork besides the cpu; ember keeps one
            default generator per device type, so any non-empty list (or None, all of
            them) forks that type's generator and ``[]`` forks the cpu one only.
        enabled: False makes it a no-op.
        device_type: the accelerator type (``"cuda"``); None: every registered backend.
    Raises NoBackendError for a ``device_type`` no plugin provides.
    """
    if not enabled:
        yield
        return
    types = ["cpu"]
    if devices is None or len(devices):
        types += [b.name for b in _registry.all_backends()] if device_type is None else \
            [Device(device_type).type]
    states = get_states(types)
    try:
        yield
    finally:
        set_states(states)
