"""Index bench: indexing throughput, raw model throughput, extraction vs bare parsing, query latency.

Why: "is woods fast enough" has four separate answers, and they must come from the same run on
the same code to be comparable — how long a full `woods index` takes and where the time goes
(per phase, peak RSS), how much of it is the embedding model itself (the same texts in the same
batches, timed alone), how much our extractors cost on top of tree-sitter's parse, and how long a
query takes cold (a fresh `python -m woods search`) and warm (a Retriever kept open).

Every heavy measurement runs in a fresh child process (this script re-invoked with `--worker`), so
each one reports its own peak RSS and no run warms another's caches.

    HF_HUB_OFFLINE=1 /tmp/venv/bin/python bench/index_bench.py --repo PATH [--repo PATH …] \
        [--embedder static|minilm|fake] [--json] [--out FILE]
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import hashlib
import json
import os
import sys
import tempfile
import time
import traceback
from collections import Counter, defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

BENCH_DIR = Path(__file__).resolve().parent
REPO_ROOT = BENCH_DIR.parent
# The bench runs from a checkout (woods need not be installed): make the package importable.
for _path in (str(BENCH_DIR), str(REPO_ROOT)):
    if _path not in sys.path:
        sys.path.insert(0, _path)

from _common import (  # noqa: E402  (needs the path set up above)
    ChildRun,
    Stopwatch,
    format_table,
    latency_summary,
    peak_rss_mib,
    rate,
    read_json,
    run_child,
    write_json,
)

BENCH_SCHEMA_VERSION = 1
# Cold runs per query kind: each is a fresh interpreter (~1 s), 5 gives a usable p50 cheaply.
DEFAULT_COLD_RUNS = 5
# Warm queries per kind (identifier, description, path): 3 × 10 = 30, the brief's minimum.
DEFAULT_WARM_PER_KIND = 10
# Results asked of each raw store query (FTS5, FAISS): what the retriever fetches for limit 10.
RAW_QUERY_LIMIT = 20
# Anomaly checks: a file with more units of one type than this is reported (likely an extractor loop).
HUGE_UNITS_PER_TYPE_IN_FILE = 400
# Examples kept per anomaly / failure kind, so a broken extractor does not flood the report.
MAX_EXAMPLES = 15
# Unit types left out of identifier queries: methods are reached through their class, and routes
# ("GET /issues/:id") would crowd out the classes people actually type in a Rails app.
NON_IDENTIFIER_QUERY_TYPES = frozenset({"method", "function", "route"})
# Template languages whose bare parse includes their injected code: the injected grammar. An ERB
# file is Ruby inside a template; tree-sitter's own ERB highlighting parses both, and so must a
# baseline for an extractor that reads the Ruby. The code ranges are the template grammar's
# `code` nodes (`woods.extract.erb.CODE_QUERY_SOURCE`).
INJECTED = {"erb": "ruby"}
# A pattern that matches only syntax errors: a query cursor over it visits every node and captures
# (almost) nothing, which times tree-sitter's traversal alone (`node_walk_seconds`).
WALK_PATTERN = "(ERROR) @error"

# Natural-language queries per dominant language; generic ones fill in for other repositories.
DESCRIPTION_QUERIES: dict[str, tuple[str, ...]] = {
    "ruby": (
        "how are issues filtered by status",
        "where is the user password checked at login",
        "send an email notification when an issue is updated",
        "permissions of a project member role",
        "render a wiki page to html",
        "export issues to csv",
        "time entries logged against a project",
        "repository changesets fetched from git",
        "custom field value validation",
        "api key authentication for rest requests",
    ),
    "python": (
        "parse a json document into python objects",
        "open a tcp socket connection with a timeout",
        "compress data with gzip",
        "read a csv file row by row",
        "format a date as a string",
        "compute a sha256 digest of bytes",
        "run a subprocess and capture its output",
        "parse command line arguments",
        "decode an email message with attachments",
        "thread pool executor submitting tasks",
    ),
}
GENERIC_QUERIES = DESCRIPTION_QUERIES["python"]


# -- workers (each runs in a fresh child process) -------------------------------------------------


class PhaseRecorder:
    """A Progress that records wall seconds and item counts per phase, as seen from outside the builder."""

    def __init__(self) -> None:
        self.phases: dict[str, dict[str, Any]] = {}
        self.notes: list[str] = []
        self._current: str | None = None
        self._started = 0.0

    def phase(self, name: str, total: int | None) -> None:
        self._close()
        self._current, self._started = name, time.perf_counter()
        entry = self.phases.setdefault(name, {"seconds": 0.0, "items": 0, "total": total})
        entry["total"] = total

    def advance(self, count: int = 1) -> None:
        if self._current is not None:
            self.phases[self._current]["items"] += count

    def note(self, message: str) -> None:
        self.notes.append(message)

    def _close(self) -> None:
        if self._current is not None:
            entry = self.phases[self._current]
            entry["seconds"] = round(entry["seconds"] + time.perf_counter() - self._started, 3)
            self._current = None

    def close(self) -> None:
        self._close()


class RecordingProvider:
    """Wraps the index's embedding provider: records every batch it embeds and the seconds inside it.

    Everything else (name, dimension, max_input_tokens, count_tokens, fingerprint …) is forwarded,
    so the index built through it is exactly the index built without it.
    """

    def __init__(self, inner: Any) -> None:
        self._inner = inner
        self.batches: list[list[str]] = []
        self.call_seconds: list[float] = []

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    def embed_batch(self, texts: Sequence[str]) -> Any:
        started = time.perf_counter()
        out = self._inner.embed_batch(texts)
        self.call_seconds.append(time.perf_counter() - started)
        self.batches.append(list(texts))
        return out


def worker_index(args: argparse.Namespace) -> dict[str, Any]:
    """Full index of one repository; records phases, model seconds, the embedded batches, peak RSS."""
    from woods.embedding.select import index_provider
    from woods.indexing import index_repository

    progress = PhaseRecorder()
    holder: dict[str, RecordingProvider] = {}

    def factory() -> RecordingProvider:
        holder["provider"] = RecordingProvider(index_provider(args.embedder))
        return holder["provider"]

    started = time.perf_counter()
    searchable: list[float] = []
    summary = index_repository(Path(args.repo), Path(args.store), factory, progress=progress,
                               on_searchable=lambda _s: searchable.append(time.perf_counter() - started))
    wall = time.perf_counter() - started
    progress.close()
    rss = peak_rss_mib()  # before anything else allocates: the index's own peak
    provider = holder.get("provider")
    batches = provider.batches if provider else []
    calls = provider.call_seconds if provider else []
    write_json(Path(args.texts), batches)
    return {
        "wall_seconds": round(wall, 3),
        # Phase 1 published (every search answers from here on), and the rest: phase 2.
        "first_search_seconds": round(searchable[0], 3) if searchable else None,
        "phase2_seconds": round(wall - searchable[0], 3) if searchable else None,
        "peak_rss_mib": rss,
        "summary": summary.to_dict(),
        "phases_seen": progress.phases,
        "model_calls": len(calls),
        "model_call_seconds": [round(c, 4) for c in calls],
        "model_seconds_in_index": round(sum(calls), 3),
        # The first call includes loading the model (lazy); reported apart from steady state.
        "model_first_call_seconds": round(calls[0], 3) if calls else None,
        "texts_embedded": sum(len(b) for b in batches),
        "chars_embedded": sum(len(t) for b in batches for t in b),
    }


def worker_model(args: argparse.Namespace) -> dict[str, Any]:
    """The raw model alone: load it, then embed the index's batches, unchanged and in the same order.

    With `--sample-every K` only every K-th batch is embedded (a full MiniLM re-run doubles an
    already long bench); the full model time is then estimated by scaling with the token count,
    which is what a transformer's cost follows.
    """
    from woods.embedding.select import index_provider

    batches: list[list[str]] = read_json(Path(args.texts))
    every = max(1, int(args.sample_every))
    watch = Stopwatch()
    if args.baseline and args.embedder == "minilm":
        # The yardstick: plain sentence-transformers in fp32 (its own batching) on the same texts.
        from woods.embedding.sentence import SentenceTransformerProvider

        provider: Any = SentenceTransformerProvider(precision="fp32")
    else:
        provider = index_provider(args.embedder)
    with watch.section("load"):
        provider.embed_batch(["warm up"])  # the lazy load plus one tiny forward pass
    per_batch: list[float] = []
    sampled = list(range(0, len(batches), every))
    for position in sampled:
        started = time.perf_counter()
        provider.embed_batch(batches[position])
        per_batch.append(time.perf_counter() - started)
    tokens_of = [sum(provider.count_tokens(t) for t in batch) for batch in batches]
    texts = sum(len(batches[i]) for i in sampled)
    tokens = sum(tokens_of[i] for i in sampled)
    embed_seconds = sum(per_batch)
    total_tokens = sum(tokens_of)
    estimated = embed_seconds * total_tokens / tokens if tokens else embed_seconds
    return {
        "load_seconds": watch.rounded()["load"],
        "sample_every": every,
        "sampled_batches": sampled,
        "embed_seconds": round(embed_seconds, 3),
        "estimated_full_embed_seconds": round(estimated, 3),
        "texts": texts,
        "tokens": tokens,
        "total_texts": sum(len(b) for b in batches),
        "total_tokens": total_tokens,
        "texts_per_second": rate(texts, embed_seconds),
        "tokens_per_second": rate(tokens, embed_seconds),
        "batches": len(sampled),
        "batch_latency": latency_summary(per_batch),
        "batch_seconds": [round(b, 4) for b in per_batch],
        "peak_rss_mib": peak_rss_mib(),
    }


def _unit_anomalies(unit: Any, path: str, language: str, lines: list[bytes]) -> list[str]:
    """What is wrong with one extracted unit, judged against its own file (empty when nothing)."""
    problems: list[str] = []
    where = f"{path}:{unit.line_start}-{unit.line_end} [{unit.type}] {unit.identifier!r}"
    if not str(unit.identifier).strip():
        problems.append(f"empty identifier: {where}")
    if "\n" in str(unit.identifier):
        problems.append(f"identifier spans lines: {where}")
    if unit.line_start < 1:
        problems.append(f"line_start < 1: {where}")
    if unit.line_end < unit.line_start:
        problems.append(f"line_end < line_start: {where}")
    if unit.line_end > max(len(lines), 1):
        problems.append(f"line_end past end of file ({len(lines)} lines): {where}")
    if unit.file_path != path:
        problems.append(f"file_path {unit.file_path!r} != {path!r}: {where}")
    if not (unit.source_code or "").strip():
        problems.append(f"empty source_code: {where}")
    elif 1 <= unit.line_start <= len(lines):
        first = (unit.source_code or "").strip().splitlines()[0].strip()
        window = b"\n".join(lines[unit.line_start - 1 : unit.line_end]).decode("utf-8", "replace")
        if first and first not in window:
            problems.append(f"source_code first line not within its line range: {where}")
    return problems


def worker_extract(args: argparse.Namespace) -> dict[str, Any]:
    """Extraction throughput next to bare tree-sitter parsing, plus the shake-out checks.

    Files are read into memory first, so both timings exclude I/O. Each language's parser is
    warmed on its first file before timing.
    """
    from woods.discovery import discover
    from woods.extract import base, extract_file, extractor_language
    from woods.extract.layout import RepositoryLayout

    root = Path(args.repo)
    found = discover(root)
    # What the index computes from the whole file list, so units are classified exactly as there.
    layout = RepositoryLayout.from_paths(item.path for item in found.files)
    files: dict[str, list[tuple[str, bytes]]] = defaultdict(list)
    for item in found.files:
        try:
            data = (root / item.path).read_bytes()
        except OSError:
            continue
        # The extractor's language: extension-less scripts by their `#!`, `.h` headers that read as
        # C++ under cpp (the registry's content rule).
        lang = extractor_language(item.path, data)
        if lang is None:
            continue
        files[lang].append((item.path, data))

    per_language: dict[str, Any] = {}
    failures: dict[str, list[str]] = defaultdict(list)
    anomalies: dict[str, list[str]] = defaultdict(list)
    anomaly_counts: Counter[str] = Counter()
    warning_examples: list[str] = []
    unit_types: Counter[str] = Counter()
    for lang in sorted(files):
        entries = files[lang]
        parse_seconds = 0.0
        syntax_error_files: list[str] = []
        parse_error: str | None = None
        template_seconds = 0.0
        try:
            bare_parse(lang, entries[0][0], entries[0][1])  # warm the parser cache
            for path, data in entries:
                started = time.perf_counter()
                tree = base.parse(_grammar(lang, path), data)
                template_seconds += time.perf_counter() - started
                if lang in INJECTED:
                    bare_parse(lang, path, data, tree)
                parse_seconds += time.perf_counter() - started
                if tree.root_node.has_error:
                    syntax_error_files.append(path)
        except Exception as exc:  # a grammar that cannot load: report, keep benching the rest
            parse_error = f"{exc.__class__.__name__}: {exc}"
        walk_seconds = None if parse_error else node_walk_seconds(lang, entries)
        extract_seconds = 0.0
        units = 0
        warnings = 0
        failed = 0
        with contextlib.suppress(Exception):  # failures are counted per file below
            extract_file(entries[0][0], entries[0][1], layout)  # warm imports and the parser cache
        for path, data in entries:
            started = time.perf_counter()
            try:
                extraction = extract_file(path, data, layout)
            except Exception as exc:
                extract_seconds += time.perf_counter() - started
                failed += 1
                kind = f"{lang}: {exc.__class__.__name__}"
                if len(failures[kind]) < MAX_EXAMPLES:
                    last = traceback.extract_tb(exc.__traceback__)[-1]
                    failures[kind].append(f"{path}: {exc} (at {Path(last.filename).name}:{last.lineno})")
                else:
                    failures[kind].append("…")
                continue
            extract_seconds += time.perf_counter() - started
            units += len(extraction.units)
            warnings += len(extraction.warnings)
            for warning in extraction.warnings:
                if len(warning_examples) < MAX_EXAMPLES:
                    warning_examples.append(warning)
            lines = data.split(b"\n")
            by_type = Counter(u.type for u in extraction.units)
            for unit_type, count in by_type.items():
                if count > HUGE_UNITS_PER_TYPE_IN_FILE:
                    _add(anomalies, anomaly_counts, "huge unit count of one type in a file",
                         f"{path}: {count} × {unit_type}")
            seen: Counter[tuple[str, str]] = Counter((u.type, u.identifier) for u in extraction.units)
            for (unit_type, identifier), count in sorted(seen.items()):
                if count > 1:
                    _add(anomalies, anomaly_counts, "duplicate (type, identifier) in one file",
                         f"{path}: {count} × [{unit_type}] {identifier}")
            for unit in extraction.units:
                unit_types[f"{lang}/{unit.type}"] += 1
                for problem in _unit_anomalies(unit, path, lang, lines):
                    _add(anomalies, anomaly_counts, problem.split(":", 1)[0], problem)
        size = sum(len(d) for _p, d in entries)
        per_language[lang] = {
            "files": len(entries),
            "mb": round(size / 1e6, 2),
            "parse_seconds": round(parse_seconds, 3),
            "parse_files_per_second": rate(len(entries), parse_seconds),
            "parse_mb_per_second": rate(size / 1e6, parse_seconds),
            "parse_error": parse_error,
            # ERB: the template grammar alone, without the Ruby injection `parse_seconds` includes.
            "template_parse_seconds": round(template_seconds, 3) if lang in INJECTED else None,
            "syntax_error_files": len(syntax_error_files),
            "syntax_error_examples": syntax_error_files[:MAX_EXAMPLES],
            "extract_seconds": round(extract_seconds, 3),
            "extract_files_per_second": rate(len(entries), extract_seconds),
            "extract_mb_per_second": rate(size / 1e6, extract_seconds),
            "extract_over_parse": round(extract_seconds / parse_seconds, 2) if parse_seconds > 0 else None,
            # The acceptance figure: extraction throughput as a share of bare parsing (≥ 0.5 wanted).
            "extract_share_of_parse": (
                round(parse_seconds / extract_seconds, 2) if extract_seconds > 0 and parse_seconds > 0 else None
            ),
            # What a 0.5 share leaves after the parse: one more parse's time. tree-sitter's own visit of
            # every node (`walk_seconds`, which any extractor that reads references from the tree
            # pays) comes out of it first; `rest_seconds` is what the extractor spends beyond both.
            "walk_seconds": round(walk_seconds, 3) if walk_seconds is not None else None,
            "walk_over_parse": (
                round(walk_seconds / parse_seconds, 2) if walk_seconds is not None and parse_seconds > 0 else None
            ),
            "rest_seconds": (
                round(extract_seconds - parse_seconds - walk_seconds, 3) if walk_seconds is not None else None
            ),
            "rest_over_budget": (
                round((extract_seconds - parse_seconds - walk_seconds) / (parse_seconds - walk_seconds), 2)
                if walk_seconds is not None and parse_seconds > walk_seconds
                else None
            ),
            "units": units,
            "warnings": warnings,
            "failed_files": failed,
        }
    return {
        "languages": per_language,
        "failures": {k: _dedupe_ellipsis(v) for k, v in sorted(failures.items())},
        "anomaly_counts": dict(sorted(anomaly_counts.items())),
        "anomalies": {k: v for k, v in sorted(anomalies.items())},
        "warning_examples": warning_examples,
        "units_by_language_type": dict(sorted(unit_types.items(), key=lambda kv: (-kv[1], kv[0]))),
        "peak_rss_mib": peak_rss_mib(),
    }


def node_walk_seconds(lang: str, entries: Sequence[tuple[str, bytes]]) -> float:
    """Seconds tree-sitter spends visiting every node of each file's fresh tree, with nothing to
    match: a query cursor over a pattern no node satisfies (`WALK_PATTERN`). It is the floor of
    any extractor that reads references out of the tree, timed apart from the parse (in its own
    pass, so the parse timing above stays a bare parse). ERB: the template's tree."""
    from tree_sitter import Query, QueryCursor

    from woods.extract import base

    seconds = 0.0
    queries: dict[str, Any] = {}
    for path, data in entries:
        grammar = _grammar(lang, path)
        query = queries.get(grammar)
        if query is None:
            query = queries[grammar] = Query(base.language(grammar), WALK_PATTERN)
        root = base.parse(grammar, data).root_node
        started = time.perf_counter()
        QueryCursor(query).captures(root)
        seconds += time.perf_counter() - started
    return seconds


