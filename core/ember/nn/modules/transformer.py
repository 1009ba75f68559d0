"""The Transformer: ``TransformerEncoderLayer``, ``TransformerDecoderLayer``,
``TransformerEncoder``, ``TransformerDecoder`` and ``Transformer`` (``torch.nn``).

Submodules and parameters have PyTorch's names (``self_attn``, ``multihead_attn``,
``linear1``, ``dropout``, ``linear2``, ``norm1``..``norm3``, ``dropout1``..``dropout3``,
``layers.0....``, ``encoder.norm``, ``decoder.norm``), so a torch ``state_dict`` loads as
is. Each layer is post-norm (``x = norm(x + block(x))``, Vaswani et al. 2017) or, with
``norm_first``, pre-norm (``x = x + block(norm(x))``, Xiong et al. 2020).

Departures from PyTorch, on purpose:

- ember always takes the general ("math") path: there is no fused fast path and no
  nested tensors. ``TransformerEncoder(enable_nested_tensor=...)`` is accepted and
  ignored (``use_nested_tensor`` is always False, and no warning is given about it).
- ``is_causal=None`` (the encoder's and decoder's default) is read as False rather than
  detected by comparing the mask with a causal one: the hint only lets PyTorch pick a
  faster kernel, the result is the same, and the comparison would be data-dependent
  control flow in a trace.
"""
from __future__ import annotations

import copy

from ...ops import namespace as E
from .. import functional as F
from .. import init
from ..functional.multihead_attention import _canonical_mask, _none_or_dtype
from .attention import MultiheadAttention
from .container import ModuleList
from .dropout import Dropout
from .linear import Linear
from .module import Module
from .normalization import LayerNorm

__all__ = ["Transformer", "TransformerEncoder", "TransformerDecoder",
           "TransformerEncoderLayer", "TransformerDecoderLayer"]


def _generate_square_subsequent_mask(sz: int, device=None, dtype=None):
    """``(sz, sz)`` float mask: 0 on and below the diagonal, ``-inf`` above it."""
    return E.triu(E.full((sz, sz), float("-inf"), dtype=dtype, device=device), 1)


def _get_activation_fn(activation):
    if callable(activation):
        return activation
    if activation == "relu":
        return F.relu
    if activation == "gelu":
        return F.gelu
    raise RuntimeError(f"activation should be relu/gelu, not {activation}")


class _Layer(Module):
    """The parts shared by the encoder and decoder layers: the feed-forward block
    ``linear2(dropout(activation(linear1(x))))`` and the norms."""

    def _build(self, d_model, dim_feedforward, dropout, activation, layer_norm_eps,
               norm_first, bias, kw, norms: int) -> None:
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias, **kw)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias, **kw)
        self.norm_first = norm_first
        for k in range(1, norms + 1):
            setattr(self, f"norm{k}", LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **kw))
        for k in range(1, norms + 1):
            setattr(self, f"dropout{k}", Dropout(dropout))
        self.activation = _get_activation_fn(activation)

    def _ff_block(self, x, out_dropout):
        return out_dropout(self.linear2(self.dropout(self.activation(self.linear1(x)))))

    @staticmethod
    def _attend(attn, x, mem, mask, key_padding_mask, is_causal, out_dropout):
        # NOTE: self-attention passes mem = x: MultiheadAttention projects q, k and v in
        # one matmul when query, key and value are one tensor
        return out_dropout(attn(x, mem, mem, attn_mask=mask, key_padding_mask=key_padding_mask,
                                is_causal=is_causal, need_weights=False)[0])


