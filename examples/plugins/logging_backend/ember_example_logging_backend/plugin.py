"""Registers the ``logcpu`` backend with ember (entry point ``logcpu`` in group ``ember``:
a backend's name must equal its entry point's, and it is also the device type,
``device="logcpu"``)."""
from __future__ import annotations

import numpy as np

from ember.backends import array_api
from ember.plugins import hookimpl
from ember.types import Backend

from .kernels import make_kernels


def _from_numpy(arr: np.ndarray, index):
    if index not in (None, 0):
        raise ValueError(f"the logcpu backend has one device; got index {index}")
    return arr


@hookimpl
def ember_backends():
    """``[Backend("logcpu")]``: numpy arrays in host memory (``is_host=True``, so
    ``Tensor.numpy()`` shares them), the logging kernels of ``kernels.py``."""
    return [Backend(
        name="logcpu", xp=np, kernels=make_kernels(), type_prefix="LogCPU",
        array_type=np.ndarray, to_numpy=lambda a: a, from_numpy=_from_numpy,
        make_rng=np.random.default_rng, unsupported=array_api.unsupported(), is_host=True,
    )]
