"""The `woods` command line (typer + rich): index, search, status, evaluate.

Conventions every command keeps (DEVELOPERS.md): exit 0 ok, 2 bad input (the message says what
to do), 3 clarification needed, 1 unexpected (one line; `--debug` for the traceback). `--json`
prints exactly one JSON object with `schema_version` on stdout and nothing else; progress and
human chatter go to stderr. Reading commands never write to the index.

Heavy modules (torch, FAISS, tree-sitter grammars) are imported inside the commands that need
them, so `woods --help` and `woods status` start fast.
"""

from __future__ import annotations

import json
import os
import sys
import time
import traceback
from collections.abc import Callable
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any, NoReturn

import typer
import typer.exceptions

from woods.errors import InputError, WoodsError

JSON_SCHEMA_VERSION = 1
# Ruby MAX_QUERY_BYTES: a query is a question, not a document; bigger input is a caller bug.
MAX_QUERY_BYTES = 8192

app = typer.Typer(
    name="woods",
    help="Index a repository with tree-sitter and search it: code retrieval for coding assistants.",
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)


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


def _store_dir(path: Path | None, store: Path | None) -> Path:
    from woods.store.index import store_dir_for

    if path is not None and store is not None:
        raise InputError("pass either --path or --store, not both")
    if path is not None and not path.exists():
        raise InputError(f"path not found: {path}")
    return store_dir_for(path, store)


def _open_index(path: Path | None, store: Path | None) -> Any:
    from woods.store.index import IndexStores

    return IndexStores.open(_store_dir(path, store))


def _validate_query(query: str) -> None:
    if not query.strip():
        raise InputError("the query is blank; pass what you are looking for, e.g. woods search \"invoice total\"")
    size = len(query.encode("utf-8", "surrogatepass"))
    if size > MAX_QUERY_BYTES:
        raise InputError(f"the query is {size} bytes, over the {MAX_QUERY_BYTES}-byte limit; shorten it")


# -- index ---------------------------------------------------------------------------------------

DebugOpt = Annotated[bool, typer.Option("--debug", help="Show the traceback of an unexpected error.")]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print one JSON object on stdout.")]
PathOpt = Annotated[Path | None, typer.Option("--path", help="Repository whose .woods index to use (default: cwd).")]
StoreOpt = Annotated[Path | None, typer.Option("--store", help="Index directory (instead of PATH/.woods).")]


