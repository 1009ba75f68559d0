"""The fake cuDNN Frontend (``_fake_cudnn.py``) against the real one, on ember's calls.

1. The calls: ``_frontend_usage.scan()`` finds what ``ember_cuda/cudnn`` uses of the
   frontend (module names, enum members, pygraph methods, tensor setters, with keywords);
   running ember's passes on the fake (which records what is read) must use exactly those,
   so the scan misses nothing; ``frontend.REQUIRED`` must name every module-level one.
2. The fake's limits, device-free: what the real 1.28 refuses, the fake refuses with the
   same exception type (``REFUSALS``; each runs on the real package too where it imports).
3. Where ``cudnn`` imports (``pip install nvidia-cudnn-frontend``; it needs no GPU), the fake
   against the real package: parameter names, kinds and defaults of every scanned method
   and function (``inspect``, or the pybind11 docstring of a compiled one), the convolution
   builders' ports and attributes and the C++ overloads they lower to, enum members and
   values, the exception type, and the graph ember builds on each, tensor by tensor.
"""
from __future__ import annotations

import inspect
import re
import sys

import pytest

from ember_cuda.cudnn import frontend, graphs, layout

from . import _fake_cudnn as fake
from ._frontend_usage import scan
from .test_convolution import conv_params, data

pytestmark = pytest.mark.usefixtures("clean_switches")
USAGE = scan()


@pytest.fixture(scope="module")
def real():
    """The real ``cudnn`` package (1.28), or a skip."""
    cudnn = pytest.importorskip("cudnn", reason="the cuDNN Frontend is not importable "
                                "(pip install "
                                "nvidia-cudnn-frontend)")
    if not hasattr(cudnn, "pygraph") or not hasattr(cudnn, "Handle"):
        pytest.skip(f"cuDNN Frontend {getattr(cudnn, '__version__', '?')}: not the 1.28 API")
    return cudnn


# ---- 1. the calls ember makes ------------------------------------------------------------------

def _exercise(algo, fe):
    """Every path that reaches the frontend: each pass, benchmark, a decline."""
    x, w = data((2, 4, 6, 6)), data((4, 2, 3, 3), seed=1)
    p = conv_params(x, w, padding=1, groups=2)
    algo.forward(x, w, None, p)
    algo.backward(data(p.output_shape, seed=2), x, w, p, (True, True, False))
    algo.forward(x, w, None, conv_params(x, w, padding=1, groups=2, benchmark=True))
    fe.decline = lambda g: "refused"
    algo.forward(x, w, None, conv_params(x, w, padding=0, groups=2))
    algo.version()


def test_scan_finds_every_call_a_run_makes(fe, algo):
    _exercise(algo, fe)
    assert fe.used_graph == set(USAGE.graph), "pygraph methods: run vs scan"
    assert fe.used_tensor == set(USAGE.tensor), "tensor setters: run vs scan"
    assert fe.used == set(USAGE.module), "module names: run vs scan"
    assert set(USAGE.graph) <= fake.GRAPH_API and set(USAGE.module) <= set(fake.PUBLIC)


def test_load_reads_every_module_name_ember_uses(monkeypatch):
    fe = fake.make_fake_frontend()
    monkeypatch.setitem(sys.modules, "cudnn", fe)
    assert frontend.load() == (fe, None)
    assert set(USAGE.required) == set(USAGE.module) == set(frontend.REQUIRED)
    assert set(USAGE.module) <= fe.used


def test_scan_sees_the_graph_sequence_and_no_unresolved_keywords():
    assert {"tensor", "conv_fprop", "conv_dgrad", "conv_wgrad", "validate",
            "build_operation_graph", "create_execution_plans", "check_support",
            "execute"} <= set(USAGE.graph)
    assert USAGE.enums.keys() == {"data_type", "heur_mode", "numerical_note",
                                  "build_plan_policy"}
    for calls in (*USAGE.graph.values(), *USAGE.module.values(), *USAGE.tensor.values()):
        for call in calls:
            assert "**?" not in call.keywords, f"{call.where}: a ** the scan cannot expand"