def bare_parse(lang: str, path: str, data: bytes, tree: Any = None) -> Any:
    """Bare tree-sitter parsing of one file, as an editor parses it: its grammar, and for a
    template language (`INJECTED`) its injected code as well — the injection grammar over the
    code ranges the template tree gives (`Parser.included_ranges`, tree-sitter's way of parsing
    one language inside another). `tree` is the template's tree when already parsed."""
    from tree_sitter import QueryCursor, Range

    from woods.extract import base

    if tree is None:
        tree = base.parse(_grammar(lang, path), data)
    injected = INJECTED.get(lang)
    if injected is not None:
        nodes = QueryCursor(_injection_query(_grammar(lang, path))).captures(tree.root_node).get("code", [])
        if nodes:
            parser = base.parser(injected)
            parser.included_ranges = [
                Range(n.start_point, n.end_point, n.start_byte, n.end_byte) for n in sorted(nodes, key=_start_byte)
            ]
            try:
                parser.parse(data)
            finally:
                parser.included_ranges = []
    return tree


@functools.cache
def _injection_query(grammar: str) -> Any:
    from tree_sitter import Query

    from woods.extract import base
    from woods.extract.erb import CODE_QUERY_SOURCE

    return Query(base.language(grammar), CODE_QUERY_SOURCE)


