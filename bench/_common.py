"""Shared bench helpers: timers, percentiles, peak RSS, and timed child processes.

Why one module: every bench reports the same kinds of numbers (wall seconds, p50/p95, peak RSS)
and they must mean the same thing in every table. Peak RSS of a child is read from the kernel's
per-child rusage (`os.wait4`), so each measured run reports its own peak and not the parent's.
"""

from __future__ import annotations

import json
import math
import os
import resource
import subprocess
import sys
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

# Linux reports ru_maxrss in KiB, macOS in bytes; the benches print MiB.
_RSS_UNIT_BYTES = 1 if sys.platform == "darwin" else 1024
_MIB = 1024 * 1024


def percentile(values: Sequence[float], q: float) -> float | None:
    """The q-th percentile (0..100) with linear interpolation between closest ranks (numpy's default).

    None for an empty sequence, so a missing measurement never looks like a zero.
    """
    if not values:
        return None
    if not 0.0 <= q <= 100.0:
        raise ValueError(f"percentile must be within 0..100, got {q}")
    ordered = sorted(values)
    position = (len(ordered) - 1) * q / 100.0
    low = math.floor(position)
    high = math.ceil(position)
    if low == high:
        return ordered[low]
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def latency_summary(seconds: Sequence[float]) -> dict[str, Any]:
    """n, p50, p95, min, max and mean of wall times, in milliseconds rounded to 0.1 ms."""

    def ms(value: float | None) -> float | None:
        return None if value is None else round(value * 1000.0, 1)

    return {
        "n": len(seconds),
        "p50_ms": ms(percentile(seconds, 50)),
        "p95_ms": ms(percentile(seconds, 95)),
        "min_ms": ms(min(seconds)) if seconds else None,
        "max_ms": ms(max(seconds)) if seconds else None,
        "mean_ms": ms(sum(seconds) / len(seconds)) if seconds else None,
    }


def rate(count: float, seconds: float) -> float | None:
    """count / seconds rounded to 0.1, or None when nothing was timed."""
    if seconds <= 0:
        return None
    return round(count / seconds, 1)


def peak_rss_mib() -> float:
    """Peak resident set size of this process so far (ru_maxrss), in MiB."""
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * _RSS_UNIT_BYTES / _MIB, 1)


def rusage_peak_mib(usage: resource.struct_rusage) -> float:
    return round(usage.ru_maxrss * _RSS_UNIT_BYTES / _MIB, 1)


@dataclass
class Stopwatch:
    """Accumulates wall seconds per named section (perf_counter)."""

    seconds: dict[str, float] = field(default_factory=dict)

    @contextmanager
    def section(self, name: str) -> Iterator[None]:
        started = time.perf_counter()
        try:
            yield
        finally:
            self.seconds[name] = self.seconds.get(name, 0.0) + time.perf_counter() - started

    def rounded(self) -> dict[str, float]:
        return {name: round(value, 3) for name, value in self.seconds.items()}


@dataclass(frozen=True)
class ChildRun:
    """A finished child process: exit code, wall seconds, its own peak RSS, captured output."""

    returncode: int
    wall_seconds: float
    peak_rss_mib: float
    user_seconds: float
    system_seconds: float
    stdout: str
    stderr: str


def run_child(
    argv: Sequence[str],
    *,
    env: Mapping[str, str] | None = None,
    cwd: str | os.PathLike[str] | None = None,
    timeout: float | None = None,
) -> ChildRun:
    """Run argv to completion and measure it: wall time from spawn to reap, and the child's rusage.

    Output goes to temp files rather than pipes so a chatty child can never block on a full pipe
    while we wait for it.
    """
    import tempfile

    merged = dict(os.environ)
    if env:
        merged.update(env)
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        started = time.perf_counter()
        process = subprocess.Popen(list(argv), stdout=out, stderr=err, env=merged, cwd=cwd)
        deadline = None if timeout is None else started + timeout
        while True:
            pid, status, usage = os.wait4(process.pid, os.WNOHANG if deadline else 0)
            if pid:
                break
            if deadline is not None and time.perf_counter() > deadline:
                process.kill()
                pid, status, usage = os.wait4(process.pid, 0)
                break
            time.sleep(0.01)
        wall = time.perf_counter() - started
        process.returncode = os.waitstatus_to_exitcode(status)  # reaped here: tell Popen
        out.seek(0)
        err.seek(0)
        return ChildRun(
            returncode=process.returncode,
            wall_seconds=wall,
            peak_rss_mib=rusage_peak_mib(usage),
            user_seconds=round(usage.ru_utime, 3),
            system_seconds=round(usage.ru_stime, 3),
            stdout=out.read().decode("utf-8", "replace"),
            stderr=err.read().decode("utf-8", "replace"),
        )


