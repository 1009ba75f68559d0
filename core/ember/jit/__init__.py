"""ember's JIT (DESIGN.md, 4): trace Python into a graph IR, optimize it with passes, and
run it through a GraphExecutor that compiles one ExecutionPlan per ArgumentSpec.

    tf = ember.jit.trace(model, (x,))        # TracedModule; tf(x) runs the plan
    print(tf.graph); print(tf.code)
    ember.jit.register_pass(my_pass, stage="nondiff")
    ember.jit.passes.pipeline()             # the real pass order, custom passes included
    ember.jit.counters(); ember.jit.last_executed_optimized_graph()

Sub-packages by concept: ``ir`` (Graph/Block/Node/Value, types, the text form),
``frontend`` (the tracer, ``trace``, sizes as values), ``runtime`` (GraphExecutor,
ArgumentSpec, ExecutionPlan, interpreter, op registry, fuser registry), ``autodiff``
(``differentiate``, its formulas and prims, the DifferentiableGraph runtime) and
``passes`` (one pass a file; ``passes.pass_manager``: the stages and the
custom passes).
"""
# NOTE: attributes load on first use (PEP 562): the op wrappers and Tensor import
# ember.jit.frontend.tracing_state while ember itself is still importing.
_LAZY = {
    "GraphExecutor": "runtime.executor", "counters": "runtime.executor",
    "reset_counters": "runtime.executor", "last_executed_optimized_graph": "runtime.executor",
    "debug_set_autodiff_subgraph_inlining": "passes.pass_manager", "Graph": "ir.graph",
    "parse_ir": "ir.parser", "register_pass": "passes.pass_manager",
    "JitPassWarning": "passes.pass_manager", "trace": "frontend.traced",
    "TracedFunction": "frontend.traced", "TracedModule": "frontend.traced",
    "TracingCheckError": "frontend.traced", "TracerWarning": "frontend.tracer",
}


def __getattr__(name):
    if name == "passes":  # ember.jit.passes.pipeline() without importing the package first
        import importlib
        return importlib.import_module("ember.jit.passes")
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'ember.jit' has no attribute {name!r}")
    import importlib
    value = getattr(importlib.import_module(f"ember.jit.{module}"), name)
    globals()[name] = value
    return value


__all__ = ["Graph", "parse_ir", "trace", "TracedFunction", "TracedModule", "TracerWarning",
           "TracingCheckError", "GraphExecutor", "register_pass", "JitPassWarning",
           "counters", "reset_counters", "last_executed_optimized_graph",
           "debug_set_autodiff_subgraph_inlining", "get_debug_state"]


def get_debug_state(traced) -> dict:
    """The debug state of a traced function's executor: plans per ArgumentSpec (graph,
    code), the fallback plan, pass failures, backward executors."""
    return traced.get_debug_state()
