"""Where a fleet's repositories run: Ray tasks (a local Ray, or a cluster) or local processes.

Why two runners behind one shape: Ray is an extra (`pip install 'woods[ray]'`); without it the
same plan — one job per repository, `workers` at a time, retried when its process dies — runs in
a local process pool, so a laptop needs nothing more and a cluster changes nothing but the runner.

The unit of work is one repository (`woods.fleet.job.index_repository_job`: discover, parse,
embed, publish), run on a Ray actor that loads the embedding models once and keeps them for every
repository it is given. Measured on this machine (bench/README.md, "Fleet"): loading the static
model costs more than a second under load, a batch sent to an actor holding the model took twice
as long as embedding it in place, and shipping a repository's parsed units from file-batch tasks
back to its publishing task costs a quarter of parsing them. So the model goes to the work, not
the work to the model, and a cluster spreads repositories, not files; a repository larger than
one worker's share is parsed by its job's own process pool when given more CPUs
(`parse_workers`).

Guarantees both keep: at most `workers` repositories run at once, in the order given; a job whose
process dies (killed, out of memory, a lost node) is run again, up to `max_retries` times, and
only then reported as failed; `should_stop()` (asked twice a second) starts no further repository
and lets the running ones finish, so every repository ends published, up to date, failed or
interrupted — never half-written (each publish is atomic, `woods.fleet.job`).
"""

from __future__ import annotations

import dataclasses
import importlib
import importlib.util
import logging
import os
import queue
from collections import deque
from collections.abc import Callable, Sequence
from typing import Any, Protocol

from woods.errors import InputError
from woods.fleet.events import FleetEvent
from woods.fleet.job import (
    FleetOptions,
    LoadedModels,
    RepoOutcome,
    failed_unexpectedly,
    index_repository_job,
    interrupted,
    lost,
)
from woods.fleet.plan import RepoSpec

# How long the driver waits for a result before it looks at events and `should_stop` again.
POLL_SECONDS = 0.5
# Ray runs a repository again when its worker dies, up to this many times (Ray's own default for
# tasks): a kill or a lost node is retried; a repository that kills every worker it meets (out of
# memory) is reported failed after that.
DEFAULT_MAX_RETRIES = 3
RAY_INSTALL_HINT = "pip install 'woods[ray]'"


class Sink(Protocol):
    """What a runner reports to the driver as the run goes on."""

    def events(self, events: Sequence[FleetEvent]) -> None: ...

    def outcome(self, outcome: RepoOutcome) -> None: ...


class Runner(Protocol):
    """Runs the fleet's jobs; returns one outcome per repository, in the order given."""

    @property
    def name(self) -> str: ...

    @property
    def workers(self) -> int: ...

    @property
    def address(self) -> str | None: ...

    def run(self, specs: Sequence[RepoSpec], options: FleetOptions, sink: Sink,
            should_stop: Callable[[], bool]) -> list[RepoOutcome]: ...

    def close(self) -> None: ...


def ray_available() -> bool:
    return importlib.util.find_spec("ray") is not None


# -- Ray --------------------------------------------------------------------------------------------


class _Monitor:
    """The Ray actor that collects workers' events until the driver drains them (no CPU of its
    own). Restarted if its process dies; events sent meanwhile are lost, which only thins the
    progress display."""

    def __init__(self) -> None:
        self._events: list[FleetEvent] = []

    def push(self, events: list[FleetEvent]) -> None:
        self._events.extend(events)

    def drain(self) -> list[FleetEvent]:
        events, self._events = self._events, []
        return events


class _RepoWorker:
    """The Ray actor that indexes repositories one after another with models it loads once
    (`LoadedModels`). Ray restarts it when its process dies and runs the call it was on again."""

    def __init__(self, options: FleetOptions) -> None:
        self._models = LoadedModels(options)

    def index(self, spec: RepoSpec, options: FleetOptions, channel: RayChannel) -> RepoOutcome:
        return index_repository_job(spec, options, channel, self._models)


class RayChannel:
    """A worker's event channel to the monitor actor (fire and forget)."""

    def __init__(self, monitor: Any) -> None:
        self._monitor = monitor

    def send(self, events: Sequence[FleetEvent]) -> None:
        self._monitor.push.remote(list(events))


