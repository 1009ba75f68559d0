"""ember.save / ember.load (core/ember/serialization.py): safetensors, never pickle."""
import io
import json
import os
import pickle
import struct

import numpy as np
import pytest
from helpers import ALL_DTYPES, make, to_np

import ember as E
from ember.serialization import SerializationError


def _roundtrip(obj, tmp_path, name="x.safetensors", **kw):
    path = tmp_path / name
    E.save(obj, path)
    return E.load(path, **kw)


def _header(data: bytes):
    (n,) = struct.unpack("<Q", data[:8])
    return json.loads(data[8:8 + n]), data[8 + n:]


def _with_header(header: dict, body: bytes) -> bytes:
    hb = json.dumps(header).encode()
    return struct.pack("<Q", len(hb)) + hb + body


# --- round trips -------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
def test_roundtrip_every_dtype(tmp_path, dtype):
    t, _ = make((3, 4), dtype)
    out = _roundtrip({"t": t}, tmp_path)["t"]
    assert out.dtype is dtype and out.shape == (3, 4)
    np.testing.assert_array_equal(to_np(out), to_np(t))


@pytest.mark.parametrize("shape", [(), (0,), (2, 0, 3), (1, 1, 1, 5)])
def test_roundtrip_shapes(tmp_path, shape):
    t, _ = make(shape, E.float32)
    out = _roundtrip({"t": t}, tmp_path)["t"]
    assert out.shape == shape
    np.testing.assert_array_equal(to_np(out), to_np(t))


def test_flat_state_dict_is_plain_safetensors_in_order(tmp_path):
    sd = {"z.weight": E.randn(2, 3), "a.bias": E.zeros(3, dtype=E.float16)}
    E.save(sd, tmp_path / "m.safetensors")
    header, _ = _header((tmp_path / "m.safetensors").read_bytes())
    assert header["z.weight"]["dtype"] == "F32" and header["a.bias"]["dtype"] == "F16"
    assert "ember.structure" not in header["__metadata__"]
    out = E.load(tmp_path / "m.safetensors")
    assert list(out) == ["z.weight", "a.bias"]  # insertion order survives
    assert all(isinstance(v, E.Tensor) for v in out.values())


def test_foreign_safetensors_file_loads_as_flat_dict(tmp_path):
    import safetensors.numpy
    safetensors.numpy.save_file({"w": np.arange(6, dtype=np.int32).reshape(2, 3)},
                                str(tmp_path / "f.safetensors"))
    out = E.load(tmp_path / "f.safetensors")
    assert out["w"].dtype is E.int32 and to_np(out["w"]).tolist() == [[0, 1, 2], [3, 4, 5]]


def test_nested_optimizer_like_state(tmp_path):
    w = E.randn(2, 2)
    state = {"state": {0: {"step": E.tensor(3.0), "exp_avg": w}, 1: {"momentum": w}},
             "param_groups": [{"lr": 0.1, "betas": (0.9, 0.999), "params": [0, 1],
                               "nesterov": False, "foreach": None, "name": "g0",
                               "eps": float("inf")}],
             "dtype": E.bfloat16, "np_scalar": np.float32(0.5)}
    out = _roundtrip(state, tmp_path)
    assert list(out["state"]) == [0, 1]  # int keys stay ints
    assert out["state"][0]["step"].shape == () and out["state"][0]["step"].item() == 3.0
    np.testing.assert_array_equal(to_np(out["state"][0]["exp_avg"]), to_np(w))
    assert out["state"][0]["exp_avg"] is out["state"][1]["momentum"]  # one object saved once
    group = out["param_groups"][0]
    assert group["betas"] == (0.9, 0.999) and isinstance(group["betas"], tuple)
    assert group["params"] == [0, 1] and group["nesterov"] is False
    assert group["foreach"] is None and group["name"] == "g0" and group["eps"] == float("inf")
    assert out["dtype"] is E.bfloat16 and out["np_scalar"] == 0.5


