"""CLI commands over a Fake-embedded copy of the Rails fixture: resolve, lookup, deps, dependents,
structure, evaluate and search options — exit codes and JSON shapes as docs/cli.md documents them."""

from __future__ import annotations

import json

import pytest

from tests.helpers import CliResult, Location, copy_fixture, index_with_fake, run_cli


@pytest.fixture(scope="module", params=["local", "postgres"])
def rails(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Location:
    """The fixture indexed into its `.woods` directory, or into a PostgreSQL store (both backends)."""
    root = copy_fixture("rails_app", tmp_path_factory.mktemp("cmds"))
    if request.param == "local":
        index_with_fake(root, "--json")
        return Location("local", root, root / ".woods")
    url = request.getfixturevalue("pg_database")()
    index_with_fake(root, "--store", url, "--json")
    return Location("postgres", root, url, "rails_app")


def _json(result: CliResult, code: int = 0) -> dict:
    assert result.code == code, result
    payload = json.loads(result.stdout)
    assert payload["schema_version"] == 1 and isinstance(payload["warnings"], list)
    return payload


def _files(where: Location) -> object:
    """Every byte of a `.woods` directory, or a PostgreSQL store's tables and row-change counters."""
    if where.backend == "local":
        return {str(p): p.read_bytes() for p in sorted((where.root / ".woods").rglob("*")) if p.is_file()}
    import psycopg

    with psycopg.connect(str(where.store)) as conn:
        conn.execute("SELECT pg_stat_force_next_flush()")
        return conn.execute(
            "SELECT relname, n_tup_ins, n_tup_upd, n_tup_del FROM pg_stat_user_tables ORDER BY relname"
        ).fetchall()


def test_resolve_exact_identifier_exit_0(rails):
    result = run_cli("resolve", "Billing::Invoice#charge", *rails.args, "--json")
    assert result.code == 0, result.stderr
    payload = _json(result)
    assert payload["status"] == "resolved" and payload["identifier"] == "Billing::Invoice#charge"
    assert payload["file_path"] == "app/models/billing/invoice.rb" and payload["confidence"] >= 0.98


def test_resolve_ambiguous_is_exit_3_with_candidates_and_a_hint(rails):
    result = run_cli("resolve", "show", *rails.args)
    assert result.code == 3
    assert "1." in result.stdout and "2." in result.stdout and "--type" in result.stdout
    payload = _json(run_cli("resolve", "show", *rails.args, "--json"), 3)
    assert payload["status"] == "ambiguous" and len(payload["candidates"]) >= 2


def test_resolve_input_from_stdin_equals_the_argument_form(rails):
    by_arg = run_cli("resolve", "Billing::Invoice", *rails.args, "--json")
    by_stdin = run_cli("resolve", "--input", "-", *rails.args, "--json",
                       input_text=json.dumps({"ref": "Billing::Invoice"}))
    assert by_arg.code == by_stdin.code == 0
    assert by_arg.stdout == by_stdin.stdout


def test_resolve_bad_input_is_exit_2(rails):
    assert run_cli("resolve", "   ", *rails.args).code == 2
    bad_json = run_cli("resolve", "--input", "-", *rails.args, input_text="{not json")
    assert bad_json.code == 2 and "JSON" in bad_json.stderr
    assert run_cli("resolve", "x", "--input", "-", *rails.args, input_text="{}").code == 2
    assert run_cli("resolve", "Invoice", "--type", "no_such_type", *rails.args).code == 2


def test_resolve_passthrough_miss_is_not_found_exit_3(rails):
    result = run_cli("resolve", "app/models/nothing_here.rb:3", *rails.args, "--json")
    assert _json(result, 3)["status"] == "not_found"


def test_reading_commands_leave_the_index_byte_identical(rails):
    before = _files(rails)
    for args, code in ((["resolve", "charge"], 3), (["resolve", "Billing::Invoice"], 0), (["lookup", "User"], 0),
                       (["deps", "User"], 0), (["dependents", "User"], 0), (["dependents", "ApplicationRecord"], 0),
                       (["structure", "--detail", "full"], 0), (["search", "invoice total"], 0),
                       (["search", "invoice", "--mode", "lexical"], 0), (["status"], 0)):
        run_cli(*args, *rails.args, expect=code)
    assert _files(rails) == before


def test_lookup_found_and_unknown(rails):
    payload = _json(run_cli("lookup", "Billing::Invoice", *rails.args, "--json"))
    (unit,) = payload["units"]
    assert unit["type"] == "model" and unit["metadata"]["associations"]
    assert "source_code" in unit
    assert unit["id"] == unit["key"] == "Billing::Invoice"  # `id`: the schema-1 name, kept
    no_source = _json(run_cli("lookup", "Billing::Invoice", "--no-source", *rails.args, "--json"))
    assert "source_code" not in no_source["units"][0]
    missing = run_cli("lookup", "Nope::Nothing", *rails.args)
    assert missing.code == 3 and "woods resolve" in missing.stderr


def test_deps_and_dependents_follow_edges_with_via(rails):
    deps = _json(run_cli("deps", "Billing::Invoice", *rails.args, "--json"))
    assert {"identifier": "ApplicationRecord", "via": "superclass"}.items() <= next(
        r for r in deps["results"] if r["identifier"] == "ApplicationRecord").items()
    assert all(r["depth"] == 1 for r in deps["results"])
    # schema-1 names, kept beside the new ones
    assert all(r["distance"] == r["depth"] and r["in_index"] == r["indexed"] for r in deps["results"])
    deeper = _json(run_cli("deps", "Billing::Invoice", "--depth", "2", *rails.args, "--json"))
    assert any(r["depth"] == 2 for r in deeper["results"])
    only = _json(run_cli("deps", "Billing::Invoice", "--via", "superclass", *rails.args, "--json"))
    assert [r["identifier"] for r in only["results"]] == ["ApplicationRecord"]
    dependents = _json(run_cli("dependents", "Billing::Invoice", *rails.args, "--json"))
    assert "Billing::Payment" in {r["identifier"] for r in dependents["results"]}
    assert run_cli("deps", "Nope", *rails.args).code == 3
    missing = _json(run_cli("dependents", "Nope", *rails.args, "--json"), 3)
    assert missing["status"] == "not_found"


def test_a_graph_node_that_is_not_a_unit_answers_like_the_api(rails):
    """ApplicationRecord is a superclass the fixture refers to; `dependents` walks it as a graph node."""
    payload = _json(run_cli("dependents", "ActiveRecord::Base", *rails.args, "--json"))
    assert payload["identifier"] == "ActiveRecord::Base" and payload["results"]
    assert "ApplicationRecord" in {r["identifier"] for r in payload["results"]}


def test_structure_json_shape(rails):
    payload = _json(run_cli("structure", *rails.args, "--json", "--top", "5"))
    assert payload["units_by_type"]["model"] >= 5 and payload["units_by_type"]["route"] >= 10
    assert payload["edges_by_via"]["superclass"] >= 5
    assert payload["files_by_language"]["ruby"] >= 20
    top = payload["top_pagerank"]
    assert len(top) == 5 and set(top[0]) == {"identifier", "type", "score"}
    assert [r["score"] for r in top] == sorted((r["score"] for r in top), reverse=True)
    assert "files" not in payload
    full = _json(run_cli("structure", *rails.args, "--json", "--detail", "full"))
    assert len(full["files"]) == sum(full["files_by_language"].values())


def test_search_options_type_exclude_budget_context_mode_prefix(rails):
    typed = _json(run_cli("search", "invoice", "--type", "model", *rails.args, "--json"))
    assert typed["results"] and {r["type"] for r in typed["results"]} == {"model"}
    excluded = _json(run_cli("search", "invoice", "--exclude-type", "method", *rails.args, "--json"))
    assert "method" not in {r["type"] for r in excluded["results"]}
    context = _json(run_cli("search", "invoice", "--budget", "300", "--context", *rails.args, "--json"))
    assert context["context"] and context["tokens_used"] <= 300
    lexical = _json(run_cli("search", "invoice", "--mode", "lexical", *rails.args, "--json"))
    assert lexical["strategy"] == "lexical" and lexical["results"]
    scoped = _json(run_cli("search", "invoice", "--path-prefix", "app/jobs", *rails.args, "--json"))
    assert scoped["results"] and all(r["file_path"].startswith("app/jobs/") for r in scoped["results"])
    forced = _json(run_cli("search", "invoice", "--strategy", "graph", *rails.args, "--json"))
    assert forced["strategy"] == "graph"


def test_search_bad_type_and_scope_are_exit_2(rails):
    result = run_cli("search", "invoice", "--type", "not_a_type", *rails.args)
    assert result.code == 2 and "not_a_type" in result.stderr
    result = run_cli("search", "invoice", "--path-prefix", "../outside", *rails.args)
    assert result.code == 2 and "Traceback" not in result.stderr
    result = run_cli("search", "invoice", "--budget", "200001", *rails.args)
    assert result.code == 2 and "--budget" in result.stderr


def test_evaluate_bad_input_is_exit_2(rails, tmp_path):
    assert run_cli("evaluate", str(tmp_path / "missing.json"), *rails.args).code == 2
    queryset = tmp_path / "q.json"
    queryset.write_text(json.dumps({"queries": [{"query": "invoice", "expected_units": ["Billing::Invoice"]}]}))
    assert run_cli("evaluate", str(queryset), "--corpus", str(queryset)).code == 2  # --vectors missing
    report = run_cli("evaluate", str(queryset), *rails.args, "--json", expect=0).json()
    assert report["queries"][0]["retrieved"] and "aggregates" in report
