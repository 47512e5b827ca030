"""The Python extractor's query scan (`_scan`) yields exactly what its node-by-node walk (`_walk`,
the reference, kept for trees with syntax errors) yields: every unit, every field."""

from __future__ import annotations

from pathlib import Path

import pytest

from woods.extract import python
from woods.extract.layout import RepositoryLayout
from woods.units import FileExtraction

ROOT = Path(__file__).resolve().parent.parent / "fixtures" / "python_pkg"

SNIPPETS = {
    "decorators.py": b'''
import functools
from typing import overload, TYPE_CHECKING
from . import helpers as h

if TYPE_CHECKING:
    from pkg.types import Thing

def deco(arg=make_default()):
    def wrap(fn):
        @functools.wraps(fn)
        def inner(*a, **k):
            return fn(*a, **k)
        return inner
    return wrap

@deco(helpers.option(1))
@functools.lru_cache(maxsize=None)
async def fetch(url: str = default_url()) -> bytes:
    """Fetch it."""
    async with session() as s:
        return await s.get(url).read()

@overload
def f(x: int) -> int: ...
@overload
def f(x: str) -> str: ...
def f(x):
    return convert(x)
''',
    "classes.py": b'''
class Base(metaclass=Meta.make()):
    # comment above
    class Inner(Base.Nested, Generic[T]):
        def m(self):
            return self.other() + super().m() + Outer.f().g() + x.y(z).w()

    @property
    def p(self):
        return [self.q(i) for i in range(3) if check(i)]

    @p.setter
    def p(self, value):
        self.store(value)

    handler = staticmethod(lambda v: transform(v))

type Alias = dict[str, list[int]]
result = (lambda: build())()
value = obj.attr . chained (1)
None.__class__()
print("x", sep=sep())
''',
}


def _both(path: str, source: bytes, layout: RepositoryLayout) -> tuple[FileExtraction, FileExtraction]:
    scanned = python.extract(path, source, layout)
    original = python._Extractor._scan
    python._Extractor._scan = python._Extractor._walk  # type: ignore[method-assign]
    try:
        walked = python.extract(path, source, layout)
    finally:
        python._Extractor._scan = original  # type: ignore[method-assign]
    return scanned, walked


@pytest.mark.parametrize("name", sorted(SNIPPETS))
def test_scan_matches_walk_on_snippets(name: str) -> None:
    scanned, walked = _both(f"pkg/{name}", SNIPPETS[name], RepositoryLayout.from_paths([f"pkg/{name}", "pkg/__init__.py"]))
    assert not scanned.warnings  # an error-free tree: the scan ran
    assert len(scanned.units) > 3
    assert scanned == walked


def test_scan_matches_walk_on_fixture() -> None:
    paths = sorted(p.relative_to(ROOT).as_posix() for p in ROOT.rglob("*.py"))
    layout = RepositoryLayout.from_paths(paths)
    for path in paths:
        scanned, walked = _both(path, (ROOT / path).read_bytes(), layout)
        assert scanned == walked, path
