"""The Elixir extractor gives each captured node the innermost function around it with
`elixir._owned` (a look-up per function, not per node). It must answer what `scopes.Spans.owners`
answers for every node: nested, equal, disjoint and empty spans, nodes on their edges and outside."""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any

from woods.extract import elixir, scopes


@dataclass
class _At:
    start_byte: int


def _nested_spans(rng: random.Random, start: int, end: int, depth: int) -> list[tuple[int, int]]:
    spans: list[tuple[int, int]] = []
    position = start
    while position < end and rng.random() < 0.8:
        a = rng.randint(position, end)
        b = rng.randint(a, end)
        spans.append((a, b))
        if depth and b - a > 2 and rng.random() < 0.5:
            spans.extend(_nested_spans(rng, a, b, depth - 1))
        if rng.random() < 0.1:
            spans.append((a, b))  # an equal span: the later one owns
        position = b
    return spans


def test_owned_answers_what_spans_owners_answers() -> None:
    rng = random.Random(7)
    for _ in range(500):
        spans = _nested_spans(rng, 0, rng.randint(0, 200), 3)
        rng.shuffle(spans)
        positions = sorted(rng.randint(0, 210) for _ in range(rng.randint(0, 60)))
        nodes: list[Any] = [_At(p) for p in positions]
        ordered = sorted(((a, b, i) for i, (a, b) in enumerate(spans)), key=lambda s: (s[0], -s[1], s[2]))
        wanted = [(k, o) for k, o in enumerate(scopes.Spans(spans).owners(positions)) if o is not None]
        assert elixir._owned(ordered, nodes) == wanted
