"""Transformer layers and stacks: PyTorch's parameter names, forward against a numpy
float64 implementation (post-norm and pre-norm, masks, batch_first, unbatched), a tiny
encoder trained with Adam, tracing, gradients and errors."""
from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

import ember as E
import ember.jit
from ember import nn
from ember.autograd import gradcheck
from ember.nn import functional as F
from helpers import assert_close, to_np

_ENC_KEYS = ["self_attn.in_proj_weight", "self_attn.in_proj_bias", "self_attn.out_proj.weight",
             "self_attn.out_proj.bias", "linear1.weight", "linear1.bias", "linear2.weight",
             "linear2.bias", "norm1.weight", "norm1.bias", "norm2.weight", "norm2.bias"]
_DEC_KEYS = (_ENC_KEYS[:4] + [k.replace("self_attn", "multihead_attn") for k in _ENC_KEYS[:4]]
             + _ENC_KEYS[4:] + ["norm3.weight", "norm3.bias"])


def _np(m) -> dict:
    return {k: to_np(v.detach()) for k, v in m.state_dict().items()}


def _np_attn(x, mem, p, pre, H, bias):
    """torch's MHA (sequence first) from the state_dict ``p`` under prefix ``pre``;
    ``bias`` is an additive (N, H or 1, L, S) mask."""
    wq, wk, wv = np.split(p[pre + "in_proj_weight"], 3)
    bq, bk, bv = np.split(p[pre + "in_proj_bias"], 3)
    (L, N, E_), S, hd = x.shape, mem.shape[0], x.shape[2] // H
    q = (x @ wq.T + bq).reshape(L, N, H, hd).transpose(1, 2, 0, 3)
    k = (mem @ wk.T + bk).reshape(S, N, H, hd).transpose(1, 2, 0, 3)
    v = (mem @ wv.T + bv).reshape(S, N, H, hd).transpose(1, 2, 0, 3)
    s = q @ k.transpose(0, 1, 3, 2) / math.sqrt(hd) + bias
    w = np.exp(s - s.max(-1, keepdims=True))
    o = (w / w.sum(-1, keepdims=True) @ v).transpose(2, 0, 1, 3).reshape(L, N, E_)
    return o @ p[pre + "out_proj.weight"].T + p[pre + "out_proj.bias"]


def _np_ln(x, p, pre, eps=1e-5):
    mu, var = x.mean(-1, keepdims=True), x.var(-1, keepdims=True)
    return (x - mu) / np.sqrt(var + eps) * p[pre + "weight"] + p[pre + "bias"]


def _np_ff(x, p, pre, act):
    h = x @ p[pre + "linear1.weight"].T + p[pre + "linear1.bias"]
    h = np.maximum(h, 0) if act == "relu" else \
        0.5 * h * (1 + np.vectorize(math.erf)(h / math.sqrt(2)))
    return h @ p[pre + "linear2.weight"].T + p[pre + "linear2.bias"]


def _np_layer(x, mem, p, pre, H, masks, norm_first, act):
    """One encoder (mem None) or decoder layer; ``masks`` are the additive biases of its
    attention blocks, in order."""
    blocks = [lambda y: _np_attn(y, y, p, pre + "self_attn.", H, masks[0])]
    if mem is not None:
        blocks.append(lambda y: _np_attn(y, mem, p, pre + "multihead_attn.", H, masks[1]))
    blocks.append(lambda y: _np_ff(y, p, pre, act))
    for i, block in enumerate(blocks, 1):
        norm = pre + f"norm{i}."
        x = x + block(_np_ln(x, p, norm)) if norm_first else _np_ln(x + block(x), p, norm)
    return x


def _kpm_bias(kpm):
    return np.where(kpm, -np.inf, 0.0)[:, None, None, :]


def test_parameter_names_follow_pytorch():
    assert list(nn.TransformerEncoderLayer(8, 2, 16).state_dict()) == _ENC_KEYS
    assert list(nn.TransformerDecoderLayer(8, 2, 16).state_dict()) == _DEC_KEYS
    keys = list(nn.Transformer(8, 2, 1, 2, 16).state_dict())
    assert keys == (["encoder.layers.0." + k for k in _ENC_KEYS] + ["encoder.norm.weight",
                    "encoder.norm.bias"] + ["decoder.layers.0." + k for k in _DEC_KEYS]
                    + ["decoder.layers.1." + k for k in _DEC_KEYS]
                    + ["decoder.norm.weight", "decoder.norm.bias"])
    assert list(nn.TransformerEncoderLayer(8, 2, 16, bias=False).state_dict()) == [
        "self_attn.in_proj_weight", "self_attn.out_proj.weight", "linear1.weight",
        "linear2.weight", "norm1.weight", "norm2.weight"]


