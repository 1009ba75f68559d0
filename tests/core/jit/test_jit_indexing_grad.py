"""First and second derivatives of traced functions that index (``t[i]``) and write through
an index (``t[i] = v``, ``index_put_``), against eager ember on the same inputs (float64)
and numerical gradgradcheck.

A traced graph holds an index as a list whose index arrays are Tensors; eager autograd
holds the kernels' tuple of arrays. The JIT's ``prim::AutogradFormula`` passed the list to
the backward formulas of ``index`` / ``index_put_``, and the history they recorded for
double backward then reached the kernels as a list (``TypeError: can only concatenate
list (not "tuple") to list``); ``_indexing.kernel_index`` turns either spelling into the
kernels' one."""
import numpy as np
import pytest

import ember as E
import ember.jit
from ember import _indexing
from ember.jit.runtime.executor import autodiff_subgraph_inlining

SHAPE = (4, 5)
ROWS = E.tensor([0, 2, 3])                  # unique: a plain write keeps every value
REPEATED = E.tensor([0, 2, 2, 4])           # repeats: their gradients add up
REPEATED_ROWS = E.tensor([3, 0, 3])
MASK = E.tensor(np.arange(20).reshape(SHAPE) % 3 == 0)
ROW_MASK = E.tensor([True, False, True, True])


def twice(index):
    """A function that uses ``x[index]`` twice, so its second derivative is not zero."""
    def fn(x):
        return x[index].tanh() * x[index].sigmoid()
    return fn


def written(write):
    """A function that writes values computed from ``x`` into a copy of ``x``."""
    def fn(x):
        y = x * 2.0
        write(y, x)
        return y.tanh() * y.sigmoid()
    return fn


def _setitem(index):
    def write(y, x):
        y[index] = x[index].exp()
    return write


def _index_put(indices, values, accumulate):
    """``index_put`` (out of place: the in-place method is not traceable yet, see
    test_traced_index_put_method) of values computed from ``x``."""
    def fn(x):
        y = E.index_put(x * 2.0, indices, values(x), accumulate=accumulate)
        return y.tanh() * y.sigmoid()
    return fn


def _from_input(x):  # an index computed from the input: a value of the traced graph
    return x[E.arange(SHAPE[0]), x.argmax(1)].exp() * x[:, 1:3].sum()


CASES = {
    # basic slices
    "slice": twice((slice(None), slice(None, 3))),
    "slice_step": twice((slice(1, None), slice(None, None, 2))),
    # integer indices
    "int": twice(1),
    "int_slice": twice((-1, slice(2, None))),
    "int_int": twice((2, 3)),
    # None and Ellipsis
    "none_ellipsis": twice((None, Ellipsis, slice(1, 3))),
    "ellipsis_int": twice((Ellipsis, 2)),
    "bool_scalar": twice(True),
    # boolean masks
    "mask": twice(MASK),
    "row_mask": twice(ROW_MASK),
    "row_mask_slice": twice((ROW_MASK, slice(1, 4))),
    # integer-tensor (advanced) indices, repeats included
    "tensor": twice((slice(None), REPEATED)),
    "lists": twice(([0, 1, 1], [2, 3, 3])),
    "tensor_int": twice((ROWS, 1)),
    "from_input": _from_input,
    # index_put_ (setitem), with and without accumulate
    "setitem_slice": written(_setitem((slice(None), slice(0, 2)))),
    "setitem_int": written(_setitem((1, Ellipsis))),
    "setitem_tensor": written(_setitem((slice(None), ROWS))),
    "setitem_mask": written(_setitem(MASK)),
    "setitem_mask_slice": written(_setitem((ROW_MASK, slice(1, 4)))),
    "index_put": _index_put((ROWS,), lambda x: x[1:].sin(), False),
    "index_put_mask": _index_put((ROW_MASK,), lambda x: x[:3].sin(), False),
    "index_put_accumulate": _index_put((ROWS,), lambda x: x[1:].sin(), True),
    # repeated rows add up under accumulate
    "index_put_accumulate_repeated": _index_put((REPEATED_ROWS,), lambda x: x[1:].cos(),
                                                True),
}


@pytest.fixture(params=[True, False], ids=["inlined", "subgraphs"])
def inlining(request):
    """Default JIT settings, and every differentiable node its own autodiff subgraph (so
    the backward of ``index`` runs as a ``prim::AutogradFormula``)."""
    previous = autodiff_subgraph_inlining()
    ember.jit.debug_set_autodiff_subgraph_inlining(request.param)
    yield request.param
    ember.jit.debug_set_autodiff_subgraph_inlining(previous)


