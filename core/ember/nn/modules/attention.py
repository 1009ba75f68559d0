"""``MultiheadAttention`` (``torch.nn.MultiheadAttention``).

Parameters have PyTorch's names, shapes and initialisation, so a torch ``state_dict``
loads as is: ``in_proj_weight`` ``(3E, E)`` (rows q, k, v) when ``kdim == vdim ==
embed_dim``, else ``q_proj_weight`` ``(E, E)``, ``k_proj_weight`` ``(E, kdim)`` and
``v_proj_weight`` ``(E, vdim)``, all xavier-uniform; ``in_proj_bias`` ``(3E,)`` and
``out_proj.bias`` zeros; ``out_proj`` a ``Linear(E, E)`` (PyTorch's
``NonDynamicallyQuantizableLinear`` is a Linear with another name); with
``add_bias_kv``, ``bias_k`` and ``bias_v`` ``(1, 1, E)`` xavier-normal.

ember always takes PyTorch's general ("math") path: there is no fused fast path, so the
result is the same in training and evaluation, with or without grad.
"""
from __future__ import annotations

from ... import factories as _f
from .. import init
from ..functional.multihead_attention import _canonical_mask, _none_or_dtype, \
    multi_head_attention_forward
from ..parameter import Parameter
from .linear import Linear
from .module import Module

__all__ = ["MultiheadAttention"]


