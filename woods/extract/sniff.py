"""Content rules: what a file's own first bytes say about its language when its name does not.

Why a module of its own: the language registry (`registry.py`) points at these rules, and the
registry is read by discovery for every path, so the rules must not pull in any extractor or
grammar. Each rule is a pure function of bytes; no state is shared between files.

- `interpreter(head)`: the program a `#!` first line runs (`#!/usr/bin/env -S bash -e` → `bash`);
  the registry maps it to a language (`Language.interpreters`).
- `c_or_cpp(path, source)`: `.h` is used for both C and C++ (fmtlib's `include/fmt/*.h` are C++).
  A header is C unless its text uses constructs C does not have at the start of a line —
  `namespace x {`, `template <`, `class X`, `public:`/`private:`/`protected:`, `using namespace`,
  `extern "C++"` — or `std::` anywhere. `#ifdef __cplusplus` / `extern "C"` guards, common in C
  headers, are not markers. Discovery still lists such a header as `c` (by its name); it is
  extracted by the C++ extractor, and its units carry language `cpp`.
"""

from __future__ import annotations

import re
from pathlib import PurePosixPath

# Bytes of a file a `#!` line is read from (longer interpreter lines are not real).
SHEBANG_BYTES = 256

# C++-only constructs at the start of a line (see the module docstring). Anchored on a literal
# newline rather than `^` with MULTILINE: the engine then only tries line starts, five times faster.
_CPP_LINE_MARKERS = re.compile(
    rb"\n[ \t]*(?:namespace(?:[ \t]+[A-Za-z_][\w:]*)?[ \t]*\{|template[ \t]*<|class[ \t]+[A-Za-z_]"
    rb"|(?:public|private|protected)[ \t]*:(?!:)|using[ \t]+namespace[ \t]|extern[ \t]+\"C\+\+\")"
)


def interpreter(head: bytes) -> str | None:
    """The program a `#!` first line names (`#!/bin/sh` → `sh`, `#!/usr/bin/env bash` → `bash`,
    `#!/usr/bin/env -S bash -e` → `bash`), or None when `head` has no `#!` line."""
    if not head.startswith(b"#!"):
        return None
    line = head[2:SHEBANG_BYTES].split(b"\n", 1)[0].decode("utf-8", "replace")
    words = line.split()
    if not words:
        return None
    program = _program(words[0])
    if program == "env":  # `env [-S] [-i] [NAME=value …] interpreter`
        rest = [w for w in words[1:] if not w.startswith("-") and "=" not in w]
        program = _program(rest[0]) if rest else ""
    return program or None


def _program(word: str) -> str:
    """The file name of an interpreter path (`/usr/bin/bash` → `bash`)."""
    name = word.rpartition("/")[2]
    if name and name != ".":
        return name
    return PurePosixPath(word).name  # `dir/`, `dir/.`: pathlib drops such endings


def looks_like_cpp(source: bytes) -> bool:
    """Whether a `.h` file's text uses C++-only constructs (see the module docstring)."""
    return b"std::" in source or _CPP_LINE_MARKERS.search(b"\n" + source) is not None


def c_or_cpp(file_path: str, source: bytes) -> str | None:
    """`cpp` for a `.h` file that reads as C++, else None (the file stays C)."""
    return "cpp" if file_path.lower().endswith(".h") and looks_like_cpp(source) else None
