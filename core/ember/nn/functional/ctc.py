"""Connectionist temporal classification loss (``torch.nn.functional.ctc_loss``).

CTC (Graves et al., 2006) scores a label sequence l of length S against per-frame class
log-probabilities of length T >= S by summing over every alignment: a path of T symbols
(labels or the blank) that collapses to l once repeats are merged and blanks dropped.
The sum is the forward ("alpha") recursion over the extended label l' = (blank, l_1,
blank, l_2, ..., l_S, blank) of length 2S + 1, in log space:

    alpha_t(s) = log_probs[t, l'_s] + logsumexp(alpha_{t-1}(s), alpha_{t-1}(s - 1),
                                                alpha_{t-1}(s - 2) if l'_s != blank and
                                                l'_s != l'_{s-2})

and the loss is -logsumexp(alpha_{T-1}(2S), alpha_{T-1}(2S - 1)).

``ctc_loss`` is a composite op (``native_functions.yaml``, section ``nn: extra losses``)
whose per-sequence losses come from one fused kernel pair (``backends/kernels/
loss_ctc.py``: the alpha and beta recursions, one vectorized step per frame, through
``_fused.run``). Its op-by-op form ``_ctc_losses`` (T steps of ember ops over the whole
batch) is the reference that create_graph differentiates, so higher orders are those of
reverse mode through the recursion. Each step's logsumexp is written so that states no alignment
reaches (alpha = -inf) get a zero gradient instead of NaN: an impossible alignment has
loss inf, and with ``zero_infinity`` loss 0 and gradient 0, as PyTorch. Sequences shorter
than T keep their alpha unchanged after their last frame.

Departure from PyTorch: the gradient w.r.t. ``log_probs`` is the exact derivative of the
loss. PyTorch's kernel returns exp(log_probs) - (state occupancy), which equals the exact
gradient only once it passes back through a ``log_softmax`` (as it does in training, where
log_probs = log_softmax(logits)); without one, PyTorch's gradient fails gradcheck.
"""
from __future__ import annotations

from ember.ops import namespace as E
from ember.errors import DtypeError, ShapeError
from ember import dispatch as _d
from ember.backends.kernels.loss_ctc import ctc_backward, ctc_forward, ctc_labels
from ember.ops.composite import composite

from ember.autograd import kernel_pair as _fused
from .loss import _check_reduction

__all__ = ["ctc_loss"]

_NEG_INF = float("-inf")


def _logsumexp0(x):
    """logsumexp over dim 0 that is -inf with a zero gradient (not NaN) where every entry
    is -inf; E.logsumexp's gradient, softmax(x), is NaN there."""
    m = x.amax(0).detach()
    m = E.where(E.isinf(m), 0.0, m)
    s = E.exp(x - m).sum(0)
    pos = s > 0
    return E.where(pos, E.log(E.where(pos, s, 1.0)), _NEG_INF) + m


def _lengths(op: str, name: str, lengths, n: int, limit: int, limit_name: str) -> list:
    if len(lengths) != n:
        raise ShapeError(f"{op}: {name} must be of size batch_size ({n}), got "
                         f"{len(lengths)} lengths")
    for v in lengths:
        if not 0 <= v <= limit:
            raise ValueError(f"{op}: expected {name} in [0, {limit}] ({limit_name}), got "
                             f"{v}")
    return list(lengths)


