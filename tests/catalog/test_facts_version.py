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


def _pathlib_hash(directory):
    """``facts_hash`` as it was written with ``pathlib`` (the digest every stored catalog was built under), with
    the version of the code that derives rows (``ROWS_CODE``) last."""
    import hashlib

    from catalog.fact_files import CONFIG_DIR, FACT_FILES, ROWS_CODE

    digest = hashlib.sha256()
    names = sorted({*FACT_FILES, *(p.name for p in directory.glob("*.toml"))})
    for path in [directory / name for name in names] + sorted(CONFIG_DIR.rglob("*.*")):
        digest.update(path.name.encode())
        digest.update(path.read_bytes() if path.exists() else b"")
    digest.update(ROWS_CODE.encode())
    return digest.hexdigest()[:16]


def test_the_hash_is_the_one_pathlib_gave(tmp_path):
    """Listed and read with ``os`` calls for a faster start, the files and their order are the same: an
    existing catalog file stays current, a missing store file and a new side table count as before."""
    assert facts_hash(FACTS_DIR) == _pathlib_hash(FACTS_DIR)
    facts = tmp_path / "facts"
    shutil.copytree(FACTS_DIR, facts)
    (facts / "offers.toml").unlink()
    (facts / "a-new.toml").write_text("[[row]]\n", encoding="utf-8")
    (facts / "notes.txt").write_text("not a table\n", encoding="utf-8")
    assert facts_hash(facts) == _pathlib_hash(facts) != facts_hash(FACTS_DIR)
