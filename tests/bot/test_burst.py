"""Load and fault tests, end to end: bursts through the real python-telegram-bot ``Application``.

Each test runs the production ``build_application`` against the fake Bot API with a real ``Service``
(``open_service`` with the default ``Settings`` rate limits, a temporary user database) and checks,
per chat, that every question got exactly one response: its card (a card of two or three messages
counted once), a slow-down card, or an apology; nothing lost, nothing duplicated after a grace
period. The accounting (``verify``) and the question mix come from bench/burst.py, whose 5,000-question
run prints figures; these are CI-sized.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import sqlite3
from collections import Counter
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from telegram.ext import Application

from bench.burst_plan import (
    Ask,
    Tally,
    card_texts,
    expectations,
    interleave,
    make_plan,
    wait_for_responses,
)
from bot.adapters.telegram.bot import build_application, serve
from bot.app.run import open_service
from bot.app.settings import Settings
from bot.cards import notices as cards
from bot.service import Service
from bot.users.limits import Limits
from catalog.store import CatalogStore
from core.models import Catalog
from fitbot_fakes import fixtures
from fitbot_fakes.telegram_api import FakeTelegramAPI
from locales import t
from storage.userdata import UserDataStore

telegram_api = fixtures.telegram_api

TOKEN = "123456:BURST-token"
FIRST = 3_000_000


@pytest.fixture(scope="module")
def catalog(tmp_path_factory: pytest.TempPathFactory) -> Catalog:
    return asyncio.run(CatalogStore(tmp_path_factory.mktemp("catalog") / "c.sqlite").load())


def settings(tmp_path: Path) -> Settings:
    return Settings(_env_file=None, fitbot_data_dir=tmp_path)


@pytest.fixture
async def service(catalog: Catalog, tmp_path: Path) -> AsyncIterator[Service]:
    """The production service: default rate limits (20 a minute per user), user data in tmp_path."""
    opened = await open_service(catalog, settings(tmp_path))
    yield opened
    await opened.close()


@contextlib.asynccontextmanager
async def running(api: FakeTelegramAPI, service: Service, **kwargs: Any) -> AsyncIterator[Application]:
    kwargs.setdefault("rate_limiter", False)  # no 30/s pacing; the limiter's retries and flood control stay
    app = build_application(
        service, TOKEN, base_url=api.base_url, base_file_url=api.base_file_url, charts=False, **kwargs
    )
    async with serve(app, poll_timeout=1):
        await api.wait_call("setMyCommands", count=2)
        yield app


def with_long_cards(asks: list[Ask]) -> list[Ask]:
    """The plan with a few two- and three-message cards (full /gpus lists) in place of other questions."""
    long = ("/gpus qwen3 32b more", "/gpus llama 3.3 70b more", "/gpus gpt-oss-20b more", "/gpus qwen3 8b more")
    return [
        Ask(a.chat, long[i // 10], a.lang) if i % 10 == 0 and i // 10 < len(long) else a for i, a in enumerate(asks)
    ]


def push(api: FakeTelegramAPI, asks: list[Ask]) -> None:
    for ask in asks:
        api.push_update(api.make_message(ask.text, chat_id=ask.chat, language_code=ask.lang))


async def burst(
    api: FakeTelegramAPI,
    catalog: Catalog,
    asks: list[Ask],
    *,
    timeout: float = 20,
    grace: float = 0.3,
    limit: int | None = None,
):
    """Pushes ``asks`` at once and waits for a response to each; returns the verdict and the tally.

    With ``limit``, a chat over it is owed ``limit`` answers and one slow-down card, no more.
    """
    expected = await expectations(catalog, asks)
    tally = Tally(api, pos=len(api.exchanges))
    push(api, asks)
    verdict, _ = await wait_for_responses(tally, asks, expected, timeout, grace, limit=limit)
    return verdict, tally


def no_refusals(api: FakeTelegramAPI) -> None:
    """Telegram would have accepted every call the bot made (the fake answers 400 where it would not)."""
    assert not [(e.method, e.response) for e in api.exchanges if e.status == 400]


def failed_updates(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [
        r.getMessage() for r in caplog.records if r.name == "bot.adapters.telegram.bot" and "failed" in r.getMessage()
    ]


# --------------------------------------------------------------------------- (a) a clean burst


async def test_600_questions_from_60_users_are_each_answered_exactly_once(
    telegram_api: FakeTelegramAPI, service: Service, catalog: Catalog, caplog: pytest.LogCaptureFixture
) -> None:
    asks = with_long_cards(make_plan(60, 10, seed=1, first_chat=FIRST))
    async with running(telegram_api, service):
        verdict, tally = await burst(telegram_api, catalog, asks)
    assert verdict.problems == []
    assert (verdict.answered, verdict.missing, verdict.duplicates, verdict.incomplete) == (600, 0, 0, 0)
    assert verdict.slow_downs == verdict.apologies == 0
    assert tally.count() > 600  # some cards are two or three messages, and all of their parts came
    no_refusals(telegram_api)
    assert failed_updates(caplog) == []


# --------------------------------------------------------------------------- (b) 429s and 500s mid-burst


async def inject(api: FakeTelegramAPI, tally: Tally, plan: list[tuple[int, int, int]]) -> None:
    """After ``at`` accepted sends, the next ``times`` sendMessage calls fail with ``status``."""
    for at, status, times in plan:
        while tally.count() < at:
            await asyncio.sleep(0.005)
            tally.update()
        api.fail_next("sendMessage", status=status, retry_after=1, times=times)


async def test_429s_and_500s_mid_burst_are_retried_and_nothing_is_duplicated(
    telegram_api: FakeTelegramAPI,
    service: Service,
    catalog: Catalog,
    caplog: pytest.LogCaptureFixture,
) -> None:
    asks = with_long_cards(make_plan(60, 10, seed=2, first_chat=FIRST))
    expected = await expectations(catalog, asks)
    # One 500 at a time, so the apology that follows cannot meet the next 500 (it would be lost too,
    # see the report); the long cards are among the first 40 questions, so no 500 cuts one short.
    plan = [(100, 429, 3), (250, 500, 1), (330, 429, 3), (420, 500, 1), (500, 429, 2)]
    async with running(telegram_api, service):
        since = len(telegram_api.exchanges)
        tally = Tally(telegram_api, pos=since)
        injector = asyncio.create_task(inject(telegram_api, tally, plan))
        push(telegram_api, asks)
        verdict, _ = await wait_for_responses(tally, asks, expected, 20, 0.5)
        assert injector.done()
        await injector
    sends = [e for e in telegram_api.exchanges[since:] if e.method == "sendMessage"]
    assert Counter(e.status for e in sends if e.status != 200) == {429: 8, 500: 2}
    for i, refused in enumerate(sends):  # every 429 was waited out and the same message sent again
        if refused.status == 429:
            again = [e for e in sends[i + 1 :] if e.params == refused.params]
            assert again, refused.params
    # A 500 means Telegram did not take the message: the adapter sends it again (0.5 s, 1 s later),
    # so every question still gets its own answer, once.
    for i, refused in enumerate(sends):
        if refused.status == 500:
            assert [e for e in sends[i + 1 :] if e.params == refused.params and e.status == 200], refused.params
    assert failed_updates(caplog) == [] and verdict.apologies == 0
    assert verdict.missing == verdict.duplicates == verdict.incomplete == 0, verdict.problems
    assert verdict.answered == 600
    no_refusals(telegram_api)


async def test_a_500_on_send_is_retried_and_the_answer_still_arrives(
    telegram_api: FakeTelegramAPI,
    service: Service,
    catalog: Catalog,
) -> None:
    asks = make_plan(5, 2, seed=3, first_chat=FIRST)
    async with running(telegram_api, service):
        telegram_api.fail_next("sendMessage", status=500, times=1)
        verdict, _ = await burst(telegram_api, catalog, asks, timeout=10)
    assert verdict.answered == 10 and verdict.apologies == 0


# --------------------------------------------------------------------------- (c) one user floods


async def test_one_user_flooding_gets_slow_downs_while_everyone_else_is_served(
    telegram_api: FakeTelegramAPI,
    service: Service,
    catalog: Catalog,
    caplog: pytest.LogCaptureFixture,
) -> None:
    flooder = FIRST - 1
    others = make_plan(20, 5, seed=4, first_chat=FIRST)
    flood = [Ask(flooder, a.text, a.lang) for a in make_plan(1, 200, seed=5, first_chat=flooder)]
    limit = Settings(_env_file=None).rate_user_per_minute
    async with running(telegram_api, service):
        verdict, _ = await burst(telegram_api, catalog, interleave(others, flood), limit=limit)
        mine = verdict.responses(flooder)
        # one slow-down card for the window, not 180: refused messages must not crowd out others' answers
        assert (mine["answers"], mine["slow_downs"], mine["apologies"]) == (limit, 1, 0)
        assert verdict.silenced == 200 - limit - 1
        for chat in {a.chat for a in others}:
            assert verdict.responses(chat) == {"answers": 5, "slow_downs": 0, "apologies": 0}
        assert verdict.missing == verdict.duplicates == verdict.incomplete == 0, verdict.problems

        after = [Ask(FIRST + 100, "/fit qwen3 8b 4090", "en"), Ask(flooder, "/fit qwen3 8b 4090", "en")]
        verdict, _ = await burst(telegram_api, catalog, after, timeout=2, limit=limit)
        assert verdict.responses(FIRST + 100)["answers"] == 1  # alive and answering
        assert verdict.responses(flooder)["slow_downs"] == 0  # still within its minute: told once already
    no_refusals(telegram_api)
    assert failed_updates(caplog) == []


# --------------------------------------------------------------------------- (d) the hub is down


def dead_endpoint() -> str:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}"


async def test_hub_down_gives_a_clear_answer_and_catalog_questions_flow(
    telegram_api: FakeTelegramAPI,
    catalog: Catalog,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    import huggingface_hub.constants

    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", False)
    hub_settings = settings(tmp_path).model_copy(update={"hf_endpoint": dead_endpoint(), "hf_hub_offline": False})
    service = await open_service(catalog, hub_settings)
    repos = [f"someorg/somemodel-{i % 4}" for i in range(12)]
    hub_asks = [
        Ask(FIRST + i, f"/fit {repo} 4090", "en") if i % 2 else Ask(FIRST + i, f"passt {repo} auf eine 4090?", "de")
        for i, repo in enumerate(repos)
    ]
    catalog_asks = make_plan(30, 4, seed=6, first_chat=FIRST + 100)
    asks = interleave(catalog_asks, hub_asks)
    async with running(telegram_api, service):
        expected = await expectations(catalog, catalog_asks)
        for ask in hub_asks:  # what a dead hub must produce, in the asker's language
            expected[(ask.text, ask.lang)] = unreachable(ask.lang, ask.text.split()[1])
        tally = Tally(telegram_api, pos=len(telegram_api.exchanges))
        push(telegram_api, asks)
        verdict, _ = await wait_for_responses(tally, asks, expected, 20, 0.3)
    assert verdict.missing == verdict.duplicates == verdict.incomplete == 0, verdict.problems
    assert verdict.answered == len(asks) and verdict.apologies == 0
    for ask in hub_asks:
        (text,) = [s.text for s in tally.sent[ask.chat]]
        assert t(ask.lang, "hub.unreachable", repo=ask.text.split()[1]) in text
    no_refusals(telegram_api)
    assert failed_updates(caplog) == []
    await service.close()


def unreachable(lang: str, repo: str) -> list[str]:
    return card_texts(cards.error_card(lang, t(lang, "hub.unreachable", repo=repo)))


# --------------------------------------------------------------------------- (e) the database is locked


async def test_locked_database_holds_questions_back_and_answers_everything_after(
    telegram_api: FakeTelegramAPI,
    catalog: Catalog,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The lock comes before the questions arrive: none is confirmed while it lasts, all are
    answered once it goes."""
    path = tmp_path / "user.sqlite"
    async with UserDataStore(path, busy_timeout_ms=50) as store:
        service = Service(catalog, store=store, limits=default_limits(tmp_path))
        asks = make_plan(15, 2, seed=8, first_chat=FIRST)
        expected = await expectations(catalog, asks)
        blocker = sqlite3.connect(path, timeout=0)
        async with running(telegram_api, service):
            blocker.execute("BEGIN EXCLUSIVE")  # another process holds the write lock
            try:
                tally = Tally(telegram_api, pos=len(telegram_api.exchanges))
                push(telegram_api, asks)
                await asyncio.sleep(2)  # nothing is confirmed while the inbox cannot be written (issue 21)
                blocker.rollback()  # the lock goes: every question held back is answered, none lost
                verdict, _ = await wait_for_responses(tally, asks, expected, 30, 0.3)
            finally:
                blocker.rollback()
                blocker.close()
            assert verdict.missing == verdict.duplicates == verdict.incomplete == 0, verdict.problems
            assert verdict.answered == len(asks) and verdict.apologies == 0
            assert failed_updates(caplog) == []
            await saving_works_after_the_lock(telegram_api)
        await refused_saves_left_no_trace(store)
    integrity_ok(path)
    no_refusals(telegram_api)


