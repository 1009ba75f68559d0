"""A JIT pass registered by a plugin through a real entry point (group ``ember``, hook
``ember_jit_passes``) is listed by pipeline() and runs when a traced function compiles."""
import sys
import textwrap

import numpy as np
import pytest

import ember as E
import ember.jit
import ember.jit.passes
from ember.plugins import manager
from helpers import assert_close

MODULE = "ember_test_jit_pass_plugin"

PLUGIN = '''
    """A plugin whose pass turns every ember::sin into ember::cos (a visible change)."""
    from ember.plugins import hookimpl

    CALLS = []


    def sin_to_cos(graph):
        CALLS.append(str(graph))
        for block in [graph.block]:
            for n in list(block.nodes()):
                if n.kind != "ember::sin":
                    continue
                cos = graph.create("ember::cos", [n.input()])
                cos.insert_before(n)
                cos.output().type = n.output().type
                n.output().replace_all_uses_with(cos.output())
                n.destroy()


    @hookimpl
    def ember_jit_passes():
        return [("nondiff", sin_to_cos)]
'''


@pytest.fixture
def plugin(tmp_path, monkeypatch):
    (tmp_path / f"{MODULE}.py").write_text(textwrap.dedent(PLUGIN))
    info = tmp_path / "ember_test_jit_pass_plugin-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: ember-test-jit-pass-plugin\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(f"[ember]\nmypasses = {MODULE}\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    manager.reload()
    try:
        yield sys.modules[MODULE]
    finally:
        monkeypatch.undo()
        sys.modules.pop(MODULE, None)
        manager.reload()


def test_plugin_pass_is_listed_and_runs(plugin):
    loaded = next(i for i in manager.plugins() if i.name == "mypasses")
    assert loaded.error is None and loaded.registered["ember_jit_passes"]
    entries = ember.jit.passes.pipeline()
    names = [(p.stage, p.name, p.origin) for p in entries]
    mine = ("nondiff", "sin_to_cos", f"plugin:{MODULE}")
    assert mine in names
    nondiff = [n for n in names if n[0] == "nondiff"]
    assert nondiff[0] == mine  # plugin passes open the nondiff stage, before decompose_ops
    assert [n[1] for n in nondiff[1:]] == ["decompose_ops", "batch_mm", "fuse_graph",
                                          "group_metas"]

    tf = ember.jit.trace(lambda x: x.sin() * 2, (E.randn(3),), check_trace=False)
    plugin.CALLS.clear()
    x = E.tensor([0.0, 1.0, 2.0])
    with E.no_grad():
        y = tf(x)
    assert len(plugin.CALLS) == 1 and "ember::sin" in plugin.CALLS[0]
    assert_close(y, 2 * np.cos([0.0, 1.0, 2.0]), rtol=1e-6)  # the pass changed the graph
    assert "ember::cos" in str(tf.graph_for(x)) and "ember::sin" not in str(tf.graph_for(x))
    assert "ember::sin" in str(tf.graph)  # the traced graph itself is untouched


def test_plugin_pass_runs_for_graphs_that_need_gradients(plugin):
    tf = ember.jit.trace(lambda x: (x.sin() * x).exp(), (E.randn(3),), check_trace=False)
    plugin.CALLS.clear()
    x = E.randn(4, requires_grad=True)
    tf(x).sum().backward()
    assert plugin.CALLS  # ran on the differentiable graph's forward


def test_plugin_pass_is_gone_after_reload():
    names = [(p.stage, p.name) for p in ember.jit.passes.pipeline()]
    assert ("nondiff", "sin_to_cos") not in names
    tf = ember.jit.trace(lambda x: x.sin(), (E.randn(3),), check_trace=False)
    assert_close(tf(E.tensor([1.0])), np.sin([1.0]), rtol=1e-6)