class RayRunner:
    """Repositories on Ray actors (`workers` of them, one CPU each, each loading the embedding
    models once and indexing one repository after another) on a Ray woods starts on this machine
    (all its cores, no dashboard) or on the cluster at `address` (else `RAY_ADDRESS`). A Ray that the
    calling process already started (`ray.init()` before `build_fleet`) is used as it is and left
    running; one started here is shut down by `close()`."""

    name = "ray"

    def __init__(self, workers: int | None, address: str | None, *, max_retries: int = DEFAULT_MAX_RETRIES,
                 temp_dir: str | None = None) -> None:
        if not ray_available():
            raise InputError(f"--ray needs Ray, which is not installed: {RAY_INSTALL_HINT}")
        ray: Any = importlib.import_module("ray")  # typed loosely: parts of its API are untyped

        self._ray = ray
        self._started = False
        address = address or os.environ.get("RAY_ADDRESS") or None
        if not ray.is_initialized():
            try:
                if address:
                    ray.init(address=address, log_to_driver=False, logging_level=logging.WARNING)
                else:
                    ray.init(num_cpus=os.cpu_count() or 1, include_dashboard=False, log_to_driver=False,
                             logging_level=logging.WARNING, _temp_dir=temp_dir)
            except ConnectionError as exc:
                raise InputError(f"cannot join the Ray cluster at {address} ({exc}); check --ray / RAY_ADDRESS") from None
            self._started = True
        self.address = address or "local"
        cpus = int(ray.cluster_resources().get("CPU", 1))
        self.workers = max(1, workers if workers is not None else cpus)
        self.max_retries = max_retries

    def run(self, specs: Sequence[RepoSpec], options: FleetOptions, sink: Sink,
            should_stop: Callable[[], bool]) -> list[RepoOutcome]:
        ray = self._ray
        monitor = ray.remote(num_cpus=0, max_restarts=-1)(_Monitor).remote()
        channel = RayChannel(monitor)
        worker_class = ray.remote(num_cpus=options.parse_workers, max_restarts=self.max_retries,
                                  max_task_retries=self.max_retries)(_RepoWorker)
        idle = [worker_class.remote(options) for _ in range(min(self.workers, len(specs)))]
        pending = deque(specs)
        running: dict[Any, tuple[RepoSpec, Any]] = {}
        outcomes: dict[str, RepoOutcome] = {}
        try:
            while pending or running:
                if should_stop():
                    while pending:
                        spec = pending.popleft()
                        outcomes[spec.name] = interrupted(spec)
                        sink.outcome(outcomes[spec.name])
                while pending and idle:
                    spec, actor = pending.popleft(), idle.pop()
                    running[actor.index.remote(spec, options, channel)] = (spec, actor)
                if not running:
                    break
                ready, _ = ray.wait(list(running), num_returns=1, timeout=POLL_SECONDS)
                sink.events(ray.get(monitor.drain.remote()))
                for ref in ready:
                    spec, actor = running.pop(ref)
                    outcome, alive = self._result(ref, spec)
                    idle.append(actor if alive else worker_class.remote(options))
                    outcomes[spec.name] = outcome
                    sink.outcome(outcome)
            sink.events(ray.get(monitor.drain.remote()))
        except BaseException:
            for _spec, actor in running.values():
                ray.kill(actor)
            raise
        finally:
            for actor in idle:
                ray.kill(actor)
            ray.kill(monitor)
        return [outcomes[spec.name] for spec in specs]

    def _result(self, ref: Any, spec: RepoSpec) -> tuple[RepoOutcome, bool]:
        """The repository's outcome, and whether its worker is still alive to take the next."""
        ray = self._ray
        try:
            outcome: RepoOutcome = ray.get(ref)
            return outcome, True
        except ray.exceptions.RayTaskError as exc:  # raised inside the job (a bug): reported, the worker lives
            reason = (str(exc.cause) or exc.cause.__class__.__name__).splitlines()[0]
            return failed_unexpectedly(spec, f"unexpected {exc.cause.__class__.__name__}: {reason}"), True
        except ray.exceptions.RayError as exc:  # every retry's worker died: reported, the fleet goes on
            reason = (str(exc).strip().splitlines() or [exc.__class__.__name__])[0]
            return lost(spec, self.max_retries + 1, f"{exc.__class__.__name__}: {reason}"), False

    def close(self) -> None:
        if self._started and self._ray.is_initialized():
            self._ray.shutdown()
        self._started = False


# -- local processes --------------------------------------------------------------------------------


class QueueChannel:
    """A worker's event channel to the driver through a multiprocessing manager's queue."""

    def __init__(self, events: Any) -> None:
        self._queue = events

    def send(self, events: Sequence[FleetEvent]) -> None:
        try:
            self._queue.put(list(events))
        except (OSError, EOFError):
            return  # the driver is gone (interrupted): progress is advisory, the job goes on


