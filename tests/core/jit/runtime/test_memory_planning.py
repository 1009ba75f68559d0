"""Memory planning of array-mode ExecutionPlans (jit/runtime/memory_planning.py): intermediates
that only ufunc lines read reuse buffer slots; results never change, outputs and values
that may alias or escape are never planned, and concurrent calls never share buffers."""
import re
import threading
import tracemalloc

import numpy as np
import pytest

import ember as E
from ember.jit.runtime import fuser as F
from ember.jit.runtime.interpreter import run_graph
from ember.jit.runtime.memory_planning import DEFAULT_MIN_ELEMENTS, Arena
from ember.jit.ir.parser import parse_ir
from ember.jit.runtime.plan import ExecutionPlan
from helpers import make, to_np

BIG = (64, 80)  # 5120 elements: calls at this size use their slots
SMALL = (4, 8)
assert BIG[0] * BIG[1] >= DEFAULT_MIN_ELEMENTS > SMALL[0] * SMALL[1]

CHAIN = """graph(%x : Float(2, 3, device=cpu), %y : Float(2, 3, device=cpu)):
  %one : int = prim::Constant[value=1]()
  %a : Float(2, 3, device=cpu) = ember::mul(%x, %y)
  %b : Float(2, 3, device=cpu) = ember::add(%a, %one, %one)
  %c : Float(2, 3, device=cpu) = ember::sin(%b)
  %d : Float(2, 3, device=cpu) = ember::sub(%c, %x, %one)
  %e : Float(2, 3, device=cpu) = ember::exp(%d)
  return (%e)"""


def planned(plan) -> dict:
    """{debug name: slot} of the values ``plan`` gave a buffer slot."""
    return {v.debug_name: s for v, s in plan.memory_plan.slots.items()}


def tensors(shape, n=2, seed=0, dtype=E.float32):
    return [make(shape, dtype, seed=seed + i)[0] for i in range(n)]


def same(got, want) -> None:
    """Bitwise equal values (planning calls the same ufuncs, only with ``out=``)."""
    np.testing.assert_array_equal(to_np(got), to_np(want))


def unplanned(text: str) -> ExecutionPlan:
    return ExecutionPlan(parse_ir(text), array_mode=True, min_planned_elements=None)


# ---- the plan ------------------------------------------------------------------------------

def test_a_chain_reuses_one_buffer_and_a_warm_call_allocates_none():
    plan = ExecutionPlan(parse_ir(CHAIN), array_mode=True)
    # each value dies where the next is made: all four write into slot 0 (e is the output)
    assert planned(plan) == {"a": 0, "b": 0, "c": 0, "d": 0}
    assert plan.memory_plan.n_slots == 1 and "out=_buf" in plan.code
    x, y = tensors(BIG)
    (first,) = plan.run([x, y])
    assert plan.arena_misses() == 1  # slot 0's buffer, once
    for _ in range(3):
        (e,) = plan.run([x, y])
        same(e, first)
        assert e is not first and not np.shares_memory(to_np(e), to_np(first))
    assert plan.arena_misses() == 1
    same(first, unplanned(CHAIN).run([x, y])[0])


def test_below_the_threshold_calls_use_no_slots():
    plan = ExecutionPlan(parse_ir(CHAIN), array_mode=True)
    x, y = tensors(SMALL)
    (e,) = plan.run([x, y])
    assert plan.arena_misses() == 0
    same(e, run_graph(parse_ir(CHAIN), [x, y])[0])
    forced = ExecutionPlan(parse_ir(CHAIN), array_mode=True, min_planned_elements=0)
    same(forced.run([x, y])[0], e)
    forced.run([x, y])
    assert forced.arena_misses() == 1


def test_tensor_mode_and_disabled_plans_are_unchanged():
    for plan in (ExecutionPlan(parse_ir(CHAIN), array_mode=False), unplanned(CHAIN)):
        assert planned(plan) == {} and "_slots" not in plan.code


def test_debug_state_names_the_slots():
    plan = ExecutionPlan(parse_ir(CHAIN), array_mode=True)
    plan.run(tensors(BIG))
    state = plan.debug_state()
    assert state["memory_slots"] == {"a": 0, "b": 0, "c": 0, "d": 0}
    assert state["arena_misses"] == 1


