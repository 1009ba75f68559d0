"""The plugin as installed: entry point ``nnpack_compat`` (group ``ember``) of the
distribution ``ember-nnpack-compat`` loads and registers its four algorithms through
``ember_convolution_algorithms``; ``ember.backends.nnpack.is_available()`` says so; and
``EMBER_DISABLE_PLUGINS=nnpack_compat`` (checked in a fresh interpreter, since plugins
load once per process) leaves ember convolving on native im2col.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import ember.backends.nnpack as nnpack
import ember_nnpack_compat
from ember.backends import convolution
from ember.plugins import manager
from ember_nnpack_compat import plugin
from ember_nnpack_compat.algorithm import ALGORITHMS

NAMES = ["nnpack_gemm1x1", "nnpack_winograd_f4x4_3x3", "nnpack_winograd_f2x2_3x3",
         "nnpack_fft"]


def _info():
    found = [p for p in manager.plugins() if p.name == "nnpack_compat"]
    assert len(found) == 1, [p.name for p in manager.plugins()]
    return found[0]


def test_plugin_is_listed_with_its_four_algorithms():
    info = _info()
    assert info.distribution == "ember-nnpack-compat"
    assert info.error is None and not info.disabled
    assert list(info.registered) == ["ember_convolution_algorithms"]
    assert sorted(info.registered["ember_convolution_algorithms"]) == \
        sorted(f"convolution algorithm {n}" for n in NAMES)


def test_the_registered_objects_are_the_packages():
    registered = [a for a in convolution.algorithms("cpu") if a.name.startswith("nnpack")]
    assert sorted(registered, key=id) == sorted(ALGORITHMS, key=id)
    assert plugin.ember_convolution_algorithms() == list(ALGORITHMS)


def test_native_stays_registered_below():
    order = [a.name for a in convolution.algorithms("cpu")]
    assert order[-1] == "native_im2col"
    assert set(NAMES) <= set(order)


def test_is_available():
    assert nnpack.is_available() is True


def test_public_names():
    for name in ("ALGORITHMS", "NnpackAlgorithm", "nnpack_spatial_convolution", "using"):
        assert name in ember_nnpack_compat.__all__ and hasattr(ember_nnpack_compat, name)


_CHILD = textwrap.dedent("""
    import json
    import numpy as np
    import ember as E
    import ember.backends.nnpack as nnpack
    import ember.nn.functional as F
    from ember.backends.convolution import explain
    from ember.plugins import manager

    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 3, 6, 6))
    w = rng.standard_normal((4, 3, 3, 3))
    y = F.conv2d(E.tensor(x), E.tensor(w), padding=1).numpy()
    # float64 direct reference
    xp = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
    ref = np.zeros((2, 4, 6, 6))
    for a in range(3):
        for b in range(3):
            ref += np.einsum("kc,nchw->nkhw", w[:, :, a, b], xp[:, :, a:a + 6, b:b + 6])
    info = [p for p in manager.plugins() if p.name == "nnpack_compat"]
    print(json.dumps({
        "available": nnpack.is_available(),
        "chosen": explain(E.tensor(x), E.tensor(w), padding=1).chosen,
        "error": float(np.abs(y - ref).max()),
        "disabled": [p.disabled for p in info],
    }))
""")


def test_disabling_the_plugin_leaves_native_convolution():
    env = dict(os.environ, EMBER_DISABLE_PLUGINS="nnpack_compat")
    env.pop("EMBER_PLUGINS", None)
    out = subprocess.run([sys.executable, "-c", _CHILD], capture_output=True, text=True,
                         env=env, timeout=120)
    assert out.returncode == 0, out.stderr
    got = json.loads(out.stdout.strip().splitlines()[-1])
    assert got["available"] is False
    assert got["chosen"] == "native_im2col"
    assert got["disabled"] == [True]
    assert got["error"] < 1e-12
