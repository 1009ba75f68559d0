"""The kernel forms of hot formulas (``ember/autograd/fast_formulas.py``) and the engine's
kernel-level sums: each runs only when nothing records, equals its ``derivatives.yaml``
formula bit for bit (the same kernels, in the same order), and the gradients they give
match numpy float64 references, gradcheck and gradgradcheck (create_graph takes the
formulas). Also the engine's fast paths: directly saved inputs, hook-free nodes."""
from __future__ import annotations

import numpy as np
import pytest

import ember as E
from ember.autograd import fast_formulas, gradcheck, gradgradcheck
from ember.autograd.function import Node
from helpers import FLOAT_DTYPES, LOW_FLOAT_DTYPES, assert_close, rand

DTYPES = FLOAT_DTYPES + LOW_FLOAT_DTYPES


def leaf(*shape, seed=0, dtype=E.float64):
    return rand(*shape, seed=seed, dtype=dtype, requires_grad=True)


# (op, inputs) -> a forward whose result's grad_fn holds that formula
FORWARDS = {
    ("tanh", ("self",)): lambda dt: leaf(3, 4, dtype=dt).tanh(),
    ("sigmoid", ("self",)): lambda dt: leaf(3, 4, dtype=dt).sigmoid(),
    ("matmul", ("self",)): lambda dt: leaf(3, 4, dtype=dt) @ leaf(4, 5, seed=1, dtype=dt),
    ("matmul", ("other",)): lambda dt: leaf(3, 4, dtype=dt) @ leaf(4, 5, seed=1, dtype=dt),
    ("mm", ("self",)): lambda dt: leaf(3, 4, dtype=dt).mm(leaf(4, 5, seed=1, dtype=dt)),
    ("mm", ("mat2",)): lambda dt: leaf(3, 4, dtype=dt).mm(leaf(4, 5, seed=1, dtype=dt)),
    ("sum", ("self",)): lambda dt: leaf(3, 4, dtype=dt).sum(),
    ("relu", ("self",)): lambda dt: leaf(3, 4, dtype=dt).relu(),
    ("mean", ("self",)): lambda dt: leaf(3, 4, dtype=dt).mean(),
    ("log_softmax", ("self",)): lambda dt: leaf(3, 4, dtype=dt).log_softmax(-1),
    ("gelu", ("self",)): lambda dt: E.nn.functional.gelu(leaf(3, 4, dtype=dt)),
    ("gather", ("self",)): lambda dt: leaf(3, 4, dtype=dt).gather(
        1, E.tensor([[0, 0], [3, 1], [2, 2]])),
    ("addmm", ("mat2",)): lambda dt: E.addmm(leaf(5, dtype=dt), leaf(3, 4, seed=1, dtype=dt),
                                             leaf(5, 4, seed=2, dtype=dt).t()),
    ("t", ("self",)): lambda dt: leaf(3, 4, dtype=dt).t(),
}

# the same formulas with a column-major mat2 (``linear``'s ``weight.t()``), the layout branch
COLUMN_MAJOR = {
    ("mm", ("mat2",)): lambda dt: leaf(3, 4, dtype=dt).mm(leaf(5, 4, seed=1, dtype=dt).t()),
    ("matmul", ("other",)): lambda dt: leaf(3, 4, dtype=dt) @ leaf(5, 4, seed=1, dtype=dt).t(),
}


# formulas whose kernel form serves only some dtypes (the rest decline: the formula runs)
ONLY = {("gelu", ("self",)): {E.float32}}

# each op's Tensor arguments, in order
INPUTS = {"tanh": ["self"], "sigmoid": ["self"], "matmul": ["self", "other"],
          "mm": ["self", "mat2"], "sum": ["self"], "relu": ["self"], "mean": ["self"],
          "log_softmax": ["self"], "gather": ["self"], "gelu": ["self"],
          "addmm": ["self", "mat1", "mat2"], "t": ["self"]}


