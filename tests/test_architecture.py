"""The package's shape: no import cycles inside `woods/`, read from the modules' own imports.

Every `import` / `from … import` of a `woods` module counts, at module level or inside a function
(a lazy import that closes a loop is still a loop a reader must keep in mind); imports under
`if TYPE_CHECKING:` are for the type checker only and do not count.
"""

from __future__ import annotations

import ast
from pathlib import Path

import networkx as nx

PACKAGE = Path(__file__).resolve().parent.parent / "woods"


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _type_checking_lines(tree: ast.Module) -> set[int]:
    lines: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for child in node.body:
                lines.update(range(child.lineno, (child.end_lineno or child.lineno) + 1))
    return lines


def import_graph() -> nx.DiGraph:
    modules = {_module_name(p): p for p in PACKAGE.rglob("*.py")}
    graph = nx.DiGraph()
    graph.add_nodes_from(modules)
    for name, path in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        skipped = _type_checking_lines(tree)
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in ast.walk(tree):
            if getattr(node, "lineno", None) in skipped:
                continue
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    anchor = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                    base = ".".join([*anchor, base] if base else anchor)
                # `from pkg import sub` imports the submodule `pkg.sub` when there is one
                targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base for a in node.names]
            for target in targets:
                while target and target not in modules:
                    target = target.rpartition(".")[0]
                if target and target != name and target.startswith("woods"):
                    graph.add_edge(name, target)
    return graph


def test_the_graph_sees_the_imports():
    graph = import_graph()
    assert graph.has_edge("woods.indexing.pipeline", "woods.indexing.generation")
    assert graph.has_edge("woods.extract.rails", "woods.extract.ruby")
    assert graph.number_of_nodes() > 40


def test_no_import_cycles_inside_woods():
    cycles = sorted(sorted(component) for component in nx.strongly_connected_components(import_graph())
                    if len(component) > 1)
    assert cycles == [], f"import cycles: {cycles}"
