"""An MLP regression, ported line by line from a PyTorch training script.

Shows: ``TensorDataset`` + ``DataLoader(shuffle=True)``, an ``nn.Sequential`` MLP, Adam
with ``OneCycleLR`` stepped every batch, a validation loop under ``E.no_grad()`` and
``model.eval()``, the loss printed per epoch. The data is scikit-learn's diabetes set
(442 patients, 10 standardised features, a disease-progression target; it ships inside
scikit-learn, so no download), split 80/20 with a fixed seed; the target is standardised
on the training split. The final validation MSE (in squared target units) is compared
with the trivial baseline that predicts the training mean for everyone, and with ordinary
least squares: this small data set is close to linear, and the MLP about matches it
(3510 against 3424 for seed 0).

Run it (from the repository root)::

    python examples/mlp_regression.py              # 20 epochs, a few seconds
    python examples/mlp_regression.py --short      # 6 epochs, for CI
    python examples/mlp_regression.py --seed 1 --epochs 100

``main(argv)`` returns the final validation MSE.
"""
from __future__ import annotations

import argparse

import numpy as np

import ember as E
from ember import nn
from ember.utils.data import DataLoader, TensorDataset

SPLIT_SEED = 0  # the train/validation split never changes with --seed
SHORT = {"epochs": 6}  # --short: a few seconds, for CI


def load_data():
    """(x_train, y_train, x_val, y_val, y_std): float32 cpu Tensors of shapes (N, 10) and
    (N, 1), features and target standardised with the training split's mean and std, and
    that std of the target (a float, to turn MSEs back into squared target units)."""
    from sklearn.datasets import load_diabetes
    from sklearn.model_selection import train_test_split
    x, y = load_diabetes(return_X_y=True)
    xtr, xva, ytr, yva = train_test_split(x, y, test_size=0.2, random_state=SPLIT_SEED)
    mu, sd = xtr.mean(0), xtr.std(0)
    ymu, ysd = ytr.mean(), ytr.std()
    arrays = ((xtr - mu) / sd, (ytr - ymu) / ysd, (xva - mu) / sd, (yva - ymu) / ysd)
    xtr, ytr, xva, yva = (E.tensor(a.astype(np.float32)) for a in arrays)
    return xtr, ytr[:, None], xva, yva[:, None], float(ysd)


def make_model(n_features: int, hidden: int) -> nn.Module:
    """(N, n_features) -> (N, 1): two hidden layers with ReLU and dropout."""
    return nn.Sequential(
        nn.Linear(n_features, hidden), nn.ReLU(), nn.Dropout(0.1),
        nn.Linear(hidden, hidden), nn.ReLU(), nn.Dropout(0.1),
        nn.Linear(hidden, 1),
    )


def least_squares_mse(xtr, ytr, xva, yva) -> float:
    """Validation MSE of ordinary least squares with an intercept (numpy, float64): the
    linear model the MLP should at least match."""
    a = np.c_[xtr.double().numpy(), np.ones(xtr.shape[0])]
    coef = np.linalg.lstsq(a, ytr.double().numpy(), rcond=None)[0]
    pred = np.c_[xva.double().numpy(), np.ones(xva.shape[0])] @ coef
    return float(((pred - yva.double().numpy()) ** 2).mean())


def evaluate(model, loader, loss_fn, device) -> float:
    """Mean ``loss_fn`` over ``loader`` (batches moved to ``device``) in eval mode, without
    building a graph."""
    model.eval()
    total, n = 0.0, 0
    with E.no_grad():
        for xb, yb in loader:
            xb, yb = xb.to(device), yb.to(device)
            total += loss_fn(model(xb), yb).item() * xb.shape[0]
            n += xb.shape[0]
    return total / n


def main(argv=None) -> float:
    """Train and return the final validation MSE in squared target units."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    parser.add_argument("--epochs", type=int, default=20)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--hidden", type=int, default=32)
    parser.add_argument("--lr", type=float, default=1e-2, help="OneCycleLR's max_lr")
    parser.add_argument("--device", default="cpu", help="cpu, cuda, cuda:1, ...")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--short", action="store_true", help="a few-second run for CI")
    if parser.parse_known_args(argv)[0].short:  # explicit options still win
        parser.set_defaults(**SHORT)
    args = parser.parse_args(argv)

    device = E.device(args.device)
    E.manual_seed(args.seed)
    xtr, ytr, xva, yva, ysd = load_data()
    train_loader = DataLoader(TensorDataset(xtr, ytr), batch_size=args.batch_size,
                              shuffle=True)
    val_loader = DataLoader(TensorDataset(xva, yva), batch_size=256)

    model = make_model(xtr.shape[1], args.hidden).to(device)
    loss_fn = nn.MSELoss()
    optimizer = E.optim.Adam(model.parameters(), lr=args.lr, weight_decay=1e-4)
    scheduler = E.optim.lr_scheduler.OneCycleLR(
        optimizer, max_lr=args.lr, epochs=args.epochs, steps_per_epoch=len(train_loader))

    baseline = float(((yva - ytr.mean()) ** 2).mean().item()) * ysd ** 2
    for epoch in range(args.epochs):
        model.train()
        total, n = 0.0, 0
        for xb, yb in train_loader:
            xb, yb = xb.to(device), yb.to(device)
            optimizer.zero_grad()
            loss = loss_fn(model(xb), yb)
            loss.backward()
            optimizer.step()
            scheduler.step()
            total += loss.item() * xb.shape[0]
            n += xb.shape[0]
        val = evaluate(model, val_loader, loss_fn, device)
        print(f"epoch {epoch + 1:3d}  train mse {total / n * ysd ** 2:8.1f}  "
              f"val mse {val * ysd ** 2:8.1f}  lr {scheduler.get_last_lr()[0]:.2e}")
    final = val * ysd ** 2
    ols = least_squares_mse(xtr, ytr, xva, yva) * ysd ** 2
    print(f"validation MSE {final:.1f} vs {baseline:.1f} predicting the training mean "
          f"({final / baseline:.2f}x) and {ols:.1f} for least squares")
    return final


if __name__ == "__main__":
    main()
