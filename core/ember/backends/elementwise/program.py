"""The Program IR of the blocked elementwise engine: a DAG of pointwise steps.

A :class:`Program` is built step by step; each builder method returns the :class:`Value`
its step computes. Every pointwise Value has the *iteration shape*, the broadcast shape of
the arrays given at run time; reductions (``Program.reduce``) make the only Values of
another shape, and those may only be outputs. :func:`ember.backends.elementwise.compile_program`
turns a Program into a :class:`~ember.backends.elementwise.engine.BlockedKernel`.

Example (``y = float16(float32(x) * w + 1)`` and the row sums of the float32 result)::

    prog = Program("affine")
    x = prog.input("float16")                       # %0, array 0 of the call
    w = prog.input("float32")                       # %1, array 1
    t = prog.ufunc("multiply", prog.cast(x, "float32"), w)
    u = prog.ufunc("add", t, 1.0)
    prog.output(u, dtype="float16")
    prog.output(prog.reduce("sum", u, dims="last"))

``print(prog)`` shows it as an IR dump::

    program 'affine' (2 inputs, 2 outputs)
      %0 = input 0 : float16
      %1 = input 1 : float32
      %2 = cast(%0) : float32
      %3 = multiply(%2, %1) : float32
      %4 = add(%3, 1.0) : float32
      %5 = sum(%4, dims=last, keepdim=False) : float32
      output 0 = %4 : float16
      output 1 = %5 : float32

Type rules: a ufunc runs numpy's own loop for its arguments' dtypes (Python scalars are
weak, NEP 50) and its result is stored into ``dtype`` as ``astype`` would
(``casting="unsafe"``); ``cast`` chooses the dtype a ufunc computes in.

Reference: the pointwise loop nest of PyTorch's ``TensorIterator`` and the IR dump of
``torch.fx.Graph``; NEP 50 for scalar promotion.
"""
from __future__ import annotations

import enum
import inspect
from dataclasses import dataclass, field
from typing import Any, Callable, NamedTuple, Optional

import numpy as np

__all__ = ["EngineError", "Op", "Dims", "REDUCTIONS", "Value", "Step", "Output", "Program"]


class EngineError(RuntimeError, ValueError):
    """A Program that cannot be built or compiled, or a kernel call whose arrays do not
    fit it. A ``ValueError`` (and a ``RuntimeError``, as ember's other errors)."""


class Op(str, enum.Enum):
    """The opcode of a :class:`Step`; ``Step.target`` holds per opcode:

    * ``INPUT``: the position of the array in the call;
    * ``CAST``: nothing (the dtype is ``Step.value.dtype``);
    * ``UFUNC``: the numpy ufunc (``Step.loop_dtype``: the dtype its loop returns);
    * ``WHERE``: nothing (``args`` are ``(cond, a, b)``);
    * ``CALL``: the callable;
    * ``REDUCE``: the kind, one of :data:`REDUCTIONS` (``Step.dims``, ``Step.keepdim``).
    """
    INPUT = "input"
    CAST = "cast"
    UFUNC = "ufunc"
    WHERE = "where"
    CALL = "call"
    REDUCE = "reduce"


class Dims(str, enum.Enum):
    """What a reduction reduces: the last axis of the iteration shape, or all of it."""
    LAST = "last"
    ALL = "all"


#: reduction kind -> the ufunc whose ``reduce`` computes it (mean divides the sum after)
REDUCTIONS = {"sum": "add", "mean": "add", "amax": "maximum", "amin": "minimum"}


@dataclass(frozen=True)
class Value:
    """The result of one step of one Program: ``index`` (the step's position) and
    ``dtype`` (a numpy dtype). Made only by the Program's builder methods."""
    index: int
    dtype: np.dtype
    _owner: object = field(repr=False)  # the Program's token: Values of others are foreign

    def __repr__(self) -> str:
        return f"%{self.index}: {self.dtype}"


