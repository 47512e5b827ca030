"""Mine the issue → code localisation dev set (bench/localize/queries.json) from git histories.

For every repository below, from its bare mirror (`fetch github:OWNER/NAME` puts it in
/work/.mirror/OWNER+NAME/repo; `--mirrors` names another root):

1. scan the non-merge commits reachable from the mirror's HEAD (pinned in the output) for bug
   fixes — the subject or body says fix / bug / regression / crash / panic / exception …, or the
   body closes an issue — leaving out housekeeping (typos, lint, CI, docs, tests, reverts,
   releases, dependency bumps; see localize_lib.is_fix_message);
2. keep a fix when it changed 1–10 gold files: code files (a language woods extracts) that are
   not tests, docs, examples, benchmarks, fixtures, vendored or CI files and that exist at the
   parent (modified, deleted or renamed — a file the fix adds cannot be found before it exists);
   fixes touching over 40 files in all are huge refactors and left out;
3. the query is the cleaned commit message (subject and body, trailers removed); it must have
   at least 8 words and fit woods' 8192-byte query limit; backports (the same subject again) are
   left out;
4. at the parent commit, each gold file is extracted with woods' own extractor
   (`woods.extract.extract_file`, with the repository layout of the parent tree) and the gold
   functions are the innermost function/method units holding a changed parent line (a pure
   insertion only when it falls strictly inside one); a file whose changed lines are all inside
   test code (Rust `mod tests`) is not gold;
5. per repository, fixes are taken in a fixed pseudo-random order (SHA-256 of repo + commit),
   those whose message has a body before those without; up to `--per-repo-trace` fixes carrying
   a stack trace or error output and up to `--per-repo-plain` without one are kept.

    PYTHONPATH=. python bench/localize/mine.py [--repo OWNER/NAME]… [--out bench/localize/queries.json]
    PYTHONPATH=. python bench/localize/mine.py --scan-only     # candidate counts per repository

The output is deterministic for the same mirrors (each mirror's HEAD is recorded per query and in
the header), holds queries and labels only — no fetched code.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
for _path in (str(HERE), str(ROOT)):
    if _path not in sys.path:
        sys.path.insert(0, _path)

import localize_lib as lib  # noqa: E402

MIRRORS = Path(os.environ.get("WOODS_MIRRORS", "/work/.mirror"))

# The repositories mined, with the language each is listed under in bench/EVAL_REPOS.md (a
# query's own language comes from its gold files). None is a semble-benchmark repository.
REPOSITORIES: dict[str, str] = {
    "Textualize/rich": "python", "celery/celery": "python", "psf/black": "python", "httpie/cli": "python",
    "encode/uvicorn": "python",
    "fastify/fastify": "javascript", "mochajs/mocha": "javascript", "koajs/koa": "javascript",
    "typeorm/typeorm": "typescript", "honojs/hono": "typescript", "date-fns/date-fns": "typescript",
    "caddyserver/caddy": "go", "junegunn/fzf": "go", "urfave/cli": "go", "gorilla/mux": "go",
    "jhy/jsoup": "java", "square/retrofit": "java", "apache/commons-io": "java",
    "square/okhttp": "kotlin", "InsertKoinIO/koin": "kotlin",
    "BurntSushi/ripgrep": "rust", "hyperium/hyper": "rust", "alacritty/alacritty": "rust", "clap-rs/clap": "rust",
    "sidekiq/sidekiq": "ruby", "lostisland/faraday": "ruby", "heartcombo/devise": "ruby", "jekyll/jekyll": "ruby",
    "composer/composer": "php", "slimphp/Slim": "php", "thephpleague/flysystem": "php",
    "App-vNext/Polly": "csharp", "serilog/serilog": "csharp", "AutoMapper/AutoMapper": "csharp",
    "jqlang/jq": "c", "tmux/tmux": "c", "facebook/zstd": "c",
    "gabime/spdlog": "cpp", "catchorg/Catch2": "cpp",
    # Added for this set (appended to bench/EVAL_REPOS.md): histories whose fix messages often
    # carry the stack trace or error output the fix is about. (puma/puma was a candidate, but the
    # static model's training corpus holds it.)
    "python/mypy": "python", "mikro-orm/mikro-orm": "typescript", "restic/restic": "go", "netty/netty": "java",
    "detekt/detekt": "kotlin", "nushell/nushell": "rust", "helix-editor/helix": "rust",
    "rubygems/rubygems": "ruby", "roundcube/roundcubemail": "php", "doctrine/orm": "php",
    "jellyfin/jellyfin": "csharp", "NLog/NLog": "csharp", "git/git": "c", "mpv-player/mpv": "c", "ccache/ccache": "cpp",
}

MIN_WORDS = 8  # fewer words than a short issue title ("Fix crash when X is None") says nothing
MAX_QUERY_BYTES = 8192  # woods' query limit (woods/limits.py): a longer paste is refused, not searched
MAX_GOLD_FILES = 10  # more is a refactor, not a localised fix
MAX_CHANGED_FILES = 40  # every file the commit touches, tests and docs included


# Repositories a dev set of ours must never use: the semble benchmark's and the static model's
# training corpus (when that file exists).
BENCHMARK_REPOS = Path(os.environ.get("WOODS_SEMBLE_REPOS", str(ROOT.parent / "shared" / "semble-dev" / "benchmark-repos.tsv")))
TRAINING_CORPUS = Path(os.environ.get("WOODS_STATIC_CORPUS", str(ROOT / "training" / "static_model" / "corpus.json")))


def forbidden_repos() -> set[str]:
    """owner/name (lower case) of every benchmark and training repository we can see."""
    found: set[str] = set()
    if BENCHMARK_REPOS.exists():
        for line in BENCHMARK_REPOS.read_text().splitlines():
            fields = line.split("\t")
            if len(fields) == 2 and "github.com/" in fields[1]:
                found.add(fields[1].split("github.com/", 1)[1].removesuffix(".git").lower())
    if TRAINING_CORPUS.exists():
        found.update(r["repo"].lower() for r in json.loads(TRAINING_CORPUS.read_text())["repositories"])
    return found


def mirror_dir(repo: str) -> Path:
    owner, name = repo.split("/")
    return MIRRORS / f"{owner}+{name}" / "repo"


def git(repo: str, *args: str, binary: bool = False) -> Any:
    command = ["git", "-c", "core.quotepath=off", f"--git-dir={mirror_dir(repo)}", *args]
    result = subprocess.run(command, capture_output=True, check=True)
    return result.stdout if binary else result.stdout.decode("utf-8", "replace")


def git_renames(repo: str, *args: str) -> str:
    """`git <args>` with rename detection, or without it when the snapshot lacks a blob rename
    detection must read (fetched snapshots may leave their largest files out): renames then show
    as a deletion and an addition."""
    try:
        out: str = git(repo, args[0], "-M", *args[1:])
    except subprocess.CalledProcessError:
        out = git(repo, args[0], "--no-renames", *args[1:])
    return out


@dataclass
class Candidate:
    repo: str
    commit: str
    parent: str
    time: int
    message: str
    query: str
    gold_files: list[str]
    added_files: list[str]
    changed_files: int


def code_language(path: str, repo_language: str) -> str | None:
    """The language woods extracts `path` as when it is code, else None (documents, data).
    A `.h` header belongs to the repository's C-family language."""
    from woods.extract import is_document, language_for

    language = language_for(path)
    if language is None or is_document(language) or language == "erb":
        return None
    if path.endswith(".h") and repo_language == "cpp":
        return "cpp"
    return language


