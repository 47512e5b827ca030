"""The `woods` command line (typer + rich): a thin renderer over the library.

Every answer comes from `woods.api` (`Index` for questions, `build_index` for indexing); this
module parses arguments, calls the library, and prints — so `woods … --json`, the MCP server and
`woods.Index` give the same answers under the same field names.

Conventions every command keeps: exit 0 ok, 2 bad input (the message says what
to do), 3 clarification needed, 1 unexpected (one line; `--debug` for the traceback). `--json`
prints exactly one JSON object with `schema_version` on stdout and nothing else; progress and
human chatter go to stderr. Reading commands never write to the index.

Heavy modules (torch, FAISS, tree-sitter grammars) are imported inside the commands that need
them, so `woods --help` and `woods status` start fast. `main()` is the entry point: it alone sets
the process up (offline mode, quiet model loading; `woods.entrypoint`).
"""

from __future__ import annotations

import json
import os
import sys
import time
import traceback
from collections.abc import Callable
from contextlib import AbstractContextManager
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, NoReturn

import typer
import typer.exceptions

from woods import limits
from woods.errors import InputError, WoodsError

if TYPE_CHECKING:
    from woods.api import GraphNeighbor, Index, IndexSummary, Progress, SearchResult, UnitRecord
    from woods.embedding.provider import EmbeddingProvider

JSON_SCHEMA_VERSION = 1
# Kept under its old name for callers; the value (and why) lives in woods.limits.
MAX_QUERY_BYTES = limits.MAX_QUERY_BYTES

_APP_SETTINGS: dict[str, Any] = {
    "name": "woods",
    "help": "Index a repository with tree-sitter and search it: code retrieval for coding assistants.",
    # `woods completion bash|zsh|fish` prints the script instead of typer's --install-completion,
    # which guesses the shell and edits rc files.
    "add_completion": False,
    "no_args_is_help": True,
    "pretty_exceptions_enable": False,
    "rich_markup_mode": None,
}
app = typer.Typer(**_APP_SETTINGS)
# The variable the completion scripts set when the shell asks `woods` for completions.
COMPLETE_VAR = "_WOODS_COMPLETE"


def _print_version(value: bool) -> None:
    if value:
        from woods.version import __version__

        sys.stdout.write(f"woods {__version__}\n")
        raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[bool | None, typer.Option(
        "--version", "-V", is_eager=True, callback=_print_version, help="Print the woods version and exit.")] = None,
) -> None:
    """Index a repository with tree-sitter and search it: code retrieval for coding assistants.

    \b
    Examples:
      woods index .                      index the repository here (writes ./.woods)
      woods search "where are invoices charged"
      woods resolve Billing::Invoice#charge
    """


class Strategy(StrEnum):
    auto = "auto"
    vector = "vector"
    keyword = "keyword"
    graph = "graph"
    direct = "direct"
    hybrid = "hybrid"


class Mode(StrEnum):
    semantic = "semantic"
    lexical = "lexical"


class Profile(StrEnum):
    code = "code"
    ruby = "ruby"


class ReadAs(StrEnum):
    auto = "auto"
    query = "query"
    issue = "issue"


ProfileOpt = Annotated[
    Profile | None,
    typer.Option("--profile", help="Ranking: code (default; code search) or ruby (the Ruby gem woods 2.0's pipeline)."),
]


class Detail(StrEnum):
    summary = "summary"
    full = "full"


class Color(StrEnum):
    auto = "auto"
    always = "always"
    never = "never"


class Format(StrEnum):
    text = "text"
    mermaid = "mermaid"
    dot = "dot"


class Shell(StrEnum):
    bash = "bash"
    zsh = "zsh"
    fish = "fish"


# -- error handling ------------------------------------------------------------------------------


def _fail(message: str, code: int) -> NoReturn:
    sys.stderr.write(f"woods: error: {message}\n")
    raise SystemExit(code)


def _run(debug: bool, action: Callable[[], int | None]) -> None:
    """Run a command body, turning every failure into one stderr line and its exit code."""
    try:
        code = action()
    except SystemExit:
        raise
    except KeyboardInterrupt:
        sys.stderr.write("woods: interrupted\n")
        raise SystemExit(130) from None
    except BrokenPipeError:
        # The reader went away (`woods search … | head`): not an error worth a message.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        raise SystemExit(0) from None
    except WoodsError as exc:
        if debug:
            traceback.print_exc()
        _fail((str(exc) or exc.__class__.__name__).splitlines()[0], exc.exit_code)
    except Exception as exc:
        if debug:
            traceback.print_exc()
        first_line = (str(exc) or exc.__class__.__name__).splitlines()[0]
        _fail(f"unexpected {exc.__class__.__name__}: {first_line} (run with --debug for the traceback)", 1)
    raise SystemExit(code or 0)


def _emit_json(payload: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps({"schema_version": JSON_SCHEMA_VERSION, **payload}, ensure_ascii=False) + "\n")


def _open_index(path: Path | None, store: str | None, repo: str | None = None, exact: bool = False) -> Index:
    """The index a reading command opens, found by the library's resolver (`woods.api.locate_index`:
    `--store`, else the nearest `.woods` at or above PATH, up to the repository root)."""
    from woods.api import Index, locate_index

    where = locate_index(path, store, repo)
    # The repository given is the root files are read from (a copied or moved one included).
    return Index(where.store, repo=repo, exact=exact, one_shot=True, root=where.root)


