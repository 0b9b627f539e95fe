"""A strict fake of Discord's REST API (v10) and gateway, served by aiohttp on 127.0.0.1.

The real discord.py client reaches it through two class attributes, set by ``point()``:
``discord.http.Route.BASE`` (REST and the interaction/webhook adapter) and
``discord.gateway.DiscordWebSocket.DEFAULT_GATEWAY`` (the non-sharded client never asks
``GET /gateway/bot``). Build the client with ``guild_ready_timeout=0.05`` or every start waits 2 s.

Fidelity notes (each one broke the real client in the research prototypes):

* JSON answers carry ``Content-Type: application/json`` exactly; with a charset discord.py hands
  the raw string to its models.
* ``POST /interactions/{id}/{token}/callback?with_response=1`` answers an interaction-callback
  object (``interaction`` + ``resource``), never an empty 204.
* INTERACTION_CREATE payloads carry ``attachment_size_limit``.
* 429 answers carry a ``Via`` header; without it discord.py assumes a Cloudflare ban and raises.

Validation follows Discord's documented limits, which discord.py does not check: message content
2000, embeds (title 256, description 4096, 25 fields, field name 256 / value 1024, footer 2048,
author 256, 6000 in total, 10 per message), components (5 rows, 5 buttons each, custom_id 100,
label 80), autocomplete (25 choices, name/value 100), unknown top-level fields, the 3-second
initial-response deadline (10062) and double acknowledgement (40060). Violations answer 400 with
code 50035 and a nested ``errors`` object, which discord.py surfaces as ``HTTPException``.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import math
import re
import time
import uuid
import warnings
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Self

from aiohttp import BodyPartReader, WSMsgType, web

APP_ID = 1100000000000000001
GUILD_ID = 1100000000000000100
CHANNEL_ID = 1100000000000000200
USER_ID = 1100000000000000300
TOKEN = "fake-token"
ATTACHMENT_SIZE_LIMIT = 10 * 1024 * 1024
ALL_PERMISSIONS = str((1 << 50) - 1)

_MESSAGE_KEYS = {
    "channel_create": {
        "content",
        "nonce",
        "tts",
        "embeds",
        "allowed_mentions",
        "message_reference",
        "components",
        "sticker_ids",
        "attachments",
        "flags",
        "enforce_nonce",
        "poll",
    },
    "channel_edit": {"content", "embeds", "flags", "allowed_mentions", "components", "attachments", "tts"},
    "webhook_execute": {
        "content",
        "username",
        "avatar_url",
        "tts",
        "embeds",
        "allowed_mentions",
        "components",
        "attachments",
        "flags",
        "thread_name",
        "applied_tags",
        "poll",
    },
    "webhook_edit": {"content", "embeds", "flags", "allowed_mentions", "components", "attachments", "poll", "tts"},
    "callback_message": {
        "tts",
        "content",
        "embeds",
        "allowed_mentions",
        "flags",
        "components",
        "attachments",
        "poll",
    },
}
_EMBED_KEYS = {
    "title",
    "type",
    "description",
    "url",
    "timestamp",
    "color",
    "footer",
    "image",
    "thumbnail",
    "video",
    "provider",
    "author",
    "fields",
    "flags",
}
# Initial response types an interaction type accepts (PING, command, component, autocomplete, modal).
_CALLBACK_TYPES = {1: {1}, 2: {4, 5, 9}, 3: {4, 5, 6, 7, 9}, 4: {8}, 5: {4, 5, 6, 7}}
_COMMAND_NAME_RE = re.compile(r"^[-_\w]{1,32}$")


def import_discord() -> Any:
    """Imports discord.py, silencing only its audioop DeprecationWarning (Python 3.11/3.12).

    The warning fires at import time, where ``filterwarnings = error`` would turn it into a
    collection error; it concerns voice support, which FitBot does not use.
    """
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", "'audioop' is deprecated", DeprecationWarning)
        import discord
        import discord.gateway
        import discord.http
    return discord


def snowflake_time() -> str:
    return datetime.now(UTC).isoformat()


class DiscordError(Exception):
    """An error answer: HTTP status plus Discord's JSON error code and message."""

    def __init__(
        self,
        status: int,
        code: int,
        message: str,
        errors: dict[str, Any] | None = None,
        headers: dict[str, str] | None = None,
        body: dict[str, Any] | None = None,
    ):
        super().__init__(message)
        self.status, self.code, self.message = status, code, message
        self.errors, self.headers, self.body = errors, headers or {}, body

    def payload(self) -> dict[str, Any]:
        if self.body is not None:
            return self.body
        body: dict[str, Any] = {"message": self.message, "code": self.code}
        if self.errors:
            body["errors"] = self.errors
        return body


FormPath = tuple[str | int, ...]
"""Where an error sits in the nested ``errors`` object: field names and list indexes."""


class FormErrors:
    """Collects 50035 "Invalid Form Body" errors in Discord's nested ``errors`` shape."""

    def __init__(self) -> None:
        self.errors: dict[str, Any] = {}

    def add(self, path: FormPath, code: str, message: str) -> None:
        node = self.errors
        for part in path:
            node = node.setdefault(str(part), {})
        node.setdefault("_errors", []).append({"code": code, "message": message})

    def length(self, path: FormPath, value: Any, maximum: int, minimum: int = 0) -> None:
        if value is None:
            return
        size = len(value) if isinstance(value, (str, list)) else len(str(value))
        if size > maximum or size < minimum:
            if minimum:
                self.add(path, "BASE_TYPE_BAD_LENGTH", f"Must be between {minimum} and {maximum} in length.")
            else:
                self.add(path, "BASE_TYPE_MAX_LENGTH", f"Must be {maximum} or fewer in length.")

    def unknown(self, path: FormPath, body: dict[str, Any], allowed: set[str]) -> None:
        for key in set(body) - allowed:
            self.add(path + (key,), "UNKNOWN_FIELD", f"Unknown field {key!r}.")

    def check(self) -> None:
        if self.errors:
            raise DiscordError(400, 50035, "Invalid Form Body", self.errors)


# --------------------------------------------------------------------------- validators


