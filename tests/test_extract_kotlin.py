"""Kotlin extraction over the `notes` fixture service, plus broken, binary and deep input."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from tests.extract_helpers import deps_by_via, extract_fixture, extract_tree, line_of, linked_edges
from woods.extract import scan
from woods.extract.kotlin import extract
from woods.units import Unit

ROOT = Path(__file__).resolve().parent.parent / "fixtures" / "kotlin_service"
SRC = "src/main/kotlin/com/acme/notes"
PKG = "com.acme.notes"


def _extract(rel: str) -> dict[str, Unit]:
    return extract_fixture(extract, ROOT, rel, "kotlin")


def _line_of(rel: str, needle: str) -> int:
    return line_of(ROOT, rel, needle)


_deps = deps_by_via


def test_data_classes_enums_and_computed_properties() -> None:
    rel = f"{SRC}/Note.kt"
    units = _extract(rel)
    assert list(units) == [f"{PKG}.Priority", f"{PKG}.Priority.isUrgent", f"{PKG}.Note", f"{PKG}.Note.summary",
                           f"{PKG}.Note.withTag"]
    note = units[f"{PKG}.Note"]
    assert (note.type, note.parent, note.namespace) == ("class", None, PKG)
    assert note.metadata == {"modifiers": ["data"]}
    assert note.docstring == "A note with a title, a body and tags."
    assert (note.line_start, note.line_end) == (_line_of(rel, "data class Note("), _line_of(rel, "fun withTag") + 1)
    assert (note.signature or "").startswith("data class Note( val id: Long, val title: String,")
    assert _deps(note, "import") == {"java.time.Instant": ("java.time.Instant",)}
    assert _deps(note, "code_reference")["java.time.Instant"][:2] == (f"{PKG}.Note.Instant", "java.time.Instant")
    summary = units[f"{PKG}.Note.summary"]  # a getter body: a property unit; `val id` is not
    assert (summary.type, summary.signature) == ("property", "val summary: String")
    assert (summary.line_start, summary.line_end) == (_line_of(rel, "val summary"), _line_of(rel, "val summary") + 1)
    priority = units[f"{PKG}.Priority"]
    assert (priority.type, priority.signature) == ("enum", "enum class Priority(val weight: Int)")
    assert priority.docstring == "How urgent a note is; notes are listed most urgent first."


def test_interfaces_implementations_and_overrides() -> None:
    rel = f"{SRC}/NoteRepository.kt"
    units = _extract(rel)
    save = units[f"{PKG}.NoteRepository.save"]
    assert (save.type, save.signature, save.metadata["abstract"]) == ("method", "fun save(note: Note): Note", True)
    memory = units[f"{PKG}.InMemoryNoteRepository"]
    assert memory.metadata["implements"] == ["NoteRepository"]
    assert _deps(memory, "implements") == {
        f"{PKG}.NoteRepository": (f"{PKG}.InMemoryNoteRepository.NoteRepository", f"{PKG}.NoteRepository")
    }
    override = units[f"{PKG}.InMemoryNoteRepository.save"]
    assert override.metadata == {"modifiers": ["override"]}
    assert _deps(override, "calls")[f"{PKG}.InMemoryNoteRepository.nextId"][0] == f"{PKG}.InMemoryNoteRepository.nextId"


def test_companion_objects_and_objects() -> None:
    rel = f"{SRC}/NoteService.kt"
    units = _extract(rel)
    companion = units[f"{PKG}.NoteService.Companion"]
    assert (companion.type, companion.parent, companion.metadata["companion"]) == ("object", f"{PKG}.NoteService", True)
    in_memory = units[f"{PKG}.NoteService.Companion.inMemory"]
    assert in_memory.docstring == "A service over a fresh in-memory repository."
    assert in_memory.line_start == _line_of(rel, "fun inMemory()")
    demo = units[f"{PKG}.DemoIds"]
    assert (demo.type, demo.docstring) == ("object", "Ids handed out to demo notes.")
    create = units[f"{PKG}.NoteService.create"]
    assert create.metadata == {"modifiers": ["suspend"]}
    calls = _deps(create, "calls")
    assert calls[f"{PKG}.NoteService.normalize"][0] == f"{PKG}.NoteService.normalize"
    assert "kotlinx.coroutines.withContext" in calls[f"{PKG}.NoteService.withContext"]  # explicit import


def test_extension_functions_attach_to_the_extended_type() -> None:
    rel = f"{SRC}/Extensions.kt"
    units = _extract(rel)
    assert list(units) == [f"{PKG}.NoteFilter", "kotlin.List.sortedByPriority", f"{PKG}.Note.hasTag",
                           f"{PKG}.Note.wordCount", f"{PKG}.main"]
    has_tag = units[f"{PKG}.Note.hasTag"]
    assert (has_tag.type, has_tag.parent, has_tag.namespace) == ("function", f"{PKG}.Note", f"{PKG}.Note")
    assert has_tag.metadata == {"modifiers": [], "extension": True, "receiver": "Note"}
    assert has_tag.signature == "fun Note.hasTag(tag: String): Boolean"
    assert units["kotlin.List.sortedByPriority"].metadata["receiver"] == "List<Note>"
    word_count = units[f"{PKG}.Note.wordCount"]
    assert (word_count.type, word_count.metadata["extension"]) == ("property", True)
    alias = units[f"{PKG}.NoteFilter"]
    assert (alias.type, alias.signature) == ("type_alias", "typealias NoteFilter = (Note) -> Boolean")
    assert _deps(units[f"{PKG}.main"], "calls")[f"{PKG}.NoteService.inMemory"] == (
        f"{PKG}.NoteService.inMemory", f"{PKG}.NoteService.Companion.inMemory",
    )


def test_scripts_get_a_file_unit() -> None:
    script = _extract("build.gradle.kts")["build.gradle.kts"]
    assert (script.type, script.line_start, script.line_end) == ("file", 1, 17)


def test_edges_resolve_across_files() -> None:
    edges = linked_edges([u for f in extract_tree(ROOT) for u in f.units])
    assert edges[f"{PKG}.InMemoryNoteRepository"][(f"{PKG}.NoteRepository", "implements")] == f"{PKG}.NoteRepository"
    assert edges[f"{PKG}.main"][(f"{PKG}.NoteService.Companion.inMemory", "calls")] == (
        f"{PKG}.NoteService.Companion.inMemory"
    )
    assert edges[f"{PKG}.NoteService.Companion.inMemory"][(f"{PKG}.InMemoryNoteRepository", "code_reference")] == (
        f"{PKG}.InMemoryNoteRepository"
    )
    assert edges[f"{PKG}.Note.hasTag"][(f"{PKG}.Note", "code_reference")] == f"{PKG}.Note"
    assert edges[f"{PKG}.Note"][("java.time.Instant", "import")] is None  # outside the repository: kept
    assert not any(t.endswith("withContext") for t, _via in edges[f"{PKG}.NoteService.create"])


def test_supertypes_secondary_constructors_and_star_imports() -> None:
    source = b"""package a.b

