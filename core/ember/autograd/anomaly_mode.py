"""Anomaly detection for the autograd engine (``torch.autograd.detect_anomaly``).

While it is on:

* every backward Node made records the Python stack of the forward call that made it
  (``record``, called where nodes are made: ``Node.__init__`` and the generated recorders
  that inline it), and the Node of the backward pass that was running when it was made
  (its *parent*, for nodes recorded by a ``create_graph`` backward);
* with ``check_nan``, the engine checks each gradient a node returns and raises
  ``RuntimeError("Function 'MulBackward0' returned nan values in its 0th output.")``;
* an error raised while the engine runs a node is preceded by a ``UserWarning`` giving
  that node's forward traceback (``report``), as PyTorch's ``print_stack`` does.

The state is one process-wide flag, as in PyTorch (``AnomalyMode`` is a static, not a
thread-local). NOTE: ``ENABLED`` is read once per node made and once per backward call:
with it off, anomaly mode costs one attribute test there and nothing else.
"""
from __future__ import annotations

import functools
import os
import sys
import traceback
import warnings
import weakref

ENABLED = False   # is_anomaly_enabled()
CHECK_NAN = True  # is_anomaly_check_nan_enabled()

_HERE = os.path.dirname(os.path.abspath(__file__))
_PACKAGE = os.path.dirname(_HERE)
# Node -> (StackSummary of its forward call, parent Node or None); weak keys, so a trace
# lives exactly as long as its node (a Node has __weakref__ but, generated, no __dict__)
_TRACES: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def is_anomaly_enabled() -> bool:
    """Whether anomaly detection is on (``torch.is_anomaly_enabled``)."""
    return ENABLED


def is_anomaly_check_nan_enabled() -> bool:
    """Whether anomaly mode checks backward results for NaN
    (``torch.is_anomaly_check_nan_enabled``; True unless set off)."""
    return CHECK_NAN


def set_anomaly_enabled(enabled: bool, check_nan: bool = True) -> None:
    """Turn anomaly detection on or off for the whole process (``torch.set_anomaly_enabled``).

    Raises TypeError unless both arguments are bools."""
    global ENABLED, CHECK_NAN
    for name, v in (("enabled", enabled), ("check_nan", check_nan)):
        if not isinstance(v, bool):
            raise TypeError(f"set_anomaly_enabled(): expected {name} to be a bool, got "
                            f"{type(v).__name__}")
    ENABLED, CHECK_NAN = enabled, check_nan


class _AnomalyMode:
    """Restores the previous mode on exit; as a decorator, sets the mode around each call
    (an extension: PyTorch's classes are context managers only)."""

    _mode: bool
    _check_nan: bool

    def __exit__(self, *exc) -> None:
        set_anomaly_enabled(*self._prev)

    def __call__(self, fn):
        mode, check_nan = self._mode, self._check_nan

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            prev = ENABLED, CHECK_NAN
            set_anomaly_enabled(mode, check_nan)
            try:
                return fn(*args, **kwargs)
            finally:
                set_anomaly_enabled(*prev)
        return wrapper


class detect_anomaly(_AnomalyMode):  # noqa: N801 - PyTorch's name
    """Anomaly detection on inside ``with ember.autograd.detect_anomaly(): ...`` (or around
    calls of a function it decorates); the previous mode comes back on exit.

    Nodes made inside remember their forward traceback; a backward error (including the
    NaN check with ``check_nan=True``, the default) is preceded by a UserWarning
    ``Error detected in MulBackward0. Traceback of forward call that caused the error:``.
    Warns on construction that this slows a program down (debugging only), as PyTorch.
    Follows ``torch.autograd.detect_anomaly``.
    """

    def __init__(self, check_nan: bool = True):
        if not isinstance(check_nan, bool):
            raise TypeError(f"detect_anomaly(): expected check_nan to be a bool, got "
                            f"{type(check_nan).__name__}")
        self._mode, self._check_nan = True, check_nan
        warnings.warn("Anomaly Detection has been enabled. This mode will increase the "
                      "runtime and should only be enabled for debugging.", stacklevel=2)

    def __enter__(self):
        self._prev = ENABLED, CHECK_NAN
        set_anomaly_enabled(True, self._check_nan)
        return self


