"""Per-op overhead on a 10-element float32 tensor: ember vs numpy vs torch, in one run.

Budget (DESIGN.md section 7): ember's eager op <= torch eager's time; numpy is the floor.
Run: ``python benchmarks/bench_overhead.py``. Prints microseconds per call and ratios.
"""
from __future__ import annotations

import numpy as np

import ember as E
from _timing import best_of, try_import_torch

torch = try_import_torch()


def cases(x, y, m):
    """(name, ember call, numpy call, torch call) on 10-element inputs."""
    a, b, am = x.numpy(), y.numpy(), m.numpy()
    # the in-place case grows its own copies, so the values the other ops see stay in (0.5, 1.5)
    x_, a_ = x.clone(), a.copy()
    t = u = tm = t_ = None
    if torch is not None:
        t, u, tm = torch.from_numpy(a.copy()), torch.from_numpy(b.copy()), torch.from_numpy(am)
        t_ = t.clone()
    rows = [
        ("add", lambda: x + y, lambda: a + b, lambda: t + u),
        ("add scalar", lambda: x + 1.0, lambda: a + 1.0, lambda: t + 1.0),
        ("mul", lambda: x * y, lambda: a * b, lambda: t * u),
        ("div", lambda: x / y, lambda: a / b, lambda: t / u),
        ("neg", lambda: -x, lambda: -a, lambda: -t),
        ("exp", lambda: x.exp(), lambda: np.exp(a), lambda: t.exp()),
        ("relu", lambda: x.relu(), lambda: np.maximum(a, 0), lambda: t.relu()),
        ("sigmoid", lambda: x.sigmoid(), lambda: 1 / (1 + np.exp(-a)), lambda: t.sigmoid()),
        ("lt", lambda: x < y, lambda: a < b, lambda: t < u),
        ("add_ (in-place)", lambda: x_.add_(y), lambda: np.add(a_, b, out=a_),
         lambda: t_.add_(u)),
        ("sum", lambda: x.sum(), lambda: a.sum(), lambda: t.sum()),
        ("mean", lambda: x.mean(), lambda: a.mean(), lambda: t.mean()),
        ("max", lambda: x.max(), lambda: a.max(), lambda: t.max()),
        ("softmax", lambda: x.softmax(0), lambda: np.exp(a) / np.exp(a).sum(),
         lambda: t.softmax(0)),
        ("matmul 2x5 @ 5x2", lambda: m @ m.t(), lambda: am @ am.T, lambda: tm @ tm.t()),
        ("view", lambda: x.view(2, 5), lambda: a.reshape(2, 5), lambda: t.view(2, 5)),
        ("transpose", lambda: m.t(), lambda: am.T, lambda: tm.t()),
        ("getitem [1:4]", lambda: x[1:4], lambda: a[1:4], lambda: t[1:4]),
        ("cat", lambda: E.cat([x, y]), lambda: np.concatenate([a, b]),
         lambda: torch.cat([t, u])),
    ]
    return [r for r in rows if _available(r[1])]


def _available(fn) -> bool:
    try:
        fn()
        return True
    except (AttributeError, NotImplementedError, TypeError, ImportError):
        return False


def main() -> None:
    x, y = E.rand(10) + 0.5, E.rand(10) + 0.5
    m = E.rand(2, 5)
    rows = cases(x, y, m)
    head = f"{'op (10 elements, float32)':<22}{'numpy us':>10}{'ember us':>10}"
    head += f"{'torch us':>10}{'ember/torch':>13}" if torch else ""
    print(head + f"{'ember/numpy':>13}")
    ratios = []
    for name, fe, fn, ft in rows:
        te, tn = best_of(fe), best_of(fn)
        line = f"{name:<22}{tn:>10.2f}{te:>10.2f}"
        if torch is not None:
            tt = best_of(ft)
            ratios.append(te / tt)
            line += f"{tt:>10.2f}{te / tt:>13.2f}"
        print(line + f"{te / tn:>13.2f}")
    if ratios:
        geo = float(np.exp(np.mean(np.log(ratios))))
        worse = sum(r > 1 for r in ratios)
        print(f"\ngeometric mean ember/torch: {geo:.2f}  ({worse} of {len(ratios)} ops "
              f"slower than torch; budget: <= 1.0)")
    else:
        print("\n(torch not installed: only the numpy floor is shown)")


if __name__ == "__main__":
    main()
