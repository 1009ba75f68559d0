"""``ember.cuda``: devices, streams, events and memory of the CUDA backend.

Mirrors ``torch.cuda``. The backend comes from the ``ember-cuda`` plugin (CuPy arrays);
this module is the front the core always has: without the plugin (or without a GPU)
``is_available()`` is False, ``device_count()`` is 0, and everything else raises
``NoBackendError`` saying what to install. With it, each call goes to the plugin's
runtime object (``Backend.runtime``), whose protocol is the list below::

    ember.cuda.is_available(); ember.cuda.device_count()
    s = ember.cuda.Stream()
    start, end = ember.cuda.Event(enable_timing=True), ember.cuda.Event(enable_timing=True)
    with ember.cuda.stream(s):
        start.record(); y = x @ x; end.record()
    end.synchronize(); start.elapsed_time(end)          # milliseconds
    ember.cuda.memory_allocated()                        # bytes held by tensors

Runtime protocol (``Backend.runtime`` of the ``cuda`` backend): ``Stream(device=None,
priority=0)``, ``Event(enable_timing=False, blocking=False, interprocess=False)``,
``current_stream(device)``, ``default_stream(device)``, ``stream(s)`` (a context
manager), ``synchronize(device)``, ``current_device()``, ``set_device(i)``,
``get_device_name(device)``, ``get_device_capability(device)``,
``memory_allocated(device)``, ``max_memory_allocated(device)``,
``memory_reserved(device)``, ``max_memory_reserved(device)``,
``reset_peak_memory_stats(device)``, ``empty_cache()``, ``memory_stats(device)``.
"""
from __future__ import annotations

from .errors import NoBackendError

# what the plugin's runtime provides (module __getattr__ below)
_FORWARDED = frozenset({
    "current_device", "set_device", "synchronize", "get_device_name",
    "get_device_capability", "Stream", "Event", "current_stream", "default_stream",
    "stream", "memory_allocated", "max_memory_allocated", "memory_reserved",
    "max_memory_reserved", "reset_peak_memory_stats", "empty_cache", "memory_stats"})

__all__ = ["is_available", "device_count", "manual_seed", "manual_seed_all"]


def _backend():
    from .backends import registry
    try:
        return registry.get_backend("cuda")
    except NoBackendError:
        return None


def _runtime():
    from .backends import registry
    backend = registry.get_backend("cuda")     # raises NoBackendError with the install hint
    if backend.runtime is None:
        raise NoBackendError("the 'cuda' backend registered no runtime (streams, events, "
                             "memory); it does not follow ember-cuda's protocol")
    return backend.runtime


def is_available() -> bool:
    """True when the ember-cuda plugin loaded (CuPy installed and at least one GPU).
    Never raises. Follows ``torch.cuda.is_available``."""
    return _backend() is not None


def device_count() -> int:
    """The number of visible CUDA devices; 0 without the plugin or a GPU."""
    backend = _backend()
    return backend.device_count if backend is not None else 0


def manual_seed(seed: int) -> None:
    """Seed the CUDA default generator (``torch.cuda.manual_seed``). ember keeps one
    generator per device type, so this seeds every GPU's draws. Without the plugin it does
    nothing, as PyTorch's does without CUDA, so seeding boilerplate runs anywhere. Raises
    TypeError for a seed that is not an int."""
    from .random import default_generator
    if not isinstance(seed, int) or isinstance(seed, bool):
        raise TypeError(f"manual_seed expected an int seed, got {type(seed).__name__}")
    if _backend() is not None:
        default_generator("cuda").manual_seed(seed)


def manual_seed_all(seed: int) -> None:
    """``manual_seed(seed)``: ember's one CUDA generator serves all GPUs
    (``torch.cuda.manual_seed_all``)."""
    manual_seed(seed)


def __getattr__(name: str):
    # the rest of the API lives in the plugin's runtime: ember.cuda.Stream is the
    # runtime's Stream class, ember.cuda.synchronize its function
    if name in _FORWARDED:
        return getattr(_runtime(), name)
    raise AttributeError(f"module 'ember.cuda' has no attribute {name!r}")
