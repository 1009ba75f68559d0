"""ember's JIT (DESIGN.md, 4): trace Python into a graph IR, optimize it with passes, and
run it through a GraphExecutor that compiles one ExecutionPlan per ArgumentSpec.

    tf = ember.jit.trace(model, (x,))        # TracedModule; tf(x) runs the plan
    print(tf.graph); print(tf.code)
    ember.jit.register_pass(my_pass, stage="nondiff")
    ember.jit.passes.pipeline()             # the real pass order, custom passes included
    ember.jit.counters(); ember.jit.last_executed_optimized_graph()

Modules: ``ir`` (Graph/Block/Node/Value), ``parser`` (IR text), ``tracer`` (recording),
``traced`` (``trace``), ``executor`` (GraphExecutor), ``plan`` (ExecutionPlan codegen),
``plan_array_mode`` (its kernel calls on arrays), ``pipeline`` (stages, custom passes),
``passes/`` (one pass a file; ``passes/autodiff_stage`` the autodiff stage's entries),
``autodiff`` (``differentiate``), ``autodiff_prims`` (how its prim kinds run),
``symbolic_formulas`` (pointwise backward formulas as ops), ``differentiable_graph`` (its
runtime, above the executor), ``fuser`` (fuser registry).
"""
# NOTE: attributes load on first use (PEP 562): the op wrappers and Tensor import
# ember.jit.tracing_state while ember itself is still importing.
_LAZY = {
    "GraphExecutor": "executor", "counters": "executor", "reset_counters": "executor",
    "last_executed_optimized_graph": "executor",
    "debug_set_autodiff_subgraph_inlining": "pipeline",
    "Graph": "ir", "parse_ir": "parser", "register_pass": "pipeline",
    "JitPassWarning": "pipeline", "trace": "traced", "TracedFunction": "traced",
    "TracedModule": "traced", "TracingCheckError": "traced", "TracerWarning": "tracer",
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
