"""Redmine question set: how well woods answers a newcomer's questions about a large Rails app.

Why: the public semble-dev benchmark has no Rails application, and Rails is where woods comes
from. `bench/redmine_questions.json` holds plain-English questions about Redmine 5.0.4 (Debian's
package) with gold files and gold units chosen by reading the code; this script asks every
question through the Python API (`woods.Index.search`) under several strategies and scores them.

    apt-get download redmine && dpkg-deb -x redmine_*.deb /tmp/redmine/root
    HF_HUB_OFFLINE=1 python bench/redmine_eval.py [--redmine /tmp/redmine/root/usr/share/redmine] \
        [--store /tmp/redmine-eval-store] [--reindex] [--config NAME=STRATEGY]... [--limit 10] \
        [--json /tmp/redmine-eval.json] [--misses N]

The Redmine tree is copied (regular files only: the package's symlinks point into /etc and
/var) to `STORE/tree` and indexed into `STORE/index`; nothing is written into the source tree.
An existing index is reused unless `--reindex`. The question file is validated first (schema,
every gold file exists in the Redmine tree, every gold unit exists in the index): any problem
exits 2 with one line.

Metrics, per configuration, overall and by category and by kind (means over questions):
- `ndcg@10`: file-level NDCG@10 with binary gains (semble-dev's metric: relevant = the distinct
  gold files, results = the distinct file paths of the ranked units in rank order, a result
  matches a gold file when one path is a '/'-suffix of the other);
- `file_mrr@10`: reciprocal rank of the first gold file among those distinct files;
- `unit_mrr@10`: reciprocal rank of the first ranked unit whose identifier is a gold unit;
- `file_recall@10`: share of the gold files among the distinct files.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

BENCH_DIR = Path(__file__).resolve().parent
REPO_ROOT = BENCH_DIR.parent
# The bench runs from a checkout (woods need not be installed): make the package importable.
for _path in (str(BENCH_DIR), str(REPO_ROOT)):
    if _path not in sys.path:
        sys.path.insert(0, _path)

from _common import (  # noqa: E402
    TOP_K,
    code_search_config,
    dedupe_files,
    format_table,
    ndcg_at_k,
    path_matches,
    write_json,
)

DEFAULT_REDMINE = Path("/tmp/redmine/root/usr/share/redmine")
DEFAULT_STORE = Path("/tmp/redmine-eval-store")
DEFAULT_QUESTIONS = BENCH_DIR / "redmine_questions.json"
# default: woods' own classification; vector: the plain MiniLM leg; keyword and lexical: the two
# lexical legs (`lexical` is skipped with a message where the installed woods does not know it).
DEFAULT_CONFIGS = ("default=auto", "vector=vector", "keyword=keyword", "lexical=lexical")
CATEGORIES = ("semantic", "architecture", "symbol")
QUESTION_FIELDS = ("id", "question", "category", "kind", "gold_files", "gold_units")
SOURCE_MARKER = "source.json"
METRICS = ("ndcg@10", "file_mrr@10", "unit_mrr@10", "file_recall@10")


class BenchInputError(Exception):
    """A problem with the question file, the Redmine tree or the options: exit 2, one line."""


# -- questions -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Question:
    id: str
    question: str
    category: str
    kind: str
    gold_files: tuple[str, ...]
    gold_units: tuple[str, ...]


def schema_problems(payload: Any) -> list[str]:
    """Problems with the question file's shape (no Redmine tree or index needed)."""
    if not isinstance(payload, dict):
        return ["the file must hold one JSON object with 'header' and 'questions'"]
    problems: list[str] = []
    header = payload.get("header")
    if not isinstance(header, dict):
        problems.append("'header' must be an object")
    else:
        for key in ("redmine_version", "gold", "date"):
            if not isinstance(header.get(key), str) or not header[key].strip():
                problems.append(f"header.{key} must be a non-empty string")
    questions = payload.get("questions")
    if not isinstance(questions, list) or not questions:
        return [*problems, "'questions' must be a non-empty list"]
    seen_ids: set[str] = set()
    seen_texts: set[str] = set()
    for position, item in enumerate(questions, 1):
        where = f"question {position}"
        if not isinstance(item, dict):
            problems.append(f"{where}: not an object")
            continue
        qid = item.get("id")
        if isinstance(qid, str) and qid:
            where = qid
            if qid in seen_ids:
                problems.append(f"{where}: duplicate id")
            seen_ids.add(qid)
        missing = [name for name in QUESTION_FIELDS if name not in item]
        if missing:
            problems.append(f"{where}: missing {', '.join(missing)}")
            continue
        for name in ("id", "question", "kind"):
            if not isinstance(item[name], str) or not item[name].strip():
                problems.append(f"{where}: {name} must be a non-empty string")
        if item["category"] not in CATEGORIES:
            problems.append(f"{where}: category {item['category']!r} is not one of {', '.join(CATEGORIES)}")
        for name in ("gold_files", "gold_units"):
            values = item[name]
            if not isinstance(values, list) or not values:
                problems.append(f"{where}: {name} must be a non-empty list")
            elif not all(isinstance(v, str) and v.strip() for v in values):
                problems.append(f"{where}: {name} must hold non-empty strings")
            elif len(set(values)) != len(values):
                problems.append(f"{where}: {name} has duplicates")
        if isinstance(item["question"], str):
            text = " ".join(item["question"].lower().split())
            if text in seen_texts:
                problems.append(f"{where}: duplicate question text")
            seen_texts.add(text)
        for path in item["gold_files"] if isinstance(item["gold_files"], list) else []:
            if isinstance(path, str) and (path.startswith("/") or ".." in Path(path).parts):
                problems.append(f"{where}: gold file {path!r} must be relative to the Redmine root")
    return problems