def _warn(warnings: list[str]) -> None:
    for warning in warnings:
        sys.stderr.write(f"woods: warning: {warning}\n")


# -- index ---------------------------------------------------------------------------------------

DebugOpt = Annotated[bool, typer.Option("--debug", help="Show the traceback of an unexpected error.")]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print one JSON object on stdout.")]
PathOpt = Annotated[Path | None, typer.Option("--path", help="Repository whose .woods index to use (default: cwd).")]
StoreOpt = Annotated[str | None, typer.Option(
    "--store", help="Index directory (instead of PATH/.woods), or a PostgreSQL URL postgresql://… (docs/postgres.md).")]
RepoOpt = Annotated[str | None, typer.Option(
    "--repo", help="Repository of a PostgreSQL store (default: all of them for search; the only one otherwise).")]
TypesOpt = Annotated[list[str] | None, typer.Option("--type", help="Only units of this type (repeatable).")]
GlobOpt = Annotated[list[str] | None, typer.Option(
    "--glob", "-g", help="Only files matching this gitignore-style pattern; '!' excludes (repeatable).")]


def _complete_language(incomplete: str) -> list[str]:
    from woods.api import known_languages

    return [name for name in known_languages() if name.startswith(incomplete)]


LangOpt = Annotated[list[str] | None, typer.Option(
    "--lang", "-t", autocompletion=_complete_language,
    help="Only files in this language: a name or an extension (python, py, ts, md …; repeatable).")]
FormatOpt = Annotated[Format, typer.Option(
    "--format", help="text, or a diagram: mermaid or dot (Graphviz), cut to the most central nodes.")]


@app.command()
def index(
    paths: Annotated[list[str] | None, typer.Argument(
        help="Repository to index (default: cwd). Several — [NAME=]PATH or git URLs of mirrors — index a fleet "
             "(docs/scale.md).", show_default=False)] = None,
    store: StoreOpt = None,
    repo: Annotated[str | None, typer.Option(
        "--repo", help="Collection name in a PostgreSQL store (default: the repository directory's name).")] = None,
    max_file_bytes: Annotated[int, typer.Option("--max-file-bytes", min=1, help="Skip files larger than this.")] = (
        limits.DEFAULT_MAX_FILE_BYTES
    ),
    wait: Annotated[float, typer.Option("--wait", min=0, help="Seconds to wait for another running index.")] = (
        limits.DEFAULT_LOCK_WAIT_SECONDS
    ),
    full: Annotated[bool, typer.Option("--full", help="Rebuild from scratch (no reuse of parses or vectors).")] = False,
    allow_purge: Annotated[bool, typer.Option("--allow-purge", help="Allow a run that removes over 30% of the units.")] = False,
    watch_mode: Annotated[bool, typer.Option("--watch", help="Keep re-indexing on file changes until Ctrl-C.")] = False,
    contextual: Annotated[bool | None, typer.Option(
        "--contextual/--no-contextual",
        help="Add MiniLM's contextual vectors in a second phase (default: where the contextual extra is installed).",
    )] = None,
    from_file: Annotated[Path | None, typer.Option(
        "--from", help="Fleet: a file listing repositories, one [NAME=]PATH or git URL a line.")] = None,
    workers: Annotated[int | None, typer.Option(
        "--workers", min=1, help="Fleet: repositories indexed at once (default: one per CPU of the machine or cluster).")] = None,
    ray_address: Annotated[str | None, typer.Option(
        "--ray", help="Fleet: join the Ray cluster at ADDRESS (default: RAY_ADDRESS, else a local Ray woods starts).")] = None,
    processes: Annotated[bool, typer.Option(
        "--processes", help="Fleet: run in local processes even where Ray is installed.")] = False,
    as_json: JsonOpt = False,
    debug: DebugOpt = False,
) -> None:
    """Index PATH: discover, parse, embed and publish a new index (old one stays until it is ready).

    The first generation is searchable within seconds, with woods's static vectors; with the
    contextual extra installed, MiniLM's vectors follow in a second phase. Incremental by default:
    unchanged files are not parsed again and unchanged code is not embedded again. The previous
    index stays readable until the new one is published. The index is written to PATH/.woods (git
    ignores it: woods writes .woods/.gitignore).

    Several repositories (or --from, --workers, --ray) index a fleet in parallel, on Ray where it is
    installed, into one PostgreSQL store (--store postgresql://…; each repository a collection) or
    each into its own .woods; every repository is published atomically (docs/scale.md).

    \b
    Examples:
      woods index                      index the working directory
      woods index . --watch            re-index on every change until Ctrl-C
      woods index a b c --store postgresql://localhost/woods --workers 2
    """
    fleet = len(paths or []) > 1 or from_file is not None or workers is not None or ray_address is not None or processes
    if fleet:
        _index_fleet(
            paths or [], from_file, store, repo, workers, ray_address, processes, max_file_bytes, wait, full, allow_purge,
            watch_mode, contextual, as_json, debug,
        )
        return
    path = Path(paths[0]) if paths else Path(".")

    def action() -> int:
        from woods.api import build_index
        from woods.embedding.select import index_provider
        from woods.entrypoint import contextual_factory_from_environment, provider_factory_from_environment

        if watch_mode and as_json:
            raise InputError("--watch runs until interrupted; it cannot print one JSON object (drop --json)")
        warm_provider = _warm(provider_factory_from_environment() or index_provider)
        second = contextual_factory_from_environment(contextual)
        warm_contextual = None if second is None else _warm(second)

        def run_once(full_run: bool, should_stop: Callable[[], bool] | None = None) -> IndexSummary:
            started = time.perf_counter()
            with _progress(enabled=not as_json) as progress:
                summary = build_index(
                    path, store=store, repo=repo, full=full_run, allow_purge=allow_purge, max_file_bytes=max_file_bytes,
                    wait=wait, progress=progress, provider_factory=warm_provider,
                    contextual_factory=warm_contextual, contextual=False if warm_contextual is None else None,
                    should_stop=should_stop,
                )
            elapsed = time.perf_counter() - started
            if as_json:
                _emit_json({"summary": summary.to_dict(), "seconds": round(elapsed, 3), "warnings": summary.warnings})
            else:
                _print_index_summary(summary, elapsed)
            return summary

        run_once(full)
        if watch_mode:
            from woods.watch import watch

            def announce(changed: int) -> None:
                sys.stderr.write(f"woods: {changed} file(s) changed; re-indexing\n")

            sys.stderr.write(f"woods: watching {path} for changes (Ctrl-C to stop)\n")
            try:
                # Embedding stops when the tree changes again (its batches are kept): the next run
                # publishes the new lexical generation at once, then resumes the vectors.
                watch(path, lambda: run_once(False), max_file_bytes=max_file_bytes, on_change=announce,
                      interruptible=lambda stop: run_once(False, stop))
            except KeyboardInterrupt:
                sys.stderr.write("woods: stopped watching\n")
        return 0

    _run(debug, action)


