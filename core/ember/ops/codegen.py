"""Generate each op's Python wrapper as real source from its schema.

``add(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor`` becomes::

    def add(self, other, *, alpha=1, out=None):
        # add(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor  (native_functions.yaml:12)
        if alpha.__class__ is not _int and alpha.__class__ is not _float:
            alpha = _check_scalar(alpha, 'add', 'alpha', 3)
        if self.__class__ is _Tensor and other.__class__ is _Tensor and self._type is other._type:
            _T = self._type; _a_self = self._data; _a_other = other._data
        else:  # (the slow path: None, a number of a higher category, mixed Types)
            if self is None: _check_tensor(self, 'add', 'self', 1)
            if other is None: _check_tensor(other, 'add', 'other', 2)
            _T, (_a_self, _a_other) = _promote('add', 'common', (self, other), ('self', 'other'))
        try:
            _r = _T.kernels['add'](_a_self, _a_other, alpha)
        except ValueError as _e:  # names the op, the operands and their shapes
            raise _value_error('add', _kernel_error('add', _e), (self, other), ...) from None
        except MemoryError as _e:  # numpy's "Unable to allocate", with the op's name
            raise _kernel_error('add', _e)
        if out is not None:
            return _write_out('add', out, _r)
        return _wrap(_r, _T.backend)

Python binds the arguments (so a bad keyword gives Python's own message); the generated
checks give PyTorch-style type errors, and each skips its call for a value it would return
unchanged (a default, a plain number, a Tensor); None for a required Tensor is looked for
only where the all-Tensor fast paths were not taken (or, in a composite, once it failed),
so a correct call pays nothing for it; nothing is looked up by name at call time
except the kernel, which the Type caches. ``source_of(name)`` returns the text for a reader;
``runtime.py`` holds what the wrappers call.

Layers: ``generate`` writes the dispatch layer (argument checks, promotion, devices and
dims come from ``emit_dispatch.py``; the kernel call, ``out=`` and in-place writes from
here) and composes the lines of the layers above from the emitters it is given
(``WrapperEmitter``: the tracer's first line, autograd's requires-grad test, recorder and
view finishing), so this package imports neither autograd nor the JIT. The composition
root (``ember/_build.py``) chooses the emitters (``compose``).
"""
from __future__ import annotations

import linecache
from collections import namedtuple
from typing import NamedTuple

from . import arguments as _arguments
from . import emit_dispatch as _ed
from .native import NativeFunction
from .runtime import namespace as _namespace
from .schema import Argument, FunctionSchema

_SOURCES: dict[str, str] = {}
NAMESPACE: dict = {}  # the generated wrappers' globals (runtime.py's and the emitters')


def recorder_name(qualified: str) -> str:
    """Global name of an op's autograd recorder in the wrappers' namespace (the autograd
    emitter's lines call it; the composition root adds the recorders, see ``add_globals``)."""
    return "_ag_" + qualified.replace(".", "__")


def is_variadic(schema: FunctionSchema) -> bool:
    """Whether the trailing list argument may also be passed spread out: ``view(Tensor self,
    int[] size)`` as ``x.view(2, 3)``, and a trailing ``Tensor[]`` after non-Tensor
    arguments (``einsum(str equation, Tensor[] tensors)``) as ``einsum("ij,jk", a, b)``."""
    pos = [a for a in schema.arguments if not a.kwarg_only]
    if not pos or not pos[-1].type.is_list or pos[-1].type.optional or pos[-1].has_default:
        return False
    if pos[-1].type.base in ("int", "SymInt"):
        return len(pos) == 2 and pos[0].name == "self"
    return pos[-1].type.base == "Tensor" and not any(
        a.type.is_list or a.type.base == "Tensor" for a in pos[:-1])


