"""Ruby extraction: identifiers, ranges, docs, Ruby-lexical dependency candidates, robustness."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from woods.extract import extract_file, rails, ruby
from woods.units import Dependency, FileExtraction, Unit

REPO = Path(__file__).resolve().parents[1]
GEM = "fixtures/ruby_gem"


def extract_fixture(rel: str) -> FileExtraction:
    return extract_file(rel, (REPO / rel).read_bytes())


def extract_source(path: str, text: str) -> FileExtraction:
    return rails.extract(path, text.encode())


def by_id(extraction: FileExtraction) -> dict[str, Unit]:
    return {u.identifier: u for u in extraction.units}


def dep(unit: Unit, target: str, via: str) -> Dependency:
    matches = [d for d in unit.dependencies if d.target == target and d.via == via]
    assert matches, (
        f"{unit.identifier} has no {via} → {target}: {[(d.via, d.target) for d in unit.dependencies]}"
    )
    return matches[0]


def line_of(rel: str, needle: str) -> int:
    lines = (REPO / rel).read_text().splitlines()
    return next(i for i, line in enumerate(lines, 1) if needle in line)


# ----------------------------------------------------------------------------- the gem fixture


def test_gem_units_identifiers_and_types():
    units = by_id(extract_fixture(f"{GEM}/lib/tinycache.rb"))
    assert units["Tinycache"].type == "module"
    assert units["Tinycache::Error"].type == "class"
    assert units["Tinycache.default"].type == "method"  # inside class << self
    assert units["Tinycache.fetch"].type == "method"  # def self.fetch
    assert units["Tinycache.default"].metadata["scope"] == "class"
    assert all(u.language == "ruby" and u.file_path == f"{GEM}/lib/tinycache.rb" for u in units.values())


def test_nested_namespaces_and_parents():
    units = by_id(extract_fixture(f"{GEM}/lib/tinycache/stores/memory_store.rb"))
    store = units["Tinycache::Stores::MemoryStore"]
    assert store.namespace == "Tinycache::Stores"
    # `module Tinycache; module Stores` only wrap the class: namespace wrappers are not units, so
    # the class has no enclosing unit in this file.
    assert "Tinycache::Stores" not in units and "Tinycache" not in units
    assert store.parent is None
    read = units["Tinycache::Stores::MemoryStore#read"]
    assert read.parent == "Tinycache::Stores::MemoryStore"
    assert read.namespace == "Tinycache::Stores::MemoryStore"
    assert units["Tinycache::Stores::MemoryStore.shared"].metadata["scope"] == "class"


def test_line_ranges_and_source_match_the_fixture_text():
    rel = f"{GEM}/lib/tinycache/cache.rb"
    units = by_id(extract_fixture(rel))
    lines = (REPO / rel).read_text().splitlines()
    fetch = units["Tinycache::Cache#fetch"]
    assert fetch.line_start == line_of(rel, "def fetch(key, ttl: 60)")
    assert fetch.source_code == "\n".join(lines[fetch.line_start - 1 : fetch.line_end]).strip()
    assert fetch.source_code.endswith("end")
    cache = units["Tinycache::Cache"]
    assert cache.line_start == line_of(rel, "class Cache")
    assert lines[cache.line_end - 1].strip() == "end"
    assert cache.line_start < fetch.line_start <= fetch.line_end < cache.line_end


def test_signatures_and_docstrings():
    units = by_id(extract_fixture(f"{GEM}/lib/tinycache/cache.rb"))
    fetch = units["Tinycache::Cache#fetch"]
    assert fetch.signature == "def fetch(key, ttl: 60)"
    assert (
        fetch.docstring
        == "Returns the cached value for `key`, computing and storing it with the block on a miss."
    )
    assert fetch.metadata["parameters"] == ["key", "ttl:"]
    cache = units["Tinycache::Cache"]
    assert cache.signature == "class Cache"
    assert (
        cache.docstring
        == "A thread-safe cache in front of a store.\n\nValues expire `ttl` seconds after they were written."
    )
    # `module Tinycache` here only wraps the class: a namespace wrapper is not a unit
    assert "Tinycache" not in units


def test_struct_factory_becomes_a_class_with_methods():
    units = by_id(extract_fixture(f"{GEM}/lib/tinycache/cache.rb"))
    entry = units["Tinycache::Cache::Entry"]
    assert entry.type == "class"
    assert entry.metadata["factory"] == "Struct.new"
    expired = units["Tinycache::Cache::Entry#expired?"]
    assert expired.parent == "Tinycache::Cache::Entry"
    # a block opens no lexical scope: Time is looked up from Cache's nesting outward
    assert dep(expired, "Time.now", "calls").lookup[:2] == (
        "Tinycache::Cache::Time.now",
        "Tinycache::Time.now",
    )


def test_mixins_with_lexical_lookup():
    cache = by_id(extract_fixture(f"{GEM}/lib/tinycache/cache.rb"))["Tinycache::Cache"]
    include = dep(cache, "Instrumentation", "include")
    assert include.lookup == (
        "Tinycache::Cache::Instrumentation",
        "Tinycache::Instrumentation",
        "Instrumentation",
    )
    assert dep(cache, "Naming", "extend").lookup[1] == "Tinycache::Naming"


def test_require_relative_resolves_against_the_file():
    module = by_id(extract_fixture(f"{GEM}/lib/tinycache.rb"))["Tinycache"]
    required = dep(module, "tinycache/cache", "require")
    assert required.lookup == (f"{GEM}/lib/tinycache/cache.rb",)
    # The file's top-level requires serve its outermost units (the wrapper module is not one).
    plain = by_id(extract_fixture(f"{GEM}/lib/tinycache/cache.rb"))["Tinycache::Cache"]
    assert dep(plain, "monitor", "require").lookup[0] == "lib/monitor.rb"


def test_calls_on_constants_offer_method_then_class_candidates():
    default = by_id(extract_fixture(f"{GEM}/lib/tinycache.rb"))["Tinycache.default"]
    call = dep(default, "Stores::MemoryStore.new", "calls")
    assert call.lookup == (
        "Tinycache::Stores::MemoryStore.new",
        "Stores::MemoryStore.new",
        "Tinycache::Stores::MemoryStore",
        "Stores::MemoryStore",
    )


SNIPPET = """\
module A
  class B
    def run
      Foo.bar
      ::Top
      Foo::Baz
      Foo.bar
      Later
      PayJob.perform_later(1)
      WelcomeMailer.hello(user).deliver_later
    end
  end

  class C::D < Base
    def go
      Thing
    end
  end
