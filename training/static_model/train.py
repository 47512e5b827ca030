"""Step 6 of the build: train the token vectors against the teacher on the corpus (train venv, torch).

The student of a text is Σ_t exp(w_t) · E_t over its tokens (E: the token table, initialised with
the distilled vectors; w: a learned log-weight per token, initialised at 0), and the loss is
1 − cos(student, teacher vector of that text): the static model learns to reproduce the MiniLM
vector of exactly the texts woods embeds. Texts are tokenised the way the run-time encoder
tokenises them (`woods.embedding.static.split_identifiers` when the model splits identifiers, no
special tokens). A seeded HOLDOUT share of the texts is never trained on: the cosine agreement on
it is measured after each epoch and the best epoch's table is kept.

Writes <out>/vectors.npy (E · exp(w), float32), <out>/tokenizer.json and <out>/train.json (losses,
held-out agreement per epoch); <work>/holdout.json (the held-out texts).
"""

from __future__ import annotations

import argparse
import json
import shutil
import time
from pathlib import Path

import numpy as np
from common import log_step
from teacher import cached_vectors, load_teacher, text_key

from woods.embedding.static import split_identifiers

HOLDOUT = 0.05


def holdout_indices(count: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return np.sort(rng.permutation(count)[: max(1, int(count * HOLDOUT))])


def tokenize(tokenizer_path: Path, texts: list[str], split: bool) -> list[list[int]]:
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(tokenizer_path))
    tokenizer.no_truncation()
    tokenizer.no_padding()
    prepared = [split_identifiers(t) for t in texts] if split else texts
    return [e.ids for e in tokenizer.encode_batch(prepared, add_special_tokens=False)]


# SIF: a token's weight is a / (a + p), p its share of all tokens (Arora et al. 2017; model2vec's 1e-4).
SIF_A = 1e-4


def corpus_weighted(vectors: np.ndarray, token_ids: list[list[int]]) -> np.ndarray:
    """Unit token vectors times SIF weights from the tokens' frequencies in the training texts.

    model2vec weights by a Zipf estimate from the token's rank in the vocabulary, which calls every
    added code word rare — `namespace`, `dependencies` and `file` head every embedding text, so they
    would outweigh the code itself. Measured frequencies put them where they belong."""
    counts = np.bincount(np.fromiter((t for row in token_ids for t in row), dtype=np.int64), minlength=len(vectors))
    share = counts / max(1, counts.sum())
    weights = SIF_A / (SIF_A + share)
    units = vectors / np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
    return (units * weights[:, None]).astype(np.float32)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work", type=Path, required=True)
    parser.add_argument("--student", type=Path, required=True, help="distillation output (vectors.npy, tokenizer.json)")
    parser.add_argument("--split-identifiers", action="store_true")
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--epochs", type=int, default=6)
    parser.add_argument("--batch", type=int, default=256)
    parser.add_argument("--lr", type=float, default=2e-3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--corpus-weights", action="store_true", help="start from SIF weights of corpus frequencies")
    parser.add_argument("--embedded-only", action="store_true", help="train on the texts embedded so far")
    args = parser.parse_args()
    import torch

    torch.manual_seed(args.seed)
    torch.set_num_threads(2)
    rows = [json.loads(line) for line in (args.work / "texts.jsonl").read_text(encoding="utf-8").splitlines()]
    if args.embedded_only:  # a quick build: the texts the teacher has embedded so far
        known = set(cached_vectors(args.work))
        rows = [r for r in rows if text_key(r["text"]) in known]
    texts = [r["text"] for r in rows]
    teacher = load_teacher(args.work, texts)
    held = holdout_indices(len(texts), args.seed)
    (args.work / "holdout.json").write_text(json.dumps([texts[i] for i in held]))
    is_held = np.zeros(len(texts), dtype=bool)
    is_held[held] = True
    train_idx = np.flatnonzero(~is_held)
    with log_step(args.work, f"train:{args.out.name}"):
        ids = tokenize(args.student / "tokenizer.json", texts, args.split_identifiers)
        initial = np.load(args.student / "vectors.npy").astype(np.float32)
        if args.corpus_weights:
            initial = corpus_weighted(initial, [ids[i] for i in train_idx])
        initial /= np.linalg.norm(initial, axis=1).mean()
        table = torch.nn.Parameter(torch.from_numpy(initial.copy()))
        log_weight = torch.nn.Parameter(torch.zeros(len(initial)))
        optimiser = torch.optim.Adam([table, log_weight], lr=args.lr)
        targets = torch.from_numpy(teacher)

        def bag(indices: np.ndarray) -> tuple[torch.Tensor, torch.Tensor]:
            flat = [t for i in indices for t in ids[i]]
            lengths = [len(ids[i]) for i in indices]
            offsets = np.concatenate(([0], np.cumsum(lengths)[:-1]))
            return torch.tensor(flat, dtype=torch.long), torch.tensor(offsets, dtype=torch.long)

        def student(indices: np.ndarray) -> torch.Tensor:
            flat, offsets = bag(indices)
            return torch.nn.functional.embedding_bag(flat, table, offsets, mode="sum",
                                                     per_sample_weights=torch.exp(log_weight[flat]))

        def agreement() -> float:
            with torch.no_grad():
                cos = [torch.nn.functional.cosine_similarity(student(held[s : s + 1024]), targets[held[s : s + 1024]])
                       for s in range(0, len(held), 1024)]
            return float(torch.cat(cos).mean())

        history = [{"epoch": 0, "holdout_cosine": round(agreement(), 4)}]
        print(history[-1], flush=True)
        best = (history[0]["holdout_cosine"], table.detach().clone(), log_weight.detach().clone())
        rng = np.random.default_rng(args.seed)
        for epoch in range(1, args.epochs + 1):
            started, losses = time.time(), []
            order = rng.permutation(train_idx)
            for s in range(0, len(order), args.batch):
                batch = order[s : s + args.batch]
                loss = (1 - torch.nn.functional.cosine_similarity(student(batch), targets[batch])).mean()
                optimiser.zero_grad()
                loss.backward()
                optimiser.step()
                losses.append(loss.item())
            history.append({"epoch": epoch, "train_loss": round(float(np.mean(losses)), 4),
                            "holdout_cosine": round(agreement(), 4), "seconds": round(time.time() - started, 1)})
            print(history[-1], flush=True)
            if history[-1]["holdout_cosine"] > best[0]:
                best = (history[-1]["holdout_cosine"], table.detach().clone(), log_weight.detach().clone())
        vectors = (best[1] * torch.exp(best[2])[:, None]).numpy()
        args.out.mkdir(parents=True, exist_ok=True)
        np.save(args.out / "vectors.npy", vectors.astype(np.float32))
        shutil.copy(args.student / "tokenizer.json", args.out / "tokenizer.json")
        (args.out / "train.json").write_text(json.dumps({"history": history, "best_holdout_cosine": best[0],
                                                        "split_identifiers": args.split_identifiers,
                                                        "corpus_weights": args.corpus_weights,
                                                        "epochs": args.epochs, "lr": args.lr, "batch": args.batch,
                                                        "seed": args.seed}, indent=1))


if __name__ == "__main__":
    main()
