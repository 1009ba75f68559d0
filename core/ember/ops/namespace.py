"""The ops layer's namespace: every op ``ember.<name>`` names, importable below the API.

Code below the public API (composites, ``linalg``, ``special``, autograd's formulas, the
JIT's passes, ``nn``, ``distributions``, ``optim``, ``utils``) calls ops as ``E.add(...)``.
It imports this module for that, as ``from ..ops import namespace as E``, never the
``ember`` package itself, which sits on the top layer (docs/architecture.md).

What it holds: the ops layer's vocabulary and nothing above it:

* the Tensor and what makes one: ``Tensor``, ``Size``, the factories (``zeros``,
  ``tensor``, ``arange``, ...) and the random generator (``Generator``, ``manual_seed``);
* the dtypes (``float32`` and PyTorch's spellings ``float``, ``long``, ...), ``Device``,
  type promotion (``promote_types``, ``result_type``, ``can_cast``, the default dtype),
  ``finfo``/``iinfo``;
* filled by the composition root (``ember/_build.py``) at ``import ember``: the generated
  op wrappers (``add``, ``linalg_solve``, ``_convolution``, ...) and what the ops layer
  installs around them: the hand-written fronts (``nonzero``, ``unique_consecutive``),
  the aliases (``arccos``, ``abs_``), the shape factories and tensor attributes'
  functions.

``ember`` re-exports every one of these names as the same object (``ember.add is
ember.ops.namespace.add``; ``exports()`` lists them), so an ``E.add`` here costs what
``ember.add`` costs: one module attribute lookup, no call in between. Grad mode
(``no_grad``), the submodules (``ember.linalg``, ``ember.nn``) and the rest of the API
are not here: import them from the module that defines them
(``from .._base.grad_mode import no_grad``).

NOTE: the generated names are in place only once ``_build.build`` has installed them
(steps 3-4). Most modules read ``E.<op>`` when they run; one that binds an op when it is
imported (``linalg``'s table, ``from ..ops.namespace import maximum`` in ``optim``) is
imported by the root after those steps, as ``nn``, ``linalg``, ``special``, ``optim`` and
``utils`` are.
"""
# ruff: noqa: F401 - the imports are this module's content
from ..factories import (arange, as_tensor, empty, empty_like, eye, from_dlpack, from_numpy,
                         full, full_like, linspace, logspace, ones, ones_like, rand,
                         rand_like, randint, randint_like, randn, randn_like, randperm,
                         tensor, zeros, zeros_like)
from ..random import (Generator, get_rng_state, initial_seed, manual_seed, seed,
                      set_rng_state)
from ..tensor import Size, Tensor
from ..type_info import finfo, iinfo
from ..types import (Device, ScalarType, bfloat16, bool_, can_cast, float16, float32, float64,
                     get_default_dtype, int8, int16, int32, int64, promote_types,
                     set_default_dtype, uint8)
from ..types import result_type as _result_type


def result_type(*operands) -> ScalarType:
    """The dtype an op over ``operands`` (Tensors and Python numbers) computes in
    (``torch.result_type``). Raises TypeError for other operand kinds."""
    dims, zeros_, scalars = [], [], []
    for v in operands:
        if isinstance(v, Tensor):
            (dims if v.ndim else zeros_).append(v.dtype)
        else:
            scalars.append(v)
    return _result_type(dims, zeros_, scalars)


def is_tensor(obj) -> bool:  # noqa: D401
    """Whether ``obj`` is an ember Tensor."""
    return isinstance(obj, Tensor)


# PyTorch's spellings of the dtypes (from here on they shadow the builtins in this module).
bool = bool_  # noqa: A001 - ember.bool, like torch.bool
float = float32  # noqa: A001
double = float64
half = float16
long = int64
int = int32  # noqa: A001
short = int16


def exports() -> dict:
    """name -> object for every name ``ember`` re-exports from here: all this module holds
    but its dunders, its private helpers (one leading underscore and not an op: the
    generated ``_convolution`` & co. are ops) and this function."""
    return {k: v for k, v in globals().items()
            if not k.startswith("__") and k not in _PRIVATE}


_PRIVATE = frozenset({"exports", "_result_type", "_PRIVATE"})