class TransformerEncoderLayer(_Layer):
    """Self-attention then a feed-forward block, each with a residual and a LayerNorm
    (Vaswani et al. 2017, "Attention Is All You Need").

    Args:
        d_model: the feature size ``E``.
        nhead: attention heads (must divide ``d_model``).
        dim_feedforward: hidden size of the feed-forward block (default 2048).
        dropout: dropout probability (attention weights, feed-forward, residuals).
        activation: ``"relu"``, ``"gelu"`` or a callable (default ``F.relu``).
        layer_norm_eps: LayerNorm's eps (default 1e-5).
        batch_first: ``(N, S, E)`` instead of ``(S, N, E)``.
        norm_first: pre-norm (LayerNorm before each block) instead of post-norm.
        bias: biases in the linear layers, the attention and the LayerNorms.
        device, dtype: where and how the parameters are created.
    Shapes: ``forward(src (S, N, E) | (N, S, E) | unbatched (S, E))`` -> same shape;
    floating dtypes (the parameters').
    Raises RuntimeError for an unknown activation name, ValueError when nhead does not
    divide d_model.
    Reference: torch.nn.TransformerEncoderLayer (math path only).
    """

    def __init__(self, d_model: int, nhead: int, dim_feedforward: int = 2048,
                 dropout: float = 0.1, activation=F.relu, layer_norm_eps: float = 1e-5,
                 batch_first: bool = False, norm_first: bool = False, bias: bool = True,
                 device=None, dtype=None):
        super().__init__()
        kw = {"device": device, "dtype": dtype}
        self.self_attn = MultiheadAttention(d_model, nhead, dropout=dropout, bias=bias,
                                            batch_first=batch_first, **kw)
        self._build(d_model, dim_feedforward, dropout, activation, layer_norm_eps,
                    norm_first, bias, kw, norms=2)

    def forward(self, src, src_mask=None, src_key_padding_mask=None, is_causal: bool = False):
        """Args:
            src: ``(S, N, E)``, ``(N, S, E)`` with batch_first, or ``(S, E)``.
            src_mask: ``(S, S)`` or ``(N * nhead, S, S)``; bool (True = not allowed to
                attend) or float (added).
            src_key_padding_mask: ``(N, S)`` (``(S,)`` unbatched); bool (True = padding)
                or float.
            is_causal: a hint that ``src_mask`` is the causal mask (it must be given).
        Returns the layer's output, of ``src``'s shape."""
        src_key_padding_mask = _canonical_mask(src_key_padding_mask, "src_key_padding_mask",
                                               _none_or_dtype(src_mask), "src_mask", src.dtype)
        src_mask = _canonical_mask(src_mask, "src_mask", None, "", src.dtype, False)
        x = src
        if self.norm_first:
            y = self.norm1(x)
            x = x + self._attend(self.self_attn, y, y, src_mask, src_key_padding_mask,
                                 is_causal, self.dropout1)
            return x + self._ff_block(self.norm2(x), self.dropout2)
        x = self.norm1(x + self._attend(self.self_attn, x, x, src_mask, src_key_padding_mask,
                                        is_causal, self.dropout1))
        return self.norm2(x + self._ff_block(x, self.dropout2))


class TransformerDecoderLayer(_Layer):
    """Self-attention, attention over the encoder's output (``memory``), then a
    feed-forward block, each with a residual and a LayerNorm (Vaswani et al. 2017).

    Args: as :class:`TransformerEncoderLayer`.
    Shapes: ``forward(tgt (T, N, E), memory (S, N, E))`` -> ``(T, N, E)``; batch first
    with ``batch_first``; unbatched ``(T, E)``, ``(S, E)``.
    Raises RuntimeError for an unknown activation name, ValueError when nhead does not
    divide d_model.
    Reference: torch.nn.TransformerDecoderLayer (math path only).
    """

    def __init__(self, d_model: int, nhead: int, dim_feedforward: int = 2048,
                 dropout: float = 0.1, activation=F.relu, layer_norm_eps: float = 1e-5,
                 batch_first: bool = False, norm_first: bool = False, bias: bool = True,
                 device=None, dtype=None):
        super().__init__()
        kw = {"device": device, "dtype": dtype}
        self.self_attn = MultiheadAttention(d_model, nhead, dropout=dropout,
                                            batch_first=batch_first, bias=bias, **kw)
        self.multihead_attn = MultiheadAttention(d_model, nhead, dropout=dropout,
                                                 batch_first=batch_first, bias=bias, **kw)
        self._build(d_model, dim_feedforward, dropout, activation, layer_norm_eps,
                    norm_first, bias, kw, norms=3)

    def forward(self, tgt, memory, tgt_mask=None, memory_mask=None, tgt_key_padding_mask=None,
                memory_key_padding_mask=None, tgt_is_causal: bool = False,
                memory_is_causal: bool = False):
        """Args:
            tgt: ``(T, N, E)`` (``(N, T, E)`` batch first, ``(T, E)`` unbatched).
            memory: the encoder's output, ``(S, N, E)`` likewise.
            tgt_mask, memory_mask: ``(T, T)`` and ``(T, S)`` (or with a leading
                ``N * nhead``); bool (True = not allowed) or float (added).
            tgt_key_padding_mask, memory_key_padding_mask: ``(N, T)`` and ``(N, S)``.
            tgt_is_causal, memory_is_causal: hints that the masks are causal.
        Returns ``(T, N, E)`` (tgt's shape)."""
        x = tgt
        sa = self.self_attn
        if self.norm_first:
            y = self.norm1(x)
            x = x + self._attend(sa, y, y, tgt_mask, tgt_key_padding_mask, tgt_is_causal,
                                 self.dropout1)
            x = x + self._attend(self.multihead_attn, self.norm2(x), memory, memory_mask,
                                 memory_key_padding_mask, memory_is_causal, self.dropout2)
            return x + self._ff_block(self.norm3(x), self.dropout3)
        x = self.norm1(x + self._attend(sa, x, x, tgt_mask, tgt_key_padding_mask,
                                        tgt_is_causal, self.dropout1))
        x = self.norm2(x + self._attend(self.multihead_attn, x, memory, memory_mask,
                                        memory_key_padding_mask, memory_is_causal,
                                        self.dropout2))
        return self.norm3(x + self._ff_block(x, self.dropout3))


