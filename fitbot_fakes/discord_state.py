"""What the fake Discord records (requests, interactions, gateway sessions) and the state its parts share."""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

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
class GatewayConn:
    ws: web.WebSocketResponse
    compressor: Any = None
    session: GatewaySession | None = None


@dataclass(eq=False)
class GatewaySession:
    session_id: str
    shard: list[int] | None
    identify: dict[str, Any]
    seq: int = 0
    frames: list[dict[str, Any]] = field(default_factory=list)
    conn: GatewayConn | None = None


@dataclass
class Failure:
    method: str | None
    prefix: str
    status: int
    retry_after: float
    is_global: bool
    times: int


class DiscordState:
    """What every part of the fake shares (set up by ``FakeDiscord.__init__``)."""

    token: str
    guild_ids: tuple[int, ...]
    shards: int
    compress: bool
    interaction_timeout: float
    heartbeat_interval_ms: int
    bot_user: dict[str, Any]
    member_user: dict[str, Any]
    requests: list[Request]
    gateway_frames: list[dict[str, Any]]
    gateway_connections: list[dict[str, Any]]
    commands: dict[int | None, list[dict[str, Any]]]
    messages: dict[str, dict[str, Any]]
    interactions: dict[str, Interaction]
    channels: dict[str, dict[str, Any]]
    port: int
    _ids: Iterator[int]
    _sessions: dict[str, GatewaySession]
    _conns: set[GatewayConn]
    _failures: list[Failure]
    _changed: asyncio.Event
    _runner: web.AppRunner | None
    _routes: list[tuple[set[str], re.Pattern[str], Callable[..., Any], bool]]

    @property
    def api_base(self) -> str:
        """Value for ``discord.http.Route.BASE``."""
        return f"http://127.0.0.1:{self.port}/api/v10"

    @property
    def gateway_url(self) -> str:
        """Value for ``discord.gateway.DiscordWebSocket.DEFAULT_GATEWAY`` (as a yarl.URL)."""
        return f"ws://127.0.0.1:{self.port}/"
