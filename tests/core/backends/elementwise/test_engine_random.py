"""Random pointwise DAGs through the blocked engine against the same steps on whole arrays.

Hypothesis draws 1-3 inputs (float16/32/64, int32, bool; shapes that broadcast, with
size-1 dims and 0-d; C-contiguous, transposed or strided), casts, chains of unary, binary,
comparison, integer and ``where`` steps, and 1-3 outputs (inputs among them) stored as
other dtypes; then compiles with a small ``block_elements`` so that blocks, tails and the
broadcast path are all crossed at small sizes. The engine runs each ufunc loop the
reference runs, so results must match exactly (NaN, inf and signed zeros included);
reductions are checked against a float64 reference in test_engine.py.
"""
from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ember.backends.elementwise import Program, compile_program

UNARY = ["negative", "absolute", "exp", "tanh", "sin", "sqrt", "log1p", "square", "floor",
         "sign", "reciprocal", "expm1", "cbrt", "log"]
BINARY = ["add", "subtract", "multiply", "true_divide", "maximum", "minimum", "fmax",
          "hypot", "arctan2", "copysign"]
COMPARE = ["less", "greater_equal", "not_equal", "equal"]
INT_BINARY = ["add", "multiply", "maximum", "bitwise_xor", "subtract"]
FLOATS = ["float16", "float32", "float64"]
SPECIAL = np.array([np.nan, np.inf, -np.inf, -0.0, 0.0])


def make_array(rng, shape: tuple, dtype: np.dtype, layout: str) -> np.ndarray:
    """Values of ``dtype`` (floats with special values mixed in) laid out C-contiguous,
    transposed (``"t"``) or as a stride-2 view of a larger array (``"step"``)."""
    if dtype.kind == "f":
        vals = rng.standard_normal(shape) * 3
        mask = rng.random(shape) < 0.15
        vals = np.where(mask, rng.choice(SPECIAL, size=shape), vals).astype(dtype)
    elif dtype.kind == "i":
        vals = rng.integers(-50, 50, size=shape).astype(dtype)
    else:
        vals = rng.random(shape) < 0.5
    vals = np.asarray(vals, dtype)
    if layout == "t" and vals.ndim >= 2:
        return np.ascontiguousarray(vals.T).T
    if layout == "step" and vals.ndim >= 1:
        big = np.zeros(shape[:-1] + (2 * shape[-1],), dtype)
        big[..., ::2] = vals
        return big[..., ::2]
    return vals


@st.composite
def cases(draw):
    """(program, arrays, block_elements) for a random pointwise DAG."""
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    ndim = draw(st.integers(0, 3))
    shape = tuple(draw(st.sampled_from([1, 2, 3, 5, 8])) for _ in range(ndim))
    prog = Program("random")
    arrays, floats, ints, bools, inputs = [], [], [], [], []
    for _ in range(draw(st.integers(1, 3))):
        dt = np.dtype(draw(st.sampled_from(FLOATS + ["int32", "bool"])))
        drop = draw(st.integers(0, ndim))
        sub = tuple(1 if draw(st.booleans()) else d for d in shape[drop:])
        arrays.append(make_array(rng, sub, dt, draw(st.sampled_from(["c", "t", "step"]))))
        x = prog.input(dt)
        inputs.append(x)
        (ints if dt.kind == "i" else bools if dt.kind == "b" else floats).append(x)
        floats.append(prog.cast(x, draw(st.sampled_from(["float32", "float64"]))))
    pick = lambda pool: pool[draw(st.integers(0, len(pool) - 1))]  # noqa: E731
    const = st.sampled_from([2.0, -0.5, 0.0, 3, np.float32(1.5), np.float64(-2.25)])
    for _ in range(draw(st.integers(1, 8))):
        kind = draw(st.sampled_from(["unary", "binary", "where", "int", "cast"]))
        dtype = draw(st.sampled_from([None, None, "float16", "float32", "float64"]))
        if kind == "unary":
            floats.append(prog.ufunc(draw(st.sampled_from(UNARY)), pick(floats), dtype=dtype))
        elif kind == "binary":
            b = draw(const) if draw(st.booleans()) else pick(floats)
            args = (pick(floats), b) if draw(st.booleans()) else (b, pick(floats))
            floats.append(prog.ufunc(draw(st.sampled_from(BINARY)), *args, dtype=dtype))
        elif kind == "where":
            bools.append(prog.ufunc(draw(st.sampled_from(COMPARE)), pick(floats),
                                    pick(floats)))
            a = pick(floats) if draw(st.booleans()) else draw(const)
            floats.append(prog.where(pick(bools), a, pick(floats), dtype=dtype))
        elif kind == "int" and ints:
            b = pick(ints) if draw(st.booleans()) else draw(st.integers(-3, 3))
            ints.append(prog.ufunc(draw(st.sampled_from(INT_BINARY)), pick(ints), b))
        elif kind == "cast":
            floats.append(prog.cast(pick(floats), draw(st.sampled_from(FLOATS))))
    for _ in range(draw(st.integers(1, 3))):
        pool = draw(st.sampled_from(["floats", "floats", "ints", "bools", "inputs"]))
        pool = {"floats": floats, "ints": ints or floats, "bools": bools or floats,
                "inputs": inputs}[pool]
        v = pick(pool)
        out_dt = None if v.dtype.kind != "f" or draw(st.booleans()) else \
            draw(st.sampled_from(FLOATS))
        prog.output(v, dtype=out_dt)
    return prog, arrays, draw(st.sampled_from([1, 3, 7, 16, 64, 4096]))


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cases())
def test_random_dag_matches_whole_array_numpy(numpy_reference, assert_same, case):
    prog, arrays, block = case
    kernel = compile_program(prog, block_elements=block)
    want = numpy_reference(prog, arrays)
    got = kernel(*arrays)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert_same(g, w)
    again = kernel(*arrays, out=[np.empty_like(w) for w in want])  # cached scratch, out=
    for g, w in zip(again, want):
        assert_same(g, w)
