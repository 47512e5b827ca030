"""The nouns every indexing stage speaks: units, their dependencies, and one file's extraction.

A *unit* is the smallest thing woods retrieves and resolves: a module, class, method, function,
Rails model, route … Extraction produces them, chunking splits them for the embedder, the stores
persist them, and retrieval hands them back. They are frozen so no stage can change what an
earlier stage decided.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any

# The unit type of every unit the text fallback (woods/extract/text.py) makes for documents and
# configuration; their `language` is the document kind (markdown, yaml, sql …).
DOCUMENT_TYPE = "document"


def sha256_hex(text: str) -> str:
    """SHA-256 hex digest of the UTF-8 text (the Ruby gem's `source_hash` rule: '' hashes too)."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


@dataclass(frozen=True, slots=True)
class Dependency:
    """One outgoing edge of a unit: `via` says what kind of reference it is.

    `target` is the best fully-qualified spelling the extractor could give. `lookup` lists
    alternative spellings in priority order (Ruby lexical constant lookup, Python relative
    imports …); the linker picks the first name that exists in the index. `target_type` is the
    target's unit type when known (the Ruby gem's `type` field on a dependency).
    """

    target: str
    via: str
    target_type: str | None = None
    lookup: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {"type": self.target_type, "target": self.target, "via": self.via}
        return data

    def to_raw(self) -> dict[str, Any]:
        """Lossless JSON form (with `lookup`), for caching extractions between runs."""
        return {**self.to_dict(), "lookup": list(self.lookup)}

    @classmethod
    def from_raw(cls, data: dict[str, Any]) -> Dependency:
        return cls(str(data["target"]), str(data["via"]), data.get("type"), tuple(data.get("lookup") or ()))


@dataclass(frozen=True, slots=True)
class Unit:
    """A retrievable piece of code with its position, text, metadata and outgoing edges.

    Guarantees: `identifier` is in the language's own qualified spelling (`Billing::Invoice#charge`,
    `pkg.mod.Class.method`, `pkg.Class#method`, `crate::m::Type::f`); `file_path` is relative to the
    repository root with `/` separators; `line_start`/`line_end` are 1-based and inclusive;
    `source_code` is the unit's exact text; `parent` is the identifier of the enclosing unit (the
    class of a method), or None at top level.
    """

    identifier: str
    type: str
    language: str
    file_path: str
    line_start: int
    line_end: int
    source_code: str
    namespace: str | None = None
    signature: str | None = None
    docstring: str | None = None
    parent: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    dependencies: tuple[Dependency, ...] = ()

    @property
    def source_hash(self) -> str:
        return sha256_hex(self.source_code)

    def to_dict(self) -> dict[str, Any]:
        """The JSON shape stored in the metadata store (string keys, Ruby `to_h` field names)."""
        record: dict[str, Any] = {
            "identifier": self.identifier,
            "type": self.type,
            "language": self.language,
            "file_path": self.file_path,
            "line_start": self.line_start,
            "line_end": self.line_end,
            "namespace": self.namespace,
        }
        # Optional fields Ruby records do not have are left out when empty, so a keyword such as
        # "parent" never matches every record through a key name (keyword-search parity).
        for name in ("signature", "docstring", "parent"):
            value = getattr(self, name)
            if value is not None:
                record[name] = value
        record.update(
            {
                "source_code": self.source_code,
                "source_hash": self.source_hash,
                "metadata": self.metadata,
                "dependencies": [d.to_dict() for d in self.dependencies],
            }
        )
        return record

    def to_raw(self) -> dict[str, Any]:
        """Lossless JSON form of the unit as extracted (dependencies unresolved, with lookups)."""
        return {
            "identifier": self.identifier,
            "type": self.type,
            "language": self.language,
            "file_path": self.file_path,
            "line_start": self.line_start,
            "line_end": self.line_end,
            "source_code": self.source_code,
            "namespace": self.namespace,
            "signature": self.signature,
            "docstring": self.docstring,
            "parent": self.parent,
            "metadata": self.metadata,
            "dependencies": [d.to_raw() for d in self.dependencies],
        }

    @classmethod
    def from_raw(cls, data: dict[str, Any]) -> Unit:
        fields = dict(data)
        fields["dependencies"] = tuple(Dependency.from_raw(d) for d in data.get("dependencies", ()))
        return cls(**fields)


@dataclass(frozen=True, slots=True)
class FileExtraction:
    """What one file yielded: its units (outermost first, in source order) and warnings.

    A file with syntax errors still yields what parses; `warnings` then says so. `metadata`
    carries file-level facts a language extractor wants to hand on (Rails route tables …).
    """

    file_path: str
    language: str
    units: tuple[Unit, ...]
    warnings: tuple[str, ...] = ()
    metadata: dict[str, Any] = field(default_factory=dict)
