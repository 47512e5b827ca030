"""Step 5 of the build: distil token vectors from the teacher with model2vec (runs in the train venv).

model2vec 0.10.0 passes every token of the vocabulary — the teacher's WordPiece pieces plus the
mined code words of vocabulary.txt, each added to the tokenizer as one whole token — through the
teacher alone and keeps its mean-pooled output as that token's vector, then weights each vector by
SIF over a Zipf estimate of its frequency. No PCA: the vectors stay in the teacher's own 384-d
space, so a static vector and a MiniLM vector of the same text are directly comparable (that is
what the training step then optimises and what the agreement measurement reports).

Writes <out>/vectors.npy (float32, vocabulary × 384) and <out>/tokenizer.json (the student's).
"""

from __future__ import annotations

import argparse
import json
import random
from pathlib import Path

import numpy as np
from common import log_step


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work", type=Path, required=True)
    parser.add_argument("--teacher-dir", type=Path, required=True)
    parser.add_argument("--vocabulary", type=Path, default=None, help="mined words (vocabulary.txt); none: teacher's only")
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    import torch
    from model2vec.distill import distill

    random.seed(args.seed)
    np.random.seed(args.seed)
    torch.manual_seed(args.seed)
    words = args.vocabulary.read_text(encoding="utf-8").split() if args.vocabulary else None
    with log_step(args.work, f"distill:{args.out.name}"):
        model = distill(model_name=str(args.teacher_dir), vocabulary=words, pca_dims=None, sif_coefficient=1e-4,
                        quantize_to="float32", device="cpu")
        args.out.mkdir(parents=True, exist_ok=True)
        vectors = np.asarray(model.embedding, dtype=np.float32)
        tokenizer_json = json.loads(model.tokenizer.to_str())
        np.save(args.out / "vectors.npy", vectors)
        (args.out / "tokenizer.json").write_text(json.dumps(tokenizer_json, ensure_ascii=False), encoding="utf-8")
        print(f"{vectors.shape[0]} tokens × {vectors.shape[1]} dims", flush=True)


if __name__ == "__main__":
    main()