def load_questions(path: Path) -> tuple[dict[str, Any], list[Question]]:
    try:
        payload = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise BenchInputError(f"cannot read {path}: {exc.strerror or exc}") from exc
    except json.JSONDecodeError as exc:
        raise BenchInputError(f"{path} is not valid JSON: {exc}") from exc
    problems = schema_problems(payload)
    if problems:
        raise BenchInputError(one_line(f"{path}", problems))
    questions = [
        Question(
            id=item["id"],
            question=item["question"],
            category=item["category"],
            kind=item["kind"],
            gold_files=tuple(item["gold_files"]),
            gold_units=tuple(item["gold_units"]),
        )
        for item in payload["questions"]
    ]
    return payload["header"], questions


def one_line(subject: str, problems: Sequence[str], shown: int = 5) -> str:
    more = f"; … and {len(problems) - shown} more" if len(problems) > shown else ""
    noun = "problem" if len(problems) == 1 else "problems"
    return f"{subject}: {len(problems)} {noun}: " + "; ".join(problems[:shown]) + more


def missing_gold_files(questions: Iterable[Question], root: Path) -> list[str]:
    return [
        f"{q.id}: gold file {p} not in {root}"
        for q in questions
        for p in q.gold_files
        if not (root / p).is_file()
    ]


def missing_gold_units(questions: Iterable[Question], exists: Callable[[str], bool]) -> list[str]:
    return [
        f"{q.id}: gold unit {u!r} not in the index" for q in questions for u in q.gold_units if not exists(u)
    ]


@dataclass
class Score:
    ndcg: float
    file_mrr: float
    unit_mrr: float
    file_recall: float
    file_ranks: list[int]
    unit_rank: int | None

    def values(self) -> dict[str, float]:
        return {
            "ndcg@10": self.ndcg,
            "file_mrr@10": self.file_mrr,
            "unit_mrr@10": self.unit_mrr,
            "file_recall@10": self.file_recall,
        }


def score(question: Question, files: Sequence[str], units: Sequence[str], k: int = TOP_K) -> Score:
    """Score one answer: `files` are the distinct ranked file paths, `units` the ranked identifiers."""
    files = dedupe_files(files, k)
    ranks: list[int] = []
    for gold in question.gold_files:
        for rank, path in enumerate(files, 1):
            if path_matches(path, gold):
                ranks.append(rank)
                break
    gold_units = set(question.gold_units)
    unit_rank = next((rank for rank, unit in enumerate(units[:k], 1) if unit in gold_units), None)
    return Score(
        ndcg=ndcg_at_k(ranks, len(question.gold_files), k),
        file_mrr=1.0 / min(ranks) if ranks else 0.0,
        unit_mrr=1.0 / unit_rank if unit_rank else 0.0,
        file_recall=len(ranks) / len(question.gold_files),
        file_ranks=sorted(ranks),
        unit_rank=unit_rank,
    )


