"""RNN, LSTM, GRU: forward against a numpy float64 implementation of torch's equations,
parameter names and shapes, gradients, dropout, errors, tracing and state_dict."""
from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

import ember as E
import ember.jit
from ember import nn
from ember.autograd import gradcheck, gradgradcheck
from ember.errors import ShapeError
from ember.nn.utils.rnn import PackedSequence, pack_padded_sequence, pad_packed_sequence
from helpers import assert_close, to_np

_CLASSES = {"RNN_TANH": nn.RNN, "RNN_RELU": nn.RNN, "LSTM": nn.LSTM, "GRU": nn.GRU}


def _sigmoid(x):
    return 1 / (1 + np.exp(-x))


def _np_step(mode, x, h, c, p):
    """One step of torch's documented equations; ``p`` holds one layer-direction's
    weights by role; gates are sliced out of the stacked rows by hand."""
    hs = p["w_hh"].shape[0] // {"LSTM": 4, "GRU": 3}.get(mode, 1)
    gi = x @ p["w_ih"].T + p["b_ih"]
    gh = h @ p["w_hh"].T + p["b_hh"]
    if mode == "RNN_TANH":
        return np.tanh(gi + gh), None
    if mode == "RNN_RELU":
        return np.maximum(gi + gh, 0), None
    part = [slice(k * hs, (k + 1) * hs) for k in range(4)]
    if mode == "GRU":
        r = _sigmoid(gi[:, part[0]] + gh[:, part[0]])
        z = _sigmoid(gi[:, part[1]] + gh[:, part[1]])
        n = np.tanh(gi[:, part[2]] + r * gh[:, part[2]])
        return (1 - z) * n + z * h, None
    a = gi + gh
    i, f, g, o = (a[:, s] for s in part)
    c = _sigmoid(f) * c + _sigmoid(i) * np.tanh(g)
    h = _sigmoid(o) * np.tanh(c)
    if "w_hr" in p:
        h = h @ p["w_hr"].T
    return h, c


def _np_rnn(mode, params, x, h0, c0, num_layers, num_directions):
    """Stacked (bi)directional layers over time-major ``x`` (L, N, H_in); returns
    ``(output, h_n, c_n)`` as torch documents them."""
    h_n, c_n = [], []
    for layer in range(num_layers):
        outs = []
        for d in range(num_directions):
            suffix = f"_l{layer}" + ("_reverse" if d else "")
            p = {role: params[name + suffix] for role, name in
                 (("w_ih", "weight_ih"), ("w_hh", "weight_hh"), ("b_ih", "bias_ih"),
                  ("b_hh", "bias_hh"), ("w_hr", "weight_hr")) if name + suffix in params}
            p.setdefault("b_ih", 0.0)
            p.setdefault("b_hh", 0.0)
            k = layer * num_directions + d
            h, c = h0[k], None if c0 is None else c0[k]
            ys = [None] * len(x)
            for t in (range(len(x) - 1, -1, -1) if d else range(len(x))):
                h, c = _np_step(mode, x[t], h, c, p)
                ys[t] = h
            outs.append(np.stack(ys))
            h_n.append(h)
            c_n.append(c)
        x = np.concatenate(outs, axis=-1)
    return x, np.stack(h_n), None if c0 is None else np.stack(c_n)


def _make(mode, **kw):
    kw.setdefault("dtype", E.float64)
    if mode.startswith("RNN"):
        kw["nonlinearity"] = "tanh" if mode == "RNN_TANH" else "relu"
    return _CLASSES[mode](3, 4, **kw)


def _params_np(m):
    return {k: to_np(v).astype(np.float64) for k, v in m.state_dict().items()}


CONFIGS = [
    dict(),
    dict(num_layers=2),
    dict(bidirectional=True, h0=True),
    dict(num_layers=2, bidirectional=True, batch_first=True, h0=True),
    dict(bias=False, h0=True),
    dict(unbatched=True),
    dict(unbatched=True, batch_first=True, h0=True, num_layers=2, bidirectional=True),
]


@pytest.mark.parametrize("mode", list(_CLASSES))
@pytest.mark.parametrize("cfg", CONFIGS, ids=lambda c: "-".join(f"{k}={v}" for k, v in
                                                                 c.items()) or "default")
def test_forward_matches_numpy(mode, cfg):
    _check_forward(mode, dict(cfg), seed=0)


@pytest.mark.parametrize("cfg", [dict(proj_size=2), dict(proj_size=3, h0=True),
                                 dict(proj_size=2, num_layers=2, bidirectional=True, h0=True),
                                 dict(proj_size=1, unbatched=True, batch_first=True)])
