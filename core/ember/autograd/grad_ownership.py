"""Whether AccumulateGrad may keep an incoming gradient as ``.grad`` instead of a copy.

A leaf's first gradient of a backward becomes its ``.grad``. AccumulateGrad used to copy it
always, since the same tensor may be held elsewhere: ``a + b`` passes one gradient to both
inputs, a seed comes from the caller, a custom Function may return a tensor it keeps, and
a later backward adds into ``.grad`` in place. Most gradients are none of these: a formula
just made them, and only the engine holds them. Copying those costs a pass over every
parameter (on a GPU, a kernel launch each) per backward.

PyTorch keeps such a gradient when its use count says nobody else holds it
(``AccumulateGrad::accumulateGrad``: ``new_grad.use_count() <= num_expected_refs``, no
grad mode, a layout like the variable's). ember does the same with CPython's reference
counts: :func:`may_steal` holds when

- the tensor is a plain graph-free ``Tensor`` (no ``grad_fn``, no ``requires_grad``, not
  a view, no shared version counter) whose array owns its memory, C-contiguous, and
- the reference counts of the tensor and of its array are no higher than those of a
  gradient only the engine holds.

A gradient may also be a view of a whole array the engine made: ``linear`` uses its weight
as ``weight.t()``, so the weight's gradient is the transpose of one the ``addmm`` backward
computed laid out like ``weight.t()`` (``formulas.mm_mat2_backward``), a row-major view
spanning that array. PyTorch keeps such a view too (its tensors count uses, not owners of
the storage). ember keeps it when the view is C-contiguous and covers its base exactly,
the base owns its memory, and the base's reference count is no higher than in the same
pattern measured with only the engine holding it.

That last figure depends on the engine's own references and on the Python version, so it
is measured, not assumed: the first time it is needed, :func:`sole_counts` runs two tiny
backward passes on the CPU through the real engine, one whose gradient only the engine
holds and one whose gradient (and its array) the caller holds as well, and records the
counts AccumulateGrad sees in each. When the second is not higher than the first the
counts tell nothing, and every gradient is copied, as before.

Reference: PyTorch's ``torch/csrc/autograd/functions/accumulate_grad.h``.
"""
from __future__ import annotations

import sys
import threading

from .. import dispatch as _d

__all__ = ["may_steal", "sole_counts"]

_lock = threading.Lock()
# None: not measured yet; (): never steal; else ((tensor, array refs), (tensor, view, base
# refs) or () when views cannot be told apart)
_sole = None
_probe = None  # while measuring: the list AccumulateGrad appends its counts to


def may_steal(g) -> bool:
    """Whether gradient ``g``, as AccumulateGrad.apply holds it, may become ``.grad``
    itself: nothing but the engine holds it or its memory (see the module docstring).

    NOTE: the counts are taken first, on every path and always here, so that a measurement
    (``_probe``) sees exactly the references a real call does.
    """
    data = g._data
    n, m = sys.getrefcount(g), sys.getrefcount(data)
    base = getattr(data, "base", None)
    counts = (n, m) if base is None else (n, m, sys.getrefcount(base))
    if _probe is not None:
        _probe.append(counts)
    try:
        if g.__class__ is not _d._Tensor or g.grad_fn is not None or g._requires_grad or \
                g._base is not None or g._vc is not None or not data.flags.c_contiguous:
            return False
        if base is not None and not _spans(data, base):
            return False
    except AttributeError:  # an array type without numpy's ownership flags: copy
        return False
    sole = _sole if _sole is not None else sole_counts()
    if not sole:
        return False
    limit = sole[0] if base is None else sole[1]
    return bool(limit) and all(c <= s for c, s in zip(counts, limit))


def _spans(view, base) -> bool:
    """Whether ``view`` covers exactly the memory of ``base``, an array owning it."""
    return base.base is None and base.__class__ is view.__class__ and \
        view.nbytes == base.nbytes and view.ctypes.data == base.ctypes.data


def sole_counts() -> tuple:
    """The counts of a gradient only the engine holds, measured once; () when they cannot
    tell an unshared gradient from a shared one (then nothing is stolen). A call made while
    another thread (or this one, from inside the measurement) measures gets ()."""
    global _sole
    if _sole is not None:
        return _sole
    if not _lock.acquire(blocking=False):
        return ()
    try:
        if _sole is None:
            _sole = _measure()
        return _sole
    finally:
        _lock.release()


def _measure() -> tuple:
    global _probe
    from ..ops.namespace import addmm, ones, zeros
    from .. import dispatch as d
    from .grad_mode import enable_grad
    seen: list = []
    _probe = seen
    try:
        with enable_grad():
            x = zeros(2, requires_grad=True)
            (x * 2.0).sum().backward()  # MulBackward's product: only the engine holds it
            x.grad = None
            seed = ones(2)
            alias = seed.detach()  # a second tensor on the seed's array
            x.backward(seed)  # the caller holds the tensor and its array too
            del alias
            # linear's pattern: the weight's gradient, a view spanning what addmm made
            w = zeros(2, 3, requires_grad=True)
            addmm(zeros(2), ones(4, 3), w.t()).sum().backward()
            w.grad = None
            owner = ones(2, 3)
            seed = d.wrap(owner._data[...], owner._type.backend)  # the caller holds the base
            w.backward(seed)
            del owner
    finally:
        _probe = None
    if len(seen) != 4:
        return ()
    sole, shared, vsole, vshared = seen
    plain = sole if len(sole) == len(shared) == 2 and shared[0] > sole[0] and \
        shared[1] > sole[1] else ()
    views = vsole if len(vsole) == len(vshared) == 3 and vshared[2] > vsole[2] else ()
    return (plain, views) if plain else ()
