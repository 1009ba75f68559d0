"""unroll_loops: small constant loops vanish, other counted loops run 8 body copies a trip
plus an epilogue; while loops and big bodies stay; the numbers never change."""
import importlib

import numpy as np
import pytest

import ember as E
from ember.jit.runtime.interpreter import run_graph
from ember.jit.ir.parser import parse_ir
from ember.jit.passes import canonicalize
from ember.jit.passes.loop_unrolling import (MAX_BODY_SIZE, MAX_FULL_UNROLL, UNROLL_FACTOR,
                                             unroll_loops)
from helpers import literal_blocks, to_np


def check(before: str, after: str, counts=(0,)) -> None:
    """``after`` is what the pass makes of ``before``; both compute the same for every
    value of the int input ``%n`` in ``counts`` (when the graph has one)."""
    g = parse_ir(before)
    assert unroll_loops(g) is None
    g.lint()
    assert str(canonicalize(g)) == str(canonicalize(parse_ir(after)))
    x = E.tensor(np.random.default_rng(0).standard_normal(2), dtype=E.float32)
    for n in counts:
        inputs = [x, n][:len(g.inputs)]
        want = run_graph(parse_ir(before), inputs)[0]
        got = run_graph(g, inputs)[0]
        np.testing.assert_allclose(to_np(got), to_np(want), rtol=1e-5)


def loop(count: str, body: str, result="%h2", cond="%true") -> str:
    """A graph with one loop over ``%h`` (from ``%x``) whose body is ``body``."""
    return f"""graph(%x : Float(2), %n : int):
      %c : int = prim::Constant[value={count if count[0] != '%' else 0}]()
      %true : bool = prim::Constant[value=True]()
      %one : int = prim::Constant[value=1]()
      %r : Float(2) = prim::Loop({count if count[0] == '%' else '%c'}, {cond}, %x)
        block0(%i : int, %h : Float(2)):
          {body}
          -> (%true, {result})
      return (%r)"""


ADD_X = "%h2 : Float(2) = ember::add(%h, %x, %one)"
ADD_I = "%h2 : Float(2) = ember::add(%h, %i, %one)"
HEAD = """graph(%x : Float(2), %n : int):
      %c : int = prim::Constant[value={c}]()
      %true : bool = prim::Constant[value=True]()
      %one : int = prim::Constant[value=1]()
"""


def test_docstring_example():
    # the module docstring's own before/after, so the example stays true
    before, after = literal_blocks(importlib.import_module(
        "ember.jit.passes.loop_unrolling").__doc__)
    check(before, after)


def test_full_unroll_replaces_the_counter_by_constants():
    lines = [f"%k{i} : int = prim::Constant[value={i}]()\n"
             f"%h{i + 1} : Float(2) = ember::add(%h{i}, %k{i}, %one)" for i in range(3)]
    after = HEAD.format(c=3) + "\n".join(lines).replace("%h0", "%x") + "\nreturn (%h3)"
    check(loop("3", ADD_I), after)


@pytest.mark.parametrize("count", [0, -4])
def test_no_trip(count):
    check(loop(str(count), ADD_X), HEAD.format(c=count) + "return (%x)")


def copies(first: str, k: int, counter: bool) -> str:
    """``k`` copies of ``h = h + x`` (``h = h + count; count = count + 1`` with a
    counter), starting from ``first``; the last values are ``%h{k}`` and ``%t{k}``."""
    lines = []
    for j in range(1, k + 1):
        prev = first if j == 1 else f"%h{j - 1}"
        if counter:
            t = "%t0" if j == 1 else f"%t{j - 1}"
            lines += [f"%h{j} : Float(2) = ember::add({prev}, {t}, %one)",
                      f"%t{j} : int = prim::IntAdd({t}, %step)"]
        else:
            lines.append(f"%h{j} : Float(2) = ember::add({prev}, %x, %one)")
    return "\n".join(lines)


def test_constant_count_above_the_limit():
    # 20 = 2 * 8 + 4: a loop of 2 trips over 8 copies, then the original for 4 trips
    after = HEAD.format(c=20) + f"""
      %main : int = prim::Constant[value=2]()
      %rest : int = prim::Constant[value=4]()
      %u : Float(2) = prim::Loop(%main, %true, %x)
        block0(%i : int, %h0 : Float(2)):
          {copies("%h0", UNROLL_FACTOR, False)}
          -> (%true, %h8)
      %r : Float(2) = prim::Loop(%rest, %true, %u)
        block0(%j : int, %h : Float(2)):
          %e : Float(2) = ember::add(%h, %x, %one)
          -> (%true, %e)
      return (%r)"""
    check(loop("20", ADD_X), after)