def scan(repo: str, repo_language: str) -> Iterator[Candidate]:
    """Fix commits of `repo` with 1–10 gold files, newest first (git log order)."""
    log = git_renames(repo, "log", "--no-merges", "--name-status", "--format=%x1e%H%x1f%P%x1f%ct%x1f%B%x1d", "HEAD")
    for record in log.split("\x1e")[1:]:
        header, _, files_part = record.partition("\x1d")
        commit, parents, stamp, message = header.split("\x1f", 3)
        parent_list = parents.split()
        if len(parent_list) != 1:
            continue
        message = message.strip()
        subject, _, body = message.partition("\n")
        if not lib.is_fix_message(subject, body):
            continue
        gold: list[str] = []
        added: list[str] = []
        changed = 0
        for line in files_part.strip().split("\n"):
            if not line.strip():
                continue
            fields = line.split("\t")
            status, paths = fields[0], fields[1:]
            changed += 1
            old = paths[0]
            if not (lib.is_library_path(old) and code_language(old, repo_language)):
                if status.startswith("A") and lib.is_library_path(paths[-1]) and code_language(paths[-1], repo_language):
                    added.append(paths[-1])
                continue
            if status.startswith(("M", "D", "R", "T")):
                gold.append(old)
            elif status.startswith(("A", "C")):
                added.append(paths[-1])
        if not gold or len(gold) > MAX_GOLD_FILES or changed > MAX_CHANGED_FILES:
            continue
        query = lib.clean_message(message)
        if lib.word_count(query) < MIN_WORDS or len(query.encode()) > MAX_QUERY_BYTES:
            continue
        yield Candidate(repo, commit, parent_list[0], int(stamp), message, query, sorted(set(gold)), sorted(added), changed)


