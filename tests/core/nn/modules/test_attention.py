"""MultiheadAttention: parameter names, shapes and init as PyTorch's, forward against a
numpy float64 implementation of torch's equations (masks, kdim/vdim, bias_kv, zero
attention, batch_first, unbatched, weight averaging), gradients, dropout and errors."""
from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

import ember as E
from ember import nn
from ember.autograd import gradcheck, gradgradcheck
from ember.errors import DtypeError, ShapeError
from helpers import assert_close, to_np


def _additive(mask):
    return np.where(mask, -np.inf, 0.0) if mask.dtype == bool else mask


def np_mha(q, k, v, p, H, kpm=None, am=None, average=True):
    """torch's MultiheadAttention on sequence-first batched numpy inputs: ``p`` holds
    the state_dict as numpy arrays; masks use torch's sense (True = masked out)."""
    L, N, E_ = q.shape
    if "in_proj_weight" in p:
        wq, wk, wv = np.split(p["in_proj_weight"], 3)
    else:
        wq, wk, wv = p["q_proj_weight"], p["k_proj_weight"], p["v_proj_weight"]
    bq, bk, bv = np.split(p.get("in_proj_bias", np.zeros(3 * E_)), 3)
    Q, K, V = q @ wq.T + bq, k @ wk.T + bk, v @ wv.T + bv
    if "bias_k" in p:
        K = np.concatenate([K, np.broadcast_to(p["bias_k"], (1, N, E_))])
        V = np.concatenate([V, np.broadcast_to(p["bias_v"], (1, N, E_))])
    hd = E_ // H
    Q, K, V = (x.reshape(x.shape[0], N, H, hd).transpose(1, 2, 0, 3) for x in (Q, K, V))
    if p.get("zero_attn"):
        K = np.concatenate([K, np.zeros((N, H, 1, hd))], axis=2)
        V = np.concatenate([V, np.zeros((N, H, 1, hd))], axis=2)
    S0, S = k.shape[0], K.shape[2]
    bias = np.zeros((N, H, L, S))  # the appended columns (bias_k, zero attn) stay 0
    if am is not None:
        am = _additive(am)
        bias[..., :S0] += am if am.ndim == 2 else am.reshape(N, H, L, S0)
    if kpm is not None:
        bias[..., :S0] += _additive(kpm)[:, None, None, :]
    s = Q @ K.transpose(0, 1, 3, 2) / math.sqrt(hd) + bias
    dead = np.all(s == -np.inf, axis=-1, keepdims=True)
    s = np.where(dead, 0.0, s)
    e = np.exp(s - s.max(-1, keepdims=True))
    w = np.where(dead, 0.0, e / e.sum(-1, keepdims=True))
    o = (w @ V).transpose(2, 0, 1, 3).reshape(L, N, E_)
    out = o @ p["out_proj.weight"].T + p.get("out_proj.bias", 0.0)
    return out, (w.mean(1) if average else w)


def _params(rng, E_, kdim=None, vdim=None, bias=True, bias_kv=False):
    """Fixed numpy weights under torch's state_dict names."""
    p = {}
    if kdim is None and vdim is None:
        p["in_proj_weight"] = rng.standard_normal((3 * E_, E_)) * 0.5
    else:
        p["q_proj_weight"] = rng.standard_normal((E_, E_)) * 0.5
        p["k_proj_weight"] = rng.standard_normal((E_, kdim)) * 0.5
        p["v_proj_weight"] = rng.standard_normal((E_, vdim)) * 0.5
    if bias:
        p["in_proj_bias"] = rng.standard_normal(3 * E_)
    if bias_kv:
        p["bias_k"] = rng.standard_normal((1, 1, E_))
        p["bias_v"] = rng.standard_normal((1, 1, E_))
    p["out_proj.weight"] = rng.standard_normal((E_, E_)) * 0.5
    if bias:
        p["out_proj.bias"] = rng.standard_normal(E_)
    return p


def _module(p, E_, H, **kw):
    m = nn.MultiheadAttention(E_, H, dtype=E.float64, **kw)
    m.load_state_dict({k: E.tensor(v) for k, v in p.items() if k != "zero_attn"})
    return m


