"""Linking: turn each unit's raw dependency candidates into edges between units of the index.

Why a separate stage: an extractor sees one file; only with every unit of the repository known
can `Foo` inside `module Billing` be resolved to `Billing::Foo` (Ruby lexical constant lookup),
`from .models import User` to `ledger.models.User`, or a Go import path to a package directory.

Rules: a dependency's candidates are its `lookup` names in order, then its `target`; the first
that names a unit wins and becomes the edge target. References that exist only to find code in
this repository (`calls`, `code_reference`, `render` …) are dropped when nothing resolves;
structural ones (superclass, include, import, route …) are kept as written, because "inherits
from ActiveRecord::Base" is a fact worth keeping even if ActiveRecord is not indexed.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace

from woods.units import Dependency, Unit

# Edge kinds that only make sense when they point at a unit of this repository.
DROP_WHEN_UNRESOLVED = frozenset({"calls", "code_reference", "render", "redirect_to", "link_to", "decorator"})


@dataclass(frozen=True, slots=True)
class LinkTargets:
    """Identifier → storage keys, plus path-prefix aliases (Go module path → directory)."""

    keys_by_identifier: Mapping[str, Sequence[str]]
    prefix_aliases: Mapping[str, str]

    @classmethod
    def build(cls, keyed_units: Iterable[tuple[str, Unit]], prefix_aliases: Mapping[str, str] | None = None) -> LinkTargets:
        keys: dict[str, list[str]] = defaultdict(list)
        for key, unit in keyed_units:
            keys[unit.identifier].append(key)
        return cls({k: tuple(v) for k, v in keys.items()}, dict(prefix_aliases or {}))

    def candidates(self, name: str) -> list[str]:
        """`name` and its alias rewrites (longest alias first)."""
        names = [name]
        for prefix in sorted(self.prefix_aliases, key=len, reverse=True):
            if name == prefix or name.startswith(prefix + "/") or name.startswith(prefix + "."):
                replacement = self.prefix_aliases[prefix]
                rest = name[len(prefix) :].lstrip("/")
                rewritten = f"{replacement}/{rest}" if replacement and rest else (replacement or rest)
                if rest.startswith("."):
                    rewritten = replacement + rest
                names.append(rewritten)
                break
        return names

    def resolve(self, dependency: Dependency) -> str | None:
        for raw in (*dependency.lookup, dependency.target):
            for name in self.candidates(raw):
                if name in self.keys_by_identifier:
                    return name
        return None


@dataclass(frozen=True, slots=True)
class LinkedEdge:
    """One stored edge: `target_key` is set when the target is a unit of the index."""

    source_key: str
    source: str
    target: str
    target_key: str | None
    via: str
    ordinal: int


def link_unit(key: str, unit: Unit, names: LinkTargets) -> tuple[Unit, list[LinkedEdge]]:
    """The unit with its dependencies rewritten to resolved targets, and its edges.

    Self-references are dropped; (target, via) pairs are de-duplicated keeping the first.
    """
    kept: list[Dependency] = []
    seen: set[tuple[str, str]] = set()
    for dep in unit.dependencies:
        resolved = names.resolve(dep)
        if resolved is None and dep.via in DROP_WHEN_UNRESOLVED:
            continue
        target = resolved or dep.target
        if target == unit.identifier or (target, dep.via) in seen:
            continue
        seen.add((target, dep.via))
        kept.append(Dependency(target=target, via=dep.via, target_type=dep.target_type))
    linked = replace(unit, dependencies=tuple(kept))
    return linked, edges_of(key, linked, names)


def edges_of(key: str, unit: Unit, names: LinkTargets) -> list[LinkedEdge]:
    """Edges of a unit whose dependencies are final (already linked, or verbatim corpus units)."""
    edges = []
    for ordinal, dep in enumerate(unit.dependencies):
        keys = names.keys_by_identifier.get(dep.target, ())
        target_key = keys[0] if keys else None
        edges.append(LinkedEdge(key, unit.identifier, dep.target, target_key, dep.via, ordinal))
    return edges
