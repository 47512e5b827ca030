"""Step 3 of the build: the teacher's vectors of every training text, exactly as woods computes them.

The teacher is the packaged all-MiniLM-L6-v2 through `woods.embedding.onnx.OnnxMiniLMProvider`
(int8 ONNX, what `woods index` embeds with; texts under 32 word pieces run in fp32). Texts are
embedded in shards of SHARD texts, each saved as float16 under <work>/teacher/ with the SHA-256 of
its texts as soon as it is done: an interrupted run resumes with the texts not yet embedded, and a
larger sample later reuses every vector already computed. Natural-language texts are short
and never hit the 256-token limit; chunk texts fit it by construction (woods's chunker).

Run it niced in the background: it is the long step (about 60-65 texts/s on 2 cores).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import time
from pathlib import Path

import numpy as np
from common import log_step

SHARD = 2048


def text_key(text: str) -> bytes:
    return hashlib.sha256(text.encode("utf-8")).digest()


def cached_vectors(work: Path) -> dict[bytes, np.ndarray]:
    """Every teacher vector computed so far, by the SHA-256 of its text (float16 rows)."""
    found: dict[bytes, np.ndarray] = {}
    for keys_path in sorted((work / "teacher").glob("*.keys.npy")):
        vectors = np.load(keys_path.with_name(keys_path.name.replace(".keys.", ".vectors.")))
        for key, row in zip(np.load(keys_path), vectors, strict=True):
            found[bytes(key)] = row
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work", type=Path, required=True)
    args = parser.parse_args()
    work: Path = args.work
    from woods.embedding.onnx import OnnxMiniLMProvider

    texts = [json.loads(line)["text"] for line in (work / "texts.jsonl").read_text(encoding="utf-8").splitlines()]
    out = work / "teacher"
    out.mkdir(exist_ok=True)
    known = set(cached_vectors(work))
    todo = list(dict.fromkeys(t for t in texts if text_key(t) not in known))
    provider = OnnxMiniLMProvider()
    provider.prepare()
    if provider.warnings:
        raise SystemExit("; ".join(provider.warnings))
    shard = len(list(out.glob("*.keys.npy")))
    print(f"{len(texts)} texts, {len(texts) - len(todo)} already embedded, {len(todo)} to embed", flush=True)
    with log_step(work, "teacher"):
        started = time.perf_counter()
        for start in range(0, len(todo), SHARD):
            batch = todo[start : start + SHARD]
            vectors = provider.embed_batch(batch).astype(np.float16)
            keys = np.frombuffer(b"".join(text_key(t) for t in batch), dtype=np.uint8).reshape(len(batch), 32)
            np.save(out / f"{shard:05d}.vectors.npy", vectors)  # vectors first: keys mark a shard complete
            np.save(out / f"{shard:05d}.keys.npy", keys)
            shard += 1
            done = start + len(batch)
            print(f"{done}/{len(todo)} texts, {done / (time.perf_counter() - started):.1f} texts/s", flush=True)


def load_teacher(work: Path, texts: list[str]) -> np.ndarray:
    """The teacher vectors of `texts`, float32, in order."""
    found = cached_vectors(work)
    missing = sum(1 for t in texts if text_key(t) not in found)
    if missing:
        raise SystemExit(f"no teacher vector for {missing} of {len(texts)} texts: run teacher.py to the end")
    return np.stack([found[text_key(t)] for t in texts]).astype(np.float32)


if __name__ == "__main__":
    main()
