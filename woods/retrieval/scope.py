"""Scopes: restrict a retrieval to units under path prefixes and/or in packages.

Why: in a large repository a small package is drowned by global matches; a scope makes it the
whole corpus. Guarantees (Ruby scope.rb / scoped_*_store.rb): lists must be non-empty strings
without NUL, de-duplicated and sorted; source paths are application-relative (no leading `/`,
drive letter, backslash, or `..` escaping the root; `.` means everything) and match whole path
segments; every requested package must exist; eligibility (scope + type include/exclude) is
applied before any strategy limit, because every store the pipeline sees is a scoped view.
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from woods.errors import InvalidScopeError
from woods.store.base import UNSEARCHED_FIELDS, field_haystack, validate_search_fields
from woods.store.contracts import GraphReader, RecordStore, UnitCatalogue, UnitRow, VectorHit, VectorSearch
from woods.store.identity import public_identifier, strip_chunk

if TYPE_CHECKING:
    import numpy as np

    from woods.filters import FileFilter

_DRIVE = re.compile(r"\A[A-Za-z]:")


def scope_requested(
    packages: Sequence[str] | None, source_paths: Sequence[str] | None, files: FileFilter | None = None
) -> bool:
    """A scope applies iff either list is non-empty or a file filter (`--glob`, `--lang`) is given
    (empty lists behave exactly like no scope)."""
    return bool(packages) or bool(source_paths) or files is not None


def normalize_list(values: Any, name: str) -> tuple[str, ...]:
    if values is None:
        return ()
    if isinstance(values, str) or not isinstance(values, (list, tuple)):
        raise InvalidScopeError(f"{name} must be a list of non-empty strings")
    for value in values:
        if not isinstance(value, str) or not value or "\0" in value:
            raise InvalidScopeError(f"{name} must be a list of non-empty strings")
    return tuple(sorted(set(values)))


def normalize_path(path: str) -> str:
    """Normalise an application-relative path; raise InvalidScopeError when it is not one."""
    if path.startswith("/") or _DRIVE.match(path) or "\\" in path:
        raise InvalidScopeError(f"source path must be application-relative: {path!r}")
    segments: list[str] = []
    for part in path.split("/"):
        if part in ("", "."):
            continue
        if part == "..":
            if not segments:
                raise InvalidScopeError(f"source path escapes the application root: {path!r}")
            segments.pop()
        else:
            segments.append(part)
    return "/".join(segments) if segments else "."


def path_matches(file_path: Any, prefixes: Sequence[str]) -> bool:
    if not isinstance(file_path, str) or not file_path or "\0" in file_path:
        return False
    try:
        normalized = normalize_path(file_path)
    except InvalidScopeError:
        return False
    return any(p == "." or normalized == p or normalized.startswith(p + "/") for p in prefixes)


def _package_of(record: Mapping[str, Any]) -> Any:
    metadata = record.get("metadata")
    return metadata.get("package") if isinstance(metadata, Mapping) else None


class RecordView:
    """An in-memory `RecordStore` over a fixed set of records (the scoped corpus).

    Same contracts as the store protocol: records carry `"id"`; `search` is a case-insensitive
    substring match over the record JSON (or named fields); lists keep key order. It computes no
    matched fields itself (`keyword_fields` answers None).
    """

    def __init__(self, records: Mapping[str, UnitRow]) -> None:
        self._records = {key: _with_id(record, key) for key, record in records.items()}
        self._haystacks = {
            key: json.dumps(
                {k: v for k, v in record.items() if k not in UNSEARCHED_FIELDS}, ensure_ascii=False
            ).lower()
            for key, record in self._records.items()
        }

    def find(self, key: str) -> UnitRow | None:
        record = self._records.get(key)
        return record.copy() if record is not None else None

    def find_batch(self, keys: Iterable[str]) -> dict[str, UnitRow]:
        return {key: self._records[key].copy() for key in dict.fromkeys(keys) if key in self._records}

    def find_by_identifier(self, identifier: str) -> list[UnitRow]:
        found = [r for r in self._records.values() if r.get("identifier") == identifier]
        return [r.copy() for r in sorted(found, key=lambda r: (str(r.get("type")), str(r["id"])))]

    def find_by_type(self, unit_type: str) -> list[UnitRow]:
        return [self._records[k].copy() for k in sorted(self._records) if self._records[k].get("type") == unit_type]

    def search(self, query: str, fields: Sequence[str] | None = None) -> list[UnitRow]:
        needle = query.lower()
        validate_search_fields(fields)
        results = []
        for key, record in self._records.items():
            if fields is None:
                if needle in self._haystacks[key]:
                    results.append(record.copy())
                continue
            for name in fields:
                hay = field_haystack(record.get(name))
                if hay is not None and needle in hay:
                    results.append(record.copy())
                    break
        return results

    def keyword_fields(self, keyword: str) -> None:
        """None: matched fields are derived from `search` by the caller (`KeywordSearch`)."""
        return None

    def all_identifiers(self) -> list[str]:
        return list(self._records)

    def count(self) -> int:
        return len(self._records)

    def type_counts(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for record in self._records.values():
            counts[str(record.get("type"))] = counts.get(str(record.get("type")), 0) + 1
        return dict(sorted(counts.items()))


def _with_id(record: UnitRow, key: str) -> UnitRow:
    """A copy of `record` whose `"id"` is `key`."""
    copy = record.copy()
    copy["id"] = key
    return copy


def _summaries(catalogue: UnitCatalogue, keys: Sequence[str]) -> dict[str, Mapping[str, Any]]:
    """`{key: {"file_path", "type", "language"}}` from the store's unit columns."""
    return {
        key: {"file_path": unit.file_path, "type": unit.type, "language": unit.language}
        for key, unit in catalogue.unit_summaries(keys).items()
    }


