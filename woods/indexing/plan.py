"""The chunk plan: every unit's embedding texts, with what they depend on fingerprinted.

Why: chunking calls the tokenizer for every unit (80 % of a 1-file re-index of the standard
library went there). A unit whose header, source, members and the model's input limit are
unchanged reuses the previous generation's plan — its chunks' spans and text hashes — without
tokenizing anything, as long as every one of its vectors is still available.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from woods.chunking import chunk_unit
from woods.embedding.provider import EmbeddingProvider
from woods.embedding.text import bounded_prefix, embedding_text, unit_embedding_prefix
from woods.indexing.summary import Progress
from woods.paths import GENERATED, VENDORED, path_roles
from woods.units import Unit, sha256_hex

# A reused plan row: (chunk_index, chunk_type, line_start, line_end, text_sha256), in index order.
PlanRow = tuple[int, str, int, int, str]

@dataclass(frozen=True, slots=True)
class PreparedText:
    """One embedding text of a unit. `text` is None when the chunk plan was reused from the previous
    generation: its vector is found by `text_sha256`, so the text itself is never needed."""

    key: str
    chunk_index: int
    chunk_type: str
    line_start: int
    line_end: int
    text: str | None
    text_sha256: str
    plan_key: str


def children_by_parent(units: Sequence[Unit]) -> dict[tuple[str, str], list[Unit]]:
    children: dict[tuple[str, str], list[Unit]] = defaultdict(list)
    for unit in units:
        if unit.parent:
            children[(unit.parent, unit.file_path)].append(unit)
    return children


# Bump when chunking changes what it produces for the same input: old plans are then not reused.
CHUNK_PLAN_VERSION = 1

# Embedding less: units of files in these roles get no vector (they stay fully searchable
# lexically, by name and by path, and the ranking demotes them unless a query asks for them).
# Measured on 11 semble-dev repositories (ONNX int8, bench/README.md "Embedding less"): every unit
# embedded 23,648 chunks, NDCG@10 0.8785; without vendored/generated 23,648 (none there), 0.8785.
# Tests keep their vectors: without them 17,500 chunks (-26 %) scored 0.8798, but a question
# about tests ("how is parsing a header line tested") then ranks the code above its test — the
# vector leg is what lets such a question find the test (tests/test_code_search.py).
NO_VECTOR_ROLES: frozenset[str] = frozenset({VENDORED, GENERATED})
# Document units (README, docs, configuration prose) keep their vectors: leaving them out saved
# 3.7 % of the chunks at NDCG@10 0.8784 (-0.0001) — too little to give up questions about docs.
EMBED_DOCUMENTS = True


def wants_vector(unit: Unit) -> bool:
    """Whether a unit is embedded (see NO_VECTOR_ROLES and EMBED_DOCUMENTS)."""
    if not EMBED_DOCUMENTS and unit.type == "document":
        return False
    return not NO_VECTOR_ROLES.intersection(path_roles(unit.file_path))


def plan_key(prefix: str, unit: Unit, kids: Sequence[Unit], limit: int | None) -> str:
    """What a unit's chunks depend on: its header, source, members' spans, the input limit."""
    spans = [(k.line_start, k.line_end, k.identifier) for k in kids]
    material = json.dumps(
        [CHUNK_PLAN_VERSION, unit.type, unit.language, unit.line_start, prefix, unit.source_code, spans, limit],
        ensure_ascii=False,
    )
    return sha256_hex(material)


# Units whose text is counted together before they are chunked one by one (see `_prime`).
PRIME_UNITS = 2_000


def _prime(provider: EmbeddingProvider, keyed: Sequence[tuple[str, Unit]]) -> None:
    """Count the next units' texts as one text first. The chunker then asks about each unit and
    its windows of lines; a counter that caches the counts of lines and words (the MiniLM one:
    woods.embedding.wordpiece_count) has met every word of them here, in one tokenizer batch,
    instead of in a small batch per question. Any other counter just counts once more."""
    provider.count_tokens("\n".join(f"{unit_embedding_prefix(u)}\n{u.source_code or ''}" for _k, u in keyed))


def prepare_texts(
    keyed: Sequence[tuple[str, Unit]],
    provider: EmbeddingProvider,
    chunk: bool,
    progress: Progress,
    plans: dict[str, list[PlanRow]],
    cached_vector: Callable[[str], bool],
    children: dict[tuple[str, str], list[Unit]] | None = None,
) -> list[PreparedText]:
    """Every unit's embedding texts (none for units `wants_vector` declines, when chunking a
    repository). A unit whose plan key (header, source, members, limit) is
    in `plans` and whose chunk vectors all exist reuses that plan without tokenizing anything:
    chunking (tokenizer calls) was 80 % of a 1-file re-index of the standard library."""
    if children is None:
        children = children_by_parent([u for _k, u in keyed])
    limit = provider.max_input_tokens if chunk else None
    prepared: list[PreparedText] = []
    for position, (key, unit) in enumerate(keyed):
        progress.advance()
        if chunk and limit is not None and position % PRIME_UNITS == 0:
            _prime(provider, keyed[position : position + PRIME_UNITS])
        if not chunk:  # a pre-extracted corpus (the Ruby bench): every unit, as the gem embeds them
            text = embedding_text(unit_embedding_prefix(unit), unit.source_code)
            if text.strip():
                prepared.append(
                    PreparedText(key, 0, "whole", unit.line_start, unit.line_end, text, sha256_hex(text), "")
                )
            continue
        if not wants_vector(unit):
            continue
        kids = children.get((unit.identifier, unit.file_path), [])
        unit_plan_key = plan_key(unit_embedding_prefix(unit), unit, kids, limit)
        plan = plans.get(unit_plan_key)
        if plan is not None and all(cached_vector(row[4]) for row in plan):
            prepared.extend(PreparedText(key, *row[:4], None, row[4], unit_plan_key) for row in plan)
            continue
        prefix = bounded_prefix(unit, provider.count_tokens, limit)
        for piece in chunk_unit(unit, provider.count_tokens, limit, kids, prefix=prefix):
            prepared.append(
                PreparedText(key, piece.index, piece.chunk_type, piece.line_start, piece.line_end, piece.text,
                             sha256_hex(piece.text), unit_plan_key)
            )
    return prepared
