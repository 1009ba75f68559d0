"""Plain helpers shared by the nnpack_compat tests (fixtures live in ``conftest.py``).

Import it relatively: ``from ._shared import native`` (pytest's importlib mode imports
the test modules as part of this package).
"""
from __future__ import annotations

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

import ember.backends.nnpack as nnpack


def native():
    """The trusted reference: ``with native(): y = F.conv2d(...)`` runs the block on
    ember's native im2col, every nnpack algorithm declining because
    ``ember.backends.nnpack.enabled`` is False (``nnpack.flags(enabled=False)``, restored
    on exit, errors included).

    NOTE: an active ``ember_nnpack_compat.using(name)`` outranks the switch, so never
    compute a reference inside one.
    """
    return nnpack.flags(enabled=False)


NAMES = ["nnpack_gemm1x1", "nnpack_winograd_f4x4_3x3", "nnpack_winograd_f2x2_3x3",
         "nnpack_fft"]
"""The algorithms the plugin registers, in NNPACK's order of preference (priority)."""


def direct(x, w, padding, stride=(1, 1)):
    """float64 reference cross-correlation (N, C, H, W) x (K, C, kh, kw) -> (N, K, OH, OW):
    an einsum over the windows of the zero-padded input; ``padding``/``stride`` are
    (h, w) pairs."""
    (ph, pw), (sh, sw) = padding, stride
    xp = np.pad(np.asarray(x, np.float64), ((0, 0), (0, 0), (ph, ph), (pw, pw)))
    win = sliding_window_view(xp, w.shape[2:], axis=(2, 3))[:, :, ::sh, ::sw]
    return np.einsum("ncijab,kcab->nkij", win, np.asarray(w, np.float64))
