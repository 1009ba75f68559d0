"""ember: a tensor framework with Type-based dispatch over plugin backends.

``import ember`` generates the op surface from ``ops/native_functions.yaml`` (the
composition root ``_build.py`` wires the layers); backends load from entry points (group
``ember``) the first time a tensor is made.
"""
from . import types as _types  # noqa: F401 - dir(ember) keeps its names
from .backends import kernels as _kernels  # noqa: F401 - installs the FP-warnings filter now
from .errors import DeviceMismatchError, DtypeError, NoBackendError, ShapeError
from .types import (Device, ScalarType, bfloat16, bool_, can_cast, float16, float32, float64,
                    get_default_dtype, int8, int16, int32, int64, promote_types,
                    set_default_dtype, uint8)
from .type_info import finfo, iinfo
from .tensor import Size, Tensor
from .factories import (arange, as_tensor, empty, empty_like, eye, from_dlpack, from_numpy,
                        full, full_like, linspace, logspace, ones, ones_like, rand, rand_like,
                        randint, randint_like, randn, randn_like, randperm, tensor, zeros,
                        zeros_like)
from .random import Generator, manual_seed
from .parallel import get_num_threads, set_num_threads
from .random import get_rng_state, initial_seed, seed, set_rng_state
from .autograd.anomaly_mode import is_anomaly_check_nan_enabled, is_anomaly_enabled, \
    set_anomaly_enabled
from ._base.grad_mode import enable_grad, inference_mode, is_grad_enabled, \
    is_inference_mode_enabled, no_grad, set_grad_enabled
from .backends.registry import default_device as get_default_device
from .backends.registry import set_default_device
# the PyTorch spellings of the dtypes (ember.long is int64), result_type, is_tensor
from .ops.namespace import bool, double, float, half, int, is_tensor, long, result_type, short
from ._build import build as _build

__version__ = "0.1.0"

_build(globals())  # the op surface, Tensor's methods, autograd's recorders: see _build.py
from .linalg.legacy import lu  # noqa: E402 - torch.lu: (LU, pivots[, infos])
from .serialization import load, save  # noqa: E402
# (ember.nn, optim, utils, linalg, special, cuda, distributions: imported by _build)


device = Device  # torch.device's spelling: ember.device("cuda:0")

_LAZY_SUBMODULES = ("onnx", "train", "testing", "distributed")


def __getattr__(name):
    """``ember.onnx``, ``ember.train``, ``ember.testing`` and ``ember.distributed`` load on
    first use, as ``torch.onnx`` works after ``import torch`` (they are not imported at
    start: onnx pulls the onnx package, train scikit-learn)."""
    if name in _LAZY_SUBMODULES:
        import importlib
        return importlib.import_module(f"ember.{name}")
    raise AttributeError(f"module 'ember' has no attribute {name!r}")
