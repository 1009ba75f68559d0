"""The convolution dispatcher: ``_convolution`` picks an algorithm that plugins registered.

Following the seeds' ``at::_convolution``, every convolution (``conv1d`` ... ``conv3d``,
``conv_transpose*``) reaches one op, ``_convolution(input, weight, bias, stride, padding,
dilation, transposed, output_padding, groups, benchmark, deterministic, cudnn_enabled)``.
Its kernel, which every backend gets from the core (``install_kernels``), builds a
``ConvParams`` and asks each *convolution algorithm* registered through the
``ember_convolution_algorithms`` hook, highest ``priority`` first, whether it
``supports(params)``; the first that does runs. An algorithm is any object with::

    name: str                 # "native_im2col", "nnpack_winograd", "cudnn", ...
    priority: int             # higher is tried first (native im2col is 0)
    device_type: str          # the backend it computes on ("cpu", "cuda")
    supports_groups: bool     # False: the dispatcher runs it per group (_convolution_nogroup)
    supports(params) -> bool  # or a falsy ``Decline("why")``, which ``explain`` reports
    dynamic: bool             # optional: True if supports() reads a switch, so its
                              # answers (and the choice after it declines) are not cached
    selection_state() -> hashable
                              # optional, for a dynamic algorithm: a snapshot of what its
                              # supports() reads besides params; with it, the choice is
                              # cached per (params, every dynamic algorithm's state)
    forward(input, weight, bias, params) -> output array
    backward(grad_output, input, weight, params, output_mask) -> (grad_input,
        grad_weight, grad_bias), each an array or None where output_mask says False

Arrays are the backend's (numpy for ``cpu``); ``bias`` may be None. The op
``convolution_backward`` dispatches the same way, so autograd's ``ConvolutionBackward``
node runs the algorithm's backward; its own derivative is the generic
``convolution_double_backward`` (``autograd/nn_formulas.py``), made of these two ops, so
every order of derivative works for every algorithm.

``explain(...)`` says which algorithm a call would use and why the others declined.
``ALGORITHMS`` is the hook's table (``ember._base.registry.table``): the plugin manager
registers each plugin's algorithms there (``ALGORITHMS.register(algorithms, owner)``) and
takes them out by owner; the dispatcher kernels themselves reach every backend through
``backends.registry.register_shared_kernels``, called by the composition root.

Results are not trusted: each forward's output must be a backend array of
``params.output_shape`` in the input's dtype, each backward's a ``(grad_input,
grad_weight, grad_bias)`` of the input's, weight's and ``(out_channels,)`` shapes
(``convolution_results.py``). An algorithm that returns anything else is refused for those
convolution (one ``UserWarning`` naming it and what it returned; forward and backward
alike, with or without bias), the call falls back to the next eligible algorithm, and
``explain`` lists the refused one as declined with the reason.
``ConvParams``, ``make_params`` (its checks) and ``memory_format_of`` live in
``conv_params.py`` and are importable from here too.
"""
from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, replace

from .._base.registry import ensure_loaded, table
from ..errors import ShapeError
from ..plugins.hints import install_hint
from .conv_params import ConvParams, make_params, memory_format_of
from .convolution_results import BadResult, Checked, array_problem

__all__ = ["ConvParams", "Decline", "algorithms", "bias_grad", "explain", "Explanation",
           "select", "memory_format_of"]


class Decline:
    """The falsy answer of ``supports(params)`` that carries its reason.

    ``if algo.supports(p):`` treats it as False; ``explain`` prints ``reason``.
    """

    __slots__ = ("reason",)

    def __init__(self, reason: str):
        self.reason = reason

    def __bool__(self) -> bool:
        return False

    def __repr__(self) -> str:
        return f"Decline({self.reason!r})"


# ---- selection ----------------------------------------------------------------------------

ALGORITHMS = table("ember_convolution_algorithms")

_cache: dict = {}   # params, or (params, states) -> the chosen algorithm
_cache_generation = -1
_CACHE_SIZE = 1024
# (table version, device type) -> (algorithms highest priority first, state functions)
_registry: dict = {}
_refused: dict = {}  # _refusal_key -> why an algorithm's result was refused (see the doc)


