"""``ember.save`` / ``ember.load``: state dicts in the safetensors format, never pickle.

A file is a plain safetensors file: every Tensor is a safetensors tensor, and the
structure around the tensors is JSON in the header's ``__metadata__`` (key
``"ember.structure"``), so loading parses data and never runs code. A flat ``str ->
Tensor`` dict is stored under its own keys, readable by any safetensors reader; a
safetensors file written elsewhere (no ember metadata) loads as a flat ``str -> Tensor``
dict.

What can be saved (nested freely): Tensors of every ember dtype (bool, uint8, int8,
int16, int32, int64, float16, bfloat16, float32, float64); dicts with ``str`` or ``int``
keys (the order is kept; an optimizer's ``{"state": {0: {...}}, ...}`` works); lists and
tuples (tuples come back as tuples); ``int``, ``float`` (inf and nan too), ``bool``,
``str``, ``None``; numpy scalars (come back as Python numbers); ember dtypes (``ember.float32``).

Tensors are stored as contiguous copies of their data: views of one another come back as
separate tensors, while one Tensor object reached twice (tied weights) is stored once and
comes back as one Tensor object in both places. ``requires_grad`` is kept; a tensor saved
from a device other than cpu is loaded back onto that device unless ``map_location`` says
otherwise.

Reference: torch.save / torch.load (semantics), safetensors (format).
"""
from __future__ import annotations

import json
import os
import struct

import numpy as np
import safetensors
import safetensors.numpy

from . import types as _t
from ._files import write_atomically
from .factories import from_numpy
from .tensor import Tensor

__all__ = ["save", "load", "SerializationError"]

_STRUCTURE_KEY = "ember.structure"
# the one name the safetensors header reserves: a tensor stored under it would collide
# with the metadata field (safetensors' ``__metadata__``)
_RESERVED = "__metadata__"
_FORMAT = {"format": "ember", "ember.version": "1"}
# safetensors header dtype -> ember dtype. Other safetensors dtypes (uint16, float8, ...)
# have no ember dtype and are rejected on load.
_FROM_ST = {"BOOL": _t.bool_, "U8": _t.uint8, "I8": _t.int8, "I16": _t.int16,
            "I32": _t.int32, "I64": _t.int64, "F16": _t.float16, "BF16": _t.bfloat16,
            "F32": _t.float32, "F64": _t.float64}
_SAVE_HINT = ("ember.save stores Tensors, dicts with str/int keys, lists, tuples, ints, "
              "floats, bools, strings, None and ember dtypes")


class SerializationError(ValueError):
    """A file ``ember.load`` cannot read: not safetensors, truncated, or corrupt."""


# --- save --------------------------------------------------------------------------------

class _Encoder:
    """Walks the object: tensors go to ``arrays`` under unique names, the rest becomes a
    JSON tree whose tagged nodes are ``{"tensor": name}``, ``{"dict": [[k, v], ...]}``,
    ``{"list": [...]}``, ``{"tuple": [...]}`` and ``{"dtype": name}``."""

    def __init__(self):
        self.arrays: dict[str, np.ndarray] = {}
        self._names: dict[int, tuple[str, Tensor]] = {}  # id(tensor) -> (name, tensor)
        self._open: set[int] = set()  # ids of the containers being encoded (cycles)

    def encode(self, obj, path: str):
        if isinstance(obj, (dict, list, tuple)):
            if id(obj) in self._open:
                raise ValueError(f"ember.save: '{path or '<root>'}' contains itself (a "
                                 f"reference cycle); save a structure without cycles")
            self._open.add(id(obj))
            try:
                return self._container(obj, path)
            finally:
                self._open.discard(id(obj))
        return self._leaf(obj, path)

    def _leaf(self, obj, path: str):
        if isinstance(obj, Tensor):
            return self._tensor(obj, path)
        if obj is None or isinstance(obj, (bool, int, float, str)):
            return obj
        if isinstance(obj, np.generic) and obj.dtype.kind in "biuf":
            return obj.item()
        if isinstance(obj, _t.ScalarType):
            return {"dtype": obj.name}
        raise TypeError(f"ember.save: cannot save '{path or '<root>'}' of type "
                        f"{type(obj).__module__}.{type(obj).__qualname__}; {_SAVE_HINT}")

    def _container(self, obj, path: str):
        if isinstance(obj, dict):
            items = []
            for k, v in obj.items():
                if not isinstance(k, (str, int)) or isinstance(k, bool):
                    raise TypeError(f"ember.save: key {k!r} at '{path or '<root>'}' is a "
                                    f"{type(k).__name__}; dict keys must be str or int")
                if not path and k == _RESERVED:
                    raise ValueError(f"ember.save: the key {_RESERVED!r} is reserved by the "
                                     f"safetensors format (its header's metadata field); "
                                     f"rename that key")
                items.append([k, self.encode(v, f"{path}.{k}" if path else str(k))])
            return {"dict": items}
        tag = "tuple" if isinstance(obj, tuple) else "list"
        return {tag: [self.encode(v, f"{path}.{i}" if path else str(i))
                      for i, v in enumerate(obj)]}

    def _tensor(self, t: Tensor, path: str):
        seen = self._names.get(id(t))
        if seen is not None:
            name = seen[0]
        else:
            name = path or "tensor"
            k = 1
            while name in self.arrays:  # "a.b" as a key and as a nested path may clash
                name, k = f"{path}#{k}", k + 1
            arr = t.detach().numpy(force=True)
            # NOTE: not np.ascontiguousarray, which turns 0-d arrays into 1-d ones.
            self.arrays[name] = arr if arr.flags.c_contiguous else arr.copy(order="C")
            self._names[id(t)] = (name, t)  # holding t keeps id(t) unique while saving
        node = {"tensor": name}
        if t.requires_grad:
            node["requires_grad"] = True
        if t.device.type != "cpu":
            node["device"] = str(t.device)
        return node


