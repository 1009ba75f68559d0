"""The bottom layer ``ember/_base`` (issue 38): grad mode, tracing state and dim wrapping
import nothing from ember, the old paths are the same objects, and dim wrapping follows
torch (compared with torch 2.x where it is installed)."""
import ast
import pathlib
import subprocess
import sys
import threading

import pytest

import ember as E
from ember import _base, dispatch
from ember._base import grad_mode, tracing_state, wrap_dim

BASE = pathlib.Path(_base.__file__).parent
tensor = sys.modules["ember.tensor"]  # (ember.tensor is also the factory function)


@pytest.mark.parametrize("path", sorted(BASE.glob("*.py")), ids=lambda p: p.name)
def test_base_modules_import_nothing_from_ember(path):
    tree = ast.parse(path.read_text())
    for node in ast.walk(tree):  # function-local imports included
        if isinstance(node, ast.ImportFrom):
            assert node.level == 0 and not (node.module or "").startswith("ember"), \
                f"{path.name}:{node.lineno} imports from ember"
        elif isinstance(node, ast.Import):
            assert not any(a.name.startswith("ember") for a in node.names), \
                f"{path.name}:{node.lineno} imports ember"


def test_base_modules_load_without_ember():
    """Loaded by file path, each module runs with no ember module imported at all."""
    code = (
        "import importlib.util, sys\n"
        f"base = {str(BASE)!r}\n"
        "for name in ('grad_mode', 'tracing_state', 'wrap_dim'):\n"
        "    spec = importlib.util.spec_from_file_location(name, f'{base}/{name}.py')\n"
        "    spec.loader.exec_module(importlib.util.module_from_spec(spec))\n"
        "assert not [m for m in sys.modules if m.startswith('ember')], sys.modules\n")
    subprocess.run([sys.executable, "-c", code], check=True)


def test_old_paths_are_the_same_objects():
    from ember.autograd import grad_mode as old_gm
    from ember.jit.frontend import tracing_state as old_ts
    for name in ("STATE", "no_grad", "enable_grad", "set_grad_enabled", "inference_mode",
                 "is_grad_enabled", "is_inference_mode_enabled"):
        assert getattr(old_gm, name) is getattr(grad_mode, name)
    assert E.no_grad is grad_mode.no_grad and E.autograd.no_grad is grad_mode.no_grad
    assert old_ts.STATE is tracing_state.STATE
    assert dispatch.wrap_dim is wrap_dim.wrap_dim and dispatch.wrap_dims is wrap_dim.wrap_dims
    # the Tensor's constructors live with the Tensor; dispatch re-exports them
    assert dispatch.wrap is tensor.wrap and dispatch.wrap_view is tensor.wrap_view


def test_grad_mode_state_drives_the_wrappers_and_is_per_thread():
    x = E.ones(2, requires_grad=True)
    with grad_mode.no_grad():
        assert (x * 2).grad_fn is None
        seen = []
        t = threading.Thread(target=lambda: seen.append(grad_mode.is_grad_enabled()))
        t.start()
        t.join()
        assert seen == [True]  # a new thread starts with grad mode on, as in PyTorch
    assert (x * 2).grad_fn is not None


@pytest.mark.parametrize("ndim", [0, 1, 3])
def test_wrap_dim_matches_torch(ndim):
    torch = pytest.importorskip("torch")
    t = torch.zeros((2,) * ndim)
    for d in range(-5, 6):
        try:
            torch.sum(t, d)  # a 0-d tensor takes dims -1 and 0 (maybe_wrap_dim's scalar rule)
            want = d % max(ndim, 1)
        except IndexError:
            with pytest.raises(IndexError, match="dimension out of range"):
                wrap_dim.wrap_dim(d, ndim, "size")
            continue
        assert wrap_dim.wrap_dim(d, ndim, "size") == want


def test_wrap_dims_none_tuple_and_repeats():
    assert wrap_dim.wrap_dims(None, 3, "sum") is None
    assert wrap_dim.wrap_dims(-1, 3, "sum") == 2
    assert wrap_dim.wrap_dims((0, -1), 3, "sum") == (0, 2)
    with pytest.raises(ValueError, match="appears multiple times"):
        wrap_dim.wrap_dims((0, -3), 3, "sum")
    with pytest.raises(IndexError, match=r"expected to be in range of \[-3, 2\], but got 3"):
        E.zeros(1, 1, 1).sum(3)