@app.command()
def index(
    path: Annotated[Path, typer.Argument(help="Repository to index.")] = Path("."),
    store: StoreOpt = None,
    max_file_bytes: Annotated[int, typer.Option("--max-file-bytes", min=1, help="Skip files larger than this.")] = 1_000_000,
    wait: Annotated[float, typer.Option("--wait", min=0, help="Seconds to wait for another running index.")] = 30.0,
    full: Annotated[bool, typer.Option("--full", help="Rebuild from scratch (no reuse of parses or vectors).")] = False,
    allow_purge: Annotated[bool, typer.Option("--allow-purge", help="Allow a run that removes over 30% of the units.")] = False,
    watch_mode: Annotated[bool, typer.Option("--watch", help="Keep re-indexing on file changes until Ctrl-C.")] = False,
    embedder: Annotated[str, typer.Option("--embedder", hidden=True, help="minilm (default) or fake (tests).")] = "minilm",
    as_json: JsonOpt = False,
    debug: DebugOpt = False,
) -> None:
    """Index PATH: discover, parse, embed and publish a new index (old one stays until it is ready).

    Incremental by default: unchanged files are not parsed again and unchanged code is not embedded
    again. The previous index stays readable until the new one is published."""

    def action() -> int:
        from woods.embedding.select import index_provider
        from woods.indexing import index_repository, parse_workers
        from woods.store.index import store_dir_for

        if not path.exists():
            raise InputError(f"path not found: {path}")
        if not path.is_dir():
            raise InputError(f"not a directory: {path}; pass a repository directory")
        if embedder not in ("minilm", "fake"):
            raise InputError(f"unknown embedder {embedder!r}; use minilm")
        if watch_mode and as_json:
            raise InputError("--watch runs until interrupted; it cannot print one JSON object (drop --json)")
        target = store_dir_for(path, store)
        provider: list[Any] = []

        def warm_provider() -> Any:  # created once, kept warm across --watch re-indexes
            if not provider:
                provider.append(index_provider(embedder))
            return provider[0]

        def run_once(full_run: bool) -> Any:
            started = time.perf_counter()
            with _progress(enabled=not as_json) as progress:
                summary = index_repository(
                    path, target, warm_provider, max_file_bytes=max_file_bytes, progress=progress,
                    wait=wait, full=full_run, allow_purge=allow_purge, workers=parse_workers(),
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

            sys.stderr.write(f"woods: watching {path} for changes (Ctrl-C to stop)\n")
            try:
                watch(path, lambda: run_once(False), max_file_bytes=max_file_bytes,
                      on_change=lambda n: sys.stderr.write(f"woods: {n} file(s) changed; re-indexing\n"))
            except KeyboardInterrupt:
                sys.stderr.write("woods: stopped watching\n")
        return 0

    _run(debug, action)


def _progress(enabled: bool) -> Any:
    from woods.progress import make_progress

    return make_progress(enabled)


def _print_index_summary(summary: Any, elapsed: float) -> None:
    err = sys.stderr
    langs = ", ".join(f"{k} {v}" for k, v in summary.files_by_language.items()) or "none"
    types = ", ".join(f"{k} {v}" for k, v in summary.units_by_type.items()) or "none"
    skipped = ", ".join(f"{k} {v}" for k, v in summary.skipped.items()) or "none"
    phases = ", ".join(f"{k} {v:.1f}s" for k, v in summary.seconds.items())
    err.write(f"indexed {summary.files} files ({langs})\n")
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
    if summary.parse_failures or summary.warnings:
        err.write(f"warnings: {len(summary.warnings)} (first: {summary.warnings[0] if summary.warnings else '-'})\n")
    err.write(f"time {elapsed:.1f}s ({phases}); index at {summary.store_dir}\n")


# -- search --------------------------------------------------------------------------------------


@app.command()
def search(
    query: Annotated[str, typer.Argument(help="What you are looking for.")],
    path: PathOpt = None,
    store: StoreOpt = None,
    limit: Annotated[int, typer.Option("--limit", min=1, max=200, help="Results to show.")] = 10,
    strategy: Annotated[Strategy, typer.Option("--strategy", help="Force a strategy (default: classify).")] = Strategy.auto,
    types: Annotated[list[str] | None, typer.Option("--type", help="Only units of this type (repeatable).")] = None,
    exclude_types: Annotated[list[str] | None, typer.Option("--exclude-type", help="Drop this type (repeatable).")] = None,
    budget: Annotated[int, typer.Option("--budget", min=1, help="Token budget of the assembled context.")] = 8000,
    context: Annotated[bool, typer.Option("--context", help="Print the assembled context.")] = False,
    mode: Annotated[Mode, typer.Option("--mode", help="semantic (default) or lexical (BM25F).")] = Mode.semantic,
    path_prefixes: Annotated[list[str] | None, typer.Option("--path-prefix", help="Only files under this path (repeatable).")] = None,
    as_json: JsonOpt = False,
    debug: DebugOpt = False,
) -> None:
    """Search the index: classify the query, run the strategy, rank, assemble a context."""

    def action() -> int:
        _validate_query(query)
        from woods.freshness import mark_stale

        stores = _open_index(path, store)
        try:
            result = _retrieve(stores, query, limit=limit, strategy=strategy.value, types=types,
                               exclude_types=exclude_types, budget=budget, mode=mode.value,
                               path_prefixes=path_prefixes)
            payload = {"query": query, **result.to_dict()}
            payload["warnings"] = [*payload.get("warnings", []), *mark_stale(stores, payload.get("results", []))]
        finally:
            stores.close()
        if as_json:
            if not context:
                payload.pop("context", None)
            _emit_json(payload)
            return 0
        _print_results(payload, context)
        return 0

    _run(debug, action)


def _retrieve(stores: Any, query: str, **options: Any) -> Any:
    from woods.embedding.select import query_embedder
    from woods.retrieval.retriever import Retriever

    retriever = Retriever(stores, lambda: query_embedder(stores.manifest.embedder), mode=options.pop("mode"))
    strategy = options.pop("strategy")
    return retriever.retrieve(query, strategy=None if strategy == "auto" else strategy, **options)


def _print_results(payload: dict[str, Any], show_context: bool) -> None:
    out = sys.stdout
    rows = payload.get("results", [])
    if not rows:
        out.write("no results\n")
    for i, row in enumerate(rows, 1):
        where = f"{row['file_path']}:{row['line_start']}-{row['line_end']}"
        found_by = ",".join(row.get("sources", []))
        stale = "  STALE" if row.get("stale") else ""
        out.write(f"{i:>2}. {row['identifier']}  [{row['type']}]  {where}  score {row['score']:.3f}  ({found_by}){stale}\n")
    for warning in payload.get("warnings", []):
        sys.stderr.write(f"woods: warning: {warning}\n")
    sys.stderr.write(
        f"strategy {payload.get('strategy')}; {len(rows)} results; "
        f"{payload.get('trace', {}).get('elapsed_ms', '?')} ms\n"
    )
    if show_context:
        out.write("\n" + str(payload.get("context", "")) + "\n")


# -- status --------------------------------------------------------------------------------------


@app.command()
def status(
    path: PathOpt = None,
    store: StoreOpt = None,
    as_json: JsonOpt = False,
    debug: DebugOpt = False,
) -> None:
    """Show what the index holds and which files changed since it was built."""

    def action() -> int:
        from woods.freshness import changes_since_index
        from woods.indexing.resume import describe_vector_state, vector_state

        stores = _open_index(path, store)
        try:
            manifest = stores.manifest.data
            changes = changes_since_index(stores)
            vectors = vector_state(stores.store_dir, stores.generation.name, stores.manifest)
            payload = {
                "store": str(stores.store_dir),
                "generation": stores.generation.name,
                "manifest": manifest,
                "vectors": vectors,
                "units_by_type": stores.metadata.type_counts(),
                "files_by_language": stores.metadata.language_counts(),
                "changes": changes.to_dict(),
                "warnings": [],
            }
        finally:
            stores.close()
        if as_json:
            _emit_json(payload)
            return 0
        out = sys.stdout
        counts = manifest.get("counts", {})
        out.write(f"index: {payload['store']} (generation {payload['generation']}, built {manifest.get('created_at')})\n")
        out.write(f"root: {manifest.get('root')}\n")
        out.write(f"embedder: {manifest['embedder']['name']} ({manifest['embedder']['dimension']}-d)\n")
        out.write(
            f"files {counts.get('files')}, units {counts.get('units')}, chunks {counts.get('chunks')}, "
            f"edges {counts.get('edges')}\n"
        )
        out.write(describe_vector_state(vectors) + "\n")
        out.write("units by type: " + ", ".join(f"{k} {v}" for k, v in payload["units_by_type"].items()) + "\n")
        c = changes
        if c.root_missing:
            out.write("freshness: the indexed root is gone\n")
        else:
            out.write(f"changed {len(c.changed)}, added {len(c.added)}, deleted {len(c.deleted)} since indexing\n")
            for label, items in (("changed", c.changed), ("added", c.added), ("deleted", c.deleted)):
                for item in items[:20]:
                    out.write(f"  {label}: {item}\n")
        return 0

    _run(debug, action)


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
    raw = sys.stdin.read(1_000_000 + 1)
    if len(raw) > 1_000_000:
        raise InputError("the --input request is over 1 MB; send {\"ref\": \"…\"}")
    try:
        request = json.loads(raw)
    except ValueError as exc:
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
    unit_type: Annotated[str | None, typer.Option("--type", help="Only units of this type.")] = None,
    limit: Annotated[int, typer.Option("--limit", min=1, max=20, help="Candidates to list when ambiguous.")] = 5,
    strict: Annotated[bool, typer.Option("--strict", help="Only deterministic stages may resolve (before edits).")] = False,
    input_path: Annotated[str | None, typer.Option("--input", help="'-' reads {\"ref\", \"type\"} JSON from stdin.")] = None,
    as_json: JsonOpt = False,
    debug: DebugOpt = False,
) -> None:
    """Turn a reference into exactly one unit, or say it is ambiguous (exit 3) — never a guess."""

    def action() -> int:
        from woods.embedding.select import query_embedder
        from woods.resolve import make_searcher
        from woods.resolve import resolve as resolve_ref

        reference, requested_type = _resolve_request(ref, input_path, unit_type)
        stores = _open_index(path, store)
        try:
            searcher = make_searcher(stores, lambda: query_embedder(stores.manifest.embedder))
            outcome = resolve_ref(stores, reference, type=requested_type, limit=limit, strict=strict, searcher=searcher)
            payload = outcome.to_dict()
            if outcome.file_path:
                from woods.freshness import mark_stale

                probe = [{"file_path": outcome.file_path}]
                payload["warnings"] = [*payload.get("warnings", []), *mark_stale(stores, probe)]
                if probe[0].get("stale"):
                    payload["stale"] = True
        finally:
            stores.close()
        if as_json:
            _emit_json(payload)
        else:
            sys.stdout.write(outcome.format_human().rstrip("\n") + "\n")
            for warning in payload.get("warnings", []):
                sys.stderr.write(f"woods: warning: {warning}\n")
        return outcome.exit_code

    _run(debug, action)


