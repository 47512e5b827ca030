"""The shared extraction helpers keep their answers when written for speed: capture order in
`preorder.captures` (including nodes that tie on span and capture name), `scan.innermost`
against the generic `scan.sweep`, `base.freeze`'s dependency filter, `base.line_range`, and the
file-name reading of `language_for` against pathlib's."""

from __future__ import annotations

import dataclasses
import inspect
import operator
import pickle
from pathlib import PurePosixPath

import pytest
from tree_sitter import Node, QueryCursor

from woods.extract import _file_name, _suffix, base, extract_file, language_for, preorder, scan, scopes
from woods.units import Dependency, FileExtraction, Unit

PYTHON = b"f()\nx = g(h())\nclass A:\n    def m(self):\n        return k(1)\n\n\ndef z():\n    pass\n"


def _reference_captures(grammar: str, pattern: str, node: Node) -> list[preorder.Capture]:
    """The order `preorder.captures` promises: (start, longer first, capture index), ties kept in
    the order the query returned them."""
    indexes = preorder.capture_indexes(grammar, pattern)
    found = QueryCursor(scopes.compiled(grammar, pattern)).captures(node)
    decorated = [(n.start_byte, -n.end_byte, indexes[name], n) for name, nodes in found.items() for n in nodes]
    return sorted(decorated, key=operator.itemgetter(0, 1, 2))


@pytest.mark.parametrize(
    "pattern",
    [
        "(call) @call (identifier) @name",
        # `f()` is both an expression_statement and a call over the same bytes, under one name:
        # the plain tuple sort would compare the nodes, so the tie goes the keyed way.
        "(expression_statement) @n (call) @n (identifier) @i",
        "(call) @n (expression_statement) @n",
    ],
)
def test_preorder_captures_order_with_and_without_ties(pattern: str) -> None:
    root = base.parse("python", PYTHON).root_node
    got = preorder.captures("python", pattern, root)
    want = _reference_captures("python", pattern, root)
    assert [(s, e, i, n.type) for s, e, i, n in got] == [(s, e, i, n.type) for s, e, i, n in want]
    assert all(a[3] == b[3] for a, b in zip(got, want, strict=True))


def test_preorder_tied_nodes_keep_the_query_order() -> None:
    root = base.parse("python", b"f()\n").root_node
    pattern = "(expression_statement) @n (call) @n"
    returned = QueryCursor(scopes.compiled("python", pattern)).captures(root)["n"]
    got = preorder.captures("python", pattern, root)
    assert [n.type for *_, n in got] == [n.type for n in returned]
    assert len(got) == 2 and got[0][:3] == got[1][:3]


def test_scan_innermost_matches_the_generic_sweep() -> None:
    source = b"<?php\nclass A {\n  function m() { f(); g(new B()); }\n}\nfunction h() { k(); }\nl();\n"
    root = base.parse("php", source).root_node
    drafts = [
        base.Draft(identifier=n.type, type="x", node=n)
        for n in base.walk(root)
        if n.type in ("class_declaration", "method_declaration", "function_definition", "declaration_list")
    ]
    found = scan.captures("php", "(function_call_expression) @call (name) @name", root)
    decorated = [(node.start_byte, 0, index, node) for index, (node, _name) in enumerate(found)]
    want = [(d, node, found[i][1]) for d, _s, _k, i, node in scan.sweep(scan.draft_spans(drafts), decorated)]
    got = scan.innermost(drafts, found)
    assert [(d.identifier, n.start_byte, name) for d, n, name in got] == [
        (d.identifier, n.start_byte, name) for d, n, name in want
    ]
    assert len(got) > 3


def test_freeze_drops_none_self_references_and_repeats_first_kept() -> None:
    source = b"def f():\n    return g()\n"
    node = base.parse("python", source).root_node.children[0]
    a, b, own = Dependency("a", "call"), Dependency("b", "call"), Dependency("f", "call")
    draft = base.Draft(identifier="f", type="function", node=node, deps=[a, own, Dependency("a", "call", lookup=("x",))])
    unit = base.freeze(draft, "m.py", "python", source, [None, b, Dependency("a", "type"), a])
    assert unit.dependencies == (a, b, Dependency("a", "type"))
    assert unit.dependencies[0].lookup == ()
    assert (unit.line_start, unit.line_end) == (1, 2)
    assert base.freeze(draft, "m.py", "python", source).dependencies == (a,)


def test_line_range_of_nodes_ending_at_column_zero() -> None:
    source = b"a = 1\n\ndef f():\n    pass\n"
    root = base.parse("python", source).root_node
    assert base.line_range(root) == (1, 4)  # the module ends at column 0 of line 5
    assert base.line_range(root.children[1]) == (3, 4)
    empty = base.parse("python", b"").root_node
    assert base.line_range(empty) == (1, 1)