def test_constant_count_divisible_by_the_factor_has_no_epilogue():
    after = HEAD.format(c=16) + f"""
      %main : int = prim::Constant[value=2]()
      %r : Float(2) = prim::Loop(%main, %true, %x)
        block0(%i : int, %h0 : Float(2)):
          {copies("%h0", UNROLL_FACTOR, False)}
          -> (%true, %h8)
      return (%r)"""
    check(loop("16", ADD_X), after)


def test_dynamic_count_with_the_counter_carried():
    after = HEAD.format(c=0) + f"""
      %zero : int = prim::Constant[value=0]()
      %step : int = prim::Constant[value=1]()
      %main : int, %rest : int = prim::UnrollTripCounts[factor=8](%n)
      %t : int, %u : Float(2) = prim::Loop(%main, %true, %zero, %x)
        block0(%i : int, %t0 : int, %h0 : Float(2)):
          {copies("%h0", UNROLL_FACTOR, True)}
          -> (%true, %t8, %h8)
      %tt : int, %r : Float(2) = prim::Loop(%rest, %true, %t, %u)
        block0(%j : int, %q : int, %h : Float(2)):
          %e : Float(2) = ember::add(%h, %q, %one)
          %q2 : int = prim::IntAdd(%q, %step)
          -> (%true, %q2, %e)
      return (%r)"""
    check(loop("%n", ADD_I), after, counts=[0, 1, 7, 8, 9, 16, 21, -3])


def test_while_loops_are_kept():
    before = """graph(%x : Float(2), %n : int):
      %true : bool = prim::Constant[value=True]()
      %one : int = prim::Constant[value=1]()
      %r : Float(2) = prim::Loop(%n, %true, %x)
        block0(%i : int, %h : Float(2)):
          %h2 : Float(2) = ember::add(%h, %x, %one)
          %s : Float() = ember::sum(%h2)
          %go : bool = prim::Constant[value=False]()
          -> (%go, %h2)
      return (%r)"""
    check(before, before)
    start_false = loop("3", ADD_X, cond="%k").replace(
        "%one : int", "%k : bool = prim::Constant[value=False]()\n%one : int")
    check(start_false, start_false)


def test_big_bodies_are_kept():
    body = "\n".join(f"%h{j + 1} : Float(2) = ember::add(%h{j}, %x, %one)"
                     for j in range(MAX_BODY_SIZE + 1)).replace("%h0", "%h")
    before = loop("%n", body, result=f"%h{MAX_BODY_SIZE + 1}")
    check(before, before)
    assert MAX_FULL_UNROLL == 8


def test_nested_loops_unroll_inner_first():
    before = """graph(%x : Float(2)):
      %two : int = prim::Constant[value=2]()
      %true : bool = prim::Constant[value=True]()
      %one : int = prim::Constant[value=1]()
      %r : Float(2) = prim::Loop(%two, %true, %x)
        block0(%i : int, %h : Float(2)):
          %in : Float(2) = prim::Loop(%two, %true, %h)
            block0(%j : int, %g : Float(2)):
              %g2 : Float(2) = ember::mul(%g, %x)
              -> (%true, %g2)
          %h2 : Float(2) = ember::add(%in, %x, %one)
          -> (%true, %h2)
      return (%r)"""
    after = """graph(%x : Float(2)):
      %two : int = prim::Constant[value=2]()
      %true : bool = prim::Constant[value=True]()
      %one : int = prim::Constant[value=1]()
      %a1 : Float(2) = ember::mul(%x, %x)
      %a2 : Float(2) = ember::mul(%a1, %x)
      %a3 : Float(2) = ember::add(%a2, %x, %one)
      %b1 : Float(2) = ember::mul(%a3, %x)
      %b2 : Float(2) = ember::mul(%b1, %x)
      %r : Float(2) = ember::add(%b2, %x, %one)
      return (%r)"""
    check(before, after)


def test_loop_inside_an_if_branch():
    before = """graph(%x : Float(2), %n : int):
      %two : int = prim::Constant[value=2]()
      %true : bool = prim::Constant[value=True]()
      %r : Float(2) = prim::If(%true)
        block0():
          %l : Float(2) = prim::Loop(%two, %true, %x)
            block0(%i : int, %h : Float(2)):
              %h2 : Float(2) = ember::mul(%h, %x)
              -> (%true, %h2)
          -> (%l)
        block1():
          -> (%x)
      return (%r)"""
    after = """graph(%x : Float(2), %n : int):
      %two : int = prim::Constant[value=2]()
      %true : bool = prim::Constant[value=True]()
      %r : Float(2) = prim::If(%true)
        block0():
          %a : Float(2) = ember::mul(%x, %x)
          %b : Float(2) = ember::mul(%a, %x)
          -> (%b)
        block1():
          -> (%x)
      return (%r)"""
    check(before, after)