def test_lstm_proj_size_matches_numpy(cfg):
    _check_forward("LSTM", dict(cfg), seed=1)


def _check_forward(mode, cfg, seed, dtype=E.float64):
    h0_given, unbatched = cfg.pop("h0", False), cfg.pop("unbatched", False)
    E.manual_seed(seed)
    m = _make(mode, dtype=dtype, **cfg)
    D, layers = (2 if m.bidirectional else 1), m.num_layers
    rng = np.random.default_rng(seed)
    L, N = 5, 2
    x = rng.standard_normal((L, N, 3))
    h0 = 0.5 * rng.standard_normal((D * layers, N, m.proj_size or 4))
    c0 = 0.5 * rng.standard_normal((D * layers, N, 4)) if mode == "LSTM" else None
    ref = _np_rnn(mode, _params_np(m), x, h0 if h0_given else np.zeros_like(h0),
                  (c0 if h0_given else np.zeros_like(c0)) if mode == "LSTM" else None,
                  layers, D)
    xin = x.transpose(1, 0, 2) if m.batch_first else x
    if unbatched:  # batch entry 0 of the batched reference
        xin = xin[0] if m.batch_first else xin[:, 0]
        ref = [None if r is None else r[:, 0] for r in ref]
        h0, c0 = h0[:, 0], None if c0 is None else c0[:, 0]
    elif m.batch_first:
        ref = [ref[0].transpose(1, 0, 2)] + list(ref[1:])
    t = lambda a: E.tensor(a, dtype=dtype)
    hx = None
    if h0_given:
        hx = (t(h0), t(c0)) if mode == "LSTM" else t(h0)
    out, h_n = m(t(xin), hx)
    if mode == "LSTM":
        h_n, c_n = h_n
        assert_close(c_n, ref[2])
    assert_close(out, ref[0])
    assert_close(h_n, ref[1])


def test_float32_forward_matches_float64_reference():
    _check_forward("LSTM", dict(num_layers=2, bidirectional=True), seed=3, dtype=E.float32)
    _check_forward("GRU", dict(batch_first=True), seed=4, dtype=E.float32)


@pytest.mark.parametrize("mode, kw", [
    ("LSTM", dict(num_layers=2, bidirectional=True, proj_size=2)),
    ("GRU", dict(bidirectional=True)), ("RNN_TANH", dict(num_layers=2, batch_first=True))])
def test_packed_sequence_runs_each_sequence_for_its_own_length(mode, kw):
    E.manual_seed(0)
    m = _make(mode, **kw)
    D, layers, bf = 2 if m.bidirectional else 1, m.num_layers, m.batch_first
    rng = np.random.default_rng(0)
    lengths = [3, 5, 1, 4]  # unsorted: the layer sees them permuted
    x = rng.standard_normal((5, 4, 3))  # time-major
    h0 = rng.standard_normal((D * layers, 4, m.proj_size or 4))
    c0 = rng.standard_normal((D * layers, 4, 4))
    hx = (E.tensor(h0), E.tensor(c0)) if mode == "LSTM" else E.tensor(h0)
    packed = pack_padded_sequence(E.tensor(x.transpose(1, 0, 2) if bf else x), lengths,
                                  batch_first=bf, enforce_sorted=False)
    out, h_n = m(packed, hx)
    assert isinstance(out, PackedSequence) and out.batch_sizes.tolist() == [4, 3, 3, 2, 1]
    padded, _ = pad_packed_sequence(out, batch_first=bf)
    padded = to_np(padded.detach().transpose(0, 1) if bf else padded.detach())
    h_n = h_n if mode != "LSTM" else h_n[0]
    for b, n in enumerate(lengths):  # each sequence alone, through the numpy reference
        ref = _np_rnn(mode, _params_np(m), x[:n, b:b + 1], h0[:, b:b + 1],
                      c0[:, b:b + 1] if mode == "LSTM" else None, layers, D)
        np.testing.assert_allclose(padded[:n, b], ref[0][:, 0], rtol=1e-10, atol=1e-12)
        assert not padded[n:, b].any()
        np.testing.assert_allclose(to_np(h_n.detach())[:, b], ref[1][:, 0], rtol=1e-10,
                                   atol=1e-12)


