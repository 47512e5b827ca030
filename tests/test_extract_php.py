"""PHP extraction over the `acme/stash` fixture package, plus broken, binary and deep input."""

from __future__ import annotations

from pathlib import Path

from tests.extract_helpers import deps_by_via, extract_fixture, extract_tree, line_of, linked_edges
from woods.extract.php import extract
from woods.units import Unit

ROOT = Path(__file__).resolve().parent.parent / "fixtures" / "php_pkg"
NS = "Acme\\Stash\\Cache"


def _extract(rel: str) -> dict[str, Unit]:
    return extract_fixture(extract, ROOT, rel, "php")


def _line_of(rel: str, needle: str) -> int:
    return line_of(ROOT, rel, needle)


_deps = deps_by_via


def test_classes_methods_and_constructors() -> None:
    rel = "src/Cache/ArrayCache.php"
    units = _extract(rel)
    cls = f"{NS}\\ArrayCache"
    assert list(units) == [cls, f"{cls}::__construct", f"{cls}::withPrefix", f"{cls}::count", f"{cls}::read",
                           f"{cls}::write", f"{cls}::forget"]
    array = units[cls]
    assert (array.type, array.parent, array.namespace) == ("class", None, NS)
    assert array.signature == "final class ArrayCache extends AbstractCache"
    assert array.docstring == "A cache kept in a PHP array: lives as long as the request."
    assert (array.line_start, array.line_end) == (_line_of(rel, "final class ArrayCache"), 46)
    assert array.metadata == {"modifiers": ["final"], "extends": ["AbstractCache"]}
    assert _deps(array, "superclass") == {f"{NS}\\AbstractCache": (f"{NS}\\AbstractCache",)}
    assert _deps(array, "import") == {"Acme\\Stash\\stash_key": ("Acme\\Stash\\stash_key",)}
    constructor = units[f"{cls}::__construct"]
    assert (constructor.type, constructor.parent, constructor.namespace) == ("constructor", cls, cls)
    assert constructor.signature == "public function __construct(private readonly string $prefix = '')"
    with_prefix = units[f"{cls}::withPrefix"]
    assert with_prefix.metadata == {"modifiers": ["public", "static"]}
    assert with_prefix.line_start == _line_of(rel, "public static function withPrefix")
    assert with_prefix.line_end == with_prefix.line_start + 3
    assert _deps(with_prefix, "calls") == {"Acme\\Stash\\stash_key": ("Acme\\Stash\\stash_key",)}  # `use function`


def test_abstract_methods_traits_and_this_calls() -> None:
    units = _extract("src/Cache/AbstractCache.php")
    cls = f"{NS}\\AbstractCache"
    abstract = units[cls]
    assert abstract.metadata["traits"] == ["ExpiresItems"]
    assert _deps(abstract, "include") == {f"{NS}\\Concerns\\ExpiresItems": (f"{NS}\\Concerns\\ExpiresItems",)}
    assert _deps(abstract, "implements") == {f"{NS}\\CacheInterface": (f"{NS}\\CacheInterface",)}
    read = units[f"{cls}::read"]
    assert (read.signature, read.metadata["abstract"]) == ("abstract protected function read(string $key): mixed", True)
    get = units[f"{cls}::get"]
    assert set(_deps(get, "calls")) == {f"{cls}::assertValidKey", f"{cls}::isExpired", f"{cls}::forget", f"{cls}::read"}
    check = units[f"{cls}::assertValidKey"]
    assert _deps(check, "code_reference") == {  # `use … as BadKey`
        "Acme\\Stash\\Exception\\InvalidKeyException": ("Acme\\Stash\\Exception\\InvalidKeyException",)
    }
    assert _deps(check, "calls") == {f"{NS}\\strlen": (f"{NS}\\strlen", "strlen")}  # global fallback


def test_interfaces_and_phpdoc() -> None:
    units = _extract("src/Cache/CacheInterface.php")
    iface = units[f"{NS}\\CacheInterface"]
    assert (iface.type, iface.docstring) == ("interface", "What every cache store can do.")
    assert _deps(iface, "superclass") == {"Countable": ("Countable",)}  # `\Countable` is absolute
    get = units[f"{NS}\\CacheInterface::get"]
    assert get.docstring == "The cached value, or $default when the key is missing or expired."
    assert get.metadata["abstract"] is True
    trait = _extract("src/Cache/Concerns/ExpiresItems.php")[f"{NS}\\Concerns\\ExpiresItems"]
    assert (trait.type, trait.namespace) == ("trait", f"{NS}\\Concerns")


