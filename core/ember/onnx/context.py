"""What a symbolic function builds with: :class:`OnnxValue` and :class:`GraphContext`.

A symbolic receives ``g``, a GraphContext bound to the IR node being exported, and writes
ONNX nodes through it::

    def addmm(g, bias, a, b, beta, alpha):          # ember::addmm
        mm = g.op("MatMul", a, b)
        return g.op("Add", g.op("Mul", mm, g.scalar(alpha, like=mm)),
                    g.op("Mul", bias, g.scalar(beta, like=bias)))

``g.op`` takes ONNX values (and None for an omitted optional input) and attributes as
keywords; ``g.constant``/``g.scalar``/``g.ints`` make constants; ``g.out(i)`` says what
the IR knows of output ``i`` (dtype, sizes, which dims follow a dynamic axis);
``g.dynamic(i)`` says which elements of constant input ``i`` follow a dynamic axis (a
symbolic that reads it takes charge of them; an unread one that varies stops the export,
since it would be baked in).

Reference: the ``GraphContext`` of ``torch.onnx`` (``g.op``), and the ONNX operator
specifications (https://onnx.ai/onnx/operators/).
"""
from __future__ import annotations

import itertools
from typing import Any, Optional, Sequence

import numpy as np
from onnx import helper, numpy_helper

from .. import types as _t
from .dtypes import to_onnx
from .errors import OnnxExportError

__all__ = ["OnnxValue", "SizeValue", "GraphContext", "takes_size_values", "traced_value"]


class OnnxValue:
    """A named value of the ONNX graph being built.

    Attributes:
        name: the ONNX value name.
        dtype: the ember ScalarType, or None when unknown (an intermediate value a
            symbolic made without saying its type).
        sizes: the sizes seen when tracing (``(N, C, H, W)``), or None.
        dynamic: per dim, whether it follows a dynamic axis (so ``sizes`` holds only
            the traced value there), or None.
    """

    __slots__ = ("name", "dtype", "sizes", "dynamic")

    def __init__(self, name: str, dtype=None, sizes: Optional[Sequence[int]] = None,
                 dynamic: Optional[Sequence[bool]] = None):
        self.name, self.dtype = name, dtype
        self.sizes = None if sizes is None else tuple(sizes)
        self.dynamic = None if dynamic is None else tuple(dynamic)

    @property
    def rank(self) -> Optional[int]:
        """The number of dims, or None if unknown."""
        return None if self.sizes is None else len(self.sizes)

    def is_dynamic(self, dim: int) -> bool:
        """Whether dim ``dim`` (negative counts from the end) follows a dynamic axis."""
        if not self.dynamic:
            return False
        return self.dynamic[dim]

    def __repr__(self) -> str:
        dt = self.dtype.name if self.dtype is not None else "?"
        return f"OnnxValue({self.name!r}, {dt}, {self.sizes})"


class SizeValue(OnnxValue):
    """A size computed at run time: a rank-0 int64 (or float64, for ``ember::mul.float``
    and kin) value of the ONNX graph, made by ``ember::size`` of a dim that follows a
    dynamic axis and by the int/float arithmetic on such sizes (``symbolics/sizes.py``).
    Sizes that follow no dynamic axis stay Python numbers.

    Attributes (besides OnnxValue's):
        traced: the Python number seen when tracing.
        source: ``(tensor name, dim)`` when the value is that dim's size as it is, else
            None (a Reshape copies such a dim with 0 instead of reading it).
    """

    __slots__ = ("traced", "source")

    def __init__(self, name: str, dtype, traced, source=None):
        super().__init__(name, dtype, (), ())
        self.traced, self.source = traced, source

    def __repr__(self) -> str:
        return f"SizeValue({self.name!r}, traced={self.traced!r}, source={self.source})"


def takes_size_values(fn):
    """Mark symbolic ``fn`` as taking :class:`SizeValue` s: in its size-list arguments
    (``view``'s shape, ``zeros``' size, ``index``'s slice bounds) and int arguments. An
    unmarked symbolic gets the traced numbers instead, with ``g.dynamic(i)`` saying which
    follow a dynamic axis (and the export stops if it does not read them)."""
    fn.takes_size_values = True
    return fn


def traced_value(v):
    """``v`` with every SizeValue (also in lists, tuples and slices) replaced by its traced
    number."""
    if isinstance(v, SizeValue):
        return v.traced
    if isinstance(v, (list, tuple)):
        return type(v)(traced_value(i) for i in v)
    if isinstance(v, slice):
        return slice(traced_value(v.start), traced_value(v.stop), traced_value(v.step))
    return v


