"""A query of any length for an encoder with an input limit: its pieces' vectors, pooled.

Why: MiniLM takes 256 word pieces; a pasted stack trace or bug report is often longer, and a
query must never fail for its length (the byte limit of a query is the only limit). The text is
cut at line boundaries into pieces that fit (a line too long for one piece at word boundaries, a
word too long at characters — nothing is dropped), each piece is embedded, and the mean of their
unit vectors, L2-normalised, is the query's vector: every part of the text counts, and a text
that fits is embedded exactly as before. woods's static model needs none of this (it averages
any number of tokens).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Protocol

import numpy as np


class LimitedEncoder(Protocol):
    """An encoder with an input limit (MiniLM's numpy and ONNX query encoders)."""

    dimension: int
    max_input_tokens: int | None

    def count_tokens(self, text: str) -> int: ...

    def embed(self, text: str) -> np.ndarray: ...


class PooledQueryEncoder:
    """Embeds a text of any length with `encoder` (see the module docstring). Guarantees: never
    raises for a text's length; a text within the limit gets exactly `encoder.embed(text)`; the
    result is a unit-length float32 vector (zero only when every piece's vector is zero)."""

    def __init__(self, encoder: LimitedEncoder) -> None:
        self._encoder = encoder
        self.inner = encoder  # the encoder it pools (which one the index's embedder chose)
        self.dimension = int(encoder.dimension)

    def embed(self, text: str) -> np.ndarray:
        limit = self._encoder.max_input_tokens
        if limit is None or self._encoder.count_tokens(text) <= limit:
            exact: np.ndarray = self._encoder.embed(text)
            return exact
        stacked = np.stack([np.asarray(self._encoder.embed(p), dtype=np.float64) for p in self.pieces(text, limit)])
        pooled: np.ndarray = stacked.mean(axis=0)
        norm = float(np.linalg.norm(pooled))
        result: np.ndarray = (pooled / norm if norm > 0 else pooled).astype(np.float32)
        return result

    def pieces(self, text: str, limit: int) -> list[str]:
        """`text` cut into pieces that each fit `limit`, in order, together holding every word."""
        out: list[str] = []
        current: list[str] = []
        for unit in self._units(text, limit):
            candidate = "\n".join([*current, unit])
            if current and self._encoder.count_tokens(candidate) > limit:
                out.append("\n".join(current))
                current = [unit]
            else:
                current.append(unit)
        if current:
            out.append("\n".join(current))
        return [piece for piece in out if piece.strip()]

    def _units(self, text: str, limit: int) -> Iterator[str]:
        """Lines; a line over the limit as runs of words; a word over it as runs of characters."""
        count = self._encoder.count_tokens
        for line in text.split("\n"):
            if count(line) <= limit:
                yield line
                continue
            run: list[str] = []
            for word in line.split():
                if count(word) > limit:
                    if run:
                        yield " ".join(run)
                        run = []
                    yield from _characters(word, limit, count)
                elif run and count(" ".join([*run, word])) > limit:
                    yield " ".join(run)
                    run = [word]
                else:
                    run.append(word)
            if run:
                yield " ".join(run)


def _characters(word: str, limit: int, count: Callable[[str], int]) -> Iterator[str]:
    """A word too long for one piece, cut at characters (halving until a cut fits)."""
    start = 0
    while start < len(word):
        width = len(word) - start
        while width > 1 and count(word[start : start + width]) > limit:
            width //= 2
        yield word[start : start + width]
        start += width