# ---- 2. the fake refuses what the real one refuses -----------------------------------------

def _graph(fe, **kwargs):
    return fe.pygraph(io_data_type=fe.data_type.FLOAT, **kwargs)


def _conv(fe, g=None, **attrs):
    g = g or _graph(fe)
    x = g.tensor(name="X", dim=[1, 2, 5, 5], stride=[50, 25, 5, 1], data_type=None)
    w = g.tensor(name="W", dim=[2, 2, 3, 3], stride=[18, 9, 3, 1], data_type=None)
    conv = dict(pre_padding=[1, 1], post_padding=[1, 1], stride=[1, 1], dilation=[1, 1])
    conv.update(attrs)
    return g, g.conv_fprop(image=x, weight=w, **{k: v for k, v in conv.items() if v})


def _refuse_frozen_setter(fe):
    g, y = _conv(fe)
    g._freeze()       # fe-1.28: validate (lowering) and create_execution_plans freeze
    y.set_output(True)


def _refuse_mixed_padding(fe):
    _conv(fe, padding=[1, 1])[0].validate()


REFUSALS = {  # what -> (scenario on a frontend module, the exception both raise)
    "unknown conv keyword": (lambda fe: _conv(fe, bias=[1]), TypeError),
    "too many positionals": (lambda fe: _graph(fe).conv_fprop(*[None] * 9), TypeError),
    "unknown tensor keyword": (lambda fe: _graph(fe).tensor(dim=[1], alignment=16),
                               TypeError),
    "set_stream on a non-Handle": (lambda fe: fe.set_stream(handle=("h", 0), stream=1),
                                   TypeError),
    "graph on a non-Handle": (lambda fe: _conv(fe, g=_graph(fe, handle=7))[0].validate(),
                              TypeError),
    "dim/stride length mismatch": (lambda fe: _validate_py(_bad_tensor(fe)), ValueError),
    "wgrad output without dims": (lambda fe: _validate_py(_wgrad_without_dims(fe)),
                                  ValueError),
    "workspace size before a build": (lambda fe: _graph(fe).get_workspace_size(),
                                      RuntimeError),
    "setter on a frozen graph": (_refuse_frozen_setter, RuntimeError),
}
FAKE_ONLY = {  # limits of the C++ backend, which needs libcudnn to show them
    "mixed padding overloads": (_refuse_mixed_padding, TypeError),
    "missing stride": (lambda fe: _conv(fe, stride=None)[0].validate(), ValueError),
    "planning twice": (lambda fe: _planned(fe).create_execution_plans([]), RuntimeError),
    "plan index out of range": (lambda fe: _planned(fe).build_plan_at_index(3), IndexError),
    "executing an unbuilt plan": (lambda fe: _planned(fe).execute_plan_at_index({}, 0, 1),
                                  RuntimeError),
    "a missing operand": (lambda fe: _built(fe).execute({}, 0), ValueError),
}


def _bad_tensor(fe):
    g = _graph(fe)
    g.tensor(dim=[1, 2], stride=[1])
    return g


def _wgrad_without_dims(fe):
    g = _graph(fe)
    x = g.tensor(name="X", dim=[1, 2, 5, 5], stride=[50, 25, 5, 1])
    dy = g.tensor(name="DY", dim=[1, 2, 3, 3], stride=[18, 9, 3, 1])
    g.conv_wgrad(image=x, loss=dy, pre_padding=[0, 0], post_padding=[0, 0], stride=[1, 1],
                 dilation=[1, 1]).set_output(True)
    return g


def _validate_py(g):
    """``validate`` without the C++ lowering on the real package (no libcudnn here)."""
    if not isinstance(g, fake.FakeGraph):
        g._backend_lowerable = lambda: False
    g.validate()


def _planned(fe):
    g = _conv(fe)[0]
    g.create_execution_plans([fe.heur_mode.A])
    return g


def _built(fe):
    g = _planned(fe)
    g.build_plans(fe.build_plan_policy.HEURISTICS_CHOICE)
    return g


