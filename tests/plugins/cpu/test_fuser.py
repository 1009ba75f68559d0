"""ember_cpu.fuser: FusionGroups on CPU compiled to the blocked elementwise engine.

Every fused result is compared with the same function run eagerly (unfused ember ops);
``min_elements=1`` lets small tensors fuse so the cases stay fast.
"""
import logging
import re
import warnings

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import ember as E
import ember.nn.functional as F
from ember.jit.runtime import fuser as jf
from ember.jit.runtime.fuser import FusionDeclined, using_fuser
from ember.parallel import num_threads
from ember_cpu import fuser as cf
from helpers import assert_close as _assert_close, to_np


def assert_close(got, want, rtol=None, atol=None, equal_nan=True):
    """``got`` against the eager Tensor ``want``: same dtype, values at its tolerance."""
    _assert_close(got, to_np(want), dtype=want.dtype, rtol=rtol, atol=atol)


@pytest.fixture
def small_fuser():
    with using_fuser("cpu", cf.CpuFuser(min_elements=1)) as f:
        jf.clear_fusion_fallbacks()
        yield f


def _groups(graph):
    out = []
    for n in graph.nodes():
        if n.kind == "prim::FusionGroup":
            out.append(n)
        for b in n.blocks:
            out.extend(_groups(b))
        for name in ("f", "df"):
            g = n.attr(name, None) if n.kind == "prim::DifferentiableGraph" else None
            if g is not None:
                out.extend(_groups(g))
    return out


