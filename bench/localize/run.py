"""The issue → code localisation bench: every query of bench/localize/queries.json asked at its
fix's parent commit, scored against the files and functions the fix changed.

    PYTHONPATH=. python bench/localize/run.py prepare                 # work trees, plan, gold checks
    PYTHONPATH=. python bench/localize/run.py index [--systems phase1,bm25-files] [--verify 2]
    PYTHONPATH=. python bench/localize/run.py index --systems woods,vector --provider minilm --vector-repo OWNER/NAME …
    PYTHONPATH=. python bench/localize/run.py score                   # answers → runs/<run>/scores.json
    PYTHONPATH=. python bench/localize/run.py report [--markdown PATH]
    PYTHONPATH=. python bench/localize/run.py stats                   # the dev set's statistics

`index` walks each repository's snapshots (the distinct parent commits) oldest first: it writes
only the files that changed since the previous snapshot into one work tree per repository (so
unchanged files keep their mtimes), re-indexes incrementally with woods' library
(`woods.indexing.index_repository`) into a store per repository under the work directory, then
asks every requested system each query of that snapshot and appends the ranked answers to
`runs/<run>/answers-<system>.jsonl`. A store holds one snapshot at a time, so the systems are asked
while the walk is on it; `score` and `report` only read the answers. `--verify N` also builds the
2nd snapshot of the first N repositories from scratch (`full=True`) and checks that the
incremental index holds the same files, units, edges and lexical postings and gives the same
answers.

Systems (SYSTEMS below; a new one is one line):
  phase1      `woods.Index.search(query, limit=…)`, as `woods search` asks it (an issue text is
              localised), on the default index: phase 1, lexical + woods's static vectors
  localize    `woods.Index.localize(query, limit=…)` on that index (`woods search --as issue`)
  query       the search with the text read as a plain query (`read_as="query"`): no localisation
  static-vector  the static vectors' leg alone on that index
  woods       `woods.Index.search` on a store whose vectors are `--provider`'s (MiniLM: phase 2)
  vector      the vector leg alone (`strategy="vector"`) on that store
  bm25-files  Okapi BM25 over whole files with code-aware tokens (localize_lib.BM25Files, our own
              ~70 lines), over the code files woods indexed (tests included, READMEs and other
              documents not): the floor to beat
A query a system fails on (InputTooLongError from a long paste in the vector path, …) is a miss;
the errors are counted per system.

The embedder of the vector-complete stores is `--provider` (stores per provider). MiniLM runs
can be limited to some repositories (`--vector-repo`, repeatable) or to the first K queries'
repositories per language (`--vector-per-language K`).
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import time
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
for _path in (str(HERE), str(ROOT)):
    if _path not in sys.path:
        sys.path.insert(0, _path)

import localize_lib as lib  # noqa: E402

MIRRORS = Path(os.environ.get("WOODS_MIRRORS", "/work/.mirror"))
DEFAULT_WORK = Path(os.environ.get("WOODS_LOCALIZE_WORK", "/tmp/woods-localize"))
QUERIES = HERE / "queries.json"
DEFAULT_LIMIT = 20  # units asked per query: enough for ten distinct files most of the time


# ---------------------------------------------------------------------------------------------
# Data


def load_queries(path: Path) -> list[dict[str, Any]]:
    payload = json.loads(path.read_text(encoding="utf-8"))
    queries: list[dict[str, Any]] = payload["queries"]
    return queries


def slug(repo: str) -> str:
    return repo.replace("/", "+")


def mirror(repo: str) -> Path:
    return MIRRORS / slug(repo) / "repo"


def git(repo: str, *args: str, check: bool = True) -> str:
    result = subprocess.run(["git", "-c", "core.quotepath=off", f"--git-dir={mirror(repo)}", *args],
                            capture_output=True, check=check)
    return result.stdout.decode("utf-8", "replace")


# ---------------------------------------------------------------------------------------------
# prepare


def cmd_prepare(args: argparse.Namespace) -> None:
    """Check every mirror, parent commit and gold file; write the snapshot plan, oldest first."""
    queries = select(load_queries(args.queries), args.repo)
    missing = sorted({q["repo"] for q in queries if not mirror(q["repo"]).is_dir()})
    if missing:
        fail(f"no mirror for {', '.join(missing)} under {MIRRORS}: fetch github:OWNER/NAME first (or set WOODS_MIRRORS)")
    plan: dict[str, list[dict[str, Any]]] = {}
    problems: list[str] = []
    by_repo: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for query in queries:
        by_repo[query["repo"]].append(query)
    for repo, items in sorted(by_repo.items()):
        snapshots: dict[str, dict[str, Any]] = {}
        for query in items:
            parent = query["parent_commit"]
            if parent not in snapshots:
                stamp = git(repo, "show", "-s", "--format=%ct", parent, check=False).strip()
                if not stamp:
                    problems.append(f"{query['id']}: parent {parent} not in the mirror of {repo}")
                    continue
                snapshots[parent] = {"commit": parent, "time": int(stamp), "queries": []}
            for path in query["gold_files"]:
                if subprocess.run(["git", f"--git-dir={mirror(repo)}", "cat-file", "-e", f"{parent}:{path}"],
                                  capture_output=True).returncode != 0:
                    problems.append(f"{query['id']}: gold file {path} missing at {parent[:10]}")
            snapshots[parent]["queries"].append(query["id"])
        plan[repo] = sorted(snapshots.values(), key=lambda s: (s["time"], s["commit"]))
    args.work.mkdir(parents=True, exist_ok=True)
    (args.work / "plan.json").write_text(json.dumps(plan, indent=1))
    total = sum(len(s) for s in plan.values())
    print(f"{len(queries)} queries, {len(plan)} repositories, {total} snapshots → {args.work / 'plan.json'}")
    for problem in problems:
        print(f"  problem: {problem}", file=sys.stderr)
    if problems:
        raise SystemExit(2)


def load_plan(work: Path) -> dict[str, list[dict[str, Any]]]:
    path = work / "plan.json"
    if not path.exists():
        fail(f"no plan at {path}: run `run.py prepare` first")
    plan: dict[str, list[dict[str, Any]]] = json.loads(path.read_text())
    return plan


# ---------------------------------------------------------------------------------------------
# Snapshots: one work tree per repository, moved from commit to commit by writing what changed.


@dataclass
class TreeState:
    """Which commit a work tree holds, and the blobs the fetched snapshot lacks (left unwritten)."""

    commit: str | None = None
    missing: list[str] = field(default_factory=list)


class BlobReader:
    """`git cat-file --batch` kept open: blob bytes by id, None for a blob the mirror lacks."""

    def __init__(self, repo: str) -> None:
        self.process = subprocess.Popen(["git", f"--git-dir={mirror(repo)}", "cat-file", "--batch"],
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE)

    def read(self, sha: str) -> bytes | None:
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.write(sha.encode() + b"\n")
        self.process.stdin.flush()
        header = self.process.stdout.readline().split()
        if len(header) < 3 or header[1] == b"missing":
            return None
        data = self.process.stdout.read(int(header[2]))
        self.process.stdout.read(1)  # the newline after the contents
        return data

    def close(self) -> None:
        if self.process.stdin is not None:
            self.process.stdin.close()
        self.process.wait()


def tree_changes(repo: str, old: str | None, new: str) -> Iterator[tuple[str, str, str]]:
    """(status, "mode blob", path) changes from `old` to `new` (every file of `new` when old is
    None): status A/M/T write the blob, D deletes the path."""
    if old is None:
        out = git(repo, "ls-tree", "-r", "-z", new)
        for entry in out.split("\0"):
            if entry:
                meta, path = entry.split("\t", 1)
                mode, _kind, sha = meta.split()
                yield "A", f"{mode} {sha}", path
        return
    out = git(repo, "diff-tree", "-r", "-z", "--no-renames", old, new)
    fields = out.split("\0")
    for meta, path in zip(fields[0::2], fields[1::2], strict=False):
        if not meta.startswith(":"):
            continue
        _old_mode, mode, _old_sha, sha, status = meta[1:].split()
        yield status[0], f"{mode} {sha}", path


def materialize(repo: str, tree: Path, state: TreeState, commit: str) -> int:
    """Move `tree` to `commit`, writing only what changed; returns the number of paths touched.

    Deletions go first, so a path that changes type (a directory that becomes a symlink, a file
    that becomes a directory) is free when its new entry is written; a directory still in the way
    then holds no tracked file and is removed.
    """
    if state.commit is None and tree.exists():
        shutil.rmtree(tree)
    tree.mkdir(parents=True, exist_ok=True)
    changes = list(tree_changes(repo, state.commit, commit))
    for status, _mode_sha, path in changes:
        target = tree / path
        if status == "D" and (target.is_symlink() or target.is_file()):
            target.unlink()
    reader = BlobReader(repo)
    try:
        for status, mode_sha, path in changes:
            mode, sha = mode_sha.split()
            if status == "D" or mode == "160000":  # deleted, or a submodule (never checked out)
                continue
            target = tree / path
            data = reader.read(sha)
            if target.is_symlink() or target.is_file():
                target.unlink()
            elif target.is_dir():
                shutil.rmtree(target)
            if data is None:
                state.missing.append(path)
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            if mode == "120000":
                os.symlink(data.decode("utf-8", "replace"), target)
            else:
                target.write_bytes(data)
    finally:
        reader.close()
    state.commit = commit
    return len(changes)


# ---------------------------------------------------------------------------------------------
# Systems


@runtime_checkable
class UnitHit(Protocol):
    """What woods returns per result (SearchHit): a unit with its file and lines."""

    file_path: str
    identifier: str
    line_start: int
    line_end: int


@runtime_checkable
class FileHit(Protocol):
    """What a localiser may return per result: a file with its ranked units."""

    file_path: str
    units: Sequence[Any]


def ranked(result: Iterable[Any]) -> list[lib.RankedUnit]:
    """A system's answer as ranked units, best first: unit hits as they come; a file hit as its
    units in order (the file itself when it has none)."""
    out: list[lib.RankedUnit] = []
    for item in result:
        if isinstance(item, FileHit):
            units = [u for u in item.units if isinstance(u, UnitHit)]
            out.extend(lib.RankedUnit(item.file_path, u.identifier, u.line_start, u.line_end) for u in units)
            if not units:
                out.append(lib.RankedUnit(item.file_path))
        elif isinstance(item, UnitHit):
            out.append(lib.RankedUnit(item.file_path, item.identifier, item.line_start, item.line_end))
    return out


def _localized(result: Any) -> list[lib.RankedUnit]:
    """`Index.localize`'s answer (files best first, each with its units) as ranked units."""
    out: list[lib.RankedUnit] = []
    for found in result.files:
        out.extend(lib.RankedUnit(found.path, u.identifier, u.line_start, u.line_end) for u in found.units)
        if not found.units:
            out.append(lib.RankedUnit(found.path))
    return out


