"""The Ruby scan (one query per file, `ruby.RubyScan`) must find exactly what the plain node-by-node
walks find: every unit root's references (`collect_references`), the file's top-level requires,
the declaration walk's drafts (it skips subtrees the scan says hold nothing it records), comment
rows above declarations, receiver-less calls for the Rails passes, and ERB's facts. Compared on
every Ruby and ERB fixture, a generated real-sized file and snippets with the shapes that prune the
reference walk (dynamic scopes, mixins, requires, constant assignments, constant method names,
classes inside blocks, syntax errors)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from test_extract_ruby_walk import _generated
from tree_sitter import Node, QueryCursor

from woods.extract import base, erb, ruby

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
RUBY_FILES = sorted(p for p in FIXTURES.rglob("*.rb"))
ERB_FILES = sorted(p for p in FIXTURES.rglob("*.erb"))

SNIPPETS = {
    "dynamic_scope": "x = foo::Bar\ny = self.class::LIMIT + Other::Thing::VALUE\nz = foo.bar::Baz::Qux.call(A)\n",
    "mixins": (
        "module M\n  include Foo, bar::Baz, Qux::Quux\n  extend(ActiveSupport::Concern) { Inner::Block }\n"
        "  prepend make(Mod)\n  include\nend\n"
    ),
    "requires": (
        'require "json"\nrequire_relative "../lib/x"\nrequire path_for(Const)\nrequire "a" do\n  Hidden::Const\nend\n'
        'class C\n  require "inside"\n  def m\n    require_dependency "dep"\n  end\nend\n'
    ),
    "constant_assignment": (
        "class A\n  LIST = [B, C::D].freeze\n  Foo::BAR = Baz\n  E = Struct.new(:a) do\n    def x = F::G\n  end\n"
        "  H = Class.new(Base) { def y; I; end }\nend\n"
    ),
    "constant_methods": "a = Integer(x)\nb = Kernel.Integer(y)\nc = obj.Float(z, Const)\nFoo::Bar(1)\n",
    "classes_in_blocks": (
        "module Outer\n  included do\n    class Nested < Base\n      def z; Deep::Ref; end\n    end\n    has_many :x\n"
        "    private\n  end\n  def after; Ref::After; end\n  class << self\n    def s; Self::Ref; end\n  end\nend\n"
    ),
    "visibility": (
        "class V\n  private def a; A1; end\n  protected\n  def b; B1; end\n  public :a\n  private_class_method :c\n"
        "  module_function\n  def self.c; C1; end\nend\n"
    ),
    "syntax_error": "class Broken < Base\n  def ok; Fine::Ref; end\n  def bad(\n    Other::Ref\nend\nmodule Lost\n  X::Y\n",
    "spellings": (
        "class S\n  include Comparable unless x.include?(y)\n  self.private = :private\n  def is_private; public?; end\n"
        "  private_class_method def self.p; end\n  protected if x\n  protected\n  public_class_method :p\n  require_relative 'r'\n"
        "  obj.require 'x'\n  extend\n  \"private public\" # protected module_function\n  module_function :f\n  module_function\n"
        "  def private; prepend(M) end\n  A1 = _B + c9D + @E + $F + @@G + ?H + 0xFF + ::I\nend\n"
    ),
    "calls": "Foo.bar(Baz.qux, &Blk)\nFoo::Bar.new.call(Zed)\nJob.perform_later(Arg)\nUserMailer.welcome(U).deliver_later\n",
}


def _cases() -> list[tuple[str, bytes]]:
    cases = [(p.relative_to(FIXTURES).as_posix(), p.read_bytes()) for p in RUBY_FILES]
    cases.append(("app/models/generated.rb", _generated().encode()))
    cases += [(f"lib/{name}.rb", text.encode()) for name, text in SNIPPETS.items()]
    return cases


CASES = _cases()


def _where(node: object) -> tuple[int, int, str]:
    assert isinstance(node, Node)
    return node.start_byte, node.end_byte, node.type


def _draft_view(walked: ruby.RubyFile) -> list[tuple[object, ...]]:
    return [
        (
            d.identifier,
            d.type,
            d.kind,
            _where(d.node),
            d.nesting,
            d.signature,
            d.docstring,
            d.visibility,
            d.singleton,
            repr(sorted(d.metadata.items())),
            d.deps_at,
            [_where(c) for c in d.dsl_calls],
            [m.identifier for m in d.methods],
            d.explicit_visibility,
        )
        for d in walked.drafts
    ]


@pytest.mark.parametrize(("path", "data"), CASES, ids=[path for path, _data in CASES])
def test_scan_equals_the_plain_walks(path: str, data: bytes) -> None:
    scanned, scanned_warnings = ruby.walk_file(path, data)
    plain, plain_warnings = ruby.walk_file(path, data, scan=False)
    assert scanned_warnings == plain_warnings
    assert _draft_view(scanned) == _draft_view(plain)
    assert scanned.file_requires == plain.file_requires

    scan = ruby.RubyScan(plain.root, data, path)
    root = plain.root
    assert scan.references(root, ()) in (None, ruby.collect_references(root, data, (), path))
    for draft in plain.drafts:
        unit_root = draft.node if draft.kind == "method" else draft.body
        if unit_root is None:
            continue
        found = scan.references(unit_root, draft.nesting) if scan.reaches(draft.node) else None
        if found is not None:
            assert found == ruby.collect_references(unit_root, data, draft.nesting, path), draft.identifier


def test_the_scan_serves_the_snippets() -> None:
    """The snippets exercise the scan itself, not its fallback to the plain walk."""
    for name, text in SNIPPETS.items():
        if name == "syntax_error":
            continue
        walked, _warnings = ruby.walk_file(f"lib/{name}.rb", text.encode())
        assert walked.scan is not None and walked.scan.exact, name


@pytest.mark.parametrize(("path", "data"), CASES, ids=[path for path, _data in CASES])
def test_comment_lines_equal_comment_rows(path: str, data: bytes) -> None:
    tree = base.parse("ruby", data)
    rows = ruby.comment_rows(tree.root_node, data)
    lines = ruby.CommentLines(tree.root_node, data)
    begins = [0] + [m.end() for m in re.finditer(rb"\n", data)]
    for row in reversed(range(len(begins))):
        lines._line_starts.setdefault(row, begins[row])
    for row in range(len(begins)):
        assert lines.get(row) == rows.get(row), row
    fresh = ruby.CommentLines(tree.root_node, data)  # rows found upwards from a declaration only
    for node in base.walk(tree.root_node):
        if node.type in ("method", "class", "module", "singleton_method"):
            assert ruby.docstring_above(fresh.anchor(node), fresh) == ruby.docstring_above(node.start_point[0], rows)


@pytest.mark.parametrize(("path", "data"), CASES, ids=[path for path, _data in CASES])
def test_receiverless_calls_equal_the_walk(path: str, data: bytes) -> None:
    tree = base.parse("ruby", data)
    for node in [tree.root_node, *(n for n in base.walk(tree.root_node) if n.type in ("class", "method"))]:
        walked = [
            (n.id, ruby.call_name(n, data))
            for n in base.walk(node)
            if n.type == "call"
            and n.child_by_field_name("receiver") is None
            and n.child_by_field_name("method") is not None
            and n.child_by_field_name("method").type == "identifier"
        ]
        assert [(n.id, name) for n, name in ruby.receiverless_calls(node, data)] == walked


@pytest.mark.parametrize("template", ERB_FILES, ids=[p.name for p in ERB_FILES])
def test_erb_facts_equal_the_walk(template: Path) -> None:
    source = template.read_bytes()
    tree = base.parse("embedded_template", source)
    buffer = bytearray(re.sub(rb"[^\n]", b" ", source))
    for node in base.walk(tree.root_node):
        if node.type in ("directive", "output_directive"):
            for child in node.named_children:
                if child.type == "code":
                    buffer[child.start_byte : child.end_byte] = source[child.start_byte : child.end_byte]
                    if child.end_byte < len(buffer) and buffer[child.end_byte] != 0x0A:
                        buffer[child.end_byte] = ord(";")
    code, root = erb.ruby_view(source, tree.root_node)
    assert code == bytes(buffer)
    facts, references = erb._fact_nodes(root, code, "view.html.erb")
    walked = list(base.walk(root))
    identifiers = [n for n in walked if n.type == "identifier"]
    assert erb._route_helpers(facts["identifier"], code) == erb._route_helpers(identifiers, code)
    assert [n.id for n in facts["instance_variable"]] == [n.id for n in walked if n.type == "instance_variable"]
    renders = [
        n.id
        for n in walked
        if n.type == "call" and n.child_by_field_name("receiver") is None and ruby.call_name(n, code) == "render"
    ]
    assert [n.id for n in facts["render_call"]] == renders
    assert references == ruby.collect_references(root, code, (), "view.html.erb")


@pytest.mark.parametrize(("path", "data"), CASES, ids=[path for path, _data in CASES])
def test_spelled_receiverless_calls_equal_the_query(path: str, data: bytes) -> None:
    """The leaf lookups keep exactly the calls of `receiverless_calls` whose name begins with a match."""
    tree = base.parse("ruby", data)
    spelling = re.compile(rb"render|[a-z_]+_table|add_[a-z]+|require|[a-z]")
    wanted = re.compile(r"^(render|[a-z_]+_table|add_[a-z]+|require|[a-z])")
    for node in [tree.root_node, *(n for n in base.walk(tree.root_node) if n.type in ("class", "method"))]:
        for within in (None, (node.start_byte + 1, max(node.start_byte + 1, node.end_byte - 2))):
            queried = [(n.id, name) for n, name in ruby.receiverless_calls(node, data, within) if wanted.match(name)]
            spelled = ruby.spelled_receiverless_calls(node, data, spelling, within)
            assert [(n.id, name) for n, name in spelled] == queried


def _reference_cases() -> list[tuple[str, bytes]]:
    cases = list(CASES)
    for template in ERB_FILES:
        source = template.read_bytes()
        code, _root = erb.ruby_view(source, base.parse("embedded_template", source).root_node)
        cases.append((template.name, code))
    return cases


@pytest.mark.parametrize(("path", "data"), _reference_cases(), ids=[path for path, _data in _reference_cases()])
def test_spelled_reference_captures_equal_the_query(path: str, data: bytes) -> None:
    root = base.parse("ruby", data).root_node
    spelled = ruby.spelled_reference_captures(root, data)
    if root.has_error:
        assert spelled is None
        return
    assert spelled is not None
    queried = QueryCursor(ruby.scan_query(ruby.REFERENCE_PATTERNS)).captures(root)
    for name in set(spelled) | {name for name in queried if not name.startswith("_")}:
        assert sorted(n.id for n in spelled.get(name, [])) == sorted(n.id for n in queried.get(name, [])), name


# The scan's query with one pattern per kind of node (`_SCAN_QUERY_SOURCE` merges two of them).
_SEPARATE_SCAN_PATTERNS = ruby.REFERENCE_PATTERNS + """
[(method) (singleton_method) (singleton_class)] @definition
(call !receiver method: (identifier) @_visibility_name
  (#any-of? @_visibility_name "private" "protected" "public" "private_class_method" "public_class_method")) @visibility_call
(body_statement (identifier) @word (#any-of? @word "private" "protected" "public" "module_function"))
(ERROR) @error
"""


@pytest.mark.parametrize(("path", "data"), CASES, ids=[path for path, _data in CASES])
def test_scan_captures_equal_the_separate_patterns(path: str, data: bytes) -> None:
    """The merged `@receiverless` pattern, split by name, captures what `@special` and
    `@visibility_call` capture."""
    root = base.parse("ruby", data).root_node
    scanned = ruby.RubyScan(root, data, path).captures
    queried = QueryCursor(ruby.scan_query(_SEPARATE_SCAN_PATTERNS)).captures(root)
    names = {name for name in queried if not name.startswith("_")} | {n for n in scanned if not n.startswith("_")}
    for name in names:
        assert sorted(n.id for n in scanned.get(name, [])) == sorted(n.id for n in queried.get(name, [])), name
