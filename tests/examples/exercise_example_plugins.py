"""Run by ``test_example_plugins.py`` in a fresh Python whose ``sys.path`` holds the three
example plugins as pip installed them: uses each the way a user would and writes what it
saw to ``<dir>/seen.json`` and ``<dir>/conv_out.npz`` for the test to check, and runs the
```python blocks of the examples' README.md files.

Usage: ``python exercise_example_plugins.py DIR`` with ``DIR/conv_in.npz`` (``x``, ``w``,
``b``, ``grad_out`` float64) and ``DIR/train_in.npz`` (``x``, ``y``, ``w``, ``b`` float64).
"""
from __future__ import annotations

import contextlib
import io
import json
import logging
import re
import sys
from pathlib import Path

import numpy as np

import ember as E
from ember import cli
from ember.backends import convolution
from ember.jit.passes.pass_manager import pipeline

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "plugins"


class Records(logging.Handler):
    """Keeps the messages of the records it handles."""

    def __init__(self):
        super().__init__(logging.DEBUG)
        self.messages: list[str] = []

    def emit(self, record):
        self.messages.append(record.getMessage())


def listen(name: str) -> Records:
    handler = Records()
    log = logging.getLogger(name)
    log.addHandler(handler)
    log.setLevel(logging.DEBUG)
    return handler


def plugins_text() -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        cli.main(["plugins"])
    return out.getvalue()


def jit_pass() -> dict:
    records = listen("ember_example_pass")
    x = E.tensor(np.linspace(-2, 2, 12).reshape(3, 4))
    traced = E.jit.trace(lambda t: t.relu().relu().abs().abs(), (x,))
    got = traced(x).numpy()
    return {"traced": str(traced.graph), "optimized": str(traced.graph_for(x)),
            "pipeline": [[p.stage, p.name, p.origin] for p in pipeline()],
            "log": records.messages, "value_ok": bool(np.array_equal(
                got, np.abs(np.maximum(x.numpy(), 0))))}


def train_step(device: str, data) -> dict:
    """One Linear + mse_loss + SGD step on ``device``; the new parameters as lists."""
    dev = dict(dtype=E.float64, device=device)
    lin = E.nn.Linear(3, 2, **dev)
    with E.no_grad():
        lin.weight.copy_(E.tensor(data["w"], **dev))
        lin.bias.copy_(E.tensor(data["b"], **dev))
    opt = E.optim.SGD(lin.parameters(), lr=0.1)
    loss = E.nn.functional.mse_loss(lin(E.tensor(data["x"], **dev)), E.tensor(data["y"], **dev))
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"loss": loss.item(), "weight": lin.weight.detach().numpy().tolist(),
            "bias": lin.bias.detach().numpy().tolist()}


def logging_backend(data) -> dict:
    records = listen("ember_example_logging_backend")
    logcpu = train_step("logcpu", data)
    n_records = len(records.messages)
    cpu = train_step("cpu", data)
    log_after_cpu = len(records.messages) - n_records
    t = E.zeros(3, dtype=E.float64, device="logcpu")
    t.numpy()[0] = 5.0   # a host backend's numpy() shares the tensor's memory
    return {"logcpu": logcpu, "cpu": cpu, "log": records.messages[:n_records],
            "log_after_cpu": log_after_cpu, "numpy_shares": t.tolist()[0] == 5.0}


def conv(data, out_dir: Path) -> dict:
    x, w, b = (E.tensor(data[k], requires_grad=True) for k in ("x", "w", "b"))
    chosen = str(convolution.explain(x, w, b, padding=1, stride=(2, 1)))
    declined = str(convolution.explain(x, E.zeros(4, 3, 5, 5, dtype=E.float64), padding=2))
    out = E.nn.functional.conv2d(x, w, b, padding=1, stride=(2, 1))
    out.backward(E.tensor(data["grad_out"]))
    np.savez(out_dir / "conv_out.npz", out=out.detach().numpy(), gx=x.grad.numpy(),
             gw=w.grad.numpy(), gb=b.grad.numpy())
    return {"explain": chosen, "explain_5x5": declined}


def readmes() -> dict:
    """Run the ```python blocks of each example's README.md (in one namespace per file);
    README name -> the number of blocks run. A block that raises fails the run."""
    ran = {}
    for readme in sorted(EXAMPLES.glob("*/README.md")):
        namespace = {"__name__": f"readme:{readme.parent.name}"}
        code = re.findall(r"```python\n(.*?)```", readme.read_text(), re.S)
        with contextlib.redirect_stdout(io.StringIO()):
            for i, block in enumerate(code):
                exec(compile(block, f"{readme.parent.name}/README.md[{i}]", "exec"), namespace)
        ran[readme.parent.name] = len(code)
    return ran


def main(out_dir: Path) -> None:
    seen = {"plugins": plugins_text(), "pass": jit_pass(),
            "backend": logging_backend(np.load(out_dir / "train_in.npz")),
            "conv": conv(np.load(out_dir / "conv_in.npz"), out_dir), "readmes": readmes()}
    (out_dir / "seen.json").write_text(json.dumps(seen, indent=1))


if __name__ == "__main__":
    main(Path(sys.argv[1]))
