"""What a file is for, judged from its path: library code, or tests, examples, fixtures, vendored,
generated, compatibility shims, benchmarks, documentation, migrations, tool settings, or build and
release scaffolding (installers, setup and build scripts, packaging).

Why: a developer who asks where something happens wants the code that does it, not the test that
exercises it, the example that shows it or the vendored copy of a dependency. Ranking demotes
those roles unless the question asks for them, and `resolve` prefers library code when a name is
defined both in the library and in a test. One set of rules serves both, so they never disagree.

Guarantees: pure functions of a repository-relative path (`/` separators); `path_roles` returns
the roles in ROLES order, empty for ordinary library code; rules are conventions shared across
languages (directory names and file-name patterns), not tied to any repository.
"""

from __future__ import annotations

import re
from functools import lru_cache

TEST = "test"
EXAMPLE = "example"
FIXTURE = "fixture"
VENDORED = "vendored"
GENERATED = "generated"
COMPAT = "compat"
BENCHMARK = "benchmark"
DOCS = "docs"
MIGRATION = "migration"  # schema migrations: Rails db/migrate, Django/Alembic migrations, Flyway …
HIDDEN = "hidden"  # dot directories: CI workflows, editor and agent settings (.github/, .vscode/, .agents/)
# Scaffolding: what builds, installs, packages or releases the program rather than being it — an
# installer or setup script must not outrank the program it installs.
BUILD = "build"
ROLES = (TEST, EXAMPLE, FIXTURE, VENDORED, GENERATED, COMPAT, BENCHMARK, DOCS, MIGRATION, HIDDEN, BUILD)

_DIR = r"(?:^|/)(?:{})/"
_ROLE_DIRS: dict[str, re.Pattern[str]] = {
    TEST: re.compile(_DIR.format(r"tests?|__tests__|specs?|testing|testdata|test_?utils|integration_tests|e2e|xctests?|\w+_tests|\w+Tests|\w+\.Tests?|androidTest|jvmTest|jsTest|nativeTest|commonTest|\w+Test")),
    EXAMPLE: re.compile(_DIR.format(r"_?examples?|samples?|demos?|docs?_src|tutorials?|playground|cookbook")),
    FIXTURE: re.compile(_DIR.format(r"fixtures?|__fixtures__|__mocks__|mocks?|stubs?|snapshots?|__snapshots__")),
    VENDORED: re.compile(_DIR.format(r"vendor|vendored|third_party|thirdparty|3rdparty|node_modules|single_include")),
    GENERATED: re.compile(_DIR.format(r"generated|__generated__|autogen")),
    COMPAT: re.compile(_DIR.format(r"_?compat|legacy|deprecated|polyfills?")),
    BENCHMARK: re.compile(_DIR.format(r"benches|benchmarks?")),
    DOCS: re.compile(_DIR.format(r"docs?|documentation")),
    MIGRATION: re.compile(_DIR.format(r"migrate|migrations|alembic|db/migration")),
    HIDDEN: re.compile(r"(?:^|/)\.[^/.][^/]*/"),
    BUILD: re.compile(_DIR.format(r"build|scripts?|ci|packaging|installers?|release|deploy(?:ment)?|dev-?tools")),
}
# File names that are tests whatever directory they sit in — each language's own convention, so a
# library file that merely starts with `test_` in a language without that convention (bats-core's
# `test_functions.bash`) stays library code.
_TEST_FILE = re.compile(
    r"(?:^|/)(?:"
    r"(?:test_[^/]*|[^/]*_test)\.(?:py|c|cc|cpp|dart|lua)"
    r"|[^/]*_test\.(?:go|rb|exs|ex|rs|zig)"
    r"|[^/]*_spec\.(?:rb|lua)"
    r"|[^/]*\.(?:test|spec)\.(?:js|jsx|ts|tsx|mjs|cjs|mts|cts)"
    r"|test\.(?:js|jsx|ts|tsx|mjs|cjs|mts|cts)"  # a module's tests beside it: date-fns' src/<fn>/test.js
    r"|[^/]*Tests?\.(?:java|kt|kts|cs|php|swift|scala)"
    r"|[^/]*(?:Spec|Suite)\.(?:kt|kts|swift|scala)"
    r"|[^/]*\.bats"
    r"|conftest\.py|test_helpers?\.\w+|spec_helper\.rb|rails_helper\.rb"
    r")$"
)
_GENERATED_FILE = re.compile(r"(?:\.pb\.go|_pb2(?:_grpc)?\.py|\.g\.dart|\.generated\.\w+|\.min\.(?:js|css)|\.d\.ts)$")
_BENCH_FILE = re.compile(r"(?:^|/)(?:bench_[^/]*|[^/]*_bench|[^/]*Benchmark)\.[A-Za-z0-9]+$")
# Build, install and release files by their conventional names, wherever they sit.
_BUILD_FILE = re.compile(
    r"(?:^|/)(?:"
    r"setup\.(?:py|cfg|sh)|install(?:er)?(?:\.(?:sh|ps1|py|bat))?|uninstall(?:\.sh)?|build\.(?:sh|ps1|bat|rs|py)"
    r"|Makefile|GNUmakefile|CMakeLists\.txt|[^/]*\.cmake|noxfile\.py|tox\.ini|Rakefile|Gruntfile\.\w+|[Gg]ulpfile\.\w+"
    r"|Dockerfile[^/]*|docker-compose[^/]*|(?:deploy|release|publish|bump)[\w.-]*\.(?:sh|py|ps1|js|ts|rb)"
    r"|(?:webpack|rollup|vite|esbuild|tsup)\.config\.\w+|build\.gradle(?:\.kts)?|gradlew(?:\.bat)?|Build\.ps1"
    r")$"
)

