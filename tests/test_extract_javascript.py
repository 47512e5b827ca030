"""JS / TS / TSX extraction over the `quota-guard` fixture, plus inline JavaScript and bad input."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.extract_helpers import deps_by_via, extract_fixture, line_of
from woods.extract import extract_file
from woods.extract.javascript import extract, grammar_for, module_identifier, resolve_specifier
from woods.units import Unit

ROOT = Path(__file__).resolve().parent.parent / "fixtures" / "ts_project"


def _extract(rel: str) -> dict[str, Unit]:
    return extract_fixture(extract, ROOT, rel)


def _line_of(rel: str, needle: str) -> int:
    return line_of(ROOT, rel, needle)


_deps = deps_by_via


@pytest.mark.parametrize(
    ("path", "grammar", "module"),
    [
        ("src/a.ts", "typescript", "src/a"),
        ("src/a.mts", "typescript", "src/a"),
        ("src/Badge.tsx", "tsx", "src/Badge"),
        ("lib/x.js", "javascript", "lib/x"),
        ("lib/x.jsx", "javascript", "lib/x"),
        ("types/api.d.ts", "typescript", "types/api"),
        ("lib/x.test.cjs", "javascript", "lib/x.test"),
    ],
)
def test_grammar_and_module_identifier_follow_the_extension(path: str, grammar: str, module: str) -> None:
    assert grammar_for(path) == grammar
    assert module_identifier(path) == module


def test_relative_specifiers_resolve_to_module_identifiers() -> None:
    assert resolve_specifier("src/http/middleware.ts", "../limiter/types") == (
        "src/limiter/types",
        "src/limiter/types/index",
    )
    assert resolve_specifier("src/index.ts", "./util/format.js") == (
        "src/util/format",
        "src/util/format/index",
        "src/util/format.js",
    )
    assert resolve_specifier("src/index.ts", "react") == ()


def test_class_methods_interfaces_and_line_ranges() -> None:
    rel = "src/limiter/TokenBucketLimiter.ts"
    units = _extract(rel)
    module = units["src/limiter/TokenBucketLimiter"]
    assert (module.type, module.language, module.namespace) == ("module", "typescript", "src/limiter")
    cls = units["src/limiter/TokenBucketLimiter:TokenBucketLimiter"]
    assert (cls.type, cls.parent, cls.namespace) == (
        "class",
        "src/limiter/TokenBucketLimiter",
        "src/limiter/TokenBucketLimiter",
    )
    assert cls.signature == "export class TokenBucketLimiter implements Limiter"
    assert cls.docstring.startswith("Token bucket: each client gets `capacity` tokens")
    assert cls.line_start == _line_of(rel, "export class TokenBucketLimiter")
    assert cls.metadata["exported"] is True and cls.metadata["implements"] == ["Limiter"]
    acquire = units["src/limiter/TokenBucketLimiter:TokenBucketLimiter.tryAcquire"]
    assert (acquire.type, acquire.parent) == ("method", cls.identifier)
    assert acquire.line_start == _line_of(rel, "tryAcquire(clientId: string, cost = 1)")
    assert acquire.line_end == _line_of(rel, "remaining: 0 };") + 1
    assert acquire.signature == "tryAcquire(clientId: string, cost = 1): Decision"
    assert acquire.docstring == "Take `cost` tokens from the client's bucket if it has enough."
    refill = units["src/limiter/TokenBucketLimiter:TokenBucketLimiter.refill"]
    assert refill.metadata["accessibility"] == "private"
    bucket = units["src/limiter/TokenBucketLimiter:Bucket"]
    assert (bucket.type, bucket.metadata["exported"]) == ("interface", False)


def test_imports_implements_calls_and_type_references() -> None:
    units = _extract("src/limiter/TokenBucketLimiter.ts")
    imports = _deps(units["src/limiter/TokenBucketLimiter"], "import")
    assert imports["src/limiter/types:Limiter"] == (
        "src/limiter/types:Limiter",
        "src/limiter/types/index:Limiter",
        "src/limiter/types",
        "src/limiter/types/index",
    )
    cls = units["src/limiter/TokenBucketLimiter:TokenBucketLimiter"]
    assert list(_deps(cls, "implements")) == ["src/limiter/types:Limiter"]
    assert "src/limiter/types:Limiter" not in _deps(cls, "code_reference")
    acquire = units["src/limiter/TokenBucketLimiter:TokenBucketLimiter.tryAcquire"]
    calls = _deps(acquire, "calls")
    assert "src/limiter/TokenBucketLimiter:TokenBucketLimiter.refill" in calls  # this.refill()
    assert "src/limiter/clock:secondsToMs" in calls  # imported function
    assert not any("Math" in t for t in calls)  # globals are not edges
    assert "src/limiter/types:Decision" in _deps(acquire, "code_reference")


def test_namespace_imports_and_enums_type_aliases() -> None:
    sliding = _extract("src/limiter/SlidingWindowLimiter.ts")
    ctor = sliding["src/limiter/SlidingWindowLimiter:SlidingWindowLimiter.constructor"]
    assert ctor.metadata["kind"] == "constructor"
    types = _extract("src/limiter/types.ts")
    assert types["src/limiter/types:LimitStrategy"].type == "enum"
    decision = types["src/limiter/types:Decision"]
    assert decision.type == "type_alias"
    assert decision.docstring == "The outcome of asking a limiter for permission."
    limiter = types["src/limiter/types:Limiter"]
    assert limiter.docstring.splitlines() == [
        "Anything that can decide whether a client may perform one more request.",
        "Implementations must be safe to call on every request (no I/O).",
    ]
    source = b'import * as clocks from "./clock";\nexport function f() { return clocks.secondsToMs(2); }\n'
    units = {u.identifier: u for u in extract("src/limiter/x.ts", source).units}
    assert "src/limiter/clock:secondsToMs" in _deps(units["src/limiter/x:f"], "calls")


def test_arrow_functions_and_tsx_components() -> None:
    clock = _extract("src/limiter/clock.ts")
    manual = clock["src/limiter/clock:manualClock"]
    assert manual.type == "function" and manual.metadata["arrow"] is True
    assert manual.docstring == "A clock tests can move by hand."
    assert manual.signature == "export const manualClock = (start = 0) =>"
    rel = "src/components/QuotaBadge.tsx"
    badge = _extract(rel)
    component = badge["src/components/QuotaBadge:QuotaBadge"]
    assert component.language == "typescript"
    assert component.metadata["default_export"] is True
    assert component.line_start == _line_of(rel, "export default function QuotaBadge")
    assert "src/util/format:percentUsed" in _deps(component, "calls")
    assert "src/components/QuotaBadge:QuotaMeter" in _deps(component, "code_reference")  # JSX element
    assert "src/components/QuotaBadge:QuotaBadgeProps" in _deps(component, "code_reference")
    assert _deps(badge["src/components/QuotaBadge"], "import")["react"] == ()


def test_index_re_exports_are_import_dependencies() -> None:
    index = _extract("src/index.ts")["src/index"]
    imports = _deps(index, "import")
    assert "src/limiter/TokenBucketLimiter:TokenBucketLimiter" in imports
    assert imports["src/limiter/types"] == ("src/limiter/types", "src/limiter/types/index")
    assert "src/http/middleware:clientKey" in imports


def test_plain_javascript_commonjs_and_heritage() -> None:
    source = b"""const { charge } = require("./billing");