def _index_fleet(
    sources: list[str], from_file: Path | None, store: str | None, repo: str | None, workers: int | None,
    ray_address: str | None, processes: bool, max_file_bytes: int, wait: float, full: bool, allow_purge: bool,
    watch_mode: bool, contextual: bool | None, as_json: bool, debug: bool,
) -> None:
    """`woods index` over several repositories: `woods.build_fleet`, rendered."""

    def action() -> int:
        from woods.entrypoint import contextual_factory_from_environment, provider_factory_from_environment
        from woods.fleet import build_fleet, read_repo_list
        from woods.fleet.report import StderrFleetProgress, summary_lines

        if repo is not None:
            raise InputError("--repo names one repository; in a fleet write NAME=PATH for each repository")
        if watch_mode:
            raise InputError("--watch follows one repository; index a fleet without it (re-run to update)")
        if processes and ray_address is not None:
            raise InputError("--processes and --ray contradict each other; pass one")
        listed = [*sources, *(read_repo_list(from_file) if from_file is not None else [])]
        second = contextual_factory_from_environment(contextual)
        progress = None if as_json else StderrFleetProgress()
        try:
            summary = build_fleet(
                listed, store=store, workers=workers, ray=False if processes else None, ray_address=ray_address,
                full=full, allow_purge=allow_purge, max_file_bytes=max_file_bytes, wait=wait,
                provider_factory=provider_factory_from_environment(), contextual_factory=second,
                contextual=False if second is None else None, progress=progress,
            )
        finally:
            if progress is not None:
                progress.close()
        if as_json:
            _emit_json({"fleet": summary.to_dict(), "warnings": summary.warnings})
        else:
            for line in summary_lines(summary):
                sys.stderr.write(line + "\n")
        return summary.exit_code

    _run(debug, action)


def _warm(factory: Callable[[], EmbeddingProvider]) -> Callable[[], EmbeddingProvider]:
    """A factory that creates its provider once: kept warm across `--watch` re-indexes."""
    made: list[EmbeddingProvider] = []

    def warm() -> EmbeddingProvider:
        if not made:
            made.append(factory())
        return made[0]

    return warm


def _progress(enabled: bool) -> AbstractContextManager[Progress]:
    from woods.progress import make_progress

    return make_progress(enabled)


def _print_index_summary(summary: IndexSummary, elapsed: float) -> None:
    err = sys.stderr
    langs = ", ".join(f"{k} {v}" for k, v in summary.files_by_language.items()) or "none"
    types = ", ".join(f"{k} {v}" for k, v in summary.units_by_type.items()) or "none"
    skipped = ", ".join(f"{k} {v}" for k, v in summary.skipped.items()) or "none"
    phases = ", ".join(f"{k} {v:.1f}s" for k, v in summary.seconds.items())
    err.write(f"indexed {summary.files} files ({langs})\n")
    if not summary.files:  # nothing was parsed, so these say why (and nothing else is in them)
        _warn(summary.warnings)
    err.write(f"units {summary.units} ({types})\n")
    if summary.up_to_date:
        mode = f"up to date: all {summary.files} files unchanged; kept generation {summary.generation}"
    elif summary.full:
        mode = "full"
    else:
        mode = f"incremental: {summary.reused_files} files unchanged, {summary.removed_units} units removed"
    err.write(f"run: {mode}\n")
    err.write(
        f"chunks {summary.chunks} (embedded {summary.embedded}, reused {summary.reused_vectors}); "
        f"edges {summary.edges} ({summary.resolved_edges} resolved)\n"
    )
    err.write(f"skipped: {skipped}\n")
    if summary.searchable_seconds is not None:
        state = "vectors pending" if summary.vectors_pending else "vectors complete"
        resumed = f", {summary.resumed_vectors} resumed from an interrupted run" if summary.resumed_vectors else ""
        err.write(f"searchable after {summary.searchable_seconds:.1f}s; {state}{resumed}\n")
    if summary.files and (summary.parse_failures or summary.warnings):  # with no file, printed above
        err.write(f"warnings: {len(summary.warnings)} (first: {summary.warnings[0] if summary.warnings else '-'})\n")
    err.write(f"time {elapsed:.1f}s ({phases}); index at {summary.store_dir}\n")