def test_nan_and_clashing_names(tmp_path):
    out = _roundtrip({"a.b": E.ones(1), "a": {"b": E.zeros(1)}, "f": float("nan")}, tmp_path)
    assert to_np(out["a.b"]).tolist() == [1.0] and to_np(out["a"]["b"]).tolist() == [0.0]
    assert np.isnan(out["f"])


def test_top_level_tensor_and_list(tmp_path):
    t = E.arange(4)
    assert to_np(_roundtrip(t, tmp_path)).tolist() == [0, 1, 2, 3]
    out = _roundtrip([t, 1, "s"], tmp_path)
    assert to_np(out[0]).tolist() == [0, 1, 2, 3] and out[1:] == [1, "s"]


def test_views_are_saved_as_contiguous_copies(tmp_path):
    x = E.arange(12.0).reshape(3, 4)
    out = _roundtrip({"x": x, "t": x.T, "col": x[:, 1]}, tmp_path)
    np.testing.assert_array_equal(to_np(out["t"]), to_np(x).T)
    np.testing.assert_array_equal(to_np(out["col"]), to_np(x)[:, 1])
    out["x"][0, 0] = 100.0  # loaded tensors own their memory: no aliasing with the others
    assert to_np(out["t"])[0, 0] == 0.0 and to_np(x)[0, 0] == 0.0


def test_requires_grad_is_kept(tmp_path):
    p = E.randn(3, requires_grad=True)
    out = _roundtrip({"p": p, "q": E.ones(2)}, tmp_path)
    assert out["p"].requires_grad and out["p"].is_leaf and not out["q"].requires_grad


def test_map_location(tmp_path):
    out = _roundtrip({"t": E.ones(2)}, tmp_path, map_location="cpu")
    assert out["t"].device == E.Device("cpu")
    with pytest.raises(TypeError, match="map_location"):
        E.load(tmp_path / "x.safetensors", map_location=lambda s, loc: s)


def test_file_objects(tmp_path):
    buf = io.BytesIO()
    E.save({"t": E.ones(2, dtype=E.bfloat16)}, buf)
    buf.seek(0)
    out = E.load(buf)
    assert out["t"].dtype is E.bfloat16 and to_np(out["t"]).tolist() == [1.0, 1.0]
    with open(tmp_path / "f.st", "wb") as f:
        E.save({"a": 1}, f)
    with open(tmp_path / "f.st", "rb") as f:
        assert E.load(f) == {"a": 1}


# --- save errors and atomicity -----------------------------------------------------------

def test_unsupported_values_name_key_and_type(tmp_path):
    with pytest.raises(TypeError, match=r"'layer\.cfg' of type .*set"):
        E.save({"layer": {"cfg": {1, 2}}}, tmp_path / "a.st")
    with pytest.raises(TypeError, match=r"'w'.*numpy.ndarray"):
        E.save({"w": np.zeros(2)}, tmp_path / "a.st")
    with pytest.raises(TypeError, match=r"key \(1, 2\).*tuple.*str or int"):
        E.save({(1, 2): E.ones(1)}, tmp_path / "a.st")
    with pytest.raises(TypeError, match="key True"):
        E.save({True: 1}, tmp_path / "a.st")
    assert os.listdir(tmp_path) == []  # nothing written, not even a temporary file


def test_failed_save_keeps_the_old_file(tmp_path):
    path = tmp_path / "m.st"
    E.save({"w": E.ones(2)}, path)
    before = path.read_bytes()
    with pytest.raises(TypeError):
        E.save({"w": E.ones(2), "bad": object()}, path)
    assert path.read_bytes() == before and os.listdir(tmp_path) == ["m.st"]


