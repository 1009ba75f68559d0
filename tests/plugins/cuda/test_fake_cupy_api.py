"""The fake CuPy (``_fake_cupy.py``) against CuPy's API: names, signatures and the ufunc
methods, and the limits it copies from CuPy's source.

Device-free, always: the fakes against ``_cupy_api.py`` (CuPy 14.2.0's top level as data)
and their refusals. Where ``cupy`` imports (it does without a GPU: the import loads no
CUDA library), against the real module too: ``_cupy_api.py`` is what the installed CuPy
has, every name and nested attribute a fake offers exists in CuPy with the same
signature (where both give one; CuPy's ufuncs and Cython functions mostly give none),
every method of a fake class exists on CuPy's class, and each ufunc method raises
NotImplementedError in the fake exactly where it does in CuPy (``ufunc.at``/``reduce``/
``accumulate``/``reduceat`` in ``cupy/_core/_kernel.pyx`` check the ufunc before the
array, so a host array is enough to see which).
"""
from __future__ import annotations

import types

import numpy as np
import pytest

from ._cupy_api import FUNCTIONS, OTHER, UFUNC_METHODS, UFUNCS, VERSION, signature_of, snapshot
from ._fake_cupy import FAKE_ONLY, FakeGPUs, fake_cupy, fake_cupy_gpus

FAKES = {"fake_cupy": fake_cupy, "fake_cupy_gpus": fake_cupy_gpus, "FakeGPUs": FakeGPUs}
METHODS = ("at", "reduce", "accumulate", "reduceat", "outer")
CALLS = {"at": lambda u: u.at(np.zeros(3, np.float32), (np.array([0, 0]),), 1),
         "reduce": lambda u: u.reduce(np.ones(3)),
         "accumulate": lambda u: u.accumulate(np.ones(3)),
         "reduceat": lambda u: u.reduceat(np.ones(4), np.array([0, 2])),
         "outer": lambda u: u.outer(np.ones(2), np.ones(2))}


def attributes(obj, path="cupy", depth=0):
    """``(dotted path, value)`` of ``obj``'s public attributes, descending into the fake's
    own namespaces (not numpy's submodules, which the fake lends as CuPy's)."""
    for name in sorted(vars(obj)):
        if name.startswith("_") or name in FAKE_ONLY:
            continue
        value = getattr(obj, name)
        yield f"{path}.{name}", value
        if depth < 3 and isinstance(value, types.SimpleNamespace):
            yield from attributes(value, f"{path}.{name}", depth + 1)


def resolve(module, path: str):
    for part in path.split(".")[1:]:
        module = getattr(module, part)
    return module


def own_classes(fake):
    """``(path, class)`` for the classes a fake defines itself (Device, Stream, ...)."""
    return [(p, v) for p, v in attributes(fake)
            if isinstance(v, type) and v.__module__ == fake_cupy.__module__]


def unbound(text: str | None) -> str | None:
    """A method's signature without ``self`` (a Python method's shows it, Cython's not)."""
    return None if text is None else text.replace("(self, ", "(").replace("(self)", "()")


# ==== device-free: the fakes against the recorded API ===========================================

@pytest.mark.parametrize("make", [fake_cupy, fake_cupy_gpus], ids=lambda f: f.__name__)
def test_the_fake_offers_cupys_names_and_signatures(make):
    fake = make()
    ufuncs, functions, other = snapshot(fake)
    assert set(ufuncs) <= set(UFUNCS)
    assert set(other) - FAKE_ONLY <= set(OTHER) | set(FUNCTIONS)  # numpy's classes, modules
    wrong = {n: (s, FUNCTIONS.get(n)) for n, s in functions.items()  # OTHER: CuPy gives none
             if n not in FAKE_ONLY and n not in OTHER and s != FUNCTIONS.get(n)}
    assert not wrong, f"signatures that are not CuPy 14.2's: {wrong}"
    for name in ("errstate", "seterr", "insert", "nanquantile", "frompyfunc"):  # numpy only
        assert not hasattr(fake, name)


def test_the_fake_refuses_what_cupy_refuses():
    fake = fake_cupy()
    with pytest.raises(NotImplementedError, match="cupy_maximum.accumulate"):
        fake.maximum.accumulate(np.ones(3))
    with pytest.raises(NotImplementedError, match="cupy_minimum.reduce"):
        fake.minimum.reduce(np.ones(3))
    with pytest.raises(NotImplementedError, match="cupy_multiply.at"):
        fake.multiply.at(np.ones(3), [0], 2)
    for name in ("maximum", "minimum"):
        for dt in ("bool", "int8", "uint8", "int16", "float16"):
            with pytest.raises(TypeError, match=f"cupy.{name}.at only supports"):
                getattr(fake, name).at(np.zeros(3, dt), (np.array([0, 1]),), np.ones(2, dt))
    with pytest.raises(TypeError, match="cupy.add.at only supports"):
        fake.add.at(np.zeros(3, np.int8), [0, 0], 1)
    a = np.zeros(3, np.int8)
    fake.add.at(a, np.array([True, False, True]), 2)  # one boolean mask: no atomics
    assert a.tolist() == [2, 0, 2]
    assert fake.add.accumulate(np.ones(3)).tolist() == [1, 2, 3]  # add: cumsum
    with pytest.raises(TypeError, match="where"):  # numpy's keyword, not CuPy's
        fake.sum(np.ones(3), where=np.ones(3, bool))
    with pytest.raises(TypeError):
        fake.clip(np.ones(3), min=0)  # CuPy 14's clip(a, a_min, a_max, out=None)
    assert fake.concatenate([np.ones(1), np.zeros(1)], 0).tolist() == [1, 0]  # tup/arrays
    with pytest.raises(NotImplementedError, match="does not emulate"):
        fake.argmax(np.ones(3), dtype=np.int32)  # CuPy only: not emulated