import x.y.*

interface Shape : Drawable
abstract class Base(val id: Int)
class Square(id: Int) : Base(id), Shape {
    constructor() : this(0)
    fun area(): Int = Helper.twice(id)
}
annotation class Marker

@Suppress("x")
@JvmOverloads internal fun `is empty`(x: Int = 0): Boolean = x == 0

@Volatile
var counter: Int = 0
    get() = field + 1
"""
    units = {u.identifier: u for u in extract("s.kt", source).units}
    assert _deps(units["a.b.Shape"], "superclass") == {"a.b.Drawable": ("a.b.Shape.Drawable", "a.b.Drawable", "x.y.Drawable")}
    square = units["a.b.Square"]
    assert (square.metadata["extends"], square.metadata["implements"]) == (["Base"], ["Shape"])
    assert units["a.b.Square.constructor"].type == "constructor"
    assert _deps(units["a.b.Square.area"], "calls")["a.b.Helper.twice"][-1] == "x.y.Helper.Companion.twice"
    assert (units["a.b.Marker"].type, units["a.b.Marker"].metadata["annotation"]) == ("interface", True)
    escaped = units["a.b.is empty"]  # backticks quote a name; annotations are metadata, not the signature
    assert escaped.signature == "internal fun `is empty`(x: Int = 0): Boolean"
    assert escaped.metadata == {"modifiers": ["internal"], "annotations": ['Suppress("x")', "JvmOverloads"]}
    assert escaped.line_start == source.decode().splitlines().index('@Suppress("x")') + 1
    assert units["a.b.counter"].signature == "var counter: Int = 0"  # only annotations before the keyword


def test_syntax_errors_keep_what_parses() -> None:
    source = b"package p\n\nfun good() = 1\n\nfun bad( {\n\nfun later() {}\n"
    result = extract("x.kt", source)
    assert "p.good" in {u.identifier for u in result.units}
    assert len(result.warnings) == 1


def test_invalid_utf8_binary_and_empty_input_never_raise() -> None:
    units = {u.identifier: u for u in extract("x.kt", b"/** caf\xe9 \xff */\nfun f() = \"\xfe\"\n").units}
    assert "\ufffd" in (units["f"].docstring or "")
    assert [u.type for u in extract("blob.kt", bytes(range(256)) * 8).units] == ["file"]
    assert [(u.identifier, u.type) for u in extract("e.kts", b"").units] == [("e.kts", "file")]


def test_deep_nesting_does_not_recurse() -> None:
    nested = "".join(f"class C{i} {{\n" for i in range(200)) + "fun m() {}\n" + "}\n" * 200
    units = [u.identifier for u in extract("deep.kt", nested.encode()).units]
    assert units[-1] == ".".join(f"C{i}" for i in range(200)) + ".m"
    depth = 2000
    source = f"fun f(): Int = {'(' * depth}g(){')' * depth}\nfun g() = 1\n".encode()
    by_id = {u.identifier: u for u in extract("d.kt", source).units}
    assert _deps(by_id["f"], "calls") == {"g": ("g",)}


def test_a_parse_that_does_not_finish_is_abandoned_with_a_warning(monkeypatch: pytest.MonkeyPatch) -> None:
    """tree-sitter-kotlin 1.1.0 can loop forever on corrupt input; the parse budget ends it."""
    monkeypatch.setattr(scan, "PARSE_SECONDS", -1.0)  # every deadline is already past
    result = extract("slow.kt", b"fun f() = 1\n" * 5000)
    assert result.units == ()
    assert len(result.warnings) == 1 and result.warnings[0].startswith("slow.kt: kotlin parser gave up after ")
    monkeypatch.undo()  # the parser was reset: the next file parses from scratch
    assert [u.identifier for u in extract("ok.kt", b"fun g() = 2\n").units] == ["g"]


def test_the_parse_budget_counts_cpu_time_so_wall_time_passing_cuts_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    """On a loaded machine wall time runs ahead of the parse; an honest file must still parse the
    same way: the budget is the thread's CPU time, and a wall clock an hour ahead changes nothing."""
    source = "".join(f"fun f{i}() = {i}\n" for i in range(2000)).encode()
    wall = time.monotonic
    reads = iter(range(1_000_000))
    # The first reading is now, every later one an hour on: the machine "stalled" mid-parse.
    monkeypatch.setattr(scan.time, "monotonic", lambda: wall() + (3600.0 if next(reads) else 0.0))
    result = extract("ok.kt", source)
    assert result.warnings == ()
    assert [u.identifier for u in result.units] == [f"f{i}" for i in range(2000)]