def test_missing_file_and_directory(tmp_path):
    with pytest.raises(FileNotFoundError):
        E.load(tmp_path / "nope.safetensors")
    with pytest.raises(FileNotFoundError, match=f"directory '{tmp_path / 'no_dir'}' does "
                                                f"not exist"):  # not a temporary file's name
        E.save({"a": 1}, tmp_path / "no_dir" / "x.st")
    assert os.listdir(tmp_path) == []


# --- what save refuses or keeps (issue 35, class 6) ---------------------------------------

@pytest.mark.parametrize("value", [E.ones(2), {"k": E.ones(1)}, 3, [E.ones(1)]],
                         ids=["tensor", "dict", "int", "list"])
@pytest.mark.parametrize("target", ["path", "file object"])
def test_the_reserved_key_is_refused_before_anything_is_written(tmp_path, value, target):
    path = tmp_path / "m.st"
    E.save({"w": E.ones(2)}, path)
    before = path.read_bytes()
    buf = io.BytesIO()
    with pytest.raises(ValueError, match="'__metadata__' is reserved"):
        E.save({"w": E.zeros(2), "__metadata__": value}, path if target == "path" else buf)
    assert path.read_bytes() == before and os.listdir(tmp_path) == ["m.st"]
    assert buf.getvalue() == b""
    assert E.load(path)["w"].tolist() == [1.0, 1.0]


def test_the_reserved_name_is_an_ordinary_key_below_the_top(tmp_path):
    obj = {"opt": {"__metadata__": E.ones(2)}, "l": [{"__metadata__": 1}]}
    E.save(obj, tmp_path / "m.st")
    back = E.load(tmp_path / "m.st")
    assert back["opt"]["__metadata__"].tolist() == [1.0, 1.0] and back["l"] == [
        {"__metadata__": 1}]


@pytest.mark.parametrize("mode", [0o600, 0o640, 0o644, 0o664])
def test_saving_over_a_file_keeps_its_permissions(tmp_path, mode):
    path = tmp_path / "m.st"
    E.save({"w": E.ones(2)}, path)
    os.chmod(path, mode)
    E.save({"w": E.zeros(2)}, path)
    assert os.stat(path).st_mode & 0o777 == mode
    assert E.load(path)["w"].tolist() == [0.0, 0.0]


def test_a_new_file_gets_the_mode_open_would_give(tmp_path):
    mask = os.umask(0o027)
    try:
        E.save({"w": E.ones(2)}, tmp_path / "m.st")
    finally:
        os.umask(mask)
    assert os.stat(tmp_path / "m.st").st_mode & 0o777 == 0o640


def test_saving_through_a_symlink_replaces_its_target(tmp_path):
    target, link = tmp_path / "real.st", tmp_path / "link.st"
    E.save({"w": E.ones(2)}, target)
    os.symlink(target, link)
    E.save({"w": E.zeros(2)}, link)
    assert os.path.islink(link) and E.load(target)["w"].tolist() == [0.0, 0.0]


def _cycles():
    items = [E.ones(1)]
    items.append(items)
    d = {"w": E.ones(1)}
    d["me"] = d
    through = {"a": [1]}
    through["a"].append(through)
    return {"list": items, "dict": d, "dict-through-list": through}


@pytest.mark.parametrize("kind", ["list", "dict", "dict-through-list"])
def test_a_structure_that_contains_itself_is_refused(tmp_path, kind):
    with pytest.raises(ValueError, match="contains itself"):
        E.save(_cycles()[kind], tmp_path / "m.st")
    assert os.listdir(tmp_path) == []


def test_shared_containers_without_a_cycle_still_save(tmp_path):
    inner = [E.ones(1)]
    E.save({"a": inner, "b": inner, "c": (inner, inner)}, tmp_path / "m.st")
    back = E.load(tmp_path / "m.st")
    assert back["a"][0].tolist() == back["c"][1][0].tolist() == [1.0]


# --- malformed files ---------------------------------------------------------------------

def _good_bytes():
    buf = io.BytesIO()
    E.save({"w": E.ones(2, 3), "cfg": {"k": 1}}, buf)
    return buf.getvalue()


