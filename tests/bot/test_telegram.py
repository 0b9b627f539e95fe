"""The Telegram adapter end to end: the production ``build_application`` against the fake Bot API.

Every test runs the real python-telegram-bot ``Application`` (polling, or PTB's webhook server)
against ``fitbot_fakes/telegram_api.py``, which refuses what Telegram refuses (bad HTML, long texts,
callback_data over 64 bytes). Expected card texts come from the real ``Service`` and renderer, so the
tests check the wiring (language, ids, quoting, buttons, edits), not the wording of cards.
``StubService`` is the real service plus a few test-only questions (a chart, a long button, a huge
table, a crash), plugged in through ``build_application``'s ``service`` argument.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from hypothesis import given
from hypothesis import strategies as st
from telegram.ext import Application
from telegram.request import HTTPXRequest

from bot.adapters.buttons import ButtonStore
from bot.adapters.telegram.bot import MAX_CHAT_MESSAGES, MENU, build_application, run_telegram, serve
from bot.adapters.telegram.parts import callback_data, say
from bot.cards.notices import table_card
from bot.render.telegram_html import caption_for_photo, to_telegram
from bot.reply import Action, ChartSpec, Reply, Series
from bot.service import Service, User
from bot.users.limits import Limits
from catalog.store import CatalogStore
from core.models import Catalog
from fitbot_fakes import fixtures
from fitbot_fakes.telegram_api import BOT_USERNAME, FakeTelegramAPI, parse_html
from locales import t
from storage.userdata import UserDataStore

telegram_api = fixtures.telegram_api

TOKEN = "123456:TEST-token"
FIT = "/fit qwen3 32b 4090"
GROUP = -100123
LONG_QUERY = "/fit qwen3-32b rtx-4090 with 32k context and q8_0 weights and kv cache q8_0 please"
CHART = ChartSpec(
    kind="memory_vs_context",
    title="Qwen3-32B <b>&amp;",
    x_label="Context",
    y_label="GiB",
    series=(Series(name="Q4_K_M", points=((4096.0, 19.0), (32768.0, 27.0))),),
    limit=22.0,
    limit_label="usable",
)
COMMANDS = [
    FIT,
    "/speed qwen3 32b 4090",
    "/cloud qwen3-32b",
    "/quant qwen3 32b 4090",
    "/gpus qwen3-32b",
    "/models 4090",
    "/finetune qwen3 8b 4090",
    "/tco qwen3 32b 4090",
    "/compare 4090 vs 3090 qwen3 32b",
    "/mygpu 4090",
    "/lang",
    "/help",
    "/start",
]
SENDS = ("sendMessage", "sendPhoto", "sendDocument")


class StubService(Service):
    """The real service plus test-only questions; ``decode_speed`` answers ``speed``."""

    speed: float | None = None

    async def answer(self, text: str, locale: str | None = None, user: User | None = None) -> Reply:
        if text == "boom":
            raise RuntimeError("boom")
        if text == "huge":
            rows = [(f"gpu {i}", f"{i} GiB", "fits") for i in range(900)]
            return table_card("gpus", "A very long table", "GPU|Memory|Verdict", rows, self.catalog, "en")
        if text.startswith("long "):
            reply = await super().answer(text[5:], locale, user)
            return reply.model_copy(update={"actions": (Action(label="Long one", query=LONG_QUERY), *reply.actions)})
        if text.startswith("feel "):
            reply = await super().answer(text[5:], locale, user)
            return reply.model_copy(update={"actions": (Action(label="Feel", query="/feel " + text[5:]),)})
        if text.startswith("chart "):  # a short card with a chart: fits a photo caption
            reply = await super().answer(text[6:], locale, user)
            return reply.model_copy(update={"chart": CHART})
        return await super().answer(text, locale, user)

    async def decode_speed(self, question: str) -> float | None:
        return self.speed


@pytest.fixture(scope="module")
def catalog(tmp_path_factory: pytest.TempPathFactory) -> Catalog:
    return asyncio.run(CatalogStore(tmp_path_factory.mktemp("catalog") / "c.sqlite").load())


@pytest.fixture
async def service(catalog: Catalog, tmp_path: Path) -> AsyncIterator[StubService]:
    async with UserDataStore(tmp_path / "user.sqlite") as store:
        yield StubService(catalog, store=store)


@contextlib.asynccontextmanager
async def running(api: FakeTelegramAPI, service: Service, **kwargs: Any) -> AsyncIterator[Application]:
    app = build_application(service, TOKEN, base_url=api.base_url, base_file_url=api.base_file_url, **kwargs)
    async with serve(app, poll_timeout=1):
        yield app


@pytest.fixture
async def bot(telegram_api: FakeTelegramAPI, service: StubService) -> AsyncIterator[Application]:
    """The production build without chart images (those have their own test)."""
    async with running(telegram_api, service, charts=False) as app:
        yield app


# --------------------------------------------------------------------------- helpers


def sent(api: FakeTelegramAPI, chat_id: int, methods: tuple[str, ...] = SENDS) -> list[dict[str, Any]]:
    """The messages the bot got accepted in ``chat_id``, as the fake stored them (plain text)."""
    return [
        e.response
        for e in api.exchanges
        if e.method in methods and e.status == 200 and e.response["chat"]["id"] == chat_id
    ]


async def wait_sent(api: FakeTelegramAPI, chat_id: int, count: int, method: str = "sendMessage") -> list[dict]:
    """Waits until ``count`` ``method`` calls to ``chat_id`` were answered, and returns the messages."""
    async with asyncio.timeout(10):
        while len(found := sent(api, chat_id, (method,))) < count:
            await api.wait_call(method, count=len(api.calls_of(method)) + 1, timeout=10)
    return found


async def expected(service: Service, text: str, lang: str, user_id: int, chat: str = "") -> list[str]:
    """The plain texts of the messages the card for ``text`` should produce."""
    reply = await service.answer(text, lang, User(id=f"tg:{user_id}", chat=chat))
    return [parse_html(m.text)[0] for m in to_telegram(reply)]


def buttons(message: dict[str, Any]) -> list[dict[str, Any]]:
    return [b for row in message.get("reply_markup", {}).get("inline_keyboard", []) for b in row]


def no_refusals(api: FakeTelegramAPI) -> None:
    """Telegram would have accepted every call (the fake answers 400 where Telegram does)."""
    refused = [(e.method, e.response) for e in api.exchanges if e.status == 400]
    assert not refused


async def post_when_listening(url: str, update: dict[str, Any], secret: str) -> int:
    """POSTs an update the way Telegram does; PTB sets the webhook before its server listens, so retry."""
    async with aiohttp.ClientSession() as http:
        for _ in range(100):
            try:
                async with http.post(url, json=update, headers={"X-Telegram-Bot-Api-Secret-Token": secret}) as resp:
                    return resp.status
            except aiohttp.ClientConnectorError:
                await asyncio.sleep(0.05)
    raise AssertionError(f"nothing listens on {url}")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


# --------------------------------------------------------------------------- commands and questions


async def test_commands_are_registered_in_english_and_german(bot: Application, telegram_api: FakeTelegramAPI) -> None:
    default = telegram_api.commands[('{"type": "default"}', "")]
    german = telegram_api.commands[('{"type": "default"}', "de")]
    assert [c["command"] for c in default] == [c["command"] for c in german] == list(MENU)
    assert {
        "fit",
        "speed",
        "cloud",
        "quant",
        "gpus",
        "models",
        "finetune",
        "tco",
        "compare",
        "mygpu",
        "lang",
        "settings",
        "forget",
        "help",
        "start",
    } == set(MENU)
    assert default[0]["description"] != german[0]["description"]


@pytest.mark.parametrize("lang", ["en", "de"])
@pytest.mark.parametrize("command", COMMANDS)
async def test_each_command_answers_in_the_users_language(
    bot: Application, telegram_api: FakeTelegramAPI, service: StubService, command: str, lang: str
) -> None:
    telegram_api.push_update(telegram_api.make_message(command, chat_id=777, language_code=lang))
    want = await expected(service, command, lang, 777)
    if len(want) > MAX_CHAT_MESSAGES:  # a long card: the first message, then the whole card as a file
        await wait_sent(telegram_api, 777, 1, "sendDocument")
        want = want[:1]
    got = await wait_sent(telegram_api, 777, len(want))
    assert [m["text"] for m in got] == want
    assert all(e.params.get("parse_mode") == "HTML" for e in telegram_api.exchanges if e.method == "sendMessage")
    no_refusals(telegram_api)


async def test_start_offers_three_example_questions_as_buttons(bot: Application, telegram_api: FakeTelegramAPI) -> None:
    telegram_api.push_update(telegram_api.make_message("/start", language_code="de"))
    (welcome,) = await wait_sent(telegram_api, 777, 1)
    assert [b["text"] for b in buttons(welcome)] == [t("de", f"help.example{i}") for i in (1, 2, 3)]


async def test_lang_choice_wins_over_the_telegram_language(
    bot: Application, telegram_api: FakeTelegramAPI, service: StubService
) -> None:
    telegram_api.push_update(telegram_api.make_message("/lang de", language_code="en"))
    (saved,) = await wait_sent(telegram_api, 777, 1)
    assert saved["text"] == (await expected(service, "/lang de", "en", 777))[0]
    telegram_api.push_update(telegram_api.make_message(FIT, language_code="en"))
    got = await wait_sent(telegram_api, 777, 2)
    assert got[1]["text"] == (await expected(service, FIT, "de", 777))[0]
    assert "auf RTX 4090" in got[1]["text"]


async def test_a_plain_question_in_a_private_chat(
    bot: Application, telegram_api: FakeTelegramAPI, service: StubService
) -> None:
    question = "can I run qwen3 8b on a 3090 with 32k?"
    telegram_api.push_update(telegram_api.make_message(question, chat_id=31, language_code="en"))
    (card,) = await wait_sent(telegram_api, 31, 1)
    assert card["text"] == (await expected(service, question, "en", 31))[0]
    assert buttons(card) and all(b["callback_data"][:2] in ("q:", "k:") for b in buttons(card))
    assert "reply_to_message" not in card  # private answers do not quote


async def test_groups_answer_commands_mentions_and_replies_and_ignore_the_rest(
    bot: Application, telegram_api: FakeTelegramAPI, service: StubService
) -> None:
    chat = f"tg:{GROUP}"
    command = telegram_api.push_update(
        telegram_api.make_message(f"/fit@{BOT_USERNAME} qwen3 32b 4090", chat_id=GROUP, chat_type="supergroup")
    )
    (first,) = await wait_sent(telegram_api, GROUP, 1)
    assert first["text"] == (await expected(service, f"/fit@{BOT_USERNAME} qwen3 32b 4090", "en", 4242, chat))[0]
    assert first["reply_to_message"]["message_id"] == command["message"]["message_id"]

    telegram_api.push_update(
        telegram_api.make_message("can I run qwen3 32b on a 4090?", chat_id=GROUP, chat_type="supergroup")
    )  # not addressed: ignored
    mention = telegram_api.make_message(
        f"@{BOT_USERNAME} can I run qwen3 8b on a 3090?",
        chat_id=GROUP,
        chat_type="supergroup",
        entities=[{"type": "mention", "offset": 0, "length": len(BOT_USERNAME) + 1}],
    )
    telegram_api.push_update(mention)
    second = (await wait_sent(telegram_api, GROUP, 2))[1]
    assert second["text"] == (await expected(service, "can I run qwen3 8b on a 3090?", "en", 4242, chat))[0]
    assert BOT_USERNAME not in second["text"]

    telegram_api.push_update(
        telegram_api.make_message(
            "and llama 3.3 70b on 2x 3090?", chat_id=GROUP, chat_type="supergroup", reply_to=first["message_id"]
        )
    )
    third = (await wait_sent(telegram_api, GROUP, 3))[2]
    assert third["text"] == (await expected(service, "and llama 3.3 70b on 2x 3090?", "en", 4242, chat))[0]
    await asyncio.sleep(0.3)
    assert len(sent(telegram_api, GROUP)) == 3  # the unaddressed question got no answer
    no_refusals(telegram_api)


async def test_a_group_that_switched_mentions_off_gets_commands_only(
    bot: Application, telegram_api: FakeTelegramAPI, service: StubService
) -> None:
    telegram_api.set_admin(GROUP, 4242)
    telegram_api.push_update(
        telegram_api.make_message(f"/settings@{BOT_USERNAME} mentions off", chat_id=GROUP, chat_type="supergroup")
    )
    (switched,) = await wait_sent(telegram_api, GROUP, 1)
    assert "ignored" in switched["text"]
    telegram_api.push_update(
        telegram_api.make_message(
            f"@{BOT_USERNAME} can I run qwen3 8b on a 3090?",
            chat_id=GROUP,
            chat_type="supergroup",
            entities=[{"type": "mention", "offset": 0, "length": len(BOT_USERNAME) + 1}],
        )
    )
    telegram_api.push_update(
        telegram_api.make_message(f"/fit@{BOT_USERNAME} qwen3 8b 3090", chat_id=GROUP, chat_type="supergroup")
    )
    second = (await wait_sent(telegram_api, GROUP, 2))[1]
    assert "Qwen3-8B" in second["text"]
    await asyncio.sleep(0.3)
    assert len(sent(telegram_api, GROUP)) == 2  # the mention went unanswered, the command did not
    no_refusals(telegram_api)


async def test_only_group_admins_change_shared_settings_others_are_told_in_their_language(
    bot: Application, telegram_api: FakeTelegramAPI, service: StubService
) -> None:
    telegram_api.set_admin(GROUP, 1)
    for text in (f"/settings@{BOT_USERNAME} mentions off", "/lang en"):
        telegram_api.push_update(
            telegram_api.make_message(text, chat_id=GROUP, chat_type="supergroup", user_id=2, language_code="de")
        )
    refused = await wait_sent(telegram_api, GROUP, 2)
    assert all("Nur die Admins" in m["text"] for m in refused)
    assert {c.params["user_id"] for c in telegram_api.calls_of("getChatMember")} == {2}
    assert (
        await service.answers_mentions(f"tg:{GROUP}") and (await service.store.prefs.chat(f"tg:{GROUP}")).lang is None
    )
    telegram_api.push_update(
        telegram_api.make_message("/settings mentions off", chat_id=GROUP, chat_type="supergroup", user_id=1)
    )
    assert "ignored" in (await wait_sent(telegram_api, GROUP, 3))[2]["text"]
    assert not await service.answers_mentions(f"tg:{GROUP}")
    no_refusals(telegram_api)


# --------------------------------------------------------------------------- buttons


async def test_a_button_press_answers_the_callback_then_edits_the_same_message(
    bot: Application, telegram_api: FakeTelegramAPI, service: StubService
) -> None:
    telegram_api.push_update(telegram_api.make_message(FIT, language_code="de"))
    (card,) = await wait_sent(telegram_api, 777, 1)
    quant = next(b for b in buttons(card) if b["callback_data"].startswith("q:/quant"))
    telegram_api.push_update(telegram_api.make_callback(quant["callback_data"], card["message_id"], language_code="de"))
    edit = await telegram_api.wait_call("editMessageText")
    answer = telegram_api.calls_of("answerCallbackQuery")[0]
    assert telegram_api.calls.index(answer) < telegram_api.calls.index(edit)
    assert edit.params["message_id"] == card["message_id"]
    stored = telegram_api.messages[777][card["message_id"]]
    assert stored["text"] == (await expected(service, quant["callback_data"][2:], "de", 777))[0]
    assert len(sent(telegram_api, 777)) == 1  # edited in place, no new message
    no_refusals(telegram_api)


async def test_long_button_questions_use_a_key_that_expires_with_a_restart(
    telegram_api: FakeTelegramAPI, service: StubService
) -> None:
    async with running(telegram_api, service):
        telegram_api.push_update(telegram_api.make_message("long " + FIT + " details", language_code="de"))
        (card,) = await wait_sent(telegram_api, 777, 1)
        keyed = buttons(card)[0]["callback_data"]
        assert keyed.startswith("k:") and len(keyed.encode()) <= 64
        telegram_api.push_update(telegram_api.make_callback(keyed, card["message_id"], language_code="de"))
        await telegram_api.wait_call("editMessageText")
        assert (
            telegram_api.messages[777][card["message_id"]]["text"]
            == (await expected(service, LONG_QUERY, "de", 777))[0]
        )
    async with running(telegram_api, service):  # a restart: same chat, new process state
        telegram_api.push_update(telegram_api.make_callback(keyed, card["message_id"], language_code="de"))
        expired = await telegram_api.wait_call("answerCallbackQuery", count=2)
        assert expired[1].params["text"] == say("de", "expired") and expired[1].params["show_alert"] is True
        plain = next(
            b for b in buttons(telegram_api.messages[777][card["message_id"]]) if b["callback_data"].startswith("q:")
        )
        telegram_api.push_update(telegram_api.make_callback(plain["callback_data"], card["message_id"]))
        await telegram_api.wait_call("editMessageText", count=2)  # plain buttons survive the restart
    no_refusals(telegram_api)


@given(st.text(max_size=300))
def test_callback_data_always_fits_and_resolves(query: str) -> None:
    store = ButtonStore()
    data = callback_data(query, store)
    assert 1 <= len(data.encode()) <= 64
    kind, _, value = data.partition(":")
    assert (value if kind == "q" else store.get(value)) == query


def test_the_action_store_forgets_old_and_surplus_keys() -> None:
    store = ButtonStore(ttl_s=-1)
    assert store.get(store.put("x" * 100)) is None
    store = ButtonStore(size=2)
    keys = [store.put(f"{i}" * 80) for i in range(3)]
    assert store.get(keys[0]) is None and store.get(keys[2]) == "2" * 80


# --------------------------------------------------------------------------- inline mode


async def test_inline_query_offers_fit_quant_and_cloud_articles(
    bot: Application, telegram_api: FakeTelegramAPI, service: StubService
) -> None:
    telegram_api.push_update(telegram_api.make_inline_query("qwen3 32b  4090", language_code="de"))
    call = await telegram_api.wait_call("answerInlineQuery")
    results = call.params["results"]
    assert [r["id"] for r in results] == ["fit", "quant", "cloud"]
    assert call.params["cache_time"] == 30 and call.params["is_personal"] is True
    fit = (await expected(service, "/fit qwen3 32b 4090", "de", 4242))[0]
    assert parse_html(results[0]["input_message_content"]["message_text"])[0] == fit
    assert all(r["input_message_content"]["parse_mode"] == "HTML" for r in results)
    assert "auf" in results[0]["title"]  # German title
    no_refusals(telegram_api)


async def test_inline_query_with_an_unknown_model_offers_one_article(
    bot: Application, telegram_api: FakeTelegramAPI
) -> None:
    hostile = telegram_api.push_update(
        telegram_api.make_inline_query('<b>x</b> & <a href="https://evil.example">y</a>')
    )
    telegram_api.push_update(telegram_api.make_inline_query("   ", user_id=4343))
    answers = await telegram_api.wait_call("answerInlineQuery", count=2)
    first, empty = sorted(answers, key=lambda c: c.params["inline_query_id"] != hostile["inline_query"]["id"])
    (result,) = first.params["results"]
    plain, entities = parse_html(result["input_message_content"]["message_text"])
    assert '<a href="https://evil.example">' in plain and not any(e["type"] == "text_link" for e in entities)
    assert empty.params["results"] == []
    no_refusals(telegram_api)


async def test_inline_keystrokes_are_debounced_and_cost_no_question_quota(
    telegram_api: FakeTelegramAPI, catalog: Catalog, tmp_path: Path
) -> None:
    """17 keystrokes used to be 17 questions, and so a 56 s slow-down for the next real one."""
    async with UserDataStore(tmp_path / "u.sqlite") as store:
        service = StubService(catalog, store=store, limits=Limits.per_minute(5, 100, 5))
        async with running(telegram_api, service, charts=False):
            typed = "qwen3 32b 4090 32k context please"
            for i in range(1, 18):
                telegram_api.push_update(telegram_api.make_inline_query(typed[: i + 2]))
                await asyncio.sleep(0.02)
            (answer,) = [await telegram_api.wait_call("answerInlineQuery")]
            await asyncio.sleep(0.6)
            assert len(telegram_api.calls_of("answerInlineQuery")) == 1  # only the last keystroke
            assert answer.params["results"]
            telegram_api.push_update(telegram_api.make_message(FIT, chat_id=4242))
            (card,) = await wait_sent(telegram_api, 4242, 1)
            assert "RTX 4090" in card["text"]  # a real answer, not a slow-down


async def test_a_flooding_user_gets_one_slow_down_card_per_window(
    telegram_api: FakeTelegramAPI, catalog: Catalog, tmp_path: Path
) -> None:
    async with UserDataStore(tmp_path / "u.sqlite") as store:
        service = StubService(catalog, store=store, limits=Limits.per_minute(3, 1000, 5))
        async with running(telegram_api, service, charts=False):
            for _ in range(30):
                telegram_api.push_update(telegram_api.make_message("/fit qwen3 8b 4090", chat_id=501))
            telegram_api.push_update(telegram_api.make_message(FIT, chat_id=502))
            await wait_sent(telegram_api, 502, 1)
            await wait_sent(telegram_api, 501, 4)
            await asyncio.sleep(0.5)
            texts = [m["text"] for m in sent(telegram_api, 501)]
    slow = t("en", "limits.title")
    assert len(texts) == 4 and sum(slow in x for x in texts) == 1


# --------------------------------------------------------------------------- charts, long cards


async def test_a_chart_comes_as_a_photo_with_the_card_as_caption(
    telegram_api: FakeTelegramAPI, service: StubService
) -> None:
    async with running(telegram_api, service):
        telegram_api.push_update(telegram_api.make_message("chart /help"))
        (photo,) = await wait_sent(telegram_api, 777, 1, "sendPhoto")
        assert telegram_api.files[photo["photo"][0]["file_id"]].data.startswith(b"\x89PNG")
        assert photo["caption"] == (await expected(service, "chart /help", "en", 777))[0]  # the whole card
        example = next(b for b in buttons(photo) if b["callback_data"].startswith("q:/fit"))
        telegram_api.push_update(telegram_api.make_callback(example["callback_data"], photo["message_id"]))
        edit = await telegram_api.wait_call("editMessageCaption")
    fit = await service.answer(example["callback_data"][2:], "en", User(id="tg:777"))
    # the phone-size fit card fits a caption whole; a longer one would get the short caption
    assert fit.chart is not None and edit.params["caption"] in (caption_for_photo(fit), to_telegram(fit)[0].text)
    assert telegram_api.messages[777][photo["message_id"]]["reply_markup"] == edit.params["reply_markup"]
    assert not sent(telegram_api, 777, ("sendMessage",))
    no_refusals(telegram_api)


async def test_a_long_card_with_a_chart_is_text_then_the_chart(
    telegram_api: FakeTelegramAPI, service: StubService
) -> None:
    async with running(telegram_api, service):
        # the details page (with a picture added by the stub) is longer than a photo caption
        telegram_api.push_update(telegram_api.make_message("chart " + FIT + " details"))
        (photo,) = await wait_sent(telegram_api, 777, 1, "sendPhoto")
    (card,) = sent(telegram_api, 777, ("sendMessage",))
    reply = await service.answer("chart " + FIT + " details", "en", User(id="tg:777"))
    assert card["text"] == parse_html(to_telegram(reply)[0].text)[0] and buttons(card)
    assert photo["caption"] == parse_html(caption_for_photo(reply))[0] and "reply_markup" not in photo
    assert card["message_id"] < photo["message_id"]
    no_refusals(telegram_api)


async def test_a_huge_table_is_sent_as_a_message_and_a_document(
    bot: Application, telegram_api: FakeTelegramAPI
) -> None:
    telegram_api.push_update(telegram_api.make_message("huge"))
    (doc,) = await wait_sent(telegram_api, 777, 1, "sendDocument")
    (head,) = sent(telegram_api, 777, ("sendMessage",))
    assert "A very long table" in head["text"]
    text = telegram_api.files[doc["document"]["file_id"]].data.decode()
    assert "gpu 899" in text and doc["document"]["file_name"] == "fitbot-gpus.txt"
    no_refusals(telegram_api)


# --------------------------------------------------------------------------- feel the speed


async def test_feel_the_speed_streams_edits_at_most_once_a_second(
    bot: Application, telegram_api: FakeTelegramAPI, service: StubService
) -> None:
    service.speed = 350.0  # 1,400 characters a second: the sample is through after the second frame
    telegram_api.push_update(telegram_api.make_message("feel " + FIT))
    (card,) = await wait_sent(telegram_api, 777, 1)
    (feel,) = buttons(card)
    assert feel["callback_data"] == "q:/feel " + FIT
    telegram_api.push_update(telegram_api.make_callback(feel["callback_data"], card["message_id"]))
    edits = await telegram_api.wait_call("editMessageText", count=2)
    times = [e.at for e in telegram_api.exchanges if e.method == "editMessageText"]
    assert times[1] - times[0] >= 0.9
    assert edits[0].params["text"].startswith("⏱") and "reply_markup" not in edits[0].params
    final = telegram_api.messages[777][card["message_id"]]
    assert final["text"].startswith("✅") and "350 tok/s" in final["text"]
    assert buttons(final)[0]["callback_data"] == "q:" + FIT
    no_refusals(telegram_api)


async def test_feel_the_speed_without_an_estimate_edits_once(bot: Application, telegram_api: FakeTelegramAPI) -> None:
    telegram_api.push_update(telegram_api.make_message("feel " + FIT, language_code="de"))
    (card,) = await wait_sent(telegram_api, 777, 1)
    telegram_api.push_update(
        telegram_api.make_callback(buttons(card)[0]["callback_data"], card["message_id"], language_code="de")
    )
    edit = await telegram_api.wait_call("editMessageText")
    assert edit.params["text"] == say("de", "feel.unknown")
    await asyncio.sleep(0.2)
    assert len(telegram_api.calls_of("editMessageText")) == 1


# --------------------------------------------------------------------------- failures and hostile input


async def test_a_429_mid_conversation_is_retried_and_the_conversation_goes_on(
    bot: Application, telegram_api: FakeTelegramAPI, service: StubService
) -> None:
    telegram_api.push_update(telegram_api.make_message("/help"))
    await wait_sent(telegram_api, 777, 1)
    telegram_api.fail_next("sendMessage", status=429, retry_after=1)
    telegram_api.push_update(telegram_api.make_message(FIT))
    await wait_sent(telegram_api, 777, 2)
    telegram_api.push_update(telegram_api.make_message("/quant qwen3 32b 4090"))
    got = await wait_sent(telegram_api, 777, 3)
    attempts = [e for e in telegram_api.exchanges if e.method == "sendMessage"]
    assert [e.status for e in attempts] == [200, 429, 200, 200]
    assert attempts[2].at - attempts[1].at >= 1.0
    assert got[1]["text"] == (await expected(service, FIT, "en", 777))[0]
    assert not telegram_api.calls_of("answerCallbackQuery")


async def test_sends_are_retried_for_a_time_budget_not_a_count(
    bot: Application, telegram_api: FakeTelegramAPI, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Six 429s in a row, or a second of 5xx, used to lose the card (three tries in all)."""
    import bot.adapters.telegram.transport as transport

    monkeypatch.setattr(transport, "FIRST_BACKOFF_S", 0.05)
    monkeypatch.setattr(transport, "MAX_BACKOFF_S", 0.2)
    telegram_api.fail_next("sendMessage", status=429, retry_after=0, times=6)
    telegram_api.push_update(telegram_api.make_message("/help"))
    await wait_sent(telegram_api, 777, 1)
    telegram_api.fail_next("sendMessage", status=502, times=6)
    telegram_api.push_update(telegram_api.make_message(FIT))
    await wait_sent(telegram_api, 777, 2)
    statuses = [e.status for e in telegram_api.exchanges if e.method == "sendMessage"]
    assert statuses == [429] * 6 + [200] + [502] * 6 + [200]


