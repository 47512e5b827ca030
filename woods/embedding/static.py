"""StaticEmbeddingProvider: woods's own static code-embedding model — a vector per token, averaged.

Why: the transformer (all-MiniLM-L6-v2) embeds 35-65 chunks a second on 2 cores and needs torch or
ONNX Runtime. A static model looks each token's vector up in a table, takes their weighted mean and
L2-normalises it: thousands of texts a second per core with numpy, safetensors and tokenizers only
(no torch, transformers, sentence-transformers or model2vec — tests/test_static_model.py checks in
a fresh interpreter). The table was distilled from that same MiniLM and then trained to reproduce
its vectors of the texts woods embeds (training/static_model/README.md: corpus, recipe, numbers).

Text → vector: identifiers are split into their parts first (`parseHttpResponse`, `parse_http_response`
→ `parse Http Response`, digits apart from letters; `split_identifiers`), then the model's own
uncased WordPiece tokenizer (MiniLM's vocabulary plus whole code words mined from the training
corpus) gives token ids; the vector is Σ scale[t]·q[t] over the tokens, L2-normalised, where q is
the int8 table and scale[t] its row's dequantisation scale times the token's learned weight (a
weighted mean: the count divides out in the normalisation).

Input length: the model has no limit — a pasted 8 KB stack trace is one vector, nothing is cut,
and `embed_batch` never raises InputTooLongError. `max_input_tokens` (256) and `count_tokens`
(MiniLM's own WordPiece count, from its tokenizer.json shipped beside the weights) are what the
chunker packs to, so the chunks are exactly the MiniLM chunks and a later MiniLM pass can reuse
them; for this provider they size chunks, they do not bound input.

Guarantees: float32 rows of `dimension` in input order, unit length (a text without a single
token — empty, or whitespace — gives the zero row); every vector is a function of its text alone
(no batch effects); the fingerprint is the SHA-256 of the weights file plus the precision.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from woods.embedding.provider import file_fingerprint
from woods.embedding.wordpiece_count import LineCountingTokenizer

STATIC_MODEL_NAME = "woods-static-code-v1"
# The id the index manifest records (`name`): query_embedder recognises indexes built with it.
STATIC_MODEL_ID = f"woods/{STATIC_MODEL_NAME}"
# Files of a model directory.
WEIGHTS_FILE = "model.safetensors"
TOKENIZER_FILE = "tokenizer.json"
TEACHER_TOKENIZER_FILE = "teacher_tokenizer.json"
CONFIG_FILE = "model.json"
# The chunk size woods packs embedding texts to: MiniLM's 256 word pieces (incl. [CLS]/[SEP]), so
# the chunks are identical to the MiniLM ones (see the module docstring).
CHUNK_TOKENS = 256
# Texts tokenised per `encode_batch` call: large enough for the tokenizer's own thread pool, small
# enough that a huge batch never holds every encoding at once.
GATHER_BATCH_TEXTS = 1024
# The weights' format this module reads (model.json "format"): bump when the layout changes.
FORMAT_VERSION = 1

# Identifier boundaries: lower→Upper (parseHttp), ACRONYMWord (HTTPResponse → HTTP Response),
# letter↔digit (utf8, sha256 → utf 8, sha 256). Underscores become spaces (snake_case).
_BOUNDARY = re.compile(r"(?<=[a-z])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])|(?<=[A-Za-z])(?=[0-9])|(?<=[0-9])(?=[A-Za-z])")


def split_identifiers(text: str) -> str:
    """`parseHTTPResponse2 snake_case` → `parse HTTP Response 2 snake case` (then lowercased by the
    tokenizer). The build uses this very function, so training and run time split alike."""
    return _BOUNDARY.sub(" ", text.replace("_", " "))


# A directory holding another build of the model (training/static_model writes them) to use instead
# of the shipped one, at index and at query time alike: for comparing builds, never needed otherwise.
MODEL_DIR_ENV = "WOODS_STATIC_MODEL"


def default_model_dir() -> Path:
    """The model shipped in the package, or the build $WOODS_STATIC_MODEL names."""
    override = os.environ.get(MODEL_DIR_ENV, "").strip()
    return Path(override) if override else Path(__file__).resolve().parent / "models" / STATIC_MODEL_NAME


def is_static_model(name: str) -> bool:
    """Whether an index manifest's embedder name is this model's."""
    return name == STATIC_MODEL_ID


@dataclass(frozen=True, slots=True)
class StaticModelConfig:
    """model.json: how to run the weights, and where they came from (provenance)."""

    dimension: int
    vocabulary_size: int
    split_identifiers: bool
    provenance: dict[str, Any]
    # The weights file's SHA-256 and size as the export recorded them (None: an older build).
    weights_sha256: str | None = None
    weights_bytes: int | None = None

    @classmethod
    def read(cls, model_dir: Path) -> StaticModelConfig:
        raw = json.loads((model_dir / CONFIG_FILE).read_text(encoding="utf-8"))
        if int(raw.get("format", 0)) != FORMAT_VERSION:
            raise ValueError(f"{model_dir / CONFIG_FILE}: format {raw.get('format')!r}, this woods reads {FORMAT_VERSION}")
        digest, size = raw.get("weights_sha256"), raw.get("weights_bytes")
        return cls(int(raw["dimension"]), int(raw["vocabulary_size"]), bool(raw["split_identifiers"]),
                   dict(raw.get("provenance", {})), str(digest) if digest else None, int(size) if size else None)


def _load_tokenizer(path: Path) -> Any:
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(path))
    tokenizer.no_truncation()
    tokenizer.no_padding()
    return tokenizer


class StaticEmbeddingProvider:
    """The static model as an EmbeddingProvider (index time) and an Embedder (query time); see the
    module docstring for what it computes and guarantees."""

    def __init__(self, model_dir: str | Path | None = None) -> None:
        from safetensors.numpy import load_file

        self.model_dir = Path(model_dir) if model_dir is not None else default_model_dir()
        self.config = StaticModelConfig.read(self.model_dir)
        self.name = STATIC_MODEL_ID
        self.model_id = STATIC_MODEL_ID
        self.dimension = self.config.dimension
        self.max_input_tokens: int | None = CHUNK_TOKENS
        self.precision = "static-int8"
        tensors = load_file(str(self.model_dir / WEIGHTS_FILE))
        self._table: np.ndarray = tensors["embeddings"]  # int8 (vocabulary, dimension)
        self._scales: np.ndarray = tensors["scales"].astype(np.float32)  # (vocabulary,): dequantisation × weight
        if self._table.shape != (self.config.vocabulary_size, self.dimension) or self._table.dtype != np.int8:
            raise ValueError(f"{self.model_dir / WEIGHTS_FILE}: expected int8 {self.config.vocabulary_size}×"
                             f"{self.dimension} embeddings, found {self._table.dtype} {self._table.shape}")
        self._tokenizer = _load_tokenizer(self.model_dir / TOKENIZER_FILE)
        self._counter: LineCountingTokenizer | None = None  # loaded on the first count (queries never count)

    @property
    def weights_fingerprint(self) -> str:
        """The weights' SHA-256: as model.json records it when the file has the recorded size (a
        cold query then reads no 11 MB to hash them), else hashed."""
        recorded, size = self.config.weights_sha256, self.config.weights_bytes
        if recorded and size is not None and (self.model_dir / WEIGHTS_FILE).stat().st_size == size:
            return recorded
        return file_fingerprint(self.model_dir / WEIGHTS_FILE)

    def count_tokens(self, text: str) -> int:
        """MiniLM's word-piece count of `text` (with [CLS] and [SEP]): what chunks are packed to
        (counted from cached line and word counts: woods.embedding.wordpiece_count)."""
        counter = self._counter
        if counter is None:
            counter = self._counter = LineCountingTokenizer(_load_tokenizer(self.model_dir / TEACHER_TOKENIZER_FILE))
        return counter.count(text)

    def token_ids(self, texts: Sequence[str]) -> list[list[int]]:
        """The model's token ids of each text (identifiers split, no special tokens)."""
        prepared = [split_identifiers(t) for t in texts] if self.config.split_identifiers else list(texts)
        return [encoding.ids for encoding in self._tokenizer.encode_batch(prepared, add_special_tokens=False)]

    def embed_batch(self, texts: Sequence[str]) -> np.ndarray:
        out = np.zeros((len(texts), self.dimension), dtype=np.float32)
        for start in range(0, len(texts), GATHER_BATCH_TEXTS):
            batch = texts[start : start + GATHER_BATCH_TEXTS]
            out[start : start + len(batch)] = self._pool(self.token_ids(batch))
        return out

    def embed(self, text: str) -> np.ndarray:
        row: np.ndarray = self.embed_batch([text])[0]
        return row

    def _pool(self, ids: list[list[int]]) -> np.ndarray:
        """Weighted sum of each text's token rows (scales @ int8 rows: one small product per text,
        whose operands stay in cache — measured 7x faster than one gather of the whole batch and a
        segment sum), L2-normalised."""
        out = np.zeros((len(ids), self.dimension), dtype=np.float32)
        for row, token_ids in enumerate(ids):
            if token_ids:
                out[row] = self._scales[token_ids] @ self._table[token_ids]
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        normalised: np.ndarray = out / np.maximum(norms, np.float32(1e-12))
        return normalised
