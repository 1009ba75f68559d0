"""The fake ``cudnn.pygraph`` (cuDNN Frontend 1.28) and what a graph touches: its tensors,
the ``Handle`` it runs on and the exception it declines with. ``_fake_cudnn.py`` has the
module around it and says where each ``fe-1.28`` / ``fe-cpp`` limit comes from.
"""
from __future__ import annotations

import itertools

from ._fake_cuda_runtime import compute

# fe-1.28 _pygraph.py _STRUCTURED_OPS: op -> (tensor ports, output ports); attrs shared
CONV_OPS = {"conv_fprop": (("image", "weight"), ("Y",)),
            "conv_dgrad": (("loss", "filter"), ("DX",)),
            "conv_wgrad": (("image", "loss"), ("DW",))}
CONV_ATTRS = ("padding", "pre_padding", "post_padding", "stride", "dilation",
              "convolution_mode")
_ROLE = {"image": "x", "weight": "w", "filter": "w", "loss": "y"}


class cudnnGraphNotSupportedError(Exception):  # noqa: N801 - the real name
    """fe-1.28: ``cudnn._compiled_module.cudnnGraphNotSupportedError`` (an Exception)."""


class Handle:
    """fe-1.28 ``_handle.py`` Handle: the backend handle, its device and its stream."""

    def __init__(self, backend_handle, ordinal=None, stream=None):
        self.backend_handle = None if backend_handle is None else int(backend_handle)
        self._ordinal = ordinal
        self.stream = stream


def _backend_handle(handle):
    """fe-1.28 ``_handle.py`` to_backend_handle: a Handle or None, else TypeError."""
    if handle is None or isinstance(handle, Handle):
        return handle
    raise TypeError(f"expected a cudnn.Handle (from cudnn.create_handle()) or None, got "
                    f"{type(handle).__name__}")


def _row_major(dim) -> list:
    """fe-1.28 ``nodes.py`` _row_major_stride."""
    stride, step = [0] * len(dim), 1
    for i in reversed(range(len(dim))):
        stride[i], step = step, step * dim[i]
    return stride


class FakeTensor:
    """fe-1.28 ``graph_types.py`` Tensor: chainable setters, refused once the graph is
    frozen (``Tensor._guard`` -> ``pygraph._check_mutable``: RuntimeError)."""

    def __init__(self, graph, name, dim=None, stride=None, data_type=None,
                 is_virtual=False, uid=0):
        self.graph, self.name, self.data_type, self.uid = graph, name, data_type, uid
        self.dim, self.stride = list(dim or []), list(stride or [])
        self.is_virtual = is_virtual
        self.dim_assigned = self.stride_assigned = False

    def __getattribute__(self, name):
        if name.startswith("set_"):
            object.__getattribute__(self, "graph").fe.used_tensor.add(name)
        return object.__getattribute__(self, name)

    def set_output(self, value):
        self.graph._check_mutable("mutate a tensor attribute")
        self.is_virtual = not value
        return self

    def set_data_type(self, dtype):
        self.graph._check_mutable("mutate a tensor attribute")
        self.data_type = dtype
        return self

    def set_dim(self, dim):
        self.graph._check_mutable("mutate a tensor attribute")
        self.dim, self.dim_assigned = list(dim), True
        return self

    def set_stride(self, stride):
        self.graph._check_mutable("mutate a tensor attribute")
        self.stride, self.stride_assigned = list(stride), True
        return self

    def validate(self) -> None:
        """fe-1.28 ``graph_types.py`` Tensor.validate: ValueError."""
        if not self.dim:
            raise ValueError(f"Tensor '{self.name}' dims not set.")
        if not self.stride:
            raise ValueError(f"Tensor '{self.name}' strides not set.")
        if len(self.dim) != len(self.stride):
            raise ValueError(f"Tensor '{self.name}' dim/stride length mismatch: "
                             f"{len(self.dim)} vs {len(self.stride)}")


