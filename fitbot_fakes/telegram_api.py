"""A strict fake of the Telegram Bot API, served by aiohttp on 127.0.0.1.

The real python-telegram-bot ``Application`` talks to it through the public
``ApplicationBuilder().base_url(api.base_url).base_file_url(api.base_file_url)`` seam.

Design notes:

* PTB posts ``application/x-www-form-urlencoded`` bodies in which every non-string parameter is
  JSON-encoded and strings are sent raw; uploads are ``multipart/form-data``. The fake decodes a
  field as JSON unless the Bot API declares it a string (``_STRING_FIELDS``), so ``text="123"``
  stays a string. JSON bodies are accepted too.
* Errors use the Bot API envelope and HTTP status, because PTB maps exceptions by status
  (400 BadRequest, 401/404 InvalidToken, 409 Conflict, ``parameters.retry_after`` RetryAfter).
* Validation follows the Bot API documentation, not PTB, which checks none of these limits:
  text 1-4096 characters after entity parsing (counted in code points; entity offsets are UTF-16),
  captions 1024, callback_data 1-64 bytes, at most 50 inline results, the HTML subset Telegram
  accepts, the MarkdownV2 reserved characters, "message is not modified" on identical edits.
* getUpdates is a real long poll. A newer poll terminates a parked one with 409, as Telegram does
  when two bot instances poll one token, and ``close()`` releases parked polls so server shutdown
  does not wait out the poll timeout.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from html import unescape as _html_unescape
from typing import Any, NamedTuple, Self

from aiohttp import BodyPartReader, web

BOT_USERNAME = "fitbot_test_bot"
DEFAULT_TOKEN_ID = 123456
MAX_TEXT = 4096
MAX_CAPTION = 1024
MAX_CALLBACK_ANSWER = 200
MAX_INLINE_RESULTS = 50

# Parameters the Bot API types as String: sent raw by PTB, never JSON-decoded here.
_STRING_FIELDS = frozenset(
    {
        "text",
        "caption",
        "parse_mode",
        "callback_query_id",
        "inline_query_id",
        "url",
        "secret_token",
        "next_offset",
        "switch_pm_text",
        "switch_pm_parameter",
        "action",
        "inline_message_id",
        "language_code",
        "business_connection_id",
        "message_effect_id",
        "ip_address",
        "photo",
        "document",
        "file_id",
        "title",
        "description",
        "short_description",
        "name",
        "emoji",
        "query",
    }
)
_CHAT_ACTIONS = frozenset(
    {
        "typing",
        "upload_photo",
        "record_video",
        "upload_video",
        "record_voice",
        "upload_voice",
        "upload_document",
        "choose_sticker",
        "find_location",
        "record_video_note",
        "upload_video_note",
    }
)
_BUTTON_ACTIONS = frozenset(
    {
        "callback_data",
        "url",
        "switch_inline_query",
        "switch_inline_query_current_chat",
        "switch_inline_query_chosen_chat",
        "login_url",
        "web_app",
        "callback_game",
        "pay",
        "copy_text",
    }
)
_INLINE_RESULT_TYPES = frozenset(
    {
        "article",
        "photo",
        "gif",
        "mpeg4_gif",
        "video",
        "audio",
        "voice",
        "document",
        "location",
        "venue",
        "contact",
        "game",
        "sticker",
    }
)
_COMMAND_RE = re.compile(r"^[a-z0-9_]{1,32}$")
_SECRET_RE = re.compile(r"^[A-Za-z0-9_-]{1,256}$")
_TOKEN_RE = re.compile(r"^\d+:[A-Za-z0-9_-]+$")


class EntityError(ValueError):
    """A text that Telegram would refuse with "can't parse entities"."""


class ApiError(Exception):
    """A Bot API error answer: HTTP status, description and optional ``parameters``."""

    def __init__(self, status: int, description: str, parameters: dict[str, Any] | None = None):
        super().__init__(description)
        self.status = status
        self.description = description
        self.parameters = parameters


def _bad(description: str) -> ApiError:
    return ApiError(400, f"Bad Request: {description}")


def utf16_len(text: str) -> int:
    """Returns the length of ``text`` in UTF-16 code units, the unit of entity offsets."""
    return len(text.encode("utf-16-le")) // 2


# --------------------------------------------------------------------------- text parsing

_HTML_ENTITY_TYPES = {
    "b": "bold",
    "strong": "bold",
    "i": "italic",
    "em": "italic",
    "u": "underline",
    "ins": "underline",
    "s": "strikethrough",
    "strike": "strikethrough",
    "del": "strikethrough",
    "span": "spoiler",
    "tg-spoiler": "spoiler",
    "a": "text_link",
    "code": "code",
    "pre": "pre",
    "blockquote": "blockquote",
    "tg-emoji": "custom_emoji",
}
_TAG_RE = re.compile(
    r"<(/?)([A-Za-z][A-Za-z0-9-]*)"
    r"((?:\s+[A-Za-z][A-Za-z0-9_-]*(?:\s*=\s*(?:\"[^\"]*\"|'[^']*'|[^\s>\"']+))?)*)\s*>"
)
_ATTR_RE = re.compile(r"([A-Za-z][A-Za-z0-9_-]*)(?:\s*=\s*(\"[^\"]*\"|'[^']*'|[^\s>\"']+))?")
_ENTITY_RE = re.compile(r"&(#[0-9]{1,7}|#[xX][0-9a-fA-F]{1,6}|[A-Za-z]+);")
_NAMED_ENTITIES = {"lt": "<", "gt": ">", "amp": "&", "quot": '"'}


def _byte_offset(src: str, index: int) -> int:
    return len(src[:index].encode("utf-8"))


def _decode_entity(src: str, i: int) -> tuple[str, int]:
    m = _ENTITY_RE.match(src, i)
    if m is None:
        raise EntityError(f"Can't find end of the entity starting at byte offset {_byte_offset(src, i)}")
    name = m.group(1)
    if name.startswith("#"):
        code = int("0" + name[1:], 0) if name[1:2] in ("x", "X") else int(name[1:])
        if not 0 < code <= 0x10FFFF:
            raise EntityError(f"Invalid character code in entity at byte offset {_byte_offset(src, i)}")
        return chr(code), m.end()
    if name.lower() not in _NAMED_ENTITIES:
        raise EntityError(f'Unsupported HTML entity "&{name};" at byte offset {_byte_offset(src, i)}')
    return _NAMED_ENTITIES[name.lower()], m.end()


_OpenTag = tuple[str, dict[str, Any] | None, int]
"""A tag still open while parsing HTML: (tag name, its entity or None, UTF-16 start offset)."""


def parse_html(src: str) -> tuple[str, list[dict[str, Any]]]:
    """Parses Telegram's HTML subset into (plain text, entities), raising EntityError like the API."""
    out: list[str] = []
    pos = 0  # UTF-16 offset in the plain text
    stack: list[_OpenTag] = []
    entities: list[dict[str, Any]] = []
    i = 0
    while i < len(src):
        ch = src[i]
        if ch == "&":
            text, i = _decode_entity(src, i)
        elif ch == "<":
            m = _TAG_RE.match(src, i)
            if m is None:
                raise EntityError(f'Unsupported start tag "" at byte offset {_byte_offset(src, i)}')
            closing, name, attrs = m.group(1) == "/", m.group(2).lower(), m.group(3)
            if closing:
                if not stack:
                    raise EntityError(f"Unexpected end tag at byte offset {_byte_offset(src, i)}")
                if stack[-1][0] != name:
                    raise EntityError(
                        f"Unmatched end tag at byte offset {_byte_offset(src, i)}, "
                        f'expected "</{stack[-1][0]}>", found "</{name}>"'
                    )
                _, entity, start = stack.pop()
                if entity is not None and pos > start:
                    entity.update(offset=start, length=pos - start)
                    entities.append(entity)
            else:
                stack.append((name, _start_entity(src, i, name, attrs, stack, entities), pos))
            i = m.end()
            continue
        else:
            text, i = ch, i + 1
        out.append(text)
        pos += utf16_len(text)
    if stack:
        raise EntityError(f'Can\'t find end tag corresponding to start tag "{stack[-1][0]}"')
    entities.sort(key=lambda e: (e["offset"], -e["length"]))
    return "".join(out), entities