def test_transformer_init_is_xavier_and_layers_are_copies():
    E.manual_seed(0)
    m = nn.Transformer(16, 2, 2, 1, 32, dtype=E.float64)
    w = to_np(m.encoder.layers[1].linear1.weight.detach())
    bound = math.sqrt(6 / (16 + 32))
    assert np.abs(w).max() <= bound and np.abs(w).max() > 0.95 * bound
    a, b = m.encoder.layers[0].linear1.weight, m.encoder.layers[1].linear1.weight
    assert a is not b and not np.array_equal(to_np(a.detach()), to_np(b.detach()))
    assert m.encoder.layers[0].linear1.bias.dtype is E.float64


@pytest.mark.parametrize("norm_first", [False, True])
@pytest.mark.parametrize("activation", ["relu", "gelu"])
def test_transformer_matches_reference(norm_first, activation):
    E.manual_seed(0)
    rng = np.random.default_rng(0)
    H, S, T, N = 2, 5, 4, 3
    m = nn.Transformer(8, H, 1, 1, 12, activation=activation, norm_first=norm_first,
                       dtype=E.float64).eval()
    p = _np(m)
    for k in p:  # non-trivial LayerNorm affines
        if "norm" in k:
            p[k] = rng.standard_normal(p[k].shape)
    m.load_state_dict({k: E.tensor(v) for k, v in p.items()})
    src, tgt = rng.standard_normal((S, N, 8)), rng.standard_normal((T, N, 8))
    skpm = rng.random((N, S)) > 0.7
    skpm[:, 0] = False
    causal = nn.Transformer.generate_square_subsequent_mask(T, dtype=E.float64)
    out = m(E.tensor(src), E.tensor(tgt), tgt_mask=causal, src_key_padding_mask=E.tensor(skpm),
            memory_key_padding_mask=E.tensor(skpm))
    mem = _np_layer(src, None, p, "encoder.layers.0.", H, [_kpm_bias(skpm)], norm_first,
                    activation)
    mem = _np_ln(mem, p, "encoder.norm.")
    ref = _np_layer(tgt, mem, p, "decoder.layers.0.", H, [to_np(causal), _kpm_bias(skpm)],
                    norm_first, activation)
    assert_close(out.detach(), _np_ln(ref, p, "decoder.norm."))


def test_generate_square_subsequent_mask():
    m = nn.Transformer.generate_square_subsequent_mask(3)
    assert m.dtype is E.float32
    np.testing.assert_array_equal(to_np(m), [[0, -np.inf, -np.inf], [0, 0, -np.inf], [0, 0, 0]])


def test_batch_first_unbatched_and_bool_masks_agree():
    E.manual_seed(0)
    rng = np.random.default_rng(1)
    seq = nn.Transformer(8, 2, 1, 1, 12, dtype=E.float64).eval()
    bf = nn.Transformer(8, 2, 1, 1, 12, batch_first=True, dtype=E.float64).eval()
    bf.load_state_dict(seq.state_dict())
    src, tgt = E.tensor(rng.standard_normal((5, 2, 8))), E.tensor(rng.standard_normal((4, 2, 8)))
    fmask = nn.Transformer.generate_square_subsequent_mask(4, dtype=E.float64)
    bmask = E.ones(4, 4, dtype=E.bool_).triu(1)  # True = not allowed
    want = seq(src, tgt, tgt_mask=fmask)
    assert_close(seq(src, tgt, tgt_mask=bmask, tgt_is_causal=True).detach(),
                 to_np(want.detach()))
    got = bf(src.transpose(0, 1), tgt.transpose(0, 1), tgt_mask=fmask)
    assert_close(got.transpose(0, 1).detach(), to_np(want.detach()))
    one = seq(src[:, 1], tgt[:, 1], tgt_mask=fmask)
    assert_close(one.detach(), to_np(want.detach())[:, 1])


