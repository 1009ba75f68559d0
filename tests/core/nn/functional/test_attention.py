"""scaled_dot_product_attention against a numpy float64 reference: masks (bool, float,
fully masked rows), causal, scale, grouped-query attention, dropout, gradients, tracing
and errors."""
from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ember as E
import ember.jit
from ember.autograd import gradcheck, gradgradcheck
from ember.errors import DtypeError, ShapeError
from ember.nn import functional as F
from helpers import assert_close, to_np


def np_sdpa(q, k, v, mask=None, causal=False, scale=None, gqa=False):
    """torch's documented math: softmax(q k^T * scale + bias) v, with rows that may
    attend to nothing giving zeros."""
    if gqa:
        k = np.repeat(k, q.shape[-3] // k.shape[-3], axis=-3)
        v = np.repeat(v, q.shape[-3] // v.shape[-3], axis=-3)
    scale = 1 / math.sqrt(q.shape[-1]) if scale is None else scale
    s = q @ np.swapaxes(k, -1, -2) * scale
    L, S = s.shape[-2:]
    if causal:
        s = np.where(np.tril(np.ones((L, S), bool)), s, -np.inf)
    if mask is not None and mask.dtype == bool:
        s = np.where(mask, s, -np.inf)
    elif mask is not None:
        s = s + mask
    dead = np.all(s == -np.inf, axis=-1, keepdims=True)
    s = np.where(dead, 0.0, s)
    e = np.exp(s - s.max(-1, keepdims=True))
    w = np.where(dead, 0.0, e / e.sum(-1, keepdims=True))
    return w @ v


def _rand(rng, *shape):
    return rng.standard_normal(shape)


def _t(a, **kw):
    return E.tensor(a, **kw)


@pytest.mark.parametrize("qs, ks, vs", [
    ((2, 3, 4, 5), (2, 3, 6, 5), (2, 3, 6, 7)),   # (N, H, L, E), Ev != E
    ((2, 4, 5), (2, 6, 5), (2, 6, 5)),            # (N, L, E)
    ((4, 5), (6, 5), (6, 3)),                     # (L, E)
    ((2, 3, 4, 5), (1, 3, 6, 5), (2, 1, 6, 5)),   # batch dims broadcast
    ((1, 1, 1, 2), (1, 1, 1, 2), (1, 1, 1, 1)),
])
def test_matches_reference(qs, ks, vs):
    rng = np.random.default_rng(0)
    q, k, v = _rand(rng, *qs), _rand(rng, *ks), _rand(rng, *vs)
    assert_close(F.scaled_dot_product_attention(_t(q), _t(k), _t(v)), np_sdpa(q, k, v))


def test_float32_and_scale():
    rng = np.random.default_rng(1)
    q, k, v = _rand(rng, 2, 3, 4, 5), _rand(rng, 2, 3, 6, 5), _rand(rng, 2, 3, 6, 5)
    out = F.scaled_dot_product_attention(*(_t(a, dtype=E.float32) for a in (q, k, v)),
                                         scale=0.37)
    assert_close(out, np_sdpa(q, k, v, scale=0.37), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("mask_shape", [(4, 6), (3, 4, 6), (2, 3, 4, 6), (1, 6), (2, 1, 4, 1)])
@pytest.mark.parametrize("kind", ["bool", "float", "float_inf"])
def test_masks(mask_shape, kind):
    rng = np.random.default_rng(2)
    q, k, v = _rand(rng, 2, 3, 4, 5), _rand(rng, 2, 3, 6, 5), _rand(rng, 2, 3, 6, 7)
    if kind == "bool":
        mask = rng.random(mask_shape) > 0.4
    elif kind == "float":
        mask = _rand(rng, *mask_shape)
    else:
        mask = np.where(rng.random(mask_shape) > 0.4, _rand(rng, *mask_shape), -np.inf)
    out = F.scaled_dot_product_attention(_t(q), _t(k), _t(v), attn_mask=_t(mask))
    assert_close(out, np_sdpa(q, k, v, mask))


def test_float32_mask_on_float64_inputs_is_cast():
    rng = np.random.default_rng(3)
    q, k, v, m = _rand(rng, 4, 5), _rand(rng, 6, 5), _rand(rng, 6, 5), _rand(rng, 4, 6)
    out = F.scaled_dot_product_attention(_t(q), _t(k), _t(v),
                                         attn_mask=_t(m, dtype=E.float32))
    assert out.dtype is E.float64
    assert_close(out, np_sdpa(q, k, v, m.astype(np.float32).astype(np.float64)))


@pytest.mark.parametrize("kind", ["bool", "float"])
def test_fully_masked_rows_give_zeros_and_zero_gradients(kind):
    rng = np.random.default_rng(4)
    q, k, v = _rand(rng, 2, 4, 5), _rand(rng, 2, 6, 5), _rand(rng, 2, 6, 3)
    keep = rng.random((2, 4, 6)) > 0.3
    keep[0, 1] = False
    keep[1, 3] = False
    keep[:, 0, 0] = True
    mask = keep if kind == "bool" else np.where(keep, 0.0, -np.inf)
    qt = _t(q, requires_grad=True)
    out = F.scaled_dot_product_attention(qt, _t(k), _t(v), attn_mask=_t(mask))
    assert_close(out, np_sdpa(q, k, v, mask))
    assert np.all(to_np(out.detach())[0, 1] == 0) and np.all(to_np(out.detach())[1, 3] == 0)
    (g,) = E.autograd.grad(out.sum(), [qt])
    g = to_np(g)
    assert np.all(np.isfinite(g))
    assert np.all(g[0, 1] == 0) and np.all(g[1, 3] == 0)


@pytest.mark.parametrize("L, S", [(4, 6), (6, 4), (5, 5)])
def test_is_causal_is_upper_left_aligned(L, S):
    rng = np.random.default_rng(5)
    q, k, v = _rand(rng, 2, 3, L, 5), _rand(rng, 2, 3, S, 5), _rand(rng, 2, 3, S, 4)
    out = F.scaled_dot_product_attention(_t(q), _t(k), _t(v), is_causal=True)
    assert_close(out, np_sdpa(q, k, v, causal=True))
    # query 0 sees key 0 only
    np.testing.assert_allclose(to_np(out)[..., 0, :], v[..., 0, :], rtol=1e-12)


@pytest.mark.parametrize("hq, hk, hv", [(6, 2, 3), (4, 4, 1), (4, 1, 1)])
def test_enable_gqa_repeats_key_and_value_heads(hq, hk, hv):
    rng = np.random.default_rng(6)
    q, k, v = _rand(rng, 2, hq, 4, 5), _rand(rng, 2, hk, 6, 5), _rand(rng, 2, hv, 6, 3)
    out = F.scaled_dot_product_attention(_t(q), _t(k), _t(v), enable_gqa=True)
    assert_close(out, np_sdpa(q, k, v, gqa=True))


def test_dropout_zeroes_and_rescales_the_weights():
    rng = np.random.default_rng(7)
    L = S = 40
    q, k = _rand(rng, 2, L, 5), _rand(rng, 2, S, 5)
    eye = np.broadcast_to(np.eye(S), (2, S, S))  # value = I: the output is the weights
    ref = np_sdpa(q, k, eye)
    E.manual_seed(0)
    out = to_np(F.scaled_dot_product_attention(_t(q), _t(k), _t(eye), dropout_p=0.25))
    kept = out != 0
    np.testing.assert_allclose(out[kept], ref[kept] / 0.75, rtol=1e-12)
    assert 0.15 < 1 - kept.mean() < 0.35
    E.manual_seed(0)
    again = to_np(F.scaled_dot_product_attention(_t(q), _t(k), _t(eye), dropout_p=0.25))
    np.testing.assert_array_equal(out, again)
    zero = F.scaled_dot_product_attention(_t(q), _t(k), _t(eye), dropout_p=1.0)
    assert np.all(to_np(zero) == 0)


@settings(max_examples=25, deadline=None)
@given(n=st.integers(1, 2), h=st.integers(1, 3), L=st.integers(1, 5), S=st.integers(1, 5),
       e=st.integers(1, 4), ev=st.integers(1, 4), mask=st.sampled_from([None, "bool", "float"]),
       seed=st.integers(0, 2 ** 16))
def test_shapes_fuzz(n, h, L, S, e, ev, mask, seed):
    rng = np.random.default_rng(seed)
    q, k, v = _rand(rng, n, h, L, e), _rand(rng, n, h, S, e), _rand(rng, n, h, S, ev)
    m = None if mask is None else (rng.random((L, S)) > 0.5 if mask == "bool"
                                   else _rand(rng, L, S))
    out = F.scaled_dot_product_attention(_t(q), _t(k), _t(v),
                                         attn_mask=None if m is None else _t(m))
    assert tuple(out.shape) == (n, h, L, ev)
    assert_close(out, np_sdpa(q, k, v, m))


@pytest.mark.parametrize("case", ["plain", "bool_mask", "float_mask", "causal", "gqa",
                                  "dead_rows"])
def test_gradcheck_and_gradgradcheck(case):
    rng = np.random.default_rng(8)
    hk = 1 if case == "gqa" else 2
    q = _t(_rand(rng, 1, 2, 3, 4), requires_grad=True)
    k = _t(_rand(rng, 1, hk, 4, 4), requires_grad=True)
    v = _t(_rand(rng, 1, hk, 4, 2), requires_grad=True)
    inputs, kw = [q, k, v], {}
    if case == "bool_mask":
        kw["attn_mask"] = _t(rng.random((3, 4)) > 0.3)
    elif case == "dead_rows":
        keep = rng.random((3, 4)) > 0.3
        keep[1] = False
        kw["attn_mask"] = _t(keep)
    elif case == "float_mask":
        inputs.append(_t(_rand(rng, 2, 3, 4), requires_grad=True))
    kw.update(is_causal=case == "causal", enable_gqa=case == "gqa")

    def fn(*args):
        mask = args[3] if len(args) > 3 else kw.get("attn_mask")
        rest = {a: b for a, b in kw.items() if a != "attn_mask"}
        return F.scaled_dot_product_attention(*args[:3], attn_mask=mask, **rest)

    assert gradcheck(fn, inputs)
    assert gradgradcheck(fn, inputs)


def test_trace_reproduces_values_and_gradients():
    rng = np.random.default_rng(9)

    def fn(q, k, v, mask):
        return F.scaled_dot_product_attention(q, k, v, attn_mask=mask) + \
            F.scaled_dot_product_attention(q, k, v, is_causal=True)

    ex = (_t(_rand(rng, 2, 3, 4)), _t(_rand(rng, 2, 5, 4)), _t(_rand(rng, 2, 5, 4)),
          _t(rng.random((3, 5)) > 0.5))
    traced = ember.jit.trace(fn, ex)
    args = [_t(_rand(rng, 2, 3, 4), requires_grad=True), _t(_rand(rng, 2, 5, 4)),
            _t(_rand(rng, 2, 5, 4), requires_grad=True), _t(rng.random((3, 5)) > 0.5)]
    got, want = traced(*args), fn(*args)
    assert_close(got.detach(), to_np(want.detach()))
    for a, b in zip(E.autograd.grad(got.pow(2).sum(), [args[0], args[2]]),
                    E.autograd.grad(want.pow(2).sum(), [args[0], args[2]])):
        assert_close(a, to_np(b))


def _qkv(qs=(2, 3, 4), ks=(2, 5, 4), vs=(2, 5, 6), dtype=E.float64):
    return E.zeros(qs, dtype=dtype), E.zeros(ks, dtype=dtype), E.zeros(vs, dtype=dtype)


@pytest.mark.parametrize("make, kw, exc, match", [
    (lambda: (E.zeros(2, 3, 4), *_qkv()[1:]), {}, DtypeError, "same dtype"),
    (lambda: _qkv(dtype=E.int64), {}, DtypeError, "floating-point"),
    (lambda: _qkv(ks=(2, 5, 3)), {}, ShapeError, r"query's embedding size E = 4"),
    (lambda: _qkv(vs=(2, 4, 6)), {}, ShapeError, r"key's sequence length S = 5"),
    (lambda: _qkv(qs=(4,)), {}, ShapeError, "at least 2 dims"),
    (lambda: _qkv(qs=(3, 3, 4)), {}, ShapeError, "enable_gqa=True"),
    (lambda: _qkv(qs=(1, 6, 3, 4), ks=(1, 4, 5, 4), vs=(1, 4, 5, 4)), {"enable_gqa": True},
     RuntimeError, "must divide the number of heads in query"),
    (_qkv, {"attn_mask": E.ones(3, 5, dtype=E.bool_), "is_causal": True}, RuntimeError,
     "should not be set when is_causal=True"),
    (_qkv, {"attn_mask": E.ones(3, 5, dtype=E.int64)}, DtypeError, "bool or float"),
    (_qkv, {"attn_mask": E.ones(4, 5, dtype=E.bool_)}, ShapeError,
     r"broadcast to the attention scores \(N, ..., L, S\) = \(2, 3, 5\)"),
    (_qkv, {"attn_mask": E.ones(3, 2, 3, 5, dtype=E.bool_)}, ShapeError, "broadcast"),
    (_qkv, {"dropout_p": 1.5}, ValueError, "between 0 and 1"),
])
def test_errors(make, kw, exc, match):
    with pytest.raises(exc, match=match):
        F.scaled_dot_product_attention(*make(), **kw)
