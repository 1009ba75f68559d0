"""Dropout: train/eval behaviour, scaling, errors, repr."""
import numpy as np
import pytest
from helpers import to_np

import ember as E
from ember import nn


def test_dropout_train_and_eval():
    E.manual_seed(0)
    m = nn.Dropout(0.25)
    x = E.ones(200, 100)
    y = to_np(m(x))
    kept = y != 0
    np.testing.assert_allclose(y[kept], 1 / 0.75)
    assert abs(kept.mean() - 0.75) < 0.02
    m.eval()
    assert to_np(m(x)).tolist() == to_np(x).tolist()


def test_dropout_extremes_and_errors():
    x = E.ones(3)
    assert to_np(nn.Dropout(0.0)(x)).tolist() == [1, 1, 1]
    assert to_np(nn.Dropout(1.0)(x)).tolist() == [0, 0, 0]
    with pytest.raises(ValueError, match="between 0 and 1"):
        nn.Dropout(1.5)


def test_repr():
    assert repr(nn.Dropout()) == "Dropout(p=0.5, inplace=False)"


@pytest.mark.parametrize("cls, shape", [(nn.Dropout1d, (4, 8, 5)), (nn.Dropout2d, (4, 8, 3, 3)),
                                        (nn.Dropout3d, (4, 8, 2, 2, 2))])
def test_channel_dropout_train_and_eval(cls, shape):
    E.manual_seed(0)
    m = cls(0.5)
    y = to_np(m(E.ones(*shape))).reshape(shape[0], shape[1], -1)
    assert np.all(y == y[..., :1]) and set(np.unique(y)) == {0.0, 2.0}
    m.eval()
    np.testing.assert_array_equal(to_np(m(E.ones(*shape))), np.ones(shape))
    assert repr(m) == f"{cls.__name__}(p=0.5, inplace=False)"


@pytest.mark.parametrize("cls", [nn.AlphaDropout, nn.FeatureAlphaDropout])
def test_alpha_dropout_modules(cls):
    E.manual_seed(0)
    m = cls(0.2)
    x = E.ones(4, 6, 3)
    out = to_np(m(x))
    assert not np.array_equal(out, np.ones((4, 6, 3)))  # training: changed
    m.eval()
    assert m(x) is x
    with pytest.raises(ValueError, match="between 0 and 1"):
        cls(-0.1)
