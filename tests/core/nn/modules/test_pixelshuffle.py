"""PixelShuffle, PixelUnshuffle, ChannelShuffle: forward against numpy reshapes, repr."""
import numpy as np
from helpers import assert_close, make

import ember as E
from ember import nn


def test_pixel_shuffle_and_unshuffle():
    x, xn = make((2, 8, 2, 3), E.float32)
    ref = xn.reshape(2, 2, 2, 2, 2, 3).transpose(0, 1, 4, 2, 5, 3).reshape(2, 2, 4, 6)
    out = nn.PixelShuffle(2)(x)
    assert_close(out, ref)
    assert_close(nn.PixelUnshuffle(2)(out), xn)


def test_channel_shuffle():
    x, xn = make((2, 6, 3), E.float64)
    ref = xn.reshape(2, 2, 3, 3).transpose(0, 2, 1, 3).reshape(2, 6, 3)
    assert_close(nn.ChannelShuffle(2)(x), ref)
    assert np.array_equal(nn.ChannelShuffle(1)(x).numpy(), xn)


def test_repr():
    assert repr(nn.PixelShuffle(3)) == "PixelShuffle(upscale_factor=3)"
    assert repr(nn.PixelUnshuffle(2)) == "PixelUnshuffle(downscale_factor=2)"
    assert repr(nn.ChannelShuffle(4)) == "ChannelShuffle(groups=4)"
