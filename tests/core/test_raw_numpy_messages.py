"""No raw numpy message without the op's name (issue 35, class 14): factories and loaders.

Negative sizes in every factory, sizes whose bytes overflow the address space (PyTorch:
"Storage size calculation overflowed"), sizes that do not fit in memory (PyTorch: "can't
allocate memory: you tried to allocate N bytes"), ``arange`` with more elements than a
tensor holds ("invalid size, possible overflow?") or a bound that is not finite
("unsupported range"), ``eye(-1)`` ("n must be greater or equal to 0, got -1") and
``DataLoader(None)``: each names the op and what was given. Writes into read-only memory
are in tests/core/ops/test_argument_errors.py.
"""
import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ember as E
from ember.errors import ShapeError
from ember.ops import FUNCTIONS, codegen
from ember.utils.data import DataLoader, IterableDataset, TensorDataset

# factory name -> a call making a tensor of `size` (a tuple of ints)
SIZED = {
    "zeros": lambda s: E.zeros(s),
    "ones": lambda s: E.ones(*s),
    "empty": lambda s: E.empty(s),
    "full": lambda s: E.full(s, 2.0),
    "rand": lambda s: E.rand(s),
    "randn": lambda s: E.randn(*s),
    "randint": lambda s: E.randint(0, 5, s),
}
# one-dimensional factories: name -> a call making `n` elements
COUNTED = {
    "eye": lambda n: E.eye(n),
    "linspace": lambda n: E.linspace(0, 1, n),
    "logspace": lambda n: E.logspace(0, 1, n),
    "randperm": lambda n: E.randperm(n),
    "arange": lambda n: E.arange(n),
}


@settings(max_examples=40, deadline=None)
@given(name=st.sampled_from(sorted(SIZED)),
       size=st.lists(st.integers(-3, 3), min_size=1, max_size=4)
       .filter(lambda s: any(d < 0 for d in s)))
def test_negative_sizes_name_the_factory(name, size):
    with pytest.raises(ShapeError, match=re.escape(
            f"{name}(): negative dimension in size {size}; sizes must be >= 0")):
        SIZED[name](tuple(size))


@pytest.mark.parametrize("call, words", [
    (lambda: E.eye(-1), "eye(): n must be greater or equal to 0, got -1"),
    (lambda: E.eye(3, -2), "eye(): m must be greater or equal to 0, got -2"),
    (lambda: E.linspace(0, 1, -1), "linspace(): number of steps must be non-negative"),
    (lambda: E.logspace(0, 1, -1), "logspace(): number of steps must be non-negative"),
    (lambda: E.randperm(-1), "randperm(): n must be non-negative"),
    (lambda: E.ones(2).new_zeros(2, -1), "new_zeros(): negative dimension"),
])
def test_negative_counts_name_the_factory(call, words):
    with pytest.raises(ValueError, match=re.escape(words)):
        call()


def test_negative_sizes_are_runtime_errors_as_in_pytorch_and_value_errors_as_before():
    for call in (lambda: E.eye(-1), lambda: E.zeros(-1)):
        with pytest.raises(RuntimeError):
            call()
        with pytest.raises(ValueError):
            call()


_HUGE = [(2 ** 63,), (2 ** 62,), (2 ** 31, 2 ** 31), (2 ** 40, 2 ** 40), (2 ** 62, 4),
         (3, 2 ** 61, 7)]


@pytest.mark.parametrize("size", _HUGE, ids=str)
@pytest.mark.parametrize("name", sorted(SIZED))
def test_sizes_that_overflow_the_address_space_name_op_and_size(name, size):
    with pytest.raises(ShapeError, match=re.escape(f"{name}(): size {list(size)} of ")) as info:
        SIZED[name](size)
    msg = str(info.value)
    assert "is too large" in msg and "storage size calculation overflowed" in msg
    assert f"{int(np.prod(size, dtype=object))} elements" in msg
    assert "pass a smaller size" in msg


@pytest.mark.parametrize("name", sorted(COUNTED))
def test_counts_that_overflow_name_the_factory(name):
    with pytest.raises(ShapeError, match=re.escape(f"{name}()")) as info:
        COUNTED[name](2 ** 63 if name != "eye" else 2 ** 40)
    assert "too large" in str(info.value) or "more than a tensor can hold" in str(info.value)


