"""ONNX export of traced graphs: ``ember.onnx.export(model, example_inputs, path)``.

The model is traced (``ember.jit``), each IR node is mapped to ONNX by its symbolic
function (``ember/onnx/symbolics/``; plugins add their own through the
``ember_onnx_symbolics`` hook, users with :func:`register_symbolic`), and the result is
checked with ``onnx.checker`` before it is written. See ``docs/onnx.md``.

Needs the ``onnx`` package (``pip install "ember[onnx]"``); importing ``ember.onnx``
without it raises ImportError saying so.

Reference: ``torch.onnx`` (the TorchScript-based exporter).
"""
try:
    import onnx as _onnx  # noqa: F401
except ImportError as e:  # pragma: no cover - the message is the point
    raise ImportError("ember.onnx needs the onnx package: pip install \"ember[onnx]\" "
                      "(or pip install onnx)") from e

from .context import GraphContext, OnnxValue
from .errors import OnnxExportError, UnsupportedOperatorError
from .export import export
from .registry import MIN_OPSET, Symbolic, SymbolicHandle, register_symbolic, registered_ops

__all__ = ["export", "register_symbolic", "registered_ops", "Symbolic", "SymbolicHandle",
           "GraphContext", "OnnxValue", "OnnxExportError", "UnsupportedOperatorError",
           "MIN_OPSET"]
