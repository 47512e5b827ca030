#!/usr/bin/env python3
"""Held-out dev sets for woods: architecture questions and doc comment → function.

woods is tuned on semble-dev; these two sets are written on repositories it was not tuned on
(bench/arch/README.md says how and which), so a ranking change can be checked on held-out data.

  annotations/<name>.json   the architecture set: "how does X work" questions with gold files
                            (semble's format: relevant = central files, secondary = supporting),
                            scored by semble-dev's file-level NDCG@10
  functions/<name>.json     the function set: the first sentence of a doc comment → the function
                            it documents; scored by function MRR@10 and file MRR@10 on a copy of
                            the repository in which those doc comments are blanked

Subcommands (run from a checkout: `PYTHONPATH=. python bench/arch/run.py …`):

  prepare   check out every repository at its pinned commit from the fetched mirrors
            (WORK/checkouts/<name>@<commit12>), and the function set's copy with the sampled doc
            comments blanked (…-fn); checks every gold path and every blanked span
  index     index both copies with woods (WORK/stores/…): with vectors (`--provider`), and a
            lexical-only (phase 1) generation; run it niced in the background, it embeds
  score     run the systems over both sets and write WORK/results/<system>.json
  report    WORK/results/report.md and summary.json (per language, per category, per repo)
  check-cli ask `python -m woods search Q --limit 10 --json` for a few questions per repository
            and compare its files with the in-process `woods` system

Systems: `woods` (the default search, asked in-process exactly as `woods search Q --limit 10`
asks it), `phase1` (the default strategy on the lexical-only generation: what woods answers before
its vectors exist), `lexical` and `vector` (one leg alone, strategy "lexical" / "vector"),
`bm25-files` (BM25 over whole files, implemented here: a floor).

Metric (copied from semble-dev's run.py, not imported): file-level NDCG@10 with binary gains, the
relevant set = the distinct files of `relevant` + `secondary`, a result file matches a target when
one path is a `/`-suffix of the other; results are the files of the 10 returned units,
deduplicated in rank order; the score is the mean over repositories of the per-repository mean.
Function set: a hit is a returned unit whose file matches the gold file and whose line span
contains the gold definition line (MRR@10 over the 10 returned units); file MRR@10 over the
deduplicated files of those units. `fn_mrr10_strict` also requires the unit's span to lie inside
the gold function's span (the function itself or a piece of it, not its class or its file).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import shutil
import statistics
import subprocess
import sys
import threading
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
if str(HERE.parent) not in sys.path:  # bench/_common.py, as the other benches import it
    sys.path.insert(0, str(HERE.parent))

from _common import TOP_K, code_search_config, dedupe_files, ndcg_at_k, path_matches  # noqa: E402

ANN_DIR = HERE / "annotations"
FN_DIR = HERE / "functions"
WORK = Path(os.environ.get("WOODS_ARCH_WORK", "/tmp/woods-arch"))
MIRRORS = Path(os.environ.get("WOODS_ARCH_MIRRORS", "/work/.mirror"))

CATEGORIES = ("architecture", "semantic")
# The hard patterns questions were written for on purpose (annotation key `pattern`):
# registry: a central manager/registry/main class tying drivers or adapters together;
# contract: an interface or contract rather than one of its implementations;
# legacy: legacy, compatibility, forked or vendored copies; build: installers, build, packaging and
# release scripts rather than the program; docs-gen: documentation or generated code and the
# code or script that generates it.
PATTERNS = ("registry", "contract", "legacy", "build", "docs-gen")
SYSTEMS = ("woods", "phase1", "lexical", "vector", "bm25-files")
# Index-time encoders (`index --provider`, as bench/semble_eval.py): `default` is woods' own choice
# (today the packaged MiniLM through ONNX int8); any other name woods' `index_provider(name)` knows
# (`static`, once the static model is merged); `MODULE:CALLABLE` names any factory returning an
# EmbeddingProvider, imported from PYTHONPATH.
PROVIDERS = ("default", "st-fp32", "st-bf16", "onnx-fp32", "onnx-int8")


# --------------------------------------------------------------------------------------------
# data
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Question:
    """One architecture question and its gold files (relevant first, then secondary)."""

    query: str
    relevant: tuple[str, ...]
    secondary: tuple[str, ...]
    category: str
    pattern: str | None = None  # the hard pattern it was written for (PATTERNS), if any

    @property
    def target_files(self) -> list[str]:
        return list(dict.fromkeys([*self.relevant, *self.secondary]))


@dataclass(frozen=True)
class FunctionTask:
    """A doc comment's first sentence → the function it documents.

    `line` is the definition line (where the name is declared), `start`..`end` the unit's span,
    `doc_start`..`doc_end` the doc comment's lines, blanked in the function set's copy."""

    query: str
    path: str
    identifier: str
    line: int
    start: int
    end: int
    doc_start: int
    doc_end: int


@dataclass
class Repo:
    name: str
    repo: str  # GitHub OWNER/NAME
    commit: str
    language: str
    benchmark_root: str | None
    questions: list[Question] = field(default_factory=list)
    functions: list[FunctionTask] = field(default_factory=list)

    @property
    def mirror(self) -> Path:
        return MIRRORS / self.repo.replace("/", "+") / "repo"

    @property
    def checkout(self) -> Path:
        return WORK / "checkouts" / f"{self.name}@{self.commit[:12]}"

    @property
    def blanked(self) -> Path:
        return WORK / "checkouts" / f"{self.name}@{self.commit[:12]}-fn"

    def root(self, copy: Path) -> Path:
        return copy / self.benchmark_root if self.benchmark_root else copy


def load_repos(only: Sequence[str] = (), languages: Sequence[str] = ()) -> list[Repo]:
    """Every repository of annotations/*.json (with its function set when functions/ has one)."""
    repos = []
    for path in sorted(ANN_DIR.glob("*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        repo = Repo(path.stem, data["repo"], data["commit"], data["language"], data.get("benchmark_root"))
        if (only and repo.name not in only) or (languages and repo.language not in languages):
            continue
        for q in data["queries"]:
            repo.questions.append(Question(q["query"], tuple(q["relevant"]), tuple(q.get("secondary", [])),
                                           q.get("category", "architecture"), q.get("pattern")))
        fn_path = FN_DIR / path.name
        if fn_path.exists():
            fdata = json.loads(fn_path.read_text(encoding="utf-8"))
            if fdata["commit"] != repo.commit or fdata["repo"] != repo.repo:
                raise SystemExit(f"{fn_path}: repo/commit differ from {path}")
            for f in fdata["functions"]:
                repo.functions.append(FunctionTask(f["query"], f["path"], f["identifier"], f["line"], f["start"],
                                                   f["end"], f["doc_start"], f["doc_end"]))
        repos.append(repo)
    return repos


# --------------------------------------------------------------------------------------------
# metrics (semble-dev's definitions: bench/_common.py's dcg, ndcg_at_k, path_matches, dedupe_files)
# --------------------------------------------------------------------------------------------


def file_ndcg(files: list[str], targets: list[str], k: int = TOP_K) -> float:
    """File-level NDCG@k of a ranked path list against the distinct target files."""
    files = dedupe_files(files, k)
    ranks = []
    for target in targets:
        for i, f in enumerate(files, 1):
            if path_matches(f, target):
                ranks.append(i)
                break
    return ndcg_at_k(ranks, len(targets), k)


def reciprocal_rank(hits: Iterable[bool], k: int = TOP_K) -> float:
    """1/rank of the first true item among the first k, else 0."""
    for i, hit in enumerate(hits, 1):
        if i > k:
            break
        if hit:
            return 1.0 / i
    return 0.0


@dataclass(frozen=True)
class Hit:
    """One returned unit: repository-relative file and 1-based inclusive line span."""

    path: str
    start: int | None
    end: int | None


def function_scores(results: Sequence[Hit], task: FunctionTask, k: int = TOP_K) -> dict[str, float]:
    """fn_mrr10 (unit contains the definition line), fn_mrr10_strict (and lies inside the gold
    function's span), file_mrr10 (deduplicated files)."""

    def contains(h: Hit) -> bool:
        return (path_matches(h.path, task.path) and h.start is not None and h.end is not None
                and h.start <= task.line <= h.end)

    def inside(h: Hit) -> bool:
        return contains(h) and h.start is not None and h.end is not None and task.start <= h.start and h.end <= task.end

    units = list(results)[:k]
    files = dedupe_files((h.path for h in units), k)
    return {
        "fn_mrr10": reciprocal_rank((contains(h) for h in units), k),
        "fn_mrr10_strict": reciprocal_rank((inside(h) for h in units), k),
        "file_mrr10": reciprocal_rank((path_matches(f, task.path) for f in files), k),
    }


# --------------------------------------------------------------------------------------------
# blanking doc comments
# --------------------------------------------------------------------------------------------


def blank_lines(data: bytes, spans: Iterable[tuple[int, int]]) -> bytes:
    """`data` with every line of each 1-based inclusive span emptied; line endings (and so every
    line number) are kept."""
    lines = data.splitlines(keepends=True)
    for start, end in spans:
        if start < 1 or end < start or end > len(lines):
            raise ValueError(f"span {start}-{end} outside the file's {len(lines)} lines")
        for i in range(start - 1, end):
            line = lines[i]
            body = line.rstrip(b"\r\n")
            lines[i] = line[len(body):]
    return b"".join(lines)


def _words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9]+", text.lower())


def doc_span_holds(text: str, task: FunctionTask) -> bool:
    """True when the doc comment's lines carry every word of the query in order (the span is
    right; markup the query dropped, such as `<see cref=…>`, may sit between the words)."""
    lines = text.splitlines()
    have = iter(_words(" ".join(lines[task.doc_start - 1: task.doc_end])))
    want = _words(task.query)
    return bool(want) and all(any(w == h for h in have) for w in want)


# --------------------------------------------------------------------------------------------
# prepare
# --------------------------------------------------------------------------------------------


def checkout_tree(git_dir: Path, rev: str, dest: Path) -> tuple[int, list[str]]:
    """Write the tree of `rev` to `dest` from the object store alone (the mirrors have no work
    tree; blobs of 4 MiB and more are absent from them: those are skipped and returned)."""
    listing = subprocess.run(["git", f"--git-dir={git_dir}", "ls-tree", "-r", "-z", "--full-tree", rev],
                             capture_output=True, check=True).stdout
    entries = []
    for rec in listing.split(b"\0"):
        if rec:
            meta, path = rec.split(b"\t", 1)
            mode, typ, sha = meta.split()
            if typ == b"blob":
                entries.append((mode.decode(), sha, os.fsdecode(path)))
    proc = subprocess.Popen(["git", f"--git-dir={git_dir}", "cat-file", "--batch"],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert proc.stdin is not None and proc.stdout is not None

    def feed() -> None:
        assert proc.stdin is not None
        for _, sha, _ in entries:
            proc.stdin.write(sha + b"\n")
        proc.stdin.close()

    feeder = threading.Thread(target=feed, daemon=True)
    feeder.start()
    absent: list[str] = []
    written = 0
    for mode, _sha, path in entries:
        header = proc.stdout.readline()
        if header.rstrip().endswith(b"missing"):
            absent.append(path)
            continue
        size = int(header.split()[2])
        data = proc.stdout.read(size)
        proc.stdout.read(1)
        out = dest / path
        out.parent.mkdir(parents=True, exist_ok=True)
        if mode == "120000":
            os.symlink(os.fsdecode(data), out)
        else:
            out.write_bytes(data)
            if mode == "100755":
                out.chmod(0o755)
        written += 1
    feeder.join()
    proc.wait()
    return written, absent


def make_blanked_copy(repo: Repo) -> dict[str, Any]:
    """Copy the checkout and blank the sampled doc comments; every span is checked first."""
    dest = repo.blanked
    if dest.exists():
        shutil.rmtree(dest)
    shutil.copytree(repo.checkout, dest, symlinks=True)
    (dest / ".complete").unlink(missing_ok=True)
    by_file: dict[str, list[FunctionTask]] = defaultdict(list)
    for task in repo.functions:
        by_file[task.path].append(task)
    problems = []
    for rel, tasks in sorted(by_file.items()):
        path = repo.root(dest) / rel
        data = path.read_bytes()
        text = data.decode("utf-8", "replace")
        lines = text.splitlines()
        for t in tasks:
            if not doc_span_holds(text, t):
                problems.append(f"{rel}:{t.doc_start}-{t.doc_end}: doc comment does not hold {t.query!r}")
            name = re.split(r"[.:#/\\]+", t.identifier)[-1].split("(")[0]
            if name and name not in lines[t.line - 1]:
                problems.append(f"{rel}:{t.line}: definition line does not name {name!r}")
        path.write_bytes(blank_lines(data, [(t.doc_start, t.doc_end) for t in tasks]))
    return {"blanked_spans": len(repo.functions), "files": len(by_file), "problems": problems}


def unindexed_gold(repo: Repo, root: Path) -> list[str]:
    """Gold files woods' discovery does not index (an unsupported kind such as `.y`, `.vim`):
    no woods system can return them; kept as gold because they are the answer."""
    from woods.discovery import discover

    indexed = {f.path for f in discover(root).files}
    return sorted({p for q in repo.questions for p in q.target_files if p not in indexed})


def cmd_prepare(args: argparse.Namespace) -> None:
    status: dict[str, Any] = {}
    for repo in load_repos(args.repo, args.language):
        row: dict[str, Any] = {"repo": repo.repo, "commit": repo.commit, "checkout": str(repo.checkout)}
        if not repo.mirror.is_dir():
            raise SystemExit(f"{repo.name}: no mirror at {repo.mirror} (fetch github:{repo.repo})")
        if not (repo.checkout / ".complete").exists():
            if repo.checkout.exists():
                shutil.rmtree(repo.checkout)
            repo.checkout.mkdir(parents=True)
            written, absent = checkout_tree(repo.mirror, repo.commit, repo.checkout)
            (repo.checkout / ".complete").write_text(json.dumps({"files": written, "absent": absent}) + "\n")
        info = json.loads((repo.checkout / ".complete").read_text())
        root = repo.root(repo.checkout)
        missing = sorted({p for q in repo.questions for p in q.target_files if not (root / p).is_file()})
        missing += sorted({t.path for t in repo.functions if not (root / t.path).is_file()})
        row.update(files=info["files"], absent_blobs=info["absent"], missing_gold=missing,
                   questions=len(repo.questions), functions=len(repo.functions),
                   unindexed_gold=unindexed_gold(repo, root))
        if repo.functions:
            stamp = repo.blanked / ".complete"
            want = {"spans": [[t.path, t.doc_start, t.doc_end] for t in repo.functions]}
            if not stamp.exists() or json.loads(stamp.read_text()).get("spans") != want["spans"]:
                row["blanking"] = make_blanked_copy(repo)
                stamp.write_text(json.dumps({**want, **row["blanking"]}) + "\n")
            else:
                row["blanking"] = {k: v for k, v in json.loads(stamp.read_text()).items() if k != "spans"}
        status[repo.name] = row
        problems = row.get("blanking", {}).get("problems", [])
        print(f"{repo.name:12s} files={info['files']:5d} questions={len(repo.questions):3d} "
              f"functions={len(repo.functions):3d} missing_gold={len(missing)} blank_problems={len(problems)} "
              f"unindexed_gold={row['unindexed_gold']}", file=sys.stderr)
        for p in missing[:5] + problems[:5]:
            print(f"    {p}", file=sys.stderr)
    WORK.mkdir(parents=True, exist_ok=True)
    old = json.loads((WORK / "status.json").read_text()) if (WORK / "status.json").exists() else {}
    old.update(status)
    (WORK / "status.json").write_text(json.dumps(old, indent=1) + "\n")


# --------------------------------------------------------------------------------------------
# index
# --------------------------------------------------------------------------------------------


def provider_factory(name: str) -> Callable[[], Any]:
    """The index-time embedder `--provider` names, made lazily (phase 1 never needs it)."""
    made: list[Any] = []

    def make() -> Any:
        if made:
            return made[0]
        if name == "default":
            from woods.embedding.select import index_provider

            made.append(index_provider())
        elif name.startswith("st-"):
            from woods.embedding.sentence import SentenceTransformerProvider

            made.append(SentenceTransformerProvider(precision="fp32" if name == "st-fp32" else "bf16"))
        elif name.startswith("onnx-"):
            from woods.embedding.onnx import OnnxMiniLMProvider

            made.append(OnnxMiniLMProvider(precision="fp32" if name == "onnx-fp32" else "int8"))
        elif ":" in name:
            import importlib

            module, _, attr = name.partition(":")
            made.append(getattr(importlib.import_module(module), attr)())
        else:  # a name woods' own selector knows (e.g. `static`, once that model is merged)
            from woods.embedding.select import index_provider

            try:
                made.append(index_provider(name))
            except ValueError:
                raise SystemExit(f"unknown provider {name!r} (one of {', '.join(PROVIDERS)}, a name "
                                 "woods.embedding.select.index_provider knows, or MODULE:CALLABLE)") from None
        return made[0]

    return make


def provider_tag(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", name)


def store_dir(repo: Repo, dataset: str, kind: str, provider: str) -> Path:
    """WORK/stores/<provider>/<name>/<arch|fn> for vector indexes, WORK/stores/lexical/… for phase 1."""
    base = WORK / "stores" / ("lexical" if kind == "lexical" else provider_tag(provider))
    return base / repo.name / dataset


def copy_for(repo: Repo, dataset: str) -> Path:
    return repo.root(repo.checkout if dataset == "arch" else repo.blanked)


def cmd_index(args: argparse.Namespace) -> None:
    from woods.indexing import index_repository, parse_workers

    factory = provider_factory(args.provider)
    kinds = ["lexical"] if args.lexical_only else ["lexical", "full"]
    for repo in load_repos(args.repo, args.language):
        for dataset in args.set:
            if dataset == "fn" and not repo.functions:
                continue
            root = copy_for(repo, dataset)
            if not root.is_dir():
                raise SystemExit(f"{root} missing: run `prepare` first")
            for kind in kinds:
                store = store_dir(repo, dataset, kind, args.provider)
                store.parent.mkdir(parents=True, exist_ok=True)
                seed = store_dir(repo, "arch", kind, args.provider)
                if dataset == "fn" and kind == "full" and not store.exists() and (seed / "CURRENT").exists():
                    # The blanked copy differs from the checkout in a few doc comments: start from
                    # the checkout's index, so the incremental run re-parses the changed files and
                    # embeds only the chunks whose text changed (woods reuses a vector by the
                    # SHA-256 of its text, and a vector depends on its text alone).
                    shutil.copytree(seed, store, symlinks=True, ignore=shutil.ignore_patterns("lock", "building-*"))
                started = time.perf_counter()
                summary = index_repository(root, store, factory, workers=parse_workers(), full=args.full,
                                           allow_purge=True, vectors=kind == "full")
                print(f"{repo.name:12s} {dataset:4s} {kind:7s} files={summary.files:5d} units={summary.units:6d} "
                      f"chunks={summary.chunks:6d} embedded={summary.embedded:6d} "
                      f"{time.perf_counter() - started:7.1f}s", flush=True)


# --------------------------------------------------------------------------------------------
# systems
# --------------------------------------------------------------------------------------------


class WoodsSystem:
    """woods' retriever in-process, asked as `woods search QUERY --limit 10` asks it (the same
    strategy, exact-name promotion and one-shot numpy query encoder; bench/semble_eval.py)."""

    def __init__(self, strategy: str | None, lexical_store: bool, provider: str, config: Any = None) -> None:
        self.strategy = strategy
        self.lexical_store = lexical_store
        self.provider = provider
        self.config = config  # a CodeSearchConfig (`score --config`); None: woods' defaults
        self._encoders: dict[str, Any] = {}

    def open(self, repo: Repo, dataset: str) -> Callable[[str], list[Hit]]:
        from woods.embedding.select import query_embedder
        from woods.retrieval.retriever import Retriever
        from woods.store.index import IndexStores

        store = store_dir(repo, dataset, "lexical" if self.lexical_store else "full", self.provider)
        stores = IndexStores.open(store)
        if not self.lexical_store and not stores.has_vectors:
            raise SystemExit(f"{store} has no vectors: run `index` (it may still be running)")
        description = stores.manifest.embedder

        def embedder() -> Any:
            key = str(description.get("fingerprint"))
            if key not in self._encoders:
                self._encoders[key] = query_embedder(description, one_shot=True)
            return self._encoders[key]

        retriever = Retriever(stores, embedder, profile="code", code_config=self.config)

        def search(query: str) -> list[Hit]:
            result = retriever.retrieve(query, strategy=self.strategy, limit=TOP_K)
            return [Hit(e.file_path or "", e.line_start, e.line_end) for e in result.candidates]

        return search


# A floor: BM25 over whole files (path + text), tokens cut here (not woods' tokenizer): words of
# letters and digits, each identifier also split at camelCase and `_`, lowercased, no stemming;
# questions lose a short list of English stop words. k1 = 1.2, b = 0.75 (the usual defaults).
_BM25_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*|\d+")
_BM25_PART = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")
_BM25_STOP = frozenset(
    ["a", "an", "and", "are", "as", "at", "be", "by", "can", "do", "does", "for", "from", "how", "i", "in", "into", "is", "it", "its", "of", "on", "or", "that", "the", "this", "to", "was", "what", "when", "where", "which", "who", "why", "will", "with"]
)


def bm25_tokens(text: str) -> list[str]:
    out = []
    for word in _BM25_WORD.findall(text):
        if len(word) > 64:
            continue
        lower = word.lower()
        out.append(lower)
        parts = [p.lower() for piece in word.split("_") for p in _BM25_PART.findall(piece)]
        out.extend(p for p in parts if p != lower and len(p) > 1)
    return out


class BM25Files:
    """Okapi BM25 over whole files (the files woods' discovery indexes, read as UTF-8)."""

    def __init__(self, docs: dict[str, list[str]], k1: float = 1.2, b: float = 0.75) -> None:
        self.paths = sorted(docs)
        self.k1, self.b = k1, b
        self.tf = [Counter(docs[p]) for p in self.paths]
        self.lengths = [len(docs[p]) for p in self.paths]
        self.avgdl = statistics.fmean(self.lengths) if self.lengths else 0.0
        df: Counter[str] = Counter()
        for counts in self.tf:
            df.update(counts.keys())
        n = len(self.paths)
        self.idf = {t: math.log(1 + (n - d + 0.5) / (d + 0.5)) for t, d in df.items()}

    def search(self, query: str, k: int = TOP_K) -> list[str]:
        terms = [t for t in dict.fromkeys(bm25_tokens(query)) if t not in _BM25_STOP and t in self.idf]
        scores = []
        for i, counts in enumerate(self.tf):
            s = 0.0
            norm = self.k1 * (1 - self.b + self.b * self.lengths[i] / self.avgdl) if self.avgdl else self.k1
            for t in terms:
                f = counts.get(t)
                if f:
                    s += self.idf[t] * f * (self.k1 + 1) / (f + norm)
            if s > 0:
                scores.append((-s, self.paths[i]))
        scores.sort()  # ties: path order
        return [p for _, p in scores[:k]]


def bm25_for(root: Path) -> BM25Files:
    from woods.discovery import discover

    docs = {}
    for f in discover(root).files:
        text = f.abs_path.read_bytes().decode("utf-8", "replace")
        docs[f.path] = bm25_tokens(f.path.replace("/", " ")) + bm25_tokens(text)
    return BM25Files(docs)


def code_config(pairs: Sequence[str]) -> Any:
    """None without changes, else a CodeSearchConfig with `field=value` changes (bench/_common.py's
    parser, the one bench/semble_eval.py uses)."""
    return code_search_config(pairs) if pairs else None


def system_searcher(system: str, provider: str, config: Any = None) -> Callable[[Repo, str], Callable[[str], list[Hit]]]:
    if system == "bm25-files":

        def open_bm25(repo: Repo, dataset: str) -> Callable[[str], list[Hit]]:
            index = bm25_for(copy_for(repo, dataset))
            return lambda q: [Hit(p, None, None) for p in index.search(q)]

        return open_bm25
    woods = {
        "woods": WoodsSystem(None, False, provider, config),
        "phase1": WoodsSystem(None, True, provider, config),
        "lexical": WoodsSystem("lexical", False, provider, config),
        "vector": WoodsSystem("vector", False, provider, config),
    }[system]
    return woods.open


def result_name(system: str, provider: str) -> str:
    provider_free = system in ("phase1", "bm25-files")
    return system if provider_free or provider == "default" else f"{system}@{provider_tag(provider)}"


def to_repo_rel(path: str, repo: Repo) -> str:
    """A path relative to the indexed root → relative to the repository root (gold paths are)."""
    p = path.replace("\\", "/").removeprefix("./")
    return f"{repo.benchmark_root.strip('/')}/{p}" if repo.benchmark_root else p


def score_repo(repo: Repo, opener: Callable[[Repo, str], Callable[[str], list[Hit]]],
               datasets: Sequence[str] = ("arch", "fn")) -> dict[str, Any]:
    row: dict[str, Any] = {"repo": repo.name, "github": repo.repo, "commit": repo.commit, "language": repo.language}
    if repo.questions and "arch" in datasets:
        search = opener(repo, "arch")
        queries = []
        for q in repo.questions:
            started = time.perf_counter()
            hits = search(q.query)
            ms = (time.perf_counter() - started) * 1000
            files = dedupe_files(to_repo_rel(h.path, repo) for h in hits)
            queries.append({"query": q.query, "category": q.category, "pattern": q.pattern,
                            "ndcg10": file_ndcg(files, q.target_files),
                            "files": files, "targets": q.target_files, "ms": round(ms, 2)})
        by_cat: dict[str, list[float]] = defaultdict(list)
        for entry in queries:
            by_cat[entry["category"]].append(entry["ndcg10"])
        row["arch"] = {"n": len(queries), "ndcg10": statistics.fmean(e["ndcg10"] for e in queries),
                       "by_category": {c: statistics.fmean(v) for c, v in sorted(by_cat.items())},
                       "p50_ms": statistics.median(e["ms"] for e in queries), "queries": queries}
    if repo.functions and "fn" in datasets:
        search = opener(repo, "fn")
        tasks = []
        for t in repo.functions:
            hits = [Hit(to_repo_rel(h.path, repo), h.start, h.end) for h in search(t.query)]
            scores = function_scores(hits, t)
            tasks.append({"query": t.query, "identifier": t.identifier, "path": t.path, "line": t.line, **scores,
                          "top": [f"{h.path}:{h.start}-{h.end}" if h.start is not None else h.path for h in hits[:3]]})
        row["fn"] = {"n": len(tasks), **{m: statistics.fmean(e[m] for e in tasks)
                                        for m in ("fn_mrr10", "fn_mrr10_strict", "file_mrr10")}, "queries": tasks}
    return row


def cmd_score(args: argparse.Namespace) -> None:
    out_dir = WORK / "results"
    out_dir.mkdir(parents=True, exist_ok=True)
    repos = load_repos(args.repo, args.language)
    config = code_config(args.config)
    for system in args.systems:
        opener = system_searcher(system, args.provider, config)
        rows = []
        for repo in repos:
            row = score_repo(repo, opener, args.set or ("arch", "fn"))
            rows.append(row)
            arch = f"arch NDCG@10={row['arch']['ndcg10']:.3f}" if "arch" in row else ""
            fn = (f"fn MRR@10={row['fn']['fn_mrr10']:.3f} file MRR@10={row['fn']['file_mrr10']:.3f}"
                  if "fn" in row else "")
            print(f"[{system}] {repo.name:12s} {repo.language:10s} {arch}  {fn}", file=sys.stderr, flush=True)
        name = result_name(system, args.provider) + (f"+{args.tag}" if args.tag else "")
        meta = {"system": system, "provider": None if system in ("phase1", "bm25-files") else args.provider,
                "config": list(args.config),
                "when": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "python": sys.version.split()[0]}
        (out_dir / f"{name}.json").write_text(json.dumps({"name": name, "meta": meta, "repos": rows}, indent=1) + "\n")
        print(f"wrote {out_dir / f'{name}.json'}", file=sys.stderr)


# --------------------------------------------------------------------------------------------
# report
# --------------------------------------------------------------------------------------------


def aggregate(rows: list[dict[str, Any]], section: str, metric: str, category: str | None = None) -> float | None:
    """Mean over repositories of the per-repository mean (semble's summary)."""
    values = []
    for r in rows:
        data = r.get(section)
        if not data:
            continue
        if category is None:
            values.append(data[metric])
        elif category in data["by_category"]:
            values.append(data["by_category"][category])
    return statistics.fmean(values) if values else None


def _pattern_queries(rows: list[dict[str, Any]], pattern: str | None) -> list[dict[str, Any]]:
    return [q for r in rows if "arch" in r for q in r["arch"]["queries"] if q.get("pattern") == pattern]


def _pattern_count(rows: list[dict[str, Any]], pattern: str | None) -> int:
    return len(_pattern_queries(rows, pattern))


def pattern_mean(rows: list[dict[str, Any]], pattern: str | None) -> float | None:
    """Mean NDCG@10 over the questions of one hard pattern (query-weighted: a pattern has a few
    questions in some repositories only); None: the questions written for no pattern."""
    queries = _pattern_queries(rows, pattern)
    return statistics.fmean(q["ndcg10"] for q in queries) if queries else None


def _fmt(v: float | None) -> str:
    return "—" if v is None else f"{v:.3f}"


def build_report(results: dict[str, dict[str, Any]]) -> tuple[str, dict[str, Any]]:
    def base(n: str) -> str:
        return re.split(r"[@+]", n)[0]

    names = sorted(results, key=lambda n: (SYSTEMS.index(base(n)) if base(n) in SYSTEMS else 99, n))
    languages = sorted({r["language"] for v in results.values() for r in v["repos"]})
    summary: dict[str, Any] = {"metric": "arch: file NDCG@10; fn: MRR@10; mean over repos of per-repo means",
                               "systems": {}}
    lines = ["# woods held-out dev sets (bench/arch)", "",
             "## Architecture set — file-level NDCG@10 (mean over repositories of per-repository means)", "",
             "| system | overall | queries | " + " | ".join(languages) + " | architecture | semantic |",
             "|---|---:|---:|" + "---:|" * len(languages) + "---:|---:|"]
    for n in names:
        rows = results[n]["repos"]
        per_lang = {lang: aggregate([r for r in rows if r["language"] == lang], "arch", "ndcg10") for lang in languages}
        total = aggregate(rows, "arch", "ndcg10")
        cats = {c: aggregate(rows, "arch", "ndcg10", c) for c in CATEGORIES}
        nq = sum(r["arch"]["n"] for r in rows if "arch" in r)
        lines.append(f"| {n} | **{_fmt(total)}** | {nq} | " + " | ".join(_fmt(per_lang[x]) for x in languages)
                     + " | " + " | ".join(_fmt(cats[c]) for c in CATEGORIES) + " |")
        summary["systems"][n] = {"arch": {"ndcg10": total, "by_language": per_lang, "by_category": cats, "n": nq}}
    lines += ["", "### Architecture set by hard pattern (mean over the questions written for it)", "",
              "| system | " + " | ".join(f"{p} ({_pattern_count(results[names[0]]['repos'], p)})" for p in PATTERNS)
              + " | none |", "|---|" + "---:|" * (len(PATTERNS) + 1)]
    for n in names:
        cells = [_fmt(pattern_mean(results[n]["repos"], p)) for p in (*PATTERNS, None)]
        lines.append(f"| {n} | " + " | ".join(cells) + " |")
        summary["systems"][n]["arch"]["by_pattern"] = {str(p): pattern_mean(results[n]["repos"], p)
                                                       for p in (*PATTERNS, None)}
    lines += ["", "## Function set — doc comment → function, MRR@10 (function / file)", "",
              "Function MRR@10: a returned unit in the gold file whose span contains the definition line; "
              "strict: the unit also lies inside the function. File MRR@10 over the deduplicated files.", "",
              "| system | fn MRR@10 | strict | file MRR@10 | functions | " + " | ".join(languages) + " |",
              "|---|---:|---:|---:|---:|" + "---:|" * len(languages) + ""]
    for n in names:
        rows = results[n]["repos"]
        fn = aggregate(rows, "fn", "fn_mrr10")
        strict = aggregate(rows, "fn", "fn_mrr10_strict")
        fmrr = aggregate(rows, "fn", "file_mrr10")
        nf = sum(r["fn"]["n"] for r in rows if "fn" in r)
        cells = []
        per_lang = {}
        for lang in languages:
            lr = [r for r in rows if r["language"] == lang]
            a, b = aggregate(lr, "fn", "fn_mrr10"), aggregate(lr, "fn", "file_mrr10")
            per_lang[lang] = {"fn_mrr10": a, "file_mrr10": b}
            cells.append(f"{_fmt(a) if base(n) != 'bm25-files' else '—'} / {_fmt(b)}")
        fn_cell = "—" if base(n) == "bm25-files" else f"**{_fmt(fn)}**"
        strict_cell = "—" if base(n) == "bm25-files" else _fmt(strict)
        lines.append(f"| {n} | {fn_cell} | {strict_cell} | {_fmt(fmrr)} | {nf} | " + " | ".join(cells) + " |")
        summary["systems"].setdefault(n, {})["fn"] = {"fn_mrr10": None if base(n) == "bm25-files" else fn,
                                                      "fn_mrr10_strict": None if base(n) == "bm25-files" else strict,
                                                      "file_mrr10": fmrr, "n": nf, "by_language": per_lang}
    lines += ["", "## Per repository", "", "Architecture NDCG@10 · function MRR@10 · file MRR@10 (function set).", "",
              "| repo | language | Q | F | " + " | ".join(names) + " |", "|---|---|---:|---:|" + "---|" * len(names)]
    repos = sorted({(r["language"], r["repo"]) for v in results.values() for r in v["repos"]})
    for lang, name in repos:
        cells = []
        nq = nf = 0
        for n in names:
            r = next((x for x in results[n]["repos"] if x["repo"] == name), None)
            if r is None:
                cells.append("—")
                continue
            nq, nf = r.get("arch", {}).get("n", 0), r.get("fn", {}).get("n", 0)
            a = _fmt(r["arch"]["ndcg10"]) if "arch" in r else "—"
            f = r.get("fn")
            fcell = "—" if not f else (f"— · {_fmt(f['file_mrr10'])}" if base(n) == "bm25-files"
                                       else f"{_fmt(f['fn_mrr10'])} · {_fmt(f['file_mrr10'])}")
            cells.append(f"{a} · {fcell}")
        lines.append(f"| {name} | {lang} | {nq} | {nf} | " + " | ".join(cells) + " |")
    status_path = WORK / "status.json"
    if status_path.exists():
        status = json.loads(status_path.read_text())
        gaps = {name: row.get("unindexed_gold", []) for name, row in sorted(status.items())
                if row.get("unindexed_gold")}
        if gaps:
            lines += ["", "## Gold files woods does not index", "",
                      "Kept as gold (they are the answer); no woods system can return them.", ""]
            lines += [f"- {name}: " + ", ".join(f"`{p}`" for p in paths) for name, paths in gaps.items()]
            summary["unindexed_gold"] = gaps
    for n in names:
        summary["systems"][n]["meta"] = results[n]["meta"]
        summary["systems"][n]["repos"] = {
            r["repo"]: {"arch_ndcg10": r.get("arch", {}).get("ndcg10"), "fn_mrr10": r.get("fn", {}).get("fn_mrr10"),
                        "file_mrr10": r.get("fn", {}).get("file_mrr10")} for r in results[n]["repos"]}
    return "\n".join(lines) + "\n", summary


def cmd_report(args: argparse.Namespace) -> None:
    out_dir = WORK / "results"
    results = {}
    for path in sorted(out_dir.glob("*.json")):
        if path.name == "summary.json":
            continue
        data = json.loads(path.read_text())
        if args.systems and data["name"] not in args.systems:
            continue
        results[data["name"]] = data
    if not results:
        raise SystemExit(f"no results in {out_dir}: run `score` first")
    text, summary = build_report(results)
    (out_dir / "report.md").write_text(text)
    (out_dir / "summary.json").write_text(json.dumps(summary, indent=1) + "\n")
    print(text)
    print(f"wrote {out_dir / 'report.md'} and summary.json", file=sys.stderr)


# --------------------------------------------------------------------------------------------
# check-cli
# --------------------------------------------------------------------------------------------


def cmd_check_cli(args: argparse.Namespace) -> None:
    """The in-process `woods` system against `python -m woods search Q --limit 10 --json`."""
    system = WoodsSystem(None, False, args.provider)
    agree = total = 0
    for repo in load_repos(args.repo, args.language):
        search = system.open(repo, "arch")
        store = store_dir(repo, "arch", "full", args.provider)
        for q in repo.questions[: args.per_repo]:
            mine = dedupe_files(h.path for h in search(q.query))
            proc = subprocess.run([sys.executable, "-m", "woods", "search", q.query, "--store", str(store),
                                   "--limit", str(TOP_K), "--json"], capture_output=True, text=True,
                                  env={**os.environ, "HF_HUB_OFFLINE": "1"})
            if proc.returncode != 0:
                raise SystemExit(f"woods search failed ({proc.returncode}): {proc.stderr.strip()[:300]}")
            cli = dedupe_files(r["file_path"] for r in json.loads(proc.stdout)["results"])
            total += 1
            agree += mine == cli
            if mine != cli:
                print(f"DIFFER {repo.name}: {q.query!r}\n  in-process {mine}\n  cli        {cli}", file=sys.stderr)
    print(f"{agree}/{total} questions: the CLI's files equal the in-process system's")
    if agree != total:
        sys.exit(1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)

    def common(p: argparse.ArgumentParser) -> None:
        p.add_argument("--repo", action="append", default=[], help="only these repositories (annotation names)")
        p.add_argument("--language", action="append", default=[], help="only these languages")

    p = sub.add_parser("prepare", help="check out the pinned commits and make the blanked copies")
    common(p)
    p.set_defaults(func=cmd_prepare)
    p = sub.add_parser("index", help="index both copies (phase-1 lexical and, unless --lexical-only, vectors)")
    common(p)
    p.add_argument("--provider", default="default", help=f"{', '.join(PROVIDERS)} or MODULE:CALLABLE")
    p.add_argument("--set", action="append", choices=("arch", "fn"), help="which copies (default both)")
    p.add_argument("--lexical-only", action="store_true", help="only the phase-1 stores (no model)")
    p.add_argument("--full", action="store_true", help="rebuild instead of an incremental run")
    p.set_defaults(func=cmd_index)
    p = sub.add_parser("score", help="run systems over both sets")
    common(p)
    p.add_argument("--provider", default="default", help="which vector stores to read (as `index --provider`)")
    p.add_argument("--systems", nargs="+", default=list(SYSTEMS), choices=SYSTEMS)
    p.add_argument("--set", action="append", choices=("arch", "fn"), help="which sets (default both)")
    p.add_argument("--config", action="append", default=[], help="CodeSearchConfig field=value (an ablation)")
    p.add_argument("--tag", default=None, help="suffix of the result names (results/<system>+<tag>.json)")
    p.set_defaults(func=cmd_score)
    p = sub.add_parser("report", help="results/report.md and summary.json")
    p.add_argument("--systems", nargs="*", default=None, help="result names to include (default all)")
    p.set_defaults(func=cmd_report)
    p = sub.add_parser("check-cli", help="compare the in-process system with the CLI's answers")
    common(p)
    p.add_argument("--provider", default="default")
    p.add_argument("--per-repo", type=int, default=3)
    p.set_defaults(func=cmd_check_cli)
    args = parser.parse_args()
    if getattr(args, "set", None) is None and args.command == "index":
        args.set = ["arch", "fn"]
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    args.func(args)


if __name__ == "__main__":
    main()
