"""The JIT's runtime: the GraphExecutor (``executor``) specializes a graph per
ArgumentSpec (``argument_spec``, and why it compiled again: ``recompiles``) into an
ExecutionPlan (``plan``, ``plan_array_mode``, ``plan_fusion``, ``memory_planning``);
the reference ``interpreter``, what the JIT knows of each op (``op_registry``), the
fuser registry (``fuser``) and how the autograd prims of backward graphs run
(``autograd_prims``). It imports nothing of ``autodiff``.

Reference: PyTorch's ``torch/csrc/jit/runtime/`` (graph_executor, argument_spec,
interpreter, operator).
"""