def check_embeds(err: FormErrors, embeds: Any, path: FormPath = ("embeds",)) -> None:
    """Embed limits from the Discord docs (Message Resource, Embed Limits)."""
    if not isinstance(embeds, list):
        err.add(path, "LIST_TYPE_CONVERT", "Must be an array.")
        return
    err.length(path, embeds, 10)
    total = 0
    for i, embed in enumerate(embeds):
        p = path + (i,)
        if not isinstance(embed, dict):
            err.add(p, "DICT_TYPE_CONVERT", "Only dictionaries may be used in a DictType")
            continue
        err.unknown(p, embed, _EMBED_KEYS)
        err.length(p + ("title",), embed.get("title"), 256)
        err.length(p + ("description",), embed.get("description"), 4096)
        color = embed.get("color")
        if color is not None and not (isinstance(color, int) and 0 <= color <= 0xFFFFFF):
            err.add(p + ("color",), "NUMBER_TYPE_MAX", "int value should be <= 16777215 and >= 0.")
        total += len(embed.get("title") or "") + len(embed.get("description") or "")
        fields = embed.get("fields") or []
        err.length(p + ("fields",), fields, 25)
        for j, fld in enumerate(fields):
            err.length(p + ("fields", j, "name"), fld.get("name") or "", 256, 1)
            err.length(p + ("fields", j, "value"), fld.get("value") or "", 1024, 1)
            total += len(fld.get("name") or "") + len(fld.get("value") or "")
        footer = embed.get("footer") or {}
        err.length(p + ("footer", "text"), footer.get("text"), 2048)
        author = embed.get("author") or {}
        err.length(p + ("author", "name"), author.get("name"), 256)
        total += len(footer.get("text") or "") + len(author.get("name") or "")
        for key in ("url",):
            if embed.get(key) and not re.match(r"^https?://\S+$", embed[key]):
                err.add(p + (key,), "URL_TYPE_INVALID_URL", "Not a well formed URL.")
    if total > 6000:
        err.add(path, "MAX_EMBED_SIZE_EXCEEDED", "Embed size exceeds maximum size of 6000")


def check_components(err: FormErrors, rows: Any, path: FormPath = ("components",)) -> None:
    """Action rows (v1 components): 5 rows; 5 buttons or 1 select per row."""
    if not isinstance(rows, list):
        err.add(path, "LIST_TYPE_CONVERT", "Must be an array.")
        return
    err.length(path, rows, 5)
    custom_ids: set[str] = set()
    for i, row in enumerate(rows):
        if row.get("type") != 1:
            err.add(path + (i, "type"), "UNION_TYPE_CHOICES", 'Value of field "type" must be one of (1,).')
            continue
        children = row.get("components") or []
        err.length(path + (i, "components"), children, 5, 1)
        selects = [c for c in children if c.get("type") in (3, 5, 6, 7, 8)]
        if selects and len(children) > 1:
            err.add(
                path + (i, "components"),
                "COMPONENT_LAYOUT_WIDTH_EXCEEDED",
                "The specified component exceeds the maximum width",
            )
        for j, comp in enumerate(children):
            p = path + (i, "components", j)
            err.length(p + ("label",), comp.get("label"), 80)
            custom_id = comp.get("custom_id")
            if comp.get("type") == 2 and comp.get("style") in (5, 6):
                if custom_id is not None or (comp.get("style") == 5 and not comp.get("url")):
                    err.add(p, "BUTTON_COMPONENT_INVALID_URL", "Link buttons need a url and no custom_id.")
                continue
            if custom_id is None:
                err.add(p + ("custom_id",), "BASE_TYPE_REQUIRED", "This field is required")
                continue
            err.length(p + ("custom_id",), custom_id, 100, 1)
            if custom_id in custom_ids:
                err.add(
                    p + ("custom_id",),
                    "COMPONENT_CUSTOM_ID_DUPLICATED",
                    "Component custom id cannot be duplicated",
                )
            custom_ids.add(custom_id)
            if comp.get("type") in (3, 5, 6, 7, 8):
                err.length(p + ("options",), comp.get("options"), 25)
                err.length(p + ("placeholder",), comp.get("placeholder"), 150)


def check_message(err: FormErrors, body: dict[str, Any], kind: str, files: int = 0, path: FormPath = ()) -> None:
    """Validates a message body (content, embeds, components, allowed_mentions, emptiness)."""
    err.unknown(path, body, _MESSAGE_KEYS[kind])
    content = body.get("content")
    if content is not None and not isinstance(content, str):
        err.add(path + ("content",), "BASE_TYPE_STRING", "Must be a string.")
    err.length(path + ("content",), content, 2000)
    if body.get("embeds") is not None:
        check_embeds(err, body["embeds"], path + ("embeds",))
    if body.get("components") is not None and not body.get("flags", 0) & (1 << 15):
        check_components(err, body["components"], path + ("components",))
    mentions = body.get("allowed_mentions")
    if mentions is not None:
        err.unknown(path + ("allowed_mentions",), mentions, {"parse", "roles", "users", "replied_user"})
        parse = mentions.get("parse", [])
        if set(parse) - {"roles", "users", "everyone"}:
            err.add(
                path + ("allowed_mentions", "parse"),
                "ENUM_TYPE_COERCE",
                "Value must be one of roles, users, everyone.",
            )
        for key in ("users", "roles"):
            if key in parse and mentions.get(key):
                err.add(
                    path + ("allowed_mentions",),
                    "MESSAGE_ALLOWED_MENTIONS_PARSE_EXCLUSIVE",
                    f'parse:["{key}"] and {key}: [ids...] are mutually exclusive.',
                )
    has_body = any(body.get(k) for k in ("content", "embeds", "components", "sticker_ids", "poll"))
    if kind in ("channel_create", "webhook_execute", "callback_message") and not has_body and not files:
        raise DiscordError(400, 50006, "Cannot send an empty message")


def check_choices(err: FormErrors, data: dict[str, Any]) -> None:
    err.unknown(("data",), data, {"choices"})
    choices = data.get("choices")
    if not isinstance(choices, list):
        err.add(("data", "choices"), "BASE_TYPE_REQUIRED", "This field is required")
        return
    err.length(("data", "choices"), choices, 25)
    for i, choice in enumerate(choices):
        err.length(("data", "choices", i, "name"), choice.get("name") or "", 100, 1)
        if isinstance(choice.get("value"), str):
            err.length(("data", "choices", i, "value"), choice["value"], 100)


