"""Shared pytest setup: GPU tests carry the ``cuda`` marker and skip without a GPU."""
import pytest


def _has_cuda() -> bool:
    try:
        from ember.backends import registry
        registry.get_backend("cuda")
        return True
    except Exception:  # noqa: BLE001 - no plugin, no GPU, no driver: all mean skip
        return False


@pytest.fixture(autouse=True)
def _ember_float_warning_filter():
    """ember's filter for numpy's floating-point warnings, as a plain script has it: pytest
    imported ember inside its warnings.catch_warnings (configuring, collecting), which
    dropped the filter ``import ember`` installed (backends/kernels/__init__.py)."""
    from ember.backends.kernels import ignore_float_warnings
    ignore_float_warnings()


def pytest_collection_modifyitems(config, items):
    # the marker, not ``"cuda" in item.keywords``: keywords also hold parameter ids
    marked = [item for item in items if item.get_closest_marker("cuda") is not None]
    if marked and not _has_cuda():
        skip = pytest.mark.skip(reason="needs a CUDA GPU and the ember-cuda plugin")
        for item in marked:
            item.add_marker(skip)



@pytest.fixture
def default_float64():
    """Run a test with float64 as the default dtype, restoring float32 after."""
    import ember as E
    E.set_default_dtype(E.float64)
    yield
    E.set_default_dtype(E.float32)