def test_values_of_one_shape_class_share_slots_others_do_not():
    # b (x's shape) and a (the broadcast of x and the row r) never share a slot
    plan = ExecutionPlan(parse_ir("""graph(%x : Float(4, 3, device=cpu),
          %r : Float(3, device=cpu)):
      %a : Float(4, 3, device=cpu) = ember::mul(%x, %r)
      %a2 : Float(4, 3, device=cpu) = ember::sin(%a)
      %b : Float(4, 3, device=cpu) = ember::cos(%x)
      %b2 : Float(4, 3, device=cpu) = ember::neg(%b)
      %c : Float(4, 3, device=cpu) = ember::mul(%a2, %b2)
      return (%c)"""), array_mode=True, min_planned_elements=0)
    slots = planned(plan)
    assert slots["a"] == slots["a2"] != slots["b"] == slots["b2"]
    # a call where r broadcasts and one where it matches x: each slot fits its own values
    for shape_x, shape_r in [((4, 3), (3,)), ((4, 3), (3,)), ((1, 5), (5,)), ((2, 1), (6,))]:
        x, r = make(shape_x, E.float32, seed=1)[0], make(shape_r, E.float32, seed=2)[0]
        before = plan.arena_misses()
        (c,) = plan.run([x, r])
        same(c, (x * r).sin() * (-x.cos()))
        if shape_x == (4, 3) and before:
            assert plan.arena_misses() == before  # warm: no allocation


def test_a_planned_line_raises_eager_errors_and_the_plan_recovers():
    plan = ExecutionPlan(parse_ir(CHAIN), array_mode=True)
    x, y = tensors(BIG)
    (want,) = plan.run([x, y])  # warm: the shape checks of the slots run next
    bad = tensors((BIG[0], BIG[1] + 1), n=1)[0]
    with pytest.raises(Exception) as eager:
        E.mul(x, bad)
    for _ in range(2):
        with pytest.raises(type(eager.value), match=re.escape(str(eager.value))):
            plan.run([x, bad])
    same(plan.run([x, y])[0], want)


ESCAPES = {
    # an output that later nodes also read
    "output_read_later": ("""graph(%x : Float(2, 3, device=cpu), %y : Float(2, 3, device=cpu)):
      %a : Float(2, 3, device=cpu) = ember::mul(%x, %y)
      %b : Float(2, 3, device=cpu) = ember::sin(%a)
      %c : Float(2, 3, device=cpu) = ember::cos(%b)
      return (%a, %c)""", {"b"}),
    # a view's base, and the view itself
    "view": ("""graph(%x : Float(2, 3, device=cpu), %y : Float(2, 3, device=cpu)):
      %s : int = prim::Constant[value=-1]()
      %shape : int[] = prim::ListConstruct(%s)
      %a : Float(2, 3, device=cpu) = ember::mul(%x, %y)
      %v : Float(6, device=cpu) = ember::view(%a, %shape)
      %b : Float(6, device=cpu) = ember::sin(%v)
      %c : Float(6, device=cpu) = ember::cos(%b)
      return (%c)""", {"b"}),
    # a view that is an output (b, of a's shape class, must not write into a's buffer)
    "view_output": ("""graph(%x : Float(2, 3, device=cpu), %y : Float(2, 3, device=cpu)):
      %s : int = prim::Constant[value=-1]()
      %one : int = prim::Constant[value=1]()
      %shape : int[] = prim::ListConstruct(%s)
      %a : Float(2, 3, device=cpu) = ember::mul(%x, %y)
      %v : Float(6, device=cpu) = ember::view(%a, %shape)
      %b : Float(2, 3, device=cpu) = ember::add(%x, %y, %one)
      %c : Float(2, 3, device=cpu) = ember::cos(%b)
      return (%v, %c)""", {"b"}),
    # written in place (tensor mode: it gets the Tensor), returned, and read again
    "inplace": ("""graph(%x : Float(2, 3, device=cpu), %y : Float(2, 3, device=cpu)):
      %one : int = prim::Constant[value=1]()
      %a : Float(2, 3, device=cpu) = ember::mul(%x, %y)
      %w : Float(2, 3, device=cpu) = ember::mul_(%a, %y)
      %b : Float(2, 3, device=cpu) = ember::sin(%a)
      %d : Float(2, 3, device=cpu) = ember::add(%x, %y, %one)
      %c : Float(2, 3, device=cpu) = ember::mul(%b, %d)
      return (%w, %c)""", {"b", "d"}),
    # in a list (cat keeps no reference, but nothing proves that)
    "list": ("""graph(%x : Float(2, 3, device=cpu), %y : Float(2, 3, device=cpu)):
      %zero : int = prim::Constant[value=0]()
      %a : Float(2, 3, device=cpu) = ember::mul(%x, %y)
      %l : Tensor[] = prim::ListConstruct(%a, %x)
      %b : Float(4, 3, device=cpu) = ember::cat(%l, %zero)
      %c : Float(4, 3, device=cpu) = ember::sin(%b)
      return (%c)""", set()),
    # a kernel, not one ufunc (int64): nothing takes out=
    "kernel": ("""graph(%x : Long(2, 3, device=cpu), %y : Long(2, 3, device=cpu)):
      %a : Long(2, 3, device=cpu) = ember::mul(%x, %y)
      %b : Long(2, 3, device=cpu) = ember::neg(%a)
      %c : Long(2, 3, device=cpu) = ember::neg(%b)
      return (%c)""", set()),
}


