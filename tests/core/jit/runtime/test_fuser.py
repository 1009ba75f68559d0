"""ember.jit.runtime.fuser: the registry of fusers and FusionGroupOp's fallback to unfused ops."""
import logging

import numpy as np
import pytest

import ember as E
from ember.jit.runtime import fuser as F
from ember.jit.runtime.interpreter import run_graph
from ember.jit.runtime.op_registry import is_op_kind
from ember.jit.ir.parser import parse_ir
from ember.plugins import manager

GROUP = """graph(%x : Float(2, 3, device=cpu), %y : Float(2, 3, device=cpu)):
  %c : Float(2, 3, device=cpu) = prim::FusionGroup_0[device=device("cpu")](%x, %y)
  return (%c)
with prim::FusionGroup_0 = graph(%a : Float(2, 3, device=cpu), %b : Float(2, 3, device=cpu)):
  %one : int = prim::Constant[value=1]()
  %m : Float(2, 3, device=cpu) = ember::mul(%a, %b)
  %s : Float(2, 3, device=cpu) = ember::add(%m, %a, %one)
  %c : Float(2, 3, device=cpu) = ember::tanh(%s)
  return (%c)"""


class ReferenceFuser(F.Fuser):
    """'Compiles' by returning a closure that interprets the subgraph; counts its calls."""

    name, device_type = "reference", "cpu"

    def __init__(self):
        self.compiles = self.calls = 0

    def compile(self, subgraph):
        self.compiles += 1

        def kernel(*inputs):
            self.calls += 1
            return run_graph(subgraph, inputs)
        return kernel


class Broken(F.Fuser):
    name, device_type = "broken", "cpu"

    def __init__(self, error=None, kernel=None):
        self.error, self.kernel = error, kernel

    def compile(self, subgraph):
        if self.error is not None:
            raise self.error
        return self.kernel


def inputs():
    rng = np.random.default_rng(0)
    return [E.tensor(rng.uniform(-2, 2, (2, 3)).astype(np.float32)) for _ in range(2)]


def expected(x, y):
    a, b = x.numpy().astype(np.float64), y.numpy().astype(np.float64)
    return np.tanh(a * b + a)


def group_node(graph):
    return next(n for n in graph.nodes() if n.kind == "prim::FusionGroup")


def test_fusible_kinds_are_real_ops():
    missing = sorted(k for k in F.FUSIBLE_KINDS - {F.BROADCASTING_CHUNK, F.FUSED_CONCAT}
                     if not is_op_kind(k))
    assert not missing
    assert F.CHUNK_KINDS <= F.FUSIBLE_KINDS
    assert {"ember::add", "ember::where", "ember::type_as", "ember::gt"} <= F.FUSIBLE_KINDS
    assert "ember::mm" not in F.FUSIBLE_KINDS and "ember::sum" not in F.FUSIBLE_KINDS


def test_register_get_unregister():
    f = ReferenceFuser()
    plugin = F.get_fuser("cpu")  # the cpu plugin's CpuFuser
    assert plugin is not None and plugin.name == "cpu-blocked"
    F.register_fuser("cpu", f)
    try:
        assert F.get_fuser("cpu") is f
        assert F.registered_fusers()["cpu"] is f
    finally:
        F.unregister_fuser("cpu")
    assert F.get_fuser("cpu") is plugin  # the plugin's fuser applies again
    with pytest.raises(KeyError, match="no fuser was registered"):
        F.unregister_fuser("cpu")
    assert F.get_fuser("no-such-device") is None


def test_using_fuser_none_turns_fusion_off():
    plugin = F.get_fuser("cpu")
    with F.using_fuser("cpu", None):
        assert F.get_fuser("cpu") is None and "cpu" not in F.registered_fusers()
        with F.using_fuser("cpu", ReferenceFuser()) as inner:
            assert F.get_fuser("cpu") is inner
        assert F.get_fuser("cpu") is None
    assert F.get_fuser("cpu") is plugin


def test_using_fuser_restores_the_previous_one():
    outer, inner = ReferenceFuser(), ReferenceFuser()
    plugin = F.get_fuser("cpu")
    with F.using_fuser("cpu", outer):
        with F.using_fuser("cpu", inner):
            assert F.get_fuser("cpu") is inner
        assert F.get_fuser("cpu") is outer
    assert F.get_fuser("cpu") is plugin


@pytest.mark.parametrize("device_type, fuser, match", [
    ("", ReferenceFuser(), "device_type"),
    (3, ReferenceFuser(), "device_type"),
    ("cpu", object(), "compile"),
])
def test_register_rejects_bad_arguments(device_type, fuser, match):
    with pytest.raises(TypeError, match=match):
        F.register_fuser(device_type, fuser)


