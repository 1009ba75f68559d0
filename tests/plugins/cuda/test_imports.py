"""ember-cuda uses only ember's public names (device-free): a plugin is its own
distribution, so a private helper of the core may change under it without notice. The
shared matmul shape check is public as ``ember.backends.kernels.linalg.check_inner``."""
from __future__ import annotations

import ast
from pathlib import Path

import numpy as np
import pytest

import ember as E
import ember_cuda
from ember.backends.kernels.linalg import check_inner

SOURCES = sorted(Path(ember_cuda.__file__).parent.rglob("*.py"))


def _private_imports(path: Path) -> list:
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module and \
                node.module.split(".")[0] == "ember":
            names = node.module.split(".") + [a.name for a in node.names]
        elif isinstance(node, ast.Import):
            names = [p for a in node.names if a.name.split(".")[0] == "ember"
                     for p in a.name.split(".")]
        else:
            continue
        found += [f"{path.name}:{node.lineno} {n}" for n in names if n.startswith("_")]
    return found


def test_the_plugin_imports_no_private_name_of_ember():
    assert SOURCES
    private = [hit for path in SOURCES for hit in _private_imports(path)]
    assert not private, f"private ember names imported by ember-cuda: {private}"


def test_check_inner_is_public_documented_and_raises_shape_error():
    assert "ShapeError" in check_inner.__doc__ and "torch.matmul" in check_inner.__doc__
    check_inner("matmul", np.zeros((2, 3)), np.zeros((3, 4)))
    check_inner("matmul", np.zeros((5, 2, 3)), np.zeros(3))
    with pytest.raises(E.ShapeError, match=r"mm\(\): mat1 and mat2 shapes cannot be "
                                           r"multiplied \(2x3 and 4x5\); the last dim of "
                                           r"the first \(3\) must equal the second-to-last "
                                           r"dim of the second \(4\)"):
        check_inner("mm", np.zeros((2, 3)), np.zeros((4, 5)))
    with pytest.raises(E.ShapeError, match=r"must equal the only dim of the second \(4\)"):
        check_inner("matmul", np.zeros((2, 3)), np.zeros(4))
