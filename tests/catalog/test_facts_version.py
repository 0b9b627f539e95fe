"""Every fact file is part of the catalog version: editing a side table (issue 26) is a new version too."""

from __future__ import annotations

import shutil

import pytest

from catalog.facts import FACTS_DIR, facts_hash
from catalog.store import CatalogStore

SIDE_TABLES = (
    "ollama_tags.toml",
    "quant_repos.toml",
    "quant_quality.toml",
    "speculative.toml",
    "vision.toml",
    "side_models.toml",
)


@pytest.mark.parametrize("name", SIDE_TABLES)
def test_editing_a_side_table_changes_the_version(tmp_path, name):
    facts = tmp_path / "facts"
    shutil.copytree(FACTS_DIR, facts)
    before = facts_hash(facts)
    (facts / name).write_text((facts / name).read_text(encoding="utf-8") + "\n# edited\n", encoding="utf-8")
    assert facts_hash(facts) != before


def test_a_new_fact_file_changes_the_version(tmp_path):
    facts = tmp_path / "facts"
    shutil.copytree(FACTS_DIR, facts)
    before = facts_hash(facts)
    (facts / "new_table.toml").write_text("[[row]]\n", encoding="utf-8")
    assert facts_hash(facts) != before


async def test_the_store_rebuilds_when_only_a_side_table_changes(tmp_path):
    facts = tmp_path / "facts"
    shutil.copytree(FACTS_DIR, facts)
    first = await CatalogStore(tmp_path / "catalog.sqlite", facts).load()
    path = facts / "quant_quality.toml"
    path.write_text(path.read_text(encoding="utf-8") + "\n# edited\n", encoding="utf-8")
    second = await CatalogStore(tmp_path / "catalog.sqlite", facts).load()
    assert second.version != first.version == facts_hash(FACTS_DIR)