def _serialize(obj) -> bytes:
    enc = _Encoder()
    tree = enc.encode(obj, "")
    flat = isinstance(obj, dict) and tree == {
        "dict": [[k, {"tensor": k}] for k in obj]} and all(isinstance(k, str) for k in obj)
    meta = dict(_FORMAT)
    if not flat:  # a flat str -> Tensor dict needs no structure: the file says it all
        meta[_STRUCTURE_KEY] = json.dumps(tree, separators=(",", ":"))
    else:
        meta["ember.order"] = json.dumps(list(obj), separators=(",", ":"))
    return safetensors.numpy.save(enc.arrays, metadata=meta)


def save(obj, f) -> None:
    """Write ``obj`` (a state dict: see the module docstring for what it may hold) to ``f``
    in the safetensors format.

    Args:
        obj: a Tensor or a nested structure of dicts/lists/tuples holding Tensors and
            plain values.
        f: a path (``str`` / ``os.PathLike``) or a binary file object with ``write``.
    A path is written atomically (a temporary file in the same directory, renamed over
    the target), so a failed save leaves no half-written file; a file saved over keeps
    its permission bits, and a symbolic link is written through (its target is replaced).
    Raises TypeError naming the key and type of an unsupported value or dict key;
    ValueError for the top-level key ``"__metadata__"`` (reserved by safetensors) or a
    structure that contains itself; FileNotFoundError naming a missing directory; OSError
    from the file system. Nothing is written when it raises.
    Reference: torch.save.
    """
    data = _serialize(obj)  # everything that can fail on obj fails before touching disk
    if hasattr(f, "write") and not isinstance(f, (str, os.PathLike)):
        f.write(data)
        return
    write_atomically(f, data, "ember.save")


# --- load --------------------------------------------------------------------------------