def mean_scores(scores: Sequence[Score]) -> dict[str, float]:
    return {name: statistics.fmean(s.values()[name] for s in scores) for name in METRICS}


# -- the index -----------------------------------------------------------------------------------


def redmine_version(root: Path) -> str | None:
    """MAJOR.MINOR.TINY from lib/redmine/version.rb, or None."""
    try:
        text = (root / "lib/redmine/version.rb").read_text(encoding="utf-8")
    except OSError:
        return None
    parts = {}
    for name in ("MAJOR", "MINOR", "TINY"):
        for line in text.splitlines():
            words = line.split("=")
            if len(words) == 2 and words[0].strip() == name and words[1].strip().isdigit():
                parts[name] = words[1].strip()
                break
    return ".".join(parts[n] for n in ("MAJOR", "MINOR", "TINY")) if len(parts) == 3 else None


def copy_tree(source: Path, target: Path) -> int:
    """Copy the regular files of `source` to `target` (symlinks skipped); returns the count."""
    if target.exists():
        shutil.rmtree(target)
    copied = 0
    for directory, dirnames, filenames in os.walk(source):
        dirnames.sort()
        relative = Path(directory).relative_to(source)
        for name in sorted(filenames):
            path = Path(directory, name)
            if path.is_symlink() or not path.is_file():
                continue
            destination = target / relative / name
            destination.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(path, destination)
            copied += 1
    return copied


def index_published(index_dir: Path) -> bool:
    return (index_dir / "CURRENT").is_file()


def ensure_index(redmine: Path, store: Path, reindex: bool, embedder: str) -> dict[str, Any]:
    """Reuse or build STORE/index from a copy of `redmine` in STORE/tree; returns what was done."""
    tree, index_dir, marker = store / "tree", store / "index", store / SOURCE_MARKER
    source = {
        "redmine": str(redmine.resolve()),
        "redmine_version": redmine_version(redmine),
        "embedder": embedder,
    }
    if not reindex and index_published(index_dir):
        try:
            recorded = json.loads(marker.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError):
            recorded = None
        if isinstance(recorded, dict) and recorded.get("redmine") not in (None, source["redmine"]):
            raise BenchInputError(
                f"{store} holds an index of {recorded['redmine']}, not {source['redmine']}; pass --reindex"
            )
        if isinstance(recorded, dict) and recorded.get("embedder") not in (None, embedder):
            raise BenchInputError(f"{store} was indexed with embedder {recorded['embedder']}; pass --reindex")
        return {"reused": True, **(recorded if isinstance(recorded, dict) else source)}

    from woods.embedding.select import index_provider
    from woods.indexing import index_repository, parse_workers

    store.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    copied = copy_tree(redmine, tree)
    if index_dir.exists():
        shutil.rmtree(index_dir)
    print(
        f"redmine_eval: indexing {copied} files of {redmine} (a copy in {tree}) into {index_dir}",
        file=sys.stderr,
    )
    summary = index_repository(
        tree, index_dir, lambda: index_provider(embedder), full=True, workers=parse_workers()
    )
    seconds = round(time.perf_counter() - started, 1)
    built = {
        **source,
        "files_copied": copied,
        "index_seconds": seconds,
        "units": summary.units,
        "chunks": summary.chunks,
    }
    marker.write_text(json.dumps(built, indent=2) + "\n", encoding="utf-8")
    print(
        f"redmine_eval: indexed {summary.units} units ({summary.chunks} chunks) in {seconds} s",
        file=sys.stderr,
    )
    return {"reused": False, **built}


def unit_checker(index: Any) -> Callable[[str], bool]:
    from woods.api import AmbiguousIdentifierError

    def exists(identifier: str) -> bool:
        try:
            return index.lookup(identifier, include_source=False) is not None
        except AmbiguousIdentifierError:
            return True  # several units of different types share the name: it exists

    return exists


# -- running -------------------------------------------------------------------------------------


@dataclass
class Config:
    name: str
    strategy: str


@dataclass
class ConfigRun:
    config: Config
    skipped: str | None = None
    answers: list[dict[str, Any]] = field(default_factory=list)
    scores: list[Score] = field(default_factory=list)
    seconds: list[float] = field(default_factory=list)


