"""The answers to questions about units and the graph: a unit as stored, a graph walk and its
nodes, units by structural importance.

Why frozen dataclasses with `to_dict()`: `woods lookup|deps|dependents --json`, the MCP tools and
Python callers read the same objects under the same field names.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from woods.store.identity import public_identifier

if TYPE_CHECKING:
    from woods.store.base import Record


@dataclass(frozen=True, slots=True)
class UnitRecord:
    """One unit as stored: identity, place, text and the dependencies extraction recorded.

    `source_code` is None when the lookup asked for no source (and `to_dict()` then leaves it
    out). `dependencies` are `{"target", "via", "type"}` dicts in extraction order; `dependents`
    `{"identifier", "type"}`. `source_hash` is the SHA-256 of the source.
    """

    key: str
    identifier: str
    type: str
    language: str | None
    file_path: str | None
    line_start: int | None
    line_end: int | None
    parent: str | None
    namespace: str | None
    signature: str | None
    docstring: str | None
    source_code: str | None
    dependencies: tuple[dict[str, Any], ...]
    dependents: tuple[dict[str, Any], ...]
    metadata: dict[str, Any]
    source_hash: str | None = None

    @classmethod
    def from_record(cls, record: Record, include_source: bool = True) -> UnitRecord:
        def text(name: str) -> str | None:
            value = record.get(name)
            return None if value is None else str(value)

        def number(name: str) -> int | None:
            value = record.get(name)
            return int(value) if isinstance(value, int | float | str) else None

        key = str(record.get("id") or record["identifier"])
        return cls(
            key=key,
            identifier=str(record.get("identifier") or public_identifier(key)),
            type=str(record.get("type") or ""),
            language=text("language"),
            file_path=text("file_path"),
            line_start=number("line_start"),
            line_end=number("line_end"),
            parent=text("parent"),
            namespace=text("namespace"),
            signature=text("signature"),
            docstring=text("docstring"),
            source_code=text("source_code") if include_source else None,
            dependencies=tuple(dict(d) for d in record.get("dependencies") or ()),
            dependents=tuple(dict(d) for d in record.get("dependents") or ()),
            metadata=dict(record.get("metadata") or {}),
            source_hash=text("source_hash"),
        )

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "key": self.key,
            "identifier": self.identifier,
            "type": self.type,
            "language": self.language,
            "file_path": self.file_path,
            "line_start": self.line_start,
            "line_end": self.line_end,
            "parent": self.parent,
            "namespace": self.namespace,
            "signature": self.signature,
            "docstring": self.docstring,
            "source_code": self.source_code,
            "source_hash": self.source_hash,
            "dependencies": [dict(d) for d in self.dependencies],
            "dependents": [dict(d) for d in self.dependents],
            "metadata": dict(self.metadata),
        }
        if self.source_code is None:
            del data["source_code"]
        return data


@dataclass(frozen=True, slots=True)
class GraphNeighbor:
    """A node reached by a dependency traversal: how (`via`) and how far (`depth`, 1 = direct).

    `indexed` is False for names the code refers to but the index holds no unit for (a gem's
    class, a stdlib module); `types` lists the unit types under that identifier, sorted; the
    location is that of its first unit by (file_path, line_start, key).
    """

    identifier: str
    via: str
    depth: int
    indexed: bool
    types: tuple[str, ...] = ()
    file_path: str | None = None
    line_start: int | None = None
    line_end: int | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "identifier": self.identifier,
            "via": self.via,
            "depth": self.depth,
            "indexed": self.indexed,
            "types": list(self.types),
            "file_path": self.file_path,
            "line_start": self.line_start,
            "line_end": self.line_end,
        }


@dataclass(frozen=True, slots=True)
class GraphWalk:
    """A breadth-first walk of the dependency graph from `identifier` (the public identifier the
    walk started at), in `direction` ("dependencies" or "dependents"): each node once, in BFS
    order, neighbours sorted by (identifier, via). `via` and `types` echo the filters applied."""

    identifier: str
    direction: str
    depth: int
    via: str | tuple[str, ...] | None
    types: tuple[str, ...] | None
    neighbors: tuple[GraphNeighbor, ...]

    def to_dict(self) -> dict[str, Any]:
        return {
            "identifier": self.identifier,
            "direction": self.direction,
            "depth": self.depth,
            "via": list(self.via) if isinstance(self.via, tuple) else self.via,
            "types": None if self.types is None else list(self.types),
            "total": len(self.neighbors),
            "results": [n.to_dict() for n in self.neighbors],
        }


@dataclass(frozen=True, slots=True)
class RankedUnit:
    """A unit by structural importance (PageRank, as the Ruby gem ranks it), with its type."""

    identifier: str
    type: str
    score: float

    def to_dict(self) -> dict[str, Any]:
        return {"identifier": self.identifier, "type": self.type, "score": self.score}


__all__ = ["GraphNeighbor", "GraphWalk", "RankedUnit", "UnitRecord"]
