"""Storage that heals: corrupt files, racing first starts, lost updates, file modes, cache pruning."""

from __future__ import annotations

import asyncio
import logging
import os
import stat
from datetime import UTC, datetime, timedelta

from catalog.store import CatalogStore
from storage.userdata import UserDataStore


async def test_a_corrupt_catalog_is_rebuilt_from_the_fact_files(tmp_path, caplog):
    path = tmp_path / "catalog.sqlite"
    good = await CatalogStore(path).load()
    path.write_bytes(b"this is not a database at all" * 200)
    with caplog.at_level(logging.ERROR, logger="catalog.store"):
        again = await CatalogStore(path).load()
    assert again.version == good.version and len(again.models) == len(good.models)
    assert any(getattr(r, "event", "") == "catalog_rebuilt" for r in caplog.records)


async def test_a_corrupt_user_database_is_moved_aside_and_a_fresh_one_started(tmp_path, caplog):
    path = tmp_path / "user.sqlite"
    async with UserDataStore(path) as store:
        await store.prefs.set_user("tg:1", gpu_id="rtx-4090")
    path.write_bytes(b"SQLite format 3\x00" + b"\xff" * 8000)
    with caplog.at_level(logging.ERROR, logger="storage.userdata"):
        async with UserDataStore(path) as store:
            assert (await store.prefs.user("tg:1")).gpu_id is None  # fresh, and it works
            await store.prefs.set_user("tg:1", lang="de")
    moved = [p for p in tmp_path.iterdir() if p.name.startswith("user.sqlite.corrupt-")]
    assert moved and moved[0].read_bytes().startswith(b"SQLite format 3")
    assert any(getattr(r, "event", "") == "user_db_corrupt" for r in caplog.records)


async def test_first_starts_racing_on_a_fresh_data_directory_all_succeed(tmp_path):
    """Several processes' worth of connections migrate the same fresh files at once."""
    for trial in range(3):
        folder = tmp_path / f"t{trial}"
        folder.mkdir()

        async def user_db(folder=folder) -> None:
            async with UserDataStore(folder / "user.sqlite") as store:
                await store.prefs.set_user("tg:1", lang="en")

        results = await asyncio.gather(
            *(user_db() for _ in range(4)),
            *(CatalogStore(folder / "catalog.sqlite").load() for _ in range(3)),
            return_exceptions=True,
        )
        assert not [r for r in results if isinstance(r, BaseException)], results


async def test_user_database_is_private_to_its_owner(tmp_path):
    path = tmp_path / "user.sqlite"
    async with UserDataStore(path):
        pass
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    os.chmod(path, 0o644)  # an older FitBot's file is tightened on the next start
    async with UserDataStore(path):
        pass
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600


async def test_concurrent_preference_changes_all_land(tmp_path):
    async with UserDataStore(tmp_path / "user.sqlite") as store:
        prefs = store.prefs
        users = [f"tg:{i}" for i in range(50)]
        await asyncio.gather(
            *(
                change
                for u in users
                for change in (
                    prefs.set_user(u, gpu_id="rtx-4090", gpu_count=2),
                    prefs.set_user(u, lang="de"),
                    prefs.set_user(u, ram_gb=64.0),
                )
            ),
            *(
                change
                for u in users
                for change in (
                    prefs.set_chat(u + "-chat", lang="de"),
                    prefs.set_chat(u + "-chat", answer_mentions=False),
                )
            ),
        )
        for u in users:
            saved = await prefs.user(u)
            assert (saved.gpu_id, saved.gpu_count, saved.lang, saved.ram_gb) == ("rtx-4090", 2, "de", 64.0)
            chat = await prefs.chat(u + "-chat")
            assert (chat.lang, chat.answer_mentions) == ("de", False)


async def test_old_hub_cache_entries_are_pruned(tmp_path):
    async with UserDataStore(tmp_path / "user.sqlite") as store:
        old = (datetime.now(UTC) - timedelta(days=40)).isoformat()
        new = datetime.now(UTC).isoformat()
        await store.db.execute("INSERT INTO hub_cache VALUES ('a/old', 'a/old', 'x', ?, '{}')", (old,))
        await store.db.execute("INSERT INTO hub_cache VALUES ('a/new', 'a/new', 'x', ?, '{}')", (new,))
        assert await store.hub_cache.prune(timedelta(days=28)) == 1
        async with store.db.execute("SELECT repo_key FROM hub_cache") as cur:
            assert [r[0] async for r in cur] == ["a/new"]
