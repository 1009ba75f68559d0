"""A character-level language model with a GRU, ported from a PyTorch script.

Shows: ``nn.Embedding`` -> ``nn.GRU(batch_first=True)`` -> ``nn.Linear`` over characters;
truncated backpropagation through time (the text is cut into ``batch`` parallel streams,
read ``bptt`` characters at a time, the hidden state carried over and ``detach()``-ed
between chunks, as PyTorch's word_language_model example does); gradient clipping with
``nn.utils.clip_grad_norm_``; a validation loss under ``E.no_grad()``; and sampling text
with a temperature (``softmax(logits / T)`` then ``E.multinomial``).

The text ships with every CPython: the help topics of ``pydoc_data.topics`` (what
``help("if")`` prints), concatenated in sorted topic order; the last 10 % is held out.
The metric is the validation cross-entropy in bits per character, compared with the
unigram baseline (each character predicted by its training frequency).

Run it (from the repository root)::

    python examples/char_gru.py                 # under a CPU minute
    python examples/char_gru.py --short         # a few seconds, for CI
    python examples/char_gru.py --temperature 0.5 --seed 1

``main(argv)`` returns the final validation bits per character.
"""
from __future__ import annotations

import argparse
import math

import ember as E
from ember import nn
from ember.nn import functional as F

# --short: a small model on a small text, a few seconds in all
SHORT = {"chars": 16_000, "epochs": 2, "batch": 16, "bptt": 32, "hidden": 64, "lr": 1e-2,
         "sample": 40}


def load_text(n_chars: int) -> str:
    """The first ``n_chars`` characters of CPython's pydoc help topics."""
    from pydoc_data.topics import topics
    return "".join(topics[k] for k in sorted(topics))[:n_chars]


def batchify(ids, batch: int):
    """(L,) int64 ids -> (batch, L // batch): ``batch`` contiguous streams, one a row."""
    n = ids.shape[0] // batch
    return ids[:n * batch].view(batch, n)


class CharGRU(nn.Module):
    """(N, T) int64 characters and a hidden state (num_layers, N, hidden) or None ->
    (N, T, vocab) logits and the new hidden state."""

    def __init__(self, vocab: int, embed: int, hidden: int, num_layers: int):
        super().__init__()
        self.embed = nn.Embedding(vocab, embed)
        self.rnn = nn.GRU(embed, hidden, num_layers, batch_first=True)
        self.head = nn.Linear(hidden, vocab)

    def forward(self, x, h=None):
        out, h = self.rnn(self.embed(x), h)
        return self.head(out), h


def evaluate(model, data, bptt: int) -> float:
    """Mean cross-entropy (nats per character) of ``model`` over the (B, L) streams."""
    model.eval()
    total, n, h = 0.0, 0, None
    with E.no_grad():
        for i in range(0, data.shape[1] - 1, bptt):
            seq = min(bptt, data.shape[1] - 1 - i)
            x, y = data[:, i:i + seq], data[:, i + 1:i + 1 + seq]
            logits, h = model(x, h)
            total += F.cross_entropy(logits.reshape(-1, logits.shape[-1]),
                                     y.reshape(-1), reduction="sum").item()
            n += y.numel()
    return total / n


def sample(model, prime: str, chars: list, n: int, temperature: float) -> str:
    """``n`` characters generated after ``prime``, each drawn from
    ``softmax(logits / temperature)``."""
    stoi = {c: i for i, c in enumerate(chars)}
    device = next(model.parameters()).device
    model.eval()
    out = list(prime)
    with E.no_grad():
        logits, h = model(E.tensor([[stoi[c] for c in prime]], device=device))
        for _ in range(n):
            probs = F.softmax(logits[0, -1] / temperature, dim=-1)
            nxt = int(E.multinomial(probs, 1).item())
            out.append(chars[nxt])
            logits, h = model(E.tensor([[nxt]], device=device), h)
    return "".join(out)


def main(argv=None) -> float:
    """Train, print a sample, and return the final validation bits per character."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    parser.add_argument("--chars", type=int, default=200_000, help="text length used")
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--batch", type=int, default=32, help="parallel streams")
    parser.add_argument("--bptt", type=int, default=64, help="characters per chunk")
    parser.add_argument("--hidden", type=int, default=256)
    parser.add_argument("--layers", type=int, default=1)
    parser.add_argument("--lr", type=float, default=3e-3)
    parser.add_argument("--clip", type=float, default=1.0, help="max gradient norm")
    parser.add_argument("--temperature", type=float, default=0.8)
    parser.add_argument("--sample", type=int, default=300, help="characters to generate")
    parser.add_argument("--device", default="cpu", help="cpu, cuda, cuda:1, ...")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--short", action="store_true", help="a few-second run for CI")
    if parser.parse_known_args(argv)[0].short:  # explicit options still win
        parser.set_defaults(**SHORT)
    args = parser.parse_args(argv)

    device = E.device(args.device)
    E.manual_seed(args.seed)
    text = load_text(args.chars)
    chars = sorted(set(text))
    stoi = {c: i for i, c in enumerate(chars)}
    ids = E.tensor([stoi[c] for c in text], device=device)
    split = int(0.9 * len(text))
    train, val = batchify(ids[:split], args.batch), batchify(ids[split:], 4)
    counts = E.bincount(ids[:split], minlength=len(chars)).double()
    logp = (counts + 1).log() - (counts + 1).sum().log()  # add-one smoothed unigram
    unigram = -logp[ids[split:]].mean().item() / math.log(2)

    model = CharGRU(len(chars), 32, args.hidden, args.layers).to(device)
    optimizer = E.optim.Adam(model.parameters(), lr=args.lr)
    print(f"{len(text)} characters, vocabulary {len(chars)}, "
          f"{sum(p.numel() for p in model.parameters())} parameters")
    for epoch in range(args.epochs):
        model.train()
        h, total, steps = None, 0.0, 0
        for i in range(0, train.shape[1] - 1, args.bptt):
            seq = min(args.bptt, train.shape[1] - 1 - i)
            x, y = train[:, i:i + seq], train[:, i + 1:i + 1 + seq]
            if h is not None:
                h = h.detach()  # truncated BPTT: keep the state, drop its history
            logits, h = model(x, h)
            loss = F.cross_entropy(logits.reshape(-1, len(chars)), y.reshape(-1))
            optimizer.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), args.clip)
            optimizer.step()
            total, steps = total + loss.item(), steps + 1
        val_bpc = evaluate(model, val, args.bptt) / math.log(2)
        print(f"epoch {epoch + 1}  train bpc {total / steps / math.log(2):.3f}  "
              f"val bpc {val_bpc:.3f}  (unigram {unigram:.3f})")
    print("sample:", repr(sample(model, text[:16], chars, args.sample, args.temperature)))
    return val_bpc


if __name__ == "__main__":
    main()
