"""Scaled dot-product attention (``torch.nn.functional.scaled_dot_product_attention``).

``softmax(Q K^T * scale + mask) V`` (Vaswani et al. 2017, "Attention Is All You Need"),
written with ember ops (``matmul``, ``masked_fill``, ``softmax``, ``dropout``), so autograd
to any order and ``ember.jit.trace`` see through it; there is no fused kernel: ember always
takes what PyTorch calls the math backend.

Fully masked rows (a query that may attend to no key: a bool mask row of all False, or a
float mask row of all ``-inf``) give zero weights and a zero output row, with zero
gradients, as PyTorch's math backend does since 2.5 (its ``_safe_softmax``) instead of
the NaN of a plain softmax. ``nn.MultiheadAttention`` gives the same zeros for its
``need_weights=True`` path (see ``nn.functional.multi_head_attention_forward``).
"""
from __future__ import annotations

import math

import numpy as np

from ember.ops import namespace as E
from ember.errors import DeviceMismatchError, DtypeError, ShapeError

from .dropout import dropout as _dropout

__all__ = ["scaled_dot_product_attention"]


def _check_qkv(query, key, value, enable_gqa: bool) -> tuple:
    """Check dtypes, devices and shapes; return the batch shape that q, k, v broadcast
    to (after the GQA head repeat)."""
    op = "scaled_dot_product_attention"
    if not (query.dtype is key.dtype is value.dtype):
        raise DtypeError(f"{op}: expected query, key, and value to have the same dtype, but "
                         f"got query.dtype: {query.dtype} key.dtype: {key.dtype} and "
                         f"value.dtype: {value.dtype} instead; convert them with .to(dtype)")
    if not query.dtype.is_floating_point:
        raise DtypeError(f"{op}: expected floating-point query, key and value, got "
                         f"{query.dtype}; convert them with .float()")
    if not (query.device == key.device == value.device):
        raise DeviceMismatchError(f"{op}: expected query, key and value on one device, got "
                                  f"{query.device}, {key.device} and {value.device}")
    if min(query.ndim, key.ndim, value.ndim) < 2:
        raise ShapeError(f"{op}: expected query (N, ..., L, E), key (N, ..., S, E) and value "
                         f"(N, ..., S, Ev) of at least 2 dims, got shapes "
                         f"{tuple(query.shape)}, {tuple(key.shape)} and {tuple(value.shape)}")
    if key.shape[-1] != query.shape[-1]:
        raise ShapeError(f"{op}: expected key (..., S, E) with query's embedding size E = "
                         f"{query.shape[-1]}, got key of shape {tuple(key.shape)}")
    if value.shape[-2] != key.shape[-2]:
        raise ShapeError(f"{op}: expected value (..., S, Ev) with key's sequence length S = "
                         f"{key.shape[-2]}, got value of shape {tuple(value.shape)}")
    qb, kb, vb = (tuple(t.shape[:-2]) for t in (query, key, value))
    if enable_gqa:
        if min(query.ndim, key.ndim, value.ndim) < 3:
            raise ShapeError(f"{op}: enable_gqa needs a heads dim (..., H, L, E), got shapes "
                             f"{tuple(query.shape)}, {tuple(key.shape)}, {tuple(value.shape)}")
        hq, hk, hv = qb[-1], kb[-1], vb[-1]
        if hk == 0 or hv == 0 or hq % hk or hq % hv:
            raise RuntimeError(f"{op}: Number of heads in key and value must divide the "
                               f"number of heads in query; got {hq} query heads, {hk} key "
                               f"heads and {hv} value heads")
        kb, vb = kb[:-1] + (hq,), vb[:-1] + (hq,)
    try:
        return np.broadcast_shapes(qb, kb, vb)
    except ValueError:
        raise ShapeError(f"{op}: expected the batch dims of query, key and value to "
                         f"broadcast, got query {tuple(query.shape)}, key {tuple(key.shape)} "
                         f"and value {tuple(value.shape)}"
                         + ("" if enable_gqa else "; for grouped-query attention (fewer key/"
                            "value heads) pass enable_gqa=True")) from None


def _check_mask(attn_mask, query, scores_shape: tuple, op: str) -> None:
    if attn_mask.dtype is not E.bool_ and not attn_mask.dtype.is_floating_point:
        raise DtypeError(f"{op}: Expected attn_mask dtype to be bool or float, but got "
                         f"attn_mask.dtype: {attn_mask.dtype}; use a bool mask (True = take "
                         f"part) or a float mask (added to the scores)")
    if attn_mask.device != query.device:
        raise DeviceMismatchError(f"{op}: expected attn_mask on query's device "
                                  f"{query.device}, got {attn_mask.device}")
    try:
        ok = np.broadcast_shapes(tuple(attn_mask.shape), scores_shape) == scores_shape
    except ValueError:
        ok = False
    if not ok:
        raise ShapeError(f"{op}: expected attn_mask to broadcast to the attention scores "
                         f"(N, ..., L, S) = {scores_shape}, got {tuple(attn_mask.shape)}")