TANH = fast_formulas.FAST[("tanh", ("self",))]  # derived from the formula


def test_every_kernel_formula_is_tested():
    assert set(fast_formulas.FAST) == set(FORWARDS)


def counted(monkeypatch, node, key):
    """Count the calls the generated ``node.apply`` makes to the kernel form of ``key``."""
    from ember.autograd.codegen import _fast_name
    name = _fast_name(key[0], key[1])
    fns = node.apply.__globals__
    real, calls = fns[name], []

    def spy(*args):
        out = real(*args)
        calls.append(out is not None)
        return out
    monkeypatch.setitem(fns, name, spy)
    return calls


CASES = [(k, f) for k, f in FORWARDS.items()] + [(k, f) for k, f in COLUMN_MAJOR.items()]


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("key,forward", CASES,
                         ids=[f"{k[0]}-{k[1][0]}{'-colmajor' if i >= len(FORWARDS) else ''}"
                              for i, (k, _) in enumerate(CASES)])
def test_kernel_form_equals_the_formula_bit_for_bit(monkeypatch, key, forward, dtype):
    y = forward(dtype)
    node = y.grad_fn
    pos = INPUTS[key[0]].index(key[1][0])
    grad = rand(*y.shape, seed=7, dtype=dtype)
    calls = counted(monkeypatch, node, key)
    with E.no_grad():
        fast = node.apply([grad])[pos]
    ran = dtype in ONLY.get(key, {dtype})
    assert calls == [ran]  # the kernel form ran (or declined a dtype it does not serve)
    with E.enable_grad():  # grad mode on: the kernel form declines, the formula runs
        slow = node.apply([grad])[pos]
    assert calls == [ran, False]
    assert fast.dtype is slow.dtype and tuple(fast.shape) == tuple(slow.shape)
    assert np.array_equal(fast._data, slow._data)
    assert fast._data.strides == slow._data.strides  # the same layout too
    assert fast.grad_fn is None and not fast.requires_grad


@pytest.mark.parametrize("key", list(COLUMN_MAJOR), ids=lambda k: k[0])
def test_a_column_major_mat2_gets_its_gradient_column_major(key):
    y = COLUMN_MAJOR[key](E.float64)
    pos = INPUTS[key[0]].index(key[1][0])
    with E.no_grad():
        g = y.grad_fn.apply([rand(*y.shape, seed=7, dtype=E.float64)])[pos]
    assert g._data.flags.f_contiguous and not g._data.flags.c_contiguous


def test_sum_gradient_is_a_view_of_the_incoming_one_as_expand_makes_it():
    x = leaf(2, 3)
    y = x.sum()
    g = E.tensor(2.0, dtype=E.float64)
    with E.no_grad():
        (gx,) = y.grad_fn.apply([g])
        ref = g.expand((2, 3))
    assert gx._base is g and gx._view_fn[1:] == ref._view_fn[1:]
    assert_close(gx, np.full((2, 3), 2.0))


# --- gradients against numpy float64 references -----------------------------------------

def mlp_reference(X, ws, bs):
    """Hand-written float64 forward and backward of sum(tanh layers), like the benchmark."""
    hs, pre = [X], []
    for i, (w, b) in enumerate(zip(ws, bs)):
        h = hs[-1] @ w + b
        pre.append(h)
        hs.append(np.tanh(h) if i < len(ws) - 1 else h)
    g = np.ones_like(hs[-1])
    gws, gbs = [None] * len(ws), [None] * len(ws)
    for i in reversed(range(len(ws))):
        if i < len(ws) - 1:
            g = g * (1 - hs[i + 1] ** 2)
        gws[i], gbs[i] = hs[i].T @ g, g.sum(0)
        g = g @ ws[i].T
    return gws, gbs


