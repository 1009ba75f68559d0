"""A line search satisfying the strong Wolfe conditions, for ``LBFGS``.

Nocedal & Wright, "Numerical Optimization" (2nd ed., 2006), Algorithms 3.5 (bracketing)
and 3.6 (zoom), with the safeguarded cubic interpolation of Schmidt's minFunc, which
PyTorch's LBFGS also follows; the trial steps are therefore the same as PyTorch's.

Points along the search direction ``d`` are ``(t, f, g, gtd)``: the step length, the
loss there, the flat gradient there, and the directional derivative ``g . d``.
"""
from __future__ import annotations

import math

__all__ = ["cubic_minimizer", "strong_wolfe"]


def cubic_minimizer(t1: float, f1: float, gtd1: float, t2: float, f2: float, gtd2: float,
                    bounds: tuple[float, float] | None = None) -> float:
    """The minimizer of the cubic through two points with these values and slopes,
    clamped to ``bounds`` (default: between t1 and t2); the bounds' midpoint when the
    cubic has no minimizer. Nocedal & Wright eq. (3.59)."""
    low, high = bounds if bounds is not None else (min(t1, t2), max(t1, t2))
    d1 = gtd1 + gtd2 - 3 * (f1 - f2) / (t1 - t2)
    disc = d1 * d1 - gtd1 * gtd2
    if disc < 0:
        return (low + high) / 2.0
    d2 = math.sqrt(disc)
    if t1 <= t2:
        t = t2 - (t2 - t1) * ((gtd2 + d2 - d1) / (gtd2 - gtd1 + 2 * d2))
    else:
        t = t1 - (t1 - t2) * ((gtd1 + d2 - d1) / (gtd1 - gtd2 + 2 * d2))
    return min(max(t, low), high)


def strong_wolfe(evaluate, t: float, d, f: float, g, gtd: float, *, c1: float = 1e-4,
                 c2: float = 0.9, tolerance_change: float = 1e-9, max_ls: int = 25):
    """Search along ``d`` from the current point for a step ``t`` with sufficient decrease
    (``f(t) <= f + c1 t gtd``) and curvature (``|g(t) . d| <= -c2 gtd``).

    Args:
        evaluate: ``evaluate(t) -> (loss, flat_grad)`` at the point ``x + t d`` (it must
            leave the parameters at ``x``).
        t: the first trial step.
        d: the search direction (a flat tensor); ``g`` the flat gradient at ``x``, ``f``
            the loss there and ``gtd = g . d < 0``.
        max_ls: the most evaluations to spend.

    Returns ``(loss, flat_grad, t, evaluations)`` at the accepted step (the best point
    found when the budget runs out). As in PyTorch, up to ``max_ls + 1`` evaluations.
    """
    d_max = d.abs().max().item()
    f_new, g_new = evaluate(t)
    gtd_new = g_new.dot(d).item()
    evals = 1
    prev = (0.0, f, g, gtd)
    bracket = None
    # Bracketing phase: grow t until an interval must hold an acceptable step.
    while evals <= max_ls:
        point = (t, f_new, g_new, gtd_new)
        if f_new > f + c1 * t * gtd or (evals > 2 and f_new >= prev[1]):
            bracket = [prev, point]
            break
        if abs(gtd_new) <= -c2 * gtd:
            return f_new, g_new, t, evals
        if gtd_new >= 0:
            bracket = [prev, point]
            break
        t_next = cubic_minimizer(prev[0], prev[1], prev[3], t, f_new, gtd_new,
                                 bounds=(t + 0.01 * (t - prev[0]), t * 10))
        prev, t = point, t_next
        f_new, g_new = evaluate(t)
        gtd_new = g_new.dot(d).item()
        evals += 1
    if bracket is None:  # out of evaluations while still growing: the last one is unchecked
        bracket = [(0.0, f, g, gtd), (t, f_new, g_new, gtd_new)]
    return _zoom(evaluate, bracket, d, d_max, f, gtd, evals, c1, c2, tolerance_change, max_ls)


def _zoom(evaluate, bracket, d, d_max, f, gtd, evals, c1, c2, tolerance_change, max_ls):
    """Shrink ``bracket`` (two points, one of them the lowest loss so far) until a step in
    it satisfies the strong Wolfe conditions, the bracket is too small to matter, or the
    evaluations run out; return the lowest point."""
    low = 0 if bracket[0][1] <= bracket[1][1] else 1
    stalled = False
    while evals <= max_ls:
        (t_a, f_a, _, gtd_a), (t_b, f_b, _, gtd_b) = bracket
        if abs(t_b - t_a) * d_max < tolerance_change:
            break
        t = cubic_minimizer(t_a, f_a, gtd_a, t_b, f_b, gtd_b)
        lo, hi = min(t_a, t_b), max(t_a, t_b)
        margin = 0.1 * (hi - lo)
        # NOTE: a step too close to an end point makes little progress; after a second
        # such step in a row (or one outside the bracket) move it inside by the margin.
        if min(hi - t, t - lo) < margin:
            if stalled or t >= hi or t <= lo:
                t = hi - margin if abs(t - hi) < abs(t - lo) else lo + margin
                stalled = False
            else:
                stalled = True
        else:
            stalled = False
        f_new, g_new = evaluate(t)
        gtd_new = g_new.dot(d).item()
        evals += 1
        point = (t, f_new, g_new, gtd_new)
        high = 1 - low
        if f_new > f + c1 * t * gtd or f_new >= bracket[low][1]:
            bracket[high] = point
        else:
            if abs(gtd_new) <= -c2 * gtd:
                bracket[low] = point
                break
            if gtd_new * (bracket[high][0] - bracket[low][0]) >= 0:
                bracket[high] = bracket[low]
            bracket[low] = point
        low = 0 if bracket[0][1] <= bracket[1][1] else 1
    t, f_best, g_best, _ = bracket[low]
    return f_best, g_best, t, evals