def test_encoder_stack_norm_and_options():
    E.manual_seed(0)
    layer = nn.TransformerEncoderLayer(8, 2, 12, dropout=0.0, activation=F.gelu,
                                       batch_first=True, dtype=E.float64)
    enc = nn.TransformerEncoder(layer, 2, norm=nn.LayerNorm(8, dtype=E.float64),
                                enable_nested_tensor=True)
    assert not enc.use_nested_tensor and enc.num_layers == 2
    x = E.tensor(np.random.default_rng(2).standard_normal((2, 5, 8)))
    h = x
    for mod in enc.layers:
        h = mod(h, is_causal=False)
    assert_close(enc(x).detach(), to_np(enc.norm(h).detach()))
    enc.norm = None
    assert_close(enc(x).detach(), to_np(h.detach()))
    # a callable module as activation
    tanh = nn.TransformerEncoderLayer(8, 2, 12, activation=nn.Tanh(), dropout=0.0)
    assert isinstance(tanh.activation, nn.Tanh)
    tanh(E.zeros(3, 2, 8))


def test_dropout_acts_in_training_only():
    E.manual_seed(0)
    m = nn.TransformerEncoderLayer(8, 2, 12, dropout=0.5, dtype=E.float64)
    x = E.tensor(np.random.default_rng(3).standard_normal((4, 2, 8)))
    assert not np.allclose(to_np(m(x).detach()), to_np(m(x).detach()))
    m.eval()
    np.testing.assert_array_equal(to_np(m(x).detach()), to_np(m(x).detach()))


def test_training_a_tiny_encoder_lowers_the_loss():
    """Copy task: each position's output should predict its own token."""
    E.manual_seed(0)
    rng = np.random.default_rng(4)
    vocab, d = 6, 16
    emb = nn.Embedding(vocab, d)
    enc = nn.TransformerEncoder(nn.TransformerEncoderLayer(d, 2, 32, dropout=0.0,
                                                           batch_first=True), 1)
    head = nn.Linear(d, vocab)
    params = [*emb.parameters(), *enc.parameters(), *head.parameters()]
    opt = E.optim.Adam(params, lr=1e-2)
    tokens = E.tensor(rng.integers(0, vocab, (8, 5)))
    losses = []
    for _ in range(30):
        logits = head(enc(emb(tokens)))
        loss = F.cross_entropy(logits.reshape(-1, vocab), tokens.reshape(-1))
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    assert losses[-1] < 0.3 * losses[0]


def test_trace_of_encoder_layer_matches_eager_values_and_gradients():
    E.manual_seed(0)
    rng = np.random.default_rng(5)
    m = nn.TransformerEncoderLayer(8, 2, 12, dtype=E.float64).eval()
    mask = nn.Transformer.generate_square_subsequent_mask(5, dtype=E.float64)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        tm = ember.jit.trace(m, (E.tensor(rng.standard_normal((5, 3, 8))), mask))
    x = E.tensor(rng.standard_normal((5, 3, 8)), requires_grad=True)
    wrt = [x, *m.parameters()]
    got, want = tm(x, mask), m(x, mask)
    assert_close(got.detach(), to_np(want.detach()))
    for a, b in zip(E.autograd.grad(got.pow(2).sum(), wrt),
                    E.autograd.grad(want.pow(2).sum(), wrt)):
        assert_close(a, to_np(b))


def test_decoder_layer_gradcheck():
    E.manual_seed(0)
    rng = np.random.default_rng(6)
    m = nn.TransformerDecoderLayer(4, 2, 6, dropout=0.0, norm_first=True, dtype=E.float64)
    tgt = E.tensor(rng.standard_normal((3, 1, 4)), requires_grad=True)
    mem = E.tensor(rng.standard_normal((2, 1, 4)), requires_grad=True)
    causal = nn.Transformer.generate_square_subsequent_mask(3, dtype=E.float64)
    assert gradcheck(lambda t, s: m(t, s, tgt_mask=causal), [tgt, mem])


def test_errors():
    with pytest.raises(RuntimeError, match="activation should be relu/gelu, not tanh"):
        nn.TransformerEncoderLayer(8, 2, activation="tanh")
    with pytest.raises(ValueError, match="divisible by num_heads"):
        nn.TransformerDecoderLayer(8, 3)
    m = nn.Transformer(8, 2, 1, 1, 12)
    with pytest.raises(RuntimeError, match="batch number of src and tgt must be equal"):
        m(E.zeros(5, 2, 8), E.zeros(4, 3, 8))
    with pytest.raises(RuntimeError, match="feature number of src and tgt must be equal to "
                                           "d_model = 8"):
        m(E.zeros(5, 2, 8), E.zeros(4, 2, 6))
    with pytest.raises(RuntimeError, match="Need attn_mask if specifying the is_causal hint"):
        m.encoder.layers[0](E.zeros(5, 2, 8), is_causal=True)