def test_parameter_names_shapes_and_init_follow_pytorch():
    E.manual_seed(0)
    m = nn.MultiheadAttention(64, 4)
    assert [(n, tuple(t.shape)) for n, t in m.state_dict().items()] == [
        ("in_proj_weight", (192, 64)), ("in_proj_bias", (192,)),
        ("out_proj.weight", (64, 64)), ("out_proj.bias", (64,))]
    assert m.q_proj_weight is None and m.bias_k is None and m.head_dim == 16
    bound = math.sqrt(6 / (64 + 192))  # xavier_uniform over the packed (3E, E) matrix
    w = to_np(m.in_proj_weight.detach())
    assert np.abs(w).max() <= bound and np.abs(w).max() > 0.98 * bound
    assert not to_np(m.in_proj_bias.detach()).any() and not to_np(m.out_proj.bias.detach()).any()
    m = nn.MultiheadAttention(8, 2, bias=False, add_bias_kv=True, kdim=3, vdim=5,
                              dtype=E.float64)
    assert [(n, tuple(t.shape)) for n, t in m.state_dict().items()] == [
        ("q_proj_weight", (8, 8)), ("k_proj_weight", (8, 3)), ("v_proj_weight", (8, 5)),
        ("bias_k", (1, 1, 8)), ("bias_v", (1, 1, 8)), ("out_proj.weight", (8, 8))]
    assert m.in_proj_weight is None and m.in_proj_bias is None and m.out_proj.bias is None
    assert m.bias_k.dtype is E.float64
    assert repr(m).startswith("MultiheadAttention(\n  embed_dim=8, num_heads=2, kdim=3, vdim=5, "
                              "bias=False, add_bias_kv=True\n  (out_proj): Linear(")


_MASKS = {
    "none": lambda rng, N, H, L, S: (None, None),
    "kpm_bool": lambda rng, N, H, L, S: (rng.random((N, S)) > 0.6, None),
    "kpm_float": lambda rng, N, H, L, S: (rng.standard_normal((N, S)), None),
    "am2_bool": lambda rng, N, H, L, S: (None, rng.random((L, S)) > 0.7),
    "am3_float": lambda rng, N, H, L, S: (None, rng.standard_normal((N * H, L, S))),
    "both_bool": lambda rng, N, H, L, S: (rng.random((N, S)) > 0.7,
                                          rng.random((N * H, L, S)) > 0.7),
    "dead_rows": lambda rng, N, H, L, S: (None, np.eye(L, S, dtype=bool) | (
        np.arange(L)[:, None] == 1)),
}


@pytest.mark.parametrize("mask", list(_MASKS))
@pytest.mark.parametrize("cfg", ["self", "cross", "kvdim", "bias_kv_zero_attn", "no_bias"])
def test_forward_matches_reference(cfg, mask):
    rng = np.random.default_rng(0)
    E_, H, L, S, N = 8, 2, 4, 5, 3
    kdim, vdim = (3, 5) if cfg == "kvdim" else (None, None)
    p = _params(rng, E_, kdim, vdim, bias=cfg != "no_bias", bias_kv=cfg == "bias_kv_zero_attn")
    extra = {"add_bias_kv": True, "add_zero_attn": True} if cfg == "bias_kv_zero_attn" else {}
    m = _module(p, E_, H, kdim=kdim, vdim=vdim, bias=cfg != "no_bias", **extra)
    p["zero_attn"] = bool(extra)
    q = rng.standard_normal((L, N, E_))
    if cfg == "self":
        S = L
        k = v = q
    else:
        k = rng.standard_normal((S, N, kdim or E_))
        v = k if cfg == "cross" else rng.standard_normal((S, N, vdim or E_))
    kpm, am = _MASKS[mask](rng, N, H, L, S)
    out_ref, w_ref = np_mha(q, k, v, p, H, kpm, am)
    tq = E.tensor(q)
    tk = tq if cfg == "self" else E.tensor(k)
    tv = tk if v is k else E.tensor(v)
    kw = {"key_padding_mask": None if kpm is None else E.tensor(kpm),
          "attn_mask": None if am is None else E.tensor(am)}
    out, w = m(tq, tk, tv, **kw)
    assert_close(out.detach(), out_ref)
    assert_close(w.detach(), w_ref)
    out, w = m(tq, tk, tv, need_weights=False, **kw)
    assert w is None
    assert_close(out.detach(), out_ref)


