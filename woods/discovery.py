"""Repository discovery: which files under a root woods indexes, and why every other one is skipped.

`discover(root)` walks the tree once with `os.scandir` and an explicit stack (no recursion, so a
500-level tree is fine), honours `.gitignore` / `.woodsignore` at every level plus
`.git/info/exclude`, prunes tool and dependency directories (and the output names `build/`,
`target/`, `tmp/`, `log/` where no ignore file is in effect: `OUTPUT_DIRS`), and never reads more than 8 KiB of a
file (the sniff). Every skipped entry is counted under exactly one reason (see `SKIP_REASONS`);
the result is deterministic: files sorted by path, examples sorted.

What a file is comes from its name first (`name_skip_reason`: binary, lock, minified, generated,
data and translation files; then the language or document kind, else `unsupported`), so most
skipped files are never opened; then its size (`size_skip_reason`, `too_large`); then its first
8 KiB (`head_skip_reason`: a NUL, a generated-file header, minified content). A file the name
leaves open (no extension) is read too, and `woods.extract.language_for(path, head)` may name it
from its content.

Ignore precedence (first decisive match wins, mirroring git): `extra_ignores` (like git's command
line) → the deepest directory's `.gitignore` + `.woodsignore` (the `.woodsignore` lines come after
the `.gitignore` lines, so they win at the same level) → … → the root's → `.git/info/exclude`.
As in git, a file inside an ignored directory cannot be re-included by a negation: the directory is
never entered.

Symlink rule (no duplicates, never out of the root, never into a loop): symlinks are handled after
the real tree is walked, in path order. A symlink is followed only when its target resolves inside
the root. A symlinked *directory* is walked (under the link's path) only when its real directory
was not walked already; if it was, the link is `symlink_loop` when the target is the link's own
directory or an ancestor of it (a real cycle) and `symlink_duplicate` otherwise. A symlinked *file*
is indexed under the link's path only when no indexed file has the same target inode
(`symlink_duplicate` otherwise). The link's own path decides ignore rules and language, so a link
into an ignored directory deliberately exposes that one target.
"""

from __future__ import annotations

import bisect
import errno
import heapq
import os
import re
import stat
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pathspec

from woods.extract import content_may_decide, is_document, language_for
from woods.limits import DEFAULT_MAX_FILE_BYTES

# --- skip reasons ----------------------------------------------------------------------------------
IGNORED_DIR = "ignored_dir"  # a built-in tool/dependency directory, or a virtualenv (pyvenv.cfg)
GITIGNORED = "gitignored"  # matched .gitignore / .woodsignore / .git/info/exclude / extra_ignores
TOO_LARGE = "too_large"  # size > max_file_bytes (decided from stat; the file is never opened)
BINARY = "binary"  # known binary extension, or a NUL byte in the first 8 KiB
UNSUPPORTED = "unsupported"  # no extractor for the path (or is_indexable said no)
UNREADABLE = "unreadable"  # PermissionError / OSError on stat, open, read or directory listing
VANISHED = "vanished"  # deleted between listing and stat/open
SYMLINK_OUTSIDE = "symlink_outside"  # symlink whose target resolves outside the root
SYMLINK_LOOP = "symlink_loop"  # symlink cycle (ELOOP) or a directory link to itself/an ancestor
SYMLINK_DUPLICATE = "symlink_duplicate"  # symlink whose target is already indexed/walked elsewhere
BROKEN_SYMLINK = "broken_symlink"  # symlink whose target does not exist
SYMLINK_NOT_FOLLOWED = "symlink_not_followed"  # any symlink when follow_symlinks=False
BAD_FILENAME = "bad_filename"  # name not representable as UTF-8 (undecodable bytes)
SPECIAL_FILE = "special_file"  # FIFO, socket or device: opening a FIFO would block forever
MINIFIED = "minified"  # `*.min.js` / `*.min.css`, or JS/CSS/JSON/HTML/XML whose first 8 KiB are a few huge lines
LOCK = "lock"  # dependency lock files (package-lock.json, Cargo.lock, go.sum …): resolver output, not code or docs
GENERATED = "generated"  # tool output: known names (*.pb.go, *_pb2.py, *.map, *.snap) or a generated-file header
DATA = "data"  # data, not documents: JSON Lines/GeoJSON, and JSON/XML over 256 KiB, CSV/TSV over 16 KiB
TRANSLATION = "translation"  # non-English catalogs (.po, locales/de.yml) and translated docs (docs/de/ beside docs/en/)

