"""``ember train digits --nproc 2`` (issue 37) and the convolution algorithms the job
reports at start (issue 36): rank 0 alone prints and saves, the saved model classifies,
and the options reach the ranks unchanged."""
from __future__ import annotations

import argparse
import os
import subprocess
import sys

import pytest

import ember as E
from ember import cli
from ember.backends import convolution
from ember.train import digits
from helpers import mpi_missing


def _parse(argv: list) -> argparse.Namespace:
    p = argparse.ArgumentParser()
    digits.add_arguments(p)
    return p.parse_args(argv)


def test_conv_algorithms_names_each_layer_and_its_choice():
    model = digits.lenet()
    x = E.zeros(32, 1, 8, 8)
    lines = digits.conv_algorithms(model, x)
    assert len(lines) == 2
    want = convolution.explain(x, model[0].weight, model[0].bias, 1, 1).chosen
    assert lines[0].startswith("conv1 (layer 0, input (32, 1, 8, 8)): " + want + " (priority ")
    assert lines[1].startswith("conv2 (layer 3, input (32, 16, 4, 4)): ")


def test_the_job_prints_the_conv_algorithms_once(monkeypatch, capsys, tmp_path):
    monkeypatch.setattr(digits, "train", lambda *a, **k: (digits.lenet(),
                                                          digits.History([1.0], [0.5], [0.1],
                                                                         0.5)))
    assert cli.main(["train", "digits", "--out", str(tmp_path / "w.safetensors"),
                     "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert out.count("conv1 (layer 0") == 1 and out.count("conv2 (layer 3") == 1


def test_options_reach_the_ranks_unchanged():
    args = _parse(["--epochs", "3", "--batch-size", "32", "--lr", "0.002", "--seed", "4",
                   "--out", "w.st", "--plot", "p.png", "--nproc", "2", "--jit",
                   "--no-progress"])
    assert _parse(digits._argv(args)) == args
    args.threads = 3                                # the CLI adds --threads to the job
    assert digits._argv(args)[-4:-2] == ["--threads", "3"]
    assert _parse(digits._argv(_parse([]))) == _parse([])


def test_a_batch_that_does_not_split_is_refused_before_training(monkeypatch):
    monkeypatch.setattr(digits, "train", lambda *a, **k: pytest.fail("trained"))
    with pytest.raises(SystemExit, match="--batch-size 63 must be a multiple of --nproc 2"):
        cli.main(["train", "digits", "--batch-size", "63", "--nproc", "2", "--no-progress"])


def test_nproc_2_trains_data_parallel_and_rank_0_alone_reports(tmp_path):
    why = mpi_missing()
    if why:
        pytest.skip(why)
    out = tmp_path / "w.safetensors"
    env = dict(os.environ, OMP_NUM_THREADS="1")
    proc = subprocess.run([sys.executable, "-m", "ember", "train", "digits", "--nproc", "2",
                           "--epochs", "2", "--out", str(out), "--no-progress"],
                          capture_output=True, text=True, timeout=180, env=env, cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    text = proc.stdout
    assert text.count("data-parallel on 2 ranks (mpi), batch 32 a rank, 64 in all") == 1
    assert text.count("test accuracy") == 1 and text.count("conv1 (layer 0") == 1
    assert text.count("saved weights to") == 1
    model = digits.lenet()
    model.load_state_dict(E.load(str(out)))     # the plain model's keys, not "module."
    assert digits.accuracy(model, *digits.load_digits()[2:]) > 0.25
