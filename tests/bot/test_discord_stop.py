"""Discord: permissions for shared settings, and stops and REST outages that leave nobody on "thinking…".

Real discord.py against the loopback fake. ``SlowService`` holds answers until the test lets
them go, so interactions are deferred and in flight when the stop comes.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

import bot.adapters.discord.bot as discord_bot
from bot.adapters.discord.bot import build_bot, discord, run_discord
from bot.reply import Reply
from bot.service import Service, User
from catalog.store import CatalogStore
from core.models import Catalog
from fitbot_fakes import fixtures
from fitbot_fakes.discord_api import GUILD_ID, TOKEN, FakeDiscord
from fitbot_fakes.proxy import Proxy
from locales import t
from storage.userdata import UserDataStore

discord_api = fixtures.discord_api
MANAGE_GUILD = 1 << 5


class SlowService(Service):
    """Answers "/fit …" only once ``release`` is set (``fast`` questions at once)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.release = asyncio.Event()
        self.started = self.answered = 0

    async def answer(self, text: str, locale: str | None = None, user: User | None = None) -> Reply:
        if text.startswith("/fit"):
            self.started += 1
            await self.release.wait()
        reply = await super().answer(text, locale, user)
        self.answered += 1
        return reply


@pytest.fixture(scope="module")
def catalog(tmp_path_factory: pytest.TempPathFactory) -> Catalog:
    return asyncio.run(CatalogStore(tmp_path_factory.mktemp("catalog") / "catalog.sqlite").load())


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[UserDataStore]:
    async with UserDataStore(tmp_path / "user.sqlite") as opened:
        yield opened


@contextlib.asynccontextmanager
async def started(fake: FakeDiscord, service: Service, **kwargs: Any) -> AsyncIterator[tuple[Any, asyncio.Event]]:
    """``run_discord`` as ``fitbot run`` starts it, with a stop event; yields once the gateway is up."""
    stop = asyncio.Event()
    states: list[str] = []
    task = asyncio.create_task(run_discord(service, TOKEN, stop=stop, on_state=states.append, **kwargs))
    await fake.wait_gateway(2)  # IDENTIFY
    await asyncio.sleep(0.2)
    try:
        yield task, stop
    finally:
        stop.set()
        with contextlib.suppress(asyncio.CancelledError):
            await asyncio.wait_for(task, 30)


def slash_fit(fake: FakeDiscord, i: int, locale: str = "en-US") -> dict[str, Any]:
    return fake.make_slash("fit", {"model": "qwen3-8b", "gpu": "rtx-4090", "context": 4096 + i}, locale=locale)


async def test_server_settings_need_manage_server(discord_api: FakeDiscord, catalog: Catalog, store: Any) -> None:
    service = Service(catalog, store=store)
    bot = build_bot(service, guild_ready_timeout=0.05)
    task = asyncio.create_task(bot.start(TOKEN))
    try:
        await discord_api.wait_gateway(2)
        # closed before READY, discord.py's ready task would dispatch into the ended loop (a warning)
        await asyncio.wait_for(bot.wait_until_ready(), 10)
        synced = {c["name"]: c for c in discord_api.commands[None]}
        assert str(synced["settings"]["default_member_permissions"]) == str(MANAGE_GUILD)
        assert str(synced["lang"]["default_member_permissions"]) == str(MANAGE_GUILD)
        assert synced["fit"]["default_member_permissions"] is None
        # a member without Manage Server (server owners can re-enable commands for anyone): refused, in German
        member = discord_api.make_slash("settings", {"mentions": "off"}, locale="de", permissions=str(1 << 11))
        await discord_api.dispatch("INTERACTION_CREATE", member)
        call = await discord_api.wait_request("POST", f"/interactions/{member['id']}/")
        assert "Nur die Admins" in call.json["data"]["embeds"][0]["description"]
        assert await service.answers_mentions(f"dc:{GUILD_ID}")
        admin = discord_api.make_slash("settings", {"mentions": "off"}, permissions=str(MANAGE_GUILD | (1 << 11)))
        await discord_api.dispatch("INTERACTION_CREATE", admin)
        await discord_api.wait_request("POST", f"/interactions/{admin['id']}/")
        assert not await service.answers_mentions(f"dc:{GUILD_ID}")
    finally:
        await bot.close()
        with contextlib.suppress(asyncio.CancelledError):
            await asyncio.wait_for(task, 5)


