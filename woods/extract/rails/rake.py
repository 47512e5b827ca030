"""Rake tasks as `rake_task` units: the namespaced task name, its description, prerequisites and references."""

from __future__ import annotations

from tree_sitter import Node

from woods.extract import base
from woods.extract.ruby import (
    LANGUAGE,
    RubyFile,
    block_statements,
    call_arguments,
    call_block,
    call_name,
    collect_references,
    dedup_dependencies,
    literal_list,
    node_text,
    string_value,
)
from woods.units import Dependency, Unit


def _task_name_and_prereqs(args: list[Node], source: bytes) -> tuple[str | None, list[str], list[str]]:
    """(name, prerequisites, arguments) of `task :x`, `task x: :dep`, `task :x, [:a] => :dep`."""
    if not args:
        return None, [], []
    first = args[0]
    pairs = [first] if first.type == "pair" else (first.named_children if first.type == "hash" else [])
    if pairs and pairs[0].type == "pair":
        key = string_value(pairs[0].child_by_field_name("key"), source)
        return (
            (key.rstrip(":") if key else None),
            literal_list(pairs[0].child_by_field_name("value"), source),
            [],
        )
    name = string_value(first, source)
    task_args: list[str] = []
    prereqs: list[str] = []
    for arg in args[1:]:
        if arg.type == "array":
            task_args = literal_list(arg, source)
        inner = [arg] if arg.type == "pair" else (arg.named_children if arg.type == "hash" else [])
        for pair in inner:
            if pair.type == "pair":
                task_args = literal_list(pair.child_by_field_name("key"), source)
                prereqs = literal_list(pair.child_by_field_name("value"), source)
    return name, prereqs, task_args


def rake_task_units(walked: RubyFile) -> list[Unit]:
    units: list[Unit] = []
    _visit_tasks(walked, list(walked.root.named_children), [], units)
    return units


def _visit_tasks(walked: RubyFile, statements: list[Node], namespace: list[str], units: list[Unit]) -> None:
    """Append the tasks among `statements` (and inside their `namespace` and other blocks) to
    `units`. A module-level function, not a closure calling itself: such a closure is a
    reference cycle that would keep the whole file's tree and extraction alive until the cyclic
    collector runs (and it is paused while an index is built)."""
    source = walked.source
    description: str | None = None
    for node in statements:
        if node.type != "call" or node.child_by_field_name("receiver") is not None:
            if node.type != "comment":
                description = None  # a `desc` describes only the task right after it
            continue
        name = call_name(node, source)
        args = call_arguments(node)
        if name == "desc":
            description = string_value(args[0], source) if args else None
            continue
        if name == "namespace":
            label = string_value(args[0], source) if args else None
            _visit_tasks(walked, block_statements(call_block(node)), [*namespace, label] if label else namespace, units)
        elif name in ("task", "multitask"):
            task, prereqs, task_args = _task_name_and_prereqs(args, source)
            if task:
                units.append(
                    _task_unit(walked, node, ":".join([*namespace, task]), namespace, description, prereqs, task_args)
                )
        elif call_block(node) is not None:
            _visit_tasks(walked, block_statements(call_block(node)), namespace, units)
        description = None


def _task_unit(
    walked: RubyFile,
    node: Node,
    identifier: str,
    namespace: list[str],
    description: str | None,
    prereqs: list[str],
    task_args: list[str],
) -> Unit:
    source = walked.source
    start, end = base.line_range(node)
    deps: list[tuple[int, Dependency]] = []
    for prereq in prereqs:
        scoped = ":".join([*namespace, prereq]) if namespace and ":" not in prereq else prereq
        deps.append(
            (
                node.start_byte,
                Dependency(prereq, "prerequisite", "rake_task", tuple(dict.fromkeys([scoped, prereq]))),
            )
        )
    block = call_block(node)
    if block is not None:
        deps += collect_references(block, source, (), walked.file_path)
    return Unit(
        identifier=identifier,
        type="rake_task",
        language=LANGUAGE,
        file_path=walked.file_path,
        line_start=start,
        line_end=end,
        source_code=node_text(node, source),
        namespace=":".join(namespace) or None,
        signature=node_text(node, source).split("\n", 1)[0].strip(),
        docstring=description,
        parent=None,
        metadata={
            "task_name": identifier,
            "description": description,
            "prerequisites": prereqs,
            "arguments": task_args,
        },
        dependencies=dedup_dependencies(deps),
    )


