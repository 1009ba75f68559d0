"""Plain helpers shared by the symbolics tests (fixtures live in ``conftest.py``): the
operands and op tables of the elementwise tests (``test_arithmetic``, ``test_unary``,
``test_comparison``), the data, op tables and hand-built IR graphs of the shape tests
(``test_shape``, ``test_slicing``, ``test_indexing``), and the inputs of the layer tests
(``test_nn``, ``test_pooling``).

Import it relatively: ``from ._shared import uniform`` (pytest's importlib mode imports
the test modules as part of this package).
"""
from __future__ import annotations

import warnings

import numpy as np
import onnx

import ember as E
import ember.nn.functional as F
import ember.onnx as eo
from ember.jit.ir.graph import Graph
from ember.jit.ir.ir_types import AnyType, ListType, TensorType
from ember.jit.ir.kinds import prim
from ember.onnx.export import export_graph


# ---- elementwise: test_arithmetic, test_unary, test_comparison -----------------------------

# one stream for the three test modules, as when they were one
_rng = np.random.default_rng(0)


def t(arr, dtype=None):
    """A Tensor from numpy data (in ``dtype``, a numpy dtype, if given)."""
    arr = np.asarray(arr)
    return E.tensor(arr if dtype is None else arr.astype(dtype))


def uniform(shape, lo=-3.0, hi=3.0, dtype=np.float32):
    return t(_rng.uniform(lo, hi, shape), dtype)


def ints(shape, lo=-9, hi=10, dtype=np.int64):
    return t(_rng.integers(lo, hi, shape), dtype)