async def test_sigterm_finishes_answers_in_flight_or_says_ask_again(
    discord_api: FakeDiscord, catalog: Catalog, store: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """40 deferred interactions at the stop: 0 stay on "thinking…" (all used to)."""
    monkeypatch.setattr(discord_bot, "DEFER_AFTER_S", 0.05)
    service = SlowService(catalog, store=store)
    async with started(discord_api, service, grace_s=0.5) as (task, stop):
        payloads = [slash_fit(discord_api, i, "de" if i % 2 else "en-US") for i in range(40)]
        for p in payloads:
            await discord_api.dispatch("INTERACTION_CREATE", p)
        await discord_api.wait_request("POST", "/callback", count=40, timeout=10)
        assert len(discord_api.thinking()) == 40
        stop.set()
        await asyncio.sleep(0.1)
        late = discord_api.make_slash("help", {})
        await discord_api.dispatch("INTERACTION_CREATE", late)  # arrives while stopping
        await asyncio.wait_for(task, 10)
    assert discord_api.thinking() == []
    texts = [r.json.get("content") or "" for r in discord_api.requests_to("PATCH", "/messages/@original")]
    assert len(texts) == 40
    assert sum(t("de", "discord.restarting") == x for x in texts) == 20
    assert sum(t("en", "discord.restarting") == x for x in texts) == 20
    late_reply = await discord_api.wait_request("POST", f"/interactions/{late['id']}/")
    assert late_reply.json["data"]["content"] == t("en", "discord.restarting")
    assert store.deferred.held() == []


async def test_answers_that_finish_within_the_grace_are_delivered(
    discord_api: FakeDiscord, catalog: Catalog, store: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(discord_bot, "DEFER_AFTER_S", 0.05)
    service = SlowService(catalog, store=store)
    async with started(discord_api, service, grace_s=5) as (task, stop):
        for i in range(10):
            await discord_api.dispatch("INTERACTION_CREATE", slash_fit(discord_api, i))
        await discord_api.wait_request("POST", "/callback", count=10, timeout=10)
        stop.set()
        await asyncio.sleep(0.2)
        service.release.set()  # the answers finish during the drain
        await asyncio.wait_for(task, 10)
    assert discord_api.thinking() == []
    cards = discord_api.requests_to("POST", "/webhooks/")
    assert len(cards) == 10 and all(c.json["embeds"] for c in cards)


async def test_after_a_crash_the_next_start_fixes_interactions_left_on_thinking(
    discord_api: FakeDiscord, catalog: Catalog, store: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """kill -9 runs no stop code: the deferred interactions are in the database, the next start edits them."""
    monkeypatch.setattr(discord_bot, "DEFER_AFTER_S", 0.05)
    crashed = build_bot(SlowService(catalog, store=store), guild_ready_timeout=0.05)
    task = asyncio.create_task(crashed.start(TOKEN))
    await discord_api.wait_gateway(2)
    for i in range(5):
        await discord_api.dispatch("INTERACTION_CREATE", slash_fit(discord_api, i, "de"))
    await discord_api.wait_request("POST", "/callback", count=5, timeout=10)
    await asyncio.sleep(0.1)
    await crashed.close()  # no drain, no answers: what SIGKILL leaves (the socket closed, nothing told)
    with contextlib.suppress(asyncio.CancelledError, Exception):
        await asyncio.wait_for(task, 5)
    assert len(discord_api.thinking()) == 5 and len(store.deferred.held()) == 5
    async with started(discord_api, Service(catalog, store=store)):
        async with asyncio.timeout(30):  # the start edits them (a bound for a loaded machine, not a speed check)
            while discord_api.thinking():
                await asyncio.sleep(0.05)
    assert discord_api.thinking() == []
    texts = [r.json.get("content") for r in discord_api.requests_to("PATCH", "/messages/@original")]
    assert texts == [t("de", "discord.restarting")] * 5
    assert store.deferred.held() == []


class HeldService(Service):
    """Every answer waits for ``release`` (a busy process): mentions are in flight when the stop comes."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.release = asyncio.Event()
        self.started = 0

    async def answer(self, text: str, locale: str | None = None, user: User | None = None) -> Reply:
        self.started += 1
        await self.release.wait()
        return await super().answer(text, locale, user)


async def test_mentions_in_flight_at_a_stop_are_all_answered(
    discord_api: FakeDiscord, catalog: Catalog, store: Any
) -> None:
    """@mentions used to be dropped by the stop (4 and 13 of 40 answered); slash commands drained."""
    service = HeldService(catalog, store=store)
    async with started(discord_api, service, grace_s=10) as (task, stop):
        mentions = [discord_api.make_mention(f"can I run qwen3 8b on a 4090 with {4 + i}k?") for i in range(20)]
        for m in mentions:
            await discord_api.dispatch("MESSAGE_CREATE", m)
        async with asyncio.timeout(30):  # every one read from the socket and being answered
            while service.started < len(mentions):
                await asyncio.sleep(0.02)
        stop.set()
        await asyncio.sleep(0.2)
        service.release.set()  # the answers finish during the drain
        await asyncio.wait_for(task, 20)
    replied = {
        str((r.json or {}).get("message_reference", {}).get("message_id"))
        for r in discord_api.requests_to("POST", "/messages")
        if r.status == 200
    }
    assert {m["id"] for m in mentions} <= replied


# --------------------------------------------------------------------------- REST outages


@contextlib.asynccontextmanager
async def behind_proxy(fake: FakeDiscord, monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[Proxy]:
    """discord.py's REST (and the interaction webhooks) through a proxy that can go down; the gateway direct."""
    proxy = await Proxy(fake.port).up()
    monkeypatch.setattr(discord.http.Route, "BASE", f"http://127.0.0.1:{proxy.port}/api/v10")
    try:
        yield proxy
    finally:
        await proxy.down()


async def test_follow_ups_that_fail_in_a_rest_outage_are_sent_once_it_ends(
    discord_api: FakeDiscord, catalog: Catalog, store: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """40 deferred answers sent into a REST outage (refused, reset): all 40 delivered after it (8 of 40 were)."""
    monkeypatch.setattr(discord_bot, "DEFER_AFTER_S", 0.05)
    service = SlowService(catalog, store=store)
    async with behind_proxy(discord_api, monkeypatch) as proxy, started(discord_api, service, grace_s=5):
        payloads = [slash_fit(discord_api, i) for i in range(40)]
        for p in payloads:
            await discord_api.dispatch("INTERACTION_CREATE", p)
        await discord_api.wait_request("POST", "/callback", count=40, timeout=10)
        await proxy.down()
        service.release.set()  # every answer is sent while Discord cannot be reached
        async with asyncio.timeout(30):
            while service.started < 40 or not store.deferred.open:
                await asyncio.sleep(0.05)
        await asyncio.sleep(1.0)  # the outage: the sends fail and wait
        assert len(discord_api.thinking()) == 40
        await proxy.up()
        async with asyncio.timeout(30):  # the next tries (at most 8 s apart) deliver them
            while discord_api.thinking():
                await asyncio.sleep(0.05)
    cards = discord_api.requests_to("POST", "/webhooks/")
    delivered = {r.path for r in cards if r.status == 200 and r.json["embeds"]}
    assert len(delivered) == 40  # one card per interaction (each webhook path is its token)
    assert store.deferred.held() == []


async def test_a_follow_up_given_up_stays_held_and_the_next_start_repairs_it(
    discord_api: FakeDiscord, catalog: Catalog, store: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Past the retry budget the hold stays in the journal (it was released in ``finally``), for the next start."""
    monkeypatch.setattr(discord_bot, "DEFER_AFTER_S", 0.05)
    monkeypatch.setattr(discord_bot, "FOLLOWUP_BUDGET_S", 0.3)
    service = SlowService(catalog, store=store)
    async with behind_proxy(discord_api, monkeypatch) as proxy:
        async with started(discord_api, service, grace_s=0.5):
            for i in range(5):
                await discord_api.dispatch("INTERACTION_CREATE", slash_fit(discord_api, i, "de"))
            await discord_api.wait_request("POST", "/callback", count=5, timeout=10)
            await proxy.down()
            service.release.set()
            async with asyncio.timeout(30):
                while service.started < 5 or service.answered < 5:
                    await asyncio.sleep(0.05)
            await asyncio.sleep(0.6)  # past the budget: given up
            assert len(store.deferred.held()) == 5
        await proxy.up()
        async with started(discord_api, Service(catalog, store=store)):
            async with asyncio.timeout(30):
                while discord_api.thinking():
                    await asyncio.sleep(0.05)
    texts = [r.json.get("content") for r in discord_api.requests_to("PATCH", "/messages/@original") if r.status == 200]
    assert texts == [t("de", "discord.restarting")] * 5
    assert store.deferred.held() == []
