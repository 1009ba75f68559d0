"""The three example plugins of ``examples/plugins/`` (issue 36), as a plugin author uses
them: built from their pyproject.toml and found by entry point, or loaded in process.

- Built (module-scope fixture ``built``, once per session): each example's source is
  copied to a temporary directory (the build writes ``build/`` and ``*.egg-info`` next to
  it), all three are installed with ``pip install --no-deps --no-build-isolation --target``
  (pip builds each wheel with setuptools), and one fresh Python with that directory on
  ``PYTHONPATH`` runs ``exercise_example_plugins.py``: ``ember plugins``, the JIT pass on a
  traced function, a training step on ``device="logcpu"``, the convolution algorithm
  forward and backward. The tests check what it wrote against numpy float64 and torch.
- In process: ``ember.plugins.load_module`` registers a plugin module from the source
  tree, ``unload_module`` removes it again, so nothing leaks into other tests.
"""
from __future__ import annotations

import importlib
import importlib.util
import json
import logging
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import NamedTuple

import numpy as np
import pytest
from helpers import needs_torch

import ember as E
import ember.plugins
from ember.backends import convolution
from ember.backends.registry import get_backend
from ember.jit.ir.parser import parse_ir
from ember.jit.passes import canonicalize
from ember.jit.passes.pass_manager import pipeline
from ember.plugins import manager, validation

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples" / "plugins"
SOURCES = {"pass": "ember_example_pass", "logging_backend": "ember_example_logging_backend",
           "conv": "ember_example_conv"}
DISTRIBUTIONS = {"pass": "ember-example-pass",
                 "logging_backend": "ember-example-logging-backend",
                 "conv": "ember-example-conv"}
CONV = dict(padding=1, stride=(2, 1))   # what exercise_example_plugins.py runs
MINIMAL = {k for group in validation.REQUIRED_KERNELS.values() for k in group.kernels}


def _conv_inputs(rng) -> dict:
    x, w, b = rng.standard_normal((2, 3, 9, 8)), rng.standard_normal((4, 3, 3, 3)), \
        rng.standard_normal(4)
    out = E.nn.functional.conv2d(E.tensor(x), E.tensor(w), E.tensor(b), **CONV)  # its shape
    return {"x": x, "w": w, "b": b, "grad_out": rng.standard_normal(tuple(out.shape))}


def _train_inputs(rng) -> dict:
    return {"x": rng.standard_normal((8, 3)), "y": rng.standard_normal((8, 2)),
            "w": rng.standard_normal((2, 3)), "b": rng.standard_normal(2)}


# ---- built and installed --------------------------------------------------------------------

class Built(NamedTuple):
    """What the fresh Python with the installed examples saw (``seen``, from its JSON; the
    convolution's results ``conv_out``), and the inputs it was given."""

    seen: dict
    conv_in: dict
    conv_out: dict
    train_in: dict


def _run(args: list, **kwargs) -> None:
    done = subprocess.run(args, capture_output=True, text=True, timeout=600, **kwargs)
    assert done.returncode == 0, f"{' '.join(args[:4])} ... failed:\n{done.stderr[-3000:]}"


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Built:
    """Build and install the three examples into a temporary directory and use them from a
    fresh Python (see the module docstring); once per session."""
    for tool in ("pip", "setuptools"):
        if importlib.util.find_spec(tool) is None:
            pytest.skip(f"{tool} is not installed: cannot build the example plugins")
    setuptools = Path(importlib.util.find_spec("setuptools").origin).parent  # not imported
    if not (setuptools / "command" / "bdist_wheel.py").exists() \
            and importlib.util.find_spec("wheel") is None:
        pytest.skip("setuptools < 70.1 without the wheel package cannot build a wheel: "
                    "pip install 'setuptools>=70.1'")
    work = tmp_path_factory.mktemp("example_plugins")
    for folder in SOURCES:
        shutil.copytree(EXAMPLES / folder, work / "src" / folder,
                        ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__"))
    site = work / "site"
    _run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-build-isolation",
          "--no-index", "--disable-pip-version-check", "--target", str(site),
          *(str(work / "src" / f) for f in SOURCES)])
    rng = np.random.default_rng(36)
    conv_in, train_in = _conv_inputs(rng), _train_inputs(rng)
    np.savez(work / "conv_in.npz", **conv_in)
    np.savez(work / "train_in.npz", **train_in)
    env = {k: v for k, v in os.environ.items() if k not in ("EMBER_PLUGINS",
                                                             "EMBER_DISABLE_PLUGINS")}
    env["PYTHONPATH"] = os.pathsep.join([str(site), *filter(None, [env.get("PYTHONPATH")])])
    _run([sys.executable, str(Path(__file__).with_name("exercise_example_plugins.py")),
          str(work)], env=env)
    return Built(json.loads((work / "seen.json").read_text()), conv_in,
                 dict(np.load(work / "conv_out.npz")), train_in)


