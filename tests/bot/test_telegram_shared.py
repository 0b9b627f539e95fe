"""Telegram through the shared inbox on a real PostgreSQL: two workers, one poller, webhooks.

Real python-telegram-bot against the loopback fake Bot API; each "worker" is a service with its
own database pool, as a process would have (the SIGKILL rounds are bench/scale.py's).
"""

from __future__ import annotations

import asyncio
from collections import Counter
from pathlib import Path

import aiohttp
import pytest

from bot.adapters.telegram import flood as telegram_flood
from bot.adapters.telegram.shared import run_shared_telegram
from bot.app.jobs import TELEGRAM_POLL
from bot.service import Service
from catalog.store import CatalogStore
from core.models import Catalog
from fitbot_fakes import fixtures
from fitbot_fakes.postgres import free_port
from fitbot_fakes.telegram_api import FakeTelegramAPI
from storage.leader import leader_of
from storage.queue import SharedInbox
from storage.userdata import UserDataStore

telegram_api = fixtures.telegram_api
TOKEN = "123456:TEST-token"


@pytest.fixture(scope="module")
def catalog(tmp_path_factory: pytest.TempPathFactory) -> Catalog:
    return asyncio.run(CatalogStore(tmp_path_factory.mktemp("catalog") / "c.sqlite").load())


def answered(api: FakeTelegramAPI) -> int:
    return sum(
        1 for e in api.exchanges if e.method == "sendMessage" and e.status == 200 and e.response["chat"]["id"] >= 1000
    )


async def wait_answered(api: FakeTelegramAPI, count: int, timeout: float = 30) -> None:
    async with asyncio.timeout(timeout):
        while answered(api) < count:
            await asyncio.sleep(0.05)


class Worker:
    def __init__(self, catalog: Catalog, tmp: Path, url: str, **options: object) -> None:
        self.catalog, self.tmp, self.url, self.options = catalog, tmp, url, options
        self.stop = asyncio.Event()

    async def __aenter__(self) -> Worker:
        self.store = await UserDataStore(self.tmp / "user.sqlite", url=self.url).open()
        self.service = Service(self.catalog, store=self.store)
        self.task = asyncio.create_task(
            run_shared_telegram(
                self.service, token=TOKEN, charts=False, stop=self.stop, grace_s=2.0, poll_timeout=1, **self.options
            )  # type: ignore[arg-type]
        )
        return self

    async def __aexit__(self, *exc: object) -> None:
        self.stop.set()
        await asyncio.wait_for(self.task, 15)
        await self.service.close()


async def test_two_workers_answer_every_update_once_and_the_poller_fails_over(
    telegram_api: FakeTelegramAPI, catalog: Catalog, tmp_path: Path, postgres_url: str
) -> None:
    base = {"base_url": telegram_api.base_url}
    async with (
        Worker(catalog, tmp_path / "a", postgres_url, **base) as a,
        Worker(catalog, tmp_path / "b", postgres_url, **base) as b,
    ):
        for i in range(40):
            telegram_api.push_update(
                telegram_api.make_message(f"/fit qwen3 8b 4090 ctx {4096 + 512 * (i // 8)}", chat_id=1000 + i % 8)
            )
        await wait_answered(telegram_api, 40)
        leader = await leader_of(a.store.database, TELEGRAM_POLL)
        assert leader is not None and leader.startswith("fitbot@")
        # the leader stops (a rolling restart): the other worker polls from where it left off
        a.stop.set()
        await asyncio.wait_for(a.task, 15)
        for i in range(10):
            telegram_api.push_update(telegram_api.make_message("/fit qwen3 8b 3090", chat_id=2000 + i))
        await wait_answered(telegram_api, 50)
        probe = SharedInbox(b.store.database, "probe")
        async with asyncio.timeout(15):  # an answer is sent before its done mark is written
            while (await probe.depth()).open:
                await asyncio.sleep(0.05)
    per_update = Counter(
        e.params["chat_id"] for e in telegram_api.exchanges if e.method == "sendMessage" and e.status == 200
    )
    assert sum(per_update.values()) == 50  # each update answered once: none lost, none twice


async def test_webhook_workers_check_the_secret_and_store_before_the_200(
    telegram_api: FakeTelegramAPI, catalog: Catalog, tmp_path: Path, postgres_url: str
) -> None:
    port = free_port()
    url = f"http://127.0.0.1:{port}/tg"  # the reverse proxy forwards https://bot.example.org/tg here
    public = "https://bot.example.org/tg"
    options = {"base_url": telegram_api.base_url, "webhook_url": public, "webhook_secret": "s3cret", "port": port}
    async with Worker(catalog, tmp_path / "w", postgres_url, **options) as worker:
        await telegram_api.wait_call("setWebhook", timeout=10)
        update = telegram_api.make_message("/fit qwen3 8b 4090", chat_id=1500)
        update["update_id"] = 77
        async with aiohttp.ClientSession() as http:
            for _ in range(50):
                try:
                    async with http.post(url, json=update, headers={"X-Telegram-Bot-Api-Secret-Token": "nope"}) as r:
                        assert r.status == 403
                    break
                except aiohttp.ClientConnectionError:
                    await asyncio.sleep(0.1)
            assert await SharedInbox(worker.store.database, "probe").last_update_id() is None
            async with http.post(url, json=update, headers={"X-Telegram-Bot-Api-Secret-Token": "s3cret"}) as r:
                assert r.status == 200
            assert await SharedInbox(worker.store.database, "probe").last_update_id() == 77  # stored by the 200
            async with http.post(url, json=update, headers={"X-Telegram-Bot-Api-Secret-Token": "s3cret"}) as r:
                assert r.status == 200  # Telegram's re-delivery: stored once, answered once
        await wait_answered(telegram_api, 1)
        await asyncio.sleep(0.5)
        assert answered(telegram_api) == 1


async def test_a_flood_window_longer_than_a_send_may_wait_is_given_back_until_it_is_over(
    telegram_api: FakeTelegramAPI, catalog: Catalog, tmp_path: Path, postgres_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The worker gives the update back for the chat's whole ``retry_after``: claimed once more, after the
    window, and answered once (given back for the usual 8 s, each try inside the window cost a claim,
    and five claims set an update aside)."""
    monkeypatch.setattr(telegram_flood, "MAX_WAIT_S", 1.0)
    telegram_api.flood_control(1500, 10.0)
    async with Worker(catalog, tmp_path / "a", postgres_url, base_url=telegram_api.base_url) as a:
        telegram_api.push_update(telegram_api.make_message("/fit qwen3 8b 4090", chat_id=1500))
        await wait_answered(telegram_api, 1, timeout=40)
        assert not telegram_api.under_flood_control(1500)
        claims = await a.store.database.fetchval("SELECT claims FROM tg_inbox")
    assert claims == 2
    assert answered(telegram_api) == 1
