"""In-process semble-dev evaluation: index each benchmark repository once, then score ranking
configurations over all 478 queries in seconds instead of one process per query.

The official numbers come from the benchmark's own harness (`run.py tool`, one `woods search`
process per query); this script is for development: it uses the harness's metric functions
(imported from `../shared/semble-dev/run.py`, file-level NDCG@10 exactly as the harness computes
it) and woods' retriever in-process, asked as `woods search` asks it (`score`), so an ablation or a
weight change is measured on the same indexes in one run. On the same indexes the default `score`
gives the harness's own ten files for every query (all 478 compared, 2026-12-03).

    python bench/semble_eval.py index                # build/refresh indexes under --stores
    python bench/semble_eval.py score [--config K=V]… [--mode hybrid|lexical|vector] [--json PATH]
    python bench/semble_eval.py ablate               # hybrid vs each leg, per category

Indexes live outside the checkouts (`--stores`, default /tmp/woods-semble-stores/<repo>), so the
benchmark trees stay untouched.
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib.util
import json
import os
import statistics
import sys
import time
from collections import defaultdict
from pathlib import Path
from types import ModuleType
from typing import Any

BENCH_DIR = Path(__file__).resolve().parent
REPO = BENCH_DIR.parent
for _path in (str(BENCH_DIR), str(REPO)):  # run from a checkout: woods need not be installed
    if _path not in sys.path:
        sys.path.insert(0, _path)

from _common import code_search_config  # noqa: E402

# The harness beside the checkout (`../shared/semble-dev`); WOODS_SEMBLE_DEV names another place
# (a git worktree of the checkout lives one level deeper).
SHARED = Path(os.environ.get("WOODS_SEMBLE_DEV") or REPO.parent / "shared" / "semble-dev")


def load_harness() -> ModuleType:
    """The benchmark's run.py as a module (its metric functions and repository specs)."""
    spec = importlib.util.spec_from_file_location("semble_run", SHARED / "run.py")
    if spec is None or spec.loader is None:
        raise SystemExit(f"semble-dev harness not found at {SHARED / 'run.py'}")
    module = importlib.util.module_from_spec(spec)
    sys.modules["semble_run"] = module
    spec.loader.exec_module(module)
    return module


def repositories(harness: ModuleType, only: list[str]) -> list[tuple[str, Any, Path, Path, list[Any]]]:
    """(name, spec, checkout, benchmark dir, tasks) for every prepared repository (or `only`)."""
    specs = harness.load_specs()
    tasks = harness.grouped(harness.load_tasks(specs))
    out = []
    for name in sorted(specs):
        if only and name not in only:
            continue
        spec = specs[name]
        checkout = harness.checkout_dir_for(name, specs)
        bench_dir = checkout / spec.benchmark_root if spec.benchmark_root else checkout
        out.append((name, spec, checkout, bench_dir, tasks[name]))
    return out


def cmd_index(args: argparse.Namespace) -> None:
    from woods.embedding.select import index_provider
    from woods.indexing import index_repository, parse_workers

    harness = load_harness()
    provider: list[Any] = []

    def factory() -> Any:
        if not provider:
            provider.append(_provider(args.provider) if args.provider else index_provider())
        return provider[0]

    for name, _spec, _checkout, bench_dir, _tasks in repositories(harness, args.repo):
        started = time.perf_counter()
        summary = index_repository(
            bench_dir, Path(args.stores) / name, factory, workers=parse_workers(), full=args.full, allow_purge=True
        )
        print(
            f"{name:20s} files={summary.files:5d} units={summary.units:6d} chunks={summary.chunks:6d} "
            f"embedded={summary.embedded:6d} {time.perf_counter() - started:7.1f}s",
            flush=True,
        )


# Index-time encoders to compare (`index --provider`): the default is woods' own choice.
PROVIDERS = ("st-fp32", "st-bf16", "onnx-fp32", "onnx-int8", "static")


def _provider(name: str) -> Any:
    if name == "static":  # woods's own static model ($WOODS_STATIC_MODEL=<dir>: another build of it)
        from woods.embedding.static import StaticEmbeddingProvider

        return StaticEmbeddingProvider()
    if name.startswith("st-"):
        from woods.embedding.sentence import SentenceTransformerProvider

        return SentenceTransformerProvider(precision="fp32" if name == "st-fp32" else "bf16")
    from woods.embedding.onnx import OnnxMiniLMProvider

    return OnnxMiniLMProvider(precision="fp32" if name == "onnx-fp32" else "int8")


# Mode → (retriever mode, strategy) that runs it: `hybrid` is what `woods search` runs by default
# (auto: the fused legs, then exact-name promotion); `lexical` what `woods search --mode lexical`
# runs (the lexical leg with every signal and the promotion: no model at all); `keyword` and
# `vector` one raw leg (the ablations).
STRATEGIES: dict[str, tuple[str, str | None]] = {
    "hybrid": ("semantic", None), "lexical": ("lexical", None), "keyword": ("semantic", "keyword"),
    "vector": ("semantic", "vector"),
}


