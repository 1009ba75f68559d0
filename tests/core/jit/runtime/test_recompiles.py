"""Recompile reasons: each kind of difference, the nearest cached spec, none on the first
compile or on hits, EMBER_JIT_LOG=recompiles, and GraphExecutor.record_recompile."""
import logging
import threading

import pytest

import ember as E
import ember.jit
from ember.jit.runtime.argument_spec import ArgumentSpec, TensorArg, TensorListArg, ValueArg
from ember.jit.runtime.executor import GraphExecutor
from ember.jit.ir.parser import parse_ir
from ember.jit.runtime.recompiles import PIPELINE_CHANGED, RecompileReason, explain, logger, \
            spec_differences
from ember.types import Device

MUL = """graph(%x : Tensor, %y : Tensor):
  %z : Tensor = ember::mul(%x, %y)
  return (%z)"""

FIRST = """graph(%x : Tensor, %y : Tensor):
  return (%x)"""


def reasons(ex) -> list:
    return [str(r) for r in ex.recompile_reasons()]


def t(*shape, dtype=E.float32, rg=False):
    return E.ones(*shape, dtype=dtype, requires_grad=rg)


def tensor_entry(dtype=E.float32, device="cpu", rank=2, rg=False) -> TensorArg:
    return TensorArg(dtype, Device(device), rank, rg)


def test_no_reason_on_the_first_compile_or_on_hits():
    ex = GraphExecutor(parse_ir(MUL))
    ex(t(2), t(2))
    ex(t(2), t(2))
    ex(t(5), t(5))  # sizes are not in the key: a hit
    assert ex.recompile_reasons() == []
    assert ex.get_debug_state()["recompile_reasons"] == []


@pytest.mark.parametrize("first, second, expected", [
    ((t(2), t(2)), (t(2, dtype=E.float64), t(2)), "input 0: dtype float32 -> float64"),
    ((t(2), t(2)), (t(2), t(2, 2)), "input 1: rank 1 -> 2"),
    ((t(2), t(2)), (t(2), t(2, rg=True)), "input 1: requires_grad False -> True"),
], ids=["dtype", "rank", "requires_grad"])
def test_each_tensor_field(first, second, expected):
    ex = GraphExecutor(parse_ir(MUL))
    ex(*first)
    ex(*second)
    (reason,) = ex.recompile_reasons()
    assert reason.differences == (expected,)
    assert reason.plan_index == 1
    assert reason.spec == ArgumentSpec.of(second, True)
    assert str(reason) == f"plan 1: {expected}"
    ex(*second)
    ex(*first)  # hits, either way
    assert len(ex.recompile_reasons()) == 1


def test_grad_mode_and_several_fields_in_one_line():
    ex = GraphExecutor(parse_ir(MUL))
    with E.no_grad():
        ex(t(2), t(2))
    ex(t(2, dtype=E.float64), t(2))
    assert reasons(ex) == ["plan 1: input 0: dtype float32 -> float64; grad mode off -> on"]


def test_tensor_to_none():
    ex = GraphExecutor(parse_ir(FIRST))
    ex(t(2), t(2))
    ex(t(2), None)
    assert reasons(ex) == ["plan 1: input 1: Tensor -> NoneType"]


def test_device_list_and_kind_differences():
    cpu, cuda = tensor_entry(), tensor_entry(device="cuda:0")
    old = ArgumentSpec(True, (cpu, TensorListArg((cpu, cpu)), ValueArg("int")))
    assert spec_differences(old, ArgumentSpec(True, (cuda,) + old.inputs[1:])) == (
        "input 0: device cpu -> cuda:0",)
    item = ArgumentSpec(True, (cpu, TensorListArg((cpu, tensor_entry(rank=3))), ValueArg("int")))
    assert spec_differences(old, item) == ("input 1[1]: rank 2 -> 3",)
    longer = ArgumentSpec(True, (cpu, TensorListArg((cpu, cpu, cpu)), ValueArg("float")))
    assert spec_differences(old, longer) == ("input 1: list length 2 -> 3",
                                             "input 2: int -> float")
    kinds = ArgumentSpec(True, (ValueArg("NoneType"), cpu, TensorListArg((cpu,))))
    assert spec_differences(old, kinds) == ("input 0: Tensor -> NoneType",
                                            "input 1: Tensor[] -> Tensor",
                                            "input 2: int -> Tensor[]")
    assert spec_differences(old, old) == ()


