"""ReplayEmbeddingProvider: serves captured vectors instead of running a model.

Why: the parity bench (vectors.json) holds the all-MiniLM-L6-v2 vectors the Ruby gem's harness
replays, keyed by the SHA-256 hex of the exact embedded text. Replaying them lets the Python
retrieval pipeline be compared with the Ruby one without any model or numerical drift.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from woods.errors import ReplayMissError as ReplayMissError
from woods.units import sha256_hex

# Name used when the vectors file does not say which model produced it.
_UNKNOWN_MODEL = "replay"


class ReplayEmbeddingProvider:
    """Looks each text's vector up by sha256_hex(text) in a vectors.json file.

    File shape: {"dimensions": N, "vectors": {sha256_hex: [floats]}} (other keys, e.g. "model",
    are optional). Vectors are returned exactly as stored, as float32 (the captured ones are already
    unit length); `embed_exact` gives the stored float64 values. Guarantees: a text that was not
    captured raises ReplayMissError — never a made-up vector. No token limit (max_input_tokens None).
    """

    def __init__(self, vectors_json_path: str | os.PathLike[str]) -> None:
        with open(Path(vectors_json_path), encoding="utf-8") as handle:
            data = json.load(handle)
        vectors = data["vectors"]
        self.dimension = int(data["dimensions"])
        self.name = str(data.get("model") or _UNKNOWN_MODEL)
        self.max_input_tokens: int | None = None
        self._vectors: dict[str, np.ndarray] = {}
        for key, values in vectors.items():
            vector = np.asarray(values, dtype=np.float64)
            if vector.shape != (self.dimension,):
                raise ValueError(f"vector {key} has shape {vector.shape}, expected ({self.dimension},)")
            self._vectors[key] = vector

    def __len__(self) -> int:
        return len(self._vectors)

    def __contains__(self, text: object) -> bool:
        return isinstance(text, str) and sha256_hex(text) in self._vectors

    def count_tokens(self, text: str) -> int:
        """Whitespace tokens: a rough count only, as replay never limits input length."""
        return len(text.split())

    def embed_exact(self, text: str) -> np.ndarray:
        """The stored vector as float64, unchanged."""
        vector = self._vectors.get(sha256_hex(text))
        if vector is None:
            raise ReplayMissError(text)
        return vector.copy()

    def embed_batch(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        return np.stack([self.embed_exact(text) for text in texts]).astype(np.float32)

    def embed(self, text: str) -> np.ndarray:
        return self.embed_exact(text).astype(np.float32)
