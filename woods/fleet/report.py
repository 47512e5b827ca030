"""The fleet run on stderr: a live progress line and the closing summary.

Why here and not in the CLI: the text is a pure function of the library's `FleetState` and
`FleetSummary` (tested as such); the CLI only chooses to show it. On a terminal the progress line
is redrawn in place; in a log (not a terminal) a line is written every `LOG_INTERVAL_SECONDS`
and one per finished repository, never control codes.
"""

from __future__ import annotations

import sys
import time
from typing import TextIO

from woods.fleet.build import FleetSummary
from woods.fleet.events import FleetState
from woods.fleet.job import FAILED, INTERRUPTED, PUBLISHED, UP_TO_DATE, RepoOutcome

# A log (stderr not a terminal) gets the progress line this often.
LOG_INTERVAL_SECONDS = 10.0
_MARKS = {PUBLISHED: "+", UP_TO_DATE: "=", FAILED: "!", INTERRUPTED: "-"}


def duration(seconds: float | None) -> str:
    if seconds is None:
        return "?"
    seconds = max(0, round(seconds))
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}h{minutes:02d}m" if hours else (f"{minutes}m{secs:02d}s" if minutes else f"{secs}s")


def progress_line(state: FleetState) -> str:
    """`fleet: 5/24 done, 2 running, 1 failed · 1,234 chunks/s · 3m10s left`."""
    total = len(state.repos)
    done = state.count("done")
    failed = state.count("failed")
    running = state.count("running")
    parts = [f"fleet: {done + failed}/{total} done", f"{running} running"]
    if failed:
        parts.append(f"{failed} failed")
    return (", ".join(parts) + f" · {state.chunks_per_second:,.0f} chunks/s · {duration(state.seconds_left)} left"
            + f" · {duration(state.elapsed)} elapsed")


def outcome_line(outcome: RepoOutcome) -> str:
    mark = _MARKS.get(outcome.status, "?")
    if outcome.status == FAILED or outcome.status == INTERRUPTED:
        return f"{mark} {outcome.name}: {outcome.status}: {outcome.error}"
    what = "up to date" if outcome.status == UP_TO_DATE else f"published {outcome.generation}"
    retried = f", {outcome.attempts} attempts" if outcome.attempts > 1 else ""
    return (f"{mark} {outcome.name}: {what}; {outcome.files} files, {outcome.units} units, {outcome.chunks} chunks "
            f"(embedded {outcome.embedded}); {outcome.seconds:.1f}s{retried}")


def summary_lines(summary: FleetSummary) -> list[str]:
    totals = summary.totals()
    where = summary.store or "each repository's .woods"
    runner = summary.runner + (f" at {summary.address}" if summary.address else "")
    lines = [
        f"fleet: {totals['repositories']} repositories into {where} on {runner}, {summary.workers} workers",
        f"published {totals[PUBLISHED]}, up to date {totals[UP_TO_DATE]}, failed {totals[FAILED]}"
        + (f", interrupted {totals[INTERRUPTED]}" if totals[INTERRUPTED] else ""),
        f"files {totals['files']}, units {totals['units']}, chunks {totals['chunks']} (embedded {totals['embedded']})",
    ]
    if totals["rows"]:
        lines.append(f"rows into PostgreSQL {totals['rows']} in {totals['publish_seconds']:.1f}s of publishing "
                     f"({totals['rows_per_publish_second']:,.0f} rows/s)")
    if summary.org_index.get("added") or summary.org_index.get("removed"):
        org = summary.org_index
        lines.append(f"organisation vector index: +{org['added']} / -{org['removed']} generations, {org['rows']} vectors "
                     f"in {org['seconds']:.1f}s")
    lines.extend(f"failed: {r.name}: {r.error}" for r in summary.repositories if r.status == FAILED)
    lines.append(f"time {duration(summary.seconds)} ({summary.seconds:.1f}s)")
    return lines


class StderrFleetProgress:
    """The CLI's `FleetProgress`: the progress line (in place on a terminal, every
    LOG_INTERVAL_SECONDS in a log) and a line per finished repository."""

    def __init__(self, stream: TextIO | None = None) -> None:
        self._stream = stream or sys.stderr
        self._tty = self._stream.isatty()
        self._last = 0.0
        self._width = 0

    def update(self, state: FleetState) -> None:
        now = time.monotonic()
        if self._tty:
            self._draw(progress_line(state))
        elif now - self._last >= LOG_INTERVAL_SECONDS:
            self._stream.write(progress_line(state) + "\n")
            self._last = now

    def finished(self, outcome: RepoOutcome, state: FleetState) -> None:
        if self._tty:
            self._draw("")
        self._stream.write(outcome_line(outcome) + "\n")
        if self._tty:
            self._draw(progress_line(state))

    def _draw(self, line: str) -> None:
        self._stream.write("\r" + line.ljust(self._width) + ("" if line else "\r"))
        self._width = len(line)
        self._stream.flush()

    def close(self) -> None:
        if self._tty and self._width:
            self._stream.write("\n")
            self._width = 0


__all__ = ["StderrFleetProgress", "duration", "outcome_line", "progress_line", "summary_lines"]