def _attention(query, key, value, attn_mask, dropout_p: float, is_causal: bool, scale,
               enable_gqa: bool = False, op: str = "scaled_dot_product_attention"):
    """``(output, weights)``: the work of :func:`scaled_dot_product_attention`, also
    returning the (post-dropout) attention weights ``(N, ..., L, S)`` that
    ``multi_head_attention_forward`` hands back when ``need_weights``."""
    batch = _check_qkv(query, key, value, enable_gqa)
    L, S = query.shape[-2], key.shape[-2]
    if is_causal and attn_mask is not None:
        raise RuntimeError(f"{op}: Explicit attn_mask should not be set when is_causal=True; "
                           f"pass one or the other (fold the causal mask into attn_mask)")
    if attn_mask is not None:
        _check_mask(attn_mask, query, tuple(batch) + (L, S), op)
    if not 0.0 <= dropout_p <= 1.0:
        raise ValueError(f"{op}: dropout_p has to be between 0 and 1, but got {dropout_p}")
    if enable_gqa:
        hq = query.shape[-3]
        if key.shape[-3] != hq:
            key = key.repeat_interleave(hq // key.shape[-3], -3)
        if value.shape[-3] != hq:
            value = value.repeat_interleave(hq // value.shape[-3], -3)
    scale = 1.0 / math.sqrt(query.shape[-1]) if scale is None else float(scale)
    scores = E.matmul(query * scale, key.transpose(-2, -1))
    dead = None  # (..., L, 1): queries that may attend to no key
    if is_causal:
        # upper-left aligned: query i sees keys 0..i, so no row is ever fully masked
        keep = E.ones(L, S, dtype=E.bool_, device=query.device).tril()
        scores = scores.masked_fill(keep.logical_not(), float("-inf"))
    elif attn_mask is not None and attn_mask.dtype is E.bool_:
        dead = attn_mask.any(-1, keepdim=True).logical_not()
        # dead rows keep every key here (finite softmax, finite gradients) and are
        # zeroed after the softmax
        scores = scores.masked_fill((attn_mask | dead).logical_not(), float("-inf"))
    elif attn_mask is not None:
        mask = attn_mask.to(query.dtype)
        dead = (mask == float("-inf")).all(-1, keepdim=True)
        scores = scores + mask.masked_fill(dead, 0.0)
    weights = E.softmax(scores, -1)
    if dead is not None:
        weights = weights.masked_fill(dead, 0.0)
    if dropout_p > 0.0:
        weights = _dropout(weights, dropout_p, True)
    return E.matmul(weights, value), weights


def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p: float = 0.0,
                                 is_causal: bool = False, scale=None,
                                 enable_gqa: bool = False):
    """``softmax(query @ key^T * scale + mask) @ value`` (Vaswani et al. 2017).

    Args:
        query: ``(N, ..., L, E)`` (``L`` target length, ``E`` embedding size).
        key: ``(N, ..., S, E)`` (``S`` source length).
        value: ``(N, ..., S, Ev)``.
        attn_mask: broadcastable to ``(N, ..., L, S)``; a bool mask says which keys each
            query may attend to (True = take part), a float mask is added to the scores
            (cast to query's dtype).
        dropout_p: dropout probability on the attention weights, applied whenever > 0
            (pass 0.0 in evaluation: there is no ``training`` flag, as in PyTorch).
        is_causal: mask with ``ones(L, S).tril()`` (upper-left aligned: query ``i``
            attends keys ``0..i``); not allowed together with ``attn_mask``.
        scale: factor on ``query @ key^T``; default ``1 / sqrt(E)``.
        enable_gqa: grouped-query attention: key and value have fewer heads (dim -3)
            than query, each repeated ``Hq / Hk`` times (``repeat_interleave``).
    Returns:
        ``(N, ..., L, Ev)`` in query's dtype (floating dtypes). The batch dims of query,
        key and value broadcast. A query row with no key to attend to gives zeros
        (PyTorch's math backend; a plain softmax would give NaN).
    Raises:
        DtypeError: query, key and value of different or non-floating dtypes; a mask that
            is neither bool nor floating.
        DeviceMismatchError: inputs on different devices.
        ShapeError: mismatched ``E`` or ``S``, batch dims or a mask that do not broadcast,
            fewer than 2 dims (3 with ``enable_gqa``).
        RuntimeError: ``attn_mask`` together with ``is_causal``; with ``enable_gqa``, key
            or value heads that do not divide query's.
        ValueError: ``dropout_p`` outside [0, 1].
    Reference: torch.nn.functional.scaled_dot_product_attention (math backend).
    """
    return _attention(query, key, value, attn_mask, dropout_p, is_causal, scale,
                      enable_gqa)[0]
