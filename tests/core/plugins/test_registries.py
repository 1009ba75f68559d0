"""The registries own their tables (issue 38, item 3): the plugin manager registers each
plugin's items there with the plugin's name as owner, ember's built-ins go through the same
call with the owner ``"ember"`` (``ember/_build.py``), unloading a plugin takes out exactly
its items, and no registry imports the manager."""
import ast
import pathlib
import textwrap
import types

import pytest

import ember as E
from ember._base import registry as R
from ember.backends import convolution, registry as backends
from ember.distributed import process_group
from ember.jit.runtime import fuser
from ember.jit.passes import pass_manager as pipeline
from ember.onnx import registry as onnx_registry
from ember.plugins import load_module, manager, unload_module

CORE = pathlib.Path(E.__file__).resolve().parent
TABLES = {"ember_backends": backends.TABLE,
          "ember_convolution_algorithms": convolution.ALGORITHMS,
          "ember_fusers": fuser.FUSERS,
          "ember_jit_passes": pipeline.PASSES,
          "ember_onnx_symbolics": onnx_registry.SYMBOLICS,
          "ember_process_group_backends": process_group.BACKENDS}

PLUGIN = """
    import numpy as np
    from ember.backends import array_api
    from ember.backends.convolution import Decline
    from ember.plugins import hookimpl
    from ember.types import Backend

    def my_pass(graph):
        return None

    def my_symbolic(g, x):
        return x

    class Algo:
        name, priority, device_type, supports_groups = "reg_algo", -5, "regplug", True
        def supports(self, params):
            return Decline("never")
        def forward(self, *a):
            raise AssertionError("never chosen")
        backward = forward

    class Fuser:
        name, device_type = "reg_fuser", "regplug"
        def compile(self, subgraph):
            raise NotImplementedError

    class Group:
        name, device_types = "regplug_pg", ("regplug",)
        def new_group(self, rank, world_size, timeout):
            raise NotImplementedError

    @hookimpl
    def ember_backends():
        return [Backend(name="regplug", xp=np, kernels=array_api.make_kernels(np),
                        type_prefix="RegPlug", array_type=np.ndarray,
                        to_numpy=lambda a: a, from_numpy=lambda a, i: a, is_host=True)]

    @hookimpl
    def ember_convolution_algorithms():
        return [Algo()]

    @hookimpl
    def ember_fusers():
        return [Fuser()]

    @hookimpl
    def ember_jit_passes():
        return [("nondiff", my_pass)]

    @hookimpl
    def ember_onnx_symbolics():
        return [("ember::reg_op", my_symbolic)]

    @hookimpl
    def ember_process_group_backends():
        return [Group()]
"""


def snapshot() -> dict:
    return {hook: t.entries() for hook, t in TABLES.items()}


@pytest.fixture
def plugged():
    mod = types.ModuleType("ember_regplug")
    exec(textwrap.dedent(PLUGIN), mod.__dict__)
    before = snapshot()
    info = load_module(mod, "regplug")
    assert info.error is None and info.refused is None, info
    yield before
    if any(i.name == "regplug" for i in manager.plugins()):
        unload_module("regplug")


def test_the_manager_and_the_registries_share_one_table_per_hook():
    assert set(TABLES) == set(manager.HOOKS)
    for hook, table in TABLES.items():
        assert R.table(hook) is table and manager._table(hook) is table


def test_builtin_passes_register_through_the_same_call_as_a_plugins(plugged):
    entries = pipeline.PASSES.entries()
    builtin = [item for owner, item in entries if owner == R.BUILTIN]
    assert [(p.stage, p.name) for p in builtin] == \
        [(p.stage, p.name) for p in pipeline.builtin_passes()]
    assert all(p.origin == "builtin" for p in builtin)
    mine = [item for owner, item in entries if owner == "regplug"]
    assert [(stage, fn.__name__) for stage, fn in mine] == [("nondiff", "my_pass")]
    # and the pipeline still runs them where it did: plugin passes first in nondiff
    nondiff = pipeline.stage_passes("nondiff")
    assert nondiff[0].name == "my_pass" and nondiff[0].origin == "plugin:ember_regplug"
    assert [p.name for p in nondiff[1:]] == [p.name for p in builtin if p.stage == "nondiff"]


def test_builtin_symbolics_register_through_the_same_call_as_a_plugins(plugged):
    owners = {}
    for owner, item in onnx_registry.SYMBOLICS.entries():
        owners.setdefault(owner, []).append(item)
    assert owners["ember"] and all(s.origin == "ember" for s in owners["ember"])
    assert "ember::relu" in {s.op for s in owners["ember"]}
    assert [s[0] for s in owners["regplug"]] == ["ember::reg_op"]
    assert onnx_registry.lookup("ember::relu", 17).origin == "ember"
    assert onnx_registry.lookup("ember::reg_op", 17).origin == "plugin:ember_regplug"


def test_the_convolution_dispatcher_is_a_shared_kernel_ember_registers():
    assert (R.BUILTIN, convolution.install_kernels) in backends._shared
    kernel = backends.get_backend("cpu").kernels["_convolution"]
    assert kernel.__qualname__.startswith("install_kernels.")
    with pytest.raises(ValueError, match="already gave an installer"):
        backends.register_shared_kernels(convolution.install_kernels, R.BUILTIN)


def test_a_plugins_items_are_registered_under_its_name(plugged):
    for hook, table in TABLES.items():
        owned = [item for owner, item in table.entries() if owner == "regplug"]
        assert len(owned) == 1, hook
        assert [e for e in table.entries() if e[0] != "regplug"] == plugged[hook], hook
    assert backends.get_backend("regplug").name == "regplug"
    assert "regplug_pg" in process_group.backends()
    assert fuser.get_fuser("regplug").name == "reg_fuser"
    assert "reg_algo" in [a.name for a in convolution.algorithms("regplug")]
    # manager.registered reads the plugins' items, never ember's own
    assert [p[1].__name__ for p in manager.registered["ember_jit_passes"]] == ["my_pass"]


def test_unloading_a_plugin_removes_exactly_its_items(plugged):
    unload_module("regplug")
    assert snapshot() == plugged
    assert fuser.get_fuser("regplug") is None
    assert "regplug_pg" not in process_group.backends()
    assert "reg_algo" not in [a.name for a in convolution.algorithms()]
    assert onnx_registry.lookup("ember::reg_op", 17) is None


def test_reload_keeps_the_builtins():
    manager.reload()
    assert pipeline.PASSES.owners()[0] == R.BUILTIN
    assert onnx_registry.SYMBOLICS.owners()[0] == R.BUILTIN
    assert [p.name for p in pipeline.stage_passes("final")] == ["eliminate_dead_code"]


@pytest.mark.parametrize("module", ["_base/registry.py", "backends/registry.py",
                                    "backends/convolution.py", "jit/runtime/fuser.py",
                                    "jit/passes/pass_manager.py", "onnx/registry.py",
                                    "distributed/process_group.py", "plugins/validation.py"])
def test_no_registry_imports_the_plugin_manager(module):
    tree = ast.parse((CORE / module).read_text())
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            names |= {f"{node.module}.{a.name}" for a in node.names} | {str(node.module)}
        elif isinstance(node, ast.Import):
            names |= {a.name for a in node.names}
    assert not [n for n in names if "manager" in n or n.endswith("plugins")], names
    assert not [n for n in names if "onnx" in n and module.startswith("plugins")], names
