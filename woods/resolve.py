"""Resolve: turn a reference someone typed into exactly one unit — or say plainly why not.

Why: an agent or a person names code loosely (`parse_query`, `Foo.bar`, `app/x.rb:12`, a chunk id
from an earlier answer). Acting on the wrong unit is worse than asking, so resolution runs
deterministic stages first and only then a ranked search, and every answer says which stage
decided and how sure it is. An unclear reference comes back `ambiguous` with its candidates,
never as a silent pick.

Stages, in order; the first that decides returns:

1. passthrough (confidence 1.0) — a storage key exactly as stored, a typed key, a chunk id
   (`X#chunk_3` → `X`), `path:line` (the innermost unit containing the line), `path` (the file's
   top-level unit) or an 8+ hex prefix of a unit's stable id. A passthrough-*shaped* reference
   that names nothing is `not_found`; it never falls through to the fuzzy stages — except a bare
   document-kind file name (`response.json`, `self.cfg`), which is as likely a member spelling.
1b. recent (0.95 exact name, 0.7 substring) — only when the caller passes recently seen unit ids,
   and only among equals: when a name stage below finds several definitions, the one the session
   saw resolves (several seen are listed first); when no name matches, the recent ids are tried
   by name and substring. Session memory never hides a definition the name matches.
2. exact (0.98) — the identifier, case-sensitive, in any language's member spelling
   (`Foo#bar`, `Foo.bar`, `Foo::bar`; an Elixir `Mod.fun` names `Mod.fun/2`).
3. normalized (0.9) — case-, `_`/`-`- and camel-case-insensitive, full name first, then a
   qualified suffix or the last segment, then members inherited through superclass and mixin
   edges, then names re-exported by a package (import edges of `pkg/__init__.py`, JS/TS
   `export … from`), then a package-level spelling of a deeper unit (`asyncio.Queue.put` →
   `asyncio.queues.Queue.put`). Among these matches the ones spelled exactly as typed win: case
   folding only applies when nothing matches the exact spelling (`Request` is the class, not the
   function `request`).
2b. phrase (0.85) — an English reference ("the json method of ClientResponse", "ClientResponse's
   json", "json in client_reqrep.py", see `woods.resolve_parse`) parsed into name + kind +
   container and matched deterministically; it replaces stages 2 and 3 for such text.
4. search (0.6) — a caller-supplied searcher; the top hit resolves only when it clearly leads.

Whatever the name stage, two rules run before a match is called ambiguous:

- same definition, two spellings: a unit nested in a unit of the same identifier in the same file
  (a class and its chunk), a Ruby class reopened in several files of which exactly one is its
  conventional home (`Sinatra::Base` in `sinatra/base.rb`), or a module and the definition its
  file is named after (`TokenBucketLimiter.ts` and its class) collapse to the definition; the
  other spellings are listed as `alternatives`.
- library code first: when exactly one candidate lies outside tests, examples and fixtures
  (`woods.paths`, the rules ranking uses; Rust `mod tests` too) and the reference does not ask for
  tests, it resolves to that one with confidence at most 0.8 and lists the others as `alternatives`.

Two more rules: a resolved Python `@overload` stub yields to the one implementation of its name
in its file (the stubs become `alternatives`); and a one-token name that matches nothing gets
`suggestions`, the units whose names are nearest by edit distance ("did you mean", `woods.suggest`)
— next to whatever the search stage answered, never in place of it.

Guarantees: read-only (only reads through the stores); deterministic (every candidate list is
sorted by score desc, then identifier, type, file, line); at most `MAX_CANDIDATES` candidates;
bad input raises `InputError` before any lookup.
"""

from __future__ import annotations

import bisect
import hashlib
import math
import re
import time
from collections import defaultdict
from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass, replace
from enum import StrEnum
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol

from woods import limits
from woods.errors import InputError
from woods.paths import EXAMPLE, FIXTURE, TEST, identifier_roles, path_roles, roles_asked_for
from woods.resolve_parse import ContainerKind, StructuredRef, kind_types, parse_reference
from woods.store.contracts import (
    Graph,
    GraphReader,
    IndexMetadata,
    OpenIndex,
    UnitCatalogue,
    UnitReader,
    UnitRow,
    UnitVectorSearch,
    VectorHit,
)
from woods.store.identity import CHUNK_SUFFIX, TYPED_KEY_PREFIX, key_parts, public_identifier, strip_chunk
from woods.suggest import MAX_SUGGESTIONS, closest, unknown_type_message

if TYPE_CHECKING:
    import numpy as np

    from woods.embedding.provider import QueryEmbedder

# The bounds every interface shares live in woods.limits (rationale there).
MAX_REF_BYTES = limits.MAX_REF_BYTES
MAX_CANDIDATES = limits.RESOLVE_MAX_CANDIDATES
DEFAULT_LIMIT = limits.RESOLVE_DEFAULT_LIMIT
# The search leg looks this deep whatever the caller's limit, so the lead/runner-up comparison
# sees the real runner-up rather than an artefact of a short list.
SEARCH_MIN_DEPTH = 20
# A search hit is trusted only when it scores at least twice its runner-up: a clear lead, not noise.
SEARCH_LEAD_RATIO = 2.0
# Vector hits below this cosine are unrelated text for MiniLM-class models; they only add noise
# to fusion (used by `make_searcher`).
SEARCH_MIN_COSINE = 0.3
# Superclass chains deeper than this are framework plumbing; the walk also stops on cycles.
INHERITANCE_DEPTH = 8
# Recent ids past this many are stale context for "the one I just looked at".
MAX_RECENT = 50
# A fragment shorter than this is a substring of almost everything: no evidence of intent.
MIN_SUBSTRING = 3

CONFIDENCE_PASSTHROUGH = 1.0
CONFIDENCE_RECENT_EXACT = 0.95
CONFIDENCE_EXACT = 0.98
CONFIDENCE_NORMALIZED = 0.9
CONFIDENCE_RECENT_SUBSTRING = 0.7
CONFIDENCE_SEARCH = 0.6
# A parsed English phrase: deterministic matching, but on words the parser had to interpret.
CONFIDENCE_PHRASE = 0.85
# One library definition among test/example/fixture ones: a preference, not a proof, so below
# every plain name match (yet above search, which is only a ranking).
CONFIDENCE_LIBRARY_PREFERRED = 0.8
# Re-export chains (`pkg/__init__` → `pkg.client` → `pkg.client_reqrep.X`) deeper than this are
# not followed; the walk also stops on cycles.
REEXPORT_DEPTH = 4
# Roles a reference does not mean unless it says so (issue 14): their units yield to library code.
SET_ASIDE_ROLES = frozenset({TEST, EXAMPLE, FIXTURE})
# Edges along which a member is reachable from a class: its bases and its Ruby mixins.
INHERITANCE_VIAS = frozenset({"superclass", "include", "extend", "prepend"})

NARROW_HINT = "narrow the reference with --type, a qualified name (Foo#bar, pkg.mod.Foo.bar) or a path (file.rb:12)"

# Member/namespace separators of every indexed language: Ruby `::` `#` `.`, Python/Java/Go/C#/
# Kotlin/Swift `.`, Rust/C++ `::`, PHP `\` and `::`, JS/TS module `path/to/mod:Name.member`.
# Parameter lists `(…)` are never split.
_SPLIT = re.compile(r"::|[#./:\\]")
# `_`/`-` between two letters or digits joins words (`parse_query`); at a segment's edge it means
# something (`_private`, `__init__`) and stays. Separators are not word characters, so one pass
# over a whole identifier treats every segment alike.
_INNER_JOINER = re.compile(r"(?<=[^\W_])[_-]+(?=[^\W_])")
_DEDUP_SUFFIX = re.compile(r"#\d+\Z")  # extractors' `#2`, `#3` for a repeated (identifier, type)
# Elixir's `/arity` (`Plug.Conn.send_resp/3`): `Plug.Conn.send_resp` and `send_resp` name it too.
_ARITY_SUFFIX = re.compile(r"/[0-9]+\Z")
_PATH_LINE = re.compile(r"\A(?P<path>.+?):(?P<line>[0-9]{1,9})(?::[0-9]{1,9})?\Z")
_HEX = re.compile(r"\A[0-9a-fA-F]{8,64}\Z")
_DIGIT = re.compile(r"[0-9]")


