"""The Python fronts of ember/functional.py: nonzero(as_tuple=...), unique and
unique_consecutive return what their flags ask for (values: test_data_dependent.py)."""
import numpy as np
import pytest

import ember as E


def test_nonzero_as_tuple_indexes_the_input():
    x = E.tensor([[0.0, 1.5], [2.0, 0.0], [0.0, -1.0]])
    idx = E.nonzero(x, as_tuple=True)
    assert isinstance(idx, tuple) and len(idx) == 2
    assert [i.tolist() for i in idx] == [list(a) for a in np.nonzero(x.numpy())]
    assert x[idx].tolist() == [1.5, 2.0, -1.0]
    assert x.nonzero(as_tuple=True)[1].dtype is E.int64
    assert isinstance(x.nonzero(), E.Tensor) and x.nonzero().shape == (3, 2)


def test_nonzero_as_tuple_of_0d_and_out():
    assert [t.tolist() for t in E.tensor(5).nonzero(as_tuple=True)] == [[0]]
    assert [t.tolist() for t in E.nonzero(E.tensor(0), as_tuple=True)] == [[]]
    with pytest.raises(TypeError, match="out= is not supported with as_tuple=True"):
        E.nonzero(E.ones(2), out=E.empty(0, dtype=E.int64), as_tuple=True)


@pytest.mark.parametrize("fn", ["unique", "unique_consecutive"])
def test_unique_fronts_return_what_the_flags_ask(fn):
    x = E.tensor([3, 1, 1, 2])
    front, method = getattr(E, fn), getattr(x, fn)
    assert isinstance(front(x), E.Tensor) and isinstance(method(), E.Tensor)
    assert len(front(x, return_inverse=True)) == 2
    assert len(method(return_counts=True)) == 2
    values, inverse, counts = front(x, return_inverse=True, return_counts=True)
    assert values[inverse].tolist() == x.tolist()  # the inverse rebuilds the input
    assert counts.sum().item() == 4
