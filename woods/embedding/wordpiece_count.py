"""Counting a BERT tokenizer's word pieces from cached counts of its lines and words.

Why: the chunker asks "does this text fit the model?" many times per long unit — the whole unit,
then growing windows of its lines — and encoding the same text again for every question was most
of an index run's time once embedding got fast (aiohttp: 25,953 encode calls, 17.4 s of 21.4 s of
chunking). BERT's WordPiece is additive over whitespace: its normaliser works character by
character (dropping control characters, mapping whitespace to a space) and its pre-tokeniser splits
at every whitespace character, so no word piece spans one. A text's count is therefore the sum of
its lines' counts, a line's the sum of its words' counts, plus the special tokens added once per
text. Code repeats its words endlessly, so only new words reach the tokenizer (in one batch), and
the sums are exact — the tests compare them with whole-text encoding on real code and random text.
"""

from __future__ import annotations

import re
import threading
from typing import Protocol

# Entries kept per cache (lines and words are keyed by their text): bounded so a process indexing
# one huge repository after another keeps a few tens of MB at most; replacing a full cache is
# enough (the counts of one unit's lines are asked within moments of each other).
CACHE_SIZE = 500_000

# What BERT's normaliser and pre-tokeniser treat as whitespace once control characters are gone:
# tab, newline, carriage return and the non-control Unicode White_Space characters (Rust's
# `char::is_whitespace`, which the `tokenizers` library uses). \v, \f, U+0085 and the
# information separators U+001C–U+001F are control characters there: removed, not split at.
_WHITESPACE = re.compile("[\t\n\r \u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]+")


class _Encoding(Protocol):
    @property
    def ids(self) -> list[int]: ...


class BatchTokenizer(Protocol):
    """The part of a `tokenizers.Tokenizer` this counter uses."""

    def encode_batch(self, inputs: list[str], add_special_tokens: bool = True) -> list[_Encoding]: ...

    def num_special_tokens_to_add(self, is_pair: bool) -> int: ...


class LineCountingTokenizer:
    """`count(text)` = the number of word pieces `tokenizer.encode(text)` yields (special tokens
    included), from cached counts of lines and whitespace-separated words. Guarantees: exact for
    BERT-style tokenizers (per-character normalisation, splitting at whitespace); thread-safe;
    memory bounded by CACHE_SIZE lines and CACHE_SIZE words."""

    def __init__(self, tokenizer: BatchTokenizer) -> None:
        self._tokenizer = tokenizer
        self._special = int(tokenizer.num_special_tokens_to_add(False))
        self._lines: dict[str, int] = {}
        self._words: dict[str, int] = {}
        self._lock = threading.Lock()

    def count(self, text: str) -> int:
        lines = text.split("\n")
        known = self._lines  # a snapshot: the cache is replaced at its bound, never emptied in place
        missing = [line for line in dict.fromkeys(lines) if line not in known]
        fresh = self._count_lines(missing) if missing else {}
        return self._special + sum(fresh[line] if line in fresh else known[line] for line in lines)

    def _count_lines(self, lines: list[str]) -> dict[str, int]:
        split = {line: [w for w in _WHITESPACE.split(line) if w] for line in lines}
        words = self._words
        new_words = list(dict.fromkeys(w for ws in split.values() for w in ws if w not in words))
        counted: dict[str, int] = {}
        if new_words:
            encodings = self._tokenizer.encode_batch(new_words, add_special_tokens=False)
            counted = {word: len(e.ids) for word, e in zip(new_words, encodings, strict=True)}
        fresh = {line: sum(counted[w] if w in counted else words[w] for w in ws) for line, ws in split.items()}
        with self._lock:
            if len(self._words) + len(counted) > CACHE_SIZE:
                self._words = {}
            self._words.update(counted)
            if len(self._lines) + len(fresh) > CACHE_SIZE:
                self._lines = {}
            self._lines.update(fresh)
        return fresh
