"""TritonFuser end to end, through Triton's interpreter on CPU tensors (runs in CI).

Each test traces a function with a TritonFuser(interpret=True) registered for "cpu", so
FuseGraph forms FusionGroups on CPU graphs and the generated kernels run on the numpy
arrays; results are compared with ember's eager (unfused) ops, and with numpy in float64.
"""
import logging

import numpy as np
import pytest

import ember as E
import ember.nn.functional as F
from ember.jit.runtime import fuser as jit_fuser

from ember_triton_fuser import TritonFuser, cache, codegen
from helpers import backward_graphs

pytestmark = pytest.mark.triton_interpreter
RNG = np.random.default_rng(0)


@pytest.fixture
def fuser():
    f = TritonFuser("cpu", interpret=True)
    jit_fuser.clear_fusion_fallbacks()
    with jit_fuser.using_fuser("cpu", f):
        yield f


def tensor(*shape, dtype=np.float32, low=-2.0, high=2.0):
    return E.tensor(RNG.uniform(low, high, shape).astype(dtype))


def groups(traced, *args):
    g = traced.graph_for(*args)
    return [n for n in g.all_nodes() if n.kind == "prim::FusionGroup"]


def check(fn, *args, rtol=1e-5, atol=1e-6, num_groups=1):
    """Trace ``fn`` with the fuser, check the groups ran fused and match eager."""
    traced = E.jit.trace(fn, args, check_trace=False)
    got = traced(*args)
    assert len(groups(traced, *args)) == num_groups
    assert jit_fuser.fusion_fallbacks() == []
    want = fn(*args)
    got = got if isinstance(got, tuple) else (got,)
    want = want if isinstance(want, tuple) else (want,)
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and g.shape == w.shape
        gn, wn = g.numpy(), w.numpy()
        if gn.dtype.kind in "biu":
            np.testing.assert_array_equal(gn, wn)
        else:
            np.testing.assert_allclose(gn.astype(np.float64), wn.astype(np.float64),
                                       rtol=rtol, atol=atol)
    return traced


def chain10(x, y):
    a = x * 1.5 + y
    b = a.sigmoid() * x - 0.25
    c = b.tanh().abs() + y.exp()
    return c.sqrt() * a


def test_pointwise_chain_matches_numpy_float64(fuser):
    x, y = tensor(37, 19), tensor(37, 19)
    traced = check(chain10, x, y)
    a, b = x.numpy().astype(np.float64), y.numpy().astype(np.float64)
    t = a * 1.5 + b
    ref = np.sqrt(np.abs(np.tanh(1 / (1 + np.exp(-t)) * a - 0.25)) + np.exp(b)) * t
    np.testing.assert_allclose(traced(x, y).numpy(), ref, rtol=1e-5)


@pytest.mark.parametrize("xs, ys", [((4, 8), (8,)), ((3, 1, 5), (1, 4, 1)), ((6, 5), ()),
                                    ((2, 3, 4), (3, 1)), ((1,), (5, 1))])
def test_broadcasting(fuser, xs, ys):
    check(lambda x, y: ((x - y) * x).relu() + y, tensor(*xs), tensor(*ys))


def test_non_contiguous_and_offset_inputs(fuser):
    base = tensor(9, 12)
    x = base.t()                      # strides (1, 12)
    y = tensor(12, 20)[:, 3:12]        # an offset, strided view
    check(lambda a, b: (a * b).sin() - b, x, y)


def test_several_outputs(fuser):
    def fn(x, y):
        s = x + y
        return s.exp(), s * y, (s > 0.5)
    check(fn, tensor(5, 7), tensor(5, 7))


def lstm_cell(x, hx, cx, w_ih, w_hh, b):
    gates = x.mm(w_ih.t()) + hx.mm(w_hh.t()) + b
    i, f, g, o = gates.chunk(4, 1)
    cy = f.sigmoid() * cx + i.sigmoid() * g.tanh()
    return o.sigmoid() * cy.tanh(), cy


