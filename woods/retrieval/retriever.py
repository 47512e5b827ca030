"""Retriever: the whole retrieval pipeline behind one call.

validate → scope → classify → execute → rank → type filter (+ within-type fallback) → assemble →
RetrievalResult with a trace. Why one class: interfaces (CLI, MCP, Python API) must get the same
answer for the same query; they render the typed result and never re-run pipeline stages.
Guarantees (Ruby retriever.rb @165a3736): the query is validated before any work; only the
vector and hybrid strategies create the embedder (keyword, graph, direct and lexical never touch
it); `test_mapping` is excluded unless `types` asks for it; when `types` filters everything away
the query is re-run as a hard-filtered vector search; `tokens_used` is the estimate of the final
context, type-rank table included; store failures surface as StoreError naming the store.
"""

from __future__ import annotations

import dataclasses
import re
import sqlite3
import sys
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

from woods import limits
from woods.lazy import Lazy
from woods.limits import DEFAULT_PROFILE, PROFILES
from woods.retrieval.assembler import DEFAULT_BUDGET, DEFAULT_CHARS_PER_TOKEN, ContextAssembler
from woods.retrieval.candidates import (
    AppliedScope,
    AssembledContext,
    Candidate,
    Classification,
    InvalidOptionError,
    InvalidQueryError,
    InvalidTypeError,
    RankedEntry,
    RetrievalResult,
    RetrievalTrace,
    StoreError,
    TypeRankEntry,
)
from woods.retrieval.classifier import QueryClassifier, select_strategy
from woods.retrieval.code_search import CodeSearch, CodeSearchConfig, DenseStore
from woods.retrieval.exact import exact_matches
from woods.retrieval.executor import DEFAULT_LIMIT, STRATEGIES, Embedder, SearchExecutor, SubjectLookup
from woods.retrieval.lexical import LexicalAssembler, LexicalIndex
from woods.retrieval.ranker import RRF_POLICIES, Ranker
from woods.retrieval.scope import Scope, ScopedGraphStore, ScopedVectorStore, scope_requested
from woods.retrieval.subjects import LexicalSubjects
from woods.store.base import GraphStore, MetadataStore, Record, VectorStore
from woods.store.identity import public_identifier, strip_chunk
from woods.store.metadata import UnitSummary

if TYPE_CHECKING:
    from woods.filters import FileFilter
    from woods.retrieval.localize import Localization

MAX_QUERY_BYTES = limits.MAX_QUERY_BYTES  # the bound every interface shares (rationale in woods.limits)
DEFAULT_EXCLUDE_TYPES = ("test_mapping",)  # ~33 % of a Rails index; lexically dominates real code
# Types the structural banner counts, in this order (#105).
STRUCTURAL_TYPES = ("model", "controller", "service", "job", "mailer", "component", "graphql")
MODES = ("semantic", "lexical")
# Strategies that need the vector store; on an index whose vectors are still being computed the
# Ruby profile answers them with keyword search (and says so).
VECTOR_STRATEGIES = ("vector", "hybrid")
NO_VECTORS_YET = "this index has no vectors yet (phase 2 of `woods index` has not finished)"
# Strategies the code profile answers with code search, and the mode each maps to; graph and direct
# are structural lookups and keep the Ruby executor in every profile.
# Strategy → code search mode: `keyword` is the raw lexical leg (an ablation), `lexical` the lexical
# leg with every signal (what `--mode lexical` and an index without vectors answer).
CODE_SEARCH_MODES = {None: "hybrid", "hybrid": "hybrid", "vector": "vector", "keyword": "keyword", "lexical": "lexical"}
_TYPE_NAME = re.compile(r"\A[A-Za-z_][A-Za-z0-9_]*\Z")
# Unit types woods knows even when this index holds none of them (a query for `job` on an index
# without jobs is a legitimate "absent", a typo like `modle` is an error). The Ruby gem's types
# plus the generic ones the language extractors emit.
_KNOWN_UNIT_TYPES_TEXT = """model controller service component view_component job mailer graphql graphql_type
    graphql_mutation graphql_resolver graphql_query serializer manager policy validator concern
    route middleware i18n pundit_policy configuration engine view_template migration
    action_cable_channel scheduled_job rake_task state_machine event decorator database_view
    caching factory test_mapping rails_source gem_source poro lib package database_table
    external_consumer module class method function interface struct enum trait impl type
    type_alias constant variable namespace record annotation object file document"""
