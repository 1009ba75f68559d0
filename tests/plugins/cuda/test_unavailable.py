"""The cuda plugin on a machine that cannot run it (CI: no GPU, no CuPy): ``make_backend``
raises PluginUnavailable with the reason and the way out, and through the real plugin
manager the plugin registers nothing, warns nothing, and leaves the cpu backend working.

CuPy's absence, a broken CuPy, a missing driver, no GPU and a too old CuPy are simulated
with ``sys.modules`` entries (``None`` makes ``import cupy`` fail) and small fake modules.
"""
from __future__ import annotations

import sys
import types
import warnings

import pytest

import ember as E
from ember.errors import PluginUnavailable
from ember.plugins import manager
from ember_cuda.backend import make_backend


def fake_cupy(version="14.2.0", count=None, error=None):
    """A stand-in ``cupy`` whose ``cuda.runtime.getDeviceCount`` returns ``count`` or
    raises ``error``."""
    def get_device_count():
        if error is not None:
            raise error
        return count
    cupy = types.ModuleType("cupy")
    cupy.__version__ = version
    cupy.cuda = types.SimpleNamespace(runtime=types.SimpleNamespace(
        getDeviceCount=get_device_count))
    return cupy


@pytest.fixture
def restore_plugins(monkeypatch):
    """Undo the test's sys.modules changes, then reload the real plugins."""
    yield monkeypatch
    monkeypatch.undo()
    manager.reload()


def test_without_cupy(monkeypatch):
    monkeypatch.setitem(sys.modules, "cupy", None)
    with pytest.raises(PluginUnavailable) as err:
        make_backend()
    msg = str(err.value)
    assert msg.startswith("CuPy is not installed")
    assert "pip install 'ember-cuda[cuda13]'" in msg and "'ember-cuda[cuda12]'" in msg


def test_cupy_that_fails_to_import(monkeypatch, tmp_path):
    # the usual cause: a CuPy wheel for another CUDA major version than the libraries
    pkg = tmp_path / "cupy"
    pkg.mkdir()
    (pkg / "__init__.py").write_text(
        "raise ImportError('libnvrtc.so.13: cannot open shared object file', "
        "name='cupy_backends.cuda.libs.nvrtc')\n")
    monkeypatch.delitem(sys.modules, "cupy", raising=False)
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(PluginUnavailable, match=r"CuPy failed to import \(ImportError: "
                                                r"libnvrtc\.so\.13.*reinstall with pip "
                                                r"install 'ember-cuda\[cuda13\]'"):
        make_backend()


def test_without_a_driver(monkeypatch):
    error = RuntimeError("cudaErrorInsufficientDriver: CUDA driver version is insufficient "
                         "for CUDA runtime version")
    monkeypatch.setitem(sys.modules, "cupy", fake_cupy(error=error))
    with pytest.raises(PluginUnavailable) as err:
        make_backend()
    msg = str(err.value)
    assert msg.startswith("no usable CUDA driver (RuntimeError: cudaErrorInsufficientDriver")
    assert "NVIDIA driver" in msg and "ember-cuda[cuda12]" in msg


@pytest.mark.parametrize("cupy", [
    fake_cupy(count=0),
    # what CuPy raises when a driver is installed but sees no GPU
    fake_cupy(error=RuntimeError("cudaErrorNoDevice: no CUDA-capable device is detected"))])
def test_without_a_gpu(monkeypatch, cupy):
    monkeypatch.setitem(sys.modules, "cupy", cupy)
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "")
    with pytest.raises(PluginUnavailable, match=r"^no CUDA device is visible "
                                                r"\(CUDA_VISIBLE_DEVICES=''\): the cuda "
                                                r"backend needs an NVIDIA GPU$"):
        make_backend()


def test_with_a_cupy_too_old(monkeypatch):
    monkeypatch.setitem(sys.modules, "cupy", fake_cupy(version="12.3.0", count=1))
    with pytest.raises(PluginUnavailable, match=r"needs CuPy >= 13, found 12\.3\.0: upgrade "
                                                r"with pip install"):
        make_backend()


@pytest.mark.parametrize("cupy", [None, fake_cupy(count=0),
                                  fake_cupy(error=RuntimeError("no driver"))],
                         ids=["no_cupy", "no_gpu", "no_driver"])
def test_plugin_manager_lists_it_unavailable_quietly(restore_plugins, cupy, capsys):
    restore_plugins.setitem(sys.modules, "cupy", cupy)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        manager.reload()
        infos = {i.name: i for i in manager.plugins()}
    assert not [str(w.message) for w in caught if "ember" in str(w.message)]
    info = infos["cuda"]
    assert info.error is None and info.registered == {}
    assert info.unavailable and ("CuPy is not installed" in info.unavailable or
                                 "no CUDA device" in info.unavailable or
                                 "no usable CUDA driver" in info.unavailable)
    # nothing registered: no backend, no convolution algorithm for cuda
    assert "cuda" not in {b.name for b in E.backends.registry.all_backends()}
    assert not [a for a in manager.registered["ember_convolution_algorithms"]
                if getattr(a, "device_type", None) == "cuda"]
    assert E.cuda.is_available() is False and E.cuda.device_count() == 0
    assert (E.ones(3) + 1).tolist() == [2.0, 2.0, 2.0]      # the cpu backend still works
    from ember.cli import main
    assert main(["plugins"]) == 0
    out = capsys.readouterr().out
    assert "[unavailable]" in out and f"why: {info.unavailable}" in out
