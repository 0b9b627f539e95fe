"""The service with its state: saved preferences, chat language, rate limits, usage log, Hugging Face."""

from __future__ import annotations

import gc

import pytest

from bot.service import Service, User
from bot.users.limits import Limits
from catalog.facts import load_facts
from catalog.hub.cache import CachedHubClient
from catalog.hub.client import HubClient
from fitbot_fakes.hf_hub import FakeHub
from storage.userdata import UserDataStore

CATALOG = load_facts()


class Clock:
    now = 0.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
async def store(tmp_path):
    async with UserDataStore(tmp_path / "user.sqlite") as opened:
        yield opened


@pytest.fixture
async def service(store):
    service = Service(CATALOG, store=store, limits=Limits.per_minute(5, 100, 2, clock=Clock()))
    yield service
    await service.usage.flush()


ALICE = User(id="tg:1")


async def test_mygpu_is_remembered_and_used_when_no_gpu_is_named(service):
    saved = await service.answer("/mygpu 2x 3090 ram 128gb", user=ALICE)
    assert saved.kind == "settings" and "2x RTX 3090" in saved.summary
    reply = await service.answer("can I run qwen3 32b?", user=ALICE)
    assert reply.kind == "fit" and "2x RTX 3090" in reply.title
    other = await service.answer("can I run qwen3 32b?", user=User(id="tg:2"))
    assert other.kind == "suggest"  # nobody else gets Alice's GPU


async def test_lang_preference_wins_over_the_question(service):
    await service.answer("/lang de", user=ALICE)
    reply = await service.answer("can I run qwen3 8b on a 4090?", user=ALICE)
    assert reply.locale == "de" and "auf" in reply.title
    settings = await service.answer("/settings", user=ALICE)
    assert any(row.value == "de" for row in settings.sections[0].rows)


async def test_chat_language_applies_to_everyone_in_it(service, store):
    await store.prefs.set_chat("tg:-100", lang="de")
    reply = await service.answer("/fit qwen3-8b 4090", user=User(id="tg:7", chat="tg:-100"))
    assert reply.locale == "de"


async def test_forget_deletes_everything(service, store):
    await service.answer("/mygpu 4090", user=ALICE)
    reply = await service.answer("/forget", user=ALICE)
    assert reply.kind == "settings"
    assert (await store.prefs.user("tg:1")).gpu_id is None


async def test_flooding_user_gets_slow_down_and_others_are_served(service):
    kinds = [(await service.answer("/fit qwen3-8b 4090", user=ALICE)).kind for _ in range(7)]
    assert kinds[:5] == ["fit"] * 5 and kinds[5:] == ["slow_down"] * 2
    assert (await service.answer("/fit qwen3-8b 4090", user=User(id="tg:2"))).kind == "fit"


async def test_chart_budget_drops_the_picture_not_the_answer(service):
    charts = [(await service.answer("/fit qwen3-8b 4090", user=ALICE)).chart is not None for _ in range(4)]
    assert charts == [True, True, False, False]


async def test_usage_log_keeps_the_parsed_query_not_the_text(service, store):
    await service.answer("/fit qwen3-8b 4090 secret-words-here", user=ALICE)
    await service.answer("blorp", user=ALICE)
    assert (await store.query_log().stats())["questions"] == 0  # batched: the answer did not wait for it
    await service.usage.flush()
    stats = await store.query_log().stats()
    assert stats["questions"] == 2 and stats["not_understood"] == 1
    assert ("qwen3-8b", 1) in stats["models"]
    async with store.db.execute("SELECT * FROM query_log") as cur:
        dump = repr(await cur.fetchall())
    assert "secret-words-here" not in dump and "blorp" not in dump


@pytest.fixture(scope="module")
def fake_hub():
    with FakeHub() as hub:
        yield hub


@pytest.fixture
def hub_service(fake_hub, store, monkeypatch):
    import huggingface_hub.constants

    monkeypatch.setenv("HF_HUB_OFFLINE", "0")
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", False)
    monkeypatch.setenv("HF_ENDPOINT", fake_hub.endpoint)
    client = HubClient(timeout_s=2.0, endpoint=fake_hub.endpoint)
    return Service(CATALOG, store=store, hub=CachedHubClient(client, store.hub_cache))


