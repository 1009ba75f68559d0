"""LBFGS and its strong Wolfe line search: a numpy float64 reference of the fixed-step
algorithm, convergence on the Rosenbrock function, the Wolfe conditions, and errors."""
import copy

import numpy as np
import pytest
from helpers import assert_close

import ember as E
from ember.optim import LBFGS
from ember.optim.line_search import cubic_minimizer, strong_wolfe

X0 = np.array([-1.2, 1.0, -0.5, 0.8])


def rosenbrock(x):
    """The n-dimensional Rosenbrock function; minimum 0 at all ones. Works on numpy
    arrays and ember tensors alike."""
    return ((1 - x[:-1]) ** 2).sum() + 100 * ((x[1:] - x[:-1] ** 2) ** 2).sum()


def rosenbrock_grad(x):
    g = np.zeros_like(x)
    g[:-1] = -2 * (1 - x[:-1]) - 400 * x[:-1] * (x[1:] - x[:-1] ** 2)
    g[1:] += 200 * (x[1:] - x[:-1] ** 2)
    return g


def lbfgs_reference(x, steps, lr=1.0, max_iter=20, history_size=100):
    """Fixed-step L-BFGS in float64 (Nocedal & Wright Algorithm 7.4, with PyTorch's
    first step and per-``step`` stopping rules at their defaults' tolerances)."""
    x = x.copy()
    s_list, y_list, h, d, t, prev_g, n_total = [], [], 1.0, None, None, None, 0
    for _ in range(steps):
        g, loss = rosenbrock_grad(x), rosenbrock(x)
        if np.abs(g).max() <= 1e-7:
            break
        for n in range(1, max_iter + 1):
            n_total += 1
            if n_total == 1:
                d = -g
            else:
                y, s = g - prev_g, d * t
                if y @ s > 1e-10:
                    if len(s_list) == history_size:
                        s_list.pop(0)
                        y_list.pop(0)
                    s_list.append(s)
                    y_list.append(y)
                    h = (y @ s) / (y @ y)
                q, alphas = -g, []
                for s_i, y_i in zip(reversed(s_list), reversed(y_list)):
                    alphas.append((s_i @ q) / (y_i @ s_i))
                    q = q - alphas[-1] * y_i
                d = q * h
                for s_i, y_i, a in zip(s_list, y_list, reversed(alphas)):
                    d = d + s_i * (a - (y_i @ d) / (y_i @ s_i))
            prev_g, prev_loss = g, loss
            t = min(1.0, 1.0 / np.abs(g).sum()) * lr if n_total == 1 else lr
            if g @ d > -1e-9:
                break
            x = x + t * d
            if n == max_iter:
                break
            g, loss = rosenbrock_grad(x), rosenbrock(x)
            if (np.abs(g).max() <= 1e-7 or np.abs(d * t).max() <= 1e-9
                    or abs(loss - prev_loss) < 1e-9):
                break
    return x


def minimize(steps, **kw):
    x = E.tensor(X0).requires_grad_()
    opt = LBFGS([x], **kw)

    def closure():
        opt.zero_grad()
        loss = rosenbrock(x)
        loss.backward()
        return loss

    losses = [opt.step(closure).item() for _ in range(steps)]
    return x, opt, losses


@pytest.mark.parametrize("kw", [dict(lr=0.1, max_iter=7, history_size=3),
                                dict(lr=0.05, max_iter=20)], ids=str)
def test_fixed_steps_match_reference(kw):
    x, _, _ = minimize(4, **kw)
    assert_close(x, lbfgs_reference(X0, 4, **kw))


def test_strong_wolfe_converges_on_rosenbrock():
    x, opt, losses = minimize(5, line_search_fn="strong_wolfe")
    assert_close(x, np.ones(4), atol=1e-5, rtol=0)
    assert losses[0] == pytest.approx(rosenbrock(X0))
    state = opt.state[x]
    assert state["func_evals"] >= state["n_iter"] > 0
    assert len(state["old_dirs"]) <= 100


