"""Checks and buffers shared by the collectives: a tensor's contiguous backend array (its
own memory when it is C-contiguous, else a temporary copied back on completion), dtype and
device checks against the group's backend, rank checks, and starting a ``Work``."""
from __future__ import annotations

from ..errors import DtypeError
from ..tensor import Tensor
from . import debug
from .process_group import default_group, state, WORLD
from .types import ReduceOp, Work


def group_for(what: str, group):
    """The default group; ``ValueError`` for any other ``group``."""
    g = default_group()
    if group is not None and group is not g and group is not WORLD:
        raise ValueError(f"{what}: ember has only the default process group; pass group=None, "
                         f"got {group!r}")
    return g


def check_tensor(what: str, t, name: str, g, op: ReduceOp | None = None) -> None:
    """TypeError unless ``t`` is a Tensor on a device the backend handles; ``DtypeError``
    (a RuntimeError and TypeError, as torch raises RuntimeError) for a dtype it does not
    take, or ``ReduceOp.AVG`` on integers."""
    if not isinstance(t, Tensor):
        raise TypeError(f"{what}: expected {name} to be an ember Tensor, got "
                        f"{type(t).__name__}")
    device = t._type.backend.name
    if device not in state.device_types:
        raise TypeError(f"{what}: the {state.backend!r} backend moves tensors on "
                        f"{', '.join(state.device_types)}, got {name} on {device}; move it "
                        f"with .to({state.device_types[0]!r}) or use a backend for {device}")
    dtype = t.dtype
    if op is not None:
        if not isinstance(op, ReduceOp):
            raise TypeError(f"{what}: expected op to be an ember.distributed.ReduceOp (SUM, "
                            f"AVG, PRODUCT, MIN, MAX), got {op!r}")
        if op is ReduceOp.AVG and not dtype.is_floating_point:
            raise DtypeError(f"{what}: ReduceOp.AVG takes floating-point tensors, got "
                            f"{dtype.name}; use ReduceOp.SUM and divide, or .double()")
        allowed = g.reduce_dtypes
    else:
        allowed = g.dtypes
    if allowed is not None and dtype.name not in allowed:
        doing = "reduces" if op is not None else "moves"
        raise DtypeError(f"{what}: the {state.backend!r} backend {doing} "
                        f"{', '.join(sorted(allowed))}; got {name} of dtype {dtype.name}; "
                        f"convert it (e.g. .float() before and .to({dtype.name}) after)")


def check_rank(what: str, name: str, r, g) -> int:
    """``r`` as an int in ``range(g.size)``, else ValueError."""
    if isinstance(r, bool) or not isinstance(r, int) or not 0 <= r < g.size:
        raise ValueError(f"{what}: expected {name} to be a rank in [0, {g.size}), got {r!r}")
    return r


def array_of(t):
    """(C-contiguous backend array sharing or mirroring ``t``, copy-back or None)."""
    arr = t._data
    if arr.flags.c_contiguous:
        return arr, None
    tmp = t._type.backend.xp.ascontiguousarray(arr)

    def back():
        arr[...] = tmp
    return tmp, back


def flat(arr):
    """A 1-D view of a C-contiguous array (no copy)."""
    return arr.reshape(-1)


def fingerprint(what: str, t, root=None, op=None) -> tuple:
    """What every rank must agree on for one call (checked under DETAIL)."""
    return (what, tuple(t.shape), t.dtype.name, root, None if op is None else op.name)


def start(what: str, g, request, finish=(), outputs=(), async_op: bool = False,
          modified=()):
    """Wrap ``request`` in a Work; finishing runs ``finish`` callbacks and bumps the
    version of ``modified`` tensors. Returns the Work (``async_op``) or waits and returns
    None."""
    steps = [f for f in finish if f is not None]

    def done():
        for f in steps:
            f()
        for t in modified:
            t._bump_version()
    work = Work(request, what, state.timeout, done, list(outputs))
    if async_op:
        return work
    work.wait()
    return None


def agree(what: str, g, t=None, root=None, op=None) -> None:
    """Under ``EMBER_DISTRIBUTED_DEBUG=DETAIL``, check first that every rank calls ``what``
    on a tensor of ``t``'s shape and dtype (None: no tensor) with this root and op."""
    if g.size > 1 and debug.enabled():
        fp = (what, (), "", None, None) if t is None else fingerprint(what, t, root, op)
        debug.check(what, g, fp)