# -- lookup, deps, dependents, structure ---------------------------------------------------------


def _records_for(stores: Any, identifier: str) -> list[dict[str, Any]]:
    """Records named by a storage key or a public identifier (all typed variants), or []."""
    record = stores.metadata.find(identifier)
    return [record] if record is not None else stores.metadata.find_by_identifier(identifier)


def _unit_summary(record: dict[str, Any]) -> dict[str, Any]:
    return {
        "identifier": record["identifier"],
        "type": record["type"],
        "file_path": record.get("file_path"),
        "line_start": record.get("line_start"),
        "line_end": record.get("line_end"),
    }


def _not_found(identifier: str, as_json: bool) -> int:
    message = f"no unit named {identifier!r}; try `woods resolve {identifier!r}` to find it"
    if as_json:
        _emit_json({"status": "not_found", "identifier": identifier, "warnings": [message]})
    sys.stderr.write(f"woods: {message}\n")
    return 3


@app.command()
def lookup(
    identifier: Annotated[str, typer.Argument(help="Unit identifier or storage key.")],
    path: PathOpt = None,
    store: StoreOpt = None,
    include_source: Annotated[bool, typer.Option("--source/--no-source", help="Include the source code.")] = True,
    as_json: JsonOpt = False,
    debug: DebugOpt = False,
) -> None:
    """Show a unit: where it is, its metadata, dependencies and dependents (exit 3 when unknown)."""

    def action() -> int:
        stores = _open_index(path, store)
        try:
            records = _records_for(stores, identifier)
        finally:
            stores.close()
        if not records:
            return _not_found(identifier, as_json)
        if not include_source:
            records = [{k: v for k, v in r.items() if k != "source_code"} for r in records]
        if as_json:
            _emit_json({"status": "found", "identifier": identifier, "units": records, "warnings": []})
            return 0
        out = sys.stdout
        for record in records:
            out.write(f"{record['identifier']}  [{record['type']}]  {record['file_path']}:{record['line_start']}-{record['line_end']}\n")
            if record.get("signature"):
                out.write(f"  signature: {record['signature']}\n")
            deps = ", ".join(f"{d['target']} ({d['via']})" for d in record.get("dependencies", []))
            out.write(f"  dependencies: {deps or '-'}\n")
            dependents = ", ".join(d["identifier"] for d in record.get("dependents", []))
            out.write(f"  dependents: {dependents or '-'}\n")
            if record.get("metadata"):
                out.write(f"  metadata: {json.dumps(record['metadata'], ensure_ascii=False, sort_keys=True)}\n")
            if include_source:
                out.write("\n" + record.get("source_code", "").rstrip("\n") + "\n\n")
        return 0

    _run(debug, action)