@pytest.mark.parametrize("name", list(ESCAPES))
def test_values_that_may_alias_or_escape_are_not_planned(name):
    text, expected = ESCAPES[name]
    plan = ExecutionPlan(parse_ir(text), array_mode=True, min_planned_elements=0)
    assert set(planned(plan)) == expected, plan.code
    g = parse_ir(text)
    dtype = g.inputs[0].type.dtype
    results = []
    for shape in [(2, 3), (2, 3), (5, 3)]:  # later calls write into earlier calls' buffers
        args = tensors(shape, dtype=dtype, seed=len(results))
        want = run_graph(parse_ir(text), [a.clone() for a in args])
        results.append((plan.run([a.clone() for a in args]), want))
    for got, want in results:
        for g_, w in zip(got, want):
            same(g_, w)


LOOP = """graph(%x : Float(2, 3, device=cpu), %y : Float(2, 3, device=cpu), %n : int,
      %flag : bool):
  %one : int = prim::Constant[value=1]()
  %t : bool = prim::Constant[value=True]()
  %a : Float(2, 3, device=cpu) = ember::mul(%x, %y)
  %b : Float(2, 3, device=cpu) = ember::sin(%a)
  %c : Float(2, 3, device=cpu) = ember::cos(%x)
  %l : Float(2, 3, device=cpu) = prim::Loop(%n, %t, %c)
    block0(%i : int, %acc : Float(2, 3, device=cpu)):
      %r : Float(2, 3, device=cpu) = prim::If(%flag)
        block0():
          %s : Float(2, 3, device=cpu) = ember::mul(%acc, %b)
          -> (%s)
        block1():
          %u : Float(2, 3, device=cpu) = ember::sub(%acc, %b, %one)
          -> (%u)
      %v : Float(2, 3, device=cpu) = ember::tanh(%r)
      -> (%t, %v)
  %d : Float(2, 3, device=cpu) = ember::neg(%y)
  %e : Float(2, 3, device=cpu) = ember::exp(%d)
  %f : Float(2, 3, device=cpu) = ember::add(%e, %l, %one)
  return (%f)"""


def test_control_flow_liveness():
    plan = ExecutionPlan(parse_ir(LOOP), array_mode=True, min_planned_elements=0)
    slots = planned(plan)
    # c is the loop's carried input (aliased by the loop's values): never planned; b is
    # read inside the loop, so it lives until the loop ends; values inside are never planned
    assert set(slots) == {"a", "b", "d", "e"}
    lifetimes = {v.debug_name: life for v, life in plan.memory_plan.lifetimes.items()}
    loop = [n.kind for n in plan.graph.block.nodes()].index("prim::Loop")
    assert lifetimes["b"].last_use == loop
    assert slots["a"] == slots["b"]  # b takes dying a's buffer: exact overlap
    assert slots["d"] == slots["e"]


