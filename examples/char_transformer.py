"""A character-level language model with a small decoder-only Transformer (GPT-style),
ported from a PyTorch script.

Shows: token and learned positional embeddings (``nn.Embedding``); a stack of pre-norm
``nn.TransformerEncoderLayer`` blocks made causal by the mask of
``nn.Transformer.generate_square_subsequent_mask`` (what a decoder-only model is:
self-attention that never looks ahead); random training windows gathered with advanced
indexing; ``AdamW`` with a linear warmup followed by cosine decay
(``SequentialLR(LinearLR, CosineAnnealingLR)``); gradient clipping; the validation
perplexity ``exp(cross-entropy)`` under ``E.no_grad()``; sampling with a temperature.

The text is the one ``examples/char_gru.py`` reads (CPython's ``pydoc_data.topics``, the
last 10 % held out), so the two models compare. The perplexity is compared with the
unigram baseline's (each character predicted by its training frequency).

Run it (from the repository root)::

    python examples/char_transformer.py            # about 4 CPU minutes
    python examples/char_transformer.py --short    # a few seconds, for CI
    python examples/char_transformer.py --layers 4 --steps 3000

``main(argv)`` returns the final validation perplexity (per character).
"""
from __future__ import annotations

import argparse
import math

import ember as E
from ember import nn
from ember.nn import functional as F

# --short: a small model on a small text, a few seconds in all
SHORT = {"chars": 16_000, "steps": 60, "warmup": 10, "batch": 16, "block": 32, "d_model": 48,
         "heads": 4, "layers": 1, "lr": 1e-2, "sample": 40}


def load_text(n_chars: int) -> str:
    """The first ``n_chars`` characters of CPython's pydoc help topics."""
    from pydoc_data.topics import topics
    return "".join(topics[k] for k in sorted(topics))[:n_chars]


class CharTransformer(nn.Module):
    """(N, T) int64 characters, T <= block -> (N, T, vocab) next-character logits."""

    def __init__(self, vocab: int, block: int, d_model: int, heads: int, layers: int,
                 dropout: float):
        super().__init__()
        self.tok = nn.Embedding(vocab, d_model)
        self.pos = nn.Embedding(block, d_model)
        layer = nn.TransformerEncoderLayer(d_model, heads, 4 * d_model, dropout,
                                           activation="gelu", batch_first=True,
                                           norm_first=True)
        self.blocks = nn.TransformerEncoder(layer, layers, norm=nn.LayerNorm(d_model),
                                            enable_nested_tensor=False)
        self.head = nn.Linear(d_model, vocab)
        self.register_buffer("causal", nn.Transformer.generate_square_subsequent_mask(block),
                             persistent=False)

    def forward(self, x):
        t = x.shape[1]
        h = self.tok(x) + self.pos(E.arange(t, device=x.device))
        h = self.blocks(h, mask=self.causal[:t, :t], is_causal=True)
        return self.head(h)


def get_batch(data, batch: int, block: int):
    """``batch`` random windows of ``data`` (L,): inputs and next-character targets, both
    (batch, block) int64."""
    start = E.randint(0, data.shape[0] - block - 1, (batch, 1), device=data.device)
    idx = start + E.arange(block, device=data.device)
    return data[idx], data[idx + 1]


def evaluate(model, data, block: int, batch: int = 64) -> float:
    """Mean cross-entropy (nats per character) over the non-overlapping windows of
    ``data``."""
    n = (data.shape[0] - 1) // block
    x = data[:n * block].view(n, block)
    y = data[1:n * block + 1].view(n, block)
    model.eval()
    total = 0.0
    with E.no_grad():
        for i in range(0, n, batch):
            logits = model(x[i:i + batch])
            total += F.cross_entropy(logits.reshape(-1, logits.shape[-1]),
                                     y[i:i + batch].reshape(-1), reduction="sum").item()
    return total / y.numel()


def sample(model, prime: str, chars: list, n: int, temperature: float, block: int) -> str:
    """``n`` characters generated after ``prime`` (the context cropped to ``block``), each
    drawn from ``softmax(logits / temperature)``."""
    stoi = {c: i for i, c in enumerate(chars)}
    model.eval()
    ids = E.tensor([[stoi[c] for c in prime]], device=next(model.parameters()).device)
    with E.no_grad():
        for _ in range(n):
            logits = model(ids[:, -block:])[0, -1]
            nxt = E.multinomial(F.softmax(logits / temperature, dim=-1), 1)
            ids = E.cat([ids, nxt[None]], dim=1)
    return "".join(chars[i] for i in ids[0].tolist())


def main(argv=None) -> float:
    """Train, print a sample, and return the final validation perplexity."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    parser.add_argument("--chars", type=int, default=200_000, help="text length used")
    parser.add_argument("--steps", type=int, default=1000)
    parser.add_argument("--warmup", type=int, default=100, help="linear warmup steps")
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--block", type=int, default=64, help="context length")
    parser.add_argument("--d-model", type=int, default=128)
    parser.add_argument("--heads", type=int, default=4)
    parser.add_argument("--layers", type=int, default=2)
    parser.add_argument("--dropout", type=float, default=0.1)
    parser.add_argument("--lr", type=float, default=3e-3, help="peak learning rate")
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
    train, val = ids[:split], ids[split:]
    counts = E.bincount(train, minlength=len(chars)).double() + 1  # add-one smoothing
    unigram = math.exp(-(counts.log() - counts.sum().log())[val].mean().item())

    model = CharTransformer(len(chars), args.block, args.d_model, args.heads, args.layers,
                            args.dropout).to(device)
    optimizer = E.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.01)
    scheduler = E.optim.lr_scheduler.SequentialLR(optimizer, [
        E.optim.lr_scheduler.LinearLR(optimizer, start_factor=0.01, total_iters=args.warmup),
        E.optim.lr_scheduler.CosineAnnealingLR(optimizer, args.steps - args.warmup),
    ], milestones=[args.warmup])
    print(f"{len(text)} characters, vocabulary {len(chars)}, "
          f"{sum(p.numel() for p in model.parameters())} parameters")
    report = max(1, args.steps // 5)
    running, seen = 0.0, 0
    for step in range(1, args.steps + 1):
        model.train()
        x, y = get_batch(train, args.batch, args.block)
        loss = F.cross_entropy(model(x).reshape(-1, len(chars)), y.reshape(-1))
        optimizer.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), args.clip)
        optimizer.step()
        scheduler.step()
        running, seen = running + loss.item(), seen + 1
        if step % report == 0 or step == args.steps:
            ppl = math.exp(evaluate(model, val, args.block))
            print(f"step {step:5d}  train loss {running / seen:.3f}  val perplexity {ppl:.2f}"
                  f"  (unigram {unigram:.2f})  lr {scheduler.get_last_lr()[0]:.2e}")
            running, seen = 0.0, 0
    print("sample:", repr(sample(model, text[:16], chars, args.sample, args.temperature,
                                 args.block)))
    return ppl


if __name__ == "__main__":
    main()