# -- search --------------------------------------------------------------------------------------


@app.command()
def search(
    query: Annotated[str, typer.Argument(help="What you are looking for.")],
    path: PathOpt = None,
    store: StoreOpt = None,
    repo: RepoOpt = None,
    exact: Annotated[bool, typer.Option("--exact", help="PostgreSQL: exact vector search instead of HNSW.")] = False,
    limit: Annotated[int, typer.Option("--limit", min=1, max=limits.MAX_SEARCH_LIMIT, help="Results to show.")] = (
        limits.DEFAULT_SEARCH_LIMIT
    ),
    strategy: Annotated[Strategy, typer.Option("--strategy", help="Force a strategy (default: classify).")] = Strategy.auto,
    types: TypesOpt = None,
    exclude_types: Annotated[list[str] | None, typer.Option("--exclude-type", help="Drop this type (repeatable).")] = None,
    budget: Annotated[int, typer.Option("--budget", min=1, max=limits.MAX_CONTEXT_BUDGET,
                                        help="Token budget of the assembled context.")] = limits.DEFAULT_CONTEXT_BUDGET,
    context: Annotated[bool, typer.Option("--context", help="Print the assembled context of the results shown.")] = False,
    mode: Annotated[Mode, typer.Option("--mode", help="semantic (default) or lexical (the lexical index alone, no model).")] = Mode.semantic,
    path_prefixes: Annotated[list[str] | None, typer.Option("--path-prefix", help="Only files under this path (repeatable).")] = None,
    globs: GlobOpt = None,
    langs: LangOpt = None,
    profile: ProfileOpt = None,
    read_as: Annotated[ReadAs, typer.Option(
        "--as", help="auto (default: a pasted stack trace, log or bug report is localised), query or issue.",
    )] = ReadAs.auto,
    color: Annotated[Color, typer.Option("--color", help="Colour: auto (on a terminal, unless NO_COLOR is set), always, never.")] = Color.auto,
    as_json: JsonOpt = False,
    debug: DebugOpt = False,
) -> None:
    """Search the index: rank units for the query (code search by default) and assemble a context.

    Each result is `path:line`, the unit, and the lines of it that match best, the query's words
    highlighted on a terminal. A pasted stack trace, failing test output or bug report is read as
    an issue: the files and functions it points at come first, each with the evidence that matched
    (`--as` decides).

    \b
    Examples:
      woods search "where are invoices charged"
      woods search Invoice --lang rb --glob 'app/**' --glob '!app/views/'
      woods search "retry a failed payment" --limit 3 --context --json
    """

    def action() -> int:
        with _open_index(path, store, repo, exact) as opened:
            result = opened.search(
                query, limit=limit, strategy=strategy.value, types=types, exclude_types=exclude_types,
                path_prefixes=path_prefixes, mode=mode.value, budget=budget,
                profile=profile.value if profile is not None else None, globs=globs, langs=langs,
                read_as=read_as.value,
            )
        if as_json:
            _emit_json(result.to_dict(context=context))
        else:
            from woods.terminal import use_color

            _print_results(result, context, use_color(color.value, sys.stdout, os.environ))
        return 0

    _run(debug, action)


def _print_results(result: SearchResult, show_context: bool, color: bool) -> None:
    """rg-style: `path:line`, the unit, its score and strategies, then its best lines numbered as
    in the file with the query's words highlighted; a blank line between results. Warnings come
    first (on stderr), so "no unit named …" is read before the hits it qualifies."""
    from woods.terminal import highlight, paint

    _warn(list(result.warnings))
    out = sys.stdout
    if not result:
        out.write("no results\n")
    for number, hit in enumerate(result):
        if number and any(h.snippet for h in result):
            out.write("\n")
        where = f"{paint(hit.file_path or '?', 'path', color)}:{paint(str(hit.line or '?'), 'line', color)}"
        repo = f"{hit.repo}: " if hit.repo is not None else ""
        stale = "  " + paint("STALE", "warn", color) if hit.stale else ""
        facts = paint(f"score {hit.score:.3f} ({','.join(hit.sources)})", "dim", color)
        out.write(f"{repo}{where}  {paint(hit.identifier, 'name', color)}  [{hit.type}]  {facts}{stale}\n")
        if hit.evidence:
            out.write(f"  {paint('why:', 'dim', color)} {'; '.join(hit.evidence[:3])}\n")
        width = max((len(str(line.line)) for line in hit.snippet), default=0)
        for line in hit.snippet:
            number_text = paint(str(line.line).rjust(width), "line", color)
            out.write(f"{number_text}: {highlight(line.text, line.matches, color)}\n")
    sys.stderr.write(f"strategy {result.strategy}; {len(result)} results; {result.trace.elapsed_ms} ms\n")
    if show_context:
        out.write("\n" + result.context + "\n")


# -- status --------------------------------------------------------------------------------------


