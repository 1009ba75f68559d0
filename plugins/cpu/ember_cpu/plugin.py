"""Registers the ``cpu`` backend (ember's generic kernels instantiated with numpy), its
im2col convolution, and the CPU fuser (FusionGroups on the blocked elementwise engine)."""
from __future__ import annotations

import numpy as np

from ember.backends import array_api
from ember.backends.im2col import Im2colConvolution
from ember.plugins import hookimpl
from ember.types import Backend


def _from_numpy(arr: np.ndarray, index):
    if index not in (None, 0):
        raise ValueError(f"the cpu backend has one device; got index {index}")
    return arr


@hookimpl
def ember_backends():
    return [Backend(
        name="cpu", xp=np, kernels=array_api.make_kernels(np), type_prefix="CPU",
        array_type=np.ndarray, to_numpy=lambda a: a, from_numpy=_from_numpy,
        device_count=1, make_rng=np.random.default_rng,
        unsupported=array_api.unsupported(), dlpack_device_type=1, is_host=True,
    )]


@hookimpl
def ember_convolution_algorithms():
    return [Im2colConvolution(np, "cpu")]


@hookimpl
def ember_fusers():
    """``[CpuFuser()]``: FusionGroups on CPU tensors run on ember's blocked elementwise
    engine (``ember_cpu.fuser``)."""
    from .fuser import CpuFuser
    return [CpuFuser()]