@pytest.mark.parametrize("n, flag", [(0, True), (3, True), (2, False)])
@pytest.mark.parametrize("shape", [SMALL, BIG])
def test_control_flow_results(n, flag, shape):
    plan = ExecutionPlan(parse_ir(LOOP), array_mode=True)
    x, y = tensors(shape, seed=5)
    for _ in range(3):
        (got,) = plan.run([x, y, n, flag])
        (want,) = run_graph(parse_ir(LOOP), [x, y, n, flag])
        same(got, want)


# ---- traced functions ----------------------------------------------------------------------

class NoFusion(F.Fuser):
    """Declines every node: pointwise chains stay ufunc lines (the CPU fuser would group
    those on large or unknown sizes, and run them on its own scratch buffers)."""
    name, device_type = "none", "cpu"

    def can_fuse_node(self, node) -> bool:
        return False


@pytest.fixture
def no_fusion():
    with F.using_fuser("cpu", NoFusion()):
        yield


UNARY = [lambda a: a.sin(), lambda a: a.cos(), lambda a: a.tanh(), lambda a: -a,
         lambda a: a.abs(), lambda a: a * 0.5, lambda a: a + 1.0,
         lambda a: (a.abs() + 1.0).sqrt(), lambda a: (a * 0.1).exp()]
BINARY = [lambda a, b: a + b, lambda a, b: a - b, lambda a, b: a * b, E.maximum, E.minimum,
          lambda a, b: a / (b.abs() + 1.0), lambda a, b: E.sub(a, b, alpha=1)]


def random_chain(seed: int, length: int = 14):
    """A function of ``(x, y, row)`` (``row`` broadcasts against the others) applying
    ``length`` random pointwise ops to random earlier values (so values have several
    readers), returning the last value and one random earlier one (maybe an input)."""
    rng = np.random.default_rng(seed)
    steps = []
    for i in range(length):
        k = 3 + i  # values so far
        if rng.random() < 0.45:
            steps.append((UNARY[rng.integers(len(UNARY))], (int(rng.integers(k)),)))
        else:
            steps.append((BINARY[rng.integers(len(BINARY))],
                          (int(rng.integers(k)), int(rng.integers(k)))))
    extra = int(rng.integers(3 + length - 1))

    def fn(x, y, row):
        vals = [x, y, row]
        for op, args in steps:
            vals.append(op(*(vals[i] for i in args)))
        return vals[-1], vals[extra]
    return fn


def plan_states(traced) -> list:
    return list(traced.get_debug_state()["execution_plans"].values())


@pytest.mark.parametrize("seed", range(8))
def test_random_chains_match_eager_at_several_batch_sizes(seed, no_fusion):
    fn = random_chain(seed)
    row = make((BIG[1],), E.float32, seed=9)[0]
    with E.no_grad():
        traced = E.jit.trace(fn, (*tensors(BIG, seed=seed), row))
        for batch in [BIG[0], 96, 3, BIG[0], 96]:  # 3 rows: below the threshold
            x, y = tensors((batch, BIG[1]), seed=seed + batch)
            for _ in range(2):
                for got, want in zip(traced(x, y, row), fn(x, y, row)):
                    same(got, want)
    (state,) = plan_states(traced)
    assert state["array_mode"] and state["memory_slots"], state["code"]
    misses = state["arena_misses"]
    with E.no_grad():
        traced(x, y, row)
    assert plan_states(traced)[0]["arena_misses"] == misses  # warm at batch 96


def pointwise(x, y):
    a = x * y + 1.0
    b = a * 0.5 - y
    c = b * b + x
    d = c / (y * y + 2.0)
    return d - x * 0.25


def test_warm_traced_plan_allocates_no_intermediates(no_fusion):
    x, y = tensors(BIG, dtype=E.float64)
    with E.no_grad():
        traced = E.jit.trace(pointwise, (x, y))
        traced(x, y)
        misses = plan_states(traced)[0]["arena_misses"]
        assert misses > 0
        expected = pointwise(x, y)
        tracemalloc.start()
        try:
            tracemalloc.reset_peak()
            start = tracemalloc.get_traced_memory()[0]
            out = traced(x, y)
            peak = tracemalloc.get_traced_memory()[1] - start
        finally:
            tracemalloc.stop()
    same(out, expected)
    assert plan_states(traced)[0]["arena_misses"] == misses
    # the output is the one array of this size a warm call allocates (ten intermediates
    # without planning)
    nbytes = to_np(x).nbytes
    assert peak < 2 * nbytes, peak