def _subject_key(query: str) -> str:
    subject = query.split("\n", 1)[0].lower()
    for prefix in ("backport", "[backport]", "cherry-pick", "cherry pick"):
        subject = subject.removeprefix(prefix).strip(" :-")
    return " ".join(subject.split())


def _order(candidate: Candidate) -> tuple[int, str]:
    """Traces first, then messages with a body, then the rest; a fixed pseudo-random order inside."""
    has_trace = bool(lib.trace_kinds(candidate.query))
    has_body = "\n" in candidate.query and lib.word_count(candidate.query.split("\n", 1)[1]) >= 15
    group = 0 if has_trace else (1 if has_body else 2)
    return group, hashlib.sha256(f"{candidate.repo}@{candidate.commit}".encode()).hexdigest()


def label(candidate: Candidate, repo_language: str) -> dict[str, Any] | None:
    """The query record, or None when no gold file survives (all changes inside test code)."""
    from woods.extract import extract_file
    from woods.extract.layout import RepositoryLayout

    tree = git(candidate.repo, "ls-tree", "-r", "--name-only", candidate.parent).split("\n")
    layout = RepositoryLayout.from_paths(p for p in tree if p)
    diff = git_renames(candidate.repo, "diff", "-U0", "--no-color", candidate.parent, candidate.commit)
    hunks = lib.parse_hunks(diff)
    gold_files: list[str] = []
    functions: list[dict[str, Any]] = []
    for path in candidate.gold_files:
        file_hunks = hunks.get(path, [])
        try:
            source = git(candidate.repo, "show", f"{candidate.parent}:{path}", binary=True)
            extraction = extract_file(path, source, layout)
        except (subprocess.CalledProcessError, ValueError):
            continue
        spans = [lib.Span(u.identifier, u.type, u.line_start, u.line_end) for u in extraction.units]
        if lib.only_test_code_changed(spans, file_hunks):
            continue
        if not file_hunks:
            continue  # a pure rename or mode change: nothing changed inside the file (deletions have hunks)
        gold_files.append(path)
        for span in lib.touched_functions(spans, file_hunks):
            if lib.is_test_identifier(span.identifier):
                continue
            functions.append({"file": path, "identifier": span.identifier, "type": span.type,
                              "line_start": span.line_start, "line_end": span.line_end})
    if not gold_files:
        return None
    languages = Counter(code_language(p, repo_language) or repo_language for p in gold_files)
    language = max(languages, key=lambda lang: (languages[lang], lang == repo_language, lang))
    kinds = lib.trace_kinds(candidate.query)
    subject = candidate.query.split("\n", 1)[0]
    return {
        "id": f"{candidate.repo.split('/')[1].lower()}-{candidate.commit[:10]}",
        "repo": candidate.repo,
        "fix_commit": candidate.commit,
        "parent_commit": candidate.parent,
        "commit_time": candidate.time,
        "language": language,
        "kind": "commit-message",
        "has_trace": bool(kinds),
        "trace_kinds": kinds,
        "subject": subject,
        "query": candidate.query,
        "gold_files": gold_files,
        "gold_functions": functions,
        "added_files": candidate.added_files,
        "names_gold_path": lib.names_gold_path(candidate.query, gold_files),
        "names_gold_basename": lib.names_gold_basename(candidate.query, gold_files),
        "issue_refs": sorted({int(n) for n in lib.issue_numbers(candidate.message)}),
    }