class Snapshot:
    """What the systems ask at one snapshot: the opened indexes (per store kind) and BM25 files."""

    def __init__(self, stores: dict[str, Path], bm25: lib.BM25Files | None) -> None:
        self.stores = stores
        self.bm25 = bm25
        self._open: dict[str, Any] = {}

    def index(self, kind: str) -> Any:
        from woods.api import Index

        if kind not in self._open:
            self._open[kind] = Index.open(store=self.stores[kind])
        return self._open[kind]

    def close(self) -> None:
        for handle in self._open.values():
            handle.close()
        self._open.clear()


@dataclass(frozen=True)
class System:
    """One way of answering: `store` is the index it needs (`lexical`, `vector`, or `lexical` for
    the file list alone); `files_only` systems rank files, so no function metric."""

    name: str
    store: str
    ask: Callable[[Snapshot, str, int], list[lib.RankedUnit]]
    files_only: bool = False


def _bm25(snapshot: Snapshot, text: str, limit: int) -> list[lib.RankedUnit]:
    assert snapshot.bm25 is not None
    return [lib.RankedUnit(path) for path, _score in snapshot.bm25.search(text, limit)]


SYSTEMS: dict[str, System] = {
    system.name: system
    for system in (
        System("woods", "vector", lambda s, q, n: ranked(s.index("vector").search(q, limit=n))),
        System("phase1", "lexical", lambda s, q, n: ranked(s.index("lexical").search(q, limit=n))),
        System("vector", "vector", lambda s, q, n: ranked(s.index("vector").search(q, limit=n, strategy="vector"))),
        System("bm25-files", "lexical", _bm25, files_only=True),
        # On the default index (the `lexical` store: phase 1 = lexical + woods's static vectors):
        System("localize", "lexical", lambda s, q, n: _localized(s.index("lexical").localize(q, limit=n))),
        System("query", "lexical", lambda s, q, n: ranked(s.index("lexical").search(q, limit=n, read_as="query"))),
        System("static-vector", "lexical",
               lambda s, q, n: ranked(s.index("lexical").search(q, limit=n, strategy="vector", read_as="query"))),
    )
}


