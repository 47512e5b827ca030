"""Rust extraction over the `ttlcache` fixture crate, plus broken, binary and deep input."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.extract_helpers import deps_by_via, extract_fixture, line_of
from woods.extract.rust import extract, module_path
from woods.units import Unit

ROOT = Path(__file__).resolve().parent.parent / "fixtures" / "rust_crate"


def _extract(rel: str) -> dict[str, Unit]:
    return extract_fixture(extract, ROOT, rel, "rust")


def _line_of(rel: str, needle: str) -> int:
    return line_of(ROOT, rel, needle)


_deps = deps_by_via


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("src/lib.rs", "crate"),
        ("src/main.rs", "crate"),
        ("src/cache/mod.rs", "crate::cache"),
        ("src/cache/lru.rs", "crate::cache::lru"),
        ("crates/core/src/lib.rs", "crate"),
        ("src/bin/cachectl.rs", "crate::bin::cachectl"),
    ],
)
def test_module_paths(path: str, expected: str) -> None:
    assert module_path(path) == expected


def test_structs_impl_methods_and_ranges() -> None:
    rel = "src/cache/lru.rs"
    units = _extract(rel)
    module = units["crate::cache::lru"]
    assert (module.type, module.parent, module.namespace) == ("module", None, "crate::cache")
    assert module.docstring == "The LRU cache with per-entry expiry."
    cache = units["crate::cache::lru::LruCache"]
    assert (cache.type, cache.parent, cache.namespace) == ("struct", module.identifier, module.identifier)
    assert cache.docstring.startswith("A bounded cache: entries expire after `ttl`")
    assert cache.signature == (
        "pub struct LruCache<V, P: EvictionPolicy = LeastRecentlyUsed, C: Clock = SystemClock>"
    )
    get = units["crate::cache::lru::LruCache::get"]
    assert (get.type, get.parent, get.namespace) == ("method", cache.identifier, cache.identifier)
    assert get.signature == "pub fn get(&mut self, key: &str) -> Option<V>"
    assert get.line_start == _line_of(rel, "pub fn get(&mut self")
    assert get.line_end == _line_of(rel, "pub fn put(") - 3
    assert get.metadata["visibility"] == "pub"
    private = units["crate::cache::lru::LruCache::remove_with"]
    assert private.metadata["visibility"] == "private"


def test_use_trees_become_absolute_imports() -> None:
    units = _extract("src/cache/lru.rs")
    imports = _deps(units["crate::cache::lru"], "import")
    assert "crate::cache::policy::EvictionPolicy" in imports  # super::policy::{…}
    assert "crate::cache::Removal" in imports  # super::Removal
    assert "crate::clock::SystemClock" in imports
    assert "std::time::Duration" in imports
    lib = _extract("src/lib.rs")
    # `pub use cache::…` in the crate root names the child module declared by `pub mod cache;`.
    assert "crate::cache::lru::LruCache" in _deps(lib["crate"], "import")


def test_calls_resolve_through_self_self_type_and_use() -> None:
    units = _extract("src/cache/lru.rs")
    put = units["crate::cache::lru::LruCache::put"]
    assert _deps(put, "calls") == {
        "crate::cache::lru::LruCache::remove_with": ("crate::cache::lru::LruCache::remove_with",)
    }
    new = units["crate::cache::lru::LruCache::new"]
    calls = _deps(new, "calls")
    assert "crate::cache::lru::LruCache::with_parts" in calls
    assert "crate::cache::policy::LeastRecentlyUsed::default" in calls
    lib = _extract("src/lib.rs")
    assert "std::time::Duration::from_secs" in _deps(lib["crate::lru_with_ttl"], "calls")
    assert "crate::cache::lru::LruCache" in _deps(lib["crate::lru_with_ttl"], "code_reference")


def test_traits_trait_methods_and_implements() -> None:
    rel = "src/cache/policy.rs"
    units = _extract(rel)
    trait = units["crate::cache::policy::EvictionPolicy"]
    assert trait.type == "trait"
    touch = units["crate::cache::policy::EvictionPolicy::touch"]
    assert (touch.type, touch.parent, touch.metadata["abstract"]) == ("method", trait.identifier, True)
    assert touch.docstring == "Records that `key` was read or written."
    touch_all = units["crate::cache::policy::EvictionPolicy::touch_all"]
    assert "crate::cache::policy::EvictionPolicy::touch" in _deps(touch_all, "calls")
    lru = units["crate::cache::policy::LeastRecentlyUsed"]
    assert _deps(lru, "implements") == {
        "crate::cache::policy::EvictionPolicy": ("crate::cache::policy::EvictionPolicy",)
    }
    # Attributes belong to the item: the range starts at `#[derive…]`.
    assert lru.line_start == _line_of(rel, "pub struct LeastRecentlyUsed") - 1
    assert lru.metadata["attributes"] == ["#[derive(Debug, Default)]"]
    impl_touch = units["crate::cache::policy::LeastRecentlyUsed::touch"]
    assert impl_touch.metadata["trait"] == "EvictionPolicy"
    assert units["crate::cache::policy::FirstInFirstOut::touch"].parent == "crate::cache::policy::FirstInFirstOut"


def test_enums_inner_docs_and_display_impls() -> None:
    cache_mod = _extract("src/cache/mod.rs")
    assert cache_mod["crate::cache"].docstring == "The cache itself and its eviction policies."
    assert cache_mod["crate::cache::Removal"].type == "enum"
    metrics = _extract("src/metrics.rs")
    assert "std::fmt::Display" in _deps(metrics["crate::metrics::Metrics"], "implements")
    assert metrics["crate::metrics::Metrics::fmt"].metadata["trait"] == "fmt::Display"


def test_inline_modules_nested_functions_and_duplicates() -> None:
    source = b"""mod inner {
    pub fn helper() -> u32 { 1 }
    pub type Alias = u32;
}
struct S;
impl std::fmt::Debug for S { fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result { Ok(()) } }
impl std::fmt::Display for S { fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result { Ok(()) } }
fn outer() -> u32 { fn nested() -> u32 { 2 } nested() + inner::helper() }
"""
    units = {u.identifier: u for u in extract("src/util.rs", source).units}
    assert units["crate::util::inner"].type == "module"
    assert units["crate::util::inner::helper"].parent == "crate::util::inner"
    assert units["crate::util::inner::Alias"].type == "type_alias"
    assert {"crate::util::S::fmt", "crate::util::S::fmt#2"} <= set(units)
    assert units["crate::util::outer::nested"].type == "function"
    calls = _deps(units["crate::util::outer"], "calls")
    assert calls["crate::util::outer::nested"][0] == "crate::util::outer::nested"
    assert "crate::util::inner::helper" in calls


def test_syntax_errors_keep_what_parses() -> None:
    source = b"pub fn good() -> u8 { 1 }\nfn broken( { \npub struct Later;\n"
    result = extract("src/b.rs", source)
    assert "crate::b::good" in {u.identifier for u in result.units}
    assert len(result.warnings) == 1


def test_invalid_utf8_never_raises() -> None:
    source = b"/// caf\xe9 \xff\npub fn f() -> &'static str { \"\xfe\" }\n"
    unit = extract("src/x.rs", source).units[1]
    assert unit.identifier == "crate::x::f" and "\ufffd" in unit.docstring


def test_deep_nesting_does_not_recurse() -> None:
    depth = 2000
    source = f"fn f() -> u32 {{ {'(' * depth}1{')' * depth} }}\n".encode()
    assert [u.identifier for u in extract("src/d.rs", source).units] == ["crate::d", "crate::d::f"]
    nested = "".join(f"mod m{i} {{\n" for i in range(300)) + "fn leaf() {}\n" + "}\n" * 300
    units = extract("src/lib.rs", nested.encode()).units
    assert len(units) == 302
    assert units[-1].identifier == "crate::" + "::".join(f"m{i}" for i in range(300)) + "::leaf"
    assert units[-1].parent == units[-2].identifier and units[-1].line_start == 301


def test_items_inside_conditional_compilation_macros_are_units() -> None:
    """tokio-style `cfg_rt! { … }` wrappers hold items: they are units at their exact lines, with
    their own docs, and the wrapper's text stays as written in the module's source."""
    source = (
        "//! Blocking tasks.\n"
        "cfg_rt! {\n"
        "    /// Runs blocking code on a dedicated thread.\n"
        "    pub fn spawn_blocking<F>(f: F) -> u32 {\n"
        "        1\n"
        "    }\n"
        "    cfg_fs! {\n"
        "        pub(crate) struct Pool;\n"
        "    }\n"
        "}\n"
        "fn top() { cfg_rt! { let x = 1; } }\n"
    )
    units = {u.identifier: u for u in extract("src/task/blocking.rs", source.encode()).units}
    spawn = units["crate::task::blocking::spawn_blocking"]
    assert (spawn.type, spawn.line_start, spawn.line_end) == ("function", 4, 6)  # docs are docstring, as elsewhere
    assert spawn.docstring == "Runs blocking code on a dedicated thread."
    assert spawn.source_code.startswith("pub fn spawn_blocking") and spawn.source_code.endswith("    }")
    pool = units["crate::task::blocking::Pool"]
    assert (pool.type, pool.line_start) == ("struct", 8)
    module = units["crate::task::blocking"]
    assert module.docstring == "Blocking tasks." and "cfg_rt! {" in module.source_code  # the text as written
    assert set(units) == {"crate::task::blocking", "crate::task::blocking::spawn_blocking",
                          "crate::task::blocking::Pool", "crate::task::blocking::top"}


def test_macro_rules_definitions_are_units() -> None:
    source = "/// Waits on several branches at once.\nmacro_rules! select {\n    () => {};\n}\n"
    units = {u.identifier: u for u in extract("src/macros/select.rs", source.encode()).units}
    select = units["crate::macros::select::select"]
    assert (select.type, select.line_start, select.line_end) == ("macro", 2, 4)
    assert select.docstring == "Waits on several branches at once."


def test_paths_written_with_spaces_comments_or_generics_resolve_like_plain_ones() -> None:
    # Plainly written paths are read from the text; any other spelling walks the tree: both agree.
    source = b"""use crate::store::Store;
