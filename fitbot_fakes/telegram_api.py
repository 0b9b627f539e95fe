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

Tests and benches import everything from here; the parts live beside it, each layer building on the
one before: ``telegram_checks`` (limits, errors), ``telegram_text`` (HTML and MarkdownV2),
``telegram_state`` (what is recorded), ``telegram_store`` (chats, messages, test updates),
``telegram_http``, ``telegram_updates`` and ``telegram_messages`` (the methods);
``FakeTelegramAPI`` adds its set-up, lifecycle and test controls.
"""

from __future__ import annotations

import asyncio
import itertools
import time
from collections.abc import Callable
from typing import Any, Self

from aiohttp import web

from fitbot_fakes.telegram_checks import BOT_USERNAME, DEFAULT_TOKEN_ID, MAX_CAPTION, MAX_TEXT, ApiError
from fitbot_fakes.telegram_messages import TelegramMessages
from fitbot_fakes.telegram_state import Call, Exchange, Failure, Flood, UploadedFile
from fitbot_fakes.telegram_text import parse_html, parse_markdown_v2, parse_text


class FakeTelegramAPI(TelegramMessages):
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
        self._failures: dict[str, list[Failure]] = {}
        self._floods: dict[str, Flood] = {}
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
        failure = Failure(status, retry_after if status == 429 else None, description, times)
        self._failures.setdefault(method.lower(), []).append(failure)

    def flood_control(self, chat_id: int, seconds: float, retry_after: int | None = None) -> None:
        """Puts ``chat_id`` under flood control: for ``seconds`` from now every call naming it is answered
        429, with ``retry_after`` the seconds left (rounded up, as Telegram counts them) or the one given."""
        self._floods[str(chat_id)] = Flood(time.monotonic() + seconds, retry_after)

    def under_flood_control(self, chat_id: int) -> bool:
        """Whether calls naming ``chat_id`` are refused now."""
        flood = self._floods.get(str(chat_id))
        return flood is not None and time.monotonic() < flood.until

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


__all__ = [
    "BOT_USERNAME",
    "MAX_CAPTION",
    "MAX_TEXT",
    "ApiError",
    "Call",
    "Exchange",
    "FakeTelegramAPI",
    "UploadedFile",
    "parse_html",
    "parse_markdown_v2",
    "parse_text",
]