# ---------------------------------------------------------------------------------------------
# Embedders for the vector-complete stores


PROVIDERS = ("minilm", "onnx-int8", "onnx-fp32", "st-fp32", "st-bf16", "fake")


def provider_factory(name: str) -> Callable[[], Any]:
    """`minilm`: woods' default index-time provider; the others as bench/semble_eval.py names them;
    `module:attribute` any importable factory (a new static model)."""
    cache: list[Any] = []

    def make() -> Any:
        if not cache:
            cache.append(_make_provider(name))
        return cache[0]

    return make


def _make_provider(name: str) -> Any:
    if name == "minilm":
        from woods.embedding.select import index_provider

        return index_provider()
    if name == "fake":
        from woods.embedding.fake import FakeEmbeddingProvider

        return FakeEmbeddingProvider()
    if name.startswith("st-"):
        from woods.embedding.sentence import SentenceTransformerProvider

        return SentenceTransformerProvider(precision="fp32" if name == "st-fp32" else "bf16")
    if name.startswith("onnx-"):
        from woods.embedding.onnx import OnnxMiniLMProvider

        return OnnxMiniLMProvider(precision="fp32" if name == "onnx-fp32" else "int8")
    module, _, attribute = name.partition(":")
    if not attribute:
        fail(f"unknown provider {name!r}: one of {', '.join(PROVIDERS)} or module:factory")
    return getattr(importlib.import_module(module), attribute)()


