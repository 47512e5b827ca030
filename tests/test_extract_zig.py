"""Zig extraction over the bufkit fixture (a generic type, a file-as-struct, error sets, tests),
plus broken, binary and deep input."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.extract_helpers import deps_by_via, extract_fixture, line_of
from tests.linking_helpers import link_fixture, resolved
from woods.extract import language_for
from woods.extract.zig import extract, module_name
from woods.units import Unit

ROOT = Path(__file__).resolve().parent.parent / "fixtures" / "zig_lib"
RING = "src/ring_buffer.zig"
CRC = "src/Crc32.zig"


def _extract(rel: str) -> dict[str, Unit]:
    return extract_fixture(extract, ROOT, rel, "zig")


def _line(rel: str, needle: str) -> int:
    return line_of(ROOT, rel, needle)


@pytest.mark.parametrize(
    ("path", "name"),
    [("clap.zig", "clap"), ("clap/args.zig", "clap.args"), ("src/main.zig", "main"), ("lib/std/mem.zig", "std.mem"),
     ("tools/gen.zig", "tools.gen")],
)
def test_module_names_from_the_path(path: str, name: str) -> None:
    assert module_name(path) == name


def test_registered_for_zig() -> None:
    assert language_for("src/root.zig") == "zig"


def test_module_imports_and_bindings() -> None:
    units = _extract("src/root.zig")
    root = units["root"]
    assert (root.type, root.line_start, root.line_end) == ("module", 1, _line("src/root.zig", "refAllDecls") + 1)
    assert root.docstring == "bufkit: small fixed-size buffers and checksums for embedded code.\nNothing here allocates after initialisation."
    assert list(deps_by_via(root, "import")) == ["std", "ring_buffer", "Crc32"]
    checksum = units["root.checksum"]
    assert (checksum.type, checksum.signature) == ("function", "pub fn checksum(bytes: []const u8) u32")
    assert checksum.docstring == "Checksum of `bytes` with the standard CRC-32 polynomial."
    assert deps_by_via(checksum, "calls") == {"Crc32.init": ("Crc32.init",)}  # through `const Crc32 = @import(…)`
    test = units["root.test.checksum of the empty slice"]
    assert (test.type, test.signature, test.parent) == ("test", 'test "checksum of the empty slice"', "root")
    assert deps_by_via(test, "calls") == {"root.checksum": ("root.checksum",)}
    assert units["root.test"].line_start == _line("src/root.zig", "test {")


def test_generic_type_members_error_sets_and_self_calls() -> None:
    units = _extract(RING)
    error_set = units["ring_buffer.Error"]
    assert (error_set.type, error_set.signature) == ("error_set", "pub const Error = error")
    assert (error_set.line_start, error_set.line_end) == (_line(RING, "pub const Error"), _line(RING, "Empty,") + 1)
    generic = units["ring_buffer.RingBuffer"]
    assert (generic.type, generic.metadata) == ("function", {"pub": True, "generic": "struct"})
    assert generic.docstring == "A first-in first-out queue of at most `capacity` items, stored inline."
    push = units["ring_buffer.RingBuffer.push"]
    assert (push.type, push.parent, push.signature) == ("method", generic.identifier, "pub fn push(self: *Self, item: T) Error!void")
    assert (push.line_start, push.line_end) == (_line(RING, "pub fn push"), _line(RING, "self.len += 1;") + 1)
    assert push.docstring == "Append `item`, or fail with `error.Full`."
    assert deps_by_via(push, "calls") == {"ring_buffer.RingBuffer.isFull": ("ring_buffer.RingBuffer.isFull",)}  # self.isFull()
    assert "ring_buffer.Error" in deps_by_via(push, "code_reference")


def test_a_file_with_fields_is_a_struct_and_its_functions_are_methods() -> None:
    units = _extract(CRC)
    module = units["Crc32"]
    assert module.metadata == {"fields": ["state"]}
    assert module.docstring == "CRC-32 (IEEE 802.3) computed a byte at a time; this file is the struct."
    update = units["Crc32.update"]
    assert (update.type, update.parent, update.docstring) == ("method", "Crc32", "Feed more bytes into the checksum.")
    assert deps_by_via(update, "calls") == {"Crc32.step": ("Crc32.step",)}
    assert units["Crc32.step"].metadata == {"pub": False}
    test = units["Crc32.test.the check value of 123456789"]
    assert deps_by_via(test, "import") == {"std": ("std",)}  # an inline `@import` belongs to its unit


def test_edges_resolve_across_the_library() -> None:
    _units, edges = link_fixture(extract, ROOT, ("*.zig",))
    assert resolved(edges, "root", "import") == {"ring_buffer", "Crc32"}
    assert resolved(edges, "root.checksum", "calls") == {"Crc32.init"}
    assert resolved(edges, "ring_buffer.RingBuffer.push", "calls") == {"ring_buffer.RingBuffer.isFull"}
    assert resolved(edges, "ring_buffer.test.push then pop returns items in order", "calls") == {"ring_buffer.RingBuffer"}


def test_nested_containers_enums_unions_and_extern_functions() -> None:
    source = (
        b"const Outer = struct {\n    const Inner = enum { a, b, pub fn flip(self: Inner) Inner { return self; } };\n"
        b"    pub fn make() Inner { return Inner.flip(.a); }\n};\nconst U = union(enum) { x: u8 };\n"
        b"extern fn c_abs(x: c_int) c_int;\n"
    )
    units = {u.identifier: u for u in extract("n.zig", source).units}
    assert units["n.Outer.Inner"].type == "enum" and units["n.Outer.Inner.flip"].parent == "n.Outer.Inner"
    assert deps_by_via(units["n.Outer.make"], "calls") == {"n.Outer.Inner.flip": ("n.Outer.Inner.flip",)}
    assert units["n.U"].type == "union" and units["n.c_abs"].metadata == {"pub": False, "extern": True}


def test_syntax_errors_keep_what_parses() -> None:
    source = b"pub fn good() void {}\n\npub fn bad( void {\n\nfn later() void {}\n"
    result = extract("x.zig", source)
    assert "x.good" in {u.identifier for u in result.units}
    assert len(result.warnings) == 1


def test_invalid_utf8_binary_and_empty_input_never_raise() -> None:
    units = extract("x.zig", b"/// caf\xe9\nfn f() []const u8 { return \"\xff\"; }\n").units
    assert units[1].identifier == "x.f" and "\ufffd" in units[1].docstring
    assert extract("bin.zig", bytes(range(256)) * 8).units[0].type == "module"
    assert extract("empty.zig", b"").units == ()


def test_deep_nesting_does_not_recurse() -> None:
    depth = 2000
    source = f"fn f() u32 {{ return {'(' * depth}1{')' * depth}; }}\n".encode()
    assert [u.identifier for u in extract("d.zig", source).units] == ["d", "d.f"]
    nested = "".join(f"const S{i} = struct {{\n" for i in range(200)) + "fn g() void {}\n" + "};\n" * 200
    units = extract("n.zig", nested.encode()).units
    assert len(units) == 202 and units[-1].identifier.endswith(".S199.g")
