"""What a fleet's workers tell the driver while they run, and the driver's picture of the run.

Why: a fleet runs for minutes to hours on many processes (and machines); whoever started it wants
to see repositories done / running / failed, chunks per second and the time left, and a test
wants to know which process works on which repository. Workers send small `FleetEvent`s (batched,
at most a few a second per repository) through a channel the runner provides (a Ray actor, a
process queue); the driver folds them into a `FleetState`. Progress is advisory: a lost event
(a restarted monitor, a killed worker's last batch) never changes what is published or reported
in the summary, which comes from the workers' return values.
"""

from __future__ import annotations

import os
import socket
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol

# Event kinds, in the order a repository sends them.
STARTED = "started"  # a worker began the repository (again, after a retry): pid and host
PHASE = "phase"  # the index builder entered a phase (discover, parse, chunk, embed, write)
ADVANCE = "advance"  # `count` more items of the current phase are done
NOTE = "note"  # a line the index builder wanted shown
# A worker flushes its buffered events at least this often (seconds): often enough for a live
# progress line, rarely enough that thousands of repositories do not flood the driver.
FLUSH_SECONDS = 0.5


@dataclass(frozen=True, slots=True)
class FleetEvent:
    """One thing a worker reports about one repository (picklable: it crosses processes)."""

    repo: str
    kind: str
    phase: str = ""
    count: int = 0
    total: int | None = None
    pid: int = 0
    host: str = ""
    message: str = ""
    at: float = 0.0


class EventChannel(Protocol):
    """Where a worker's events go (a Ray actor handle, a process queue); `send` never blocks
    for long and never raises for a driver that stopped listening."""

    def send(self, events: Sequence[FleetEvent]) -> None: ...


class WorkerProgress:
    """The index builder's `Progress` inside a worker: phases and counts of one repository,
    buffered and sent to the driver every FLUSH_SECONDS (and at each phase change)."""

    def __init__(self, channel: EventChannel | None, repo: str) -> None:
        self._channel = channel
        self._repo = repo
        self._phase = ""
        self._pending: list[FleetEvent] = []
        self._advanced = 0
        self._last_flush = time.monotonic()

    def started(self) -> None:
        self._pending.append(FleetEvent(self._repo, STARTED, pid=os.getpid(), host=socket.gethostname(), at=time.time()))
        self.flush()

    def phase(self, name: str, total: int | None) -> None:
        self._take_advance()
        self._phase = name
        self._pending.append(FleetEvent(self._repo, PHASE, phase=name, total=total, at=time.time()))
        self.flush()

    def advance(self, count: int = 1) -> None:
        self._advanced += count
        if time.monotonic() - self._last_flush >= FLUSH_SECONDS:
            self.flush()

    def note(self, message: str) -> None:
        self._pending.append(FleetEvent(self._repo, NOTE, phase=self._phase, message=message, at=time.time()))

    def _take_advance(self) -> None:
        if self._advanced:
            self._pending.append(FleetEvent(self._repo, ADVANCE, phase=self._phase, count=self._advanced, at=time.time()))
            self._advanced = 0

    def flush(self) -> None:
        self._take_advance()
        self._last_flush = time.monotonic()
        if self._pending and self._channel is not None:
            self._channel.send(self._pending)
        self._pending = []


@dataclass
class RepoProgress:
    """The driver's view of one repository while the run goes on."""

    name: str
    state: str = "pending"  # pending, running, done, failed
    phase: str = ""
    total: int | None = None
    done: int = 0
    embedded: int = 0
    attempts: int = 0
    pid: int = 0
    host: str = ""
    started_at: float | None = None


@dataclass
class FleetState:
    """Counts, rate and time left of a fleet run, folded from events and finished repositories.

    `chunks_per_second` counts the chunks of finished repositories plus the texts running ones
    have embedded so far, over the run's wall time. `seconds_left` assumes the repositories still
    to do take as long on average as the finished ones did, with `workers` at a time (None until
    one has finished)."""

    workers: int
    repos: dict[str, RepoProgress] = field(default_factory=dict)
    started: float = field(default_factory=time.monotonic)
    finished_chunks: int = 0
    finished_seconds: float = 0.0

    @classmethod
    def for_repos(cls, names: Sequence[str], workers: int) -> FleetState:
        return cls(workers, {name: RepoProgress(name) for name in names})

    def apply(self, event: FleetEvent) -> None:
        repo = self.repos.get(event.repo)
        if repo is None:
            return
        if event.kind == STARTED:
            repo.state, repo.attempts, repo.pid, repo.host = "running", repo.attempts + 1, event.pid, event.host
            repo.phase, repo.total, repo.done, repo.embedded = "", None, 0, 0
            repo.started_at = time.monotonic()
        elif event.kind == PHASE:
            repo.phase, repo.total, repo.done = event.phase, event.total, 0
        elif event.kind == ADVANCE:
            repo.done += event.count
            if event.phase == "embed":
                repo.embedded += event.count

    def finish(self, name: str, failed: bool, chunks: int, seconds: float) -> None:
        repo = self.repos.get(name)
        if repo is not None:
            repo.state = "failed" if failed else "done"
        self.finished_chunks += chunks
        self.finished_seconds += seconds

    def count(self, state: str) -> int:
        return sum(1 for r in self.repos.values() if r.state == state)

    @property
    def elapsed(self) -> float:
        return time.monotonic() - self.started

    @property
    def chunks_per_second(self) -> float:
        running = sum(r.embedded for r in self.repos.values() if r.state == "running")
        elapsed = self.elapsed
        return (self.finished_chunks + running) / elapsed if elapsed > 0 else 0.0

    @property
    def seconds_left(self) -> float | None:
        finished = self.count("done") + self.count("failed")
        if finished == 0:
            return None
        mean = self.finished_seconds / finished
        running = [r for r in self.repos.values() if r.state == "running"]
        now = time.monotonic()
        left_running = sum(max(0.0, mean - (now - (r.started_at or now))) for r in running)
        return (self.count("pending") * mean + left_running) / max(1, self.workers)


__all__ = [
    "ADVANCE",
    "NOTE",
    "PHASE",
    "STARTED",
    "EventChannel",
    "FleetEvent",
    "FleetState",
    "RepoProgress",
    "WorkerProgress",
]
