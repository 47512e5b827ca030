"""The woods MCP server: the index's tools for coding assistants, over stdio.

Why a server: an assistant asks dozens of questions per task. One long-lived process keeps the
index (SQLite, FAISS, graph) and the query embedder warm in a `woods.api.Index`, so a tool call
costs the answer, not the start-up. The tools follow the Ruby gem's index server.

Guarantees:
- Bad input never kills the server: every failure becomes a tool result with `isError: true` and
  the JSON body `{"error": {"code", "message", ...}}`, `code` one of ERROR_CODES.
- Arguments are checked against the same table the advertised JSON schemas are generated from
  (types, ranges, enums, unknown names), so the schema a client sees is the contract enforced.
- Session memory: the server remembers the last RECENT_RING_SIZE units it showed (one stdio
  process = one session) and hands them to `resolve` as `recent`, so "that charge method"
  resolves to the one the assistant just saw.
- Reading tools never write; only `reindex` publishes a new generation (and the server switches
  to it atomically — a call sees the old index or the new one, never a mix).
"""

from __future__ import annotations

import argparse
import json
import threading
from collections import deque
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from woods import limits
from woods.api import (
    AmbiguousIdentifierError,
    Index,
    UnitNotFoundError,
    UnitRecord,
    build_index,
    store_label,
    store_spec,
)
from woods.errors import (
    CorruptIndexError,
    IndexingError,
    IndexNotFoundError,
    InputError,
    LockTimeoutError,
    StoreError,
)

if TYPE_CHECKING:
    from mcp.server import Server, ServerRequestContext

    from woods.api import IndexSummary
    from woods.embedding.provider import EmbeddingProvider

SERVER_NAME = "woods"
# Every bound and default comes from woods.limits (rationale there), so a tool accepts exactly
# what `woods … ` and `woods.Index` accept.
RECENT_RING_SIZE = limits.MCP_RECENT_RING_SIZE
STRATEGIES = ("auto", "vector", "keyword", "graph", "direct", "hybrid")
MODES = ("semantic", "lexical")
LOOKUP_SECTIONS = ("signature", "docstring", "source_code", "dependencies", "dependents", "metadata")
# Fields every lookup answer keeps whatever `sections` asks (Ruby keeps type, identifier,
# file_path, namespace; the key, line range and source hash are what the other tools need to refer
# back and to notice an edit).
LOOKUP_ALWAYS = (
    "key", "identifier", "type", "language", "file_path", "line_start", "line_end", "namespace", "parent",
    "source_hash",
)

ERROR_CODES = (
    "not_found",  # the identifier names no unit
    "invalid_argument",  # missing, mistyped, out-of-range or unknown argument; ambiguous identifier
    "unsupported_argument",  # an argument this tool deliberately does not take (limit on codebase_retrieve)
    "stale_index",  # units were ranked but the index could not read them back: re-index
    "degraded_index",  # the index is missing, corrupt or a store failed (phase boot | query | reload)
    "busy",  # another indexer holds the store lock
    "internal_error",  # a bug: the message names the exception; the server keeps serving
)


class ToolError(Exception):
    """A typed tool failure; becomes an `isError` result with `{"error": {code, message, …}}`."""

    def __init__(self, code: str, message: str, **details: Any) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.details = details

    def body(self) -> dict[str, Any]:
        return {"error": {"code": self.code, "message": self.message, **self.details}}


# -- argument table → JSON schema + validation ---------------------------------------------------


