"""The import layers of ``core/ember`` (docs/architecture.md): no module imports upward.

Every module of the core package belongs to one layer (``LAYERS``, longest prefix wins)::

    0 base        _base (grad mode, tracing state, dim wrapping), _files, _dlpack,
                  parallel: nothing of ember
    1 types       types, errors, type_info, _format
    2 tensor/     tensor (Tensor, wrap), dispatch, backends,
      dispatch    plugins.hookspecs/kernel_table/validation/hints
    3 ops         ops, _indexing, factories, random, linalg, special, functional...
    4 autograd    autograd
    5 jit         jit
    6 surface     nn, optim, utils, distributions, distributed, cuda, serialization, testing
    7 top         onnx, train, cli, ember.plugins and its manager, the composition root
                  (_build) and the public API (ember/__init__.py)

An import from a lower layer into a higher one is *upward*. The graph is read with
``ast`` from the source (no import runs), every ``import`` and ``from ... import``
statement counted wherever it is, function-local ones included; imports under
``if TYPE_CHECKING:`` are not (they never run). An edge goes to the most specific module
named: ``from .autograd import grad_mode`` is an edge to ``ember.autograd.grad_mode``,
``from .. import zeros`` one to ``ember`` (the package ``__init__``). Importing a submodule
also runs its parents' ``__init__``; those implicit edges are not counted.

``DEBT`` lists the upward imports the layering refactor (issue 38) has not removed yet.
It may only shrink: a new upward import fails ``test_no_new_upward_import``, and a debt
entry that no longer exists fails ``test_the_debt_list_is_true`` (delete it). Print the
current list in this file's form, or the import circles, with::

    python tests/core/test_layers.py debt      # the DEBT list as it is today
    python tests/core/test_layers.py cycles    # the strongly connected components
    python tests/core/test_layers.py cycles ember   # the same without `import ember`
"""
from __future__ import annotations

import ast
import functools
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2] / "core" / "ember"

# module prefix -> layer; the longest matching prefix wins (docs/architecture.md)
LAYERS = {
    "ember._base": 0, "ember._files": 0, "ember._dlpack": 0, "ember.parallel": 0,
    "ember.types": 1, "ember.errors": 1, "ember.type_info": 1, "ember._format": 1,
    "ember.backends": 2, "ember.dispatch": 2, "ember.tensor": 2, "ember.plugins.hookspecs": 2,
    "ember.plugins.kernel_table": 2, "ember.plugins.validation": 2, "ember.plugins.hints": 2,
    "ember.ops": 3, "ember._indexing": 3, "ember.factories": 3,
    "ember.random": 3, "ember.sampling": 3, "ember.shape_factories": 3,
    "ember.tensor_factories": 3, "ember.tensor_attributes": 3, "ember.host_data": 3,
    "ember.functional": 3, "ember.special": 3, "ember.linalg": 3,
    "ember.autograd": 4,
    "ember.jit": 5,
    "ember.nn": 6, "ember.optim": 6, "ember.utils": 6, "ember.distributions": 6,
    "ember.distributed": 6, "ember.testing": 6, "ember.cuda": 6, "ember.serialization": 6,
    "ember": 7, "ember.__main__": 7, "ember._build": 7, "ember.cli": 7, "ember.onnx": 7,
    "ember.train": 7, "ember.plugins": 7, "ember.plugins.manager": 7,
}
NAMES = ("base", "types", "tensor/dispatch", "ops", "autograd", "jit", "surface", "top")

# Today's upward imports: (importer, imported) -> the names that tie them. Regenerate
# with ``python tests/core/test_layers.py debt``; it may only shrink. What is left:
# ``jit.traced -> nn`` (Module): a traced module is an ``nn.Module`` (TracedModule), the
# one JIT class that belongs with the surface it wraps.
DEBT: dict = {
    ('ember.jit.frontend.traced', 'ember.nn.modules.module'): {'Module'},
}


