"""`woods.Index`: one warm, thread-safe handle on a published index that answers every question.

Why: an assistant backend (the MCP server, an editor plugin, a notebook) asks many small questions
of one index; opening SQLite, FAISS and the query encoder per question costs more than answering
it, so `Index` opens them once and keeps them — and the embedding model — warm for its lifetime.
The CLI and the MCP server render what it returns, so the same question gets the same answer on
every interface. It checks each call's arguments (`woods.api.validation`), pins a generation
(`woods.api.generations`) and asks the modules that answer (`searching`, `lookups`,
`inspection`); `update()` re-indexes through `build_index` (`woods.api.building`) and computes
contextual vectors in the background on request (`woods.api.background`).

Guarantees:
- Every answer is a frozen dataclass (`SearchResult` of `SearchHit`s, `Retrieval`, `UnitRecord`,
  `GraphWalk` of `GraphNeighbor`s, `RankedUnit`, `Structure`, `Status`) or the retrieval core's
  own typed value (`ResolveOutcome`); each has `to_dict()` with JSON-ready values, and those dicts
  are exactly what `woods … --json` and the MCP tools emit.
- Results from files that changed on disk since indexing are marked `stale` (search hits, the
  resolved unit), with one warning naming them.
- Concurrent readers are safe: the stores are read-only (`immutable=1` SQLite, an in-memory FAISS
  index), and every lazily built piece of shared state (the retrievers' pipelines and the FAISS store
  on their first query, the query embedder, the resolve searcher and name index, the PageRank
  table) is built once, under a lock, however many threads ask first.
- One question sees one generation: each call pins the generation that was current when it
  started. `update()` publishes a new generation and switches the handle to it; calls already
  running finish on the old one, which is closed when the last of them returns. Never a mix.
- Reading never writes: only `build_index` and `update()` write, through the index builder and its
  store lock.
- The repository a handle was given is the repository: files are compared and re-indexed there,
  never in the directory a copied or moved index was first built from (which it names in a warning
  until the next index re-roots it).
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from woods.api import inspection, lookups, searching
from woods.api.background import BackgroundVectors
from woods.api.building import build_index, default_base, embedders_of
from woods.api.generations import CachingEmbedder, Generations, WarmGeneration
from woods.api.inspection import STRUCTURE_DETAILS
from woods.api.location import is_server_url, locate_index, store_spec
from woods.api.lookups import GRAPH_DIRECTIONS
from woods.api.searching import READ_AS, file_filter, looks_like_issue
from woods.api.validation import validate_identifier, validate_names, validate_positive, validate_via
from woods.errors import AmbiguousIdentifierError, InputError
from woods.limits import (
    DEFAULT_CONTEXT_BUDGET,
    DEFAULT_GRAPH_DEPTH,
    DEFAULT_LOCK_WAIT_SECONDS,
    DEFAULT_MAX_FILE_BYTES,
    DEFAULT_PAGERANK_LIMIT,
    DEFAULT_PROFILE,
    DEFAULT_SEARCH_LIMIT,
    MAX_CONTEXT_BUDGET,
    MAX_GRAPH_DEPTH,
    MAX_LIST_LIMIT,
    MAX_SEARCH_LIMIT,
    RESOLVE_DEFAULT_LIMIT,
)

if TYPE_CHECKING:
    from woods.api.answers import LocalizeResult, Retrieval, SearchResult
    from woods.api.records import GraphNeighbor, GraphWalk, RankedUnit, UnitRecord
    from woods.api.reports import Status, Structure
    from woods.diagram import Diagram
    from woods.embedding.provider import EmbeddingProvider, QueryEmbedder
    from woods.evaluate.runner import EvaluationReport
    from woods.indexing import IndexSummary, Progress
    from woods.resolve import ResolveOutcome
    from woods.retrieval.code_search import CodeSearchConfig


class Index:
    """A warm, thread-safe handle on one woods index (see the module docstring for guarantees).

    Open with `Index.open(path)` (the repository; the index is `path/.woods`),
    `Index.open(store=dir)` or `Index("postgresql://…", repo=NAME)` (a PostgreSQL store: one
    repository, or all of them when `repo` is None); use as a context manager or call `close()`.
    `mode` is the default retrieval mode of `search` (semantic or lexical); `profile` the default
    ranking profile (`code`, woods' code search; `ruby`, the Ruby gem woods 2.0's pipeline);
    `exact` makes a PostgreSQL store's vector searches exact scans (HNSW otherwise, above
    `woods.store.postgres.EXACT_SEARCH_MAX_CHUNKS` chunks). `ranking` overrides the code profile's
    weights (`woods.retrieval.code_search.CodeSearchConfig`; for measuring a change, see
    bench/semble_eval.py) — the defaults are the measured ones.
    """

    def __init__(
        self,
        store_dir: str | os.PathLike[str],
        *,
        mode: str = "semantic",
        profile: str = DEFAULT_PROFILE,
        repo: str | None = None,
        exact: bool = False,
        ranking: CodeSearchConfig | None = None,
        one_shot: bool = False,
        root: str | os.PathLike[str] | None = None,
    ) -> None:
        self.store_dir: str | Path = store_spec(store_dir)
        # The repository directory this handle was given (None: the store's own — see
        # woods.freshness.index_root). Files are read and re-indexed there and nowhere else.
        self.given_root = None if root is None else Path(root)
        self.repo = repo
        self.exact = exact
        self.mode = mode
        self.profile = profile
        self.ranking = ranking
        # A handle for one question (the CLI) loads the query encoder that starts fastest; a
        # long-lived one (MCP, the API) the one that answers fastest (`query_embedder`).
        self.one_shot = one_shot
        self._lock = threading.Lock()  # guards the embedder cache
        self._update_lock = threading.Lock()  # one update at a time per handle
        self._embedders: dict[tuple[object, ...], CachingEmbedder] = {}
        # Phase 2 running in the background (update(background=True)), how to stop it, and what
        # it reported (a cancelled or failed phase 2 is a recorded warning, never lost silently).
        self._background = BackgroundVectors()
        self._generations = Generations(self._open_generation(), str(self.store_dir))

    @classmethod
    def open(
        cls,
        path: str | os.PathLike[str] | None = None,
        *,
        store: str | os.PathLike[str] | None = None,
        mode: str = "semantic",
        profile: str = DEFAULT_PROFILE,
        repo: str | None = None,
        exact: bool = False,
        ranking: CodeSearchConfig | None = None,
    ) -> Index:
        """Open the index of repository `path` (default: cwd) — the nearest `.woods` at or above it,
        up to the repository root, as the CLI and the MCP server find it (`locate_index`) — or the
        index directory or PostgreSQL URL `store` (`repo` picks one repository of a PostgreSQL store)."""
        if path is not None and store is not None:
            raise InputError("pass either path or store, not both")
        root = Path(path) if path is not None else None
        if root is not None and not root.exists():
            raise InputError(f"path not found: {root}")
        if is_server_url(store):
            return cls(str(store), mode=mode, profile=profile, repo=repo, exact=exact, ranking=ranking)
        if store is not None:
            return cls(Path(store), mode=mode, profile=profile, repo=repo, exact=exact, ranking=ranking)
        where = locate_index(root)
        return cls(where.store, mode=mode, profile=profile, repo=repo, exact=exact, ranking=ranking, root=where.root)

    # -- lifecycle -------------------------------------------------------------------------
    def _open_generation(self) -> WarmGeneration:
        from woods.freshness import index_root
        from woods.store.backend import open_stores

        stores = open_stores(self.store_dir, self.repo, exact=self.exact)
        description = dict(stores.manifest.embedder)
        try:
            root = index_root(self.store_dir, self.given_root, stores.manifest.root)
            return WarmGeneration(
                stores, lambda: self._embedder_for(description), self.mode, self.profile, self.ranking, root
            )
        except BaseException:
            stores.close()
            raise

    def _embedder_for(self, description: Mapping[str, Any]) -> QueryEmbedder:
        """The query embedder for an embedder description, created once and kept across updates."""
        from woods.embedding.select import query_embedder

        cache_key = (description.get("name"), description.get("dimension"), description.get("fingerprint"))
        with self._lock:
            embedder = self._embedders.get(cache_key)
            if embedder is None:
                embedder = CachingEmbedder(query_embedder(dict(description), one_shot=self.one_shot))
                self._embedders[cache_key] = embedder
            return embedder

    def _use(self) -> contextlib.AbstractContextManager[WarmGeneration]:
        """Pin the current generation for one call (`Generations.use`)."""
        return self._generations.use()

    def close(self) -> None:
        """Close the index (idempotent). Calls still running finish first; a background phase 2
        stops after its current batch (its finished batches are kept for the next run)."""
        generation = self._generations.close()
        if generation is None:
            return
        with self._update_lock:  # an update under way finishes first and starts no new thread
            self._background.stop()
        self._generations.retire(generation)

    def __enter__(self) -> Index:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def generation(self) -> str:
        """The name of the generation new calls read."""
        with self._use() as gen:
            return str(gen.stores.generation.name)

    # -- retrieval -------------------------------------------------------------------------
    def search(
        self,
        query: str,
        limit: int = DEFAULT_SEARCH_LIMIT,
        strategy: str | None = None,
        types: Sequence[str] | None = None,
        exclude_types: Sequence[str] | None = None,
        *,
        path_prefixes: Sequence[str] | None = None,
        mode: str | None = None,
        budget: int = DEFAULT_CONTEXT_BUDGET,
        profile: str | None = None,
        globs: Sequence[str] | None = None,
        langs: Sequence[str] | None = None,
        read_as: str = "auto",
    ) -> SearchResult:
        """Ranked units for `query` (best first), with how they were found and the assembled context.

        `strategy` forces one of vector, keyword, graph, direct, hybrid (None or "auto" classifies
        the query); `types` keeps only those unit types, `exclude_types` drops some;
        `path_prefixes` keeps units under those repository-relative paths (whole segments);
        `globs` keeps units of files matching gitignore-style patterns (`!` excludes) and `langs`
        of those languages (names or extensions: `python`, `py`; `woods.filters`);
        `mode` is semantic or lexical (the lexical index alone, no model; default: the index's
        mode); `budget` sizes the assembled context in tokens; the context holds the first `limit`
        ranked units at most, so `sources` never names a unit `results` lacks; `profile` is the
        ranking profile, `code` or `ruby` (default: the index handle's). `globs` / `langs` keep
        units of the files they select. `read_as` is `auto` (a pasted stack trace, log or bug
        report is localised — `localize` — when no strategy, filter or Ruby profile is asked for; a
        question is searched), `query` or `issue` (forced; filters and the strategy are then not
        applied, with a warning).

        Each hit carries its best-matching lines (`snippet`). A query that is one name no unit is
        named (`zorblaxQuuxHandler`, `make_reponse`) says so first in `warnings`, with the
        closest names of the index.
        """
        limit = validate_positive("limit", limit, MAX_SEARCH_LIMIT)
        budget = validate_positive("budget", budget, MAX_CONTEXT_BUDGET)
        if read_as not in READ_AS:
            raise InputError(f"read_as must be one of {', '.join(READ_AS)}, got {read_as!r}")
        plain = strategy in (None, "auto") and not (types or exclude_types or path_prefixes or globs or langs) and (
            (profile or self.profile) == "code"
        )
        if read_as == "issue" or (read_as == "auto" and plain and looks_like_issue(query)):
            ignored = () if plain else ("an issue text is localised as a whole: the strategy, filters and profile "
                                        "given were not applied",)
            with self._use() as gen:
                return searching.localized_search(
                    gen, query, limit=limit, budget=budget, mode=self.mode if mode is None else mode, warnings=ignored
                )
        files = file_filter(globs, langs)
        with self._use() as gen:
            return searching.search(
                gen, query, limit=limit, strategy=None if strategy in (None, "auto") else strategy, types=types,
                exclude_types=exclude_types, path_prefixes=path_prefixes, mode=mode, budget=budget, profile=profile,
                files=files,
            )

    def localize(self, text: str, *, limit: int = DEFAULT_SEARCH_LIMIT, mode: str | None = None) -> LocalizeResult:
        """Which files and units a pasted issue, failing test run or stack trace points at, each
        with the evidence behind it (woods/retrieval/localize.py): frames mapped to the units at
        their lines, names, error classes, messages matched in the code, failing tests, one step
        through the dependency graph, and the code search's answer to the text's weighted words.
        `limit` files; `mode` lexical asks no model."""
        limit = validate_positive("limit", limit, MAX_SEARCH_LIMIT)
        with self._use() as gen:
            return searching.localize(gen, text, limit=limit, mode=self.mode if mode is None else mode)

    def retrieve(
        self,
        query: str,
        budget: int = DEFAULT_CONTEXT_BUDGET,
        types: Sequence[str] | None = None,
        exclude_types: Sequence[str] | None = None,
        *,
        profile: str | None = None,
        globs: Sequence[str] | None = None,
        langs: Sequence[str] | None = None,
    ) -> Retrieval:
        """The assembled, token-budgeted context for `query` (what `codebase_retrieve` returns);
        `globs` and `langs` keep the files they select, as in `search`."""
        budget = validate_positive("budget", budget, MAX_CONTEXT_BUDGET)
        files = file_filter(globs, langs)
        with self._use() as gen:
            return searching.retrieve(
                gen, query, budget=budget, types=types, exclude_types=exclude_types, profile=profile, files=files
            )

    def resolve(
        self,
        ref: str,
        *,
        type: str | None = None,  # noqa: A002 — mirrors `woods resolve --type`
        limit: int = RESOLVE_DEFAULT_LIMIT,
        strict: bool = False,
        recent: Sequence[str] | None = None,
    ) -> ResolveOutcome:
        """Turn a loose reference into one unit, or say why not (`woods.resolve.ResolveOutcome`).

        `recent` lists unit ids the caller just saw, most recent first: a short name that matches
        one of them resolves to it. A resolved unit whose file changed since indexing comes back
        with `stale=True` and a warning.
        """
        recent_ids = validate_names("recent", recent)  # a bare string is refused, not read letter by letter
        with self._use() as gen:
            return lookups.resolve(gen, ref, unit_type=type, limit=limit, strict=strict, recent=recent_ids)

    # -- units and the graph ---------------------------------------------------------------
    def lookup(
        self,
        identifier: str,
        *,
        type: str | None = None,  # noqa: A002 — the unit type, as everywhere in woods
        include_source: bool = True,
    ) -> UnitRecord | None:
        """The unit stored under `identifier` — a storage key or a public identifier — or None.

        Exact names only (use `resolve` for loose ones). When a public identifier names units of
        several types, `type` picks one; without it AmbiguousIdentifierError lists the variants.
        """
        units = self.lookup_all(identifier, type=type, include_source=include_source)
        if len(units) <= 1:
            return units[0] if units else None
        candidates = [
            {
                "key": u.key,
                "identifier": u.identifier,
                "type": u.type,
                "file_path": u.file_path,
                "line_start": u.line_start,
            }
            for u in units
        ]
        kinds = ", ".join(sorted({u.type for u in units}))
        raise AmbiguousIdentifierError(
            f"{identifier!r} names {len(candidates)} units ({kinds}); pass type= to choose one", candidates
        )

    def lookup_all(
        self,
        identifier: str,
        *,
        type: str | None = None,  # noqa: A002 — the unit type, as everywhere in woods
        include_source: bool = True,
    ) -> list[UnitRecord]:
        """Every unit stored under `identifier`: the one unit of a storage key, or each typed
        variant of a public identifier, ordered by (type, key); `type` keeps one type; [] when
        nothing is stored under that exact name."""
        validate_identifier(identifier)
        with self._use() as gen:
            return lookups.lookup_all(gen, identifier, unit_type=type, include_source=include_source)

    def traverse(
        self,
        identifier: str,
        *,
        direction: str = "dependencies",
        depth: int = DEFAULT_GRAPH_DEPTH,
        via: str | Sequence[str] | None = None,
        types: Sequence[str] | None = None,
    ) -> GraphWalk:
        """Walk the dependency graph from `identifier` breadth-first up to `depth` hops.

        `direction` is "dependencies" (what it uses) or "dependents" (what uses it); `via` keeps
        only edges of that kind (or kinds); `types` keeps neighbours with a unit of those types.
        `identifier` may be a unit (identifier or storage key) or a graph node the index holds no
        unit for (a superclass from a gem); anything else raises UnitNotFoundError.
        """
        validate_identifier(identifier)
        if direction not in GRAPH_DIRECTIONS:
            raise InputError(f"direction must be one of {', '.join(GRAPH_DIRECTIONS)}, got {direction!r}")
        depth = validate_positive("depth", depth, MAX_GRAPH_DEPTH)
        kinds = validate_via(via)
        wanted = validate_names("types", types)
        with self._use() as gen:
            return lookups.traverse(gen, identifier, direction=direction, depth=depth, via=kinds, types=wanted)

    def dependencies(
        self,
        identifier: str,
        depth: int = DEFAULT_GRAPH_DEPTH,
        via: str | Sequence[str] | None = None,
        *,
        types: Sequence[str] | None = None,
    ) -> list[GraphNeighbor]:
        """What `identifier` depends on, breadth-first up to `depth` hops (`via` keeps edge kinds)."""
        walk = self.traverse(identifier, direction="dependencies", depth=depth, via=via, types=types)
        return list(walk.neighbors)

    def dependents(
        self,
        identifier: str,
        depth: int = DEFAULT_GRAPH_DEPTH,
        via: str | Sequence[str] | None = None,
        *,
        types: Sequence[str] | None = None,
    ) -> list[GraphNeighbor]:
        """What depends on `identifier`, breadth-first up to `depth` hops."""
        walk = self.traverse(identifier, direction="dependents", depth=depth, via=via, types=types)
        return list(walk.neighbors)

    def pagerank(self, limit: int | None = DEFAULT_PAGERANK_LIMIT, types: Sequence[str] | None = None) -> list[RankedUnit]:
        """The most central units by PageRank (as the Ruby gem ranks them), optionally only of `types`; `limit=None`
        returns every unit."""
        if limit is not None:
            limit = validate_positive("limit", limit, MAX_LIST_LIMIT)
        wanted = validate_names("types", types)
        with self._use() as gen:
            ranked = gen.ranked_units()
        selected = [u for u in ranked if wanted is None or u.type in wanted]
        return selected if limit is None else selected[:limit]

    def display_source(self, unit: UnitRecord) -> str | None:
        """The unit's source for reading: the whole body dedented together. The stored text starts
        at the unit's first token, so its first line lost its indentation; it is read back from
        the enclosing unit's text (exact), else estimated (`woods.snippets.first_line_indent`)."""
        from woods.snippets import dedent_unit

        if unit.source_code is None:
            return None
        with self._use() as gen:
            indent = lookups.indent_in_parents(gen.stores.metadata, unit)
        return dedent_unit(unit.source_code, indent)

    def structure_diagram(self, *, top: int = DEFAULT_PAGERANK_LIMIT) -> Diagram:
        """The repository's packages (or files, when they all fit) and the dependencies between
        them, the `top` most central (PageRank) drawn (`woods.diagram.module_diagram`)."""
        top = validate_positive("top", top, MAX_LIST_LIMIT)
        with self._use() as gen:
            return lookups.structure_diagram(gen, top)

    def walk_diagram(self, walk: GraphWalk, *, limit: int = DEFAULT_PAGERANK_LIMIT) -> Diagram:
        """A graph walk (`traverse`) as a diagram: the start and its `limit - 1` nearest, most
        central neighbours, with the edges among them (`woods.diagram.walk_diagram`)."""
        limit = validate_positive("limit", limit, MAX_LIST_LIMIT)
        with self._use() as gen:
            return lookups.walk_diagram(gen, walk, limit)

    # -- the index itself ------------------------------------------------------------------
    def structure(self, detail: str = "summary", *, top: int = DEFAULT_PAGERANK_LIMIT) -> Structure:
        """Counts by unit type, language and edge kind and the `top` units by PageRank;
        `detail="full"` adds every indexed file."""
        if detail not in STRUCTURE_DETAILS:
            raise InputError(f"detail must be one of {', '.join(STRUCTURE_DETAILS)}, got {detail!r}")
        top = validate_positive("top", top, MAX_LIST_LIMIT)
        with self._use() as gen:
            return inspection.structure(gen, detail, top)

    def status(self, *, globs: Sequence[str] | None = None, langs: Sequence[str] | None = None) -> Status:
        """The index's identity and contents, and which repository files changed since it was built.
        `globs` / `langs` (as in `search`) narrow `units_by_type`, `files_by_language` and
        `changes` to the files they select and add `filter` with what they selected."""
        files = file_filter(globs, langs)
        with self._use() as gen:
            return inspection.status(gen, files, self._background)

    def vector_state(self) -> dict[str, Any]:
        """`status().vectors` without comparing the repository with the index (no file is read)."""
        with self._use() as gen:
            return inspection.vector_state(gen, self._background)

    def evaluate(
        self, queryset: str | os.PathLike[str], *, budget: int | None = None, profile: str | None = None
    ) -> EvaluationReport:
        """Run a query set (Ruby woods format) through this index and score it (`woods evaluate`).
        `budget` overrides every query's own budget; `profile` the ranking (default: the handle's)."""
        from woods.evaluate.runner import run_evaluation

        if budget is not None:
            budget = validate_positive("budget", budget, MAX_CONTEXT_BUDGET)
        with self._use() as gen:
            return run_evaluation(
                queryset, stores=gen.stores, budget=budget, embedder_factory=gen.embedder_factory,
                profile=profile or self.profile,
            )

    def update(
        self,
        *,
        wait: float = DEFAULT_LOCK_WAIT_SECONDS,
        provider_factory: Callable[[], EmbeddingProvider] | None = None,
        workers: int = 1,
        progress: Progress | None = None,
        background: bool = False,
        contextual_factory: Callable[[], EmbeddingProvider] | None = None,
    ) -> IndexSummary:
        """Re-index the repository this handle reads and switch to the new generation.

        Vectors of unchanged embedding texts are reused, so only changed code is embedded.
        Returns the builder's `IndexSummary` (`up_to_date` when nothing changed: then no new
        generation is written). The embedders are the index's own: its base embedder (the static
        model) and, when it holds contextual vectors — or where the contextual extra is installed,
        for an index on the default base — the contextual one (`woods.api.building.embedders_of`);
        `provider_factory` and `contextual_factory` override them (they must produce compatible
        vectors).

        `background=True` returns as soon as phase 1 is published and switched to (every call
        answers from it, hybrid with the base vectors); the contextual vectors are computed by a
        background thread and the handle switches again when they are published
        (`wait_for_vectors()`). A later `update()` or `close()` stops that thread between batches.
        """
        with self._update_lock:  # one update at a time; its own background thread stopped under it
            self._background.stop()
            with self._use() as gen:
                repo = inspection.repo_name(gen.stores)
                if isinstance(self.store_dir, str) and repo is None:
                    raise InputError("this Index reads several repositories; open one (repo=NAME) to update it")
                manifest = gen.stores.manifest
                root = gen.root  # the given repository, never the recorded one of a copy's original
                base, second = embedders_of(manifest.data)
                max_bytes = int(manifest.data.get("max_file_bytes") or DEFAULT_MAX_FILE_BYTES)
            if root is None:
                raise InputError("this index records no repository root (built from a corpus); it cannot be updated")
            factory = provider_factory or base
            contextual = contextual_factory or second
            summary = build_index(
                root, store=self.store_dir, repo=repo, max_file_bytes=max_bytes, wait=wait,
                provider_factory=factory or default_base, contextual_factory=contextual, workers=workers,
                progress=progress, vectors=not background,
            )
            self._switch()
            if background and summary.vectors_pending and contextual is not None:
                self._start_background(summary.generation, wait, contextual)
            return summary

    def complete_vectors_in_background(
        self, *, contextual_factory: Callable[[], EmbeddingProvider] | None = None,
        wait: float = DEFAULT_LOCK_WAIT_SECONDS,
    ) -> bool:
        """Start computing the contextual vectors of a phase-1 generation in a background thread
        (True), or do nothing (False) when there is no contextual embedder to use (none given, and
        the extra not installed or the base not the default one), when the index already holds
        them, when another backend reads it, or when the thread already runs."""
        with self._use() as gen:
            manifest = gen.stores.manifest
            if not isinstance(gen.stores.store_dir, Path) or "base_embedder" in manifest.data.get("vectors", {}):
                return False  # another backend publishes every vector at once; or phase 2 is done
            generation = gen.stores.generation.name
            factory = contextual_factory or embedders_of(manifest.data)[1]
        if factory is None:
            return False
        with self._update_lock:
            if self._background.running:
                return False
            return self._start_background(generation, wait, factory)

    def wait_for_vectors(self, timeout: float | None = None) -> bool:
        """Wait for a background phase 2 to finish; True when none is running (any more)."""
        return self._background.wait(timeout)

    @property
    def background_warnings(self) -> list[str]:
        """What background phases reported (stopped, failed, could not switch), oldest first;
        `status()` shows them too."""
        return self._background.warnings

    @property
    def vectors_in_background(self) -> bool:
        """True while a background thread computes this index's vectors."""
        return self._background.running

    def _switch(self) -> None:
        """Point new calls at the published generation; retire the one they used."""
        self._generations.switch(self._open_generation())

    def _start_background(self, generation: str, wait: float, factory: Callable[[], EmbeddingProvider]) -> bool:
        """Compute the vectors of the lexical generation `generation` (phase 2 alone, from its own
        extractions: edits made meanwhile wait for the next update) in a daemon thread; switch
        to the vector-complete generation when it is published. Called under `_update_lock`;
        a closed handle starts nothing (False)."""
        if self._generations.closed:
            return False
        self._background.start(Path(self.store_dir), generation, wait, factory, on_published=self._switch)
        return True


__all__ = ["Index"]
