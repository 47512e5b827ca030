"""Patterns real repositories have that trip code search, each on a small repository of its own
(never a benchmark's): the hub that ties the parts together, a type a question names in plain
words. Each test also shows the ranking without the signal, so it cannot pass by accident.

Indexes use the real stores and pipeline with the Fake embedder (named as the test double it is);
searches run in `--mode lexical` (no model) unless a test says otherwise, so they are exact.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from tests.helpers import write_files
from woods.embedding.fake import FakeEmbeddingProvider
from woods.indexing import index_repository
from woods.retrieval.code_search import CodeSearchConfig
from woods.retrieval.query_analysis import analyze, soft_names
from woods.retrieval.retriever import Retriever
from woods.retrieval.signals import hub_shares, stem_key
from woods.store.index import IndexStores

DRIVER = '''from storage.base import Driver


class {cls}(Driver):
    """The {what} blob storage backend: blob storage in {what}."""

    name = "{key}"

    def put_blob(self, key, data):
        """Write one blob to the {what} backend."""
        return self.client.write(key, data)
'''

STORAGE_REPO = {
    "storage/base.py": (
        'class Driver:\n    """What every driver provides."""\n\n'
        "    def put_blob(self, key, data):\n        raise NotImplementedError\n"
    ),
    **{
        f"storage/drivers/{key}.py": DRIVER.format(cls=cls, key=key, what=what)
        for cls, key, what in (("S3Driver", "s3", "S3"), ("DiskDriver", "disk", "local disk"),
                               ("GcsDriver", "gcs", "Google Cloud"), ("AzureDriver", "azure", "Azure"))
    },
    "storage/registry.py": (
        "from storage.drivers.s3 import S3Driver\nfrom storage.drivers.disk import DiskDriver\n"
        "from storage.drivers.gcs import GcsDriver\nfrom storage.drivers.azure import AzureDriver\n\n\n"
        "class Registry:\n    \"\"\"Chooses the blob storage backend the settings name.\"\"\"\n\n"
        "    def __init__(self):\n"
        "        self.known = {d.name: d for d in (S3Driver, DiskDriver, GcsDriver, AzureDriver)}\n\n"
        "    def select(self, settings):\n        return self.known[settings['backend']]()\n"
    ),
    "app/json_element.py": (
        "class JsonElement:\n    \"\"\"A node of a parsed document: object, array or primitive.\"\"\"\n\n"
        "    def children(self):\n        return []\n"
    ),
    "app/tree_walker.py": (
        "def walk_json_tree(root):\n    \"\"\"Visit every json element of a parsed tree depth first: element by element.\"\"\"\n"
        "    stack = [root]\n    while stack:\n        element = stack.pop()\n        yield element\n"
        "        stack.extend(element.children())  # each json element, each element's children\n"
    ),
    **{f"util/misc{i}.py": f"def helper{i}(value):\n    return str(value) + '{w}'\n"
       for i, w in enumerate(["alpha", "bravo", "charlie", "delta", "echo", "foxtrot"])},
}


@pytest.fixture(scope="module")
def storage(tmp_path_factory: pytest.TempPathFactory):
    root = write_files(tmp_path_factory.mktemp("patterns") / "repo", STORAGE_REPO)
    index_repository(root, root / ".woods", FakeEmbeddingProvider, workers=1)
    with IndexStores.open(root / ".woods") as stores:
        yield stores


def files(stores: IndexStores, query: str, config: CodeSearchConfig | None = None) -> list[str]:
    retriever = Retriever(stores, FakeEmbeddingProvider, mode="lexical", profile="code", code_config=config)
    return list(dict.fromkeys(c.file_path for c in retriever.retrieve(query, limit=10).candidates))


def test_the_registry_that_ties_the_backends_together_leads_a_question_about_them(storage):
    question = "how is the blob storage backend chosen"
    with_hubs = files(storage, question)
    assert with_hubs[0] == "storage/registry.py", with_hubs
    without = files(storage, question, replace(CodeSearchConfig(), hub_boost=0.0))
    assert without[0].startswith("storage/drivers/"), without  # the parts' own words win without it


def test_a_type_named_in_plain_words_leads(storage):
    question = "JSON element tree"
    named = files(storage, question)
    assert named[0] == "app/json_element.py", named
    without = files(storage, question, replace(CodeSearchConfig(), soft_name_boost=0.0, soft_file_boost=0.0))
    assert without[0] == "app/tree_walker.py", without  # its words repeat the question's


def test_soft_names_are_capitalised_words_and_joined_word_pairs():
    assert soft_names("how does the Logger pick a handler")[0] == "Logger"
    names = soft_names("how are type adapter factories registered by Gson")
    assert "Gson" in names and "TypeAdapter" in names and "AdapterFactories" in names
    assert all(n.lower() not in {"how", "are", "by"} for n in names)
    assert soft_names("JSON element hierarchy")[:2] == ("JsonElement", "ElementHierarchy")
    assert analyze("JsonElement").soft_names == ()  # a symbol query names its symbol already
    assert analyze("how are retries handled").soft_names == ()


def test_hub_shares_weigh_the_linked_leaders():
    best = {"registry.py": 0.5, "s3.py": 1.0, "disk.py": 0.9, "other.py": 0.8}
    links = {("registry.py", "s3.py"), ("registry.py", "disk.py")}
    shares = hub_shares(best, links, top=3)
    assert shares["registry.py"] == pytest.approx((1.0 + 0.9) / (1.0 + 0.9 + 0.8))
    assert shares["s3.py"] == pytest.approx(0.0)  # linked with registry.py, which is not a leader
    assert shares["other.py"] == 0.0
    assert hub_shares(best, set(), top=3) == dict.fromkeys(best, 0.0)


def test_stem_key_compares_file_names_with_names():
    assert stem_key("gson/JsonElement.java") == stem_key("src/json_element.py") == "jsonelement"
    assert stem_key("Dapper/SqlMapper.Async.cs") == "sqlmapper" and stem_key("a/b-c.ts") == "bc"


def test_file_links_relate_files_by_their_resolved_edges(storage):
    links = storage.metadata.file_links(["storage/registry.py", "storage/drivers/s3.py", "app/tree_walker.py"])
    assert ("storage/registry.py", "storage/drivers/s3.py") in links
    assert all(a != b for a, b in links) and not any("tree_walker" in a or "tree_walker" in b for a, b in links)
    assert storage.metadata.file_links(["storage/registry.py"]) == set()


INSTALLER_REPO = {
    "install.sh": (
        "#!/bin/sh\n# Download the fetcher binary from the release page and install it.\n"
        "download_binary() {\n  curl -fsSL \"$RELEASE_URL/fetcher-$VERSION.tar.gz\" -o /tmp/fetcher.tgz  # download\n}\n"
        "install_binary() {\n  tar -xzf /tmp/fetcher.tgz -C \"$PREFIX/bin\"\n}\ndownload_binary\ninstall_binary\n"
    ),
    "fetcher/download.py": (
        "def download(url, target):\n    \"\"\"Download a remote file to a local path, resuming a partial download.\"\"\"\n"
        "    with open(target, 'ab') as out:\n        out.write(fetch_range(url, out.tell()))\n"
    ),
    **{f"util/misc{i}.py": f"def helper{i}(value):\n    return str(value) + '{w}'\n"
       for i, w in enumerate(["alpha", "bravo", "charlie", "delta"])},
}


def test_an_installer_does_not_outrank_the_program_unless_asked_for(tmp_path):
    from woods.paths import BUILD, path_roles, roles_asked_for

    assert BUILD in path_roles("install.sh") and BUILD in path_roles("scripts/release.py")
    assert BUILD in path_roles("CMakeLists.txt") and not path_roles("fetcher/download.py")
    assert BUILD in roles_asked_for({"installer"}) and BUILD not in roles_asked_for({"download"})
    root = write_files(tmp_path / "repo", INSTALLER_REPO)
    index_repository(root, root / ".woods", FakeEmbeddingProvider, workers=1)
    with IndexStores.open(root / ".woods") as stores:
        assert files(stores, "how is a file download resumed")[0] == "fetcher/download.py"
        assert files(stores, "how does the installer download the binary")[0] == "install.sh"
        unscaffolded = replace(CodeSearchConfig(), role_factors={})
        assert files(stores, "download the binary", unscaffolded)[0] == "install.sh"
        assert files(stores, "download the binary")[0] == "fetcher/download.py"


def test_a_symbol_finds_its_dollar_prefixed_core_type():
    from woods.retrieval.signals import fold_name, name_match

    assert name_match("$ZodType", ["ZodType"]) == 0.7 and name_match("ZodType", ["ZodType"]) == 1.0
    assert fold_name("$Zod_Type") == "zodtype" and name_match("ZodTypes", ["ZodType"]) == 0.0