def test_float_maximum_at_computes_as_cupys_atomics():
    # atomics.cuh: CAS loops on fmaxf/fminf: NaN skipped, float64 through float32
    fake = fake_cupy()
    a = np.array([0.0, 0.1, 0.2])
    fake.maximum.at(a, (np.array([1, 1]),), np.array([np.nan, 0.3]))
    assert a[0] == 0 and a[2] == 0.2 and a[1] == np.float64(np.float32(0.3)) != 0.3


def test_asarray_records_copies_that_do_not_block():
    for fake in (fake_cupy(), fake_cupy_gpus(1)):
        fake.asarray(np.ones(2), blocking=True)
        fake.array([1, 2], blocking=True)
        assert fake.nonblocking_copies == []
        fake.asarray(np.ones(2))
        fake.array(np.ones((2, 3)))
        assert fake.nonblocking_copies == [("asarray", (2,)), ("array", (2, 3))]
    gpus = fake_cupy_gpus(1)
    gpus.asarray(gpus.zeros(3))  # already on the device: no copy
    assert gpus.nonblocking_copies == []


def test_the_recorded_ufunc_methods_are_the_fakes():
    fake = fake_cupy()
    for name in UFUNCS:
        u = getattr(fake, name, None)
        if u is None:
            continue
        for method in METHODS:
            users = UFUNC_METHODS[method]
            if users is None or name in users:
                continue
            with pytest.raises(NotImplementedError):
                CALLS[method](u)


# ==== where CuPy imports: against the real module ===============================================

@pytest.fixture(scope="module")
def cupy():
    return pytest.importorskip("cupy", reason="CuPy is not installed (its import needs no GPU)")


def test_the_recorded_api_is_the_installed_cupys(cupy):
    if cupy.__version__ != VERSION:
        pytest.skip(f"_cupy_api.py records CuPy {VERSION}, this is {cupy.__version__}: "
                    f"regenerate it (see its docstring)")
    assert snapshot(cupy) == (UFUNCS, FUNCTIONS, OTHER)


@pytest.mark.parametrize("make", FAKES.values(), ids=FAKES.keys())
def test_every_fake_attribute_is_cupys_with_its_signature(cupy, make):
    missing, wrong = [], {}
    for path, value in attributes(make()):
        try:
            real = resolve(cupy, path)
        except AttributeError:
            missing.append(path)
            continue
        ours, theirs = signature_of(value), signature_of(real)
        if ours is not None and theirs is not None and ours != theirs:
            wrong[path] = (ours, theirs)
    assert not missing, f"the fake offers what CuPy has not: {missing}"
    assert not wrong, f"signatures that differ from CuPy's (fake, CuPy): {wrong}"


@pytest.mark.parametrize("make", FAKES.values(), ids=FAKES.keys())
def test_every_fake_class_method_is_cupys(cupy, make):
    for path, cls in own_classes(make()):
        real = resolve(cupy, path)
        for name in sorted(n for n in vars(cls) if not n.startswith("_") and n not in FAKE_ONLY):
            assert hasattr(real, name), f"{path}.{name}: not in CuPy"
            ours, theirs = signature_of(getattr(cls, name)), signature_of(getattr(real, name))
            if ours is not None and theirs is not None:
                assert unbound(ours) == unbound(theirs), f"{path}.{name}"


def test_ufunc_methods_refuse_where_cupys_do(cupy):
    fake = fake_cupy()
    for name in UFUNCS:
        ours, theirs = getattr(fake, name, None), getattr(cupy, name)
        if ours is None:
            continue
        for method in METHODS:
            assert hasattr(ours, method) and hasattr(theirs, method)
            if method == "outer":
                continue  # CuPy's outer computes (on device arrays only)
            refused = []
            for u in (ours, theirs):
                try:
                    CALLS[method](u)
                except NotImplementedError:
                    refused.append(True)
                except Exception:  # noqa: BLE001 - CuPy's own on a host array: not refused
                    refused.append(False)
                else:
                    refused.append(False)
            assert refused[0] == refused[1], f"{name}.{method}: fake {refused[0]}, CuPy " \
                                             f"{refused[1]}"