def _graph_command(identifier: str, path: Path | None, store: Path | None, depth: int, via: str | None,
                   reverse: bool, as_json: bool) -> int:
    stores = _open_index(path, store)
    try:
        records = _records_for(stores, identifier)
        if not records:
            return _not_found(identifier, as_json)
        public = records[0]["identifier"]
        hops = stores.graph.traverse(public, reverse=reverse, depth=depth, via=via)
        found = stores.metadata.find_batch([h[0] for h in hops])
        rows = []
        for neighbour, edge_via, distance in hops:
            record = found.get(neighbour) or next(iter(stores.metadata.find_by_identifier(neighbour)), None)
            row = {"identifier": neighbour, "via": edge_via, "distance": distance, "in_index": record is not None}
            if record is not None:
                row.update({k: v for k, v in _unit_summary(record).items() if k != "identifier"})
            rows.append(row)
    finally:
        stores.close()
    if as_json:
        _emit_json({
            "identifier": public, "direction": "dependents" if reverse else "dependencies",
            "depth": depth, "via": via, "results": rows, "warnings": [],
        })
        return 0
    out = sys.stdout
    if not rows:
        out.write("none\n")
    for row in rows:
        where = f"  {row['file_path']}:{row['line_start']}" if row["in_index"] else "  (not in the index)"
        out.write(f"{'  ' * (row['distance'] - 1)}{row['identifier']}  via {row['via']}{where}\n")
    return 0


DepthOpt = Annotated[int, typer.Option("--depth", min=1, max=10, help="Hops to follow.")]
ViaOpt = Annotated[str | None, typer.Option("--via", help="Only edges of this kind (superclass, calls, include …).")]