def _load_bytes(tmp_path, data):
    path = tmp_path / "bad.safetensors"
    path.write_bytes(data)
    return E.load(path)


@pytest.mark.parametrize("data,match", [
    (b"", "too short"),
    (b"abc", "too short"),
    (np.random.default_rng(0).bytes(256), "not a safetensors file"),
    (struct.pack("<Q", 5) + b"{oops", "not valid JSON"),
    (struct.pack("<Q", 5) + b"[1,2]", "not an object"),
])
def test_not_safetensors(tmp_path, data, match):
    with pytest.raises(SerializationError, match=match) as info:
        _load_bytes(tmp_path, data)
    assert "bad.safetensors" in str(info.value) and isinstance(info.value, ValueError)


def test_truncated_files(tmp_path):
    data = _good_bytes()
    for cut in (len(data) - 4, 30, 9):
        with pytest.raises(SerializationError, match="truncated"):
            _load_bytes(tmp_path, data[:cut])


@pytest.mark.parametrize("change", [{"shape": [4, 4]}, {"data_offsets": [0, 4000]},
                                    {"dtype": "F64"}, {"dtype": "NOPE"}])
def test_header_lying_about_sizes(tmp_path, change):
    header, body = _header(_good_bytes())
    header["w"] = dict(header["w"], **change)
    with pytest.raises(SerializationError, match="corrupt"):
        _load_bytes(tmp_path, _with_header(header, body))


def test_dtype_ember_lacks(tmp_path):
    import safetensors.numpy
    data = safetensors.numpy.save({"u": np.zeros(2, np.uint16)})
    with pytest.raises(SerializationError, match="U16"):
        _load_bytes(tmp_path, data)


@pytest.mark.parametrize("structure", ['{"evil": 1}', '{"tensor": "missing"}', "not json",
                                       '{"dict": [[1.5, 2]]}', '{"dtype": "float128"}'])
def test_corrupt_structure_metadata(tmp_path, structure):
    header, body = _header(_good_bytes())
    header["__metadata__"]["ember.structure"] = structure
    with pytest.raises(SerializationError, match="corrupt"):
        _load_bytes(tmp_path, _with_header(header, body))


class _Boom:
    def __reduce__(self):
        return (os.mkdir, (self.marker,))


def test_pickle_is_never_run(tmp_path):
    boom = _Boom()
    boom.marker = str(tmp_path / "pwned")
    payload = pickle.dumps(boom)
    with pytest.raises(SerializationError, match="never pickle"):
        _load_bytes(tmp_path, payload)
    # A valid safetensors file whose metadata carries pickle bytes: still only data.
    header, body = _header(_good_bytes())
    header["__metadata__"]["ember.structure"] = payload.decode("latin-1")
    with pytest.raises(SerializationError, match="corrupt"):
        _load_bytes(tmp_path, _with_header(header, body))
    assert not os.path.exists(boom.marker)


# --- torch.load's keywords (issue 36) ------------------------------------------------------

@pytest.mark.parametrize("weights_only", [None, True, False])
def test_load_takes_weights_only_and_never_runs_code(tmp_path, weights_only):
    E.save({"w": E.ones(2), "cfg": {"k": 1}}, tmp_path / "m.st")
    back = E.load(tmp_path / "m.st", weights_only=weights_only, mmap=None)
    assert back["w"].tolist() == [1.0, 1.0] and back["cfg"] == {"k": 1}


def test_load_refuses_mmap_and_a_bad_weights_only(tmp_path):
    E.save({"w": E.ones(2)}, tmp_path / "m.st")
    with pytest.raises(NotImplementedError, match="mmap"):
        E.load(tmp_path / "m.st", mmap=True)
    with pytest.raises(TypeError, match="weights_only"):
        E.load(tmp_path / "m.st", weights_only="yes")