@app.command()
def status(
    path: PathOpt = None,
    store: StoreOpt = None,
    repo: RepoOpt = None,
    globs: GlobOpt = None,
    langs: LangOpt = None,
    as_json: JsonOpt = False,
    debug: DebugOpt = False,
) -> None:
    """Show what the index holds and which files changed since it was built.

    \b
    Examples:
      woods status                     the index found from here (walking up to the repository root)
      woods status --lang py           only Python files: their units, languages and changes
      woods status --json | jq .changes
    """

    def action() -> int:
        from woods.api import describe_vector_state

        with _open_index(path, store, repo) as opened:
            current = opened.status(globs=globs, langs=langs)
        if as_json:
            _emit_json(current.to_dict())
            return 0
        _warn(list(current.warnings))
        out = sys.stdout
        counts = current.counts
        out.write(f"index: {current.store} (generation {current.generation}, built {current.created_at})\n")
        if current.repo is not None:
            out.write(f"repo: {current.repo}\n")
        out.write(f"root: {current.root}\n")
        if current.recorded_root is not None:
            out.write(f"recorded root: {current.recorded_root} (re-rooted by the next `woods index`)\n")
        out.write(f"embedder: {current.embedder['name']} ({current.embedder['dimension']}-d)\n")
        out.write(
            f"files {counts.get('files')}, units {counts.get('units')}, chunks {counts.get('chunks')}, "
            f"edges {counts.get('edges')}\n"
        )
        out.write(describe_vector_state(current.vectors) + "\n")
        if current.filter is not None:
            chosen = current.filter
            given = " ".join([*(f"--glob {g}" for g in chosen["globs"]), *(f"--lang {lang}" for lang in chosen["langs"])])
            out.write(f"filter {given}: files {chosen['files']}, units {chosen['units']}\n")
        out.write("units by type: " + ", ".join(f"{k} {v}" for k, v in current.units_by_type.items()) + "\n")
        out.write("files by language: " + ", ".join(f"{k} {v}" for k, v in current.files_by_language.items()) + "\n")
        if current.skipped:
            out.write("skipped: " + ", ".join(f"{k} {v}" for k, v in current.skipped.items()) + "\n")
        c = current.changes
        if c.root_missing:
            out.write(f"freshness: the repository root {current.root} is gone\n")
        else:
            out.write(f"changed {len(c.changed)}, added {len(c.added)}, deleted {len(c.deleted)} since indexing\n")
            for label, items in (("changed", c.changed), ("added", c.added), ("deleted", c.deleted)):
                for item in items[:STATUS_PATHS_SHOWN]:
                    out.write(f"  {label}: {item}\n")
        return 0

    _run(debug, action)


# Changed paths listed per kind in human `status` output; `--json` lists them all.
STATUS_PATHS_SHOWN = 20


# -- resolve -------------------------------------------------------------------------------------


def _resolve_request(ref: str | None, input_path: str | None, unit_type: str | None) -> tuple[str, str | None]:
    """The reference and type, from the argument or (`--input -`) a JSON object on stdin."""
    if input_path is None:
        if ref is None:
            raise InputError("pass a reference, e.g. woods resolve Billing::Invoice#charge, or --input -")
        return ref, unit_type
    if ref is not None:
        raise InputError("pass the reference either as an argument or with --input -, not both")
    if input_path != "-":
        raise InputError("--input takes '-' (read the request from stdin)")
    raw = sys.stdin.read(limits.MAX_INPUT_REQUEST_BYTES + 1)
    if len(raw) > limits.MAX_INPUT_REQUEST_BYTES:
        raise InputError(f"the --input request is over {limits.MAX_INPUT_REQUEST_BYTES} bytes; send {{\"ref\": \"…\"}}")
    try:
        request = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise InputError(f"--input is not JSON ({exc.msg}); send {{\"ref\": \"…\", \"type\": \"…\"}}") from None
    if not isinstance(request, dict) or not isinstance(request.get("ref"), str):
        raise InputError('--input must be a JSON object with a string "ref" (and optionally "type")')
    request_type = request.get("type", unit_type)
    if request_type is not None and not isinstance(request_type, str):
        raise InputError('--input "type" must be a string')
    return request["ref"], request_type


@app.command()
def resolve(
    ref: Annotated[str | None, typer.Argument(help="What to resolve: a name, an identifier, path[:line], an id prefix.")] = None,
    path: PathOpt = None,
    store: StoreOpt = None,
    repo: RepoOpt = None,
    unit_type: Annotated[str | None, typer.Option("--type", help="Only units of this type.")] = None,
    limit: Annotated[int, typer.Option("--limit", min=1, max=limits.RESOLVE_MAX_CANDIDATES,
                                       help="Candidates to list when ambiguous.")] = limits.RESOLVE_DEFAULT_LIMIT,
    strict: Annotated[bool, typer.Option("--strict", help="Only deterministic stages may resolve (before edits).")] = False,
    input_path: Annotated[str | None, typer.Option("--input", help="'-' reads {\"ref\", \"type\"} JSON from stdin.")] = None,
    as_json: JsonOpt = False,
    debug: DebugOpt = False,
) -> None:
    """Turn a reference into exactly one unit, or say it is ambiguous (exit 3) — never a guess.

    A name that matches nothing gets "did you mean" the nearest names of the index.

    \b
    Examples:
      woods resolve Billing::Invoice#charge
      woods resolve "the charge method of Invoice"
      woods resolve app/models/billing/invoice.rb:25 --json
    """

    def action() -> int:
        reference, requested_type = _resolve_request(ref, input_path, unit_type)
        with _open_index(path, store, repo) as opened:
            outcome = opened.resolve(reference, type=requested_type, limit=limit, strict=strict)
        if as_json:
            _emit_json(outcome.to_dict())
        else:
            from woods.api import DID_YOU_MEAN

            sys.stdout.write(outcome.format_human().rstrip("\n") + "\n")
            _warn([w for w in outcome.warnings if not w.startswith(DID_YOU_MEAN)])  # shown above
        return outcome.exit_code

    _run(debug, action)


