"""Where a Ruby file sits in its Rails app, from the repository layout.

The app root is the longest of the layout's Rails roots (directories holding
`config/application.rb` or an `app/` directory with Ruby in it) that prefixes the path or, without
one, the prefix in front of an unmistakable Rails path segment (`app/<dir>/`, `config/routes.rb`,
`config/initializers/`, `db/migrate/` …). `lib/`, `spec/` and `test/` files are Rails files only
under a known root, because a plain gem has the same directories.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

# Path segments that only a Rails app has: they locate the app root without a known root.
_RAILS_MARKER = re.compile(
    r"(?:^|/)(?=(?:app/[^/]+/|config/(?:routes\.rb$|routes/|application\.rb$|environments/|initializers/)|db/(?:migrate/|schema\.rb$|seeds\.rb$)))"
)


@dataclass(frozen=True)
class RailsPath:
    """Where a file sits in its Rails app: `root` ("" or "dir/") and `rel` (path below the root)."""

    root: str
    rel: str


def locate(file_path: str, roots: Sequence[str] = ()) -> RailsPath | None:
    """The Rails app a file belongs to (`roots` longest first, as `RepositoryLayout` keeps them),
    or None when it is not in one."""
    for root in roots:
        if file_path.startswith(root):
            return RailsPath(root, file_path[len(root) :])
    match = _RAILS_MARKER.search(file_path)
    if match is None:
        return None
    root = file_path[: match.end()]
    return RailsPath(root, file_path[len(root) :])


def is_rake_file(file_path: str) -> bool:
    name = file_path.rsplit("/", 1)[-1]
    return name.endswith(".rake") or name in ("Rakefile", "rakefile", "Rakefile.rb")
