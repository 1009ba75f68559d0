"""The main job: train a LeNet-style CNN on scikit-learn's handwritten digits.

The data is scikit-learn's copy of the UCI optical digits (1,797 8x8 images with values
0..16, shipped inside the package, so no download): scaled to [0, 1], split 80/20 with a
fixed seed (the split never changes with ``--seed``, which seeds initialisation and
shuffling). The network follows LeCun et al. 1998 in miniature::

    conv 1->16 3x3 pad 1, ReLU, max-pool 2     (N, 1, 8, 8)  -> (N, 16, 4, 4)
    conv 16->32 3x3 pad 1, ReLU, max-pool 2    (N, 16, 4, 4) -> (N, 32, 2, 2)
    flatten, linear 128->64, ReLU, linear 64->10

trained with Adam (lr 1e-3) on cross-entropy, batch 64, 20 epochs by default. Test
accuracy after 20 epochs: 0.944, 0.967 and 0.964 for seeds 0, 1 and 2 (the DataLoader
draws its base seed from the job's generator each epoch, as torch's does, which sets the
shuffled order; ``tests/core/train/test_digits.py`` checks a short run, the full ones were
measured by hand: ``ember train digits --seed S``).

``--nproc N`` trains data-parallel on N processes: the job starts itself again under
``mpiexec -n N`` (the ``mpi`` process-group backend, ``pip install ember-mpi``); each rank
takes its share of every epoch (``DistributedSampler``) in batches of ``batch / N``, so the
global batch, the number of steps and the accuracy are those of one process, and
``DistributedDataParallel`` averages the gradients. Rank 0 alone prints and saves.
At start the job prints which convolution algorithm each conv layer runs
(``ember.backends.convolution.explain``).
"""
from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import sysconfig
import time
from dataclasses import dataclass, field

import numpy as np

import ember as E
import ember.distributed as dist
from ember import nn
from ember.backends import convolution as _conv
from ember.nn import functional as F
from ember.nn.parallel import DistributedDataParallel
from ember.utils.data.distributed import DistributedSampler

SPLIT_SEED = 0  # the train/test split is fixed, whatever --seed says


def lenet(device=None, dtype=None) -> nn.Sequential:
    """The digits CNN: (N, 1, 8, 8) float images -> (N, 10) logits."""
    kw = {"device": device, "dtype": dtype}
    return nn.Sequential(
        nn.Conv2d(1, 16, 3, padding=1, **kw), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(16, 32, 3, padding=1, **kw), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(),
        nn.Linear(128, 64, **kw), nn.ReLU(),
        nn.Linear(64, 10, **kw),
    )


def load_digits(device=None):
    """(x_train, y_train, x_test, y_test): images (N, 1, 8, 8) float32 in [0, 1] and labels
    (N,) int64, split 80/20 with a fixed seed. Raises ImportError naming the extra to
    install when scikit-learn is missing."""
    try:
        from sklearn.datasets import load_digits as sk_load
        from sklearn.model_selection import train_test_split
    except ImportError as e:
        raise ImportError("the digits job needs scikit-learn: pip install 'ember[train]'") \
            from e
    data = sk_load()
    images = (data.images / 16.0).astype(np.float32)[:, None]
    xtr, xte, ytr, yte = train_test_split(images, data.target.astype(np.int64),
                                          test_size=0.2, random_state=SPLIT_SEED,
                                          stratify=data.target)
    return tuple(E.tensor(a, device=device) for a in (xtr, ytr, xte, yte))


@dataclass
class History:
    """Per-epoch training loss, training accuracy and seconds, and the final test accuracy."""

    loss: list = field(default_factory=list)
    accuracy: list = field(default_factory=list)
    seconds: list = field(default_factory=list)
    test_accuracy: float = float("nan")


def accuracy(model, x, y, batch_size: int = 512) -> float:
    """Fraction of ``x`` that ``model`` labels as ``y`` (eval mode, no grad)."""
    model.eval()
    correct = 0
    with E.no_grad():
        for i in range(0, x.shape[0], batch_size):
            pred = model(x[i:i + batch_size]).argmax(1)
            correct += int((pred == y[i:i + batch_size]).sum().item())
    model.train()
    return correct / x.shape[0]