def _params(schema: FunctionSchema, with_out: bool) -> str:
    parts, star = [], False
    variadic = is_variadic(schema)
    for a in schema.arguments:
        if a.kwarg_only and not star:
            parts.append("*")
            star = True
        if variadic and not a.kwarg_only and a.type.is_list:
            parts.append(f"*{a.name}")
            star = True
            continue
        parts.append(a.name + (f"={a.default}" if a.has_default else ""))
    if with_out:
        if not star:
            parts.append("*")
        parts.append("out=None")
    return ", ".join(parts)


def _kernel_arg(a: Argument, promoted: set[str]) -> str:
    t, n = a.type, a.name
    if t.base == "Tensor":
        if n in promoted:
            return f"_a_{n}"
        if t.is_list:
            return f"[_x._data for _x in {n}]"
        return f"(None if {n} is None else {n}._data)" if t.optional else f"{n}._data"
    if t.base == "Generator":
        return f"_gen({n}, _T.backend)"
    return n


def _returns(schema: FunctionSchema, nt_name: str | None, view: tuple | None):
    """(expression for the result, expression for its tuple of outputs) or None for a
    non-Tensor return. ``view`` = (op name, its args) for a view op."""
    rets = schema.returns

    def wrap(e: str, index: str = "None") -> str:
        if view is None:
            return f"_wrap({e}, _T.backend)"
        fn, args = view
        return f"_wrap_view({e}, _T.backend, self, {fn}, ({args}), {index})"
    if len(rets) == 1 and rets[0].type.is_tensor:
        return wrap("_r"), "(_res,)"
    if len(rets) == 1 and rets[0].type.is_tensor_list:
        if view is not None:
            return f"_tuple({wrap('_x', '_i')} for _i, _x in _enumerate(_r))", "_res"
        return f"_tuple({wrap('_x')} for _x in _r)", "_res"
    if len(rets) > 1:
        items = ", ".join(wrap(f"_r[{i}]") if r.type.is_tensor else f"_r[{i}]"
                          for i, r in enumerate(rets))
        return f"{nt_name}({items})", "_res"
    return None


def wrapper_name(nf: NativeFunction, inplace: bool = False) -> str:
    """The generated function's name: ``add``, ``add_``, ``max__dim``, ``max___dim``."""
    op = nf.name + "_" if inplace else nf.name
    return op if not nf.schema.overload else f"{op}__{nf.schema.overload}"


def _into_path(nf: NativeFunction, conditions: list[str], promoted: set) -> list[str]:
    """The fast path of a generated in-place op (``mul_``): the backend's ``into:<kernel>``
    entry, where it has one, writes the result straight into self's array (no result
    array, no copy back) and returns False, before writing anything, for the cases it
    leaves to the general path (other dtypes, broadcasting, ...). Taken only when self's
    array is the kernel's operand itself (no promotion), self is writable and not
    expanded, and no autograd node is recorded."""
    self_arr = "_a_self" if "self" in promoted else "self._data"
    cond = [f"{self_arr} is self._data"] if "self" in promoted else []
    cond += ["0 not in self._data.strides", "self._data.flags.writeable"]
    cond += conditions  # the upper layers' (autograd: no node to record)
    kargs = ", ".join(_kernel_arg(a, promoted) for a in nf.schema.arguments)
    return [f"_k = _T.backend.kernels.get('into:{nf.kernel_name}')",
            f"if _k is not None and {' and '.join(cond)} and _k({kargs}):",
            "    self._bump_version()",
            "    return self"]


