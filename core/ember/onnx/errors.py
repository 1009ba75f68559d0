"""The errors of ``ember.onnx``. Both subclass ``RuntimeError``, as PyTorch's
``torch.onnx.errors.OnnxExporterError`` does."""
from __future__ import annotations

__all__ = ["OnnxExportError", "UnsupportedOperatorError"]


class OnnxExportError(RuntimeError):
    """The model cannot be exported as asked (a bad argument, a value that would be baked
    in although an axis is dynamic, a model the ONNX checker rejects). Nothing is written.

    ``node`` is the ember IR node being exported when the error arose, or None.
    """

    def __init__(self, message: str, node=None):
        super().__init__(message + where(node))
        self.node = node


class UnsupportedOperatorError(OnnxExportError):
    """An op has no symbolic function for the asked opset. ``op`` is its kind
    (``ember::cumprod``); the message names the node's source line and the way out
    (``ember.onnx.register_symbolic``)."""

    def __init__(self, op: str, message: str, node=None):
        super().__init__(message, node)
        self.op = op


def where(node) -> str:
    """`` (traced at file:line, in module scope)`` for a node, or ``""``."""
    if node is None:
        return ""
    parts = []
    if getattr(node, "source_location", None):
        parts.append(f"traced at {node.source_location}")
    if getattr(node, "scope", None):
        parts.append(f"in module '{node.scope}'")
    return f" ({', '.join(parts)})" if parts else ""