@app.command()
def deps(
    identifier: Annotated[str, typer.Argument(help="Unit identifier.")],
    path: PathOpt = None,
    store: StoreOpt = None,
    depth: DepthOpt = 1,
    via: ViaOpt = None,
    as_json: JsonOpt = False,
    debug: DebugOpt = False,
) -> None:
    """What a unit depends on (breadth-first up to --depth)."""
    _run(debug, lambda: _graph_command(identifier, path, store, depth, via, False, as_json))


@app.command()
def dependents(
    identifier: Annotated[str, typer.Argument(help="Unit identifier.")],
    path: PathOpt = None,
    store: StoreOpt = None,
    depth: DepthOpt = 1,
    via: ViaOpt = None,
    as_json: JsonOpt = False,
    debug: DebugOpt = False,
) -> None:
    """What depends on a unit (breadth-first up to --depth)."""
    _run(debug, lambda: _graph_command(identifier, path, store, depth, via, True, as_json))


@app.command()
def structure(
    path: PathOpt = None,
    store: StoreOpt = None,
    top: Annotated[int, typer.Option("--top", min=1, max=1000, help="Units in the PageRank list.")] = 20,
    as_json: JsonOpt = False,
    debug: DebugOpt = False,
) -> None:
    """The shape of the codebase: units by type, edges by kind, files by language, top PageRank."""

    def action() -> int:
        stores = _open_index(path, store)
        try:
            payload = {
                "units_by_type": stores.metadata.type_counts(),
                "edges_by_via": stores.metadata.edge_counts_by_via(),
                "files_by_language": stores.metadata.language_counts(),
                "top_pagerank": [
                    {"identifier": i, "type": t, "score": s} for i, t, s in stores.metadata.top_pagerank(top)
                ],
                "warnings": [],
            }
        finally:
            stores.close()
        if as_json:
            _emit_json(payload)
            return 0
        out = sys.stdout
        for title, key in (("units by type", "units_by_type"), ("edges by via", "edges_by_via"),
                           ("files by language", "files_by_language")):
            out.write(f"{title}: " + ", ".join(f"{k} {v}" for k, v in payload[key].items()) + "\n")
        out.write("top PageRank:\n")
        for row in payload["top_pagerank"]:
            out.write(f"  {row['score']:.5f}  {row['identifier']}  [{row['type']}]\n")
        return 0

    _run(debug, action)


# -- mcp -----------------------------------------------------------------------------------------


@app.command()
def mcp(path: PathOpt = None, store: StoreOpt = None, debug: DebugOpt = False) -> None:
    """Serve the index to coding assistants over MCP (stdio); keeps the index and model warm."""

    def action() -> int:
        from woods.mcp_server import serve

        serve(_store_dir(path, store), root=None if store else (path or Path.cwd()).resolve())
        return 0

    _run(debug, action)


# -- evaluate ------------------------------------------------------------------------------------


@app.command()
def evaluate(
    queryset: Annotated[Path, typer.Argument(help="Query set JSON (Ruby woods format).")],
    path: PathOpt = None,
    store: StoreOpt = None,
    corpus: Annotated[Path | None, typer.Option("--corpus", help="Pre-extracted units (Ruby corpus.json).")] = None,
    vectors: Annotated[Path | None, typer.Option("--vectors", help="Captured vectors for --corpus (vectors.json).")] = None,
    budget: Annotated[int | None, typer.Option("--budget", min=1, help="Override every query's budget.")] = None,
    as_json: JsonOpt = False,
    debug: DebugOpt = False,
) -> None:
    """Evaluate retrieval quality on a query set (precision@k, recall, MRR, completeness)."""

    def action() -> int:
        from woods.evaluate.runner import format_report, run_evaluation

        if not queryset.is_file():
            raise InputError(f"query set not found: {queryset}")
        if (corpus is None) != (vectors is None):
            raise InputError("--corpus and --vectors go together")
        for given in (corpus, vectors):
            if given is not None and not given.is_file():
                raise InputError(f"file not found: {given}")
        stores = None if corpus is not None else _open_index(path, store)
        try:
            report = run_evaluation(queryset, stores=stores, corpus_path=corpus, vectors_path=vectors, budget=budget)
        finally:
            if stores is not None:
                stores.close()
        if as_json:
            _emit_json(report.to_dict())
        else:
            sys.stdout.write(format_report(report))
        return 0

    _run(debug, action)


def main() -> None:
    """Console entry point: usage errors become one stderr line and exit 2.

    typer vendors its own click (typer._click); its exceptions share `typer.exceptions.TyperException`
    and carry `exit_code` and `format_message()`, which is all this needs.
    """
    try:
        app(standalone_mode=False)
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
