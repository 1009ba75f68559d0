"""Plugin manager: entry-point loading, allow/deny lists, fault isolation, listing."""
import pytest

import ember as E
from ember import cli
from ember.plugins import manager

GOOD_BACKEND = """
    import numpy as np
    from ember.plugins import hookimpl
    from ember.types import Backend

    @hookimpl
    def ember_backends():
        return [Backend(name="fake", xp=np, kernels={"add": lambda a, b, alpha: a + b,
                                                      "full": lambda s, v, d: np.full(s, v, d)},
                        type_prefix="Fake", array_type=np.ndarray, to_numpy=lambda a: a,
                        from_numpy=lambda a, i: a, dlpack_device_type=99)]

    @hookimpl
    def ember_jit_passes():
        return [("custom", lambda graph: None)]
"""
RAISES_ON_IMPORT = "raise ImportError('libfoo.so not found')\n"
INVALID = """
    from ember.plugins import hookimpl

    @hookimpl
    def ember_backends():
        return [42]
"""
WRONG_NAME = GOOD_BACKEND.replace('name="fake"', 'name="other"')


def info(name):
    return next(i for i in manager.plugins() if i.name == name)


def test_cpu_plugin_is_found_through_its_entry_point():
    cpu = info("cpu")
    assert cpu.distribution == "ember-cpu" and cpu.error is None
    assert any("backend cpu" in s for s in cpu.registered["ember_backends"])


def test_good_plugin_registers_backend_and_passes(fake_dists):
    fake_dists(fake=GOOD_BACKEND)
    x = E.zeros(3, device="fake")
    assert x.device == E.Device("fake") and x.type().name == "FakeFloatType"
    assert (x + x).tolist() == [0.0, 0.0, 0.0]
    stages = [stage for stage, _ in manager.registered["ember_jit_passes"]]
    assert "custom" in stages


def test_missing_kernel_names_types_that_have_it(fake_dists):
    fake_dists(fake=GOOD_BACKEND)
    x = E.zeros(3, device="fake")
    with pytest.raises(NotImplementedError, match=r"exp: no kernel for FakeFloatType.*"
                                                  r"implemented for: .*CPUFloatType"):
        x.exp()


@pytest.mark.parametrize("source, cause", [
    (RAISES_ON_IMPORT, "ImportError: libfoo.so not found"),
    (INVALID, "returned int, expected ember.types.Backend"),
    (WRONG_NAME, "must equal its entry-point name"),
])
def test_broken_plugin_is_skipped_with_one_warning(fake_dists, source, cause):
    with pytest.warns(UserWarning, match="skipping plugin 'broken'") as record:
        fake_dists(broken=source)
    assert len([w for w in record if "broken" in str(w.message)]) == 1
    assert cause in str(record[0].message)
    assert info("broken").error and not info("broken").registered
    assert E.ones(2).sum().item() == 2.0  # the cpu plugin still loaded
    with pytest.raises(E.NoBackendError):
        E.zeros(1, device="other")


def test_allow_list(fake_dists, monkeypatch):
    monkeypatch.setenv("EMBER_PLUGINS", "fake")
    fake_dists(fake=GOOD_BACKEND)
    assert info("cpu").disabled and not info("fake").disabled
    with pytest.raises(E.NoBackendError, match="ember-cpu 0.1.0 is installed but disabled: "
                                               "check EMBER_PLUGINS"):
        E.zeros(2)


def test_disable_list_and_no_backend_error(reload_plugins, monkeypatch):
    monkeypatch.setenv("EMBER_DISABLE_PLUGINS", "cpu")
    reload_plugins()
    with pytest.raises(E.NoBackendError, match=r"no ember backend named 'cpu'.*"
                                               r"ember-cpu 0\.1\.0 is installed but disabled"):
        E.tensor([1.0])


def test_cli_lists_plugins_and_errors(fake_dists, capsys):
    with pytest.warns(UserWarning):
        fake_dists(fake=GOOD_BACKEND, broken=RAISES_ON_IMPORT)
    assert cli.main(["plugins"]) == 0
    out = capsys.readouterr().out
    assert "cpu" in out and "ember-cpu 0.1.0" in out and "[loaded]" in out
    assert "ember-fake-fake 0.1" in out and "backend fake" in out
    assert "broken" in out and "SKIPPED" in out and "libfoo.so not found" in out



UNAVAILABLE = """
from ember.errors import PluginUnavailable
from ember.plugins import hookimpl


@hookimpl
def ember_backends():
    raise PluginUnavailable("no CUDA GPU on this machine")
"""


def test_an_unavailable_plugin_is_listed_quietly(fake_dists, capsys, recwarn):
    from ember import cli
    fake_dists(nogpu=UNAVAILABLE)
    info = next(p for p in manager.plugins() if p.name == "nogpu")
    assert info.unavailable == "no CUDA GPU on this machine" and info.error is None
    assert not info.registered
    assert not [w for w in recwarn if "nogpu" in str(w.message)]
    assert cli.main(["plugins"]) == 0
    out = capsys.readouterr().out
    assert "nogpu" in out and "[unavailable]" in out and "why: no CUDA GPU" in out
    # asking for its backend says why it is missing, not "install it"
    with pytest.raises(E.NoBackendError, match=r"no ember backend named 'nogpu'.*The plugin "
                       r"ember-fake-nogpu 0\.1 is installed but registered nothing: no CUDA "
                       r"GPU on this machine\."):
        E.zeros(1, device="nogpu")


def test_a_broken_plugin_is_named_by_the_missing_backend_error(fake_dists):
    with pytest.warns(UserWarning):
        fake_dists(broken=RAISES_ON_IMPORT)
    with pytest.raises(E.NoBackendError, match="ember-fake-broken 0.1 is installed but failed "
                                               "to load: .*libfoo.so not found"):
        E.zeros(1, device="broken")