# tree-sitter-kotlin gives up on a value class whose annotated constructor sits on the next line
# and, without recovery, swallows every declaration after it into one ERROR node.
GIVE_UP = 'package demo\n\n@JvmInline\npublic value class Outcome<out T>\n@PublishedApi internal constructor(@PublishedApi internal val holder: Any?) {\n    public val isSuccess: Boolean get() = holder !is Failed\n\n    public fun getOrNull(): T? = if (holder !is Failed) holder as T else null\n\n    public fun exceptionOrNull(): Throwable? = (holder as? Failed)?.cause\n\n    internal open class Failed {\n        override fun toString(): String = "Failed"\n    }\n\n    internal class Closed(@JvmField val cause: Throwable?) : Failed() {\n        override fun equals(other: Any?): Boolean = other is Closed && cause == other.cause\n        override fun hashCode(): Int = cause.hashCode()\n        override fun toString(): String = "Closed($cause)"\n    }\n\n    public override fun toString(): String = "Outcome($holder)"\n}\n\n/** A channel of elements. */\npublic interface Pipe<E> {\n    public fun send(element: E)\n}\n\npublic fun <E> Pipe(capacity: Int = 0): Pipe<E> = TODO()\n'


def test_declarations_after_a_stretch_the_grammar_gives_up_on_are_recovered() -> None:
    tree, skipped = scan.parse_recovering("kotlin", GIVE_UP.encode())
    assert skipped == [(5, 24)]
    plain = scan.parse("kotlin", GIVE_UP.encode())
    assert plain.root_node.children[-1].is_error  # the failure this guards against
    extraction = extract("src/Pipe.kt", GIVE_UP.encode())
    found = {(u.type, u.identifier, u.line_start, u.line_end) for u in extraction.units}
    assert ("interface", "demo.Pipe", 26, 28) in found
    assert ("method", "demo.Pipe.send", 27, 27) in found
    assert ("function", "demo.Pipe", 30, 30) in found  # the factory function named after it
    assert any("lines 5-24 skipped" in w for w in extraction.warnings)


def test_recovery_leaves_a_file_that_parses_untouched() -> None:
    source = b"package demo\n\nclass Ok {\n    fun run() = 1\n}\n"
    tree, skipped = scan.parse_recovering("kotlin", source)
    assert skipped == [] and not tree.root_node.has_error
