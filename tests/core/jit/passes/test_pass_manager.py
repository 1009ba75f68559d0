"""The pass pipeline: the order pipeline() lists, custom passes at every stage (where they
are listed and when they run), failing passes (JitPassWarning, the graph still runs),
handle.remove(), EMBER_JIT_LOG."""
import logging
import warnings

import numpy as np
import pytest

import ember as E
import ember.jit
import ember.jit.passes
from ember.jit import JitPassWarning
from ember.jit.ir.parser import parse_ir
from ember.jit.passes.pass_manager import STAGES, logger
from helpers import assert_close, to_np


def listed():
    return [(p.stage, p.name, p.origin) for p in ember.jit.passes.pipeline()]


def fn(x, y):
    return ((x * y + 1).sin() * x).tanh().sum(-1)


def check_runs(tf, requires_grad=False, no_grad=False):
    """Call ``tf`` on fresh inputs of a new rank (forcing a compile) and compare with eager,
    gradients included."""
    x = E.randn(2, 3, 4, dtype=E.float64, requires_grad=requires_grad)
    y = E.randn(4, dtype=E.float64)
    if no_grad:
        with E.no_grad():
            out = tf(x, y)
    else:
        out = tf(x, y)
    np.testing.assert_allclose(to_np(out), to_np(fn(x, y)), rtol=1e-12)
    if requires_grad:
        (g,) = E.autograd.grad(out.sum(), [x])
        xe = x.detach().requires_grad_(True)
        (ge,) = E.autograd.grad(fn(xe, y).sum(), [xe])
        np.testing.assert_allclose(to_np(g), to_np(ge), rtol=1e-12)


def test_builtin_order():
    names = listed()
    assert [s for s, _, _ in names] == sorted((s for s, _, _ in names), key=STAGES.index)
    by_stage = {st: [n for s, n, _ in names if s == st] for st in STAGES}
    assert by_stage["required"] == ["specialize_autograd_zero", "lower_grad_of",
                                    "remove_expands", "canonicalize_ops", "eliminate_dead_code"]
    assert by_stage["specialization"] == ["constant_propagation", "propagate_shapes",
                                          "propagate_requires_grad"]
    assert by_stage["optimization"] == [
        "eliminate_dead_code", "eliminate_common_subexpression", "constant_pooling",
        "peephole", "constant_propagation", "unroll_loops", "eliminate_common_subexpression",
        "check_inplace"]
    assert by_stage["autodiff"] == ["decompose_ops", "create_autodiff_subgraphs", "differentiate",
                                    "inline_autodiff_subgraphs"]
    assert by_stage["nondiff"] == ["decompose_ops", "batch_mm", "fuse_graph", "group_metas"]
    assert by_stage["final"] == ["eliminate_dead_code"]
    assert {o for _, _, o in names} == {"builtin"}


def test_every_builtin_pass_module_imports():
    for p in ember.jit.passes.pipeline():
        if p.fn is not None:
            assert callable(p.fn)
    g = parse_ir("""graph(%x : Float(2, device=cpu)):
      %y : Float(2, device=cpu) = ember::neg(%x)
      return (%y)""")
    for p in ember.jit.passes.pipeline():
        if p.fn is not None and p.name != "propagate_shapes":
            p.fn(g)  # a missing module raises here, naming it
    g.lint()


@pytest.mark.parametrize("stage", STAGES)
def test_custom_pass_is_listed_and_runs(stage):
    calls = []

    def count_pass(graph):
        calls.append(graph)

    handle = ember.jit.register_pass(count_pass, stage=stage)
    try:
        names = listed()
        pos = names.index((stage, count_pass.__qualname__, "custom"))
        in_stage = [i for i, (s, _, _) in enumerate(names) if s == stage]
        # custom passes open the nondiff and autodiff stages and close the others
        assert pos == (in_stage[0] if stage in ("nondiff", "autodiff") else in_stage[-1])
        tf = ember.jit.trace(fn, (E.randn(3, 4, dtype=E.float64), E.randn(4, dtype=E.float64)))
        calls.clear()
        check_runs(tf, no_grad=True)
        assert len(calls) == (0 if stage == "autodiff" else 1)
        calls.clear()
        check_runs(tf, requires_grad=True)
        # a gradient is needed: nondiff passes run on each differentiable graph's f only
        assert len(calls) >= 1
    finally:
        handle.remove()
    assert (stage, count_pass.__qualname__, "custom") not in listed()


def test_custom_passes_see_the_graph_at_their_stage():
    seen = {}

    def snapshot(stage):
        def p(graph):
            seen[stage] = str(graph)
        return p

    handles = [ember.jit.register_pass(snapshot(s), stage=s) for s in
               ("required", "specialization", "optimization", "final")]
    try:
        tf = ember.jit.trace(lambda x: (x * 1).exp(), (E.randn(3),))
        with E.no_grad():
            tf(E.randn(2, 2))
    finally:
        for h in handles:
            h.remove()
    assert "ember::mul" in seen["required"]  # before peephole
    assert "ember::mul" not in seen["optimization"] and "ember::mul" not in seen["final"]
    assert "Float(*, *" in seen["specialization"]  # shapes propagated (ranks only)