class ResolveStatus(StrEnum):
    RESOLVED = "resolved"
    AMBIGUOUS = "ambiguous"
    NOT_FOUND = "not_found"


class ResolveMethod(StrEnum):
    PASSTHROUGH = "passthrough"
    RECENT = "recent"
    EXACT = "exact"
    NORMALIZED = "normalized"
    PHRASE = "phrase"
    SEARCH = "search"


@dataclass(frozen=True, slots=True)
class Candidate:
    """One unit a reference may mean; also the shape a `Searcher` returns (raw `score`)."""

    identifier: str
    type: str
    file_path: str
    line_start: int
    line_end: int
    score: float

    def sort_key(self) -> tuple[float, str, str, str, int, int]:
        return (-self.score, self.identifier, self.type, self.file_path, self.line_start, self.line_end)

    def to_dict(self) -> dict[str, Any]:
        return {
            "identifier": self.identifier,
            "type": self.type,
            "file_path": self.file_path,
            "line_start": self.line_start,
            "line_end": self.line_end,
            "score": self.score,
        }


class Searcher(Protocol):
    """The fuzzy last stage: `query` → scored candidates (higher is better), about `depth` of them."""

    def __call__(self, query: str, depth: int) -> Sequence[Candidate]: ...


@dataclass(frozen=True, slots=True)
class ResolveOutcome:
    """What `resolve` decided. `resolved` carries the unit; otherwise `candidates` say what to pick
    from. `candidates` are the matches of the deciding stage (the unit itself when resolved).
    `alternatives` are matches set aside for the resolved unit (test/example/fixture definitions
    when library code was preferred, other occurrences of the same definition): empty otherwise."""

    status: ResolveStatus
    method: ResolveMethod
    identifier: str | None = None
    type: str | None = None
    file_path: str | None = None
    line_start: int | None = None
    line_end: int | None = None
    confidence: float | None = None
    candidates: tuple[Candidate, ...] = ()
    warnings: tuple[str, ...] = ()
    # True when the resolved unit's file changed on disk since indexing (set by `woods.api.Index`,
    # which checks freshness; `resolve` itself never touches the repository).
    stale: bool = False
    alternatives: tuple[Candidate, ...] = ()
    # Units whose names are nearest (edit distance) to a name that matched nothing: "did you mean".
    suggestions: tuple[Candidate, ...] = ()

    @property
    def exit_code(self) -> int:
        """0 resolved; 3 (a clarification is needed, not an error) otherwise."""
        return 0 if self.status is ResolveStatus.RESOLVED else 3

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {"status": self.status.value, "method": self.method.value}
        for name in ("identifier", "type", "file_path", "line_start", "line_end", "confidence"):
            value = getattr(self, name)
            if value is not None:
                data[name] = value
        data["candidates"] = [c.to_dict() for c in self.candidates]
        if self.alternatives:  # additive: schema_version 1 readers that ignore unknown keys keep working
            data["alternatives"] = [c.to_dict() for c in self.alternatives]
        if self.suggestions:  # additive, like `alternatives`
            data["suggestions"] = [c.to_dict() for c in self.suggestions]
        data["warnings"] = list(self.warnings)
        if self.stale:
            data["stale"] = True
        return data

    def format_human(self) -> str:
        lines: list[str] = []
        for number, cand in enumerate(self.suggestions):
            lead = "did you mean" if number == 0 else "          or"
            lines.append(f"{lead}: {cand.identifier} ({cand.type})  {cand.file_path}:{cand.line_start}")
        if self.status is ResolveStatus.RESOLVED:
            line = f"{self.identifier} ({self.type})  {self.file_path}:{self.line_start}"
            if self.method is ResolveMethod.SEARCH:
                line += f"  [search match, confidence {self.confidence}]"
            lines.append(line)
            for alt in self.alternatives:
                lines.append(f"  also: {alt.identifier} ({alt.type})  {alt.file_path}:{alt.line_start}")
        elif self.status is ResolveStatus.AMBIGUOUS:
            count = len(self.candidates)
            lines.append(f"ambiguous reference: {count} candidate{'' if count == 1 else 's'} ({self.method.value})")
            for number, cand in enumerate(self.candidates, 1):
                lines.append(f"  {number}. {cand.identifier} ({cand.type})  {cand.file_path}:{cand.line_start}")
            lines.append(f"hint: {NARROW_HINT}")
        else:
            lines.append(f"not found: no unit matches this reference ({self.method.value})")
        lines.extend(f"warning: {w}" for w in self.warnings if not w.startswith(DID_YOU_MEAN))
        return "\n".join(lines)


# -- identifier spellings -------------------------------------------------------------------------


def split_segments(identifier: str) -> tuple[str, ...]:
    """`Billing::Invoice#charge` → (Billing, Invoice, charge); `src/a:B.c` → (src, a, B, c).

    Text inside a parameter list stays whole (`Inv#charge(int,String...)` → (Inv, charge(int,String...)))."""
    if "(" not in identifier:
        return tuple(filter(None, _SPLIT.split(identifier)))
    parts: list[str] = []
    current: list[str] = []
    depth = 0
    index = 0
    while index < len(identifier):
        char = identifier[index]
        if char == "(":
            depth += 1
        elif char == ")" and depth:
            depth -= 1
        elif depth == 0 and char in "#./:\\":
            parts.append("".join(current))
            current = []
            index += 1
            continue
        current.append(char)
        index += 1
    parts.append("".join(current))
    return tuple(p for p in parts if p)


def normalize_segment(segment: str) -> str:
    """Case-, `_`/`-`- and camel-insensitive form of one segment, parameter list dropped
    (`parseQuery`, `parse_query`, `ParseQuery` → `parsequery`). Leading and trailing underscores
    stay: `_put` is not `put`, `__init__` not `init`."""
    return _INNER_JOINER.sub("", segment.split("(", 1)[0].lower())


def without_arity(identifier: str) -> str:
    """`Mod.fun/2` → `Mod.fun`: an arity after a dotted last path segment (Elixir's notation) is
    not part of the name; a path such as `src/errors/404` keeps its last segment."""
    match = _ARITY_SUFFIX.search(identifier)
    if match is None or "." not in identifier[: match.start()].rpartition("/")[2]:
        return identifier
    return identifier[: match.start()]


def normalized_segments(identifier: str) -> tuple[str, ...]:
    """The normalised segments of an identifier, the extractors' `#2` duplicate marker and an
    Elixir `/arity` dropped."""
    bare = without_arity(_DEDUP_SUFFIX.sub("", identifier))
    if "(" not in bare:  # fast path (nearly every identifier): whole-string lower, sub and split
        return tuple(filter(None, _SPLIT.split(_INNER_JOINER.sub("", bare.lower()))))
    return tuple(filter(None, (normalize_segment(s) for s in split_segments(bare))))


def stable_id(unit_type: str, identifier: str, file_path: str) -> str:
    """The stable id the index stores per unit (sha256 hex of type\\0identifier\\0file_path)."""

    return hashlib.sha256(f"{unit_type}\0{identifier}\0{file_path}".encode()).hexdigest()


