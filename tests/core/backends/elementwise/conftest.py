"""Fixtures of the elementwise engine tests: the whole-array numpy reference of a Program,
an exact comparison, and a thread-count setter that restores ember's count."""
import numpy as np
import pytest

import ember as E
from ember.backends.elementwise.program import Dims, Op, Value

_RED = {"sum": np.add, "mean": np.add, "amax": np.maximum, "amin": np.minimum}


@np.errstate(all="ignore")
def reference(prog, arrays, float64_reductions: bool = False) -> list:
    """Every output of ``prog`` computed step by step on whole arrays with plain numpy:
    a ufunc's natural loop then ``astype(dtype)``, as the engine defines it. Reductions
    accumulate in float64 with ``float64_reductions`` (a reference for tolerances)."""
    shape = np.broadcast_shapes(*(np.shape(a) for a in arrays))
    vals = []
    for s in prog.steps:
        args = [vals[a.index] if isinstance(a, Value) else a for a in s.args]
        dt = s.value.dtype
        if s.op is Op.INPUT:
            v = arrays[s.target]
        elif s.op is Op.CAST:
            v = np.asarray(args[0]).astype(dt)
        elif s.op in (Op.UFUNC, Op.CALL):
            v = np.asarray(s.target(*args)).astype(dt)
        elif s.op is Op.WHERE:
            c, a, b = args
            v = np.where(c, np.asarray(a).astype(dt), np.asarray(b).astype(dt))
        else:
            v = _reduce(s, np.broadcast_to(args[0], shape), float64_reductions)
        vals.append(v)
    outs = []
    for o in prog.outputs:
        v = vals[o.value.index]
        if prog.steps[o.value.index].op is not Op.REDUCE:
            v = np.broadcast_to(v, shape)
        outs.append(np.asarray(v).astype(o.dtype))
    return outs


def _reduce(s, x, float64: bool):
    dt = np.dtype(np.float64) if float64 and s.value.dtype.kind == "f" else s.value.dtype
    red = _RED[s.target]
    if s.dims is Dims.LAST:
        keep = s.keepdim and x.ndim > 0
        x = x.reshape(x.shape or (1,))
        r = red.reduce(x, axis=-1, dtype=dt, keepdims=keep)
        count = x.shape[-1]
    else:
        r = red.reduce(x, axis=None, dtype=dt, keepdims=s.keepdim)
        count = x.size
    if s.target == "mean":
        r = np.true_divide(r, np.float64(count))
    return np.asarray(r).astype(s.value.dtype if not float64 else dt)


@pytest.fixture(scope="session")
def numpy_reference():
    """``numpy_reference(prog, arrays, float64_reductions=False) -> list`` of outputs."""
    return reference


def same(a, b) -> None:
    """Same dtype, shape and values: NaN where NaN, the sign of every zero."""
    a, b = np.asarray(a), np.asarray(b)
    assert a.dtype == b.dtype, f"dtype: {a.dtype} != {b.dtype}"
    assert a.shape == b.shape, f"shape: {a.shape} != {b.shape}"
    if a.dtype.kind in "fc":
        assert np.array_equal(a, b, equal_nan=True), f"values differ:\n{a}\n{b}"
        zeros = (a == 0) & (b == 0)
        assert np.array_equal(np.signbit(a.real)[zeros], np.signbit(b.real)[zeros]), \
            "signs of zeros differ"
    else:
        assert np.array_equal(a, b), f"values differ:\n{a}\n{b}"


@pytest.fixture(scope="session")
def assert_same():
    """``assert_same(a, b)``: see :func:`same`."""
    return same


@pytest.fixture
def num_threads():
    """``num_threads(n)`` sets ember's thread count for the test; the count before is
    restored after it."""
    from threadpoolctl import threadpool_limits
    before = E.get_num_threads()
    # the BLAS limit too: set_num_threads(before) alone would leave it at the core count
    with threadpool_limits(limits=None, user_api="blas"):
        yield E.set_num_threads
        E.set_num_threads(before)