@dataclass(frozen=True, slots=True)
class Param:
    """One tool argument: its JSON type, default, bounds and description (schema and check in one)."""

    name: str
    kind: str  # string | integer | boolean | string_list | string_or_list
    description: str
    required: bool = False
    default: Any = None
    minimum: int | None = None
    maximum: int | None = None
    enum: tuple[str, ...] | None = None

    def schema(self) -> dict[str, Any]:
        item: dict[str, Any]
        if self.kind == "string_list":
            item = {"type": "array", "items": {"type": "string"}}
            if self.enum:
                item["items"]["enum"] = list(self.enum)
        elif self.kind == "string_or_list":
            item = {"anyOf": [{"type": "string"}, {"type": "array", "items": {"type": "string"}}]}
        else:
            item = {"type": self.kind}
            if self.enum:
                item["enum"] = list(self.enum)
        if self.minimum is not None:
            item["minimum"] = self.minimum
        if self.maximum is not None:
            item["maximum"] = self.maximum
        if self.default is not None:
            item["default"] = self.default
        item["description"] = self.description
        return item

    def check(self, value: Any) -> Any:
        """The value if it fits, else ToolError(invalid_argument) saying what was expected."""
        if value is None:
            return self.default
        if self.kind == "string":
            if not isinstance(value, str):
                raise _wrong_type(self.name, "a string", value)
        elif self.kind == "integer":
            if isinstance(value, bool) or not isinstance(value, int):
                raise _wrong_type(self.name, "an integer", value)
            if self.minimum is not None and value < self.minimum:
                raise ToolError("invalid_argument", f"{self.name} must be at least {self.minimum}, got {value}")
            if self.maximum is not None and value > self.maximum:
                raise ToolError("invalid_argument", f"{self.name} must be at most {self.maximum}, got {value}")
        elif self.kind == "boolean":
            if not isinstance(value, bool):
                raise _wrong_type(self.name, "true or false", value)
        elif self.kind == "string_list":
            if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                raise _wrong_type(self.name, "a list of strings", value)
        elif self.kind == "string_or_list" and not (
            isinstance(value, str) or (isinstance(value, list) and all(isinstance(v, str) for v in value))
        ):
            raise _wrong_type(self.name, "a string or a list of strings", value)
        values = value if isinstance(value, list) else [value]
        if self.enum and any(v not in self.enum for v in values):
            raise ToolError("invalid_argument", f"{self.name} must be one of {', '.join(self.enum)}, got {value!r}")
        return value


def _wrong_type(name: str, expected: str, value: Any) -> ToolError:
    return ToolError("invalid_argument", f"{name} must be {expected}, got {type(value).__name__} {value!r:.80}")


@dataclass(frozen=True, slots=True)
class ToolSpec:
    """A tool: name, description, arguments, arguments it rejects on purpose, and its handler name."""

    name: str
    description: str
    params: tuple[Param, ...] = ()
    unsupported: dict[str, str] = field(default_factory=dict)
    read_only: bool = True

    def input_schema(self) -> dict[str, Any]:
        schema: dict[str, Any] = {
            "type": "object",
            "properties": {p.name: p.schema() for p in self.params},
            "additionalProperties": False,
        }
        required = [p.name for p in self.params if p.required]
        if required:
            schema["required"] = required
        return schema

    def bind(self, arguments: dict[str, Any] | None) -> dict[str, Any]:
        """Checked arguments with defaults filled in, or ToolError."""
        given = dict(arguments or {})
        for name in sorted(given):
            if name in self.unsupported:
                raise ToolError("unsupported_argument", f"{self.name} does not take {name!r}: {self.unsupported[name]}",
                                argument=name)
        known = {p.name for p in self.params}
        unknown = sorted(set(given) - known)
        if unknown:
            raise ToolError(
                "invalid_argument",
                f"unknown argument {unknown[0]!r} for {self.name} (expected: {', '.join(sorted(known)) or 'none'})",
            )
        bound = {}
        for param in self.params:
            value = given.get(param.name)
            if value is None and param.required:
                raise ToolError("invalid_argument", f"{param.name} is required")
            bound[param.name] = param.check(value)
        return bound


_TYPES = Param("types", "string_list", "Only units of these types (e.g. method, model, class).")
_EXCLUDE_TYPES = Param("exclude_types", "string_list", "Drop units of these types (test_mapping is always dropped).")
_IDENT = Param("identifier", "string", "A unit identifier (e.g. Billing::Invoice#charge) or storage key.", required=True)
_GLOBS = Param("globs", "string_list",
               "Only files matching these gitignore-style patterns (e.g. src/**/*.py); a leading ! excludes.")