# ---------------------------------------------------------------------------------------------
# index


def code_files_indexed(store: Path) -> dict[str, str]:
    """path → SHA-256 of every code file (not a document kind) the store's current generation indexed."""
    from woods.extract import is_document

    with sqlite3.connect(f"file:{metadata_path(store)}?mode=ro&immutable=1", uri=True) as connection:
        rows = connection.execute("SELECT path, sha256, language FROM files").fetchall()
    return {path: sha for path, sha, language in rows if not is_document(language)}


def metadata_path(store: Path) -> Path:
    generation = json.loads((store / "CURRENT").read_text())["generation"]
    return store / "generations" / generation / "metadata.sqlite3"


def update_bm25(bm25: lib.BM25Files, tree: Path, files: dict[str, str], previous: dict[str, str]) -> None:
    for path in previous:
        if path not in files:
            bm25.remove(path)
    for path, sha in files.items():
        if previous.get(path) != sha:
            try:
                bm25.put(path, (tree / path).read_text(encoding="utf-8", errors="replace"))
            except OSError:
                bm25.remove(path)


def cmd_index(args: argparse.Namespace) -> None:
    from woods.embedding.select import index_provider
    from woods.indexing import index_repository, parse_workers

    systems = [SYSTEMS[name] for name in args.systems]
    needs_vectors = any(s.store == "vector" for s in systems)
    if needs_vectors and not args.provider:
        fail("woods and vector need a vector-complete index: pass --provider (minilm, onnx-int8, fake …)")
    queries = {q["id"]: q for q in load_queries(args.queries)}
    plan = load_plan(args.work)
    repos = [r for r in plan if not args.repo or r in args.repo]
    vector_repos = vector_subset(args, repos, queries, plan)
    run_dir = args.work / "runs" / args.run
    run_dir.mkdir(parents=True, exist_ok=True)
    done = answered(run_dir)
    factory = provider_factory(args.provider) if args.provider else None
    verify_left = args.verify
    for repo in repos:
        tree = args.work / "trees" / slug(repo)
        stores = {"lexical": args.work / "stores" / "lexical" / slug(repo)}
        if args.provider:
            stores["vector"] = args.work / "stores" / provider_dir(args.provider) / slug(repo)
        state = TreeState()
        bm25 = lib.BM25Files()
        bm25_files: dict[str, str] = {}
        for position, snapshot in enumerate(plan[repo]):
            wanted = [s for s in systems if s.store != "vector" or repo in vector_repos]
            todo = [(s, qid) for s in wanted for qid in snapshot["queries"] if (s.name, qid) not in done]
            verifying = verify_left > 0 and position == 1
            if not todo and not verifying:
                continue
            started = time.perf_counter()
            touched = materialize(repo, tree, state, snapshot["commit"])
            timings: dict[str, float] = {"materialize": time.perf_counter() - started}
            phases: dict[str, Any] = {}
            for kind in sorted({s.store for s in wanted}):
                began = time.perf_counter()
                summary = index_repository(tree, stores[kind], factory if kind == "vector" and factory else index_provider,
                                           vectors=kind == "vector", allow_purge=True, workers=parse_workers())
                timings[f"index-{kind}"] = time.perf_counter() - began
                phases[kind] = {"files": summary.files, "reused_files": summary.reused_files,
                                "embedded": summary.embedded, "seconds": summary.seconds}
            if any(s.name == "bm25-files" for s in wanted):
                began = time.perf_counter()
                current = code_files_indexed(stores["lexical"])
                update_bm25(bm25, tree, current, bm25_files)
                bm25_files = current
                timings["bm25"] = time.perf_counter() - began
            view = Snapshot(stores, bm25)
            try:
                began = time.perf_counter()
                with open(run_dir / "answers.jsonl", "a", encoding="utf-8") as out:
                    for system, qid in todo:
                        out.write(json.dumps(answer(system, view, queries[qid], args.limit)) + "\n")
                timings["ask"] = time.perf_counter() - began
                if verifying:
                    checked = verify(repo, snapshot["commit"], tree, stores["lexical"], view,
                                     [queries[q] for q in snapshot["queries"]], args)
                    with open(run_dir / "verify.jsonl", "a", encoding="utf-8") as out:
                        out.write(json.dumps(checked) + "\n")
                    print(f"verify {repo} @ {snapshot['commit'][:10]}: "
                          + ("incremental == full" if checked["equal"] else f"DIFFERS: {checked['differences']}"),
                          flush=True)
                    verify_left -= 1
            finally:
                view.close()
            with open(run_dir / "walk.jsonl", "a", encoding="utf-8") as out:
                out.write(json.dumps({"repo": repo, "commit": snapshot["commit"], "touched": touched,
                                      "missing": len(state.missing), "answers": len(todo),
                                      "timings": {k: round(v, 3) for k, v in timings.items()}, "index": phases}) + "\n")
            print(f"{repo:26s} {position + 1:2d}/{len(plan[repo]):2d} {snapshot['commit'][:10]} "
                  f"touched={touched:5d} missing={len(state.missing):3d} answers={len(todo):3d} "
                  + " ".join(f"{k}={v:.1f}s" for k, v in timings.items()), flush=True)


