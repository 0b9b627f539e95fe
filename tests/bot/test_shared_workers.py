"""Two services on one database, as two worker processes: what one learns the other uses, one limit for both.

Runs on both backends (``store_url``): with SQLite two services in one process share the file;
with PostgreSQL they are what two ``fitbot run`` workers on different hosts are.
"""

from __future__ import annotations

import json

import pytest

from bot.app.migrate import migrate, shared_health, user_store
from bot.app.run import open_service
from bot.app.settings import Settings
from bot.service import User
from catalog.facts import load_facts

CATALOG = load_facts()
ALICE = User(id="tg:1", chat="tg:1")


@pytest.fixture
def settings(store_url, monkeypatch, tmp_path):
    if store_url:
        monkeypatch.setenv("FITBOT_DATABASE_URL", store_url)
    monkeypatch.setenv("RATE_USER_PER_MINUTE", "6")
    return Settings()


@pytest.fixture
async def workers(settings):
    services = [await open_service(CATALOG, settings) for _ in range(2)]
    yield services
    for s in services:
        await s.close()


async def test_mygpu_set_through_one_worker_is_used_by_the_other(workers):
    one, two = workers
    saved = await one.answer("/mygpu 2x 3090", user=ALICE)
    assert saved.kind == "settings"
    reply = await two.answer("can I run qwen3 32b?", user=ALICE)
    assert reply.kind == "fit" and "2x RTX 3090" in reply.title


async def test_a_flood_through_two_workers_is_limited_as_one(postgres_url, monkeypatch):
    """PostgreSQL only: on SQLite there is one process per data directory, counting in memory."""
    monkeypatch.setenv("FITBOT_DATABASE_URL", postgres_url)
    monkeypatch.setenv("RATE_USER_PER_MINUTE", "6")
    workers = [await open_service(CATALOG, Settings()) for _ in range(2)]
    kinds = [(await workers[i % 2].answer("/fit qwen3-8b 4090", user=ALICE)).kind for i in range(12)]
    assert kinds.count("fit") == 6 and kinds[6:] == ["slow_down"] * 6
    other = await workers[1].answer("/fit qwen3-8b 4090", user=User(id="tg:2", chat="tg:2"))
    assert other.kind == "fit"
    for s in workers:
        await s.close()


async def test_migrate_and_health_report_the_backend(settings, store_url, capsys):
    assert await migrate(settings) == 0
    assert "m102_shared_state" in capsys.readouterr().out
    async with user_store(settings) as store:
        lines = await shared_health(store)
    if store_url is None:
        assert lines == ["user database: SQLite (one process)"]
    else:
        assert lines[0] == "user database: PostgreSQL (shared)"
        assert lines[1].startswith("inbox: 0 open, 0 waiting for a worker (oldest –)")
        assert "leader telegram-poll: none" in lines


async def test_the_elected_cleanup_prunes_expired_shared_state(postgres_url, tmp_path):
    import asyncio

    from bot.app.jobs import CLEANUP, cleanup_job
    from storage.leader import election, while_leader
    from storage.shared import ButtonTable
    from storage.userdata import UserDataStore

    async with UserDataStore(tmp_path / "user.sqlite", url=postgres_url) as store:
        db = store.database
        await ButtonTable(db).put("old", "/fit x", ttl_s=-1)
        await ButtonTable(db).put("new", "/fit y", ttl_s=60)
        stop = asyncio.Event()
        task = asyncio.create_task(while_leader(election(db, CLEANUP, 0.1), stop, lambda s: cleanup_job(db, s, 0.05)))
        for _ in range(100):
            if await db.fetchval("SELECT COUNT(*) FROM buttons") == 1:
                break
            await asyncio.sleep(0.05)
        stop.set()
        await asyncio.wait_for(task, 5)
        assert await ButtonTable(db).get("new") == "/fit y"
        assert await db.fetchval("SELECT COUNT(*) FROM buttons") == 1


async def test_a_postgresql_that_refuses_connections_costs_the_defaults_not_the_answer(
    postgres_server, postgres_url, monkeypatch
):
    """Issue 21's rule on the shared backend: preferences, limits and usage failing never fail an answer."""
    import asyncpg

    monkeypatch.setenv("FITBOT_DATABASE_URL", postgres_url)
    service = await open_service(CATALOG, Settings())
    assert (await service.answer("/mygpu 2x 3090", user=ALICE)).kind == "settings"
    name = postgres_url.rsplit("/", 1)[1]
    admin = await asyncpg.connect(postgres_server.url)
    try:
        await admin.execute(f"ALTER DATABASE {name} ALLOW_CONNECTIONS false")
        await admin.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1", name)
        saved = await service.answer("/mygpu 4090", user=ALICE)
        assert saved.kind == "error" and "could not be saved" in saved.summary
        assert (await service.answer("/fit qwen3-8b 4090", user=ALICE)).kind == "fit"
        answer = await service.answer("can I run qwen3 32b?", user=ALICE)
        assert answer.kind != "error" and "3090" not in answer.title  # answered, without the saved GPUs
        await admin.execute(f"ALTER DATABASE {name} ALLOW_CONNECTIONS true")
        answer = await service.answer("can I run qwen3 32b?", user=ALICE)
        assert answer.kind == "fit" and "2x RTX 3090" in answer.title  # back: the saved GPUs again
    finally:
        await admin.execute(f"ALTER DATABASE {name} ALLOW_CONNECTIONS true")
        await admin.close()
        await service.close()


