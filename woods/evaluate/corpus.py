"""Corpus mode: pre-extracted units (the Ruby bench `corpus.json` shape) indexed into real stores.

Why: the Ruby gem's retrieval bench ships extracted units plus captured MiniLM vectors. Loading
those units straight into woods' own stores — no re-extraction — and embedding through the replay
provider (vectors looked up by SHA-256 of the exact embedding text, a miss fails loudly) isolates
retrieval behaviour: any difference from the Ruby capture is a retrieval difference.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from woods.errors import CorpusError as CorpusError
from woods.units import Dependency, Unit

if TYPE_CHECKING:
    from woods.embedding.replay import ReplayEmbeddingProvider
    from woods.store.contracts import IndexMetadata, UnitRow
    from woods.store.graph import DependencyGraph
    from woods.store.index import IndexStores
    from woods.store.vectors import FaissVectorStore

CORPUS_LANGUAGE = "ruby"  # the bench corpus is a Rails application


@dataclass(frozen=True, slots=True)
class Corpus:
    """A loaded corpus: its name, units in file order, and its raw query entries."""

    name: str
    units: tuple[Unit, ...]
    queries: tuple[Mapping[str, Any], ...]


def unit_from_entry(entry: Mapping[str, Any]) -> Unit:
    """One corpus unit → Unit (line 1 to the source's line count; dependencies verbatim)."""
    source = str(entry.get("source_code") or "")
    dependencies = tuple(
        Dependency(str(dep["target"]), str(dep.get("via") or ""), target_type=dep.get("type"))
        for dep in entry.get("dependencies") or []
    )
    return Unit(
        identifier=str(entry["identifier"]),
        type=str(entry["type"]),
        language=CORPUS_LANGUAGE,
        file_path=str(entry.get("file_path") or ""),
        line_start=1,
        line_end=max(1, len(source.splitlines())),
        source_code=source,
        namespace=entry.get("namespace"),
        metadata=dict(entry.get("metadata") or {}),
        dependencies=dependencies,
    )


def load_corpus(path: str | os.PathLike[str]) -> Corpus:
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise CorpusError(f"cannot read corpus {path}: {exc}") from exc
    if not isinstance(data, dict) or not isinstance(data.get("units"), list):
        raise CorpusError(f"{path} is not a corpus: expected an object with a `units` list")
    try:
        units = tuple(unit_from_entry(entry) for entry in data["units"])
    except (KeyError, TypeError) as exc:
        raise CorpusError(f"{path}: malformed unit entry ({exc})") from exc
    return Corpus(str(data.get("name") or Path(path).stem), units, tuple(data.get("queries") or ()))


def build_corpus_index(corpus: Corpus, vectors_path: str | os.PathLike[str], store_dir: Path) -> IndexStores:
    """Write an index of the corpus units with replayed vectors and open it (IndexStores)."""
    from woods.embedding.replay import ReplayEmbeddingProvider
    from woods.indexing import build_index_from_units
    from woods.store.index import IndexStores

    provider = ReplayEmbeddingProvider(vectors_path)
    build_index_from_units(list(corpus.units), provider, store_dir, link=False, chunk=False)
    return IndexStores.open(store_dir)


class BenchRecordView:
    """The bench's record shape over a real MetadataStore: units without a dependents pass.

    The Ruby bench runner stores each corpus unit's `to_h` as extracted, so `dependents` is empty
    and matches nothing; woods' index builder records every unit's dependents. This view empties
    that field in every record it returns and drops search hits that only matched through it, so
    keyword scores (matched-field counts) see exactly the records the Ruby harness saw. Every
    other call is delegated unchanged.
    """

    HIDDEN_FIELD = "dependents"

    def __init__(self, store: IndexMetadata) -> None:
        self._store = store

    def __getattr__(self, name: str) -> Any:
        return getattr(self._store, name)

    def _shape(self, record: UnitRow) -> UnitRow:
        if self.HIDDEN_FIELD not in record:
            return record
        shaped = record.copy()
        shaped["dependents"] = []
        return shaped

    def find(self, key: str) -> UnitRow | None:
        record = self._store.find(key)
        return None if record is None else self._shape(record)

    def find_batch(self, keys: Iterable[str]) -> dict[str, UnitRow]:
        return {k: self._shape(v) for k, v in self._store.find_batch(keys).items()}

    def find_by_identifier(self, identifier: str) -> list[UnitRow]:
        return [self._shape(r) for r in self._store.find_by_identifier(identifier)]

    def find_by_type(self, unit_type: str) -> list[UnitRow]:
        return [self._shape(r) for r in self._store.find_by_type(unit_type)]

    def keyword_fields(self, keyword: str) -> None:
        """None: the store's in-SQL matched-field search sees `dependents`, so the executor derives
        matched fields from `search` (`KeywordSearch.keyword_fields`)."""
        return None

    def search(self, query: str, fields: Sequence[str] | None = None) -> list[UnitRow]:
        from woods.store.base import UNSEARCHED_FIELDS

        needle = query.lower()
        hits = []
        for record in self._store.search(query, fields):
            shaped = self._shape(record)
            if fields is None:
                visible = {k: v for k, v in shaped.items() if k not in UNSEARCHED_FIELDS}
                if needle not in json.dumps(visible, ensure_ascii=False).lower():
                    continue
            elif fields == [self.HIDDEN_FIELD]:
                continue
            hits.append(shaped)
        return hits


@dataclass
class BenchStores:
    """Real stores with the bench record view over the metadata (see BenchRecordView): a
    `SearchableIndex` the retriever reads like any other."""

    raw: IndexStores

    @property
    def metadata(self) -> IndexMetadata:
        view: IndexMetadata = BenchRecordView(self.raw.metadata)  # the rest is the store's own
        return view

    @property
    def vectors(self) -> FaissVectorStore | None:
        return self.raw.vectors

    @property
    def graph(self) -> DependencyGraph:
        return self.raw.graph

    @property
    def has_vectors(self) -> bool:
        return self.raw.has_vectors

    def close(self) -> None:
        self.raw.close()


def replay_factory(vectors_path: str | os.PathLike[str]) -> Callable[[], ReplayEmbeddingProvider]:
    """A zero-argument factory creating the replay provider (query vectors by SHA-256 of the query)."""

    def factory() -> ReplayEmbeddingProvider:
        from woods.embedding.replay import ReplayEmbeddingProvider

        return ReplayEmbeddingProvider(vectors_path)

    return factory
