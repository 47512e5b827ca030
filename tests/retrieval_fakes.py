"""In-memory test doubles of the store contract (woods.store.contracts), for retrieval unit tests.

They follow the protocol contracts (records carry "id"; search is a case-insensitive substring
match over the record JSON; vector hits ordered by (−score, id); graph lists sorted) and stay
small enough to read: the metadata store is the Ruby gem's `RecordStore` plus the unit columns a
scope reads (`unit_summaries`), without a lexical index — so a retriever over it runs the Ruby
profile, without exact-name promotion (`promote_exact=False`). Not used by production code.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Collection, Iterable, Sequence
from typing import Any

import numpy as np

from woods.store.base import UNSEARCHED_FIELDS, VectorHit
from woods.store.contracts import UnitSummary
from woods.store.identity import public_identifier, strip_chunk


def make_record(identifier: str, unit_type: str = "model", **fields: Any) -> dict[str, Any]:
    record = {
        "identifier": identifier,
        "type": unit_type,
        "file_path": fields.pop("file_path", f"app/{unit_type}s/{identifier.lower().replace('::', '/')}.rb"),
        "namespace": fields.pop("namespace", None),
        "source_code": fields.pop("source_code", f"class {identifier}\nend\n"),
        "metadata": fields.pop("metadata", {}),
        "dependencies": fields.pop("dependencies", []),
    }
    record.update(fields)
    return record


class InMemoryMetadataStore:
    def __init__(self, records: dict[str, dict[str, Any]] | None = None) -> None:
        self._records: dict[str, dict[str, Any]] = {}
        self.calls: list[tuple[str, Any]] = []
        for key, record in (records or {}).items():
            self.store(key, record)

    def store(self, key: str, record: dict[str, Any]) -> None:
        self._records[key] = dict(record)

    def _out(self, key: str) -> dict[str, Any]:
        return {**self._records[key], "id": key}

    def find(self, key: str) -> dict[str, Any] | None:
        self.calls.append(("find", key))
        return self._out(key) if key in self._records else None

    def find_batch(self, keys: Iterable[str]) -> dict[str, dict[str, Any]]:
        keys = list(keys)
        self.calls.append(("find_batch", keys))
        return {k: self._out(k) for k in dict.fromkeys(keys) if k in self._records}

    def find_by_identifier(self, identifier: str) -> list[dict[str, Any]]:
        found = [k for k, r in self._records.items() if r.get("identifier") == identifier]
        return [self._out(k) for k in sorted(found, key=lambda k: (self._records[k]["type"], k))]

    def find_by_type(self, unit_type: str) -> list[dict[str, Any]]:
        return [self._out(k) for k in sorted(self._records) if self._records[k].get("type") == unit_type]

    def search(self, query: str, fields: Sequence[str] | None = None) -> list[dict[str, Any]]:
        self.calls.append(("search", query))
        needle = query.lower()
        hits = []
        for key, record in self._records.items():
            visible = {k: v for k, v in record.items() if k not in UNSEARCHED_FIELDS}
            if needle in json.dumps(visible, ensure_ascii=False).lower():
                hits.append(self._out(key))
        return hits

    def keyword_fields(self, keyword: str) -> None:
        """None: the executor derives matched fields from `search` (`KeywordSearch`)."""
        return None

    def unit_summaries(self, keys: Iterable[str]) -> dict[str, UnitSummary]:
        found = {}
        for key in dict.fromkeys(keys):
            record = self._records.get(key)
            if record is None:
                continue
            identifier = str(record.get("identifier") or public_identifier(key))
            found[key] = UnitSummary(
                key, identifier, identifier.split("::")[-1], str(record.get("type") or ""),
                str(record.get("language") or ""), str(record.get("file_path") or ""),
                int(record.get("line_start") or 1), int(record.get("line_end") or 1), record.get("parent"), 0.0,
            )
        return found

    def all_identifiers(self) -> list[str]:
        return list(self._records)

    def count(self) -> int:
        return len(self._records)

    def type_counts(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for record in self._records.values():
            counts[record["type"]] = counts.get(record["type"], 0) + 1
        return dict(sorted(counts.items()))


class InMemoryVectorStore:
    def __init__(self, dimension: int) -> None:
        self.dimension = dimension
        self._rows: dict[str, tuple[np.ndarray, dict[str, Any]]] = {}
        self.searches: list[dict[str, Any]] = []

    def add(self, embedding_id: str, vector: np.ndarray, unit_type: str, key: str | None = None) -> None:
        key = key or strip_chunk(embedding_id)
        meta = {"type": unit_type, "identifier": public_identifier(key), "key": key}
        self._rows[embedding_id] = (np.asarray(vector, dtype=np.float64), meta)

    def search(
        self,
        vector: np.ndarray,
        limit: int,
        types: Collection[str] | None = None,
        keys: Collection[str] | None = None,
    ) -> list[VectorHit]:
        self.searches.append({"limit": limit, "types": None if types is None else list(types), "keys": keys})
        query = np.asarray(vector, dtype=np.float64)
        hits = []
        for embedding_id, (row, meta) in self._rows.items():
            if types and meta["type"] not in types:
                continue
            if keys is not None and meta["key"] not in keys:
                continue
            norm = float(np.linalg.norm(row) * np.linalg.norm(query))
            score = float(row @ query) / norm if norm else 0.0
            hits.append(VectorHit(embedding_id, score, dict(meta)))
        hits.sort(key=lambda h: (-h.score, h.embedding_id))
        return hits[:limit]

    def count(self) -> int:
        return len(self._rows)


class InMemoryGraphStore:
    def __init__(self, edges: Iterable[tuple[str, str]] = (), ranks: dict[str, float] | None = None) -> None:
        self.edges = list(edges)
        self._ranks = ranks
        self.pagerank_calls = 0

    def dependencies_of(self, identifier: str, via: str | None = None) -> list[str]:
        return sorted({t for s, t in self.edges if s == identifier})

    def dependents_of(self, identifier: str, via: str | None = None) -> list[str]:
        return sorted({s for s, t in self.edges if t == identifier})

    def pagerank(self) -> dict[str, float]:
        self.pagerank_calls += 1
        if self._ranks is None:
            raise NotImplementedError("no pagerank")
        return dict(self._ranks)

    def pagerank_percentiles(self) -> None:
        """None: the ranker computes percentiles from `pagerank()`."""
        return None


class FakeStores:
    def __init__(self, metadata: Any, vectors: Any = None, graph: Any = None) -> None:
        self.metadata = metadata
        self.vectors = vectors
        self.graph = graph
        self.has_vectors = True


_TOKEN = re.compile(r"[a-z_][a-z0-9_]*")


class BagOfWordsEmbedder:
    """The Ruby fake provider's rule: SHA-256 token buckets, L2-normalised."""

    def __init__(self, dimension: int = 64) -> None:
        self.dimension = dimension
        self.calls: list[str] = []

    def embed(self, text: str) -> np.ndarray:
        self.calls.append(text)
        vector = np.zeros(self.dimension)
        for token in _TOKEN.findall(text.lower()):
            vector[int(hashlib.sha256(token.encode()).hexdigest(), 16) % self.dimension] += 1.0
        norm = np.linalg.norm(vector)
        return vector / norm if norm else vector


class CountingFactory:
    """Zero-argument embedder factory that records how often it was called."""

    def __init__(self, embedder: Any) -> None:
        self.embedder = embedder
        self.created = 0

    def __call__(self) -> Any:
        self.created += 1
        return self.embedder


def build_fake_index(records: dict[str, dict[str, Any]], edges: Iterable[tuple[str, str]] = (), dimension: int = 64):
    """Metadata + bag-of-words vectors + graph over `records` (ranks: none → bucket importance)."""
    metadata = InMemoryMetadataStore(records)
    embedder = BagOfWordsEmbedder(dimension)
    vectors = InMemoryVectorStore(dimension)
    for key, record in records.items():
        vectors.add(key, embedder.embed(f"{record['identifier']}\n{record['source_code']}"), record["type"], key)
    embedder.calls.clear()
    graph = InMemoryGraphStore(edges)
    return FakeStores(metadata, vectors, graph), embedder