_LANGS = Param("langs", "string_list", "Only files in these languages: names or extensions (python, py, ts, md …).")
_GRAPH_PARAMS = (
    _IDENT,
    Param("depth", "integer", "Hops to follow.", default=limits.MCP_DEFAULT_GRAPH_DEPTH, minimum=1,
          maximum=limits.MAX_GRAPH_DEPTH),
    Param("via", "string_or_list", "Only edges of these kinds (calls, superclass, include, import, …)."),
    _TYPES,
    Param("limit", "integer", "Results per page.", default=limits.MCP_DEFAULT_GRAPH_PAGE, minimum=1,
          maximum=limits.MAX_LIST_LIMIT),
    Param("offset", "integer", "Results to skip (paging).", default=0, minimum=0),
)
_QUERY_BYTES = f"at most {limits.MAX_QUERY_BYTES} bytes"

TOOLS: tuple[ToolSpec, ...] = (
    ToolSpec(
        "codebase_retrieve",
        "Assemble a token-budgeted context of the code most relevant to a question (best first). "
        "Use for 'how does X work' questions; use `search` for a ranked list.",
        (
            Param("query", "string", f"The question or search text ({_QUERY_BYTES}).", required=True),
            Param("budget", "integer", "Token budget of the context.", default=limits.DEFAULT_CONTEXT_BUDGET,
                  minimum=1, maximum=limits.MAX_CONTEXT_BUDGET),
            _TYPES,
            _EXCLUDE_TYPES,
            _GLOBS,
            _LANGS,
        ),
        unsupported={"limit": "the context is sized by `budget` (tokens); use the `search` tool for a ranked list"},
    ),
    ToolSpec(
        "search",
        "Ranked units for a query, as structured JSON (identifier, type, file, lines, score, strategies).",
        (
            Param("query", "string", f"What you are looking for ({_QUERY_BYTES}).", required=True),
            Param("limit", "integer", "Results to return.", default=limits.DEFAULT_SEARCH_LIMIT, minimum=1,
                  maximum=limits.MAX_SEARCH_LIMIT),
            Param("strategy", "string", "Force a strategy (auto classifies the query).", default="auto", enum=STRATEGIES),
            _TYPES,
            _EXCLUDE_TYPES,
            Param("path_prefixes", "string_list",
                  "Only units whose file is under one of these repository-relative paths (whole segments)."),
            Param("mode", "string", "semantic, or lexical (the lexical index over names, paths and source; no model).",
                  default="semantic", enum=MODES),
            Param("profile", "string", "Ranking: code (woods' code search) or ruby (the Ruby gem woods 2.0's pipeline).",
                  default=limits.DEFAULT_PROFILE, enum=limits.PROFILES),
            _GLOBS,
            _LANGS,
            Param("as", "string", "auto (a pasted stack trace, log or bug report is localised, as the localize "
                  "tool does), query or issue.", default="auto", enum=("auto", "query", "issue")),
        ),
    ),
    ToolSpec(
        "localize",
        "Paste a bug report, failing test output or stack trace: the files and functions it points at "
        "(best first), each with the evidence that matched (frame, error class, message, name, failing "
        "test, dependency link, search).",
        (
            Param("text", "string", f"The issue text ({_QUERY_BYTES}).", required=True),
            Param("limit", "integer", "Files to return.", default=limits.DEFAULT_SEARCH_LIMIT, minimum=1,
                  maximum=limits.MAX_SEARCH_LIMIT),
            Param("mode", "string", "semantic, or lexical (no model).", default="semantic", enum=MODES),
        ),
    ),
    ToolSpec(
        "resolve",
        "Turn a loose reference (a short name, Foo.bar, path:line, an id) into exactly one unit, or list "
        "the candidates. Units this session recently returned win ties ('that charge method').",
        (
            Param("ref", "string", "The reference to resolve.", required=True),
            Param("type", "string", "Only units of this type."),
            Param("limit", "integer", "Candidates to show when ambiguous.", default=limits.RESOLVE_DEFAULT_LIMIT,
                  minimum=1, maximum=limits.RESOLVE_MAX_CANDIDATES),
            Param("strict", "boolean", "Only deterministic matches may resolve (no search guess).", default=False),
        ),
    ),
    ToolSpec(
        "lookup",
        "One unit by exact identifier or storage key: location, signature, docstring, source, dependencies.",
        (
            _IDENT,
            Param("type", "string", "The unit type, when the identifier names units of several types."),
            Param("include_source", "boolean", "Include the source code.", default=True),
            Param("sections", "string_list", "Only these sections (location fields are always kept).",
                  enum=LOOKUP_SECTIONS),
        ),
    ),
    ToolSpec("dependencies", "What a unit depends on, breadth-first (paged).", _GRAPH_PARAMS),
    ToolSpec("dependents", "What depends on a unit, breadth-first (paged).", _GRAPH_PARAMS),
    ToolSpec(
        "structure",
        "What the index holds: counts by unit type, language and edge kind, the most central units "
        "(full: every file).",
        (
            Param("detail", "string", "summary or full.", default="summary", enum=("summary", "full")),
            Param("top", "integer", "Units in the PageRank list.", default=limits.DEFAULT_PAGERANK_LIMIT, minimum=1,
                  maximum=limits.MAX_LIST_LIMIT),
        ),
    ),
    ToolSpec(
        "pagerank",
        "The structurally most important units (PageRank over the dependency graph).",
        (
            Param("limit", "integer", "Results to return.", default=limits.DEFAULT_PAGERANK_LIMIT, minimum=1,
                  maximum=limits.MAX_LIST_LIMIT),
            _TYPES,
        ),
    ),
    ToolSpec("woods_status", "The index's identity, freshness (files changed since indexing) and session state; "
             "globs / langs narrow the counts and changes to those files.", (_GLOBS, _LANGS)),
    ToolSpec(
        "reindex",
        "Re-index the repository incrementally (only changed files are parsed, only new code is embedded) "
        "and switch to the new index. woods finds every change itself; `changed_files` are checked against "
        "what it found (changed, unchanged or not indexed).",
        (Param("changed_files", "string_list", "Files you changed (repository-relative), to be checked."),),
        read_only=False,
    ),
)
TOOLS_BY_NAME = {spec.name: spec for spec in TOOLS}


