"""Go extraction over the URL-shortener fixture module, plus broken, binary and deep input."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.extract_helpers import deps_by_via, extract_fixture, line_of
from woods.extract.go import extract, import_name, package_path
from woods.units import Unit

ROOT = Path(__file__).resolve().parent.parent / "fixtures" / "go_module"
MODULE = "github.com/acme/shortener"


def _extract(rel: str) -> dict[str, Unit]:
    return extract_fixture(extract, ROOT, rel, "go")


def _line_of(rel: str, needle: str) -> int:
    return line_of(ROOT, rel, needle)


_deps = deps_by_via


@pytest.mark.parametrize(
    ("path", "name"),
    [("net/http", "http"), ("gopkg.in/yaml.v3", "yaml"), ("github.com/x/y/v2", "y"), ("github.com/go-redis/redis", "redis")],
)
def test_import_names(path: str, name: str) -> None:
    assert import_name(path) == name


def test_package_path_is_the_directory() -> None:
    assert package_path("internal/store/memory.go", "store") == "internal/store"
    assert package_path("main.go", "main") == "main"


def test_structs_interfaces_and_methods_with_receivers() -> None:
    rel = "internal/store/memory.go"
    units = _extract(rel)
    store = units["internal/store.MemoryStore"]
    assert (store.type, store.parent, store.namespace) == ("struct", None, "internal/store")
    assert store.signature == "type MemoryStore struct"
    assert store.docstring == "MemoryStore is a Store kept in a map, safe for concurrent use."
    assert store.line_start == _line_of(rel, "type MemoryStore struct")
    save = units["internal/store.MemoryStore.Save"]
    assert (save.type, save.parent, save.namespace) == ("method", store.identifier, store.identifier)
    assert save.metadata["receiver"] == {"name": "m", "type": "MemoryStore", "pointer": True}
    assert save.signature == "func (m *MemoryStore) Save(code, url string) error"
    assert save.line_start == _line_of(rel, "func (m *MemoryStore) Save")
    assert save.line_end == save.line_start + 5
    length = units["internal/store.MemoryStore.Len"]
    assert length.metadata["receiver"]["pointer"] is False
    assert units["internal/store.entry"].metadata["exported"] is False
    # The receiver's own type is not a reference of the method.
    assert "internal/store.MemoryStore" not in _deps(save, "code_reference")

    iface = _extract("internal/store/store.go")
    contract = iface["internal/store.Store"]
    assert contract.type == "interface"
    resolve = iface["internal/store.Store.Resolve"]
    assert (resolve.type, resolve.parent, resolve.metadata["abstract"]) == ("method", contract.identifier, True)
    assert resolve.docstring == "Resolve returns the URL for a code and increments its hit counter."


def test_calls_imports_and_type_references() -> None:
    units = _extract("internal/shorten/service.go")
    shorten = units["internal/shorten.Service.Shorten"]
    calls = _deps(shorten, "calls")
    assert calls["internal/shorten.validate"] == ("internal/shorten.validate",)  # same package
    assert "internal/shorten.Encode" in calls
    assert "internal/shorten.Service.link" in calls  # s.link() on the receiver
    assert "fmt.Errorf" in calls
    assert "fmt" in _deps(shorten, "import")
    # Only the imports a unit uses are its import edges.
    assert "net/url" not in _deps(shorten, "import")
    service = units["internal/shorten.Service"]
    assert f"{MODULE}/internal/store" in _deps(service, "import")
    assert f"{MODULE}/internal/store.Store" in _deps(service, "code_reference")
    main = _extract("cmd/shortener/main.go")["cmd/shortener.main"]
    assert f"{MODULE}/internal/shorten.NewService" in _deps(main, "calls")
    assert not any(t.endswith(".len") for t in _deps(main, "calls"))


def test_grouped_type_declarations_and_init_functions() -> None:
    rel = "internal/httpapi/handler.go"
    units = _extract(rel)
    handler = units["internal/httpapi.Handler"]
    assert handler.line_start == _line_of(rel, "Handler struct {")
    assert handler.docstring == "Handler serves POST /links (create) and GET /{code} (redirect)."
    assert handler.signature == "type Handler struct"
    assert units["internal/httpapi.createRequest"].type == "struct"
    ids = list(_extract("cmd/shortener/main.go"))
    assert ids == ["cmd/shortener.main", "cmd/shortener.init(main.go)"]


def test_generics_aliases_and_type_parameters() -> None:
    source = b"package set\n\ntype ID = string\n\ntype Set[T comparable] map[T]struct{}\n\nfunc Of[T comparable](xs ...T) Set[T] { return Set[T]{} }\n"
    units = {u.identifier: u for u in extract("pkg/set/set.go", source).units}
    assert units["pkg/set.ID"].metadata["alias"] is True and units["pkg/set.ID"].type == "type"
    of = units["pkg/set.Of"]
    assert set(_deps(of, "code_reference")) == {"pkg/set.Set"}


def test_syntax_errors_keep_what_parses() -> None:
    source = b"package x\n\nfunc Good() int { return 1 }\n\nfunc Bad( { \n\nfunc Later() {}\n"
    result = extract("x/x.go", source)
    assert "x.Good" in {u.identifier for u in result.units}
    assert len(result.warnings) == 1


def test_invalid_utf8_never_raises() -> None:
    source = b"package x\n\n// caf\xe9 \xff\nfunc F() string { return \"\xfe\" }\n"
    unit = extract("x/x.go", source).units[0]
    assert unit.identifier == "x.F" and "\ufffd" in unit.docstring


def test_deep_nesting_does_not_recurse() -> None:
    depth = 2000
    source = f"package d\n\nfunc F() int {{ return {'(' * depth}1{')' * depth} }}\n".encode()
    units = extract("d/d.go", source).units
    assert [u.identifier for u in units] == ["d.F"]
    blocks = "func G() {\n" + "{\n" * 300 + "H()\n" + "}\n" * 300 + "}\n"
    units = extract("d/g.go", b"package d\n\n" + blocks.encode()).units
    assert _deps(units[0], "calls") == {"d.H": ("d.H",)}
