"""The user-data database: upgrades in place without losing rows, survives concurrent writers."""

from __future__ import annotations

import asyncio
import sqlite3

from storage.prefs import LoggedQuery
from storage.userdata import USER_MIGRATIONS, UserDataStore


async def test_an_old_database_is_upgraded_without_losing_rows(tmp_path):
    path = tmp_path / "user.sqlite"
    # a database written by the first release: only the hub cache existed
    old = sqlite3.connect(path)
    old.execute("CREATE TABLE _migrations (name TEXT PRIMARY KEY, applied_at TEXT DEFAULT CURRENT_TIMESTAMP)")
    old.execute(
        "CREATE TABLE hub_cache (repo_key TEXT PRIMARY KEY, repo_id TEXT NOT NULL, revision TEXT NOT NULL,"
        " fetched_at TEXT NOT NULL, data TEXT NOT NULL)"
    )
    old.execute("INSERT INTO hub_cache VALUES ('a/b', 'a/b', 'abc', '2026-01-01T00:00:00+00:00', '{}')")
    old.execute("INSERT INTO _migrations (name) VALUES ('m001_hub_cache')")
    old.commit()
    old.close()
    async with UserDataStore(path) as store:
        async with store.db.execute("SELECT repo_id FROM hub_cache") as cur:
            assert [r[0] async for r in cur] == ["a/b"]
        async with store.db.execute("SELECT name FROM _migrations ORDER BY name") as cur:
            assert [r[0] async for r in cur] == [m.__name__ for m in USER_MIGRATIONS]
        await store.prefs.set_user("tg:1", gpu_id="rtx-4090")
    async with UserDataStore(path) as again:  # re-opening applies nothing twice
        assert (await again.prefs.user("tg:1")).gpu_id == "rtx-4090"


async def test_concurrent_writers_from_both_adapters_lose_nothing(tmp_path):
    async with UserDataStore(tmp_path / "user.sqlite") as store:
        log = store.query_log()

        async def writer(platform: str, n: int) -> None:
            for i in range(n):
                await log.record(LoggedQuery(platform, "fit", f"m{i % 3}", "rtx-4090", None, None, True, 1.0))
                await store.prefs.set_user(f"{platform}:{i % 5}", ram_gb=float(i))

        await asyncio.gather(writer("tg", 100), writer("dc", 100))
        assert (await log.stats())["questions"] == 200
    # a second process (another connection) sees every acknowledged write
    check = sqlite3.connect(tmp_path / "user.sqlite")
    assert check.execute("SELECT COUNT(*) FROM query_log").fetchone()[0] == 200
    assert check.execute("SELECT COUNT(*) FROM user_prefs").fetchone()[0] == 10
    check.close()


async def test_retention_prunes_old_rows(tmp_path):
    from datetime import UTC, datetime, timedelta

    async with UserDataStore(tmp_path / "user.sqlite") as store:
        log = store.query_log(retention_days=30)
        await log.record(LoggedQuery("tg", "fit", "m", "g", None, None, True, 1.0))
        assert await log.prune(now=datetime.now(UTC) + timedelta(days=31)) == 1
        assert (await log.stats())["questions"] == 0


def test_an_acknowledged_write_survives_a_killed_process(tmp_path):
    import os
    import signal
    import subprocess
    import sys
    import textwrap

    path = tmp_path / "user.sqlite"
    script = textwrap.dedent(f"""
        import asyncio, sys, time
        from pathlib import Path
        from storage.userdata import UserDataStore

        async def main():
            store = await UserDataStore(Path({str(path)!r})).open()
            await store.prefs.set_user("tg:1", gpu_id="rtx-4090", gpu_count=2)
            print("acknowledged", flush=True)
            await store.prefs.set_user("tg:2", gpu_id="rtx-3090")  # may or may not land before the kill
            time.sleep(30)

        asyncio.run(main())
    """)
    proc = subprocess.Popen(
        [sys.executable, "-c", script],
        stdout=subprocess.PIPE,
        text=True,
        cwd=os.path.dirname(os.path.dirname(os.path.dirname(__file__))),
    )
    assert proc.stdout is not None and proc.stdout.readline().strip() == "acknowledged"
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=10)
    proc.stdout.close()
    check = sqlite3.connect(path)
    assert check.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    assert check.execute("SELECT gpu_id, gpu_count FROM user_prefs WHERE user_id = 'tg:1'").fetchone() == (
        "rtx-4090",
        2,
    )
    check.close()
