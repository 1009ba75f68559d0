"""The op surface: ``native_functions.yaml`` parsed, compiled to Python, installed.

``load()`` parses the declarations; ``install()`` generates one wrapper per declaration
(see ``codegen.py``, with the upper layers' emitters given to ``codegen.compose``), groups
overloads that share a Python name behind one dispatcher, and puts function variants in
the ops layer's namespace (``ops/namespace.py``, which ``ember`` re-exports: the layers
below the API call ops through it) and method variants on ``ember.Tensor``. Both run once,
called by the composition root (``ember/_build.py``). ``table()`` lists every op with its
schema and location.

Layering: ops know dispatch, types and Tensor; autograd and the JIT add their parts of the
wrappers through their emitters, and ``DERIVATIVES`` is filled by the composition root.
"""
from __future__ import annotations

from . import codegen, native, overloads
from .native import NativeFunction

FUNCTIONS: list[NativeFunction] = []
DERIVATIVES: dict = {}  # qualified op name -> autograd.derivatives.Derivative (set by _build)


def load() -> list[NativeFunction]:
    """Parse ``native_functions.yaml`` into ``FUNCTIONS`` (and return it)."""
    FUNCTIONS[:] = native.load()
    return FUNCTIONS


def install(namespace: dict, tensor_cls) -> dict:
    """Generate and install every op of ``FUNCTIONS`` (``load()`` first): functions into
    ``namespace`` (the root passes ``vars(ops.namespace)``), methods on ``tensor_cls``;
    returns python name -> callable for functions."""
    compiled = codegen.compile_functions(FUNCTIONS)
    functions: dict[str, list] = {}
    methods: dict[str, list] = {}
    for nf in FUNCTIONS:
        gen = codegen.wrapper_name(nf)
        overloads.record_overload(gen, nf.schema, nf.promote_args, nf.number_self)
        if "function" in nf.variants:
            functions.setdefault(nf.name, []).append(compiled[gen])
        if "method" in nf.variants:
            methods.setdefault(nf.name, []).append(compiled[gen])
        if nf.inplace_schema is not None:
            gen_ = codegen.wrapper_name(nf, inplace=True)
            overloads.record_overload(gen_, nf.inplace_schema, nf.promote_args,
                                          nf.number_self)
            methods.setdefault(nf.name + "_", []).append(compiled[gen_])
    out = {}
    for table, put in ((functions, namespace.__setitem__),
                       (methods, lambda n, f: setattr(tensor_cls, n, f))):
        for name, fns in table.items():
            fn = fns[0] if len(fns) == 1 else overloads.make_overload_dispatcher(name, fns)
            put(name, fn)
            if table is functions:
                out[name] = fn
    return out


def table() -> list[tuple[str, str, str]]:
    """(qualified name, schema, file:line) for every declared op, in declaration order."""
    rows = []
    for nf in FUNCTIONS:
        rows.append((nf.kernel_name, str(nf.schema), str(nf.location)))
        if nf.inplace_schema is not None:
            rows.append((nf.inplace_schema.qualified_name, str(nf.inplace_schema),
                         str(nf.location)))
    return rows
