"""Which repositories a fleet run indexes, under which names, in which order.

Why its own module: the CLI (`woods index A B …`, `--from repos.txt`) and the library
(`woods.build_fleet`) name repositories the same way, and every name problem — two sources with
one name, a name PostgreSQL cannot hold, an unreadable list — is bad input found before any worker
starts (exit 2), not a failure discovered an hour into the run.

A source is `[NAME=]SOURCE`: a directory, or the git URL of a mirror (`file://…`, `ssh://…`,
`git@host:…`, a path ending in `.git`, or a bare repository's directory), which the worker checks
out itself (`woods.fleet.checkout`). NAME defaults to the directory's name (a URL's last segment
without `.git`).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from woods.errors import InputError
from woods.store.pg_connect import REPO_NAME

# URL schemes and shapes git clones from; anything else is a directory path.
_GIT_SCHEMES = ("file://", "ssh://", "git://", "https://", "http://")


@dataclass(frozen=True, slots=True)
class RepoSpec:
    """One repository of a fleet: its collection `name`, the `source` as given, and whether that
    source is a git URL (checked out by the worker) or a directory (indexed where it is)."""

    name: str
    source: str
    git: bool

    @property
    def path(self) -> Path:
        """The directory indexed for a directory source."""
        return Path(self.source)


def is_git_source(source: str) -> bool:
    """A git URL, a path ending in `.git`, or a bare repository's directory (HEAD and objects/
    beside each other, no work tree)."""
    if source.startswith(_GIT_SCHEMES) or (":" in source and "@" in source.split(":", 1)[0]):
        return True
    path = Path(source)
    if source.rstrip("/").endswith(".git"):
        return True
    return path.is_dir() and (path / "HEAD").is_file() and (path / "objects").is_dir() and not (path / ".git").exists()


def default_name(source: str, git: bool) -> str:
    """The name a source gets without `NAME=`: its last path segment (for git, without `.git`;
    a bare mirror's `…/NAME/repo` layout gives NAME)."""
    text = source.rstrip("/") or source
    if git:
        text = text.rsplit(":", 1)[-1] if "://" not in text else text
        segment = text.rsplit("/", 1)[-1]
        if segment.endswith(".git"):
            segment = segment[: -len(".git")]
        if segment in ("repo", "") and "/" in text:
            segment = text.rsplit("/", 2)[-2]
        return segment
    return Path(text).resolve().name


def parse_source(text: str) -> RepoSpec:
    """`[NAME=]SOURCE` → RepoSpec (InputError for an empty source or an invalid name)."""
    raw = text.strip()
    name: str | None = None
    head, sep, rest = raw.partition("=")
    if sep and REPO_NAME.match(head) and rest:
        name, raw = head, rest
    if not raw:
        raise InputError(f"empty repository source in {text!r}; give a directory or a git URL")
    git = is_git_source(raw)
    chosen = name if name is not None else default_name(raw, git)
    if not REPO_NAME.match(chosen):
        raise InputError(
            f"cannot name the repository {raw!r} {chosen!r} (letters, digits, '.', '_' or '-'); "
            f"write it as NAME={raw}"
        )
    return RepoSpec(chosen, raw, git)


def read_repo_list(path: Path) -> list[str]:
    """The sources of a repository list file: one `[NAME=]SOURCE` a line; blank lines and lines
    starting with `#` are skipped. Relative directory paths are taken relative to the file."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"cannot read the repository list {path}: {exc}") from None
    sources = []
    for line in text.splitlines():
        entry = line.strip()
        if not entry or entry.startswith("#"):
            continue
        sources.append(_relative_to(entry, path.parent))
    return sources


def _relative_to(entry: str, base: Path) -> str:
    head, sep, rest = entry.partition("=")
    prefix, source = (f"{head}=", rest) if sep and REPO_NAME.match(head) and rest else ("", entry)
    if is_git_source(source) and not Path(source).exists():
        return entry
    return prefix + (source if os.path.isabs(source) else str(base / source))


def plan_fleet(sources: Iterable[str | os.PathLike[str] | RepoSpec]) -> list[RepoSpec]:
    """The fleet's repositories in the order given, checked: at least one, every directory source
    exists, and no two share a name (their indexes would overwrite each other)."""
    specs = [s if isinstance(s, RepoSpec) else parse_source(os.fspath(s)) for s in sources]
    if not specs:
        raise InputError("no repositories to index; pass directories or git URLs, or --from FILE")
    seen: dict[str, str] = {}
    for spec in specs:
        if spec.name in seen:
            raise InputError(
                f"two repositories are named {spec.name!r} ({seen[spec.name]} and {spec.source}); "
                f"name one of them: NAME={spec.source}"
            )
        seen[spec.name] = spec.source
        if not spec.git:
            if not spec.path.exists():
                raise InputError(f"path not found: {spec.source}")
            if not spec.path.is_dir():
                raise InputError(f"not a directory: {spec.source}; pass a repository directory")
    return specs


def largest_first(specs: Sequence[RepoSpec], sizes: dict[str, int]) -> list[RepoSpec]:
    """Repositories with a known size (the previous run's chunk count) largest first, then the
    rest in the order given: the longest jobs start first, so the run does not end waiting on one
    large repository started last (LPT scheduling)."""
    position = {spec.name: i for i, spec in enumerate(specs)}
    return sorted(specs, key=lambda s: (-sizes.get(s.name, -1), position[s.name]))


__all__ = ["RepoSpec", "is_git_source", "largest_first", "parse_source", "plan_fleet", "read_repo_list"]