def test_packed_sequence_gradcheck():
    E.manual_seed(0)
    m = nn.GRU(2, 2, bidirectional=True, dtype=E.float64)
    x = E.tensor(np.random.default_rng(0).standard_normal((3, 2, 2)), requires_grad=True)

    def f(x, *params):
        out, h_n = m(pack_padded_sequence(x, [3, 1]))
        return out.data, h_n
    assert gradcheck(f, (x, *m.parameters()))


def test_parameter_names_and_shapes_match_pytorch():
    m = nn.LSTM(3, 4, num_layers=2, bidirectional=True, proj_size=2)
    assert [(k, tuple(v.shape)) for k, v in m.state_dict().items()] == [
        ("weight_ih_l0", (16, 3)), ("weight_hh_l0", (16, 2)), ("bias_ih_l0", (16,)),
        ("bias_hh_l0", (16,)), ("weight_hr_l0", (2, 4)),
        ("weight_ih_l0_reverse", (16, 3)), ("weight_hh_l0_reverse", (16, 2)),
        ("bias_ih_l0_reverse", (16,)), ("bias_hh_l0_reverse", (16,)),
        ("weight_hr_l0_reverse", (2, 4)),
        ("weight_ih_l1", (16, 4)), ("weight_hh_l1", (16, 2)), ("bias_ih_l1", (16,)),
        ("bias_hh_l1", (16,)), ("weight_hr_l1", (2, 4)),
        ("weight_ih_l1_reverse", (16, 4)), ("weight_hh_l1_reverse", (16, 2)),
        ("bias_ih_l1_reverse", (16,)), ("bias_hh_l1_reverse", (16,)),
        ("weight_hr_l1_reverse", (2, 4))]
    g = nn.GRU(3, 4, num_layers=2, bias=False)
    assert [(k, tuple(v.shape)) for k, v in g.named_parameters()] == [
        ("weight_ih_l0", (12, 3)), ("weight_hh_l0", (12, 4)),
        ("weight_ih_l1", (12, 4)), ("weight_hh_l1", (12, 4))]
    r = nn.RNN(3, 4, bidirectional=True)
    assert [(k, tuple(v.shape)) for k, v in r.named_parameters()] == [
        ("weight_ih_l0", (4, 3)), ("weight_hh_l0", (4, 4)), ("bias_ih_l0", (4,)),
        ("bias_hh_l0", (4,)), ("weight_ih_l0_reverse", (4, 3)),
        ("weight_hh_l0_reverse", (4, 4)), ("bias_ih_l0_reverse", (4,)),
        ("bias_hh_l0_reverse", (4,))]
    assert [len(w) for w in r.all_weights] == [4, 4] and r.all_weights[1][0] is \
        r.weight_ih_l0_reverse


def test_default_init_bounds_device_and_dtype():
    E.manual_seed(0)
    m = nn.LSTM(8, 100, num_layers=2, device="cpu", dtype=E.float64)
    bound = 1 / math.sqrt(100)
    for name, p in m.named_parameters():
        w = to_np(p)
        assert p.dtype is E.float64 and str(p.device) == "cpu"
        assert np.abs(w).max() <= bound and np.abs(w).max() > 0.98 * bound, name
    assert nn.GRU(2, 3).weight_ih_l0.dtype is E.get_default_dtype()


def test_reprs():
    assert repr(nn.LSTM(10, 20, proj_size=5)) == "LSTM(10, 20, proj_size=5)"
    assert repr(nn.RNN(10, 20, 2, bias=False, batch_first=True, dropout=0.5,
                       bidirectional=True)) == \
        "RNN(10, 20, num_layers=2, bias=False, batch_first=True, dropout=0.5, bidirectional=True)"
    assert repr(nn.RNN(10, 20, nonlinearity="relu")) == "RNN(10, 20, nonlinearity=relu)"
    assert repr(nn.GRU(3, 4)) == "GRU(3, 4)"


def _flat(out):
    return tuple(a for o in out for a in (_flat(o) if isinstance(o, tuple) else (o,)))


def test_lstm_gradcheck_through_every_parameter():
    E.manual_seed(0)
    m = nn.LSTM(2, 3, num_layers=2, bidirectional=True, proj_size=2, dtype=E.float64)
    rng = np.random.default_rng(0)
    x = E.tensor(rng.standard_normal((2, 1, 2)), requires_grad=True)
    h0 = E.tensor(rng.standard_normal((4, 1, 2)), requires_grad=True)
    c0 = E.tensor(rng.standard_normal((4, 1, 3)), requires_grad=True)
    assert gradcheck(lambda x, h, c, *ps: _flat(m(x, (h, c))), (x, h0, c0, *m.parameters()))