class MultiheadAttention(Module):
    """Attention over ``num_heads`` heads of ``embed_dim / num_heads`` features each
    (Vaswani et al. 2017, "Attention Is All You Need", section 3.2.2).

    Args:
        embed_dim: ``E``, the model's feature size (query's last dim and the output's).
        num_heads: ``H``; must divide ``embed_dim``.
        dropout: dropout on the attention weights in training mode (default 0).
        bias: learn the input and output projection biases (default True).
        add_bias_kv: learn a row appended to key and value (``bias_k``, ``bias_v``).
        add_zero_attn: append a zero row to each head's key and value.
        kdim, vdim: key and value feature sizes (default ``embed_dim``).
        batch_first: inputs and output are ``(N, L, E)`` instead of ``(L, N, E)``.
        device, dtype: where and how the parameters are created.
    Shapes: ``forward(query (L, N, E), key (S, N, kdim), value (S, N, vdim))`` ->
    ``((L, N, E), weights (N, L, S))``; batch first with ``batch_first``; unbatched
    ``(L, E)``, ``(S, kdim)``, ``(S, vdim)`` -> ``((L, E), (L, S))``. Floating dtypes (the
    parameters'); masks bool or floating.
    Raises ValueError for non-positive sizes or ``embed_dim`` not divisible by
    ``num_heads`` (PyTorch raises AssertionError for the latter).
    Reference: torch.nn.MultiheadAttention.
    """

    def __init__(self, embed_dim: int, num_heads: int, dropout: float = 0.0, bias: bool = True,
                 add_bias_kv: bool = False, add_zero_attn: bool = False, kdim=None, vdim=None,
                 batch_first: bool = False, device=None, dtype=None):
        if embed_dim <= 0 or num_heads <= 0:
            raise ValueError(f"embed_dim and num_heads must be greater than 0, got "
                             f"embed_dim={embed_dim} and num_heads={num_heads} instead")
        if embed_dim % num_heads:
            raise ValueError(f"embed_dim must be divisible by num_heads, got embed_dim="
                             f"{embed_dim} and num_heads={num_heads}")
        super().__init__()
        kw = {"device": device, "dtype": dtype}
        self.embed_dim = embed_dim
        self.kdim = kdim if kdim is not None else embed_dim
        self.vdim = vdim if vdim is not None else embed_dim
        self._qkv_same_embed_dim = self.kdim == embed_dim and self.vdim == embed_dim
        self.num_heads = num_heads
        self.dropout = dropout
        self.batch_first = batch_first
        self.head_dim = embed_dim // num_heads
        if self._qkv_same_embed_dim:
            self.in_proj_weight = Parameter(_f.empty(3 * embed_dim, embed_dim, **kw))
            for name in ("q_proj_weight", "k_proj_weight", "v_proj_weight"):
                self.register_parameter(name, None)
        else:
            self.q_proj_weight = Parameter(_f.empty(embed_dim, embed_dim, **kw))
            self.k_proj_weight = Parameter(_f.empty(embed_dim, self.kdim, **kw))
            self.v_proj_weight = Parameter(_f.empty(embed_dim, self.vdim, **kw))
            self.register_parameter("in_proj_weight", None)
        if bias:
            self.in_proj_bias = Parameter(_f.empty(3 * embed_dim, **kw))
        else:
            self.register_parameter("in_proj_bias", None)
        self.out_proj = Linear(embed_dim, embed_dim, bias=bias, **kw)
        if add_bias_kv:
            self.bias_k = Parameter(_f.empty(1, 1, embed_dim, **kw))
            self.bias_v = Parameter(_f.empty(1, 1, embed_dim, **kw))
        else:
            self.bias_k = self.bias_v = None
        self.add_zero_attn = add_zero_attn
        self._reset_parameters()

    def _reset_parameters(self) -> None:
        """Re-draw the parameters with PyTorch's defaults (see the module docstring)."""
        if self._qkv_same_embed_dim:
            init.xavier_uniform_(self.in_proj_weight)
        else:
            for w in (self.q_proj_weight, self.k_proj_weight, self.v_proj_weight):
                init.xavier_uniform_(w)
        if self.in_proj_bias is not None:
            init.constant_(self.in_proj_bias, 0.0)
            init.constant_(self.out_proj.bias, 0.0)
        if self.bias_k is not None:
            init.xavier_normal_(self.bias_k)
            init.xavier_normal_(self.bias_v)

    def forward(self, query, key, value, key_padding_mask=None, need_weights: bool = True,
                attn_mask=None, average_attn_weights: bool = True, is_causal: bool = False):
        """Attend from ``query`` to ``key``/``value``.

        Args:
            query, key, value: see the class docstring for shapes.
            key_padding_mask: ``(N, S)`` (``(S,)`` unbatched): bool, True = ignore that
                key (padding); or float, added to the scores.
            need_weights: also return the attention weights (else None).
            attn_mask: ``(L, S)`` or ``(N * num_heads, L, S)``: bool, True = not allowed
                to attend; or float, added to the scores.
            average_attn_weights: average the weights over heads: ``(N, L, S)``, else
                ``(N, num_heads, L, S)``.
            is_causal: a hint that ``attn_mask`` is the causal mask (it must be given).
        Returns:
            ``(attn_output, attn_weights)``; a query that may attend to no key gives
            zeros (PyTorch gives NaN when ``need_weights``; see
            ``nn.functional.multi_head_attention_forward``).
        Raises ShapeError / DtypeError for inputs and masks of the wrong shape or dtype,
        RuntimeError for ``is_causal`` without ``attn_mask``.
        """
        batched = query.ndim == 3
        key_padding_mask = _canonical_mask(key_padding_mask, "key_padding_mask",
                                           _none_or_dtype(attn_mask), "attn_mask", query.dtype)
        attn_mask = _canonical_mask(attn_mask, "attn_mask", None, "", query.dtype, False)
        if self.batch_first and batched:
            # keep the identities that let the projection run one matmul for q, k and v
            if key is value:
                if query is key:
                    query = key = value = query.transpose(1, 0)
                else:
                    query, key = (x.transpose(1, 0) for x in (query, key))
                    value = key
            else:
                query, key, value = (x.transpose(1, 0) for x in (query, key, value))
        separate = {} if self._qkv_same_embed_dim else {
            "use_separate_proj_weight": True, "q_proj_weight": self.q_proj_weight,
            "k_proj_weight": self.k_proj_weight, "v_proj_weight": self.v_proj_weight}
        out, weights = multi_head_attention_forward(
            query, key, value, self.embed_dim, self.num_heads, self.in_proj_weight,
            self.in_proj_bias, self.bias_k, self.bias_v, self.add_zero_attn, self.dropout,
            self.out_proj.weight, self.out_proj.bias, training=self.training,
            key_padding_mask=key_padding_mask, need_weights=need_weights,
            attn_mask=attn_mask, average_attn_weights=average_attn_weights,
            is_causal=is_causal, **separate)
        if self.batch_first and batched:
            out = out.transpose(1, 0)
        return out, weights

    def extra_repr(self) -> str:
        # PyTorch shows only the submodule (out_proj); the sizes help more
        s = f"embed_dim={self.embed_dim}, num_heads={self.num_heads}"
        if self.dropout:
            s += f", dropout={self.dropout}"
        if not self._qkv_same_embed_dim:
            s += f", kdim={self.kdim}, vdim={self.vdim}"
        if self.in_proj_bias is None:
            s += ", bias=False"
        if self.bias_k is not None:
            s += ", add_bias_kv=True"
        if self.add_zero_attn:
            s += ", add_zero_attn=True"
        if self.batch_first:
            s += ", batch_first=True"
        return s