SKIP_REASONS: tuple[str, ...] = (
    IGNORED_DIR, GITIGNORED, TOO_LARGE, BINARY, UNSUPPORTED, UNREADABLE, VANISHED, SYMLINK_OUTSIDE,
    SYMLINK_LOOP, SYMLINK_DUPLICATE, BROKEN_SYMLINK, SYMLINK_NOT_FOLLOWED, BAD_FILENAME, SPECIAL_FILE, MINIFIED,
    LOCK, GENERATED, DATA, TRANSLATION,
)
# Minified bundles are build output checked in by accident (Redmine ships 24 units' worth).
MINIFIED_SUFFIXES: tuple[str, ...] = (".min.js", ".min.mjs", ".min.cjs", ".min.css")

# --- constants -------------------------------------------------------------------------------------
# Directories skipped by name, wherever they appear. An entry with a '/' matches the last components
# of a directory's path (so `vendor/bundle` skips `app/vendor/bundle` but not a plain `vendor`).
# Those also in `OUTPUT_DIRS` are skipped by name only where no ignore file is in effect.
ALWAYS_SKIPPED_DIRS: tuple[str, ...] = (
    ".git",  # git metadata: objects and refs, not source
    ".hg",  # Mercurial metadata
    ".svn",  # Subversion metadata
    ".woods",  # woods' own index output; indexing it would feed the index back into itself
    "node_modules",  # npm/yarn dependencies: third-party code, often 100k+ files
    "vendor/bundle",  # Bundler's `--path vendor/bundle` install: third-party gems
    ".venv",  # Python virtualenv (conventional name)
    "__pycache__",  # CPython bytecode cache
    ".tox",  # tox environments (full virtualenvs)
    ".mypy_cache",  # mypy cache
    ".pytest_cache",  # pytest cache
    ".ruff_cache",  # ruff cache
    "dist",  # build output (sdists, wheels, bundled JS)
    "build",  # build output (setuptools, CRA, Gradle ...)
    "target",  # Rust/Cargo and Maven build output
    "coverage",  # coverage reports (generated HTML/JS)
    "tmp",  # Rails tmp/ (caches, pids, uploads)
    "log",  # Rails log/ (log files)
    ".bundle",  # Bundler config and local installs
    ".next",  # Next.js build output
    ".nuxt",  # Nuxt build output
    ".cache",  # generic tool caches (parcel, gatsby, pip ...)
    "bower_components",  # Bower dependencies: third-party code
    "public/packs",  # Webpacker compiled assets
    ".idea",  # JetBrains project settings
    ".vscode",  # VS Code settings
)

# Names that usually hold build output or run-time files, and sometimes source: clap's builder lives
# in `src/build/`, Go has packages named `log` and `build`. Where a `.gitignore` / `.woodsignore` /
# `.git/info/exclude` is in effect, it says whether such a directory is output (ignored) or source
# (not ignored: indexed); in a tree with no ignore file the name decides. `dist`, `coverage`, `.next`
# … are not among them: they are output even when committed (a JavaScript library's `dist/` build
# duplicates its source).
OUTPUT_DIRS: frozenset[str] = frozenset({"build", "target", "tmp", "log"})

# woods' own output: never entered and, unlike the directories above, not counted as skipped — a
# report of what a repository holds should not list the index woods wrote into it.
UNCOUNTED_DIRS: frozenset[str] = frozenset({".woods"})

# A directory holding this file is a Python virtualenv (covers `env`, `.env`, `py311` ...); the root
# itself is exempt so that pointing woods at a venv on purpose still works.
VIRTUALENV_MARKER = "pyvenv.cfg"

# Extensions treated as binary without opening the file: images, archives, compiled objects, media,
# fonts, databases. Lower-cased; checked before the extractor lookup so reports say *why* precisely.
BINARY_EXTENSIONS: frozenset[str] = frozenset({
    ".png", ".jpg", ".jpeg", ".gif", ".bmp", ".ico", ".webp", ".tif", ".tiff", ".psd",
    ".zip", ".gz", ".tgz", ".bz2", ".xz", ".zst", ".7z", ".rar", ".tar", ".jar", ".war", ".whl", ".gem",
    ".so", ".dylib", ".dll", ".exe", ".o", ".a", ".lib", ".class", ".pyc", ".pyo", ".wasm", ".bin",
    ".pdf", ".mp3", ".mp4", ".mov", ".avi", ".wav", ".ogg", ".flac", ".webm",
    ".woff", ".woff2", ".ttf", ".otf", ".eot",
    ".sqlite", ".sqlite3", ".db", ".pickle", ".pkl", ".npy", ".npz", ".pt", ".onnx", ".safetensors",
})

SNIFF_BYTES = 8192  # git's own heuristic: a NUL in the first 8 KiB means binary