class WrapperContext(NamedTuple):
    """What the emitters know about the wrapper being generated."""

    nf: NativeFunction
    schema: FunctionSchema
    op: str               # the name in messages: ``add``, ``add_``
    qualified: str        # ``add_``, ``max.dim``: the op as the JIT names it (``ember::<op>``)
    fn_name: str          # the Python function's name: ``add_``, ``max__dim``
    inplace: bool         # the generated ``_`` variant of a functional declaration
    with_out: bool        # takes ``out=``
    variadic: bool        # the trailing list may be spread (``x.view(2, 3)``)
    promoted: frozenset   # names of the promoted arguments (``nf.promote_args``)
    tensors: tuple        # the Tensor and Tensor[] arguments (``Argument``s)
    primary: Argument | None  # the first of them: the one whose Type dispatches

    def call_args(self) -> str:
        """The wrapper's arguments as a call would pass them on: ``(self, other, )`` and
        ``{'alpha': alpha, 'out': out}`` (spread lists spread again)."""
        pos, kw = [], []
        for a in self.schema.arguments:
            if a.kwarg_only:
                kw.append(f"{a.name!r}: {a.name}")
            else:
                pos.append(f"*{a.name}" if self.variadic and a.type.is_list else a.name)
        if self.with_out:
            kw.append("'out': out")
        return "(" + "".join(p + ", " for p in pos) + ")", "{" + ", ".join(kw) + "}"


class WrapperEmitter:
    """An upper layer's part of every generated wrapper (torchgen composes one generator
    per layer the same way). ``generate`` asks each emitter it is given, in order, for the
    lines at each point below; the defaults add nothing. Each hook returns source lines
    (unindented, a list) for one ``WrapperContext``; ``namespace()`` gives the globals the
    lines read. An emitter need not subclass this: a missing hook adds nothing. The
    autograd layer's emitter is ``ember.autograd.wrapper_emitter.AutogradEmitter``, the
    tracer's ``ember.jit.frontend.tracing_state.TraceEmitter``.

    Only kernel-dispatching ops have the hooks after ``prologue``: a composite's inner ops
    do the work of the upper layers themselves.
    """

    def namespace(self) -> dict:
        """Globals the emitted lines read (added to every wrapper's namespace)."""
        return {}

    def prologue(self, ctx: WrapperContext) -> list[str]:
        """First lines of the body, before any argument is checked."""
        return []

    def before_kernel(self, ctx: WrapperContext) -> list[str]:
        """Lines of an op declared in place (``fill_``) before its kernel writes self."""
        return []

    def into_conditions(self, ctx: WrapperContext) -> list[str]:
        """Extra conditions (expressions, all must be true) for an in-place variant's
        ``into:`` fast path, which skips everything after the kernel call."""
        return []

    def before_write_inplace(self, ctx: WrapperContext) -> list[str]:
        """Lines of an in-place variant (``add_``) after the kernel, before the result is
        written into self; ``_r`` is the kernel's result. May return."""
        return []

    def after_inplace_kernel(self, ctx: WrapperContext) -> list[str]:
        """Lines of an op declared in place after its kernel wrote self."""
        return []

    def out_checks(self, ctx: WrapperContext) -> list[str]:
        """Lines before ``_r`` is written into ``out=``."""
        return []

    def on_result(self, ctx: WrapperContext, outputs: str) -> list[str]:
        """Lines run on the wrapped result ``_res`` before it is returned; ``outputs`` is
        the expression of its tuple of output Tensors."""
        return []


EMITTERS: list = []  # the upper layers' emitters: set by the composition root (compose)


def compose(emitters) -> None:
    """Make ``emitters`` (WrapperEmitter-like, in order) the upper layers of every wrapper
    generated from now on; called once by ``ember._build``."""
    EMITTERS[:] = emitters


def _emit(emitters, hook: str, *args) -> list[str]:
    lines: list[str] = []
    for e in emitters:
        fn = getattr(e, hook, None)  # an emitter may define only the hooks it uses
        if fn is not None:
            lines += fn(*args)
    return lines


def context(nf: NativeFunction, inplace: bool = False) -> WrapperContext:
    """The ``WrapperContext`` of ``nf``'s wrapper (its ``_`` variant for ``inplace``)."""
    schema = nf.schema
    op = schema.name + "_" if inplace else schema.name
    tensors = tuple(a for a in schema.arguments if a.type.base == "Tensor")
    return WrapperContext(
        nf=nf, schema=schema, op=op,
        qualified=op if not schema.overload else f"{op}.{schema.overload}",
        fn_name=wrapper_name(nf, inplace), inplace=inplace,
        with_out="out" in nf.structured and not inplace, variadic=is_variadic(schema),
        promoted=frozenset(nf.promote_args), tensors=tensors,
        primary=tensors[0] if tensors else None)


