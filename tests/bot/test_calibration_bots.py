"""Calibrate to my rig, end to end in each adapter (issue 38): the real python-telegram-bot against the fake
Bot API, the real discord.py against the fake gateway, and ``fitbot chat``'s console session.

A user pastes a llama-bench table for an RTX 4090 that runs 20 % below FitBot's estimate; that user's next
/speed for another model on the 4090 is lower by that factor drawn half way to 1 in log (one model measured:
``core.runs.calibrate.PRIOR_MODELS``, about 11 %) and says it is calibrated, another user's is
unchanged; in a group whose admin turned sharing on, a second member sees the pooled figure.
"""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator

import pytest
from telegram.ext import Application

from bot.adapters.console import CONSOLE_USER
from bot.adapters.console import session as console_session
from bot.service import Service, User
from fitbot_fakes import fixtures
from fitbot_fakes.discord_api import CHANNEL_ID, FakeDiscord
from fitbot_fakes.telegram_api import BOT_USERNAME, FakeTelegramAPI
from storage.userdata import UserDataStore
from tests.bot.test_calibration import APPLIED, CATALOG, estimate, table
from tests.bot.test_discord import running as discord_running
from tests.bot.test_telegram import no_refusals, running, wait_sent

telegram_api = fixtures.telegram_api
discord_api = fixtures.discord_api
GROUP = -100777


@pytest.fixture
async def service(tmp_path) -> AsyncIterator[Service]:
    async with UserDataStore(tmp_path / "user.sqlite") as store:
        yield Service(CATALOG, store=store)


@pytest.fixture
async def bot(telegram_api: FakeTelegramAPI, service: Service) -> AsyncIterator[Application]:
    async with running(telegram_api, service, charts=False) as app:
        yield app


def decode_on_card(text: str) -> float:
    """The first-page decode figure of a /speed card ("… 71.3 tok/s decode, …")."""
    m = re.search(r"([\d,.]+) tok/s decode", text)
    assert m, text
    return float(m.group(1).replace(",", ""))


async def test_a_pasted_run_calibrates_that_user_and_a_sharing_group_sees_the_pool(
    bot: Application, telegram_api: FakeTelegramAPI
) -> None:
    decode, prefill = estimate("llama-3.1-8b-instruct", "rtx-4090")
    paste = "rtx 4090\n" + table(decode * 0.8, prefill * 0.8)
    telegram_api.push_update(telegram_api.make_message(paste, chat_id=51, language_code="en"))
    (read,) = await wait_sent(telegram_api, 51, 1)
    assert "Your benchmark run" in read["text"] and "×0.80" in read["text"]
    for chat_id in (51, 52):
        telegram_api.push_update(telegram_api.make_message("/speed qwen3 14b rtx 4090", chat_id=chat_id))
    mine, theirs = (await wait_sent(telegram_api, 51, 2))[1], (await wait_sent(telegram_api, 52, 1))[0]
    assert decode_on_card(mine["text"]) == pytest.approx(APPLIED * decode_on_card(theirs["text"]), rel=0.03)
    assert "Calibrated to your run of" in mine["text"] and "Calibrated" not in theirs["text"]

    telegram_api.set_admin(GROUP, 1)
    on = telegram_api.make_message("/settings sharing on", chat_id=GROUP, chat_type="supergroup", user_id=1)
    telegram_api.push_update(on)
    assert "pooled" in (await wait_sent(telegram_api, GROUP, 1))[0]["text"]
    shared = telegram_api.make_message(f"@{BOT_USERNAME} {paste}", chat_id=GROUP, chat_type="supergroup", user_id=7)
    telegram_api.push_update(shared)
    assert "Shared with this chat" in (await wait_sent(telegram_api, GROUP, 2))[1]["text"]
    ask = telegram_api.make_message(
        "/speed llama 3.1 8b rtx 4090", chat_id=GROUP, chat_type="supergroup", user_id=8, language_code="de"
    )
    telegram_api.push_update(ask)
    pooled = (await wait_sent(telegram_api, GROUP, 3))[2]["text"]
    assert "In diesem Chat gemessen (Mitglieder, die geteilt haben: 1)" in pooled and "Kalibriert" not in pooled
    no_refusals(telegram_api)


async def test_discord_mentions_carry_a_paste_and_the_calibration_stays_with_its_author(
    discord_api: FakeDiscord, service: Service
) -> None:
    decode, prefill = estimate("llama-3.1-8b-instruct", "rtx-4090")
    paste = "rtx 4090\n" + table(decode * 0.8, prefill * 0.8)
    async with discord_running(service):
        await discord_api.dispatch("MESSAGE_CREATE", discord_api.make_mention(paste, user_id=501))
        read = await discord_api.wait_request("POST", f"/channels/{CHANNEL_ID}/messages")
        assert "×0.80" in json.dumps(read.json["embeds"][0], ensure_ascii=False)
        for user_id in (501, 502):
            await discord_api.dispatch(
                "MESSAGE_CREATE", discord_api.make_mention("speed qwen3 14b rtx 4090", user_id=user_id)
            )
        sent = await discord_api.wait_request("POST", f"/channels/{CHANNEL_ID}/messages", count=3)
    mine, theirs = (json.dumps(r.json["embeds"][0], ensure_ascii=False) for r in sent[1:])
    assert "Calibrated to your run of" in mine and "Calibrated" not in theirs
    assert decode_on_card(mine) == pytest.approx(APPLIED * decode_on_card(theirs), rel=0.03)


async def test_fitbot_chat_reads_a_multi_line_paste_and_keeps_it_for_the_session(
    service: Service, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    decode, prefill = estimate("llama-3.1-8b-instruct", "rtx-4090")
    lines = iter(
        ["/mygpu rtx 4090", *table(decode * 0.8, prefill * 0.8).splitlines(), "/speed qwen3 14b rtx 4090", "/quit"]
    )
    monkeypatch.setattr("builtins.input", lambda prompt="": next(lines))
    await console_session(service, User(id=CONSOLE_USER))
    out = capsys.readouterr().out
    assert out.count("Your benchmark run") == 1 and "Calibrated to your run of" in out
    assert "I need a bit more" not in out  # the build line after the table's blank line is no question
