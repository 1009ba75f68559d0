"""What ``ember_cuda.cudnn`` uses of the cuDNN Frontend, found by scanning its source.

``scan()`` parses every module of the package (``ast``) and collects:

* ``module``: names read on the frontend module: ``fe.X`` / ``self.fe.X`` / ``cudnn.X``
  (``frontend.load`` imports it as ``cudnn``), with each call's positional count and
  keywords (``fe.pygraph(io_data_type=...)``, ``fe.set_stream(handle=, stream=)``);
* ``enums``: members read on the frontend's enums, ``fe.data_type.HALF``, also through a
  local alias (``t = fe.data_type; t.HALF``);
* ``graph``: methods called on a ``pygraph``: in a module that builds one
  (``fe.pygraph(...)``), calls on ``graph`` / ``self.graph`` (elsewhere, ``graph`` is
  ember's own ``ConvGraph``);
* ``tensor``: ``set_*`` setters called on frontend tensors (any receiver but the module).

``test_fake_frontend_api.py`` checks the scan against what a run records on the fake, so
a call the scan misses fails there, then compares the scanned calls with the real package.
"""
from __future__ import annotations

import ast
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

import ember_cuda.cudnn

PACKAGE = Path(ember_cuda.cudnn.__file__).parent
MODULE_NAMES = ("fe", "cudnn")


class Call(NamedTuple):
    """One use: where (file:line), how many positional arguments, which keywords
    (``npos`` is -1 for a plain attribute read)."""

    where: str
    npos: int
    keywords: tuple


@dataclass
class Usage:
    module: dict = field(default_factory=dict)   # name -> [Call]
    enums: dict = field(default_factory=dict)    # enum name -> {member}
    graph: dict = field(default_factory=dict)    # pygraph method -> [Call]
    tensor: dict = field(default_factory=dict)   # tensor setter -> [Call]
    required: tuple = ()                         # frontend.REQUIRED, as written


def _is_module(node) -> bool:
    return (isinstance(node, ast.Name) and node.id in MODULE_NAMES) or \
        (isinstance(node, ast.Attribute) and node.attr == "fe")


def _is_graph(node) -> bool:
    return (isinstance(node, ast.Name) and node.id == "graph") or \
        (isinstance(node, ast.Attribute) and node.attr == "graph")


def _call_of(tree) -> dict:
    """{id(func node): Call node} for every call in ``tree``."""
    return {id(n.func): n for n in ast.walk(tree) if isinstance(n, ast.Call)}


def _aliases(tree) -> dict:
    """Local names bound to a frontend enum: ``t = fe.data_type`` -> {"t": "data_type"}."""
    out = {}
    for n in ast.walk(tree):
        if isinstance(n, ast.Assign) and len(n.targets) == 1 and \
                isinstance(n.targets[0], ast.Name) and isinstance(n.value, ast.Attribute) \
                and _is_module(n.value.value):
            out[n.targets[0].id] = n.value.attr
    return out


def _dicts(tree) -> dict:
    """Local names bound to ``dict(k=...)``, whose keys a ``**name`` call passes."""
    return {n.targets[0].id: tuple(k.arg for k in n.value.keywords) for n in ast.walk(tree)
            if isinstance(n, ast.Assign) and len(n.targets) == 1
            and isinstance(n.targets[0], ast.Name) and isinstance(n.value, ast.Call)
            and isinstance(n.value.func, ast.Name) and n.value.func.id == "dict"}


def _keywords(call, dicts) -> tuple:
    """A call's keyword names, ``**name`` expanded (``"**?"`` when it cannot be)."""
    out = []
    for k in call.keywords:
        if k.arg is not None:
            out.append(k.arg)
        elif isinstance(k.value, ast.Name) and k.value.id in dicts:
            out.extend(dicts[k.value.id])
        else:
            out.append("**?")
    return tuple(out)


def scan(package: Path = PACKAGE) -> Usage:
    """The frontend names, enum members, graph methods and tensor setters ``package``
    uses, each with its call sites."""
    usage = Usage()
    for path in sorted(package.glob("*.py")):
        tree = ast.parse(path.read_text(), str(path))
        calls, aliases, dicts = _call_of(tree), _aliases(tree), _dicts(tree)
        builds_graphs = any(isinstance(n, ast.Attribute) and n.attr == "pygraph"
                            and _is_module(n.value) for n in ast.walk(tree))
        for n in ast.walk(tree):
            if isinstance(n, ast.Assign) and path.name == "frontend.py" and \
                    any(isinstance(t, ast.Name) and t.id == "REQUIRED" for t in n.targets):
                usage.required = tuple(ast.literal_eval(n.value))
            if not isinstance(n, ast.Attribute):
                continue
            call = calls.get(id(n))
            use = Call(f"{path.name}:{n.lineno}", -1 if call is None else len(call.args),
                       () if call is None else _keywords(call, dicts))
            if _is_module(n.value):
                usage.module.setdefault(n.attr, []).append(use)
            elif isinstance(n.value, ast.Attribute) and _is_module(n.value.value):
                usage.enums.setdefault(n.value.attr, set()).add(n.attr)
            elif isinstance(n.value, ast.Name) and n.value.id in aliases:
                usage.enums.setdefault(aliases[n.value.id], set()).add(n.attr)
            elif call is not None and builds_graphs and _is_graph(n.value):
                usage.graph.setdefault(n.attr, []).append(use)
            elif call is not None and n.attr.startswith("set_"):
                usage.tensor.setdefault(n.attr, []).append(use)
    return usage