def test_lstm_cell_chunk(fuser):
    args = (tensor(3, 6), tensor(3, 5), tensor(3, 5), tensor(20, 6), tensor(20, 5),
            tensor(20))
    # one kernel: FuseGraph moved the chunk above the gate sums, so the kernel reads the
    # two matmul results and the bias chunked in four (the bias broadcast over the batch)
    traced = check(lstm_cell, *args, rtol=1e-5, atol=1e-6, num_groups=1)
    (group,) = groups(traced, *args)
    kinds = [n.kind for n in group.g("Subgraph").nodes()]
    assert kinds.count("prim::BroadcastingChunk") == 1 and "ember::chunk" not in kinds
    for batch in (1, 7):  # a new batch size: a new layout of the same kernel
        new = (tensor(batch, 6), tensor(batch, 5), tensor(batch, 5)) + args[3:]
        for got, want in zip(traced(*new), lstm_cell(*new)):
            np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-5, atol=1e-6)
    assert jit_fuser.fusion_fallbacks() == []


def test_pieces_are_pointer_offsets_after_the_first_call(fuser, monkeypatch):
    # a steady loop cuts no views: each piece is its input's pointer plus a byte offset
    from ember_triton_fuser.kernel import FusedKernel
    args = (tensor(3, 6), tensor(3, 5), tensor(3, 5), tensor(20, 6), tensor(20, 5),
            tensor(20))
    traced = E.jit.trace(lstm_cell, args, check_trace=False)
    traced(*args)

    def no_cutting(*a):
        raise AssertionError("pieces were cut again")
    monkeypatch.setattr(FusedKernel, "_arg_arrays", no_cutting)
    moved = args[:4] + (E.tensor(args[4].numpy().copy()), args[5])  # new memory
    for got, want in zip(traced(*moved), lstm_cell(*moved)):
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("bias_shape", [(1, 8), (3, 1), (8,), ()])
def test_broadcasting_chunk_of_a_computed_value(fuser, bias_shape):
    # the bias broadcasts along the batch, along the chunked dim, or is 0-d (same dtype)
    def fn(x, y, b):
        a, c = (x * y + b).chunk(2, 1)
        return a.tanh() * c.sigmoid()
    traced = check(fn, tensor(3, 8), tensor(3, 8), tensor(*bias_shape))
    kinds = [n.kind for n in groups(traced, tensor(3, 8), tensor(3, 8),
                                    tensor(*bias_shape))[0].g("Subgraph").nodes()]
    assert "prim::BroadcastingChunk" in kinds


def test_split_and_split_sizes(fuser):
    x = tensor(7, 6)
    check(lambda t: (lambda a, b: a.exp().sum(-1, keepdim=True) * b.cos())(*t.split([3, 3], 1)),
          x)
    check(lambda t: (lambda a, b: a.exp() - b)(*t.split(3, 1)), x)


def test_softmax_and_log_softmax(fuser):
    x = tensor(6, 37)
    check(lambda t: F.softmax(t * 2, -1) + 1, x)
    check(lambda t: F.log_softmax(t - 1, -1) * 2, x)


def test_manual_softmax_with_reductions(fuser):
    def fn(x):
        e = (x - x.amax(-1, keepdim=True)).exp()
        return e / e.sum(-1, keepdim=True)
    x = tensor(5, 3, 11)
    got = check(fn, x)(x).numpy().astype(np.float64)
    a = x.numpy().astype(np.float64)
    e = np.exp(a - a.max(-1, keepdims=True))
    np.testing.assert_allclose(got, e / e.sum(-1, keepdims=True), rtol=1e-5)


def test_layer_norm_decomposed_into_one_group(fuser):
    x, w, b = tensor(7, 24), tensor(24), tensor(24)
    check(lambda t, w, b: F.layer_norm(t, (24,), w, b) * 2, x, w, b, rtol=1e-4, atol=1e-5)


