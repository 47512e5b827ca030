"""The Go, Java and Rust extractors replay their walk over one query's captures
(`woods/extract/preorder.py`); here each is checked against a reference that walks every node in
Python, as those extractors used to, on the fixtures and on snippets with the tricky shapes."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from tree_sitter import Node, Tree

from woods.extract import base, go, java, preorder, rust
from woods.units import FileExtraction

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"

GO_SNIPPET = b"""package shapes

import (
\t"fmt"
\tstr "strings"
\t. "math"
\t_ "embed"
\t"io"
)

// Reader reads.
type Reader interface {
\tio.Reader
\tfmt.Stringer
\t// Read fills p.
\tRead(p []byte) (n int, err error)
\tNested(x interface{ Inner() io.Writer }) str.Builder
\tGeneric[T any](v T) Reader
}

type (
\tA struct {
\t\tB
\t\t*C
\t\td fmt.Stringer
\t\te interface{ M() io.Closer }
\t}
\tD = map[string]A
)

type List[T any] struct {
\titems []T
\tnext  *List[T]
}

func (l *List[T]) Push(v T) { l.items = append(l.items, v); l.Len(); fmt.Println(str.ToUpper("x")) }
func (List[T]) Len() int  { return 0 }
func (s A) M() io.Closer { return s.d.(io.Closer) }
func init() {
\ttype local struct{ x Reader }
\ttype iface interface{ Do(fmt.Stringer) local }
\tvar _ = local{}
\tgo func() { helper(); Sqrt(2) }()
}
func init() {}
func helper() (fmt.Stringer, error) { return nil, nil }
"""

GO_BROKEN = b"package p\n\ntype T struct { a int\nfunc (t *T) M( { t.x() }\nfunc F() T { return T{} }\ntype = int\n"
# Empty (MISSING) type names on a unit's edge: `preorder.enter` asks the tree where they belong.
GO_MISSING = b"package p\nfunc f() { var x []\n }\nfunc g() T { var y []\n return nil }\ntype U struct { a []\n}\n"

JAVA_SNIPPET = b"""package com.acme;

import java.util.*;
import java.util.function.Supplier;
import static java.util.Objects.requireNonNull;

/** Outer docs. */
@SuppressWarnings("unchecked")
public class Outer<T extends Comparable<T>> extends Base<T> implements Supplier<T>, java.io.Serializable {
    private final Map.Entry<String, Inner> entry = null;
    private final Runnable r = new Runnable() { public void run() { helper(); } };

    /** Inner docs. */
    static class Inner extends Outer.Base implements Comparable<Inner> {
        public int compareTo(Inner o) { return Integer.compare(1, 2); }
    }

    record Point(int x, int y) {
        Point { requireNonNull(x); }
        static Point origin() { return new Point(0, 0); }
    }

    enum Color { RED, GREEN; Color next() { return Color.values()[0]; } }

    @interface Marker { String value() default ""; }

    public <U> U map(java.util.function.Function<T, U> f) { return f.apply(get()); }
    public T get() { return null; }
    void helper() {}
    void helper(int times, String... names) {
        class Local { void go() { Outer.this.helper(); Collections.sort(null); } }
        new Local().go();
        Supplier<Inner> s = () -> new Inner();
        this.helper();
        Inner.class.getName();
    }
}

interface Shape extends Comparable<Shape>, Supplier<String> { default double area() { return 0; } }
"""

JAVA_BROKEN = b"package a;\nclass Ok { void fine() { Foo.bar(); } }\nclass Broken { void m( { List<X> x = ; }\n"

RUST_SNIPPET = b"""//! The crate's docs.
use std::collections::HashMap;
use crate::runtime::{self, Builder as RtBuilder, task::*};
use super::io;
mod child;
use child::Thing;

