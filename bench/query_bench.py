"""Query bench: warm latency per retrieval strategy, next to the raw stores, resolve, MCP and a cold CLI.

Why: "is a query fast" depends on where it is asked. The same fixed query set, built from the
index itself, is timed in one run through every layer a caller can use — the in-process
`Retriever` per strategy (vector, keyword, graph, direct, hybrid, lexical, auto), the raw stores
underneath (one FTS5 BM25 query, one FAISS search with a precomputed vector, the query encoder
alone), `resolve` (cold with its name-index build, then warm), the `woods.Index` API, the MCP
server over stdio, and a cold `python -m woods search` — so every ratio compares numbers taken
under the same load on the same index.

    HF_HUB_OFFLINE=1 /tmp/venv/bin/python bench/query_bench.py --repo /tmp/bench/stdlib \
        --store /tmp/bench/stdlib-index [--embedder minilm|fake] [--queries 50] [--json]

`--store` is reused when it holds an index (its embedder must match `--embedder`), else built
from `--repo` first. "Warm" means the process is warm (stores open, encoder loaded, lazy indexes
built by a separate warm-up set) but every timed query is asked for the first time.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import random
import re
import sqlite3
import sys
import time
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

BENCH_DIR = Path(__file__).resolve().parent
REPO_ROOT = BENCH_DIR.parent
# The bench runs from a checkout (woods need not be installed): make the package importable.
for _path in (str(BENCH_DIR), str(REPO_ROOT)):
    if _path not in sys.path:
        sys.path.insert(0, _path)

from _common import emit_report, format_table, latency_summary, peak_rss_mib, percentile, run_child  # noqa: E402

BENCH_SCHEMA_VERSION = 1
DEFAULT_STORES = {"static": Path("/tmp/bench/stdlib-index-static"), "minilm": Path("/tmp/bench/stdlib-index"),
                  "fake": Path("/tmp/bench/stdlib-index-fake"), "shaped": Path("/tmp/bench/stdlib-index-shaped")}
DEFAULT_REPO = Path("/tmp/bench/stdlib")
# Fixed seed: the same index always yields the same query set, so runs are comparable.
QUERY_SEED = 20261130
# The warm-up set comes from another seed: timed queries are never repeats of warm-up ones.
WARMUP_SEED = 7
# 50 queries (10 per kind) gives the MCP comparison its >= 50 calls and a p95 from real samples.
DEFAULT_QUERIES = 50
# Strategies timed through the Retriever; None is "auto" (the classifier picks).
STRATEGIES: tuple[str | None, ...] = ("vector", "keyword", "graph", "direct", "hybrid", "lexical", None)
QUERY_KINDS = ("identifier", "description", "path", "who_calls", "all")
# What the CLI and the API ask for by default.
SEARCH_LIMIT = 10
# What the retriever fetches from each store for limit 10 (the raw-store baselines use the same).
RAW_QUERY_LIMIT = 20
# Cold runs: each is a fresh interpreter; 5 gives a usable p50 and an honest p95 cheaply.
DEFAULT_COLD_RUNS = 5
# Cold resolve samples (each clears the name-index cache and rebuilds it).
COLD_RESOLVE_RUNS = 5
# Test modules dominate the stdlib by count; queries drawn from them would not look like real use.
_TEST_PATH = re.compile(r"(^|/)(tests?|idle_test)(/|$)|(^|/)test_[^/]*\.py$")
_WORD = re.compile(r"[A-Za-z][A-Za-z']+")
# Description queries keep this many words of a docstring's first sentence (a typed question's size).
DESCRIPTION_WORDS = (4, 12)
# A first call slower than this is reported as a cold cost rather than mixed into warm numbers.
MCP_TIMEOUT_SECONDS = 300
# Pasted issue texts (issue 30's latency goal: a 4 KB text, p50 <= 100 ms on a 100k-chunk index):
# each text is cut to this many bytes. Half are tracebacks written from the index's own functions
# (frames that map to its files, as a real report against this code would), half the public
# samples of fixtures/evidence (other projects' traces and reports: their frames map nowhere, the
# prose is searched) repeated to the same size.
ISSUE_BYTES = 4096
DEFAULT_ISSUE_QUERIES = 30
EVIDENCE_SAMPLES = REPO_ROOT / "fixtures" / "evidence"


def loadavg() -> list[float]:
    return [round(v, 2) for v in os.getloadavg()]


_STARTED = time.perf_counter()


def note(message: str) -> None:
    """Progress on stderr (a full run takes minutes on a busy machine)."""
    sys.stderr.write(f"query_bench [{time.perf_counter() - _STARTED:7.1f}s load {loadavg()[0]}]: {message}\n")
    sys.stderr.flush()


def source_state() -> dict[str, Any]:
    """The woods commit measured and any uncommitted files under woods/ (numbers depend on both)."""
    import subprocess

    def git(*args: str) -> str:
        try:
            return subprocess.run(["git", *args], cwd=REPO_ROOT, capture_output=True, text=True, timeout=10).stdout.strip()
        except (OSError, subprocess.SubprocessError):
            return ""

    dirty = [line[3:] for line in git("status", "--porcelain", "--", "woods").splitlines() if line]
    return {"commit": git("rev-parse", "HEAD") or None, "dirty_woods_files": sorted(dirty)}


def _short(identifier: str) -> str:
    return re.split(r"::|[#.]", identifier)[-1]


def _docstring_words(record: dict[str, Any]) -> str | None:
    doc = record.get("docstring")
    if not isinstance(doc, str) or not doc.strip():
        return None
    first = re.split(r"(?<=[.!?])\s|\n\s*\n", doc.strip(), maxsplit=1)[0]
    words = _WORD.findall(first)
    if len(words) < DESCRIPTION_WORDS[0]:
        return None
    return " ".join(words[: DESCRIPTION_WORDS[1]]).lower()


def _name_words(record: dict[str, Any]) -> str | None:
    """A description from a member's own name and its owner's, for code without docstrings
    (`Issue#visible_custom_field_values` → "visible custom field values of issue")."""
    parts = re.split(r"::|[#.]", str(record.get("identifier") or ""))
    words = [w.lower() for part in parts[-2:] for w in re.findall(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])", part)]
    if len(words) < 3:
        return None
    owner = [w.lower() for w in re.findall(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])", parts[-2])] if len(parts) > 1 else []
    own = words[len(owner):]
    return " ".join(own + (["of", *owner] if owner else []))


def _dependents(record: dict[str, Any], via: str | None = None) -> list[str]:
    """Identifiers of units depending on `record` (the extractor's back-links), optionally by edge kind."""
    value = record.get("dependents") or []
    out = []
    for item in value if isinstance(value, list) else []:
        if isinstance(item, dict) and item.get("identifier") and (via is None or item.get("via") in (None, via)):
            out.append(str(item["identifier"]))
    return out


class QueryPool:
    """Candidate material for every query kind, drawn once from the index in a deterministic order."""

    def __init__(self, records: Sequence[dict[str, Any]], files: Sequence[str]) -> None:
        real = sorted(
            (r for r in records if not _TEST_PATH.search(str(r.get("file_path") or ""))),
            key=lambda r: (str(r.get("identifier")), str(r.get("type")), str(r.get("file_path"))),
        )
        self.named = [r for r in real if r.get("type") in ("class", "function")]
        self.members = [r for r in real if r.get("type") in ("function", "method")]
        self.described = [(r, d) for r in real if (d := _docstring_words(r))] or [
            (r, d) for r in self.members if (d := _name_words(r))
        ]
        self.called = [r for r in self.members if len(_dependents(r)) >= 2]
        self.classes = [r for r in real if r.get("type") == "class"]
        self.subclassed = [r for r in self.classes if len(_dependents(r)) >= 2]
        self.files = sorted(f for f in files if not _TEST_PATH.search(f))
        self.packages = sorted({f.split("/", 1)[0] for f in self.files if "/" in f})

    def query(self, kind: str, rng: random.Random, ordinal: int) -> str:
        if kind == "identifier":
            record = rng.choice(self.named)
            # Alternate the qualified identifier and the bare name people type.
            return str(record["identifier"]) if ordinal % 2 == 0 else _short(str(record["identifier"]))
        if kind == "description":
            return rng.choice(self.described)[1]
        if kind == "path":
            return rng.choice(self.files)
        if kind == "who_calls":
            return f"who calls {_short(str(rng.choice(self.called or self.members)['identifier']))}"
        if kind == "all":
            if ordinal % 2 == 0 and self.subclassed:
                return f"all subclasses of {_short(str(rng.choice(self.subclassed)['identifier']))}"
            package = rng.choice(self.packages) if self.packages else "the"
            unit_type = ("classes", "functions")[(ordinal // 2) % 2]
            return f"all {unit_type} in the {package} package"
        raise ValueError(kind)

    def traceback(self, rng: random.Random) -> str:
        """A bug report with a Python traceback through three to six of the index's functions,
        innermost last, an error line, and the docstrings of the functions as the report's prose."""
        frames = [rng.choice(self.members) for _ in range(rng.randint(3, 6))]
        lines = ["Calling this crashes since the last upgrade; steps to reproduce below.", "",
                 "Traceback (most recent call last):"]
        for record in frames:
            start, end = int(record.get("line_start") or 1), int(record.get("line_end") or 1)
            lines.append(f'  File "/usr/lib/python3.11/{record["file_path"]}", line {rng.randint(start, max(start, end))}, '
                         f"in {_short(str(record['identifier']))}")
            lines.append("    result = handler(value)")
        lines.append(f"ValueError: invalid state in {_short(str(frames[-1]['identifier']))}: expected 3 items, got 0")
        prose = [d for r in frames if (d := _docstring_words(r))] or ["the call fails"]
        text = "\n".join(lines) + "\n\n"
        while len(text.encode()) < ISSUE_BYTES:
            text += "I expected that " + " ".join(prose) + ". " + rng.choice(self.described)[1] + ".\n"
        return text

    def ref(self, rng: random.Random, ordinal: int) -> str:
        """A reference of the kinds `resolve` sees: bare name, Class.member, full id, path:line, loose case."""
        form = ordinal % 5
        if form == 0:
            return _short(str(rng.choice(self.named)["identifier"]))
        if form == 1:
            record = rng.choice(self.members)
            parts = re.split(r"::|[#.]", str(record["identifier"]))
            return ".".join(parts[-2:])
        if form == 2:
            return str(rng.choice(self.named)["identifier"])
        if form == 3:
            record = rng.choice(self.members)
            line = int(record.get("line_start") or 1)
            return f"{record['file_path']}:{line + 1}"
        name = _short(str(rng.choice(self.named)["identifier"]))
        # snake_case ↔ CamelCase: what the normalised stage is for.
        if "_" in name.strip("_"):
            return "".join(part.capitalize() for part in name.split("_") if part)
        return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name).lower()


def build_query_set(pool: QueryPool, count: int, seed: int) -> list[dict[str, str]]:
    rng = random.Random(seed)
    queries = []
    for i in range(count):
        kind = QUERY_KINDS[i % len(QUERY_KINDS)]
        queries.append({"kind": kind, "query": pool.query(kind, rng, i // len(QUERY_KINDS))})
    return queries


def cut_to_bytes(text: str, limit: int) -> str:
    return text.encode("utf-8")[:limit].decode("utf-8", "ignore")


def build_issue_set(pool: QueryPool, count: int, seed: int) -> list[dict[str, str]]:
    """`count` issue texts of ISSUE_BYTES: tracebacks through the index's code and the fixture samples."""
    rng = random.Random(seed)
    samples = sorted(EVIDENCE_SAMPLES.glob("*.sample"))
    issues = []
    for ordinal in range(count):
        if ordinal % 2 == 0 or not samples:
            issues.append({"kind": "traceback", "query": cut_to_bytes(pool.traceback(rng), ISSUE_BYTES)})
        else:
            sample = samples[rng.randrange(len(samples))]
            text = sample.read_text(encoding="utf-8", errors="replace")
            issues.append({"kind": "sample:" + sample.stem,
                           "query": cut_to_bytes((text + "\n") * (ISSUE_BYTES // max(len(text), 1) + 1), ISSUE_BYTES)})
    return issues


def build_name_refs(pool: QueryPool, count: int, seed: int) -> list[str]:
    """Bare and loosely spelled names: refs that only the name index can answer (cold resolve)."""
    rng = random.Random(seed)
    return [pool.ref(rng, 0 if i % 2 == 0 else 4) for i in range(count)]


def build_ref_set(pool: QueryPool, count: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    return [pool.ref(rng, i) for i in range(count)]


# -- the index -----------------------------------------------------------------------------------

EMBEDDERS = ("static", "minilm", "fake", "shaped")
# Marks the synthetic-vector variant in its fingerprint, so a real MiniLM run never reuses its vectors.
SHAPED_FINGERPRINT_SUFFIX = ":synthetic-vectors"


def index_provider_for(name: str) -> Any:
    """The provider `name` indexes with. Beyond woods' own minilm and fake: `shaped`.

    `shaped` is MiniLM for everything but the model: the real tokenizer, token limit, chunking,
    name and dimension (so queries use the numpy MiniLM encoder and the index has the real chunk
    count), with deterministic synthetic unit vectors instead of the model's output. It measures
    every cost of a MiniLM index except the model's compute — which, on 2 cores, is hours for the
    stdlib — and says nothing about relevance. Its fingerprint differs from the real model's.
    """
    if name != "shaped":
        from woods.embedding.select import index_provider

        return index_provider(name)
    import hashlib

    import numpy as np

    from woods.embedding.sentence import SentenceTransformerProvider

    class ShapedMiniLMProvider(SentenceTransformerProvider):
        @property
        def weights_fingerprint(self) -> str:
            return str(super().weights_fingerprint) + SHAPED_FINGERPRINT_SUFFIX

        def _encode(self, texts: list[str]) -> Any:
            rows = np.empty((len(texts), self.dimension), dtype=np.float32)
            for i, text in enumerate(texts):
                seed = int.from_bytes(hashlib.sha256(text.encode("utf-8", "surrogatepass")).digest()[:8], "little")
                row = np.random.default_rng(seed).standard_normal(self.dimension).astype(np.float32)
                rows[i] = row / np.linalg.norm(row)
            return rows

    return ShapedMiniLMProvider()


def skip_overlong_units() -> list[str]:
    """Stopgap for a woods bug: a unit whose embedding prefix alone exceeds the model's token limit
    makes `woods.chunking.chunk_unit` raise InputTooLongError, which aborts the whole index (the
    stdlib has such units: long qualified dependency lists). After this call such a unit is indexed
    without vectors; the returned list collects their identifiers. Benches that use it say so."""
    import woods.chunking as chunking
    from woods.embedding.provider import InputTooLongError

    original = chunking.chunk_unit
    skipped: list[str] = []

    def chunk_unit(unit: Any, *args: Any, **kwargs: Any) -> Any:
        try:
            return original(unit, *args, **kwargs)
        except InputTooLongError:
            skipped.append(unit.identifier)
            return []

    chunking.chunk_unit = chunk_unit
    return skipped


def embedder_matches(embedder: dict[str, Any], wanted: str) -> bool:
    name = str(embedder.get("name", "")).lower()
    synthetic = SHAPED_FINGERPRINT_SUFFIX in str(embedder.get("fingerprint", ""))
    if wanted == "fake":
        return "fake" in name
    if wanted == "static":
        return "static" in name
    return "minilm" in name and synthetic == (wanted == "shaped")


def ensure_index(repo: Path, store: Path, embedder: str, skip_overlong: bool = False) -> dict[str, Any]:
    """Open `store` if it holds an index, else build it from `repo`; describe what was used."""
    from woods.store.index import IndexStores

    built: dict[str, Any] | None = None
    complete = False
    if (store / "CURRENT").exists():
        with IndexStores.open(store) as existing:
            complete = existing.has_vectors
        if not complete:  # phase 2 was interrupted: indexing again resumes it
            sys.stderr.write(f"query_bench: {store} has no vectors yet; completing its index …\n")
    else:
        sys.stderr.write(f"query_bench: no index at {store}; building it from {repo} ({embedder}) …\n")
    if not complete:
        from woods.indexing import index_repository

        skipped = skip_overlong_units() if skip_overlong else None
        started = time.perf_counter()
        summary = index_repository(repo, store, lambda: index_provider_for(embedder))
        built = {"wall_seconds": round(time.perf_counter() - started, 1), "phase_seconds": summary.seconds,
                 "loadavg_after": loadavg(), "skipped_overlong_units": skipped}
    with IndexStores.open(store) as stores:
        if not embedder_matches(stores.manifest.embedder, embedder):
            raise SystemExit(f"query_bench: {store} was embedded with {stores.manifest.embedder}, not {embedder}; "
                             "pass another --store")
        return {
            "store": str(store),
            "generation": stores.generation.name,
            "embedder": stores.manifest.embedder,
            "counts": stores.manifest.counts,
            "created_at": stores.manifest.data.get("created_at"),
            "built_by_this_run": built,
        }


# -- timing helpers ------------------------------------------------------------------------------


def timed(call: Callable[[], Any]) -> tuple[float, Any, str | None]:
    started = time.perf_counter()
    try:
        value = call()
        error = None
    except Exception as exc:  # a failing query is reported, never fatal to the bench
        value, error = None, f"{type(exc).__name__}: {exc}"
    return time.perf_counter() - started, value, error


def measure(calls: Sequence[Callable[[], Any]]) -> tuple[dict[str, Any], list[Any]]:
    seconds, values, errors = [], [], []
    for call in calls:
        elapsed, value, error = timed(call)
        seconds.append(elapsed)
        values.append(value)
        if error:
            errors.append(error)
    summary = latency_summary(seconds)
    summary["seconds"] = [round(s, 5) for s in seconds]  # per call, in query order (kept in the JSON)
    summary["errors"] = len(errors)
    if errors:
        summary["error_examples"] = sorted(set(errors))[:3]
    return summary, values


def by_kind_p50(queries: list[dict[str, str]], seconds: list[float]) -> dict[str, float | None]:
    kinds: dict[str, list[float]] = {}
    for query, elapsed in zip(queries, seconds, strict=True):
        kinds.setdefault(query["kind"], []).append(elapsed)
    return {kind: round((percentile(values, 50) or 0) * 1000, 1) for kind, values in kinds.items()}


# -- in-process measurements ---------------------------------------------------------------------


def bench_in_process(store: Path, queries: list[dict[str, str]], warmup: list[dict[str, str]],
                     refs: list[str], warm_refs: list[str], cold_refs: list[str],
                     strategy_list: Sequence[str | None] = STRATEGIES, profile: str = "code") -> dict[str, Any]:
    import woods.resolve as resolve_module
    from woods.embedding.select import query_embedder
    from woods.retrieval.code_search import CodeSearchConfig
    from woods.retrieval.retriever import Retriever
    from woods.store.index import METADATA_FILE, IndexStores, read_current
    from woods.store.lexical_query import match_expression
    from woods.tokens import query_terms

    out: dict[str, Any] = {"loadavg_start": loadavg()}
    texts = [q["query"] for q in queries]
    with IndexStores.open(store) as stores:
        started = time.perf_counter()
        embedder = query_embedder(stores.manifest.embedder)
        out["encoder"] = {"class": type(embedder).__name__, "load_seconds": round(time.perf_counter() - started, 3)}
        started = time.perf_counter()
        _ = stores.vectors.count()
        out["faiss_open_seconds"] = round(time.perf_counter() - started, 3)
        retriever = Retriever(stores, lambda: embedder, profile=profile)
        out["profile"] = profile

        strategies: dict[str, Any] = {}
        for strategy in strategy_list:
            label = strategy or "auto"
            note(f"retrieve --strategy {label}")
            first, _, first_error = timed(lambda s=strategy: retriever.retrieve(warmup[0]["query"], strategy=s))
            for item in warmup[1:]:
                timed(lambda s=strategy, q=item["query"]: retriever.retrieve(q, strategy=s))
            summary, results = measure([lambda s=strategy, q=q: retriever.retrieve(q, strategy=s) for q in texts])
            summary["first_call_ms"] = round(first * 1000, 1)
            if first_error:
                summary["first_call_error"] = first_error
            summary["empty_results"] = sum(1 for r in results if r is not None and not r.candidates)
            if strategy is None:
                summary["picked"] = dict(sorted(Counter(r.strategy for r in results if r is not None).items()))
            summary["by_kind_p50_ms"] = by_kind_p50(queries, summary["seconds"])
            strategies[label] = summary
        out["retriever"] = strategies

        note("raw FTS5, query embedding, raw FAISS, resolve")
        # Raw stores on the same queries, after their own warm-up. Raw FTS5 is one plain BM25
        # query with every term of the query (the code profile's terms and column weights) on its
        # own read-only connection; `lexical_search` is woods' call over it (it leaves out terms
        # in half the rows, whose IDF BM25 floors). Raw FAISS is one flat float32 scan of the
        # stored index; `vectors.search` is woods' call (the 8-bit first scan from 32,768
        # vectors on, rescored exactly, and the ids' metadata).
        weights = CodeSearchConfig().lexical_weights
        columns = ", ".join(repr(float(w)) for w in weights)
        generation = read_current(store)
        raw_db = sqlite3.connect(f"file:{(generation / METADATA_FILE).as_posix()}?mode=ro&immutable=1", uri=True)
        raw_sql = (f"SELECT rowid, -bm25(lexical, {columns}) FROM lexical WHERE lexical MATCH ? "
                   f"ORDER BY bm25(lexical, {columns}) LIMIT {RAW_QUERY_LIMIT}")

        def raw_fts5(query: str) -> Any:
            expression = match_expression(query_terms(query))
            return raw_db.execute(raw_sql, (expression,)).fetchall() if expression else []

        def woods_lexical(query: str) -> Any:
            return stores.metadata.lexical_search(query_terms(query), RAW_QUERY_LIMIT, weights)

        for item in warmup:
            raw_fts5(item["query"])
            woods_lexical(item["query"])
        out["raw_fts5"], _ = measure([lambda q=q: raw_fts5(q) for q in texts])
        out["lexical_search"], _ = measure([lambda q=q: woods_lexical(q) for q in texts])
        raw_db.close()
        for item in warmup:
            embedder.embed(item["query"])
        out["query_embed"], vectors = measure([lambda q=q: embedder.embed(q) for q in texts])
        vectors = [v for v in vectors if v is not None]
        flat = stores.vectors._index  # the stored IndexIDMap2(IndexFlatIP), searched as FAISS alone

        import faiss

        def raw_faiss(vector: Any) -> Any:
            # One thread, as woods searches: FAISS's OpenMP team costs more than it saves on one query.
            threads = faiss.omp_get_max_threads()
            faiss.omp_set_num_threads(1)
            try:
                return flat.search(vector.reshape(1, -1).astype("float32"), RAW_QUERY_LIMIT)
            finally:
                faiss.omp_set_num_threads(threads)

        for vector in vectors[:3]:
            raw_faiss(vector)
            stores.vectors.search(vector, RAW_QUERY_LIMIT)
        out["raw_faiss"], _ = measure([lambda v=v: raw_faiss(v) for v in vectors])
        out["vectors_search"], _ = measure([lambda v=v: stores.vectors.search(v, RAW_QUERY_LIMIT) for v in vectors])

        # resolve: cold = no name index handed in (the call builds one when a name stage needs it),
        # warm = the name index a long-lived handle keeps per generation, built once beforehand.
        searcher = resolve_module.make_searcher(stores, lambda: embedder)
        cold, builds = [], []
        for ref in cold_refs:
            elapsed, _, _ = timed(lambda r=ref: resolve_module.resolve(stores, r, searcher=searcher))
            cold.append(elapsed)
            builds.append(resolve_module.name_table_for(stores).build_seconds)
        out["resolve_cold"] = latency_summary(cold)
        out["resolve_cold"]["refs"] = cold_refs
        out["resolve_cold"]["name_index_build_ms_p50"] = round((percentile(builds, 50) or 0) * 1000, 1)
        names = resolve_module.name_table_for(stores)
        for ref in warm_refs:
            timed(lambda r=ref: resolve_module.resolve(stores, r, searcher=searcher, names=names))
        out["resolve_warm"], outcomes = measure(
            [lambda r=r: resolve_module.resolve(stores, r, searcher=searcher, names=names) for r in refs]
        )
        out["resolve_warm"]["statuses"] = dict(sorted(Counter(str(o.status) for o in outcomes if o).items()))
        out["resolve_warm"]["methods"] = dict(sorted(Counter(str(o.method) for o in outcomes if o).items()))
    out["loadavg_end"] = loadavg()
    return out


def bench_api(store: Path, queries: list[dict[str, str]], warmup: list[dict[str, str]],
              refs: list[str], warm_refs: list[str], issues: Sequence[dict[str, str]] = (),
              warm_issues: Sequence[dict[str, str]] = ()) -> dict[str, Any]:
    """`woods.Index` (what the MCP server wraps): search and resolve, same calls as the MCP leg;
    with `issues`, pasted issue texts through `search` (read as issues: localised) and `localize`."""
    from woods.api import Index

    out: dict[str, Any] = {"loadavg_start": loadavg()}
    started = time.perf_counter()
    with Index.open(store=store) as index:
        out["open_ms"] = round((time.perf_counter() - started) * 1000, 1)
        first, _, _ = timed(lambda: index.search(warmup[0]["query"], limit=SEARCH_LIMIT))
        out["first_search_ms"] = round(first * 1000, 1)
        for item in warmup[1:]:
            timed(lambda q=item["query"]: index.search(q, limit=SEARCH_LIMIT))
        for ref in warm_refs:
            timed(lambda r=ref: index.resolve(r))
        out["search"], _ = measure([lambda q=q["query"]: index.search(q, limit=SEARCH_LIMIT) for q in queries])
        out["resolve"], _ = measure([lambda r=r: index.resolve(r) for r in refs])
        if issues:
            for item in warm_issues:
                timed(lambda q=item["query"]: index.localize(q, limit=SEARCH_LIMIT))
            out["issue_search"], found = measure(
                [lambda q=q["query"]: index.search(q, limit=SEARCH_LIMIT) for q in issues])
            out["issue_search"]["localised"] = sum(1 for r in found if r is not None and r.localization is not None)
            out["issue_localize"], _ = measure([lambda q=q["query"]: index.localize(q, limit=SEARCH_LIMIT) for q in issues])
            out["issue_bytes"] = [len(q["query"].encode()) for q in issues]
    out["loadavg_end"] = loadavg()
    return out


# -- MCP over stdio ------------------------------------------------------------------------------


def bench_mcp(store: Path, queries: list[dict[str, str]], warmup: list[dict[str, str]],
              refs: list[str], warm_refs: list[str]) -> dict[str, Any]:
    """One `python -m woods.mcp_server --store DIR` for the whole leg, warmed, then timed call by call."""
    import anyio
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    env = {"PYTHONPATH": str(REPO_ROOT), "HF_HUB_OFFLINE": "1", "PATH": os.environ.get("PATH", "")}
    params = StdioServerParameters(command=sys.executable, args=["-m", "woods.mcp_server", "--store", str(store)],
                                   env=env, cwd=str(REPO_ROOT))
    out: dict[str, Any] = {"loadavg_start": loadavg()}

    async def call(client: Any, tool: str, arguments: dict[str, Any]) -> tuple[float, bool]:
        started = time.perf_counter()
        result = await client.call_tool(tool, arguments)
        return time.perf_counter() - started, bool(result.is_error)

    async def run() -> None:
        started = time.perf_counter()
        with anyio.fail_after(MCP_TIMEOUT_SECONDS):
            async with Client(params, read_timeout_seconds=MCP_TIMEOUT_SECONDS) as client:
                out["connect_ms"] = round((time.perf_counter() - started) * 1000, 1)
                first, _ = await call(client, "search", {"query": warmup[0]["query"], "limit": SEARCH_LIMIT})
                out["first_search_ms"] = round(first * 1000, 1)
                for item in warmup[1:]:
                    await call(client, "search", {"query": item["query"], "limit": SEARCH_LIMIT})
                for ref in warm_refs:
                    await call(client, "resolve", {"ref": ref})
                for tool, arguments in (
                    ("search", [{"query": q["query"], "limit": SEARCH_LIMIT} for q in queries]),
                    ("resolve", [{"ref": r} for r in refs]),
                ):
                    seconds, errors = [], 0
                    for args in arguments:
                        elapsed, is_error = await call(client, tool, args)
                        seconds.append(elapsed)
                        errors += is_error
                    out[tool] = {**latency_summary(seconds), "errors": errors}

    anyio.run(run)
    out["loadavg_end"] = loadavg()
    return out


# -- cold CLI ------------------------------------------------------------------------------------


def bench_cold_cli(store: Path, cases: dict[str, tuple[str, str]], runs: int) -> dict[str, Any]:
    """`python -m woods search QUERY --store DIR --json [--strategy S]` in fresh processes."""
    env = {"PYTHONPATH": str(REPO_ROOT), "HF_HUB_OFFLINE": "1"}
    out: dict[str, Any] = {"loadavg_start": loadavg()}
    for label, (query, strategy) in cases.items():
        argv = [sys.executable, "-m", "woods", "search", query, "--store", str(store), "--json", "--strategy", strategy]
        seconds, rss, picked, errors = [], [], Counter(), []
        for _ in range(runs):
            child = run_child(argv, env=env, cwd=REPO_ROOT, timeout=120)
            seconds.append(child.wall_seconds)
            rss.append(child.peak_rss_mib)
            if child.returncode != 0:
                errors.append(child.stderr.strip()[-300:])
                continue
            try:
                picked[json.loads(child.stdout).get("strategy")] += 1
            except ValueError:
                errors.append("stdout is not JSON")
        out[label] = {**latency_summary(seconds), "query": query, "strategy": strategy,
                      "picked": dict(picked), "peak_rss_mib": max(rss) if rss else None, "errors": errors}
    out["loadavg_end"] = loadavg()
    return out


# -- report --------------------------------------------------------------------------------------


def _p(summary: dict[str, Any] | None) -> tuple[Any, Any]:
    if not summary:
        return None, None
    return summary.get("p50_ms"), summary.get("p95_ms")


# Read size when bringing a generation's files into the OS page cache (`prewarm`).
_PREWARM_BLOCK = 1 << 20


def prewarm(store: Path) -> dict[str, Any]:
    """Read every file of the store's current generation once, start to end, so the timed queries
    find the index in the OS page cache ("warm" = warm process *and* warm cache). Without it a run
    right after other disk-heavy work measured page faults: the same code's vector p50 was 51 ms
    (first call 884 ms, falling query by query) against 14-17 ms once the files were cached."""
    from woods.store.index import read_current

    started = time.perf_counter()
    total = 0
    for path in sorted(read_current(store).iterdir()):
        if path.is_file():
            with open(path, "rb") as handle:
                while chunk := handle.read(_PREWARM_BLOCK):
                    total += len(chunk)
    return {"mb": round(total / 1e6, 1), "seconds": round(time.perf_counter() - started, 2)}


def render(result: dict[str, Any]) -> str:
    index = result["index"]
    counts = index["counts"]
    lines = [
        f"index {index['store']} ({index['embedder'].get('name')}): {counts.get('files')} files, "
        f"{counts.get('units')} units, {counts.get('chunks')} chunks; {len(result['queries'])} queries "
        f"({', '.join(f'{k} {v}' for k, v in result['query_kinds'].items())}); loadavg {result['loadavg_start']} → "
        f"{result['loadavg_end']}",
    ]
    built = index.get("built_by_this_run")
    warmed = result.get("prewarm")
    if warmed:
        lines.append(f"page cache: read the generation's {warmed['mb']} MB in {warmed['seconds']} s before timing")
    if built:
        skipped = built.get("skipped_overlong_units")
        lines.append(f"built by this run in {built['wall_seconds']} s"
                     + (f"; {len(skipped)} units without vectors (--skip-overlong-units)" if skipped is not None else ""))
    rows: list[list[Any]] = []
    inproc = result["in_process"]
    for label, summary in inproc["retriever"].items():
        extra = f"first {summary['first_call_ms']} ms"
        if summary.get("picked"):
            extra += "; picked " + ", ".join(f"{k} {v}" for k, v in summary["picked"].items())
        if summary.get("errors"):
            extra += f"; {summary['errors']} errors"
        rows.append([f"retrieve {label}", *_p(summary), summary["n"], extra])
    rows.append(["raw FTS5 (one BM25 query, all terms)", *_p(inproc["raw_fts5"]), inproc["raw_fts5"]["n"],
                 f"limit {RAW_QUERY_LIMIT}"])
    if "lexical_search" in inproc:
        rows.append(["metadata.lexical_search", *_p(inproc["lexical_search"]), inproc["lexical_search"]["n"],
                     "woods' lexical call: terms in half the rows left out"])
    rows.append(["raw FAISS (flat float32 scan)", *_p(inproc["raw_faiss"]), inproc["raw_faiss"]["n"],
                 f"limit {RAW_QUERY_LIMIT}, precomputed vector"])
    if "vectors_search" in inproc:
        rows.append(["vectors.search", *_p(inproc["vectors_search"]), inproc["vectors_search"]["n"],
                     "woods' vector call: 8-bit scan rescored, metadata"])
    rows.append(["query embed (encoder alone)", *_p(inproc["query_embed"]), inproc["query_embed"]["n"],
                 f"{inproc['encoder']['class']}, load {inproc['encoder']['load_seconds']} s"])
    cold = inproc["resolve_cold"]
    rows.append(["resolve cold (+name index)", *_p(cold), cold["n"], f"name index build p50 {cold['name_index_build_ms_p50']} ms"])
    warm = inproc["resolve_warm"]
    rows.append(["resolve warm", *_p(warm), warm["n"], ", ".join(f"{k} {v}" for k, v in warm["statuses"].items())])
    api, mcp = result.get("api"), result.get("mcp")
    for tool in ("search", "resolve"):
        if api:
            rows.append([f"woods.Index.{tool}", *_p(api[tool]), api[tool]["n"], "in-process API"])
        if mcp and tool in mcp:
            ratio = None
            if api and api[tool]["p50_ms"]:
                ratio = round(mcp[tool]["p50_ms"] / api[tool]["p50_ms"], 2)
            rows.append([f"MCP {tool} (stdio round trip)", *_p(mcp[tool]), mcp[tool]["n"], f"p50 {ratio}x API"])
    if api and "issue_search" in api:
        size = f"{min(api['issue_bytes'])}–{max(api['issue_bytes'])} bytes"
        rows.append(["woods.Index.search, issue text", *_p(api["issue_search"]), api["issue_search"]["n"],
                     f"{size}; {api['issue_search']['localised']} read as issues"])
        rows.append(["woods.Index.localize, issue text", *_p(api["issue_localize"]), api["issue_localize"]["n"], size])
    if mcp and "connect_ms" in mcp:
        rows.append(["MCP connect + first search", mcp["connect_ms"], mcp["first_search_ms"], 1, "connect ms | first ms"])
    for label, summary in (result.get("cold_cli") or {}).items():
        if not isinstance(summary, dict):
            continue
        rows.append([f"cold CLI {label}", *_p(summary), summary["n"],
                     f"--strategy {summary['strategy']}, RSS {summary['peak_rss_mib']} MiB"
                     + (f", {len(summary['errors'])} errors" if summary["errors"] else "")])
    lines.append(format_table(["measurement", "p50 ms", "p95 ms", "n", "notes"], rows))
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repo", type=Path, default=DEFAULT_REPO, help="Source tree (indexed when --store is empty).")
    parser.add_argument("--store", type=Path, help="Index directory (default: per embedder under /tmp/bench).")
    parser.add_argument("--embedder", choices=EMBEDDERS, default="static",
                        help="static (woods's default), minilm, fake, or shaped (MiniLM tokenizer/chunking, synthetic "
                             "vectors; see index_provider_for).")
    parser.add_argument("--queries", type=int, default=DEFAULT_QUERIES, help="Timed queries (and resolve refs).")
    parser.add_argument("--cold-runs", type=int, default=DEFAULT_COLD_RUNS)
    parser.add_argument("--skip-overlong-units", action="store_true",
                        help="When building: index units whose prefix alone is over the token limit without vectors.")
    parser.add_argument("--strategies", help="Comma-separated subset of vector,keyword,graph,direct,hybrid,lexical,auto.")
    parser.add_argument("--profile", default="code", choices=("code", "ruby"), help="Ranking profile of the retriever.")
    parser.add_argument("--issue-queries", type=int, default=DEFAULT_ISSUE_QUERIES,
                        help=f"Pasted issue texts of {ISSUE_BYTES} bytes timed through the API (0: none).")
    parser.add_argument("--skip-mcp", action="store_true")
    parser.add_argument("--skip-cli", action="store_true")
    parser.add_argument("--no-prewarm", action="store_true",
                        help="Time with the index files as the OS page cache holds them (see prewarm).")
    parser.add_argument("--json", action="store_true", help="Print the full JSON on stdout (the table on stderr).")
    parser.add_argument("--out", type=Path, help="Also write the JSON here.")
    args = parser.parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    store = args.store or DEFAULT_STORES[args.embedder]

    result: dict[str, Any] = {"schema": BENCH_SCHEMA_VERSION, "loadavg_start": loadavg(), "cpus": os.cpu_count(),
                              "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "source": source_state()}
    result["index"] = ensure_index(args.repo, store, args.embedder, args.skip_overlong_units)

    from woods.store.index import IndexStores

    with IndexStores.open(store) as stores:
        started = time.perf_counter()
        pool = QueryPool(stores.metadata.all_records(), [row.path for row in stores.metadata.files()])
        result["query_pool_seconds"] = round(time.perf_counter() - started, 2)
    queries = build_query_set(pool, args.queries, QUERY_SEED)
    warmup = build_query_set(pool, len(QUERY_KINDS), WARMUP_SEED)
    refs = build_ref_set(pool, args.queries, QUERY_SEED)
    warm_refs = build_ref_set(pool, 5, WARMUP_SEED)
    cold_refs = build_name_refs(pool, COLD_RESOLVE_RUNS, WARMUP_SEED + 1)
    issues = build_issue_set(pool, args.issue_queries, QUERY_SEED)
    warm_issues = build_issue_set(pool, min(args.issue_queries, 4), WARMUP_SEED)
    result["queries"] = queries
    result["query_kinds"] = dict(Counter(q["kind"] for q in queries))
    result["refs"] = refs
    # The pool holds every record of the index (74k dicts on the stdlib): dropped before anything
    # is timed, or the collector's full passes over it would be charged to the searches.
    del pool
    gc.collect()

    strategy_list = [None if s == "auto" else s for s in args.strategies.split(",")] if args.strategies else STRATEGIES
    if not args.no_prewarm:
        note("reading the index into the page cache")
        result["prewarm"] = prewarm(store)
    result["in_process"] = bench_in_process(store, queries, warmup, refs, warm_refs, cold_refs, strategy_list,
                                            args.profile)
    note("woods.Index search/resolve")
    result["api"] = bench_api(store, queries, warmup, refs, warm_refs, issues, warm_issues)
    if not args.skip_mcp:
        note("MCP server search/resolve")
        try:
            result["mcp"] = bench_mcp(store, queries, warmup, refs, warm_refs)
        except Exception as exc:  # report, keep the rest of the run
            result["mcp"] = {"error": f"{type(exc).__name__}: {exc}"}
    if not args.skip_cli:
        note("cold CLI")
        identifier = next(q["query"] for q in queries if q["kind"] == "identifier")
        description = next(q["query"] for q in queries if q["kind"] == "description")
        result["cold_cli"] = bench_cold_cli(store, {"keyword": (identifier, "keyword"), "vector": (description, "vector"),
                                                    "auto identifier": (identifier, "auto")},
                                            args.cold_runs)
    result["peak_rss_mib"] = peak_rss_mib()
    result["loadavg_end"] = loadavg()

    emit_report(result, render(result), args.out, args.json)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
