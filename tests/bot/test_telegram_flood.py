"""One chat under Telegram flood control holds up that chat only (issue 40 item 3).

The production build (``build_application`` with Telegram's pacing on, the durable inbox of
``open_service``) against the fake Bot API, which answers every call naming the group 429 with the
seconds left as ``retry_after`` for ``FLOOD_S``. Before, a 429 the transport gave up on reached PTB's
``AIORateLimiter``, which paused every chat for its ``retry_after``: private users waited ~35 s
behind one group (``retry_after=40``). The checks are by order and count: every private chat is
answered while the group's window is still open, the group's answers come after it, each once, each
card's messages in order, and only sends already on their way when the 429 came were refused.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest
from telegram import Update
from telegram.error import NetworkError, RetryAfter

from bench.burst_plan import Ask, Tally, expectations, make_plan, verify
from bot.adapters.telegram.bot import build_application, serve
from bot.adapters.telegram.flood import ChatFloodLimiter
from bot.adapters.telegram.parts import TelegramApp
from bot.adapters.telegram.poller import PER_CHAT
from bot.adapters.telegram.queue import FairQueue, Retries
from bot.app.run import open_service
from bot.app.settings import Settings
from bot.service import Service
from catalog.store import CatalogStore
from core.models import Catalog
from fitbot_fakes import fixtures
from fitbot_fakes.telegram_api import FakeTelegramAPI

telegram_api = fixtures.telegram_api

TOKEN = "123456:FLOOD-token"
GROUP = -100_777
FLOOD_S = 4.0  # the group's window; the private chats are answered well within it
GROUP_ASKS = [Ask(GROUP, text, "en") for text in ("/fit qwen3 8b 4090", "/gpus qwen3 32b", "/quant qwen3 32b 4090")]


@pytest.fixture(scope="module")
def catalog(tmp_path_factory: pytest.TempPathFactory) -> Catalog:
    return asyncio.run(CatalogStore(tmp_path_factory.mktemp("catalog") / "c.sqlite").load())


@pytest.fixture
async def service(catalog: Catalog, tmp_path: Path) -> AsyncIterator[Service]:
    opened = await open_service(catalog, Settings(_env_file=None, fitbot_data_dir=tmp_path))
    yield opened
    await opened.close()


@contextlib.asynccontextmanager
async def running(api: FakeTelegramAPI, service: Service) -> AsyncIterator[TelegramApp]:
    """The production build, Telegram's pacing on (30 messages a second, 20 a minute per group)."""
    app = build_application(service, TOKEN, base_url=api.base_url, base_file_url=api.base_file_url, charts=False)
    async with serve(app, poll_timeout=1):
        await api.wait_call("setMyCommands", count=2)
        yield app


def ask(api: FakeTelegramAPI, asks: list[Ask]) -> None:
    """Each question from its own user; a negative chat is the group."""
    for i, one in enumerate(asks):
        kind, user = ("supergroup", 70_000 + i) if one.chat < 0 else ("private", one.chat)
        api.push_update(api.make_message(one.text, one.chat, kind, user, one.lang))


async def until(tally: Tally, done: Callable[[], bool], timeout: float) -> None:
    async with asyncio.timeout(timeout):
        while True:
            tally.update()
            if done():
                return
            await asyncio.sleep(0.02)


async def flood_then_check(api: FakeTelegramAPI, catalog: Catalog) -> Tally:
    """Puts the group under flood control, asks, and checks the private chats and the group's answers."""
    private = make_plan(12, 1, seed=5, first_chat=4_000_000)
    expected = await expectations(catalog, GROUP_ASKS + private)
    tally = Tally(api, pos=len(api.exchanges))
    api.flood_control(GROUP, FLOOD_S)
    ask(api, GROUP_ASKS)
    # The private questions come once the group's first send was refused, when nothing else is on its
    # way: a send that ends re-opens the library's pause, so questions asked beside it did not show it.
    await until(tally, lambda: any(chat == GROUP for _, chat, _ in tally.failed), 10)
    ask(api, private)
    await until(tally, lambda: {a.chat for a in private} <= set(tally.sent), 30)
    assert api.under_flood_control(GROUP), "a private chat waited for the group's flood control"
    assert GROUP not in tally.sent
    owed = sum(len(expected[(a.text, a.lang)]) for a in GROUP_ASKS)
    await until(tally, lambda: len(tally.sent.get(GROUP, [])) >= owed, FLOOD_S + 30)
    await asyncio.sleep(0.5)  # a late duplicate would arrive now
    tally.update()
    verdict = verify(GROUP_ASKS + private, expected, tally)
    assert (verdict.answered, verdict.missing, verdict.duplicates, verdict.incomplete) == (15, 0, 0, 0)
    assert verdict.apologies == 0, verdict.problems
    got = [s.text for s in tally.sent[GROUP]]
    for one in GROUP_ASKS:  # each card's messages in the order the card has them
        parts = expected[(one.text, one.lang)]
        assert [text for text in got if text in parts] == parts
    return tally


async def test_a_group_under_flood_control_holds_up_its_own_answers_only(
    telegram_api: FakeTelegramAPI, service: Service, catalog: Catalog
) -> None:
    async with running(telegram_api, service):
        tally = await flood_then_check(telegram_api, catalog)
    refused = [f for f in tally.failed if f[1] == GROUP]
    assert all(status == 429 for status, _, _ in refused)
    # only the sends already on their way when the first 429 came (one per worker the group may hold)
    # were refused; the rest waited at the group's gate instead of asking again inside its window
    assert 1 <= len(refused) <= PER_CHAT
    assert not [f for f in tally.failed if f[1] != GROUP]


async def test_flood_control_longer_than_a_send_may_wait_is_answered_after_it_and_holds_up_nobody(
    telegram_api: FakeTelegramAPI, service: Service, catalog: Catalog
) -> None:
    """A window longer than a send may wait at the gate: the group's updates are answered again after it
    (the poller's retries), never through the library's pause of every chat."""
    async with running(telegram_api, service) as app:
        limiter = app.bot.rate_limiter
        assert isinstance(limiter, ChatFloodLimiter)
        limiter.max_wait_s = 1.0
        await flood_then_check(telegram_api, catalog)


async def test_waiting_out_flood_control_spends_none_of_the_send_budget(monkeypatch: pytest.MonkeyPatch) -> None:
    """An update handed on for a long window is answered after it; the budget is for network failures."""
    monkeypatch.setenv("PTB_TIMEDELTA", "1")
    retries = Retries(FairQueue(), budget_s=1.0, backoff_s=(2.0,))
    try:
        assert not retries.later(Update(1), NetworkError("reset"))  # 2 s of back-off: past the budget
        assert retries.later(Update(2), RetryAfter(300))  # five minutes of flood control: not
        assert retries.later(Update(2), RetryAfter(300))  # nor a window renewed
    finally:
        retries.cancel()


async def test_a_429_naming_no_chat_is_waited_out_as_before(telegram_api: FakeTelegramAPI, service: Service) -> None:
    """``answerCallbackQuery`` names no chat: the transport waits its retry_after and sends it again."""
    async with running(telegram_api, service):
        card = telegram_api.add_bot_message(777, "an old card")
        telegram_api.fail_next("answerCallbackQuery", status=429, retry_after=1)
        telegram_api.push_update(telegram_api.make_callback("q:/help", card["message_id"]))
        await telegram_api.wait_call("editMessageText", timeout=10)
    answers = [e for e in telegram_api.exchanges if e.method == "answerCallbackQuery"]
    assert [e.status for e in answers] == [429, 200]
