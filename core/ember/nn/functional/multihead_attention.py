"""Multi-head attention (``torch.nn.functional.multi_head_attention_forward``).

Project query, key and value, split the embedding into ``num_heads`` heads, run
scaled dot-product attention per head (``attention._attention``), join the heads and
project the output (Vaswani et al. 2017, section 3.2.2). Written with ember ops, so
autograd and ``ember.jit.trace`` see through it.

Masks follow ``torch.nn.MultiheadAttention``: unlike ``scaled_dot_product_attention``,
a bool ``attn_mask`` or ``key_padding_mask`` marks with True the positions NOT allowed to
attend. Both are turned into float masks (True -> ``-inf``) and added.

Departures from PyTorch, on purpose:

- One path for ``need_weights`` True and False. PyTorch's ``need_weights=True`` path
  uses a plain softmax, so a query whose keys are all masked gives NaN there but zeros
  with ``need_weights=False`` (its SDPA path); ember gives the zeros in both.
- Bad shapes and mask dtypes raise ``ShapeError`` / ``DtypeError`` (RuntimeError,
  ValueError / TypeError subclasses) where PyTorch raises ``AssertionError``.
"""
from __future__ import annotations

import warnings

from ember.ops import namespace as E
from ember.errors import DtypeError, ShapeError

from .attention import _attention
from .linear import linear
from .padding import pad

__all__ = ["multi_head_attention_forward"]


def _canonical_mask(mask, mask_name: str, other_type, other_name: str, target_type,
                    check_other: bool = True):
    """A bool mask as a float one (True -> ``-inf``, False -> 0) of ``target_type``; a
    float mask unchanged; None stays None. Warns, as PyTorch does, when ``mask`` and the
    other mask of the call have different dtypes. Raises DtypeError for other dtypes."""
    if mask is None:
        return None
    if mask.dtype is not E.bool_ and not mask.dtype.is_floating_point:
        raise DtypeError(f"only bool and floating types of {mask_name} are supported, got "
                         f"{mask.dtype}; convert it with .bool() (True = masked out) or "
                         f".float() (added to the scores)")
    if check_other and other_type is not None and mask.dtype is not other_type:
        warnings.warn(f"Support for mismatched {mask_name} and {other_name} is deprecated. "
                      f"Use same type for both instead.", stacklevel=2)
    if mask.dtype is E.bool_:
        mask = E.zeros_like(mask, dtype=target_type).masked_fill(mask, float("-inf"))
    return mask


def _none_or_dtype(t):
    return None if t is None else t.dtype


def _shape_check(query, key, value, key_padding_mask, attn_mask, num_heads: int) -> bool:
    """Whether the input is batched (3-D) or not (2-D); raises ShapeError otherwise."""
    if query.ndim not in (2, 3):
        raise ShapeError(f"query should be unbatched 2D or batched 3D tensor but received "
                         f"{query.ndim}-D query tensor")
    batched = query.ndim == 3
    what = "batched (3-D)" if batched else "unbatched (2-D)"
    if key.ndim != query.ndim or value.ndim != query.ndim:
        raise ShapeError(f"For {what} `query`, expected `key` and `value` to be "
                         f"{query.ndim}-D but found {key.ndim}-D and {value.ndim}-D tensors "
                         f"respectively")
    if key_padding_mask is not None and key_padding_mask.ndim != query.ndim - 1:
        raise ShapeError(f"For {what} `query`, expected `key_padding_mask` to be `None` or "
                         f"{query.ndim - 1}-D but found {key_padding_mask.ndim}-D tensor "
                         f"instead")
    if attn_mask is not None:
        if attn_mask.ndim not in (2, 3):
            raise ShapeError(f"For {what} `query`, expected `attn_mask` to be `None`, 2-D or "
                             f"3-D but found {attn_mask.ndim}-D tensor instead")
        expected = (num_heads, query.shape[0], key.shape[0])
        if not batched and attn_mask.ndim == 3 and tuple(attn_mask.shape) != expected:
            raise ShapeError(f"Expected `attn_mask` shape to be {expected} but got "
                             f"{tuple(attn_mask.shape)}")
    return batched


