"""The blocked elementwise engine against numpy on whole arrays, side by side.

Cases (float32):

* ``chain10``: ``log(abs(tanh(sigmoid(x * 1.5 + y) * x - 0.25) * y) + 1)`` on two
  arrays of ``--chain-size`` elements (1e6): ten ops, thirteen ufuncs (sigmoid is
  ``1 / (1 + exp(-t))``);
* ``xyz``: ``x * y + z`` on three arrays of ``--xyz-size`` elements (1e7).

Rows: numpy eager (every op allocates its result), numpy with ``out=`` (whole-array
temporaries allocated once, outside the timing), and the engine
(``ember.backends.elementwise``, default ``block_elements``, output allocated per call as
eager's is), each at 1 thread and at ember's default thread count
(``ember.set_num_threads``; numpy's ufuncs run on one thread either way). Timing: the
variants run interleaved, one call each per round, ``--repeat`` rounds; the minimum per
call is printed in milliseconds, with the ratios numpy / engine (above 1: the engine is
faster). No assertions: the engine's result is checked against numpy's (max abs diff).

Run: ``python benchmarks/bench_engine.py [--repeat 15] [--chain-size 1e6] [--xyz-size 1e7]``.
"""
from __future__ import annotations

import argparse
import time

import numpy as np

import ember
from ember.backends.elementwise import BLOCK_ELEMENTS, Program, compile_program


def chain_program() -> Program:
    """The ten-op chain, as the CPU fuser's recipes emit it."""
    p = Program("chain10")
    x, y = p.input("float32"), p.input("float32")
    t = p.ufunc("add", p.ufunc("multiply", x, 1.5), y)
    t = p.ufunc("reciprocal", p.ufunc("add", p.ufunc("exp", p.ufunc("negative", t)), 1.0))
    t = p.ufunc("tanh", p.ufunc("subtract", p.ufunc("multiply", t, x), 0.25))
    t = p.ufunc("add", p.ufunc("multiply", p.ufunc("absolute", t), y), 1.0)
    p.output(p.ufunc("log", t))
    return p


def chain_eager(x, y):
    t = x * np.float32(1.5) + y
    t = np.float32(1) / (np.float32(1) + np.exp(-t))
    return np.log(np.abs(np.tanh(t * x - np.float32(0.25))) * y + np.float32(1))


def chain_out(x, y, t, u):
    """The same ufuncs as the engine's, on whole arrays, into preallocated ``t``, ``u``."""
    np.multiply(x, 1.5, out=t)
    np.add(t, y, out=t)
    np.negative(t, out=t)
    np.exp(t, out=t)
    np.add(t, 1.0, out=t)
    np.reciprocal(t, out=t)
    np.multiply(t, x, out=t)
    np.subtract(t, 0.25, out=t)
    np.tanh(t, out=t)
    np.absolute(t, out=t)
    np.multiply(t, y, out=t)
    np.add(t, 1.0, out=t)
    return np.log(t, out=u)


def xyz_program() -> Program:
    p = Program("xyz")
    x, y, z = p.input("float32"), p.input("float32"), p.input("float32")
    p.output(p.ufunc("add", p.ufunc("multiply", x, y), z))
    return p


def best_interleaved(fns: dict, repeat: int) -> dict:
    """Minimum seconds a call of each of ``fns``, the functions taking turns."""
    best = dict.fromkeys(fns, float("inf"))
    for fn in fns.values():  # warm-up: first-touch pages, scratch, the thread pool
        fn()
    for _ in range(repeat):
        for name, fn in fns.items():
            t0 = time.perf_counter()
            fn()
            best[name] = min(best[name], time.perf_counter() - t0)
    return best


def run_case(name: str, eager, out_fn, kernel, arrays, repeat: int, threads: list) -> None:
    diff = float(np.max(np.abs(kernel(*arrays)[0] - eager(*arrays))))
    for n in threads:
        ember.set_num_threads(n)
        t = best_interleaved({"eager": lambda: eager(*arrays), "out": out_fn,
                              "engine": lambda: kernel(*arrays)}, repeat)
        print(f"{name:<10} {n:>7} {t['eager'] * 1e3:>11.2f} {t['out'] * 1e3:>10.2f} "
              f"{t['engine'] * 1e3:>9.2f} {t['eager'] / t['engine']:>12.2f} "
              f"{t['out'] / t['engine']:>10.2f}   {diff:.1e}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument("--chain-size", type=float, default=1e6)
    parser.add_argument("--xyz-size", type=float, default=1e7)
    args = parser.parse_args()
    default = ember.get_num_threads()
    threads = [1] if default == 1 else [1, default]
    rng = np.random.default_rng(0)
    print(f"block_elements={BLOCK_ELEMENTS}, default threads={default}, "
          f"numpy {np.__version__}")
    print(f"{'case':<10} {'threads':>7} {'eager ms':>11} {'out= ms':>10} {'engine ms':>9} "
          f"{'eager/engine':>12} {'out=/engine':>10}   max|diff|")
    try:
        n = int(args.chain_size)
        x, y = (rng.random(n, dtype=np.float32) for _ in range(2))
        t, u = np.empty_like(x), np.empty_like(x)
        run_case("chain10", chain_eager, lambda: chain_out(x, y, t, u),
                 compile_program(chain_program()), (x, y), args.repeat, threads)
        n = int(args.xyz_size)
        x, y, z = (rng.random(n, dtype=np.float32) for _ in range(3))
        w = np.empty_like(x)
        run_case("xyz", lambda a, b, c: a * b + c,
                 lambda: np.add(np.multiply(x, y, out=w), z, out=w),
                 compile_program(xyz_program()), (x, y, z), args.repeat, threads)
    finally:
        ember.set_num_threads(default)


if __name__ == "__main__":
    main()