def score(args: argparse.Namespace, mode: str, config: Any) -> dict[str, Any]:
    """Every task through the retriever as `woods search QUERY --limit N` asks it — the same
    strategy, exact-name promotion and one-shot (numpy) query encoder — with `config` as the code
    search weights, so a default run gives the harness's own per-query files."""
    from woods.embedding.select import query_embedder
    from woods.retrieval.retriever import Retriever
    from woods.store.index import IndexStores

    harness = load_harness()
    per_repo: list[dict[str, Any]] = []
    encoder: dict[str, Any] = {}
    for name, spec, checkout, bench_dir, tasks in repositories(harness, args.repo):
        store_dir = Path(args.stores) / name
        with IndexStores.open(store_dir) as stores:
            description = stores.manifest.embedder

            def embedder(description: dict[str, Any] = description) -> Any:
                key = description["fingerprint"]
                if key not in encoder:
                    encoder[key] = query_embedder(description, one_shot=True)
                return encoder[key]

            retriever_mode, strategy = STRATEGIES[mode]
            retriever = Retriever(stores, embedder, mode=retriever_mode, profile="code", code_config=config)
            rows = []
            for task in tasks:
                started = time.perf_counter()
                result = retriever.retrieve(task.query, strategy=strategy, limit=args.limit)
                elapsed = (time.perf_counter() - started) * 1000
                paths = [harness.to_repo_rel(e.file_path or "", bench_dir, checkout) for e in result.candidates]
                files = harness.dedupe_files(paths)
                ndcg, ranks = harness.file_ndcg(files, task)
                rows.append({"query": task.query, "category": task.category, "ndcg10": ndcg, "files": files,
                             "ms": elapsed, "targets": task.target_files})
        by_category: dict[str, list[float]] = defaultdict(list)
        for row in rows:
            by_category[row["category"]].append(row["ndcg10"])
        per_repo.append({
            "repo": name, "language": spec.language, "ndcg10": statistics.fmean(r["ndcg10"] for r in rows),
            "by_category": {k: statistics.fmean(v) for k, v in by_category.items()}, "queries": rows,
        })
    categories = sorted({c for r in per_repo for c in r["by_category"]})
    overall = statistics.fmean(r["ndcg10"] for r in per_repo)
    by_category = {c: statistics.fmean(r["by_category"][c] for r in per_repo if c in r["by_category"]) for c in categories}
    latencies = sorted(q["ms"] for r in per_repo for q in r["queries"])
    return {"mode": mode, "config": dataclasses.asdict(config), "ndcg10": overall, "by_category": by_category,
            "p50_ms": latencies[len(latencies) // 2], "repos": per_repo}


def print_report(report: dict[str, Any], verbose: bool) -> None:
    cats = " ".join(f"{k}={v:.3f}" for k, v in report["by_category"].items())
    print(f"[{report['mode']}] NDCG@10 {report['ndcg10']:.4f}  {cats}  p50 {report['p50_ms']:.1f} ms")
    if verbose:
        for repo in report["repos"]:
            cats = " ".join(f"{k[:4]}={v:.2f}" for k, v in repo["by_category"].items())
            print(f"  {repo['repo']:20s} {repo['language']:11s} {repo['ndcg10']:.3f}  {cats}")


def cmd_score(args: argparse.Namespace) -> None:
    report = score(args, args.mode, code_search_config(args.config))
    print_report(report, args.verbose)
    if args.misses:
        for repo in report["repos"]:
            for q in repo["queries"]:
                if q["ndcg10"] < args.misses:
                    print(f"  MISS {repo['repo']}: {q['query']!r} gold={q['targets']} got={q['files'][:5]}")
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=1))


def cmd_ablate(args: argparse.Namespace) -> None:
    config = code_search_config(args.config)
    for mode in ("keyword", "lexical", "vector", "hybrid"):
        print_report(score(args, mode, config), args.verbose)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--stores", default="/tmp/woods-semble-stores")
    parser.add_argument("--repo", action="append", default=[])
    sub = parser.add_subparsers(dest="command", required=True)
    index = sub.add_parser("index")
    index.add_argument("--full", action="store_true")
    index.add_argument("--provider", choices=PROVIDERS, help="index-time encoder (default: woods' default)")
    index.set_defaults(func=cmd_index)
    for name, func in (("score", cmd_score), ("ablate", cmd_ablate)):
        p = sub.add_parser(name)
        p.add_argument("--config", action="append", default=[], help="CodeSearchConfig field=value")
        p.add_argument("--mode", default="hybrid", choices=tuple(STRATEGIES))
        p.add_argument("--limit", type=int, default=10)
        p.add_argument("--verbose", "-v", action="store_true")
        p.add_argument("--misses", type=float, default=0.0, help="print queries scoring below this")
        p.add_argument("--json")
        p.set_defaults(func=func)
    args = parser.parse_args()
    args.func(args)


if __name__ == "__main__":
    main()
