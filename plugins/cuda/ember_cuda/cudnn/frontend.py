"""The cuDNN Frontend Python package (``import cudnn``), CuPy's runtime, and handles.

``load()`` imports the frontend and checks that its backend library loads: the wheel
``nvidia-cudnn-frontend`` (below 1.29) dlopens ``libcudnn.so.9`` from the
``nvidia-cudnn-cu12``/``-cu13`` wheels or the system. Releases differ in how they fail
without it: 1.10 raises OSError at import, 1.28 imports and fails later, so the check
asks ``backend_version()`` as well.

``CupyRuntime`` is everything the algorithm needs from CuPy besides array math: device
of an array, the current device and stream, device pointers, workspaces from CuPy's
memory pool, and CUDA-event timing. Tests replace it with a numpy-backed fake.

``Handles`` keeps one cuDNN handle per device, created on first use while that device
is current (a handle is bound to the device it was created on), and binds it to the
caller's current CuPy stream before each execution (``cudnn.set_stream``). Handles are
never destroyed: like PyTorch's handle pool, they live until the process exits, since
destroying them at interpreter shutdown races the CUDA context's own teardown.

References: cuDNN Frontend Python API (docs.nvidia.com/deeplearning/cudnn/frontend),
CuPy's ``cupy.cuda`` (Device, Stream, Event, memory pool).
"""
from __future__ import annotations

import threading

REQUIRED = ("pygraph", "data_type", "heur_mode", "numerical_note", "build_plan_policy",
            "create_handle", "set_stream", "backend_version", "cudnnGraphNotSupportedError")
"""The frontend names this plugin calls; a package without one of them is not used."""

INSTALL = "pip install 'ember-cuda[cuda13,cudnn]' (or cuda12,cudnn12)"


def load():
    """``(module, None)`` with the frontend loaded, else ``(None, reason)``."""
    try:
        import cudnn
    except (ImportError, OSError) as e:  # OSError: 1.10 dlopens libcudnn at import
        return None, f"the cuDNN Frontend is not importable ({type(e).__name__}: {e}); " \
                     f"{INSTALL}"
    missing = [name for name in REQUIRED if not hasattr(cudnn, name)]
    if missing:
        return None, f"the cuDNN Frontend {getattr(cudnn, '__version__', '?')} lacks " \
                     f"{', '.join(missing)}; {INSTALL}"
    try:
        version = int(cudnn.backend_version())
    except Exception as e:  # noqa: BLE001 - any failure means no usable libcudnn
        return None, f"the cuDNN library did not load ({type(e).__name__}: {e}); {INSTALL}"
    if version <= 0:
        return None, f"the cuDNN library did not load (backend_version() = {version}); " \
                     f"{INSTALL}"
    return cudnn, None


def data_types(fe, dtype_name: str) -> tuple:
    """(io, intermediate, compute) cuDNN data types for an ember dtype name.

    Half types compute and accumulate in float32 (PyTorch's choice for cuDNN convolution
    too); float32 and float64 in their own precision.
    """
    t = fe.data_type
    io = {"float16": t.HALF, "bfloat16": t.BFLOAT16, "float32": t.FLOAT,
          "float64": t.DOUBLE}[dtype_name]
    wide = t.DOUBLE if dtype_name == "float64" else t.FLOAT
    return io, wide, wide


def declines(fe) -> tuple:
    """Exception types the frontend raises when it cannot build a graph: its
    ``cudnnGraphNotSupportedError`` (no engine, heuristics or plan creation failed),
    ValueError (invalid attributes) and RuntimeError (a backend descriptor rejected)."""
    return fe.cudnnGraphNotSupportedError, ValueError, RuntimeError


class CupyRuntime:
    """CuPy's device, stream, memory and timing services, as the algorithm uses them."""

    def __init__(self, cupy):
        self.cupy = cupy
        self.out_of_memory = cupy.cuda.memory.OutOfMemoryError

    def device_of(self, a) -> int:
        """The index of the GPU holding CuPy array ``a``."""
        return a.device.id

    def on_device(self, index: int):
        """Context manager making device ``index`` current."""
        return self.cupy.cuda.Device(index)

    def stream(self) -> int:
        """The current CuPy stream's handle (0 for the legacy default stream)."""
        return self.cupy.cuda.get_current_stream().ptr

    def pointer(self, a) -> int:
        """``a``'s device address, as the cuDNN variant pack takes it."""
        return a.data.ptr

    def workspace(self, nbytes: int):
        """``nbytes`` of scratch from CuPy's memory pool (None for 0). Freed when the
        caller drops it: the pool reuses it only for work ordered after on the stream."""
        return self.cupy.empty((nbytes,), dtype=self.cupy.uint8) if nbytes > 0 else None

    def time_ms(self, run, repeat: int) -> float:
        """Mean milliseconds of ``run()`` on the current stream, after one warm-up run
        (which also pays any runtime compilation), timed with CUDA events."""
        run()
        start, end = self.cupy.cuda.Event(), self.cupy.cuda.Event()
        start.record()
        for _ in range(repeat):
            run()
        end.record()
        end.synchronize()
        return self.cupy.cuda.get_elapsed_time(start, end) / repeat


class Handles:
    """One cuDNN handle per device, bound to the current stream before each use.

    ``lock`` serializes binding and enqueueing: a handle holds one stream at a time, so
    two threads must not interleave ``set_stream`` and ``execute`` on it.
    """

    def __init__(self, fe, runtime):
        self.fe = fe
        self.runtime = runtime
        self.lock = threading.RLock()
        self._handles: dict = {}
        self._streams: dict = {}

    def get(self, device: int):
        """The handle of ``device``, created on first use (device ``device`` current)."""
        handle = self._handles.get(device)
        if handle is None:
            with self.lock:
                handle = self._handles.get(device)
                if handle is None:
                    with self.runtime.on_device(device):
                        handle = self._handles[device] = self.fe.create_handle()
        return handle

    def bound(self, device: int):
        """The handle of ``device`` bound to the current stream; call with ``lock``
        held. ``set_stream`` is skipped when the stream did not change (it costs
        several driver queries per call)."""
        handle = self.get(device)
        stream = self.runtime.stream()
        if self._streams.get(device) != stream:
            self.fe.set_stream(handle=handle, stream=stream)
            self._streams[device] = stream
        return handle
