"""Loss layers: forward against numpy references and the functional ops, options held as
attributes and buffers, reductions, repr."""
import numpy as np
import pytest
from helpers import assert_close, make

import ember as E
from ember import nn
from ember.nn import functional as F


def _logits():
    x, xn = make((4, 3), E.float64)
    t = E.tensor([0, 2, 1, 2])
    return x, xn, t, np.array([0, 2, 1, 2])


def _log_softmax(xn):
    z = xn - xn.max(1, keepdims=True)
    return z - np.log(np.exp(z).sum(1, keepdims=True))


def test_cross_entropy_and_nll():
    x, xn, t, tn = _logits()
    lp = _log_softmax(xn)
    picked = -lp[np.arange(4), tn]
    assert_close(nn.CrossEntropyLoss()(x, t), picked.mean())
    assert_close(nn.CrossEntropyLoss(reduction="sum")(x, t), picked.sum())
    assert_close(nn.CrossEntropyLoss(reduction="none")(x, t), picked)
    assert_close(nn.NLLLoss()(F.log_softmax(x, 1), t), picked.mean())
    w = np.array([1.0, 2.0, 0.5])
    ce = nn.CrossEntropyLoss(weight=E.tensor(w))
    assert_close(ce(x, t), (picked * w[tn]).sum() / w[tn].sum())
    ce_ls = nn.CrossEntropyLoss(label_smoothing=0.1, ignore_index=1)
    assert_close(ce_ls(x, t), F.cross_entropy(x, t, ignore_index=1, label_smoothing=0.1)
                 .detach().numpy())


def test_weight_is_a_buffer_that_moves_with_to():
    ce = nn.CrossEntropyLoss(weight=E.ones(3))
    assert list(ce.parameters()) == [] and list(ce.state_dict()) == ["weight"]
    ce.double()
    assert ce.weight.dtype is E.float64
    bce = nn.BCEWithLogitsLoss(pos_weight=E.ones(2))
    assert list(bce.state_dict()) == ["pos_weight"]  # None weight is left out


def test_regression_losses():
    x, xn = make((3, 4), E.float64, seed=1)
    y, yn = make((3, 4), E.float64, seed=2)
    d = xn - yn
    assert_close(nn.MSELoss()(x, y), (d ** 2).mean())
    assert_close(nn.L1Loss(reduction="sum")(x, y), np.abs(d).sum())
    beta = 0.5
    ad = np.abs(d)
    assert_close(nn.SmoothL1Loss(beta=beta)(x, y),
                 np.where(ad < beta, 0.5 * d ** 2 / beta, ad - 0.5 * beta).mean())


def test_binary_losses():
    p, pn = make((2, 3), E.float64, low=0.05, high=0.95, seed=3)
    t, tn = make((2, 3), E.float64, low=0.0, high=1.0, seed=4)
    bce = -(tn * np.log(pn) + (1 - tn) * np.log(1 - pn))
    assert_close(nn.BCELoss()(p, t), bce.mean())
    w = np.array([1.0, 2.0, 3.0])
    assert_close(nn.BCELoss(weight=E.tensor(w), reduction="sum")(p, t), (bce * w).sum())
    z, zn = make((2, 3), E.float64, seed=5)
    s = 1 / (1 + np.exp(-zn))
    ref = -(tn * np.log(s) + (1 - tn) * np.log(1 - s))
    assert_close(nn.BCEWithLogitsLoss()(z, t), ref.mean())
    pw = np.array([2.0, 1.0, 0.5])
    ref_pw = -(pw * tn * np.log(s) + (1 - tn) * np.log(1 - s))
    assert_close(nn.BCEWithLogitsLoss(pos_weight=E.tensor(pw))(z, t), ref_pw.mean())


def test_legacy_reduction_arguments():
    with pytest.warns(UserWarning, match="deprecated"):
        m = nn.MSELoss(size_average=False)
    assert m.reduction == "sum"
    with pytest.warns(UserWarning):
        assert nn.L1Loss(reduce=False).reduction == "none"


