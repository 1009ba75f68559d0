"""The main job end to end: the digits CNN trains (loss falls, accuracy rises), the CLI runs
with every option, and the saved weights load back into a fresh model."""
from __future__ import annotations

import numpy as np
import pytest

import ember as E
from ember import cli
from ember.train import digits


def test_data_split_is_fixed_and_shaped():
    xtr, ytr, xte, yte = digits.load_digits()
    assert xtr.shape == (1437, 1, 8, 8) and xte.shape == (360, 1, 8, 8)
    assert xtr.dtype == E.float32 and ytr.dtype == E.int64
    assert 0.0 <= float(xtr.min()) and float(xtr.max()) <= 1.0
    again = digits.load_digits()
    np.testing.assert_array_equal(again[1].numpy(), ytr.numpy())  # same split every time


def test_lenet_shapes():
    model = digits.lenet()
    assert model(E.zeros(5, 1, 8, 8)).shape == (5, 10)
    n = sum(p.numel() for p in model.parameters())
    assert n == (16 * 9 + 16) + (32 * 16 * 9 + 32) + (128 * 64 + 64) + (64 * 10 + 10)


def test_two_epochs_loss_falls():
    _, hist = digits.train(epochs=2, seed=0, progress=False)
    assert hist.loss[1] < hist.loss[0]
    assert hist.accuracy[1] > hist.accuracy[0]
    assert hist.test_accuracy > 0.25  # ten classes: well above chance (0.1) after two epochs


def test_cli_saves_weights_and_plot(tmp_path, capsys):
    out, png = tmp_path / "w.safetensors", tmp_path / "curves.png"
    assert cli.main(["train", "digits", "--epochs", "1", "--batch-size", "128", "--lr",
                     "0.003", "--seed", "1", "--out", str(out), "--plot", str(png),
                     "--no-progress"]) == 0
    text = capsys.readouterr().out
    assert "test accuracy" in text and "s/epoch" in text
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    model = digits.lenet()
    model.load_state_dict(E.load(str(out)))
    acc = digits.accuracy(model, *digits.load_digits()[2:])
    assert acc > 0.3


def test_cli_rejects_bad_options():
    with pytest.raises(SystemExit):
        cli.main(["train", "digits", "--epochs", "0", "--no-progress"])


def test_trained_model_exports_to_onnx_with_the_same_predictions(tmp_path, capsys):
    """Issue 9: `ember train digits --export-onnx` writes the trained model; onnxruntime
    predicts the same classes as ember on the whole test split, at any batch size."""
    import onnxruntime as ort
    path, weights = tmp_path / "digits.onnx", tmp_path / "w.safetensors"
    assert cli.main(["train", "digits", "--epochs", "2", "--out", str(weights),
                     "--export-onnx", str(path), "--no-progress"]) == 0
    assert "exported the model to" in capsys.readouterr().out
    model = digits.lenet()
    model.load_state_dict(E.load(str(weights)))
    model.eval()
    _, _, xte, _ = digits.load_digits()
    sess = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    assert [i.name for i in sess.get_inputs()] == ["image"]
    assert sess.get_inputs()[0].shape == ["batch", 1, 8, 8]
    with E.no_grad():
        want = model(xte).numpy()
    for batch in (360, 7):                          # the whole split, and a ragged batch
        got = np.concatenate([sess.run(["logits"], {"image": xte.numpy()[i:i + batch]})[0]
                              for i in range(0, 360, batch)])
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
        np.testing.assert_array_equal(got.argmax(1), want.argmax(1))


def test_export_onnx_fails_before_training_without_onnx(monkeypatch):
    import sys
    monkeypatch.setitem(sys.modules, "onnx", None)          # import onnx -> ImportError
    monkeypatch.delitem(sys.modules, "ember.onnx", raising=False)
    with pytest.raises(SystemExit, match="needs the onnx package"):
        cli.main(["train", "digits", "--export-onnx", "x.onnx", "--no-progress"])


# --- the CLI a new user meets (issue 36, item 5) ------------------------------------------

@pytest.mark.parametrize("flag", ["--out", "--plot", "--export-onnx"])
def test_a_bad_output_path_is_refused_before_training(tmp_path, monkeypatch, flag):
    import ember.train.digits as digits
    monkeypatch.setattr(digits, "train", lambda *a, **k: pytest.fail("trained"))
    missing = tmp_path / "no_dir" / "out.file"
    with pytest.raises(SystemExit, match=f"{flag} .*the directory '.*no_dir' does not exist"):
        cli.main(["train", "digits", flag, str(missing), "--no-progress"])


def test_an_unusable_device_is_one_line_without_a_traceback(monkeypatch):
    import ember.train.digits as digits
    monkeypatch.setattr(digits, "train", lambda *a, **k: pytest.fail("trained"))
    with pytest.raises(SystemExit) as info:
        cli.main(["train", "digits", "--device", "nodevice", "--no-progress"])
    assert str(info.value).startswith("ember train digits --device nodevice: ")
    assert "\n" not in str(info.value)


def test_version_and_help_say_it_all(capsys):
    with pytest.raises(SystemExit):
        cli.main(["--version"])
    assert capsys.readouterr().out.startswith("ember ")
    with pytest.raises(SystemExit):
        cli.main(["--help"])
    assert "runs the main job (a CNN on scikit-learn's digits" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        cli.main(["train", "digits", "--help"])
    out = capsys.readouterr().out
    assert "(default: 20)" in out and "(default: digits_cnn.safetensors)" in out
