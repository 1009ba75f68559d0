"""``ember_cuda.convolution`` and ``ember_cuda.cudnn`` without a GPU (runs in CI).

The fake ``cudnn`` module (``_fake_cudnn.py``: the cuDNN Frontend 1.28's API and limits,
checked against the real package by ``test_fake_frontend_api.py``) records every graph
call, and executes graphs for real on numpy: it rebuilds each operand from the device
pointer and the dims/strides the algorithm declared (``as_strided`` on the array
registered at that address) and runs ember's numpy im2col for the operation cuDNN would
run (fprop, dgrad = d fprop / d X, wgrad = d fprop / d W). So these tests check both the
graphs built (dims, NHWC strides, padding/stride/dilation, groups, data types, heuristics
and notes) and that the mapping of ember's passes onto cuDNN's operations gives the right
numbers. A numpy ``FakeRuntime`` stands in for CuPy's devices, streams, pointers and
events.

What only a GPU shows (real cuDNN numerics, engines, streams) is in ``test_cudnn.py``.
"""
from __future__ import annotations

import itertools
import sys
import types

import numpy as np
import pytest

import ember as E
import ember.backends.convolution as conv_mod
import ember.backends.cudnn as cudnn_switches
from ember.backends.convolution import ConvParams, Decline, make_params
from ember.types import from_numpy_dtype
from ember_cuda.cudnn import graphs, layout

from ._fake_cudnn import REFERENCE, make_fake_frontend

# TF32 off (the default is on, as in PyTorch): the note filters below are float32's;
# test_allow_tf32_switch_keeps_tensor_core_engines turns it on. ``fe`` and ``algo`` (on the
# fakes of _fake_cudnn.py) are in conftest.py.
pytestmark = pytest.mark.usefixtures("clean_switches")


# ---- helpers --------------------------------------------------------------------------------

def conv_params(x, w, bias=None, stride=1, padding=0, dilation=1, transposed=False,
                output_padding=0, groups=1, benchmark=False, deterministic=False,
                cudnn_enabled=True):
    nd = w.ndim - 2

    def tup(v):
        return tuple(v) if isinstance(v, (tuple, list)) else (v,) * nd
    return make_params("cuda", from_numpy_dtype(x.dtype), x, w, bias, tup(stride), tup(padding),
                       tup(dilation), transposed, tup(output_padding), groups, benchmark,
                       deterministic, cudnn_enabled)


def data(shape, dtype=np.float32, seed=0):
    return np.random.default_rng(seed).uniform(-2, 2, shape).astype(dtype)


def channels_last(a):
    """The same values, stored channels-last (NHWC / NDHWC / NLC)."""
    return np.moveaxis(np.ascontiguousarray(np.moveaxis(a, 1, -1)), -1, 1)


def tolerance(dtype):
    return {np.dtype(np.float16): 2e-2, np.dtype(np.float32): 1e-5,
            np.dtype(np.float64): 1e-12}.get(np.dtype(dtype), 3e-2)


def check(got, want, dtype):
    tol = tolerance(dtype)
    np.testing.assert_allclose(np.asarray(got, np.float64), np.asarray(want, np.float64),
                               rtol=tol, atol=tol)


def only(fe, op):
    found = [g for g in fe.graphs if g.op == op]
    assert len(found) == 1, f"expected one {op} graph, got {len(found)}"
    return found[0]


# ---- what the plugin registers ----------------------------------------------------------------

def fake_cupy():
    """A numpy-backed stand-in for the ``cupy`` module (what algorithms() touches)."""
    cp = types.ModuleType("cupy")
    cp.__getattr__ = lambda name: getattr(np, name)
    cp.cuda = types.SimpleNamespace(memory=types.SimpleNamespace(OutOfMemoryError=MemoryError))
    return cp