# -- session memory ------------------------------------------------------------------------------


class RecentRing:
    """The last `size` unit ids shown in this session, most recent first, each once (thread-safe)."""

    def __init__(self, size: int = RECENT_RING_SIZE) -> None:
        self._ids: deque[str] = deque(maxlen=size)
        self._lock = threading.Lock()

    def remember(self, ids: Iterable[str]) -> None:
        """Record units in the order shown: the first of `ids` ends up most recent."""
        ordered = list(dict.fromkeys(i for i in ids if i))
        with self._lock:
            for unit_id in reversed(ordered):
                if unit_id in self._ids:
                    self._ids.remove(unit_id)
                self._ids.appendleft(unit_id)

    def ids(self) -> list[str]:
        with self._lock:
            return list(self._ids)

    def __len__(self) -> int:
        with self._lock:
            return len(self._ids)


# -- the tools -----------------------------------------------------------------------------------


class WoodsTools:
    """One session: the warm Index, the recent ring, and a synchronous, thread-safe `call`.

    The index is opened at start; when that fails (no index yet, corrupt) the session stays up in a
    degraded state, every reading tool answers `degraded_index` (phase boot), each call retries the
    open, and `reindex` can build the index when the repository root is known. Every answer comes
    from `woods.api.Index` (or `build_index`); this class only checks arguments and shapes payloads.
    """

    def __init__(
        self,
        store_dir: Path | str,
        *,
        root: Path | None = None,
        open_index: Callable[[Path | str], Index] | None = None,
        provider_factory: Callable[[], EmbeddingProvider] | None = None,
        contextual_factory: Callable[[], EmbeddingProvider] | None = None,
        repo: str | None = None,
    ) -> None:
        self.store_dir: Path | str = store_spec(store_dir)
        self.store_label = store_label(self.store_dir)
        self.repo = repo
        self.root = root
        self.recent = RecentRing()
        # The root this server was given is the root: reads and `reindex` use it, whatever root the
        # index recorded (a copied or moved repository is re-rooted by its next reindex).
        self._open_index = open_index or (lambda d: Index(d, repo=repo, root=root))
        self._provider_factory = provider_factory
        self._contextual_factory = contextual_factory
        self._lock = threading.Lock()
        self._index: Index | None = None
        self._boot_error: str | None = None
        self._try_open()

    def _try_open(self) -> Index | None:
        with self._lock:
            if self._index is None:
                try:
                    self._index = self._open_index(self.store_dir)
                    self._boot_error = None
                except (IndexNotFoundError, CorruptIndexError) as exc:
                    self._boot_error = str(exc)
            return self._index

    def index(self) -> Index:
        index = self._try_open()
        if index is None:
            raise ToolError("degraded_index", self._boot_error or "the index is unavailable", degraded=True,
                            phase="boot", store=self.store_label)
        return index

    def close(self) -> None:
        with self._lock:
            if self._index is not None:
                self._index.close()
                self._index = None

    # -- dispatch --------------------------------------------------------------------------
    def call(self, name: str, arguments: dict[str, Any] | None) -> tuple[str, dict[str, Any], bool]:
        """(text, structured payload, is_error) for one tool call; never raises."""
        try:
            spec = TOOLS_BY_NAME.get(name)
            if spec is None:
                raise ToolError("invalid_argument", f"unknown tool {name!r} (tools: {', '.join(sorted(TOOLS_BY_NAME))})")
            if arguments is not None and not isinstance(arguments, dict):
                raise ToolError("invalid_argument", "arguments must be a JSON object")
            bound = spec.bind(arguments)
            handler: Callable[..., tuple[str, dict[str, Any]]] = getattr(self, f"_tool_{name}")
            text, payload = handler(**bound)
            return text, payload, False
        except ToolError as exc:
            body = exc.body()
        except AmbiguousIdentifierError as exc:
            body = ToolError("invalid_argument", str(exc), candidates=list(exc.candidates)).body()
        except UnitNotFoundError as exc:
            body = ToolError("not_found", str(exc)).body()
        except (IndexNotFoundError, CorruptIndexError) as exc:
            body = ToolError("degraded_index", str(exc), degraded=True, phase="query", store=self.store_label).body()
        except LockTimeoutError as exc:
            body = ToolError("busy", str(exc)).body()
        except IndexingError as exc:
            body = ToolError("degraded_index", str(exc), degraded=True, phase="reload").body()
        except InputError as exc:
            body = ToolError("invalid_argument", str(exc)).body()
        except Exception as exc:  # the server never dies on one call
            if isinstance(exc, StoreError):
                body = ToolError("degraded_index", str(exc), degraded=True, phase="query", stores=[exc.store]).body()
            else:
                first = (str(exc) or exc.__class__.__name__).splitlines()[0]
                body = ToolError("internal_error", f"{exc.__class__.__name__}: {first}").body()
        return json.dumps(body, ensure_ascii=False), body, True

    # -- handlers (each returns (text, structured payload)) --------------------------------
    def _tool_codebase_retrieve(
        self, query: str, budget: int, types: list[str] | None, exclude_types: list[str] | None,
        globs: list[str] | None = None, langs: list[str] | None = None,
    ) -> tuple[str, dict[str, Any]]:
        retrieval = self.index().retrieve(
            query, budget=budget, types=types, exclude_types=exclude_types, globs=globs, langs=langs
        )
        if retrieval.stale:
            raise ToolError(
                "stale_index",
                "units were ranked but the index could not read them back; run `woods index` (or the reindex tool)",
            )
        self.recent.remember(s.identifier for s in retrieval.sources)
        return retrieval.context, retrieval.to_dict()

    def _tool_search(
        self,
        query: str,
        limit: int,
        strategy: str,
        types: list[str] | None,
        exclude_types: list[str] | None,
        path_prefixes: list[str] | None,
        mode: str,
        profile: str,
        globs: list[str] | None = None,
        langs: list[str] | None = None,
        **options: Any,
    ) -> tuple[str, dict[str, Any]]:
        # The default budget, as `woods search` uses: the ranked list does not depend on it, but
        # `applied_scope.returned_units` counts the units the context holds.
        result = self.index().search(
            query, limit=limit, strategy=strategy, types=types, exclude_types=exclude_types,
            path_prefixes=path_prefixes, mode=mode, profile=profile, globs=globs, langs=langs,
            read_as=str(options.get("as") or "auto"),
        )
        self.recent.remember(h.key for h in result)
        full = result.to_dict(context=False)
        payload = {
            "query": query,
            "mode": full["mode"],
            "strategy": full["strategy"],
            "result_count": len(result),
            "results": full["results"],
            "applied_scope": full["applied_scope"],
            "warnings": full["warnings"],
        }
        if "localization" in full:
            payload["localization"] = full["localization"]
        return _json(payload), payload

    def _tool_localize(self, text: str, limit: int, mode: str) -> tuple[str, dict[str, Any]]:
        found = self.index().localize(text, limit=limit, mode=mode)
        self.recent.remember(u.key for u in found.units)
        payload = found.to_dict()
        return _json(payload), payload

    def _tool_resolve(self, ref: str, type: str | None, limit: int, strict: bool) -> tuple[str, dict[str, Any]]:  # noqa: A002
        index = self.index()
        outcome = index.resolve(ref, type=type, limit=limit, strict=strict, recent=self.recent.ids())
        if outcome.identifier:
            self.recent.remember([outcome.identifier])
        payload = outcome.to_dict()
        return _json(payload), payload

    def _tool_lookup(
        self, identifier: str, type: str | None, include_source: bool, sections: list[str] | None  # noqa: A002
    ) -> tuple[str, dict[str, Any]]:
        unit = self.index().lookup(identifier, type=type, include_source=include_source)
        if unit is None:
            kind = f" of type {type!r}" if type else ""
            raise ToolError("not_found", f"no unit{kind} is stored under {identifier!r}; try the resolve tool for loose names")
        self.recent.remember([unit.key])
        payload = _lookup_payload(unit, include_source, sections)
        return _json(payload), payload

    def _graph(
        self,
        direction: str,
        identifier: str,
        depth: int,
        via: str | list[str] | None,
        types: list[str] | None,
        limit: int,
        offset: int,
    ) -> tuple[str, dict[str, Any]]:
        walk = self.index().traverse(identifier, direction=direction, depth=depth, via=via, types=types)
        page = walk.neighbors[offset : offset + limit]
        self.recent.remember(n.identifier for n in page if n.indexed)
        payload = walk.to_dict()
        payload.update(
            {
                "offset": offset,
                "limit": limit,
                "truncated": offset + len(page) < len(walk.neighbors),
                "results": [n.to_dict() for n in page],
            }
        )
        if payload["truncated"]:
            payload["note"] = (
                f"Showing {len(page)} of {len(walk.neighbors)} (truncated); pass offset={offset + len(page)} for more"
            )
        return _json(payload), payload

    def _tool_dependencies(self, **arguments: Any) -> tuple[str, dict[str, Any]]:
        return self._graph("dependencies", **arguments)

    def _tool_dependents(self, **arguments: Any) -> tuple[str, dict[str, Any]]:
        return self._graph("dependents", **arguments)

    def _tool_structure(self, detail: str, top: int) -> tuple[str, dict[str, Any]]:
        payload = self.index().structure(detail=detail, top=top).to_dict()
        return _json(payload), payload

    def _tool_pagerank(self, limit: int, types: list[str] | None) -> tuple[str, dict[str, Any]]:
        everything = self.index().pagerank(limit=None, types=types)
        payload = {"total_nodes": len(everything), "results": [u.to_dict() for u in everything[:limit]]}
        return _json(payload), payload

    def _tool_woods_status(
        self, globs: list[str] | None = None, langs: list[str] | None = None
    ) -> tuple[str, dict[str, Any]]:
        index = self._try_open()
        session = {"recent_units": len(self.recent), "recent_capacity": RECENT_RING_SIZE}
        if index is None:
            payload: dict[str, Any] = {
                "degraded": True,
                "phase": "boot",
                "reason": self._boot_error,
                "store": self.store_label,
                "session": session,
            }
        else:
            payload = {"degraded": False, **index.status(globs=globs, langs=langs).to_dict(), "session": session}
        return _json(payload), payload

    def _tool_reindex(self, changed_files: list[str] | None) -> tuple[str, dict[str, Any]]:
        """Re-index incrementally and say truthfully what happened.

        `changed_files` does not narrow the run (woods finds every change itself, so nothing the
        caller forgot to list is missed); each listed file is reported as `changed` (it differed
        from the index, or was new or deleted), `unchanged` (indexed, same content) or
        `not_indexed` (woods does not index it: unsupported, ignored, too large or absent), and
        `other_changes` lists what changed that the caller did not mention.
        """
        given = _check_changed_files(changed_files)
        index = self._try_open()
        if index is None:
            summary, before = self._first_index(), None
            index = self.index()
            index.complete_vectors_in_background(contextual_factory=self._contextual_factory)
        else:
            before = index.generation
            # The lexical generation answers at once; the vectors follow in the background. The
            # builder's own discovery says what changed: the repository is walked once.
            summary = index.update(background=True, contextual_factory=self._contextual_factory)
        indexed = {str(f["path"]) for f in index.structure(detail="full").files}
        changed = {*summary.changed_files, *summary.added_files, *summary.deleted_files}
        status = {
            path: "changed" if path in changed else "unchanged" if path in indexed else "not_indexed" for path in given
        }
        mode = _run_mode(summary, first_build=before is None)
        message = _run_message(mode, summary)
        if index.vectors_in_background:
            message += (
                "; vectors are being computed in the background (vector and hybrid searches answer "
                "lexically until then, and say so)"
            )
        payload = {
            "previous_generation": before,
            "generation": index.generation,
            "mode": mode,
            "message": message,
            "files": summary.files,
            "reused_files": summary.reused_files,
            "parsed_files": summary.files - summary.reused_files,
            "embedded": summary.embedded,
            "reused_vectors": summary.reused_vectors,
            "changed_files": given,
            "changed_files_status": status,
            "other_changes": sorted(changed - set(given)) if before is not None else [],
            "summary": summary.to_dict(),
            "vectors": index.vector_state(),
            "warnings": index.background_warnings,
        }
        return _json(payload), payload

    def _first_index(self) -> IndexSummary:
        """Build the index from scratch when the session started without one (root must be known)."""
        if self.root is None:
            raise ToolError("degraded_index", f"{self._boot_error}; start the server with --path REPO to let reindex build it",
                            degraded=True, phase="boot", store=self.store_label)
        return build_index(self.root, store=self.store_dir, repo=self.repo, provider_factory=self._provider_factory,
                           vectors=False)