def test_ember_plugins_lists_the_installed_examples(built):
    text = built.seen["plugins"]
    lines = [line.split() for line in text.splitlines()]
    for name, dist in (("example_conv", "ember-example-conv"),
                       ("example_pass", "ember-example-pass"),
                       ("logcpu", "ember-example-logging-backend")):
        assert [name, dist, "0.1.0", "[loaded]"] in lines, text
    for item in ("convolution_algorithms: convolution algorithm tap_gemm",
                 "jit_passes: pass fold_idempotent at optimization",
                 f"backends: backend logcpu (LogCPU*Type, {len(MINIMAL)} kernels)"):
        assert item in text, text


def test_the_readmes_run(built):
    assert built.seen["readmes"] == {"conv": 1, "logging_backend": 1, "pass": 1}


def test_installed_pass_folds_a_traced_graph(built):
    seen = built.seen["pass"]
    assert seen["traced"].count("ember::relu(") == 2 and seen["traced"].count("ember::abs(") == 2
    assert seen["optimized"].count("ember::relu(") == 1, seen["optimized"]
    assert seen["optimized"].count("ember::abs(") == 1, seen["optimized"]
    assert ["optimization", "fold_idempotent", "plugin:ember_example_pass"] in seen["pipeline"]
    assert "fold_idempotent: folded ember::abs x1, ember::relu x1" in seen["log"]
    assert seen["value_ok"]


def test_installed_logging_backend_trains_like_cpu(built):
    seen = built.seen["backend"]
    for key in ("loss", "weight", "bias"):
        np.testing.assert_allclose(seen["logcpu"][key], seen["cpu"][key], rtol=0, atol=1e-12)
    x, y, w, b = (built.train_in[k] for k in ("x", "y", "w", "b"))
    err = x @ w.T + b - y   # the float64 reference: d mean(err^2) / d(w, b)
    np.testing.assert_allclose(seen["logcpu"]["loss"], np.mean(err ** 2), rtol=1e-12)
    np.testing.assert_allclose(seen["logcpu"]["weight"], w - 0.1 * 2 * err.T @ x / err.size,
                               rtol=0, atol=1e-12)
    np.testing.assert_allclose(seen["logcpu"]["bias"], b - 0.1 * 2 * err.sum(0) / err.size,
                               rtol=0, atol=1e-12)
    assert "logcpu addmm((2,) float64, (8, 3) float64, (3, 2) float64, 1, 1)" in seen["log"]
    assert any(m.startswith("logcpu mm(") for m in seen["log"])   # the backward ran there
    assert seen["log_after_cpu"] == 0 and seen["numpy_shares"]


def test_installed_conv_algorithm_is_picked_and_matches_torch(built):
    seen, conv_in, got = built.seen["conv"], built.conv_in, built.conv_out
    assert seen["explain"].endswith("-> tap_gemm"), seen["explain"]
    assert "tap_gemm: declined (kernel 5x5 has 25 taps, more than 9)" in seen["explain_5x5"]
    torch = needs_torch()
    x, w, b = (torch.tensor(conv_in[k], requires_grad=True) for k in ("x", "w", "b"))
    out = torch.nn.functional.conv2d(x, w, b, **CONV)
    out.backward(torch.tensor(conv_in["grad_out"]))
    for name, ref in (("out", out), ("gx", x.grad), ("gw", w.grad), ("gb", b.grad)):
        np.testing.assert_allclose(got[name], ref.detach().numpy(), rtol=0, atol=1e-12,
                                   err_msg=name)


# ---- loaded in process ----------------------------------------------------------------------