# Lock files: written by package managers, thousands of lines of versions and hashes that match
# every dependency name a query mentions. Exact names, then name endings (lower-cased).
LOCK_FILENAMES: frozenset[str] = frozenset({
    "go.sum", "go.work.sum",  # Go checksums
    "npm-shrinkwrap.json",  # npm's publishable lock
    "package.resolved", "cartfile.resolved",  # SwiftPM, Carthage
})
LOCK_SUFFIXES: tuple[str, ...] = (
    ".lock",  # Cargo, Gemfile, poetry, composer, mix, yarn, Pipfile, flake, uv, pdm, pubspec, Podfile …
    ".lockb",  # bun (binary)
    ".lockfile",  # gradle.lockfile
    ".lock.json", ".lock.hcl",  # NuGet packages.lock.json, Terraform .terraform.lock.hcl
    "-lock.json", "-lock.yaml", "-lock.yml",  # package-lock.json, pnpm-lock.yaml, vcpkg-lock.json
)

# Generated by a tool, recognisable from the name alone (lower-cased endings / beginnings).
GENERATED_SUFFIXES: tuple[str, ...] = (
    ".pb.go", "_pb2.py", "_pb2.pyi", "_pb2_grpc.py", ".pb.h", ".pb.cc", ".pb.swift",  # protobuf/gRPC stubs
    "_pb.js", "_pb.d.ts", "_grpc_pb.js", "_grpc_pb.d.ts",  # protobuf JS stubs
    ".map",  # source maps (app.js.map, site.css.map)
    ".snap",  # Jest snapshots
    ".designer.cs",  # Visual Studio designer output
)
GENERATED_PREFIXES: tuple[str, ...] = ("zz_generated.",)  # Kubernetes code generators (zz_generated.deepcopy.go)
# .NET public-API analyzer baselines: every public signature, one per line, written by the analyzer's fix.
GENERATED_FILENAMES: frozenset[str] = frozenset({"publicapi.shipped.txt", "publicapi.unshipped.txt"})

# A generated-file header: a comment line among the first GENERATED_HEADER_LINES lines of the sniffed
# bytes that carries a strong marker, or one that says "generated" plus one that forbids editing. A
# header that says generated but forbids nothing (Rails' db/schema.rb: "This file is auto-generated
# from the current state of the database") stays indexed: such files are the canonical description.
# Go's rule puts "Code generated … DO NOT EDIT." before the package clause, after any licence text.
GENERATED_HEADER_LINES = 40
_COMMENT_LINE = re.compile(rb"\s*(?:#|//|/\*|\*|--|<!--|;|%|\{\{/\*|\{#)")
_GENERATED_STRONG = re.compile(
    rb"@generated\b|<auto-generated|generated by gnu autoconf|generated automatically by aclocal"
    rb"|generated by automake",
    re.I,
)
_GENERATED_PHRASE = re.compile(rb"\b(?:auto[- ]?generated|automatically generated|machine[- ]generated|generated by"
                               rb"|generated from|code generated|generated with|generated using)\b", re.I)
_EDIT_BAN = re.compile(rb"\b(?:do not edit|don'?t edit|do not modify|must not be edited|should not be edited"
                       rb"|not intended for manual editing|changes (?:to this file )?(?:will|may) be lost"
                       rb"|edits will be lost|manual changes)", re.I)

# Minified text: the sniffed head is at least MINIFIED_MIN_BYTES long and its lines average more than
# MINIFIED_AVERAGE_LINE bytes (hand-written JSON, CSS or HTML averages under 80, a bundle thousands).
# Only for kinds that minifiers produce; a long line in Python or Markdown is just a long line.
MINIFIED_MIN_BYTES = 1024
MINIFIED_AVERAGE_LINE = 300
MINIFIABLE_LANGUAGES: frozenset[str] = frozenset({"javascript", "css", "scss", "less", "json", "html", "xml"})

# Data, not documents: always (by extension), or past a size for kinds that hold both (a 2 KB
# tsconfig.json is configuration, a 2 MB fixtures.json is data; a CSV is a table from a few rows on).
DATA_EXTENSIONS: frozenset[str] = frozenset({".jsonl", ".ndjson", ".geojson", ".topojson"})
DATA_SIZE_LIMITS: dict[str, int] = {"json": 256 * 1024, "xml": 256 * 1024, "csv": 16 * 1024}