def _start_byte(node: Any) -> int:
    return int(node.start_byte)


def _grammar(lang: str, path: str) -> str:
    """The tree-sitter grammar woods' `lang` extractor parses `path` with (the registry's; a
    document kind has none, and its name then fails to load as one)."""
    from woods.extract import registry

    language = registry.BY_NAME.get(lang)
    return language.grammar_for(path) if language is not None else lang


def _add(bucket: dict[str, list[str]], counts: Counter[str], kind: str, example: str) -> None:
    counts[kind] += 1
    if len(bucket[kind]) < MAX_EXAMPLES:
        bucket[kind].append(example)


def _dedupe_ellipsis(values: list[str]) -> list[str]:
    kept = [v for v in values if v != "…"]
    return kept + (["…"] if len(kept) < len(values) else [])


def worker_warm(args: argparse.Namespace) -> dict[str, Any]:
    """Warm latency: one Retriever kept open (the CLI's wiring), queries timed after a warm-up query.

    Also times the raw stores on the same queries: FTS5 BM25 and a FAISS search (the query vector
    computed outside the timing, its embedding time reported apart).
    """
    from woods.embedding.select import query_embedder
    from woods.retrieval.retriever import Retriever
    from woods.store.index import IndexStores

    queries: list[dict[str, str]] = read_json(Path(args.queries))
    stores = IndexStores.open(Path(args.store))
    try:
        retriever = Retriever(stores, lambda: query_embedder(stores.manifest.embedder), mode="semantic")
        watch = Stopwatch()
        with watch.section("first_query"):
            retriever.retrieve(queries[0]["query"])  # loads the embedder, FAISS and caches
        by_kind: dict[str, list[float]] = defaultdict(list)
        strategies: Counter[str] = Counter()
        errors: list[str] = []
        answered: list[str] = []
        for item in queries:
            started = time.perf_counter()
            try:
                result = retriever.retrieve(item["query"])
            except Exception as exc:
                errors.append(f"{item['kind']} {item['query']!r}: {exc.__class__.__name__}: {exc}")
                continue
            by_kind[item["kind"]].append(time.perf_counter() - started)
            strategies[f"{item['kind']}→{result.strategy}"] += 1
            answered.append(item["query"])
        # The same queries once more: the pass above may include the index's first reads from disk
        # (the stdlib right after its bench index: p50 76-80 ms there, 13-15 ms here; a later process
        # on the cached files: ~19 ms both). Nothing caches per query: unseen queries run as fast.
        # Only the queries that answered the first time (the others are in `errors`).
        again: list[float] = []
        for query in answered:
            started = time.perf_counter()
            retriever.retrieve(query)
            again.append(time.perf_counter() - started)
        from woods.retrieval.code_search import CodeSearchConfig
        from woods.retrieval.query_analysis import analyze

        weights = CodeSearchConfig().lexical_weights
        embedder = query_embedder(stores.manifest.embedder)
        fts: list[float] = []
        faiss: list[float] = []
        embed: list[float] = []
        for item in queries:
            started = time.perf_counter()
            # The code profile's lexical leg: one FTS5 BM25 query over the code-aware terms.
            stores.metadata.lexical_search(list(analyze(item["query"]).terms), RAW_QUERY_LIMIT, weights)
            fts.append(time.perf_counter() - started)
            started = time.perf_counter()
            vector = embedder.embed(item["query"])
            embed.append(time.perf_counter() - started)
            started = time.perf_counter()
            stores.vectors.search(vector, RAW_QUERY_LIMIT)
            faiss.append(time.perf_counter() - started)
    finally:
        stores.close()
    everything = [s for values in by_kind.values() for s in values]
    return {
        "first_query_seconds": watch.rounded()["first_query"],
        "retrieve": latency_summary(everything),
        "retrieve_by_kind": {k: latency_summary(v) for k, v in sorted(by_kind.items())},
        "retrieve_again": latency_summary(again),
        "strategies": dict(sorted(strategies.items())),
        "errors": errors,
        "raw_fts5": latency_summary(fts),
        "raw_query_embed": latency_summary(embed),
        "raw_faiss": latency_summary(faiss),
        "peak_rss_mib": peak_rss_mib(),
    }