def test_outputs_aliasing_inputs_and_inplace_writes(no_fusion):
    def fn(x, y):
        a = x * y            # read after x is written in place: computed before
        x.add_(1.0)
        v = y.view(-1)       # y written through a view
        v.mul_(2.0)
        b = (a + x).sin()
        c = b * y            # y's new values
        return x, c * 0.5 + a, y
    x0, y0 = tensors(BIG, seed=11)
    with E.no_grad():
        traced = E.jit.trace(fn, (x0.clone(), y0.clone()), check_trace=False)
        for _ in range(3):
            xt, yt, xe, ye = x0.clone(), y0.clone(), x0.clone(), y0.clone()
            got, want = traced(xt, yt), fn(xe, ye)
            assert got[0] is xt and got[2] is yt
            for g, w in zip(got, want):
                same(g, w)


def test_outputs_of_earlier_calls_are_never_overwritten(no_fusion):
    x, y = tensors(BIG, seed=2)
    with E.no_grad():
        traced = E.jit.trace(pointwise, (x, y))
        outs = [traced(x * (i + 1.0), y) for i in range(4)]
    for i, out in enumerate(outs):
        same(out, pointwise(x * (i + 1.0), y))


# ---- threads and re-entrancy ---------------------------------------------------------------

def test_concurrent_calls_from_four_threads(no_fusion):
    fn = random_chain(3)
    row = make((BIG[1],), E.float32, seed=9)[0]
    with E.no_grad():
        traced = E.jit.trace(fn, (*tensors(BIG), row))
    # each thread its own batch size and values: shared buffers would mix them up
    cases = []
    for t in range(4):
        x, y = tensors((BIG[0] + 8 * (t % 2), BIG[1]), seed=20 + t)
        with E.no_grad():
            cases.append(((x, y, row), [to_np(o) for o in fn(x, y, row)]))
    barrier, errors = threading.Barrier(4), []

    def work(args, want):
        try:
            barrier.wait()
            for _ in range(40):
                with E.no_grad():
                    got = traced(*args)
                for g, w in zip(got, want):
                    np.testing.assert_array_equal(to_np(g), w)
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=c) for c in cases]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert errors == []
    assert plan_states(traced)[0]["memory_slots"]


class _Reenter(E.autograd.Function):
    """Calls ``TARGET[0]`` (the traced function) from inside a plan, once deep."""
    depth = 0

    @staticmethod
    def forward(ctx, x):
        if _Reenter.depth:
            return x * 1.0
        _Reenter.depth += 1
        try:
            return TARGET[0](x + 1.0)
        finally:
            _Reenter.depth -= 1

    @staticmethod
    def backward(ctx, g):
        return g


TARGET = [None]


def reentrant(x):
    p = (x * 2.0).sin()     # planned, alive while the inner call runs
    q = _Reenter.apply(x)
    return p * 3.0 + q


def test_a_call_reentered_from_a_runtime_op_keeps_its_buffers(no_fusion):
    x = tensors(BIG, n=1, seed=4)[0]
    TARGET[0] = reentrant
    with E.no_grad():
        want = reentrant(x)
        traced = E.jit.trace(reentrant, (x,))
        TARGET[0] = traced
        try:
            for _ in range(3):
                same(traced(x), want)
        finally:
            TARGET[0] = None
    assert plan_states(traced)[0]["memory_slots"]


def test_arena_gives_each_running_call_its_own_slots():
    arena = Arena(2)
    a, b = arena.take(), arena.take()
    assert a is not b and a == [None, None]
    a[0] = np.zeros(3)
    arena.give(a)
    assert arena.take() is a  # warm
    assert arena.miss(b) is b and arena.misses == 1
    arena.give(a)
    arena.clear()
    assert arena.take() is not a