def layer_of(module: str) -> int:
    """The layer of ``module`` (dotted, ``ember.autograd.engine``) by its longest prefix in
    ``LAYERS``; raises KeyError naming the module when none matches."""
    parts = module.split(".")
    for n in range(len(parts), 0, -1):
        layer = LAYERS.get(".".join(parts[:n]))
        if layer is not None:
            return layer
    raise KeyError(f"{module} is in no layer: add its prefix to LAYERS in {__file__} "
                   f"(and to docs/architecture.md)")


def modules(root: pathlib.Path = ROOT) -> dict:
    """Dotted module name -> source path, for every ``.py`` file under ``root``."""
    out = {}
    for path in sorted(root.rglob("*.py")):
        parts = ("ember",) + path.relative_to(root).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or \
        (isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _imports(tree: ast.AST):
    """Every import statement in ``tree`` outside ``if TYPE_CHECKING:`` blocks."""
    stack = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            stack.extend(node.orelse)
            continue
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node
        stack.extend(ast.iter_child_nodes(node))


def import_graph(root: pathlib.Path = ROOT) -> dict:
    """``{importer: {imported: set of names}}`` over the ember modules under ``root``
    (imports of other packages are left out)."""
    mods = modules(root)
    graph: dict = {m: {} for m in mods}
    for mod, path in mods.items():
        package = mod if path.name == "__init__.py" else mod.rpartition(".")[0]
        for node in _imports(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                pairs = [(a.name, a.name) for a in node.names]
            else:
                if node.level:
                    base = package.split(".")
                    base = base[:len(base) - node.level + 1]
                    target = ".".join(base + ([node.module] if node.module else []))
                else:
                    target = node.module or ""
                pairs = []
                for a in node.names:  # a submodule by that name, else a name in target
                    sub = f"{target}.{a.name}"
                    pairs.append((sub, a.name) if sub in mods else (target, a.name))
            for target, name in pairs:
                while target and target not in mods:  # import a.b.c of a package a.b
                    target = target.rpartition(".")[0]
                if target and target != mod and target.split(".")[0] == "ember":
                    graph[mod].setdefault(target, set()).add(name)
    return graph


def upward(graph: dict) -> dict:
    """``{(importer, imported): names}`` for every import into a higher layer."""
    return {(src, dst): names for src, targets in graph.items()
            for dst, names in targets.items() if layer_of(src) < layer_of(dst)}


def test_every_module_has_a_layer():
    missing = []
    for mod in modules():
        try:
            layer_of(mod)
        except KeyError as e:
            missing.append(str(e))
    assert not missing, "\n".join(missing)


@functools.lru_cache(maxsize=None)
def _upward_now() -> dict:
    """``upward(import_graph())`` of the checkout, read once per test session."""
    return upward(import_graph())


def test_no_new_upward_import():
    new = {k: sorted(v - set(DEBT.get(k, ()))) for k, v in _upward_now().items()}
    new = {k: v for k, v in new.items() if v}
    lines = [f"{src} (layer {NAMES[layer_of(src)]}) imports {dst} (layer "
             f"{NAMES[layer_of(dst)]}): {', '.join(names)}" for (src, dst), names in new.items()]
    assert not new, ("upward imports (docs/architecture.md: a module imports only from its "
                     "layer and those below; hand the object down through the composition "
                     "root, or move the code to the layer it belongs to):\n" + "\n".join(lines))


def test_the_debt_list_is_true():
    now = _upward_now()
    gone = {k: sorted(set(v) - now.get(k, set())) for k, v in DEBT.items()}
    gone = {k: v for k, v in gone.items() if v}
    lines = [f"{src} -> {dst}: {', '.join(names)}" for (src, dst), names in gone.items()]
    assert not gone, ("paid debt: these upward imports no longer exist; delete them from "
                      "DEBT in tests/core/test_layers.py:\n" + "\n".join(lines))


def test_the_scanner_counts_function_local_and_relative_imports(tmp_path):
    pkg = tmp_path / "ember"
    (pkg / "jit").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "types.py").write_text("")
    (pkg / "jit" / "__init__.py").write_text("")
    (pkg / "jit" / "ir.py").write_text("X = 1\n")
    (pkg / "tensor.py").write_text(
        "from typing import TYPE_CHECKING\nfrom . import types\n"
        "if TYPE_CHECKING:\n    from .jit import ir\n"
        "def f():\n    from .jit.ir import X\n    import ember.jit\n    from . import jit\n")
    graph = import_graph(pkg)
    assert graph["ember.tensor"] == {"ember.types": {"types"}, "ember.jit.ir": {"X"},
                                     "ember.jit": {"ember.jit", "jit"}}
    assert upward(graph) == {("ember.tensor", "ember.jit.ir"): {"X"},
                             ("ember.tensor", "ember.jit"): {"ember.jit", "jit"}}


def cycles(graph: dict) -> list:
    """The import circles: strongly connected components of more than one module
    (Tarjan's algorithm, iterative), largest first."""
    index: dict = {}
    low: dict = {}
    on_stack: set = set()
    stack: list = []
    out = []
    counter = 0
    for start in graph:
        if start in index:
            continue
        work = [(start, iter(graph[start]))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, it = work[-1]
            for nxt in it:
                if nxt not in index:
                    index[nxt] = low[nxt] = counter
                    counter += 1
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(graph.get(nxt, ()))))
                    break
                if nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    comp = set()
                    while True:
                        m = stack.pop()
                        on_stack.discard(m)
                        comp.add(m)
                        if m == node:
                            break
                    if len(comp) > 1:
                        out.append(sorted(comp))
    return sorted(out, key=len, reverse=True)