async def test_unknown_repo_is_looked_up_on_the_hub(hub_service):
    reply = await hub_service.answer("/fit fitbot-test/dense-8b rtx 4090")
    assert reply.kind == "fit"
    assert "Hugging Face fitbot-test/dense-8b" in reply.footer and "revision" in reply.footer
    weights = next(r.value for r in reply.sections[0].rows if r.label == "Weights")
    assert weights.endswith("KV 1.00 GiB")  # Llama-3.1-8B geometry from the fake's config.json at 8K


@pytest.mark.parametrize(
    ("repo", "message"),
    [
        ("fitbot-test/does-not-exist", "no repo"),
        ("fitbot-test/gated", "gated"),
        ("fitbot-test/unknown-arch", "can't estimate"),
        ("fitbot-test/too-many-layers", "out of bounds"),
    ],
)
async def test_hub_failures_get_clear_answers(hub_service, repo, message):
    reply = await hub_service.answer(f"/fit {repo} rtx 4090")
    assert reply.kind == "error"
    assert message in reply.summary.lower()


async def test_locked_database_costs_the_defaults_not_the_answer(tmp_path):
    import sqlite3

    path = tmp_path / "user.sqlite"
    async with UserDataStore(path, busy_timeout_ms=50) as store:
        service = Service(CATALOG, store=store)
        await service.answer("/mygpu 4090", user=ALICE)
        blocker = sqlite3.connect(path, timeout=0)
        blocker.execute("BEGIN EXCLUSIVE")  # another process holds the write lock
        try:
            saved = await service.answer("/mygpu 3090", user=ALICE)
            assert saved.kind == "error" and "could not be saved" in saved.summary
            answer = await service.answer("/fit qwen3-8b 4090", user=ALICE)
            assert answer.kind == "fit"  # questions are still answered
        finally:
            blocker.rollback()
            blocker.close()
        assert (await store.prefs.user("tg:1")).gpu_id == "rtx-4090"  # the failed change left no trace
        assert (await service.answer("/mygpu 3090", user=ALICE)).kind == "settings"  # and it recovers


async def test_full_disk_is_a_clear_error_and_no_corruption(tmp_path):
    import sqlite3

    path = tmp_path / "user.sqlite"
    async with UserDataStore(path) as store:
        service = Service(CATALOG, store=store)
        await service.answer("/mygpu 4090", user=ALICE)
        async with store.db.execute("PRAGMA page_count") as cur:
            pages = (await cur.fetchone())[0]
        await store.db.execute(f"PRAGMA max_page_count = {pages}")  # SQLITE_FULL on the next growth
        replies = [
            await service.answer(f"/mygpu {gpu}", user=User(id=f"tg:x{i}"))
            for i, gpu in enumerate(["3090", "5090", "h100"] * 150)
        ]
        assert all(r.kind in ("settings", "error") for r in replies)
        assert any(r.kind == "error" for r in replies)
        assert (await service.answer("/fit qwen3-8b 4090", user=ALICE)).kind == "fit"
    check = sqlite3.connect(path)
    assert check.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    assert check.execute("SELECT gpu_id FROM user_prefs WHERE user_id = 'tg:1'").fetchone()[0] == "rtx-4090"
    check.close()


async def test_lang_in_a_group_sets_the_groups_language(service, store):
    reply = await service.answer("/lang de", user=User(id="tg:9", chat="tg:-200", is_admin=True))
    assert reply.locale == "de" and "Chat" in reply.summary
    assert (await store.prefs.chat("tg:-200")).lang == "de"
    answer = await service.answer("/fit qwen3-8b 4090", user=User(id="tg:10", chat="tg:-200"))
    assert answer.locale == "de"


async def test_a_locked_database_does_not_slow_answers_down(tmp_path):
    import sqlite3
    import time

    path = tmp_path / "user.sqlite"
    async with UserDataStore(path) as store:  # the production busy timeout
        service = Service(CATALOG, store=store)
        blocker = sqlite3.connect(path, timeout=0)
        blocker.execute("BEGIN EXCLUSIVE")
        try:
            started = time.perf_counter()
            replies = [await service.answer("/fit qwen3-8b 4090", user=User(id=f"tg:{i}")) for i in range(10)]
            elapsed = time.perf_counter() - started
        finally:
            blocker.rollback()
            blocker.close()
        await service.usage.flush()
    assert all(r.kind == "fit" for r in replies)
    assert elapsed < 5  # reads wait at most the busy timeout each; the usage log is written later


