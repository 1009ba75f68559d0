"""Activations that draw random numbers (``torch.nn.functional``): rrelu, the randomized
leaky ReLU (Xu et al., 2015), and gumbel_softmax, a differentiable sample from a
categorical distribution (Jang et al., 2017; Maddison et al., 2017).

``rrelu`` is a composite op (``native_functions.yaml``, section ``nn: extra losses, ...``;
a non-deterministic kind the JIT's CSE never merges): in training each element <= 0 is
multiplied by its own slope drawn uniformly from [lower, upper], in evaluation by the
mean slope (lower + upper) / 2, i.e. ``leaky_relu``. The output is one multiply
``input * slopes``, so the gradient is ``grad * slopes``. ``gumbel_softmax`` is, as in
PyTorch, a Python function over ember ops: softmax((logits + g) / tau) with Gumbel(0, 1)
noise g; ``hard`` returns the one-hot argmax with the soft sample's gradient
(straight-through). Random numbers come from ember's default generator (E.manual_seed
repeats them); the ``generator`` argument of torch.rrelu is not offered.
"""
from __future__ import annotations

import warnings

from ember.ops import namespace as E
from ember.errors import DtypeError
from ember.ops.composite import composite

__all__ = ["rrelu", "rrelu_", "gumbel_softmax"]


def _slopes(self, lower: float, upper: float, training: bool):
    """1 where self > 0, else the negative-part slope (drawn in training)."""
    if not self.is_floating_point():
        raise DtypeError(f"rrelu: expected a floating input, got {self.dtype}; convert it "
                         f"with .float()")
    if lower > upper:
        raise ValueError(f"rrelu: lower bound must be less than or equal to upper bound, got "
                         f"lower = {lower} and upper = {upper}")
    if training:
        slope = E.rand(tuple(self.shape), dtype=self.dtype, device=self.device) \
            * (upper - lower) + lower
    else:
        slope = (lower + upper) / 2
    return E.where(self > 0, E.ones_like(self), slope)


@composite("rrelu")
def _rrelu(self, lower, upper, training):
    lower, upper = float(lower), float(upper)
    if not training and self.is_floating_point() and lower <= upper:
        # the mean slope: leaky_relu, one kernel (and one node), the same values
        return E.leaky_relu(self, (lower + upper) / 2)
    return self * _slopes(self, lower, upper, training)


def rrelu(input, lower=1.0 / 8, upper=1.0 / 3, training=False, inplace=False):
    """Randomized leaky ReLU: input where input > 0, else a * input with a ~ U(lower,
    upper) drawn per element in training, a = (lower + upper) / 2 otherwise.

    Any shape, floating dtypes; inplace writes into input. Raises ValueError for lower >
    upper, DtypeError for an integral input.
    Reference: torch.nn.functional.rrelu (Xu et al., 2015).
    """
    if inplace:
        return rrelu_(input, lower, upper, training)
    return E.rrelu(input, lower, upper, training)


def rrelu_(input, lower=1.0 / 8, upper=1.0 / 3, training=False):
    """rrelu written into input (torch.nn.functional.rrelu_): one in-place multiply by the
    slopes, whose gradient is grad * slopes."""
    return input.mul_(_slopes(input, float(lower), float(upper), training))


def gumbel_softmax(logits, tau=1.0, hard=False, eps=1e-10, dim=-1):
    """A sample from the Gumbel-softmax (concrete) distribution over ``dim``:
    softmax((logits + g) / tau) with g ~ Gumbel(0, 1) i.i.d.

    logits: ``(*, num_features)`` unnormalized log-probabilities, floating. tau > 0 is
    the temperature. hard: the one-hot vector of the sample's argmax, with the gradient of
    the soft sample (straight-through: y_hard - y_soft.detach() + y_soft). eps is
    deprecated and unused (a warning when set), as in PyTorch. Returns logits' shape and
    dtype. Raises DtypeError for integral logits, IndexError for a dim out of range.
    Reference: torch.nn.functional.gumbel_softmax (Jang et al., 2017).
    """
    if eps != 1e-10:
        warnings.warn("gumbel_softmax: `eps` parameter is deprecated and has no effect.",
                      UserWarning, stacklevel=2)
    if not logits.is_floating_point():
        raise DtypeError(f"gumbel_softmax: expected floating logits, got {logits.dtype}")
    u = E.rand(tuple(logits.shape), dtype=logits.dtype, device=logits.device)
    # Exp(1) = -log(1 - u) for u in [0, 1); clamped so u = 0 gives a huge, finite g
    exponential = E.clamp_min(-E.log1p(-u), E.finfo(logits.dtype).tiny)
    gumbels = -E.log(exponential)
    y_soft = E.softmax((logits + gumbels) / tau, dim)
    if not hard:
        return y_soft
    index = y_soft.argmax(dim, keepdim=True)
    y_hard = E.zeros_like(logits).scatter(dim, index, 1.0)
    return y_hard - y_soft.detach() + y_soft
