"""The JIT's frontend: Python into a graph. ``tracer`` records the ops a function runs
(``tracing_state``: its per-thread state and its part of every op wrapper),
``traced`` is ``ember.jit.trace`` (TracedFunction, TracedModule, the trace check);
sizes as values (``symbolic_sizes``, ``shape_guards``), factories in a trace
(``traced_factories``) and which nodes draw random numbers (``nondeterminism``).

Reference: PyTorch's ``torch/csrc/jit/frontend/tracer.cpp``.
"""