# Translation catalogs: every language repeats the same keys, so a query about a label would match
# each of them. Gettext/XLIFF files always; other configuration files inside a translation
# directory when their path names a non-English locale (`config/locales/de.yml`,
# `locales/pt-BR/app.json`, `config/locales/devise.fr.yml`). The English catalog stays indexed —
# it is where a UI string is looked up — so a project without one has its catalogs all skipped.
# Translated documentation likewise: a document below a directory named for a non-English locale
# that has an English sibling (`docs/de/…` beside `docs/en/`, `public/help/fr/…` beside
# `public/help/en/`) is a copy of documentation indexed in English already.
TRANSLATION_EXTENSIONS: frozenset[str] = frozenset({".po", ".pot", ".xlf", ".xliff"})
TRANSLATION_DIRS: frozenset[str] = frozenset({"locale", "locales", "i18n", "l10n", "translations"})
TRANSLATION_LANGUAGES: frozenset[str] = frozenset({"yaml", "json", "properties", "ini", "xml", "toml"})
_LOCALE_TAG = re.compile(r"[a-z]{2}(?:[-_][A-Za-z]{2,4})?")  # ISO 639-1 language, optional script/region
SOURCE_LOCALE = "en"
MAX_EXAMPLES = 5  # example paths kept per skip reason
MAX_WARNINGS = 100  # beyond this, warnings are summarised in one final line
IGNORE_FILES = (".gitignore", ".woodsignore")  # per-directory ignore files, in precedence order
UNKNOWN_LANGUAGE = "unknown"  # language of a file accepted only by a custom `is_indexable`


# --- what a file is, from its name and first bytes --------------------------------------------------
def name_skip_reason(rel: str, language: str | None) -> str | None:
    """The skip reason a file's path decides (binary, lock, minified, generated, data, translation
    — in that order), or None. `language` is what `language_for(rel)` says."""
    name = rel.rsplit("/", 1)[-1].lower()
    extension = os.path.splitext(name)[1]
    if extension in BINARY_EXTENSIONS:
        return BINARY
    if name in LOCK_FILENAMES or name.endswith(LOCK_SUFFIXES):
        return LOCK
    if name.endswith(MINIFIED_SUFFIXES):
        return MINIFIED
    if name in GENERATED_FILENAMES or name.endswith(GENERATED_SUFFIXES) or name.startswith(GENERATED_PREFIXES):
        return GENERATED
    if extension in DATA_EXTENSIONS:
        return DATA
    if extension in TRANSLATION_EXTENSIONS or (language in TRANSLATION_LANGUAGES and _foreign_catalog(rel)):
        return TRANSLATION
    return None


def _foreign_catalog(rel: str) -> bool:
    """A path inside a translation directory that names a locale, none of them English."""
    parts = rel.split("/")
    for index, part in enumerate(parts[:-1]):
        if part.lower() in TRANSLATION_DIRS:
            names = [*parts[index + 1 : -1], *parts[-1].split(".")[:-1]]
            tags = [name for name in names if _LOCALE_TAG.fullmatch(name)]
            return bool(tags) and not any(tag[:2] == SOURCE_LOCALE for tag in tags)
    return False


def _is_source_locale(name: str) -> bool:
    return _LOCALE_TAG.fullmatch(name) is not None and name[:2] == SOURCE_LOCALE


def _translated_copy(rel: str, english_parents: set[str]) -> bool:
    """A path below a non-English locale directory whose parent also holds an English one."""
    parts = rel.split("/")[:-1]
    for index, part in enumerate(parts):
        if _LOCALE_TAG.fullmatch(part) and part[:2] != SOURCE_LOCALE and "/".join(parts[:index]) in english_parents:
            return True
    return False


def size_skip_reason(language: str | None, size: int) -> str | None:
    """DATA when a file of `language` is larger than that kind's data threshold, else None."""
    limit = DATA_SIZE_LIMITS.get(language or "")
    return DATA if limit is not None and size > limit else None


def head_skip_reason(language: str | None, head: bytes) -> str | None:
    """The skip reason the first bytes decide: binary (a NUL), generated (a header marker),
    minified (a minifiable kind whose lines are huge), or None."""
    if b"\0" in head:
        return BINARY
    if is_generated_header(head):
        return GENERATED
    if language in MINIFIABLE_LANGUAGES and len(head) >= MINIFIED_MIN_BYTES \
            and len(head) / (head.count(b"\n") + 1) > MINIFIED_AVERAGE_LINE:
        return MINIFIED
    return None


def is_generated_header(head: bytes) -> bool:
    """Whether the comment lines among the first GENERATED_HEADER_LINES say the file is generated."""
    said_generated = forbids_edits = False
    for line in head.split(b"\n", GENERATED_HEADER_LINES)[:GENERATED_HEADER_LINES]:
        if not _COMMENT_LINE.match(line):
            continue
        if _GENERATED_STRONG.search(line):
            return True
        said_generated = said_generated or _GENERATED_PHRASE.search(line) is not None
        forbids_edits = forbids_edits or _EDIT_BAN.search(line) is not None
        if said_generated and forbids_edits:
            return True
    return False


# --- public types ----------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class DiscoveredFile:
    """One file to index. `path` is root-relative with '/' separators (a symlink's own path when it
    was reached through a link); `size`/`mtime_ns` describe the target; `language` is the extractor
    key from `woods.extract.language_for` (or "unknown" when only a custom `is_indexable` accepted it).
    """

    path: str
    abs_path: Path
    size: int
    mtime_ns: int
    language: str


