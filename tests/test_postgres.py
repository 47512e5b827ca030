"""The PostgreSQL backend against a real server (tests/conftest.py `pg_server`): the same ranked
lists as the local backend for every strategy, publish/lock/cleanup semantics, several
repositories in one database, reading never writes, and one-line errors for bad URLs."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tests.helpers import FIXTURES, copy_fixture, index_with_fake, run_cli
from woods.api import Index, build_index
from woods.embedding.fake import FakeEmbeddingProvider
from woods.errors import InputError, LockTimeoutError
from woods.retrieval.code_search import CodeSearchConfig

# Queries of every shape: symbols, paths, sentences, Ruby-profile routing words.
QUERIES = [
    "Billing::Invoice#charge",
    "invoice charge",
    "where is the payment captured",
    "app/models/user.rb",
    "ClientSession",
    "parse config file",
    "how are users authenticated",
    "routes",
    "dependencies of OrdersController",
    "struct",
    "test helper",
    "render template",
]
STRATEGIES = [None, "vector", "keyword", "graph", "direct", "hybrid"]


@pytest.fixture(scope="module")
def fixtures_repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("pgparity") / "fixtures"
    root.mkdir()
    for child in sorted(FIXTURES.iterdir()):
        if child.is_dir():
            copy_fixture(child.name, root)
    build_index(root, provider_factory=FakeEmbeddingProvider, workers=1)
    return root


@pytest.fixture(scope="module")
def both(fixtures_repo: Path, pg_database: Callable[[], str]) -> Iterator[tuple[Index, Index, str]]:
    url = pg_database()
    build_index(fixtures_repo, store=url, repo="fixtures", provider_factory=FakeEmbeddingProvider, workers=1)
    with Index.open(fixtures_repo) as local, Index(url, repo="fixtures") as server:
        yield local, server, url


def _hits(result: Any) -> list[dict[str, Any]]:
    rows = []
    for hit in result:
        row = hit.to_dict()
        row.pop("repo", None)
        rows.append(row)
    return rows


def _same_ranking(a: Any, b: Any) -> bool:
    """Same ranked list; scores equal to 1e-6 (filtered vector searches: the local backend's numpy
    product over the whole eligible matrix rounds differently in the last bits)."""
    left, right = _hits(a), _hits(b)
    if [{**r, "score": None} for r in left] != [{**r, "score": None} for r in right]:
        return False
    return all(x["score"] == pytest.approx(y["score"], rel=1e-6, abs=1e-9) for x, y in zip(left, right, strict=True))


@pytest.mark.parametrize("profile", ["code", "ruby"])
@pytest.mark.parametrize("strategy", STRATEGIES)
def test_every_strategy_returns_the_same_ranked_list(both, profile, strategy):
    local, server, _url = both
    for query in QUERIES:
        a = local.search(query, limit=20, strategy=strategy, profile=profile)
        b = server.search(query, limit=20, strategy=strategy, profile=profile)
        assert _hits(a) == _hits(b), (query, strategy, profile)
        assert a.context == b.context


@pytest.mark.parametrize("profile", ["code", "ruby"])
def test_lexical_mode_and_filters_agree(both, profile):
    local, server, _url = both
    for query in QUERIES:
        for options in ({"mode": "lexical"}, {"types": ["method"]}, {"exclude_types": ["document"]},
                        {"path_prefixes": ["rails_app/app"]}):
            a = local.search(query, limit=15, profile=profile, **options)
            b = server.search(query, limit=15, profile=profile, **options)
            assert _same_ranking(a, b), (query, options, _hits(a), _hits(b))


def test_lexical_bm25_equals_fts5_to_the_last_bit(both):
    local, server, _url = both
    from woods.tokens import query_terms

    weights = CodeSearchConfig().lexical_weights
    with local._use() as lg, server._use() as sg:
        for query in [*QUERIES, "self", "def end", "requests request", "the a of", "zzzz", "café naïve"]:
            terms = query_terms(query)
            for w in (weights, (1.0, 1.0, 1.0, 1.0, 1.0)):
                for limit in (200, 5, 1):
                    local_hits = lg.stores.metadata.lexical_search(terms, limit, w)
                    assert local_hits == sg.stores.metadata.lexical_search(terms, limit, w)
                    # … and both equal FTS5's own ranking (at small limits: its split queries).
                    postings = lg.stores.metadata._postings_state
                    lg.stores.metadata._postings_state = (None,)
                    try:
                        assert local_hits == lg.stores.metadata.lexical_search(terms, limit, w)
                    finally:
                        lg.stores.metadata._postings_state = postings


def test_postings_and_term_rows_rank_the_same_as_the_local_index(both, fixtures_repo, pg_database, monkeypatch):
    """A generation is published with its postings (scored by the local backend's own function);
    one written before them gets per-term rows scored in SQL. Both paths give the local lists, for
    one repository and for a combined view (summed statistics), at every limit."""
    import psycopg

    from woods.store.postgres import open_postgres
    from woods.store.postings import Postings
    from woods.tokens import query_terms

    local, _server, _url = both
    url = pg_database()
    build_index(fixtures_repo, store=url, repo="with", provider_factory=FakeEmbeddingProvider, workers=1)
    monkeypatch.setattr(Postings, "open", classmethod(lambda cls, conn: None))
    build_index(fixtures_repo, store=url, repo="without", provider_factory=FakeEmbeddingProvider, workers=1)
    monkeypatch.undo()
    build_index(fixtures_repo, store=url, repo="again", provider_factory=FakeEmbeddingProvider, workers=1)
    with psycopg.connect(url) as conn:
        stats = conn.execute("SELECT repo, lexical_rows, lexical_tokens FROM woods.generations ORDER BY repo").fetchall()
    assert len({row[1:] for row in stats}) == 1 and stats[0][1] > 0
    weights = CodeSearchConfig().lexical_weights
    queries = [*QUERIES, "self", "def end", "requests request", "the a of", "zzzz"]
    with local._use() as lg, open_postgres(url, "with") as a, open_postgres(url, "without") as b:
        assert a.metadata.parts[0].postings and not b.metadata.parts[0].postings
        for query in queries:
            terms = query_terms(query)
            for limit in (200, 5, 1):
                expected = lg.stores.metadata.lexical_search(terms, limit, weights)
                assert a.metadata.lexical_search(terms, limit, weights) == expected, (query, limit)
                assert b.metadata.lexical_search(terms, limit, weights) == expected, (query, limit)
    # Combined views of three copies (statistics summed over them): a copy read through term rows
    # ranks exactly as one read through its postings.
    with open_postgres(url) as view:
        for query in queries:
            found = dict(view.metadata.lexical_search(query_terms(query), 10_000, weights))
            copies = {repo: {k.split(":", 1)[1]: v for k, v in found.items() if k.startswith(repo + ":")}
                      for repo in ("with", "without", "again")}
            assert copies["with"] == copies["without"] == copies["again"], query


def test_vector_hits_equal_faiss_and_filters_apply_before_the_limit(both):
    local, server, _url = both
    rng = np.random.default_rng(7)
    with local._use() as lg, server._use() as sg:
        for _ in range(5):
            vector = rng.standard_normal(lg.stores.vectors.dimension).astype(np.float32)
            vector /= np.linalg.norm(vector)
            assert lg.stores.vectors.search(vector, 25) == sg.stores.vectors.search(vector, 25)
            for limit in (1, 25):  # code search's vector leg: keys and scores only
                units = lg.stores.vectors.search_units(vector, limit)
                assert units == sg.stores.vectors.search_units(vector, limit)
                assert units == [(h.metadata["key"], h.score) for h in lg.stores.vectors.search(vector, limit)]
            for options in ({"types": ["method"]}, {"keys": lg.stores.metadata.all_identifiers()[:40]}):
                a = lg.stores.vectors.search(vector, 25, **options)
                b = sg.stores.vectors.search(vector, 25, **options)
                assert [h.embedding_id for h in a] == [h.embedding_id for h in b]
                assert [h.score for h in a] == pytest.approx([h.score for h in b], rel=1e-6, abs=1e-9)


def test_resolve_lookup_graph_and_structure_agree(both):
    local, server, _url = both
    for ref in ["Billing::Invoice#charge", "charge", "invoice.rb", "User", "the charge method of Invoice"]:
        assert local.resolve(ref).to_dict() == server.resolve(ref).to_dict()
    for identifier in ["Billing::Invoice", "User"]:
        assert [u.to_dict() for u in local.lookup_all(identifier)] == [u.to_dict() for u in server.lookup_all(identifier)]
        for direction in ("dependencies", "dependents"):
            assert local.traverse(identifier, direction=direction, depth=3).to_dict() == server.traverse(
                identifier, direction=direction, depth=3
            ).to_dict()
    a, b = local.structure(detail="full").to_dict(), server.structure(detail="full").to_dict()
    built = ("generation", "created_at")  # two builds of the same tree
    assert {k: v for k, v in a.items() if k not in built} == {k: v for k, v in b.items() if k not in built}
    assert local.pagerank(limit=None) == server.pagerank(limit=None)


def _row_counters(url: str) -> list[tuple[Any, ...]]:
    import psycopg

    with psycopg.connect(url) as conn:
        conn.execute("SELECT pg_stat_force_next_flush()")
        return conn.execute(
            "SELECT relname, n_tup_ins, n_tup_upd, n_tup_del FROM pg_stat_user_tables ORDER BY relname"
        ).fetchall()


def test_reading_never_writes(both):
    _local, server, url = both
    before = _row_counters(url)
    server.search("invoice charge")
    server.resolve("charge")
    server.status()
    run_cli("search", "payment", "--store", url, "--json", expect=0)
    run_cli("status", "--store", url, "--json", expect=0)
    assert _row_counters(url) == before


def test_incremental_run_reuses_parses_and_vectors_from_the_server(tmp_path, pg_database):
    url = pg_database()
    root = copy_fixture("python_pkg", tmp_path)
    first = build_index(root, store=url, provider_factory=FakeEmbeddingProvider, workers=1)
    assert not first.up_to_date and first.embedded > 0
    again = build_index(root, store=url, provider_factory=FakeEmbeddingProvider, workers=1)
    assert again.up_to_date and again.generation == first.generation
    target = sorted(root.rglob("*.py"))[0]
    target.write_text(target.read_text() + "\n\ndef brand_new_function():\n    return 1\n")
    third = build_index(root, store=url, provider_factory=FakeEmbeddingProvider, workers=1)
    assert third.generation != first.generation and third.reused_vectors > 0 and third.embedded <= 3
    assert third.reused_files == first.files - 1
    with Index(url) as index:
        assert index.lookup("brand_new_function") is not None or index.resolve("brand_new_function").status == "resolved"


def test_purge_guard_applies_on_the_server(tmp_path, pg_database):
    url = pg_database()
    root = copy_fixture("python_pkg", tmp_path)
    build_index(root, store=url, provider_factory=FakeEmbeddingProvider, workers=1)
    for path in sorted(root.rglob("*.py"))[1:]:
        path.unlink()
    with pytest.raises(InputError, match="allow-purge"):
        build_index(root, store=url, provider_factory=FakeEmbeddingProvider, workers=1)
    build_index(root, store=url, allow_purge=True, provider_factory=FakeEmbeddingProvider, workers=1)


def test_old_generations_are_dropped_but_the_previous_and_pinned_ones_kept(tmp_path, pg_database):
    import psycopg

    url = pg_database()
    root = copy_fixture("python_pkg", tmp_path)
    names = []
    pinned = None
    for i in range(4):
        (root / f"extra_{i}.py").write_text(f"def extra_{i}():\n    return {i}\n")
        names.append(build_index(root, store=url, provider_factory=FakeEmbeddingProvider, workers=1).generation)
        if i == 0:
            pinned = Index(url)  # a reader on the first generation holds it
    assert pinned is not None
    with psycopg.connect(url) as conn:
        kept = [r[0] for r in conn.execute("SELECT name FROM woods.generations ORDER BY id")]
    assert kept == [names[0], names[2], names[3]]  # pinned, previous, current
    assert pinned.search("extra").hits  # the pinned reader still answers from its generation
    pinned.close()
    build_index(root / "..", store=url, repo="other", provider_factory=FakeEmbeddingProvider, workers=1, allow_purge=True)
    (root / "extra_9.py").write_text("def extra_9():\n    return 9\n")
    build_index(root, store=url, provider_factory=FakeEmbeddingProvider, workers=1)
    with psycopg.connect(url) as conn:
        kept = [r[0] for r in conn.execute(f"SELECT name FROM woods.generations WHERE repo = '{root.name}' ORDER BY id")]
        tables = {r[0] for r in conn.execute("SELECT tablename FROM pg_tables WHERE schemaname = 'woods'")}
        ids = {r[0] for r in conn.execute("SELECT id FROM woods.generations")}
    assert len(kept) == 2
    assert {t.split("_", 1)[0] for t in tables if t[0] == "g" and t[1].isdigit()} == {f"g{i}" for i in ids}


def test_a_second_writer_of_the_same_repository_times_out_others_do_not(tmp_path, pg_database):
    from woods.store.pg_connect import connect
    from woods.store.pg_publish import PostgresLock, ensure_schema

    url = pg_database()
    conn = connect(url)
    ensure_schema(conn, url)
    root = copy_fixture("python_pkg", tmp_path)
    with PostgresLock(conn, root.name, 0):
        with pytest.raises(LockTimeoutError, match="--wait"):
            build_index(root, store=url, wait=0.3, provider_factory=FakeEmbeddingProvider, workers=1)
        build_index(root, store=url, repo="another", provider_factory=FakeEmbeddingProvider, workers=1)
    conn.close()
    build_index(root, store=url, wait=0, provider_factory=FakeEmbeddingProvider, workers=1)


def test_several_repositories_in_one_database(tmp_path, pg_database):
    url = pg_database()
    rails = copy_fixture("rails_app", tmp_path)
    python = copy_fixture("python_pkg", tmp_path)
    index_with_fake(rails, "--store", url, "--json")
    index_with_fake(rails, "--json")
    index_with_fake(python, "--store", url, "--repo", "py", "--json")
    both = run_cli("search", "invoice charge", "--store", url, "--json", "--limit", "30", expect=0).json()
    repos = {row["repo"] for row in both["results"]}
    assert repos == {"rails_app", "py"}
    assert all(row["key"].startswith(row["repo"] + ":") for row in both["results"])
    one = run_cli("search", "invoice charge", "--store", url, "--repo", "rails_app", "--json", expect=0).json()
    assert {row["repo"] for row in one["results"]} == {"rails_app"}
    with Index(url, repo="rails_app") as single, Index.open(rails) as local:
        assert _hits(single.search("invoice charge")) == _hits(local.search("invoice charge"))
    human = run_cli("search", "invoice", "--store", url, expect=0)
    assert "rails_app: " in human.stdout
    missing = run_cli("search", "x", "--store", url, "--repo", "nope")
    assert missing.code == 2 and "indexed: py, rails_app" in missing.stderr
    bad = run_cli("index", str(rails), "--store", url, "--repo", "no:colons")
    assert bad.code == 2 and "invalid repository name" in bad.stderr


def test_bad_urls_and_servers_are_one_line_exit_2(tmp_path, pg_server):
    down = run_cli("search", "x", "--store", f"postgresql://postgres@/postgres?host={tmp_path}")
    assert down.code == 2 and "cannot connect to PostgreSQL" in down.stderr and len(down.stderr.splitlines()) == 1
    empty = run_cli("status", "--store", pg_server)
    assert empty.code == 2 and "no woods index" in empty.stderr
    with_password = run_cli("search", "x", "--store", f"postgresql://u:secret@/postgres?host={tmp_path}")
    assert with_password.code == 2 and "secret" not in with_password.stderr
    local_repo = run_cli("search", "x", "--path", str(tmp_path), "--repo", "a")
    assert local_repo.code == 2 and "PostgreSQL" in local_repo.stderr


def test_missing_pgvector_is_exit_2_with_the_fix(tmp_path, pg_database):
    """A role that may not create extensions, in a database without pgvector."""
    import psycopg

    url = pg_database()
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("DROP ROLE IF EXISTS woods_plain")
        conn.execute("CREATE ROLE woods_plain LOGIN")
        database = conn.execute("SELECT current_database()").fetchone()[0]
        conn.execute(f'GRANT CREATE ON DATABASE "{database}" TO woods_plain')
    plain = url.replace("postgresql://postgres:@", "postgresql://woods_plain@").replace("postgresql://postgres@", "postgresql://woods_plain@")
    root = copy_fixture("python_pkg", tmp_path)
    result = index_with_fake(root, "--store", plain, expect=None)
    if "CREATE EXTENSION vector" not in result.stderr:
        # pgvector is a trusted extension on some builds: then the plain role created it.
        assert result.code == 0, result
        return
    assert result.code == 2 and len(result.stderr.strip().splitlines()) == 1


def test_status_names_the_repository_and_the_redacted_store(both):
    _local, _server, url = both
    payload = run_cli("status", "--store", url, "--repo", "fixtures", "--json", expect=0).json()
    assert payload["repo"] == "fixtures" and payload["store"].startswith("postgresql://")
    assert payload["counts"]["units"] > 100
    json.dumps(payload)


def test_the_organisation_vector_index_answers_a_combined_view_as_the_exact_scans(tmp_path, pg_database, monkeypatch):
    """A search over every repository asks the organisation's vector index (one HNSW query) for
    the repositories it covers; on small repositories its top hits are the exact scans' hits.
    A refresh follows re-publishes and keeps a generation a reader pins."""
    import psycopg

    import woods.store.postgres as pg
    from woods.store.pg_connect import connect
    from woods.store.pg_publish import refresh_org_vectors

    url = pg_database()
    roots = [copy_fixture(name, tmp_path) for name in ("python_pkg", "rails_app", "go_module")]
    for root in roots:
        build_index(root, store=url, provider_factory=FakeEmbeddingProvider, workers=1)
    conn = connect(url)
    assert refresh_org_vectors(conn, url)["added"] == 3
    assert refresh_org_vectors(conn, url) == {"added": 0, "removed": 0, "rows": 0}
    monkeypatch.setattr(pg, "EXACT_SEARCH_MAX_CHUNKS", 0)  # the fixtures are small: ask the index anyway
    rng = np.random.default_rng(3)
    with pg.open_postgres(url) as view, pg.open_postgres(url, exact=True) as exact:
        assert all(p.org for p in view.metadata.parts) and view.vectors._org_search(None, None)
        for _ in range(5):
            vector = rng.standard_normal(view.vectors.dimension).astype(np.float32)
            vector /= np.linalg.norm(vector)
            assert view.vectors.search(vector, 10) == exact.vectors.search(vector, 10)
        pinned = next(p.generation.id for p in view.metadata.parts if p.repo == roots[0].name)
        (roots[0] / "extra.py").write_text("def extra():\n    return 1\n")
        build_index(roots[0], store=url, provider_factory=FakeEmbeddingProvider, workers=1)
        assert refresh_org_vectors(conn, url) == {"added": 1, "removed": 0, "rows": _org_rows(url, roots[0].name)}
    with psycopg.connect(url) as check:
        covered = {r[0] for r in check.execute("SELECT gen FROM woods.org_generations")}
    assert pinned in covered  # the reader held it while the refresh ran
    assert refresh_org_vectors(conn, url)["removed"] == 1  # released: now removed
    conn.close()


def _org_rows(url: str, repo: str) -> int:
    import psycopg

    with psycopg.connect(url) as conn:
        return int(conn.execute("SELECT g.chunks FROM woods.repos r JOIN woods.generations g ON g.id = "
                                "r.current_generation WHERE r.name = %s", (repo,)).fetchone()[0])