def _check_header(data: bytes, where: str) -> dict:
    """Parse and sanity-check the safetensors header, with messages a user can act on
    (the safetensors library's own checks run afterwards)."""
    if len(data) < 8:
        raise SerializationError(f"ember.load: {where} is {len(data)} bytes, too short to be "
                                 f"a safetensors file (it starts with an 8-byte header size)")
    (n,) = struct.unpack("<Q", data[:8])
    if n > len(data) - 8:
        hint = ""
        if data[:2] == b"PK" or data[:1] == b"\x80":
            hint = (" It looks like a torch.save (zip/pickle) file: ember.load reads only "
                    "safetensors, never pickle; convert it with safetensors.torch.save_file.")
        raise SerializationError(f"ember.load: {where} is not a safetensors file or is "
                                 f"truncated: its header claims {n} bytes but only "
                                 f"{len(data) - 8} follow.{hint}")
    try:
        header = json.loads(data[8:8 + n].decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as e:
        raise SerializationError(f"ember.load: {where} is not a safetensors file: its header "
                                 f"is not valid JSON ({e})") from None
    if not isinstance(header, dict):
        raise SerializationError(f"ember.load: {where} is not a safetensors file: its header "
                                 f"is a JSON {type(header).__name__}, not an object")
    return header


def _decode(node, tensors: dict, where: str):
    """Rebuild an object from the structure JSON; ``tensors`` maps name -> Tensor."""
    if node is None or isinstance(node, (bool, int, float, str)):
        return node
    if isinstance(node, dict) and len(node) >= 1:
        if "tensor" in node:
            try:
                return tensors[node["tensor"]]
            except (KeyError, TypeError):
                raise SerializationError(f"ember.load: {where} is corrupt: its structure "
                                         f"refers to a tensor {node['tensor']!r} that the "
                                         f"file does not hold") from None
        if len(node) == 1:
            (tag, value), = node.items()
            if tag == "dict" and isinstance(value, list):
                out = {}
                for item in value:
                    if not (isinstance(item, list) and len(item) == 2
                            and isinstance(item[0], (str, int))):
                        break
                    out[item[0]] = _decode(item[1], tensors, where)
                else:
                    return out
            elif tag in ("list", "tuple") and isinstance(value, list):
                items = [_decode(v, tensors, where) for v in value]
                return tuple(items) if tag == "tuple" else items
            elif tag == "dtype" and value in _t._BY_NAME:
                return _t._BY_NAME[value]
    raise SerializationError(f"ember.load: {where} is corrupt: unexpected entry "
                             f"{json.dumps(node)[:80]} in its structure metadata")


def _device_of(map_location):
    if map_location is None or isinstance(map_location, _t.Device):
        return map_location
    if isinstance(map_location, str):
        return _t.Device(map_location)
    raise TypeError(f"ember.load: map_location must be a device string such as 'cpu', an "
                    f"ember.Device or None, got {type(map_location).__name__}")


def load(f, map_location=None, *, weights_only: bool | None = None, mmap=None):
    """Read an object written by ``ember.save`` (or any safetensors file) from ``f``.

    Args:
        f: a path (``str`` / ``os.PathLike``) or a binary file object with ``read``.
        map_location: device for every tensor (``"cpu"``, ``"cuda:0"``, an
            ``ember.Device``); None puts each tensor on the device it was saved from.
        weights_only: accepted for torch.load's signature (ported scripts pass it). An
            ember file holds data only and loading never runs code, so every value loads
            as ``weights_only=True`` would; False cannot make ember unpickle anything.
        mmap: accepted for torch.load's signature; None or False (the file is read).
    Returns the saved structure with ember Tensors (fresh, writable memory).
    Raises FileNotFoundError for a missing path; SerializationError (a ValueError)
    naming the file when it is not safetensors, is truncated or corrupt, or holds a dtype
    ember lacks; TypeError for a bad ``map_location``.
    Reference: torch.load (weights_only: data only, no code runs).
    """
    if weights_only not in (None, True, False):
        raise TypeError(f"ember.load: weights_only must be None, True or False, got "
                        f"{weights_only!r}")
    if mmap:
        raise NotImplementedError("ember.load: mmap=True is not supported (the file is "
                                  "read into memory); pass mmap=None or False")
    device = _device_of(map_location)
    if hasattr(f, "read") and not isinstance(f, (str, os.PathLike)):
        data, where = f.read(), f"file object {getattr(f, 'name', type(f).__name__)!r}"
        if not isinstance(data, (bytes, bytearray, memoryview)):
            raise TypeError(f"ember.load: {where} must be opened in binary mode ('rb')")
        data = bytes(data)
    else:
        where = f"'{os.fspath(f)}'"
        with open(f, "rb") as fh:
            data = fh.read()
    header = _check_header(data, where)
    try:
        raw = safetensors.deserialize(data)
    except Exception as e:  # SafetensorError and friends: offsets, sizes, dtype names
        raise SerializationError(f"ember.load: {where} is corrupt or truncated: {e}") from None
    meta = header.get("__metadata__") or {}
    tensors = {}
    for name, view in raw:
        st = _FROM_ST.get(view["dtype"])
        if st is None:
            raise SerializationError(f"ember.load: tensor {name!r} in {where} has dtype "
                                     f"{view['dtype']}, which ember does not support")
        arr = np.frombuffer(view["data"], dtype=st.numpy).reshape(view["shape"])
        tensors[name] = from_numpy(arr if arr.flags.writeable else arr.copy())
    if not isinstance(meta, dict) or _STRUCTURE_KEY not in meta:
        order = _json_list(meta.get("ember.order") if isinstance(meta, dict) else None)
        names = [k for k in order if isinstance(k, str) and k in tensors] if order else []
        names += [k for k in header if k in tensors and k not in names]
        return {k: _place(tensors[k], device) for k in names}
    try:
        tree = json.loads(meta[_STRUCTURE_KEY])
    except (ValueError, TypeError, RecursionError) as e:
        raise SerializationError(f"ember.load: {where} is corrupt: its structure metadata "
                                 f"is not valid JSON ({e})") from None
    placed = _place_all(tree, tensors, device, where)
    try:
        return _decode(tree, placed, where)
    except RecursionError:
        raise SerializationError(f"ember.load: {where} is corrupt: its structure metadata "
                                 f"nests too deeply") from None


def _json_list(text):
    try:
        value = json.loads(text) if isinstance(text, str) else None
    except ValueError:
        return None
    return value if isinstance(value, list) else None


def _place(t: Tensor, device, saved_device=None, requires_grad=False) -> Tensor:
    target = device if device is not None else saved_device
    if target is not None:
        t = t.to(device=target)  # returns t itself when it is already there
    if requires_grad:
        t.requires_grad_(True)
    return t


def _place_all(tree, tensors: dict, device, where: str) -> dict:
    """Move each tensor to its device and set requires_grad, as its structure node says."""
    placed, stack = {}, [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            name, saved = node.get("tensor"), node.get("device")
            if isinstance(name, str) and name in tensors and name not in placed:
                if saved is not None and not isinstance(saved, str):
                    raise SerializationError(f"ember.load: {where} is corrupt: tensor "
                                             f"{name!r} has device {saved!r}")
                placed[name] = _place(tensors[name], device, saved,
                                      node.get("requires_grad") is True)
            else:
                stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    return placed

