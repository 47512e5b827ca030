"""C++ extraction: namespaces, classes, templates, out-of-line members (the walk is shared with C
in woods/extract/cfamily.py, whose docstring lists the units, identifiers and edges)."""

from __future__ import annotations

from woods.extract import cfamily
from woods.extract.layout import UNKNOWN_LAYOUT, RepositoryLayout
from woods.units import FileExtraction

LANGUAGE = "cpp"
GRAMMAR = "cpp"


def extract(file_path: str, source: bytes, layout: RepositoryLayout = UNKNOWN_LAYOUT) -> FileExtraction:
    """Units of one C++ file (`.cc .cpp .cxx .c++ .hh .hpp .hxx .h++ .ipp .tpp .inl`, and `.h`
    files that read as C++): the file unit first, then definitions in source order."""
    return cfamily.extract(file_path, source, GRAMMAR, LANGUAGE)