def _get_clones(module, n: int) -> ModuleList:
    return ModuleList([copy.deepcopy(module) for _ in range(n)])


class TransformerEncoder(Module):
    """A stack of ``num_layers`` deep copies of ``encoder_layer``, then ``norm``.

    Args:
        encoder_layer: the layer to copy (a TransformerEncoderLayer or a module with its
            ``forward(src, src_mask=, src_key_padding_mask=, is_causal=)``).
        num_layers: how many copies (``layers.0`` ... ``layers.{n-1}``).
        norm: applied to the last layer's output (e.g. a LayerNorm), or None.
        enable_nested_tensor, mask_check: accepted and ignored (no fast path in ember).
    Shapes: ``forward(src)`` as the layer's.
    Reference: torch.nn.TransformerEncoder (math path only).
    """

    def __init__(self, encoder_layer, num_layers: int, norm=None,
                 enable_nested_tensor: bool = True, mask_check: bool = True):
        super().__init__()
        self.layers = _get_clones(encoder_layer, num_layers)
        self.num_layers = num_layers
        self.norm = norm
        self.enable_nested_tensor = enable_nested_tensor
        self.use_nested_tensor = False
        self.mask_check = mask_check

    def forward(self, src, mask=None, src_key_padding_mask=None, is_causal=None):
        """Run ``src`` through every layer with the same ``mask`` (``(S, S)`` or
        ``(N * nhead, S, S)``), ``src_key_padding_mask`` (``(N, S)``) and ``is_causal``
        hint (None is read as False), then ``norm``. Returns ``src``'s shape."""
        src_key_padding_mask = _canonical_mask(src_key_padding_mask, "src_key_padding_mask",
                                               _none_or_dtype(mask), "mask", src.dtype)
        mask = _canonical_mask(mask, "mask", None, "", src.dtype, False)
        output = src
        for mod in self.layers:
            output = mod(output, src_mask=mask, is_causal=bool(is_causal),
                         src_key_padding_mask=src_key_padding_mask)
        return output if self.norm is None else self.norm(output)


class TransformerDecoder(Module):
    """A stack of ``num_layers`` deep copies of ``decoder_layer``, then ``norm``.

    Args:
        decoder_layer: the layer to copy (a TransformerDecoderLayer or alike).
        num_layers: how many copies (``layers.0`` ... ``layers.{n-1}``).
        norm: applied to the last layer's output, or None.
    Shapes: ``forward(tgt, memory)`` as the layer's.
    Reference: torch.nn.TransformerDecoder.
    """

    def __init__(self, decoder_layer, num_layers: int, norm=None):
        super().__init__()
        self.layers = _get_clones(decoder_layer, num_layers)
        self.num_layers = num_layers
        self.norm = norm

    def forward(self, tgt, memory, tgt_mask=None, memory_mask=None, tgt_key_padding_mask=None,
                memory_key_padding_mask=None, tgt_is_causal=None,
                memory_is_causal: bool = False):
        """Run ``tgt`` through every layer (each attending to ``memory``) with the same
        masks (see TransformerDecoderLayer.forward; ``tgt_is_causal=None`` is read as
        False), then ``norm``. Returns ``tgt``'s shape."""
        output = tgt
        for mod in self.layers:
            output = mod(output, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                         tgt_key_padding_mask=tgt_key_padding_mask,
                         memory_key_padding_mask=memory_key_padding_mask,
                         tgt_is_causal=bool(tgt_is_causal), memory_is_causal=memory_is_causal)
        return output if self.norm is None else self.norm(output)