def test_reductions_keepdim_false_output_and_nan(fuser):
    x = tensor(4, 9)
    x.numpy()[1, 3] = np.nan

    def fn(t):
        s = t * 2
        return s.sum(-1), s.amin(-1, keepdim=True) + s.mean(-1, keepdim=True), s.amax(-1)
    check(fn, x)


def test_reduction_of_broadcast_value(fuser):
    # the reduced value is (R, 1): the "narrow" path of the row kernel
    check(lambda x, m: (x * m.exp()).sum(-1, keepdim=True) + (m * 2).sum(-1, keepdim=True),
          tensor(4, 6), tensor(4, 1))


@pytest.mark.parametrize("dtype", [np.float16, "bfloat16", np.float64])
def test_float_dtypes(fuser, dtype):
    if dtype == "bfloat16":
        x, y = tensor(8, 9).to(E.bfloat16), tensor(8, 9).to(E.bfloat16)
        tol = dict(rtol=2e-2, atol=2e-2)
    else:
        x, y = tensor(8, 9, dtype=dtype), tensor(8, 9, dtype=dtype)
        tol = dict(rtol=2e-3, atol=2e-3) if dtype == np.float16 else dict(rtol=1e-12)
    check(lambda a, b: (a * b + 0.5).sigmoid() - b, x, y, **tol)
    check(lambda a: F.softmax(a, -1) * 3, x, **tol)