def _conv_dims(op, params, inputs):
    """fe-1.28 ``_pygraph.py`` _conv_fprop_dims / _conv_dgrad_dims (wgrad: none)."""
    if op == "conv_wgrad":
        return None
    a, w = (inputs.get(p) for p in CONV_OPS[op][0])
    if a is None or w is None or not a.dim:
        return None
    sp = len(a.dim) - 2
    pre = params.get("pre_padding") or params.get("padding") or [0] * sp
    post = params.get("post_padding") or params.get("padding") or [0] * sp
    stride, dil = params.get("stride") or [1] * sp, params.get("dilation") or [1] * sp
    eff = [(w.dim[i + 2] - 1) * dil[i] + 1 for i in range(sp)]
    if op == "conv_fprop":
        return [a.dim[0], w.dim[0]] + [(a.dim[i + 2] + pre[i] + post[i] - eff[i]) // stride[i]
                                       + 1 for i in range(sp)]
    return [a.dim[0], w.dim[1]] + [(a.dim[i + 2] - 1) * stride[i] + eff[i] - pre[i] - post[i]
                                   for i in range(sp)]


def _conv_builder(op):
    """fe-1.28 ``_pygraph.py`` _install_structured_builders: ports positionally or by
    name, attrs by keyword; an unknown keyword is a TypeError; one output -> one tensor."""
    ports, (oport,) = CONV_OPS[op]

    def builder(self, *args, name="", compute_data_type=None, out_dims=None, **kwargs):
        self._check_mutable(f"add a {op} op")
        assert self.op is None, "the fake holds one operation per graph (ember builds one)"
        if len(args) > len(ports) + len(CONV_ATTRS):
            raise TypeError(f"{op}() takes at most {len(ports) + len(CONV_ATTRS)} positional "
                            f"arguments ({ports} + {CONV_ATTRS})")
        for attr, value in zip(CONV_ATTRS, args[len(ports):]):
            if attr in kwargs:
                raise TypeError(f"{op}() got multiple values for {attr!r}")
            kwargs[attr] = value
        inputs = dict(zip(ports, args[:len(ports)]))
        inputs.update({p: kwargs.pop(p) for p in ports[len(inputs):] if p in kwargs})
        params = {a: kwargs.pop(a) for a in CONV_ATTRS if kwargs.get(a) is not None}
        if kwargs:
            raise TypeError(f"{op}() got unexpected arguments {sorted(kwargs)}; tensor ports "
                            f"are {ports}, attrs are {CONV_ATTRS}")
        node = name or f"{op}.0"
        out = FakeTensor(self, f"{node}::{oport}", is_virtual=True, uid=self._uid())
        dims = out_dims if out_dims is not None else _conv_dims(op, params, inputs)
        if dims:
            out.dim, out.stride = list(dims), _row_major(dims)
        self.op, self.node = op.split("_")[1], dict(name=node, compute_data_type=(
            compute_data_type or self.kwargs["compute_data_type"]))
        self.ports, self.inputs = inputs, {_ROLE[p]: t for p, t in inputs.items()}
        self.attrs, self.out = params, out
        self._tensors[out.name] = out
        return out

    builder.__name__ = op
    return builder


