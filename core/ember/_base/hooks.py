"""Hook tables: what the autograd layer and the tracer do for the layers below them.

``Tensor`` (layer 2), indexing, the factories and the hand-written ops (layer 3) record
autograd history and traces, but autograd (4) and the JIT (5) sit above them. Instead of
importing upward, they call through two tables held here, in the bottom layer:

* ``AUTOGRAD``: filled at build by ``ember.autograd.tensor_methods.install`` (the composition
  root ``ember/_build.py`` calls it); read on the paths that record history and by the
  kernel-pair composites. A read costs what a module global's does (~50 ns).
* ``TRACER``: given a loader at build (``ember.jit.frontend.tracer_hooks.load``); read only while a
  trace is open (``tracing_state.STATE.active``). Its first read of each hook imports the
  tracer's module (the tracer loads with the first trace, not with ``import ember``) and
  keeps the function on the table, so a call goes straight to the tracer, without a frame
  in between (a read passes ``__getattr__``'s class: ~0.1 us more, only while tracing).

A call site reads ``AUTOGRAD.record_handwritten(...)``; calling a hook nobody supplied
raises ``HookNotInstalledError`` naming the table and the hook.

Reference: PyTorch's ATen reaches autograd the same way, through
``at::impl::VariableHooksInterface`` (``ATen/core/VariableHooksInterface.h``), which
libtorch's autograd registers at load time.
"""
from __future__ import annotations

__all__ = ["AUTOGRAD", "TRACER", "HookTable", "LazyHookTable", "HookNotInstalledError"]


class HookNotInstalledError(RuntimeError):
    """A layer below called a hook that the layer above has not supplied."""


def _missing(layer: str, name: str, doc: str):
    def missing(*args, **kwargs):
        raise HookNotInstalledError(
            f"the {layer} hook {name!r} ({doc}) is not installed; the composition root "
            f"installs it: import ember (ember._base.hooks, ember._build.build)")
    missing.__name__ = name
    return missing


class HookTable:
    """A named set of functions a higher layer supplies to the layers below it.

    ``hooks`` maps each hook's name to one line saying what it does; only those names can
    be installed. Fill it with ``install(name=fn, ...)``; until then a hook is a function
    that raises ``HookNotInstalledError`` naming it. Reading a hook is reading an instance
    attribute (no ``__getattr__``: the read stays as cheap as a module global's).
    Raises KeyError for an unknown name given to ``install``.
    """

    def __init__(self, layer: str, hooks: dict):
        object.__setattr__(self, "_layer", layer)
        object.__setattr__(self, "_hooks", dict(hooks))
        object.__setattr__(self, "_installed", set())
        for name, doc in hooks.items():
            object.__setattr__(self, name, _missing(layer, name, doc))

    def install(self, **fns) -> None:
        """Supply hooks by name (``install(record_handwritten=fn)``)."""
        for name, fn in fns.items():
            if name not in self._hooks:
                raise KeyError(f"{self._layer} hooks: no hook named {name!r}; the table has "
                               f"{sorted(self._hooks)}")
            object.__setattr__(self, name, fn)
            self._installed.add(name)

    def installed(self) -> list:
        """The names of the hooks supplied so far."""
        return sorted(self._installed)

    def __setattr__(self, name: str, value) -> None:
        raise AttributeError(f"{self._layer} hooks: use install({name}=...) to supply a hook")

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._layer!r}, installed={self.installed()})"


class LazyHookTable(HookTable):
    """A ``HookTable`` whose hooks a ``loader(name) -> fn`` supplies on first read.

    For a layer whose modules load on first use (the tracer): ``set_loader`` drops the
    hooks not installed yet, so that their first read reaches ``__getattr__``, which asks
    the loader and keeps the function on the table; later reads find it there.
    """

    def set_loader(self, loader) -> None:
        """Supply every hook not installed yet with ``loader(name) -> fn`` on first read."""
        object.__setattr__(self, "_loader", loader)
        for name in self._hooks:
            if name not in self._installed:
                self.__dict__.pop(name, None)

    def __getattr__(self, name: str):
        # only reached for a hook not read yet since set_loader (or a name that is no hook)
        hooks = self.__dict__.get("_hooks", {})
        if name not in hooks:
            raise AttributeError(f"{self._layer} hooks: no hook named {name!r}")
        fn = self._loader(name)
        self.install(**{name: fn})
        return fn


AUTOGRAD = HookTable("autograd", {
    "record_handwritten": "record_handwritten(name, outputs, *args): the history of a "
                          "hand-written op (Tensor.to, indexing) whose input requires grad",
    "begin_inplace": "begin_inplace(name, self, args) -> node: before a hand-written in-place "
                     "write (index_put_) under autograd",
    "end_inplace": "end_inplace(self, node): after that write, node becomes self's history",
    "check_inplace": "check_inplace(name, self): raise if self may not be written in place",
    "kernel_pair": "kernel_pair(name, reference, forward, backward, tensors, args) -> Tensor: "
                   "a forward kernel recorded as one backward node "
                   "(ember/autograd/kernel_pair.py)",
})

TRACER = LazyHookTable("tracer", {
    "record_python": "record_python(kind, fn, args, result): a hand-written op that ran",
    "record_python_op": "record_python_op(fn, args) -> result: a custom autograd Function "
                        "as one prim::PythonOp node",
    "record_factory": "record_factory(kind, fn, args, kwargs) -> Tensor: a factory call",
    "warn_python_value": "warn_python_value(t, what): a traced tensor turned into a Python "
                         "value",
    "pause": "pause(): a context manager running ops untraced",
    "sym_shape": "sym_shape(t) -> tuple or None: a traced tensor's symbolic sizes",
    "sym_size": "sym_size(t, dim) -> SymInt or None",
    "sym_numel": "sym_numel(t) -> SymInt or None",
    "has_symbolic": "has_symbolic(x) -> bool: whether x holds a SymInt",
    "symbolic_getitem": "symbolic_getitem(t, index, getitem) -> Tensor: t[index] with "
                        "symbolic bounds",
    "guarded_concrete": "guarded_concrete(x): x with its SymInts as guarded plain ints",
})
