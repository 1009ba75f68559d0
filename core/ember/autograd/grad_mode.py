"""Grad modes (``no_grad``, ``enable_grad``, ``set_grad_enabled``, ``inference_mode``).

They live in the bottom layer, ``ember/_base/grad_mode.py`` (which imports nothing from
ember, so reading the flag does not run this package); this module re-exports the same
objects under their historical path.
"""
from __future__ import annotations

from .._base.grad_mode import (STATE, enable_grad, inference_mode, is_grad_enabled,  # noqa: F401
                               is_inference_mode_enabled, no_grad, set_grad_enabled)
