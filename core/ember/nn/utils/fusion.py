"""Fold an eval-mode BatchNorm into the convolution or linear layer before it
(``torch.nn.utils.fusion``): ``bn(conv(x)) == fused_conv(x)`` with one layer less."""
from __future__ import annotations

import copy

from ...autograd.grad_mode import no_grad
from ..parameter import Parameter

__all__ = ["fuse_conv_bn_eval", "fuse_conv_bn_weights", "fuse_linear_bn_eval",
           "fuse_linear_bn_weights"]


def _bn_scale(bn_rv, bn_eps, bn_w):
    """gamma / sqrt(running_var + eps), with gamma = 1 when the BatchNorm has no affine."""
    inv_std = (bn_rv + bn_eps).rsqrt()
    return inv_std if bn_w is None else bn_w * inv_std


def fuse_conv_bn_weights(conv_w, conv_b, bn_rm, bn_rv, bn_eps, bn_w, bn_b, transpose=False):
    """The weight and bias of one convolution equal to conv then BatchNorm (eval):
    ``w' = w * s`` per output channel, ``b' = (b - mean) * s + beta``, with
    ``s = gamma / sqrt(var + eps)``. ``conv_w``: (out, in / groups, *k), or
    (in, out / groups, *k) with ``transpose``; ``conv_b`` may be None; ``bn_w``/``bn_b``
    may be None (no affine). Returns ``(Parameter, Parameter)`` in conv_w's dtype.
    Reference: torch.nn.utils.fusion.fuse_conv_bn_weights.
    """
    with no_grad():
        if conv_b is None:
            conv_b = bn_rm.new_zeros(bn_rm.shape)
        bn_b = bn_rm.new_zeros(bn_rm.shape) if bn_b is None else bn_b
        scale = _bn_scale(bn_rv, bn_eps, bn_w)
        shape = [1] * conv_w.ndim
        shape[1 if transpose else 0] = -1
        weight = (conv_w * scale.reshape(shape)).to(conv_w.dtype)
        bias = ((conv_b - bn_rm) * scale + bn_b).to(conv_w.dtype)
    return Parameter(weight, conv_w.requires_grad), Parameter(bias, conv_b.requires_grad)


def fuse_conv_bn_eval(conv, bn, transpose: bool = False):
    """A copy of ``conv`` (Conv or ConvTranspose, eval mode) with ``bn`` (BatchNorm with
    running statistics, eval mode) folded in. Raises ValueError when either is in
    training mode. Reference: torch.nn.utils.fusion.fuse_conv_bn_eval."""
    if conv.training or bn.training:
        raise ValueError("Fusion only for eval! Call .eval() on both modules first")
    fused = copy.deepcopy(conv)
    if bn.running_mean is None or bn.running_var is None:
        raise ValueError("BatchNorm must track running statistics to be fused")
    fused.weight, fused.bias = fuse_conv_bn_weights(
        fused.weight, fused.bias, bn.running_mean, bn.running_var, bn.eps, bn.weight, bn.bias,
        transpose)
    return fused


def fuse_linear_bn_weights(linear_w, linear_b, bn_rm, bn_rv, bn_eps, bn_w, bn_b):
    """The weight (out, in) and bias (out,) of one Linear equal to Linear then BatchNorm1d
    (eval); rules as ``fuse_conv_bn_weights``. Returns ``(Parameter, Parameter)``.
    Reference: torch.nn.utils.fusion.fuse_linear_bn_weights."""
    return fuse_conv_bn_weights(linear_w, linear_b, bn_rm, bn_rv, bn_eps, bn_w, bn_b)


def fuse_linear_bn_eval(linear, bn):
    """A copy of ``linear`` (eval mode) with ``bn`` (BatchNorm1d over its out_features,
    eval mode) folded in. Raises ValueError in training mode or for mismatched sizes.
    Reference: torch.nn.utils.fusion.fuse_linear_bn_eval."""
    if linear.training or bn.training:
        raise ValueError("Fusion only for eval! Call .eval() on both modules first")
    if linear.out_features != bn.num_features:
        raise ValueError(f"To fuse, linear.out_features must equal bn.num_features: "
                         f"{linear.out_features} vs {bn.num_features}")
    return fuse_conv_bn_eval(linear, bn)