# -- the in-memory name table ---------------------------------------------------------------------


class NameEntry(NamedTuple):
    """The few fields of one unit that resolution needs (no source text). A NamedTuple: a big
    index builds tens of thousands of these, and tuple construction is the cheapest there is."""

    key: str
    identifier: str
    type: str
    file_path: str
    line_start: int
    line_end: int
    parent: str | None
    normalized: tuple[str, ...]

    def candidate(self, score: float) -> Candidate:
        return Candidate(self.identifier, self.type, self.file_path, self.line_start, self.line_end, score)


def _entry(
    key: object, identifier: object, unit_type: object, file_path: object, start: int | None, end: int | None,
    parent: object,
) -> NameEntry:
    name = str(identifier)
    return NameEntry(
        str(key), name, str(unit_type), str(file_path or ""), int(start or 0), int(end or 0),
        str(parent) if parent else None, normalized_segments(name),
    )


def _entry_from_record(record: UnitRow) -> NameEntry:
    return _entry(
        record.get("id") or record["identifier"],
        record["identifier"],
        record.get("type") or "",
        record.get("file_path") or "",
        record.get("line_start"),
        record.get("line_end"),
        record.get("parent"),
    )


@dataclass(frozen=True, slots=True)
class NameTable:
    """Every unit by exact identifier and by normalised last segment, plus the indexed files.

    Built once per index generation (generations are immutable, so the cache never goes stale).
    """

    by_identifier: dict[str, tuple[NameEntry, ...]]
    by_last: dict[str, tuple[NameEntry, ...]]
    files: tuple[str, ...]
    build_seconds: float

    @classmethod
    def build(cls, entries: Iterable[NameEntry]) -> NameTable:
        started = time.perf_counter()
        by_identifier: dict[str, list[NameEntry]] = defaultdict(list)
        by_last: dict[str, list[NameEntry]] = defaultdict(list)
        files: set[str] = set()
        for entry in entries:
            by_identifier[entry.identifier].append(entry)
            if entry.normalized:
                by_last[entry.normalized[-1]].append(entry)
            files.add(entry.file_path)
        return cls(
            {k: tuple(v) for k, v in by_identifier.items()},
            {k: tuple(v) for k, v in by_last.items()},
            tuple(sorted(files)),
            time.perf_counter() - started,
        )

    @classmethod
    def from_metadata(cls, metadata: UnitCatalogue) -> NameTable:
        """From the store's unit columns (`name_rows`: no record or source text decoded)."""
        started = time.perf_counter()
        table = cls.build(_entry(*row) for row in metadata.name_rows())
        return cls(table.by_identifier, table.by_last, table.files, time.perf_counter() - started)

    @classmethod
    def from_records(cls, records: Iterable[UnitRow]) -> NameTable:
        """From unit records (a store of records only); the same table `from_metadata` builds."""
        started = time.perf_counter()
        table = cls.build(_entry_from_record(r) for r in records)
        return cls(table.by_identifier, table.by_last, table.files, time.perf_counter() - started)


def name_table_for(stores: OpenIndex) -> NameTable:
    """The name table of `stores`, built now (a warm handle keeps one per generation: `Index`)."""
    return NameTable.from_metadata(stores.metadata)


# -- validation -----------------------------------------------------------------------------------


def validate_ref(ref: object) -> str:
    """The reference, stripped; InputError for non-text, blank, NUL, unencodable or over 8 KiB."""
    if not isinstance(ref, str):
        raise InputError(f"reference must be text, got {type(ref).__name__}")
    if "\x00" in ref:
        raise InputError("reference contains a NUL character; pass the identifier, path or id as plain text")
    try:
        size = len(ref.encode("utf-8"))
    except UnicodeEncodeError:
        raise InputError("reference is not valid Unicode text (lone surrogate)") from None
    if size > MAX_REF_BYTES:
        raise InputError(f"reference exceeds {MAX_REF_BYTES} bytes (got {size}); pass an identifier, path or id")
    text = ref.strip()
    if not text:
        raise InputError("reference cannot be blank; pass an identifier, a path, path:line or an id")
    return text


def _validate_type(metadata: UnitReader, unit_type: object) -> str | None:
    if unit_type is None:
        return None
    if not isinstance(unit_type, str) or not unit_type.strip():
        raise InputError(f"--type must be a unit type name, got {unit_type!r}")
    present = metadata.type_counts()
    if unit_type not in present:
        raise InputError(unknown_type_message(unit_type, present))
    return unit_type


def _validate_limit(limit: object) -> int:
    if isinstance(limit, bool) or not isinstance(limit, int) or limit <= 0:
        raise InputError(f"limit must be a positive integer, got {limit!r}")
    return limit


def _validate_recent(recent: object) -> tuple[str, ...]:
    if recent is None:
        return ()
    if isinstance(recent, str) or not isinstance(recent, (list, tuple)):
        raise InputError("recent must be a list of unit ids, most recent first")
    ids = []
    for item in recent[:MAX_RECENT]:
        if not isinstance(item, str) or "\x00" in item:
            raise InputError(f"recent: {item!r} is not a unit id")
        ids.append(item)
    return tuple(ids)


# -- outcome builders -----------------------------------------------------------------------------


def _dedupe(entries: Iterable[NameEntry]) -> list[NameEntry]:
    return list({e.key: e for e in entries}.values())


def _decide(
    method: ResolveMethod, entries: Sequence[NameEntry], confidence: float, warnings: Sequence[str] = ()
) -> ResolveOutcome:
    """One entry resolves; several are ambiguous with all of them (capped at MAX_CANDIDATES)."""
    unique = _dedupe(entries)
    if len(unique) == 1:
        entry = unique[0]
        return ResolveOutcome(
            ResolveStatus.RESOLVED, method, entry.identifier, entry.type, entry.file_path, entry.line_start,
            entry.line_end, confidence, (entry.candidate(confidence),), tuple(warnings),
        )
    if not unique:
        return ResolveOutcome(ResolveStatus.NOT_FOUND, method, warnings=tuple(warnings))
    return _ambiguous(method, [e.candidate(confidence) for e in unique], warnings)


def _ambiguous(method: ResolveMethod, candidates: Sequence[Candidate], warnings: Sequence[str] = ()) -> ResolveOutcome:
    ordered = sorted(candidates, key=Candidate.sort_key)
    notes = list(warnings)
    if len(ordered) > MAX_CANDIDATES:
        notes.append(f"candidate_narrowed: {len(ordered) - MAX_CANDIDATES} more matched; {NARROW_HINT}")
    return ResolveOutcome(
        ResolveStatus.AMBIGUOUS, method, candidates=tuple(ordered[:MAX_CANDIDATES]), warnings=tuple(notes)
    )


def _resolved(entry: NameEntry, method: ResolveMethod, confidence: float, alternatives: Sequence[NameEntry]) -> ResolveOutcome:
    others = sorted((a.candidate(confidence) for a in _dedupe(alternatives)), key=Candidate.sort_key)
    return ResolveOutcome(
        ResolveStatus.RESOLVED, method, entry.identifier, entry.type, entry.file_path, entry.line_start,
        entry.line_end, confidence, (entry.candidate(confidence),), alternatives=tuple(others[:MAX_CANDIDATES]),
    )


def plain_segments(identifier: str) -> tuple[str, ...]:
    """The segments as spelled, without the `#2` duplicate marker or a parameter list (`Inv#post(int)`
    → (Inv, post)): what "exact spelling" compares."""
    return tuple(s.split("(", 1)[0] for s in split_segments(without_arity(_DEDUP_SUFFIX.sub("", identifier))))