def _run_mode(summary: IndexSummary, *, first_build: bool) -> str:
    """up_to_date (nothing changed, no new generation), full (a rebuild, or the first build) or
    incremental (unchanged files and vectors reused)."""
    if summary.up_to_date:
        return "up_to_date"
    if summary.full or first_build:
        return "full"
    return "incremental"


def _run_message(mode: str, summary: IndexSummary) -> str:
    if mode == "up_to_date":
        return f"up to date: all {summary.files} files unchanged; no new index was written"
    parsed = summary.files - summary.reused_files
    work = (
        f"parsed {parsed} of {summary.files} files ({summary.reused_files} reused), "
        f"embedded {summary.embedded} new texts ({summary.reused_vectors} vectors reused)"
    )
    return f"{'full build' if mode == 'full' else 'incremental re-index'}: {work}"


def _json(payload: object) -> str:
    return json.dumps(payload, ensure_ascii=False)


def _lookup_payload(unit: UnitRecord, include_source: bool, sections: Sequence[str] | None) -> dict[str, Any]:
    data = unit.to_dict()
    wanted = set(LOOKUP_SECTIONS if sections is None else sections)
    if not include_source:
        wanted.discard("source_code")
    return {k: v for k, v in data.items() if k in LOOKUP_ALWAYS or k in wanted}


