"""``ember.backends.cudnn``: the switches, and that conv passes them to ``_convolution``."""
from __future__ import annotations

import numpy as np
import pytest

import ember as E
import ember.backends.cudnn as cudnn
import ember.nn.functional as F


def test_flags_set_and_restore():
    assert cudnn.flags_tuple() == (False, False, True)    # benchmark, deterministic, enabled
    with cudnn.flags(enabled=False, benchmark=True):
        assert (cudnn.enabled, cudnn.benchmark, cudnn.deterministic) == (False, True, False)
        with pytest.raises(RuntimeError):
            with cudnn.flags(deterministic=True):
                assert cudnn.deterministic
                raise RuntimeError
        assert cudnn.deterministic is False              # restored on error too
    assert (cudnn.enabled, cudnn.benchmark, cudnn.deterministic) == (True, False, False)
    assert cudnn.set_flags(None, True) == (True, False, False, True)
    assert cudnn.set_flags(None, False) == (True, True, False, True)
    with cudnn.flags(allow_tf32=False):
        assert cudnn.allow_tf32 is False
    assert cudnn.allow_tf32 is True


def test_not_available_on_cpu_only_machines():
    if cudnn.is_available():
        pytest.skip("a cudnn algorithm is registered here")
    assert cudnn.version() is None


@pytest.mark.parametrize("fn, args", [(F.conv2d, {}), (F.conv_transpose2d, {})])
def test_conv_passes_the_switches(monkeypatch, fn, args):
    seen = []
    real = E._convolution

    def spy(*a):
        seen.append(a[-3:])
        return real(*a)
    # conv.py calls the op through the ops layer's namespace (ember.ops.namespace)
    from ember.ops import namespace
    monkeypatch.setattr(namespace, "_convolution", spy)
    x = E.tensor(np.ones((1, 2, 4, 4), np.float32))
    w = E.tensor(np.ones((2, 2, 3, 3), np.float32))
    with cudnn.flags(enabled=False, benchmark=True, deterministic=True):
        fn(x, w, **args)
    fn(x, w, **args)
    assert seen == [(True, True, False), (False, False, True)]