def train(epochs: int = 20, batch_size: int = 64, lr: float = 1e-3, seed: int = 0,
          device=None, progress: bool = True, jit: bool = False) -> tuple:
    """Train the digits CNN; returns (model, History). ``progress`` shows a tqdm bar.
    ``jit=True`` traces the model (``ember.jit.trace``) and trains through its
    GraphExecutor; the losses match eager training for the same seed.

    Inside an initialised process group of N ranks it trains data-parallel: each rank
    visits its ``DistributedSampler`` share in batches of ``batch_size / N`` through
    ``DistributedDataParallel``, and the loss and accuracy in History are rank 0's share.
    Raises ValueError when ``batch_size`` is not a multiple of N.
    """
    E.manual_seed(seed)
    xtr, ytr, xte, yte = load_digits(device)
    model = lenet(device=device)
    opt = E.optim.Adam(model.parameters(), lr=lr)
    data = E.utils.data.TensorDataset(xtr, ytr)
    world = dist.get_world_size() if dist.is_initialized() else 1
    sampler = None
    if world > 1:
        if batch_size % world:
            raise ValueError(f"digits: expected a batch size divisible by the {world} ranks "
                             f"(the global batch is split evenly), got {batch_size}")
        batch_size //= world
        sampler = DistributedSampler(data, seed=seed)
        loader = E.utils.data.DataLoader(data, batch_size=batch_size, sampler=sampler)
    else:
        loader = E.utils.data.DataLoader(data, batch_size=batch_size, shuffle=True,
                                         generator=E.Generator().manual_seed(seed))
    hist = History()
    forward = E.jit.trace(model, (xtr[:batch_size],)) if jit else model
    if world > 1:
        forward = DistributedDataParallel(forward)
    bar = _progress(epochs * len(loader), progress)
    for epoch in range(epochs):
        if sampler is not None:
            sampler.set_epoch(epoch)
        start = time.perf_counter()
        total, correct, seen = 0.0, 0, 0
        for xb, yb in loader:
            logits = forward(xb)
            loss = F.cross_entropy(logits, yb)
            opt.zero_grad()
            loss.backward()
            opt.step()
            n = yb.shape[0]
            total += loss.item() * n
            correct += int((logits.argmax(1) == yb).sum().item())
            seen += n
            if bar is not None:
                bar.update(1)
                bar.set_postfix(epoch=epoch + 1, loss=f"{total / seen:.4f}",
                                acc=f"{correct / seen:.3f}", refresh=False)
        hist.seconds.append(time.perf_counter() - start)
        hist.loss.append(total / seen)
        hist.accuracy.append(correct / seen)
    if bar is not None:
        bar.close()
    hist.test_accuracy = accuracy(model, xte, yte)
    return model, hist


def conv_algorithms(model: nn.Module, x) -> list:
    """One line per convolution layer of ``model`` run on the batch ``x``: which algorithm
    the convolution dispatcher picks for its forward, with its priority and the module
    that provides it, e.g. ``conv1 (layer 0, input (64, 1, 8, 8)): native_im2col
    (priority 0, ember.backends.im2col)``."""
    seen = []
    hooks = [m.register_forward_pre_hook(
        lambda mod, args, name=name: seen.append((name, mod, args[0])))
        for name, m in model.named_modules() if isinstance(m, nn.Conv2d)]
    try:
        with E.no_grad():
            model(x)
    finally:
        for h in hooks:
            h.remove()
    algos = {a.name: a for a in _conv.algorithms()}
    lines = []
    for i, (name, m, inp) in enumerate(seen, 1):
        how = _conv.explain(inp, m.weight, m.bias, m.stride, m.padding, m.dilation,
                            groups=m.groups)
        a = algos.get(how.chosen)
        where = "" if a is None else f" (priority {a.priority}, {type(a).__module__})"
        lines.append(f"conv{i} (layer {name}, input {tuple(inp.shape)}): {how.chosen}{where}")
    return lines