def _labels(op: str, targets, target_lengths: list, n: int, blank: int, n_classes: int):
    """(ext, skip) Tensors (loss_ctc.ctc_labels) from padded (N, S) or concatenated
    (sum(target_lengths),) targets, their shapes and lengths checked."""
    if targets.ndim == 2:
        if targets.shape[0] != n:
            raise ShapeError(f"{op}: expected padded targets of shape (N, S) with N = {n}, "
                             f"got {tuple(targets.shape)}")
        _lengths(op, "target_lengths", target_lengths, n, targets.shape[1], "targets.shape[1]")
    else:
        if targets.ndim != 1:
            raise ShapeError(f"{op}: expected targets of shape (N, S) (padded) or "
                             f"(sum(target_lengths),) (concatenated), got "
                             f"{tuple(targets.shape)}")
        total = sum(target_lengths)
        if targets.shape[0] != total:
            raise ShapeError(f"{op}: concatenated 1-D targets must hold sum(target_lengths) "
                             f"= {total} labels, got {targets.shape[0]}")
        _lengths(op, "target_lengths", target_lengths, n, total, "sum of lengths")
    backend = targets._type.backend
    ext, skip = ctc_labels(backend.xp, targets._data, target_lengths, blank, n_classes)
    return _d.wrap(ext, backend), _d.wrap(skip, backend)


def _ctc_losses(log_probs, ext, skip, input_lengths: list, target_lengths: list):
    """-log P (N,) of each sequence, op by op: the alpha recursion as T steps of ember ops
    over the whole batch, so autograd differentiates it to any order (the reference of
    the fused kernels in ``backends/kernels/loss_ctc.py``, which compute it for
    first-order gradients)."""
    t_max, n, _ = log_probs.shape
    n_states = ext.shape[1]
    dtype, dev = log_probs.dtype, log_probs.device
    skip = E.zeros(tuple(skip.shape), dtype=dtype, device=dev).masked_fill(~skip, _NEG_INF)
    emit = E.gather(log_probs, 2, ext.unsqueeze(0).expand(t_max, n, n_states))   # (T, N, L)
    # alpha_{-1}: 0 at state 0, so step 0 starts paths at the blank or the first label
    alpha = E.cat([E.zeros((n, 1), dtype=dtype, device=dev),
                   E.full((n, n_states - 1), _NEG_INF, dtype=dtype, device=dev)], 1)
    # NOTE: an all-empty batch has L = 1 state: the shifted copies keep width L
    pad1 = E.full((n, 1), _NEG_INF, dtype=dtype, device=dev)
    pad2 = E.full((n, min(2, n_states)), _NEG_INF, dtype=dtype, device=dev)
    in_lens = E.tensor(input_lengths, dtype=E.int64, device=dev).unsqueeze(1)
    for t in range(max(input_lengths, default=0)):
        prev1 = E.cat([pad1, alpha[:, :-1]], 1)
        prev2 = E.cat([pad2, alpha[:, :max(n_states - 2, 0)]], 1) + skip
        new = _logsumexp0(E.stack([alpha, prev1, prev2])) + emit[t]
        # NOTE: a sequence past its last frame keeps its alpha (where, not a slice, so
        # the batch stays one tensor)
        alpha = new if t < min(input_lengths) else E.where(in_lens > t, new, alpha)
    tl = E.tensor(target_lengths, dtype=E.int64, device=dev).unsqueeze(1)
    last = E.gather(alpha, 1, 2 * tl)
    # an empty target ends only in state 0: state 2S - 1 = -1 does not exist
    second = E.where(tl > 0, E.gather(alpha, 1, (2 * tl - 1).clamp_min(0)), _NEG_INF)
    return -_logsumexp0(E.stack([last, second])).squeeze(1)


