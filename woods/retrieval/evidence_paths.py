"""File paths as pasted text writes them, and how to match them against repository-relative paths.

Why: a stack trace names files the way the machine that crashed saw them —
`/home/ci/.venv/lib/python3.12/site-packages/pkg/mod.py`, `C:\\Users\\me\\app\\src\\x.ts`,
`webpack-internal:///./src/x.tsx?v=3`, `[PROJECT_ROOT]/app/models/user.rb` — while the index holds
`pkg/mod.py`. Nobody knows where the repository root was on that machine, so a pasted path is
matched by its suffixes: `path_suffixes` strips what surely is not the project (home directories,
package caches, virtualenvs, build servers' checkouts) and lists every segment suffix of the rest,
longest first, for the caller to test with `repo_path == suffix or repo_path.endswith("/" + suffix)`.
`is_library_location` says whether a frame's file belongs to a dependency or the runtime rather
than to the code being debugged.

Guarantees: pure functions of their arguments; linear in the input; never raise on any string.
"""

from __future__ import annotations

import re

# Longer paths are data (a minified bundle's inline source map, a base64 blob), not a location.
MAX_PATH_CHARS = 512

_SCHEMES = re.compile(r"^(?:webpack-internal|webpack|vite|rollup|app|res|chrome-extension|moz-extension):/*(?:[^/]*?/(?=\.))?")
_HTTP = re.compile(r"^https?://[^/\s]{1,253}")
# Placeholders error trackers put where the project root was (Honeybadger, Airbrake, Rollbar …).
_ROOT_PLACEHOLDER = re.compile(r"^(?:\[(?:PROJECT_ROOT|project_root|app|APP_ROOT|RAILS_ROOT)\](?:\.\.\.)?|\.\.\.)/?")
_BUNDLE_PLACEHOLDER = re.compile(r"^\[(?:bundle|gem|GEM_ROOT|BUNDLE_PATH)\](?:\.\.\.)?/?")

# Where a dependency's or the runtime's own files live. Matched on the normalised path.
_LIBRARY_DIRS = re.compile(
    r"(?:^|/)(?:site-packages|dist-packages|node_modules|bower_components|jspm_packages|vendor|vendors|"
    r"gems|\.gem|\.bundle|\.rbenv|\.rvm|\.rustup|\.cargo|cargo/registry|cargo/git|rustlib|"
    r"pkg/mod|\.m2|\.gradle|\.nuget|\.ivy2|\.sbt|\.pyenv|\.venv|venv|virtualenvs|\.tox|\.nox|"
    r"lib/python\d[\d.]*|lib/ruby|python\d\d?(?:\.\d+)?/lib|dist/compiled|"
    # an installed package's versioned directory (`bootsnap-1.26.0/lib/…`, as error trackers shorten gems)
    r"[A-Za-z][\w.]*-\d+\.\d+[\w.]*/(?:lib|exe|bin|app|src|ext)|"
    r"usr/lib|usr/local/lib|usr/share|usr/include|System/Library|Library/Frameworks|"
    r"Microsoft\.NET|dotnet/shared|jdk[\w.-]*|jre[\w.-]*)/",
    re.IGNORECASE,
)
# A Go toolchain's own sources: GOROOT/src/<pkg> where the first package segment has no dot
# (`/usr/local/go/src/os/exec/exec.go`); GOPATH sources start with a domain (`go/src/github.com/…`).
# Bundles that are a library's build (minified, or React's development builds) and Vite's
# pre-bundled dependencies (`react-dom_client.js?v=133f250e`): a browser console names them bare.
_LIBRARY_BUNDLE = re.compile(r"\.(?:min|development|production|prod|umd)(?:\.min)?\.m?js(?:$|\?)|\?v=[0-9a-f]{6,}$")
_GO_ROOT = re.compile(r"(?:^|/)go(?:[\d.]*|/[\d.]+)?/src/[a-z0-9_]+(?:/|\.go$)|(?:^|/)(?:src/)?runtime/[\w.-]+\.go$")
_RUNTIME_PREFIX = re.compile(
    r"^(?:<|node:|internal/|/rustc/|rustc/|\[native code\]|native$|\(native\)|\[internal function\]|"
    r"/_/|/build/glibc|/usr/src/|/System/|/Library/Developer/|bootstrap_node\.js|"
    r"(?:node|module|events|timers|net|fs|vm|util|stream|_stream_\w+|http|https|child_process|"
    r"domain|assert|bootstrap_node)\.js$)"
)

