"""Cold `woods search` latency, old code against new, interleaved in one run.

Why: a command line people reach for must start fast, and a change to its output (snippets,
colour, name warnings, filters) could slow every search by the modules it imports or the rows it
reads. So the same queries are asked of the same index by fresh `python -m woods search`
processes of two checkouts — the baseline (`--rev`, default `main`, exported with `git archive`)
and this working tree — alternating old/new and new/old run by run, so machine load drifts over
both equally; medians are reported side by side with their ratio.

    HF_HUB_OFFLINE=1 python bench/cli_latency_bench.py [--rev main | --old DIR] [--repo DIR]
        [--embedder minilm|fake] [--runs 15] [--json] [--out FILE]

`--repo` (default: a copy of fixtures/rails_app) is indexed once by the new code into a temporary
store both read; the human output (what a terminal user sees, stdout to a file so it is a pipe)
is timed, not `--json`. Run 0 of each case is not kept: it writes the byte code of every module
(into a scratch `PYTHONPYCACHEPREFIX`) and warms the page cache.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

BENCH_DIR = Path(__file__).resolve().parent
REPO_ROOT = BENCH_DIR.parent
for _path in (str(BENCH_DIR), str(REPO_ROOT)):
    if _path not in sys.path:
        sys.path.insert(0, _path)

from _common import emit_report, format_table, run_child  # noqa: E402

BENCH_SCHEMA_VERSION = 1
# One query per path through a cold process: the lexical leg alone (no numpy, no model), the
# default fused search (query encoder + FAISS), a symbol that exists, and one that does not (the
# name-index lookup behind "no unit named …").
CASES: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("keyword", "charge a customer's invoice", ("--strategy", "keyword")),
    ("auto", "charge a customer's invoice", ()),
    ("symbol", "Billing::Invoice", ()),
    ("missing symbol", "zorblaxQuuxHandler", ()),
)
# 15 pairs per case: medians stable to a few ms on a quiet 2-core machine.
DEFAULT_RUNS = 15


def export_rev(rev: str, into: Path) -> Path:
    """`git archive REV` of this repository unpacked into `into` (a plain tree, not a worktree)."""
    into.mkdir(parents=True, exist_ok=True)
    archive = subprocess.run(["git", "-C", str(REPO_ROOT), "archive", rev], capture_output=True, check=True)
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive.stdout, check=True)
    return into


def index_repo(repo: Path, store: Path, embedder: str) -> None:
    env = dict(os.environ, PYTHONPATH=str(REPO_ROOT), HF_HUB_OFFLINE="1")
    if embedder == "fake":
        env["WOODS_EMBEDDER"] = "fake"
    subprocess.run([sys.executable, "-m", "woods", "index", str(repo), "--store", str(store), "--json"],
                   env=env, check=True, capture_output=True)


def time_case(checkouts: dict[str, Path], store: Path, query: str, extra: tuple[str, ...], runs: int,
              pycache: Path) -> dict[str, Any]:
    """Wall and CPU (user + system) seconds of `woods search` per checkout, the two alternating
    (old, new / new, old …). CPU time moves less than wall time with the machine's load."""
    seconds: dict[str, list[float]] = {name: [] for name in checkouts}
    cpu: dict[str, list[float]] = {name: [] for name in checkouts}
    errors: dict[str, list[str]] = {name: [] for name in checkouts}
    names = list(checkouts)
    for run in range(runs + 1):  # run 0 warms the page cache and the byte-code caches; not kept
        order = names if run % 2 == 0 else list(reversed(names))
        for name in order:
            # Byte code goes to a scratch prefix (nothing is written in a checkout) and is written
            # there by run 0 even when the caller's environment says not to: a timed run then
            # reads compiled code, as an installed woods does, for both trees alike.
            env = {"PYTHONPATH": str(checkouts[name]), "HF_HUB_OFFLINE": "1", "NO_COLOR": "1",
                   "PYTHONPYCACHEPREFIX": str(pycache), "PYTHONDONTWRITEBYTECODE": ""}
            argv = [sys.executable, "-m", "woods", "search", query, "--store", str(store), *extra]
            child = run_child(argv, env=env, cwd=str(checkouts[name]), timeout=120)
            if child.returncode != 0:
                errors[name].append(child.stderr.strip()[-300:])
            elif run:
                seconds[name].append(child.wall_seconds)
                cpu[name].append(child.user_seconds + child.system_seconds)
    return {
        name: {
            "median_ms": round(statistics.median(values) * 1000, 1) if values else None,
            "min_ms": round(min(values) * 1000, 1) if values else None,
            "cpu_median_ms": round(statistics.median(cpu[name]) * 1000, 1) if cpu[name] else None,
            "n": len(values),
            "errors": errors[name],
        }
        for name, values in seconds.items()
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rev", default="main", help="baseline git revision (exported with git archive)")
    parser.add_argument("--old", type=Path, help="a checkout of the baseline instead of --rev")
    parser.add_argument("--repo", type=Path, default=REPO_ROOT / "fixtures" / "rails_app")
    parser.add_argument("--embedder", choices=("minilm", "fake"), default="minilm")
    parser.add_argument("--runs", type=int, default=DEFAULT_RUNS)
    parser.add_argument("--cases", default=",".join(label for label, _q, _a in CASES),
                        help="comma-separated subset of: " + ", ".join(label for label, _q, _a in CASES))
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="woods-cli-bench-") as scratch:
        work = Path(scratch)
        old = args.old or export_rev(args.rev, work / "old")
        repo = work / "repo"
        shutil.copytree(args.repo, repo, ignore=shutil.ignore_patterns(".woods"))
        store = work / "store"
        index_repo(repo, store, args.embedder)
        checkouts = {"old": old.resolve(), "new": REPO_ROOT}
        pycache = work / "pycache"
        started = time.strftime("%Y-%m-%d %H:%M")
        load_start = [round(v, 2) for v in os.getloadavg()]
        cases = {label: {"query": query, "args": list(extra),
                         **time_case(checkouts, store, query, extra, args.runs, pycache)}
                 for label, query, extra in CASES if label in args.cases.split(",")}
        result = {
            "schema_version": BENCH_SCHEMA_VERSION,
            "started": started,
            "baseline": str(args.old) if args.old else args.rev,
            "embedder": args.embedder,
            "repo": str(args.repo),
            "runs": args.runs,
            "loadavg": [load_start, [round(v, 2) for v in os.getloadavg()]],
            "cases": cases,
        }
    rows = []
    for label, case in cases.items():
        old, new = case["old"], case["new"]

        def ratio(key: str, old: dict[str, Any] = old, new: dict[str, Any] = new) -> float | None:
            return round(new[key] / old[key], 3) if old[key] and new[key] else None

        rows.append([label, old["median_ms"], new["median_ms"], ratio("median_ms"), old["cpu_median_ms"],
                     new["cpu_median_ms"], ratio("cpu_median_ms"), old["n"],
                     "; ".join(old["errors"] + new["errors"])[:80]])
    table = format_table(["case", "old wall p50 ms", "new wall p50 ms", "new/old", "old cpu p50 ms", "new cpu p50 ms",
                          "new/old", "pairs", "errors"], rows)
    table += f"\nload average {result['loadavg'][0]} → {result['loadavg'][1]}"
    emit_report(result, table, args.out, args.json)


if __name__ == "__main__":
    main()