class set_detect_anomaly(_AnomalyMode):  # noqa: N801 - PyTorch's name
    """Set anomaly detection to ``mode`` (with ``check_nan``) at once: a plain call keeps it
    set, a ``with`` block restores the previous mode on exit, and as a decorator it sets
    the mode around each call only. Raises TypeError for non-bool arguments. Follows
    ``torch.autograd.set_detect_anomaly``.
    """

    def __init__(self, mode: bool, check_nan: bool = True):
        self._prev = ENABLED, CHECK_NAN
        set_anomaly_enabled(mode, check_nan)
        self._mode, self._check_nan = mode, check_nan

    def __enter__(self):
        return self

    def __call__(self, fn):
        set_anomaly_enabled(*self._prev)  # a decorator: undo the immediate effect
        return super().__call__(fn)


# --- what the graph and the engine call while anomaly mode is on ------------------------

def record(node) -> None:
    """Remember the forward traceback of ``node`` (just made) and the node the engine was
    running when it was made, if any."""
    frame = sys._getframe(2)  # the caller of the frame that made the node
    while frame.f_code.co_name == "__init__" and frame.f_code.co_filename.startswith(_HERE):
        frame = frame.f_back  # a Node subclass's __init__ chain (Function.apply's ctx)
    parent, code = None, _engine_code()
    f = frame
    while f is not None:
        if f.f_code is code:
            parent = f.f_locals.get("node")
            break
        f = f.f_back
    # NOTE: source lines are read when a trace is printed, not for every node made
    stack = traceback.StackSummary.extract(traceback.walk_stack(frame), lookup_lines=False)
    stack.reverse()
    _TRACES[node] = (stack, parent)


def forward_trace(node) -> str | None:
    """The formatted forward traceback recorded for ``node``, or None if it was made with
    anomaly mode off."""
    hit = _TRACES.get(node)
    return None if hit is None else "".join(hit[0].format())


def check_nan(node, grads) -> None:
    """Raise RuntimeError if a gradient ``node`` returned holds NaN (PyTorch's message)."""
    from .grad_mode import no_grad
    with no_grad():
        for i, g in enumerate(grads):
            if g is not None and g.is_floating_point() and bool(g.isnan().any()):
                raise RuntimeError(f"Function '{node.name()}' returned nan values in its "
                                   f"{i}th output.")


def report(node, exc: BaseException) -> None:
    """Warn with the forward traceback of ``node``, whose backward raised ``exc`` (once per
    exception: an engine running inside a node's backward reports it first)."""
    if getattr(exc, "_ember_anomaly_reported", False):
        return
    try:
        exc._ember_anomaly_reported = True
    except AttributeError:  # an exception type with __slots__: report it every time
        pass
    name = node.name()
    trace = forward_trace(node)
    if trace is None:
        msg = (f"Error detected in {name}. No forward pass information available. Enable "
               f"detect anomaly during forward pass for more information.")
    else:
        msg = f"Error detected in {name}. Traceback of forward call that caused the error:\n" \
              f"{trace}"
        parent = _TRACES[node][1]
        while parent is not None:
            trace = forward_trace(parent)
            msg += f"\n\nPrevious calculation was induced by {parent.name()}. "
            if trace is None:
                msg += "No forward pass information available."
                break
            msg += f"Traceback of forward call that induced the previous calculation:\n{trace}"
            parent = _TRACES[parent][1]
    warnings.warn(msg, UserWarning, stacklevel=_user_stacklevel())


def _user_stacklevel() -> int:
    """The ``stacklevel`` of the first frame outside ember: the user's backward() call."""
    level, f = 1, sys._getframe(1)
    while f is not None and f.f_code.co_filename.startswith(_PACKAGE):
        level, f = level + 1, f.f_back
    return level


@functools.cache
def _engine_code():
    from .engine import run_backward
    return run_backward.__code__
