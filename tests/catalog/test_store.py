"""The catalog store builds SQLite from the fact files, rebuilds when they change, keeps user data apart."""

from __future__ import annotations

import shutil

import aiosqlite
import pytest

from catalog.facts import FACTS_DIR, FactError, load_facts
from catalog.store import CatalogStore


async def test_builds_on_first_use_and_loads_everything(tmp_path):
    store = CatalogStore(tmp_path / "catalog.sqlite")
    catalog = await store.load()
    facts = load_facts()
    assert len(catalog.gpus) == len(facts.gpus) > 0
    assert len(catalog.quants) == len(facts.quants)
    assert catalog.version == facts.version
    assert catalog.built_at
    assert catalog.quant("q4_k_m") is not None
    async with aiosqlite.connect(tmp_path / "catalog.sqlite") as db:
        rows = await (await db.execute("SELECT name FROM _migrations")).fetchall()
    assert [r[0] for r in rows] == ["m001_catalog_tables"]


async def test_rebuilds_when_a_fact_file_changes(tmp_path):
    facts = tmp_path / "facts"
    shutil.copytree(FACTS_DIR, facts)
    store = CatalogStore(tmp_path / "catalog.sqlite", facts)
    first = await store.load()
    quants = facts / "quants.toml"
    quants.write_text(quants.read_text().replace('label = "Q8_0 (8-bit)"', 'label = "Q8_0 eight bit"'))
    second = await store.load()
    assert second.version != first.version
    assert second.quant("Q8_0").label == "Q8_0 eight bit"
    again = await store.load()
    assert again.built_at == second.built_at  # unchanged files: no rebuild


async def test_a_broken_fact_file_leaves_the_old_database_intact(tmp_path):
    facts = tmp_path / "facts"
    shutil.copytree(FACTS_DIR, facts)
    store = CatalogStore(tmp_path / "catalog.sqlite", facts)
    good = await store.load()
    (facts / "quants.toml").write_text("[[quant]]\nid = 'X'\n")
    with pytest.raises(FactError, match="quants.toml"):
        await store.load()
    async with aiosqlite.connect(tmp_path / "catalog.sqlite") as db:
        (count,) = await (await db.execute("SELECT COUNT(*) FROM quants")).fetchone()
    assert count == len(good.quants)


def test_every_fact_row_has_a_source_and_date():
    catalog = load_facts()
    for item in (*catalog.gpus, *catalog.models, *catalog.quants, *catalog.sizes, *catalog.offers):
        assert item.provenance.source.strip()
        assert item.provenance.as_of.strip()


def test_every_device_names_its_chip_generation():
    missing = [g.id for g in load_facts().gpus if not g.arch]
    assert missing == []