async def test_locked_database_after_storing_answers_everything_while_it_lasts(
    telegram_api: FakeTelegramAPI,
    catalog: Catalog,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The lock comes after the questions are in the inbox (a lock before they arrive stops their
    confirmation instead: the test above): they are all answered while it lasts."""
    path = tmp_path / "user.sqlite"
    async with UserDataStore(path, busy_timeout_ms=50) as store:
        service = GatedService(catalog, store=store, limits=default_limits(tmp_path))
        asks = make_plan(15, 2, seed=8, first_chat=FIRST)
        expected = await expectations(catalog, asks)
        blocker = sqlite3.connect(path, timeout=0)
        async with running(telegram_api, service):
            tally = Tally(telegram_api, pos=len(telegram_api.exchanges))
            push(telegram_api, asks)
            async with asyncio.timeout(10):  # stored in the inbox, held before answering
                while len(await store.inbox.open_items()) < len(asks):
                    await asyncio.sleep(0.02)
            blocker.execute("BEGIN EXCLUSIVE")  # another process holds the write lock
            try:
                service.gate.set()
                verdict, _ = await wait_for_responses(tally, asks, expected, 20, 0.3)
            finally:
                blocker.rollback()
                blocker.close()
            assert verdict.missing == verdict.duplicates == verdict.incomplete == 0, verdict.problems
            assert verdict.answered == len(asks) and verdict.apologies == 0
            assert failed_updates(caplog) == []
            await saving_works_after_the_lock(telegram_api)
        await refused_saves_left_no_trace(store)
    integrity_ok(path)
    no_refusals(telegram_api)


def default_limits(tmp_path: Path) -> Limits:
    defaults = settings(tmp_path)
    return Limits.per_minute(
        defaults.rate_user_per_minute, defaults.rate_chat_per_minute, defaults.rate_expensive_per_minute
    )


async def saving_works_after_the_lock(telegram_api: FakeTelegramAPI) -> None:
    """The lock is gone: saving works, and the saved GPU is used."""
    tally = Tally(telegram_api, pos=len(telegram_api.exchanges))
    push(telegram_api, [Ask(FIRST, "/mygpu 3090", "en")])
    await _wait(tally, FIRST, 1)
    assert "RTX 3090" in tally.sent[FIRST][0].text
    push(telegram_api, [Ask(FIRST, "can I run qwen3 8b?", "en")])
    await _wait(tally, FIRST, 2)
    assert "RTX 3090" in tally.sent[FIRST][1].text


async def refused_saves_left_no_trace(store: UserDataStore) -> None:
    assert (await store.prefs.user(f"tg:{FIRST}")).gpu_id == "rtx-3090"
    assert (await store.prefs.user(f"tg:{FIRST + 1}")).gpu_id is None


def integrity_ok(path: Path) -> None:
    check = sqlite3.connect(path)
    try:
        assert check.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    finally:
        check.close()


class GatedService(Service):
    """Answers only once ``gate`` is set."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.gate = asyncio.Event()

    async def answer(self, text: str, locale: str | None = None, user: Any = None) -> Any:
        await self.gate.wait()
        return await super().answer(text, locale, user)


async def _wait(tally: Tally, chat: int, count: int) -> None:
    async with asyncio.timeout(10):
        while len(tally.sent.get(chat, [])) < count:
            await asyncio.sleep(0.02)
            tally.update()
