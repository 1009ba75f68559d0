"""Grad modes: whether ops record autograd history, per thread.

``no_grad``, ``enable_grad``, ``set_grad_enabled`` and ``inference_mode`` work as context
managers and as decorators, like ``torch.no_grad`` & co. The state is thread-local: a new thread
starts with grad mode on, whatever its parent thread had (as in PyTorch).

Generated op wrappers read ``STATE.enabled`` (one attribute lookup on a ``threading.local``)
only after they have seen an input that requires grad, so inference pays nothing for it.
Part of the bottom layer (``ember/_base``: no imports from ember); ``ember.autograd.grad_mode``
and ``ember`` re-export it.
"""
from __future__ import annotations

import functools
import threading


class _State(threading.local):
    enabled = True     # class attributes: the defaults every new thread sees
    inference = False


STATE = _State()


def is_grad_enabled() -> bool:
    """Whether ops record history for autograd in this thread (``torch.is_grad_enabled``)."""
    return STATE.enabled


def is_inference_mode_enabled() -> bool:
    """Whether this thread is inside ``inference_mode()`` (``torch.is_inference_mode_enabled``)."""
    return STATE.inference


class _GradMode:
    """Base of the grad-mode context managers; also usable as a function decorator."""

    _mode: bool

    def __enter__(self):
        self._prev = STATE.enabled
        STATE.enabled = self._mode
        return self

    def __exit__(self, *exc) -> None:
        STATE.enabled = self._prev

    def __call__(self, fn):
        mode = self._mode

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            prev = STATE.enabled
            STATE.enabled = mode
            try:
                return fn(*args, **kwargs)
            finally:
                STATE.enabled = prev
        return wrapper


class no_grad(_GradMode):  # noqa: N801 - PyTorch's name
    """Disable gradient recording: ``with ember.no_grad(): ...`` or ``@ember.no_grad()``.

    Results of ops inside have ``requires_grad=False``. Follows ``torch.no_grad``.
    """

    _mode = False

    def __init__(self):
        pass


class enable_grad(_GradMode):  # noqa: N801 - PyTorch's name
    """Enable gradient recording inside a ``no_grad`` block (``torch.enable_grad``)."""

    _mode = True

    def __init__(self):
        pass


class set_grad_enabled(_GradMode):  # noqa: N801 - PyTorch's name
    """Set grad mode to ``mode``. Takes effect at once (so it also works as a plain call,
    ``ember.set_grad_enabled(False)``) and is restored when used as a context manager.

    Raises TypeError if ``mode`` is not a bool. Follows ``torch.set_grad_enabled``.
    """

    def __init__(self, mode: bool):
        if not isinstance(mode, bool):
            raise TypeError(f"set_grad_enabled(): expected a bool, got {type(mode).__name__}")
        self._mode = mode
        self._prev = STATE.enabled
        STATE.enabled = mode

    def __enter__(self):
        return self  # already set in __init__; __exit__ restores the mode before it

    def __call__(self, fn):
        STATE.enabled = self._prev  # used as a decorator: undo the immediate effect
        return super().__call__(fn)


class inference_mode:  # noqa: N801 - PyTorch's name
    """Inference mode: ``with ember.inference_mode(): ...``, ``@ember.inference_mode()`` or
    ``@ember.inference_mode``.

    ``mode=True`` turns grad mode off and ``is_inference_mode_enabled()`` on; ``mode=False``
    turns grad mode on and inference mode off (PyTorch's ``InferenceMode(false)``). Both
    are restored on exit. Follows ``torch.inference_mode``.

    Departure from PyTorch: ember has no separate *inference tensors*. Results made inside
    are ordinary tensors with ``requires_grad=False``, exactly as under ``no_grad``, so
    PyTorch's later errors for using them in autograd ("Inference tensors cannot be saved
    for backward") do not arise, and an ``enable_grad()`` block nested inside records
    history again. PyTorch's speed-up (no version counters, no view tracking) has no
    counterpart worth its cost here: ember's ops already skip autograd work when no input
    requires grad.
    """

    def __new__(cls, mode=True):
        if callable(mode) and not isinstance(mode, bool):  # @inference_mode, no call
            return cls()(mode)
        return super().__new__(cls)

    def __init__(self, mode=True):
        self._mode = bool(mode)

    def __enter__(self):
        self._prev = STATE.enabled, STATE.inference
        STATE.enabled, STATE.inference = not self._mode, self._mode
        return self

    def __exit__(self, *exc) -> None:
        STATE.enabled, STATE.inference = self._prev

    def __call__(self, fn):
        mode = self._mode

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            prev = STATE.enabled, STATE.inference
            STATE.enabled, STATE.inference = not mode, mode
            try:
                return fn(*args, **kwargs)
            finally:
                STATE.enabled, STATE.inference = prev
        return wrapper
