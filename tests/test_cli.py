"""CLI conventions: exit codes, one-line errors, JSON on stdout only, reading never writes.

These run the real entry point in a subprocess on a small repository indexed with the Fake
embedder (`WOODS_EMBEDDER=fake`, a test-only switch the entry point reads) so they stay fast; the
real-model end-to-end tests live in test_end_to_end.py. Every run's exit code is checked.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.helpers import index_with_fake, run_cli

SAMPLE = {
    "app/models/invoice.rb": "# An invoice a customer pays.\nclass Invoice\n  def total\n    42\n  end\nend\n",
    "lib/report.py": '"""Monthly report."""\n\n\ndef render_report(rows):\n    """Render rows as text."""\n    return "\\n".join(rows)\n',
}


@pytest.fixture(scope="module")
def small_repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("cli") / "repo"
    for rel, text in SAMPLE.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    (root / "blob.bin").write_bytes(b"\x00\x01\x02" * 100)
    index_with_fake(root, "--json")
    return root


def _one_error_line(stderr: str) -> str:
    lines = [line for line in stderr.splitlines() if line.strip()]
    assert len(lines) == 1, stderr
    assert "Traceback" not in stderr
    return lines[0]


def test_index_json_is_one_object_with_summary(small_repo, tmp_path):
    result = index_with_fake(small_repo, "--store", str(tmp_path / "s"), "--json")
    payload = json.loads(result.stdout)  # exactly one JSON document
    assert payload["schema_version"] == 1
    summary = payload["summary"]
    assert summary["files_by_language"] == {"python": 1, "ruby": 1}
    assert summary["skipped"].get("binary") == 1
    assert summary["units"] >= 4 and set(summary["seconds"]) >= {"discover", "parse", "embed", "write"}


def test_the_test_embedder_switch_is_checked_and_the_hidden_flag_is_gone(small_repo, tmp_path):
    store = tmp_path / "s"
    result = run_cli("index", str(small_repo), "--store", str(store), env={"WOODS_EMBEDDER": "psychic"})
    assert result.code == 2 and "WOODS_EMBEDDER" in _one_error_line(result.stderr)
    assert not store.exists()  # refused before anything was written, never a silent fallback
    gone = run_cli("index", str(small_repo), "--store", str(store), "--embedder", "fake")
    assert gone.code == 2 and "--embedder" in _one_error_line(gone.stderr)


def test_index_missing_path_exits_2(tmp_path):
    result = run_cli("index", str(tmp_path / "nope"))
    assert result.code == 2
    assert "path not found" in _one_error_line(result.stderr)


def test_index_file_instead_of_directory_exits_2(tmp_path):
    file = tmp_path / "f.py"
    file.write_text("x = 1\n")
    result = run_cli("index", str(file))
    assert result.code == 2 and "not a directory" in _one_error_line(result.stderr)


def test_search_without_index_says_to_run_index(tmp_path):
    result = run_cli("search", "invoice", "--path", str(tmp_path))
    assert result.code == 2
    assert "woods index" in _one_error_line(result.stderr)


def test_search_blank_and_oversized_queries_exit_2(small_repo):
    for query in ["", "   \t"]:
        result = run_cli("search", query, "--path", str(small_repo))
        assert result.code == 2 and "blank" in _one_error_line(result.stderr)
    result = run_cli("search", "x" * 8193, "--path", str(small_repo))
    assert result.code == 2 and "8192" in _one_error_line(result.stderr)


def test_bad_option_value_is_one_line_exit_2(small_repo):
    result = run_cli("search", "invoice", "--path", str(small_repo), "--limit", "zero")
    assert result.code == 2
    _one_error_line(result.stderr)
    result = run_cli("search", "invoice", "--path", str(small_repo), "--strategy", "psychic")
    assert result.code == 2
    _one_error_line(result.stderr)


def test_status_reports_counts_and_changes_without_writing(small_repo):
    store = small_repo / ".woods"
    before = {p: p.read_bytes() for p in store.rglob("*") if p.is_file()}
    result = run_cli("status", "--path", str(small_repo), "--json")
    assert result.code == 0, result.stderr
    payload = json.loads(result.stdout)
    assert payload["schema_version"] == 1
    assert payload["changes"]["fresh"] is True
    assert payload["manifest"]["counts"]["files"] == 2
    assert {p: p.read_bytes() for p in store.rglob("*") if p.is_file()} == before


def test_status_lists_changed_added_deleted(tmp_path):
    root = tmp_path / "repo"
    root.mkdir()
    (root / "a.py").write_text("def a():\n    return 1\n")
    (root / "b.py").write_text("def b():\n    return 2\n")
    index_with_fake(root)
    (root / "a.py").write_text("def a():\n    return 100\n")
    (root / "b.py").unlink()
    (root / "c.py").write_text("def c():\n    return 3\n")
    payload = json.loads(run_cli("status", "--path", str(root), "--json", expect=0).stdout)
    assert payload["changes"] == {
        "fresh": False, "changed": ["a.py"], "added": ["c.py"], "deleted": ["b.py"], "root_missing": False,
    }


def test_corrupt_index_is_one_line_exit_2_naming_the_file(tmp_path):
    root = tmp_path / "repo"
    root.mkdir()
    (root / "a.py").write_text("def a():\n    return 1\n")
    index_with_fake(root)
    current = json.loads((root / ".woods" / "CURRENT").read_text())["generation"]
    db = root / ".woods" / "generations" / current / "metadata.sqlite3"
    db.write_bytes(b"garbage" * 10)
    result = run_cli("status", "--path", str(root))
    assert result.code == 2
    line = _one_error_line(result.stderr)
    assert "metadata.sqlite3" in line and "woods index --full" in line


def test_help_does_not_import_torch():
    import subprocess
    import sys

    code = "import sys; from woods.cli import app; print('torch' in sys.modules, 'faiss' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False False"
    run_cli("--help", expect=0)


# Keyword search and lookup (a cold process answering without the vector leg) load no numpy either.
@pytest.mark.parametrize(
    ("args", "heavy"),
    [
        (["status"], ("torch", "faiss", "sentence_transformers")),
        (["search", "invoice total", "--strategy", "keyword"], ("torch", "faiss", "sentence_transformers", "numpy")),
        (["lookup", "Invoice"], ("torch", "faiss", "sentence_transformers", "numpy")),
    ],
)
def test_status_lookup_and_keyword_search_import_neither_torch_nor_faiss(small_repo, args, heavy):
    import subprocess
    import sys

    code = (
        "import sys\nfrom woods.cli import main\n"
        f"sys.argv = ['woods', *{args!r}, '--path', {str(small_repo)!r}, '--json']\n"
        "try:\n    main()\nexcept SystemExit as e:\n    assert e.code == 0, e.code\n"
        f"print(sorted(m for m in {heavy!r} if m in sys.modules), file=sys.stderr)\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr.strip().splitlines()[-1] == "[]"


DOCS_SAMPLE = {
    "README.md": (
        "# Ledger\n\nA tiny double-entry ledger.\n\n"
        "## Installation\n\nRun pip install ledger-tool, then export LEDGER_HOME pointing at your books.\n\n"
        "## Usage\n\nCall post_entry to record a transaction.\n"
    ),
    "config/settings.yml": "database:\n  host: localhost\n  port: 5432\nlogging:\n  level: debug\n",
    "ledger.py": 'def post_entry(amount):\n    """Record a transaction."""\n    return amount\n',
}


@pytest.fixture(scope="module")
def docs_repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("docs") / "repo"
    for rel, text in DOCS_SAMPLE.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    (root / "package-lock.json").write_text("{}\n")
    result = index_with_fake(root, "--json")
    assert result.code == 0, result.stderr
    summary = json.loads(result.stdout)["summary"]
    assert summary["files_by_language"] == {"markdown": 1, "python": 1, "yaml": 1}
    assert summary["skipped"]["lock"] == 1
    return root


def test_search_finds_a_readme_section_by_its_words(docs_repo):
    for strategy in ("vector", "keyword"):
        result = run_cli("search", "install ledger-tool LEDGER_HOME", "--path", str(docs_repo), "--json",
                         "--strategy", strategy)
        assert result.code == 0, result.stderr
        rows = json.loads(result.stdout)["results"]
        assert rows, strategy
        top = rows[0]
        assert (top["identifier"], top["type"], top["file_path"]) == ("README.md#installation", "document", "README.md")
        assert (top["line_start"], top["line_end"]) == (5, 7)


@pytest.mark.parametrize(("ref", "identifier", "lines"), [
    ("README.md", "README.md", (1, 11)),
    ("README.md#installation", "README.md#installation", (5, 7)),
    ("README.md:10", "README.md#usage", (9, 11)),
    ("config/settings.yml#database", "config/settings.yml#database", (1, 3)),
])
def test_resolve_names_documents_and_their_sections(docs_repo, ref, identifier, lines):
    result = run_cli("resolve", ref, "--path", str(docs_repo), "--json")
    assert result.code == 0, result.stdout + result.stderr
    payload = json.loads(result.stdout)
    assert payload["status"] == "resolved" and payload["identifier"] == identifier
    assert payload["type"] == "document" and (payload["line_start"], payload["line_end"]) == lines


def test_a_document_shaped_name_that_is_no_file_falls_through_to_names(docs_repo):
    result = run_cli("resolve", "missing.json", "--path", str(docs_repo), "--json")
    assert result.code == 3
    payload = json.loads(result.stdout)
    assert payload["status"] == "not_found" and payload["method"] != "passthrough"
