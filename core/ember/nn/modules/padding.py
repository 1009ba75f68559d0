"""Padding layers over ``F.pad``: constant (and zero), reflection, replication and
circular padding of the last 1, 2 or 3 dims.

``padding`` is an int (the same amount on every side) or a tuple ``(left, right)``,
``(left, right, top, bottom)`` or ``(left, right, top, bottom, front, back)``; an int is
stored expanded, as PyTorch does. Negative amounts crop. Constant padding takes any rank
with at least the padded dims; reflection and replication take batched or unbatched input
(``F.pad`` raises NotImplementedError otherwise); circular padding checks the rank itself
(ValueError), as PyTorch's ``CircularPadNd`` does. Reference: torch.nn.modules.padding.
"""
from __future__ import annotations

from .. import functional as F
from .module import Module

__all__ = ["ConstantPad1d", "ConstantPad2d", "ConstantPad3d", "ZeroPad1d", "ZeroPad2d",
           "ZeroPad3d", "ReflectionPad1d", "ReflectionPad2d", "ReflectionPad3d",
           "ReplicationPad1d", "ReplicationPad2d", "ReplicationPad3d", "CircularPad1d",
           "CircularPad2d", "CircularPad3d"]


def _expand(padding, k: int) -> tuple:
    """An int as 2k equal amounts; a sequence as a tuple (checked by F.pad when used)."""
    return tuple(padding) if isinstance(padding, (tuple, list)) else (padding,) * (2 * k)


class _PadNd(Module):
    _mode = "constant"
    _k = 1

    def __init__(self, padding):
        super().__init__()
        self.padding = _expand(padding, self._k)

    def forward(self, input):
        return F.pad(input, self.padding, self._mode)

    def extra_repr(self) -> str:
        return f"{self.padding}"


class _ConstantPadNd(_PadNd):
    def __init__(self, padding, value: float):
        super().__init__(padding)
        self.value = value

    def forward(self, input):
        return F.pad(input, self.padding, "constant", self.value)

    def extra_repr(self) -> str:
        return f"padding={self.padding}, value={self.value}"


class _ZeroPadNd(_ConstantPadNd):
    def __init__(self, padding):
        super().__init__(padding, 0.0)

    def extra_repr(self) -> str:
        return f"{self.padding}"


class _CircularPadNd(_PadNd):
    _mode = "circular"

    def forward(self, input):
        if input.ndim not in (self._k + 1, self._k + 2):
            raise ValueError(f"expected {self._k + 1}D or {self._k + 2}D input (got "
                             f"{input.ndim}D input)")
        return super().forward(input)


_DOC = """Pad the last {k} dim(s) of ``{shape}`` input{unbatched} {what}.

    Args:
        padding: an int (every side) or a {n}-tuple ``{names}``; negative amounts
            crop.{value}
    Shapes: each padded dim grows by its two amounts, e.g. {example}.
    Raises {raises}
    Reference: torch.nn.{name}.
    """

_SHAPES = {1: ("(N, C, W)", "(C, W)", "(left, right)", "W_out = W + left + right"),
           2: ("(N, C, H, W)", "(C, H, W)", "(left, right, top, bottom)",
               "H_out = H + top + bottom"),
           3: ("(N, C, D, H, W)", "(C, D, H, W)", "(left, right, top, bottom, front, back)",
               "D_out = D + front + back")}
_RAISES = {
    "constant": "ShapeError for more padded dims than the input has or a crop past a dim's "
                "size (F.pad).",
    "reflect": "NotImplementedError for another rank, ShapeError for padding >= the size "
               "of its dim (F.pad).",
    "replicate": "NotImplementedError for another rank, ShapeError for an empty padded dim "
                 "(F.pad).",
    "circular": "ValueError for another rank, ShapeError for padding > the size of its dim "
                "(F.pad).",
}
_WHAT = {"constant": "with a constant", "zero": "with zeros",
         "reflect": "with its reflection (the edge not repeated)",
         "replicate": "with copies of the edge",
         "circular": "circularly (with the values from the opposite end)"}


def _doc(name: str, kind: str, k: int) -> str:
    batched, unbatched, names, example = _SHAPES[k]
    mode = "constant" if kind == "zero" else kind
    any_rank = mode == "constant"
    return _DOC.format(
        what=_WHAT[kind], k=k, shape=f"(*, {batched[7:]}" if any_rank else batched,
        unbatched="" if any_rank else f" (or unbatched ``{unbatched}``)", n=2 * k,
        names=names, value="\n        value: the fill value." if kind == "constant" else "",
        example=example, raises=_RAISES[mode], name=name)


def _make(name: str, base, kind: str, k: int):
    cls = type(name, (base,), {"_k": k, "__doc__": _doc(name, kind, k),
                               "__module__": __name__})
    if base is _PadNd:
        cls._mode = kind
    return cls


ConstantPad1d = _make("ConstantPad1d", _ConstantPadNd, "constant", 1)
ConstantPad2d = _make("ConstantPad2d", _ConstantPadNd, "constant", 2)
ConstantPad3d = _make("ConstantPad3d", _ConstantPadNd, "constant", 3)
ZeroPad1d = _make("ZeroPad1d", _ZeroPadNd, "zero", 1)
ZeroPad2d = _make("ZeroPad2d", _ZeroPadNd, "zero", 2)
ZeroPad3d = _make("ZeroPad3d", _ZeroPadNd, "zero", 3)
ReflectionPad1d = _make("ReflectionPad1d", _PadNd, "reflect", 1)
ReflectionPad2d = _make("ReflectionPad2d", _PadNd, "reflect", 2)
ReflectionPad3d = _make("ReflectionPad3d", _PadNd, "reflect", 3)
ReplicationPad1d = _make("ReplicationPad1d", _PadNd, "replicate", 1)
ReplicationPad2d = _make("ReplicationPad2d", _PadNd, "replicate", 2)
ReplicationPad3d = _make("ReplicationPad3d", _PadNd, "replicate", 3)
CircularPad1d = _make("CircularPad1d", _CircularPadNd, "circular", 1)
CircularPad2d = _make("CircularPad2d", _CircularPadNd, "circular", 2)
CircularPad3d = _make("CircularPad3d", _CircularPadNd, "circular", 3)
