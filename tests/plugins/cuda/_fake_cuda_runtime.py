"""The numpy side of the fake cuDNN Frontend: what a graph computes, and CuPy's services.

``compute(graph, pack, runtime)`` runs a fake graph's convolution for real: it rebuilds
each operand from its device pointer (the array ``FakeRuntime.pointer`` registered at
that address) and the dims/strides the graph declared (``as_strided``), and runs ember's
numpy im2col for the operation cuDNN would run (fprop; dgrad = d fprop / d X; wgrad =
d fprop / d W). ``FakeRuntime`` stands in for ``ember_cuda.cudnn.frontend.CupyRuntime``.
"""
from __future__ import annotations

import contextlib

import numpy as np

from ember.backends.convolution import ConvParams
from ember.backends.im2col import Im2colConvolution
from ember.types import from_numpy_dtype

REFERENCE = Im2colConvolution(np, "cpu")


def compute(graph, pack: dict, rt) -> None:
    """Run ``graph``'s convolution on the operands of ``pack`` ({tensor: pointer})."""
    views = {}
    for t, ptr in pack.items():
        base = rt.registry[ptr]
        views[t.name] = np.lib.stride_tricks.as_strided(
            base, shape=t.dim, strides=[s * base.dtype.itemsize for s in t.stride])
    x, w, y = (graph.inputs.get(r, graph.out) for r in ("x", "w", "y"))
    xv, wv, yv = views[x.name], views[w.name], views[y.name]
    a = graph.attrs
    assert a["pre_padding"] == a["post_padding"], "the fake runs symmetric padding only"
    nd = len(x.dim) - 2
    p = ConvParams("cpu", from_numpy_dtype(xv.dtype), tuple(x.dim), tuple(w.dim), False,
                   tuple(a["stride"]), tuple(a["pre_padding"]), tuple(a["dilation"]),
                   False, (0,) * nd, x.dim[1] // w.dim[1])
    assert tuple(y.dim) == p.output_shape, "Y dims do not match the convolution"
    if graph.op == "fprop":
        yv[...] = REFERENCE.forward(np.array(xv), np.array(wv), None, p)
    elif graph.op == "dgrad":
        xv[...] = REFERENCE.backward(np.array(yv), np.empty(x.dim, xv.dtype),
                                     np.array(wv), p, (True, False, False))[0]
    else:
        wv[...] = REFERENCE.backward(np.array(yv), np.array(xv),
                                     np.empty(w.dim, wv.dtype), p, (False, True, False))[1]


class FakeRuntime:
    """``CupyRuntime`` on numpy: pointers are real addresses, registered to find the
    arrays again; ``timings`` gives each plan index its benchmark time."""

    out_of_memory = MemoryError

    def __init__(self, fe_ref=None):
        self.registry, self.workspaces = {}, []
        self.current_device, self.current_stream = None, 0
        self.devices_entered = []
        self.timings: dict = {}
        self.fe = fe_ref

    def device_of(self, a):
        return 0

    @contextlib.contextmanager
    def on_device(self, index):
        previous, self.current_device = self.current_device, index
        self.devices_entered.append(index)
        try:
            yield
        finally:
            self.current_device = previous

    def stream(self):
        return self.current_stream

    def pointer(self, a):
        ptr = a.__array_interface__["data"][0]
        self.registry[ptr] = a
        return ptr

    def workspace(self, nbytes):
        ws = np.empty(nbytes + 16, np.uint8)[:nbytes] if nbytes > 0 else None
        self.workspaces.append(nbytes)
        return ws

    def time_ms(self, run, repeat):
        run()
        for _ in range(repeat):
            run()
        return self.timings.get(self.fe.last_index, 1.0)