def write_json(path: Path, payload: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(payload, indent=2, sort_keys=True, ensure_ascii=False) + "\n", encoding="utf-8")


def read_json(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


def format_table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """A plain fixed-width text table (left-aligned first column, right-aligned others)."""
    cells = [[_cell(v) for v in row] for row in rows]
    widths = [len(h) for h in headers]
    for row in cells:
        for i, value in enumerate(row):
            widths[i] = max(widths[i], len(value))

    def line(values: Sequence[str]) -> str:
        parts = [values[0].ljust(widths[0])] + [v.rjust(w) for v, w in zip(values[1:], widths[1:], strict=True)]
        return "  ".join(parts).rstrip()

    rule = "  ".join("-" * w for w in widths)
    return "\n".join([line(list(headers)), rule, *(line(row) for row in cells)])


def _cell(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:,.1f}" if abs(value) >= 100 else f"{value:.2f}"
    if isinstance(value, int):
        return f"{value:,}"
    return str(value)


def emit_report(result: Any, table: str, out: Path | None, as_json: bool) -> None:
    """The benches' output contract: the table on stdout (on stderr with --json, whose JSON goes to
    stdout), and the JSON also written to `out` when given."""
    text = json.dumps(result, indent=2, sort_keys=True, default=str) + "\n"
    if out:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(text, encoding="utf-8")
    if as_json:
        sys.stderr.write(table + "\n")
        sys.stdout.write(text)
    else:
        sys.stdout.write(table + "\n")


def code_search_config(pairs: Sequence[str]) -> Any:
    """A `CodeSearchConfig` with `field=value` changes (tuples as `a,b,c`, mappings as `k:v,k:v`)."""
    import dataclasses

    from woods.retrieval.code_search import CodeSearchConfig

    config = CodeSearchConfig()
    changes: dict[str, Any] = {}
    fields = {f.name: f for f in dataclasses.fields(CodeSearchConfig)}
    for pair in pairs:
        key, _, raw = pair.partition("=")
        if key not in fields:
            raise SystemExit(f"unknown config field {key!r} (fields: {', '.join(sorted(fields))})")
        current = getattr(config, key)
        if isinstance(current, tuple):
            changes[key] = tuple(float(x) for x in raw.split(","))
        elif isinstance(current, str):
            changes[key] = raw
        elif isinstance(current, int) and not isinstance(current, bool):
            changes[key] = int(raw)
        elif isinstance(current, dict) or hasattr(current, "items"):
            changes[key] = {**current, **{k: float(v) for k, v in (kv.split(":") for kv in raw.split(","))}}
        else:
            changes[key] = float(raw)
    return dataclasses.replace(config, **changes)


# -- file-level ranking metrics: semble-dev's definitions (../shared/semble-dev/run.py), shared by
# the benches that score files (redmine_eval.py, arch/run.py) ---------------------------------------

# semble-dev's cut-off: NDCG@10 over the first ten distinct files.
TOP_K = 10


def dcg(rels: Sequence[int]) -> float:
    return sum(rel / math.log2(i + 2) for i, rel in enumerate(rels))


def ndcg_at_k(relevant_ranks: Sequence[int], n_relevant: int, k: int = TOP_K) -> float:
    """Binary-gain NDCG@k from the 1-based ranks at which relevant items were found; the ideal
    uses min(k, n_relevant) (semble's benchmarks/metrics.py)."""
    if n_relevant == 0:
        return 0.0
    rels = [0] * k
    for rank in relevant_ranks:
        if 1 <= rank <= k:
            rels[rank - 1] = 1
    ideal = dcg([1] * min(k, n_relevant))
    return dcg(rels) / ideal if ideal > 0 else 0.0


def path_matches(file_path: str, target_path: str) -> bool:
    """semble's rule: equal, or either path is a '/'-suffix of the other."""
    a = file_path.replace("\\", "/")
    a = a[2:] if a.startswith("./") else a
    b = target_path.replace("\\", "/")
    return a == b or a.endswith("/" + b) or b.endswith("/" + a)


def dedupe_files(paths: Iterable[str | None], k: int = TOP_K) -> list[str]:
    """The first `k` distinct paths, in order (empty ones skipped)."""
    out: list[str] = []
    for path in paths:
        if path and path not in out:
            out.append(path)
        if len(out) == k:
            break
    return out
