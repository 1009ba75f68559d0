"""ember: a tensor framework with Type-based dispatch over plugin backends.

``import ember`` generates the op surface from ``ops/native_functions.yaml``; backends load
from entry points (group ``ember``) the first time a tensor is made.
"""
from . import types as _types
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
from .autograd.grad_mode import enable_grad, inference_mode, is_grad_enabled, \
    is_inference_mode_enabled, no_grad, set_grad_enabled
from .backends.registry import default_device as get_default_device
from .backends.registry import set_default_device
from . import ops as _ops
from .tensor import install_operators as _install_operators

__version__ = "0.1.0"

# PyTorch spellings of the dtypes.
bool = bool_  # noqa: A001 - ember.bool, like torch.bool
float = float32  # noqa: A001
double = float64
half = float16
long = int64
int = int32  # noqa: A001
short = int16


def result_type(*operands) -> ScalarType:
    """The dtype an op over ``operands`` (Tensors and Python numbers) computes in
    (``torch.result_type``). Raises TypeError for other operand kinds."""
    dims, zeros_, scalars = [], [], []
    for v in operands:
        if isinstance(v, Tensor):
            (dims if v.ndim else zeros_).append(v.dtype)
        else:
            scalars.append(v)
    return _types.result_type(dims, zeros_, scalars)


def is_tensor(obj) -> bool:  # noqa: D401
    """Whether ``obj`` is an ember Tensor."""
    return isinstance(obj, Tensor)


_generated = _ops.install(globals(), Tensor)
_install_operators(globals())
del _generated
from .functional import install as _install_fronts  # noqa: E402 - wraps generated ops
_install_fronts(globals(), Tensor)
from .sampling import install as _install_sampling  # noqa: E402 - wraps uniform_
_install_sampling(Tensor)
from .tensor_factories import install as _install_new  # noqa: E402 - Tensor.new_*
_install_new(Tensor)
from .ops import inplace_views as _inplace_views  # noqa: E402 - Tensor.unsqueeze_, t_...
_inplace_views.install(Tensor)
from .ops import aliases as _aliases  # noqa: E402 - arccos, greater, ember.exp_(x), ...
_aliases.install(globals(), Tensor)
from . import shape_factories as _shape_factories  # noqa: E402 - broadcast_shapes, ...
_shape_factories.install(globals())
from . import tensor_attributes as _tensor_attributes  # noqa: E402 - nbytes, data_ptr, ...
_tensor_attributes.install(globals(), Tensor)

from . import autograd  # noqa: E402 - needs the ops: its formulas are ember ops
autograd._install()

from . import nn, optim, utils  # noqa: E402,F401 - nn's composite ops register on import
from . import linalg  # noqa: E402,F401 - ember.linalg.inv...; registers its composites
from . import special  # noqa: E402,F401 - ember.special.ndtr...; registers mvlgamma
from .linalg.legacy import lu  # noqa: E402 - torch.lu: (LU, pivots[, infos])
from .serialization import load, save  # noqa: E402
from . import cuda  # noqa: E402,F401 - ember.cuda.is_available() without an import
from . import distributions  # noqa: E402,F401 - needs nn.functional and linalg


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