def generate(nf: NativeFunction, inplace: bool = False, emitters=None) -> tuple[str, str, dict]:
    """Source of one wrapper: (python name, source, extra globals).

    ``inplace=True`` generates ``add_`` from the functional declaration. ``emitters``: the
    upper layers' parts (default: those given to ``compose``). The dispatch layer's lines
    (arguments, promotion, devices, dims) come from ``emit_dispatch``; this function
    places the kernel call, ``out=``, the in-place writes and the result around them.
    """
    ups = EMITTERS if emitters is None else emitters
    ctx = context(nf, inplace)
    schema, fn_name = ctx.schema, ctx.fn_name
    shown = nf.inplace_schema if inplace else schema
    lines = [f"def {fn_name}({_params(schema, ctx.with_out)}):",
             f"    # {shown}  ({nf.location})"]
    body = _emit(ups, "prologue", ctx) + _ed.argument_lines(ctx)
    promotion, nones = _ed.promotion_lines(ctx)
    body += promotion + _ed.device_lines(ctx) + _ed.dim_lines(ctx)
    extra: dict = {}
    nt_name = None
    if len(schema.returns) > 1:
        nt_name = f"_RT_{fn_name}"
        fields = [r.name or f"result{i}" for i, r in enumerate(schema.returns)]
        extra[nt_name] = namedtuple(schema.name, fields, module="ember.return_types")
    if nf.dispatch == "composite":
        body += _composite_call(ctx, nones)
    else:
        body += _kernel_call(ctx, ups, nt_name)
    lines += ["    " + b for b in body]
    return fn_name, "\n".join(lines) + "\n", extra


def _composite_call(ctx: WrapperContext, nones: list[str]) -> list[str]:
    """The body's end for a composite op: call its implementation (whose inner ops record
    autograd and traces) and write ``out=`` / self."""
    schema, op = ctx.schema, ctx.op
    cargs = ", ".join(a.name for a in schema.arguments)
    call = f"_res = _composite[{ctx.nf.kernel_name!r}]({cargs})"
    body: list[str] = []
    if nones:  # NOTE: try costs nothing until it raises: None is looked for only then
        body += ["try:", f"    {call}", "except Exception:", *("    " + c for c in nones),
                 "    raise"]
    else:
        body.append(call)
    if ctx.inplace:  # the composite recorded its graph: copy_ keeps it for autograd
        return body + [f"if _res._requires_grad: return _composite_inplace({op!r}, self, _res)",
                       f"return _write_inplace({op!r}, self, _res._data)"]
    if ctx.with_out:
        body.append(f"if out is not None: return _write_out({op!r}, out, _res._data)")
    return body + ["return _res"]