def _spelled(entries: Iterable[NameEntry], segments: tuple[str, ...]) -> list[NameEntry]:
    """The entries whose identifier ends with `segments` spelled exactly (case-sensitive)."""
    size = len(segments)
    return [e for e in entries if size and plain_segments(e.identifier)[-size:] == segments]


def _is_set_aside(entry: NameEntry) -> bool:
    """Test, example or fixture code: by path, by an enclosing `tests` namespace, or a test unit
    itself (Zig `test "name"`, ExUnit and bats tests)."""
    return (
        entry.type == TEST
        or bool(set(path_roles(entry.file_path)) & SET_ASIDE_ROLES)
        or bool(identifier_roles(entry.normalized))
    )


_WORDS = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")


def asks_for_set_aside_code(text: str) -> bool:
    """The reference names a test path or a test identifier (`test_client.py`, `TestMux`,
    `crate::x::tests::helper`, "the fixture …"): then tests are not set aside."""
    words = {w.lower() for w in _WORDS.findall(text)}
    if roles_asked_for(words) & SET_ASIDE_ROLES:
        return True
    return bool(set(path_roles(text.strip())) & SET_ASIDE_ROLES)


def _ruby_home(entry: NameEntry) -> bool:
    """A Ruby unit in its conventional file: `Sinatra::Base` in `…/sinatra/base.rb` (or `base.rb`)."""
    if not entry.file_path.endswith(".rb"):
        return False
    snake = [re.sub(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])", "_", s).lower() for s in plain_segments(entry.identifier)]
    stem = entry.file_path.rsplit("/", 1)[-1][: -len(".rb")]
    return bool(snake) and stem == snake[-1]


def _collapse(entries: Sequence[NameEntry]) -> tuple[list[NameEntry], list[NameEntry]]:
    """(kept, folded): same-definition spellings folded into one (see the module docstring)."""
    kept: list[NameEntry] = []
    folded: list[NameEntry] = []
    by_identifier: dict[str, list[NameEntry]] = defaultdict(list)
    for entry in entries:
        by_identifier[entry.identifier].append(entry)
    for identifier in sorted(by_identifier):
        group = sorted(by_identifier[identifier], key=lambda e: (e.file_path, e.line_start, -e.line_end, e.type, e.key))
        outer: list[NameEntry] = []
        for entry in group:  # a unit inside another of the same identifier and file is that unit
            host = next(
                (o for o in outer if o.file_path == entry.file_path
                 and o.line_start <= entry.line_start and entry.line_end <= o.line_end),
                None,
            )
            (folded if host is not None else outer).append(entry)
        files = {e.file_path for e in outer}
        types = {e.type for e in outer}
        homes = [e for e in outer if _ruby_home(e)]
        if len(files) > 1 and len(types) == 1 and all(e.file_path.endswith(".rb") for e in outer) and len(homes) == 1:
            kept.append(homes[0])  # a Ruby class reopened elsewhere: its home file defines it
            folded.extend(e for e in outer if e is not homes[0])
        else:
            kept.extend(outer)
    # A file named after what it defines (`limiter/TokenBucketLimiter.ts` and its class): the
    # module unit is the definition's file, not another definition.
    named = {(e.file_path, plain_segments(e.identifier)[-1:]) for e in kept if e.type != "module"}
    files_of = [e for e in kept if e.type == "module" and (e.file_path, plain_segments(e.identifier)[-1:]) in named]
    if files_of:
        kept = [e for e in kept if e not in files_of]
        folded.extend(files_of)
    return kept, folded


class _Context:
    """Per-call state: the stores, the type filter, and the name index (built only when needed)."""

    def __init__(self, stores: OpenIndex, unit_type: str | None, text: str = "", names: NameTable | None = None) -> None:
        self.stores = stores
        self.metadata: IndexMetadata = stores.metadata
        self.unit_type = unit_type
        self.prefer_library = not asks_for_set_aside_code(text)
        self._names = names

    def decide(self, method: ResolveMethod, entries: Sequence[NameEntry], confidence: float) -> ResolveOutcome:
        """`_decide` after the two rules that run before ambiguity: same definition, library first."""
        unique = _dedupe(entries)
        if len(unique) < 2:
            return _decide(method, unique, confidence)
        kept, folded = _collapse(unique)
        if len(kept) == 1:
            return _resolved(kept[0], method, confidence, folded)
        if self.prefer_library:
            library = [e for e in kept if not _is_set_aside(e)]
            if len(library) == 1:
                others = [e for e in unique if e.key != library[0].key]
                return _resolved(library[0], method, min(confidence, CONFIDENCE_LIBRARY_PREFERRED), others)
        return _decide(method, unique, confidence)

    @property
    def names(self) -> NameTable:
        if self._names is None:
            self._names = NameTable.from_metadata(self.metadata)
        return self._names

    def keep(self, entries: Iterable[NameEntry]) -> list[NameEntry]:
        if self.unit_type is None:
            return list(entries)
        return [e for e in entries if e.type == self.unit_type]

    def records(self, records: Iterable[UnitRow | None]) -> list[NameEntry]:
        return self.keep(_entry_from_record(r) for r in records if r)


# -- stage 1: passthrough -------------------------------------------------------------------------


def looks_like_path(text: str) -> bool:
    """A file path of an indexed language or document kind (`app/models/user.rb`, `user.rb`,
    `Gemfile`, `README.md`). A document-shaped name that names no indexed file is not decisive
    (`response.json` may be a member): the later stages get it.

    Whitespace rules it out: `explain user.rb` is a question for search, not a path."""
    if "#" in text or any(c.isspace() for c in text):
        return False
    from woods.extract import language_for  # the extractors' table, loaded by the first path-shaped ref

    return language_for(text) is not None


def _is_indexed_file(ctx: _Context, text: str) -> bool:
    """`text` is the exact path of an indexed file: an extension-less script (`bin/deploy`, known
    by its `#!` line) has no extension for `looks_like_path` to go by."""
    if "#" in text or any(c.isspace() for c in text):
        return False
    files = ctx.names.files
    path = _relative_path(ctx, text)
    index = bisect.bisect_left(files, path)
    return index < len(files) and files[index] == path


def _relative_path(ctx: _Context, text: str) -> str:
    path = text
    while path.startswith("./"):
        path = path[2:]
    root = ctx.stores.manifest.root
    if root and path.startswith("/"):
        root_prefix = root.rstrip("/") + "/"
        if path.startswith(root_prefix):
            path = path[len(root_prefix) :]
    return path


def _units_by_file(ctx: _Context, path: str) -> dict[str, list[UnitRow]]:
    """Records of the indexed file `path`, else of every indexed file ending in `/path`."""
    records = ctx.metadata.units_in_file(path)
    if records:
        return {path: records}
    suffix = "/" + path.lstrip("/")
    return {f: ctx.metadata.units_in_file(f) for f in ctx.names.files if f.endswith(suffix)}


def _top_level(entries: Sequence[NameEntry]) -> NameEntry | None:
    """The outermost unit, the first by line when several: min by (start, −end, identifier, type, key)."""
    if not entries:
        return None
    return min(entries, key=lambda e: (e.line_start, -e.line_end, e.identifier, e.type, e.key))


def _innermost(entries: Sequence[NameEntry], line: int) -> list[NameEntry]:
    """The units containing `line` with the smallest span (several only when spans tie exactly)."""
    containing = [e for e in entries if e.line_start <= line <= e.line_end]
    if not containing:
        return []
    span = min((e.line_end - e.line_start, -e.line_start) for e in containing)
    return [e for e in containing if (e.line_end - e.line_start, -e.line_start) == span]


