"""``ember.random``'s module-level state functions (``core/ember/random.py``): seed,
initial_seed, get_rng_state / set_rng_state and fork_rng, as ``torch.random``'s."""
from __future__ import annotations

import numpy as np
import pytest

import ember as E
from ember import random as R


def draw(n=4):
    return E.rand(n, dtype=E.float64).numpy()


def test_get_and_set_rng_state_replay_the_stream():
    E.manual_seed(3)
    state = E.get_rng_state()
    assert state.dtype == E.uint8 and state.ndim == 1
    first = draw()
    E.set_rng_state(state)
    np.testing.assert_array_equal(draw(), first)


def test_rng_state_survives_save_and_load(tmp_path):
    E.manual_seed(4)
    E.save(E.get_rng_state(), tmp_path / "rng.pt")
    first = draw()
    E.set_rng_state(E.load(tmp_path / "rng.pt"))
    np.testing.assert_array_equal(draw(), first)


def test_set_rng_state_rejects_other_values():
    with pytest.raises(TypeError, match="expected a uint8 Tensor.*got list"):
        E.set_rng_state([1, 2])
    with pytest.raises(TypeError, match="got ember.float32"):
        E.set_rng_state(E.zeros(3))
    before = E.get_rng_state()
    with pytest.raises(RuntimeError, match="3 bytes given are not an ember generator state"):
        E.set_rng_state(E.zeros(3, dtype=E.uint8))
    np.testing.assert_array_equal(E.get_rng_state().numpy(), before.numpy())  # unchanged


def test_seed_and_initial_seed():
    E.manual_seed(123)
    assert E.initial_seed() == 123
    s = E.seed()
    assert isinstance(s, int) and E.initial_seed() == s
    first = draw()
    E.manual_seed(s)
    np.testing.assert_array_equal(draw(), first)


def test_fork_rng_restores_the_state():
    E.manual_seed(5)
    expected = draw()
    E.manual_seed(5)
    with R.fork_rng():
        draw(100)
    np.testing.assert_array_equal(draw(), expected)
    E.manual_seed(5)
    with R.fork_rng(enabled=False):
        draw()
    assert not np.array_equal(draw(), expected)


def test_fork_rng_restores_on_error_and_forks_other_device_types(alt):
    E.manual_seed(6)
    expected = E.rand(3, dtype=E.float64, device="alt").cpu().numpy()
    E.manual_seed(6)
    with pytest.raises(KeyError):
        with R.fork_rng(device_type="alt"):
            E.rand(3, device="alt")
            raise KeyError
    np.testing.assert_array_equal(E.rand(3, dtype=E.float64, device="alt").cpu().numpy(), expected)
    E.manual_seed(6)
    with R.fork_rng(devices=[], device_type="alt"):  # [] forks the cpu generator only
        E.rand(3, device="alt")
    assert not np.array_equal(E.rand(3, dtype=E.float64, device="alt").cpu().numpy(), expected)
