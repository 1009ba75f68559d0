"""ops/namespace.py: the ops layer's namespace holds the very objects ``ember`` exposes
(no call in between), only ops-layer names, and sees composites registered late."""
import importlib.util
import pathlib
import types

import numpy as np
import pytest
import torch

import ember
import ember.ops
from ember.ops import codegen, composite
from ember.ops import namespace as N


def _layers():
    """tests/core/test_layers.py, loaded by path (tests/ is not a package)."""
    path = pathlib.Path(__file__).resolve().parents[1] / "test_layers.py"
    spec = importlib.util.spec_from_file_location("_ember_test_layers", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_ember_reexports_every_name_as_the_same_object():
    names = N.exports()
    assert len(names) > 500  # the generated ops are in
    missing = sorted(k for k in names if not hasattr(ember, k))
    assert not missing, f"ember lacks {missing[:10]}"
    other = sorted(k for k, v in names.items() if getattr(ember, k) is not v)
    assert not other, f"ember.<name> is not ember.ops.namespace.<name> for {other[:10]}"
    assert set(names) <= set(dir(ember))
    assert ember.add is N.add and ember.Tensor is N.Tensor and ember.long is N.long


def test_every_generated_function_is_in_both():
    ops = {nf.name for nf in ember.ops.FUNCTIONS if "function" in nf.variants}
    assert len(ops) > 400
    for name in sorted(ops):
        assert getattr(N, name) is getattr(ember, name), name


@pytest.mark.parametrize("name", ["add", "mul", "linalg_solve", "_convolution"])
def test_the_names_are_the_generated_wrappers_themselves(name):
    # no layer in between: N.<op> is the compiled wrapper codegen made (one overload)
    nfs = [nf for nf in ember.ops.FUNCTIONS if nf.name == name]
    assert len(nfs) == 1
    assert getattr(N, name) is codegen.NAMESPACE[codegen.wrapper_name(nfs[0])]


def test_the_namespace_holds_ops_layer_names_only():
    layers = _layers()
    ops_layer = layers.NAMES.index("ops")
    above = {}
    for name, obj in vars(N).items():
        if name.startswith("__"):
            continue
        assert not isinstance(obj, types.ModuleType), f"{name}: a module in the namespace"
        mod = getattr(obj, "__module__", None)
        if isinstance(obj, (types.FunctionType, type)) and mod not in (None, "ember"):
            # ("ember" is the generated wrappers' module name)
            if layers.layer_of(mod) > ops_layer:
                above[name] = mod
    assert not above, f"names from above the ops layer: {above}"
    for name in ("no_grad", "enable_grad", "is_grad_enabled", "linalg", "nn", "save"):
        assert not hasattr(N, name), name


def test_result_type_and_is_tensor_match_torch():
    a, b = ember.ones(2, dtype=ember.int32), ember.tensor(1.5, dtype=ember.float64)
    ta, tb = torch.ones(2, dtype=torch.int32), torch.tensor(1.5, dtype=torch.float64)
    for args, targs in (((a, b), (ta, tb)), ((a, 2.0), (ta, 2.0)), ((a, True), (ta, True))):
        assert str(N.result_type(*args)).split(".")[-1] == \
            str(torch.result_type(*targs)).split(".")[-1]
    assert N.is_tensor(a) and not N.is_tensor(np.ones(2))
    assert N.bool is ember.bool_ and N.long is ember.int64 and N.half is ember.float16


def test_a_composite_registered_late_reaches_both(monkeypatch):
    # linalg registers its composites when ember imports it (after the wrappers exist);
    # a replacement registered later still reaches the one wrapper both names hold
    assert "linalg_vector_norm" in composite.COMPOSITES
    x = ember.tensor([3.0, -4.0])
    assert N.linalg_vector_norm(x).item() == ember.linalg.vector_norm(x).item() == 5.0
    calls = []
    original = composite.COMPOSITES["linalg_vector_norm"]

    def spy(*args, **kwargs):
        calls.append(args[0])
        return original(*args, **kwargs)

    monkeypatch.setitem(composite.COMPOSITES, "linalg_vector_norm", spy)
    np.testing.assert_allclose(ember.linalg_vector_norm(x, 1).numpy(), 7.0)
    np.testing.assert_allclose(N.linalg_vector_norm(x, 1).numpy(), 7.0)
    assert len(calls) == 2 and all(c is x for c in calls)


@pytest.mark.parametrize("name", ["cat", "stack", "where", "maximum", "zeros_like"])
def test_lower_modules_call_the_same_ops(name):
    # what optim/, utils/ and autograd import from the namespace is what users call
    assert getattr(N, name) is getattr(ember, name)
