"""ember's JIT: a graph IR (``ember.jit.ir``), its text form (``ember.jit.parser``) and,
as they land, the tracer, the GraphExecutor and the optimization passes (DESIGN.md, 4)."""
from ember.jit.ir import Graph
from ember.jit.parser import parse_ir

__all__ = ["Graph", "parse_ir"]