@pytest.mark.parametrize("what", [*REFUSALS, *FAKE_ONLY])
def test_fake_refuses(what):
    scenario, error = {**REFUSALS, **FAKE_ONLY}[what]
    with pytest.raises(error):
        scenario(fake.make_fake_frontend(fake.FakeRuntime()))


@pytest.mark.parametrize("what", list(REFUSALS))
def test_real_refuses_the_same(real, what):
    scenario, error = REFUSALS[what]
    with pytest.raises(error):
        scenario(real)


def test_fake_behaves_like_the_real_planner():
    fe = fake.make_fake_frontend(fake.FakeRuntime())
    g = _conv(fe)[0]
    assert g.get_execution_plan_count() == 0                   # before planning
    assert g.deselect_numeric_notes([]) is g                   # chainable
    g.create_execution_plans([fe.heur_mode.A])
    fe.unbuildable = {0}
    assert g.build_plan_at_index(1) is g and g.get_workspace_size() == 1001   # selects it
    assert g.get_workspace_size_plan_at_index(2) == 0          # not built
    with pytest.raises(fe.cudnnGraphNotSupportedError):
        g.build_plan_at_index(0)
    h = fe.create_handle()
    fe.set_stream(handle=h, stream=0)                          # a new handle is on 0
    assert fe.set_streams == [] and h.stream == 0


# ---- 3. the fake against the real package ----------------------------------------------------

def _params(fn) -> list:
    """[(name, kind, default)] of a Python function (annotations aside)."""
    return [(p.name, p.kind.name, p.default) for p in inspect.signature(fn).parameters.values()]


def pybind_overloads(doc: str, name: str) -> list:
    """The overloads a pybind11 docstring lists for ``name``: [[(param, default or None)]]
    (``self`` dropped), from lines like ``name(self: T, a: int = 0) -> R``."""
    out = []
    for m in re.finditer(rf"(?:^|\d\. ){re.escape(name)}\(", doc, re.M):
        depth, start, i, pieces = 1, m.end(), m.end(), []
        while depth:
            c = doc[i]
            if c in "([<":
                depth += 1
            elif c in ")]>":
                depth -= 1
            if (c == "," and depth == 1) or depth == 0:
                pieces.append(doc[start:i].strip())
                start = i + 1
            i += 1
        params = [(p.split(":")[0].strip(), p.split(" = ", 1)[1] if " = " in p else None)
                  for p in pieces if p]
        if not any(p.startswith("*") for p, _ in params):   # not the "Overloaded" header
            out.append([p for p in params if p[0] != "self"])
    return out


def test_graph_methods_match(real):
    for method in USAGE.graph:
        if method in fake.CONV_OPS:
            continue
        assert _params(getattr(fake.FakeGraph, method)) == \
            _params(getattr(real.pygraph, method)), method
    assert _params(fake.FakeGraph.__init__) == _params(real.pygraph.__init__)


def test_convolution_builders_match(real):
    from cudnn import _pygraph
    backend = real._pybind_module.backend_graph
    for op, (ports, outs) in fake.CONV_OPS.items():
        spec = _pygraph._STRUCTURED_OPS[op]
        assert (tuple(spec["inputs"]), tuple(spec["outputs"]), tuple(spec["attrs"])) == \
            (ports, outs, fake.CONV_ATTRS), op
        assert _params(getattr(fake.FakeGraph, op)) == _params(getattr(real.pygraph, op))
        overloads = pybind_overloads(getattr(backend, op).__doc__, op)
        # padding, or pre/post_padding: never both (the fake's TypeError on a mix)
        assert [sorted({"padding", "pre_padding", "post_padding"} & {p for p, _ in o})
                for o in overloads] == [["padding"], ["post_padding", "pre_padding"]], op
        for call in USAGE.graph.get(op, []):      # ember's keywords: one overload takes all
            assert any(set(call.keywords) <= {p for p, _ in o} for o in overloads), call