def _kernel_call(ctx: WrapperContext, ups, nt_name: str | None) -> list[str]:
    """The body's end for a kernel op: the kernel call with its errors, then the in-place
    write, ``out=`` or the wrapped result, with the upper layers' lines around them."""
    nf, schema, op = ctx.nf, ctx.schema, ctx.op
    tensors, primary = ctx.tensors, ctx.primary
    kargs = ", ".join(_kernel_arg(a, ctx.promoted) for a in schema.arguments)
    body: list[str] = []
    if schema.is_inplace:  # declared in place (fill_, copy_): its kernel writes self
        body += _emit(ups, "before_kernel", ctx)
        body.append(f"_check_writable({op!r}, self)")
    if ctx.inplace:
        body += _into_path(nf, _emit(ups, "into_conditions", ctx), ctx.promoted)
    # NOTE: try costs nothing in CPython 3.11+ until it raises.
    body += ["try:", f"    _r = _T.kernels[{nf.kernel_name!r}]({kargs})"]
    if len(tensors) > 1 or (primary is not None and primary.type.is_tensor_list):
        ops_ = ", ".join(a.name for a in tensors)
        body += ["except ValueError as _e:",
                 f"    raise _value_error({op!r}, _kernel_error({op!r}, _e), ({ops_},), "
                 f"{tuple(a.name for a in tensors)!r}) from None",
                 "except MemoryError as _e:"]
    else:
        body.append("except (ValueError, MemoryError) as _e:")
    body.append(f"    raise _kernel_error({op!r}, _e)")  # (the same _e keeps its cause)
    if ctx.inplace:
        return body + _emit(ups, "before_write_inplace", ctx) + \
            [f"return _write_inplace({op!r}, self, _r)"]
    if schema.is_inplace:
        # NOTE: the kernel validated everything before writing self's array in place
        return body + ["self._bump_version()", *_emit(ups, "after_inplace_kernel", ctx),
                       "return self"]
    if ctx.with_out:
        body += ["if out is not None:", *("    " + c for c in _emit(ups, "out_checks", ctx)),
                 f"    return _write_out({op!r}, out, _r)"]
    view = None
    if schema.is_view:
        view_args = "".join(f"{a.name}, " for a in schema.arguments if a.name != "self")
        view = (ctx.fn_name, view_args)
    ret = _returns(schema, nt_name, view)
    if ret is None:
        return body + ["return _r"]
    after = _emit(ups, "on_result", ctx, ret[1])
    if not after:
        return body + [f"return {ret[0]}"]
    return body + [f"_res = {ret[0]}", *after, "return _res"]


def compile_functions(nfs: list[NativeFunction], emitters=None) -> dict[str, object]:
    """Compile every wrapper; returns python name (``add``, ``add_``, ``max__dim``) -> function.

    ``emitters``: the upper layers' parts (default: those given to ``compose``)."""
    ups = EMITTERS if emitters is None else emitters
    ns = NAMESPACE
    ns.clear()
    ns.update(_namespace())
    ns.update(_arguments.namespace())  # the checks of ARGUMENT_CONVERSIONS, by their names
    for e in ups:
        if hasattr(e, "namespace"):
            ns.update(e.namespace())
    out = {}
    for nf in nfs:
        variants = [False] + ([True] if nf.inplace_schema is not None else [])
        for inplace in variants:
            name, src, extra = generate(nf, inplace, ups)
            ns.update(extra)
            filename = f"<ember.ops generated: {name} from {nf.location}>"
            exec(compile(src, filename, "exec"), ns)  # noqa: S102 - generated from the yaml
            # tracebacks and inspect.getsource show the wrapper's lines (as torch.fx's
            # generated code); one entry per wrapper, kept as long as the process
            linecache.cache[filename] = (len(src), None, src.splitlines(True), filename)
            fn = ns[name]
            # the name the emitted lines call the wrapper by (an argument may share the
            # op's: ``pad``), as the trace hook does
            ns[f"_wrapper_{name}"] = fn
            fn.__module__ = "ember"
            fn.__qualname__ = name
            fn.__doc__ = _docstring(nf, inplace)
            _SOURCES[name] = src
            out[name] = fn
    return out


def _docstring(nf: NativeFunction, inplace: bool) -> str:
    s = nf.inplace_schema if inplace else nf.schema
    base = nf.doc
    if inplace:
        base = f"In-place version of :func:`ember.{nf.name}`; writes into ``self``.\n\n" \
               f"Raises DtypeError if the result dtype cannot be stored in ``self``."
    return f"{s}\n\n{base}\n\nDeclared at {nf.location}."


def add_globals(names: dict) -> None:
    """Add globals the emitted lines read that exist only after the wrappers do (the
    autograd recorders, compiled from formulas written with ember ops)."""
    NAMESPACE.update(names)


def source_of(name: str) -> str:
    """The generated source of wrapper ``name`` (``"add"``, ``"add_"``, ``"max__dim"``)."""
    return _SOURCES[name]
