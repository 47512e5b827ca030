"""Indexing a fleet of repositories into one store, in parallel, on Ray or in local processes.

`build_fleet` (woods/fleet/build.py) is the entry point; `woods index A B … --store URL` renders
it. Modules: `plan` (which repositories, named how), `job` (one repository inside a worker),
`runners` (Ray tasks or a process pool), `events` (progress from workers), `report` (the text the
CLI shows). docs/scale.md tells how to run it on a cluster and what it costs.
"""

from woods.fleet.build import FleetProgress, FleetSummary, build_fleet
from woods.fleet.events import FleetEvent, FleetState
from woods.fleet.job import RepoOutcome
from woods.fleet.plan import RepoSpec, parse_source, read_repo_list

__all__ = [
    "FleetEvent",
    "FleetProgress",
    "FleetState",
    "FleetSummary",
    "RepoOutcome",
    "RepoSpec",
    "build_fleet",
    "parse_source",
    "read_repo_list",
]
