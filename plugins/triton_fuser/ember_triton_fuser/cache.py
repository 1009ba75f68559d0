"""The compile cache: generated source -> a Triton kernel, once per key per process.

The key is ``(canonical plan text, stride pattern, index width, device capability,
Triton version)``: the plan's text already holds the dtypes and ranks, and sizes are
runtime arguments, so a new batch size finds its kernel here. Triton keeps the binaries
it builds in its own disk cache (``~/.triton/cache``, ``TRITON_CACHE_DIR``), so a new
process compiles nothing it compiled before. Triton still specializes integer arguments
that equal 1 or are multiples of 16; that can build a second binary for one entry here,
at most once per class.

``EMBER_FUSION_DEBUG=1`` prints each generated kernel's source to stderr when it is first
built.

Reference: PyTorch's ``torch/csrc/jit/fuser/kernel_cache.cpp`` (a cache of fused kernels
keyed by the normalized graph) and Triton's ``JITFunction`` cache.
"""
from __future__ import annotations

import linecache
import os
import sys
import threading
from dataclasses import dataclass

import triton

from . import codegen, interpreter

__all__ = ["CacheStats", "get_kernel", "load_source", "stats", "clear"]

_lock = threading.Lock()
_kernels: dict = {}
_hits = 0
_misses = 0


@dataclass(frozen=True)
class CacheStats:
    """``entries`` kernels held; ``hits``/``misses`` lookups since the last ``clear``."""

    entries: int
    hits: int
    misses: int


def stats() -> CacheStats:
    """The cache's counters."""
    with _lock:
        return CacheStats(len(_kernels), _hits, _misses)


def clear() -> None:
    """Forget every kernel and reset the counters (tests)."""
    global _hits, _misses
    with _lock:
        _kernels.clear()
        _hits = _misses = 0


def load_source(text: str, name: str, interpret: bool):
    """Define kernel ``name`` from source ``text`` (which may start with its
    ``@triton.jit`` line) and return ``triton.jit`` of it, interpreted when ``interpret``.

    The undecorated source is registered with ``linecache`` under a made-up file name
    (Triton reads a kernel's source through ``inspect``) and run with the globals of
    ``interpreter.kernel_globals``.
    """
    if text.startswith("@triton.jit\n"):
        text = text[len("@triton.jit\n"):]
    filename = f"<ember-triton-fuser:{name}>"
    linecache.cache[filename] = (len(text), None, text.splitlines(keepends=True), filename)
    namespace = dict(interpreter.kernel_globals(interpret))
    exec(compile(text, filename, "exec"), namespace)  # noqa: S102 - our generated source
    return interpreter.jit(namespace[name], interpret)


def get_kernel(plan, pattern: tuple, wide: bool, capability, interpret: bool):
    """``(KernelSource, kernel)`` for ``plan`` under ``pattern``: from the cache, or
    generated, printed when ``EMBER_FUSION_DEBUG`` is set, and loaded."""
    global _hits, _misses
    key = (plan.canonical, pattern, wide, capability, triton.__version__, interpret)
    with _lock:
        found = _kernels.get(key)
        if found is not None:
            _hits += 1
            return found
        _misses += 1
    source = codegen.generate(plan, pattern, wide)
    if os.environ.get("EMBER_FUSION_DEBUG", "") not in ("", "0"):
        print(f"# ember-triton-fuser: kernel {source.name} for\n"
              + "".join(f"#   {line}\n" for line in plan.canonical.splitlines())
              + source.text, file=sys.stderr)
    entry = (source, load_source(source.text, source.name, interpret))
    with _lock:
        return _kernels.setdefault(key, entry)
