"""The PyTorch repr of a tensor: ``tensor([1., 2.], dtype=ember.float64)``, column for
column as ``torch._tensor_str`` prints it.

* **One format for all elements** (:class:`_Formatter`), chosen over the nonzero finite
  values: integers as they are; floats that are all whole as ``1.`` (*int mode*),
  otherwise fixed with ``precision`` decimals, or scientific (``1.0000e+08``) when the
  largest / smallest magnitude exceeds 1000, the largest exceeds 1e8 or the smallest is
  under 1e-4. Every element is right-aligned to the widest one; nan and inf are not
  measured (they take the width the others give).
* **Layout**: ``, `` between elements, rows broken to ``linewidth`` (80) with the element
  width fixed; sub-tensors separated by ``,`` and ``ndim - 1`` line breaks, indented one
  column per level.
* **Summary**: over ``threshold`` (1000) elements, each dim longer than ``2 * edgeitems``
  shows its first and last ``edgeitems`` (3) entries around ``...``; the format is then
  chosen over the shown elements only, and only those leave the device.
* **Suffixes**: ``device=`` off cpu, ``size=`` for an empty tensor that is not 1-D,
  ``dtype=`` unless it is the default float dtype, int64 or bool (an empty tensor shows
  any dtype but the default float one), then ``grad_fn=<...>`` or ``requires_grad=True``;
  a suffix that would pass ``linewidth`` goes to a new line.

The options live in :data:`OPTIONS` (torch's ``PRINT_OPTS``; ember has no public
``set_printoptions``). ember has no complex dtypes, so torch's real/imaginary formatter
pair is not needed.

Reference: ``torch/_tensor_str.py`` (``_Formatter``, ``_tensor_str``, ``_str_intern``).
"""
from __future__ import annotations

import dataclasses
import math

import numpy as np

from . import types as _t

__all__ = ["tensor_repr", "OPTIONS"]


@dataclasses.dataclass
class PrintOptions:
    """torch's ``PRINT_OPTS``: ``precision`` decimals (4); more than ``threshold`` (1000)
    elements are summarized, keeping ``edgeitems`` (3) at each end of a dim; rows break
    at ``linewidth`` (80) columns; ``sci_mode`` forces scientific notation on (True) or
    off (False), None lets the values choose."""

    precision: int = 4
    threshold: float = 1000
    edgeitems: int = 3
    linewidth: int = 80
    sci_mode: bool | None = None


OPTIONS = PrintOptions()


class _Formatter:
    """One string width and one notation for every element of ``values`` (a numpy array
    of the elements that will be shown), as torch's ``_Formatter``."""

    def __init__(self, values: np.ndarray, floating: bool, opts: PrintOptions):
        self.floating, self.precision = floating, opts.precision
        self.int_mode, self.sci_mode, self.width = True, False, 1
        flat = values.reshape(-1)
        if not floating:
            self.width = max([1] + [len(str(v)) for v in flat.tolist()])
            return
        shown = flat[np.isfinite(flat) & (flat != 0)]
        if shown.size == 0:
            return
        magnitude = np.abs(shown)
        low, high = float(magnitude.min()), float(magnitude.max())   # inf, not a warning
        self.int_mode = bool(np.all(shown == np.ceil(shown)))
        self.sci_mode = (high / low > 1000.0 or high > 1.0e8 or low < 1.0e-4) \
            if opts.sci_mode is None else bool(opts.sci_mode)
        p = self.precision
        if self.sci_mode:
            self.width = max(len(f"{v:.{p}e}") for v in shown.tolist())
        elif self.int_mode:   # + 1 for the "." that marks a float
            self.width = max(len(f"{v:.0f}") + 1 for v in shown.tolist())
        else:
            self.width = max(len(f"{v:.{p}f}") for v in shown.tolist())

    def format(self, value) -> str:
        """``value`` (a Python float, int or bool) right-aligned to the common width."""
        if not self.floating:
            text = str(value)
        elif self.sci_mode:
            text = f"{value:.{self.precision}e}"
        elif self.int_mode:
            text = f"{value:.0f}" + ("" if math.isinf(value) or math.isnan(value) else ".")
        else:
            text = f"{value:.{self.precision}f}"
        return text.rjust(self.width)