def _check_weight(name: str, w, shape: tuple) -> None:
    if w is None:
        raise ValueError(f"multi_head_attention_forward: {name} is None; pass it (or set "
                         f"use_separate_proj_weight to use the other projection weights)")
    if tuple(w.shape) != shape:
        raise ShapeError(f"multi_head_attention_forward: expected {name} of shape {shape}, "
                         f"got {tuple(w.shape)}")


def _in_projection(query, key, value, E_: int, separate: bool, in_proj_weight, in_proj_bias,
                   q_proj_weight, k_proj_weight, v_proj_weight) -> tuple:
    """``(q, k, v)``: the inputs through their projections (each ``(*, E)``)."""
    if in_proj_bias is not None and tuple(in_proj_bias.shape) != (3 * E_,):
        raise ShapeError(f"multi_head_attention_forward: expected in_proj_bias of shape "
                         f"(3 * embed_dim,) = ({3 * E_},), got {tuple(in_proj_bias.shape)}")
    b_q, b_k, b_v = (None,) * 3 if in_proj_bias is None else in_proj_bias.chunk(3)
    if separate:
        _check_weight("q_proj_weight", q_proj_weight, (E_, E_))
        _check_weight("k_proj_weight", k_proj_weight, (E_, key.shape[-1]))
        _check_weight("v_proj_weight", v_proj_weight, (E_, value.shape[-1]))
        return (linear(query, q_proj_weight, b_q), linear(key, k_proj_weight, b_k),
                linear(value, v_proj_weight, b_v))
    _check_weight("in_proj_weight", in_proj_weight, (3 * E_, E_))
    if key.shape[-1] != E_ or value.shape[-1] != E_:
        raise ShapeError(f"multi_head_attention_forward: key and value must have "
                         f"embed_dim = {E_} features with packed in_proj_weight, got key "
                         f"{tuple(key.shape)} and value {tuple(value.shape)}; use "
                         f"use_separate_proj_weight (MultiheadAttention's kdim/vdim)")
    if query is key and key is value:  # self-attention: one matmul for q, k and v
        return linear(query, in_proj_weight, in_proj_bias).chunk(3, -1)
    if key is value:  # encoder-decoder attention: one matmul for k and v
        w_q, w_kv = in_proj_weight.split([E_, 2 * E_])
        b_kv = None if in_proj_bias is None else in_proj_bias[E_:]
        return (linear(query, w_q, b_q), *linear(key, w_kv, b_kv).chunk(2, -1))
    w_q, w_k, w_v = in_proj_weight.chunk(3)
    return linear(query, w_q, b_q), linear(key, w_k, b_k), linear(value, w_v, b_v)


def _heads(t, static, name: str, bh: int, head_dim: int):
    """``(S, N, E)`` -> ``(N * H, S, head_dim)``, or the given ``static_k``/``static_v``."""
    if static is None:
        return t.reshape(t.shape[0], bh, head_dim).transpose(0, 1)
    if static.ndim != 3 or static.shape[0] != bh or static.shape[2] != head_dim:
        raise ShapeError(f"multi_head_attention_forward: expected {name} of shape (N * "
                         f"num_heads, S, head_dim) = ({bh}, S, {head_dim}), got "
                         f"{tuple(static.shape)}")
    return static


