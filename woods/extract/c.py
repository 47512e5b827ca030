"""C extraction, and the `.h` decision: a header is C unless its text reads as C++.

`.h` is used for both languages (fmtlib's `include/fmt/*.h` are C++). Which grammar parses a header
is decided per file from its own bytes, with no state shared between files: `looks_like_cpp`
searches for constructs C does not have at the start of a line — `namespace x {`, `template <`,
`class X`, `public:`/`private:`/`protected:`, `using namespace`, `extern "C++"` — or `std::`
anywhere. `#ifdef __cplusplus` / `extern "C"` guards, common in C headers, are not markers. A `.h`
that reads as C++ is extracted by woods/extract/cpp.py and its units carry language "cpp".

The walk itself is shared with C++ (woods/extract/cfamily.py lists units, identifiers, edges).
"""

from __future__ import annotations

import re

from woods.extract import cfamily
from woods.extract.layout import UNKNOWN_LAYOUT, RepositoryLayout
from woods.units import FileExtraction

LANGUAGE = "c"
GRAMMAR = "c"

# C++-only constructs at the start of a line (see the module docstring). Anchored on a literal
# newline rather than `^` with MULTILINE: the engine then only tries line starts, five times faster.
_CPP_LINE_MARKERS = re.compile(
    rb"\n[ \t]*(?:namespace(?:[ \t]+[A-Za-z_][\w:]*)?[ \t]*\{|template[ \t]*<|class[ \t]+[A-Za-z_]"
    rb"|(?:public|private|protected)[ \t]*:(?!:)|using[ \t]+namespace[ \t]|extern[ \t]+\"C\+\+\")"
)


def looks_like_cpp(source: bytes) -> bool:
    """Whether a `.h` file's text uses C++-only constructs (see the module docstring)."""
    return b"std::" in source or _CPP_LINE_MARKERS.search(b"\n" + source) is not None


def extract(file_path: str, source: bytes, layout: RepositoryLayout = UNKNOWN_LAYOUT) -> FileExtraction:
    """Units of one C file; a `.h` file that reads as C++ is handed to the C++ extractor."""
    if file_path.lower().endswith(".h") and looks_like_cpp(source):
        from woods.extract import cpp

        return cpp.extract(file_path, source, layout)
    return cfamily.extract(file_path, source, GRAMMAR, LANGUAGE)