WORKERS = {"index": worker_index, "model": worker_model, "extract": worker_extract, "warm": worker_warm}


def run_worker(args: argparse.Namespace) -> int:
    try:
        result = WORKERS[args.worker](args)
    except Exception as exc:
        result = {"error": f"{exc.__class__.__name__}: {exc}", "traceback": traceback.format_exc()}
    write_json(Path(args.result), result)
    return 0 if "error" not in result else 1


# -- orchestration (parent process) ---------------------------------------------------------------


def _child_env() -> dict[str, str]:
    env = {"HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO_ROOT), os.environ.get("PYTHONPATH", "")) if p)
    return env


def spawn_worker(kind: str, work: Path, **options: str) -> tuple[dict[str, Any], ChildRun]:
    """Run one worker in a fresh interpreter; its JSON result plus the child's own wall/RSS."""
    result_path = work / f"{kind}.result.json"
    argv = [sys.executable, str(Path(__file__).resolve()), "--worker", kind, "--result", str(result_path)]
    for name, value in options.items():
        argv += [f"--{name.replace('_', '-')}", value]
    child = run_child(argv, env=_child_env(), cwd=REPO_ROOT)
    if not result_path.exists():
        return {"error": f"worker {kind} exited {child.returncode}: {child.stderr.strip()[-2000:]}"}, child
    return read_json(result_path), child


def _stable_order(values: Sequence[str]) -> list[str]:
    """A deterministic, content-spread order: by SHA-256 of the value, ties by the value."""
    return sorted(values, key=lambda v: (hashlib.sha256(v.encode()).hexdigest(), v))


def build_queries(store: Path, per_kind: int) -> list[dict[str, str]]:
    """Mixed queries from the index itself: identifiers (half top PageRank, half spread), file paths,
    and descriptions for the repository's dominant language. Deterministic for a given index."""
    from woods.store.index import IndexStores

    stores = IndexStores.open(store)
    try:
        records = stores.metadata.all_records()
        pagerank = stores.metadata.pagerank_scores()
        files = [row.path for row in stores.metadata.files()]
        languages = stores.metadata.language_counts()
    finally:
        stores.close()
    # Container-like identifiers: what people type (methods are reachable through them).
    named = sorted({str(r["identifier"]) for r in records if r.get("type") not in NON_IDENTIFIER_QUERY_TYPES} or
                   {str(r["identifier"]) for r in records})
    top = sorted(named, key=lambda i: (-pagerank.get(i, 0.0), i))[: per_kind // 2]
    spread = [i for i in _stable_order(named) if i not in top][: per_kind - len(top)]
    dominant = max(sorted(languages), key=lambda k: languages[k]) if languages else ""
    descriptions = DESCRIPTION_QUERIES.get(dominant, GENERIC_QUERIES)[:per_kind]
    queries = [{"kind": "identifier", "query": q} for q in [*top, *spread]]
    queries += [{"kind": "description", "query": q} for q in descriptions]
    queries += [{"kind": "path", "query": q} for q in _stable_order(files)[:per_kind]]
    return queries


def cold_latency(store: Path, queries: list[dict[str, str]], runs: int) -> dict[str, Any]:
    """Fresh `python -m woods search Q --store S --json` per run; the first query of each kind, `runs` times."""
    results: dict[str, Any] = {}
    for kind in ("identifier", "description", "path"):
        first = next((q["query"] for q in queries if q["kind"] == kind), None)
        if first is None:
            continue
        walls: list[float] = []
        rss: list[float] = []
        strategies: Counter[str] = Counter()
        errors: list[str] = []
        for _ in range(runs):
            child = run_child([sys.executable, "-m", "woods", "search", first, "--store", str(store), "--json"],
                              env=_child_env(), cwd=REPO_ROOT)
            if child.returncode != 0:
                errors.append(f"exit {child.returncode}: {child.stderr.strip()[-300:]}")
                continue
            walls.append(child.wall_seconds)
            rss.append(child.peak_rss_mib)
            try:
                strategies[str(json.loads(child.stdout).get("strategy"))] += 1
            except ValueError:
                errors.append("stdout is not one JSON object")
        results[kind] = {
            "query": first,
            **latency_summary(walls),
            "peak_rss_mib": max(rss) if rss else None,
            "strategies": dict(sorted(strategies.items())),
            "errors": errors,
        }
    return results


def bench_repo(repo: Path, args: argparse.Namespace, work_root: Path, ordinal: int) -> dict[str, Any]:
    # Numbered: several benchmark roots share a name (`lib`, `src`), and each needs its own store.
    work = work_root / f"{ordinal:02d}-{repo.name or 'repo'}"
    work.mkdir(parents=True, exist_ok=True)
    store = work / "store"
    texts = work / "texts.json"
    out: dict[str, Any] = {"repo": str(repo), "embedder": args.embedder, "loadavg_start": _loadavg()}
    _say(f"[{repo.name}] index ({args.embedder}) …")
    index, child = spawn_worker("index", work, repo=str(repo), store=str(store), embedder=args.embedder,
                                texts=str(texts))
    out["index"] = {**index, "child_wall_seconds": round(child.wall_seconds, 3),
                    "child_peak_rss_mib": child.peak_rss_mib}
    if "error" in index:
        _say(f"[{repo.name}] index failed: {index['error']}")
        return out
    if not args.skip_model and args.embedder == "minilm":  # the static model's throughput: bench/embed_bench.py
        _say(f"[{repo.name}] raw model throughput …")
        model, child = spawn_worker("model", work, texts=str(texts), embedder=args.embedder,
                                    sample_every=str(args.sample_every))
        out["model"] = {**model, "child_peak_rss_mib": child.peak_rss_mib}
        _say(f"[{repo.name}] baseline: sentence-transformers fp32 on the same chunks …")
        baseline, child = spawn_worker("model", work, texts=str(texts), embedder=args.embedder,
                                       sample_every=str(args.sample_every), baseline="1")
        out["baseline"] = {**baseline, "child_peak_rss_mib": child.peak_rss_mib}
    if not args.skip_extract:
        _say(f"[{repo.name}] extraction vs parse …")
        extract, child = spawn_worker("extract", work, repo=str(repo))
        out["extract"] = {**extract, "child_peak_rss_mib": child.peak_rss_mib}
    queries = build_queries(store, args.warm_per_kind)
    write_json(work / "queries.json", queries)
    out["queries"] = queries
    _say(f"[{repo.name}] warm queries ({len(queries)}) …")
    warm, child = spawn_worker("warm", work, store=str(store), queries=str(work / "queries.json"))
    out["warm"] = warm
    _say(f"[{repo.name}] cold queries ({args.cold_runs} runs per kind) …")
    out["cold"] = cold_latency(store, queries, args.cold_runs)
    out["derived"] = derive(out)
    out["loadavg_end"] = _loadavg()
    if not args.keep:
        texts.unlink(missing_ok=True)
    return out


def derive(run: dict[str, Any]) -> dict[str, Any]:
    """The headline ratios: rates of the index run and index time over pure model time."""
    index = run.get("index", {})
    summary = index.get("summary", {})
    wall = float(index.get("wall_seconds") or 0.0)
    derived: dict[str, Any] = {
        "files_per_second": rate(summary.get("files", 0), wall),
        "units_per_second": rate(summary.get("units", 0), wall),
        "chunks_embedded_per_second": rate(summary.get("embedded", 0), wall),
    }
    model = run.get("model", {})
    model_seconds = float(model.get("estimated_full_embed_seconds") or model.get("embed_seconds") or 0.0)
    if model_seconds > 0:
        derived["raw_model_seconds_full"] = round(model_seconds, 3)
        derived["index_over_model"] = round(wall / model_seconds, 2)
        embed_phase = float(summary.get("seconds", {}).get("embed") or 0.0)
        derived["embed_phase_over_model"] = round(embed_phase / model_seconds, 2)
    first_search = index.get("first_search_seconds")
    if first_search is not None and wall > 0:
        derived["first_search_over_full"] = round(float(first_search) / wall, 3)
    baseline = run.get("baseline", {})
    baseline_seconds = float(baseline.get("estimated_full_embed_seconds") or baseline.get("embed_seconds") or 0.0)
    if baseline_seconds > 0:
        derived["baseline_st_fp32_seconds_full"] = round(baseline_seconds, 3)
        derived["full_over_st_fp32"] = round(wall / baseline_seconds, 3)
    calls = index.get("model_call_seconds") or []
    sampled = [i for i in model.get("sampled_batches") or [] if i < len(calls)]
    raw_seconds = dict(zip(model.get("sampled_batches") or [], model.get("batch_seconds") or [], strict=False))
    # Call 0 of the index includes the lazy model load: compare the other sampled batches only.
    compared = [i for i in sampled if i > 0 and i in raw_seconds]
    in_index = sum(calls[i] for i in compared)
    raw = sum(raw_seconds[i] for i in compared)
    if in_index > 0 and raw > 0:
        # Same batches, same texts: > 1 means the model ran slower inside the index than alone.
        derived["in_index_over_raw_same_batches"] = round(in_index / raw, 2)
    return derived


def _loadavg() -> list[float]:
    """1/5/15-minute load: other jobs on a 2-core machine skew every number, so record it."""
    return [round(v, 2) for v in os.getloadavg()]


def _say(message: str) -> None:
    sys.stderr.write(message + "\n")
    sys.stderr.flush()


# -- report ---------------------------------------------------------------------------------------


def _get(data: dict[str, Any], *path: str) -> Any:
    for name in path:
        if not isinstance(data, dict):
            return None
        data = data.get(name)  # type: ignore[assignment]
    return data


def human_report(runs: list[dict[str, Any]]) -> str:
    names = [Path(r["repo"]).name or r["repo"] for r in runs]
    rows: list[list[Any]] = []

    def row(label: str, *path: str) -> None:
        rows.append([label, *(_get(r, *path) for r in runs)])

    row("files", "index", "summary", "files")
    row("units", "index", "summary", "units")
    row("chunks", "index", "summary", "chunks")
    row("chunks embedded", "index", "summary", "embedded")
    row("edges (resolved)", "index", "summary", "resolved_edges")
    row("parse failures", "index", "summary", "parse_failures")
    rows.append(["warnings", *(len(_get(r, "index", "summary", "warnings") or []) for r in runs)])
    row("index wall s (full: both phases)", "index", "wall_seconds")
    row("  first search s (phase 1 published)", "index", "first_search_seconds")
    row("  phase 2 s (chunk, embed, publish)", "index", "phase2_seconds")
    row("  first search / full", "derived", "first_search_over_full")
    row("ST fp32 embed s, same chunks (est.)", "derived", "baseline_st_fp32_seconds_full")
    row("full / ST fp32 embed", "derived", "full_over_st_fp32")
    phases = sorted({p for r in runs for p in (_get(r, "index", "summary", "seconds") or {})})
    for phase in phases:
        row(f"  {phase} s", "index", "summary", "seconds", phase)
    row("  model s inside index", "index", "model_seconds_in_index")
    row("  1st model call s (load)", "index", "model_first_call_seconds")
    row("index peak RSS MiB", "index", "peak_rss_mib")
    rows.append(["load avg at start (1 min)", *((r.get("loadavg_start") or [None])[0] for r in runs)])
    row("files/s", "derived", "files_per_second")
    row("units/s", "derived", "units_per_second")
    row("chunks embedded/s", "derived", "chunks_embedded_per_second")
    row("raw model load s", "model", "load_seconds")
    row("raw model embed s (sampled)", "model", "embed_seconds")
    row("raw model embed s (full, est.)", "derived", "raw_model_seconds_full")
    row("raw model texts/s", "model", "texts_per_second")
    row("raw model tokens/s", "model", "tokens_per_second")
    row("index time / model time", "derived", "index_over_model")
    row("embed phase / model time", "derived", "embed_phase_over_model")
    row("in-index / raw, same batches", "derived", "in_index_over_raw_same_batches")
    languages = sorted({lang for r in runs for lang in (_get(r, "extract", "languages") or {})})
    for lang in languages:
        row(f"{lang}: files", "extract", "languages", lang, "files")
        row(f"{lang}: MB", "extract", "languages", lang, "mb")
        row(f"{lang}: parse files/s", "extract", "languages", lang, "parse_files_per_second")
        row(f"{lang}: parse MB/s", "extract", "languages", lang, "parse_mb_per_second")
        row(f"{lang}: extract files/s", "extract", "languages", lang, "extract_files_per_second")
        row(f"{lang}: extract MB/s", "extract", "languages", lang, "extract_mb_per_second")
        row(f"{lang}: extract / parse", "extract", "languages", lang, "extract_over_parse")
        row(f"{lang}: extract MB/s / parse MB/s", "extract", "languages", lang, "extract_share_of_parse")
        row(f"{lang}: node walk / parse", "extract", "languages", lang, "walk_over_parse")
        row(f"{lang}: rest / budget at 0.5", "extract", "languages", lang, "rest_over_budget")
        row(f"{lang}: failed files", "extract", "languages", lang, "failed_files")
        row(f"{lang}: syntax-error files", "extract", "languages", lang, "syntax_error_files")
    for kind in ("identifier", "description", "path"):
        row(f"cold {kind} p50 ms", "cold", kind, "p50_ms")
        row(f"cold {kind} p95 ms", "cold", kind, "p95_ms")
    row("cold search peak RSS MiB", "cold", "description", "peak_rss_mib")
    row("warm first query s", "warm", "first_query_seconds")
    row("warm retrieve n", "warm", "retrieve", "n")
    row("warm retrieve p50 ms", "warm", "retrieve", "p50_ms")
    row("warm retrieve p95 ms", "warm", "retrieve", "p95_ms")
    row("warm retrieve again p50 ms", "warm", "retrieve_again", "p50_ms")
    row("warm retrieve again p95 ms", "warm", "retrieve_again", "p95_ms")
    for kind in ("identifier", "description", "path"):
        row(f"  warm {kind} p50 ms", "warm", "retrieve_by_kind", kind, "p50_ms")
        row(f"  warm {kind} p95 ms", "warm", "retrieve_by_kind", kind, "p95_ms")
    row("raw FTS5 p50 / p95 ms", "warm", "raw_fts5", "p50_ms")
    rows[-1] = [rows[-1][0], *(_pair(r, "raw_fts5") for r in runs)]
    rows.append(["raw query embed p50 / p95 ms", *(_pair(r, "raw_query_embed") for r in runs)])
    rows.append(["raw FAISS p50 / p95 ms", *(_pair(r, "raw_faiss") for r in runs)])
    table = format_table(["metric", *names], rows)
    extra: list[str] = []
    for run, name in zip(runs, names, strict=True):
        types = _get(run, "index", "summary", "units_by_type") or {}
        if types:
            listed = ", ".join(f"{k} {v}" for k, v in sorted(types.items(), key=lambda kv: (-kv[1], kv[0])))
            extra.append(f"{name} units by type: {listed}")
        for key in ("index", "model", "extract", "warm"):
            if isinstance(run.get(key), dict) and "error" in run[key]:
                extra.append(f"{name} {key} ERROR: {run[key]['error']}")
        anomalies = _get(run, "extract", "anomaly_counts") or {}
        if anomalies:
            extra.append(f"{name} anomalies: " + ", ".join(f"{k} {v}" for k, v in anomalies.items()))
        failures = _get(run, "extract", "failures") or {}
        for kind, examples in failures.items():
            extra.append(f"{name} extraction failures {kind}: {examples[:3]}")
        warm_errors = _get(run, "warm", "errors") or []
        if warm_errors:
            extra.append(f"{name} warm query errors: {warm_errors[:3]}")
    return table + ("\n\n" + "\n".join(extra) if extra else "")


def _pair(run: dict[str, Any], key: str) -> str | None:
    data = _get(run, "warm", key)
    if not isinstance(data, dict) or data.get("p50_ms") is None:
        return None
    return f"{data['p50_ms']:.2f} / {data['p95_ms']:.2f}"


# -- entry point ----------------------------------------------------------------------------------


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repo", action="append", default=[], help="Repository to bench (repeatable).")
    parser.add_argument("--embedder", choices=("static", "minilm", "fake"), default="static",
                        help="The embedder the whole index is built with: static (woods's default, one phase), "
                             "minilm (the contextual model as the only embedder: the path before the static model), "
                             "fake (tests).")
    parser.add_argument("--json", action="store_true", help="Print the full JSON on stdout (table to stderr).")
    parser.add_argument("--out", type=Path, help="Also write the full JSON to this file.")
    parser.add_argument("--work-dir", type=Path, help="Where stores and texts go (default: a new /tmp dir).")
    parser.add_argument("--cold-runs", type=int, default=DEFAULT_COLD_RUNS, help="Cold searches per query kind.")
    parser.add_argument("--warm-per-kind", type=int, default=DEFAULT_WARM_PER_KIND, help="Warm queries per kind.")
    parser.add_argument("--skip-model", action="store_true", help="Skip the raw model throughput run.")
    parser.add_argument("--sample-every", type=int, default=1,
                        help="Raw model run: embed every K-th batch only and scale by tokens (default 1: all).")
    parser.add_argument("--skip-extract", action="store_true", help="Skip extraction vs parse.")
    parser.add_argument("--keep", action="store_true", help="Keep the embedded texts dump.")
    # Worker mode (internal): this script re-invoked in a fresh process for one measurement.
    parser.add_argument("--worker", choices=sorted(WORKERS), help=argparse.SUPPRESS)
    parser.add_argument("--result", help=argparse.SUPPRESS)
    parser.add_argument("--store", help=argparse.SUPPRESS)
    parser.add_argument("--texts", help=argparse.SUPPRESS)
    parser.add_argument("--baseline", help=argparse.SUPPRESS)
    parser.add_argument("--queries", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker is None and not args.repo:
        parser.error("pass at least one --repo PATH")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    if args.worker:
        if args.repo:
            args.repo = args.repo[0]
        return run_worker(args)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    work_root = args.work_dir or Path(tempfile.mkdtemp(prefix="woods-index-bench-", dir="/tmp"))
    runs: list[dict[str, Any]] = []
    for ordinal, repo in enumerate(args.repo):
        path = Path(repo).resolve()
        if not path.is_dir():
            sys.stderr.write(f"index_bench: not a directory: {repo}\n")
            return 2
        runs.append(bench_repo(path, args, work_root, ordinal))
    payload = {
        "schema_version": BENCH_SCHEMA_VERSION,
        "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "python": sys.version.split()[0],
        "cpus": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count(),
        "work_dir": str(work_root),
        "runs": runs,
    }
    if args.out:
        write_json(args.out, payload)
    report = human_report(runs)
    if args.json:
        sys.stderr.write(report + "\n")
        sys.stdout.write(json.dumps(payload, sort_keys=True, ensure_ascii=False) + "\n")
    else:
        sys.stdout.write(report + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