def tensor_repr(t) -> str:
    """``repr(t)``/``str(t)`` of an ember Tensor, as PyTorch prints it (the module
    docstring says how). Copies at most the shown elements to the host."""
    opts = OPTIONS
    prefix = "tensor("
    indent = len(prefix)
    st, shape = t.dtype, tuple(t._data.shape)   # concrete sizes, also while tracing
    suffixes = []
    if t.device.type != "cpu":
        suffixes.append(f"device='{t.device}'")
    if math.prod(shape) == 0:
        if len(shape) != 1:
            suffixes.append(f"size={shape}")
        if st is not _t.get_default_dtype():   # no element shows an empty tensor's kind
            suffixes.append(f"dtype={st!r}")
        body = "[]"
    else:
        if not opts.edgeitems:
            suffixes.append(f"size={shape}")
        if st not in (_t.get_default_dtype(), _t.int64, _t.bool_):
            suffixes.append(f"dtype={st!r}")
        body = _tensor_str(t, indent, opts)
    if t.grad_fn is not None:
        suffixes.append(f"grad_fn=<{type(t.grad_fn).__name__}>")
    elif t.requires_grad:
        suffixes.append("requires_grad=True")
    return _add_suffixes(prefix + body, suffixes, indent, opts.linewidth)


def _tensor_str(t, indent: int, opts: PrintOptions) -> str:
    """The bracketed elements of a non-empty tensor."""
    summarize = math.prod(t._data.shape) > opts.threshold
    edge = opts.edgeitems
    if summarize and not edge:
        return "[...]"
    backend = t._type.backend
    arr = t._data
    cut = []                       # per dim: is it shown as edge ... edge?
    for axis, n in enumerate(arr.shape):
        cut.append(summarize and n > 2 * edge)
        if cut[-1]:                # slice on the device: only shown elements travel
            head = (slice(None),) * axis
            arr = backend.xp.concatenate([arr[head + (slice(0, edge),)],
                                          arr[head + (slice(n - edge, n),)]], axis=axis)
    host = np.asarray(backend.to_numpy(arr))
    floating = t.dtype.is_floating_point
    if floating:
        host = host.astype(np.float64)   # exact for float16 / bfloat16 / float32
    fmt = _Formatter(host, floating, opts)
    return _nested_str(host, 0, indent, cut, edge, fmt, opts.linewidth)


def _nested_str(a: np.ndarray, axis: int, indent: int, cut: list, edge: int,
                fmt: _Formatter, linewidth: int) -> str:
    if a.ndim == 0:
        return fmt.format(a.item())
    if a.ndim == 1:
        data = [fmt.format(v) for v in a.tolist()]
        if cut[axis]:
            data[edge:edge] = [" ..."]
        per_line = max(1, (linewidth - indent) // (fmt.width + 2))
        lines = [", ".join(data[i:i + per_line]) for i in range(0, len(data), per_line)]
        return "[" + (",\n" + " " * (indent + 1)).join(lines) + "]"
    rows = [_nested_str(a[i], axis + 1, indent + 1, cut, edge, fmt, linewidth)
            for i in range(a.shape[0])]
    if cut[axis]:
        rows[edge:edge] = ["..."]
    return "[" + ("," + "\n" * (a.ndim - 1) + " " * (indent + 1)).join(rows) + "]"


def _add_suffixes(text: str, suffixes: list, indent: int, linewidth: int) -> str:
    """``text`` + ``, suffix`` for each, a suffix that would pass ``linewidth`` on a new
    line, and the closing parenthesis (torch's ``_add_suffixes``)."""
    parts = [text]
    # NOTE: torch's measure, off by one or two columns; kept so lines break where its do
    last_line_len = len(text) - text.rfind("\n") + 1
    for suffix in suffixes:
        if last_line_len + len(suffix) + 2 > linewidth:
            parts.append(",\n" + " " * indent + suffix)
            last_line_len = indent + len(suffix)
        else:
            parts.append(", " + suffix)
            last_line_len += len(suffix) + 2
    parts.append(")")
    return "".join(parts)