# -- lookup, deps, dependents, structure ---------------------------------------------------------


def _not_found(identifier: str, as_json: bool) -> int:
    message = f"no unit named {identifier!r}; try `woods resolve {identifier!r}` to find it"
    if as_json:
        _emit_json({"status": "not_found", "identifier": identifier, "warnings": [message]})
    sys.stderr.write(f"woods: {message}\n")
    return 3


def _unit_json(unit: UnitRecord) -> dict[str, Any]:
    """A unit as `woods lookup --json` prints it: `UnitRecord.to_dict()`, plus `id` (the storage
    key under its schema-1 name, kept for schema-1 readers; the same value as `key`)."""
    return {**unit.to_dict(), "id": unit.key}


@app.command()
def lookup(
    identifier: Annotated[str, typer.Argument(help="Unit identifier or storage key.")],
    path: PathOpt = None,
    store: StoreOpt = None,
    repo: RepoOpt = None,
    unit_type: Annotated[str | None, typer.Option("--type", help="Only the unit of this type.")] = None,
    include_source: Annotated[bool, typer.Option("--source/--no-source", help="Include the source code.")] = True,
    as_json: JsonOpt = False,
    debug: DebugOpt = False,
) -> None:
    """Show a unit: where it is, its metadata, dependencies and dependents (exit 3 when unknown).

    \b
    Examples:
      woods lookup Billing::Invoice#charge
      woods lookup Billing::Invoice --no-source
      woods lookup Shared --type model --json
    """

    def action() -> int:
        with _open_index(path, store, repo) as opened:
            units = opened.lookup_all(identifier, type=unit_type, include_source=include_source)
            shown = [opened.display_source(unit) for unit in units] if not as_json else []
        if not units:
            return _not_found(identifier, as_json)
        if as_json:
            _emit_json({"status": "found", "identifier": identifier, "units": [_unit_json(u) for u in units],
                        "warnings": []})
            return 0
        out = sys.stdout
        for unit, source in zip(units, shown, strict=True):
            out.write(f"{unit.identifier}  [{unit.type}]  {unit.file_path}:{unit.line_start}-{unit.line_end}\n")
            if unit.signature:
                out.write(f"  signature: {unit.signature}\n")
            deps = ", ".join(f"{d['target']} ({d['via']})" for d in unit.dependencies)
            out.write(f"  dependencies: {deps or '-'}\n")
            dependents = ", ".join(str(d["identifier"]) for d in unit.dependents)
            out.write(f"  dependents: {dependents or '-'}\n")
            if unit.metadata:
                out.write(f"  metadata: {json.dumps(unit.metadata, ensure_ascii=False, sort_keys=True)}\n")
            if source is not None:
                out.write("\n" + source.rstrip("\n") + "\n\n")
        return 0

    _run(debug, action)


def _neighbor_json(neighbor: GraphNeighbor) -> dict[str, Any]:
    """A graph row as `woods deps --json` prints it: `GraphNeighbor.to_dict()` plus, for schema-1
    readers, the old names `distance` (= `depth`), `in_index` (= `indexed`) and `type` (the first
    of `types`). The old names go when the JSON schema version becomes 2."""
    row = {**neighbor.to_dict(), "distance": neighbor.depth, "in_index": neighbor.indexed}
    if neighbor.types:
        row["type"] = neighbor.types[0]
    return row


def _graph_command(identifier: str, path: Path | None, store: str | None, repo: str | None, depth: int,
                   via: str | None, types: list[str] | None, direction: str, as_json: bool,
                   fmt: Format = Format.text) -> int:
    from woods.api import UnitNotFoundError

    _check_format(fmt, as_json)
    with _open_index(path, store, repo) as opened:
        try:
            walk = opened.traverse(identifier, direction=direction, depth=depth, via=via, types=types)
        except UnitNotFoundError:
            return _not_found(identifier, as_json)
        if fmt is not Format.text:
            sys.stdout.write(opened.walk_diagram(walk).render(fmt.value))
            return 0
    if as_json:
        payload = walk.to_dict()
        payload["results"] = [_neighbor_json(n) for n in walk.neighbors]
        _emit_json({**payload, "warnings": []})
        return 0
    out = sys.stdout
    if not walk.neighbors:
        out.write("none\n")
    for n in walk.neighbors:
        where = f"  {n.file_path}:{n.line_start}" if n.indexed else "  (not in the index)"
        out.write(f"{'  ' * (n.depth - 1)}{n.identifier}  via {n.via}{where}\n")
    return 0


def _check_format(fmt: Format, as_json: bool) -> None:
    if fmt is not Format.text and as_json:
        raise InputError(f"--format {fmt.value} draws a diagram; drop --json (or --format)")


DepthOpt = Annotated[int, typer.Option("--depth", min=1, max=limits.MAX_GRAPH_DEPTH, help="Hops to follow.")]
ViaOpt = Annotated[str | None, typer.Option("--via", help="Only edges of this kind (superclass, calls, include …).")]
GraphTypesOpt = Annotated[list[str] | None, typer.Option("--type", help="Only neighbours with a unit of this type (repeatable).")]