def provider_dir(name: str) -> str:
    return "vector-" + "".join(c if c.isalnum() or c in "-_." else "_" for c in name)


def vector_subset(args: argparse.Namespace, repos: list[str], queries: dict[str, dict[str, Any]],
                  plan: dict[str, list[dict[str, Any]]]) -> set[str]:
    """The repositories the vector systems run on: `--vector-repo`, else the first
    `--vector-per-language` repositories of each language (by name), else all."""
    if args.vector_repo:
        return set(args.vector_repo)
    if not args.vector_per_language:
        return set(repos)
    language_of: dict[str, str] = {}
    for repo in repos:
        counts: dict[str, int] = defaultdict(int)
        for snapshot in plan[repo]:
            for qid in snapshot["queries"]:
                counts[queries[qid]["language"]] += 1
        language_of[repo] = max(counts, key=lambda lang: (counts[lang], lang))
    chosen: set[str] = set()
    per_language: dict[str, int] = defaultdict(int)
    for repo in sorted(repos):
        if per_language[language_of[repo]] < args.vector_per_language:
            chosen.add(repo)
            per_language[language_of[repo]] += 1
    return chosen


def answered(run_dir: Path) -> set[tuple[str, str]]:
    path = run_dir / "answers.jsonl"
    if not path.exists():
        return set()
    done = set()
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            record = json.loads(line)
            done.add((record["system"], record["id"]))
    return done


