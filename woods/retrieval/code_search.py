"""Code search: the default ranking — a code-aware lexical leg and the MiniLM vector leg, fused,
then shaped by code signals (definitions, file names, test and vendored paths, file coherence).

Why not the Ruby pipeline: the Ruby gem routes a question by English keywords to one strategy and
scores keyword hits by substring matches; on real repositories both cost more than they add (a
"where is …" question goes to substring search, which ties on common words). This engine always
asks both legs, lets the query's *shape* set their weights (a bare `ClientSession` leans on words
and exact names, a description on meaning), and then applies signals measured on
`../shared/semble-dev` and the Redmine question set (`bench/`).

Guarantees: deterministic (every sort has a tie-break by key); reads only the stores it is given;
when the vector leg cannot run (no vectors yet, no embedder) it answers from the lexical leg and
says so in `CodeSearchResult.warnings`. Its `strategy` (the word the Ruby pipeline uses for how
candidates are found; "mode" is only ever semantic or lexical, the retrieval mode): "hybrid" is the
fused, signal-shaped ranking; "lexical" the lexical leg shaped by the same signals (what an index
without vectors, or `--mode lexical`, answers: no model at all); "vector" and "keyword" one leg's raw
ranking (the ablations).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, NamedTuple, Protocol

from woods.errors import WoodsError
from woods.paths import (
    BENCHMARK,
    BUILD,
    COMPAT,
    DOCS,
    EXAMPLE,
    FIXTURE,
    GENERATED,
    HIDDEN,
    MIGRATION,
    TEST,
    VENDORED,
    path_roles,
)
from woods.retrieval.query_analysis import NATURAL, PATH, QueryAnalysis, analyze
from woods.retrieval.signals import (
    CALLABLES,
    TYPE_DEFINITIONS,
    best_per_group,
    diversify,
    file_named_after,
    hub_shares,
    is_constructor,
    minmax,
    name_matcher,
    older_versions,
    path_words,
    role_factor,
    rrf,
    scaled_to_max,
    stem_key,
    word_heads,
    word_share,
)
from woods.store.contracts import (
    ChunkCatalogue,
    FileCatalogue,
    LexicalSearch,
    UnitCatalogue,
    UnitSummary,
    UnitVectorSearch,
)

if TYPE_CHECKING:
    import numpy as np

    from woods.embedding.provider import QueryEmbedder

# How code search finds its candidates (see the module docstring).
STRATEGIES = ("hybrid", "lexical", "vector", "keyword")
# File paths whose `_PathFacts` a CodeSearch keeps (a few hundred new ones per query at most):
# cleared when full, ~400 bytes each.
_PATH_FACTS_CACHE_SIZE = 65_536


class _PathFacts(NamedTuple):
    """What ranking reads off a file path whatever the query: computed once per path."""

    words: frozenset[str]  # `path_words`
    heads: frozenset[str]  # `word_heads` of `words`
    roles: tuple[str, ...]  # `path_roles`


class CodeSearchStore(LexicalSearch, UnitCatalogue, ChunkCatalogue, FileCatalogue, Protocol):
    """What code search reads from the metadata store (capabilities of `woods.store.contracts`)."""


# What the vector leg reads: best units by cosine, stored vectors by id.
DenseStore = UnitVectorSearch


@dataclass(frozen=True, slots=True)
class CodeSearchConfig:
    """Every weight of the code ranking, with the value chosen on data (see docs/ranking.md)."""

    # Units each leg contributes to the candidate pool (vector depth counts chunks). The vector leg
    # also scores every lexical candidate exactly (`_fill_cosines`), so its own depth matters less:
    # 50, 100 and 200 gave semble-dev NDCG@10 0.8740 / 0.8739 / 0.8737 and Redmine 0.784 at 100
    # against 0.781 at 200 (2026-12-01); 100 halves its share of a hybrid query's row reads.
    lexical_depth: int = 200
    vector_depth: int = 100
    # BM25 column weights: name, qualifier, path, doc (signature + comment), body.
    lexical_weights: tuple[float, ...] = (8.0, 2.0, 4.0, 3.0, 1.0)
    # Share of the semantic leg in the blend, by query kind (the rest is the lexical leg).
    alpha_natural: float = 0.5
    alpha_symbol: float = 0.3
    alpha_path: float = 0.2
    fusion: str = "blend"  # "blend" (normalised weighted sum) or "rrf"
    # The lexical leg is divided by its best score, but never by less than this: when every query
    # word is in most units (BM25's IDF floors at ~0, e.g. "SqlMapper" in Dapper), the leg carries no
    # information and must not outweigh the vectors. Informative BM25 scores are 1–30.
    lexical_floor: float = 1.0
    rrf_k: float = 60.0
    # A unit whose own name is a name the query gives: + boost × the best fused score.
    definition_boost: float = 1.0
    # … scaled down for names embedded in a sentence (the name may be incidental).
    embedded_name_scale: float = 0.5
    # For symbol queries, a type definition over a method of the same name, and a definition in
    # a file named after it (`client_session.py` for ClientSession) over one elsewhere.
    type_definition_bonus: float = 0.3
    stem_bonus: float = 0.5
    # Query words found in a file's stem or parent directory: + boost × share × best score. 0.4:
    # from 0.3, semble-dev 0.8849 → 0.8877, held-out arch 0.7426 → 0.7459, Redmine file NDCG@10
    # 0.787 → 0.788 and unit MRR@10 0.592 → 0.595 (at 0.5 semble-dev and arch rise further but
    # Redmine's unit MRR@10 falls to 0.587).
    path_match_boost: float = 0.4
    # A symbol query's file: units of a file named exactly after the symbol (`Channel.kt` for
    # `Channel`) gain this × the best score even when no unit there carries the name — the
    # one-type-per-file convention survives a declaration the parser could not read.
    symbol_file_boost: float = 0.3
    # Multipliers for files that are not library code, unless the query asks for that role.
    role_factors: Mapping[str, float] = field(
        default_factory=lambda: {
            TEST: 0.3, EXAMPLE: 0.3, FIXTURE: 0.3, VENDORED: 0.3, GENERATED: 0.5,
            COMPAT: 0.5, BENCHMARK: 0.4, DOCS: 0.6, MIGRATION: 0.5, HIDDEN: 0.5, BUILD: 0.5,
        }
    )
    # Documentation and configuration units for questions about code (and its inverse for
    # questions about documentation: "where is installation documented").
    document_factor: float = 0.6
    # Files with several good units: their best unit gains coherence × its file's share.
    coherence: float = 0.4
    # Files below an older versioned directory (`v3/` beside `v4/`), unless the question names it.
    older_version_factor: float = 0.6
    # Structural importance (PageRank percentile) as a small prior.
    pagerank_weight: float = 0.05
    # The n-th unit of one file beyond the first is multiplied by decay**(n-1).
    diversity_decay: float = 0.5
    # Questions in words name types without spelling them like code: a type definition named by a
    # capitalised word or by two adjacent words joined (`type adapter` → TypeAdapter) gains
    # soft_name_boost × the best score, a file whose stem is one soft_file_boost × it
    # (semble-dev with the static model: hybrid 0.861 → 0.874, --mode lexical 0.826 → 0.842, at
    # 0.3 / 0.3; halved to 0.15 / 0.15 once the hub signal carried part of the same evidence:
    # semble-dev 0.8833 → 0.8849, Redmine file NDCG@10 0.776 → 0.787, held-out arch 0.7421 → 0.7426).
    soft_name_boost: float = 0.15
    soft_file_boost: float = 0.15
    # For questions in words, a file linked (by resolved dependency edges, either way) with the
    # question's `hub_files` best files gains hub_boost × the best score × the share of their
    # scores it is linked with: the manager or main class that ties the parts together leads
    # (semble-dev architecture +0.01 on top of the soft names; 0 turns it off).
    hub_boost: float = 0.4
    hub_files: int = 10
    # … counting a leader that references the file (a contract the parts implement) at this share.
    hub_referenced: float = 0.75
    # For questions in words, a method scoring at least this share of its class leads the file
    # (Redmine questions: unit MRR@10 .539 at 0, .604 at 0.6, .623 at 0.4; files unchanged)
    # (0 turns it off).
    member_over_container: float = 0.4


@dataclass(frozen=True, slots=True)
class ScoredUnit:
    """One ranked unit with the evidence behind its score (for traces and ablations)."""

    key: str
    score: float
    summary: UnitSummary
    sources: tuple[str, ...]
    lexical: float = 0.0
    semantic: float = 0.0


@dataclass(frozen=True, slots=True)
class CodeSearchResult:
    """A ranked list, the legs that actually ran, and why any did not."""

    units: tuple[ScoredUnit, ...]
    analysis: QueryAnalysis
    legs: tuple[str, ...]
    warnings: tuple[str, ...] = ()


def usable_cpus() -> int:
    """CPUs this process may run on (its affinity mask where the OS has one)."""
    getter = getattr(os, "sched_getaffinity", None)
    return len(getter(0)) if getter is not None else (os.cpu_count() or 1)


_Lexical = tuple[dict[str, float], dict[str, list[int]]]


class _Side(threading.Thread):
    """One call run on its own thread beside the caller's work. `result()` waits for it and
    returns its value or raises its exception in the caller — nothing it does is lost."""

    def __init__(self, call: Callable[[QueryAnalysis], _Lexical], analysis: QueryAnalysis) -> None:
        super().__init__(name="woods-lexical-leg", daemon=True)
        self._call = call
        self._analysis = analysis
        self._value: _Lexical = ({}, {})
        self._error: BaseException | None = None
        self.start()

    def run(self) -> None:
        try:
            self._value = self._call(self._analysis)
        except BaseException as exc:  # handed to the caller by result()
            self._error = exc

    def result(self) -> _Lexical:
        self.join()
        if self._error is not None:
            raise self._error
        return self._value


class CodeSearch:
    """Runs both legs against one set of stores and ranks units for a query."""

    def __init__(
        self,
        metadata: CodeSearchStore,
        vectors: Callable[[], DenseStore | None],
        embedder: Callable[[], QueryEmbedder] | None,
        config: CodeSearchConfig | None = None,
    ) -> None:
        self._metadata = metadata
        self._vectors = vectors
        self._embedder = embedder
        self.config = config or CodeSearchConfig()
        # Hybrid runs its legs side by side only with a second usable core: on one, the extra
        # thread only adds GIL hand-offs (measured: hybrid p50 24 → 28 ms pinned to one core,
        # 27 → 21 ms on two).
        self._parallel_legs = usable_cpus() > 1
        # Per file path, kept across queries (the stores' files never change).
        self._path_facts_cache: dict[str, _PathFacts] = {}

    def _path_facts(self, path: str) -> _PathFacts:
        facts = self._path_facts_cache.get(path)
        if facts is None:
            if len(self._path_facts_cache) >= _PATH_FACTS_CACHE_SIZE:
                self._path_facts_cache.clear()
            words = path_words(path)
            facts = self._path_facts_cache[path] = _PathFacts(words, word_heads(words), path_roles(path))
        return facts

    # -- legs ------------------------------------------------------------------------------
    def _lexical(self, analysis: QueryAnalysis) -> dict[str, float]:
        hits = self._metadata.lexical_search(list(analysis.terms), self.config.lexical_depth, self.config.lexical_weights)
        return dict(hits)

    def _lexical_and_vector_ids(self, analysis: QueryAnalysis) -> _Lexical:
        """The lexical leg and the FAISS ids of its units' chunks: the vector leg scores every
        lexical hit exactly (`_fill_cosines`), and reading their ids here, beside the query
        encoder and the vector scan, takes that read off the caller's path."""
        lexical = self._lexical(analysis)
        ids = self._metadata.chunk_vector_ids(list(lexical))
        return lexical, {key: ids.get(key, []) for key in lexical}  # a unit without chunks: none to read

    def _dense(self) -> tuple[DenseStore | None, QueryEmbedder | None, str | None]:
        if self._embedder is None:
            return None, None, "no query embedder is configured for this index"
        try:
            store = self._vectors()
        except WoodsError as exc:
            return None, None, f"vector store unavailable ({exc})"
        if store is None:
            return None, None, "this index has no vectors yet (phase 2 of `woods index` has not finished)"
        return store, self._embedder(), None

    def _semantic(self, store: DenseStore, vector: np.ndarray) -> dict[str, float]:
        best: dict[str, float] = {}
        for key, score in store.search_units(vector, self.config.vector_depth):
            if score > best.get(key, -2.0):
                best[key] = score
        return best

    def _fill_cosines(
        self, store: DenseStore, vector: np.ndarray, keys: list[str], known: dict[str, float],
        vector_ids: Mapping[str, list[int]],
    ) -> None:
        """Exact cosine (best chunk) for pool units the vector leg did not return; chunk ids are
        taken from `vector_ids` where it has the unit, else read."""
        missing = [k for k in keys if k not in known]
        if not missing:
            return
        unread = [k for k in missing if k not in vector_ids]
        ids = {**vector_ids, **self._metadata.chunk_vector_ids(unread)} if unread else vector_ids
        flat = [(key, vid) for key in missing for vid in ids.get(key, [])]
        if not flat:
            return
        import numpy as np  # imported where a leg needs it: `woods --help` and status never load it

        matrix = store.reconstruct([vid for _key, vid in flat])
        scores = matrix @ np.asarray(vector, dtype=np.float32)
        for (key, _vid), score in zip(flat, scores, strict=True):
            if float(score) > known.get(key, -2.0):
                known[key] = float(score)

    # -- ranking ---------------------------------------------------------------------------
    def search(
        self,
        query: str,
        *,
        strategy: str = "hybrid",
        limit: int = 20,
        eligible: Callable[[UnitSummary], bool] | None = None,
    ) -> CodeSearchResult:
        if strategy not in STRATEGIES:
            raise ValueError(f"unknown code search strategy {strategy!r}")
        analysis = analyze(query)
        warnings: list[str] = []
        lexical: dict[str, float] = self._lexical(analysis) if strategy in ("lexical", "keyword") else {}
        semantic: dict[str, float] = {}
        legs: list[str] = []
        if strategy in ("hybrid", "lexical", "keyword"):
            legs.append("lexical")
        store: DenseStore | None = None
        vector: np.ndarray | None = None
        definitions: list[UnitSummary] | None = None
        known: dict[str, UnitSummary] = {}
        vector_ids: dict[str, list[int]] = {}  # chunk ids of lexical hits, read beside the vector leg
        if strategy in ("hybrid", "vector"):
            store, embedder, problem = self._dense()
            if store is not None and embedder is not None:
                import numpy as np

                # Hybrid: the lexical leg (SQLite) runs beside the dense one (the encoder and
                # FAISS): all three release the GIL, so a second core answers both at once.
                side = _Side(self._lexical_and_vector_ids, analysis) if strategy == "hybrid" and self._parallel_legs else None
                try:
                    vector = np.asarray(embedder.embed(analysis.text or query), dtype=np.float32)
                    semantic = self._semantic(store, vector)
                    if side is not None:  # while the lexical leg runs: what ranking needs of the rest
                        definitions = self._definitions(analysis)
                        known = self._metadata.unit_summaries([*semantic, *(d.key for d in definitions)])
                finally:
                    if side is not None:
                        lexical, vector_ids = side.result()
                if strategy == "hybrid" and side is None:
                    lexical = self._lexical(analysis)
                legs.append("vector")
            else:
                warnings.append(f"vector leg skipped: {problem}; answered from the lexical leg")
                lexical = self._lexical(analysis)
                if strategy == "vector":
                    legs.append("lexical")
        shaped = strategy in ("hybrid", "lexical")  # the signals apply; "vector" and "keyword" are raw legs
        if definitions is None:
            definitions = self._definitions(analysis) if shaped else []
        pool = list(dict.fromkeys([*lexical, *semantic, *(d.key for d in definitions)]))
        summaries = {**known, **self._metadata.unit_summaries([k for k in pool if k not in known])}
        if eligible is not None:
            summaries = {k: s for k, s in summaries.items() if eligible(s)}
        pool = [k for k in pool if k in summaries]
        found_by_vector = frozenset(semantic)
        if strategy == "hybrid" and store is not None and vector is not None:
            self._fill_cosines(store, vector, pool, semantic, vector_ids)
        if not shaped or len(legs) == 1:
            scores = (semantic if legs == ["vector"] else lexical)
            ranked = sorted(((k, scores.get(k, 0.0)) for k in pool), key=lambda kv: (-kv[1], kv[0]))
            units = tuple(
                ScoredUnit(k, s, summaries[k], tuple(legs), lexical.get(k, 0.0), semantic.get(k, 0.0))
                for k, s in ranked[:limit]
                if (k in lexical or k in semantic)
            )
            if shaped:  # the lexical leg alone still gets the code signals
                units = self._shape(analysis, dict(ranked), summaries, lexical, found_by_vector, semantic, limit)
            return CodeSearchResult(units, analysis, tuple(legs), tuple(warnings))
        fused = self._fuse(analysis, pool, lexical, semantic)
        units = self._shape(analysis, fused, summaries, lexical, found_by_vector, semantic, limit)
        return CodeSearchResult(units, analysis, tuple(legs), tuple(warnings))

    def _soft_names(
        self, analysis: QueryAnalysis, fused: dict[str, float], summaries: Mapping[str, UnitSummary]
    ) -> dict[str, float]:
        """`soft_name_boost` for type definitions a question names softly, `soft_file_boost` for
        files whose stem it names (see the config)."""
        names = frozenset(analysis.soft_names)
        if not names or not fused:
            return fused
        stems = frozenset(n.lower() for n in names)
        top = max(fused.values()) or 1.0
        by_name, by_file = self.config.soft_name_boost * top, self.config.soft_file_boost * top
        out = {}
        for key, score in fused.items():
            unit = summaries[key]
            if unit.type in TYPE_DEFINITIONS and unit.name in names:
                score += by_name
            if stem_key(unit.file_path) in stems:
                score += by_file
            out[key] = score
        return out

    def _hubs(self, fused: dict[str, float], summaries: Mapping[str, UnitSummary]) -> dict[str, float]:
        """`hub_boost` × each file's `hub_shares` among the question's best files."""
        if not self.config.hub_boost or len(fused) < 2:
            return fused
        best: dict[str, float] = {}
        for key, score in fused.items():
            path = summaries[key].file_path
            if score > best.get(path, float("-inf")):
                best[path] = score
        ordered = sorted(best, key=lambda f: (-best[f], f))
        shares = hub_shares(best, self._metadata.file_links(ordered), self.config.hub_files, self.config.hub_referenced)
        top = max(fused.values()) or 1.0
        boost = self.config.hub_boost * top
        return {k: s + boost * shares[summaries[k].file_path] for k, s in fused.items()}

    @staticmethod
    def _members_first(scores: dict[str, float], summaries: Mapping[str, UnitSummary], ratio: float) -> None:
        """A question about behaviour is answered by a method more often than by its class: when a
        file's best unit is a container and one of its own callables scores at least `ratio` of it,
        the callable takes the container's place (the container keeps the callable's score)."""
        best_of_file = best_per_group(scores, lambda k: summaries[k].file_path)
        callables_of_file: dict[str, list[UnitSummary]] = {}
        for k, u in summaries.items():
            if k in scores and u.type in CALLABLES and not is_constructor(u):
                callables_of_file.setdefault(u.file_path, []).append(u)
        for file_path, top in best_of_file.items():
            container = summaries[top]
            if container.type not in TYPE_DEFINITIONS:
                continue
            members = [
                u.key for u in callables_of_file.get(file_path, ())
                if container.line_start <= u.line_start and u.line_end <= container.line_end
            ]
            if not members:
                continue
            member = min(members, key=lambda k: (-scores[k], k))
            if scores[member] >= ratio * scores[top]:
                scores[member], scores[top] = scores[top], scores[member]

    def _definitions(self, analysis: QueryAnalysis) -> list[UnitSummary]:
        if not analysis.names:
            return []
        # `$Name` too: a JavaScript core or internal type a query names without its `$`.
        return self._metadata.units_named([*analysis.names, *(f"${name}" for name in analysis.names)])

    def _fuse(
        self, analysis: QueryAnalysis, pool: list[str], lexical: dict[str, float], semantic: dict[str, float]
    ) -> dict[str, float]:
        config = self.config
        if config.fusion == "rrf":
            by_lex = sorted((k for k in pool if k in lexical), key=lambda k: (-lexical[k], k))
            by_sem = sorted((k for k in pool if k in semantic), key=lambda k: (-semantic[k], k))
            fused = rrf([by_lex, by_sem], config.rrf_k)
            return {k: fused.get(k, 0.0) for k in pool}
        alpha = {NATURAL: config.alpha_natural, PATH: config.alpha_path}.get(analysis.kind, config.alpha_symbol)
        lex = scaled_to_max({k: lexical.get(k, 0.0) for k in pool}, floor=config.lexical_floor)
        sem = minmax({k: semantic[k] for k in pool if k in semantic})
        return {k: alpha * sem.get(k, 0.0) + (1.0 - alpha) * lex.get(k, 0.0) for k in pool}

    def _shape(
        self,
        analysis: QueryAnalysis,
        fused: dict[str, float],
        summaries: Mapping[str, UnitSummary],
        lexical: Mapping[str, float],
        found_by_vector: frozenset[str],
        semantic: Mapping[str, float],
        limit: int,
    ) -> tuple[ScoredUnit, ...]:
        config = self.config
        if not fused:
            return ()
        if analysis.kind == NATURAL:
            fused = self._soft_names(analysis, fused, summaries)
            fused = self._hubs(fused, summaries)
        top = max(fused.values()) or 1.0
        scores: dict[str, float] = {}
        terms = frozenset(analysis.terms)
        superseded = older_versions({u.file_path for u in summaries.values()}, analysis.words)
        per_file: dict[str, tuple[float, float, float]] = {}  # path → (role factor, term share, named after)
        match_name = name_matcher(analysis.names)
        natural, is_symbol, names, roles = analysis.kind == NATURAL, analysis.is_symbol, analysis.names, analysis.roles
        # What a definition's bonus adds for a type (a capitalised name) or a callable (a lower-case one).
        type_bonus = config.type_definition_bonus if is_symbol and names and names[0][:1].isupper() else 0.0
        callable_bonus = config.type_definition_bonus if is_symbol and names and names[0][:1].islower() else 0.0
        name_scale = 1.0 if is_symbol else config.embedded_name_scale
        boost_top, path_top = config.definition_boost * top, config.path_match_boost * top
        symbol_top, pagerank_top = config.symbol_file_boost * top, config.pagerank_weight * top
        document_factor = config.document_factor if DOCS not in roles else 1.0 / config.document_factor
        for key, base in fused.items():
            unit = summaries[key]
            file_path = unit.file_path
            facts = per_file.get(file_path)
            if facts is None:
                path = self._path_facts(file_path)
                facts = (
                    role_factor(path.roles, roles, config.role_factors),
                    word_share(path.words, terms, path.heads) if natural else 0.0,
                    file_named_after(file_path, names) if names else 0.0,
                )
                per_file[file_path] = facts
            role_weight, term_share, named_after = facts
            score = base
            match = match_name(unit.name)
            if match:
                bonus = 1.0
                if type_bonus and unit.type in TYPE_DEFINITIONS:
                    bonus += type_bonus
                if callable_bonus and unit.type in CALLABLES:
                    bonus += callable_bonus
                bonus += config.stem_bonus * named_after
                score += boost_top * match * name_scale * bonus
            score += path_top * term_share
            if is_symbol and named_after == 1.0:
                score += symbol_top
            score += pagerank_top * unit.pagerank_percentile
            score *= role_weight
            if file_path in superseded:
                score *= config.older_version_factor
            if unit.type == "document":  # demoted for code questions, preferred when docs are asked for
                score *= document_factor
            scores[key] = score
        if config.coherence:
            by_file: dict[str, list[float]] = {}
            for key, score in scores.items():
                by_file.setdefault(summaries[key].file_path, []).append(score)
            file_mass = {f: sum(sorted(v, reverse=True)[:3]) for f, v in by_file.items()}
            heaviest = max(file_mass.values()) or 1.0
            peak = max(scores.values()) or 1.0
            for file_path, key in best_per_group(scores, lambda k: summaries[k].file_path).items():
                scores[key] += config.coherence * peak * file_mass[file_path] / heaviest
        if config.member_over_container and natural:
            self._members_first(scores, summaries, config.member_over_container)
        ordered = sorted(scores, key=lambda k: (-scores[k], k))
        diversified = diversify([(k, summaries[k].file_path, scores[k]) for k in ordered], config.diversity_decay)
        return tuple(
            ScoredUnit(
                key,
                score,
                summaries[key],
                tuple(leg for leg, found in (("lexical", key in lexical), ("vector", key in found_by_vector)) if found)
                or ("definition",),
                lexical.get(key, 0.0),
                semantic.get(key, 0.0),
            )
            for key, score in diversified[:limit]
        )
