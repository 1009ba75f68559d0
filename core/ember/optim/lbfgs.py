"""``LBFGS``: limited-memory BFGS (``torch.optim.LBFGS``)."""
from __future__ import annotations

from ..autograd.grad_mode import enable_grad, no_grad
from ..ops.namespace import cat  # generated op, installed before ember imports optim
from .line_search import strong_wolfe
from ..tensor import Tensor
from .optimizer import Optimizer, check_hparam

__all__ = ["LBFGS"]


class LBFGS(Optimizer):
    r"""L-BFGS: quasi-Newton steps from the last ``history_size`` gradient differences.

    Each ``step(closure)`` runs up to ``max_iter`` iterations on the flattened parameters
    ``x`` (all parameters concatenated, float): the direction ``d = -H g`` comes from the
    two-loop recursion over the stored pairs ``s = x_{k+1} - x_k``, ``y = g_{k+1} - g_k``
    (a pair is kept only when ``y . s > 1e-10``; H starts as ``(y . s) / (y . y)`` times
    the identity), then ``x = x + t d``, with ``t = lr`` (the first iteration ever:
    ``min(1, 1 / |g|_1) * lr``) or the step of a strong Wolfe line search. It stops early
    when ``max(|g|) <= tolerance_grad``, when the step or the loss changes by less than
    ``tolerance_change``, or after ``max_eval`` closure calls. The history carries over
    from one ``step`` to the next.

    Args:
        params: the tensors to optimize; one group only (no per-parameter options).
        lr: learning rate, >= 0 (default 1); a float or a one-element Tensor.
        max_iter: iterations per ``step`` (default 20).
        max_eval: closure calls per ``step`` (default ``max_iter * 5 // 4``).
        tolerance_grad: first-order optimality tolerance (default 1e-7).
        tolerance_change: tolerance on step and loss changes (default 1e-9).
        history_size: the number of (s, y) pairs kept (default 100); memory grows by
            ``2 * history_size`` flat copies of the parameters.
        line_search_fn: None (fixed steps) or ``"strong_wolfe"``.

    ``step(closure)`` requires the closure: it zeroes the gradients, computes the loss,
    calls ``backward()`` and returns the loss. ``step`` returns the loss of its first
    closure call. State (on the first parameter): ``"func_evals"``, ``"n_iter"`` and the
    history (``"d"``, ``"t"``, ``"old_dirs"``, ``"old_stps"``, ``"ro"``, ``"H_diag"``,
    ``"prev_flat_grad"``, ``"prev_loss"``), as PyTorch keeps it.

    Raises:
        ValueError: lr negative, more than one parameter group, or an unknown
            ``line_search_fn``.
        TypeError: ``step`` called without a closure.

    Reference: torch.optim.LBFGS (after Schmidt's minFunc); Nocedal & Wright,
    "Numerical Optimization" (2nd ed., 2006), Algorithm 7.4 (two-loop recursion).
    """

    def __init__(self, params, lr: float = 1, max_iter: int = 20, max_eval: int | None = None,
                 tolerance_grad: float = 1e-7, tolerance_change: float = 1e-9,
                 history_size: int = 100, line_search_fn: str | None = None) -> None:
        check_hparam("lr", lr, label="learning rate", tensor_ok=True)
        if line_search_fn not in (None, "strong_wolfe"):
            raise ValueError(f"only 'strong_wolfe' is supported as line_search_fn, got "
                             f"{line_search_fn!r}; pass None for fixed steps of size lr")
        if max_eval is None:
            max_eval = max_iter * 5 // 4
        defaults = {"lr": lr, "max_iter": max_iter, "max_eval": max_eval,
                    "tolerance_grad": tolerance_grad, "tolerance_change": tolerance_change,
                    "history_size": history_size, "line_search_fn": line_search_fn}
        super().__init__(params, defaults)
        if len(self.param_groups) != 1:
            raise ValueError("LBFGS doesn't support per-parameter options (parameter "
                             "groups); pass one list of tensors")
        self._params = self.param_groups[0]["params"]

    # --- the parameters as one flat vector ------------------------------------------------
    def _flat_grad(self):
        return cat([p.new_zeros(p.numel()) if p.grad is None else p.grad.reshape(-1)
                    for p in self._params])

    def _add_step(self, t: float, d) -> None:
        offset = 0
        for p in self._params:
            n = p.numel()
            p.add_(d[offset:offset + n].view_as(p), alpha=t)
            offset += n

    def _evaluate(self, closure) -> float:
        with enable_grad():
            return float(closure())

    def step(self, closure=None):
        """Run up to ``max_iter`` L-BFGS iterations; return the first closure's loss.

        Raises TypeError without a closure (L-BFGS must re-evaluate the loss).
        """
        if closure is None:
            raise TypeError("LBFGS.step requires a closure that zeroes the gradients, "
                            "computes the loss, calls backward() and returns the loss")
        with no_grad():
            return self._step(closure)

    def _step(self, closure):
        group = self.param_groups[0]
        lr, max_iter, max_eval = group["lr"], group["max_iter"], group["max_eval"]
        lr = lr.item() if isinstance(lr, Tensor) else lr   # PyTorch's tensor lr
        tol_grad, tol_change = group["tolerance_grad"], group["tolerance_change"]
        state = self.state[self._params[0]]
        state.setdefault("func_evals", 0)
        state.setdefault("n_iter", 0)

        with enable_grad():
            orig_loss = closure()
        loss = float(orig_loss)
        evals = 1
        state["func_evals"] += 1
        flat_grad = self._flat_grad()
        if flat_grad.abs().max().item() <= tol_grad:
            return orig_loss

        d, t = state.get("d"), state.get("t")
        old_dirs, old_stps, ro = state.get("old_dirs"), state.get("old_stps"), state.get("ro")
        h_diag, prev_flat_grad = state.get("H_diag"), state.get("prev_flat_grad")
        prev_loss = state.get("prev_loss")
        for n_iter in range(1, max_iter + 1):
            state["n_iter"] += 1
            if state["n_iter"] == 1:
                d, old_dirs, old_stps, ro, h_diag = flat_grad.neg(), [], [], [], 1
            else:
                h_diag = self._remember(flat_grad - prev_flat_grad, d.mul(t), old_dirs,
                                        old_stps, ro, group["history_size"], h_diag)
                d = _two_loop(flat_grad, old_dirs, old_stps, ro, h_diag)
            prev_flat_grad = flat_grad.clone()
            prev_loss = loss
            if state["n_iter"] == 1:
                t = min(1.0, 1.0 / flat_grad.abs().sum().item()) * lr
            else:
                t = lr
            gtd = flat_grad.dot(d).item()
            if gtd > -tol_change:  # not a descent direction
                break

            if group["line_search_fn"] == "strong_wolfe":
                start = [p.clone() for p in self._params]

                def evaluate(step):
                    self._add_step(step, d)
                    value = self._evaluate(closure)
                    grad = self._flat_grad()
                    for p, x in zip(self._params, start):
                        p.copy_(x)
                    return value, grad

                loss, flat_grad, t, used = strong_wolfe(evaluate, t, d, loss, flat_grad, gtd,
                                                        max_ls=max_eval - evals)
                self._add_step(t, d)
                converged = flat_grad.abs().max().item() <= tol_grad
            else:
                self._add_step(t, d)
                used, converged = 0, False
                if n_iter != max_iter:  # the last iteration's loss is left for the next step
                    loss = self._evaluate(closure)
                    flat_grad = self._flat_grad()
                    converged = flat_grad.abs().max().item() <= tol_grad
                    used = 1
            evals += used
            state["func_evals"] += used
            if (n_iter == max_iter or evals >= max_eval or converged
                    or d.abs().max().item() * abs(t) <= tol_change
                    or abs(loss - prev_loss) < tol_change):
                break

        state.update(d=d, t=t, old_dirs=old_dirs, old_stps=old_stps, ro=ro, H_diag=h_diag,
                     prev_flat_grad=prev_flat_grad, prev_loss=prev_loss)
        return orig_loss

    @staticmethod
    def _remember(y, s, old_dirs, old_stps, ro, history_size, h_diag):
        """Store the pair (s, y) if it keeps H positive definite (y . s > 1e-10),
        dropping the oldest beyond ``history_size``; return the new initial scale."""
        ys = y.dot(s).item()
        if ys <= 1e-10:
            return h_diag
        if len(old_dirs) == history_size:
            del old_dirs[0], old_stps[0], ro[0]
        old_dirs.append(y)
        old_stps.append(s)
        ro.append(1.0 / ys)
        return ys / y.dot(y).item()


def _two_loop(flat_grad, old_dirs, old_stps, ro, h_diag):
    """``-H g`` by the two-loop recursion (Nocedal & Wright, Algorithm 7.4)."""
    q = flat_grad.neg()
    alphas = [0.0] * len(old_dirs)
    for i in reversed(range(len(old_dirs))):
        alphas[i] = old_stps[i].dot(q).item() * ro[i]
        q.add_(old_dirs[i], alpha=-alphas[i])
    r = q.mul_(h_diag)
    for i in range(len(old_dirs)):
        beta = old_dirs[i].dot(r).item() * ro[i]
        r.add_(old_stps[i], alpha=alphas[i] - beta)
    return r