def has_size_value(v) -> bool:
    """Whether ``v`` is or holds (in a list, tuple or slice) a SizeValue."""
    if isinstance(v, SizeValue):
        return True
    if isinstance(v, (list, tuple)):
        return any(has_size_value(i) for i in v)
    if isinstance(v, slice):
        return any(has_size_value(i) for i in (v.start, v.stop, v.step))
    return False


class GraphContext:
    """Builder handed to symbolic functions; one per export, rebound to each IR node.

    Attributes:
        opset: the export's ``opset_version`` (default domain).
        node: the IR node being exported (``node.kind``, ``node.source_location``).
    """

    def __init__(self, opset: int):
        self.opset = opset
        self.node = None
        self.nodes: list = []               # onnx NodeProtos, in order
        self.initializers: dict = {}        # name -> TensorProto
        self.domains: dict[str, int] = {}   # custom domains used -> their version
        self._names: set[str] = set()
        self._counter = itertools.count()
        self._outputs: tuple = ()           # OnnxValue templates of node's outputs
        self._variation: tuple = ()         # per input: its variation, or None
        self.acknowledged: set[int] = set()
        self._data_dependent: dict[int, set] = {}   # output -> dims sized by data

    # ---- naming ----

    def fresh_name(self, hint: str) -> str:
        """A value name not used yet, from ``hint`` (``Relu`` -> ``Relu_12``)."""
        base = "".join(ch if ch.isalnum() or ch in "._/" else "_" for ch in hint) or "v"
        while True:
            name = f"{base}_{next(self._counter)}"
            if name not in self._names:
                return self.claim(name)

    def claim(self, name: str) -> str:
        """Reserve ``name`` exactly (graph inputs, initializers, outputs). Raises
        OnnxExportError if it is taken."""
        if name in self._names:
            raise OnnxExportError(f"the ONNX value name {name!r} is used twice; give "
                                  f"distinct input_names/output_names")
        self._names.add(name)
        return name

    # ---- nodes ----

    def op(self, op_type: str, *inputs, outputs: int = 1, domain: str = "",
           dtype=None, **attrs):
        """Append ONNX node ``op_type`` and return its output value (a tuple of
        ``outputs`` values when ``outputs != 1``).

        Args:
            inputs: OnnxValues in the operator's input order; None for an omitted optional
                input.
            outputs: how many outputs the node has.
            domain: the operator set domain ("" is the default ONNX domain); a custom
                domain is declared in the model at version 1.
            dtype: the ember dtype of the output, or a tuple of one per output, if the
                symbolic knows it (later helpers such as :meth:`scalar` with ``like=``
                read it).
            attrs: ONNX attributes; None values are left out.
        Raises TypeError for an input that is not an OnnxValue or None.
        """
        inputs = list(inputs)
        while inputs and inputs[-1] is None:   # trailing omitted inputs are left out, not
            inputs.pop()                       # "" (onnxruntime crashes on some of those)
        names = []
        for i, v in enumerate(inputs):
            if v is None:
                names.append("")
            elif isinstance(v, OnnxValue):
                names.append(v.name)
            else:
                raise TypeError(f"g.op({op_type!r}): input {i} must be an OnnxValue or None, "
                                f"got {type(v).__name__}; make constants with g.constant, "
                                f"g.scalar or g.ints")
        dtypes = dtype if isinstance(dtype, (tuple, list)) else (dtype,) * outputs
        outs = [OnnxValue(self.fresh_name(op_type), dt) for dt in dtypes]
        attrs = {k: v for k, v in attrs.items() if v is not None}
        self.nodes.append(helper.make_node(op_type, names, [o.name for o in outs],
                                           name=self.fresh_name(f"/{op_type}"),
                                           domain=domain or None, **attrs))
        if domain:
            self.domains.setdefault(domain, 1)
        return outs[0] if outputs == 1 else tuple(outs)

    # ---- constants ----

    def constant(self, value: Any, dtype=None) -> OnnxValue:
        """A constant tensor: an array, a Tensor, or nested Python numbers, stored in
        ``dtype`` (an ember ScalarType; default: the array's own). Arrays over 1 KiB
        become initializers, smaller ones ``Constant`` nodes."""
        if hasattr(value, "numpy") and callable(value.numpy):
            value = value.detach().numpy() if hasattr(value, "detach") else value.numpy()
        arr = np.asarray(value if dtype is None else np.asarray(value).astype(dtype.numpy))
        et = _t.from_numpy_dtype(arr.dtype)
        name = self.fresh_name("const")
        tensor = numpy_helper.from_array(np.require(arr, requirements='C'), name)  # keeps 0-d
        if arr.nbytes > 1024:
            self.initializers[name] = tensor
        else:
            self.nodes.append(helper.make_node("Constant", [], [name],
                                               name=self.fresh_name("/Constant"),
                                               value=tensor))
        return OnnxValue(name, et, arr.shape, (False,) * arr.ndim)

    def scalar(self, value, like: Optional[OnnxValue] = None, dtype=None) -> OnnxValue:
        """A rank-0 constant in ``dtype``, or in ``like``'s dtype (float32 if unknown)."""
        dt = dtype or (like.dtype if like is not None and like.dtype is not None
                       else _t.float32)
        # as ember converts a wrapped number: 1000 in int8 wraps to -24, 1e300 in float32
        # is inf
        with np.errstate(over="ignore", invalid="ignore"):
            return self.constant(np.array(value).astype(dt.numpy))

    def ints(self, values: Sequence[int]) -> OnnxValue:
        """A 1-D int64 constant (shapes, axes, pads, starts/ends)."""
        return self.constant(np.asarray(list(values), dtype=np.int64).reshape(-1))

    def cast(self, x: OnnxValue, dtype) -> OnnxValue:
        """``x`` in ember dtype ``dtype`` (a ``Cast`` node, or ``x`` itself if it has
        that dtype already)."""
        if x.dtype is dtype:
            return x
        out = self.op("Cast", x, to=to_onnx(dtype), dtype=dtype)
        out.sizes, out.dynamic = x.sizes, x.dynamic
        return out

    def reduce(self, op_type: str, x: OnnxValue, axes: Optional[Sequence[int]],
               keepdims: bool, dtype=None) -> OnnxValue:
        """``Reduce*`` over ``axes`` (None: every axis), whichever form the opset wants:
        axes as an input (ReduceSum from 13, the others from 18) or as an attribute."""
        as_input = self.opset >= (13 if op_type == "ReduceSum" else 18)
        if axes is None:
            return self.op(op_type, x, keepdims=int(keepdims), dtype=dtype or x.dtype)
        axes = [int(a) for a in axes]
        if as_input:
            return self.op(op_type, x, self.ints(axes), keepdims=int(keepdims),
                           dtype=dtype or x.dtype)
        return self.op(op_type, x, axes=axes, keepdims=int(keepdims), dtype=dtype or x.dtype)

    def shape_of(self, x: OnnxValue, start: int = 0, end: Optional[int] = None) -> OnnxValue:
        """The 1-D int64 sizes of ``x``'s dims ``start:end``, read at run time (so they
        follow dynamic axes)."""
        if self.opset >= 15:
            return self.op("Shape", x, start=start, end=end, dtype=_t.int64)
        shape = self.op("Shape", x, dtype=_t.int64)
        if start == 0 and end is None:
            return shape
        stop = end if end is not None else np.iinfo(np.int64).max
        return self.op("Slice", shape, self.ints([start]), self.ints([stop]), dtype=_t.int64)

    # ---- what the IR knows ----

    def out(self, i: int = 0) -> OnnxValue:
        """What the IR knows of the node's output ``i`` (dtype, sizes, dynamic dims), as
        an OnnxValue template without a name."""
        return self._outputs[i]

    def dynamic(self, i: int):
        """Which parts of constant input ``i`` follow a dynamic axis: a tuple of bools for
        a list (per element), a bool for a scalar; None if none does. Reading it tells
        the exporter this symbolic handles them."""
        self.acknowledged.add(i)
        return self._variation[i] if i < len(self._variation) else None

    def data_dependent(self, i: int, dims) -> None:
        """Mark ``dims`` of output ``i`` as sized by the data (nonzero's K): later symbolics
        see them as dynamic, and a model output gets a ``dim_param`` there instead of the
        traced size."""
        self._data_dependent.setdefault(i, set()).update(int(d) for d in dims)

    def fail(self, message: str) -> None:
        """Stop the export with ``message`` and this node's source line."""
        raise OnnxExportError(f"{self.node.kind if self.node is not None else ''}: "
                              f"{message}", self.node)

    def _bind(self, node, outputs: tuple, variation: tuple) -> None:
        self.node, self._outputs, self._variation = node, outputs, variation
        self.acknowledged = set()
        self._data_dependent = {}