def answer(system: System, view: Snapshot, query: dict[str, Any], limit: int) -> dict[str, Any]:
    began = time.perf_counter()
    error = None
    results: list[lib.RankedUnit] = []
    try:
        results = system.ask(view, query["query"], limit)
    except Exception as exc:  # noqa: BLE001 - a failed query is a miss, counted per system
        error = f"{type(exc).__name__}: {str(exc)[:200]}"
    return {
        "system": system.name, "id": query["id"], "ms": round((time.perf_counter() - began) * 1000, 1), "error": error,
        "results": [[r.file_path, r.identifier, r.line_start, r.line_end] for r in results],
    }


def verify(repo: str, commit: str, tree: Path, incremental: Path, view: Snapshot, queries: list[dict[str, Any]],
           args: argparse.Namespace) -> dict[str, Any]:
    """Build the snapshot from scratch and compare it with the incremental index."""
    from woods.embedding.select import index_provider
    from woods.indexing import index_repository, parse_workers

    full = args.work / "verify-store" / slug(repo)
    if full.exists():
        shutil.rmtree(full)
    began = time.perf_counter()
    summary = index_repository(tree, full, index_provider, vectors=False, full=True, workers=parse_workers())
    full_seconds = {"wall": round(time.perf_counter() - began, 3), **summary.seconds}
    differences = [name for name, query in COMPARED.items() if table(incremental, query) != table(full, query)]
    full_view = Snapshot({"lexical": full}, view.bm25)
    try:
        for query in queries:
            mine = answer(SYSTEMS["phase1"], view, query, args.limit)["results"]
            theirs = answer(SYSTEMS["phase1"], full_view, query, args.limit)["results"]
            if mine != theirs:
                differences.append(f"phase1 answer to {query['id']}")
    finally:
        full_view.close()
    shutil.rmtree(full)
    return {"repo": repo, "commit": commit, "equal": not differences, "differences": differences,
            "full_index_seconds": full_seconds}


# What must be equal between an incremental and a full index (row ids may differ: compared by content).
COMPARED = {
    "files": "SELECT path, language, sha256, size, unit_count, warnings FROM files ORDER BY path",
    "units": "SELECT key, identifier, type, language, file_path, line_start, line_end, parent, stable_id, "
             "source_hash, round(pagerank, 9), data FROM units ORDER BY key",
    "edges": "SELECT source_key, source, target, target_key, via, ordinal FROM edges "
             "ORDER BY source_key, ordinal, target, via",
    "lexical postings": "SELECT term, rows FROM lexical_postings ORDER BY term",
}


def table(store: Path, query: str) -> list[tuple[Any, ...]]:
    with sqlite3.connect(f"file:{metadata_path(store)}?mode=ro&immutable=1", uri=True) as connection:
        return list(connection.execute(query))


# ---------------------------------------------------------------------------------------------
# score and report


def load_answers(run_dir: Path) -> dict[str, dict[str, dict[str, Any]]]:
    """system → query id → the last answer recorded."""
    path = run_dir / "answers.jsonl"
    if not path.exists():
        fail(f"no answers at {path}: run `run.py index` first")
    answers: dict[str, dict[str, dict[str, Any]]] = defaultdict(dict)
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            record = json.loads(line)
            answers[record["system"]][record["id"]] = record
    return answers


def groups_of(query: dict[str, Any]) -> list[str]:
    """The report groups a query counts in."""
    trace = "trace" if query["has_trace"] else "no-trace"
    names = "names-gold-path" if query["names_gold_path"] else "no-gold-path"
    return ["all", f"language:{query['language']}", f"kind:{trace}", f"path:{names}",
            f"kind:{trace}/path:{names}"]