def test_algorithms_with_cudnn(monkeypatch):
    from ember_cuda import convolution
    from ember_cuda.cudnn import unavailable_reason
    cp, fake = fake_cupy(), make_fake_frontend()
    monkeypatch.setitem(sys.modules, "cupy", cp)
    monkeypatch.setitem(sys.modules, "cudnn", fake)
    algos = convolution.algorithms()
    assert [a.name for a in algos] == ["cudnn", "native_im2col"]
    cudnn_algo, native = algos
    assert cudnn_algo.priority > native.priority == 0
    assert {a.device_type for a in algos} == {"cuda"}
    assert cudnn_algo.native is native and native.xp is cp and cudnn_algo.fe is fake
    assert cudnn_algo.version() == 90800 and unavailable_reason() is None
    assert cudnn_algo.dynamic and cudnn_algo.supports_groups


@pytest.mark.parametrize("broken,words", [
    ("missing", "not importable"), ("no-library", "did not load"),
    ("zero-version", "did not load"), ("old", "lacks pygraph")])
def test_without_cudnn_only_im2col(monkeypatch, broken, words):
    from ember_cuda import convolution
    from ember_cuda.cudnn import unavailable_reason
    monkeypatch.setitem(sys.modules, "cupy", fake_cupy())
    fake = make_fake_frontend()
    if broken == "missing":
        fake = None                 # `import cudnn` raises ImportError
    elif broken == "no-library":
        def fail():
            raise RuntimeError("libcudnn.so.9: cannot open shared object file")
        fake.backend_version = fail
    elif broken == "zero-version":
        fake.backend_version = lambda: 0
    else:
        del fake.pygraph
    monkeypatch.setitem(sys.modules, "cudnn", fake)
    algos = convolution.algorithms()
    assert [a.name for a in algos] == ["native_im2col"]
    assert words in unavailable_reason() and "ember-cuda[" in unavailable_reason()


def test_is_available_and_version_follow_registration(monkeypatch, algo):
    native = algo.native
    monkeypatch.setattr(conv_mod, "algorithms",
                        lambda device_type=None: [algo, native])
    assert cudnn_switches.is_available() and cudnn_switches.version() == 90800
    monkeypatch.setattr(conv_mod, "algorithms", lambda device_type=None: [native])
    assert not cudnn_switches.is_available() and cudnn_switches.version() is None


