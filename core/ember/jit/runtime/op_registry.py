"""What the JIT knows about each ``ember::<op>`` node kind: its schema and how to call it.

Every op of ``native_functions.yaml`` is a node kind: ``ember::add``, its in-place variant
``ember::add_``, an overload ``ember::max.dim``. A node's inputs are the op's arguments in
schema order, so running a node is calling the op's generated wrapper with those values,
keyword-only arguments by name (``alpha``) and a variadic list spread out (``view``'s
``size``). Ops written by hand in Python (``Tensor.to``, indexing) are registered here too,
under the names their ``derivatives.yaml`` entries use.

    info = op_info("ember::add")
    info.call(x, y, 1)                   # == ember.add(x, y, alpha=1)
    info.call_source("_f", ["a", "b", "c"])  # '_f(a, b, alpha=c)'

Reference: PyTorch's operator registry (``torch/csrc/jit/runtime/operator.h``), where each
node kind maps to a schema and an Operation.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Callable, Optional

__all__ = ["OpInfo", "op_info", "is_op_kind", "register_python_op", "UnknownOpError"]


class UnknownOpError(KeyError):
    """A node kind that names no registered op."""

    def __str__(self) -> str:
        return str(self.args[0])


@dataclass(frozen=True)
class OpInfo:
    """One callable node kind.

    Attributes:
        kind: ``ember::add``.
        schema: the FunctionSchema the node's inputs follow (``add_``'s for ``ember::add_``),
            or None for a hand-written Python op.
        fn: the generated wrapper (or the Python function), called with Tensors.
        nf: the NativeFunction (None for a Python op).
        inplace: whether the op writes its first input.
        composite: whether the op is built from other ops (``dispatch: composite``).
        kernel_name: the key of the backend kernel (``add``, ``max.dim``) or None.
    """

    kind: str
    schema: object
    fn: Callable
    nf: object = None
    inplace: bool = False
    composite: bool = False
    kernel_name: Optional[str] = None

    @property
    def keyword_names(self) -> tuple:
        """Names of the keyword-only arguments, in schema order."""
        if self.schema is None:
            return ()
        return tuple(a.name for a in self.schema.arguments if a.kwarg_only)

    @property
    def variadic(self) -> bool:
        """Whether the wrapper takes its trailing list spread out (``view(self, *size)``)."""
        if self.nf is None:
            return False
        from ...ops.codegen import is_variadic
        return is_variadic(self.nf.schema)

    def call_source(self, fn_expr: str, args: list) -> str:
        """Python source calling ``fn_expr`` with argument expressions ``args`` (one per
        schema argument, in order)."""
        if self.schema is None:
            return f"{fn_expr}({', '.join(args)})"
        parts = []
        variadic = self.variadic
        for a, src in zip(self.schema.arguments, args):
            if a.kwarg_only:
                parts.append(f"{a.name}={src}")
            elif variadic and a.type.is_list:
                parts.append(f"*{src}")
            else:
                parts.append(src)
        return f"{fn_expr}({', '.join(parts)})"

    def call(self, *args):
        """Run the op on ``args`` (one per schema argument, in order)."""
        if self.schema is None:
            return self.fn(*args)
        pos, kw = [], {}
        variadic = self.variadic
        for a, v in zip(self.schema.arguments, args):
            if a.kwarg_only:
                kw[a.name] = v
            elif variadic and a.type.is_list:
                pos.extend(v)
            else:
                pos.append(v)
        return self.fn(*pos, **kw)


_TABLE: dict[str, OpInfo] = {}


def _build() -> None:
    from ...ops import FUNCTIONS, codegen
    for nf in FUNCTIONS:
        comp = nf.dispatch == "composite"
        kind = "ember::" + nf.kernel_name
        _TABLE[kind] = OpInfo(kind, nf.schema, codegen.NAMESPACE[codegen.wrapper_name(nf)],
                              nf, nf.schema.is_inplace, comp, nf.kernel_name)
        if nf.inplace_schema is not None:
            k = "ember::" + nf.inplace_schema.qualified_name
            _TABLE[k] = OpInfo(k, nf.inplace_schema,
                               codegen.NAMESPACE[codegen.wrapper_name(nf, inplace=True)],
                               nf, True, comp, nf.kernel_name)
    _register_handwritten()


def register_python_op(kind: str, fn: Callable, inplace: bool = False,
                       schema: Optional[str] = None) -> None:
    """Make ``kind`` runnable by calling ``fn(*inputs)`` (for ops written in Python);
    ``schema`` (PyTorch's syntax, ``"size(Tensor self, int dim) -> int"``) gives its
    argument and return types. Raises ``ember.ops.schema.SchemaError`` for a bad schema."""
    parsed = None
    if schema is not None:
        from ...ops.schema import parse_schema
        parsed = parse_schema(schema)
    _TABLE[kind] = OpInfo(kind, parsed, fn, None, inplace)


def _register_handwritten() -> None:
    from ... import _indexing

    def to_copy(x, dtype, device):
        return x.to(dtype=dtype, device=device)

    def index(x, indices):
        indices = _indexing.kernel_index(indices)
        return _indexing.index_normalized(x, indices, _indexing.basic_index(indices))

    def index_put_(x, indices, values, accumulate):
        _indexing.index_put_normalized(x, indices, values, accumulate)
        return x

    register_python_op("ember::_to_copy", to_copy)
    register_python_op("ember::detach", lambda x: x.detach())
    register_python_op("ember::index", index)
    # Tensor.index_put_ (in-place composite index_put) records this kind too; keep its
    # schema so the tracer maps the wrapper's arguments (same order as index_put_ above)
    native = _TABLE.get("ember::index_put_")
    register_python_op("ember::index_put_", index_put_, inplace=True)
    if native is not None:
        _TABLE["ember::index_put_"] = dataclasses.replace(_TABLE["ember::index_put_"],
                                                          schema=native.schema)
    from ..frontend import symbolic_sizes, traced_factories
    for mod in (symbolic_sizes, traced_factories):
        mod.register_ops(lambda kind, fn, schema: register_python_op(kind, fn, schema=schema))


def op_info(kind: str) -> OpInfo:
    """The OpInfo of node kind ``kind``. Raises UnknownOpError naming the kind."""
    if not _TABLE:
        _build()
    try:
        return _TABLE[kind]
    except KeyError:
        raise UnknownOpError(f"no op is registered for node kind '{kind}': ember ops are "
                             f"'ember::<name>[.<overload>]' as declared in "
                             f"native_functions.yaml (see ember.ops.table())") from None


def is_op_kind(kind: str) -> bool:
    """Whether ``kind`` names a registered op."""
    if not _TABLE:
        _build()
    return kind in _TABLE