@pytest.mark.parametrize("mode", ["RNN_TANH", "GRU"])
def test_rnn_and_gru_gradcheck(mode):
    E.manual_seed(0)
    m = _CLASSES[mode](2, 3, num_layers=2, bidirectional=True, batch_first=True,
                       dtype=E.float64)
    rng = np.random.default_rng(1)
    x = E.tensor(rng.standard_normal((1, 3, 2)), requires_grad=True)
    h0 = E.tensor(rng.standard_normal((4, 1, 3)), requires_grad=True)
    assert gradcheck(lambda x, h, *ps: _flat(m(x, h)), (x, h0, *m.parameters()))


def test_gru_gradgradcheck():
    E.manual_seed(0)
    m = nn.GRU(2, 2, dtype=E.float64)
    rng = np.random.default_rng(2)
    x = E.tensor(rng.standard_normal((2, 1, 2)), requires_grad=True)
    assert gradgradcheck(lambda x, w: m(x)[0], (x, m.weight_hh_l0))


def test_dropout_only_between_layers_in_training():
    E.manual_seed(0)
    m = nn.GRU(3, 4, num_layers=2, dropout=1.0, dtype=E.float64)
    x = E.tensor(np.random.default_rng(0).standard_normal((4, 2, 3)))
    params = _params_np(m)
    out, h_n = m(x)  # training: layer 1 sees the zeros that p=1 leaves of layer 0's output
    first = _np_rnn("GRU", params, to_np(x), np.zeros((1, 2, 4)), None, 1, 1)
    top = {k.replace("l1", "l0"): v for k, v in params.items() if k.endswith("l1")}
    second = _np_rnn("GRU", top, np.zeros((4, 2, 4)), np.zeros((1, 2, 4)), None, 1, 1)
    assert_close(out, second[0])  # and the last layer's output is not dropped
    assert_close(h_n, np.concatenate([first[1], second[1]]))
    m.eval()
    ref = _np_rnn("GRU", params, to_np(x), np.zeros((2, 2, 4)), None, 2, 1)
    assert_close(m(x)[0], ref[0])


def test_dropout_with_one_layer_warns_and_does_nothing():
    with pytest.warns(UserWarning, match="num_layers greater than 1, but got dropout=0.5"):
        m = nn.LSTM(3, 4, dropout=0.5, dtype=E.float64)
    x = E.tensor(np.random.default_rng(0).standard_normal((4, 2, 3)))
    assert np.array_equal(to_np(m(x)[0].detach()), to_np(m.eval()(x)[0].detach()))


def test_state_dict_round_trip():
    E.manual_seed(0)
    a = nn.LSTM(3, 4, num_layers=2, bidirectional=True, proj_size=2, dtype=E.float64)
    b = nn.LSTM(3, 4, num_layers=2, bidirectional=True, proj_size=2, dtype=E.float64)
    x = E.tensor(np.random.default_rng(0).standard_normal((3, 2, 3)))
    assert not np.allclose(to_np(a(x)[0].detach()), to_np(b(x)[0].detach()))
    b.load_state_dict(a.state_dict())
    for got, want in zip(_flat(b(x)), _flat(a(x))):
        np.testing.assert_array_equal(to_np(got.detach()), to_np(want.detach()))