const util = require("../util");

// Sends invoices.
class Mailer extends Base {
  handle = (x) => charge(x);
  get count() { return 1; }
  set count(v) {}
  send() { return util.format(this.handle(1)); }
}

class Base {}
module.exports = Mailer;
"""
    result = extract_file("lib/mail/mailer.js", source)
    assert result.language == "javascript"
    units = {u.identifier: u for u in result.units}
    module = units["lib/mail/mailer"]
    assert {"lib/mail/billing", "lib/util"} <= set(_deps(module, "import"))
    mailer = units["lib/mail/mailer:Mailer"]
    assert mailer.docstring == "Sends invoices."
    assert _deps(mailer, "superclass") == {"lib/mail/mailer:Base": ("lib/mail/mailer:Base",)}
    handle = units["lib/mail/mailer:Mailer.handle"]
    assert handle.type == "method" and "lib/mail/billing:charge" in _deps(handle, "calls")
    assert units["lib/mail/mailer:Mailer.count"].metadata["kind"] == "getter"
    assert units["lib/mail/mailer:Mailer.count#2"].metadata["kind"] == "setter"
    send = units["lib/mail/mailer:Mailer.send"]
    assert set(_deps(send, "calls")) == {"lib/util:format", "lib/mail/mailer:Mailer.handle"}


def test_anonymous_default_exports_and_namespaces() -> None:
    source = b"export default function () { return 1; }\nnamespace Billing { export function total() {} }\n"
    ids = [u.identifier for u in extract("src/anon.ts", source).units]
    assert ids == ["src/anon", "src/anon:default", "src/anon:Billing.total"]


def test_syntax_errors_keep_what_parses() -> None:
    source = b"export function ok() { return 1; }\nclass Broken { m( { }\nexport const later = () => 2;\n"
    result = extract("src/broken.ts", source)
    assert "src/broken:ok" in {u.identifier for u in result.units}
    assert len(result.warnings) == 1 and "syntax errors" in result.warnings[0]


def test_invalid_utf8_never_raises() -> None:
    source = b"/** caf\xe9 */\nexport function f(): string { return '\xff\xfe'; }\n"
    unit = extract("src/bad.ts", source).units[1]
    assert unit.identifier == "src/bad:f" and "\ufffd" in unit.docstring


def test_deep_nesting_does_not_recurse() -> None:
    depth = 2000
    expression = "(" * depth + "1" + ")" * depth
    result = extract("src/deep.js", f"const x = {expression};\nfunction f() {{ return x; }}\n".encode())
    assert [u.identifier for u in result.units] == ["src/deep", "src/deep:f"]
    nested = "".join(f"function f{i}() {{\n" for i in range(300)) + "}\n" * 300
    units = extract("src/nest.js", nested.encode()).units
    assert len(units) == 301
    assert units[-1].identifier == "src/nest:" + ".".join(f"f{i}" for i in range(300))
    assert units[-1].parent == units[-2].identifier and units[-1].line_start == 300
