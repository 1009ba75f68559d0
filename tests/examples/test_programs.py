"""The example programs under ``examples/`` in their ``--short`` mode: each runs in
process, learns (its metric beats a trivial baseline and its training loss falls), and
the CNN's checkpoint/resume continues exactly (2 epochs + 2 resumed == 4 straight, bit
for bit). The language models are also checked against the PyTorch programs they port
(the same source with ``torch`` imported instead): same weights, same logits and
gradients. With the ember-cuda plugin and a GPU, each also runs with ``--device cuda``."""
from __future__ import annotations

import ast
import importlib.util
import math
import re
import types
from pathlib import Path

import pytest

import ember as E

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def load(name: str):
    """Import ``examples/<name>.py`` as a module (examples/ is not a package)."""
    spec = importlib.util.spec_from_file_location(f"ember_example_{name}",
                                                  EXAMPLES / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def numbers(pattern: str, text: str) -> list:
    """Every float the regex ``pattern`` (one group) captures in ``text``."""
    return [float(v) for v in re.findall(pattern, text)]


def test_mlp_regression_beats_the_mean_and_nears_least_squares(capsys):
    pytest.importorskip("sklearn")
    mod = load("mlp_regression")
    mse = mod.main(["--short", "--seed", "0"])
    xtr, ytr, xva, yva, ysd = mod.load_data()
    baseline = ((yva.double() - ytr.double().mean()) ** 2).mean().item() * ysd ** 2
    assert mse < 0.8 * baseline
    assert mse < 1.2 * mod.least_squares_mse(xtr, ytr, xva, yva) * ysd ** 2
    train = numbers(r"train mse\s+([\d.]+)", capsys.readouterr().out)
    assert len(train) == 6 and train[-1] < 0.7 * train[0]


def test_char_gru_beats_the_unigram_model(capsys):
    bpc = load("char_gru").main(["--short"])
    out = capsys.readouterr().out
    unigram = numbers(r"unigram ([\d.]+)", out)[-1]
    assert bpc < unigram - 0.5
    train = numbers(r"train bpc ([\d.]+)", out)
    assert train[-1] < train[0]
    sample = ast.literal_eval(re.search(r"^sample: (.*)$", out, re.M).group(1))
    assert sample.startswith("The ") and len(sample) > 40


def test_char_transformer_beats_the_unigram_model(capsys):
    ppl = load("char_transformer").main(["--short"])
    out = capsys.readouterr().out
    unigram = numbers(r"unigram ([\d.]+)", out)[-1]
    assert ppl < 0.85 * unigram
    train = numbers(r"train loss ([\d.]+)", out)
    assert train[-1] < train[0] - 0.5


def _flat(tree, prefix=""):
    """``{path: leaf}`` of a nested dict/list/tuple."""
    if isinstance(tree, dict):
        items = tree.items()
    elif isinstance(tree, (list, tuple)):
        items = enumerate(tree)
    else:
        return {prefix: tree}
    out = {}
    for k, v in items:
        out.update(_flat(v, f"{prefix}.{k}" if prefix else str(k)))
    return out


def test_cnn_learns_and_resumes_exactly(tmp_path, capsys):
    pytest.importorskip("sklearn")
    mod = load("cnn_checkpoint")
    straight, split = tmp_path / "straight.safetensors", tmp_path / "split.safetensors"
    acc = mod.main(["--short", "--epochs", "4", "--checkpoint", str(straight)])
    assert acc > 0.5  # chance is 0.1
    mod.main(["--short", "--epochs", "2", "--checkpoint", str(split)])
    resumed = mod.main(["--short", "--epochs", "4", "--resume", str(split),
                        "--checkpoint", str(split)])
    assert "resumed from" in capsys.readouterr().out
    assert resumed == acc
    a = _flat(E.load(straight, weights_only=True))
    b = _flat(E.load(split, weights_only=True))
    assert a.keys() == b.keys() and a["epoch"] == b["epoch"] == 4
    assert any(k.startswith("model.") and k.endswith("running_mean") for k in a)
    assert any(k.startswith("optimizer.state.") for k in a)
    for k in a:
        if isinstance(a[k], E.Tensor):  # bitwise: ember is deterministic on the cpu
            assert E.equal(a[k], b[k]), k
        else:
            assert a[k] == b[k], k


def _as_torch(name: str) -> dict:
    """The namespace of ``examples/<name>.py`` with ``ember`` replaced by ``torch`` in its
    imports: the PyTorch program it was ported from."""
    source = (EXAMPLES / f"{name}.py").read_text()
    for ember_line, torch_line in (("import ember as E", "import torch as E"),
                                   ("from ember import nn", "from torch import nn"),
                                   ("from ember.nn import", "from torch.nn import")):
        assert ember_line in source
        source = source.replace(ember_line, torch_line)
    namespace = {"__name__": f"torch_{name}"}
    exec(compile(source, f"torch_{name}.py", "exec"), namespace)
    return namespace


@pytest.mark.parametrize("name, make", [
    ("char_gru", lambda m: m.CharGRU(30, 8, 16, 2)),
    ("char_transformer", lambda m: m.CharTransformer(30, 12, 16, 4, 2, dropout=0.0)),
])
def test_models_compute_what_the_pytorch_originals_do(name, make):
    """Same weights (ember's state dict loads into torch's model as is), same characters:
    the same logits and parameter gradients, to float32 tolerance."""
    torch = pytest.importorskip("torch")
    import numpy as np

    ours = make(load(name))
    theirs = make(types.SimpleNamespace(**_as_torch(name)))
    theirs.load_state_dict({k: torch.from_numpy(v.numpy().copy())
                            for k, v in ours.state_dict().items()})
    x = np.random.default_rng(0).integers(0, 30, (3, 12))
    out, ref = ours(E.tensor(x)), theirs(torch.from_numpy(x))
    if name == "char_gru":  # (logits, h): run on from the returned state, detached
        out, ref = ours(E.tensor(x), out[1].detach())[0], theirs(torch.from_numpy(x),
                                                                  ref[1].detach())[0]
    np.testing.assert_allclose(out.detach().numpy(), ref.detach().numpy(), rtol=1e-4,
                               atol=1e-5)
    (out ** 2).mean().backward()
    (ref ** 2).mean().backward()
    grads = dict(theirs.named_parameters())
    for k, p in ours.named_parameters():
        np.testing.assert_allclose(p.grad.numpy(), grads[k].grad.numpy(), rtol=1e-3,
                                   atol=1e-5, err_msg=k)


@pytest.mark.cuda
@pytest.mark.parametrize("name", ["mlp_regression", "char_gru", "char_transformer",
                                  "cnn_checkpoint"])
def test_programs_run_on_cuda(name, tmp_path):
    """``--device cuda``: the same short runs on the GPU, to a finite metric."""
    if name in ("mlp_regression", "cnn_checkpoint"):
        pytest.importorskip("sklearn")
    argv = ["--short", "--device", "cuda"]
    if name == "cnn_checkpoint":
        argv += ["--checkpoint", str(tmp_path / "ckpt.safetensors")]
    assert math.isfinite(load(name).main(argv))
