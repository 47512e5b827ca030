"""Python extraction over the `ledger` fixture package, plus broken, binary and deeply nested input."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.extract_helpers import deps_by_via, extract_fixture, line_of
from woods.extract import extract_file
from woods.extract.python import extract, module_name, resolve_relative
from woods.units import Unit

ROOT = Path(__file__).resolve().parent.parent / "fixtures" / "python_pkg"


def _extract(rel: str) -> dict[str, Unit]:
    return extract_fixture(extract, ROOT, rel)


def _line_of(rel: str, needle: str) -> int:
    return line_of(ROOT, rel, needle)


_deps = deps_by_via


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("ledger/models/entry.py", ("ledger.models.entry", False)),
        ("ledger/__init__.py", ("ledger", True)),
        ("src/ledger/services/__init__.py", ("ledger.services", True)),
        ("scripts/tool.py", ("scripts.tool", False)),
        ("stubs/api.pyi", ("stubs.api", False)),
    ],
)
def test_module_names_follow_the_path(path: str, expected: tuple[str, bool]) -> None:
    assert module_name(path) == expected


def test_relative_imports_resolve_against_the_package() -> None:
    assert resolve_relative("ledger.services.posting", False, 2, "models.entry") == "ledger.models.entry"
    assert resolve_relative("ledger.services", True, 1, "posting") == "ledger.services.posting"
    assert resolve_relative("ledger.services.posting", False, 1, "") == "ledger.services"


def test_units_identifiers_types_parents_and_namespaces() -> None:
    units = _extract("ledger/models/account.py")
    module = units["ledger.models.account"]
    assert (module.type, module.parent, module.namespace) == ("module", None, "ledger.models")
    assert module.docstring.startswith("Accounts hold a running balance")

    account = units["ledger.models.account.Account"]
    assert (account.type, account.parent, account.namespace) == (
        "class",
        "ledger.models.account",
        "ledger.models.account",
    )
    apply = units["ledger.models.account.Account.apply"]
    assert (apply.type, apply.parent, apply.namespace) == (
        "method",
        "ledger.models.account.Account",
        "ledger.models.account.Account",
    )
    assert apply.language == "python" and apply.file_path == "ledger/models/account.py"
    assert apply.signature == "def apply(self, entry: JournalEntry) -> None"
    assert apply.docstring == "Move the balance by the entry's amount according to the account's normal side."
    assert list(units) == sorted(units, key=lambda i: (units[i].line_start, -units[i].line_end))


def test_line_ranges_and_source_match_the_fixture_text() -> None:
    rel = "ledger/services/posting.py"
    units = _extract(rel)
    lines = (ROOT / rel).read_text().splitlines()
    post = units["ledger.services.posting.PostingService.post"]
    # The range starts at the first decorator and ends at the last body line.
    assert post.line_start == _line_of(rel, "@audited")
    assert post.line_end == _line_of(rel, "self.journal.append(entry)")
    assert post.source_code == "\n".join(lines[post.line_start - 1 : post.line_end]).strip()
    service = units["ledger.services.posting.PostingService"]
    assert service.line_start == _line_of(rel, "class PostingService")
    assert service.line_end == len(lines)
    assert post.metadata["decorators"] == ["audited", "retry(times=2)"]


def test_relative_imports_become_absolute_dependencies() -> None:
    units = _extract("ledger/services/posting.py")
    imports = _deps(units["ledger.services.posting"], "import")
    assert imports["ledger.models.account.Account"] == ("ledger.models.account.Account", "ledger.models.account")
    assert "ledger.util.decorators.retry" in imports
    assert all(d.via == "import" for d in units["ledger.services.posting"].dependencies)


def test_decorators_calls_and_self_calls_carry_lookup_candidates() -> None:
    units = _extract("ledger/services/posting.py")
    post = units["ledger.services.posting.PostingService.post"]
    decorators = _deps(post, "decorator")
    assert decorators["ledger.util.decorators.audited"][-1] == "ledger.util.decorators.audited"
    assert "ledger.services.posting.audited" in decorators["ledger.util.decorators.audited"]
    calls = _deps(post, "calls")
    assert calls["ledger.services.posting.PostingService.validate"][0] == (
        "ledger.services.posting.PostingService.validate"
    )
    validate = units["ledger.services.posting.PostingService.validate"]
    # Builtins never become edges; a class of this module is looked up in this module.
    assert not any(t.endswith(".sorted") or t.endswith(".str") for t in _deps(validate, "calls"))
    assert "ledger.services.posting.UnbalancedEntryError" in _deps(validate, "calls")


def test_superclass_through_an_aliased_relative_import() -> None:
    units = _extract("ledger/models/account.py")
    asset = units["ledger.models.account.AssetAccount"]
    assert _deps(asset, "superclass") == {"ledger.models.account.Account": ("ledger.models.account.Account",)}
    assert asset.metadata["bases"] == ["Account"]


def test_module_attribute_calls_resolve_through_the_import() -> None:
    units = _extract("ledger/cli.py")
    demo = units["ledger.cli.demo"]
    calls = _deps(demo, "calls")
    assert "ledger.models.entry.JournalEntry" in calls
    assert calls["ledger.cli.build_service"] == ("ledger.cli.build_service",)
    assert "ledger.export.csv_exporter.JournalCsvExporter" in calls
    module_imports = _deps(units["ledger.cli"], "import")
    assert module_imports["ledger.models.entry"] == ("ledger.models.entry", "ledger.models", "ledger")


def test_super_calls_look_in_base_classes() -> None:
    source = b"from .base import Base\n\nclass Child(Base):\n    def run(self):\n        return super().run()\n"
    units = {u.identifier: u for u in extract("pkg/child.py", source).units}
    assert _deps(units["pkg.child.Child.run"], "calls") == {"pkg.base.Base.run": ("pkg.base.Base.run",)}


def test_dataclasses_nested_functions_and_duplicates() -> None:
    units = _extract("ledger/models/entry.py")
    money = units["ledger.models.entry.Money"]
    assert money.metadata["dataclass"] is True
    assert money.metadata["decorators"] == ["dataclass(frozen=True)"]
    assert _deps(money, "decorator") == {
        "dataclasses.dataclass": ("ledger.models.entry.dataclass", "dataclasses.dataclass")
    }
    decorators = _extract("ledger/util/decorators.py")
    wrapper = decorators["ledger.util.decorators.retry.decorate.wrapper"]
    assert (wrapper.type, wrapper.parent) == ("function", "ledger.util.decorators.retry.decorate")
    # A property and its setter share a name: the second is kept under `#2`.
    source = b"class C:\n    @property\n    def x(self):\n        return 1\n\n    @x.setter\n    def x(self, v):\n        pass\n"
    ids = [u.identifier for u in extract("m.py", source).units]
    assert ids == ["m", "m.C", "m.C.x", "m.C.x#2"]


def test_calls_to_nested_functions_look_in_the_enclosing_function_first() -> None:
    source = b"def outer():\n    def helper():\n        return 1\n    return helper() + other()\n"
    units = {u.identifier: u for u in extract("pkg/m.py", source).units}
    calls = _deps(units["pkg.m.outer"], "calls")
    assert calls == {"pkg.m.helper": ("pkg.m.outer.helper", "pkg.m.helper"), "pkg.m.other": ("pkg.m.other",)}


def test_async_and_comment_docstrings() -> None:
    source = b"# Fetches rates.\n# Twice.\nasync def fetch(url):\n    await go(url)\n"
    unit = extract("a.py", source).units[1]
    assert unit.metadata["async"] is True
    assert unit.docstring == "Fetches rates.\nTwice."
    assert unit.signature == "async def fetch(url)"


def test_syntax_errors_keep_what_parses() -> None:
    source = b"def good():\n    return 1\n\ndef broken(:\n    pass\n\nclass Later:\n    def m(self):\n        return 2\n"
    result = extract("pkg/broken.py", source)
    ids = {u.identifier for u in result.units}
    assert {"pkg.broken", "pkg.broken.good"} <= ids
    assert len(result.warnings) == 1 and "syntax errors" in result.warnings[0]


def test_invalid_utf8_never_raises() -> None:
    source = b'def f():\n    """caf\xe9 \xff\xfe"""\n    return "\x80"\n'
    result = extract_file("bad.py", source)
    unit = {u.identifier: u for u in result.units}["bad.f"]
    assert "\ufffd" in unit.docstring
    assert unit.line_start == 1 and unit.line_end == 3


def test_deep_expression_nesting_does_not_recurse() -> None:
    depth = 2000
    source = ("x = " + "(" * depth + "1" + ")" * depth + "\nfoo(" * 1 + ")\n").encode()
    result = extract("deep.py", source)
    assert result.units[0].identifier == "deep"


def test_three_hundred_nested_classes() -> None:
    depth = 300
    lines = [" " * (4 * i) + f"class C{i}:" for i in range(depth)]
    lines.append(" " * (4 * depth) + "def leaf(self):\n" + " " * (4 * depth + 4) + "return helper()")
    result = extract("nest.py", "\n".join(lines).encode() + b"\n")
    assert len(result.units) == depth + 2
    leaf = result.units[-1]
    assert leaf.type == "method"
    assert leaf.identifier == "nest." + ".".join(f"C{i}" for i in range(depth)) + ".leaf"
    assert leaf.parent == result.units[-2].identifier
    assert leaf.line_start == depth + 1


def test_the_implementation_owns_the_name_its_overload_stubs_share() -> None:
    source = (
        "from typing import overload\n"
        "\n"
        "class Box:\n"
        "    @overload\n"
        "    def get(self, key: int) -> int: ...\n"
        "    @overload\n"
        "    def get(self, key: str) -> str: ...\n"
        "    def get(self, key):\n"
        "        def inner():\n"
        "            return key\n"
        "        return inner()\n"
        "\n"
        "def again():\n"
        "    return 1\n"
        "\n"
        "def again():\n"
        "    return 2\n"
    )
    units = {u.identifier: u for u in extract("pkg/box.py", source.encode()).units}
    assert units["pkg.box.Box.get"].line_start == 8  # the implementation, not the first stub
    assert units["pkg.box.Box.get#overload1"].line_start == 4
    assert units["pkg.box.Box.get#overload2"].line_start == 6
    assert units["pkg.box.Box.get.inner"].parent == "pkg.box.Box.get"
    assert units["pkg.box.Box.get#overload1"].metadata["overload"] is True
    # a plain redefinition keeps the numbering: the first definition owns the name
    assert units["pkg.box.again"].line_start == 13 and units["pkg.box.again#2"].line_start == 16
