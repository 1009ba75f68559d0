"""The jit sub-packages (issue 38 item 7): which sub-package may import which, and the old
module paths that keep working (alias modules and the two packages that were modules)."""
import ast
import importlib
import pathlib

import pytest

JIT = pathlib.Path(__file__).resolve().parents[3] / "core" / "ember" / "jit"

# sub-package -> the sub-packages of ember.jit it must not import (function-local included)
FORBIDDEN = {"ir": {"frontend", "runtime", "autodiff", "passes"}, "runtime": {"autodiff"}}
ALIASES = {"tracer": "frontend.tracer", "tracing_state": "frontend.tracing_state",
           "traced": "frontend.traced", "parser": "ir.parser", "ir_types": "ir.ir_types",
           "kinds": "ir.kinds", "fuser": "runtime.fuser", "interpreter": "runtime.interpreter",
           "op_registry": "runtime.op_registry", "pipeline": "passes.pass_manager",
           "recompiles": "runtime.recompiles"}


def _imports(path: pathlib.Path) -> set:
    """The ember.jit sub-packages a module imports, relative imports resolved."""
    parts = ("ember", "jit") + path.relative_to(JIT).with_suffix("").parts
    package = parts[:-1]
    out = set()
    for node in ast.walk(ast.parse(path.read_text())):
        names = []
        if isinstance(node, ast.ImportFrom):
            base = package[:len(package) - node.level + 1] if node.level else ()
            module = ".".join(base + ((node.module,) if node.module else ()))
            names = [module] + [f"{module}.{a.name}" for a in node.names]
        elif isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        out.update(n.split(".")[2] for n in names if n.startswith("ember.jit.")
                   and len(n.split(".")) > 2)
    return out


@pytest.mark.parametrize("package", sorted(FORBIDDEN))
def test_no_import_across_the_forbidden_sub_packages(package):
    files = sorted((JIT / package).rglob("*.py"))
    assert files, f"no modules in ember/jit/{package}/"
    bad = {p.name: sorted(_imports(p) & FORBIDDEN[package]) for p in files}
    assert not {k: v for k, v in bad.items() if v}, \
        f"ember.jit.{package} imports {FORBIDDEN[package]} (see docs/architecture.md)"


@pytest.mark.parametrize("old", sorted(ALIASES))
def test_an_old_public_path_is_the_same_module(old):
    assert importlib.import_module(f"ember.jit.{old}") is \
        importlib.import_module(f"ember.jit.{ALIASES[old]}")


def test_the_packages_that_were_modules_keep_their_names():
    from ember.jit.autodiff import Gradient, differentiate
    from ember.jit.autodiff.differentiation import Gradient as G, differentiate as d
    from ember.jit.ir import Graph, TensorType
    from ember.jit.ir.graph import Graph as Gr, TensorType as T
    assert (Graph, TensorType, Gradient, differentiate) == (Gr, T, G, d)
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        importlib.import_module("ember.jit.ir").nope