def test_register_pass_name_and_errors():
    with ember.jit.register_pass(lambda g: None, stage="final", name="my_final") as h:
        assert ("final", "my_final", "custom") == listed()[-1]
        assert "my_final" in str(h.entry) and "custom" in str(h.entry)
    h.remove()  # twice is harmless
    assert ("final", "my_final", "custom") not in listed()
    with pytest.raises(ValueError, match="unknown stage 'late'"):
        ember.jit.register_pass(lambda g: None, stage="late")
    with pytest.raises(TypeError, match="callable"):
        ember.jit.register_pass("peephole")


def test_pass_may_return_a_replacement_graph():
    def replace(graph):
        return parse_ir("""graph(%x : Tensor):
          %y : Tensor = ember::neg(%x)
          return (%y)""")

    tf = ember.jit.trace(lambda x: x.exp(), (E.randn(3),))
    with ember.jit.register_pass(replace, stage="final"):
        x = E.tensor([1.0, 2.0])
        assert_close(tf(x), np.array([-1.0, -2.0]))


def test_pass_returning_something_else_is_reported():
    tf = ember.jit.trace(lambda x: x.exp(), (E.randn(3),))
    with ember.jit.register_pass(lambda g: 42, stage="optimization", name="returns_int"):
        with pytest.warns(JitPassWarning, match="returns_int.*returned int"):
            assert_close(tf(E.zeros(2)), np.ones(2))


@pytest.mark.parametrize("stage", STAGES)
def test_raising_pass_warns_and_the_graph_still_runs(stage):
    def exploding_pass(graph):
        raise RuntimeError("kaboom")

    tf = ember.jit.trace(fn, (E.randn(3, 4, dtype=E.float64), E.randn(4, dtype=E.float64)))
    with ember.jit.register_pass(exploding_pass, stage=stage, name="exploding_pass"):
        if stage != "autodiff":  # autodiff passes run only when a gradient is needed
            with pytest.warns(JitPassWarning, match=r"pass 'exploding_pass' \(custom, stage "
                                                    rf"{stage}\) raised RuntimeError: kaboom"):
                check_runs(tf, no_grad=True)
        with pytest.warns(JitPassWarning, match="exploding_pass"):
            check_runs(tf, requires_grad=True)
    failures = tf.get_debug_state()["pass_failures"]
    assert failures and all("exploding_pass" in m for m in failures.values())


def test_raising_required_pass_with_optimize_false():
    def exploding_required(graph):
        raise RuntimeError("kaboom")

    with ember.jit.register_pass(exploding_required, stage="required"):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            tf = ember.jit.trace(fn, (E.randn(3, 4, dtype=E.float64),
                                      E.randn(4, dtype=E.float64)), optimize=False)
            check_runs(tf, requires_grad=True)
    assert any(issubclass(w.category, JitPassWarning) and "exploding_required" in
               str(w.message) for w in caught)


def test_log_goes_to_the_ember_jit_logger(monkeypatch, caplog):
    monkeypatch.setenv("EMBER_JIT_LOG", "peephole, fuse_graph")
    tf = ember.jit.trace(lambda x: (x * 1).exp(), (E.randn(3),), check_trace=False)
    with caplog.at_level(logging.INFO, logger="ember.jit"):
        caplog.clear()
        with E.no_grad():
            tf(E.randn(2, 2))
    texts = [r.getMessage() for r in caplog.records if r.name == "ember.jit"]
    assert [t.splitlines()[0] for t in texts] == [
        "graph after peephole (optimization):", "graph after fuse_graph (nondiff):"]
    assert "ember::exp" in texts[0] and "ember::mul" not in texts[0]


def test_log_all_to_stderr_without_a_handler(monkeypatch, capsys):
    monkeypatch.setenv("EMBER_JIT_LOG", "all")
    monkeypatch.setattr(logger, "propagate", False)
    monkeypatch.setattr(logger, "handlers", [])
    tf = ember.jit.trace(lambda x: x.exp(), (E.randn(3),), check_trace=False)
    capsys.readouterr()
    tf(E.randn(2, 2))
    err = capsys.readouterr().err
    assert "graph after peephole (optimization):" in err
    assert "graph after eliminate_dead_code (final):" in err


def test_no_log_by_default(monkeypatch, capsys, caplog):
    monkeypatch.delenv("EMBER_JIT_LOG", raising=False)
    tf = ember.jit.trace(lambda x: x.exp(), (E.randn(3),), check_trace=False)
    with caplog.at_level(logging.INFO, logger="ember.jit"):
        tf(E.randn(2, 2))
    assert not [r for r in caplog.records if r.name == "ember.jit"]
    assert "graph after" not in capsys.readouterr().err