def compare_jit(model: nn.Module, x, y, steps: int = 20) -> tuple:
    """Seconds per training step (forward, cross-entropy, backward, Adam) of copies of
    ``model`` on the batch ``x`` (N, 1, 8, 8), ``y`` (N,): ``(eager, traced)``, each the
    best of ``steps`` steps after two warm-up steps, measured alternately so that machine
    load hits both alike. ``model`` itself is not changed."""
    import copy
    runs = []
    for jit in (False, True):
        m = copy.deepcopy(model)
        opt = E.optim.Adam(m.parameters(), lr=1e-3)
        fwd = E.jit.trace(m, (x,)) if jit else m
        runs.append((fwd, opt))
    best = [float("inf"), float("inf")]
    for i in range(steps + 2):
        for k, (fwd, opt) in enumerate(runs):
            start = time.perf_counter()
            loss = F.cross_entropy(fwd(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            if i >= 2:
                best[k] = min(best[k], time.perf_counter() - start)
    return best[0], best[1]


def _progress(total: int, enabled: bool):
    if not enabled:
        return None
    try:
        from tqdm import tqdm
    except ImportError:  # progress is a nicety; the job runs without it
        return None
    return tqdm(total=total, desc="digits", unit="step", dynamic_ncols=True)


def plot(hist: History, path: str) -> None:
    """Write a PNG of training loss and accuracy per epoch (needs matplotlib)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, (a, b) = plt.subplots(1, 2, figsize=(9, 3.5))
    epochs = range(1, len(hist.loss) + 1)
    a.plot(epochs, hist.loss)
    a.set(xlabel="epoch", ylabel="training loss", title="loss")
    b.plot(epochs, hist.accuracy, label="train")
    b.axhline(hist.test_accuracy, color="gray", linestyle="--", label="test (final)")
    b.set(xlabel="epoch", ylabel="accuracy", title="accuracy")
    b.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def add_arguments(p: argparse.ArgumentParser) -> None:
    """The ``ember train digits`` options."""
    p.add_argument("--device", default=None,
                   help="device to train on; None: the default device (cpu)")
    p.add_argument("--epochs", type=int, default=20, help="passes over the training set")
    p.add_argument("--batch-size", type=int, default=64, help="images a step")
    p.add_argument("--lr", type=float, default=1e-3, help="Adam's learning rate")
    p.add_argument("--seed", type=int, default=0, help="ember.manual_seed before training")
    p.add_argument("--out", default="digits_cnn.safetensors",
                   help="where to save the trained weights (safetensors)")
    p.add_argument("--plot", default=None, metavar="PNG",
                   help="also write a loss/accuracy plot to this PNG file")
    p.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    p.add_argument("--jit", action="store_true",
                   help="trace the model and train through the JIT's GraphExecutor")
    p.add_argument("--export-onnx", default=None, metavar="ONNX",
                   help="also export the trained model to this ONNX file (input 'image' "
                        "(batch, 1, 8, 8), output 'logits' (batch, 10); needs ember[onnx])")
    p.add_argument("--nproc", type=int, default=1,
                   help="train data-parallel on this many processes (mpiexec; needs "
                        "ember-mpi), with the same global batch")


def export_onnx(model: nn.Module, path) -> None:
    """Export the digits CNN as ONNX: input ``image`` (batch, 1, 8, 8) float32 in [0, 1],
    output ``logits`` (batch, 10), the batch size dynamic. Raises ImportError without the
    onnx package, ``ember.onnx.OnnxExportError`` if the export fails (nothing written)."""
    import ember.onnx
    example = E.zeros(2, 1, 8, 8, device=next(iter(model.parameters())).device)
    ember.onnx.export(model, (example,), path, input_names=["image"], output_names=["logits"],
                      dynamic_axes={"image": {0: "batch"}, "logits": {0: "batch"}})


def _check_writable(flag: str, path) -> None:
    """SystemExit naming ``flag`` when ``path`` cannot be written (its directory is missing
    or not writable), so a bad path is found before training, not after."""
    if not path:
        return
    directory = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(directory):
        raise SystemExit(f"ember train digits {flag} {path}: the directory '{directory}' "
                         f"does not exist; create it first or pick another path")
    if not os.access(directory, os.W_OK) or (os.path.exists(path) and
                                              not os.access(path, os.W_OK)):
        raise SystemExit(f"ember train digits {flag} {path}: not writable; pick another path")


_LAUNCHER_SIZE = ("PMI_SIZE", "OMPI_COMM_WORLD_SIZE", "WORLD_SIZE")  # mpich, Open MPI, torchrun


def _launched_size() -> int:
    """The world size a launcher (mpiexec, torchrun) started this process in; 1 if none."""
    for name in _LAUNCHER_SIZE:
        raw = os.environ.get(name, "")
        if raw.isdigit():
            return int(raw)
    return 1


def _argv(args: argparse.Namespace) -> list:
    """``args`` back as ``ember train digits`` options (to start the ranks with)."""
    out = ["--epochs", str(args.epochs), "--batch-size", str(args.batch_size), "--lr",
           repr(args.lr), "--seed", str(args.seed), "--out", args.out or "",
           "--nproc", str(args.nproc)]
    for flag, v in (("--device", args.device), ("--plot", args.plot),
                    ("--export-onnx", args.export_onnx)):
        if v:
            out += [flag, v]
    if getattr(args, "threads", None) is not None:  # the CLI's --threads
        out += ["--threads", str(args.threads)]
    return out + ["--no-progress"] * args.no_progress + ["--jit"] * args.jit


def _launch(args: argparse.Namespace) -> int:
    """Run the job on ``args.nproc`` ranks under mpiexec (the mpich wheel's beside this
    Python, else the one on PATH); returns its exit code. Like torchrun, one thread a rank
    unless ``OMP_NUM_THREADS`` or ``--threads`` says otherwise."""
    mpiexec = (shutil.which("mpiexec", path=sysconfig.get_path("scripts"))
               or shutil.which("mpiexec"))
    if mpiexec is None:
        raise SystemExit(f"ember train digits --nproc {args.nproc}: mpiexec not found; "
                         f"pip install ember-mpi (mpi4py and the mpich wheel bring it)")
    cmd = [mpiexec, "-n", str(args.nproc), sys.executable, "-m", "ember", "train",
           "digits", *_argv(args)]
    env = dict(os.environ)
    env.setdefault("OMP_NUM_THREADS", "1")
    return subprocess.call(cmd, env=env)


def main(args: argparse.Namespace) -> int:
    """Run the job from parsed ``args``; prints results, returns an exit code."""
    if args.epochs < 1 or args.batch_size < 1 or args.lr <= 0 or args.nproc < 1:
        raise SystemExit("ember train digits: --epochs, --batch-size and --nproc must be "
                         ">= 1 and --lr > 0")
    if args.batch_size % args.nproc:
        raise SystemExit(f"ember train digits: --batch-size {args.batch_size} must be a "
                         f"multiple of --nproc {args.nproc} (the global batch is split "
                         f"evenly over the ranks)")
    if args.export_onnx:   # fail before training, not after
        try:
            import ember.onnx  # noqa: F401
        except ImportError as e:
            raise SystemExit(f"ember train digits --export-onnx: {e}") from None
    for flag, path in (("--out", args.out), ("--plot", args.plot),
                       ("--export-onnx", args.export_onnx)):
        _check_writable(flag, path)  # before training: the weights are not lost after it
    try:
        E.empty(0, device=args.device)  # an unusable device: its one-line reason, no trace
    except (E.NoBackendError, ValueError, RuntimeError) as e:
        raise SystemExit(f"ember train digits --device {args.device}: {e}") from None
    if args.nproc > 1 and _launched_size() == 1:
        return _launch(args)
    if args.nproc > 1:
        if _launched_size() != args.nproc:
            raise SystemExit(f"ember train digits --nproc {args.nproc}: started on "
                             f"{_launched_size()} ranks; start it without a launcher")
        dist.init_process_group()
    try:
        return _run(args)
    finally:
        if dist.is_initialized():
            dist.destroy_process_group()


def _run(args: argparse.Namespace) -> int:
    """Train and report (rank 0 alone prints and writes files)."""
    lead = not dist.is_initialized() or dist.get_rank() == 0
    if lead:
        x = E.zeros(args.batch_size // args.nproc, 1, 8, 8, device=args.device)
        for line in conv_algorithms(lenet(device=args.device), x):
            print(line)
        if args.nproc > 1:
            print(f"data-parallel on {args.nproc} ranks ({dist.get_backend()}), batch "
                  f"{args.batch_size // args.nproc} a rank, {args.batch_size} in all")
    model, hist = train(args.epochs, args.batch_size, args.lr, args.seed, args.device,
                        progress=lead and not args.no_progress, jit=args.jit)
    if not lead:
        return 0
    per_epoch = sum(hist.seconds) / len(hist.seconds)
    print(f"test accuracy {hist.test_accuracy:.4f} after {args.epochs} epochs "
          f"({per_epoch:.3f} s/epoch, {sum(hist.seconds):.1f} s in all)")
    if args.jit:
        xtr, ytr = load_digits(args.device)[:2]
        eager, traced = compare_jit(model, xtr[:args.batch_size], ytr[:args.batch_size])
        print(f"training step, batch {args.batch_size}: --jit {traced * 1e3:.2f} ms, eager "
              f"{eager * 1e3:.2f} ms ({traced / eager:.2f} x eager)")
    if args.out:
        E.save(model.state_dict(), args.out)
        print(f"saved weights to {args.out}")
    if args.plot:
        plot(hist, args.plot)
        print(f"saved plot to {args.plot}")
    if args.export_onnx:
        export_onnx(model, args.export_onnx)
        print(f"exported the model to {args.export_onnx} (ONNX)")
    return 0