def _inputs(seed=0):
    rng = np.random.default_rng(seed)
    return rng.standard_normal(SHAPE)


def _traced(fn):
    return E.jit.trace(fn, (E.tensor(_inputs(1)),))


def derivatives(fn, x_np, seed=2):
    """(y, dy/dx . go, and the grads of that w.r.t. x and go along w), all as float64
    numpy arrays; the second derivatives come from ``autograd.grad(create_graph=True)``."""
    rng = np.random.default_rng(seed)
    x = E.tensor(x_np, requires_grad=True)
    y = fn(x)
    go = E.tensor(rng.standard_normal(tuple(y.shape)), requires_grad=True)
    g, = E.autograd.grad(y, x, go, create_graph=True)
    w = E.tensor(rng.standard_normal(SHAPE))
    ggx, gggo = E.autograd.grad(g, (x, go), w, allow_unused=True)
    return [None if t is None else t.detach().numpy() for t in (y, g, ggx, gggo)]


@pytest.mark.parametrize("name", list(CASES))
def test_traced_first_and_second_derivatives_match_eager(name, inlining):
    fn = CASES[name]
    tf = _traced(fn)
    x = _inputs()
    for _ in range(2):  # the second run uses the executor's cached (optimized) plan
        got, want = derivatives(tf, x), derivatives(fn, x)
        for what, a, b in zip(("y", "grad", "grad of grad wrt x", "grad of grad wrt go"),
                              got, want):
            assert (a is None) == (b is None), what
            if a is not None:
                np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-10, err_msg=what)


@pytest.mark.parametrize("name", list(CASES))
def test_traced_gradgradcheck(name):
    tf = _traced(CASES[name])
    assert E.autograd.gradgradcheck(tf, (E.tensor(_inputs(), requires_grad=True),))


@pytest.mark.parametrize("name", list(CASES))
def test_eager_gradgradcheck(name):
    assert E.autograd.gradgradcheck(CASES[name], (E.tensor(_inputs(), requires_grad=True),))


def test_issue_example_double_backward():
    tf = E.jit.trace(lambda x: x[:, :3].tanh() * x[:, :3].sigmoid(), (E.randn(4, 5),))
    x = E.tensor(_inputs(), requires_grad=True)
    g, = E.autograd.grad(tf(x).sum(), x, create_graph=True)
    g.sum().backward()
    xe = E.tensor(_inputs(), requires_grad=True)
    ge, = E.autograd.grad((xe[:, :3].tanh() * xe[:, :3].sigmoid()).sum(), xe,
                          create_graph=True)
    ge.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), xe.grad.numpy(), rtol=1e-10, atol=1e-10)


def test_traced_setitem_mask_then_int_forward():
    """A mask covers mask.ndim dims: the traced write must put the int after them (the
    Tensor in the traced index is made an array first, or the kernel takes it for one
    dim)."""
    mask = E.tensor(np.random.default_rng(3).random((2, 3)) > 0.5)

    def fn(x):
        y = x * 1.0
        y[mask, 1] = 0.0
        return y
    x = E.tensor(np.random.default_rng(4).standard_normal((2, 3, 4)))
    np.testing.assert_array_equal(E.jit.trace(fn, (x,))(x).numpy(), fn(x).numpy())


def test_traced_index_put_method():
    def fn(x):
        y = x * 2.0
        y.index_put_((REPEATED_ROWS,), x[1:].cos(), accumulate=True)
        return y.tanh() * y.sigmoid()
    tf = _traced(fn)
    got, want = derivatives(tf, _inputs()), derivatives(fn, _inputs())
    for a, b in zip(got, want):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-10)


# ---- kernel_index: the one conversion between the two spellings -----------------------------
def test_kernel_index_keeps_a_kernel_tuple():
    idx = (slice(None), 1, None, Ellipsis, True, ROWS._data)
    assert _indexing.kernel_index(idx) is idx


def test_kernel_index_turns_a_traced_list_into_the_kernel_tuple():
    got = _indexing.kernel_index([slice(1, 3), None, MASK, 2])
    assert got.__class__ is tuple
    assert got[:2] == (slice(1, 3), None) and got[3] == 2
    assert got[2] is MASK._data
    mixed = _indexing.kernel_index((0, ROWS))  # a tuple holding a Tensor: converted too
    assert mixed.__class__ is tuple and mixed[0] == 0 and mixed[1] is ROWS._data


@pytest.mark.parametrize("bad", [slice(None), 3, "0", {0: 1}])
def test_kernel_index_rejects_what_is_not_a_normalized_index(bad):
    with pytest.raises(TypeError, match="expected a normalized index"):
        _indexing.kernel_index(bad)