def _registered(device_type: str | None) -> tuple:
    """``(algorithms, state functions)`` for ``device_type`` (None: every device), kept
    until the table changes (``ALGORITHMS.version``), so a convolution does not
    filter and sort the registry on every call. The state functions are the distinct
    ``selection_state`` of the dynamic algorithms (an empty tuple when none is dynamic),
    or None when a dynamic algorithm has none, which makes its answers uncacheable."""
    ensure_loaded()   # the plugins, on first use
    key = (ALGORITHMS.version, device_type)
    found = _registry.get(key)
    if found is None:
        if any(k[0] != ALGORITHMS.version for k in _registry):
            _registry.clear()
            _refused.clear()
        algos = sorted((a for a in ALGORITHMS.items(load=False)
                        if device_type is None or a.device_type == device_type),
                       key=lambda a: -a.priority)
        fns = []
        for algo in algos:
            if getattr(algo, "dynamic", False):
                fn = getattr(algo, "selection_state", None)
                if fn is None:
                    fns = None
                    break
                if fn not in fns:   # algorithms of one plugin share one function
                    fns.append(fn)
        found = _registry[key] = (algos, None if fns is None else tuple(fns))
    return found


def algorithms(device_type: str | None = None) -> list:
    """The registered algorithms, highest priority first (optionally for one device)."""
    return list(_registered(device_type)[0])


def _verdict(algo, params: ConvParams):
    if algo.device_type != params.device_type:
        return Decline(f"runs on '{algo.device_type}', not '{params.device_type}'")
    refused = _refused.get(_refusal_key(algo, params))
    if refused is not None:
        return Decline(refused)
    try:
        ok = algo.supports(params)
    except Exception as e:  # noqa: BLE001 - a faulty plugin must not break convolution
        return Decline(f"supports() raised {type(e).__name__}: {e}")
    return ok if isinstance(ok, Decline) or ok else Decline("supports() returned False")


def _refusal_key(algo, params: ConvParams) -> tuple:
    # NOTE: without the bias: the forward (bias or not) and the backward (always without)
    # of one convolution share the refusal, so both directions and explain agree
    return (algo.device_type, algo.name,
            replace(params, has_bias=False) if params.has_bias else params)


def _refuse(algo, params: ConvParams, why: str) -> None:
    """Stop using ``algo`` for ``params``: it returned a wrong result (``why``). Warns once,
    names it; ``select`` then picks the next eligible algorithm and ``explain`` says why."""
    if len(_refused) >= _CACHE_SIZE:
        _refused.clear()
    _refused[_refusal_key(algo, params)] = f"{why}; refused, the next eligible algorithm ran"
    _cache.clear()
    warnings.warn(f"ember: convolution algorithm '{algo.name}' ({algo.device_type}) {why} "
                  f"for {params.op_name()} with input {params.input_shape} and weight "
                  f"{params.weight_shape}; falling back to the next eligible algorithm "
                  f"(ember.backends.convolution.explain shows the choice)", UserWarning,
                  stacklevel=4)


def select(params: ConvParams):
    """The highest-priority algorithm that supports ``params`` (cached per params and, when
    dynamic algorithms are registered, per their ``selection_state()``).

    Raises NotImplementedError naming every algorithm and why it declined.
    """
    global _cache_generation
    algos, states = _registered(params.device_type)
    if _cache_generation != ALGORITHMS.version:
        _cache.clear()
        _cache_generation = ALGORITHMS.version
    key = (params, tuple(f() for f in states)) if states else params
    algo = _cache.get(key)
    if algo is None:
        # NOTE: switches such as ember.backends.nnpack.enabled are read by supports() of
        # algorithms marked ``dynamic``; the key above holds their state when each says what
        # it reads (``selection_state``), else an answer is cached only when no dynamic
        # algorithm was asked: neither the chosen one nor one that declined before it.
        dynamic = False
        for candidate in algos:  # the others decline by device
            dynamic = dynamic or getattr(candidate, "dynamic", False)
            if _verdict(candidate, params):
                algo = candidate
                break
        else:
            raise NotImplementedError(
                f"{params.op_name()}: no convolution algorithm supports this call on "
                f"'{params.device_type}'.\n{explain_params(params)}\nInstall a backend "
                f"plugin with a native algorithm (for the CPU: {install_hint('cpu')}).")
        if states is not None or not dynamic:
            if len(_cache) >= _CACHE_SIZE:
                _cache.clear()
            _cache[key] = algo
    return algo