@pytest.fixture
def no_memory(monkeypatch):
    """The cpu backend's factory kernels raise MemoryError, as numpy does for a size the
    machine cannot hold (deterministic: a real 4 TiB request may succeed lazily where the
    kernel overcommits)."""
    from ember.backends import registry
    b = registry.get_backend("cpu")
    kernels = dict(b.kernels)

    def fail(*args, **kwargs):
        raise MemoryError("Unable to allocate 4.00 TiB for an array")

    for k in ("empty", "full", "arange", "linspace", "eye", "rand", "randn", "randint",
              "logspace", "randperm"):
        monkeypatch.setitem(b.kernels, k, fail)
    yield
    b.kernels.update(kernels)


@pytest.mark.parametrize("name", sorted(SIZED))
def test_out_of_memory_names_op_size_and_bytes(no_memory, name):
    size = (2 ** 20, 2 ** 20)
    with pytest.raises(MemoryError, match=re.escape(
            f"{name}(): can't allocate memory: you tried to allocate ")) as info:
        SIZED[name](size)
    msg = str(info.value)
    assert f"for size {list(size)} of " in msg and "bytes (" in msg and "TiB)" in msg


@pytest.mark.parametrize("name", sorted(COUNTED))
def test_out_of_memory_of_one_dimensional_factories(no_memory, name):
    with pytest.raises(MemoryError, match=re.escape(f"{name}(): can't allocate memory")):
        COUNTED[name](2 ** 30)


_INPUT = E.ones(2, 3)


@pytest.mark.parametrize("call, name", [
    (lambda: E.zeros_like(_INPUT), "zeros_like"),
    (lambda: E.ones_like(_INPUT), "ones_like"),
    (lambda: E.full_like(_INPUT, 3.0), "full_like"),
    (lambda: E.empty_like(_INPUT), "empty_like"),
    (lambda: E.rand_like(_INPUT), "rand"),
    (lambda: E.randint_like(_INPUT, 5), "randint"),
])
def test_out_of_memory_of_like_factories(no_memory, call, name):
    with pytest.raises(MemoryError, match=re.escape(f"{name}(): can't allocate memory")):
        call()


def test_a_value_error_that_is_not_about_size_passes_through(monkeypatch):
    from ember.backends import registry
    b = registry.get_backend("cpu")

    def bad(*args, **kwargs):
        raise ValueError("something about values")

    monkeypatch.setitem(b.kernels, "full", bad)
    with pytest.raises(ValueError, match="^something about values$"):
        E.zeros(3)


@pytest.mark.parametrize("start, end, step", [(0, 1, 1e-20), (0, 1e300, 1e-10),
                                              (-1e20, 1e20, 1.0), (1, 0, -1e-30)])
def test_arange_with_too_many_elements(start, end, step):
    with pytest.raises(ShapeError, match=r"arange\(\): the range .* has .* elements, more "
                                         r"than a tensor can hold \(invalid size, possible "
                                         r"overflow\?\); pass a larger step"):
        E.arange(start, end, step)


@pytest.mark.parametrize("args", [(float("nan"),), (float("inf"),), (0, float("-inf"), -1),
                                  (0, 1, float("inf")), (float("nan"), 1, 0.5)])
def test_arange_of_a_range_that_is_not_finite(args):
    with pytest.raises(ValueError, match=r"arange\(\): unsupported range: .*; start, end and "
                                         r"step must be finite"):
        E.arange(*args)


def test_arange_still_works_near_the_limits():
    np.testing.assert_array_equal(E.arange(0, 1, 0.25).numpy(), [0, 0.25, 0.5, 0.75])
    assert E.arange(0).shape == (0,) and E.eye(0).shape == (0, 0)
    assert E.zeros(0, 3).shape == (0, 3) and E.empty(()).shape == ()


# --- DataLoader -----------------------------------------------------------------------------

class _NoLen:
    def __getitem__(self, i):
        return E.tensor([float(i)])


class _Stream(IterableDataset):
    def __iter__(self):
        return iter(E.tensor([float(i)]) for i in range(3))


@pytest.mark.parametrize("dataset", [None, 3, 2.5, object(), E.ones], ids=repr)
def test_dataloader_of_something_that_is_not_a_dataset(dataset):
    with pytest.raises(TypeError, match=re.escape(
            f"DataLoader(): expected a dataset with __getitem__ and __len__ (a Dataset, "
            f"TensorDataset or list) or an IterableDataset, got {type(dataset).__name__}")):
        DataLoader(dataset)


