"""A CNN with batch normalisation on the digits, saving a checkpoint every epoch and
resuming from one exactly, ported from a PyTorch script.

Shows: ``nn.Conv2d`` + ``nn.BatchNorm2d`` + ``nn.Dropout`` blocks; SGD with momentum and a
``StepLR`` schedule; a checkpoint written with ``E.save`` after every epoch holding the
model, optimizer and scheduler state dicts, the epoch and the random number generator
state (``E.get_rng_state()``, which drives shuffling and dropout); and ``--resume PATH``,
which loads it (``E.load(..., weights_only=True)``) and continues where it stopped. A run
of 2 epochs resumed for 2 more ends with the same weights, bit for bit, as a run of 4
epochs (``tests/examples/test_programs.py`` checks it). With ``--device cuda`` dropout draws
from the CUDA generator, whose state ember does not expose yet (``torch.cuda.get_rng_state``
has no ember counterpart), so a resumed GPU run repeats all but the dropout masks.

The data is scikit-learn's copy of the UCI optical digits (1,797 8x8 images, shipped
inside the package), scaled to [0, 1] and split 80/20 with a fixed seed, as
``ember train digits`` does (``ember/train/digits.py``).

Run it (from the repository root)::

    python examples/cnn_checkpoint.py                      # 10 epochs, saves every epoch
    python examples/cnn_checkpoint.py --epochs 4 --checkpoint straight.safetensors
    python examples/cnn_checkpoint.py --epochs 2 --checkpoint split.safetensors
    python examples/cnn_checkpoint.py --epochs 4 --resume split.safetensors \
        --checkpoint split.safetensors               # the weights of straight.safetensors
    python examples/cnn_checkpoint.py --short --checkpoint ''   # CI; saves nothing

``main(argv)`` returns the final test accuracy.
"""
from __future__ import annotations

import argparse

import numpy as np

import ember as E
from ember import nn
from ember.nn import functional as F
from ember.utils.data import DataLoader, TensorDataset

SPLIT_SEED = 0  # the train/test split never changes with --seed
# --short: a narrower network on a third of the training images, a few seconds in all
SHORT = {"epochs": 2, "width": 8, "train_size": 480}


def load_digits():
    """(x_train, y_train, x_test, y_test): images (N, 1, 8, 8) float32 in [0, 1] and labels
    (N,) int64."""
    from sklearn.datasets import load_digits as sk_load
    from sklearn.model_selection import train_test_split
    data = sk_load()
    images = (data.images / 16.0).astype(np.float32)[:, None]
    xtr, xte, ytr, yte = train_test_split(images, data.target.astype(np.int64),
                                          test_size=0.2, random_state=SPLIT_SEED,
                                          stratify=data.target)
    return tuple(E.tensor(a) for a in (xtr, ytr, xte, yte))


def make_model(width: int) -> nn.Module:
    """(N, 1, 8, 8) -> (N, 10) logits: two conv-BN-ReLU-pool blocks, dropout, a linear."""
    return nn.Sequential(
        nn.Conv2d(1, width, 3, padding=1, bias=False), nn.BatchNorm2d(width), nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Conv2d(width, 2 * width, 3, padding=1, bias=False), nn.BatchNorm2d(2 * width),
        nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Dropout(0.25), nn.Linear(8 * width, 10),
    )


def accuracy(model, x, y) -> float:
    """Fraction of ``x`` (N, 1, 8, 8) that ``model`` labels as ``y`` (eval mode, no grad)."""
    model.eval()
    with E.no_grad():
        return (model(x).argmax(1) == y).double().mean().item()


def main(argv=None) -> float:
    """Train (or resume), saving a checkpoint every epoch; return the test accuracy."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    parser.add_argument("--epochs", type=int, default=10, help="total epochs to reach")
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--lr", type=float, default=0.05)
    parser.add_argument("--width", type=int, default=16, help="channels of the first conv")
    parser.add_argument("--train-size", type=int, default=None, help="use the first N images")
    parser.add_argument("--checkpoint", default="cnn_checkpoint.safetensors",
                        help="saved after every epoch ('' to save nothing)")
    parser.add_argument("--resume", metavar="PATH", help="continue from this checkpoint")
    parser.add_argument("--device", default="cpu", help="cpu, cuda, cuda:1, ...")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--short", action="store_true", help="a few-second run for CI")
    if parser.parse_known_args(argv)[0].short:  # explicit options still win
        parser.set_defaults(**SHORT)
    args = parser.parse_args(argv)

    device = E.device(args.device)
    E.manual_seed(args.seed)
    xtr, ytr, xte, yte = load_digits()
    xte, yte = xte.to(device), yte.to(device)
    if args.train_size is not None:
        xtr, ytr = xtr[:args.train_size], ytr[:args.train_size]
    loader = DataLoader(TensorDataset(xtr, ytr), batch_size=args.batch_size, shuffle=True)
    model = make_model(args.width).to(device)
    optimizer = E.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9, weight_decay=5e-4)
    scheduler = E.optim.lr_scheduler.StepLR(optimizer, step_size=3, gamma=0.5)

    start = 0
    if args.resume:
        ckpt = E.load(args.resume, map_location=device, weights_only=True)
        model.load_state_dict(ckpt["model"])
        optimizer.load_state_dict(ckpt["optimizer"])
        scheduler.load_state_dict(ckpt["scheduler"])
        E.set_rng_state(ckpt["rng_state"].cpu())
        start = ckpt["epoch"]
        print(f"resumed from {args.resume} after epoch {start}")

    for epoch in range(start, args.epochs):
        model.train()
        total, n = 0.0, 0
        for xb, yb in loader:
            xb, yb = xb.to(device), yb.to(device)
            optimizer.zero_grad()
            loss = F.cross_entropy(model(xb), yb)
            loss.backward()
            optimizer.step()
            total += loss.item() * xb.shape[0]
            n += xb.shape[0]
        scheduler.step()
        acc = accuracy(model, xte, yte)
        print(f"epoch {epoch + 1:3d}  train loss {total / n:.4f}  test accuracy {acc:.3f}  "
              f"lr {scheduler.get_last_lr()[0]:.3g}")
        if args.checkpoint:
            E.save({"epoch": epoch + 1, "model": model.state_dict(),
                    "optimizer": optimizer.state_dict(), "scheduler": scheduler.state_dict(),
                    "rng_state": E.get_rng_state()}, args.checkpoint)
    acc = accuracy(model, xte, yte)
    print(f"test accuracy {acc:.3f} (chance 0.100)")
    return acc


if __name__ == "__main__":
    main()