@pytest.mark.parametrize(
    "path",
    ["a.py", "a/b.py", "", ".", "/", "a/", "a/.", "a/..", ".bashrc", "a/.bashrc", "a.", "a/b.", "..",
     "...", "a..b", "//x", "x//", "a/./", "Rakefile", "lib/Rakefile", "a/b/c.tar.gz", ".a.b", "./x.rb",
     "a/b/.", "src/Main.JAVA", "bin/.env.example"],
)
def test_file_name_and_suffix_read_like_pathlib(path: str) -> None:
    assert _file_name(path) == PurePosixPath(path).name
    assert _suffix(_file_name(path)) == PurePosixPath(path).suffix


def test_language_for_and_extract_file_dispatch() -> None:
    assert language_for("src/Main.JAVA") == "java"
    assert language_for("tasks/Rakefile") == "ruby"
    assert language_for("bin/tool", b"#!/usr/bin/env -S bash -e\n") == "bash"
    assert language_for("bin/tool", b"#!/usr/local/bin/python3\n") is None
    assert language_for("docs/README.md") == "markdown"
    first = extract_file("m.py", PYTHON)
    again = extract_file("m.py", PYTHON)  # the extractor module is looked up once, then reused
    assert first == again and first.units
    with pytest.raises(ValueError):
        extract_file("a.unknown-extension", b"")


def test_written_out_unit_and_dependency_init_keep_the_dataclass_behaviour() -> None:
    dep = Dependency("a.b", "calls", lookup=("a.b", "b"))
    by_position = Unit("m.f", "function", "python", "m.py", 1, 2, "def f(): ...", None, "f()", "Doc.", "m", {"k": 1}, (dep,))
    by_keyword = Unit(identifier="m.f", type="function", language="python", file_path="m.py", line_start=1, line_end=2,
                      source_code="def f(): ...", signature="f()", docstring="Doc.", parent="m", metadata={"k": 1},
                      dependencies=(dep,))
    assert by_position == by_keyword
    assert repr(by_position).startswith("Unit(identifier='m.f', type='function', language='python'")
    assert dep == Dependency(target="a.b", via="calls", target_type=None, lookup=("a.b", "b"))
    assert hash(dep) == hash(Dependency("a.b", "calls", None, ("a.b", "b")))
    bare = Unit("m", "module", "python", "m.py", 1, 1, "")
    assert bare.metadata == {} and bare.metadata is not Unit("m", "module", "python", "m.py", 1, 1, "").metadata
    assert (bare.namespace, bare.signature, bare.docstring, bare.parent, bare.dependencies) == (None,) * 4 + ((),)
    assert Unit("m", "module", "python", "m.py", 1, 1, "", metadata=None).metadata is None  # as given
    for protocol in range(pickle.HIGHEST_PROTOCOL + 1):
        assert pickle.loads(pickle.dumps(by_keyword, protocol)) == by_keyword
        assert pickle.loads(pickle.dumps(dep, protocol)) == dep
    # Pickling rebuilds through `__reduce__`: it must carry every field, in the order __init__ takes.
    every = Unit("m.C.f", "method", "python", "m.py", 3, 9, "def f(): ...", "m.C", "f()", "Doc.", "m.C", {"k": [1]},
                 (dep, Dependency("x", "imports", "module")))
    for value in (every, dep, Dependency("x", "imports", "module")):
        cls, args = value.__reduce__()
        assert cls is type(value) and len(args) == len(dataclasses.fields(value))
        assert args == tuple(getattr(value, f.name) for f in dataclasses.fields(value))
        assert pickle.loads(pickle.dumps(value, pickle.HIGHEST_PROTOCOL)) == value
    extraction = FileExtraction("m.py", "python", (by_keyword,))
    assert pickle.loads(pickle.dumps(extraction)) == extraction
    assert dataclasses.replace(by_keyword, parent=None).parent is None
    assert Unit.from_raw(by_keyword.to_raw()) == by_keyword
    with pytest.raises(dataclasses.FrozenInstanceError):
        by_keyword.identifier = "x"  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        dep.via = "x"  # type: ignore[misc]
    with pytest.raises(TypeError, match="missing 6 required positional arguments"):
        Unit("m")  # type: ignore[call-arg]
    assert str(inspect.signature(Unit).parameters["metadata"]) == "metadata: 'dict[str, Any]' = <factory>"
    assert [f.name for f in dataclasses.fields(Unit)] == list(inspect.signature(Unit).parameters)


def test_captures_that_start_together_come_outermost_first() -> None:
    """The query cursor's order for captures starting at the same byte followed memory layout
    (a unit's dependencies could come out in another order from run to run): both capture readers
    put the enclosing node first."""
    from woods.extract import base as extract_base
    from woods.extract import scan as extract_scan
    from woods.extract import scopes as extract_scopes

    source = b"a.f():close()\nb.c.d():e():g()\n"
    pattern = "(function_call name: (_) @callee)"
    root = extract_base.parse("lua", source).root_node
    callees = extract_scopes.captures_by_name("lua", pattern, root)["callee"]
    texts = [source[n.start_byte : n.end_byte] for n in callees]
    assert texts == [b"a.f():close", b"a.f", b"b.c.d():e():g", b"b.c.d():e", b"b.c.d"]
    scanned = [source[n.start_byte : n.end_byte] for n, _name in extract_scan.captures("lua", pattern, root)]
    assert scanned == texts
