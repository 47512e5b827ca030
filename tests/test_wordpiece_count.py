"""Counting word pieces line by line gives exactly what encoding the whole text gives.

The chunker trusts these counts to keep every text within the model's input; an undercount would
make the encoder refuse a chunk, an overcount would split units that fit."""

from __future__ import annotations

import functools
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from woods.embedding.encoder import load_wordpiece_tokenizer, minilm_model_dir
from woods.embedding.wordpiece_count import LineCountingTokenizer

REPO = Path(__file__).resolve().parent.parent


@functools.lru_cache(maxsize=1)
def _tokenizer():
    return load_wordpiece_tokenizer(minilm_model_dir())


@pytest.fixture(scope="module")
def tokenizer():
    return _tokenizer()


def whole(tokenizer, text: str) -> int:
    return len(tokenizer.encode(text).ids)


@pytest.mark.slow  # not in the quick loop: a whole-repository sweep or killed processes
def test_every_source_file_of_this_repository_counts_the_same(tokenizer):
    counter = LineCountingTokenizer(tokenizer)
    files = sorted([*(REPO / "woods").rglob("*.py"), *(REPO / "fixtures").rglob("*.*")])
    checked = 0
    for path in files:
        try:
            text = path.read_text(encoding="utf-8")
        except (UnicodeDecodeError, IsADirectoryError):
            continue
        assert counter.count(text) == whole(tokenizer, text), path
        lines = text.split("\n")
        for cut in (1, len(lines) // 2, len(lines) - 1):  # windows of lines, as the chunker asks
            window = "\n".join(lines[:cut])
            assert counter.count(window) == whole(tokenizer, window), (path, cut)
        checked += 1
    assert checked > 250


@pytest.mark.parametrize("text", [
    "", "\n", "\n\n\n", "a\r\nb\r\n", "déjà vu\ncafé", "中文字符\n混合 text", "x" * 250 + "\n" + "y" * 101,
    "tab\tseparated\n\tindented", "emoji 😀 here\nand 🧪", "\u00a0non-breaking\u00a0space\n", "\x00\x01 control\n",
    "[CLS] literal [SEP]\n[UNK]", "trailing newline\n", "a\x1cb\x1fc\x0bd\x0ce\x85f", "a\u2028b\u2029c\u3000d\u200be",
    "line\u00a0sep\u1680x\u202fy\u205fz", "\ufffd replacement \ufffd", "  leading  and  double  spaces  ",
])
def test_edge_cases_count_the_same(tokenizer, text):
    assert LineCountingTokenizer(tokenizer).count(text) == whole(tokenizer, text)


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=st.characters(codec="utf-8") | st.sampled_from(" \t\n\r\x0b\x0c\x1c\x85\u00a0\u2028\u3000\u200b"), max_size=400))
def test_any_text_counts_the_same(text):
    tokenizer = _tokenizer()
    counter = LineCountingTokenizer(tokenizer)
    assert counter.count(text) == whole(tokenizer, text)
    assert counter.count(text) == whole(tokenizer, text)  # and again from the cache
