"""``ops/codegen.py`` composes the wrapper of each op from the dispatch layer and the
emitters of the layers above (issue 38): the tracer's trace hook, autograd's
requires-grad test, recorder and view finishing. The composed text is what ``import
ember`` installs; without emitters a wrapper is the dispatch layer alone and still
computes (checked against numpy)."""

import numpy as np
import pytest

import ember as E
from ember.autograd.wrapper_emitter import AutogradEmitter
from ember.jit.frontend.tracing_state import TraceEmitter
from ember.ops import FUNCTIONS, codegen, runtime

OPS = ("add", "mul", "sum", "view", "relu", "fill_", "max.dim")


def _nf(qualified):
    return next(nf for nf in FUNCTIONS if nf.kernel_name == qualified)


@pytest.mark.parametrize("qualified", OPS)
def test_the_installed_wrappers_are_the_composition_of_the_emitters(qualified):
    nf = _nf(qualified)
    for inplace in [False] + ([True] if nf.inplace_schema is not None else []):
        name, src, _ = codegen.generate(nf, inplace, [TraceEmitter(),
                                                      AutogradEmitter(E.ops.DERIVATIVES)])
        assert src == codegen.source_of(name)


@pytest.mark.parametrize("qualified", OPS)
def test_without_emitters_a_wrapper_is_the_dispatch_layer_alone(qualified):
    name, src, _ = codegen.generate(_nf(qualified), False, [])
    for upper in ("_tr", "_record", "_gm", "_finish", "_ag_", "_begin_inplace", "_any_rg"):
        assert upper not in src, (upper, src)


def _compile(qualified, inplace=False, emitters=()):
    name, src, extra = codegen.generate(_nf(qualified), inplace, list(emitters))
    ns = dict(runtime.namespace(), **extra)
    for e in emitters:
        ns.update(e.namespace())
    exec(compile(src, f"<test {name}>", "exec"), ns)  # noqa: S102
    return ns[name]


def test_a_dispatch_only_wrapper_computes_and_records_nothing():
    a, b = np.arange(6.0).reshape(2, 3), np.full((2, 3), 0.5)
    add = _compile("add")
    x = E.tensor(a, requires_grad=True)
    out = add(x, E.tensor(b), alpha=2)
    np.testing.assert_allclose(out.numpy(), a + 2 * b)
    assert out.grad_fn is None and not out.requires_grad  # no autograd layer: no node
    total = _compile("sum")(E.tensor(a))
    np.testing.assert_allclose(total.numpy(), a.sum())


def test_an_emitters_lines_go_where_its_hooks_say():
    class Counting:
        """A layer that counts the calls of each op (prologue) and sees each result."""

        calls = []

        def namespace(self):
            return {"_count": self.calls.append}

        def prologue(self, ctx):
            return [f"_count({ctx.qualified!r})"]

        def on_result(self, ctx, outputs):
            return ["_count(_res.shape)"]

    mul = _compile("mul", emitters=[Counting()])
    src = codegen.generate(_nf("mul"), False, [Counting()])[1]
    assert src.splitlines()[2].strip() == "_count('mul')"  # first line of the body
    out = mul(E.ones(2, 3), E.full((2, 3), 3.0))
    np.testing.assert_allclose(out.numpy(), np.full((2, 3), 3.0))
    assert Counting.calls == ["mul", E.Size([2, 3])]


def test_ops_and_tensor_import_neither_autograd_nor_jit_at_import():
    """The modules of the wrappers' layer import only downward at module level."""
    import ast
    import pathlib
    root = pathlib.Path(E.__file__).parent
    for rel in ("ops/codegen.py", "ops/runtime.py", "ops/emit_dispatch.py", "ops/__init__.py",
                "tensor.py", "dispatch.py"):
        tree = ast.parse((root / rel).read_text())
        for node in tree.body:
            if isinstance(node, ast.ImportFrom):
                mod = node.module or ""
                assert not mod.startswith(("autograd", "jit")) and \
                    ".autograd" not in "." + mod and ".jit" not in "." + mod, (rel, mod)
