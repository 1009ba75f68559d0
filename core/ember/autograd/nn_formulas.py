"""Backward helpers for the nn ops in ``derivatives.yaml`` (convolution, pooling, norms).

Like ``formulas/``, every helper is written with ember ops, so it is differentiable in
turn: the second derivative of a convolution is convolutions again.
"""
from __future__ import annotations

from ..ops import namespace as E


def convolution_double_backward(grads, grad_output, input, weight, stride, padding, dilation,
                                transposed, output_padding, groups, grad_input_mask):
    """The derivative of ``convolution_backward`` (the seeds' generic
    ``_convolution_double_backward``), built from ``_convolution`` and
    ``convolution_backward`` so it works for every algorithm and every order.

    A convolution is bilinear, ``y = B(x, w) + b``, and ``convolution_backward`` returns
    ``(B_x^T(gO, w), B_w^T(x, gO), sum(gO))``. Given gradients ``(ggI, ggW, ggb)`` of those:

    * w.r.t. ``grad_output``: ``B(ggI, w) + B(x, ggW) + ggb`` (broadcast over N, spatial);
    * w.r.t. ``input``: ``B_x^T(gO, ggW)``;
    * w.r.t. ``weight``: ``B_w^T(ggI, gO)``.

    ``grads`` may hold None where no gradient arrived; returns (ggO, gI, gW) with None
    where nothing flows. Shapes: those of grad_output, input and weight.
    """
    ggI, ggW, ggb = grads
    need_gO, need_input, need_weight = grad_input_mask
    conv = (stride, padding, dilation, transposed, output_padding, groups)
    ggO = gI = gW = None
    if need_gO:
        if ggI is not None:
            ggO = E._convolution(ggI, weight, None, *conv, False, False, True)
        if ggW is not None:
            part = E._convolution(input, ggW, None, *conv, False, False, True)
            ggO = part if ggO is None else ggO + part
        if ggb is not None:
            b = ggb.reshape((1, -1) + (1,) * (grad_output.ndim - 2))
            ggO = b.expand(grad_output.shape) if ggO is None else ggO + b
    if need_input and ggW is not None:
        gI = E.convolution_backward(grad_output, input, ggW, *conv, (True, False, False))[0]
    if need_weight and ggI is not None:
        gW = E.convolution_backward(grad_output, ggI, weight, *conv, (False, True, False))[1]
    return ggO, gI, gW


def max_pool_double_backward(grad, indices):
    """The derivative of ``max_pool2d_with_indices_backward`` w.r.t. grad_output: the
    incoming gradient (the input's shape, (.., H, W)) read at the saved flat positions
    ``indices`` (.., H_out, W_out), one gather per plane."""
    flat = grad.flatten(-2).gather(-1, indices.flatten(-2))
    return flat.reshape(indices.shape)


def nll_loss_weight_backward():
    """The gradient of the nll_loss kernels w.r.t. weight: not implemented (as in PyTorch).

    Raises NotImplementedError naming the way out: ``F.nll_loss`` and ``F.cross_entropy``
    differentiate weight, taking their op-by-op form when it requires grad.
    """
    raise NotImplementedError(
        "the derivative of nll_loss_forward / nll_loss_backward w.r.t. weight is not "
        "implemented; call ember.nn.functional.nll_loss or cross_entropy, which "
        "differentiate weight, or pass weight.detach()")
