"""``Backend.is_host``: a numpy-backed custom backend says its arrays are host memory, so
``Tensor.numpy()`` and ``as_tensor`` share memory with it as they do on cpu; a device
backend (the default) still refuses without ``force=True``."""
import textwrap
import types

import numpy as np
import pytest

import ember as E
from ember.backends import registry
from ember.plugins import load_module, unload_module

SOURCE = """
    import numpy as np
    from ember.backends import array_api
    from ember.plugins import hookimpl
    from ember.types import Backend

    @hookimpl
    def ember_backends():
        return [Backend(name=NAME, xp=np, kernels=array_api.make_kernels(np),
                        type_prefix=NAME.title(), array_type=np.ndarray,
                        to_numpy=lambda a: a, from_numpy=lambda a, i: a, is_host=IS_HOST)]
"""


@pytest.fixture
def backend():
    """``backend(name, is_host)`` loads a numpy backend in process; unloaded after."""
    names = []

    def load(name, is_host):
        mod = types.ModuleType(name)
        mod.NAME, mod.IS_HOST = name, is_host
        exec(textwrap.dedent(SOURCE), mod.__dict__)
        assert load_module(mod).error is None
        names.append(name)
        return registry.get_backend(name)
    yield load
    for name in names:
        unload_module(name)


def test_the_cpu_backend_is_host_and_the_default_is_not():
    assert registry.get_backend("cpu").is_host is True
    assert E.types.Backend("x", np, {}, "X", np.ndarray, None, None).is_host is False


def test_numpy_shares_memory_with_a_host_backend(backend):
    backend("hostnp", True)
    x = E.arange(6.0, device="hostnp").reshape(2, 3)
    arr = x.numpy()
    np.testing.assert_array_equal(arr, np.arange(6.0).reshape(2, 3))
    arr[0, 0] = 7.0
    assert x[0, 0].item() == 7.0
    assert np.asarray(x).shape == (2, 3)


def test_as_tensor_shares_memory_on_a_host_backend(backend):
    backend("hostnp", True)
    data = np.zeros(3, np.float32)
    t = E.as_tensor(data, device="hostnp")
    assert t.device.type == "hostnp"
    data[1] = 5.0
    assert t.tolist() == [0.0, 5.0, 0.0]


def test_a_device_backend_still_refuses_numpy(backend):
    backend("devnp", False)
    x = E.ones(2, device="devnp")
    with pytest.raises(TypeError, match=r"can't convert a devnp tensor to numpy; copy it "
                                         r"to the host first with \.cpu\(\)"):
        x.numpy()
    np.testing.assert_array_equal(x.numpy(force=True), [1.0, 1.0])
