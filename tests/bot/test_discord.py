"""The Discord adapter end to end: real discord.py, built by ``build_bot``, against the loopback fake.

A real ``Service`` answers on the real catalog (loaded once per module). Every assertion is on the
JSON discord.py actually sent to the fake, which validates it against Discord's limits.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import json
import re
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from bot.adapters.discord import bot as discord_bot
from bot.adapters.discord.bot import CardButton, build_bot
from bot.commands import question
from bot.render.discord_embed import to_discord
from bot.reply import Action, Reply
from bot.service import Service, User
from catalog.store import CatalogStore
from fitbot_fakes import fixtures
from fitbot_fakes.discord_api import APP_ID, CHANNEL_ID, GUILD_ID, TOKEN, FakeDiscord, import_discord

discord = import_discord()

discord_api = fixtures.discord_api


GREEN, RED = 0x2ECC71, 0xE74C3C


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> Service:
    catalog = asyncio.run(CatalogStore(tmp_path_factory.mktemp("catalog") / "catalog.sqlite").load())
    return Service(catalog)


@contextlib.asynccontextmanager
async def running(service: Service, state: Path | None = None, charts: bool = False) -> AsyncIterator[Any]:
    """The production bot, started against the fake and ready; charts off unless a test is about them."""
    bot = build_bot(service, guild_ready_timeout=0.05, sync_state_path=state, charts=charts)
    ready, resumed = asyncio.Event(), asyncio.Event()

    async def on_ready() -> None:
        ready.set()

    async def on_resumed() -> None:
        resumed.set()

    bot.add_listener(on_ready)
    bot.add_listener(on_resumed)
    bot.resumed_event = resumed
    task = asyncio.create_task(bot.start(TOKEN))
    try:
        await asyncio.wait_for(ready.wait(), 5)
        yield bot
    finally:
        await bot.close()
        with contextlib.suppress(asyncio.CancelledError):
            await asyncio.wait_for(task, 5)


@pytest.fixture
async def bot(discord_api: FakeDiscord, service: Service, tmp_path: Path) -> AsyncIterator[Any]:
    async with running(service, tmp_path / "commands.sha256") as b:
        yield b


async def interact(fake: FakeDiscord, payload: dict[str, Any]) -> Any:
    """Dispatches an interaction and returns its (first) callback request."""
    await fake.dispatch("INTERACTION_CREATE", payload)
    return await fake.wait_request("POST", f"/interactions/{payload['id']}/")


def embed(request: Any) -> dict[str, Any]:
    return request.json["data"]["embeds"][0]


def custom_ids(body: dict[str, Any]) -> list[str]:
    return [c["custom_id"] for row in body.get("components", []) for c in row["components"]]


# --------------------------------------------------------------------------------------------- start-up


async def test_login_sync_and_ready(discord_api: FakeDiscord, bot: Any) -> None:
    paths = [(r.method, r.path) for r in discord_api.requests][:3]
    assert paths == [
        ("GET", "/users/@me"),
        ("GET", "/oauth2/applications/@me"),
        ("PUT", f"/applications/{APP_ID}/commands"),
    ]
    synced = {c["name"]: c for c in discord_api.requests[2].json}
    assert set(synced) == {
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
    }
    fit = {o["name"]: o for o in synced["fit"]["options"]}
    assert list(fit) == ["model", "gpu", "context", "quant", "kv", "ram", "engine"]
    assert fit["model"]["autocomplete"] and fit["gpu"]["autocomplete"] and fit["model"]["required"]
    assert (fit["context"]["type"], fit["context"]["min_value"], fit["context"]["max_value"]) == (4, 512, 2_097_152)
    assert (fit["ram"]["min_value"], fit["ram"]["max_value"]) == (1, 4096)
    assert "Q4_K_M" in [c["value"] for c in fit["quant"]["choices"]] and len(fit["quant"]["choices"]) <= 25
    assert [c["value"] for c in fit["engine"]["choices"]] == ["llama.cpp", "vllm"]
    assert "q8_0" in [c["value"] for c in fit["kv"]["choices"]]
    identify = (await discord_api.wait_gateway(2))["d"]
    intents = discord.Intents._from_value(identify["intents"])
    assert intents.guilds and intents.guild_messages and intents.dm_messages and not intents.message_content
    mentions = bot.allowed_mentions
    assert not (mentions.everyone or mentions.users or mentions.roles or mentions.replied_user)


async def test_german_command_localizations(discord_api: FakeDiscord, bot: Any) -> None:
    synced = {c["name"]: c for c in discord_api.commands[None]}
    fit = synced["fit"]
    assert fit["name_localizations"] == {"de": "passt"}
    assert fit["description_localizations"]["de"].startswith("Läuft dieses Modell")
    model = fit["options"][0]
    assert model["name_localizations"] == {"de": "modell"}
    assert "Hugging-Face" in model["description_localizations"]["de"]
    assert all("de" in c["description_localizations"] for c in synced.values())


async def test_sync_only_when_commands_change(discord_api: FakeDiscord, service: Service, tmp_path: Path) -> None:
    state = tmp_path / "commands.sha256"

    def puts() -> int:
        return len(discord_api.requests_to("PUT", "/commands"))

    async with running(service, state) as first:
        assert first.synced and puts() == 1
    digest = state.read_text().strip()
    async with running(service, state) as second:
        assert not second.synced and puts() == 1  # unchanged: no PUT
        assert await second.command_hash() == digest
    state.write_text("an older command set\n")
    async with running(service, state) as third:
        assert third.synced and puts() == 2
    assert state.read_text().strip() == digest


# --------------------------------------------------------------------------------------------- commands

COMMANDS = [
    (
        "fit",
        {
            "model": "qwen3-32b",
            "gpu": "rtx-4090",
            "context": 32768,
            "quant": "Q4_K_M",
            "kv": "q8_0",
            "ram": 64,
            "engine": "llama.cpp",
        },
        "/fit qwen3-32b rtx-4090 32768 Q4_K_M kv q8_0 ram 64gb llama.cpp",
        "Qwen3-32B on RTX 4090",
    ),
    (
        "speed",
        {"model": "qwen3-32b", "gpu": "rtx-4090", "context": 8192, "quant": "Q8_0", "engine": "llama.cpp"},
        "/speed qwen3-32b rtx-4090 8192 Q8_0 llama.cpp",
        "Qwen3-32B on RTX 4090",
    ),
    ("cloud", {"model": "qwen3-32b", "context": 32768, "quant": "Q4_K_M"}, "/cloud qwen3-32b 32768 Q4_K_M", ""),
    (
        "quant",
        {"model": "qwen3-32b", "gpu": "rtx-4090", "context": 16384, "kv": "f16", "engine": "llama.cpp"},
        "/quant qwen3-32b rtx-4090 16384 kv f16 llama.cpp",
        "Quants of Qwen3-32B on RTX 4090",
    ),
    ("gpus", {"model": "qwen3-32b", "quant": "Q4_K_M"}, "/gpus qwen3-32b Q4_K_M", "Qwen3-32B on"),
    (
        "models",
        {"gpu": "rtx-4090", "context": 8192, "quant": "Q4_K_M"},
        "/models rtx-4090 8192 Q4_K_M",
        "Models that fit RTX 4090",
    ),
    (
        "finetune",
        {"model": "qwen3-32b", "gpu": "rtx-4090", "method": "qlora"},
        "/finetune qwen3-32b rtx-4090 qlora",
        "",
    ),
    ("tco", {"model": "qwen3-32b", "gpu": "rtx-4090"}, "/tco qwen3-32b rtx-4090", ""),
    (
        "compare",
        {"model": "qwen3-32b", "gpu": "rtx-4090", "gpu2": "rtx-3090"},
        "/compare rtx-4090 vs rtx-3090 qwen3-32b",
        "",
    ),
    ("mygpu", {"gpu": "2x rtx-3090", "ram": 64}, "/mygpu 2x rtx-3090 ram 64gb", ""),
    ("lang", {"language": "de"}, "/lang de", ""),
    ("help", None, "/help", "FitBot"),
]


@pytest.mark.parametrize(("name", "options", "asked", "title"), COMMANDS, ids=[c[0] for c in COMMANDS])
async def test_each_slash_command(
    discord_api: FakeDiscord,
    bot: Any,
    service: Service,
    name: str,
    options: dict[str, Any] | None,
    asked: str,
    title: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(discord_bot, "DEFER_AFTER_S", 60.0)  # a loaded machine must not turn it into a deferral
    payload = discord_api.make_slash(name, options)
    request = await interact(discord_api, payload)
    assert request.status == 200 and request.json["type"] == 4
    expected = await service.answer(
        asked, "en-US", User(id=f"dc:{payload['member']['user']['id']}", chat=f"dc:{GUILD_ID}")
    )
    body = request.json["data"]
    assert embed(request)["title"] == to_discord(expected).embeds[0]["title"]
    assert title in embed(request)["title"].replace("\\", "")
    assert embed(request)["color"] == expected.colour
    assert body["allowed_mentions"] == {"parse": []}
    assert len(custom_ids(body)) == len({a.query for a in expected.actions})
    assert all(cid.startswith("fitbot:") for cid in custom_ids(body))


async def test_fit_colour_and_buttons_follow_the_verdict(discord_api: FakeDiscord, bot: Any) -> None:
    good = await interact(discord_api, discord_api.make_slash("fit", {"model": "qwen3-32b", "gpu": "rtx-4090"}))
    bad = await interact(
        discord_api, discord_api.make_slash("fit", {"model": "glm-4.5", "gpu": "rtx-3060-12gb", "ram": 16})
    )
    assert embed(good)["color"] == GREEN and embed(good)["title"].startswith("🟢")
    assert embed(bad)["color"] == RED and embed(bad)["title"].startswith("🔴")
    values = " ".join(f["value"] for f in embed(good)["fields"])
    assert "Weights" in values and "Decode at 8K" in values  # the phone page: one untitled list of rows
    assert "fitbot:q:/quant qwen3-32b rtx-4090 ctx 8k |en" in custom_ids(good.json["data"])


# --------------------------------------------------------------------------------------------- autocomplete


async def test_autocomplete_models_ranked(discord_api: FakeDiscord, bot: Any) -> None:
    request = await interact(
        discord_api, discord_api.make_autocomplete("fit", {"model": "qwen3 32", "gpu": ""}, focused="model")
    )
    choices = request.json["data"]["choices"]
    assert request.json["type"] == 8 and 0 < len(choices) <= 25
    assert choices[0]["value"] == "qwen3-32b"
    assert all(len(c["name"]) <= 100 for c in choices)


async def test_autocomplete_gpus_with_counts(discord_api: FakeDiscord, bot: Any) -> None:
    request = await interact(
        discord_api, discord_api.make_autocomplete("fit", {"model": "x", "gpu": "4090"}, focused="gpu")
    )
    values = [c["value"] for c in request.json["data"]["choices"]]
    assert 0 < len(values) <= 25 and values[0].startswith("rtx-4090")
    assert "2x rtx-4090" in values and "4x rtx-4090" in values
    counted = await interact(
        discord_api, discord_api.make_autocomplete("fit", {"model": "x", "gpu": "2x 309"}, focused="gpu")
    )
    names = [c["name"] for c in counted.json["data"]["choices"]]
    assert names and all(n.startswith("2x ") for n in names) and "3090" in names[0]
    empty = await interact(discord_api, discord_api.make_autocomplete("fit", {"model": "", "gpu": ""}, focused="model"))
    assert len(empty.json["data"]["choices"]) == 25


async def test_autocomplete_is_fast(bot: Any) -> None:
    loop = asyncio.get_running_loop()
    start = loop.time()
    for typed in ("qwen", "glm 4.5 air", "llama 3.1 70", "deepseek", "gpt oss"):
        assert len(bot.suggester.models_for(typed)) <= 25
        assert len(bot.suggester.gpus_for(typed)) <= 25
    assert loop.time() - start < 0.25  # ten rankings; Discord allows 3 s for one


# --------------------------------------------------------------------------------------------- buttons


async def test_button_press_edits_the_same_message(discord_api: FakeDiscord, bot: Any) -> None:
    first = await interact(discord_api, discord_api.make_slash("fit", {"model": "qwen3-32b", "gpu": "rtx-4090"}))
    message = discord_api.messages[first.response["resource"]["message"]["id"]]
    press = discord_api.make_component("fitbot:q:/quant qwen3-32b rtx-4090 ctx 8k |en", message=message, locale="de")
    update = await interact(discord_api, press)
    assert update.json["type"] == 7
    assert embed(update)["title"].startswith("ℹ️ Quants of Qwen3-32B")  # the card's language, not the presser's
    assert discord_api.messages[message["id"]]["embeds"][0]["title"] == embed(update)["title"]
    assert len(discord_api.requests_to("POST", "/messages")) == 0  # edited, not re-sent


async def test_long_question_button_and_restart_expiry(
    discord_api: FakeDiscord, service: Service, tmp_path: Path
) -> None:
    long_query = "/fit qwen3-32b rtx-4090 " + "kv q8_0 " * 12
    reply = Reply(kind="fit", locale="en", title="t", actions=(Action(label="Long one", query=long_query),))
    async with running(service, tmp_path / "s") as first:
        view = first.view_for(reply, ((("Long one", 0),)))
        [button] = view.children
        assert isinstance(button, CardButton) and button.custom_id.startswith("fitbot:k:")
        assert len(button.custom_id) <= 100
        card = discord_api._message_payload(str(CHANNEL_ID), {"content": "card", "components": view.to_components()})
        discord_api.messages[card["id"]] = card
        old_card = copy.deepcopy(card)  # the same card as another message still shows it
        ok = await interact(discord_api, discord_api.make_component(button.custom_id, message=card))
        assert ok.json["type"] == 7 and "Qwen3-32B" in embed(ok)["title"]
    async with running(service, tmp_path / "s"):
        old = await interact(discord_api, discord_api.make_component(button.custom_id, message=old_card, locale="de"))
    assert old.json["type"] == 4 and old.json["data"]["flags"] == 64
    assert old.json["data"]["content"] == "Diese Karte ist abgelaufen; bitte frag noch einmal."


async def test_feel_the_speed_streams_edits(discord_api: FakeDiscord, bot: Any) -> None:
    bot.feel_seconds, bot.feel_every_s = 0.3, 0.1
    custom_id = "fitbot:q:/feel /fit qwen3-32b rtx-4090"
    components = [{"type": 1, "components": [{"type": 2, "style": 2, "label": "Feel", "custom_id": custom_id}]}]
    card = discord_api._message_payload(
        str(CHANNEL_ID), {"content": "", "embeds": [{"title": "card"}], "components": components}
    )
    discord_api.messages[card["id"]] = card
    press = discord_api.make_component(custom_id, message=card)
    ack = await interact(discord_api, press)
    assert ack.json == {"type": 6}
    edits = await discord_api.wait_request("PATCH", f"/webhooks/{APP_ID}/{press['token']}/messages/@original", count=4)
    assert all(e.status == 200 for e in edits)
    contents = [e.json["content"] for e in edits]
    assert re.match(r"⚡ Feel the speed: \d+ tokens/s\n```\n", contents[0])  # Service.decode_speed
    assert len(contents[-1]) > len(contents[0]) and "tokens in" in contents[-1]
    assert discord_api.messages[card["id"]]["embeds"][0]["title"] == "card"  # the card stays


async def test_feel_the_speed_without_an_estimate_says_so(discord_api: FakeDiscord, bot: Any) -> None:
    custom_id = "fitbot:q:/feel /fit kimi-k2-instruct rtx-4060"  # does not fit: no speed to show
    components = [{"type": 1, "components": [{"type": 2, "style": 2, "label": "Feel", "custom_id": custom_id}]}]
    card = discord_api._message_payload(
        str(CHANNEL_ID), {"content": "", "embeds": [{"title": "card"}], "components": components}
    )
    discord_api.messages[card["id"]] = card
    press = discord_api.make_component(custom_id, message=card)
    await interact(discord_api, press)
    note = await discord_api.wait_request("POST", f"/webhooks/{APP_ID}/{press['token']}")
    assert "no speed estimate" in note.json["content"] and note.json["flags"] == 64
    assert discord_api.requests_to("PATCH", "/messages/@original") == []


# --------------------------------------------------------------------------------------------- mentions, safety


async def test_mention_is_answered_as_a_reply_without_pings(discord_api: FakeDiscord, bot: Any) -> None:
    mention = discord_api.make_mention("can I run qwen3 32b on a 4090?")
    await discord_api.dispatch("MESSAGE_CREATE", mention)
    sent = await discord_api.wait_request("POST", f"/channels/{CHANNEL_ID}/messages")
    assert sent.status == 200
    assert str(sent.json["message_reference"]["message_id"]) == mention["id"]
    assert sent.json["allowed_mentions"] == {"parse": [], "replied_user": False}
    assert "Qwen3-32B on RTX 4090" in sent.json["embeds"][0]["title"]
    german = discord_api.make_mention("passt Qwen3 32B auf zwei 3090?")
    await discord_api.dispatch("MESSAGE_CREATE", german)
    reply = (await discord_api.wait_request("POST", f"/channels/{CHANNEL_ID}/messages", count=2))[1]
    assert "auf 2x RTX 3090" in reply.json["embeds"][0]["title"]


async def test_messages_without_a_mention_are_ignored(discord_api: FakeDiscord, bot: Any) -> None:
    plain = discord_api.make_mention("hello")
    plain.update(content="just chatting about qwen3 32b", mentions=[])
    await discord_api.dispatch("MESSAGE_CREATE", plain)
    await discord_api.dispatch("INTERACTION_CREATE", discord_api.make_slash("help"))
    await discord_api.wait_request("POST", "/callback")
    assert discord_api.requests_to("POST", "/messages") == []


async def test_no_ping_guarantee(discord_api: FakeDiscord, bot: Any) -> None:
    hostile = "@everyone <@123> <@&456>"
    request = await interact(discord_api, discord_api.make_slash("fit", {"model": hostile, "gpu": "rtx-4090"}))
    body = request.json["data"]
    assert body["allowed_mentions"] == {"parse": []}
    raw = json.dumps(body, ensure_ascii=False)
    assert "@\u200beveryone" in raw and "<@\u200b123" in raw and "<@\u200b&456" in raw
    assert "@everyone" not in raw and "<@123>" not in raw and "<@&456>" not in raw
    await discord_api.dispatch("MESSAGE_CREATE", discord_api.make_mention(f"{hostile} qwen3 on a 4090"))
    sent = await discord_api.wait_request("POST", "/messages")
    assert sent.json["allowed_mentions"] == {"parse": [], "replied_user": False}
    assert "@everyone" not in json.dumps(sent.json, ensure_ascii=False)


async def test_german_locale_reply(discord_api: FakeDiscord, bot: Any) -> None:
    request = await interact(
        discord_api, discord_api.make_slash("fit", {"model": "qwen3-32b", "gpu": "rtx-4090"}, locale="de")
    )
    assert embed(request)["title"] == "🟢 Qwen3-32B auf RTX 4090"
    assert "Passt" in embed(request)["description"]
    assert "Gewichte" in " ".join(f["value"] for f in embed(request)["fields"])


# --------------------------------------------------------------------------------------------- slow paths


async def test_chart_card_defers_then_follows_up(discord_api: FakeDiscord, service: Service, tmp_path: Path) -> None:
    async with running(service, tmp_path / "s", charts=True):
        payload = discord_api.make_slash("fit", {"model": "qwen3-32b", "gpu": "rtx-4090"})
        ack = await interact(discord_api, payload)
        followup = await discord_api.wait_request("POST", f"/webhooks/{APP_ID}/{payload['token']}", timeout=10)
        again = await interact(discord_api, discord_api.make_slash("fit", {"model": "qwen3-32b", "gpu": "rtx-4090"}))
        press = discord_api.make_component(
            "fitbot:q:/fit qwen3-32b rtx-4090 ctx 32k |en", message=discord_api.messages[followup.response["id"]]
        )
        update = await interact(discord_api, press)
    assert again.json["type"] == 4 and again.files[0]["filename"] == "chart.png"  # cached PNG: no defer
    # the same model and GPU draw the same memory chart: cached, so the press edits at once (type 7)
    assert update.json["type"] == 7 and update.files[0]["filename"] == "chart.png"
    assert update.json["data"]["attachments"] == [{"id": 0, "filename": "chart.png"}]
    assert ack.json["type"] == 5
    assert followup.status == 200
    assert followup.json["embeds"][0]["image"] == {"url": "attachment://chart.png"}
    assert [(f["filename"], f["data"][:8]) for f in followup.files] == [("chart.png", b"\x89PNG\r\n\x1a\n")]
    assert followup.json["allowed_mentions"] == {"parse": []}


async def test_resume_mid_conversation(discord_api: FakeDiscord, bot: Any) -> None:
    await interact(discord_api, discord_api.make_slash("help"))
    await discord_api.drop_connection()
    await asyncio.wait_for(bot.resumed_event.wait(), 5)
    request = await interact(discord_api, discord_api.make_slash("fit", {"model": "qwen3-32b", "gpu": "rtx-4090"}))
    assert request.status == 200 and "Qwen3-32B" in embed(request)["title"]
    assert len([f for f in discord_api.gateway_frames if f["op"] == 2]) == 1  # resumed, not re-identified
    assert (await discord_api.wait_gateway(6))["d"]["session_id"]


async def test_rest_429_is_retried(discord_api: FakeDiscord, bot: Any) -> None:
    discord_api.fail_next("POST /interactions", status=429, retry_after=0.2)
    payload = discord_api.make_slash("fit", {"model": "qwen3-32b", "gpu": "rtx-4090"})
    await discord_api.dispatch("INTERACTION_CREATE", payload)
    attempts = await discord_api.wait_request("POST", f"/interactions/{payload['id']}/", count=2)
    assert [a.status for a in attempts] == [429, 200]
    discord_api.fail_next("POST /channels", status=429, retry_after=0.2)
    await discord_api.dispatch("MESSAGE_CREATE", discord_api.make_mention("qwen3 32b on a 4090?"))
    sent = await discord_api.wait_request("POST", "/messages", count=2)
    assert [s.status for s in sent] == [429, 200]


async def test_errors_become_an_ephemeral_apology(discord_api: FakeDiscord, bot: Any) -> None:
    payload = discord_api.make_slash("fit", {"model": "qwen3-32b", "gpu": "rtx-4090"}, locale="de")
    discord_api.fail_next("POST /interactions", status=400, times=1)
    await discord_api.dispatch("INTERACTION_CREATE", payload)
    calls = await discord_api.wait_request("POST", f"/interactions/{payload['id']}/", count=2)
    assert calls[0].status == 400
    assert calls[1].json["data"]["flags"] == 64 and calls[1].json["data"]["content"].startswith("Entschuldigung")


def test_question_drops_missing_options() -> None:
    assert question("fit", "qwen3-32b", "rtx 4090", None, "", "kv q8_0") == "/fit qwen3-32b rtx 4090 kv q8_0"


async def test_a_server_that_switched_mentions_off_gets_commands_only(
    discord_api: FakeDiscord, service: Service, tmp_path: Path
) -> None:
    from storage.userdata import UserDataStore

    async with UserDataStore(tmp_path / "user.sqlite") as store:
        with_store = Service(service.catalog, store=store)
        async with running(with_store):
            switched = await interact(discord_api, discord_api.make_slash("settings", {"mentions": "off"}))
            assert "ignored" in switched.json["data"]["embeds"][0]["description"]
            await discord_api.dispatch("MESSAGE_CREATE", discord_api.make_mention("can I run qwen3 32b on a 4090?"))
            await interact(discord_api, discord_api.make_slash("help"))
            assert discord_api.requests_to("POST", "/messages") == []  # the mention went unanswered
            await interact(discord_api, discord_api.make_slash("settings", {"mentions": "on"}))
            await discord_api.dispatch("MESSAGE_CREATE", discord_api.make_mention("can I run qwen3 32b on a 4090?"))
            sent = await discord_api.wait_request("POST", f"/channels/{CHANNEL_ID}/messages")
            assert "Qwen3-32B" in sent.json["embeds"][0]["title"]