def _start_entity(
    src: str, i: int, name: str, raw_attrs: str, stack: list[_OpenTag], entities: list[dict[str, Any]]
) -> dict[str, Any] | None:
    if name not in _HTML_ENTITY_TYPES:
        raise EntityError(f'Unsupported start tag "{name}" at byte offset {_byte_offset(src, i)}')
    attrs = {k.lower(): _html_unescape((v or "").strip("\"'")) for k, v in _ATTR_RE.findall(raw_attrs)}
    entity: dict[str, Any] = {"type": _HTML_ENTITY_TYPES[name]}
    if name == "span" and attrs.get("class") != "tg-spoiler":
        raise EntityError('Tag "span" must have class "tg-spoiler"')
    if name == "a":
        href = attrs.get("href", "")
        if not href:
            return None
        if not re.match(r"^(https?|tg|mailto)://|^mailto:", href):
            raise EntityError(f'Wrong URL "{href}" in an "a" tag')
        if any(s[0] == "a" for s in stack):
            raise EntityError("Nested text links are not allowed")
        entity["url"] = href
    if name == "tg-emoji":
        if not attrs.get("emoji-id", "").isdigit():
            raise EntityError('Tag "tg-emoji" must have attribute "emoji-id"')
        entity["custom_emoji_id"] = attrs["emoji-id"]
    if name == "blockquote" and "expandable" in attrs:
        entity["type"] = "expandable_blockquote"
    if name == "code" and stack and stack[-1][0] == "pre":
        language = attrs.get("class", "")
        if language.startswith("language-") and stack[-1][1] is not None:
            stack[-1][1]["language"] = language[len("language-") :]
            return None
    return entity


_MDV2_MARKERS = {"||": "Spoiler", "__": "Underline", "*": "Bold", "_": "Italic", "~": "Strikethrough"}
_MDV2_RESERVED = set("_*[]()~`>#+-=|{}.!")


