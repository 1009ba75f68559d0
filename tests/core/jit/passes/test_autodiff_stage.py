"""The autodiff stage's pipeline entries (``passes/autodiff_stage.py``): the docstring's
before/after, the optimizer each Gradient's ``f`` goes through, the inlining knob, and the
executor running the stage from the pipeline table (issue 38)."""
import ast
import importlib
import inspect

import numpy as np

import ember as E
import ember.jit
from ember.jit.passes import pass_manager as pipeline
from ember.jit.ir.kinds import prim
from ember.jit.ir.parser import parse_ir
from ember.jit.passes.autodiff_stage import (create_subgraphs, differentiate_subgraphs,
                                             inline_subgraphs)
from helpers import literal_blocks, to_np

MODULE = importlib.import_module("ember.jit.passes.autodiff_stage")


def groups(g) -> list:
    return [n for n in g.all_nodes() if n.kind == prim.DifferentiableGraph]


def test_docstring_before_after():
    _stage, before, after = literal_blocks(MODULE.__doc__)
    g = parse_ir(before)
    seen = []
    differentiate_subgraphs(g, lambda f: seen.append(str(f)) or f)
    (node,) = groups(g)
    assert len(seen) == 1 and "ember::sin" in seen[0]      # f went through the optimizer
    assert [v.debug_name for v in node.inputs] == ["x"]
    assert [v.debug_name for v in node.outputs] == ["y"]
    text = str(g)
    for line in after.splitlines()[3:]:
        assert line.strip() in text, line
    for key in ("df_input_captured_inputs=[0]", "df_input_captured_outputs=[0]",
                "df_input_vjps=[0]", "df_output_vjps=[0]", "f_real_outputs=1"):
        assert key in text
    # a differentiated group is not differentiated again
    differentiate_subgraphs(g, lambda f: seen.append(str(f)) or f)
    assert len(seen) == 1


CHAIN = """graph(%x : Float(*, requires_grad=1)):
  %a : Float(*) = ember::sin(%x)
  %b : Float(*) = ember::exp(%a)
  %c : Float(*) = ember::tanh(%b)
  return (%c)"""


def test_create_and_inline_follow_the_knob():
    g = parse_ir(CHAIN)
    create_subgraphs(g)
    assert len(groups(g)) == 1
    differentiate_subgraphs(g)
    inline_subgraphs(g)    # 3 ops of work < 5: inlined again
    assert groups(g) == []
    previous = pipeline.autodiff_subgraph_inlining()
    ember.jit.debug_set_autodiff_subgraph_inlining(False)
    try:
        g = parse_ir(CHAIN)
        create_subgraphs(g)
        differentiate_subgraphs(g)
        inline_subgraphs(g)
        assert len(groups(g)) == 1
    finally:
        ember.jit.debug_set_autodiff_subgraph_inlining(previous)


def test_the_executor_runs_the_stage_from_the_table(monkeypatch, capsys):
    # the log of every autodiff entry comes from pipeline.run_pass, which the executor
    # used to bypass for this stage
    monkeypatch.setenv("EMBER_JIT_LOG", "create_autodiff_subgraphs,differentiate,"
                                        "inline_autodiff_subgraphs")
    monkeypatch.setattr(pipeline.logger, "propagate", False)
    monkeypatch.setattr(pipeline.logger, "handlers", [])
    tf = ember.jit.trace(lambda x: (x.sin() * 2).exp().tanh().sum(),
                         (E.randn(3, dtype=E.float64),), check_trace=False)
    capsys.readouterr()
    x = E.randn(4, dtype=E.float64, requires_grad=True)
    out = tf(x)
    err = capsys.readouterr().err
    for name in ("create_autodiff_subgraphs", "differentiate", "inline_autodiff_subgraphs"):
        assert f"graph after {name} (autodiff):" in err
    (g,) = E.autograd.grad(out, [x])
    xn = to_np(x)
    t = np.tanh(np.exp(np.sin(xn) * 2))
    np.testing.assert_allclose(to_np(g), (1 - t * t) * np.exp(np.sin(xn) * 2) * 2 * np.cos(xn),
                               rtol=1e-10)
    assert all(p.fn is not None for p in ember.jit.passes.pipeline())


def _imported_modules(module) -> set:
    """The last component of every module ``module`` imports, function-local ones too."""
    out = set()
    for node in ast.walk(ast.parse(inspect.getsource(module))):
        if isinstance(node, ast.ImportFrom):
            if node.module:
                out.add(node.module.rsplit(".", 1)[-1])
            else:  # from . import x: x is a module
                out.update(a.name for a in node.names)
        elif isinstance(node, ast.Import):
            out.update(a.name.rsplit(".", 1)[-1] for a in node.names)
    return out


def test_the_executor_imports_none_of_autodiffs_pieces():
    import ember.jit.runtime.executor as executor
    pieces = {"autodiff", "differentiable_graph", "create_autodiff_subgraphs",
              "inline_autodiff_subgraphs", "autodiff_stage", "decompose_ops"}
    assert _imported_modules(executor) & pieces == set()