KNOWN_UNIT_TYPES = frozenset(_KNOWN_UNIT_TYPES_TEXT.split())
# What an entry shows of its unit: a candidate carrying all of them needs no record read.
_ENTRY_FIELDS = ("identifier", "type", "file_path", "line_start", "line_end")


TYPE_RANK_HEADER = "| Type | Source | Rank in unfiltered top-K | Global K | Total in index |"
TYPE_RANK_RULE = "|------|--------|--------------------------|----------|----------------|"


def store_failures() -> tuple[type[BaseException], ...]:
    """The exceptions that mean a store failed (its file, its database, its server), as opposed to
    a bug: SQLite's errors, I/O errors and, once the PostgreSQL driver is loaded, its errors (a
    process that never loaded psycopg cannot receive one)."""
    failures: list[type[BaseException]] = [sqlite3.Error, OSError]
    psycopg = sys.modules.get("psycopg")
    if psycopg is not None:
        failures.append(psycopg.Error)
    return tuple(failures)


class _Translated:
    """Store facade: a store's own failure (`store_failures`) becomes StoreError naming the store,
    so interfaces report a degraded index; anything else — a programming error — passes through
    unchanged and is reported as the internal error it is."""

    def __init__(self, store: Any, name: str) -> None:
        self._store = store
        self._name = name

    def __getattr__(self, attribute: str) -> Any:
        value = getattr(self._store, attribute)
        if not callable(value):
            return value
        name = self._name

        def call(*args: Any, **kwargs: Any) -> Any:
            try:
                return value(*args, **kwargs)
            except store_failures() as exc:
                raise StoreError(f"{name} store call {attribute} failed: {type(exc).__name__}: {exc}", store=name) from exc

        return call


@dataclass(frozen=True, slots=True)
class Localized:
    """A localisation (files, units, evidence) and the retrieval result that renders it."""

    result: RetrievalResult
    localization: Localization


@dataclass(frozen=True, slots=True)
class _Pipeline:
    metadata: MetadataStore
    vectors: VectorStore | None
    graph: GraphStore | None
    executor: SearchExecutor
    ranker: Ranker
    assembler: ContextAssembler


def validate_query(query: object) -> str:
    if not isinstance(query, str):
        raise InvalidQueryError(f"query must be a string, got {type(query).__name__}")
    if not query.strip():
        raise InvalidQueryError("query cannot be blank")
    size = len(query.encode("utf-8", "surrogatepass"))
    if size > MAX_QUERY_BYTES:
        raise InvalidQueryError(f"query exceeds max size of {MAX_QUERY_BYTES} bytes (got {size})")
    return query


