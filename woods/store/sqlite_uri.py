"""SQLite URIs for files at any path.

Why: readers open published databases as `file:PATH?mode=ro&immutable=1`. In a URI, `?` starts
the parameters, `#` the fragment and `%` an escape, so a repository at `~/code/proj#1` or in a
folder named `C#` was opened at the cut-off path `~/code/proj` — SQLite then reported a missing
table, or created a stray empty file there. Every reader builds its URI here, with the path
percent-encoded (SQLite decodes `%HH` back to the path's UTF-8 bytes).
"""

from __future__ import annotations

from pathlib import Path
from urllib.parse import quote


def sqlite_uri(path: Path, *, immutable: bool = True) -> str:
    """A read-only `file:` URI for `path` (absolute, escaped); `immutable` promises SQLite that no
    one writes the file while it is open (published generations), so it takes no locks."""
    escaped = quote(Path(path).absolute().as_posix(), safe="/")
    return f"file:{escaped}?mode=ro" + ("&immutable=1" if immutable else "")