class Step(NamedTuple):
    """One node of the DAG: ``value = op(*args)`` (see :class:`Op` for ``target``).
    ``args`` hold Values and constants (Python/numpy scalars; anything for CALL)."""
    op: Op
    value: Value
    args: tuple = ()
    target: Any = None
    loop_dtype: Optional[np.dtype] = None
    dims: Optional[Dims] = None
    keepdim: bool = False


class Output(NamedTuple):
    """An output of the Program: ``value`` stored as ``dtype``."""
    value: Value
    dtype: np.dtype


_SCALARS = (bool, int, float, complex, np.generic)


class Program:
    """A DAG of pointwise steps over arrays broadcast to one iteration shape.

    ``name`` appears in errors and in the dump (``str(prog)``). Build it with
    :meth:`input`, :meth:`cast`, :meth:`ufunc`, :meth:`where`, :meth:`call`,
    :meth:`reduce`, :meth:`output`; each checks its arguments and raises
    :class:`EngineError` on a foreign Value, a bad dtype, an unknown ufunc, a wrong arity,
    or a reduction result used as an operand.
    """

    def __init__(self, name: str = "program"):
        self.name = str(name)
        self._token = object()
        self._steps: list[Step] = []
        self._outputs: list[Output] = []
        self._inputs: list[np.dtype] = []

    # -- read-only views -------------------------------------------------------------------
    @property
    def steps(self) -> tuple[Step, ...]:
        """Every step, in build order (``steps[v.index]`` made ``v``)."""
        return tuple(self._steps)

    @property
    def outputs(self) -> tuple[Output, ...]:
        """The outputs, in the order a kernel returns them."""
        return tuple(self._outputs)

    @property
    def input_dtypes(self) -> tuple[np.dtype, ...]:
        """The dtype each input array must have, by position."""
        return tuple(self._inputs)

    def is_reduction(self, value: Value) -> bool:
        """Whether ``value`` is the result of :meth:`reduce`."""
        return self._steps[self._check(value, "value").index].op is Op.REDUCE

    # -- builder ---------------------------------------------------------------------------
    def input(self, dtype) -> Value:
        """The array given at run time at the next position (0, 1, ... in call order),
        of exactly ``dtype``; any shape that broadcasts with the others."""
        dt = self._dtype(dtype, "input")
        self._inputs.append(dt)
        return self._add(Op.INPUT, dt, (), target=len(self._inputs) - 1)

    def cast(self, value: Value, dtype) -> Value:
        """``value`` converted to ``dtype`` as ``astype`` does (``casting="unsafe"``)."""
        return self._add(Op.CAST, self._dtype(dtype, "cast"), (self._operand(value, "cast"),))

    def ufunc(self, fn, *args, dtype=None) -> Value:
        """``fn(*args)`` elementwise, stored as ``dtype``. ``fn``: a numpy ufunc name
        (``"multiply"``) or ufunc object with one output; ``args``: Values or scalars.
        ``dtype`` defaults to what numpy's loop returns for these argument dtypes."""
        uf = self._ufunc(fn)
        if len(args) != uf.nin:
            raise EngineError(f"{self.name}: ufunc {uf.__name__!r} takes {uf.nin} "
                              f"argument(s), got {len(args)}")
        args = tuple(self._operand(a, uf.__name__, scalar=True) for a in args)
        keys = tuple(a.dtype if isinstance(a, Value) else _weak(a) for a in args)
        try:
            loop = uf.resolve_dtypes(keys + (None,))[-1]
        except (TypeError, ValueError) as e:
            raise EngineError(f"{self.name}: ufunc {uf.__name__!r} has no loop for argument "
                              f"dtypes {keys}: {e}; cast the arguments first") from None
        dt = loop if dtype is None else self._dtype(dtype, uf.__name__)
        return self._add(Op.UFUNC, dt, args, target=uf, loop_dtype=loop)

    def where(self, cond: Value, a, b, dtype=None) -> Value:
        """``a`` where ``cond`` else ``b`` (``xp.where``), each branch cast to ``dtype``
        (default: ``np.result_type`` of the branches, Python scalars weak). ``cond``: a
        bool Value; ``a``, ``b``: Values or scalars."""
        cond = self._operand(cond, "where")
        if cond.dtype != np.bool_:
            raise EngineError(f"{self.name}: where: expected a bool condition, got {cond!r}; "
                              f"use prog.cast(cond, bool) or a comparison ufunc")
        a, b = (self._operand(x, "where", scalar=True) for x in (a, b))
        if dtype is None:
            dtype = np.result_type(*(x.dtype if isinstance(x, Value) else x for x in (a, b)))
        return self._add(Op.WHERE, self._dtype(dtype, "where"), (cond, a, b))

    def call(self, fn: Callable, *args, dtype) -> Value:
        """``fn(*args)`` per block, for a pointwise callable returning an array (an eager
        kernel such as erf); Values become the block's arrays, anything else is passed as
        it is. The result is cast to ``dtype`` (required) when its dtype differs."""
        if not callable(fn):
            raise EngineError(f"{self.name}: call: expected a callable, got {fn!r}")
        args = tuple(self._operand(a, "call") if isinstance(a, Value) else a for a in args)
        try:
            inspect.signature(fn).bind(*args)
        except TypeError as e:
            raise EngineError(f"{self.name}: call: {_name(fn)} cannot take {len(args)} "
                              f"argument(s): {e}") from None
        except ValueError:  # no signature (a builtin, a ufunc): found at the first run
            pass
        return self._add(Op.CALL, self._dtype(dtype, "call"), args, target=fn)

    def reduce(self, kind: str, value: Value, dims: str = "last", keepdim: bool = False,
               dtype=None) -> Value:
        """Reduce ``value`` (a pointwise Value) over the last axis of the iteration shape
        (``dims="last"``: shape ``(*S[:-1])``, or ``(*S[:-1], 1)`` with ``keepdim``; a 0-d
        ``S`` gives ``()``, as torch) or over all of it (``"all"``: shape ``()`` or
        ``(1,) * len(S)``). Blocks hold whole rows for ``"last"``; ``"all"`` combines
        per-block partials in block order (pairwise). ``kind``: ``"sum"``,
        ``"mean"`` (sum / count; needs a floating dtype), ``"amax"``, ``"amin"`` (NaN
        propagates). ``dtype`` (the accumulation and result dtype) defaults to the
        value's, int64 for a sum of bools or integers (as torch.sum). The result may only
        be an output."""
        if kind not in REDUCTIONS:
            raise EngineError(f"{self.name}: reduce: expected a kind in {list(REDUCTIONS)}, "
                              f"got {kind!r}")
        try:
            dims = Dims(dims)
        except ValueError:
            raise EngineError(f"{self.name}: reduce: expected dims 'last' or 'all', "
                              f"got {dims!r}") from None
        value = self._operand(value, kind)
        if dtype is None:
            dtype = np.int64 if kind == "sum" and value.dtype.kind in "biu" else value.dtype
        dt = self._dtype(dtype, kind)
        if kind == "mean" and dt.kind not in "fc":
            raise EngineError(f"{self.name}: mean: expected a floating or complex dtype, "
                              f"got {dt}; pass dtype=np.float32 (or another float)")
        return self._add(Op.REDUCE, dt, (value,), target=kind, dims=dims,
                         keepdim=bool(keepdim))

    def output(self, value: Value, dtype=None) -> int:
        """Make ``value`` (any Value of this Program, inputs and reductions included) the
        next output, stored as ``dtype`` (default: the value's). Returns its position."""
        value = self._check(value, "output")
        dt = value.dtype if dtype is None else self._dtype(dtype, "output")
        self._outputs.append(Output(value, dt))
        return len(self._outputs) - 1

    # -- checks ----------------------------------------------------------------------------
    def _add(self, op: Op, dtype: np.dtype, args: tuple, **kw) -> Value:
        value = Value(len(self._steps), dtype, self._token)
        self._steps.append(Step(op, value, args, **kw))
        return value

    def _check(self, value, what: str) -> Value:
        if not isinstance(value, Value):
            raise EngineError(f"{self.name}: {what}: expected a Value of this program, "
                              f"got {type(value).__name__} {value!r}")
        if value._owner is not self._token:
            raise EngineError(f"{self.name}: {what}: {value!r} belongs to another Program; "
                              f"build each step with the program that uses it")
        return value

    def _operand(self, x, what: str, scalar: bool = False):
        if scalar and not isinstance(x, Value):
            if not isinstance(x, _SCALARS):
                raise EngineError(f"{self.name}: {what}: expected a Value or a Python/numpy "
                                  f"scalar, got {type(x).__name__}; make arrays inputs")
            return x
        value = self._check(x, what)
        if self._steps[value.index].op is Op.REDUCE:
            raise EngineError(f"{self.name}: {what}: {value!r} is a reduction result, which "
                              f"may only feed prog.output; output it and compute on it in "
                              f"a second program")
        return value

    def _dtype(self, dtype, what: str) -> np.dtype:
        if dtype is None:
            raise EngineError(f"{self.name}: {what}: expected a dtype, got None")
        try:
            return np.dtype(dtype)
        except TypeError as e:
            raise EngineError(f"{self.name}: {what}: expected a numpy dtype, got "
                              f"{dtype!r} ({e})") from None

    def _ufunc(self, fn) -> np.ufunc:
        name = fn if isinstance(fn, str) else getattr(fn, "__name__", None)
        if isinstance(fn, np.ufunc):
            uf = fn
        else:
            uf = getattr(np, name, None) if isinstance(name, str) else None
        if not isinstance(uf, np.ufunc):
            raise EngineError(f"{self.name}: expected a numpy ufunc or its name, got {fn!r}; "
                              f"wrap other functions with prog.call")
        if uf.nout != 1:
            raise EngineError(f"{self.name}: ufunc {uf.__name__!r} has {uf.nout} outputs; "
                              f"only one-output ufuncs are supported (use prog.call)")
        return uf

    # -- dump ------------------------------------------------------------------------------
    def __str__(self) -> str:
        lines = [f"program {self.name!r} ({len(self._inputs)} inputs, "
                 f"{len(self._outputs)} outputs)"]
        for s in self._steps:
            lines.append(f"  %{s.value.index} = {_describe(s)} : {s.value.dtype}")
        for j, o in enumerate(self._outputs):
            lines.append(f"  output {j} = %{o.value.index} : {o.dtype}")
        return "\n".join(lines)

    __repr__ = __str__


def _weak(c):
    """The key ``resolve_dtypes`` takes for a constant: Python int/float/complex stay weak
    (NEP 50); bool and numpy scalars are strong."""
    if isinstance(c, (bool, np.generic)):
        return np.asarray(c).dtype
    for t in (int, float, complex):
        if isinstance(c, t):
            return t
    raise AssertionError(c)  # pragma: no cover - _operand admits only these


def _name(fn) -> str:
    return getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None) or repr(fn)


def _arg(a) -> str:
    return f"%{a.index}" if isinstance(a, Value) else repr(a)


def _describe(s: Step) -> str:
    args = ", ".join(_arg(a) for a in s.args)
    if s.op is Op.INPUT:
        return f"input {s.target}"
    if s.op is Op.UFUNC:
        return f"{s.target.__name__}({args})"
    if s.op is Op.CALL:
        return f"call {_name(s.target)}({args})"
    if s.op is Op.REDUCE:
        return f"{s.target}({args}, dims={s.dims.value}, keepdim={s.keepdim})"
    return f"{s.op.value}({args})"