def mine_repo(repo: str, per_repo_trace: int, per_repo_plain: int) -> tuple[list[dict[str, Any]], dict[str, int]]:
    repo_language = REPOSITORIES.get(repo, "")
    seen_subjects: set[str] = set()
    candidates: list[Candidate] = []
    for candidate in sorted(scan(repo, repo_language), key=lambda c: (c.time, c.commit)):  # oldest first
        key = _subject_key(candidate.query)
        if key in seen_subjects:
            continue  # a backport or cherry-pick of a fix already kept
        seen_subjects.add(key)
        candidates.append(candidate)
    stats = {"candidates": len(candidates), "with_trace": sum(1 for c in candidates if lib.trace_kinds(c.query))}
    kept: list[dict[str, Any]] = []
    room = {True: per_repo_trace, False: per_repo_plain}
    for candidate in sorted(candidates, key=_order):
        has_trace = bool(lib.trace_kinds(candidate.query))
        if room[has_trace] <= 0:
            if not any(room.values()):
                break
            continue
        record = label(candidate, repo_language)
        if record is None:
            continue
        room[has_trace] -= 1
        kept.append(record)
    return kept, stats


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repo", action="append", default=[], help="OWNER/NAME (default: every repository listed)")
    parser.add_argument("--out", default=str(HERE / "queries.json"))
    parser.add_argument("--per-repo-trace", type=int, default=12, help="queries with a trace kept per repository at most")
    parser.add_argument("--per-repo-plain", type=int, default=5, help="queries without a trace kept per repository at most")
    parser.add_argument("--scan-only", action="store_true", help="print candidate counts, write nothing")
    args = parser.parse_args()
    repos = args.repo or list(REPOSITORIES)
    held_out = sorted(r for r in repos if r.lower() in forbidden_repos())
    if held_out:
        print(f"{', '.join(held_out)}: in the semble benchmark or the static model's training corpus; "
              "a dev set must not use them", file=sys.stderr)
        raise SystemExit(2)
    missing = [r for r in repos if not mirror_dir(r).is_dir()]
    if missing:
        print(f"no mirror for {', '.join(missing)}: fetch github:OWNER/NAME first (or set WOODS_MIRRORS)", file=sys.stderr)
        raise SystemExit(2)
    queries: list[dict[str, Any]] = []
    heads: dict[str, str] = {}
    for repo in repos:
        started = time.perf_counter()
        heads[repo] = git(repo, "rev-parse", "HEAD").strip()
        if args.scan_only:
            candidates = list(scan(repo, REPOSITORIES.get(repo, "")))
            traces = sum(1 for c in candidates if lib.trace_kinds(c.query))
            print(f"{repo:28s} candidates={len(candidates):5d} with_trace={traces:4d}", flush=True)
            continue
        kept, stats = mine_repo(repo, args.per_repo_trace, args.per_repo_plain)
        queries.extend(kept)
        print(f"{repo:28s} candidates={stats['candidates']:5d} with_trace={stats['with_trace']:4d} kept={len(kept):3d} "
              f"({sum(q['has_trace'] for q in kept)} with trace) {time.perf_counter() - started:5.1f}s",
              file=sys.stderr, flush=True)
    if args.scan_only:
        return
    queries.sort(key=lambda q: (q["repo"], q["commit_time"], q["fix_commit"]))
    payload = {
        "header": {
            "description": "issue → code localisation dev set: bug-fix commit messages as queries, evaluated at the "
                           "fix's parent commit; gold = non-test, non-doc code files the fix changed and the "
                           "functions around the changed parent lines (bench/localize/README.md)",
            "mined_by": "bench/localize/mine.py",
            "date": time.strftime("%Y-%m-%d"),
            "mirror_heads": heads,
            "per_repo_trace": args.per_repo_trace,
            "per_repo_plain": args.per_repo_plain,
        },
        "queries": queries,
    }
    Path(args.out).write_text(json.dumps(payload, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    by_language = Counter(q["language"] for q in queries)
    traced = sum(q["has_trace"] for q in queries)
    print(f"{len(queries)} queries, {traced} with a trace ({traced / max(len(queries), 1):.0%}); "
          f"{dict(sorted(by_language.items()))}", file=sys.stderr)


if __name__ == "__main__":
    main()
