"""Issue 35, classes 3 and 4: plugins that collide are refused (never silently replace
another), and loading is all or nothing per plugin for every BaseException a plugin raises
(SystemExit and GeneratorExit are plugin failures; KeyboardInterrupt propagates and leaves
nothing registered, so the next load starts clean).

Throwaway distributions are written as real ``*.dist-info`` folders with entry points,
each in its own directory so the test decides which comes first on ``sys.path``.
"""
import sys
import textwrap
import warnings

import pytest

import ember as E
from ember import cli
from ember.backends import registry
from ember.errors import PluginError
from ember.plugins import manager


@pytest.fixture
def dists(tmp_path, monkeypatch):
    """``install([(dist, ep_name, source), ...])``: the first is first on sys.path."""
    made = []

    def install(specs, load=True):
        for i, (dist, ep, source) in enumerate(reversed(specs)):
            root = tmp_path / f"d{len(made)}_{i}"
            root.mkdir()
            mod = "ember_t35_" + dist.replace("-", "_")
            made.append(mod)
            (root / f"{mod}.py").write_text(textwrap.dedent(source))
            info = root / f"{dist.replace('-', '_')}-0.1.dist-info"
            info.mkdir()
            (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\n"
                                           f"Version: 0.1\n")
            (info / "entry_points.txt").write_text(f"[ember]\n{ep} = {mod}\n")
            monkeypatch.syspath_prepend(str(root))
        if load:
            manager.reload()
    yield install
    monkeypatch.undo()
    for mod in made:
        sys.modules.pop(mod, None)
    manager.reload()


def infos(name):
    return [i for i in manager.plugins() if i.name == name]


HEADER = """
    import numpy as np
    from ember.plugins import hookimpl
    from ember.types import Backend
"""
BACKEND = HEADER + """
    @hookimpl
    def ember_backends():
        return [Backend(name="{ep}", xp=np, kernels={{"full": lambda s, v, d: np.full(s, v, d)}},
                        type_prefix="{prefix}", array_type=np.ndarray, to_numpy=lambda a: a,
                        from_numpy=lambda a, i: a, dlpack_device_type=99)]
"""


class Algo:
    """Source of a convolution algorithm class with the given name."""

    SOURCE = """
    class Algo:
        priority, device_type, supports_groups = 100, "cpu", True
        def __init__(self, name):
            self.name = name
        def supports(self, params):
            return True
        def forward(self, i, w, b, p):
            raise AssertionError("a refused algorithm ran")
        def backward(self, *a):
            raise AssertionError("a refused algorithm ran")
    """


def _hook(hook, body):
    return HEADER + Algo.SOURCE + f"""
    def my_pass(graph):
        pass

    def my_symbolic(g, x):
        return x

    class Fuser:
        def __init__(self, name="stray", device_type="cpu"):
            self.name, self.device_type = name, device_type
        def compile(self, subgraph):
            raise AssertionError("a refused fuser ran")

    @hookimpl
    def {hook}():
        return {body}
"""


# ---- class 3: collisions --------------------------------------------------------------

def test_a_second_cpu_distribution_is_refused_and_never_imported(dists, capsys):
    with pytest.warns(UserWarning, match=r"refusing plugin 'cpu' \(ember-stray-cpu 0\.1\): "
                      r"entry point 'cpu' is already provided by ember-cpu 0\.1\.0") as rec:
        dists([("ember-stray-cpu", "cpu", BACKEND.format(ep="cpu", prefix="Stray"))])
    assert len([w for w in rec if "ember-stray-cpu" in str(w.message)]) == 1
    assert "`pip uninstall ember-stray-cpu` keeps ember-cpu, `pip uninstall ember-cpu` lets " \
           "ember-stray-cpu load" in str(rec[0].message)
    assert "ember_t35_ember_stray_cpu" not in sys.modules
    real, stray = infos("cpu")
    assert real.distribution == "ember-cpu" and real.refused is None and real.registered
    assert stray.distribution == "ember-stray-cpu" and "ember-cpu" in stray.refused
    assert not stray.registered
    assert E.ones(2).type().name == "CPUFloatType" and E.ones(2).sum().item() == 2.0
    assert cli.main(["plugins"]) == 0
    out = capsys.readouterr().out
    assert "ember-stray-cpu 0.1  [refused]" in out
    assert "why: entry point 'cpu' is already provided by ember-cpu 0.1.0" in out


@pytest.mark.parametrize("order", [("ember-one", "ember-two"), ("ember-two", "ember-one")])
def test_two_distributions_with_one_entry_point_the_first_wins_loudly(dists, order):
    first, second = order
    with pytest.warns(UserWarning, match=rf"refusing plugin 'dup' \({second} 0\.1\): entry "
                                         rf"point 'dup' is already provided by {first} 0\.1"):
        dists([(d, "dup", BACKEND.format(ep="dup", prefix=d.split("-")[1].title()))
               for d in order])
    assert E.zeros(1, device="dup").type().name == f"{first.split('-')[1].title()}FloatType"
    owner, refused = infos("dup")
    assert (owner.distribution, refused.distribution) == order
    assert owner.refused is None and first in refused.refused


