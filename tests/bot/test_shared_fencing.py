"""Fenced work on a real PostgreSQL: a paused worker does not answer again what another took over, a
refused done mark is written once the database is back, and a stopping worker claims nothing.

Real python-telegram-bot against the loopback fake Bot API, the production ``SharedConsumer`` and
``FencedRequest``. The pause of a worker (SIGSTOP, a long GC) is emulated by holding its lease
checks and renewals; bench/queue_faults.py does the same with real SIGSTOPs of real processes.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections import Counter
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from bot.adapters.telegram.bot import build_application
from bot.adapters.telegram.fence import FencedRequest
from bot.adapters.telegram.shared import SharedConsumer, item_of
from bot.adapters.telegram.transport import AiohttpRequest
from bot.service import Service
from catalog.store import CatalogStore
from core.models import Catalog
from fitbot_fakes import fixtures
from fitbot_fakes.postgres import free_port
from fitbot_fakes.proxy import Proxy
from fitbot_fakes.telegram_api import FakeTelegramAPI
from storage.queue import Lease, SharedInbox
from storage.userdata import UserDataStore

telegram_api = fixtures.telegram_api
TOKEN = "123456:TEST-token"


@pytest.fixture(scope="module")
def catalog(tmp_path_factory: pytest.TempPathFactory) -> Catalog:
    return asyncio.run(CatalogStore(tmp_path_factory.mktemp("catalog") / "c.sqlite").load())


class PausedInbox(SharedInbox):
    """A worker frozen, once it claimed, before its next claim or renewal until ``resume`` is set
    (SIGSTOP, a long GC); ``PausedRequest`` freezes its sends just before their fence."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self.resume = asyncio.Event()
        self.claimed = False

    async def claim(self, limit: int):  # type: ignore[no-untyped-def]
        if self.claimed:
            await self.resume.wait()
        batch = await super().claim(limit)
        self.claimed = self.claimed or bool(batch)
        return batch

    async def renew(self, leases: list[Lease]) -> set[int]:  # type: ignore[override]
        await self.resume.wait()
        return await super().renew(leases)


class PausedRequest(FencedRequest):
    def __init__(self, resume: asyncio.Event) -> None:
        super().__init__(AiohttpRequest())
        self.resume = resume

    async def do_request(self, url, method, *args, **kwargs):  # type: ignore[no-untyped-def]
        if "/getMe" not in url:
            await self.resume.wait()
        return await super().do_request(url, method, *args, **kwargs)