def _path_stage(ctx: _Context, path: str, line: int | None) -> ResolveOutcome:
    files = _units_by_file(ctx, _relative_path(ctx, path))
    if not files:
        return ResolveOutcome(
            ResolveStatus.NOT_FOUND, ResolveMethod.PASSTHROUGH, warnings=(f"path_not_indexed: {path}",)
        )
    chosen: list[NameEntry] = []
    for _file_path, records in sorted(files.items()):
        units = ctx.records(records)
        if line is None:
            top = _top_level(units)
            chosen.extend([top] if top else [])
        else:
            chosen.extend(_innermost(units, line))
    if not chosen:
        where = f"line {line} of {path}" if line is not None else path
        kind = f" of type {ctx.unit_type}" if ctx.unit_type else ""
        return ResolveOutcome(
            ResolveStatus.NOT_FOUND, ResolveMethod.PASSTHROUGH, warnings=(f"no_unit_at: no unit{kind} at {where}",)
        )
    return _decide(ResolveMethod.PASSTHROUGH, chosen, CONFIDENCE_PASSTHROUGH)


def _key_or_identifier(ctx: _Context, name: str) -> list[NameEntry]:
    record = ctx.metadata.find(name)
    if record is not None:
        return ctx.records([record])
    parts = key_parts(name)
    if parts is not None:  # a typed key without location, for units stored under located keys
        identifier, unit_type = parts
        return [e for e in ctx.records(ctx.metadata.find_by_identifier(identifier)) if e.type == unit_type]
    return ctx.records(ctx.metadata.find_by_identifier(name))


def _passthrough(ctx: _Context, text: str) -> ResolveOutcome | None:
    record = ctx.metadata.find(text)
    if record is not None:
        kept = ctx.records([record])
        if kept:
            return _decide(ResolveMethod.PASSTHROUGH, kept, CONFIDENCE_PASSTHROUGH)
    if ctx.records(ctx.metadata.find_by_identifier(text)):
        return None  # a literal identifier shared by several units: the exact stage decides
    if text.startswith(TYPED_KEY_PREFIX) or CHUNK_SUFFIX.search(text):
        return _decide(ResolveMethod.PASSTHROUGH, _key_or_identifier(ctx, strip_chunk(text)), CONFIDENCE_PASSTHROUGH)
    match = _PATH_LINE.match(text)
    if match and (looks_like_path(match["path"]) or _is_indexed_file(ctx, match["path"])):
        return _path_stage(ctx, match["path"], int(match["line"]))
    if looks_like_path(text):
        outcome = _path_stage(ctx, text, None)
        from woods.extract import is_document, language_for

        if outcome.status is ResolveStatus.NOT_FOUND and is_document(language_for(text) or ""):
            return None  # `response.json`, `self.cfg`: as likely a member as a file that is not there
        return outcome
    # Hex made only of letters (`deadbeef`, `acceded`-like words) may be a name: it is an id only
    # when it names one, and a miss falls through to the name stages like any other word.
    if _HEX.match(text):
        found = ctx.records(ctx.metadata.find_by_stable_prefix(text.lower(), limit=10_000))
        if found or _DIGIT.search(text):
            return _decide(ResolveMethod.PASSTHROUGH, found, CONFIDENCE_PASSTHROUGH)
    return None


# -- stage 1b: recent -----------------------------------------------------------------------------


def _last_segment_forms(identifier: str) -> set[str]:
    segments = split_segments(without_arity(_DEDUP_SUFFIX.sub("", identifier)))
    if not segments:
        return set()
    return {segments[-1], segments[-1].split("(", 1)[0]}


def _recent_stage(ctx: _Context, text: str, recent: Sequence[str]) -> ResolveOutcome | None:
    entries: list[NameEntry] = []
    for unit_id in recent:
        entries.extend(_key_or_identifier(ctx, strip_chunk(unit_id)))
    entries = _dedupe(entries)
    if not entries:
        return None
    exact = [e for e in entries if text == e.identifier or text in _last_segment_forms(e.identifier)]
    if exact:
        return _decide(ResolveMethod.RECENT, exact, CONFIDENCE_RECENT_EXACT)
    if len(text) < MIN_SUBSTRING:
        return None
    needle = text.lower()
    partial = [e for e in entries if needle in e.identifier.lower()]
    if partial:
        return _decide(ResolveMethod.RECENT, partial, CONFIDENCE_RECENT_SUBSTRING)
    return None


# -- stage 2: exact -------------------------------------------------------------------------------


def _exact_stage(ctx: _Context, text: str) -> ResolveOutcome | None:
    names = ctx.names
    found = ctx.keep(names.by_identifier.get(text, ()))
    segments = split_segments(text)
    wanted = normalized_segments(text)
    if not found and segments and wanted:
        found = ctx.keep(
            e for e in names.by_last.get(wanted[-1], ())
            if split_segments(e.identifier) == segments or split_segments(without_arity(e.identifier)) == segments
        )
    if not found:
        return None
    if ctx.prefer_library and all(_is_set_aside(e) for e in found):
        # Only test code spells it exactly (Ruby's `class Cart` in a spec is plain `Cart`): the
        # library's `Shop::Cart` is a candidate too, and the library rule decides between them.
        library = [e for e in _normalized_matches(ctx, text) if not _is_set_aside(e)]
        if library:
            return ctx.decide(ResolveMethod.EXACT, found + library, CONFIDENCE_EXACT)
    return ctx.decide(ResolveMethod.EXACT, found, CONFIDENCE_EXACT)


# -- stage 3: normalized --------------------------------------------------------------------------


def _suffix_matches(names: NameTable, wanted: tuple[str, ...]) -> tuple[list[NameEntry], list[NameEntry]]:
    """(full-name matches, qualified-suffix matches) of normalised segments `wanted`."""
    full: list[NameEntry] = []
    suffix: list[NameEntry] = []
    size = len(wanted)
    for entry in names.by_last.get(wanted[-1], ()):
        if entry.normalized == wanted:
            full.append(entry)
        elif len(entry.normalized) > size and entry.normalized[-size:] == wanted:
            suffix.append(entry)
    return full, suffix


def _superclasses(graph: Graph, identifier: str) -> list[str]:
    """Bases and Ruby mixins (`include`/`extend`/`prepend`) of `identifier`, in extraction order."""
    return [target for target, via in graph.edges_from(identifier) if via in INHERITANCE_VIAS]


def _inherited(ctx: _Context, wanted: tuple[str, ...]) -> list[NameEntry]:
    """Members named `wanted[-1]` defined on the nearest ancestors of the classes `wanted[:-1]` names.

    Breadth-first over superclass edges, up to INHERITANCE_DEPTH; the first depth that defines the
    member answers (all of its definitions, so two bases defining it stay ambiguous)."""
    graph = ctx.stores.graph
    if len(wanted) < 2:
        return []
    owner_full, owner_suffix = _suffix_matches(ctx.names, wanted[:-1])
    owners = sorted({e.identifier for e in (owner_full or owner_suffix)})
    members = ctx.names.by_last.get(wanted[-1], ())
    seen = set(owners)
    frontier = owners
    for _depth in range(INHERITANCE_DEPTH):
        parents: list[str] = []
        for owner in frontier:
            for parent in _superclasses(graph, owner):
                if parent not in seen:
                    seen.add(parent)
                    parents.append(parent)
        if not parents:
            return []
        wanted_parents = set(parents)
        parent_segments = {normalized_segments(p) for p in parents}
        found = [
            e for e in members
            if e.parent in wanted_parents or e.normalized[:-1] in parent_segments
        ]
        found = ctx.keep(found)
        if found:
            return found
        frontier = parents
    return []


