"""The composition root: the one place that wires ember's layers together at import.

Every layer below imports only downward (``_base`` -> types/errors -> Tensor and dispatch
-> ops -> autograd -> jit -> surface), so nothing below can hand its tables to the layer
above or install methods on ``Tensor`` from above. ``build(namespace)``, called once by
``ember/__init__.py``, does it, in this order (each step needs the ones before it):

1. indexing: ``Tensor.__getitem__`` / ``__setitem__`` (``_indexing.py`` promotes and
   records, so it sits above Tensor);
2. the op tables: ``native_functions.yaml`` and ``derivatives.yaml``, checked together;
3. the wrappers: composed from the dispatch layer and the emitters of the layers above
   (tracer outermost, then autograd: DESIGN's call path), installed as ``ember.<op>`` and
   ``Tensor.<op>``;
4. what wraps or extends the generated ops: the Python operators, the hand-written fronts
   (``nonzero`` & co.), ``uniform_(from=)``, ``Tensor.new_*``, in-place views, aliases,
   shape factories, tensor attributes;
5. the autograd recorders, compiled from formulas written with the ops of step 3 and
   handed to the wrappers;
6. the modules whose import registers composite ops (nn, linalg, special) and the rest
   of the surface ``import ember`` promises (optim, utils, cuda, distributions).

``where does Tensor.X come from?``: ``Tensor`` itself (tensor.py), step 1, 3 or 4 here.
"""
from __future__ import annotations

from . import _indexing, ops
from .backends import registry as _backends
from .autograd import derivatives as _derivatives
from .autograd.wrapper_emitter import AutogradEmitter
from .jit.tracing_state import TraceEmitter
from .ops import codegen
from .plugins import manager as _plugins
from .ops.operators import install_operators
from .tensor import Tensor


def build(namespace: dict) -> None:
    """Install ember's op surface into ``namespace`` (the ``ember`` module's globals) and
    on ``Tensor``. Called once, by ``ember/__init__.py``."""
    # 0. the backend registry loads the plugins on its first lookup, with the manager's
    # loader (the registry sits below the manager and never imports it)
    _backends.set_loader(_plugins.ensure_loaded)

    # 1. x[i] calls _indexing.getitem with no frame in between (the hottest Tensor method)
    Tensor.__getitem__ = _indexing.getitem
    Tensor.__setitem__ = _indexing.setitem

    # 2. the tables: every op, and every op's derivative (a missing entry fails here)
    functions = ops.load()
    ops.DERIVATIVES.clear()
    ops.DERIVATIVES.update(_derivatives.load())
    _derivatives.check_against(functions, ops.DERIVATIVES)

    # 3. the wrappers: the tracer hands calls to itself first, autograd records around
    # the kernel call; both add their lines through the emitters they own
    codegen.compose([TraceEmitter(), AutogradEmitter(ops.DERIVATIVES)])
    ops.install(namespace, Tensor)

    # 4. before anything wraps them: operators bind to the generated ops, and the fronts
    # below replace (nonzero, uniform_) or add to (new_*, t_, arccos) what step 3 made
    install_operators(namespace)
    from . import functional, sampling, shape_factories, tensor_attributes, tensor_factories
    from .ops import aliases, inplace_views
    functional.install(namespace, Tensor)
    sampling.install(Tensor)
    tensor_factories.install(Tensor)
    inplace_views.install(Tensor)
    aliases.install(namespace, Tensor)
    shape_factories.install(namespace)
    tensor_attributes.install(namespace, Tensor)

    # 5. the recorders: their formulas are ember ops, so they compile after step 3
    from . import autograd
    codegen.add_globals(autograd.compile_recorders(ops.DERIVATIVES))

    # 6. importing these registers their composite ops (nn.functional, linalg, special)
    from . import cuda, linalg, nn, optim, special, utils  # noqa: F401
    from . import distributions  # noqa: F401 - needs nn.functional and linalg