def test_list_inputs_through_the_executor():
    ex = GraphExecutor(parse_ir("""graph(%xs : Tensor[]):
  %dim : int = prim::Constant[value=0]()
  %c : Tensor = ember::cat(%xs, %dim)
  return (%c)"""))
    ex([t(2), t(2)])
    ex([t(2), t(2, dtype=E.float64)])
    assert reasons(ex) == ["plan 1: input 0[1]: dtype float32 -> float64"]


def test_nearest_of_three_cached_plans():
    ex = GraphExecutor(parse_ir(MUL))
    f64 = E.float64
    ex(t(2), t(2))                                  # plan 0
    ex(t(2, dtype=f64), t(2, dtype=f64))            # plan 1
    ex(t(2, 2, dtype=f64), t(2, 2, dtype=f64))      # plan 2
    ex(t(2, 2, dtype=f64), t(2, 2))                 # 1 field from plan 2, 3 from the rest
    # 1 field from plans 1 and 2 each: the earlier one is named
    ex(t(2, 2, dtype=f64), t(2, dtype=f64))
    assert reasons(ex)[2:] == ["plan 3: input 1: dtype float64 -> float32",
                               "plan 4: input 0: rank 1 -> 2"]


def test_explain_prefers_the_fewest_differences_then_the_earliest():
    a, b = tensor_entry(), tensor_entry(dtype=E.float64, rank=3)
    new = ArgumentSpec(False, (tensor_entry(rank=3),))
    far, near = ArgumentSpec(True, (a,)), ArgumentSpec(False, (b,))
    assert explain(new, [far, near], 2).differences == ("input 0: dtype float64 -> float32",)
    also_near = ArgumentSpec(False, (a,))
    assert explain(new, [also_near, near], 2).differences == ("input 0: rank 2 -> 3",)
    assert explain(new, [], 0) == RecompileReason(0, new, (PIPELINE_CHANGED,))


def test_a_pipeline_change_is_a_reason():
    ex = GraphExecutor(parse_ir(MUL))
    ex(t(2), t(2))
    with ember.jit.register_pass(lambda g: None, stage="nondiff"):
        ex(t(2), t(2))
        ex(t(2), t(2))
    assert reasons(ex) == [f"plan 0: {PIPELINE_CHANGED}"]


def test_an_equal_spec_shares_the_plan():
    # with grad mode off the key still tells requires_grad apart; the spec does not
    ex = GraphExecutor(parse_ir(MUL))
    ember.jit.reset_counters()
    with E.no_grad():
        ex(t(2), t(2))
        ex(t(2), t(2, rg=True))
    assert ember.jit.counters()["plan_cache_misses"] == 1
    assert ex.recompile_reasons() == []


def test_misses_from_many_threads_give_one_reason_per_new_plan():
    ex = GraphExecutor(parse_ir(MUL))
    dtypes = [E.float32, E.float64, E.int64, E.int32]
    barrier = threading.Barrier(len(dtypes))

    def call(dt):
        barrier.wait()
        for _ in range(3):
            ex(t(2, dtype=dt), t(2, dtype=dt))

    threads = [threading.Thread(target=call, args=(dt,)) for dt in dtypes]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    rs = ex.recompile_reasons()
    assert sorted(r.plan_index for r in rs) == [1, 2, 3]
    assert all(len(r.differences) == 2 for r in rs)  # both inputs' dtypes