class Retriever:
    """Answers queries against one set of stores (`stores.metadata`, `.vectors`, `.graph`).

    `embedder_factory` is called at most once, on the first vector or hybrid search; pass None
    for an index without an embedder (vector strategies then raise InvalidOptionError).
    """

    def __init__(
        self,
        stores: Any,
        embedder_factory: Callable[[], Embedder] | None = None,
        *,
        mode: str = "semantic",
        chars_per_token: float = DEFAULT_CHARS_PER_TOKEN,
        rrf_policy: str = "unit",
        promote_exact: bool = True,
        profile: str = DEFAULT_PROFILE,
        code_config: CodeSearchConfig | None = None,
    ) -> None:
        if mode not in MODES:
            raise InvalidOptionError(f"unknown retrieval mode {mode!r} (expected semantic or lexical)")
        if profile not in PROFILES:
            raise InvalidOptionError(f"unknown ranking profile {profile!r} (expected {' or '.join(PROFILES)})")
        self.mode = mode
        self.profile = profile
        self._code_config = code_config
        self._raw_metadata = stores.metadata
        self._stores = stores
        self._chars_per_token = chars_per_token
        if rrf_policy not in RRF_POLICIES:
            raise InvalidOptionError(f"unknown RRF policy {rrf_policy!r} (expected unit or occurrence)")
        self._rrf_policy = rrf_policy
        self._embedder_factory = embedder_factory
        self._classifier = QueryClassifier()
        # Built on first use, once, even when threads of a shared handle ask at once (woods.lazy).
        self._embedder: Lazy[Embedder] = Lazy(self._make_embedder)
        self._pipeline: Lazy[_Pipeline] = Lazy(self._make_base_pipeline)
        self._lexical: Lazy[LexicalIndex] = Lazy(lambda: LexicalIndex(_Translated(self._raw_metadata, "metadata")))
        self._code_engine: Lazy[CodeSearch] = Lazy(self._make_code_search)
        # Beyond Ruby: a query that is exactly a name or a path puts those units first (exact.py).
        self.promote_exact = promote_exact and hasattr(stores.metadata, "find_by_name")

    # -- wiring ----------------------------------------------------------------------------
    def _make_embedder(self) -> Embedder:
        if self._embedder_factory is None:
            raise InvalidOptionError("no embedding provider is configured (use --mode lexical or keyword strategies)")
        return self._embedder_factory()

    def _embedder_once(self) -> Embedder:
        return self._embedder.get()

    def _build(self, metadata: Any, vectors: Any, graph: Any) -> _Pipeline:
        meta = _Translated(metadata, "metadata")
        vec = _Translated(vectors, "vector") if vectors is not None else None
        gra = _Translated(graph, "graph") if graph is not None else None
        factory = self._embedder_once if self._embedder_factory is not None else None
        return _Pipeline(
            metadata=meta,
            vectors=vec,
            graph=gra,
            executor=SearchExecutor(meta, vec, gra, factory, subjects=self._subjects(metadata, meta)),
            ranker=Ranker(meta, gra, rrf_policy=self._rrf_policy),
            assembler=ContextAssembler(meta, chars_per_token=self._chars_per_token),
        )

    def _subjects(self, raw: Any, metadata: Any) -> SubjectLookup | None:
        """The code profile finds graph seeds and direct's fallback through the lexical index;
        the Ruby profile keeps the gem's substring scan (None), and so does a scope's in-memory
        view of its units (it has no lexical index; its records are already few)."""
        if self.profile != "code" or not callable(getattr(raw, "lexical_search", None)):
            return None
        return LexicalSubjects(metadata, (self._code_config or CodeSearchConfig()).lexical_weights)

    def _make_base_pipeline(self) -> _Pipeline:
        vectors = _LazyVectors(self._stores)
        return self._build(self._stores.metadata, vectors, getattr(self._stores, "graph", None))

    def _base_pipeline(self) -> _Pipeline:
        return self._pipeline.get()

    def _make_code_search(self) -> CodeSearch:
        return CodeSearch(
            _Translated(self._raw_metadata, "metadata"),
            self._dense_store,
            self._embedder_once if self._embedder_factory is not None and self.mode != "lexical" else None,
            self._code_config,
        )

    def _code_search(self) -> CodeSearch:
        """One engine per retriever: what it keeps between queries (file-path words) is kept."""
        return self._code_engine.get()

    def _lexical_index(self) -> LexicalIndex:
        return self._lexical.get()

    # -- the pipeline ----------------------------------------------------------------------
    def retrieve(
        self,
        query: object,
        *,
        budget: int = DEFAULT_BUDGET,
        types: Sequence[str] | None = None,
        exclude_types: Sequence[str] | None = None,
        strategy: str | None = None,
        path_prefixes: Sequence[str] | None = None,
        packages: Sequence[str] | None = None,
        limit: int = DEFAULT_LIMIT,
        files: FileFilter | None = None,
        context_limit: int | None = None,
    ) -> RetrievalResult:
        """`files` keeps units of the files a `FileFilter` selects (`--glob`, `--lang`), applied
        like `path_prefixes`; `context_limit` assembles the context from the first that many
        ranked units only (a search's list and its context then name the same units), else from
        every ranked unit within the budget."""
        text = validate_query(query)
        self._validate_options(budget, strategy, limit)
        type_list = self._validate_types(types, "types")
        excluded_extra = self._validate_types(exclude_types, "exclude_types")
        started = time.perf_counter()
        excluded = tuple(dict.fromkeys([*DEFAULT_EXCLUDE_TYPES, *excluded_extra]))

        scope: Scope | None = None
        pipeline = self._base_pipeline()
        if scope_requested(packages, path_prefixes, files):
            scope = Scope(
                pipeline.metadata,
                packages=packages,
                source_paths=path_prefixes,
                types=type_list,
                exclude_types=excluded,
                files=files,
            )
        classification = self._classifier.classify(text)

        if self.profile == "code" and (self.mode == "lexical" or strategy in CODE_SEARCH_MODES):
            mode = "lexical" if self.mode == "lexical" else CODE_SEARCH_MODES[strategy]
            return self._retrieve_code(
                pipeline, text, classification, budget, type_list, excluded, mode, strategy, scope, limit, started,
                context_limit,
            )
        if self.mode == "lexical" or strategy == "lexical":
            result = self._retrieve_lexical(
                text, classification, budget, type_list, excluded, scope, limit, started, context_limit
            )
        else:
            if scope is not None:
                pipeline = self._build(
                    scope.metadata,
                    ScopedVectorStore(pipeline.vectors, scope) if pipeline.vectors is not None else None,
                    ScopedGraphStore(pipeline.graph, scope) if pipeline.graph is not None else None,
                )
            warnings: tuple[str, ...] = ()
            chosen = strategy or select_strategy(classification)
            if chosen in VECTOR_STRATEGIES and not self.has_vectors:
                warnings = (f"{chosen} strategy skipped: {NO_VECTORS_YET}; answered with keyword search",)
                strategy = "keyword"
            result = self._retrieve_semantic(
                pipeline, text, classification, budget, type_list, excluded, strategy, scope, limit, started,
                context_limit,
            )
            if warnings:
                result = dataclasses.replace(
                    result, warnings=(*result.warnings, *warnings),
                    trace=dataclasses.replace(result.trace, fallback_from=chosen),
                )
        return result

    @property
    def has_vectors(self) -> bool:
        """False while the index is lexical only (its vectors are still being computed): vector and
        hybrid searches then answer lexically with a warning, in every profile."""
        return bool(getattr(self._stores, "has_vectors", True))

    def _retrieve_semantic(
        self,
        pipeline: _Pipeline,
        query: str,
        classification: Classification,
        budget: int,
        type_list: tuple[str, ...],
        excluded: tuple[str, ...],
        strategy: str | None,
        scope: Scope | None,
        limit: int,
        started: float,
        context_limit: int | None = None,
    ) -> RetrievalResult:
        execution = pipeline.executor.execute(query, classification, strategy=strategy)
        ranked = pipeline.ranker.rank(execution.candidates, classification)
        filtered = self._filter_by_type(pipeline.metadata, ranked, type_list, excluded)
        if strategy is None and scope is None and self.promote_exact:
            filtered = self._promote_exact(pipeline.metadata, query, filtered, type_list, excluded)
        fallback_ran = False
        if type_list and not filtered:
            fallback_ran = True
            filtered = self._within_type_fallback(pipeline, query, classification, type_list, excluded)
        type_rank_context = None
        if type_list and scope is None:
            type_rank_context = self._type_rank_context(pipeline.metadata, ranked, type_list, filtered, fallback_ran)

        assembled = pipeline.assembler.assemble(
            first_units(filtered, context_limit),
            classification,
            structural_context=structural_banner(pipeline.metadata),
            budget=budget,
        )
        context = assembled.context
        if type_rank_context:
            context = append_type_rank_table(context, type_rank_context)
        tokens_used = pipeline.assembler.estimate_tokens(context)
        trace = RetrievalTrace(
            classification=classification,
            strategy=execution.strategy,
            candidate_count=len(execution.candidates),
            ranked_count=len(filtered),
            tokens_used=tokens_used,
            elapsed_ms=round((time.perf_counter() - started) * 1000, 1),
            skipped_missing_metadata=assembled.skipped_missing_metadata,
        )
        return RetrievalResult(
            context=context,
            sources=assembled.sources,
            candidates=self._entries(pipeline.metadata, filtered, limit),
            classification=classification,
            strategy=execution.strategy,
            tokens_used=tokens_used,
            budget=budget,
            trace=trace,
            type_rank_context=type_rank_context,
            applied_scope=_applied_scope(scope, trace, assembled),
            mode="semantic",
            assembled_tokens=assembled.tokens_used,
        )

    def _retrieve_code(
        self,
        pipeline: _Pipeline,
        query: str,
        classification: Classification,
        budget: int,
        type_list: tuple[str, ...],
        excluded: tuple[str, ...],
        mode: str,
        strategy: str | None,
        scope: Scope | None,
        limit: int,
        started: float,
        context_limit: int | None = None,
    ) -> RetrievalResult:
        """The code profile: code search (both legs fused, or one leg), eligibility (types, scope)
        applied before ranking, then the same assembler and result shape as every profile."""
        scoped_keys = frozenset(scope.keys) if scope is not None else None

        def eligible(unit: UnitSummary) -> bool:
            if scoped_keys is not None and unit.key not in scoped_keys:
                return False
            return unit.type in type_list if type_list else unit.type not in excluded

        found = self._code_search().search(query, mode=mode, limit=max(limit, DEFAULT_LIMIT), eligible=eligible)
        candidates = [
            Candidate(
                identifier=unit.key,
                score=round(unit.score, 6),
                source=mode,
                metadata={
                    "identifier": unit.summary.identifier, "type": unit.summary.type,
                    "file_path": unit.summary.file_path, "line_start": unit.summary.line_start,
                    "line_end": unit.summary.line_end,
                },
                sources=unit.sources,
            )
            for unit in found.units
        ]
        if scope is None and strategy is None and self.promote_exact:
            candidates = self._promote_exact(pipeline.metadata, query, candidates, type_list, excluded, by_name=False)
        assembled = pipeline.assembler.assemble(
            first_units(candidates, context_limit), classification,
            structural_context=structural_banner(pipeline.metadata), budget=budget,
        )
        tokens_used = pipeline.assembler.estimate_tokens(assembled.context)
        strategy = "lexical" if found.legs == ("lexical",) and mode != "lexical" else mode
        trace = RetrievalTrace(
            classification=classification,
            strategy=strategy,
            candidate_count=len(found.units),
            ranked_count=len(candidates),
            tokens_used=tokens_used,
            elapsed_ms=round((time.perf_counter() - started) * 1000, 1),
            skipped_missing_metadata=assembled.skipped_missing_metadata,
            profile="code",
            legs=found.legs,
            query_kind=found.analysis.kind,
            fallback_from=mode if mode in ("hybrid", "vector") and "vector" not in found.legs else None,
        )
        return RetrievalResult(
            context=assembled.context,
            sources=assembled.sources,
            candidates=self._entries(pipeline.metadata, candidates, limit),
            classification=classification,
            strategy=strategy,
            tokens_used=tokens_used,
            budget=budget,
            trace=trace,
            applied_scope=_applied_scope(scope, trace, assembled),
            mode=self.mode,
            assembled_tokens=assembled.tokens_used,
            warnings=found.warnings,
        )

    def localize(self, query: object, *, budget: int = DEFAULT_BUDGET, limit: int = DEFAULT_LIMIT) -> Localized:
        """Issue → code localisation (woods/retrieval/localize.py) for an issue, a log or a stack
        trace: its files and units with their evidence, and the same result shape as `retrieve`
        (the units in rank order, their assembled context) so every interface renders it alike."""
        from woods.retrieval.localize import localize

        text = validate_query(query)
        self._validate_options(budget, None, limit)
        started = time.perf_counter()
        pipeline = self._base_pipeline()
        engine = self._code_search()
        mode = "lexical" if self.mode == "lexical" or not self.has_vectors else "hybrid"
        legs: list[tuple[str, ...]] = []

        def search(text: str, depth: int) -> list[tuple[str, float]]:
            found = engine.search(text, mode=mode, limit=depth)
            legs.append(found.legs)
            return [(u.key, u.score) for u in found.units]

        graph = getattr(self._stores, "graph", None)
        weights = (self._code_config or CodeSearchConfig()).lexical_weights
        localization = localize(text, _Translated(self._raw_metadata, "metadata"),
                                None if graph is None else _Translated(graph, "graph"), search, limit=limit,
                                lexical_weights=weights)
        classification = self._classifier.classify(text[:2000])
        candidates = [
            Candidate(
                identifier=unit.key, score=unit.score, source="localize",
                metadata={"identifier": unit.identifier, "type": unit.type, "file_path": unit.file_path,
                          "line_start": unit.line_start, "line_end": unit.line_end},
                sources=("localize",),
            )
            for unit in localization.units
        ]
        assembled = pipeline.assembler.assemble(
            candidates, classification, structural_context=structural_banner(pipeline.metadata), budget=budget
        )
        tokens_used = pipeline.assembler.estimate_tokens(assembled.context)
        trace = RetrievalTrace(
            classification=classification, strategy="localize", candidate_count=len(localization.units),
            ranked_count=len(candidates), tokens_used=tokens_used,
            elapsed_ms=round((time.perf_counter() - started) * 1000, 1),
            skipped_missing_metadata=assembled.skipped_missing_metadata, profile="code",
            legs=legs[0] if legs else (), query_kind="issue",
        )
        result = RetrievalResult(
            context=assembled.context, sources=assembled.sources,
            candidates=self._entries(pipeline.metadata, candidates, len(candidates)),
            classification=classification, strategy="localize", tokens_used=tokens_used, budget=budget,
            trace=trace, mode=self.mode, assembled_tokens=assembled.tokens_used,
        )
        return Localized(result, localization)

    def _dense_store(self) -> DenseStore | None:
        """The vector store, or None when this generation has none yet (lexical answers then)."""
        if not self.has_vectors:
            return None
        vectors = getattr(self._stores, "vectors", None)
        return None if vectors is None else _Translated(vectors, "vector")

    def _retrieve_lexical(
        self,
        query: str,
        classification: Classification,
        budget: int,
        type_list: tuple[str, ...],
        excluded: tuple[str, ...],
        scope: Scope | None,
        limit: int,
        started: float,
        context_limit: int | None = None,
    ) -> RetrievalResult:
        index = self._lexical_index()
        execution = index.execute(
            query, types=type_list or None, exclude_types=excluded, keys=scope.keys if scope is not None else None
        )
        assembled = LexicalAssembler().assemble(first_units(execution.candidates, context_limit), budget)
        trace = RetrievalTrace(
            classification=classification,
            strategy="lexical",
            candidate_count=len(execution.candidates),
            ranked_count=len(execution.candidates),
            tokens_used=assembled.tokens_used,
            elapsed_ms=round((time.perf_counter() - started) * 1000, 1),
            skipped_missing_metadata=0,
        )
        return RetrievalResult(
            context=assembled.context,
            sources=assembled.sources,
            candidates=self._entries(None, list(execution.candidates), limit),
            classification=classification,
            strategy="lexical",
            tokens_used=assembled.tokens_used,
            budget=budget,
            trace=trace,
            applied_scope=_applied_scope(scope, trace, assembled),
            mode="lexical",
            assembled_tokens=assembled.tokens_used,
        )

    # -- type filtering --------------------------------------------------------------------
    def _promote_exact(
        self,
        metadata: MetadataStore,
        query: str,
        ranked: list[Candidate],
        type_list: tuple[str, ...],
        excluded: tuple[str, ...],
        by_name: bool = True,
    ) -> list[Candidate]:
        """Units the query names exactly lead the list (see woods.retrieval.exact); the ranked
        candidates follow without those units. Scores stay comparable: exact hits score 1.0,
        the ceiling of the ranker's weighted score (code search scores above it keep theirs)."""
        ceiling = max([1.0, *(c.score for c in ranked)])
        exact = [
            Candidate(identifier=str(r["id"]), score=ceiling, source="exact", metadata=r)
            for r in exact_matches(metadata, query, by_name=by_name)
        ]
        exact = self._filter_by_type(metadata, exact, type_list, excluded)
        if not exact:
            return ranked
        keys = {c.identifier for c in exact}
        return [*exact, *(c for c in ranked if strip_chunk(c.identifier) not in keys)]

    @staticmethod
    def _candidate_type(metadata: MetadataStore, candidate: Candidate) -> str:
        inline = candidate.metadata.get("type") if candidate.metadata else None
        if inline is not None:
            return str(inline)
        record = metadata.find(strip_chunk(candidate.identifier))
        value = record.get("type") if record else None
        return "" if value is None else str(value)

    def _filter_by_type(
        self,
        metadata: MetadataStore,
        candidates: Sequence[Candidate],
        type_list: tuple[str, ...],
        excluded: tuple[str, ...],
    ) -> list[Candidate]:
        if type_list:
            return [c for c in candidates if self._candidate_type(metadata, c) in type_list]
        return [c for c in candidates if self._candidate_type(metadata, c) not in excluded]

    def _within_type_fallback(
        self,
        pipeline: _Pipeline,
        query: str,
        classification: Classification,
        type_list: tuple[str, ...],
        excluded: tuple[str, ...],
    ) -> list[Candidate]:
        counts = pipeline.metadata.type_counts()
        if all(counts.get(t, 0) == 0 for t in type_list):
            return []
        fallback = pipeline.executor.execute(query, classification, type_filter=list(type_list), strategy="vector")
        ranked = pipeline.ranker.rank(fallback.candidates, classification)
        return self._filter_by_type(pipeline.metadata, ranked, type_list, excluded)

    def _type_rank_context(
        self,
        metadata: MetadataStore,
        ranked: Sequence[Candidate],
        type_list: tuple[str, ...],
        filtered: Sequence[Candidate],
        fallback_ran: bool,
    ) -> dict[str, TypeRankEntry]:
        counts = metadata.type_counts()
        ranked_types = [self._candidate_type(metadata, c) for c in ranked]
        filtered_types = {self._candidate_type(metadata, c) for c in filtered} if fallback_ran else set()
        context: dict[str, TypeRankEntry] = {}
        for unit_type in type_list:
            rank = ranked_types.index(unit_type) + 1 if unit_type in ranked_types else None
            total = counts.get(unit_type, 0)
            if rank is not None:
                source = "in_top_k"
            elif total == 0:
                source = "absent"
            elif unit_type in filtered_types:
                source = "within_type_fallback"
            else:
                source = "outside_top_k"
            context[unit_type] = TypeRankEntry(source, rank, len(ranked), total)
        return context

    # -- validation and presentation -------------------------------------------------------
    @staticmethod
    def _validate_options(budget: object, strategy: object, limit: object) -> None:
        if isinstance(budget, bool) or not isinstance(budget, int) or budget <= 0:
            raise InvalidOptionError(f"budget must be a positive integer, got {budget!r}")
        if isinstance(limit, bool) or not isinstance(limit, int) or limit <= 0:
            raise InvalidOptionError(f"limit must be a positive integer, got {limit!r}")
        if strategy is not None and strategy not in (*STRATEGIES, "lexical"):
            raise InvalidOptionError(
                f"unknown strategy {strategy!r} (expected one of {', '.join((*STRATEGIES, 'lexical'))})"
            )

    def _validate_types(self, values: Sequence[str] | None, name: str) -> tuple[str, ...]:
        if values is None:
            return ()
        if isinstance(values, str) or not isinstance(values, (list, tuple, set, frozenset)):
            raise InvalidTypeError(f"{name} must be a list of unit type names")
        present: dict[str, int] | None = None
        result: list[str] = []
        for value in values:
            if not isinstance(value, str) or not _TYPE_NAME.match(value):
                raise InvalidTypeError(f"{name}: {value!r} is not a unit type name")
            if value not in KNOWN_UNIT_TYPES:
                if present is None:
                    present = _Translated(self._raw_metadata, "metadata").type_counts()
                if value not in present:
                    from woods.suggest import unknown_type_message

                    raise InvalidTypeError(f"{name}: {unknown_type_message(value, present)}")
            if value not in result:
                result.append(value)
        return tuple(sorted(result)) if isinstance(values, (set, frozenset)) else tuple(result)

    def _entries(
        self, metadata: MetadataStore | None, candidates: Iterable[Candidate], limit: int
    ) -> tuple[RankedEntry, ...]:
        """The user-facing list: one entry per unit (its best-ranked chunk; the list is already in
        rank order), at most `limit`. Chunks collapse here exactly as the assembler collapses them."""
        entries: list[RankedEntry] = []
        seen: set[str] = set()
        for candidate in candidates:
            base = strip_chunk(candidate.identifier)
            if base in seen:
                continue
            seen.add(base)
            if len(entries) >= limit:
                break
            record: Record | None = dict(candidate.metadata) if candidate.metadata else None
            if (record is None or any(name not in record for name in _ENTRY_FIELDS)) and metadata is not None:
                record = metadata.find(strip_chunk(candidate.identifier)) or record
            identifier = (record or {}).get("identifier") or public_identifier(strip_chunk(candidate.identifier))
            unit_type = (record or {}).get("type")
            entries.append(
                RankedEntry(
                    identifier=str(identifier),
                    key=candidate.identifier,
                    type="" if unit_type is None else str(unit_type),
                    score=candidate.score,
                    source=candidate.source,
                    sources=candidate.found_by(),
                    matched_fields=candidate.matched_fields,
                    file_path=_optional_str((record or {}).get("file_path")),
                    line_start=_optional_int((record or {}).get("line_start")),
                    line_end=_optional_int((record or {}).get("line_end")),
                )
            )
        return tuple(entries)