def test_ember_calls_bind_to_the_real_signatures(real):
    def check(fn, call, skip_self=True):
        args = [None] * (call.npos + skip_self)
        inspect.signature(fn).bind(*args, **dict.fromkeys(call.keywords))
    for method, calls in USAGE.graph.items():
        for call in calls:
            check(getattr(real.pygraph, method), call)
            if method in fake.CONV_OPS:
                spec = real._pygraph._STRUCTURED_OPS[method]
                allowed = {*spec["inputs"], *spec["attrs"], "name", "compute_data_type",
                           "out_dims"}
                assert set(call.keywords) <= allowed, call
    for setter, calls in USAGE.tensor.items():
        for call in calls:
            check(getattr(real.Tensor, setter), call)
            assert _params(getattr(fake.FakeTensor, setter)) == \
                _params(getattr(real.Tensor, setter)), setter
    for name in ("create_handle", "set_stream"):
        for call in USAGE.module[name]:
            check(getattr(real, name), call, skip_self=False)
    for call in USAGE.module["pygraph"]:
        check(real.pygraph.__init__, call)


def test_module_functions_handles_and_errors_match(real):
    fe = fake.make_fake_frontend()
    for name in ("create_handle", "set_stream"):
        assert _params(getattr(fe, name)) == _params(getattr(real, name)), name
    assert pybind_overloads(real.backend_version.__doc__, "backend_version") == [[]]
    assert _params(fe.backend_version) == []
    assert _params(fake.Handle.__init__) == _params(real.Handle.__init__)
    assert fake.cudnnGraphNotSupportedError.__bases__ == \
        real.cudnnGraphNotSupportedError.__bases__ == (Exception,)
    assert set(USAGE.module) <= {n for n in dir(real)} and set(frontend.REQUIRED) <= set(
        dir(real))


def test_load_without_libcudnn_says_so(real):
    """The 1.28 wheel imports without libcudnn and fails at ``backend_version()``
    (RuntimeError: Unable to find symbol cudnnGetVersion): ``load`` reports it."""
    try:
        real.backend_version()
    except RuntimeError:
        pass
    else:
        pytest.skip("libcudnn loads here")
    fe, reason = frontend.load()
    assert fe is None and "did not load (RuntimeError" in reason and "ember-cuda[" in reason


def test_enums_match(real):
    fe = fake.make_fake_frontend()
    for enum_name, members in USAGE.enums.items():
        want = {k: int(v) for k, v in getattr(real, enum_name).__members__.items()}
        assert {m.name: m.value for m in getattr(fe, enum_name)} == want, enum_name
        assert members <= want.keys(), enum_name


@pytest.mark.parametrize("op", ["fprop", "dgrad", "wgrad"])
@pytest.mark.parametrize("dtype,cl", [("float32", False), ("float16", True)])
def test_ember_builds_the_same_graph_on_both(real, op, dtype, cl):
    """``graphs._operation`` (ember's graph) on the fake and on the real ``pygraph``: the
    same operation, ports, attributes and tensors, and both validate (the real one up to
    the C++ lowering, which needs libcudnn)."""
    key = graphs.GraphKey(0, op, dtype, layout.describe((2, 4, 9, 8), cl),
                          layout.describe((6, 2, 3, 2), cl), layout.describe((2, 6, 5, 10), cl),
                          (1, 2), (2, 1), (1, 2), False, False, False)
    got = {}
    for name, fe in (("fake", fake.make_fake_frontend()), ("real", real)):
        g, tensors = graphs._operation(fe, key, None)
        if name == "real":
            (node,) = g.nodes
            op_name, params, ports = node.node_type.name, dict(node.params), node.inputs
            compute = node.compute_data_type
        else:
            op_name, params, ports = f"CONV_{g.op.upper()}", g.attrs, g.ports
            compute = g.node["compute_data_type"]
        got[name] = dict(op=op_name, params=params, compute=compute.name,
                         ports={p: t.name for p, t in ports.items()},
                         tensors={role: (tuple(t.dim), tuple(t.stride), t.data_type.name,
                                         t.is_virtual, t.name) for role, t in tensors.items()})
        _validate_py(g)
    assert got["fake"] == got["real"]
