"""An organisation-sized PostgreSQL store (N chunks over M repositories) and every strategy's
search latency over it, with the static model's query embedder.

    python bench/org_store.py generate --url URL --chunks 1000000 --repos 150   # once (long)
    python bench/org_store.py refresh --url URL        # the organisation vector index (generate does it last)
    python bench/org_store.py measure --url URL --out bench/org_store_results.json

Why synthetic: no organisation's code ships with woods. What is kept realistic is what search
cost depends on: the term distribution (each unit's words are drawn from the token frequencies of
CPython's standard library, cut by woods's own tokenizer, with a per-repository topic skew, so
common words match hundreds of thousands of units and rare ones a handful), unit shapes (names
and qualifiers from the vocabulary, bodies of log-normal length), repository sizes (log-normal:
a few large repositories, many small ones), a few call edges per unit, and clustered L2-normalised
384-d vectors (one centre per 500 chunks), recorded under woods's static model so that a query is
embedded as in production. Each repository is written as one local generation (the real writer:
SQLite, FTS5, postings, FAISS) and published with the real publisher.

`measure` opens the whole store as one index (`woods.Index(url)`: every repository searched
together) and times `search` for each strategy over questions and identifiers it never saw
before (the first time each is asked: no reader cache helps), then the same questions again
(warm). It also times a single repository's store (`--repo`) for comparison.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import re
import statistics
import sys
import sysconfig
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

DIM = 384
STRATEGIES = ["auto", "hybrid", "vector", "keyword", "lexical", "graph", "direct"]
TYPES = ["method", "function", "class", "module", "document"]


def vocabulary(limit: int = 60_000) -> tuple[list[str], np.ndarray]:
    """Tokens of the standard library's Python files (woods.tokens.code_tokens) and their
    frequencies, most frequent first."""
    from woods.tokens import code_tokens

    counts: collections.Counter[str] = collections.Counter()
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    for path in sorted(stdlib.rglob("*.py")):
        if "test" in path.parts or "site-packages" in path.parts:
            continue
        try:
            counts.update(code_tokens(path.read_text(encoding="utf-8", errors="replace")))
        except OSError:
            continue
    words = [w for w, _n in counts.most_common(limit) if re.fullmatch(r"[a-z][a-z0-9_]{1,30}", w)]
    freq = np.array([counts[w] for w in words], dtype=np.float64)
    return words, freq / freq.sum()


def repo_sizes(total: int, repos: int, rng: np.random.Generator) -> list[int]:
    raw = rng.lognormal(mean=0.0, sigma=1.2, size=repos)
    sizes = np.maximum(200, np.round(raw / raw.sum() * total)).astype(int)
    sizes[np.argmax(sizes)] += total - int(sizes.sum())
    return sorted(sizes.tolist(), reverse=True)


def write_repo(build: Path, name: str, size: int, words: list[str], probs: np.ndarray, rng: np.random.Generator,
               embedder: dict[str, Any]) -> None:
    from woods.store import index as layout
    from woods.store.metadata import ChunkRow, FileRow, LexicalDocument, MetadataWriter
    from woods.store.vectors import write_vectors

    # Topic skew: this repository uses a random tenth of the vocabulary three times as often.
    boost = np.ones(len(words))
    boost[rng.choice(len(words), size=len(words) // 10, replace=False)] = 3.0
    p = probs * boost
    p /= p.sum()
    writer = MetadataWriter(build / layout.METADATA_FILE)
    per_file = 12
    files = (size + per_file - 1) // per_file
    lengths = np.clip(rng.lognormal(3.6, 0.7, size=size), 5, 400).astype(int)
    drawn = rng.choice(len(words), size=int(lengths.sum()) + size * 3, p=p)
    cursor = 0
    keys: list[str] = []
    idents: list[str] = []
    for f in range(files):
        module = f"{words[drawn[cursor % len(drawn)]]}_{f}"
        path = f"src/{name}/{module}.py"
        writer.add_file(FileRow(path, "python", f"{f:064x}", 1000, 0, min(per_file, size - f * per_file), ()))
        for u in range(min(per_file, size - f * per_file)):
            i = f * per_file + u
            n = int(lengths[i])
            name_words = [words[w] for w in drawn[cursor : cursor + 2]]
            body = [words[w] for w in drawn[cursor + 3 : cursor + 3 + n]]
            cursor += 3 + n
            unit_type = TYPES[i % len(TYPES)] if i % 7 == 0 else "method"
            short = "_".join(name_words) if unit_type != "class" else "".join(w.title() for w in name_words)
            identifier = f"{name}.{module}.{short}" if unit_type != "method" else f"{name}.{module}.Cls{f}.{short}"
            key = identifier if identifier not in idents[-per_file:] else f"{identifier}#{i}"
            record = {"identifier": identifier, "type": unit_type, "language": "python", "file_path": path,
                      "line_start": 1 + 10 * u, "line_end": 9 + 10 * u, "namespace": f"{name}.{module}",
                      "signature": f"def {short}(self):", "source_code": "def " + short + "(self):\n    " + " ".join(body),
                      "source_hash": f"{i:064x}", "metadata": {}, "dependencies": [], "dependents": []}
            writer.add_unit(key, record, f"{i:064x}", float(rng.random()) / size, float(rng.random()),
                            lexical=LexicalDocument(name=" ".join([short, *name_words]),
                                                    qualifier=f"{name} {module}", path=f"src {name} {module} py",
                                                    doc=f"def {short} self", body=" ".join(body)))
            writer.add_chunk(ChunkRow(key, i, key, 0, "whole", 1, 9, f"{i:064x}"))
            keys.append(key)
            idents.append(identifier)
    edges = []
    for i, key in enumerate(keys):
        for j, target in enumerate(rng.integers(0, len(keys), size=2).tolist()):
            edges.append((key, idents[i], idents[target], keys[target], "calls", j))
    writer.add_edges(edges)
    manifest = {"schema_version": layout.SCHEMA_VERSION, "woods_version": "bench", "created_at": "",
                "root": None, "embedder": embedder,
                "counts": {"files": files, "units": size, "chunks": size, "edges": len(edges),
                           "resolved_edges": len(edges)}, "vectors": {"state": layout.VECTORS_COMPLETE}}
    writer.set_meta({"schema_version": str(layout.SCHEMA_VERSION), "manifest": manifest})
    writer.commit_and_close()
    centres = rng.standard_normal((max(1, size // 500), DIM)).astype(np.float32)
    vectors = centres[rng.integers(0, len(centres), size=size)] + 0.7 * rng.standard_normal((size, DIM)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    write_vectors(build / layout.VECTORS_FILE, np.arange(size, dtype=np.int64), vectors, DIM)
    (build / layout.MANIFEST_FILE).write_text(json.dumps(manifest))


def generate(url: str, chunks: int, repos: int, seed: int, out: Path | None) -> None:
    from woods.embedding.provider import embedder_description
    from woods.embedding.static import StaticEmbeddingProvider
    from woods.store.pg_connect import connect
    from woods.store.pg_publish import ensure_schema, publish_generation

    rng = np.random.default_rng(seed)
    words, probs = vocabulary()
    embedder = embedder_description(StaticEmbeddingProvider())
    sizes = repo_sizes(chunks, repos, rng)
    conn = connect(url)
    ensure_schema(conn, url)
    done = {str(r[0]) for r in conn.execute("SELECT name FROM woods.repos WHERE current_generation IS NOT NULL")}
    report: dict[str, Any] = {"chunks": chunks, "repos": repos, "sizes": sizes, "vocabulary": len(words),
                              "write_s": 0.0, "publish_s": 0.0}
    work = Path(tempfile.mkdtemp(prefix="woods-org-"))
    for index, size in enumerate(sizes):
        name = f"repo{index:03d}"
        repo_rng = np.random.default_rng(seed * 1000 + index)
        if name in done:
            continue
        build = work / f"building-{name}"
        build.mkdir()
        started = time.perf_counter()
        write_repo(build, name, size, words, probs, repo_rng, embedder)
        report["write_s"] += time.perf_counter() - started
        started = time.perf_counter()
        publish_generation(conn, url, name, build)
        report["publish_s"] += time.perf_counter() - started
        for entry in build.iterdir():
            entry.unlink()
        build.rmdir()
        print(f"{name}: {size} chunks, write+publish {report['write_s']:.0f}s+{report['publish_s']:.0f}s so far",
              file=sys.stderr, flush=True)
    conn.close()
    report["write_s"] = round(report["write_s"], 1)
    report["publish_s"] = round(report["publish_s"], 1)
    report["org_index"] = refresh(url)
    if out is not None:
        out.write_text(json.dumps(report, indent=2) + "\n")


def refresh(url: str) -> dict[str, Any]:
    """Build the organisation vector index over every repository (what a fleet run does last)."""
    from woods.store.pg_connect import connect
    from woods.store.pg_publish import refresh_org_vectors

    conn = connect(url)
    started = time.perf_counter()
    try:
        done: dict[str, Any] = dict(refresh_org_vectors(conn, url))
    finally:
        conn.close()
    done["seconds"] = round(time.perf_counter() - started, 1)
    print(f"organisation vector index: {done}", file=sys.stderr, flush=True)
    return done


def queries(words: list[str], rng: np.random.Generator, names: list[str], count: int) -> list[str]:
    """Questions of 2-4 words drawn by frequency from ranks 30-20,000 (real questions skip the
    commonest tokens as stop words but do hit common ones), and identifiers of stored units."""
    pool = np.arange(30, min(20_000, len(words)))
    weights = 1.0 / (pool + 1.0)
    weights /= weights.sum()
    out = []
    for i in range(count):
        if i % 4 == 3:
            out.append(names[int(rng.integers(0, len(names)))])
        else:
            out.append(" ".join(words[int(w)] for w in rng.choice(pool, size=int(rng.integers(2, 5)), p=weights)))
    return out


def _percentiles(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)
    return {"p50_ms": round(1000 * statistics.median(ordered), 1),
            "p95_ms": round(1000 * ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))], 1), "n": len(ordered)}


def measure(url: str, count: int, seed: int, single: str | None) -> dict[str, Any]:
    from woods.api import Index

    rng = np.random.default_rng(seed + 7)
    words, _probs = vocabulary()
    report: dict[str, Any] = {"load_before": " ".join(f"{x:.1f}" for x in os.getloadavg())}
    views = [("combined", None)] + ([("single", single)] if single else [])
    for label, repo in views:
        with Index(url, repo=repo) as index:
            status = index.status().to_dict()
            report[f"{label}_chunks"] = status.get("counts", {}).get("chunks")
            names = [r.identifier for r in index.search("handle request", limit=10, strategy="keyword").hits] or ["x"]
            asked = queries(words, rng, names, count)
            index.search("warm up the encoder and connection", limit=10)
            results: dict[str, Any] = {}
            for strategy in STRATEGIES:
                options: dict[str, Any] = {"mode": "lexical"} if strategy == "lexical" else (
                    {} if strategy == "auto" else {"strategy": strategy})
                cold = []
                for query in asked:
                    started = time.perf_counter()
                    index.search(query, limit=10, **options)
                    cold.append(time.perf_counter() - started)
                warm = []
                for query in asked:
                    started = time.perf_counter()
                    index.search(query, limit=10, **options)
                    warm.append(time.perf_counter() - started)
                results[strategy] = {"first_ask": _percentiles(cold), "asked_again": _percentiles(warm)}
                print(label, strategy, results[strategy], file=sys.stderr, flush=True)
            report[label] = results
    report["load_after"] = " ".join(f"{x:.1f}" for x in os.getloadavg())
    return report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("command", choices=["generate", "refresh", "measure"])
    parser.add_argument("--url", required=True, help="PostgreSQL URL (a database of its own).")
    parser.add_argument("--chunks", type=int, default=1_000_000)
    parser.add_argument("--repos", type=int, default=150)
    parser.add_argument("--queries", type=int, default=40)
    parser.add_argument("--seed", type=int, default=11)
    parser.add_argument("--single", default="repo000", help="A repository to time alone too (measure).")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    if args.command == "generate":
        generate(args.url, args.chunks, args.repos, args.seed, args.out)
        return
    if args.command == "refresh":
        print(json.dumps(refresh(args.url)))
        return
    report = measure(args.url, args.queries, args.seed, args.single)
    text = json.dumps(report, indent=2)
    print(text)
    if args.out is not None:
        args.out.write_text(text + "\n")


if __name__ == "__main__":
    main()
