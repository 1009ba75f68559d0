"""Packing and padding of variable-length sequences (``ember/nn/utils/rnn.py``) against
loops over numpy arrays in float64, round trips, gradients (gradcheck) and errors.
Reference: torch.nn.utils.rnn."""
from __future__ import annotations

import numpy as np
import pytest

import ember as E
from ember.autograd import gradcheck
from ember.nn.utils.rnn import PackedSequence, pack_padded_sequence, pack_sequence, \
    pad_packed_sequence, pad_sequence, unpack_sequence, unpad_sequence
from helpers import assert_close

rng = np.random.default_rng(0)


def np_pack(padded, lengths):
    """The packed rows, time step after time step, longest sequence first (stable)."""
    order = sorted(range(len(lengths)), key=lambda b: -lengths[b])
    rows, sizes = [], []
    for t in range(max(lengths)):
        running = [b for b in order if lengths[b] > t]
        sizes.append(len(running))
        rows += [padded[t, b] for b in running]
    return np.stack(rows), sizes, order


@pytest.mark.parametrize("lengths,sorted_", [([4, 4, 2, 1], True), ([2, 5, 3], False),
                                              ([1], True), ([3, 1, 3, 2], False)])
@pytest.mark.parametrize("batch_first", [False, True])
def test_pack_padded_matches_a_loop(lengths, sorted_, batch_first):
    steps = max(lengths) + 1           # a padding step no sequence reaches
    padded = rng.standard_normal((steps, len(lengths), 2))
    x = E.tensor(padded.swapaxes(0, 1) if batch_first else padded)
    p = pack_padded_sequence(x, lengths, batch_first=batch_first, enforce_sorted=sorted_)
    rows, sizes, order = np_pack(padded, lengths)
    assert isinstance(p, PackedSequence)
    assert_close(p.data, rows)
    assert p.batch_sizes.tolist() == sizes and p.batch_sizes.dtype == E.int64
    if sorted_:
        assert p.sorted_indices is None and p.unsorted_indices is None
    else:
        assert p.sorted_indices.tolist() == order
        assert p.unsorted_indices.tolist() == np.argsort(order).tolist()
    back, lens = pad_packed_sequence(p, batch_first=batch_first, padding_value=-7.0)
    assert lens.tolist() == list(lengths)
    want = padded[:max(lengths)].copy()
    for b, n in enumerate(lengths):
        want[n:, b] = -7.0
    assert_close(back, want.swapaxes(0, 1) if batch_first else want)


def test_lengths_as_a_tensor_and_total_length():
    x = E.tensor(rng.standard_normal((3, 2)))
    p = pack_padded_sequence(x, E.tensor([3, 1]))
    padded, lens = pad_packed_sequence(p, total_length=5)
    assert padded.shape == (5, 2) and lens.tolist() == [3, 1]
    assert_close(padded[3:], np.zeros((2, 2)))
    with pytest.raises(ValueError, match="total_length=2 and max sequence length being 3"):
        pad_packed_sequence(p, total_length=2)


@pytest.mark.parametrize("side", ["right", "left"])
@pytest.mark.parametrize("batch_first", [False, True])
def test_pad_sequence_against_numpy(side, batch_first):
    seqs = [rng.standard_normal((n, 2)) for n in (2, 4, 1)]
    got = pad_sequence([E.tensor(s) for s in seqs], batch_first=batch_first,
                       padding_value=9.0, padding_side=side)
    want = np.full((3, 4, 2), 9.0)
    for b, s in enumerate(seqs):
        if side == "right":
            want[b, :len(s)] = s
        else:
            want[b, 4 - len(s):] = s
    assert_close(got, want if batch_first else want.swapaxes(0, 1))
    if side == "right":
        for u, s in zip(unpad_sequence(got, [2, 4, 1], batch_first), seqs):
            assert_close(u, s)


def test_pack_sequence_round_trip_keeps_the_order():
    seqs = [E.tensor(rng.standard_normal((n, 3))) for n in (2, 5, 3)]
    out = unpack_sequence(pack_sequence(seqs, enforce_sorted=False))
    for a, b in zip(out, seqs):
        assert_close(a, b.numpy())


def test_packing_and_unpacking_are_differentiable():
    x = E.tensor(rng.standard_normal((4, 3, 2)), requires_grad=True)
    lengths = [2, 4, 1]

    def f(x):
        p = pack_padded_sequence(x, lengths, enforce_sorted=False)
        return pad_packed_sequence(PackedSequence(p.data * p.data, *p[1:]))[0]
    assert gradcheck(f, (x,))
    seqs = [E.tensor(rng.standard_normal((n,)), requires_grad=True) for n in (3, 1)]
    assert gradcheck(lambda a, b: pad_sequence([a, b], padding_value=2.0), tuple(seqs))


def test_to_moves_data_and_keeps_batch_sizes():
    p = pack_sequence([E.tensor([1.0, 2.0]), E.tensor([3.0])])
    q = p.double()
    assert q.data.dtype == E.float64 and q.batch_sizes is p.batch_sizes
    assert p.to(E.float32) is p and not p.is_cuda


def test_errors():
    x = E.zeros(3, 2)
    with pytest.raises(RuntimeError, match="sorted in decreasing order.*enforce_sorted=False"):
        pack_padded_sequence(x, [1, 3])
    with pytest.raises(RuntimeError, match="greater than 0"):
        pack_padded_sequence(x, [3, 0])
    with pytest.raises(ValueError, match="length of 4 exceeds the input's 3 time steps"):
        pack_padded_sequence(x, [4, 1])
    with pytest.raises(ValueError, match="expected 2 lengths"):
        pack_padded_sequence(x, [3])
    with pytest.raises(TypeError, match="integer"):
        pack_padded_sequence(x, E.tensor([3.0, 1.0]))
    with pytest.raises(RuntimeError, match="empty list"):
        pad_sequence([])
    with pytest.raises(RuntimeError, match="sequence 1 has shape \\[2, 3\\]"):
        pad_sequence([E.zeros(2, 2), E.zeros(2, 3)])
    with pytest.raises(ValueError, match="padding_side"):
        pad_sequence([E.zeros(2)], padding_side="top")
