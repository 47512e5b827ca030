"""Embedding: the text woods embeds for a unit, and the providers that turn texts into vectors.

Light to import: torch and sentence-transformers load only when SentenceTransformerProvider embeds
its first text; the numpy query encoder never loads them.
"""

from woods.embedding.encoder import MINILM_MODEL_ID, NumpyMiniLMEncoder, minilm_model_dir
from woods.embedding.fake import FakeEmbeddingProvider
from woods.embedding.provider import EmbeddingProvider, l2_normalize_rows
from woods.embedding.replay import ReplayEmbeddingProvider
from woods.embedding.sentence import SentenceTransformerProvider
from woods.embedding.text import (
    embedding_prefix,
    embedding_text,
    unit_embedding_prefix,
    unit_embedding_text,
)
from woods.errors import InputTooLongError, ReplayMissError

__all__ = [
    "MINILM_MODEL_ID",
    "EmbeddingProvider",
    "FakeEmbeddingProvider",
    "InputTooLongError",
    "NumpyMiniLMEncoder",
    "ReplayEmbeddingProvider",
    "ReplayMissError",
    "SentenceTransformerProvider",
    "embedding_prefix",
    "embedding_text",
    "l2_normalize_rows",
    "minilm_model_dir",
    "unit_embedding_prefix",
    "unit_embedding_text",
]
