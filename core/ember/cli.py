"""The ``ember`` command: ``ember plugins`` lists plugins; ``ember train`` runs the main job.

``ember train`` is a placeholder until the nn/optim issue lands: it fits a linear model to
the digits data with hand-written gradients on the default backend, to show that the
installed core and backend work end to end.
"""
from __future__ import annotations

import argparse
import sys


def _plugins(args) -> int:
    from .plugins import manager
    infos = manager.plugins()
    if not infos:
        print("no ember plugins installed; `pip install ember-cpu` for the default backend")
        return 1
    for info in infos:
        state = "disabled" if info.disabled else ("SKIPPED" if info.error else "loaded")
        print(f"{info.name:<16} {info.distribution} {info.version}  [{state}]")
        if info.error:
            print(f"    error: {info.error}")
        for hook, items in info.registered.items():
            for item in items:
                print(f"    {hook.removeprefix('ember_')}: {item}")
    return 0


def _train(args) -> int:
    import numpy as np

    import ember as E
    # Placeholder main job: softmax regression on a synthetic digit-like task, with
    # gradients written by hand (autograd arrives in the next issue).
    rng = np.random.default_rng(0)
    centers = rng.normal(size=(10, 64))
    labels = rng.integers(0, 10, size=2000)
    feats = centers[labels] + 0.8 * rng.normal(size=(2000, 64))
    x, y = E.tensor(feats, dtype=E.float32), E.tensor(labels)
    w = E.zeros(64, 10)
    onehot = E.tensor(np.eye(10, dtype=np.float32)[labels])
    for epoch in range(args.epochs):
        logits = x @ w
        probs = (logits - logits.max(1, keepdim=True).values).exp()
        probs = probs / probs.sum(1, keepdim=True)
        w.sub_((x.t() @ (probs - onehot)) * (args.lr / x.shape[0]))
        acc = (logits.argmax(1) == y).float().mean().item()
        print(f"epoch {epoch + 1}: train accuracy {acc:.3f}")
    return 0


def main(argv=None) -> int:
    """Entry point of the ``ember`` console script."""
    parser = argparse.ArgumentParser(prog="ember", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("plugins", help="list plugins, their versions and what they registered")
    t = sub.add_parser("train", help="run the main job (placeholder until ember.nn lands)")
    t.add_argument("--epochs", type=int, default=5)
    t.add_argument("--lr", type=float, default=0.5)
    args = parser.parse_args(argv)
    return {"plugins": _plugins, "train": _train}[args.command](args)


if __name__ == "__main__":
    sys.exit(main())
