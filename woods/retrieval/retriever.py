"""Retriever: the whole retrieval pipeline behind one call, in either ranking profile.

validate → scope → classify → the profile's ranking → assemble → `RetrievalResult` with a trace.
Why one class: interfaces (CLI, MCP, Python API) must get the same answer for the same query; they
render the typed result and never re-run pipeline stages. The default profile, `code`, is code
search (woods/retrieval/code_search.py: a lexical and a vector leg fused and shaped by code
signals); `ruby` is the Ruby gem woods 2.0's pipeline, kept to parity in its own package
(woods/retrieval/ruby/). Guarantees: the query is validated before any work; only strategies that
need vectors create the embedder (keyword, graph, direct and lexical never touch it);
`test_mapping` is excluded unless `types` asks for it; store failures surface as StoreError naming
the store (woods/retrieval/guard.py).
"""

from __future__ import annotations

import dataclasses
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from woods.errors import InvalidOptionError, InvalidTypeError
from woods.lazy import Lazy
from woods.limits import DEFAULT_PROFILE, PROFILES
from woods.retrieval.assembler import DEFAULT_BUDGET, DEFAULT_CHARS_PER_TOKEN
from woods.retrieval.candidates import Candidate, Classification, RetrievalResult, RetrievalTrace
from woods.retrieval.code_search import CodeSearch, CodeSearchConfig, DenseStore
from woods.retrieval.guard import guarded, lazily
from woods.retrieval.results import (
    MAX_QUERY_BYTES,
    applied_scope,
    first_units,
    promote_exact,
    ranked_entries,
    structural_banner,
    validate_query,
)
from woods.retrieval.ruby.classifier import QueryClassifier, select_strategy
from woods.retrieval.ruby.executor import DEFAULT_LIMIT, STRATEGIES
from woods.retrieval.ruby.lexical import BM25FSnapshot
from woods.retrieval.ruby.pipeline import RubyPipeline, retrieve_lexical
from woods.retrieval.ruby.ranker import RRF_POLICIES
from woods.retrieval.scope import Scope, scope_requested
from woods.retrieval.subjects import LexicalSubjects
from woods.store.contracts import IndexMetadata, SearchableIndex, UnitSummary

if TYPE_CHECKING:
    from woods.embedding.provider import QueryEmbedder
    from woods.filters import FileFilter
    from woods.retrieval.localize import Localization

DEFAULT_EXCLUDE_TYPES = ("test_mapping",)  # ~33 % of a Rails index; lexically dominates real code
# Retrieval modes: semantic (vectors where the strategy asks for them) or lexical (no model at all).
MODES = ("semantic", "lexical")
# Strategies that need the vector store; on an index whose vectors are still being computed the
# Ruby profile answers them with keyword search (and says so).
VECTOR_STRATEGIES = ("vector", "hybrid")
NO_VECTORS_YET = "this index has no vectors yet (phase 2 of `woods index` has not finished)"
# Strategies the code profile answers with code search, and the code search strategy each maps to;
# graph and direct are structural lookups and keep the Ruby executor in every profile. `keyword` is
# the raw lexical leg (an ablation), `lexical` the lexical leg with every signal (what `--mode
# lexical` and an index without vectors answer).
CODE_SEARCH_STRATEGIES = {None: "hybrid", "hybrid": "hybrid", "vector": "vector", "keyword": "keyword", "lexical": "lexical"}

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


__all__ = [
    "CODE_SEARCH_STRATEGIES",
    "DEFAULT_EXCLUDE_TYPES",
    "KNOWN_UNIT_TYPES",
    "MAX_QUERY_BYTES",
    "MODES",
    "Localized",
    "Retriever",
    "first_units",
    "structural_banner",
    "validate_query",
]


@dataclass(frozen=True, slots=True)
class Localized:
    """A localisation (files, units, evidence) and the retrieval result that renders it."""

    result: RetrievalResult
    localization: Localization