@pytest.fixture
def load(monkeypatch):
    """``load(folder, name=None)``: import the plugin module of ``examples/plugins/folder``
    from the source tree and register it with ``load_module``; unloaded after the test."""
    loaded = []

    def load(folder: str, name: str | None = None):
        dist = DISTRIBUTIONS[folder]
        for info in manager.plugins():
            if info.distribution == dist and not info.in_process and not info.disabled:
                pytest.skip(f"{dist} is installed here (entry point '{info.name}'), so an "
                            f"in-process copy would be refused; `pip uninstall {dist}` to run "
                            f"this test")
        monkeypatch.syspath_prepend(str(EXAMPLES / folder))
        module = importlib.import_module(f"{SOURCES[folder]}.plugin")
        info = ember.plugins.load_module(module, name=name)
        assert info.error is None and info.refused is None, info
        loaded.append(info.name)
        return module

    yield load
    for name in dict.fromkeys(loaded):
        ember.plugins.unload_module(name)


FOLD_BEFORE = """graph(%x : Float(2, 3)):
  %1 : Float(2, 3) = ember::relu(%x)
  %2 : Float(2, 3) = ember::relu(%1)
  %3 : Float(2, 3) = ember::abs(%2)
  %4 : Float(2, 3) = ember::abs(%3)
  %5 : Float(2, 3) = ember::abs(%4)
  return (%5)"""
FOLD_AFTER = """graph(%x : Float(2, 3)):
  %1 : Float(2, 3) = ember::relu(%x)
  %3 : Float(2, 3) = ember::abs(%1)
  return (%3)"""


def test_fold_idempotent_before_after(monkeypatch):
    monkeypatch.syspath_prepend(str(EXAMPLES / "pass"))
    from ember_example_pass import fold_idempotent
    g = parse_ir(FOLD_BEFORE)
    fold_idempotent(g)
    g.lint()
    assert str(canonicalize(g)) == str(canonicalize(parse_ir(FOLD_AFTER)))


@pytest.mark.parametrize("text", [
    # different ops, one input each: nothing to fold
    """graph(%x : Float(2, 3)):
  %1 : Float(2, 3) = ember::relu(%x)
  %2 : Float(2, 3) = ember::abs(%1)
  return (%2)""",
    # an in-place op: folding would change what the in-place op's readers alias
    """graph(%x : Float(2, 3)):
  %1 : Float(2, 3) = ember::relu(%x)
  %2 : Float(2, 3) = ember::relu(%1)
  %3 : Float(2, 3) = ember::relu_(%1)
  return (%2, %3)"""])
def test_fold_idempotent_leaves_alone(monkeypatch, text):
    monkeypatch.syspath_prepend(str(EXAMPLES / "pass"))
    from ember_example_pass import fold_idempotent
    g = parse_ir(text)
    fold_idempotent(g)
    assert str(canonicalize(g)) == str(canonicalize(parse_ir(text)))


def test_loaded_pass_runs_in_the_pipeline(load, caplog):
    load("pass")
    assert ("optimization", "fold_idempotent") in [(p.stage, p.name) for p in pipeline()]
    x = E.tensor(np.linspace(-2, 2, 12).reshape(3, 4))
    with caplog.at_level(logging.INFO, logger="ember_example_pass"):
        traced = E.jit.trace(lambda t: t.floor().floor().relu(), (x,))
        graph = str(traced.graph_for(x))
    assert graph.count("ember::floor(") == 1 and graph.count("ember::relu(") == 1, graph
    assert "fold_idempotent: folded ember::floor x1" in caplog.messages
    np.testing.assert_array_equal(traced(x).numpy(), np.maximum(np.floor(x.numpy()), 0))


def test_loaded_logging_backend_trains_like_cpu(load, caplog):
    load("logging_backend", name="logcpu")
    rng = np.random.default_rng(0)
    data = _train_inputs(rng)
    results = {}
    for device in ("logcpu", "cpu"):
        dev = dict(dtype=E.float64, device=device)
        lin = E.nn.Linear(3, 2, **dev)
        with E.no_grad():
            lin.weight.copy_(E.tensor(data["w"], **dev))
            lin.bias.copy_(E.tensor(data["b"], **dev))
        with caplog.at_level(logging.DEBUG, logger="ember_example_logging_backend"):
            loss = E.nn.functional.mse_loss(lin(E.tensor(data["x"], **dev)),
                                            E.tensor(data["y"], **dev))
            loss.backward()
            E.optim.SGD(lin.parameters(), lr=0.1).step()
        results[device] = [loss.item(), lin.weight.detach().numpy(), lin.bias.detach().numpy()]
        if device == "logcpu":
            assert lin.weight.device == E.Device("logcpu")
            assert "logcpu t((2, 3) float64)" in caplog.messages
            caplog.clear()
    assert not caplog.messages   # the cpu step logged nothing
    for a, b in zip(results["logcpu"], results["cpu"]):
        np.testing.assert_allclose(a, b, rtol=0, atol=1e-12)


