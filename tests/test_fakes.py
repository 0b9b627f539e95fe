"""The real python-telegram-bot and discord.py talk to the fakes, and the fakes are strict.

Handlers here are throwaway stand-ins, not product code: they prove the seams work so the
adapter tests can rely on them.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dtm
import io
from collections.abc import AsyncIterator

import aiohttp
import pytest
import yarl
from telegram import (
    Bot,
    InlineKeyboardButton,
    InlineKeyboardMarkup,
    InlineQueryResultArticle,
    InputTextMessageContent,
    Update,
)
from telegram.constants import ParseMode
from telegram.error import BadRequest
from telegram.ext import (
    AIORateLimiter,
    Application,
    ApplicationBuilder,
    CallbackQueryHandler,
    CommandHandler,
    ContextTypes,
    InlineQueryHandler,
)

from fitbot_fakes import fixtures
from fitbot_fakes.discord_api import (
    APP_ID,
    CHANNEL_ID,
    GUILD_ID,
    FakeDiscord,
    import_discord,
)
from fitbot_fakes.discord_api import (
    TOKEN as DISCORD_TOKEN,
)
from fitbot_fakes.telegram_api import BOT_USERNAME, FakeTelegramAPI, parse_html

# The shared fixtures, until tests/conftest.py imports them for every test module.
telegram_api = fixtures.telegram_api
discord_api = fixtures.discord_api

discord = import_discord()
app_commands = discord.app_commands
TG_TOKEN = "123456:TEST-token"

# --------------------------------------------------------------------------- Telegram


async def _start(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """Replies with a bold greeting and one button."""
    keyboard = InlineKeyboardMarkup([[InlineKeyboardButton("More", callback_data="more|1")]])
    await update.effective_message.reply_text(
        "Hello <b>there</b> &amp; welcome", parse_mode=ParseMode.HTML, reply_markup=keyboard
    )


async def _button(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """Answers the callback query first, then edits the message."""
    query = update.callback_query
    await query.answer("ok")
    await query.edit_message_text(f"<i>{query.data}</i>", parse_mode=ParseMode.HTML)


async def _inline(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """Answers an inline query with one article."""
    text = update.inline_query.query
    result = InlineQueryResultArticle(
        id="1", title=text, input_message_content=InputTextMessageContent(f"<b>{text}</b>", parse_mode="HTML")
    )
    await update.inline_query.answer([result], cache_time=10, is_personal=True)


@contextlib.asynccontextmanager
async def _polling(api: FakeTelegramAPI, rate_limiter: AIORateLimiter | None = None) -> AsyncIterator[Application]:
    builder = ApplicationBuilder().token(TG_TOKEN).base_url(api.base_url).base_file_url(api.base_file_url)
    if rate_limiter is not None:
        builder = builder.rate_limiter(rate_limiter)
    app = builder.build()
    app.add_handlers([CommandHandler("start", _start), CallbackQueryHandler(_button), InlineQueryHandler(_inline)])
    await app.initialize()
    await app.updater.start_polling(poll_interval=0, timeout=dtm.timedelta(seconds=1))
    await app.start()
    try:
        yield app
    finally:
        await app.updater.stop()
        await app.stop()
        await app.shutdown()


async def test_telegram_command_callback_and_edit(telegram_api: FakeTelegramAPI) -> None:
    async with _polling(telegram_api):
        telegram_api.push_update(telegram_api.make_message(f"/start@{BOT_USERNAME}", chat_id=-100, chat_type="group"))
        sent = await telegram_api.wait_call("sendMessage")
        assert sent.params["chat_id"] == -100
        assert sent.params["text"] == "Hello <b>there</b> &amp; welcome"
        assert sent.params["reply_markup"]["inline_keyboard"][0][0]["callback_data"] == "more|1"
        message = telegram_api.exchanges[telegram_api.calls.index(sent)].response
        assert message["text"] == "Hello there & welcome"
        assert message["entities"] == [{"type": "bold", "offset": 6, "length": 5}]

        telegram_api.push_update(telegram_api.make_callback("more|1", message["message_id"], chat_id=-100))
        edit = await telegram_api.wait_call("editMessageText")
        answer = telegram_api.calls_of("answerCallbackQuery")[0]
        assert telegram_api.calls.index(answer) < telegram_api.calls.index(edit)
        assert edit.params["message_id"] == message["message_id"]
        assert telegram_api.messages[-100][message["message_id"]]["text"] == "more|1"
        assert "reply_markup" not in telegram_api.messages[-100][message["message_id"]]
    names = [c.method for c in telegram_api.calls]
    assert names[:3] == ["getMe", "deleteWebhook", "getUpdates"]


async def test_telegram_inline_query(telegram_api: FakeTelegramAPI) -> None:
    async with _polling(telegram_api):
        telegram_api.push_update(telegram_api.make_inline_query("glm-4.5-air"))
        call = await telegram_api.wait_call("answerInlineQuery")
    assert call.params["results"][0]["type"] == "article"
    assert call.params["results"][0]["input_message_content"]["parse_mode"] == "HTML"
    assert call.params["cache_time"] == 10 and call.params["is_personal"] is True


async def test_telegram_429_retried_by_rate_limiter(telegram_api: FakeTelegramAPI) -> None:
    telegram_api.fail_next("sendMessage", status=429, retry_after=1)
    async with _polling(telegram_api, AIORateLimiter(max_retries=2)):
        telegram_api.push_update(telegram_api.make_message("/start"))
        await telegram_api.wait_call("sendMessage", count=2)
    first, second = [e for e in telegram_api.exchanges if e.method == "sendMessage"]
    assert (first.status, second.status) == (429, 200)
    assert first.response["parameters"] == {"retry_after": 1}
    assert second.at - first.at >= 1.0


@pytest.mark.parametrize(
    ("kwargs", "error"),
    [
        ({"text": "x" * 4097}, "message text is too long"),
        ({"text": "<b>" + "x" * 4097 + "</b>", "parse_mode": "HTML"}, "message text is too long"),
        (
            {
                "text": "ok",
                "reply_markup": InlineKeyboardMarkup([[InlineKeyboardButton("b", callback_data="d" * 65)]]),
            },
            "button_data_invalid",
        ),
        ({"text": "<b>unclosed", "parse_mode": "HTML"}, "can't find end tag"),
        ({"text": "<script>x</script>", "parse_mode": "HTML"}, 'unsupported start tag "script"'),
        ({"text": "a < b", "parse_mode": "HTML"}, "unsupported start tag"),
        ({"text": "fish & chips", "parse_mode": "HTML"}, "can't find end of the entity"),
        ({"text": "<b><i>x</b></i>", "parse_mode": "HTML"}, "unmatched end tag"),
        ({"text": "*glm-4.5-air* fits", "parse_mode": "MarkdownV2"}, "character '-' is reserved"),
        ({"text": "   "}, "message text is empty"),
    ],
)
async def test_telegram_fake_rejects_what_telegram_rejects(telegram_api: FakeTelegramAPI, kwargs, error) -> None:
    telegram_api.add_chat(777)
    async with Bot(TG_TOKEN, base_url=telegram_api.base_url, base_file_url=telegram_api.base_file_url) as bot:
        with pytest.raises(BadRequest) as info:
            await bot.send_message(777, **kwargs)
    assert error in str(info.value).lower()


async def test_telegram_fake_accepts_limits_and_edits_strictly(telegram_api: FakeTelegramAPI) -> None:
    telegram_api.add_chat(777)
    async with Bot(TG_TOKEN, base_url=telegram_api.base_url, base_file_url=telegram_api.base_file_url) as bot:
        await bot.send_message(777, "<b>" + "x" * 4096 + "</b>", parse_mode="HTML")
        msg = await bot.send_message(
            777,
            'a &lt;b&gt; &#x27;c&#39; <a href="https://x.org">l</a> <tg-spoiler>s</tg-spoiler>',
            parse_mode="HTML",
        )
        assert msg.text == "a <b> 'c' l s"
        with pytest.raises(BadRequest, match="(?i)message is not modified"):
            await bot.edit_message_text(msg.text, chat_id=777, message_id=msg.message_id, entities=msg.entities)
        with pytest.raises(BadRequest, match="(?i)message to edit not found"):
            await bot.edit_message_text("new", chat_id=777, message_id=9999)
        with pytest.raises(BadRequest, match="(?i)chat not found"):
            await bot.send_message(778, "hi")
        photo = await bot.send_photo(777, photo=b"\x89PNG fake", caption="<b>cap</b>", parse_mode="HTML")
        assert photo.caption == "cap" and photo.photo
        assert telegram_api.files[photo.photo[0].file_id].data == b"\x89PNG fake"
        with pytest.raises(BadRequest, match="(?i)caption is too long"):
            await bot.send_document(777, document=b"doc", filename="a.txt", caption="c" * 1025)
        with pytest.raises(BadRequest, match="(?i)query id is invalid"):
            await bot.answer_callback_query("nope")
        await bot.set_my_commands([("fit", "Check whether a model fits")])
        assert [c.command for c in await bot.get_my_commands()] == ["fit"]
    inline = telegram_api.make_inline_query("x")
    async with Bot(TG_TOKEN, base_url=telegram_api.base_url) as bot:
        results = [InlineQueryResultArticle(str(i), "t", InputTextMessageContent("m")) for i in range(51)]
        with pytest.raises(BadRequest, match="(?i)results_too_much"):
            await bot.answer_inline_query(inline["inline_query"]["id"], results)


def test_html_parser_entities_use_utf16_offsets() -> None:
    text, entities = parse_html('😀 <b>bold</b> <pre><code class="language-py">x</code></pre>')
    assert text == "😀 bold x"
    assert entities == [
        {"type": "bold", "offset": 3, "length": 4},
        {"type": "pre", "language": "py", "offset": 8, "length": 1},
    ]


async def test_telegram_long_poll_conflict_and_release(telegram_api: FakeTelegramAPI) -> None:
    url = f"{telegram_api.base_url}{TG_TOKEN}/getUpdates"
    async with aiohttp.ClientSession() as http:
        parked = asyncio.ensure_future(http.post(url, json={"timeout": 5}))
        await telegram_api.wait_call("getUpdates")
        newer = asyncio.ensure_future(http.post(url, json={"timeout": 5}))
        old = await asyncio.wait_for(parked, 2)
        assert old.status == 409 and "terminated by other getUpdates" in (await old.json())["description"]
        update = telegram_api.push_update(telegram_api.make_message("hi"))
        got = await (await asyncio.wait_for(newer, 2)).json()
        assert [u["update_id"] for u in got["result"]] == [update["update_id"]]
        telegram_api.webhook = {"url": "https://bot.example.invalid/hook"}
        conflict = await http.post(url, json={"timeout": 0})
        assert conflict.status == 409 and "webhook is active" in (await conflict.json())["description"]
        telegram_api.webhook = {}
        again = await (await http.post(url, json={"offset": update["update_id"] + 1, "timeout": 0})).json()
        assert again["result"] == [] and telegram_api.updates == []
        released = asyncio.ensure_future(http.post(url, json={"timeout": 30}))
        await telegram_api.wait_call("getUpdates", count=5)
        started = asyncio.get_running_loop().time()
        await telegram_api.close()
        assert (await asyncio.wait_for(released, 3)).status == 200
        assert asyncio.get_running_loop().time() - started < 2


# --------------------------------------------------------------------------- Discord


class _MoreView(discord.ui.View):
    """A persistent view with one button that updates its message (callback type 7)."""

    def __init__(self) -> None:
        super().__init__(timeout=None)

    @discord.ui.button(label="More", custom_id="more")
    async def more(self, interaction: discord.Interaction, button: discord.ui.Button) -> None:
        await interaction.response.edit_message(content="updated")


class _Probe(discord.Client):
    """A minimal client with a command tree, synced in setup_hook."""

    def __init__(self) -> None:
        super().__init__(
            intents=discord.Intents.default(),
            guild_ready_timeout=0.05,
            allowed_mentions=discord.AllowedMentions.none(),
        )
        self.tree = app_commands.CommandTree(self)
        self.ready = asyncio.Event()
        self.resumed = asyncio.Event()
        self.errors: list[Exception] = []
        self._add_commands()

    async def setup_hook(self) -> None:
        self.add_view(_MoreView())
        await self.tree.sync()

    async def on_ready(self) -> None:
        self.ready.set()

    async def on_resumed(self) -> None:
        self.resumed.set()

    async def on_message(self, message: discord.Message) -> None:
        if self.user in message.mentions:
            await message.reply(f"echo {message.content} @everyone")

    def _add_commands(self) -> None:
        @self.tree.command(name="fit", description="Does the model fit?")
        async def fit(interaction: discord.Interaction, model: str, gpu: str, context: int = 8192) -> None:
            embed = discord.Embed(title=f"{model} on {gpu}", description=f"{context} tokens", color=0x2ECC71)
            embed.add_field(name="verdict", value="fits")
            await interaction.response.send_message(embed=embed)

        @fit.autocomplete("model")
        async def fit_models(interaction: discord.Interaction, current: str) -> list[app_commands.Choice[str]]:
            names = ["glm-4.5-air", "glm-4.6", "qwen3-32b"]
            return [app_commands.Choice(name=n, value=n) for n in names if n.startswith(current)]

        @self.tree.command(name="slow", description="Defers, then follows up")
        async def slow(interaction: discord.Interaction) -> None:
            await interaction.response.defer(thinking=True)
            await interaction.followup.send(embed=discord.Embed(title="done"))

        @self.tree.command(name="big", description="Sends an oversized embed")
        async def big(interaction: discord.Interaction) -> None:
            embed = discord.Embed(title="t" * 300, description="d" * 5000)
            try:
                await interaction.response.send_message(embed=embed)
            except discord.HTTPException as exc:
                self.errors.append(exc)


@pytest.fixture
async def discord_bot(discord_api: FakeDiscord) -> AsyncIterator[_Probe]:
    client = _Probe()
    task = asyncio.create_task(client.start(DISCORD_TOKEN))
    try:
        await asyncio.wait_for(client.ready.wait(), 5)
        yield client
    finally:
        await client.close()
        with contextlib.suppress(asyncio.CancelledError):
            await asyncio.wait_for(task, 5)


async def test_discord_login_sync_and_ready(discord_api: FakeDiscord, discord_bot: _Probe) -> None:
    paths = [(r.method, r.path) for r in discord_api.requests]
    assert paths[:3] == [
        ("GET", "/users/@me"),
        ("GET", "/oauth2/applications/@me"),
        ("PUT", f"/applications/{APP_ID}/commands"),
    ]
    synced = {c["name"]: c for c in discord_api.requests[2].json}
    assert set(synced) == {"fit", "slow", "big"}
    assert [(o["name"], o["type"], o.get("autocomplete", False)) for o in synced["fit"]["options"]] == [
        ("model", 3, True),
        ("gpu", 3, False),
        ("context", 4, False),
    ]
    identify = (await discord_api.wait_gateway(2))["d"]
    assert identify["token"] == DISCORD_TOKEN
    guild = discord_bot.get_guild(GUILD_ID)
    assert guild is not None and guild.get_channel(CHANNEL_ID) is not None and guild.default_role.id == GUILD_ID


async def test_discord_slash_autocomplete_and_followup(discord_api: FakeDiscord, discord_bot: _Probe) -> None:
    await discord_api.dispatch(
        "INTERACTION_CREATE",
        discord_api.make_slash("fit", {"model": "glm-4.5-air", "gpu": "rtx 5090", "context": 32768}, locale="de"),
    )
    body = (await discord_api.wait_request("POST", "/callback")).json
    assert body["type"] == 4
    assert body["data"]["embeds"][0]["title"] == "glm-4.5-air on rtx 5090"
    assert body["data"]["embeds"][0]["description"] == "32768 tokens"
    assert body["data"]["allowed_mentions"] == {"parse": []}

    await discord_api.dispatch(
        "INTERACTION_CREATE",
        discord_api.make_autocomplete("fit", {"model": "glm", "gpu": ""}, focused="model"),
    )
    choices = (await discord_api.wait_request("POST", "/callback", count=2))[1].json
    assert choices == {
        "type": 8,
        "data": {
            "choices": [
                {"name": "glm-4.5-air", "value": "glm-4.5-air"},
                {"name": "glm-4.6", "value": "glm-4.6"},
            ]
        },
    }

    slow = discord_api.make_slash("slow")
    await discord_api.dispatch("INTERACTION_CREATE", slow)
    followup = await discord_api.wait_request("POST", f"/webhooks/{APP_ID}/{slow['token']}")
    assert discord_api.interactions[slow["id"]].acked == 5
    assert followup.query.get("wait") in ("1", "true") and followup.json["embeds"][0]["title"] == "done"
    assert followup.status == 200


async def test_discord_button_and_file_upload(discord_api: FakeDiscord, discord_bot: _Probe) -> None:
    assert discord_api.gateway_connections[0]["zlib"] is True
    press = discord_api.make_component("more")
    await discord_api.dispatch("INTERACTION_CREATE", press)
    update = await discord_api.wait_request("POST", "/callback")
    assert update.json == {
        "type": 7,
        "data": {"tts": False, "content": "updated", "allowed_mentions": {"parse": []}},
    }
    assert discord_api.messages[press["message"]["id"]]["content"] == "updated"

    channel = discord_bot.get_channel(CHANNEL_ID)
    sent = await channel.send("report", file=discord.File(io.BytesIO(b"abc"), filename="r.txt"))
    request = await discord_api.wait_request("POST", "/messages")
    assert request.json["attachments"] == [{"id": 0, "filename": "r.txt"}]
    assert [(f["field"], f["data"]) for f in request.files] == [("files[0]", b"abc")]
    assert sent.attachments[0].filename == "r.txt" and sent.attachments[0].size == 3


async def test_discord_plain_text_frames(monkeypatch: pytest.MonkeyPatch) -> None:
    async with FakeDiscord(compress=False) as fake:
        with fake.point(monkeypatch):
            client = _Probe()
            task = asyncio.create_task(client.start(DISCORD_TOKEN))
            await asyncio.wait_for(client.ready.wait(), 5)
            await client.close()
            await asyncio.wait_for(task, 5)
    assert fake.gateway_connections[0]["zlib"] is False
    assert fake.gateway_connections[0]["query"]["compress"] == "zlib-stream"


class _Sharded(discord.AutoShardedClient):
    """Identifies every shard at once (the default hook sleeps 5 s per extra shard)."""

    async def before_identify_hook(self, shard_id: int | None, *, initial: bool = False) -> None:
        return

    async def on_ready(self) -> None:
        self.ready.set()


async def test_discord_sharding_uses_gateway_bot(monkeypatch: pytest.MonkeyPatch) -> None:
    second_guild = GUILD_ID + (1 << 22)  # lands on the other of 2 shards
    async with FakeDiscord(guild_ids=(GUILD_ID, second_guild), shards=2) as fake:
        with fake.point(monkeypatch):
            # A canary: the sharded client must take the URL from GET /gateway/bot instead.
            monkeypatch.setattr(discord.gateway.DiscordWebSocket, "DEFAULT_GATEWAY", yarl.URL("ws://127.0.0.1:9/"))
            client = _Sharded(intents=discord.Intents.default(), guild_ready_timeout=0.05)
            client.ready = asyncio.Event()
            task = asyncio.create_task(client.start(DISCORD_TOKEN))
            await asyncio.wait_for(client.ready.wait(), 5)
            await client.close()
            await asyncio.wait_for(task, 5)
    assert ("GET", "/gateway/bot") in [(r.method, r.path) for r in fake.requests]
    assert sorted(f["d"]["shard"] for f in fake.gateway_frames if f["op"] == 2) == [[0, 2], [1, 2]]
    assert {g.id: g.shard_id for g in client.guilds} == {g: (g >> 22) % 2 for g in (GUILD_ID, second_guild)}
    assert len({g.shard_id for g in client.guilds}) == 2


async def test_discord_fake_rejects_oversized_embed(discord_api: FakeDiscord, discord_bot: _Probe) -> None:
    await discord_api.dispatch("INTERACTION_CREATE", discord_api.make_slash("big"))
    request = await discord_api.wait_request("POST", "/callback")
    assert request.status == 400
    await asyncio.sleep(0.05)
    [error] = discord_bot.errors
    assert error.code == 50035
    errors = request.response["errors"]["data"]["embeds"]["0"]
    assert errors["title"]["_errors"][0]["code"] == "BASE_TYPE_MAX_LENGTH"
    assert errors["description"]["_errors"][0]["code"] == "BASE_TYPE_MAX_LENGTH"


async def test_discord_resume_replays_missed_events(discord_api: FakeDiscord, discord_bot: _Probe) -> None:
    await discord_api.drop_connection()
    await discord_api.dispatch("INTERACTION_CREATE", discord_api.make_slash("fit", {"model": "a", "gpu": "b"}))
    resume = (await discord_api.wait_gateway(6))["d"]
    assert resume["session_id"] and resume["seq"] >= 2
    await asyncio.wait_for(discord_bot.resumed.wait(), 5)
    body = (await discord_api.wait_request("POST", "/callback")).json
    assert body["data"]["embeds"][0]["description"] == "8192 tokens"
    assert len([f for f in discord_api.gateway_frames if f["op"] == 2]) == 1


async def test_discord_429_retried_on_mention_reply(discord_api: FakeDiscord, discord_bot: _Probe) -> None:
    discord_api.fail_next(f"POST /channels/{CHANNEL_ID}/messages", status=429, retry_after=0.3)
    mention = discord_api.make_mention("hello")
    await discord_api.dispatch("MESSAGE_CREATE", mention)
    first, second = await discord_api.wait_request("POST", "/messages", count=2)
    assert (first.status, second.status) == (429, 200)
    assert second.at - first.at >= 0.3
    assert second.json["message_reference"]["message_id"] in (mention["id"], int(mention["id"]))
    assert second.json["allowed_mentions"] == {"parse": []}


async def test_discord_fake_interaction_rules(discord_api: FakeDiscord) -> None:
    discord_api.interaction_timeout = 0.2
    base = discord_api.api_base
    async with aiohttp.ClientSession() as http:

        async def callback(payload: dict, body: dict) -> tuple[int, dict]:
            url = f"{base}/interactions/{payload['id']}/{payload['token']}/callback?with_response=1"
            async with http.post(url, json=body) as resp:
                return resp.status, await resp.json(content_type=None)

        auto = discord_api.make_autocomplete("fit", {"model": "g"}, focused="model")
        discord_api.register_interaction(auto)
        status, body = await callback(auto, {"type": 8, "data": {"choices": [{"name": "n", "value": "v"}] * 26}})
        assert (status, body["code"]) == (400, 50035)
        status, body = await callback(auto, {"type": 4, "data": {"content": "x"}})
        assert status == 400 and "type" in body["errors"]
        status, body = await callback(auto, {"type": 8, "data": {"choices": []}, "extra": 1})
        assert status == 400 and body["errors"]["extra"]["_errors"][0]["code"] == "UNKNOWN_FIELD"
        status, body = await callback(auto, {"type": 8, "data": {"choices": []}})
        assert status == 200 and body["interaction"]["id"] == auto["id"]
        status, body = await callback(auto, {"type": 8, "data": {"choices": []}})
        assert (status, body["code"]) == (400, 40060)

        late = discord_api.make_slash("fit")
        discord_api.register_interaction(late)
        await asyncio.sleep(0.25)
        status, body = await callback(late, {"type": 5})
        assert (status, body["code"]) == (404, 10062)

        comp = discord_api.make_component("x" * 101)
        discord_api.register_interaction(comp)
        row = {
            "type": 1,
            "components": [{"type": 2, "style": 1, "label": "l" * 81, "custom_id": "c" * 101}] * 6,
        }
        status, body = await callback(comp, {"type": 4, "data": {"content": "c" * 2001, "components": [row] * 6}})
        errors = body["errors"]["data"]
        assert {"content", "components"} <= set(errors)
        assert "label" in errors["components"]["0"]["components"]["0"]
