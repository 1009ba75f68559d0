"""Tensor attributes about memory and kind that PyTorch code asks for: ``storage_offset()``,
``data_ptr()``, ``nbytes``, ``itemsize``, ``is_cpu``, ``get_device()``, ``is_same_size()``,
``is_signed()``, ``is_complex()``, ``is_nonzero()``; and the function forms PyTorch puts at
top level (``torch.numel(x)``, ``torch.is_floating_point(x)``, ``torch.is_nonzero(x)``...).

They live here rather than in ``tensor.py`` (which holds what every tensor needs: shape,
dtype, autograd metadata, conversions) and are installed on ``Tensor`` at import, as
``tensor_factories.py`` installs ``new_*``. None of them is on a hot path.
"""
from __future__ import annotations

__all__ = ["storage_offset", "data_ptr", "get_device", "is_same_size", "is_signed",
           "is_complex", "is_nonzero"]
FUNCTIONS = ("numel", "is_floating_point", "is_complex", "is_nonzero", "is_signed",
             "get_device", "is_same_size")  # also ember.<name>(x), as torch.<name>(x)


def _address(arr) -> int:
    iface = getattr(arr, "__array_interface__", None)  # numpy (CuPy has the cuda one)
    if iface is None:
        iface = arr.__cuda_array_interface__
    return iface["data"][0]


def data_ptr(self) -> int:
    """The address of the first element (an int; 0 for an empty tensor of some
    backends). Reference: torch.Tensor.data_ptr."""
    return _address(self._data)


def storage_offset(self) -> int:
    """How many elements into its base's memory this tensor starts: ``x[1:, 2:]`` of a
    contiguous (3, 4) ``x`` gives 6; 0 for a tensor that is not a view.

    NOTE: ember has no Storage object: the offset is counted from the data of the view's
    base tensor, so ``x[1:].detach()`` (a new tensor sharing the memory, not a view) gives
    0 where PyTorch gives 4. Reference: torch.Tensor.storage_offset.
    """
    base = self._base
    if base is None or self._data.size == 0:
        return 0
    return (_address(self._data) - _address(base._data)) // self._data.itemsize


def get_device(self) -> int:
    """The CUDA device index of the tensor, -1 for a cpu tensor (torch.Tensor.get_device)."""
    index = self._type.backend.device_of(self._data)
    return -1 if index is None else index


def is_same_size(self, other) -> bool:
    """Whether ``self`` and ``other`` have the same shape (torch.Tensor.is_same_size)."""
    return self._data.shape == other._data.shape


def is_signed(self) -> bool:
    """Whether the dtype holds negative values: floating and int8..int64 types; not uint8
    or bool (torch.Tensor.is_signed)."""
    return self._type.scalar_type.is_signed


def is_complex(self) -> bool:
    """Always False: ember has no complex dtype (torch.Tensor.is_complex)."""
    return False


def is_nonzero(self) -> bool:
    """Whether the single element of ``self`` is not zero (False for 0, 0.0, False).

    Raises RuntimeError for a tensor of no elements or more than one ("Boolean value of
    Tensor with more than one value is ambiguous"), as PyTorch. Reference:
    torch.Tensor.is_nonzero.
    """
    n = self._data.size
    if n != 1:
        what = "no values" if n == 0 else "more than one value"
        raise RuntimeError(f"Boolean value of Tensor with {what} is ambiguous; reduce it "
                           f"first with .any() or .all(), or index one element")
    return bool(self._item() != 0)


def _nbytes(self) -> int:
    """The bytes of the elements (numel * itemsize), whatever the strides."""
    return self._data.size * self._type.scalar_type.itemsize


def _itemsize(self) -> int:
    """Bytes per element, as ``element_size()``."""
    return self._type.scalar_type.itemsize


def _is_cpu(self) -> bool:
    """Whether the tensor lives on the cpu backend."""
    return self._type.backend.name == "cpu"


def install(namespace: dict, tensor_cls) -> None:
    """Put the methods and properties on ``Tensor`` and the functions in ``ember`` (once,
    at import)."""
    for name in __all__:
        setattr(tensor_cls, name, globals()[name])
    tensor_cls.nbytes = property(_nbytes)
    tensor_cls.itemsize = property(_itemsize)
    tensor_cls.is_cpu = property(_is_cpu)
    for name in FUNCTIONS:
        namespace[name] = getattr(tensor_cls, name)