class Scope:
    """The eligible units of one scoped request and scoped views of the three stores.

    `catalogue` is the store's unit columns: with it (and no package scope) eligibility is decided
    from indexed paths, types and languages without decoding a record; without it (None: a store of
    records only, such as the in-memory test store) from the records.
    """

    def __init__(
        self,
        metadata: RecordStore,
        *,
        catalogue: UnitCatalogue | None = None,
        packages: Sequence[str] | None = None,
        source_paths: Sequence[str] | None = None,
        types: Sequence[str] | None = None,
        exclude_types: Iterable[str] = (),
        files: FileFilter | None = None,
    ) -> None:
        self.packages = normalize_list(packages, "packages")
        self.files = files
        self.source_paths = tuple(sorted({normalize_path(p) for p in normalize_list(source_paths, "source_paths")}))
        self._source = metadata
        self._view: RecordView | None = None
        keys = sorted(metadata.all_identifiers())
        allowed = {str(t) for t in types} if types else None
        excluded = {str(t) for t in exclude_types}
        summaries = None if self.packages or catalogue is None else _summaries(catalogue, keys)
        if summaries is not None:
            # Paths, types and languages are indexed columns: no record (and no source text) is
            # decoded to decide eligibility; the records are read when a view needs them.
            missing = [k for k in keys if k not in summaries]
            if missing:
                raise InvalidScopeError(f"missing metadata for scoped unit {missing[0]!r}")
            eligible_keys = [k for k in keys if self._eligible(summaries[k], allowed, excluded)]
        else:
            records = metadata.find_batch(keys)
            missing = [k for k in keys if k not in records]
            if missing:
                raise InvalidScopeError(f"missing metadata for scoped unit {missing[0]!r}")
            self._validate_packages(records.values())
            eligible = {key: record for key in keys if self._eligible(record := records[key], allowed, excluded)}
            self._view = RecordView(eligible)
            eligible_keys = list(eligible)
        self.keys: tuple[str, ...] = tuple(sorted(eligible_keys))
        self._key_set = frozenset(self.keys)
        self.identifiers = frozenset(public_identifier(k) for k in self.keys)

    def _validate_packages(self, records: Iterable[Mapping[str, Any]]) -> None:
        names: set[str] = set()
        for record in records:
            if record.get("type") == "package" and record.get("identifier"):
                names.add(str(record["identifier"]))
            package = _package_of(record)
            if package is not None:
                names.add(str(package))
        unknown = [p for p in self.packages if p not in names]
        if unknown:
            raise InvalidScopeError(f"unknown package scope: {', '.join(unknown)}")

    @property
    def metadata(self) -> RecordView:
        """The scoped corpus as an in-memory store (its records read on first use)."""
        if self._view is None:
            records = self._source.find_batch(self.keys)
            missing = [k for k in self.keys if k not in records]
            if missing:
                raise InvalidScopeError(f"missing metadata for scoped unit {missing[0]!r}")
            self._view = RecordView(records)
        return self._view

    def _eligible(self, record: Mapping[str, Any], allowed: set[str] | None, excluded: set[str]) -> bool:
        if self.packages and _package_of(record) not in self.packages:
            return False
        if self.source_paths and not path_matches(record.get("file_path"), self.source_paths):
            return False
        if self.files is not None and not self.files.matches(record.get("file_path"), record.get("language")):
            return False
        unit_type = record.get("type")
        if allowed is not None:
            return unit_type in allowed
        return unit_type not in excluded

    def includes(self, embedding_id: str) -> bool:
        return strip_chunk(embedding_id) in self._key_set

    def summary(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "packages": list(self.packages),
            "source_paths": list(self.source_paths),
            "eligible_units": len(self.keys),
        }
        if self.files is not None:
            data.update(self.files.to_dict())
        return data