def parse_markdown_v2(src: str) -> tuple[str, list[dict[str, Any]]]:
    """Checks MarkdownV2 well-formedness (escapes and balance) and returns the plain text."""
    out: list[str] = []
    open_markers: list[tuple[str, int]] = []
    i = 0
    line_start = True
    while i < len(src):
        ch = src[i]
        at_line_start, line_start = line_start, ch == "\n"
        if ch == "\\" and i + 1 < len(src) and 0 < ord(src[i + 1]) < 127:
            out.append(src[i + 1])
            i += 2
            continue
        fence = "```" if src.startswith("```", i) else "`" if ch == "`" else None
        if fence:
            end = src.find(fence, i + len(fence))
            if end < 0:
                kind = "Pre" if fence == "```" else "Code"
                raise EntityError(f"Can't find end of {kind} entity at byte offset {_byte_offset(src, i)}")
            out.append(src[i + len(fence) : end].replace("\\`", "`").replace("\\\\", "\\"))
            i = end + len(fence)
            continue
        marker = next((m for m in _MDV2_MARKERS if src.startswith(m, i)), None)
        if marker:
            names = [m for m, _ in open_markers]
            if marker in names:
                del open_markers[names.index(marker)]
            else:
                open_markers.append((marker, i))
            i += len(marker)
            continue
        if ch == "[":
            open_markers.append(("[", i))
            i += 1
            continue
        if ch == "]" and open_markers and open_markers[-1][0] == "[" and src.startswith("(", i + 1):
            end = src.find(")", i + 2)
            while end > 0 and src[end - 1] == "\\":
                end = src.find(")", end + 1)
            if end < 0:
                raise EntityError(f"Can't find end of a URL at byte offset {_byte_offset(src, i)}")
            open_markers.pop()
            i = end + 1
            continue
        if ch == ">" and at_line_start:
            i += 1
            continue
        if ch in _MDV2_RESERVED:
            raise EntityError(f"Character '{ch}' is reserved and must be escaped with the preceding '\\'")
        out.append(ch)
        i += 1
    if open_markers:
        marker, at = open_markers[-1]
        kind = _MDV2_MARKERS.get(marker, "TextUrl")
        raise EntityError(f"Can't find end of {kind} entity at byte offset {_byte_offset(src, at)}")
    return "".join(out), []


def parse_text(text: str, parse_mode: str | None, entities: Any = None) -> tuple[str, list[dict[str, Any]]]:
    """Applies ``parse_mode`` (or explicit ``entities``) the way the Bot API does."""
    if entities:
        if not isinstance(entities, list):
            raise _bad("can't parse entities JSON object")
        size = utf16_len(text)
        for e in entities:
            if not isinstance(e, dict) or "type" not in e or e.get("offset", -1) < 0 or e.get("length", 0) < 1:
                raise _bad("can't parse entities: entity is invalid")
            if e["offset"] + e["length"] > size:
                raise _bad("can't parse entities: entity is beyond the end of the text")
        return text, list(entities)
    mode = (parse_mode or "").lower()
    try:
        if mode == "html":
            return parse_html(text)
        if mode == "markdownv2":
            return parse_markdown_v2(text)
    except EntityError as exc:
        raise _bad(f"can't parse entities: {exc}") from None
    if mode in ("", "markdown"):
        return text, []
    raise _bad("unsupported parse_mode")


# --------------------------------------------------------------------------- recording types


class Call(NamedTuple):
    """One Bot API request as the fake decoded it."""

    method: str
    params: dict[str, Any]


@dataclass
class Exchange:
    """A request together with the answer the fake gave and when."""

    method: str
    params: dict[str, Any]
    status: int = 0
    response: Any = None
    at: float = field(default_factory=time.monotonic)


@dataclass
class UploadedFile:
    """A file part of a multipart request."""

    filename: str | None
    content_type: str | None
    data: bytes


@dataclass
class _Failure:
    status: int
    retry_after: int | None
    description: str | None
    times: int


# --------------------------------------------------------------------------- server