def cmd_score(args: argparse.Namespace) -> None:
    queries = {q["id"]: q for q in select(load_queries(args.queries), args.repo)}
    run_dir = args.work / "runs" / args.run
    answers = load_answers(run_dir)
    report: dict[str, Any] = {"run": args.run, "queries": len(queries), "systems": {}, "per_query": {}}
    for system_name, by_id in sorted(answers.items()):
        system = SYSTEMS.get(system_name)
        files_only = system.files_only if system else False
        groups: dict[str, lib.Aggregate] = defaultdict(lib.Aggregate)
        per_query: dict[str, Any] = {}
        for qid, record in sorted(by_id.items()):
            query = queries.get(qid)
            if query is None:
                continue
            results = [lib.RankedUnit(f, i, s, e) for f, i, s, e in record["results"]]
            gold_functions = [lib.GoldFunction(g["file"], g["identifier"], g["line_start"], g["line_end"])
                              for g in query["gold_functions"]]
            result = lib.score_answer(results, query["gold_files"], gold_functions, files_only=files_only,
                                      error=record["error"] is not None)
            per_query[qid] = {"acc1": result.acc1, "mrr10": result.mrr10, "func_mrr10": result.func_mrr10,
                              "error": record["error"]}
            for group in groups_of(query):
                groups[group].add(result)
        scored = [record for qid, record in by_id.items() if qid in queries]
        tops = [record["results"][0][0] for record in scored if record["results"]]
        report["systems"][system_name] = {
            "groups": {g: a.to_dict() for g, a in sorted(groups.items())},
            "p50_ms": median(r["ms"] for r in scored),
            # Diagnostics: how often the first file is not code (a README, a config file), or a test.
            "top1_not_code": round(sum(not is_code(path) for path in tops) / max(len(tops), 1), 4),
            "top1_not_library": round(sum(not lib.is_library_path(path) for path in tops) / max(len(tops), 1), 4),
        }
        report["per_query"][system_name] = per_query
    path = run_dir / "scores.json"
    path.write_text(json.dumps(report, indent=1))
    print(f"scores → {path}")
    print(render(report))


def is_code(path: str) -> bool:
    from woods.extract import is_document, language_for

    language = language_for(path)
    return language is not None and not is_document(language)


