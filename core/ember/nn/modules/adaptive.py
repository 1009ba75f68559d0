"""``AdaptiveLogSoftmaxWithLoss``: the adaptive softmax of Grave et al. (2017), "Efficient
softmax approximation for GPUs" (``torch.nn.AdaptiveLogSoftmaxWithLoss``).

The classes, sorted by frequency, are split at ``cutoffs`` into a shortlist (the head's
first ``cutoffs[0]`` outputs) and clusters; the head scores the shortlist plus one entry
per cluster, and cluster i has a tail ``Linear(in, in // div_value^(i+1)) -> Linear(.,
cluster size)``. log p(c) = head's log-prob of c for shortlisted c, else head's log-prob
of c's cluster plus the cluster's log-prob of c. Parameter names are PyTorch's
(``head.weight``, ``tail.0.0.weight``, ``tail.0.1.weight``, ...), so its state_dicts load.

Departure from PyTorch: forward builds the per-sample log-probabilities out of place
(``index_add``, not ``index_copy_`` into a preallocated buffer); values and gradients are
the same.
"""
from __future__ import annotations

from collections import namedtuple

import numpy as np

from ...ops import namespace as E
from .. import functional as F
from .container import ModuleList, Sequential
from .linear import Linear
from .module import Module

__all__ = ["AdaptiveLogSoftmaxWithLoss"]

_ASMoutput = namedtuple("_ASMoutput", ["output", "loss"])


