"""C extraction (the walk is shared with C++: woods/extract/cfamily.py lists units, identifiers
and edges).

`.h` is used for both languages; which one reads a header is decided per file from its own bytes
by the registry's content rule (`woods.extract.sniff.c_or_cpp`), before an extractor is chosen: a
`.h` that reads as C++ never reaches this module.
"""

from __future__ import annotations

from woods.extract import cfamily
from woods.extract.layout import UNKNOWN_LAYOUT, RepositoryLayout
from woods.units import FileExtraction

LANGUAGE = "c"
GRAMMAR = "c"


def extract(file_path: str, source: bytes, layout: RepositoryLayout = UNKNOWN_LAYOUT) -> FileExtraction:
    """Units of one C file: the file unit first, then definitions in source order."""
    return cfamily.extract(file_path, source, GRAMMAR, LANGUAGE)
