"""What ``ember.onnx.export`` leaves on disk: the file's mode (as a plain
``open(path, "wb")`` gives it, through ``ember/_files.py``, shared with ``ember.save``) and
no initializer that no node reads (a BatchNorm's ``num_batches_tracked``), as
``torch.onnx.export`` writes them."""
from __future__ import annotations

import os

import numpy as np
import onnx
import pytest

import ember as E
import ember.nn as nn
import ember.onnx as eo

from ._check import check_export


def rand(*shape, seed=0):
    return E.tensor(np.random.default_rng(seed).standard_normal(shape).astype(np.float32))


class BNNet(nn.Module):
    """A small CNN with BatchNorm, and a parameter its forward never reads."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(2, 4, 3, padding=1)
        self.bn = nn.BatchNorm2d(4)
        self.fc = nn.Linear(4 * 5 * 5, 3)
        self.unused = nn.Linear(2, 2)

    def forward(self, x):
        h = self.bn(self.conv(x)).relu()
        return self.fc(h.flatten(1))


USED = ["bn.bias", "bn.running_mean", "bn.running_var", "bn.weight", "conv.bias",
        "conv.weight", "fc.bias", "fc.weight"]


@pytest.fixture
def umask():
    """Sets the process umask for one test, then puts the old one back."""
    old = os.umask(0o022)
    os.umask(old)
    yield os.umask
    os.umask(old)


def _trained_bn_net():
    net = BNNet()
    net.train()
    net(rand(4, 2, 5, 5, seed=3))                  # running statistics move off 0 / 1
    return net


def test_no_initializer_is_unused_and_the_used_keep_their_names():
    net = _trained_bn_net()
    assert "bn.num_batches_tracked" in dict(net.named_buffers())
    model = check_export(net, (rand(2, 2, 5, 5),))   # checker + onnxruntime == ember
    read = {i for n in model.graph.node for i in n.input}
    names = sorted(t.name for t in model.graph.initializer)
    assert names == USED
    assert all(name in read for name in names)
    for t in model.graph.initializer:              # the values are the module's own
        want = dict(net.named_parameters(), **dict(net.named_buffers()))[t.name]
        np.testing.assert_array_equal(onnx.numpy_helper.to_array(t), want.detach().numpy())


def test_large_constants_made_in_forward_stay():
    def fn(x):
        return x + E.arange(400, dtype=E.float32).reshape(20, 20)   # 1.6 KiB: initializer

    model = check_export(fn, (rand(20, 20),))
    assert len(model.graph.initializer) == 1


@pytest.mark.parametrize("mask", [0o022, 0o077, 0o027, 0o002], ids=oct)
def test_a_new_file_gets_the_mode_open_gives(tmp_path, umask, mask):
    umask(mask)
    path = tmp_path / "m.onnx"
    eo.export(_trained_bn_net(), (rand(1, 2, 5, 5),), path)
    with open(tmp_path / "plain", "wb"):
        pass
    assert os.stat(path).st_mode & 0o777 == 0o666 & ~mask
    assert os.stat(path).st_mode & 0o777 == os.stat(tmp_path / "plain").st_mode & 0o777
    onnx.checker.check_model(onnx.load(str(path)), full_check=True)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.onnx", "plain"]  # no temp file


@pytest.mark.parametrize("mode", [0o600, 0o640, 0o664], ids=oct)
def test_a_file_written_over_keeps_its_mode(tmp_path, umask, mode):
    umask(0o022)
    path = tmp_path / "m.onnx"
    path.write_bytes(b"old")
    os.chmod(path, mode)
    eo.export(lambda x: x * 2, (rand(3),), path)
    assert os.stat(path).st_mode & 0o777 == mode
    assert onnx.load(str(path)).graph.node


def test_a_symlink_is_written_through(tmp_path):
    target, link = tmp_path / "real.onnx", tmp_path / "link.onnx"
    target.write_bytes(b"old")
    os.symlink(target, link)
    eo.export(lambda x: x * 2, (rand(3),), link)
    assert os.path.islink(link)
    assert onnx.load(str(target)).graph.node


def test_a_missing_directory_is_named_and_nothing_is_written(tmp_path):
    with pytest.raises(FileNotFoundError, match=r"ember\.onnx\.export: the directory .*"
                                                r"no_dir' does not exist"):
        eo.export(lambda x: x * 2, (rand(3),), tmp_path / "no_dir" / "m.onnx")
    assert not list(tmp_path.iterdir())


def test_an_initializer_read_only_inside_a_subgraph_is_kept():
    from onnx import TensorProto, helper

    from ember.onnx.export import _names_read

    out = helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])
    then = helper.make_graph([helper.make_node("Identity", ["w"], ["y"])], "then", [], [out])
    other = helper.make_graph([helper.make_node("Identity", ["v"], ["y"])], "else", [], [out])
    node = helper.make_node("If", ["cond"], ["y"], then_branch=then, else_branch=other)
    assert _names_read([node]) == {"cond", "w", "v"}