async def test_a_group_can_switch_plain_mentions_off_and_on(service, store):
    group = User(id="tg:5", chat="tg:-300", is_admin=True)
    assert await service.answers_mentions("tg:-300")
    reply = await service.answer("/settings mentions off", user=group)
    assert reply.kind == "settings" and not await service.answers_mentions("tg:-300")
    await service.answer("/settings erwähnungen an", user=group)
    assert await service.answers_mentions("tg:-300")
    assert await service.answers_mentions("")  # private chats always


async def test_a_gguf_repo_answers_with_its_measured_file_size(hub_service):
    reply = await hub_service.answer("/fit fitbot-test/llama-8b-gguf:Q4_K_M rtx 4090")
    assert reply.kind == "fit", reply.summary
    weights = next(r.value for r in reply.sections[0].rows if r.label == "Weights")
    assert weights.startswith("4.58 GiB (measured file)")  # 4,920,734,208 bytes listed by the hub


@pytest.mark.parametrize("admin", [False, None])
async def test_only_admins_change_a_groups_shared_settings_and_others_hear_why(service, store, admin):
    member = User(id="tg:11", chat="tg:-400", is_admin=admin)
    for text in ("/settings mentions off", "/lang de"):
        reply = await service.answer(text, locale="de", user=member)
        assert reply.locale == "de" and "Admins" in reply.summary  # in the asker's language
    chat = await store.prefs.chat("tg:-400")
    assert chat.answer_mentions and chat.lang is None
    english = await service.answer("/settings mentions off", locale="en", user=member)
    assert "Only the admins" in english.summary


async def test_a_ram_the_parser_refuses_is_not_answered_with_saved(service, store):
    reply = await service.answer("/mygpu 4090 ram 2049", user=ALICE)
    assert reply.tone.value == "warn" and "2048" in reply.summary and "not save" in reply.summary
    assert (await store.prefs.user(ALICE.id)).gpu_id is None  # nothing half-saved
    assert (await service.answer("/mygpu 4090 ram 64", user=ALICE)).kind == "settings"
    assert (await store.prefs.user(ALICE.id)).ram_gb == 64


async def test_a_too_long_message_is_titled_as_such_not_as_an_internal_error(service):
    reply = await service.answer("x" * 5000, user=ALICE)
    assert reply.title == "Message too long" and "Sorry" not in reply.title


async def test_a_chat_limit_refusal_does_not_use_up_the_askers_quota():
    clock = Clock()
    limits = Limits.per_minute(user=3, chat=2, expensive=2, clock=clock)
    service = Service(CATALOG, limits=limits)
    busy = [await service.answer("/fit qwen3-8b 4090", user=User(id=f"tg:{i}", chat="tg:-9")) for i in (1, 2)]
    assert [r.kind for r in busy] == ["fit", "fit"]
    for _ in range(5):  # the group is at its limit: refused, but tg:3's own quota is untouched
        assert (await service.answer("/fit qwen3-8b 4090", user=User(id="tg:3", chat="tg:-9"))).kind == "slow_down"
    private = [await service.answer("/fit qwen3-8b 4090", user=User(id="tg:3")) for _ in range(3)]
    assert [r.kind for r in private] == ["fit"] * 3


async def test_questions_asked_free_of_charge_do_not_count():
    limits = Limits.per_minute(user=2, chat=100, expensive=2, clock=Clock())
    service = Service(CATALOG, limits=limits)
    with Limits.free_of_charge():  # inline-mode keystrokes
        typed = [await service.answer("/fit qwen3-8b 4090", user=ALICE) for _ in range(17)]
    assert {r.kind for r in typed} == {"fit"}
    assert [(await service.answer("/fit qwen3-8b 4090", user=ALICE)).kind for _ in range(3)] == [
        "fit",
        "fit",
        "slow_down",
    ]


async def test_warming_up_logs_nothing_and_uses_up_no_quota(service, store):
    service.warm_up().result()
    await service.usage.flush()
    assert (await store.query_log().stats())["questions"] == 0
    charts = [(await service.answer("/fit qwen3-8b 4090", user=ALICE)).chart is not None for _ in range(4)]
    assert charts == [True, True, False, False]  # the same as without the warm-up


async def test_warm_up_leaves_start_up_to_the_collector_until_the_service_closes():
    service = Service(CATALOG)
    service.warm_up().result()
    assert gc.get_freeze_count() > 10_000  # the catalog and the warmed memos are no longer walked
    await service.close()
    assert gc.get_freeze_count() == 0