def _trace(fn, *inputs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return E.jit.trace(fn, inputs)


def _check_fused(fn, *inputs, rtol=None, atol=None, groups=1):
    with E.no_grad():
        traced = _trace(fn, *inputs)
        got = traced(*inputs)
        got = traced(*inputs)  # the warm plan
        want = fn(*inputs)
    graph = traced.graph_for(*inputs)
    assert len(_groups(graph)) >= groups, graph
    assert not jf.fusion_fallbacks(), jf.fusion_fallbacks()
    for g, w in zip(got if isinstance(got, tuple) else (got,),
                    want if isinstance(want, tuple) else (want,)):
        assert g.dtype == w.dtype and tuple(g.shape) == tuple(w.shape)
        assert_close(g, w, rtol=rtol, atol=atol, equal_nan=True)
    return traced


def _rand(*shape, dtype=E.float32, seed=0):
    rng = np.random.default_rng(seed)
    return E.from_numpy(rng.uniform(-3, 3, shape).astype(np.float32)).to(dtype)


def test_the_plugin_registers_a_cpu_fuser():
    from ember.plugins import manager
    manager.ensure_loaded()
    fusers = [f for f in manager.registered["ember_fusers"] if f.device_type == "cpu"]
    assert len(fusers) == 1 and isinstance(fusers[0], cf.CpuFuser)


def test_chain_fuses_into_one_group(small_fuser):
    def fn(x, y):
        a = x * y + 1.0
        b = a * 0.5 - y
        c = b * b + x
        d = c / (y * y + 2.0)
        return d - x * 0.25
    traced = _check_fused(fn, _rand(64, 33), _rand(64, 33, seed=1))
    (group,) = _groups(traced.graph_for(_rand(64, 33), _rand(64, 33)))
    kernel = small_fuser.compile(group.g("Subgraph"))
    assert "multiply" in str(kernel) and "divide" in str(kernel)


ACTIVATIONS = [F.relu, F.gelu, lambda x: F.gelu(x, approximate="tanh"), F.silu, E.sigmoid,
               E.tanh, F.elu, F.selu, F.celu, F.softplus, F.hardswish, F.hardsigmoid,
               F.leaky_relu, F.relu6, F.softsign, F.logsigmoid, F.tanhshrink,
               lambda x: F.hardtanh(x, -0.5, 2.0), lambda x: F.threshold(x, 0.1, -2.0),
               E.erf, E.exp, E.log1p, E.rsqrt, E.sqrt, E.reciprocal,
               lambda x: x.clamp(-1, 1), lambda x: x ** 2, lambda x: x ** 3,
               lambda x: x.abs() ** 1.5, lambda x: E.lerp(x, x * 2, 0.3),
               lambda x: E.lerp(x, x * 2, 0.8), lambda x: E.addcmul(x, x, x, value=0.5),
               lambda x: E.where(x > 0, x, x * 3), lambda x: x.masked_fill(x < 0, 7.0),
               lambda x: E.remainder(x, 1.5), lambda x: E.nan_to_num(E.log(x))]


@pytest.mark.parametrize("fn", ACTIVATIONS, ids=range(len(ACTIVATIONS)))
def test_each_op_matches_eager(small_fuser, fn):
    x = _rand(16, 40)
    _check_fused(lambda x: fn(x * 1.5) + 0.25, x, rtol=2e-5, atol=2e-5)


@pytest.mark.parametrize("dtype", [E.float16, E.bfloat16, E.float64])
def test_low_and_high_precision(small_fuser, dtype):
    x, y = _rand(8, 50, dtype=dtype), _rand(50, dtype=dtype, seed=3)
    tol = {E.float16: 2e-3, E.bfloat16: 2e-2, E.float64: 1e-12}[dtype]
    _check_fused(lambda x, y: E.tanh(x * y + 1.0) * 0.5, x, y, rtol=tol, atol=tol)


def test_integer_and_bool_values(small_fuser):
    x = E.arange(0, 400, dtype=E.int32).reshape(20, 20)
    y = E.arange(400, 0, -1, dtype=E.int32).reshape(20, 20)
    _check_fused(lambda x, y: ((x * 3 + y) > 500) & (x % 7 != 0), x, y)
    _check_fused(lambda x, y: E.where(x > y, x - y, y * 2), x, y)


def test_broadcasting_and_strided_inputs(small_fuser):
    x = _rand(30, 40).t()            # non-contiguous
    b = _rand(30, seed=2)            # broadcast over rows
    _check_fused(lambda x, b: E.tanh(x * 2.0 + b) - b, x, b)


def test_several_outputs(small_fuser):
    def fn(x, y):
        a = x * y
        b = E.exp(a) + 1.0
        return a, b * 2.0, b - a
    _check_fused(fn, _rand(20, 20), _rand(20, 20, seed=1))


@pytest.mark.parametrize("reduction", [
    lambda v: v.sum(-1), lambda v: v.mean(-1, keepdim=True), lambda v: v.amax(-1),
    lambda v: v.amin(-1, keepdim=True), lambda v: v.sum(), lambda v: v.mean()])
def test_trailing_reductions(small_fuser, reduction):
    _check_fused(lambda x, y: reduction(E.exp(x * 0.5) * y), _rand(12, 70),
                 _rand(12, 70, seed=1), rtol=1e-5, atol=1e-5)


def test_a_reduction_inside_a_group_makes_stages(small_fuser):
    def softmax(x):
        e = E.exp(x - x.amax(-1, keepdim=True))
        return e / e.sum(-1, keepdim=True)
    traced = _check_fused(softmax, _rand(9, 300), rtol=1e-5, atol=1e-6)
    (group,) = _groups(traced.graph_for(_rand(9, 300)))
    assert len(small_fuser.compile(group.g("Subgraph")).stages) == 3


@settings(max_examples=40, deadline=None)
@given(ops=st.lists(st.sampled_from(["add", "mul", "sub", "tanh", "sigmoid", "relu", "div",
                                     "max", "where", "neg", "exp"]), min_size=2, max_size=8),
       shape=st.sampled_from([(7,), (5, 9), (3, 4, 6), (1, 130), (40, 1)]),
       bshape=st.sampled_from(["same", "row", "scalar"]),
       special=st.booleans())
def test_random_pointwise_dags(ops, shape, bshape, special):
    x = _rand(*shape)
    y = {"same": _rand(*shape, seed=1), "row": _rand(shape[-1], seed=1),
         "scalar": _rand(seed=1)}[bshape]
    if special:
        x = E.where(x > 2.5, E.tensor(float("nan")), E.where(x < -2.5, E.tensor(
            float("inf")), x))

    def fn(x, y):
        vals = [x, y]
        for i, op in enumerate(ops):
            a, b = vals[-1], vals[i % len(vals)]
            r = {"add": lambda: a + b, "mul": lambda: a * b, "sub": lambda: a - b * 0.5,
                 "tanh": lambda: E.tanh(a), "sigmoid": lambda: E.sigmoid(a),
                 "relu": lambda: E.relu(a), "div": lambda: a / (b * b + 1.0),
                 "max": lambda: E.maximum(a, b), "where": lambda: E.where(a > b, a, b),
                 "neg": lambda: -a, "exp": lambda: E.exp(E.clamp(a, -5, 5))}[op]()
            vals.append(r)
        return vals[-1] + x * 0.0
    with using_fuser("cpu", cf.CpuFuser(min_elements=1)):
        with E.no_grad():
            traced = _trace(fn, x, y)
            got, want = traced(x, y), fn(x, y)
    assert_close(got, want, rtol=1e-5, atol=1e-6, equal_nan=True)


def test_one_and_two_threads_agree(small_fuser):
    x, y = _rand(700, 300), _rand(700, 300, seed=1)
    with E.no_grad():
        traced = _trace(lambda x, y: (E.tanh(x * y) + y).sum(-1), x, y)
        with num_threads(1):
            one = traced(x, y).numpy().copy()
        with num_threads(2):
            two = traced(x, y).numpy()
    np.testing.assert_array_equal(one, two)


def test_why_not_names_the_reason():
    from ember.jit.ir.parser import parse_ir
    g = parse_ir("""graph(%x : Float(4, 4, device=cpu), %y : Float(512, 512, device=cpu)):
  %a : Float(4, 4, device=cpu) = ember::mm(%x, %x)
  %b : Float(4, 4, device=cpu) = ember::tanh(%x)
  %c : Float(512, 512, device=cpu) = ember::tanh(%y)
  %d : Tensor = ember::tanh(%y)
  return (%a, %b, %c, %d)""")
    mm, small, big, unknown = list(g.nodes())
    fuser = cf.CpuFuser()
    assert "not a pointwise op" in fuser.why_not(mm)
    assert "too small to pay off" in fuser.why_not(small)
    assert fuser.why_not(big) is None
    assert "unknown dtype" in fuser.why_not(unknown)


def test_compile_declines_with_the_reason():
    from ember.jit.ir.parser import parse_ir
    g = parse_ir("""graph(%x : Float(64, 64, device=cpu)):
  %one : int = prim::Constant[value=1]()
  %a : Float(64, 64, device=cpu) = ember::cumsum(%x, %one)
  return (%a)""")
    with pytest.raises(FusionDeclined, match="not a pointwise op"):
        cf.CpuFuser().compile(g)


def test_a_failing_compile_falls_back_unfused(small_fuser, monkeypatch, caplog):
    def broken(*args, **kwargs):
        raise RuntimeError("injected")
    monkeypatch.setattr(cf, "compile_program", broken)
    x = _rand(20, 20)
    with caplog.at_level(logging.WARNING, logger="ember.jit.fuser"), E.no_grad():
        traced = _trace(lambda x: E.tanh(x * 2.0) + 1.0, x)
        got = traced(x)
    assert_close(got, E.tanh(x * 2.0) + 1.0)
    reasons = [f.reason for f in jf.fusion_fallbacks()]
    assert any("compile failed: RuntimeError: injected" in r for r in reasons), reasons
    assert "injected" in caplog.text


def test_eager_errors_survive_fusion(small_fuser):
    x = E.arange(1, 401, dtype=E.int64).reshape(20, 20)
    z = E.zeros(20, 20, dtype=E.int64)
    with E.no_grad():
        traced = _trace(lambda x, z: (x * 2) // (z + 1) + 1, x, z)
        assert_close(traced(x, z), (x * 2) // (z + 1) + 1)
        with pytest.raises(Exception) as eager:
            (x * 2) // ((z - 1) + 1) + 1
        with pytest.raises(type(eager.value), match=re.escape(str(eager.value)[:40])):
            traced(x, z - 1)


def test_training_through_fused_groups_matches_eager(small_fuser):
    E.manual_seed(0)
    model = E.nn.Sequential(E.nn.Linear(30, 40), E.nn.GELU(), E.nn.Linear(40, 40),
                            E.nn.Tanh(), E.nn.Linear(40, 5))
    x = E.randn(64, 30)
    traced = _trace(model, x)
    for _ in range(2):  # the second call runs the warm plans
        model.zero_grad()
        (traced(x) ** 2).mean().backward()
    fused = [p.grad.clone() for p in model.parameters()]
    model.zero_grad()
    (model(x) ** 2).mean().backward()
    for g, p in zip(fused, model.parameters()):
        assert_close(g, p.grad, rtol=1e-4, atol=1e-6)