class CutAtDone(SharedInbox):
    """The database goes away in the instant between a sent answer and its done mark (a restart under load)."""

    def __init__(self, proxy: Proxy, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self.proxy, self.cut = proxy, False

    async def done(self, update_ids, failed=None):  # type: ignore[no-untyped-def]
        if not self.cut:
            self.cut = True
            await self.proxy.down()
        return await super().done(update_ids, failed)


@contextlib.asynccontextmanager
async def consumer(
    catalog: Catalog,
    tmp: Path,
    url: str,
    api: FakeTelegramAPI,
    make_inbox,  # type: ignore[no-untyped-def]
    stop: asyncio.Event | None = None,
    request: FencedRequest | None = None,
) -> AsyncIterator[SharedConsumer]:
    """The production consumer of one worker (its own pool, as a process has), answering from the inbox."""
    store = await UserDataStore(tmp / "user.sqlite", url=url).open()
    service = Service(catalog, store=store)
    request = request or FencedRequest(AiohttpRequest())
    app = build_application(service, TOKEN, base_url=api.base_url, charts=False, webhook=True, request=request)
    inbox = make_inbox(store.database)
    worker = SharedConsumer(app, inbox, grace_s=2.0)
    app.bot_data["poller"] = worker
    await app.initialize()
    try:
        async with app:
            await app.start()
            await worker.start(stop)
            try:
                yield worker
            finally:
                await worker.stop()
                await app.stop()
    finally:
        await service.close()


def questions(api: FakeTelegramAPI, count: int, first_chat: int) -> list[tuple[int, str, str]]:
    """``count`` questions from as many private chats, known to the fake API (so replies may quote them)."""
    items = []
    for i in range(count):
        update = api.push_update(api.make_message("/fit qwen3 8b 4090", chat_id=first_chat + i))
        api.updates.remove(update)  # nobody polls here: the inbox is filled directly, as the poller would
        update_id, key, _ = item_of(_parsed(update))
        items.append((update_id, key, json.dumps(update)))
    return items


def _parsed(update: dict):  # type: ignore[no-untyped-def]
    from telegram import Update

    return Update.de_json(update, None)


def sends(api: FakeTelegramAPI) -> Counter[int]:
    return Counter(e.params["chat_id"] for e in api.exchanges if e.method == "sendMessage" and e.status == 200)


async def until(condition, timeout: float = 60) -> None:  # type: ignore[no-untyped-def]
    """Wait until ``condition()`` (a bool, or an awaitable of one) holds."""
    async with asyncio.timeout(timeout):
        while True:
            value = condition()
            if await value if asyncio.iscoroutine(value) else value:
                return
            await asyncio.sleep(0.05)


async def all_closed(url: str, tmp: Path) -> bool:
    async with UserDataStore(tmp / "probe.sqlite", url=url) as probe:
        return (await SharedInbox(probe.database, "probe").depth()).open == 0


async def test_a_worker_paused_past_its_lease_does_not_answer_what_another_took_over(
    telegram_api: FakeTelegramAPI, catalog: Catalog, tmp_path: Path, postgres_url: str
) -> None:
    paused: list[PausedInbox] = []
    resume = asyncio.Event()

    def frozen(db):  # type: ignore[no-untyped-def]
        paused.append(PausedInbox(db, "paused-worker", lease_s=0.6))
        paused[0].resume = resume
        return paused[0]

    async with consumer(
        catalog, tmp_path / "a", postgres_url, telegram_api, frozen, request=PausedRequest(resume)
    ) as a:
        await paused[0].add(questions(telegram_api, 4, first_chat=1000))
        await until(lambda: len(a.in_flight) == 4)  # all four answered up to their send, then frozen
        await asyncio.sleep(0.8)  # past the lease
        async with consumer(catalog, tmp_path / "b", postgres_url, telegram_api, lambda db: SharedInbox(db, "b")):
            await until(lambda: sum(sends(telegram_api).values()) == 4)  # the other worker took over
            resume.set()  # the paused one wakes up and goes on with its sends: the fence says no
            await until(lambda: a.dropped == 4)
            await until(lambda: not a.in_flight)
            await until(lambda: all_closed(postgres_url, tmp_path))
    assert sends(telegram_api) == Counter({1000 + i: 1 for i in range(4)})  # each once: nothing re-answered


async def test_a_refused_done_mark_is_kept_and_written_when_the_database_is_back(
    telegram_api: FakeTelegramAPI, catalog: Catalog, tmp_path: Path, postgres_url: str
) -> None:
    server = int(postgres_url.rsplit(":", 1)[1].split("/", 1)[0])
    proxy = Proxy(server)
    proxy.port = free_port()
    await proxy.up()
    through_proxy = postgres_url.replace(f":{server}/", f":{proxy.port}/")
    cut: list[CutAtDone] = []

    def cutting(db):  # type: ignore[no-untyped-def]
        cut.append(CutAtDone(proxy, db, "restarting-db-worker", lease_s=3.0))
        return cut[0]

    try:
        async with (
            consumer(catalog, tmp_path / "a", through_proxy, telegram_api, cutting) as a,
            consumer(catalog, tmp_path / "b", postgres_url, telegram_api, lambda db: SharedInbox(db, "b")),
        ):
            async with UserDataStore(tmp_path / "p.sqlite", url=postgres_url) as probe:
                await SharedInbox(probe.database, "probe").add(questions(telegram_api, 1, first_chat=2000))
            await until(lambda: bool(a.unmarked))  # sent, then the mark was refused: kept
            await asyncio.sleep(1.0)  # the database is away for a second
            await proxy.up()
            await until(lambda: all_closed(postgres_url, tmp_path))
            assert not a.unmarked
            await asyncio.sleep(3.5)  # past the lease: had the mark been dropped, it would be answered again
        assert sends(telegram_api) == Counter({2000: 1})
    finally:
        await proxy.down()


async def test_a_stopping_worker_claims_nothing_new(
    telegram_api: FakeTelegramAPI, catalog: Catalog, tmp_path: Path, postgres_url: str
) -> None:
    stop = asyncio.Event()
    inboxes: list[SharedInbox] = []

    def named(db):  # type: ignore[no-untyped-def]
        inboxes.append(SharedInbox(db, "stopping-worker"))
        return inboxes[0]

    async with consumer(catalog, tmp_path / "a", postgres_url, telegram_api, named, stop=stop) as a:
        await inboxes[0].add(questions(telegram_api, 1, first_chat=3000))
        await until(lambda: a.answered == 1)  # claiming while running
        stop.set()  # SIGTERM: the consumer's own stop() comes only after the ingest has ended
        await inboxes[0].add(questions(telegram_api, 3, first_chat=3100))
        await asyncio.sleep(1.5)  # three claim rounds and more
        claimed = await inboxes[0].db.fetchval("SELECT COUNT(*) FROM tg_inbox WHERE claims > 0 AND done_at IS NULL")
        assert claimed == 0
    assert sends(telegram_api) == Counter({3000: 1})


async def test_an_update_whose_answer_began_under_an_earlier_claim_is_closed_not_answered_again(
    telegram_api: FakeTelegramAPI, catalog: Catalog, tmp_path: Path, postgres_url: str
) -> None:
    """Its first message went out before the sender stalled (or the clock jumped): the sender finishes the card."""
    async with UserDataStore(tmp_path / "p.sqlite", url=postgres_url) as probe:
        stalled = SharedInbox(probe.database, "stalled-sender", lease_s=-1.0)  # its lease is over at once
        await stalled.add(questions(telegram_api, 1, first_chat=4000) + questions(telegram_api, 1, first_chat=4100))
        begun, untouched = await stalled.claim(10)
        await stalled.began((begun.update_id, begun.fence))
        async with consumer(catalog, tmp_path / "b", postgres_url, telegram_api, lambda db: SharedInbox(db, "b")):
            await until(lambda: all_closed(postgres_url, tmp_path))
        assert await probe.database.fetchval("SELECT claims FROM tg_inbox WHERE update_id = ?", (begun.update_id,)) == 2
    assert sends(telegram_api) == Counter({4100: 1})  # the other one is answered; the begun one only closed


class SlowYes(SharedInbox):
    async def hold(self, lease: Lease) -> bool:
        held = await super().hold(lease)
        await asyncio.sleep(0.3)  # the answer arrives late: paused after the database said it
        return held


async def test_a_yes_from_the_fence_that_arrived_late_is_not_trusted(tmp_path: Path, postgres_url: str) -> None:
    async with UserDataStore(tmp_path / "p.sqlite", url=postgres_url) as store:
        for inbox, trusted in (
            (SharedInbox(store.database, "w", lease_s=0.6), True),
            (SlowYes(store.database, "w", lease_s=0.6), False),
        ):
            await inbox.add([(1, "u", "{}")])
            (claimed,) = await inbox.claim(1)
            worker = SharedConsumer(None, inbox)  # type: ignore[arg-type]
            worker.held[1] = claimed.fence
            assert await worker._hold((1, claimed.fence)) is trusted
            await inbox.release([(1, claimed.fence)])
