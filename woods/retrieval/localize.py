"""Issue → code localisation: which files and functions a pasted bug report, failing test run or
stack trace points at, and why.

Why: the question a coding assistant asks most is "here is an issue — which code must change?".
Such a text carries pointers a bag of words drowns (woods/retrieval/evidence.py reads them out):
frames naming a file and a line of the repository, exception classes the project defines, error
messages that are string literals in the code, names written as code, failing tests. This module
maps each onto units of the index, walks the dependency graph one step from the strongest ones
(the code a frame calls, the code a failing test exercises), adds the code search's own answer to
the text's weighted words, and ranks files with their units — each carrying the evidence that put
it there.

Guarantees: pure over the stores it is given (reads only); deterministic (every sort has a
tie-break); any text a query may be gives an answer (no length limit below the query's byte
limit: the search leg asks with the text's weighted terms, never the whole text); evidence that
names nothing in the repository is ignored, never an error.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from woods.paths import TEST, path_roles
from woods.retrieval.evidence import Evidence, Frame, extract_evidence, weighted_terms
from woods.retrieval.signals import CALLABLES, TYPE_DEFINITIONS
from woods.store.metadata import UnitSummary

# Terms the search leg asks with: the text's most telling words (names, paths, messages, tests
# first; prose last). More dilutes BM25 and the query vector with the text's noise.
SEARCH_TERMS = 32
# Units the search leg contributes, and their share of a unit's score (its best scaled to this).
SEARCH_DEPTH = 60
SEARCH_WEIGHT = 1.0
# Evidence weights (× the item's own strength, 0–1): a frame naming a repository file and a line
# is the strongest pointer there is; the frames further out from the failure count less.
FRAME_WEIGHT = 3.0
FRAME_DECAY = 0.6  # per project frame away from the innermost one
PATH_WEIGHT = 2.0
NAME_WEIGHT = 2.0
ERROR_WEIGHT = 1.5
MESSAGE_WEIGHT = 1.5
TEST_WEIGHT = 1.0
# One step through the dependency graph from a unit with direct evidence: its callees and callers
# share this part of its evidence (a bug often sits one call away from the frame that surfaced it).
GRAPH_SHARE = 0.35
GRAPH_SEEDS = 8
GRAPH_NEIGHBOURS = 12
# Tests point at code; they are seldom what must change (the fix's own test aside).
TEST_FACTOR = 0.3
# A file's score: its best unit plus this share of its next two.
FILE_SPREAD = 0.25
UNITS_PER_FILE = 5


class LocalizeStore(Protocol):
    """What localisation reads from the metadata store."""

    def file_paths(self) -> list[str]: ...

    def units_in_files(self, paths: list[str]) -> list[UnitSummary]: ...

    def units_named(self, names: list[str], limit: int = 200) -> list[UnitSummary]: ...

    def unit_summaries(self, keys: list[str]) -> dict[str, UnitSummary]: ...

    def lexical_search(self, terms: list[str], limit: int, weights: tuple[float, ...]) -> list[tuple[str, float]]: ...


class LocalizeGraph(Protocol):
    """What localisation reads from the graph store (one-hop neighbours by identifier)."""

    def dependencies_of(self, identifier: str, via: str | None = None) -> list[str]: ...

    def dependents_of(self, identifier: str, via: str | None = None) -> list[str]: ...


# The search leg: (query text, limit) → [(unit key, score)], best first (woods's code search).
SearchLeg = Callable[[str, int], list[tuple[str, float]]]


@dataclass(frozen=True, slots=True)
class LocalizedUnit:
    """A unit the text points at, its score and why (`evidence`, strongest first)."""

    key: str
    identifier: str
    type: str
    file_path: str
    line_start: int
    line_end: int
    score: float
    evidence: tuple[str, ...]

    def to_dict(self) -> dict[str, object]:
        return {
            "key": self.key, "identifier": self.identifier, "type": self.type, "file_path": self.file_path,
            "line_start": self.line_start, "line_end": self.line_end, "score": self.score,
            "evidence": list(self.evidence),
        }


@dataclass(frozen=True, slots=True)
class LocalizedFile:
    """A file to look at: its score, its units (best first) and the evidence behind them."""

    path: str
    score: float
    units: tuple[LocalizedUnit, ...]
    evidence: tuple[str, ...]

    def to_dict(self) -> dict[str, object]:
        return {"path": self.path, "score": self.score, "evidence": list(self.evidence),
                "units": [u.to_dict() for u in self.units]}


@dataclass(frozen=True, slots=True)
class Localization:
    """Files (best first) and, flattened, their units in rank order; what was read out of the
    text (`found`: counts by kind) and the terms the search leg asked with."""

    files: tuple[LocalizedFile, ...]
    units: tuple[LocalizedUnit, ...]
    found: dict[str, int] = field(default_factory=dict)
    terms: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, object]:
        return {"files": [f.to_dict() for f in self.files], "found": dict(self.found), "terms": list(self.terms)}


class _Scores:
    """Unit key → score and evidence notes, accumulated from every source."""

    def __init__(self) -> None:
        self.score: dict[str, float] = {}
        self.notes: dict[str, dict[str, float]] = {}

    def add(self, key: str, amount: float, note: str) -> None:
        if amount <= 0:
            return
        self.score[key] = self.score.get(key, 0.0) + amount
        notes = self.notes.setdefault(key, {})
        notes[note] = max(notes.get(note, 0.0), amount)


def localize(
    text: str,
    store: LocalizeStore,
    graph: LocalizeGraph | None,
    search: SearchLeg,
    *,
    limit: int = 10,
    lexical_weights: tuple[float, ...],
) -> Localization:
    """Rank files and units for an issue text (see the module docstring)."""
    evidence = extract_evidence(text)
    scores = _Scores()
    files = _FileMatcher(store.file_paths())
    direct = _Direct(store, files, scores)
    direct.frames(evidence)
    direct.paths(evidence)
    direct.names(evidence)
    direct.errors(evidence, lexical_weights)
    direct.messages(evidence, lexical_weights)
    direct.tests(evidence)
    seeds = sorted(scores.score, key=lambda k: (-scores.score[k], k))[:GRAPH_SEEDS]
    terms = tuple(t.term for t in weighted_terms(evidence)[:SEARCH_TERMS])
    query = " ".join(terms) if terms else text[:1000]
    found = search(query, SEARCH_DEPTH) if query.strip() else []
    best = max((s for _k, s in found), default=0.0) or 1.0
    for rank, (key, score) in enumerate(found):
        scores.add(key, SEARCH_WEIGHT * score / best, "search" if rank else "search (best match)")
    summaries = store.unit_summaries(list(scores.score))
    if graph is not None:
        _walk(graph, store, scores, [s for s in seeds if s in summaries], summaries)
        summaries = {**summaries, **store.unit_summaries([k for k in scores.score if k not in summaries])}
    return _ranked(scores, summaries, limit, evidence, terms)


class _FileMatcher:
    """Repository paths by file name, to match a path as the text wrote it by suffix."""

    def __init__(self, paths: Iterable[str]) -> None:
        self._by_name: dict[str, list[str]] = {}
        for path in paths:
            self._by_name.setdefault(path.rpartition("/")[2], []).append(path)

    def match(self, suffixes: Sequence[str]) -> list[str]:
        """Repository paths ending with the longest suffix that matches any (sorted)."""
        for suffix in suffixes:
            name = suffix.rpartition("/")[2]
            hits = [p for p in self._by_name.get(name, ()) if p == suffix or p.endswith("/" + suffix)]
            if hits:
                return sorted(hits)
        return []


class _Direct:
    """Evidence items mapped onto units."""

    def __init__(self, store: LocalizeStore, files: _FileMatcher, scores: _Scores) -> None:
        self.store = store
        self.files = files
        self.scores = scores

    def frames(self, evidence: Evidence) -> None:
        for trace in evidence.traces:
            ordered = list(trace.frames if trace.innermost_first else reversed(trace.frames))
            step = 0
            for frame in ordered:
                paths = self.files.match(frame.path_suffixes())
                if not paths and not frame.project:
                    continue
                weight = FRAME_WEIGHT * max(frame.strength, 0.3) * (FRAME_DECAY**step)
                if self._frame(frame, paths, weight):
                    step += 1

    def _frame(self, frame: Frame, paths: list[str], weight: float) -> bool:
        where = f"{frame.path}:{frame.line}" if frame.line else frame.path
        note = f"frame {where}" + (f" in {frame.function}" if frame.function else "")
        function = _last_name(frame.function)
        if paths:
            units = self.store.units_in_files(paths[:3])
            chosen = _at_line(units, frame.line) if frame.line else []
            if not chosen and function:
                chosen = [u for u in units if u.name == function]
            for unit in chosen:
                self.scores.add(unit.key, weight, note)
            if not chosen:  # the file is named but not the unit: each of its units a little
                for unit in units[:20]:
                    self.scores.add(unit.key, weight * 0.2, note)
            return True
        if function:
            named = [u for u in self.store.units_named([function], limit=20) if u.type in CALLABLES]
            for unit in named[:5]:
                self.scores.add(unit.key, weight * 0.5, note)
            return bool(named)
        return False

    def paths(self, evidence: Evidence) -> None:
        for mention in evidence.paths:
            paths = self.files.match(mention.path_suffixes())
            if not paths:
                continue
            units = self.store.units_in_files(paths[:3])
            weight = PATH_WEIGHT * mention.strength
            note = f"path {mention.raw}"
            chosen = _at_line(units, mention.line) if mention.line else []
            for unit in chosen:
                self.scores.add(unit.key, weight, note)
            for unit in units[:20]:
                self.scores.add(unit.key, weight * (0.1 if chosen else 0.3), note)

    def names(self, evidence: Evidence) -> None:
        wanted: dict[str, tuple[float, str]] = {}
        for item in evidence.names:
            last = _last_name(item.name)
            if last and item.strength > wanted.get(last, (0.0, ""))[0]:
                wanted[last] = (item.strength, item.name)
        if not wanted:
            return
        for unit in self.store.units_named(list(wanted), limit=200):
            strength, written = wanted[unit.name]
            exact = unit.identifier.endswith(written.replace("::", ".").replace("#", "."))
            self.scores.add(unit.key, NAME_WEIGHT * strength * (1.0 if exact else 0.7), f"name {written}")

    def errors(self, evidence: Evidence, weights: tuple[float, ...]) -> None:
        custom = {e.short: e for e in evidence.errors if not e.builtin and e.short}
        if not custom:
            return
        for unit in self.store.units_named(list(custom), limit=50):
            if unit.type in TYPE_DEFINITIONS:
                self.scores.add(unit.key, ERROR_WEIGHT * custom[unit.name].strength, f"defines {unit.name}")
        for short, error in sorted(custom.items()):  # where it is raised: its name in bodies
            for key, _score in self.store.lexical_search([short.lower()], 8, weights):
                self.scores.add(key, ERROR_WEIGHT * error.strength * 0.5, f"mentions {short}")

    def messages(self, evidence: Evidence, weights: tuple[float, ...]) -> None:
        from woods.tokens import query_terms

        seen: set[str] = set()
        for message in evidence.messages:
            for fragment in message.fragments:
                terms = query_terms(fragment)
                if len(terms) < 2 or fragment in seen:
                    continue
                seen.add(fragment)
                hits = self.store.lexical_search(terms, 5, weights)
                top = max((s for _k, s in hits), default=0.0) or 1.0
                for key, score in hits:
                    amount = MESSAGE_WEIGHT * message.strength * score / top
                    self.scores.add(key, amount, f'message "{fragment[:60]}"')

    def tests(self, evidence: Evidence) -> None:
        functions = {t.function: t for t in evidence.tests if t.function}
        if not functions:
            return
        for unit in self.store.units_named(list(functions), limit=50):
            self.scores.add(unit.key, TEST_WEIGHT * functions[unit.name].strength, f"failing test {unit.name}")


def _walk(
    graph: LocalizeGraph, store: LocalizeStore, scores: _Scores, seeds: list[str], summaries: dict[str, UnitSummary]
) -> None:
    """One step from the strongest units: callees and callers share GRAPH_SHARE of their score."""
    for seed in seeds:
        unit = summaries[seed]
        amount = GRAPH_SHARE * scores.score[seed]
        names = [*graph.dependencies_of(unit.identifier)[:GRAPH_NEIGHBOURS],
                 *graph.dependents_of(unit.identifier)[:GRAPH_NEIGHBOURS]]
        neighbours = {n.rpartition(".")[2].rpartition("#")[2].rpartition(":")[2] for n in names}
        wanted = set(names)
        for neighbour in store.units_named(sorted(neighbours - {""}), limit=100):
            if neighbour.identifier in wanted and neighbour.key != seed:
                scores.add(neighbour.key, amount, f"linked to {unit.identifier}")


def _ranked(
    scores: _Scores, summaries: dict[str, UnitSummary], limit: int, evidence: Evidence, terms: tuple[str, ...]
) -> Localization:
    units: list[LocalizedUnit] = []
    for key, score in scores.score.items():
        summary = summaries.get(key)
        if summary is None:
            continue
        if TEST in path_roles(summary.file_path):
            score *= TEST_FACTOR
        weight_of = scores.notes[key]
        units.append(LocalizedUnit(
            key, summary.identifier, summary.type, summary.file_path, summary.line_start, summary.line_end,
            round(score, 6), tuple(sorted(weight_of, key=lambda n: (-weight_of[n], n))),
        ))
    by_file: dict[str, list[LocalizedUnit]] = {}
    for localized in sorted(units, key=lambda u: (-u.score, u.key)):
        by_file.setdefault(localized.file_path, []).append(localized)
    files = []
    for path, members in by_file.items():
        score = members[0].score + FILE_SPREAD * sum(u.score for u in members[1:3])
        why = tuple(dict.fromkeys(n for u in members for n in u.evidence if not n.startswith("search")))
        files.append(LocalizedFile(path, round(score, 6), tuple(members[:UNITS_PER_FILE]), why[:8]))
    files.sort(key=lambda f: (-f.score, f.path))
    chosen = files[:limit]
    found = {
        "frames": sum(len(t.frames) for t in evidence.traces), "paths": len(evidence.paths),
        "errors": len(evidence.errors), "messages": len(evidence.messages), "names": len(evidence.names),
        "tests": len(evidence.tests),
    }
    flat = tuple(sorted((u for f in chosen for u in f.units), key=lambda u: (-u.score, u.key)))
    return Localization(tuple(chosen), flat, found, terms)


def _at_line(units: Sequence[UnitSummary], line: int | None) -> list[UnitSummary]:
    """The innermost unit containing `line` (the smallest span; module-sized units only when
    nothing smaller does)."""
    if line is None:
        return []
    holding = [u for u in units if u.line_start <= line <= u.line_end]
    if not holding:
        return []
    return [min(holding, key=lambda u: (u.line_end - u.line_start, u.key))]


def _last_name(written: str) -> str:
    """The last segment of a dotted, `::`, `#` or `->` name (`pkg.Cls.meth` → `meth`)."""
    text = written.removesuffix("()")
    for separator in ("::", "->", "#", "."):
        text = text.rpartition(separator)[2]
    return text.strip("`'\" <>")


__all__ = ["LocalizeGraph", "LocalizeStore", "Localization", "LocalizedFile", "LocalizedUnit", "localize"]