@dataclass
class Explanation:
    """Which algorithm a convolution would use (``chosen``) and why others declined
    (``declined``: (name, reason) pairs), in priority order. ``str()`` prints a report."""

    params: ConvParams
    chosen: str | None
    declined: list

    def __str__(self) -> str:
        p = self.params
        dtype = getattr(p.dtype, "name", p.dtype)
        lines = [f"{p.op_name()} on {p.device_type} {dtype}: input {p.input_shape}, weight "
                 f"{p.weight_shape}, stride {p.stride}, padding {p.padding}, dilation "
                 f"{p.dilation}, groups {p.groups}"]
        for name, reason in self.declined:
            lines.append(f"  {name}: declined ({reason})")
        lines.append(f"  -> {self.chosen}" if self.chosen else "  -> no algorithm")
        return "\n".join(lines)


def explain_params(params: ConvParams) -> Explanation:
    """``Explanation`` for prepared ``ConvParams``."""
    chosen, declined = None, []
    for algo in algorithms():
        v = _verdict(algo, params)
        if v and chosen is None:
            chosen = algo.name
        elif not v:
            declined.append((algo.name, v.reason))
        else:
            declined.append((algo.name, f"supported, but {chosen} has a higher priority"))
    return Explanation(params, chosen, declined)


def explain(input, weight, bias=None, stride=1, padding=0, dilation=1, transposed=False,
            output_padding=0, groups=1, benchmark=False, deterministic=False,
            cudnn_enabled=True) -> Explanation:
    """Which algorithm ``_convolution`` would run for these Tensors, and why the others
    declined (``print(ember.backends.convolution.explain(x, w, padding=1))``).

    ``stride``/``padding``/``dilation``/``output_padding`` take ints or tuples. Raises
    what the convolution itself would raise for bad shapes or dtypes.
    """
    nd = weight.ndim - 2

    def tup(v):
        return tuple(v) if isinstance(v, (list, tuple)) else (v,) * nd
    p = make_params(input.device.type, input.dtype, input._data, weight._data,
                    None if bias is None else bias._data, tup(stride), tup(padding),
                    tup(dilation), transposed, tup(output_padding), groups, benchmark,
                    deterministic, cudnn_enabled)
    return explain_params(p)


# ---- the kernels every backend gets --------------------------------------------------------

def _split(xp, arr, groups: int, axis: int) -> list:
    return xp.split(arr, groups, axis=axis) if arr is not None else [None] * groups


def bias_grad(xp, grad_output):
    """The bias gradient of a convolution: ``grad_output`` (N, C_out, *O) summed over N
    and the spatial dims, (C_out,) in its dtype; float16/bfloat16 accumulate in float32.

    A matrix-vector product ``ones(N) @ (N, C_out * prod(O))`` first, then the rows:
    BLAS streams contiguous memory where numpy's sum over axis 0 of (N, C_out, prod(O))
    walks short rows; 3-9x faster on the digits CNN and ResNet shapes, and as accurate
    (GEMV accumulates N terms a column, pairwise sums do the rest).
    """
    n, c = grad_output.shape[:2]
    wide = grad_output.dtype if grad_output.dtype in (xp.float32, xp.float64) else \
        xp.dtype(xp.float32)
    g = grad_output.astype(wide, copy=False).reshape(n, math.prod(grad_output.shape[1:]))
    per_position = g[0] if n == 1 else xp.matmul(xp.ones(n, dtype=wide), g)
    return per_position.reshape(c, -1).sum(axis=1).astype(grad_output.dtype, copy=False)


def convolution_nogroup(algo, xp, input, weight, bias, params: ConvParams):
    """Run an algorithm without native groups once per group and concatenate
    (the seeds' ``_convolution_nogroup``)."""
    p1 = params.per_group()
    g = params.groups
    outs = [algo.forward(i, w, b, p1) for i, w, b in
            zip(_split(xp, input, g, 1), _split(xp, weight, g, 0), _split(xp, bias, g, 0))]
    return xp.concatenate(outs, axis=1)


def convolution_nogroup_backward(algo, xp, grad_output, input, weight, params, output_mask):
    """The backward of ``convolution_nogroup``: per group, then concatenated."""
    p1 = params.per_group()
    g = params.groups
    parts = [algo.backward(go, i, w, p1, output_mask) for go, i, w in
             zip(_split(xp, grad_output, g, 1), _split(xp, input, g, 1),
                 _split(xp, weight, g, 0))]
    axes = (1, 0, 0)
    return tuple(xp.concatenate([pt[k] for pt in parts], axis=axes[k]) if output_mask[k]
                 else None for k in range(3))