def test_trace_of_one_layer_lstm_matches_eager_values_and_gradients():
    E.manual_seed(0)
    m = nn.LSTM(3, 4, dtype=E.float64)
    rng = np.random.default_rng(0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        tm = ember.jit.trace(m, (E.tensor(rng.standard_normal((5, 2, 3))),))
    x = E.tensor(rng.standard_normal((5, 2, 3)), requires_grad=True)
    wrt = [x] + list(m.parameters())
    got = E.autograd.grad(_flat(tm(x))[0].pow(2).sum(), wrt)
    out = _flat(m(x))
    want = E.autograd.grad(out[0].pow(2).sum(), wrt)
    for a, b in zip(_flat(tm(x)), out):
        assert_close(a.detach(), to_np(b.detach()))
    for a, b in zip(got, want):
        assert_close(a, to_np(b))


@pytest.mark.parametrize("make_m, x_shape, hx, exc, match", [
    (lambda: nn.GRU(10, 20, 2), (4, 3, 5), None, ShapeError,
     r"input.size\(-1\) must be equal to input_size. Expected 10, got 5"),
    (lambda: nn.GRU(10, 20, 2), (4, 3, 10), lambda: E.zeros(1, 3, 20), ShapeError,
     r"Expected hidden size \(2, 3, 20\), got \[1, 3, 20\]"),
    (lambda: nn.LSTM(10, 20, 2), (4, 3, 10), lambda: (E.zeros(2, 3, 20), E.zeros(1, 3, 20)),
     ShapeError, r"Expected hidden\[1\] size \(2, 3, 20\), got \[1, 3, 20\]"),
    (lambda: nn.LSTM(10, 20, proj_size=5), (4, 3, 10),
     lambda: (E.zeros(1, 3, 20), E.zeros(1, 3, 20)), ShapeError,
     r"Expected hidden\[0\] size \(1, 3, 5\), got \[1, 3, 20\]"),
    (lambda: nn.RNN(10, 20), (4, 3, 3, 10), None, ShapeError,
     "RNN: Expected input to be 2D or 3D, got 4D instead"),
    (lambda: nn.RNN(10, 20), (4, 3, 10), lambda: E.zeros(1, 20), ShapeError,
     "For batched 3-D input, hx should also be 3-D but got 2-D tensor"),
    (lambda: nn.LSTM(10, 20), (4, 10), lambda: (E.zeros(1, 1, 20), E.zeros(1, 1, 20)),
     ShapeError, r"unbatched 2-D input, hx and cx should also be 2-D but got \(3-D, 3-D\)"),
    (lambda: nn.LSTM(10, 20), (0, 3, 10), None, ShapeError, "sequence length"),
    (lambda: nn.LSTM(10, 20), (4, 3, 10), lambda: E.zeros(1, 3, 20), TypeError,
     r"pair \(h_0, c_0\)"),
    (lambda: nn.GRU(10, 20), (4, 3, 10), lambda: (E.zeros(1, 3, 20),), TypeError, "Tensor h_0"),
    (lambda: nn.GRU(10, 20), (4, 3, 10), lambda: E.zeros(1, 3, 20, dtype=E.float64),
     ValueError, r"hidden state dtype \(ember.float64\) does not match weight dtype"),
])
def test_forward_errors(make_m, x_shape, hx, exc, match):
    with pytest.raises(exc, match=match):
        make_m()(E.zeros(x_shape), None if hx is None else hx())


def test_packed_input_errors():
    packed = pack_padded_sequence(E.zeros(3, 4, 10), [3, 3, 2, 1])
    with pytest.raises(ShapeError, match=r"Expected hidden size \(1, 4, 20\), got \[1, 3, 20\]"):
        nn.GRU(10, 20)(packed, E.zeros(1, 3, 20))
    with pytest.raises(ShapeError, match="input must have 2 dimensions, got 3"):
        nn.GRU(5, 20)(PackedSequence(E.zeros(8, 2, 5), packed.batch_sizes, None, None))
    with pytest.raises(ShapeError, match="Expected 5, got 10"):
        nn.GRU(5, 20)(packed)


def test_input_dtype_error_names_the_way_out():
    with pytest.raises(ValueError, match=r"RNN input dtype \(ember.float64\) does not match "
                                         r"weight dtype \(ember.float32\). Convert input"):
        nn.LSTM(2, 3, dtype=E.float32)(E.zeros(1, 1, 2, dtype=E.float64))


@pytest.mark.parametrize("ctor, exc, match", [
    (lambda: nn.RNN(10, 20, nonlinearity="gelu"), ValueError, "Unknown nonlinearity 'gelu'"),
    (lambda: nn.GRU(10, 20, proj_size=2), ValueError, "only supported for LSTM"),
    (lambda: nn.RNN(10, 20, proj_size=2), ValueError, "only supported for LSTM"),
    (lambda: nn.LSTM(10, 20, proj_size=20), ValueError, "smaller than hidden_size"),
    (lambda: nn.LSTM(10, 20, proj_size=-1), ValueError, "proj_size should be a positive"),
    (lambda: nn.LSTM(10, 20, num_layers=0), ValueError, "num_layers must be greater than zero"),
    (lambda: nn.LSTM(0, 20), ValueError, "input_size must be greater than zero"),
    (lambda: nn.LSTM(10, 20.0), TypeError, "hidden_size should be of type int, got: float"),
    (lambda: nn.LSTM(10, 20, dropout=1.5), ValueError, r"dropout should be a number in range"),
    (lambda: nn.LSTM(10, 20, bias=1), TypeError, "bias should be of type bool"),
    (lambda: nn.RNNBase("CELL", 10, 20), ValueError, "Unrecognized RNN mode: CELL"),
])
def test_constructor_errors(ctor, exc, match):
    with pytest.raises(exc, match=match):
        ctor()