def _optional_str(value: object) -> str | None:
    return None if value is None else str(value)


def _optional_int(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


class _LazyVectors:
    """Defers `stores.vectors` (which may load FAISS) until a vector search actually runs."""

    def __init__(self, stores: Any) -> None:
        self._stores = stores

    def __getattr__(self, attribute: str) -> Any:
        vectors = self._stores.vectors
        if vectors is None:
            raise InvalidOptionError("this index has no vector store")
        return getattr(vectors, attribute)


def structural_banner(metadata: MetadataStore) -> str | None:
    """`Codebase: N searchable entries (…)` or None for an empty store (#105). The parenthesis
    lists the structural types present (Rails models, controllers …); a codebase with none of them
    gets no parenthesis rather than an empty one."""
    total = metadata.count()
    if total == 0:
        return None
    counts = metadata.type_counts()
    parts = [f"{counts[t]} {t} entries" for t in STRUCTURAL_TYPES if counts.get(t, 0) > 0]
    listed = f" ({', '.join(parts)})" if parts else ""
    return (
        f"Codebase: {total} searchable entries{listed}. "
        "Entries include per-chunk rows for chunked units; see `structure` for canonical unit counts."
    )


_C = TypeVar("_C", bound=Candidate)


def first_units(candidates: Sequence[_C], limit: int | None) -> list[_C]:
    """The candidates of the first `limit` distinct units in rank order (a unit's chunks stay with
    it); all of them when `limit` is None."""
    if limit is None:
        return list(candidates)
    kept: list[_C] = []
    seen: set[str] = set()
    for candidate in candidates:
        unit = strip_chunk(candidate.identifier)
        if unit not in seen:
            if len(seen) >= limit:
                continue
            seen.add(unit)
        kept.append(candidate)
    return kept


def append_type_rank_table(context: str, type_rank_context: dict[str, TypeRankEntry]) -> str:
    lines = ["", "### Type rank context", "", TYPE_RANK_HEADER, TYPE_RANK_RULE]
    for unit_type, entry in type_rank_context.items():
        rank = "—" if entry.top_of_type_global_rank is None else str(entry.top_of_type_global_rank)
        total = "?" if entry.total_of_type is None else str(entry.total_of_type)
        lines.append(f"| {unit_type} | {entry.source} | {rank} | {entry.global_k} | {total} |")
    return context + "\n" + "\n".join(lines) + "\n"


def _applied_scope(scope: Scope | None, trace: RetrievalTrace, assembled: AssembledContext) -> AppliedScope | None:
    if scope is None:
        return None
    if not scope.keys:
        outcome = "empty_scope"
    elif trace.ranked_count == 0:
        outcome = "no_match"
    else:
        outcome = "matched"
    return AppliedScope(
        packages=scope.packages,
        source_paths=scope.source_paths,
        eligible_units=len(scope.keys),
        outcome=outcome,
        candidate_count=trace.candidate_count,
        returned_units=len(assembled.sources),
        globs=scope.files.globs if scope.files is not None else (),
        langs=scope.files.langs if scope.files is not None else (),
    )