def test_loss_gradients_reach_model():
    model = nn.Linear(3, 3, dtype=E.float64)
    x, _, t, _ = _logits()
    nn.CrossEntropyLoss()(model(x), t).backward()
    assert model.weight.grad is not None


def test_repr():
    assert [repr(m) for m in (nn.CrossEntropyLoss(), nn.MSELoss(), nn.BCEWithLogitsLoss())] \
        == ["CrossEntropyLoss()", "MSELoss()", "BCEWithLogitsLoss()"]


def test_new_losses_match_their_functions():
    x, _ = make((4, 3), E.float64, low=-2, high=0, seed=1)
    y, _ = make((4, 3), E.float64, low=0.1, high=1, seed=2)
    v, _ = make((4, 3), E.float64, low=0.5, high=2, seed=3)
    lab = E.tensor([1.0, -1.0, 1.0, -1.0], dtype=E.float64)
    cases = [
        (nn.HuberLoss(delta=0.5), (x, y), F.huber_loss(x, y, delta=0.5)),
        (nn.KLDivLoss(reduction="batchmean", log_target=False), (x, y),
         F.kl_div(x, y, reduction="batchmean")),
        (nn.PoissonNLLLoss(log_input=False, full=True, reduction="sum"), (y, v),
         F.poisson_nll_loss(y, v, False, True, reduction="sum")),
        (nn.GaussianNLLLoss(full=True, eps=1e-3), (x, y, v),
         F.gaussian_nll_loss(x, y, v, True, 1e-3)),
        (nn.MarginRankingLoss(margin=0.2), (x[:, 0], y[:, 0], lab),
         F.margin_ranking_loss(x[:, 0], y[:, 0], lab, 0.2)),
        (nn.HingeEmbeddingLoss(margin=2.0, reduction="none"), (y, lab[:3]),
         F.hinge_embedding_loss(y, lab[:3], 2.0, reduction="none")),
        (nn.SoftMarginLoss(), (x, lab[:3]), F.soft_margin_loss(x, lab[:3])),
        (nn.CosineEmbeddingLoss(margin=0.1), (x, y, lab),
         F.cosine_embedding_loss(x, y, lab, 0.1)),
        (nn.TripletMarginLoss(margin=0.5, p=1.0, swap=True), (x, y, v),
         F.triplet_margin_loss(x, y, v, 0.5, 1.0, swap=True)),
    ]
    for module, args, expected in cases:
        assert_close(module(*args), expected.detach().numpy())


def test_new_losses_against_numpy():
    x, xn = make((4, 3), E.float64, seed=1)
    y, yn = make((4, 3), E.float64, seed=2)
    d = np.abs(xn - yn)
    assert_close(nn.HuberLoss(reduction="sum", delta=2.0)(x, y),
                 np.where(d < 2, 0.5 * d * d, 2 * (d - 1)).sum())
    assert_close(nn.SoftMarginLoss(reduction="none")(x, y), np.log1p(np.exp(-yn * xn)))
    with pytest.warns(UserWarning, match="batchmean"):
        kl = nn.KLDivLoss()(x, y.abs())
    assert_close(kl, (np.abs(yn) * (np.log(np.abs(yn)) - xn)).mean())


def test_new_losses_options_and_legacy_arguments():
    with pytest.warns(UserWarning, match="deprecated"):
        assert nn.SoftMarginLoss(size_average=False).reduction == "sum"
    with pytest.warns(UserWarning, match="deprecated"):
        assert nn.TripletMarginLoss(reduce=False).reduction == "none"
    with pytest.raises(ValueError, match="margin must be greater than 0"):
        nn.TripletMarginLoss(margin=0.0)
    with pytest.raises(TypeError):
        nn.GaussianNLLLoss(True)        # keyword-only, as PyTorch
    m = nn.PoissonNLLLoss(log_input=False, eps=1e-3)
    assert (m.log_input, m.full, m.eps, m.reduction) == (False, False, 1e-3, "mean")