@app.command()
def deps(
    identifier: Annotated[str, typer.Argument(help="Unit identifier, storage key or graph node.")],
    path: PathOpt = None,
    store: StoreOpt = None,
    repo: RepoOpt = None,
    depth: DepthOpt = limits.DEFAULT_GRAPH_DEPTH,
    via: ViaOpt = None,
    types: GraphTypesOpt = None,
    fmt: FormatOpt = Format.text,
    as_json: JsonOpt = False,
    debug: DebugOpt = False,
) -> None:
    """What a unit depends on (breadth-first up to --depth).

    --format mermaid|dot draws the unit and its nearest, most central neighbours.

    \b
    Examples:
      woods deps Billing::Invoice
      woods deps Billing::Invoice --depth 2 --via calls
      woods deps Billing::Invoice --format mermaid > invoice.mmd
    """
    _run(debug, lambda: _graph_command(identifier, path, store, repo, depth, via, types, "dependencies", as_json, fmt))


@app.command()
def dependents(
    identifier: Annotated[str, typer.Argument(help="Unit identifier, storage key or graph node.")],
    path: PathOpt = None,
    store: StoreOpt = None,
    repo: RepoOpt = None,
    depth: DepthOpt = limits.DEFAULT_GRAPH_DEPTH,
    via: ViaOpt = None,
    types: GraphTypesOpt = None,
    fmt: FormatOpt = Format.text,
    as_json: JsonOpt = False,
    debug: DebugOpt = False,
) -> None:
    """What depends on a unit (breadth-first up to --depth).

    --format mermaid|dot draws the unit and its nearest, most central neighbours.

    \b
    Examples:
      woods dependents Billing::Invoice
      woods dependents ApplicationRecord --type model
      woods dependents Payment --depth 2 --format dot | dot -Tsvg > payment.svg
    """
    _run(debug, lambda: _graph_command(identifier, path, store, repo, depth, via, types, "dependents", as_json, fmt))


@app.command()
def structure(
    path: PathOpt = None,
    store: StoreOpt = None,
    repo: RepoOpt = None,
    top: Annotated[int, typer.Option("--top", min=1, max=limits.MAX_LIST_LIMIT, help="Units in the PageRank list.")] = (
        limits.DEFAULT_PAGERANK_LIMIT
    ),
    detail: Annotated[Detail, typer.Option("--detail", help="summary, or full: also every indexed file.")] = Detail.summary,
    fmt: FormatOpt = Format.text,
    as_json: JsonOpt = False,
    debug: DebugOpt = False,
) -> None:
    """The shape of the codebase: units by type, edges by kind, files by language, top PageRank.

    --format mermaid|dot draws the repository's packages (or files) and the dependencies between
    them instead, the --top most central.

    \b
    Examples:
      woods structure
      woods structure --detail full --json
      woods structure --format mermaid --top 12
    """

    def action() -> int:
        _check_format(fmt, as_json)
        with _open_index(path, store, repo) as opened:
            if fmt is not Format.text:
                sys.stdout.write(opened.structure_diagram(top=top).render(fmt.value))
                return 0
            shape = opened.structure(detail=detail.value, top=top)
        if as_json:
            _emit_json({**shape.to_dict(), "warnings": []})
            return 0
        out = sys.stdout
        for title, counts in (("units by type", shape.units_by_type), ("edges by via", shape.edges_by_via),
                              ("files by language", shape.files_by_language)):
            out.write(f"{title}: " + ", ".join(f"{k} {v}" for k, v in counts.items()) + "\n")
        out.write("top PageRank:\n")
        for unit in shape.top_pagerank:
            out.write(f"  {unit.score:.5f}  {unit.identifier}  [{unit.type}]\n")
        if shape.files:
            out.write("files:\n")
            for row in shape.files:
                out.write(f"  {row['path']}  [{row['language']}]  {row['units']} units\n")
        return 0

    _run(debug, action)


# -- mcp -----------------------------------------------------------------------------------------


@app.command()
def mcp(path: PathOpt = None, store: StoreOpt = None, repo: RepoOpt = None, debug: DebugOpt = False) -> None:
    """Serve the index to coding assistants over MCP (stdio); keeps the index and model warm.

    Without an index yet, the reindex tool builds one of --path.

    \b
    Examples:
      woods mcp --path /abs/path/to/repo
      claude mcp add woods -- woods mcp --path /abs/path/to/repo
      woods mcp --store /srv/indexes/app/.woods
    """

    def action() -> int:
        from woods.api import locate_index
        from woods.entrypoint import contextual_factory_from_environment, provider_factory_from_environment
        from woods.mcp_server import serve

        # The repository is the found index's directory (walking up from a subdirectory), so
        # `reindex` rebuilds that repository and not the subdirectory.
        where = locate_index(path, store, repo, must_exist=False)
        serve(where.store, root=where.root, provider_factory=provider_factory_from_environment(),
              contextual_factory=contextual_factory_from_environment(None), repo=repo)
        return 0

    _run(debug, action)


# -- evaluate ------------------------------------------------------------------------------------


