"""Grad modes: whether ops record autograd history, per thread.

``no_grad``, ``enable_grad`` and ``set_grad_enabled`` work as context managers and as
decorators, exactly like ``torch.no_grad`` & co. The state is thread-local: a new thread
starts with grad mode on, whatever its parent thread had (as in PyTorch).

Generated op wrappers read ``STATE.enabled`` (one attribute lookup on a ``threading.local``)
only after they have seen an input that requires grad, so inference pays nothing for it.
"""
from __future__ import annotations

import functools
import threading


class _State(threading.local):
    enabled = True  # class attribute: the default every new thread sees


STATE = _State()


def is_grad_enabled() -> bool:
    """Whether ops record history for autograd in this thread (``torch.is_grad_enabled``)."""
    return STATE.enabled


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
