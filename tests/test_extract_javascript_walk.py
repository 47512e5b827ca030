"""The JS/TS extractor finds the nodes it looks at with a tree-sitter query (`_Extractor._walk`) and
decides late which calls and type names to look at (`_Extractor._freeze`). Both must give exactly
what a plain pre-order walk over every node gives: the same nodes, in the same order, under the
same owner, hence the same units. The reference walk here is the extractor's former loop."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from tree_sitter import Node

from woods.extract import base, javascript
from woods.units import FileExtraction

ROOT = Path(__file__).resolve().parent.parent / "fixtures" / "ts_project"

_CATEGORY = {kind: category for category, kinds in javascript.VISITED.items() for kind in kinds}


def _reference_walk(self: javascript._Extractor, root: Node, module: javascript._Draft) -> None:
    """Every node (named or not) in pre-order, `_visit`ed when its kind is visited at all."""
    stack: list[tuple[Node, javascript._Draft, str]] = [(c, module, "") for c in reversed(root.children)]
    while stack:
        node, owner, prefix = stack.pop()
        category = _CATEGORY.get(node.type)
        scope = self._visit(category, node, owner, prefix) if category is not None else None
        if scope is None:
            stack.extend((c, owner, prefix) for c in reversed(node.children))
        elif scope.owner is not None:
            stack.extend((c, scope.owner, scope.prefix) for c in reversed(node.children))


def _plain(ref: javascript._Ref | tuple[int, Node, int]) -> object:
    """A draft's reference, comparable across two parses of one source."""
    if isinstance(ref, tuple):
        category, node, at = ref
        return (category, node.type, node.start_byte, node.end_byte, at)
    return ref


def _extract_both(
    monkeypatch: pytest.MonkeyPatch, path: str, source: bytes
) -> tuple[tuple[FileExtraction, list[Any]], tuple[FileExtraction, list[Any]]]:
    """(extraction, what each draft collected) with the query walk, then with the reference walk."""
    results = []
    for walk in (javascript._Extractor._walk, _reference_walk):
        with monkeypatch.context() as patch:
            patch.setattr(javascript._Extractor, "_walk", walk)
            extractor = javascript._Extractor(path, source)
            extraction = extractor.run()
        collected = [(d.identifier, d.qual, [_plain(r) for r in d.refs], list(d.deps)) for d in extractor.drafts]
        results.append((extraction, collected))
    return results[0], results[1]


SNIPPETS: dict[str, str] = {
    "src/classes.ts": """
/** Module doc. */
import def, { a as b, c } from "./other";
import * as ns from "../ns";
import fs = require("fs");
import type { T } from "./types";
export * from "./all";
export { x, y as z } from "./xy";
export { local1 };
const { p, q } = require("./pq");

@Component({ selector: "x" })
export class Foo<T extends Base> extends Bar.Baz<T> implements IFoo, ns.IBar {
  @Input() name: string = "";
  private static handler = async (e: Event): Promise<void> => { this.go(e); helper(); b(); };
  #secret = function () { return new Foo(); };
  constructor(private readonly svc: Service) { super(); super.init(); }
  get value(): number { return 1; }
  set value(v: number) { this.x = v; this.x.y(); }
  static async *gen() { yield 1; }
  @HostListener("click") onClick(ev: MouseEvent) { b(); c.d.e(); def(); ns.f.g(); fs.readFileSync(); p(); }
}
export abstract class Abs { abstract run(): void; }
interface IFoo extends IBase, ns.IOther { run(): IFoo; }
export type Alias<T> = Map<string, T> | ns.Thing | Foo;
export enum Color { Red, Green }
function helper(): IFoo { function inner() {} const nested = () => inner(); return nested(); }
let a1 = function () {}, a2 = () => {};
var cls = class Named { m() { return cls; } };
const local1 = 1;
class Dup { get v() { return 1 } set v(x) {} get v() { return 2 } }
function local1() {}
type G = Array<Generic.Type<Foo>>;
let v: Outer.Inner.Deep = new ns.Cls.Sub();
class Ext extends (class Inner2 { m() { helper(); } }) { n() { helper(); } }
const chained = helper().then(x => x)(1);
(helper)();
h\\u0065lper();
""",
    "src/namespaces.ts": """
declare module "ambient" { export function amb(): void; }
namespace Outer.Inner { export function deep() { return deep2(); } export function deep2() {} class K {} }
module Legacy { export const z = () => Legacy.z(); }
export default function () { return 1; }
""",
    "src/defaults.ts": "export default class { m() { return this.m(); } }\nexport default () => 1;\nexport = Foo;\n",
    "src/objects.js": """
'use strict';
var express = require('express');
var { Router } = require('./router');
module.exports = exports = createApplication;
function createApplication() { var app = function(req, res, next) { app.handle(req, res, next); }; return app; }
exports.Router = Router;
class A extends express.Base { static x = 1; #p() {} m = () => { this.p(); this.#p(); Router(); }; async *g() {} }
const obj = { method() { return createApplication(); }, fn: function named() {}, arrow: () => Router.x() };
const f = async function* () {};
export default class extends A {}
import("./lazy").then(m => m.go());
Router.prototype.route = function route(path) { return new Route(path); };
undefined.x(); null.y(); new.target; import.meta.url;
""",
    "src/component.tsx": """
import React from "react";
import { Badge } from "./Badge";
import * as UI from "../ui";
export const App = (props: Props) => <div><Badge n={1} /><UI.Button onClick={() => go()}>x</UI.Button><span/></div>;
export default function Page({ x }: { x: number }) { return <App {...x} />; }
class C extends React.Component<Props, State> { render() { return <Badge />; } }
""",
    "src/broken.ts": "export class A { m( { return helper(; }\nfunction helper( {\nlet x = (y => ;\nclass B extends",
    "src/broken.tsx": "export function Broken() { return <div><Foo> }\nconst Foo = () => <",
    "src/jsx.js": "import Foo from './Foo';\nexport const jsx = () => <Foo.Bar x={Foo()}><Baz/></Foo.Bar>;\n",
    "src/adjacent.js": "function f(){return 1}f();class K{m(){}n(){f()}}f();const a=()=>{},b=()=>{f()};f()",
    "src/empty.ts": "",
    "src/comments.js": "// only a comment\n/* and another */\n",
}


