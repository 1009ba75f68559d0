"""The blocked engine against whole-array numpy: blocks and tails, outputs, where, cast,
call, reductions, ``out=``, scratch reuse, threads, and the errors it raises."""
from __future__ import annotations

import threading
import types
import warnings

import ml_dtypes
import numpy as np
import pytest

from ember import parallel
from ember.backends.elementwise import BlockedKernel, EngineError, Program, compile_program
from ember.backends.elementwise.engine import BLOCK_ELEMENTS

B = 16  # a small block: boundaries at small sizes


def chain(out_dtype="float32") -> Program:
    """``tanh(x * y + 1) - x`` on float32 ``x`` and float16 ``y`` (cast to float32)."""
    prog = Program("chain")
    x, y = prog.input("float32"), prog.input("float16")
    t = prog.ufunc("multiply", x, prog.cast(y, "float32"))
    t = prog.ufunc("tanh", prog.ufunc("add", t, 1.0))
    prog.output(prog.ufunc("subtract", t, x), dtype=out_dtype)
    return prog


def data(shape, dtype="float32", seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


@pytest.mark.parametrize("n", [B - 1, B, B + 1, 3 * B + 7])
@pytest.mark.parametrize("layout", ["flat", "broadcast", "strided", "2d"])
def test_block_boundaries(numpy_reference, assert_same, n, layout):
    prog = chain()
    x, y = data(n), data(n, "float16", 1)
    if layout == "broadcast":
        x, y = data((3, n)), data((n,), "float16", 1)
    elif layout == "strided":
        x = data(2 * n)[::2]
    elif layout == "2d":
        x, y = data((n, 5)).T, data((5, n), "float16", 1)
    kernel = compile_program(prog, block_elements=B)
    (got,) = kernel(*[x, y])
    assert_same(got, numpy_reference(prog, [x, y])[0])
    assert got.flags.c_contiguous


@pytest.mark.parametrize("n_rows", [1, 3, 4, 13])
@pytest.mark.parametrize("row", [1, 5, B, B + 3, 3 * B + 7])
def test_last_reductions_keep_whole_rows(numpy_reference, assert_same, n_rows, row):
    prog = Program("rows")
    x = prog.input("float32")
    e = prog.ufunc("exp", x)
    prog.output(e)
    for kind in ("sum", "mean", "amax", "amin"):
        prog.output(prog.reduce(kind, e, dims="last"))
    x = data((n_rows, row))
    got = compile_program(prog, block_elements=B)(x)
    want = numpy_reference(prog, [x])
    for g, w in zip(got, want):  # rows lie whole in a block: numpy's own row reduction
        assert_same(g, w)


def test_several_outputs_inputs_and_dead_code(numpy_reference, assert_same):
    prog = Program("outs")
    x, y = prog.input("float32"), prog.input("float64")
    u = prog.ufunc("sin", x)
    prog.ufunc("exp", u)  # dead: reaches no output
    for v, dt in [(u, None), (u, "float16"), (u, None), (y, None), (x, "float64"),
                  (y, "float32")]:
        prog.output(v, dtype=dt)
    kernel = compile_program(prog, block_elements=B)
    assert "exp" not in kernel.explain() and "sin" in kernel.explain()
    a, b = data((4, 9)), data((1, 9), "float64", 2)
    got = kernel(a, b)
    assert len(got) == 6 and len({id(g) for g in got}) == 6
    for g, w in zip(got, numpy_reference(prog, [a, b])):
        assert_same(g, w)


def test_where_with_scalars_and_values(numpy_reference, assert_same):
    prog = Program("where")
    x, m = prog.input("float32"), prog.input("bool")
    pos = prog.ufunc("greater", x, 0)
    prog.output(prog.where(pos, x, 0.0))                      # relu
    prog.output(prog.where(m, -1, 2.5, dtype="float16"))      # two constants
    prog.output(prog.where(m, x, prog.ufunc("negative", x), dtype="float64"))
    a = data((5, 7))
    a[0, :3] = [np.nan, -0.0, np.inf]
    mask = np.random.default_rng(3).random((1, 7)) < 0.5
    for g, w in zip(compile_program(prog, block_elements=B)(a, mask),
                    numpy_reference(prog, [a, mask])):
        assert_same(g, w)


def test_call_runs_per_block_and_casts(numpy_reference, assert_same):
    calls = []

    def erf_like(v, scale):  # returns float64 for a float32 block: cast on store
        calls.append(v.shape)
        return np.tanh(v.astype(np.float64) * scale)

    prog = Program("call")
    x = prog.input("float32")
    c = prog.call(erf_like, prog.ufunc("multiply", x, 2.0), 0.5, dtype="float32")
    k = prog.call(lambda: np.float32(3.0), dtype="float32")   # a scalar: broadcast
    prog.output(prog.ufunc("add", c, k))
    a = data(3 * B + 7)
    got = compile_program(prog, block_elements=B)(a)
    assert calls == [(B,)] * 3 + [(7,)]
    calls.clear()
    assert_same(got[0], numpy_reference(prog, [a])[0])


def test_call_returning_its_argument_keeps_it_alive(numpy_reference, assert_same):
    prog = Program("alias")
    x = prog.input("float32")
    u = prog.ufunc("exp", x)
    c = prog.call(lambda v: v, u, dtype="float32")        # a view of u's register
    v = prog.ufunc("add", x, 1.0)                         # would reuse u's register
    prog.output(prog.ufunc("multiply", c, v))
    a = data(2 * B)
    assert_same(compile_program(prog, block_elements=B)(a)[0],
                numpy_reference(prog, [a])[0])


@pytest.mark.parametrize("kind", ["sum", "mean", "amax", "amin"])
@pytest.mark.parametrize("dims", ["last", "all"])
@pytest.mark.parametrize("keepdim", [False, True])
@pytest.mark.parametrize("shape", [(), (7,), (3, 5), (2, 3, 4), (40, 9)])
def test_reductions_against_float64(numpy_reference, kind, dims, keepdim, shape):
    prog = Program("reduce")
    x, y = prog.input("float16"), prog.input("float32")
    v = prog.ufunc("multiply", prog.cast(x, "float32"), y)
    prog.output(prog.reduce(kind, v, dims=dims, keepdim=keepdim))
    prog.output(prog.reduce(kind, y, dims=dims, keepdim=keepdim, dtype="float64"),
                dtype="float16")  # an input reduced directly, stored with a cast
    a, b = data(shape, "float16"), data(shape[-1:], "float32", 1)  # b broadcasts
    got = compile_program(prog, block_elements=B)(a, b)
    want = numpy_reference(prog, [a, b], float64_reductions=True)
    for g, w in zip(got, want):
        assert g.shape == w.shape and g.dtype == w.dtype
        if kind in ("amax", "amin"):
            np.testing.assert_array_equal(g, w)
        else:
            np.testing.assert_allclose(g, w, rtol=2e-3 if g.dtype == np.float16 else 1e-5,
                                       atol=1e-5 * max(1, np.prod(shape)))


@pytest.mark.parametrize("dims", ["last", "all"])
def test_amax_amin_propagate_nan(dims):
    prog = Program("nan")
    x = prog.input("float32")
    prog.output(prog.reduce("amax", x, dims=dims))
    prog.output(prog.reduce("amin", x, dims=dims))
    a = data((6, 3 * B))
    a[2, 5] = np.nan
    hi, lo = compile_program(prog, block_elements=B)(a)
    if dims == "all":
        assert np.isnan(hi) and np.isnan(lo)
    else:
        assert np.isnan(hi[2]) and np.isnan(lo[2])
        np.testing.assert_array_equal(np.delete(hi, 2), np.delete(a.max(-1), 2))


def test_out_arrays_are_filled_and_returned(numpy_reference, assert_same):
    prog = chain()
    prog.output(prog.reduce("sum", prog.steps[-1].value, dims="last", keepdim=True))
    a, b = data((9, 11)), data((9, 11), "float16", 1)
    out0 = np.empty((11, 9), np.float32).T          # non-contiguous
    out1 = np.empty((9, 3), np.float32)[:, 1:2]     # non-contiguous keepdim column
    got = compile_program(prog, block_elements=B)(a, b, out=[out0, out1])
    assert got[0] is out0 and got[1] is out1
    want = numpy_reference(prog, [a, b])
    assert_same(out0, want[0])
    np.testing.assert_allclose(out1, want[1], rtol=1e-6)
    fresh = compile_program(prog, block_elements=B)(a, b, out=[None, out1])
    assert fresh[1] is out1 and fresh[0].flags.c_contiguous


def test_out_aliasing_an_input(numpy_reference, assert_same):
    prog = Program("inplace")
    x = prog.input("float32")
    t = prog.ufunc("multiply", x, 2.0)                   # written into out when direct
    prog.output(prog.ufunc("add", t, prog.ufunc("multiply", x, x)))
    kernel = compile_program(prog, block_elements=B)
    a = data(5 * B + 3)
    want = numpy_reference(prog, [a])[0]
    kernel(a, out=[a])                                   # x.op_(): element for element
    assert_same(a, want)
    base = data(5 * B + 4)
    src, dst = base[1:], base[:-1]                       # shifted: the input is copied
    want = numpy_reference(prog, [src.copy()])[0]
    kernel(src, out=[dst])
    assert_same(dst, want)


def test_scratch_is_reused_across_calls(num_threads):
    num_threads(1)
    kernel = compile_program(chain(), block_elements=B)
    kernel(data(5 * B), data(5 * B, "float16"))
    first = kernel.scratch_buffers()
    assert list(first) == [(B,)] and len(first[(B,)]) == 1
    bufs = first[(B,)][0]
    assert bufs and all(b.shape == (B,) for b in bufs)
    kernel(data(7 * B + 3), data(7 * B + 3, "float16"))  # other size, same block, a tail
    again = kernel.scratch_buffers()[(B,)][0]
    assert all(a is b for a, b in zip(again, bufs))
    kernel(data((4, 10)), data(10, "float16"))              # a broadcast: rows of 10
    shapes = kernel.scratch_buffers()
    assert set(shapes) == {(B,), (1, 10)}
    assert all(a is b for a, b in zip(shapes[(B,)][0], bufs))


def test_threads_give_bit_identical_results(num_threads, monkeypatch):
    prog = chain()
    e = prog.steps[-1].value
    prog.output(prog.reduce("sum", e, dims="all"))
    prog.output(prog.reduce("mean", e, dims="last", keepdim=True))
    kernel = compile_program(prog, block_elements=64)
    a, b = data((61, 97)), data((61, 97), "float16", 1)
    c = np.asfortranarray(a)                                  # the general path too
    num_threads(1)
    one = kernel(a, b) + kernel(c, b)
    runs = []
    real = parallel.parallel_for
    monkeypatch.setattr(parallel, "parallel_for",
                        lambda fn, n, threads=None: (runs.append(n), real(fn, n, threads)))
    num_threads(2)
    two = kernel(a, b) + kernel(c, b)
    assert runs == [2, 2]
    assert len(kernel.scratch_buffers()[(1, 97)]) == 2        # one scratch set a thread
    for p, q in zip(one, two):
        assert p.tobytes() == q.tobytes()


@pytest.mark.parametrize("threads", [1, 2])
def test_default_block_on_a_broadcast(numpy_reference, assert_same, num_threads, threads):
    num_threads(threads)
    prog = chain()
    prog.output(prog.reduce("amax", prog.steps[-1].value, dims="last", keepdim=True))
    a, b = data((300, 400)), data(400, "float16", 1)      # 8 blocks of 40 rows
    got = compile_program(prog)(a, b)
    for g, w in zip(got, numpy_reference(prog, [a, b])):
        assert_same(g, w)


def test_more_threads_than_blocks(num_threads, assert_same):
    kernel = compile_program(chain(), block_elements=B)
    a, b = data(5 * B - 1), data(5 * B - 1, "float16", 1)   # 5 blocks
    num_threads(1)
    (one,) = kernel(a, b)
    num_threads(8)
    (eight,) = kernel(a, b)
    assert_same(one, eight)
    assert len(kernel.scratch_buffers()[(B,)]) == 5          # only threads with blocks


def test_kernel_inside_a_parallel_task_runs_serially(num_threads):
    num_threads(2)
    kernel = compile_program(chain(), block_elements=B)
    arrays = [(data(9 * B, seed=i), data(9 * B, "float16", i + 9)) for i in range(4)]
    results = [None] * 4

    def task(i):
        results[i] = kernel(*arrays[i])[0]
    parallel.parallel_for(task, 4)
    for (a, b), r in zip(arrays, results):
        np.testing.assert_array_equal(r, kernel(a, b)[0])


def test_concurrent_calls_from_python_threads(num_threads):
    num_threads(1)
    kernel = compile_program(chain(), block_elements=B)
    arrays = [(data(33 * B, seed=i), data(33 * B, "float16", i)) for i in range(4)]
    want = [kernel(a, b)[0] for a, b in arrays]
    errors = []

    def hammer(i):
        for _ in range(30):
            if not np.array_equal(kernel(*arrays[i])[0], want[i]):
                errors.append(i)
    threads = [threading.Thread(target=hammer, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors


def test_zero_size_and_zero_dim(assert_same):
    prog = Program("empty")
    x = prog.input("float32")
    prog.output(prog.ufunc("exp", x))
    prog.output(prog.reduce("sum", x, dims="last"))
    prog.output(prog.reduce("mean", x, dims="all"))
    kernel = compile_program(prog, block_elements=B)
    e, s, m = kernel(np.zeros((3, 0), np.float32))
    assert e.shape == (3, 0) and np.array_equal(s, np.zeros(3, np.float32)) and np.isnan(m)
    e, s, m = kernel(np.array(2.0, np.float32))
    assert_same(e, np.exp(np.array(2.0, np.float32)))
    assert_same(s, np.array(2.0, np.float32)) and assert_same(m, np.array(2.0, np.float32))
    amax = Program("amax")
    amax.output(amax.reduce("amax", amax.input("float32"), dims="all"))
    with pytest.raises(ValueError, match="zero-size"):
        compile_program(amax)(np.zeros(0, np.float32))


def test_bfloat16_through_float32(assert_same):
    bf16 = np.dtype(ml_dtypes.bfloat16)
    prog = Program("bf16")
    x = prog.input(bf16)
    y = prog.ufunc("exp", prog.cast(x, "float32"))
    prog.output(y, dtype=bf16)
    prog.output(prog.reduce("amax", y, dims="last"), dtype=bf16)
    a = np.linspace(-2, 2, 3 * B + 7).astype(bf16).reshape(1, -1)
    got = compile_program(prog, block_elements=B)(a)
    want = np.exp(a.astype(np.float32))
    assert_same(got[0], want.astype(bf16))
    assert_same(got[1], want.max(-1).astype(bf16))


def test_program_without_inputs(assert_same):
    prog = Program("consts")
    prog.output(prog.ufunc("add", 1.0, np.float32(2.0)))
    prog.output(prog.reduce("sum", prog.ufunc("multiply", 2, 3), dims="all", keepdim=True))
    three, six = compile_program(prog)()
    assert_same(three, np.array(3.0, np.float32))
    assert_same(six, np.array(6, np.int64))


def test_generic_namespace_matches_numpy(assert_same):
    xp = types.SimpleNamespace(**vars(np))  # not numpy: ufuncs looked up by name
    prog = chain("float16")
    prog.output(prog.reduce("amax", prog.steps[-1].value, dims="all"))
    a, b = data((5, 3 * B)), data(3 * B, "float16", 1)
    for g, w in zip(compile_program(prog, xp, block_elements=B)(a, b),
                    compile_program(prog, block_elements=B)(a, b)):
        assert_same(g, w)


def test_float_warnings_are_silenced():
    prog = Program("fp")
    x = prog.input("float32")
    prog.output(prog.ufunc("log", prog.ufunc("true_divide", x, 0.0)))
    with warnings.catch_warnings(), np.errstate(all="raise"):
        warnings.simplefilter("error")
        (got,) = compile_program(prog, block_elements=B)(np.array([-1, 0, 1], np.float32))
    assert np.isnan(got[0]) and np.isnan(got[1]) and got[2] == np.inf


def test_errors_of_steps_propagate():
    prog = Program("raises")
    prog.output(prog.call(lambda v: 1 / 0, prog.input("float32"), dtype="float32"))
    with pytest.raises(ZeroDivisionError):
        compile_program(prog)(np.ones(3, np.float32))
    prog = Program("overflow")
    prog.output(prog.ufunc("add", prog.input("int8"), 1000))
    with pytest.raises(OverflowError):
        compile_program(prog)(np.ones(3, np.int8))


@pytest.mark.parametrize("args, out, match", [
    ((np.ones(3, np.float32),), None, r"expected 2 input arrays of dtypes \['float32', "
                                      r"'float16'\], got 1"),
    ((np.ones(3, np.float64), np.ones(3, np.float16)), None,
     "input 0: expected an array of dtype float32, got float64"),
    ((np.ones(3, np.float32), 1.0), None, "input 1: .* got float; wrap scalars"),
    ((np.ones((2, 3), np.float32), np.ones((3, 2), np.float16)), None,
     r"input shapes \[\(2, 3\), \(3, 2\)\] do not broadcast"),
    ((np.ones(3, np.float32), np.ones(3, np.float16)), np.empty(3, np.float32),
     "out: expected a list of 1 arrays"),
    ((np.ones(3, np.float32), np.ones(3, np.float16)), [np.empty(4, np.float32)],
     r"out\[0\]: expected a writable array of shape \(3,\) and dtype float32"),
    ((np.ones(3, np.float32), np.ones(3, np.float16)), [np.empty(3, np.float64)],
     "out.0.: expected a writable"),
    ((np.ones(3, np.float32), np.ones(3, np.float16)),
     [np.broadcast_to(np.float32(0), (3,))], "out.0.: expected a writable"),
])
def test_call_errors(args, out, match):
    kernel = compile_program(chain())
    with pytest.raises(EngineError, match=match) as info:
        kernel(*args, out=out)
    assert str(info.value).startswith("chain: ")


def test_compile_errors():
    with pytest.raises(EngineError, match="expected a Program"):
        compile_program("prog")
    prog = Program("none")
    prog.input("float32")
    with pytest.raises(EngineError, match="no outputs"):
        compile_program(prog)
    for bad in (0, 1.5, True):
        with pytest.raises(EngineError, match="block_elements >= 1"):
            compile_program(chain(), block_elements=bad)
    xp = types.SimpleNamespace(**{k: v for k, v in vars(np).items() if k != "tanh"})
    with pytest.raises(EngineError, match="has no ufunc 'tanh'"):
        compile_program(chain(), xp)


def test_explain_and_repr():
    kernel = compile_program(chain("float16"), block_elements=B)
    assert isinstance(kernel, BlockedKernel)
    assert kernel.block_elements == B and kernel.program.name == "chain"
    assert repr(kernel) == "<BlockedKernel 'chain': 6 steps, 1 register, block_elements=16>"
    text = kernel.explain()
    assert "registers: r0 float32\n" in text  # every step reuses the one register
    assert "r0 = multiply(in0, r0) : float32" in text and "out0 = store(r0) : float16" in text
    prog = Program("two")
    x = prog.input("float32")
    prog.output(prog.ufunc("add", prog.ufunc("exp", x), prog.ufunc("sin", x)))
    assert "registers: r0 float32, r1 float32" in compile_program(prog).explain()
    assert compile_program(chain()).block_elements == BLOCK_ELEMENTS


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "int32", "uint8"])
@pytest.mark.parametrize("zero_side", ["other", "self"])
def test_where_against_zero_keeps_every_bit(dtype, zero_side):
    # the branch-free select (bits times the mask) must give np.where's bits exactly:
    # NaN payloads, inf, -0.0 kept; a -0.0 constant is not "zero bits" and takes np.where
    rng = np.random.default_rng(0)
    x = rng.standard_normal(5 * B + 3).astype(dtype) if dtype[0] == "f" else \
        rng.integers(0, 100, 5 * B + 3).astype(dtype)
    if dtype[0] == "f":
        x[:4] = [np.nan, np.inf, -np.inf, -0.0]
    c = rng.random(x.shape) > 0.5
    for zero in (0, 0.0, -0.0):
        if dtype[0] != "f" and zero != 0:
            continue
        prog = Program("where0")
        cv, xv = prog.input("bool"), prog.input(dtype)
        args = (xv, zero) if zero_side == "other" else (zero, xv)
        prog.output(prog.where(cv, *args, dtype=dtype))
        got = compile_program(prog, block_elements=B)(c, x)[0]
        want = np.where(c, *(x, np.array(zero, dtype)) if zero_side == "other"
                        else (np.array(zero, dtype), x))
        np.testing.assert_array_equal(got.view(f"u{got.itemsize}"),
                                      want.view(f"u{want.itemsize}"))
