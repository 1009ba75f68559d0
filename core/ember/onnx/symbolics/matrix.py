"""Symbolics of the triangles of matrices: ``tril`` and ``triu``.

Mapping (ONNX operators, https://onnx.ai/onnx/operators/): ``tril``/``triu`` -> ``Trilu``
(opset 14) with ``upper`` 0/1 and ember's ``diagonal`` as its ``k`` (the same convention:
k > 0 above the main diagonal); below opset 14 the export stops with "needs
opset_version >= 14" (the exporter's message for an op registered from a later opset).
Dtypes onnxruntime's Trilu lacks go through one it has, exactly (int8/16/32 and uint8
through int64, float16/bfloat16 through float32).

Reference: PyTorch's ``torch/onnx/symbolic_opset14.py`` (the mapping; own code).
"""
from __future__ import annotations

import numpy as np

from ... import types as _t
from ..registry import builtin

# the types onnxruntime's CPU Trilu runs; the others go through a wider one
_WIDER = {_t.int8: _t.int64, _t.int16: _t.int64, _t.int32: _t.int64, _t.uint8: _t.int64,
          _t.float16: _t.float32, _t.bfloat16: _t.float32}


def _trilu(g, x, diagonal, upper: int):
    if x.rank is not None and x.rank < 2:
        g.fail(f"{'triu' if upper else 'tril'}: expected a tensor of at least 2 dims "
               f"(*, M, N), got {x.rank}")
    work = _WIDER.get(x.dtype, x.dtype)
    k = g.constant(np.array(int(diagonal), dtype=np.int64))
    y = g.op("Trilu", g.cast(x, work), k, upper=upper, dtype=work)
    return g.cast(y, x.dtype)


@builtin("ember::tril", opset=14)
def tril(g, x, diagonal=0):
    """Trilu(upper=0, k=diagonal): entries with j - i <= diagonal kept."""
    return _trilu(g, x, diagonal, 0)


@builtin("ember::triu", opset=14)
def triu(g, x, diagonal=0):
    """Trilu(upper=1, k=diagonal): entries with j - i >= diagonal kept."""
    return _trilu(g, x, diagonal, 1)