ITEMS = {
    "convolution algorithm": ("ember_convolution_algorithms",
                              "[Algo('stray_unique'), Algo('native_im2col')]",
                              "convolution algorithm 'native_im2col' for 'cpu' is already "
                              "registered by plugin 'cpu' (ember-cpu 0.1.0)"),
    "fuser": ("ember_fusers", "[Fuser('stray_unique', 'nodev'), Fuser()]",
              "fuser for device type 'cpu' is already registered by plugin 'cpu' "
              "(ember-cpu 0.1.0)"),
}
PAIRS = {  # two throwaway plugins registering the same key: the first (by name) owns it
    "jit pass": ("ember_jit_passes", "[('nondiff', my_pass)]",
                 "JIT pass 'my_pass' at stage 'nondiff' is already registered by plugin "
                 "'aaa' (ember-aaa 0.1)"),
    "onnx symbolic, bare and qualified op": (
        "ember_onnx_symbolics", "[('relu', my_symbolic)] if __name__.endswith('aaa') else "
        "[('ember::relu', my_symbolic, 13)]",
        "ONNX symbolic for ember::relu at opset 13 is already registered by plugin 'aaa'"),
}


@pytest.mark.parametrize("kind", ITEMS)
def test_an_item_colliding_with_the_cpu_plugin_is_refused(dists, kind, capsys):
    hook, body, why = ITEMS[kind]
    # the stray sorts before "cpu" and is first on sys.path: the known plugin still owns it
    with pytest.warns(UserWarning, match="refusing plugin 'aaa_stray'") as rec:
        dists([("ember-stray", "aaa_stray", _hook(hook, body))])
    assert why in str(rec[0].message) and "ember-stray 0.1" in str(rec[0].message)
    assert "EMBER_DISABLE_PLUGINS=aaa_stray or EMBER_DISABLE_PLUGINS=cpu" in str(rec[0].message)
    (stray,) = infos("aaa_stray")
    assert why in stray.refused and not stray.registered
    names = [getattr(a, "name", None) for items in manager.registered.values()
             for a in items]
    assert "stray_unique" not in names and "stray" not in names   # nothing of it is kept
    assert names.count("native_im2col") == 1 and names.count("cpu-blocked") == 1
    x = E.randn(1, 1, 5, 5)
    assert E.nn.functional.conv2d(x, E.ones(1, 1, 3, 3)).shape == (1, 1, 3, 3)
    assert cli.main(["plugins"]) == 0
    assert "ember-stray 0.1  [refused]" in capsys.readouterr().out


@pytest.mark.parametrize("kind", PAIRS)
def test_an_item_colliding_with_another_plugin_is_refused(dists, kind):
    hook, body, why = PAIRS[kind]
    with pytest.warns(UserWarning, match="refusing plugin 'bbb' .ember-bbb 0.1.") as rec:
        dists([("ember-bbb", "bbb", _hook(hook, body)), ("ember-aaa", "aaa", _hook(hook, body))])
    assert why in str(rec[0].message)
    (aaa,), (bbb,) = infos("aaa"), infos("bbb")
    assert aaa.registered[hook] and aaa.refused is None
    assert why in bbb.refused and not bbb.registered
    assert len(manager.registered[hook]) == 1


def test_the_way_out_disabling_the_owner_lets_the_other_load(dists, monkeypatch):
    hook, body, _ = PAIRS["jit pass"]
    monkeypatch.setenv("EMBER_DISABLE_PLUGINS", "aaa")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        dists([("ember-bbb", "bbb", _hook(hook, body)), ("ember-aaa", "aaa", _hook(hook, body))])
    (aaa,), (bbb,) = infos("aaa"), infos("bbb")
    assert aaa.disabled and bbb.refused is None and bbb.registered[hook]


def test_one_name_on_another_device_or_stage_is_no_collision(dists):
    # ember-cuda registers its own native_im2col for 'cuda'; a pass may run at two stages
    source = _hook("ember_convolution_algorithms", "[Algo('native_im2col')]").replace(
        '"cpu", True', '"fakedev", True') + """
    @hookimpl
    def ember_jit_passes():
        return [("optimization", my_pass), ("final", my_pass)]
"""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        dists([("ember-other-dev", "aaa_other", source)])
    (info,) = infos("aaa_other")
    assert info.refused is None and info.error is None
    assert len(info.registered["ember_jit_passes"]) == 2
    assert [a.device_type for a in manager.registered["ember_convolution_algorithms"]
            if a.name == "native_im2col"] == ["cpu", "fakedev"]


