"""Layers on a batch of 0 (issue 35, class 8): forward gives an empty output of the right
shape and backward gives every parameter a zero gradient (not None), as in PyTorch
(shapes recorded from torch 2.13). A data loader's last, partial batch and filtered
batches reach layers with N = 0."""
from __future__ import annotations

import pytest

import ember as E

nn = E.nn

CASES = {  # name -> (layer, input shape or kind, output shape)
    "Linear": (lambda: nn.Linear(4, 3), (0, 4), (0, 3)),
    "Conv1d": (lambda: nn.Conv1d(2, 3, 3), (0, 2, 5), (0, 3, 3)),
    "Conv2d": (lambda: nn.Conv2d(2, 3, 3, padding=1), (0, 2, 5, 5), (0, 3, 5, 5)),
    "Conv2d-1x1": (lambda: nn.Conv2d(2, 3, 1), (0, 2, 5, 5), (0, 3, 5, 5)),
    "Conv2d-groups": (lambda: nn.Conv2d(4, 6, 3, groups=2), (0, 4, 5, 5), (0, 6, 3, 3)),
    "ConvTranspose2d": (lambda: nn.ConvTranspose2d(2, 3, 2), (0, 2, 4, 4), (0, 3, 5, 5)),
    "Conv3d": (lambda: nn.Conv3d(1, 2, 2), (0, 1, 3, 3, 3), (0, 2, 2, 2, 2)),
    "Bilinear": (lambda: nn.Bilinear(4, 4, 3), "pair", (0, 3)),
    "MaxPool2d": (lambda: nn.MaxPool2d(2), (0, 2, 4, 4), (0, 2, 2, 2)),
    "AvgPool2d": (lambda: nn.AvgPool2d(2), (0, 2, 4, 4), (0, 2, 2, 2)),
    "AdaptiveAvgPool2d": (lambda: nn.AdaptiveAvgPool2d(2), (0, 2, 4, 4), (0, 2, 2, 2)),
    "AdaptiveMaxPool2d": (lambda: nn.AdaptiveMaxPool2d(2), (0, 2, 4, 4), (0, 2, 2, 2)),
    "BatchNorm1d-eval": (lambda: nn.BatchNorm1d(4).eval(), (0, 4), (0, 4)),
    "BatchNorm1d-train": (lambda: nn.BatchNorm1d(4), (0, 4), (0, 4)),
    "BatchNorm2d-train": (lambda: nn.BatchNorm2d(2), (0, 2, 3, 3), (0, 2, 3, 3)),
    "LayerNorm": (lambda: nn.LayerNorm(4), (0, 4), (0, 4)),
    "GroupNorm": (lambda: nn.GroupNorm(2, 4), (0, 4, 3), (0, 4, 3)),
    "InstanceNorm2d": (lambda: nn.InstanceNorm2d(2), (0, 2, 3, 3), (0, 2, 3, 3)),
    "LSTM": (lambda: nn.LSTM(4, 3, batch_first=True), (0, 5, 4), (0, 5, 3)),
    "GRU": (lambda: nn.GRU(4, 3, batch_first=True), (0, 5, 4), (0, 5, 3)),
    "RNN": (lambda: nn.RNN(4, 3, batch_first=True), (0, 5, 4), (0, 5, 3)),
    "MultiheadAttention": (lambda: nn.MultiheadAttention(4, 2, batch_first=True), "mha",
                           (0, 3, 4)),
    "MultiheadAttention-seq-first": (lambda: nn.MultiheadAttention(4, 2), "mha-seq",
                                     (3, 0, 4)),
    "TransformerEncoderLayer": (lambda: nn.TransformerEncoderLayer(4, 2, 8, batch_first=True),
                                (0, 3, 4), (0, 3, 4)),
    "TransformerDecoderLayer": (lambda: nn.TransformerDecoderLayer(4, 2, 8, batch_first=True),
                                "decoder", (0, 3, 4)),
    "Embedding": (lambda: nn.Embedding(10, 3), "indices", (0, 3, 3)),
    "EmbeddingBag": (lambda: nn.EmbeddingBag(10, 3), "indices", (0, 3)),
    "Upsample-nearest": (lambda: nn.Upsample(scale_factor=2), (0, 2, 3, 3), (0, 2, 6, 6)),
    "Upsample-bilinear": (lambda: nn.Upsample(scale_factor=2, mode="bilinear"),
                          (0, 2, 3, 3), (0, 2, 6, 6)),
    "Upsample-bicubic": (lambda: nn.Upsample(scale_factor=2, mode="bicubic"),
                         (0, 2, 3, 3), (0, 2, 6, 6)),
    "Unfold": (lambda: nn.Unfold(2), (0, 2, 4, 4), (0, 8, 9)),
    "Fold": (lambda: nn.Fold((3, 3), 2), (0, 8, 4), (0, 2, 3, 3)),
    "PReLU": (lambda: nn.PReLU(), (0, 4), (0, 4)),
    "ReflectionPad2d": (lambda: nn.ReflectionPad2d(1), (0, 2, 3, 3), (0, 2, 5, 5)),
    "Flatten": (lambda: nn.Flatten(), (0, 2, 3), (0, 6)),
    "Softmax": (lambda: nn.Softmax(-1), (0, 4), (0, 4)),
    "GELU": (lambda: nn.GELU(), (0, 4), (0, 4)),
}


def _run(layer, kind):
    if kind == "pair":
        x = E.rand(0, 4, requires_grad=True)
        return x, layer(x, x)
    if kind in ("mha", "mha-seq"):
        x = E.rand(*((0, 3, 4) if kind == "mha" else (3, 0, 4)), requires_grad=True)
        return x, layer(x, x, x)[0]
    if kind == "decoder":
        x = E.rand(0, 3, 4, requires_grad=True)
        return x, layer(x, E.rand(0, 2, 4))
    if kind == "indices":
        return None, layer(E.zeros(0, 3, dtype=E.int64))
    x = E.rand(*kind, requires_grad=True)
    return x, layer(x)


@pytest.mark.parametrize("name", sorted(CASES))
def test_a_layer_on_an_empty_batch(name):
    make, kind, shape = CASES[name]
    layer = make()
    x, out = _run(layer, kind)
    out = out[0] if isinstance(out, tuple) else out
    assert tuple(out.shape) == shape
    out.sum().backward()
    if x is not None:
        assert tuple(x.grad.shape) == tuple(x.shape)
    for p in layer.parameters():
        assert p.grad is not None, "a parameter the output depends on gets a zero gradient"
        assert p.grad.shape == p.shape and not p.grad.abs().sum().item()


@pytest.mark.parametrize("loss, target", [
    (nn.CrossEntropyLoss(reduction="sum"), lambda: E.zeros(0, dtype=E.int64)),
    (nn.MSELoss(reduction="sum"), lambda: E.rand(0, 5)),
])
def test_a_summed_loss_of_an_empty_batch_is_zero(loss, target):
    x = E.rand(0, 5, requires_grad=True)
    out = loss(x, target())
    out.backward()
    assert out.item() == 0.0 and x.grad.shape == x.shape


def test_batch_norm_on_an_empty_batch_leaves_the_running_statistics():
    bn = nn.BatchNorm1d(3)
    bn(E.rand(0, 3))
    assert bn.running_mean.tolist() == [0.0] * 3 and bn.running_var.tolist() == [1.0] * 3
    assert bn.num_batches_tracked.item() == 1  # counted, as PyTorch's module does
    with pytest.raises(E.ShapeError, match="more than 1 value per channel"):
        bn(E.rand(1, 3))