macro_rules! cfg_rt {
    ($($item:item)*) => { $( #[cfg(feature = "rt")] $item )* }
}

cfg_rt! {
    /// Spawns a task.
    pub fn spawn<F: Future>(f: F) -> JoinHandle<F::Output> { runtime::spawn(f) }

    cfg_fs! {
        pub struct File { inner: Thing }
        impl File { pub fn open() -> Self { Self::new(); File { inner: Thing::default() } } }
    }
}

/// A trait.
pub trait Shape: Clone {
    type Output: Into<f64>;
    fn area(&self) -> Self::Output;
    fn double(&self) -> f64 { self.area().into() * 2.0 }
}

#[derive(Debug, Clone)]
pub struct Square<T> where T: Copy { side: T, map: HashMap<String, RtBuilder> }

impl<T: Copy> Shape for Square<T> {
    type Output = f64;
    fn area(&self) -> f64 { let s = Square { side: 1.0 }; helper(self.side); 0.0 }
}

impl std::fmt::Display for Square<u8> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result { write!(f, "{}", self.side) }
}

pub mod inline {
    //! Inline docs.
    use super::Square;
    pub(crate) fn make() -> Square<u8> { fn inner() -> Local { Local } struct Local; todo!() }
    #[cfg(test)]
    mod tests { #[test] fn works() { super::make(); } }
}

fn helper<U>(_u: U) -> Option<io::Result<()>> { None }
"""

RUST_MISSING = b"struct S { x: }\nfn f(x: ) -> Foo { g(); }\nfn h() { let x: Vec<> = 1; }\nimpl S { fn m(&self, y: ) {} }\n"
RUST_BROKEN = b"cfg_rt! {\n    pub fn a() -> u8 { 1 }\n}\nfn b( { c(); }\nstruct S { x: T }\nimpl S { fn f(&self) -> T { g(); } }\n"


# -- references: the walks the extractors did before the query replay -------------------------


class _GoReference(go._Extractor):
    def _replay(self, root: Node) -> None:
        stack: list[tuple[Node, go._Draft | None]] = [(c, None) for c in reversed(root.children)]
        while stack:
            node, owner = stack.pop()
            kind = node.type
            if kind in ("function_declaration", "method_declaration"):
                owner = self._function(node)
            elif kind in ("type_spec", "type_alias"):
                owner = self._type(node)
            elif kind == "method_elem" and owner is not None and owner.type == "interface":
                draft = self._interface_method(node, owner)
                for child in base.walk(node):
                    if child.type == "qualified_type":
                        self._qualified(child, draft, "code_reference")
                    elif child.type == "type_identifier":
                        self._reference(child, draft)
                continue
            elif owner is not None:
                if kind == "call_expression":
                    self._call(node, owner)
                elif kind == "qualified_type":
                    self._qualified(node, owner, "code_reference")
                    continue
                elif kind == "type_identifier":
                    self._reference(node, owner)
                elif kind == "selector_expression":
                    self._selector(node, owner)
            if kind in ("import_declaration", "package_clause", "comment"):
                continue
            skip = node.child_by_field_name("receiver") if kind == "method_declaration" else None
            stack.extend((c, owner) for c in reversed(node.children) if skip is None or c != skip)

    def _call(self, node: Node, owner: go._Draft) -> None:
        function = node.child_by_field_name("function")
        if function is not None and function.type == "identifier":
            self._call_name(base.text(function, self.source), owner)
        elif function is not None and function.type == "selector_expression":
            operand = function.child_by_field_name("operand")
            if operand is None or operand.type != "identifier":
                return
            member = base.text(function.child_by_field_name("field"), self.source)
            qualifier = base.text(operand, self.source)
            path = self._import_dep(qualifier, owner)
            if path is not None:
                owner.deps.append(self._edge(f"{path}.{member}", "calls"))
            elif owner.receiver_name and qualifier == owner.receiver_name:
                owner.deps.append(self._edge(f"{self.package}.{owner.receiver_type}.{member}", "calls"))

    def _selector(self, node: Node, owner: go._Draft) -> None:
        operand = node.child_by_field_name("operand")
        if operand is not None and operand.type == "identifier":
            self._import_dep(base.text(operand, self.source), owner)

    def _import_dep(self, alias: str, owner: go._Draft) -> str | None:
        path = self.imports.get(alias)
        if path is not None:
            owner.deps.append(self._edge(path, "import"))
        return path

    def _reference(self, node: Node, owner: go._Draft) -> None:
        parent = node.parent
        if parent is not None and parent.type in ("type_spec", "type_alias") and parent.child_by_field_name("name") == node:
            return
        self._type_reference(base.text(node, self.source), owner)


class _JavaReference(java._Extractor):
    def _replay(self, root: Node) -> None:
        stack: list[tuple[Node, java._Draft | None]] = [(c, None) for c in reversed(root.children)]
        while stack:
            node, owner = stack.pop()
            kind = node.type
            if kind in ("package_declaration", "import_declaration") or kind in java._COMMENTS:
                continue
            if kind in ("superclass", "super_interfaces", "extends_interfaces"):
                continue
            if kind in java._TYPE_DECLARATIONS:
                owner = self._type(node, owner)
            elif kind in java._CALLABLES and owner is not None and owner.type in java._TYPE_UNITS:
                owner = self._callable(node, owner)
            elif owner is not None:
                if kind in ("type_identifier", "scoped_type_identifier"):
                    owner.refs.append(("type", "code_reference", "".join(base.text(node, self.source).split())))
                    if kind == "scoped_type_identifier":
                        continue
                elif kind == "method_invocation":
                    self._call(node, owner)
            stack.extend((c, owner) for c in reversed(node.children))


class _RustReference(rust._Extractor):
    def _replay(self, root: Node, module: rust._Draft, root_ctx: rust._Ctx) -> None:
        stack = [(c, module, root_ctx) for c in reversed(root.children)]
        while stack:
            node, owner, ctx = stack.pop()
            kind = node.type
            if kind in rust._COMMENTS or kind == "attribute_item":
                continue
            if kind == "use_declaration":
                self._use(node, ctx, owner, record=True)
                continue
            if kind == "mod_item":
                body = node.child_by_field_name("body")
                self.child_mods.setdefault(ctx.module, set()).add(
                    base.text(node.child_by_field_name("name"), self.source)
                )
                if body is not None:
                    draft = self._mod(node, owner, ctx)
                    inner = rust._Ctx(draft.identifier)
                    stack.extend((c, draft, inner) for c in reversed(body.children))
                continue
            if kind == "impl_item":
                inner = self._impl(node, owner, ctx)
                body = node.child_by_field_name("body")
                if body is not None:
                    stack.extend((c, owner, inner) for c in reversed(body.children))
                continue
            if kind in rust._ITEM_TYPES:
                owner = self._item(node, owner, ctx)
                if kind == "trait_item":
                    ctx = rust._Ctx(ctx.module, owner.identifier, owner.identifier)
            elif kind in ("function_item", "function_signature_item"):
                owner = self._function(node, owner, ctx)
            elif kind == "call_expression":
                self._call(node, owner, ctx)
            elif kind in ("type_identifier", "scoped_type_identifier") and owner.type != "module":
                parent = node.parent
                if parent is None or parent.child_by_field_name("name") != node or parent.type == "generic_type":
                    self._type_ref(node, owner, ctx)
                if kind == "scoped_type_identifier":
                    continue
            stack.extend((c, owner, ctx) for c in reversed(node.children))


def _fresh_reparse(source: bytes, tree: Tree) -> tuple[bytes, Tree]:
    """Unwrapping as it was: every level parsed afresh."""
    parsed = source
    for _level in range(rust._MAX_UNWRAP_DEPTH):
        unwrapped = rust.unwrap_item_macros(parsed, tree.root_node)
        if unwrapped is None:
            break
        parsed = unwrapped
        tree = base.parse("rust", parsed)
    return parsed, tree


def _sources(fixture: str, suffix: str, snippets: list[tuple[str, bytes]]) -> list[tuple[str, bytes]]:
    root = FIXTURES / fixture
    files = [(p.relative_to(root).as_posix(), p.read_bytes()) for p in sorted(root.rglob(f"*{suffix}"))]
    assert files
    return files + snippets


CASES: list[tuple[str, Callable[[str, bytes], FileExtraction], Callable[[str, bytes], FileExtraction], list[tuple[str, bytes]]]] = [
    ("go", go.extract, lambda p, s: _GoReference(p, s).run(),
     _sources("go_module", ".go", [("shapes/shapes.go", GO_SNIPPET), ("p/broken.go", GO_BROKEN), ("p/missing.go", GO_MISSING)])),
    ("java", java.extract, lambda p, s: _JavaReference(p, s).run(),
     _sources("java_app", ".java", [("com/acme/Outer.java", JAVA_SNIPPET), ("a/Ok.java", JAVA_BROKEN)])),
    ("rust", rust.extract, lambda p, s: _RustReference(p, s).run(),
     _sources("rust_crate", ".rs", [("src/lib.rs", RUST_SNIPPET), ("src/broken.rs", RUST_BROKEN), ("src/missing.rs", RUST_MISSING)])),
]


@pytest.mark.parametrize(("language", "extract", "reference", "files"), CASES, ids=[c[0] for c in CASES])
def test_replay_matches_the_node_by_node_walk(
    language: str,
    extract: Callable[[str, bytes], FileExtraction],
    reference: Callable[[str, bytes], FileExtraction],
    files: list[tuple[str, bytes]],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    replayed = [extract(path, source) for path, source in files]
    monkeypatch.setattr(rust, "reparse_unwrapped", _fresh_reparse)
    walked = [reference(path, source) for path, source in files]
    for (path, _source), ours, theirs in zip(files, replayed, walked, strict=True):
        assert ours.units, path
        assert ours == theirs, path
    # The snippets do hold what they are for: units and references of every kind.
    kinds = {u.type for e in replayed for u in e.units}
    vias = {d.via for e in replayed for u in e.units for d in u.dependencies}
    assert {"calls", "code_reference", "import"} <= vias
    assert len(kinds) >= 3
    assert any(e.warnings for e in replayed)


def test_snippets_cover_the_tricky_shapes() -> None:
    rust_ids = {u.identifier: u for u in rust.extract("src/lib.rs", RUST_SNIPPET).units}
    assert {"crate::spawn", "crate::File", "crate::File::open", "crate::cfg_rt", "crate::Shape::double",
            "crate::Square::area", "crate::inline::make::inner", "crate::inline::tests::works"} <= set(rust_ids)
    assert rust_ids["crate::spawn"].docstring == "Spawns a task."
    go_ids = {u.identifier for u in go.extract("shapes/shapes.go", GO_SNIPPET).units}
    assert {"shapes.Reader.Read", "shapes.Reader.Nested", "shapes.List.Push", "shapes.A.M",
            "shapes.init(shapes.go)", "shapes.init(shapes.go)#2", "shapes.local", "shapes.iface.Do"} <= go_ids
    java_ids = {u.identifier for u in java.extract("com/acme/Outer.java", JAVA_SNIPPET).units}
    assert {"com.acme.Outer#run", "com.acme.Outer.Inner#compareTo", "com.acme.Outer.Point#Point",
            "com.acme.Outer.Color#next", "com.acme.Outer.Marker", "com.acme.Outer.Local#go",
            "com.acme.Shape#area"} <= java_ids


@pytest.mark.parametrize(("language", "source"), [("go", GO_SNIPPET), ("java", JAVA_SNIPPET), ("rust", RUST_SNIPPET)])
def test_captures_come_in_pre_order_and_scopes_hold_their_descendants(language: str, source: bytes) -> None:
    pattern = {"go": go._WALK, "java": java._WALK, "rust": rust._WALK}[language]
    root = base.parse(language, source).root_node
    order: dict[tuple[int, int, int], int] = {}  # (start, end, symbol) → first pre-order position
    for position, node in enumerate(base.walk(root)):
        order.setdefault((node.start_byte, node.end_byte, node.kind_id), position)
    found = preorder.captures(language, pattern, root)
    positions = [order[(start, -negative_end, node.kind_id)] for start, negative_end, _kind, node in found]
    assert positions == sorted(positions) and len(found) > 20
    # Every capture pushed as a scope: what `enter` leaves open must be exactly its captured ancestors.
    stack: list[tuple[Node, int]] = []
    for start, negative_end, _kind, node in found:
        index = preorder.enter(stack, node, start, -negative_end)
        ancestors = []
        parent = node.parent
        while parent is not None:
            ancestors.append(parent)
            parent = parent.parent
        assert index == len(stack) - 1
        assert all(scope == node or any(scope == a for a in ancestors) for scope, _end in stack)  # or itself, captured twice
        stack.append((node, -negative_end))


def test_incremental_unwrapping_gives_the_fresh_tree() -> None:
    for source in (RUST_SNIPPET, RUST_BROKEN, (FIXTURES / "rust_crate" / "src" / "lib.rs").read_bytes()):
        first = base.parse("rust", source)
        fresh_source, fresh = _fresh_reparse(source, base.parse("rust", source))
        ours_source, ours = rust.reparse_unwrapped(source, first)
        assert ours_source == fresh_source
        assert str(ours.root_node) == str(fresh.root_node)
        assert [(n.start_byte, n.end_byte) for n in base.walk(ours.root_node)] == [
            (n.start_byte, n.end_byte) for n in base.walk(fresh.root_node)
        ]
