"""The blocked, threaded elementwise engine: a :class:`Program` (a DAG of pointwise steps,
``program.py``) compiled by :func:`compile_program` into a :class:`BlockedKernel` that runs
it over cache-sized blocks on ember's threads (``engine.py``). ember's CPU fuser compiles
FusionGroups to it; eager kernels that chain ufuncs use it too.

Example::

    prog = Program("axpy")
    a, x, y = prog.input("float32"), prog.input("float32"), prog.input("float32")
    prog.output(prog.ufunc("add", prog.ufunc("multiply", a, x), y))
    (out,) = compile_program(prog)(a_arr, x_arr, y_arr)
"""
from .engine import BLOCK_ELEMENTS, BlockedKernel, compile_program
from .program import EngineError, Program, Value

__all__ = ["Program", "Value", "compile_program", "BlockedKernel", "EngineError",
           "BLOCK_ELEMENTS"]