def median(values: Iterable[float]) -> float | None:
    ordered = sorted(values)
    return ordered[len(ordered) // 2] if ordered else None


def render(report: dict[str, Any]) -> str:
    """Markdown tables: overall, by kind, by path-naming, by language — one row per system."""
    systems = report["systems"]
    lines: list[str] = []

    def table_for(title: str, groups: list[str]) -> None:
        lines.extend([f"### {title}", "", "| group | system | n | errors | file Acc@1 | file Acc@5 | file MRR@10 | "
                      "func n | func MRR@10 | func MRR@10 strict |", "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|"])
        for group in groups:
            for name, data in systems.items():
                stats = data["groups"].get(group)
                if not stats:
                    continue
                func = "—" if stats["func_mrr10"] is None else f"{stats['func_mrr10']:.3f}"
                strict = "—" if stats["func_mrr10_strict"] is None else f"{stats['func_mrr10_strict']:.3f}"
                lines.append(f"| {group.split(':', 1)[-1]} | {name} | {stats['n']} | {stats['errors']} | "
                             f"{stats['acc1']:.3f} | {stats['acc5']:.3f} | {stats['mrr10']:.3f} | "
                             f"{stats['func_n']} | {func} | {strict} |")
        lines.append("")

    all_groups = sorted({g for data in systems.values() for g in data["groups"]})
    table_for("Overall", ["all"])
    lines.extend(["| system | first file not code (README, config …) | first file a test, doc, example … | p50 ms |",
                  "|---|---:|---:|---:|"])
    for name, data in systems.items():
        lines.append(f"| {name} | {data.get('top1_not_code', 0):.1%} | {data.get('top1_not_library', 0):.1%} | "
                     f"{data.get('p50_ms') or 0:.0f} |")
    lines.append("")
    table_for("With and without a stack trace / error output", [g for g in all_groups if g in ("kind:trace", "kind:no-trace")])
    table_for("Whether the message names a gold file's path", [g for g in all_groups if g.startswith("path:")])
    table_for("Trace × path naming", [g for g in all_groups if g.startswith("kind:") and "/" in g])
    table_for("By language", [g for g in all_groups if g.startswith("language:")])
    return "\n".join(lines)


def cmd_report(args: argparse.Namespace) -> None:
    path = args.work / "runs" / args.run / "scores.json"
    if not path.exists():
        fail(f"no scores at {path}: run `run.py score` first")
    text = render(json.loads(path.read_text()))
    print(text)
    if args.markdown:
        Path(args.markdown).write_text(text + "\n")


def cmd_stats(args: argparse.Namespace) -> None:
    """The dev set's statistics (queries.json alone): per language, traces, gold sizes."""
    queries = select(load_queries(args.queries), args.repo)
    print(stats_markdown(queries))


def stats_markdown(queries: list[dict[str, Any]]) -> str:
    by_language: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for query in queries:
        by_language[query["language"]].append(query)
    lines = ["| language | queries | repositories | with trace | names a gold path | gold files (mean) | "
             "with gold functions | gold functions (mean) |", "|---|---:|---:|---:|---:|---:|---:|---:|"]

    def row(name: str, items: list[dict[str, Any]]) -> str:
        functions = [q for q in items if q["gold_functions"]]
        return (f"| {name} | {len(items)} | {len({q['repo'] for q in items})} | "
                f"{sum(q['has_trace'] for q in items)} ({sum(q['has_trace'] for q in items) / len(items):.0%}) | "
                f"{sum(q['names_gold_path'] for q in items)} | "
                f"{sum(len(q['gold_files']) for q in items) / len(items):.2f} | {len(functions)} | "
                f"{sum(len(q['gold_functions']) for q in functions) / max(len(functions), 1):.2f} |")

    for language in sorted(by_language, key=lambda lang: (-len(by_language[lang]), lang)):
        lines.append(row(language, by_language[language]))
    lines.append(row("**all**", queries))
    kinds: dict[str, int] = defaultdict(int)
    for query in queries:
        for kind in query["trace_kinds"]:
            kinds[kind] += 1
    lines.append("")
    lines.append("Trace kinds (a query may show several): " +
                 ", ".join(f"{k} {n}" for k, n in sorted(kinds.items(), key=lambda kv: (-kv[1], kv[0]))))
    return "\n".join(lines)


# ---------------------------------------------------------------------------------------------


def select(queries: list[dict[str, Any]], repos: Sequence[str]) -> list[dict[str, Any]]:
    return [q for q in queries if not repos or q["repo"] in repos]


def fail(message: str) -> None:
    print(message, file=sys.stderr)
    raise SystemExit(2)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--queries", type=Path, default=QUERIES)
    parser.add_argument("--work", type=Path, default=DEFAULT_WORK, help="trees, stores and runs (default %(default)s)")
    parser.add_argument("--repo", action="append", default=[], help="only this repository (OWNER/NAME; repeatable)")
    parser.add_argument("--run", default="default", help="name of the run directory under WORK/runs")
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("prepare").set_defaults(func=cmd_prepare)
    sub.add_parser("stats", help="the dev set's statistics").set_defaults(func=cmd_stats)
    index = sub.add_parser("index")
    index.add_argument("--systems", type=lambda s: [x for x in s.split(",") if x], default=["phase1", "bm25-files"],
                       help=f"comma-separated, from {', '.join(SYSTEMS)} (default phase1,bm25-files)")
    index.add_argument("--provider", help=f"embedder of the vector stores: {', '.join(PROVIDERS)} or module:factory")
    index.add_argument("--vector-repo", action="append", default=[], help="run woods/vector only on these repositories")
    index.add_argument("--vector-per-language", type=int, default=0,
                       help="run woods/vector only on the first K repositories of each language")
    index.add_argument("--limit", type=int, default=DEFAULT_LIMIT, help="units asked per query")
    index.add_argument("--verify", type=int, default=0, help="check incremental == full on the 2nd snapshot of N repos")
    index.set_defaults(func=cmd_index)
    sub.add_parser("score").set_defaults(func=cmd_score)
    report = sub.add_parser("report")
    report.add_argument("--markdown", help="also write the tables to this file")
    report.set_defaults(func=cmd_report)
    args = parser.parse_args()
    if args.command == "index":
        unknown = [s for s in args.systems if s not in SYSTEMS]
        if unknown:
            fail(f"unknown system(s) {', '.join(unknown)}: choose from {', '.join(SYSTEMS)}")
    args.func(args)


if __name__ == "__main__":
    main()