def test_importing_the_plugin_modules_imports_neither_cupy_nor_cudnn():
    import subprocess
    code = ("import sys, ember_cuda.convolution, ember_cuda.cudnn, ember_cuda.cudnn.graphs; "
            "print('cupy' in sys.modules, 'cudnn' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.split()
    assert out == ["False", "False"]


# ---- the graphs built for each pass -----------------------------------------------------------

def test_forward_graph_calls_and_attributes(fe, algo):
    x, w = data((2, 4, 9, 8)), data((6, 2, 3, 2), seed=1)
    p = conv_params(x, w, stride=(2, 1), padding=(1, 2), dilation=(1, 2), groups=2)
    y = algo.forward(x, w, None, p)
    check(y, REFERENCE.forward(x, w, None, p), x.dtype)
    g = only(fe, "fprop")
    assert g.calls == ["validate", "build_operation_graph", "create_execution_plans",
                       "deselect_numeric_notes", "check_support",
                       ("build_plans", fe.build_plan_policy.HEURISTICS_CHOICE), "execute"]
    assert g.kwargs["io_data_type"] is fe.data_type.FLOAT
    assert g.kwargs["compute_data_type"] is fe.data_type.FLOAT
    assert g.kwargs["handle"] == fe.handles[0]
    # planning froze the graph: dims and strides read back as tuples, as in cuDNN FE 1.28
    assert g.tensors["X"].dim == (2, 4, 9, 8) and g.tensors["X"].stride == (288, 72, 8, 1)
    assert g.tensors["W"].dim == (6, 2, 3, 2)          # groups: C / W.dim[1] = 2
    assert g.attrs == dict(pre_padding=[1, 2], post_padding=[1, 2], stride=[2, 1],
                           dilation=[1, 2])
    assert g.node == dict(name="fprop", compute_data_type=fe.data_type.FLOAT)
    assert not g.out.is_virtual and g.out.dim == p.output_shape
    assert g.out.stride == layout.packed_strides(p.output_shape, False)
    assert g.modes == [fe.heur_mode.A, fe.heur_mode.FALLBACK]
    assert g.notes == [fe.numerical_note.DOWN_CONVERT_INPUTS, fe.numerical_note.TENSOR_CORE]


def test_backward_graphs(fe, algo):
    x, w = data((2, 3, 7, 6)), data((4, 3, 3, 3), seed=1)
    p = conv_params(x, w, stride=2, padding=1)
    gy = data(p.output_shape, seed=2)
    gi, gw, gb = algo.backward(gy, x, w, p, (True, True, True))
    want = REFERENCE.backward(gy, x, w, p, (True, True, True))
    for got, ref in zip((gi, gw, gb), want):
        check(got, ref, x.dtype)
    dgrad, wgrad = only(fe, "dgrad"), only(fe, "wgrad")
    assert dgrad.out.dim == (2, 3, 7, 6)          # set explicitly: stride 2 is ambiguous
    assert wgrad.out.dim == (4, 3, 3, 3)
    assert set(dgrad.inputs) == {"y", "w"} and set(wgrad.inputs) == {"x", "y"}
    assert algo.backward(gy, x, w, p, (False, False, True))[:2] == (None, None)


@pytest.mark.parametrize("dtype,io,compute,notes", [
    (np.float16, "HALF", "FLOAT", ["DOWN_CONVERT_INPUTS"]),
    (E.bfloat16.numpy, "BFLOAT16", "FLOAT", ["DOWN_CONVERT_INPUTS"]),
    (np.float32, "FLOAT", "FLOAT", ["DOWN_CONVERT_INPUTS", "TENSOR_CORE"]),
    (np.float64, "DOUBLE", "DOUBLE", ["DOWN_CONVERT_INPUTS"])])
def test_data_types_and_notes(fe, algo, dtype, io, compute, notes):
    x, w = data((1, 8, 5, 5), dtype), data((8, 8, 3, 3), dtype, seed=1)
    algo.forward(x, w, None, conv_params(x, w, padding=1))
    g = only(fe, "fprop")
    assert g.kwargs["io_data_type"] is fe.data_type[io]
    assert g.kwargs["intermediate_data_type"] is fe.data_type[compute]
    assert g.kwargs["compute_data_type"] is fe.data_type[compute]
    assert {t.data_type for t in (*g.tensors.values(), g.out)} == {fe.data_type[io]}
    assert g.notes == [fe.numerical_note[n] for n in notes]


def test_allow_tf32_switch_keeps_tensor_core_engines(fe, algo, monkeypatch):
    monkeypatch.setattr(cudnn_switches, "allow_tf32", True, raising=False)
    x, w = data((1, 8, 5, 5)), data((8, 8, 3, 3), seed=1)
    algo.forward(x, w, None, conv_params(x, w))
    assert fe.numerical_note.TENSOR_CORE not in only(fe, "fprop").notes


# ---- layouts ------------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", [np.float16, E.bfloat16.numpy])
def test_half_types_compute_channels_last_and_return_contiguous(fe, algo, dtype):
    x, w = data((2, 8, 6, 5), dtype), data((4, 8, 3, 3), dtype, seed=1)
    p = conv_params(x, w, padding=1)
    y = algo.forward(x, w, None, p)
    g = only(fe, "fprop")
    assert g.tensors["X"].stride == (240, 1, 40, 8)        # NHWC
    assert g.tensors["W"].stride == (72, 1, 24, 8)         # KRSC
    assert g.out.stride == layout.packed_strides(p.output_shape, True)
    assert y.flags.c_contiguous
    check(y, REFERENCE.forward(x, w, None, p), dtype)


def test_float32_channels_last_input_stays_channels_last(fe, algo):
    x = channels_last(data((2, 3, 6, 5)))
    w = data((4, 3, 3, 3), seed=1)
    p = conv_params(x, w, padding=1)
    y = algo.forward(x, w, None, p)
    g = only(fe, "fprop")
    assert g.tensors["X"].stride == (90, 1, 15, 3)
    assert g.tensors["W"].stride == (27, 1, 9, 3)          # the weight follows the input
    assert layout.is_channels_last(y) and not y.flags.c_contiguous
    check(y, REFERENCE.forward(np.ascontiguousarray(x), w, None, p), x.dtype)
    gy = data(p.output_shape, seed=2)
    gi, gw, _ = algo.backward(gy, x, w, p, (True, True, False))
    assert layout.is_channels_last(gi) and gw.flags.c_contiguous


def test_strided_and_misaligned_operands_are_copied(fe, algo):
    x = data((2, 3, 9, 9))[:, :, ::2, 1:]                  # not packed
    base = data((1, 4 * 3 * 5 * 5 + 1), np.float16).ravel()
    x16 = base[1:].reshape(4, 3, 5, 5)                     # packed, 2 bytes off alignment
    w = data((4, 3, 3, 3), seed=1)
    p = conv_params(x, w)
    check(algo.forward(x, w, None, p), REFERENCE.forward(np.ascontiguousarray(x), w, None, p),
          x.dtype)
    w16 = w.astype(np.float16)
    p16 = conv_params(x16, w16)
    check(algo.forward(x16, w16, None, p16), REFERENCE.forward(x16, w16, None, p16),
          np.float16)
    pointers = [ptr for e in fe.executions for ptr in e["pack"].values()]
    assert x16.__array_interface__["data"][0] not in pointers


def test_one_d_runs_as_two_d_with_unit_height(fe, algo):
    x, w = data((2, 3, 11)), data((5, 3, 3), seed=1)
    p = conv_params(x, w, stride=2, padding=1, dilation=2)
    y = algo.forward(x, w, None, p)
    check(y, REFERENCE.forward(x, w, None, p), x.dtype)
    assert y.shape == p.output_shape
    g = only(fe, "fprop")
    assert g.tensors["X"].dim == (2, 3, 1, 11) and g.tensors["X"].stride == (33, 11, 11, 1)
    assert g.tensors["W"].dim == (5, 3, 1, 3)
    assert g.attrs["pre_padding"] == [0, 1] and g.attrs["stride"] == [1, 2]
    assert g.attrs["dilation"] == [1, 2]


def test_one_d_half_is_nlc(fe, algo):
    x, w = data((2, 8, 7), np.float16), data((4, 8, 3), np.float16, seed=1)
    algo.forward(x, w, None, conv_params(x, w))
    assert only(fe, "fprop").tensors["X"].stride == (56, 1, 56, 8)


# ---- values of every pass against numpy im2col, across parameters (fake cuDNN) ----------------

CASES = [  # (spatial shape, kernel, stride, padding, dilation, groups)
    ((9,), (3,), (2,), (1,), (1,), 1),
    ((10,), (4,), (1,), (2,), (2,), 2),
    ((7, 8), (3, 3), (1, 1), (1, 1), (1, 1), 1),
    ((9, 7), (3, 2), (2, 3), (1, 0), (2, 1), 2),
    ((6, 6), (1, 1), (2, 2), (0, 0), (1, 1), 4),
    ((5, 6, 4), (3, 2, 2), (1, 2, 1), (1, 0, 1), (1, 1, 2), 1),
    ((4, 5, 5), (2, 3, 3), (2, 1, 1), (0, 1, 1), (1, 1, 1), 2),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{len(c[0])}d-g{c[5]}")
@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.float64])
@pytest.mark.parametrize("transposed", [False, True], ids=["conv", "transposed"])
def test_values_match_im2col(algo, case, dtype, transposed):
    spatial, kernel, stride, padding, dilation, groups = case
    c, k, n = 4, 8, 2
    x = data((n, c, *spatial), dtype)
    w = data((c, k // groups, *kernel) if transposed else (k, c // groups, *kernel), dtype, 1)
    b = data((k,), dtype, 2)
    opad = tuple(s - 1 for s in stride) if transposed else 0
    p = conv_params(x, w, b, stride, padding, dilation, transposed, opad, groups)
    check(algo.forward(x, w, b, p), REFERENCE.forward(x, w, b, p), dtype)
    gy = data(p.output_shape, dtype, 3)
    got = algo.backward(gy, x, w, p, (True, True, True))
    want = REFERENCE.backward(gy, x, w, p, (True, True, True))
    for g, r in zip(got, want):
        assert g.shape == r.shape and g.dtype == r.dtype
        check(g, r, dtype)


def test_transposed_forward_is_dgrad_with_the_output_dims(fe, algo):
    x, w = data((2, 4, 5, 5)), data((4, 3, 3, 3), seed=1)
    p = conv_params(x, w, stride=2, padding=1, transposed=True, output_padding=1)
    algo.forward(x, w, None, p)
    g = only(fe, "dgrad")
    assert g.out.dim == p.output_shape == (2, 3, 10, 10)
    assert g.tensors["DY"].dim == (2, 4, 5, 5)


# ---- cache, workspace, handle, stream -----------------------------------------------------------

def test_graph_cache_hits_and_keys(fe, algo):
    x, w = data((2, 3, 6, 6)), data((4, 3, 3, 3), seed=1)
    p = conv_params(x, w, padding=1)
    algo.forward(x, w, None, p)
    algo.forward(x + 1, w, None, p)
    assert len(fe.graphs) == 1 and algo.graphs.hits == 1 and algo.graphs.misses == 1
    assert len(fe.executions) == 2
    variants = [
        (x.astype(np.float64), w.astype(np.float64), conv_params(x, w, padding=1)),
        (x, w, conv_params(x, w, padding=0)),
        (x, w, conv_params(x, w, padding=1, deterministic=True)),
        (channels_last(x), w, p),
    ]
    for xi, wi, pi in variants:
        if xi.dtype == np.float64:
            pi = conv_params(xi, wi, padding=1)
        algo.forward(xi, wi, None, pi)
    assert len(fe.graphs) == 5 and len(algo.graphs) == 5
    keys = {g_key for g_key in algo.graphs._items}
    assert len({(k.dtype, k.padding, k.deterministic, k.x) for k in keys}) == 5


def test_graph_cache_is_a_bounded_lru(fe, algo):
    algo.graphs.capacity = 2
    x, w = data((1, 2, 5, 5)), data((2, 2, 3, 3), seed=1)
    ps = [conv_params(x, w, padding=i) for i in range(3)]
    algo.forward(x, w, None, ps[0])
    algo.forward(x, w, None, ps[1])
    algo.forward(x, w, None, ps[0])          # 0 is now the most recent
    algo.forward(x, w, None, ps[2])          # evicts 1
    assert len(algo.graphs) == 2
    algo.forward(x, w, None, ps[0])
    assert len(fe.graphs) == 3
    algo.forward(x, w, None, ps[1])
    assert len(fe.graphs) == 4


def test_workspace_handle_and_stream(fe, algo):
    rt = fe.runtime
    x, w = data((1, 2, 5, 5)), data((2, 2, 3, 3), seed=1)
    p = conv_params(x, w)
    rt.current_stream = 1234
    algo.forward(x, w, None, p)
    algo.forward(x, w, None, p)
    run = fe.executions[-1]
    assert run["stream"] == 1234 and run["device"] == 0 and run["handle"] == fe.handles[0]
    assert rt.workspaces == [64, 64] and run["workspace"] % 16 == 0 and run["workspace"]
    assert fe.set_streams == [(fe.handles[0], 1234)]      # skipped while unchanged
    rt.current_stream = 99
    algo.forward(x, w, None, p)
    assert fe.set_streams[-1] == (fe.handles[0], 99) and len(fe.handles) == 1
    assert fe.handles[0]._ordinal == 0                # created with its device current
    fe.workspace = 0
    algo.graphs.clear()
    algo.forward(x, w, None, p)
    assert fe.executions[-1]["workspace"] == 0


def test_one_handle_per_device(fe, algo, monkeypatch):
    monkeypatch.setattr(fe.runtime, "device_of", lambda a: 1)
    x, w = data((1, 2, 5, 5)), data((2, 2, 3, 3), seed=1)
    algo.forward(x, w, None, conv_params(x, w))
    assert [h._ordinal for h in fe.handles] == [1] and fe.executions[-1]["device"] == 1
    assert next(iter(algo.graphs._items)).device == 1


# ---- flags: enabled, deterministic, benchmark ----------------------------------------------

def test_deterministic_flag_and_switch(fe, algo):
    x, w = data((1, 2, 5, 5)), data((2, 2, 3, 3), seed=1)
    algo.forward(x, w, None, conv_params(x, w, deterministic=True))
    assert fe.numerical_note.NONDETERMINISTIC in fe.graphs[-1].notes
    p = conv_params(x, w)            # convolution_backward's params carry no flags
    gy = data(p.output_shape, seed=2)
    algo.backward(gy, x, w, p, (True, False, False))
    assert fe.numerical_note.NONDETERMINISTIC not in fe.graphs[-1].notes
    with cudnn_switches.flags(deterministic=True):
        algo.backward(gy, x, w, p, (False, True, False))
    assert fe.numerical_note.NONDETERMINISTIC in fe.graphs[-1].notes


def test_benchmark_times_every_candidate_once(fe, algo):
    fe.plan_count, fe.unbuildable, fe.failing = 4, {1}, {3}
    fe.runtime.timings = {0: 5.0, 2: 0.5}
    x, w = data((2, 3, 6, 6)), data((4, 3, 3, 3), seed=1)
    p = conv_params(x, w, padding=1, benchmark=True)
    y = algo.forward(x, w, None, p)
    check(y, REFERENCE.forward(x, w, None, p), x.dtype)
    g = only(fe, "fprop")
    assert [c for c in g.calls if isinstance(c, tuple) and c[0] == "build_plan_at_index"] == \
        [("build_plan_at_index", i) for i in range(4)]
    assert not any(isinstance(c, tuple) and c[0] == "build_plans" for c in g.calls)
    assert g.modes == [fe.heur_mode.A, fe.heur_mode.FALLBACK]    # same list, timed
    graph = algo.graphs.get(next(iter(algo.graphs._items)))
    assert graph.plan == 2 and graph.timings == {0: 5.0, 2: 0.5}
    assert graph.workspace_size == 1002
    assert g.calls[-1] == ("execute_plan_at_index", 2)
    n = len(g.calls)
    algo.forward(x, w, None, p)
    assert g.calls[n:] == [("execute_plan_at_index", 2)]   # tuned once per key


def test_benchmark_switch_applies_to_backward(fe, algo):
    x, w = data((1, 2, 5, 5)), data((2, 2, 3, 3), seed=1)
    p = conv_params(x, w)
    with cudnn_switches.flags(benchmark=True):
        algo.backward(data(p.output_shape), x, w, p, (True, False, False))
    assert next(iter(algo.graphs._items)).benchmark


def test_benchmark_with_no_runnable_plan_falls_back(fe, algo):
    fe.failing = {0, 1, 2}
    x, w = data((1, 2, 5, 5)), data((2, 2, 3, 3), seed=1)
    p = conv_params(x, w, benchmark=True)
    check(algo.forward(x, w, None, p), REFERENCE.forward(x, w, None, p), x.dtype)
    verdict = algo.supports(p)
    assert not verdict and "none of its candidate plans" in verdict.reason


def test_enabled_flag_and_switch(algo):
    x, w = data((1, 2, 5, 5)), data((2, 2, 3, 3), seed=1)
    assert algo.supports(conv_params(x, w)) is True
    verdict = algo.supports(conv_params(x, w, cudnn_enabled=False))
    assert isinstance(verdict, Decline) and "disabled" in verdict.reason
    with cudnn_switches.flags(enabled=False):
        assert "enabled is False" in algo.supports(conv_params(x, w)).reason


# ---- declines ----------------------------------------------------------------------------------

def params(dtype=E.float32, device="cuda", n=2, c=4, hw=(6, 6), k=4, kernel=(3, 3),
           **kw):
    d = dict(stride=(1,) * len(hw), padding=(0,) * len(hw), dilation=(1,) * len(hw),
             transposed=False, output_padding=(0,) * len(hw), groups=1)
    d.update(kw)
    w = (c, k, *kernel) if d["transposed"] else (k, c // d["groups"], *kernel)
    return ConvParams(device, dtype, (n, c, *hw), w, False, d["stride"], d["padding"],
                      d["dilation"], d["transposed"], d["output_padding"], d["groups"])


@pytest.mark.parametrize("p,words", [
    (params(device="cpu"), "not 'cpu'"),
    (params(dtype=E.int32), "dtype int32"),
    (params(dtype=E.bool_), "dtype bool"),
    (params(n=0), "zero-size"),
    (params(c=0, k=0), "zero-size"),
    (params(n=2 ** 16, c=64, hw=(256, 256)), "2**31-1"),
    (params(transposed=True, stride=(2, 2), output_padding=(0, 2), dilation=(3, 3)),
     "output_padding"),
])
def test_declines_with_reason(algo, p, words):
    verdict = algo.supports(p)
    assert isinstance(verdict, Decline) and not verdict, verdict
    assert words in verdict.reason


@pytest.mark.parametrize("p", [params(), params(dtype=E.float16), params(dtype=E.bfloat16),
                               params(dtype=E.float64), params(transposed=True),
                               params(groups=2), params(hw=(7,), kernel=(3,)),
                               params(hw=(4, 4, 4), kernel=(3, 3, 3))])
def test_supports(algo, p):
    assert algo.supports(p) is True


def test_build_time_decline_falls_back_and_is_remembered(fe, algo, monkeypatch):
    fe.decline = lambda graph: "No execution plans support the graph." \
        if graph.op == "fprop" else None
    x, w = data((2, 3, 6, 6)), data((4, 3, 3, 3), seed=1)
    b = data((4,), seed=2)
    p = conv_params(x, w, b, padding=1)
    y = algo.forward(x, w, b, p)
    check(y, REFERENCE.forward(x, w, b, p), x.dtype)        # im2col ran
    verdict = algo.supports(p)
    assert not verdict and "cuDNN declined the fprop graph: No execution plans" in \
        verdict.reason
    # backward params (no bias, no flags) share the verdict: the dispatcher goes native
    assert not algo.supports(conv_params(x, w, padding=1))
    assert algo.supports(conv_params(x, w, padding=0)) is True
    algo.forward(x, w, b, p)
    assert len(fe.graphs) == 1                               # the decline is cached too
    monkeypatch.setattr(conv_mod, "algorithms",
                        lambda device_type=None: [algo, algo.native])
    report = conv_mod.explain_params(p)
    assert report.chosen == "native_im2col"
    assert "cudnn: declined (cuDNN declined the fprop graph" in str(report)


def test_declined_grouped_graph_runs_per_group(fe, algo):
    fe.decline = lambda g: "grouped" if g.groups() > 1 else None
    x, w, b = data((2, 4, 6, 6)), data((6, 2, 3, 3), seed=1), data((6,), seed=2)
    p = conv_params(x, w, b, padding=1, groups=2)
    check(algo.forward(x, w, b, p), REFERENCE.forward(x, w, b, p), x.dtype)
    assert algo.supports(p) is True                       # still cuDNN, per group
    per_group = [g for g in fe.graphs if g.op == "fprop" and g.tensors["X"].dim[1] == 2]
    assert per_group and all(g.calls[-1] == "execute" for g in per_group)
    gy = data(p.output_shape, seed=3)
    got = algo.backward(gy, x, w, conv_params(x, w, padding=1, groups=2), (True, True, True))
    for g, r in zip(got, REFERENCE.backward(gy, x, w, p, (True, True, True))):
        check(g, r, x.dtype)


def test_declined_everywhere_grouped_declines_with_both_reasons(fe, algo):
    fe.decline = lambda g: "nothing"
    x, w = data((2, 4, 6, 6)), data((6, 2, 3, 3), seed=1)
    p = conv_params(x, w, groups=2)
    check(algo.forward(x, w, None, p), REFERENCE.forward(x, w, None, p), x.dtype)
    verdict = algo.supports(p)
    assert not verdict and "per group" in verdict.reason
    n = len(fe.graphs)
    algo.forward(x, w, None, p)                        # native directly, no new graphs
    assert len(fe.graphs) == n


def test_verdicts_depend_on_deterministic(fe, algo):
    fe.decline = lambda g: "no deterministic engine" \
        if fe.numerical_note.NONDETERMINISTIC in g.notes else None
    x, w = data((1, 2, 5, 5)), data((2, 2, 3, 3), seed=1)
    algo.forward(x, w, None, conv_params(x, w, deterministic=True))
    assert not algo.supports(conv_params(x, w, deterministic=True))
    assert algo.supports(conv_params(x, w)) is True
    with cudnn_switches.flags(deterministic=True):
        assert not algo.supports(conv_params(x, w))


def test_excluded_notes_and_heuristics_table(fe):
    key = graphs.GraphKey(0, "fprop", "float32", None, None, None, (0, 0), (1, 1), (1, 1),
                          True, True, False)
    n = fe.numerical_note
    assert graphs.excluded_notes(fe, key) == [n.DOWN_CONVERT_INPUTS, n.NONDETERMINISTIC,
                                              n.TENSOR_CORE]
    assert graphs.heuristics(fe, key) == [fe.heur_mode.A, fe.heur_mode.FALLBACK]
    for dtype in ("float16", "bfloat16", "float64"):
        assert n.TENSOR_CORE not in graphs.excluded_notes(fe, key._replace(dtype=dtype))


# ---- layout helpers ------------------------------------------------------------------------------

@pytest.mark.parametrize("shape", [(2, 3, 5), (2, 3, 4, 5), (2, 3, 4, 5, 6)])
def test_layout_helpers(shape):
    a = data(shape)
    cl = channels_last(a)
    assert layout.is_packed(a, False) and not layout.is_channels_last(a)
    assert layout.is_packed(cl, True) and layout.is_channels_last(cl)
    assert layout.choose("float32", a) is False and layout.choose("float32", cl) is True
    assert layout.choose("float16", a) is True
    e = layout.empty(np, shape, np.float32, True)
    assert e.shape == shape and layout.is_packed(e, True)
    assert layout.restore(np, cl, False).flags.c_contiguous
    assert layout.restore(np, cl, True) is cl
    dims, strides = layout.describe(shape, True)
    assert len(dims) == max(4, len(shape))
    for channels_last_ in (False, True):
        arr = layout.empty(np, shape, np.float32, channels_last_)
        lifted = np.lib.stride_tricks.as_strided(
            arr, layout.describe(shape, channels_last_)[0],
            [s * 4 for s in layout.describe(shape, channels_last_)[1]])
        assert np.shares_memory(lifted, arr) and lifted.size == arr.size


def test_single_channel_is_not_channels_last():
    a = data((2, 1, 4, 4))
    assert layout.is_packed(a, True) and not layout.is_channels_last(a)


def test_packed_strides():
    assert layout.packed_strides((2, 3, 4, 5), False) == (60, 20, 5, 1)
    assert layout.packed_strides((2, 3, 4, 5), True) == (60, 1, 15, 3)
    assert layout.packed_strides((2, 3, 4, 5, 6), True) == (360, 1, 90, 18, 3)


def test_parameter_grid_is_consistent():
    # every CASES entry is a valid convolution for both directions
    for (spatial, kernel, stride, padding, dilation, groups), tr in itertools.product(
            CASES, (False, True)):
        x = np.zeros((1, 4, *spatial), np.float32)
        w = np.zeros((4, 8 // groups, *kernel) if tr else (8, 4 // groups, *kernel),
                     np.float32)
        opad = tuple(s - 1 for s in stride) if tr else 0
        conv_params(x, w, None, stride, padding, dilation, tr, opad, groups)