def _normalized_matches(ctx: _Context, text: str) -> list[NameEntry]:
    """The normalized stage's matches of `text` (see the module docstring), [] when none: the
    exact spelling first, then full names, suffixes, inherited members and re-exports."""
    wanted = normalized_segments(text)
    if not wanted:
        return []
    full, suffix = _suffix_matches(ctx.names, wanted)
    full, suffix = ctx.keep(full), ctx.keep(suffix)
    spelled = _spelled(full + suffix, plain_segments(text))
    for found in (spelled, full, suffix):
        if found:
            return found
    inherited = _inherited(ctx, wanted)
    if inherited:
        return inherited
    for found in (_reexported(ctx, text), _reexport_matches(ctx.names, wanted)):
        found = ctx.keep(found)
        if found:
            return _spelled(found, plain_segments(text)[-1:]) or found
    return []


def _normalized_stage(ctx: _Context, text: str) -> ResolveOutcome | None:
    found = _normalized_matches(ctx, text)
    return ctx.decide(ResolveMethod.NORMALIZED, found, CONFIDENCE_NORMALIZED) if found else None


def _container_identifier(target: str) -> str | None:
    """`client.ClientResponse` → `client`; `src/a:X` → `src/a`; `A::B` → `A`; None at top level."""
    last = split_segments(target)[-1:] or [""]
    head = target[: len(target) - len(last[0])] if target.endswith(last[0]) else ""
    head = head.rstrip(":#./")
    return head or None


def _reexport_targets(ctx: _Context, module: str, name: str, depth: int, seen: set[str]) -> list[NameEntry]:
    """Units named `name` (normalised) that `module` imports or re-exports, following chains of
    re-exports through other modules up to REEXPORT_DEPTH."""
    graph = ctx.stores.graph
    if module in seen or depth > REEXPORT_DEPTH:
        return []
    seen.add(module)
    found: list[NameEntry] = []
    for target, via in graph.edges_from(module):
        if via != "import" or normalized_segments(target)[-1:] != (name,):
            continue
        units = ctx.names.by_identifier.get(target, ())
        if units:
            found.extend(units)
            continue
        container = _container_identifier(target)
        if container is not None and container in ctx.names.by_identifier:
            found.extend(_reexport_targets(ctx, container, name, depth + 1, seen))
    return _dedupe(found)


def _modules_named(ctx: _Context, wanted: tuple[str, ...]) -> list[NameEntry]:
    """Module units whose normalised identifier is `wanted` (or ends with it)."""
    full, suffix = _suffix_matches(ctx.names, wanted)
    return [e for e in (full or suffix) if e.type == "module"]


def _reexported(ctx: _Context, text: str) -> list[NameEntry]:
    """`pkg.name` where the package module `pkg` imports `name` from where it is defined."""
    wanted = normalized_segments(text)
    if len(wanted) < 2:
        return []
    found: list[NameEntry] = []
    for module in _modules_named(ctx, wanted[:-1]):
        found.extend(_reexport_targets(ctx, module.identifier, wanted[-1], 0, set()))
    return _dedupe(found)


def _is_subsequence(wanted: tuple[str, ...], segments: tuple[str, ...]) -> bool:
    remaining = iter(segments)
    return all(part in remaining for part in wanted)


def _reexport_matches(names: NameTable, wanted: tuple[str, ...]) -> list[NameEntry]:
    """A package-level spelling of a deeper unit (`asyncio.Queue.put` → `asyncio.queues.Queue.put`,
    `flask.Flask` → `flask.app.Flask`): same first and last segment, the rest in order."""
    if len(wanted) < 2:
        return []
    return [
        e for e in names.by_last.get(wanted[-1], ())
        if len(e.normalized) > len(wanted) and e.normalized[0] == wanted[0] and _is_subsequence(wanted, e.normalized)
    ]


# -- stage 2b: phrase ----------------------------------------------------------------------------


def _name_matches(ctx: _Context, name: str) -> list[NameEntry]:
    """Every unit `name` may spell: full name or qualified suffix, case-folded (the phrase stage
    narrows them by kind and container before the exact spelling is preferred)."""
    wanted = normalized_segments(name)
    if not wanted:
        return []
    full, suffix = _suffix_matches(ctx.names, wanted)
    return ctx.keep(full + suffix)


def _owner_matches(entries: Sequence[NameEntry], owner: tuple[str, ...]) -> list[NameEntry]:
    """Entries whose enclosing segments end with the normalised `owner` (`Foo` of `m.Foo.bar`)."""
    size = len(owner)
    return [e for e in entries if len(e.normalized) > size and e.normalized[-size - 1 : -1] == owner]


def _contains(segments: tuple[str, ...], part: tuple[str, ...]) -> bool:
    size = len(part)
    return any(segments[i : i + size] == part for i in range(len(segments) - size + 1))


def _module_files(ctx: _Context, module: tuple[str, ...], spelled: tuple[str, ...] | None) -> set[str]:
    """Files of the module units the normalised `module` names: its full or suffix spelling, or a
    suffix of it (`fastapi.encoders` is the module `encoders` of an index rooted in `fastapi/`).
    With `spelled`, only modules whose last segment is spelled exactly so."""
    modules = list(_modules_named(ctx, module))
    for start in range(1, len(module)):
        full, _suffix = _suffix_matches(ctx.names, module[start:])
        modules.extend(e for e in full if e.type == "module")
    if spelled is not None:
        modules = [m for m in modules if plain_segments(m.identifier)[-1:] == spelled[-1:]]
    return {m.file_path for m in modules}


def _in_module(
    ctx: _Context, entries: Sequence[NameEntry], module: tuple[str, ...], spelled: tuple[str, ...] | None
) -> list[NameEntry]:
    files = _module_files(ctx, module, spelled)
    if spelled is not None:
        return [e for e in entries if e.file_path in files or _contains(plain_segments(e.identifier)[:-1], spelled)]
    return [e for e in entries if e.file_path in files or _contains(e.normalized[:-1], module)]


def _files_named(ctx: _Context, path: str) -> set[str]:
    relative = _relative_path(ctx, path)
    suffix = "/" + relative.lstrip("/")
    return {f for f in ctx.names.files if f == relative or f.endswith(suffix)}


def _phrase_candidates(ctx: _Context, ref: StructuredRef) -> list[NameEntry]:
    """The units a parsed phrase describes (before the exact-spelling and library rules)."""
    entries = _name_matches(ctx, ref.name)
    if ref.kind is not None:
        types = kind_types(ref.kind, set(ctx.metadata.type_counts()))
        entries = [e for e in entries if e.type in types]
    if ref.container is None:
        return entries
    container = normalized_segments(ref.container)
    if not container:
        return []
    name = normalized_segments(ref.name)
    kind = ref.container_kind
    modules: set[str] = set()
    if kind in (ContainerKind.FILE, ContainerKind.ANY) and looks_like_path(ref.container):
        files = _files_named(ctx, ref.container)
        found = [e for e in entries if e.file_path in files]
        modules.update(
            e.identifier for f in sorted(files) for e in ctx.records(ctx.metadata.units_in_file(f)) if e.type == "module"
        )
    elif kind is ContainerKind.FILE:
        return []
    else:
        # The container as spelled first (`async_job` is the module, not the class `AsyncJob`),
        # then case-folded; an owning class before a module at each step.
        spelled = plain_segments(ref.container)
        as_owner = kind in (ContainerKind.OWNER, ContainerKind.ANY)
        as_module = kind in (ContainerKind.MODULE, ContainerKind.ANY)
        folded_owner = _owner_matches(entries, container) if as_owner else []
        found = [e for e in folded_owner if plain_segments(e.identifier)[-len(spelled) - 1 : -1] == spelled]
        if not found and as_module:
            found = _in_module(ctx, entries, container, spelled)
        if not found:
            found = folded_owner
        if not found and as_owner:  # a member the owner inherits from a base class or a mixin
            found = [e for e in _inherited(ctx, container + name) if e in entries]
        if not found and as_module:
            found = _in_module(ctx, entries, container, None)
            modules.update(e.identifier for e in _modules_named(ctx, container))
    if not found:  # a name the module (or the file's module) re-exports from where it is defined
        for module in sorted(modules):
            found.extend(e for e in _reexport_targets(ctx, module, name[-1], 0, set()) if e in entries)
    return found


