"""The text woods embeds for a unit: the Ruby gem's TextPreparer format, byte for byte.

Why exact: vectors captured from the Ruby gem (the parity bench's vectors.json) are keyed by the
SHA-256 of this text, and an index built by either implementation must embed the same string for
the same unit. Format: prefix lines `[<type>] <identifier>`, `namespace: <ns>` (only when the
namespace is not None), `file: <path>` (only when not None), `dependencies: t1, t2, …` (the first
10 dependency targets in order, duplicates kept, only when there is at least one), joined by "\\n";
then one "\\n" and the unchanged content.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
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


# The prefix (type, identifier, namespace, file, dependencies) may use at most this share of the
# embedder's input, so every chunk keeps room for its own code. Normal prefixes are a few dozen
# tokens; only pathological ones (a 2 KB Java overload signature, a hub with huge dependency
# names) ever reach it.
PREFIX_MAX_SHARE = 0.5


def bounded_prefix(unit: Unit, count_tokens: Callable[[str], int] | None, max_tokens: int | None) -> str:
    """The unit's prefix, shortened only when it alone would take over PREFIX_MAX_SHARE of the input:
    first fewer dependency names, then each header line cut at a character boundary (marked `…`).
    Only this header is ever shortened; the code itself is split, never cut."""
    prefix = unit_embedding_prefix(unit)
    if count_tokens is None or max_tokens is None:
        return prefix
    budget = int(max_tokens * PREFIX_MAX_SHARE)
    if count_tokens(prefix) <= budget:
        return prefix
    targets = [dependency.target for dependency in unit.dependencies][:MAX_PREFIX_DEPENDENCIES]
    for keep in range(len(targets) - 1, -1, -1):
        prefix = embedding_prefix(unit.type, unit.identifier, unit.namespace, unit.file_path, targets[:keep])
        if count_tokens(prefix) <= budget:
            return prefix
    lines = prefix.split("\n")
    width = max(len(line) for line in lines)
    while width > 8 and count_tokens(prefix) > budget:
        width //= 2
        prefix = "\n".join(line if len(line) <= width else line[:width] + "…" for line in lines)
    return prefix