def test_cycles_finds_a_circle():
    graph = {"a": {"b": {"x"}}, "b": {"c": {"y"}}, "c": {"a": {"z"}}, "d": {"a": {"w"}}}
    assert cycles(graph) == [["a", "b", "c"]]


def print_cycles(root: pathlib.Path = ROOT, skip: tuple = ()) -> None:
    """Print each import circle of ``root``: its modules, then the imports inside it that
    go upward (the ones that close it) with the names that tie them. Imports of the
    modules in ``skip`` are left out (``("ember",)``: the circles the layers make without
    the imports of the public namespace)."""
    graph = import_graph(root)
    graph = {s: {d: n for d, n in t.items() if d not in skip} for s, t in graph.items()}
    comps = cycles(graph)
    n_edges = sum(len(t) for t in graph.values())
    print(f"{len(graph)} modules, {n_edges} import edges, {len(comps)} circle(s)")
    for comp in comps:
        members = set(comp)
        inner = [(s, d, graph[s][d]) for s in comp for d in graph[s] if d in members]
        up = [(s, d, n) for s, d, n in inner if layer_of(s) < layer_of(d)]
        print(f"\n{len(comp)} modules, {len(inner)} imports among them, {len(up)} upward:")
        print("  " + " ".join(m.removeprefix("ember.") or "ember" for m in comp))
        for s, d, names in sorted(up):
            print(f"  {s} -> {d}: {', '.join(sorted(names))}")


def print_debt(root: pathlib.Path = ROOT) -> None:
    """Print today's upward imports as the body of ``DEBT``."""
    for (src, dst), names in sorted(upward(import_graph(root)).items()):
        key, value = f"    ({src!r}, {dst!r}):", "{" + ", ".join(map(repr, sorted(names))) + "},"
        print(f"{key} {value}" if len(key) + len(value) < 100 else f"{key}\n        {value}")


if __name__ == "__main__":
    what = sys.argv[1] if len(sys.argv) > 1 else "cycles"
    if what == "debt":
        print_debt()
    else:  # cycles [MODULE...]: the circles without the imports of those modules
        print_cycles(skip=tuple(sys.argv[2:]))
