"""``EMBER_DISTRIBUTED_DEBUG=DETAIL``: before each collective, the ranks all-gather what
they are about to do (the collective, the tensor's shape and dtype, the root rank and the
reduce op) and compare; on a mismatch every rank raises the same ``ValueError`` naming each
rank and what it called, instead of exchanging buffers of different sizes (a hang, a crash
or silent garbage). This costs two small collectives per call: a debug mode, as PyTorch's
``TORCH_DISTRIBUTED_DEBUG=DETAIL`` (whose collective fingerprints it follows).
``OFF`` (default) and ``INFO`` check nothing.
"""
from __future__ import annotations

import os

from .objects import host_all_gather_object

MODES = ("OFF", "INFO", "DETAIL")


class CollectiveMismatchError(RuntimeError, ValueError):
    """Ranks called different collectives, or the same one with different tensors."""


def enabled() -> bool:
    """True when ``EMBER_DISTRIBUTED_DEBUG`` is ``DETAIL`` (read on every call, cheap)."""
    mode = os.environ.get("EMBER_DISTRIBUTED_DEBUG", "OFF").upper()
    if mode not in MODES:
        raise ValueError(f"EMBER_DISTRIBUTED_DEBUG: expected one of {', '.join(MODES)}, got "
                         f"{mode!r}")
    return mode == "DETAIL"


def describe(fp: tuple) -> str:
    """``all_reduce(shape=(2, 3), dtype=float32, op=SUM)`` from a fingerprint."""
    what, shape, dtype, root, op = fp
    parts = [f"shape={shape}", f"dtype={dtype}"]
    if root is not None:
        parts.append(f"root={root}")
    if op is not None:
        parts.append(f"op={op}")
    return f"{what}({', '.join(parts)})"


def check(what: str, g, fp: tuple) -> None:
    """All-gather ``fp`` and raise ``CollectiveMismatchError`` on every rank when they
    differ (the message lists every rank's call)."""
    prints = host_all_gather_object(g, fp)
    if all(p == prints[0] for p in prints):
        return
    lines = "; ".join(f"rank {r}: {describe(p)}" for r, p in enumerate(prints))
    differ = [r for r, p in enumerate(prints) if p != prints[0]]
    raise CollectiveMismatchError(
        f"{what}: detected a mismatch between ranks (EMBER_DISTRIBUTED_DEBUG=DETAIL): "
        f"{lines}. Ranks {differ} differ from rank 0; every rank must call the same "
        f"collective with tensors of the same shape and dtype (and the same root and op)")
