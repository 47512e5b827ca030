"""Measure: cosine agreement of a built model (through woods's run-time encoder) with the teacher on
the held-out texts (<work>/holdout.json, written by train.py), overall and by kind (chunk / nl)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
from teacher import load_teacher

from woods.embedding.static import StaticEmbeddingProvider


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
              **{kind: round(float(cosine[kinds == kind].mean()), 4) for kind in sorted(set(kinds))}}
    print(json.dumps(result))


if __name__ == "__main__":
    main()
