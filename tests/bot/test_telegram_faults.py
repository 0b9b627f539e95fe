"""Faults other than a crash lose no Telegram question: a network outage, an inbox that cannot be
written or was deleted, a poison update, a question that kills the process, one busy group.

Real python-telegram-bot against the loopback fake Bot API (through a TCP proxy that can go down).
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
from pathlib import Path
from types import SimpleNamespace

import pytest

from bot.adapters.telegram.bot import build_application, serve
from bot.adapters.telegram.intake import SUSPECTS, Intake
from bot.adapters.telegram.queue import FairQueue
from bot.service import Service
from catalog.store import CatalogStore
from core.models import Catalog
from fitbot_fakes import fixtures
from fitbot_fakes.proxy import Proxy
from fitbot_fakes.telegram_api import FakeTelegramAPI
from storage.userdata import UserDataStore

telegram_api = fixtures.telegram_api
TOKEN = "123456:TEST-token"


@pytest.fixture(scope="module")
def catalog(tmp_path_factory: pytest.TempPathFactory) -> Catalog:
    return asyncio.run(CatalogStore(tmp_path_factory.mktemp("catalog") / "c.sqlite").load())


def answered(api: FakeTelegramAPI) -> set[int]:
    return {int(e.params["chat_id"]) for e in api.exchanges if e.method == "sendMessage" and e.status == 200}


async def until(check, timeout: float) -> None:
    async with asyncio.timeout(timeout):
        while not check():
            await asyncio.sleep(0.05)


def ask(api: FakeTelegramAPI, chats: range, **kw) -> None:
    for chat in chats:
        api.push_update(api.make_message(f"/fit qwen3 8b 4090 ctx {4096 + chat % 7 * 512}", chat_id=chat, **kw))


async def test_an_outage_loses_no_answer_and_marks_nothing_done_unsent(
    telegram_api: FakeTelegramAPI, catalog: Catalog, tmp_path: Path
):
    """Connections refused and reset for 2 s mid-backlog: every question is answered after it."""
    proxy = await Proxy(telegram_api.port).up()
    chats = range(2000, 2120)  # paced at 30/s after a burst of 30: the outage meets sends
    async with UserDataStore(tmp_path / "user.sqlite") as store:
        service = Service(catalog, store=store)
        app = build_application(service, TOKEN, base_url=f"http://127.0.0.1:{proxy.port}/bot", charts=False)  # paced
        async with serve(app, poll_timeout=1):
            ask(telegram_api, chats)
            await until(lambda: len(answered(telegram_api)) >= 5, 20)
            await proxy.down()
            assert len(answered(telegram_api)) < len(chats)
            await asyncio.sleep(2.0)
            await proxy.up()
            await until(lambda: answered(telegram_api) >= set(chats), 60)
        assert await store.inbox.open_items() == [] and await store.inbox.failures() == []
    await proxy.down()


async def test_a_locked_inbox_stops_confirming_and_says_so_then_catches_up(
    telegram_api: FakeTelegramAPI, catalog: Catalog, tmp_path: Path, caplog: pytest.LogCaptureFixture
):
    states: list[tuple[str, dict]] = []
    async with UserDataStore(tmp_path / "user.sqlite") as store:
        service = Service(catalog, store=store)
        app = build_application(service, TOKEN, base_url=telegram_api.base_url, charts=False, rate_limiter=False)
        async with serve(app, poll_timeout=1, on_state=lambda s, **d: states.append((s, d))):
            await telegram_api.wait_call("getUpdates", timeout=10)
            locker = sqlite3.connect(tmp_path / "user.sqlite", isolation_level=None)
            locker.execute("BEGIN IMMEDIATE")
            ask(telegram_api, range(3000, 3010))
            await asyncio.sleep(2.0)
            assert answered(telegram_api) == set()  # not stored, so neither confirmed nor answered
            assert len(telegram_api.updates) == 10  # still Telegram's: a crash now loses nothing
            assert states[-1][0] == "degraded" and "inbox cannot be written" in states[-1][1]["error"]
            locker.execute("COMMIT")
            locker.close()
            await until(lambda: answered(telegram_api) >= set(range(3000, 3010)), 20)
            assert states[-1][0] == "running"
    unwritable = [r for r in caplog.records if getattr(r, "event", None) == "inbox_unwritable"]
    assert len(unwritable) == 1 and unwritable[0].levelname == "ERROR"  # loud, and once


async def test_a_deleted_user_database_is_restored_and_keeps_the_questions(
    telegram_api: FakeTelegramAPI, catalog: Catalog, tmp_path: Path
):
    path = tmp_path / "user.sqlite"
    async with UserDataStore(path) as store:
        service = Service(catalog, store=store)
        app = build_application(service, TOKEN, base_url=telegram_api.base_url, charts=False, rate_limiter=False)
        async with serve(app, poll_timeout=1):
            await telegram_api.wait_call("getUpdates", timeout=10)
            for name in ("user.sqlite", "user.sqlite-wal", "user.sqlite-shm"):
                (tmp_path / name).unlink(missing_ok=True)
            ask(telegram_api, range(4000, 4010))
            await until(lambda: answered(telegram_api) >= set(range(4000, 4010)), 20)
    stored = sqlite3.connect(path).execute("SELECT update_id FROM tg_inbox").fetchall()
    assert len(stored) == 10  # in the file at the path, not in the deleted one a crash would lose


async def test_a_poison_update_is_recorded_skipped_and_reported_once(
    telegram_api: FakeTelegramAPI, catalog: Catalog, tmp_path: Path, caplog: pytest.LogCaptureFixture
):
    async with UserDataStore(tmp_path / "user.sqlite") as store:
        service = Service(catalog, store=store)
        app = build_application(service, TOKEN, base_url=telegram_api.base_url, charts=False, rate_limiter=False)
        async with serve(app, poll_timeout=1):
            ask(telegram_api, range(5000, 5003))
            telegram_api.push_update({"callback_query": {"id": "9", "from": "not a user", "chat_instance": "x"}})
            ask(telegram_api, range(5003, 5010))
            await until(lambda: answered(telegram_api) >= set(range(5000, 5010)), 20)
        failures = await store.inbox.failures()
    assert [reason for _, reason in failures] == ["parse: TypeError"]
    assert sum(getattr(r, "event", None) == "poison_update" for r in caplog.records) == 1


async def test_a_handler_error_is_recorded_and_not_replayed(
    telegram_api: FakeTelegramAPI, catalog: Catalog, tmp_path: Path
):
    """A callback the handler cannot answer (unknown to Telegram, without its message): closed as failed, once."""
    async with UserDataStore(tmp_path / "user.sqlite") as store:
        service = Service(catalog, store=store)
        app = build_application(service, TOKEN, base_url=telegram_api.base_url, charts=False, rate_limiter=False)
        async with serve(app, poll_timeout=1):
            telegram_api.push_update(
                {
                    "callback_query": {
                        "id": "7",
                        "chat_instance": "x",
                        "data": "q:/fit qwen3 8b 4090",
                        "from": {"id": 6000, "is_bot": False, "first_name": "T"},
                    }
                }
            )
            ask(telegram_api, range(6001, 6004))
            await until(lambda: answered(telegram_api) >= set(range(6001, 6004)), 20)
            await asyncio.sleep(0.3)
        failures = await store.inbox.failures()
        assert len(failures) == 1 and failures[0][1].startswith("handler: ")
        assert await store.inbox.open_items() == []


async def test_an_update_the_process_died_on_twice_is_quarantined_and_once_goes_last(tmp_path: Path):
    from storage.inbox import InboxItem

    async with UserDataStore(tmp_path / "user.sqlite") as store:
        inbox = store.inbox
        raw = {"message": {"message_id": 1, "date": 0, "chat": {"id": 1, "type": "private"}, "text": "/fit x"}}
        await inbox.add([InboxItem(uid, f"c{uid}|u{uid}", json.dumps({**raw, "update_id": uid})) for uid in (1, 2, 3)])
        for uid in (1, 1, 2):
            inbox.started(uid)  # 1: two processes died on it; 2: one did
        bot = SimpleNamespace()
        left, offset = await Intake(inbox, bot).resume()  # type: ignore[arg-type]
        assert [u.update_id for _, _, u in left] == [3, 2] and offset == 4
        assert left[1][0] == SUSPECTS  # answered after the others, one suspect at a time
        assert await inbox.failures() == [(1, "quarantined: the process died 2 times handling it")]
        assert inbox.start_counts() == {2: 1}  # the settled ones are forgotten, the open one still counts


async def test_one_chat_holds_at_most_its_share_of_the_workers():
    queue: FairQueue[SimpleNamespace] = FairQueue(per_chat=2)
    for user in range(60):
        queue.put(f"u{user}", SimpleNamespace(who="group"), chat="group")
    queue.put("u1000", SimpleNamespace(who="private"), chat="u1000")
    taken = [await queue.take() for _ in range(3)]
    assert [item.who for _, item in taken] == ["group", "private", "group"]
    with pytest.raises(TimeoutError):  # the group holds two workers: its third waits for one of them
        await asyncio.wait_for(queue.take(), 0.1)
    queue.release("group")
    assert (await queue.take())[0] == "group"


async def test_marks_the_journal_cannot_take_are_kept_and_written_once_it_can(
    telegram_api: FakeTelegramAPI, catalog: Catalog, tmp_path: Path, caplog: pytest.LogCaptureFixture
):
    """A journal that cannot be written while answering (a read-only remount, chattr +i): a crash then
    answered every such question again (92 of 300 twice); the marks wait in memory and land once it can."""
    journal = tmp_path / "user.sqlite.answered"
    async with UserDataStore(tmp_path / "user.sqlite") as store:
        service = Service(catalog, store=store)
        app = build_application(service, TOKEN, base_url=telegram_api.base_url, charts=False, rate_limiter=False)
        async with serve(app, poll_timeout=1):
            await telegram_api.wait_call("getUpdates", timeout=10)
            journal.mkdir()  # appending to it fails (IsADirectoryError), as to a read-only file
            ask(telegram_api, range(7000, 7005))
            await until(lambda: answered(telegram_api) >= set(range(7000, 7005)), 20)
            journal.rmdir()
            # what a crash from here on would find: every answered update journaled, none to answer again
            await until(lambda: journal.is_file() and len(journal.read_text().split()) == 5, 20)
    unwritable = [r for r in caplog.records if getattr(r, "event", None) == "journal_unwritable"]
    assert len(unwritable) == 1  # said once, not once per answer
