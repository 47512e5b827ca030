"""C extraction over the `kv` fixture library, the `.h` decision, plus broken, binary and deep input."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.extract_helpers import deps_by_via, extract_fixture, extract_tree, line_of, linked_edges
from woods.extract import extract_file, extractor_language, language_for
from woods.extract.c import extract
from woods.extract.cfamily import include_candidates
from woods.extract.sniff import looks_like_cpp
from woods.units import Unit

ROOT = Path(__file__).resolve().parent.parent / "fixtures" / "c_lib"


def _extract(rel: str) -> dict[str, Unit]:
    return extract_fixture(extract, ROOT, rel, "c")


def _line_of(rel: str, needle: str) -> int:
    return line_of(ROOT, rel, needle)


_deps = deps_by_via


def test_header_units_macros_typedefs_and_no_prototypes() -> None:
    rel = "include/kv/kv.h"
    units = _extract(rel)
    assert list(units) == ["include/kv/kv.h", "KV_VERSION", "KV_MIN", "kv_store_t", "kv_status", "kv_visit_cb"]
    header = units[rel]
    assert (header.type, header.line_start, header.line_end, header.parent) == ("file", 1, 41, None)
    assert header.metadata == {"header": True}
    assert "kv_store_t *kv_open(size_t capacity);" in header.source_code  # prototypes live in the file unit
    macro = units["KV_MIN"]
    assert (macro.type, macro.parent, macro.namespace) == ("macro", rel, None)
    assert macro.line_start == macro.line_end == _line_of(rel, "#define KV_MIN")
    assert macro.signature == "#define KV_MIN(a, b)"
    assert macro.docstring == "The smaller of two values; evaluates its arguments twice."
    assert macro.metadata == {"function_like": True}
    assert units["KV_VERSION"].metadata == {"function_like": False}
    status = units["kv_status"]
    assert (status.type, status.signature, status.docstring) == ("enum", "enum kv_status", "Result codes of every kv_* call.")
    assert (status.line_start, status.line_end) == (_line_of(rel, "enum kv_status {"), _line_of(rel, "KV_NO_MEMORY = -2") + 1)
    callback = units["kv_visit_cb"]
    assert callback.type == "type_alias"
    assert callback.signature == "typedef int (*kv_visit_cb)(const char *key, const char *value, void *arg)"
    assert _deps(units["kv_store_t"], "code_reference") == {"kv_store": ("kv_store",)}


def test_structs_unions_and_static_inline_functions() -> None:
    rel = "src/kv_internal.h"
    units = _extract(rel)
    store = units["kv_store"]
    assert (store.type, store.signature) == ("struct", "struct kv_store")
    assert (store.line_start, store.line_end) == (_line_of(rel, "struct kv_store {"), _line_of(rel, "struct kv_entry *last;") + 1)
    assert _deps(store, "code_reference") == {"kv_entry": ("kv_entry",)}
    union = units["kv_slot_value"]
    assert (union.type, union.docstring) == ("union", "A stored value, or the reason there is none.")
    hashing = units["kv__hash"]
    assert hashing.type == "function"
    assert hashing.signature == "static inline unsigned long kv__hash(const char *key)"
    assert hashing.metadata == {"specifiers": ["static", "inline"], "static": True}
    assert hashing.docstring == "FNV-1a over the key's bytes."
    assert units["KV_LOAD_LIMIT"].signature == "#define KV_LOAD_LIMIT(cap)"


def test_functions_static_helpers_calls_and_type_references() -> None:
    rel = "src/store.c"
    units = _extract(rel)
    assert list(units) == ["src/store.c", "copy_text", "find_slot", "grow", "kv_open", "kv_close", "kv_put", "kv_get"]
    grow = units["grow"]
    assert (grow.type, grow.parent, grow.namespace) == ("function", rel, None)
    assert grow.signature == "static enum kv_status grow(kv_store_t *store)"
    assert grow.docstring == "Double the table and re-insert every entry in order."
    assert grow.line_start == _line_of(rel, "static enum kv_status grow(")
    assert grow.line_end == _line_of(rel, "kv_store_t *kv_open(size_t capacity) {") - 2
    assert grow.metadata["static"] is True
    put = units["kv_put"]
    assert "static" not in put.metadata
    assert set(_deps(put, "calls")) == {"KV_LOAD_LIMIT", "grow", "find_slot", "free", "copy_text", "calloc"}
    assert set(_deps(put, "code_reference")) == {"kv_status", "kv_store_t", "kv_entry"}
    assert _deps(units["find_slot"], "calls")["kv__hash"] == ("kv__hash",)


def test_includes_resolve_to_header_file_units() -> None:
    units = _extract("src/store.c")
    assert _deps(units["src/store.c"], "import") == {
        "stdlib.h": ("src/stdlib.h", "src/include/stdlib.h", "stdlib.h", "include/stdlib.h"),
        "string.h": ("src/string.h", "src/include/string.h", "string.h", "include/string.h"),
        "kv/kv.h": ("src/kv/kv.h", "src/include/kv/kv.h", "kv/kv.h", "include/kv/kv.h"),
        "kv_internal.h": ("src/kv_internal.h", "src/include/kv_internal.h", "kv_internal.h", "include/kv_internal.h"),
    }
    edges = linked_edges([u for f in extract_tree(ROOT) for u in f.units])
    assert edges["src/store.c"][("include/kv/kv.h", "import")] == "include/kv/kv.h"
    assert edges["src/store.c"][("src/kv_internal.h", "import")] == "src/kv_internal.h"
    assert edges["src/store.c"][("stdlib.h", "import")] is None  # a system header: kept, unresolved
    assert edges["src/kv_internal.h"][("include/kv/kv.h", "import")] == "include/kv/kv.h"
    assert edges["kv_put"][("grow", "calls")] == "grow"
    assert edges["kv_put"][("KV_LOAD_LIMIT", "calls")] == "KV_LOAD_LIMIT"
    assert edges["kv_dump"][("kv_each", "calls")] == "kv_each"
    assert edges["find_slot"][("kv__hash", "calls")] == "kv__hash"
    assert edges["grow"][("kv_store_t", "code_reference")] == "kv_store_t"
    assert ("free", "calls") not in edges["kv_close"]  # libc: dropped when nothing resolves


def test_include_candidates() -> None:
    assert include_candidates("src/unix/core.c", "uv-common.h") == (
        "src/unix/uv-common.h", "src/unix/include/uv-common.h", "src/uv-common.h", "src/include/uv-common.h",
        "uv-common.h", "include/uv-common.h",
    )
    assert include_candidates("src/a.c", "../include/x.h") == ("include/x.h", "src/include/x.h")
    assert include_candidates("include/kv/kv.h", "stddef.h") == (
        "include/kv/stddef.h", "include/kv/include/stddef.h", "include/stddef.h", "stddef.h",
    )


def test_calling_convention_typedefs_are_named_by_their_type() -> None:
    source = b"typedef VOID (CALLBACK* WINEVENTPROC)\n    (HWINEVENTHOOK hook,\n     DWORD eventTime);\n"
    units = {u.identifier: u for u in extract("winapi.h", source).units}
    assert (units["WINEVENTPROC"].type, units["WINEVENTPROC"].line_end) == ("type_alias", 3)
    assert "eventTime" not in units


def test_nested_structs_keep_their_own_tag() -> None:
    source = b"struct outer {\n  struct inner { int x; } in;\n  union { int a; float b; } anon;\n};\n"
    units = {u.identifier: u for u in extract("n.h", source).units}
    assert list(units) == ["n.h", "outer", "inner"]  # C has one tag namespace; anonymous unions are fields
    assert (units["inner"].parent, units["inner"].namespace, units["inner"].line_start) == ("outer", None, 2)
    assert "access" not in units["inner"].metadata


def test_preprocessor_alternatives_get_numbered() -> None:
    rel = "src/iter.c"
    units = _extract(rel)
    assert [u for u in units if u.startswith("print_entry")] == ["print_entry", "print_entry#2"]
    assert units["print_entry"].docstring == "Print every entry to stderr (debug builds)."
    assert units["print_entry#2"].line_start == _line_of(rel, "#else") + 1


@pytest.mark.parametrize(
    ("text", "cpp"),
    [
        (b"namespace fmt {\nint f();\n}\n", True),
        (b"#pragma once\ntemplate <typename T> T max(T a, T b);\n", True),
        (b"class Buffer {\n public:\n  int size;\n};\n", True),
        (b"#include <string>\nstd::string name();\n", True),
        (b'extern "C++" {\nint f();\n}\n', True),
        (b'#ifdef __cplusplus\nextern "C" {\n#endif\nint f(void);\n#ifdef __cplusplus\n}\n#endif\n', False),
        (b"/* the class of a handle */\nstruct handle { int kind; };\n", False),
        (b"int f(int x) {\n  x = x ? 1 : 2;\nretry:\n  return x;\n}\n", False),
    ],
)
def test_h_files_are_c_unless_they_read_as_cpp(text: bytes, cpp: bool) -> None:
    assert looks_like_cpp(text) is cpp
    assert language_for("include/x.h") == "c"
    result = extract_file("include/x.h", text)
    assert result.language == ("cpp" if cpp else "c")
    assert all(u.language == result.language for u in result.units)


def test_cpp_header_named_h_goes_to_the_cpp_extractor() -> None:
    source = b"namespace geo {\nclass Shape {\n public:\n  virtual double area() const = 0;\n};\n}\n"
    assert extractor_language("include/geo/shape.h", source) == "cpp"
    assert extractor_language("include/geo/shape.hpp", source) == "cpp"
    assert extractor_language("include/geo/shape.c", source) == "c"  # only `.h` is decided by content
    result = extract_file("include/geo/shape.h", source)
    assert result.language == "cpp"
    assert [u.identifier for u in result.units] == ["include/geo/shape.h", "geo::Shape", "geo::Shape::area"]


def test_syntax_errors_keep_what_parses() -> None:
    source = b"int good(void) { return 1; }\n\nint bad( { \n\nint later(void) { return 2; }\n"
    result = extract("x.c", source)
    assert "good" in {u.identifier for u in result.units}
    assert len(result.warnings) == 1 and result.warnings[0].startswith("x.c: syntax errors (at ")


def test_invalid_utf8_binary_and_empty_input_never_raise() -> None:
    unit = {u.identifier: u for u in extract("x.c", b"/* caf\xe9 \xff */\nint f(void) { return '\xfe'; }\n").units}["f"]
    assert "\ufffd" in (unit.docstring or "")
    binary = extract("blob.c", bytes(range(256)) * 8)
    assert binary.units[0].identifier == "blob.c" and binary.warnings
    empty = extract("empty.h", b"")
    assert [(u.identifier, u.type, u.line_start, u.line_end) for u in empty.units] == [("empty.h", "file", 1, 1)]


def test_deep_nesting_does_not_recurse() -> None:
    depth = 3000
    source = f"int f(void) {{ return {'(' * depth}1{')' * depth}; }}\n".encode()
    assert [u.identifier for u in extract("d.c", source).units] == ["d.c", "f"]
    blocks = "void g(void) {\n" + "{\n" * 400 + "h();\n" + "}\n" * 400 + "}\n"
    units = {u.identifier: u for u in extract("g.c", blocks.encode()).units}
    assert _deps(units["g"], "calls") == {"h": ("h",)}
    guards = "".join(f"#ifdef A{i}\n" for i in range(300)) + "int k(void) { return 0; }\n" + "#endif\n" * 300
    assert "k" in {u.identifier for u in extract("k.c", guards.encode()).units}