@app.command()
def evaluate(
    queryset: Annotated[Path, typer.Argument(help="Query set JSON (Ruby woods format).")],
    path: PathOpt = None,
    store: StoreOpt = None,
    repo: RepoOpt = None,
    corpus: Annotated[Path | None, typer.Option("--corpus", help="Pre-extracted units (Ruby corpus.json).")] = None,
    vectors: Annotated[Path | None, typer.Option("--vectors", help="Captured vectors for --corpus (vectors.json).")] = None,
    budget: Annotated[int | None, typer.Option("--budget", min=1, max=limits.MAX_CONTEXT_BUDGET,
                                               help="Override every query's budget.")] = None,
    profile: Annotated[Profile | None, typer.Option(
        "--profile", help="Ranking: code or ruby (default: ruby with --corpus, the parity bench; else code).")] = None,
    as_json: JsonOpt = False,
    debug: DebugOpt = False,
) -> None:
    """Evaluate retrieval quality on a query set (precision@k, recall, MRR, completeness).

    \b
    Examples:
      woods evaluate queries.json
      woods evaluate queries.json --budget 4000 --json
      woods evaluate corpus.json --corpus corpus.json --vectors vectors.json
    """

    def action() -> int:
        from woods.evaluate.runner import format_report, run_evaluation

        if not queryset.is_file():
            raise InputError(f"query set not found: {queryset}")
        if (corpus is None) != (vectors is None):
            raise InputError("--corpus and --vectors go together")
        for given in (corpus, vectors):
            if given is not None and not given.is_file():
                raise InputError(f"file not found: {given}")
        if corpus is not None:
            report = run_evaluation(queryset, corpus_path=corpus, vectors_path=vectors, budget=budget,
                                    profile=profile.value if profile is not None else None)
        else:
            with _open_index(path, store, repo) as opened:
                report = opened.evaluate(queryset, budget=budget, profile=profile.value if profile is not None else None)
        if as_json:
            _emit_json(report.to_dict())
        else:
            sys.stdout.write(format_report(report))
        return 0

    _run(debug, action)


# -- version, completion ------------------------------------------------------------------------


@app.command()
def version(as_json: JsonOpt = False) -> None:
    """Print the woods version (also `woods --version`, `woods -V`).

    \b
    Examples:
      woods version
      woods --version
      woods version --json
    """
    from woods.version import __version__

    if as_json:
        _emit_json({"version": __version__, "warnings": []})
    else:
        sys.stdout.write(f"woods {__version__}\n")


@app.command()
def completion(shell: Annotated[Shell, typer.Argument(help="bash, zsh or fish.")]) -> None:
    """Print the shell completion script for bash, zsh or fish (works offline: the script asks
    `woods` itself for the commands, options and values).

    \b
    Examples:
      eval "$(woods completion bash)"                       in ~/.bashrc
      woods completion zsh > "${fpath[1]}/_woods"            then restart zsh
      woods completion fish > ~/.config/fish/completions/woods.fish
    """
    from typer._completion_shared import get_completion_script

    sys.stdout.write(get_completion_script(prog_name="woods", complete_var=COMPLETE_VAR, shell=shell.value) + "\n")


def _app_for(args: list[str]) -> typer.Typer:
    """The app with only the command `args` name, when they name one.

    Why: typer turns every registered command into a click command — options, types, defaults,
    help — before it parses anything (about 1 ms of a cold run per command); a run uses one. The
    root's own options (`--version`, `--help`) take no value, so the first argument that is not an
    option is the command. Anything else (no command, a typo, shell completion) gets the whole app,
    so `woods --help`, "No such command" and completion are unchanged."""
    name = next((arg for arg in args if not arg.startswith("-")), None)
    chosen = [c for c in app.registered_commands
              if c.callback is not None and (c.name or c.callback.__name__.replace("_", "-")) == name]
    if len(chosen) != 1:
        return app
    single = typer.Typer(**_APP_SETTINGS)
    single.registered_callback = app.registered_callback
    single.registered_commands = chosen
    return single


def main() -> None:
    """Console entry point: usage errors become one stderr line and exit 2.

    typer vendors its own click (typer._click); its exceptions share `typer.exceptions.TyperException`
    and carry `exit_code` and `format_message()`, which is all this needs.
    """
    from woods.entrypoint import configure_process

    configure_process()
    runnable = app
    if COMPLETE_VAR in os.environ:  # the shell asks for completions (`woods completion SHELL`)
        from typer._completion_classes import completion_init

        completion_init()
    else:
        runnable = _app_for(sys.argv[1:])
    try:
        runnable(standalone_mode=False, prog_name="woods")
    except (typer.Exit, typer.Abort) as exc:
        if isinstance(exc, typer.Abort):
            sys.stderr.write("woods: interrupted\n")
            raise SystemExit(130) from None
        raise SystemExit(exc.exit_code) from None
    except typer.exceptions.TyperException as exc:
        if type(exc).__name__ == "NoArgsIsHelpError":
            ctx = getattr(exc, "ctx", None)
            sys.stdout.write((ctx.get_help() if ctx is not None else "usage: woods COMMAND --help") + "\n")
            raise SystemExit(0) from None
        format_message = getattr(exc, "format_message", None)
        message = format_message() if callable(format_message) else str(exc)
        ctx = getattr(exc, "ctx", None)
        command = ctx.info_name if ctx is not None and ctx.parent is not None else None
        hint = f" (see `woods {command} --help`)" if command else " (see `woods --help`)"
        sys.stderr.write(f"woods: error: {' '.join(message.split())}{hint}\n")
        raise SystemExit(int(getattr(exc, "exit_code", 2) or 2)) from None


if __name__ == "__main__":
    main()
