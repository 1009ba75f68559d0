"""RReLU: random slopes in training mode, the mean slope in eval mode, in place, repr."""
import numpy as np
from helpers import assert_close, make

import ember as E
from ember import nn


def test_rrelu_train_and_eval():
    x, xn = make((20, 30), E.float64)
    m = nn.RReLU(0.2, 0.4)
    E.manual_seed(7)
    slope = m(x).numpy() / xn
    neg = xn <= 0
    assert (slope[~neg] == 1).all() and ((slope[neg] >= 0.2) & (slope[neg] <= 0.4)).all()
    assert slope[neg].std() > 0.02                   # drawn per element
    m.eval()
    assert_close(m(x), np.where(xn > 0, xn, 0.3 * xn))


def test_rrelu_inplace_and_repr():
    x, xn = make((3, 4), E.float64)
    m = nn.RReLU(inplace=True).eval()
    assert m(x) is x
    assert_close(x, np.where(xn > 0, xn, xn * (1 / 8 + 1 / 3) / 2))
    assert repr(nn.RReLU(0.1, 0.3)) == "RReLU(lower=0.1, upper=0.3)"
    assert repr(nn.RReLU(inplace=True)) == \
        "RReLU(lower=0.125, upper=0.3333333333333333, inplace=True)"