@pytest.mark.parametrize("dtype", [np.int8, np.int16, np.int32, np.int64, np.uint8])
def test_integer_dtypes(fuser, dtype):
    x = E.tensor(RNG.integers(1, 50, (6, 7)).astype(dtype))
    y = E.tensor(RNG.integers(1, 9, (6, 7)).astype(dtype))
    check(lambda a, b: ((a * b + 3) // 3) % 7 + (a & b), x, y)
    # by a tensor, eager raises ZeroDivisionError for a 0 in it: that node stays out, and
    # the ops before and after it form a group each
    check(lambda a, b: ((a * b + 3) // b) % 7 + (a & b), x, y, num_groups=2)
    with pytest.raises(RuntimeError, match="ZeroDivisionError"):
        E.jit.trace(lambda a, b: (a * b + 3) // b * 2, (x, y), check_trace=False)(x, y * 0)
    check(lambda a, b: (a > b) | (a == 3), x, y)
    check(lambda a, b: (a * b).sum(-1, keepdim=True) + a, x, y)


def test_bool_and_promotion(fuser):
    a = E.tensor(RNG.integers(0, 2, (5, 6)).astype(bool))
    x = E.tensor(RNG.integers(-4, 4, (5, 6)).astype(np.int32))
    y = tensor(5, 6)
    check(lambda m, i, f: E.where(m, i * 2, f) + (i > 0).logical_xor(m), a, x, y)
    check(lambda i, f: (i + f) * 0.5 + i / 3, x, y)


def activations(x, y):
    a = F.softplus(x, 2.0, 10.0) + F.mish(y) - F.selu(x) * F.hardswish(y)
    b = F.celu(a, 0.5) + F.logsigmoid(x) * F.softsign(y) - F.tanhshrink(a)
    return (F.softshrink(b, 0.3) + F.hardshrink(a, 0.2) + F.threshold(b, 0.1, -1.0)
            + F.hardsigmoid(x))


def special_functions(x, y, w):
    a = E.xlogy(x.abs(), y.abs()) + E.logaddexp(x, y) - E.logaddexp2(x, w)
    b = E.copysign(a, y) * E.fmax(x, w) - E.fmin(y, w) + E.addcmul(a, x, y, value=0.5)
    c = E.addcdiv(b, x, w + 3, value=-2) + E.logit(w, 1e-3) + E.asinh(a) + E.erfc(x) \
        + E.frac(b)
    flags = (E.isfinite(c) & ~E.signbit(x)) | E.isnan(y) | E.isinf(b)
    d = c.clip(-5, 5) + E.square(x) - E.absolute(y)
    return d, flags, E.float_power(d, w) * 0.5


def test_special_functions_and_activations_fuse(fuser):
    # the ops the tracer records as one node each (composites included) form one group
    x, y, w = tensor(6, 7), tensor(6, 7), tensor(6, 7, low=0.0, high=1.0)
    check(activations, x, y)
    traced = check(special_functions, x, y, w, rtol=1e-5, atol=1e-5)
    (group,) = groups(traced, x, y, w)
    kinds = {n.kind for n in group.g("Subgraph").nodes()}
    assert {"ember::logaddexp", "ember::isfinite", "ember::clip", "ember::float_power",
            "ember::square"} <= kinds
    # a float16 product the kernel holds in float32 is inf where eager's overflows
    h = tensor(4, 5).to(E.float16)
    assert E.isinf(h * 40000.0).any() and not E.isinf(h * 40000.0).all()
    check(lambda a: (E.isinf(a * 40000.0) | E.isposinf(-a), E.isfinite(a * 40000.0)), h)


def test_backward_through_special_functions_and_activations(fuser):
    def fn(x, y):
        return (F.softplus(x) * E.logaddexp(x, y) + F.mish(y) * E.xlogy(y.abs(), x.abs())).tanh()
    args = [tensor(5, 6), tensor(5, 6)]
    for a in args:
        a.requires_grad_()
    traced = E.jit.trace(fn, tuple(args), check_trace=False)
    for _ in range(2):      # the second call runs the optimized plan's backward too
        traced(*args).sum().backward()
    fused_grads = [a.grad.numpy().copy() for a in args]
    for a in args:
        a.grad = None
    for _ in range(2):
        fn(*args).sum().backward()
    for g, a in zip(fused_grads, args):
        np.testing.assert_allclose(g, a.grad.numpy(), rtol=1e-4, atol=1e-5)
    assert jit_fuser.fusion_fallbacks() == []


@pytest.mark.parametrize("dim", [0, 1, -1])
def test_fused_concat_of_computed_pieces(fuser, dim):
    fn = lambda x, y: E.cat([(x * y).sigmoid(), (x - y).tanh(), x * y], dim)  # noqa: E731
    traced = check(fn, tensor(3, 5), tensor(3, 5))
    (group,) = groups(traced, tensor(3, 5), tensor(3, 5))
    assert [n.kind for n in group.g("Subgraph").nodes()][-1] == "prim::FusedConcat"
    for rows in (1, 6):     # another batch size: the same kernel, a new layout
        x, y = tensor(rows, 5), tensor(rows, 5)
        np.testing.assert_allclose(traced(x, y).numpy(), fn(x, y).numpy(), rtol=1e-6)
    assert jit_fuser.fusion_fallbacks() == []


def test_fused_concat_copies_input_pieces_and_repeats(fuser):
    def fn(x, y):
        s = x.sigmoid()
        return E.cat([s, y, s, x], 1)
    check(fn, tensor(4, 3), tensor(4, 3))


def test_fused_concat_promotes_and_casts_each_piece(fuser):
    # a float16 piece and a float32 piece: cat's result is float32
    fn = lambda h, x: E.cat([h.exp(), x.sigmoid(), h], 0)  # noqa: E731
    check(fn, tensor(2, 8, dtype=np.float16), tensor(2, 8), rtol=2e-3, atol=1e-3)
    ints = lambda i, j: E.cat([i * j, i + j], 1)  # noqa: E731
    check(ints, E.tensor(RNG.integers(-9, 9, (3, 4)).astype(np.int32)),
          E.tensor(RNG.integers(-9, 9, (3, 4)).astype(np.int32)))


def test_fused_concat_of_broadcast_pieces(fuser):
    # pieces (4, 1) and (4, 6): the first is stored once per row, whatever the walk
    fn = lambda a, b: E.cat([a.exp(), (a * b).tanh()], 1)  # noqa: E731
    check(fn, tensor(4, 1), tensor(4, 6))


@pytest.mark.parametrize("dim", [0, -1])
def test_fused_concat_in_a_row_kernel(fuser, dim):
    fn = lambda x: E.cat([F.softmax(x, -1), F.log_softmax(x, -1)], dim)  # noqa: E731
    check(fn, tensor(5, 7))


def test_fused_concat_shape_mismatch_raises_cats_error(fuser):
    fn = lambda x, y: E.cat([x.exp() * 2, y.tanh() * 2], 0)  # noqa: E731
    traced = E.jit.trace(fn, (tensor(3, 4), tensor(2, 4)), check_trace=False)
    with pytest.raises(Exception, match=r"cat\(\): sizes of tensors must match"):
        traced(tensor(3, 4), tensor(2, 5))
    # pieces of different row counts are right too, run unfused: one kernel walks one
    # shape (as PyTorch's FusedConcat, whose pieces share one size)
    jit_fuser.clear_fusion_fallbacks()
    x, y = tensor(3, 4), tensor(2, 4)
    np.testing.assert_allclose(traced(x, y).numpy(), fn(x, y).numpy(), rtol=1e-6)
    (record,) = jit_fuser.fusion_fallbacks()
    assert "do not broadcast" in record.reason


@pytest.mark.parametrize("a, b, fuses", [("Float(2, 4)", "Float(3, 4)", False),
                                         ("Float(2, 4)", "Float(2, 4, 1)", False),
                                         ("Float(*, 4)", "Float(3, 4)", True),
                                         ("Float(2, 4)", "Float(2, 4)", True)])
def test_fused_concat_of_pieces_known_to_differ_is_refused(a, b, fuses):
    from ember.jit.ir.parser import parse_ir
    from ember_triton_fuser.lowering import can_lower_node
    g = parse_ir(f"""graph(%a : {a}, %b : {b}):
  %c : Float(*, *) = prim::FusedConcat[dim=0](%a, %b)
  return (%c)""")
    (node,) = g.nodes()
    reason = can_lower_node(node)
    assert (reason is None) == fuses, reason
    assert fuses or "one kernel walks one shape" in reason


def test_kernels_are_cached_across_batch_sizes(fuser):
    traced = E.jit.trace(chain10, (tensor(4, 8), tensor(4, 8)), check_trace=False)
    traced(tensor(4, 8), tensor(4, 8))
    before = cache.stats()
    for rows in (5, 16, 3, 33):
        x, y = tensor(rows, 8), tensor(rows, 8)
        np.testing.assert_allclose(traced(x, y).numpy(), chain10(x, y).numpy(), rtol=1e-5)
    after = cache.stats()
    assert after.entries == before.entries and after.misses == before.misses
    assert after.hits >= before.hits + 4


def test_debug_env_prints_source(fuser, monkeypatch, capfd):
    cache.clear()
    monkeypatch.setenv("EMBER_FUSION_DEBUG", "1")
    traced = E.jit.trace(lambda x: (x * 3).cos() + x, (tensor(3, 3),), check_trace=False)
    traced(tensor(3, 3))
    err = capfd.readouterr().err
    assert "@triton.jit" in err and "tl.store" in err and "ember::cos" in err


def test_compile_failure_falls_back_with_reason(fuser, monkeypatch, caplog):
    from ember_triton_fuser import fuser as fuser_module

    def broken(subgraph):
        raise RuntimeError("codegen exploded")
    monkeypatch.setattr(fuser_module, "lower_subgraph", broken)
    x, y = tensor(4, 5), tensor(4, 5)
    with caplog.at_level(logging.WARNING, logger="ember.jit.fuser"):
        traced = E.jit.trace(chain10, (x, y), check_trace=False)
        np.testing.assert_allclose(traced(x, y).numpy(), chain10(x, y).numpy(), rtol=1e-6)
    [record] = jit_fuser.fusion_fallbacks()
    assert record.fuser == "triton" and "codegen exploded" in record.reason
    assert "codegen exploded" in caplog.text
    assert record in traced.get_debug_state()["fusion_fallbacks"]


def test_declined_group_runs_unfused(fuser, monkeypatch):
    from ember.jit.runtime.fuser import FusionDeclined
    from ember_triton_fuser import fuser as fuser_module

    def declines(subgraph):
        raise FusionDeclined("not today")
    monkeypatch.setattr(fuser_module, "lower_subgraph", declines)
    x, y = tensor(4, 5), tensor(4, 5)
    traced = E.jit.trace(chain10, (x, y), check_trace=False)
    np.testing.assert_allclose(traced(x, y).numpy(), chain10(x, y).numpy(), rtol=1e-6)
    [record] = jit_fuser.fusion_fallbacks()
    assert record.reason == "declined: not today"


def test_row_too_wide_runs_unfused_for_that_call(fuser, monkeypatch):
    monkeypatch.setattr(codegen, "MAX_BLOCK_C", 8)
    fn = lambda t: F.softmax(t * 2, -1)  # noqa: E731
    traced = E.jit.trace(fn, (tensor(3, 4),), check_trace=False)
    np.testing.assert_allclose(traced(tensor(3, 4)).numpy().sum(-1), 1, rtol=1e-6)
    wide = tensor(3, 20)
    np.testing.assert_allclose(traced(wide).numpy(), fn(wide).numpy(), rtol=1e-6)
    [record] = jit_fuser.fusion_fallbacks()
    assert "do not fit one block" in record.reason


def test_shape_mismatch_raises_eager_error_and_keeps_the_kernel(fuser):
    fn = lambda a, b: (a + b).exp() * a  # noqa: E731
    traced = E.jit.trace(fn, (tensor(3, 4), tensor(3, 4)), check_trace=False)
    with pytest.raises(Exception, match="shapes do not broadcast") as fused:
        traced(tensor(3, 4), tensor(5, 4))
    # a new size is first checked by tracing again, so the error is eager's own, raised at
    # the user's line before any kernel runs (jit/frontend/shape_guards.py)
    assert type(fused.value).__name__ == "ShapeError"
    x, y = tensor(3, 4), tensor(3, 4)
    np.testing.assert_allclose(traced(x, y).numpy(), fn(x, y).numpy(), rtol=1e-6)
    kernels = [r for r in jit_fuser.fusion_fallbacks() if "kernel failed" in r.reason]
    assert kernels == []


def test_backward_through_fused_groups(fuser):
    args = [tensor(3, 6), tensor(3, 5), tensor(3, 5), tensor(20, 6), tensor(20, 5),
            tensor(20)]
    for a in args:
        a.requires_grad_()
    traced = E.jit.trace(lstm_cell, tuple(args), check_trace=False)
    for _ in range(2):      # the second call runs the optimized plan's backward too
        hy, cy = traced(*args)
        (hy.sum() + (cy * cy).sum()).backward()
    fused_grads = [a.grad.numpy().copy() for a in args]
    for a in args:
        a.grad = None
    for _ in range(2):
        hy, cy = lstm_cell(*args)
        (hy.sum() + (cy * cy).sum()).backward()
    for g, a in zip(fused_grads, args):
        np.testing.assert_allclose(g, a.grad.numpy(), rtol=1e-4, atol=1e-5)
    assert jit_fuser.fusion_fallbacks() == []
    # the forward is one kernel: the metas backward reads no longer split the groups
    forward = [n for n in traced.graph_for(*args).all_nodes()
               if n.kind == "prim::DifferentiableGraph"]
    assert len(forward) == 1
    assert sum(n.kind == "prim::FusionGroup" for n in forward[0].g("Subgraph").nodes()) == 1
    # and so is the backward: its two sibling groups and the cat of the gate gradients
    # became one group ending in prim::FusedConcat
    backward = backward_graphs(traced)
    assert backward
    for g in backward:
        (group,) = [n for n in g.nodes() if n.kind == "prim::FusionGroup"]
        assert list(group.g("Subgraph").nodes())[-1].kind == "prim::FusedConcat"
        assert not any(n.kind == "ember::cat" for n in g.nodes())


def test_fuser_requires_interpret_off_cuda():
    with pytest.raises(ValueError, match="interpret=True"):
        TritonFuser("cpu")


def test_interpret_needs_the_interpreter_on_at_import(monkeypatch):
    import triton.language as tl

    class Compiled:
        pass
    monkeypatch.setattr(tl, "max", Compiled())
    with pytest.raises(RuntimeError, match="TRITON_INTERPRET=1"):
        TritonFuser("cpu", interpret=True)


# ---- on a GPU: the same kernels compiled by Triton, on CuPy memory ------------------------
GPU_CASES = [
    ("chain10", chain10, [(37, 19), (37, 19)]),
    ("broadcast", lambda x, y: ((x - y) * x).relu() + y, [(3, 1, 5), (1, 4, 1)]),
    ("transposed", lambda a, b: (a * b.t()).sin() - a, [(9, 12), (12, 9)]),
    ("lstm_cell", lstm_cell, [(64, 32), (64, 16), (64, 16), (64, 32), (64, 16), (64,)]),
    ("softmax", lambda t: F.softmax(t * 2, -1) + 1, [(6, 37)]),
    ("layer_norm", lambda t, w, b: F.layer_norm(t, (24,), w, b) * 2, [(7, 24), (24,), (24,)]),
]


@pytest.mark.cuda
@pytest.mark.parametrize("name, fn, shapes", GPU_CASES, ids=[c[0] for c in GPU_CASES])
def test_gpu_kernels_match_eager(name, fn, shapes):
    if not E.cuda.is_available():
        pytest.skip("no CUDA device")
    args = tuple(tensor(*s).to("cuda") for s in shapes)
    jit_fuser.clear_fusion_fallbacks()
    cache.clear()
    traced = E.jit.trace(fn, args, check_trace=False)
    got = traced(*args)
    got = got if isinstance(got, tuple) else (got,)
    want = fn(*args)
    want = want if isinstance(want, tuple) else (want,)
    assert jit_fuser.fusion_fallbacks() == [] and cache.stats().entries >= 1
    for g, w in zip(got, want):
        np.testing.assert_allclose(g.cpu().numpy(), w.cpu().numpy(), rtol=1e-4, atol=1e-5)


@pytest.mark.cuda
@pytest.mark.parametrize("dtype", [E.float16, E.bfloat16, E.float64, E.int32, E.bool_])
def test_gpu_dtypes(dtype):
    if not E.cuda.is_available():
        pytest.skip("no CUDA device")
    x = tensor(33, 65, low=0.5).to("cuda").to(dtype)
    y = tensor(33, 65, low=0.5).to("cuda").to(dtype)
    if dtype == E.bool_:
        fn = lambda a, b: (a & b) | (a ^ b).logical_not()  # noqa: E731
    elif dtype == E.int32:
        fn = lambda a, b: (a * b + 3) // (b + 1) - a % 5  # noqa: E731
    else:
        fn = lambda a, b: (a * b + 0.5).sigmoid() - b.exp()  # noqa: E731
    traced = E.jit.trace(fn, (x, y), check_trace=False)
    got, want = traced(x, y).cpu().numpy(), fn(x, y).cpu().numpy()
    tol = 2e-2 if dtype in (E.float16, E.bfloat16) else 1e-6
    np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64), rtol=tol,
                               atol=tol)