# Query words that ask for a role: the question is about tests, examples … so they are not demoted.
ROLE_WORDS: dict[str, frozenset[str]] = {
    TEST: frozenset({"test", "tests", "tested", "testing", "spec", "specs", "unittest", "pytest", "assert", "fixture", "mock"}),
    EXAMPLE: frozenset({"example", "examples", "sample", "samples", "demo", "tutorial"}),
    FIXTURE: frozenset({"fixture", "fixtures", "mock", "mocks", "stub", "stubs", "snapshot"}),
    VENDORED: frozenset({"vendor", "vendored", "third", "dependency"}),
    GENERATED: frozenset({"generated", "protobuf", "codegen"}),
    COMPAT: frozenset({"compat", "compatibility", "legacy", "deprecated", "polyfill", "backport"}),
    BENCHMARK: frozenset({"bench", "benchmark", "benchmarks", "performance", "perf"}),
    DOCS: frozenset({"doc", "docs", "documentation", "documented", "readme", "guide", "manual"}),
    MIGRATION: frozenset({"migration", "migrations", "migrate", "migrated", "schema", "column", "columns", "table"}),
    HIDDEN: frozenset({"ci", "workflow", "workflows", "github", "hook", "hooks", "agent", "agents", "editor",
                       "devcontainer", "pipeline"}),
    BUILD: frozenset({"build", "builds", "built", "building", "install", "installs", "installer", "installation",
                      "installed", "setup", "release", "releases", "released", "deploy", "deployed", "deployment",
                      "publish", "published", "package", "packages", "packaged", "packaging", "script", "scripts",
                      "ci", "compile", "compiled", "cmake", "makefile", "docker", "bundle", "bundled", "version",
                      "versions", "versioned", "generate", "generated", "generates", "generator"}),
}


@lru_cache(maxsize=65536)
def path_roles(path: str) -> tuple[str, ...]:
    """The non-library roles of a file, in ROLES order (empty: ordinary library code)."""
    roles = {role for role, pattern in _ROLE_DIRS.items() if pattern.search(path)}
    if _TEST_FILE.search(path):
        roles.add(TEST)
    if _GENERATED_FILE.search(path):
        roles.add(GENERATED)
    if _BENCH_FILE.search(path):
        roles.add(BENCHMARK)
    if _BUILD_FILE.search(path):
        roles.add(BUILD)
    return tuple(role for role in ROLES if role in roles)


# Namespace segments that hold tests inside library files (Rust's `mod tests` next to the code,
# Elixir/Go-style `test` namespaces): a unit under one is test code whatever its file.
TEST_NAMESPACES = frozenset({"test", "tests"})


def identifier_roles(segments: tuple[str, ...] | list[str]) -> tuple[str, ...]:
    """The roles an identifier's enclosing segments give it (`crate::x::tests::helper` is a test)."""
    return (TEST,) if any(s.lower() in TEST_NAMESPACES for s in segments[:-1]) else ()


def is_library_path(path: str) -> bool:
    """True for ordinary library/application code (none of the roles above)."""
    return not path_roles(path)


def roles_asked_for(words: set[str]) -> frozenset[str]:
    """The roles a question's words ask for (`how is the parser tested` asks for tests)."""
    return frozenset(role for role, vocabulary in ROLE_WORDS.items() if words & vocabulary)