class Retriever:
    """Answers queries against one set of stores (`SearchableIndex`: metadata, vectors, graph).

    `embedder_factory` is called at most once, on the first search that needs a query vector; pass
    None for an index without an embedder (vector strategies then raise InvalidOptionError).
    `promote_exact` puts the units a query names exactly first (woods/retrieval/exact.py).
    """

    def __init__(
        self,
        stores: SearchableIndex,
        embedder_factory: Callable[[], QueryEmbedder] | None = None,
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
        self._stores = stores
        self._metadata: IndexMetadata = guarded(stores.metadata, "metadata")
        self._chars_per_token = chars_per_token
        if rrf_policy not in RRF_POLICIES:
            raise InvalidOptionError(f"unknown RRF policy {rrf_policy!r} (expected unit or occurrence)")
        self._rrf_policy = rrf_policy
        self._embedder_factory = embedder_factory
        self._classifier = QueryClassifier()
        # Built on first use, once, even when threads of a shared handle ask at once (woods.lazy).
        self._embedder: Lazy[QueryEmbedder] = Lazy(self._make_embedder)
        self._pipeline: Lazy[RubyPipeline] = Lazy(self._make_base_pipeline)
        self._snapshot: Lazy[BM25FSnapshot] = Lazy(lambda: BM25FSnapshot(self._metadata))
        self._code_engine: Lazy[CodeSearch] = Lazy(self._make_code_search)
        # Beyond Ruby: a query that is exactly a name or a path puts those units first (exact.py).
        self.promote_exact = promote_exact

    # -- wiring ----------------------------------------------------------------------------
    def _make_embedder(self) -> QueryEmbedder:
        if self._embedder_factory is None:
            raise InvalidOptionError("no embedding provider is configured (use --mode lexical or keyword strategies)")
        return self._embedder_factory()

    def _embedder_once(self) -> QueryEmbedder:
        return self._embedder.get()

    def _make_base_pipeline(self) -> RubyPipeline:
        """The Ruby stages over the whole index. The vector store is opened on the first vector
        search (FAISS loads then); the code profile finds graph seeds and direct's fallback
        through the lexical index, the Ruby profile with the gem's substring scan."""
        vectors = lazily(lambda: self._stores.vectors, lambda: InvalidOptionError("this index has no vector store"))
        graph = self._stores.graph
        subjects = None
        if self.profile == "code":
            subjects = LexicalSubjects(self._metadata, (self._code_config or CodeSearchConfig()).lexical_weights)
        return RubyPipeline(
            self._metadata,
            guarded(vectors, "vector"),
            guarded(graph, "graph") if graph is not None else None,
            self._embedder_once if self._embedder_factory is not None else None,
            subjects=subjects,
            rrf_policy=self._rrf_policy,
            chars_per_token=self._chars_per_token,
        )

    def _base_pipeline(self) -> RubyPipeline:
        return self._pipeline.get()

    def _make_code_search(self) -> CodeSearch:
        return CodeSearch(
            self._metadata,
            self._dense_store,
            self._embedder_once if self._embedder_factory is not None and self.mode != "lexical" else None,
            self._code_config,
        )

    def _code_search(self) -> CodeSearch:
        """One engine per retriever: what it keeps between queries (file-path words) is kept."""
        return self._code_engine.get()

    @property
    def has_vectors(self) -> bool:
        """False while the index is lexical only (its vectors are still being computed): vector and
        hybrid searches then answer lexically with a warning, in every profile."""
        return self._stores.has_vectors

    def _dense_store(self) -> DenseStore | None:
        """The vector store, or None when this generation has none yet (lexical answers then)."""
        if not self.has_vectors:
            return None
        vectors = self._stores.vectors
        return None if vectors is None else guarded(vectors, "vector")

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
                catalogue=self._metadata,
                packages=packages,
                source_paths=path_prefixes,
                types=type_list,
                exclude_types=excluded,
                files=files,
            )
        classification = self._classifier.classify(text)

        if self.profile == "code" and (self.mode == "lexical" or strategy in CODE_SEARCH_STRATEGIES):
            searched = "lexical" if self.mode == "lexical" else CODE_SEARCH_STRATEGIES[strategy]
            return self._retrieve_code(
                pipeline, text, classification, budget, type_list, excluded, searched, strategy, scope, limit, started,
                context_limit,
            )
        return self._retrieve_ruby(
            pipeline, text, classification, budget, type_list, excluded, strategy, scope, limit, started, context_limit
        )

    def _retrieve_ruby(
        self,
        pipeline: RubyPipeline,
        text: str,
        classification: Classification,
        budget: int,
        type_list: tuple[str, ...],
        excluded: tuple[str, ...],
        strategy: str | None,
        scope: Scope | None,
        limit: int,
        started: float,
        context_limit: int | None,
    ) -> RetrievalResult:
        """The Ruby gem's pipeline (woods/retrieval/ruby/): its lexical mode, or its strategies —
        which the code profile also answers graph and direct with."""
        if self.mode == "lexical" or strategy == "lexical":
            return retrieve_lexical(
                self._snapshot.get(), text, classification, budget=budget, type_list=type_list, excluded=excluded,
                scope=scope, limit=limit, started=started, context_limit=context_limit,
            )
        if scope is not None:
            pipeline = pipeline.scoped(scope)
        warnings: tuple[str, ...] = ()
        chosen = strategy or select_strategy(classification)
        if chosen in VECTOR_STRATEGIES and not self.has_vectors:
            warnings = (f"{chosen} strategy skipped: {NO_VECTORS_YET}; answered with keyword search",)
            strategy = "keyword"
        result = pipeline.retrieve(
            text, classification, budget=budget, type_list=type_list, excluded=excluded, strategy=strategy,
            scope=scope, limit=limit, started=started, context_limit=context_limit,
            exact=self._metadata if self.promote_exact else None,
        )
        if warnings:
            result = dataclasses.replace(
                result, warnings=(*result.warnings, *warnings),
                trace=dataclasses.replace(result.trace, fallback_from=chosen),
            )
        return result

    def _retrieve_code(
        self,
        pipeline: RubyPipeline,
        query: str,
        classification: Classification,
        budget: int,
        type_list: tuple[str, ...],
        excluded: tuple[str, ...],
        searched: str,
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

        found = self._code_search().search(query, strategy=searched, limit=max(limit, DEFAULT_LIMIT), eligible=eligible)
        candidates = [
            Candidate(
                identifier=unit.key,
                score=round(unit.score, 6),
                source=searched,
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
            candidates = promote_exact(self._metadata, query, candidates, type_list, excluded, by_name=False)
        assembled = pipeline.assembler.assemble(
            first_units(candidates, context_limit), classification,
            structural_context=structural_banner(pipeline.metadata), budget=budget,
        )
        tokens_used = pipeline.assembler.estimate_tokens(assembled.context)
        strategy = "lexical" if found.legs == ("lexical",) and searched != "lexical" else searched
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
            fallback_from=searched if searched in ("hybrid", "vector") and "vector" not in found.legs else None,
        )
        return RetrievalResult(
            context=assembled.context,
            sources=assembled.sources,
            candidates=ranked_entries(pipeline.metadata, candidates, limit),
            classification=classification,
            strategy=strategy,
            tokens_used=tokens_used,
            budget=budget,
            trace=trace,
            applied_scope=applied_scope(scope, trace, assembled),
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
        searched = "lexical" if self.mode == "lexical" or not self.has_vectors else "hybrid"
        legs: list[tuple[str, ...]] = []

        def search(text: str, depth: int) -> list[tuple[str, float]]:
            found = engine.search(text, strategy=searched, limit=depth)
            legs.append(found.legs)
            return [(u.key, u.score) for u in found.units]

        graph = self._stores.graph
        weights = (self._code_config or CodeSearchConfig()).lexical_weights
        localization = localize(text, self._metadata, None if graph is None else guarded(graph, "graph"), search,
                                limit=limit, lexical_weights=weights)
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
            candidates=ranked_entries(pipeline.metadata, candidates, len(candidates)),
            classification=classification, strategy="localize", tokens_used=tokens_used, budget=budget,
            trace=trace, mode=self.mode, assembled_tokens=assembled.tokens_used,
        )
        return Localized(result, localization)

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
                    present = self._metadata.type_counts()
                if value not in present:
                    from woods.suggest import unknown_type_message

                    raise InvalidTypeError(f"{name}: {unknown_type_message(value, present)}")
            if value not in result:
                result.append(value)
        return tuple(sorted(result)) if isinstance(values, (set, frozenset)) else tuple(result)