class FakeGraph:
    """``cudnn.pygraph`` (fe-1.28 ``_pygraph.py``) for one convolution; ``calls`` records
    the public calls; ``op``/``inputs`` ({role: tensor})/``attrs``/``out`` the operation."""

    fe = None   # the fake module (make_fake_frontend binds a subclass)

    def __init__(self, name="test_graph", io_data_type=None, intermediate_data_type=None,
                 compute_data_type=None, handle=None, sm_count=None, sm_version=None,
                 kernel_cache=None, device_property=None, is_dynamic_shape_enabled=False,
                 is_override_shape_enabled=False, **kwargs):
        self.kwargs = dict(io_data_type=io_data_type, intermediate_data_type=(
            intermediate_data_type or io_data_type), compute_data_type=(
            compute_data_type or io_data_type), handle=handle)
        self.extra = kwargs          # fe-1.28: forwarded to the C++ graph at lowering
        self.calls, self.notes, self.modes = [], [], None
        self.built: dict = {}        # plan index -> its workspace bytes, once built
        self.op, self.inputs, self.attrs, self.out = None, {}, {}, None
        self._tensors, self._next_uid = {}, itertools.count(1)
        self._validated = self._frozen = self._planned = self._is_built = False
        self._plans, self._plan_index = [], 0
        self.fe.graphs.append(self)

    def __getattribute__(self, name):
        if name in GRAPH_API:
            type(self).fe.used_graph.add(name)
        return object.__getattribute__(self, name)

    @property
    def tensors(self) -> dict:
        """fe-1.28 ``pygraph.tensors``: name -> tensor, op outputs included."""
        return dict(self._tensors)

    def _uid(self):
        return next(self._next_uid)

    def _check_mutable(self, what):
        """fe-1.28 ``pygraph._check_mutable``: RuntimeError once frozen."""
        if self._frozen:
            raise RuntimeError(f"cannot {what} after lowering/planning — the graph is frozen "
                               f"(planning is one-shot; build a new graph)")
        self._validated = False

    def _freeze(self):
        """fe-1.28 ``pygraph._freeze`` (at lowering and planning): dims become tuples."""
        for t in self._tensors.values():
            t.dim, t.stride = tuple(t.dim), tuple(t.stride)
        self._frozen = True

    def tensor(self, dim, stride=None, data_type=None, is_virtual=False,
               is_pass_by_value=False, ragged_offset=None, reordering_type=None, name="",
               uid=None, ragged_offset_multiplier=1, **kwargs):
        if kwargs:   # fe-1.28: passed to the Tensor dataclass, which has no such field
            raise TypeError(f"Tensor.__init__() got an unexpected keyword argument "
                            f"{next(iter(kwargs))!r}")
        name = name or f"tensor_{len(self._tensors)}"
        t = FakeTensor(self, name, list(dim), list(stride) if stride else _row_major(dim),
                       data_type or self.kwargs["io_data_type"], is_virtual, uid or self._uid())
        t.dim_assigned, t.stride_assigned = True, stride is not None
        self._tensors[name] = t
        return t

    conv_fprop = _conv_builder("conv_fprop")
    conv_dgrad = _conv_builder("conv_dgrad")
    conv_wgrad = _conv_builder("conv_wgrad")

    def groups(self):
        """C / W.dim[1] of the regular convolution (cuDNN infers groups the same way)."""
        x, w = (self.inputs.get(r, self.out) for r in ("x", "w"))
        return x.dim[1] // w.dim[1]

    def validate(self):
        self.calls.append("validate")
        self._validate()

    def _validate(self):
        """fe-1.28 ``pygraph.validate``, in its order: each tensor (ValueError), then the
        lowering to C++: freeze, the handle (TypeError), ``backend_graph(**kwargs)``
        (TypeError), the operation's overload (TypeError) and C++ checks (ValueError)."""
        for t in self._tensors.values():
            if t.data_type is None:   # fe-1.28 nodes.py Node.infer_properties
                t.data_type = self.kwargs["intermediate_data_type" if t.is_virtual
                                          else "io_data_type"]
            t.validate()
        self._freeze()
        _backend_handle(self.kwargs["handle"])
        if self.extra:     # fe-cpp: pybind backend_graph(...) has no such keyword
            raise TypeError(f"backend_graph(): incompatible keyword arguments "
                            f"{sorted(self.extra)}")
        if self.op is not None:
            self._validate_conv()
        self._validated = True

    def _validate_conv(self):
        a = self.attrs
        if "padding" in a and ({"pre_padding", "post_padding"} & set(a)):
            # fe-cpp: the two pybind overloads take padding or pre/post_padding
            raise TypeError(f"conv_{self.op}(): incompatible function arguments: padding "
                            f"with pre_padding/post_padding")
        # fe-cpp include/cudnn_frontend/node/conv_*.h pre_validate_node: ATTRIBUTE_NOT_SET
        for attr, what in (("pre_padding", "Pre padding"), ("post_padding", "Post padding"),
                           ("stride", "Conv strides"), ("dilation", "Conv dilation")):
            if not a.get(attr) and not (attr.endswith("padding") and a.get("padding")):
                raise ValueError(f"{what} not set.")
        if self.op == "dgrad" and not self.out.dim:   # fe-cpp conv_dgrad.h
            raise ValueError("For dgrad node, output dimension inferencing is not possible.")

    def build_operation_graph(self):
        self.calls.append("build_operation_graph")
        if not self._validated:
            self._validate()

    def create_execution_plans(self, heuristics=None):
        self.calls.append("create_execution_plans")
        self._create_execution_plans(heuristics)

    def _create_execution_plans(self, heuristics):
        if not self._validated:
            self._validate()
        if self._planned:   # fe-1.28 create_execution_plans: planning is one-shot
            raise RuntimeError("create_execution_plans() was already called on this graph; "
                               "planning is one-shot")
        self.modes = list(heuristics) if heuristics is not None else None
        self._freeze()
        if not self.fe.plan_count:
            raise cudnnGraphNotSupportedError("no engine — python or backend — proposed a "
                                              "plan for this graph")
        self._plans, self._planned, self._plan_index = list(range(self.fe.plan_count)), True, 0

    def deselect_numeric_notes(self, notes):
        self.calls.append("deselect_numeric_notes")
        self.notes.extend(notes)
        return self        # fe-1.28: the deselect_* filters return the graph

    def check_support(self):
        self.calls.append("check_support")
        reason = self.fe.decline(self) if self.fe.decline else None
        if reason:
            raise cudnnGraphNotSupportedError(reason)
        if self._planned and set(self._plans) <= self.fe.unbuildable:
            # fe-cpp plans.h check_support: no engine config passes
            raise cudnnGraphNotSupportedError("[cudnn_frontend] Error: No execution plans "
                                              "support the graph.")

    def build_plans(self, *args, ctx=None, **kwargs):
        self.calls.append(("build_plans", *args))
        self._build_plans(*args, **kwargs)

    def _build_plans(self, *args, **kwargs):
        policy = kwargs.pop("policy", args[0] if args else None)
        if len(args) > 1 or kwargs or not (policy is None or policy in self.fe.build_plan_policy):
            # fe-cpp: backend_graph.build_plans(policy: build_plan_policy = HEURISTICS_CHOICE)
            raise TypeError(f"build_plans(): incompatible arguments {args} {kwargs}")
        if not self._planned:
            self._create_execution_plans(None)
        build_all = policy == self.fe.build_plan_policy.ALL
        for index in self._plans[self._plan_index:]:
            if index in self.fe.unbuildable:
                continue   # fe-1.28 build_plans: a decline moves the walk on
            self.built.setdefault(index, self.fe.workspace)
            if not self._is_built:
                self._plan_index, self._is_built = index, True
            if not build_all:
                return
        if not self._is_built:
            raise cudnnGraphNotSupportedError("no plan in the list could be built")

    def get_workspace_size(self, handle=None, override_uids=None, override_shapes=None,
                           override_strides=None):
        if not self._is_built:   # fe-1.28 get_workspace_size
            raise RuntimeError("Call build() first")
        return self.built[self._plan_index]

    def get_execution_plan_count(self):
        return len(self._plans) if self._planned else 0

    def _check_plan_index(self, index):
        """fe-1.28 ``pygraph._check_plan_index``: IndexError; before planning the C++
        list is empty (fe-cpp plans.h: "Plan index is invalid", RuntimeError)."""
        if not self._planned:
            raise RuntimeError(f"Plan index {index} is invalid.")
        if not isinstance(index, int) or not 0 <= index < len(self._plans):
            raise IndexError(f"plan index {index} out of range for {len(self._plans)} plan(s)")

    def build_plan_at_index(self, index):
        self.calls.append(("build_plan_at_index", index))
        self._check_plan_index(index)
        if index in self.fe.unbuildable:   # fe-cpp plans.h check_support_at_index
            raise cudnnGraphNotSupportedError("[cudnn_frontend] Error: Deselecting "
                                              "execution plan")
        self.built.setdefault(index, 1000 + index)
        self._plan_index, self._is_built = index, True   # fe-1.28: builds and selects
        return self

    def get_workspace_size_plan_at_index(self, index, handle=None, override_uids=None,
                                         override_shapes=None, override_strides=None):
        self._check_plan_index(index)
        return self.built.get(index, 0)   # fe-cpp plans.h: 0 when not built

    def execute(self, tensor_dict, workspace=None, handle=None, override_uids=None,
                override_shapes=None, override_strides=None):
        self.calls.append("execute")
        if not self._is_built:   # fe-1.28 execute: builds on first use
            self._build_plans()
        self._run(tensor_dict, workspace, handle, self._plan_index)

    def execute_plan_at_index(self, tensor_dict, workspace=None, index=0, handle=None,
                              *args, **kwargs):
        self.calls.append(("execute_plan_at_index", index))
        self._check_plan_index(index)
        if index not in self.built:   # fe-cpp plans.h is_plan_index_executable
            raise RuntimeError(f"Plan index {index} did not build.")
        self._run(tensor_dict, workspace, handle, index)

    # -- the arithmetic: what cuDNN computes, on numpy --

    def _pack(self, tensor_dict) -> dict:
        """{tensor: pointer} from a variant pack keyed by Tensor, name or uid; every
        non-virtual tensor needs a buffer (fe-1.28 ``pygraph._normalize``: ValueError)."""
        by_uid = {t.uid: t for t in self._tensors.values()}
        pack = {}
        for key, ptr in tensor_dict.items():
            t = key if isinstance(key, FakeTensor) else \
                self._tensors[key] if isinstance(key, str) else by_uid[key]
            pack[t] = ptr
        for t in self._tensors.values():
            if not t.is_virtual and t not in pack:
                raise ValueError(f"the variant pack is missing a buffer for tensor uid "
                                 f"{t.uid} ({t.name!r})")
        return pack

    def _run(self, tensor_dict, workspace, handle, index):
        _backend_handle(handle)
        pack = self._pack(tensor_dict)
        if index in self.fe.failing:
            raise RuntimeError(f"plan {index} failed to run")
        need = self.built[index]
        if need and not workspace:
            # NOTE: the fake's own check: the frontend takes a bare pointer unchecked, and
            # a plan given none where it needs scratch would fault on the GPU
            raise RuntimeError(f"plan {index} needs {need} workspace bytes; got none")
        rt = self.fe.runtime
        self.fe.last_index = index
        self.fe.executions.append(dict(graph=self, pack=pack, workspace=workspace,
                                       handle=handle, stream=rt.current_stream,
                                       device=rt.current_device, index=index))
        for t, ptr in pack.items():
            if ptr % 16:   # fe-cpp: tensors are declared 16-byte aligned by default
                raise RuntimeError(f"{t.name} is not 16-byte aligned")
        compute(self, pack, rt)


GRAPH_API = frozenset(n for n, v in vars(FakeGraph).items()
                      if not n.startswith("_") and callable(v) and n != "groups")
"""The ``pygraph`` methods the fake offers (calls of them are recorded in ``fe.used_graph``)."""