def test_plugin_fusers_are_read_lazily_and_explicit_ones_win(monkeypatch):
    manager.ensure_loaded()
    plugged = ReferenceFuser()
    plugged.device_type = "plug"
    monkeypatch.setitem(manager.registered, "ember_fusers", [plugged])
    monkeypatch.setattr(manager, "generation", manager.generation + 1)
    assert F.get_fuser("plug") is plugged
    assert F.registered_fusers() == {"plug": plugged}
    mine = ReferenceFuser()
    with F.using_fuser("plug", mine):
        assert F.get_fuser("plug") is mine
    assert F.get_fuser("plug") is plugged


def test_default_can_fuse_node():
    g = parse_ir(GROUP)
    kinds = {n.kind: F.can_fuse_node(F.Fuser(), n) for n in group_node(g).g().nodes()}
    assert kinds == {"prim::Constant": False, "ember::mul": True, "ember::add": True,
                     "ember::tanh": True}
    assert F.can_fuse_node(object(), next(group_node(g).g().nodes())) is False


def test_fused_kernel_runs():
    f = ReferenceFuser()
    with F.using_fuser("cpu", f):
        g = parse_ir(GROUP)
        op = F.FusionGroupOp(group_node(g))
        x, y = inputs()
        np.testing.assert_allclose(op(x, y)[0].numpy(), expected(x, y), rtol=1e-5)
        assert op.kernel is not None and op.fallback is None
        assert (f.compiles, f.calls) == (1, 1)


def test_interpreter_builds_the_op_once_per_node():
    f = ReferenceFuser()
    with F.using_fuser("cpu", f):
        g = parse_ir(GROUP)
        x, y = inputs()
        for _ in range(3):
            out = run_graph(g, [x, y])[0]
        np.testing.assert_allclose(out.numpy(), expected(x, y), rtol=1e-5)
        assert (f.compiles, f.calls) == (1, 3)


@pytest.mark.parametrize("fuser, reason", [
    (Broken(error=RuntimeError("no codegen for tanh")),
     "compile failed: RuntimeError: no codegen for tanh"),
    (Broken(error=F.FusionDeclined("float64 is not supported")),
     "declined: float64 is not supported"),
    (Broken(kernel=42), "compile failed: TypeError: compile returned int"),
    (F.Fuser(), "compile failed: NotImplementedError"),
    (None, "no fuser is registered for device type 'cpu'"),
])
def test_compile_fallback_keeps_results_and_records_the_reason(fuser, reason, caplog):
    F.clear_fusion_fallbacks()
    g = parse_ir(GROUP)
    x, y = inputs()
    with caplog.at_level(logging.INFO, logger="ember.jit.fuser"):
        if fuser is None:
            with F.using_fuser("cpu", None):  # not even the cpu plugin's
                op = F.FusionGroupOp(group_node(g))
        else:
            with F.using_fuser("cpu", fuser):
                op = F.FusionGroupOp(group_node(g))
    np.testing.assert_allclose(op(x, y)[0].numpy(), expected(x, y), rtol=1e-5)
    assert op.kernel is None and reason in op.fallback.reason
    (record,) = F.fusion_fallbacks()
    assert record is op.fallback
    assert record.kinds == ("prim::Constant", "ember::mul", "ember::add", "ember::tanh")
    assert record.device == "cpu"
    assert reason in caplog.text and "ember::mul, ember::add, ember::tanh" in caplog.text


@pytest.mark.parametrize("kernel, reason", [
    (lambda *a: 1 / 0, "kernel failed: ZeroDivisionError"),
    (lambda *a: [], "kernel returned 0 outputs, expected 1"),
])
def test_kernel_failure_falls_back_for_good(kernel, reason):
    F.clear_fusion_fallbacks()
    with F.using_fuser("cpu", Broken(kernel=kernel)):
        op = F.FusionGroupOp(group_node(parse_ir(GROUP)))
    assert op.kernel is kernel
    x, y = inputs()
    for _ in range(2):
        np.testing.assert_allclose(op(x, y)[0].numpy(), expected(x, y), rtol=1e-5)
    assert op.kernel is None
    (record,) = F.fusion_fallbacks()
    assert reason in record.reason and "broken" in str(record)


def test_real_errors_still_reach_the_caller():
    with F.using_fuser("cpu", ReferenceFuser()):
        op = F.FusionGroupOp(group_node(parse_ir(GROUP)))
    with pytest.raises(Exception, match="broadcast|shape"):
        op(E.ones(2, 3), E.ones(4, 5))


def test_group_device_from_subgraph_inputs():
    g = parse_ir(GROUP.replace('[device=device("cpu")]', ""))
    node = group_node(g)
    assert node.attr("device", None) is None
    assert F.group_device(node) == E.Device("cpu")
    with F.using_fuser("cpu", ReferenceFuser()):
        assert F.FusionGroupOp(node).kernel is not None


def test_fusion_group_op_needs_a_fusion_group():
    g = parse_ir(GROUP)
    with pytest.raises(ValueError, match="prim::FusionGroup"):
        F.FusionGroupOp(next(group_node(g).g().nodes()))