@pytest.mark.parametrize("path", sorted(SNIPPETS))
def test_query_walk_matches_a_plain_walk_on_snippets(monkeypatch: pytest.MonkeyPatch, path: str) -> None:
    (extraction, collected), (reference, reference_collected) = _extract_both(
        monkeypatch, path, SNIPPETS[path].encode()
    )
    assert collected == reference_collected
    assert extraction == reference


@pytest.mark.parametrize("rel", sorted(str(p.relative_to(ROOT)) for p in ROOT.rglob("*.ts*")))
def test_query_walk_matches_a_plain_walk_on_the_fixture(monkeypatch: pytest.MonkeyPatch, rel: str) -> None:
    (extraction, collected), (reference, reference_collected) = _extract_both(
        monkeypatch, rel, (ROOT / rel).read_bytes()
    )
    assert collected == reference_collected
    assert extraction == reference
    assert extraction.units


def test_late_reference_filter_keeps_what_resolves() -> None:
    """Calls and type names are dropped unread only when their first name cannot resolve."""
    units = {u.identifier: u for u in javascript.extract("src/classes.ts", SNIPPETS["src/classes.ts"].encode()).units}
    on_click = units["src/classes:Foo.onClick"]
    calls = {d.target for d in on_click.dependencies if d.via == "calls"}
    assert calls == {"src/other:a", "src/other:c.d.e", "src/other:def", "ns:f.g", "src/pq:p"}
    handler = units["src/classes:Foo.handler"]
    assert {d.target for d in handler.dependencies if d.via == "calls"} == {
        "src/classes:Foo.go", "src/classes:helper", "src/other:a"
    }
    alias = units["src/classes:Alias"]
    assert "src/classes:Foo" in {d.target for d in alias.dependencies if d.via == "code_reference"}


@pytest.mark.parametrize(
    ("source", "chain"),
    [
        (b"a.b.c()", ("a", "b", "c")),
        (b"this.go()", ("this", "go")),
        (b"a()", ("a",)),
        (b"a . b()", ("a", "b")),
        (b"a?.b()", ("a", "b")),
        (b"a.b<T>()", ("a", "b")),
        (b"super.x()", None),
        (b"undefined.x()", None),
        (b"a().b()", None),
        (b"a[0]()", None),
    ],
)
def test_call_chain_from_source_agrees_with_the_tree(source: bytes, chain: tuple[str, ...] | None) -> None:
    tree = base.parse("typescript", source)
    call = tree.root_node.named_children[0].named_children[0]
    assert call.type == "call_expression"
    extractor = javascript._Extractor("src/x.ts", source)
    function = call.child_by_field_name("function")
    assert javascript._name_chain(function, source, extractor.f) == chain
    ref = extractor._call_ref(call, call.start_byte, javascript._PLAIN_NAME.match(source, 0) is not None)
    assert (ref.chain if ref is not None else None) == chain
