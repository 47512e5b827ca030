"""The text-reading fast paths of the Java, Kotlin and Swift extractors give exactly what the
node-by-node reading gives, on the fixtures and on snippets made to defeat them (annotations
with arguments, comments inside headers, receiver parameters, blank lines under doc comments,
damaged files that must take the node-by-node path)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from tree_sitter import Node

from woods.extract import base, java, kotlin, swift
from woods.units import FileExtraction

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"

JAVA_TRICKY = """package com.acme;

import java.util.List;
import static java.util.Collections.emptyList;
import java.util.*;
import static java.lang.Math.*;
import /* odd */ java.io.File;

/** Docs. */
@SuppressWarnings("unchecked") @Deprecated public final class Tricky<T> extends Base<T> implements Runnable, Comparable<Tricky<T>> {
    // a line comment

    int spacer;
    /* block */ public static void a(final int x, String... rest) { b(); this.c(); Tricky.d(); list.e(); }
    @Override
    public void run() { new Object() { void inner() { g(); } }; }
    void b() {}
    void b(int[] a, int c[], Map<String, List<Integer>> m, final @Nullable String s) {}
    void c(Tricky this, int x) { \u00c4rger.f(); _u.g(); $v.h(); tmp.i(); }
    void d(java.util.List<? extends T> xs, int... ys) { Foo.super.bar(); }
    @Ann(1) protected non-sealed abstract static void e();
    public @interface Marker { String value() default ""; }
    enum E { A { void f() {} }, B; void g() {} void g(int x) {} }
    record R(int x, String y) { R { h(); } static void h() {} }
    // trailing
    /* first */ /* second */ void spaced(int a , int b) {}
    void glued(List<String>a) {}
    void dims(int a []) {}
}
""".encode()

JAVA_DAMAGED = JAVA_TRICKY.replace(b"void b() {}", b"void b( {}").replace(b"record R", b"record")


class _ExactJava(java._Extractor):
    """The Java extractor with every fast path off (as for a file with syntax errors)."""

    @property
    def clean(self) -> bool:
        return False

    @clean.setter
    def clean(self, value: bool) -> None:
        pass


class _ExactKotlin(kotlin._Extractor):
    def _plain_import(self, node: Node) -> bool:
        return False

    def _leading_comment(self, node: Node) -> str | None:
        return base.comment_block_before(self.siblings, self.position, node, self.source, kotlin._COMMENTS)


class _ExactSwift(swift._Extractor):
    def _leading_comment(self, node: Node) -> str | None:
        return base.leading_comment(node, self.source, swift._COMMENTS)


KOTLIN_TRICKY = b"""package a.b

import a.as
import x.y.Z as W
import x.y.*
import `r`.s
import t . u
import v.w;
import  p.q  as  Q // note

/** Doc. */ class A {
    // one
    // two
    fun f() {}

    /* spaced */

    fun g() {}
    /* same line */ fun h() {}
    val p: Int get() = 1 // trailing
    fun i() {}
}
"""

SWIFT_TRICKY = b"""import Foundation

/// Doc
/// more
struct A {
    // one
    func f() {}

    /* nested /* inner */ outer */
    func g() {}

    /* same */ func h() {}
    var p: Int { 1 } // trailing
    func i() {}
}
"""


def _files(fixture: str, suffix: str) -> list[tuple[str, bytes]]:
    root = FIXTURES / fixture
    files = [(p.relative_to(root).as_posix(), p.read_bytes()) for p in sorted(root.rglob(f"*{suffix}"))]
    assert files
    return files


CASES: list[tuple[str, Callable[[str, bytes], FileExtraction], Callable[[str, bytes], FileExtraction], list[tuple[str, bytes]]]] = [
    ("java", java.extract, lambda p, s: _ExactJava(p, s).run(),
     [*_files("java_app", ".java"), ("com/acme/Tricky.java", JAVA_TRICKY), ("com/acme/Damaged.java", JAVA_DAMAGED)]),
    ("kotlin", kotlin.extract, lambda p, s: _ExactKotlin(p, s).run(),
     [*_files("kotlin_service", ".kt"), ("a/b/A.kt", KOTLIN_TRICKY), ("a/b/Cut.kt", KOTLIN_TRICKY[:-30])]),
    ("swift", swift.extract, lambda p, s: _ExactSwift(p, s).run(),
     [*_files("swift_pkg", ".swift"), ("A.swift", SWIFT_TRICKY), ("Cut.swift", SWIFT_TRICKY[:-25])]),
]


@pytest.mark.parametrize(("language", "fast", "exact", "files"), CASES, ids=[c[0] for c in CASES])
def test_fast_paths_match_the_node_by_node_reading(
    language: str,
    fast: Callable[[str, bytes], FileExtraction],
    exact: Callable[[str, bytes], FileExtraction],
    files: list[tuple[str, bytes]],
) -> None:
    for path, source in files:
        ours = fast(path, source)
        assert ours.units, path
        assert ours == exact(path, source), path


def test_tricky_java_shapes_are_read() -> None:
    units = {u.identifier: u for u in java.extract("com/acme/Tricky.java", JAVA_TRICKY).units}
    tricky = units["com.acme.Tricky"]
    assert tricky.docstring == "Docs."
    assert tricky.metadata["annotations"] == ['SuppressWarnings("unchecked")', "Deprecated"]
    assert units["com.acme.Tricky#a"].metadata["parameters"] == ["int", "String..."]
    assert units["com.acme.Tricky#a"].docstring == "block"
    assert units["com.acme.Tricky#b(int[],int,Map<String,List<Integer>>,String)"].metadata["parameters"] == [
        "int[]", "int", "Map<String,List<Integer>>", "String"]
    assert units["com.acme.Tricky#c"].metadata["parameters"] == ["int"]  # the receiver is no parameter
    assert units["com.acme.Tricky#e"].metadata["modifiers"] == ["protected", "non-sealed", "abstract", "static"]
    assert units["com.acme.Tricky#spaced"].docstring == "trailing\nfirst\nsecond"
    assert units["com.acme.Tricky#glued"].metadata["parameters"] == ["List<String>"]
    calls = {d.target for d in units["com.acme.Tricky#a"].dependencies if d.via == "calls"}
    assert {"com.acme.Tricky#b()", "com.acme.Tricky#c", "com.acme.Tricky#d"} <= calls
    assert not any("#e" in d.target for d in units["com.acme.Tricky#a"].dependencies)  # `list.e()`: a variable's
    c_calls = {d.target for d in units["com.acme.Tricky#c"].dependencies if d.via == "calls"}
    assert c_calls == {"com.acme.\u00c4rger#f"}  # a non-ASCII capital takes the node reading
    assert ("com.acme.Foo#bar", "calls") in {(d.target, d.via) for d in units["com.acme.Tricky#d"].dependencies}
    assert java.extract("com/acme/Damaged.java", JAVA_DAMAGED).warnings