def test_history_carries_over_between_steps():
    kw = dict(lr=0.1, max_iter=3, max_eval=10, history_size=2)
    x, opt, _ = minimize(2, **kw)
    assert opt.state[x]["n_iter"] == 6 and len(opt.state[x]["old_dirs"]) == 2
    assert_close(x, lbfgs_reference(X0, 2, lr=0.1, max_iter=3, history_size=2))
    # a state dict round trip resumes where stepping straight on lands
    first, opt1, _ = minimize(1, **kw)
    resumed = first.detach().clone().requires_grad_()
    opt2 = LBFGS([resumed])
    opt2.load_state_dict(copy.deepcopy(opt1.state_dict()))

    def closure():
        opt2.zero_grad()
        loss = rosenbrock(resumed)
        loss.backward()
        return loss

    opt2.step(closure)
    np.testing.assert_array_equal(resumed.detach().numpy(), x.detach().numpy())


def test_several_parameters_are_one_flat_vector():
    a, b = E.tensor(X0[:2]).requires_grad_(), E.tensor(X0[2:]).requires_grad_()
    opt = LBFGS([a, b], lr=0.1, max_iter=7, history_size=3)

    def closure():
        opt.zero_grad()
        loss = rosenbrock(E.cat([a, b]))
        loss.backward()
        return loss

    for _ in range(4):
        opt.step(closure)
    assert_close(E.cat([a, b]), lbfgs_reference(X0, 4, lr=0.1, max_iter=7, history_size=3))


def test_stops_at_a_minimum_without_moving():
    x = E.ones(4, dtype=E.float64).requires_grad_()
    opt = LBFGS([x])
    calls = []

    def closure():
        calls.append(1)
        opt.zero_grad()
        loss = rosenbrock(x)
        loss.backward()
        return loss

    opt.step(closure)
    assert len(calls) == 1 and np.array_equal(x.detach().numpy(), np.ones(4))


def test_cubic_minimizer_is_exact_for_a_cubic():
    f = lambda t: (t - 0.7) ** 2 * (t + 2.0)   # a local minimum at t = 0.7
    df = lambda t: 2 * (t - 0.7) * (t + 2.0) + (t - 0.7) ** 2
    assert cubic_minimizer(0.0, f(0.0), df(0.0), 1.5, f(1.5), df(1.5)) == pytest.approx(0.7)
    assert cubic_minimizer(1.5, f(1.5), df(1.5), 0.0, f(0.0), df(0.0)) == pytest.approx(0.7)
    assert cubic_minimizer(0.0, f(0.0), df(0.0), 1.5, f(1.5), df(1.5), bounds=(0.9, 2)) == 0.9
    # a monotone cubic (no minimizer): the bounds' midpoint
    assert cubic_minimizer(0.0, 0.0, 1.0, 1.0, 2 / 3, 1.0, bounds=(0.0, 1.0)) == 0.5


@pytest.mark.parametrize("t0", [1e-3, 1.0, 30.0])
def test_strong_wolfe_conditions_hold(t0):
    x0 = E.tensor(X0)
    g0 = E.tensor(rosenbrock_grad(X0))
    d = -g0
    f0, gtd = rosenbrock(X0), (g0 * d).sum().item()

    def evaluate(t):
        x = X0 + t * d.numpy()
        return rosenbrock(x), E.tensor(rosenbrock_grad(x))

    f, g, t, evals = strong_wolfe(evaluate, t0, d, f0, g0, gtd)
    assert f <= f0 + 1e-4 * t * gtd
    assert abs((g * d).sum().item()) <= -0.9 * gtd
    assert 1 <= evals <= 26 and x0.numpy().tolist() == X0.tolist()


def test_errors():
    p = E.zeros(2).requires_grad_()
    with pytest.raises(TypeError, match="requires a closure"):
        LBFGS([p]).step()
    with pytest.raises(ValueError, match="only 'strong_wolfe' is supported"):
        LBFGS([p], line_search_fn="backtracking")
    with pytest.raises(ValueError, match="doesn't support per-parameter options"):
        LBFGS([{"params": [p]}, {"params": [E.zeros(1).requires_grad_()]}])
    with pytest.raises(ValueError, match="Invalid learning rate"):
        LBFGS([p], lr=-1.0)