def check_commands(err: FormErrors, commands: Any) -> None:
    """Application command registration limits."""
    if not isinstance(commands, list):
        err.add((), "LIST_TYPE_CONVERT", "Must be an array.")
        return
    names: set[tuple[int, str]] = set()
    for i, cmd in enumerate(commands):
        ctype = cmd.get("type", 1)
        name = cmd.get("name") or ""
        if not _COMMAND_NAME_RE.match(name) or (ctype == 1 and name != name.lower()):
            err.add((i, "name"), "APPLICATION_COMMAND_INVALID_NAME", "Command name is invalid")
        if (ctype, name) in names:
            err.add((i, "name"), "APPLICATION_COMMANDS_DUPLICATE_NAME", "Application command names must be unique")
        names.add((ctype, name))
        if ctype == 1:
            err.length((i, "description"), cmd.get("description") or "", 100, 1)
        options = cmd.get("options") or []
        err.length((i, "options"), options, 25)
        seen_optional = False
        for j, opt in enumerate(options):
            p = (i, "options", j)
            if not _COMMAND_NAME_RE.match(opt.get("name") or "") or opt["name"] != opt["name"].lower():
                err.add(p + ("name",), "APPLICATION_COMMAND_INVALID_NAME", "Command name is invalid")
            err.length(p + ("description",), opt.get("description") or "", 100, 1)
            if opt.get("required") and seen_optional:
                err.add(
                    p + ("required",),
                    "APPLICATION_COMMAND_OPTIONS_REQUIRED_INVALID",
                    "Required options must be placed before non-required options",
                )
            seen_optional = seen_optional or not opt.get("required")
            err.length(p + ("choices",), opt.get("choices"), 25)
            if opt.get("choices") and opt.get("autocomplete"):
                err.add(
                    p + ("autocomplete",),
                    "APPLICATION_COMMAND_OPTION_CHOICES_AUTOCOMPLETE",
                    "Autocomplete cannot be set with choices",
                )


# --------------------------------------------------------------------------- recording types


@dataclass
class Request:
    """One REST request as the fake decoded it, with the answer it gave."""

    method: str
    path: str
    query: dict[str, str]
    json: Any
    files: list[dict[str, Any]]
    headers: dict[str, str]
    status: int = 0
    response: Any = None
    at: float = field(default_factory=time.monotonic)


@dataclass
class Interaction:
    """Server-side state of one dispatched interaction."""

    id: str
    token: str
    type: int
    dispatched_at: float
    payload: dict[str, Any]
    acked: int | None = None
    original_id: str | None = None
    answered: bool = False  # a followup or an edit of the original came after the defer


@dataclass(eq=False)
class _Conn:
    ws: web.WebSocketResponse
    compressor: Any = None
    session: _Session | None = None


@dataclass(eq=False)
class _Session:
    session_id: str
    shard: list[int] | None
    identify: dict[str, Any]
    seq: int = 0
    frames: list[dict[str, Any]] = field(default_factory=list)
    conn: _Conn | None = None


@dataclass
class _Failure:
    method: str | None
    prefix: str
    status: int
    retry_after: float
    is_global: bool
    times: int


# --------------------------------------------------------------------------- server