use crate :: store :: { Entry as E, self };
fn run() {
    crate::store::open();
    crate :: store /* the module */ :: open();
    Store::<u8>::create();
    r#Store::build();
    let s: store::Store = store :: Store::default();
}
"""
    units = {u.identifier: u for u in extract("src/lib.rs", source).units}
    assert list(_deps(units["crate"], "import")) == ["crate::store::Store", "crate::store::Entry", "crate::store"]
    run = units["crate::run"]
    assert list(_deps(run, "calls")) == [
        "crate::store::open", "crate::store::Store::create", "crate::r#Store::build", "crate::store::Store::default"
    ]
    assert list(_deps(run, "code_reference")) == ["crate::store::Store"]


def test_items_inside_functions_resolve_under_a_file_path_with_a_colon() -> None:
    # Each function's call of its own nested `inner` resolves to that one. `src/a:/b.rs` gives the
    # module `crate::a:::b`, whose `:::` keeps the one-by-one check of which identifiers continue
    # a function's.
    source = b"""fn one() {
    fn inner() {}
    inner();
}
fn two() {
    fn inner() {}
    inner();
}
"""
    for path, module in (("src/a:/b.rs", "crate::a:::b"), ("src/a/b.rs", "crate::a::b")):
        units = {u.identifier: u for u in extract(path, source).units}
        for name in ("one", "two"):
            assert list(_deps(units[f"{module}::{name}"], "calls")) == [f"{module}::{name}::inner"]