def multi_head_attention_forward(query, key, value, embed_dim_to_check: int, num_heads: int,
                                 in_proj_weight, in_proj_bias, bias_k, bias_v,
                                 add_zero_attn: bool, dropout_p: float, out_proj_weight,
                                 out_proj_bias, training: bool = True, key_padding_mask=None,
                                 need_weights: bool = True, attn_mask=None,
                                 use_separate_proj_weight: bool = False, q_proj_weight=None,
                                 k_proj_weight=None, v_proj_weight=None, static_k=None,
                                 static_v=None, average_attn_weights: bool = True,
                                 is_causal: bool = False):
    """Multi-head attention: the computation of ``nn.MultiheadAttention``.

    Args:
        query: ``(L, N, E)``, or ``(L, E)`` unbatched (sequence first).
        key, value: ``(S, N, Ek)`` and ``(S, N, Ev)`` (``(S, Ek)``, ``(S, Ev)``
            unbatched); ``Ek = Ev = E`` with a packed ``in_proj_weight``.
        embed_dim_to_check: ``E``, checked against query.
        num_heads: ``H``; must divide ``E`` (``head_dim = E / H``).
        in_proj_weight, in_proj_bias: packed ``(3E, E)`` weight (rows q, k, v) and
            ``(3E,)`` bias (may be None).
        bias_k, bias_v: ``(1, 1, E)`` rows appended to the projected key and value (both
            or neither), the masks padded by one column.
        add_zero_attn: append a zero row to the per-head key and value (after bias_k).
        dropout_p: dropout on the attention weights while ``training``.
        out_proj_weight, out_proj_bias: ``(E, E)`` and ``(E,)`` (bias may be None).
        key_padding_mask: ``(N, S)`` (``(S,)`` unbatched): bool, True = ignore that key;
            or float, added.
        need_weights: also return the attention weights.
        attn_mask: ``(L, S)`` or ``(N * H, L, S)``: bool, True = not allowed to attend;
            or float, added.
        use_separate_proj_weight, q_proj_weight, k_proj_weight, v_proj_weight: separate
            ``(E, E)``, ``(E, Ek)``, ``(E, Ev)`` projections (kdim/vdim != E).
        static_k, static_v: ``(N * H, S, head_dim)`` used instead of the projected key /
            value.
        average_attn_weights: average the returned weights over heads.
        is_causal: a hint that ``attn_mask`` is the causal mask (which must be given);
            with no key_padding_mask and ``need_weights=False`` the causal mask is used
            in its place.
    Returns:
        ``(attn_output, attn_weights)``: ``(L, N, E)`` (``(L, E)`` unbatched) and, if
        ``need_weights``, ``(N, L, S)`` averaged or ``(N, H, L, S)`` per head (without
        the ``N`` unbatched), else None. A query that may attend to no key gives zero
        weights (see the module docstring).
    Raises:
        ShapeError: inputs that are not 2-D/3-D, or masks and weights of the wrong shape,
            ``E`` != embed_dim_to_check, ``E`` not divisible by num_heads.
        DtypeError: masks that are neither bool nor floating.
        ValueError: a missing projection weight; only one of bias_k and bias_v.
        RuntimeError: ``is_causal`` without ``attn_mask``.
    Reference: torch.nn.functional.multi_head_attention_forward.
    """
    batched = _shape_check(query, key, value, key_padding_mask, attn_mask, num_heads)
    if not batched:
        query, key, value = query.unsqueeze(1), key.unsqueeze(1), value.unsqueeze(1)
        if key_padding_mask is not None:
            key_padding_mask = key_padding_mask.unsqueeze(0)
    tgt_len, bsz, embed_dim = query.shape
    src_len = key.shape[0]
    key_padding_mask = _canonical_mask(key_padding_mask, "key_padding_mask",
                                       _none_or_dtype(attn_mask), "attn_mask", query.dtype)
    if is_causal and attn_mask is None:
        raise RuntimeError("Need attn_mask if specifying the is_causal hint. You may use the "
                           "Transformer module method `generate_square_subsequent_mask` to "
                           "create this mask.")
    if is_causal and key_padding_mask is None and not need_weights:
        attn_mask = None  # the hint stands for the mask
    else:
        attn_mask = _canonical_mask(attn_mask, "attn_mask", None, "", query.dtype, False)
        is_causal = False
    if embed_dim != embed_dim_to_check:
        raise ShapeError(f"was expecting embedding dimension of {embed_dim_to_check}, but "
                         f"got {embed_dim}")
    head_dim = embed_dim // num_heads
    if head_dim * num_heads != embed_dim:
        raise ShapeError(f"embed_dim {embed_dim} not divisible by num_heads {num_heads}")
    same = (tuple(key.shape[:2]) == tuple(value.shape[:2]) if use_separate_proj_weight
            else tuple(key.shape) == tuple(value.shape))
    if not same:
        raise ShapeError(f"key shape {tuple(key.shape)} does not match value shape "
                         f"{tuple(value.shape)}")
    q, k, v = _in_projection(query, key, value, embed_dim, use_separate_proj_weight,
                             in_proj_weight, in_proj_bias, q_proj_weight, k_proj_weight,
                             v_proj_weight)
    bh = bsz * num_heads
    if attn_mask is not None:
        want = (tgt_len, src_len) if attn_mask.ndim == 2 else (bh, tgt_len, src_len)
        if tuple(attn_mask.shape) != want:
            raise ShapeError(f"The shape of the {attn_mask.ndim}D attn_mask is "
                             f"{tuple(attn_mask.shape)}, but should be {want}.")
        if attn_mask.ndim == 2:
            attn_mask = attn_mask.unsqueeze(0)
    if (bias_k is None) != (bias_v is None):
        raise ValueError(f"bias_{'v' if bias_v is None else 'k'} is None but bias_"
                         f"{'k' if bias_v is None else 'v'} is set; pass both or neither")
    if bias_k is not None:
        if static_k is not None or static_v is not None:
            raise ValueError("bias cannot be added to static key or value; pass bias_k = "
                             "bias_v = None with static_k/static_v")
        k = E.cat([k, bias_k.repeat(1, bsz, 1)])
        v = E.cat([v, bias_v.repeat(1, bsz, 1)])
        attn_mask = None if attn_mask is None else pad(attn_mask, (0, 1))
        key_padding_mask = None if key_padding_mask is None else pad(key_padding_mask, (0, 1))
    q = q.reshape(tgt_len, bh, head_dim).transpose(0, 1)
    k = _heads(k, static_k, "static_k", bh, head_dim)
    v = _heads(v, static_v, "static_v", bh, head_dim)
    if add_zero_attn:
        k = E.cat([k, E.zeros(bh, 1, head_dim, dtype=k.dtype, device=k.device)], 1)
        v = E.cat([v, E.zeros(bh, 1, head_dim, dtype=v.dtype, device=v.device)], 1)
        attn_mask = None if attn_mask is None else pad(attn_mask, (0, 1))
        key_padding_mask = None if key_padding_mask is None else pad(key_padding_mask, (0, 1))
    src_len = k.shape[1]
    if attn_mask is not None:  # (1 or N * H, L, S) -> (1 or N, 1 or H, L, S)
        attn_mask = attn_mask.unsqueeze(0) if attn_mask.shape[0] == 1 else \
            attn_mask.reshape(bsz, num_heads, tgt_len, src_len)
    if key_padding_mask is not None:
        if tuple(key_padding_mask.shape) != (bsz, src_len):
            raise ShapeError(f"Expected key_padding_mask of shape (N, S) = {(bsz, src_len)}, "
                             f"got {tuple(key_padding_mask.shape)}")
        kpm = key_padding_mask.reshape(bsz, 1, 1, src_len)
        attn_mask = kpm if attn_mask is None else attn_mask + kpm
    out, weights = _attention(q.reshape(bsz, num_heads, tgt_len, head_dim),
                              k.reshape(bsz, num_heads, src_len, head_dim),
                              v.reshape(bsz, num_heads, src_len, head_dim), attn_mask,
                              dropout_p if training else 0.0, is_causal, None,
                              op="multi_head_attention_forward")
    out = out.permute(2, 0, 1, 3).reshape(tgt_len * bsz, embed_dim)
    # the sizes spelled out: -1 is ambiguous for an empty batch (bsz == 0)
    out = linear(out, out_proj_weight, out_proj_bias)
    out = out.reshape(tgt_len, bsz, out.shape[-1])
    if not need_weights:
        return (out if batched else out.squeeze(1)), None
    if average_attn_weights:
        weights = weights.mean(1)
    if not batched:
        return out.squeeze(1), weights.squeeze(0)
    return out, weights
