"""The Ruby reference walk reuses each method's references inside its class body (one walk per
method instead of two); the result must be exactly the plain walk's, on every Ruby file of the
fixtures and on a real-sized generated file with the shapes that matter (nested classes, blocks,
`class << self`, `private def`, singleton methods, methods inside blocks)."""

from __future__ import annotations

from pathlib import Path

import pytest

from woods.extract import ruby

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
RUBY_FILES = sorted(p for p in FIXTURES.rglob("*.rb"))


def _generated(classes: int = 40) -> str:
    parts = []
    for i in range(classes):
        parts.append(
            f"""module Outer{i}
  class Thing{i} < Base::Record
    include Concerns::Tracked
    CONST_{i} = Settings::Value.fetch(:x)
    class << self
      def build(attrs) = Factory::Builder.new(Thing{i}, attrs)
    end
    private def helper_{i}
      Util::Math.clamp(Other::Thing.value, ::Top::Level)
    end
    def self.load(id)
      Repo::Store.find(id).tap {{ |r| Audit::Log.write(r) }}
    end
    scope :active, -> {{ where(state: States::ACTIVE) }}
    included do
      def inside_block
        Hooks::Registry.call(self)
      end
    end
    class Inner{i}
      def deep
        Thing{i}.helper && Outer{i}::Thing{i}::CONST_{i}
      end
    end
    def plain(a, b = Defaults::B)
      require "json"
      JSON.parse(a).map {{ |x| Mapper::Row.new(x, Columns::ALL) }}
    end
  end
end
"""
        )
    return "\n".join(parts)


@pytest.mark.parametrize("source_path", [*RUBY_FILES, None], ids=[*(p.name for p in RUBY_FILES), "generated"])
def test_reused_method_references_equal_the_plain_walk(source_path):
    data = source_path.read_bytes() if source_path is not None else _generated().encode()
    path = "app/models/generated.rb" if source_path is None else source_path.relative_to(FIXTURES).as_posix()
    walked, _warnings = ruby.walk_file(path, data)
    known = {
        (d.node.id, d.nesting): ruby.collect_references(d.node, walked.source, d.nesting, path)
        for d in walked.drafts
        if d.kind == "method"
    }
    compared = 0
    for draft in walked.drafts:
        if draft.kind == "method" or draft.body is None:
            continue
        plain = ruby.collect_references(draft.body, walked.source, draft.nesting, path)
        reused = ruby.collect_references(draft.body, walked.source, draft.nesting, path, known=known)
        assert reused == plain, draft.identifier
        compared += len(plain)
    if source_path is None:
        assert compared > 40 * 10  # the generated sample exercises the reuse
