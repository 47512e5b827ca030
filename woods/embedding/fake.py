"""FakeEmbeddingProvider: the Ruby gem's offline test embedder, reproduced exactly (tests only).

Why: tests need vectors that are deterministic, cheap, and similar for texts that share words,
without a model. The Ruby Fake provider (#178) is a hashed bag of words; porting it exactly lets
parity tests compare rankings built on it.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence

import numpy as np

from woods.embedding.provider import ensure_fits, l2_normalize_rows

# Ruby Fake provider defaults (#178): 128 buckets and this model name.
FAKE_DIMENSIONS = 128
FAKE_MODEL_NAME = "fake-embedding-test"
# The stand-in for the contextual embedder in tests of the second phase: another name (so its
# vectors are never taken for the base embedder's) and another dimension.
FAKE_CONTEXTUAL_NAME = "fake-contextual-test"
FAKE_CONTEXTUAL_DIMENSIONS = 64

# Words are ASCII identifiers of the lower-cased text, as in the Ruby provider.
_WORD = re.compile(r"[a-z_][a-z0-9_]*")


def _bucket(token: str, dimensions: int) -> int:
    return int(hashlib.sha256(token.encode("utf-8")).hexdigest(), 16) % dimensions


class FakeEmbeddingProvider:
    """Hashed bag-of-words vectors: for each word of the lower-cased text, +1.0 in bucket
    int(sha256_hex(word), 16) % dimensions, then L2-normalise (a text without words stays zero).

    `count_tokens` is the number of whitespace-separated tokens (`len(text.split())`) — a cheap,
    additive stand-in for a real tokenizer so chunking can be tested with `max_input_tokens`.
    Default `max_input_tokens` is None, like the Ruby provider: never chunk.
    """

    def __init__(self, dimensions: int = FAKE_DIMENSIONS, max_input_tokens: int | None = None) -> None:
        if dimensions <= 0:
            raise ValueError("dimensions must be positive")
        self.name = FAKE_MODEL_NAME
        self.dimension = dimensions
        self.max_input_tokens = max_input_tokens

    def count_tokens(self, text: str) -> int:
        return len(text.split())

    def raw_vector(self, text: str) -> np.ndarray:
        """The un-normalised bag-of-words counts (float64), for tests that check the hashing."""
        counts = np.zeros(self.dimension, dtype=np.float64)
        for word in _WORD.findall(text.lower()):
            counts[_bucket(word, self.dimension)] += 1.0
        return counts

    def embed_batch(self, texts: Sequence[str]) -> np.ndarray:
        for text in texts:
            ensure_fits(self.count_tokens(text), self.max_input_tokens, text)
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        return l2_normalize_rows(np.stack([self.raw_vector(text) for text in texts]))

    def embed(self, text: str) -> np.ndarray:
        vector: np.ndarray = self.embed_batch([text])[0]
        return vector


class FakeContextualProvider(FakeEmbeddingProvider):
    """The Fake embedder under another name and dimension: what tests of phase 2 (the contextual
    vectors) embed with, so a generation's vectors say which phase made them."""

    def __init__(self, max_input_tokens: int | None = None) -> None:
        super().__init__(dimensions=FAKE_CONTEXTUAL_DIMENSIONS, max_input_tokens=max_input_tokens)
        self.name = FAKE_CONTEXTUAL_NAME