class AdaptiveLogSoftmaxWithLoss(Module):
    """Adaptive softmax over ``n_classes`` classes sorted by decreasing frequency.

    Args:
        in_features: the size of each input sample.
        n_classes: the number of classes.
        cutoffs: increasing ints in [1, n_classes - 1] splitting the classes into the
            shortlist ``[0, cutoffs[0])`` and clusters ``[cutoffs[i], cutoffs[i + 1])``.
        div_value: each cluster's hidden size is ``in_features // div_value^(i + 1)``.
        head_bias: give the head a bias.
        device, dtype: where and how the parameters are created.
    ``forward(input, target)``: input ``(N, in_features)`` or ``(in_features,)``, target
    ``(N,)`` or ``()`` class indices -> ``_ASMoutput(output, loss)``: output ``(N,)`` (or
    ``()``) the target log-probabilities, loss the mean negative log-likelihood.
    Raises ValueError for bad cutoffs at construction; RuntimeError for shapes that do
    not fit or targets outside [0, n_classes) at forward.
    Reference: torch.nn.AdaptiveLogSoftmaxWithLoss (Grave et al., 2017).
    """

    def __init__(self, in_features: int, n_classes: int, cutoffs, div_value: float = 4.0,
                 head_bias: bool = False, device=None, dtype=None):
        super().__init__()
        cutoffs = list(cutoffs)
        if len(cutoffs) == 0:
            raise ValueError("cutoffs should be a sequence of length larger than 0")
        if (cutoffs != sorted(cutoffs) or min(cutoffs) <= 0 or max(cutoffs) > n_classes - 1
                or len(set(cutoffs)) != len(cutoffs) or any(int(c) != c for c in cutoffs)):
            raise ValueError(f"cutoffs should be a sequence of unique, positive integers "
                             f"sorted in an increasing order, where each value is between 1 "
                             f"and n_classes-1 = {n_classes - 1}; got {cutoffs}")
        self.in_features = in_features
        self.n_classes = n_classes
        self.cutoffs = cutoffs + [n_classes]
        self.div_value = div_value
        self.head_bias = head_bias
        self.shortlist_size = self.cutoffs[0]
        self.n_clusters = len(self.cutoffs) - 1
        self.head_size = self.shortlist_size + self.n_clusters
        kw = {"device": device, "dtype": dtype}
        self.head = Linear(in_features, self.head_size, bias=head_bias, **kw)
        self.tail = ModuleList()
        for i in range(self.n_clusters):
            hidden = int(in_features // (div_value ** (i + 1)))
            size = self.cutoffs[i + 1] - self.cutoffs[i]
            self.tail.append(Sequential(Linear(in_features, hidden, bias=False, **kw),
                                        Linear(hidden, size, bias=False, **kw)))

    def reset_parameters(self) -> None:
        """Re-initialise the head and every tail projection as Linear does."""
        self.head.reset_parameters()
        for i2h, h2o in self.tail:
            i2h.reset_parameters()
            h2o.reset_parameters()

    def forward(self, input_, target_):
        if target_.ndim == 1:
            if input_.shape[0] != target_.shape[0]:
                raise RuntimeError(f"AdaptiveLogSoftmaxWithLoss: input and target should have "
                                   f"the same size in the batch dimension, got "
                                   f"{tuple(input_.shape)} and {tuple(target_.shape)}")
            if input_.ndim != 2:
                raise RuntimeError(f"AdaptiveLogSoftmaxWithLoss: 1D target tensor expects 2D "
                                   f"input tensors, but found inputs with size "
                                   f"{tuple(input_.shape)}")
        elif target_.ndim == 0:
            if input_.ndim != 1:
                raise RuntimeError(f"AdaptiveLogSoftmaxWithLoss: 0D target tensor expects 1D "
                                   f"input tensors, but found inputs with size "
                                   f"{tuple(input_.shape)}")
        else:
            raise RuntimeError("AdaptiveLogSoftmaxWithLoss: 0D or 1D target tensor expected, "
                               "multi-target not supported")
        batched = target_.ndim > 0
        input = input_ if batched else input_.unsqueeze(0)
        target = target_ if batched else target_.unsqueeze(0)
        t = np.asarray(target.tolist(), dtype=np.int64)
        if t.size and (t.min() < 0 or t.max() >= self.n_classes):
            raise RuntimeError(f"Target values should be in [0, {self.n_classes - 1}], but "
                               f"values in range [{t.min()}, {t.max()}] were found.")
        dev = input.device
        output = E.zeros(t.shape[0], dtype=input.dtype, device=dev)
        # the head entry each sample reads: its class if shortlisted, else its cluster's
        head_index = t.copy()
        for i, (low, high) in enumerate(zip(self.cutoffs, self.cutoffs[1:])):
            rows = np.nonzero((t >= low) & (t < high))[0]
            if rows.size == 0:
                continue
            head_index[rows] = self.shortlist_size + i
            rows_t = E.tensor(rows, dtype=E.int64, device=dev)
            relative = E.tensor(t[rows] - low, dtype=E.int64, device=dev)
            cluster_logprob = F.log_softmax(self.tail[i](E.index_select(input, 0, rows_t)), 1)
            local = E.gather(cluster_logprob, 1, relative.unsqueeze(1)).squeeze(1)
            output = output.index_add(0, rows_t, local)
        head_logprob = F.log_softmax(self.head(input), 1)
        picked = E.gather(head_logprob, 1, E.tensor(head_index, dtype=E.int64,
                                                     device=dev).unsqueeze(1))
        output = output + picked.squeeze(1)
        loss = (-output).mean()
        return _ASMoutput(output if batched else output.squeeze(0), loss)

    def _get_full_log_prob(self, input, head_output):
        """log-probabilities of all n_classes: (B, n_classes)."""
        head_logprob = F.log_softmax(head_output, 1)
        pieces = [head_logprob[:, :self.shortlist_size]]
        for i in range(self.n_clusters):
            cluster_logprob = F.log_softmax(self.tail[i](input), 1)
            pieces.append(cluster_logprob
                          + head_logprob[:, self.shortlist_size + i].unsqueeze(1))
        return E.cat(pieces, 1)

    def log_prob(self, input):
        """Log-probabilities of every class: ``(N, in_features)`` -> ``(N, n_classes)``
        (``(in_features,)`` -> ``(n_classes,)``)."""
        batched = input.ndim > 1
        input = input if batched else input.unsqueeze(0)
        out = self._get_full_log_prob(input, self.head(input))
        return out if batched else out.squeeze(0)

    def predict(self, input):
        """The most likely class of each sample: ``(N, in_features)`` -> ``(N,)`` int64
        (``(in_features,)`` -> ``()``). Computes the full distribution only for samples
        whose head argmax is a cluster, as PyTorch."""
        batched = input.ndim > 1
        input = input if batched else input.unsqueeze(0)
        head_output = self.head(input)
        output = E.argmax(head_output, 1)
        outside = output >= self.shortlist_size
        if bool(outside.any()):
            rows = E.tensor(np.nonzero(np.asarray(outside.tolist()))[0], dtype=E.int64,
                            device=input.device)
            full = self._get_full_log_prob(E.index_select(input, 0, rows),
                                           E.index_select(head_output, 0, rows))
            output = output.index_put((rows,), E.argmax(full, 1))
        return output if batched else output.squeeze(0)
