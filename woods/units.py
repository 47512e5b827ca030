"""The nouns every indexing stage speaks: units, their dependencies, and one file's extraction.

A *unit* is the smallest thing woods retrieves and resolves: a module, class, method, function,
Rails model, route … Extraction produces them, chunking splits them for the embedder, the stores
persist them, and retrieval hands them back. They are frozen so no stage can change what an
earlier stage decided.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass, field
from types import MemberDescriptorType
from typing import Any

# The unit type of every unit the text fallback (woods/extract/text.py) makes for documents and
# configuration; their `language` is the document kind (markdown, yaml, sql …).
DOCUMENT_TYPE = "document"


def sha256_hex(text: str) -> str:
    """SHA-256 hex digest of the UTF-8 text (the Ruby gem's `source_hash` rule: '' hashes too)."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


# Unit and Dependency are built once per declaration and per reference of every file, so their
# `__init__` is written out: the one `dataclass` generates for a frozen class stores each field with
# `object.__setattr__(self, name, value)`, which finds the slot by name on every call; calling the
# slot's own setter stores the same value directly. Measured under callgrind (CPython 3.11): a
# 13-field Unit built from keywords fell from about 20,000 to 10,000 instructions. Everything else
# (fields, defaults, equality, hashing, repr, `replace`, frozen assignment) is still the
# dataclass's own. The setters are bound below each class, as `dataclass(slots=True)` replaces
# the class the body defined.
#
# Pickling (parse workers send every file's units to the indexing process) goes through
# `__reduce__`: the class and its field values, rebuilt by that `__init__`. The dataclass's own
# slots pickling lists `fields()` and sets each through `object.__setattr__`, per object: on the
# standard library's 74k units (106 MB of pickles), dumps 1.14 → 0.68 s and loads 3.45 → 2.29 s.


def _slot_setter(cls: type, name: str) -> Callable[[object, object], None]:
    """The setter of `cls`'s slot `name`: stores into the instance, past the frozen `__setattr__`."""
    slot = cls.__dict__[name]
    assert isinstance(slot, MemberDescriptorType), f"{cls.__name__}.{name} is not a slot"
    setter: Callable[[object, object], None] = slot.__set__
    return setter


class _Factory:
    """The default of a field with a `default_factory` in a written-out `__init__` signature."""

    def __repr__(self) -> str:
        return "<factory>"  # what the generated signature shows


# `Unit(…)` without `metadata`: a new empty dict each time (the field's `default_factory`).
_NEW_DICT: Any = _Factory()


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

    def __init__(self, target: str, via: str, target_type: str | None = None, lookup: tuple[str, ...] = ()) -> None:
        # What the generated __init__ does, through the slots' own setters (see `_slot_setter`).
        _set_dependency_target(self, target)
        _set_dependency_via(self, via)
        _set_dependency_target_type(self, target_type)
        _set_dependency_lookup(self, lookup)

    def __reduce__(self) -> tuple[type[Dependency], tuple[str, str, str | None, tuple[str, ...]]]:
        return (Dependency, (self.target, self.via, self.target_type, self.lookup))

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {"type": self.target_type, "target": self.target, "via": self.via}
        return data

    def to_raw(self) -> dict[str, Any]:
        """Lossless JSON form (with `lookup`), for caching extractions between runs."""
        return {**self.to_dict(), "lookup": list(self.lookup)}

    @classmethod
    def from_raw(cls, data: dict[str, Any]) -> Dependency:
        return cls(str(data["target"]), str(data["via"]), data.get("type"), tuple(data.get("lookup") or ()))


_set_dependency_target = _slot_setter(Dependency, "target")
_set_dependency_via = _slot_setter(Dependency, "via")
_set_dependency_target_type = _slot_setter(Dependency, "target_type")
_set_dependency_lookup = _slot_setter(Dependency, "lookup")


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

    def __init__(
        self,
        identifier: str,
        type: str,
        language: str,
        file_path: str,
        line_start: int,
        line_end: int,
        source_code: str,
        namespace: str | None = None,
        signature: str | None = None,
        docstring: str | None = None,
        parent: str | None = None,
        metadata: dict[str, Any] = _NEW_DICT,
        dependencies: tuple[Dependency, ...] = (),
    ) -> None:
        # What the generated __init__ does, through the slots' own setters (see `_slot_setter`).
        _set_unit_identifier(self, identifier)
        _set_unit_type(self, type)
        _set_unit_language(self, language)
        _set_unit_file_path(self, file_path)
        _set_unit_line_start(self, line_start)
        _set_unit_line_end(self, line_end)
        _set_unit_source_code(self, source_code)
        _set_unit_namespace(self, namespace)
        _set_unit_signature(self, signature)
        _set_unit_docstring(self, docstring)
        _set_unit_parent(self, parent)
        _set_unit_metadata(self, {} if metadata is _NEW_DICT else metadata)
        _set_unit_dependencies(self, dependencies)

    def __reduce__(self) -> tuple[Callable[..., Unit], tuple[Any, ...]]:
        return (
            Unit,
            (
                self.identifier, self.type, self.language, self.file_path, self.line_start, self.line_end,
                self.source_code, self.namespace, self.signature, self.docstring, self.parent, self.metadata,
                self.dependencies,
            ),
        )

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


_set_unit_identifier = _slot_setter(Unit, "identifier")
_set_unit_type = _slot_setter(Unit, "type")
_set_unit_language = _slot_setter(Unit, "language")
_set_unit_file_path = _slot_setter(Unit, "file_path")
_set_unit_line_start = _slot_setter(Unit, "line_start")
_set_unit_line_end = _slot_setter(Unit, "line_end")
_set_unit_source_code = _slot_setter(Unit, "source_code")
_set_unit_namespace = _slot_setter(Unit, "namespace")
_set_unit_signature = _slot_setter(Unit, "signature")
_set_unit_docstring = _slot_setter(Unit, "docstring")
_set_unit_parent = _slot_setter(Unit, "parent")
_set_unit_metadata = _slot_setter(Unit, "metadata")
_set_unit_dependencies = _slot_setter(Unit, "dependencies")


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
