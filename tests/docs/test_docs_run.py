"""Every ```python block of README.md and docs/*.md runs (issue 36: docs that run), so a
doc cannot drift from the code.

The blocks of one file run in order in one namespace, in a fresh working directory. Two
HTML comments, invisible when the Markdown is rendered, prepare a block:
``<!-- doc-setup: CODE -->`` runs CODE first (a file the text says comes from the CLI),
and ``<!-- doc-needs: cuda -->`` skips the file's blocks from there on without a GPU.
Interactive sessions are fenced ```pycon and not run; shell commands ```bash or plain.
"""
from __future__ import annotations

import pathlib
import re

import pytest

import ember as E

ROOT = pathlib.Path(__file__).resolve().parents[2]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
BLOCK = re.compile(r"((?:<!-- doc-[a-z]+: .*? -->\n)*)```python\n(.*?)```", re.S)
DIRECTIVE = re.compile(r"<!-- doc-([a-z]+): (.*?) -->")


def blocks(path: pathlib.Path) -> list[tuple[dict, str]]:
    """The ```python blocks of ``path``, each with its directives (name -> value)."""
    out = []
    for m in BLOCK.finditer(path.read_text()):
        directives = {k: v for k, v in DIRECTIVE.findall(m.group(1))}
        out.append((directives, m.group(2)))
    return out


@pytest.mark.parametrize("path", [p for p in DOCS if blocks(p)], ids=lambda p: p.name)
def test_every_python_block_runs(path, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    namespace = {"__name__": f"doc:{path.name}"}
    for i, (directives, code) in enumerate(blocks(path)):
        if directives.get("needs") == "cuda" and not E.cuda.is_available():
            pytest.skip(f"{path.name} block {i} needs a CUDA GPU")
        if "setup" in directives:
            exec(compile(directives["setup"], f"{path.name}[{i}] setup", "exec"), namespace)
        exec(compile(code, f"{path.name}[{i}]", "exec"), namespace)


def test_the_runner_finds_the_blocks():
    assert sum(len(blocks(p)) for p in DOCS) >= 13
    assert blocks(ROOT / "docs" / "onnx.md")[0][0]["setup"].startswith("import ember")