def parse_configs(values: Sequence[str] | None) -> list[Config]:
    configs: list[Config] = []
    for value in values or DEFAULT_CONFIGS:
        name, sep, strategy = value.partition("=")
        if not sep or not name.strip() or not strategy.strip():
            raise BenchInputError(
                f"--config {value!r}: expected NAME=STRATEGY, e.g. vector=vector or default=auto"
            )
        if any(c.name == name.strip() for c in configs):
            raise BenchInputError(f"--config: the name {name.strip()!r} is given twice")
        configs.append(Config(name.strip(), strategy.strip()))
    return configs


def strategy_problem(index: Any, strategy: str) -> str | None:
    """Why the installed woods rejects `strategy` (None when it accepts it)."""
    from woods.errors import InputError

    try:
        index.search("issue", limit=1, strategy=None if strategy == "auto" else strategy)
    except InputError as exc:
        return str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    return None


def run_config(index: Any, config: Config, questions: Sequence[Question], limit: int) -> ConfigRun:
    run = ConfigRun(config)
    problem = strategy_problem(index, config.strategy)
    if problem is not None:
        run.skipped = problem
        print(
            f"redmine_eval: skipping {config.name} (strategy {config.strategy!r}): {problem}", file=sys.stderr
        )
        return run
    strategy = None if config.strategy == "auto" else config.strategy
    for question in questions:
        started = time.perf_counter()
        hits = index.search(question.question, limit=limit, strategy=strategy)
        run.seconds.append(time.perf_counter() - started)
        files = dedupe_files((hit.file_path for hit in hits), TOP_K)
        units = [hit.identifier for hit in hits]
        result = score(question, files, units)
        run.scores.append(result)
        run.answers.append(
            {
                "id": question.id,
                "files": files,
                "units": units[:TOP_K],
                "file_ranks": result.file_ranks,
                "unit_rank": result.unit_rank,
                **{name: round(value, 4) for name, value in result.values().items()},
            }
        )
    return run


def grouped(
    runs: Sequence[ConfigRun], questions: Sequence[Question], key: Callable[[Question], str]
) -> dict[str, Any]:
    """{config: {group: {metric: mean, n}}} for the runs that ran."""
    result: dict[str, Any] = {}
    for run in runs:
        if run.skipped is not None:
            continue
        groups: dict[str, list[Score]] = {}
        for question, item in zip(questions, run.scores, strict=True):
            groups.setdefault(key(question), []).append(item)
        result[run.config.name] = {
            name: {**{m: round(v, 4) for m, v in mean_scores(items).items()}, "n": len(items)}
            for name, items in sorted(groups.items())
        }
    return result


def report_tables(runs: Sequence[ConfigRun], questions: Sequence[Question]) -> str:
    done = [run for run in runs if run.skipped is None]
    headers = ["config", "strategy", *METRICS, "p50 ms"]
    rows = []
    for run in done:
        means = mean_scores(run.scores)
        rows.append(
            [
                run.config.name,
                run.config.strategy,
                *(f"{means[m]:.3f}" for m in METRICS),
                f"{statistics.median(run.seconds) * 1000:.0f}",
            ]
        )
    parts = [
        f"Redmine questions: {len(questions)}; top {TOP_K} units per question",
        format_table(headers, rows),
    ]
    for title, key in (("category", lambda q: q.category), ("kind", lambda q: q.kind)):
        table = grouped(done, questions, key)
        names = sorted({group for per_config in table.values() for group in per_config})
        group_rows = []
        for group in names:
            count = next(iter(table.values()))[group]["n"] if table else 0
            row: list[Any] = [group, count]
            for run in done:
                values = table[run.config.name][group]
                row.append(f"{values['ndcg@10']:.3f} / {values['unit_mrr@10']:.3f}")
            group_rows.append(row)
        headers_group = [title, "n", *(f"{run.config.name} ndcg/unit_mrr" for run in done)]
        parts.append(f"By {title} (file NDCG@10 / unit MRR@10):\n" + format_table(headers_group, group_rows))
    for run in runs:
        if run.skipped is not None:
            parts.append(f"skipped {run.config.name} (strategy {run.config.strategy!r}): {run.skipped}")
    return "\n\n".join(parts)