def _phrase_stage(ctx: _Context, ref: StructuredRef) -> ResolveOutcome | None:
    found = _dedupe(_phrase_candidates(ctx, ref))
    if not found:
        return None
    chosen = _spelled(found, plain_segments(ref.name)) or found
    return ctx.decide(ResolveMethod.PHRASE, chosen, CONFIDENCE_PHRASE)


# -- stage 4: search ------------------------------------------------------------------------------


def _search_stage(
    ctx: _Context, text: str, searcher: Searcher | None, limit: int, strict: bool
) -> ResolveOutcome:
    if searcher is None:
        return ResolveOutcome(
            ResolveStatus.NOT_FOUND, ResolveMethod.SEARCH,
            warnings=("search_unavailable: no name matched and no search is configured",),
        )
    best: dict[tuple[str, str, str, int], Candidate] = {}
    for hit in searcher(text, max(SEARCH_MIN_DEPTH, limit)):
        if (ctx.unit_type is not None and hit.type != ctx.unit_type) or not math.isfinite(hit.score):
            continue
        where = (hit.identifier, hit.type, hit.file_path, hit.line_start)
        if where not in best or hit.score > best[where].score:
            best[where] = hit
    hits = sorted(best.values(), key=Candidate.sort_key)
    if not hits:
        return ResolveOutcome(ResolveStatus.NOT_FOUND, ResolveMethod.SEARCH)
    top = hits[0]
    decisive = len(hits) == 1 or _leads(top.score, hits[1].score)
    shown = hits[:limit]
    if decisive and not strict:
        return ResolveOutcome(
            ResolveStatus.RESOLVED, ResolveMethod.SEARCH, top.identifier, top.type, top.file_path,
            top.line_start, top.line_end, CONFIDENCE_SEARCH, tuple(shown[:MAX_CANDIDATES]),
        )
    warnings = []
    if decisive:
        warnings.append("strict_unconfirmed: the best match came only from search; confirm the first candidate")
    return _ambiguous(ResolveMethod.SEARCH, shown, warnings)


def _leads(top: float, runner_up: float) -> bool:
    if runner_up <= 0:
        return top > 0
    return top >= SEARCH_LEAD_RATIO * runner_up


# -- entry point ----------------------------------------------------------------------------------


def resolve(
    stores: OpenIndex,
    ref: object,
    *,
    type: str | None = None,  # noqa: A002 — the contract's public keyword (`--type`)
    limit: int = DEFAULT_LIMIT,
    strict: bool = False,
    recent: Sequence[str] | None = None,
    searcher: Searcher | None = None,
    names: NameTable | None = None,
) -> ResolveOutcome:
    """Resolve `ref` against an open index (`stores.metadata`, `.graph`; see the module docstring).

    `type` keeps only units of that type in every stage; `limit` bounds the search stage's
    candidates; `strict` lets only the deterministic stages answer `resolved`; `recent` is a
    list of recently seen unit ids, most recent first. `names` is the index's name index when the
    caller keeps one (a warm handle builds it once per generation); else it is built when needed.
    """
    text = validate_ref(ref)
    count = _validate_limit(limit)
    recent_ids = _validate_recent(recent)
    ctx = _Context(stores, _validate_type(stores.metadata, type), text, names)
    outcome = _passthrough(ctx, text)
    if outcome is not None:
        names_a_unit = not (_PATH_LINE.match(text) or looks_like_path(text))
        return _implementation_of_stub(ctx, outcome) if names_a_unit else outcome
    phrase = parse_reference(text)
    if phrase is not None:
        named = _phrase_stage(ctx, phrase)
    else:
        named = _exact_stage(ctx, text)
        if named is None:
            named = _normalized_stage(ctx, text)
    if named is not None:
        # Session memory picks among equals only: it never hides a definition the name matches.
        if recent_ids and named.status is ResolveStatus.AMBIGUOUS:
            named = _prefer_recent(ctx, named, recent_ids)
        return _implementation_of_stub(ctx, named)
    if recent_ids:  # no name matched: "that charge method" may still be one the session saw
        outcome = _recent_stage(ctx, text, recent_ids)
        if outcome is not None:
            return outcome
    outcome = _search_stage(ctx, text, searcher, count, strict)
    return _with_suggestions(ctx, text, outcome) if phrase is None else outcome


# -- what a name that matched nothing probably meant ----------------------------------------------

DID_YOU_MEAN = "did_you_mean:"
# Suggested units per resolve (the nearest names' definitions, nearest first).
MAX_SUGGESTED_UNITS = 5


def near_names(names: NameTable, name: str, limit: int = MAX_SUGGESTIONS) -> tuple[bool, list[list[NameEntry]]]:
    """(defined, closest): whether a unit's last segment is `name` up to case, `_`/`-`, camel case
    and arity (`make_response`, `makeResponse`, `send_resp/3`); when none is, the units of the
    `limit` names nearest to it by edit distance (`woods.suggest`), nearest name first, each
    name's units by (file, line, identifier)."""
    wanted = normalized_segments(name)[-1:]
    if not wanted:
        return False, []
    if wanted[0] in names.by_last:
        return True, []
    groups = []
    for key in closest(wanted[0], names.by_last, limit):
        entries = sorted(names.by_last[key], key=lambda e: (e.file_path, e.line_start, e.identifier, e.type, e.key))
        groups.append(entries)
    return False, groups


def display_name(entry: NameEntry) -> str:
    """The last segment of the entry's identifier as spelled (`make_response`)."""
    segments = plain_segments(entry.identifier)
    return segments[-1] if segments else entry.identifier


def missing_name_warning(stores: OpenIndex, name: str, names: Callable[[], NameTable] | None = None) -> str | None:
    """`no unit named 'X'; closest: a, b` when no unit is named `name` (see `near_names`), else
    None. The exact spelling is looked up first, so the name table is asked for only on a miss
    (`names`: the caller's, e.g. a warm handle's per-generation one; else built here)."""
    if stores.metadata.find_by_name(name, limit=1):
        return None
    defined, groups = near_names(names() if names is not None else name_table_for(stores), name)
    if defined:
        return None
    shown = list(dict.fromkeys(display_name(entries[0]) for entries in groups if entries))
    if not shown:
        return f"no unit named {name!r}, and no name close to it"
    return f"no unit named {name!r}; closest: {', '.join(shown)}"


def _is_name_shaped(text: str) -> bool:
    """One token that is not a path: what a misspelt name looks like."""
    return bool(text) and not any(c.isspace() for c in text) and not looks_like_path(text)


def _with_suggestions(ctx: _Context, text: str, outcome: ResolveOutcome) -> ResolveOutcome:
    """The search stage's outcome with the nearest names' units as `suggestions` (and a
    `did_you_mean` warning) when `text` is a name that matched nothing. A name one edit or two
    from a real one is a typo, not a description: what search ranked first is then a candidate,
    never the answer (`resolved` becomes `ambiguous`) — and no suggestion is picked either."""
    if not _is_name_shaped(text):
        return outcome
    _defined, groups = near_names(ctx.names, text)
    entries = [e for group in groups for e in ctx.keep(group)]
    if not entries:
        return outcome
    suggested = tuple(e.candidate(0.0) for e in entries[:MAX_SUGGESTED_UNITS])
    names = ", ".join(dict.fromkeys(display_name(e) for e in entries))
    where = ", ".join(c.identifier for c in suggested)
    warnings = (*outcome.warnings, f"{DID_YOU_MEAN} {names}? ({where})")
    if outcome.status is ResolveStatus.RESOLVED:
        outcome = _ambiguous(outcome.method, outcome.candidates, ())
    return replace(outcome, suggestions=suggested, warnings=warnings)