@dataclass
class DiscoveryResult:
    """Everything one walk found: files sorted by path, and a count (with up to 5 sorted example
    paths) for every skipped entry, keyed by the reasons in `SKIP_REASONS`. A skipped directory counts
    once; its contents are not counted. `warnings` are human-readable problems worth surfacing
    (unreadable directories, unreadable or invalid ignore files)."""

    files: list[DiscoveredFile] = field(default_factory=list)
    skipped: Counter[str] = field(default_factory=Counter)
    skipped_examples: dict[str, list[str]] = field(default_factory=dict)
    languages: Counter[str] = field(default_factory=Counter)
    warnings: list[str] = field(default_factory=list)


# --- ignore rules ----------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class _IgnoreLayer:
    """Compiled rules of one directory; `base` is that directory's root-relative path ('' = root)."""

    base: str
    spec: pathspec.GitIgnoreSpec


def _build_spec(patterns: Sequence[str]) -> pathspec.GitIgnoreSpec:
    # GitIgnoreSpec (pathspec >= 0.10; the dependency floor is 0.12) implements git's exact
    # negation/directory semantics.
    return pathspec.GitIgnoreSpec.from_lines(patterns)


def valid_ignore_lines(lines: Sequence[str], source: str, warnings: list[str]) -> list[str]:
    """The lines of one ignore file that compile; invalid ones are dropped with a warning naming
    `source` and the line number (git silently ignores them)."""
    cleaned = [line.lstrip("\ufeff") if i == 0 else line for i, line in enumerate(lines)]
    try:
        _build_spec(cleaned)
    except ValueError:
        good: list[str] = []
        for lineno, line in enumerate(cleaned, start=1):
            try:
                _build_spec([line])
            except ValueError:
                warnings.append(f"{source}:{lineno}: invalid ignore pattern {line!r} dropped")
            else:
                good.append(line)
        return good
    return cleaned


def compile_ignore_lines(lines: Sequence[str], source: str, warnings: list[str]) -> pathspec.GitIgnoreSpec | None:
    """Compile gitignore-syntax lines (invalid ones dropped with a warning); None when no rule remains."""
    spec = _build_spec(valid_ignore_lines(lines, source, warnings))
    return spec if len(spec) else None


def _decide(layers: Sequence[_IgnoreLayer], target: str) -> bool | None:
    """True = ignored, False = re-included by a negation, None = no rule matched. Deepest first."""
    for layer in reversed(layers):
        base = layer.base
        sub = target[len(base) + 1:] if base else target
        include = layer.spec.check_file(sub).include
        if include is not None:
            return include
    return None


def _read_lines(path: str) -> list[str]:
    with open(path, "rb") as handle:
        return handle.read().decode("utf-8", "replace").splitlines()


def _git_exclude_path(root: str) -> str | None:
    """`.git/info/exclude` of the repository at `root`, following a `.git` file (worktree/submodule)."""
    dot_git = os.path.join(root, ".git")
    if os.path.isdir(dot_git):
        return os.path.join(dot_git, "info", "exclude")
    if not os.path.isfile(dot_git):
        return None
    try:
        first = _read_lines(dot_git)[0].strip()
    except (OSError, IndexError):
        return None
    if not first.startswith("gitdir:"):
        return None
    git_dir = os.path.join(root, first[len("gitdir:"):].strip())
    try:  # linked worktrees keep info/exclude in the common directory
        common = _read_lines(os.path.join(git_dir, "commondir"))[0].strip()
        git_dir = os.path.join(git_dir, common)
    except (OSError, IndexError):
        pass
    return os.path.join(git_dir, "info", "exclude")


# --- the walk --------------------------------------------------------------------------------------
def _join(rel_dir: str, name: str) -> str:
    return f"{rel_dir}/{name}" if rel_dir else name


def _display_name(name: str) -> str:
    """A printable spelling of a (possibly undecodable) file name for examples and warnings."""
    return os.fsencode(name).decode("utf-8", "backslashreplace")


def _is_utf8(name: str) -> bool:
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:  # surrogate-escaped bytes from os.fsdecode
        return False
    return True


