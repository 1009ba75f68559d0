"""``ember.testing.assert_close``: the assertion PyTorch's tests and users' ports call
(``torch.testing.assert_close``), on ember tensors.

Tensors (or numbers, or nested sequences and dicts of them) are close when their shapes,
and by default dtypes and devices, agree and every element satisfies
``|actual - expected| <= atol + rtol * |expected|``; infinities must be equal, NaN equals
NaN only with ``equal_nan=True``. Unset tolerances come from the dtype of ``expected``, as
PyTorch's defaults: float16 (1e-3, 1e-5), bfloat16 (1.6e-2, 1e-5), float32 (1.3e-6,
1e-5), float64 (1e-7, 1e-7), integers and bool exact. Reference:
torch.testing.assert_close (``torch/testing/_comparison.py``).
"""
from __future__ import annotations

import numpy as np

from . import types as _t
from .tensor import Tensor

__all__ = ["assert_close"]

_TOLERANCES = {_t.float16: (1e-3, 1e-5), _t.bfloat16: (1.6e-2, 1e-5),
               _t.float32: (1.3e-6, 1e-5), _t.float64: (1e-7, 1e-7)}


def assert_close(actual, expected, *, rtol=None, atol=None, equal_nan: bool = False,
                 check_device: bool = True, check_dtype: bool = True,
                 check_stride: bool = False, msg=None) -> None:
    """Raise AssertionError unless ``actual`` and ``expected`` are close (see the module
    docstring). ``rtol`` and ``atol`` go together: give both or neither (ValueError).
    ``msg``: a string replacing the message, or a callable taking it and returning one.
    Sequences and mappings are compared item by item, the path of a mismatch named.
    Raises TypeError for inputs that are neither tensors, numbers nor containers of them.
    """
    if (rtol is None) != (atol is None):
        raise ValueError(f"Both 'rtol' and 'atol' must be either specified or omitted, but "
                         f"got no {'rtol' if rtol is None else 'atol'}.")
    _compare(actual, expected, "", dict(rtol=rtol, atol=atol, equal_nan=equal_nan,
                                        check_device=check_device, check_dtype=check_dtype,
                                        check_stride=check_stride, msg=msg))


def _fail(text: str, path: str, opts) -> None:
    if path:
        text = f"{text}\n\nThe failure occurred for item {path}"
    msg = opts["msg"]
    raise AssertionError(msg(text) if callable(msg) else (msg if msg is not None else text))


def _compare(actual, expected, path: str, opts) -> None:
    if isinstance(expected, dict) or isinstance(actual, dict):
        if not (isinstance(actual, dict) and isinstance(expected, dict)) or \
                actual.keys() != expected.keys():
            _fail(f"The mappings differ: keys {sorted(map(str, getattr(actual, 'keys', list)()))}"
                  f" and {sorted(map(str, getattr(expected, 'keys', list)()))}", path, opts)
        for k in expected:
            _compare(actual[k], expected[k], f"{path}[{k!r}]", opts)
        return
    if isinstance(expected, (list, tuple)) or isinstance(actual, (list, tuple)):
        if not isinstance(actual, (list, tuple)) or not isinstance(expected, (list, tuple)) \
                or len(actual) != len(expected):
            _fail(f"The length of the sequences mismatch: {_len(actual)} != "
                  f"{_len(expected)}", path, opts)
        for i, (a, e) in enumerate(zip(actual, expected)):
            _compare(a, e, f"{path}[{i}]", opts)
        return
    _compare_tensors(_as_tensor(actual, "actual"), _as_tensor(expected, "expected"), path,
                     opts, scalars=not isinstance(expected, Tensor))


def _len(x):
    return len(x) if isinstance(x, (list, tuple)) else type(x).__name__


def _as_tensor(x, name: str) -> Tensor:
    if isinstance(x, Tensor):
        return x
    if isinstance(x, (bool, int, float, np.number, np.bool_, np.ndarray)):
        from .factories import tensor
        return tensor(x)
    raise TypeError(f"assert_close: {name} must be a Tensor, a number, or a sequence or "
                    f"mapping of them, got {type(x).__name__}")


def _compare_tensors(a: Tensor, e: Tensor, path: str, opts, scalars: bool) -> None:
    what = "Scalars" if scalars and a.ndim == 0 else "Tensor-likes"
    if a.shape != e.shape:
        _fail(f"The values for attribute 'shape' do not match: {a.shape} != {e.shape}.",
              path, opts)
    if opts["check_dtype"] and a.dtype is not e.dtype:
        _fail(f"The values for attribute 'dtype' do not match: {a.dtype} != {e.dtype}.",
              path, opts)
    if opts["check_device"] and a.device != e.device:
        _fail(f"The values for attribute 'device' do not match: {a.device} != {e.device}.",
              path, opts)
    if opts["check_stride"] and a.stride() != e.stride():
        _fail(f"The values for attribute 'stride()' do not match: {a.stride()} != "
              f"{e.stride()}.", path, opts)
    rtol, atol = opts["rtol"], opts["atol"]
    if rtol is None:
        rtol, atol = max(_TOLERANCES.get(a.dtype, (0.0, 0.0)), _TOLERANCES.get(e.dtype,
                                                                               (0.0, 0.0)))
    x = a.numpy(force=True).astype(np.float64)
    y = e.numpy(force=True).astype(np.float64)
    with np.errstate(invalid="ignore"):
        diff = np.abs(x - y)
        # infinities only match themselves (inf - -inf <= inf would pass the bound)
        ok = (x == y) | (np.isfinite(x) & np.isfinite(y) & (diff <= atol + rtol * np.abs(y)))
    if opts["equal_nan"]:
        ok |= np.isnan(x) & np.isnan(y)
    if ok.all():
        return
    bad = ~ok
    n, total = int(bad.sum()), ok.size
    diff = np.where(np.isnan(diff), np.inf, diff)
    with np.errstate(divide="ignore", invalid="ignore"):
        rel = np.where(bad, diff / np.abs(y), 0.0)
    at = np.unravel_index(int(np.argmax(np.where(bad, diff, -1))), ok.shape) if ok.ndim else ()
    at_rel = np.unravel_index(int(np.argmax(rel)), ok.shape) if ok.ndim else ()
    if total == 1:
        text = (f"{what} are not close!\n\nExpected {y.reshape(-1)[0]} but got "
                f"{x.reshape(-1)[0]}.\nAbsolute difference: {diff.reshape(-1)[0]} (up to "
                f"{atol} allowed)\nRelative difference: {rel.reshape(-1)[0]} (up to {rtol} "
                f"allowed)")
    else:
        text = (f"{what} are not close!\n\nMismatched elements: {n} / {total} "
                f"({100.0 * n / total:.1f}%)\nGreatest absolute difference: {diff[at]} at "
                f"index {tuple(int(i) for i in at)} (up to {atol} allowed)\nGreatest "
                f"relative difference: {rel[at_rel]} at index "
                f"{tuple(int(i) for i in at_rel)} (up to {rtol} allowed)")
    _fail(text, path, opts)