# -- session memory among equals ------------------------------------------------------------------


def _prefer_recent(ctx: _Context, outcome: ResolveOutcome, recent: Sequence[str]) -> ResolveOutcome:
    """An ambiguous name outcome narrowed by what the session recently saw: one candidate seen
    recently resolves to it (method `recent`, the others as `alternatives`); several are listed
    first, most recent first. Candidates the session never saw are never dropped for one it saw."""
    order: dict[tuple[str, str, str, int], int] = {}
    for rank, unit_id in enumerate(recent):
        for entry in _key_or_identifier(ctx, strip_chunk(unit_id)):
            order.setdefault((entry.identifier, entry.type, entry.file_path, entry.line_start), rank)

    def seen(candidate: Candidate) -> int | None:
        return order.get((candidate.identifier, candidate.type, candidate.file_path, candidate.line_start))

    recent_ones = sorted((c for c in outcome.candidates if seen(c) is not None), key=lambda c: seen(c) or 0)
    if not recent_ones:
        return outcome
    if len(recent_ones) == 1:
        chosen = recent_ones[0]
        others = tuple(c for c in outcome.candidates if c is not chosen)
        return ResolveOutcome(
            ResolveStatus.RESOLVED, ResolveMethod.RECENT, chosen.identifier, chosen.type, chosen.file_path,
            chosen.line_start, chosen.line_end, CONFIDENCE_RECENT_EXACT,
            (replace(chosen, score=CONFIDENCE_RECENT_EXACT),), outcome.warnings, alternatives=others,
        )
    rest = tuple(c for c in outcome.candidates if seen(c) is None)
    return replace(outcome, candidates=(*recent_ones, *rest))


# -- overload stubs -------------------------------------------------------------------------------

_STUB_SUFFIX = re.compile(r"#(?:\d+|overload\d+)\Z")


def _implementation_of_stub(ctx: _Context, outcome: ResolveOutcome) -> ResolveOutcome:
    """A resolved Python `@overload` stub → the one implementation of that name in its file (the
    stubs become `alternatives`): the implementation is what a reader means by the name. Indexes
    built before extraction gave the implementation the plain name still spell it `f#3`."""
    path = outcome.file_path or ""
    if outcome.status is not ResolveStatus.RESOLVED or not path.endswith((".py", ".pyi")):
        return outcome
    records = ctx.metadata.units_in_file(path)
    base = _STUB_SUFFIX.sub("", outcome.identifier or "")

    def is_stub(record: UnitRow) -> bool:
        return bool((record.get("metadata") or {}).get("overload"))

    resolved = next((r for r in records if r.get("identifier") == outcome.identifier
                     and r.get("line_start") == outcome.line_start), None)
    if resolved is None or not is_stub(resolved):
        return outcome
    same = [r for r in records if r.get("type") == resolved.get("type")
            and _STUB_SUFFIX.sub("", str(r.get("identifier"))) == base]
    bodies = ctx.keep(_entry_from_record(r) for r in same if not is_stub(r))
    if len(bodies) != 1:
        return outcome
    stubs = [_entry_from_record(r) for r in same if is_stub(r)]
    confidence = outcome.confidence if outcome.confidence is not None else CONFIDENCE_EXACT
    resolved_outcome = _resolved(bodies[0], outcome.method, confidence, stubs)
    return replace(resolved_outcome, warnings=outcome.warnings)


# -- wiring to the retrieval engine ---------------------------------------------------------------


class _CosineFloorVectors:
    """A vector store whose `search` and `search_units` drop hits below a cosine floor (before
    any fusion); everything else is the store's own."""

    def __init__(self, vectors: UnitVectorSearch, floor: float) -> None:
        self._vectors = vectors
        self._floor = floor
        self.dimension = vectors.dimension

    def search(
        self, vector: np.ndarray, limit: int, types: Collection[str] | None = None, keys: Collection[str] | None = None
    ) -> list[VectorHit]:
        hits = self._vectors.search(vector, limit, types=types, keys=keys)
        return [h for h in hits if h.score >= self._floor]

    def search_units(self, vector: np.ndarray, limit: int) -> list[tuple[str, float]]:
        return [(key, score) for key, score in self._vectors.search_units(vector, limit) if score >= self._floor]

    def reconstruct(self, vector_ids: Sequence[int]) -> np.ndarray:
        return self._vectors.reconstruct(vector_ids)

    def vectors_for(self, vector_ids: list[int]) -> np.ndarray:
        return self._vectors.vectors_for(vector_ids)

    def count(self) -> int:
        return self._vectors.count()


class _CosineFloorStores:
    """The same stores with the vector leg floored (a `SearchableIndex`); the rest untouched."""

    def __init__(self, stores: OpenIndex, floor: float) -> None:
        self._stores = stores
        self._floor = floor
        self._vectors: _CosineFloorVectors | None = None

    @property
    def metadata(self) -> IndexMetadata:
        return self._stores.metadata

    @property
    def graph(self) -> GraphReader:
        return self._stores.graph

    @property
    def has_vectors(self) -> bool:
        return self._stores.has_vectors

    @property
    def vectors(self) -> _CosineFloorVectors | None:
        if self._vectors is None:
            vectors = self._stores.vectors
            if vectors is None:
                return None
            self._vectors = _CosineFloorVectors(vectors, self._floor)
        return self._vectors


# The assembler's context is thrown away here; a small budget keeps that wasted work small.
_SEARCH_BUDGET = limits.DISCARDED_CONTEXT_BUDGET


def make_searcher(
    stores: OpenIndex, embedder_factory: Callable[[], QueryEmbedder] | None, *, min_cosine: float = SEARCH_MIN_COSINE
) -> Searcher:
    """A `Searcher` over the hybrid retrieval engine (keyword only without an embedder); vector
    hits under `min_cosine` are dropped before fusion. Scores are the ranker's final scores."""
    from woods.retrieval.retriever import Retriever

    retriever = Retriever(_CosineFloorStores(stores, min_cosine), embedder_factory, profile="ruby")
    strategy = "hybrid" if embedder_factory is not None else "keyword"

    def search(query: str, depth: int) -> list[Candidate]:
        result = retriever.retrieve(query, strategy=strategy, limit=depth, budget=_SEARCH_BUDGET)
        keys = [strip_chunk(entry.key) for entry in result.candidates]
        records = stores.metadata.find_batch(keys)
        hits = []
        for entry, key in zip(result.candidates, keys, strict=True):
            record = records.get(key)
            if record is None:
                continue
            hits.append(
                Candidate(
                    identifier=str(record.get("identifier") or public_identifier(key)),
                    type=str(record.get("type") or ""),
                    file_path=str(record.get("file_path") or ""),
                    line_start=int(record.get("line_start") or 0),
                    line_end=int(record.get("line_end") or 0),
                    score=float(entry.score),
                )
            )
        return hits

    return search


__all__ = [
    "DID_YOU_MEAN",
    "Candidate",
    "NameTable",
    "ResolveMethod",
    "ResolveOutcome",
    "ResolveStatus",
    "Searcher",
    "make_searcher",
    "missing_name_warning",
    "name_table_for",
    "near_names",
    "resolve",
    "stable_id",
]