def export_only(fn, inputs, opset=17):
    """Export and check without running: for ops onnxruntime has no kernel for (its
    Tan, Asin, Acos, Atan, Sinh, Cosh and Erf take float32 only)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = eo.export(fn, tuple(inputs), None, opset_version=opset)
    onnx.checker.check_model(model, full_check=True)
    return model


# the unary ops of test_unary, also run on float16/bfloat16 by test_arithmetic
# name -> (function, input range, whether onnxruntime runs it in float64)
UNARY = {
    "exp": (lambda x: x.exp(), (-3, 3), True),
    "exp2": (lambda x: x.exp2(), (-3, 3), True),
    "log": (lambda x: x.log(), (0.1, 5), True),
    "log2": (lambda x: x.log2(), (0.1, 5), True),
    "log10": (lambda x: x.log10(), (0.1, 5), True),
    "log1p": (lambda x: x.log1p(), (-0.9, 5), True),
    "expm1": (lambda x: x.expm1(), (-3, 3), True),
    "sqrt": (lambda x: x.sqrt(), (0.1, 5), True),
    "rsqrt": (lambda x: x.rsqrt(), (0.1, 5), True),
    "sin": (lambda x: x.sin(), (-3, 3), True),
    "cos": (lambda x: x.cos(), (-3, 3), True),
    "tan": (lambda x: x.tan(), (-1.2, 1.2), False),
    "asin": (lambda x: x.asin(), (-0.95, 0.95), False),
    "acos": (lambda x: x.acos(), (-0.95, 0.95), False),
    "atan": (lambda x: x.atan(), (-3, 3), False),
    "sinh": (lambda x: x.sinh(), (-3, 3), False),
    "cosh": (lambda x: x.cosh(), (-3, 3), False),
    "tanh": (lambda x: x.tanh(), (-3, 3), True),
    "sigmoid": (lambda x: x.sigmoid(), (-6, 6), True),
    "relu": (lambda x: x.relu(), (-3, 3), True),
    "silu": (lambda x: F.silu(x), (-3, 3), True),
    "gelu": (lambda x: F.gelu(x), (-3, 3), False),
    "gelu_tanh": (lambda x: F.gelu(x, approximate="tanh"), (-3, 3), True),
    "erf": (lambda x: x.erf(), (-3, 3), False),
    "floor": (lambda x: x.floor(), (-3, 3), True),
    "ceil": (lambda x: x.ceil(), (-3, 3), True),
    "trunc": (lambda x: x.trunc(), (-3, 3), True),
    "round": (lambda x: x.round(), (-3, 3), True),
    "round_2": (lambda x: x.round(decimals=2), (-3, 3), True),
    "round_-1": (lambda x: x.round(decimals=-1), (-30, 30), True),
    "reciprocal": (lambda x: x.reciprocal(), (0.2, 3), True),
    "abs": (lambda x: x.abs(), (-3, 3), True),
    "neg": (lambda x: -x, (-3, 3), True),
    "positive": (lambda x: +x, (-3, 3), True),
    "sign": (lambda x: x.sign(), (-3, 3), True),
    "nan_to_num": (lambda x: x.nan_to_num(), (-3, 3), True),
    "leaky_relu": (lambda x: F.leaky_relu(x, 0.2), (-3, 3), True),
    "elu": (lambda x: F.elu(x, alpha=0.7), (-3, 3), True),
    "hardtanh": (lambda x: F.hardtanh(x, -0.5, 2.0), (-3, 3), True),
    "relu6": (lambda x: F.relu6(x), (-3, 8), True),
    "asinh": (lambda x: x.asinh(), (-3, 3), False),
    "acosh": (lambda x: x.acosh(), (1.05, 5), False),
    "atanh": (lambda x: x.atanh(), (-0.95, 0.95), False),
    "erfc": (lambda x: x.erfc(), (-3, 3), False),
    "square": (lambda x: x.square(), (-3, 3), True),
}


# the comparisons of test_comparison, also run on float16/bfloat16 by test_arithmetic
COMPARE = {"eq": lambda a, b: a == b, "ne": lambda a, b: a != b, "lt": lambda a, b: a < b,
           "le": lambda a, b: a <= b, "gt": lambda a, b: a > b, "ge": lambda a, b: a >= b}


# ---- shape, slicing, indexing: test_shape, test_slicing, test_indexing ---------------------

def data(shape, dtype="float32", seed=0):
    rng = np.random.default_rng(seed)
    if dtype == "float32":
        a = rng.standard_normal(shape).astype(np.float32)
    elif dtype == "int64":
        a = rng.integers(-9, 9, shape).astype(np.int64)
    else:
        a = rng.random(shape) > 0.5
    return E.tensor(a)


I = E.tensor   # index tensors made inside the model become constants

# name -> fn of x, x of shape (2, 3, 4); each runs in float32, int64 and bool: a
# table per symbolics module (test_static of each test file), and CASES for the
# tests that take ops of several
SHAPE_CASES = {   # shape.py
    "view": lambda x: x.view(6, 4),
    "view_flat": lambda x: x.view(-1),
    "view_0d": lambda x: x[0, 0, :1].view(()),
    "reshape": lambda x: x.reshape(4, -1, 2),
    "reshape_same": lambda x: x.reshape(2, 3, 4),
    "view_as": lambda x: x.view_as(E.zeros(6, 4)),
    "reshape_as": lambda x: x.reshape_as(E.zeros(3, 8)),
    "flatten": lambda x: x.flatten(),
    "flatten_1": lambda x: x.flatten(1),
    "flatten_01": lambda x: x.flatten(0, 1),
    "flatten_neg": lambda x: x.flatten(-2, -1),
    "flatten_same": lambda x: x.flatten(1, 1),
    "flatten_0d": lambda x: x[0, 0, 0].flatten(),
    "unflatten": lambda x: x.unflatten(2, (2, 2)),
    "unflatten_neg": lambda x: x.unflatten(-1, (-1, 2)),
    "unflatten_0": lambda x: x.unflatten(0, (1, 2)),
    "permute": lambda x: x.permute(2, 0, 1),
    "permute_neg": lambda x: x.permute(-1, 0, -2),
    "transpose": lambda x: x.transpose(0, 2),
    "transpose_neg": lambda x: x.transpose(-1, -2),
    "transpose_same": lambda x: x.transpose(1, 1),
    "mT": lambda x: x.mT,
    "swapaxes": lambda x: x.swapaxes(0, 1),
    "swapdims": lambda x: x.swapdims(2, 0),
    "t": lambda x: x[0].t(),
    "t_1d": lambda x: x[0, 0].t(),
    "T": lambda x: x[0].T,
    "movedim": lambda x: x.movedim(0, 2),
    "movedim_list": lambda x: x.movedim((0, 1), (2, 0)),
    "moveaxis": lambda x: E.moveaxis(x, -1, 0),
    "squeeze_all": lambda x: x[:, :1].squeeze(),
    "squeeze_dim": lambda x: x[:, :1].squeeze(1),
    "squeeze_kept": lambda x: x.squeeze(0),
    "squeeze_list": lambda x: x[:1, :1].squeeze((0, -1, 1)),
    "unsqueeze": lambda x: x.unsqueeze(0),
    "unsqueeze_neg": lambda x: x.unsqueeze(-1),
    "unsqueeze_mid": lambda x: x.unsqueeze(-3),
    "expand": lambda x: x[:, :1].expand(2, 3, 4),
    "expand_keep": lambda x: x[:, :1].expand(-1, 5, -1),
    "expand_lead": lambda x: x[0].expand(2, 2, 3, 4),
    "expand_as": lambda x: x[:1].expand_as(x),
    "contiguous": lambda x: x.transpose(0, 1).contiguous(),
    "clone": lambda x: x.clone(),
    "repeat": lambda x: x.repeat(1, 2, 1),
    "repeat_lead": lambda x: x.repeat(2, 1, 1, 2),
    "repeat_ones": lambda x: x.repeat(1, 1, 1),
    "type_as_int": lambda x: x.type_as(I([1])),
    "type_as_float": lambda x: x.type_as(I([1.0])),
    "type_as_bool": lambda x: x.type_as(I([True])),
    "to_float64": lambda x: x.to(E.float64),
    "to_int32": lambda x: x.to(E.int32),
    "to_cpu_bool": lambda x: x.to("cpu", E.bool),
    "to_device_obj": lambda x: x.to(E.Device("cpu"), E.float32),
    "to_copy": lambda x: x.to(copy=True),
}
SLICING_CASES = {   # slicing.py
    "narrow": lambda x: x.narrow(2, 1, 2),
    "narrow_neg": lambda x: x.narrow(1, -2, 2),
    "narrow_neg_mid": lambda x: x.narrow(-1, -3, 2),
    "narrow_empty": lambda x: x.narrow(0, 2, 0),
    "select": lambda x: x.select(1, 2),
    "select_neg": lambda x: x.select(-1, -1),
    "chunk": lambda x: x.chunk(2, 2),
    "chunk_uneven": lambda x: x.chunk(2, 1),
    "chunk_fewer": lambda x: x.chunk(3, 2),
    "chunk_one": lambda x: x.chunk(1, 0),
    "chunk_empty": lambda x: x[:, :, :0].chunk(2, 2),
    "split": lambda x: x.split(3, 2),
    "split_exact": lambda x: x.split(1, 0),
    "split_big": lambda x: x.split(5, 1),
    "split_sizes": lambda x: x.split([1, 3], 2),
    "split_sizes_neg": lambda x: E.split(x, [2, 0, 1], -2),
    "unbind": lambda x: x.unbind(1),
    "iterate": lambda x: list(x),
    "cat": lambda x: E.cat([x, x[:, :1]], 1),
    "cat_neg": lambda x: E.cat([x, x.flip(0), x], -1),
    "cat_one": lambda x: E.cat([x], 0),
    "cat_skip_empty": lambda x: E.cat([x[0, 0], x[0, 0, :0].flatten(), x[1, 1]]),
    "cat_promote": lambda x: E.cat([x, x.to(E.float64)], 0),
    "stack": lambda x: E.stack([x, x.flip(0)], 1),
    "stack_neg": lambda x: E.stack([x, x], -1),
    "stack_one": lambda x: E.stack([x]),
    "flip": lambda x: x.flip(0),
    "flip_multi": lambda x: x.flip((0, 2)),
    "flip_neg": lambda x: x.flip(-1),
    "roll": lambda x: x.roll(1, 0),
    "roll_neg": lambda x: x.roll(-1, 2),
    "roll_multi": lambda x: x.roll((1, -5), (0, 2)),
    "roll_flat": lambda x: x.roll(5),
    "roll_whole": lambda x: x.roll(4, 2),
}
INDEXING_CASES = {   # indexing.py
    "index_int": lambda x: x[1],
    "index_neg": lambda x: x[-1],
    "index_ints": lambda x: x[0, -1, 2],
    "index_slices": lambda x: x[1:, ::2, -3:-1],
    "index_steps": lambda x: x[:, 1::2, ::3],
    "index_clamp": lambda x: x[-10:10, :-5],
    "index_ellipsis": lambda x: x[..., 1],
    "index_none": lambda x: x[None, :, None, -1],
    "index_mixed": lambda x: x[0, None, 1:, None, ::2],
    "index_true": lambda x: x[True],
    "index_false": lambda x: x[:, False],
    "index_full": lambda x: x[:, :],
    "index_select": lambda x: x.index_select(1, I([2, 0, 2])),
    "index_select_0d": lambda x: x.index_select(-1, I(3)),
    "index_select_neg_dim": lambda x: x.index_select(-2, I([1])),
    "gather": lambda x: x.gather(2, I([[[0, 3], [1, 1], [2, 0]], [[3, 3], [0, 1], [2, 2]]])),
    "gather_smaller": lambda x: x.gather(1, I([[[0, 2], [1, 1]]])),
    "gather_int32": lambda x: x.gather(0, I([[[1, 0, 1, 0]]], dtype=E.int32)),
    "scatter": lambda x: x.scatter(2, I([[[0, 3], [1, 2], [3, 0]]] * 2), x.flip(0)),
    "scatter_smaller": lambda x: x.scatter(1, I([[[2, 0]]]), x),
    "scatter_value": lambda x: x.scatter(1, I([[[0, 2, 1, 0]]]), 1),
    "take_along_dim": lambda x: E.take_along_dim(x, I([[[0], [-1], [2]]]), 2),
    "take_along_dim_bcast": lambda x: E.take_along_dim(x[:1], I([[[1, 0, 3]]] * 2), -1),
    "take_along_dim_flat": lambda x: E.take_along_dim(x, I([[0, -1], [23, 5]])),
}
CASES = {**SHAPE_CASES, **SLICING_CASES, **INDEXING_CASES}

# x of shape (4, 3, 4), then (6, 3, 4) and (1, 3, 4); dim 0 dynamic: a table per
# symbolics module (test_dynamic_batch of each test file), and DYNAMIC for the
# tests that take ops of several
SHAPE_DYNAMIC = {   # shape.py
    "view_batch": lambda x: x.view(x.shape[0], -1),
    "view_batch_sizes": lambda x: x.view(x.shape[0], 2, 6),
    "reshape_last": lambda x: x.reshape(-1, x.shape[-1]),
    "view_product": lambda x: x.view(x.shape[0] * 3, 4),
    "reshape_permuted_same_pos": lambda x: x.transpose(0, 1).reshape(3, x.shape[0], 2, 2),
    "reshape_permuted": lambda x: x.transpose(0, 1).reshape(x.shape[0], 3, 2, 2),
    "view_as": lambda x: x.view_as(x.flatten(1)),
    "flatten": lambda x: x.flatten(),
    "flatten_1": lambda x: x.flatten(1),
    "flatten_01": lambda x: x.flatten(0, 1),
    "flatten_12": lambda x: x.flatten(1, 2),
    "unflatten_batch": lambda x: x.unflatten(0, (x.shape[0], 1)),
    "unflatten_static": lambda x: x.unflatten(2, (2, 2)),
    "unflatten_minus1": lambda x: x.unflatten(0, (1, -1)),
    "expand_batch": lambda x: x[:, :1].expand(x.shape[0], 3, 4),
    "expand_keep": lambda x: x[:, :1].expand(-1, 3, -1),
    "expand_other_dim": lambda x: x.transpose(0, 2)[:1, :1].expand(x.shape[0], 3, x.shape[0]),
    "expand_as": lambda x: x[:, :1].expand_as(x),
    "repeat": lambda x: x.repeat(1, 2, 1),
    "permute": lambda x: x.permute(1, 0, 2),
    "squeeze_static": lambda x: x[:, :1].squeeze(),
    "unsqueeze": lambda x: x.unsqueeze(1),
    "type_as": lambda x: x.type_as(I([1])),
}
SLICING_DYNAMIC = {   # slicing.py
    "chunk_static_dim": lambda x: x.chunk(2, 2),
    "chunk_batch": lambda x: x.chunk(2, 0),
    "split_static_dim": lambda x: x.split([1, 3], 2),
    "split_rest_first": lambda x: x.split([x.shape[0] - 1, 1], 0),
    "split_rest_last": lambda x: x.split([1, x.shape[0] - 1], 0),
    "narrow_length": lambda x: x.narrow(0, 1, x.shape[0] - 1),
    "narrow_start": lambda x: x.narrow(0, x.shape[0] - 2, 2),
    "narrow_static": lambda x: x.narrow(2, 1, 2),
    "narrow_neg": lambda x: x.narrow(0, -1, 1),
    "select_static": lambda x: x.select(1, -1),
    "select_neg": lambda x: x.select(0, -1),
    "unbind_static": lambda x: x.unbind(1),
    "cat": lambda x: E.cat([x, x.flip(0)], 0),
    "stack": lambda x: E.stack([x, x], 1),
    "flip": lambda x: x.flip(0),
    "roll_batch": lambda x: x.roll(5, 0),
    "roll_neg": lambda x: x.roll(-1, 0),
    "roll_flat": lambda x: x.roll(7),
}
INDEXING_DYNAMIC = {   # indexing.py
    "index_from_1": lambda x: x[1:],
    "index_to_last": lambda x: x[:-1],
    "index_to_size": lambda x: x[:x.shape[0]],
    "index_from_size": lambda x: x[x.shape[0]:],
    "index_other": lambda x: x[:, 0, None, 1:3],
    "index_neg": lambda x: x[-1, ..., ::2],
    "take_along_dim": lambda x: E.take_along_dim(x, I([[[0], [3], [-1]]]), 2),
    "gather_smaller": lambda x: x.gather(2, I([[[0], [3], [1]]])),
    "scatter_smaller": lambda x: x.scatter(2, I([[[0], [3], [1]]]), x),
}
DYNAMIC = {**SHAPE_DYNAMIC, **SLICING_DYNAMIC, **INDEXING_DYNAMIC}


def export_ir(kind, args, out, opset=17, variation=None):
    """Export one node ``kind`` whose args are Tensors (graph inputs), lists (a
    ``prim::ListConstruct`` of inputs and constants) or constants; ``out`` is ember's
    result. Returns (model, input arrays)."""
    g, arrays = Graph(), []

    def value(a):
        if isinstance(a, E.Tensor):
            arrays.append(a.numpy())
            return g.add_input(f"in{len(arrays) - 1}", TensorType.from_tensor(a))
        if isinstance(a, list) and any(isinstance(i, E.Tensor) for i in a):
            n = g.create(prim.ListConstruct, [value(i) for i in a])
            n.output().type = ListType(TensorType())
            return g.insert_node(n).output()
        if isinstance(a, slice) or (isinstance(a, list) and any(isinstance(i, slice)
                                                                 for i in a)):
            return g.insert_constant(a, type=AnyType())
        return g.insert_constant(a)

    vals = [value(a) for a in args]
    node = g.insert_node(g.create(kind, vals))
    node.output().type = TensorType.from_tensor(out)
    g.register_output(node.output())
    var = {g.inputs[i]: v for i, v in (variation or {}).items()}
    names = [f"in{i}" for i in range(len(arrays))]
    model = export_graph(g, opset, names, ["out"], {}, {}, [], [], var)
    return model, arrays


# ---- layers: test_nn, test_pooling ---------------------------------------------------------

def randn(*shape, dtype=np.float32, seed=0):
    return E.tensor(np.random.default_rng(seed).standard_normal(shape).astype(dtype))


def randint(low, high, shape, dtype=np.int64, seed=0):
    return E.tensor(np.random.default_rng(seed).integers(low, high, shape).astype(dtype))


def export_checked_only(fn, inputs, opset_version=17):
    """Export and run onnx.checker (full_check) only: for float64 ops onnxruntime's CPU
    provider has no kernel for (Conv, ConvTranspose, AveragePool, GlobalAveragePool)."""
    model = eo.export(fn, tuple(inputs), None, opset_version=opset_version)
    onnx.checker.check_model(model, full_check=True)
    return model
