"""The autodiff stage's steps as pipeline entries: what a GraphExecutor runs in place of the
nondiff stage when a call needs a gradient (``pipeline.py`` lists them, in this order)::

    decompose_ops -> create_autodiff_subgraphs -> differentiate -> inline_autodiff_subgraphs

``create_subgraphs`` and ``inline_subgraphs`` run the passes of those names with the
seeds' thresholds (``pipeline.AUTODIFF_SUBGRAPH_*_THRESHOLD``), or, after
``debug_set_autodiff_subgraph_inlining(False)``, make every differentiable node its own
group and inline none. ``differentiate_subgraphs`` turns each group into a Gradient:

Before (a group from ``create_subgraphs``; its ``Subgraph`` is the forward)::

    graph(%x : Float(*, requires_grad=1)):
      %y : Float(*) = prim::DifferentiableGraph_0(%x)
      return (%y)
    with prim::DifferentiableGraph_0 = graph(%x : Float(*, requires_grad=1)):
      %a : Float(*) = ember::sin(%x)
      %y : Float(*) = ember::exp(%a)
      return (%y)

After ``differentiate_subgraphs(g, optimizer)`` the node holds a Gradient
(``differentiable_graph.pack_gradient``); its inputs and outputs do not change.
``Subgraph`` is ``f``, optimized by ``optimizer`` (the executor's optimization and nondiff
stages, so ``f`` is fused as a no-grad graph would be), with any temporaries ``df`` needs
appended to its outputs (none here); ``ReverseSubgraph`` is ``df``, which reads the
captured input ``%x`` and output ``%y``::

      %y : Float(*) = prim::DifferentiableGraph_0[ReverseSubgraph=prim::DifferentiableGraph_1,
          df_input_captured_inputs=[0], df_input_captured_outputs=[0], df_input_vjps=[0],
          df_output_vjps=[0], f_real_outputs=1](%x)
    with prim::DifferentiableGraph_1 = graph(%grad_y : Tensor,
          %x : Float(*, requires_grad=1),
          %y : Float(*)):
      %5 : Tensor = prim::GradOf[name="ember::exp"](%grad_y)
        block0():
          %4 : Tensor = ember::mul(%grad_y, %y)
          -> (%4)
      %8 : Tensor = prim::GradOf[name="ember::sin"](%5)
        block0():
          %6 : Tensor = ember::cos(%x)
          %7 : Tensor = ember::mul(%5, %6)
          -> (%7)
      return (%8)

Reference: PyTorch's ``GraphExecutorImpl::compileSpec`` (``needsGradient`` branch:
``CreateAutodiffSubgraphs``, ``differentiate``, ``runOptimization`` and
``runNondiffOptimization`` on ``f``, ``packGradient``, ``InlineAutodiffSubgraphs``).
"""
from __future__ import annotations

from typing import Callable, Optional

from ember.jit.autodiff.differentiation import differentiate
from ember.jit.autodiff.differentiable_graph import pack_gradient
from ember.jit.ir.graph import Graph, prim
from ember.jit.passes.create_autodiff_subgraphs import create_autodiff_subgraphs
from ember.jit.passes.inline_autodiff_subgraphs import inline_autodiff_subgraphs
from ember.jit.passes import pass_manager as _pipeline

__all__ = ["create_subgraphs", "differentiate_subgraphs", "inline_subgraphs"]


def create_subgraphs(graph: Graph) -> None:
    """``create_autodiff_subgraphs`` in place, with the node threshold (2), or 1 when
    inlining is off
    (:func:`~ember.jit.passes.pass_manager.debug_set_autodiff_subgraph_inlining`)."""
    inlining = _pipeline.autodiff_subgraph_inlining()
    create_autodiff_subgraphs(graph, _pipeline.AUTODIFF_SUBGRAPH_NODE_THRESHOLD
                              if inlining else 1)


def differentiate_subgraphs(graph: Graph,
                            optimizer: Optional[Callable[[Graph], Graph]] = None) -> None:
    """Differentiate, in place, every ``prim::DifferentiableGraph`` of ``graph`` (nested
    blocks included) that holds no Gradient yet, as the module docstring shows; each
    ``f`` goes through ``optimizer(f) -> f`` first when one is given.

    Raises ValueError when a group holds a node that is not differentiable on a gradient
    path (``autodiff.differentiate``); what ``optimizer`` raises propagates.
    """
    for node in [n for n in graph.all_nodes() if n.kind == prim.DifferentiableGraph
                 and not n.has_attr("ReverseSubgraph")]:
        grad = differentiate(node.g("Subgraph"))
        if optimizer is not None:
            grad.f = optimizer(grad.f)
        pack_gradient(grad, node)


def inline_subgraphs(graph: Graph) -> None:
    """``inline_autodiff_subgraphs`` in place with the inline threshold (5); nothing when
    inlining is off
    (:func:`~ember.jit.passes.pass_manager.debug_set_autodiff_subgraph_inlining`)."""
    if _pipeline.autodiff_subgraph_inlining():
        inline_autodiff_subgraphs(graph, _pipeline.AUTODIFF_SUBGRAPH_INLINE_THRESHOLD)