@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=str)
def test_mlp_gradients_match_numpy(dtype):
    X = rand(5, 4, seed=0, dtype=dtype)
    ws = [leaf(4, 6, seed=1, dtype=dtype), leaf(6, 6, seed=2, dtype=dtype),
          leaf(6, 3, seed=3, dtype=dtype)]
    bs = [leaf(6, seed=4, dtype=dtype), leaf(6, seed=5, dtype=dtype),
          leaf(3, seed=6, dtype=dtype)]
    h = X
    for i, (w, b) in enumerate(zip(ws, bs)):
        h = h @ w + b  # the bias gradient is summed by the engine's kernel-level sum_to
        if i < 2:
            h = h.tanh()
    h.sum().backward()
    f64 = [t._data.astype(np.float64) for t in ws + bs]
    gws, gbs = mlp_reference(X._data.astype(np.float64), f64[:3], f64[3:])
    for t, ref in zip(ws + bs, gws + gbs):
        assert_close(t.grad, ref)


def test_sigmoid_mm_and_a_leaf_used_twice_match_numpy():
    a, w = leaf(3, 4), leaf(4, 2, seed=1)
    y = (a.mm(w).sigmoid() * 2.0).sum() + (a * a).sum()  # a's two gradients are summed
    y.backward()
    A, W = a._data, w._data
    s = 1 / (1 + np.exp(-(A @ W)))
    g = 2.0 * s * (1 - s)
    assert_close(a.grad, g @ W.T + 2 * A)
    assert_close(w.grad, A.T @ g)


@pytest.mark.parametrize("dim,keepdim", [(None, False), ((1,), True), ((1,), False)])
def test_sum_gradient_for_every_dim_form(dim, keepdim):
    x = leaf(2, 3)
    y = x.sum() if dim is None else x.sum(dim, keepdim=keepdim)
    (y * 3.0).sum().backward()
    assert_close(x.grad, np.full((2, 3), 3.0))


@pytest.mark.parametrize("dtype", LOW_FLOAT_DTYPES, ids=str)
def test_low_precision_gradients_match_the_formulas(dtype):
    x, w, b = leaf(3, 4, dtype=dtype), leaf(4, 2, seed=1, dtype=dtype), leaf(2, seed=2,
                                                                           dtype=dtype)
    ((x @ w + b).tanh()).sum().backward(retain_graph=True)
    fast = [t.grad for t in (x, w, b)]
    for t in (x, w, b):
        t.grad = None
    with E.enable_grad():  # create_graph: every formula and the engine's sums as ops
        ((x @ w + b).tanh()).sum().backward(create_graph=True)
    for got, ref in zip(fast, (x.grad, w.grad, b.grad)):
        assert got.dtype is dtype and np.array_equal(got._data, ref._data)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_engine_sums_equal_the_ops_bit_for_bit(dtype):
    from ember.autograd.formulas import sum_to
    old, g = rand(4, 3, seed=1, dtype=dtype), rand(4, 3, seed=2, dtype=dtype)
    with E.no_grad():
        fast_sum, fast_sum_to = fast_formulas.accumulate(old, g), sum_to(g, (1, 3))
        assert fast_formulas.sum_to_kernels(g, 0, (0,)) is not None  # the kernel path ran
    ref_sum, ref_sum_to = old + g, g.sum((0,), keepdim=True)
    for got, ref in ((fast_sum, ref_sum), (fast_sum_to, ref_sum_to)):
        assert got.dtype is ref.dtype and np.array_equal(got._data, ref._data)
    with E.no_grad():
        got = sum_to(rand(2, 4, 3, dtype=dtype), (4, 1))
    ref = rand(2, 4, 3, dtype=dtype).sum((0,)).sum((1,), keepdim=True)
    assert np.array_equal(got._data, ref._data)


def test_nothing_is_computed_on_kernels_while_tracing(monkeypatch):
    from ember.jit.frontend import tracing_state
    g = rand(2, 2)
    monkeypatch.setattr(tracing_state.STATE, "active", 1)
    with E.no_grad():
        assert TANH(g, g) is None
        assert fast_formulas.sum_to_kernels(g, 1, ()) is None


