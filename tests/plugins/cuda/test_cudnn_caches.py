"""What the ``cudnn`` algorithm and the dispatcher keep between convolutions, device-free
(the fake cuDNN Frontend and runtime of ``test_convolution.py``).

* Selection: the sorted algorithm list is read once per change of the algorithm table; the cuDNN
  verdict from the parameters alone and each pass's graph key once per configuration;
  the ``ember.backends.cudnn`` switches are still read on every call, so toggling
  ``enabled``, ``deterministic``, ``benchmark`` or ``allow_tf32`` takes effect at once.
* Remembered declines are keyed like the graphs: device, dtype, shapes, compute layout
  (so strides) and parameters. A refused NCHW configuration does not decline NHWC, nor one
  device another.
"""
from __future__ import annotations

import dataclasses

import numpy as np
import pytest

import ember.backends.convolution as conv_mod
import ember.backends.cudnn as cudnn_switches
from ember.plugins import manager

from .test_convolution import REFERENCE, channels_last, check, conv_params, data

pytestmark = pytest.mark.usefixtures("clean_switches")  # as test_convolution.py runs


@pytest.fixture
def registered(algo):
    """``algo`` and its native fallback as the only registered cuda algorithms."""
    manager.ensure_loaded()
    hook = "ember_convolution_algorithms"
    saved = manager.registered[hook]   # remembers which plugin registered what
    manager.registered[hook] = [a for a in saved if a.device_type != "cuda"] + \
        [algo, algo.native]
    yield algo
    manager.registered[hook] = saved


# ==== caching per configuration =================================================================

def test_selection_reads_the_algorithm_list_once(registered, monkeypatch):
    x, w = data((2, 3, 6, 6)), data((4, 3, 3, 3), seed=1)
    p = conv_params(x, w, padding=1)
    reads = []
    items = conv_mod.ALGORITHMS.items
    monkeypatch.setattr(conv_mod.ALGORITHMS, "items",
                        lambda *a, **k: reads.append(1) or items(*a, **k))
    for _ in range(5):
        assert conv_mod.select(p) is registered    # cudnn is dynamic: asked every call
    assert len(reads) <= 1
    conv_mod.ALGORITHMS.register([], "a-reload")   # the table changed: read it again
    try:
        assert conv_mod.select(p) is registered and len(reads) <= 2
    finally:
        conv_mod.ALGORITHMS.unregister("a-reload")


def test_verdicts_and_graph_keys_are_computed_once_per_configuration(fe, algo, monkeypatch):
    calls = {"verdict": 0, "key": 0}
    verdict, make_key = algo._static_verdict, algo._make_key

    def counted_verdict(params):
        calls["verdict"] += 1
        return verdict(params)

    def counted_key(*args):
        calls["key"] += 1
        return make_key(*args)
    monkeypatch.setattr(algo, "_static_verdict", counted_verdict)
    monkeypatch.setattr(algo, "_make_key", counted_key)
    x, w = data((2, 3, 6, 6)), data((4, 3, 3, 3), seed=1)
    p = conv_params(x, w, padding=1)
    for _ in range(4):
        assert algo.supports(p) is True
        check(algo.forward(x, w, None, p), REFERENCE.forward(x, w, None, p), x.dtype)
    assert calls == {"verdict": 1, "key": 1}
    assert len(fe.graphs) == 1 and len(fe.executions) == 4


