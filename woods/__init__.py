"""woods — code retrieval for coding assistants.

Kept import-light on purpose: `import woods` (and `woods --help`) must not load torch, FAISS or
tree-sitter grammars; each heavy dependency is imported where it is first needed.
"""

from woods.version import __version__

__all__ = ["Index", "__version__", "build_fleet", "build_index"]


def __getattr__(name: str) -> object:
    if name == "Index":  # the Python API, imported on first use only
        from woods.api import Index

        return Index
    if name == "build_index":
        from woods.api import build_index

        return build_index
    if name == "build_fleet":  # many repositories at once (woods/fleet/, docs/scale.md)
        from woods.fleet import build_fleet

        return build_fleet
    raise AttributeError(f"module 'woods' has no attribute {name!r}")
