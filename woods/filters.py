"""File filters: which indexed files a question is about — `--glob` and `--lang`, as rg and fd take them.

Why: `--path-prefix` takes whole directories only, so `src/**/*.py` silently matched nothing, and
`--type` is the *unit* kind, not the language people mean by `-t py`. A `FileFilter` selects files
by gitignore-style globs (repeatable; `!` excludes) and by language (a name such as `python` or a
common extension such as `py`); search, status and the MCP tools all take it, and retrieval
applies it before ranking like any other scope (woods/retrieval/scope.py).

Guarantees: a file is selected when it matches at least one positive glob (or none are given),
no `!` glob, and (when languages are given) is in one of them; globs match repository-relative
paths with gitignore's rules (`*.py` at any depth, `src/**/*.py` under `src/`, `tests/` a directory
and everything below it); languages are validated against woods' own table, so a typo is an
`InputError` listing the valid names, never an empty answer. Pure: nothing here reads the index.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from woods.errors import InputError
from woods.errors import UnknownLanguageError as UnknownLanguageError

# Spellings people type for a language that are neither its name nor one of its file extensions.
LANGUAGE_NICKNAMES: dict[str, str] = {
    "golang": "go",
    "c++": "cpp",
    "cxx": "cpp",
    "c#": "csharp",
    "cs": "csharp",
    "shell": "bash",
    "sh": "bash",
    "zsh": "bash",
    "js": "javascript",
    "ts": "typescript",
    "md": "markdown",
    "yml": "yaml",
    "py": "python",
    "rb": "ruby",
    "rs": "rust",
    "kt": "kotlin",
    "hs": "haskell",
    "ex": "elixir",
}


def known_languages() -> tuple[str, ...]:
    """Every language and document kind woods indexes, sorted (what `--lang` accepts by name)."""
    from woods.extract.registry import BY_NAME
    from woods.extract.text import DOCUMENT_KINDS

    return tuple(sorted(set(BY_NAME) | set(DOCUMENT_KINDS)))


def language_named(spelling: str) -> str:
    """The language a `--lang` value means: a name (`python`, `markdown`), a nickname (`golang`)
    or a file extension with or without its dot (`py`, `.tsx`, `yml`); UnknownLanguageError else."""
    from woods.extract import language_for

    text = spelling.strip()
    if not text or "\x00" in text or "/" in text:
        raise UnknownLanguageError(f"--lang takes a language name or extension, got {spelling!r}")
    lowered = text.lower()
    known = known_languages()
    if lowered in known:
        return lowered
    if lowered in LANGUAGE_NICKNAMES:
        return LANGUAGE_NICKNAMES[lowered]
    by_extension = language_for(f"file.{lowered.lstrip('.')}") or language_for(text)
    if by_extension is not None:
        return by_extension
    raise UnknownLanguageError(
        f"unknown language {spelling!r} for --lang; languages: {', '.join(known)} "
        "(file extensions such as py, rb, ts, md work too)"
    )


def _clean_globs(globs: Iterable[str]) -> tuple[str, ...]:
    cleaned: list[str] = []
    for raw in globs:
        if not isinstance(raw, str):
            raise InputError(f"--glob takes text patterns, got {raw!r}")
        pattern = raw.strip()
        body = pattern[1:] if pattern.startswith("!") else pattern
        while body.startswith("./"):
            body = body[2:]
        if not body or "\x00" in body:
            raise InputError(f"--glob {raw!r} is not a pattern; pass e.g. 'src/**/*.py' or '!tests/'")
        cleaned.append(("!" if pattern.startswith("!") else "") + body)
    return tuple(dict.fromkeys(cleaned))


@dataclass(frozen=True, slots=True)
class FileFilter:
    """Globs and languages a file must satisfy (see the module docstring); `matches` decides."""

    globs: tuple[str, ...] = ()
    langs: tuple[str, ...] = ()
    _include: Callable[[str], bool] | None = field(default=None, repr=False, compare=False)
    _exclude: Callable[[str], bool] | None = field(default=None, repr=False, compare=False)

    def matches(self, path: object, language: object = None) -> bool:
        """Whether the file `path` (repository-relative) in `language` is selected. When languages
        are asked for and `language` is None, the language is read from the path's name."""
        if not isinstance(path, str) or not path:
            return False
        if self._include is not None and not self._include(path):
            return False
        if self._exclude is not None and self._exclude(path):
            return False
        if self.langs:
            if language is None:
                from woods.extract import language_for

                language = language_for(path)
            return language in self.langs
        return True

    def to_dict(self) -> dict[str, Any]:
        return {"globs": list(self.globs), "langs": list(self.langs)}


def file_filter(globs: Sequence[str] | None = None, langs: Sequence[str] | None = None) -> FileFilter | None:
    """The filter for `--glob` / `--lang` values, or None when neither is given. InputError for a
    blank pattern or an unknown language."""
    if isinstance(globs, str) or isinstance(langs, str):
        raise InputError("globs and langs are lists of strings")
    patterns = _clean_globs(globs or ())
    languages = tuple(dict.fromkeys(language_named(str(spelling)) for spelling in (langs or ())))
    if not patterns and not languages:
        return None
    include = [p for p in patterns if not p.startswith("!")]
    exclude = [p[1:] for p in patterns if p.startswith("!")]
    return FileFilter(patterns, languages, _spec(include), _spec(exclude))


def _spec(patterns: Sequence[str]) -> Callable[[str], bool] | None:
    if not patterns:
        return None
    import pathspec  # only a filtered question pays for it

    spec = pathspec.GitIgnoreSpec.from_lines(patterns)
    return spec.match_file


__all__ = ["FileFilter", "UnknownLanguageError", "file_filter", "known_languages", "language_named"]