def test_new_losses_repr():
    mods = (nn.HuberLoss(), nn.KLDivLoss(), nn.PoissonNLLLoss(), nn.GaussianNLLLoss(),
            nn.MarginRankingLoss(), nn.HingeEmbeddingLoss(), nn.SoftMarginLoss(),
            nn.CosineEmbeddingLoss(), nn.TripletMarginLoss())
    assert [repr(m) for m in mods] == [type(m).__name__ + "()" for m in mods]


# ---- extra losses: multi-class / multi-label margins, triplet with distance, CTC ------------

def test_multi_margin_loss_module():
    x, xn, t, tn = _logits()
    w = E.tensor([0.5, 1.0, 2.0], dtype=E.float64)
    m = nn.MultiMarginLoss(p=2, margin=0.5, weight=w, reduction="sum")
    assert "weight" in dict(m.named_buffers()) and not list(m.parameters())
    wn = w.numpy()
    ref = sum(max(0, 0.5 - xn[i, tn[i]] + xn[i, j]) ** 2 * wn[tn[i]]
              for i in range(4) for j in range(3) if j != tn[i]) / 3
    assert_close(m(x, t), np.array(ref))
    assert_close(m(x, t), F.multi_margin_loss(x, t, 2, 0.5, w, reduction="sum").numpy())
    with pytest.raises(ValueError, match="p == 1 and p == 2"):
        nn.MultiMarginLoss(p=3)
    with pytest.raises(ValueError, match="1-D weight"):
        nn.MultiMarginLoss(weight=E.ones(2, 3))


def test_multilabel_losses_modules():
    x, xn, _, _ = _logits()
    t = E.tensor([[0, -1, 0], [2, 1, -1], [1, -1, 2], [-1, 0, 0]])
    assert_close(nn.MultiLabelMarginLoss(reduction="none")(x, t),
                 F.multilabel_margin_loss(x, t, reduction="none").numpy())
    y = E.tensor([[1.0, 0, 1], [0, 0, 1], [1, 1, 1], [0, 0, 0]], dtype=E.float64)
    w = E.tensor([1.0, 2.0, 0.5], dtype=E.float64)
    m = nn.MultiLabelSoftMarginLoss(weight=w)
    assert "weight" in dict(m.named_buffers())
    yn = y.numpy()
    ref = (-(yn * -np.log1p(np.exp(-xn)) + (1 - yn) * -np.log1p(np.exp(xn))) * w.numpy())
    assert_close(m(x, y), ref.mean(1).mean())


def test_triplet_margin_with_distance_loss_module():
    a, _ = make((4, 3), E.float64, seed=1)
    p, _ = make((4, 3), E.float64, seed=2)
    n, _ = make((4, 3), E.float64, seed=3)

    def l1(x, y):
        return (x - y).abs().sum(-1)
    m = nn.TripletMarginWithDistanceLoss(distance_function=l1, margin=2.0, swap=True)
    assert_close(m(a, p, n), F.triplet_margin_with_distance_loss(
        a, p, n, distance_function=l1, margin=2.0, swap=True).numpy())
    with pytest.raises(ValueError, match="greater than 0"):
        nn.TripletMarginWithDistanceLoss(margin=0)
    with pytest.raises(TypeError):
        nn.TripletMarginWithDistanceLoss(None)          # keyword-only, as PyTorch


def test_ctc_loss_module_options():
    m = nn.CTCLoss(blank=2, reduction="none", zero_infinity=True)
    assert (m.blank, m.reduction, m.zero_infinity) == (2, "none", True)
    lp = F.log_softmax(make((3, 1, 3), E.float64)[0], 2)
    # target [0, 0] needs 3 frames (0 blank 0): possible; with 2 frames it is not
    assert np.isfinite(m(lp, E.tensor([[0, 0]]), [3], [2]).tolist()).all()
    assert m(lp, E.tensor([[0, 0]]), [2], [2]).tolist() == [0.0]