def test_switches_still_take_effect_on_the_same_configuration(fe, registered):
    algo = registered
    x, w = data((2, 3, 6, 6)), data((4, 3, 3, 3), seed=1)
    p = conv_params(x, w, padding=1)
    notes = fe.numerical_note
    assert conv_mod.select(p) is algo
    with cudnn_switches.flags(enabled=False):
        assert conv_mod.select(p) is algo.native
        assert "enabled is False" in algo.supports(p).reason
    assert conv_mod.select(p) is algo and algo.supports(p) is True
    algo.forward(x, w, None, p)
    assert notes.NONDETERMINISTIC not in fe.graphs[-1].notes
    with cudnn_switches.flags(deterministic=True):
        algo.forward(x, w, None, p)
    assert notes.NONDETERMINISTIC in fe.graphs[-1].notes and len(fe.graphs) == 2
    with cudnn_switches.flags(benchmark=True):
        y = algo.forward(x, w, None, p)
    tuned = [g for k, g in algo.graphs._items.items() if k.benchmark]
    assert len(tuned) == 1 and tuned[0].plan is not None and len(fe.graphs) == 3
    check(y, REFERENCE.forward(x, w, None, p), x.dtype)
    assert notes.TENSOR_CORE in fe.graphs[0].notes          # allow_tf32 off (the fixture)
    with cudnn_switches.flags(allow_tf32=True):
        algo.forward(x, w, None, p)
    assert notes.TENSOR_CORE not in fe.graphs[-1].notes and len(fe.graphs) == 4
    algo.forward(x, w, None, p)                              # back to the first graph
    assert len(fe.graphs) == 4


# ==== remembered declines are keyed like the graphs =============================================

def _refuse_layout(fe, channels_last_: bool):
    """Make the fake cuDNN refuse graphs whose image is in one layout (C stride 1: NHWC)."""
    def decline(graph):
        x = graph.tensors.get("X") or graph.tensors.get("DY")
        return "no engine for this layout" if (x.stride[1] == 1) == channels_last_ else None
    fe.decline = decline


@pytest.mark.parametrize("refused", ["nchw", "nhwc"])
def test_a_declined_layout_does_not_decline_the_other(fe, algo, refused):
    _refuse_layout(fe, refused == "nhwc")
    x, w = data((2, 3, 6, 6)), data((4, 3, 3, 3), seed=1)
    xs = {"nchw": x, "nhwc": channels_last(x)}
    ps = {k: conv_params(a, w, padding=1) for k, a in xs.items()}
    assert ps["nhwc"].memory_format == "channels_last"
    assert ps["nchw"].memory_format == "contiguous"
    other = "nhwc" if refused == "nchw" else "nchw"
    check(algo.forward(xs[refused], w, None, ps[refused]),
          REFERENCE.forward(x, w, None, ps["nchw"]), x.dtype)       # im2col ran
    verdict = algo.supports(ps[refused])
    assert not verdict and "no engine for this layout" in verdict.reason
    assert algo.supports(ps[other]) is True
    n = len(fe.executions)
    check(algo.forward(xs[other], w, None, ps[other]),
          REFERENCE.forward(x, w, None, ps["nchw"]), x.dtype)
    assert len(fe.executions) == n + 1                              # cuDNN ran it


def test_half_types_share_the_decline_of_their_one_compute_layout(fe, algo):
    fe.decline = lambda graph: "no half engine"
    x, w = data((2, 3, 6, 6), np.float16), data((4, 3, 3, 3), np.float16, seed=1)
    p = conv_params(x, w, padding=1)
    algo.forward(x, w, None, p)
    p_cl = conv_params(channels_last(x), w, padding=1)
    assert p_cl != p and not algo.supports(p_cl)      # both compute in NHWC: same graphs


def test_a_decline_on_one_device_does_not_decline_another(fe, algo):
    fe.decline = lambda graph: "refused"
    x, w = data((2, 3, 6, 6)), data((4, 3, 3, 3), seed=1)
    p0 = dataclasses.replace(conv_params(x, w, padding=1), device_index=0)
    algo.forward(x, w, None, p0)
    assert not algo.supports(p0)
    assert algo.supports(dataclasses.replace(p0, device_index=1)) is True


def test_make_params_records_memory_format_and_the_dispatcher_the_device():
    x = data((2, 3, 4, 5))
    w = data((4, 3, 3, 3))
    assert conv_params(x, w).memory_format == "contiguous"
    assert conv_params(channels_last(x), w).memory_format == "channels_last"
    assert conv_params(data((2, 1, 4, 5)), data((4, 1, 3, 3))).memory_format == "contiguous"
    assert conv_params(x, w).per_group().memory_format == "contiguous"
    p = conv_params(channels_last(x), w)
    assert dataclasses.replace(p, device_index=1, groups=1).per_group().device_index == 1