_made: dict = {}   # params_for's arguments -> their ConvParams


def params_for(backend, input, weight, bias, stride, padding, dilation, transposed,
               output_padding, groups, benchmark=False, deterministic=False,
               cudnn_enabled=True) -> ConvParams:
    """``make_params`` for ``backend``'s arrays, kept per arguments.

    Checking the arguments costs ~5 us and a training loop repeats the same few
    convolutions, so their ConvParams are kept per everything ``make_params`` reads (the
    strides decide the memory format). Arguments that fail are never kept: they raise
    ShapeError or DtypeError on every call.
    """
    device = backend.device_of(input)
    try:
        key = (backend.name, input.shape, input.strides, input.dtype, weight.shape,
               weight.dtype, None if bias is None else (bias.shape, bias.dtype),
               tuple(stride), tuple(padding), tuple(dilation), transposed,
               tuple(output_padding), groups, benchmark, deterministic, cudnn_enabled,
               device)
        found = _made.get(key)
    except TypeError:   # an argument not iterable or unhashable: make_params says why
        key = found = None
    if found is not None:
        return found
    p = make_params(backend.name, backend.type_for_array(input).scalar_type, input, weight,
                    bias, stride, padding, dilation, transposed, output_padding, groups,
                    benchmark, deterministic, cudnn_enabled, device)
    if key is not None:
        if len(_made) >= _CACHE_SIZE:
            _made.clear()
        _made[key] = p
    return p


def install_kernels(backend) -> None:
    """Give ``backend`` the ``_convolution`` and ``convolution_backward`` kernels, which
    select among the registered algorithms (called when a backend registers)."""
    xp, array_type = backend.xp, backend.array_type

    def _convolution(input, weight, bias, stride, padding, dilation, transposed,
                     output_padding, groups, benchmark, deterministic, cudnn_enabled):
        p = params_for(backend, input, weight, bias, stride, padding, dilation, transposed,
                       output_padding, groups, benchmark, deterministic, cudnn_enabled)
        algo = select(p)
        if p.groups == 1 or algo.supports_groups:   # the common case, checked inline
            out = algo.forward(input, weight, bias, p)
            if isinstance(out, array_type) and out.shape == p.output_shape and \
                    out.dtype == input.dtype:
                return out
            why = array_problem(out, array_type, p.output_shape, input.dtype)
            if why is None:
                return out
            _refuse(algo, p, f"its forward returned {why}")
        while True:   # ends: each refusal removes one algorithm; select raises when none is left
            algo = select(p)
            checked = Checked(algo, array_type, input.dtype)
            try:
                if p.groups > 1 and not algo.supports_groups:
                    return convolution_nogroup(checked, xp, input, weight, bias, p)
                return checked.forward(input, weight, bias, p)
            except BadResult as e:
                _refuse(algo, p, str(e))

    def convolution_backward(grad_output, input, weight, stride, padding, dilation,
                             transposed, output_padding, groups, output_mask):
        p = params_for(backend, input, weight, None, stride, padding, dilation, transposed,
                       output_padding, groups)
        if tuple(grad_output.shape) != p.output_shape:
            raise ShapeError(f"{p.op_name()} backward: expected grad_output of shape "
                             f"{p.output_shape}, got {tuple(grad_output.shape)}")
        if grad_output.dtype != input.dtype:
            grad_output = grad_output.astype(input.dtype)
        mask = tuple(bool(m) for m in output_mask)
        while True:   # ends as in _convolution
            algo = select(p)
            checked = Checked(algo, array_type, input.dtype)
            try:
                if p.groups > 1 and not algo.supports_groups:
                    got = convolution_nogroup_backward(checked, xp, grad_output, input, weight,
                                                       p, mask)
                else:
                    got = checked.backward(grad_output, input, weight, p, mask)
                break
            except BadResult as e:
                _refuse(algo, p, str(e))
        # NOTE: outputs not asked for are zero views (no memory), never read by autograd
        shapes = (p.input_shape, p.weight_shape, (p.out_channels,))
        return tuple(r if r is not None else xp.broadcast_to(xp.zeros((), input.dtype), s)
                     for r, s in zip(got, shapes))

    backend.kernels.setdefault("_convolution", _convolution)
    backend.kernels.setdefault("convolution_backward", convolution_backward)