def test_loaded_logging_backend_has_the_minimal_kernel_set(load):
    load("logging_backend", name="logcpu")
    kernels = get_backend("logcpu").kernels
    assert validation.missing_kernels(kernels) == {}
    # the core adds the convolution dispatcher's two kernels to every backend
    assert set(kernels) - {"_convolution", "convolution_backward"} == MINIMAL


def test_loaded_logging_backend_names_a_missing_kernel(load):
    load("logging_backend", name="logcpu")
    x = E.ones(3, dtype=E.float64, device="logcpu")
    with pytest.raises(NotImplementedError, match="exp"):
        x.exp()


@pytest.mark.parametrize("dtype,tol", [(np.float64, 1e-12), (np.float32, 2e-5)])
@pytest.mark.parametrize("x_shape,w_shape,kwargs", [
    ((2, 3, 9, 8), (4, 3, 3, 3), dict(padding=1)),
    ((1, 3, 7, 7), (5, 3, 1, 1), dict(stride=2)),
    ((2, 4, 9, 10), (6, 2, 3, 1), dict(stride=(2, 1), padding=(1, 0), dilation=(2, 1),
                                       groups=2)),
    ((2, 2, 6, 6), (3, 2, 1, 3), dict(padding=(0, 2), dilation=(1, 2)))])
def test_loaded_conv_algorithm_matches_torch(load, x_shape, w_shape, kwargs, dtype, tol):
    torch = needs_torch()
    load("conv")
    rng = np.random.default_rng(1)
    arrays = [rng.standard_normal(s).astype(dtype) for s in (x_shape, w_shape, w_shape[:1])]
    x, w, b = (E.tensor(a, requires_grad=True) for a in arrays)
    assert convolution.explain(x, w, b, **kwargs).chosen == "tap_gemm"
    xt, wt, bt = (torch.tensor(a, requires_grad=True) for a in arrays)
    ref = torch.nn.functional.conv2d(xt, wt, bt, **kwargs)
    grad_out = rng.standard_normal(tuple(ref.shape)).astype(dtype)
    out = E.nn.functional.conv2d(x, w, b, **kwargs)
    out.backward(E.tensor(grad_out))
    ref.backward(torch.tensor(grad_out))
    for got, want in ((out, ref), (x.grad, xt.grad), (w.grad, wt.grad), (b.grad, bt.grad)):
        assert got.dtype == E.float64 if dtype == np.float64 else got.dtype == E.float32
        np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=tol,
                                   atol=tol)


@pytest.mark.parametrize("x_shape,w_shape,kwargs,reason", [
    ((2, 3, 9, 8), (4, 3, 5, 5), dict(padding=2), "kernel 5x5 has 25 taps, more than 9"),
    ((2, 3, 9), (4, 3, 3), dict(), "1-D convolution; tap_gemm is 2-D only"),
    ((2, 3, 9, 8), (3, 4, 3, 3), dict(transposed=True), "transposed convolution")])
def test_loaded_conv_algorithm_declines_with_a_reason(load, x_shape, w_shape, kwargs, reason):
    load("conv")
    x, w = E.ones(*x_shape), E.ones(*w_shape)
    text = str(convolution.explain(x, w, **kwargs))
    assert f"tap_gemm: declined ({reason})" in text, text
    assert "-> tap_gemm" not in text


def test_unloading_the_conv_algorithm_restores_the_choice(load):
    x, w = E.ones(1, 2, 5, 5), E.ones(2, 2, 3, 3)
    before = convolution.explain(x, w, padding=1).chosen
    load("conv")
    assert convolution.explain(x, w, padding=1).chosen == "tap_gemm"
    ember.plugins.unload_module("ember_example_conv.plugin")
    assert convolution.explain(x, w, padding=1).chosen == before != "tap_gemm"
    load("conv")   # loads again after an unload (the fixture unloads it at the end)