# Prefixes that surely sit above a project root, each behind a substring that must be present for
# the pattern to be tried (cheap, and keeps the lazy patterns off paths they cannot match).
_ABOVE_PROJECT: tuple[tuple[str, re.Pattern[str]], ...] = (
    # a package inside a dependency cache: everything up to the package's own directory goes
    ("-packages/", re.compile(r"^(?:.*?/)?(?:site-packages|dist-packages)/")),
    ("node_modules/", re.compile(r"^(?:.*?/)?node_modules/(?:@[^/]+/)?[^/]+/")),
    ("gems/", re.compile(r"^(?:.*?/)?gems/[^/]+?-\d[^/]*/")),
    ("registry/src/", re.compile(r"^.*?/(?:\.cargo/registry/src|cargo/registry/src)/[^/]+/[^/]+/")),
    ("git/checkouts/", re.compile(r"^.*?/(?:\.cargo/git/checkouts|cargo/git/checkouts)/[^/]+/[^/]+/")),
    ("pkg/mod/", re.compile(r"^(?:.*?/)?pkg/mod/[^@]+@[^/]+/")),
    ("go/src/", re.compile(r"^.*?/go/src/[^/]+\.[^/]+/[^/]+/[^/]+/")),
    # a machine's own layout
    ("/", re.compile(r"^(?:/?[A-Za-z]:)?/(?:home|Users|users)/[^/]+/")),
    ("/", re.compile(r"^/(?:root|tmp|private/var/folders/[^/]+/[^/]+/T)/")),
    (":/", re.compile(r"^(?:[A-Za-z]:)/")),
    ("/", re.compile(r"^/(?:builds|workspace|workspaces|github/workspace|home/runner/work/[^/]+/[^/]+|__w/[^/]+/[^/]+|"
                     r"opt/atlassian/pipelines/agent/build|srv|code|usr/src/app)/")),
)


def normalize_path(raw: str) -> str:
    """A pasted path in one spelling: `/` separators, no URL scheme, host, query or source-map prefix,
    no surrounding quotes or brackets, no leading `./`. Empty when nothing path-like is left."""
    path = raw.strip()[:MAX_PATH_CHARS].strip("\"'`(),;")
    if placeholder := _ROOT_PLACEHOLDER.match(path):
        path = path[placeholder.end():]
    elif bundle := _BUNDLE_PLACEHOLDER.match(path):  # `[bundle].../gems/x-1.0/lib/y.rb`: a gem's file
        path = "/" + path[bundle.end():].lstrip("/")
    path = path.strip("[]{}")
    if path.startswith("<internal:") and path.endswith(">"):
        path = path[len("<internal:"):-1]
    path = path.replace("\\\\", "/").replace("\\", "/")
    if path.startswith("file://"):  # file:///srv/app/x.py
        path = path[len("file://"):]
    elif scheme := _SCHEMES.match(path):
        path = path[scheme.end():]
    elif host := _HTTP.match(path):
        path = path[host.end():]
    path = path.split("?", 1)[0].split("#", 1)[0]
    while "//" in path:
        path = path.replace("//", "/")
    while path.startswith("./"):
        path = path[2:]
    return path.rstrip("/:")


def strip_to_project(path: str) -> str:
    """`path` (normalised) without the part that surely sits above a project's root (a home
    directory, a virtualenv's site-packages, a gem's install directory …); unchanged otherwise."""
    for marker, pattern in _ABOVE_PROJECT:
        if marker in path and (match := pattern.match(path)):
            path = path[match.end():]
    return path.lstrip("/")


def path_suffixes(path: str) -> tuple[str, ...]:
    """Every segment suffix of a pasted path, longest first, after `normalize_path` and
    `strip_to_project`: `/home/me/proj/src/pkg/mod.py:12` → (`proj/src/pkg/mod.py`,
    `src/pkg/mod.py`, `pkg/mod.py`, `mod.py`). A repository-relative path `p` matches suffix `s`
    when `p == s` or `p.endswith("/" + s)`; the longest matching suffix is the best evidence."""
    cleaned = strip_to_project(normalize_path(path))
    segments = [s for s in cleaned.split("/") if s and s not in (".", "..")]
    return tuple("/".join(segments[i:]) for i in range(len(segments)))


def is_library_location(path: str) -> bool:
    """True when a pasted file path belongs to a dependency, a toolchain or the runtime itself
    (site-packages, node_modules, gems, the Go root, `/rustc/…`, `node:internal/…`, `<frozen …>`)."""
    normalized = normalize_path(path)
    raw = path.strip()
    return bool(
        _RUNTIME_PREFIX.match(raw) or _RUNTIME_PREFIX.match(normalized)
        or _LIBRARY_DIRS.search(normalized) or _GO_ROOT.search(normalized) or _LIBRARY_BUNDLE.search(raw)
    )