class Transformer(Module):
    """Encoder-decoder Transformer (Vaswani et al. 2017): ``num_encoder_layers``
    encoder layers and ``num_decoder_layers`` decoder layers, each stack ending with a
    LayerNorm (``encoder.norm``, ``decoder.norm``); every weight matrix is re-drawn
    xavier-uniform, as PyTorch does.

    Args:
        d_model (512), nhead (8), dim_feedforward (2048), dropout (0.1), activation
            (``F.relu``), layer_norm_eps (1e-5), batch_first, norm_first, bias, device,
            dtype: as :class:`TransformerEncoderLayer`.
        num_encoder_layers, num_decoder_layers: stack depths (default 6 each).
        custom_encoder, custom_decoder: modules used instead of the built stacks.
    Shapes: ``forward(src (S, N, E), tgt (T, N, E))`` -> ``(T, N, E)``; batch first with
    ``batch_first``; unbatched ``(S, E)``, ``(T, E)`` -> ``(T, E)``.
    Raises RuntimeError when src and tgt differ in batch size or their feature size is
    not d_model.
    Reference: torch.nn.Transformer (math path only).
    """

    def __init__(self, d_model: int = 512, nhead: int = 8, num_encoder_layers: int = 6,
                 num_decoder_layers: int = 6, dim_feedforward: int = 2048,
                 dropout: float = 0.1, activation=F.relu, custom_encoder=None,
                 custom_decoder=None, layer_norm_eps: float = 1e-5, batch_first: bool = False,
                 norm_first: bool = False, bias: bool = True, device=None, dtype=None):
        super().__init__()
        kw = {"device": device, "dtype": dtype}
        layer_args = (d_model, nhead, dim_feedforward, dropout, activation, layer_norm_eps,
                      batch_first, norm_first, bias)
        if custom_encoder is not None:
            self.encoder = custom_encoder
        else:
            self.encoder = TransformerEncoder(
                TransformerEncoderLayer(*layer_args, **kw), num_encoder_layers,
                LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **kw))
        if custom_decoder is not None:
            self.decoder = custom_decoder
        else:
            self.decoder = TransformerDecoder(
                TransformerDecoderLayer(*layer_args, **kw), num_decoder_layers,
                LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **kw))
        self._reset_parameters()
        self.d_model = d_model
        self.nhead = nhead
        self.batch_first = batch_first

    def forward(self, src, tgt, src_mask=None, tgt_mask=None, memory_mask=None,
                src_key_padding_mask=None, tgt_key_padding_mask=None,
                memory_key_padding_mask=None, src_is_causal=None, tgt_is_causal=None,
                memory_is_causal: bool = False):
        """Encode ``src`` into ``memory``, then decode ``tgt`` attending to it.

        Masks: ``src_mask`` ``(S, S)``, ``tgt_mask`` ``(T, T)`` (e.g.
        :meth:`generate_square_subsequent_mask`), ``memory_mask`` ``(T, S)``, each also
        ``(N * nhead, ., .)``; key padding masks ``(N, S)``, ``(N, T)``, ``(N, S)``. Bool
        masks mark with True what may NOT be attended; float masks are added.
        Returns ``(T, N, E)`` (tgt's shape)."""
        batched = src.ndim == 3
        b = 0 if self.batch_first else 1
        if batched and src.shape[b] != tgt.shape[b]:
            raise RuntimeError(f"the batch number of src and tgt must be equal, got "
                               f"{src.shape[b]} and {tgt.shape[b]}")
        if src.shape[-1] != self.d_model or tgt.shape[-1] != self.d_model:
            raise RuntimeError(f"the feature number of src and tgt must be equal to d_model "
                               f"= {self.d_model}, got {src.shape[-1]} and {tgt.shape[-1]}")
        memory = self.encoder(src, mask=src_mask, src_key_padding_mask=src_key_padding_mask,
                              is_causal=src_is_causal)
        return self.decoder(tgt, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                            tgt_key_padding_mask=tgt_key_padding_mask,
                            memory_key_padding_mask=memory_key_padding_mask,
                            tgt_is_causal=tgt_is_causal, memory_is_causal=memory_is_causal)

    @staticmethod
    def generate_square_subsequent_mask(sz: int, device=None, dtype=None):
        """The causal mask for a sequence of ``sz``: ``(sz, sz)`` float (default dtype),
        0 where position j <= i may be attended by i, ``-inf`` above the diagonal."""
        return _generate_square_subsequent_mask(sz, device=device, dtype=dtype)

    def _reset_parameters(self) -> None:
        """Xavier-uniform for every parameter with more than one dim (PyTorch's)."""
        for p in self.parameters():
            if p.ndim > 1:
                init.xavier_uniform_(p)
