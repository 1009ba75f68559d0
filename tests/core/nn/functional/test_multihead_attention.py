"""multi_head_attention_forward: the arguments nn.MultiheadAttention does not reach
(static_k/static_v, explicit weights), identity projections against numpy, the is_causal
hint, gradients to second order, and errors. The module's tests
(tests/core/nn/modules/test_attention.py) hold the full numpy reference."""
from __future__ import annotations

import math

import numpy as np
import pytest

import ember as E
from ember.autograd import gradcheck, gradgradcheck
from ember.errors import ShapeError
from ember.nn import functional as F
from helpers import assert_close

mha = F.multi_head_attention_forward


def _weights(rng, e, bias=True):
    t = (lambda *s: E.tensor(rng.standard_normal(s) * 0.5, requires_grad=True))
    return {"in_proj_weight": t(3 * e, e), "in_proj_bias": t(3 * e) if bias else None,
            "out_proj_weight": t(e, e), "out_proj_bias": t(e) if bias else None}


def _call(q, k, v, w, heads, **kw):
    return mha(q, k, v, q.shape[-1], heads, w["in_proj_weight"], w["in_proj_bias"],
               kw.pop("bias_k", None), kw.pop("bias_v", None), kw.pop("add_zero_attn", False),
               kw.pop("dropout_p", 0.0), w["out_proj_weight"], w["out_proj_bias"], **kw)


def test_identity_projections_with_one_head_are_plain_attention():
    rng = np.random.default_rng(0)
    e, L, S = 4, 3, 5
    eye = np.eye(e)
    w = {"in_proj_weight": E.tensor(np.concatenate([eye, eye, eye])), "in_proj_bias": None,
         "out_proj_weight": E.tensor(eye), "out_proj_bias": None}
    q, k, v = rng.standard_normal((L, e)), rng.standard_normal((S, e)), rng.standard_normal((S, e))
    s = q @ k.T / math.sqrt(e)
    p = np.exp(s - s.max(-1, keepdims=True))
    p /= p.sum(-1, keepdims=True)
    out, weights = _call(E.tensor(q), E.tensor(k), E.tensor(v), w, 1)
    assert_close(out, p @ v)
    assert_close(weights, p)


def test_static_k_and_v_replace_the_projected_key_and_value():
    rng = np.random.default_rng(1)
    w = _weights(rng, 4)
    q, k = E.tensor(rng.standard_normal((3, 2, 4))), E.tensor(rng.standard_normal((5, 2, 4)))
    want, want_w = _call(q, k, k, w, 2)
    _, wk, wv = w["in_proj_weight"].chunk(3)
    _, bk, bv = w["in_proj_bias"].chunk(3)
    heads = [F.linear(k, wi, bi).reshape(5, 4, 2).transpose(0, 1) for wi, bi in ((wk, bk),
                                                                                 (wv, bv))]
    # the key passed alongside static_k only sets S: give it other values
    got, got_w = _call(q, k * 0, k * 0, w, 2, static_k=heads[0], static_v=heads[1])
    assert_close(got.detach(), want.detach().numpy())
    assert_close(got_w.detach(), want_w.detach().numpy())


def test_is_causal_hint_without_weights_equals_the_mask():
    rng = np.random.default_rng(2)
    w = _weights(rng, 4)
    x = E.tensor(rng.standard_normal((5, 2, 4)))
    causal = E.ones(5, 5, dtype=E.bool_).triu(1)
    want, _ = _call(x, x, x, w, 2, attn_mask=causal)
    got, none = _call(x, x, x, w, 2, attn_mask=causal, is_causal=True, need_weights=False)
    assert none is None
    assert_close(got.detach(), want.detach().numpy())


def test_separate_projection_weights():
    rng = np.random.default_rng(3)
    w = _weights(rng, 4)
    q, k = E.tensor(rng.standard_normal((3, 2, 4))), E.tensor(rng.standard_normal((5, 2, 4)))
    wq, wk, wv = w["in_proj_weight"].chunk(3)
    want, _ = _call(q, k, k, w, 2)
    got, _ = _call(q, k, k, dict(w, in_proj_weight=None), 2, use_separate_proj_weight=True,
                   q_proj_weight=wq, k_proj_weight=wk, v_proj_weight=wv)
    assert_close(got.detach(), want.detach().numpy())


@pytest.mark.parametrize("self_attention", [True, False])
def test_gradcheck_and_gradgradcheck(self_attention):
    rng = np.random.default_rng(4)
    w = _weights(rng, 4)
    bias_k = E.tensor(rng.standard_normal((1, 1, 4)), requires_grad=True)
    bias_v = E.tensor(rng.standard_normal((1, 1, 4)), requires_grad=True)
    q = E.tensor(rng.standard_normal((3, 2, 4)), requires_grad=True)
    k = E.tensor(rng.standard_normal((2, 2, 4)), requires_grad=True)
    am = E.tensor(rng.standard_normal((3, 3 if self_attention else 2)))
    names = list(w)

    def fn(q, k, bk, bv, *ws):
        kv = q if self_attention else k
        out, weights = _call(q, kv, kv, dict(zip(names, ws)), 2, attn_mask=am, bias_k=bk,
                             bias_v=bv, add_zero_attn=True)
        return out, weights

    inputs = [q, k, bias_k, bias_v, *w.values()]
    assert gradcheck(fn, inputs)
    assert gradgradcheck(fn, inputs)


@pytest.mark.parametrize("kw, exc, match", [
    ({"bias_k": E.zeros(1, 1, 4)}, ValueError, "bias_v is None but bias_k is set"),
    ({"bias_k": E.zeros(1, 1, 4), "bias_v": E.zeros(1, 1, 4), "static_k": E.zeros(4, 5, 2)},
     ValueError, "bias cannot be added to static key"),
    ({"static_k": E.zeros(4, 5, 3)}, ShapeError, r"static_k of shape \(N \* num_heads, S, "
                                                 r"head_dim\) = \(4, S, 2\)"),
    ({"use_separate_proj_weight": True}, ValueError, "q_proj_weight is None"),
    ({"is_causal": True}, RuntimeError, "Need attn_mask"),
])
def test_errors(kw, exc, match):
    w = _weights(np.random.default_rng(5), 4)
    x = E.zeros(3, 2, 4)
    with pytest.raises(exc, match=match):
        _call(x, E.zeros(5, 2, 4), E.zeros(5, 2, 4), w, 2, **kw)


def test_weight_shape_errors():
    w = _weights(np.random.default_rng(6), 4)
    x = E.zeros(3, 2, 4)
    with pytest.raises(ShapeError, match=r"in_proj_weight of shape \(12, 4\), got \(8, 4\)"):
        _call(x, x, x, dict(w, in_proj_weight=E.zeros(8, 4)), 2)
    with pytest.raises(ShapeError, match=r"in_proj_bias of shape \(3 \* embed_dim,\)"):
        _call(x, x, x, dict(w, in_proj_bias=E.zeros(4)), 2)
    with pytest.raises(ShapeError, match="embed_dim 4 not divisible by num_heads 3"):
        _call(x, x, x, w, 3)