def test_formulas_decline_what_they_cannot_match():
    g32, r64 = rand(2, 2, dtype=E.float32), rand(2, 2, dtype=E.float64)
    i64 = E.tensor([[1, 2], [3, 4]])
    with E.no_grad():
        assert TANH(g32, r64) is None  # the ops would promote
        assert fast_formulas.FAST[("relu", ("self",))](i64, i64) is None  # 0.0 would promote
        assert fast_formulas.matmul_self(g32, rand(2), rand(2)) is None  # 1-D operands
        assert fast_formulas.sum_self(g32, (2, 2), (0,), False) is None  # dims to restore
    assert TANH(g32, g32) is None  # grad mode on: the ops record


def test_mixed_dtype_and_1d_matmul_take_the_formulas():
    a, b = leaf(3, 4, dtype=E.float32), leaf(4, 2, seed=1)
    (a @ b).sum().backward()
    A, B = a._data.astype(np.float64), b._data
    assert a.grad.dtype is E.float32 and b.grad.dtype is E.float64
    assert_close(a.grad, np.ones((3, 2)) @ B.T)
    assert_close(b.grad, A.T @ np.ones((3, 2)))
    v, m = leaf(4), leaf(4, 3, seed=1)
    (v @ m).sum().backward()
    assert_close(v.grad, m._data.sum(1))


@pytest.mark.parametrize("fn,shapes", [
    (lambda a, b: (a @ b).tanh(), ((3, 4), (4, 2))),
    (lambda a, b: a.mm(b).sigmoid(), ((3, 4), (4, 2))),
    (lambda a, b: (a + b).sum(), ((3, 4), (4,))),
    (lambda a, b: (a * b + a).sum(), ((3,), (3,))),
])
def test_gradcheck_and_gradgradcheck(fn, shapes):
    args = tuple(leaf(*s, seed=i) for i, s in enumerate(shapes))
    assert gradcheck(fn, args)
    assert gradgradcheck(fn, args)


# --- the engine's fast paths -----------------------------------------------------------------

def test_directly_saved_input_still_checks_its_version_and_is_freed():
    a = leaf(3)
    b = leaf(3, seed=1) * 1.0
    y = a * b  # MulBackward0 keeps a and b themselves, with their versions
    with E.no_grad():
        b.mul_(2.0)
    with pytest.raises(RuntimeError, match=r"saved by MulBackward0 as 'other', is at version "
                                           r"1; expected version 0"):
        y.sum().backward()
    c = leaf(3, seed=2) * 1.0
    z = (a * c).sum()
    z.backward()
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        z.backward()


def test_a_node_without_trusted_arity_is_checked():
    class Short(Node):
        def apply(self, grads):
            return ()

    x = leaf(3)
    node = Short()
    node.next_functions = (E.autograd.function.gradient_edge(x),)
    node._out_meta = ((x._data.shape, x._type),)
    with pytest.raises(RuntimeError, match="incorrect number of gradients"):
        E.autograd.engine.run_backward([(node, 0)], [E.ones(3, dtype=E.float64)],
                                       retain_graph=False, create_graph=False)


def test_hooks_registered_after_creation_are_seen_and_removed():
    x = leaf(3)
    y = x * 2.0
    node = y.grad_fn
    assert node._hooks is None  # a generated node starts on the engine's fast path
    seen = []
    h = node.register_prehook(lambda go: seen.append("pre"))
    y.register_hook(lambda g: seen.append("tensor"))
    y.retain_grad()
    y.sum().backward(retain_graph=True)
    assert seen == ["tensor", "pre"] and y.grad is not None
    h.remove()
    y.sum().backward()
    assert seen == ["tensor", "pre", "tensor"]
    assert_close(x.grad, np.full(3, 4.0))
