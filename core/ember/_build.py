"""The composition root: the one place that wires ember's layers together at import.

Every layer below imports only downward (``_base`` -> types/errors -> Tensor and dispatch
-> ops -> autograd -> jit -> surface), so nothing below can hand its tables to the layer
above or install methods on ``Tensor`` from above. ``build(namespace)``, called once by
``ember/__init__.py``, does it, in this order (each step needs the ones before it):

1. indexing: ``Tensor.__getitem__`` / ``__setitem__`` (``_indexing.py`` promotes and
   records, so it sits above Tensor); autograd's Tensor methods (``backward``,
   ``register_hook``, ``retain_grad``, ``retains_grad``: ``autograd/tensor_methods.py``)
   and pickling (``factories.py``); the hook tables of ``_base/hooks.py`` through which
   Tensor and the hand-written ops below autograd and the JIT record and trace;
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

from . import _indexing, factories, ops
from ._base import hooks as _hooks
from ._base import registry as _registry
from .backends import convolution as _convolution
from .backends import registry as _backends
from .autograd import derivatives as _derivatives
from .autograd import tensor_methods as _autograd_methods
from .autograd.wrapper_emitter import AutogradEmitter
from .jit.frontend import tracer_hooks as _tracer_hooks
from .jit.frontend.tracing_state import TraceEmitter
from .ops import codegen
from .ops import namespace as _ops_namespace
from .plugins import manager as _plugins
from .ops.operators import install_operators
from .tensor import Tensor


def build(namespace: dict) -> None:
    """Install ember's op surface into the ops layer's namespace module
    (``ember.ops.namespace``, what the layers below the API call ops through) and on
    ``Tensor``, and re-export it in ``namespace`` (the ``ember`` module's globals): the
    same objects under the same names. Called once, by ``ember/__init__.py``."""
    public, namespace = namespace, vars(_ops_namespace)  # steps 3-4 install into the latter
    # 0. the registries load the plugins on their first read, with the manager's loader,
    # and the manager registers into their tables (none of them imports the manager);
    # ember's own items register through the same call as a plugin's (owner "ember")
    _backends.set_loader(_plugins.ensure_loaded, _plugins.plugins)
    _registry.set_loader(_plugins.ensure_loaded)
    _plugins.set_tables({hook: _registry.table(hook) for hook in _plugins.HOOKS})
    _register_builtins()

    # 1. x[i] calls _indexing.getitem with no frame in between (the hottest Tensor method)
    Tensor.__getitem__ = _indexing.getitem
    Tensor.__setitem__ = _indexing.setitem
    # the layers above Tensor supply Tensor.backward & co. and the hooks that Tensor,
    # indexing, factories and hand-written ops call to record history or trace
    # (ember/_base/hooks.py: autograd's now, the tracer's on first use); pickling is the
    # factories'
    _autograd_methods.install(Tensor, _hooks.AUTOGRAD)
    _hooks.TRACER.set_loader(_tracer_hooks.load)
    factories.install(Tensor)

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

    public.update(_ops_namespace.exports())  # ember.add is ember.ops.namespace.add

    # 5. the recorders: their formulas are ember ops, so they compile after step 3
    from . import autograd
    codegen.add_globals(autograd.compile_recorders(ops.DERIVATIVES))

    # 6. importing these registers their composite ops (nn.functional, linalg, special)
    from . import cuda, linalg, nn, optim, special, utils  # noqa: F401
    from . import distributions  # noqa: F401 - needs nn.functional and linalg
    public.update(_ops_namespace.exports())  # and whatever step 6 added to it


def _register_builtins() -> None:
    """ember's own items, registered in the registries' tables through the call the
    plugin manager uses for a plugin's, with the owner ``"ember"``: the convolution
    dispatcher every backend gets (``_convolution``, ``convolution_backward``), the
    built-in JIT passes and the built-in ONNX symbolics. The last two are deferred batches
    (listed on their table's first read): the JIT pipeline and ``onnx`` load when used."""
    _backends.register_shared_kernels(_convolution.install_kernels, _registry.BUILTIN)
    _registry.table("ember_jit_passes").register(_builtin_passes, _registry.BUILTIN)
    _registry.table("ember_onnx_symbolics").register(_builtin_symbolics, _registry.BUILTIN)


def _builtin_passes() -> list:
    from .jit.passes.pass_manager import builtin_passes
    return builtin_passes()


def _builtin_symbolics() -> list:
    from .onnx.registry import builtin_symbolics
    return builtin_symbolics()