async def test_only_the_elected_worker_refreshes_prices_every_worker_shows_them_and_failover_hands_over(
    postgres_url, monkeypatch
):
    """PostgreSQL only: the daily price refresh is a leader job; the prices live in the shared database."""
    import asyncio
    from datetime import UTC, datetime, timedelta

    from bot.app.jobs import PRICE_REFRESH
    from catalog.prices.refresh import schedule_prices
    from catalog.prices.store import PriceTables
    from fitbot_fakes.price_apis import FakePriceApis
    from storage.leader import election, lock_key

    def lambda_asks() -> int:
        return sum(path.startswith("/lambda") for _, path, _ in fake.requests)

    async def until(check, timeout_s: float = 60.0) -> None:  # generous: CI machines are shared
        for _ in range(int(timeout_s / 0.1)):
            if await check():
                return
            await asyncio.sleep(0.1)
        raise AssertionError("timed out")

    question = "/cloud qwen3-32b q4_k_m more"

    def live_lambda(reply) -> bool:  # the fake's Lambda H100 at $2.49 an hour (not a $/Mtok that reads the same)
        rows = reply.table.rows if reply.table is not None else ()
        return any(row[0].startswith("Lambda") and row[1].startswith("$2.49") for row in rows if len(row) > 1)

    with FakePriceApis() as fake:
        monkeypatch.setenv("FITBOT_DATABASE_URL", postgres_url)
        monkeypatch.setenv("PRICE_ENDPOINT", fake.endpoint)
        monkeypatch.setenv("LAMBDA_API_KEY", "lb")
        monkeypatch.setenv("PRICE_REFRESH_HOURS", "24")
        settings = Settings()
        workers = [await open_service(CATALOG, settings) for _ in range(2)]
        assert not live_lambda(await workers[0].answer(question, user=ALICE))  # the snapshot
        db = workers[0].store.database
        elections = [election(w.store.database, PRICE_REFRESH, retry_s=0.1) for w in workers]
        stop = asyncio.Event()

        def schedule(worker, elect):
            def apply(catalog) -> None:
                worker.answers = worker.answers.with_model(catalog)

            return schedule_prices(worker.catalog, settings, apply, stop, (worker.store.database, elect), 0.1)

        tasks = [asyncio.create_task(schedule(w, e)) for w, e in zip(workers, elections, strict=True)]

        async def both_show_live_prices() -> bool:
            replies = [await w.answer(question, user=ALICE) for w in workers]
            return all(live_lambda(r) for r in replies)

        async def holder() -> int | None:
            pid = await db.fetchval(
                "SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND granted AND objsubid = 1"
                " AND ((CAST(classid AS BIGINT) << 32) | CAST(objid AS BIGINT)) = ?",
                (lock_key(PRICE_REFRESH),),
            )
            return int(pid) if pid is not None else None

        try:
            await until(both_show_live_prices)  # one refresh, read back by both
            await asyncio.sleep(0.5)
            assert lambda_asks() == 1  # only the leader asked the price APIs, once
            pids = [e._conn.get_server_pid() if e._conn is not None else None for e in elections]  # type: ignore[attr-defined]
            leader = pids.index(await holder())
            # a day passes, and the leader's process dies (its session ends without a word)
            await PriceTables(db).mark_attempt(datetime.now(UTC) - timedelta(hours=25))
            tasks[leader].cancel()  # the process is gone: it cannot win the election back
            await asyncio.gather(tasks[leader], return_exceptions=True)
            await db.execute("SELECT pg_terminate_backend(?)", (pids[leader],))

            async def taken_over() -> bool:
                return lambda_asks() == 2

            await until(taken_over)  # the other worker was elected and ran the due refresh
            survivor = elections[1 - leader]
            assert survivor._conn is not None and await holder() == survivor._conn.get_server_pid()  # type: ignore[attr-defined]
            assert await both_show_live_prices()
        finally:
            stop.set()
            await asyncio.wait_for(asyncio.gather(*(t for t in tasks if not t.cancelled())), 10)
            for w in workers:
                await w.close()


def test_cli_refresh_with_a_shared_database_stores_the_prices_there(postgres_url, monkeypatch, capsys):
    """``fitbot catalog refresh`` on a shared deployment: the workers follow what it stored, not a local file."""
    import asyncio

    from bot.app import cli
    from catalog.prices.store import PriceTables
    from fitbot_fakes.price_apis import FakePriceApis
    from storage.userdata import UserDataStore

    async def stored(path):
        async with UserDataStore(path, url=postgres_url) as store:
            tables = PriceTables(store.database)
            return await tables.offers(), await tables.last_attempt()

    with FakePriceApis() as fake:
        monkeypatch.setenv("FITBOT_DATABASE_URL", postgres_url)
        monkeypatch.setenv("PRICE_ENDPOINT", fake.endpoint)
        monkeypatch.setenv("LAMBDA_API_KEY", "lb")
        assert cli.main(["catalog", "refresh"]) == 0
    assert "lambda         3 prices" in capsys.readouterr().out
    settings = Settings()
    offers, last = asyncio.run(stored(settings.user_db_path()))
    assert {o.provider for o, _ in offers} >= {"Lambda", "Azure"} and last is not None
    assert not settings.prices_path().exists()
    lambda_seen = {seen[:10] for o, seen in offers if o.provider == "Lambda"}
    assert lambda_seen

    assert cli.main(["catalog", "offers", "--json"]) == 0  # and the CLI reads them back from there
    shown = json.loads(capsys.readouterr().out)
    # the live rows, beside the snapshot's rows of a type the feed does not report (Lambda's reserved price)
    assert lambda_seen <= {row["seen"] for row in shown if row["provider"] == "Lambda"}
