"""Linear maps: ``linear`` and ``bilinear`` (``torch.nn.functional.linear`` / ``bilinear``).

Both are composite ops (``native_functions.yaml``, section "nn: linear, dropout, embedding,
padding") built from matmul-family ops, so autograd sees through them to any order.
``linear`` with a 2-D input and a bias is a single ``addmm`` (the training loops' hot
path); other ranks use ``matmul`` and add the bias. ``bilinear`` flattens the leading
dims, contracts input1 with the weight as one matmul and input2 as one batched matmul.
"""
from __future__ import annotations

from ember.ops import namespace as E
from ember.errors import ShapeError
from ember.ops.composite import composite

__all__ = ["linear", "bilinear"]


@composite("linear")
def _linear(input, weight, bias):
    if weight.ndim != 2:
        raise ShapeError(f"linear(): expected weight of shape (out_features, in_features), got "
                         f"{tuple(weight.shape)}")
    out_features, in_features = weight.shape
    if input.ndim == 0 or input.shape[-1] != in_features:
        raise ShapeError(f"linear(): expected input of shape (*, in_features) = (*, "
                         f"{in_features}) to match weight {tuple(weight.shape)}, got "
                         f"{tuple(input.shape)}")
    if bias is not None and bias.shape != (out_features,):
        raise ShapeError(f"linear(): expected bias of shape (out_features,) = "
                         f"({out_features},), got {tuple(bias.shape)}")
    if bias is not None and input.ndim == 2:
        return E.addmm(bias, input, weight.t())
    out = E.matmul(input, weight.t())
    return out if bias is None else out + bias


@composite("bilinear")
def _bilinear(input1, input2, weight, bias):
    if weight.ndim != 3:
        raise ShapeError(f"bilinear(): expected weight of shape (out_features, in1_features, "
                         f"in2_features), got {tuple(weight.shape)}")
    out_f, in1, in2 = weight.shape
    s1, s2 = tuple(input1.shape), tuple(input2.shape)
    if not s1 or not s2 or s1[-1] != in1 or s2[-1] != in2:
        raise ShapeError(f"bilinear(): expected input1 (*, {in1}) and input2 (*, {in2}) for "
                         f"weight {tuple(weight.shape)}, got input1 {s1} and input2 {s2}")
    if s1[:-1] != s2[:-1]:
        raise ShapeError(f"bilinear(): expected input1 and input2 to have the same leading "
                         f"dims, got input1 {s1} and input2 {s2}")
    if bias is not None and tuple(bias.shape) != (out_f,):
        raise ShapeError(f"bilinear(): expected bias of shape (out_features,) = ({out_f},), "
                         f"got {tuple(bias.shape)}")
    x1 = input1.reshape(-1, in1)
    x2 = input2.reshape(-1, in2)
    # (N, in1) @ (in1, out * in2): one matmul contracts input1 for every output feature
    w = weight.permute(1, 0, 2).reshape(in1, out_f * in2)
    t = E.matmul(x1, w).reshape(-1, out_f, in2)
    out = E.matmul(t, x2.unsqueeze(-1)).squeeze(-1)  # (N, out, in2) @ (N, in2, 1)
    if bias is not None:
        out = out + bias
    return out.reshape(s1[:-1] + (out_f,))


# The functional fronts are the generated op wrappers: the schema matches PyTorch's.
linear = E.linear
bilinear = E.bilinear