class FakeDiscord:
    """Fake Discord REST + gateway; ``async with FakeDiscord() as dc`` then ``with dc.point(): ...``."""

    def __init__(
        self,
        token: str = TOKEN,
        guild_ids: tuple[int, ...] = (GUILD_ID,),
        shards: int = 1,
        compress: bool = True,
        interaction_timeout: float = 3.0,
        heartbeat_interval_ms: int = 41250,
    ):
        self.token = token
        self.guild_ids = tuple(guild_ids)
        self.shards = shards
        self.compress = compress
        self.interaction_timeout = interaction_timeout
        self.heartbeat_interval_ms = heartbeat_interval_ms
        self.bot_user = self.user(APP_ID, "fitbot", bot=True)
        self.member_user = self.user(USER_ID, "tess")
        self.requests: list[Request] = []
        self.gateway_frames: list[dict[str, Any]] = []  # frames received from the client
        self.gateway_connections: list[dict[str, Any]] = []  # query string and whether zlib was used
        self.commands: dict[int | None, list[dict[str, Any]]] = {}
        self.messages: dict[str, dict[str, Any]] = {}
        self.interactions: dict[str, Interaction] = {}
        self.channels: dict[str, dict[str, Any]] = {str(self.channel_id(g)): self.channel(g) for g in self.guild_ids}
        self.port = 0
        self._ids = itertools.count(1)
        self._sessions: dict[str, _Session] = {}
        self._conns: set[_Conn] = set()
        self._failures: list[_Failure] = []
        self._changed = asyncio.Event()
        self._runner: web.AppRunner | None = None
        routes: list[tuple[set[str], str, Callable[..., Any], bool]] = [
            ({"GET"}, r"/users/@me", self._r_me, True),
            ({"POST"}, r"/users/@me/channels", self._r_dm, True),
            ({"GET"}, r"/oauth2/applications/@me", self._r_app, True),
            ({"GET"}, r"/gateway", self._r_gateway, False),
            ({"GET"}, r"/gateway/bot", self._r_gateway_bot, True),
            (
                {"GET", "PUT"},
                r"/applications/(?P<app>\d+)(?:/guilds/(?P<guild>\d+))?/commands",
                self._r_commands,
                True,
            ),
            ({"POST"}, r"/interactions/(?P<iid>\d+)/(?P<token>[^/]+)/callback", self._r_callback, False),
            ({"POST"}, r"/webhooks/(?P<app>\d+)/(?P<token>[^/]+)", self._r_followup, False),
            (
                {"GET", "PATCH", "DELETE"},
                r"/webhooks/(?P<app>\d+)/(?P<token>[^/]+)/messages/(?P<mid>@original|\d+)",
                self._r_webhook_message,
                False,
            ),
            ({"GET"}, r"/channels/(?P<cid>\d+)", self._r_channel, True),
            ({"POST"}, r"/channels/(?P<cid>\d+)/typing", self._r_typing, True),
            ({"POST", "GET"}, r"/channels/(?P<cid>\d+)/messages", self._r_channel_messages, True),
            (
                {"GET", "PATCH", "DELETE"},
                r"/channels/(?P<cid>\d+)/messages/(?P<mid>\d+)",
                self._r_channel_message,
                True,
            ),
        ]
        self._routes: list[tuple[set[str], re.Pattern[str], Callable[..., Any], bool]] = [
            (m, re.compile(p + "$"), h, a) for m, p, h, a in routes
        ]

    # ---- lifecycle

    async def start(self) -> Self:
        """Starts serving REST under /api/v10 and the gateway at / on a free port."""
        app = web.Application(client_max_size=4 * ATTACHMENT_SIZE_LIMIT)
        app.router.add_get("/", self._gateway)
        app.router.add_route("*", "/api/v10/{tail:.*}", self._rest)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        self.port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        return self

    async def close(self) -> None:
        """Closes open gateway sockets and stops the server."""
        for conn in list(self._conns):
            with contextlib.suppress(Exception):
                await conn.ws.close(code=1001, message=b"fake shutting down")
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    async def __aenter__(self) -> Self:
        return await self.start()

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    @property
    def api_base(self) -> str:
        """Value for ``discord.http.Route.BASE``."""
        return f"http://127.0.0.1:{self.port}/api/v10"

    @property
    def gateway_url(self) -> str:
        """Value for ``discord.gateway.DiscordWebSocket.DEFAULT_GATEWAY`` (as a yarl.URL)."""
        return f"ws://127.0.0.1:{self.port}/"

    @contextlib.contextmanager
    def point(self, monkeypatch: Any = None) -> Iterator[FakeDiscord]:
        """Points discord.py at this fake; restores the two class attributes afterwards.

        With a pytest ``monkeypatch`` the restore happens at test teardown as well.
        """
        import yarl

        discord = import_discord()
        targets = [
            (discord.http.Route, "BASE", self.api_base),
            (discord.gateway.DiscordWebSocket, "DEFAULT_GATEWAY", yarl.URL(self.gateway_url)),
        ]
        saved = [(obj, name, getattr(obj, name)) for obj, name, _ in targets]
        for obj, name, value in targets:
            if monkeypatch is not None:
                monkeypatch.setattr(obj, name, value)
            else:
                setattr(obj, name, value)
        try:
            yield self
        finally:
            for obj, name, value in saved:
                setattr(obj, name, value)

    # ---- ids and payload factories

    def snowflake(self) -> str:
        millis = int(time.time() * 1000) - 1420070400000
        return str((millis << 22) | (next(self._ids) & 0x3FFFFF))

    @staticmethod
    def user(user_id: int, name: str, bot: bool = False) -> dict[str, Any]:
        return {
            "id": str(user_id),
            "username": name,
            "discriminator": "0",
            "global_name": name.title(),
            "avatar": None,
            "bot": bot,
            "public_flags": 0,
            "flags": 0,
        }

    @staticmethod
    def channel_id(guild_id: int) -> int:
        return CHANNEL_ID if guild_id == GUILD_ID else guild_id + 100

    def channel(self, guild_id: int) -> dict[str, Any]:
        return {
            "id": str(self.channel_id(guild_id)),
            "type": 0,
            "guild_id": str(guild_id),
            "name": "general",
            "position": 0,
            "permission_overwrites": [],
            "nsfw": False,
            "parent_id": None,
            "topic": None,
            "last_message_id": None,
            "rate_limit_per_user": 0,
            "flags": 0,
        }

    def member(self, user: dict[str, Any], permissions: bool = False) -> dict[str, Any]:
        member = {
            "user": user,
            "roles": [],
            "joined_at": snowflake_time(),
            "deaf": False,
            "mute": False,
            "flags": 0,
            "nick": None,
            "pending": False,
            "avatar": None,
            "premium_since": None,
        }
        if permissions:
            member["permissions"] = ALL_PERMISSIONS
        return member

    def guild(self, guild_id: int) -> dict[str, Any]:
        """A full GUILD_CREATE payload: one text channel, @everyone, the bot and one member."""
        everyone = {
            "id": str(guild_id),
            "name": "@everyone",
            "color": 0,
            "colors": {"primary_color": 0},
            "hoist": False,
            "position": 0,
            "permissions": "1071698660929",
            "managed": False,
            "mentionable": False,
            "flags": 0,
            "icon": None,
            "unicode_emoji": None,
        }
        return {
            "id": str(guild_id),
            "name": "FitBot Test Guild",
            "icon": None,
            "splash": None,
            "discovery_splash": None,
            "owner_id": str(USER_ID),
            "afk_channel_id": None,
            "afk_timeout": 300,
            "verification_level": 0,
            "default_message_notifications": 0,
            "explicit_content_filter": 0,
            "roles": [everyone],
            "emojis": [],
            "stickers": [],
            "features": [],
            "mfa_level": 0,
            "system_channel_id": None,
            "system_channel_flags": 0,
            "rules_channel_id": None,
            "vanity_url_code": None,
            "description": None,
            "banner": None,
            "premium_tier": 0,
            "premium_subscription_count": 0,
            "preferred_locale": "en-US",
            "public_updates_channel_id": None,
            "nsfw_level": 0,
            "premium_progress_bar_enabled": False,
            "joined_at": snowflake_time(),
            "large": False,
            "unavailable": False,
            "member_count": 2,
            "voice_states": [],
            "members": [self.member(self.bot_user), self.member(self.member_user)],
            "channels": [self.channel(guild_id)],
            "threads": [],
            "presences": [],
            "stage_instances": [],
            "guild_scheduled_events": [],
            "soundboard_sounds": [],
        }

    def _command_data(self, name: str, guild_id: int | None) -> dict[str, Any]:
        for scope in (guild_id, None):
            for cmd in self.commands.get(scope, []):
                if cmd["name"] == name:
                    data = {"id": cmd["id"], "name": name, "type": cmd.get("type", 1)}
                    if scope is not None:
                        data["guild_id"] = str(scope)
                    return data
        return {"id": self.snowflake(), "name": name, "type": 1}

    @staticmethod
    def _options(
        options: dict[str, Any] | list[dict[str, Any]] | None, focused: str | None = None
    ) -> list[dict[str, Any]]:
        if options is None:
            return []
        if isinstance(options, list):
            return options
        out = []
        for name, value in options.items():
            otype = (
                5 if isinstance(value, bool) else 4 if isinstance(value, int) else 10 if isinstance(value, float) else 3
            )
            opt: dict[str, Any] = {"name": name, "type": otype, "value": value}
            if name == focused:
                opt.update(type=3, value=str(value), focused=True)
            out.append(opt)
        return out

    def make_interaction(
        self,
        itype: int,
        data: dict[str, Any],
        *,
        guild_id: int | None = GUILD_ID,
        locale: str = "en-US",
        user_id: int = USER_ID,
        message: dict[str, Any] | None = None,
        permissions: str = ALL_PERMISSIONS,
    ) -> dict[str, Any]:
        """A complete INTERACTION_CREATE payload (guild with member, or DM with user when guild_id=None).

        ``permissions`` are the member's resolved permissions in the channel (default: all).
        """
        user = self.member_user if user_id == USER_ID else self.user(user_id, f"user{user_id}")
        payload: dict[str, Any] = {
            "id": self.snowflake(),
            "application_id": str(APP_ID),
            "type": itype,
            "data": data,
            "token": f"itok-{uuid.uuid4().hex}",
            "version": 1,
            "locale": locale,
            "app_permissions": ALL_PERMISSIONS,
            "entitlements": [],
            "entitlement_sku_ids": [],
            "attachment_size_limit": ATTACHMENT_SIZE_LIMIT,
        }
        if guild_id is not None:
            payload.update(
                guild_id=str(guild_id),
                channel_id=str(self.channel_id(guild_id)),
                channel=self.channel(guild_id),
                member={**self.member(user, permissions=True), "permissions": permissions},
                guild_locale="en-US",
                guild={"id": str(guild_id), "locale": "en-US", "features": []},
                authorizing_integration_owners={"0": str(guild_id)},
                context=0,
            )
        else:
            dm_id = str(int(user["id"]) + 7)
            payload.update(
                channel_id=dm_id,
                channel={"id": dm_id, "type": 1, "recipients": [user], "flags": 0},
                user=user,
                authorizing_integration_owners={"0": str(user["id"])},
                context=1,
            )
        if message is not None:
            payload["message"] = message
        return payload

    def make_slash(
        self, name: str, options: dict[str, Any] | list[dict[str, Any]] | None = None, **kw: Any
    ) -> dict[str, Any]:
        """INTERACTION_CREATE for a chat-input command; int values become type 4, str type 3."""
        data = self._command_data(name, kw.get("guild_id", GUILD_ID))
        data["options"] = self._options(options)
        data["resolved"] = {}
        return self.make_interaction(2, data, **kw)

    def make_autocomplete(self, name: str, options: dict[str, Any], focused: str, **kw: Any) -> dict[str, Any]:
        """INTERACTION_CREATE type 4; the ``focused`` option is a string with ``focused: true``."""
        data = self._command_data(name, kw.get("guild_id", GUILD_ID))
        data["options"] = self._options(options, focused)
        return self.make_interaction(4, data, **kw)

    def make_component(
        self,
        custom_id: str,
        message: dict[str, Any] | None = None,
        component_type: int = 2,
        values: list[str] | None = None,
        **kw: Any,
    ) -> dict[str, Any]:
        """INTERACTION_CREATE type 3 for a button (or a select with ``values``) on ``message``."""
        data: dict[str, Any] = {"custom_id": custom_id, "component_type": component_type}
        if values is not None:
            data["values"] = values
        if message is None:
            message = self._message_payload(str(self.channel_id(kw.get("guild_id") or GUILD_ID)), {"content": "…"})
            self.messages[message["id"]] = message
        return self.make_interaction(3, data, message=message, **kw)

    def make_mention(self, text: str, guild_id: int = GUILD_ID, user_id: int = USER_ID) -> dict[str, Any]:
        """MESSAGE_CREATE from a member that mentions the bot: ``<@bot> text``."""
        author = self.member_user if user_id == USER_ID else self.user(user_id, f"user{user_id}")
        member = self.member(author)
        del member["user"]
        mention = dict(self.bot_user, member=self.member(self.bot_user))
        del mention["member"]["user"]
        msg: dict[str, Any] = {
            "id": self.snowflake(),
            "channel_id": str(self.channel_id(guild_id)),
            "guild_id": str(guild_id),
            "author": author,
            "member": member,
            "content": f"<@{APP_ID}> {text}",
            "timestamp": snowflake_time(),
            "edited_timestamp": None,
            "tts": False,
            "mention_everyone": False,
            "mentions": [mention],
            "mention_roles": [],
            "attachments": [],
            "embeds": [],
            "pinned": False,
            "type": 0,
            "flags": 0,
            "components": [],
            "nonce": None,
        }
        self.messages[msg["id"]] = msg
        return msg

    # ---- test controls

    def fail_next(
        self,
        route_prefix: str,
        status: int = 429,
        retry_after: float = 0.5,
        times: int = 1,
        is_global: bool = False,
    ) -> None:
        """Fails the next ``times`` requests whose path (after /api/v10) starts with ``route_prefix``.

        ``route_prefix`` may start with a method: ``"POST /interactions"``.
        """
        method, _, prefix = route_prefix.rpartition(" ")
        prefix = prefix if prefix.startswith("/") else "/" + prefix
        self._failures.append(_Failure(method.upper() or None, prefix, status, retry_after, is_global, times))

    def thinking(self) -> list[Interaction]:
        """Interactions deferred with "thinking…" (type 5) that never got a followup or an edit."""
        return [i for i in self.interactions.values() if i.acked == 5 and not i.answered]

    def requests_to(self, method: str, path_contains: str) -> list[Request]:
        return [r for r in self.requests if r.method == method.upper() and path_contains in r.path]

    async def _wait(self, probe: Callable[[], list[Any]], count: int, timeout: float, what: str) -> Any:
        try:
            async with asyncio.timeout(timeout):
                while True:
                    found = probe()
                    if len(found) >= count:
                        return found[0] if count == 1 else found[:count]
                    self._changed.clear()
                    await self._changed.wait()
        except TimeoutError:
            seen = [f"{r.method} {r.path} -> {r.status}" for r in self.requests]
            raise AssertionError(f"{what} x{count} not seen within {timeout}s; requests: {seen}") from None

    async def wait_request(self, method: str, path_contains: str, count: int = 1, timeout: float = 5) -> Any:
        """Waits until ``count`` answered requests match; returns the Request, or a list if count > 1."""
        return await self._wait(
            lambda: [r for r in self.requests_to(method, path_contains) if r.status],
            count,
            timeout,
            f"{method} {path_contains}",
        )

    async def wait_gateway(self, op: int, count: int = 1, timeout: float = 5) -> Any:
        """Waits for ``count`` client frames with opcode ``op`` (2 IDENTIFY, 6 RESUME, ...)."""
        return await self._wait(
            lambda: [f for f in self.gateway_frames if f.get("op") == op], count, timeout, f"gateway op {op}"
        )

    async def dispatch(self, event: str, data: dict[str, Any], shard_id: int | None = None) -> None:
        """Sends a DISPATCH to the session of ``shard_id`` (derived from guild_id when omitted).

        While the socket is down the event is kept and replayed on RESUME.
        """
        session = self._session_for(data, shard_id)
        if event == "INTERACTION_CREATE":
            self.register_interaction(data)
        await self._send_dispatch(session, event, data)

    def register_interaction(self, payload: dict[str, Any]) -> Interaction:
        """Starts the 3-second clock for an interaction (``dispatch`` does this itself)."""
        interaction = Interaction(payload["id"], payload["token"], payload["type"], time.monotonic(), payload)
        self.interactions[payload["id"]] = interaction
        return interaction

    async def drop_connection(self, shard_id: int = 0, code: int = 4000) -> None:
        """Closes the gateway socket of a shard with a resumable code; the client should RESUME."""
        session = self._session_for({}, shard_id)
        conn, session.conn = session.conn, None
        if conn is not None:
            await conn.ws.close(code=code, message=b"dropped by test")

    # ---- gateway

    def _session_for(self, data: dict[str, Any], shard_id: int | None) -> _Session:
        if shard_id is None:
            guild_id = data.get("guild_id")
            shard_id = (int(guild_id) >> 22) % self.shards if guild_id and self.shards > 1 else 0
        candidates = [s for s in self._sessions.values() if (s.shard or [0])[0] == shard_id]
        if not candidates:
            raise RuntimeError(f"no identified gateway session for shard {shard_id}")
        return candidates[-1]

    async def _send(self, conn: _Conn, frame: dict[str, Any]) -> None:
        raw = json.dumps(frame)
        if conn.compressor is not None:
            await conn.ws.send_bytes(conn.compressor.compress(raw.encode()) + conn.compressor.flush(zlib.Z_SYNC_FLUSH))
        else:
            await conn.ws.send_str(raw)

    async def _send_dispatch(self, session: _Session, event: str, data: Any) -> None:
        session.seq += 1
        frame = {"op": 0, "t": event, "s": session.seq, "d": data}
        session.frames.append(frame)
        if session.conn is not None and not session.conn.ws.closed:
            await self._send(session.conn, frame)

    async def _gateway(self, request: web.Request) -> web.WebSocketResponse:
        ws = web.WebSocketResponse(timeout=1.0, max_msg_size=0)
        await ws.prepare(request)
        use_zlib = self.compress and request.query.get("compress") == "zlib-stream"
        conn = _Conn(ws, zlib.compressobj() if use_zlib else None)
        self.gateway_connections.append({"query": dict(request.query), "zlib": use_zlib})
        self._conns.add(conn)
        try:
            await self._send(
                conn,
                {"op": 10, "d": {"heartbeat_interval": self.heartbeat_interval_ms}, "s": None, "t": None},
            )
            async for msg in ws:
                if msg.type != WSMsgType.TEXT:
                    continue
                frame = json.loads(msg.data)
                self.gateway_frames.append(frame)
                self._changed.set()
                op, d = frame.get("op"), frame.get("d")
                if op == 1:
                    await self._send(conn, {"op": 11, "d": None, "s": None, "t": None})
                elif op == 2:
                    await self._identify(conn, d)
                elif op == 6:
                    await self._resume(conn, d)
        finally:
            self._conns.discard(conn)
            if conn.session is not None and conn.session.conn is conn:
                conn.session.conn = None
        return ws

    async def _identify(self, conn: _Conn, d: dict[str, Any]) -> None:
        if d.get("token") != self.token:
            await conn.ws.close(code=4004, message=b"Authentication failed.")
            return
        shard = d.get("shard")
        if self.shards > 1 and not shard:
            await conn.ws.close(code=4011, message=b"Sharding required.")
            return
        session = _Session(uuid.uuid4().hex, shard, d, conn=conn)
        self._sessions[session.session_id] = session
        conn.session = session
        shard_id, count = shard or (0, 1)
        guilds = [g for g in self.guild_ids if (g >> 22) % count == shard_id]
        ready = {
            "v": 10,
            "user": self.bot_user,
            "guilds": [{"id": str(g), "unavailable": True} for g in guilds],
            "session_id": session.session_id,
            "session_type": "normal",
            "resume_gateway_url": self.gateway_url,
            "application": {"id": str(APP_ID), "flags": 0},
            "private_channels": [],
            "relationships": [],
            "presences": [],
            "guild_join_requests": [],
            "geo_ordered_rtc_regions": [],
            "auth": {},
        }
        if shard:
            ready["shard"] = shard
        await self._send_dispatch(session, "READY", ready)
        for g in guilds:
            await self._send_dispatch(session, "GUILD_CREATE", self.guild(g))
        self._changed.set()

    async def _resume(self, conn: _Conn, d: dict[str, Any]) -> None:
        session = self._sessions.get(d.get("session_id", ""))
        if session is None or d.get("token") != self.token:
            await self._send(conn, {"op": 9, "d": False, "s": None, "t": None})
            return
        session.conn, conn.session = conn, session
        for frame in session.frames:
            if frame["s"] > (d.get("seq") or 0):
                await self._send(conn, frame)
        await self._send_dispatch(session, "RESUMED", {})

    # ---- REST plumbing

    @staticmethod
    def _json(status: int, body: Any, headers: dict[str, str] | None = None) -> web.Response:
        if body is None:
            return web.Response(status=204, headers=headers)
        # Exactly "application/json": discord.py only decodes JSON for that literal header.
        return web.Response(
            status=status,
            body=json.dumps(body).encode(),
            headers={"Content-Type": "application/json", **(headers or {})},
        )

    async def _decode(self, request: web.Request) -> tuple[Any, list[dict[str, Any]]]:
        if request.content_type == "multipart/form-data":
            body, files = None, []
            async for part in await request.multipart():
                if not isinstance(part, BodyPartReader):
                    raise ValueError("a nested multipart body")  # answered 400 like other bad bodies
                if part.name == "payload_json":
                    body = json.loads(await part.text())
                elif part.filename is not None:
                    data = bytes(await part.read(decode=False))
                    files.append(
                        {
                            "field": part.name,
                            "filename": part.filename,
                            "size": len(data),
                            "content_type": part.headers.get("Content-Type"),
                            "data": data,
                        }
                    )
            return body, files
        raw = await request.read()
        if not raw:
            return None, []
        return json.loads(raw), []

    def _take_failure(self, method: str, path: str) -> _Failure | None:
        for failure in self._failures:
            if path.startswith(failure.prefix) and failure.method in (None, method):
                failure.times -= 1
                if failure.times <= 0:
                    self._failures.remove(failure)
                return failure
        return None

    def _failure_error(self, failure: _Failure) -> DiscordError:
        if failure.status != 429:
            return DiscordError(failure.status, 0, f"{failure.status}: Injected failure")
        reset_after = f"{failure.retry_after:.3f}"
        headers = {
            "Retry-After": str(math.ceil(failure.retry_after)),
            "X-RateLimit-Limit": "5",
            "X-RateLimit-Remaining": "0",
            "X-RateLimit-Reset": f"{time.time() + failure.retry_after:.3f}",
            "X-RateLimit-Reset-After": reset_after,
            "X-RateLimit-Bucket": "fakebucket",
            "X-RateLimit-Scope": "global" if failure.is_global else "user",
            "Via": "1.1 google",
        }
        if failure.is_global:
            headers["X-RateLimit-Global"] = "true"
        body: dict[str, Any] = {
            "message": "You are being rate limited.",
            "retry_after": failure.retry_after,
            "global": failure.is_global,
            "code": 0,
        }
        return DiscordError(429, 0, body["message"], headers=headers, body=body)

    async def _rest(self, request: web.Request) -> web.Response:
        path = "/" + request.match_info["tail"]
        try:
            body, files = await self._decode(request)
        except ValueError:
            return self._json(400, {"message": "400: Bad Request", "code": 50109})
        record = Request(request.method, path, dict(request.query), body, files, dict(request.headers))
        self.requests.append(record)
        try:
            result = await self._route(request, path, body, files)
            record.status, record.response = (200 if result is not None else 204), result
            reply = self._json(200, result)
        except DiscordError as err:
            record.status, record.response = err.status, err.payload()
            reply = self._json(err.status, err.payload(), err.headers)
        self._changed.set()
        return reply

    async def _route(self, request: web.Request, path: str, body: Any, files: list[dict[str, Any]]) -> Any:
        for methods, pattern, handler, needs_auth in self._routes:
            match = pattern.match(path)
            if match is None:
                continue
            if request.method not in methods:
                raise DiscordError(405, 0, "405: Method Not Allowed")
            if needs_auth and request.headers.get("Authorization") != f"Bot {self.token}":
                raise DiscordError(401, 0, "401: Unauthorized")
            failure = self._take_failure(request.method, path)
            if failure is not None:
                raise self._failure_error(failure)
            return await handler(request=request, body=body, files=files, **match.groupdict())
        raise DiscordError(404, 0, "404: Not Found")

    def _attachments(self, files: list[dict[str, Any]]) -> list[dict[str, Any]]:
        out = []
        for f in files:
            if f["size"] > ATTACHMENT_SIZE_LIMIT:
                raise DiscordError(413, 40005, "Request entity too large")
            att_id = self.snowflake()
            url = f"http://127.0.0.1:{self.port}/attachments/{att_id}/{f['filename']}"
            out.append(
                {
                    "id": att_id,
                    "filename": f["filename"],
                    "size": f["size"],
                    "url": url,
                    "proxy_url": url,
                    "content_type": f["content_type"],
                }
            )
        return out

    def _message_payload(
        self,
        channel_id: str,
        body: dict[str, Any],
        files: list[dict[str, Any]] | None = None,
        interaction: Interaction | None = None,
        flags: int = 0,
    ) -> dict[str, Any]:
        channel = self.channels.get(channel_id, {})
        msg: dict[str, Any] = {
            "id": self.snowflake(),
            "channel_id": channel_id,
            "author": self.bot_user,
            "content": body.get("content") or "",
            "timestamp": snowflake_time(),
            "edited_timestamp": None,
            "tts": bool(body.get("tts")),
            "mention_everyone": False,
            "mentions": [],
            "mention_roles": [],
            "attachments": self._attachments(files or []),
            "embeds": [dict(e, type=e.get("type", "rich")) for e in body.get("embeds") or []],
            "pinned": False,
            "type": 0,
            "flags": body.get("flags", 0) | flags,
            "components": body.get("components") or [],
        }
        if "guild_id" in channel:
            msg["guild_id"] = channel["guild_id"]
        if body.get("message_reference"):
            msg["type"] = 19
            msg["message_reference"] = {k: str(v) for k, v in body["message_reference"].items() if v is not None}
        if interaction is not None:
            msg.update(webhook_id=str(APP_ID), application_id=str(APP_ID), type=20 if interaction.type == 2 else 0)
        return msg

    def _edit(self, msg: dict[str, Any], body: dict[str, Any], files: list[dict[str, Any]]) -> dict[str, Any]:
        for key in ("content", "components", "flags"):
            if key in body:
                msg[key] = body[key] if body[key] is not None else ("" if key == "content" else [])
        if "embeds" in body:
            msg["embeds"] = [dict(e, type=e.get("type", "rich")) for e in body["embeds"] or []]
        if "attachments" in body or files:
            kept = {str(a.get("id")) for a in body.get("attachments") or []}
            msg["attachments"] = [a for a in msg["attachments"] if a["id"] in kept] + self._attachments(files)
        msg["flags"] = msg.get("flags", 0) & ~128
        msg["edited_timestamp"] = snowflake_time()
        return msg

    # ---- REST routes

    async def _r_me(self, **_: Any) -> dict[str, Any]:
        return self.bot_user

    async def _r_dm(self, body: dict[str, Any], **_: Any) -> dict[str, Any]:
        recipient = str(body.get("recipient_id"))
        dm_id = str(int(recipient) + 7)
        user = self.member_user if recipient == str(USER_ID) else self.user(int(recipient), f"user{recipient}")
        self.channels[dm_id] = {
            "id": dm_id,
            "type": 1,
            "recipients": [user],
            "last_message_id": None,
            "flags": 0,
        }
        return self.channels[dm_id]

    async def _r_app(self, **_: Any) -> dict[str, Any]:
        return {
            "id": str(APP_ID),
            "name": "FitBot Test",
            "icon": None,
            "description": "",
            "summary": "",
            "type": None,
            "bot_public": True,
            "bot_require_code_grant": False,
            "verify_key": "0" * 64,
            "owner": self.member_user,
            "flags": 0,
            "team": None,
            "bot": self.bot_user,
            "redirect_uris": [],
            "interactions_endpoint_url": None,
            "tags": [],
        }

    async def _r_gateway(self, **_: Any) -> dict[str, Any]:
        return {"url": self.gateway_url}

    async def _r_gateway_bot(self, **_: Any) -> dict[str, Any]:
        return {
            "url": self.gateway_url,
            "shards": self.shards,
            "session_start_limit": {"total": 1000, "remaining": 999, "reset_after": 0, "max_concurrency": 1},
        }

    async def _r_commands(self, request: web.Request, body: Any, app: str, guild: str | None, **_: Any) -> Any:
        if int(app) != APP_ID:
            raise DiscordError(403, 50001, "Missing Access")
        scope = int(guild) if guild else None
        if scope is not None and scope not in self.guild_ids:
            raise DiscordError(403, 50001, "Missing Access")
        if request.method == "GET":
            return self.commands.get(scope, [])
        err = FormErrors()
        check_commands(err, body)
        err.check()
        previous = {c["name"]: c["id"] for c in self.commands.get(scope, [])}
        stored = []
        for cmd in body:
            echoed = dict(
                cmd,
                id=previous.get(cmd["name"]) or self.snowflake(),
                application_id=str(APP_ID),
                version=self.snowflake(),
            )
            if scope is not None:
                echoed["guild_id"] = str(scope)
            stored.append(echoed)
        self.commands[scope] = stored
        return stored

    async def _r_callback(
        self, request: web.Request, body: Any, files: list[dict[str, Any]], iid: str, token: str, **_: Any
    ) -> Any:
        interaction = self.interactions.get(iid)
        if interaction is None or interaction.token != token:
            raise DiscordError(404, 10062, "Unknown interaction")
        if interaction.acked is not None:
            raise DiscordError(400, 40060, "Interaction has already been acknowledged.")
        if time.monotonic() - interaction.dispatched_at > self.interaction_timeout:
            raise DiscordError(404, 10062, "Unknown interaction")
        err = FormErrors()
        if not isinstance(body, dict):
            raise DiscordError(
                400,
                50035,
                "Invalid Form Body",
                {"_errors": [{"code": "DICT_TYPE_CONVERT", "message": "Must be an object."}]},
            )
        err.unknown((), body, {"type", "data"})
        rtype = body.get("type")
        if rtype not in _CALLBACK_TYPES.get(interaction.type, set()):
            err.add(("type",), "INTERACTION_RESPONSE_TYPE_INVALID", "Invalid interaction response type")
            err.check()
        data = body.get("data") or {}
        if rtype in (4, 7):
            check_message(err, data, "callback_message", len(files), ("data",))
        elif rtype == 5 or rtype == 6:
            err.unknown(("data",), data, {"flags"})
        elif rtype == 8:
            check_choices(err, data)
        elif rtype == 9:
            err.unknown(("data",), data, {"custom_id", "title", "components"})
            err.length(("data", "title"), data.get("title") or "", 45, 1)
            err.length(("data", "custom_id"), data.get("custom_id") or "", 100, 1)
        err.check()
        interaction.acked = rtype
        resource: dict[str, Any] = {"type": rtype}
        channel_id = interaction.payload.get("channel_id", "")
        if rtype in (4, 5):
            msg = self._message_payload(
                channel_id, data if rtype == 4 else {}, files, interaction, flags=128 if rtype == 5 else 0
            )
            self.messages[msg["id"]] = msg
            interaction.original_id = msg["id"]
            resource["message"] = msg
        elif rtype in (6, 7) and "message" in interaction.payload:
            original = interaction.payload["message"]
            stored = self.messages.setdefault(original["id"], original)
            interaction.original_id = stored["id"]
            if rtype == 7:
                resource["message"] = self._edit(stored, data, files)
        if request.query.get("with_response") not in ("1", "true", "True"):
            return None
        result = {
            "interaction": {
                "id": iid,
                "type": interaction.type,
                "response_message_loading": rtype == 5,
                "response_message_ephemeral": bool(data.get("flags", 0) & 64),
            },
            "resource": resource,
        }
        if interaction.original_id:
            result["interaction"]["response_message_id"] = interaction.original_id
        return result

    def _interaction_for(self, app: str, token: str) -> Interaction:
        for interaction in self.interactions.values():
            if interaction.token == token and int(app) == APP_ID and interaction.acked is not None:
                return interaction
        raise DiscordError(404, 10015, "Unknown Webhook")

    async def _r_followup(
        self, request: web.Request, body: Any, files: list[dict[str, Any]], app: str, token: str, **_: Any
    ) -> Any:
        interaction = self._interaction_for(app, token)
        body = body or {}
        err = FormErrors()
        check_message(err, body, "webhook_execute", len(files))
        err.check()
        msg = self._message_payload(interaction.payload.get("channel_id", ""), body, files, interaction)
        self.messages[msg["id"]] = msg
        interaction.answered = True
        return msg if request.query.get("wait") in ("1", "true", "True") else None

    async def _r_webhook_message(
        self, request: web.Request, body: Any, files: list[dict[str, Any]], app: str, token: str, mid: str, **_: Any
    ) -> Any:
        interaction = self._interaction_for(app, token)
        message_id = interaction.original_id if mid == "@original" else mid
        msg = self.messages.get(message_id or "")
        if msg is None:
            raise DiscordError(404, 10008, "Unknown Message")
        if request.method == "GET":
            return msg
        if request.method == "DELETE":
            del self.messages[msg["id"]]
            return None
        err = FormErrors()
        check_message(err, body or {}, "webhook_edit", len(files))
        err.check()
        interaction.answered = True
        return self._edit(msg, body or {}, files)

    def _channel_or_404(self, cid: str) -> dict[str, Any]:
        if cid not in self.channels:
            raise DiscordError(404, 10003, "Unknown Channel")
        return self.channels[cid]

    async def _r_channel(self, cid: str, **_: Any) -> dict[str, Any]:
        return self._channel_or_404(cid)

    async def _r_typing(self, cid: str, **_: Any) -> None:
        self._channel_or_404(cid)

    async def _r_channel_messages(
        self, request: web.Request, body: Any, files: list[dict[str, Any]], cid: str, **_: Any
    ) -> Any:
        self._channel_or_404(cid)
        if request.method == "GET":
            return [m for m in reversed(self.messages.values()) if m["channel_id"] == cid][
                : int(request.query.get("limit", 50))
            ]
        body = body or {}
        err = FormErrors()
        check_message(err, body, "channel_create", len(files))
        ref = body.get("message_reference")
        if ref and str(ref.get("message_id")) not in self.messages and ref.get("fail_if_not_exists", True):
            err.add(("message_reference",), "MESSAGE_REFERENCE_UNKNOWN_MESSAGE", "Unknown message")
        err.check()
        msg = self._message_payload(cid, body, files)
        if ref:
            referenced = self.messages.get(str(ref.get("message_id")))
            if referenced is not None:
                msg["referenced_message"] = referenced
        self.messages[msg["id"]] = msg
        return msg

    async def _r_channel_message(
        self, request: web.Request, body: Any, files: list[dict[str, Any]], cid: str, mid: str, **_: Any
    ) -> Any:
        self._channel_or_404(cid)
        msg = self.messages.get(mid)
        if msg is None or msg["channel_id"] != cid:
            raise DiscordError(404, 10008, "Unknown Message")
        if request.method == "GET":
            return msg
        if request.method == "DELETE":
            del self.messages[mid]
            return None
        if msg["author"]["id"] != self.bot_user["id"]:
            raise DiscordError(403, 50005, "Cannot edit a message authored by another user")
        err = FormErrors()
        check_message(err, body or {}, "channel_edit", len(files))
        err.check()
        return self._edit(msg, body or {}, files)
