"""Seconds per epoch of the digits job (``ember train digits``) against the same network,
data, batch size and optimizer in torch, side by side in one run.

Budget (DESIGN.md section 7): ember's epoch time <= torch's, at the same accuracy. Both
run the LeNet-style CNN of ``ember/train/digits.py`` (conv 1->16, pool, conv 16->32, pool,
linear 128->64->10; Adam lr 1e-3; batch 64; shuffled) on the same 80/20 split; torch keeps
its default thread count, as numpy's BLAS does.

Run: ``python benchmarks/bench_digits.py [--epochs 3] [--rounds 3]``. Each round trains
both frameworks from scratch, one after the other, in alternating order, so a slow spell
of a shared machine falls on both; the first epoch of each training is a warm-up and
excluded. Prints the median and the best seconds per epoch over all rounds and the test
accuracy of the last round.
"""
from __future__ import annotations

import argparse
import statistics
import time

from _timing import try_import_torch
from ember.train import digits

torch = try_import_torch(single_thread=False)


def ember_run(epochs: int, seed: int):
    _, hist = digits.train(epochs=epochs, seed=seed, progress=False)
    return hist.seconds[1:], hist.test_accuracy


def torch_run(epochs: int, seed: int):
    nn, F = torch.nn, torch.nn.functional
    torch.manual_seed(seed)
    xtr, ytr, xte, yte = (torch.from_numpy(t.numpy()) for t in digits.load_digits())
    model = nn.Sequential(
        nn.Conv2d(1, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(),
        nn.Linear(128, 64), nn.ReLU(), nn.Linear(64, 10))
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(xtr, ytr),
                                         batch_size=64, shuffle=True)
    seconds = []
    for _ in range(epochs):
        start = time.perf_counter()
        total, correct, seen = 0.0, 0, 0
        for xb, yb in loader:  # the same bookkeeping as ember's loop
            logits = model(xb)
            loss = F.cross_entropy(logits, yb)
            opt.zero_grad()
            loss.backward()
            opt.step()
            total += loss.item() * yb.shape[0]
            correct += int((logits.argmax(1) == yb).sum().item())
            seen += yb.shape[0]
        seconds.append(time.perf_counter() - start)
    with torch.no_grad():
        acc = (model.eval()(xte).argmax(1) == yte).float().mean().item()
    return seconds[1:], acc


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--epochs", type=int, default=3, help="per training, the first excluded")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args()
    if args.epochs < 2 or args.rounds < 1:
        p.error("--epochs must be at least 2 (the first is a warm-up), --rounds at least 1")
    runs = [("ember", ember_run)]
    if torch is not None:
        runs.append((f"torch {torch.__version__}", torch_run))
    seconds = {name: [] for name, _ in runs}
    accuracy = {}
    for r in range(args.rounds):
        for name, run in (runs if r % 2 == 0 else runs[::-1]):
            secs, accuracy[name] = run(args.epochs, args.seed)
            seconds[name] += secs
    base = statistics.median(seconds["ember"])
    print(f"digits CNN, {args.rounds} rounds x {args.epochs} epochs (first of each excluded), "
          f"batch 64, Adam lr 1e-3")
    print(f"{'':<20}{'median s/epoch':>16}{'best':>10}{'test acc':>10}{'ember/x':>10}")
    for name, _ in runs:
        med = statistics.median(seconds[name])
        print(f"{name:<20}{med:>16.4f}{min(seconds[name]):>10.4f}{accuracy[name]:>10.4f}"
              f"{base / med:>10.2f}")


if __name__ == "__main__":
    main()
