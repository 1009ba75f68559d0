"""Edges and input metadata are named records (issue 38, item 6): ``Edge(function,
input_nr)`` wherever ``autograd/function.py`` builds an edge, ``InputMetadata(shape, type,
device_index)`` for what a node expects of each incoming gradient; the engine also takes
plain tuples in their place (JIT nodes and generated recorders may still hold them)."""
import numpy as np

import ember as E
from ember.autograd import Edge, Function
from ember.autograd.engine import _validate
from ember.autograd.function import AccumulateGrad, InputMetadata, gradient_edge, \
    input_metadata
from ember.testing import assert_close


def test_gradient_edge_is_a_named_edge():
    x = E.ones(3, requires_grad=True)
    e = gradient_edge(x)
    assert isinstance(e, Edge) and e.function is x._grad_acc and e.input_nr == 0
    assert e.function.__class__ is AccumulateGrad and tuple(e) == (x._grad_acc, 0)
    y = E.unbind(x * 2, 0)[1]
    e = gradient_edge(y)
    assert e.function is y.grad_fn and e.input_nr == y.output_nr == 1
    assert gradient_edge(E.ones(3)) is None
    assert Edge._fields == ("function", "input_nr")  # torch/csrc/autograd/edge.h


def test_input_metadata_names_shape_type_and_device_index():
    x = E.ones(2, 3, dtype=E.float64, requires_grad=True)
    m = input_metadata(x)
    assert isinstance(m, InputMetadata) and InputMetadata._fields == (
        "shape", "type", "device_index")
    assert m.shape == (2, 3) and m.type is x.type() and m.device_index is None  # cpu
    assert AccumulateGrad(x)._out_meta == (m,)
    a, b = E.ones(4, requires_grad=True).split(2)  # set_history's general path
    assert a.grad_fn._out_meta == (InputMetadata((2,), a.type()), InputMetadata((2,), b.type()))


def test_custom_function_edges_are_named():
    class Twice(Function):
        @staticmethod
        def forward(ctx, t, k):
            return t * k

        @staticmethod
        def backward(ctx, g):
            return g * 2, None
    x = E.ones(2, requires_grad=True)
    y = Twice.apply(x, 2)
    (edge, none) = y.grad_fn.next_functions
    assert isinstance(edge, Edge) and edge.function is x._grad_acc and none is None
    y.sum().backward()
    assert_close(x.grad, np.full(2, 2.0, dtype=np.float32))


def test_the_engine_fits_a_gradient_to_plain_or_named_metadata():
    x = E.ones(1, 3, requires_grad=True)
    node = (x * 1).grad_fn
    g = E.ones(2, 3, dtype=E.float64)
    for meta in (InputMetadata((1, 3), x.type()), ((1, 3), x.type()),
                 ((1, 3), x.type(), None)):
        node._out_meta = (meta,)
        out = _validate(g, node, 0, node)  # summed to the shape, cast to the Type
        assert out.shape == (1, 3) and out.dtype is E.float32 and out.tolist() == [[2.0] * 3]
    x32 = E.ones(3, requires_grad=True)
    (x32 * 2).backward(E.ones(3, dtype=E.float64))  # a float64 gradient into a float32 leaf
    assert x32.grad.dtype is E.float32 and x32.grad.tolist() == [2.0, 2.0, 2.0]