class ScopedVectorStore:
    """Vector search restricted to a scope's keys, exhaustive over them before the limit."""

    def __init__(self, store: VectorSearch, scope: Scope) -> None:
        self._store = store
        self._scope = scope
        self.dimension = store.dimension

    def search(
        self,
        vector: np.ndarray,
        limit: int,
        types: Collection[str] | None = None,
        keys: Collection[str] | None = None,
    ) -> list[VectorHit]:
        wanted = None if keys is None else set(keys)
        eligible = [k for k in self._scope.keys if wanted is None or k in wanted]
        if not eligible or limit <= 0:
            return []
        hits = self._store.search(vector, limit, types=types, keys=eligible)
        for hit in hits:
            key = str(hit.metadata.get("key") or strip_chunk(hit.embedding_id))
            if not self._scope.includes(key):
                raise RuntimeError(f"vector store returned out-of-scope id {hit.embedding_id!r}")
        return hits

    def count(self) -> int:
        return self._store.count()


class ScopedGraphStore:
    """Graph reads where both endpoints must be eligible public identifiers."""

    def __init__(self, store: GraphReader, scope: Scope) -> None:
        self._store = store
        self._scope = scope

    def dependencies_of(self, identifier: str, via: str | None = None) -> list[str]:
        if identifier not in self._scope.identifiers:
            return []
        return [d for d in self._store.dependencies_of(identifier, via) if d in self._scope.identifiers]

    def dependents_of(self, identifier: str, via: str | None = None) -> list[str]:
        if identifier not in self._scope.identifiers:
            return []
        return [d for d in self._store.dependents_of(identifier, via) if d in self._scope.identifiers]

    def pagerank(self) -> dict[str, float]:
        """The index's PageRank restricted to eligible units (importance ranks within the scope)."""
        return {k: v for k, v in self._store.pagerank().items() if k in self._scope.identifiers}

    def pagerank_percentiles(self) -> None:
        """None: the index's precomputed percentiles rank every unit, not the scope's; the ranker
        computes the scope's own from `pagerank()`."""
        return None