def _is_within(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


@dataclass(slots=True)
class _Frame:
    """A directory waiting to be listed."""

    abs_dir: str
    rel_dir: str
    layers: tuple[_IgnoreLayer, ...]
    via_link: bool  # reached through a followed symlink: dedupe its files by inode


@dataclass(order=True, slots=True)
class _PendingLink:
    """A symlink seen during the walk, resolved after the real tree (ordered by path)."""

    rel: str
    abs_path: str = field(compare=False)
    layers: tuple[_IgnoreLayer, ...] = field(compare=False)


class _Walker:
    """Mutable state of one `discover` call."""

    def __init__(
        self,
        root: str,
        *,
        max_file_bytes: int,
        extra: _IgnoreLayer | None,
        is_indexable: Callable[[str], bool] | None,
        follow_symlinks: bool,
        on_file: Callable[[int], object] | None,
        skip_dirs: Sequence[str],
    ) -> None:
        self.root = root
        self.root_real = os.path.realpath(root)
        self.max_file_bytes = max_file_bytes
        self.extra = extra
        self.is_indexable = is_indexable
        self.follow_symlinks = follow_symlinks
        self.on_file = on_file
        self.skip_names = frozenset(d for d in skip_dirs if "/" not in d)
        self.skip_suffixes = tuple("/" + d.strip("/") for d in skip_dirs if "/" in d)
        self.result = DiscoveryResult()
        self.examples: dict[str, list[str]] = {}
        self.visited_dirs: set[tuple[int, int]] = set()
        self.indexed_inodes: set[tuple[int, int]] = set()
        self.stack: list[_Frame] = []
        self.english_parents: set[str] = set()  # directories with an English locale subdirectory
        self.links: list[_PendingLink] = []  # a heap: resolved in path order
        self.dropped_warnings = 0

    # -- bookkeeping --
    def skip(self, reason: str, rel: str) -> None:
        self.result.skipped[reason] += 1
        examples = self.examples.setdefault(reason, [])  # the MAX_EXAMPLES smallest paths, sorted
        if len(examples) < MAX_EXAMPLES or rel < examples[-1]:
            bisect.insort(examples, rel)
            del examples[MAX_EXAMPLES:]

    def warn(self, message: str) -> None:
        if len(self.result.warnings) < MAX_WARNINGS:
            self.result.warnings.append(message)
        else:
            self.dropped_warnings += 1

    def ignored(self, layers: Sequence[_IgnoreLayer], rel: str, is_dir: bool) -> bool:
        target = rel + "/" if is_dir else rel
        if self.extra is not None:
            include = self.extra.spec.check_file(target).include
            if include is not None:
                return include
        return _decide(layers, target) is True

    def is_skipped_dir(self, name: str, rel: str, governed: bool) -> bool:
        """Whether the directory is skipped by its name; `governed`: an ignore file is in effect,
        which then decides for the `OUTPUT_DIRS` names."""
        if name in self.skip_names:
            return not (governed and name in OUTPUT_DIRS)
        suffix = next((s for s in self.skip_suffixes if ("/" + rel).endswith(s)), None)
        return suffix is not None and not (governed and suffix[1:] in OUTPUT_DIRS)

    # -- directories --
    def load_layers(self, abs_dir: str, rel_dir: str, names: set[str],
                    layers: tuple[_IgnoreLayer, ...]) -> tuple[_IgnoreLayer, ...]:
        lines: list[str] = []  # .gitignore first, then .woodsignore: later lines win at one level
        problems: list[str] = []
        for ignore_name in IGNORE_FILES:
            if ignore_name not in names:
                continue
            source = _join(rel_dir, ignore_name)
            try:
                lines.extend(valid_ignore_lines(_read_lines(os.path.join(abs_dir, ignore_name)), source, problems))
            except OSError as exc:
                problems.append(f"cannot read {source}: {exc.strerror or exc}")
        for problem in problems:
            self.warn(problem)
        spec = _build_spec(lines)
        return (*layers, _IgnoreLayer(rel_dir, spec)) if len(spec) else layers

    def list_dir(self, frame: _Frame) -> list[os.DirEntry[str]] | None:
        try:
            with os.scandir(frame.abs_dir) as iterator:
                entries = list(iterator)
        except FileNotFoundError:
            self.skip(VANISHED, frame.rel_dir or ".")
            return None
        except OSError as exc:
            self.skip(UNREADABLE, frame.rel_dir or ".")
            self.warn(f"cannot list {frame.rel_dir or '.'}: {exc.strerror or exc}")
            return None
        entries.sort(key=lambda entry: entry.name)
        return entries

    def walk_dir(self, frame: _Frame) -> None:
        entries = self.list_dir(frame)
        if entries is None:
            return
        names = {entry.name for entry in entries}
        if frame.rel_dir and VIRTUALENV_MARKER in names:
            self.skip(IGNORED_DIR, frame.rel_dir)
            return
        if any(_is_source_locale(entry.name) and entry.is_dir() for entry in entries):
            self.english_parents.add(frame.rel_dir)
        layers = frame.layers
        if not names.isdisjoint(IGNORE_FILES):
            layers = self.load_layers(frame.abs_dir, frame.rel_dir, names, layers)
        subdirs: list[_Frame] = []
        for entry in entries:
            name = entry.name
            rel = _join(frame.rel_dir, name)
            if not _is_utf8(name):
                self.skip(BAD_FILENAME, _join(frame.rel_dir, _display_name(name)))
                continue
            if entry.is_symlink():
                heapq.heappush(self.links, _PendingLink(rel, entry.path, layers))
            elif entry.is_dir(follow_symlinks=False):
                child = self.enter_real_dir(entry, name, rel, layers, frame.via_link)
                if child is not None:
                    subdirs.append(child)
            else:
                self.consider_file(entry.path, rel, layers, None, via_link=frame.via_link)
        self.stack.extend(reversed(subdirs))

    def enter_real_dir(self, entry: os.DirEntry[str], name: str, rel: str,
                       layers: tuple[_IgnoreLayer, ...], via_link: bool) -> _Frame | None:
        if name in UNCOUNTED_DIRS and name in self.skip_names:
            return None
        if self.is_skipped_dir(name, rel, governed=bool(layers)):
            self.skip(IGNORED_DIR, rel)
            return None
        if self.ignored(layers, rel, is_dir=True):
            self.skip(GITIGNORED, rel)
            return None
        try:
            st = os.stat(entry.path, follow_symlinks=False)
        except FileNotFoundError:
            self.skip(VANISHED, rel)
            return None
        except OSError:
            self.skip(UNREADABLE, rel)
            return None
        key = (st.st_dev, st.st_ino)
        if key in self.visited_dirs:  # only via bind mounts: a real directory seen twice
            self.skip(SYMLINK_LOOP, rel)
            return None
        self.visited_dirs.add(key)
        return _Frame(entry.path, rel, layers, via_link)

    # -- files --
    def consider_file(self, abs_path: str, rel: str, layers: Sequence[_IgnoreLayer],
                      st: os.stat_result | None, *, via_link: bool) -> None:
        """Apply the file checks in order; `st` is the already-followed stat of a symlinked file.

        Name first (ignore rules, then `name_skip_reason`, then the language), so most skipped
        files are never opened; then stat (size, `size_skip_reason`); then the first SNIFF_BYTES
        (`head_skip_reason`, and the language of a file only its content can name)."""
        if st is None and self.ignored(layers, rel, is_dir=False):
            self.skip(GITIGNORED, rel)
            return
        language = language_for(rel)
        reason = name_skip_reason(rel, language)
        if reason is None and language is not None and is_document(language) \
                and _translated_copy(rel, self.english_parents):
            reason = TRANSLATION
        if reason is not None:
            self.skip(reason, rel)
            return
        if self.is_indexable is not None:
            accepted = self.is_indexable(rel)
        else:
            accepted = language is not None or content_may_decide(rel)
        if not accepted:
            self.skip(UNSUPPORTED, rel)
            return
        if st is None:
            try:
                st = os.stat(abs_path)
            except FileNotFoundError:
                self.skip(VANISHED, rel)
                return
            except OSError:
                self.skip(UNREADABLE, rel)
                return
        if not stat.S_ISREG(st.st_mode):
            self.skip(SPECIAL_FILE, rel)
            return
        inode = (st.st_dev, st.st_ino)
        if via_link and inode in self.indexed_inodes:
            self.skip(SYMLINK_DUPLICATE, rel)
            return
        reason = size_skip_reason(language, st.st_size)
        if reason is None and st.st_size > self.max_file_bytes:
            reason = TOO_LARGE
        if reason is not None:
            self.skip(reason, rel)
            return
        head = self.sniff(abs_path)
        if isinstance(head, str):
            self.skip(head, rel)
            return
        reason = head_skip_reason(language, head)
        if reason is not None:
            self.skip(reason, rel)
            return
        if language is None:
            language = language_for(rel, head)
            if language is None and self.is_indexable is None:
                self.skip(UNSUPPORTED, rel)
                return
        self.indexed_inodes.add(inode)
        lang = language or UNKNOWN_LANGUAGE
        self.result.files.append(DiscoveredFile(rel, Path(abs_path), st.st_size, st.st_mtime_ns, lang))
        self.result.languages[lang] += 1
        if self.on_file is not None:
            self.on_file(len(self.result.files))

    @staticmethod
    def sniff(abs_path: str) -> bytes | str:
        """The first SNIFF_BYTES of the file, or the skip reason when it cannot be read."""
        try:
            with open(abs_path, "rb", buffering=0) as handle:
                return handle.read(SNIFF_BYTES)
        except FileNotFoundError:
            return VANISHED
        except OSError:
            return UNREADABLE

    # -- symlinks --
    def resolve_link(self, link: _PendingLink) -> None:
        rel = link.rel
        if self.ignored(link.layers, rel, is_dir=False):
            self.skip(GITIGNORED, rel)
            return
        if not self.follow_symlinks:
            self.skip(SYMLINK_NOT_FOLLOWED, rel)
            return
        try:
            st = os.stat(link.abs_path)
        except FileNotFoundError:
            self.skip(BROKEN_SYMLINK, rel)
            return
        except OSError as exc:
            self.skip(SYMLINK_LOOP if exc.errno == errno.ELOOP else UNREADABLE, rel)
            return
        real = os.path.realpath(link.abs_path)
        if not _is_within(real, self.root_real):
            self.skip(SYMLINK_OUTSIDE, rel)
            return
        if not stat.S_ISDIR(st.st_mode):
            self.consider_file(link.abs_path, rel, link.layers, st, via_link=True)
            return
        name = rel.rsplit("/", 1)[-1]
        if name in UNCOUNTED_DIRS and name in self.skip_names:
            return
        if self.is_skipped_dir(name, rel, governed=bool(link.layers)):
            self.skip(IGNORED_DIR, rel)
            return
        if self.ignored(link.layers, rel, is_dir=True):
            self.skip(GITIGNORED, rel)
            return
        key = (st.st_dev, st.st_ino)
        if key in self.visited_dirs:
            parent_real = os.path.realpath(os.path.dirname(link.abs_path))
            self.skip(SYMLINK_LOOP if _is_within(parent_real, real) else SYMLINK_DUPLICATE, rel)
            return
        self.visited_dirs.add(key)
        self.stack.append(_Frame(link.abs_path, rel, link.layers, via_link=True))

    # -- driver --
    def run(self, root_layers: tuple[_IgnoreLayer, ...]) -> DiscoveryResult:
        try:
            root_stat = os.stat(self.root)
        except OSError as exc:
            raise FileNotFoundError(f"repository root {self.root!r} is not accessible: {exc}") from exc
        if not stat.S_ISDIR(root_stat.st_mode):
            raise NotADirectoryError(f"repository root {self.root!r} is not a directory")
        self.visited_dirs.add((root_stat.st_dev, root_stat.st_ino))
        self.stack.append(_Frame(self.root, "", root_layers, via_link=False))
        while True:
            while self.stack:
                self.walk_dir(self.stack.pop())
            if not self.links:
                break
            self.resolve_link(heapq.heappop(self.links))
        return self.finish()

    def finish(self) -> DiscoveryResult:
        result = self.result
        result.files.sort(key=lambda f: f.path)  # paths are unique: no tie to break
        result.skipped_examples = dict(sorted(self.examples.items()))
        if self.dropped_warnings:
            result.warnings.append(f"... {self.dropped_warnings} more warnings not shown")
        return result


def discover(
    root: str | os.PathLike[str],
    *,
    max_file_bytes: int = DEFAULT_MAX_FILE_BYTES,
    extra_ignores: Sequence[str] = (),
    is_indexable: Callable[[str], bool] | None = None,
    follow_symlinks: bool = True,
    on_file: Callable[[int], object] | None = None,
    skip_dirs: Sequence[str] = ALWAYS_SKIPPED_DIRS,
) -> DiscoveryResult:
    """Find the files under `root` that woods should index (see the module docstring for the rules).

    `extra_ignores` are gitignore-syntax lines relative to the root with the highest precedence.
    `is_indexable(path)` replaces the "has an extractor" test. `on_file(n)` is called after each
    accepted file with the running count. `skip_dirs` replaces `ALWAYS_SKIPPED_DIRS` (e.g. to index a
    Go package named `log`). Raises FileNotFoundError / NotADirectoryError for a bad root.
    """
    if max_file_bytes < 0:
        raise ValueError("max_file_bytes must be >= 0")
    root_abs = os.path.abspath(os.fspath(root))
    warnings: list[str] = []
    extra_spec = compile_ignore_lines(list(extra_ignores), "extra_ignores", warnings) if extra_ignores else None
    root_layers: tuple[_IgnoreLayer, ...] = ()
    exclude_path = _git_exclude_path(root_abs)
    if exclude_path is not None and os.path.isfile(exclude_path):
        try:
            spec = compile_ignore_lines(_read_lines(exclude_path), ".git/info/exclude", warnings)
        except OSError as exc:
            warnings.append(f"cannot read .git/info/exclude: {exc.strerror or exc}")
        else:
            if spec is not None:
                root_layers = (_IgnoreLayer("", spec),)
    walker = _Walker(
        root_abs,
        max_file_bytes=max_file_bytes,
        extra=None if extra_spec is None else _IgnoreLayer("", extra_spec),
        is_indexable=is_indexable,
        follow_symlinks=follow_symlinks,
        on_file=on_file,
        skip_dirs=skip_dirs,
    )
    walker.result.warnings.extend(warnings)
    return walker.run(root_layers)
