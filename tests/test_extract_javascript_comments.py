"""The JS/TS extractor asks the tree for the comment above a declaration only when a `/` lies between
the start of the line above and the declaration (`_Extractor._leading_comment`), and for decorators
before it only when the file holds an `@`. Both shortcuts must give what asking always gives."""

from __future__ import annotations

import pytest

from woods.extract import base, javascript

SOURCES = [
    b"// one\nfunction a() {}\n\n// two\n\nfunction b() {}\n/* three */ function c() {}\n",
    b"/**\n * Doc.\n */\nexport class A {\n  // m\n  m() {}\n  /* n */ n() {}\n\n  o() {}\n}\n",
    b"<!-- html\nfunction f() {}\n#!x\nconst g = () => 1; // trailing\nconst h = function () {};\n",
    b"function first() {}\n// above\n\n\nfunction far() {}\nconst x = 1 / 2; function divided() {}\n",
    b"class B {\n  @dec() m() {}\n  @a @b\n  n() {}\n  // c\n  @d o() {}\n}\n@Component({})\nexport class C {}\n",
    b"// unclosed\nfunction broken( {\n/* x */ export default function () {}\n",
]


@pytest.mark.parametrize("grammar_path", ["src/x.ts", "src/x.js", "src/x.tsx"])
@pytest.mark.parametrize("source", SOURCES, ids=range(len(SOURCES)))
def test_comment_and_decorator_shortcuts_change_nothing(grammar_path: str, source: bytes) -> None:
    extractor = javascript._Extractor(grammar_path, source)
    extractor.run()
    for draft in extractor.drafts[1:]:
        assert extractor._leading_comment(draft.first) == base.clean_comment(base.leading_comment(draft.first, source))
    asked = javascript._Extractor(grammar_path, source)
    asked.has_at = True  # always ask for decorators
    assert asked.run() == javascript._Extractor(grammar_path, source).run()