end
"""


def test_lookup_follows_ruby_nesting():
    units = by_id(extract_source("lib/a.rb", SNIPPET))
    run = units["A::B#run"]
    assert dep(run, "Foo::Baz", "code_reference").lookup == ("A::B::Foo::Baz", "A::Foo::Baz", "Foo::Baz")
    assert dep(run, "Top", "code_reference").lookup == ("Top",)
    # compact `class C::D` puts only A::C::D and A in Ruby's nesting; A::C comes after the top level
    go = units["A::C::D#go"]
    assert dep(go, "Thing", "code_reference").lookup == ("A::C::D::Thing", "A::Thing", "Thing", "A::C::Thing")
    assert dep(units["A::C::D"], "Base", "superclass").lookup == ("A::Base", "Base")
    assert units["A::C::D"].namespace == "A::C"


def test_dependencies_are_deduplicated_in_first_occurrence_order():
    run = by_id(extract_source("lib/a.rb", SNIPPET))["A::B#run"]
    pairs = [(d.via, d.target) for d in run.dependencies]
    assert pairs.count(("calls", "Foo.bar")) == 1
    assert (
        pairs.index(("calls", "Foo.bar"))
        < pairs.index(("code_reference", "Top"))
        < pairs.index(("code_reference", "Later"))
    )
    # the receiver of a call is not also reported as a bare code reference
    assert ("code_reference", "Foo") not in pairs


def test_job_and_mailer_calls_reach_instance_methods_then_the_class():
    run = by_id(extract_source("lib/a.rb", SNIPPET))["A::B#run"]
    job = dep(run, "PayJob.perform_later", "calls")
    assert job.lookup.index("PayJob#perform") < job.lookup.index("PayJob")
    assert job.lookup[-1] == "PayJob"
    mail = dep(run, "WelcomeMailer.hello", "calls")
    assert "WelcomeMailer#hello" in mail.lookup


def test_visibility_sections_and_explicit_visibility():
    source = """\
class Widget
  def a; end
  private def b; end
  def c; end
  protected
  def d; end
  public
  def e; end
  private :e
  def self.f; end
  private_class_method :f