def test_ember_plugins_load_first_and_own_their_keys(dists):
    # "aaa" sorts before "nnpack_compat" and is first on sys.path: nnpack_compat still owns
    body = "[Algo('nnpack_fft')]"
    with pytest.warns(UserWarning, match=r"refusing plugin 'aaa' \(ember-aaa 0\.1\): its "
                      r"convolution algorithm 'nnpack_fft' for 'cpu' is already registered "
                      r"by plugin 'nnpack_compat' \(ember-nnpack-compat 0\.1\.0\)"):
        dists([("ember-aaa", "aaa", _hook("ember_convolution_algorithms", body))])
    assert infos("nnpack_compat")[0].registered["ember_convolution_algorithms"]


def test_a_plugin_returning_one_key_twice_is_skipped(dists):
    with pytest.warns(UserWarning, match=r"skipping plugin 'twice'.*returned the convolution "
                                         r"algorithm 'mine' for 'cpu' twice"):
        dists([("ember-twice", "twice", _hook("ember_convolution_algorithms",
                                              "[Algo('mine'), Algo('mine')]"))])
    assert not infos("twice")[0].registered


def test_the_backend_registry_refuses_a_second_backend_of_one_name():
    cpu = registry.get_backend("cpu")
    other = type(cpu)(name="cpu", xp=cpu.xp, kernels={}, type_prefix="Other",
                      array_type=cpu.array_type, to_numpy=cpu.to_numpy,
                      from_numpy=cpu.from_numpy, dlpack_device_type=1)
    with pytest.raises(PluginError, match=r"a backend named 'cpu' is already registered "
                                          r"\(CPU\*Type\); unregister\('cpu'\) first"):
        registry.register(other)
    assert registry.get_backend("cpu") is cpu
    registry.register(cpu)   # the same object again is not a replacement


# ---- class 4: every BaseException of a plugin is the plugin's failure ------------------

GOOD = _hook("ember_jit_passes", "[('final', my_pass)]")
FAULTS = {
    "sys.exit()": ("import sys\nsys.exit()\n", "SystemExit(None): the plugin called sys.exit()"),
    "sys.exit(3)": ("import sys\nsys.exit(3)\n", "SystemExit(3)"),
    "SystemExit('bye')": ("raise SystemExit('bye')\n", "SystemExit('bye')"),
    "GeneratorExit": ("raise GeneratorExit('closed')\n", "GeneratorExit: closed"),
    "a BaseException subclass": ("class Odd(BaseException):\n    pass\nraise Odd('odd')\n",
                                 "Odd: odd"),
}


@pytest.mark.parametrize("where", ["import", "hook"])
@pytest.mark.parametrize("fault", FAULTS)
def test_base_exceptions_of_a_plugin_are_isolated(dists, fault, where):
    code, cause = FAULTS[fault]
    if where == "import":
        source = code
    else:
        body = textwrap.indent(code, "        ")
        source = f"from ember.plugins import hookimpl\n\n@hookimpl\ndef ember_fusers():\n{body}"
    with pytest.warns(UserWarning, match="skipping plugin 'bad' .ember-bad 0.1.") as rec:
        dists([("ember-bad", "bad", source), ("ember-good", "good", GOOD)])
    assert cause in str(rec[0].message)
    (bad,), (good,) = infos("bad"), infos("good")
    assert cause in bad.error and not bad.registered
    assert good.registered["ember_jit_passes"] and good.error is None
    assert E.ones(2).sum().item() == 2.0   # the host goes on


INTERRUPT_IN_HOOK = """
    from ember.plugins import hookimpl
    ARMED = [True]

    @hookimpl
    def ember_fusers():
        if ARMED[0]:
            raise KeyboardInterrupt
        return []
"""


@pytest.mark.parametrize("where", ["import", "hook"])
def test_keyboard_interrupt_propagates_and_a_reload_starts_clean(dists, tmp_path, where):
    source = "raise KeyboardInterrupt\n" if where == "import" else INTERRUPT_IN_HOOK
    # "aaa" loads before the interrupted "zzz"; cpu and the others load too
    dists([("ember-aaa", "aaa", GOOD), ("ember-zzz", "zzz", source)], load=False)
    with pytest.raises(KeyboardInterrupt):
        manager.reload()
    assert not manager._loaded
    assert all(not items for items in manager.registered.values())
    assert not registry._backends and not manager._infos
    if where == "import":
        path = next(tmp_path.rglob("ember_t35_ember_zzz.py"))
        path.write_text("")
        sys.modules.pop("ember_t35_ember_zzz", None)
    else:
        sys.modules["ember_t35_ember_zzz"].ARMED[0] = False
    manager.ensure_loaded()
    names = [getattr(a, "name", a) for items in manager.registered.values() for a in items]
    assert names.count("native_im2col") == 1 and names.count("cpu-blocked") == 1
    assert len([p for p in manager.registered["ember_jit_passes"] if p[1].__name__ ==
                "my_pass"]) == 1
    assert [i.name for i in manager.plugins()].count("aaa") == 1
    assert E.ones(3).sum().item() == 3.0