def test_functions_guarded_by_function_exists_and_templates() -> None:
    rel = "src/helpers.php"
    units = _extract(rel)
    assert list(units) == ["Acme\\Stash\\stash_key", "Acme\\Stash\\stash"]
    key = units["Acme\\Stash\\stash_key"]
    assert (key.type, key.parent, key.namespace) == ("function", None, "Acme\\Stash")
    assert key.docstring == "A cache key made safe for every store: lower-case, no spaces."
    assert key.line_start == _line_of(rel, "function stash_key(")
    stash = units["Acme\\Stash\\stash"]
    assert _deps(stash, "calls") == {f"{NS}\\ArrayCache::withPrefix": (f"{NS}\\ArrayCache::withPrefix",)}
    template = _extract("templates/item.phtml")["templates/item.phtml"]
    assert (template.type, template.line_start, template.line_end) == ("file", 1, 5)


def test_edges_resolve_across_files() -> None:
    edges = linked_edges([u for f in extract_tree(ROOT) for u in f.units])
    cls = f"{NS}\\ArrayCache"
    assert edges[cls][(f"{NS}\\AbstractCache", "superclass")] == f"{NS}\\AbstractCache"
    assert edges[f"{NS}\\AbstractCache"][(f"{NS}\\Concerns\\ExpiresItems", "include")] == f"{NS}\\Concerns\\ExpiresItems"
    assert edges[f"{cls}::withPrefix"][("Acme\\Stash\\stash_key", "calls")] == "Acme\\Stash\\stash_key"
    assert edges["Acme\\Stash\\stash"][(f"{cls}::withPrefix", "calls")] == f"{cls}::withPrefix"
    trait_method = f"{NS}\\Concerns\\ExpiresItems::isExpired"  # `$this->isExpired()` of a used trait
    assert edges[f"{NS}\\AbstractCache::get"][(trait_method, "calls")] == trait_method
    assert (f"{NS}\\strlen", "calls") not in edges[f"{NS}\\AbstractCache::assertValidKey"]


def test_namespace_blocks_parent_calls_and_static_calls() -> None:
    source = b"""<?php
namespace App\\Models {
    use App\\Support\\Str;
    class User extends Model {
        public function save(): bool { parent::save(); static::boot(); return Str::slug('x') !== ''; }
    }
}
namespace {
    function helper() { return new \\App\\Models\\User(); }
}
"""
    units = {u.identifier: u for u in extract("x.php", source).units}
    save = units["App\\Models\\User::save"]
    assert set(_deps(save, "calls")) == {"App\\Models\\Model::save", "App\\Models\\User::boot", "App\\Support\\Str::slug"}
    assert units["helper"].namespace is None
    assert _deps(units["helper"], "code_reference") == {"App\\Models\\User": ("App\\Models\\User",)}


def test_syntax_errors_keep_what_parses() -> None:
    source = b"<?php\nfunction good() { return 1; }\nfunction bad( { \nfunction later() {}\n"
    result = extract("x.php", source)
    assert "good" in {u.identifier for u in result.units}
    assert len(result.warnings) == 1


def test_invalid_utf8_binary_and_empty_input_never_raise() -> None:
    units = {u.identifier: u for u in extract("x.php", b"<?php\n/** caf\xe9 \xff */\nfunction f() { return '\xfe'; }\n").units}
    assert "\ufffd" in (units["f"].docstring or "")
    assert [u.type for u in extract("blob.php", bytes(range(256)) * 8).units] == ["file"]
    assert [(u.identifier, u.type) for u in extract("e.php", b"").units] == [("e.php", "file")]


def test_deep_nesting_does_not_recurse() -> None:
    depth = 3000
    source = f"<?php\nfunction f() {{ return {'(' * depth}g(){')' * depth}; }}\nfunction g() {{ return 1; }}\n".encode()
    units = {u.identifier: u for u in extract("d.php", source).units}
    assert _deps(units["f"], "calls") == {"g": ("g",)}
    blocks = "<?php\n" + "if (true) {\n" * 300 + "function h() {}\n" + "}\n" * 300
    assert [u.identifier for u in extract("h.php", blocks.encode()).units] == ["h"]


def test_this_calls_read_from_text_or_tree_alike() -> None:
    """`$this->m()` names come from the text in a clean file and from the tree otherwise (a
    variable or braced name, a comment, a non-ASCII name); both give the same edges."""
    source = b"""<?php
namespace App;
class Job {
    public function run($m) {
        $this->$m();
        $this /* why */ -> step();
        $this->{'dyn'}();
        $this->\xc3\xbcn();
        $this->plain();
    }
}
"""
    expected = ["App\\Job::$m", "App\\Job::step", "App\\Job::'dyn'", "App\\Job::\u00fcn", "App\\Job::plain"]
    clean = {u.identifier: u for u in extract("a.php", source).units}
    assert [d.target for d in clean["App\\Job::run"].dependencies] == expected
    broken = extract("b.php", source.replace(b"$this->plain();", b"$this->plain(); }} class {"))
    assert broken.warnings
    assert [d.target for d in {u.identifier: u for u in broken.units}["App\\Job::run"].dependencies] == expected