def test_dataloader_of_a_dataset_without_len_needs_a_sampler():
    with pytest.raises(TypeError, match=r"the dataset \(_NoLen\) has no __len__, which the "
                                        r"default sampler needs"):
        DataLoader(_NoLen())
    batches = list(DataLoader(_NoLen(), sampler=[2, 0], batch_size=2))
    np.testing.assert_array_equal(batches[0].numpy(), [[2], [0]])


@pytest.mark.parametrize("kwargs, words", [
    ({"collate_fn": 3}, "collate_fn must be callable"),
    ({"sampler": 3}, "sampler must be an iterable of indices, got int"),
    ({"batch_sampler": 3, "batch_size": 1}, "batch_sampler must be an iterable of index "
                                            "lists, got int"),
])
def test_dataloader_arguments_of_the_wrong_kind(kwargs, words):
    with pytest.raises(TypeError, match=re.escape(words)):
        DataLoader([1, 2, 3], **kwargs)


def test_dataloader_still_takes_lists_tensor_datasets_and_streams():
    assert len(list(DataLoader([1, 2, 3], batch_size=2))) == 2
    ds = TensorDataset(E.arange(4.0), E.arange(4))
    assert len(list(DataLoader(ds, batch_size=3))) == 2
    assert len(list(DataLoader(_Stream(), batch_size=2))) == 2
    assert len(list(DataLoader("abc"))) == 3


# --- what a generated wrapper's kernel raises when memory runs out ----------------------------

_PLAUSIBLE = {"int": 0, "SymInt": 0, "float": 1, "Scalar": 1, "bool": False, "str": "sum"}


def _call_plausibly(nf):
    """Call op ``nf`` with float32 (2, 2) tensors and plain values for its required
    arguments (defaults for the rest)."""
    fn = codegen.NAMESPACE[codegen.wrapper_name(nf)]
    pos, kw = [], {}
    for a in nf.schema.arguments:
        if a.has_default:
            continue
        t = a.type
        if t.base == "Tensor":
            v = [E.ones(2, 2)] if t.is_list else (None if t.optional else E.ones(2, 2))
        else:
            v = _PLAUSIBLE.get(t.base)
            v = [1] if t.is_list and v is not None else v
        (kw.__setitem__(a.name, v) if a.kwarg_only else pos.append(v))
    return fn(*pos, **kw)


def _kernel_ops():
    return [nf for nf in FUNCTIONS if nf.dispatch != "composite"]


_FAILURES = [
    (MemoryError("Unable to allocate 4.00 TiB for an array with shape (1099511627776,)"),
     MemoryError, "(): can't allocate memory for the result: Unable to allocate 4.00 TiB"),
    (ValueError("array is too big; `arr.size * arr.dtype.itemsize` is larger than the "
                "maximum possible size."), ShapeError, "(): the result is too large to address"),
]


@pytest.mark.parametrize("raised, err, words", _FAILURES, ids=["memory", "too-big"])
def test_every_kernel_allocation_failure_names_the_op(raised, err, words, monkeypatch):
    """Every op with a kernel whose plausible call reaches it: numpy's MemoryError
    ("Unable to allocate ...") and "array is too big" get the op's name; nothing reaches
    the caller as numpy raised it."""
    typ = E.ones(1)._type  # float32 on cpu: the Type of the plausible arguments

    def kernel(*args, **kwargs):
        raise raised

    reached = 0
    for nf in _kernel_ops():
        monkeypatch.setitem(typ.kernels, nf.kernel_name, kernel)
        try:
            with np.errstate(all="ignore"):
                _call_plausibly(nf)
        except BaseException as e:  # noqa: BLE001 - which error is what is checked
            assert e is not raised, f"{nf.name}: numpy's error reached the caller"
            if isinstance(e, err) and words in str(e):
                assert str(e).startswith(f"{nf.name}("), str(e)
                reached += 1
        monkeypatch.undo()
    assert reached > 250  # (277 of them in November 2026)


def test_another_kernel_value_error_passes_through_unchanged(monkeypatch):
    typ = E.ones(1)._type
    raised = ValueError("a value the kernel refuses")

    def kernel(*args, **kwargs):
        raise raised

    for op, call in (("neg", lambda: E.neg(E.ones(2))), ("exp", lambda: E.ones(2).exp()),
                     ("add", lambda: E.add(E.ones(2), E.ones(2)))):
        monkeypatch.setitem(typ.kernels, op, kernel)
        with pytest.raises(ValueError) as info:
            call()
        assert info.value is raised


def test_a_real_result_too_large_names_the_op():
    with pytest.raises(ShapeError, match=r"^repeat\(\): the result is too large to address"):
        E.ones(1).repeat(2 ** 62)