class ProcessRunner:
    """Repositories in a local process pool (forkserver: workers inherit no threads or locks).
    A dead worker breaks the pool: the repositories it had not finished run again in a new one,
    up to `max_retries` times each. Like any process pool, the calling script needs the
    `if __name__ == "__main__":` guard."""

    name = "processes"
    address = None

    def __init__(self, workers: int | None, *, max_retries: int = DEFAULT_MAX_RETRIES) -> None:
        self.workers = max(1, workers if workers is not None else os.cpu_count() or 1)
        self.max_retries = max_retries

    def run(self, specs: Sequence[RepoSpec], options: FleetOptions, sink: Sink,
            should_stop: Callable[[], bool]) -> list[RepoOutcome]:
        import multiprocessing

        context = multiprocessing.get_context("forkserver")
        outcomes: dict[str, RepoOutcome] = {}
        attempts: dict[str, int] = {spec.name: 0 for spec in specs}
        with context.Manager() as manager:
            events = manager.Queue()
            remaining = list(specs)
            while remaining:
                remaining = self._round(remaining, options, sink, should_stop, context, events, outcomes, attempts)
            self._drain(events, sink)
        return [outcomes[spec.name] for spec in specs]

    def _round(self, specs: list[RepoSpec], options: FleetOptions, sink: Sink, should_stop: Callable[[], bool],
               context: Any, events: Any, outcomes: dict[str, RepoOutcome], attempts: dict[str, int]) -> list[RepoSpec]:
        """One pool's life: run `specs` until all are done or the pool breaks; returns the
        repositories to run again (those a dead worker took down)."""
        from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
        from concurrent.futures.process import BrokenProcessPool

        channel = QueueChannel(events)
        again: list[RepoSpec] = []
        broken = False
        pending = deque(specs)
        pool = ProcessPoolExecutor(self.workers, mp_context=context)
        running: dict[Any, RepoSpec] = {}
        try:
            while pending or running:
                if should_stop():
                    while pending:
                        spec = pending.popleft()
                        outcomes[spec.name] = interrupted(spec, attempts[spec.name])
                        sink.outcome(outcomes[spec.name])
                while pending and len(running) < self.workers:
                    spec = pending.popleft()
                    attempts[spec.name] += 1
                    running[pool.submit(index_repository_job, spec, options, channel)] = spec
                if not running:
                    break
                done, _ = wait(list(running), timeout=POLL_SECONDS, return_when=FIRST_COMPLETED)
                self._drain(events, sink)
                for future in done:
                    spec = running.pop(future)
                    try:
                        outcome: RepoOutcome = future.result()
                    except BrokenProcessPool as exc:
                        broken = True
                        if attempts[spec.name] > self.max_retries:
                            outcome = lost(spec, attempts[spec.name], f"BrokenProcessPool: {exc}")
                        else:
                            again.append(spec)
                            continue
                    outcome = dataclasses.replace(outcome, attempts=attempts[spec.name])
                    outcomes[spec.name] = outcome
                    sink.outcome(outcome)
                if broken:  # the pool is broken: what it still held runs again in a new one
                    again.extend(running.values())
                    again.extend(pending)
                    break
        finally:
            # A broken pool has terminated its workers; waiting on it can hang (CPython 3.11
            # joins a worker it started while breaking), so only a healthy pool is waited for.
            pool.shutdown(wait=not broken, cancel_futures=True)
        return again

    @staticmethod
    def _drain(events: Any, sink: Sink) -> None:
        batch: list[FleetEvent] = []
        while True:
            try:
                batch.extend(events.get_nowait())
            except queue.Empty:
                break
        if batch:
            sink.events(batch)

    def close(self) -> None:
        return None


def make_runner(use_ray: bool | None, workers: int | None, address: str | None, *,
                max_retries: int = DEFAULT_MAX_RETRIES, ray_temp_dir: str | None = None) -> Runner:
    """Ray when asked (`use_ray` True, or an address), or by default when it is installed;
    local processes when asked (`use_ray` False) or when Ray is not installed."""
    if address and use_ray is False:
        raise InputError("a Ray address and use_ray=False contradict each other; pass one")
    if use_ray or address or (use_ray is None and ray_available()):
        return RayRunner(workers, address, max_retries=max_retries, temp_dir=ray_temp_dir)
    return ProcessRunner(workers, max_retries=max_retries)


__all__ = [
    "DEFAULT_MAX_RETRIES",
    "ProcessRunner",
    "RayRunner",
    "Runner",
    "Sink",
    "make_runner",
    "ray_available",
]
