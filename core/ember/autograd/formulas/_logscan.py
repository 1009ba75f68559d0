"""Backward of ``logcumsumexp`` (kernels/log_scan.py).

out_i = log sum_{j <= i} exp(x_j), so d out_i / d x_j = exp(x_j - out_i) for j <= i and
grad_x_j = sum_{i >= j} grad_i exp(x_j - out_i): a reversed cumulative sum. Written as
``exp(x_j + reverse_logcumsumexp(log(grad_i) - out_i))`` it never exponentiates a large
number; the positive and negative parts of grad go separately, since a log needs a
positive argument (TensorFlow's math_grad and PyTorch's logcumsumexp_backward do the same).
"""
from __future__ import annotations

from ...ops import namespace as E


def _reverse_logcumsumexp(x, dim):
    return x.flip([dim]).logcumsumexp(dim).flip([dim])


def logcumsumexp_backward(grad, self, result, dim):
    """``logcumsumexp``: grad (self's shape) -> the gradient w.r.t. self."""
    if grad.ndim == 0 or grad.numel() == 0:
        return grad
    # NOTE: log of 1 where grad is 0, so a double backward meets log'(1), not 0 * log'(0)
    log_abs = E.where(grad != 0, grad, 1).abs().log()
    # NOTE: the lowest finite value rather than -inf, as PyTorch: -inf - -inf would be NaN,
    # in this backward and in its own derivative
    lowest = E.finfo(grad.dtype).min
    out = []
    for part in (grad > 0, grad < 0):
        logs = E.where(part, log_abs, lowest)
        out.append((_reverse_logcumsumexp(logs - result, dim) + self).exp())
    return out[0] - out[1]
