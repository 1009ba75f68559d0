"""ember ScalarType <-> ONNX ``TensorProto.DataType`` (the element types of the ONNX IR,
``onnx/onnx.proto``)."""
from __future__ import annotations

from onnx import TensorProto

from .. import types as _t

__all__ = ["to_onnx", "from_onnx"]

_TO = {
    _t.float32: TensorProto.FLOAT, _t.float64: TensorProto.DOUBLE,
    _t.float16: TensorProto.FLOAT16, _t.bfloat16: TensorProto.BFLOAT16,
    _t.int64: TensorProto.INT64, _t.int32: TensorProto.INT32, _t.int16: TensorProto.INT16,
    _t.int8: TensorProto.INT8, _t.uint8: TensorProto.UINT8, _t.bool_: TensorProto.BOOL,
}
_FROM = {v: k for k, v in _TO.items()}


def to_onnx(dtype) -> int:
    """The ``TensorProto`` element type of an ember ScalarType.
    Raises TypeError for a dtype ONNX cannot hold."""
    try:
        return _TO[dtype]
    except KeyError:
        raise TypeError(f"ember.onnx: no ONNX element type for {dtype!r}; supported: "
                        f"{', '.join(d.name for d in _TO)}") from None


def from_onnx(elem_type: int):
    """The ember ScalarType of a ``TensorProto`` element type. Raises TypeError."""
    try:
        return _FROM[elem_type]
    except KeyError:
        raise TypeError(f"ember.onnx: ONNX element type {elem_type} has no ember "
                        f"dtype") from None