def _check_changed_files(paths: list[str] | None) -> list[str]:
    """Repository-relative paths without `..`, sorted and unique; anything else is invalid_argument."""
    if paths is None:
        return []
    checked = []
    for raw in paths:
        path = raw.strip()
        parts = Path(path).parts
        if not path or "\x00" in path or Path(path).is_absolute() or ".." in parts:
            raise ToolError("invalid_argument", f"changed_files: {raw!r} is not a repository-relative path")
        checked.append(Path(path).as_posix())
    return sorted(set(checked))


# -- MCP wiring ----------------------------------------------------------------------------------

INSTRUCTIONS = (
    "woods answers questions about this repository's code from a prebuilt index. Start with "
    "codebase_retrieve for 'how does X work' questions or search for a ranked list; resolve turns a "
    "loose name into one unit (it remembers what this session just saw); lookup shows one unit; "
    "dependencies / dependents walk the call and inheritance graph."
)


def build_server(tools: WoodsTools) -> Server[dict[str, Any]]:
    """The low-level MCP `Server` exposing `tools` (list_tools + call_tool; calls run in a thread)."""
    import anyio
    import mcp_types as types
    from mcp.server import Server

    from woods.version import __version__

    listed = [
        types.Tool(
            name=spec.name,
            description=spec.description,
            input_schema=spec.input_schema(),
            annotations=types.ToolAnnotations(read_only_hint=spec.read_only, destructive_hint=False,
                                              idempotent_hint=True),
        )
        for spec in TOOLS
    ]

    async def list_tools(
        _ctx: ServerRequestContext[dict[str, Any]], _params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return types.ListToolsResult(tools=listed)

    async def call_tool(
        _ctx: ServerRequestContext[dict[str, Any]], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        text, payload, is_error = await anyio.to_thread.run_sync(tools.call, params.name, params.arguments)
        return types.CallToolResult(
            content=[types.TextContent(text=text)],
            structured_content=payload,
            is_error=is_error,
        )

    return Server(SERVER_NAME, version=__version__, instructions=INSTRUCTIONS, on_list_tools=list_tools,
                  on_call_tool=call_tool)


def serve(
    store_dir: Path | str,
    *,
    root: Path | None = None,
    provider_factory: Callable[[], EmbeddingProvider] | None = None,
    contextual_factory: Callable[[], EmbeddingProvider] | None = None,
    repo: str | None = None,
) -> None:
    """Serve the index in `store_dir` (a directory or a PostgreSQL URL; `repo` picks a repository
    of the latter) over stdio until the client closes the connection.

    `root` lets `reindex` build a missing index; `provider_factory` is the base embedder it builds
    with (default: woods's static model) and `contextual_factory` the phase-2 one (default: MiniLM
    where the contextual extra is installed)."""
    import anyio
    from mcp.server.stdio import stdio_server

    tools = WoodsTools(store_dir, root=root, provider_factory=provider_factory, contextual_factory=contextual_factory,
                       repo=repo)
    server = build_server(tools)

    async def run() -> None:
        async with stdio_server() as (read_stream, write_stream):
            await server.run(read_stream, write_stream, server.create_initialization_options())

    try:
        anyio.run(run)
    finally:
        tools.close()


def main(argv: Sequence[str] | None = None) -> None:
    """`python -m woods.mcp_server [--path REPO | --store DIR|URL] [--repo NAME]` (what `woods mcp` runs)."""
    from woods.api import locate_index
    from woods.entrypoint import (
        configure_process,
        contextual_factory_from_environment,
        provider_factory_from_environment,
    )

    configure_process()
    parser = argparse.ArgumentParser(prog="woods mcp", description="Serve a woods index to MCP clients over stdio.")
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--path", type=Path, help="Repository whose .woods index to serve (default: cwd).")
    where.add_argument("--store", help="Index directory (instead of PATH/.woods), or a PostgreSQL URL.")
    parser.add_argument("--repo", help="Repository of a PostgreSQL store (default: all of them).")
    args = parser.parse_args(argv)
    if args.path is not None and not args.path.is_dir():
        parser.error(f"path not found or not a directory: {args.path}")
    try:
        provider_factory = provider_factory_from_environment()
        contextual_factory = contextual_factory_from_environment(None)
        # The index `woods mcp` serves for the same arguments (`woods.api.locate_index`): the
        # nearest .woods at or above --path, else --path/.woods, built by the first `reindex`.
        location = locate_index(args.path, args.store, args.repo, must_exist=False)
    except InputError as exc:
        parser.error(str(exc))
    serve(location.store, root=location.root, provider_factory=provider_factory, contextual_factory=contextual_factory,
          repo=args.repo)


if __name__ == "__main__":
    main()