class FakeTelegramAPI:
    """Fake Bot API server; ``async with FakeTelegramAPI() as api`` or ``start()``/``close()``."""

    def __init__(self, token: str | None = None, username: str = BOT_USERNAME):
        self.token = token
        self.bot_user: dict[str, Any] = {
            "id": int(token.split(":")[0]) if token else DEFAULT_TOKEN_ID,
            "is_bot": True,
            "first_name": "FitBot Test",
            "username": username,
            "can_join_groups": True,
            "can_read_all_group_messages": False,
            "supports_inline_queries": True,
            "can_connect_to_business": False,
            "has_main_web_app": False,
        }
        self.calls: list[Call] = []
        self.exchanges: list[Exchange] = []
        self.chats: dict[int, dict[str, Any]] = {}
        self.messages: dict[int, dict[int, dict[str, Any]]] = {}
        self.commands: dict[tuple[str, str], list[dict[str, Any]]] = {}
        self.files: dict[str, UploadedFile] = {}
        self.webhook: dict[str, Any] = {}
        self.admins: dict[int, set[int]] = {}  # chat id -> user ids with admin rights (getChatMember)
        self.updates: list[dict[str, Any]] = []
        self.port = 0
        self._update_ids = itertools.count(100001)
        self._ids = itertools.count(1)
        self._message_ids: dict[int, itertools.count[int]] = {}
        self._callback_queries: dict[str, bool] = {}
        self._inline_queries: dict[str, bool] = {}
        self._failures: dict[str, list[_Failure]] = {}
        self._parked: list[asyncio.Future[Any]] = []
        self._changed = asyncio.Event()
        self._runner: web.AppRunner | None = None
        self._closing = False
        self._handlers: dict[str, Callable[[dict[str, Any]], Any]] = {
            name.lower(): getattr(self, f"_m_{name}")
            for name in (
                "getMe",
                "deleteWebhook",
                "setWebhook",
                "getWebhookInfo",
                "getUpdates",
                "sendMessage",
                "editMessageText",
                "editMessageCaption",
                "editMessageReplyMarkup",
                "sendPhoto",
                "sendDocument",
                "answerCallbackQuery",
                "answerInlineQuery",
                "setMyCommands",
                "getMyCommands",
                "deleteMyCommands",
                "deleteMessage",
                "sendChatAction",
                "getFile",
                "getChatMember",
                "close",
                "logOut",
            )
        }

    # ---- lifecycle

    async def start(self) -> Self:
        """Starts serving on 127.0.0.1 on a free port."""
        app = web.Application(client_max_size=60 * 1024 * 1024)
        app.router.add_route("*", "/bot{token}/{method}", self._handle)
        app.router.add_get("/file/bot{token}/{path:.+}", self._handle_file)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        self.port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        return self

    async def close(self) -> None:
        """Releases parked long polls (answering them with no updates) and stops the server."""
        self._closing = True
        for waiter in self._parked:
            if not waiter.done():
                waiter.set_result("closed")
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    async def __aenter__(self) -> Self:
        return await self.start()

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    @property
    def base_url(self) -> str:
        """Value for ``ApplicationBuilder().base_url()``."""
        return f"http://127.0.0.1:{self.port}/bot"

    @property
    def base_file_url(self) -> str:
        """Value for ``ApplicationBuilder().base_file_url()``."""
        return f"http://127.0.0.1:{self.port}/file/bot"

    # ---- test controls

    def fail_next(
        self,
        method: str,
        status: int = 429,
        retry_after: int = 1,
        times: int = 1,
        description: str | None = None,
    ) -> None:
        """Answers the next ``times`` calls of ``method`` with an error (429 carries retry_after)."""
        failure = _Failure(status, retry_after if status == 429 else None, description, times)
        self._failures.setdefault(method.lower(), []).append(failure)

    def push_update(self, update: dict[str, Any]) -> dict[str, Any]:
        """Queues an update for getUpdates (assigning update_id) and wakes parked polls."""
        update.setdefault("update_id", next(self._update_ids))
        for key in ("message", "edited_message", "channel_post"):
            if key in update:
                msg = update[key]
                self._register_chat(msg["chat"])
                self.messages.setdefault(msg["chat"]["id"], {})[msg["message_id"]] = msg
        self.updates.append(update)
        self._wake()
        return update

    def add_chat(self, chat_id: int, chat_type: str = "private", **extra: Any) -> dict[str, Any]:
        """Makes a chat known, so sends to it succeed instead of "chat not found"."""
        chat = {"id": chat_id, "type": chat_type, **extra}
        if chat_type == "private":
            chat.setdefault("first_name", "Tess")
        else:
            chat.setdefault("title", f"Test {chat_type}")
        self._register_chat(chat)
        return self.chats[chat_id]

    def set_admin(self, chat_id: int, user_id: int, admin: bool = True) -> None:
        """Makes ``user_id`` an administrator of ``chat_id`` (or a plain member again)."""
        admins = self.admins.setdefault(chat_id, set())
        (admins.add if admin else admins.discard)(user_id)

    def add_bot_message(self, chat_id: int, text: str, reply_markup: dict[str, Any] | None = None) -> dict[str, Any]:
        """Stores a message as if the bot had sent it earlier (for callbacks on old messages)."""
        chat = self.chats.get(chat_id) or self.add_chat(chat_id)
        msg = self._new_message(chat, text=text)
        if reply_markup:
            msg["reply_markup"] = reply_markup
        return msg

    def make_message(
        self,
        text: str,
        chat_id: int = 777,
        chat_type: str = "private",
        user_id: int | None = None,
        language_code: str | None = "en",
        entities: list[dict[str, Any]] | None = None,
        reply_to: int | dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        """Builds a message update from a user (not yet queued; pass it to push_update)."""
        user = self._user(
            user_id if user_id is not None else (chat_id if chat_type == "private" else 4242), language_code
        )
        chat = self.chats.get(chat_id) or self.add_chat(
            chat_id, chat_type, **({"first_name": user["first_name"]} if chat_type == "private" else {})
        )
        if entities is None and text.startswith("/"):
            entities = [{"type": "bot_command", "offset": 0, "length": utf16_len(text.split()[0])}]
        msg: dict[str, Any] = {
            "message_id": next(self._message_ids.setdefault(chat_id, itertools.count(1))),
            "from": user,
            "chat": chat,
            "date": int(time.time()),
            "text": text,
        }
        if entities:
            msg["entities"] = entities
        if reply_to is not None:
            msg["reply_to_message"] = reply_to if isinstance(reply_to, dict) else self._stored(chat_id, reply_to)
        return {"update_id": next(self._update_ids), "message": msg}

    def make_callback(
        self,
        data: str,
        message_id: int,
        chat_id: int = 777,
        user_id: int | None = None,
        language_code: str | None = "en",
    ) -> dict[str, Any]:
        """Builds a callback_query update for a button on a message the bot sent."""
        message = self._stored(chat_id, message_id)
        query_id = str(next(self._ids) + 9_000_000)
        self._callback_queries[query_id] = False
        user = self._user(user_id if user_id is not None else (chat_id if chat_id > 0 else 4242), language_code)
        return {
            "update_id": next(self._update_ids),
            "callback_query": {
                "id": query_id,
                "from": user,
                "chat_instance": f"ci{chat_id}",
                "data": data,
                "message": message,
            },
        }

    def make_inline_query(
        self,
        query: str,
        user_id: int = 4242,
        offset: str = "",
        chat_type: str | None = "private",
        language_code: str | None = "en",
    ) -> dict[str, Any]:
        """Builds an inline_query update."""
        query_id = str(next(self._ids) + 8_000_000)
        self._inline_queries[query_id] = False
        inline: dict[str, Any] = {
            "id": query_id,
            "from": self._user(user_id, language_code),
            "query": query,
            "offset": offset,
        }
        if chat_type:
            inline["chat_type"] = chat_type
        return {"update_id": next(self._update_ids), "inline_query": inline}

    def calls_of(self, method: str) -> list[Call]:
        """All recorded calls of ``method`` (case-insensitive)."""
        return [c for c in self.calls if c.method.lower() == method.lower()]

    async def wait_call(
        self,
        method: str,
        count: int = 1,
        timeout: float = 5,
        where: Callable[[dict[str, Any]], bool] | None = None,
    ) -> Any:
        """Waits until ``count`` calls of ``method`` arrived; returns the call, or the list if count > 1.

        Calls count on arrival (a parked getUpdates counts while it waits); the answer is in
        the matching ``exchanges`` entry.
        """
        try:
            async with asyncio.timeout(timeout):
                while True:
                    matches = [c for c in self.calls_of(method) if where is None or where(c.params)]
                    if len(matches) >= count:
                        return matches[0] if count == 1 else matches[:count]
                    self._changed.clear()
                    await self._changed.wait()
        except TimeoutError:
            seen = [c.method for c in self.calls]
            raise AssertionError(f"{method} x{count} not called within {timeout}s; calls: {seen}") from None

    # ---- internals: storage helpers

    def _user(self, user_id: int, language_code: str | None) -> dict[str, Any]:
        user: dict[str, Any] = {
            "id": user_id,
            "is_bot": False,
            "first_name": "Tess",
            "username": f"tess{user_id}",
        }
        if language_code:
            user["language_code"] = language_code
        return user

    def _register_chat(self, chat: dict[str, Any]) -> None:
        self.chats.setdefault(chat["id"], chat)
        self.messages.setdefault(chat["id"], {})
        self._message_ids.setdefault(chat["id"], itertools.count(1))

    def _stored(self, chat_id: int, message_id: int) -> dict[str, Any]:
        try:
            return self.messages[chat_id][message_id]
        except KeyError:
            raise KeyError(
                f"no message {message_id} in chat {chat_id}; the bot never sent it (use add_bot_message)"
            ) from None

    def _new_message(self, chat: dict[str, Any], **content: Any) -> dict[str, Any]:
        msg = {
            "message_id": next(self._message_ids[chat["id"]]),
            "from": self.bot_user,
            "chat": chat,
            "date": int(time.time()),
            **{k: v for k, v in content.items() if v not in (None, [])},
        }
        self.messages[chat["id"]][msg["message_id"]] = msg
        return msg

    def _chat(self, params: dict[str, Any]) -> dict[str, Any]:
        chat_id = params.get("chat_id")
        if chat_id in (None, ""):
            raise _bad("chat_id is empty")
        if isinstance(chat_id, str) and chat_id.startswith("@"):
            found = [c for c in self.chats.values() if c.get("username") == chat_id[1:]]
            if found:
                return found[0]
        elif str(chat_id).lstrip("-").isdigit() and int(chat_id) in self.chats:
            return self.chats[int(chat_id)]
        raise _bad("chat not found")

    def _target(self, params: dict[str, Any], verb: str = "edit") -> dict[str, Any]:
        chat = self._chat(params)
        if params.get("message_id") is None:
            raise _bad("message identifier is not specified")
        msg = self.messages[chat["id"]].get(int(params["message_id"]))
        if msg is None:
            raise _bad(f"message to {verb} not found")
        if verb == "edit" and msg["from"]["id"] != self.bot_user["id"]:
            raise _bad("message can't be edited")
        return msg

    def _wake(self) -> None:
        for waiter in self._parked:
            if not waiter.done():
                waiter.set_result("update")

    # ---- internals: HTTP

    async def _decode(self, request: web.Request) -> dict[str, Any]:
        ctype = request.content_type
        if ctype == "application/json":
            body = await request.read()
            return json.loads(body) if body else {}
        params: dict[str, Any] = {}
        if ctype == "multipart/form-data":
            reader = await request.multipart()
            async for part in reader:
                if not isinstance(part, BodyPartReader) or part.name is None:
                    raise ValueError("a multipart part without a name")  # answered 400 like other bad bodies
                if part.filename is not None:
                    data = await part.read(decode=False)
                    params[part.name] = UploadedFile(part.filename, part.headers.get("Content-Type"), bytes(data))
                else:
                    params[part.name] = self._field(part.name, await part.text())
        elif ctype == "application/x-www-form-urlencoded":
            for key, value in (await request.post()).items():
                params[key] = self._field(key, str(value))
        for key, value in request.query.items():
            params.setdefault(key, self._field(key, value))
        # attach://name references point at another multipart part
        for key, value in list(params.items()):
            if isinstance(value, str) and value.startswith("attach://"):
                params[key] = params.pop(value[len("attach://") :], value)
        return params

    @staticmethod
    def _field(key: str, value: str) -> Any:
        if key in _STRING_FIELDS:
            return value
        try:
            return json.loads(value)
        except ValueError:
            return value

    @staticmethod
    def _reply(status: int, payload: dict[str, Any]) -> web.Response:
        return web.Response(status=status, body=json.dumps(payload).encode(), content_type="application/json")

    async def _handle(self, request: web.Request) -> web.Response:
        token, method = request.match_info["token"], request.match_info["method"]
        if not _TOKEN_RE.match(token):
            return self._reply(404, {"ok": False, "error_code": 404, "description": "Not Found"})
        if self.token is not None and token != self.token:
            return self._reply(401, {"ok": False, "error_code": 401, "description": "Unauthorized"})
        try:
            params = await self._decode(request)
        except ValueError:
            return self._reply(400, {"ok": False, "error_code": 400, "description": "Bad Request: invalid JSON"})
        handler = self._handlers.get(method.lower())
        name = method if handler is None else handler.__name__[3:]
        exchange = Exchange(name, params)
        self.calls.append(Call(name, params))
        self.exchanges.append(exchange)
        self._changed.set()
        try:
            if handler is None:
                raise ApiError(404, "Not Found")
            self._inject_failure(name)
            result = handler(params)
            if asyncio.iscoroutine(result):
                result = await result
            exchange.status, exchange.response = 200, result
            return self._reply(200, {"ok": True, "result": result})
        except ApiError as err:
            body: dict[str, Any] = {"ok": False, "error_code": err.status, "description": err.description}
            if err.parameters:
                body["parameters"] = err.parameters
            exchange.status, exchange.response = err.status, body
            return self._reply(err.status, body)

    def _inject_failure(self, method: str) -> None:
        queue = self._failures.get(method.lower())
        if not queue:
            return
        failure = queue[0]
        failure.times -= 1
        if failure.times <= 0:
            queue.pop(0)
        if failure.status == 429:
            raise ApiError(
                429,
                failure.description or f"Too Many Requests: retry after {failure.retry_after}",
                {"retry_after": failure.retry_after},
            )
        default = {400: "Bad Request", 403: "Forbidden: bot was blocked by the user", 409: "Conflict"}
        raise ApiError(failure.status, failure.description or default.get(failure.status, "Internal Server Error"))

    async def _handle_file(self, request: web.Request) -> web.Response:
        path = request.match_info["path"]
        for file_id, upload in self.files.items():
            if path == f"files/{file_id}":
                return web.Response(body=upload.data, content_type="application/octet-stream")
        return web.Response(status=404, text="Not Found")

    # ---- Bot API methods

    def _m_getMe(self, params: dict[str, Any]) -> dict[str, Any]:
        return self.bot_user

    def _m_logOut(self, params: dict[str, Any]) -> bool:
        return True

    def _m_close(self, params: dict[str, Any]) -> bool:
        return True

    def _m_deleteWebhook(self, params: dict[str, Any]) -> bool:
        self.webhook = {}
        if params.get("drop_pending_updates"):
            self.updates.clear()
        return True

    def _m_setWebhook(self, params: dict[str, Any]) -> bool:
        url = params.get("url") or ""
        if not url:
            return self._m_deleteWebhook(params)
        if not url.startswith("https://"):
            raise _bad("bad webhook: An HTTPS URL must be provided for webhook")
        secret = params.get("secret_token")
        if secret is not None and not _SECRET_RE.match(str(secret)):
            raise _bad("secret token contains unallowed characters")
        if not 1 <= int(params.get("max_connections", 40)) <= 100:
            raise _bad("bad webhook: max_connections must be between 1 and 100")
        if params.get("drop_pending_updates"):
            self.updates.clear()
        self.webhook = dict(params)
        return True

    def _m_getWebhookInfo(self, params: dict[str, Any]) -> dict[str, Any]:
        return {
            "url": self.webhook.get("url", ""),
            "has_custom_certificate": False,
            "pending_update_count": len(self.updates),
            "max_connections": self.webhook.get("max_connections", 40),
        }

    async def _m_getUpdates(self, params: dict[str, Any]) -> list[dict[str, Any]]:
        if self.webhook.get("url"):
            raise ApiError(
                409,
                "Conflict: can't use getUpdates method while webhook is active; "
                "use deleteWebhook to delete the webhook first",
            )
        offset = int(params.get("offset") or 0)
        limit = int(params.get("limit") or 100)
        if not 1 <= limit <= 100:
            limit = 100
        timeout = max(0.0, float(params.get("timeout") or 0))
        allowed = params.get("allowed_updates") or None
        # A newer poll terminates every parked one, as Telegram does for two bot instances.
        for waiter in self._parked:
            if not waiter.done():
                waiter.set_result("conflict")
        if offset > 0:
            self.updates = [u for u in self.updates if u["update_id"] >= offset]
        elif offset < 0:
            self.updates = self.updates[offset:]
        deadline = time.monotonic() + timeout
        while True:
            batch = [u for u in self.updates if allowed is None or set(u) & set(allowed)][:limit]
            remaining = deadline - time.monotonic()
            if batch or remaining <= 0 or self._closing:
                return batch
            waiter = asyncio.get_running_loop().create_future()
            self._parked.append(waiter)
            try:
                reason = await asyncio.wait_for(asyncio.shield(waiter), remaining)
            except TimeoutError:
                reason = "timeout"
            finally:
                self._parked.remove(waiter)
            if reason == "conflict":
                raise ApiError(
                    409,
                    "Conflict: terminated by other getUpdates request; make sure that only one bot instance is running",
                )

    def _check_text(
        self, text: Any, parse_mode: Any, entities: Any, limit: int, what: str
    ) -> tuple[str, list[dict[str, Any]]]:
        if not isinstance(text, str):
            text = "" if text is None else str(text)
        plain, parsed = parse_text(text, parse_mode, entities)
        if not plain.strip():
            raise _bad(f"{what} is empty")
        if len(plain) > limit:
            raise _bad(f"{what} is too long")
        return plain, parsed

    def _check_markup(self, markup: Any) -> dict[str, Any] | None:
        if markup is None:
            return None
        if not isinstance(markup, dict):
            raise _bad("can't parse reply keyboard markup JSON object")
        if "inline_keyboard" not in markup:
            if not {"keyboard", "remove_keyboard", "force_reply"} & set(markup):
                raise _bad("can't parse reply keyboard markup JSON object")
            return None
        rows = markup["inline_keyboard"]
        if not isinstance(rows, list) or not all(isinstance(r, list) for r in rows):
            raise _bad('can\'t parse inline keyboard markup: field "inline_keyboard" must be an Array of Arrays')
        if sum(len(r) for r in rows) > 100:
            raise _bad("reply markup is too long")
        for row in rows:
            for button in row:
                if not isinstance(button, dict) or not button.get("text"):
                    raise _bad("BUTTON_TEXT_INVALID")
                actions = _BUTTON_ACTIONS & set(button)
                if len(actions) != 1:
                    raise _bad("can't parse inline keyboard button: exactly one optional field must be used")
                if "callback_data" in button:
                    data = button["callback_data"]
                    if not isinstance(data, str) or not 1 <= len(data.encode("utf-8")) <= 64:
                        raise _bad("BUTTON_DATA_INVALID")
                if "url" in button and not re.match(r"^(https?|tg)://\S+$", str(button["url"])):
                    raise _bad("BUTTON_URL_INVALID")
        return markup

    def _check_reply(self, chat: dict[str, Any], params: dict[str, Any]) -> dict[str, Any] | None:
        ref = params.get("reply_parameters")
        if ref is None and params.get("reply_to_message_id") is not None:
            ref = {"message_id": params["reply_to_message_id"]}
        if not ref:
            return None
        target = self.messages[chat["id"]].get(int(ref.get("message_id", 0)))
        if target is None and not ref.get("allow_sending_without_reply"):
            raise _bad("message to be replied not found")
        return target

    def _m_getChatMember(self, params: dict[str, Any]) -> dict[str, Any]:
        chat = self._chat(params)
        user_id = int(params.get("user_id") or 0)
        user = self._user(user_id, None)
        if chat["type"] == "private":
            return {"status": "member", "user": user}
        if user_id not in self.admins.get(chat["id"], set()):
            return {"status": "member", "user": user}
        rights = [
            "can_be_edited",
            "can_manage_chat",
            "can_delete_messages",
            "can_manage_video_chats",
            "can_restrict_members",
            "can_promote_members",
            "can_change_info",
            "can_invite_users",
            "can_post_stories",
            "can_edit_stories",
            "can_delete_stories",
        ]
        return {
            "status": "administrator",
            "user": user,
            "is_anonymous": False,
            **{r: r != "can_be_edited" for r in rights},
        }

    def _m_sendMessage(self, params: dict[str, Any]) -> dict[str, Any]:
        chat = self._chat(params)
        text, entities = self._check_text(
            params.get("text"), params.get("parse_mode"), params.get("entities"), MAX_TEXT, "message text"
        )
        markup = self._check_markup(params.get("reply_markup"))
        reply_to = self._check_reply(chat, params)
        return self._new_message(chat, text=text, entities=entities, reply_markup=markup, reply_to_message=reply_to)

    def _send_media(self, params: dict[str, Any], kind: str) -> dict[str, Any]:
        chat = self._chat(params)
        media = params.get(kind)
        if media in (None, ""):
            raise _bad(f"there is no {kind} in the request")
        caption: str | None = None
        entities: list[dict[str, Any]] = []
        if params.get("caption"):
            caption, entities = self._check_text(
                params["caption"],
                params.get("parse_mode"),
                params.get("caption_entities"),
                MAX_CAPTION,
                "message caption",
            )
        markup = self._check_markup(params.get("reply_markup"))
        reply_to = self._check_reply(chat, params)
        if isinstance(media, UploadedFile):
            if not media.data:
                raise _bad("file must be non-empty")
            file_id = f"F{kind[:3]}{next(self._ids)}"
            self.files[file_id] = media
            size = len(media.data)
        else:
            file_id, size = str(media), 1024
        unique = f"U{file_id}"
        if kind == "photo":
            content: Any = [
                {"file_id": file_id, "file_unique_id": unique, "width": 640, "height": 480, "file_size": size}
            ]
        else:
            content = {
                "file_id": file_id,
                "file_unique_id": unique,
                "file_size": size,
                "file_name": getattr(media, "filename", None) or "file",
                "mime_type": getattr(media, "content_type", None) or "application/octet-stream",
            }
        return self._new_message(
            chat,
            **{kind: content},
            caption=caption,
            caption_entities=entities,
            reply_markup=markup,
            reply_to_message=reply_to,
        )

    def _m_sendPhoto(self, params: dict[str, Any]) -> dict[str, Any]:
        return self._send_media(params, "photo")

    def _m_sendDocument(self, params: dict[str, Any]) -> dict[str, Any]:
        return self._send_media(params, "document")

    def _m_getFile(self, params: dict[str, Any]) -> dict[str, Any]:
        file_id = params.get("file_id")
        if file_id not in self.files:
            raise _bad("invalid file_id")
        return {
            "file_id": file_id,
            "file_unique_id": f"U{file_id}",
            "file_size": len(self.files[file_id].data),
            "file_path": f"files/{file_id}",
        }

    def _apply_edit(self, msg: dict[str, Any], changes: dict[str, Any]) -> dict[str, Any]:
        current = {k: msg.get(k) for k in changes}
        normalized = {k: (v if v not in ([], None) else None) for k, v in changes.items()}
        if {k: (v if v not in ([], None) else None) for k, v in current.items()} == normalized:
            raise _bad(
                "message is not modified: specified new message content and reply markup are exactly "
                "the same as a current content and reply markup of the message"
            )
        for key, value in normalized.items():
            if value is None:
                msg.pop(key, None)
            else:
                msg[key] = value
        msg["edit_date"] = int(time.time())
        return msg

    def _m_editMessageText(self, params: dict[str, Any]) -> Any:
        text, entities = self._check_text(
            params.get("text"), params.get("parse_mode"), params.get("entities"), MAX_TEXT, "message text"
        )
        markup = self._check_markup(params.get("reply_markup"))
        if params.get("inline_message_id"):
            return True
        msg = self._target(params)
        if "text" not in msg:
            raise _bad("there is no text in the message to edit")
        return self._apply_edit(msg, {"text": text, "entities": entities, "reply_markup": markup})

    def _m_editMessageCaption(self, params: dict[str, Any]) -> Any:
        caption: str | None = None
        entities: list[dict[str, Any]] = []
        if params.get("caption"):
            caption, entities = self._check_text(
                params["caption"],
                params.get("parse_mode"),
                params.get("caption_entities"),
                MAX_CAPTION,
                "message caption",
            )
        markup = self._check_markup(params.get("reply_markup"))
        if params.get("inline_message_id"):
            return True
        msg = self._target(params)
        if "text" in msg:
            raise _bad("there is no caption in the message to edit")
        return self._apply_edit(msg, {"caption": caption, "caption_entities": entities, "reply_markup": markup})

    def _m_editMessageReplyMarkup(self, params: dict[str, Any]) -> Any:
        markup = self._check_markup(params.get("reply_markup"))
        if params.get("inline_message_id"):
            return True
        return self._apply_edit(self._target(params), {"reply_markup": markup})

    def _m_deleteMessage(self, params: dict[str, Any]) -> bool:
        msg = self._target(params, verb="delete")
        del self.messages[msg["chat"]["id"]][msg["message_id"]]
        return True

    def _m_sendChatAction(self, params: dict[str, Any]) -> bool:
        self._chat(params)
        if params.get("action") not in _CHAT_ACTIONS:
            raise _bad("wrong parameter action in request")
        return True

    def _m_answerCallbackQuery(self, params: dict[str, Any]) -> bool:
        query_id = str(params.get("callback_query_id", ""))
        if self._callback_queries.get(query_id, True):
            raise _bad("query is too old and response timeout expired or query ID is invalid")
        if len(params.get("text") or "") > MAX_CALLBACK_ANSWER:
            raise _bad("MESSAGE_TOO_LONG")
        self._callback_queries[query_id] = True
        return True

    def _m_answerInlineQuery(self, params: dict[str, Any]) -> bool:
        query_id = str(params.get("inline_query_id", ""))
        if self._inline_queries.get(query_id, True):
            raise _bad("query is too old and response timeout expired or query ID is invalid")
        results = params.get("results")
        if not isinstance(results, list):
            raise _bad("can't parse inline query results JSON object")
        if len(results) > MAX_INLINE_RESULTS:
            raise _bad("RESULTS_TOO_MUCH")
        if len(str(params.get("next_offset") or "").encode()) > 64:
            raise _bad("NEXT_OFFSET_INVALID")
        seen: set[str] = set()
        for result in results:
            rid = str(result.get("id", ""))
            if not 1 <= len(rid.encode()) <= 64:
                raise _bad("RESULT_ID_INVALID")
            if rid in seen:
                raise _bad("RESULT_ID_DUPLICATE")
            seen.add(rid)
            if result.get("type") not in _INLINE_RESULT_TYPES:
                raise _bad("RESULT_TYPE_INVALID")
            if result["type"] == "article" and not result.get("title"):
                raise _bad("ARTICLE_TITLE_EMPTY")
            content = result.get("input_message_content")
            if result["type"] == "article" and not content:
                raise _bad("MESSAGE_EMPTY")
            if content and "message_text" in content:
                self._check_text(
                    content["message_text"],
                    content.get("parse_mode"),
                    content.get("entities"),
                    MAX_TEXT,
                    "message text",
                )
            if result.get("caption"):
                self._check_text(
                    result["caption"],
                    result.get("parse_mode"),
                    result.get("caption_entities"),
                    MAX_CAPTION,
                    "message caption",
                )
            self._check_markup(result.get("reply_markup"))
        self._inline_queries[query_id] = True
        return True

    @staticmethod
    def _commands_key(params: dict[str, Any]) -> tuple[str, str]:
        scope = params.get("scope") or {"type": "default"}
        return json.dumps(scope, sort_keys=True), str(params.get("language_code") or "")

    def _m_setMyCommands(self, params: dict[str, Any]) -> bool:
        commands = params.get("commands")
        if not isinstance(commands, list) or len(commands) > 100:
            raise _bad("can't parse commands JSON object")
        for command in commands:
            if not _COMMAND_RE.match(str(command.get("command", ""))):
                raise _bad("BOT_COMMAND_INVALID")
            if not 1 <= len(str(command.get("description", ""))) <= 256:
                raise _bad("BOT_COMMAND_DESCRIPTION_INVALID")
        self.commands[self._commands_key(params)] = commands
        return True

    def _m_getMyCommands(self, params: dict[str, Any]) -> list[dict[str, Any]]:
        return self.commands.get(self._commands_key(params), [])

    def _m_deleteMyCommands(self, params: dict[str, Any]) -> bool:
        self.commands.pop(self._commands_key(params), None)
        return True
