"""File-profile units of a Rails app: `configuration` (initializers, environments), `test_mapping` (specs and tests) and `database_table` units from db/schema.rb."""

from __future__ import annotations

import re

from woods.extract import base
from woods.extract.rails.inflection import camelize, singularize
from woods.extract.ruby import (
    LANGUAGE,
    RubyFile,
    block_statements,
    call_arguments,
    call_block,
    call_name,
    constant_path,
    dedup_dependencies,
    docstring_above,
    node_text,
    symbol_names,
)
from woods.units import Dependency, Unit


def _file_unit(
    walked: RubyFile,
    identifier: str,
    unit_type: str,
    metadata: dict[str, object],
    extra: tuple[Dependency, ...] = (),
) -> Unit:
    source = walked.source
    text = source.decode("utf-8", "replace")
    deps = walked.references(walked.root, ())  # `collect_references` from the root, from the scan
    deps += [(0, d) for d in extra]
    first_code = next((c for c in walked.root.named_children if c.type != "comment"), None)
    docstring = docstring_above(first_code.start_point[0], _top_comments(walked)) if first_code else None
    line_end = max(1, text.count("\n") + (0 if text.endswith("\n") else 1))
    return Unit(
        identifier=identifier,
        type=unit_type,
        language=LANGUAGE,
        file_path=walked.file_path,
        line_start=1,
        line_end=line_end,
        source_code=text,
        namespace=None,
        signature=None,
        docstring=docstring,
        parent=None,
        metadata=metadata,
        dependencies=dedup_dependencies(deps),
    )


def _top_comments(walked: RubyFile) -> dict[int, str]:
    rows: dict[int, str] = {}
    for child in walked.root.children:
        if child.type == "comment" and child.start_point[1] == 0:
            rows[child.start_point[0]] = node_text(child, walked.source)
    return rows


def configuration_unit(walked: RubyFile, rel: str) -> Unit:
    settings: list[str] = []
    for node in base.walk(walked.root):
        if node.type in ("assignment", "operator_assignment"):
            left = node_text(node.child_by_field_name("left"), walked.source)
            at = 0 if left.startswith("config.") else left.find(".config.") + 1
            setting = left[at:] if at >= 0 and left[at:].startswith("config.") else None
            if setting and setting not in settings:
                settings.append(setting)
    kind = rel.split("/")[1] if rel.count("/") >= 2 else "application"
    return _file_unit(walked, rel, "configuration", {"config_kind": kind, "settings": settings})


# Spec/test directories whose files test controllers (request/system specs name the resource).
_CONTROLLER_TEST_DIRS = frozenset({"requests", "request", "controllers", "system", "features", "integration"})


def guess_tested_unit(rel: str) -> str | None:
    """`spec/models/billing/invoice_spec.rb` → `Billing::Invoice`; request specs → `…Controller`."""
    match = re.match(r"^(?:spec|test)/(?:(\w+)/)?(.*?)(?:_spec|_test)\.rb$", rel)
    if match is None:
        return None
    directory, rest = match.group(1), match.group(2)
    if directory in (None, "lib", "unit"):
        return camelize(rest) or None
    if directory in _CONTROLLER_TEST_DIRS:
        name = camelize(rest)
        return name if name.endswith("Controller") else f"{name}Controller"
    return camelize(rest) or None


def _described_constant(walked: RubyFile) -> str | None:
    """The constant of the first top-level `describe Foo` / `RSpec.describe Foo`, if any."""
    for node in walked.root.named_children:
        if node.type == "call" and call_name(node, walked.source) == "describe":
            args = call_arguments(node)
            resolved = constant_path(args[0], walked.source) if args else None
            if resolved is not None:
                return resolved[0]
    for draft in walked.drafts:
        if draft.kind == "class" and draft.superclass:
            stem = draft.identifier.removesuffix("Test")
            if stem != draft.identifier:
                return stem
    return None


def test_mapping_unit(walked: RubyFile, rel: str) -> Unit:
    tested = _described_constant(walked) or guess_tested_unit(rel)
    extra: list[Dependency] = []
    if tested:
        extra.append(Dependency(tested, "tests", None, (tested,)))
    framework = "rspec" if rel.startswith("spec/") else "minitest"
    return _file_unit(walked, rel, "test_mapping", {"tests": tested, "framework": framework}, tuple(extra))


def schema_units(walked: RubyFile) -> list[Unit]:
    """db/schema.rb: one `database_table` unit per `create_table`, with its columns."""
    units: list[Unit] = []
    source = walked.source
    for node in base.walk(walked.root):
        if node.type != "call" or call_name(node, source) != "create_table":
            continue
        tables = symbol_names(call_arguments(node)[:1], source)
        if not tables:
            continue
        columns: list[dict[str, object]] = []
        for statement in block_statements(call_block(node)):
            if statement.type == "call" and statement.child_by_field_name("receiver") is not None:
                kind = call_name(statement, source)
                names = symbol_names(call_arguments(statement)[:1], source)
                if kind and kind != "index" and names:
                    columns.append({"name": names[0], "type": kind})
        start, end = base.line_range(node)
        model = camelize(singularize(tables[0]))
        units.append(
            Unit(
                identifier=tables[0],
                type="database_table",
                language=LANGUAGE,
                file_path=walked.file_path,
                line_start=start,
                line_end=end,
                source_code=node_text(node, source),
                signature=node_text(node, source).split("\n", 1)[0].strip(),
                metadata={"columns": columns, "model": model},
                dependencies=(Dependency(model, "table_of", "model", (model,)),),
            )
        )
    return units


