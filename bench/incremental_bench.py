"""Incremental bench: a full index, then re-indexes after no change, a 1-file edit and a 1-file delete.

Why: the promise of incremental indexing is that an edit costs about what the edit touched, not
what the repository holds (the issue's goal: a 1-file re-index under 5 % of the full index). The
four runs happen in one bench run, on one scratch copy of real code, each in a fresh process (what
a user gets from `woods index` after saving a file), so their ratios are comparable.

    HF_HUB_OFFLINE=1 /tmp/venv/bin/python bench/incremental_bench.py --repo /tmp/bench/stdlib \
        [--repo /tmp/bench/redmine-pkg/usr/share/redmine] [--embedder minilm|fake] [--json]

Several `--repo` trees are copied side by side under the scratch tree (one directory each). The
bench edits its copy only. `--baseline-store DIR --baseline-seconds S` uses a store already built
from the same tree as the full index (copied, never modified) and reports its build time as
given: for a model whose full index takes an hour; the JSON says so.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

BENCH_DIR = Path(__file__).resolve().parent
REPO_ROOT = BENCH_DIR.parent
# The bench runs from a checkout (woods need not be installed): make the package importable.
for _path in (str(BENCH_DIR), str(REPO_ROOT)):
    if _path not in sys.path:
        sys.path.insert(0, _path)

from _common import emit_report, format_table, run_child  # noqa: E402

BENCH_SCHEMA_VERSION = 1
DEFAULT_REPO = Path("/tmp/bench/stdlib")
# The goal: re-indexing after a 1-file change costs under 5 % of a full index.
ONE_FILE_GOAL = 0.05
# Never copied: bytecode caches, and the venv's third-party packages (not the code under test).
COPY_IGNORE = shutil.ignore_patterns("__pycache__", "site-packages", "*.pyc", ".woods")
# Appended to the edited module: a new top-level function, as a user would add one.
ADDED_FUNCTION = '''

def woods_incremental_bench_added(values, scale=2):
    """Scale every value and drop the negative ones (added by bench/incremental_bench.py)."""
    return [value * scale for value in values if value >= 0]
'''
# Source suffixes the edit/delete targets are drawn from (the stdlib is Python; a Rails tree Ruby).
TARGET_SUFFIXES = (".py", ".rb")
# Package markers are not edit targets: removing one changes the package layout, which (by
# design) invalidates every cached parse, so it would measure a different thing.
LAYOUT_FILES = frozenset({"__init__.py"})
PHASES = ("full", "no_change", "one_file_change", "one_file_delete")
CHILD_TIMEOUT_SECONDS = 4 * 3600


def loadavg() -> list[float]:
    return [round(v, 2) for v in os.getloadavg()]


# -- the scratch tree ----------------------------------------------------------------------------


def copy_trees(repos: Sequence[Path], tree: Path) -> dict[str, str]:
    """Fresh copy of each repo under `tree` (mtimes kept: copy2; symlinks copied as links, dangling
    ones included, as in the original); a single repo is the tree itself."""
    if tree.exists():
        shutil.rmtree(tree)
    if len(repos) == 1:
        shutil.copytree(repos[0], tree, ignore=COPY_IGNORE, copy_function=shutil.copy2, symlinks=True)
        return {str(repos[0]): "."}
    tree.mkdir(parents=True)
    placed: dict[str, str] = {}
    for repo in repos:
        name = repo.resolve().name
        while name in placed.values():
            name += "_"
        shutil.copytree(repo, tree / name, ignore=COPY_IGNORE, copy_function=shutil.copy2, symlinks=True)
        placed[str(repo)] = name
    return placed


def pick_targets(tree: Path) -> tuple[Path, Path]:
    """The median-sized source file (to edit) and the next one up (to delete); ties by path."""
    candidates = sorted(
        (path.stat().st_size, path.relative_to(tree).as_posix(), path)
        for path in tree.rglob("*")
        if path.suffix in TARGET_SUFFIXES and path.name not in LAYOUT_FILES and path.is_file()
        and not any(part in ("test", "tests") or part.startswith("test_") for part in path.relative_to(tree).parts)
    )
    if len(candidates) < 2:
        raise SystemExit(f"incremental_bench: fewer than 2 source files under {tree}")
    middle = len(candidates) // 2
    return candidates[middle][2], candidates[middle + 1][2]


# -- one index run (in a child process) ---------------------------------------------------------


def worker(args: argparse.Namespace) -> int:
    from query_bench import index_provider_for, skip_overlong_units

    from woods.indexing import index_repository

    skipped = skip_overlong_units() if args.skip_overlong_units else []
    started = time.perf_counter()
    summary = index_repository(args.tree, args.store, lambda: index_provider_for(args.embedder), full=args.full,
                               allow_purge=False)
    wall = time.perf_counter() - started
    payload = {"summary": summary.to_dict(), "in_process_seconds": round(wall, 3),
               "skipped_overlong_units": len(skipped)}
    Path(args.result).write_text(json.dumps(payload, sort_keys=True, default=str), encoding="utf-8")
    return 0


def run_phase(name: str, tree: Path, store: Path, embedder: str, work: Path, *, full: bool,
              skip_overlong: bool) -> dict[str, Any]:
    result_path = work / f"{name}.result.json"
    result_path.unlink(missing_ok=True)
    argv = [sys.executable, str(Path(__file__).resolve()), "--worker", "--tree", str(tree), "--store", str(store),
            "--embedder", embedder, "--result", str(result_path)]
    if full:
        argv.append("--full")
    if skip_overlong:
        argv.append("--skip-overlong-units")
    before = loadavg()
    child = run_child(argv, env={"HF_HUB_OFFLINE": "1"}, cwd=REPO_ROOT, timeout=CHILD_TIMEOUT_SECONDS)
    if child.returncode != 0 or not result_path.exists():
        raise SystemExit(f"incremental_bench: phase {name} failed (exit {child.returncode}):\n{child.stderr[-2000:]}")
    payload = json.loads(result_path.read_text(encoding="utf-8"))
    summary = payload["summary"]
    return {
        "wall_seconds": round(child.wall_seconds, 2),
        "index_seconds": payload["in_process_seconds"],
        "phase_seconds": summary.get("seconds", {}),
        "phase_seconds_total": round(sum(summary.get("seconds", {}).values()), 2),
        "files": summary.get("files"),
        "reused_files": summary.get("reused_files"),
        "units": summary.get("units"),
        "removed_units": summary.get("removed_units"),
        "chunks": summary.get("chunks"),
        "embedded": summary.get("embedded"),
        "reused_vectors": summary.get("reused_vectors"),
        "peak_rss_mib": child.peak_rss_mib,
        "user_seconds": child.user_seconds,
        "skipped_overlong_units": payload.get("skipped_overlong_units", 0),
        "loadavg_before": before,
        "loadavg_after": loadavg(),
    }


def copied_baseline(source: Path, store: Path, seconds: float) -> dict[str, Any]:
    """A store built earlier from the same tree, copied in as the full index (never modified)."""
    from woods.store.index import IndexStores

    if store.exists():
        shutil.rmtree(store)
    started = time.perf_counter()
    shutil.copytree(source, store, ignore=shutil.ignore_patterns("lock"))
    copy_seconds = time.perf_counter() - started
    with IndexStores.open(store) as stores:
        counts = stores.manifest.counts
        created = stores.manifest.data.get("created_at")
    return {
        "wall_seconds": seconds,
        "index_seconds": seconds,
        "phase_seconds": {},
        "phase_seconds_total": seconds,
        "files": counts.get("files"),
        "reused_files": 0,
        "units": counts.get("units"),
        "chunks": counts.get("chunks"),
        "embedded": counts.get("chunks"),
        "copied_from": str(source),
        "copied_created_at": created,
        "copy_seconds": round(copy_seconds, 2),
        "note": "full index built earlier (not in this run); wall_seconds is the build time passed in",
    }


# -- report --------------------------------------------------------------------------------------


def ratios(phases: dict[str, dict[str, Any]]) -> dict[str, Any]:
    full = phases["full"]
    out: dict[str, Any] = {}
    for name in PHASES[1:]:
        phase = phases[name]
        out[name] = {
            "wall_over_full": round(phase["wall_seconds"] / full["wall_seconds"], 4) if full["wall_seconds"] else None,
            "index_over_full": round(phase["index_seconds"] / full["index_seconds"], 4) if full["index_seconds"] else None,
        }
    worst = max(out["one_file_change"]["wall_over_full"] or 0, out["one_file_delete"]["wall_over_full"] or 0)
    out["one_file_goal"] = ONE_FILE_GOAL
    out["one_file_meets_goal"] = worst < ONE_FILE_GOAL
    return out


def render(result: dict[str, Any]) -> str:
    phases = result["phases"]
    rows = []
    for name in PHASES:
        p = phases[name]
        seconds = p.get("phase_seconds") or {}
        rows.append([
            name, p["wall_seconds"], p["index_seconds"],
            " ".join(f"{k} {v:.1f}" for k, v in sorted(seconds.items())) or p.get("note", "-"),
            p.get("files"), p.get("reused_files"), p.get("embedded"), p.get("reused_vectors"), p.get("peak_rss_mib"),
            "/".join(str(v) for v in p.get("loadavg_before", [])[:1] + p.get("loadavg_after", [])[:1]) or "-",
        ])
    table = format_table(
        ["phase", "wall s", "index s", "summary.seconds", "files", "reused", "embedded", "reused vec", "RSS MiB",
         "load 1m"],
        rows,
    )
    r = result["ratios"]
    lines = [
        f"tree {result['tree']} ({result['embedder']}): {phases['full']['files']} files, {phases['full']['units']} units, "
        f"{phases['full']['chunks']} chunks; edited {result['edited_file']}, deleted {result['deleted_file']}; "
        f"loadavg {result['loadavg_start']} → {result['loadavg_end']}",
        table,
        f"no-change / full: wall {r['no_change']['wall_over_full']:.2%}, index {r['no_change']['index_over_full']:.2%}",
        f"1-file change / full: wall {r['one_file_change']['wall_over_full']:.2%}, "
        f"index {r['one_file_change']['index_over_full']:.2%}",
        f"1-file delete / full: wall {r['one_file_delete']['wall_over_full']:.2%}, "
        f"index {r['one_file_delete']['index_over_full']:.2%}",
        f"goal (1-file < {ONE_FILE_GOAL:.0%} of full, wall): {'met' if r['one_file_meets_goal'] else 'NOT met'}",
    ]
    if phases["full"].get("copied_from"):
        lines.append(f"full index copied from {phases['full']['copied_from']} (built earlier; its build time was passed in)")
    skipped = max(phases[name].get("skipped_overlong_units", 0) for name in PHASES)
    if result.get("skip_overlong_units"):
        lines.append(f"--skip-overlong-units: {skipped} units indexed without vectors (prefix over the model limit)")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repo", type=Path, action="append", help="Source tree to copy (repeatable).")
    parser.add_argument("--embedder", choices=("minilm", "fake", "shaped"), default="fake",
                        help="shaped: MiniLM tokenizer and chunking with synthetic vectors (query_bench.index_provider_for).")
    parser.add_argument("--work-dir", type=Path, help="Scratch directory (default /tmp/bench/incremental-<embedder>).")
    parser.add_argument("--baseline-store", type=Path, help="Use this store (built from the same tree) as the full index.")
    parser.add_argument("--baseline-seconds", type=float, help="Build time of --baseline-store (required with it).")
    parser.add_argument("--skip-overlong-units", action="store_true",
                        help="Index units whose embedding prefix alone is over the model limit without vectors.")
    parser.add_argument("--json", action="store_true", help="Print the full JSON on stdout (the table on stderr).")
    parser.add_argument("--out", type=Path, help="Also write the JSON here.")
    # Hidden: one index run in a fresh process.
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--tree", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--store", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--result", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--full", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    if args.worker:
        return worker(args)
    if args.baseline_store is not None and args.baseline_seconds is None:
        parser.error("--baseline-store needs --baseline-seconds (the build time of that store)")

    repos = args.repo or [DEFAULT_REPO]
    work = args.work_dir or Path(f"/tmp/bench/incremental-{args.embedder}")
    if work.resolve().is_relative_to(REPO_ROOT):
        parser.error(f"--work-dir must be outside the checkout ({REPO_ROOT})")
    work.mkdir(parents=True, exist_ok=True)
    tree, store = work / "tree", work / "store"
    result: dict[str, Any] = {"schema": BENCH_SCHEMA_VERSION, "embedder": args.embedder, "cpus": os.cpu_count(),
                              "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "loadavg_start": loadavg(),
                              "repos": [str(r) for r in repos], "tree": str(tree),
                              "skip_overlong_units": args.skip_overlong_units}
    from query_bench import source_state

    result["source"] = source_state()
    started = time.perf_counter()
    result["placed"] = copy_trees(repos, tree)
    result["copy_seconds"] = round(time.perf_counter() - started, 2)
    edited, deleted = pick_targets(tree)
    result["edited_file"] = edited.relative_to(tree).as_posix()
    result["edited_file_bytes"] = edited.stat().st_size
    result["deleted_file"] = deleted.relative_to(tree).as_posix()
    result["deleted_file_bytes"] = deleted.stat().st_size

    phases: dict[str, dict[str, Any]] = {}
    common = {"skip_overlong": args.skip_overlong_units}
    if args.baseline_store is not None:
        phases["full"] = copied_baseline(args.baseline_store, store, args.baseline_seconds)
    else:
        if store.exists():
            shutil.rmtree(store)
        phases["full"] = run_phase("full", tree, store, args.embedder, work, full=True, **common)
    phases["no_change"] = run_phase("no_change", tree, store, args.embedder, work, full=False, **common)
    with edited.open("a", encoding="utf-8") as handle:
        handle.write(ADDED_FUNCTION)
    phases["one_file_change"] = run_phase("one_file_change", tree, store, args.embedder, work, full=False, **common)
    deleted.unlink()
    phases["one_file_delete"] = run_phase("one_file_delete", tree, store, args.embedder, work, full=False, **common)
    result["phases"] = phases
    result["ratios"] = ratios(phases)
    result["loadavg_end"] = loadavg()

    emit_report(result, render(result), args.out, args.json)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