def test_batch_first_unbatched_and_per_head_weights():
    rng = np.random.default_rng(1)
    E_, H, L, S, N = 6, 3, 4, 5, 2
    p = _params(rng, E_)
    q, k = rng.standard_normal((L, N, E_)), rng.standard_normal((S, N, E_))
    am = rng.random((L, S)) > 0.7
    out_ref, w_ref = np_mha(q, k, k, p, H, am=am, average=False)
    m = _module(p, E_, H, batch_first=True)
    bq, bk = E.tensor(q.transpose(1, 0, 2)), E.tensor(k.transpose(1, 0, 2))
    out, w = m(bq, bk, bk, attn_mask=E.tensor(am), average_attn_weights=False)
    assert tuple(w.shape) == (N, H, L, S)
    assert_close(out.detach(), out_ref.transpose(1, 0, 2))
    assert_close(w.detach(), w_ref)
    # unbatched: (L, E) with a (H, L, S) mask; batch_first does not apply
    am3 = rng.standard_normal((H, L, S))
    out_ref, w_ref = np_mha(q[:, :1], k[:, :1], k[:, :1], p, H, am=am3)
    for bf in (False, True):
        m = _module(p, E_, H, batch_first=bf)
        kpm = E.zeros(S, dtype=E.float64)
        out, w = m(E.tensor(q[:, 0]), E.tensor(k[:, 0]), E.tensor(k[:, 0]),
                   attn_mask=E.tensor(am3), key_padding_mask=kpm)
        assert_close(out.detach(), out_ref[:, 0])
        assert_close(w.detach(), w_ref[0])


def test_is_causal_hint_uses_the_causal_mask():
    rng = np.random.default_rng(2)
    p = _params(rng, 4)
    m = _module(p, 4, 2)
    q = rng.standard_normal((5, 2, 4))
    causal = np.triu(np.ones((5, 5), bool), 1)
    ref, _ = np_mha(q, q, q, p, 2, am=causal)
    x = E.tensor(q)
    for need in (False, True):
        out, _ = m(x, x, x, attn_mask=E.tensor(causal), is_causal=True, need_weights=need)
        assert_close(out.detach(), ref)
    with pytest.raises(RuntimeError, match="Need attn_mask if specifying the is_causal hint"):
        m(x, x, x, is_causal=True)


def test_dropout_acts_in_training_only():
    rng = np.random.default_rng(3)
    p = _params(rng, 4)
    m = _module(p, 4, 2, dropout=0.5)
    x = E.tensor(rng.standard_normal((6, 3, 4)))
    ref, _ = np_mha(to_np(x), to_np(x), to_np(x), p, 2)
    E.manual_seed(0)
    _, w = m(x, x, x, average_attn_weights=False)
    w = to_np(w.detach())
    assert (w == 0).mean() > 0.2 and set(np.unique(w[w > 0] > 0)) == {True}
    m.eval()
    assert_close(m(x, x, x)[0].detach(), ref)


@pytest.mark.parametrize("cfg", ["self", "kvdim_bias_kv"])
def test_gradcheck_and_gradgradcheck(cfg):
    rng = np.random.default_rng(4)
    kv = cfg == "kvdim_bias_kv"
    m = _module(_params(rng, 4, 3 if kv else None, 2 if kv else None, bias_kv=kv), 4, 2,
                kdim=3 if kv else None, vdim=2 if kv else None, add_bias_kv=kv,
                add_zero_attn=kv)
    q = E.tensor(rng.standard_normal((3, 2, 4)), requires_grad=True)
    k = E.tensor(rng.standard_normal((4, 2, 3 if kv else 4)), requires_grad=True)
    v = E.tensor(rng.standard_normal((4, 2, 2 if kv else 4)), requires_grad=True)
    kpm = E.tensor(np.array([[False, True, False, False], [False, False, False, True]]))
    params = list(m.parameters())

    def fn(q, k, v, *ps):  # ps are m's own parameters: gradcheck perturbs them in place
        out, w = m(q, k, v, key_padding_mask=kpm)
        return out.sum(-1) + w.sum(-1).sum(-1)

    assert gradcheck(fn, [q, k, v, *params])
    assert gradgradcheck(lambda q, k, v: m(q, k, v, key_padding_mask=kpm)[0], [q, k, v])


