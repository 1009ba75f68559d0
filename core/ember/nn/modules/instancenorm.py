"""Instance normalization layers: ``InstanceNorm1d/2d/3d`` (``torch.nn.InstanceNorm*``).

Each (sample, channel) plane is normalized over its own spatial positions. Unlike batch
norm, the defaults learn nothing and keep no statistics (``affine=False``,
``track_running_stats=False``). With ``track_running_stats`` the layer keeps PyTorch's
buffers ``running_mean`` (zeros), ``running_var`` (ones) and ``num_batches_tracked``
(int64 0, registered for state_dict compatibility but, as in PyTorch, never incremented:
``momentum=None`` freezes the running statistics instead of averaging them). Training
normalizes with instance statistics and updates the running ones; evaluation uses the
running ones when tracked. Unbatched input (no N) is accepted.
Reference: torch.nn.modules.instancenorm (Ulyanov et al., 2016).
"""
from __future__ import annotations

import warnings

from ... import factories as _f
from ... import types as _t
from .. import functional as F
from .module import Module
from .normalization import _affine_parameters, _reset_affine

__all__ = ["InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d"]


class _InstanceNorm(Module):
    _dims: tuple = ()  # accepted input ranks: (unbatched, batched)

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float | None = 0.1,
                 affine: bool = False, track_running_stats: bool = False, device=None,
                 dtype=None, *, bias: bool = True):
        super().__init__()
        self.num_features = num_features
        self.eps = eps
        self.momentum = momentum
        self.affine = affine
        self.track_running_stats = track_running_stats
        _affine_parameters(self, (num_features,), affine, bias, device, dtype)
        stats = track_running_stats
        self.register_buffer("running_mean", _f.zeros(num_features, device=device,
                                                      dtype=dtype) if stats else None)
        self.register_buffer("running_var", _f.ones(num_features, device=device,
                                                    dtype=dtype) if stats else None)
        self.register_buffer("num_batches_tracked", _f.zeros((), device=device,
                                                             dtype=_t.int64) if stats else None)
        self.reset_parameters()

    def reset_running_stats(self) -> None:
        """Running mean to 0, variance to 1, batch count to 0."""
        if self.track_running_stats:
            self.running_mean.zero_()
            self.running_var.fill_(1)
            self.num_batches_tracked.zero_()

    def reset_parameters(self) -> None:
        """Reset the running statistics, weight to ones and bias to zeros."""
        self.reset_running_stats()
        _reset_affine(self)

    def _check_input_dim(self, input) -> None:
        if input.ndim not in self._dims:
            a, b = self._dims
            raise ValueError(f"{type(self).__name__}: expected {a}D (unbatched) or {b}D input "
                             f"(got {input.ndim}D input of shape {list(input.shape)})")

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys,
                              unexpected_keys, error_msgs) -> None:
        # PyTorch's message for checkpoints from before 0.4, which saved running stats for
        # layers that no longer track them; the keys are dropped so only this one is shown.
        if not self.track_running_stats:
            keys = [prefix + n for n in ("running_mean", "running_var")
                    if prefix + n in state_dict]
            if keys:
                cls = type(self).__name__
                names = " and ".join(f'"{k}"' for k in keys)
                error_msgs.append(
                    f"Unexpected running stats buffer(s) {names} for {cls} with "
                    f"track_running_stats=False. If state_dict is a checkpoint saved before "
                    f"0.4.0, this may be expected because {cls} does not track running stats "
                    f"by default since 0.4.0. Please remove these keys from state_dict. If the "
                    f"running stats are actually needed, instead set track_running_stats=True "
                    f"in {cls} to enable them. See the documentation of {cls} for details.")
                state_dict = {k: v for k, v in state_dict.items() if k not in keys}
        elif prefix + "num_batches_tracked" not in state_dict:
            # as PyTorch for a state_dict without version metadata: checkpoints from before
            # the counter existed load, keeping the current count
            state_dict = {**state_dict, prefix + "num_batches_tracked": self.num_batches_tracked}
        super()._load_from_state_dict(state_dict, prefix, local_metadata, strict, missing_keys,
                                      unexpected_keys, error_msgs)

    def forward(self, input):
        self._check_input_dim(input)
        feature_dim = input.ndim - self._dims[0]
        if input.shape[feature_dim] != self.num_features:
            if self.affine:
                raise ValueError(f"{type(self).__name__}: expected input's size at "
                                 f"dim={feature_dim} to match num_features "
                                 f"({self.num_features}), but got: "
                                 f"{input.shape[feature_dim]}.")
            warnings.warn(f"input's size at dim={feature_dim} does not match num_features. "
                          f"You can silence this warning by not passing in num_features, "
                          f"which is not used because affine=False", stacklevel=2)
        unbatched = input.ndim == self._dims[0]
        x = input.unsqueeze(0) if unbatched else input
        out = F.instance_norm(x, self.running_mean, self.running_var, self.weight, self.bias,
                              self.training or not self.track_running_stats,
                              0.0 if self.momentum is None else self.momentum, self.eps)
        return out.squeeze(0) if unbatched else out

    def extra_repr(self) -> str:
        return (f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, "
                f"affine={self.affine}, bias={self.bias is not None}, "
                f"track_running_stats={self.track_running_stats}")


_IN_DOC = """Instance normalization over ``{shape}`` input: each sample's channel
    normalized over its {spatial}.

    Args:
        num_features: ``C`` (only checked against the input when ``affine``; otherwise a
            mismatch warns, as PyTorch).
        eps: added to the variance (default 1e-5).
        momentum: running-statistics update factor (default 0.1); None leaves them as they
            are.
        affine: learn a per-channel ``weight`` (ones) and ``bias`` (zeros) (default False).
        track_running_stats: keep ``running_mean`` / ``running_var`` and use them in eval
            mode (default False: instance statistics in both modes).
        device, dtype: where and how parameters and buffers are created.
        bias (keyword): learn the shift when ``affine`` (default True).
    Shapes: output = input's shape and dtype.
    Raises ValueError for an input of another rank, a channel count other than
    ``num_features`` when ``affine``, and (from ``F.instance_norm``) one spatial element
    in training. Reference: torch.nn.{name}.
    """


class InstanceNorm1d(_InstanceNorm):
    __doc__ = _IN_DOC.format(shape="(N, C, L) or (C, L)", spatial="L positions",
                             name="InstanceNorm1d")
    _dims = (2, 3)


class InstanceNorm2d(_InstanceNorm):
    __doc__ = _IN_DOC.format(shape="(N, C, H, W) or (C, H, W)", spatial="H * W positions",
                             name="InstanceNorm2d")
    _dims = (3, 4)


class InstanceNorm3d(_InstanceNorm):
    __doc__ = _IN_DOC.format(shape="(N, C, D, H, W) or (C, D, H, W)",
                             spatial="D * H * W positions", name="InstanceNorm3d")
    _dims = (4, 5)
