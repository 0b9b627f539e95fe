"""What the fake Bot API records (calls, exchanges, uploads, injected failures, floods) and the state its parts share."""

from __future__ import annotations

import asyncio
import itertools
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from aiohttp import web

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
class Failure:
    status: int
    retry_after: int | None
    description: str | None
    times: int


@dataclass
class Flood:
    """One chat under flood control until ``until`` (monotonic); ``retry_after`` None: the time left."""

    until: float
    retry_after: int | None


class TelegramState:
    """What every part of the fake shares (set up by ``FakeTelegramAPI.__init__``)."""

    token: str | None
    bot_user: dict[str, Any]
    calls: list[Call]
    exchanges: list[Exchange]
    chats: dict[int, dict[str, Any]]
    messages: dict[int, dict[int, dict[str, Any]]]
    commands: dict[tuple[str, str], list[dict[str, Any]]]
    files: dict[str, UploadedFile]
    webhook: dict[str, Any]
    admins: dict[int, set[int]]
    updates: list[dict[str, Any]]
    port: int
    _update_ids: itertools.count[int]
    _ids: itertools.count[int]
    _message_ids: dict[int, itertools.count[int]]
    _callback_queries: dict[str, bool]
    _inline_queries: dict[str, bool]
    _failures: dict[str, list[Failure]]
    _floods: dict[str, Flood]
    _parked: list[asyncio.Future[Any]]
    _changed: asyncio.Event
    _runner: web.AppRunner | None
    _closing: bool
    _handlers: dict[str, Callable[[dict[str, Any]], Any]]

    @property
    def base_url(self) -> str:
        """Value for ``ApplicationBuilder().base_url()``."""
        return f"http://127.0.0.1:{self.port}/bot"

    @property
    def base_file_url(self) -> str:
        """Value for ``ApplicationBuilder().base_file_url()``."""
        return f"http://127.0.0.1:{self.port}/file/bot"