def test_mismatched_mask_types_warn():
    m = nn.MultiheadAttention(4, 2)
    x = E.zeros(3, 2, 4)
    with pytest.warns(UserWarning, match="mismatched key_padding_mask and attn_mask"):
        m(x, x, x, key_padding_mask=E.zeros(2, 3, dtype=E.bool_), attn_mask=E.zeros(3, 3))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        m(x, x, x, key_padding_mask=E.zeros(2, 3), attn_mask=E.zeros(3, 3))


@pytest.mark.parametrize("make, exc, match", [
    (lambda: nn.MultiheadAttention(0, 2), ValueError, "must be greater than 0"),
    (lambda: nn.MultiheadAttention(6, 4), ValueError, "embed_dim must be divisible by num_heads"),
])
def test_constructor_errors(make, exc, match):
    with pytest.raises(exc, match=match):
        make()


@pytest.mark.parametrize("args, kw, exc, match", [
    (((4, 2, 4, 1),) * 3, {}, ShapeError, "unbatched 2D or batched 3D"),
    (((3, 2, 4), (5, 4), (5, 4)), {}, ShapeError, "expected `key` and `value` to be 3-D"),
    (((3, 2, 4), (5, 2, 4), (5, 2, 4)), {"key_padding_mask": (2, 5, 1)}, ShapeError,
     "`key_padding_mask` to be `None` or 2-D"),
    (((3, 2, 4), (5, 2, 4), (5, 2, 4)), {"key_padding_mask": (2, 4)}, ShapeError,
     r"key_padding_mask of shape \(N, S\) = \(2, 5\)"),
    (((3, 2, 4), (5, 2, 4), (5, 2, 4)), {"attn_mask": (3, 4)}, ShapeError,
     r"2D attn_mask is \(3, 4\), but should be \(3, 5\)"),
    (((3, 2, 4), (5, 2, 4), (5, 2, 4)), {"attn_mask": (2, 3, 5)}, ShapeError,
     r"3D attn_mask is \(2, 3, 5\), but should be \(4, 3, 5\)"),
    (((3, 4), (5, 4), (5, 4)), {"attn_mask": (4, 3, 5)}, ShapeError,
     r"Expected `attn_mask` shape to be \(2, 3, 5\)"),
    (((3, 2, 6), (5, 2, 6), (5, 2, 6)), {}, ShapeError, "embedding dimension of 4, but got 6"),
    (((3, 2, 4), (5, 2, 3), (5, 2, 3)), {}, ShapeError, "use_separate_proj_weight"),
    (((3, 2, 4), (5, 2, 4), (6, 2, 4)), {}, ShapeError, "does not match value shape"),
])
def test_forward_shape_errors(args, kw, exc, match):
    m = nn.MultiheadAttention(4, 2)
    masks = {k: E.zeros(v, dtype=E.bool_) for k, v in kw.items()}
    with pytest.raises(exc, match=match):
        m(*(E.zeros(s) for s in args), **masks)


def test_mask_dtype_error():
    m = nn.MultiheadAttention(4, 2)
    x = E.zeros(3, 2, 4)
    with pytest.raises(DtypeError, match="only bool and floating types of attn_mask"):
        m(x, x, x, attn_mask=E.zeros(3, 3, dtype=E.int64))
    with pytest.raises(DtypeError, match="key_padding_mask"):
        m(x, x, x, key_padding_mask=E.zeros(2, 3, dtype=E.int32))
