"""The layers of `woods/` and which may import which, read from the modules' own imports.

Why: data flows one way (docs/architecture.md) — files become units, units chunks and vectors,
the stores hold them, retrieval and the index builder read and write the stores, the library
(`woods.api`) answers every question and the interfaces render its answers. An import against
that flow (the store asking retrieval, retrieval asking the library, the CLI reaching past the
library into the stores) is how a layer starts to depend on what it should not know. The library
is the only door: the CLI and the MCP server import `woods.api` (and the embedding providers they
choose), never `woods.indexing`, `woods.store` or `woods.freshness`.

Every `import` / `from … import` of a `woods` module counts: at module level, inside a function
(a lazy import is still a dependency) and under `if TYPE_CHECKING:` (a type the interface names is
a type it depends on). Each module belongs to one layer (`LAYERS`); a layer may import itself, the
base and the layers `ALLOWED` lists — nothing else. A new module must be given a layer here.
"""

from __future__ import annotations

import ast
from collections.abc import Collection, Iterable, Mapping
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "woods"
ROOT = "woods"

# Each module's layer: a name covers that module and, for a package, everything under it (the
# package root `woods` itself only). Lowest first.
LAYERS: dict[str, tuple[str, ...]] = {
    # Importable by every layer: errors, bounds, the value objects and text rules all stages share.
    "base": ("woods.errors", "woods.limits", "woods.lazy", "woods.version", "woods.units", "woods.paths",
             "woods.tokens", "woods.suggest"),
    # Files → units: which files, what language, the extractors, edges between units, --glob/--lang.
    "discovery": ("woods.discovery", "woods.extract", "woods.linking", "woods.filters"),
    "embedding": ("woods.embedding",),
    "chunking": ("woods.chunking",),
    "store": ("woods.store",),
    "retrieval": ("woods.retrieval", "woods.resolve", "woods.resolve_parse", "woods.snippets", "woods.diagram"),
    # Writing an index, and comparing one with the repository's files.
    "indexing": ("woods.indexing", "woods.freshness"),
    "library": (ROOT, "woods.api", "woods.fleet", "woods.evaluate", "woods.watch"),
    "interfaces": ("woods.cli", "woods.mcp_server", "woods.terminal", "woods.entrypoint", "woods.progress",
                   "woods.__main__"),
}

# What each layer may import besides itself and the base.
ALLOWED: dict[str, frozenset[str]] = {
    "base": frozenset(),
    "discovery": frozenset(),
    "embedding": frozenset(),
    "chunking": frozenset({"discovery", "embedding"}),
    "store": frozenset(),
    "retrieval": frozenset({"discovery", "embedding", "store"}),
    "indexing": frozenset({"discovery", "chunking", "embedding", "store"}),
    "library": frozenset({"discovery", "chunking", "embedding", "store", "retrieval", "indexing"}),
    # The library is the only door; an entry point also picks the embedding providers it builds with.
    "interfaces": frozenset({"library", "embedding"}),
}


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def layer_of(module: str) -> str | None:
    """The layer of a `woods` module (the longest name in LAYERS that covers it), or None."""
    best: tuple[int, str] | None = None
    for layer, names in LAYERS.items():
        for name in names:
            covers = module == name or (name != ROOT and module.startswith(name + "."))
            if covers and (best is None or len(name) > best[0]):
                best = (len(name), layer)
    return None if best is None else best[1]


def imports_of(name: str, source: str, *, is_package: bool, known: Collection[str]) -> set[str]:
    """The `woods` modules `source` (the module `name`) imports anywhere in its body, each
    resolved to the nearest module in `known` (`from pkg import sub` is the submodule)."""
    package = name if is_package else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                anchor = parts[: len(parts) - (node.level - 1)]
                base = ".".join([*anchor, base] if base else anchor)
            targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in known else base for a in node.names]
        for target in targets:
            while target and target not in known:
                target = target.rpartition(".")[0]
            if target and target != name and (target == ROOT or target.startswith(ROOT + ".")):
                found.add(target)
    return found


def package_modules() -> dict[str, Path]:
    return {module_name(p): p for p in PACKAGE.rglob("*.py")}


def import_graph() -> dict[str, set[str]]:
    modules = package_modules()
    return {
        name: imports_of(name, path.read_text(encoding="utf-8"), is_package=path.name == "__init__.py",
                         known=modules)
        for name, path in modules.items()
    }


def violations(graph: Mapping[str, Iterable[str]]) -> list[str]:
    """One line per module without a layer and per import the layers do not allow."""
    found: list[str] = []
    for module in sorted(graph):
        layer = layer_of(module)
        if layer is None:
            found.append(f"{module} has no layer: add it to LAYERS in tests/test_layering.py")
            continue
        for target in sorted(graph[module]):
            target_layer = layer_of(target)
            if target_layer is None or target_layer in (layer, "base") or target_layer in ALLOWED[layer]:
                continue  # a target without a layer is reported as a module of its own
            found.append(f"{module} ({layer}) imports {target} ({target_layer})")
    return found


def test_every_module_has_a_layer_and_every_import_is_allowed():
    assert violations(import_graph()) == []


def test_the_checker_reads_lazy_and_type_checking_imports():
    graph = import_graph()
    assert "woods.api.index" in graph["woods.api"]  # a re-export
    assert "woods.indexing.pipeline" in graph["woods.api.background"]  # inside a function
    assert "woods.embedding.provider" in graph["woods.mcp_server"]  # under TYPE_CHECKING
    assert {layer_of(m) for m in graph} == set(LAYERS)  # every layer holds a module


def test_a_violating_import_is_reported():
    known = package_modules()
    source = (
        "from typing import TYPE_CHECKING\n"
        "from woods.api import Index\n"
        "if TYPE_CHECKING:\n"
        "    from woods.indexing import IndexSummary\n"
        "def status():\n"
        "    from woods.store.index import store_dir_for\n"
        "    from woods import freshness\n"
    )
    graph = {"woods.cli": imports_of("woods.cli", source, is_package=False, known=known)}
    assert violations(graph) == [
        "woods.cli (interfaces) imports woods.freshness (indexing)",
        "woods.cli (interfaces) imports woods.indexing (indexing)",
        "woods.cli (interfaces) imports woods.store.index (store)",
    ]


def test_an_upward_import_is_reported():
    known = package_modules()
    graph = {
        "woods.retrieval.retriever": imports_of(
            "woods.retrieval.retriever", "def f():\n    from ..api import Index\n", is_package=False, known=known
        ),
        "woods.store.metadata": imports_of(
            "woods.store.metadata", "import woods.retrieval.code_search\n", is_package=False, known=known
        ),
        "woods.embedding.select": imports_of(
            "woods.embedding.select", "from woods.limits import MAX_QUERY_BYTES\n", is_package=False, known=known
        ),
    }
    assert violations(graph) == [
        "woods.retrieval.retriever (retrieval) imports woods.api (library)",
        "woods.store.metadata (store) imports woods.retrieval.code_search (retrieval)",
    ]


def test_a_module_without_a_layer_is_reported():
    assert violations({"woods.newthing": set()}) == [
        "woods.newthing has no layer: add it to LAYERS in tests/test_layering.py"
    ]