@composite("ctc_loss")
def _ctc_loss(log_probs, targets, input_lengths, target_lengths, blank, reduction,
              zero_infinity):
    op = "ctc_loss"
    _check_reduction(op, reduction)
    if log_probs.ndim not in (2, 3):
        raise ShapeError(f"{op}: expected log_probs of shape (T, N, C) or (T, C) "
                         f"(unbatched), got {tuple(log_probs.shape)}")
    if not log_probs.is_floating_point():
        raise DtypeError(f"{op}: expected floating log_probs, got {log_probs.dtype}; pass "
                         f"log_softmax(logits, -1)")
    if targets.is_floating_point() or targets.dtype is E.bool_:
        raise DtypeError(f"{op}: expected integral targets (int64 class indices), got "
                         f"{targets.dtype}; use targets.long()")
    unbatched = log_probs.ndim == 2
    if unbatched:
        if targets.ndim != 1:
            raise ShapeError(f"{op}: unbatched log_probs (T, C) expects targets of shape "
                             f"(S,), got {tuple(targets.shape)}")
        log_probs, targets = log_probs.unsqueeze(1), targets.unsqueeze(0)
    t_max, n, n_classes = log_probs.shape
    if not 0 <= blank < n_classes:
        raise ValueError(f"{op}: blank must be in label range [0, {n_classes}), got {blank}")
    input_lengths = _lengths(op, "input_lengths", input_lengths, n, t_max, "T")
    target_lengths = list(target_lengths)
    if len(target_lengths) != n:
        raise ShapeError(f"{op}: target_lengths must be of size batch_size ({n}), got "
                         f"{len(target_lengths)} lengths")
    ext, skip = _labels(op, targets, target_lengths, n, blank, n_classes)
    loss = _fused.run(op, _ctc_losses, ctc_forward, ctc_backward, (log_probs, ext, skip),
                      (input_lengths, target_lengths))
    dtype, dev = log_probs.dtype, log_probs.device
    tl = E.tensor(target_lengths, dtype=E.int64, device=dev)
    if zero_infinity:
        loss = E.where(E.isinf(loss), 0.0, loss)
    if reduction == "mean":
        return (loss / tl.clamp_min(1).to(dtype)).mean()
    if reduction == "sum":
        return loss.sum()
    return loss.squeeze(0) if unbatched else loss


def _as_list(op: str, name: str, lengths) -> list:
    if isinstance(lengths, E.Tensor):
        if lengths.is_floating_point():
            raise DtypeError(f"{op}: expected integral {name}, got {lengths.dtype}")
        return [int(v) for v in lengths.reshape(-1).tolist()]
    if isinstance(lengths, int):
        return [lengths]
    try:
        return [int(v) for v in lengths]
    except TypeError:
        raise TypeError(f"{op}: expected {name} as a tensor, a tuple or a list of ints, got "
                        f"{type(lengths).__name__}") from None


def ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0, reduction="mean",
             zero_infinity=False):
    """The connectionist temporal classification loss (Graves et al., 2006).

    Args:
        log_probs: ``(T, N, C)`` or unbatched ``(T, C)`` floating log-probabilities over C
            classes (blank included), usually ``log_softmax(logits, -1)``.
        targets: class indices, integral, blank excluded: padded ``(N, S)`` (entries past
            a sequence's length are ignored), concatenated ``(sum(target_lengths),)``, or
            ``(S,)`` with unbatched log_probs.
        input_lengths: ``(N,)`` frames per sequence, each <= T (a tensor, tuple or list).
        target_lengths: ``(N,)`` labels per sequence (a tensor, tuple or list).
        blank: the blank class. reduction: 'none' ``(N,)`` (``()`` unbatched), 'sum', or
            'mean' (each loss divided by its target length (at least 1), then the batch
            mean). zero_infinity: impossible alignments give loss 0 and gradient 0
            instead of inf.
    Returns: the loss in log_probs' dtype.
    Raises:
        ShapeError: ranks, batch sizes or concatenated length that do not fit.
        ValueError: a length out of range, blank outside [0, C), a bad reduction.
        DtypeError: floating targets or lengths, integral log_probs.
        IndexError: a label outside [0, C).
    The gradient is the exact derivative w.r.t. log_probs (see the module docstring for
    how it differs from PyTorch's without a log_softmax in front).
    Reference: torch.nn.functional.ctc_loss.
    """
    op = "ctc_loss"
    input_lengths = _as_list(op, "input_lengths", input_lengths)
    target_lengths = _as_list(op, "target_lengths", target_lengths)
    return E.ctc_loss(log_probs, targets, input_lengths, target_lengths, blank, reduction,
                      zero_infinity)
