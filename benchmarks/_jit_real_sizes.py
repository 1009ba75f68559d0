"""The JIT at the sizes real models use (imported by ``bench_jit.py``).

- the 10-op pointwise function of ``bench_jit.py`` on 1e6-element float32 tensors: numpy,
  numpy writing into preallocated buffers (``out=``), ember eager and traced, torch eager,
  torch.jit.trace and torch.compile (when it compiles here);
- ``x * y + z`` on 1e7 elements, the same columns (budget: ember traced <= numpy ``out=``);
- one training step (forward, loss, backward, SGD) of an MLP 784-512-512-10 with GELU
  (batch 128), a Transformer encoder layer (d_model 256, 4 heads, seq 64, batch 16) and a
  2-layer LSTM (hidden 256, seq 50, batch 32): ember eager, ember with the model traced
  (budget: traced <= 0.8 x eager), torch eager.

Every row of a table is timed interleaved with the others (``_timing.interleaved``),
best of the repeats, at the thread count ``threads`` for ember and torch alike.
"""
from __future__ import annotations

import warnings

import numpy as np
from _timing import interleaved

import ember as E
import ember.nn.functional as F


def pointwise(x, y):
    """Ten pointwise ops (the same text runs on numpy arrays, ember and torch tensors)."""
    a = x * y + 1.0
    b = a * 0.5 - y
    c = b * b + x
    d = c / (y * y + 2.0)
    return d - x * 0.25


def pointwise_out(x, y, t, u, out):
    """``pointwise`` on numpy arrays writing into two scratch buffers and ``out``."""
    np.multiply(x, y, out=t)
    t += 1.0
    t *= 0.5
    t -= y
    np.multiply(t, t, out=t)
    t += x
    np.multiply(y, y, out=u)
    u += 2.0
    np.divide(t, u, out=t)
    np.multiply(x, 0.25, out=u)
    return np.subtract(t, u, out=out)


def _torch_variants(torch, fn, args, compile_: bool) -> dict:
    out = {"torch eager": lambda: fn(*args)}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        traced = torch.jit.trace(fn, args)
    for _ in range(3):  # TorchScript profiles and optimizes on its first calls
        traced(*args)
    out["torch.jit.trace"] = lambda: traced(*args)
    if compile_:
        try:
            compiled = torch.compile(fn)
            compiled(*args)
            out["torch.compile"] = lambda: compiled(*args)
        except Exception as e:  # noqa: BLE001 - no C++ toolchain: leave the column out
            print(f"  (torch.compile unavailable: {type(e).__name__})")
    return out


def chain_rows(torch, n: int = 1_000_000) -> dict:
    """Microseconds per call of the 10-op function on ``n`` float32 elements."""
    rng = np.random.default_rng(0)
    xn, yn = (rng.standard_normal(n).astype(np.float32) for _ in range(2))
    t, u, o = (np.empty_like(xn) for _ in range(3))
    x, y = E.from_numpy(xn), E.from_numpy(yn)
    with E.no_grad():
        traced = E.jit.trace(pointwise, (x, y))
        np.testing.assert_allclose(traced(x, y).numpy(), pointwise(xn, yn), rtol=1e-5,
                                   atol=1e-5)
    fns = {"numpy": lambda: pointwise(xn, yn),
           "numpy out=": lambda: pointwise_out(xn, yn, t, u, o),
           "ember eager": lambda: pointwise(x, y), "ember jit": lambda: traced(x, y)}
    if torch is not None:
        fns.update(_torch_variants(torch, pointwise, (torch.from_numpy(xn),
                                                      torch.from_numpy(yn)), True))
    with E.no_grad():
        return interleaved(fns, repeat=5)


def fma(x, y, z):
    """``x * y + z``."""
    return x * y + z


def fma_rows(torch, n: int = 10_000_000) -> dict:
    """Microseconds per call of ``x * y + z`` on ``n`` float32 elements."""
    rng = np.random.default_rng(0)
    xn, yn, zn = (rng.standard_normal(n).astype(np.float32) for _ in range(3))
    o = np.empty_like(xn)

    def numpy_out():
        np.multiply(xn, yn, out=o)
        return np.add(o, zn, out=o)
    x, y, z = E.from_numpy(xn), E.from_numpy(yn), E.from_numpy(zn)
    with E.no_grad():
        traced = E.jit.trace(fma, (x, y, z))
    fns = {"numpy": lambda: fma(xn, yn, zn), "numpy out=": numpy_out,
           "ember eager": lambda: fma(x, y, z), "ember jit": lambda: traced(x, y, z)}
    if torch is not None:
        fns.update(_torch_variants(torch, fma, tuple(torch.from_numpy(a)
                                                     for a in (xn, yn, zn)), False))
    with E.no_grad():
        return interleaved(fns, repeat=5)


def _models(nn):
    """``name -> (make_model, input shape, loss kind)`` for ember.nn or torch.nn."""
    return {
        "MLP 784-512-512-10 GELU, batch 128": (
            lambda: nn.Sequential(nn.Linear(784, 512), nn.GELU(), nn.Linear(512, 512),
                                  nn.GELU(), nn.Linear(512, 10)), (128, 784), "ce"),
        "Transformer layer d256 h4, 16x64": (
            lambda: nn.TransformerEncoderLayer(256, 4, dim_feedforward=1024, dropout=0.0,
                                               batch_first=True), (16, 64, 256), "mse"),
        "LSTM 2x256, seq 50, batch 32": (
            lambda: nn.LSTM(256, 256, num_layers=2), (50, 32, 256), "mse"),
    }


def _ember_step(make, shape, loss_kind, jit: bool):
    E.manual_seed(0)
    model = make()
    x = E.randn(*shape)
    y = E.randint(0, 10, (shape[0],)) if loss_kind == "ce" else None
    opt = E.optim.SGD(model.parameters(), lr=1e-3, momentum=0.9)
    fwd = E.jit.trace(model, (x,)) if jit else model

    def step():
        out = fwd(x)
        out = out[0] if isinstance(out, tuple) else out
        loss = F.cross_entropy(out, y) if loss_kind == "ce" else (out * out).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
    return step


def _torch_step(torch, make, shape, loss_kind):
    torch.manual_seed(0)
    model = make()
    x = torch.randn(*shape)
    y = torch.randint(0, 10, (shape[0],)) if loss_kind == "ce" else None
    opt = torch.optim.SGD(model.parameters(), lr=1e-3, momentum=0.9)

    def step():
        out = model(x)
        out = out[0] if isinstance(out, tuple) else out
        loss = (torch.nn.functional.cross_entropy(out, y) if loss_kind == "ce"
                else (out * out).mean())
        opt.zero_grad()
        loss.backward()
        opt.step()
    return step


def training_rows(torch) -> dict:
    """``model name -> {"ember eager", "ember jit", "torch eager"}`` in ms per step."""
    table = {}
    torch_models = _models(torch.nn) if torch is not None else {}
    for name, (make, shape, loss_kind) in _models(E.nn).items():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fns = {"ember eager": _ember_step(make, shape, loss_kind, False),
                   "ember jit": _ember_step(make, shape, loss_kind, True)}
        if torch is not None:
            tmake, _, _ = torch_models[name]
            fns["torch eager"] = _torch_step(torch, tmake, shape, loss_kind)
        for f in fns.values():  # warm-up: the traced step compiles its plans here
            f()
            f()
        table[name] = {k: v / 1e3 for k, v in interleaved(fns, repeat=3,
                                                          min_time=0.2).items()}
    return table
