"""What only the whole file list can tell an extractor: the repository's layout.

Why a value: a file's units can depend on where it sits in the repository (a Ruby file under a
Rails app's `app/models/` is a model; a Python file under a package is named from its top-level
package). An extractor sees one file, so the index builder computes these facts once per run
from every discovered path and hands the same frozen value to every extractor call — in this
process and in every parse worker. Nothing is registered process-wide, so two indexers in one
process (two `Index.update()` calls on two repositories) never see each other's layout.

`key` fingerprints the layout: cached extractions are reused only while it is unchanged.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import PurePosixPath


def normalize_root(root: str) -> str:
    """A repository-relative directory as "" (the root) or "dir/"."""
    root = root.strip().strip("/")
    return f"{root}/" if root and root != "." else ""


def detect_rails_roots(paths: Iterable[str]) -> frozenset[str]:
    """Rails app roots among repository-relative `paths`: directories holding
    `config/application.rb`, or an `app/` directory with Ruby or ERB files in it."""
    roots: set[str] = set()
    for path in paths:
        # An `app/` dir counts only when it holds Ruby (a JS project's `src/app/` is no Rails app).
        markers = ("config/application.rb", "app/") if path.endswith((".rb", ".erb")) else ("config/application.rb",)
        for marker in markers:
            index = path.find(marker)
            while index != -1:
                if index == 0 or path[index - 1] == "/":
                    roots.add(normalize_root(path[:index]))
                index = path.find(marker, index + 1)
    return frozenset(roots)


def detect_package_dirs(paths: Iterable[str]) -> frozenset[str]:
    """Directories ("" = the root) holding an `__init__.py`/`__init__.pyi` among `paths`."""
    found = set()
    for path in paths:
        pure = PurePosixPath(path)
        if pure.name in ("__init__.py", "__init__.pyi"):
            found.add(pure.parent.as_posix() if str(pure.parent) != "." else "")
    return frozenset(found)


# Bump whenever an extractor's output changes for the same input (new unit types, identifiers, edges):
# cached extractions of an older format are then not reused.
# 3: Python package re-exports keep the imported name; @overload stubs yield the name to the implementation.
# 4: Rust items inside item-wrapping macros (`cfg_rt! { … }`) and `macro_rules!` definitions are units.
# 5: Kotlin and Swift declarations after a stretch the grammar gave up on are recovered (scan.parse_recovering).
# 6: an @overload implementation with nested definitions still owns its name (flask's stream_with_context).
EXTRACTION_FORMAT = 6


@dataclass(frozen=True, slots=True)
class RepositoryLayout:
    """Repository-wide facts extraction depends on, computed once per index run.

    `rails_roots`: Rails app roots, longest first ("" or "dir/"). `python_package_dirs`:
    directories that are Python packages, or None when unknown (a single file extracted on its
    own: names then start at the repository root). The default value knows nothing, which is
    what extracting one file outside an index run means.
    """

    rails_roots: tuple[str, ...] = ()
    python_package_dirs: frozenset[str] | None = None

    @classmethod
    def from_paths(cls, paths: Iterable[str]) -> RepositoryLayout:
        listed = list(paths)
        return cls.of(detect_rails_roots(listed), detect_package_dirs(listed))

    @classmethod
    def of(cls, rails_roots: Iterable[str] = (), python_package_dirs: Iterable[str] | None = None) -> RepositoryLayout:
        roots = tuple(sorted({normalize_root(r) for r in rails_roots}, key=lambda r: (-len(r), r)))
        dirs = None if python_package_dirs is None else frozenset(python_package_dirs)
        return cls(roots, dirs)

    def key(self, version: str) -> str:
        """SHA-256 of the layout and the extractor version: cached extractions need both unchanged."""
        facts = {
            "woods": version,
            "extraction_format": EXTRACTION_FORMAT,
            "rails": sorted(self.rails_roots),
            "python": sorted(self.python_package_dirs) if self.python_package_dirs is not None else None,
        }
        return hashlib.sha256(json.dumps(facts, sort_keys=True).encode()).hexdigest()


# The layout of a lone file: no Rails roots registered (paths with unmistakable Rails segments are
# still recognised), no package directories known.
UNKNOWN_LAYOUT = RepositoryLayout()
