"""The text woods embeds for a unit: the Ruby gem's TextPreparer format, byte for byte.

Why exact: vectors captured from the Ruby gem (the parity bench's vectors.json) are keyed by the
SHA-256 of this text, and an index built by either implementation must embed the same string for
the same unit. Format: prefix lines `[<type>] <identifier>`, `namespace: <ns>` (only when the
namespace is not None), `file: <path>` (only when not None), `dependencies: t1, t2, …` (the first
10 dependency targets in order, duplicates kept, only when there is at least one), joined by "\\n";
then one "\\n" and the unchanged content.
"""

from __future__ import annotations

from collections.abc import Iterable
from itertools import islice

from woods.units import Unit

# The Ruby TextPreparer lists at most 10 dependency targets: enough to say what a unit touches
# without letting a hub unit's prefix crowd out its own source.
MAX_PREFIX_DEPENDENCIES = 10


def embedding_prefix(
    unit_type: str,
    identifier: str,
    namespace: str | None = None,
    file_path: str | None = None,
    dependency_targets: Iterable[str] = (),
) -> str:
    """The header lines of an embedding text (no trailing newline)."""
    lines = [f"[{unit_type}] {identifier}"]
    if namespace is not None:
        lines.append(f"namespace: {namespace}")
    if file_path is not None:
        lines.append(f"file: {file_path}")
    targets = [str(target) for target in islice(dependency_targets, MAX_PREFIX_DEPENDENCIES)]
    if targets:
        lines.append("dependencies: " + ", ".join(targets))
    return "\n".join(lines)


def embedding_text(prefix: str, content: str) -> str:
    """prefix + "\\n" + content (content unchanged, no newline added at the end)."""
    return prefix + "\n" + content


def unit_embedding_prefix(unit: Unit) -> str:
    """The prefix for a unit, from its type, identifier, namespace, file and dependency targets."""
    return embedding_prefix(
        unit.type,
        unit.identifier,
        unit.namespace,
        unit.file_path,
        (dependency.target for dependency in unit.dependencies),
    )


def unit_embedding_text(unit: Unit) -> str:
    """The whole-unit embedding text (prefix + "\\n" + source_code)."""
    return embedding_text(unit_embedding_prefix(unit), unit.source_code or "")