end
"""
    units = by_id(extract_source("lib/widget.rb", source))
    visibility = {
        k.split("Widget", 1)[1]: u.metadata["visibility"] for k, u in units.items() if u.type == "method"
    }
    assert visibility == {
        "#a": "public",
        "#b": "private",
        "#c": "public",
        "#d": "protected",
        "#e": "private",
        ".f": "private",
    }


def test_top_level_methods_use_the_file_path_spelling():
    units = by_id(extract_source("bin/tool.rb", "def helper(x)\n  Thing.call(x)\nend\n"))
    helper = units["bin/tool.rb#helper"]
    assert helper.parent is None and helper.namespace is None
    assert helper.metadata["owner"] == "Object"
    assert dep(helper, "Thing.call", "calls").lookup == ("Thing.call", "Thing")


def test_concern_class_methods_block_defines_singleton_methods():
    source = (
        "module Sluggable\n  class_methods do\n    def find_by_slug(s); end\n  end\n  def slug; end\nend\n"
    )
    units = by_id(extract_source("lib/sluggable.rb", source))
    assert "Sluggable.find_by_slug" in units
    assert "Sluggable#slug" in units


def test_reopened_class_yields_one_unit_per_file():
    first = extract_source("lib/a/user_ext.rb", "class User\n  def one; end\nend\n")
    second = extract_source("lib/b/user_ext.rb", "class User\n  def two; end\nend\n")
    a, b = by_id(first)["User"], by_id(second)["User"]
    assert (a.identifier, a.type) == (b.identifier, b.type)
    assert a.file_path != b.file_path
    assert "User#one" in by_id(first) and "User#two" in by_id(second)


def test_units_are_outermost_first_in_source_order():
    units = extract_fixture(f"{GEM}/lib/tinycache/stores/memory_store.rb").units
    starts = [(u.line_start, -u.line_end) for u in units]
    assert starts == sorted(starts)
    assert units[0].identifier == "Tinycache::Stores::MemoryStore"


def test_plain_gem_classes_are_not_rails_types():
    for rel in ("lib/tinycache/cache.rb", "lib/tinycache/instrumentation.rb"):
        types = {u.type for u in extract_fixture(f"{GEM}/{rel}").units}
        assert types <= {"class", "module", "method"}


def test_rakefile_tasks_outside_rails():
    units = by_id(extract_fixture(f"{GEM}/Rakefile"))
    version = units["version"]
    assert version.type == "rake_task"
    assert version.docstring == "Print the gem version"
    assert units["default"].metadata["prerequisites"] == ["test"]


# ----------------------------------------------------------------------------- robustness


def test_syntax_errors_keep_what_parses_and_warn():
    source = "module A\nclass Foo < Base\n  def ok(a)\n    Bar.baz\n  end\n\n  def broken(\n    x = [1, 2\n  end\n\n  def later; Qux; end\nend\nend\n"
    extraction = extract_source("lib/broken.rb", source)
    assert extraction.warnings and "syntax errors" in extraction.warnings[0]
    units = by_id(extraction)
    assert units["A::Foo#ok"].line_start == 3
    assert units["A::Foo#ok"].parent == "A::Foo"
    assert "A::Foo#later" in units
    assert units["A::Foo"].metadata.get("recovered") is True


def test_invalid_utf8_never_raises():
    raw = b'# caf\xe9 doc\nclass Caf\xc3\xa9\n  def x; "\xff\xfe"; end\nend\n'
    units = by_id(rails.extract("lib/bad.rb", raw))
    assert "Café" in units
    assert "\ufffd" in units["Café#x"].source_code
    assert units["Café"].docstring is not None and "\ufffd" in units["Café"].docstring


def test_empty_file():
    extraction = rails.extract("lib/empty.rb", b"")
    assert extraction.units == () and extraction.warnings == ()


def test_mangled_fixtures_never_raise():
    rng = random.Random(7)
    files = sorted((REPO / "fixtures").rglob("*.rb"))[:25]
    assert files
    for path in files:
        data = path.read_bytes()
        for _ in range(4):
            cut = rng.randrange(len(data) + 1)
            noise = bytes(rng.randrange(256) for _ in range(rng.randrange(1, 6)))
            mangled = data[:cut] + noise + data[cut + rng.randrange(0, 40) :]
            extraction = rails.extract(str(path.relative_to(REPO)), mangled)
            for unit in extraction.units:
                assert 1 <= unit.line_start <= unit.line_end


@pytest.mark.parametrize(
    ("path", "required", "expected"),
    [
        ("lib/x/y.rb", "../z", "lib/z.rb"),
        ("lib/x.rb", "x/sub", "lib/x/sub.rb"),
        ("app.rb", "./lib/w.rb", "lib/w.rb"),
    ],
)
def test_require_relative_lookup(path: str, required: str, expected: str):
    assert ruby.require_lookup("require_relative", required, path) == (expected,)
