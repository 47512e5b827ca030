"""Measure: cosine agreement of a built model (through woods's run-time encoder) with the teacher on
the held-out texts (<work>/holdout.json, written by train.py), overall and by kind (chunk / nl)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
from teacher import load_teacher

from woods.embedding.static import StaticEmbeddingProvider

# Texts compared pairwise (the similarity matrices are PAIRWISE_TEXTS² floats).
PAIRWISE_TEXTS = 2000


def pairwise_agreement(student: np.ndarray, teacher: np.ndarray) -> float:
    """Pearson correlation of the two models' text-to-text cosine similarities: whether the student
    arranges texts as the teacher does, whatever its space (the distilled models are not aligned
    with the teacher's space before training, so their raw cosine to it says little)."""
    s, t = student[:PAIRWISE_TEXTS], teacher[:PAIRWISE_TEXTS] / np.linalg.norm(teacher[:PAIRWISE_TEXTS], axis=1, keepdims=True)
    upper = np.triu_indices(len(s), k=1)
    return round(float(np.corrcoef((s @ s.T)[upper], (t @ t.T)[upper])[0, 1]), 4)


def neighbour_overlap(student: np.ndarray, teacher: np.ndarray, k: int = 10) -> float:
    """Mean share of each text's k nearest texts (by the teacher) that the student also ranks in its k nearest."""
    s, t = student[:PAIRWISE_TEXTS], teacher[:PAIRWISE_TEXTS] / np.linalg.norm(teacher[:PAIRWISE_TEXTS], axis=1, keepdims=True)
    ss, tt = s @ s.T, t @ t.T
    np.fill_diagonal(ss, -np.inf)
    np.fill_diagonal(tt, -np.inf)
    top_s, top_t = np.argsort(-ss, axis=1)[:, :k], np.argsort(-tt, axis=1)[:, :k]
    return round(float(np.mean([len(set(a) & set(b)) / k for a, b in zip(top_s, top_t, strict=True)])), 4)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work", type=Path, required=True)
    parser.add_argument("--model", type=Path, required=True)
    args = parser.parse_args()
    kind_of = {r["text"]: r["kind"] for r in map(json.loads, (args.work / "texts.jsonl").read_text(encoding="utf-8").splitlines())}
    texts = json.loads((args.work / "holdout.json").read_text())
    teacher = load_teacher(args.work, texts)
    student = StaticEmbeddingProvider(args.model).embed_batch(texts)
    cosine = (student * teacher).sum(axis=1) / np.linalg.norm(teacher, axis=1)
    kinds = np.array([kind_of[t] for t in texts])
    result = {"model": str(args.model), "texts": len(texts), "mean": round(float(cosine.mean()), 4),
              **{kind: round(float(cosine[kinds == kind].mean()), 4) for kind in sorted(set(kinds))},
              "pairwise": pairwise_agreement(student, teacher), "neighbours@10": neighbour_overlap(student, teacher)}
    print(json.dumps(result))


if __name__ == "__main__":
    main()