def misses_text(runs: Sequence[ConfigRun], questions: Sequence[Question], count: int) -> str:
    """The `count` worst questions per configuration (lowest NDCG, then unit MRR)."""
    parts = []
    for run in runs:
        if run.skipped is not None:
            continue
        order = sorted(
            range(len(questions)), key=lambda i: (run.scores[i].ndcg, run.scores[i].unit_mrr, questions[i].id)
        )
        lines = [f"Worst {count} for {run.config.name}:"]
        for i in order[:count]:
            question, answer = questions[i], run.answers[i]
            lines.append(f"  {question.id} [{question.category}/{question.kind}] {question.question}")
            lines.append(f"    gold:  {', '.join(question.gold_files)} | {', '.join(question.gold_units)}")
            lines.append(f"    files: {', '.join(answer['files'][:5])}")
            lines.append(f"    units: {', '.join(answer['units'][:5])}")
        parts.append("\n".join(lines))
    return "\n\n".join(parts)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--redmine", type=Path, default=DEFAULT_REDMINE, help="the Redmine root (app/, config/, lib/)"
    )
    parser.add_argument("--store", type=Path, default=DEFAULT_STORE, help="where the copy and the index live")
    parser.add_argument("--questions", type=Path, default=DEFAULT_QUESTIONS, help="the question file")
    parser.add_argument("--reindex", action="store_true", help="rebuild the index even if one exists")
    parser.add_argument(
        "--config",
        action="append",
        metavar="NAME=STRATEGY",
        help="a configuration to score (repeatable; STRATEGY auto = woods' own choice). "
        f"Default: {' '.join(DEFAULT_CONFIGS)}",
    )
    parser.add_argument("--limit", type=int, default=TOP_K, help="units asked per question (default 10)")
    parser.add_argument("--ranking", action="append", default=[], metavar="FIELD=VALUE",
                        help="override a code-search weight (woods.retrieval.code_search.CodeSearchConfig; repeatable)")
    parser.add_argument("--json", type=Path, metavar="PATH", help="also write the full results as JSON here")
    parser.add_argument(
        "--misses", type=int, default=0, metavar="N", help="print the N worst questions per config"
    )
    parser.add_argument("--embedder", default="static", choices=("static", "minilm", "fake"),
                        help="the embedder the index is built with (default: woods's static model; minilm: the "
                             "contextual model as the only embedder)")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        if args.limit < 1:
            raise BenchInputError("--limit must be at least 1")
        configs = parse_configs(args.config)
        header, questions = load_questions(args.questions)
        if not (args.redmine / "app").is_dir() or not (args.redmine / "lib/redmine").is_dir():
            raise BenchInputError(
                f"{args.redmine} is not a Redmine root (no app/ or lib/redmine/); "
                "get it with: apt-get download redmine && dpkg-deb -x redmine_*.deb /tmp/redmine/root"
            )
        problems = missing_gold_files(questions, args.redmine)
        if problems:
            raise BenchInputError(one_line(str(args.questions), problems))
        version = redmine_version(args.redmine)
        if version != header["redmine_version"]:
            raise BenchInputError(
                f"{args.redmine} is Redmine {version}, the questions are about {header['redmine_version']}"
            )
        built = ensure_index(args.redmine, args.store, args.reindex, args.embedder)

        from woods.api import Index

        ranking = code_search_config(args.ranking) if args.ranking else None
        with Index.open(store=args.store / "index", ranking=ranking) as index:
            problems = missing_gold_units(questions, unit_checker(index))
            if problems:
                raise BenchInputError(one_line(str(args.questions), problems))
            runs = [run_config(index, config, questions, args.limit) for config in configs]
    except BenchInputError as exc:
        print(f"redmine_eval: {exc}", file=sys.stderr)
        return 2

    print(report_tables(runs, questions))
    if args.misses > 0:
        print()
        print(misses_text(runs, questions, args.misses))
    if args.json:
        result = {
            "questions_file": str(args.questions),
            "header": header,
            "index": built,
            "limit": args.limit,
            "configs": {
                run.config.name: {
                    "strategy": run.config.strategy,
                    "skipped": run.skipped,
                    "overall": {m: round(v, 4) for m, v in mean_scores(run.scores).items()}
                    if run.scores
                    else None,
                    "p50_ms": round(statistics.median(run.seconds) * 1000, 1) if run.seconds else None,
                    "answers": run.answers,
                }
                for run in runs
            },
            "by_category": grouped(runs, questions, lambda q: q.category),
            "by_kind": grouped(runs, questions, lambda q: q.kind),
        }
        write_json(args.json, result)
    return 0


if __name__ == "__main__":
    sys.exit(main())
