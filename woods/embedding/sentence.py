"""SentenceTransformerProvider: the packaged all-MiniLM-L6-v2 through sentence-transformers.

Why: index time embeds thousands of texts, where torch's kernels (and bf16 on CPUs that have
native bf16 units) pay for their import cost. torch and sentence-transformers are imported only
when the first vector is needed, so constructing the provider (to count tokens or read its name)
stays cheap.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

import numpy as np

from woods.embedding.encoder import (
    MINILM_DIMENSION,
    MINILM_MODEL_ID,
    WordPieceEmbedder,
    load_wordpiece_tokenizer,
    minilm_model_dir,
    read_max_seq_length,
    weights_fingerprint,
)
from woods.embedding.provider import embedding_threads, ensure_fits, l2_normalize_rows

Precision = Literal["auto", "fp32", "bf16"]

# Texts per forward pass: sentence-transformers' own default. Batches hold texts of similar length
# (sorted), so padding stays small; on a loaded 2-core machine 16-128 measured within noise.
DEFAULT_BATCH_SIZE = 32

# CPU flags (Linux /proc/cpuinfo) of native bf16 arithmetic. Without them torch emulates bf16 and
# autocast is slower than fp32; with AMX-BF16 it measured 2.2x (idle) to 5x (loaded) faster than
# fp32 on 2 cores, at cosine ≥ 0.99997 to the fp32 vectors (tests require ≥ 0.999).
_NATIVE_BF16_FLAGS = frozenset({"amx_bf16", "avx512_bf16"})
_CPUINFO = Path("/proc/cpuinfo")


def cpu_has_native_bf16(cpuinfo: Path = _CPUINFO) -> bool:
    """True when the CPU advertises native bf16 (AMX-BF16 or AVX512-BF16); False if unknown."""
    try:
        text = cpuinfo.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return False
    for line in text.splitlines():
        if line.startswith("flags"):
            return bool(_NATIVE_BF16_FLAGS.intersection(line.split(":", 1)[-1].split()))
    return False


class SentenceTransformerProvider(WordPieceEmbedder):
    """all-MiniLM-L6-v2 via sentence-transformers on CPU, from the packaged files only (no network).

    Guarantees: `count_tokens` is the exact word-piece count the model sees (incl. [CLS]/[SEP]);
    a text over `max_input_tokens` (the model's max_seq_length, 256) raises InputTooLongError
    instead of being truncated; `embed_batch` returns float32 unit rows in input order. With
    precision "auto", bf16 autocast is used only on CPUs with native bf16 (see `precision`).
    torch threads default to every CPU (`embedding_threads`; WOODS_THREADS overrides).
    """

    def __init__(
        self,
        model_dir: str | os.PathLike[str] | None = None,
        batch_size: int = DEFAULT_BATCH_SIZE,
        precision: Precision = "auto",
        num_threads: int | None = None,
    ) -> None:
        if precision not in ("auto", "fp32", "bf16"):
            raise ValueError(f"precision must be auto, fp32 or bf16, not {precision!r}")
        self.model_dir = Path(model_dir) if model_dir is not None else minilm_model_dir()
        self.name = MINILM_MODEL_ID
        self.model_id = MINILM_MODEL_ID
        self.dimension = MINILM_DIMENSION
        self.max_input_tokens: int | None = read_max_seq_length(self.model_dir)
        self.batch_size = max(1, batch_size)
        self.precision: Literal["fp32", "bf16"] = (
            ("bf16" if cpu_has_native_bf16() else "fp32") if precision == "auto" else precision
        )
        self.num_threads = num_threads if num_threads is not None else embedding_threads()
        self._tokenizer = load_wordpiece_tokenizer(self.model_dir)
        self._model: Any = None
        self._load_lock = threading.Lock()

    @property
    def weights_fingerprint(self) -> str:
        """SHA-256 of model.safetensors: the index compares it to detect a changed model."""
        return weights_fingerprint(self.model_dir)

    def small_job_embedder(self) -> Any:
        """The embedder for a handful of texts: until torch is loaded, the numpy encoder of the same
        weights (≈0.4 s to first vector instead of ≈8 s to import and load torch; cosine ≥ 0.9999 to
        this provider), so re-indexing after editing one file stays quick."""
        if self._model is not None:
            return self
        from woods.embedding.encoder import NumpyMiniLMEncoder

        return NumpyMiniLMEncoder(self.model_dir)

    def embed_batch(self, texts: Sequence[str]) -> np.ndarray:
        out = np.zeros((len(texts), self.dimension), dtype=np.float32)
        if not texts:
            return out
        lengths = [len(encoding.ids) for encoding in self._tokenizer.encode_batch(list(texts))]
        for text, length in zip(texts, lengths, strict=True):
            ensure_fits(length, self.max_input_tokens, text)
        # Longest first, ties by input position: each batch pads to similar lengths.
        order = sorted(range(len(texts)), key=lambda i: (-lengths[i], i))
        for start in range(0, len(order), self.batch_size):
            batch = order[start : start + self.batch_size]
            out[batch] = self._encode([texts[i] for i in batch])
        return out

    def _encode(self, texts: list[str]) -> np.ndarray:
        import torch

        model = self._load()
        # `preprocess` replaced `tokenize` in sentence-transformers 6; both truncate at 256, which
        # never bites because over-long texts were refused above.
        preprocess = getattr(model, "preprocess", None) or model.tokenize
        features = preprocess(texts)
        with torch.inference_mode(), torch.autocast("cpu", dtype=torch.bfloat16,
                                                    enabled=self.precision == "bf16"):
            output = model(features)
        return l2_normalize_rows(output["sentence_embedding"].float().numpy())

    def _load(self) -> Any:
        with self._load_lock:
            return self._model if self._model is not None else self._load_model()

    def _load_model(self) -> Any:
        # Everything is packaged: the model is read from its local directory with
        # `local_files_only=True`, which never reaches the network. This module does not touch the
        # host process's environment or the transformers log level: a library must not. The CLI and
        # MCP entry points set offline mode and quiet the Hugging Face progress bars
        # (`woods.entrypoint.configure_process`).
        import torch
        from sentence_transformers import SentenceTransformer

        torch.set_num_threads(self.num_threads)
        model = SentenceTransformer(str(self.model_dir), device="cpu", local_files_only=True)
        model.eval()
        if model.max_seq_length != self.max_input_tokens:
            raise RuntimeError(
                f"model max_seq_length {model.max_seq_length} != configured {self.max_input_tokens}")
        self._model = model
        return model