async def test_a_second_poller_on_the_token_is_one_clear_error_not_a_traceback_per_poll(
    bot: Application, telegram_api: FakeTelegramAPI, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    import bot.adapters.telegram.poller as poller

    monkeypatch.setattr(poller, "BACKOFF_S", (0.05,))
    with caplog.at_level(logging.INFO):
        telegram_api.fail_next(
            "getUpdates", status=409, times=5, description="Conflict: terminated by other getUpdates"
        )
        telegram_api.push_update(telegram_api.make_message("/help"))
        await wait_sent(telegram_api, 777, 1)  # polling goes on once the other one is gone
    problems = [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert len(problems) == 1 and "another process is polling" in problems[0].getMessage()
    assert not problems[0].exc_info


async def test_errors_are_logged_and_answered_with_an_apology(
    bot: Application, telegram_api: FakeTelegramAPI, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.ERROR, logger="bot.adapters.telegram.bot"):
        telegram_api.push_update(telegram_api.make_message("boom", language_code="de"))
        (apology,) = await wait_sent(telegram_api, 777, 1)
    assert apology["text"] == say("de", "apology")
    (record,) = [r for r in caplog.records if r.name == "bot.adapters.telegram.bot"]
    assert record.exc_info and "boom" in str(record.exc_info[1])
    telegram_api.push_update(telegram_api.make_message("/help"))
    await wait_sent(telegram_api, 777, 2)  # still running


async def test_huge_and_malformed_messages_get_a_friendly_answer(
    bot: Application, telegram_api: FakeTelegramAPI, service: StubService
) -> None:
    huge = "is qwen3 32b ok on a 4090? " + "x" * 10_000
    telegram_api.push_update(telegram_api.make_message(huge))
    (answer,) = await wait_sent(telegram_api, 777, 1)
    assert answer["text"] == (await expected(service, huge, "en", 777))[0]
    assert "2000" in answer["text"] or "2,000" in answer["text"]
    weird = "qwen3\x00 32b \u202eon\u200b a 4090\ud800 \x1b[31m?"
    sticker = {
        "file_id": "S1",
        "file_unique_id": "U1",
        "width": 512,
        "height": 512,
        "is_animated": False,
        "is_video": False,
        "type": "regular",
    }
    message = telegram_api.make_message("x")["message"]
    del message["text"]
    telegram_api.push_update({"message": {**message, "sticker": sticker}})  # no text: ignored
    telegram_api.push_update(telegram_api.make_message(weird))
    telegram_api.push_update({"poll": {"id": "1"}})  # an update type the bot did not ask for
    telegram_api.push_update(telegram_api.make_message("/help"))
    got = await wait_sent(telegram_api, 777, 3)
    assert (await expected(service, weird, "en", 777))[0] in [m["text"] for m in got[1:]]  # answers may cross
    assert not any(e.status >= 400 for e in telegram_api.exchanges)


@pytest.mark.parametrize(
    "question",
    [
        "/fit <b>qwen</b> 4090",
        "can I run qwen3 & <i>friends</i> on a 4090?",
        '/fit <a href="https://evil.example">qwen3</a> 32b 4090',
        "/quant &lt;script&gt; &amp; 4090",
    ],
)
async def test_html_in_questions_is_shown_literally(
    bot: Application, telegram_api: FakeTelegramAPI, question: str
) -> None:
    telegram_api.push_update(telegram_api.make_message(question))
    (card,) = await wait_sent(telegram_api, 777, 1)
    entities = card.get("entities", [])
    assert not any(e["type"] == "text_link" for e in entities)
    literal = question.split(maxsplit=1)[1] if question.startswith("/") else question
    assert literal[:40] in card["text"]  # the echo shows the user's words as typed
    no_refusals(telegram_api)


# --------------------------------------------------------------------------- production entry points


async def test_webhook_mode_checks_the_secret_token(telegram_api: FakeTelegramAPI, service: StubService) -> None:
    port, stop = free_port(), asyncio.Event()
    task = asyncio.create_task(
        run_telegram(
            service,
            token=TOKEN,
            base_url=telegram_api.base_url,
            webhook_url="https://bot.example.invalid/tg-hook",
            webhook_secret="s3cret-token",
            port=port,
            stop=stop,
        )
    )
    hook = await telegram_api.wait_call("setWebhook")
    assert hook.params["url"] == "https://bot.example.invalid/tg-hook"
    assert hook.params["secret_token"] == "s3cret-token"
    update = telegram_api.make_message("/help", chat_id=55, language_code="de")
    url = f"http://127.0.0.1:{port}/tg-hook"
    assert await post_when_listening(url, update, "wrong") == 403
    assert await post_when_listening(url, update, "s3cret-token") == 200
    (card,) = await wait_sent(telegram_api, 55, 1)
    assert card["text"] == (await expected(service, "/help", "de", 55))[0]
    assert not telegram_api.calls_of("getUpdates")
    stop.set()
    await asyncio.wait_for(task, 10)


async def test_run_telegram_polls_until_stopped(telegram_api: FakeTelegramAPI, service: StubService) -> None:
    stop = asyncio.Event()
    task = asyncio.create_task(run_telegram(service, token=TOKEN, base_url=telegram_api.base_url, stop=stop))
    telegram_api.push_update(telegram_api.make_message("/help", chat_id=56))
    await wait_sent(telegram_api, 56, 1)
    assert telegram_api.commands  # post_init ran
    stop.set()
    await asyncio.wait_for(task, 15)
    assert telegram_api.calls_of("getUpdates")[0].params["allowed_updates"] == [
        "message",
        "callback_query",
        "inline_query",
    ]


async def test_the_default_httpx_request_works_too(telegram_api: FakeTelegramAPI, service: StubService) -> None:
    async with running(
        telegram_api, service, request=HTTPXRequest(connection_pool_size=8), rate_limiter=False, charts=False
    ):
        telegram_api.push_update(telegram_api.make_message(FIT))
        (card,) = await wait_sent(telegram_api, 777, 1)
    assert card["text"] == (await expected(service, FIT, "en", 777))[0]
