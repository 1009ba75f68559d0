"""The graph passes that run before symbolics: the trace made ready for ONNX.

* dead code elimination and constant propagation (ops on constants arrive folded);
* :func:`remove_inplace_ops`: ONNX has no mutation, so an in-place op (``relu_`` from
  ``nn.ReLU(inplace=True)``, ``add_``) becomes its out-of-place op when that computes the
  same thing. The tracer already routes later uses of a written tensor to the in-place
  node's output; what a functional rewrite would miss is a *view* taken before the write
  (``v = y[0]; y.relu_()`` changes ``v`` too). So an in-place op whose written memory has
  such a view stops the export with the way out; the others are renamed.

Reference: PyTorch's ``RemoveInplaceOpsForONNX``
(``torch/csrc/jit/passes/onnx/remove_inplace_ops_for_onnx.cpp``), much reduced: traces
have no loops or attribute writes to carry.
"""
from __future__ import annotations

from ..jit.runtime.op_registry import is_op_kind, op_info
from ..jit.passes.check_inplace import _aliased_input, _base
from ..jit.passes.constant_propagation import constant_propagation
from ..jit.passes.dead_code_elimination import eliminate_dead_code
from .errors import OnnxExportError

__all__ = ["prepare", "remove_inplace_ops"]


def prepare(graph) -> None:
    """Every export pass, in order, in place."""
    eliminate_dead_code(graph)
    remove_inplace_ops(graph)
    constant_propagation(graph)
    eliminate_dead_code(graph)


def remove_inplace_ops(graph) -> None:
    """Rename ``ember::X_`` nodes to ``ember::X`` where no view shares the written memory.
    Raises OnnxExportError where one does. In-place ops without an out-of-place twin
    (``index_put_``, ``fill_``) are left for their own symbolics."""
    nodes = list(graph.nodes())
    views: dict = {}                        # base value -> the nodes making views of it
    for n in nodes:
        for o in n.outputs:
            # indexing is written by hand (no schema); take any index as a possible view
            src = n.input(0) if n.kind == "ember::index" else _aliased_input(n, o.offset)
            if src is not None and not _is_inplace(n):
                views.setdefault(_base(src), []).append(n)
    renames = []                            # decided first: renaming changes the bases
    for n in nodes:
        if not _is_inplace(n):
            continue
        functional = _functional(n.kind)
        if functional is None:
            continue
        # a view taken before the write sees it in ember, not in a functional graph (one
        # taken after reads the written value already: the tracer routes it there)
        view = next((v for v in views.get(_base(n.input(0)), ()) if v.is_before(n)), None)
        if view is not None:
            raise OnnxExportError(
                f"{n.kind} writes a tensor that also has a view ({view.kind}"
                f"{' at ' + view.source_location if view.source_location else ''}), which "
                f"ONNX, having no mutation, cannot express; use the out-of-place "
                f"{functional.split('::')[1]} (or clone before the view)", n)
        renames.append((n, functional))
    for n, functional in renames:
        n.kind = functional

def _is_inplace(n) -> bool:
    return is_op_kind(n.kind) and op_info(n.kind).inplace


def _functional(kind: str):
    """``ember::add_`` -> ``ember::add`` (overload kept), or None if there is none."""
    ns, _, rest = kind.partition("::")
    name, dot, overload = rest.partition(".")
    if not name.endswith("_"):
        return None
    twin = f"{ns}::{name[:-1]}{dot}{overload}"
    return twin if is_op_kind(twin) else None
