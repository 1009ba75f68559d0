"""The hook tables of the bottom layer (``ember/_base/hooks.py``): what autograd and the
tracer supply to ``Tensor``, indexing, the factories and the hand-written ops below them
(issue 38), filled by the composition root; the tracer's loaded on first use."""
import importlib
import subprocess
import sys

import pytest

import ember  # noqa: F401 - builds the tables
from ember._base import hooks
from ember._base.hooks import AUTOGRAD, TRACER, HookNotInstalledError, HookTable, LazyHookTable
from ember.jit.frontend import tracer_hooks


def test_install_and_read():
    table = HookTable("test", {"f": "f(x) -> x + 1"})
    table.install(f=lambda x: x + 1)
    assert table.f(1) == 2
    assert table.installed() == ["f"] and "installed=['f']" in repr(table)


def test_errors_name_the_table_and_the_hook():
    table = HookTable("test", {"f": "f(x) -> x + 1"})
    with pytest.raises(HookNotInstalledError, match=r"test hook 'f' \(f\(x\) -> x \+ 1\)"):
        table.f(1)
    assert issubclass(HookNotInstalledError, RuntimeError)
    with pytest.raises(KeyError, match="no hook named 'g'"):
        table.install(g=len)
    with pytest.raises(AttributeError, match="'g'"):
        table.g
    with pytest.raises(AttributeError, match="no hook named 'g'"):
        LazyHookTable("test", {}).g
    with pytest.raises(AttributeError, match=r"install\(f=...\)"):
        table.f = len


def test_loader_is_asked_once_per_hook():
    asked = []
    table = LazyHookTable("test", {"f": "", "g": ""})
    table.set_loader(lambda name: asked.append(name) or (lambda: name))
    assert (table.f(), table.f(), table.g()) == ("f", "f", "g")
    assert asked == ["f", "g"]  # later reads find the function on the table
    assert table.installed() == ["f", "g"]


def test_hooks_module_loads_without_ember():
    code = ("import importlib.util, sys\n"
            f"spec = importlib.util.spec_from_file_location('hooks', {hooks.__file__!r})\n"
            "spec.loader.exec_module(importlib.util.module_from_spec(spec))\n"
            "assert not [m for m in sys.modules if m.startswith('ember')]\n")
    subprocess.run([sys.executable, "-c", code], check=True)


def test_import_ember_fills_autograd_and_hands_the_tracer_a_loader():
    from ember.autograd import kernel_pair, record_handwritten, views
    assert AUTOGRAD.record_handwritten is record_handwritten
    assert AUTOGRAD.end_inplace is views.end_inplace
    assert AUTOGRAD.check_inplace is views.check_inplace
    assert AUTOGRAD.kernel_pair is kernel_pair.run
    # every tracer hook has a supplier in the JIT, and the loader finds it there
    assert set(tracer_hooks.HOOKS) == set(TRACER._hooks)
    for name, (module, fn) in tracer_hooks.HOOKS.items():
        jit_module = importlib.import_module(f"{tracer_hooks.__package__}.{module}")
        assert tracer_hooks.load(name) is getattr(jit_module, fn)
        assert getattr(TRACER, name) is getattr(jit_module, fn)


def test_import_ember_does_not_load_the_tracer():
    code = ("import sys, ember\n"
            "x = ember.randn(3, requires_grad=True)\n"
            "x[1:].to(ember.float64).sum().backward()\n"
            "loaded = [m for m in sys.modules if m.startswith('ember.jit') and\n"
            "          m.rpartition('.')[2] in ('tracer', 'symbolic_sizes',\n"
            "                                   'traced_factories')]\n"
            "assert not loaded, loaded\n")
    subprocess.run([sys.executable, "-c", code], check=True)