@pytest.mark.parametrize("knob", ["recompiles", "peephole, recompiles", "all"])
def test_logged_with_the_knob(monkeypatch, caplog, knob):
    monkeypatch.setenv("EMBER_JIT_LOG", knob)
    ex = GraphExecutor(parse_ir(MUL))
    with caplog.at_level(logging.INFO, logger="ember.jit.recompiles"):
        ex(t(2), t(2))
        ex(t(2, dtype=E.float64), t(2))
        ex(t(2, dtype=E.float64), t(2))
    texts = [r.getMessage() for r in caplog.records if r.name == "ember.jit.recompiles"]
    assert texts == ["ember.jit recompile: plan 1: input 0: dtype float32 -> float64"]
    assert all(r.levelno == logging.INFO for r in caplog.records
               if r.name == "ember.jit.recompiles")


@pytest.mark.parametrize("knob", [None, "", "peephole"])
def test_not_logged_without_it(monkeypatch, caplog, capsys, knob):
    if knob is None:
        monkeypatch.delenv("EMBER_JIT_LOG", raising=False)
    else:
        monkeypatch.setenv("EMBER_JIT_LOG", knob)
    ex = GraphExecutor(parse_ir(MUL))
    with caplog.at_level(logging.INFO, logger="ember.jit.recompiles"):
        ex(t(2), t(2))
        ex(t(2, dtype=E.float64), t(2))
    assert not [r for r in caplog.records if r.name == "ember.jit.recompiles"]
    assert "recompile" not in capsys.readouterr().err
    assert len(ex.recompile_reasons()) == 1  # recorded all the same


def test_logged_to_stderr_without_a_handler(monkeypatch, capsys):
    monkeypatch.setenv("EMBER_JIT_LOG", "recompiles")
    monkeypatch.setattr(logger, "propagate", False)
    monkeypatch.setattr(logger, "handlers", [])
    ex = GraphExecutor(parse_ir(MUL))
    ex(t(2), t(2))
    capsys.readouterr()
    ex(t(2, 2), t(2))
    assert capsys.readouterr().err == "ember.jit recompile: plan 1: input 0: rank 1 -> 2\n"


def test_record_recompile(monkeypatch, caplog):
    monkeypatch.setenv("EMBER_JIT_LOG", "recompiles")
    ex = GraphExecutor(parse_ir(MUL))
    ex(t(2), t(2))
    with caplog.at_level(logging.INFO, logger="ember.jit.recompiles"):
        r = ex.record_recompile(("input 1: dim 0 guarded at 4, got 8",))
    assert r == RecompileReason(1, None, ("input 1: dim 0 guarded at 4, got 8",))
    spec = ArgumentSpec.of((t(2), t(2)), True)
    r2 = ex.record_recompile(["a", "b"], spec=spec, plan_index=7)
    assert str(r2) == "plan 7: a; b" and r2.spec == spec
    assert ex.recompile_reasons() == [r, r2]
    assert ex.get_debug_state()["recompile_reasons"] == [
        "plan 1: input 1: dim 0 guarded at 4, got 8", "plan 7: a; b"]
    assert [rec.getMessage() for rec in caplog.records
            if rec.name == "ember.jit.recompiles"] == [
        "ember.jit recompile: plan 1: input 1: dim 0 guarded at 4, got 8"]


@pytest.mark.parametrize("bad", ["input 1: dim 0", (), ("ok", 3), None])
def test_record_recompile_rejects_bad_differences(bad):
    ex = GraphExecutor(parse_ir(MUL))
    with pytest.raises(TypeError, match="expected a non-empty tuple of strings"):
        ex.record_recompile(bad)
    with pytest.raises(ValueError, match="plan_index None or an int >= 0, got -1"):
        ex.record_recompile(("x",), plan_index=-1)
    with pytest.raises(TypeError, match="plan_index None or an int >= 0, got '1'"):
        ex.record_recompile(("x",), plan_index="1")
    assert ex.recompile_reasons() == []
