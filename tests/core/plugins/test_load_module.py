"""``ember.plugins.load_module``: a module loaded as a plugin in process, without
installing it, goes through the entry points' validation, isolation and collision rules,
is listed by ``ember plugins``, and leaves no trace after ``unload_module``."""
import sys
import textwrap
import types

import numpy as np
import pytest

import ember as E
import ember.onnx as eo
from ember import cli
from ember.errors import NoBackendError
from ember.plugins import load_module, manager, unload_module

BACKEND = """
    import numpy as np
    from ember.plugins import hookimpl
    from ember.types import Backend
    from ember.backends import array_api

    @hookimpl
    def ember_backends():
        return [Backend(name="{name}", xp=np, kernels=array_api.make_kernels(np),
                        type_prefix="Tiny", array_type=np.ndarray, to_numpy=lambda a: a,
                        from_numpy=lambda a, i: a, is_host=True)]
"""
SYMBOLIC = """
    from ember.plugins import hookimpl

    def my_symbolic(g, x):
        return x

    @hookimpl
    def ember_onnx_symbolics():
        return [("ember::my_inprocess_op", my_symbolic)]
"""


def module(name, source):
    """A module object built from ``source``, as a notebook cell would define one."""
    mod = types.ModuleType(name)
    exec(textwrap.dedent(source), mod.__dict__)
    return mod


@pytest.fixture
def clean():
    """Unload every in-process plugin a test left behind."""
    yield
    for info in manager.plugins():
        if info.in_process:
            unload_module(info.name)


def info(name):
    return [i for i in manager.plugins() if i.name == name]


def test_a_module_object_is_loaded_listed_and_unloaded(clean, capsys):
    gen = manager.generation
    got = load_module(module("tiny_mod", BACKEND.format(name="tiny")), name="tiny")
    assert got.error is None and got.refused is None and got.in_process
    assert manager.generation > gen
    x = E.tensor([1.0, 2.0], device="tiny")
    assert x.type().name == "TinyFloatType" and (x * 2).tolist() == [2.0, 4.0]
    assert cli.main(["plugins"]) == 0
    out = capsys.readouterr().out
    assert "tiny             tiny_mod (loaded in process)  [loaded]" in out
    assert "backends: backend tiny (Tiny*Type" in out
    gen = manager.generation
    unload_module("tiny")
    assert manager.generation > gen and not info("tiny")
    with pytest.raises(NoBackendError, match="no ember backend named 'tiny'"):
        E.zeros(1, device="tiny")


def test_an_importable_module_name_is_loaded_and_named_by_it(clean, tmp_path, monkeypatch):
    (tmp_path / "ember_t36_symbolic.py").write_text(textwrap.dedent(SYMBOLIC))
    monkeypatch.syspath_prepend(str(tmp_path))
    try:
        got = load_module("ember_t36_symbolic")
        assert got.name == "ember_t36_symbolic" and got.error is None
        # caches keyed by manager.generation see the new item, then lose it
        assert eo.registered_ops()["ember::my_inprocess_op"] == "plugin:ember_t36_symbolic"
        unload_module("ember_t36_symbolic")
        assert "ember::my_inprocess_op" not in eo.registered_ops()
    finally:
        sys.modules.pop("ember_t36_symbolic", None)


def test_a_backend_must_be_named_like_the_plugin(clean):
    with pytest.warns(UserWarning, match=r"skipping plugin 'tiny_mod' \(tiny_mod \(loaded in "
                      r"process\)\): PluginError: backend name 'tiny' must equal the name "
                      r"given to load_module 'tiny_mod'"):
        got = load_module(module("tiny_mod", BACKEND.format(name="tiny")))
    assert "must equal" in got.error and not got.registered
    with pytest.raises(NoBackendError, match="installed but failed to load"):
        E.zeros(1, device="tiny_mod")
    # a second try under that name replaces the failed one in the listing
    assert load_module(module("tiny_mod", BACKEND.format(name="tiny_mod"))).error is None
    assert len(info("tiny_mod")) == 1
    assert E.zeros(1, device="tiny_mod").type().name == "TinyFloatType"


@pytest.mark.parametrize("fault", ["raise ValueError('bad')", "raise SystemExit(3)",
                                   "return 42", "return [object()]"])
def test_a_faulty_module_is_isolated_and_registers_nothing(clean, fault):
    source = SYMBOLIC + f"""
    @hookimpl
    def ember_fusers():
        {fault}
"""
    with pytest.warns(UserWarning, match="skipping plugin 'faulty'"):
        got = load_module(module("faulty", source))
    assert got.error
    assert "ember::my_inprocess_op" not in eo.registered_ops()   # all or nothing
    assert info("faulty")[0].error == got.error


def test_an_unimportable_module_name_is_isolated(clean):
    with pytest.warns(UserWarning, match="skipping plugin 'ember_no_such_module'.*"
                                         "ModuleNotFoundError"):
        assert load_module("ember_no_such_module").error


def test_a_name_or_key_held_by_another_plugin_is_refused(clean):
    with pytest.warns(UserWarning, match=r"refusing plugin 'cpu' \(mycpu \(loaded in "
                                         r"process\)\): the name 'cpu' is already held by "
                                         r"plugin 'cpu' \(ember-cpu"):
        assert "ember-cpu" in load_module(module("mycpu", BACKEND.format(name="cpu")),
                                          name="cpu").refused
    assert E.ones(1).type().name == "CPUFloatType"
    assert load_module(module("one", SYMBOLIC)).refused is None
    with pytest.warns(UserWarning, match=r"refusing plugin 'two' .*ONNX symbolic for "
                                         r"ember::my_inprocess_op at opset .* already "
                                         r"registered by plugin 'one'.*unload_module\('one'\)"):
        assert load_module(module("two", SYMBOLIC)).refused
    assert eo.registered_ops()["ember::my_inprocess_op"] == "plugin:one"
    unload_module("one")   # the way out: the key is free again
    assert load_module(module("two", SYMBOLIC)).refused is None


def test_unload_module_refuses_unknown_and_installed_plugins():
    with pytest.raises(KeyError, match="no plugin named 'nope' was loaded"):
        unload_module("nope")
    with pytest.raises(ValueError, match="EMBER_DISABLE_PLUGINS=cpu"):
        unload_module("cpu")
    with pytest.raises(TypeError, match="expected a module"):
        load_module(3)


def test_reload_forgets_in_process_plugins():
    load_module(module("tiny", BACKEND.format(name="tiny")))
    manager.reload()
    assert not info("tiny")
    with pytest.raises(NoBackendError):
        E.zeros(1, device="tiny")
    assert np.array_equal(E.ones(2).numpy(), [1.0, 1.0])


def test_keyboard_interrupt_propagates_and_leaves_nothing(clean):
    source = SYMBOLIC + """
    @hookimpl
    def ember_fusers():
        raise KeyboardInterrupt
"""
    gen = manager.generation
    with pytest.raises(KeyboardInterrupt):
        load_module(module("interrupted", source))
    assert not info("interrupted") and manager.generation == gen
    assert "ember::my_inprocess_op" not in eo.registered_ops()
    assert load_module(module("interrupted", SYMBOLIC)).error is None   # a clean retry
